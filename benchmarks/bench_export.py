"""``ldacli export`` of a model in every format: the size of each file and the time to write it.

Usage::

    python benchmarks/bench_export.py                      # 20NG, K=100 (trained first, 200 sweeps)
    python benchmarks/bench_export.py --model m.npz        # an existing model
    python benchmarks/bench_export.py -k 10 --sweeps 5 --max-docs 2000   # a quick check

Each export runs as a user runs it, ``ldacli export MODEL WHAT --format F -o FILE`` in its own
process, timed from start to end (the model's loading included, which the table shows alone as
``ldacli info``'s time); pyldavis reads the training corpus again.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
import ldacli  # noqa: E402
from places import CORPORA  # noqa: E402

# the package this script imported (an install, or a checkout's src), for the processes it starts
SRC = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))

RUNS = [(what, fmt) for what in ("doc-topics", "topic-words", "topic-keys")
        for fmt in ("tsv", "csv", "jsonl", "parquet", "mallet")] + [
    ("doc-topics --top-topics 3", "tsv"), ("doc-topics --top-topics 3", "parquet"), ("pyldavis", "json")]


def timed(command: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": SRC})
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("--model", default=None)
    p.add_argument("-k", "--topics", type=int, default=100)
    p.add_argument("--sweeps", type=int, default=200)
    p.add_argument("--max-docs", type=int, default=None)
    args = p.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-export-")
    model = args.model
    if model is None:
        corpus = args.corpus
        if args.max_docs:
            whole = ldacli.read_corpus(corpus)
            corpus = os.path.join(folder, "part.ldac")
            ldacli.write_corpus(ldacli.Corpus(whole.counts[:args.max_docs], whole.vocab, whole.doc_ids[:args.max_docs]),
                                corpus, os.path.join(folder, "part.vocab"))
        model = os.path.join(folder, "m.npz")
        subprocess.run([sys.executable, "-m", "ldacli", "train", corpus, "-k", str(args.topics), "--iterations",
                        str(args.sweeps), "--seed", "1", "-q", "-o", model], check=True,
                       env={**os.environ, "PYTHONPATH": SRC})
    m = ldacli.load_model(model)
    print(f"{model}: K={m.n_topics}, V={len(m.vocab)}, D={len(m.doc_ids)}; model file {os.path.getsize(model) / 1e6:.1f} MB")
    base = timed([sys.executable, "-m", "ldacli", "info", model, "-q"])
    print(f"loading the model (ldacli info): {base:.2f} s")
    print(f"{'table':>26} {'format':>8} {'MB':>8} {'seconds':>8}")
    for what, fmt in RUNS:
        out = os.path.join(folder, f"out.{fmt}")
        seconds = timed([sys.executable, "-m", "ldacli", "export", model, *what.split(), "--format", fmt, "-q",
                         "-o", out])
        print(f"{what:>26} {fmt:>8} {os.path.getsize(out) / 1e6:8.2f} {seconds:8.2f}", flush=True)


if __name__ == "__main__":
    main()
