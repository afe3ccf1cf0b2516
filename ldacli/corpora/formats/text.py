"""Plain text corpora: UTF-8, one document per line (ids: line numbers), or a folder of ``.txt``
files, one document each (ids: file names, in sorted order; hidden files and sub-folders are
skipped).

Documents are split into tokens by a :class:`ldacli.corpora.tokenizer.Tokenizer` and counted. Without a
fixed vocabulary every distinct token is a word and the vocabulary is sorted alphabetically (by
code point); with one, its words are the columns, in its order, and other tokens are dropped
(counted apart when a model's vocabulary rules removed their word: ``removed_words``). Stop
words and the other vocabulary rules come after, as for every format (:mod:`ldacli.corpora.vocab_rules`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Iterator


from ldacli.corpora.corpus import Corpus
from ldacli.corpora.counts import CountBuilder, sort_vocabulary
from ldacli.errors import InputError
from ldacli.files.fileio import Source, iter_lines
from ldacli.corpora.formats.parsing import check_word_lengths, decode_error
from ldacli.corpora.tokenizer import Tokenizer


def _decoded_lines(source: Source, auto: bool) -> Iterator[tuple[int, str]]:
    """The lines of ``source`` as text, numbered from 1; invalid UTF-8 is an InputError
    (``auto``: the format was being guessed, see :func:`~ldacli.corpora.formats.parsing.decode_error`)."""
    for lineno, raw in iter_lines(source):
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise decode_error(source.name, lineno, raw, exc, auto) from None


def _text_file_documents(source: Source, auto: bool, tokenizer: Tokenizer,
                         limit: bool) -> Iterator[tuple[str, Counter[str]]]:
    """One document per line of ``source`` (ids: line numbers), as token counts; ``limit``:
    refuse words too long for a vocabulary (:func:`~ldacli.corpora.formats.parsing.check_word_lengths`)."""
    for lineno, line in _decoded_lines(source, auto):
        tokens = tokenizer(line)
        if limit:
            check_word_lengths(source.name, lineno, tokens)
        yield str(lineno), Counter(tokens)


def _text_dir_documents(folder: str, tokenizer: Tokenizer, limit: bool) -> Iterator[tuple[str, Counter[str]]]:
    """Each ``.txt`` file of ``folder`` as one document (sorted by name; ids: file names).

    Hidden files (names starting with ``.``) and sub-folders are skipped; any other ``.txt``
    that is not a regular file (a device, a pipe) is refused. A name that is not
    UTF-8 gives the id its bytes would print as (``a\\xffb.txt``): text every output can carry.
    """
    try:
        entries = sorted(
            entry.name for entry in os.scandir(folder)
            if entry.name.endswith(".txt") and not entry.name.startswith(".") and not entry.is_dir()
        )
    except OSError as exc:
        raise InputError(folder, None, f"cannot read: {exc.strerror or exc}") from None
    for file_name in entries:
        counts: Counter[str] = Counter()
        source = Source.open(os.path.join(folder, file_name))
        for lineno, line in _decoded_lines(source, auto=False):
            tokens = tokenizer(line)
            if limit:
                check_word_lengths(source.name, lineno, tokens)
            counts.update(tokens)
        yield os.fsencode(file_name).decode("utf-8", "backslashreplace"), counts


def text_documents(path: str, source: Source | None, auto: bool, tokenizer: Tokenizer,
                   limit: bool = False) -> Iterator[tuple[str, Counter[str]]]:
    """The documents of a text file (``source``) or of the folder ``path`` (``source is None``)
    as ``(id, token counts)``, one at a time; ``limit``: a vocabulary is built from them, so a
    word longer than :data:`~ldacli.corpora.formats.parsing.MAX_WORD_LENGTH` is refused with its line
    (over a fixed vocabulary it is merely unknown)."""
    if source is None:
        return _text_dir_documents(path, tokenizer, limit)
    return _text_file_documents(source, auto, tokenizer, limit)


def text_parts(path: str, source: Source | None, *, fixed: list[str], auto: bool, docs_per_part: int,
               tokenizer: Tokenizer, removed_words: Collection[str] = frozenset()) -> Iterator[CountBuilder]:
    """The documents of :func:`text_documents` over the vocabulary ``fixed``, ``docs_per_part``
    at a time, each part a :class:`CountBuilder` (its matrix, ids and tokens dropped and removed)."""
    builder = CountBuilder(fixed, removed_words)
    for doc_id, counts in text_documents(path, source, auto, tokenizer):
        builder.add(doc_id, counts)
        if builder.n_docs == docs_per_part:
            yield builder
            builder = CountBuilder(fixed, removed_words)
    if builder.n_docs:
        yield builder


def read_text(path: str, source: Source | None, *, fixed: list[str] | None, auto: bool, tokenizer: Tokenizer,
              removed_words: Collection[str] = frozenset()) -> Corpus:
    """Read a text file (``source``) or a folder of ``.txt`` files (``source is None``), over the
    vocabulary ``fixed`` (its ``dropped_tokens`` those outside it, ``removed_tokens`` those of
    them whose word is one of ``removed_words``) or its own, sorted; ``auto``: the format was
    detected, not given (see :func:`~ldacli.corpora.formats.parsing.decode_error`)."""
    builder = CountBuilder(fixed, removed_words)
    for doc_id, counts in text_documents(path, source, auto, tokenizer, limit=fixed is None):
        builder.add(doc_id, counts)
    fmt, name = ("textdir", path) if source is None else ("text", source.name)
    if builder.n_docs == 0:
        hint = " (no .txt files in this folder)" if source is None else ""
        raise InputError(name, None, f"empty corpus: expected at least one document{hint}")
    counts, vocab = builder.matrix()
    if fixed is None:
        counts, vocab = sort_vocabulary(counts, vocab)
    return Corpus(counts, vocab, builder.doc_ids, format=fmt, dropped_tokens=builder.dropped_tokens,
                  removed_tokens=builder.removed_tokens)
