"""Paired A/B timing of two or more builds of the kernels, sweep for sweep in turn.

Usage (build the old version in a git worktree first)::

    git worktree add /tmp/old HEAD~1 && (cd /tmp/old && python setup.py build_ext --inplace)
    python benchmarks/ab_sweep.py --build old=/tmp/old --build new=. -k 100 -k 1000 --shards 4

Timings on a shared machine move by 10% from run to run, more than most kernel changes are
worth, so separate runs of ``bench_train.py`` cannot tell such changes apart. Here each build runs
in a process of its own (the package of ``ROOT`` first on ``PYTHONPATH``, so that the whole package, its
sampler and kernels, is that build's, whatever their signatures): every process starts the same
chain (same corpus, K, shards and seed), runs ``--burn-in`` sweeps, then the processes time one
sweep each in turn, ``--sweeps`` times (the order reversed every other round), so that the
builds meet the same noise. It prints each build's median seconds per sweep and its ratio to the
first build's. For changes meant to keep the chains as they were (see ``check_identity.py``) the
builds sample the same states; otherwise each chain drifts on its own, which matters little after
the burn-in.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np
from trees import package_parent

HERE = os.path.dirname(os.path.abspath(__file__))

# One build's process: set up the chain and burn it in, say "ready", then time one sweep for
# every line read, answering with its seconds.
CHILD = """
import sys, time
sys.path.insert(0, {here!r})
import numpy as np
from bench_dask import build
from bench_train import load
from ldacli.methods.cgs.threads import ThreadsSampler
corpus_name, kind, start = sys.argv[1], sys.argv[2], sys.argv[3]
K, shards, burn_in = map(int, sys.argv[4:])
corpus = load(corpus_name)
words, doc_ptr, z, bounds, rngs = build(corpus, K, seed=1, shards=shards or None)
alpha, beta = np.full(K, 0.1), 0.01
if start:  # the state of a run of ldacli train: its topics and priors
    with np.load(start) as checkpoint:
        z, alpha, beta = checkpoint["z"].astype(np.int32), checkpoint["alpha"], float(checkpoint["beta"])
sampler = ThreadsSampler(kind, words, doc_ptr, z, corpus.n_words, K, alpha, beta, bounds, rngs)
for _ in range(burn_in):
    sampler.sweep()
print("ready", len(bounds) - 1, flush=True)
for line in sys.stdin:
    t0 = time.perf_counter()
    sampler.sweep()
    print(time.perf_counter() - t0, flush=True)
sampler.close()
"""


def start(root: str, corpus: str, kind: str, K: int, shards: int | None, burn_in: int,
          checkpoint: str | None = None) -> subprocess.Popen:
    """The process of the build at ``root``, its chain burnt in."""
    src = package_parent(root)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", CHILD.format(here=HERE), corpus, kind, checkpoint or "", str(K), str(shards or 0),
                             str(burn_in)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def answer(process: subprocess.Popen, root: str) -> str:
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"{root}: the build's process stopped (exit {process.wait()})")
    return line.split()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", action="append", required=True, help="NAME=ROOT of a built checkout (repeatable)")
    p.add_argument("--corpus", default="20ng", help="as in bench_train.py")
    p.add_argument("-k", "--topics", type=int, action="append")
    p.add_argument("--sampler", default="sparse", choices=("dense", "sparse", "alias"))
    p.add_argument("--shards", type=int, action="append", help="default: as ldacli train (repeatable)")
    p.add_argument("--burn-in", type=int, default=30)
    p.add_argument("--sweeps", type=int, default=12, help="timed sweeps of each build")
    p.add_argument("--start", metavar="CHECKPOINT",
                   help="start from the topics and priors of this checkpoint of `ldacli train` on the corpus (with "
                        "the same -k and shards; its restricted start and its word lists' lengths), not at random")
    args = p.parse_args(argv)
    builds = dict(b.split("=", 1) for b in args.build)
    first = next(iter(builds))
    print(f"{'corpus':<8} {'K':>5} {'shards':>6}  {'build':<10} {'s/sweep':>8} {'ratio':>6}")
    for K in args.topics or [100, 1000]:
        for shards in args.shards or [None]:
            processes = {name: start(root, args.corpus, args.sampler, K, shards, args.burn_in, args.start)
                         for name, root in builds.items()}
            try:
                used = {answer(proc, builds[name])[1] for name, proc in processes.items()}
                times: dict[str, list[float]] = {name: [] for name in builds}
                for round_ in range(args.sweeps):
                    for name in (list(builds) if round_ % 2 == 0 else list(reversed(builds))):
                        processes[name].stdin.write("sweep\n")
                        processes[name].stdin.flush()
                        times[name].append(float(answer(processes[name], builds[name])[0]))
            finally:
                for proc in processes.values():
                    proc.stdin.close()
                    proc.wait()
            base = float(np.median(times[first]))
            for name, t in times.items():
                print(f"{args.corpus:<8} {K:>5} {'/'.join(sorted(used)):>6}  {name:<10} {np.median(t):>8.3f} "
                      f"{np.median(t) / base:>6.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
