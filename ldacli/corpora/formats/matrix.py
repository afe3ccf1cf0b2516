"""Corpora kept as sparse matrices by other tools: Matrix Market ``.mtx`` (what gensim's
``MmCorpus`` writes) and scipy sparse ``.npz`` (``scipy.sparse.save_npz``, what scikit-learn
pipelines produce). Rows are documents and columns words, both read through scipy's own
readers after their declared sizes are checked, and written back with scipy's writers. Document
ids are the row numbers from 1; the vocabulary is found beside the file as for LDA-C.

Counts must be positive integers of at most 2^31 - 1 (``real`` Matrix Market values and float
arrays are accepted when they hold whole numbers; explicit zeros are dropped), each (document,
word) pair at most once. Every problem is an :class:`~ldacli.errors.InputError` naming the file
(and the line, where a line is to blame).
"""

from __future__ import annotations

import io
import re
from typing import IO

import numpy as np
import scipy.io
import scipy.sparse as sp

from ldacli.corpora.corpus import Corpus, RowNumbers, check_token_total
from ldacli.corpora.counts import canonical_counts, checked_counts
from ldacli.errors import InputError
from ldacli.files.fileio import READ_ERRORS, Source, read_line
from ldacli.corpora.formats.parsing import BYTES_PER_DOC, INT32_MAX
from ldacli.memory import check_fits
from ldacli.files.npz import read_npz

MTX_MAGIC = b"%%matrixmarket"
ZIP_MAGIC = b"PK\x03\x04"
_BANNER = "'%%MatrixMarket matrix coordinate integer|real|pattern general'"
# What scipy's readers raise on malformed content.
_MALFORMED = (ValueError, TypeError, OverflowError, IndexError, KeyError, EOFError, OSError, RuntimeError)


def _check_shape(name: str, line: int | None, n_docs: int, n_words: int, vocab_size: int, vocab_name: str | None):
    for value, what in ((n_docs, "documents"), (n_words, "words")):
        if not 0 <= value <= INT32_MAX:
            raise InputError(name, line, f"expected a number of {what} in 0..{INT32_MAX}, found {value}")
    if n_words != vocab_size:
        if vocab_name is None:
            raise InputError(name, line, f"expected {vocab_size} words, the size of the given vocabulary, "
                                         f"found {n_words} columns")
        raise InputError(vocab_name, None, f"expected {n_words} words (the columns of {name}), found {vocab_size}")
    check_fits(f"{name}: the {n_docs} documents it declares", n_docs * BYTES_PER_DOC)


_BODY_BYTES = np.zeros(256, dtype=bool)
_BODY_BYTES[list(b"0123456789 \t\r\n.eE+-")] = True
_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\r\n")] = True


def _check_mtx_body(name: str, body: bytes | memoryview, first_line: int, fields: int) -> None:
    """Every line after the size line holds ``fields`` numbers and nothing else (scipy's reader
    would read "1x" as 1, and crash on a NUL byte), or is blank; checked vectorised."""
    a = np.frombuffer(body, dtype=np.uint8)
    bad = np.flatnonzero(~_BODY_BYTES[a])
    newlines = np.flatnonzero(a == 10)
    if bad.size:
        at = int(bad[0])
        line = first_line + int(np.searchsorted(newlines, at))
        raise InputError(name, line, f"expected {fields} numbers 'document word{' count' if fields == 3 else ''}', "
                                     f"found the byte {bytes([a[at]])!r}")
    starts = np.flatnonzero(~_SPACE[a] & np.concatenate(([True], _SPACE[a][:-1])))
    per_line = np.bincount(np.searchsorted(newlines, starts), minlength=newlines.size + 1)
    wrong = np.flatnonzero((per_line != fields) & (per_line != 0))
    if wrong.size:
        i = int(wrong[0])
        raise InputError(name, first_line + i, f"expected {fields} numbers 'document word"
                                               f"{' count' if fields == 3 else ''}', found {int(per_line[i])}")


def _mtx_header(name: str, stream: IO[bytes]) -> tuple[int, int, int, int, int]:
    """(documents, words, entries, the size line's number, numbers per entry line) from the
    banner and the size line, each line read within the readers' bound (a size line of 1 GiB of
    spaces took 2 GB before it was refused)."""
    lineno = 1
    banner = read_line(stream, name, lineno).decode("latin-1").split()
    if (len(banner) != 5 or banner[0].lower() != "%%matrixmarket" or banner[1].lower() != "matrix"
            or banner[2].lower() != "coordinate" or banner[3].lower() not in ("integer", "real", "pattern")
            or banner[4].lower() != "general"):
        raise InputError(name, 1, f"expected {_BANNER} (documents x words, counts), found {' '.join(banner)[:60]!r}")
    while True:
        lineno += 1
        raw = read_line(stream, name, lineno)
        if not raw:
            raise InputError(name, lineno, "expected the size line 'documents words entries', found the end of the file")
        line = raw.decode("latin-1").strip()
        if line and not line.startswith("%"):
            break
    sizes = line.split()
    if len(sizes) != 3 or not all(re.fullmatch(r"\d+", v) for v in sizes):
        raise InputError(name, lineno, f"expected the size line 'documents words entries', found {line[:60]!r}")
    n_docs, n_words, n_entries = (int(v) for v in sizes)
    return n_docs, n_words, n_entries, lineno, 2 if banner[3].lower() == "pattern" else 3


def read_mtx(name: str, stream: IO[bytes], vocab_size: int, vocab_name: str | None) -> sp.csr_array:
    """The counts (D, V) of the Matrix Market file ``name`` in the seekable binary ``stream``
    (decompressed): its header checked before the rest is read."""
    n_docs, n_words, n_entries, lineno, fields = _mtx_header(name, stream)
    _check_shape(name, lineno, n_docs, n_words, vocab_size, vocab_name)
    body = stream.tell()
    stream.seek(0)
    data = stream.read()
    _check_mtx_body(name, memoryview(data)[body:], lineno + 1, fields)
    if n_entries > INT32_MAX:
        raise InputError(name, lineno, f"expected at most {INT32_MAX} entries, found {n_entries}")
    try:
        matrix = scipy.io.mmread(io.BytesIO(data))
    except _MALFORMED as exc:
        raise InputError(name, None, f"expected {n_entries} 'document word count' lines after line {lineno}, "
                                     f"found malformed ones ({exc})") from None
    return checked_counts(name, matrix, (n_docs, n_words))


def read_scipy_npz(name: str, data: bytes, vocab_size: int, vocab_name: str | None) -> sp.csr_array:
    """The counts (D, V) of the scipy sparse ``.npz`` ``name`` whose bytes are ``data``."""
    arrays = read_npz(name, "a scipy sparse matrix (.npz)", io.BytesIO(data), compressed=True)
    fmt = arrays.get("format")
    kind = fmt.item() if fmt is not None and fmt.ndim == 0 and fmt.dtype.kind in "SU" else None
    kind = kind.decode("latin-1") if isinstance(kind, bytes) else kind
    members = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"), "coo": ("data", "row", "col")}
    if kind not in members or "shape" not in arrays:
        found = "an ldacli file" if "kind" in arrays else f"members {', '.join(sorted(arrays)) or 'none'}"
        raise InputError(name, None, f"expected a scipy sparse matrix (.npz from scipy.sparse.save_npz: format csr, "
                                     f"csc or coo, and shape), found {found}")
    missing = [m for m in members[kind] if m not in arrays]
    if missing:
        raise InputError(name, None, f"expected arrays {', '.join(missing)} of a {kind} matrix, found none")
    shape = arrays["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu":
        raise InputError(name, None, f"expected 'shape' as two integers, found {shape.dtype} of shape {shape.shape}")
    n_docs, n_words = (int(v) for v in shape)
    _check_shape(name, None, n_docs, n_words, vocab_size, vocab_name)
    if kind == "csr":  # kept as read when it is a count matrix already (as scipy.sparse.save_npz writes one)
        counts = canonical_counts(arrays["indptr"], arrays["indices"], arrays["data"], (n_docs, n_words))
        if counts is not None:
            return counts
    del arrays  # read again by scipy's reader, as it reads them
    try:
        matrix = sp.load_npz(io.BytesIO(data))
        if kind != "coo":
            matrix.check_format(full_check=True)
    except _MALFORMED as exc:
        raise InputError(name, None, f"damaged: the {kind} matrix's arrays do not fit together ({exc})") from None
    if kind == "coo" and matrix.nnz and (matrix.row.min() < 0 or matrix.col.min() < 0 or matrix.row.max() >= n_docs
                                         or matrix.col.max() >= n_words):
        raise InputError(name, None, "damaged: the coo matrix has coordinates outside its shape")
    return checked_counts(name, matrix, (n_docs, n_words))


def write_mtx(out: IO[bytes], counts: sp.csr_array) -> None:
    """Write ``counts`` as Matrix Market, documents x words, integer counts, 1-based."""
    scipy.io.mmwrite(out, sp.coo_matrix(counts), field="integer", symmetry="general",
                     comment=" written by ldacli: rows are documents, columns words")


def write_scipy_npz(out: IO[bytes], counts: sp.csr_array) -> None:
    """Write ``counts`` with ``scipy.sparse.save_npz`` (CSR, compressed)."""
    sp.save_npz(out, sp.csr_matrix(counts), compressed=True)


def read_matrix(source: Source, fmt: str, vocab: list[str], vocab_name: str | None) -> Corpus:
    """Read the Matrix Market or scipy ``.npz`` (``fmt``) ``source`` whose columns are ``vocab``
    (read from the file ``vocab_name``, blamed when the sizes disagree; None if given as words)."""
    with source.stream() as (stream, compressed):
        try:
            counts = read_mtx(source.name, stream, len(vocab), vocab_name) if fmt == "mtx" else \
                read_scipy_npz(source.name, stream.read(), len(vocab), vocab_name)
        except READ_ERRORS as exc:
            raise InputError(source.name, None, f"cannot read: {exc}") from None
    check_token_total(source.name, int(counts.data.sum(dtype=np.int64)))
    return Corpus(counts, list(vocab), RowNumbers(counts.shape[0]), format=fmt)
