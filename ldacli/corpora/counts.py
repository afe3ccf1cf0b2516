"""Document-term count matrices (SciPy CSR, int32 counts, sorted column indices): building one
from entries, the tokens of each document and of each word, the tokens one by one, and keeping
or emptying columns; document-topic counts from tokens' topics, and histograms of counts, which
parts of a corpus add up exactly.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np
import scipy.sparse as sp

from ldacli.errors import InputError

# The largest count a matrix holds (int32).
COUNT_MAX = int(np.iinfo(np.int32).max)


def starts(ids: np.ndarray, n: int) -> np.ndarray:
    """(n + 1,) int64: where each of ``n`` ids begins among ``ids`` sorted, and their end (a
    sparse matrix's pointers)."""
    out = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(ids, minlength=n), out=out[1:])
    return out


def build_csr(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, int]) -> sp.csr_array:
    """CSR int32 matrix from COO entries with distinct (row, col) pairs; indices sorted."""
    rows = np.asarray(rows, dtype=np.int64)
    order = np.lexsort((cols, rows)) if rows.size and np.any(np.diff(rows) < 0) else None
    if order is not None:
        rows, cols, data = rows[order], cols[order], data[order]
    indptr = starts(rows, shape[0])
    index_dtype = np.int32 if max(indptr[-1], shape[1]) < np.iinfo(np.int32).max else np.int64
    counts = sp.csr_array(
        (np.ascontiguousarray(data, dtype=np.int32),
         np.array(cols, dtype=index_dtype), indptr.astype(index_dtype)),
        shape=shape,
    )
    counts.sort_indices()
    return counts


# Stored entries (or tokens) a count matrix's helpers below go through at a time: their scratch
# stays ~16 bytes x this, whatever the corpus's size (a corpus is read, checked and turned into
# tokens without a copy of it as wide as int64 or float64 on the way).
COUNT_CHUNK_TOKENS = 1 << 20


def row_chunks(ptr: np.ndarray, size: int | None = None) -> list[tuple[int, int]]:
    """Consecutive row ranges ``(lo, hi)`` covering the rows of the pointers ``ptr`` (R+1,), each
    of about ``size`` (:data:`COUNT_CHUNK_TOKENS`) entries (whole rows, at least one; none for no
    rows)."""
    size = size or COUNT_CHUNK_TOKENS
    R = ptr.size - 1
    if R <= 0:
        return []
    starts = np.unique(np.searchsorted(ptr, np.arange(0, int(ptr[-1]), size), side="right") - 1)
    cuts = [0] + [int(c) for c in starts if 0 < c < R] + [R]
    return list(zip(cuts[:-1], cuts[1:]))


def value_counts(values: np.ndarray, n: int) -> np.ndarray:
    """(n,) int64: how many of ``values`` (integers in [0, n)) are 0, 1, ..., n - 1, counted a
    chunk at a time (``np.bincount`` would first copy them all as int64: 8 bytes a token)."""
    total = np.zeros(n, np.int64)
    for lo in range(0, values.size, COUNT_CHUNK_TOKENS):
        total += np.bincount(values[lo:lo + COUNT_CHUNK_TOKENS], minlength=n)
    return total


def doc_lengths(counts: sp.csr_array) -> np.ndarray:
    """(D,) int64: the tokens of each document (row) of a count matrix."""
    lengths = np.zeros(counts.shape[0], np.int64)
    indptr, data = counts.indptr, counts.data
    for lo, hi in row_chunks(indptr):
        a = int(indptr[lo])
        ends = np.concatenate(([0], np.cumsum(data[a:int(indptr[hi])], dtype=np.int64)))
        lengths[lo:hi] = np.diff(ends[np.asarray(indptr[lo:hi + 1], np.int64) - a])
    return lengths


def word_totals(counts: sp.csr_array, n_words: int) -> np.ndarray:
    """(V,) int64: the tokens of each word (column) of a count matrix."""
    return _column_sums(counts, n_words, weighted=True)


def word_documents(counts: sp.csr_array, n_words: int) -> np.ndarray:
    """(V,) int64: the documents each word (column) of a count matrix occurs in."""
    return _column_sums(counts, n_words, weighted=False)


def _column_sums(counts: sp.csr_array, n_words: int, weighted: bool) -> np.ndarray:
    """(V,) int64: each column's stored values summed (``weighted``) or counted, a chunk of
    entries at a time (``np.bincount`` would widen all of them to int64 and float64 at once;
    float sums of whole numbers below 2^53 are exact)."""
    total = np.zeros(n_words, np.int64)
    indices, data = counts.indices, counts.data
    for lo in range(0, indices.size, COUNT_CHUNK_TOKENS):
        hi = lo + COUNT_CHUNK_TOKENS
        part = np.bincount(indices[lo:hi], weights=data[lo:hi] if weighted else None, minlength=n_words)
        total += part.astype(np.int64, copy=False)
    return total


def doc_pointers(lengths: np.ndarray) -> np.ndarray:
    """(D+1,) int64 from document lengths (D,): document d's tokens are ``doc_ptr[d]:doc_ptr[d+1]``."""
    doc_ptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=doc_ptr[1:])
    return doc_ptr


def tokens_of(counts: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """``(words, doc_ptr)``: one int32 word id per token, document by document, each document's
    words in increasing id order; ``doc_ptr`` (:func:`doc_pointers`). Expanded a chunk of
    documents at a time into ``words``: no copy of the matrix on the way."""
    doc_ptr = doc_pointers(doc_lengths(counts))
    words = np.empty(int(doc_ptr[-1]), np.int32)
    indptr, indices, data = counts.indptr, counts.indices, counts.data
    for lo, hi in row_chunks(indptr):
        a, b = int(indptr[lo]), int(indptr[hi])
        words[doc_ptr[lo]:doc_ptr[hi]] = np.repeat(indices[a:b], data[a:b])
    return words, doc_ptr


def counts_of_tokens(words: np.ndarray, doc_ptr: np.ndarray, shape: tuple[int, int]) -> sp.csr_array:
    """The (D, V) int32 CSR count matrix (sorted indices) whose :func:`tokens_of` are ``words``
    and ``doc_ptr`` (each document's words in increasing id order): its entries counted, then
    filled in, a chunk of documents at a time."""
    indptr = np.zeros(shape[0] + 1, np.int64)
    for lo, hi, _, ptr in _entry_starts(words, doc_ptr):
        indptr[lo + 1:hi + 1] = np.diff(ptr)
    np.cumsum(indptr, out=indptr)
    index_dtype = np.int32 if max(int(indptr[-1]), shape[1]) < np.iinfo(np.int32).max else np.int64
    indices, data = np.empty(int(indptr[-1]), index_dtype), np.empty(int(indptr[-1]), np.int32)
    for lo, hi, _, part_indices, part_data in token_entries(words, doc_ptr):
        indices[indptr[lo]:indptr[hi]] = part_indices
        data[indptr[lo]:indptr[hi]] = part_data
    counts = sp.csr_array((data, indices, indptr.astype(index_dtype)), shape=shape)
    counts.has_sorted_indices = True
    return counts


def token_entries(words: np.ndarray, doc_ptr: np.ndarray):
    """The stored entries of the count matrix of tokens ``words`` by documents ``doc_ptr`` (each
    document's words in increasing id order), a chunk of documents at a time: ``(lo, hi, ptr,
    indices, data)`` for documents ``lo:hi``: ``ptr`` (hi-lo+1,) int64 where each document's
    entries start, from 0, and their words and counts (int32)."""
    for lo, hi, starts, ptr in _entry_starts(words, doc_ptr):
        a = int(doc_ptr[lo])
        yield lo, hi, ptr, words[a + starts[:-1]].astype(np.int32), np.diff(starts).astype(np.int32)


def _entry_starts(words: np.ndarray, doc_ptr: np.ndarray):
    """``(lo, hi, starts, ptr)`` for chunks of documents ``lo:hi``: ``starts``, the positions
    (int64, from ``doc_ptr[lo]``) of the tokens that start an entry (the first of each word of
    each document), then the chunk's end; ``ptr`` (hi-lo+1,), where each document's entries
    start among them."""
    for lo, hi in row_chunks(doc_ptr):
        a, b = int(doc_ptr[lo]), int(doc_ptr[hi])
        w = words[a:b]
        new = np.ones(b - a, bool)
        np.not_equal(w[1:], w[:-1], out=new[1:])
        doc_starts = np.asarray(doc_ptr[lo:hi + 1], np.int64) - a
        new[doc_starts[doc_starts < b - a]] = True  # a document's first token starts an entry
        starts = np.flatnonzero(new)
        yield lo, hi, np.append(starts, b - a), np.searchsorted(starts, doc_starts)


def doc_topic_counts(doc_ptr, z, n_topics: int) -> np.ndarray:
    """Dense (D, K) int32 counts of tokens per document and topic, counted a chunk of documents
    at a time."""
    D = doc_ptr.size - 1
    out = np.zeros((D, n_topics), np.int32)
    for lo, hi in row_chunks(doc_ptr):
        docs = np.repeat(np.arange(hi - lo, dtype=np.int64), np.diff(doc_ptr[lo:hi + 1]))
        codes = docs * n_topics + z[doc_ptr[lo]:doc_ptr[hi]]
        out[lo:hi] = np.bincount(codes, minlength=(hi - lo) * n_topics).reshape(hi - lo, n_topics)
    return out


def histogram(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The histogram of each column of a (R, C) non-negative integer array, its non-zero values
    only: ``(columns, values, times)``, (H,) int64 each, sorted by column then value, ``times[h]``
    being the rows whose column ``columns[h]`` holds ``values[h]``. Histograms of parts of the
    rows add up to the whole one's exactly (:func:`merge_histograms`), in any order."""
    counts = np.asarray(counts)
    R, C = counts.shape
    held = counts > 0
    return cell_histogram(np.broadcast_to(np.arange(C, dtype=np.int64), counts.shape)[held], counts[held], C)


def cell_histogram(columns: np.ndarray, values: np.ndarray, n_columns: int) -> tuple[np.ndarray, np.ndarray,
                                                                                    np.ndarray]:
    """:func:`histogram` of the array whose non-zero cells are in ``columns`` (of ``n_columns``)
    with ``values`` (> 0), given as those cells alone (a sparse array's, in any order). Counted
    in a table of every column and value when that table is not much larger than the cells,
    else by sorting them."""
    if values.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    span = int(values.max()) + 1
    codes = np.asarray(columns, np.int64) * span + values
    if n_columns * span <= 4 * codes.size + (1 << 16):
        times = np.bincount(codes, minlength=n_columns * span)
        codes = np.flatnonzero(times)
        times = times[codes]
    else:
        codes, times = np.unique(codes, return_counts=True)
    return codes // span, codes % span, times.astype(np.int64)


def merge_histograms(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray,
                                                                                     np.ndarray]:
    """The histogram of the rows of all ``parts`` (each of :func:`histogram`), in its form."""
    columns, values, times = (np.concatenate([np.asarray(p[i], np.int64) for p in parts] or [np.zeros(0, np.int64)])
                              for i in range(3))
    if columns.size == 0:
        return columns, values, times
    span = int(values.max()) + 1
    codes, inverse = np.unique(columns * span + values, return_inverse=True)
    summed = np.bincount(inverse, weights=times, minlength=codes.size)  # exact below 2**53
    return codes // span, codes % span, summed.astype(np.int64)


def keep_columns(counts: sp.csr_array, keep: np.ndarray) -> sp.csr_array:
    """The matrix of the columns where the (V,) bool ``keep`` is true, in their order."""
    new_id = np.cumsum(keep) - 1
    return _keep_entries(counts, keep[counts.indices], new_id, int(np.count_nonzero(keep)))


def renumbered_columns(counts: sp.csr_array, keep: np.ndarray) -> sp.csr_array:
    """:func:`keep_columns` of a matrix none of whose stored entries is in a column left out
    (its words never occur): the same entries, their columns renumbered, a chunk at a time in
    the matrix's index type."""
    new_id = (np.cumsum(keep) - 1).astype(counts.indices.dtype)
    indices = np.empty_like(counts.indices)
    for lo in range(0, indices.size, COUNT_CHUNK_TOKENS):
        indices[lo:lo + COUNT_CHUNK_TOKENS] = new_id[counts.indices[lo:lo + COUNT_CHUNK_TOKENS]]
    renumbered = sp.csr_array((counts.data.copy(), indices, counts.indptr.copy()),
                              shape=(counts.shape[0], int(np.count_nonzero(keep))))
    renumbered.has_sorted_indices = counts.has_sorted_indices
    return renumbered


def drop_columns(counts: sp.csr_array, drop: np.ndarray) -> sp.csr_array:
    """The matrix with the entries of the columns where the (V,) bool ``drop`` is true removed;
    the columns stay (empty)."""
    return _keep_entries(counts, ~drop[counts.indices], None, counts.shape[1])


def _keep_entries(counts: sp.csr_array, entries: np.ndarray, new_id: np.ndarray | None,
                  n_cols: int) -> sp.csr_array:
    """The CSR matrix of the stored ``entries`` (a bool per stored value) of ``counts``, their
    columns renumbered through ``new_id`` (None: unchanged); rows and order are kept."""
    kept = np.zeros(entries.size + 1, dtype=np.int64)
    np.cumsum(entries, out=kept[1:])
    indptr = kept[counts.indptr].astype(counts.indptr.dtype)
    indices = counts.indices[entries]
    if new_id is not None:
        indices = new_id[indices]
    return sp.csr_array((counts.data[entries].astype(np.int32), indices.astype(counts.indices.dtype), indptr),
                        shape=(counts.shape[0], n_cols))


def checked_counts(name: str, matrix, shape: tuple[int, int]) -> sp.csr_array:
    """The matrix's entries as int32 counts: positive whole numbers, each pair once."""
    coo = sp.coo_array(matrix)
    if coo.shape != shape:
        raise InputError(name, None, f"expected a {shape[0]} x {shape[1]} matrix, found {coo.shape[0]} x {coo.shape[1]}")
    rows, cols, values = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    if values.dtype.kind not in "iuf" and values.dtype != bool:
        raise InputError(name, None, f"expected numbers as counts, found {values.dtype}")
    values = values.astype(np.float64) if values.dtype == bool else values
    keep = values != 0
    rows, cols, values = rows[keep], cols[keep], values[keep]
    bad = ~np.isfinite(values) | (values < 1) | (values > COUNT_MAX) | (values != np.floor(values))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(name, None, f"expected counts as positive whole numbers of at most {COUNT_MAX}, found "
                                     f"{float(values[i]):g} for document {rows[i] + 1}, word {cols[i] + 1}")
    keys = rows * shape[1] + cols
    order = np.argsort(keys, kind="stable")
    repeated = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if repeated.size:
        i = int(order[repeated[0]])
        raise InputError(name, None, f"expected each (document, word) pair once, found document {rows[i] + 1}, "
                                     f"word {cols[i] + 1} twice")
    return build_csr(rows, cols, values.astype(np.int32), shape)


def canonical_counts(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                     shape: tuple[int, int]) -> sp.csr_array | None:
    """The (D, V) int32 CSR count matrix of a CSR matrix's arrays when they are one as
    :func:`checked_counts` gives it (pointers from 0 that never fall, each row's columns in
    range and increasing, counts positive whole numbers of at most :data:`COUNT_MAX`), checked
    a chunk of whole rows at a time and kept (or narrowed to int32 a chunk at a time): no copy
    of them as wide as int64 on the way, as there is on :func:`checked_counts`'s. None when
    they are not (:func:`checked_counts` then says why, or sorts them)."""
    D, V = shape
    if (any(a.ndim != 1 or a.dtype.kind not in "iu" for a in (indptr, indices)) or data.ndim != 1
            or data.dtype.kind not in "iuf" or indptr.size != D + 1 or data.size != indices.size
            or indices.size > COUNT_MAX):
        return None
    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(indptr[1:] < indptr[:-1]):
        return None
    kept_indices = indices if indices.dtype == np.int32 else np.empty(indices.size, np.int32)
    kept_data = data if data.dtype == np.int32 else np.empty(data.size, np.int32)
    for lo, hi in row_chunks(indptr):
        a, b = int(indptr[lo]), int(indptr[hi])
        cols, values = indices[a:b], data[a:b]
        if cols.size and (cols.min() < 0 or cols.max() >= V):
            return None
        rising = cols[1:] > cols[:-1]
        starts = np.asarray(indptr[lo + 1:hi], np.int64) - a  # where the chunk's other rows start
        rising[starts[(starts > 0) & (starts < b - a)] - 1] = True  # a row's first column may be lower
        if not rising.all() or not np.all((values >= 1) & (values <= COUNT_MAX)):
            return None
        if values.dtype.kind == "f" and not np.all(values == np.floor(values)):
            return None
        if kept_indices is not indices:
            kept_indices[a:b] = cols
        if kept_data is not data:
            kept_data[a:b] = values
    counts = sp.csr_array((kept_data, kept_indices, indptr.astype(np.int32)), shape=shape)
    counts.has_sorted_indices = True
    return counts


class CountBuilder:
    """Accumulates documents as sparse word counts.

    Without ``fixed_vocab`` each new word gets the next column (order of first appearance);
    with it (distinct words), the columns are its words and other tokens are dropped: counted in
    ``removed_tokens`` when their word is one of ``removed_words`` (a model's vocabulary rules
    removed it), else in ``dropped_tokens``. Memory grows with the number of distinct (document,
    word) pairs, held in typed arrays rather than Python objects.
    """

    def __init__(self, fixed_vocab: Sequence[str] | None = None, removed_words: Collection[str] = frozenset()):
        self.fixed = fixed_vocab is not None
        self.words: list[str] = list(fixed_vocab) if fixed_vocab is not None else []
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        self.removed = removed_words
        self.doc_ids: list[str] = []
        self.dropped_tokens = 0
        self.removed_tokens = 0
        self._rows = array("i")
        self._cols = array("i")
        self._counts = array("i")

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    def add(self, doc_id: str, counts: Counter[str]) -> None:
        """Append one document given as token counts."""
        row = len(self.doc_ids)
        self.doc_ids.append(doc_id)
        index = self.index
        cols = []
        values = []
        for word, n in counts.items():
            col = index.get(word)
            if col is None:
                if self.fixed:
                    if word in self.removed:
                        self.removed_tokens += n
                    else:
                        self.dropped_tokens += n
                    continue
                col = index[word] = len(self.words)
                self.words.append(word)
            cols.append(col)
            values.append(n)
        self._rows.extend([row] * len(cols))
        self._cols.extend(cols)
        self._counts.extend(values)

    def matrix(self) -> tuple[sp.csr_array, list[str]]:
        """The (D, V) int32 CSR count matrix (sorted indices) and its column words."""
        rows = np.frombuffer(self._rows, dtype=np.int32)
        cols = np.frombuffer(self._cols, dtype=np.int32)
        data = np.frombuffer(self._counts, dtype=np.int32)
        counts = build_csr(rows, cols, data, (self.n_docs, len(self.words)))
        return counts, list(self.words)


def sort_vocabulary(counts: sp.csr_array, vocab: list[str]) -> tuple[sp.csr_array, list[str]]:
    """Reorder the columns so that the vocabulary is in alphabetical (code point) order."""
    order = sorted(range(len(vocab)), key=vocab.__getitem__)
    if order == list(range(len(vocab))):
        return counts, vocab
    new_col = np.empty(len(vocab), dtype=np.int64)
    new_col[order] = np.arange(len(vocab))
    coo = counts.tocoo()
    sorted_counts = build_csr(coo.row, new_col[coo.col], coo.data, counts.shape)
    return sorted_counts, [vocab[j] for j in order]
