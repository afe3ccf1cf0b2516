r"""Plain text to word counts: tokenizer, stop words, vocabulary building and pruning.

Tokenizer
---------
Each document (a line of a text file, or a whole ``.txt`` file of a folder) must be UTF-8.

1. The text is lowercased with Python's :meth:`str.lower`.
2. Tokens are the maximal runs of Unicode letters: the matches of the regular expression
   ``[^\W\d_]+`` (Python :mod:`re`, Unicode mode), i.e. word characters other than digits and
   the underscore. Everything else separates tokens: digits, ``_``, punctuation, whitespace,
   apostrophes, hyphens. ``"Don't re-use X11, the_end"`` splits into ``don``, ``t``, ``re``,
   ``use``, ``x``, ``the``, ``end``.
3. Tokens shorter than 3 characters (code points, after lowercasing) are dropped: above,
   ``don``, ``use``, ``the``, ``end`` remain.
4. Stop words are removed (``don`` and ``the`` above, with the English list).

No Unicode normalisation is applied: a letter followed by a combining accent (``e`` + U+0301)
ends the token there, while the precomposed ``é`` is part of it. Lines end at ``\n``; a
``\r`` before it is simply a separator.

Stop words
----------
``"english"`` is the list shipped in ``ldacli/data/stopwords_en.txt``; ``None`` or ``"none"``
disables stop-word removal; any other string is the path of a UTF-8 file with one word per
line (blank lines and lines starting with ``#`` are ignored; words are lowercased).

Vocabulary
----------
Without a fixed vocabulary, every distinct token is a word; after counting, the vocabulary is
pruned by :func:`prune_vocabulary` and sorted alphabetically (by code point). With a fixed
vocabulary, its words are the columns, in its order, tokens outside it are dropped and there is
neither pruning nor stop-word removal (the vocabulary alone decides what counts).
"""

from __future__ import annotations

import importlib.resources
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from ldacli.errors import InputError, LdacliError
from ldacli.fileio import Source, iter_lines

TOKEN_PATTERN = re.compile(r"[^\W\d_]+")
MIN_TOKEN_LENGTH = 3
ENGLISH = "english"
STOPWORDS_RESOURCE = "stopwords_en.txt"


def tokenize(text: str, stop_words: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The tokens of ``text`` in order: lowercased letter runs of 3+ characters, minus stop words."""
    return [
        tok
        for tok in TOKEN_PATTERN.findall(text.lower())
        if len(tok) >= MIN_TOKEN_LENGTH and tok not in stop_words
    ]


def _parse_word_list(lines: Iterable[tuple[int, bytes]], name: str) -> frozenset[str]:
    words = set()
    for lineno, raw in lines:
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise InputError(name, lineno, f"expected UTF-8 text, found invalid byte "
                                           f"0x{raw[exc.start]:02x} at column {exc.start + 1}") from None
        if line and not line.startswith("#"):
            words.add(line.lower())
    return frozenset(words)


def load_stop_words(spec: str | None) -> frozenset[str]:
    """The stop-word set named by ``spec``: ``"english"``, ``None``/``"none"``, or a file path."""
    if spec is None or spec.lower() == "none":
        return frozenset()
    if spec.lower() == ENGLISH:
        resource = importlib.resources.files("ldacli").joinpath("data", STOPWORDS_RESOURCE)
        data = resource.read_bytes()
        return _parse_word_list(enumerate(data.split(b"\n"), start=1), STOPWORDS_RESOURCE)
    source = Source.open(spec)
    return _parse_word_list(iter_lines(source), source.name)


class CountBuilder:
    """Accumulates documents as sparse word counts.

    Without ``fixed_vocab`` each new word gets the next column (order of first appearance);
    with it, the columns are its words and other tokens are dropped (and counted in
    ``dropped_tokens``). Memory grows with the number of distinct (document, word) pairs, held
    in typed arrays rather than Python objects.
    """

    def __init__(self, fixed_vocab: Sequence[str] | None = None):
        self.fixed = fixed_vocab is not None
        self.words: list[str] = list(fixed_vocab) if fixed_vocab is not None else []
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            seen: set[str] = set()
            dup = next(w for w in self.words if w in seen or seen.add(w))  # type: ignore[func-returns-value]
            raise LdacliError(f"fixed_vocab: expected distinct words, found {dup!r} more than once")
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


def check_pruning(min_df: int, max_df: float, max_vocab: int | None) -> None:
    """Validate the pruning parameters, raising :class:`LdacliError` with the expected range."""
    if isinstance(min_df, bool) or not isinstance(min_df, (int, np.integer)) or min_df < 1:
        raise LdacliError(f"min_df: expected an integer >= 1, found {min_df!r}")
    if isinstance(max_df, bool) or not isinstance(max_df, (int, float, np.number)) or not 0 < max_df <= 1:
        raise LdacliError(f"max_df: expected a fraction of documents in (0, 1], found {max_df!r}")
    if max_vocab is not None and (
        isinstance(max_vocab, bool) or not isinstance(max_vocab, (int, np.integer)) or max_vocab < 1
    ):
        raise LdacliError(f"max_vocab: expected None or an integer >= 1, found {max_vocab!r}")


def prune_vocabulary(
    counts: sp.csr_array, vocab: list[str], *, min_df: int = 1, max_df: float = 1.0,
    max_vocab: int | None = None,
) -> tuple[sp.csr_array, list[str], str | None]:
    """Drop rare, ubiquitous and surplus words; keeps the remaining columns in their order.

    In turn: words in fewer than ``min_df`` documents go; words in more than ``max_df * D``
    documents go; of the rest, only the ``max_vocab`` with the largest total count stay (ties
    go to the alphabetically smaller word). Returns the new matrix, its vocabulary and a note
    describing what was dropped (``None`` when nothing was).
    """
    check_pruning(min_df, max_df, max_vocab)
    n_docs, n_words = counts.shape
    df = np.bincount(counts.indices, minlength=n_words)
    total = word_totals(counts, n_words)
    keep = np.ones(n_words, dtype=bool)
    rare = df < min_df
    keep &= ~rare
    common = keep & (df > max_df * n_docs)
    keep &= ~common
    surplus = 0
    if max_vocab is not None and keep.sum() > max_vocab:
        kept = np.flatnonzero(keep)
        ranked = sorted(kept.tolist(), key=lambda j: (-int(total[j]), vocab[j]))
        keep[:] = False
        keep[ranked[:max_vocab]] = True
        surplus = len(kept) - max_vocab
    if keep.all():
        return counts, vocab, None
    columns = np.flatnonzero(keep)
    pruned = sp.csr_array(counts[:, columns])
    pruned.eliminate_zeros()
    pruned.sort_indices()
    pruned = sp.csr_array(pruned, dtype=np.int32)
    parts = []
    if rare.any():
        parts.append(f"{int(rare.sum())} in fewer than min_df={min_df} documents")
    if common.any():
        parts.append(f"{int(common.sum())} in more than max_df={max_df:g} of the documents")
    if surplus:
        parts.append(f"{surplus} beyond max_vocab={max_vocab}")
    dropped_tokens = int(total[~keep].sum())
    note = (f"pruning kept {len(columns)} of {n_words} words, dropping " + ", ".join(parts)
            + f" ({dropped_tokens} tokens)")
    return pruned, [vocab[j] for j in columns.tolist()], note


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
