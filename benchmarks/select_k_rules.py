"""Which rule should select-k recommend by? Every candidate rule on the same stored runs of real and planted corpora.

Usage::

    python benchmarks/select_k_rules.py run kos            # ldacli select-k on one corpus (resumes its folder)
    python benchmarks/select_k_rules.py table              # every rule on every corpus whose runs are done
    python benchmarks/select_k_rules.py table --markdown   # the same as Markdown tables

``run NAME`` runs ``ldacli select-k`` as a process, once, with 3 seeds and 300 sweeps (``--seed 1
--threads 1``), into ``$LDACLI_DATA/select-k/NAME`` (default ``/work/data``); stopped (SIGTERM, as
a 30-minute slot ends) it is run again and continues its unfinished pairs. ``table`` reads each
folder's stored per-(K, seed) scores and models (``k{K}-s{i}.json``, ``.npz``, as select-k writes
them) and applies every candidate rule of :data:`RULES` offline to the same numbers, printing
per corpus the per-K measures beside each rule's choice. A corpus whose files are missing is
skipped with a note.

The corpora: the UCI KOS and 20 Newsgroups bags of words (``$LDACLI_CORPORA``, default
``../shared/corpora``), raw 20 Newsgroups text (one post a line, ``$LDACLI_DATA/20ng-raw/train.txt``,
English stop words, ``--min-df 5 --max-df 0.3``), AP (LDA-C, ``$LDACLI_DATA/ap/ap.dat`` and
``vocab.txt``), the NumPy/SciPy docstring sample (``sample_corpora``, its own stop words), and two
planted corpora drawn from the LDA generative process (``ldacli.synthetic.generate``): 15
well-separated topics, and 50 topics that overlap more (written as LDA-C into the data folder).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.environ.get("LDACLI_DATA", "/work/data")
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(ROOT, "..", "..", "shared", "corpora"))
if not os.path.isdir(CORPORA):
    CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
SAMPLE = os.path.join(ROOT, "sample_corpora")
SEEDS, ITERATIONS = 3, 300

# name -> (corpus path, reading options, grid, truth or None, how to make it when planted)
PLANTED = {"planted15": dict(n_docs=5000, n_topics=15, n_words=5000, beta=0.05),
           "planted50": dict(n_docs=5000, n_topics=50, n_words=3000, beta=0.1)}


def corpora() -> dict[str, dict]:
    return {
        "planted15": {"path": os.path.join(DATA, "select-k", "planted15.ldac"), "grid": "5,10,15,20,30", "truth": 15,
                      "options": ["--vocab", os.path.join(DATA, "select-k", "planted15.vocab")]},
        "planted50": {"path": os.path.join(DATA, "select-k", "planted50.ldac"), "grid": "10,20,50,100,200",
                      "truth": 50, "options": ["--vocab", os.path.join(DATA, "select-k", "planted50.vocab")]},
        "kos": {"path": os.path.join(CORPORA, "docword.kos.txt.gz"), "grid": "5,10,20,50,100,200",
                "options": ["--vocab", os.path.join(CORPORA, "vocab.kos.txt")]},
        "20ng": {"path": os.path.join(CORPORA, "docword.20ng.txt.gz"), "grid": "10,20,50,100,200",
                 "options": ["--vocab", os.path.join(CORPORA, "vocab.20ng.txt")]},
        "20ng-text": {"path": os.path.join(DATA, "20ng-raw", "train.txt"), "grid": "10,20,50,100,200",
                      "options": ["--stop-words", "english", "--min-df", "5", "--max-df", "0.3"],
                      "ready": os.path.join(DATA, "20ng-raw", "DONE")},
        "ap": {"path": os.path.join(DATA, "ap", "ap.dat"), "grid": "10,25,50,100,200",
               "options": ["--vocab", os.path.join(DATA, "ap", "vocab.txt")], "ready": os.path.join(DATA, "ap", "DONE")},
        "numpy-scipy": {"path": os.path.join(SAMPLE, "numpy_scipy_docs.txt"), "grid": "5,10,20,40,80",
                        "options": ["--stop-words", os.path.join(SAMPLE, "stopwords_docstrings.txt"), "--min-df", "5",
                                    "--max-df", "0.5"]},
    }


def folder(name: str) -> str:
    return os.path.join(DATA, "select-k", name)


def make_planted(name: str, spec: dict) -> None:
    """Draw a planted corpus (once) and write it as LDA-C with its vocabulary."""
    path = spec["path"]
    if os.path.exists(path):
        return
    import ldacli
    from ldacli.synthetic import generate

    os.makedirs(os.path.dirname(path), exist_ok=True)
    p = PLANTED[name]
    syn = generate(p["n_docs"], p["n_topics"], p["n_words"], doc_length=(50, 150), alpha=0.1, beta=p["beta"], seed=1)
    ldacli.write_corpus(syn.corpus, path, spec["options"][1], format="ldac")


def run(name: str) -> int:
    spec = corpora()[name]
    if name in PLANTED:
        make_planted(name, spec)
    if not os.path.exists(spec["path"]) or ("ready" in spec and not os.path.exists(spec["ready"])):
        print(f"{name}: {spec['path']} is not there (yet): skipped", file=sys.stderr)
        return 0
    args = [sys.executable, "-m", "ldacli", "select-k", spec["path"], *spec["options"], "-k", spec["grid"],
            "--seeds", str(SEEDS), "--iterations", str(ITERATIONS), "--seed", "1", "--threads", "1",
            "-o", folder(name), "--format", "tsv"]
    print(" ".join(args), file=sys.stderr, flush=True)
    os.execv(sys.executable, args)  # the process itself: a slot's SIGTERM reaches select-k, which stops cleanly


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="run select-k on one corpus")
    r.add_argument("name", choices=sorted(corpora()))
    t = sub.add_parser("table", help="every rule on every corpus whose runs are done")
    t.add_argument("--markdown", action="store_true")
    args = p.parse_args()
    if args.what == "run":
        return run(args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
