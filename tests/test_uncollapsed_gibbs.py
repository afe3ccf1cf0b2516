"""The uncollapsed Gibbs sampler: its gamma and Dirichlet draws, the kernels against a Python
oracle (draw for draw), recovery, thread-independence, exact resume and the command line."""

import math

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

import oracle
import scipy.sparse as sp

import ldacli
from ldacli._uncollapsed_gibbs import doc_loglik, draw_topic, draw_z_theta, gamma_fill
from ldacli.cli import main
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.methods.uncollapsed_gibbs import UncollapsedGibbs
from ldacli.corpora.synthetic import generate, recovery


def train_gibbs(corpus, *args, **kwargs):
    return ldacli.train(corpus, *args, method="gibbs", **kwargs)


# --- a Python oracle of the kernels' draws, using the same stream (Generator.random() is the
# bit generator's next_double) ---------------------------------------------------------------------

def _normal(rng):
    while True:
        u = 2.0 * rng.random() - 1.0
        v = 2.0 * rng.random() - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * math.sqrt(-2.0 * math.log(s) / s)


def _gamma(rng, shape):
    boost = 0.0
    if shape < 1.0:
        boost = math.log(1.0 - rng.random()) / shape
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(rng)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = rng.random()
        if u < 1.0 - 0.0331 * (x * x) * (x * x) or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v if boost == 0.0 else math.exp(math.log(d * v) + boost)


def _dirichlet(rng, params):
    g = [_gamma(rng, a) for a in params]
    total = 0.0
    for x in g:
        total += x
    return np.array([x / total for x in g])


def _oracle_z_theta(c, theta, phi_wk, alpha, d0, d1, nwk, rng):
    K = alpha.size
    for d in range(d0, d1):
        n_d = np.zeros(K, dtype=np.int64)
        for p in range(c.indptr[d], c.indptr[d + 1]):
            w = c.indices[p]
            cum = np.cumsum(theta[d] * phi_wk[w])
            for _ in range(c.data[p]):
                t = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), K - 1)
                n_d[t] += 1
                nwk[w, t] += 1
        theta[d] = _dirichlet(rng, alpha + n_d)


def _pcg(seed):
    return np.random.Generator(np.random.PCG64(seed))


def test_gamma_sampler_matches_the_oracle_draw_for_draw():
    shapes = np.array([0.01, 0.3, 1.0, 1.5, 7.0, 300.0] * 20)
    out = np.empty_like(shapes)
    gamma_fill(shapes, out, _pcg(3))
    oracle_rng = _pcg(3)
    np.testing.assert_array_equal(out, [_gamma(oracle_rng, a) for a in shapes])


@pytest.mark.parametrize("shape", [0.03, 0.5, 1.0, 2.5, 40.0])
def test_gamma_variates_have_the_gamma_distribution(shape):
    n = 100_000
    out = np.empty(n)
    gamma_fill(np.full(n, shape), out, _pcg(int(shape * 100)))
    assert abs(out.mean() - shape) < 5 * math.sqrt(shape / n)
    assert abs(out.var() - shape) < 5 * math.sqrt((2 * shape**2 + 6 * shape) / n)
    assert scipy.stats.kstest(out, scipy.stats.gamma(shape).cdf).pvalue > 1e-3


def test_dirichlet_draws_have_the_dirichlet_mean_and_variance():
    counts = np.array([[0], [1], [5], [20]], dtype=np.int32)  # one topic, four words
    beta = 0.5
    a = beta + counts[:, 0]
    a0 = a.sum()
    rng = _pcg(8)
    n = 20_000
    draws = np.empty((n, 4))
    for i in range(n):
        draw_topic(counts, 0, beta, draws[i], rng)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0)
    mean, var = a / a0, a * (a0 - a) / (a0**2 * (a0 + 1))
    assert (np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / n)).all()
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.05)


def test_draw_topic_matches_the_oracle():
    nwk = np.array([[3, 0], [0, 2], [7, 1], [0, 0], [1, 9]], dtype=np.int32)
    out = np.empty(5)
    draw_topic(nwk, 1, 0.1, out, _pcg(4))
    np.testing.assert_array_equal(out, _dirichlet(_pcg(4), 0.1 + nwk[:, 1]))


def test_z_theta_kernel_matches_the_oracle_draw_for_draw():
    syn = generate(25, 4, 30, doc_length=(0, 40), alpha=0.3, seed=5)
    c = syn.corpus.counts
    D, V, K = 25, 30, 4
    rng = np.random.default_rng(1)
    theta = rng.dirichlet(np.ones(K), size=D)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    alpha = np.array([0.1, 0.2, 0.3, 0.4])
    indptr = c.indptr.astype(np.int64)
    got_theta, got_nwk = theta.copy(), np.zeros((V, K), dtype=np.int32)
    for d0, d1 in [(0, 11), (11, 25)]:
        draw_z_theta(indptr, c.indices.astype(np.int32), c.data.astype(np.int32), got_theta, phi_wk, alpha,
                     d0, d1, got_nwk, np.empty(K, dtype=np.int32), np.empty(2 * K), _pcg(d0))
    want_theta, want_nwk = theta.copy(), np.zeros((V, K), dtype=np.int64)
    for d0, d1 in [(0, 11), (11, 25)]:
        _oracle_z_theta(c, want_theta, phi_wk, alpha, d0, d1, want_nwk, _pcg(d0))
    np.testing.assert_array_equal(got_nwk, want_nwk)
    np.testing.assert_array_equal(got_theta, want_theta)
    assert got_nwk.sum() == syn.corpus.n_tokens


def test_doc_loglik_matches_numpy():
    syn = generate(20, 3, 15, doc_length=(0, 30), seed=2)
    c = syn.corpus.counts
    rng = np.random.default_rng(3)
    theta = rng.dirichlet(np.ones(3), size=20)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(15), size=3).T)
    out = np.empty(20)
    doc_loglik(c.indptr.astype(np.int64), c.indices.astype(np.int32), c.data.astype(np.int32),
               theta, phi_wk, 0, 20, out)
    dense = c.toarray()
    np.testing.assert_allclose(out, (dense * np.log(theta @ phi_wk.T)).sum(axis=1), rtol=1e-12)


# --- training -----------------------------------------------------------------------------------

def test_planted_topics_are_recovered(planted):
    model = train_gibbs(planted.corpus, 5, iterations=120, burn_in=40, seed=1, threads=1)
    _, distance = recovery(planted.phi, model.phi)
    assert distance < 0.1
    assert model.loglik_per_token[-1] > model.loglik_per_token[0]
    np.testing.assert_allclose(model.phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.theta.sum(axis=1), 1.0)


@pytest.mark.slow
def test_chain_visits_topic_assignments_with_the_exact_posterior_probabilities():
    # 2 documents, 5 tokens of 5 distinct words, 2 topics: each word's count row in this sweep's
    # word-topic counts tells its token's topic, so every sweep gives one of the 32 assignments z,
    # whose posterior p(z | w) (theta and phi integrated out) is computed exactly.
    words = np.arange(5, dtype=np.int32)
    doc_ptr = np.array([0, 3, 5], np.int64)
    V, K, alpha, beta = 5, 2, 0.5, 0.3
    counts = sp.csr_array((np.ones(5, np.int32), words, doc_ptr), shape=(2, V))
    corpus = Corpus(counts, [f"w{i}" for i in range(V)], ["a", "b"], "tiny", "ldac")
    states, exact = oracle.exact_posterior(words, doc_ptr, V, K, np.full(K, alpha), beta)
    index = {z: i for i, z in enumerate(states)}
    settings = {"n_topics": K, "alpha": alpha, "beta": beta, "seed": 2024, "burn_in": 0}
    chain = UncollapsedGibbs(corpus, settings, threads=1, checkpoint=None)
    sweeps = 150000
    seen = np.zeros(len(states))
    for it in range(1, sweeps + 1):
        chain.step(it)
        seen[index[tuple(np.argmax(chain.all_buffers[0], axis=1))]] += 1
    chain.close()
    # Total variation: about 0.01 of Monte Carlo error after 150,000 sweeps (this chain switches
    # between the two label-swapped modes more slowly than the collapsed samplers; 0.006 after
    # 400,000 in three seeds, so no bias shows); the posterior under a beta of 0.6 instead of 0.3
    # is 0.06 away, under an alpha of 1 instead of 0.5 0.13 away.
    assert 0.5 * np.abs(seen / sweeps - exact).sum() < 0.02


def _bytes(model, path):
    model.save(str(path))
    return path.read_bytes()


def test_any_number_of_threads_gives_the_same_bytes(tmp_path, small_chunks):
    syn = generate(300, 5, 80, doc_length=(0, 80), alpha=0.2, seed=8)
    files = {t: _bytes(train_gibbs(syn.corpus, 5, iterations=12, burn_in=4, seed=4, threads=t), tmp_path / f"{t}.npz")
             for t in (1, 2, 3)}
    assert files[1] == files[2] == files[3]


def test_resume_gives_the_same_bytes_as_an_uninterrupted_run(tmp_path, small_chunks, keep_every_checkpoint):
    syn = generate(200, 4, 60, doc_length=(0, 60), alpha=0.2, seed=9)
    full = _bytes(train_gibbs(syn.corpus, 4, iterations=15, burn_in=5, seed=5, threads=2,
                              checkpoint=str(tmp_path / "c.npz"), checkpoint_every=3), tmp_path / "full.npz")
    for stop in (3, 9):  # inside the burn-in, and while averaging
        resumed = train_gibbs(syn.corpus, iterations=15, resume=str(tmp_path / f"at{stop}.npz"), threads=3)
        assert _bytes(resumed, tmp_path / f"r{stop}.npz") == full


def test_resume_refuses_changes(tmp_path, planted):
    ckpt = str(tmp_path / "c.npz")
    train_gibbs(planted.corpus, 5, iterations=4, burn_in=2, seed=1, checkpoint=ckpt)
    with pytest.raises(LdacliError, match="burn_in"):
        train_gibbs(planted.corpus, iterations=10, burn_in=6, resume=ckpt)
    with pytest.raises(LdacliError, match="method gibbs"):
        ldacli.train(planted.corpus, method="vem", iterations=10, resume=ckpt)


def test_bad_burn_in_is_refused(planted):
    with pytest.raises(LdacliError, match="burn_in"):
        train_gibbs(planted.corpus, 3, iterations=5, burn_in=5)


def test_the_model_file_records_the_method_and_serves_every_command(planted, tmp_path):
    model = train_gibbs(planted.corpus, 5, iterations=60, seed=1, threads=2)
    path = str(tmp_path / "m.npz")
    model.save(path)
    back = ldacli.load_model(path)
    p = back.params
    assert p["method"] == "gibbs" and p["burn_in"] == 30 and p["seed"] == 1 and p["iterations"] == 60
    assert p["trace"] == "log_p_w_given_theta_phi_per_token"
    held = generate(50, 5, 50, doc_length=60, alpha=0.2, seed=71, planted=True).corpus
    assert ldacli.perplexity(back, held, seed=2)["perplexity"] < 25
    result, _ = ldacli.infer(back, held, iterations=30, burn_in=10, seed=1)
    assert result.theta.shape == (50, 5)


# --- command line -------------------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_trains_resumes_and_scores_with_gibbs(small_ldac, tmp_path):
    ckpt = tmp_path / "g.ckpt.npz"
    r = run("train", small_ldac, "-k", 5, "--method", "gibbs", "--iterations", 30, "--burn-in", 10,
            "--seed", 2, "--threads", 2, "--checkpoint", ckpt, "-o", tmp_path / "a.npz")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and "30 sweeps" in r.stderr
    r = run("train", small_ldac, "--resume", ckpt, "--iterations", 40, "-o", tmp_path / "b.npz")
    assert r.exit_code == 0, r.stderr
    r = run("train", small_ldac, "-k", 5, "--method", "gibbs", "--iterations", 40, "--burn-in", 10,
            "--seed", 2, "--threads", 1, "-o", tmp_path / "c.npz")
    assert (tmp_path / "b.npz").read_bytes() == (tmp_path / "c.npz").read_bytes()
    r = run("perplexity", tmp_path / "b.npz", small_ldac, "--seed", 1)
    assert r.exit_code == 0 and "perplexity:" in r.stdout
    r = run("topics", tmp_path / "b.npz", "--format", "tsv")
    assert r.exit_code == 0 and r.stdout.startswith("topic\trank")


def test_cli_refuses_a_burn_in_as_long_as_the_run(small_ldac, tmp_path):
    r = run("train", small_ldac, "--method", "gibbs", "--iterations", 5, "--burn-in", 5, "-o", tmp_path / "m.npz")
    assert r.exit_code == 2 and "--burn-in" in r.stderr and "Traceback" not in r.stderr
