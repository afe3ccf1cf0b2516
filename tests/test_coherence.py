"""Topic coherence (UMass, NPMI) against hand-computed values, and the default reference corpus."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.scoring.coherence import coherence, top_word_ids, training_reference
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError

VOCAB = ["a", "b", "c", "d"]
# Topic 0 ranks a > b > c > d, topic 1 ranks d > c > b > a.
PHI = np.array([[0.4, 0.3, 0.2, 0.1],
                [0.1, 0.2, 0.3, 0.4]])
# Reference documents (which words occur; counts above 1 must not matter):
#   {a, b}, {a, b, c}, {a}, {c, d}, {d}
# D(a)=3 D(b)=2 D(c)=2 D(d)=2; D(a,b)=2 D(a,c)=1 D(b,c)=1 D(c,d)=1 D(b,d)=0; 5 documents.
REFERENCE = [[3, 1, 0, 0], [1, 1, 2, 0], [5, 0, 0, 0], [0, 0, 1, 1], [0, 0, 0, 4]]


def model():
    return ldacli.Model(phi=PHI, theta=np.zeros((0, 2)), alpha=np.full(2, 0.1), beta=0.01, vocab=VOCAB,
                        doc_ids=[], loglik_iterations=np.zeros(0, np.int64), loglik_per_token=np.zeros(0))


def reference():
    counts = sp.csr_array(np.array(REFERENCE, dtype=np.int32))
    return Corpus(counts, VOCAB, [str(i) for i in range(5)], "ref", "test")


def test_top_words_are_ranked_with_ties_by_word_id():
    np.testing.assert_array_equal(top_word_ids(PHI, 3), [[0, 1, 2], [3, 2, 1]])
    np.testing.assert_array_equal(top_word_ids(np.array([[0.25, 0.25, 0.5]]), 3), [[2, 0, 1]])


def test_umass_by_hand():
    r = coherence(model(), reference(), measure="umass", top_words=3)
    # Topic 0 (a, b, c): log((D(b,a)+1)/D(a)) + log((D(c,a)+1)/D(a)) + log((D(c,b)+1)/D(b))
    #                  = log(3/3) + log(2/3) + log(2/2)
    # Topic 1 (d, c, b): log((1+1)/2) + log((0+1)/2) + log((1+1)/2)
    assert r["per_topic"] == pytest.approx([math.log(2 / 3), math.log(1 / 2)], rel=1e-12)
    assert r["mean"] == pytest.approx((math.log(2 / 3) + math.log(1 / 2)) / 2, rel=1e-12)
    assert r["epsilon"] == 1.0 and r["top_words"] == 3 and r["reference_docs"] == 5
    assert r["skipped_pairs"] == [0, 0]


def test_npmi_by_hand():
    r = coherence(model(), reference(), measure="npmi", top_words=3)
    npmi = lambda pj, pi, pk: math.log((pj + 1e-12) / (pi * pk)) / -math.log(pj + 1e-12)  # noqa: E731
    t0 = [npmi(2 / 5, 3 / 5, 2 / 5), npmi(1 / 5, 3 / 5, 2 / 5), npmi(1 / 5, 2 / 5, 2 / 5)]
    t1 = [npmi(1 / 5, 2 / 5, 2 / 5), npmi(0, 2 / 5, 2 / 5), npmi(1 / 5, 2 / 5, 2 / 5)]
    assert r["per_topic"] == pytest.approx([np.mean(t0), np.mean(t1)], rel=1e-12)
    assert -1 < npmi(0, 2 / 5, 2 / 5) < -0.9  # never together: about -1
    assert r["epsilon"] == 1e-12


def test_words_missing_from_the_reference_skip_their_pairs():
    ref = Corpus(sp.csr_array(np.array([[1, 1, 0, 0], [1, 0, 0, 0]], dtype=np.int32)), VOCAB, ["0", "1"])
    r = coherence(model(), ref, measure="umass", top_words=3)
    # Topic 0: c never occurs but is only ever conditioned on, so nothing is skipped.
    assert r["skipped_pairs"][0] == 0
    # Topic 1 (d, c, b): d and c never occur; every pair conditions on one of them.
    assert r["skipped_pairs"][1] == 3 and math.isnan(r["per_topic"][1])
    assert r["mean"] == r["per_topic"][0]


def test_bad_arguments():
    with pytest.raises(LdacliError, match="measure"):
        coherence(model(), reference(), measure="cv")
    with pytest.raises(LdacliError, match="top_words"):
        coherence(model(), reference(), top_words=1)


def test_training_corpus_is_found_again_and_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = tmp_path / "docs.txt"
    rng = np.random.default_rng(0)
    words = "apple banana cherry engine wheel brake river mountain valley".split()
    text.write_text("\n".join(" ".join(rng.choice(words, size=12)) + " the of" for _ in range(30)) + "\n")
    corpus = ldacli.read_corpus("docs.txt", min_df=2, max_df=0.95)
    m = ldacli.train(corpus, 2, iterations=5, seed=1)
    again = training_reference(m)
    assert again.fingerprint() == corpus.fingerprint()
    text.write_text("apple banana\n")
    with pytest.raises(LdacliError, match="--corpus"):
        training_reference(m)
    m.params["corpus_source"] = "-"
    with pytest.raises(LdacliError, match="standard input"):
        training_reference(m)


def test_topics_coherence_through_the_cli(tmp_path, small_ldac):
    runner = CliRunner()
    out = tmp_path / "m.npz"
    assert runner.invoke(main, ["train", small_ldac, "-k", 5, "--iterations", 20, "--seed", 1, "-q", "-o", str(out)]).exit_code == 0
    text = runner.invoke(main, ["topics", str(out), "--coherence", "umass", "-q"])
    assert text.exit_code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert len(lines) == 6 and "[umass " in lines[0] and lines[-1].startswith("mean umass coherence: ")
    data = json.loads(runner.invoke(main, ["topics", str(out), "--coherence", "npmi", "--format", "json"]).stdout)
    assert data["coherence"]["measure"] == "npmi" and data["coherence"]["top_words"] == 10
    per_topic = [t["coherence"] for t in data["topics"]]
    assert data["coherence"]["mean"] == pytest.approx(np.mean(per_topic))
    assert all(-1 <= v <= 1 for v in per_topic)
    tsv = runner.invoke(main, ["topics", str(out), "--coherence", "npmi", "--format", "tsv", "--corpus", small_ldac])
    assert tsv.exit_code == 0 and tsv.stdout.splitlines()[0].endswith("\tnpmi")
    assert "mean npmi coherence" in tsv.stderr
    # The explicit reference is the training corpus: same numbers.
    first = tsv.stdout.splitlines()[1].split("\t")
    assert float(first[-1]) == pytest.approx(per_topic[0], rel=1e-5)


def test_topic_summary_is_what_the_topics_command_shows(tmp_path, small_ldac):
    """ldacli topics calls topic_summary once: the same words, scores and diagnostics, against the
    training corpus or one given by its path (whose reader's notes both give)."""
    from ldacli.scoring.topics import topic_summary

    runner = CliRunner()
    out = str(tmp_path / "m.npz")
    assert runner.invoke(main, ["train", small_ldac, "-k", 4, "--iterations", 20, "--seed", 1, "-q", "-o", out]).exit_code == 0
    for given in ({}, {"corpus": small_ldac}):
        r = runner.invoke(main, ["topics", out, "--coherence", "npmi", "--diagnostics", "-n", 6, "--format", "json",
                                 *(["--corpus", small_ldac] if given else [])])
        assert r.exit_code == 0, r.stderr
        shown = json.loads(r.stdout)
        summary = topic_summary(out, coherence="npmi", diagnostics=True, top_words=6, **given)
        assert [[w["word"] for w in t["words"]] for t in shown["topics"]] == \
            [[w for w, _ in words] for words in summary["top_words"]]
        assert [t["coherence"] for t in shown["topics"]] == summary["coherence"]["per_topic"]
        assert shown["coherence"]["reference"] == summary["coherence"]["reference"]
        assert [t["flags"] for t in shown["topics"]] == [t["flags"] for t in summary["diagnostics"]["topics"]]
        assert bool(summary["notes"]) == bool(given) and all(n in r.stderr for n in summary["notes"])
    assert topic_summary(out)["coherence"] is None and len(topic_summary(out, top_words=3)["top_words"][0]) == 3
    with pytest.raises(ldacli.SettingError, match="corpus applies with coherence or diagnostics only"):
        topic_summary(out, corpus=small_ldac)


def test_topics_coherence_without_a_usable_reference_is_a_user_error(tmp_path, small_ldac):
    runner = CliRunner()
    out = tmp_path / "m.npz"
    runner.invoke(main, ["train", small_ldac, "-k", 3, "--iterations", 5, "--seed", 1, "-q", "-o", str(out)])
    (tmp_path / "small.ldac").write_text("1 0:1\n")
    result = runner.invoke(main, ["topics", str(out), "--coherence", "umass"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "--corpus" in result.stderr and "Traceback" not in result.stderr
