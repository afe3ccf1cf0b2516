"""The Cython kernels: bit-for-bit equal to the NumPy oracle, count invariants, right posterior."""

import itertools

import numpy as np
import oracle
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from ldacli._gibbs import cgs_sweep, fixed_topics_sweep
from ldacli.train import GibbsState


def tiny_state(seed, D=7, V=13, K=4, max_len=12):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, max_len, size=D)
    doc_ptr = np.zeros(D + 1, np.int64)
    doc_ptr[1:] = np.cumsum(lengths)
    words = rng.integers(0, V, size=doc_ptr[-1]).astype(np.int32)
    z = rng.integers(0, K, size=words.size).astype(np.int32)
    return GibbsState.from_assignments(words, doc_ptr, z, V, K)


def copy_state(s):
    return GibbsState(s.words, s.doc_ptr, s.z.copy(), s.nwk.copy(), s.ndk.copy(), s.nk.copy())


def assert_same(a, b):
    for name in ("z", "nwk", "ndk", "nk"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_cgs_sweep_equals_numpy_oracle_bit_for_bit():
    s = tiny_state(5)
    o = copy_state(s)
    V, K = s.nwk.shape
    alpha = np.array([0.1, 0.2, 0.3, 0.05])
    beta = 0.01
    r1 = np.random.Generator(np.random.PCG64(3))
    r2 = np.random.Generator(np.random.PCG64(3))
    work = np.zeros(2 * K)
    moved = 0
    start = s.z.copy()
    for _ in range(5):
        cgs_sweep(s.words, s.doc_ptr, s.z, s.nwk, s.ndk, s.nk, alpha, beta, V * beta, work, r1)
        oracle.cgs_sweep(o.words, o.doc_ptr, o.z, o.nwk, o.ndk, o.nk, alpha, beta, V * beta, r2)
        assert_same(s, o)
        moved += int(np.count_nonzero(s.z != start))
    assert moved > 0  # the sweeps did something
    assert r1.bit_generator.state == r2.bit_generator.state  # one draw per token, both sides


def test_fixed_topics_sweep_equals_numpy_oracle_bit_for_bit():
    s = tiny_state(8)
    D, K = s.ndk.shape
    V = s.nwk.shape[0]
    phi_wk = np.random.default_rng(1).dirichlet(np.ones(V), size=K).T.copy()
    alpha = np.full(K, 0.3)
    z1, z2 = s.z.copy(), s.z.copy()
    n1, n2 = s.ndk.copy(), s.ndk.copy()
    r1 = np.random.Generator(np.random.PCG64(11))
    r2 = np.random.Generator(np.random.PCG64(11))
    for _ in range(4):
        fixed_topics_sweep(s.words, s.doc_ptr, z1, n1, phi_wk, alpha, np.zeros(K), r1)
        oracle.fixed_topics_sweep(s.words, s.doc_ptr, z2, n2, phi_wk, alpha, r2)
        np.testing.assert_array_equal(z1, z2)
        np.testing.assert_array_equal(n1, n2)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), D=st.integers(1, 6), V=st.integers(1, 9), K=st.integers(1, 7),
       sweeps=st.integers(1, 4))
def test_counts_stay_consistent_with_assignments(seed, D, V, K, sweeps):
    s = tiny_state(seed, D=D, V=V, K=K)
    rng = np.random.Generator(np.random.PCG64(seed))
    alpha = np.full(K, 0.1)
    for _ in range(sweeps):
        cgs_sweep(s.words, s.doc_ptr, s.z, s.nwk, s.ndk, s.nk, alpha, 0.05, V * 0.05, np.zeros(2 * K), rng)
    recount = GibbsState.from_assignments(s.words, s.doc_ptr, s.z, V, K)
    assert_same(s, recount)
    assert s.z.size == 0 or (s.z.min() >= 0 and s.z.max() < K)
    assert s.nwk.sum() == s.ndk.sum() == s.nk.sum() == s.words.size
    np.testing.assert_array_equal(s.ndk.sum(axis=1), np.diff(s.doc_ptr))
    assert (s.nwk >= 0).all() and (s.ndk >= 0).all()


def exact_posterior(words, doc_ptr, V, K, alpha, beta):
    """p(z | w) for every assignment of a tiny corpus, by enumeration of the collapsed joint."""
    states = list(itertools.product(range(K), repeat=words.size))
    logp = []
    for z in states:
        s = GibbsState.from_assignments(words, doc_ptr, np.array(z, np.int32), V, K)
        lp = np.sum(gammaln(s.nwk + beta)) - np.sum(gammaln(s.nk + V * beta))
        lp += np.sum(gammaln(s.ndk + alpha))
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def test_sampler_visits_states_with_the_exact_posterior_probabilities():
    # 2 documents, 5 tokens, 3 words, 2 topics: 32 states, posterior computed exactly.
    words = np.array([0, 0, 1, 2, 2], np.int32)
    doc_ptr = np.array([0, 3, 5], np.int64)
    V, K, beta = 3, 2, 0.3
    alpha = np.array([0.4, 0.7])
    states, exact = exact_posterior(words, doc_ptr, V, K, alpha, beta)
    index = {z: i for i, z in enumerate(states)}
    s = GibbsState.from_assignments(words, doc_ptr, np.zeros(5, np.int32), V, K)
    rng = np.random.Generator(np.random.PCG64(2024))
    work = np.zeros(2 * K)
    sweeps = 60000
    seen = np.zeros(len(states))
    for _ in range(sweeps):
        cgs_sweep(s.words, s.doc_ptr, s.z, s.nwk, s.ndk, s.nk, alpha, beta, V * beta, work, rng)
        seen[index[tuple(s.z)]] += 1
    empirical = seen / sweeps
    # Total-variation distance: Monte Carlo error here is about 0.005; a wrong conditional
    # (e.g. the token's own count left in) moves it by well over 0.05.
    assert 0.5 * np.abs(empirical - exact).sum() < 0.02
