"""Learned priors: Minka's fixed point on histograms recovers known priors and raises the evidence."""

import numpy as np
import pytest
from scipy.special import digamma, gammaln

from ldacli.errors import LdacliError
from ldacli.corpora.counts import cell_histogram, histogram, merge_histograms
from ldacli.methods.priors import alpha_of_topic, optimize_alpha, optimize_beta


def dm_loglik_alpha(ndk, alpha):
    """log p(z | alpha) = sum_d log DirMult(n_d | alpha), directly with gammaln (no histograms)."""
    lengths = ndk.sum(axis=1)
    A = alpha.sum()
    return float(np.sum(gammaln(A) - gammaln(lengths + A))
                 + np.sum(gammaln(ndk + alpha) - gammaln(alpha)))


def dm_loglik_beta(nwk, beta):
    """log p(w | z, beta) for a symmetric beta, each topic (column of nwk) one draw."""
    V = nwk.shape[0]
    nk = nwk.sum(axis=0)
    return float(np.sum(gammaln(V * beta) - gammaln(nk + V * beta))
                 + np.sum(gammaln(nwk + beta) - gammaln(beta)))


def slow_alpha(ndk, alpha, iterations, tol=1e-6, min_value=1e-5):
    """Minka's fixed point document by document, topic by topic: the oracle for the histograms."""
    a = np.array(alpha, dtype=float)
    D, K = ndk.shape
    lengths = ndk.sum(axis=1)
    for _ in range(iterations):
        A = a.sum()
        den = sum(digamma(lengths[d] + A) - digamma(A) for d in range(D))
        new = np.empty(K)
        for k in range(K):
            num = sum(digamma(ndk[d, k] + a[k]) - digamma(a[k]) for d in range(D))
            new[k] = max(a[k] * num / den, min_value)
        done = np.all(np.abs(new - a) <= tol * a)
        a = new
        if done:
            break
    return a


def slow_beta(nwk, beta, iterations, tol=1e-6, min_value=1e-5):
    V, K = nwk.shape
    b = float(beta)
    for _ in range(iterations):
        num = sum(digamma(nwk[w, k] + b) - digamma(b) for w in range(V) for k in range(K))
        den = V * sum(digamma(nwk[:, k].sum() + V * b) - digamma(V * b) for k in range(K))
        new = max(b * num / den, min_value)
        done = abs(new - b) <= tol * b
        b = new
        if done:
            break
    return b


def draw_doc_topics(alpha, n_docs, lengths, seed):
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(alpha, size=n_docs)
    N = rng.integers(lengths[0], lengths[1], size=n_docs, endpoint=True)
    return rng.multinomial(N, theta).astype(np.int32)


def test_histograms_count_rows_per_column_and_parts_add_up_to_the_whole():
    counts = np.array([[0, 2], [1, 2], [0, 0], [7, 1]], dtype=np.int32)
    # (column, value, rows): column 0 holds 1 once and 7 once, column 1 holds 1 once and 2 twice
    np.testing.assert_array_equal(np.array(histogram(counts)), [[0, 0, 1, 1], [1, 7, 1, 2], [1, 1, 1, 2]])
    parts = [histogram(counts[:1]), histogram(counts[1:3]), histogram(counts[3:])]
    for merged, whole in zip(merge_histograms(parts[::-1]), histogram(counts)):
        np.testing.assert_array_equal(merged, whole)


@pytest.mark.parametrize("largest", [5, 100_000])
def test_the_histogram_of_a_sparse_array_s_cells_is_the_dense_array_s(largest):
    # counted in a table of every (column, value) when it is small, else by sorting the cells
    # (a large value makes the table too large): the same histogram either way, cells in any order
    rng = np.random.default_rng(largest)
    dense = rng.integers(0, 4, size=(300, 40)) * (rng.random((300, 40)) < 0.3)
    dense[7, 3] = largest
    rows, columns = np.nonzero(dense)
    order = rng.permutation(rows.size)
    for got, expected in zip(cell_histogram(columns[order], dense[rows, columns][order], 40), histogram(dense)):
        np.testing.assert_array_equal(got, expected)
    assert [a.size for a in cell_histogram(np.zeros(0, np.int64), np.zeros(0, np.int32), 40)] == [0, 0, 0]


def test_alpha_is_recovered_from_dirichlet_multinomial_counts():
    true = np.array([0.05, 0.1, 0.3, 0.6, 1.2])
    ndk = draw_doc_topics(true, 20000, (20, 200), seed=1)
    learned = optimize_alpha(ndk, ndk.sum(axis=1), np.full(5, 0.1))
    np.testing.assert_allclose(learned, true, rtol=0.05)


def test_alpha_step_raises_the_evidence_and_converges_to_a_maximum():
    ndk = draw_doc_topics(np.array([0.2, 0.5, 0.05, 1.0]), 500, (1, 40), seed=2)
    lengths = ndk.sum(axis=1)
    start = np.full(4, 1.0)
    one = optimize_alpha(ndk, lengths, start, iterations=1)
    best = optimize_alpha(ndk, lengths, start)
    assert dm_loglik_alpha(ndk, start) < dm_loglik_alpha(ndk, one) < dm_loglik_alpha(ndk, best)
    for k in range(4):  # a maximum: moving any one component by 1% lowers the evidence
        for factor in (0.99, 1.01):
            moved = best.copy()
            moved[k] *= factor
            assert dm_loglik_alpha(ndk, moved) < dm_loglik_alpha(ndk, best)


def test_alpha_histograms_agree_with_the_document_by_document_version():
    ndk = draw_doc_topics(np.array([0.3, 0.1, 0.8]), 60, (0, 15), seed=3)
    start = np.array([0.5, 0.5, 0.5])
    for iterations in (1, 5, 200):
        np.testing.assert_allclose(optimize_alpha(ndk, ndk.sum(axis=1), start, iterations=iterations),
                                   slow_alpha(ndk, start, iterations), rtol=1e-10)


def test_one_component_learned_with_the_others_held_maximises_the_evidence():
    # an update's new topic: its prior from the documents that hold it, the other topics' kept
    true = np.array([0.2, 0.5, 0.05, 1.0])
    ndk = draw_doc_topics(true, 2000, (5, 60), seed=4)
    held = np.array([0.2, 0.5, 0.01, 1.0])  # topic 2's prior wrong, the others right
    learned = alpha_of_topic(ndk[:, 2], ndk.sum(axis=1), held, 2)
    assert learned == pytest.approx(0.05, rel=0.15)
    best = held.copy()
    best[2] = learned
    for factor in (0.99, 1.01):  # a maximum of p(z | alpha) along that component
        moved = best.copy()
        moved[2] *= factor
        assert dm_loglik_alpha(ndk, moved) < dm_loglik_alpha(ndk, best)
    # averaged counts (fractions) are taken as they are; a topic no document holds keeps its prior
    assert alpha_of_topic(ndk[:, 2] / 2.0, ndk.sum(axis=1) / 2.0, held, 2) > 0
    assert alpha_of_topic(np.zeros(10), np.full(10, 5), held, 2) == held[2]


def test_an_unused_topic_keeps_a_positive_floor_and_inputs_are_not_mutated():
    ndk = draw_doc_topics(np.array([0.5, 0.5]), 100, (5, 10), seed=4)
    ndk = np.hstack([ndk, np.zeros((100, 1), np.int32)])
    alpha = np.full(3, 0.1)
    learned = optimize_alpha(ndk, ndk.sum(axis=1), alpha, min_value=1e-5)
    assert learned[2] == 1e-5 and np.all(learned[:2] > 0.1)
    np.testing.assert_array_equal(alpha, 0.1)


def draw_topic_words(beta, V, K, tokens, seed):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(V, beta), size=K)
    return rng.multinomial(tokens, phi).T.astype(np.int32).copy()  # (V, K) word-major


def test_beta_is_recovered_from_topic_word_counts():
    nwk = draw_topic_words(0.05, 2000, 20, 20000, seed=5)
    learned = optimize_beta(nwk, nwk.sum(axis=0), 0.01)
    assert learned == pytest.approx(0.05, rel=0.05)


def test_beta_raises_the_evidence_and_agrees_with_the_slow_version():
    nwk = draw_topic_words(0.2, 30, 4, 50, seed=6)
    nk = nwk.sum(axis=0)
    one = optimize_beta(nwk, nk, 1.0, iterations=1)
    best = optimize_beta(nwk, nk, 1.0)
    assert dm_loglik_beta(nwk, 1.0) < dm_loglik_beta(nwk, one) < dm_loglik_beta(nwk, best)
    for factor in (0.99, 1.01):
        assert dm_loglik_beta(nwk, best * factor) < dm_loglik_beta(nwk, best)
    for iterations in (1, 7, 200):
        assert optimize_beta(nwk, nk, 1.0, iterations=iterations) == pytest.approx(
            slow_beta(nwk, 1.0, iterations), rel=1e-10)


def test_same_counts_same_result_and_bad_shapes_are_refused():
    ndk = draw_doc_topics(np.array([0.3, 0.7]), 50, (3, 9), seed=7)
    a = optimize_alpha(ndk, ndk.sum(axis=1), np.array([0.1, 0.1]))
    b = optimize_alpha(ndk.copy(), ndk.sum(axis=1), np.array([0.1, 0.1]))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(LdacliError, match="alpha"):
        optimize_alpha(ndk, ndk.sum(axis=1), np.ones(3))
    with pytest.raises(LdacliError, match="nwk"):
        optimize_beta(ndk, np.ones(5), 0.1)
    with pytest.raises(LdacliError, match="iterations"):
        optimize_alpha(ndk, ndk.sum(axis=1), np.ones(2), iterations=0)
