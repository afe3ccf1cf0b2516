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
from dataclasses import dataclass
from typing import ClassVar
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.special import gammaln

from ldacli import _cgs
from ldacli.counts import doc_topic_counts, histogram, merge_histograms
from ldacli.errors import LdacliError
from ldacli.partition import word_slices
from ldacli.topic_word_prior import TopicWordPrior, extra_by_word, topic_sums

SAMPLERS = ("dense", "sparse", "alias")
MH_STEPS = 2
# Word-list entries spread out at a time when the counts are added to a dense array.
ENTRY_CHUNK = 1 << 18


# Topics each word's tokens start on from RESTRICTED_START_FROM topics (FirstTopics): a random
# start that puts every frequent word on all K topics fills every word's list, and the sparse
# sampler's first twenty sweeps cost 1.9 times a later sweep's at K=1000; starting each word on
# 16 topics, 1.14 times, and a 200-sweep run is 10% shorter at the same held-out perplexity
# (20NG, four seeds). With fewer topics the words' random sets overlap more, and the start
# costs held-out perplexity (about 1% at K=100 and K=400 on 20NG), so those runs start as before.
START_TOPICS = 16
RESTRICTED_START_FROM = 1000
# Tokens whose draws FirstTopics.skip draws at a time.
SKIP_CHUNK = 1 << 22


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
        """The first topics (int32) of the next ``words.size`` tokens, whose words are ``words``."""
        j = self.rng.integers(0, self.m, size=words.size, dtype=np.int32)
        return j if self.table is None else self.table[words, j]

    def skip(self, n_tokens: int) -> None:
        """Pass over the next ``n_tokens`` tokens' draws."""
        for at in range(0, n_tokens, SKIP_CHUNK):
            self.rng.integers(0, self.m, size=min(SKIP_CHUNK, n_tokens - at), dtype=np.int32)


def sorted_within_documents(words: np.ndarray, doc_ptr: np.ndarray) -> bool:
    """Whether each document's words are in increasing id order (``Corpus.tokens`` gives them
    so), which the slices need: a document's tokens of a slice are then one run."""
    falls = words[1:] < words[:-1]
    starts = doc_ptr[1:-1]
    falls[starts[(starts > 0) & (starts < words.size)] - 1] = False
    return not falls.any()


# Where dense beats sparse (``benchmarks/auto_rules.py``, README "Performance", default shards):
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


def _list_slots(word_ptr: np.ndarray, wt_len: np.ndarray, word_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the entries of the words ``word_ids``'s lists, and the lists' lengths."""
    lens = wt_len[word_ids].astype(np.int64)
    starts = word_ptr[word_ids]
    within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    return np.repeat(starts, lens) + within, lens.astype(np.int32)


@dataclass(frozen=True)
class ListLayout:
    """Where the packed word lists live: ``word_ptr`` (V+1,) int64, word w's list starting at
    ``word_ptr[w]`` with capacity ``word_ptr[w+1] - word_ptr[w]``; each entry
    ``(count << bits) | (2**bits - 1 - topic)`` of ``dtype`` (see ``ext/_cgs.pyx``)."""

    word_ptr: np.ndarray
    bits: int
    dtype: type


def list_layout(freq: np.ndarray, n_topics: int) -> ListLayout:
    """The layout of the word lists for word frequencies ``freq`` (V,): capacity min(K, the
    word's frequency), fixed for the run; uint32 entries when the largest frequency fits beside
    the topic bits, else uint64."""
    word_ptr = np.zeros(freq.size + 1, np.int64)
    np.cumsum(np.minimum(freq, n_topics), out=word_ptr[1:])
    bits = max(1, int(n_topics - 1).bit_length())
    largest = int(freq.max()) if freq.size else 0
    return ListLayout(word_ptr, bits, np.uint32 if largest < 1 << (32 - bits) else np.uint64)


def pack_entries(topics: np.ndarray, counts: np.ndarray, layout: ListLayout) -> np.ndarray:
    """Word-list entries of these topics and counts."""
    dtype = layout.dtype
    return (counts.astype(dtype) << dtype(layout.bits)) | (dtype((1 << layout.bits) - 1) - topics.astype(dtype))


def unpack_entries(entries: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(topics, counts)`` (int32) of word-list entries."""
    mask = entries.dtype.type((1 << bits) - 1)
    return ((mask - (entries & mask)).astype(np.int32), (entries >> entries.dtype.type(bits)).astype(np.int32))


def word_topic_pairs(words: np.ndarray, z: np.ndarray, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """The word-topic counts of tokens ``words`` with topics ``z`` as ``(codes, counts)``: the
    distinct ``word * K + topic`` codes (int64, sorted) and how many tokens have each. The N
    codes are sorted in place, as int32 when they fit: this is the start-up's peak of memory."""
    largest = (int(words.max()) + 1) * n_topics if words.size else 0
    codes = words.astype(np.int32 if largest < 2**31 else np.int64)
    codes *= n_topics
    codes += z
    codes.sort()  # in place: np.unique would sort a copy
    starts = np.flatnonzero(np.concatenate(([codes.size > 0], codes[1:] != codes[:-1])))
    return codes[starts].astype(np.int64), np.diff(np.append(starts, codes.size)).astype(np.int64)


def merge_pairs(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The sum of sets of word-topic counts of :func:`word_topic_pairs` (one per shard, say)."""
    codes, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([p[1] for p in parts]), minlength=codes.size)
    return codes, counts.astype(np.int64)


def shard_layout(doc_ptr: np.ndarray, bounds: np.ndarray) -> list[dict]:
    """The shards of a corpus cut at document ``bounds``: each one's token range ``lo:hi`` and
    its document pointers ``ptr`` (from 0)."""
    shards = []
    for s in range(len(bounds) - 1):
        lo, hi = int(doc_ptr[bounds[s]]), int(doc_ptr[bounds[s + 1]])
        shards.append({"lo": lo, "hi": hi, "ptr": np.ascontiguousarray(doc_ptr[bounds[s]:bounds[s + 1] + 1] - lo)})
    return shards


def slice_runs(words: np.ndarray, ptr: np.ndarray, slices: np.ndarray) -> np.ndarray:
    """Where each document's tokens of each word slice start: (d, P+1) int64, row j the
    positions in ``words`` of document j's first token of slice 0, 1, ..., P-1, then its end
    (each document's words sorted; see ``ext/_cgs.pyx``)."""
    runs = np.empty((ptr.size - 1, slices.size), np.int64)
    _cgs.slice_runs(words, np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(slices, dtype=np.int64),
                    runs)
    return runs


@dataclass(frozen=True)
class Priors:
    """The priors as the kernels take them: ``alpha`` (K,) float64; the topic-word prior
    ``beta_kw = beta + extra_kw`` as ``beta``, ``beta_sum`` (K,) float64 (each topic's
    ``sum_w beta_kw``) and the extra mass by word, ``extra_ptr`` (V+1,) int64, ``extra_topics``
    (E,) int32, ``extra`` (E,) float64 (:meth:`~ldacli.topic_word_prior.TopicWordPrior.by_word`)."""

    alpha: np.ndarray
    beta: float
    beta_sum: np.ndarray
    extra_ptr: np.ndarray
    extra_topics: np.ndarray
    extra: np.ndarray

    @classmethod
    def of(cls, alpha, beta: float, beta_sum: np.ndarray, extra: tuple[np.ndarray, np.ndarray, np.ndarray]
           ) -> "Priors":
        """``extra``: the (ptr, topics, extra) of :func:`~ldacli.topic_word_prior.extra_by_word`."""
        return cls(np.ascontiguousarray(alpha, dtype=np.float64), float(beta),
                   np.ascontiguousarray(beta_sum, dtype=np.float64), *extra)


def sample_block(replica: "Replica", shard: dict, words, z, rng, j: int, priors: Priors) -> None:
    """Sample shard ``shard``'s tokens ``words`` (topics ``z``) of word slice ``j`` against
    ``replica``: the one call of a block, for threads and Dask workers alike."""
    replica.sweep(shard, words, z, rng, j, priors)


def shard_log_prior(ptr: np.ndarray, z: np.ndarray, alpha: np.ndarray) -> float:
    """``log p(z | alpha)`` of one shard's documents (``ptr`` their pointers from 0, ``z`` their
    topics), theta integrated out: ``sum_d [lgamma(A) - lgamma(N_d + A) + sum_k (lgamma(n_dk +
    alpha_k) - lgamma(alpha_k))]`` with ``A = sum(alpha)``, in O(tokens). A run's is the sum of
    its shards', in shard order, wherever they are (threads or Dask workers)."""
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    A = float(alpha.sum())
    lengths = np.diff(ptr)
    ll = lengths.size * gammaln(A) - float(np.sum(gammaln(lengths + A)))
    return ll + _cgs.doc_topic_lgamma(np.ascontiguousarray(ptr, dtype=np.int64), z, alpha,
                                      np.zeros(alpha.size, np.int32))


def document_lists(ptr: np.ndarray, z: np.ndarray, n_topics: int) -> dict[str, np.ndarray]:
    """The sparse sampler's list of each document's topics (in increasing order) and their
    counts, for the documents ``ptr`` (their pointers into ``z``, from 0): ``list_ptr`` (d+1,)
    int64, room for min(K, N_d) topics each, ``list_len`` (d,) int32, ``list_topics`` and
    ``list_counts`` int32. The kernel keeps them from one visit of a document to the next,
    which would otherwise count the document's tokens again for each of its word slices; they
    are made from ``z`` alone (topics in increasing order), so a resumed run's are the same."""
    lengths = np.diff(ptr)
    n_docs = lengths.size
    list_ptr = np.zeros(n_docs + 1, np.int64)
    np.cumsum(np.minimum(lengths, n_topics), out=list_ptr[1:])
    # the document-topic pairs, sorted: the word-topic pairs' helper, with documents for words
    codes, counts = word_topic_pairs(np.repeat(np.arange(n_docs, dtype=np.int32), lengths), z[:ptr[-1]], n_topics)
    docs = codes // n_topics
    list_len = np.bincount(docs, minlength=n_docs).astype(np.int32)
    first = np.zeros(n_docs + 1, np.int64)
    np.cumsum(list_len, out=first[1:])
    at = list_ptr[docs] + np.arange(codes.size) - first[docs]
    list_topics = np.zeros(list_ptr[-1], np.int32)
    list_counts = np.zeros(list_ptr[-1], np.int32)
    list_topics[at] = codes % n_topics
    list_counts[at] = counts
    return {"list_ptr": list_ptr, "list_len": list_len, "list_topics": list_topics, "list_counts": list_counts}


# Document-topic cells counted at a time for their histograms and the model's theta (whole
# documents, at least one).
HISTOGRAM_CHUNK_CELLS = 1 << 20


def doc_topic_blocks(ptr: np.ndarray, z: np.ndarray, n_topics: int, cells: int = HISTOGRAM_CHUNK_CELLS):
    """(first document, (d, K) int32 document-topic counts) of the documents ``ptr`` (their
    pointers into ``z``), about ``cells`` cells at a time (whole documents, at least one), in
    order: no (D, K) count array of them all."""
    step = max(1, cells // n_topics)
    for lo in range(0, ptr.size - 1, step):
        p = ptr[lo:lo + step + 1]
        yield lo, doc_topic_counts(p - p[0], z[p[0]:p[-1]], n_topics)


def shard_doc_histograms(ptr: np.ndarray, z: np.ndarray, n_topics: int) -> tuple[tuple, tuple]:
    """The histograms (:func:`~ldacli.counts.histogram`) of one shard's document-topic counts
    (D, K) and of its document lengths (D, 1), counted a few documents at a time: what learning
    alpha needs of the shard (:func:`~ldacli.priors.alpha_from_histograms`)."""
    parts = [histogram(block) for _, block in doc_topic_blocks(ptr, z, n_topics)]
    return merge_histograms(parts), histogram(np.diff(ptr)[:, None])


def merge_doc_histograms(parts: list[tuple[tuple, tuple]]) -> tuple[tuple, tuple]:
    """The :func:`shard_doc_histograms` of several shards' documents together."""
    return merge_histograms([p[0] for p in parts]), merge_histograms([p[1] for p in parts])


def _word_lists(codes, counts, V: int, K: int, layout: ListLayout):
    """Per-word packed (topic, count) lists sorted by count (largest first), then topic, from
    the counts of :func:`word_topic_pairs` (sorted by word): a range of words at a time, so
    that the sort's scratch stays about :data:`ENTRY_CHUNK` entries."""
    wt = np.zeros(layout.word_ptr[-1], layout.dtype)
    lengths = np.zeros(V, np.int32)
    lo, n = 0, codes.size
    while lo < n:
        hi = min(n, lo + ENTRY_CHUNK)
        if hi < n:  # to the end of the last word's entries
            hi = int(np.searchsorted(codes, (int(codes[hi - 1]) // K + 1) * K))
        w, t, c = codes[lo:hi] // K, (codes[lo:hi] % K).astype(np.int32), counts[lo:hi]
        order = np.lexsort((t, -c, w))
        w, t, c = w[order], t[order], c[order].astype(np.int32)
        starts = np.flatnonzero(np.concatenate(([True], w[1:] != w[:-1])))
        sizes = np.diff(np.append(starts, w.size))
        lengths[w[starts]] = sizes
        within = np.arange(w.size) - np.repeat(starts, sizes)
        wt[layout.word_ptr[w] + within] = pack_entries(t, c, layout)
        lo = hi
    return wt, lengths


class Replica:
    """A set of topic-word counts (the shared one, or a Dask worker's copy) with its own topic
    totals and scratch arrays, in one count layout: :class:`DenseRows` (the dense sampler) or
    :class:`WordLists` (sorted word lists: the sparse sampler, and :class:`AliasWordLists` the
    alias sampler's). A subclass says how its counts are kept, sent and sampled;
    :func:`replica_class` gives the one of a sampler."""

    kind: ClassVar[str]

    def __init__(self, V: int, K: int, pairs: tuple[np.ndarray, np.ndarray], layout: ListLayout | None = None):
        """The counts ``pairs`` (:func:`word_topic_pairs`) in this layout; ``layout``
        (:meth:`layout_for`) where the layout needs one."""
        codes, counts = pairs
        self.nk = np.bincount(codes % K, weights=counts, minlength=K).astype(np.int32)
        self._fill(codes, counts, V, K, layout)
        self._scratch(K)

    @classmethod
    def empty(cls, V: int, K: int, layout: ListLayout | None = None) -> "Replica":
        """A replica with no counts yet, which :meth:`set_count_arrays` of its word slices fill
        (the Dask client's copy of the counts, gathered slice by slice for the model)."""
        return cls(V, K, (np.zeros(0, np.int64), np.zeros(0, np.int64)), layout)

    def sharing(self) -> "Replica":
        """A replica that samples this one's word-topic counts in place, with its own topic
        totals and scratch: a thread's, for the blocks of a round."""
        replica = type(self).__new__(type(self))
        replica.nk = self.nk.copy()
        replica._share(self)
        replica._scratch(self.nk.size)
        return replica

    @staticmethod
    def layout_for(freq: np.ndarray, n_topics: int) -> ListLayout | None:
        """Where the counts of words of frequencies ``freq`` go (None: nothing to decide)."""
        return None

    @classmethod
    def shard_arrays(cls, words: np.ndarray, ptr: np.ndarray, slices: np.ndarray) -> dict:
        """What the sampler needs of a shard besides its tokens and topics: ``runs``
        (:func:`slice_runs`)."""
        return {"runs": slice_runs(words, ptr, slices)}

    def _scratch(self, K: int) -> None:
        self.ndk = np.zeros(K, np.int32)

    def _fill(self, codes, counts, V: int, K: int, layout: ListLayout | None) -> None:
        raise NotImplementedError

    def _share(self, source: "Replica") -> None:
        raise NotImplementedError

    def sweep(self, shard: dict, words, z, rng, part: int, priors: Priors) -> None:
        """Sample shard ``shard``'s tokens ``words`` (topics ``z``) of word slice ``part``."""
        raise NotImplementedError

    def range(self, lo: int, hi: int) -> "Replica":
        """The counts of the words ``lo <= w < hi`` as a replica of their own (word ``lo`` is its
        word 0), sharing this one's memory: a word slice, to query or to move (a Dask worker's
        slice as it travels to the next worker)."""
        part = type(self).__new__(type(self))
        part.nk = np.zeros_like(self.nk)
        part._range_of(self, lo, hi)
        return part

    def _range_of(self, source: "Replica", lo: int, hi: int) -> None:
        raise NotImplementedError

    def count_arrays(self) -> dict[str, np.ndarray]:
        """The arrays that hold the word-topic counts (not the totals), as they are: what
        :meth:`set_count_arrays` of a replica of the same words and layout takes."""
        raise NotImplementedError

    def set_count_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        """Copy :meth:`count_arrays` of another replica (of the same words) into this one."""
        raise NotImplementedError

    def word_topic_counts(self) -> np.ndarray:
        """Dense (V, K) int32 counts."""
        raise NotImplementedError

    def nonzero_word_topic_counts(self) -> np.ndarray:
        """The non-zero word-topic counts (int32, in no particular order)."""
        raise NotImplementedError

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The non-zero word-topic cells: their words, topics and counts (int32 each)."""
        raise NotImplementedError

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """(E,) int32: the counts of the cells (``words[i]``, ``topics[i]``)."""
        raise NotImplementedError

    def add_to(self, out: np.ndarray, first: int = 0) -> None:
        """Add the counts of topics ``first`` to ``first + len(out)`` to ``out`` (those topics'
        rows of a (K, V) float64 array, topic-major), in place."""
        raise NotImplementedError


class DenseRows(Replica):
    """Counts as a dense (V, K) int32 array, word-major: the dense sampler's."""

    kind = "dense"

    def _fill(self, codes, counts, V, K, layout):
        self.nwk = np.zeros(V * K, np.int32)
        self.nwk[codes] = counts
        self.nwk = self.nwk.reshape(V, K)

    def _share(self, source):
        self.nwk = source.nwk

    def _scratch(self, K):
        super()._scratch(K)
        self.work = np.zeros(3 * K)

    def sweep(self, shard, words, z, rng, part, priors):
        p = priors
        _cgs.dense_sweep(words, shard["runs"], z, self.nwk, self.nk, p.alpha, p.beta, p.beta_sum, p.extra_ptr,
                         p.extra_topics, p.extra, self.ndk, self.work, rng, part)

    def _range_of(self, source, lo, hi):
        self.nwk = source.nwk[lo:hi]

    def count_arrays(self):
        return {"rows": self.nwk}

    def set_count_arrays(self, arrays):
        np.copyto(self.nwk, arrays["rows"])

    def word_topic_counts(self):
        return self.nwk.copy()

    def nonzero_word_topic_counts(self):
        return self.nwk[self.nwk > 0]

    def cells(self):
        words, topics = np.nonzero(self.nwk)
        return words.astype(np.int32), topics.astype(np.int32), self.nwk[words, topics]

    def counts_at(self, words, topics):
        return self.nwk[words, topics]

    def add_to(self, out, first=0):
        out += self.nwk[:, first:first + out.shape[0]].T


class WordLists(Replica):
    """Counts as one sorted list of packed (topic, count) entries per word (:class:`ListLayout`,
    ``ext/_cgs.pyx``): the sparse sampler's."""

    kind = "sparse"

    @staticmethod
    def layout_for(freq, n_topics):
        return list_layout(freq, n_topics)

    def _fill(self, codes, counts, V, K, layout):
        self.word_ptr, self.bits = layout.word_ptr, layout.bits
        self.wt, self.wt_len = _word_lists(codes, counts, V, K, layout)

    def _share(self, source):
        self.word_ptr, self.bits, self.wt, self.wt_len = source.word_ptr, source.bits, source.wt, source.wt_len

    def _scratch(self, K):
        super()._scratch(K)
        self.doc_topics = np.zeros(2 * K, np.int32)
        self.work = np.zeros(4 * K)

    def sweep(self, shard, words, z, rng, part, priors):
        p = priors
        if "list_ptr" not in shard:  # made at the shard's first sweep, from its topics as they are then
            shard.update(document_lists(shard["ptr"], z, self.nk.size))
        _cgs.sparse_sweep(words, shard["runs"], z, self.word_ptr, self.wt, self.wt_len, self.bits, self.nk, p.alpha,
                          p.beta, p.beta_sum, p.extra_ptr, p.extra_topics, p.extra, self.ndk, self.doc_topics,
                          shard["list_ptr"], shard["list_len"], shard["list_topics"], shard["list_counts"],
                          self.work, rng, part)

    def _range_of(self, source, lo, hi):
        start, end = source.word_ptr[lo], source.word_ptr[hi]
        self.word_ptr, self.bits = source.word_ptr[lo:hi + 1] - start, source.bits
        self.wt, self.wt_len = source.wt[start:end], source.wt_len[lo:hi]

    def count_arrays(self):
        return {"lens": self.wt_len, "entries": self.wt}

    def set_count_arrays(self, arrays):
        np.copyto(self.wt_len, arrays["lens"])
        np.copyto(self.wt, arrays["entries"])

    def word_topic_counts(self):
        V, K = self.wt_len.size, self.nk.size
        nwk = np.zeros((V, K), np.int32)
        rows, idx = self._entries()
        topics, counts = unpack_entries(self.wt[idx], self.bits)
        nwk[rows, topics] = counts
        return nwk

    def nonzero_word_topic_counts(self):
        return unpack_entries(self.wt[self._entries()[1]], self.bits)[1]

    def cells(self):
        rows, idx = self._entries()
        return (rows.astype(np.int32), *unpack_entries(self.wt[idx], self.bits))

    def add_to(self, out, first=0):
        # a range of words at a time, so that the spread entries stay ~ENTRY_CHUNK
        rows = out.shape[0]
        ends = np.cumsum(self.wt_len, dtype=np.int64)
        cuts = np.unique(np.searchsorted(ends, np.arange(0, int(ends[-1]) if ends.size else 0, ENTRY_CHUNK),
                                         side="right"))
        for lo, hi in zip(cuts, list(cuts[1:]) + [ends.size]):
            words = np.arange(lo, hi)
            idx, lens = _list_slots(self.word_ptr, self.wt_len, words)
            topics, counts = unpack_entries(self.wt[idx], self.bits)
            words = np.repeat(words, lens)
            if first or rows < self.nk.size:
                inside = (topics >= first) & (topics < first + rows)
                topics, words, counts = topics[inside] - first, words[inside], counts[inside]
            out[topics, words] += counts

    def counts_at(self, words, topics):
        idx, lens = _list_slots(self.word_ptr, self.wt_len, words)
        found, counts = unpack_entries(self.wt[idx], self.bits)
        cell = np.repeat(np.arange(words.size), lens)
        hit = found == topics[cell]
        out = np.zeros(words.size, np.int32)
        out[cell[hit]] = counts[hit]
        return out

    def _entries(self):
        lengths = self.wt_len.astype(np.int64)
        rows = np.repeat(np.arange(lengths.size), lengths)
        starts = np.repeat(self.word_ptr[:-1], lengths)
        within = np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return rows, starts + within


class AliasWordLists(WordLists):
    """The sorted word lists of :class:`WordLists`, sampled by the alias sampler: word by word,
    so a shard also keeps its tokens grouped by word."""

    kind = "alias"

    @classmethod
    def shard_arrays(cls, words, ptr, slices):
        """Besides ``runs``: ``order``, the shard's tokens grouped by word, ``order_cuts``, where
        each word slice's tokens start in ``order``, and ``doc_of``, each token's document."""
        order = np.argsort(words, kind="stable").astype(np.int32)
        return {**super().shard_arrays(words, ptr, slices), "order": order,
                "order_cuts": np.searchsorted(words[order], slices),
                "doc_of": np.repeat(np.arange(ptr.size - 1, dtype=np.int32), np.diff(ptr))}

    def _scratch(self, K):
        Replica._scratch(self, K)
        self.mark = np.zeros(K, np.int32)
        self.iwork = np.zeros(5 * K, np.int32)
        self.work = np.zeros(4 * K)
        self.ndk_shard = np.zeros((0, K), np.int32)

    def sweep(self, shard, words, z, rng, part, priors):
        runs, cuts, p = shard["runs"], shard["order_cuts"], priors
        if self.ndk_shard.shape[0] < runs.shape[0]:
            self.ndk_shard = np.zeros((runs.shape[0], self.nk.size), np.int32)
        _cgs.alias_sweep(words, runs, z, shard["order"][cuts[part]:cuts[part + 1]], shard["doc_of"], self.word_ptr,
                         self.wt, self.wt_len, self.bits, self.nk, p.alpha, p.beta, p.beta_sum, p.extra_ptr,
                         p.extra_topics, p.extra, self.ndk_shard, self.ndk, self.mark, self.iwork, self.work,
                         MH_STEPS, rng)


REPLICAS: dict[str, type[Replica]] = {cls.kind: cls for cls in (DenseRows, WordLists, AliasWordLists)}


def replica_class(kind: str) -> type[Replica]:
    """The replica (count layout and kernels) of sampler ``kind``."""
    return REPLICAS[kind]


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


class ShardedSampler(UnderPriors):
    """Collapsed Gibbs sampling of ``z`` for a corpus's token arrays, in blocks and threads.

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
        freq = np.bincount(words, minlength=n_words)
        self.slices = word_slices(freq, n_shards)
        self.shards = shard_layout(doc_ptr, bounds)
        replica = replica_class(kind)
        for shard in self.shards:
            shard.update(replica.shard_arrays(words[shard["lo"]:shard["hi"]], shard["ptr"], self.slices))
        threads = max(1, min(threads, n_shards))
        self.shared = replica(n_words, n_topics, word_topic_pairs(words, z, n_topics),
                              replica.layout_for(freq, n_topics))
        # each thread samples the shared counts with its own totals and scratch
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(threads):
            self._free.put(self.shared.sharing())
        self._pool = ThreadPoolExecutor(threads) if threads > 1 else None

    @property
    def counts(self) -> Replica:
        """The topic-word counts after the last sweep."""
        return self.shared

    def _run_block(self, s: int, j: int, start: np.ndarray) -> np.ndarray:
        """Sample block (shard ``s``, slice ``j``) from the round's topic totals ``start``;
        returns the change of the totals."""
        shard = self.shards[s]
        lo, hi = shard["lo"], shard["hi"]
        worker = self._free.get()
        try:
            np.copyto(worker.nk, start)
            sample_block(worker, shard, self.words[lo:hi], self.z[lo:hi], self.rngs[s], j, self.priors)
            return worker.nk - start
        finally:
            self._free.put(worker)

    def sweep(self) -> None:
        P = len(self.shards)
        for r in range(P):
            start = self.shared.nk.copy()
            blocks = [(s, (s + r) % P, start) for s in range(P)]
            if self._pool is None:
                deltas = [self._run_block(*b) for b in blocks]
            else:
                deltas = list(self._pool.map(lambda b: self._run_block(*b), blocks))
            self.shared.nk += np.sum(deltas, axis=0, dtype=np.int32)

    # What the method reads of the state (a Dask sampler answers the same questions, with the
    # same numbers, from its workers): histograms and sums that its parts add up to exactly.

    def topic_totals(self) -> np.ndarray:
        """(K,) int64: the tokens of each topic."""
        return self.shared.nk.astype(np.int64)

    def word_histogram(self) -> tuple:
        """The histogram of the non-zero word-topic counts (one column)."""
        return histogram(self.shared.nonzero_word_topic_counts().reshape(-1, 1))

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """The word-topic counts of the cells (``words[i]``, ``topics[i]``)."""
        return self.shared.counts_at(words, topics)

    def doc_log_priors(self, alpha: np.ndarray) -> list[float]:
        """:func:`shard_log_prior` of every shard, in shard order."""
        return [shard_log_prior(sh["ptr"], self.z[sh["lo"]:sh["hi"]], alpha) for sh in self.shards]

    def doc_histograms(self) -> tuple[tuple, tuple]:
        """:func:`shard_doc_histograms` of the whole corpus (its shards', merged)."""
        return merge_doc_histograms([shard_doc_histograms(sh["ptr"], self.z[sh["lo"]:sh["hi"]], self.K)
                                     for sh in self.shards])

    def doc_topic_blocks(self, cells: int = HISTOGRAM_CHUNK_CELLS):
        """:func:`doc_topic_blocks` of the corpus: the model's theta is made from them."""
        return doc_topic_blocks(self.doc_ptr, self.z, self.K, cells)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
