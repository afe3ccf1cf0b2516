"""Reading a corpus in any format: :func:`read_corpus` finds the format and the vocabulary,
runs the format's reader, re-expresses the result over a fixed vocabulary when given one, and
applies the vocabulary rules.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO

import numpy as np

from ldacli.corpus import Corpus, check_token_total
from ldacli.errors import InputError, LdacliError
from ldacli.fileio import Source
from ldacli.formats.detect import FILE_FORMATS, FORMAT_NAMES, FORMATS, detect
from ldacli.formats.ldac import read_ldac
from ldacli.formats.matrix import read_matrix
from ldacli.formats.parsing import plural
from ldacli.formats.shards import is_shard_folder, open_shard_folder
from ldacli.formats.text import read_text
from ldacli.formats.uci import read_uci
from ldacli.formats.vocab import find_vocab, read_vocab, vocab_candidates
from ldacli.vocab_rules import check_pruning, prune_vocabulary


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
    """Read a corpus in any supported format (see :mod:`ldacli.formats`).

    ``format``: ``"auto"`` (by content), ``"uci"``, ``"ldac"`` or ``"text"``; a folder is
    always read as text, one document per ``.txt`` file. ``path`` ``"-"`` reads ``stdin``
    (default ``sys.stdin``), buffered in memory.

    ``vocab``: for UCI and LDA-C, the vocabulary file (by default found beside the corpus, see
    :func:`vocab_candidates`); for text, a file fixing the vocabulary, like ``fixed_vocab``.

    ``fixed_vocab``: the columns of the result, in order. Text is tokenized against it (tokens
    outside it dropped; no stop words, no pruning). A UCI or LDA-C corpus read with its own
    vocabulary is re-expressed over it (see :meth:`Corpus.align`); with no vocabulary file at
    all, its word ids are taken as indices into ``fixed_vocab``.

    ``min_df``, ``max_df``, ``max_vocab``: pruning (see :func:`ldacli.vocab_rules.prune_vocabulary`),
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
        fmt = detect(source) if format == "auto" else format

    if fmt == "shards":
        corpus = _read_shard_folder(path, vocab, fixed, min_df, max_df, max_vocab)
    elif source is None or fmt == "text":
        if vocab is not None:
            fixed = read_vocab(vocab)
        corpus = read_text(path, source, fixed=fixed, stop_words=stop_words, min_df=min_df,
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
        corpus.notes.append(f"{plural(empty, 'empty document')} kept (theta = prior)")
    if fixed is None:
        unused = corpus.n_words - int(np.unique(corpus.counts.indices).size)
        if unused:
            corpus.notes.append(f"{plural(unused, 'word')} of the vocabulary never occur in it")
    return corpus


def _read_shard_folder(path: str, vocab: str | None, fixed: list[str] | None, min_df: int, max_df: float,
                       max_vocab: int | None) -> Corpus:
    """The whole corpus of a shard folder (:mod:`ldacli.formats.shards`), every file checked
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
            corpus.notes.append(f"{plural(dropped, 'token')} outside the fixed vocabulary dropped")
    elif (min_df, max_df, max_vocab) != (1, 1.0, None):
        counts, words, note = prune_vocabulary(corpus.counts, corpus.vocab, min_df=min_df, max_df=max_df,
                                               max_vocab=max_vocab)
        corpus.counts, corpus.vocab = counts, words
        if note:
            corpus.notes.append(note)
    return corpus


def _read_bag_of_words(source: Source, fmt: str, vocab: str | None, fixed: list[str] | None) -> Corpus:
    """Read a UCI, LDA-C, Matrix Market or scipy ``.npz`` ``source``: find its vocabulary,
    parse, align to ``fixed``."""
    notes: list[str] = []
    vocab_path = vocab
    if vocab_path is None and not source.is_stdin:
        vocab_path = find_vocab(source.name)
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
        corpus = read_uci(source, words, vocab_path)
    elif fmt == "ldac":
        corpus = read_ldac(source, words)
    else:
        corpus = read_matrix(source, fmt, words, vocab_path)
    if fixed is not None:
        corpus, dropped = corpus.align(fixed)
        if dropped:
            notes.append(f"{plural(dropped, 'token')} outside the fixed vocabulary dropped")
    corpus.notes = notes + corpus.notes
    return corpus
