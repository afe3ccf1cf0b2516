"""Documents under fixed topics: theta estimation, the held-out split and scoring.

``infer`` (theta of new documents), ``perplexity`` (document completion), early stopping in
training and warm starts all go through here:

* :func:`estimate_theta` -- posterior-mean topic proportions of documents given the topics, by
  exact Gibbs sampling with the topics held fixed (kernel
  ``ldacli._fixed_topics.theta_of_documents``, O(topics of the document) per token),
  every document on its own random stream (:func:`ldacli.random_streams.content_keys`): a document's
  row depends on the model, its tokens and the seed, not on the documents around it;
* :func:`fold_in` -- a topic for every token under fixed topics (a warm start's first state);
* :func:`completion_split` -- each document's tokens cut into an observed and a scored half;
* :func:`score` -- ``sum log sum_k theta_dk phi_kw`` of scored tokens;
* :func:`holdout_split` -- a fixed random slice of a corpus's documents held out of training;
* :class:`HeldOutEvaluator` -- document-completion perplexity of such a slice under changing
  topics, the figure early stopping watches.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from ldacli import checks, random_streams
from ldacli._fixed_topics import document_draws, prior_alias_tables, theta_of_documents
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.counts import doc_pointers
from ldacli.errors import LdacliError
from ldacli.parallel import Pool
from ldacli.settings import Integer, Setting

# Tokens per chunk of documents, the unit of work of threads and workers when theta is estimated,
# and the most documents a chunk holds (empty and short documents close one too: three million
# empty documents were one chunk, 280 bytes each, where memory is to hold a window of chunks).
THETA_CHUNK_TOKENS = 1 << 16
THETA_CHUNK_DOCS = 1 << 14
# Chunks in flight per thread (or worker) when theta is estimated as documents stream in.
WINDOW_PER_WORKER = 4
# Scored tokens whose log-likelihoods are summed together (see :class:`BlockSum`).
SCORE_BLOCK = 65536
# PriorTables: a cell of a word's alias table, the probability of keeping the cell's topic (rounded
# to float32) beside the topic taken otherwise: one 8-byte read a draw (_fixed_topics.AliasCell)
ALIAS_CELL = np.dtype([("prob", "<f4"), ("alias", "<i4")])
# PriorTables: words' lists above each topic's floor are kept when they hold at most this share
# of phi's cells, and made this many cells of phi at a time.
LIST_DENSITY = 0.25
LIST_BLOCK_CELLS = 1 << 22
# ... and read for a token when its document has more topics than this (and the word's list is
# shorter): below, looking the list up cost more than it saved (K=100, 20-token documents).
BY_WORD_FROM = 16
# Sweeps (and those discarded) to estimate theta in infer and perplexity.
ITERATIONS = Setting("iterations", Integer(1), 100, "Sweeps of Gibbs sampling per document in all, with the topics fixed.")
BURN_IN = Setting("burn_in", Integer(0), 50, "Sweeps discarded before averaging theta over the rest.")
# The same for early stopping, which evaluates often and compares models, not absolute values.
EVALUATOR_ITERATIONS = 30
EVALUATOR_BURN_IN = 10


def theta_chunks(doc_ptr: np.ndarray) -> list[tuple[int, int]]:
    """The document ranges that threads or workers take one at a time when theta is estimated:
    about :data:`THETA_CHUNK_TOKENS` tokens each, at most :data:`THETA_CHUNK_DOCS` documents
    (:func:`chunk_bounds`). (The result does not depend on them: every document has its own
    stream.)"""
    lengths = np.diff(np.asarray(doc_ptr, dtype=np.int64))
    bounds = np.unique(np.concatenate(([0], chunk_bounds(lengths, 0), [lengths.size])))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


@dataclass(frozen=True)
class PriorTables:
    """What the fixed-topics kernel precomputes of a model's topics: the alias tables of every
    word's prior weights ``alpha_k phi_kw`` (the part of the conditional that never changes),
    drawn from in O(1): ``tables`` (V, K) of :data:`ALIAS_CELL` (each cell's probability, float32,
    and its alias, side by side) and ``total`` (V,), each word's sum of weights (kernel
    ``prior_alias_tables``); and, when phi is sparse above each
    topic's least value (a Gibbs sampler's topics: counts plus beta), each word's list of the
    rest: ``floor`` (K,) the least ``phi_kw`` of each topic, ``list_ptr`` (V+1,) int64,
    ``list_topics`` int32 and ``excess`` float64, the topics whose ``phi_kw - floor_k`` is not 0
    and that excess, word by word, read for documents of more than ``by_word_from`` topics (K
    when there are no lists: when more than :data:`LIST_DENSITY` of the cells would be in them,
    as in a variational model's topics)."""

    tables: np.ndarray
    total: np.ndarray
    floor: np.ndarray
    list_ptr: np.ndarray
    list_topics: np.ndarray
    excess: np.ndarray
    by_word_from: int

    @classmethod
    def of(cls, phi_wk: np.ndarray, alpha: np.ndarray, density: float = LIST_DENSITY,
           by_word_from: int = BY_WORD_FROM) -> "PriorTables":
        """The tables of the word-major topics ``phi_wk`` (V, K) and the prior ``alpha`` (K,);
        the words' lists when they hold at most ``density`` of the cells, read from
        ``by_word_from`` topics of a document."""
        V, K = phi_wk.shape
        tables, total = np.zeros((V, K), ALIAS_CELL), np.zeros(V)
        prior_alias_tables(phi_wk, alpha, tables, total, np.empty(K, np.int32), np.empty(K, np.int32),
                           np.empty(K), np.empty(K), np.empty(K, np.int32))
        floor = phi_wk.min(axis=0) if V else np.zeros(K)
        step = max(1, LIST_BLOCK_CELLS // max(K, 1))
        blocks = [(lo, phi_wk[lo:lo + step] > floor) for lo in range(0, V, step)]
        lengths = np.concatenate([np.zeros(0, np.int64)] + [m.sum(axis=1) for _, m in blocks])
        if lengths.sum() > density * V * K:
            return cls(tables, total, floor, np.zeros(V + 1, np.int64), np.zeros(0, np.int32), np.zeros(0), K)
        cols = [np.nonzero(m)[1] for _, m in blocks]  # each block's cells' topics, word by word
        list_topics = np.concatenate([np.zeros(0, np.int32)] + [k.astype(np.int32) for k in cols])
        excess = np.concatenate([np.zeros(0)] + [phi_wk[lo:lo + m.shape[0]][m] - floor[k]
                                                 for (lo, m), k in zip(blocks, cols)])
        return cls(tables, total, floor, np.concatenate(([0], np.cumsum(lengths))).astype(np.int64),
                   list_topics, excess, by_word_from)


@functools.cache
def check_document_streams() -> None:
    """Refuse to run when the kernels' inline SFC64 does not draw what numpy's SFC64 draws from
    the same start (:func:`ldacli.random_streams.document_generator`): checked once per process."""
    key = np.array([11, 12], dtype=np.uint64)
    ours = np.zeros(9)
    document_draws(key, 15, ours)
    if not np.array_equal(ours, random_streams.document_generator(15, key).random(9)):
        raise LdacliError(f"numpy {np.__version__}'s SFC64 generator draws other numbers than ldacli's kernels: "
                          f"the per-document random streams of infer and perplexity would not be numpy's")


def sweep_batches(iterations: int, burn_in: int, batches: int) -> tuple[np.ndarray, np.ndarray]:
    """For :func:`theta_of_documents`: the batch of every sweep (-1 for those discarded), (I,)
    int32, and the sweeps of each batch, float64: the kept sweeps cut into ``min(batches,
    kept)`` consecutive, equal-as-possible blocks."""
    kept = iterations - burn_in
    n_batches = min(batches, kept)
    batch = np.full(iterations, -1, dtype=np.int32)
    batch[burn_in:] = np.arange(kept, dtype=np.int64) * n_batches // max(kept, 1)
    return batch, np.bincount(batch[burn_in:], minlength=n_batches).astype(np.float64)


def sample_documents(phi_wk: np.ndarray, prior: PriorTables, alpha: np.ndarray, key: int,
                     words: np.ndarray, doc_ptr: np.ndarray, batch_of_sweep: np.ndarray,
                     batch_sweeps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run :func:`~ldacli._fixed_topics.theta_of_documents` on the documents ``(words, doc_ptr)``
    (``doc_ptr`` from 0), each on its stream from the run's ``key`` and its content; returns
    ``(z, theta)`` as the kernel leaves them."""
    check_document_streams()
    K = phi_wk.shape[1]
    D = doc_ptr.size - 1
    B = batch_sweeps.size
    words = np.ascontiguousarray(words, dtype=np.int32)
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    z = np.zeros(words.size, dtype=np.int32)
    theta = np.zeros((B + 1 if B > 1 else B, D, K))
    theta_of_documents(words, doc_ptr, random_streams.content_keys(words, doc_ptr), key, phi_wk, prior.tables,
                       prior.total, prior.floor, prior.list_ptr, prior.list_topics, prior.excess,
                       prior.by_word_from, alpha,
                       float(np.sum(alpha)), batch_of_sweep, batch_sweeps, z, theta, np.zeros(3 * K, np.int32),
                       np.zeros(max(1, int(np.max(np.diff(doc_ptr), initial=0))), np.int32), np.zeros(K * (B + 1)))
    return z, theta


def theta_of_chunk(phi_wk: np.ndarray, prior: PriorTables, alpha: np.ndarray, words: np.ndarray,
                   doc_ptr: np.ndarray, iterations: int, burn_in: int, batches: int,
                   key: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """:func:`estimate_theta` for one chunk of documents (``doc_ptr`` from 0), with the
    word-major topics ``phi_wk`` (V, K), their :class:`PriorTables` and the run's
    :func:`ldacli.random_streams.document_key`; a plain function of its arguments, so threads or Dask
    workers can run it."""
    _, theta = sample_documents(phi_wk, prior, alpha, key, words, doc_ptr, *sweep_batches(iterations, burn_in,
                                                                                             batches))
    return theta[0], list(theta[1:]) if theta.shape[0] > 1 else [theta[0]]


def chunk_bounds(lengths: np.ndarray, before: int, docs_before: int = 0) -> np.ndarray:
    """Where :func:`theta_chunks` cuts a run of documents of ``lengths`` (n,) that follow
    ``docs_before`` documents of ``before`` tokens: the local indices i (1..n) after which a
    chunk ends, i.e. where the running total of tokens reaches a multiple of
    :data:`THETA_CHUNK_TOKENS` it had not reached before, or that of documents a multiple of
    :data:`THETA_CHUNK_DOCS`. The same cuts as over the whole corpus, found one block of
    documents at a time."""
    ends = before + np.cumsum(np.asarray(lengths, dtype=np.int64))
    starts = np.concatenate(([before], ends[:-1])) if ends.size else ends
    documents = docs_before + np.arange(1, ends.size + 1)
    return np.flatnonzero((ends // THETA_CHUNK_TOKENS > starts // THETA_CHUNK_TOKENS)
                          | (documents % THETA_CHUNK_DOCS == 0)) + 1


def cut_chunks(blocks: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The :func:`theta_chunks` of a corpus given as consecutive blocks of documents (each
    ``(words, doc_ptr)`` with ``doc_ptr`` from 0), as ``(words, doc_ptr)`` pairs: the same
    documents in the same chunks as :func:`theta_chunks` cuts the whole, holding at most one
    chunk and one block at a time."""
    pending_words: list[np.ndarray] = []
    pending_lengths: list[np.ndarray] = []
    seen = docs = 0  # tokens and documents of the blocks before

    def take() -> tuple[np.ndarray, np.ndarray]:
        lengths = np.concatenate(pending_lengths) if pending_lengths else np.zeros(0, np.int64)
        words = np.concatenate(pending_words) if pending_words else np.zeros(0, np.int32)
        pending_words.clear()
        pending_lengths.clear()
        return np.ascontiguousarray(words, dtype=np.int32), doc_pointers(lengths)

    for words, doc_ptr in blocks:
        lengths = np.diff(np.asarray(doc_ptr, dtype=np.int64))
        start = 0
        for cut in chunk_bounds(lengths, seen, docs).tolist():
            pending_words.append(words[doc_ptr[start]:doc_ptr[cut]])
            pending_lengths.append(lengths[start:cut])
            start = cut
            yield take()
        pending_words.append(words[doc_ptr[start]:])
        pending_lengths.append(lengths[start:])
        seen += int(doc_ptr[-1])
        docs += lengths.size
    if any(x.size for x in pending_lengths):
        yield take()


def theta_stream(phi: np.ndarray, alpha: np.ndarray, blocks: Iterable[tuple[np.ndarray, np.ndarray]], *,
                 iterations: int, burn_in: int, seed: int, batches: int = 1, threads: int = 1, client=None,
                 progress: bool = False) -> Iterator[tuple[np.ndarray, list[np.ndarray]]]:
    """:func:`estimate_theta` of documents arriving in ``blocks`` (each ``(words, doc_ptr)``),
    yielding ``(theta, batch_thetas)`` chunk by chunk in document order: the chunks of
    :func:`cut_chunks`, run a window of chunks at a time on ``threads`` threads or the workers
    of a Dask ``client``. Every document has its own stream, so the rows are those
    :func:`estimate_theta` gives over the whole, or over each document alone, for any number of
    threads or workers and any blocks; memory holds a window of chunks, not the corpus."""
    iterations = checks.count("iterations", iterations, 1)
    burn_in = checks.count("burn_in", burn_in, 0)
    batches = checks.count("batches", batches, 1)
    checks.smaller("burn_in", burn_in, "iterations", iterations)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    phi_wk = np.ascontiguousarray(np.asarray(phi).T, dtype=np.float64)
    prior = PriorTables.of(phi_wk, alpha)
    key = random_streams.document_key(seed)
    window = WINDOW_PER_WORKER * (threads if client is None else max(1, len(client.scheduler_info()["workers"])))
    chunks = enumerate(cut_chunks(blocks))
    bar = tqdm(disable=not progress, file=sys.stderr, unit="chunk", leave=False)
    shared = client.scatter([phi_wk, prior, alpha], broadcast=True, hash=False) if client is not None else None
    with Pool(threads if client is None else 1) as pool:
        while True:
            group = list(itertools.islice(chunks, window))
            if not group:
                break
            args = [(words, doc_ptr, iterations, burn_in, batches, key) for _, (words, doc_ptr) in group]
            if client is not None:
                parts = client.gather([client.submit(theta_of_chunk, *shared, *a, pure=False) for a in args])
            else:
                parts = pool.map(lambda a: theta_of_chunk(phi_wk, prior, alpha, *a), args)
            bar.update(len(parts))
            yield from parts
    bar.close()


def estimate_theta(phi: np.ndarray, alpha: np.ndarray, words: np.ndarray, doc_ptr: np.ndarray, *,
                   iterations: int, burn_in: int, seed: int, batches: int = 1, threads: int = 1, client=None,
                   progress: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """Posterior-mean topic proportions (D, K) of documents given topics ``phi`` (K, V) and
    prior ``alpha`` (K,); the documents are token arrays ``words`` (N,) and ``doc_ptr`` (D+1,).

    Each document's tokens are first placed in order, each drawn given those before it; after
    ``burn_in`` sweeps, the point estimate ``(n_dk + alpha_k) / (N_d + sum(alpha))`` is averaged
    over the remaining sweeps. Documents without tokens get the normalised prior. Every
    document is sampled on its own stream, from ``seed`` and its tokens
    (:func:`ldacli.random_streams.content_keys`): its row is the same alone or among others, in any
    position, and two documents of the same tokens get the same row. The documents are cut into
    :func:`theta_chunks` and run on ``threads`` threads or, with a Dask ``client``, on its
    workers, with the same result (this is :func:`theta_stream` over one block). Returns
    ``(theta, batch_thetas)``: the average, and the averages over ``batches`` consecutive,
    equal-as-possible blocks of the kept sweeps (for a batch-means standard error).
    """
    words = np.ascontiguousarray(words, dtype=np.int32)
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    parts = list(theta_stream(phi, alpha, [(words, doc_ptr)], iterations=iterations, burn_in=burn_in, seed=seed,
                              batches=batches, threads=threads, client=client, progress=progress))
    if not parts:
        K = np.asarray(phi).shape[0]
        return np.zeros((0, K)), [np.zeros((0, K))]
    theta = np.concatenate([t for t, _ in parts])
    n_batches = len(parts[0][1])
    return theta, [np.concatenate([bt[j] for _, bt in parts]) for j in range(n_batches)]


def fold_in(phi: np.ndarray, alpha: np.ndarray, words: np.ndarray, doc_ptr: np.ndarray, *, sweeps: int,
            rng: np.random.Generator) -> np.ndarray:
    """A topic for every token (N,) int32 under the fixed topics ``phi`` (K, V) and prior
    ``alpha`` (K,): each document's tokens placed in order given those before, then ``sweeps``
    Gibbs sweeps, every document on its own stream from a key drawn from ``rng``: a draw from
    p(z | w, phi) once the chain has mixed. Words whose column of ``phi`` is the same in every
    topic are assigned by their document's other tokens and the prior."""
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    phi_wk = np.ascontiguousarray(phi.T, dtype=np.float64)
    key = int(rng.integers(0, 2**64, dtype=np.uint64))
    batch_of_sweep = np.full(checks.count("sweeps", sweeps, 0), -1, dtype=np.int32)
    z, _ = sample_documents(phi_wk, PriorTables.of(phi_wk, alpha), alpha, key, words, doc_ptr, batch_of_sweep,
                            np.zeros(0))
    return z


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


def token_logliks(theta: np.ndarray, phi_wk: np.ndarray, docs: np.ndarray, words: np.ndarray) -> np.ndarray:
    """``log sum_k theta[docs_i, k] phi_wk[words_i, k]`` of each token ``(docs_i, words_i)``."""
    return np.log(np.einsum("ik,ik->i", theta[docs], phi_wk[words]))


class BlockSum:
    """A sum of values arriving in pieces, added up as :func:`score` adds them: in blocks of
    :data:`SCORE_BLOCK` consecutive values, each summed by NumPy, so the total is the same
    float however the values were cut into pieces."""

    def __init__(self):
        self.total = 0.0
        self._pending: list[np.ndarray] = []
        self._n = 0

    def add(self, values: np.ndarray) -> None:
        self._pending.append(values)
        self._n += values.size
        if self._n >= SCORE_BLOCK:
            joined = np.concatenate(self._pending)
            full = joined.size - joined.size % SCORE_BLOCK
            for s in range(0, full, SCORE_BLOCK):
                self.total += float(np.sum(joined[s:s + SCORE_BLOCK]))
            self._pending, self._n = [joined[full:]], joined.size - full

    def result(self) -> float:
        if self._n:
            self.total += float(np.sum(np.concatenate(self._pending)))
            self._pending, self._n = [], 0
        return self.total


class DocQueue:
    """Per-document runs of values (the scored tokens of each document) queued in document
    order and taken back a number of documents at a time."""

    def __init__(self):
        self._lengths: list[np.ndarray] = []
        self._values: list[np.ndarray] = []

    def push(self, lengths: np.ndarray, values: np.ndarray) -> None:
        self._lengths.append(np.asarray(lengths, dtype=np.int64))
        self._values.append(values)

    def pop(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The next ``n`` documents' lengths (n,) and values, concatenated."""
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
        values = np.concatenate(self._values) if self._values else np.zeros(0, np.int32)
        cut = int(lengths[:n].sum())
        self._lengths, self._values = [lengths[n:]], [values[cut:]]
        return lengths[:n], values[:cut]


def score(theta: np.ndarray, phi_wk: np.ndarray, docs: np.ndarray, words: np.ndarray) -> float:
    """``sum_i log sum_k theta[docs_i, k] phi_wk[words_i, k]``: the log-likelihood of the tokens
    ``(docs, words)`` given theta (D, K) and the word-major topics ``phi_wk`` (V, K)."""
    total = BlockSum()
    for start in range(0, words.size, SCORE_BLOCK):
        total.add(token_logliks(theta, phi_wk, docs[start:start + SCORE_BLOCK], words[start:start + SCORE_BLOCK]))
    return total.result()


def holdout_split(corpus: Corpus, fraction: float, seed: int) -> tuple[Corpus, Corpus, np.ndarray]:
    """Hold out ``round(fraction * D)`` documents (at least 1, leaving at least 1) chosen
    uniformly at random from ``seed``. Returns ``(train, held, held_docs)``; ``held_docs`` is the
    sorted (H,) int64 array of the held-out documents' indices in ``corpus``. Both parts keep
    the vocabulary and the source; their ids are the original documents' ids.
    """
    checks.fraction("holdout", fraction, open_ends=True)
    D = corpus.n_docs
    if D < 2:
        raise LdacliError(f"holdout: expected at least 2 documents to hold some out, found {D}")
    n_held = min(max(1, round(fraction * D)), D - 1)
    held_docs = np.sort(random_streams.generator(seed).choice(D, size=n_held, replace=False)).astype(np.int64)
    mask = np.zeros(D, dtype=bool)
    mask[held_docs] = True

    def part(m: np.ndarray) -> Corpus:
        return Corpus(corpus.counts[m], list(corpus.vocab), [d for d, keep in zip(corpus.doc_ids, m) if keep],
                      corpus.source, corpus.format)

    return part(~mask), part(mask), held_docs


class HeldOutEvaluator:
    """Document-completion perplexity of a fixed held-out corpus under changing topics.

    The observed/scored split is :func:`completion_split`'s; theta is estimated with
    ``iterations`` sweeps of which ``burn_in`` are discarded, from the same ``seed`` at every
    call (common random numbers), so successive scores differ by the model and not by Monte
    Carlo noise. Cost per call: ``iterations`` sweeps over the observed half of the held-out
    tokens, dense in K.
    """

    def __init__(self, held: Corpus, *, iterations: int = EVALUATOR_ITERATIONS,
                 burn_in: int = EVALUATOR_BURN_IN, seed: int = 0):
        self.obs_words, self.obs_ptr, self.score_docs, self.score_words = completion_split(held)
        if self.score_words.size == 0:
            raise LdacliError("holdout: expected held-out documents with at least 2 tokens, found none")
        self.iterations, self.burn_in, self.seed = iterations, burn_in, seed

    @property
    def n_tokens(self) -> int:
        return int(self.score_words.size)

    def perplexity(self, phi: np.ndarray, alpha: np.ndarray) -> float:
        """exp(-log-likelihood / scored tokens) of the held-out slice under ``phi`` (K, V) and
        ``alpha`` (K,)."""
        phi = np.asarray(phi, dtype=np.float64)
        theta, _ = estimate_theta(phi, alpha, self.obs_words, self.obs_ptr, iterations=self.iterations,
                                  burn_in=self.burn_in, seed=self.seed)
        loglik = score(theta, np.ascontiguousarray(phi.T), self.score_docs, self.score_words)
        return math.exp(-loglik / self.n_tokens)
