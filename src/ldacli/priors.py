"""Learning the Dirichlet priors from the sampler's counts: Minka's fixed point on histograms.

Given a collapsed Gibbs sampler's counts, the priors that maximise the Dirichlet-multinomial
evidence ``p(z | alpha)`` and ``p(w | z, beta)`` are found by Minka's (2000) fixed-point
iteration. Each step needs sums like ``sum_d [psi(n_dk + a_k) - psi(a_k)]`` over all
documents; as in Wallach's thesis (2008, ch. 2), they are taken over a *histogram* of the
counts instead -- how many documents have ``n_dk = n`` for each ``n`` -- built once per call
with ``np.bincount``, so each fixed-point step costs O(number of distinct count values) instead
of O(D) or O(V K). Pure functions, no state, no randomness: the same counts and starting
values always give the same result, which is what an exactly resumable run needs.

The trainer calls them every ``optimize_interval`` sweeps after ``optimize_burn_in``::

    alpha = optimize_alpha(state.ndk, doc_lengths, alpha)
    beta = optimize_beta(state.nwk, state.nk, beta)
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

from ldacli import checks
from ldacli.errors import LdacliError

__all__ = ["optimize_alpha", "optimize_beta", "count_histograms"]

DEFAULT_ITERATIONS = 200
DEFAULT_TOL = 1e-6
# Smallest value a learned prior may take: a topic no document uses would otherwise be driven
# to alpha_k = 0, outside the parameter space (tomotopy and MALLET floor or regularise too).
MIN_VALUE = 1e-5


def count_histograms(counts: np.ndarray) -> np.ndarray:
    """Per-column histograms of a non-negative integer matrix.

    ``counts`` (R, C) integer; returns ``hist`` (C, M+1) int64 with ``M = counts.max()`` and
    ``hist[c, n]`` the number of rows r with ``counts[r, c] == n``. One ``np.bincount``.
    """
    counts = np.asarray(counts)
    R, C = counts.shape
    M = int(counts.max()) if counts.size else 0
    keys = np.arange(C, dtype=np.int64) * (M + 1) + counts.astype(np.int64, copy=False)
    return np.bincount(keys.ravel(), minlength=C * (M + 1)).reshape(C, M + 1)


def _digamma_sums(hist: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``sum_n hist[c, n] * (psi(n + a_c) - psi(a_c))`` for every row c of ``hist`` (C, M+1).

    Only the non-zero entries with n >= 1 are visited (the n = 0 term is zero).
    """
    rows, ns = np.nonzero(hist[:, 1:])
    ns = ns + 1
    terms = hist[rows, ns] * (digamma(ns + a[rows]) - digamma(a[rows]))
    return np.bincount(rows, weights=terms, minlength=hist.shape[0])


def optimize_alpha(ndk: np.ndarray, doc_lengths: np.ndarray, alpha: np.ndarray, *,
                   iterations: int = DEFAULT_ITERATIONS, tol: float = DEFAULT_TOL,
                   min_value: float = MIN_VALUE) -> np.ndarray:
    """The asymmetric document-topic prior that maximises ``p(z | alpha)``, from ``alpha``.

    ``ndk`` (D, K) integer (int32 in the trainer) document-topic counts; ``doc_lengths`` (D,)
    integer, the row sums of ``ndk``; ``alpha`` (K,) float, the current prior (the starting
    point). Returns a new (K,) float64 array; nothing is mutated.

    Minka's fixed point for a Dirichlet-multinomial, iterated until no component changes by
    more than ``tol`` relatively or ``iterations`` steps were taken::

        alpha_k <- alpha_k * sum_d [psi(n_dk + alpha_k) - psi(alpha_k)]
                           / sum_d [psi(N_d + sum(alpha)) - psi(sum(alpha))]

    with both sums over histograms of ``n_dk`` per topic and of ``N_d`` (Wallach 2008), so a
    step costs O(distinct counts), not O(D K); building the histograms reads ``ndk`` once and
    holds a K x (max n_dk + 1) table. Each step never decreases ``p(z | alpha)`` (Minka 2000).
    Empty documents carry no information and are ignored. Values are floored at
    ``min_value`` so that a topic no document uses keeps a positive prior.
    """
    checks.count("iterations", iterations, 1)
    checks.non_negative("tol", tol)
    ndk = np.asarray(ndk)
    lengths = np.asarray(doc_lengths, dtype=np.int64).reshape(1, -1)
    a = np.array(alpha, dtype=np.float64)
    if ndk.ndim != 2 or a.shape != (ndk.shape[1],) or lengths.shape[1] != ndk.shape[0]:
        raise LdacliError(f"expected ndk (D, K), doc_lengths (D,) and alpha (K,), found shapes "
                         f"{ndk.shape}, {np.shape(doc_lengths)} and {np.shape(alpha)}")
    topic_hist = count_histograms(ndk)  # (K, max n_dk + 1)
    length_hist = count_histograms(lengths.T)  # (1, max N_d + 1)
    if length_hist.shape[1] <= 1:  # no tokens at all: nothing to learn from
        return a
    for _ in range(iterations):
        numerator = _digamma_sums(topic_hist, a)
        denominator = _digamma_sums(length_hist, np.array([a.sum()]))[0]
        new = np.maximum(a * numerator / denominator, min_value)
        done = np.all(np.abs(new - a) <= tol * a)
        a = new
        if done:
            break
    return a


def optimize_beta(nwk: np.ndarray, nk: np.ndarray, beta: float, *,
                  iterations: int = DEFAULT_ITERATIONS, tol: float = DEFAULT_TOL,
                  min_value: float = MIN_VALUE, n_words: int | None = None) -> float:
    """The symmetric topic-word prior that maximises ``p(w | z, beta)``, from ``beta``.

    ``nwk`` (V, K) integer (int32, word-major in the trainer) word-topic counts; ``nk`` (K,)
    integer, its column sums; ``beta`` the current per-word prior. V is ``nwk.shape[0]``, the
    whole vocabulary (words with no tokens count: they pull beta down). Returns a float.
    Zero counts add nothing to the sums, so ``nwk`` may also be the (M,) array of the non-zero
    counts alone, with ``n_words`` = V given (the sparse samplers' form).

    Minka's fixed point for a symmetric Dirichlet, each topic being one draw::

        beta <- beta * sum_{k,w} [psi(n_kw + beta) - psi(beta)]
                     / (V * sum_k [psi(n_k + V beta) - psi(V beta)])

    with the numerator over the histogram of all ``n_kw`` values and the denominator over the
    K totals, so a step costs O(distinct counts + K). Stops as :func:`optimize_alpha` does;
    never below ``min_value``.
    """
    checks.count("iterations", iterations, 1)
    checks.non_negative("tol", tol)
    nwk = np.asarray(nwk)
    nk = np.asarray(nk, dtype=np.int64)
    if n_words is None and (nwk.ndim != 2 or nk.shape != (nwk.shape[1],)):
        raise LdacliError(f"expected nwk (V, K) and nk (K,), found shapes {nwk.shape} and {nk.shape}")
    V = nwk.shape[0] if n_words is None else int(n_words)
    word_hist = count_histograms(nwk.reshape(-1, 1))  # (1, max n_kw + 1)
    totals = nk[nk > 0]
    b = float(beta)
    if totals.size == 0:
        return b
    for _ in range(iterations):
        numerator = _digamma_sums(word_hist, np.array([b]))[0]
        denominator = V * float(np.sum(digamma(totals + V * b) - digamma(V * b)))
        new = max(b * numerator / denominator, min_value)
        done = abs(new - b) <= tol * b
        b = new
        if done:
            break
    return b
