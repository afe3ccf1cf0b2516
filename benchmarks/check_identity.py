"""Check that a kernel change leaves the chains bit for bit as they were.

Usage (build the old kernels, save, rebuild the new ones, compare)::

    python benchmarks/check_identity.py --save /tmp/before.npz
    python benchmarks/check_identity.py --against /tmp/before.npz

For every sampler with word lists (sparse, alias), K = 30, 100, 1000, 1 and 4 shards and 1 and 2
threads, it runs ``--sweeps`` sweeps of the threads engine on KOS (or ``--corpus``) from a fixed
seed and records the topics ``z`` and the topic-word counts. A speed-up that is meant to change
nothing but speed must leave every one of them equal.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

import numpy as np

import ldacli
from bench_dask import CORPORA, build
from ldacli.methods.cgs.threads import ThreadsSampler


def run(corpus, kind: str, K: int, shards: int, threads: int, sweeps: int) -> dict[str, np.ndarray]:
    words, doc_ptr, z, bounds, rngs = build(corpus, K, seed=7, shards=shards)
    sampler = ThreadsSampler(kind, words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01, bounds, rngs,
                             threads)
    try:
        for _ in range(sweeps):
            sampler.sweep()
        return {"z": z.copy(), "nwk": sampler.counts.word_topic_counts(), "nk": sampler.counts.nk.copy()}
    finally:
        sampler.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", help="write the chains' end states here")
    group.add_argument("--against", help="compare with the end states saved here")
    parser.add_argument("--corpus", default=os.path.join(CORPORA, "docword.kos.txt.gz"))
    parser.add_argument("--sweeps", type=int, default=5)
    args = parser.parse_args(argv)
    corpus = ldacli.read_corpus(args.corpus)
    states = {}
    for kind, K, shards, threads in itertools.product(("sparse", "alias"), (30, 100, 1000), (1, 4), (1, 2)):
        if shards == 1 and threads == 2:
            continue
        for name, array in run(corpus, kind, K, shards, threads, args.sweeps).items():
            states[f"{kind}-K{K}-s{shards}-t{threads}-{name}"] = array
    if args.save:
        np.savez_compressed(args.save, **states)
        print(f"saved {len(states)} arrays to {args.save}")
        return 0
    with np.load(args.against) as before:
        differ = [key for key in states if not np.array_equal(states[key], before[key])]
    for key in differ:
        print(f"DIFFERS: {key}")
    print(f"{len(states) - len(differ)} of {len(states)} arrays equal")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
