"""What the first sweeps cost against later ones, and what the start does to held-out perplexity.

Trains on 90% of a corpus (heldout.py's split) with each start, one thread, timing every sweep
(the library's callback), and scores the model with ``ldacli perplexity`` on the other 10%.
The starts: ``restricted`` (each word's tokens on ``START_TOPICS`` random topics, ldacli's
default from ``RESTRICTED_START_FROM`` topics) and ``uniform`` (each token on any topic, the
default below). ``sweep 1`` is the time from the call to the first sweep's end, the sampler's
start-up included (its counts, each shard's slice starts and document lists); ``2-20`` and
its ratio leave that start-up out. Run it on a quiet machine:

    python benchmarks/first_sweeps.py -k 1000 --seeds 1,2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import ldacli
from ldacli.methods.cgs import sampler as first_topics
from heldout import CORPORA, NAMED, score, split


def run(train, held_path: str, k: int, sweeps: int, seed: int, start: str, tmp: str) -> dict:
    first_topics.RESTRICTED_START_FROM = 0 if start == "restricted" else 1 << 62
    times, last = [], [time.perf_counter()]

    def tick(_):
        now = time.perf_counter()
        times.append(now - last[0])
        last[0] = now

    t0 = time.perf_counter()
    model = ldacli.train(train, k, iterations=sweeps, seed=seed, threads=1, sampler="sparse", alpha=0.1,
                         beta=0.01, callback=tick)
    seconds = time.perf_counter() - t0
    path = os.path.join(tmp, f"{start}-{k}-{seed}.npz")
    model.save(path)
    t = np.array(times)
    return {"first": t[:20].mean(), "sweep1": t[0], "next": t[1:20].mean(), "later": t[100:].mean(), "seconds": seconds,
            "perplexity": score(path, held_path, 1)["perplexity"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    ap.add_argument("-k", "--topics", type=int, action="append", help="repeatable; default 1000")
    ap.add_argument("--sweeps", type=int, default=200, help="at least 120 (sweeps 100 on are the later ones)")
    ap.add_argument("--seeds", default="1")
    args = ap.parse_args(argv)
    if args.sweeps < 120:
        ap.error("--sweeps must be at least 120")
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    if not os.path.exists(path):
        print(f"skipping: no corpus at {path}", file=sys.stderr)
        return 0
    train, held = split(ldacli.read_corpus(path), 10)
    print(f"corpus {args.corpus}, 90% trained, {args.sweeps} sweeps, 1 thread, sparse sampler; held-out "
          f"perplexity by `ldacli perplexity` on the other 10%")
    print(f"{'K':>5} {'seed':>4} {'start':<11} {'s/sweep 1-20':>12} {'s/sweep 100+':>12} {'ratio':>6} "
          f"{'sweep 1':>8} {'2-20':>6} {'ratio':>6} {'seconds':>8} {'perplexity':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        held_path = os.path.join(tmp, "held.ldac")
        ldacli.write_corpus(held, held_path, os.path.join(tmp, "held.vocab"))
        for k in args.topics or [1000]:
            for seed in (int(s) for s in args.seeds.split(",")):
                for start in ("uniform", "restricted"):
                    r = run(train, held_path, k, args.sweeps, seed, start, tmp)
                    print(f"{k:>5} {seed:>4} {start:<11} {r['first']:>12.3f} {r['later']:>12.3f} "
                          f"{r['first'] / r['later']:>6.2f} {r['sweep1']:>8.3f} {r['next']:>6.3f} "
                          f"{r['next'] / r['later']:>6.2f} {r['seconds']:>8.1f} {r['perplexity']:>10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
