"""Inference: topic proportions of new documents under a trained model (``ldacli infer``).

:func:`infer` takes a corpus in memory and returns an :class:`~ldacli.model.Inference`;
:func:`infer_chunks` takes documents block by block (a :class:`~ldacli.corpora.formats.stream.CorpusStream`
or any iterable of corpora) and yields the proportions chunk by chunk, which
:func:`write_inference` writes as they come: memory holds a few chunks, never D x K. Both give
the same numbers, for any number of threads or Dask workers: each chunk of about 65,000 tokens
(:func:`ldacli.scoring.fixed_topics.theta_chunks`) has its own random stream.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ldacli import checks, random_streams, settings
from ldacli.api_input import as_corpus, as_model, checked_path, is_path, reading_of, stream_at
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError, SettingError
from ldacli.corpora.counts import tokens_of
from ldacli.files.fileio import atomic_write
from ldacli.scoring.fixed_topics import BURN_IN, ITERATIONS, theta_stream
from ldacli.cluster.connection import SCHEDULER, cluster
from ldacli.model import Inference, Model, file_header
from ldacli.files.npz import StreamedArray, write_npz_members
from ldacli.parallel import THREADS, check_threads
from ldacli.random_streams import SEED
from ldacli.settings import Integer, Real, Setting
from ldacli.signatures import takes_settings
from ldacli.corpora.formats.read import READING_FOR_MODEL
from ldacli.files.locking import locked
from ldacli.files.tables import BATCH_ROWS, Table, batched, check_stream, write_lines, write_table
from ldacli.version import __version__

# The settings of ``infer``.
SETTINGS = (ITERATIONS, BURN_IN, SEED, THREADS, SCHEDULER)
# Sparse doc-topics tables (``infer`` and ``export doc-topics``), after MALLET's options.
MIN_PROPORTION = Setting("min_proportion", Real(0, 1), None,
                         "Sparse doc-topics: only the topics of a document with at least this proportion, largest "
                         "first (MALLET's --doc-topics-threshold).")
TOP_TOPICS = Setting("top_topics", Integer(1), None,
                     "Sparse doc-topics: at most this many topics per document, largest first (MALLET's "
                     "--doc-topics-max).")
SPARSE = (MIN_PROPORTION, TOP_TOPICS)
# The sweeps with which a report or pyLDAvis's arguments infer a corpus other than the training one.
VIEW_ITERATIONS, VIEW_BURN_IN, VIEW_SEED = 50, 20, 1


def check_settings(given: dict) -> dict:
    """The settings of :func:`infer` from those ``given``: checked, with their defaults."""
    v = settings.resolve(SETTINGS, given)
    checks.smaller("burn_in", v["burn_in"], "iterations", v["iterations"])
    return v


def check_table(format: str, *, min_proportion: float | None = None,
                top_topics: int | None = None) -> tuple[float | None, int | None]:
    """The sparse table's settings (:data:`SPARSE`) checked for an output in ``format``: an npz
    file holds theta whole, and takes neither."""
    min_proportion, top_topics = MIN_PROPORTION.check(min_proportion), TOP_TOPICS.check(top_topics)
    if format == "npz" and (min_proportion is not None or top_topics is not None):
        name = "min_proportion" if min_proportion is not None else "top_topics"
        raise SettingError(name, f"{name} makes a sparse table: it applies to the table formats, found npz")
    return min_proportion, top_topics


def infer_chunks(model: Model, blocks: Iterable[Corpus], *, iterations: int | None = None,
                 burn_in: int | None = None, seed: int, threads: int | None = None, client=None,
                 progress: bool = False) -> Iterator[tuple[list[str], np.ndarray]]:
    """Topic proportions of the documents of ``blocks`` (corpora over the model's vocabulary,
    in order) as ``(doc_ids, theta)`` chunks, in document order, as they are estimated
    (:func:`ldacli.scoring.fixed_topics.theta_stream`; ``seed`` is the entropy, see
    :func:`ldacli.random_streams.resolve`)."""
    v = check_settings(dict(iterations=iterations, burn_in=burn_in, seed=seed, threads=threads))
    ids: deque[str] = deque()

    def tokens():
        for block in blocks:
            ids.extend(block.doc_ids)
            yield tokens_of(block.counts)

    for theta, _ in theta_stream(model.phi, model.alpha, tokens(), iterations=v["iterations"], burn_in=v["burn_in"],
                                 seed=seed, threads=check_threads(v["threads"]), client=client, progress=progress):
        yield [ids.popleft() for _ in range(theta.shape[0])], theta


def inference_params(model: Model, v: dict, entropy: int, source: str, fingerprint: str | None, n_tokens: int,
                     dropped: int, removed: int) -> dict:
    """The ``params`` an inference records: ``unknown_tokens`` (``dropped``: of words the model
    has never seen), ``removed_tokens`` (of words its vocabulary rules remove) and their sum,
    ``dropped_tokens`` (every token of the documents not inferred), besides the settings."""
    return {
        "iterations": v["iterations"],
        "burn_in": v["burn_in"],
        "seed": entropy,
        "corpus_source": source,
        "corpus_fingerprint": fingerprint,
        "n_tokens": n_tokens,
        "unknown_tokens": dropped,
        "removed_tokens": removed,
        "dropped_tokens": dropped + removed,
        "model_params": model.params,
        "ldacli_version": __version__,
    }


@takes_settings(SETTINGS, READING_FOR_MODEL)
def infer(model, corpus, *, progress: bool = False, **given) -> tuple[Inference, int]:
    """Topic proportions of ``corpus``'s documents under ``model``, by Gibbs sampling with the
    model's topics fixed (:func:`ldacli.scoring.fixed_topics.estimate_theta`): after ``burn_in`` sweeps (50)
    the estimate is averaged over the rest of ``iterations`` (100).

    ``model`` is a :class:`~ldacli.model.Model` or a model file's path; ``corpus`` what
    :func:`ldacli.api_input.as_corpus` takes (a path, with the reading settings below, a
    :class:`~ldacli.corpora.corpus.Corpus`, a list of strings, a SciPy sparse matrix with ``vocab``),
    read as the model read its training corpus (its vocabulary, its recorded tokenizer:
    :meth:`~ldacli.model.Model.reading`). Words are matched to the model's vocabulary by
    string; returns the inference and the number of tokens dropped because the model has never
    seen their word (those the reader dropped, ``corpus.dropped_tokens``, included); the tokens
    of words the model's vocabulary rules removed (``model.removed_words``) are not inferred
    either, and counted apart (the params' ``removed_tokens``). Without ``seed``, fresh entropy
    is drawn and recorded in the inference's params. The documents run on ``threads`` threads
    (all cores) or on the workers of a Dask ``scheduler`` (see
    :data:`~ldacli.cluster.connection.SCHEDULER`); the result is the same.
    """
    reading = reading_of(given, READING_FOR_MODEL)
    settings.check_names(SETTINGS, given)
    v = check_settings(given)
    model = as_model(model)
    corpus = as_corpus(corpus, reading=reading, model=model)
    aligned, _ = corpus.align(model.vocab, frozenset(model.removed_words))
    dropped = aligned.dropped_tokens
    entropy = random_streams.resolve(v["seed"])
    with cluster(v["scheduler"]) as client:
        parts = list(infer_chunks(model, [aligned], iterations=v["iterations"], burn_in=v["burn_in"], seed=entropy,
                                  threads=v["threads"], client=client, progress=progress))
    theta = np.concatenate([t for _, t in parts]) if parts else np.zeros((0, model.n_topics))
    params = inference_params(model, v, entropy, corpus.source, corpus.fingerprint(), aligned.n_tokens, dropped,
                              aligned.removed_tokens)
    return Inference(theta, list(corpus.doc_ids), params), dropped


def corpus_theta(model: Model, corpus: Corpus) -> tuple[np.ndarray, list[str]]:
    """The topic proportions of ``corpus``'s documents and their ids: the model's own when
    ``corpus`` is its training corpus (same fingerprint and documents), else inferred with
    :data:`VIEW_ITERATIONS` sweeps and seed :data:`VIEW_SEED` (what a report shows)."""
    if corpus.fingerprint() == model.params.get("corpus_fingerprint") and model.n_docs == corpus.n_docs:
        return model.theta, list(corpus.doc_ids)
    result, _ = infer(model, corpus, iterations=VIEW_ITERATIONS, burn_in=VIEW_BURN_IN, seed=VIEW_SEED)
    return result.theta, result.doc_ids


# --- the doc-topics table -----------------------------------------------------------------------------

def sparse_order(theta: np.ndarray) -> np.ndarray:
    """(D, K): each row's topics by decreasing proportion, ties by topic id."""
    return np.argsort(-theta, axis=1, kind="stable")


def doc_topic_columns(n_topics: int, sparse: bool) -> list[tuple[str, str]]:
    """The doc-topics table's columns: ``doc_id, topic_0 ... topic_{K-1}``, or sparse
    ``doc_id, rank, topic, proportion``."""
    if sparse:
        return [("doc_id", "str"), ("rank", "int"), ("topic", "int"), ("proportion", "float")]
    return [("doc_id", "str")] + [(f"topic_{k}", "float") for k in range(n_topics)]


def doc_topic_rows(chunks: Iterable[tuple[list[str], np.ndarray]], *, min_proportion: float | None = None,
                   top_topics: int | None = None) -> Iterator[list[tuple]]:
    """Row batches of the doc-topics table from ``(doc_ids, theta)`` chunks (theta (n, K)):
    every proportion, or (sparse) each document's topics by decreasing proportion, at most
    ``top_topics`` of them and those of at least ``min_proportion``."""
    sparse = min_proportion is not None or top_topics is not None
    for ids, theta in chunks:
        if not sparse:
            for s in range(0, len(ids), BATCH_ROWS):
                yield [(d, *row) for d, row in zip(ids[s:s + BATCH_ROWS], theta[s:s + BATCH_ROWS].tolist())]
            continue
        order = sparse_order(theta)
        if top_topics is not None:
            order = order[:, :top_topics]
        values = np.take_along_axis(theta, order, axis=1)
        rows = []
        for d, topics, props in zip(ids, order.tolist(), values.tolist()):
            for rank, (k, p) in enumerate(zip(topics, props), start=1):
                if min_proportion is not None and p < min_proportion:
                    break
                rows.append((d, rank, k, p))
        yield from batched(rows)


def mallet_field(value: str, what: str, space: bool = False) -> str:
    """``value`` as a field of a MALLET layout, which separates fields by tabs (and words by
    spaces: ``space``) and has no quoting: a value it cannot hold is refused, naming it."""
    bad = ("\t", "\n", "\r") + ((" ",) if space else ())
    if any(c in value for c in bad):
        raise LdacliError(f"--format mallet: MALLET's layout cannot hold the {what} {value!r} (it has "
                          f"{'whitespace' if space else 'a tab or a line break'}); use tsv, csv, jsonl or parquet")
    return value


def mallet_doc_topic_lines(chunks: Iterable[tuple[list[str], np.ndarray]], *, min_proportion: float | None,
                           top_topics: int | None) -> Iterator[str]:
    """MALLET's ``--output-doc-topics``: ``doc<TAB>name<TAB>p_0<TAB>...`` without a threshold
    or maximum; with one, the header ``#doc name topic proportion ...`` and per document its
    topics by decreasing proportion as ``topic<TAB>proportion<TAB>`` pairs."""
    sparse = min_proportion is not None or top_topics is not None
    if sparse:
        yield "#doc name topic proportion ...\n"
    doc = 0
    for ids, theta in chunks:
        lines = []
        if sparse:
            order = sparse_order(theta)[:, :top_topics] if top_topics else sparse_order(theta)
            values = np.take_along_axis(theta, order, axis=1)
            for name, topics, props in zip(ids, order.tolist(), values.tolist()):
                pairs = "".join(f"{k}\t{p!r}\t" for k, p in zip(topics, props)
                                if min_proportion is None or p >= min_proportion)
                lines.append(f"{doc}\t{mallet_field(name, 'document id')}\t{pairs}\n")
                doc += 1
        else:
            for name, row in zip(ids, theta.tolist()):
                lines.append(f"{doc}\t{mallet_field(name, 'document id')}\t"
                             + "\t".join(repr(p) for p in row) + "\n")
                doc += 1
        yield "".join(lines)


# --- writing theta as it comes ---------------------------------------------------------------------------

@dataclass
class Written:
    """What :func:`write_inference` wrote: documents, tokens inferred, tokens of words the model
    has never seen (dropped), seed, tokens of words its vocabulary rules remove."""

    n_docs: int
    n_tokens: int
    dropped_tokens: int
    seed: int
    removed_tokens: int = 0
    notes: list[str] = field(default_factory=list)  # what the reader said of the corpus, for people


def write_inference(model, corpus, output: str, format: str, *, out=None, min_proportion: float | None = None,
                    top_topics: int | None = None, iterations: int | None = None, burn_in: int | None = None,
                    seed: int | None = None, threads: int | None = None, scheduler=None,
                    progress: bool = False, **reading) -> Written:
    """Infer the documents of ``corpus`` under ``model`` and write their proportions as they come
    to ``output`` (atomically, while holding its lock) or to the binary stream ``out``: what
    ``ldacli infer`` does. ``model`` is a :class:`~ldacli.model.Model` or a model file's path
    (its topics read, not its training documents); ``corpus`` the path of a corpus, read a block
    at a time for the model with the reading settings ``reading``
    (:func:`ldacli.api_input.stream_at`), or a :class:`~ldacli.corpora.formats.stream.CorpusStream`
    over the model's vocabulary (made with ``fingerprint=True`` for npz). ``format`` npz
    (the :class:`~ldacli.model.Inference` file, its theta written through a temporary file
    beside it, never held whole), a table format of :mod:`ldacli.files.tables` (the doc-topics table
    of :mod:`ldacli.exporting`: dense, or sparse with ``min_proportion``/``top_topics``) or mallet
    (:func:`mallet_doc_topic_lines`, as ``export doc-topics --format mallet`` writes). The
    settings are checked before anything is read."""
    v = check_settings(dict(iterations=iterations, burn_in=burn_in, seed=seed, threads=threads, scheduler=scheduler))
    min_proportion, top_topics = check_table(format, min_proportion=min_proportion, top_topics=top_topics)
    settings.check_names(READING_FOR_MODEL, reading)
    if out is not None:
        check_stream(format, out)
    if not is_path(corpus):
        for name, value in reading.items():
            if value is not None:
                raise SettingError(name, f"{name} applies to a corpus read here (a path), found "
                                         f"{type(corpus).__name__}")
    with locked([output if out is None else None]):
        model = as_model(model, documents=False)
        stream = stream_at(checked_path(corpus), reading, model, fingerprint=format == "npz",
                           temp_folder=None if out is not None else os.path.dirname(os.path.abspath(output))) \
            if is_path(corpus) else corpus
        return _written(model, stream, output, format, out, v, min_proportion, top_topics, progress)


def _written(model: Model, stream, output: str, format: str, out, v: dict, min_proportion: float | None,
             top_topics: int | None, progress: bool) -> Written:
    """:func:`write_inference`'s writing, its settings checked and its stream open."""
    entropy = random_streams.resolve(v["seed"])
    with cluster(v["scheduler"]) as client:
        chunks = infer_chunks(model, stream.blocks(), iterations=v["iterations"], burn_in=v["burn_in"], seed=entropy,
                              threads=v["threads"], client=client, progress=progress)
        if format == "npz":
            _write_npz(model, stream, chunks, output, v, entropy)
        elif format == "mallet":
            lines = mallet_doc_topic_lines(chunks, min_proportion=min_proportion, top_topics=top_topics)
            if out is not None:
                write_lines(lines, out)
            else:
                with atomic_write(output, what="output") as f:
                    write_lines(lines, f)
        else:
            sparse = min_proportion is not None or top_topics is not None
            table = Table(doc_topic_columns(model.n_topics, sparse),
                          doc_topic_rows(chunks, min_proportion=min_proportion, top_topics=top_topics))
            if out is not None:
                write_table(table, out, format)
            else:
                with atomic_write(output, what="output") as f:
                    write_table(table, f, format)
    return Written(stream.n_docs, stream.n_tokens, stream.dropped_tokens, entropy, stream.removed_tokens,
                   list(stream.notes))


def _write_npz(model: Model, stream, chunks, output: str, v: dict, entropy: int) -> None:
    """The inference ``.npz`` of ``chunks``, byte for byte what :meth:`Inference.save` writes
    of the whole: theta and the ids are spooled to temporary files beside ``output`` (removed
    when done), then the archive is written in its member order."""
    folder = os.path.dirname(os.path.abspath(output))
    K = model.n_topics
    def spool():
        return tempfile.TemporaryFile(dir=folder, buffering=1 << 20)

    with spool() as theta_file, spool() as ids_file:
        n_docs, longest = 0, 0
        for ids, theta in chunks:
            theta_file.write(np.ascontiguousarray(theta, dtype=np.float64).tobytes())
            encoded = [d.encode("utf-32-le") for d in ids]
            longest = max([longest] + [len(e) // 4 for e in encoded])
            ids_file.write(b"".join(len(e).to_bytes(4, "little") + e for e in encoded))
            n_docs += len(ids)
        width = max(longest, 1)  # numpy's width for text, at least 1
        params = inference_params(model, v, entropy, stream.source, stream.fingerprint(), stream.n_tokens,
                                  stream.dropped_tokens, stream.removed_tokens)

        def theta_bytes():
            theta_file.seek(0)
            yield from iter(lambda: theta_file.read(1 << 20), b"")

        def id_bytes():
            ids_file.seek(0)
            out: list[bytes] = []
            for _ in range(n_docs):
                e = ids_file.read(int.from_bytes(ids_file.read(4), "little"))
                out.append(e + b"\0" * (4 * width - len(e)))
                if len(out) == 4096:
                    yield b"".join(out)
                    out = []
            yield b"".join(out)

        members = file_header("inference", params)
        members["theta"] = StreamedArray(np.dtype(np.float64), (n_docs, K), theta_bytes())
        members["doc_ids"] = StreamedArray(np.dtype(f"<U{width}"), (n_docs,), id_bytes())
        write_npz_members(output, members, "inference")
