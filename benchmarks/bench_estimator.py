"""ldacli.LatentDirichletAllocation against scikit-learn's LatentDirichletAllocation on the same
pipeline: wall time and held-out perplexity by one common evaluator, and scikit-learn's own score.

Usage::

    python benchmarks/bench_estimator.py                       # 20NG, K=50
    python benchmarks/bench_estimator.py --max-docs 2000 -k 10 --sweeps 20 --passes 2   # a quick check

The matrix: 20 Newsgroups as the shared corpora hold it, UCI bag-of-words counts (scikit-learn's
``fetch_20newsgroups`` downloads, and this machine is offline), every 10th document held out.
It is what ``CountVectorizer`` gives in a pipeline: documents x words, whole-number counts. Both
estimators are fitted on the same ``scipy.sparse`` matrix (timed: ``fit`` only):

* ldacli: ``ldacli.LatentDirichletAllocation(K, max_iter=SWEEPS, n_jobs=THREADS, random_state=1)``
  (collapsed Gibbs sampling, alpha 0.1, beta 0.01);
* scikit-learn: ``LatentDirichletAllocation(K, learning_method="batch", max_iter=PASSES,
  n_jobs=THREADS, random_state=1)`` (its defaults otherwise: priors 1/K).

Both models are then scored on the held-out documents by the same evaluator, ``ldacli
perplexity`` (document completion, seed 1), scikit-learn's as a model of phi = its normalised
``components_`` and alpha = its ``doc_topic_prior_``; and by scikit-learn's own ``score`` and
``perplexity`` (its variational bound), ldacli's by giving a scikit-learn estimator its topics as
pseudo-counts (phi_kw times the tokens of the topic), which is how that bound reads them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from scipy.special import psi

HERE = os.path.dirname(os.path.abspath(__file__))

import ldacli  # noqa: E402
from ldacli.model import Model  # noqa: E402
from places import CORPORA  # noqa: E402



def as_model(phi: np.ndarray, alpha: np.ndarray, vocab: list[str]) -> Model:
    """scikit-learn's topics as an ldacli model, for ``ldacli.perplexity``."""
    K = phi.shape[0]
    return Model(phi=phi, theta=np.zeros((0, K)), alpha=alpha, beta=0.0, vocab=vocab, doc_ids=[],
                 loglik_iterations=np.zeros(0, np.int64), loglik_per_token=np.zeros(0))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("-k", "--topics", type=int, default=50)
    p.add_argument("--sweeps", type=int, default=200, help="ldacli's max_iter (Gibbs sweeps)")
    p.add_argument("--passes", type=int, default=10, help="scikit-learn's max_iter (batch EM passes)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-docs", type=int, default=None)
    args = p.parse_args()
    from sklearn.decomposition import LatentDirichletAllocation as SklearnLDA

    corpus = ldacli.read_corpus(args.corpus)
    X = corpus.counts.tocsr()
    if args.max_docs:
        X = X[:args.max_docs]
    held = np.arange(X.shape[0]) % 10 == 9
    X_train, X_test = X[~held], X[held]
    # both are scored on the same tokens: those of words the training documents have
    seen = np.asarray(X_train.sum(axis=0)).ravel() > 0
    X_test = X_test.multiply(seen[None, :]).tocsr()
    X_test.eliminate_zeros()
    print(f"{X_train.shape[0]} training documents, {X_test.shape[0]} held out, {X.shape[1]} words, K={args.topics}, "
          f"{args.threads} threads")

    ours = ldacli.LatentDirichletAllocation(args.topics, max_iter=args.sweeps, n_jobs=args.threads, random_state=1)
    t0 = time.perf_counter()
    ours.fit(X_train)
    ours_s = time.perf_counter() - t0
    theirs = SklearnLDA(args.topics, learning_method="batch", max_iter=args.passes, n_jobs=args.threads,
                        random_state=1)
    t0 = time.perf_counter()
    theirs.fit(X_train)
    theirs_s = time.perf_counter() - t0

    vocab = [str(j) for j in range(X.shape[1])]  # the estimator's words when X has no column names
    phi = theirs.components_ / theirs.components_.sum(axis=1, keepdims=True)
    theirs_model = as_model(phi, np.full(args.topics, theirs.doc_topic_prior_), vocab)
    test = ldacli.Corpus.from_matrix(X_test)
    common = {name: ldacli.perplexity(m, test, seed=1)["perplexity"]
              for name, m in (("ldacli", ours.model_), ("scikit-learn", theirs_model))}
    # scikit-learn's bound of ldacli's topics, as pseudo-counts
    as_sklearn = SklearnLDA(args.topics, learning_method="batch", doc_topic_prior=float(np.mean(ours.model_.alpha)),
                            topic_word_prior=float(ours.model_.beta), random_state=1)
    tokens = ours.model_.theta.T @ np.asarray(X_train.sum(axis=1)).ravel()
    as_sklearn.components_ = ours.components_ * tokens[:, None] + ours.model_.beta
    as_sklearn.exp_dirichlet_component_ = np.exp(psi(as_sklearn.components_)
                                                 - psi(as_sklearn.components_.sum(axis=1))[:, None])
    as_sklearn.doc_topic_prior_ = as_sklearn.doc_topic_prior
    as_sklearn.topic_word_prior_ = as_sklearn.topic_word_prior
    as_sklearn.n_features_in_ = X.shape[1]
    as_sklearn.n_batch_iter_ = 1
    as_sklearn.bound_ = None
    own = {"ldacli": (as_sklearn.score(X_test), as_sklearn.perplexity(X_test)),
           "scikit-learn": (theirs.score(X_test), theirs.perplexity(X_test))}
    print(f"{'estimator':>13} {'fit s':>8} {'perplexity (ldacli completion)':>31} {'sklearn score':>14} "
          f"{'sklearn perplexity':>19}")
    for name, seconds in (("ldacli", ours_s), ("scikit-learn", theirs_s)):
        print(f"{name:>13} {seconds:8.1f} {common[name]:31.1f} {own[name][0]:14.4g} {own[name][1]:19.1f}")
    print(f"time scikit-learn / ldacli: {theirs_s / ours_s:.2f}; common perplexity scikit-learn / ldacli: "
          f"{common['scikit-learn'] / common['ldacli']:.3f}")
    print(f"(ldacli's own score, completion log-likelihood of the held-out documents: {ours.score(X_test):.6g})")


if __name__ == "__main__":
    main()
