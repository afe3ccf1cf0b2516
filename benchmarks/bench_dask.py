"""The collapsed sampler on a Dask cluster against local threads: seconds and bytes per sweep,
and what the client costs as the corpus grows.

Usage::

    python benchmarks/bench_dask.py                       # 20NG, K=100: 1/2 threads, 1/2/4 workers
    python benchmarks/bench_dask.py -k 100 -k 1000 --workers 1,2,4 --sweeps 5
    python benchmarks/bench_dask.py --client-scaling --tokens 2e6,2e7,1e8 -k 100   # the client's cost

The default mode builds the sampler of ``ldacli train`` (its default shards, sparse sampler) on
local threads and on a ``LocalCluster`` of W worker processes of one thread each (loopback),
runs ``--warm-up`` sweeps, then times ``--sweeps`` sweeps. Reported per sweep: seconds and their
ratio to two local threads; for the cluster also the array bytes through the client (the K
topic totals down and the change of them up, per worker and round) and between the workers (the
word slices of the counts passed on each round). With more workers than cores the figures show
the protocol's cost, not a speed-up. The results are the same bytes as the threads' (tested in
tests/test_dask.py).

``--client-scaling`` writes a shard folder of a generated corpus (LDA's generative process,
``ldacli.corpora.synthetic.generate``) of each ``--tokens`` size, starts a ``dask scheduler`` and
``--workers`` ``dask worker`` processes, and runs ``ldacli train FOLDER --scheduler ...`` as its
own process for ``--iterations`` A and B sweeps (the smaller a baseline: start-up, placing the
shards, writing the model). Reported: the client's peak RSS (of the longer run) and its CPU
seconds per sweep, ``(cpu(B) - cpu(A)) / (B - A)``; both should stay flat as the corpus grows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import ldacli
from ldacli import random_streams
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.partition import default_shards, shard_bounds, shard_ranges
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHA, BETA = 0.1, 0.01


def build(corpus, K: int, seed: int = 1, shards: int | None = None):
    """A sampler's start: ``(words, doc_ptr, z, bounds, rngs)``, every token on a topic drawn
    at random from ``seed`` (``ldacli train``'s start below 1,000 topics; from 1,000 on, train
    starts each word on 16 topics, ``FirstTopics``, and its word lists stay shorter in the
    first hundred sweeps); ``shards`` by default as ``train`` cuts them (the other benchmarks'
    samplers start here too)."""
    words, doc_ptr = corpus.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    bounds = shard_bounds(doc_ptr, shards or default_shards(corpus.n_tokens))
    rngs = random_streams.generators(seed, bounds.size)
    z = rngs[0].integers(0, K, size=words.size, dtype=np.int32)
    return words, doc_ptr, z, bounds, rngs[1:]


def threads_sampler(corpus, K: int, threads: int, shards: int):
    """``ldacli train``'s sampler on local threads (seed 1)."""
    words, doc_ptr, z, bounds, rngs = build(corpus, K, 1, shards)
    return ThreadsSampler("sparse", words, doc_ptr, z, corpus.n_words, K, np.full(K, ALPHA), BETA, bounds, rngs, threads)


def cluster_sampler(corpus, K: int, client, shards: int):
    """The same sampler on the workers of ``client`` (seed 1): the same first topics and streams."""
    from ldacli.methods.cgs.dask_client import DaskSampler, SyncPoint

    words, doc_ptr = corpus.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    bounds = shard_bounds(doc_ptr, shards)
    rngs = random_streams.generators(1, bounds.size)
    sync = SyncPoint(0, np.full(K, ALPHA), BETA, random_streams.states(rngs[1:]))
    return DaskSampler("sparse", corpus.n_words, K, shard_ranges(bounds, doc_ptr[bounds]),
                       np.bincount(words, minlength=corpus.n_words), client, sync, rngs[0].bit_generator.state,
                       words=words, doc_ptr=doc_ptr)


def timed(sampler, warm_up: int, sweeps: int) -> float:
    for _ in range(warm_up):
        sampler.sweep()
    t0 = time.perf_counter()
    for _ in range(sweeps):
        sampler.sweep()
    return (time.perf_counter() - t0) / sweeps


def speed(args) -> None:
    import distributed

    corpus, _ = ldacli.read_corpus(args.corpus).without_unused_words()
    shards = args.shards or default_shards(corpus.n_tokens)
    print(f"{os.path.basename(args.corpus)}: {corpus.n_tokens} tokens, V={corpus.n_words}, {shards} shards; "
          f"sparse sampler; {args.warm_up} sweeps of warm-up, then {args.sweeps} timed")
    print(f"{'K':>5} {'where':12} {'s/sweep':>8} {'/2 thr':>7} {'client MB':>10} {'between MB':>11}")
    for K in args.topics or [100]:
        on_threads = {}
        for t in sorted(int(x) for x in args.threads.split(",")):
            s = threads_sampler(corpus, K, t, shards)
            on_threads[t] = timed(s, args.warm_up, args.sweeps)
            s.close()
        base = on_threads.get(2, max(on_threads.values()))  # the ratios are to two threads
        for t, sec in on_threads.items():
            print(f"{K:5d} {f'{t} threads':12} {sec:8.3f} {sec / base:7.2f}", flush=True)
        for w in (int(x) for x in args.workers.split(",")):
            with distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True, host="127.0.0.1",
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                s = cluster_sampler(corpus, K, client, shards)
                sec = timed(s, args.warm_up, args.sweeps)
                last = s.traffic[-args.sweeps:]
                through = np.mean([x["client_sent"] + x["client_received"] for x in last]) / 1e6
                between = np.mean([x["between_workers"] for x in last]) / 1e6
                print(f"{K:5d} {f'{w} workers':12} {sec:8.3f} {sec / base:7.2f} {through:10.3f} {between:11.2f}",
                      flush=True)
                s.close()


# Runs ldacli's command line and reports the process's own peak RSS (VmHWM) on stderr: the
# rusage of a child counts the pages it shared with this process, which holds a generated corpus,
# before it became ldacli.
_PEAK = ("import atexit, sys\n"
         "def peak():\n"
         "    status = open('/proc/self/status').read()\n"
         "    print('VmHWM', status.split('VmHWM:')[1].split()[0], file=sys.stderr)\n"
         "atexit.register(peak)\n"
         "from ldacli.cli import main\n"
         "sys.argv[0] = 'ldacli'\n"
         "main()\n")


def ldacli_process(*args) -> tuple[float, float]:
    """(peak RSS in MB, CPU seconds) of one ldacli process (not of the cluster's)."""
    proc = subprocess.Popen([sys.executable, "-c", _PEAK, *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"ldacli {' '.join(map(str, args))} failed ({os.waitstatus_to_exitcode(status)}): {err[-500:]}")
    peak_kb = int(err.rsplit("VmHWM", 1)[1].split()[0])
    return peak_kb / 1024, usage.ru_utime + usage.ru_stime


def client_scaling(args) -> None:
    from ldacli.corpora.synthetic import generate

    a, b = (int(x) for x in args.iterations.split(","))
    sizes = [int(float(x)) for x in args.tokens.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        scheduler_file = os.path.join(tmp, "scheduler.json")
        procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard", "--scheduler-file", scheduler_file],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            while not (os.path.exists(scheduler_file) and os.path.getsize(scheduler_file)):
                time.sleep(0.1)
            procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                        scheduler_file, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                      for _ in range(args.workers_scaling)]
            with open(scheduler_file) as f:
                address = json.load(f)["address"]
            print(f"{args.workers_scaling} dask worker processes; client: ldacli train FOLDER --scheduler "
                  f"{args.train_options}, {a} and {b} sweeps".replace("  ", " "))
            print(f"{'K':>5} {'tokens':>11} {'shards':>6} {'peak RSS MB':>11} {'CPU s/sweep':>11}")
            for n in sizes:
                mean_length = 200
                corpus = generate(max(1, n // mean_length), 50, args.vocabulary, doc_length=(100, 300), seed=1).corpus
                corpus, _ = corpus.without_unused_words()
                folder = os.path.join(tmp, f"shards-{n}")
                shards = max(args.workers_scaling, int(np.ceil(corpus.n_tokens / args.tokens_per_shard)))
                ldacli.write_shards(corpus, folder, shards)
                del corpus
                for K in args.topics or [100]:
                    runs = [ldacli_process("train", folder, "-k", K, "--iterations", it, "--seed", 1, "--scheduler",
                                           address, "-q", "-o", os.path.join(tmp, "m.npz"), *args.train_options.split())
                            for it in (a, b)]
                    per_sweep = (runs[1][1] - runs[0][1]) / (b - a)
                    print(f"{K:5d} {n:11,d} {shards:6d} {runs[1][0]:11.0f} {per_sweep:11.3f}", flush=True)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("-k", "--topics", action="append", type=int)
    p.add_argument("--shards", type=int, help="Shards (default: ldacli train's for the corpus).")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--warm-up", type=int, default=3)
    p.add_argument("--sweeps", type=int, default=5)
    p.add_argument("--client-scaling", action="store_true", help="The client's peak RSS and CPU per sweep.")
    p.add_argument("--tokens", default="2e6,2e7,1e8", help="Corpus sizes of --client-scaling.")
    p.add_argument("--vocabulary", type=int, default=20000, help="Words of --client-scaling's corpora.")
    p.add_argument("--tokens-per-shard", type=int, default=1_000_000)
    p.add_argument("--workers-scaling", type=int, default=2, help="Worker processes of --client-scaling.")
    p.add_argument("--iterations", default="2,6", help="Sweeps of --client-scaling's two runs, A,B.")
    p.add_argument("--train-options", default="", help="More options of --client-scaling's runs, as one string: "
                                                          "'--snapshots 3 --snapshot-interval 1'.")
    args = p.parse_args()
    if args.client_scaling:
        client_scaling(args)
    else:
        speed(args)


if __name__ == "__main__":
    main()
