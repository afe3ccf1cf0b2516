"""Training: collapsed Gibbs sampling for LDA, with checkpoints and exact resume.

The sampler state is the topic of every token; counts are derived from it. Python allocates all
arrays and calls the Cython kernel once per sweep; the log-likelihood, progress, checkpoints and
signals are handled here, between sweeps.
"""

from __future__ import annotations

import logging
import math
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln
from tqdm import tqdm

from ldacli import __version__
from ldacli._gibbs import cgs_sweep
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.model import Checkpoint, Model

log = logging.getLogger("ldacli")

DEFAULT_ALPHA = 0.1
DEFAULT_BETA = 0.01
DEFAULT_TOPICS = 20


class TrainingInterrupted(LdacliError):
    """Training stopped on SIGINT or SIGTERM after finishing the sweep under way."""


@dataclass
class GibbsState:
    """Assignments and the counts derived from them, for a corpus's token arrays."""

    words: np.ndarray  # (N,) int32
    doc_ptr: np.ndarray  # (D+1,) int64
    z: np.ndarray  # (N,) int32
    nwk: np.ndarray  # (V, K) int32, word-major
    ndk: np.ndarray  # (D, K) int32
    nk: np.ndarray  # (K,) int32

    @classmethod
    def from_assignments(cls, words, doc_ptr, z, n_words: int, n_topics: int) -> "GibbsState":
        D = doc_ptr.size - 1
        docs = np.repeat(np.arange(D, dtype=np.int64), np.diff(doc_ptr))
        nwk = np.bincount(words.astype(np.int64) * n_topics + z, minlength=n_words * n_topics)
        ndk = np.bincount(docs * n_topics + z, minlength=D * n_topics)
        return cls(
            words=words,
            doc_ptr=doc_ptr,
            z=z,
            nwk=nwk.astype(np.int32).reshape(n_words, n_topics),
            ndk=ndk.astype(np.int32).reshape(D, n_topics),
            nk=np.bincount(z, minlength=n_topics).astype(np.int32),
        )


def log_likelihood(state: GibbsState, alpha: np.ndarray, beta: float) -> float:
    """Joint log-likelihood log p(w, z | alpha, beta) with theta and phi integrated out."""
    V, K = state.nwk.shape
    D = state.ndk.shape[0]
    lengths = np.diff(state.doc_ptr)
    alpha_sum = float(alpha.sum())
    # log p(w | z): only non-zero counts contribute beyond the constant terms.
    nz = state.nwk[state.nwk > 0]
    ll = K * (gammaln(V * beta) - V * gammaln(beta))
    ll += float(np.sum(gammaln(nz + beta))) - nz.size * gammaln(beta)
    ll -= float(np.sum(gammaln(state.nk + V * beta)))
    # log p(z | alpha)
    ll += D * (gammaln(alpha_sum) - float(np.sum(gammaln(alpha))))
    ll += float(np.sum(gammaln(state.ndk + alpha)))
    ll -= float(np.sum(gammaln(lengths + alpha_sum)))
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


def _resolve(corpus: Corpus, n_topics, alpha, beta, seed, resume: str | None):
    """Effective parameters and the starting checkpoint (None for a fresh run)."""
    if resume is None:
        K = _check_count("n_topics", DEFAULT_TOPICS if n_topics is None else n_topics, 1)
        a = _check_positive("alpha", DEFAULT_ALPHA if alpha is None else alpha)
        b = _check_positive("beta", DEFAULT_BETA if beta is None else beta)
        if seed is None:
            entropy = np.random.SeedSequence().entropy
        else:
            entropy = _check_count("seed", seed, 0)
        return K, np.full(K, a), b, entropy, None
    ckpt = Checkpoint.load(resume)
    p = ckpt.params
    if p.get("corpus_fingerprint") != corpus.fingerprint():
        raise LdacliError(
            f"{resume}: expected a checkpoint of this corpus ({corpus.source}), found one of "
            f"another corpus ({p.get('corpus_source')}, fingerprint differs)"
        )
    given = {"n_topics": n_topics, "alpha": alpha, "beta": beta, "seed": seed}
    stored = {"n_topics": p["n_topics"], "alpha": p["alpha"], "beta": p["beta"], "seed": p["seed"]}
    for name, value in given.items():
        if value is not None and value != stored[name]:
            raise LdacliError(f"{resume}: the checkpoint has {name}={stored[name]!r}, which cannot change on resume (given {value!r})")
    if ckpt.z.shape != (corpus.n_tokens,) or (ckpt.z.size and (ckpt.z.min() < 0 or ckpt.z.max() >= p["n_topics"])):
        raise LdacliError(f"{resume}: expected {corpus.n_tokens} topic assignments in [0, {p['n_topics']}), found {ckpt.z.size} that do not fit")
    K = int(p["n_topics"])
    return K, np.full(K, float(p["alpha"])), float(p["beta"]), int(p["seed"]), ckpt




def train(
    corpus: Corpus,
    n_topics: int | None = None,
    *,
    iterations: int = 1000,
    alpha: float | None = None,
    beta: float | None = None,
    seed: int | None = None,
    checkpoint: str | None = None,
    checkpoint_every: int = 0,
    resume: str | None = None,
    loglik_every: int = 10,
    progress: bool = False,
) -> Model:
    """Fit LDA to ``corpus`` by collapsed Gibbs sampling and return the model.

    ``alpha`` is the per-topic document-topic prior (symmetric; the sum over topics is
    ``n_topics * alpha``), ``beta`` the per-word topic-word prior. ``iterations`` counts all
    sweeps, including those done before a resumed checkpoint. Without ``seed``, fresh entropy is
    drawn and recorded in the model's params as ``seed`` so the run can be repeated.

    With ``checkpoint``, the sampler state is written there every ``checkpoint_every`` sweeps
    (if > 0), at the end, and when SIGINT/SIGTERM stops the run; ``resume`` continues from such a
    file and gives exactly what an uninterrupted run gives. n_topics, alpha, beta and seed come
    from the checkpoint on resume (passing a different value is an error).
    """
    iterations = _check_count("iterations", iterations, 1)
    checkpoint_every = _check_count("checkpoint_every", checkpoint_every, 0)
    loglik_every = _check_count("loglik_every", loglik_every, 1)
    if corpus.n_tokens == 0:
        raise LdacliError(f"{corpus.source}: expected a corpus with at least one token, found none")
    K, alpha_vec, beta, entropy, ckpt = _resolve(corpus, n_topics, alpha, beta, seed, resume)
    V = corpus.n_words
    words, doc_ptr = corpus.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    params = {
        "method": "cgs",
        "sampler": "dense",
        "n_topics": K,
        "alpha": float(alpha_vec[0]),
        "beta": beta,
        "iterations": iterations,
        "seed": entropy,
        "corpus_fingerprint": corpus.fingerprint(),
        "corpus_source": corpus.source,
        "corpus_format": corpus.format,
        "n_docs": corpus.n_docs,
        "n_words": V,
        "n_tokens": corpus.n_tokens,
        "loglik_every": loglik_every,
        "ldacli_version": __version__,
    }

    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
    if ckpt is None:
        z = rng.integers(0, K, size=words.size, dtype=np.int32)
        start = 0
        trace_it: list[int] = []
        trace_ll: list[float] = []
    else:
        if iterations < ckpt.iteration:
            raise LdacliError(f"{resume}: the checkpoint is at iteration {ckpt.iteration}, past the {iterations} asked for")
        z = ckpt.z
        start = ckpt.iteration
        rng.bit_generator.state = ckpt.rng_state
        trace_it = [int(i) for i in ckpt.loglik_iterations]
        trace_ll = [float(x) for x in ckpt.loglik_per_token]
    state = GibbsState.from_assignments(words, doc_ptr, z, V, K)
    work = np.zeros(2 * K, dtype=np.float64)
    n_tokens = words.size

    def save_checkpoint(it: int) -> None:
        if checkpoint:
            Checkpoint(state.z, it, rng.bit_generator.state, np.array(trace_it, dtype=np.int64),
                       np.array(trace_ll), params).save(checkpoint)

    bar = tqdm(total=iterations, initial=start, disable=not progress, file=sys.stderr,
               unit="sweep", dynamic_ncols=True, leave=False)
    it = start
    with bar, _stop_requests() as stop:
        while it < iterations:
            t0 = time.perf_counter()
            cgs_sweep(state.words, state.doc_ptr, state.z, state.nwk, state.ndk, state.nk,
                      alpha_vec, beta, V * beta, work, rng)
            it += 1
            rate = n_tokens / max(time.perf_counter() - t0, 1e-9)
            if it % loglik_every == 0:
                trace_it.append(it)
                trace_ll.append(log_likelihood(state, alpha_vec, beta) / n_tokens)
                log.info("iteration %d: log-likelihood/token %.4f, %.3g tokens/s", it, trace_ll[-1], rate)
            bar.set_postfix_str(f"{rate / 1e6:.2f}M tok/s" + (f", LL/token {trace_ll[-1]:.4f}" if trace_ll else ""))
            bar.update(1)
            if checkpoint_every and it % checkpoint_every == 0 and it < iterations:
                save_checkpoint(it)
            if stop["signal"] is not None:
                save_checkpoint(it)
                where = f"; checkpoint written to {checkpoint}, continue with --resume {checkpoint}" if checkpoint else "; no --checkpoint was given, progress is lost"
                raise TrainingInterrupted(f"stopped by {stop['signal']} after iteration {it}{where}")
    save_checkpoint(it)
    # The model's trace ends at the last sweep; checkpoints keep only the regular points so
    # that a resumed run's trace equals an uninterrupted one's.
    if not trace_it or trace_it[-1] != it:
        trace_it.append(it)
        trace_ll.append(log_likelihood(state, alpha_vec, beta) / n_tokens)
    return _model(corpus, state, alpha_vec, beta, trace_it, trace_ll, params)


def _model(corpus: Corpus, state: GibbsState, alpha: np.ndarray, beta: float,
           trace_it: list[int], trace_ll: list[float], params: dict) -> Model:
    V = state.nwk.shape[0]
    phi = (state.nwk.T + beta) / (state.nk[:, None] + V * beta)
    lengths = np.diff(state.doc_ptr)
    theta = (state.ndk + alpha) / (lengths[:, None] + alpha.sum())
    return Model(
        phi=phi,
        theta=theta,
        alpha=alpha.copy(),
        beta=beta,
        vocab=list(corpus.vocab),
        doc_ids=list(corpus.doc_ids),
        loglik_iterations=np.array(trace_it, dtype=np.int64),
        loglik_per_token=np.array(trace_ll, dtype=np.float64),
        params=params,
    )
