"""Paired A/B timing of two or more builds of the kernels, on one chain.

Usage (build the old version in a git worktree first)::

    git worktree add /tmp/old HEAD~1 && (cd /tmp/old && python setup.py build_ext --inplace)
    python benchmarks/ab_sweep.py --build old=/tmp/old --build new=. -k 100 -k 1000 --shards 4

Timings on a shared machine move by 10% from run to run, more than most kernel changes are
worth, so separate runs of ``bench_train.py`` cannot tell such changes apart. Here one process
loads every build's ``ldacli._cgs`` (from ``ROOT/src/ldacli``), runs ``--burn-in`` sweeps of one
sampler with the first build, then times ``--sweeps`` sweeps of each build in turn on that same
chain (the order reversed every other round), so the builds meet the same state and the same
noise. It prints each build's median seconds per sweep and its ratio to the first build's. For
changes meant to keep the chains as they were (see ``check_identity.py``) the sweeps are
exactly comparable; otherwise the chain drifts between builds, which matters little after the
burn-in.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import time

import numpy as np

from bench_dask import build
from bench_train import load
from ldacli.methods import sharded
from ldacli.methods.sharded import ShardedSampler


def load_kernels(root: str):
    """The ``ldacli._cgs`` extension built in place under ``root``, as its own module object."""
    paths = glob.glob(os.path.join(root, "src", "ldacli", "_cgs*.so"))
    if not paths:
        raise SystemExit(f"no built ldacli/_cgs extension under {root}/src (run setup.py build_ext --inplace there)")
    spec = importlib.util.spec_from_file_location("ldacli._cgs", paths[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", action="append", required=True, help="NAME=ROOT of a built checkout (repeatable)")
    p.add_argument("--corpus", default="20ng", help="as in bench_train.py")
    p.add_argument("-k", "--topics", type=int, action="append")
    p.add_argument("--sampler", default="sparse", choices=sharded.SAMPLERS)
    p.add_argument("--shards", type=int, action="append", help="default: as ldacli train (repeatable)")
    p.add_argument("--burn-in", type=int, default=30)
    p.add_argument("--sweeps", type=int, default=12, help="timed sweeps of each build")
    args = p.parse_args(argv)
    builds = {name: load_kernels(root) for name, root in (b.split("=", 1) for b in args.build)}
    corpus = load(args.corpus)
    first = next(iter(builds))
    print(f"{'corpus':<8} {'K':>5} {'shards':>6}  {'build':<10} {'s/sweep':>8} {'ratio':>6}")
    for K in args.topics or [100, 1000]:
        for shards in args.shards or [None]:
            words, doc_ptr, z, bounds, rngs = build(corpus, K, seed=1, shards=shards)
            sampler = ShardedSampler(args.sampler, words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01,
                                     bounds, rngs)
            times: dict[str, list[float]] = {name: [] for name in builds}
            try:
                sharded._cgs = builds[first]
                for _ in range(args.burn_in):
                    sampler.sweep()
                for round_ in range(args.sweeps):
                    for name in (list(builds) if round_ % 2 == 0 else list(reversed(builds))):
                        sharded._cgs = builds[name]
                        t0 = time.perf_counter()
                        sampler.sweep()
                        times[name].append(time.perf_counter() - t0)
            finally:
                sampler.close()
            base = float(np.median(times[first]))
            for name, t in times.items():
                print(f"{args.corpus:<8} {K:>5} {len(bounds) - 1:>6}  {name:<10} {np.median(t):>8.3f} "
                      f"{np.median(t) / base:>6.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
