"""Does select-k find the number of topics a corpus was made with? And what it costs against one-by-one runs.

Usage::

    python benchmarks/select_k.py                                  # synthetic, 15 topics, 1 M tokens
    python benchmarks/select_k.py --true-k 15 --tokens 1000000 -k 5,10,15,20,30 --seeds 3 --iterations 1000
    python benchmarks/select_k.py --corpus 20ng -k 10,20,50,100,200 --iterations 300
    python benchmarks/select_k.py --timing --threads 2              # wall time against the same runs one by one

The synthetic corpus is drawn from the LDA generative process (``ldacli.corpora.synthetic.generate``) with
``--true-k`` topics, each Dirichlet(``--topic-beta``) over ``--words`` words (well separated at the
defaults), documents of 50 to 150 tokens, alpha 0.1; it is written as LDA-C in ``--folder``. The
benchmark runs ``ldacli select-k`` on it as a whole process and reports its table, the recommended
K and whether it lies within +-25% of the true number. ``--corpus 20ng`` (or ``kos``) runs the
same on a real corpus (``$LDACLI_CORPORA`` or ``../shared/corpora``) and reports the table and
where the page is.

``--timing``: the wall time of select-k with ``--threads`` against the same pairs trained and
scored one after another by ``ldacli train`` and ``ldacli perplexity`` processes (one thread each,
as a shell loop would), on the same held-out split. The machine must be quiet for this one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import ldacli
from ldacli.corpora.corpus import Corpus
from ldacli.scoring.fixed_topics import holdout_split
from ldacli.corpora.synthetic import generate
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"20ng": "docword.20ng.txt.gz", "kos": "docword.kos.txt.gz"}


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "ldacli", *map(str, args)], capture_output=True, text=True)
    if done.returncode not in (0, 3):  # 3: select-k ran, but the data did not determine K
        raise SystemExit(f"ldacli {' '.join(map(str, args))} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", choices=sorted(FILES), help="a real corpus instead of the synthetic one")
    p.add_argument("--true-k", type=int, default=15)
    p.add_argument("--tokens", type=int, default=1_000_000)
    p.add_argument("--words", type=int, default=5000)
    p.add_argument("--topic-beta", type=float, default=0.05)
    p.add_argument("-k", "--grid", default="5,10,15,20,30")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--folder", default="/tmp/ldacli-select-k")
    p.add_argument("--timing", action="store_true")
    args = p.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    if args.corpus:
        path = os.path.join(CORPORA, FILES[args.corpus])
        name = args.corpus
    else:
        name = f"synthetic-k{args.true_k}"
        path = os.path.join(args.folder, f"{name}.ldac")
        if not os.path.exists(path):
            syn = generate(args.tokens // 100, args.true_k, args.words, doc_length=(50, 150), alpha=0.1,
                           beta=args.topic_beta, seed=args.seed)
            ldacli.write_corpus(syn.corpus, path, path.replace(".ldac", ".vocab"), format="ldac")
    out = os.path.join(args.folder, f"{name}-select-k")
    common = ["--iterations", args.iterations, "--seed", args.seed, "--seeds", args.seeds, "-q"]
    t0 = time.perf_counter()
    table = cli("select-k", path, "-k", args.grid, *common, "--threads", args.threads, "-o", out)
    seconds = time.perf_counter() - t0
    print(table, end="")
    result = json.load(open(os.path.join(out, "select-k.json")))
    print(f"select-k: {len(result['pairs'])} pairs in {seconds:.1f} s with {args.threads} threads; models, table and "
          f"page in {out}")
    if not args.corpus:
        k = result["recommended"]
        within = k is not None and abs(k - args.true_k) <= 0.25 * args.true_k
        print(f"true K {args.true_k}, recommended {k}: {'within' if within else 'NOT within'} +-25%")
    if args.timing:
        corpus = ldacli.read_corpus(path)
        train, _, _ = holdout_split(corpus, result["settings"]["holdout"], seed=result["seed"])
        held = Corpus(corpus.counts[result["heldout"]["documents"]], corpus.vocab,
                      [corpus.doc_ids[i] for i in result["heldout"]["documents"]], corpus.source, corpus.format)
        one = os.path.join(args.folder, f"{name}-one-by-one")
        os.makedirs(one, exist_ok=True)
        ldacli.write_corpus(train, os.path.join(one, "train.ldac"), os.path.join(one, "train.vocab"), format="ldac")
        ldacli.write_corpus(held, os.path.join(one, "held.ldac"), os.path.join(one, "held.vocab"), format="ldac")
        t0 = time.perf_counter()
        for k in result["settings"]["n_topics"]:
            for i in range(1, args.seeds + 1):
                model = os.path.join(one, f"k{k}-s{i}.npz")
                cli("train", os.path.join(one, "train.ldac"), "-k", k, "--iterations", args.iterations, "--seed",
                    args.seed + i - 1, "--threads", 1, "-q", "-o", model)
                cli("perplexity", model, os.path.join(one, "held.ldac"), "--seed", args.seed, "--threads", 1, "-q")
        alone = time.perf_counter() - t0
        print(f"one by one (train + perplexity processes, one thread): {alone:.1f} s; select-k {seconds:.1f} s; "
              f"ratio {alone / seconds:.2f}")


if __name__ == "__main__":
    sys.exit(main())
