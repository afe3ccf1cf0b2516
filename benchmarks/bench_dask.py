"""The collapsed sampler on a Dask LocalCluster against local threads: seconds and bytes per sweep.

Usage::

    python benchmarks/bench_dask.py                       # 20NG, K=100 and 1000, 1/2/4 workers
    python benchmarks/bench_dask.py -k 100 --workers 1,2 --sweeps 5

Each configuration builds the sampler of ``ldacli train`` (16 shards for 20NG, sparse sampler),
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


def build(corpus, K: int, seed: int = 1):
    words, doc_ptr = corpus.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    bounds = shard_bounds(doc_ptr, default_shards(corpus.n_tokens))
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
    args = p.parse_args()
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
