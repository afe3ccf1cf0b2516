"""Bag-of-words corpora: the in-memory form and the readers and writers for files.

A corpus is a sparse document-term count matrix (SciPy CSR, ``int32`` counts, sorted column
indices, no explicit zeros), its vocabulary and a name for every document. It is never dense.

Formats read by :func:`read_corpus` (``format="auto"`` recognises them by content):

* ``uci`` -- UCI bag-of-words (``docword.NAME.txt[.gz]``): three header lines ``D``, ``W``,
  ``NNZ``, then ``docID wordID count`` lines with 1-based ids; vocabulary file ``vocab.NAME.txt``.
  Document ids are the docIDs; documents that never appear are kept, empty.
* ``ldac`` -- LDA-C: one document per line, ``N id:count id:count ...`` with ``N`` pairs and
  0-based ids; ``0`` is an empty document. Vocabulary ``X.tokens``, ``X.vocab`` or ``vocab.txt``
  beside ``X.ldac``. Document ids are the 1-based line numbers.
* ``text`` -- UTF-8 plain text, one document per line (ids: line numbers), or a folder of
  ``.txt`` files, one document each (ids: file names, in sorted order). Tokenizing, stop words
  and pruning are described in :mod:`ldacli.text`.
* ``mtx``, ``npz`` -- Matrix Market and scipy sparse ``.npz`` (see :mod:`ldacli.matrices`).
* ``shards`` -- a shard folder (:mod:`ldacli.shard_folder`), read whole; :func:`write_shards`
  writes one.

Vocabulary files hold one word per line (line ``i`` is word ``i``); trailing whitespace is
stripped; empty lines (other than at the very end) and repeated words are errors. Every input
may be gzip-compressed (recognised by its magic bytes) and ``-`` reads standard input. Every
problem with a file's content raises :class:`~ldacli.errors.InputError` naming the file and,
where there is one, the line.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

import numpy as np
import scipy.sparse as sp

from ldacli.errors import InputError, LdacliError
from ldacli.fileio import READ_ERRORS, Source, atomic_write, iter_blocks, iter_lines
from ldacli.matrices import MTX_MAGIC, ZIP_MAGIC, read_mtx, read_scipy_npz, write_mtx, write_scipy_npz
from ldacli.memory import check_fits
from ldacli.shard_folder import is_shard_folder, open_shard_folder, tokens_of, write_shard_folder
from ldacli.text import (
    CountBuilder,
    build_csr,
    check_pruning,
    doc_lengths,
    load_stop_words,
    prune_vocabulary,
    sort_vocabulary,
    tokenize,
    word_totals,
)

FORMATS = ("auto", "uci", "ldac", "text", "mtx", "npz", "shards")
FILE_FORMATS = ("uci", "ldac", "text", "mtx", "npz")  # detected by content; "shards" is a folder
WRITE_FORMATS = ("ldac", "uci", "mtx", "npz")
INT32_MAX = int(np.iinfo(np.int32).max)
# Memory a document costs before it holds any word (its id string, its row pointer).
BYTES_PER_DOC = 80
# The samplers count tokens in 32-bit integers: a corpus holds at most this many tokens in all.
MAX_TOKENS = INT32_MAX
# What a format is called in the note that says which one content sniffing picked.
FORMAT_NAMES = {"uci": "UCI bag-of-words", "ldac": "LDA-C", "text": "plain text, one document per line",
                "mtx": "Matrix Market (documents x words)", "npz": "a scipy sparse matrix (.npz)"}


@dataclass
class Corpus:
    """D documents over a vocabulary of V words.

    ``counts`` is a ``scipy.sparse.csr_array`` of shape (D, V) and dtype int32 with sorted
    indices and strictly positive stored values. ``vocab[w]`` is the string of word ``w``;
    ``doc_ids[d]`` names document ``d`` (its id in the file, line number or file name).
    ``source`` is the path it was read from (``"-"`` for stdin) and ``format`` the reader used;
    ``n_shards`` the number of files of the shard folder it was read from, if it was (training's
    shards follow them unless told otherwise).
    """

    counts: sp.csr_array
    vocab: list[str]
    doc_ids: list[str]
    source: str = ""
    format: str = ""
    notes: list[str] = field(default_factory=list)
    n_shards: int | None = None

    @property
    def n_docs(self) -> int:
        return self.counts.shape[0]

    @property
    def n_words(self) -> int:
        return self.counts.shape[1]

    @property
    def n_tokens(self) -> int:
        return int(self.counts.data.sum(dtype=np.int64))

    @property
    def doc_lengths(self) -> np.ndarray:
        return doc_lengths(self.counts)

    @property
    def n_empty_docs(self) -> int:
        return int(np.count_nonzero(self.doc_lengths == 0))

    def fingerprint(self) -> str:
        """SHA-256 of the counts and the vocabulary: equal fingerprints mean the same corpus."""
        h = hashlib.sha256()
        c = self.counts
        h.update(np.asarray(c.shape, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(c.indptr, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(c.indices, dtype=np.int32).tobytes())
        h.update(np.ascontiguousarray(c.data, dtype=np.int32).tobytes())
        h.update("\n".join(self.vocab).encode("utf-8"))
        return h.hexdigest()

    def tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """Expand counts into one entry per token.

        Returns ``(words, doc_ptr)``: ``words`` (N,) int32 word ids, document by document, each
        document's words in increasing id order; ``doc_ptr`` (D+1,) int64 so that document
        ``d``'s tokens are ``words[doc_ptr[d]:doc_ptr[d+1]]``.
        """
        check_token_total(self.source or "corpus", self.n_tokens)
        return tokens_of(self.counts)

    def word_frequencies(self) -> np.ndarray:
        """(V,) int64: how many tokens of each word."""
        return word_totals(self.counts, self.n_words)

    def without_unused_words(self) -> tuple["Corpus", int]:
        """This corpus without the vocabulary's words that never occur in it (a model gives them
        no row); returns it and how many words were dropped. The order of the others is kept."""
        used = np.zeros(self.n_words, dtype=bool)
        used[self.counts.indices] = True
        dropped = int(self.n_words - used.sum())
        if dropped == 0:
            return self, 0
        new_id = np.cumsum(used) - 1
        counts = sp.csr_array((self.counts.data.copy(), new_id[self.counts.indices].astype(self.counts.indices.dtype),
                               self.counts.indptr.copy()), shape=(self.n_docs, int(used.sum())))
        vocab = [w for w, keep in zip(self.vocab, used) if keep]
        return Corpus(counts, vocab, list(self.doc_ids), self.source, self.format, list(self.notes)), dropped

    def align(self, vocab: list[str]) -> tuple["Corpus", int]:
        """Re-express this corpus over another vocabulary, matching words by string.

        Words absent from ``vocab`` are dropped; returns the new corpus and the number of
        tokens dropped.
        """
        index = {w: i for i, w in enumerate(vocab)}
        mapping = np.array([index.get(w, -1) for w in self.vocab], dtype=np.int64)
        coo = self.counts.tocoo()
        new_cols = mapping[coo.col] if coo.nnz else np.zeros(0, dtype=np.int64)
        keep = new_cols >= 0
        dropped = int(coo.data[~keep].sum(dtype=np.int64))
        counts = sp.csr_array(
            (coo.data[keep].astype(np.int32), (coo.row[keep], new_cols[keep])),
            shape=(self.n_docs, len(vocab)),
            dtype=np.int32,
        )
        counts.sum_duplicates()
        counts.sort_indices()
        aligned = Corpus(counts, list(vocab), list(self.doc_ids), self.source, self.format)
        return aligned, dropped


def check_token_total(name: str, total: int) -> None:
    """Refuse a corpus of more tokens than the samplers can count (:data:`MAX_TOKENS`)."""
    if total > MAX_TOKENS:
        raise InputError(name, None, f"expected at most {MAX_TOKENS} tokens in all (the samplers count "
                                     f"in 32-bit integers), found {total}")


# ---------------------------------------------------------------------------------------------
# Small helpers shared by the readers


def _show(token: bytes, limit: int = 40) -> str:
    """A token as quoted, printable text for an error message (long ones cut)."""
    text = token.decode("utf-8", "backslashreplace")
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)


def _found(line: bytes) -> str:
    """How to describe ``line`` after 'found' in a message."""
    return "an empty line" if not line.strip() else _show(line.strip())


def _uint(token: bytes) -> int | None:
    """The value of an unsigned ASCII decimal ``token``; ``None`` if it is not one.

    Values too long to matter come back as a huge number, so range checks reject them
    (and Python's limit on converting very long digit strings is never hit).
    """
    if not token.isdigit():
        return None
    if len(token) > 18:
        return 10**18
    return int(token)


def _decode_error(name: str, lineno: int, raw: bytes, exc: UnicodeDecodeError, auto: bool) -> InputError:
    byte = raw[exc.start]
    where = f"invalid byte 0x{byte:02x} at column {exc.start + 1}"
    if auto:
        return InputError(name, lineno, f"neither UCI, LDA-C nor UTF-8 text: expected a UCI, LDA-C or "
                                        f"UTF-8 text corpus, found {where}")
    return InputError(name, lineno, f"expected UTF-8 text, found {where}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# ---------------------------------------------------------------------------------------------
# Vocabulary files


def read_vocab(path: str | os.PathLike[str], *, stdin: IO | None = None) -> list[str]:
    """Read a vocabulary file: one word per line, line ``i`` (1-based) is word ``i - 1``.

    Trailing whitespace (including ``\\r``) is stripped. Empty lines at the end are ignored;
    elsewhere they are errors, as are repeated words and invalid UTF-8.
    """
    source = Source.open(path, stdin)
    return _read_vocab_source(source)


def _read_vocab_source(source: Source) -> list[str]:
    words: list[str] = []
    first_line: dict[str, int] = {}
    blank: int | None = None
    for lineno, raw in iter_lines(source):
        try:
            word = raw.decode("utf-8").rstrip()
        except UnicodeDecodeError as exc:
            raise _decode_error(source.name, lineno, raw, exc, auto=False) from None
        if not word:
            if blank is None:
                blank = lineno
            continue
        if blank is not None:
            raise InputError(source.name, blank, "expected a word (one per line), found an empty line")
        if word in first_line:
            raise InputError(source.name, lineno, f"expected each word once, found {word!r} again "
                                                  f"(first on line {first_line[word]})")
        first_line[word] = lineno
        words.append(word)
    if not words:
        raise InputError(source.name, None, "empty vocabulary: expected at least one word (one per line)")
    return words


def vocab_candidates(path: str) -> list[str]:
    """The vocabulary files looked for beside the corpus file ``path``, in order.

    ``docword.NAME.txt[.gz]`` -> ``vocab.NAME.txt[.gz]``; then for any ``X.ext[.gz]``:
    ``X.tokens``, ``X.vocab`` and ``vocab.txt`` in the same folder.
    """
    folder, name = os.path.split(path)
    base = name[:-3] if name.endswith(".gz") else name
    names: list[str] = []
    uci = re.fullmatch(r"docword\.(.+)\.txt", base)
    if uci:
        names += [f"vocab.{uci[1]}.txt", f"vocab.{uci[1]}.txt.gz"]
    stem = os.path.splitext(base)[0] if "." in base.lstrip(".") else base
    names += [stem + ".tokens", stem + ".vocab", "vocab.txt"]
    candidates = []
    for candidate in dict.fromkeys(os.path.join(folder, n) for n in names):
        if os.path.abspath(candidate) != os.path.abspath(path):
            candidates.append(candidate)
    return candidates


def _find_vocab(path: str) -> str | None:
    for candidate in vocab_candidates(path):
        if os.path.isfile(candidate):
            return candidate
    return None


# ---------------------------------------------------------------------------------------------
# Format detection

_INT_LINE = re.compile(rb"\s*\d+\s*")
_SNIFF_LINES = 4


# A line that looks like LDA-C: a number, then word:count pairs, well formed or not (the LDA-C
# reader then says what is wrong with them, in LDA-C terms).
_LDAC_LIKE = re.compile(rb"\s*[+-]?\d+(?:\s+[^\s:]*:[^\s:]*)+\s*")
# A line that looks like a UCI triple "docID wordID count" (signs allowed: its reader says why not).
_TRIPLE_LIKE = re.compile(rb"\s*[+-]?\d+\s+[+-]?\d+\s+[+-]?\d+\s*")


def _detect(source: Source) -> str:
    """'npz' (a zip archive), 'mtx' (a Matrix Market banner), else 'uci', 'ldac' or 'text' from
    the first non-empty lines of ``source``.

    A file that looks like LDA-C or UCI is read as such even when its lines are malformed, so
    that a typo is reported in that format's terms instead of changing what the file means:
    LDA-C when the first line is a number followed by ``id:count``-like pairs (or a lone ``N``
    followed, after lines of single integers, by such a line: empty documents first); UCI when
    the first three lines are single integers (the header), or when fewer are followed by a line
    of three integers (a header a line short).
    """
    with source.stream() as (stream, _):
        try:
            head = stream.read(len(MTX_MAGIC))
        except READ_ERRORS:
            head = b""  # the line reader below reports the damage, with its line
    if head.startswith(ZIP_MAGIC):
        return "npz"
    if head.lower().startswith(MTX_MAGIC):
        return "mtx"
    lines: list[bytes] = []
    with contextlib.closing(iter_lines(source)) as numbered:
        for _, line in numbered:
            if line.strip():
                lines.append(line)
                if len(lines) == _SNIFF_LINES:
                    break
    if not lines:
        return "text"
    if _LDAC_LIKE.fullmatch(lines[0]):
        return "ldac"
    if _INT_LINE.fullmatch(lines[0]):
        n_ints = next((i for i, line in enumerate(lines) if not _INT_LINE.fullmatch(line)), len(lines))
        after = lines[n_ints] if n_ints < len(lines) else None
        if after is None:
            return "uci" if n_ints >= 3 else "ldac"  # "0" lines: empty LDA-C documents
        if _LDAC_LIKE.fullmatch(after):
            return "ldac"
        if n_ints >= 3 or _TRIPLE_LIKE.fullmatch(after):
            return "uci"
    return "text"


def detect_format(path: str | os.PathLike[str], *, stdin: IO | None = None) -> str:
    """The format of the corpus at ``path``: ``'uci'``, ``'ldac'``, ``'text'`` or ``'textdir'``.

    A folder is ``'textdir'``; for a file (gunzipped first if compressed) see :func:`_detect`;
    anything that looks like neither UCI nor LDA-C is text. ``"-"`` reads (and uses up) standard
    input, so call :func:`read_corpus` instead when the corpus comes from there.
    """
    path = os.fspath(path)
    if path != "-" and os.path.isdir(path):
        return "textdir"
    return _detect(Source.open(path, stdin))


# ---------------------------------------------------------------------------------------------
# UCI bag-of-words

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
        value = _uint(line.strip())
        if value is None:
            raise InputError(name, line_no, f"expected {label} (a non-negative integer), found {_found(line)}")
        if value > INT32_MAX:
            raise InputError(name, line_no, f"expected {label} of at most {INT32_MAX}, "
                                            f"found {_show(line.strip())}")
        values.append(value)
    return values, block[pos:]


def _uci_line(line: bytes, lineno: int, name: str, n_docs: int, n_words: int) -> tuple[int, int, int]:
    """Parse and check one ``docID wordID count`` line."""
    fields = line.split()
    if len(fields) != 3:
        raise InputError(name, lineno, f"expected 3 fields {_TRIPLE}, found {len(fields)}: {_found(line)}")
    doc, word, count = (_uint(f) for f in fields)
    if doc is None or not 1 <= doc <= n_docs:
        raise InputError(name, lineno, f"expected docID as an integer in 1..{n_docs}, found {_show(fields[0])}")
    if word is None or not 1 <= word <= n_words:
        raise InputError(name, lineno, f"expected wordID as an integer in 1..{n_words}, found {_show(fields[1])}")
    if count is None or not 1 <= count <= INT32_MAX:
        limit = "" if count is None or count < 1 else f" of at most {INT32_MAX}"
        raise InputError(name, lineno, f"expected count as a positive integer{limit}, found {_show(fields[2])}")
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


def _read_uci(source: Source, vocab: list[str], vocab_name: str | None) -> Corpus:
    """Read a UCI bag-of-words file whose word ids index ``vocab``.

    ``vocab_name`` is the vocabulary file, blamed when its size disagrees with ``W``; ``None``
    when ``vocab`` was not read from a file.
    """
    name = source.name
    blocks = iter_blocks(source)
    (n_docs, n_words, nnz), rest = _uci_header(blocks, name)
    check_fits(f"{name}: the {n_docs} documents its header declares (line 1)", n_docs * BYTES_PER_DOC)
    lineno = 4  # the line of the first triple
    if n_words != len(vocab):
        if vocab_name is None:
            raise InputError(name, 2, f"expected W = {len(vocab)}, the size of the given vocabulary, "
                                      f"found {n_words}")
        raise InputError(vocab_name, None, f"expected {n_words} words (W on line 2 of {name}), "
                                           f"found {len(vocab)}")
    parts: list[np.ndarray] = []
    n_triples = 0
    blank: int | None = None  # first empty line seen after the last triple
    body = blocks if not rest else _chain_block((lineno, rest), blocks)
    for first, block in body:
        fast = _uci_block_fast(block, n_docs, n_words)
        if fast is not None:
            if blank is not None:
                raise InputError(name, blank, f"expected {_TRIPLE}, found an empty line")
            parts.append(fast)
            n_triples += len(fast)
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
            parts.append(np.array(slow, dtype=np.int64))
            n_triples += len(slow)
    triples = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
    rows = triples[:, 0] - 1
    cols = triples[:, 1] - 1
    keys = rows * n_words + cols
    if keys.size > 1 and not np.all(keys[1:] > keys[:-1]):
        order = np.argsort(keys, kind="stable")
        repeat = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if repeat.size:
            k = int(order[repeat + 1].min())  # earliest line that repeats a pair
            first_k = int(np.flatnonzero(keys == keys[k])[0])
            raise InputError(name, lineno + k,
                             f"expected each (docID, wordID) pair once, found docID {rows[k] + 1} "
                             f"wordID {cols[k] + 1} again (first on line {lineno + first_k})")
    if n_triples != nnz:
        raise InputError(name, 3, f"expected NNZ = {nnz} {_TRIPLE} lines as this header line says, "
                                  f"found {n_triples}")
    check_token_total(name, int(triples[:, 2].sum()))
    counts = build_csr(rows, cols, triples[:, 2], (n_docs, n_words))
    doc_ids = [str(d) for d in range(1, n_docs + 1)]
    return Corpus(counts, list(vocab), doc_ids, format="uci")


def _chain_block(head: tuple[int, bytes], rest: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    yield head
    yield from rest


# ---------------------------------------------------------------------------------------------
# LDA-C

_LDAC_FAST = re.compile(rb"\s*(\d{1,9})((?:\s+\d{1,9}:\d{1,9})*)\s*")
_LDAC_EXPECTED = "'N id:count id:count ...'"


def _ldac_line(line: bytes, lineno: int, name: str, n_words: int) -> tuple[list[int], list[int]]:
    """Parse and check one LDA-C line; returns its word ids and counts."""
    fields = line.split()
    n = _uint(fields[0])
    if n is None:
        raise InputError(name, lineno, f"expected {_LDAC_EXPECTED} starting with the number of pairs N, "
                                       f"found {_show(fields[0])}")
    ids: list[int] = []
    counts: list[int] = []
    seen: set[int] = set()
    for pair in fields[1:]:
        word_s, colon, count_s = pair.partition(b":")
        if not colon:
            raise InputError(name, lineno, f"expected an 'id:count' pair, found {_show(pair)}")
        word, count = _uint(word_s), _uint(count_s)
        if word is None or word >= n_words:
            raise InputError(name, lineno, f"expected a word id in 0..{n_words - 1}, found {_show(word_s)} "
                                           f"in {_show(pair)}")
        if count is None or not 1 <= count <= INT32_MAX:
            limit = "" if count is None or count < 1 else f" of at most {INT32_MAX}"
            raise InputError(name, lineno, f"expected a positive integer count{limit}, found {_show(count_s)} "
                                           f"in {_show(pair)}")
        if word in seen:
            raise InputError(name, lineno, f"expected each word id once per line, found id {word} again")
        seen.add(word)
        ids.append(word)
        counts.append(count)
    if n != len(ids):
        raise InputError(name, lineno, f"expected N = {fields[0].decode()} id:count pairs as the line "
                                       f"starts, found {len(ids)}")
    return ids, counts


def _read_ldac(source: Source, vocab: list[str]) -> Corpus:
    """Read an LDA-C file whose 0-based word ids index ``vocab``."""
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
    n_docs = len(lengths)
    check_token_total(name, int(np.frombuffer(data, dtype=np.int32).sum(dtype=np.int64)))
    rows = np.repeat(np.arange(n_docs, dtype=np.int64), np.frombuffer(lengths, dtype=np.int64))
    counts_matrix = build_csr(rows, np.frombuffer(cols, dtype=np.int32),
                              np.frombuffer(data, dtype=np.int32), (n_docs, n_words))
    doc_ids = [str(d) for d in range(1, n_docs + 1)]
    return Corpus(counts_matrix, list(vocab), doc_ids, format="ldac")


# ---------------------------------------------------------------------------------------------
# Plain text


def _read_text_file(source: Source, builder: CountBuilder, stop: frozenset[str], auto: bool) -> None:
    """Add one document per line of ``source`` to ``builder`` (ids: line numbers)."""
    for lineno, raw in iter_lines(source):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _decode_error(source.name, lineno, raw, exc, auto) from None
        builder.add(str(lineno), Counter(tokenize(line, stop)))


def _read_text_dir(folder: str, builder: CountBuilder, stop: frozenset[str]) -> None:
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
        source = Source.open(os.path.join(folder, file_name))
        counts: Counter[str] = Counter()
        for lineno, raw in iter_lines(source):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _decode_error(source.name, lineno, raw, exc, auto=False) from None
            counts.update(tokenize(line, stop))
        builder.add(file_name, counts)


def _read_text(
    path: str, source: Source | None, *, fixed: list[str] | None, stop_words: str | None,
    min_df: int, max_df: float, max_vocab: int | None, auto: bool,
) -> Corpus:
    """Read a text file (``source``) or a folder of ``.txt`` files (``source is None``)."""
    builder = CountBuilder(fixed)
    stop = frozenset() if fixed is not None else load_stop_words(stop_words)
    if source is None:
        _read_text_dir(path, builder, stop)
        fmt, name = "textdir", path
    else:
        _read_text_file(source, builder, stop, auto)
        fmt, name = "text", source.name
    if builder.n_docs == 0:
        hint = " (no .txt files in this folder)" if source is None else ""
        raise InputError(name, None, f"empty corpus: expected at least one document{hint}")
    counts, vocab = builder.matrix()
    notes: list[str] = []
    if fixed is None:
        counts, vocab, note = prune_vocabulary(counts, vocab, min_df=min_df, max_df=max_df, max_vocab=max_vocab)
        if note:
            notes.append(note)
        counts, vocab = sort_vocabulary(counts, vocab)
    elif builder.dropped_tokens:
        notes.append(f"{_plural(builder.dropped_tokens, 'token')} outside the fixed vocabulary dropped")
    return Corpus(counts, vocab, builder.doc_ids, format=fmt, notes=notes)


# ---------------------------------------------------------------------------------------------
# The public reader


def read_corpus(
    path: str | os.PathLike[str],
    *,
    format: str = "auto",
    vocab: str | None = None,
    min_df: int = 1,
    max_df: float = 1.0,
    max_vocab: int | None = None,
    stop_words: str | None = "english",
    fixed_vocab: Sequence[str] | None = None,
    stdin: IO | None = None,
) -> Corpus:
    """Read a corpus in any supported format (see the module docstring).

    ``format``: ``"auto"`` (by content), ``"uci"``, ``"ldac"`` or ``"text"``; a folder is
    always read as text, one document per ``.txt`` file. ``path`` ``"-"`` reads ``stdin``
    (default ``sys.stdin``), buffered in memory.

    ``vocab``: for UCI and LDA-C, the vocabulary file (by default found beside the corpus, see
    :func:`vocab_candidates`); for text, a file fixing the vocabulary, like ``fixed_vocab``.

    ``fixed_vocab``: the columns of the result, in order. Text is tokenized against it (tokens
    outside it dropped; no stop words, no pruning). A UCI or LDA-C corpus read with its own
    vocabulary is re-expressed over it (see :meth:`Corpus.align`); with no vocabulary file at
    all, its word ids are taken as indices into ``fixed_vocab``.

    ``min_df``, ``max_df``, ``max_vocab``: pruning (see :func:`ldacli.text.prune_vocabulary`),
    applied when no vocabulary is fixed -- to text, and to UCI or LDA-C when set. ``stop_words``
    applies to text only: ``"english"``, ``None``/``"none"`` or a file of words.

    Raises :class:`InputError` for any problem with the files (naming file and line) and
    :class:`LdacliError` for invalid parameters. Notes for the user (empty documents kept,
    words pruned, tokens dropped) are in ``Corpus.notes``.
    """
    path = os.fspath(path)
    if format not in FORMATS:
        raise LdacliError(f"format: expected one of {', '.join(FORMATS)}, found {format!r}")
    check_pruning(min_df, max_df, max_vocab)
    if vocab is not None and fixed_vocab is not None:
        raise LdacliError("vocab, fixed_vocab: expected at most one of them, found both")
    fixed = list(fixed_vocab) if fixed_vocab is not None else None
    if fixed is not None and not fixed:
        raise LdacliError("fixed_vocab: expected at least one word, found none")

    if path != "-" and is_shard_folder(path):
        if format not in ("auto", "shards"):
            raise InputError(path, None, f"expected a {format} file, found a shard folder")
        source, fmt = None, "shards"
    elif path != "-" and os.path.isdir(path):
        if format not in ("auto", "text"):
            raise InputError(path, None, f"expected a {format} file, found a directory")
        source, fmt = None, "textdir"
    else:
        source = Source.open(path, stdin)
        fmt = _detect(source) if format == "auto" else format

    if fmt == "shards":
        corpus = _read_shard_folder(path, vocab, fixed, min_df, max_df, max_vocab)
    elif source is None or fmt == "text":
        if vocab is not None:
            fixed = read_vocab(vocab)
        corpus = _read_text(path, source, fixed=fixed, stop_words=stop_words, min_df=min_df,
                            max_df=max_df, max_vocab=max_vocab, auto=format == "auto")
    else:
        corpus = _read_bag_of_words(source, fmt, vocab, fixed)
        if fixed is None and (min_df, max_df, max_vocab) != (1, 1.0, None):
            counts, words, note = prune_vocabulary(corpus.counts, corpus.vocab, min_df=min_df,
                                                   max_df=max_df, max_vocab=max_vocab)
            corpus.counts, corpus.vocab = counts, words
            if note:
                corpus.notes.append(note)

    name = source.name if source is not None else path
    check_token_total(name, corpus.n_tokens)
    if format == "auto" and fmt in FORMAT_NAMES:
        corpus.notes.insert(0, f"read as {FORMAT_NAMES[fmt]} (detected from the content; --format "
                               f"{'|'.join(FILE_FORMATS)} forces one)")
    if corpus.n_docs == 0:
        raise InputError(name, None, "empty corpus: expected at least one document")
    if corpus.n_words == 0:
        raise InputError(name, None, "expected at least one word, found none left after tokenizing "
                                     "(letters only, 3+ characters), stop words and pruning")
    corpus.source = path
    empty = corpus.n_empty_docs
    if empty:
        corpus.notes.append(f"{_plural(empty, 'empty document')} kept (theta = prior)")
    if fixed is None:
        unused = corpus.n_words - int(np.unique(corpus.counts.indices).size)
        if unused:
            corpus.notes.append(f"{_plural(unused, 'word')} of the vocabulary never occur in it")
    return corpus


def _read_shard_folder(path: str, vocab: str | None, fixed: list[str] | None, min_df: int, max_df: float,
                       max_vocab: int | None) -> Corpus:
    """The whole corpus of a shard folder (:mod:`ldacli.shard_folder`), every file checked
    against its index; over ``vocab``/``fixed`` and pruned like a UCI or LDA-C corpus."""
    folder = open_shard_folder(path)
    corpus = Corpus(folder.all_counts(), folder.vocab, folder.doc_ids, format="shards",
                    notes=[f"read the {folder.n_shards} shard files of a shard folder"], n_shards=folder.n_shards)
    if vocab is not None:
        fixed = read_vocab(vocab)
    if fixed is not None:
        corpus, dropped = corpus.align(fixed)
        corpus.n_shards = folder.n_shards
        if dropped:
            corpus.notes.append(f"{_plural(dropped, 'token')} outside the fixed vocabulary dropped")
    elif (min_df, max_df, max_vocab) != (1, 1.0, None):
        counts, words, note = prune_vocabulary(corpus.counts, corpus.vocab, min_df=min_df, max_df=max_df,
                                               max_vocab=max_vocab)
        corpus.counts, corpus.vocab = counts, words
        if note:
            corpus.notes.append(note)
    return corpus


def _read_matrix(source: Source, fmt: str, vocab: list[str], vocab_name: str | None) -> Corpus:
    """Read a Matrix Market or scipy ``.npz`` ``source`` (see :mod:`ldacli.matrices`)."""
    with source.stream() as (stream, compressed):
        try:
            data = stream.read()
        except READ_ERRORS as exc:
            raise InputError(source.name, None, f"cannot read: {exc}") from None
    reader = read_mtx if fmt == "mtx" else read_scipy_npz
    counts = reader(source.name, data, len(vocab), vocab_name)
    check_token_total(source.name, int(counts.data.sum(dtype=np.int64)))
    return Corpus(counts, list(vocab), [str(d) for d in range(1, counts.shape[0] + 1)], format=fmt)


def _read_bag_of_words(source: Source, fmt: str, vocab: str | None, fixed: list[str] | None) -> Corpus:
    """Read a UCI, LDA-C, Matrix Market or scipy ``.npz`` ``source``: find its vocabulary,
    parse, align to ``fixed``."""
    notes: list[str] = []
    vocab_path = vocab
    if vocab_path is None and not source.is_stdin:
        vocab_path = _find_vocab(source.name)
        if vocab_path is not None:
            notes.append(f"vocabulary read from {vocab_path} (found beside the corpus)")
    if vocab_path is not None:
        words = read_vocab(vocab_path)
    elif fixed is not None:
        words, fixed = fixed, None
        notes.append("no vocabulary file: word ids taken as indices into the given vocabulary")
    else:
        tried = "" if source.is_stdin else (
            " (none found beside it; looked for "
            + ", ".join(os.path.basename(c) for c in vocab_candidates(source.name)) + ")")
        raise InputError(source.name, None,
                         f"needs a vocabulary file: give --vocab FILE (one word per line){tried}")
    if fmt == "uci":
        corpus = _read_uci(source, words, vocab_path)
    elif fmt == "ldac":
        corpus = _read_ldac(source, words)
    else:
        corpus = _read_matrix(source, fmt, words, vocab_path)
    if fixed is not None:
        corpus, dropped = corpus.align(fixed)
        if dropped:
            notes.append(f"{_plural(dropped, 'token')} outside the fixed vocabulary dropped")
    corpus.notes = notes + corpus.notes
    return corpus


# ---------------------------------------------------------------------------------------------
# Writers


def _check_writable_vocab(vocab: list[str]) -> None:
    seen: set[str] = set()
    for i, word in enumerate(vocab):
        if not word or word != word.rstrip() or "\n" in word or "\r" in word or word.startswith("\ufeff"):
            raise LdacliError(f"vocabulary: expected words without line breaks, surrounding "
                              f"whitespace or a byte-order mark, found {word!r} (word {i})")
        if word in seen:
            raise LdacliError(f"vocabulary: expected distinct words, found {word!r} more than once")
        seen.add(word)


def _ldac_lines(counts: sp.csr_array) -> Iterator[str]:
    indptr, indices, data = counts.indptr, counts.indices, counts.data
    for d in range(counts.shape[0]):
        s, e = int(indptr[d]), int(indptr[d + 1])
        pairs = "".join(f" {i}:{c}" for i, c in zip(indices[s:e].tolist(), data[s:e].tolist()))
        yield f"{e - s}{pairs}\n"


def _uci_lines(counts: sp.csr_array, chunk: int = 1 << 16) -> Iterator[str]:
    n_docs, n_words = counts.shape
    yield f"{n_docs}\n{n_words}\n{counts.nnz}\n"
    rows = np.repeat(np.arange(1, n_docs + 1, dtype=np.int64), np.diff(counts.indptr))
    cols = counts.indices.astype(np.int64) + 1
    for s in range(0, counts.nnz, chunk):
        e = min(s + chunk, counts.nnz)
        yield "".join(f"{d} {w} {c}\n" for d, w, c in zip(rows[s:e].tolist(), cols[s:e].tolist(),
                                                          counts.data[s:e].tolist()))


def write_corpus(corpus: Corpus, path: str | os.PathLike[str], vocab_path: str | os.PathLike[str],
                 format: str = "ldac") -> None:
    """Write ``corpus`` as ``format`` (``"ldac"``, 0-based ids; ``"uci"``; ``"mtx"``, Matrix
    Market; ``"npz"``, ``scipy.sparse.save_npz``) plus its vocabulary.

    Both files are written atomically (see :func:`ldacli.fileio.atomic_write`): after an error
    neither is left half-written. Document ids are not stored by these formats; reading the
    files back gives ids ``"1"`` to ``"D"``.
    """
    if format not in WRITE_FORMATS:
        raise LdacliError(f"format: expected one of {', '.join(WRITE_FORMATS)}, found {format!r}")
    _check_writable_vocab(corpus.vocab)
    counts = sp.csr_array(corpus.counts, copy=True)
    counts.eliminate_zeros()
    counts.sum_duplicates()
    counts.sort_indices()
    if counts.nnz and counts.data.min() < 0:
        raise LdacliError("counts: expected non-negative counts, found a negative one")
    if format in ("mtx", "npz"):
        with atomic_write(path, what="corpus") as out, atomic_write(vocab_path, what="vocabulary") as voc:
            (write_mtx if format == "mtx" else write_scipy_npz)(out, counts)
            voc.write("".join(w + "\n" for w in corpus.vocab).encode("utf-8"))
        return
    lines = _ldac_lines(counts) if format == "ldac" else _uci_lines(counts)
    with atomic_write(path, what="corpus") as out, atomic_write(vocab_path, what="vocabulary") as voc:
        buffer: list[str] = []
        size = 0
        for line in lines:
            buffer.append(line)
            size += len(line)
            if size > 1 << 20:
                out.write("".join(buffer).encode("utf-8"))
                buffer, size = [], 0
        out.write("".join(buffer).encode("utf-8"))
        voc.write("".join(w + "\n" for w in corpus.vocab).encode("utf-8"))


def write_shards(corpus: Corpus, folder: str | os.PathLike[str], n_shards: int) -> int:
    """Write ``corpus`` as a shard folder of ``n_shards`` files (see :mod:`ldacli.shard_folder`),
    atomically; words that never occur are left out first (a model has no row for them).
    Returns the number of shards written (fewer when there are fewer documents)."""
    if n_shards < 1:
        raise LdacliError(f"shards: expected at least 1, found {n_shards}")
    _check_writable_vocab(corpus.vocab)
    trimmed, _ = corpus.without_unused_words()
    counts = sp.csr_array(trimmed.counts, copy=True)
    counts.sort_indices()
    return write_shard_folder(os.fspath(folder), counts, trimmed.vocab, trimmed.doc_ids, n_shards,
                              fingerprint=trimmed.fingerprint(), source=corpus.source, format=corpus.format)
