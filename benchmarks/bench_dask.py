"""The collapsed sampler on a Dask LocalCluster against local threads: seconds and bytes per sweep.

Usage::

    python benchmarks/bench_dask.py                       # 20NG, K=100 and 1000, 1/2/4 workers
    python benchmarks/bench_dask.py -k 100 --workers 1,2 --sweeps 5
    python benchmarks/bench_dask.py --client-memory -k 100       # the client with a shard folder

``--client-memory`` starts a ``dask scheduler`` and two ``dask worker`` processes, then runs
``ldacli train --scheduler`` as its own process twice, on the corpus file and on a shard folder
written by ``ldacli convert --shards 16``, and reports each client's peak RSS and wall time
(start-up, reading, sweeps and writing the model included).

Each configuration builds the sampler of ``ldacli train`` (its default shards, sparse sampler),
runs ``--warm-up`` sweeps, then times ``--sweeps`` sweeps. The cluster runs ``W`` worker
processes of one thread each on this machine (loopback), so with more workers than cores the
figures show the protocol's cost, not a speed-up. Reported per sweep: seconds; for the cluster
also the array bytes the client sent (the counts of each shard's words) and received (the tokens
that moved), the tokens moved, and how the time splits between waiting for the shards and the
client's merge. Results are the same bytes as the local threads' (tested in tests/test_dask.py).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import ldacli
from ldacli import seeds
from ldacli.methods.sharded import ShardedSampler, default_shards, shard_bounds

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(HERE, "..", "..", "shared", "corpora"))


def build(corpus, K: int, seed: int = 1, shards: int | None = None):
    """What the sampler of ``ldacli train`` starts from: ``(words, doc_ptr, z, bounds, rngs)``,
    the topics drawn at random from ``seed``; ``shards`` by default as ``train`` cuts them."""
    words, doc_ptr = corpus.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    bounds = shard_bounds(doc_ptr, shards or default_shards(corpus.n_tokens))
    rngs = seeds.generators(seed, bounds.size)
    z = rngs[0].integers(0, K, size=words.size, dtype=np.int32)
    return words, doc_ptr, z, bounds, rngs[1:]


def timed(sampler, warm_up: int, sweeps: int) -> float:
    for _ in range(warm_up):
        sampler.sweep()
    t0 = time.perf_counter()
    for _ in range(sweeps):
        sampler.sweep()
    return (time.perf_counter() - t0) / sweeps


def client_memory(corpus_path: str, K: int, iterations: int) -> None:
    import json
    import subprocess
    import sys
    import tempfile

    def ldacli_cli(*args) -> tuple[float, float]:
        """(peak RSS in MB, wall seconds) of one ldacli process (not of the cluster's)."""
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "ldacli", *map(str, args)], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"ldacli {' '.join(map(str, args))} failed ({proc.returncode})")
        return usage.ru_maxrss / 1024, time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "shards")
        rss, sec = ldacli_cli("convert", corpus_path, "--shards", 16, "-o", folder, "-q")
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"convert --shards 16: {sec:.1f} s, peak RSS {rss:.0f} MB, folder {size / 1e6:.1f} MB")
        scheduler_file = os.path.join(tmp, "scheduler.json")
        procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard", "--scheduler-file", scheduler_file],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            while not (os.path.exists(scheduler_file) and os.path.getsize(scheduler_file)):
                time.sleep(0.1)
            procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                        scheduler_file, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
            with open(scheduler_file) as f:
                address = json.load(f)["address"]
            print(f"{'K':>5} {'client reads':14} {'peak RSS MB':>11} {'wall s':>7}")
            for name, source in (("corpus file", corpus_path), ("shard folder", folder)):
                rss, sec = ldacli_cli("train", source, "-k", K, "--iterations", iterations, "--seed", 1, "--shards", 16,
                                      "--scheduler", address, "-q", "-o", os.path.join(tmp, "m.npz"))
                print(f"{K:5d} {name:14} {rss:11.0f} {sec:7.1f}", flush=True)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()


def main() -> None:
    import distributed

    from ldacli.methods.distributed import DistributedSampler

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("-k", "--topics", action="append", type=int)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--warm-up", type=int, default=3)
    p.add_argument("--sweeps", type=int, default=5)
    p.add_argument("--client-memory", action="store_true", help="The client's peak RSS: corpus file or shard folder.")
    p.add_argument("--iterations", type=int, default=10, help="Sweeps of each --client-memory run.")
    args = p.parse_args()
    if args.client_memory:
        for K in args.topics or [100, 1000]:
            client_memory(args.corpus, K, args.iterations)
        return
    corpus = ldacli.read_corpus(args.corpus)
    corpus, _ = corpus.without_unused_words()
    print(f"{os.path.basename(args.corpus)}: {corpus.n_tokens} tokens, V={corpus.n_words}, "
          f"{default_shards(corpus.n_tokens)} shards; sparse sampler")
    print(f"{'K':>5} {'where':12} {'s/sweep':>8} {'MB sent':>8} {'MB recv':>8} {'moved':>9} {'wait s':>7} {'merge s':>8}")
    for K in args.topics or [100, 1000]:
        for t in (int(x) for x in args.threads.split(",")):
            words, doc_ptr, z, bounds, rngs = build(corpus, K)
            s = ShardedSampler("sparse", words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01, bounds, rngs, t)
            sec = timed(s, args.warm_up, args.sweeps)
            s.close()
            print(f"{K:5d} {f'{t} threads':12} {sec:8.3f}", flush=True)
        for w in (int(x) for x in args.workers.split(",")):
            with distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True, host="127.0.0.1",
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                words, doc_ptr, z, bounds, rngs = build(corpus, K)
                s = DistributedSampler("sparse", words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01,
                                       bounds, rngs, client)
                sec = timed(s, args.warm_up, args.sweeps)
                last = s.traffic[-args.sweeps:]
                mean = {k: float(np.mean([x[k] for x in last])) for k in last[0]}
                print(f"{K:5d} {f'{w} workers':12} {sec:8.3f} {mean['sent'] / 1e6:8.1f} {mean['received'] / 1e6:8.1f} "
                      f"{mean['moved']:9.0f} {mean['sample_seconds']:7.3f} {mean['merge_seconds']:8.3f}", flush=True)
                s.close()


if __name__ == "__main__":
    main()
