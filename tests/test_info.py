"""ldacli info: what a model or checkpoint holds, as text and JSON."""

import dataclasses
import json

import numpy as np
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.info import describe


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_info_on_a_model_text_and_json(tmp_path, planted):
    path = tmp_path / "m.npz"
    ldacli.train(planted.corpus, 5, iterations=30, seed=4, loglik_every=10).save(str(path))
    text = run("info", path)
    assert text.exit_code == 0 and text.stderr == ""
    for fragment in ("(model)", "sampler dense", "K=5 topics", "V=50 words", "D=200 documents",
                     "N=12000 tokens", "0.1 per topic", "set", "seed:             4",
                     planted.corpus.fingerprint(), "3 points every 10 sweeps", "(sweep 30)"):
        assert fragment in text.stdout, fragment
    data = json.loads(run("info", path, "--format", "json").stdout)
    assert data["kind"] == "model" and data["sizes"] == {"topics": 5, "words": 50, "documents": 200, "tokens": 12000}
    assert data["priors"]["learned"] is False and data["priors"]["alpha"]["values"] == [0.1] * 5
    assert data["provenance"]["seed"] == 4 and data["provenance"]["ldacli_version"] == ldacli.__version__
    trace = data["loglik_trace"]
    assert trace["points"] == 3 and trace["last"]["iteration"] == 30
    assert trace["best"]["loglik_per_token"] == max(trace[k]["loglik_per_token"] for k in ("first", "last", "best"))
    assert data == describe(str(path)) | {"file": str(path)}


def test_info_shows_learned_asymmetric_priors(tmp_path, planted):
    m = ldacli.train(planted.corpus, 12, iterations=3, seed=1)
    alpha = np.linspace(0.01, 0.5, 12)
    learned = dataclasses.replace(m, alpha=alpha, beta=0.07,
                                  params={**m.params, "optimize_interval": 10, "optimize_burn_in": 50,
                                          "iterations_done": 60})
    learned.save(str(tmp_path / "l.npz"))
    text = run("info", tmp_path / "l.npz").stdout
    assert "asymmetric, min 0.01, mean 0.255, max 0.5" in text
    assert "learned every 10 sweeps after 50; initial 0.1" in text and "beta:             0.07" in text
    data = json.loads(run("info", tmp_path / "l.npz", "--format", "json").stdout)
    assert data["priors"]["learned"] and data["priors"]["alpha"]["sum"] == float(alpha.sum())
    topics = run("topics", tmp_path / "l.npz").stdout
    assert topics.startswith("topic  0 (alpha 0.01): ")


def test_info_on_a_checkpoint(tmp_path, planted):
    ckpt = tmp_path / "c.npz"
    ldacli.train(planted.corpus, 3, iterations=20, seed=2, checkpoint=str(ckpt))
    result = run("info", ckpt)
    assert result.exit_code == 0
    assert "(checkpoint)" in result.stdout and "iteration:        20 of 20 sweeps done" in result.stdout
    assert json.loads(run("info", ckpt, "--format", "json").stdout)["iteration"] == 20


def test_info_errors(tmp_path):
    missing = run("info", tmp_path / "absent.npz")
    assert missing.exit_code == 1 and missing.stdout == "" and "absent.npz" in missing.stderr
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    bad = run("info", junk)
    assert bad.exit_code == 1 and "junk.npz" in bad.stderr and "Traceback" not in bad.stderr
    assert run("info").exit_code == 2


def test_info_shows_the_names_of_the_files_a_model_records_never_their_folders(tmp_path, small_ldac):
    """The training corpus, a stop list, seed words, a checkpoint, a warm start's parent and the
    model aligned to are recorded with absolute paths (so that topics --coherence finds the
    corpus from anywhere); the text shows their names, --format json the paths recorded."""
    folder = str(tmp_path)
    (tmp_path / "stop.txt").write_text("w1\n")
    (tmp_path / "seeds.txt").write_text("first: w2 w3\n")
    parent, child, ckpt = tmp_path / "parent.npz", tmp_path / "child.npz", tmp_path / "c.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 5, "--seed", 1, "--stop-words", tmp_path / "stop.txt",
               "--seed-words", tmp_path / "seeds.txt", "--checkpoint", ckpt, "-q", "-o", parent).exit_code == 0
    assert run("train", small_ldac, "--warm-start", parent, "--align-to", parent, "--iterations", 5, "--seed", 2,
               "-q", "-o", child).exit_code == 0
    for path, names in ((ckpt, ("corpus:           small.ldac (ldac)", "seed_words seeds.txt", "from seeds.txt",
                                "stop_words=['stop.txt']", "checkpoint=c.npz")),
                        (child, ("corpus:           small.ldac (ldac)", "from parent.npz (", "parent: parent.npz (",
                                 "align_to=parent.npz", "'path': 'parent.npz'", "kept from the warm start parent.npz"))):
        text = run("info", path)
        assert (text.exit_code, text.stderr) == (0, "")
        given, rest = text.stdout.split("\n", 1)  # the file as the user gave it, then what it records
        assert given.startswith(f"file:             {path} (") and folder not in rest, rest
        for name in names:
            assert name in text.stdout, (name, text.stdout)
    data = json.loads(run("info", child, "--format", "json").stdout)
    assert data["provenance"]["corpus_source"] == small_ldac and data["warm_start"]["path"] == str(parent)


def test_info_shows_the_names_of_the_files_a_tokenizer_file_records_never_their_folders(tmp_path):
    (tmp_path / "docs.txt").write_text("apple banana cherry\nbanana cherry date\ncherry date apple\n")
    (tmp_path / "stop.txt").write_text("date\n")
    assert run("convert", tmp_path / "docs.txt", "--stop-words", tmp_path / "stop.txt", "-q", "-o",
               tmp_path / "docs.ldac").exit_code == 0
    assert run("train", tmp_path / "docs.ldac", "-k", 2, "--iterations", 5, "-q", "-o", tmp_path / "m.npz"
               ).exit_code == 0
    text = run("info", tmp_path / "m.npz").stdout.split("\n", 1)[1]
    for name in ("'path': 'docs.tokenizer.json'", "'source': 'docs.txt'", "'stop_words': ['stop.txt']"):
        assert name in text, (name, text)
    assert str(tmp_path) not in text
    recorded = json.loads(run("info", tmp_path / "m.npz", "--format", "json").stdout)
    assert str(tmp_path / "docs.tokenizer.json") in json.dumps(recorded)  # --format json keeps the paths recorded
