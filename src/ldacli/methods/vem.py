"""Training by variational EM (Blei, Ng & Jordan 2003), with checkpoints and exact resume.

Each EM iteration is an E-step over every document (``ldacli._vem.estep``, run on fixed
document ranges on a thread pool, warm-started from the previous iteration's gamma), the
evidence lower bound (ELBO) of the result, and an M-step: the topics from the expected counts
(``ldacli._vem.word_stats``, on fixed word ranges), then alpha, and in the smoothed model eta,
by Newton's method. Every step is a coordinate ascent on the ELBO, so the trace of the ELBO
never decreases. Python allocates every array; checkpoints, signals and progress are handled
here, between kernel calls.

Two models (``smoothed``):

* plain (section 5.3 of the paper): topics ``beta`` (K, V) are parameters, the M-step sets
  ``beta_kw`` proportional to the expected counts;
* smoothed (section 5.4, the default): ``beta_k ~ Dirichlet(eta)`` with a variational Dirichlet
  ``lambda_k``; the E-step uses ``exp(E[log beta_kw])``, the update is ``lambda = eta +
  expected counts``, and the model's topics are the posterior means ``lambda_k / sum(lambda_k)``.
"""

from __future__ import annotations

import logging
import math
import sys
import time

import numpy as np
from scipy.special import digamma, gammaln, polygamma
from tqdm import tqdm

from ldacli import __version__
from ldacli._vem import estep, word_stats
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.model import Model, TrainingState
from ldacli.parallel import Pool, check_threads, doc_ranges
from ldacli.methods.cgs import (DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_TOPICS, _check_count, _check_positive, _stop_requests,
                          resumed_settings, stop_on_signal)

log = logging.getLogger("ldacli")

DEFAULT_ITERATIONS = 100
DEFAULT_ESTEP_TOL = 5e-3
DEFAULT_ESTEP_MAX_ITER = 10
DEFAULT_EM_TOL = 1e-4
DEFAULT_ESTEP_RESTART = 1.0

# Arrays of a variational EM checkpoint (kind "checkpoint", params["method"] == "vem").
STATE_ARRAYS = ("topics", "gamma", "alpha", "eta", "iteration", "loglik_iterations", "loglik_per_token")


# --- Newton's method for Dirichlet parameters -------------------------------------------------

def dirichlet_objective(alpha: np.ndarray, ss: np.ndarray, n: float) -> float:
    """The part of the ELBO that depends on a Dirichlet parameter ``alpha`` (K,):
    ``n * (lgamma(sum alpha) - sum lgamma(alpha)) + sum((alpha - 1) * ss)`` where ``n`` is the
    number of draws (documents) and ``ss[k] = sum over draws of E[log theta_k]``."""
    return float(n * (gammaln(alpha.sum()) - gammaln(alpha).sum()) + np.dot(alpha - 1.0, ss))


def newton_step(alpha: np.ndarray, ss: np.ndarray, n: float) -> np.ndarray:
    """``H^-1 g`` for :func:`dirichlet_objective` at ``alpha``, in O(K).

    The gradient is ``g = n (psi(sum alpha) - psi(alpha)) + ss`` and the Hessian
    ``H = diag(h) + z 1 1^T`` with ``h = -n psi'(alpha)`` and ``z = n psi'(sum alpha)``; by the
    Sherman-Morrison formula ``(H^-1 g)_k = (g_k - c) / h_k`` with
    ``c = sum(g / h) / (1 / z + sum(1 / h))`` (Blei et al. 2003, appendix A.2). The Newton
    update is ``alpha - H^-1 g``.
    """
    total = alpha.sum()
    g = n * (digamma(total) - digamma(alpha)) + ss
    h = -n * polygamma(1, alpha)
    z = n * polygamma(1, total)
    c = np.sum(g / h) / (1.0 / z + np.sum(1.0 / h))
    return (g - c) / h


def _ascend(x, objective, step, max_iter: int = 100, tol: float = 1e-10):
    """Newton's method with a safeguard: each step is halved until the point stays positive and
    the objective does not decrease; stops when a step moves x by less than ``tol`` relative,
    or no step helps."""
    f = objective(x)
    for _ in range(max_iter):
        s = step(x)
        t = 1.0
        while True:
            new = x - t * s
            if np.all(new > 0) and np.all(np.isfinite(new)):
                fn = objective(new)
                if fn >= f:
                    break
            t *= 0.5
            if t < 1e-12:
                return x
        done = np.max(np.abs(new - x)) <= tol * np.max(np.abs(x))
        x, f = new, fn
        if done:
            break
    return x


def optimize_dirichlet(alpha: np.ndarray, ss: np.ndarray, n: float) -> np.ndarray:
    """The alpha > 0 that maximises :func:`dirichlet_objective`, by safeguarded Newton steps
    (:func:`newton_step`) from ``alpha``; never lowers the objective."""
    return _ascend(np.asarray(alpha, dtype=np.float64),
                   lambda a: dirichlet_objective(a, ss, n), lambda a: newton_step(a, ss, n))


def optimize_symmetric_dirichlet(eta: float, ss_total: float, n: float, dim: int) -> float:
    """The scalar eta > 0 of a symmetric Dirichlet over ``dim`` outcomes that maximises
    ``n (lgamma(dim eta) - dim lgamma(eta)) + (eta - 1) ss_total``, by the same safeguarded
    Newton method (here H and g are scalars)."""
    def objective(e):
        e = float(e[0])
        return float(n * (gammaln(dim * e) - dim * gammaln(e)) + (e - 1.0) * ss_total)

    def step(e):
        e = float(e[0])
        g = n * dim * (digamma(dim * e) - digamma(e)) + ss_total
        h = n * dim * (dim * polygamma(1, dim * e) - polygamma(1, e))
        return np.array([g / h])

    return float(_ascend(np.array([float(eta)]), objective, step)[0])


# --- the corpus as the kernels want it ---------------------------------------------------------

class _Arrays:
    """The corpus as CSR (by document) and CSC (by word) arrays, plus the fixed work ranges."""

    def __init__(self, corpus: Corpus):
        c = corpus.counts
        self.indptr = np.ascontiguousarray(c.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(c.indices, dtype=np.int32)
        self.counts = np.ascontiguousarray(c.data, dtype=np.int32)
        order = np.argsort(self.indices, kind="stable")
        self.csr_pos = np.ascontiguousarray(order, dtype=np.int64)
        docs = np.repeat(np.arange(corpus.n_docs, dtype=np.int32), np.diff(self.indptr))
        self.rows = np.ascontiguousarray(docs[order])
        self.colptr = np.zeros(corpus.n_words + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.indices, minlength=corpus.n_words), out=self.colptr[1:])
        self.doc_ranges = doc_ranges(self.indptr)
        self.word_ranges = doc_ranges(self.colptr)
        self.max_len = int(np.diff(self.indptr).max(initial=0))  # most unique words in a document
        self.nonempty = np.asarray(c.sum(axis=1)).ravel() > 0


def _initial_topics(n_words: int, n_topics: int, rng: np.random.Generator) -> np.ndarray:
    """Expected counts (V, K) to start from: independent Gamma(100, 1/100) draws, so every topic
    starts near uniform over the vocabulary with about 10% noise to break the symmetry (as in
    Hoffman et al.'s online LDA and scikit-learn). Near-uniform starts measured better than
    random hard or soft assignments, which leave variational EM in poorer local optima."""
    return rng.gamma(100.0, 0.01, size=(n_words, n_topics))


def _topics_from_stats(sstats: np.ndarray, smoothed: bool, eta: float) -> np.ndarray:
    """The M-step's topic update: lambda = eta + sstats (smoothed) or beta (V, K), each column
    the expected counts normalised (a topic with no mass at all becomes uniform)."""
    if smoothed:
        return eta + sstats
    totals = sstats.sum(axis=0)
    out = np.full_like(sstats, 1.0 / sstats.shape[0])
    live = totals > 0
    out[:, live] = sstats[:, live] / totals[live]
    return out


def _for_estep(topics: np.ndarray, smoothed: bool, eta: float) -> tuple[np.ndarray, float]:
    """What the E-step multiplies by (V, K): beta, or exp(E[log beta]) under lambda; and the
    ELBO terms that involve only the topics (0 for the plain model)."""
    if not smoothed:
        return topics, 0.0
    V, K = topics.shape
    lam_sum = topics.sum(axis=0)
    elog = digamma(topics) - digamma(lam_sum)
    term = (K * (gammaln(V * eta) - V * gammaln(eta)) + float(np.sum((eta - topics) * elog))
            + float(np.sum(gammaln(topics))) - float(np.sum(gammaln(lam_sum))))
    return np.exp(elog), float(term)


def _check_tol(name: str, value: float) -> float:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0):
        raise LdacliError(f"{name} must be a finite number >= 0, found {value!r}")
    return float(value)


def _check_fraction(name: str, value: float) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not (isinstance(value, (int, float, np.floating, np.integer)) and 0 <= value <= 1):
        raise LdacliError(f"{name} must be a number in [0, 1], found {value!r}")
    return float(value)


def _resolve(corpus: Corpus, given: dict, resume: str | None):
    """Effective settings (a dict) and the checkpoint to start from (None for a fresh run)."""
    if resume is None:
        s = {
            "n_topics": _check_count("n_topics", DEFAULT_TOPICS if given["n_topics"] is None else given["n_topics"], 1),
            "alpha": _check_positive("alpha", DEFAULT_ALPHA if given["alpha"] is None else given["alpha"]),
            "beta": _check_positive("beta", DEFAULT_BETA if given["beta"] is None else given["beta"]),
            "smoothed": True if given["smoothed"] is None else bool(given["smoothed"]),
            "estimate_alpha": True if given["estimate_alpha"] is None else bool(given["estimate_alpha"]),
            "estimate_eta": True if given["estimate_eta"] is None else bool(given["estimate_eta"]),
            "estep_tol": _check_tol("estep_tol", DEFAULT_ESTEP_TOL if given["estep_tol"] is None else given["estep_tol"]),
            "estep_max_iter": _check_count("estep_max_iter", DEFAULT_ESTEP_MAX_ITER if given["estep_max_iter"] is None else given["estep_max_iter"], 1),
            "em_tol": _check_tol("em_tol", DEFAULT_EM_TOL if given["em_tol"] is None else given["em_tol"]),
            "estep_restart": _check_fraction("estep_restart", DEFAULT_ESTEP_RESTART if given["estep_restart"] is None else given["estep_restart"]),
            "seed": np.random.SeedSequence().entropy if given["seed"] is None else _check_count("seed", given["seed"], 0),
        }
        if not s["smoothed"]:
            s["estimate_eta"] = False
        return s, None
    state = TrainingState.load(resume, "vem", STATE_ARRAYS)
    s = resumed_settings(resume, corpus, state.params, given)
    K = int(s["n_topics"])
    shapes = {"topics": (corpus.n_words, K), "gamma": (corpus.n_docs, K), "alpha": (K,)}
    for name, shape in shapes.items():
        if state.arrays[name].shape != shape:
            raise LdacliError(f"{resume}: expected '{name}' of shape {shape}, found {state.arrays[name].shape}")
    return s, state


def _converged(trace: list[float], em_tol: float) -> bool:
    """Whether the last EM iteration raised the ELBO by less than ``em_tol`` relative (never
    when ``em_tol`` is 0: then every iteration asked for runs)."""
    if len(trace) < 2 or em_tol == 0:
        return False
    return trace[-1] - trace[-2] <= em_tol * abs(trace[-2])


def train_vem(
    corpus: Corpus,
    n_topics: int | None = None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    alpha: float | None = None,
    beta: float | None = None,
    seed: int | None = None,
    smoothed: bool | None = None,
    estimate_alpha: bool | None = None,
    estimate_eta: bool | None = None,
    estep_tol: float | None = None,
    estep_max_iter: int | None = None,
    em_tol: float | None = None,
    estep_restart: float | None = None,
    threads: int | None = None,
    checkpoint: str | None = None,
    checkpoint_every: int = 0,
    resume: str | None = None,
    progress: bool = False,
) -> Model:
    """Fit LDA to ``corpus`` by variational EM and return the model.

    ``iterations`` caps the EM iterations (counting those before a resumed checkpoint); EM stops
    earlier once an iteration raises the ELBO by less than ``em_tol`` (relative; 0 never stops
    early). Each document's E-step stops when fewer than a fraction ``estep_tol`` of its tokens
    changed topic in a round (the L1 change of gamma over its length), or after
    ``estep_max_iter`` rounds. Each document's E-step also tries a second start,
    ``estep_restart`` of the way from the previous gamma to the uniform one (1: a fresh start, 0:
    warm start only), and keeps whichever ends with the higher ELBO (see ``ldacli._vem.estep``);
    warm starts alone never give back a topic a document has dropped. ``alpha`` is the starting per-topic document-topic prior, then
    estimated (an asymmetric K-vector) unless ``estimate_alpha`` is false. ``smoothed`` (default
    true) puts a symmetric Dirichlet(``beta``) prior on the topics, ``beta`` being eta, itself
    estimated unless ``estimate_eta`` is false; the plain model has no topic prior. ``seed``
    draws the random starting topics (fresh entropy, recorded as ``params["seed"]``, when None).
    ``threads`` (default: all cores) run the E-step and M-step statistics; the result is the
    same for any number. Checkpoints and ``resume`` work as in :func:`ldacli.methods.cgs`; on resume
    every setting except ``iterations`` and ``threads`` comes from the checkpoint.

    The model's ``phi`` is the posterior mean of the topics (smoothed) or beta (plain); ``theta``
    the mean of each document's q(theta) = Dirichlet(gamma_d), ``alpha`` and ``beta`` the final
    alpha and eta (0 for the plain model), and the trace holds the ELBO per token at every
    iteration (``params["trace"] == "elbo_per_token"``).
    """
    iterations = _check_count("iterations", iterations, 1)
    checkpoint_every = _check_count("checkpoint_every", checkpoint_every, 0)
    threads = check_threads(threads)
    if corpus.n_tokens == 0:
        raise LdacliError(f"{corpus.source}: expected a corpus with at least one token, found none")
    given = {"n_topics": n_topics, "alpha": alpha, "beta": beta, "seed": seed, "smoothed": smoothed,
             "estimate_alpha": estimate_alpha, "estimate_eta": estimate_eta, "estep_tol": estep_tol,
             "estep_max_iter": estep_max_iter, "em_tol": em_tol, "estep_restart": estep_restart}
    s, state = _resolve(corpus, given, resume)
    K, V, D = int(s["n_topics"]), corpus.n_words, corpus.n_docs
    n_tokens = corpus.n_tokens
    params = {
        "method": "vem",
        "n_topics": K,
        "alpha": s["alpha"],
        "beta": s["beta"],
        "smoothed": s["smoothed"],
        "estimate_alpha": s["estimate_alpha"],
        "estimate_eta": s["estimate_eta"],
        "estep_tol": s["estep_tol"],
        "estep_max_iter": s["estep_max_iter"],
        "em_tol": s["em_tol"],
        "estep_restart": s["estep_restart"],
        "iterations": iterations,
        "seed": s["seed"],
        "init": "gamma(100, 0.01)",
        "trace": "elbo_per_token",
        "corpus_fingerprint": corpus.fingerprint(),
        "corpus_source": corpus.source,
        "corpus_format": corpus.format,
        "n_docs": D,
        "n_words": V,
        "n_tokens": n_tokens,
        "ldacli_version": __version__,
    }
    a = _Arrays(corpus)
    if state is None:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(s["seed"])))
        eta = s["beta"] if s["smoothed"] else 0.0
        topics = _topics_from_stats(_initial_topics(V, K, rng), s["smoothed"], eta)
        alpha_vec = np.full(K, s["alpha"])
        gamma = np.empty((D, K))
        gamma[:] = alpha_vec + (np.asarray(corpus.counts.sum(axis=1)).ravel() / K)[:, None]
        start, trace_it, trace_ll = 0, [], []
    else:
        if iterations < int(state.arrays["iteration"]):
            raise LdacliError(f"{resume}: the checkpoint is at iteration {int(state.arrays['iteration'])}, past the {iterations} asked for")
        topics = np.ascontiguousarray(state.arrays["topics"], dtype=np.float64)
        gamma = np.ascontiguousarray(state.arrays["gamma"], dtype=np.float64)
        alpha_vec = np.ascontiguousarray(state.arrays["alpha"], dtype=np.float64)
        eta = float(state.arrays["eta"])
        start = int(state.arrays["iteration"])
        trace_it = [int(i) for i in state.arrays["loglik_iterations"]]
        trace_ll = [float(x) for x in state.arrays["loglik_per_token"]]

    expelog_theta = np.empty((D, K))
    norm = np.empty(a.counts.size)
    elbo_doc = np.empty(D)
    doc_iters = np.zeros(D, dtype=np.int32)
    sstats = np.empty((V, K))
    tol, max_iter, restart = s["estep_tol"], s["estep_max_iter"], s["estep_restart"]
    n_live = int(a.nonempty.sum())

    def save_checkpoint(it: int) -> None:
        if checkpoint:
            TrainingState({
                "topics": topics, "gamma": gamma, "alpha": alpha_vec, "eta": np.float64(eta),
                "iteration": np.int64(it), "loglik_iterations": np.array(trace_it, dtype=np.int64),
                "loglik_per_token": np.array(trace_ll, dtype=np.float64),
            }, params).save(checkpoint)

    bar = tqdm(total=iterations, initial=start, disable=not progress, file=sys.stderr,
               unit="iter", dynamic_ncols=True, leave=False)
    it = start
    with bar, _stop_requests() as stop, Pool(threads) as pool:
        while it < iterations and not _converged(trace_ll, s["em_tol"]):
            t0 = time.perf_counter()
            topic_wk, topic_term = _for_estep(topics, s["smoothed"], eta)
            topic_wk = np.ascontiguousarray(topic_wk)

            def e_task(r, topic_wk=topic_wk):
                estep(a.indptr, a.indices, a.counts, topic_wk, alpha_vec, r[0], r[1], tol, max_iter,
                      restart, gamma, expelog_theta, norm, elbo_doc, doc_iters, np.empty(5 * K + a.max_len))

            pool.map(e_task, a.doc_ranges)
            it += 1
            trace_it.append(it)
            trace_ll.append((float(np.sum(elbo_doc)) + topic_term) / n_tokens)

            def m_task(r, topic_wk=topic_wk):
                word_stats(a.colptr, a.rows, a.csr_pos, a.counts, norm, expelog_theta, topic_wk,
                           r[0], r[1], sstats)

            pool.map(m_task, a.word_ranges)
            topics = _topics_from_stats(sstats, s["smoothed"], eta)
            if s["estimate_eta"]:
                ss = float(np.sum(digamma(topics) - digamma(topics.sum(axis=0))))
                eta = optimize_symmetric_dirichlet(eta, ss, K, V)
            if s["estimate_alpha"] and n_live and K > 1:  # with one topic alpha changes nothing
                live = gamma[a.nonempty]
                ss = np.sum(digamma(live) - digamma(live.sum(axis=1))[:, None], axis=0)
                alpha_vec = optimize_dirichlet(alpha_vec, ss, n_live)
            seconds = time.perf_counter() - t0
            rounds = float(doc_iters[a.nonempty].mean()) if n_live else 0.0
            log.info("iteration %d: ELBO/token %.6f, %.1f E-step rounds per document, alpha sum %.4g, eta %.4g, %.2f s",
                     it, trace_ll[-1], rounds, alpha_vec.sum(), eta, seconds)
            bar.set_postfix_str(f"ELBO/token {trace_ll[-1]:.4f}, {rounds:.1f} rounds/doc")
            bar.update(1)
            if checkpoint_every and it % checkpoint_every == 0 and it < iterations:
                save_checkpoint(it)
            stop_on_signal(stop, it, save_checkpoint, checkpoint)
    save_checkpoint(it)
    params["iterations_done"] = it
    params["converged"] = _converged(trace_ll, s["em_tol"])
    phi = (topics / topics.sum(axis=0)).T
    theta = gamma / gamma.sum(axis=1, keepdims=True)
    theta[~a.nonempty] = alpha_vec / alpha_vec.sum()  # the prior mean under the final alpha
    return Model(
        phi=np.ascontiguousarray(phi),
        theta=theta,
        alpha=alpha_vec.copy(),
        beta=float(eta),
        vocab=list(corpus.vocab),
        doc_ids=list(corpus.doc_ids),
        loglik_iterations=np.array(trace_it, dtype=np.int64),
        loglik_per_token=np.array(trace_ll, dtype=np.float64),
        params=params,
    )
