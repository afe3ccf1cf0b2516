"""Variational EM (Blei, Ng & Jordan 2003): the method's state and its step.

Each EM iteration is an E-step over every document (``ldacli._vem.estep``, run on fixed
document ranges on a thread pool, warm-started from the previous iteration's gamma), the
evidence lower bound (ELBO) of the result, and an M-step: the topics from the expected counts
(``ldacli._vem.word_stats``, on fixed word ranges), then alpha, and in the smoothed model eta,
by Newton's method. Every step is a coordinate ascent on the ELBO, so the trace of the ELBO
never decreases. Python allocates every array; the driver (:mod:`ldacli.methods.driver`) does
everything between steps.

Two models (``smoothed``):

* plain (section 5.3 of the paper): topics ``beta`` (K, V) are parameters, the M-step sets
  ``beta_kw`` proportional to the expected counts;
* smoothed (section 5.4, the default): ``beta_k ~ Dirichlet(eta)`` with a variational Dirichlet
  ``lambda_k``; the E-step uses ``exp(E[log beta_kw])``, the update is ``lambda = eta +
  expected counts``, and the model's topics are the posterior means ``lambda_k / sum(lambda_k)``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln, polygamma

from ldacli import random_streams
from ldacli._vem import estep, word_stats
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.counts import doc_topic_counts, starts
from ldacli.methods.base import Method, Start, word_topic_counts
from ldacli.errors import SettingError
from ldacli.model import Checkpoint
from ldacli.parallel import Pool, doc_ranges
from ldacli.settings import FIXED, Flag, Integer, Real, Setting, owned_by


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
        self.colptr = starts(self.indices, corpus.n_words)
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


def _converged(trace: list[float], em_tol: float) -> bool:
    """Whether the last EM iteration raised the ELBO by less than ``em_tol`` relative (never
    when ``em_tol`` is 0: then every iteration asked for runs)."""
    if len(trace) < 2 or em_tol == 0:
        return False
    return trace[-1] - trace[-2] <= em_tol * abs(trace[-2])


class VariationalEM(Method):
    """Variational EM; one step is one EM iteration (E-step, ELBO, M-step).

    Options: ``smoothed`` (a Dirichlet(beta) prior on the topics with a variational posterior,
    default; else plain topic parameters), ``estimate_alpha`` and ``estimate_eta`` (Newton's
    method in every M-step), ``estep_tol`` (a document's E-step stops when fewer than this
    fraction of its tokens changed topic in a round), ``estep_max_iter`` (rounds per document
    at most), ``em_tol`` (stop when an iteration raises the ELBO by less than this, relative; 0
    runs every iteration asked for) and ``estep_restart`` (each document's E-step also tries a
    start this far from the previous gamma towards the uniform one and keeps the better; see
    ``ldacli._vem.estep``). ``beta`` is eta's starting value (0 for the plain model). One
    random stream draws the starting topics; nothing after that is random.
    """

    name = "vem"
    title = "variational EM"
    unit = "EM iteration"
    trace = "elbo_per_token"
    trace_label = "ELBO per token"
    DEFAULT_ITERATIONS = 100
    DEFAULT_LOGLIK_EVERY = 1
    TRACE_EVERY_STEP = True
    SETTINGS = owned_by("vem", (
        Setting("smoothed", Flag(), True,
                "A Dirichlet(beta) prior on the topics with a variational posterior (smoothed), or topics as "
                "plain parameters.", FIXED, off="--no-smoothed"),
        Setting("estimate_alpha", Flag(), True,
                "Estimate an asymmetric alpha by Newton's method in every M-step, or keep --alpha.", FIXED,
                off="--fixed-alpha"),
        Setting("estimate_eta", Flag(), lambda values: values["smoothed"],
                "Smoothed: estimate the topic prior (--beta) by Newton's method, or keep it.", FIXED,
                off="--fixed-eta", default_help="--estimate-eta when smoothed"),
        Setting("estep_tol", Real(0), 5e-3,
                "A document's E-step stops when fewer than this fraction of its tokens change topic in a round.",
                FIXED),
        Setting("estep_max_iter", Integer(1), 10, "E-step rounds per document at most, per EM iteration.", FIXED),
        Setting("em_tol", Real(0), 1e-4,
                "Stop when an EM iteration raises the evidence lower bound by less than this, relative (0: run "
                "all --iterations).", FIXED),
        Setting("estep_restart", Real(0, 1), 1.0,
                "Each document's E-step also tries a start this far from the previous gamma towards the uniform "
                "one and keeps the better (0: never).", FIXED),
    ))
    INIT = "gamma(100, 0.01)"

    @classmethod
    def prior_sources(cls, params: dict) -> dict[str, str]:
        estimated = "estimated by Newton's method every EM iteration"
        if not params.get("smoothed", True):
            eta = "none (plain topic parameters, --no-smoothed)"
        else:
            eta = estimated if params.get("estimate_eta", True) else "set"
        return {"alpha": estimated if params.get("estimate_alpha", True) else "set", "beta": eta}

    @classmethod
    def check(cls, values: dict) -> None:
        if values["estimate_eta"] and not values["smoothed"]:
            raise SettingError("estimate_eta", "estimate_eta applies with smoothed only (without it there is no "
                                               "topic prior to estimate), found smoothed=False", ("smoothed",))

    @classmethod
    def estimate_bytes(cls, corpus: Corpus, settings: dict, threads: int, streamed: bool = False) -> float:
        K, V, D = int(settings["n_topics"]), corpus.n_words, corpus.n_docs
        # topics, statistics, E[log beta] and its exponential, the model's phi; gamma, its
        # expectation and theta; the corpus in both orientations
        return 48.0 * V * K + 24.0 * D * K + 40.0 * corpus.counts.nnz

    def __init__(self, corpus: Corpus, settings: dict, *, threads: int, checkpoint: Checkpoint | None,
                 source: str | None = None, start: Start | None = None):
        K, V, D = int(settings["n_topics"]), corpus.n_words, corpus.n_docs
        self.s = settings
        self.a = a = _Arrays(corpus)
        self.n_tokens = corpus.n_tokens
        if start is not None:  # the expected counts of the start's topics, as if after an E-step
            words, doc_ptr = corpus.tokens()
            self.alpha = np.array(start.alpha, dtype=np.float64)
            self.beta = (float(start.beta) or float(settings["beta"])) if settings["smoothed"] else 0.0
            self.topics = _topics_from_stats(word_topic_counts(words, start.z, V, K).astype(np.float64),
                                             settings["smoothed"], self.beta)
            self.gamma = self.alpha + doc_topic_counts(doc_ptr, start.z, K)
        elif checkpoint is None:
            rng = random_streams.generator(settings["seed"])
            self.beta = float(settings["beta"]) if settings["smoothed"] else 0.0
            self.topics = _topics_from_stats(_initial_topics(V, K, rng), settings["smoothed"], self.beta)
            self.alpha = np.full(K, float(settings["alpha"]))
            self.gamma = np.empty((D, K))
            self.gamma[:] = self.alpha + (np.asarray(corpus.counts.sum(axis=1)).ravel() / K)[:, None]
        else:
            arrays = self.checkpoint_arrays(checkpoint, source, {"topics": (V, K), "gamma": (D, K)})
            self.topics, self.gamma = arrays["topics"], arrays["gamma"]
            self.alpha, self.beta = checkpoint.alpha, checkpoint.beta
        self.expelog_theta = np.empty((D, K))
        self.norm = np.empty(a.counts.size)
        self.elbo_doc = np.empty(D)
        self.doc_iters = np.zeros(D, dtype=np.int32)
        self.sstats = np.empty((V, K))
        self.n_live = int(a.nonempty.sum())
        self.elbo = float("nan")
        self.pool = Pool(threads)

    def step(self, iteration: int) -> None:
        s, a, K = self.s, self.a, self.alpha.size
        tol, max_iter, restart = s["estep_tol"], s["estep_max_iter"], s["estep_restart"]
        topic_wk, topic_term = _for_estep(self.topics, s["smoothed"], self.beta)
        topic_wk = np.ascontiguousarray(topic_wk)
        alpha = self.alpha

        def e_task(r):
            estep(a.indptr, a.indices, a.counts, topic_wk, alpha, r[0], r[1], tol, max_iter, restart,
                  self.gamma, self.expelog_theta, self.norm, self.elbo_doc, self.doc_iters,
                  np.empty(5 * K + a.max_len))

        self.pool.map(e_task, a.doc_ranges)
        self.elbo = (float(np.sum(self.elbo_doc)) + topic_term) / self.n_tokens

        def m_task(r):
            word_stats(a.colptr, a.rows, a.csr_pos, a.counts, self.norm, self.expelog_theta, topic_wk,
                       r[0], r[1], self.sstats)

        self.pool.map(m_task, a.word_ranges)
        self.topics = _topics_from_stats(self.sstats, s["smoothed"], self.beta)
        if s["estimate_eta"]:
            ss = float(np.sum(digamma(self.topics) - digamma(self.topics.sum(axis=0))))
            self.beta = optimize_symmetric_dirichlet(self.beta, ss, K, self.topics.shape[0])
        if s["estimate_alpha"] and self.n_live and K > 1:  # with one topic alpha changes nothing
            live = self.gamma[a.nonempty]
            ss = np.sum(digamma(live) - digamma(live.sum(axis=1))[:, None], axis=0)
            self.alpha = optimize_dirichlet(self.alpha, ss, self.n_live)

    def loglik(self) -> float:
        return self.elbo

    def converged(self, trace: list[float]) -> bool:
        return _converged(trace, self.s["em_tol"])

    def phi(self) -> np.ndarray:
        return np.ascontiguousarray((self.topics / self.topics.sum(axis=0)).T)

    def rng_states(self) -> list:
        return []

    def arrays(self) -> dict[str, np.ndarray]:
        return {"topics": self.topics, "gamma": self.gamma}

    def note(self) -> str:
        rounds = float(self.doc_iters[self.a.nonempty].mean()) if self.n_live else 0.0
        return f"{rounds:.1f} E-step rounds per document, alpha sum {self.alpha.sum():.4g}, eta {self.beta:.4g}"

    def result(self, iterations_done: int) -> tuple[np.ndarray, np.ndarray, dict]:
        theta = self.gamma / self.gamma.sum(axis=1, keepdims=True)
        theta[~self.a.nonempty] = self.alpha / self.alpha.sum()  # the prior mean under the final alpha
        return self.phi(), theta, {"init": self.INIT}

    def close(self) -> None:
        self.pool.close()
