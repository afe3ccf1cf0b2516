"""Training speed of ldacli against peers installed from PyPI, in one run, as ratios.

Usage::

    python benchmarks/bench_train.py                       # KOS and 20NG from ../shared/corpora
    python benchmarks/bench_train.py --corpus kos -k 20 -k 100 --iterations 50
    python benchmarks/bench_train.py --corpus path/to/docword.x.txt.gz --peers lda

Peers (each skipped when not installed): ``lda`` (pip install lda), ``tomotopy``
(pip install tomotopy). All run single-threaded with the same alpha (per topic), beta, K and
number of sweeps. Reported: wall seconds of the fit (corpus already in memory, model set-up
included), training tokens per second, and each peer's rate relative to ldacli's.
The corpora folder is ``$LDACLI_CORPORA`` or ``../shared/corpora`` beside the repository.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import ldacli

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(HERE, "..", "..", "shared", "corpora"))
NAMED = {"kos": "docword.kos.txt.gz", "20ng": "docword.20ng.txt.gz"}


def load(name: str) -> ldacli.Corpus:
    path = os.path.join(CORPORA, NAMED[name]) if name in NAMED else name
    return ldacli.read_corpus(path)


def run_ldacli(corpus, k, iterations, alpha, beta):
    t0 = time.perf_counter()
    ldacli.train(corpus, k, iterations=iterations, alpha=alpha, beta=beta, seed=1, loglik_every=10)
    return time.perf_counter() - t0


def run_lda(corpus, k, iterations, alpha, beta):
    import logging

    import lda

    logging.getLogger("lda").setLevel(logging.WARNING)
    logging.getLogger("ldacli").setLevel(logging.WARNING)
    model = lda.LDA(n_topics=k, n_iter=iterations, alpha=alpha, eta=beta, random_state=1, refresh=10)
    t0 = time.perf_counter()
    model.fit(corpus.counts.tocsr().astype(np.int64))
    return time.perf_counter() - t0


def run_tomotopy(corpus, k, iterations, alpha, beta):
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=alpha, eta=beta, seed=1)
    c = corpus.counts
    vocab = corpus.vocab
    for d in range(corpus.n_docs):
        lo, hi = c.indptr[d], c.indptr[d + 1]
        words = [vocab[w] for w, n in zip(c.indices[lo:hi], c.data[lo:hi]) for _ in range(n)]
        if words:
            model.add_doc(words)
    model.train(0, workers=1)  # build the model outside the timed sweeps
    t1 = time.perf_counter()
    model.train(iterations, workers=1)
    return time.perf_counter() - t1


PEERS = {"lda": run_lda, "tomotopy": run_tomotopy}


def available(name: str) -> bool:
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", help="kos, 20ng or a corpus path (repeatable)")
    ap.add_argument("-k", "--topics", type=int, action="append", help="K values (repeatable)")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--peers", default="lda,tomotopy", help="comma-separated peers to compare")
    args = ap.parse_args(argv)
    corpora = args.corpus or ["kos", "20ng"]
    ks = args.topics or [20, 100]
    peers = [p for p in args.peers.split(",") if p]
    for p in peers:
        if not available(p):
            print(f"skipping {p}: not installed (pip install {p})", file=sys.stderr)
    peers = [p for p in peers if available(p)]
    if any(c in NAMED for c in corpora) and not os.path.isdir(CORPORA):
        print(f"skipping: no corpora folder at {CORPORA}", file=sys.stderr)
        return 0

    print(f"{'corpus':<10} {'K':>5} {'tool':<10} {'seconds':>8} {'Mtok/s':>8} {'vs ldacli':>9}")
    for name in corpora:
        corpus = load(name)
        label = name if name in NAMED else os.path.basename(name)
        n = corpus.n_tokens * args.iterations
        for k in ks:
            ours = run_ldacli(corpus, k, args.iterations, args.alpha, args.beta)
            print(f"{label:<10} {k:>5} {'ldacli':<10} {ours:>8.2f} {n / ours / 1e6:>8.2f} {1.0:>9.2f}", flush=True)
            for p in peers:
                secs = PEERS[p](corpus, k, args.iterations, args.alpha, args.beta)
                print(f"{label:<10} {k:>5} {p:<10} {secs:>8.2f} {n / secs / 1e6:>8.2f} {ours / secs:>9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
