"""What ``--scheduler local:N`` pays for being its owner's alone: mutual TLS with credentials
made at start (a fresh RSA key and certificate) and no HTTP servers, against Dask's plain
``LocalCluster`` over TCP as ldacli started it before (HTTP pages on, loopback).

Usage::

    python benchmarks/local_cluster.py                         # local:2, 5 starts each, KOS K=50
    python benchmarks/local_cluster.py --workers 1,2 --repeats 7 --sweeps 20 -k 100

For each N of ``--workers``, alternately (so that a machine's load falls on both alike): start
the cluster, run one task on every worker (a cluster ready to work), close it; the start is
timed to the end of the task. Then one ``ldacli train`` of ``--sweeps`` sweeps on KOS (the shards
of train's default) on each kind of cluster, so that the cost of encrypting what moves between
the workers each round shows too. Prints medians, the ratio secure / plain, and the difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import ldacli
from ldacli.cluster.connection import connect, quiet_dask
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))


def plain(n: int):
    """Dask's LocalCluster as ldacli started it before: TCP, loopback, HTTP pages on."""
    import distributed

    cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=50)
    return distributed.Client(cluster, direct_to_workers=True)


def secure(n: int):
    """What --scheduler local:N starts now."""
    return connect(f"local:{n}")


KINDS = {"plain (TCP, HTTP)": plain, "own (TLS, no HTTP)": secure}


def close(client) -> None:
    cluster = client.cluster
    client.close()
    cluster.close()


def start_seconds(make, n: int) -> float:
    t0 = time.perf_counter()
    client = make(n)
    client.run(os.getpid)  # every worker answers
    seconds = time.perf_counter() - t0
    close(client)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="2", help="numbers of workers, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sweeps", type=int, default=10, help="sweeps of the training run (0: none)")
    parser.add_argument("-k", "--topics", type=int, default=50)
    args = parser.parse_args()
    corpus = None
    if args.sweeps:
        corpus = ldacli.read_corpus(os.path.join(CORPORA, "docword.kos.txt.gz"))
    print(f"{'workers':>7} {'cluster':20} {'start s (median)':>16} {'min':>6} {'max':>6} "
          f"{'train s':>8} {'s/sweep':>8}")
    with quiet_dask():
        for n in (int(w) for w in args.workers.split(",")):
            times = {kind: [] for kind in KINDS}
            for _ in range(args.repeats):
                for kind, make in KINDS.items():
                    times[kind].append(start_seconds(make, n))
            trained = {}
            for kind, make in KINDS.items():
                if corpus is None:
                    trained[kind] = float("nan")
                    continue
                client = make(n)
                t0 = time.perf_counter()
                ldacli.train(corpus, args.topics, iterations=args.sweeps, seed=1, scheduler=client)
                trained[kind] = time.perf_counter() - t0
                close(client)
            for kind, t in times.items():
                print(f"{n:7d} {kind:20} {statistics.median(t):16.2f} {min(t):6.2f} {max(t):6.2f} "
                      f"{trained[kind]:8.2f} {trained[kind] / max(args.sweeps, 1):8.3f}", flush=True)
            a, b = (statistics.median(times[k]) for k in KINDS)
            print(f"{n:7d} {'own / plain':20} {b / a:16.2f}x (+{b - a:.2f} s)"
                  + (f"{'':16} {trained[list(KINDS)[1]] / trained[list(KINDS)[0]]:8.2f}x" if corpus else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
