"""``ldacli export``: a model's results as the tables people take elsewhere.

One function per table, each a :class:`~ldacli.files.tables.Table` of row batches (written by
:func:`ldacli.files.tables.write_table` as TSV, CSV, JSON lines or Parquet), and MALLET's own layouts:

* :func:`doc_topics`: each document's topic proportions: all of them (``doc_id, topic_0 ...
  topic_{K-1}``), or sparse (``doc_id, rank, topic, proportion``, largest first) with
  ``min_proportion`` and/or ``top_topics``, as MALLET's ``--doc-topics-threshold`` and
  ``--doc-topics-max``. Ids are the corpus's own.
* :func:`topic_words`: ``topic, rank, word, probability``, every word (or the top ``top_words``)
  of every topic, by decreasing probability.
* :func:`topic_keys`: ``topic, name, alpha, prevalence[, coherence], words``: a name when the
  model has one (``params["topic_names"]``, a list or an id -> name mapping; else empty), the
  prior, the mean proportion over the training documents, a coherence score when asked, and
  the top words.
* ``diagnostics``: each topic's diagnostics and junk flags, one row per topic
  (:mod:`ldacli.scoring.diagnostics`), or MALLET's ``--diagnostics-file`` XML;
* :func:`to_pyldavis`: the arguments of ``pyLDAvis.prepare``.
* :func:`mallet_lines`: ``--output-doc-topics`` (dense without a threshold, else MALLET's
  ``#doc name topic proportion ...`` layout: :func:`ldacli.scoring.inference.mallet_doc_topic_lines`,
  which ``infer --format mallet`` writes too), ``--output-topic-keys`` and
  ``--topic-word-weights-file``.

:func:`export` (``ldacli.export``) is what the command does: one of them written to a file or
stdout, in the format asked for or that the file's name ends in.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import numpy as np

from ldacli import checks, settings
from ldacli.api_input import as_corpus, as_model, reading_of
from ldacli.corpora.formats.read import INPUT_FORMAT, VOCAB
from ldacli.files.fileio import atomic_write
from ldacli.files.locking import locked
from ldacli.signatures import takes_settings
from ldacli.corpora.corpus import Corpus
from ldacli.diff import prevalence
from ldacli.errors import InputError, SettingError
from ldacli.scoring.inference import (MIN_PROPORTION, SPARSE, TOP_TOPICS, corpus_theta, doc_topic_columns,
                                     doc_topic_rows, mallet_doc_topic_lines, mallet_field)
from ldacli.model import TOP_WORDS, Inference, Model
from ldacli.files.npz import kind_at
from ldacli.files.tables import TABLE_FORMATS, Table, batched, check_stream, text_writer, write_lines, write_table
from ldacli.scoring.coherence import MEASURE, REFERENCE, coherence, top_word_ids, training_reference
from ldacli.scoring import diagnostics as topic_diagnostics

TABLES = ("doc-topics", "topic-words", "topic-keys", "diagnostics", "pyldavis")
FORMATS = (*TABLE_FORMATS, "mallet", "json")
# The file endings that choose a format when --format is not given.
ENDINGS = {".tsv": "tsv", ".txt": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".json": "json"}

# What each table takes besides the model (a setting of another table is refused).
APPLIES = {"doc-topics": {"min_proportion", "top_topics"}, "topic-words": {"top_words"},
           "topic-keys": {"top_words", "coherence", "corpus"}, "diagnostics": {"top_words", "corpus"},
           "pyldavis": {"corpus"}}
SETTINGS = (*SPARSE, TOP_WORDS, MEASURE, REFERENCE)


def check_applies(what: str, given: dict) -> None:
    """Refuse a setting given (not None) that the table ``what`` does not take."""
    checks.choice("what", what, TABLES)
    for name, value in given.items():
        if value is not None and name not in APPLIES[what]:
            users = [t for t in TABLES if name in APPLIES[t]]
            raise SettingError(name, f"{name} applies to {' and '.join(users)} only, found {what}")
    if what == "topic-keys" and given.get("corpus") is not None and given.get("coherence") is None:
        raise SettingError("corpus", "corpus applies to topic-keys with coherence only (the reference of its scores)",
                           ("coherence",))


def format_for(what: str, output: str, format: str | None) -> str:
    """The output format: ``format``, or by ``output``'s ending (tsv for stdout; json for
    pyldavis); one that cannot hold ``what`` is refused."""
    if format is None:
        if what == "pyldavis":
            format = "json"
        elif output == "-":
            format = "tsv"
        else:
            ending = "." + output.rsplit(".", 1)[-1].lower() if "." in output else ""
            format = ENDINGS.get(ending, "tsv")
    checks.choice("output_format", format, FORMATS)
    if (what == "pyldavis") != (format == "json"):
        raise SettingError("output_format", "output_format must be json for pyldavis (pyLDAvis.prepare's arguments) "
                                            f"and a table format for the others, found {format} for {what}")
    return format


def read_source(path: str, what: str) -> Model | Inference:
    """The file at ``path`` that ``what`` is exported from: a model, or for doc-topics also an
    inference file (``ldacli infer MODEL NEW -o FILE.npz``: new documents' proportions); the
    other tables need a model's topics, and an inference file is refused for them."""
    if kind_at(path) == "inference":
        if what != "doc-topics":
            raise InputError(path, None, f"expected a model for {what}, found an inference file, which holds "
                                         f"documents' proportions only: export doc-topics from it ("
                                         f"{', '.join(t for t in TABLES if t != 'doc-topics')} need a model)")
        return Inference.load(path)
    return Model.load(path, documents=what != "topic-words")  # (topic-keys: their prevalence, a block at a time)


def source_of(model, what: str) -> Model | Inference:
    """What ``what`` is exported from: ``model`` itself (a :class:`~ldacli.model.Model`, or for
    doc-topics an :class:`~ldacli.model.Inference`), or the file at its path (:func:`read_source`)."""
    if isinstance(model, Inference) and what != "doc-topics":
        raise SettingError("model", f"model must be a Model for {what}, found an Inference, which holds documents' "
                                    f"proportions only")
    if isinstance(model, (Model, Inference)):
        return model
    path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else None
    if not isinstance(path, str) or not path:
        raise SettingError("model", f"model must be a Model, an Inference or the path of a model or inference file, "
                                    f"found {model!r}")
    return read_source(path, what)


def topic_names(model: Model) -> list[str]:
    """The topics' names (``params["topic_names"]``, :attr:`ldacli.model.Model.topic_names`); a
    topic without one has an empty name (its id is in the table's topic column already)."""
    return [name or "" for name in model.topic_names]


# --- the tables ---------------------------------------------------------------------------------------

def theta_chunks(model: Model) -> Iterator[tuple[list[str], np.ndarray]]:
    """The training documents' ids and topic proportions, a block of documents at a time
    (:meth:`~ldacli.model.Model.theta_blocks`: theta is never made whole for it)."""
    for first, block in model.theta_blocks():
        yield model.doc_ids[first:first + block.shape[0]], block


def doc_topics(model: Model, *, min_proportion: float | None = None, top_topics: int | None = None) -> Table:
    """The training documents' topic proportions (see the module docstring)."""
    min_proportion, top_topics = MIN_PROPORTION.check(min_proportion), TOP_TOPICS.check(top_topics)
    sparse = min_proportion is not None or top_topics is not None
    return Table(doc_topic_columns(model.n_topics, sparse),
                 doc_topic_rows(theta_chunks(model), min_proportion=min_proportion,
                                top_topics=top_topics))


def topic_words(model: Model, *, top_words: int | None = None) -> Table:
    """``topic, rank, word, probability``: every word of every topic (or its ``top_words``
    most probable), by decreasing probability, ties by word id."""
    n = model.phi.shape[1] if top_words is None else min(TOP_WORDS.check(top_words), model.phi.shape[1])

    def rows():
        for k in range(model.n_topics):
            ids = top_word_ids(model.phi[k:k + 1], n)[0]
            probs = model.phi[k, ids].tolist()
            yield from batched([(k, r, model.vocab[w], p) for r, (w, p) in enumerate(zip(ids.tolist(), probs), 1)])

    return Table([("topic", "int"), ("rank", "int"), ("word", "str"), ("probability", "float")], rows())


def topic_keys(model: Model, *, top_words: int | None = None, scores: dict | None = None) -> Table:
    """``topic, name, alpha, prevalence[, MEASURE], words`` (see the module docstring);
    ``scores`` is :func:`ldacli.coherence`'s result, when one was asked for."""
    n = TOP_WORDS.default if top_words is None else TOP_WORDS.check(top_words)
    names, prev = topic_names(model), prevalence(model)
    tops = model.top_words(n)
    columns = [("topic", "int"), ("name", "str"), ("alpha", "float"), ("prevalence", "float")]
    if scores is not None:
        columns.append((scores["measure"], "float"))
    columns.append(("words", "str_list"))
    rows = []
    for k in range(model.n_topics):
        row = [k, names[k], float(model.alpha[k]), float(prev[k])]
        if scores is not None:
            row.append(scores["per_topic"][k])
        rows.append((*row, [w for w, _ in tops[k]]))
    return Table(columns, [rows])


def keys_coherence(model: Model, measure: str | None, reference: Corpus | None, top_words: int | None) -> dict | None:
    """The coherence scores topic-keys shows (None without a ``measure``), against
    ``reference`` or the training corpus."""
    if measure is None:
        if reference is not None:
            raise SettingError("corpus", "corpus applies with coherence only (the reference of its scores)", ("coherence",))
        return None
    reference = reference if reference is not None else training_reference(model)
    return coherence(model, reference, measure=measure,
                     top_words=TOP_WORDS.default if top_words is None else top_words)


# --- pyLDAvis -------------------------------------------------------------------------------------------

def to_pyldavis(model: Model, corpus: Corpus | None = None) -> dict:
    """The arguments of ``pyLDAvis.prepare`` for ``model``: ``topic_term_dists`` (K, V),
    ``doc_topic_dists`` (D, K), ``doc_lengths`` (D,), ``vocab`` (V) and ``term_frequency`` (V,)
    of ``corpus`` (by default the training corpus, re-read and checked as ``topics
    --coherence`` does), its words matched to the model's; the documents' proportions are the
    model's for its training corpus, else inferred (:func:`ldacli.scoring.inference.corpus_theta`).
    ``model`` may be a model file's path, ``corpus`` anything :func:`ldacli.api_input.as_corpus`
    takes."""
    model = as_model(model)
    corpus = as_corpus(corpus, model=model) if corpus is not None else training_reference(model)
    aligned, _ = corpus.align(model.vocab)
    theta, _ = corpus_theta(model, aligned)
    return {
        "topic_term_dists": model.phi,
        "doc_topic_dists": theta,
        "doc_lengths": aligned.doc_lengths,
        "vocab": list(model.vocab),
        "term_frequency": aligned.word_frequencies(),
    }


def write_pyldavis(args: dict, out: IO[bytes]) -> None:
    """``args`` (from :func:`to_pyldavis`) as one JSON object, written row by row."""

    def write(text):
        text.write("{")
        for i, (key, value) in enumerate(args.items()):
            text.write(("," if i else "") + json.dumps(key) + ":")
            if isinstance(value, np.ndarray) and value.ndim == 2:
                text.write("[")
                for s in range(0, value.shape[0], 1024):
                    text.write(("," if s else "") + ",".join(json.dumps(r) for r in value[s:s + 1024].tolist()))
                text.write("]")
            else:
                text.write(json.dumps(value.tolist() if isinstance(value, np.ndarray) else value, ensure_ascii=False))
        text.write("}\n")

    text_writer(out, write)


# --- MALLET's layouts -----------------------------------------------------------------------------------

def java_number(x: float) -> str:
    """A number as MALLET's ``NumberFormat`` prints alpha: at most 5 decimals, grouped thousands."""
    s = f"{x:,.5f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def mallet_topic_key_lines(model: Model, top_words: int | None) -> Iterator[str]:
    """MALLET's ``--output-topic-keys``: ``topic<TAB>alpha<TAB>word word ... `` per topic."""
    n = TOP_WORDS.default if top_words is None else top_words
    for k, words in enumerate(model.top_words(n)):
        yield f"{k}\t{java_number(float(model.alpha[k]))}\t" + "".join(
            mallet_field(w, "word", space=True) + " " for w, _ in words) + "\n"


def mallet_topic_word_lines(model: Model, top_words: int | None) -> Iterator[str]:
    """MALLET's ``--topic-word-weights-file`` layout, ``topic<TAB>word<TAB>weight`` for every
    topic and word in vocabulary order (or the ``top_words`` of each, by weight); the weight is
    p(w | k) (MALLET writes beta + the count, which its readers normalise per topic alike)."""
    for w in model.vocab:
        mallet_field(w, "word")
    for k in range(model.n_topics):
        ids = np.arange(model.phi.shape[1]) if top_words is None else top_word_ids(model.phi[k:k + 1], top_words)[0]
        row = model.phi[k, ids].tolist()
        yield "".join(f"{k}\t{model.vocab[w]}\t{p!r}\n" for w, p in zip(ids.tolist(), row))


def diagnostics(model: Model, reference: Corpus | None, top_words: int | None) -> dict:
    """The topics' diagnostics (:func:`ldacli.scoring.diagnostics.topic_diagnostics`) against
    ``reference`` or the training corpus, on the top ``top_words`` words (10)."""
    reference = reference if reference is not None else training_reference(model)
    n = topic_diagnostics.DIAGNOSTIC_WORDS if top_words is None else top_words
    return topic_diagnostics.diagnostics(model, reference, top_words=n)


def table(model: Model, what: str, *, min_proportion: float | None = None, top_topics: int | None = None,
          top_words: int | None = None, scores: dict | None = None) -> Table:
    """The table ``what`` (one of :data:`TABLES` but pyldavis) of ``model``; for diagnostics,
    ``scores`` is :func:`diagnostics`'s result."""
    if what == "diagnostics":
        return topic_diagnostics.table(scores)
    if what == "doc-topics":
        return doc_topics(model, min_proportion=min_proportion, top_topics=top_topics)
    if what == "topic-words":
        return topic_words(model, top_words=top_words)
    if what == "topic-keys":
        return topic_keys(model, top_words=top_words, scores=scores)
    raise ValueError(f"what: expected one of {', '.join(TABLES[:3])}, found {what!r}")


def mallet_lines(model: Model, what: str, *, min_proportion: float | None = None, top_topics: int | None = None,
                 top_words: int | None = None, scores: dict | None = None) -> Iterator[str]:
    """The lines of MALLET's file for ``what`` (for diagnostics, the XML of :func:`diagnostics`'s
    result ``scores``)."""
    if what == "diagnostics":
        return topic_diagnostics.mallet_xml_lines(scores)
    if what == "doc-topics":
        return mallet_doc_topic_lines(theta_chunks(model), min_proportion=min_proportion,
                                      top_topics=top_topics)
    if what == "topic-keys":
        return mallet_topic_key_lines(model, top_words)
    return mallet_topic_word_lines(model, top_words)


# --- what ldacli export does ----------------------------------------------------------------------------

@contextmanager
def _written(output: str):
    """The binary stream ``output`` names: stdout for ``-``, else the file, written atomically."""
    if output == "-":
        yield sys.stdout.buffer
        return
    with atomic_write(output, "wb", what="output") as f:
        yield f


@takes_settings(SETTINGS, (INPUT_FORMAT, VOCAB))
def export(model, what: str, output: str = "-", *, format: str | None = None, **given) -> dict:
    """Write the table ``what`` of ``model`` to ``output``, as ``ldacli export`` does.

    ``model`` is a :class:`~ldacli.model.Model`, an :class:`~ldacli.model.Inference` (for
    doc-topics: new documents' proportions) or the path of either file; ``what`` one of
    :data:`TABLES` (see the module docstring); ``output`` a file's path, written atomically
    while holding its lock, or ``-`` for stdout. ``format`` is tsv, csv, jsonl, parquet or
    mallet (MALLET's file for the table), json for pyldavis (and only there); by default as
    ``output``'s name ends (:data:`ENDINGS`; tsv for stdout). The settings below that ``what``
    does not take are refused (:data:`APPLIES`); ``corpus`` (anything
    :func:`ldacli.api_input.as_corpus` takes; a path with ``input_format`` and ``vocab``, read
    for the model) is the reference of coherence, diagnostics and pyLDAvis's counts, by default
    the training corpus. Returns ``output``, ``what``, ``format`` and ``notes``, what the reader
    said of ``corpus`` for people.
    """
    reading = reading_of(given, (INPUT_FORMAT, VOCAB))
    settings.check_names(SETTINGS, given)
    check_applies(what, given)
    fmt = format_for(what, output, format)
    for s in SETTINGS:
        s.check(given.get(s.name))
    corpus = given.get("corpus")
    if corpus is None:
        for name, value in reading.items():
            if value is not None:
                raise SettingError(name, f"{name} applies with corpus only (how it is read)", ("corpus",))
    if output == "-":
        check_stream(fmt, sys.stdout.buffer)
    with locked([output if output != "-" else None]):
        m = source_of(model, what)
        reference = as_corpus(corpus, reading=reading, model=m) if corpus is not None else None
        n = given.get("top_words")
        with _written(output) as out:
            if what == "pyldavis":
                write_pyldavis(to_pyldavis(m, reference), out)
            else:
                scores = (keys_coherence(m, given.get("coherence"), reference, n) if what == "topic-keys"
                          else diagnostics(m, reference, n) if what == "diagnostics" else None)
                options = dict(min_proportion=given.get("min_proportion"), top_topics=given.get("top_topics"),
                               top_words=n, scores=scores)
                if fmt == "mallet":
                    write_lines(mallet_lines(m, what, **options), out)
                else:
                    write_table(table(m, what, **options), out, fmt)
    return {"output": output, "what": what, "format": fmt, "notes": list(reference.notes) if reference else []}
