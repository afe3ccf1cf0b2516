"""Where a sweep of the threads engine spends its time: in the kernels, and around them.

Usage::

    python benchmarks/profile_sweep.py                     # 20NG, sparse, K=100 and 1000, default shards
    python benchmarks/profile_sweep.py -k 1000 --shards 4 --threads 2
    python benchmarks/profile_sweep.py --corpus zipf:10M -k 100 --shards 1 --burn-in 10 --sweeps 3

Runs ``--burn-in`` sweeps, then times ``--sweeps`` sweeps: seconds per sweep, and the kernels'
time (summed over threads). It reports how many times a sweep visits a document (once per word
slice the document has tokens in: each visit enters the document, from its list of topics with
the sparse sampler, from its tokens with the others), how long the word
lists scanned per token are (the average over tokens of their word's number of topics), which is
what the sparse sampler's cost follows, and the time per token and list entry. ``--corpus``: ``kos``, ``20ng``, ``zipf:N`` or ``synth:N`` (as
in ``bench_train.py``) or a path.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

import numpy as np

from bench_dask import build
from bench_train import load
from ldacli.methods.cgs.layouts import REPLICAS
from ldacli.methods.cgs.sampler import SAMPLERS
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.partition import default_shards

SPENT: dict[str, float] = defaultdict(float)


def timing(owner, name: str, part: str):
    """Wrap ``owner.<name>`` (a class's method, a module's function) so that its time adds up
    in ``SPENT[part]``."""
    method = getattr(owner, name)

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            SPENT[part] += time.perf_counter() - t0

    setattr(owner, name, timed)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", default="20ng")
    p.add_argument("-k", "--topics", action="append", type=int)
    p.add_argument("--sampler", default="sparse", choices=SAMPLERS)
    p.add_argument("--shards", type=int, help="default: as ldacli train")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--burn-in", type=int, default=30)
    p.add_argument("--sweeps", type=int, default=5)
    args = p.parse_args(argv)
    for layout in REPLICAS.values():  # each count layout's block call
        timing(layout, "sweep", "sample")
    corpus = load(args.corpus)
    shards = args.shards or default_shards(corpus.n_tokens)
    print(f"{os.path.basename(args.corpus)}: {corpus.n_tokens} tokens, {args.sampler}, {shards} shards, "
          f"{args.threads} threads")
    print("    K  s/sweep   sample  visits/doc  scan  ns/token/entry")
    for K in args.topics or [100, 1000]:
        words, doc_ptr, z, bounds, rngs = build(corpus, K, seed=1, shards=shards)
        sampler = ThreadsSampler(args.sampler, words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01,
                                 bounds, rngs, args.threads)
        for _ in range(args.burn_in):
            sampler.sweep()
        SPENT.clear()
        t0 = time.perf_counter()
        for _ in range(args.sweeps):
            sampler.sweep()
        total = (time.perf_counter() - t0) / args.sweeps
        sample = SPENT["sample"] / args.sweeps
        doc_of = np.repeat(np.arange(doc_ptr.size - 1), np.diff(doc_ptr))
        slice_of = np.searchsorted(sampler.slices, words, side="right") - 1
        visits = np.unique(doc_of * len(bounds) + slice_of).size / max(1, doc_ptr.size - 1)
        if args.sampler == "dense":
            scan = float(K)
        else:
            scan = float(sampler.counts.wt_len[words].mean())
        print(f"{K:5d}  {total:7.3f}  {sample:7.3f}  {visits:10.2f}  {scan:4.1f}"
              + f"  {total / words.size / scan * 1e9:14.2f}"
              + ("" if args.threads == 1 else "  (sample summed over threads)"))
        sampler.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
