"""Held-out perplexity against training time: ldacli's three methods and two peers, one run.

Usage::

    python benchmarks/methods.py                    # 20NG, K=50
    python benchmarks/methods.py --corpus kos -k 20 --skip gensim

Every 10th document is held out; the other 90% train

* ``cgs``   -- ldacli collapsed Gibbs (``ldacli.train``, one thread), alpha 0.1, beta 0.01;
* ``vem``   -- ldacli variational EM (``ldacli.train(method="vem")``, default settings), ``--threads``;
* ``gibbs`` -- ldacli uncollapsed Gibbs (``ldacli.train(method="gibbs")``), ``--threads``, same priors as cgs;
* ``sklearn`` -- scikit-learn's ``LatentDirichletAllocation(learning_method="batch")`` with its
  defaults (priors 1/K, 10 passes), ``n_jobs=--threads``;
* ``gensim`` -- gensim's ``LdaModel`` (online VB, ``--gensim-passes`` passes, priors 1/K).

Training time is the wall time of the fit call alone (the corpus is already in memory). Every
model's topic-word matrix (and its alpha) is then written into an ldacli model file and scored
by the same command, ``ldacli perplexity`` (document completion, same seed). For vem and cgs
the run is also scored at intermediate points, by resuming from checkpoints (a resumed run is
identical to an uninterrupted one), which gives perplexity against time. Missing peers are
skipped (``pip install scikit-learn gensim``); the corpora folder is ``$LDACLI_CORPORA`` or
``../shared/corpora`` beside the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

import ldacli

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from heldout import CORPORA, NAMED, score, split  # noqa: E402


def foreign_model(phi, alpha, beta, train, method: str) -> ldacli.Model:
    phi = np.asarray(phi, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    K = phi.shape[0]
    return ldacli.Model(phi=phi, theta=np.zeros((0, K)), alpha=np.broadcast_to(alpha, (K,)).astype(np.float64),
                        beta=float(beta), vocab=train.vocab, doc_ids=[], loglik_iterations=np.zeros(0, np.int64),
                        loglik_per_token=np.zeros(0), params={"method": method})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    ap.add_argument("-k", "--topics", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cgs-sweeps", type=int, default=200)
    ap.add_argument("--gibbs-sweeps", type=int, default=200)
    ap.add_argument("--vem-points", default="5,10,20,100",
                    help="EM iteration counts at which vem is scored (the last is the cap; EM may stop earlier)")
    ap.add_argument("--cgs-points", default="50,100,200")
    ap.add_argument("--sklearn-passes", type=int, default=10)
    ap.add_argument("--gensim-passes", type=int, default=5)
    ap.add_argument("--skip", default="", help="comma-separated methods to skip")
    ap.add_argument("--holdout-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", dest="json_out", default=None, help="also write the results here")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    if not os.path.exists(path):
        print(f"skipping: no corpus at {path}", file=sys.stderr)
        return 0
    corpus = ldacli.read_corpus(path)
    train, held = split(corpus, args.holdout_every)
    K = args.topics
    rows = []  # (method, settings, seconds, perplexity)

    with tempfile.TemporaryDirectory() as tmp:
        f = lambda name: os.path.join(tmp, name)  # noqa: E731
        ldacli.write_corpus(held, f("held.ldac"), f("held.vocab"))

        def record(method, settings, seconds, model):
            model.save(f("m.npz"))
            s = score(f("m.npz"), f("held.ldac"), args.seed)
            rows.append({"method": method, "settings": settings, "seconds": seconds,
                         "perplexity": s["perplexity"], "tokens_scored": s["n_tokens"]})
            print(f"{method:<8} {settings:<44} {seconds:>8.1f} s  perplexity {s['perplexity']:8.1f}", flush=True)

        if "vem" not in skip:
            elapsed, ckpt = 0.0, f("vem.ckpt.npz")
            done = 0
            for point in (int(p) for p in args.vem_points.split(",")):
                t0 = time.perf_counter()
                if done == 0:
                    m = ldacli.train(train, K, method="vem", iterations=point, seed=args.seed, threads=args.threads, checkpoint=ckpt)
                else:
                    m = ldacli.train(train, iterations=point, resume=ckpt, threads=args.threads, checkpoint=ckpt)
                elapsed += time.perf_counter() - t0
                if m.params["iterations_done"] == done:
                    break
                done = m.params["iterations_done"]
                conv = ", converged" if m.params["converged"] else ""
                record("vem", f"{done} EM iterations{conv}, {args.threads} threads", elapsed, m)

        if "cgs" not in skip:
            elapsed, ckpt = 0.0, f("cgs.ckpt.npz")
            done = 0
            for point in (int(p) for p in args.cgs_points.split(",")):
                t0 = time.perf_counter()
                if done == 0:
                    m = ldacli.train(train, K, iterations=point, alpha=0.1, beta=0.01, seed=args.seed, checkpoint=ckpt)
                else:
                    m = ldacli.train(train, iterations=point, resume=ckpt, checkpoint=ckpt)
                elapsed += time.perf_counter() - t0
                done = point
                record("cgs", f"{point} sweeps, 1 thread", elapsed, m)

        if "gibbs" not in skip:
            t0 = time.perf_counter()
            m = ldacli.train(train, K, method="gibbs", iterations=args.gibbs_sweeps, alpha=0.1, beta=0.01,
                                   seed=args.seed, threads=args.threads)
            record("gibbs", f"{args.gibbs_sweeps} sweeps (burn-in {m.params['burn_in']}), {args.threads} threads",
                   time.perf_counter() - t0, m)

        if "sklearn" not in skip:
            try:
                from sklearn.decomposition import LatentDirichletAllocation
            except ImportError:
                print("skipping sklearn: not installed (pip install scikit-learn)", file=sys.stderr)
            else:
                lda = LatentDirichletAllocation(n_components=K, learning_method="batch", max_iter=args.sklearn_passes,
                                                random_state=args.seed, n_jobs=args.threads)
                t0 = time.perf_counter()
                lda.fit(train.counts.astype(np.float64))
                seconds = time.perf_counter() - t0
                record("sklearn", f"batch VB, {args.sklearn_passes} passes, n_jobs={args.threads}", seconds,
                       foreign_model(lda.components_, lda.doc_topic_prior_, lda.topic_word_prior_, train, "sklearn batch VB"))

        if "gensim" not in skip:
            try:
                from gensim.models import LdaModel
            except ImportError:
                print("skipping gensim: not installed (pip install gensim)", file=sys.stderr)
            else:
                c = train.counts
                bow = [list(zip(c.indices[c.indptr[d]:c.indptr[d + 1]].tolist(), c.data[c.indptr[d]:c.indptr[d + 1]].tolist()))
                       for d in range(train.n_docs)]
                t0 = time.perf_counter()
                g = LdaModel(corpus=bow, num_topics=K, id2word={i: w for i, w in enumerate(train.vocab)},
                             passes=args.gensim_passes, random_state=args.seed, eval_every=None)
                seconds = time.perf_counter() - t0
                record("gensim", f"online VB, {args.gensim_passes} passes, 1 thread", seconds,
                       foreign_model(g.get_topics(), g.alpha, float(np.mean(g.eta)), train, "gensim LdaModel"))

    print()
    print(f"corpus {args.corpus}: {train.n_docs} training documents ({train.n_tokens} tokens), {held.n_docs} held out; K={K}")
    print(f"held-out perplexity by `ldacli perplexity` (document completion, seed {args.seed}, "
          f"{rows[0]['tokens_scored'] if rows else 0} tokens scored); training wall time")
    print()
    print("| method | settings | train s | perplexity |")
    print("|---|---|---:|---:|")
    for r in rows:
        print(f"| {r['method']} | {r['settings']} | {r['seconds']:.0f} | {r['perplexity']:.0f} |")
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({"corpus": args.corpus, "topics": K, "rows": rows}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
