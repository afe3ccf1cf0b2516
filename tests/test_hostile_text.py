"""Text from a corpus or a model is data on every channel (issue 32, rows 5 and 8): words,
document ids (file names), topic names and params holding escape sequences, carriage returns,
backspaces, C1 controls and bidi overrides reach no terminal raw, from any command or error
message; a crafted model's topic names are checked on load as ``ldacli name`` checks them; and
TSV/CSV carry every id and word, ``\\r`` included, back into pandas exactly.

The terminal is a real one: the commands write to the slave ends of pseudo-terminals (isatty
true, raw mode), and the test reads what the master ends received."""

import io
import json
import os

import fuzzing
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from fuzzing import raw_controls

# What each does to a terminal when printed raw.
HOSTILE = {
    "title": "\x1b]0;PWNED\x07win",  # OSC 0: retitles the window
    "clear": "\x1b[2J\x1b[Hcls",  # clears the screen, cursor home
    "link": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",  # OSC 8: a hidden link
    "overwrite": "safe\rEVIL",  # the carriage return writes EVIL over safe
    "backspace": "ok\x08\x08XX",
    "c1": "\x9b31mred",  # C1 CSI: ESC [ on terminals that take 8-bit controls
    "del": "a\x7fb",
    "rlo": "\u202egnp.exe",  # right-to-left override: shows "exe.png"
    "isolate": "\u2066iso\u2069",
    "nel": "next\x85line",
    "newline": "two\nlines",
    "lsep": "line\u2028sep",
}


def on_a_terminal(*args) -> tuple[int, str, str]:
    """Run ``ldacli ARGS`` with stdout and stderr on real terminals: (exit code, stdout, stderr)."""
    return fuzzing.on_a_terminal(main, args)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A model someone sent: its words, document ids and params hold every hostile string (the
    params' corpus source names a file that is not there); and a folder of text files named by
    them, for infer."""
    folder = tmp_path_factory.mktemp("hostile")
    words = [f"w{i}" for i in range(8)] + list(HOSTILE.values())
    ids = [f"doc{i}" for i in range(6)] + list(HOSTILE.values())
    rng = np.random.default_rng(5)
    counts = sp.csr_array(rng.poisson(2.0, size=(len(ids), len(words))).astype(np.int32) + 1)
    model = ldacli.train(ldacli.Corpus(counts, words, ids), 3, iterations=10, seed=1)
    model.params["corpus_source"] = os.path.join(str(folder), "gone " + HOSTILE["title"] + ".txt")
    model.params["corpus_format"] = HOSTILE["clear"]
    path = folder / "m.npz"
    model.save(str(path))
    docs = folder / "docs"
    docs.mkdir()
    for i, (key, name) in enumerate(HOSTILE.items()):
        if "/" not in name:  # a file name holds anything but / and NUL
            (docs / f"{name}.txt").write_text(f"w{i % 8} w{(i + 3) % 8} w1\n")
    return {"model": path, "docs": docs, "folder": folder}


@pytest.mark.parametrize("args", [
    ("topics", "{model}"), ("topics", "{model}", "--format", "tsv"), ("topics", "{model}", "--format", "json"),
    ("info", "{model}"), ("info", "{model}", "--format", "json"), ("diff", "{model}", "{model}"),
    ("export", "{model}", "doc-topics", "-o", "-"), ("export", "{model}", "topic-words", "--format", "csv"),
    ("export", "{model}", "topic-keys", "--format", "jsonl"), ("export", "{model}", "doc-topics", "--format", "mallet"),
    ("infer", "{model}", "{docs}", "-o", "-", "--iterations", "4", "--burn-in", "2", "--seed", "1"),
    ("infer", "{model}", "{docs}", "-o", "-", "--format", "csv", "--iterations", "4", "--burn-in", "2", "--seed", "1"),
], ids=lambda a: " ".join(x for x in a if not x.startswith("{")))
def test_nothing_from_a_model_or_a_corpus_reaches_a_terminal_raw(hostile, args):
    code, out, err = on_a_terminal(*(a.format(**hostile) for a in args))
    assert raw_controls(out, allowed="\t\n") == [] and raw_controls(err) == [], (out, err)
    if args[-1] == "mallet":  # MALLET's layout cannot hold a tab or a line break: refused, naming it
        assert code == 1 and "MALLET's layout cannot hold the document id 'safe\\rEVIL'" in err
        return
    assert code == 0, err
    # what the words, ids and params hold is shown, escaped as Python (or JSON) writes it, not dropped
    assert "\\x1b]0;PWNED\\x07win" in out or "\\u001b]0;PWNED\\u0007win" in out
    if args[0] != "info":  # info shows the params (the corpus's source), not the words
        assert "safe\\rEVIL" in out and "\\u202egnp.exe" in out


def test_an_error_message_escapes_what_a_model_holds(hostile, tmp_path):
    """The model names a training corpus whose file name holds an escape sequence and whose
    text is not a corpus: the error says which file, escaped, in one line."""
    corpus = tmp_path / ("bad " + HOSTILE["title"] + ".ldac")
    corpus.write_text("not a corpus\n")
    model = ldacli.load_model(str(hostile["model"]))
    model.params.update(corpus_source=str(corpus), corpus_format="ldac")
    model.save(str(tmp_path / "m.npz"))
    for show in (on_a_terminal, lambda *a: (lambda r: (r.exit_code, r.stdout, r.stderr))(run(*a))):
        code, out, err = show("topics", tmp_path / "m.npz", "--coherence", "npmi")
        assert code == 1 and out == ""
        assert raw_controls(err) == [], err
        assert "bad \\x1b]0;PWNED\\x07win.ldac" in err
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [("topics", "{model}"), ("info", "{model}"), ("diff", "{model}", "{model}")])
def test_text_for_people_is_escaped_in_pipes_too(hostile, args):
    """`ldacli topics m.npz | less -R`, or cron's mail: text output is for people, so it is
    escaped whatever stdout is (the data formats carry the data exactly)."""
    r = run(*(a.format(**hostile) for a in args))
    assert r.exit_code == 0, r.stderr
    assert raw_controls(r.stdout) == [] and raw_controls(r.stderr) == []
    assert ("\\x1b[2J\\x1b[Hcls" if args[0] == "info" else "safe\\rEVIL") in r.stdout


def test_json_carries_the_data_exactly_and_nothing_raw(hostile):
    path = hostile["model"]
    model = ldacli.load_model(str(path))
    r = run("topics", path, "--format", "json", "-n", len(model.vocab))
    assert r.exit_code == 0 and raw_controls(r.stdout) == []
    words = {w["word"] for t in json.loads(r.stdout)["topics"] for w in t["words"]}
    assert words == set(model.vocab)
    r = run("export", path, "doc-topics", "--format", "jsonl", "-o", "-")
    assert r.exit_code == 0 and raw_controls(r.stdout) == []
    assert [json.loads(line)["doc_id"] for line in r.stdout.splitlines()] == model.doc_ids
    info = json.loads(run("info", path, "--format", "json").stdout)
    assert info["provenance"]["corpus_source"] == model.params["corpus_source"]


@pytest.mark.parametrize("name", ["\x1b]0;PWNED\x07", "a\rb", "left\u202eright", "tab\there", "line\u2028sep",
                                  "x" * 101])
def test_a_crafted_models_topic_names_are_checked_on_load(tmp_path, small_ldac, name):
    """`ldacli name` refuses these names; a model someone sent that holds one is refused on
    load by every command, in one line naming the file."""
    path = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 3, "--seed", 1, "-q", "-o", path).exit_code == 0
    r = run("name", path, 1, name)
    assert r.exit_code == 2 and "name" in r.stderr
    model = ldacli.load_model(str(path))
    for names in ([None, name, None], {"1": name}):
        model.params["topic_names"] = names
        model.save(str(path))
        for args in (("topics", path), ("info", path), ("export", path, "topic-keys"), ("diff", path, path)):
            r = run(*args)
            assert r.exit_code == 1, (args, r.stdout)
            assert r.stderr.startswith(f"Error: {path}: expected topic names as ldacli name sets them: the name of "
                                       f"topic 1 must be ")
            assert len(r.stderr.splitlines()) == 1 and raw_controls(r.stderr) == []
    model.params["topic_names"] = ["same", None, "same"]
    model.save(str(path))
    r = run("topics", path)
    assert r.exit_code == 1 and "'same' names topics 0 and 2" in r.stderr


def test_a_checkpoints_topic_names_are_checked_on_load(tmp_path, small_ldac):
    ckpt = tmp_path / "c.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 3, "--seed", 1, "-q", "-o", tmp_path / "m.npz",
               "--checkpoint", ckpt).exit_code == 0
    c = ldacli.Checkpoint.load(str(ckpt))
    c.params["topic_names"] = [None, "\x1b[2J", None]
    c.save(str(ckpt))
    with pytest.raises(ldacli.LdacliError, match="the name of topic 1 must be one line"):
        ldacli.Checkpoint.load(str(ckpt))


# --- row 8: a carriage return in a document id or a word --------------------------------------------

CR_IDS = ["plain", "a\rb", "cr at end\r", "\rstart", "crlf\r\nmid", "lf\nmid", 'quote"d', "tab\tin", "comma,in",
          "NA", "", " spaced ", "next\x85line", "sep\u2028line"]


@pytest.fixture(scope="module")
def cr_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cr")
    words = [f"w{i}" for i in range(6)] + [w for w in CR_IDS if w]
    rng = np.random.default_rng(3)
    counts = sp.csr_array(rng.poisson(2.0, size=(len(CR_IDS), len(words))).astype(np.int32) + 1)
    model = ldacli.train(ldacli.Corpus(counts, words, list(CR_IDS)), 4, iterations=10, seed=2)
    model.save(str(folder / "m.npz"))
    docs = folder / "docs"
    docs.mkdir()
    for i, name in enumerate(n for n in CR_IDS if n and "/" not in n):
        (docs / f"{name}.txt").write_text(f"w{i % 6} w{(i + 1) % 6}\n")
    return folder


@pytest.mark.parametrize("fmt", ["tsv", "csv"])
def test_pandas_reads_back_every_id_and_word_exactly(cr_model, fmt, tmp_path):
    pd = pytest.importorskip("pandas", reason="the pandas extra is not installed")
    path = cr_model / "m.npz"
    model = ldacli.load_model(str(path))
    sep = "\t" if fmt == "tsv" else ","

    def frame(data: bytes):
        return pd.read_csv(io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False)

    r = run("export", path, "doc-topics", "--format", fmt, "-o", "-")
    assert r.exit_code == 0, r.stderr
    theta = frame(r.stdout_bytes)
    assert theta["doc_id"].tolist() == CR_IDS
    np.testing.assert_allclose(theta.iloc[:, 1:].astype(float).to_numpy(), model.theta, atol=1e-6)
    r = run("export", path, "topic-words", "--format", fmt, "-o", tmp_path / f"w.{fmt}")
    words = frame((tmp_path / f"w.{fmt}").read_bytes())
    assert len(words) == model.n_topics * len(model.vocab)
    assert sorted(set(words["word"])) == sorted(model.vocab)
    r = run("topics", path, "--format", "tsv", "-n", len(model.vocab))
    assert r.exit_code == 0, r.stderr
    if fmt == "tsv":
        assert sorted(set(frame(r.stdout_bytes)["word"])) == sorted(model.vocab)
    # infer: the ids are the file names, each its own row
    r = run("infer", path, cr_model / "docs", "-o", "-", "--format", fmt, "--iterations", 4, "--burn-in", 2, "--seed", 1)
    assert r.exit_code == 0, r.stderr
    inferred = frame(r.stdout_bytes)
    assert inferred["doc_id"].tolist() == sorted(f"{n}.txt" for n in CR_IDS if n and "/" not in n)
    np.testing.assert_allclose(inferred.iloc[:, 1:].astype(float).sum(axis=1), 1.0, atol=1e-5)


def test_a_file_name_that_is_not_utf8_is_an_id_every_output_carries(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / os.fsdecode(b"caf\xe9.txt")).write_text("alpha beta gamma\n")
    (docs / "b.txt").write_text("beta gamma delta\n")
    assert run("train", docs, "-k", 2, "--iterations", 3, "--seed", 1, "-q", "-o", tmp_path / "m.npz").exit_code == 0
    assert ldacli.load_model(str(tmp_path / "m.npz")).doc_ids == ["b.txt", "caf\\xe9.txt"]
    for fmt in ("tsv", "csv", "jsonl", "parquet"):
        r = run("export", tmp_path / "m.npz", "doc-topics", "--format", fmt, "-o", tmp_path / f"t.{fmt}")
        assert r.exit_code == 0, (fmt, r.stderr)


@pytest.mark.parametrize("command", ["export", "infer"])
def test_parquet_is_not_written_to_a_terminal(hostile, command):
    args = ["export", hostile["model"], "doc-topics"] if command == "export" else \
        ["infer", hostile["model"], hostile["docs"], "--iterations", 4, "--burn-in", 2]
    code, out, err = on_a_terminal(*args, "-o", "-", "--format", "parquet")
    assert code == 1 and out == ""
    assert err == "Error: parquet is binary: not written to a terminal; send stdout to a file or a pipe, or give " \
                  "-o FILE\n"
    r = run(*args, "-o", "-", "--format", "parquet")  # a pipe takes it
    assert r.exit_code == 0 and r.stdout_bytes.startswith(b"PAR1")


def test_a_printed_command_gives_its_arguments_back_to_the_shell():
    """The "continue with: ..." hint quotes each argument so that, run as printed, bash gets
    the same bytes back, control characters and a file name's undecodable bytes included, and
    the hint itself holds nothing a terminal acts on."""
    import shutil
    import subprocess

    from ldacli.escaping import shell_word

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    for arg in ["plain", "two words", "it's", "back\\slash", *HOSTILE.values(), os.fsdecode(b"caf\xe9\n.npz")]:
        word = shell_word(arg)
        assert raw_controls(word) == []
        assert subprocess.run([bash, "-c", f"printf %s {word}"], capture_output=True).stdout == os.fsencode(arg)
