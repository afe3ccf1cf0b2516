"""One convention for every command, derived from the settings' declarations: the options each
command has, their names and meanings, machine output, -q and -v, one-line usage errors, and the
docs' option tables."""

import os
import re

import click
import pytest
from click.testing import CliRunner

import docs_pages

from ldacli import model_selection, settings
from ldacli.cli import exits
from ldacli.cli.options import SettingOption
from ldacli.corpora.formats.read import READING
from ldacli.cli import main
from ldacli.cluster import connection as dask_connection
from ldacli.methods import driver

# Commands that print results: they take --format.
PRINTING = ("topics", "infer", "perplexity", "diff", "info", "export", "select-k", "history", "trends")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def commands():
    return sorted(main.commands.items())


def options(command: click.Command):
    """The options a command shows (not 0.2's spellings, hidden: tests/test_option_names.py)."""
    return [p for p in command.params if isinstance(p, click.Option) and p.name != "help" and not p.hidden]


@pytest.mark.parametrize("name, command", commands())
def test_every_option_is_made_from_a_declared_setting(name, command):
    for param in options(command):
        assert isinstance(param, SettingOption), f"{name} {param.opts}: not made from a declaration"
        s = param.setting
        assert param.name == s.name
        assert tuple(param.opts) == (s.spellings[-1:] if s.off else s.spellings)
        assert tuple(param.secondary_opts) == ((s.off,) if s.off else ())
        assert param.default is None or param.required  # None = not given: the library applies the default


def test_train_has_exactly_the_declared_settings_of_every_method():
    names = {p.name for p in options(main.commands["train"])}
    declared = {s.name for s in driver.SETTINGS + driver.method_settings() + READING}
    assert declared <= names
    tls = {s.name for s in dask_connection.TLS}  # the client's credentials for a tls:// scheduler, the CLI's only
    assert names - declared == {"output", "skip_unchanged", "quiet", "verbose"} | tls
    for method in driver.METHODS.values():  # a method's settings are all on the command line
        assert {s.name for s in method.SETTINGS} <= names


@pytest.mark.parametrize("name, command", commands())
def test_every_command_has_quiet_verbose_help_with_examples_and_machine_output(name, command):
    spelled = {o for p in options(command) for o in p.opts}
    assert {"-q", "--quiet", "-v", "--verbose"} <= spelled
    if name in PRINTING:
        assert "--format" in spelled
    assert "--json" not in spelled
    result = run(name, "--help")
    assert result.exit_code == 0 and "Examples:" in result.stdout


def test_one_name_per_meaning_across_commands():
    by_spelling, by_name = {}, {}
    for name, command in commands():
        for p in options(command):
            s = p.setting
            for spelling in (*p.opts, *p.secondary_opts):
                by_spelling.setdefault(spelling, set()).add(s.name)
            by_name.setdefault(s.name, set()).add(tuple(p.opts) + tuple(p.secondary_opts))
    assert {k: v for k, v in by_spelling.items() if len(v) > 1} == {}
    assert {k: v for k, v in by_name.items() if len(v) > 1} == {}
    # the input format and the output format have their own names
    assert by_spelling["--format"] == {"output_format"} and by_spelling["--input-format"] == {"input_format"}
    assert "--method" not in {o for p in options(main.commands["perplexity"]) for o in p.opts}
    assert "--top-n" not in by_spelling


@pytest.mark.parametrize("args", [
    ("train",),                                         # a missing argument
    ("train", "c.ldac", "-k", "x", "-o", "m.npz"),      # not a number
    ("train", "c.ldac", "-k", "0", "-o", "m.npz"),      # out of range (the library's check)
    ("train", "c.ldac", "--nope", "-o", "m.npz"),       # unknown option
    ("topics",),
    ("topics", "m.npz", "--format", "xml"),
    ("info", "m.npz", "--format", "yaml"),
    ("diff", "a.npz"),
    ("perplexity", "m.npz", "c.ldac", "--estimator", "harmonic"),
    ("infer", "m.npz", "c.ldac", "-o", "theta.xlsx"),
    ("convert", "c.txt"),
    ("report", "m.npz", "-o", "r.pdf"),
    ("nosuchcommand",),
])
def test_usage_errors_are_one_line_with_exit_code_2(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr


def test_a_library_setting_error_names_the_option(small_ldac, tmp_path):
    result = run("train", small_ldac, "-k", "0", "-o", tmp_path / "m.npz")
    assert result.exit_code == 2
    assert "-k/--topics must be an integer >= 1, found 0" in result.stderr
    result = run("train", small_ldac, "--method", "vem", "--burn-in", "3", "-o", tmp_path / "m.npz")
    assert result.exit_code == 2 and "--burn-in applies to method gibbs only, found method vem" in result.stderr


def test_an_option_that_cannot_apply_is_refused(small_ldac, tmp_path):
    train = run("train", small_ldac, "-k", 3, "--iterations", 10, "--seed", 1, "-o", tmp_path / "m.npz")
    assert train.exit_code == 0, train.stderr
    refused = [
        (("perplexity", tmp_path / "m.npz", small_ldac, "--particles", 5), "--particles"),
        (("perplexity", tmp_path / "m.npz", small_ldac, "--estimator", "importance", "--iterations", 5), "--iterations"),
        (("topics", tmp_path / "m.npz", "--corpus", small_ldac), "--corpus"),
        (("topics", tmp_path / "m.npz", "--coherence", "npmi", "-n", 1), "--top-words"),
        (("train", small_ldac, "--method", "vem", "--no-smoothed", "--estimate-eta", "-o", tmp_path / "v.npz"),
         "--estimate-eta"),
        (("infer", tmp_path / "m.npz", small_ldac, "-o", "-", "--format", "npz"), "--format"),
    ]
    for args, option in refused:
        result = run(*args)
        assert result.exit_code == 2 and option in result.stderr, (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1


def test_quiet_and_verbose_work_on_every_command(small_ldac, tmp_path):
    out = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 20, "--seed", 1, "-q", "-o", out).stderr == ""
    verbose = run("train", small_ldac, "-k", 3, "--iterations", 20, "--seed", 1, "-v", "-o", tmp_path / "v.npz")
    assert "sweep 10: log p(w, z) per token" in verbose.stderr and "iteration" not in verbose.stderr
    for args in (("topics", out), ("info", out), ("diff", out, tmp_path / "v.npz"),
                 ("perplexity", out, small_ldac, "--seed", 1), ("infer", out, small_ldac, "-o", "-")):
        quiet = run(*args, "-q")
        assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout, (args, quiet.stderr)
        assert run(*args, "-v").exit_code == 0
    assert run("info", out, "-q", "-v").exit_code == 2


def test_notes_are_printed_once(tmp_path):
    (tmp_path / "c.ldac").write_text("2 0:1 1:2\n1 2:3\n1 0:2\n")
    (tmp_path / "c.vocab").write_text("a\nb\nc\nunused\n")
    result = run("train", tmp_path / "c.ldac", "-k", 2, "--iterations", 5, "-o", tmp_path / "m.npz")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("never occur") == 1, result.stderr


# --- the README's option tables are the declarations --------------------------------------------------

ROLES = {settings.FIXED: "fixed", settings.CONTINUED: "continued", settings.FREE: "free"}


def option_table(declared, roles: bool) -> str:
    """The docs' Markdown table of ``declared`` settings (with ``roles``: what a resumed run
    does with each)."""
    rows = ["| option | meaning (default) |" + (" `--resume` |" if roles else ""),
            "|---|---|" + ("---|" if roles else "")]
    for s in declared:
        spelled = ", ".join(f"`{o}`" for o in (s.spellings + ((s.off,) if s.off else ())))
        default = s.default_text()
        help = s.described.replace("|", "\\|")
        if default and not (isinstance(s.type, settings.Flag) and s.off is None):
            help += f" ({default})"
        rows.append(f"| {spelled} | {help} |" + (f" {ROLES[s.role]} |" if roles else ""))
    return "\n".join(rows)


TABLES = {
    "train": (lambda: driver.SETTINGS + driver.method_settings(), True),
    "reading": (lambda: READING, True),
    "select-k": (lambda: model_selection.SETTINGS, False),
    "perplexity": (lambda: tuple(o.setting for o in options(main.commands["perplexity"])
                                 if o.setting not in READING and o.setting.name not in ("quiet", "verbose")), False),
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_docs_option_tables_are_the_declarations(table):
    """Regenerate them with LDACLI_WRITE_DOCS=1 pytest tests/test_conventions.py."""
    begin, end = f"<!-- options: {table} -->\n", f"\n<!-- end options: {table} -->"
    pattern = re.escape(begin) + "(.*?)" + re.escape(end)
    found = [(path, text, match) for path, text in docs_pages.pages().items() for match in re.finditer(pattern, text, re.S)]
    assert len(found) == 1, f"{len(found)} tables between {begin.strip()} and {end.strip()} in the README and docs/"
    (path, text, match), = found
    declared, roles = TABLES[table]
    expected = option_table(declared(), roles)
    if os.environ.get("LDACLI_WRITE_DOCS") and match.group(1) != expected:
        with open(os.path.join(docs_pages.ROOT, path), "w", encoding="utf-8") as f:
            f.write(text[:match.start(1)] + expected + text[match.end(1):])
        return
    assert match.group(1) == expected, f"{path}: the table of {table} is not the declarations"


@pytest.mark.slow   # whole processes
def test_a_reader_that_closes_stdout_stops_the_command_quietly(tmp_path):
    import subprocess
    import sys

    from ldacli.corpora.formats.write import write_corpus
    from ldacli.corpora.synthetic import generate

    # far more output than a pipe holds, so the writer meets the closed pipe whatever the timing
    write_corpus(generate(3000, 30, 200, doc_length=20, seed=3).corpus, str(tmp_path / "big.ldac"),
                 str(tmp_path / "big.vocab"))
    out = tmp_path / "m.npz"
    assert run("train", tmp_path / "big.ldac", "-k", 30, "--iterations", 2, "--seed", 1, "-q", "-o", out).exit_code == 0
    proc = subprocess.Popen([sys.executable, "-m", "ldacli", "infer", str(out), str(tmp_path / "big.ldac"), "-o", "-",
                             "--iterations", "2", "--burn-in", "1", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()  # like head -1
    proc.stdout.close()
    assert proc.wait(timeout=60) == exits.EXIT_PIPE
    assert proc.stderr.read() == b""


# --- what the first user of this version found, each now a test ----------------------------------------

def test_stop_words_and_remove_top_apply_to_a_bag_of_words_corpus(tmp_path, small_ldac):
    words = open(small_ldac.replace(".ldac", ".vocab")).read().split()
    (tmp_path / "boilerplate.txt").write_text(f"{words[0]}\n{words[1]}\n")
    result = run("train", small_ldac, "--stop-words", tmp_path / "boilerplate.txt", "--remove-top", 2, "-k", 3,
                 "--iterations", 5, "--seed", 1, "-o", tmp_path / "m.npz")
    assert result.exit_code == 0, result.stderr
    assert "stop words (" in result.stderr and "removed 2 words" in result.stderr
    import ldacli

    model = ldacli.load_model(str(tmp_path / "m.npz"))
    assert len(model.vocab) == len(words) - 4 and words[0] not in model.vocab and words[1] not in model.vocab
    assert model.params["stop_words"] == [str(tmp_path / "boilerplate.txt")] and model.params["remove_top"] == 2


def test_machine_output_says_the_dropped_tokens_that_stderr_says(tmp_path, small_ldac):
    import json

    import ldacli

    out = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 5, "--seed", 1, "-o", out).exit_code == 0
    words = open(small_ldac.replace(".ldac", ".vocab")).read().split()
    (tmp_path / "new.vocab").write_text(f"{words[0]}\n{words[1]}\nunknownword\n{words[2]}\n")
    (tmp_path / "new.ldac").write_text("3 0:2 1:1 2:2\n2 3:2 2:1\n")  # 3 tokens of the unknown word
    result = run("perplexity", out, tmp_path / "new.ldac", "--format", "json", "--seed", 1)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["unknown_tokens"] == data["dropped_tokens"] == 3 and data["removed_tokens"] == 0
    note = "left out: 3 tokens of words the model has never seen (unknown), 0 tokens of words its vocabulary rules"
    assert result.stderr.count(note) == 1 and any(note in n for n in data["notes"])
    model = ldacli.load_model(str(out))
    corpus = ldacli.read_corpus(str(tmp_path / "new.ldac"), fixed_vocab=model.vocab)
    assert ldacli.infer(model, corpus, seed=1)[1] == 3
    assert ldacli.infer(model, ldacli.read_corpus(str(tmp_path / "new.ldac")), seed=1)[1] == 3
    assert run("infer", out, tmp_path / "new.ldac", "-o", tmp_path / "t.npz").exit_code == 0
    params = ldacli.Inference.load(str(tmp_path / "t.npz")).params
    assert params["dropped_tokens"] == params["unknown_tokens"] == 3 and params["removed_tokens"] == 0


def test_the_wrong_kind_of_file_and_output_names_get_their_own_message(tmp_path, small_ldac):
    out = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 5, "--seed", 1, "-o", out).exit_code == 0
    result = run("train", out, "-o", tmp_path / "x.npz")
    assert result.exit_code == 1 and f"{out}: expected a corpus, found an ldacli model" in result.stderr
    result = run("train", small_ldac, "-o", tmp_path / "name_without_ext")
    assert result.exit_code == 2 and "expected a file name ending in .npz" in result.stderr
    assert not (tmp_path / "name_without_ext").exists()
    table = run("infer", out, small_ldac, "-o", "-", "--seed", 1, "-q")
    assert table.exit_code == 0 and table.stdout.startswith("doc_id\ttopic_0\t")
    assert run("topics", out, "-o", "-", "--format", "tsv").stdout.startswith("topic\trank\tword")
    assert run("topics", out, "-o", tmp_path / "t.tsv", "--format", "tsv").stdout == ""
    assert (tmp_path / "t.tsv").read_text().startswith("topic\trank\tword")
