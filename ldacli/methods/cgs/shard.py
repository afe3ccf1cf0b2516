"""A shard of the collapsed Gibbs sampler: a run of consecutive documents, its tokens, their
topics and its random stream, with what the kernels need of it (where each document's tokens
of each word slice start; the sparse sampler's lists of each document's topics), and what the
method reads of it (its documents' log prior, document-topic counts and their histograms). The
same on a thread and on a Dask worker.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ldacli import _cgs
from ldacli.corpora.counts import (COUNT_CHUNK_TOKENS, cell_histogram, doc_topic_counts, histogram, merge_histograms,
                                  row_chunks)
from ldacli.partition import ShardRange, word_slices


@dataclass(frozen=True)
class DocumentLists:
    """The sparse sampler's list of each of a shard's documents' topics (in increasing order)
    and their counts: ``ptr`` (d+1,) int64, room for min(K, N_d) topics each, ``length`` (d,)
    int32, and ``entries``, each topic and its count packed in one ``(count << bits) | topic``
    (uint32 when the shard's longest document fits in 32 - bits bits, else uint64; see
    ``ext/_cgs.pyx``), 4 bytes a token where the topics and counts took 8 (:func:`document_lists`).
    The kernel updates them in place."""

    ptr: np.ndarray
    length: np.ndarray
    entries: np.ndarray
    bits: int

    def topics_and_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """``(topics, counts)`` (int32) of :attr:`entries` (those past a list's length are 0)."""
        e = self.entries
        mask, bits = e.dtype.type((1 << self.bits) - 1), e.dtype.type(self.bits)
        return (e & mask).astype(np.int32), (e >> bits).astype(np.int32)


@dataclass(eq=False)
class Shard:
    """A shard as an engine samples it, on a thread or a Dask worker: its tokens' ``words`` (n,)
    int32 and topics ``z`` (n,) int32 (updated in place; on threads a view of the corpus's
    topics), its documents' pointers ``ptr`` (d+1,) int64 from 0, ``lo`` its first token in
    the corpus, its random stream ``rng``, and what the kernels need of it: ``runs`` (d, P+1)
    int32 (:func:`slice_runs`); for the alias sampler ``order``, its tokens grouped by word,
    ``order_cuts``, where each word slice's tokens start in ``order``, and ``doc_of``, each
    token's document; for the sparse sampler ``lists`` (:class:`DocumentLists`), made at the
    shard's first sweep from its topics as they are then (None before). Made by the count
    layout of the run's sampler (:meth:`~ldacli.methods.cgs.layouts.Replica.shard`)."""

    words: np.ndarray
    z: np.ndarray
    ptr: np.ndarray
    lo: int
    rng: np.random.Generator
    runs: np.ndarray
    order: np.ndarray | None = None
    order_cuts: np.ndarray | None = None
    doc_of: np.ndarray | None = None
    lists: DocumentLists | None = None


def topic_bits(n_topics: int) -> int:
    """The low bits of a packed list entry that hold its topic (the word lists' and the document
    lists'): enough for K - 1."""
    return max(1, int(n_topics - 1).bit_length())


def shard_pointers(doc_ptr: np.ndarray, shard: ShardRange) -> np.ndarray:
    """The document pointers (d+1,) int64, from 0, of ``shard`` of a corpus whose documents'
    pointers are ``doc_ptr``."""
    return np.ascontiguousarray(doc_ptr[shard.d_lo:shard.d_hi + 1] - shard.lo, dtype=np.int64)


def sorted_within_documents(words: np.ndarray, doc_ptr: np.ndarray) -> bool:
    """Whether each document's words are in increasing id order (``Corpus.tokens`` gives them
    so), which the slices need: a document's tokens of a slice are then one run. Checked a chunk
    of tokens at a time."""
    starts = np.asarray(doc_ptr[1:-1], np.int64)
    for lo in range(0, max(0, words.size - 1), COUNT_CHUNK_TOKENS):
        hi = min(words.size - 1, lo + COUNT_CHUNK_TOKENS)
        falls = words[lo + 1:hi + 1] < words[lo:hi]  # token i + 1 below token i, i in [lo, hi)
        inside = starts[(starts > lo) & (starts <= hi)]
        falls[inside - 1 - lo] = False  # where a document starts
        if falls.any():
            return False
    return True


def slice_runs(words: np.ndarray, ptr: np.ndarray, slices: np.ndarray) -> np.ndarray:
    """Where each document's tokens of each word slice start: (d, P+1) int32, row j the
    positions in ``words`` of document j's first token of slice 0, 1, ..., P-1, then its end
    (each document's words sorted; see ``ext/_cgs.pyx``)."""
    runs = np.empty((ptr.size - 1, slices.size), np.int32)
    _cgs.slice_runs(words, np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(slices, dtype=np.int64),
                    runs)
    return runs


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


def document_lists(ptr: np.ndarray, z: np.ndarray, n_topics: int) -> DocumentLists:
    """The sparse sampler's list of each document's topics (in increasing order) and their
    counts, for the documents ``ptr`` (their pointers into ``z``, from 0). The kernel keeps
    them from one visit of a document to the next,
    which would otherwise count the document's tokens again for each of its word slices; they
    are made from ``z`` alone (topics in increasing order), so a resumed run's are the same.
    Made a chunk of documents at a time (:data:`LIST_CHUNK_TOKENS` tokens), into the lists."""
    lengths = np.diff(ptr)
    n_docs = lengths.size
    list_ptr = np.zeros(n_docs + 1, np.int64)
    np.cumsum(np.minimum(lengths, n_topics), out=list_ptr[1:])
    bits = topic_bits(n_topics)
    dtype = np.uint32 if int(lengths.max(initial=0)) < 1 << (32 - bits) else np.uint64
    entries = np.zeros(list_ptr[-1], dtype)
    list_len = np.zeros(n_docs, np.int32)
    for lo, hi in row_chunks(ptr, LIST_CHUNK_TOKENS):
        # the chunk's document-topic pairs, sorted: the word-topic pairs' helper, with documents for words
        docs = np.repeat(np.arange(hi - lo, dtype=np.int32), lengths[lo:hi])
        codes, counts = word_topic_pairs(docs, z[ptr[lo]:ptr[hi]], n_topics)
        docs = codes // n_topics
        chunk_len = np.bincount(docs, minlength=hi - lo)
        list_len[lo:hi] = chunk_len
        first = np.cumsum(chunk_len) - chunk_len
        at = list_ptr[lo + docs] + np.arange(codes.size) - first[docs]
        entries[at] = (counts.astype(dtype) << dtype(bits)) | (codes % n_topics).astype(dtype)
    return DocumentLists(list_ptr, list_len, entries, bits)


# Tokens document_lists counts at a time (whole documents): its scratch stays ~40 bytes x this.
LIST_CHUNK_TOKENS = 1 << 18


def document_list_bytes(lengths: np.ndarray, n_topics: int) -> float:
    """What :func:`document_lists` of documents of these lengths take: an entry of 4 bytes (8
    past a document of 2^(32 - bits) tokens) for each of min(K, N_d) topics a document, and 12
    bytes a document."""
    entry = 4.0 if int(np.max(lengths, initial=0)) < 1 << (32 - topic_bits(n_topics)) else 8.0
    return entry * float(np.minimum(lengths, n_topics).sum()) + 12.0 * lengths.size


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


def doc_topic_cells(shard: Shard, n_topics: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero document-topic counts of ``shard``'s documents as cells: codes ``(first + d)
    * K + k`` (int64, increasing; ``first`` the shard's first document in the corpus) and their
    counts (int32). Read off the sparse sampler's lists where the shard has them (no (d, K)
    array), else counted from its topics."""
    if shard.lists is None:
        return cells_of_blocks(((first + lo, block) for lo, block in doc_topic_blocks(shard.ptr, shard.z, n_topics)),
                               n_topics)
    return list_cells(shard.lists, n_topics, first)


def list_cells(lists: DocumentLists, n_topics: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`doc_topic_cells` read off the document lists ``lists``."""
    codes = np.empty(int(lists.length.sum()), np.int64)
    counts = np.empty(codes.size, np.int32)
    n = _cgs.list_cells(lists.ptr, lists.length, lists.entries, lists.bits, n_topics, first, codes, counts)
    return codes[:n], counts[:n]


def cells_of_blocks(blocks, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero cells of (first document, (d, K) int32 counts) ``blocks`` in document order,
    as :func:`doc_topic_cells` gives them."""
    parts = [(np.zeros(0, np.int64), np.zeros(0, np.int32))]
    for lo, block in blocks:
        flat = block.reshape(-1)  # (documents, K) in C order: cell d, k is lo * K + d * K + k
        at = np.flatnonzero(flat)
        parts.append((at + lo * np.int64(n_topics), flat[at].astype(np.int32, copy=False)))
    return np.concatenate([c for c, _ in parts]), np.concatenate([v for _, v in parts])


def shard_doc_histograms(ptr: np.ndarray, z: np.ndarray | None, n_topics: int, lists: DocumentLists | None = None
                         ) -> tuple[tuple, tuple]:
    """The histograms (:func:`~ldacli.corpora.counts.histogram`) of one shard's document-topic counts
    (D, K) and of its document lengths (D, 1): what learning alpha needs of the shard
    (:func:`~ldacli.methods.priors.alpha_from_histograms`). Read off the sparse sampler's
    ``lists`` when the shard has them (its non-zero cells alone), else counted a few documents
    at a time from its topics."""
    lengths = histogram(np.diff(ptr)[:, None])
    if lists is not None:
        codes, counts = list_cells(lists, n_topics, 0)
        return cell_histogram(codes % n_topics, counts, n_topics), lengths
    return merge_histograms([histogram(block) for _, block in doc_topic_blocks(ptr, z, n_topics)]), lengths


def merge_doc_histograms(parts: list[tuple[tuple, tuple]]) -> tuple[tuple, tuple]:
    """The :func:`shard_doc_histograms` of several shards' documents together."""
    return merge_histograms([p[0] for p in parts]), merge_histograms([p[1] for p in parts])


# word_topic_pair_parts: the tokens' codes are sorted a range of words at a time, of about 1 /
# PAIR_RANGES of the tokens (at least PAIR_RANGE_TOKENS), and their runs counted PAIR_CHUNK_TOKENS
# at a time (whole words): the scratch stays ~4 bytes a token / PAIR_RANGES and ~16 bytes x the chunk.
PAIR_RANGES = 8
PAIR_RANGE_TOKENS = 1 << 22
PAIR_CHUNK_TOKENS = 1 << 20


def word_topic_pairs(words: np.ndarray, z: np.ndarray, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """The word-topic counts of tokens ``words`` with topics ``z`` as ``(codes, counts)``: the
    distinct ``word * K + topic`` codes (int64, sorted) and how many tokens have each."""
    return _runs(_sorted_codes(words, z, n_topics))


def word_topic_pair_parts(words: np.ndarray, z: np.ndarray, n_topics: int, freq: np.ndarray):
    """:func:`word_topic_pairs` in parts of whole words, in order, without an array of all the
    tokens' codes or of all the pairs: the codes of a range of words at a time (ranges cut by
    the words' frequencies ``freq``, :data:`PAIR_RANGES` of them), gathered a chunk of tokens at
    a time and sorted, then their runs counted about :data:`PAIR_CHUNK_TOKENS` tokens at a time.
    The start-up's peak of memory, 4 bytes a token / PAIR_RANGES (where the codes fit in int32)."""
    n = words.size
    ranges = word_slices(freq, max(1, min(PAIR_RANGES, n // PAIR_RANGE_TOKENS)))
    dtype = np.int32 if freq.size * n_topics < 2**31 else np.int64
    for first, last in zip(ranges[:-1], ranges[1:]):
        if ranges.size == 2:  # one range: every token
            codes = _sorted_codes(words, z, n_topics)
        else:
            parts = []
            for lo in range(0, n, COUNT_CHUNK_TOKENS):
                w = words[lo:lo + COUNT_CHUNK_TOKENS]
                inside = (w >= first) & (w < last)
                part = w[inside].astype(dtype)
                part *= n_topics
                part += z[lo:lo + COUNT_CHUNK_TOKENS][inside]
                parts.append(part)
            codes = np.concatenate(parts)
            del parts
            codes.sort()
        lo = 0
        while lo < codes.size:
            hi = min(codes.size, lo + PAIR_CHUNK_TOKENS)
            if hi < codes.size:  # to the end of the last word's tokens (a needle of the codes' type: a
                # Python int would have searchsorted widen all of them to int64 first)
                hi = int(np.searchsorted(codes, codes.dtype.type((int(codes[hi - 1]) // n_topics + 1) * n_topics)))
            yield _runs(codes[lo:hi])
            lo = hi
        del codes


def pair_part_bytes(n_tokens: int, n_words: int, n_topics: int) -> float:
    """About the scratch of :func:`word_topic_pair_parts` on ``n_tokens`` tokens of ``n_words``
    words: the codes of its largest range of words (with one range, all of them), and the parts
    they are gathered from."""
    code = 4.0 if n_words * n_topics < 2**31 else 8.0
    ranges = max(1, min(PAIR_RANGES, n_tokens // PAIR_RANGE_TOKENS))
    return code * n_tokens if ranges == 1 else 2.0 * code * n_tokens / ranges


def _sorted_codes(words: np.ndarray, z: np.ndarray, n_topics: int) -> np.ndarray:
    """The tokens' ``word * K + topic`` codes, sorted: as int32 when they fit, sorted in place
    (np.unique would sort a copy)."""
    largest = (int(words.max()) + 1) * n_topics if words.size else 0
    codes = words.astype(np.int32 if largest < 2**31 else np.int64)
    codes *= n_topics
    codes += z
    codes.sort()
    return codes


def _runs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of sorted ``codes`` and how many times each occurs (int64 both)."""
    starts = np.flatnonzero(np.concatenate(([codes.size > 0], codes[1:] != codes[:-1])))
    return codes[starts].astype(np.int64), np.diff(np.append(starts, codes.size)).astype(np.int64)


def merge_pairs(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The sum of sets of word-topic counts of :func:`word_topic_pairs` (one per shard, say)."""
    codes, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([p[1] for p in parts]), minlength=codes.size)
    return codes, counts.astype(np.int64)
