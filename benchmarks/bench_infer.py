"""Inference speed: ldacli infer against tomotopy's infer, on the 20NG held-out tenth, one thread.

Usage::

    python benchmarks/bench_infer.py                 # K=1000 (and -k to add others)
    python benchmarks/bench_infer.py -k 100 -k 1000 --train-sweeps 30

Every 10th document is held out; both tools train a model of K topics on the rest for
``--train-sweeps`` sweeps (untimed), then infer the topic proportions of the held-out documents
with ``--iterations`` Gibbs sweeps (timed, one thread, in this process). ldacli's inference is
exact Gibbs sampling with the topics fixed, O(topics of the document + log K) per token
(``sparse_fixed_topics_sweep``); tomotopy's ``LDAModel.infer`` is its own sampler.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import ldacli
from ldacli.corpus import Corpus

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(HERE, "..", "..", "shared", "corpora"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("-k", "--topics", action="append", type=int)
    p.add_argument("--train-sweeps", type=int, default=30)
    p.add_argument("--iterations", type=int, default=100)
    args = p.parse_args()
    corpus = ldacli.read_corpus(args.corpus)
    held = np.arange(corpus.n_docs) % 10 == 9
    part = lambda m: Corpus(corpus.counts[m], corpus.vocab, [d for d, k in zip(corpus.doc_ids, m) if k])  # noqa: E731
    train, test = part(~held), part(held)
    print(f"held-out: {test.n_docs} documents, {test.n_tokens} tokens; {args.iterations} sweeps, one thread")
    print(f"{'K':>5} {'ldacli s':>9} {'tomotopy s':>11} {'ratio':>6}")
    for K in args.topics or [1000]:
        model = ldacli.train(train, K, iterations=args.train_sweeps, seed=1, threads=1)
        t0 = time.perf_counter()
        ldacli.infer(model, test, iterations=args.iterations, burn_in=args.iterations // 2, seed=1, threads=1)
        ours = time.perf_counter() - t0
        theirs = float("nan")
        try:
            import tomotopy as tp
        except ImportError:
            tp = None
        if tp is not None:
            mdl = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=1)
            for row in train.counts:
                mdl.add_doc(np.repeat(np.array(train.vocab)[row.indices], row.data).tolist())
            mdl.train(args.train_sweeps, workers=1)
            docs = [mdl.make_doc(np.repeat(np.array(test.vocab)[row.indices], row.data).tolist()) for row in test.counts]
            t0 = time.perf_counter()
            mdl.infer(docs, iterations=args.iterations, workers=1)
            theirs = time.perf_counter() - t0
        print(f"{K:5d} {ours:9.2f} {theirs:11.2f} {theirs / ours:6.2f}", flush=True)


if __name__ == "__main__":
    main()
