"""Training: collapsed Gibbs sampling for LDA, with checkpoints and exact resume.

The sampler state is the topic of every token; counts are derived from it. Each sweep is one call
to the sharded sampler (``ldacli.methods.sharded``); the log-likelihood, progress, checkpoints, time
limits and signals are handled here, between sweeps.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

import numpy as np
from scipy.special import gammaln
from tqdm import tqdm

from ldacli import __version__
from ldacli._cgs import doc_topic_lgamma
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.model import Checkpoint, Model
from ldacli.priors import optimize_alpha, optimize_beta
from ldacli.methods.sharded import SAMPLERS, ShardedSampler, choose_sampler, default_shards, shard_bounds
from ldacli.stopping import EarlyStopping, HeldOutEvaluator, holdout_split

log = logging.getLogger("ldacli")

DEFAULT_ALPHA = 0.1
DEFAULT_BETA = 0.01
DEFAULT_TOPICS = 20


class TrainingInterrupted(LdacliError):
    """Training stopped on SIGINT or SIGTERM after finishing the sweep under way."""


def word_topic_counts(words, z, n_words: int, n_topics: int) -> np.ndarray:
    codes = words.astype(np.int64) * n_topics + z
    return np.bincount(codes, minlength=n_words * n_topics).astype(np.int32).reshape(n_words, n_topics)


def doc_topic_counts(doc_ptr, z, n_topics: int) -> np.ndarray:
    D = doc_ptr.size - 1
    docs = np.repeat(np.arange(D, dtype=np.int64), np.diff(doc_ptr))
    return np.bincount(docs * n_topics + z, minlength=D * n_topics).astype(np.int32).reshape(D, n_topics)


def log_likelihood(sampler: ShardedSampler, alpha: np.ndarray, beta: float) -> float:
    """Joint log-likelihood log p(w, z | alpha, beta) with theta and phi integrated out."""
    V, K = sampler.V, sampler.K
    counts = sampler.counts
    lengths = np.diff(sampler.doc_ptr)
    D = lengths.size
    alpha_sum = float(alpha.sum())
    # log p(w | z): a zero count contributes lgamma(beta) - lgamma(beta) = 0
    nz = counts.nonzero_word_topic_counts()
    ll = K * gammaln(V * beta)
    ll += float(np.sum(gammaln(nz + beta))) - nz.size * gammaln(beta)
    ll -= float(np.sum(gammaln(counts.nk + V * beta)))
    # log p(z | alpha), from z without a D x K array
    ll += D * gammaln(alpha_sum) - float(np.sum(gammaln(lengths + alpha_sum)))
    ll += doc_topic_lgamma(sampler.doc_ptr, sampler.z, alpha, np.zeros(K, np.int32))
    return float(ll)


def _check_positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value) and value > 0):
        raise LdacliError(f"{name} must be a positive finite number, found {value!r}")
    return float(value)


def _check_count(name: str, value: int, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise LdacliError(f"{name} must be an integer >= {minimum}, found {value!r}")
    return int(value)


@contextmanager
def _stop_requests():
    """Turn SIGINT/SIGTERM into a flag checked between sweeps (main thread only)."""
    flag = {"signal": None}
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag["signal"] is not None:  # a second signal: stop now
            raise KeyboardInterrupt
        flag["signal"] = signal.Signals(signum).name

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def resumed_settings(resume: str, corpus: Corpus, params: dict, given: dict, *, auto: tuple = ()) -> dict:
    """The settings stored in a checkpoint's ``params`` for the names in ``given``, after
    checking that it was written for ``corpus`` and that no given value (other than None or
    one of ``auto``) contradicts it. Shared by the three training methods."""
    if params.get("corpus_fingerprint") != corpus.fingerprint():
        raise LdacliError(
            f"{resume}: expected a checkpoint of this corpus ({corpus.source}), found one of "
            f"another corpus ({params.get('corpus_source')}, fingerprint differs)"
        )
    settings = {name: params.get(name) for name in given}
    for name, value in given.items():
        if value is not None and value not in auto and value != settings[name]:
            raise LdacliError(f"{resume}: the checkpoint has {name}={settings[name]!r}, which cannot change on resume (given {value!r})")
    return settings


def stop_on_signal(stop: dict, it: int, save_checkpoint, checkpoint: str | None) -> None:
    """After a sweep: if SIGINT/SIGTERM arrived, write the checkpoint and raise TrainingInterrupted."""
    if stop["signal"] is None:
        return
    save_checkpoint(it)
    where = (f"; checkpoint written to {checkpoint}, continue with --resume {checkpoint}" if checkpoint
             else "; no --checkpoint was given, progress is lost")
    raise TrainingInterrupted(f"stopped by {stop['signal']} after iteration {it}{where}")


def _resolve(corpus: Corpus, given: dict, resume: str | None) -> tuple[dict, Checkpoint | None]:
    """The run's settings (from the arguments, or from the checkpoint) and the checkpoint."""
    if resume is None:
        K = _check_count("n_topics", DEFAULT_TOPICS if given["n_topics"] is None else given["n_topics"], 1)
        seed = given["seed"]
        settings = {
            "n_topics": K,
            "alpha": _check_positive("alpha", DEFAULT_ALPHA if given["alpha"] is None else given["alpha"]),
            "beta": _check_positive("beta", DEFAULT_BETA if given["beta"] is None else given["beta"]),
            "seed": np.random.SeedSequence().entropy if seed is None else _check_count("seed", seed, 0),
            "sampler": choose_sampler(K) if given["sampler"] in (None, "auto") else given["sampler"],
            "shards": default_shards(corpus.n_tokens) if given["shards"] is None else _check_count("shards", given["shards"], 1),
            "optimize_interval": _check_count("optimize_interval", given["optimize_interval"] or 0, 0),
            "optimize_burn_in": _check_count("optimize_burn_in", given["optimize_burn_in"] or 0, 0),
            "holdout": given["holdout"],
            "patience": given["patience"],
            "loglik_every": _check_count("loglik_every", 10 if given["loglik_every"] is None else given["loglik_every"], 1),
        }
        if settings["sampler"] not in SAMPLERS:
            raise LdacliError(f"sampler must be auto or one of {', '.join(SAMPLERS)}, found {settings['sampler']!r}")
        if (settings["holdout"] is None) != (settings["patience"] is None):
            raise LdacliError("holdout and patience go together: give both to stop early, or neither")
        return settings, None
    ckpt = Checkpoint.load(resume)
    return resumed_settings(resume, corpus, ckpt.params, given, auto=("auto",)), ckpt


def default_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def train(
    corpus: Corpus,
    n_topics: int | None = None,
    *,
    iterations: int = 1000,
    alpha: float | None = None,
    beta: float | None = None,
    seed: int | None = None,
    sampler: str = "auto",
    threads: int | None = None,
    shards: int | None = None,
    optimize_interval: int | None = None,
    optimize_burn_in: int | None = None,
    holdout: float | None = None,
    patience: int | None = None,
    checkpoint: str | None = None,
    checkpoint_every: int = 0,
    resume: str | None = None,
    loglik_every: int | None = None,
    max_seconds: float | None = None,
    progress: bool = False,
) -> Model:
    """Fit LDA to ``corpus`` by collapsed Gibbs sampling and return the model.

    ``alpha`` is the per-topic document-topic prior (symmetric; the sum over topics is
    ``n_topics * alpha``), ``beta`` the per-word topic-word prior. ``iterations`` counts all
    sweeps, including those done before a resumed checkpoint. Without ``seed``, fresh entropy is
    drawn and recorded in the model's params as ``seed`` so the run can be repeated.

    ``sampler`` is ``"dense"`` (O(K) per token), ``"sparse"`` (SparseLDA), ``"alias"``
    (Metropolis-Hastings with alias tables, O(1) per token) or ``"auto"`` (by K). Documents
    are split into ``shards`` (default: one per 100,000 tokens, at most 16) sampled in
    parallel by ``threads`` (default: all cores) as in AD-LDA; the result depends on the seed
    and the shards, never on the threads. ``shards=1`` is the exact sequential sampler.

    With ``optimize_interval`` N > 0, an asymmetric alpha and a symmetric beta are learned from
    the counts every N sweeps after ``optimize_burn_in`` sweeps (Minka's fixed point,
    :mod:`ldacli.priors`); ``alpha``/``beta`` are then the starting values. With ``holdout``
    (a fraction) and ``patience``, that fraction of the documents is held out and training
    stops when their document-completion perplexity, computed every ``loglik_every`` sweeps,
    has not improved ``patience`` times in a row; the model is fitted to the rest.
    ``loglik_every`` (default 10) sets how often the log-likelihood trace is taken.

    With ``checkpoint``, the sampler state is written there every ``checkpoint_every`` sweeps
    (if > 0), at the end, and when SIGINT/SIGTERM stops the run; ``resume`` continues from such a
    file and gives exactly what an uninterrupted run gives. Every setting above except the
    threads comes from the checkpoint on resume (passing a different value is an error).

    ``max_seconds`` stops training after the sweep during which that much time has passed
    (a budget for batch jobs; the result then depends on the machine's speed). The model's
    params record ``iterations_done`` and ``stopped`` (``"iterations"``, ``"time limit"`` or
    ``"early stopping"``).
    """
    iterations = _check_count("iterations", iterations, 1)
    if max_seconds is not None:
        max_seconds = _check_positive("max_seconds", max_seconds)
    checkpoint_every = _check_count("checkpoint_every", checkpoint_every, 0)
    threads = default_threads() if threads is None else _check_count("threads", threads, 1)
    if corpus.n_tokens == 0:
        raise LdacliError(f"{corpus.source}: expected a corpus with at least one token, found none")
    given = dict(n_topics=n_topics, alpha=alpha, beta=beta, seed=seed, sampler=sampler, shards=shards,
                 optimize_interval=optimize_interval, optimize_burn_in=optimize_burn_in,
                 holdout=holdout, patience=patience, loglik_every=loglik_every)
    settings, ckpt = _resolve(corpus, given, resume)
    K, entropy, loglik_every = settings["n_topics"], settings["seed"], settings["loglik_every"]
    params = {
        "method": "cgs",
        **settings,
        "iterations": iterations,
        "corpus_fingerprint": corpus.fingerprint(),
        "corpus_source": os.path.abspath(corpus.source) if corpus.source not in ("", "-") else corpus.source,
        "corpus_format": corpus.format,
        "n_docs": corpus.n_docs,
        "n_words": corpus.n_words,
        "n_tokens": corpus.n_tokens,
        "ldacli_version": __version__,
    }
    stopper = evaluator = None
    fitted = corpus
    if settings["holdout"] is not None:
        fitted, held, _ = holdout_split(corpus, settings["holdout"], seed=entropy)
        evaluator = HeldOutEvaluator(held, seed=entropy)
        stopper = EarlyStopping(settings["patience"]) if ckpt is None else EarlyStopping.from_state(ckpt.extra["early_stopping"])
    V = fitted.n_words
    words, doc_ptr = fitted.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    bounds = shard_bounds(doc_ptr, settings["shards"])
    n_shards = bounds.size - 1
    params["shards"] = n_shards

    # Stream 0 draws the initial topics; stream 1 + s samples shard s.
    streams = np.random.SeedSequence(entropy).spawn(n_shards + 1)
    rngs = [np.random.Generator(np.random.PCG64(ss)) for ss in streams]
    if ckpt is None:
        z = rngs[0].integers(0, K, size=words.size, dtype=np.int32)
        start = 0
        alpha_vec, beta = np.full(K, settings["alpha"]), settings["beta"]
        trace_it: list[int] = []
        trace_ll: list[float] = []
    else:
        if iterations < ckpt.iteration:
            raise LdacliError(f"{resume}: the checkpoint is at iteration {ckpt.iteration}, past the {iterations} asked for")
        if ckpt.z.shape != words.shape or (ckpt.z.size and (ckpt.z.min() < 0 or ckpt.z.max() >= K)):
            raise LdacliError(f"{resume}: expected {words.size} topic assignments in [0, {K}), found {ckpt.z.size} that do not fit")
        if len(ckpt.rng_state) != n_shards + 1:
            raise LdacliError(f"{resume}: expected {n_shards + 1} generator states, found {len(ckpt.rng_state)}")
        z = ckpt.z
        start = ckpt.iteration
        for rng, st in zip(rngs, ckpt.rng_state):
            rng.bit_generator.state = st
        alpha_vec, beta = np.asarray(ckpt.extra["alpha"], dtype=np.float64), float(ckpt.extra["beta"])
        trace_it = [int(i) for i in ckpt.loglik_iterations]
        trace_ll = [float(x) for x in ckpt.loglik_per_token]
    state = ShardedSampler(settings["sampler"], words, doc_ptr, z, V, K, alpha_vec, beta, bounds, rngs[1:], threads)
    n_tokens = words.size

    def save_checkpoint(it: int) -> None:
        if checkpoint:
            extra = {"alpha": alpha_vec.tolist(), "beta": beta}
            if stopper is not None:
                extra["early_stopping"] = stopper.state()
            Checkpoint(state.z, it, [r.bit_generator.state for r in rngs], np.array(trace_it, dtype=np.int64),
                       np.array(trace_ll), params, extra).save(checkpoint)

    bar = tqdm(total=iterations, initial=start, disable=not progress, file=sys.stderr,
               unit="sweep", dynamic_ncols=True, leave=False)
    it = start
    began = time.perf_counter()
    stopped = "iterations"
    interval, burn_in = settings["optimize_interval"], settings["optimize_burn_in"]
    try:
        with bar, _stop_requests() as stop:
            while it < iterations and not (stopper is not None and stopper.should_stop):
                t0 = time.perf_counter()
                state.sweep()
                it += 1
                rate = n_tokens / max(time.perf_counter() - t0, 1e-9)
                if interval and it > burn_in and it % interval == 0:
                    alpha_vec = optimize_alpha(doc_topic_counts(doc_ptr, state.z, K), np.diff(doc_ptr), alpha_vec)
                    beta = optimize_beta(state.counts.nonzero_word_topic_counts(), state.counts.nk, beta, n_words=V)
                    state.set_priors(alpha_vec, beta)
                    log.info("iteration %d: learned sum(alpha) %.4g, beta %.4g", it, alpha_vec.sum(), beta)
                if it % loglik_every == 0:
                    trace_it.append(it)
                    trace_ll.append(log_likelihood(state, alpha_vec, beta) / n_tokens)
                    log.info("iteration %d: log-likelihood/token %.4f, %.3g tokens/s", it, trace_ll[-1], rate)
                    if stopper is not None:
                        held_out = evaluator.perplexity(_phi(state, beta), alpha_vec)
                        log.info("iteration %d: held-out perplexity %.6g", it, held_out)
                        if stopper.observe(it, held_out):
                            stopped = "early stopping"
                            log.info("%s", stopper.reason)
                bar.set_postfix_str(f"{rate / 1e6:.2f}M tok/s" + (f", LL/token {trace_ll[-1]:.4f}" if trace_ll else ""))
                bar.update(1)
                if checkpoint_every and it % checkpoint_every == 0 and it < iterations:
                    save_checkpoint(it)
                stop_on_signal(stop, it, save_checkpoint, checkpoint)
                if max_seconds is not None and time.perf_counter() - began >= max_seconds:
                    stopped = "time limit"
                    log.info("time limit of %g s reached after iteration %d", max_seconds, it)
                    break
        if stopper is not None and stopper.should_stop:
            stopped = "early stopping"
        save_checkpoint(it)
        # The model's trace ends at the last sweep; checkpoints keep only the regular points so
        # that a resumed run's trace equals an uninterrupted one's.
        if not trace_it or trace_it[-1] != it:
            trace_it.append(it)
            trace_ll.append(log_likelihood(state, alpha_vec, beta) / n_tokens)
        params.update(iterations_done=it, stopped=stopped)
        if stopper is not None:
            params.update(stopper.summary())
        return _model(fitted, state, alpha_vec, beta, trace_it, trace_ll, params)
    finally:
        state.close()


def _phi(state: ShardedSampler, beta: float) -> np.ndarray:
    nk = state.counts.nk
    return (state.counts.word_topic_counts().T + beta) / (nk[:, None] + state.V * beta)


def _model(corpus: Corpus, state: ShardedSampler, alpha: np.ndarray, beta: float,
           trace_it: list[int], trace_ll: list[float], params: dict) -> Model:
    lengths = np.diff(state.doc_ptr)
    theta = (doc_topic_counts(state.doc_ptr, state.z, state.K) + alpha) / (lengths[:, None] + alpha.sum())
    return Model(
        phi=_phi(state, beta),
        theta=theta,
        alpha=alpha.copy(),
        beta=beta,
        vocab=list(corpus.vocab),
        doc_ids=list(corpus.doc_ids),
        loglik_iterations=np.array(trace_it, dtype=np.int64),
        loglik_per_token=np.array(trace_ll, dtype=np.float64),
        params=params,
    )
