"""Variational EM: special functions, the kernels against NumPy, the Newton steps, the ELBO,
recovery, thread-independence, exact resume, the model file and the command line."""

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.special as sc
from click.testing import CliRunner

import ldacli
from ldacli._vem import digamma_array, estep, lgamma_array, word_stats
from ldacli.cli import main
from ldacli.errors import LdacliError
from ldacli.corpora.synthetic import generate, recovery
from ldacli.methods.vem import (
    _Arrays,
    dirichlet_objective,
    newton_step,
    optimize_dirichlet,
    optimize_symmetric_dirichlet,
)


def train_vem(corpus, *args, **kwargs):
    return ldacli.train(corpus, *args, method="vem", **kwargs)


# --- special functions -------------------------------------------------------------------------

def test_digamma_matches_scipy():
    x = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.001, 40, 4000), np.logspace(1, 300, 300)])
    out = np.empty_like(x)
    digamma_array(x, out)
    np.testing.assert_allclose(out, sc.digamma(x), rtol=1e-14, atol=1e-14)


def test_digamma_on_the_negative_axis_and_at_poles():
    x = -np.linspace(0.013, 20.4, 977)  # no integers among them
    out = np.empty_like(x)
    digamma_array(x, out)
    np.testing.assert_allclose(out, sc.digamma(x), rtol=1e-10)
    poles = np.array([0.0, -1.0, -7.0, np.nan])
    out = np.empty_like(poles)
    digamma_array(poles, out)
    assert np.isnan(out).all()


def test_lgamma_matches_scipy():
    x = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.001, 40, 4000), np.logspace(1, 300, 300)])
    out = np.empty_like(x)
    lgamma_array(x, out)
    ref = sc.gammaln(x)
    # Absolute near the zeros of lgamma at 1 and 2, relative elsewhere.
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=1e-14)


# --- the kernels against NumPy -------------------------------------------------------------------

# The oracle of ``estep`` does what its docstring says in the kernel's order of operations, so
# that the two agree bit for bit. Elementwise arithmetic is NumPy's (IEEE, as the kernel's, which
# is compiled without fused multiply-adds); the sums are taken in the kernel's order (a plain
# loop, and ``_dot``'s four running sums); exp and log are the C library's (``math``, which the
# kernel calls too; NumPy's own vectorised exp may round differently); digamma and lgamma are
# the kernel's own functions (``digamma_array``, ``lgamma_array``), which the tests above hold
# to scipy.special within 1e-14: that is the only difference from scipy's formulas.

def _sum(x) -> float:
    """``sum(x)`` from the first element to the last, as the kernel's loops add."""
    total = 0.0
    for v in x:
        total += v
    return total


def _dot(a, b) -> float:
    """``a @ b`` as the kernel's ``_dot`` adds: four running sums, combined (s0 + s1) + (s2 + s3)."""
    s = [0.0, 0.0, 0.0, 0.0]
    n4 = len(a) - len(a) % 4
    for k in range(0, n4, 4):
        for j in range(4):
            s[j] += a[k + j] * b[k + j]
    for k in range(n4, len(a)):
        s[0] += a[k] * b[k]
    return (s[0] + s[1]) + (s[2] + s[3])


def _digamma(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    digamma_array(np.ascontiguousarray(x, dtype=float), out)
    return out


def _lgamma(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    lgamma_array(np.ascontiguousarray(x, dtype=float), out)
    return out


def _doc_rounds(gamma, words, n, topic, alpha, tol, max_iter):
    """The rounds of one document (see ``estep``): gamma, e, E log theta, norm, rounds, converged."""
    limit = tol * _sum(n)
    for r in range(1, max_iter + 1):
        elog = _digamma(gamma) - _digamma(np.array([_sum(gamma)]))[0]
        e = np.array([math.exp(v) for v in elog])
        norm = np.array([max(_dot(topic[w], e), 1e-300) for w in words])
        acc = np.zeros(len(gamma))
        for w, count, nm in zip(words, n, norm):
            acc += (count / nm) * topic[w]
        new = alpha + e * acc
        change = _sum(np.abs(new - gamma))
        gamma = new
        if change <= limit:
            return gamma, e, elog, norm, r, True
    return gamma, e, elog, norm, max_iter, False


def _doc_elbo(gamma, elog, norm, n, alpha):
    """The document's ELBO (see ``estep``), its terms added in the kernel's order."""
    elbo = -_sum(_lgamma(alpha)) + _lgamma(np.array([_sum(alpha)]))[0]
    for g, lg, a, el in zip(gamma, _lgamma(gamma), alpha, elog):
        elbo += lg - (g - a) * el
    elbo -= _lgamma(np.array([_sum(gamma)]))[0]
    for count, nm in zip(n, norm):
        elbo += count * math.log(nm)
    return elbo


def _oracle_estep(c, topic, alpha, gamma0, tol, max_iter, restart):
    """The E-step, document by document, as in ``estep``'s docstring."""
    D, K = gamma0.shape
    gamma, eth, elbo = gamma0.copy(), np.empty((D, K)), np.zeros(D)
    norm = np.empty(c.nnz)
    for d in range(D):
        s, t = c.indptr[d], c.indptr[d + 1]
        if s == t:
            gamma[d] = alpha
            eth[d] = [math.exp(v) for v in _digamma(alpha) - _digamma(np.array([_sum(alpha)]))[0]]
            continue
        words, n = c.indices[s:t], c.data[s:t].astype(float)
        if restart == 0:
            g, e, el, nm, _, _ = _doc_rounds(gamma0[d], words, n, topic, alpha, tol, max_iter)
        else:
            g, e, el, nm, _, conv = _doc_rounds(gamma0[d], words, n, topic, alpha, tol, 1)
            warm = _doc_elbo(g, el, nm, n, alpha)
            start = alpha + (1 - restart) * (gamma0[d] - alpha) + restart * (_sum(n) / K)
            gf, ef, elf, nmf, _, _ = _doc_rounds(start, words, n, topic, alpha, tol, max_iter)
            if _doc_elbo(gf, elf, nmf, n, alpha) >= warm:
                g, e, el, nm = gf, ef, elf, nmf
            elif not conv and max_iter > 1:
                g, e, el, nm, _, _ = _doc_rounds(g, words, n, topic, alpha, tol, max_iter - 1)
        gamma[d], eth[d], norm[s:t] = g, e, nm
        elbo[d] = _doc_elbo(g, el, nm, n, alpha)
    return gamma, eth, norm, elbo


@pytest.mark.parametrize("restart", [0.0, 0.3, 1.0])
def test_estep_kernel_matches_numpy(restart):
    syn = generate(40, 4, 30, doc_length=(0, 40), alpha=0.3, seed=3)
    c = syn.corpus.counts
    D, V, K = c.shape[0], c.shape[1], 6  # (K = 6: _dot's four running sums and its tail)
    rng = np.random.default_rng(0)
    topic = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    alpha = np.array([0.05, 0.2, 0.3, 0.4, 0.1, 0.25])
    gamma0 = alpha + rng.random((D, K)) * 5
    a = _Arrays(syn.corpus)
    gamma, eth, norm = gamma0.copy(), np.empty((D, K)), np.empty(c.nnz)
    elbo, iters = np.empty(D), np.zeros(D, np.int32)
    estep(a.indptr, a.indices, a.counts, topic, alpha, 0, D, 1e-4, 9, restart, gamma, eth, norm, elbo,
          iters, np.empty(5 * K + a.max_len))
    g, e, nm, el = _oracle_estep(c, topic, alpha, gamma0, 1e-4, 9, restart)
    for kernel, oracle in ((gamma, g), (eth, e), (norm, nm), (elbo, el)):  # bit for bit
        np.testing.assert_array_equal(kernel.view(np.int64), oracle.view(np.int64))
    assert (iters[c.indptr[1:] == c.indptr[:-1]] == 0).all()


def test_document_elbo_equals_the_textbook_formula_with_explicit_phi():
    """The kernel's short form of the ELBO against Blei et al.'s equation (15) with phi stored."""
    syn = generate(10, 3, 20, doc_length=30, alpha=0.5, seed=1)
    c = syn.corpus.counts
    K, V = 3, 20
    rng = np.random.default_rng(1)
    topic = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    alpha = np.array([0.2, 0.5, 0.9])
    a = _Arrays(syn.corpus)
    gamma = np.tile(alpha + 10.0, (10, 1))
    eth, norm, elbo, iters = np.empty((10, K)), np.empty(c.nnz), np.empty(10), np.zeros(10, np.int32)
    estep(a.indptr, a.indices, a.counts, topic, alpha, 0, 10, 1e-3, 4, 0.0, gamma, eth, norm, elbo,
          iters, np.empty(5 * K + a.max_len))
    for d in range(10):
        s, t = c.indptr[d], c.indptr[d + 1]
        w, n = c.indices[s:t], c.data[s:t].astype(float)
        phi = topic[w] * eth[d]
        phi /= phi.sum(axis=1, keepdims=True)
        g = gamma[d]
        elog = sc.digamma(g) - sc.digamma(g.sum())
        full = (sc.gammaln(alpha.sum()) - sc.gammaln(alpha).sum() + ((alpha - 1) * elog).sum()
                + (n[:, None] * phi * (elog + np.log(topic[w]) - np.log(phi))).sum()
                - sc.gammaln(g.sum()) + sc.gammaln(g).sum() - ((g - 1) * elog).sum())
        assert elbo[d] == pytest.approx(full, rel=1e-10)


def test_word_stats_kernel_matches_numpy():
    syn = generate(30, 3, 25, doc_length=(0, 30), seed=2)
    c = syn.corpus.counts
    D, V, K = 30, 25, 3
    rng = np.random.default_rng(2)
    a = _Arrays(syn.corpus)
    topic = np.ascontiguousarray(rng.random((V, K)))
    eth = np.ascontiguousarray(rng.random((D, K)))
    norm = rng.random(c.nnz) + 0.5
    sstats = np.full((V, K), np.nan)
    for w0, w1 in [(0, 10), (10, V)]:
        word_stats(a.colptr, a.rows, a.csr_pos, a.counts, norm, eth, topic, w0, w1, sstats)
    expected = np.zeros((V, K))
    docs = np.repeat(np.arange(D), np.diff(c.indptr))
    for p in range(c.nnz):
        expected[c.indices[p]] += c.data[p] / norm[p] * eth[docs[p]]
    np.testing.assert_array_equal((expected * topic).view(np.int64), sstats.view(np.int64))  # bit for bit


# --- Newton's method ----------------------------------------------------------------------------

@pytest.mark.parametrize("K", [2, 3, 5, 8])
def test_newton_step_equals_a_direct_solve_with_the_full_hessian(K):
    rng = np.random.default_rng(K)
    alpha = rng.uniform(0.05, 3.0, K)
    ss = rng.normal(-3.0, 1.0, K) * 40
    n = 40.0
    total = alpha.sum()
    g = n * (sc.digamma(total) - sc.digamma(alpha)) + ss
    H = np.diag(-n * sc.polygamma(1, alpha)) + n * sc.polygamma(1, total)
    np.testing.assert_allclose(newton_step(alpha, ss, n), np.linalg.solve(H, g), rtol=1e-10)


def test_optimize_dirichlet_finds_the_maximum_likelihood_alpha():
    rng = np.random.default_rng(5)
    true = np.array([0.05, 0.3, 1.2, 4.0])
    draws = rng.dirichlet(true, size=20000)
    ss = np.log(draws).sum(axis=0)
    # From a start far off (alpha tiny and too large), the safeguard keeps alpha positive.
    for start in (np.full(4, 1e-3), np.full(4, 30.0)):
        est = optimize_dirichlet(start, ss, 20000)
        assert (est > 0).all()
        np.testing.assert_allclose(est, true, rtol=0.05)
        best = scipy.optimize.minimize(lambda a: -dirichlet_objective(np.exp(a), ss, 20000), np.log(est)).x
        np.testing.assert_allclose(est, np.exp(best), rtol=1e-4)


def test_optimize_symmetric_dirichlet_matches_a_scalar_search():
    rng = np.random.default_rng(6)
    V, K = 30, 7
    draws = rng.dirichlet(np.full(V, 0.2), size=K)
    ss = float(np.log(draws).sum())
    est = optimize_symmetric_dirichlet(1.0, ss, K, V)
    f = lambda e: -(K * (sc.gammaln(V * e) - V * sc.gammaln(e)) + (e - 1) * ss)  # noqa: E731
    ref = scipy.optimize.minimize_scalar(f, bounds=(1e-4, 10), method="bounded", options={"xatol": 1e-10}).x
    assert est == pytest.approx(ref, rel=1e-5)


# --- training -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {},  # smoothed, alpha and eta estimated
    {"smoothed": False},
    {"estimate_alpha": False, "estimate_eta": False},
    {"estep_restart": 0.0, "estep_max_iter": 3},
    {"estep_restart": 0.2},
])
def test_the_elbo_never_decreases(kwargs):
    syn = generate(150, 6, 80, doc_length=(0, 70), alpha=0.3, beta=0.05, seed=11)
    model = train_vem(syn.corpus, 6, iterations=40, seed=2, em_tol=0, threads=1, **kwargs)
    trace = model.loglik_per_token
    assert trace.size >= 20 and model.params["trace"] == "elbo_per_token"
    steps = np.diff(trace)
    assert (steps >= -1e-8 * np.abs(trace[:-1])).all(), steps.min()
    assert trace[-1] > trace[0]


@pytest.mark.parametrize("smoothed", [True, False])
def test_planted_topics_are_recovered(planted, smoothed):
    # Variational EM has local optima; with this seed it finds the planted ones.
    model = train_vem(planted.corpus, 5, iterations=100, seed=1, smoothed=smoothed, threads=1)
    _, distance = recovery(planted.phi, model.phi)
    assert distance < 0.1
    # The estimated alpha lands near the 0.2 the corpus was drawn with.
    assert ((model.alpha > 0.1) & (model.alpha < 0.3)).all(), model.alpha
    np.testing.assert_allclose(model.phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.theta.sum(axis=1), 1.0)


def _bytes(model, path):
    model.save(str(path))
    return path.read_bytes()


def test_any_number_of_threads_gives_the_same_bytes(tmp_path, small_chunks):
    syn = generate(300, 5, 80, doc_length=(0, 80), alpha=0.2, seed=8)
    files = {t: _bytes(train_vem(syn.corpus, 5, iterations=8, seed=4, threads=t), tmp_path / f"{t}.npz")
             for t in (1, 2, 3)}
    assert files[1] == files[2] == files[3]


def test_resume_gives_the_same_bytes_as_an_uninterrupted_run(tmp_path, small_chunks):
    syn = generate(200, 4, 60, doc_length=(0, 60), alpha=0.2, seed=9)
    full = _bytes(train_vem(syn.corpus, 4, iterations=12, seed=5, em_tol=0, threads=2), tmp_path / "full.npz")
    ckpt = str(tmp_path / "c.npz")
    train_vem(syn.corpus, 4, iterations=5, seed=5, em_tol=0, threads=1, checkpoint=ckpt, checkpoint_every=2)
    state = ldacli.Checkpoint.load(ckpt)
    assert state.iteration == 5 and state.params["method"] == "vem"
    resumed = _bytes(train_vem(syn.corpus, iterations=12, resume=ckpt, threads=3), tmp_path / "resumed.npz")
    assert full == resumed


def test_resume_after_convergence_stops_where_the_run_stopped(tmp_path):
    syn = generate(100, 3, 40, doc_length=50, alpha=0.2, seed=3)
    ckpt = str(tmp_path / "c.npz")
    first = train_vem(syn.corpus, 3, iterations=500, seed=1, em_tol=1e-3, checkpoint=ckpt)
    assert first.params["stopped"] == "converged" and first.params["iterations_done"] < 500
    again = train_vem(syn.corpus, iterations=600, resume=ckpt)
    np.testing.assert_array_equal(again.phi, first.phi)
    assert again.params["iterations_done"] == first.params["iterations_done"]


def test_resume_refuses_changes_and_other_methods(tmp_path, planted):
    ckpt = str(tmp_path / "c.npz")
    train_vem(planted.corpus, 5, iterations=2, seed=1, checkpoint=ckpt)
    with pytest.raises(LdacliError, match="em_tol"):
        train_vem(planted.corpus, iterations=4, em_tol=0.5, resume=ckpt)
    with pytest.raises(LdacliError, match="another corpus"):
        train_vem(generate(20, 2, 10, seed=1).corpus, iterations=4, resume=ckpt)
    cgs = str(tmp_path / "cgs.npz")
    ldacli.train(planted.corpus, 5, iterations=2, seed=1, checkpoint=cgs)
    with pytest.raises(LdacliError, match="method cgs"):
        train_vem(planted.corpus, iterations=4, resume=cgs)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_topics": 0}, "n_topics"),
    ({"estep_tol": -1.0}, "estep_tol"),
    ({"em_tol": float("nan")}, "em_tol"),
    ({"estep_max_iter": 0}, "estep_max_iter"),
    ({"threads": 0}, "threads"),
])
def test_bad_parameters_are_refused_with_their_name(planted, kwargs, match):
    with pytest.raises(LdacliError, match=match):
        train_vem(planted.corpus, **{"n_topics": 3, "iterations": 2, **kwargs})


def test_the_model_file_records_the_method_and_serves_every_command(planted, tmp_path):
    model = train_vem(planted.corpus, 5, iterations=30, seed=1, threads=1)
    path = str(tmp_path / "m.npz")
    model.save(path)
    back = ldacli.load_model(path)
    p = back.params
    assert p["method"] == "vem" and p["trace"] == "elbo_per_token" and p["seed"] == 1
    for key in ("smoothed", "estimate_alpha", "estimate_eta", "estep_tol", "estep_max_iter", "em_tol",
                "estep_restart", "iterations", "iterations_done", "stopped", "corpus_fingerprint",
                "n_docs", "n_words", "n_tokens", "ldacli_version"):
        assert key in p
    assert back.beta == model.beta > 0 and np.array_equal(back.alpha, model.alpha)
    # infer, perplexity and topics work from phi and alpha as for any model.
    result, dropped = ldacli.infer(back, planted.corpus, iterations=30, burn_in=10, seed=1)
    assert dropped == 0 and result.theta.shape == (planted.corpus.n_docs, 5)
    held = generate(50, 5, 50, doc_length=60, alpha=0.2, seed=71, planted=True).corpus
    assert ldacli.perplexity(back, held, seed=2)["perplexity"] < 25
    assert len(back.top_words(3)) == 5


def test_plain_model_has_no_topic_prior(planted):
    model = train_vem(planted.corpus, 5, iterations=20, seed=1, smoothed=False, threads=1)
    assert model.beta == 0.0 and model.params["smoothed"] is False and model.params["estimate_eta"] is False


def test_empty_documents_get_the_prior_mean():
    syn = generate(40, 3, 20, doc_length=(0, 10), seed=3)
    empty = syn.corpus.doc_lengths == 0
    assert empty.any()
    model = train_vem(syn.corpus, 3, iterations=5, seed=1, threads=1)
    np.testing.assert_allclose(model.theta[empty], np.tile(model.alpha / model.alpha.sum(), (empty.sum(), 1)))


# --- command line -------------------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_trains_infers_and_scores_with_vem(small_ldac, tmp_path):
    out, ckpt = tmp_path / "vem.npz", tmp_path / "vem.ckpt.npz"
    r = run("train", small_ldac, "-k", 5, "--method", "vem", "--seed", 1, "--threads", 2,
            "--estep-tol", "1e-4", "--em-tol", "1e-5", "-o", out, "--checkpoint", ckpt)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and "EM iterations" in r.stderr and "ELBO per token" in r.stderr
    assert ldacli.load_model(str(out)).params["estep_tol"] == 1e-4
    r = run("topics", out, "-n", 3)
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 5
    r = run("perplexity", out, small_ldac, "--seed", 1, "--format", "json")
    assert r.exit_code == 0 and '"perplexity"' in r.stdout
    r = run("infer", out, small_ldac, "-o", tmp_path / "theta.tsv")
    assert r.exit_code == 0, r.stderr
    # --resume finds the method in the checkpoint.
    r = run("train", small_ldac, "--resume", ckpt, "--iterations", 200, "-o", tmp_path / "again.npz")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--method", "vem", "--burn-in", "3"], "--burn-in"),
    (["--estep-tol", "0.1"], "--estep-tol"),
    (["--method", "gibbs", "--no-smoothed"], "--smoothed"),
    (["--method", "lda"], "--method"),
])
def test_cli_refuses_options_of_another_method(small_ldac, tmp_path, args, fragment):
    r = run("train", small_ldac, "-o", tmp_path / "m.npz", *args)
    assert r.exit_code == 2 and fragment in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "m.npz").exists()


def test_cli_refuses_a_checkpoint_of_another_method(small_ldac, tmp_path):
    ckpt = tmp_path / "c.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 2, "--checkpoint", ckpt, "-o", tmp_path / "a.npz").exit_code == 0
    r = run("train", small_ldac, "--method", "vem", "--resume", ckpt, "-o", tmp_path / "b.npz")
    assert r.exit_code == 2 and "--method" in r.stderr and "written by method cgs" in r.stderr


def test_one_topic_trains_without_numerical_warnings():
    import warnings

    corpus = generate(30, 2, 20, doc_length=(0, 20), seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = train_vem(corpus, 1, iterations=5, seed=1, threads=1)
    np.testing.assert_allclose(model.phi.sum(), 1.0)
    assert model.alpha.tolist() == [0.1]  # with one topic alpha changes nothing, so it is kept
