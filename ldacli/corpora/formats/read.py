"""Reading a corpus in any format: :func:`read_corpus` finds the format and the vocabulary,
runs the format's reader, re-expresses the result over a fixed vocabulary when given one, and
applies the vocabulary rules.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import IO

import numpy as np

from ldacli import checks
from ldacli.corpora.corpus import Corpus, check_token_total
from ldacli.errors import InputError, SettingError
from ldacli.files.fileio import Source
from ldacli.corpora.formats.detect import FILE_FORMATS, FORMAT_NAMES, FORMATS, detect
from ldacli.corpora.formats.ldac import read_ldac
from ldacli.corpora.formats.matrix import read_matrix
from ldacli.corpora.formats.parsing import plural
from ldacli.corpora.formats.shards import KIND as SHARD_INDEX, is_shard_folder, open_shard_folder
from ldacli.corpora.formats.text import read_text
from ldacli.corpora.formats.uci import read_uci
from ldacli.corpora.formats.vocab import find_vocab, read_vocab, vocab_candidates
from ldacli.files.npz import file_kind
from ldacli.settings import FIXED, Choice, Setting, Text
from ldacli.corpora.tokenizer import LEGACY, TOKENIZING, Tokenizer, chosen_tokenizer
from ldacli.corpora.vocab_rules import MAX_DF, MAX_VOCAB, MIN_DF, REMOVE_TOP, RULES, STOP_WORDS, VocabRules

TEXT_FORMATS = ("text", "textdir")

# How a corpus is read: every command that reads one takes these (``format`` is the input
# format's Python name, ``--input-format`` on the command line).
INPUT_FORMAT = Setting("input_format", Choice(FORMATS), "auto",
                       "How to read the corpus: auto detects the format from the content.", FIXED)
VOCAB = Setting("vocab", Text(path=True), None,
                "Vocabulary file, one word per line (bag-of-words formats: found beside the corpus by name when "
                "omitted; text and shard folders: a fixed vocabulary).", FIXED)
READING = (INPUT_FORMAT, VOCAB, *TOKENIZING, *RULES)
# How documents are read against a model (``infer``, ``perplexity``): text is tokenized by the
# model's tokenizer (:attr:`ldacli.Model.tokenizer`), whose settings cannot be given.
READING_FOR_MODEL = (INPUT_FORMAT, VOCAB, *RULES)


def read_corpus(
    path: str | os.PathLike[str],
    *,
    format: str = INPUT_FORMAT.default,
    vocab: str | None = None,
    stop_words: str | Sequence[str] | None = STOP_WORDS.default,
    min_df: int = MIN_DF.default,
    max_df: float = MAX_DF.default,
    max_vocab: int | None = MAX_VOCAB.default,
    remove_top: int = REMOVE_TOP.default,
    lowercase: bool | None = None,
    addresses: str | None = None,
    token_pattern: str | None = None,
    min_token_length: int | None = None,
    numbers: str | None = None,
    fixed_vocab: Sequence[str] | None = None,
    tokenizer: Tokenizer | None = None,
    removed_words: Collection[str] | None = None,
    stdin: IO | None = None,
) -> Corpus:
    """Read a corpus in any supported format (see :mod:`ldacli.corpora.formats`) and apply the
    vocabulary rules.

    ``format``: ``"auto"`` (by content) or one of :data:`~ldacli.corpora.formats.detect.FORMATS`; a
    shard folder is read as ``"shards"``, any other folder as text, one document per ``.txt``
    file. ``path`` ``"-"`` reads ``stdin`` (default ``sys.stdin``), buffered in memory.

    ``vocab``: for the bag-of-words formats, the vocabulary file (by default found beside the
    corpus, see :func:`~ldacli.corpora.formats.vocab.vocab_candidates`); for text and shard folders, a
    file fixing the vocabulary, like ``fixed_vocab``.

    ``lowercase``, ``addresses``, ``token_pattern``, ``min_token_length``, ``numbers``: how text
    is tokenized (:mod:`ldacli.corpora.tokenizer`; None: the default), refused for other formats; or
    ``tokenizer``, a :class:`~ldacli.corpora.tokenizer.Tokenizer` (a model's), used for text and not for
    other formats.

    ``fixed_vocab``: the columns of the result, in order (distinct words). Text is tokenized
    against it (tokens outside it dropped). Another corpus read with its own vocabulary is
    re-expressed over it (see :meth:`Corpus.align`); with no vocabulary file at all, its word
    ids are taken as indices into ``fixed_vocab``. The tokens dropped are
    :attr:`Corpus.dropped_tokens`, apart from those of ``removed_words`` (a model's
    :attr:`~ldacli.Model.removed_words`: the words its vocabulary rules removed) and those the
    rules remove here, which are :attr:`Corpus.removed_tokens`. :meth:`ldacli.Model.reading`
    gives ``fixed_vocab``, ``tokenizer`` and ``removed_words`` for reading documents as a model
    read its own.

    ``stop_words``, ``remove_top``, ``min_df``, ``max_df``, ``max_vocab``: the vocabulary rules,
    for every format, in that order (see :mod:`ldacli.corpora.vocab_rules`; ``stop_words`` names one
    list or several, which add up; ``"auto"`` is the English list for text that builds its own
    vocabulary and none otherwise). Over a fixed vocabulary they remove tokens and keep the
    columns. What they removed from a corpus that builds its vocabulary is
    :attr:`Corpus.removed_words`.

    Raises :class:`InputError` for any problem with the files (naming file and line), including
    an ldacli model, checkpoint or other ldacli file given as a corpus, and
    :class:`~ldacli.errors.SettingError` for invalid settings. Notes for the user (format
    detected, vocabulary found, tokens dropped, words each rule removed, empty documents kept)
    are in ``Corpus.notes``, and the settings it was read with in ``Corpus.reading`` (what a model
    records, so that a resumed run reads it alike).
    """
    path = checks.path("path", path, "the path of a corpus (a file or folder; - for stdin)")
    checks.choice("format", format, FORMATS)
    rules = VocabRules(stop_words, remove_top, min_df, max_df, max_vocab)
    tokenizing = dict(lowercase=lowercase, addresses=addresses, token_pattern=token_pattern,
                      min_token_length=min_token_length, numbers=numbers)
    tok = chosen_tokenizer(tokenizer, tokenizing)
    if vocab is not None and fixed_vocab is not None:
        raise SettingError("fixed_vocab", "fixed_vocab must be None when vocab is given (both fix the "
                                          "vocabulary), found both")
    fixed = None if fixed_vocab is None else checked_fixed_vocab(fixed_vocab)

    source, fmt = open_source(path, format, stdin)
    name = source.name if source is not None else path
    text = fmt in TEXT_FORMATS
    if not text:
        refuse_tokenizing(tokenizing, fmt)
    notes: list[str] = []
    if format == "auto" and fmt in FORMAT_NAMES:
        notes.append(detected_note(fmt))
    if vocab is not None and fmt in TEXT_FORMATS + ("shards",):
        fixed = read_vocab(vocab)
    if text:
        corpus = read_text(path, source, fixed=fixed, auto=format == "auto", tokenizer=tok,
                           removed_words=removed_words or frozenset())
    else:
        if fmt == "shards":
            corpus = read_shard_folder(path, notes)
        else:
            corpus = read_bag_of_words(source, fmt, vocab, fixed, notes)
        if fixed is not None and corpus.vocab != fixed:
            n_shards = corpus.n_shards
            corpus, _ = corpus.align(fixed, removed_words or frozenset())
            corpus.n_shards = n_shards
    if corpus.dropped_tokens or (removed_words is not None and corpus.removed_tokens):
        notes.append(outside_note(corpus.dropped_tokens, corpus.removed_tokens, removed_words is not None))
    as_read, n_read = corpus.vocab, corpus.n_tokens
    corpus.counts, corpus.vocab, removed = rules.apply(corpus.counts, corpus.vocab, text=text,
                                                       fixed=fixed is not None)
    corpus.notes = notes + removed
    if fixed is None:
        corpus.removed_words = rules.removed_words(as_read, corpus.vocab, text=text)
    else:
        corpus.removed_tokens += n_read - corpus.n_tokens

    check_token_total(name, corpus.n_tokens)
    if corpus.n_docs == 0:
        raise InputError(name, None, "empty corpus: expected at least one document")
    if corpus.n_words == 0:
        raise no_words_left(name, text)
    corpus.source = path
    corpus.reading = {
        "input_format": format, "vocab": VOCAB.comparable(vocab),
        **(tok.settings() if text else {}),
        **rules.recorded(text=text, fixed=fixed is not None),
    }
    unused = None if fixed is not None else int(np.count_nonzero(corpus.word_frequencies() == 0))
    corpus.notes += closing_notes(corpus.n_empty_docs, unused)
    return corpus


def no_words_left(name: str, text: bool) -> InputError:
    """The error for a corpus (the file ``name``) whose vocabulary rules left no word."""
    after = "tokenizing, stop words and pruning" if text \
        else "the vocabulary rules (stop words, remove_top, min_df, max_df, max_vocab)"
    return InputError(name, None, f"expected at least one word, found none left after {after}")


def detected_note(fmt: str) -> str:
    """The note on a format found by content."""
    return (f"read as {FORMAT_NAMES[fmt]} (detected from the content; --input-format {'|'.join(FILE_FORMATS)} "
            f"forces one)")


def closing_notes(empty: int, unused: int | None) -> list[str]:
    """The notes on a corpus read: its ``empty`` documents, and the ``unused`` words of its
    vocabulary (None over a fixed vocabulary, whose unused words are not noted)."""
    notes = [f"{plural(empty, 'empty document')} kept (theta = prior)"] if empty else []
    if unused:
        notes.append(f"{plural(unused, 'word')} of the vocabulary never occur in it")
    return notes


def reading_fallback(params: dict):
    """The ``fallback`` of :func:`ldacli.settings.resume` for the reading settings of a checkpoint
    whose ``params`` lack some: a tokenizer setting is None for a corpus that is not text (its
    reading records none) and :data:`~ldacli.corpora.tokenizer.LEGACY`'s for text read by ldacli 0.2;
    any other, its default."""
    text = params.get("corpus_format") in TEXT_FORMATS

    def fallback(setting: Setting, values: dict):
        if setting in TOKENIZING:
            return LEGACY[setting.name] if text else None
        return setting.default_for(values)
    return fallback


def refuse_tokenizing(given: dict, fmt: str) -> None:
    """Refuse a tokenizer setting given (not None) for input that is not text: it cannot apply."""
    for name, value in given.items():
        if value is not None:
            raise SettingError(name, f"{name} applies to text input only, found {FORMAT_NAMES.get(fmt, fmt)} "
                                     f"input")


def outside_note(dropped: int, removed: int, model: bool) -> str:
    """The note on the tokens left out because their word is outside a fixed vocabulary:
    ``dropped`` of words it does not hold, or with ``model`` (a model's ``removed_words`` were
    given) of words the model has never seen, apart from the ``removed`` of words its vocabulary
    rules remove."""
    if not model:
        return f"{plural(dropped, 'token')} outside the fixed vocabulary dropped"
    return (f"left out: {plural(dropped, 'token')} of words the model has never seen (unknown), "
            f"{plural(removed, 'token')} of words its vocabulary rules remove (stop words, pruning)")


def checked_fixed_vocab(words: Sequence[str]) -> list[str]:
    fixed = list(words)
    if not fixed:
        raise SettingError("fixed_vocab", "fixed_vocab must hold at least one word, found none")
    if len(set(fixed)) != len(fixed):
        seen: set[str] = set()
        repeated = next(w for w in fixed if w in seen or seen.add(w))  # type: ignore[func-returns-value]
        raise SettingError("fixed_vocab", f"fixed_vocab must hold distinct words, found {repeated!r} more than once")
    return fixed


def open_source(path: str, format: str, stdin: IO | None, *, streaming: bool = False) -> tuple[Source | None, str]:
    """The source to read (None for a folder) and its format: ``format``, or the one detected.
    An ldacli file (a model, a checkpoint, ...) is refused here, before any vocabulary is
    looked for (:func:`~ldacli.files.npz.file_kind` reads only its member list and kind). With
    ``streaming``, standard input is read as it comes (:meth:`Source.open_stream`), not whole."""
    if path != "-" and is_shard_folder(path):
        if format not in ("auto", "shards"):
            raise InputError(path, None, f"expected a {format} file, found a shard folder")
        return None, "shards"
    if path != "-" and os.path.isdir(path):
        if format not in ("auto", "text"):
            raise InputError(path, None, f"expected a {format} file, found a directory")
        return None, "textdir"
    source = Source.open_stream(stdin) if streaming and path == "-" else Source.open(path, stdin)
    fmt = detect(source.head()) if format == "auto" else format
    if fmt in ("npz", "mtx") and source.pipe is not None:  # read whole by scipy's readers
        source = source.buffered()
    if fmt == "npz":
        with source.stream() as (stream, _):
            kind = file_kind(stream)
        if kind is not None:
            hint = f": read its folder, {os.path.dirname(source.name) or '.'}" if kind == SHARD_INDEX else ""
            raise InputError(source.name, None, f"expected a corpus, found an ldacli {kind}{hint}")
    return source, fmt


def as_written() -> dict:
    """The ``reading`` of a corpus read as written, with every setting at its default (a shard
    folder read whole records it, and a run on its index, from disk or on a cluster, the same)."""
    return {"input_format": INPUT_FORMAT.default, "vocab": VOCAB.comparable(None),
            **VocabRules().recorded(text=False, fixed=False)}


def read_shard_folder(path: str, notes: list[str]) -> Corpus:
    """The whole corpus of a shard folder (:mod:`ldacli.corpora.formats.shards`), every file checked
    against its index."""
    folder = open_shard_folder(path)
    notes.append(f"read the {folder.n_shards} shard files of a shard folder")
    return Corpus(folder.all_counts(), folder.vocab, folder.doc_ids.tolist(), format="shards", n_shards=folder.n_shards)


def bag_of_words_vocab(source: Source, vocab: str | None, fixed: list[str] | None,
                       notes: list[str]) -> tuple[list[str], str | None]:
    """The vocabulary of a UCI, LDA-C, Matrix Market or scipy ``.npz`` ``source``: the file
    ``vocab``, else the one found beside it, else ``fixed`` (its word ids index it); returns the
    words and the file they came from (None for ``fixed``)."""
    vocab_path = vocab
    if vocab_path is None and not source.is_stdin:
        vocab_path = find_vocab(source.name)
        if vocab_path is not None:
            notes.append(f"vocabulary read from {vocab_path} (found beside the corpus)")
    if vocab_path is not None:
        return read_vocab(vocab_path), vocab_path
    if fixed is not None:
        notes.append("no vocabulary file: word ids taken as indices into the given vocabulary")
        return fixed, None
    tried = "" if source.is_stdin else (
        " (none found beside it; looked for "
        + ", ".join(os.path.basename(c) for c in vocab_candidates(source.name)) + ")")
    raise InputError(source.name, None,
                     f"needs a vocabulary file: give --vocab FILE (one word per line){tried}")


def read_bag_of_words(source: Source, fmt: str, vocab: str | None, fixed: list[str] | None,
                      notes: list[str]) -> Corpus:
    """Read a UCI, LDA-C, Matrix Market or scipy ``.npz`` ``source`` over its vocabulary
    (:func:`bag_of_words_vocab`)."""
    words, vocab_path = bag_of_words_vocab(source, vocab, fixed, notes)
    if fmt == "uci":
        return read_uci(source, words, vocab_path)
    if fmt == "ldac":
        return read_ldac(source, words)
    return read_matrix(source, fmt, words, vocab_path)
