"""Limits a cron job can hit: memory that cannot fit, priors beyond double precision, words that
never occur, estimators that would run for hours. Each is refused or announced up front."""

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.evaluate import resample_cost_warning


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.slow   # runs training under an address-space limit
def test_training_that_cannot_fit_in_memory_is_refused_before_allocating(small_ldac, tmp_path):
    r = run("train", small_ldac, "-k", 10**9, "--iterations", 1, "-o", tmp_path / "m.npz")
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert "training cgs with 1000000000 topics on 50 words" in r.stderr and "of memory, and" in r.stderr
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.slow
def test_a_model_written_as_it_is_assembled_is_not_counted_whole(tmp_path, monkeypatch):
    # `train -o` writes phi and theta a block of rows at a time, so a machine with room for the
    # sampler but not for a whole (K, V) phi trains it; a run that returns the whole model
    # (the Python API without output) is refused there
    import ldacli.memory
    from ldacli.synthetic import generate

    corpus, _ = generate(2000, 50, 20000, doc_length=(80, 120), seed=1).corpus.without_unused_words()
    ldacli.write_corpus(corpus, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab"))
    K = 2000
    whole = 8.0 * K * (corpus.n_words + corpus.n_docs)
    monkeypatch.setattr(ldacli.memory, "available_bytes", lambda: int(0.75 * whole))
    r = run("train", tmp_path / "c.ldac", "-k", K, "--iterations", 2, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    assert ldacli.Model.load(str(tmp_path / "m.npz")).phi.shape == (K, corpus.n_words)
    with pytest.raises(ldacli.LdacliError, match="of memory, and"):
        ldacli.train(corpus, K, iterations=2)


def test_a_uci_header_declaring_billions_of_documents_is_refused_before_allocating(tmp_path):
    (tmp_path / "docword.x.txt").write_text("2000000000\n2\n1\n1 1 3\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\n")
    r = run("convert", tmp_path / "docword.x.txt", "-o", tmp_path / "x.ldac")
    assert r.exit_code == 1 and "the 2000000000 documents its header declares (line 1) needs about" in r.stderr


@pytest.mark.parametrize("option", ["--alpha", "--beta"])
def test_priors_beyond_what_double_precision_handles_are_refused(small_ldac, tmp_path, option):
    r = run("train", small_ldac, "-k", 3, option, "1e300", "-o", tmp_path / "m.npz")
    assert r.exit_code == 2 and "at most 1e+06, found 1e+300" in r.stderr


def test_words_that_never_occur_take_no_row_in_the_model(tmp_path):
    (tmp_path / "docword.x.txt").write_text("2\n200000\n3\n1 5 2\n1 70000 1\n2 199999 3\n")
    (tmp_path / "vocab.x.txt").write_text("".join(f"w{i}\n" for i in range(200000)))
    r = run("train", tmp_path / "docword.x.txt", "-k", 20, "--iterations", 5, "--seed", 1, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    assert "199,997 words of the vocabulary never occur" in r.stderr
    m = ldacli.load_model(str(tmp_path / "m.npz"))
    assert m.vocab == ["w4", "w69999", "w199998"] and m.phi.shape == (20, 3)
    r = run("topics", tmp_path / "m.npz", "--coherence", "npmi")  # the training corpus is found again
    assert r.exit_code == 0, r.stderr


def test_a_quadratic_estimator_on_long_documents_warns_with_its_cost():
    assert resample_cost_warning(np.array([100, 50]), 10, 20) is None
    text = resample_cost_warning(np.array([1_000_000, 10]), 10, 50)
    assert text.startswith("left-to-right with --resample is quadratic in document length: about 2.5e+14")
    assert "hours on one core" in text and "longest document has 1000000 tokens" in text


def test_the_format_picked_by_content_is_said_and_quiet_hides_it(small_ldac, tmp_path):
    r = run("convert", small_ldac, "-o", tmp_path / "x.ldac", "--vocab-out", tmp_path / "x.vocab")
    assert r.exit_code == 0 and "read as LDA-C (detected from the content; --input-format uci|ldac|text|mtx|npz forces one)" in r.stderr
    r = run("convert", small_ldac, "-q", "-o", tmp_path / "y.ldac", "--vocab-out", tmp_path / "y.vocab")
    assert r.exit_code == 0 and r.stderr == ""
