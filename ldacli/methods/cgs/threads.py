"""The collapsed Gibbs sampler state, split into blocks that threads sample in parallel.

The partition scheme (as tomotopy's default parallel scheme, and Yan et al. 2009 on GPUs):
documents are cut into P shards of about equal token counts and the vocabulary into P slices of
about equal token counts (both depend on the corpus and P only, never on the number of
threads). A sweep is P rounds; in round r, shard s samples its tokens of slice (s + r) mod P.
The P blocks of a round touch disjoint documents and disjoint words, so they sample one shared
set of word-topic counts in place, each exact for its words; only the topic totals are shared
by all blocks, so each block starts from its own copy of them as they were at the round's start,
and their changes are summed after the round (integer additions, in any order). Every shard has
its own random stream, spawned from the run's seed sequence, and draws from it in the same order
whatever the threads. So the same seed gives the same topics for any ``threads``; with one shard
this is the exact sequential sampler.

There is no copy of the counts per thread and nothing to merge after a sweep; what is serial is
adding P vectors of K totals after each round.
"""

from __future__ import annotations

import queue

import numpy as np

from ldacli.corpora.counts import value_counts
from ldacli.errors import LdacliError
from ldacli.methods.cgs.layouts import replica_class
from ldacli.methods.cgs.sampler import SAMPLERS, OneCopyOfCounts
from ldacli.methods.cgs.shard import (HISTOGRAM_CHUNK_CELLS, doc_topic_blocks, doc_topic_cells, merge_doc_histograms,
                                      shard_doc_histograms, shard_log_prior, shard_pointers, sorted_within_documents,
                                      word_topic_pair_parts)
from ldacli.parallel import Pool
from ldacli.partition import shard_ranges, word_slices
from ldacli.topic_word_prior import TopicWordPrior


class ThreadsSampler(OneCopyOfCounts):
    """The threads engine: collapsed Gibbs sampling of ``z`` for a corpus's token arrays, in
    blocks and threads (a :class:`~ldacli.methods.cgs.sampler.Sampler`).

    ``words`` (N,) int32 and ``doc_ptr`` (D+1,) int64 as from ``Corpus.tokens()`` (each
    document's words sorted); ``z`` (N,) int32 is updated in place; ``rngs`` one generator per
    shard (``len(bounds) - 1``). The topic-word prior is ``beta`` plus the extra mass of
    ``prior`` (:func:`~ldacli.topic_word_prior.seed_prior`; None: symmetric).
    """

    def __init__(self, kind: str, words, doc_ptr, z, n_words: int, n_topics: int, alpha, beta: float,
                 bounds: np.ndarray, rngs: list, threads: int = 1, prior: TopicWordPrior | None = None):
        if kind not in SAMPLERS:
            raise LdacliError(f"sampler must be one of {', '.join(SAMPLERS)}, found {kind!r}")
        n_shards = len(bounds) - 1
        if n_shards > 1 and not sorted_within_documents(words, doc_ptr):
            raise LdacliError("the sampler's shards need each document's words in increasing id order")
        self.kind = kind
        self.words, self.doc_ptr, self.z = words, doc_ptr, z
        self.n_docs = doc_ptr.size - 1
        self.V, self.K = n_words, n_topics
        self._set_prior(alpha, beta, prior)
        self.rngs = rngs
        freq = value_counts(words, n_words)
        self.slices = word_slices(freq, n_shards)
        replica = replica_class(kind)
        self.shards = [replica.shard(words[r.lo:r.hi], z[r.lo:r.hi], shard_pointers(doc_ptr, r), r.lo, rng, self.slices)
                       for r, rng in zip(shard_ranges(bounds, doc_ptr[bounds]), rngs)]
        threads = max(1, min(threads, n_shards))
        self.shared = replica(n_words, n_topics, word_topic_pair_parts(words, z, n_topics, freq),
                              replica.layout_for(freq, n_topics))
        # each thread samples the shared counts with its own totals and scratch
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(threads):
            self._free.put(self.shared.sharing())
        self.pool = Pool(threads)  # (the snapshots' merges run on it too)

    def _run_block(self, s: int, j: int, start: np.ndarray) -> np.ndarray:
        """Sample block (shard ``s``, slice ``j``) from the round's topic totals ``start``;
        returns the change of the totals."""
        worker = self._free.get()
        try:
            np.copyto(worker.nk, start)
            worker.sweep(self.shards[s], j, self.priors)
            return worker.nk - start
        finally:
            self._free.put(worker)

    def sweep(self) -> None:
        P = len(self.shards)
        for r in range(P):
            start = self.shared.nk.copy()
            blocks = [(s, (s + r) % P, start) for s in range(P)]
            deltas = self.pool.map(lambda b: self._run_block(*b), blocks)
            self.shared.nk += np.sum(deltas, axis=0, dtype=np.int32)

    # What the method reads of the state (the Dask engine answers the same questions, with the
    # same numbers, from its workers): histograms and sums that its parts add up to exactly.

    def _each_shard(self, work):
        """``work(s)`` for every shard ``s``, in shard order, the next shards' computed on the
        pool's threads while the caller takes one (the kernels they call release the GIL)."""
        return self.pool.ahead(work, range(len(self.shards)))

    def doc_log_priors(self, alpha: np.ndarray) -> list[float]:
        """:func:`shard_log_prior` of every shard, in shard order."""
        return list(self._each_shard(lambda s: shard_log_prior(self.shards[s].ptr, self.shards[s].z, alpha)))

    def doc_histograms(self) -> tuple[tuple, tuple]:
        """:func:`shard_doc_histograms` of the whole corpus (its shards', merged)."""
        return merge_doc_histograms(list(self._each_shard(
            lambda s: shard_doc_histograms(self.shards[s].ptr, self.shards[s].z, self.K, self.shards[s].lists))))

    def doc_topic_blocks(self, cells: int = HISTOGRAM_CHUNK_CELLS):
        """:func:`doc_topic_blocks` of the corpus: the model's theta is made from them."""
        return doc_topic_blocks(self.doc_ptr, self.z, self.K, cells)

    def doc_topic_cell_parts(self):
        """:func:`doc_topic_cells` of each shard, in shard order."""
        first = np.cumsum([0] + [sh.ptr.size - 1 for sh in self.shards])
        return self._each_shard(lambda s: doc_topic_cells(self.shards[s], self.K, int(first[s])))

    def rng_states(self) -> list[dict]:
        """Every shard's stream's state, in shard order."""
        return [sh.rng.bit_generator.state for sh in self.shards]

    def checkpoint(self, path: str, iteration: int) -> tuple[list[dict], dict[str, np.ndarray]]:
        """The shards' part of a checkpoint: their streams' states and every token's topic ``z``."""
        return self.rng_states(), {"z": self.z}

    def committed(self) -> None:
        """Nothing to do: the checkpoint holds the whole state."""

    def close(self) -> None:
        self.pool.close()
