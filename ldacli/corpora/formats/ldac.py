"""LDA-C: one document per line, ``N id:count id:count ...`` with ``N`` pairs and 0-based word
ids; ``0`` is an empty document. The vocabulary is ``X.tokens``, ``X.vocab`` or ``vocab.txt``
beside ``X.ldac``. Document ids are the 1-based line numbers.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.corpus import Corpus, RowNumbers, check_token_total
from ldacli.corpora.counts import build_csr
from ldacli.errors import InputError
from ldacli.files.fileio import Source, iter_lines
from ldacli.corpora.formats.parsing import INT32_MAX, parse_uint, quote

_LDAC_FAST = re.compile(rb"\s*(\d{1,9})((?:\s+\d{1,9}:\d{1,9})*)\s*")
_LDAC_EXPECTED = "'N id:count id:count ...'"


def _ldac_line(line: bytes, lineno: int, name: str, n_words: int) -> tuple[list[int], list[int]]:
    """Parse and check one LDA-C line; returns its word ids and counts."""
    fields = line.split()
    n = parse_uint(fields[0])
    if n is None:
        raise InputError(name, lineno, f"expected {_LDAC_EXPECTED} starting with the number of pairs N, "
                                       f"found {quote(fields[0])}")
    ids: list[int] = []
    counts: list[int] = []
    seen: set[int] = set()
    for pair in fields[1:]:
        word_s, colon, count_s = pair.partition(b":")
        if not colon:
            raise InputError(name, lineno, f"expected an 'id:count' pair, found {quote(pair)}")
        word, count = parse_uint(word_s), parse_uint(count_s)
        if word is None or word >= n_words:
            raise InputError(name, lineno, f"expected a word id in 0..{n_words - 1}, found {quote(word_s)} "
                                           f"in {quote(pair)}")
        if count is None or not 1 <= count <= INT32_MAX:
            limit = "" if count is None or count < 1 else f" of at most {INT32_MAX}"
            raise InputError(name, lineno, f"expected a positive integer count{limit}, found {quote(count_s)} "
                                           f"in {quote(pair)}")
        if word in seen:
            raise InputError(name, lineno, f"expected each word id once per line, found id {word} again")
        seen.add(word)
        ids.append(word)
        counts.append(count)
    if n != len(ids):
        raise InputError(name, lineno, f"expected N = {fields[0].decode()} id:count pairs as the line "
                                       f"starts, found {len(ids)}")
    return ids, counts


def ldac_parts(source: Source, vocab: list[str], lines_per_part: int | None = None
               ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The documents of an LDA-C ``source`` over ``vocab``, ``lines_per_part`` documents at a
    time (all at once when None), as ``(lengths, word ids, counts)`` arrays."""
    name = source.name
    n_words = len(vocab)
    lengths = array("q")
    cols = array("i")
    data = array("i")
    blank: int | None = None
    for lineno, line in iter_lines(source):
        if not line.strip():
            if blank is None:
                blank = lineno
            continue
        if blank is not None:
            raise InputError(name, blank, f"expected {_LDAC_EXPECTED} (0 for an empty document), "
                                          "found an empty line")
        match = _LDAC_FAST.fullmatch(line)
        ids: list[int] | None = None
        if match:
            pairs = match[2]
            values = list(map(int, pairs.replace(b":", b" ").split()))
            ids, counts = values[0::2], values[1::2]
            if int(match[1]) != len(ids) or (ids and (max(ids) >= n_words or min(counts) < 1
                                                       or len(set(ids)) != len(ids))):
                ids = None
        if ids is None:
            ids, counts = _ldac_line(line, lineno, name, n_words)
        lengths.append(len(ids))
        cols.extend(ids)
        data.extend(counts)
        if lines_per_part is not None and len(lengths) == lines_per_part:
            yield (np.frombuffer(lengths, dtype=np.int64).copy(), np.frombuffer(cols, dtype=np.int32).copy(),
                   np.frombuffer(data, dtype=np.int32).copy())
            lengths, cols, data = array("q"), array("i"), array("i")
    if lengths or lines_per_part is None:
        yield (np.frombuffer(lengths, dtype=np.int64), np.frombuffer(cols, dtype=np.int32),
               np.frombuffer(data, dtype=np.int32))


def ldac_counts(lengths: np.ndarray, cols: np.ndarray, data: np.ndarray, n_words: int) -> sp.csr_array:
    """The (documents, words) counts of one part of :func:`ldac_parts`."""
    rows = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    return build_csr(rows, cols, data, (lengths.size, n_words))


def read_ldac(source: Source, vocab: list[str]) -> Corpus:
    """Read an LDA-C file whose 0-based word ids index ``vocab``."""
    lengths, cols, data = next(ldac_parts(source, vocab))
    check_token_total(source.name, int(data.sum(dtype=np.int64)))
    return Corpus(ldac_counts(lengths, cols, data, len(vocab)), list(vocab), RowNumbers(lengths.size), format="ldac")


def ldac_lines(counts: sp.csr_array) -> Iterator[str]:
    """The lines of ``counts`` as an LDA-C file, one document each."""
    indptr, indices, data = counts.indptr, counts.indices, counts.data
    for d in range(counts.shape[0]):
        s, e = int(indptr[d]), int(indptr[d + 1])
        pairs = "".join(f" {i}:{c}" for i, c in zip(indices[s:e].tolist(), data[s:e].tolist()))
        yield f"{e - s}{pairs}\n"
