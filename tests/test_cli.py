"""The command line: exit codes, stdout/stderr separation, help, outputs, bad input."""

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldacli.cli import main

COMMANDS = ["train", "topics", "infer", "perplexity", "convert", "info"]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def assert_user_error(result, *fragments, code=1):
    """A one-line error on stderr, nothing on stdout, no traceback."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.fixture
def model_path(tmp_path, small_ldac):
    out = tmp_path / "model.npz"
    result = run("train", small_ldac, "-k", 5, "--iterations", 30, "--seed", 1, "-o", out)
    assert result.exit_code == 0, result.stderr
    return out


@pytest.mark.parametrize("command", [None] + COMMANDS)
def test_every_command_has_help_with_examples(command):
    result = run(*([command] if command else []), "--help")
    assert result.exit_code == 0
    assert "Examples:" in result.stdout and "ldacli" in result.stdout


def test_version_and_help_import_neither_the_commands_nor_the_library():
    """Every line of a crontab or a Makefile pays the start-up: `ldacli --version` and `ldacli
    --help` need click and the list of commands alone (ldacli.cli.COMMANDS), not NumPy."""
    script = ("import sys\nfrom ldacli.cli import main\nfor args in (['--version'], ['--help'], []):\n"
              "    try:\n        main(args, prog_name='ldacli')\n    except SystemExit:\n        pass\n"
              "print(sorted(m for m in ('numpy', 'scipy', 'ldacli.cli.commands', 'ldacli.methods') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]" and "Commands:" in out and "ldacli, version" in out


def test_the_commands_are_those_the_help_lists_each_with_its_line():
    from ldacli.cli import COMMANDS

    assert sorted(main.commands) == sorted(COMMANDS)
    for name, command in main.commands.items():
        assert command.short_help == COMMANDS[name] and command.get_short_help_str(200) == COMMANDS[name]


def test_python_dash_m_runs_the_cli(tmp_path):
    # The package these tests import (installed, or built in place), from another folder.
    import ldacli

    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(ldacli.__file__))}
    out = subprocess.run([sys.executable, "-m", "ldacli", "--version"], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0 and "ldacli" in out.stdout


def test_train_writes_a_model_and_keeps_stdout_for_results(tmp_path, small_ldac):
    out = tmp_path / "m.npz"
    result = run("train", small_ldac, "-k", 5, "--iterations", 20, "--seed", 3, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert "5 topics" in result.stderr and "seed 3" in result.stderr
    with np.load(out, allow_pickle=False) as f:
        assert f["alpha"].shape == (5,) and f["vocab"].shape == (50,)
        assert json.loads(str(f["params"]))["seed"] == 3
    quiet = run("train", small_ldac, "-k", 5, "--iterations", 20, "--seed", 3, "-q", "-o", tmp_path / "q.npz")
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""
    assert (tmp_path / "q.npz").read_bytes() == out.read_bytes()


def test_cli_and_python_api_give_the_same_file(tmp_path, small_ldac):
    import ldacli

    run("train", small_ldac, "-k", 4, "--iterations", 15, "--seed", 8, "-o", tmp_path / "cli.npz")
    corpus = ldacli.read_corpus(small_ldac)
    ldacli.train(corpus, 4, iterations=15, seed=8).save(str(tmp_path / "api.npz"))
    assert (tmp_path / "cli.npz").read_bytes() == (tmp_path / "api.npz").read_bytes()


def test_checkpoint_and_resume_through_the_cli(tmp_path, small_ldac):
    run("train", small_ldac, "-k", 5, "--iterations", 12, "--seed", 4, "-o", tmp_path / "full.npz")
    ckpt = tmp_path / "run.ckpt.npz"
    first = run("train", small_ldac, "-k", 5, "--iterations", 7, "--seed", 4, "-o", tmp_path / "part.npz",
                "--checkpoint", ckpt, "--checkpoint-every", 3)
    assert first.exit_code == 0, first.stderr
    second = run("train", small_ldac, "--iterations", 12, "-o", tmp_path / "resumed.npz", "--resume", ckpt)
    assert second.exit_code == 0, second.stderr
    assert (tmp_path / "full.npz").read_bytes() == (tmp_path / "resumed.npz").read_bytes()
    changed = run("train", small_ldac, "-k", 6, "--iterations", 12, "-o", tmp_path / "x.npz", "--resume", ckpt)
    assert_user_error(changed, "the checkpoint has --topics=5, which cannot change on resume (given 6)", code=2)
    assert "n_topics" not in changed.stderr  # the command line's words, not Python's
    assert not (tmp_path / "x.npz").exists()


@pytest.mark.parametrize("fmt", ["text", "tsv", "json"])
def test_topics_formats(model_path, fmt):
    result = run("topics", model_path, "-n", 3, "--format", fmt)
    assert result.exit_code == 0 and result.stderr == ""
    if fmt == "json":
        data = json.loads(result.stdout)
        assert len(data["topics"]) == 5 and len(data["topics"][0]["words"]) == 3
        probs = [w["probability"] for w in data["topics"][0]["words"]]
        assert probs == sorted(probs, reverse=True)
    elif fmt == "tsv":
        lines = result.stdout.splitlines()
        assert lines[0] == "topic\trank\tword\tprobability" and len(lines) == 1 + 5 * 3
    else:
        assert len(result.stdout.splitlines()) == 5 and result.stdout.startswith("topic 0: ")


FRUIT = "apple banana cherry grape mango melon peach lemon"
CARS = "engine wheel brake clutch gearbox piston tyre exhaust"


@pytest.fixture
def text_model(tmp_path):
    """A model of a text corpus with two obvious topics: fruit and car parts."""
    rng = np.random.default_rng(0)
    lines = []
    for i in range(60):
        words = (FRUIT if i % 2 else CARS).split()
        lines.append(" ".join(rng.choice(words, size=20)))
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(lines) + "\n")
    out = tmp_path / "text_model.npz"
    result = run("train", corpus, "-k", 2, "--iterations", 50, "--seed", 1, "-o", out)
    assert result.exit_code == 0, result.stderr
    return out


@pytest.mark.parametrize("suffix", [".npz", ".tsv", ".csv"])
def test_infer_writes_theta_and_reports_unknown_words(tmp_path, text_model, suffix):
    docs = tmp_path / "new.txt"
    docs.write_text("Apple, banana and a cherry; zzzunknown\nengine BRAKE piston\n\n")
    out = tmp_path / f"theta{suffix}"
    result = run("infer", text_model, docs, "-o", out, "--seed", 1)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    # "and": an English stop word, which the model's rules removed; zzzunknown: never seen
    assert "left out: 1 token of words the model has never seen (unknown), 1 token of words its vocabulary rules " \
           "remove" in result.stderr and "1 empty document" in result.stderr
    if suffix == ".npz":
        with np.load(out, allow_pickle=False) as f:
            theta = f["theta"]
            assert list(f["doc_ids"]) == ["1", "2", "3"]
    else:
        sep = "," if suffix == ".csv" else "\t"
        rows = [line.split(sep) for line in out.read_text().splitlines()]
        assert rows[0] == ["doc_id", "topic_0", "topic_1"] and len(rows) == 4
        theta = np.array([[float(x) for x in r[1:]] for r in rows[1:]])
    assert theta.shape == (3, 2)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, atol=1e-5)
    # The fruit document and the car document fall in different topics; the empty one gets
    # the prior.
    assert theta[0].argmax() != theta[1].argmax() and theta[0].max() > 0.7 and theta[1].max() > 0.7
    np.testing.assert_allclose(theta[2], 0.5, atol=1e-5)


def test_infer_writes_mallet_s_doc_topics_layout(tmp_path, text_model):
    """MALLET's --output-doc-topics, as export writes it: doc<TAB>name<TAB>p_0..., or sparse
    (--top-topics, --min-proportion) after a header, topic<TAB>proportion pairs largest first;
    every number as theta holds it."""
    docs = tmp_path / "new.txt"
    docs.write_text("apple banana cherry\nengine brake piston\n")
    assert run("infer", text_model, docs, "-o", tmp_path / "t.npz", "--seed", 1, "-q").exit_code == 0
    with np.load(tmp_path / "t.npz", allow_pickle=False) as f:
        theta, ids = f["theta"], list(f["doc_ids"])
    result = run("infer", text_model, docs, "--format", "mallet", "-o", tmp_path / "t.txt", "--seed", 1, "-q")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    dense = (tmp_path / "t.txt").read_text()
    assert dense == "".join(f"{d}\t{ids[d]}\t" + "\t".join(repr(float(p)) for p in theta[d]) + "\n" for d in range(2))
    result = run("infer", text_model, docs, "--format", "mallet", "--top-topics", 1, "-o", "-", "--seed", 1, "-q")
    top = theta.argmax(axis=1)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "#doc name topic proportion ...\n" + "".join(
        f"{d}\t{ids[d]}\t{top[d]}\t{float(theta[d, top[d]])!r}\t\n" for d in range(2))
    assert_user_error(run("infer", text_model, docs, "--format", "mallet", "-o", tmp_path / "t.csv"),
                      "expected a file name ending in .txt for --format mallet", code=2)


def test_infer_on_a_bag_of_words_corpus_counts_unknown_words(tmp_path, text_model):
    (tmp_path / "new.vocab").write_text("apple\nbanana\nunheard\n")
    (tmp_path / "new.ldac").write_text("2 0:2 2:3\n1 1:1\n")
    result = run("infer", text_model, tmp_path / "new.ldac", "-o", tmp_path / "t.tsv", "--seed", 1)
    assert result.exit_code == 0, result.stderr
    assert "left out: 3 tokens of words the model has never seen (unknown), 0 tokens" in result.stderr


def test_infer_refuses_an_unknown_output_extension(tmp_path, model_path, small_ldac):
    assert_user_error(run("infer", model_path, small_ldac, "-o", tmp_path / "theta.xlsx"), "-o", code=2)


def test_perplexity_text_and_json(model_path, small_ldac):
    text = run("perplexity", model_path, small_ldac, "--seed", 1)
    assert text.exit_code == 0, text.stderr
    for label in ("estimator:", "document-completion", "tokens scored:", "log-likelihood:", "perplexity:"):
        assert label in text.stdout
    data = json.loads(run("perplexity", model_path, small_ldac, "--seed", 1, "--format", "json").stdout)
    assert data["estimator"] == "document-completion"
    assert data["n_tokens"] == 200 * 30
    assert np.isclose(data["perplexity"], np.exp(-data["log_likelihood"] / data["n_tokens"]))
    assert f"{data['perplexity']:.6g}" in text.stdout  # same seed, same number


def test_convert_text_then_train_on_it(tmp_path):
    src = tmp_path / "docs.txt"
    src.write_text("Apples and oranges, apples!\nThe oranges of Spain\n\nbananas bananas apples\n")
    out = tmp_path / "docs.ldac"
    result = run("convert", src, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "docs.vocab").read_text().split() == ["apples", "bananas", "oranges", "spain"]
    assert out.read_text().splitlines()[2] == "0"  # the empty document is kept
    trained = run("train", out, "-k", 2, "--iterations", 5, "--seed", 1, "-o", tmp_path / "m.npz")
    assert trained.exit_code == 0, trained.stderr


def test_text_corpus_from_stdin(tmp_path):
    result = run("train", "-", "-k", 2, "--iterations", 3, "--seed", 1, "-o", tmp_path / "m.npz",
                 input="alpha beta gamma\nbeta gamma delta\n")
    assert result.exit_code == 0, result.stderr


def test_usage_errors_exit_2(tmp_path, small_ldac):
    assert_user_error(run("train", small_ldac, "-o", tmp_path / "m.npz", "-k", 0), "--topics", code=2)
    assert_user_error(run("train", small_ldac, "-o", tmp_path / "m.npz", "--alpha", "-1"), "--alpha", code=2)
    assert_user_error(run("train", small_ldac), "--output", code=2)
    assert_user_error(run("train", small_ldac, "-o", tmp_path / "nowhere" / "m.npz"), "folder", code=2)
    assert_user_error(run("frobnicate"), code=2)


def test_topics_refuses_a_number_of_top_words_below_1(model_path):
    for n in (-3, 0):
        assert_user_error(run("topics", model_path, "-n", n),
                          f"-n/--top-words must be an integer >= 1, found {n} (see ", code=2)
    assert len(run("topics", model_path, "-n", 1).stdout.splitlines()) == 5


def test_every_option_s_constraint_is_checked_as_the_command_line_is_read(tmp_path):
    """The mechanism, not one option: each command's every integer option refuses a value below
    its minimum (exit 2, one line naming it), whether or not the command checks it again; no
    argument is given, so the refusal comes before any is looked at."""
    from ldacli.cli.options import SettingOption
    from ldacli.settings import Integer

    checked = []
    for name, command in main.commands.items():
        for param in command.params:
            setting = getattr(param, "setting", None)
            if isinstance(param, SettingOption) and isinstance(setting.type, Integer) and not param.hidden:
                below = setting.type.minimum - 1
                result = run(name, param.opts[-1], below)
                assert_user_error(result, f"{setting.option} must be an integer", f"found {below}", code=2)
                assert len(result.stderr.splitlines()) == 1, result.stderr
                checked.append(f"{name} {param.opts[-1]}")
    assert {"topics --top-words", "diff --top-words", "export --top-words", "train --topics"} <= set(checked)


def uci(header, body):
    return "\n".join(str(x) for x in header) + "\n" + body


BAD_CORPORA = {
    # name: (file name, content, vocabulary, fragments expected on stderr)
    "malformed line": ("docword.bad.txt", uci([2, 3, 3], "1 1 2\n1 2\n2 3 1\n"), "a\nb\nc\n", ["docword.bad.txt:5"]),
    "word id out of range": ("docword.bad.txt", uci([2, 3, 2], "1 1 2\n2 4 1\n"), "a\nb\nc\n", ["docword.bad.txt:5"]),
    "negative count": ("docword.bad.txt", uci([2, 3, 2], "1 1 2\n2 3 -1\n"), "a\nb\nc\n", ["docword.bad.txt:5"]),
    "non-integer count": ("docword.bad.txt", uci([2, 3, 2], "1 1 2.5\n2 3 1\n"), "a\nb\nc\n", ["docword.bad.txt:4"]),
    "header disagrees": ("docword.bad.txt", uci([2, 3, 5], "1 1 2\n2 3 1\n"), "a\nb\nc\n", ["docword.bad.txt"]),
    "vocabulary does not match": ("docword.bad.txt", uci([2, 4, 2], "1 1 2\n2 3 1\n"), "a\nb\nc\n", ["vocab.bad.txt"]),
    "ldac count mismatch": ("bad.ldac", "2 0:1 1:1\n3 0:1 2:2\n", "a\nb\nc\n", ["bad.ldac:2"]),
    "ldac id out of range": ("bad.ldac", "2 0:1 7:1\n", "a\nb\nc\n", ["bad.ldac:1"]),
    "empty corpus": ("empty.txt", "", None, ["empty.txt", "empty"]),
    "binary garbage": ("junk.bin", None, None, ["junk.bin"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CORPORA))
def test_bad_corpus_exits_1_names_the_place_and_leaves_outputs_alone(tmp_path, case):
    name, content, vocab, fragments = BAD_CORPORA[case]
    path = tmp_path / name
    if content is None:
        path.write_bytes(bytes(range(256)) * 4)
    else:
        path.write_text(content)
    if vocab is not None:
        vname = "vocab.bad.txt" if name.startswith("docword") else name.replace(".ldac", ".vocab")
        (tmp_path / vname).write_text(vocab)
    existing = tmp_path / "existing.npz"
    existing.write_bytes(b"precious")
    result = run("train", path, "-k", 2, "--iterations", 2, "-o", existing)
    assert_user_error(result, *fragments)
    assert len(result.stderr.strip().splitlines()) == 1
    assert existing.read_bytes() == b"precious"
    fresh = tmp_path / "fresh.npz"
    assert_user_error(run("train", path, "-k", 2, "--iterations", 2, "-o", fresh), *fragments)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name not in {name, "vocab.bad.txt", name.replace(".ldac", ".vocab"), "existing.npz"}) == []


def test_missing_files_and_non_models_are_reported(tmp_path, small_ldac, model_path):
    assert_user_error(run("train", tmp_path / "absent.txt", "-o", tmp_path / "m.npz"), "absent.txt")
    assert_user_error(run("topics", tmp_path / "absent.npz"), "absent.npz")
    not_npz = tmp_path / "model.npz.txt"
    not_npz.write_text("hello")
    assert_user_error(run("topics", not_npz), "model.npz.txt", "expected an ldacli model")
    ckpt = tmp_path / "c.npz"
    run("train", small_ldac, "-k", 2, "--iterations", 2, "-o", tmp_path / "m2.npz", "--checkpoint", ckpt)
    assert_user_error(run("topics", ckpt), "found a checkpoint")
    assert_user_error(run("train", small_ldac, "-o", tmp_path / "m3.npz", "--resume", model_path), "found a model")


def test_gzip_corpus_is_read_transparently(tmp_path, small_ldac):
    gz = tmp_path / "small.gz.ldac"
    gz.write_bytes(gzip.compress(open(small_ldac, "rb").read()))
    result = run("train", gz, "--vocab", small_ldac.replace(".ldac", ".vocab"), "-k", 3, "--iterations", 2,
                 "-o", tmp_path / "m.npz")
    assert result.exit_code == 0, result.stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), fmt=st.sampled_from(["auto", "uci", "ldac", "text"]))
def test_random_bytes_never_cause_a_traceback(tmp_path, data, fmt):
    path = tmp_path / "random.dat"
    path.write_bytes(data)
    (tmp_path / "random.vocab").write_text("a\nb\nc\n")
    out = tmp_path / "never.npz"
    result = run("train", path, "--input-format", fmt, "--vocab", tmp_path / "random.vocab", "-k", 2,
                 "--iterations", 1, "-q", "-o", out)
    assert isinstance(result.exception, SystemExit) or result.exception is None
    assert result.exit_code in (0, 1), result.stderr
    if result.exit_code == 1:
        assert "Traceback" not in result.stderr and not out.exists()
    out.unlink(missing_ok=True)


@pytest.mark.parametrize("sampler", ["dense", "sparse", "alias"])
def test_one_two_and_three_threads_write_identical_files(tmp_path, small_ldac, sampler):
    outputs = []
    for threads in (1, 2, 3):
        out = tmp_path / f"t{threads}.npz"
        result = run("train", small_ldac, "-k", 5, "--iterations", 8, "--seed", 2, "--sampler", sampler,
                     "--shards", 5, "--threads", threads, "-o", out)
        assert result.exit_code == 0, result.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    with np.load(tmp_path / "t1.npz", allow_pickle=False) as f:
        params = json.loads(str(f["params"]))
    assert params["sampler"] == sampler and params["shards"] == 5


def test_resume_with_another_thread_count_gives_the_same_file(tmp_path, small_ldac):
    common = ["-k", 5, "--seed", 3, "--sampler", "sparse", "--shards", 4]
    run("train", small_ldac, *common, "--iterations", 9, "--threads", 1, "-o", tmp_path / "full.npz")
    ckpt = tmp_path / "c.npz"
    run("train", small_ldac, *common, "--iterations", 4, "--threads", 3, "-o", tmp_path / "part.npz",
        "--checkpoint", ckpt)
    result = run("train", small_ldac, "--iterations", 9, "--threads", 2, "-o", tmp_path / "resumed.npz",
                 "--resume", ckpt)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "full.npz").read_bytes() == (tmp_path / "resumed.npz").read_bytes()
    changed = run("train", small_ldac, "--iterations", 9, "--sampler", "dense", "-o", tmp_path / "x.npz",
                  "--resume", ckpt)
    assert_user_error(changed, "sampler", "--sampler", code=2)


@pytest.mark.parametrize("method, extra, label", [
    ("completion", [], "document-completion"),
    ("left-to-right", ["--particles", "5"], "left-to-right"),
    ("left-to-right", ["--particles", "3", "--resample"], "re-drawing earlier topics"),
    ("importance", ["--samples", "50"], "importance-sampling"),
])
def test_perplexity_methods_name_the_estimator_and_report_a_standard_error(model_path, small_ldac, method, extra, label):
    text = run("perplexity", model_path, small_ldac, "--estimator", method, *extra, "--seed", 2, "-q")
    assert text.exit_code == 0, text.stderr
    assert text.stderr == ""
    for line in ("estimator:", "tokens scored:", "log-likelihood:", "(natural log)", "standard error:", "perplexity:"):
        assert line in text.stdout
    assert label in text.stdout
    data = json.loads(run("perplexity", model_path, small_ldac, "--estimator", method, *extra, "--seed", 2, "--format", "json").stdout)
    names = {"completion": "document-completion", "left-to-right": "left-to-right", "importance": "importance-sampling"}
    assert data["estimator"] == names[method] and data["standard_error"] > 0
    assert data["n_tokens"] == (200 * 30 if method == "completion" else 200 * 60)  # all tokens but completion's half
    assert np.isclose(data["perplexity"], np.exp(-data["log_likelihood"] / data["n_tokens"]))
    assert f"{data['perplexity']:.6g}" in text.stdout


def test_perplexity_method_usage_errors(model_path, small_ldac):
    assert_user_error(run("perplexity", model_path, small_ldac, "--estimator", "harmonic"), "--estimator", code=2)
    assert_user_error(run("perplexity", model_path, small_ldac, "--estimator", "left-to-right", "--particles", 1),
                      "--particles", code=2)
