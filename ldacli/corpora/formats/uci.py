"""UCI bag-of-words (``docword.NAME.txt[.gz]``): three header lines ``D``, ``W``, ``NNZ``, then
``docID wordID count`` lines with 1-based ids; the vocabulary file is ``vocab.NAME.txt``.
Document ids are the docIDs; documents that never appear are kept, empty.

Blocks of well-formed triples are parsed vectorised; a block with anything unusual is parsed line
by line, so that an error names its line and the offending field.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.corpus import Corpus, RowNumbers, check_token_total
from ldacli.corpora.counts import build_csr
from ldacli.errors import InputError
from ldacli.files.fileio import Source, iter_blocks
from ldacli.corpora.formats.parsing import BYTES_PER_DOC, INT32_MAX, describe_line, parse_uint, quote
from ldacli.memory import check_fits

_UCI_HEADER = (
    "the number of documents D",
    "the vocabulary size W",
    "the number of docID wordID count lines NNZ",
)
_TRIPLE = "'docID wordID count'"
_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[list(b"0123456789 \t\r\n")] = True
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[list(b"0123456789")] = True


def _uci_header(blocks: Iterator[tuple[int, bytes]], name: str) -> tuple[list[int], bytes]:
    """Parse the three header lines; returns their values and the rest of the current block.

    The rest starts at line 4 (blocks always end at the end of a line).
    """
    values: list[int] = []
    block = b""
    pos = 0
    for line_no, label in enumerate(_UCI_HEADER, start=1):
        if pos >= len(block):
            _, block = next(blocks, (line_no, b""))
            pos = 0
            if not block:
                raise InputError(name, line_no, f"expected {label} (a non-negative integer), "
                                                "found the end of the file")
        end = block.find(b"\n", pos)
        end = len(block) if end < 0 else end
        line = block[pos:end]
        pos = end + 1
        value = parse_uint(line.strip())
        if value is None:
            raise InputError(name, line_no, f"expected {label} (a non-negative integer), found {describe_line(line)}")
        if value > INT32_MAX:
            raise InputError(name, line_no, f"expected {label} of at most {INT32_MAX}, "
                                            f"found {quote(line.strip())}")
        values.append(value)
    return values, block[pos:]


def _uci_line(line: bytes, lineno: int, name: str, n_docs: int, n_words: int) -> tuple[int, int, int]:
    """Parse and check one ``docID wordID count`` line."""
    fields = line.split()
    if len(fields) != 3:
        raise InputError(name, lineno, f"expected 3 fields {_TRIPLE}, found {len(fields)}: {describe_line(line)}")
    doc, word, count = (parse_uint(f) for f in fields)
    if doc is None or not 1 <= doc <= n_docs:
        raise InputError(name, lineno, f"expected docID as an integer in 1..{n_docs}, found {quote(fields[0])}")
    if word is None or not 1 <= word <= n_words:
        raise InputError(name, lineno, f"expected wordID as an integer in 1..{n_words}, found {quote(fields[1])}")
    if count is None or not 1 <= count <= INT32_MAX:
        limit = "" if count is None or count < 1 else f" of at most {INT32_MAX}"
        raise InputError(name, lineno, f"expected count as a positive integer{limit}, found {quote(fields[2])}")
    return doc, word, count


def _uci_block_fast(block: bytes, n_docs: int, n_words: int) -> np.ndarray | None:
    """Vectorised parse of a block of triples; ``None`` if any line needs a closer look.

    Succeeds only when every line holds exactly three ASCII integers of at most 9 digits that
    pass the range checks; anything else (blank lines, stray characters, errors) is left to
    :func:`_uci_line`, which reports it precisely.
    """
    a = np.frombuffer(block, dtype=np.uint8)
    if not _ALLOWED[a].all():
        return None
    digit = _DIGIT[a]
    before = np.concatenate(([False], digit[:-1]))
    after = np.concatenate((digit[1:], [False]))
    starts = np.flatnonzero(digit & ~before)
    ends = np.flatnonzero(digit & ~after)
    if np.any(ends - starts >= 9):
        return None
    newlines = np.flatnonzero(a == 10)
    n_lines = newlines.size + (0 if block.endswith(b"\n") else 1)
    per_line = np.bincount(np.searchsorted(newlines, starts), minlength=n_lines)
    if per_line.size != n_lines or np.any(per_line != 3):
        return None
    values = np.fromstring(block, dtype=np.int64, sep=" ")
    if values.size != 3 * n_lines:
        return None
    triples = values.reshape(-1, 3)
    doc, word, count = triples[:, 0], triples[:, 1], triples[:, 2]
    if (doc.min() < 1 or doc.max() > n_docs or word.min() < 1 or word.max() > n_words
            or count.min() < 1):
        return None
    return triples


def uci_triples(source: Source, vocab: list[str], vocab_name: str | None
                ) -> tuple[tuple[int, int, int], Iterator[tuple[int, np.ndarray]]]:
    """The header ``(D, W, NNZ)`` of a UCI ``source`` whose word ids index ``vocab``, and its
    triples block by block as ``(line of the first, (n, 3) int64 array)``, every line checked.
    ``vocab_name`` is the vocabulary file, blamed when its size disagrees with ``W``; ``None``
    when ``vocab`` was not read from a file."""
    name = source.name
    blocks = iter_blocks(source)
    (n_docs, n_words, nnz), rest = _uci_header(blocks, name)
    if n_words != len(vocab):
        if vocab_name is None:
            raise InputError(name, 2, f"expected W = {len(vocab)}, the size of the given vocabulary, "
                                      f"found {n_words}")
        raise InputError(vocab_name, None, f"expected {n_words} words (W on line 2 of {name}), "
                                           f"found {len(vocab)}")

    def triples() -> Iterator[tuple[int, np.ndarray]]:
        blank: int | None = None  # first empty line seen after the last triple
        line = FIRST_TRIPLE_LINE
        body = blocks if not rest else _chain_block((FIRST_TRIPLE_LINE, rest), blocks)
        for first, block in body:
            fast = _uci_block_fast(block, n_docs, n_words)
            if fast is not None:
                if blank is not None:
                    raise InputError(name, blank, f"expected {_TRIPLE}, found an empty line")
                yield first, fast
                continue
            slow: list[tuple[int, int, int]] = []
            lines = block.split(b"\n")
            if block.endswith(b"\n"):
                lines.pop()
            for i, line in enumerate(lines):
                if not line.strip():
                    if blank is None:
                        blank = first + i
                    continue
                if blank is not None:
                    raise InputError(name, blank, f"expected {_TRIPLE}, found an empty line")
                slow.append(_uci_line(line, first + i, name, n_docs, n_words))
            if slow:
                yield first, np.array(slow, dtype=np.int64)

    return (n_docs, n_words, nnz), triples()


# The line of a UCI file's first triple, after the three header lines.
FIRST_TRIPLE_LINE = 4


def check_distinct_pairs(name: str, rows: np.ndarray, cols: np.ndarray, n_words: int, first_line: int) -> None:
    """Each (docID, wordID) pair once among the triples ``rows``, ``cols`` (0-based), the
    first of them on ``first_line``; the error names the line that repeats one."""
    keys = rows.astype(np.int64) * n_words + cols
    if keys.size > 1 and not np.all(keys[1:] > keys[:-1]):
        order = np.argsort(keys, kind="stable")
        repeat = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if repeat.size:
            k = int(order[repeat + 1].min())  # earliest line that repeats a pair
            first_k = int(np.flatnonzero(keys == keys[k])[0])
            raise InputError(name, first_line + k,
                             f"expected each (docID, wordID) pair once, found docID {rows[k] + 1} "
                             f"wordID {cols[k] + 1} again (first on line {first_line + first_k})")


def check_nnz(name: str, nnz: int, found: int) -> None:
    if found != nnz:
        raise InputError(name, 3, f"expected NNZ = {nnz} {_TRIPLE} lines as this header line says, "
                                  f"found {found}")


def read_uci(source: Source, vocab: list[str], vocab_name: str | None) -> Corpus:
    """Read a UCI bag-of-words file whose word ids index ``vocab``.

    ``vocab_name`` is the vocabulary file, blamed when its size disagrees with ``W``; ``None``
    when ``vocab`` was not read from a file.
    """
    name = source.name
    (n_docs, n_words, nnz), blocks = uci_triples(source, vocab, vocab_name)
    check_fits(f"{name}: the {n_docs} documents its header declares (line 1)", n_docs * BYTES_PER_DOC)
    # each block's triples as three int32 columns (ids 0-based) as soon as it is parsed: the
    # corpus's entries are held at 12 bytes each, not as int64 triples and their copies
    parts: tuple[list, list, list] = ([], [], [])
    for _, triples in blocks:
        for column, part in enumerate(parts):
            part.append((triples[:, column] - (column < 2)).astype(np.int32))
    rows, cols, data = (np.concatenate(part) if part else np.zeros(0, np.int32) for part in parts)
    del parts
    check_distinct_pairs(name, rows, cols, n_words, FIRST_TRIPLE_LINE)
    check_nnz(name, nnz, rows.size)
    check_token_total(name, int(data.sum(dtype=np.int64)))
    counts = build_csr(rows, cols, data, (n_docs, n_words))
    return Corpus(counts, list(vocab), RowNumbers(n_docs), format="uci")


def _chain_block(head: tuple[int, bytes], rest: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    yield head
    yield from rest


def uci_lines(counts: sp.csr_array, chunk: int = 1 << 16) -> Iterator[str]:
    """The lines of ``counts`` as a UCI file (header, then 1-based triples), in chunks."""
    n_docs, n_words = counts.shape
    yield f"{n_docs}\n{n_words}\n{counts.nnz}\n"
    rows = np.repeat(np.arange(1, n_docs + 1, dtype=np.int64), np.diff(counts.indptr))
    cols = counts.indices.astype(np.int64) + 1
    for s in range(0, counts.nnz, chunk):
        e = min(s + chunk, counts.nnz)
        yield "".join(f"{d} {w} {c}\n" for d, w, c in zip(rows[s:e].tolist(), cols[s:e].tolist(),
                                                          counts.data[s:e].tolist()))
