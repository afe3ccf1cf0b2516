"""Geweke's joint-distribution test of every sampler, shown to be able to fail.

The harness is in tests/geweke.py. Overall significance level 0.001, Bonferroni-split over six
test functions (critical |z| 3.76), fixed seeds; the model has K=2 topics, V=4 words and three
documents of 4, 3 and 5 tokens, alpha = (0.4, 0.9), beta = 0.6. About 30 s in all. A new sampler is added by appending an
adapter ``sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng)`` to SAMPLERS.
"""

import pytest
from geweke import geweke

from ldacli.methods.sharded import SAMPLERS as KINDS
from ldacli.methods.sharded import ShardedSampler, shard_bounds


def adapter(kind):
    """One sweep of ldacli's sampler ``kind`` (one shard: the exact sampler) on the given state."""

    def sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng):
        V, K = nwk.shape
        ShardedSampler(kind, words, doc_ptr, z, V, K, alpha, beta, shard_bounds(doc_ptr, 1), [rng]).sweep()

    return sweep


SAMPLERS = {kind: adapter(kind) for kind in KINDS}


def _draw(weights, u):
    """Index of the first cumulative weight above u * total (plain Python: K is tiny)."""
    target = u * sum(weights)
    acc = 0.0
    for k, x in enumerate(weights):
        acc += x
        if target < acc:
            return k
    return len(weights) - 1


def keeps_own_count(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng):
    """BROKEN on purpose: samples a token's topic without first removing the token itself."""
    V, K = nwk.shape
    a, vb = alpha.tolist(), V * beta
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
            nd, nw, n = ndk[d].tolist(), nwk[w].tolist(), nk.tolist()
            new = _draw([(nd[k] + a[k]) * (nw[k] + beta) / (n[k] + vb) for k in range(K)], rng.random())
            nwk[w, t] -= 1; ndk[d, t] -= 1; nk[t] -= 1  # noqa: E702
            z[i] = new
            nwk[w, new] += 1; ndk[d, new] += 1; nk[new] += 1  # noqa: E702


def forgets_topic_totals(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng):
    """BROKEN on purpose, subtly: leaves out the 1 / (n_k + V beta) factor."""
    V, K = nwk.shape
    a = alpha.tolist()
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
            nwk[w, t] -= 1; ndk[d, t] -= 1; nk[t] -= 1  # noqa: E702
            nd, nw = ndk[d].tolist(), nwk[w].tolist()
            t = _draw([(nd[k] + a[k]) * (nw[k] + beta) for k in range(K)], rng.random())
            z[i] = t
            nwk[w, t] += 1; ndk[d, t] += 1; nk[t] += 1  # noqa: E702


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_gets_the_joint_distribution_right(name):
    result = geweke(SAMPLERS[name], n_marginal=100_000, n_successive=100_000, seed=1)
    assert result.passed, result.report()


@pytest.mark.slow
@pytest.mark.parametrize("broken, n_successive", [(keeps_own_count, 60_000), (forgets_topic_totals, 10_000)])
def test_the_harness_rejects_a_broken_sampler(broken, n_successive):
    # Forgetting the token's own count is a small error on this model: it needs a longer chain
    # (|z| about 5 to 7 against the critical 3.76), the missing 1/(n_k + V beta) shows at once.
    result = geweke(broken, n_marginal=100_000, n_successive=n_successive, seed=1)
    assert not result.passed, result.report()
