"""select-k: the recommendation rule, the table, resuming a killed run (a real process, a real
signal) with the same bytes, threads and a Dask cluster alike."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.scoring.fixed_topics import holdout_split
from ldacli.model_selection import Grid, recommend
from ldacli.scoring.coherence import diversity

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# where the ldacli under test is (a checkout's src or an install), for the processes a test starts
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def rows(table, seeds=3):
    """Rows as select-k's table has them, from (K, perplexity, NPMI, diversity, balance SE,
    stability) tuples."""
    out = []
    for k, p, npmi, div, se, distance in table:
        q = max(npmi, 0) * div
        out.append({"k": k, "perplexity": p, "npmi": npmi, "diversity": div, "quality": q, "balance": 1e4 * q / p,
                    "balance_se": se if seeds > 1 else None, "distance": distance if seeds > 1 else None})
    return out


# measured (benchmarks/select_k_rules.py, 3 seeds, 300 sweeps): the shapes the rule must handle
PLANTED15 = [(5, 2030, 0.116, 0.984, 0.012, 0.634), (10, 1473, 0.254, 0.968, 0.015, 0.489),
             (15, 1175, 0.329, 0.951, 0.146, 0.204), (20, 1149, 0.297, 0.895, 0.007, 0.335),
             (30, 1182, 0.287, 0.784, 0.060, 0.543)]
NG20 = [(10, 3317, 0.201, 0.653, 0.021, 0.366), (20, 2831, 0.222, 0.661, 0.027, 0.490),
        (50, 2352, 0.237, 0.606, 0.009, 0.588), (100, 2089, 0.226, 0.548, 0.010, 0.638),
        (200, 1885, 0.222, 0.488, 0.005, 0.663)]
KOS = [(5, 1930, 0.214, 0.744, 0.010, 0.439), (10, 1768, 0.206, 0.701, 0.004, 0.515),
       (20, 1649, 0.191, 0.643, 0.020, 0.582), (50, 1516, 0.194, 0.571, 0.015, 0.681),
       (100, 1406, 0.190, 0.509, 0.005, 0.691), (200, 1333, 0.183, 0.457, 0.006, 0.712)]


def test_the_rule_finds_a_planted_k_and_stays_inside_real_grids():
    k, why = recommend(rows(PLANTED15))
    assert k == 15 and why.startswith("quality per perplexity is best at K=15")
    # 20 Newsgroups: perplexity falls to the largest K, NPMI peaks at 50, diversity and stability fall
    k, why = recommend(rows(NG20))
    assert k == 50 and "from it to K=100 perplexity changes -11.2% per doubling and topic quality -13.8%" in why
    # a grid that stops short of that peak: not determined, with a bounded next step
    k, why = recommend(rows(NG20[:3]))
    assert k is None and "best at the largest K tried, 50" in why and "a grid up to K=100 (one doubling more)" in why


def test_measures_that_pull_to_opposite_edges_do_not_determine_k():
    # KOS: quality is best at the smallest K and perplexity at the largest: the rule says so
    k, why = recommend(rows(KOS))
    assert k is None and why.startswith("K not determined: quality per perplexity is best at the smallest K tried, 5")
    assert "from K=5 to 10 held-out perplexity changes -8.4% per doubling and topic quality -9.3%" in why
    assert "a grid down to K=2 would tell" in why


def test_flat_measures_do_not_determine_k_and_ties_go_to_the_more_stable():
    flat = [(10, 1000, 0.20, 0.8, 0.05, 0.3), (20, 990, 0.20, 0.79, 0.05, 0.2), (40, 985, 0.20, 0.78, 0.05, 0.4)]
    k, why = recommend(rows(flat))
    assert k is None and "every K tried is within one standard error of the best" in why
    # a peak at 20 whose neighbour 40 is within one standard error and more stable
    tied = [(10, 1000, 0.15, 0.8, 0.01, 0.3), (20, 900, 0.20, 0.8, 0.05, 0.5), (40, 880, 0.20, 0.77, 0.01, 0.25),
            (80, 870, 0.15, 0.6, 0.01, 0.6)]
    k, why = recommend(rows(tied))
    assert k == 40 and "within one standard error: K = 20, 40, of which K=40 is the most stable" in why
    # one seed: no standard errors and no stability; the best itself
    assert recommend(rows(tied, seeds=1))[0] == 20
    # incoherent topics everywhere (NPMI <= 0): nothing to go on
    k, why = recommend(rows([(2, 50, -0.1, 1, 0, 0.1), (5, 30, -0.05, 1, 0, 0.1), (8, 29, 0.0, 1, 0, 0.1)]))
    assert k is None and "NPMI is 0 or below at every K tried" in why
    assert recommend(rows([(5, 30, 0.2, 1, 0, 0.1)]))[0] is None


def test_a_band_that_reaches_the_grid_s_edge_does_not_determine_k_whatever_the_tie_break():
    # US State of the Union paragraphs, -k 10,20,40,80 --seeds 2 (issue 49): best at K=40, but its two
    # seeds differ and the one-standard-error band holds K=10, 20, 40, of which K=10, the smallest K
    # tried and the worst fit, was "the most stable" and recommended
    sotu = [(10, 1961.9, 0.20, 0.90, 0.004, 0.20), (20, 1800.0, 0.21, 0.85, 0.004, 0.35),
            (40, 1709.3, 0.22, 0.80, 0.200, 0.55), (80, 1650.0, 0.18, 0.60, 0.004, 0.60)]
    k, why = recommend(rows(sotu, seeds=2))
    assert k is None
    assert why.startswith("K not determined: quality per perplexity is best at K=40")
    assert "1.030 +- 0.200 over the seeds" in why and "K=10, the smallest K tried, is within one standard error" in why
    assert "a grid down to K=5, would tell" in why
    # the same at the top of the grid
    top = [(10, 2000.0, 0.10, 0.90, 0.004, 0.20), (20, 1800.0, 0.21, 0.85, 0.300, 0.35),
           (40, 1709.3, 0.20, 0.80, 0.004, 0.15)]
    k, why = recommend(rows(top, seeds=2))
    assert k is None and "K=40, the largest K tried, is within one standard error" in why and "up to K=80" in why


def test_diversity_counts_what_the_vocabulary_allows():
    # 4 topics of 3 words each over 12 words: distinct, whatever the number of top words asked
    phi = np.kron(np.eye(4), np.ones(3)) + 1e-3
    assert diversity(phi, top_words=3) == diversity(phi, top_words=25) == 1.0
    assert diversity(phi[[0, 1, 1, 2]], top_words=25) == 3 / 4   # two topics alike share their top words
    assert diversity(np.ones((3, 100)), top_words=10) == 1 / 3


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
    assert "recommended K = 5: quality per perplexity is best at K=" in result.stdout
    assert "rule: the K with the most topic quality per unit of held-out perplexity" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[1].split()[:3] == ["K", "held-out", "perplexity"] and "<- recommended" in lines[3]
    data = json.loads((out / "select-k.json").read_text())
    assert data["recommended"] == 5 and [r["k"] for r in data["table"]] == [2, 5, 8]
    assert data["table"][1]["matched"] == 1.0 and data["table"][1]["perplexity_se"] is not None
    assert sorted(p for p in os.listdir(out) if p.endswith(".npz")) == [f"k{k}-s{i}.npz" for k in (2, 5, 8)
                                                                       for i in (1, 2)]
    model = ldacli.load_model(str(out / "k5-s2.npz"))
    assert model.params["seed"] == 2 and model.params["iterations"] == 300 and model.n_topics == 5
    assert model.params["n_docs"] == data["heldout"]["train_docs"] == 180
    tsv = (out / "select-k.tsv").read_text().splitlines()
    assert tsv[0].startswith("k\tseeds\tperplexity\tperplexity_se") and tsv[2].endswith("\ttrue")
    again = run("select-k", small_ldac, "-k", "2,5,8", "--seeds", 2, "--iterations", 300, "--seed", 1,
                "--format", "json", "-o", out)
    assert again.exit_code == 0 and "6 of 6 pairs are done already" in again.stderr
    assert json.loads(again.stdout) == data


def test_without_the_report_extra_it_says_once_even_with_q_that_no_page_was_written(small_ldac, tmp_path,
                                                                                     without_the_report_extra):
    out = tmp_path / "sk"
    warning = (f"Warning: {out}/select-k.html not written: the page's charts need the report extra, "
               "pip install 'ldacli[report]'\n")
    args = ("select-k", small_ldac, "-k", "2,3", "--seeds", 1, "--iterations", 20, "--seed", 1, "--format", "tsv",
            "-o", out)
    result = run(*args, "-q")
    assert result.exit_code in (0, 3) and result.stderr == warning
    assert result.stdout.startswith("k\tseeds\t")
    result = run(*args)
    assert result.exit_code in (0, 3) and result.stderr.count("select-k.html") == 1
    assert result.stderr.endswith(warning)
    assert not os.path.exists(out / "select-k.html") and os.path.exists(out / "select-k.tsv")


def test_the_python_api_is_the_command(small_ldac, tmp_path):
    corpus = ldacli.read_corpus(small_ldac)
    result = ldacli.select_k(corpus, [2, 5], seeds=2, iterations=200, seed=1, threads=1, output=str(tmp_path / "a"))
    assert result["recommended"] is None and not result["determined"]
    assert result["reason"].startswith("K not determined: quality per perplexity is best at the largest K tried, 5")
    assert "a grid up to K=10 (one doubling more) would tell" in result["reason"]
    cli = run("select-k", small_ldac, "-k", "2,5", "--seeds", 2, "--iterations", 200, "--seed", 1, "-o", tmp_path / "b")
    assert cli.exit_code == 3   # K=5 is the largest K tried: not determined
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


def _files(folder):
    return {p: os.stat(folder / p).st_mtime_ns for p in os.listdir(folder) if p.startswith("k")}


def _wait_for_checkpoint(folder, proc, timeout=120):
    # a checkpoint of a pair under way: a finished pair's is removed only after its scores are
    # written, and a signal sent then would find the next pair before its first checkpoint
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.isdir(folder) and any(p.endswith(".checkpoint.npz") and not os.path.exists(
                folder / p.replace(".checkpoint.npz", ".json")) for p in os.listdir(folder)):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no checkpoint written in time")


@pytest.mark.signals
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_a_killed_select_k_continues_the_pair_under_way_with_the_same_bytes(small_ldac, tmp_path, how):
    # SIGTERM: the pair under way writes its checkpoint as it stops; SIGKILL: it has the one of
    # --checkpoint-every; either way the same command continues it mid-pair, to the same bytes
    args = [small_ldac, "-k", "2,5,8", "--seeds", 2, "--iterations", 1500, "--threads", 1, "--checkpoint-every", 100]
    whole = tmp_path / "whole"
    assert run("select-k", *args, "--seed", 4, "-o", whole).exit_code in (0, 3)
    killed = tmp_path / "killed"
    proc = _start([*args, "--seed", 4, "-o", killed])
    _wait_for_pairs(killed, 2, proc)
    _wait_for_checkpoint(killed, proc)
    proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=120)
    files = _files(killed)
    finished = {p: t for p, t in files.items() if not p.endswith(".checkpoint.npz")}
    under_way = [p for p in files if p.endswith(".checkpoint.npz")]
    assert 4 <= len(finished) < 12 and len(under_way) == 1 and not (killed / "select-k.json").exists()
    at = ldacli.Checkpoint.load(str(killed / under_way[0])).iteration
    assert 0 < at <= 1500  # 1500: stopped after the last sweep's checkpoint, before the model was written
    if how == "SIGTERM":
        assert proc.returncode == 143
        assert "stopped by SIGTERM with" in err and "1 pairs under way continue from their checkpoints" in err
        assert f"{under_way[0]}" in err and "continue with the same command: ldacli select-k" in err
    else:
        assert proc.returncode == -9 and at % 100 == 0
    result = run("select-k", *args, "-o", killed)  # the same command, without --seed: the folder's seed
    assert result.exit_code in (0, 3), result.stderr
    pair = under_way[0].split(".")[0]
    assert f"{len(finished) // 2} of 6 pairs are done already" in result.stderr
    assert f"1 of them from their checkpoints ({pair} at sweep {at})" in result.stderr
    for name, mtime in finished.items():  # the finished pairs were not trained again
        assert os.stat(killed / name).st_mtime_ns == mtime
    names = sorted(p for p in os.listdir(whole) if not p.startswith("."))
    assert names == sorted(p for p in os.listdir(killed) if not p.startswith("."))
    assert not any(p.endswith(".checkpoint.npz") for p in names)
    for name in names:
        assert (whole / name).read_bytes() == (killed / name).read_bytes(), name


def test_a_checkpoint_of_other_settings_is_not_continued(small_ldac, tmp_path):
    out = tmp_path / "sk"
    args = ["-k", "2", "--seeds", 1, "--seed", 1, "--threads", 1, "-o", out]
    corpus = ldacli.read_corpus(small_ldac)
    train, _, _ = holdout_split(corpus, 0.1, seed=1)
    ldacli.train(train, 2, seed=1, iterations=40, alpha=0.5, checkpoint=str(out / "k2-s1.checkpoint.npz")) \
        if out.mkdir() is None else None
    result = run("select-k", small_ldac, *args, "--iterations", 60)
    assert result.exit_code == 3, result.stderr
    assert "k2-s1.checkpoint.npz: not continued, written by a run of other settings" in result.stderr
    assert not (out / "k2-s1.checkpoint.npz").exists()
    model = ldacli.load_model(str(out / "k2-s1.npz"))
    assert model.params["alpha"] == 0.1 and model.params["iterations_done"] == 60


# A select-k in a process of its own, held to 2 GB of address space and a minute: a file of its
# folder that never ends must not hang it or fill the memory.
LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from ldacli.cli import main
main(sys.argv[1:], prog_name="ldacli")
"""


@pytest.mark.parametrize("what", ["pipe", "/dev/zero", "nested JSON"])
def test_a_pair_file_that_is_a_pipe_a_device_or_nested_json_neither_hangs_nor_breaks_select_k(small_ldac, tmp_path,
                                                                                               what):
    """select-k read its folder's JSON files with a plain open: a pipe hung it, /dev/zero filled
    the memory, JSON nested 200,000 deep was a traceback (issue 49)."""
    out = tmp_path / "sk"
    out.mkdir()
    scores = out / "k2-s1.json"
    if what == "pipe":
        os.mkfifo(scores)
    elif what == "/dev/zero":
        scores.symlink_to("/dev/zero")
    else:
        scores.write_text("[" * 200_000 + "]" * 200_000)
    args = ["select-k", small_ldac, "-k", 2, "--seeds", 1, "--iterations", 20, "--seed", 1, "--threads", 1, "-q",
            "-o", out]
    r = subprocess.run([sys.executable, "-c", LIMITED, *map(str, args)], capture_output=True, text=True, timeout=60)
    if what == "nested JSON":  # unreadable scores: the pair is run again and its file written anew
        assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
        assert json.loads(scores.read_text())["k"] == 2
        return
    found = "a pipe" if what == "pipe" else "a character device"
    assert r.returncode == 1 and r.stderr.startswith(f"Error: {scores}: expected a file, found {found}"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (out / "k2-s1.npz").exists()


@pytest.mark.parametrize("key, value", [("npmi", None), ("perplexity", 0), ("diversity", "x"), ("k", 3), ("run", [])])
def test_a_pairs_scores_of_other_shapes_are_scored_again(small_ldac, tmp_path, key, value):
    """Scores whose values are not what select-k writes (beside the pair's very model, its
    SHA-256 right) were a TypeError in the table (found by the fuzzing benchmark's select-k
    family, issue 49): the pair is trained and scored again."""
    out = tmp_path / "sk"
    args = ["select-k", small_ldac, "-k", 2, "--seeds", 1, "--iterations", 20, "--seed", 1, "--threads", 1, "-o", out]
    assert run(*args).exit_code == 3
    scores = json.loads((out / "k2-s1.json").read_text())
    (out / "k2-s1.json").write_text(json.dumps({**scores, key: value}))
    r = run(*args, "--format", "json")
    assert r.exit_code == 3 and isinstance(r.exception, SystemExit), r.exception
    assert "1 of 1 pairs are done already" not in r.stderr and json.loads((out / "k2-s1.json").read_text()) == scores


def test_checkpoints_of_pairs_on_a_cluster_are_refused(small_ldac, tmp_path):
    result = run("select-k", small_ldac, "-k", "2", "--checkpoint-every", 10, "--scheduler", "local:1",
                 "-o", tmp_path / "o")
    assert result.exit_code == 2 and "--checkpoint-every applies to pairs run on threads" in result.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow   # whole processes
def test_a_second_select_k_in_the_same_folder_is_refused_with_75_or_waits(small_ldac, tmp_path):
    out = tmp_path / "sk"
    args = [small_ldac, "-k", "2,5", "--seeds", 2, "--seed", 1, "--threads", 1, "-o", out]
    proc = _start([*args, "--iterations", 1500])
    _wait_for_pairs(out, 1, proc)
    second = run("select-k", small_ldac, "-k", "2", "--seeds", 1, "--iterations", 10, "-o", out)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert second.exit_code == 75 and f"another ldacli run (PID {proc.pid}) is writing it" in second.stderr
    assert "or give --wait SECONDS to wait for it" in second.stderr
    # the hint works as printed: with --wait, the second waits for the first and finds its pairs done
    args[-1] = out = tmp_path / "again"
    first = _start([*args, "--iterations", 300])
    _wait_for_pairs(out, 1, first)
    waited = run("select-k", *args, "--iterations", 300, "--wait", 120)
    assert first.wait(timeout=120) == 3
    assert waited.exit_code == 3, waited.stderr
    assert "4 of 4 pairs are done already" in waited.stderr


@pytest.mark.slow   # a whole process on a terminal
def test_progress_moves_within_a_pair_and_names_it(small_ldac, tmp_path):
    # what a person sees on a terminal: a bar of sweeps naming the pair under way and its sweep
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 150, 0, 0))  # a terminal's size
    args = [small_ldac, "-k", "2,5", "--seeds", 1, "--iterations", 3000, "--seed", 1, "--threads", 1, "-o", tmp_path]
    proc = subprocess.Popen([sys.executable, "-m", "ldacli", "select-k", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=slave, env={**os.environ, "PYTHONPATH": PACKAGE_ROOT})
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=120) == 3
    text = seen.decode(errors="replace")
    sweeps = {int(m) for m in re.findall(r"K=2 s1 (\d+)/3000", text)}
    assert len({s for s in sweeps if 0 < s < 3000}) >= 2, text[-2000:]   # it moved within the first pair
    assert re.search(r"K=5 s1 \d+/3000", text) and "sweep" in text and re.search(r"\d+:\d\d", text)
    assert "/6000" in text   # the bar counts the sweeps of every pair


def test_verbose_logs_say_where_each_pair_is(small_ldac, tmp_path):
    result = run("select-k", small_ldac, "-k", "2", "--seeds", 1, "--iterations", 100, "--seed", 1, "-v",
                 "-o", tmp_path / "sk")
    assert result.exit_code == 3, result.stderr
    assert "k2-s1 (K=2): started" in result.stderr and "k2-s1 (K=2): sweep 50 of 100, " in result.stderr
    assert "k2-s1.npz (K=2, seed 1): held-out perplexity" in result.stderr


def test_seed_one_is_train_seed_one(small_ldac, tmp_path):
    # run 1 of every K is what train --seed SEED trains on the same documents; the note names its file
    result = run("select-k", small_ldac, "-k", "5", "--seeds", 2, "--iterations", 50, "--seed", 7, "--threads", 1,
                 "-o", tmp_path / "sk")
    assert result.exit_code == 3, result.stderr
    assert "k5-s1.npz (K=5, seed 7)" in result.stderr and "k5-s2.npz (K=5, seed 8)" in result.stderr
    assert "seeds 7..8" in result.stdout
    corpus = ldacli.read_corpus(small_ldac)
    train, _, _ = holdout_split(corpus, 0.1, seed=7)
    alone = ldacli.train(train, 5, seed=7, iterations=50, threads=1)
    model = ldacli.load_model(str(tmp_path / "sk" / "k5-s1.npz"))
    assert model.params["seed"] == 7 and (model.phi == alone.phi).all() and (model.theta == alone.theta).all()


@pytest.mark.dask
def test_pairs_as_jobs_on_a_dask_cluster_give_the_same_bytes(small_ldac, tmp_path):
    pytest.importorskip("distributed")
    args = [small_ldac, "-k", "2,5", "--seeds", 2, "--iterations", 200, "--seed", 1, "-q"]
    assert run("select-k", *args, "--threads", 2, "-o", tmp_path / "threads").exit_code == 3
    result = run("select-k", *args, "--scheduler", "local:2", "-o", tmp_path / "dask")
    assert result.exit_code == 3, result.stderr
    for name in ("select-k.json", "select-k.tsv", "k2-s1.npz", "k5-s2.npz"):
        assert (tmp_path / "threads" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()
