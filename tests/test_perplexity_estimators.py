"""Held-out likelihood estimators against the exact marginal likelihood of tiny documents.

For a document of N tokens under topics phi and prior alpha, p(w_d | phi, alpha) is a sum over
the K^N topic assignments of p(z | alpha) prod_n phi[z_n, w_n], with p(z | alpha) the
Dirichlet-multinomial Gamma(A) / Gamma(A + N) prod_k Gamma(alpha_k + n_k) / Gamma(alpha_k).
With K = 3 and N <= 4 that is at most 81 terms, so every estimator can be checked against the
truth: each must agree within 3 of its own reported standard errors (fixed seeds).
"""

import itertools
import math

import numpy as np
import oracle
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp

import ldacli
import ldacli.corpora.synthetic
from ldacli._fixed_topics import left_to_right, loglik_given_theta, particle_filter
from ldacli.corpora.corpus import Corpus
from ldacli.scoring.perplexity import perplexity
from ldacli.scoring.fixed_topics import completion_split, estimate_theta

K, V = 3, 4
ALPHA = np.array([0.3, 0.8, 0.5])
# Distinct, fairly peaked topics so that the assignments matter.
PHI = np.array([[0.70, 0.10, 0.10, 0.10],
                [0.05, 0.15, 0.60, 0.20],
                [0.25, 0.40, 0.05, 0.30]])
DOCS = [[0, 0, 2], [1, 3], [2, 2, 2, 0], [3, 1, 0, 2], [0, 1], [2, 3, 3], [1, 1, 1, 1]]


def exact_log_marginal(words, phi=PHI, alpha=ALPHA):
    """log p(w | phi, alpha) by enumerating all topic assignments of the tokens."""
    A, N = alpha.sum(), len(words)
    terms = []
    for z in itertools.product(range(alpha.size), repeat=N):
        nk = np.bincount(z, minlength=alpha.size)
        terms.append(gammaln(A) - gammaln(A + N) + np.sum(gammaln(alpha + nk) - gammaln(alpha))
                     + sum(math.log(phi[t, w]) for t, w in zip(z, words)))
    return float(logsumexp(terms))


def corpus_of(docs):
    rows = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    cols = np.concatenate([np.asarray(d, dtype=np.int64) for d in docs])
    counts = sp.csr_array((np.ones(cols.size, np.int32), (rows, cols)), shape=(len(docs), V), dtype=np.int32)
    counts.sum_duplicates()
    counts.sort_indices()
    return Corpus(counts, [f"w{i}" for i in range(V)], [str(i) for i in range(len(docs))], "tiny", "test")


def model_of(phi=PHI, alpha=ALPHA):
    return ldacli.Model(phi=phi, theta=np.zeros((0, phi.shape[0])), alpha=alpha, beta=0.1,
                        vocab=[f"w{i}" for i in range(phi.shape[1])], doc_ids=[],
                        loglik_iterations=np.zeros(0, np.int64), loglik_per_token=np.zeros(0))


EXACT = sum(exact_log_marginal(d) for d in DOCS)


@pytest.mark.parametrize("method, kwargs", [
    ("left-to-right", {"particles": 200}),
    ("left-to-right", {"particles": 500, "resample": True}),
    ("importance", {"samples": 20000}),
])
def test_estimator_agrees_with_exact_marginal_within_three_standard_errors(method, kwargs):
    r = perplexity(model_of(), corpus_of(DOCS), estimator=method, seed=11, **kwargs)
    assert r["n_tokens"] == sum(map(len, DOCS)) and r["n_docs"] == len(DOCS)
    se = r["standard_error"]
    assert 0 < se < 0.05  # precise enough for the comparison to mean something
    assert abs(r["log_likelihood"] - EXACT) < 3 * se, (r["log_likelihood"], EXACT, se)
    assert r["perplexity"] == pytest.approx(math.exp(-r["log_likelihood"] / r["n_tokens"]))


def test_left_to_right_is_exact_for_one_token_documents():
    # With a single token p(w) = sum_k alpha_k / A * phi_kw, and every particle computes exactly
    # that: the estimate is exact and its standard error zero.
    docs = [[0], [3], [2]]
    r = perplexity(model_of(), corpus_of(docs), estimator="left-to-right", particles=4, seed=1)
    assert r["log_likelihood"] == pytest.approx(sum(exact_log_marginal(d) for d in docs), abs=1e-12)
    assert r["standard_error"] == pytest.approx(0, abs=1e-12)


def test_document_completion_agrees_with_the_exact_predictive_probability():
    # Documents of 2 or 3 tokens have exactly one scored token, whose predictive probability
    # given the observed ones is sum_k E[theta_k | observed] phi_kw: what completion estimates.
    docs = [d for d in DOCS if len(d) <= 3] + [[1, 2, 3], [0, 3]]
    corpus = corpus_of(docs)
    obs_words, obs_ptr, score_docs, score_words = completion_split(corpus)
    assert score_words.size == len(docs)
    exact = 0.0
    for d in range(len(docs)):
        observed = list(obs_words[obs_ptr[d]:obs_ptr[d + 1]])
        scored = [int(score_words[d])]
        exact += exact_log_marginal(observed + scored) - exact_log_marginal(observed)
    r = perplexity(model_of(), corpus, estimator="completion", iterations=4000, burn_in=100, seed=5)
    assert r["estimator"] == "document-completion" and r["batches"] == 10
    assert 0 < r["standard_error"] < 0.02
    assert abs(r["log_likelihood"] - exact) < 3 * r["standard_error"], (r["log_likelihood"], exact)


def test_batched_theta_is_the_same_chain_cut_into_blocks():
    corpus = corpus_of(DOCS)
    words, ptr = corpus.tokens()
    a, one = estimate_theta(PHI, ALPHA, words, ptr, iterations=30, burn_in=7, seed=3)
    b, batches = estimate_theta(PHI, ALPHA, words, ptr, iterations=30, burn_in=7, seed=3, batches=10)
    np.testing.assert_array_equal(a, b)
    assert len(one) == 1 and len(batches) == 10
    sizes = np.bincount(np.arange(23) * 10 // 23)  # 23 kept sweeps in blocks of 2 or 3
    np.testing.assert_allclose(sum(t * n for t, n in zip(batches, sizes)) / 23, a)
    for t in batches:  # each batch average is a set of proportions
        np.testing.assert_allclose(t.sum(axis=1), 1.0)


@pytest.mark.parametrize("resample", [False, True])
def test_left_to_right_kernel_equals_numpy_oracle_bit_for_bit(resample):
    rng = np.random.default_rng(2)
    Kt, Vt, R = 4, 9, 3
    phi_wk = rng.dirichlet(np.ones(Vt), size=Kt).T.copy()
    alpha = np.array([0.1, 0.5, 0.2, 1.0])
    lengths = np.array([5, 0, 7, 1])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, Vt, size=doc_ptr[-1]).astype(np.int32)
    D = lengths.size
    outs = [np.full((D, R), 9.0), np.full(D, 9.0), np.full((D, R), 9.0)]
    r1, r2 = np.random.Generator(np.random.PCG64(4)), np.random.Generator(np.random.PCG64(4))
    left_to_right(words, doc_ptr, phi_wk, alpha, resample, np.zeros((R, 7), np.int32),
                  np.zeros((R, Kt), np.int32), np.zeros(R), np.zeros(Kt), *outs, r1)
    expected = oracle.left_to_right(words, doc_ptr, phi_wk, alpha, resample, R, r2)
    for got, want in zip(outs, expected):
        np.testing.assert_array_equal(got, want)
    assert r1.bit_generator.state == r2.bit_generator.state


def test_particle_filter_kernel_equals_numpy_oracle_bit_for_bit():
    rng = np.random.default_rng(5)
    Kt, Vt, G, R = 3, 7, 2, 4
    phi_wk = rng.dirichlet(np.ones(Vt), size=Kt).T.copy()
    alpha = np.array([0.2, 0.7, 0.1])
    lengths = np.array([6, 0, 3, 1])
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, Vt, size=doc_ptr[-1]).astype(np.int32)
    log_z = np.full((lengths.size, G), 9.0)
    r1, r2 = np.random.Generator(np.random.PCG64(6)), np.random.Generator(np.random.PCG64(6))
    particle_filter(words, doc_ptr, phi_wk, alpha, G, np.zeros((G * R, Kt), np.int32),
                    np.zeros((G * R, Kt), np.int32), np.zeros(G * R), np.zeros(max(Kt, R)), log_z, r1)
    np.testing.assert_array_equal(log_z, oracle.particle_filter(words, doc_ptr, phi_wk, alpha, G, R, r2))
    assert r1.bit_generator.state == r2.bit_generator.state


def test_left_to_right_does_not_lose_probability_on_long_documents():
    # Plain sequential importance sampling (no resampling) collapses onto one particle on long
    # documents and its log-estimate falls far below the truth. The particle filters must not:
    # with 5 or 50 particles per filter they agree within their errors.
    rng = np.random.default_rng(8)
    docs = [list(rng.choice(V, size=150, p=PHI[k % K])) for k in range(6)]
    est = [perplexity(model_of(), corpus_of(docs), estimator="left-to-right", particles=r, seed=2) for r in (5, 50)]
    se = math.hypot(est[0]["standard_error"], est[1]["standard_error"])
    assert abs(est[0]["log_likelihood"] - est[1]["log_likelihood"]) < 3 * se


def test_loglik_given_theta_equals_numpy_oracle_bit_for_bit():
    rng = np.random.default_rng(3)
    counts = sp.random_array((5, 8), density=0.4, format="csr", dtype=np.float64, rng=rng)
    counts.data[:] = rng.integers(1, 4, size=counts.nnz)
    counts = sp.csr_array(counts.astype(np.int32))
    counts.sort_indices()
    theta = rng.dirichlet(np.ones(3), size=(5, 6))
    phi_wk = rng.dirichlet(np.ones(8), size=3).T.copy()
    idx, data, ptr = counts.indices.astype(np.int32), counts.data.astype(np.int32), counts.indptr.astype(np.int64)
    out = np.zeros((5, 6))
    loglik_given_theta(idx, data, ptr, theta, phi_wk, out)
    np.testing.assert_array_equal(out, oracle.loglik_given_theta(idx, data, ptr, theta, phi_wk))


def test_same_seed_same_estimate_and_bad_arguments_are_refused():
    m, c = model_of(), corpus_of(DOCS)
    a = perplexity(m, c, estimator="left-to-right", particles=5, seed=3)
    b = perplexity(m, c, estimator="left-to-right", particles=5, seed=3)
    assert a == b and a["seed"] == 3 and a["particles"] == 5 and a["filters"] == 10 and a["resample"] is False
    with pytest.raises(ldacli.LdacliError, match="estimator"):
        perplexity(m, c, estimator="harmonic-mean")
    with pytest.raises(ldacli.LdacliError, match="particles"):
        perplexity(m, c, estimator="left-to-right", particles=1)
    with pytest.raises(ldacli.LdacliError, match="samples"):
        perplexity(m, c, estimator="importance", samples=0)


def test_estimators_agree_on_a_trained_model(planted):
    # Not exact any more, but the three estimate the same thing per scored token closely enough
    # on a clean synthetic corpus: left-to-right and importance score all tokens of the same
    # documents and must agree within their errors.
    model = ldacli.train(planted.corpus, 5, iterations=60, seed=3)
    held = ldacli.corpora.synthetic.generate(20, 5, 50, doc_length=12, alpha=0.2, seed=72, planted=True).corpus
    l2r = perplexity(model, held, estimator="left-to-right", particles=20, seed=1)
    imp = perplexity(model, held, estimator="importance", samples=20000, seed=1)
    assert l2r["n_tokens"] == imp["n_tokens"] == 240
    se = math.hypot(l2r["standard_error"], imp["standard_error"])
    assert abs(l2r["log_likelihood"] - imp["log_likelihood"]) < 3 * se


def test_theta_is_the_same_for_any_number_of_threads(planted, monkeypatch):
    import ldacli.scoring.fixed_topics

    monkeypatch.setattr(ldacli.scoring.fixed_topics, "THETA_CHUNK_TOKENS", 500)  # many chunks, each its own stream
    words, ptr = planted.corpus.tokens()
    phi = np.random.default_rng(1).dirichlet(np.ones(planted.corpus.n_words), size=5)
    one, _ = estimate_theta(phi, np.full(5, 0.2), words, ptr, iterations=6, burn_in=2, seed=9, threads=1)
    three, _ = estimate_theta(phi, np.full(5, 0.2), words, ptr, iterations=6, burn_in=2, seed=9, threads=3)
    assert len(ldacli.scoring.fixed_topics.theta_chunks(ptr)) > 10
    np.testing.assert_array_equal(one, three)
