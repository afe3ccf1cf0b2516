"""Document-term count matrices (SciPy CSR, int32 counts, sorted column indices): building one
from entries, the tokens of each document and of each word, the tokens one by one, and keeping
or emptying columns.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def build_csr(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, int]) -> sp.csr_array:
    """CSR int32 matrix from COO entries with distinct (row, col) pairs; indices sorted."""
    rows = np.asarray(rows, dtype=np.int64)
    order = np.lexsort((cols, rows)) if rows.size and np.any(np.diff(rows) < 0) else None
    if order is not None:
        rows, cols, data = rows[order], cols[order], data[order]
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    index_dtype = np.int32 if max(indptr[-1], shape[1]) < np.iinfo(np.int32).max else np.int64
    counts = sp.csr_array(
        (np.ascontiguousarray(data, dtype=np.int32),
         np.array(cols, dtype=index_dtype), indptr.astype(index_dtype)),
        shape=shape,
    )
    counts.sort_indices()
    return counts


def doc_lengths(counts: sp.csr_array) -> np.ndarray:
    """(D,) int64: the tokens of each document (row) of a count matrix."""
    return np.asarray(counts.sum(axis=1, dtype=np.int64)).ravel()


def word_totals(counts: sp.csr_array, n_words: int) -> np.ndarray:
    """(V,) int64: the tokens of each word (column) of a count matrix."""
    return np.bincount(counts.indices, weights=counts.data, minlength=n_words).astype(np.int64)


def doc_pointers(lengths: np.ndarray) -> np.ndarray:
    """(D+1,) int64 from document lengths (D,): document d's tokens are ``doc_ptr[d]:doc_ptr[d+1]``."""
    doc_ptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=doc_ptr[1:])
    return doc_ptr


def tokens_of(counts: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """``(words, doc_ptr)``: one int32 word id per token, document by document, each document's
    words in increasing id order; ``doc_ptr`` (:func:`doc_pointers`)."""
    words = np.repeat(counts.indices.astype(np.int32), counts.data.astype(np.int64))
    return words, doc_pointers(doc_lengths(counts))


def keep_columns(counts: sp.csr_array, keep: np.ndarray) -> sp.csr_array:
    """The matrix of the columns where the (V,) bool ``keep`` is true, in their order."""
    new_id = np.cumsum(keep) - 1
    return _keep_entries(counts, keep[counts.indices], new_id, int(np.count_nonzero(keep)))


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
