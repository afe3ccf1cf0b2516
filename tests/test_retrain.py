"""Retraining on a schedule: warm starts on a grown corpus, topic ids that stay put, the model
diff, --align-to and --skip-unchanged."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import docs_pages
import ldacli
from ldacli.cli import main
from ldacli.cli.exits import EXIT_DRIFT
from ldacli.corpora.corpus import Corpus
from ldacli.errors import SettingError
from ldacli.files.fileio import file_sha256
from ldacli.corpora.formats.write import write_corpus
from ldacli.corpora.synthetic import generate

METHODS = ("cgs", "vem", "gibbs")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def months():
    """Month 1: 150 documents of a planted corpus over words w0..w39; month 2: 100 of those
    (50 lost) and 80 new documents that also use 10 new words."""
    syn = generate(230, 4, 50, doc_length=50, alpha=0.2, seed=31, planted=True)
    c = syn.corpus
    vocab = [f"w{i}" for i in range(50)]
    first = Corpus(c.counts[:150, :40], vocab[:40], [f"d{i}" for i in range(150)], "m1", "ldac")
    second = Corpus(c.counts[50:230], vocab, [f"d{i}" for i in range(50, 230)], "m2", "ldac")
    return first, second


@pytest.fixture(scope="module")
def parent(months, tmp_path_factory):
    path = tmp_path_factory.mktemp("parent") / "m1.npz"
    ldacli.train(months[0], 4, iterations=60, seed=1, optimize_interval=10).save(str(path))
    return str(path)


def test_warm_start_grows_the_vocabulary_keeps_topic_ids_and_records_its_parent(months, parent):
    old = ldacli.load_model(parent)
    m = ldacli.train(months[1], iterations=20, seed=2, warm_start=parent)
    # the parent's words first, in its order (all still occur), then the 10 new ones
    assert m.vocab[:40] == old.vocab and sorted(m.vocab[40:]) == sorted(f"w{i}" for i in range(40, 50))
    assert m.theta.shape == (180, 4) and m.params["n_topics"] == 4
    ws, ids = m.params["warm_start"], m.params["id_stability"]
    assert ws["path"] == os.path.abspath(parent) and ws["new_words"] == 10 and ws["gone_words"] == 0
    assert ws["sha256"] == file_sha256(parent)
    assert m.params["lineage"][0]["sha256"] == ws["sha256"]
    # (one planted topic gains the 10 new words, so it moves far; the others hardly)
    assert ids["kept"] == 4 and ids["moved"] == [] and ids["median_distance"] < 0.2
    # learned priors carried over as starting values
    assert m.params["alpha"] == [float(a) for a in old.alpha] and m.params["beta"] == old.beta
    # topic k of the new model is topic k of the old one (the match is to itself)
    match = ldacli.match_topics(old, m)
    assert [a for a, b in match.pairs] == [b for a, b in match.pairs]


def test_a_warm_start_is_deterministic_and_resumes_exactly(months, parent, tmp_path):
    a = ldacli.train(months[1], iterations=12, seed=5, warm_start=parent)
    b = ldacli.train(months[1], iterations=12, seed=5, warm_start=parent, threads=1)
    np.testing.assert_array_equal(a.phi, b.phi)
    ckpt = str(tmp_path / "c.npz")
    ldacli.train(months[1], iterations=6, seed=5, warm_start=parent, checkpoint=ckpt)
    resumed = ldacli.train(months[1], iterations=12, resume=ckpt)
    np.testing.assert_array_equal(resumed.phi, a.phi)
    np.testing.assert_array_equal(resumed.loglik_per_token, a.loglik_per_token)
    assert resumed.params["lineage"] == a.params["lineage"]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_warm_starts_and_keeps_the_ids(method, months, parent):
    m = ldacli.train(months[1], method=method, iterations=8, seed=3, warm_start=parent)
    assert m.params["id_stability"]["kept"] == 4 and m.params["warm_start"]["new_words"] == 10


def test_a_warm_start_fixes_k_and_excludes_resume(months, parent, tmp_path):
    with pytest.raises(SettingError, match="n_topics must be the warm start's 4 topics"):
        ldacli.train(months[1], 5, iterations=2, warm_start=parent)
    ckpt = str(tmp_path / "c.npz")
    ldacli.train(months[1], 4, iterations=2, checkpoint=ckpt)
    with pytest.raises(SettingError, match="give one of them"):
        ldacli.train(months[1], iterations=4, resume=ckpt, warm_start=parent)


def test_old_words_that_are_gone_leave_the_vocabulary(months, parent):
    only_new_docs = Corpus(months[1].counts[100:, 20:], months[1].vocab[20:], months[1].doc_ids[100:], "m3", "ldac")
    m = ldacli.train(only_new_docs, iterations=4, seed=1, warm_start=parent)
    assert m.params["warm_start"]["gone_words"] == 20 and m.vocab[:20] == ldacli.load_model(parent).vocab[20:]


def _permuted(model, order):
    return dataclasses.replace(model, phi=model.phi[order], theta=model.theta[:, order], alpha=model.alpha[order])


def test_align_puts_a_permuted_model_back_exactly(parent):
    old = ldacli.load_model(parent)
    shuffled = _permuted(old, [2, 0, 3, 1])
    back, order, matching = ldacli.align(shuffled, old)
    assert order == [1, 3, 0, 2]
    np.testing.assert_array_equal(back.phi, old.phi)
    np.testing.assert_array_equal(back.theta, old.theta)
    np.testing.assert_array_equal(back.alpha, old.alpha)
    np.testing.assert_allclose(matching.distances, 0.0, atol=1e-7)


def test_diff_of_identical_and_permuted_models(parent, tmp_path):
    old = ldacli.load_model(parent)
    same = ldacli.diff_models(old, old)
    assert [t["distance"] for t in same["topics"]] == pytest.approx([0.0] * 4, abs=1e-7)
    assert same["renumbered"] == 0 and same["only_in_a"] == same["only_in_b"] == []
    _permuted(old, [3, 2, 1, 0]).save(str(tmp_path / "p.npz"))
    r = run("diff", parent, tmp_path / "p.npz", "--format", "json")
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["renumbered"] == 4 and data["max_distance"] == pytest.approx(0.0, abs=1e-7)
    assert [(t["a"], t["b"]) for t in data["topics"]] == [(0, 3), (1, 2), (2, 1), (3, 0)]
    text = run("diff", parent, tmp_path / "p.npz").stdout
    assert "matched 4, renumbered 4" in text and "A   0 ~ B 3" in text


def test_diff_exits_with_the_drift_code_when_a_topic_moved_too_far(months, parent, tmp_path):
    ldacli.train(months[1], 4, iterations=5, seed=9).save(str(tmp_path / "cold.npz"))
    calm = run("diff", parent, tmp_path / "cold.npz", "--max-drift", 1.0)
    assert calm.exit_code == 0
    r = run("diff", parent, tmp_path / "cold.npz", "--max-drift", 0.0001)
    assert r.exit_code == EXIT_DRIFT and "drift: " in r.stderr and r.stdout.startswith("A: ")


def test_diff_writes_to_o_or_to_stdout_with_dash(months, parent, tmp_path):
    ldacli.train(months[1], 4, iterations=5, seed=9).save(str(tmp_path / "cold.npz"))
    cold, out = tmp_path / "cold.npz", tmp_path / "diff.txt"
    shown = run("diff", parent, cold)
    assert shown.exit_code == 0 and shown.stdout.startswith("A: ")
    written = run("diff", parent, cold, "-o", out)
    assert (written.exit_code, written.stdout, written.stderr) == (0, "", "")
    assert out.read_text() == shown.stdout
    dash = run("diff", parent, cold, "-o", "-")
    assert (dash.exit_code, dash.stdout, dash.stderr) == (0, shown.stdout, "")
    drifted = run("diff", parent, cold, "--format", "json", "--max-drift", 0.0001, "-o", tmp_path / "diff.json")
    assert drifted.exit_code == EXIT_DRIFT and drifted.stdout == "" and drifted.stderr.startswith("drift: ")
    assert json.loads((tmp_path / "diff.json").read_text())["drifted"]
    refused = run("diff", parent, cold, "-o", cold)
    assert refused.exit_code == 2 and refused.stdout == "" and "is the MODEL_B input" in refused.stderr
    assert sorted(os.listdir(tmp_path)) == ["cold.npz", "diff.json", "diff.txt"]


def test_align_to_renumbers_a_cold_run_onto_old_ids(months, parent, tmp_path, small_ldac):
    path = tmp_path / "m2.ldac"
    write_corpus(months[1], str(path), str(tmp_path / "m2.vocab"))
    r = run("train", path, "-k", 4, "--iterations", 30, "--seed", 7, "--align-to", parent, "-o", tmp_path / "a.npz")
    assert r.exit_code == 0 and "topics renumbered onto" in r.stderr
    aligned = ldacli.load_model(str(tmp_path / "a.npz"))
    assert aligned.params["aligned_to"]["sha256"] == file_sha256(parent)
    assert ldacli.diff_models(ldacli.load_model(parent), aligned)["renumbered"] == 0


def test_skip_unchanged_does_nothing_when_the_model_is_up_to_date(small_ldac, tmp_path):
    out = tmp_path / "m.npz"
    args = ["train", small_ldac, "-k", 3, "--iterations", 5, "--seed", 4, "-o", out, "--skip-unchanged"]
    assert run(*args).exit_code == 0
    before = (out.read_bytes(), out.stat().st_mtime_ns)
    r = run(*args)
    assert r.exit_code == 0 and "up to date" in r.stderr
    assert (out.read_bytes(), out.stat().st_mtime_ns) == before
    r = run(*args[:-3], "-o", out, "--skip-unchanged", "--alpha", 0.3)  # other settings: trains
    assert r.exit_code == 0 and "up to date" not in r.stderr and out.stat().st_mtime_ns != before[1]
    with open(small_ldac, "a") as f:  # the corpus grew: trains
        f.write("2 0:1 1:1\n")
    before = out.stat().st_mtime_ns
    r = run(*args[:-3], "-o", out, "--skip-unchanged", "--alpha", 0.3)
    assert r.exit_code == 0 and "up to date" not in r.stderr and out.stat().st_mtime_ns != before


@pytest.mark.parametrize("asked", [("--warm-start", "PARENT"), ("-k", 4, "--seed-words", "SEEDS")])
def test_skip_unchanged_without_a_seed_knows_a_settled_run_and_says_only_what_it_read(months, parent, tmp_path,
                                                                                     asked):
    path = tmp_path / "m2.ldac"
    write_corpus(months[1], str(path), str(tmp_path / "m2.vocab"))
    (tmp_path / "seeds.txt").write_text("first: w1 w2\n")
    args = ["train", path, *[{"PARENT": parent, "SEEDS": tmp_path / "seeds.txt"}.get(a, a) for a in asked],
            "--iterations", 5, "-o", tmp_path / "m.npz", "--skip-unchanged"]
    trained = run(*args)
    assert trained.exit_code == 0 and "up to date" not in trained.stderr, trained.output
    before = (tmp_path / "m.npz").stat().st_mtime_ns
    again = run(*args)
    assert again.exit_code == 0 and (tmp_path / "m.npz").stat().st_mtime_ns == before
    # what it read, as the run that trained said it, and not what settling the run would say
    said = again.stderr.splitlines()
    assert said[:-1] == trained.stderr.splitlines()[:len(said) - 1] and said[-2].endswith("9,000 tokens")
    assert said[-1] == f"{tmp_path / 'm.npz'}: up to date (trained with these settings on this corpus); nothing to do"


@pytest.mark.slow   # six nights of whole processes
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed on this machine")
def test_the_docs_makefile_updates_nightly_retrains_every_refresh_and_rotates(tmp_path):
    (makefile,) = docs_pages.code_blocks(docs_pages.read("docs/guide/retraining.md"), "make")
    (tmp_path / "Makefile").write_text(makefile)
    syn = generate(150, 3, 30, doc_length=30, seed=5, planted=True)
    docs = [" ".join(f"word{w}" * 1 for w in np.repeat(np.arange(30), row)) for row in syn.corpus.counts.toarray()]
    env = {**os.environ, "LDACLI": f"{sys.executable} -m ldacli"}
    kinds, alarms = [], []
    for night in range(1, 6):  # full, update, update, full (REFRESH=2), update
        (tmp_path / "notes.txt").write_text("\n".join(docs[:60 + 15 * night]) + "\n")
        # the drift alarm that fits each kind of night (issue 49): UPDATE_MAX_DRIFT after an update, MAX_DRIFT
        # after a full training (0 fires on any move, 1 on none)
        r = subprocess.run(["make", "-s", "nightly", "K=3", "SWEEPS=20", "UPDATE_SWEEPS=20", "REFRESH=2", "KEEP=2",
                            "UPDATE_MAX_DRIFT=0", "MAX_DRIFT=1"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        m = ldacli.load_model(str(tmp_path / "model.npz"))
        kinds.append("update" if m.params.get("update") else "full")
        alarms.append("topics drifted more than 0: see diff.txt" in r.stderr)
        assert "drifted more than 1" not in r.stderr
        assert m.n_docs == 60 + 15 * night and m.doc_ids == [str(i) for i in range(1, m.n_docs + 1)]
    assert kinds == ["full", "update", "update", "full", "update"]
    assert alarms == [False, True, True, False, True]
    r = subprocess.run(["make", "-s", "nightly"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "no new notes" in r.stderr
    models = sorted(p.name for p in (tmp_path / "models").iterdir())
    assert len(models) == 2 and m.params["update"]["since_full"] == 1
    assert "B was updated from A (a night's documents added): each topic of B is paired with the topic of A it " \
           "continues" in (tmp_path / "diff.txt").read_text()
