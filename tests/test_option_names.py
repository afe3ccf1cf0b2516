"""Options as the command line spells them: in usage errors (never Python's names), refused in
conflict before any input is read, their 0.2 spellings still taken (with one line naming the
new one), and the README and the docs naming only options that exist on their command."""

import os
import re
import shlex
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import docs_pages
import ldacli
from ldacli import model_selection, settings
from ldacli.cli import former_options
from ldacli.cli import main
from ldacli.corpora.formats.read import READING
from ldacli.methods import driver
from ldacli.scoring import inference, perplexity

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every setting's Python name that the command line spells otherwise (warm_start, n_topics, ...).
PYTHON_NAMES = sorted({s.name for s in driver.SETTINGS + driver.method_settings() + READING
                       + perplexity.SETTINGS + inference.SETTINGS + model_selection.SETTINGS
                       if "_" in s.name})


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def in_cli_words(stderr: str) -> None:
    """One line, and no setting named as Python names it."""
    assert len(stderr.splitlines()) == 1, stderr
    found = [n for n in PYTHON_NAMES if re.search(rf"(?<![\w-]){n}(?![\w-])", stderr)]
    assert found == [], stderr


# Each command with options that contradict each other (or cannot apply), and what the error
# must say. MISSING stands for inputs that do not exist: reading any of them would fail with
# exit 1, so exit 2 and this message show the conflict was found before any input was read.
MISSING = "no-such-file"
CONFLICTS = [
    (("train", "C", "-k", 3, "--remove-topics", 1, "-o", "m.npz"),
     "--remove-topics changes the topics of a warm start: give --warm-start too"),
    (("train", "C", "--add-topics", 2, "-o", "m.npz"), "--add-topics changes the topics of a warm start: give --warm-start"),
    (("train", "C", "--patience", 3, "-o", "m.npz"), "--holdout and --patience go together"),
    (("train", "C", "--holdout", 0.1, "-o", "m.npz"), "--holdout and --patience go together"),
    (("train", "C", "--seed-strength", 0.5, "-o", "m.npz"), "--seed-strength is the prior of seed words: give --seed-words"),
    (("train", "C", "--seed-words", "S", "--optimize-interval", 10, "-o", "m.npz"),
     "--optimize-interval learns a symmetric beta, and the topic-word prior of seeded topics (--seed-words)"),
    (("train", "C", "--method", "vem", "--scheduler", "local:2", "-o", "m.npz"), "--scheduler applies to method cgs only"),
    (("train", "C", "--warm-start", "W", "--resume", "R", "-o", "m.npz"),
     "--warm-start begins a run and --resume continues one"),
    (("train", "C", "--method", "vem", "--burn-in", 3, "-o", "m.npz"), "--burn-in applies to method gibbs only"),
    (("train", "C", "--method", "gibbs", "--burn-in", 30, "--iterations", 20, "-o", "m.npz"),
     "--burn-in must be smaller than --iterations (20), found 30"),
    (("train", "C", "--method", "vem", "--no-smoothed", "--estimate-eta", "-o", "m.npz"),
     "--estimate-eta/--fixed-eta applies with --smoothed only (without it there is no topic prior to estimate), "
     "found --smoothed=False"),
    (("train", "C", "--method", "vem", "--loglik-every", 5, "-o", "m.npz"), "--loglik-every must be 1 for method vem"),
    (("train", "C", "--skip-unchanged", "--resume", "R", "-o", "m.npz"), "nothing to compare"),
    (("train", "C", "--checkpoint-every", 10, "-o", "m.npz"),
     "--checkpoint-every says how often to write --checkpoint: give --checkpoint too"),
    (("train", "C", "--alpha", 0.2, "--optimize-burn-in", 20, "-o", "m.npz"),
     "--optimize-burn-in applies where the priors are learned, and here --alpha, --beta or --seed-words given keep "
     "the priors as given"),
    (("train", "C", "--optimize-interval", 0, "--optimize-burn-in", 20, "-o", "m.npz"),
     "--optimize-burn-in applies where the priors are learned, and here --optimize-interval is 0"),
    (("infer", "M", "C", "--top-topics", 2, "-o", "t.npz"), "--top-topics makes a sparse table"),
    (("infer", "M", "C", "--burn-in", 200, "-o", "t.tsv"), "--burn-in must be smaller than --iterations (100)"),
    (("infer", "M", "C", "--format", "csv", "-o", "t.tsv"), "expected a file name ending in .csv for --format csv"),
    (("perplexity", "M", "C", "--particles", 5), "--particles applies to estimator left-to-right only"),
    (("perplexity", "M", "C", "--estimator", "importance", "--iterations", 5), "--iterations applies to estimator "
                                                                               "completion only"),
    (("perplexity", "M", "C", "--burn-in", 60, "--iterations", 50), "--burn-in must be smaller than --iterations (50)"),
    (("topics", "M", "--corpus", "C"), "applies with --coherence or --diagnostics only"),
    (("topics", "M", "--coherence", "npmi", "-n", 1), "--coherence scores pairs of top words"),
    (("report", "M", "--vocab", "V", "-o", "r.html"), "applies with --corpus only"),
    (("export", "M", "topic-keys", "--min-proportion", 0.1), "--min-proportion applies to doc-topics only"),
    (("export", "M", "topic-keys", "--corpus", "C"), "--corpus applies to topic-keys with --coherence only"),
    (("select-k", "C", "-k", "2,3", "--seed-strength", 0.5, "-o", "k"), "give --seed-words too"),
    (("select-k", "C", "-k", "2,3", "--method", "vem", "--burn-in", 2, "-o", "k"), "--burn-in applies to method gibbs"),
    (("convert", "C", "--shards", 2, "--to", "uci", "-o", "out"), "a shard folder holds its own vocabulary"),
    (("diff", "M", "M2", "--max-drift", 2), "--max-drift"),
]


def _args(args, folder):
    names = {"C": "corpus.txt", "M": "model.npz", "M2": "model2.npz", "S": "seeds.txt", "W": "warm.npz", "R": "ckpt.npz",
             "V": "vocab.txt"}
    return [str(folder / (MISSING + "-" + names[a])) if a in names else
            str(folder / a) if a in ("m.npz", "t.npz", "t.tsv", "r.html", "k", "out") else str(a) for a in args]


@pytest.mark.parametrize("args, message", CONFLICTS, ids=[" ".join(map(str, a[:1] + a[2:4])) for a, _ in CONFLICTS])
def test_a_conflict_is_refused_in_the_cli_s_words_before_any_input_is_read(args, message, tmp_path):
    result = run(*_args(args, tmp_path))
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert message in result.stderr, result.stderr
    in_cli_words(result.stderr)
    assert os.listdir(tmp_path) == []   # nothing written, no folder made


def test_a_conflict_with_a_checkpoint_or_a_warm_start_is_refused_before_the_corpus_is_read(small_ldac, tmp_path):
    """What a checkpoint or a warm start's model fixes is read from its params alone: the corpus
    (missing here: reading it would exit 1) is never opened for a run that cannot be."""
    ckpt, model, fixed = tmp_path / "c.npz", tmp_path / "m.npz", tmp_path / "fixed.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 4, "--checkpoint", ckpt, "-o", model, "-q").exit_code == 0
    assert run("train", small_ldac, "-k", 3, "--iterations", 4, "--optimize-interval", 0, "-o", fixed,
               "-q").exit_code == 0
    corpus = tmp_path / (MISSING + ".txt")
    for args, message in (
            (("--resume", ckpt, "-k", 4), f"{ckpt}: the checkpoint has --topics=3, which cannot change on resume"),
            (("--resume", ckpt, "--seed", 9), f"{ckpt}: the checkpoint has --seed="),
            (("--resume", ckpt, "--method", "vem"), f"{ckpt}: the checkpoint was written by method cgs, found method "
                                                    f"vem"),
            (("--resume", ckpt, "--burn-in", 3), "--burn-in applies to method gibbs only, found method cgs"),
            (("--warm-start", model, "--remove-topics", 7), f"--remove-topics must be topic ids of the warm start "
                                                            f"{model} (0 to 2), found 7"),
            (("--warm-start", model, "-k", 5), "-k/--topics must be the warm start's 3 topics"),
            (("--warm-start", fixed, "--optimize-burn-in", 5), "--optimize-burn-in applies where the priors are "
                                                               "learned, and here the warm start's were not learned")):
        result = run("train", corpus, *args, "-o", tmp_path / "out.npz")
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stdout == "" and message in result.stderr, result.stderr
        in_cli_words(result.stderr)
    assert sorted(os.listdir(tmp_path)) == ["c.npz", "fixed.npz", "m.npz", "small.ldac", "small.vocab"]


def test_checkpoint_every_applies_where_a_checkpoint_is_written(small_ldac, tmp_path):
    """Refused alone (above); taken beside --checkpoint, on a resumed run (which checkpoints to
    the file it resumes) and by select-k (whose pairs checkpoint to files of its own)."""
    ckpt = tmp_path / "c.npz"
    result = run("train", small_ldac, "-k", 3, "--iterations", 4, "--checkpoint", ckpt, "--checkpoint-every", 2,
                 "-o", tmp_path / "a.npz", "-q")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    result = run("train", small_ldac, "--resume", ckpt, "--iterations", 6, "--checkpoint-every", 1,
                 "-o", tmp_path / "b.npz", "-q")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    result = run("select-k", small_ldac, "-k", "2,3", "--seeds", 1, "--iterations", 20, "--checkpoint-every", 5,
                 "--format", "tsv", "-q", "-o", tmp_path / "k")
    assert result.exit_code in (0, 3) and result.stderr == "" and result.stdout.startswith("k\tseeds"), result.stderr


@pytest.mark.slow   # four processes (about 9 s on a loaded machine)
def test_no_input_is_opened_before_a_conflict_is_refused(tmp_path):
    """A FIFO that nobody writes blocks whoever opens it for reading: a process that refuses its
    options first exits at once."""
    fifo = tmp_path / "corpus.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(ldacli.__file__))}
    for args in (["train", fifo, "--remove-topics", "1", "--vocab", fifo, "-o", tmp_path / "m.npz"],
                 ["train", fifo, "--seed-words", fifo, "--optimize-interval", "5", "-o", tmp_path / "m.npz"],
                 ["infer", fifo, fifo, "--burn-in", "200", "-o", tmp_path / "t.tsv"],
                 ["perplexity", fifo, fifo, "--samples", "5"]):
        proc = subprocess.run([sys.executable, "-m", "ldacli", *map(str, args)], capture_output=True, text=True,
                              timeout=60, env=env)
        assert proc.returncode == 2 and proc.stderr.startswith("Error: --"), proc.stderr


def test_python_gets_python_s_names_for_the_same_conflicts(tmp_path):
    with pytest.raises(ldacli.SettingError) as error:
        ldacli.train(str(tmp_path / "missing.txt"), 3, remove_topics=[1])
    assert str(error.value) == "remove_topics changes the topics of a warm start: give warm_start too"
    assert error.value.mentions == ("warm_start",)


def test_a_resumed_run_s_checkpoint_is_named_in_the_cli_s_words(small_ldac, tmp_path):
    ckpt = tmp_path / "c.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 4, "--checkpoint", ckpt, "-o", tmp_path / "a.npz",
               "-q").exit_code == 0
    result = run("train", small_ldac, "--resume", ckpt, "--iterations", 6, "--seed", 9, "-o", tmp_path / "b.npz", "-q")
    assert result.exit_code == 2 and f"{ckpt}: the checkpoint has --seed=" in result.stderr, result.stderr
    in_cli_words(result.stderr)


# --- sweeps and names ------------------------------------------------------------------------------------

def test_reprs_count_sweeps(planted, tmp_path):
    model = ldacli.train(planted.corpus, 3, iterations=4, seed=1, checkpoint=str(tmp_path / "c.npz"))
    assert repr(model).startswith("<Model: cgs, 3 topics,") and ", 4 sweeps, seed 1>" in repr(model)
    assert repr(ldacli.Checkpoint.load(str(tmp_path / "c.npz"))) == "<Checkpoint: cgs, 3 topics, 4 of 4 sweeps>"
    vem = ldacli.train(planted.corpus, 3, method="vem", iterations=2, em_tol=0, seed=1)
    assert ", 2 EM iterations," in repr(vem)


# --- 0.2's spellings ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained(tmp_path_factory, planted):
    from ldacli.corpora.formats.write import write_corpus

    folder = tmp_path_factory.mktemp("former")
    write_corpus(planted.corpus, str(folder / "c.ldac"), str(folder / "c.vocab"), format="ldac")
    assert run("train", folder / "c.ldac", "-k", 3, "--iterations", 5, "--seed", 1, "-q", "-o",
               folder / "m.npz").exit_code == 0
    return folder


SPELLINGS = [  # (0.2's command, today's, the line it prints)
    (("info", "M", "--json"), ("info", "M", "--format", "json"), "--json is the 0.2 spelling: use --format json"),
    (("diff", "M", "M", "--json"), ("diff", "M", "M", "--format", "json"), "--json"),
    (("perplexity", "M", "C", "--json", "--seed", 1, "--iterations", 4, "--burn-in", 2),
     ("perplexity", "M", "C", "--format", "json", "--seed", 1, "--iterations", 4, "--burn-in", 2), "--format json"),
    (("perplexity", "M", "C", "--method", "importance", "--samples", 5, "--seed", 1),
     ("perplexity", "M", "C", "--estimator", "importance", "--samples", 5, "--seed", 1),
     "--method importance is the 0.2 spelling: use --estimator importance"),
    (("perplexity", "M", "C", "--format", "ldac", "--seed", 1, "--iterations", 4, "--burn-in", 2),
     ("perplexity", "M", "C", "--input-format", "ldac", "--seed", 1, "--iterations", 4, "--burn-in", 2),
     "--format ldac is the 0.2 spelling: use --input-format ldac"),
    (("infer", "M", "C", "--format", "ldac", "-o", "-", "--seed", 1, "--iterations", 4, "--burn-in", 2),
     ("infer", "M", "C", "--input-format", "ldac", "-o", "-", "--seed", 1, "--iterations", 4, "--burn-in", 2),
     "--input-format ldac"),
    (("topics", "M", "--coherence", "npmi", "--reference", "C", "--reference-format", "ldac", "--reference-vocab", "V",
      "--top-n", 4),
     ("topics", "M", "--coherence", "npmi", "--corpus", "C", "--input-format", "ldac", "--vocab", "V", "-n", 4),
     "--top-n 4 is the 0.2 spelling: use --top-words 4"),
    (("train", "C", "--format", "ldac", "-k", 3, "--iterations", 3, "--seed", 2, "-o", "OUT"),
     ("train", "C", "--input-format", "ldac", "-k", 3, "--iterations", 3, "--seed", 2, "-o", "OUT"),
     "--format ldac is the 0.2 spelling: use --input-format ldac (the old one stops working in 0.4)"),
    (("convert", "C", "--format", "ldac", "--to", "uci", "-o", "OUT"),
     ("convert", "C", "--input-format", "ldac", "--to", "uci", "-o", "OUT"), "--input-format ldac"),
    (("report", "M", "--corpus", "C", "--corpus-format", "ldac", "--corpus-vocab", "V", "-o", "OUT"),
     ("report", "M", "--corpus", "C", "--input-format", "ldac", "--vocab", "V", "-o", "OUT"), "--vocab"),
]


@pytest.mark.parametrize("old, new, line", SPELLINGS, ids=[" ".join(map(str, o[:1] + o[-2:])) for o, _, _ in SPELLINGS])
def test_a_0_2_spelling_works_and_names_the_new_one(old, new, line, trained, tmp_path):
    if old[0] == "report":
        pytest.importorskip("vl_convert", reason="the report extra is not installed")
    names = {"M": trained / "m.npz", "C": trained / "c.ldac", "V": trained / "c.vocab"}
    ending = {"train": ".npz", "report": ".html"}.get(old[0], ".txt")
    outputs = []

    def args(spelled, i):
        outputs.append(tmp_path / f"out{i}{ending}")
        return [outputs[-1] if a == "OUT" else names.get(a, a) for a in spelled]

    was, now = run(*args(old, 0), "-q"), run(*args(new, 1), "-q")
    assert now.exit_code == 0 and now.stderr == "", now.stderr
    assert was.exit_code == 0, was.stderr
    warnings = was.stderr.splitlines()
    assert all(w.startswith("Warning: ") and "is the 0.2 spelling: use --" in w for w in warnings) and warnings
    assert line in was.stderr   # even with -q: it is for whoever keeps the script
    if old[0] in ("train", "convert"):
        assert outputs[0].read_bytes() == outputs[1].read_bytes()
    elif old[0] != "report":
        assert was.stdout == now.stdout


def test_a_0_2_spelling_and_today_s_with_another_value_are_refused(trained):
    m = trained / "m.npz"
    for args, message in [(("info", m, "--json", "--format", "text"),
                           "--json (0.2's spelling of --format json) and --format text contradict each other"),
                          (("topics", m, "--coherence", "npmi", "--top-n", 5, "-n", 6),
                           "--top-n 5 (0.2's spelling of --top-words 5) and --top-words 6 contradict each other")]:
        result = run(*args)
        assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_0_2_spellings_are_hidden_and_a_shared_value_has_today_s_meaning(trained, tmp_path):
    for command in former_options.FORMER:
        shown = run(command, "--help").stdout
        for former in former_options.FORMER[command]:
            if former.spelling != "--format":
                assert former.spelling not in shown
    assert "ldac" not in run("infer", "--help").stdout.split("--format", 1)[1].split("\n", 1)[0]
    # npz is an output format now: it writes the inference file (0.2 read an npz corpus with it)
    out = tmp_path / "theta.npz"
    result = run("infer", trained / "m.npz", trained / "c.ldac", "--format", "npz", "-o", out, "--seed", 1, "-q")
    assert result.exit_code == 0 and result.stderr == "" and ldacli.Inference.load(str(out)).theta.shape[1] == 3
    refused = run("infer", trained / "m.npz", trained / "c.ldac", "--format", "npz", "-o", tmp_path / "theta.tsv")
    assert refused.exit_code == 2 and "expected a file name ending in .npz for --format npz" in refused.stderr


def test_every_former_spelling_names_an_option_of_today():
    for command, formers in former_options.FORMER.items():
        params = {p.name: p for p in main.commands[command].params}
        for former in formers:
            assert former.name in params and not getattr(params[former.name], "hidden", False), (command, former)
            assert former.spelling not in [o for p in params.values() if not getattr(p, "hidden", False)
                                           for o in p.opts]


# --- the README and the docs --------------------------------------------------------------------------

PAGES = docs_pages.pages()
OPTION = re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]*")
# Options of other programs that the pages name where it compares ldacli with them (MALLET's
# train-topics); a benchmark script's options are checked against its source.
FORMER_SPELLINGS = {f.spelling for formers in former_options.FORMER.values() for f in formers}
OTHER_PROGRAMS = {"--output-doc-topics", "--output-topic-keys", "--topic-word-weights-file", "--doc-topics-threshold",
                  "--doc-topics-max", "--diagnostics-file"}


def _spelled(command: click.Command) -> dict[str, click.Parameter]:
    return {o: p for p in command.params if not getattr(p, "hidden", False) for o in p.opts + p.secondary_opts}


def _command_lines():
    """Every ``ldacli COMMAND ...`` in the README and the docs' pages, in code blocks (continued
    lines joined) and in inline code, as (page:line, words)."""
    found = []
    for page, text in PAGES.items():
        lines = text.split("\n")
        block = False
        for i, line in enumerate(lines):
            if line.startswith("```"):
                block = not block
                continue
            if block:
                while line.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    line = line[:-1] + " " + lines[i]
                texts = [line.split("#", 1)[0] if " #" in line else line]
            else:
                texts = re.findall(r"`(ldacli [^`]+)`", line)
            for text in texts:
                for part in re.split(r"\||&&|;|\|\||\$\(|\{", text):
                    words = part.strip().split()
                    if words[:1] == ["ldacli"] and len(words) > 1:
                        found.append((f"{page}:{i + 1}", words[1:]))
    return found


def test_every_ldacli_command_in_the_readme_and_docs_names_options_its_command_has():
    wrong = []
    for line, words in _command_lines():
        command = main.commands.get(words[0])
        if words[0].startswith("-"):
            continue   # ldacli --help, --version
        if command is None:
            wrong.append(f"{line}: no command {words[0]!r}")
            continue
        spelled = _spelled(command) | {"-h": None, "--help": None}
        for j, word in enumerate(words[1:], 1):
            option = word.split("=", 1)[0]
            if not OPTION.fullmatch(option) or option == "-":
                continue
            if option not in spelled:
                wrong.append(f"{line}: ldacli {words[0]} has no {option}")
                continue
            param, value = spelled[option], word.split("=", 1)[1] if "=" in word else \
                (words[j + 1] if j + 1 < len(words) else "")
            if param is not None and isinstance(param.type, click.Choice) and not param.is_flag:
                values = [v for v in value.strip("`'\"").split("|") if v and not v.isupper()]
                bad = [v for v in values if v not in param.type.choices and "..." not in v]
                if bad:
                    wrong.append(f"{line}: ldacli {words[0]} {option} takes {'|'.join(param.type.choices)}, "
                                 f"not {'|'.join(bad)}")
    assert wrong == []


def _inline_code():
    """Every piece of inline code outside code blocks of the README and the docs' pages, as
    (page:line, the line, the code)."""
    for page, text in PAGES.items():
        block = False
        for i, line in enumerate(text.split("\n"), 1):
            if line.startswith("```"):
                block = not block
            if block or line.startswith("```"):
                continue
            for code in re.findall(r"`([^`]*)`", line):
                yield f"{page}:{i}", line, code


def test_every_option_the_readme_and_docs_name_exists_and_takes_the_value_named_with_it():
    """An option in inline code is one of some ldacli command's (or of the peer or benchmark
    script the line is about), and a value named with it is one that option takes."""
    every = {"--help": [None], "--version": [None]}
    for command in main.commands.values():
        for option, param in _spelled(command).items():
            every.setdefault(option, []).append(param)
    benchmarks = "".join(open(os.path.join(ROOT, "benchmarks", n), encoding="utf-8").read()
                         for n in sorted(os.listdir(os.path.join(ROOT, "benchmarks"))) if n.endswith(".py"))
    wrong = []
    for i, line, code in _inline_code():
        if code.startswith("ldacli "):
            continue   # a whole command: the test above
        words = code.split()
        for j, word in enumerate(words):
            option = word.split("=", 1)[0]
            if not option.startswith("--") or not OPTION.fullmatch(option):
                continue
            params = every.get(option)
            if option in FORMER_SPELLINGS and "0.2" in line:
                continue   # named as 0.2's
            if not params:
                if option not in OTHER_PROGRAMS and f'"{option}"' not in benchmarks:
                    wrong.append(f"{i}: no command has {option}")
                continue
            value = word.split("=", 1)[1] if "=" in word else (words[j + 1] if j + 1 < len(words) else "")
            choices = [p.type.choices for p in params
                       if p is not None and isinstance(p.type, click.Choice) and not p.is_flag]
            if value and choices and not value.isupper():
                values = [v for v in value.split("|") if v]
                if not any(all(v in c for v in values) for c in choices):
                    wrong.append(f"{i}: {option} takes none of {'|'.join(values)}")
    assert wrong == []
