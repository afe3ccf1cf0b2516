"""The files ldacli writes and reads: models, checkpoints and inferred proportions, all ``.npz``.

Every file carries ``format_version``, ``kind`` and ``params`` (a JSON string with the effective
parameters and the package version). Files are written atomically and deterministically (fixed
zip timestamps, uncompressed members, fixed member order), so the same run gives the same bytes.
Every file is validated here when it is loaded, for every command: the archive by
:mod:`ldacli.files.npz` (damage, pickles, sizes), then each array's kind, dtype and shape, the shapes
against each other, values finite and in range (probabilities non-negative with rows summing to
1, priors positive, counters in range), text that any output can carry, and topic names as
``ldacli name`` checks them (:func:`check_name`). A file that fails is an :class:`InputError`
naming it.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldacli import checks
from ldacli.errors import InputError, LdacliError, SettingError
from ldacli.files.npz import array, json_object, read_file, scalar, write_npz, write_npz_members
from ldacli.memory import check_fits
from ldacli.settings import Integer, Setting
from ldacli.corpora.tokenizer import Tokenizer
from ldacli.topic_counts import DOC_MEMBERS, WORD_MEMBERS, TopicCounts, WordTopicCounts
from ldacli.topic_word_prior import TopicWordPrior

# The formats of a corpus made by the tokenizer (``text``: one document per line; ``textdir``: a
# folder of .txt files; ``texts``: ``Corpus.from_texts``), as ``params["corpus_format"]`` names them.
TEXT_CORPUS_FORMATS = ("text", "textdir", "texts")

TOP_WORDS = Setting("top_words", Integer(1), 10, "Top words per topic.", flags=("-n", "--top-words"))

# A topic's name: at most this many characters (:func:`check_name`).
MAX_NAME_LENGTH = 100

# 2: one checkpoint format for every method (version 1 files are still read).
# 3: a collapsed Gibbs model stores the counts its phi and theta are computed from, not them.
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)


def steps(method: str | None) -> str:
    """What a run of ``method`` counts its steps in, as the methods' ``unit`` says (a model
    file knows its method by name only): sweeps, or vem's EM iterations."""
    return "EM iterations" if method == "vem" else "sweeps"


def file_header(kind: str, params: dict) -> dict[str, Any]:
    """The members every ldacli file starts with: ``format_version``, ``kind``, ``params``."""
    return {
        "format_version": np.int64(FORMAT_VERSION),
        "kind": np.str_(kind),
        "params": np.str_(json.dumps(params, sort_keys=True)),
    }


def names_of_topics(params: dict, n_topics: int) -> list[str | None]:
    """The topics' names that ``params`` records (``topic_names``: a list of K names or nulls, or
    a mapping from topic ids as text to names), None for a topic without one: K entries."""
    names = params.get("topic_names")
    if isinstance(names, dict):
        out: list[str | None] = [None] * n_topics
        for key, name in names.items():
            out[int(key)] = name or None
        return out
    return [n or None for n in names] if names else [None] * n_topics


# The members of a model file that are its training documents': Model.load(documents=False) leaves them unread
DOCUMENTS = ("theta", "doc_ids", *DOC_MEMBERS)
# Rows of theta a block holds (:meth:`Model.theta_blocks`): about 4 MB of them, at least one.
THETA_BLOCK_BYTES = 1 << 22


class _FromCounts:
    """A model's ``phi`` or ``theta``: the array given, or, for a model that holds the counts
    they are computed from, computed from them when first read (and kept)."""

    def __set_name__(self, owner, name: str) -> None:
        self.name, self.slot = name, "_" + name

    def __get__(self, model, owner=None):
        if model is None:  # a field without a default
            raise AttributeError(self.name)
        value = model.__dict__.get(self.slot)
        if value is None and model.__dict__.get("counts") is not None:
            value = model.__dict__[self.slot] = model._computed(self.name)
        return value

    def __set__(self, model, value) -> None:
        model.__dict__[self.slot] = value


@dataclass
class Model:
    """A trained topic model: what ``infer``, ``topics`` and ``perplexity`` need.

    ``phi`` (K, V) topic-word probabilities; ``theta`` (D, K) topic proportions of the training
    documents; ``alpha`` (K,) document-topic prior; ``beta`` the symmetric topic-word prior;
    ``vocab`` (V words); ``doc_ids`` (D training document names); ``loglik_iterations`` and
    ``loglik_per_token`` the trace of the joint log-likelihood per token; ``params`` the
    effective parameters and provenance; ``params["topic_names"]``, when present, a list of K
    entries, each a topic's name (a string) or None (:attr:`topic_names`). ``removed_words``:
    the words the vocabulary rules removed from the training corpus, and the words of its stop
    lists (sorted; :attr:`ldacli.Corpus.removed_words`), so that documents read for the model
    (:meth:`reading`) count their tokens apart from those of words it has never seen.

    ``counts``: a collapsed Gibbs model holds the whole numbers its phi and theta are computed
    from (:class:`~ldacli.topic_counts.TopicCounts`; give ``phi`` and ``theta`` None): each is
    then computed from them, with ``alpha``, ``beta`` and the prior of seeded topics, when it is
    first read (:meth:`theta_blocks` gives theta a block of documents at a time without making
    it whole), and :meth:`save` stores the counts, not the arrays. A model given ``phi`` and
    ``theta`` is them: given both and counts too (``dataclasses.replace`` of a model with
    counts), it keeps the arrays and drops the counts.
    """

    phi: np.ndarray = _FromCounts()
    theta: np.ndarray = _FromCounts()
    alpha: np.ndarray
    beta: float
    vocab: list[str]
    doc_ids: list[str]
    loglik_iterations: np.ndarray
    loglik_per_token: np.ndarray
    params: dict = field(default_factory=dict)
    removed_words: list[str] = field(default_factory=list, repr=False)
    counts: TopicCounts | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        given = [name for name in ("phi", "theta") if self.__dict__.get("_" + name) is not None]
        if self.counts is not None and given:  # the arrays are the model
            self.phi, self.theta = self.phi, self.theta
            self.counts = None
        elif self.counts is None and len(given) < 2:
            raise SettingError("counts", "a model needs phi and theta, or the counts they are computed from")

    def _computed(self, name: str) -> np.ndarray:
        """``phi`` or ``theta`` (``name``) computed from :attr:`counts`, whole."""
        counts, K = self.counts, self.counts.n_topics
        if name == "phi":
            check_fits(f"the topics of a model of {K} topics and {counts.n_words} words", 8.0 * K * counts.n_words)
            return counts.phi(self.beta)
        check_fits(f"the proportions of {counts.n_docs} documents and {K} topics", 8.0 * K * counts.n_docs)
        theta = np.empty((counts.n_docs, K))
        counts.theta_rows(theta, 0, np.asarray(self.alpha, dtype=np.float64))
        return theta

    @property
    def n_topics(self) -> int:
        return self.counts.n_topics if self.counts is not None else self.phi.shape[0]

    @property
    def n_docs(self) -> int:
        """The training documents theta has rows for (without making theta)."""
        return self.counts.n_docs if self.counts is not None else self.theta.shape[0]

    def theta_blocks(self, rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """``(first document, block)``: theta's rows ``rows`` at a time (by default about
        :data:`THETA_BLOCK_BYTES` of them), covering the documents in order; computed a block at
        a time from :attr:`counts` when theta has not been made (never the whole (D, K) array),
        else views of theta."""
        D, K = self.n_docs, self.n_topics
        step = max(1, rows or THETA_BLOCK_BYTES // (8 * K))
        if self.counts is None or self.__dict__.get("_theta") is not None:
            yield from row_blocks(self.theta, step)
            return
        alpha = np.asarray(self.alpha, dtype=np.float64)
        for first in range(0, D, step):
            block = np.empty((min(step, D - first), K))
            self.counts.theta_rows(block, first, alpha)
            yield first, block

    def word_topic_counts(self) -> WordTopicCounts:
        """The word-topic whole numbers a collapsed Gibbs model's phi is computed from, what a
        later update of the model adds new documents' counts to (:class:`~ldacli.topic_counts.WordTopicCounts`):
        the non-zero cells as ``topics``, ``words`` and ``sums`` (C,) int64, sorted by topic then
        word, each the cell's counts added up over ``states`` states of the chain (1: the
        final state's; the mean count is ``sums / states``), and ``topic_totals`` (K,) int64;
        topics are this model's ids. phi is ``(sums / states + beta_kw) / (topic_totals / states
        + sum_w beta_kw)``. Raises :class:`~ldacli.errors.LdacliError` for a model that holds
        phi itself (methods vem and gibbs, and files of ldacli before format version 3)."""
        if self.counts is None:
            raise LdacliError(f"this {self.params.get('method', 'cgs')} model holds phi itself, not the counts it was "
                              f"computed from (a collapsed Gibbs model of format version 3 or later holds them)")
        return self.counts.word_topic_counts()

    @property
    def tokenizer(self) -> Tokenizer:
        """How the training corpus was tokenized, as ``params`` record it: its own settings when
        it was text (those a model of ldacli 0.2 lacks are :data:`~ldacli.corpora.tokenizer.LEGACY`'s),
        the one its tokenizer file records for a bag-of-words corpus made from text
        (``params["tokenizer_file"]``, :mod:`ldacli.corpora.formats.tokenizer_file`), and the default
        tokenizer for another bag-of-words corpus."""
        if self.params.get("corpus_format") in TEXT_CORPUS_FORMATS:
            return Tokenizer.of(self.params)
        if isinstance(self.params.get("tokenizer_file"), dict):
            return Tokenizer.of(self.params["tokenizer_file"])
        return Tokenizer()

    def reading(self) -> dict:
        """How documents are read for this model: the keyword arguments ``fixed_vocab`` (its
        vocabulary), ``tokenizer`` (:attr:`tokenizer`) and ``removed_words`` of
        :func:`ldacli.read_corpus` and :func:`~ldacli.corpora.formats.stream.stream_corpus`, which then
        read text as the training corpus was read and count the tokens of the words its
        vocabulary rules removed (``removed_tokens``) apart from those of words it has never
        seen (``dropped_tokens``): on its own training corpus, none."""
        return {"fixed_vocab": self.vocab, "tokenizer": self.tokenizer, "removed_words": frozenset(self.removed_words)}

    @property
    def topic_names(self) -> list[str | None]:
        """Each topic's name, or None where it has none (K entries; all None when the model
        names no topic). ``params["topic_names"]`` is a list of K names (or nulls), as ldacli
        writes it, or a mapping from topic ids (as text) to names."""
        return names_of_topics(self.params, self.n_topics)

    def topic_label(self, k: int) -> str:
        """How outputs show topic ``k``: ``"3 sports"``, or ``"3"`` when it has no name."""
        name = self.topic_names[k]
        return f"{k} {name}" if name else str(k)

    def __repr__(self) -> str:
        p = self.params
        done = p.get("iterations_done")
        return (f"<Model: {p.get('method', 'cgs')}, {self.n_topics:,} topics, {len(self.vocab):,} words, "
                f"{self.n_docs:,} documents"
                + (f", {done:,} {steps(p.get('method'))}" if isinstance(done, int) else "")
                + (f", seed {p['seed']}" if "seed" in p else "") + ">")

    def to_pandas(self):
        """The training documents' topic proportions as a pandas DataFrame: one row per
        document (index ``doc_id``), columns ``topic_0`` ... ``topic_{K-1}`` (pandas: the
        ``pandas`` extra)."""
        return theta_frame(self.theta, self.doc_ids)

    def save(self, path: str) -> None:
        """Write the model to ``path`` (atomically): its :attr:`counts` when it holds them (their
        parts may be made as they are written: see :meth:`~ldacli.topic_counts.SparseRows.streamed`),
        else ``phi`` and ``theta``."""
        path = checks.path("path", path, "the path of the model file to write")
        arrays = file_header("model", self.params)
        if self.counts is not None:
            arrays.update(self.counts.members())
        else:
            arrays.update(phi=np.ascontiguousarray(self.phi, dtype=np.float64),
                          theta=np.ascontiguousarray(self.theta, dtype=np.float64))
        arrays.update(
            alpha=np.asarray(self.alpha, dtype=np.float64),
            beta=np.float64(self.beta),
            vocab=np.array(self.vocab, dtype=np.str_),
            doc_ids=np.asarray(self.doc_ids, dtype=np.str_),  # a text array as it is (no copy)
            loglik_iterations=np.asarray(self.loglik_iterations, dtype=np.int64),
            loglik_per_token=np.asarray(self.loglik_per_token, dtype=np.float64),
            removed_words=word_list_member(self.removed_words),
        )
        write_npz_members(path, arrays, "model")

    @staticmethod
    def read_params(path: str) -> dict:
        """The ``params`` of the model at ``path``, without reading its arrays (:func:`read_params`)."""
        return read_params(path, "model")

    @classmethod
    def load(cls, path: str, documents: bool = True) -> "Model":
        """The model at ``path``; with ``documents=False`` without its training documents (theta
        (0, K), no doc_ids; never read): the topics alone, as ``infer`` and ``perplexity`` need,
        without the D x K proportions of a large training corpus. A file of counts (format 3,
        collapsed Gibbs) gives a model that holds them (:attr:`counts`), checked here; its phi
        and theta are computed from them when first read."""
        path = checks.path("path", path, "the path of a model file")
        a, params = read_file(path, "model", READABLE_VERSIONS, leave_out=() if documents else DOCUMENTS)
        params = checked_params(path, params)
        counts = phi = theta = None
        if any(name in a for name in WORD_MEMBERS):
            dense = [name for name in ("phi", "theta") if name in a]
            if dense:
                raise InputError(path, None, f"expected either the counts (topic_word_*, doc_topic_*) or 'phi' "
                                             f"and 'theta', found both ({', '.join(dense)})")
            K = array(path, a, "alpha", "f", (None,)).size
            V = array(path, a, "vocab", "U", (None,)).size
            if K == 0 or V == 0:
                raise InputError(path, None, f"expected at least one topic ('alpha') and one word ('vocab'), found "
                                             f"{K} and {V}")
            D = array(path, a, "doc_ids", "U", (None,)).size if documents else None
            beta = _prior(path, a, "beta")
            counts = TopicCounts.read(path, a, K, V, D, _topic_word_prior(path, a, params, V, K), beta)
            check_fits(f"{path}: the topics of a model of {K} topics and {V} words", 8.0 * K * V)
        else:
            phi = array(path, a, "phi", "f", (None, None), minimum=0)
            K, V = phi.shape
            if K == 0 or V == 0:
                raise InputError(path, None, f"expected 'phi' with at least one topic and one word, found shape "
                                             f"{phi.shape}")
            theta = array(path, a, "theta", "f", (None, K), minimum=0) if documents else np.zeros((0, K))
            _rows_sum_to_one(path, "phi", phi)
            _rows_sum_to_one(path, "theta", theta)
            phi, theta = np.asarray(phi, dtype=np.float64), np.asarray(theta, dtype=np.float64)
            D = theta.shape[0]
        iterations = array(path, a, "loglik_iterations", "iu", (None,), minimum=0)
        return cls(
            phi=phi,
            theta=theta,
            alpha=np.asarray(array(path, a, "alpha", "f", (K,), positive=True), dtype=np.float64),
            beta=_prior(path, a, "beta"),
            vocab=array(path, a, "vocab", "U", (V,)).tolist(),  # (str each, made in one call)
            doc_ids=array(path, a, "doc_ids", "U", (D,)).tolist() if documents else [],
            loglik_iterations=iterations,
            loglik_per_token=array(path, a, "loglik_per_token", "f", iterations.shape),
            params=_checked_tokenizer(path, _checked_names(path, params, K)),
            removed_words=read_word_list(path, a, "removed_words") if "removed_words" in a else [],
            counts=counts,
        )

    def top_words(self, n: int) -> list[list[tuple[str, float]]]:
        """The ``n`` most probable words of each topic, with their probabilities.

        Ties are broken by word id so the listing is deterministic.
        """
        n = min(n, self.phi.shape[1])
        out = []
        for row in self.phi:
            order = np.lexsort((np.arange(row.size), -row))[:n]
            out.append([(self.vocab[w], float(row[w])) for w in order])
        return out


@dataclass
class Checkpoint:
    """Everything needed to continue a training run exactly where it stopped, for every method.

    ``params`` the run's settings and provenance (``params["method"]`` names the method, the
    corpus fingerprint is checked on resume); ``iteration`` sweeps (EM iterations) done;
    ``rng_states`` the states of the run's random streams after them (PCG64, in the order the
    method spawned them); ``loglik_iterations`` and ``loglik_per_token`` the trace so far;
    ``alpha`` (K,) and ``beta`` the current priors (learned or estimated ones included);
    ``arrays`` the method's own state (collapsed Gibbs: ``z``; variational EM: ``topics``,
    ``gamma``; uncollapsed Gibbs: ``theta``, ``phi_wk``, ``theta_sum``, ``phi_sum``);
    ``state`` the rest as JSON (``early_stopping``: the early-stopping history, or None);
    ``vocab`` the vocabulary of the corpus as trained (None in format-1 files), so that a
    resumed run sees the corpus exactly as the run did (a warm start grows the vocabulary).
    """

    params: dict
    iteration: int
    rng_states: list
    loglik_iterations: np.ndarray
    loglik_per_token: np.ndarray
    alpha: np.ndarray
    beta: float
    arrays: dict[str, np.ndarray]
    state: dict = field(default_factory=dict)
    vocab: list[str] | None = None

    COMMON = ("iteration", "rng_states", "loglik_iterations", "loglik_per_token", "alpha", "beta", "state")

    @property
    def method(self) -> str:
        return str(self.params.get("method"))

    def __repr__(self) -> str:
        return (f"<Checkpoint: {self.method}, {self.alpha.size:,} topics, {self.iteration:,} of "
                f"{self.params.get('iterations')} {steps(self.method)}>")

    def save(self, path: str) -> None:
        path = checks.path("path", path, "the path of the checkpoint file to write")
        arrays = file_header("checkpoint", self.params)
        arrays.update(
            iteration=np.int64(self.iteration),
            rng_states=np.str_(json.dumps(self.rng_states, sort_keys=True)),
            loglik_iterations=np.asarray(self.loglik_iterations, dtype=np.int64),
            loglik_per_token=np.asarray(self.loglik_per_token, dtype=np.float64),
            alpha=np.asarray(self.alpha, dtype=np.float64),
            beta=np.float64(self.beta),
            state=np.str_(json.dumps(self.state, sort_keys=True)),
        )
        if self.vocab is not None:
            arrays["vocab"] = np.array(self.vocab, dtype=np.str_)
        arrays.update(self.arrays)
        write_npz(path, arrays, "checkpoint")

    @staticmethod
    def read_params(path: str) -> dict:
        """The ``params`` of the checkpoint at ``path`` (a format-1 file's in today's names, as
        :meth:`load` reads them), without reading its arrays (:func:`read_params`)."""
        return read_params(path, "checkpoint")

    @classmethod
    def load(cls, path: str) -> "Checkpoint":
        """Read a checkpoint of any method, of this format version or the previous one. The
        common arrays are checked here; the method's own arrays by the method, which knows
        their shapes."""
        path = checks.path("path", path, "the path of a checkpoint file")
        a, params = read_file(path, "checkpoint", READABLE_VERSIONS)
        if scalar(path, a, "format_version", "iu") == 1:
            a, params = _checkpoint_from_v1(path, a, params)
        missing = [name for name in cls.COMMON if name not in a]
        if missing:
            raise InputError(path, None, f"expected arrays {', '.join(missing)} in this checkpoint, found none")
        alpha = array(path, a, "alpha", "f", (None,), positive=True)
        if alpha.size == 0 or params.get("n_topics") != alpha.size:
            raise InputError(path, None, f"expected 'alpha' of one value per topic (n_topics "
                                         f"{params.get('n_topics')!r}), found {alpha.size}")
        iteration = scalar(path, a, "iteration", "iu")
        asked = params.get("iterations")
        if not (isinstance(asked, int) and 0 <= iteration <= asked):
            raise InputError(path, None, f"expected 'iteration' between 0 and the {asked!r} iterations of the "
                                         f"run, found {iteration}")
        iterations = array(path, a, "loglik_iterations", "iu", (None,), minimum=0)
        vocab = [str(w) for w in array(path, a, "vocab", "U", (None,))] if "vocab" in a else None
        header = ("format_version", "kind", "params", "vocab") + cls.COMMON
        return cls(
            params=_checked_names(path, checked_params(path, params), alpha.size),
            iteration=iteration,
            rng_states=json_object(path, a, "rng_states", list),
            loglik_iterations=iterations,
            loglik_per_token=array(path, a, "loglik_per_token", "f", iterations.shape),
            alpha=np.ascontiguousarray(alpha, dtype=np.float64),
            beta=_prior(path, a, "beta"),
            arrays={name: value for name, value in a.items() if name not in header},
            state=json_object(path, a, "state", dict),
            vocab=vocab,
        )


def check_name(name, setting: str = "name") -> str | None:
    """``name`` stripped, or None for an empty one; :class:`SettingError` when it cannot be a
    topic's name: one line of at most :data:`MAX_NAME_LENGTH` characters without tabs, control,
    format (bidi) or line-separating characters (it goes into tables, TSV, HTML and terminals).
    ``ldacli name``, seed-word files and every file loaded check names with it."""
    if not isinstance(name, str):
        raise SettingError(setting, f"{setting} must be a string, found {name!r}")
    name = name.strip()
    if any(unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") for c in name):
        raise SettingError(setting, f"{setting} must be one line without tabs or control characters, found {name!r}")
    if len(name) > MAX_NAME_LENGTH:
        raise SettingError(setting, f"{setting} must be at most {MAX_NAME_LENGTH} characters, found {len(name)}")
    return name or None


def check_unique(names: list[str | None], setting: str = "name") -> None:
    """Refuse two topics of one name."""
    seen: dict[str, int] = {}
    for k, n in enumerate(names):
        if n is None:
            continue
        if n in seen:
            raise SettingError(setting, f"{setting} {n!r} names topics {seen[n]} and {k}: a name is one topic's")
        seen[n] = k


def _checked_names(path: str, params: dict, n_topics: int) -> dict:
    """``params`` after checking its ``topic_names``: absent, or K entries, each None or a name
    :func:`check_name` accepts, no two alike (as ``ldacli name`` sets them); and the ids of its
    seeded topics (``seeded``, its shape checked already), each one of the K."""
    seeded = params.get("seeded")
    beyond = [t["topic"] for t in seeded["topics"] if t["topic"] >= n_topics] if seeded else []
    if beyond:
        raise InputError(path, None, f"expected the seeded topics in params to be topics 0 to {n_topics - 1}, found "
                                     f"topic {beyond[0]}")
    names = params.get("topic_names")
    listed = isinstance(names, list) and len(names) == n_topics and all(n is None or isinstance(n, str) for n in names)
    mapped = isinstance(names, dict) and all(
        isinstance(k, str) and k.isdigit() and int(k) < n_topics and (n is None or isinstance(n, str))
        for k, n in names.items())
    if names is not None and not (listed or mapped):
        raise InputError(path, None, f"expected 'topic_names' in params as a list of {n_topics} names (strings or "
                                     f"null) or a mapping of topic ids to names, found {names!r:.80}")
    if names is None:
        return params
    by_topic = names if listed else [None] * n_topics
    if mapped:
        for key, name in names.items():
            by_topic[int(key)] = name
    try:
        checked = [None if n is None else check_name(n, f"the name of topic {k}") for k, n in enumerate(by_topic)]
        check_unique(checked, "topic name")
    except SettingError as exc:
        raise InputError(path, None, f"expected topic names as ldacli name sets them: {exc}") from None
    return params


# What the params a file records hold where commands read them (info, report, diff, a warm start):
# a type, a tuple of alternatives, [item] for a list of items, {key: ...} for an object whose keys
# are optional unless they end in !. A received file may hold anything there.
_COUNT = "count"
_LINK = {"path": str, "sha256": str, "method": (str, None), "n_topics": _COUNT, "corpus_fingerprint": (str, None)}
PARAMS_SHAPES = {
    **{k: str for k in ("method", "ldacli_version", "corpus_source", "corpus_format", "corpus_fingerprint", "trace",
                        "stop_reason")},
    **{k: _COUNT for k in ("n_docs", "n_tokens", "n_words", "n_topics", "iterations", "iterations_done")},
    "warm_start": (None, str, {**_LINK, "new_words": _COUNT, "gone_words": _COUNT, "fold_in_sweeps": _COUNT,
                               "descent": [(_COUNT, None)], "added": [_COUNT], "removed": [_COUNT]}),
    "lineage": [_LINK],
    "seeded": (None, {"topics!": [{"topic!": _COUNT, "name!": str, "words!": [str], "unknown!": [str]}], "source": str,
                      "strength": (float, None), "found": _COUNT, "given": _COUNT}),
    "id_stability": (None, {"kept": _COUNT, "topics": _COUNT, "median_distance": float, "max_distance": float}),
    "snapshot_sweeps": [_COUNT],
    "tokenizer_file": dict,
    "aligned_to": (None, {"path": str, "sha256": str, "order": [_COUNT], "distances": [float]}),
}


def _fits(value, shape) -> bool:
    """Whether ``value`` (parsed JSON) has the ``shape`` of :data:`PARAMS_SHAPES`."""
    if isinstance(shape, tuple):
        return any(_fits(value, s) for s in shape)
    if shape is None:
        return value is None
    if shape == _COUNT:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if shape is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
    if isinstance(shape, list):
        return isinstance(value, list) and all(_fits(v, shape[0]) for v in value)
    if isinstance(shape, dict):  # a key ending in ! must be there
        return (isinstance(value, dict) and all(k[:-1] in value for k in shape if k.endswith("!"))
                and all(_fits(v, shape.get(k, shape.get(k + "!"))) for k, v in value.items()
                        if k in shape or k + "!" in shape))
    return isinstance(value, shape)


def read_params(path: str, kind: str) -> dict:
    """The ``params`` of the ``kind`` file (``"model"`` or ``"checkpoint"``) at ``path``, checked,
    without reading its arrays; a format-1 checkpoint's in today's names."""
    path = checks.path("path", path, f"the path of a {kind} file")
    a, params = read_file(path, kind, READABLE_VERSIONS, members=("kind", "format_version", "params"))
    if kind == "checkpoint" and scalar(path, a, "format_version", "iu") == 1:
        params = _params_from_v1(params)
    return checked_params(path, params)


def checked_params(path: str, params: dict) -> dict:
    """``params`` after checking that what commands read of them has the shape ldacli writes
    (:data:`PARAMS_SHAPES`): an :class:`InputError` naming the file and the key, never a
    traceback where a number or a list was expected."""
    for key, shape in PARAMS_SHAPES.items():
        if key in params and not _fits(params[key], shape):
            raise InputError(path, None, f"expected params '{key}' as ldacli records it, found "
                                         f"{json.dumps(params[key])[:80]}")
    return params


def _checked_tokenizer(path: str, params: dict) -> dict:
    """``params`` after checking the tokenizer settings they record (a model's token pattern is
    run on the text that ``infer`` reads: it must be one the tokenizer accepts)."""
    try:
        Tokenizer.of(params)
        if isinstance(params.get("tokenizer_file"), dict):
            Tokenizer.of(params["tokenizer_file"])
    except SettingError as exc:
        raise InputError(path, None, f"expected the tokenizer settings a model records in params, found {exc}") \
            from None
    return params


def word_list_member(words: list[str]) -> np.ndarray:
    """A list of words as an ``.npz`` member: its JSON, UTF-8, as bytes (uint8), which unlike a
    text array does not take 4 bytes times the longest word for every word."""
    return np.frombuffer(json.dumps(sorted(words), ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def read_word_list(path: str, arrays: dict, name: str) -> list[str]:
    """The list of words of the member ``name`` (:func:`word_list_member`), checked."""
    raw = arrays[name]
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise InputError(path, None, f"expected '{name}' as bytes (uint8) of one dimension, found {raw.dtype} of "
                                     f"shape {raw.shape}")
    try:
        words = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError:
        raise InputError(path, None, f"expected a JSON list of words in '{name}', found values nested too "
                                     f"deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, None, f"expected a JSON list of words in '{name}', found invalid text ({exc})") from None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise InputError(path, None, f"expected a JSON list of words (strings) in '{name}', found "
                                     f"{type(words).__name__}")
    return words


def _topic_word_prior(path: str, arrays: dict, params: dict, n_words: int, n_topics: int) -> TopicWordPrior | None:
    """The topic-word prior a model's phi is computed with (None without one), checked: its
    arrays (an update's: the evidence it carries), or the seeded topics' its ``params`` record."""
    try:
        stored = TopicWordPrior.from_arrays(arrays, n_words, n_topics, "the prior it carries")
        recorded = params.get("topic_word_prior")  # (checked even beside the arrays: an update reads it)
        given = None if recorded is None else TopicWordPrior.from_params(recorded, n_words, n_topics,
                                                                          "params 'topic_word_prior'")
        return stored if stored is not None else given
    except LdacliError as exc:
        raise InputError(path, None, str(exc)) from None


def _rows_sum_to_one(path: str, name: str, x: np.ndarray) -> None:
    """Each row of ``x`` a probability distribution (within rounding)."""
    if x.size and not np.allclose(x.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        raise InputError(path, None, f"expected each row of '{name}' to sum to 1, found sums from "
                                     f"{x.sum(axis=1).min():.6g} to {x.sum(axis=1).max():.6g}")


def _prior(path: str, arrays: dict, name: str) -> float:
    value = scalar(path, arrays, name, "f")
    if not (np.isfinite(value) and value >= 0):
        raise InputError(path, None, f"expected '{name}' as a finite number >= 0, found {value!r}")
    return float(value)


def _checkpoint_from_v1(path: str, a: dict, params: dict) -> tuple[dict, dict]:
    """The arrays and params of a format-1 checkpoint (ldacli before the common format) in
    today's names, so it resumes exactly as it would have."""
    a = dict(a)
    params = _params_from_v1(params)
    method = params["method"]
    if method == "cgs":
        if "extra" not in a or "rng_state" not in a:
            raise InputError(path, None, "expected arrays rng_state, extra in this checkpoint, found none")
        extra = json_object(path, a, "extra", dict)
        a["rng_states"] = a.pop("rng_state")
        try:
            a["alpha"] = np.asarray(extra["alpha"], dtype=np.float64)
            a["beta"] = np.float64(extra["beta"])
        except (KeyError, TypeError, ValueError):
            raise InputError(path, None, "expected the priors in 'extra', found none") from None
        a["state"] = np.str_(json.dumps({"early_stopping": extra.get("early_stopping")}))
        del a["extra"]
    elif method == "vem":
        if "eta" in a:
            a["beta"] = a.pop("eta")
        a["rng_states"] = np.str_("[]")
        a["state"] = np.str_(json.dumps({"early_stopping": None}))
    elif method == "gibbs":
        try:
            a["alpha"] = np.full(int(params["n_topics"]), float(params["alpha"]))
            a["beta"] = np.float64(params["beta"])
        except (KeyError, TypeError, ValueError):
            raise InputError(path, None, "expected n_topics, alpha and beta in 'params', found none") from None
        a["state"] = np.str_(json.dumps({"early_stopping": None}))
    return a, params


def _params_from_v1(params: dict) -> dict:
    """The params of a format-1 checkpoint in today's names: cgs when it names no method, and
    variational EM's trace at every iteration."""
    params = {"method": "cgs", **params}
    if params["method"] == "vem":
        params.setdefault("loglik_every", 1)
    return params


def row_blocks(a: np.ndarray, step: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, view)``: the rows of ``a``, ``step`` at a time."""
    for first in range(0, a.shape[0], step):
        yield first, a[first:first + step]


@dataclass
class Inference:
    """Topic proportions inferred for new documents: ``theta`` (D, K) and ``doc_ids``."""

    theta: np.ndarray
    doc_ids: list[str]
    params: dict

    @property
    def n_topics(self) -> int:
        return self.theta.shape[1]

    def theta_blocks(self, rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """``(first document, block)``: views of theta's rows, ``rows`` at a time (as
        :meth:`Model.theta_blocks`, which exports read either from)."""
        yield from row_blocks(self.theta, max(1, rows or THETA_BLOCK_BYTES // (8 * self.n_topics)))

    def __repr__(self) -> str:
        return (f"<Inference: {self.theta.shape[0]:,} documents x {self.theta.shape[1]:,} topics"
                + (f", seed {self.params['seed']}" if "seed" in self.params else "") + ">")

    def to_pandas(self):
        """Theta as a pandas DataFrame (see :meth:`Model.to_pandas`)."""
        return theta_frame(self.theta, self.doc_ids)

    @classmethod
    def load(cls, path: str) -> "Inference":
        """Read an inference ``.npz`` written by :meth:`save`."""
        path = checks.path("path", path, "the path of an inference file")
        a, params = read_file(path, "inference", READABLE_VERSIONS)
        params = checked_params(path, params)
        theta = array(path, a, "theta", "f", (None, None), minimum=0)
        _rows_sum_to_one(path, "theta", theta)
        doc_ids = array(path, a, "doc_ids", "U", (theta.shape[0],))
        return cls(np.asarray(theta, dtype=np.float64), doc_ids.tolist(), params)

    def save(self, path: str) -> None:
        """Write the ``.npz`` (theta, doc_ids, params)."""
        path = checks.path("path", path, "the path of the inference file to write")
        arrays = file_header("inference", self.params)
        arrays.update(theta=np.ascontiguousarray(self.theta, dtype=np.float64),
                      doc_ids=np.array(self.doc_ids, dtype=np.str_))
        write_npz(path, arrays, "inference")


PANDAS_EXTRA = "pip install 'ldacli[pandas]'"


def pandas_module():
    """pandas, or an error naming the extra that installs it."""
    try:
        import pandas
    except ImportError:
        raise LdacliError(f"to_pandas needs pandas, which the pandas extra installs: {PANDAS_EXTRA}") from None
    return pandas


def theta_frame(theta: np.ndarray, doc_ids: list[str]):
    """Topic proportions (D, K) as a DataFrame indexed by ``doc_id``, columns ``topic_k``."""
    pd = pandas_module()
    return pd.DataFrame(theta, index=pd.Index(doc_ids, name="doc_id"),
                        columns=[f"topic_{k}" for k in range(theta.shape[1])])
