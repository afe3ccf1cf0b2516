"""Training by the uncollapsed (blocked) Gibbs sampler, with checkpoints and exact resume.

The chain's state is theta (D, K) and phi (K topics over V words). A sweep draws every token's
topic given theta and phi -- independent across tokens, so it runs on fixed document ranges in
parallel without approximation -- then ``theta_d ~ Dirichlet(alpha + n_d)`` (in the same
kernel call, per document) and ``phi_k ~ Dirichlet(beta + n_k)`` (per topic). Every document
range and every topic has its own random stream spawned from the seed, so the result does not
depend on the number of threads; the word-topic counts of the ranges are integers, whose sum
does not depend on order. The model holds the posterior means: theta and phi averaged over the
sweeps after the burn-in.
"""

from __future__ import annotations

import json
import logging
import queue
import sys
import time

import numpy as np
from tqdm import tqdm

from ldacli import __version__
from ldacli._ugibbs import doc_loglik, draw_topic, draw_z_theta
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.model import Model, TrainingState
from ldacli.parallel import CHUNK_NNZ, Pool, check_threads, doc_ranges
from ldacli.methods.cgs import (DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_TOPICS, _check_count, _check_positive, _stop_requests,
                          resumed_settings, stop_on_signal)

log = logging.getLogger("ldacli")

DEFAULT_ITERATIONS = 1000

# Arrays of an uncollapsed Gibbs checkpoint (kind "checkpoint", params["method"] == "gibbs").
STATE_ARRAYS = ("theta", "phi_wk", "theta_sum", "phi_sum", "iteration", "rng_states",
                "loglik_iterations", "loglik_per_token")


def default_burn_in(iterations: int) -> int:
    """Sweeps discarded before averaging when no burn-in is given: the first half."""
    return iterations // 2


def _resolve(corpus: Corpus, given: dict, iterations: int, resume: str | None):
    if resume is None:
        s = {
            "n_topics": _check_count("n_topics", DEFAULT_TOPICS if given["n_topics"] is None else given["n_topics"], 1),
            "alpha": _check_positive("alpha", DEFAULT_ALPHA if given["alpha"] is None else given["alpha"]),
            "beta": _check_positive("beta", DEFAULT_BETA if given["beta"] is None else given["beta"]),
            "burn_in": _check_count("burn_in", default_burn_in(iterations) if given["burn_in"] is None else given["burn_in"], 0),
            "seed": np.random.SeedSequence().entropy if given["seed"] is None else _check_count("seed", given["seed"], 0),
        }
        return s, None
    state = TrainingState.load(resume, "gibbs", STATE_ARRAYS)
    s = resumed_settings(resume, corpus, state.params, given)
    K = int(s["n_topics"])
    shapes = {"theta": (corpus.n_docs, K), "theta_sum": (corpus.n_docs, K),
              "phi_wk": (corpus.n_words, K), "phi_sum": (corpus.n_words, K)}
    for name, shape in shapes.items():
        if state.arrays[name].shape != shape:
            raise LdacliError(f"{resume}: expected '{name}' of shape {shape}, found {state.arrays[name].shape}")
    return s, state


def train_gibbs(
    corpus: Corpus,
    n_topics: int | None = None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    burn_in: int | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    seed: int | None = None,
    threads: int | None = None,
    checkpoint: str | None = None,
    checkpoint_every: int = 0,
    resume: str | None = None,
    loglik_every: int = 10,
    progress: bool = False,
) -> Model:
    """Fit LDA to ``corpus`` with the uncollapsed Gibbs sampler and return the model.

    ``iterations`` counts all sweeps (including those before a resumed checkpoint); theta and phi
    are averaged over the sweeps after the first ``burn_in`` (default: half of ``iterations``).
    ``alpha`` (per topic) and ``beta`` (per word) are the symmetric priors. The chain starts from
    uniform theta and phi, so the first sweep's topics are uniformly random. ``threads``
    (default: all cores) only change the speed, never the result. Checkpoints and ``resume`` work
    as in :func:`ldacli.methods.cgs`; on resume K, alpha, beta, burn-in and seed come from the
    checkpoint. The trace holds ``log p(w | theta, phi)`` per token of the current sample every
    ``loglik_every`` sweeps and at the end.
    """
    iterations = _check_count("iterations", iterations, 1)
    checkpoint_every = _check_count("checkpoint_every", checkpoint_every, 0)
    loglik_every = _check_count("loglik_every", loglik_every, 1)
    threads = check_threads(threads)
    if corpus.n_tokens == 0:
        raise LdacliError(f"{corpus.source}: expected a corpus with at least one token, found none")
    given = {"n_topics": n_topics, "alpha": alpha, "beta": beta, "burn_in": burn_in, "seed": seed}
    s, state = _resolve(corpus, given, iterations, resume)
    K, V, D = int(s["n_topics"]), corpus.n_words, corpus.n_docs
    if s["burn_in"] >= iterations:
        raise LdacliError(f"burn_in must be smaller than iterations, found burn_in {s['burn_in']} >= iterations {iterations}")
    n_tokens = corpus.n_tokens
    c = corpus.counts
    indptr = np.ascontiguousarray(c.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(c.indices, dtype=np.int32)
    counts = np.ascontiguousarray(c.data, dtype=np.int32)
    ranges = doc_ranges(indptr)
    params = {
        "method": "gibbs",
        "n_topics": K,
        "alpha": s["alpha"],
        "beta": s["beta"],
        "iterations": iterations,
        "burn_in": s["burn_in"],
        "seed": s["seed"],
        "chunk_nnz": CHUNK_NNZ,
        "trace": "log_p_w_given_theta_phi_per_token",
        "corpus_fingerprint": corpus.fingerprint(),
        "corpus_source": corpus.source,
        "corpus_format": corpus.format,
        "n_docs": D,
        "n_words": V,
        "n_tokens": n_tokens,
        "loglik_every": loglik_every,
        "ldacli_version": __version__,
    }
    alpha_vec = np.full(K, s["alpha"])
    beta = float(s["beta"])
    streams = np.random.SeedSequence(s["seed"]).spawn(len(ranges) + K)
    rngs = [np.random.Generator(np.random.PCG64(ss)) for ss in streams]
    if state is None:
        theta = np.full((D, K), 1.0 / K)
        phi_wk = np.full((V, K), 1.0 / V)
        theta_sum = np.zeros((D, K))
        phi_sum = np.zeros((V, K))
        start, trace_it, trace_ll = 0, [], []
    else:
        it0 = int(state.arrays["iteration"])
        if iterations < it0:
            raise LdacliError(f"{resume}: the checkpoint is at iteration {it0}, past the {iterations} asked for")
        rng_states = json.loads(str(state.arrays["rng_states"]))
        if len(rng_states) != len(rngs):
            raise LdacliError(f"{resume}: expected {len(rngs)} random streams, found {len(rng_states)} (written with another chunk size)")
        for rng, st in zip(rngs, rng_states):
            rng.bit_generator.state = st
        theta = np.ascontiguousarray(state.arrays["theta"], dtype=np.float64)
        phi_wk = np.ascontiguousarray(state.arrays["phi_wk"], dtype=np.float64)
        theta_sum = np.ascontiguousarray(state.arrays["theta_sum"], dtype=np.float64)
        phi_sum = np.ascontiguousarray(state.arrays["phi_sum"], dtype=np.float64)
        start = it0
        trace_it = [int(i) for i in state.arrays["loglik_iterations"]]
        trace_ll = [float(x) for x in state.arrays["loglik_per_token"]]

    buffers: queue.SimpleQueue = queue.SimpleQueue()
    all_buffers = [np.zeros((V, K), dtype=np.int32) for _ in range(min(threads, len(ranges)))]
    for b in all_buffers:
        buffers.put(b)
    phi_kv = np.empty((K, V))
    doc_ll = np.empty(D)
    doc_rngs = rngs[:len(ranges)]
    topic_rngs = rngs[len(ranges):]

    def z_task(i):
        a, b = ranges[i]
        nwk = buffers.get()
        try:
            draw_z_theta(indptr, indices, counts, theta, phi_wk, alpha_vec, a, b, nwk,
                         np.empty(K, dtype=np.int32), np.empty(2 * K), doc_rngs[i])
        finally:
            buffers.put(nwk)

    def loglik(pool) -> float:
        pool.map(lambda r: doc_loglik(indptr, indices, counts, theta, phi_wk, r[0], r[1], doc_ll), ranges)
        return float(np.sum(doc_ll)) / n_tokens

    def save_checkpoint(it: int) -> None:
        if checkpoint:
            TrainingState({
                "theta": theta, "phi_wk": phi_wk, "theta_sum": theta_sum, "phi_sum": phi_sum,
                "iteration": np.int64(it),
                "rng_states": np.str_(json.dumps([r.bit_generator.state for r in rngs], sort_keys=True)),
                "loglik_iterations": np.array(trace_it, dtype=np.int64),
                "loglik_per_token": np.array(trace_ll, dtype=np.float64),
            }, params).save(checkpoint)

    bar = tqdm(total=iterations, initial=start, disable=not progress, file=sys.stderr,
               unit="sweep", dynamic_ncols=True, leave=False)
    it = start
    with bar, _stop_requests() as stop, Pool(threads) as pool:
        while it < iterations:
            t0 = time.perf_counter()
            for b in all_buffers:
                b.fill(0)
            pool.map(z_task, range(len(ranges)))
            nwk = all_buffers[0].copy()
            for b in all_buffers[1:]:
                nwk += b
            pool.map(lambda k: draw_topic(nwk, k, beta, phi_kv[k], topic_rngs[k]), range(K))
            phi_wk = np.ascontiguousarray(phi_kv.T)
            it += 1
            if it > s["burn_in"]:
                theta_sum += theta
                phi_sum += phi_wk
            rate = n_tokens / max(time.perf_counter() - t0, 1e-9)
            if it % loglik_every == 0:
                trace_it.append(it)
                trace_ll.append(loglik(pool))
                log.info("iteration %d: log p(w | theta, phi)/token %.4f, %.3g tokens/s", it, trace_ll[-1], rate)
            bar.set_postfix_str(f"{rate / 1e6:.2f}M tok/s" + (f", LL/token {trace_ll[-1]:.4f}" if trace_ll else ""))
            bar.update(1)
            if checkpoint_every and it % checkpoint_every == 0 and it < iterations:
                save_checkpoint(it)
            stop_on_signal(stop, it, save_checkpoint, checkpoint)
        save_checkpoint(it)
        if not trace_it or trace_it[-1] != it:
            trace_it.append(it)
            trace_ll.append(loglik(pool))
    kept = it - s["burn_in"]
    return Model(
        phi=np.ascontiguousarray((phi_sum / kept).T),
        theta=theta_sum / kept,
        alpha=alpha_vec,
        beta=beta,
        vocab=list(corpus.vocab),
        doc_ids=list(corpus.doc_ids),
        loglik_iterations=np.array(trace_it, dtype=np.int64),
        loglik_per_token=np.array(trace_ll, dtype=np.float64),
        params=params,
    )
