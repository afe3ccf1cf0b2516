"""Synthetic corpora drawn from the LDA generative process, with the true topics kept.

Tests and benchmarks use :func:`generate` to make a corpus whose topics are known, and
:func:`recovery` to measure how close a trained model came to them::

    syn = generate(1000, 10, 500, doc_length=(50, 150), planted=True, seed=1)
    ...train a model on syn.corpus, giving phi_est (K, V)...
    perm, tv = recovery(syn.phi, phi_est)     # tv: mean total-variation distance

The generative process, for documents ``d`` and topics ``k``::

    phi_k   ~ Dirichlet(beta)           (V,)   or a planted block topic, see generate()
    theta_d ~ Dirichlet(alpha)          (K,)
    N_d     =  doc_length               fixed, or uniform on [lo, hi]
    x_d     ~ Multinomial(N_d, theta_d @ phi)

It is sampled without ever forming ``theta @ phi`` or a dense document-term matrix: each
document's tokens are first split among topics (``Multinomial(N_d, theta_d)``), then all
of a topic's tokens in a chunk of documents are drawn from ``phi_k`` together and dealt
out to those documents, and the (document, word) pairs are counted into CSR. Because the
tokens are independent given the topic, this gives exactly the distribution above. About
seven seconds for 50 million tokens (K=50, V=20,000) on one core.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from ldacli import checks
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError

__all__ = ["Synthetic", "generate", "planted_topics", "realistic", "recovery", "total_variation", "zipf_topics"]

# Tokens drawn per chunk: bounds the working memory (about 40 bytes a token) while keeping
# the per-chunk Python overhead negligible. Fixed, so the output never depends on the machine.
_CHUNK_TOKENS = 1 << 22


@dataclass
class Synthetic:
    """A synthetic corpus and the parameters it was drawn from.

    ``corpus`` holds the counts; ``phi`` (K, V) float64 are the true topics (rows sum to
    1) and ``theta`` (D, K) float64 the true topic proportions of every document (rows
    sum to 1).
    """

    corpus: Corpus
    phi: np.ndarray
    theta: np.ndarray


def _doc_lengths(doc_length, n_docs: int, rng: np.random.Generator) -> np.ndarray:
    """Lengths (n_docs,) int64: a fixed length, uniform on the inclusive range (lo, hi), or
    given one a document (an array of n_docs non-negative integers)."""
    if isinstance(doc_length, np.ndarray):
        lengths = doc_length
        if (lengths.shape != (n_docs,) or lengths.dtype.kind not in "iu"
                or (lengths.size and lengths.min() < 0)):
            raise LdacliError(f"doc_length as an array must hold {n_docs} non-negative integers (one a "
                              f"document), got shape {lengths.shape} of {lengths.dtype}.")
        return lengths.astype(np.int64)
    if isinstance(doc_length, (tuple, list)):
        if len(doc_length) != 2:
            raise LdacliError(f"doc_length must be an integer or a (lo, hi) pair, got {doc_length!r}.")
        lo = checks.count("doc_length[0]", doc_length[0], 0)
        hi = checks.count("doc_length[1]", doc_length[1], 0)
        if lo > hi:
            raise LdacliError(f"doc_length must be a (lo, hi) pair with lo <= hi, got {doc_length!r}.")
        return rng.integers(lo, hi, size=n_docs, endpoint=True, dtype=np.int64)
    n = checks.count("doc_length", doc_length, 0)
    return np.full(n_docs, n, dtype=np.int64)


def _chunk_bounds(lengths: np.ndarray) -> np.ndarray:
    """Boundaries ``b`` (increasing, from 0 to D) of chunks ``b[i]:b[i+1]`` of whole documents.

    Each chunk ends with the first document that brings it to ``_CHUNK_TOKENS`` tokens or
    more, so chunks hold about that many tokens (a longer document is a chunk of its own).
    """
    n_docs = lengths.size
    if n_docs == 0:
        return np.zeros(1, dtype=np.int64)
    ends = np.cumsum(lengths)
    last = np.searchsorted(ends, np.arange(_CHUNK_TOKENS, int(ends[-1]), _CHUNK_TOKENS))
    return np.unique(np.concatenate(([0], last + 1, [n_docs])))


def _draw_words(rng: np.random.Generator, p: np.ndarray, cdf: np.ndarray, n: int) -> np.ndarray:
    """``n`` independent draws (int64, in random order) from the distribution ``p`` (V,).

    Two exact methods, chosen by cost: for many draws, the word counts are drawn at once,
    ``Multinomial(n, p)`` in O(V), expanded and shuffled; for few, each draw is an
    inverse-CDF lookup (``cdf`` is ``cumsum(p)`` ending in exactly 1), O(n log V).
    """
    if 2 * n >= p.size:
        words = np.repeat(np.arange(p.size, dtype=np.int64), rng.multinomial(n, p))
        rng.shuffle(words)
        return words
    return np.searchsorted(cdf, rng.random(n), side="right").astype(np.int64, copy=False)


def planted_topics(n_topics: int, n_words: int) -> np.ndarray:
    """Well-separated topics (n_topics, n_words) float64: each uniform on its own block of words.

    The vocabulary is cut into ``n_topics`` consecutive blocks whose sizes differ by at most
    one (``np.array_split``); topic ``k`` is uniform over block ``k`` and zero elsewhere, so
    the topics have disjoint supports and every word belongs to exactly one topic.
    """
    n_topics = checks.count("n_topics", n_topics, 1)
    n_words = checks.count("n_words", n_words, n_topics)
    phi = np.zeros((n_topics, n_words), dtype=np.float64)
    for k, block in enumerate(np.array_split(np.arange(n_words), n_topics)):
        phi[k, block] = 1.0 / block.size
    return phi


def generate(
    n_docs: int,
    n_topics: int,
    n_words: int,
    doc_length: int | tuple[int, int] | np.ndarray = 100,
    *,
    alpha: float = 0.1,
    beta: float = 0.01,
    seed: int = 0,
    planted: bool = False,
    topics: np.ndarray | None = None,
) -> Synthetic:
    """Draw a corpus from the LDA generative process.

    Parameters
    ----------
    n_docs, n_topics, n_words
        D documents (>= 0), K topics (>= 1), V vocabulary words (>= 1; >= K when planted).
    doc_length
        Tokens per document: an integer for a fixed length, a pair ``(lo, hi)`` for
        lengths drawn uniformly from the integers ``lo..hi`` inclusive, or an integer array
        of the D lengths (e.g. drawn from a corpus's length distribution).
    alpha
        Symmetric Dirichlet parameter of each document's topic proportions (per topic).
    beta
        Symmetric Dirichlet parameter of each topic's word distribution (per word).
        Ignored when ``planted`` is true.
    seed
        Seed for ``np.random.default_rng``; the same arguments and seed give the same result.
    planted
        Use :func:`planted_topics` (disjoint uniform blocks of about V/K words) instead of
        Dirichlet(beta) topics, so that the topics are unambiguous to recover.
    topics
        Given topics (n_topics, n_words), rows summing to 1 (e.g. :func:`zipf_topics`),
        instead of either.

    Returns
    -------
    Synthetic
        The corpus (``counts`` a D x V int32 ``csr_array`` with sorted indices and no
        explicit zeros; vocabulary ``"w00000", "w00001", ...``; document ids ``"0", "1",
        ...``; source and format ``"synthetic"``) with the true ``phi`` and ``theta``.
    """
    n_docs = checks.count("n_docs", n_docs, 0)
    n_topics = checks.count("n_topics", n_topics, 1)
    n_words = checks.count("n_words", n_words, n_topics if planted else 1)
    alpha = checks.positive("alpha", alpha)
    if not planted:
        beta = checks.positive("beta", beta)
    rng = np.random.default_rng(seed)

    if topics is not None:
        phi = np.asarray(topics, dtype=np.float64)
        if phi.shape != (n_topics, n_words):
            raise LdacliError(f"topics must have shape ({n_topics}, {n_words}), got {phi.shape}.")
    elif planted:
        phi = planted_topics(n_topics, n_words)
    else:
        phi = rng.dirichlet(np.full(n_words, beta), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, alpha), size=n_docs)
    lengths = _doc_lengths(doc_length, n_docs, rng)

    # Per-topic CDFs for _draw_words; the last entry is exactly 1 so no draw falls off the end.
    cdf = np.cumsum(phi, axis=1)
    cdf /= cdf[:, -1:]
    cdf[:, -1] = 1.0

    bounds = _chunk_bounds(lengths)
    row_nnz = np.zeros(n_docs, dtype=np.int64)
    indices_parts, data_parts = [], []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        topic_counts = rng.multinomial(lengths[start:stop], theta[start:stop])  # (m, K)
        docs_parts, words_parts = [], []
        local_docs = np.arange(stop - start, dtype=np.int64)
        for k in range(n_topics):
            per_doc = topic_counts[:, k]
            n_k = int(per_doc.sum())
            if n_k == 0:
                continue
            docs_parts.append(np.repeat(local_docs, per_doc))
            words_parts.append(_draw_words(rng, phi[k], cdf[k], n_k))
        if not docs_parts:
            continue
        keys = np.concatenate(docs_parts) * n_words + np.concatenate(words_parts)
        keys, counts = np.unique(keys, return_counts=True)
        docs = keys // n_words
        row_nnz[start:stop] = np.bincount(docs, minlength=stop - start)
        indices_parts.append((keys - docs * n_words).astype(np.int32))
        data_parts.append(counts.astype(np.int32))

    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=indptr[1:])
    indices = np.concatenate(indices_parts) if indices_parts else np.zeros(0, dtype=np.int32)
    data = np.concatenate(data_parts) if data_parts else np.zeros(0, dtype=np.int32)
    if indptr[-1] <= np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    else:
        indices = indices.astype(np.int64)
    counts = sp.csr_array((data, indices, indptr), shape=(n_docs, n_words))
    counts.has_sorted_indices = True

    width = max(5, len(str(n_words - 1)))
    corpus = Corpus(
        counts=counts,
        vocab=[f"w{w:0{width}d}" for w in range(n_words)],
        doc_ids=[str(d) for d in range(n_docs)],
        source="synthetic",
        format="synthetic",
    )
    return Synthetic(corpus=corpus, phi=phi, theta=theta)


def zipf_topics(n_topics: int, n_words: int, *, exponent: float = 1.07, spread: float = 0.1,
                seed: int = 0) -> np.ndarray:
    """Topics (n_topics, n_words) whose mixture has Zipfian word frequencies, as text does:
    topic k's weight of word w is ``r_w^-exponent * g_kw`` (r_w the word's rank, 1-based;
    ``g_kw ~ Gamma(spread)``, so each topic favours its own random words), normalised. Frequent
    words then occur in many topics and rare ones in few."""
    rng = np.random.default_rng(seed)
    base = np.arange(1, n_words + 1, dtype=np.float64) ** -exponent
    phi = base * rng.gamma(spread, size=(n_topics, n_words))
    phi += 1e-300  # no all-zero row, however small spread is
    return phi / phi.sum(axis=1, keepdims=True)


def realistic(n_tokens: int, n_topics: int = 100, *, seed: int = 0) -> Synthetic:
    """A corpus of about ``n_tokens`` tokens with text-like statistics, for benchmarks at any
    size: a vocabulary growing with the corpus by Heaps' law, ``V = 50,000 (N / 10^6)^0.59``
    (50,000 words at a million tokens, about 500,000 at 50 million), Zipfian word frequencies
    (:func:`zipf_topics`), documents of 50 to 350 tokens, alpha 0.1."""
    n_words = max(n_topics, int(round(50_000 * (n_tokens / 1e6) ** 0.59)))
    phi = zipf_topics(n_topics, n_words, seed=seed)
    return generate(max(1, n_tokens // 200), n_topics, n_words, doc_length=(50, 350), alpha=0.1, seed=seed,
                    topics=phi)


def _as_distributions(name: str, x) -> np.ndarray:
    """Rows of ``x`` scaled to sum to 1, after checking they are non-negative and non-zero."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise LdacliError(f"{name} must be a non-empty 2-D array (topics x words), got shape {x.shape}.")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise LdacliError(f"{name} must hold finite non-negative values.")
    sums = x.sum(axis=1, keepdims=True)
    if np.any(sums == 0):
        raise LdacliError(f"{name} has a topic (row) that sums to zero.")
    return x / sums


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total-variation distances (Kp, Kq) between the rows of ``p`` and of ``q``.

    ``0.5 * sum(|p_i - q_j|)``: 0 for identical distributions, 1 for disjoint supports.
    Computed one row of ``p`` at a time, so memory stays O(Kq * V).
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    out = np.empty((p.shape[0], q.shape[0]), dtype=np.float64)
    for i, row in enumerate(p):
        out[i] = 0.5 * np.abs(q - row).sum(axis=1)
    return out


def recovery(phi_true: np.ndarray, phi_est: np.ndarray) -> tuple[np.ndarray, float]:
    """Match estimated topics to the true ones and measure how far apart they are.

    Both arguments are (K, V) arrays of topics over the same vocabulary; ``phi_est`` may have
    more topics than ``phi_true`` (the extra ones stay unmatched). Rows are normalised to sum
    to 1 first, so topic-word counts are accepted as well as probabilities. Pairs are chosen
    by the Hungarian algorithm (``scipy.optimize.linear_sum_assignment``) to minimise the
    summed total-variation distance (see :func:`total_variation`).

    Returns ``(perm, mean_tv)``: ``perm`` (K_true,) int64 with ``perm[k]`` the estimated
    topic matched to true topic ``k`` (so ``phi_est[perm]`` lines up with ``phi_true``), and
    ``mean_tv`` the mean total-variation distance over matched pairs, in [0, 1].
    """
    p = _as_distributions("phi_true", phi_true)
    q = _as_distributions("phi_est", phi_est)
    if p.shape[1] != q.shape[1]:
        raise LdacliError(
            f"phi_true and phi_est must have the same number of words (columns), "
            f"got {p.shape[1]} and {q.shape[1]}."
        )
    if q.shape[0] < p.shape[0]:
        raise LdacliError(
            f"phi_est must have at least as many topics as phi_true ({p.shape[0]}), got {q.shape[0]}."
        )
    dist = total_variation(p, q)
    rows, cols = linear_sum_assignment(dist)
    perm = np.empty(p.shape[0], dtype=np.int64)
    perm[rows] = cols
    return perm, float(dist[rows, cols].mean())
