"""What P shards cost a sweep on one core, and the speed-up on T cores that those figures imply.

Usage::

    python benchmarks/shard_cost.py                      # synth:50M, K=100, sparse, P = 1 2 4 ... 64
    python benchmarks/shard_cost.py -k 1000 --shards 1 --shards 32 --shards 64
    python benchmarks/shard_cost.py --corpus synth:1M --burn-in 1 --sweeps 1 --shards 1 --shards 4   # a check

For each P the corpus (``--corpus`` as in ``bench_train.py``: ``synth:N`` draws N tokens from
LDA's generative process, 100 topics, 20,000 words, documents of 100 to 300 tokens; ``zipf:N``,
``kos``, ``20ng`` or a path) is cut into P shards as ``ldacli train --shards P`` cuts it; after
``--burn-in`` sweeps, ``--sweeps`` sweeps run on one thread and the time of every block (one
call of a count layout's ``sweep``) is recorded. Columns:

- ``s/sweep``, ``cost``: one core's seconds per sweep, and their ratio to P=1's (the exact
  sequential sampler): what P shards cost in work (a document is visited once per slice it has
  tokens in, and each visit enters it: its list of topics, with the sparse sampler);
- ``serial ms``: per sweep, what no thread can share: the sweep's time outside the blocks'
  calls (after each of the P rounds, copying the K topic totals and adding up the P blocks'
  changes; handing out the P^2 blocks), plus P^2 times the cost of the Python around one
  kernel call (holding the GIL: measured on an empty block, ``call us``);
- ``at 8/16/32``: the modelled speed-up at T cores over P=1 on one core. A round's P blocks go
  to T threads in order, each to the first thread free (as ``ThreadPoolExecutor.map`` hands
  them out), so a round takes the greedy makespan of its blocks' measured times on T threads;
  a sweep takes its rounds' makespans plus the serial part. Threads beyond P do nothing.

So the serial part per sweep grows as P (rounds) times K (totals) plus P^2 (block calls), and
the parallel part as the corpus's tokens plus its documents times the slices they touch. The
machine's load changes the times: run it on a quiet machine (``taskset -c 0`` pins it to one
core). Memory: the corpus's tokens (8 bytes each) and each shard's slice starts (8 (P+1) bytes
a document): about 1 GB at 50 M tokens and P=64.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from bench_dask import build, timed
from bench_train import load
from ldacli.methods.cgs.layouts import REPLICAS
from ldacli.methods.cgs.sampler import SAMPLERS
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.partition import default_shards

BLOCKS: list[float] = []


def timed_blocks() -> None:
    """Record the seconds of every block call (each count layout's ``sweep``) in :data:`BLOCKS`."""
    for layout in REPLICAS.values():
        block = layout.sweep

        def timed_sweep(*args, block=block, **kwargs):
            t0 = time.perf_counter()
            try:
                return block(*args, **kwargs)
            finally:
                BLOCKS.append(time.perf_counter() - t0)

        layout.sweep = timed_sweep


def call_cost(sampler: ThreadsSampler, calls: int = 2000) -> float:
    """Seconds of one block call that samples nothing (a shard of no documents): the Python
    and argument handling around a kernel, which holds the GIL."""
    P = len(sampler.shards)
    empty = np.zeros(0, np.int32)
    shard = dataclasses.replace(sampler.shards[0], words=empty, z=empty, lo=0, ptr=np.zeros(1, np.int64),
                                runs=np.zeros((0, P + 1), np.int64), lists=None)
    if shard.order is not None:
        shard.order, shard.order_cuts, shard.doc_of = empty, np.zeros(P + 1, np.int64), empty
    replica = sampler.shared.sharing()
    t0 = time.perf_counter()
    for _ in range(calls):
        replica.sweep(shard, 0, sampler.priors)
    return (time.perf_counter() - t0) / calls


def makespan(times: list[float], threads: int) -> float:
    """When the last of ``times`` ends, each started in order on the first of ``threads`` free."""
    free = [0.0] * threads
    for t in times:
        i = min(range(threads), key=free.__getitem__)
        free[i] += t
    return max(free)


def modelled(blocks: np.ndarray, serial: float, threads: int) -> float:
    """Seconds per sweep on ``threads`` cores: ``blocks`` (rounds, P) of block times."""
    return sum(makespan(list(r), min(threads, r.size)) for r in blocks) + serial


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", default="synth:50M")
    p.add_argument("-k", "--topics", type=int, default=100)
    p.add_argument("--sampler", default="sparse", choices=SAMPLERS)
    p.add_argument("--shards", type=int, action="append", help="repeatable; default 1 2 4 8 16 32 64")
    p.add_argument("--burn-in", type=int, default=20)
    p.add_argument("--sweeps", type=int, default=2)
    p.add_argument("--cores", type=int, action="append", help="repeatable; default 8 16 32")
    args = p.parse_args(argv)
    cores = args.cores or [8, 16, 32]
    corpus = load(args.corpus)
    K = args.topics
    print(f"{args.corpus}: {corpus.n_tokens:,} tokens, {corpus.n_docs:,} documents, K={K}, {args.sampler}; "
          f"default shards {default_shards(corpus.n_tokens)}")
    print(f"{'P':>4} {'s/sweep':>8} {'cost':>6} {'call us':>8} {'serial ms':>10} "
          + " ".join(f"{'at ' + str(c):>7}" for c in cores))
    timed_blocks()
    base = None
    for P in args.shards or [1, 2, 4, 8, 16, 32, 64]:
        words, doc_ptr, z, bounds, rngs = build(corpus, K, seed=1, shards=P)
        P = bounds.size - 1
        sampler = ThreadsSampler(args.sampler, words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01,
                                 bounds, rngs, threads=1)
        BLOCKS.clear()
        sweep = timed(sampler, args.burn_in, args.sweeps)
        timed_sweeps = BLOCKS[-args.sweeps * P * P:]
        blocks = np.array(timed_sweeps).reshape(args.sweeps, P, P).mean(axis=0)  # (rounds, blocks)
        call = call_cost(sampler)
        serial = max(0.0, sweep - float(blocks.sum())) + P * P * call
        parallel = np.maximum(blocks - call, 0.0)
        base = sweep if base is None and P == 1 else base
        ref = base if base is not None else sweep
        speedups = [ref / modelled(parallel, serial, c) for c in cores]
        print(f"{P:>4} {sweep:>8.3f} {sweep / ref:>6.2f} {call * 1e6:>8.1f} {serial * 1e3:>10.1f} "
              + " ".join(f"{s:>7.1f}" for s in speedups), flush=True)
        sampler.close()
        del sampler, words, doc_ptr, z
    if base is None:
        print("(no P=1 run: cost and speed-ups are over the first P's one-core sweep)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
