"""select-k: the recommendation rule, the table, resuming a killed run (a real process, a real
signal) with the same bytes, threads and a Dask cluster alike."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.model_selection import Grid, recommend

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# where the ldacli under test is (a checkout's src or an install), for the processes a test starts
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def row(k, p, se=None, distance=None):
    return {"k": k, "perplexity": p, "perplexity_se": se, "distance": distance}


def test_the_rule_never_takes_the_best_of_one_measure():
    # perplexity keeps falling with K (as on real corpora): its best is the edge of the grid, and
    # so is stability's (small K are stable); the rule takes the most stable K that fits as well
    rows = [row(5, 3000, 10, 0.10), row(10, 2600, 10, 0.20), row(20, 2480, 12, 0.30), row(50, 2400, 5, 0.35),
            row(100, 2395, 8, 0.45)]
    k, why = recommend(rows)
    assert k == 20 and "for K = 20, 50, 100" in why and "K=100" in why and "most stable of them is K=20" in why
    assert "largest K tried" not in why
    k, why = recommend([row(10, 3350, 26, 0.39), row(50, 2385, 19, 0.60), row(100, 2103, 2, 0.64)])  # 20NG's
    assert k == 100 and "K=100 is the largest K tried and held-out perplexity was still falling" in why


def test_the_band_is_five_percent_or_one_standard_error():
    assert recommend([row(5, 1060, 1, 0.1), row(10, 1049, 1, 0.3), row(20, 1000, 1, 0.4)])[0] == 10
    assert recommend([row(5, 1060, 70, 0.1), row(10, 1049, 70, 0.3), row(20, 1000, 70, 0.4)])[0] == 5
    # among the Ks of the band, the most stable, wherever it lies
    assert recommend([row(10, 1040, 1, 0.5), row(15, 1010, 1, 0.28), row(20, 1000, 1, 0.32)])[0] == 15
    # one seed: no stability; the smallest of the band
    k, why = recommend([row(10, 1040, None, None), row(20, 1000, None, None)])
    assert k == 10 and "one seed" in why


@pytest.mark.parametrize("text, expected", [
    ("5,10,20", [5, 10, 20]), ("20,5,5", [5, 20]), ("10:200:log8", [10, 15, 24, 36, 55, 85, 130, 200]),
    ("10:30:10", [10, 20, 30]),
])
def test_the_grid_takes_lists_and_ranges(text, expected):
    assert Grid().check("n_topics", text) == expected


@pytest.mark.parametrize("args, message", [
    (("-k", "0"), "-k/--topics must be one or more numbers of topics >= 1"),
    (("-k", "5:2:log3"), "-k/--topics must be numbers of topics as 5,10,20 or a range"),
    (("-k", "5", "--seeds", "0"), "--seeds must be an integer >= 1"),
    (("-k", "5", "--holdout", "1"), "--holdout must be a number strictly between 0 and 1"),
    (("-k", "5", "--burn-in", "3"), "--burn-in applies to method gibbs only"),
])
def test_select_k_refuses_settings_that_cannot_be(small_ldac, tmp_path, args, message):
    result = run("select-k", small_ldac, *args, "-o", tmp_path / "out")
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "out").exists()
    assert run("select-k", small_ldac, "-k", 5, "--warm-start", "m.npz", "-o", tmp_path / "o").exit_code == 2
    (tmp_path / "file").write_text("x")
    assert "expected a folder" in run("select-k", small_ldac, "-k", 5, "-o", tmp_path / "file").stderr


def test_select_k_finds_the_planted_topics_and_writes_table_models_and_json(small_ldac, tmp_path):
    out = tmp_path / "sk"
    result = run("select-k", small_ldac, "-k", "2,5,8", "--seeds", 2, "--iterations", 300, "--seed", 1,
                 "--threads", 2, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "recommended K = 5: Held-out perplexity within" in result.stdout and "rule: among the Ks" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[1].split()[:3] == ["K", "held-out", "perplexity"] and "<- recommended" in lines[3]
    data = json.loads((out / "select-k.json").read_text())
    assert data["recommended"] == 5 and [r["k"] for r in data["table"]] == [2, 5, 8]
    assert data["table"][1]["matched"] == 1.0 and data["table"][1]["perplexity_se"] is not None
    assert sorted(p for p in os.listdir(out) if p.endswith(".npz")) == [f"k{k}-s{i}.npz" for k in (2, 5, 8)
                                                                       for i in (1, 2)]
    model = ldacli.load_model(str(out / "k5-s2.npz"))
    assert model.params["seed"] == 3 and model.params["iterations"] == 300 and model.n_topics == 5
    assert model.params["n_docs"] == data["heldout"]["train_docs"] == 180
    tsv = (out / "select-k.tsv").read_text().splitlines()
    assert tsv[0].startswith("k\tseeds\tperplexity\tperplexity_se") and tsv[2].endswith("\ttrue")
    again = run("select-k", small_ldac, "-k", "2,5,8", "--seeds", 2, "--iterations", 300, "--seed", 1,
                "--format", "json", "-o", out)
    assert again.exit_code == 0 and "6 of 6 pairs are done already" in again.stderr
    assert json.loads(again.stdout) == data


def test_the_python_api_is_the_command(small_ldac, tmp_path):
    corpus = ldacli.read_corpus(small_ldac)
    result = ldacli.select_k(corpus, [2, 5], seeds=2, iterations=200, seed=1, threads=1, output=str(tmp_path / "a"))
    assert result["recommended"] == 5
    cli = run("select-k", small_ldac, "-k", "2,5", "--seeds", 2, "--iterations", 200, "--seed", 1, "-o", tmp_path / "b")
    assert cli.exit_code == 0
    for name in ("select-k.json", "k2-s1.npz", "k5-s2.npz"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with pytest.raises(ldacli.SettingError, match="warm_start does not apply to select-k"):
        ldacli.select_k(corpus, [2], warm_start="x.npz", output=str(tmp_path / "c"))


def _start(args, env=None):
    return subprocess.Popen([sys.executable, "-m", "ldacli", "select-k", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": PACKAGE_ROOT})


def _wait_for_pairs(folder, n, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.isdir(folder) and sum(p.endswith(".json") and p.startswith("k") for p in os.listdir(folder)) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no pair finished in time")


@pytest.mark.signals
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_a_killed_select_k_resumes_the_unfinished_pairs_with_the_same_bytes(small_ldac, tmp_path, how):
    args = [small_ldac, "-k", "2,5,8", "--seeds", 2, "--iterations", 1500, "--threads", 1]
    whole = tmp_path / "whole"
    assert run("select-k", *args, "--seed", 4, "-o", whole).exit_code == 0
    killed = tmp_path / "killed"
    proc = _start([*args, "--seed", 4, "-o", killed])
    _wait_for_pairs(killed, 2, proc)
    proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=120)
    finished = {p: os.stat(killed / p).st_mtime_ns for p in os.listdir(killed) if p.startswith("k")}
    assert 4 <= len(finished) < 12 and not (killed / "select-k.json").exists()
    if how == "SIGTERM":
        assert proc.returncode == 143
        assert "stopped by SIGTERM with" in err and "continue with the same command: ldacli select-k" in err
    else:
        assert proc.returncode == -9
    result = run("select-k", *args, "-o", killed)  # the same command, without --seed: the folder's seed
    assert result.exit_code == 0, result.stderr
    assert f"{len(finished) // 2} of 6 pairs are done already" in result.stderr
    for name, mtime in finished.items():  # the finished pairs were not trained again
        assert os.stat(killed / name).st_mtime_ns == mtime
    names = sorted(p for p in os.listdir(whole) if not p.startswith("."))
    assert names == sorted(p for p in os.listdir(killed) if not p.startswith("."))
    for name in names:
        assert (whole / name).read_bytes() == (killed / name).read_bytes(), name


@pytest.mark.slow   # whole processes
def test_a_second_select_k_in_the_same_folder_is_refused_with_75(small_ldac, tmp_path):
    out = tmp_path / "sk"
    proc = _start([small_ldac, "-k", "2,5,8", "--seeds", 2, "--iterations", 1500, "--seed", 1, "--threads", 1, "-o", out])
    _wait_for_pairs(out, 1, proc)
    second = run("select-k", small_ldac, "-k", "2", "--seeds", 1, "--iterations", 10, "-o", out)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert second.exit_code == 75 and f"another ldacli run (PID {proc.pid}) is writing it" in second.stderr
    assert "--wait" not in second.stderr   # select-k has no --wait to give


@pytest.mark.dask
def test_pairs_as_jobs_on_a_dask_cluster_give_the_same_bytes(small_ldac, tmp_path):
    pytest.importorskip("distributed")
    args = [small_ldac, "-k", "2,5", "--seeds", 2, "--iterations", 200, "--seed", 1, "-q"]
    assert run("select-k", *args, "--threads", 2, "-o", tmp_path / "threads").exit_code == 0
    result = run("select-k", *args, "--scheduler", "local:2", "-o", tmp_path / "dask")
    assert result.exit_code == 0, result.stderr
    for name in ("select-k.json", "select-k.tsv", "k2-s1.npz", "k5-s2.npz"):
        assert (tmp_path / "threads" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()
