"""Evaluation: held-out per-word perplexity by document completion."""

from __future__ import annotations

import math

import numpy as np

from ldacli import __version__
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.infer import DEFAULT_BURN_IN, DEFAULT_ITERATIONS, estimate_theta, make_rng
from ldacli.model import Model

ESTIMATOR = "document-completion"


def completion_split(corpus: Corpus) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split every document's tokens into an observed half and a scored half.

    Tokens are listed in increasing word-id order within each document and alternate: the 1st,
    3rd, 5th... are observed, the 2nd, 4th... are scored. The split depends on nothing but the
    corpus, so every model is scored on the same tokens. Returns the observed tokens as
    ``(words, doc_ptr)`` and the scored ones as ``(docs, words)``.
    """
    words, doc_ptr = corpus.tokens()
    lengths = np.diff(doc_ptr)
    docs = np.repeat(np.arange(corpus.n_docs, dtype=np.int64), lengths)
    position = np.arange(words.size, dtype=np.int64) - doc_ptr[docs]
    scored = position % 2 == 1
    observed_ptr = np.zeros_like(doc_ptr)
    np.cumsum((lengths + 1) // 2, out=observed_ptr[1:])
    return words[~scored], observed_ptr, docs[scored], words[scored]


def perplexity(model: Model, corpus: Corpus, *, iterations: int = DEFAULT_ITERATIONS,
               burn_in: int = DEFAULT_BURN_IN, seed: int | None = None,
               progress: bool = False) -> dict:
    """Held-out perplexity of ``corpus`` under ``model`` by document completion.

    For each document, theta is estimated by Gibbs sampling with the topics fixed from the
    observed half of its tokens (see :func:`completion_split`); each scored token contributes
    ``log sum_k theta_dk phi_kw`` (natural log). Perplexity is ``exp(-log_likelihood / n_tokens)``.
    Words unknown to the model are dropped before the split and counted in ``dropped_tokens``.
    """
    aligned, dropped = corpus.align(model.vocab)
    obs_words, obs_ptr, score_docs, score_words = completion_split(aligned)
    if score_words.size == 0:
        raise LdacliError(
            f"{corpus.source}: expected documents with at least 2 tokens known to the model "
            f"(one observed, one scored), found none"
        )
    rng, entropy = make_rng(seed)
    theta = estimate_theta(model, obs_words, obs_ptr, iterations=iterations, burn_in=burn_in,
                           rng=rng, progress=progress)
    phi_wk = np.ascontiguousarray(model.phi.T)
    loglik = 0.0
    chunk = 65536
    for start in range(0, score_words.size, chunk):
        d = score_docs[start:start + chunk]
        w = score_words[start:start + chunk]
        loglik += float(np.sum(np.log(np.einsum("ik,ik->i", theta[d], phi_wk[w]))))
    n = int(score_words.size)
    return {
        "estimator": ESTIMATOR,
        "log_likelihood": loglik,
        "n_tokens": n,
        "n_docs": int(np.unique(score_docs).size),
        "perplexity": math.exp(-loglik / n) if n else float("nan"),
        "observed_tokens": int(obs_words.size),
        "dropped_tokens": dropped,
        "iterations": iterations,
        "burn_in": burn_in,
        "seed": entropy,
        "ldacli_version": __version__,
    }
