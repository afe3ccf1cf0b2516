"""The training driver: everything around the steps, the same for every method.

:func:`train` runs in named phases. :func:`settle` makes the run's :class:`Plan` once: its
settings from their declarations (:data:`SETTINGS`, common to every method, and each method's own
``SETTINGS``; :mod:`ldacli.settings`), checked, with their defaults, or read from the checkpoint a
run resumes, then settled by what they lead to (a warm start's parent, an update's model, the
corpus, the seed words), and frozen. :func:`prepare` records provenance, checks the memory and
makes the method's state (resumed from a checkpoint, the trace restored); :func:`loop` runs the
method's steps with a progress bar and a log, takes the trace every ``loglik_every`` steps, stops
early on held-out perplexity, on a time limit or when the method converges, and writes
checkpoints on a schedule and when SIGINT/SIGTERM arrives (:class:`Run`'s methods);
:func:`finish` assembles the model and :func:`deliver` aligns it to another model's topic ids
when asked and writes it. A method (:class:`~ldacli.methods.base.Method`) supplies only its
settings, its state and one step. Warm starts, lineage and id stability are
:mod:`ldacli.methods.warm_start`'s; seeded topics and their prior
:mod:`ldacli.methods.seed_words`'s; updates :mod:`ldacli.methods.update`'s.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from tqdm import tqdm

from ldacli import random_streams, settings
from ldacli.version import __version__
from ldacli.api_input import as_corpus, is_path, reading_of, resumed_reading
from ldacli.corpora.corpus import Corpus
from ldacli.errors import InputError, LdacliError, OutputError, RunStopped, SettingError, TrainingInterrupted
from ldacli.files.fileio import file_sha256
from ldacli.diff import align
from ldacli.scoring.fixed_topics import HeldOutEvaluator, holdout_split
from ldacli.files.locking import locked
from ldacli.memory import SMALLER, check_fits, memory_room
from ldacli.methods import update as updating
from ldacli.methods import warm_start
from ldacli.methods.base import Method
from ldacli.cluster.connection import SCHEDULER, ClusterLost, cluster, distributed_module
from ldacli.methods.registry import DEFAULT_METHOD, METHODS
from ldacli.model import Checkpoint, Model
from ldacli.files.npz import mapped
from ldacli.parallel import THREADS, check_threads
from ldacli.random_streams import SEED
from ldacli.settings import CONTINUED, FIXED, FREE, Choice, Integer, IntegerList, Real, Setting, Size, Text
from ldacli.methods.seed_words import seeded_prior, seeded_topics, warn_lost_seeds
from ldacli.signatures import takes_settings
from ldacli.corpora.formats.read import INPUT_FORMAT, READING, as_written
from ldacli.topic_names import with_names
from ldacli.topic_word_prior import TopicWordPrior
from ldacli.corpora.formats.shards import ShardFolder, is_shard_folder, open_shard_folder
from ldacli.methods.stopping import EarlyStopping

log = logging.getLogger("ldacli")

DEFAULT_TOPICS = 20
DEFAULT_ALPHA = 0.1
DEFAULT_BETA = 0.01
# Priors above this are refused: the log-gamma differences of the likelihood lose all precision
# in double arithmetic well before 1e15, and no prior that large changes a model anyway.
MAX_PRIOR = 1e6

# Why a resumed run has no model to compare with (train --skip-unchanged).
NOTHING_TO_COMPARE = "a resumed run continues where it stopped: there is nothing to compare"

# Why a run stopped (params["stopped"]).
STOPPED = ("iterations", "converged", "early stopping", "time limit")


def _of_method(attribute: str):
    """A default that is the run's method's ``attribute``."""
    return lambda values: getattr(METHODS[values["method"]], attribute)


# The settings of a training run that every method has (each method adds its own ``SETTINGS``).
SETTINGS = (
    Setting("method", Choice(tuple(METHODS)), DEFAULT_METHOD,
            "cgs: collapsed Gibbs sampling; vem: variational EM (Blei, Ng & Jordan 2003); gibbs: uncollapsed "
            "(blocked) Gibbs sampling. An option of another method is refused.", FIXED),
    Setting("n_topics", Integer(1), DEFAULT_TOPICS, "Number of topics.", FIXED, flags=("-k", "--topics")),
    Setting("iterations", Integer(1), _of_method("DEFAULT_ITERATIONS"),
            "Sweeps in all (vem: at most this many EM iterations), those before a --resume included.",
            CONTINUED, default_help=f"{METHODS['cgs'].DEFAULT_ITERATIONS}; vem: {METHODS['vem'].DEFAULT_ITERATIONS}"),
    Setting("alpha", Real(0, MAX_PRIOR, min_open=True), DEFAULT_ALPHA,
            "Document-topic prior for EACH topic (not MALLET's sum over topics; the sum is K * alpha); the "
            "starting value where it is learned or estimated.", FIXED),
    Setting("beta", Real(0, MAX_PRIOR, min_open=True), DEFAULT_BETA,
            "Topic-word prior for each word (tomotopy's eta); the starting value where it is learned or "
            "estimated.", FIXED),
    SEED,
    Setting("loglik_every", Integer(1), _of_method("DEFAULT_LOGLIK_EVERY"),
            "Sweeps between log-likelihood evaluations (the trace, progress, early stopping; vem records its "
            "evidence lower bound every iteration).", CONTINUED,
            default_help=f"{METHODS['cgs'].DEFAULT_LOGLIK_EVERY}; vem: 1"),
    Setting("holdout", Real(0, 1, min_open=True, max_open=True), None,
            "Hold out this fraction of the documents and stop when their document-completion perplexity under "
            "the current topics, computed every --loglik-every sweeps, has not improved --patience times in a "
            "row; the model is fitted to the rest and records why it stopped.", FIXED),
    Setting("patience", Integer(1), None, "Evaluations without improvement before stopping (with --holdout).",
            CONTINUED),
    Setting("max_seconds", Real(0, min_open=True), None,
            "Stop after the sweep during which this many seconds have passed (the model records the sweeps done "
            "and why it stopped; the result then depends on the machine's speed; gibbs stopped inside its "
            "burn-in keeps its last sample).", CONTINUED),
    Setting("checkpoint", Text(path=True), None,
            "Checkpoint file (.npz): written every --checkpoint-every sweeps, at the end, and on Ctrl-C/SIGTERM.",
            CONTINUED, result=False),
    Setting("checkpoint_every", Integer(0), 0,
            "Sweeps between checkpoints (0: only at the end and on a signal).", CONTINUED, result=False),
    Setting("warm_start", Text(path=True), None,
            "Start from this model (retraining on a grown corpus): its vocabulary order is kept and new words "
            "appended, each token's first topic is drawn from its topics, its priors are the starting values, "
            "and topic k descends from its topic k.", FIXED),
    Setting("add_topics", Integer(1), None,
            "With --warm-start: add this many new topics (ids K, K+1, ... after the warm start's K) for themes "
            "it lacks; its topics keep their ids and names.", FIXED),
    Setting("remove_topics", IntegerList(0), None,
            "With --warm-start: drop these of its topics (ids, comma-separated: 3,7), as dead topics are purged; "
            "the others keep their order and names, renumbered without gaps (diff lists what was removed).",
            FIXED),
    *updating.SETTINGS,
    Setting("align_to", Text(path=True), None,
            "After training, renumber the topics onto this model's ids (Hungarian matching on Jensen-Shannon "
            "distance); the permutation is recorded.", CONTINUED),
    THREADS,
    Setting("memory_limit", Size(), None,
            "Memory this run may use. A shard folder (convert --shards) whose run in memory would need more "
            "trains from disk: its tokens and their topics stay in block files and stream through each sweep, "
            "the same bytes as in memory; any other corpus is refused in one line.", FREE,
            default_help="the memory available: MemAvailable, under cgroup and ulimit -v limits"),
    Setting("scratch", Text(path=True), None,
            "Where a run from disk keeps its block files (a private folder made inside this one, removed when "
            "the run ends; about 10 bytes a token).", FREE, default_help="the temporary folder ($TMPDIR)"),
    SCHEDULER,
    Setting("wait", Real(0), None,
            "When another run holds the lock on the model or the checkpoint, wait up to this many seconds for it "
            "instead of stopping at once (exit code 75).", FREE),
    Setting("resume", Text(path=True), None,
            "Continue the run this checkpoint (any method) was written by: the settings it was asked for come "
            "from it; the result equals an uninterrupted run.", FREE),
)


def method_settings() -> tuple[Setting, ...]:
    """Every method's own settings (a name that several methods share is declared alike)."""
    return tuple(settings.by_name(s for m in METHODS.values() for s in m.SETTINGS).values())


def settings_of(method: type[Method]) -> tuple[Setting, ...]:
    """The settings of a run of ``method``."""
    return SETTINGS + method.SETTINGS


def _elsewhere(method: type[Method]) -> dict[str, str]:
    """Why each setting of the other methods does not apply to ``method``."""
    own = {s.name for s in method.SETTINGS}
    out = {}
    for s in method_settings():
        if s.name not in own:
            owners = [m.name for m in METHODS.values() if any(o.name == s.name for o in m.SETTINGS)]
            out[s.name] = f"applies to method {' and '.join(owners)} only, found method {method.name}"
    return out


@contextmanager
def stop_requests(shared: dict | None = None):
    """Turn SIGINT/SIGTERM into a flag checked between steps (main thread only); a second
    signal stops at once. ``shared``: the flag of the main thread's requests, for a run in
    another thread (select-k's pairs), which then stops as a signalled run does."""
    if shared is not None:
        yield shared
        return
    flag: dict = {"signal": None}
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag["signal"] is not None:
            raise KeyboardInterrupt
        flag["signal"] = signal.Signals(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _corpus_to_train(corpus: Corpus, parent: Model | None, parent_path: str | None, ckpt: Checkpoint | None,
                     resume: str | None, notes: bool = True) -> Corpus:
    """The corpus as the run trains on it: without the words that never occur; over a warm
    start's vocabulary order, or the vocabulary a resumed run trained on."""
    if corpus.n_tokens == 0:
        raise LdacliError(f"{corpus.name}: expected a corpus with at least one token, found none")
    corpus, unused = corpus.without_unused_words()
    if unused and notes:
        log.info("%s: the model leaves out the %d words of the vocabulary that never occur", corpus.source, unused)
    if parent is not None:
        return warm_start.grown_corpus(corpus, parent, parent_path, notes)
    if ckpt is not None and ckpt.vocab is not None:
        return _corpus_as_trained(corpus, ckpt.vocab, resume)
    return corpus


def _resolved_in(cls: type[Method], values: dict, corpus: Corpus, source: str) -> None:
    """Refuse a checkpoint (``source``) whose settings leave None what a run resolves before it
    starts (``cls.resolve``: the sampler, the shards): a run records the values it resolved, and
    a file from elsewhere may hold anything."""
    nones = [name for name, value in values.items() if value is None]
    if not nones:
        return
    try:
        settled = cls.resolve(values, {}, corpus)
    except LdacliError:
        return  # what the method refuses, it refuses again where it is used
    missing = [name for name in nones if settled.get(name) is not None]
    if missing:
        raise InputError(source, None, f"expected the settings a checkpoint records in 'params', found {missing[0]} "
                                       f"None (a run records the value it chose)")


def _as_recorded(params: dict) -> dict:
    """A model's or checkpoint's params as settings: the warm start and the model updated by their
    paths (their records, :func:`~ldacli.methods.warm_start.lineage` and
    :func:`~ldacli.methods.update.record`, say more)."""
    return {**params, **{name: v.get("path") if isinstance(v, dict) else v
                         for name, v in ((n, params.get(n)) for n in ("warm_start", "update"))}}


def checked_record(params: dict, source: str, kind: str) -> dict:
    """``params``, which the ``kind`` of file (model, checkpoint) read from ``source`` records,
    after checking the value of every setting of a run of its method
    (:func:`ldacli.settings.check_recorded`)."""
    method = METHODS.get(params.get("method", DEFAULT_METHOD))
    if method is not None:
        settings.check_recorded(settings_of(method), _as_recorded(params), source, kind)
    return params


@dataclass(frozen=True)
class Plan:
    """A run settled once (:func:`settle`): its method, its settings and what follows from them,
    read-only from here on.

    ``values`` holds every setting of a run of the method (:func:`settings_of`) and nothing else,
    resolved (given, declared defaults, a checkpoint's, a warm start's or an update's parent's,
    chosen for the corpus), as a read-only mapping. What the settings lead to is a field of its
    own: ``corpus`` (as the run trains on it), ``checkpoint`` (the one it resumes), ``parent`` (a
    warm start's model) and ``descent`` (which of its topics each topic continues), ``updated``
    (the model an update continues) and ``freed`` (the topics it frees for the night, ``(freed,
    into)`` pairs), ``seeded`` (the seeded topics as the model records them) and
    ``topic_word_prior`` (the prior seeds or an update's evidence give, which the method samples
    under; None: the symmetric beta). ``held_notes``: what settling logged, held until the plan
    runs (:func:`plan_for`), so that a plan made to decide something says nothing.
    """

    cls: type[Method]
    values: Mapping[str, Any]
    corpus: Corpus
    checkpoint: Checkpoint | None = None
    parent: Model | None = None
    descent: list[int | None] | None = None
    updated: Model | None = None
    freed: tuple[tuple[int, int], ...] = ()
    seeded: dict | None = None
    topic_word_prior: TopicWordPrior | None = None
    held_notes: tuple[logging.LogRecord, ...] = ()

    def __post_init__(self):
        declared = [s.name for s in settings_of(self.cls)]
        if set(self.values) != set(declared):
            raise ValueError(f"a plan holds the settings of method {self.cls.name}: found "
                             f"{sorted(set(self.values) - set(declared))} undeclared and "
                             f"{sorted(set(declared) - set(self.values))} missing")
        object.__setattr__(self, "values", MappingProxyType({name: self.values[name] for name in declared}))

    @property
    def options(self) -> dict:
        """What the method's constructor and :meth:`~ldacli.methods.base.Method.estimate_bytes`
        take besides the settings: the topic-word prior, when there is one."""
        return {"prior": self.topic_word_prior} if self.topic_word_prior is not None else {}

    def estimate_bytes(self, corpus: Corpus, threads: int, streamed: bool = False, **more) -> float:
        """The method's estimate of the run's memory on ``corpus`` (the corpus or its fitted part)."""
        return self.cls.estimate_bytes(corpus, self.values, threads, streamed, **more, **self.options)


def settle(corpus: Corpus, given: dict, *, notes: bool = True, updated: Model | None = None,
           checkpoint: Checkpoint | None = None) -> Plan:
    """The plan of a run on ``corpus`` from the settings ``given`` (None: not given): a fresh
    run's checked, with their defaults; a resumed run's from its checkpoint (what it fixes may not
    change, what it continues may). ``updated``: the model an update continues, and
    ``checkpoint``: the one it resumes, when read already (:func:`updated_model`). Every setting
    is settled here, once: nothing writes to the plan's values after it."""
    resume = settings.by_name(SETTINGS)["resume"].check(given.get("resume"))
    ckpt = checkpoint if checkpoint is not None else Checkpoint.load(resume) if resume else None
    if ckpt is not None:
        cls, values = _resumed(given, ckpt.params, resume)
    else:
        cls = METHODS[SETTINGS[0].check(given.get("method")) or DEFAULT_METHOD]
        settings.check_names(settings_of(cls), given, others=_elsewhere(cls))
        values = settings.resolve(settings_of(cls), given)
    if isinstance(corpus, ShardFolder):  # only its index is read: what needs the documents cannot run
        for name in ("warm_start", "holdout"):
            if given.get(name) is not None or (ckpt is not None and ckpt.params.get(name) is not None):
                raise SettingError(name, f"{name} needs the documents in memory, and the shard folder {corpus.path} "
                                         f"is read from its index (by a cluster's workers, or from disk): read it "
                                         f"whole (read_corpus) or leave {name} out", ("scheduler",))
    if ckpt is not None:
        return _settle_resumed(cls, values, corpus, ckpt, resume, updated, notes)
    return _settle_fresh(cls, values, corpus, given, updated, notes)


def _settle_resumed(cls: type[Method], values: dict, corpus: Corpus, ckpt: Checkpoint, resume: str,
                    updated: Model | None, notes: bool) -> Plan:
    """The plan of a run resumed from ``ckpt`` (read from ``resume``), its settings ``values``."""
    if values["iterations"] < ckpt.iteration:
        raise SettingError("iterations", f"{resume}: the checkpoint is at {cls.unit} {ckpt.iteration}, past the "
                                         f"{values['iterations']} asked for")
    if values["update"] is not None:  # the night as the update's first run read it
        updated = updated or updated_model(ckpt.params, resume)
        trained = updating.night_over(corpus, updated, notes)
    else:
        trained = _corpus_to_train(corpus, None, None, ckpt, resume, notes)
    _resolved_in(cls, values, trained, resume)
    if ckpt.params.get("corpus_fingerprint") != trained.fingerprint():
        raise LdacliError(f"{resume}: expected a checkpoint of this corpus ({trained.source}), found one of "
                          f"another corpus ({ckpt.params.get('corpus_source')}, fingerprint differs)")
    _check_together(cls, values)
    return Plan(cls, values, trained, checkpoint=ckpt, updated=updated, seeded=ckpt.params.get("seeded"))


def _settle_fresh(cls: type[Method], values: dict, corpus: Corpus, given: dict, updated: Model | None,
                  notes: bool) -> Plan:
    """The plan of a fresh run, its settings ``values`` as declared: each step below returns the
    values of the settings it settles (a warm start's from its parent, the seed drawn, an
    update's from its model, the method's for the corpus, the seeds' strength)."""
    parent = descent = None
    if values["warm_start"] is not None:
        parent, descent, taken = warm_start.from_parent(values, given)
        values = {**values, **taken}
    values = {**values, "seed": random_streams.resolve(values["seed"])}
    freed, prior = (), None
    if values["update"] is not None:  # the night over the model's words, every one of them
        updated = updated or updating.parent_of(values["update"])
        trained = updating.night_over(corpus, updated, notes)
        taken, freed, prior = updating.settle(values, given, updated, trained)
        values = {**values, **taken}
    else:
        trained = _corpus_to_train(corpus, parent, values["warm_start"], None, None, notes)
    values = {**values, **cls.resolve(values, given, trained)}
    _check_together(cls, values)
    seeded, seeds = seeded_prior(values, trained, cls.name, kept=parent.params.get("seeded") if parent else None,
                                 descent=descent, notes=notes)
    if seeds is not None:  # (a warm start that keeps its seeds keeps their strength)
        values = {**values, "seed_strength": seeded["strength"]}
    return Plan(cls, values, trained, parent=parent, descent=descent, updated=updated, freed=freed, seeded=seeded,
                topic_word_prior=prior if prior is not None else seeds)


def updated_model(params: dict, source: str) -> Model:
    """The model the update that a checkpoint (``source``, its ``params``) continues was made
    from, when its file is still the one the run began from."""
    record = params.get("update") or {}
    path = record.get("path") if isinstance(record, dict) else None
    if not isinstance(path, str) or not os.path.isfile(path) or file_sha256(path) != record.get("sha256"):
        raise LdacliError(f"{source}: the checkpoint continues an update of {path}, which is gone or has changed "
                          f"since: the update cannot be continued; start it again")
    return updating.parent_of(path)


def _resumed(given: dict, params: dict, resume: str) -> tuple[type[Method], dict]:
    """The method and settings of a run resumed from the checkpoint ``resume`` whose params are
    ``params``, with the settings ``given``: what it fixes may not change, what it continues may
    (:func:`ldacli.settings.resume`). The params alone are enough (:meth:`Checkpoint.read_params`),
    so that :func:`check_given` refuses a conflict with the checkpoint before the corpus is read."""
    method = params.get("method")
    if method not in METHODS:
        raise LdacliError(f"{resume}: expected a checkpoint of method {', '.join(METHODS)}, found {method!r}")
    name = SETTINGS[0].check(given.get("method"))
    if name is not None and name != method:
        raise SettingError("method", f"{resume}: the checkpoint was written by method {method}, found method {name}")
    cls = METHODS[method]
    declared = settings_of(cls)
    settings.check_names(declared, given, others=_elsewhere(cls))
    # the checkpoint path it records is not followed: a received file names no path we write,
    # so a resumed run checkpoints to --checkpoint or else to the file it resumes
    recorded = {k: v for k, v in _as_recorded(params).items() if k != "checkpoint"}
    values = settings.resume(declared, given, recorded, resume,
                             fallback=lambda s, v: resume if s.name == "checkpoint" else s.default_for(v))
    return cls, values


def memory_needed(corpus: Corpus, n_topics: int | None = None, **given) -> float:
    """About how many bytes a run of :func:`train` on ``corpus`` with these settings takes (the
    estimate its memory check compares with the memory available)."""
    plan = settle(corpus, {**given, "n_topics": n_topics}, notes=False)
    return float(plan.estimate_bytes(plan.corpus, check_threads(plan.values["threads"])))


def check_given(given: dict) -> None:
    """Refuse what is wrong with the settings ``given`` (an unknown setting, one of another
    method, a value out of range, settings that contradict each other or one that cannot apply
    beside the others: :func:`_check_together`, the method's ``settle_given``) before the corpus
    is read, so that none is read for a run that cannot be. A resumed run's settings are checked
    with its checkpoint's, a warm start's with its parent's (what the file's params say, read
    alone: a different method or K, a fixed setting changed, topic ids it lacks); :func:`train`
    checks the rest, which needs the corpus or the files' arrays."""
    if given.get("resume") is not None and given.get("warm_start") is not None:
        raise SettingError("warm_start", "warm_start begins a run and resume continues one: give one of them",
                           ("resume",))
    if given.get("resume") is not None and given.get("update") is not None:
        raise SettingError("update", "update begins a run and resume continues one: give one of them", ("resume",))
    updating.check_given(given)
    resume = settings.by_name(SETTINGS)["resume"].check(given.get("resume"))
    if resume is not None:
        cls, values = _resumed(given, Checkpoint.read_params(resume), resume)
    else:
        cls = METHODS[SETTINGS[0].check(given.get("method")) or DEFAULT_METHOD]
        settings.check_names(settings_of(cls), given, others=_elsewhere(cls))
        values = settings.resolve(settings_of(cls), given)
        if values["warm_start"] is not None:
            parent = Model.read_params(values["warm_start"])
            if parent.get("n_topics") is not None:  # (checked to be a count where recorded)
                values = {**values, **warm_start.settle_from_parent(values, given, parent["n_topics"], parent)[1]}
    _check_together(cls, values)
    if values["checkpoint_every"] and values["checkpoint"] is None:  # (a resumed run checkpoints to its file)
        raise SettingError("checkpoint_every", "checkpoint_every says how often to write checkpoint: give checkpoint "
                                               "too", ("checkpoint",))
    if resume is None:
        cls.settle_given(values, given)
    if values["scheduler"] is not None:
        distributed_module()  # a cluster needs Dask (the dask extra): say so before anything is read
    if given.get("resume") is None and values.get("seed_words") is not None:  # a bad seed-words file too
        seeded_topics(values["seed_words"])


def _check_together(cls: type[Method], values: dict) -> None:
    """Refuse settings that contradict each other (a fresh run's as given, a resumed run's as
    the checkpoint and those given make them)."""
    if (values["holdout"] is None) != (values["patience"] is None):
        raise SettingError("holdout" if values["holdout"] is None else "patience",
                           "holdout and patience go together: give both to stop early, or neither",
                           ("holdout", "patience"))
    for name in ("add_topics", "remove_topics"):
        if values[name] is not None and values["warm_start"] is None:
            raise SettingError(name, f"{name} changes the topics of a warm start: give warm_start too", ("warm_start",))
    if values["resume"] is None and values.get("seed_strength") is not None and values.get("seed_words") is None:
        raise SettingError("seed_strength", "seed_strength is the prior of seed words: give seed_words too",
                           ("seed_words",))
    if values["scheduler"] is not None:
        if not cls.DISTRIBUTED:
            raise SettingError("scheduler", f"scheduler applies to method "
                                            f"{', '.join(m.name for m in METHODS.values() if m.DISTRIBUTED)} only, "
                                            f"found method {cls.name}")
    if cls.TRACE_EVERY_STEP and values["loglik_every"] != 1:
        raise SettingError("loglik_every", f"loglik_every must be 1 for method {cls.name}, which records its "
                                           f"trace at every {cls.unit}, found {values['loglik_every']}")
    cls.check(values)


def unchanged(output: str, corpus: Corpus, n_topics: int | None = None, **given) -> bool:
    """Whether the model at ``output`` was trained with these settings (the defaults of those
    not given; any seed when none is given) on this corpus (same fingerprint, as the run would
    see it), from the same warm-start parent and aligned to the same model's file: then
    training again would only repeat it (``train --skip-unchanged``). A missing or unreadable
    output is never unchanged."""
    model = _loaded(output, Model.load)
    return model is not None and _same_run(model.params, corpus, {**given, "n_topics": n_topics})


def unchanged_plan(output: str, plan: Plan, any_seed: bool = False) -> bool:
    """:func:`unchanged` for a run settled already (:func:`plan_for`): whether the model at
    ``output`` was trained as ``plan`` trains; ``any_seed``: the seed was not given (the plan's
    was drawn), so that a model of any seed is."""
    if plan.checkpoint is not None:
        raise SettingError("resume", NOTHING_TO_COMPARE)
    model = _loaded(output, Model.load)
    return model is not None and _same_plan(model.params, plan, any_seed)


def resumable(checkpoint: str, corpus: Corpus, n_topics: int | None = None, **given) -> int | None:
    """The step the checkpoint at ``checkpoint`` continues from when a run with these settings
    (as :func:`unchanged` compares them) on this corpus wrote it, so that resuming it gives
    what that run gives; None when it is missing, unreadable or another run's."""
    ckpt = _loaded(checkpoint, Checkpoint.load)
    return ckpt.iteration if ckpt is not None and _same_run(ckpt.params, corpus, {**given, "n_topics": n_topics}) \
        else None


def _loaded(path: str, load):
    """``load(path)``, or None when the file is missing or unreadable."""
    if not os.path.exists(path):
        return None
    try:
        return load(path)
    except LdacliError:
        return None


def _same_run(p: dict, corpus: Corpus, given: dict) -> bool:
    """Whether the params ``p`` a model or checkpoint recorded are those of a run of the
    settings ``given`` on ``corpus``."""
    if given.get("resume") is not None:
        raise SettingError("resume", NOTHING_TO_COMPARE)
    return _same_plan(p, settle(corpus, given, notes=False), any_seed=given.get("seed") is None)


def _same_plan(p: dict, plan: Plan, any_seed: bool) -> bool:
    """Whether the params ``p`` a model or checkpoint recorded are those of the run of ``plan``
    (of any seed with ``any_seed``)."""
    values = dict(plan.values)
    if any_seed:  # (the plan's seed was drawn; nothing else it settled depends on it)
        if not isinstance(p.get("seed"), int):
            return False
        values["seed"] = p["seed"]
    if p.get("method") != plan.cls.name or p.get("corpus_fingerprint") != plan.corpus.fingerprint():
        return False
    for name, recorded in (("warm_start", "warm_start"), ("align_to", "aligned_to")):
        if values[name] is not None and (p.get(recorded) or {}).get("sha256") != file_sha256(values[name]):
            return False
    return not settings.differences(settings_of(plan.cls), values, _as_recorded(p))


def _checked_trace(cls: type[Method], state: Method) -> float:
    """The trace's value now, which is a log-probability or a bound on one: a value above 0 or
    not finite means the arithmetic broke down, and the run stops saying so."""
    value = state.loglik()
    if not value <= 1e-9:
        raise LdacliError(f"the {cls.trace_label} came out as {value!r}, which a log-probability cannot be: "
                          f"the arithmetic broke down (priors alpha {state.alpha.max():g}, beta {state.beta:g}?)")
    return value


def _provenance(corpus: Corpus) -> dict:
    """What a model records about the corpus it was trained on."""
    source = corpus.source
    return {
        "corpus_fingerprint": corpus.fingerprint(),
        # absolute, so that `topics --coherence` finds it from any folder
        "corpus_source": os.path.abspath(source) if source not in ("", "-", "<stdin>") else source,
        "corpus_format": corpus.format,
        "n_docs": corpus.n_docs,
        "n_words": corpus.n_words,
        "n_tokens": corpus.n_tokens,
        "ldacli_version": __version__,
    }


@takes_settings(SETTINGS, method_settings(), READING, roles=True)
def train(corpus, n_topics: int | None = None, *, progress: bool = False,
          callback: Callable[[int], None] | None = None, output: str | None = None, stop: dict | None = None,
          **given) -> Model:
    """Fit LDA to ``corpus`` and return the model.

    ``corpus`` is what :func:`ldacli.api_input.as_corpus` takes: a path (any format
    ``ldacli train`` reads, with the reading settings ``input_format``, ``vocab``,
    ``stop_words``, ... as its options), a :class:`~ldacli.corpora.corpus.Corpus`, a list of strings
    (one document each), a SciPy sparse matrix of counts (documents x words, its words in
    ``vocab``), or a :class:`~ldacli.corpora.formats.shards.ShardFolder` for a Dask cluster or
    from disk; read as ``ldacli train`` reads it (:func:`plan_for`).

    Every setting is a keyword argument (listed below, from the declarations: :data:`SETTINGS`,
    common to every method, each method's own ``METHODS[name].SETTINGS``, and how a corpus is
    read); a setting of another method, an unknown one or a value that is not allowed raises
    :class:`~ldacli.errors.SettingError` naming it, and settings that contradict each other are
    refused before ``corpus`` is read.

    ``iterations`` counts all steps, those before a resumed checkpoint included. ``threads``
    never changes the result. With ``holdout`` (a fraction) and ``patience``, that fraction of
    the documents is held out and training stops when their document-completion perplexity,
    computed at every trace point, has not improved ``patience`` times in a row; the model is
    fitted to the rest. Words of the vocabulary that never occur take no row in the model.

    ``warm_start`` (a model file) begins the run from that model
    (:func:`~ldacli.methods.warm_start.warm_start_state`):
    the vocabulary keeps its words' order (words gone from the corpus are left out, new ones
    appended), each token's first topic is drawn from its topics, its priors are the starting
    values unless ``alpha``/``beta`` are given, and topic k of the new model descends from its
    topic k. The model records its lineage, and how well the ids held (``params["id_stability"]``).
    ``align_to`` (a model file) renumbers the trained model's topics onto that model's ids
    (:func:`~ldacli.diff.align`) and records the permutation (``params["aligned_to"]``).

    With ``checkpoint``, the state is written there every ``checkpoint_every`` steps (if > 0),
    at the end, and when SIGINT/SIGTERM stops the run (raising :class:`TrainingInterrupted`,
    whose ``checkpoint`` names the file). ``resume`` continues the run a checkpoint was written
    by, exactly as it was asked: the settings it fixes (the method, K, the priors, the seed,
    the method's own, how the corpus is read) come from it and may not change; those it
    continues (``iterations``, ``checkpoint``, ``checkpoint_every``, ``loglik_every``,
    ``patience``, ``max_seconds``, ``align_to``) come from it unless given. The result is what
    an uninterrupted run gives. ``stop``: the flag of :func:`stop_requests` in the main thread,
    for a run in another thread that is to stop (and write its checkpoint) when a signal sets it.
    ``callback(iteration)`` is called after every step. With
    ``output`` (a path), the model is also written there, atomically, as it is assembled (a
    collapsed Gibbs model's counts, :class:`~ldacli.topic_counts.TopicCounts`, a part at a time,
    never phi or theta; another method's phi and theta), and what the returned model holds
    (the counts it computes phi and theta from when they are first read, or phi and theta) are
    read-only memory maps of that file. The model's
    params record the settings, ``iterations_done`` and ``stopped`` (one of :data:`STOPPED`).
    The checkpoint path is locked for the run (:mod:`ldacli.files.locking`): another run on it raises
    :class:`~ldacli.errors.LockedError`, or waits up to ``wait`` seconds. A checkpoint that
    cannot be written (a full disk) is reported and training goes on.

    ``scheduler`` runs the collapsed Gibbs sampler's shards on a Dask cluster
    (:mod:`ldacli.methods.cgs.dask_client`): a scheduler's address, ``"local:N"`` for a local
    cluster of N worker processes, or a ``distributed.Client``; the result is the same as with
    threads. A lost cluster writes the checkpoint of the last finished sweep and raises
    :class:`RunStopped`. ``corpus`` may then be a :class:`~ldacli.corpora.formats.shards.ShardFolder`
    (from :func:`~ldacli.corpora.formats.shards.open_shard_folder`) or a shard folder's path: the
    workers read the shard files, the client only the index (no warm start, holdout or vocabulary
    rule then).
    """
    reading = reading_of(given)
    given = {**given, "n_topics": n_topics}
    check_given(given)  # before anything is read
    plan = plan_for(corpus, given, reading)
    del corpus  # the plan holds the corpus it trains on (without unused words: another one), and not this one
    model = train_planned(plan, progress=progress, callback=callback, output=output, stop=stop)
    if isinstance(model.doc_ids, np.ndarray):  # (a streamed run's and an update's: `ldacli train` needs no list)
        model.doc_ids = model.doc_ids.tolist()
    return model


def plan_for(corpus, given: dict, reading: dict | None = None, *,
             on_read: Callable[[Corpus | ShardFolder], None] | None = None) -> Plan:
    """The plan of a run of :func:`train` on ``corpus`` (what :func:`train` takes: a path, a
    :class:`~ldacli.corpora.corpus.Corpus`, texts, a matrix, a
    :class:`~ldacli.corpora.formats.shards.ShardFolder`) with the settings ``given``, checked
    already (:func:`check_given`), and the reading settings ``reading`` (None or missing: not
    given): the one way from what a run is given to what it trains on, of ``ldacli.train`` and
    ``ldacli train`` alike. Settled once (:func:`settle`); :func:`train_planned` runs it.

    The path of a shard folder read as written (no reading setting given otherwise than it was
    converted with; a resumed run's reading is its checkpoint's run's) is not read whole: with
    ``scheduler`` the cluster's workers read its files and the run settles on its index (a
    reading setting otherwise is refused); without, the run settles on its index and trains from
    disk when read whole it would need more than ``memory_limit`` (or the memory available).
    Anything else is read whole (:func:`~ldacli.api_input.as_corpus`; a resumed run's path as
    its checkpoint's run read it, an update's night as its model reads documents).

    ``on_read`` is called with what the run trains on as soon as it is read, before it is
    settled: the :class:`~ldacli.corpora.corpus.Corpus` read (its ``notes`` say how), or the
    shard folder whose index the run settled on (a cluster's workers read it with ``scheduler``,
    else it trains from disk). What settling logs is held in the plan
    (:attr:`Plan.held_notes`) and logged when the plan runs, so that a plan made to decide
    something (``--skip-unchanged``: :func:`unchanged_plan`) says nothing; logged at once when
    settling fails."""
    updated = _updated_of(given)  # an update's night is read as its model reads documents
    reading = {k: v for k, v in (reading or {}).items() if v is not None}
    resume = given.get("resume")
    if is_path(corpus) and resume is not None:  # read as the checkpoint's run read it
        reading, resume = resumed_reading(reading, resume), None
    data, checkpoint = None, None
    if is_path(corpus) and updated is None and is_shard_folder(corpus):
        folder, otherwise = open_shard_folder(corpus), _not_as_written(reading)
        if given.get("scheduler") is not None:  # the workers read the files, the client the index
            if otherwise is not None:
                raise SettingError(otherwise, "a shard folder on a cluster is trained as written: choose the "
                                              "vocabulary when converting", ("scheduler",))
            data = folder
        elif otherwise is None:
            on_index = _settled_on_index(folder, given)
            if on_index is not None and _needs_disk(on_index):
                if on_read is not None:
                    on_read(on_index.corpus)
                return on_index
            checkpoint = on_index.checkpoint if on_index is not None else None  # (read once)
    if data is None:
        data = as_corpus(corpus, reading=reading, model=updated, resume=resume, shard_folders=updated is None)
    if on_read is not None:
        on_read(data)
    # What was read is held here only while it is settled: the words that never occur leave it
    # in settling, in the copy the plan holds (Corpus.without_unused_words), and nothing holds
    # this one after, so the sampler keeps the tokens of the plan's very corpus, which holds them
    # instead of its counts (Corpus.as_tokens), and the process holds them once.
    with _notes_held() as notes:
        plan = settle(data, given, updated=updated, checkpoint=checkpoint)
    return replace(plan, held_notes=tuple(notes))


def _not_as_written(reading: dict) -> str | None:
    """The first of the reading settings ``reading`` that reads a shard folder otherwise than it
    was written (:func:`~ldacli.corpora.formats.read.as_written`); None when none does."""
    written = as_written()
    return next((s.name for s in READING if s is not INPUT_FORMAT
                 and reading.get(s.name) not in (None, s.default, written.get(s.name))), None)


def train_planned(plan: Plan, *, progress: bool = False, callback: Callable[[int], None] | None = None,
                  output: str | None = None, stop: dict | None = None) -> Model:
    """:func:`train` of a run settled already (:func:`plan_for`, :func:`settle`): its
    phases after the plan, :func:`prepare`, :func:`loop`, :func:`finish` and :func:`deliver`,
    with the checkpoint locked and the cluster, if any, up."""
    for record in plan.held_notes:
        log.handle(record)
    values = plan.values
    with locked([values["checkpoint"]], wait=values["wait"]) as removed:
        for path in removed:
            log.warning("%s: removed, a temporary file left by a run that was killed", path)
        with cluster(values["scheduler"]) as client:
            run = prepare(plan, client, writing=output is not None)
            try:
                it, stopped = loop(run, progress=progress, callback=callback, stop=stop)
                model = finish(run, it, stopped)
                if run.streamed:
                    model.save(output)
            finally:
                run.state.close()
    run.state = None  # (the sampler's memory freed before the model is delivered: an update's peak)
    return deliver(model, run, output)


def deliver(model: Model, run: Run, output: str | None) -> Model:
    """The model of a finished run once the method's state is closed: a streamed one mapped from
    the file it was written to; another one merged with an update's model, its warm start's ids
    checked, aligned, and written to ``output``."""
    if run.streamed:  # what was written, mapped from the file once the sampler's memory is freed
        if model.counts is not None:
            model.counts = model.counts.mapped(output)
        else:
            model.phi, model.theta = mapped(output, ("phi", "theta")).values()
        warn_lost_seeds(model)
        return model
    if run.plan.updated is not None:
        model = updating.merged(model, run.plan.updated)
    if run.parent is not None:
        model.params["id_stability"] = warm_start.id_stability(run.parent, model,
                                                               model.params["warm_start"].get("descent"))
    if run.reference is not None:
        model = _aligned(model, run.reference, run.values["align_to"])
    if output is not None:
        model.save(output)
        if run.plan.updated is not None:  # (its documents' counts, made as the file took them, mapped from it)
            model.counts = model.counts.mapped(output)
    elif run.plan.updated is not None:
        model.counts = model.counts.materialized()
    warn_lost_seeds(model)
    return model


def _settled_on_index(folder: ShardFolder, given: dict) -> Plan | None:
    """The plan of a collapsed Gibbs run of the settings ``given`` on a shard folder's index,
    its notes held (:attr:`Plan.held_notes`); None for a run that can only read it whole."""
    if any(given.get(name) is not None for name in ("scheduler", "warm_start", "holdout", "update")):
        return None
    if (given.get("method") or DEFAULT_METHOD) != "cgs" and given.get("resume") is None:
        return None
    with _notes_held() as notes:
        plan = settle(folder, given)
    return replace(plan, held_notes=tuple(notes)) if plan.cls.name == "cgs" else None


def _needs_disk(plan: Plan) -> bool:
    """Whether the run of ``plan``, on a shard folder's index, would need more than its memory
    limit (or the memory available) with the folder read whole."""
    needed = plan.estimate_bytes(plan.corpus, check_threads(plan.values["threads"]), read_whole=True)
    room = memory_room(plan.values["memory_limit"])
    return room is not None and needed > room


@contextmanager
def _notes_held():
    """The records logged meanwhile, held in the list yielded instead of logged (settling a run
    to decide on it: they are logged if the plan runs), or logged when the block fails."""
    held: list[logging.LogRecord] = []

    def hold(record: logging.LogRecord) -> bool:
        held.append(record)
        return False

    log.addFilter(hold)
    try:
        yield held
    except BaseException:
        log.removeFilter(hold)
        for record in held:
            log.handle(record)
        raise
    finally:
        log.removeFilter(hold)


def _updated_of(given: dict) -> Model | None:
    """The model an update (given, or resumed from its checkpoint) continues; None for any other run."""
    if given.get("update") is not None:
        return updating.parent_of(given["update"])
    if given.get("resume") is not None:
        params = Checkpoint.read_params(given["resume"])
        if params.get("update") is not None:
            return updated_model(params, given["resume"])
    return None


def _aligned(model: Model, reference: Model, path: str) -> Model:
    """``model`` with its topics renumbered onto ``reference``'s ids, recording how."""
    model, order, matching = align(model, reference)
    model.params["aligned_to"] = {"path": os.path.abspath(path), "sha256": file_sha256(path),
                                  "order": order, "distances": [float(d) for d in matching.distances]}
    moved = sum(1 for i, k in enumerate(order) if i != k)
    log.warning("topics renumbered onto %s's ids (%d of %d moved; median JS distance %.3f)", path, moved,
                len(order), float(np.median(matching.distances)))
    return model


@dataclass
class Run:
    """A run ready to step (:func:`prepare`): its plan, the method's state, the params the model
    will record, the corpus it is fitted to, the step it starts at, the trace so far, its
    stopping rules, the models its ids are checked against (a warm start's parent) and aligned
    to, whether the model is written as it is assembled, and the step of the last checkpoint
    written to its checkpoint file (None: none yet)."""

    plan: Plan
    state: Method
    params: dict
    fitted: Corpus
    start: int
    trace_it: list[int]
    trace_ll: list[float]
    evaluator: HeldOutEvaluator | None
    stopper: EarlyStopping | None
    parent: Model | None
    reference: Model | None
    streamed: bool
    written_at: int | None = None

    @property
    def cls(self) -> type[Method]:
        return self.plan.cls

    @property
    def values(self) -> Mapping[str, Any]:
        return self.plan.values

    def checkpoint_params(self) -> dict:
        """What a checkpoint records: the model's params, and how the run writes checkpoints."""
        return {**settings.recorded(settings_of(self.cls), self.values), **self.params}

    def save_checkpoint(self, it: int) -> bool:
        """Write the checkpoint of step ``it``; a failure (a full disk, say) is reported and
        training goes on: a checkpoint is insurance, the model is the product. Returns whether it
        was written."""
        path, state = self.values["checkpoint"], self.state
        if not path:
            return False
        try:
            rng_states, arrays = state.checkpoint_state(path, it)
            Checkpoint(self.checkpoint_params(), it, rng_states, np.array(self.trace_it, dtype=np.int64),
                       np.array(self.trace_ll, dtype=np.float64), state.alpha, state.beta, arrays,
                       {"early_stopping": self.stopper.state() if self.stopper is not None else None},
                       vocab=list(self.fitted.vocab)).save(path)
        except OutputError as exc:
            log.warning("%s (at %s %d; training goes on, the previous checkpoint is intact)", exc, self.cls.unit, it)
            return False
        state.checkpoint_written(path, it)
        self.written_at = it
        return True

    def stopped_at(self, it: int, why: str) -> tuple[str, str | None]:
        """Write the checkpoint of step ``it`` for a run that stops there: what to tell, and the
        checkpoint that continues it."""
        path, unit, iterations = self.values["checkpoint"], self.cls.unit, self.values["iterations"]
        said = f"{why} after {unit} {it} of {iterations}"
        if self.save_checkpoint(it):
            return f"{said}; checkpoint written to {path}", path
        if path and self.written_at is not None:
            return (f"{said}; the checkpoint could not be written, {path} holds {unit} {self.written_at} (progress "
                    f"since then is lost)"), path
        if path:
            return f"{said}; the checkpoint could not be written, progress since the last one in {path} is lost", None
        return f"{said}; no checkpoint was asked for, progress is lost", None

    def stops_early(self) -> bool:
        """Whether early stopping or the method's own criterion says the run is done."""
        return (self.stopper is not None and self.stopper.should_stop) or self.state.converged(self.trace_ll)

    def expect_end(self, it: int, spent: float) -> None:
        """Tell the state the step a time-limited run is expected to end at: the steps left at
        this run's pace so far (``spent`` seconds for the steps since :attr:`start`)."""
        iterations = self.values["iterations"]
        pace = min(float(iterations), (self.values["max_seconds"] - spent) / spent * (it - self.start))  # 1e308 s: finite
        self.state.expect_last(min(iterations, it + max(1, math.ceil(pace))))

    def trace_point(self, it: int, rate: float) -> None:
        """After step ``it`` (at ``rate`` tokens a second): every ``loglik_every`` steps, the trace's
        value, logged, and held-out perplexity for early stopping."""
        if it % self.values["loglik_every"]:
            return
        unit, state = self.cls.unit, self.state
        self.trace_it.append(it)
        self.trace_ll.append(_checked_trace(self.cls, state))
        note = state.note()
        log.info("%s %d: %s %.6f, %.3g tokens/s%s", unit, it, self.cls.trace_label, self.trace_ll[-1], rate,
                 f", {note}" if note else "")
        if self.stopper is not None:
            held_out = self.evaluator.perplexity(state.phi(), state.alpha)
            log.info("%s %d: held-out perplexity %.6g", unit, it, held_out)
            if self.stopper.observe(it, held_out):
                log.info("%s", self.stopper.reason)

    def between_steps(self, it: int, stop: dict) -> None:
        """After step ``it``: the checkpoint when one is due; stop (raising
        :class:`~ldacli.errors.TrainingInterrupted`) when a signal asked to."""
        every = self.values["checkpoint_every"]
        if every and it % every == 0 and it < self.values["iterations"]:
            self.save_checkpoint(it)
        if stop["signal"] is not None:
            message, written = self.stopped_at(it, f"stopped by {stop['signal'].name}")
            raise TrainingInterrupted(message, int(stop["signal"]), written)


def prepare(plan: Plan, client=None, writing: bool = False) -> Run:
    """Everything before the first step: the held-out slice, the params the model will record,
    the memory check (``writing``: the model goes to a file, so it is written as it is
    assembled, never whole, unless a warm start's id stability, an update or an alignment needs
    it whole), the state."""
    cls, values, ckpt, corpus = plan.cls, plan.values, plan.checkpoint, plan.corpus
    threads = check_threads(values["threads"])
    reference = Model.load(values["align_to"]) if values["align_to"] is not None else None
    fitted, evaluator, stopper = corpus, None, None
    if values["holdout"] is not None:
        fitted, held, _ = holdout_split(corpus, values["holdout"], seed=values["seed"])
        evaluator = HeldOutEvaluator(held, seed=values["seed"])
        stored = ckpt.state.get("early_stopping") if ckpt is not None else None
        stopper = EarlyStopping.from_state(stored, values["patience"]) if stored else EarlyStopping(values["patience"])
    memory = (f"training {cls.name} with {values['n_topics']} topics on {fitted.n_words} words, "
              f"{fitted.n_docs} documents and {fitted.n_tokens} tokens")
    advice = SMALLER
    if isinstance(corpus, ShardFolder) and client is None:
        memory += f" from disk ({corpus.path})"
        advice = "use fewer topics (the word-topic counts and each document's topics stay in memory)"
    # before anything K-sized (the topics' names) is made; again below once the parent is known
    early = writing and plan.parent is None and reference is None
    check_fits(memory, plan.estimate_bytes(fitted, threads, early), values["memory_limit"], advice)
    params, parent = _model_params(plan)
    if plan.updated is not None and ckpt is not None:  # (a fresh update let go of it as it settled)
        updating.released(plan.updated, values["update"])
    streamed = writing and parent is None and reference is None and plan.updated is None
    check_fits(memory, plan.estimate_bytes(fitted, threads, streamed), values["memory_limit"], advice)
    start = None
    if plan.parent is not None:
        start = warm_start.warm_start_state(plan.parent, fitted, values, plan.descent)
    elif plan.updated is not None and ckpt is None:  # the night's first topics, drawn under its prior
        start = updating.first_state(fitted, values, plan.topic_word_prior, plan.freed)
    resume, checkpoint = values["resume"], values["checkpoint"]
    state = cls(fitted, values, threads=threads, checkpoint=ckpt, source=resume, start=start,
                **({"client": client} if client is not None else {}), **plan.options)
    trace_it = [int(i) for i in ckpt.loglik_iterations] if ckpt is not None else []
    trace_ll = [float(x) for x in ckpt.loglik_per_token] if ckpt is not None else []
    at = ckpt.iteration if ckpt is not None else 0
    resumes_it = resume is not None and checkpoint and os.path.abspath(resume) == os.path.abspath(checkpoint)
    return Run(plan, state, params, fitted, at, trace_it, trace_ll, evaluator, stopper, parent, reference, streamed,
               written_at=at if resumes_it else None)


def _model_params(plan: Plan) -> tuple[dict, Model | None]:
    """The params the model of ``plan`` will record (the settings that change its result, the
    trace's kind, how the corpus was read, its provenance; the lineage and the topics' names of
    a warm start, a resumed one or an update; the seeded topics), and the model its topic ids
    are checked against at the end (a warm start's parent, when its file is unchanged)."""
    cls, values, ckpt, corpus = plan.cls, plan.values, plan.checkpoint, plan.corpus
    # a shard folder's index: as written, and what its tokenizer file says (ShardFolder.reading)
    reading = as_written() | corpus.reading if isinstance(corpus, ShardFolder) else corpus.reading
    params = {"method": cls.name, **settings.recorded(settings_of(cls), values, results_only=True),
              "trace": cls.trace, **reading, **_provenance(corpus)}
    parent = plan.parent
    names = [None] * values["n_topics"]
    if parent is not None:
        params.update(warm_start.lineage(parent, values["warm_start"], corpus, plan.descent))
        names = [None if d is None else parent.topic_names[d] for d in plan.descent]
    elif ckpt is not None:  # a resumed warm start keeps its lineage and names, and checks its ids if it can
        params.update({k: ckpt.params[k] for k in ("warm_start", "lineage", "topic_names", "seeded", "topic_word_prior",
                                                   "update") if k in ckpt.params})
        if not params.get("update"):  # (an update's model is plan.updated)
            parent = warm_start.parent_if_unchanged(params.get("warm_start"))
    elif plan.updated is not None:  # an update continues its model's topics, ids and names
        identity = list(range(plan.updated.n_topics))
        params.update(warm_start.lineage(plan.updated, values["update"], corpus, identity))
        params.update(updating.record(plan.updated, values, corpus, plan.freed, params["warm_start"]["sha256"]))
        names = list(plan.updated.topic_names)
    if plan.seeded is not None and ckpt is None:
        params["seeded"] = plan.seeded
        for t in plan.seeded["topics"]:  # a seeded topic's name wins over a kept one of the same name
            names = [None if n == t["name"] else n for n in names]
            names[t["topic"]] = t["name"]
    if ckpt is None:
        params = with_names(params, names)
    return params, parent


def loop(run: Run, *, progress: bool = False, callback: Callable[[int], None] | None = None,
         stop: dict | None = None) -> tuple[int, str]:
    """The steps, with the trace, early stopping, the time limit, checkpoints and signals
    between them (:class:`Run`'s methods): the last step done and why the run stopped (one of
    :data:`STOPPED`)."""
    state, unit = run.state, run.cls.unit
    iterations, max_seconds = run.values["iterations"], run.values["max_seconds"]
    bar = tqdm(total=iterations, initial=run.start, disable=not progress, file=sys.stderr,
               unit=unit, dynamic_ncols=True, leave=False)
    it, timed_out = run.start, False
    began = time.perf_counter()
    with bar, stop_requests(stop) as stop:
        while it < iterations and not run.stops_early():
            t0 = time.perf_counter()
            if max_seconds is not None and it > run.start:  # the sweeps left, at this run's pace so far
                run.expect_end(it, t0 - began)
            try:
                state.step(it + 1)
            except ClusterLost as exc:
                message, written = run.stopped_at(it, f"{exc}; stopped")
                raise RunStopped(message, written) from None
            it += 1
            rate = run.fitted.n_tokens / max(time.perf_counter() - t0, 1e-9)
            run.trace_point(it, rate)
            trace = f", {run.cls.trace_label} {run.trace_ll[-1]:.4f}" if run.trace_ll else ""
            bar.set_postfix_str(f"{rate / 1e6:.2f}M tok/s{trace}")
            bar.update(1)
            if callback is not None:
                callback(it)
            run.between_steps(it, stop)
            if max_seconds is not None and time.perf_counter() - began >= max_seconds:
                timed_out = True
                log.info("time limit of %g s reached after %s %d", max_seconds, unit, it)
                break
    if run.stopper is not None and run.stopper.should_stop:
        return it, "early stopping"
    if state.converged(run.trace_ll):
        return it, "converged"
    return it, "time limit" if timed_out else "iterations"


def finish(run: Run, it: int, stopped: str) -> Model:
    """The model of a run that stopped after step ``it`` (``stopped``: why), with the last
    checkpoint written (a streamed run's counts, when the method has them, made as the file
    takes them, to save before the state is closed)."""
    state, trace_it, trace_ll = run.state, run.trace_it, run.trace_ll
    run.save_checkpoint(it)
    # The model's trace ends at the last step; checkpoints keep only the regular points so
    # that a resumed run's trace equals an uninterrupted one's.
    if not trace_it or trace_it[-1] != it:
        trace_it.append(it)
        trace_ll.append(_checked_trace(run.cls, state))
    phi = theta = counts = None
    found = state.model_counts(it)
    if found is None:
        phi, theta, extra = state.result(it)
    else:  # phi and theta are computed from them when read
        counts, extra = found
        if not run.streamed:
            counts = counts.materialized()
    params = {**run.params, **extra, "iterations_done": it, "stopped": stopped}
    if run.stopper is not None:
        params.update(run.stopper.summary())
    return Model(
        phi=phi,
        theta=theta,
        alpha=np.array(state.alpha, dtype=np.float64),
        beta=float(state.beta),
        vocab=list(run.fitted.vocab),
        doc_ids=run.fitted.doc_ids if run.streamed else _doc_ids(run.fitted.doc_ids),
        loglik_iterations=np.array(trace_it, dtype=np.int64),
        loglik_per_token=np.array(trace_ll, dtype=np.float64),
        params=params,
        removed_words=list(run.plan.corpus.removed_words),
        counts=counts,
    )


def _doc_ids(ids) -> list[str]:
    """Document ids as the model's list of strings, from a list or a shard folder's NumPy text
    array (which a streamed model is written from as it is: a list of a cluster client's
    millions of ids would be the one thing it held of every document while writing)."""
    return ids.tolist() if isinstance(ids, np.ndarray) else list(ids)


def _corpus_as_trained(corpus: Corpus, vocab: list[str], source: str) -> Corpus:
    """``corpus`` over the vocabulary a checkpoint's run trained on (a warm start grows it)."""
    if vocab == corpus.vocab:
        return corpus
    if isinstance(corpus, ShardFolder):
        raise LdacliError(f"{source}: expected a checkpoint of this corpus ({corpus.source}), found one trained on "
                          f"another vocabulary")
    aligned, dropped = corpus.align(vocab)
    if dropped:
        raise LdacliError(f"{source}: expected a checkpoint of this corpus ({corpus.source}), found one trained "
                          f"without {dropped} of its tokens' words")
    return aligned
