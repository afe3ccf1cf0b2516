"""The training driver, the same for every method: settings, resume (files of the previous
format included), signals, time limits, early stopping, threads, and what info and topics
say about every method's output."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli import parallel
from ldacli.cli import main
from ldacli.errors import LdacliError, SettingError
from ldacli.methods import driver
from ldacli.corpora.synthetic import generate

DATA = os.path.join(os.path.dirname(__file__), "data", "format1")
METHODS = ("cgs", "vem", "gibbs")
# A short run of each method with settings other than the defaults.
NON_DEFAULT = {
    "cgs": dict(sampler="alias", shards=2, optimize_interval=2, optimize_burn_in=1, loglik_every=3),
    "vem": dict(smoothed=False, estimate_alpha=False, estep_max_iter=3, estep_tol=0.01, em_tol=0),
    "gibbs": dict(burn_in=3, loglik_every=2),
}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def corpus():
    return generate(120, 4, 40, doc_length=(5, 40), alpha=0.3, seed=21, planted=True).corpus


def same_model(a, b):
    for name in ("phi", "theta", "alpha", "loglik_iterations", "loglik_per_token"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.beta == b.beta


# --- files of the previous format ----------------------------------------------------------------

@pytest.mark.parametrize("method, total", [("cgs", 12), ("vem", 8), ("gibbs", 10)])
def test_format_1_checkpoints_resume_exactly_and_format_1_models_load(method, total, tmp_path):
    tiny = ldacli.read_corpus(os.path.join(DATA, "tiny.ldac"))
    # a resumed run goes on writing its checkpoint where it was (format-1 files do not say)
    ckpt = shutil.copy(os.path.join(DATA, f"{method}.ckpt.npz"), tmp_path / "c.npz")
    expected = ldacli.load_model(os.path.join(DATA, f"{method}.model.npz"))
    resumed = ldacli.train(tiny, iterations=total, resume=str(ckpt), threads=2)
    assert ldacli.Checkpoint.load(str(ckpt)).iteration == total
    if method == "vem":
        # vem's state is floating point, and the files were computed by another NumPy build,
        # whose sums may round differently in the last bit: the same to 12 digits (exact
        # resume within one installation is test_resume_with_non_default_settings_...)
        for name in ("phi", "theta", "alpha", "loglik_per_token"):
            np.testing.assert_allclose(getattr(resumed, name), getattr(expected, name), rtol=1e-12, err_msg=name)
        np.testing.assert_array_equal(resumed.loglik_iterations, expected.loglik_iterations)
    elif method == "cgs":
        # the same chain exactly; the log-likelihood is now summed from histograms of the
        # counts (the same on threads and on a Dask cluster's workers, whatever the layout),
        # which may round the sum in the last bit differently from 0.1.0's sum over the cells
        for name in ("phi", "theta", "alpha", "loglik_iterations"):
            np.testing.assert_array_equal(getattr(resumed, name), getattr(expected, name), err_msg=name)
        np.testing.assert_allclose(resumed.loglik_per_token, expected.loglik_per_token, rtol=1e-14, atol=0)
    else:
        # the uninterrupted run of 0.1.0 and the run resumed by this version agree exactly,
        # the trace included (0.1.0 itself lost gibbs's --loglik-every on resume)
        same_model(resumed, expected)
    assert resumed.params["method"] == method == expected.params.get("method", "cgs")


@pytest.mark.parametrize("method", METHODS)
def test_info_describes_format_1_files(method):
    for name in (f"{method}.ckpt.npz", f"{method}.model.npz"):
        r = run("info", os.path.join(DATA, name))
        assert r.exit_code == 0, r.stderr
        assert "None" not in r.stdout and f"method:           {method}," in r.stdout


# --- settings --------------------------------------------------------------------------------------

def test_the_library_rejects_options_of_another_method_and_unknown_ones(corpus):
    with pytest.raises(SettingError, match="sampler applies to method cgs only, found method vem") as e:
        ldacli.train(corpus, 3, method="vem", sampler="dense")
    assert e.value.name == "sampler"
    with pytest.raises(SettingError, match="burn_in applies to method gibbs only"):
        ldacli.train(corpus, 3, burn_in=3)
    with pytest.raises(SettingError, match="unknown setting 'sweeps'"):
        ldacli.train(corpus, 3, sweeps=3)
    with pytest.raises(SettingError, match="method must be one of cgs, vem, gibbs"):
        ldacli.train(corpus, 3, method="lda")
    with pytest.raises(SettingError, match="loglik_every must be 1 for method vem"):
        ldacli.train(corpus, 3, method="vem", loglik_every=5)


def test_defaults_come_from_the_methods():
    assert driver.METHODS["cgs"].DEFAULT_ITERATIONS == 1000 and driver.METHODS["vem"].DEFAULT_ITERATIONS == 100
    text = run("train", "--help").stdout
    assert "[default: 1000; vem: 100]" in text and "[default: 0.005]" in text


def test_all_cores_means_the_cores_this_process_may_use_for_every_method(corpus, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert parallel.default_threads() == 1
    seen = {}
    for method in METHODS:
        cls = driver.METHODS[method]
        init = cls.__init__

        def spy(self, *args, _init=init, _name=method, **kwargs):
            seen[_name] = kwargs["threads"]
            _init(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", spy)
        ldacli.train(corpus, 3, method=method, iterations=2, seed=1)
    assert seen == {"cgs": 1, "vem": 1, "gibbs": 1}


# --- resume ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_resume_with_non_default_settings_gives_the_same_model(method, corpus, tmp_path, keep_every_checkpoint):
    settings = NON_DEFAULT[method]
    full = ldacli.train(corpus, 4, method=method, iterations=9, seed=3, threads=2,
                        checkpoint=str(tmp_path / "c.npz"), checkpoint_every=4, **settings)
    # resumed from sweep 4 with nothing but the checkpoint: every setting, --loglik-every
    # included, comes from it
    resumed = ldacli.train(corpus, iterations=9, resume=str(tmp_path / "at4.npz"), threads=1)
    same_model(resumed, full)
    assert resumed.params == full.params


# --- signals, time limits, early stopping: the same for every method -----------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_after_the_step_with_a_checkpoint_that_resumes_exactly(method, signum, corpus, tmp_path):
    ckpt = str(tmp_path / "sig.npz")

    def signal_at_step_3(iteration):
        if iteration == 3:
            os.kill(os.getpid(), signum)

    with pytest.raises(ldacli.TrainingInterrupted, match=signal.Signals(signum).name) as e:
        ldacli.train(corpus, 4, method=method, iterations=10, seed=6, checkpoint=ckpt, callback=signal_at_step_3,
                     **NON_DEFAULT[method])
    assert e.value.signum == signum and ldacli.Checkpoint.load(ckpt).iteration == 3
    resumed = ldacli.train(corpus, iterations=10, resume=ckpt)
    straight = ldacli.train(corpus, 4, method=method, iterations=10, seed=6, **NON_DEFAULT[method])
    same_model(resumed, straight)


@pytest.mark.parametrize("method", METHODS)
def test_max_seconds_stops_every_method_and_is_recorded(method, corpus, tmp_path):
    m = ldacli.train(corpus, 3, method=method, iterations=50, seed=1, max_seconds=1e-9,
                     checkpoint=str(tmp_path / "c.npz"))
    assert m.params["iterations_done"] == 1 and m.params["stopped"] == "time limit"
    assert m.params["max_seconds"] == 1e-9 and ldacli.Checkpoint.load(str(tmp_path / "c.npz")).iteration == 1
    np.testing.assert_allclose(m.phi.sum(axis=1), 1.0)


@pytest.mark.parametrize("method", METHODS)
def test_early_stopping_works_for_every_method(method, corpus):
    m = ldacli.train(corpus, 4, method=method, iterations=400, seed=2, holdout=0.2, patience=1,
                     **({"em_tol": 0} if method == "vem" else {"loglik_every": 2}))
    p = m.params
    assert p["stopped"] == "early stopping" and p["stopped_early"] and p["iterations_done"] < 400
    assert m.theta.shape[0] == corpus.n_docs - round(0.2 * corpus.n_docs)


# Sweeps of each method for a whole run of about two seconds on the small corpus, and its options.
PROCESS_RUNS = {"cgs": ("4000", "--shards", "2"), "vem": ("400", "--em-tol", "0"), "gibbs": ("3000",)}


def ldacli_process(*args, cwd, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "ldacli", *map(str, args)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.signals
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_process_stopped_by_a_signal_continues_with_the_command_it_printed(method, signum, small_ldac, tmp_path):
    # A real process stopped by a real signal at a random sweep; then exactly the command it
    # printed, run as a user would copy it: the same bytes as the run never stopped, and the
    # resumed run goes on writing its checkpoint.
    iterations, *extra = PROCESS_RUNS[method]
    common = ("train", "small.ldac", "-k", 5, "--method", method, "--seed", 3, "--iterations", iterations, *extra)
    straight = ldacli_process(*common, "-o", "straight.npz", cwd=tmp_path)
    proc = ldacli_process(*common, "--checkpoint", "c.npz", "--checkpoint-every", 7, "-o", "m.npz", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not (tmp_path / "c.npz").exists() and time.monotonic() < deadline:  # sweep 7 is done
        time.sleep(0.01)
    time.sleep(np.random.default_rng().uniform(0, 0.3))
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert straight.wait(timeout=120) == 0
    assert proc.returncode == 128 + signum, stderr
    assert stdout == "" and not (tmp_path / "m.npz").exists() and "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"stopped by {signal.Signals(signum).name} after ") and "Error" not in stderr, stderr
    stopped_at = ldacli.Checkpoint.load(str(tmp_path / "c.npz")).iteration
    assert 7 <= stopped_at < int(iterations)
    command = shlex.split(last.split("; continue with: ")[1])
    assert command[:2] == ["ldacli", "train"]
    resumed = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert (tmp_path / "m.npz").read_bytes() == (tmp_path / "straight.npz").read_bytes()
    assert ldacli.Checkpoint.load(str(tmp_path / "c.npz")).iteration == int(iterations)


def test_a_resumed_run_refuses_what_the_checkpoint_fixes_and_takes_what_it_continues(small_ldac, tmp_path):
    ckpt = tmp_path / "c.npz"
    r = run("train", small_ldac, "-k", 4, "--seed", 1, "--iterations", 30, "--checkpoint", ckpt,
            "--checkpoint-every", 10, "--min-df", 2, "--max-seconds", 1e-9, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0 and ldacli.Checkpoint.load(str(ckpt)).iteration == 1
    for option, value in (("-k", 5), ("--seed", 2), ("--sampler", "alias"), ("--min-df", 1), ("--method", "vem")):
        r = run("train", small_ldac, "--resume", ckpt, option, value, "-o", tmp_path / "m.npz")
        assert r.exit_code == 2 and "cannot change on resume" in r.stderr or "written by method" in r.stderr, r.stderr
    # what it continues may change: more sweeps, no time limit now
    r = run("train", small_ldac, "--resume", ckpt, "--iterations", 40, "--max-seconds", 1000, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    model = ldacli.load_model(str(tmp_path / "m.npz"))
    assert model.params["iterations_done"] == 40 and model.params["max_seconds"] == 1000
    assert model.params["min_df"] == 2 and ldacli.Checkpoint.load(str(ckpt)).iteration == 40


# --- what info and topics say about every method's files -------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_info_describes_every_methods_model_and_checkpoint_truthfully(method, corpus, tmp_path):
    ckpt, model = tmp_path / "c.npz", tmp_path / "m.npz"
    ldacli.train(corpus, 4, method=method, iterations=6, seed=1, checkpoint=str(ckpt)).save(str(model))
    for path, kind in ((model, "model"), (ckpt, "checkpoint")):
        r = run("info", path)
        assert r.exit_code == 0, r.stderr
        text = r.stdout
        assert "None" not in text and f"({kind})" in text
        data = json.loads(run("info", path, "--format", "json").stdout)
        assert data["method"]["name"] == method and data["sizes"]["topics"] == 4
        if method == "vem":
            assert "method:           vem, variational EM (smoothed True" in text
            assert "estimated by Newton's method" in text and "ELBO per token" in text
            assert "every 1 EM iterations" in text
            assert data["priors"]["alpha"]["source"].startswith("estimated") and data["priors"]["learned"]
        else:
            assert data["priors"]["alpha"]["source"] == "set" and not data["priors"]["learned"]
        if method == "cgs":
            assert "sampler dense" in text and "log p(w, z) per token" in text
        if method == "gibbs":
            assert "burn_in 3" in text and "log p(w | theta, phi) per token" in text
        assert ("no point recorded yet (one every 10 sweeps)" in text) == (kind == "checkpoint" and method != "vem")
    assert "6 done of 6 asked (stopped: iterations)" in run("info", model).stdout


@pytest.mark.parametrize("method", METHODS)
def test_topics_coherence_finds_the_training_corpus_from_another_folder(method, small_ldac, tmp_path, monkeypatch):
    train_dir, other = tmp_path / "train", tmp_path / "elsewhere"
    train_dir.mkdir()
    other.mkdir()
    for name in ("small.ldac", "small.vocab"):
        shutil.copy(tmp_path / name, train_dir / name)
    monkeypatch.chdir(train_dir)
    r = run("train", "small.ldac", "-k", 5, "--method", method, "--iterations", 5, "--seed", 1, "-o", "m.npz")
    assert r.exit_code == 0, r.stderr
    monkeypatch.chdir(other)
    r = run("topics", train_dir / "m.npz", "--coherence", "npmi")
    assert r.exit_code == 0, r.stderr
    assert "mean npmi coherence" in r.stdout and str(train_dir / "small.ldac") in r.stdout


def test_a_checkpoint_and_its_model_of_another_method_are_refused(corpus, tmp_path):
    ckpt = str(tmp_path / "c.npz")
    ldacli.train(corpus, 3, method="gibbs", iterations=2, seed=1, checkpoint=ckpt)
    with pytest.raises(SettingError, match="written by method gibbs, found method cgs"):
        ldacli.train(corpus, method="cgs", iterations=4, resume=ckpt)
    with pytest.raises(LdacliError, match="burn_in=1"):
        ldacli.train(corpus, iterations=4, resume=ckpt, burn_in=2)


# --- a run settled once ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def parent(corpus, tmp_path_factory):
    """A short collapsed Gibbs model of ``corpus`` in a file: the parent of a warm start and of an update."""
    path = str(tmp_path_factory.mktemp("parent") / "parent.npz")
    ldacli.train(corpus, 4, iterations=5, seed=3, output=path)
    return path


@pytest.mark.parametrize("run", ["cgs", "vem", "gibbs", "seeded", "warm start", "update", "resumed"])
def test_a_runs_plan_holds_its_declared_settings_read_only_and_what_follows_from_them_as_fields(
        run, corpus, parent, tmp_path):
    given = {"n_topics": 4, "iterations": 6, "seed": 1}
    given.update({"cgs": {}, "vem": {"method": "vem"}, "gibbs": {"method": "gibbs"},
                  "seeded": {"seed_words": {"first": ["w00000", "w00001"]}},
                  "warm start": {"n_topics": None, "warm_start": parent, "add_topics": 1},
                  "update": {"n_topics": None, "update": parent},
                  "resumed": {"checkpoint": str(tmp_path / "c.npz")}}[run])
    if run == "resumed":
        ldacli.train(corpus, **{**given, "iterations": 3, "seed_words": {"first": ["w00000"]}})
        given = {"resume": given["checkpoint"], "iterations": 6}
    plan = driver.settle(corpus, given, notes=False)
    declared = [s.name for s in driver.settings_of(plan.cls)]
    assert list(plan.values) == declared  # every setting of its method, and nothing else
    with pytest.raises(TypeError):
        plan.values["n_topics"] = 7
    with pytest.raises(AttributeError):  # (frozen)
        plan.values = {}
    seeded = run in ("seeded", "resumed")
    if run == "seeded":  # the declared default, and the prior the seeds give
        assert plan.values["seed_strength"] == 0.25 and plan.topic_word_prior.n_cells == 2
    assert plan.seeded is not None if seeded else plan.seeded is None
    if run == "warm start":  # the parent's 4 topics and one more
        assert plan.values["n_topics"] == 5 and plan.descent == [0, 1, 2, 3, None]
        assert plan.parent.n_topics == 4 and plan.topic_word_prior is None
    if run == "update":  # the parent's evidence is the prior; the topic it frees for the night
        assert plan.updated.n_topics == 4 and len(plan.freed) == 1 and plan.topic_word_prior.n_cells > 0
        assert plan.values["optimize_interval"] == 0 and plan.values["alpha"] == list(plan.updated.alpha)
    if run == "resumed":  # the checkpoint's prior is read by the method from the checkpoint
        assert plan.checkpoint.iteration == 3 and plan.values["seed_strength"] == 0.25
    with pytest.raises(ValueError, match=r"found \['freed'\] undeclared"):
        driver.Plan(plan.cls, {**plan.values, "freed": plan.freed}, plan.corpus)
    model = driver.train_planned(plan)
    assert model.params["iterations_done"] == 6 and list(plan.values) == declared


def test_a_run_on_a_shard_folder_reads_its_checkpoint_once_and_tells_its_notes_once(corpus, tmp_path, monkeypatch,
                                                                                  caplog):
    ldacli.write_shards(corpus, tmp_path / "f", 2)
    folder = str(tmp_path / "f")
    kw = {"n_topics": 6, "seed": 2, "threads": 1, "seed_words": {"first": ["w00000", "w00001"]}}
    whole = ldacli.train(folder, iterations=8, **kw)
    ldacli.train(folder, iterations=4, checkpoint=str(tmp_path / "c.npz"), **kw)
    disk, memory = (driver.memory_needed(c, **kw) for c in (ldacli.open_shard_folder(folder), ldacli.read_corpus(folder)))
    loads = []
    load = ldacli.Checkpoint.load.__func__
    monkeypatch.setattr(ldacli.Checkpoint, "load", classmethod(lambda cls, path: loads.append(path) or load(cls, path)))
    for limit in (None, int((disk + memory) / 2)):  # read whole; from disk
        loads.clear()
        caplog.clear()
        with caplog.at_level("INFO", logger="ldacli"):
            resumed = ldacli.train(folder, resume=str(tmp_path / "c.npz"), iterations=8, memory_limit=limit)
        assert loads == [str(tmp_path / "c.npz")]
        same_model(resumed, whole)
        with caplog.at_level("INFO", logger="ldacli"):
            ldacli.train(folder, iterations=2, memory_limit=limit, **kw)
        assert [r.getMessage() for r in caplog.records].count("seed words: all 2 found in the vocabulary") == 1
