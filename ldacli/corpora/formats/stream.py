"""Reading a corpus a block of documents at a time over a fixed vocabulary (a model's): what
``infer`` and ``perplexity`` stream, so that their memory does not grow with the corpus.

:func:`stream_corpus` gives the documents :func:`~ldacli.corpora.formats.read.read_corpus` would give
with ``fixed_vocab``, in the same order with the same ids and counts, as a
:class:`CorpusStream` of blocks of :data:`DOCS_PER_BLOCK` documents:

* text files, folders of ``.txt`` files and LDA-C are read line by line (file by file);
* UCI is read triple by triple; its docIDs must never go down (as UCI files are written). A
  file whose docIDs go back within its first 4,096 documents is read whole instead (a note
  says so); later, or on standard input, it is an error naming the line (sort the triples);
* a shard folder is read shard file by shard file;
* Matrix Market and scipy ``.npz`` are read whole by scipy's readers, then cut into blocks;
* ``-`` reads standard input as it comes (the format is detected from its first megabyte).

The vocabulary rules apply as for the whole corpus: the stop words at once, and the rules that
judge words by their counts (``remove_top``, ``min_df``, ``max_df``, ``max_vocab``) after a
first pass over the corpus to count them (refused on standard input, which cannot be read
twice). The notes (format detected, vocabulary found, tokens dropped, words removed, empty
documents) are complete once the blocks have been read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

import numpy as np

from ldacli.corpora.corpus import Corpus, FingerprintBuilder
from ldacli.corpora.counts import build_csr
from ldacli.errors import InputError, SettingError
from ldacli.files.fileio import Source
from ldacli.corpora.formats.detect import FILE_FORMATS, FORMAT_NAMES
from ldacli.corpora.formats.ldac import ldac_counts, ldac_parts
from ldacli.corpora.formats.matrix import read_matrix
from ldacli.corpora.formats.parsing import plural
from ldacli.corpora.formats.read import (INPUT_FORMAT, TEXT_FORMATS, bag_of_words_vocab, checked_fixed_vocab, open_source,
                                 outside_note, refuse_tokenizing)
from ldacli.corpora.formats.shards import open_shard_folder
from ldacli.corpora.formats.text import text_parts
from ldacli.corpora.formats.uci import (FIRST_TRIPLE_LINE, check_distinct_pairs, check_nnz, read_uci, uci_triples)
from ldacli.corpora.formats.vocab import read_vocab
from ldacli.corpora.tokenizer import TOKENIZING, Tokenizer, chosen_tokenizer
from ldacli.corpora.vocab_rules import MAX_DF, MAX_VOCAB, MIN_DF, REMOVE_TOP, RULES, VocabRules, keep_removed

DOCS_PER_BLOCK = 4096


@dataclass
class CorpusStream:
    """A corpus read a block at a time (:func:`stream_corpus`). :meth:`blocks` yields
    :class:`~ldacli.corpora.corpus.Corpus` blocks over ``vocab`` (the fixed vocabulary), once; after
    it, ``n_docs``, ``n_tokens`` (after the rules), ``dropped_tokens`` (outside the fixed
    vocabulary: words a model has never seen), ``removed_tokens`` (of words its vocabulary rules
    removed, ``removed_words``, or the rules given here remove) and ``notes`` are complete, and
    :meth:`fingerprint` is the whole corpus's :meth:`~ldacli.corpora.corpus.Corpus.fingerprint` (when
    asked for, ``fingerprint=True``)."""

    source: str
    format: str
    vocab: list[str]
    notes: list[str]
    _raw: Callable[[], Iterator[Corpus]] = field(repr=False)
    _rules: VocabRules = field(repr=False)
    _keep: np.ndarray | None = field(repr=False, default=None)
    _fingerprint: FingerprintBuilder | None = field(repr=False, default=None)
    n_docs: int = 0
    n_tokens: int = 0
    dropped_tokens: int = 0
    removed_tokens: int = 0
    _model: bool = field(repr=False, default=False)
    _digest: str | None = field(repr=False, default=None)

    def blocks(self) -> Iterator[Corpus]:
        text = self.format in TEXT_FORMATS
        V = len(self.vocab)
        df, total = np.zeros(V, np.int64), np.zeros(V, np.int64)
        empty = 0
        try:
            for block in self._raw():
                self.dropped_tokens += block.dropped_tokens
                self.removed_tokens += block.removed_tokens
                n_read = block.n_tokens
                if self._keep is None:  # the stop words only: the notes count what they removed
                    df += np.bincount(block.counts.indices, minlength=V)
                    total += np.bincount(block.counts.indices, weights=block.counts.data, minlength=V).astype(np.int64)
                if self._keep is not None or self._rules.stop_list(text=text, fixed=True)[1]:
                    keep = self._keep if self._keep is not None else self._stop_keep()
                    block.counts, _ = keep_removed(block.counts, keep, self.vocab, fixed=True)
                    self.removed_tokens += n_read - block.n_tokens
                self.n_docs += block.n_docs
                self.n_tokens += block.n_tokens
                empty += block.n_empty_docs
                if self._fingerprint is not None:
                    self._fingerprint.add(block.counts)
                yield block
            if self.n_docs == 0:
                raise InputError(self.source, None, "empty corpus: expected at least one document")
            if self.dropped_tokens or (self._model and self.removed_tokens):
                self.notes.append(outside_note(self.dropped_tokens, self.removed_tokens, self._model))
            if self._keep is None:
                self.notes += self._rules.decide(df, total, self.n_docs, self.vocab, text=text, fixed=True)[1]
            if empty:
                self.notes.append(f"{plural(empty, 'empty document')} kept (theta = prior)")
            if self._fingerprint is not None:
                self._digest = self._fingerprint.hexdigest(self.vocab)
        finally:
            if self._fingerprint is not None:
                self._fingerprint.close()

    def _stop_keep(self) -> np.ndarray:
        _, stop = self._rules.stop_list(text=self.format in TEXT_FORMATS, fixed=True)
        return np.fromiter((w not in stop for w in self.vocab), dtype=bool, count=len(self.vocab))

    def fingerprint(self) -> str:
        if self._digest is None:
            raise ValueError("the fingerprint is known once the blocks have been read (with fingerprint=True)")
        return self._digest


def stream_corpus(path: str | os.PathLike[str], *, fixed_vocab: Sequence[str], stdin: IO | None = None,
                  fingerprint: bool = False, temp_folder: str | None = None, tokenizer: Tokenizer | None = None,
                  removed_words: Collection[str] | None = None, **reading) -> CorpusStream:
    """The corpus at ``path`` over ``fixed_vocab``, to be read a block at a time (see the module
    docstring). ``reading`` is :func:`~ldacli.corpora.formats.read.read_corpus`'s settings (``format``,
    ``vocab``: the corpus's own vocabulary file for bag-of-words formats, or one fixing a text
    corpus's tokens, then re-expressed over ``fixed_vocab``; the tokenizer's settings; the
    vocabulary rules ``stop_words``, ``remove_top``, ``min_df``, ``max_df``, ``max_vocab``), and
    ``tokenizer`` and ``removed_words`` are as there (:meth:`ldacli.Model.reading` gives them
    with ``fixed_vocab``). With ``fingerprint``, the corpus's fingerprint is computed as it is
    read, through temporary files in ``temp_folder``."""
    tokenizing_names = [s.name for s in TOKENIZING]
    for name in reading:
        if name not in ("format", "vocab", *tokenizing_names, *(s.name for s in RULES)):
            raise SettingError(name, f"unknown setting {name!r}")
    format = reading.pop("format", None) or INPUT_FORMAT.default
    vocab = reading.pop("vocab", None)
    tokenizing = {name: reading.get(name) for name in tokenizing_names}
    tok = chosen_tokenizer(tokenizer, tokenizing)
    rule_values = {s.name: reading.get(s.name, s.default) for s in RULES}
    path = os.fspath(path)
    rules = VocabRules(**rule_values)
    fixed = checked_fixed_vocab(fixed_vocab)
    source, fmt = open_source(path, format, stdin, streaming=True)
    if fmt not in TEXT_FORMATS:
        refuse_tokenizing(tokenizing, fmt)
    notes: list[str] = []
    if format == "auto" and fmt in FORMAT_NAMES:
        notes.append(f"read as {FORMAT_NAMES[fmt]} (detected from the content; --input-format "
                     f"{'|'.join(FILE_FORMATS)} forces one)")
    for_model = removed_words is not None
    removed_words = removed_words or frozenset()
    raw = _raw_blocks(path, source, fmt, vocab, fixed, notes, auto=format == "auto", tokenizer=tok,
                      removed_words=removed_words)
    stream = CorpusStream(path, fmt, fixed, notes, raw, rules, _model=for_model)
    if rules.needs_counts:
        if source is not None and source.pipe is not None:
            rule = next(s.name for s in (REMOVE_TOP, MIN_DF, MAX_DF, MAX_VOCAB)
                        if getattr(rules, s.name) not in (s.default, None))
            raise SettingError(rule, f"{rule} judges words by their counts in the whole corpus, which needs a first "
                                     f"pass that standard input cannot give: give the corpus as a file, found {rule} "
                                     f"on stdin")
        V = len(fixed)
        df, total, n_docs = np.zeros(V, np.int64), np.zeros(V, np.int64), 0
        for block in _raw_blocks(path, source, fmt, vocab, fixed, [], auto=format == "auto", tokenizer=tok,
                                 removed_words=removed_words)():
            df += np.bincount(block.counts.indices, minlength=V)
            total += np.bincount(block.counts.indices, weights=block.counts.data, minlength=V).astype(np.int64)
            n_docs += block.n_docs
        stream._keep, rule_notes = rules.decide(df, total, n_docs, fixed, text=fmt in TEXT_FORMATS, fixed=True)
        notes += rule_notes
    if fingerprint:
        stream._fingerprint = FingerprintBuilder(temp_folder)
    return stream


def _raw_blocks(path: str, source: Source | None, fmt: str, vocab: str | None, fixed: list[str], notes: list[str],
                *, auto: bool, tokenizer: Tokenizer,
                removed_words: Collection[str]) -> Callable[[], Iterator[Corpus]]:
    """A function that reads the blocks of the corpus over ``fixed``, before the rules."""
    if fmt in TEXT_FORMATS:
        own = read_vocab(vocab) if vocab is not None else fixed

        def text_blocks():
            for part in text_parts(path, source, fixed=own, auto=auto, docs_per_part=DOCS_PER_BLOCK,
                                   tokenizer=tokenizer, removed_words=removed_words):
                counts, words = part.matrix()
                yield _over(Corpus(counts, words, part.doc_ids, path, fmt, dropped_tokens=part.dropped_tokens,
                                   removed_tokens=part.removed_tokens), fixed, removed_words)
        return text_blocks
    if fmt == "shards":
        folder = open_shard_folder(path)
        notes.append(f"read the {folder.n_shards} shard files of a shard folder, one at a time")
        own = read_vocab(vocab) if vocab is not None else None

        def shard_blocks():
            for s in range(folder.n_shards):
                lo = int(folder.bounds[s])
                counts = folder.shard_counts(s)
                for a in range(0, counts.shape[0], DOCS_PER_BLOCK):
                    b = min(a + DOCS_PER_BLOCK, counts.shape[0])
                    part = Corpus(counts[a:b], folder.vocab, folder.doc_ids[lo + a:lo + b].tolist(), path, fmt)
                    if own is not None:
                        part = _over(part, own)
                    yield _over(part, fixed, removed_words)
        return shard_blocks
    assert source is not None
    words, vocab_path = bag_of_words_vocab(source, vocab, fixed, notes)
    if fmt == "ldac":
        def ldac_blocks():
            first = 1
            for lengths, cols, data in ldac_parts(source, words, DOCS_PER_BLOCK):
                ids = [str(d) for d in range(first, first + lengths.size)]
                first += lengths.size
                yield _over(Corpus(ldac_counts(lengths, cols, data, len(words)), words, ids, path, fmt), fixed,
                            removed_words)
        return ldac_blocks
    if fmt == "uci":
        return lambda: _uci_blocks(path, source, words, vocab_path, fixed, notes, removed_words)

    def whole_blocks():
        corpus = _over(read_matrix(source, fmt, words, vocab_path), fixed, removed_words)
        for a in range(0, corpus.n_docs, DOCS_PER_BLOCK):
            yield Corpus(corpus.counts[a:a + DOCS_PER_BLOCK], fixed, corpus.doc_ids[a:a + DOCS_PER_BLOCK], path, fmt,
                         dropped_tokens=corpus.dropped_tokens if a == 0 else 0,
                         removed_tokens=corpus.removed_tokens if a == 0 else 0)
    return whole_blocks


def _over(block: Corpus, fixed: list[str], removed_words: Collection[str] = frozenset()) -> Corpus:
    """``block`` re-expressed over ``fixed`` (its tokens outside dropped and counted, apart
    from those of ``removed_words``)."""
    if block.vocab is fixed or block.vocab == fixed:
        return Corpus(block.counts, fixed, block.doc_ids, block.source, block.format,
                      dropped_tokens=block.dropped_tokens, removed_tokens=block.removed_tokens)
    aligned, _ = block.align(fixed, removed_words)
    return aligned


class _Unordered(Exception):
    """A UCI file whose docIDs go down: it cannot be read document by document."""


def _uci_blocks(path: str, source: Source, words: list[str], vocab_path: str | None, fixed: list[str],
                notes: list[str], removed_words: Collection[str]) -> Iterator[Corpus]:
    """The documents of a UCI file in blocks, read triple by triple while its docIDs never go
    down; else the whole file (standard input: an error)."""
    given = [0]
    try:
        for block in _uci_ordered(path, source, words, vocab_path, fixed, removed_words):
            given[0] += 1
            yield block
    except _Unordered as exc:
        if source.pipe is not None or given[0]:
            where = "standard input" if source.pipe is not None else "a file whose documents were already used"
            raise InputError(source.name, exc.args[0], f"expected docIDs that never go down, to read {where} as it "
                                                       f"comes, found a smaller docID; sort the triples by docID "
                                                       f"(sort -n -k1,1 after the 3 header lines)") from None
        notes.append("its docIDs are not in order: read whole")
        corpus = _over(read_uci(source, words, vocab_path), fixed, removed_words)
        for a in range(0, corpus.n_docs, DOCS_PER_BLOCK):
            yield Corpus(corpus.counts[a:a + DOCS_PER_BLOCK], fixed, corpus.doc_ids[a:a + DOCS_PER_BLOCK], path, "uci",
                         dropped_tokens=corpus.dropped_tokens if a == 0 else 0,
                         removed_tokens=corpus.removed_tokens if a == 0 else 0)


def _uci_ordered(path: str, source: Source, words: list[str], vocab_path: str | None,
                 fixed: list[str], removed_words: Collection[str]) -> Iterator[Corpus]:
    (n_docs, n_words, nnz), blocks = uci_triples(source, words, vocab_path)
    pending: list[np.ndarray] = []
    next_doc = 0  # the first document not yet given out (0-based)
    seen = 0  # triples read
    last = -1

    def emit(upto: int) -> Iterator[Corpus]:
        """The documents next_doc..upto-1, from the pending triples (all of them before upto)."""
        nonlocal next_doc
        triples = np.concatenate(pending) if pending else np.zeros((0, 3), np.int64)
        pending.clear()
        rows = triples[:, 0] - 1
        inside = rows < upto
        done, rest = triples[inside], triples[~inside]
        if rest.size:
            pending.append(rest)
        check_distinct_pairs(source.name, done[:, 0] - 1, done[:, 1] - 1, n_words, FIRST_TRIPLE_LINE + seen)
        for a in range(next_doc, upto, DOCS_PER_BLOCK):
            b = min(a + DOCS_PER_BLOCK, upto)
            sel = (done[:, 0] - 1 >= a) & (done[:, 0] - 1 < b)
            part = done[sel]
            counts = build_csr(part[:, 0] - 1 - a, part[:, 1] - 1, part[:, 2], (b - a, n_words))
            yield _over(Corpus(counts, words, [str(d) for d in range(a + 1, b + 1)], path, "uci"), fixed,
                        removed_words)
        next_doc = upto

    for first, triples in blocks:
        docs = triples[:, 0] - 1
        steps = np.diff(np.concatenate(([last], docs)))
        if np.any(steps < 0):
            raise _Unordered(first + int(np.flatnonzero(steps < 0)[0]))
        pending.append(triples)
        last = int(docs[-1])
        # every document before the block's last docID is complete
        if last - next_doc >= DOCS_PER_BLOCK:
            yield from emit(last)
        seen += len(triples)
    check_nnz(source.name, nnz, seen)
    yield from emit(n_docs)
