"""Plain text corpora: UTF-8, one document per line (ids: line numbers), or a folder of ``.txt``
files, one document each (ids: file names, in sorted order; hidden files and sub-folders are
skipped).

Documents are split into tokens by :func:`ldacli.text.tokenize` and counted. Without a fixed
vocabulary every distinct token is a word and the vocabulary is sorted alphabetically (by code
point); with one, its words are the columns, in its order, and other tokens are dropped. Stop
words and the other vocabulary rules come after, as for every format (:mod:`ldacli.vocab_rules`).
"""

from __future__ import annotations

import os
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from ldacli.corpus import Corpus
from ldacli.counts import build_csr
from ldacli.errors import InputError
from ldacli.fileio import Source, iter_lines
from ldacli.formats.parsing import decode_error
from ldacli.text import tokenize


class CountBuilder:
    """Accumulates documents as sparse word counts.

    Without ``fixed_vocab`` each new word gets the next column (order of first appearance);
    with it (distinct words), the columns are its words and other tokens are dropped (and
    counted in ``dropped_tokens``). Memory grows with the number of distinct (document, word) pairs, held
    in typed arrays rather than Python objects.
    """

    def __init__(self, fixed_vocab: Sequence[str] | None = None):
        self.fixed = fixed_vocab is not None
        self.words: list[str] = list(fixed_vocab) if fixed_vocab is not None else []
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        self.doc_ids: list[str] = []
        self.dropped_tokens = 0
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


def _decoded_lines(source: Source, auto: bool) -> Iterator[tuple[int, str]]:
    """The lines of ``source`` as text, numbered from 1; invalid UTF-8 is an InputError
    (``auto``: the format was being guessed, see :func:`~ldacli.formats.parsing.decode_error`)."""
    for lineno, raw in iter_lines(source):
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise decode_error(source.name, lineno, raw, exc, auto) from None


def _read_text_file(source: Source, builder: CountBuilder, auto: bool) -> None:
    """Add one document per line of ``source`` to ``builder`` (ids: line numbers)."""
    for lineno, line in _decoded_lines(source, auto):
        builder.add(str(lineno), Counter(tokenize(line)))


def _read_text_dir(folder: str, builder: CountBuilder) -> None:
    """Add each ``.txt`` file of ``folder`` as one document (sorted by name; ids: file names).

    Hidden files (names starting with ``.``) and sub-folders are skipped.
    """
    try:
        entries = sorted(
            entry.name for entry in os.scandir(folder)
            if entry.name.endswith(".txt") and not entry.name.startswith(".") and entry.is_file()
        )
    except OSError as exc:
        raise InputError(folder, None, f"cannot read: {exc.strerror or exc}") from None
    for file_name in entries:
        counts: Counter[str] = Counter()
        for _, line in _decoded_lines(Source.open(os.path.join(folder, file_name)), auto=False):
            counts.update(tokenize(line))
        builder.add(file_name, counts)


def read_text(path: str, source: Source | None, *, fixed: list[str] | None, auto: bool) -> Corpus:
    """Read a text file (``source``) or a folder of ``.txt`` files (``source is None``), over the
    vocabulary ``fixed`` (its ``dropped_tokens`` those outside it) or its own, sorted; ``auto``:
    the format was detected, not given (see :func:`~ldacli.formats.parsing.decode_error`)."""
    builder = CountBuilder(fixed)
    if source is None:
        _read_text_dir(path, builder)
        fmt, name = "textdir", path
    else:
        _read_text_file(source, builder, auto)
        fmt, name = "text", source.name
    if builder.n_docs == 0:
        hint = " (no .txt files in this folder)" if source is None else ""
        raise InputError(name, None, f"empty corpus: expected at least one document{hint}")
    counts, vocab = builder.matrix()
    if fixed is None:
        counts, vocab = sort_vocabulary(counts, vocab)
    return Corpus(counts, vocab, builder.doc_ids, format=fmt, dropped_tokens=builder.dropped_tokens)
