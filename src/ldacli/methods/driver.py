"""The training driver: everything around the steps, the same for every method.

:func:`train` validates the settings (the common ones here, each method's own through its
``resolve``), records provenance, resumes from a checkpoint (the method read from it, its
settings checked against the ones given, the trace restored), runs the method's steps with a
progress bar and a log, takes the trace every ``loglik_every`` steps, stops early on held-out
perplexity, on a time limit or when the method converges, writes checkpoints on a schedule and
when SIGINT/SIGTERM arrives, and assembles the model. A method (:class:`~ldacli.methods.base.Method`)
supplies only its settings, its state and one step.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from ldacli import checks, seeds
from ldacli.version import __version__
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError, OutputError, SettingError
from ldacli.fileio import file_sha256
from ldacli.diff import match_topics
from ldacli.heldout import HeldOutEvaluator, fold_in, holdout_split
from ldacli.locking import locked
from ldacli.memory import check_fits
from ldacli.methods.base import Method, Start
from ldacli.methods.cgs import CollapsedGibbs
from ldacli.methods.distributed import ClusterLost, cluster
from ldacli.methods.ugibbs import UncollapsedGibbs
from ldacli.methods.vem import VariationalEM
from ldacli.model import Checkpoint, Model
from ldacli.parallel import check_threads
from ldacli.formats.shards import ShardFolder
from ldacli.stopping import EarlyStopping

log = logging.getLogger("ldacli")

# --method name -> the method; adding a method is one module and one line here.
METHODS: dict[str, type[Method]] = {m.name: m for m in (CollapsedGibbs, VariationalEM, UncollapsedGibbs)}
DEFAULT_METHOD = "cgs"

DEFAULT_TOPICS = 20
DEFAULT_ALPHA = 0.1
DEFAULT_BETA = 0.01
# Priors above this are refused: the log-gamma differences of the likelihood lose all precision
# in double arithmetic well before 1e15, and no prior that large changes a model anyway.
MAX_PRIOR = 1e6

# Settings every method has, stored in params and fixed on resume (besides each method's OPTIONS).
COMMON_SETTINGS = ("n_topics", "alpha", "beta", "seed", "loglik_every", "holdout", "patience")

# Why a run stopped (params["stopped"]).
STOPPED = ("iterations", "converged", "early stopping", "time limit")


class TrainingInterrupted(LdacliError):
    """Training stopped on SIGINT or SIGTERM (``signum``) after finishing the step under way."""

    def __init__(self, message: str, signum: int):
        self.signum = signum
        super().__init__(message)


@contextmanager
def stop_requests():
    """Turn SIGINT/SIGTERM into a flag checked between steps (main thread only); a second
    signal stops at once."""
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


def method_of(name: str | None, checkpoint: Checkpoint | None, source: str | None) -> type[Method]:
    """The method to run: ``name``, or the checkpoint's (the two must agree), or the default."""
    if checkpoint is not None:
        stored = checkpoint.method
        if stored not in METHODS:
            raise LdacliError(f"{source}: expected a checkpoint of method {', '.join(METHODS)}, found {stored!r}")
        if name is not None and name != stored:
            raise SettingError("method", f"{source}: the checkpoint was written by method {stored}, found method {name}")
        name = stored
    return METHODS[checks.choice("method", DEFAULT_METHOD if name is None else name, tuple(METHODS))]


def _method_options(method: type[Method], options: dict) -> dict:
    """The options given (not None), each checked to be one of ``method``'s own."""
    given = {k: v for k, v in options.items() if v is not None}
    for name in given:
        if name not in method.OPTIONS:
            owners = [m.name for m in METHODS.values() if name in m.OPTIONS]
            if owners:
                raise SettingError(name, f"{name} applies to method {' and '.join(owners)} only, found method {method.name}")
            raise SettingError(name, f"unknown setting {name!r}")
    return given


def _corpus_to_train(corpus: Corpus, parent: Model | None, warm_start: str | None, ckpt: Checkpoint | None,
                     resume: str | None, notes: bool = True) -> Corpus:
    """The corpus as the run trains on it: without the words that never occur; over a warm
    start's vocabulary order, or the vocabulary a resumed run trained on."""
    if corpus.n_tokens == 0:
        raise LdacliError(f"{corpus.source}: expected a corpus with at least one token, found none")
    corpus, unused = corpus.without_unused_words()
    if unused and notes:
        log.warning("%s: %d words of the vocabulary never occur in the corpus; the model leaves them out",
                    corpus.source, unused)
    if parent is not None:
        return _grown_corpus(corpus, parent, warm_start, notes)
    if ckpt is not None and ckpt.vocab is not None:
        return _corpus_as_trained(corpus, ckpt.vocab, resume)
    return corpus


def _fresh_settings(method: type[Method], given: dict, options: dict, iterations: int, corpus: Corpus,
                    parent: Model | None = None) -> dict:
    """The settings of a fresh run: the common ones checked or defaulted, then the method's; a
    warm start fixes K and gives the starting priors unless they are given."""
    if parent is not None:
        if given["n_topics"] is not None and given["n_topics"] != parent.n_topics:
            raise SettingError("n_topics", f"n_topics must be the warm start's {parent.n_topics} topics "
                                           f"(topic k descends from its topic k), found {given['n_topics']}")
        given = {**given, "n_topics": parent.n_topics}
    K = checks.count("n_topics", DEFAULT_TOPICS if given["n_topics"] is None else given["n_topics"], 1)
    every = method.DEFAULT_LOGLIK_EVERY if given["loglik_every"] is None else checks.count("loglik_every", given["loglik_every"], 1)
    if method.TRACE_EVERY_STEP and every != 1:
        raise SettingError("loglik_every", f"loglik_every must be 1 for method {method.name}, which records its "
                                           f"trace at every {method.unit}, found {every}")
    holdout, patience = given["holdout"], given["patience"]
    if (holdout is None) != (patience is None):
        raise SettingError("holdout" if holdout is None else "patience",
                           "holdout and patience go together: give both to stop early, or neither")
    settings = {
        "n_topics": K,
        "alpha": checks.positive("alpha", DEFAULT_ALPHA if given["alpha"] is None else given["alpha"], MAX_PRIOR),
        "beta": checks.positive("beta", DEFAULT_BETA if given["beta"] is None else given["beta"], MAX_PRIOR),
        "seed": seeds.resolve(given["seed"]),
        "loglik_every": every,
        "holdout": None if holdout is None else checks.fraction("holdout", holdout, open_ends=True),
        "patience": None if patience is None else checks.count("patience", patience, 1),
    }
    settings.update(method.resolve(options, n_topics=K, iterations=iterations, corpus=corpus))
    if parent is not None:  # the parent's priors are the starting values unless given
        if given["alpha"] is None:
            settings["alpha"] = [float(a) for a in parent.alpha]
        if given["beta"] is None and parent.beta > 0:
            settings["beta"] = float(parent.beta)
    return settings


def unchanged(output: str, corpus: Corpus, n_topics: int | None = None, *, method: str | None = None,
              iterations: int | None = None, alpha: float | None = None, beta: float | None = None,
              seed: int | None = None, loglik_every: int | None = None, holdout: float | None = None,
              patience: int | None = None, warm_start: str | None = None, **options) -> bool:
    """Whether the model at ``output`` was trained with these settings (the defaults of those
    not given; any seed when none is given) on this corpus (same fingerprint, as the run would
    see it) and, for a warm start, from the same parent file: then training again would only
    repeat it (``train --skip-unchanged``). A missing or unreadable output is never unchanged."""
    if not os.path.exists(output):
        return False
    try:
        model = Model.load(output)
    except LdacliError:
        return False
    p = model.params
    cls = method_of(method, None, None)
    parent = Model.load(warm_start) if warm_start is not None else None
    if parent is not None and (p.get("warm_start") or {}).get("sha256") != file_sha256(warm_start):
        return False
    trained = _corpus_to_train(corpus, parent, warm_start, None, None, notes=False)
    if p.get("corpus_fingerprint") != trained.fingerprint():
        return False
    iterations = checks.count("iterations", cls.DEFAULT_ITERATIONS if iterations is None else iterations, 1)
    given = dict(n_topics=n_topics, alpha=alpha, beta=beta, seed=p.get("seed") if seed is None else seed,
                 loglik_every=loglik_every, holdout=holdout, patience=patience)
    settings = _fresh_settings(cls, given, _method_options(cls, options), iterations, trained, parent)
    settings.pop("shards", None)  # recorded as used, which a tiny corpus may lower
    return p.get("method") == cls.name and p.get("iterations") == iterations and all(
        p.get(k) == v for k, v in settings.items())


def resumed_settings(source: str, corpus: Corpus, params: dict, given: dict, *, auto: tuple = ("auto",)) -> dict:
    """The settings stored in a checkpoint's ``params`` for the names in ``given``, after
    checking that it was written for ``corpus`` and that no given value (other than None or
    one of ``auto``) contradicts it."""
    if params.get("corpus_fingerprint") != corpus.fingerprint():
        raise LdacliError(
            f"{source}: expected a checkpoint of this corpus ({corpus.source}), found one of "
            f"another corpus ({params.get('corpus_source')}, fingerprint differs)"
        )
    settings = {name: params.get(name) for name in given}
    for name, value in given.items():
        if value is not None and value not in auto and value != settings[name]:
            raise SettingError(name, f"{source}: the checkpoint has {name}={settings[name]!r}, which cannot change "
                                     f"on resume (given {value!r})")
    return settings


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


def train(
    corpus: Corpus | ShardFolder,
    n_topics: int | None = None,
    *,
    method: str | None = None,
    iterations: int | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    seed: int | None = None,
    threads: int | None = None,
    loglik_every: int | None = None,
    holdout: float | None = None,
    patience: int | None = None,
    max_seconds: float | None = None,
    checkpoint: str | None = None,
    checkpoint_every: int = 0,
    resume: str | None = None,
    warm_start: str | None = None,
    progress: bool = False,
    callback: Callable[[int], None] | None = None,
    wait: float | None = None,
    scheduler=None,
    **options,
) -> Model:
    """Fit LDA to ``corpus`` by ``method`` and return the model.

    ``method`` is ``"cgs"`` (collapsed Gibbs sampling, the default), ``"vem"`` (variational
    EM) or ``"gibbs"`` (uncollapsed Gibbs sampling); each method's own settings are keyword
    ``options`` (see each class's ``OPTIONS`` and docstring in :mod:`ldacli.methods`:
    ``sampler``, ``shards``, ``optimize_interval``, ``optimize_burn_in`` for cgs;
    ``smoothed``, ``estimate_alpha``, ``estimate_eta``, ``estep_tol``, ``estep_max_iter``,
    ``em_tol``, ``estep_restart`` for vem; ``burn_in`` for gibbs). An option of another method
    raises :class:`~ldacli.errors.SettingError`; None means not given.

    Common settings: ``n_topics`` (20); ``iterations`` counts all steps, those before a resumed
    checkpoint included (default per method: 1000 sweeps, 100 EM iterations for vem);
    ``alpha`` the per-topic document-topic prior (0.1; the sum over topics is K x alpha) and
    ``beta`` the per-word topic-word prior (0.01), starting values where the method learns
    them; ``seed`` (fresh entropy, recorded as ``params["seed"]``, when None); ``threads``
    (default: all cores this process may use) never changes the result; ``loglik_every``
    steps between trace points (10; vem traces its ELBO every iteration). With ``holdout``
    (a fraction) and ``patience``, that fraction of the documents is held out and training
    stops when their document-completion perplexity, computed at every trace point, has not
    improved ``patience`` times in a row; the model is fitted to the rest. ``max_seconds``
    stops after the step during which that much time has passed (the result then depends on
    the machine's speed). Words of the vocabulary that never occur take no row in the model.

    ``warm_start`` (a model file) begins the run from that model (:func:`warm_start_state`):
    the vocabulary keeps its words' order (words gone from the corpus are left out, new ones
    appended), each token's first topic is drawn from its topics, its priors are the starting
    values unless ``alpha``/``beta`` are given, and topic k of the new model descends from its
    topic k. The model records its lineage, and how well the ids held (``params["id_stability"]``).

    With ``checkpoint``, the state is written there every ``checkpoint_every`` steps (if > 0),
    at the end, and when SIGINT/SIGTERM stops the run (raising :class:`TrainingInterrupted`);
    ``resume`` continues from such a file and gives exactly what an uninterrupted run gives.
    On resume the method and every setting but ``iterations``, ``threads``, ``max_seconds``
    and the checkpoint schedule come from the checkpoint (a different value is an error).
    ``callback(iteration)`` is called after every step. The model's params record
    ``iterations_done`` and ``stopped`` (one of :data:`STOPPED`). The checkpoint path is
    locked for the run (:mod:`ldacli.locking`): another run on it raises
    :class:`~ldacli.errors.LockedError`, or waits up to ``wait`` seconds. A checkpoint that
    cannot be written (a full disk) is reported and training goes on.

    ``scheduler`` runs the collapsed Gibbs sampler's shards on a Dask cluster
    (:mod:`ldacli.methods.distributed`): a scheduler's address, ``"local:N"`` for a local
    cluster of N worker processes, or a ``distributed.Client``; the result is the same as with
    threads. A lost cluster writes the checkpoint of the last finished sweep and raises.
    ``corpus`` may then be a :class:`~ldacli.shard_folder.ShardFolder` (from
    :func:`~ldacli.shard_folder.open_shard_folder`): the workers read the shard files, the
    client only the index (no warm start or holdout then).
    """
    with locked([checkpoint], wait=wait) as removed:
        for path in removed:
            log.warning("%s: removed, a temporary file left by a run that was killed", path)
        with cluster(scheduler) as client:
            run = _prepare(corpus, dict(n_topics=n_topics, alpha=alpha, beta=beta, seed=seed,
                                        loglik_every=loglik_every, holdout=holdout, patience=patience), options,
                           method=method, iterations=iterations, threads=threads, max_seconds=max_seconds,
                           checkpoint_every=checkpoint_every, resume=resume, warm_start=warm_start, client=client)
            try:
                model = _loop(run, checkpoint=checkpoint, progress=progress, callback=callback)
            finally:
                run.state.close()
    if run.parent is not None:
        model.params["id_stability"] = id_stability(run.parent, model)
    return model


@dataclass
class _Run:
    """A run ready to step: its method and state, settings, params, corpus, trace so far and
    stopping rules."""

    cls: type[Method]
    state: Method
    settings: dict
    params: dict
    fitted: Corpus
    iterations: int
    checkpoint_every: int
    max_seconds: float | None
    start: int
    trace_it: list[int]
    trace_ll: list[float]
    evaluator: HeldOutEvaluator | None
    stopper: EarlyStopping | None
    parent: Model | None


def _prepare(corpus: Corpus, given: dict, options: dict, *, method, iterations, threads, max_seconds,
             checkpoint_every, resume, warm_start, client=None) -> _Run:
    """Everything before the first step: settings checked or read from the checkpoint, the
    corpus as trained (unused words out, a warm start's vocabulary), the held-out slice, the
    memory check, the state."""
    ckpt = Checkpoint.load(resume) if resume else None
    cls = method_of(method, ckpt, resume)
    options = _method_options(cls, options)
    iterations = checks.count("iterations", cls.DEFAULT_ITERATIONS if iterations is None else iterations, 1)
    checkpoint_every = checks.count("checkpoint_every", checkpoint_every, 0)
    if max_seconds is not None:
        max_seconds = checks.positive("max_seconds", max_seconds)
    threads = check_threads(threads)
    if warm_start is not None and ckpt is not None:
        raise SettingError("warm_start", "warm_start begins a run and resume continues one: give one of them")
    if isinstance(corpus, ShardFolder):  # only its index is read: what needs the documents cannot run
        for name, value in (("warm_start", warm_start), ("holdout", given["holdout"])):
            if value is not None:
                raise SettingError(name, f"{name} needs the documents on the client, and the shard folder "
                                         f"{corpus.path} is read by the workers only: read it whole (without "
                                         f"scheduler) or leave {name} out")
    parent = Model.load(warm_start) if warm_start is not None else None
    corpus = _corpus_to_train(corpus, parent, warm_start, ckpt, resume)
    if ckpt is None:
        settings = _fresh_settings(cls, given, options, iterations, corpus, parent)
    else:
        given.update({name: options.get(name) for name in cls.OPTIONS})
        settings = resumed_settings(resume, corpus, ckpt.params, given)
        if iterations < ckpt.iteration:
            raise LdacliError(f"{resume}: the checkpoint is at iteration {ckpt.iteration}, past the {iterations} asked for")

    fitted, evaluator, stopper = corpus, None, None
    if settings["holdout"] is not None:
        fitted, held, _ = holdout_split(corpus, settings["holdout"], seed=settings["seed"])
        evaluator = HeldOutEvaluator(held, seed=settings["seed"])
        stored = ckpt.state.get("early_stopping") if ckpt is not None else None
        stopper = EarlyStopping.from_state(stored) if stored else EarlyStopping(settings["patience"])
    check_fits(f"training {cls.name} with {settings['n_topics']} topics on {fitted.n_words} words, "
               f"{fitted.n_docs} documents and {fitted.n_tokens} tokens",
               cls.estimate_bytes(fitted, settings, threads))
    start = warm_start_state(parent, fitted, settings) if parent is not None else None
    if client is not None and not cls.DISTRIBUTED:
        raise SettingError("scheduler", f"scheduler applies to method {', '.join(m.name for m in METHODS.values() if m.DISTRIBUTED)} "
                                        f"only, found method {cls.name}")
    state = cls(fitted, settings, iterations=iterations, threads=threads, checkpoint=ckpt, source=resume,
                start=start, **({"client": client} if client is not None else {}))
    params = {"method": cls.name, **settings, "iterations": iterations, "trace": cls.trace, **_provenance(corpus)}
    if max_seconds is not None:
        params["max_seconds"] = max_seconds
    if parent is not None:
        params.update(_lineage(parent, warm_start, corpus))
    elif ckpt is not None:  # a resumed warm start keeps its lineage, and checks its ids if it can
        params.update({k: ckpt.params[k] for k in ("warm_start", "lineage") if k in ckpt.params})
        parent = _parent_if_unchanged(params.get("warm_start"))
    trace_it = [int(i) for i in ckpt.loglik_iterations] if ckpt is not None else []
    trace_ll = [float(x) for x in ckpt.loglik_per_token] if ckpt is not None else []
    return _Run(cls, state, settings, params, fitted, iterations, checkpoint_every, max_seconds,
                ckpt.iteration if ckpt is not None else 0, trace_it, trace_ll, evaluator, stopper, parent)


def _loop(run: _Run, *, checkpoint: str | None, progress: bool, callback) -> Model:
    """The steps, the trace, early stopping, time limit, checkpoints and signals; the model."""
    cls, state, stopper, params = run.cls, run.state, run.stopper, run.params
    trace_it, trace_ll = run.trace_it, run.trace_ll
    every = run.settings["loglik_every"]

    def save_checkpoint(it: int) -> bool:
        """Write the checkpoint; a failure (a full disk, say) is reported and training goes on:
        a checkpoint is insurance, the model is the product. Returns whether it was written."""
        if not checkpoint:
            return False
        try:
            Checkpoint(params, it, state.rng_states(), np.array(trace_it, dtype=np.int64),
                       np.array(trace_ll, dtype=np.float64), state.alpha, state.beta, state.arrays(),
                       {"early_stopping": stopper.state() if stopper is not None else None},
                       vocab=list(run.fitted.vocab)).save(checkpoint)
            return True
        except OutputError as exc:
            log.warning("%s (at iteration %d; training goes on, the previous checkpoint is intact)", exc, it)
            return False

    bar = tqdm(total=run.iterations, initial=run.start, disable=not progress, file=sys.stderr,
               unit=cls.unit, dynamic_ncols=True, leave=False)
    it, stopped = run.start, "iterations"
    began = time.perf_counter()
    with bar, stop_requests() as stop:
        while (it < run.iterations and not (stopper is not None and stopper.should_stop)
               and not state.converged(trace_ll)):
            t0 = time.perf_counter()
            try:
                state.step(it + 1)
            except ClusterLost as exc:
                where = (f"checkpoint of sweep {it} written to {checkpoint}; continue with --resume {checkpoint}"
                         if save_checkpoint(it) else "no --checkpoint was given, progress is lost")
                raise LdacliError(f"{exc}; {where}") from None
            it += 1
            rate = run.fitted.n_tokens / max(time.perf_counter() - t0, 1e-9)
            if it % every == 0:
                trace_it.append(it)
                trace_ll.append(_checked_trace(cls, state))
                note = state.note()
                log.info("iteration %d: %s %.6f, %.3g tokens/s%s", it, cls.trace_label, trace_ll[-1], rate,
                         f", {note}" if note else "")
                if stopper is not None:
                    held_out = run.evaluator.perplexity(state.phi(), state.alpha)
                    log.info("iteration %d: held-out perplexity %.6g", it, held_out)
                    if stopper.observe(it, held_out):
                        log.info("%s", stopper.reason)
            bar.set_postfix_str(f"{rate / 1e6:.2f}M tok/s" + (f", {cls.trace_label} {trace_ll[-1]:.4f}" if trace_ll else ""))
            bar.update(1)
            if callback is not None:
                callback(it)
            if run.checkpoint_every and it % run.checkpoint_every == 0 and it < run.iterations:
                save_checkpoint(it)
            if stop["signal"] is not None:
                if save_checkpoint(it):
                    where = f"; checkpoint written to {checkpoint}, continue with --resume {checkpoint}"
                elif checkpoint:
                    where = f"; the checkpoint could not be written, progress since the last one in {checkpoint} is lost"
                else:
                    where = "; no --checkpoint was given, progress is lost"
                raise TrainingInterrupted(f"stopped by {stop['signal'].name} after iteration {it}{where}",
                                          int(stop["signal"]))
            if run.max_seconds is not None and time.perf_counter() - began >= run.max_seconds:
                stopped = "time limit"
                log.info("time limit of %g s reached after iteration %d", run.max_seconds, it)
                break
    if stopper is not None and stopper.should_stop:
        stopped = "early stopping"
    elif state.converged(trace_ll):
        stopped = "converged"
    save_checkpoint(it)
    # The model's trace ends at the last step; checkpoints keep only the regular points so
    # that a resumed run's trace equals an uninterrupted one's.
    if not trace_it or trace_it[-1] != it:
        trace_it.append(it)
        trace_ll.append(_checked_trace(cls, state))
    phi, theta, extra = state.result(it)
    params.update(extra, iterations_done=it, stopped=stopped)
    if stopper is not None:
        params.update(stopper.summary())
    return Model(
        phi=phi,
        theta=theta,
        alpha=np.array(state.alpha, dtype=np.float64),
        beta=float(state.beta),
        vocab=list(run.fitted.vocab),
        doc_ids=list(run.fitted.doc_ids),
        loglik_iterations=np.array(trace_it, dtype=np.int64),
        loglik_per_token=np.array(trace_ll, dtype=np.float64),
        params=params,
    )


# --- warm starts -----------------------------------------------------------------------------------

# Gibbs sweeps under the parent's topics that draw a warm start's first topics.
FOLD_IN_SWEEPS = 10
# The random stream of the fold-in, apart from every method's (those are children 0, 1, ...).
_FOLD_IN_STREAM = 2**32 - 1


def _grown_corpus(corpus: Corpus, parent: Model, source: str, notes: bool = True) -> Corpus:
    """``corpus`` over the parent's vocabulary order: the parent's words that still occur, in
    its order, then the new words in the corpus's order; says how many are new and gone."""
    present = set(corpus.vocab)
    known = set(parent.vocab)
    kept = [w for w in parent.vocab if w in present]
    new = [w for w in corpus.vocab if w not in known]
    if notes:
        log.warning("%s: warm start from %s: %d new words appended to its %d, %d of its words no longer occur",
                    corpus.source, source, len(new), parent.phi.shape[1], parent.phi.shape[1] - len(kept))
    grown, _ = corpus.align(kept + new)
    return grown


def _parent_if_unchanged(warm_start: dict | None) -> Model | None:
    """The parent model a warm start recorded, when its file is still there unchanged."""
    if not warm_start:
        return None
    path = warm_start.get("path", "")
    try:
        if os.path.isfile(path) and file_sha256(path) == warm_start.get("sha256"):
            return Model.load(path)
    except (OSError, LdacliError):
        pass
    log.warning("%s: the warm start's parent is gone or changed; topic ids are not checked against it", path)
    return None


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


def warm_start_state(parent: Model, corpus: Corpus, settings: dict) -> Start:
    """The first state of a run warm-started from ``parent`` on ``corpus`` (whose vocabulary
    begins with the parent's surviving words): every token's topic drawn by
    :data:`FOLD_IN_SWEEPS` Gibbs sweeps under the parent's topics (words the parent never saw
    weigh every topic alike, so their tokens follow their document and the prior), and the
    starting priors. Deterministic given the run's seed."""
    index = {w: i for i, w in enumerate(parent.vocab)}
    phi = np.ones((parent.n_topics, corpus.n_words))
    old = [(j, index[w]) for j, w in enumerate(corpus.vocab) if w in index]
    if old:
        cols, parent_cols = zip(*old)
        phi[:, list(cols)] = parent.phi[:, list(parent_cols)]
    alpha = np.broadcast_to(np.asarray(settings["alpha"], dtype=np.float64), (parent.n_topics,)).copy()
    words, doc_ptr = corpus.tokens()
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(settings["seed"], spawn_key=(_FOLD_IN_STREAM,))))
    z = fold_in(phi, alpha, words, doc_ptr, sweeps=FOLD_IN_SWEEPS, rng=rng)
    return Start(z, alpha, float(settings["beta"]))


def _lineage(parent: Model, path: str, corpus: Corpus) -> dict:
    """What a warm-started model records about where it comes from."""
    grown = len(set(corpus.vocab) - set(parent.vocab))
    this = {"path": os.path.abspath(path), "sha256": file_sha256(path),
            "corpus_fingerprint": parent.params.get("corpus_fingerprint"),
            "method": parent.params.get("method"), "n_topics": parent.n_topics}
    return {"warm_start": {**this, "new_words": grown,
                           "gone_words": len(set(parent.vocab) - set(corpus.vocab)),
                           "fold_in_sweeps": FOLD_IN_SWEEPS},
            "lineage": [this] + list(parent.params.get("lineage", []))[:MAX_LINEAGE - 1]}


# Generations of parents a model lists.
MAX_LINEAGE = 20


def id_stability(parent: Model, model: Model) -> dict:
    """How well a warm-started model kept its parent's topic ids: the Hungarian matching of its
    topics to the parent's (Jensen-Shannon distance); topics matched to another id are listed
    (and logged)."""
    matching = match_topics(parent, model)
    moved = [[a, b] for a, b in matching.pairs if a != b]
    own = {b: d for (a, b), d in zip(matching.pairs, matching.distances) if a == b}
    if moved:
        log.warning("warm start: %d of %d topics match another id of the parent better (new <- parent: %s)",
                    len(moved), model.n_topics, ", ".join(f"{b} <- {a}" for a, b in moved[:10]))
    distances = np.array(list(own.values())) if own else np.zeros(0)
    return {"kept": len(own), "topics": model.n_topics, "moved": moved,
            "median_distance": float(np.median(distances)) if distances.size else None,
            "max_distance": float(distances.max()) if distances.size else None}
