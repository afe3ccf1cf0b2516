"""Learning the Dirichlet priors from the sampler's counts: Minka's fixed point on histograms.

Given a collapsed Gibbs sampler's counts, the priors that maximise the Dirichlet-multinomial
evidence ``p(z | alpha)`` and ``p(w | z, beta)`` are found by Minka's (2000) fixed-point
iteration. Each step needs sums like ``sum_d [psi(n_dk + a_k) - psi(a_k)]`` over all
documents; as in Wallach's thesis (2008, ch. 2), they are taken over a *histogram* of the
counts instead -- how many documents have ``n_dk = n`` for each ``n`` -- built once per call
(:func:`~ldacli.corpora.counts.histogram`), so each fixed-point step costs O(number of distinct count
values) instead of O(D) or O(V K). Histograms of parts of the counts add up exactly, so a
cluster's workers send theirs (:func:`alpha_from_histograms`, :func:`beta_from_histogram`). Pure functions, no state, no randomness: the same counts and starting
values always give the same result, which is what an exactly resumable run needs.

The trainer calls them every ``optimize_interval`` sweeps after ``optimize_burn_in``::

    alpha = optimize_alpha(state.ndk, doc_lengths, alpha)
    beta = optimize_beta(state.nwk, state.nk, beta)
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

from ldacli import checks
from ldacli.corpora.counts import histogram
from ldacli.errors import LdacliError

__all__ = ["optimize_alpha", "optimize_beta", "alpha_from_histograms", "alpha_of_topic", "beta_from_histogram"]

DEFAULT_ITERATIONS = 200
DEFAULT_TOL = 1e-6
# Smallest value a learned prior may take: a topic no document uses would otherwise be driven
# to alpha_k = 0, outside the parameter space (tomotopy and MALLET floor or regularise too).
MIN_VALUE = 1e-5


def _digamma_sums(hist: tuple[np.ndarray, np.ndarray, np.ndarray], a: np.ndarray) -> np.ndarray:
    """``sum_n times * (psi(n + a_c) - psi(a_c))`` for every column c of ``hist``
    (:func:`~ldacli.corpora.counts.histogram`: non-zero values only, so the n = 0 term is left out)."""
    columns, values, times = hist
    terms = times * (digamma(values + a[columns]) - digamma(a[columns]))
    return np.bincount(columns, weights=terms, minlength=a.size)


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
    return alpha_from_histograms(histogram(ndk), histogram(lengths.T), a, iterations=iterations, tol=tol,
                                 min_value=min_value)


def alpha_from_histograms(topic_hist, length_hist, alpha: np.ndarray, *, iterations: int = DEFAULT_ITERATIONS,
                          tol: float = DEFAULT_TOL, min_value: float = MIN_VALUE) -> np.ndarray:
    """:func:`optimize_alpha` from the histograms of the counts (:func:`~ldacli.corpora.counts.histogram`):
    ``topic_hist`` of the (D, K) document-topic counts, ``length_hist`` of the (D, 1) document
    lengths; the histograms of the shards of a corpus, merged, give the same result as the whole
    corpus's counts."""
    a = np.array(alpha, dtype=np.float64)
    if length_hist[0].size == 0:  # no tokens at all: nothing to learn from
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


def alpha_of_topic(n_k: np.ndarray, doc_lengths: np.ndarray, alpha: np.ndarray, k: int, *,
                   iterations: int = DEFAULT_ITERATIONS, tol: float = DEFAULT_TOL,
                   min_value: float = MIN_VALUE) -> float:
    """Minka's fixed point (:func:`optimize_alpha`) for one component, ``alpha_k``, the others
    held at ``alpha``: from ``n_k`` (D,) the documents' tokens of topic k and ``doc_lengths`` (D,)
    their lengths (counts averaged over snapshots may be fractions). For a topic new to these
    documents beside topics whose priors are known (an update's new topic, learned from the night's
    documents, the only ones that hold it). Returns ``alpha[k]`` unchanged when no document holds it."""
    n_k, lengths = np.asarray(n_k, dtype=np.float64), np.asarray(doc_lengths, dtype=np.float64)
    held, full = np.unique(n_k[n_k > 0], return_counts=True), np.unique(lengths[lengths > 0], return_counts=True)
    a, others = float(alpha[k]), float(np.sum(alpha)) - float(alpha[k])
    if held[0].size == 0:
        return a
    return _fixed_point(lambda a: (float(held[1] @ (digamma(held[0] + a) - digamma(a))),
                                   float(full[1] @ (digamma(full[0] + others + a) - digamma(others + a)))),
                        a, iterations, tol, min_value)


def _fixed_point(sums, x: float, iterations: int, tol: float, min_value: float) -> float:
    """Minka's fixed point for one value, ``sums(x)`` its step's numerator and denominator:
    ``x <- max(x * numerator / denominator, min_value)`` until a step moves it by at most ``tol``
    relatively, or ``iterations`` steps were taken."""
    for _ in range(iterations):
        numerator, denominator = sums(x)
        new = max(x * numerator / denominator, min_value)
        done = abs(new - x) <= tol * x
        x = new
        if done:
            break
    return x


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
    return beta_from_histogram(histogram(nwk.reshape(-1, 1)), nk, beta, V, iterations=iterations, tol=tol,
                               min_value=min_value)


def beta_from_histogram(word_hist, nk: np.ndarray, beta: float, n_words: int, *,
                        iterations: int = DEFAULT_ITERATIONS, tol: float = DEFAULT_TOL,
                        min_value: float = MIN_VALUE) -> float:
    """:func:`optimize_beta` from the histogram of the word-topic counts (one column,
    :func:`~ldacli.corpora.counts.histogram`), the K totals ``nk`` and V = ``n_words``."""
    nk = np.asarray(nk, dtype=np.int64)
    V = int(n_words)
    totals = nk[nk > 0]
    b = float(beta)
    if totals.size == 0:
        return b
    return _fixed_point(lambda b: (_digamma_sums(word_hist, np.array([b]))[0],
                                   V * float(np.sum(digamma(totals + V * b) - digamma(V * b)))), b, iterations, tol, min_value)
