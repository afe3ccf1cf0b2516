"""What a Python user passes to ``ldacli.train``, ``infer``, ``perplexity`` and ``select_k``,
as the objects they work on: one function for each argument kind, called by all four.

:func:`as_corpus` takes what people have: a path (any format
:func:`~ldacli.corpora.formats.read.read_corpus` reads, with the reading settings of
:data:`~ldacli.corpora.formats.read.READING` as the command line takes them), a
:class:`~ldacli.corpora.corpus.Corpus`, texts (a list of strings, one document each, tokenized as a
text file's lines) or a count matrix (a SciPy sparse matrix or a 2-d array, documents x words,
its columns named by ``vocab``). :func:`as_model` takes a :class:`~ldacli.model.Model` or a
model file's path. Anything else is a :class:`~ldacli.errors.SettingError` naming the argument
and what it accepts, never an ``AttributeError`` from deep inside.

A path becomes a corpus in one place, :func:`corpus_at` (or :func:`stream_at`, a block at a
time for a model), which the command line calls too: the API and the commands read a file alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Set

import numpy as np
import scipy.sparse as sp

from ldacli import settings
from ldacli.corpora.corpus import Corpus
from ldacli.errors import SettingError
from ldacli.corpora.formats.read import (INPUT_FORMAT, READING, READING_FOR_MODEL, VOCAB, read_corpus,
                                         reading_fallback)
from ldacli.corpora.formats.shards import ShardFolder
from ldacli.corpora.formats.stream import CorpusStream, stream_corpus
from ldacli.corpora.formats.vocab import read_vocab
from ldacli.model import Checkpoint, Model
from ldacli.corpora.vocab_rules import RULES, VocabRules

CORPUS_KINDS = ("a path (any format read_corpus reads), a Corpus, a list of strings (one document each) or a "
                "SciPy sparse matrix of counts (documents x words, its words in vocab=)")
MODEL_KINDS = "a Model or the path of a model file"


def reading_of(given: dict, declared=READING) -> dict:
    """The reading settings (``declared``: :data:`~ldacli.corpora.formats.read.READING`, or
    ``READING_FOR_MODEL`` where a model's recorded tokenizer reads text) among ``given``, taken
    out of it: what :func:`as_corpus` reads a corpus with, the rest being the function's own."""
    return {s.name: given.pop(s.name) for s in declared if s.name in given}


def resumed_reading(reading: dict, resume: str) -> dict:
    """The reading settings of a run resumed from the checkpoint ``resume``: the corpus is read
    as its run read it (what it fixes may not change; a different value given is refused)."""
    recorded = Checkpoint.read_params(resume)
    return settings.resume(READING, reading, recorded, resume, fallback=reading_fallback(recorded))


def _given(reading: dict | None, declared=READING) -> dict:
    """The reading settings given (not None) among ``reading``, each checked, with None for the
    others of ``declared``."""
    reading = {k: v for k, v in (reading or {}).items() if v is not None}
    return {s.name: s.check(reading.get(s.name)) for s in declared}


def _read_with(values: dict) -> dict:
    """The keyword arguments of the readers for the reading settings ``values``: ``format``,
    ``vocab`` and the other settings given."""
    return {"format": values["input_format"] or INPUT_FORMAT.default, "vocab": values["vocab"],
            **{name: v for name, v in values.items() if name not in (INPUT_FORMAT.name, VOCAB.name) and v is not None}}


def corpus_at(path: str | os.PathLike[str], reading: dict | None = None, *, model: Model | None = None,
              resume: str | None = None) -> Corpus:
    """The corpus at ``path`` as a run reads it: the one way from a path to a corpus, of the
    command line and of the API functions (:func:`as_corpus`) alike.

    ``reading``: the reading settings given (:data:`~ldacli.corpora.formats.read.READING`;
    None or missing: not given, their defaults apply), checked here. ``model``: the model the
    corpus is read for (over its vocabulary, text tokenized by its tokenizer, the tokens of the
    words its rules removed counted apart: :meth:`~ldacli.model.Model.reading`); a ``vocab``
    given then names the corpus's own vocabulary file (or fixes a text corpus's words) instead of
    the model's. ``resume``: a checkpoint whose run read the corpus: its reading settings apply
    unless given (those it fixes may not change). What the reader says for people is in the
    corpus's ``notes``."""
    reading = {k: v for k, v in (reading or {}).items() if v is not None}
    if resume is not None:
        reading = resumed_reading(reading, resume)
    read_with = _read_with(_given(reading))
    over = model.reading() if model is not None else {}
    if read_with["vocab"]:
        over.pop("fixed_vocab", None)
    return read_corpus(path, **over, **read_with)


def stream_at(path: str | os.PathLike[str], reading: dict | None, model: Model, **options) -> CorpusStream:
    """The corpus at ``path`` read for ``model`` a block at a time (a
    :class:`~ldacli.corpora.formats.stream.CorpusStream` over the model's vocabulary, as
    :func:`corpus_at` reads it whole; ``options`` are
    :func:`~ldacli.corpora.formats.stream.stream_corpus`'s ``fingerprint`` and ``temp_folder``):
    what ``infer`` and ``perplexity`` read a path with when they stream."""
    return stream_corpus(path, **model.reading(), **_read_with(_given(reading, READING_FOR_MODEL)), **options)


def as_corpus(given, *, argument: str = "corpus", reading: dict | None = None,
              model: Model | None = None, resume: str | None = None,
              shard_folders: bool = False) -> Corpus | ShardFolder:
    """The corpus ``given`` as the argument ``argument`` of an API function.

    ``reading``: the reading settings given (None: not given): ``input_format``, ``vocab`` and
    the vocabulary rules. ``vocab`` is the vocabulary file of a bag-of-words file (found beside
    it when omitted) or fixes a text corpus's words, as ``--vocab`` does; for texts and a
    matrix it may also be the words themselves (a list; a matrix's columns, by default "0",
    "1", ...). ``model``: the model the result is read for (infer, perplexity, coherence): over
    its vocabulary, text tokenized by its recorded tokenizer, the tokens of the words its
    vocabulary rules removed counted apart (:meth:`~ldacli.model.Model.reading`). ``resume``: a checkpoint whose run read the corpus at a path: its reading
    settings apply unless given (those it fixes may not change), as ``train --resume`` reads
    it. ``shard_folders``: a :class:`~ldacli.corpora.formats.shards.ShardFolder` is accepted as it is
    (training on a Dask cluster reads its files on the workers).
    """
    reading = {k: v for k, v in (reading or {}).items() if v is not None}
    if is_path(given):
        return corpus_at(checked_path(given, argument), reading, model=model, resume=resume)
    if isinstance(given, (Corpus, ShardFolder)):
        if isinstance(given, ShardFolder) and not shard_folders:
            raise SettingError(argument, f"{argument} must be {CORPUS_KINDS}, found a ShardFolder, whose documents "
                                         f"stay in its files: read it whole with read_corpus({given.path!r})")
        _refuse(reading, f"a {type(given).__name__}, which is read already")
        return given
    if sp.issparse(given) or (isinstance(given, np.ndarray) and given.ndim == 2):
        return _matrix(given, argument, reading, model)
    if isinstance(given, (Model, Checkpoint)):
        raise SettingError(argument, f"{argument} must be {CORPUS_KINDS}, found {_a(type(given).__name__)} (the "
                                     f"arguments in the wrong order?)")
    if isinstance(given, Iterable) and not isinstance(given, (bytes, bytearray, Mapping, Set, np.ndarray)):
        texts = list(given)
        bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
        if bad is None:
            return _texts(texts, reading, model)
        raise SettingError(argument, f"{argument} must be {CORPUS_KINDS}, found {_a(type(given).__name__)} whose "
                                     f"item {bad} is {_a(type(texts[bad]).__name__)}, not a string")
    raise SettingError(argument, f"{argument} must be {CORPUS_KINDS}, found {_kind(given)}")


def is_path(given) -> bool:
    """Whether ``given`` is a corpus's path (a string or a path-like object)."""
    return isinstance(given, (str, os.PathLike))


def checked_path(given, argument: str = "corpus") -> str:
    """The path ``given`` as text, or :class:`SettingError` for an empty one or bytes."""
    path = os.fspath(given)
    if not isinstance(path, str) or not path:
        raise SettingError(argument, f"{argument} must be {CORPUS_KINDS}, found {given!r}")
    return path


def as_model(given, *, argument: str = "model", documents: bool = True) -> Model:
    """The model ``given`` as the argument ``argument``: a :class:`~ldacli.model.Model`, or
    the path of a model file (loaded and checked; with ``documents=False`` without its training
    documents' proportions, :meth:`~ldacli.model.Model.load`)."""
    if isinstance(given, Model):
        return given
    if isinstance(given, (str, os.PathLike)) and isinstance(os.fspath(given), str) and os.fspath(given):
        return Model.load(os.fspath(given), documents=documents)
    hint = " (a checkpoint is finished by train(..., resume=path))" if isinstance(given, Checkpoint) else \
        " (the arguments in the wrong order?)" if isinstance(given, Corpus) else ""
    raise SettingError(argument, f"{argument} must be {MODEL_KINDS}, found {_kind(given)}{hint}")


def _kind(value) -> str:
    """``value`` as a message shows what was found: a plain value itself, else its type."""
    return repr(value) if value is None or isinstance(value, (bool, int, float, str, bytes)) else \
        _a(type(value).__name__)


def _a(name: str) -> str:
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def _refuse(reading: dict, found: str, allowed: tuple[str, ...] = ()) -> None:
    """Refuse the reading settings given that do not apply to what was given (``found``)."""
    for name in reading:
        if name not in allowed:
            raise SettingError(name, f"{name} applies to a corpus read here (a path, texts or a matrix), found {found}")


def _words(reading: dict, argument: str = VOCAB.name) -> list[str] | None:
    """``vocab`` given for texts or a matrix: the words, listed or in a file."""
    vocab = reading.get("vocab")
    if vocab is None:
        return None
    if isinstance(vocab, (str, os.PathLike)):
        return read_vocab(VOCAB.check(vocab))
    if isinstance(vocab, Iterable) and not isinstance(vocab, (bytes, Mapping, Set)):
        return list(vocab)
    raise SettingError(argument, f"{argument} must be the words (a list, or a file of one word per line), found "
                                 f"{_kind(vocab)}")


def _rules(reading: dict) -> VocabRules | None:
    """The vocabulary rules given (None when none is)."""
    given = {s.name: reading[s.name] for s in RULES if s.name in reading}
    return VocabRules(**given) if given else None


def _texts(texts: list[str], reading: dict, model: Model | None) -> Corpus:
    _refuse(reading, "texts, which have no file format", allowed=tuple(s.name for s in READING if s is not INPUT_FORMAT))
    words = _words(reading)
    rules = {s.name: reading[s.name] for s in READING if s.name in reading and s not in (INPUT_FORMAT, VOCAB)}
    if model is None:
        return Corpus.from_texts(texts, vocab=words, **rules)
    return Corpus.from_texts(texts, vocab=words if words is not None else model.vocab, tokenizer=model.tokenizer,
                             removed_words=frozenset(model.removed_words), **rules)


def _matrix(X, argument: str, reading: dict, model: Model | None) -> Corpus:
    allowed = (VOCAB.name, *(s.name for s in RULES))
    _refuse(reading, "a matrix, whose words are its columns", allowed=allowed)
    words = _words(reading)
    fixed_vocab = model.vocab if model is not None else None
    if words is None and fixed_vocab is not None and any(w != str(j) for j, w in enumerate(fixed_vocab)):
        raise SettingError("vocab", f"vocab must name the {X.shape[1]} columns of the matrix {argument}: the model's "
                                    f"words are matched by string, found none")
    corpus = Corpus.from_matrix(X, vocab=words)
    if fixed_vocab is not None:
        corpus, _ = corpus.align(list(fixed_vocab), frozenset(model.removed_words))
    rules = _rules(reading)
    if rules is not None:
        corpus.counts, corpus.vocab, corpus.notes = rules.apply(corpus.counts, corpus.vocab, text=False,
                                                                fixed=fixed_vocab is not None)
    return corpus
