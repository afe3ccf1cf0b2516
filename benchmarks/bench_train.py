"""Training speed and memory of ldacli against peers installed from PyPI, in one run, as ratios.

Usage::

    python benchmarks/bench_train.py                                  # KOS and 20NG, K=20,100
    python benchmarks/bench_train.py --corpus 20ng -k 100 -k 1000 --threads 1 --threads 2
    python benchmarks/bench_train.py --corpus synth:10M -k 100 --tools ldacli:sparse,tomotopy
    python benchmarks/bench_train.py --scaling                        # cost vs tokens and K

Every measurement runs in its own process (so peak RSS is that tool's alone): the corpus is
loaded, the model built, ``--burn-in`` sweeps run untimed, then ``--sweeps`` sweeps are timed.
Peak RSS is measured from after the corpus is loaded to the end of training. Collapsed Gibbs
tools (ldacli, tomotopy, lda) report training tokens per second over the timed sweeps (``lda`` cannot pause, so its whole fit is timed); variational tools (gensim,
scikit-learn) report tokens per second per pass over the corpus. Peers missing from the
environment are skipped (``pip install tomotopy lda gensim scikit-learn topica``; ``mallet``: a build by
``../shared/tools/build-mallet.sh`` in ``$MALLET_HOME``; topica and MALLET cannot pause a fit, so
their sweeps are timed as the difference of a fit of ``--burn-in`` and one of ``--burn-in`` +
``--sweeps`` sweeps, the same seed, which takes their start-up out). Corpora: ``kos``,
``20ng`` from ``$LDACLI_CORPORA`` or ``../shared/corpora`` beside the repository, ``synth:N``
(N tokens, e.g. ``synth:10M``, from the LDA generative process with K=100 true topics and a
fixed V of 20,000; ``synth:N:L`` with documents of L tokens on average, 200 by default), ``zipf:N`` (text-like: Zipfian word frequencies and a vocabulary growing
with N, 50,000 words at 1M tokens and about 500,000 at 50M; ``ldacli.corpora.synthetic.realistic``), or
a path. Ratios are against ldacli's first configuration for the same corpus, K and threads.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
NAMED = {"kos": "docword.kos.txt.gz", "20ng": "docword.20ng.txt.gz"}
PEERS = ("tomotopy", "lda", "gensim", "sklearn", "topica", "mallet")
# a MALLET build by ../shared/tools/build-mallet.sh
MALLET_HOME = os.environ.get("MALLET_HOME", "/tmp/mallet-build")


def _count(text: str) -> int:
    """``1M``, ``500K`` or ``1000`` as a number."""
    text = text.upper()
    return int(float(text.rstrip("MK")) * (1e6 if text.endswith("M") else 1e3 if text.endswith("K") else 1))


def load(name: str):
    import ldacli
    from ldacli.corpora.synthetic import generate

    if name.startswith("zipf:"):
        from ldacli.corpora.synthetic import realistic

        return realistic(_count(name.split(":")[1]), seed=1).corpus.without_unused_words()[0]
    if name.startswith("synth:"):
        parts = name.split(":")
        mean = int(parts[2]) if len(parts) > 2 else 200  # synth:N:L: L tokens a document (L/2 to 3L/2)
        docs = max(1, _count(parts[1]) // mean)
        return generate(docs, 100, 20_000, doc_length=(max(1, mean // 2), mean * 3 // 2), alpha=0.1, beta=0.01,
                        seed=1).corpus
    return ldacli.read_corpus(os.path.join(CORPORA, NAMED[name]) if name in NAMED else name)


def tomotopy_model(corpus, k: int, alpha: float, beta: float, seed: int = 1):
    """A tomotopy ``LDAModel`` with the corpus's documents added (each token as its word)."""
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=alpha, eta=beta, seed=seed)
    c, vocab = corpus.counts, corpus.vocab
    for d in range(corpus.n_docs):
        lo, hi = c.indptr[d], c.indptr[d + 1]
        doc = [vocab[w] for w, m in zip(c.indices[lo:hi], c.data[lo:hi]) for _ in range(m)]
        if doc:
            model.add_doc(doc)
    return model


def token_lists(corpus) -> list[list[str]]:
    """Each document as its tokens (every word repeated its count times), for peers that take text."""
    c, vocab = corpus.counts, corpus.vocab
    return [[vocab[w] for w, m in zip(c.indices[c.indptr[d]:c.indptr[d + 1]], c.data[c.indptr[d]:c.indptr[d + 1]])
             for _ in range(m)] for d in range(corpus.n_docs)]


def mallet(main_class: str, *args: str) -> subprocess.CompletedProcess:
    classpath = f"{MALLET_HOME}/target/classes:{MALLET_HOME}/target/dependency/*"
    return subprocess.run(["java", "-Xmx8g", "-cp", classpath, main_class, *args], check=True, capture_output=True)


def mallet_import(corpus, path: str) -> str:
    """``corpus`` in MALLET's instance format at ``path`` (each token its word, kept in order and
    case), through a text file beside it; returns ``path``."""
    with open(path + ".txt", "w") as text:
        for d, doc in enumerate(token_lists(corpus)):
            text.write(f"d{d}\tx\t{' '.join(doc)}\n")
    mallet("cc.mallet.classify.tui.Csv2Vectors", "--input", path + ".txt", "--output", path, "--keep-sequence", "true",
           "--preserve-case", "true", "--token-regex", r"\S+", "--line-regex", r"^(\S*)\t(\S*)\t(.*)$")
    return path


def reset_peak_rss() -> None:
    """Start a new peak-RSS measurement (Linux: VmHWM is reset by writing 5 to clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(spec: dict) -> dict:
    """Run one measurement in this process; returns seconds, tokens/s and peak RSS.

    The peak RSS is taken from after the corpus is loaded (it stays in memory, the same for
    every tool) to the end of training, so loading does not hide the trainers' own memory.
    """
    corpus = load(spec["corpus"])
    gc.collect()
    reset_peak_rss()
    tool, k, threads, burn, sweeps = spec["tool"], spec["k"], spec["threads"], spec["burn_in"], spec["sweeps"]
    alpha, beta = spec["alpha"], spec["beta"]
    n = corpus.n_tokens
    if tool.startswith("ldacli"):
        import numpy as np

        from bench_dask import build
        from ldacli.methods.cgs.threads import ThreadsSampler

        kind = tool.split(":")[1]
        words, doc_ptr, z, bounds, rngs = build(corpus, k, seed=1, shards=spec["shards"])
        sampler = ThreadsSampler(kind, words, doc_ptr, z, corpus.n_words, k, np.full(k, alpha), beta, bounds, rngs,
                                 threads)
        for _ in range(burn):
            sampler.sweep()
        t0 = time.perf_counter()
        for _ in range(sweeps):
            sampler.sweep()
        seconds = time.perf_counter() - t0
        sampler.close()
        work = n * sweeps
    elif tool == "tomotopy":
        model = tomotopy_model(corpus, k, alpha, beta)
        model.train(burn, workers=threads) if burn else model.train(0, workers=threads)
        t0 = time.perf_counter()
        model.train(sweeps, workers=threads)
        seconds = time.perf_counter() - t0
        work = n * sweeps
    elif tool == "lda":
        import logging

        import lda
        import numpy as np

        logging.getLogger("lda").setLevel(logging.WARNING)
        model = lda.LDA(n_topics=k, n_iter=burn + sweeps, alpha=alpha, eta=beta, random_state=1, refresh=10)
        t0 = time.perf_counter()
        model.fit(corpus.counts.astype(np.int64))
        seconds = time.perf_counter() - t0
        work = n * (burn + sweeps)
    elif tool == "gensim":
        from gensim.models import LdaModel

        c = corpus.counts
        bow = [list(zip(c.indices[c.indptr[d]:c.indptr[d + 1]].tolist(), c.data[c.indptr[d]:c.indptr[d + 1]].tolist()))
               for d in range(corpus.n_docs)]
        t0 = time.perf_counter()
        LdaModel(bow, num_topics=k, alpha=alpha, eta=beta, passes=sweeps, iterations=50, random_state=1,
                 id2word=dict(enumerate(corpus.vocab)))
        seconds = time.perf_counter() - t0
        work = n * sweeps
    elif tool == "sklearn":
        from sklearn.decomposition import LatentDirichletAllocation

        model = LatentDirichletAllocation(n_components=k, doc_topic_prior=alpha, topic_word_prior=beta,
                                          learning_method="batch", max_iter=sweeps, random_state=1, n_jobs=threads)
        t0 = time.perf_counter()
        model.fit(corpus.counts)
        seconds = time.perf_counter() - t0
        work = n * sweeps
    elif tool.startswith("topica"):  # fit cannot pause: the sweeps' time is that of two fits' difference
        import topica

        docs = topica.Corpus.from_documents(token_lists(corpus))
        sampler = tool.split(":")[1] if ":" in tool else "sparse"

        def fit(iters: int) -> float:
            model = topica.LDA(k, alpha_sum=alpha * k, beta=beta, optimize_interval=0, seed=1, num_threads=threads,
                               sampler=sampler, use_symmetric_alpha=True)
            t0 = time.perf_counter()
            model.fit(docs, iters=iters, num_samples=1, progress=False, keep_theta_draws=False)
            return time.perf_counter() - t0

        seconds = fit(burn + sweeps) - fit(max(burn, 1))
        work = n * (burn + sweeps - max(burn, 1))
    elif tool == "mallet":  # the wall time of a run of burn + sweeps less that of one of burn
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            instances = mallet_import(corpus, os.path.join(tmp, "c.mallet"))

            def fit(iters: int) -> float:
                t0 = time.perf_counter()
                mallet("cc.mallet.topics.tui.TopicTrainer", "--input", instances, "--num-topics", str(k),
                       "--num-iterations", str(iters), "--alpha", str(alpha * k), "--beta", str(beta),
                       "--random-seed", "1", "--num-threads", str(threads), "--optimize-interval", "0",
                       "--show-topics-interval", "0")
                return time.perf_counter() - t0

            seconds = fit(burn + sweeps) - fit(max(burn, 1))
            work = n * (burn + sweeps - max(burn, 1))
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return {"seconds": seconds, "tokens_per_s": work / seconds, "peak_rss_mb": peak, "n_tokens": n}
    else:
        raise SystemExit(f"unknown tool {tool}")
    return {"seconds": seconds, "tokens_per_s": work / seconds, "peak_rss_mb": peak_rss_mb(), "n_tokens": n}


def measure(spec: dict) -> dict | None:
    env = {**os.environ, "OMP_NUM_THREADS": str(spec["threads"]), "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        print(f"  {spec['tool']} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}",
              file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def available(tool: str) -> bool:
    if tool.startswith("ldacli"):
        return True
    if tool == "mallet":
        return os.path.isdir(os.path.join(MALLET_HOME, "target", "classes"))
    try:
        __import__(tool.split(":")[0])
        return True
    except ImportError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", action="append", help="kos, 20ng, synth:N[:L], zipf:N or a path (repeatable)")
    ap.add_argument("-k", "--topics", type=int, action="append", help="K values (repeatable)")
    ap.add_argument("--threads", type=int, action="append", help="thread counts (repeatable; default 1)")
    ap.add_argument("--tools", default="ldacli:sparse,ldacli:dense,ldacli:alias,tomotopy,lda",
                    help="comma-separated: ldacli:SAMPLER, tomotopy, lda, gensim, sklearn")
    ap.add_argument("--burn-in", type=int, default=20, help="untimed sweeps first (Gibbs tools)")
    ap.add_argument("--sweeps", type=int, default=10, help="timed sweeps (passes for VB tools)")
    ap.add_argument("--shards", type=int, default=None, help="ldacli shards (default: its own default)")
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--scaling", action="store_true",
                    help="ldacli's sparse sampler on zipf:1M/10M/50M at K=100 and 20NG at K=20..5000")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.scaling:
        plan = [(c, 100) for c in ("zipf:1M", "zipf:10M", "zipf:50M")] + [("20ng", k) for k in (20, 100, 1000, 5000)]
        tools = ["ldacli:sparse", "ldacli:alias"]
    else:
        plan = [(c, k) for c in (args.corpus or ["kos", "20ng"]) for k in (args.topics or [20, 100])]
        tools = [t for t in args.tools.split(",") if t]
    skipped = [t for t in tools if not available(t)]
    for t in skipped:
        print(f"skipping {t}: not installed", file=sys.stderr)
    tools = [t for t in tools if t not in skipped]
    if any(c in NAMED for c, _ in plan) and not os.path.isdir(CORPORA):
        print(f"skipping: no corpora folder at {CORPORA}", file=sys.stderr)
        return 0

    print(f"{'corpus':<10} {'K':>5} {'thr':>3} {'tool':<15} {'s/sweep':>8} {'Mtok/s':>8} {'ratio':>6} {'peak MB':>8}")
    for corpus, k in plan:
        for threads in args.threads or [1]:
            base = None
            for tool in tools:
                if tool == "lda" and threads > 1:
                    continue  # single-threaded only
                spec = dict(corpus=corpus, tool=tool, k=k, threads=threads, burn_in=args.burn_in,
                            sweeps=args.sweeps, shards=args.shards, alpha=args.alpha, beta=args.beta)
                r = measure(spec)
                if r is None:
                    continue
                base = base or r["tokens_per_s"]
                label = os.path.basename(corpus) if os.path.sep in corpus else corpus
                print(f"{label:<10} {k:>5} {threads:>3} {tool:<15} {r['n_tokens'] / r['tokens_per_s']:>8.3f} "
                      f"{r['tokens_per_s'] / 1e6:>8.2f} {r['tokens_per_s'] / base:>6.2f} {r['peak_rss_mb']:>8.0f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
