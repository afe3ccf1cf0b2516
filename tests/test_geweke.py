"""Geweke's joint-distribution test of every sampler, shown to be able to fail.

The harness is in tests/geweke.py. Overall significance level 0.001, Bonferroni-split over six
test functions (critical |z| 3.76), fixed seeds; the model has K=2 topics, V=4 words and three
documents of 4, 3 and 5 tokens, alpha = (0.4, 0.9), beta = 0.6, and every sampler is run again
under a non-uniform topic-word prior (extra mass on four cells, :data:`SEEDED`). A new sampler is added by appending an
adapter ``sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng)`` to SAMPLERS.
"""

import numpy as np
import pytest
from geweke import TinyModel, geweke

from ldacli.methods.cgs.sampler import SAMPLERS as KINDS
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.partition import shard_bounds
from ldacli.topic_word_prior import TopicWordPrior


def adapter(kind, prior=None):
    """One sweep of ldacli's sampler ``kind`` (one shard: the exact sampler) on the given state,
    under the topic-word prior ``beta`` plus ``prior``'s extra mass."""

    def sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, rng):
        V, K = nwk.shape
        ThreadsSampler(kind, words, doc_ptr, z, V, K, alpha, beta, shard_bounds(doc_ptr, 1), [rng],
                       prior=prior).sweep()

    return sweep


# A non-uniform topic-word prior, as seeded topics have: topic 0 favours word 0, topic 1 word 3
# (both with word 2 a little), on top of beta = 0.6.
SEEDED = TinyModel(extra=((0, 0, 2.0), (1, 3, 1.5), (0, 2, 0.5), (1, 2, 0.7)))
SEEDED_PRIOR = TopicWordPrior.of_cells(SEEDED.n_words, SEEDED.n_topics, np.array([w for _, w, _ in SEEDED.extra]),
                                       np.array([k for k, _, _ in SEEDED.extra]), [e for _, _, e in SEEDED.extra])


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


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_sampler_gets_the_joint_distribution_right_under_a_non_uniform_topic_word_prior(kind):
    result = geweke(adapter(kind, SEEDED_PRIOR), model=SEEDED, n_marginal=100_000, n_successive=100_000, seed=1)
    assert result.passed, result.report()


@pytest.mark.slow
def test_the_harness_rejects_a_sampler_that_ignores_the_non_uniform_prior():
    # the sparse sampler under the symmetric beta alone, on the model whose words were drawn
    # under the seeded prior
    result = geweke(adapter("sparse"), model=SEEDED, n_marginal=100_000, n_successive=40_000, seed=1)
    assert not result.passed, result.report()
