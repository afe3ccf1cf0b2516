"""The count layouts of the collapsed Gibbs sampler: the topic-word counts in the form each
kernel samples them (:class:`DenseRows`, a dense word-major array, for the dense kernel;
:class:`WordLists`, one sorted list of packed (count, topic) entries per word, for the sparse
kernel and :class:`AliasWordLists` for the alias kernel), each with its own topic totals and
scratch (a :class:`Replica`: the shared counts, a thread's view of them, or a Dask worker's
copy of its word slices), and the priors as the kernels take them (:class:`Priors`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldacli import _cgs
from ldacli.corpora.counts import histogram, merge_histograms
from ldacli.methods.cgs.shard import Shard, document_lists, slice_runs, topic_bits

MH_STEPS = 2
# Word-list entries spread out at a time when the counts are added to a dense array.
ENTRY_CHUNK = 1 << 18


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
    bits = topic_bits(n_topics)
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


@dataclass(frozen=True)
class Priors:
    """The priors as the kernels take them: ``alpha`` (K,) float64; the topic-word prior
    ``beta_kw = beta + extra_kw`` as ``beta``, ``beta_sum`` (K,) float64 (each topic's
    ``sum_w beta_kw``) and the extra mass by word, ``extra_ptr`` (V+1,) int64, ``extra_topics``
    (E,) int32, ``extra`` (E,) float64 (:meth:`~ldacli.topic_word_prior.TopicWordPrior.by_word`);
    for the dense kernel, :attr:`rows`."""

    alpha: np.ndarray
    beta: float
    beta_sum: np.ndarray
    extra_ptr: np.ndarray
    extra_topics: np.ndarray
    extra: np.ndarray
    # what is made of them once (:attr:`rows`), shared with the copies that change beta_sum alone
    # (:func:`~ldacli.methods.cgs.sampler.block_totals`, a block's of a corpus of > 2^31 tokens)
    made: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, alpha, beta: float, beta_sum: np.ndarray, extra: tuple[np.ndarray, np.ndarray, np.ndarray]
           ) -> "Priors":
        """``extra``: the (ptr, topics, extra) of :func:`~ldacli.topic_word_prior.extra_by_word`."""
        return cls(np.ascontiguousarray(alpha, dtype=np.float64), float(beta),
                   np.ascontiguousarray(beta_sum, dtype=np.float64), *extra)

    @property
    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The prior as the dense kernel reads it: ``(row, rows)``, ``rows`` (R, K) float64 the
        ``beta_kw`` of each of the R words with extra mass, ``row`` (V,) int32 each word's row
        (-1: none, ``beta`` alone). Reading a row costs what reading the word's counts does,
        however many cells it has; putting its cells into a row of ``beta`` for each of the
        word's runs of tokens cost 1.6 s of 3.2 (a model of 2 M tokens, K=100) and 3.3 s of 4.9
        (100 M tokens, whose words have cells in more topics) in 100 sweeps of a night of
        200,000 tokens. An update samples with the dense kernel only where its words' cells
        fill half the rows or more (``DENSE_PRIOR_SHARE``), so the rows take about 4/3 of
        the cells' 12 bytes each."""
        if "rows" not in self.made:
            counts = np.diff(self.extra_ptr)
            words = np.flatnonzero(counts)
            row = np.full(counts.size, -1, np.int32)
            row[words] = np.arange(words.size, dtype=np.int32)
            rows = np.full((words.size, self.alpha.size), self.beta)
            rows[np.repeat(np.arange(words.size), counts[words]), self.extra_topics] = self.beta + self.extra
            self.made["rows"] = row, rows
        return self.made["rows"]


def _word_lists(parts, V: int, K: int, layout: ListLayout):
    """Per-word packed (topic, count) lists sorted by count (largest first), then topic, from
    the word-topic counts ``parts`` (:meth:`Replica.__init__`): a range of words at a time, so
    that the sort's scratch stays about :data:`ENTRY_CHUNK` entries."""
    wt = np.zeros(layout.word_ptr[-1], layout.dtype)
    lengths = np.zeros(V, np.int32)
    for codes, counts in parts:
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

    def __init__(self, V: int, K: int, parts: Iterable[tuple[np.ndarray, np.ndarray]],
                 layout: ListLayout | np.ndarray | None = None):
        """The word-topic counts ``parts`` in this layout: ``(codes, counts)`` as
        :func:`~ldacli.methods.cgs.shard.word_topic_pairs` gives them, in parts of whole words
        in increasing order (:func:`~ldacli.methods.cgs.shard.word_topic_pair_parts`), put in
        place a part at a time; ``layout`` (:meth:`layout_for`) where the layout needs one."""
        nk = np.zeros(K, np.int64)

        def counted():
            for codes, counts in parts:
                nk[:] += np.bincount(codes % K, weights=counts, minlength=K).astype(np.int64)
                yield codes, counts
        self._fill(counted(), V, K, layout)
        self.nk = nk.astype(np.int32)
        self._scratch(K)

    @classmethod
    def empty(cls, V: int, K: int, layout: ListLayout | np.ndarray | None = None) -> "Replica":
        """A replica with no counts yet, which :meth:`set_count_arrays` of its word slices fill
        (the Dask client's copy of the counts, gathered slice by slice for the model)."""
        return cls(V, K, [], layout)

    def sharing(self) -> "Replica":
        """A replica that samples this one's word-topic counts in place, with its own topic
        totals and scratch: a thread's, for the blocks of a round."""
        replica = type(self).__new__(type(self))
        replica.nk = self.nk.copy()
        replica._share(self)
        replica._scratch(self.nk.size)
        return replica

    @staticmethod
    def layout_for(freq: np.ndarray, n_topics: int) -> ListLayout | np.ndarray | None:
        """Where the counts of words of frequencies ``freq`` go (None: nothing to decide)."""
        return None

    @classmethod
    def shard(cls, words: np.ndarray, z: np.ndarray, ptr: np.ndarray, lo: int, rng: np.random.Generator,
              slices: np.ndarray) -> Shard:
        """The :class:`~ldacli.methods.cgs.shard.Shard` of these tokens, topics, documents and
        stream, with what this layout's kernel needs of it for the word slices ``slices``:
        ``runs`` (:func:`~ldacli.methods.cgs.shard.slice_runs`)."""
        return Shard(words, z, ptr, lo, rng, slice_runs(words, ptr, slices))

    def _scratch(self, K: int) -> None:
        self.ndk = np.zeros(K, np.int32)

    def _fill(self, parts, V: int, K: int, layout: ListLayout | np.ndarray | None) -> None:
        raise NotImplementedError

    def _share(self, source: "Replica") -> None:
        raise NotImplementedError

    def sweep(self, shard: Shard, part: int, priors: Priors) -> None:
        """Sample ``shard``'s tokens of word slice ``part`` against these counts (the one call of
        a block, on threads and Dask workers alike)."""
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

    def count_histogram(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The histogram (:func:`~ldacli.corpora.counts.histogram`, one column) of the non-zero
        word-topic counts."""
        raise NotImplementedError

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The non-zero word-topic cells, word by word: their words, topics and counts (int32 each)."""
        raise NotImplementedError

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """(E,) int32: the counts of the cells (``words[i]``, ``topics[i]``)."""
        raise NotImplementedError

    def cell_parts(self):
        """:meth:`cells` a range of whole words at a time, in increasing order of word."""
        yield self.cells()

    def add_to(self, out: np.ndarray, first: int = 0) -> None:
        """Add the counts of topics ``first`` to ``first + len(out)`` to ``out`` (those topics'
        rows of a (K, V) float64 array, topic-major), in place."""
        raise NotImplementedError


class DenseRows(Replica):
    """Counts as a dense (V, K) int32 array, word-major: the dense sampler's. Its layout
    (:meth:`layout_for`) is ``used``, the words with tokens in the corpus, the only rows that
    can hold counts (a token keeps its word), which what reads the counts whole visits (an
    update's night has tokens of 39,000 of the 200,000 words of a model of 100 M tokens)."""

    kind = "dense"

    @staticmethod
    def layout_for(freq, n_topics):
        return np.flatnonzero(freq)

    def _fill(self, parts, V, K, layout):
        self.nwk = np.zeros(V * K, np.int32)
        for codes, counts in parts:
            self.nwk[codes] = counts
        self.nwk = self.nwk.reshape(V, K)
        self.used = np.arange(V) if layout is None else layout

    def _share(self, source):
        self.nwk, self.used = source.nwk, source.used

    def _held(self) -> np.ndarray:
        """The rows that can hold counts (``used``), as a (words, K) array."""
        return self.nwk if self.used.size == self.nwk.shape[0] else self.nwk[self.used]

    def _scratch(self, K):
        super()._scratch(K)
        self.work = np.zeros(2 * K)

    def sweep(self, shard, part, priors):
        p = priors
        _cgs.dense_sweep(shard.words, shard.runs, shard.z, self.nwk, self.nk, p.alpha, p.beta, p.beta_sum, *p.rows,
                         self.ndk, self.work, shard.rng, part)

    def _range_of(self, source, lo, hi):
        self.nwk = source.nwk[lo:hi]
        self.used = source.used[(source.used >= lo) & (source.used < hi)] - lo

    def count_arrays(self):
        return {"rows": self.nwk}

    def set_count_arrays(self, arrays):
        np.copyto(self.nwk, arrays["rows"])

    def word_topic_counts(self):
        return self.nwk.copy()

    def count_histogram(self):
        held = self._held()
        return histogram(held[held > 0].reshape(-1, 1))

    def cells(self):
        held = self._held()
        at, topics = np.nonzero(held)
        words = at if held is self.nwk else self.used[at]
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

    def _fill(self, parts, V, K, layout):
        self.word_ptr, self.bits = layout.word_ptr, layout.bits
        self.wt, self.wt_len = _word_lists(parts, V, K, layout)

    def _share(self, source):
        self.word_ptr, self.bits, self.wt, self.wt_len = source.word_ptr, source.bits, source.wt, source.wt_len

    def _scratch(self, K):
        super()._scratch(K)
        self.doc_topics = np.zeros(2 * K, np.int32)
        self.work = np.zeros(4 * K)

    def sweep(self, shard, part, priors):
        p = priors
        if shard.lists is None:  # made at the shard's first sweep, from its topics as they are then
            shard.lists = document_lists(shard.ptr, shard.z, self.nk.size)
        lists = shard.lists
        _cgs.sparse_sweep(shard.words, shard.runs, shard.z, self.word_ptr, self.wt, self.wt_len, self.bits, self.nk,
                          p.alpha, p.beta, p.beta_sum, p.extra_ptr, p.extra_topics, p.extra, self.ndk, self.doc_topics,
                          lists.ptr, lists.length, lists.entries, self.work, shard.rng, part)

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
        nwk = np.zeros((self.wt_len.size, self.nk.size), np.int32)
        for words, topics, counts in self.cell_parts():
            nwk[words, topics] = counts
        return nwk

    def count_histogram(self):
        return merge_histograms([histogram(counts.reshape(-1, 1)) for _, _, counts in self.cell_parts()])

    def cells(self):
        n = int(self.wt_len.sum(dtype=np.int64))
        out = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int32)
        at = 0
        for part in self.cell_parts():
            for whole, piece in zip(out, part):
                whole[at:at + piece.size] = piece
            at += part[0].size
        return out

    def add_to(self, out, first=0):
        rows = out.shape[0]
        for words, topics, counts in self.cell_parts():
            if first or rows < self.nk.size:
                inside = (topics >= first) & (topics < first + rows)
                topics, words, counts = topics[inside] - first, words[inside], counts[inside]
            out[topics, words] += counts

    def counts_at(self, words, topics):
        """Looked up for the entries of the asked words that have any, among the cells asked
        sorted (a prior's are: then no sort), so that asking for many cells of words the tokens
        never touch (an update's old evidence) costs the tokens' entries, not the cells asked."""
        K = np.int64(self.nk.size)
        cells, inverse = words.astype(np.int64) * K + topics, None
        if cells.size > 1 and not bool(np.all(cells[1:] > cells[:-1])):
            cells, inverse = np.unique(cells, return_inverse=True)
        out = np.zeros(cells.size, np.int32)
        if not cells.size:
            return out
        asked = cells // K
        ids = np.flatnonzero(self.wt_len)
        ids = ids[np.isin(ids, asked[np.r_[True, asked[1:] != asked[:-1]]], assume_unique=True)]
        idx, lens = _list_slots(self.word_ptr, self.wt_len, ids)
        found, counts = unpack_entries(self.wt[idx], self.bits)
        codes = np.repeat(ids.astype(np.int64), lens) * K + found
        at = np.minimum(np.searchsorted(cells, codes), cells.size - 1)
        hit = cells[at] == codes
        out[at[hit]] = counts[hit]
        return out if inverse is None else out[inverse.reshape(-1)]

    def cell_parts(self):
        """The lists' entries, word by word, a range of words at a time (about
        :data:`ENTRY_CHUNK` entries; whole words): their words, topics and counts (int32 each),
        so that no array of all of them wider than their counts is made on the way."""
        ends = np.cumsum(self.wt_len, dtype=np.int64)
        cuts = np.unique(np.searchsorted(ends, np.arange(0, int(ends[-1]) if ends.size else 0, ENTRY_CHUNK),
                                         side="right"))
        for lo, hi in zip(cuts, list(cuts[1:]) + [ends.size]):
            words = np.arange(lo, hi, dtype=np.int32)
            idx, lens = _list_slots(self.word_ptr, self.wt_len, words)
            topics, counts = unpack_entries(self.wt[idx], self.bits)
            yield np.repeat(words, lens), topics, counts


class AliasWordLists(WordLists):
    """The sorted word lists of :class:`WordLists`, sampled by the alias sampler: word by word,
    so a shard also keeps its tokens grouped by word."""

    kind = "alias"

    @classmethod
    def shard(cls, words, z, ptr, lo, rng, slices):
        """Besides ``runs``: ``order``, the shard's tokens grouped by word, ``order_cuts``, where
        each word slice's tokens start in ``order``, and ``doc_of``, each token's document."""
        shard = super().shard(words, z, ptr, lo, rng, slices)
        shard.order = np.argsort(words, kind="stable").astype(np.int32)
        shard.order_cuts = np.searchsorted(words[shard.order], slices)
        shard.doc_of = np.repeat(np.arange(ptr.size - 1, dtype=np.int32), np.diff(ptr))
        return shard

    def _scratch(self, K):
        Replica._scratch(self, K)
        self.mark = np.zeros(K, np.int32)
        self.iwork = np.zeros(5 * K, np.int32)
        self.work = np.zeros(4 * K)
        self.ndk_shard = np.zeros((0, K), np.int32)

    def sweep(self, shard, part, priors):
        runs, cuts, p = shard.runs, shard.order_cuts, priors
        if self.ndk_shard.shape[0] < runs.shape[0]:
            self.ndk_shard = np.zeros((runs.shape[0], self.nk.size), np.int32)
        _cgs.alias_sweep(shard.words, runs, shard.z, shard.order[cuts[part]:cuts[part + 1]], shard.doc_of,
                         self.word_ptr, self.wt, self.wt_len, self.bits, self.nk, p.alpha, p.beta, p.beta_sum,
                         p.extra_ptr, p.extra_topics, p.extra, self.ndk_shard, self.ndk, self.mark, self.iwork,
                         self.work, MH_STEPS, shard.rng)


REPLICAS: dict[str, type[Replica]] = {cls.kind: cls for cls in (DenseRows, WordLists, AliasWordLists)}


def replica_class(kind: str) -> type[Replica]:
    """The replica (count layout and kernels) of sampler ``kind``."""
    return REPLICAS[kind]
