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
from ldacli.corpora.counts import doc_topic_counts, histogram, merge_histograms
from ldacli.partition import ShardRange


@dataclass(frozen=True)
class DocumentLists:
    """The sparse sampler's list of each of a shard's documents' topics (in increasing order)
    and their counts: ``ptr`` (d+1,) int64, room for min(K, N_d) topics each, ``length`` (d,)
    int32, ``topics`` and ``counts`` int32 (:func:`document_lists`). The kernel updates them in
    place."""

    ptr: np.ndarray
    length: np.ndarray
    topics: np.ndarray
    counts: np.ndarray


@dataclass(eq=False)
class Shard:
    """A shard as an engine samples it, on a thread or a Dask worker: its tokens' ``words`` (n,)
    int32 and topics ``z`` (n,) int32 (updated in place; on threads a view of the corpus's
    topics), its documents' pointers ``ptr`` (d+1,) int64 from 0, ``lo`` its first token in
    the corpus, its random stream ``rng``, and what the kernels need of it: ``runs`` (d, P+1)
    int64 (:func:`slice_runs`); for the alias sampler ``order``, its tokens grouped by word,
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


def shard_pointers(doc_ptr: np.ndarray, shard: ShardRange) -> np.ndarray:
    """The document pointers (d+1,) int64, from 0, of ``shard`` of a corpus whose documents'
    pointers are ``doc_ptr``."""
    return np.ascontiguousarray(doc_ptr[shard.d_lo:shard.d_hi + 1] - shard.lo, dtype=np.int64)


def sorted_within_documents(words: np.ndarray, doc_ptr: np.ndarray) -> bool:
    """Whether each document's words are in increasing id order (``Corpus.tokens`` gives them
    so), which the slices need: a document's tokens of a slice are then one run."""
    falls = words[1:] < words[:-1]
    starts = doc_ptr[1:-1]
    falls[starts[(starts > 0) & (starts < words.size)] - 1] = False
    return not falls.any()


def slice_runs(words: np.ndarray, ptr: np.ndarray, slices: np.ndarray) -> np.ndarray:
    """Where each document's tokens of each word slice start: (d, P+1) int64, row j the
    positions in ``words`` of document j's first token of slice 0, 1, ..., P-1, then its end
    (each document's words sorted; see ``ext/_cgs.pyx``)."""
    runs = np.empty((ptr.size - 1, slices.size), np.int64)
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
    return DocumentLists(list_ptr, list_len, list_topics, list_counts)


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
    lists = shard.lists
    codes = np.empty(int(lists.length.sum()), np.int64)
    counts = np.empty(codes.size, np.int32)
    n = _cgs.list_cells(lists.ptr, lists.length, lists.topics, lists.counts, n_topics, first, codes, counts)
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


def shard_doc_histograms(ptr: np.ndarray, z: np.ndarray, n_topics: int) -> tuple[tuple, tuple]:
    """The histograms (:func:`~ldacli.corpora.counts.histogram`) of one shard's document-topic counts
    (D, K) and of its document lengths (D, 1), counted a few documents at a time: what learning
    alpha needs of the shard (:func:`~ldacli.methods.priors.alpha_from_histograms`)."""
    parts = [histogram(block) for _, block in doc_topic_blocks(ptr, z, n_topics)]
    return merge_histograms(parts), histogram(np.diff(ptr)[:, None])


def merge_doc_histograms(parts: list[tuple[tuple, tuple]]) -> tuple[tuple, tuple]:
    """The :func:`shard_doc_histograms` of several shards' documents together."""
    return merge_histograms([p[0] for p in parts]), merge_histograms([p[1] for p in parts])


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
