"""The in-memory corpus: a sparse document-term count matrix (SciPy CSR, ``int32`` counts,
sorted column indices, no explicit zeros), its vocabulary and a name for every document. It is
never dense. The readers and writers for files are in :mod:`ldacli.corpora.formats`.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from copy import copy
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.counts import (CountBuilder, checked_counts, counts_of_tokens, doc_lengths, renumbered_columns,
                                  sort_vocabulary, token_entries, tokens_of, value_counts, word_totals)
from ldacli.errors import InputError, SettingError
from ldacli.corpora.tokenizer import Tokenizer, chosen_tokenizer
from ldacli.corpora.vocab_rules import MAX_DF, MAX_VOCAB, MIN_DF, REMOVE_TOP, STOP_WORDS, VocabRules

# The samplers count tokens in 32-bit integers: a corpus holds at most this many tokens in all.
MAX_TOKENS = int(np.iinfo(np.int32).max)


class RowNumbers(Sequence[str]):
    """The ids ``"1"``, ``"2"``, ..., ``"n"`` of the ``n`` documents of a file that numbers them
    by their rows (UCI, LDA-C, Matrix Market, scipy ``.npz``): a sequence of strings, each made
    when asked for, equal to the list of them, held as one number (a list of them takes about 60
    bytes a document: 54 MB at 100 M tokens). As a NumPy array, text as narrow as the longest."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [str(d) for d in range(1, self.n + 1)[i]]
        return str(range(1, self.n + 1)[i])

    def __eq__(self, other) -> bool:
        if isinstance(other, RowNumbers):
            return self.n == other.n
        if isinstance(other, (list, tuple)):
            return len(other) == self.n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RowNumbers({self.n})"

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        ids = np.arange(1, self.n + 1).astype(f"<U{len(str(self.n))}")
        return ids if dtype is None else ids.astype(dtype, copy=False)


class _Counts:
    """:attr:`Corpus.counts`: the count matrix a corpus holds, or, for one that holds its tokens
    instead (:meth:`Corpus.as_tokens`), the matrix made again from them, which it then holds
    instead of them. Either way the corpus holds one of the two, never both."""

    def __get__(self, corpus, owner=None):
        if corpus is None:  # (a dataclass field without a default)
            raise AttributeError("counts")
        if corpus._matrix is None:
            words, doc_ptr = corpus._tokens
            corpus._matrix, corpus._tokens = counts_of_tokens(words, doc_ptr, corpus._shape), None
        return corpus._matrix

    def __set__(self, corpus, counts) -> None:
        corpus._matrix, corpus._tokens = counts, None


@dataclass
class Corpus:
    """D documents over a vocabulary of V words.

    ``counts`` is a ``scipy.sparse.csr_array`` of shape (D, V) and dtype int32 with sorted
    indices and strictly positive stored values. ``vocab[w]`` is the string of word ``w``;
    ``doc_ids[d]`` names document ``d`` (its id in the file, line number or file name; a list, or
    :class:`RowNumbers` for a file that numbers its documents by their rows).
    ``source`` is the path it was read from (``"-"`` for stdin) and ``format`` the reader used;
    ``n_shards`` the number of files of the shard folder it was read from, if it was (training's
    shards follow them unless told otherwise). ``dropped_tokens`` counts the tokens of the
    documents left out because their word is outside a fixed vocabulary: when it was read over
    one (``fixed_vocab``, a ``vocab`` file for text), and by :meth:`align`; ``removed_tokens``
    counts those of them whose word the vocabulary rules removed (a model's ``removed_words``,
    or the rules applied over the fixed vocabulary), so that over a model's vocabulary
    ``dropped_tokens`` are the tokens of words it has never seen. ``reading`` holds the
    settings it was read with (:data:`ldacli.corpora.formats.read.READING`, the tokenizer's for text;
    empty when it was made from a matrix). ``removed_words``: the words the vocabulary rules
    removed when it built its own vocabulary, and the words of its stop lists (sorted; what a
    model trained on it keeps, see :mod:`ldacli.corpora.vocab_rules`).

    A corpus holds its counts as that matrix or, once :meth:`as_tokens` has been called (the
    collapsed Gibbs sampler does, and keeps the tokens as they are), as its tokens: the same
    numbers, in the layout the sampler keeps, so that the process holds them once. ``counts``
    is then made again when asked for, and held instead of the tokens.
    """

    counts: sp.csr_array = _Counts()
    vocab: list[str]
    doc_ids: Sequence[str]
    source: str = ""
    format: str = ""
    notes: list[str] = field(default_factory=list)
    n_shards: int | None = None
    dropped_tokens: int = 0
    reading: dict = field(default_factory=dict)
    removed_tokens: int = 0
    removed_words: list[str] = field(default_factory=list, repr=False)
    # the tokens (words, doc_ptr) and the matrix's shape when it holds those instead of the matrix
    _tokens: tuple[np.ndarray, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)
    _shape: tuple[int, int] = field(default=(0, 0), init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        """What messages call it: its ``source``, or ``<corpus in memory>`` for one made in
        memory (texts, a matrix)."""
        return self.source or "<corpus in memory>"

    @property
    def shape(self) -> tuple[int, int]:
        """(documents, words), of the matrix or of the tokens it holds."""
        return self._shape if self._tokens is not None else self.counts.shape

    @property
    def n_docs(self) -> int:
        return self.shape[0]

    @property
    def n_words(self) -> int:
        return self.shape[1]

    @property
    def n_tokens(self) -> int:
        if self._tokens is not None:
            return int(self._tokens[1][-1])
        return int(self.counts.data.sum(dtype=np.int64))

    @property
    def doc_lengths(self) -> np.ndarray:
        if self._tokens is not None:
            return np.diff(self._tokens[1])
        return doc_lengths(self.counts)

    @property
    def n_empty_docs(self) -> int:
        return int(np.count_nonzero(self.doc_lengths == 0))

    def fingerprint(self) -> str:
        """SHA-256 of the counts and the vocabulary: equal fingerprints mean the same corpus
        (the same whether it holds the matrix or its tokens)."""
        if self._tokens is not None:
            words, doc_ptr = self._tokens

            def pieces(part: int):  # the matrix's indptr (0), indices (1) or data (2), a chunk at a time
                if part == 0:
                    yield np.zeros(1, np.int64)
                done = 0
                for _, _, ptr, indices, data in token_entries(words, doc_ptr):
                    yield (ptr[1:] + done, indices, data)[part]
                    done += int(ptr[-1])
            return fingerprint_of(self.shape, pieces(0), pieces(1), pieces(2), self.vocab)
        c = self.counts
        return fingerprint_of(c.shape, [np.ascontiguousarray(c.indptr, dtype=np.int64)],
                              [np.ascontiguousarray(c.indices, dtype=np.int32)],
                              [np.ascontiguousarray(c.data, dtype=np.int32)], self.vocab)

    def __repr__(self) -> str:
        return (f"<Corpus: {self.n_docs:,} documents, {self.n_words:,} words, {self.n_tokens:,} tokens"
                + (f", {self.format} from {self.source!r}" if self.source else "") + ">")

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, doc_ids: Iterable[str] | None = None,
                   vocab: Sequence[str] | None = None, stop_words: str | Sequence[str] | None = STOP_WORDS.default,
                   remove_top: int = REMOVE_TOP.default, min_df: int = MIN_DF.default, max_df: float = MAX_DF.default,
                   max_vocab: int | None = MAX_VOCAB.default, lowercase: bool | None = None,
                   addresses: str | None = None, token_pattern: str | None = None,
                   min_token_length: int | None = None, numbers: str | None = None,
                   tokenizer: Tokenizer | None = None, removed_words: Collection[str] = frozenset()) -> "Corpus":
        """A corpus of documents given as strings, read as a text file's lines are: the same
        tokenizer (:class:`ldacli.corpora.tokenizer.Tokenizer` of the settings ``lowercase``,
        ``addresses``, ``token_pattern``, ``min_token_length``, ``numbers``, or ``tokenizer``,
        a model's), vocabulary (alphabetical, or ``vocab`` fixed: other tokens are dropped and
        counted, apart from those of ``removed_words``, see :meth:`align`) and vocabulary rules
        (:mod:`ldacli.corpora.vocab_rules`). Ids are ``doc_ids``, or 1, 2, ... as a file's lines."""
        if isinstance(texts, (str, bytes)):
            raise SettingError("texts", "texts must be strings, one document each, found one string: give [text] for "
                                        "one document")
        tok = chosen_tokenizer(tokenizer, dict(lowercase=lowercase, addresses=addresses, token_pattern=token_pattern,
                                               min_token_length=min_token_length, numbers=numbers))
        rules = VocabRules(stop_words, remove_top, min_df, max_df, max_vocab)
        fixed = None if vocab is None else list(vocab)
        builder = CountBuilder(fixed, removed_words)
        ids = iter(doc_ids) if doc_ids is not None else None
        for i, text in enumerate(texts, start=1):
            if not isinstance(text, str):
                raise SettingError("texts", f"texts must be strings, found {type(text).__name__} (document {i})")
            builder.add(str(next(ids)) if ids is not None else str(i), Counter(tok(text)))
        counts, words = builder.matrix()
        if fixed is None:
            counts, words = sort_vocabulary(counts, words)
        n_tokens = int(counts.data.sum(dtype=np.int64))
        kept, kept_words, notes = rules.apply(counts, words, text=True, fixed=fixed is not None)
        removed = [] if fixed is not None else rules.removed_words(words, kept_words, text=True)
        by_rules = n_tokens - int(kept.data.sum(dtype=np.int64)) if fixed is not None else 0
        return cls(kept, kept_words, builder.doc_ids, format="texts", notes=notes,
                   dropped_tokens=builder.dropped_tokens, removed_tokens=builder.removed_tokens + by_rules,
                   reading={**tok.settings(), **rules.recorded(text=True, fixed=fixed is not None)},
                   removed_words=removed)

    @classmethod
    def from_matrix(cls, X, vocab: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None) -> "Corpus":
        """A corpus of the count matrix ``X`` (documents x words: a SciPy sparse matrix or array,
        or a dense array, of whole non-negative numbers; what scikit-learn's ``CountVectorizer``
        gives), its columns the words ``vocab`` (by default "0", "1", ...) and its rows the
        documents ``doc_ids`` (by default "1", "2", ..., as the matrix formats number them)."""
        matrix = X if sp.issparse(X) else np.asarray(X)
        if matrix.ndim != 2:
            raise SettingError("X", f"X must be a 2-d matrix of counts (documents x words), found {matrix.ndim} "
                                    f"dimensions")
        D, V = matrix.shape
        words = [str(j) for j in range(V)] if vocab is None else [str(w) for w in vocab]
        if len(words) != V or len(set(words)) != V:
            raise SettingError("vocab", f"vocab must be {V} distinct words (one per column), found {len(words)} "
                                        f"words, {len(set(words))} distinct")
        ids = RowNumbers(D) if doc_ids is None else [str(d) for d in doc_ids]
        if len(ids) != D:
            raise SettingError("doc_ids", f"doc_ids must name the {D} rows, found {len(ids)}")
        counts = checked_counts("matrix", matrix, (D, V))
        check_token_total("matrix", int(counts.data.sum(dtype=np.int64)))
        return cls(counts, words, ids, format="matrix")

    def tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """Expand counts into one entry per token.

        Returns ``(words, doc_ptr)``: ``words`` (N,) int32 word ids, document by document, each
        document's words in increasing id order; ``doc_ptr`` (D+1,) int64 so that document
        ``d``'s tokens are ``words[doc_ptr[d]:doc_ptr[d+1]]``. Those the corpus holds (read-only)
        after :meth:`as_tokens`, else new arrays.
        """
        if self._tokens is not None:
            return self._tokens
        check_token_total(self.name, self.n_tokens)
        return tokens_of(self.counts)

    def as_tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`tokens`, which the corpus holds from now on instead of its count matrix
        (read-only: whoever keeps them shares them), so that a sampler that keeps them and
        the corpus hold them once; ``counts`` makes the matrix again when asked for."""
        if self._tokens is None:
            shape = self.counts.shape
            words, doc_ptr = self.tokens()
            words.flags.writeable = doc_ptr.flags.writeable = False
            self._matrix, self._tokens, self._shape = None, (words, doc_ptr), shape
        return self._tokens

    def word_frequencies(self) -> np.ndarray:
        """(V,) int64: how many tokens of each word."""
        if self._tokens is not None:
            return value_counts(self._tokens[0], self.n_words)
        return word_totals(self.counts, self.n_words)

    def without_unused_words(self) -> tuple["Corpus", int]:
        """This corpus without the vocabulary's words that never occur in it (a model gives them
        no row); returns it and how many words were dropped. The order of the others is kept."""
        used = self.word_frequencies() > 0
        dropped = int(self.n_words - used.sum())
        if dropped == 0:
            return self, 0
        vocab = [w for w, keep in zip(self.vocab, used) if keep]
        return replace(self, counts=renumbered_columns(self.counts, used), vocab=vocab, doc_ids=copy(self.doc_ids),
                       notes=list(self.notes)), dropped

    def align(self, vocab: list[str], removed_words: Collection[str] = frozenset()) -> tuple["Corpus", int]:
        """Re-express this corpus over another vocabulary, matching words by string.

        Words absent from ``vocab`` are dropped; returns the new corpus and the number of tokens
        dropped, which its :attr:`dropped_tokens` adds to this corpus's, apart from those whose
        word is one of ``removed_words`` (a model's, :attr:`removed_words`), which its
        :attr:`removed_tokens` adds.
        """
        index = {w: i for i, w in enumerate(vocab)}
        mapping = np.array([index.get(w, -1) for w in self.vocab], dtype=np.int64)
        coo = self.counts.tocoo()
        new_cols = mapping[coo.col] if coo.nnz else np.zeros(0, dtype=np.int64)
        keep = new_cols >= 0
        removed_cols = np.array([w in removed_words for w in self.vocab], dtype=bool) if removed_words else None
        outside = ~keep
        removed = int(coo.data[outside & removed_cols[coo.col]].sum(dtype=np.int64)) if removed_cols is not None \
            else 0
        dropped = int(coo.data[outside].sum(dtype=np.int64)) - removed
        counts = sp.csr_array(
            (coo.data[keep].astype(np.int32), (coo.row[keep], new_cols[keep])),
            shape=(self.n_docs, len(vocab)),
            dtype=np.int32,
        )
        counts.sum_duplicates()
        counts.sort_indices()
        aligned = Corpus(counts, list(vocab), copy(self.doc_ids), self.source, self.format,
                         dropped_tokens=self.dropped_tokens + dropped, reading=self.reading,
                         removed_tokens=self.removed_tokens + removed, removed_words=self.removed_words)
        return aligned, dropped


def fingerprint_of(shape: tuple[int, int], indptr: Iterable[bytes], indices: Iterable[bytes],
                   data: Iterable[bytes], vocab: list[str]) -> str:
    """:meth:`Corpus.fingerprint` of a CSR matrix given as pieces of the bytes of its int64
    ``indptr``, int32 ``indices`` and int32 ``data`` (bytes, or contiguous arrays of those
    types, hashed where they are)."""
    h = hashlib.sha256()
    h.update(np.asarray(shape, dtype=np.int64).tobytes())
    for part in (indptr, indices, data):
        for piece in part:
            h.update(piece)
    h.update("\n".join(vocab).encode("utf-8"))
    return h.hexdigest()


class FingerprintBuilder:
    """:meth:`Corpus.fingerprint` of a corpus that arrives a block of documents at a time: the
    matrix's arrays are spooled to temporary files (in ``folder``; removed when closed) and
    hashed in order at the end, so memory does not grow with the corpus."""

    def __init__(self, folder: str | None = None):
        self.files = [tempfile.TemporaryFile(dir=folder) for _ in range(3)]
        self.n_docs = 0
        self.nnz = 0
        self.n_words: int | None = None
        self.files[0].write(np.zeros(1, dtype=np.int64).tobytes())

    def add(self, counts: sp.csr_array) -> None:
        self.n_words = counts.shape[1]
        self.files[0].write((np.asarray(counts.indptr[1:], dtype=np.int64) + self.nnz).tobytes())
        self.files[1].write(np.ascontiguousarray(counts.indices, dtype=np.int32).tobytes())
        self.files[2].write(np.ascontiguousarray(counts.data, dtype=np.int32).tobytes())
        self.n_docs += counts.shape[0]
        self.nnz += int(counts.indptr[-1])

    def hexdigest(self, vocab: list[str]) -> str:
        def pieces(f):
            f.seek(0)
            return iter(lambda: f.read(1 << 20), b"")

        return fingerprint_of((self.n_docs, len(vocab)), *(pieces(f) for f in self.files), vocab)

    def close(self) -> None:
        for f in self.files:
            f.close()


def check_token_total(name: str, total: int) -> None:
    """Refuse a corpus of more tokens than the samplers can count (:data:`MAX_TOKENS`)."""
    if total > MAX_TOKENS:
        raise InputError(name, None, f"expected at most {MAX_TOKENS} tokens in all (the samplers count "
                                     f"in 32-bit integers), found {total}")
