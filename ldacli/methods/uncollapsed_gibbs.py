"""Uncollapsed (blocked) Gibbs sampling: the method's state and its step.

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

import queue

import numpy as np

from ldacli import checks, random_streams
from ldacli._uncollapsed_gibbs import doc_loglik, draw_topic, draw_z_theta
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.counts import doc_topic_counts
from ldacli.methods.base import Method, Start, word_topic_counts
from ldacli.model import Checkpoint
from ldacli.settings import FIXED, Integer, Setting, owned_by
from ldacli.parallel import CHUNK_NNZ, Pool, doc_ranges


class UncollapsedGibbs(Method):
    """Blocked Gibbs sampling of z, theta and phi.

    Option ``burn_in``: sweeps discarded before theta and phi are averaged (default: half of the
    iterations asked for). The chain starts from uniform theta and phi, so the first sweep's
    topics are uniformly random. Random streams: one per document range (``CHUNK_NNZ`` non-zero
    entries each, fixed by the corpus), then one per topic. The trace is ``log p(w | theta,
    phi)`` per token of the current sample.
    """

    name = "gibbs"
    title = "uncollapsed Gibbs sampling"
    unit = "sweep"
    trace = "log_p_w_given_theta_phi_per_token"
    trace_label = "log p(w | theta, phi) per token"
    DEFAULT_ITERATIONS = 1000
    DEFAULT_LOGLIK_EVERY = 10
    SETTINGS = owned_by("gibbs", (
        Setting("burn_in", Integer(0), lambda values: values["iterations"] // 2,
                "Sweeps discarded before averaging theta and phi.", FIXED, default_help="half of --iterations"),
    ))

    @classmethod
    def check(cls, values: dict) -> None:
        checks.smaller("burn_in", values["burn_in"], "iterations", values["iterations"])

    @classmethod
    def estimate_bytes(cls, corpus: Corpus, settings: dict, threads: int, streamed: bool = False) -> float:
        K, V, D = int(settings["n_topics"]), corpus.n_words, corpus.n_docs
        # phi, its sum, its draw and the model's; one count buffer per thread; theta, its sum
        # and the model's
        return (32.0 + 4.0 * threads) * V * K + 24.0 * D * K + 16.0 * corpus.counts.nnz

    def __init__(self, corpus: Corpus, settings: dict, *, threads: int, checkpoint: Checkpoint | None,
                 source: str | None = None, start: Start | None = None):
        K, V, D = int(settings["n_topics"]), corpus.n_words, corpus.n_docs
        self.burn_in = settings["burn_in"]
        self.n_tokens = corpus.n_tokens
        c = corpus.counts
        self.indptr = np.ascontiguousarray(c.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(c.indices, dtype=np.int32)
        self.counts = np.ascontiguousarray(c.data, dtype=np.int32)
        self.ranges = doc_ranges(self.indptr)
        self.rngs = random_streams.generators(settings["seed"], len(self.ranges) + K)
        if checkpoint is None:
            self.alpha = np.full(K, float(settings["alpha"])) if start is None else np.array(start.alpha, dtype=np.float64)
            self.beta = float(settings["beta"]) if start is None else float(start.beta)
            self.theta = np.full((D, K), 1.0 / K)
            self.phi_wk = np.full((V, K), 1.0 / V)
            self.theta_sum = np.zeros((D, K))
            self.phi_sum = np.zeros((V, K))
            if start is not None:  # the posterior means given the start's topics
                words, doc_ptr = corpus.tokens()
                ndk, nwk = doc_topic_counts(doc_ptr, start.z, K), word_topic_counts(words, start.z, V, K)
                self.theta = (ndk + self.alpha) / (ndk.sum(axis=1, keepdims=True) + self.alpha.sum())
                self.phi_wk = (nwk + self.beta) / (nwk.sum(axis=0) + V * self.beta)
        else:
            arrays = self.checkpoint_arrays(checkpoint, source, {"theta": (D, K), "phi_wk": (V, K),
                                                                  "theta_sum": (D, K), "phi_sum": (V, K)})
            self.theta, self.phi_wk = arrays["theta"], arrays["phi_wk"]
            self.theta_sum, self.phi_sum = arrays["theta_sum"], arrays["phi_sum"]
            self.alpha, self.beta = checkpoint.alpha, checkpoint.beta
            random_streams.restore(self.rngs, checkpoint.rng_states, source)
        self.pool = Pool(threads)
        self.buffers: queue.SimpleQueue = queue.SimpleQueue()
        self.all_buffers = [np.zeros((V, K), dtype=np.int32) for _ in range(min(threads, len(self.ranges)))]
        for b in self.all_buffers:
            self.buffers.put(b)
        self.phi_kv = np.empty((K, V))
        self.doc_ll = np.empty(D)

    def _z_task(self, i: int) -> None:
        a, b = self.ranges[i]
        K = self.alpha.size
        nwk = self.buffers.get()
        try:
            draw_z_theta(self.indptr, self.indices, self.counts, self.theta, self.phi_wk, self.alpha, a, b, nwk,
                         np.empty(K, dtype=np.int32), np.empty(2 * K), self.rngs[i])
        finally:
            self.buffers.put(nwk)

    def step(self, iteration: int) -> None:
        K, n_ranges = self.alpha.size, len(self.ranges)
        for b in self.all_buffers:
            b.fill(0)
        self.pool.map(self._z_task, range(n_ranges))
        nwk = self.all_buffers[0].copy()
        for b in self.all_buffers[1:]:
            nwk += b
        topic_rngs = self.rngs[n_ranges:]
        self.pool.map(lambda k: draw_topic(nwk, k, self.beta, self.phi_kv[k], topic_rngs[k]), range(K))
        self.phi_wk = np.ascontiguousarray(self.phi_kv.T)
        if iteration > self.burn_in:
            self.theta_sum += self.theta
            self.phi_sum += self.phi_wk

    def loglik(self) -> float:
        self.pool.map(lambda r: doc_loglik(self.indptr, self.indices, self.counts, self.theta, self.phi_wk,
                                           r[0], r[1], self.doc_ll), self.ranges)
        return float(np.sum(self.doc_ll)) / self.n_tokens

    def phi(self) -> np.ndarray:
        return np.ascontiguousarray(self.phi_wk.T)

    def rng_states(self) -> list:
        return random_streams.states(self.rngs)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"theta": self.theta, "phi_wk": self.phi_wk, "theta_sum": self.theta_sum, "phi_sum": self.phi_sum}

    def result(self, iterations_done: int) -> tuple[np.ndarray, np.ndarray, dict]:
        kept = iterations_done - self.burn_in
        if kept <= 0:  # stopped (time limit, early stopping) before the burn-in ended: the last sample
            return self.phi(), self.theta.copy(), {"chunk_nnz": CHUNK_NNZ, "averaged_sweeps": 0}
        return (np.ascontiguousarray((self.phi_sum / kept).T), self.theta_sum / kept,
                {"chunk_nnz": CHUNK_NNZ, "averaged_sweeps": kept})

    def close(self) -> None:
        self.pool.close()
