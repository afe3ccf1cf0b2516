"""How many topics a token's word and a token's document hold, on ``ldacli train``'s own path.

Usage::

    python benchmarks/list_lengths.py --corpus 20ng -k 1000 --every 10 --sweeps 30
    python benchmarks/list_lengths.py --corpus $LDACLI_DATA/large/zipf10M.npz -k 1000

The sparse sampler scans, for each token, its word's list of topics (``K_w``); a word-major
sampler with a tree over the word's prior part (F+LDA) would scan the document's topics
(``K_d``) instead. Both averaged over tokens, counted (not timed) from the state of a run of
``ldacli.train`` (its start, defaults, seed 1) every ``--every`` sweeps, read back from its
checkpoint. ``--corpus``: as in ``bench_train.py``.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import ldacli
from bench_train import load


def topics_per_row(rows: np.ndarray, z: np.ndarray, n_rows: int, k: int) -> np.ndarray:
    """How many distinct topics each row (a word, a document) has among its tokens."""
    return np.bincount(np.unique(rows.astype(np.int64) * k + z) // k, minlength=n_rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="20ng")
    ap.add_argument("-k", "--topics", type=int, default=1000)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--sweeps", type=int, default=30)
    args = ap.parse_args(argv)
    corpus = load(args.corpus)
    words, doc_ptr = corpus.tokens()
    docs = np.repeat(np.arange(doc_ptr.size - 1), np.diff(doc_ptr))
    print(f"{os.path.basename(args.corpus)}: {corpus.n_tokens} tokens, K={args.topics}")
    print(" sweep  K_d over tokens  K_w over tokens")
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "c.npz")
        for upto in range(args.every, args.sweeps + 1, args.every):
            if upto == args.every:
                ldacli.train(corpus, args.topics, iterations=upto, seed=1, checkpoint=ckpt)
            else:
                ldacli.train(corpus, iterations=upto, checkpoint=ckpt, resume=ckpt)
            with np.load(ckpt) as c:
                z = c["z"].astype(np.int64)
            kd = topics_per_row(docs, z, doc_ptr.size - 1, args.topics)[docs].mean()
            kw = topics_per_row(words, z, corpus.n_words, args.topics)[words].mean()
            print(f"{upto:6d}  {kd:15.1f}  {kw:15.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
