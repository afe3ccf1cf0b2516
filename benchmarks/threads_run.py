"""What a second thread gives a whole training run, and what stays serial between its sweeps.

Usage::

    python benchmarks/threads_run.py                          # 20NG, K=100 and 1000, 25 sweeps
    flock ../.bench.lock taskset -c 1 python benchmarks/threads_run.py --threads 1   # one core: model only
    flock ../.bench.lock taskset -c 0,1 python benchmarks/threads_run.py             # both cores: measured

Each run is ``ldacli.train`` as ``ldacli train`` runs it (defaults: snapshots, the trace every 10
sweeps, default shards), in a process of its own that first reads the corpus. Per run it
reports the whole process (reading the corpus included), the window from the end of sweep 5 to
the end of the last sweep (what the issue calls "sweeps 5-25 of a whole run"), and within that
window the time in the blocks' kernel calls (each count layout's ``sweep``, summed over threads), in the
snapshots (``Snapshots.take``) and in the trace (``log_likelihood``), and ``other``, the rest of
the window outside the blocks (learning the priors, the rounds' bookkeeping; on two threads,
outside the blocks' rounds as the blocks' own times give them): what is serial between sweeps. ``2T model`` is the window's time on two threads that the one-thread run implies: each
round's blocks go to two threads in order, each to the first thread free (as
``ThreadPoolExecutor.map`` hands them out), plus everything outside the blocks, serial. With two
cores free, ``--threads 1 --threads 2`` (the default) also measures two threads; on a shared
machine that figure moves with the other core's load, the model does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
NAMED = {"kos": "docword.kos.txt.gz", "20ng": "docword.20ng.txt.gz"}


def worker(spec: dict) -> dict:
    """One whole run in this process: the timings above."""
    began = time.perf_counter()
    import ldacli
    from ldacli.methods.cgs import method, snapshots
    from ldacli.methods.cgs.layouts import REPLICAS
    from ldacli.partition import default_shards

    spent = {"block": 0.0, "snapshot": 0.0, "loglik": 0.0}
    blocks: list[tuple[int, float]] = []  # (sweep, seconds) of every block, in the order run
    state = {"sweep": 0}

    def timed(owner, name: str, part: str):
        method = getattr(owner, name)

        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                spent[part] += dt
                if part == "block":
                    blocks.append((state["sweep"] + 1, dt))
        setattr(owner, name, wrapper)

    for layout in REPLICAS.values():  # each count layout's block call
        timed(layout, "sweep", "block")
    timed(snapshots.Snapshots, "take", "snapshot")
    timed(method, "log_likelihood", "loglik")
    corpus = ldacli.read_corpus(spec["corpus"])
    marks: dict[int, tuple[float, dict]] = {}

    def tick(it: int) -> None:
        state["sweep"] = it
        marks[it] = (time.perf_counter(), dict(spent))

    ldacli.train(corpus, spec["k"], iterations=spec["iterations"], seed=1, threads=spec["threads"], callback=tick)
    ended = time.perf_counter()
    first, last = spec["from"], spec["iterations"]
    (t0, s0), (t1, s1) = marks[first], marks[last]
    window = {part: s1[part] - s0[part] for part in spent}
    shards = default_shards(corpus.n_tokens)
    # the window's rounds: P blocks each, in the order ShardedSampler.sweep hands them out
    inside = [dt for sweep, dt in blocks if first < sweep <= last]
    makespan = 0.0
    for r in range(0, len(inside), shards):
        free = [0.0, 0.0]
        for dt in inside[r:r + shards]:
            at = free.index(min(free))
            free[at] += dt
        makespan += max(free)
    return {"whole": ended - began, "window": t1 - t0, "after_last": ended - t1, **window,
            "model_2t": (t1 - t0) - window["block"] + makespan, "makespan": makespan, "shards": shards}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    ap.add_argument("-k", "--topics", type=int, action="append", help="repeatable; default 100 and 1000")
    ap.add_argument("--threads", type=int, action="append", help="repeatable; default 1 and 2")
    ap.add_argument("--iterations", type=int, default=25)
    ap.add_argument("--from", dest="first", type=int, default=5, help="the window starts after this sweep")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    if not os.path.exists(path):
        print(f"skipping: no corpus at {path}", file=sys.stderr)
        return 0
    print(f"{args.corpus}: whole runs of {args.iterations} sweeps (ldacli.train, defaults, seed 1); the window is "
          f"sweeps {args.first + 1}-{args.iterations}")
    print(f"{'K':>5} {'T':>2} {'whole s':>8} {'window s':>8} {'blocks':>7} {'snapshots':>9} {'trace':>6} "
          f"{'other':>6} {'after':>6} {'2T model':>8} {'window ratio':>12}")
    for k in args.topics or [100, 1000]:
        one = None
        for threads in args.threads or [1, 2]:
            spec = {"corpus": path, "k": k, "threads": threads, "iterations": args.iterations, "from": args.first}
            out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True,
                                 text=True)
            if out.returncode != 0:
                print(f"  K={k} T={threads} failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            one = one or r
            ratio = one["window"] / r["window"] if threads > 1 else one["window"] / r["model_2t"]
            blocks_wall = r["block"] if threads == 1 else r["makespan"]  # (on two threads: the blocks' rounds)
            other = r["window"] - blocks_wall - r["snapshot"] - r["loglik"]
            print(f"{k:>5} {threads:>2} {r['whole']:>8.2f} {r['window']:>8.2f} {r['block']:>7.2f} "
                  f"{r['snapshot']:>9.2f} {r['loglik']:>6.2f} {other:>6.2f} {r['after_last']:>6.2f} {r['model_2t']:>8.2f} "
                  f"{ratio:>11.2f}{'x' if threads > 1 else 'm'}", flush=True)
    print("window ratio: one thread's window over this run's (x: measured); on the one-thread line, over its "
          "2T model (m)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
