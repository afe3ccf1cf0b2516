"""Tests for ldacli.corpora.synthetic: the generator of LDA corpora with known topics, and recovery()."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ldacli.errors import LdacliError
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.synthetic import Synthetic, generate, planted_topics, recovery


def test_shapes_types_and_metadata():
    syn = generate(30, 4, 50, doc_length=20, seed=3)
    assert isinstance(syn, Synthetic)
    assert isinstance(syn.corpus, Corpus)
    counts = syn.corpus.counts
    assert isinstance(counts, sp.csr_array)
    assert counts.shape == (30, 50)
    assert counts.dtype == np.int32
    assert counts.has_sorted_indices
    assert counts.has_canonical_format
    assert np.all(counts.data > 0)
    assert syn.phi.shape == (4, 50) and syn.phi.dtype == np.float64
    assert syn.theta.shape == (30, 4) and syn.theta.dtype == np.float64
    np.testing.assert_allclose(syn.phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(syn.theta.sum(axis=1), 1.0)
    assert syn.corpus.vocab[:2] == ["w00000", "w00001"] and len(syn.corpus.vocab) == 50
    assert syn.corpus.doc_ids == [str(d) for d in range(30)]
    assert syn.corpus.source == "synthetic" and syn.corpus.format == "synthetic"


def test_indices_sorted_within_every_row():
    counts = generate(50, 3, 40, doc_length=(0, 60), seed=4).corpus.counts
    for d in range(counts.shape[0]):
        row = counts.indices[counts.indptr[d] : counts.indptr[d + 1]]
        assert np.all(np.diff(row) > 0)


def test_fixed_lengths_sum_to_doc_length():
    corpus = generate(25, 3, 40, doc_length=17, seed=1).corpus
    np.testing.assert_array_equal(corpus.doc_lengths, np.full(25, 17))
    assert corpus.n_tokens == 25 * 17


def test_ranged_lengths_stay_in_range_and_vary():
    lengths = generate(200, 3, 40, doc_length=(5, 9), seed=1).corpus.doc_lengths
    assert lengths.min() >= 5 and lengths.max() <= 9
    assert set(np.unique(lengths)) == {5, 6, 7, 8, 9}  # both ends reachable


def test_given_lengths_are_each_documents_length():
    lengths = np.array([0, 1, 250, 7, 3000], dtype=np.int64)
    corpus = generate(5, 3, 40, doc_length=lengths, seed=2).corpus
    np.testing.assert_array_equal(corpus.doc_lengths, lengths)


def test_same_seed_same_corpus_other_seed_other_corpus():
    a = generate(40, 5, 60, doc_length=(10, 30), seed=7)
    b = generate(40, 5, 60, doc_length=(10, 30), seed=7)
    c = generate(40, 5, 60, doc_length=(10, 30), seed=8)
    assert a.corpus.fingerprint() == b.corpus.fingerprint()
    np.testing.assert_array_equal(a.phi, b.phi)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert a.corpus.fingerprint() != c.corpus.fingerprint()


def test_planted_topics_are_disjoint_uniform_blocks():
    phi = planted_topics(4, 10)  # blocks of 3, 3, 2, 2 words
    np.testing.assert_allclose(phi.sum(axis=1), 1.0)
    support = phi > 0
    assert np.all(support.sum(axis=0) == 1)  # every word in exactly one topic
    assert list(support.sum(axis=1)) == [3, 3, 2, 2]
    for row in phi:
        assert np.ptp(row[row > 0]) == 0  # uniform on its block

    syn = generate(20, 4, 10, doc_length=50, planted=True, seed=2)
    np.testing.assert_array_equal(syn.phi, phi)


def test_planted_words_come_only_from_the_documents_topics():
    syn = generate(100, 5, 50, doc_length=40, alpha=0.05, planted=True, seed=5)
    counts = syn.corpus.counts.toarray()
    # Every word used by a document belongs to a topic with positive weight in it.
    owner = syn.phi.argmax(axis=0)
    for d in range(counts.shape[0]):
        used = np.flatnonzero(counts[d])
        assert np.all(syn.theta[d, owner[used]] > 0)


def _expected_word_totals(syn: Synthetic) -> np.ndarray:
    lengths = syn.corpus.doc_lengths.astype(np.float64)
    return (lengths[:, None] * syn.theta).sum(axis=0) @ syn.phi


@pytest.mark.parametrize(
    "shape",
    [
        (2000, 3, 20, 30),  # many draws per topic and chunk: Multinomial-then-shuffle path
        (10, 3, 4000, 200),  # few draws per topic: inverse-CDF path
    ],
)
def test_word_totals_match_the_model(shape):
    n_docs, n_topics, n_words, length = shape
    syn = generate(n_docs, n_topics, n_words, doc_length=length, alpha=1.0, beta=0.5, seed=11)
    observed = np.asarray(syn.corpus.counts.sum(axis=0)).ravel()
    expected = _expected_word_totals(syn)
    # Each total is a sum of Bernoulli draws: within 5 standard deviations (plus slack).
    assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected) + 2)


def test_document_words_follow_theta_phi():
    # One long document per check: its word frequencies approach theta_d @ phi.
    syn = generate(3, 4, 30, doc_length=200_000, alpha=1.0, beta=1.0, seed=12)
    freq = syn.corpus.counts.toarray() / 200_000
    np.testing.assert_allclose(freq, syn.theta @ syn.phi, atol=0.005)


def test_zero_documents_and_empty_documents():
    empty = generate(0, 3, 10)
    assert empty.corpus.counts.shape == (0, 10) and empty.theta.shape == (0, 3)
    blank = generate(4, 3, 10, doc_length=0)
    assert blank.corpus.counts.shape == (4, 10) and blank.corpus.n_tokens == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_docs=-1), "n_docs"),
        (dict(n_topics=0), "n_topics"),
        (dict(n_words=0), "n_words"),
        (dict(n_words=3, planted=True), "n_words"),
        (dict(doc_length=-5), "doc_length"),
        (dict(doc_length=(9, 3)), "lo <= hi"),
        (dict(doc_length=(1, 2, 3)), "pair"),
        (dict(doc_length=np.array([3, 4])), "5 non-negative integers"),
        (dict(doc_length=np.array([3, 4, -1, 2, 2])), "non-negative"),
        (dict(doc_length=np.full(5, 2.5)), "integers"),
        (dict(alpha=0.0), "alpha"),
        (dict(beta=-1.0), "beta"),
    ],
)
def test_bad_parameters_are_refused(kwargs, match):
    args = dict(n_docs=5, n_topics=4, n_words=20)
    args.update(kwargs)
    with pytest.raises(LdacliError, match=match):
        generate(**args)


def test_recovery_of_truth_is_exact():
    phi = generate(1, 6, 40, seed=1).phi
    perm, tv = recovery(phi, phi)
    np.testing.assert_array_equal(perm, np.arange(6))
    assert tv == pytest.approx(0.0, abs=1e-12)


def test_recovery_undoes_a_permutation():
    phi = generate(1, 6, 40, seed=2).phi
    shuffle = np.random.default_rng(0).permutation(6)
    est = phi[shuffle]
    perm, tv = recovery(phi, est)
    assert tv == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_array_equal(est[perm], phi)
    np.testing.assert_array_equal(shuffle[perm], np.arange(6))


def test_recovery_of_a_noisy_permuted_estimate():
    rng = np.random.default_rng(3)
    phi = planted_topics(8, 80)
    shuffle = rng.permutation(8)
    noisy = phi[shuffle] + rng.uniform(0, 0.01, size=phi.shape)
    counts = np.round(noisy * 1000)  # unnormalised counts are accepted too
    perm, tv = recovery(phi, counts)
    np.testing.assert_array_equal(shuffle[perm], np.arange(8))
    assert 0 < tv < 0.3


def test_recovery_with_extra_estimated_topics():
    phi = planted_topics(3, 30)
    est = np.vstack([np.full(30, 1 / 30), phi[::-1]])
    perm, tv = recovery(phi, est)
    np.testing.assert_array_equal(perm, [3, 2, 1])
    assert tv == pytest.approx(0.0, abs=1e-12)


def test_recovery_distance_of_disjoint_topics_is_one():
    phi = planted_topics(2, 4)
    other = np.array([[0.5, 0.0, 0.5, 0.0], [0.0, 0.5, 0.0, 0.5]])
    _, tv = recovery(phi, other)
    assert tv == pytest.approx(0.5)
    _, tv = recovery(phi[:1], phi[1:])
    assert tv == pytest.approx(1.0)


@pytest.mark.parametrize(
    "true, est, match",
    [
        (np.ones((3, 5)), np.ones((3, 4)), "same number of words"),
        (np.ones((3, 5)), np.ones((2, 5)), "at least as many topics"),
        (np.ones(5), np.ones((2, 5)), "2-D"),
        (np.ones((2, 5)), -np.ones((2, 5)), "non-negative"),
        (np.zeros((2, 5)), np.ones((2, 5)), "sums to zero"),
    ],
)
def test_recovery_refuses_bad_input(true, est, match):
    with pytest.raises(LdacliError, match=match):
        recovery(true, est)


def test_planted_topics_are_recovered_from_counts():
    """Sanity check of the pair: the empirical word distribution per dominant topic
    recovers the planted topics (no trainer needed)."""
    syn = generate(400, 5, 100, doc_length=80, alpha=0.01, planted=True, seed=9)
    counts = syn.corpus.counts.toarray().astype(np.float64)
    dominant = syn.theta.argmax(axis=1)
    est = np.vstack([counts[dominant == k].sum(axis=0) + 1e-9 for k in range(5)])
    perm, tv = recovery(syn.phi, est)
    np.testing.assert_array_equal(perm, np.arange(5))
    assert tv < 0.1
