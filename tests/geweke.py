"""Geweke's "getting it right" test (Geweke 2004) for LDA topic samplers, on a tiny model.

Two simulators of the joint distribution p(z, w) of topic assignments and words:

* **marginal-conditional**: independent draws from the generative process,
  phi_k ~ Dir(beta_k), theta_d ~ Dir(alpha), z_i ~ theta_d, w_i ~ phi_{z_i};
* **successive-conditional**: a Markov chain started from one such draw that alternates the
  sampler under test, z ~ K(z' | z, w) (one sweep), with an exact draw of the words given the
  topics, w ~ p(w | z): phi_k ~ Dir(beta_k), w_i ~ phi_{z_i}. The second step leaves p(z, w)
  invariant, so the chain's stationary distribution is p(z, w) if and only if the sampler
  leaves p(z | w) invariant.

Test functions g(z, w) are compared between the two: for each, a two-sided z-test of equal
means, the marginal-conditional variance from its independent draws and the
successive-conditional one by batch means (its draws are autocorrelated). The overall
significance level is split over the test functions (Bonferroni). A correct sampler passes; a
sampler that leaves the wrong distribution invariant shows up as a large |z|.

A sampler is given as ``sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng)``: one sweep
over all tokens, updating ``z`` and the counts in place. Shapes and dtypes: words (N,) int32,
doc_ptr (D+1,) int64 (document d's tokens are ``doc_ptr[d]:doc_ptr[d+1]``), z (N,) int32,
nwk (V, K) int32, ndk (D, K) int32, nk (K,) int32, alpha (K,) float64, beta float, rng a
Generator. This is the whole chain's state, not a kernel's arguments: ldacli's kernels sample
one shard's tokens of one word slice, located by ``runs`` (e.g. ``ldacli._cgs.dense_sweep(words,
runs, z, nwk, nk, alpha, beta, beta_sum, ndk, work, rng, part)``, ``ndk`` a (K,) scratch), so
test_geweke.py adapts each through :class:`~ldacli.methods.cgs.threads.ThreadsSampler`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

TEST_FUNCTIONS = (
    "tokens in topic 0",            # n_0
    "sum of squared n_wk",          # word-topic concentration (joint in w and z)
    "n_wk of word 0, topic 0",      # a single cell
    "sum of squared n_dk",          # document-topic concentration
    "n_dk of document 0, topic 1",  # a single cell
    "distinct topics per document (summed)",
)


@dataclass
class TinyModel:
    """Fixed sizes and priors of the model the test runs on. The topic-word prior is ``beta``
    plus ``extra``: cells (topic, word, extra mass) of a non-uniform prior (none: symmetric)."""

    doc_lengths: tuple[int, ...] = (4, 3, 5)
    n_words: int = 4
    alpha: tuple[float, ...] = (0.4, 0.9)
    beta: float = 0.6
    extra: tuple[tuple[int, int, float], ...] = ()

    @property
    def n_topics(self) -> int:
        return len(self.alpha)

    @property
    def topic_word(self) -> np.ndarray:
        """(K, V) the topic-word prior, ``beta + extra``."""
        out = np.full((self.n_topics, self.n_words), self.beta)
        for k, w, e in self.extra:
            out[k, w] += e
        return out

    def draw_phi(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` draws of the topics (size, K, V), phi_k ~ Dir(beta_k)."""
        if not self.extra:
            return rng.dirichlet(np.full(self.n_words, self.beta), size=(size, self.n_topics))
        g = rng.standard_gamma(np.broadcast_to(self.topic_word, (size, self.n_topics, self.n_words)))
        return g / g.sum(axis=-1, keepdims=True)

    @property
    def doc_ptr(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.doc_lengths)]).astype(np.int64)


def _draw_categorical(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of ``p`` (..., C): the index, by inverse CDF."""
    cum = np.cumsum(p, axis=-1)
    u = rng.random(p.shape[:-1] + (1,)) * cum[..., -1:]
    return np.minimum((cum <= u).sum(axis=-1), p.shape[-1] - 1)


def _draw_words(z: np.ndarray, m: TinyModel, rng: np.random.Generator) -> np.ndarray:
    """w ~ p(w | z) for a batch of assignments ``z`` (S, N): fresh phi per row, w_i ~ phi_{z_i}."""
    phi = m.draw_phi(z.shape[0], rng)  # (S, K, V)
    rows = np.arange(z.shape[0])[:, None]
    return _draw_categorical(phi[rows, z], rng)


def marginal_conditional(m: TinyModel, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` independent draws (z, w), each (n, N) int, from the generative process."""
    lengths = np.asarray(m.doc_lengths)
    doc_of = np.repeat(np.arange(lengths.size), lengths)
    theta = rng.dirichlet(np.asarray(m.alpha), size=(n, lengths.size))  # (n, D, K)
    z = _draw_categorical(theta[:, doc_of], rng)
    return z, _draw_words(z, m, rng)


def successive_conditional(m: TinyModel, sweep, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` successive states (z, w) of the chain alternating ``sweep`` and w ~ p(w | z)."""
    K, V = m.n_topics, m.n_words
    doc_ptr = m.doc_ptr
    D = doc_ptr.size - 1
    docs = np.repeat(np.arange(D), np.diff(doc_ptr))
    alpha = np.asarray(m.alpha, dtype=np.float64)
    z0, w0 = marginal_conditional(m, 1, rng)
    z = np.ascontiguousarray(z0[0], dtype=np.int32)
    words = np.ascontiguousarray(w0[0], dtype=np.int32)
    ndk = np.bincount(docs * K + z, minlength=D * K).astype(np.int32).reshape(D, K)
    nk = np.bincount(z, minlength=K).astype(np.int32)
    zs = np.empty((n, z.size), dtype=np.int32)
    ws = np.empty((n, z.size), dtype=np.int32)
    chunk = 4096
    for start in range(0, n, chunk):
        # The word step's randomness does not depend on z: phi_k ~ Dir(beta) and one uniform per
        # token, drawn for a chunk of iterations at once; w_i is then the inverse-CDF draw
        # from phi_{z_i}.
        size = min(chunk, n - start)
        cum = np.cumsum(m.draw_phi(size, rng), axis=-1)  # (size, K, V)
        u = rng.random((size, z.size, 1))
        for t in range(size):
            nwk = np.bincount(words * K + z, minlength=V * K).astype(np.int32).reshape(V, K)
            sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, m.beta, rng)
            c = cum[t, z]  # (N, V)
            words = np.minimum((c <= u[t] * c[:, -1:]).sum(axis=1), V - 1).astype(np.int32)
            zs[start + t] = z
            ws[start + t] = words
    return zs, ws


def test_functions(z: np.ndarray, w: np.ndarray, m: TinyModel) -> np.ndarray:
    """The values (S, G) of the functions named in :data:`TEST_FUNCTIONS` for draws (S, N)."""
    K, V = m.n_topics, m.n_words
    S = z.shape[0]
    lengths = np.asarray(m.doc_lengths)
    D = lengths.size
    doc_of = np.repeat(np.arange(D), lengths)
    rows = np.arange(S)[:, None]
    nwk = np.zeros((S, V, K), dtype=np.int64)
    np.add.at(nwk, (rows, w, z), 1)
    ndk = np.zeros((S, D, K), dtype=np.int64)
    np.add.at(ndk, (rows, doc_of[None, :], z), 1)
    return np.stack([
        (z == 0).sum(axis=1),
        (nwk ** 2).sum(axis=(1, 2)),
        nwk[:, 0, 0],
        (ndk ** 2).sum(axis=(1, 2)),
        ndk[:, 0, 1],
        (ndk > 0).sum(axis=(1, 2)),
    ], axis=1).astype(np.float64)


def batch_means_variance(x: np.ndarray, batches: int = 50) -> np.ndarray:
    """Variance of the mean of each column of the autocorrelated series ``x`` (T, G), by batch means."""
    T = x.shape[0] - x.shape[0] % batches
    means = x[:T].reshape(batches, T // batches, -1).mean(axis=1)
    return means.var(axis=0, ddof=1) / batches


@dataclass
class GewekeResult:
    z_scores: np.ndarray  # (G,)
    critical: float  # |z| above this rejects at the overall level
    level: float

    @property
    def passed(self) -> bool:
        return bool(np.all(np.abs(self.z_scores) < self.critical))

    def report(self) -> str:
        return "; ".join(f"{name}: z={zv:+.2f}" for name, zv in zip(TEST_FUNCTIONS, self.z_scores)) + \
            f" (critical |z| {self.critical:.2f} for overall level {self.level})"


def geweke(sweep, *, model: TinyModel | None = None, n_marginal: int = 50_000, n_successive: int = 50_000,
           burn_in: int = 100, level: float = 0.001, seed: int = 0) -> GewekeResult:
    """Run both simulators and compare every test function; ``level`` is the overall
    significance level, Bonferroni-split over the test functions (two-sided)."""
    m = model or TinyModel()
    rng = np.random.Generator(np.random.PCG64(seed))
    g_mc = test_functions(*marginal_conditional(m, n_marginal, rng), m)
    zs, ws = successive_conditional(m, sweep, n_successive + burn_in, rng)
    g_sc = test_functions(zs[burn_in:], ws[burn_in:], m)
    var = g_mc.var(axis=0, ddof=1) / n_marginal + batch_means_variance(g_sc)
    z_scores = (g_mc.mean(axis=0) - g_sc.mean(axis=0)) / np.sqrt(var)
    critical = float(norm.isf(level / (2 * len(TEST_FUNCTIONS))))
    return GewekeResult(z_scores, critical, level)
