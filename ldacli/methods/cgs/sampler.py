"""The collapsed Gibbs sampler's engines and what they share: :class:`Sampler`, the one seam
between the method and an engine (the threads engine,
:class:`~ldacli.methods.cgs.threads.ThreadsSampler`, and the Dask engine,
:class:`~ldacli.methods.cgs.dask_client.DaskSampler`, both implement it, with the same numbers);
the sampler kinds and the rule that picks one; the first topics (drawn alike on threads and on a
cluster's workers); and the priors they sample under.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Protocol, runtime_checkable

import numpy as np

from ldacli.errors import LdacliError
from ldacli.methods.cgs.layouts import Priors, Replica
from ldacli.partition import WIDE_SHARD_TOKENS, ShardRange
from ldacli.topic_word_prior import TopicWordPrior, extra_by_word, topic_sums

SAMPLERS = ("dense", "sparse", "alias")
# The most tokens a corpus may have for its blocks to sample against its topic totals as they
# are (the kernels count them in 32 bits); past it, against the totals less a base (wide_totals).
NARROW_TOKENS = int(np.iinfo(np.int32).max)


# Topics each word's tokens start on from RESTRICTED_START_FROM topics (FirstTopics): a random
# start that puts every frequent word on all K topics fills every word's list, and the sparse
# sampler's first twenty sweeps cost 1.9 times a later sweep's at K=1000; starting each word on
# 16 topics, 1.14 times, and a 200-sweep run is 10% shorter at the same held-out perplexity
# (20NG, four seeds). With fewer topics the words' random sets overlap more, and the start
# costs held-out perplexity (about 1% at K=100 and K=400 on 20NG), so those runs start as before.
START_TOPICS = 16
RESTRICTED_START_FROM = 1000
# Tokens whose draws FirstTopics draws (and skips) at a time.
SKIP_CHUNK = 1 << 20


class FirstTopics:
    """The run's first topics, drawn from stream 0 (``rng``), the same wherever they are drawn:
    by the tokens in corpus order (``draw``), or on a cluster's worker, which skips the draws
    of the tokens before its shards (``skip``). From ``RESTRICTED_START_FROM`` topics on, each
    word first draws ``START_TOPICS`` topics (with repeats) and each of its tokens starts on
    one of them; with fewer, each token starts on any topic. Either start leads to the same
    chain; the restricted one puts a word on few topics, where a long run ends, so its first
    sweeps cost what later ones do."""

    def __init__(self, rng: np.random.Generator, n_words: int, n_topics: int):
        self.rng = rng
        restricted = n_topics >= RESTRICTED_START_FROM
        self.m = START_TOPICS if restricted else n_topics
        self.table = rng.integers(0, n_topics, size=(n_words, self.m), dtype=np.int32) if restricted else None

    def draw(self, words: np.ndarray) -> np.ndarray:
        """The first topics (int32) of the next ``words.size`` tokens, whose words are ``words``:
        drawn :data:`SKIP_CHUNK` at a time into the array (the stream gives the same numbers
        in chunks as at once), no copy of it on the way."""
        z = np.empty(words.size, np.int32)
        for lo in range(0, words.size, SKIP_CHUNK):
            j = self.rng.integers(0, self.m, size=min(SKIP_CHUNK, words.size - lo), dtype=np.int32)
            z[lo:lo + j.size] = j if self.table is None else self.table[words[lo:lo + j.size], j]
        return z

    def skip(self, n_tokens: int) -> None:
        """Pass over the next ``n_tokens`` tokens' draws."""
        for at in range(0, n_tokens, SKIP_CHUNK):
            self.rng.integers(0, self.m, size=min(SKIP_CHUNK, n_tokens - at), dtype=np.int32)


# Where dense beats sparse (``benchmarks/auto_rules.py``, docs/performance.md, default shards):
# below 12 topics on 20NG's documents (sparse ahead from 12 since it keeps its document lists;
# before them, from 24); on KOS sparse is ahead from 8, on documents of 20 tokens from 24 (by
# 3% or less below); never on long documents (at 1,000 tokens a document, sparse wins from 8
# topics: dense counts a document's tokens again at each of its visits).
DENSE_BELOW = 12
LONG_DOC_TOKENS = 400


def choose_sampler(n_topics: int, tokens_per_doc: float) -> str:
    """The fastest sampler for this many topics and documents of this mean length."""
    if n_topics < DENSE_BELOW and tokens_per_doc < LONG_DOC_TOKENS:
        return "dense"
    return "sparse"


def wide_totals(shards: list[ShardRange], where: str | None = None) -> bool:
    """Whether a corpus cut into ``shards`` has more tokens than the kernels' 32-bit topic totals
    hold (:data:`NARROW_TOKENS`): its totals are then kept in 64 bits and each block samples
    against them less a base (:func:`block_totals`), which a shard of at most
    :data:`~ldacli.partition.WIDE_SHARD_TOKENS` tokens cannot overflow; a larger shard is then
    refused, in one line (``where``: the corpus's name, if any). The one rule of every engine."""
    wide = int(shards[-1].hi) > NARROW_TOKENS
    if wide and max(sh.hi - sh.lo for sh in shards) > WIDE_SHARD_TOKENS:
        raise LdacliError(f"{where + ': ' if where else ''}a shard of more than {WIDE_SHARD_TOKENS:,} tokens in a "
                          f"corpus of more than {NARROW_TOKENS:,}: cut the corpus into more shards")
    return wide


def block_totals(start: np.ndarray, priors: Priors, wide: bool) -> tuple[np.ndarray, Priors]:
    """The topic totals a block starts from as the kernels take them (int32) and the priors to go
    with them, from the round's totals ``start`` (K,) int64: ``start`` itself and ``priors``
    while the corpus fits in 32 bits (``wide`` False, :func:`wide_totals`); else ``min(n_k,
    WIDE_SHARD_TOKENS)``, the base ``n_k - min(n_k, WIDE_SHARD_TOKENS)`` added to the prior's
    sums instead, so that every denominator ``n_k + sum_w beta_kw`` is the 64-bit one."""
    if not wide:
        return start.astype(np.int32), priors
    base = np.maximum(start - WIDE_SHARD_TOKENS, 0)
    return (start - base).astype(np.int32), replace(priors, beta_sum=priors.beta_sum + base)


class UnderPriors:
    """What the threaded and the Dask samplers share: the priors they sample under (``V`` and
    ``K`` set by the sampler), ``alpha``, ``beta`` and ``prior``, the topic-word prior's extra
    mass (a :class:`~ldacli.topic_word_prior.TopicWordPrior`, or None for the symmetric beta),
    and ``priors``, all of them as the kernels take them."""

    V: int
    K: int

    def _set_prior(self, alpha, beta: float, prior: TopicWordPrior | None) -> None:
        if prior is not None and (prior.n_words, prior.n_topics) != (self.V, self.K):
            raise LdacliError(f"topic_word_prior: expected a prior of {self.V} words and {self.K} topics, found one "
                              f"of {prior.n_words} words and {prior.n_topics} topics")
        self.prior = prior if prior is not None and prior.n_cells else None
        self.extra = extra_by_word(self.prior, self.V)
        self.set_priors(alpha, beta)

    def set_priors(self, alpha, beta: float) -> None:
        """New priors for the following sweeps (learned ones, say); the topic-word prior's extra
        mass stays."""
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)
        self.priors = Priors.of(self.alpha, self.beta, topic_sums(self.prior, self.beta, self.V, self.K), self.extra)


class OneCopyOfCounts(UnderPriors):
    """What an engine that holds the one copy of the topic-word counts on this machine,
    ``shared`` (a :class:`~ldacli.methods.cgs.layouts.Replica`), answers from it: the threads
    engine and the engine that trains from disk."""

    shared: Replica

    @property
    def counts(self) -> Replica:
        """The topic-word counts after the last sweep."""
        return self.shared

    def topic_totals(self) -> np.ndarray:
        """(K,) int64: the tokens of each topic."""
        return self.shared.nk.astype(np.int64)

    def word_histogram(self) -> tuple:
        """The histogram of the non-zero word-topic counts (one column)."""
        return self.shared.count_histogram()

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """(E,) int64: the word-topic counts of the cells (``words[i]``, ``topics[i]``)."""
        return self.shared.counts_at(words, topics).astype(np.int64)


@runtime_checkable
class Sampler(Protocol):
    """What the method (:class:`~ldacli.methods.cgs.method.CollapsedGibbs`) calls on an engine,
    and all it calls: an engine is the state of a run's sampler (every token's topic, the counts)
    wherever it lives, and answers with the same numbers, to the bit, whether it samples on
    threads or on a Dask cluster's workers (``tests/test_sampler.py`` runs one conformance test
    on both). Every count it answers is a sum over shards or word slices that adds up exactly,
    in shard order, so where the parts live never changes the result.

    Attributes: ``kind`` (``dense``, ``sparse`` or ``alias``), ``V``, ``K``, ``n_docs``; the
    priors it samples under, ``alpha`` (K,), ``beta``, ``prior`` (the topic-word prior's extra
    mass, or None) and ``priors`` (all of them as the kernels take them, with ``beta_sum``)."""

    kind: str
    V: int
    K: int
    n_docs: int
    alpha: np.ndarray
    beta: float
    prior: TopicWordPrior | None
    priors: Priors

    def sweep(self) -> None:
        """One sweep of every token (P rounds of P blocks). The Dask engine raises
        :class:`~ldacli.methods.cgs.dask_client.ShardsRebuilt` when a lost worker sent the
        state back to its last sync point."""

    def set_priors(self, alpha, beta: float) -> None:
        """New priors for the following sweeps; the topic-word prior's extra mass stays."""

    def topic_totals(self) -> np.ndarray:
        """(K,) int64: the tokens of each topic."""

    def word_histogram(self) -> tuple:
        """The histogram (:func:`~ldacli.corpora.counts.histogram`) of the non-zero word-topic counts."""

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """(E,) int64: the word-topic counts of the cells (``words[i]``, ``topics[i]``)."""

    def doc_log_priors(self, alpha: np.ndarray) -> list[float]:
        """``log p(z | alpha)`` of each shard's documents, in shard order
        (:func:`~ldacli.methods.cgs.shard.shard_log_prior`)."""

    def doc_histograms(self) -> tuple[tuple, tuple]:
        """The histograms of the document-topic counts and of the document lengths
        (:func:`~ldacli.methods.cgs.shard.shard_doc_histograms`, every shard's merged)."""

    def doc_topic_blocks(self, cells: int = ...) -> Iterator[tuple[int, np.ndarray]]:
        """(first document, (d, K) int32 document-topic counts) blocks of about ``cells`` cells
        (or more), covering the documents in order."""

    def doc_topic_cell_parts(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every document's non-zero topic counts as cells, what the snapshots sum: codes ``d *
        K + k`` (int64, increasing) and counts (int32), a shard at a time, in shard order (each
        part's codes above the part's before), so that no copy of them all is made on the way
        (:func:`~ldacli.methods.cgs.shard.doc_topic_cells` of each shard)."""

    @property
    def counts(self) -> Replica:
        """The topic-word counts after the last sweep, in the sampler's layout, with their topic
        totals ``nk``."""

    def rng_states(self) -> list[dict]:
        """Every shard's stream's state, in shard order."""

    def checkpoint(self, path: str, iteration: int) -> tuple[list[dict], dict[str, np.ndarray]]:
        """The shards' part of a checkpoint of sweep ``iteration`` to ``path``: their streams'
        states and the arrays the checkpoint file holds (``z``; or, for a shard folder on a
        cluster, the name of the shard files the workers wrote)."""

    def committed(self) -> None:
        """The checkpoint :meth:`checkpoint` gave the arrays of is written."""

    def close(self) -> None:
        """Release the threads, or the workers' state."""
