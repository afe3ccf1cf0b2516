"""The ``ldacli`` command line: click over the Python API, every option built from a setting's
declaration (:mod:`ldacli.settings`), none listed by hand.

Conventions, the same for every command: stdout carries results only; notes, progress and
errors go to stderr, an error as one line. ``--format`` chooses the output of a command that
prints results, ``--input-format`` how a corpus is read, ``-o -`` writes to stdout; ``-q``
silences notes and progress, ``-v`` adds the log. Exit codes: 0 success, 1 bad data and runtime
errors, 2 usage errors, 3 ``diff --max-drift`` exceeded or ``select-k``'s K not determined, 75
another run holds the lock, 130 stopped by SIGINT, 143 by SIGTERM.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import signal
import sys
import threading
import time
from contextlib import contextmanager

import click
import numpy as np

from ldacli import settings
from ldacli.api_input import resumed_reading
from ldacli.diff import MAX_DRIFT, THRESHOLD, diff_models, drifted
from ldacli.formats.read import INPUT_FORMAT, READING, READING_FOR_MODEL, VOCAB, read_corpus
from ldacli.formats.split import split_corpus
from ldacli.formats.write import WRITE_FORMATS, write_corpus
from ldacli.errors import LdacliError, LockedError, SettingError
from ldacli.escaping import PrintableWriter, is_terminal, json_text, printable, shell_word
from ldacli.fileio import file_sha256
from ldacli.former_options import taking_former_spellings
from ldacli import evaluate, inference
from ldacli import export as export_module
from ldacli.evaluate import SETTINGS as PERPLEXITY
from ldacli.evaluate import perplexity as compute_perplexity
from ldacli.evaluate import perplexity_stream
from ldacli.inference import SETTINGS as INFER
from ldacli.inference import SPARSE, write_inference
from ldacli.info import describe as describe_file
from ldacli.info import format_text as format_info
from ldacli.locking import EXIT_LOCKED, locked
from ldacli.memory import out_of_memory
from ldacli.methods.driver import SETTINGS as TRAIN
from ldacli.methods.driver import RunStopped, TrainingInterrupted, check_given, method_settings, unchanged
from ldacli.methods.registry import METHODS
from ldacli.methods.driver import train as run_train
from ldacli.dask_connection import TLS, tls_options
from ldacli.model import TOP_WORDS, Model
from ldacli.report import SETTINGS as REPORT
from ldacli.formats.shards import is_shard_folder, open_shard_folder
from ldacli.formats.stream import stream_corpus
from ldacli.report import write_report, write_select_k_page
from ldacli.webpage import REPORT_EXTRA
from ldacli.settings import Choice, Flag, Integer, Real, Setting, Text, Texts
from ldacli.table_formats import TABLE_FORMATS, check_stream, delimited_line, text_cell, write_table
from ldacli.tokenizer import TOKENIZING
from ldacli.topic_coherence import MEASURE, REFERENCE, training_reference
from ldacli import over_time, topic_history, topic_trends
from ldacli.topic_coherence import coherence as topic_coherence
from ldacli.topic_diagnostics import DIAGNOSTICS, FIELD_NAMES, THRESHOLDS, WORD_FIELDS
from ldacli.topic_diagnostics import diagnostics as diagnose
from ldacli.topic_diagnostics import FIELDS as DIAGNOSTIC_FIELDS
from ldacli.topic_names import name_topic
from ldacli import model_selection as choosing
from ldacli.version import __version__

# --- how convert writes a corpus --------------------------------------------------------------------

WRITING = (
    Setting("to", Choice(WRITE_FORMATS), "ldac",
            "Output format: LDA-C, UCI bag-of-words, Matrix Market (documents x words) or a scipy sparse .npz "
            "(scipy.sparse.save_npz)."),
    Setting("vocab_out", Text(path=True), None, "Vocabulary file to write.",
            default_help="the name the readers look for beside the output"),
    Setting("shards", Integer(1), None,
            "Write a shard folder at -o instead: this many files of consecutive documents (as train --shards "
            "cuts them), an index and the vocabulary, for a Dask cluster whose workers read their own shards."),
)

# --- the command line's own settings ------------------------------------------------------------------

QUIET = Setting("quiet", Flag(), False, "No progress bar or notes; errors only.", flags=("-q", "--quiet"))
VERBOSE = Setting("verbose", Flag(), False, "Also log what happens as it goes (the trace, timings).",
                  flags=("-v", "--verbose"))
SKIP_UNCHANGED = Setting("skip_unchanged", Flag(), False,
                         "Do nothing (exit 0) when -o exists and was trained with the same settings on a corpus "
                         "with the same fingerprint (and the same --warm-start and --align-to files), as make "
                         "would.")


def output_setting(what: str, suffixes: tuple[str, ...], *, stdout: bool = False, required: bool = True) -> Setting:
    """``-o/--output``: where a command writes ``what``."""
    names = " or ".join(suffixes)
    return Setting("output", Text(path=True), None if required else "-",
                   f"{what} ({names})" + ("; - for stdout." if stdout else "."), flags=("-o", "--output"),
                   required=required)


def format_setting(choices: tuple[str, ...], help: str = "Output format: text for people, json for machines.",
                   *, default_help: str | None = None) -> Setting:
    """``--format``: the form of a command's results (the first choice unless ``default_help``
    says how it is chosen)."""
    return Setting("output_format", Choice(choices), None if default_help else choices[0], help, flags=("--format",),
                   default_help=default_help)


# Outputs and the file name endings each accepts (checked the same way by every command).
MODEL_OUT = output_setting("Model file to write", (".npz",))
THETA_OUT = output_setting("Where to write theta, in --format or by its ending",
                           (".tsv", ".csv", ".jsonl", ".parquet", ".npz"),
                           stdout=True)
TOPICS_OUT = output_setting("Where to write the topics", ("any name",), stdout=True, required=False)
REPORT_OUT = output_setting("The HTML file to write", (".html", ".htm"))
CONVERT_OUT = output_setting("Bag-of-words file (or shard folder, with --shards) to write", ("any name",))
SUFFIXES = {"model": (".npz",), "checkpoint": (".npz",), "report": (".html", ".htm")}
THETA_FORMATS = ("tsv", "csv", "jsonl", "parquet", "npz")

TEXT_OR_JSON = format_setting(("text", "json"))
TOPICS_FORMAT = format_setting(("text", "tsv", "json"), "Output format: text (one line per topic), tsv (topic, "
                                                        "rank, word, probability) or json.")
THETA_FORMAT = format_setting(THETA_FORMATS, "Output format: tsv, csv, jsonl or parquet (a doc_id column, then "
                                             "topic_0 ... topic_{K-1}; with --min-proportion or --top-topics: doc_id, "
                                             "rank, topic, proportion) or npz (theta, doc_ids, params).",
                              default_help="by -o's ending; tsv for -o -")


# Exit code when stdout's reader closed it (128 + SIGPIPE, as a shell reports a tool killed by it).
EXIT_PIPE = 141


# --- errors as one line -------------------------------------------------------------------------------

class Group(click.Group):
    """ldacli's commands: a usage error is one line on stderr with exit code 2 (not click's usage
    banner), every other error one line with its own code."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            with terminated_as_interrupted():
                code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else "ldacli"
            echo(f"Error: {exc.format_message()} (see {command} --help)", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort as exc:
            signum = getattr(exc.__context__, "signum", signal.SIGINT)
            echo(f"stopped by {signal.Signals(signum).name}", err=True)
            sys.exit(128 + signum)
        if standalone_mode:
            sys.exit(code if isinstance(code, int) else 0)
        return code

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MemoryError:  # an allocation no estimate foresaw: one line, as the estimates' refusals
            what = " ".join(["ldacli", *([ctx.invoked_subcommand] if ctx.invoked_subcommand else [])])
            raise click.ClickException(str(out_of_memory(what))) from None
        except BrokenPipeError:  # the reader of stdout went away (a pipe into head): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_PIPE)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the command is, as Ctrl-C raises KeyboardInterrupt: what it was
    writing (temporary files, lock files) is cleaned up on the way out, and it exits 143."""

    signum = signal.SIGTERM


@contextmanager
def terminated_as_interrupted():
    """While a command runs (in the main thread), SIGTERM raises :class:`Terminated` unless
    something (the training loop's stop requests) has its own handler; SIGTERM's previous
    handling is restored after."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def echo(text: str, err: bool = False) -> None:
    """Write a line for people to stdout (or stderr with ``err``): a result, a note, an error.
    Words, ids, names and paths from files in it are escaped
    (:func:`ldacli.escaping.printable`), so nothing a corpus or a model holds acts on a
    terminal or breaks the line, on every channel."""
    click.echo(printable(text), err=err)


class PrintableFormatter(logging.Formatter):
    """ldacli's log lines, escaped as :func:`echo` escapes (a traceback, with -v, is kept as is)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))


class SettingOption(click.Option):
    """A click option made from a :class:`~ldacli.settings.Setting` (``.setting``)."""

    def __init__(self, param_decls, *, setting: Setting, **kwargs):
        self.setting = setting
        super().__init__(param_decls, **kwargs)


CLICK_TYPES = {Integer: click.INT, Real: click.FLOAT, Text: click.STRING}


def option(setting: Setting):
    """The click option of ``setting``: its spellings, a type that parses the value (the
    constraint is the library's to check), no default of click's own (None means not given,
    so a resumed run can tell), and the help with the declared default."""
    help = setting.described
    shown = setting.default_text()
    if shown is not None and not (isinstance(setting.type, Flag) and setting.off is None):
        help += f"  [default: {shown}]"
    if isinstance(setting.type, Flag):
        decls = [f"{setting.spellings[-1]}/{setting.off}"] if setting.off else list(setting.spellings)
        kind = {"is_flag": True}
    else:
        decls = list(setting.spellings)
        kind = {"type": click.Choice(setting.type.options) if isinstance(setting.type, Choice)
                else CLICK_TYPES.get(type(setting.type), click.STRING)}
        if isinstance(setting.type, Text) and setting.type.path:
            kind["metavar"] = "PATH"
        if isinstance(setting.type, Texts):  # given several times: a tuple, or None when not given
            kind.update(multiple=True, callback=lambda ctx, param, given: given or None)
    if not setting.required:  # (click 8.2 and later take an explicit None as a value given)
        kind["default"] = None
    return click.option(*decls, setting.name, cls=SettingOption, setting=setting, help=help,
                        required=setting.required, **kind)


def declared(*groups):
    """Decorate a command with the options of the settings in ``groups`` (in order)."""
    declared_settings = list(settings.by_name(s for group in groups for s in group).values())

    def decorate(f):
        for s in reversed(declared_settings):
            f = option(s)(f)
        return f

    return decorate


def given_of(values: dict, *groups) -> dict:
    """The values given on the command line (not None) of the settings in ``groups``."""
    names = {s.name for group in groups for s in group}
    return {k: v for k, v in values.items() if k in names and v is not None}


def value(values: dict, setting: Setting):
    """The value of ``setting``: given, or its default."""
    v = values.get(setting.name)
    return setting.default_for(values) if v is None else v


@contextmanager
def user_errors(ctx: click.Context):
    """Report users' mistakes as one line on stderr: exit code 1 for data and runtime errors, 2
    for a setting the library refused (naming the option), 128 + the signal's number when a
    signal stopped the command (130 for SIGINT, 143 for SIGTERM), 75 when another run holds the
    lock on an output."""
    try:
        yield
    except TrainingInterrupted as exc:  # what the user asked for: not an error
        echo(str(exc) + _continue_with(ctx, exc), err=True)
        sys.exit(128 + exc.signum)
    except RunStopped as exc:
        raise click.ClickException(str(exc) + _continue_with(ctx, exc)) from None
    except SettingError as exc:
        raise click.UsageError(in_options(ctx, exc), ctx=ctx) from None
    except LockedError as exc:  # and when the command can wait, how
        wait = _spelled(ctx, "wait", long=True)
        echo(f"Error: {exc}" + (f", or give {wait} SECONDS to wait for it" if wait else ""), err=True)
        sys.exit(EXIT_LOCKED)
    except LdacliError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated), outside the training loop
        signum = getattr(exc, "signum", signal.SIGINT)
        echo(f"stopped by {signal.Signals(signum).name}", err=True)
        sys.exit(128 + signum)
    except BrokenPipeError:
        raise
    except OSError as exc:  # writing outputs: full disk, permissions, missing folder
        if exc.errno == errno.ENOMEM:  # a thread, a map: memory as for a MemoryError
            raise click.ClickException(str(out_of_memory(f"ldacli {ctx.command.name}"))) from None
        where = exc.filename or "output"
        raise click.ClickException(f"{where}: cannot write: {exc.strerror or exc}") from None


def in_options(ctx: click.Context, exc: SettingError) -> str:
    """The library's message of ``exc``, which names settings as Python does, in the command
    line's words: the setting it is about as the command spells it (``-k/--topics must be
    ...``; a message that does not begin with it is prefixed by it) and each other setting it
    names (``exc.mentions``) by its long option (``give --warm-start too``)."""
    message, named = str(exc), False
    subject = _spelled(ctx, exc.name)
    if subject is not None and message.startswith(exc.name + " "):
        message, named = subject + message[len(exc.name):], True
    for other in exc.mentions:
        spelled = _spelled(ctx, other, long=True)
        if spelled is not None:
            message, n = re.subn(rf"(?<![\w-]){re.escape(other)}(?![\w-])", spelled, message)
            named = named or (other == exc.name and n > 0)
    return message if named or subject is None else f"{subject}: {message}"


def _spelled(ctx: click.Context, name: str, long: bool = False) -> str | None:
    """How the command line spells the setting ``name`` (``-k/--topics``; ``long``: its long
    option alone, ``--topics``; an argument: ``TOPIC``), or None when the command has none."""
    for param in ctx.command.params:
        if param.name == name and not getattr(param, "hidden", False):
            if isinstance(param, click.Argument):
                return param.human_readable_name
            return param.opts[-1] if long else "/".join(param.opts + param.secondary_opts)
    return None


def _continue_with(ctx: click.Context, exc: RunStopped) -> str:
    """The command that continues a stopped training run, exactly: the corpus and the output,
    ``--resume`` and the free options given (the checkpoint holds the rest)."""
    if ctx.command.name == "select-k":
        return "; continue with the same command: " + _command_line(ctx)
    if not exc.checkpoint or ctx.command.name != "train":
        return ""
    args = [ctx.params["corpus"], "-o", ctx.params["output"], "--resume", exc.checkpoint]
    for param in ctx.command.params:
        s = getattr(param, "setting", None)
        if s is None or ctx.params.get(param.name) is None or s.name in ("output", "resume"):
            continue
        if s.role is settings.FREE and s.name != "skip_unchanged":
            v = ctx.params[param.name]
            if isinstance(s.type, Flag):
                args.append(s.spellings[-1] if v else s.off)
            else:
                args += [s.spellings[-1], str(v)]
    return "; continue with: " + " ".join(shell_word(a) for a in [*ctx.command_path.split(), *args])


def _command_line(ctx: click.Context) -> str:
    """The command as it was given: its arguments and the options given."""
    args = [str(ctx.params[p.name]) for p in ctx.command.params if isinstance(p, click.Argument)]
    for param in ctx.command.params:
        s = getattr(param, "setting", None)
        v = ctx.params.get(param.name)
        if s is None or v is None or (isinstance(s.type, Flag) and not v and not s.off):
            continue
        if isinstance(s.type, Flag):
            args.append(s.spellings[-1] if v else s.off)
        elif isinstance(v, tuple):  # an option given several times
            args += [a for item in v for a in (s.spellings[-1], str(item))]
        else:
            args += [s.spellings[-1], str(v)]
    return " ".join(shell_word(a) for a in [*ctx.command_path.split(), *args])


def _setup_logging(values: dict) -> bool:
    """Send ldacli's log to stderr (-q: errors only; -v: everything); returns whether a
    progress bar should be shown."""
    quiet, verbose = bool(values.get("quiet")), bool(values.get("verbose"))
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose contradict each other: give one of them")
    logger = logging.getLogger("ldacli")
    logger.handlers[:] = [logging.StreamHandler(sys.stderr)]
    logger.handlers[0].setFormatter(PrintableFormatter("%(message)s"))
    logger.setLevel(logging.ERROR if quiet else logging.INFO if verbose else logging.WARNING)
    logger.propagate = False
    return not quiet and sys.stderr.isatty()


def _note(values: dict, message: str) -> None:
    if not values.get("quiet"):
        echo(message, err=True)


def _same_file(a: str, b: str) -> bool:
    if a == "-" or b == "-":
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs: dict[str, tuple[str | None, tuple[str, ...]]], inputs: dict[str, str | None]) -> None:
    """Before any work, the same for every command: each output (option -> (path, the endings
    it may have; empty: any)) names a file in an existing folder this user may write in, with a
    right ending, is not a folder, and is none of the inputs (option -> path) nor another
    output. ``-`` is stdout. A usage error (exit 2) names the option."""
    given = {opt: p for opt, (p, _) in outputs.items() if p and p != "-"}
    for opt, path in given.items():
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            raise click.BadParameter(f"expected a file name, found the folder {path!r}", param_hint=opt)
        if not os.path.isdir(folder):
            raise click.BadParameter(f"expected an existing folder for {path!r}, found none at {folder!r}", param_hint=opt)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise click.BadParameter(f"expected a folder this user may write in for {path!r}, found {folder!r} "
                                     f"read-only", param_hint=opt)
        for other, source in inputs.items():
            if source and _same_file(path, source):
                raise click.BadParameter(f"{path!r} is the {other} input: refusing to write over it", param_hint=opt)
        endings = outputs[opt][1]
        if endings and not path.lower().endswith(endings):
            raise click.BadParameter(f"expected a file name ending in {' or '.join(endings)}, found {path!r}",
                                     param_hint=opt)
    names = list(given)
    for i, opt in enumerate(names):
        for other in names[i + 1:]:
            if _same_file(given[opt], given[other]):
                raise click.BadParameter(f"{opt} and {other} must be different files, found {given[opt]!r} twice",
                                         param_hint=opt)


def reading_of(values: dict) -> dict:
    """The reading settings of a command's ``values``: each with its default, but the
    tokenizer's, which stay None when not given (given for input that is not text, they are
    refused)."""
    return {s.name: values[s.name] if s in TOKENIZING else value(values, s) for s in READING if s.name in values}


def read(path: str, values: dict, *, model: Model | None = None):
    """Read the corpus at ``path`` with the reading settings in ``values`` (for ``model``, when
    one scores it: over its vocabulary, text tokenized by its tokenizer, the tokens of words
    its rules removed counted apart); its notes go to stderr, each once."""
    reading = reading_of(values)
    fmt = reading.pop("input_format", "auto")
    vocab = reading.pop("vocab", None)
    for_model = {} if model is None else model.reading()
    if vocab:  # the corpus's own vocabulary file (bag of words) or one fixing its tokens (text)
        for_model.pop("fixed_vocab", None)
    corpus = read_corpus(path, format=fmt, vocab=vocab, **for_model, **reading)
    for note in corpus.notes:
        _note(values, f"{path}: {note}")
    return corpus


@contextmanager
def _output(path: str, binary: bool = False):
    """A stream for results: stdout for ``-`` (text on a terminal escaped,
    :class:`~ldacli.escaping.PrintableWriter`), else the file written atomically."""
    from ldacli.fileio import atomic_write

    if path == "-":
        if binary:
            yield sys.stdout.buffer
        else:
            yield PrintableWriter(sys.stdout) if is_terminal(sys.stdout) else sys.stdout
        return
    with atomic_write(path, "wb" if binary else "w", what="output") as f:
        yield f


def _emit(values: dict, lines) -> None:
    """Write result lines to ``-o`` (stdout by default)."""
    with _output(values.get("output") or "-") as out:
        for line in lines:
            out.write(line + "\n")


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ldacli")
def main():
    """Latent Dirichlet Allocation topic models from the command line.

    \b
    Examples:
      ldacli train docword.kos.txt.gz -k 20 --iterations 500 -o kos.npz
      ldacli topics kos.npz
      ldacli infer kos.npz new_docs.txt -o theta.tsv
      ldacli perplexity kos.npz heldout.ldac
      ldacli info kos.npz
      ldacli report kos.npz -o kos.html
      ldacli diff yesterday.npz today.npz
      ldacli history models/ -o history.html
      ldacli trends kos.npz --dates dates.txt --by month
      ldacli export kos.npz doc-topics -o theta.csv
      ldacli select-k docword.kos.txt.gz -k 5,10,20,50 --seeds 3 -o kos-k
      ldacli name kos.npz 3 "iraq war"
    """


# --- train --------------------------------------------------------------------------------------------

@main.command()
@taking_former_spellings("train")
@click.argument("corpus")
@declared((MODEL_OUT,), TRAIN, TLS, method_settings(), READING, (SKIP_UNCHANGED, QUIET, VERBOSE))
@click.pass_context
def train(ctx, corpus, **values):
    """Fit an LDA model to CORPUS by collapsed Gibbs sampling (default), variational EM or
    uncollapsed Gibbs sampling (--method).

    CORPUS is a UCI docword file, an LDA-C file, a text file (one document per line), a folder
    of .txt files, a Matrix Market or scipy .npz matrix, a shard folder (convert --shards; with
    --scheduler the workers read its files), or - for stdin; .gz is read transparently.

    With --resume CHECKPOINT alone (besides CORPUS and -o) the run continues exactly as it was
    asked: the settings the checkpoint fixes (method, K, priors, seed, sampler, shards,
    vocabulary rules, ...) come from it and may not change; those it continues (--iterations,
    --checkpoint, --checkpoint-every, --loglik-every, --patience, --max-seconds, --align-to)
    come from it unless given.

    \b
    Examples:
      ldacli train docword.kos.txt.gz -k 20 --iterations 500 --seed 1 -o kos.npz
      ldacli train docword.20ng.txt.gz -k 1000 --sampler sparse --threads 2 -o 20ng.npz
      ldacli train notes.txt --min-df 5 --max-df 0.5 -k 50 -o notes.npz \\
          --checkpoint notes.ckpt.npz --checkpoint-every 100
      ldacli train notes.txt -o notes.npz --resume notes.ckpt.npz
      ldacli train docword.kos.txt.gz -k 20 --method vem --seed 1 -o kos-vem.npz
      ldacli train docword.kos.txt.gz -k 20 --method gibbs --iterations 500 --burn-in 200 -o kos-gibbs.npz
      ldacli train docword.20ng.txt.gz --stop-words boilerplate.txt --remove-top 20 -k 50 -o 20ng.npz
      ldacli train today.ldac --warm-start yesterday.npz --iterations 100 -o today.npz --skip-unchanged
      ldacli train /shared/20ng-shards -k 100 --scheduler tcp://scheduler:8786 -o 20ng.npz
    """
    progress = _setup_logging(values)
    output, resume, checkpoint = values["output"], values["resume"], values["checkpoint"]
    check_outputs({"-o/--output": (output, SUFFIXES["model"]), "--checkpoint": (checkpoint, SUFFIXES["checkpoint"])},
                  {"CORPUS": corpus, "--vocab": values["vocab"], "--resume": None if checkpoint == resume else resume,
                   "--warm-start": values["warm_start"], "--align-to": values["align_to"]})
    if values["skip_unchanged"] and resume:
        raise click.BadParameter("a resumed run continues where it stopped: there is nothing to compare",
                                 param_hint="--skip-unchanged")
    given = given_of(values, TRAIN, method_settings())
    with user_errors(ctx):  # before anything is read
        check_given(given)
        for s in READING:
            s.check(values[s.name])
    with user_errors(ctx), tls_options(values["scheduler"], values), \
            locked([output], wait=values["wait"]) as removed:
        for path in removed:
            _note(values, f"{path}: removed, a temporary file left by a run that was killed")
        reading = given_of(values, READING)
        if resume:  # the corpus is read as the checkpoint's run read it
            reading = resumed_reading(reading, resume)
        if values["scheduler"] and is_shard_folder(corpus):  # the workers read the files, the client the index
            if any(reading.get(s.name) not in (None, s.default) for s in READING if s is not INPUT_FORMAT):
                raise click.BadParameter("a shard folder on a cluster is trained as written: choose the vocabulary "
                                         "when converting", param_hint="--vocab/--stop-words/--remove-top/--min-df/"
                                                                       "--max-df/--max-vocab")
            data = open_shard_folder(corpus)
            _note(values, f"{corpus}: the workers read its {data.n_shards} shard files")
        else:
            data = read(corpus, {**values, **reading})
        _note(values, f"{corpus}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens")
        if values["skip_unchanged"] and unchanged(output, data, **given):
            _note(values, f"{output}: up to date (trained with these settings on this corpus); nothing to do")
            return
        t0 = time.perf_counter()
        model = run_train(data, progress=progress, output=output, **given)
        seconds = time.perf_counter() - t0
    p = model.params
    unit = METHODS[p["method"]].unit
    ll = model.loglik_per_token[-1] if model.loglik_per_token.size else float("nan")
    why = "" if p["stopped"] == "iterations" else f" ({p['stopped']})"
    _note(values, f"{output}: {model.n_topics} topics after {p['iterations_done']} {unit}s{why} in {seconds:.1f} s, "
                  f"{METHODS[p['method']].trace_label} {ll:.4f}, seed {p['seed']}")


# --- topics -------------------------------------------------------------------------------------------

@main.command()
@taking_former_spellings("topics")
@click.argument("model")
@declared((TOPICS_OUT, TOPICS_FORMAT, TOP_WORDS, MEASURE, DIAGNOSTICS, REFERENCE, INPUT_FORMAT, VOCAB, QUIET, VERBOSE))
@click.pass_context
def topics(ctx, model, **values):
    """Show the most probable words of each topic of MODEL, optionally with coherence and
    diagnostics.

    With --coherence, each topic gets a score computed from document co-occurrence counts of
    its --top-words most probable words in the reference corpus (--corpus, by default the
    training corpus), and the mean over topics is printed last (text), to stderr (tsv) or under
    "coherence" (json). With --diagnostics, each topic gets MALLET's diagnostics and ours against
    the reference corpus and the flags that mark it as likely junk, each with its reason (text:
    a line under the topic and the reasons last; tsv: columns; json: "diagnostics" and "flags"
    per topic). Learned (asymmetric) priors are shown beside each topic.

    \b
    Examples:
      ldacli topics kos.npz
      ldacli topics kos.npz -n 20 --format tsv -o topics.tsv
      ldacli topics kos.npz --format json | jq '.topics[0]'
      ldacli topics kos.npz --coherence npmi
      ldacli topics kos.npz --coherence umass -n 20 --corpus wiki.ldac
      ldacli topics kos.npz --diagnostics
      ldacli topics kos.npz --diagnostics --format json | jq '.topics[] | select(.flags != []) | .topic'
    """
    _setup_logging(values)
    check_outputs({"-o/--output": (values["output"], ())}, {"MODEL": model, "--corpus": values["corpus"]})
    fmt, n, measure, diagnosing = (value(values, TOPICS_FORMAT), value(values, TOP_WORDS), values["coherence"],
                                   values["diagnostics"])
    if measure is None and not diagnosing:
        for s in (REFERENCE, INPUT_FORMAT, VOCAB):
            if values[s.name] is not None:
                raise click.BadParameter("applies with --coherence or --diagnostics only", param_hint=s.option)
    if (measure is not None or diagnosing) and n < 2:
        raise click.BadParameter(f"--{'coherence' if measure else 'diagnostics'} scores pairs of top words: expected "
                                 f"at least 2, found {n}", param_hint=TOP_WORDS.option)
    with user_errors(ctx):
        m = Model.load(model)
        scores = diagnostics = None
        if measure is not None or diagnosing:
            if values["corpus"] is None:
                ref = training_reference(m)
                ref_name = m.params.get("corpus_source", "")
            else:
                ref = read(values["corpus"], values, model=m)
                ref_name = values["corpus"]
            if measure is not None:
                scores = topic_coherence(m, ref, measure=measure, top_words=n)
                scores["reference"] = ref_name
            if diagnosing:
                diagnostics = diagnose(m, ref, top_words=n)
        tops = m.top_words(n)
        _emit(values, _topic_lines(model, m, tops, scores, fmt, measure, values, diagnostics))


def _topic_lines(path, m, tops, scores, fmt, measure, values, diagnostics=None):
    asymmetric = not np.all(m.alpha == m.alpha[0])  # then each topic's alpha is worth showing
    names = m.topic_names
    named = any(n is not None for n in names)
    diagnosed = diagnostics["topics"] if diagnostics else None
    if fmt == "json":
        def words(k, words):
            if diagnosed is None:
                return [{"word": w, "probability": p} for w, p in words]
            return [{"word": w, "probability": p, **{f: d[f] for f in WORD_FIELDS if f not in ("rank", "word", "prob")}}
                    for (w, p), d in zip(words, diagnosed[k]["words"])]

        out = {"model": path, "topics": [
            {"topic": k, "name": names[k], "alpha": float(m.alpha[k]),
             **({"coherence": scores["per_topic"][k]} if scores else {}),
             **({"diagnostics": {f: diagnosed[k][f] for f in FIELD_NAMES}, "flags": diagnosed[k]["flags"]}
                if diagnosed else {}),
             "words": words(k, ws)}
            for k, ws in enumerate(tops)]}
        if scores:
            out["coherence"] = {key: scores[key] for key in
                                ("measure", "top_words", "epsilon", "mean", "reference", "reference_docs")}
        if diagnostics:
            out["diagnostics"] = {"corpus": diagnostics["corpus"], "top_words": diagnostics["top_words"],
                                  "flags": diagnostics["flags"], "thresholds": THRESHOLDS}
        yield json_text(out, indent=2)
    elif fmt == "tsv":
        def row(fields):
            return delimited_line(map(str, fields), "\t")

        yield row(["topic", "rank", "word", "probability"] + ([measure] if scores else []) + (["name"] if named else [])
                  + (list(FIELD_NAMES) + ["flags"] if diagnosed else []))
        for k, words in enumerate(tops):
            extra = [f"{scores['per_topic'][k]:.6g}"] if scores else []
            extra += [names[k] or ""] if named else []
            if diagnosed:
                extra += [text_cell(diagnosed[k][f], kind) for f, kind, _, _ in DIAGNOSTIC_FIELDS]
                extra.append(" ".join(diagnosed[k]["flags"]))
            for r, (w, p) in enumerate(words, 1):
                yield row([k, r, w, f"{p:.6g}"] + extra)
        if scores:
            _note(values, f"mean {measure} coherence {scores['mean']:.6g} (top {scores['top_words']} words, "
                          f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} reference documents)")
        if diagnostics:
            _note(values, _flag_summary(diagnostics))
    else:
        width = len(str(len(tops) - 1))
        for k, words in enumerate(tops):
            label = f"topic {k:>{width}}" + (f" {names[k]}" if names[k] else "")
            if asymmetric:
                label += f" (alpha {m.alpha[k]:.4g})"
            if scores:
                label += f" [{measure} {scores['per_topic'][k]:.4g}]"
            if diagnosed and diagnosed[k]["flags"]:
                label += f" [junk? {', '.join(diagnosed[k]['flags'])}]"
            yield printable(f"{label}: " + "  ".join(f"{w} ({p:.3f})" for w, p in words))
            if diagnosed:
                yield " " * (width + 8) + "  ".join(f"{f} {_short(diagnosed[k][f])}" for f in FIELD_NAMES)
        if scores:
            yield printable(f"mean {measure} coherence: {scores['mean']:.6g} (top {scores['top_words']} words, "
                            f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} documents of "
                            f"{scores['reference']})")
        if diagnostics:
            yield printable(_flag_summary(diagnostics))
            raised = {f for t in diagnosed for f in t["flags"]}
            for flag in diagnostics["flags"]:
                if flag["name"] in raised:
                    yield printable(f"  {flag['name']}: {flag['meaning']}")


def _short(x) -> str:
    """A diagnostic as text: 4 significant digits, whole numbers without decimals, '-' for none."""
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer() or abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def _flag_summary(diagnostics: dict) -> str:
    """``flagged 3 of 50 topics as likely junk: 7 (boilerplate), ...`` (diagnostics of a corpus)."""
    topics = diagnostics["topics"]
    flagged = [t for t in topics if t["flags"]]
    corpus = diagnostics["corpus"]
    where = f" (against {corpus['source']}, {corpus['n_docs']:,} documents)" if corpus else ""
    if not flagged:
        return f"flagged none of {len(topics)} topics as likely junk{where}"
    return (f"flagged {len(flagged)} of {len(topics)} topics as likely junk{where}: "
            + ", ".join(f"{t['topic']} ({' '.join(t['flags'])})" for t in flagged))


# --- infer and perplexity -----------------------------------------------------------------------------

@main.command()
@taking_former_spellings("infer")
@click.argument("model")
@click.argument("corpus")
@declared((THETA_OUT, THETA_FORMAT), SPARSE, INFER, TLS, READING_FOR_MODEL, (QUIET, VERBOSE))
@click.pass_context
def infer(ctx, model, corpus, **values):
    """Infer topic proportions of the documents in CORPUS under MODEL.

    Text is tokenized as the model's training corpus was, and words are matched to the model's
    vocabulary by string. The tokens of words its vocabulary rules removed (stop words,
    pruning) and of words it has never seen are left out, and counted apart on stderr and in
    the .npz's params (removed_tokens, unknown_tokens). The output's format is --format, or else
    follows -o's ending; -o - writes tsv (or --format) to stdout. Documents are read, inferred
    and written a block at a time, so memory does not grow with their number (UCI files: their
    docIDs must not go down; Matrix Market and scipy .npz are read whole).

    \b
    Examples:
      ldacli infer kos.npz new_docs.txt -o theta.tsv
      ldacli infer kos.npz docword.new.txt.gz --vocab vocab.new.txt -o theta.npz --seed 3
      ldacli infer kos.npz new_docs.txt -o - --format csv | head
      ldacli infer kos.npz huge.txt.gz --top-topics 3 --min-proportion 0.05 -o theta.parquet
      zcat huge.txt.gz | ldacli infer kos.npz - -o - --format jsonl | gzip > theta.jsonl.gz
    """
    progress = _setup_logging(values)
    output, fmt = values["output"], values["output_format"]
    if fmt is None:
        fmt = "tsv" if output == "-" else os.path.splitext(output)[1].lower().lstrip(".")
    if fmt not in THETA_FORMATS:
        raise click.BadParameter(f"expected a file name ending in .tsv, .csv, .jsonl, .parquet or .npz, or --format, "
                                 f"found {output!r}", param_hint="-o/--output")
    if fmt == "npz" and output == "-":
        raise click.BadParameter("npz is a binary archive: write it to a file", param_hint="--format")
    ending = os.path.splitext(output)[1].lower().lstrip(".")
    if ending in THETA_FORMATS and ending != fmt:  # -o theta.tsv --format csv: which one was meant?
        raise click.BadParameter(f"expected a file name ending in .{fmt} for --format {fmt}, found {output!r}",
                                 param_hint="-o/--output")
    check_outputs({"-o/--output": (output, ())}, {"MODEL": model, "CORPUS": corpus, "--vocab": values["vocab"]})
    with user_errors(ctx):  # before anything is read
        inference.check_settings(given_of(values, INFER))
        inference.check_table(fmt, **given_of(values, SPARSE))
        if output == "-":
            check_stream(fmt, sys.stdout.buffer)
    with user_errors(ctx), tls_options(values["scheduler"], values), locked([output if output != "-" else None]):
        m = Model.load(model, documents=False)
        stream = stream_read(corpus, values, m, fingerprint=fmt == "npz",
                             temp_folder=None if output == "-" else os.path.dirname(os.path.abspath(output)))
        write_inference(m, stream, output, fmt, out=sys.stdout.buffer if output == "-" else None,
                        progress=progress, **given_of(values, INFER, SPARSE))
        for note in stream.notes:
            _note(values, f"{corpus}: {note}")


def stream_read(path: str, values: dict, model: Model, **options):
    """:func:`read`, as a stream of blocks of documents for ``model`` (notes at the end)."""
    reading = reading_of(values)
    fmt = reading.pop("input_format", "auto")
    return stream_corpus(path, format=fmt, **model.reading(), **reading, **options)


@main.command()
@taking_former_spellings("perplexity")
@click.argument("model")
@click.argument("corpus")
@declared((TEXT_OR_JSON,), PERPLEXITY, TLS, READING_FOR_MODEL, (QUIET, VERBOSE))
@click.pass_context
def perplexity(ctx, model, corpus, **values):
    """Held-out log-likelihood and per-word perplexity of CORPUS under MODEL.

    \b
    --estimator completion (default): each document's tokens (in word-id order) alternate
      between an observed half, from which theta is estimated with the topics fixed, and a
      scored half. Standard error: batch means over the averaged sweeps.
    --estimator left-to-right: p(w_d) by the left-to-right particle estimator (Wallach et al.
      2009) over ALL tokens of each document, taken in a random order drawn from --seed,
      by 10 independent particle filters (unbiased for p(w_d), linear in document length);
      --resample for the original algorithm (quadratic). Standard error: across filters
      (particles), combined over documents. On long documents the log-estimate rises with
      --particles until it settles: compare two values.
    --estimator importance: p(w_d) = mean over --samples draws theta ~ Dir(alpha) of
      p(w_d | theta), ALL tokens scored; unbiased but very noisy on long documents.

    Every output names the estimator, the natural-log log-likelihood with its standard
    error, the documents and tokens scored, and perplexity = exp(-log_likelihood / tokens).

    \b
    Examples:
      ldacli perplexity kos.npz heldout.ldac
      ldacli perplexity kos.npz heldout.ldac --seed 1 --format json
      ldacli perplexity kos.npz heldout.ldac --estimator left-to-right --particles 20 --seed 1
      ldacli perplexity kos.npz heldout.ldac --estimator importance --samples 10000
    """
    progress = _setup_logging(values)
    with user_errors(ctx), tls_options(values["scheduler"], values):
        given = given_of(values, PERPLEXITY)
        streaming = evaluate.check_settings(given)["estimator"] == "completion"
        m = Model.load(model, documents=False)
        if streaming:  # documents read, inferred and scored a block at a time
            data = stream_read(corpus, values, m)
            result = perplexity_stream(m, data, progress=progress, **{k: v for k, v in given.items() if k != "estimator"})
            for note in data.notes:
                _note(values, f"{corpus}: {note}")
        else:
            data = read(corpus, values, model=m)
            result = compute_perplexity(m, data, progress=progress, **given)
    result = {"model": model, "corpus": corpus, **result, "notes": list(data.notes)}
    if value(values, TEXT_OR_JSON) == "json":
        click.echo(json_text(result, indent=2))
        return
    estimator = result["estimator"]
    if estimator == "document-completion":
        how = "theta from half of each document, the other half scored"
        se_how = f"batch means over {result['batches']} blocks of sweeps"
    elif estimator == "left-to-right":
        if result["resample"]:
            how = f"{result['particles']} particles re-drawing earlier topics (quadratic), all tokens scored"
            se_how = "across particles"
        else:
            how = f"{result['filters']} particle filters of {result['particles']} particles, all tokens scored"
            se_how = "across filters"
    else:
        how = f"{result['samples']} samples of theta from the prior, all tokens scored"
        se_how = "across samples"
    echo(f"estimator:       {estimator} ({how})")
    echo(f"documents:       {result['n_docs']}")
    echo(f"tokens scored:   {result['n_tokens']}")
    echo(f"unknown tokens:  {result['unknown_tokens']} (of words the model has never seen, left out)")
    echo(f"removed tokens:  {result['removed_tokens']} (of words its vocabulary rules remove, left out)")
    echo(f"log-likelihood:  {result['log_likelihood']:.6g} (natural log)")
    echo(f"standard error:  {result['standard_error']:.3g} ({se_how})")
    echo(f"perplexity:      {result['perplexity']:.6g}")
    echo(f"seed:            {result['seed']}")


# --- diff, info, report ---------------------------------------------------------------------------------

# Exit code of `diff --max-drift` when a paired topic moved further than allowed: the command
# succeeded, but something needs a look.
EXIT_DRIFT = 3


@main.command()
@taking_former_spellings("diff")
@click.argument("model_a")
@click.argument("model_b")
@declared((TEXT_OR_JSON, TOP_WORDS, THRESHOLD, MAX_DRIFT, QUIET, VERBOSE))
@click.pass_context
def diff(ctx, model_a, model_b, **values):
    """Compare the topics of MODEL_A (say, yesterday's) and MODEL_B (today's).

    Topics are matched one to one by the Hungarian algorithm on the Jensen-Shannon distance
    between their word distributions (words matched by string, so the vocabularies may
    differ). For each pair: the distance, the top words gained and lost, and the prevalence
    (mean topic proportion) in each; then the topics with no counterpart. When MODEL_B was
    warm-started from MODEL_A's file, each of its topics is paired with the topic it continues
    instead, and the topics --add-topics added and --remove-topics removed are listed as such:
    never paired, never drift. --max-drift D exits 3 when a paired topic moved further than D.

    \b
    Examples:
      ldacli diff yesterday.npz today.npz
      ldacli diff yesterday.npz today.npz --format json | jq .max_distance
      ldacli diff yesterday.npz today.npz --max-drift 0.6 || echo "topics moved" | mail -s ldacli me
    """
    _setup_logging(values)
    max_drift = values["max_drift"]
    with user_errors(ctx):
        max_drift = MAX_DRIFT.check(max_drift)
        a, b = Model.load(model_a), Model.load(model_b)
        result = diff_models(a, b, **given_of(values, (TOP_WORDS, THRESHOLD)), a_sha256=file_sha256(model_a))
    result = {"a": model_a, "b": model_b, **result}
    moved = drifted(result, max_drift)
    if value(values, TEXT_OR_JSON) == "json":
        click.echo(json_text({**result, "max_drift": max_drift, "drifted": [[t["a"], t["b"]] for t in moved]},
                              indent=2))
    else:
        echo(f"A: {model_a} ({a.n_topics} topics)    B: {model_b} ({b.n_topics} topics)")
        if result["pairing"] == "descent":
            echo("B was warm-started from A: each topic of B is paired with the topic of A it continues")
        echo(f"matched {sum(t['matched'] for t in result['topics'])}, renumbered {result['renumbered']}, "
                   f"JS distance median {result['median_distance']:.3f}, max {result['max_distance']:.3f}")
        n = result["top_words"]
        for t in result["topics"]:
            mark = "" if t["matched"] else "  (no counterpart)"
            echo(f"A {_named(t['a'], t['name_a']):>3} ~ B {_named(t['b'], t['name_b']):<3} JS "
                       f"{t['distance']:.3f}, {t['overlap']}/{n} top words shared, prevalence "
                       f"{100 * t['prevalence_a']:.1f}% -> {100 * t['prevalence_b']:.1f}%{mark}: "
                       + " ".join(t["top_words_b"][:8]))
            if t["gained"] or t["lost"]:
                echo(f"        + {' '.join(t['gained']) or '-'}    - {' '.join(t['lost']) or '-'}")
        tops_a, tops_b = a.top_words(8), b.top_words(8)
        for k in result["removed"]:
            echo(f"A {a.topic_label(k):>3} removed (--remove-topics): " + " ".join(w for w, _ in tops_a[k]))
        for k in result["added"]:
            echo(f"B {b.topic_label(k):>3} added (--add-topics): " + " ".join(w for w, _ in tops_b[k]))
        for side, m in (("a", a), ("b", b)):
            if result[f"only_in_{side}"]:
                echo(f"only in {side.upper()}: topics "
                           + ", ".join(m.topic_label(k) for k in result[f"only_in_{side}"]))
    if moved:
        worst = max(moved, key=lambda t: t["distance"])
        _note(values, f"drift: {len(moved)} topic{'s' if len(moved) != 1 else ''} moved further than {max_drift:g} "
                      f"(worst: A {worst['a']} ~ "
                      f"B {worst['b']}, {worst['distance']:.3f})")
        sys.exit(EXIT_DRIFT)


def _named(k: int, name: str | None) -> str:
    return f"{k} ({name})" if name else str(k)


@main.command()
@taking_former_spellings("info")
@click.argument("model")
@declared((TEXT_OR_JSON, QUIET, VERBOSE))
@click.pass_context
def info(ctx, model, **values):
    """Describe a model (or checkpoint) file: parameters, sizes, priors, provenance, trace.

    Shows the method and its settings, K, V, D and N, the priors (alpha per topic, listed when
    there are few topics and summarised otherwise; beta) and whether they were learned or set,
    the seed, version and training corpus (path, format, fingerprint), and the log-likelihood
    trace summarised (first, last and best point). A checkpoint also shows the sweeps done.

    \b
    Examples:
      ldacli info kos.npz
      ldacli info kos.npz --format json | jq .priors.alpha.sum
      ldacli info run.ckpt.npz
    """
    _setup_logging(values)
    with user_errors(ctx):
        summary = describe_file(model)
    if value(values, TEXT_OR_JSON) == "json":
        click.echo(json_text(summary, indent=2))
    else:
        for line in format_info(summary):
            echo(line)


@main.command()
@taking_former_spellings("report")
@click.argument("model")
@declared((REPORT_OUT, REFERENCE, INPUT_FORMAT, VOCAB), REPORT, (QUIET, VERBOSE))
@click.pass_context
def report(ctx, model, **values):
    """Write a self-contained, interactive HTML report of MODEL that works offline: a topic map,
    each topic's words ranked by relevance with a lambda control, the model at a glance (priors,
    trace, why training stopped), coherence and representative documents, and a diff against an
    older model. Needs the report extra: pip install 'ldacli[report]'.

    \b
    Examples:
      ldacli report kos.npz -o kos.html
      ldacli report today.npz -o today.html --diff yesterday.npz --png
      ldacli report kos.npz -o kos.html --corpus heldout.ldac
    """
    _setup_logging(values)
    output, corpus = values["output"], values["corpus"]
    check_outputs({"-o/--output": (output, SUFFIXES["report"])},
                  {"MODEL": model, "--corpus": corpus, "--diff": values["diff"]})
    if corpus is None:
        for s in (INPUT_FORMAT, VOCAB):
            if values[s.name] is not None:
                raise click.BadParameter("applies with --corpus only", param_hint=s.option)
    with user_errors(ctx), locked([output]):
        m = Model.load(model)
        if corpus is not None:
            reference = read(corpus, values, model=m)
        else:
            try:
                reference = training_reference(m, "--corpus")
            except LdacliError as exc:
                _note(values, f"{model}: no coherence or documents in the report: {exc}")
                reference = None
        t0 = time.perf_counter()
        written = write_report(model, output, corpus=reference, **given_of(values, REPORT))
    _note(values, f"{output}: report of {model}, {written['bytes'] / 1e6:.1f} MB, in {time.perf_counter() - t0:.1f} s"
                  + (f"; images {', '.join(written['images'])}" if written["images"] else ""))


# --- history and trends -------------------------------------------------------------------------------

OVER_TIME_OUT = output_setting("Where to write the result, in --format or by its ending", ("any name",), stdout=True,
                               required=False)
OVER_TIME_FORMAT = format_setting(over_time.FORMATS, "Output format: text for people, json (everything), a table "
                                                     "(tsv, csv, jsonl, parquet) or html (the page; the report extra).",
                                  default_help="by -o's ending: .json .tsv .csv .jsonl .parquet .html; text for -o -")


def _over_time_format(output: str, given: str | None) -> str:
    """The format of history's and trends' output: ``--format``, or by -o's ending (text for
    stdout and other endings); an ending that names another format is refused."""
    ending = over_time.ENDINGS.get(os.path.splitext(output)[1].lower()) if output != "-" else None
    if given is not None and ending is not None and ending != given:
        raise click.BadParameter(f"expected a file name ending in .{given} for --format {given}, found {output!r}",
                                 param_hint="-o/--output")
    return given or ending or "text"


@main.command()
@click.argument("models", nargs=-1, required=True)
@declared((OVER_TIME_OUT, OVER_TIME_FORMAT), topic_history.SETTINGS, (MAX_DRIFT, QUIET, VERBOSE))
@click.pass_context
def history(ctx, models, **values):
    """Follow each topic across the MODELS of a schedule of retrains: its share, id, name, top
    words and drift (Jensen-Shannon distance, as diff measures it) in each model, and when it
    was born (--add-topics, or nothing like it before) and died (--remove-topics, or nothing like
    it after).

    MODELS are model files, folders of them, or glob patterns ('models/*.npz'). They are read one
    at a time, in the order of their lineage (a model after the one it was warm-started from or
    aligned to; else by modification time) or as given (--order given), and each is paired with
    the one before: by the descent a warm start records, by id after --align-to, else by diff's
    matching (said in the output). --max-drift D exits 3 naming the topics and steps that moved
    further than D.

    \b
    Examples:
      ldacli history models/
      ldacli history 'models/model-*.npz' -o history.html
      ldacli history models/ --format tsv -o history.tsv
      ldacli history yesterday.npz today.npz --max-drift 0.6 || echo "exit $?: topics moved"
    """
    _setup_logging(values)
    output = values["output"] or "-"
    fmt = _over_time_format(output, values["output_format"])
    check_outputs({"-o/--output": (output, ())}, {f"MODELS ({m})": m for m in models})
    with user_errors(ctx):  # before anything is read
        max_drift = MAX_DRIFT.check(values["max_drift"])
        given = given_of(values, topic_history.SETTINGS)
        for s in topic_history.SETTINGS:
            s.check(given.get(s.name))
        if fmt == "html":
            over_time.needs_the_report_extra()
    with user_errors(ctx), locked([output if output != "-" else None]):
        result = topic_history.read_history(list(models), **given,
                                            progress=lambda path: logging.getLogger("ldacli").info("reading %s", path))
        for note in result["notes"]:
            _note(values, topic_history.printable(note))
        with _output(output, binary=True) as out:
            over_time.write_history(result, out, fmt)
    moved = topic_history.drifted(result, max_drift)
    if moved:
        worst = max(moved, key=lambda m: m["drift"])
        _note(values, f"drift: {len(moved)} move(s) further than {max_drift:g}: "
                      + "; ".join(f"topic {m['topic']} at step {m['step']} ({m['drift']:.3f}"
                                  + (f", became topic {m['became']}" if m["became"] is not None else "") + ")"
                                  for m in moved[:10]) + ("; ..." if len(moved) > 10 else "")
                      + f" (worst: topic {worst['topic']}, step {worst['step']})")
        sys.exit(EXIT_DRIFT)


@main.command()
@click.argument("model")
@declared((OVER_TIME_OUT, OVER_TIME_FORMAT, topic_trends.DATES), topic_trends.SETTINGS,
          (topic_trends.APPEND, QUIET, VERBOSE))
@click.pass_context
def trends(ctx, model, **values):
    """Each topic's share of the documents by period of their dates: for every period (--by
    day, week, month, quarter or year) and topic, the number of documents, the mean of the
    topic's proportion over them and its standard error.

    MODEL is a model (its training documents) or an inference file (ldacli infer MODEL NEW -o
    FILE.npz: new documents, measured by the model without retraining). --dates FILE gives one
    ISO 8601 date per document, a line each in the corpus's order, or ID<TAB>DATE lines (CSV
    in a .csv file) keyed by document id. --append merges the result into the table -o names
    (tsv, csv, jsonl, parquet), as a nightly job does with the day's new documents.

    \b
    Examples:
      ldacli trends model.npz --dates dates.txt --by month
      ldacli trends model.npz --dates ids-dates.tsv --by week -o trends.html
      ldacli infer model.npz today.txt -o today.npz && \\
          ldacli trends today.npz --dates today-dates.txt --by day -o shares.tsv --append
    """
    _setup_logging(values)
    output = values["output"] or "-"
    fmt = _over_time_format(output, values["output_format"])
    check_outputs({"-o/--output": (output, ())}, {"MODEL": model, "--dates": values["dates"]})
    with user_errors(ctx):
        by = topic_trends.BY.check(values["by"]) if values["by"] is not None else topic_trends.BY.default
        if values["append"] and (output == "-" or fmt not in TABLE_FORMATS):
            raise SettingError("append", "append merges into a table file: give -o FILE.tsv (or .csv, .jsonl, "
                                         ".parquet)", ("output",))
        if fmt == "html":
            over_time.needs_the_report_extra()
    with user_errors(ctx), locked([output if output != "-" else None]):
        props, days, shares, notes = topic_trends.measure(model, values["dates"], by)
        for note in notes:
            _note(values, topic_history.printable(note))
        if values["append"] and os.path.exists(output):
            table, added, merged = topic_trends.merge_tables(output, topic_trends.read_table(output, fmt),
                                                             topic_trends.shares_table(shares, props.names), by)
            with _output(output, binary=True) as out:
                write_table(table, out, fmt)
            _note(values, f"{output}: {len(added)} period(s) added ({', '.join(added[:5]) or 'none'}), "
                          f"{len(merged)} merged with its rows ({', '.join(merged[:5]) or 'none'})")
            return
        with _output(output, binary=True) as out:
            over_time.write_trends(props, days, shares, by, out, fmt)


# --- export -------------------------------------------------------------------------------------------

EXPORT_OUT = output_setting("Where to write the table", ("any name",), stdout=True, required=False)
EXPORT_FORMAT = format_setting(export_module.FORMATS,
                               "Output format: tsv, csv, jsonl or parquet (the table), mallet (MALLET's file for it), "
                               "json (pyldavis only).",
                               default_help="by -o's ending: .tsv .txt .csv .jsonl .ndjson .parquet .json; tsv for "
                                            "-o -; json for pyldavis")


@main.command()
@click.argument("model")
@click.argument("what", type=click.Choice(export_module.TABLES))
@declared((EXPORT_OUT, EXPORT_FORMAT), export_module.SETTINGS, (INPUT_FORMAT, VOCAB, QUIET, VERBOSE))
@click.pass_context
def export(ctx, model, what, **values):
    """Write WHAT of MODEL as a table for other tools, to -o FILE or stdout.

    \b
    WHAT:
      doc-topics   the training documents' topic proportions: doc_id, topic_0 ... topic_{K-1};
                   sparse with --min-proportion P and/or --top-topics N: doc_id, rank, topic,
                   proportion, largest first (MALLET's --doc-topics-threshold/--doc-topics-max)
      topic-words  topic, rank, word, probability: every word of every topic (the top -n
                   words of each with -n)
      topic-keys   topic, name, alpha, prevalence (mean proportion over the training documents),
                   the --coherence score when asked, and the top -n words (10)
      diagnostics  one row per topic: MALLET's diagnostics (tokens, document_entropy, umass,
                   exclusivity, rank_1_docs, allocation_ratio, ...), npmi and ours, the junk
                   flags and the top -n words (10), against --corpus (by default the training
                   corpus); --format mallet writes MALLET's --diagnostics-file XML
      pyldavis     the arguments of pyLDAvis.prepare as JSON (doc_lengths and term_frequency
                   from --corpus, by default the training corpus)

    --format tsv, csv (quoted where a field needs it), jsonl, parquet (pip install
    'ldacli[parquet]') or mallet: MALLET's --output-doc-topics, --output-topic-keys,
    --topic-word-weights-file and --diagnostics-file layouts. Document ids are the corpus's own.

    \b
    Examples:
      ldacli export kos.npz doc-topics -o theta.csv
      ldacli export kos.npz doc-topics --top-topics 3 --min-proportion 0.1 --format jsonl -o -
      ldacli export kos.npz topic-keys -n 20 --coherence npmi -o keys.tsv
      ldacli export kos.npz topic-words -o words.parquet
      ldacli export kos.npz diagnostics -o diagnostics.csv
      ldacli export kos.npz diagnostics --format mallet -o diagnostics.xml
      ldacli export kos.npz doc-topics --format mallet -o doc-topics.txt
      ldacli export kos.npz pyldavis -o kos-ldavis.json
    """
    _setup_logging(values)
    output, corpus = values["output"] or "-", values["corpus"]
    check_outputs({"-o/--output": (output, ())}, {"MODEL": model, "--corpus": corpus, "--vocab": values["vocab"]})
    if corpus is None:
        for s in (INPUT_FORMAT, VOCAB):
            if values[s.name] is not None:
                raise click.BadParameter("applies with --corpus only", param_hint=s.option)
    with user_errors(ctx):
        given = given_of(values, export_module.SETTINGS)
        export_module.check_applies(what, given)
        fmt = export_module.format_for(what, output, values["output_format"])
        for s in export_module.SETTINGS:
            s.check(values[s.name])
        if output == "-":
            check_stream(fmt, sys.stdout.buffer)
    with user_errors(ctx), locked([output if output != "-" else None]):
        m = Model.load(model)
        reference = read(corpus, values, model=m) if corpus is not None else None
        n = values["top_words"]
        with _output(output, binary=True) as out:
            if what == "pyldavis":
                export_module.write_pyldavis(export_module.to_pyldavis(m, reference), out)
            else:
                scores = (export_module.keys_coherence(m, values["coherence"], reference, n) if what == "topic-keys"
                          else export_module.diagnostics(m, reference, n) if what == "diagnostics" else None)
                if fmt == "mallet":
                    export_module.write_lines(export_module.mallet_lines(
                        m, what, min_proportion=values["min_proportion"], top_topics=values["top_topics"], top_words=n,
                        scores=scores), out)
                else:
                    write_table(export_module.table(m, what, min_proportion=values["min_proportion"],
                                                    top_topics=values["top_topics"], top_words=n, scores=scores),
                                out, fmt)


# --- select-k -----------------------------------------------------------------------------------------

# Exit code of select-k when the data do not determine K: the command succeeded, but its
# table needs a look (as diff --max-drift's).
EXIT_UNDETERMINED = 3

SELECT_K_OUT = Setting("output", Text(path=True), None,
                       "Folder for every pair's model and scores (k{K}-s{i}.npz, .json), the table (select-k.json, "
                       "select-k.tsv) and the page (select-k.html); created if missing. A run started again in it "
                       "trains only the pairs it lacks.", flags=("-o", "--output"), required=True)
SELECT_K_FORMAT = format_setting(("text", "tsv", "json"), "Output format of the table on stdout: text for people, "
                                                          "tsv (one row per K) or json (everything).")


@main.command("select-k")
@click.argument("corpus")
@declared((SELECT_K_OUT, SELECT_K_FORMAT), choosing.SETTINGS, choosing.SETTINGS_OF_TRAIN, TLS, READING,
          (QUIET, VERBOSE))
@click.pass_context
def select_k_command(ctx, corpus, **values):
    """Choose the number of topics: train every K of -k with --seeds seeds each (train's options
    for every run) on CORPUS less a held-out split, and report for each K, as mean ± standard
    error over the seeds: held-out perplexity (document completion, as ldacli perplexity), NPMI
    coherence on the training documents, topic diversity and exclusivity, and stability (how
    well the topics of different seeds match, as ldacli diff matches them).

    It recommends the K with the most topic quality (NPMI x diversity) per unit of held-out
    perplexity, or among the Ks within one standard error of it the most stable; when that K is
    the smallest or the largest tried, or every K is within one standard error of it, K is not
    determined: it says so, with the evidence, and exits with code 3. The rule is printed with
    the table. Every model is written to -o DIR with the table and a page (DIR/select-k.html).
    Killed (Ctrl-C, SIGTERM, kill -9, a reboot), the same command started again trains only the
    pairs it had not finished, and continues those under way from their checkpoints (written on
    Ctrl-C/SIGTERM, and every --checkpoint-every sweeps).

    \b
    Examples:
      ldacli select-k docword.kos.txt.gz -k 5,10,20,50 --seeds 3 --iterations 300 -o kos-k
      ldacli select-k docword.20ng.txt.gz -k 10:200:log8 --seed 1 --threads 2 -o 20ng-k --format tsv
      ldacli select-k notes.txt -k 10,20,40 --min-df 5 --scheduler tcp://scheduler:8786 -o notes-k
    """
    progress = _setup_logging(values)
    output = values["output"]
    if os.path.exists(output) and not os.path.isdir(output):
        raise click.BadParameter(f"expected a folder, found the file {output!r}", param_hint="-o/--output")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise click.BadParameter(f"expected an existing folder this user may write in for {output!r}, found "
                                 f"{parent!r} missing or read-only", param_hint="-o/--output")
    own, given = given_of(values, choosing.SETTINGS), given_of(values, choosing.SETTINGS_OF_TRAIN)
    with user_errors(ctx):  # before anything is read
        checked = settings.resolve(choosing.SETTINGS, own)
        check_given({**given, "n_topics": (checked["n_topics"] or [1])[0]})
        for s in READING:
            s.check(values[s.name])
    with user_errors(ctx), tls_options(values["scheduler"], values):
        data = read(corpus, values)
        _note(values, f"{corpus}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens")
        page = os.path.join(output, "select-k.html")
        try:
            import vl_convert  # noqa: F401 - the page's charts need it
            write_page = lambda result: write_select_k_page(result, page)  # noqa: E731
        except ImportError:
            write_page = None
            _note(values, f"{page}: not written: the page's charts need the report extra, {REPORT_EXTRA}")
        result = choosing.select_k(data, own.pop("n_topics"), output=output, progress=progress, page=write_page,
                                   **own, **given)
    fmt = value(values, SELECT_K_FORMAT)
    if fmt == "json":
        click.echo(json_text(result, indent=2))
    elif fmt == "tsv":  # numbers only
        for line in choosing.table_tsv(result):
            click.echo(line)
    else:
        for line in choosing.table_text(result):
            echo(line)
    _note(values, f"{output}: {len(result['pairs'])} models, select-k.json, select-k.tsv"
                  + (", select-k.html" if write_page else ""))
    if result["recommended"] is None:  # it ran, but a person has to look
        sys.exit(EXIT_UNDETERMINED)


# --- name ---------------------------------------------------------------------------------------------

@main.command("name")
@click.argument("model")
@click.argument("topic", type=int)
@click.argument("name")
@declared((settings.by_name(TRAIN)["wait"], QUIET, VERBOSE))
@click.pass_context
def name_command(ctx, model, topic, name, **values):
    """Name topic TOPIC of MODEL (an empty NAME removes its name). The file is rewritten
    atomically while holding its lock. Names appear wherever topic ids do (topics, diff, info,
    report), are kept by warm starts (--warm-start) and follow their topics when a model is
    aligned (--align-to); a topic takes its name from a --seed-words file too.

    \b
    Examples:
      ldacli name kos.npz 3 "iraq war"
      ldacli name kos.npz 3 ""
      ldacli topics kos.npz
    """
    _setup_logging(values)
    with user_errors(ctx):
        m = name_topic(model, topic, name, wait=values["wait"])
    label = m.topic_names[topic]
    _note(values, f"{model}: topic {topic} " + (f"is named {label!r}" if label else "has no name"))


# --- convert ------------------------------------------------------------------------------------------

@main.command()
@taking_former_spellings("convert")
@click.argument("source")
@declared((CONVERT_OUT,), WRITING, READING, (QUIET, VERBOSE))
@click.pass_context
def convert(ctx, source, **values):
    """Turn a corpus (typically text) into a bag-of-words file plus a vocabulary file, or into
    a shard folder (--shards).

    The vocabulary rules (--stop-words, --remove-top, --min-df, --max-df, --max-vocab) apply to
    every input format. With --vocab, the vocabulary is fixed (words outside it are dropped),
    so several corpora can share one vocabulary.

    \b
    Examples:
      ldacli convert docs.txt --min-df 5 --max-df 0.5 -o docs.ldac
      ldacli convert new_docs.txt --vocab docs.vocab -o new_docs.ldac
      ldacli convert docs/ --to uci -o docword.docs.txt
      ldacli convert docword.20ng.txt.gz --stop-words boilerplate.txt -o 20ng.ldac
      ldacli convert docword.20ng.txt.gz --shards 16 -o /shared/20ng-shards
    """
    _setup_logging(values)
    output = values["output"]
    if values["shards"] is not None:
        _convert_to_shards(ctx, source, values)
        return
    to = value(values, WRITING[0])
    vocab_out = values["vocab_out"] or default_vocab_path(output, to)
    check_outputs({"-o/--output": (output, ()), "--vocab-out": (vocab_out, ())},
                  {"SOURCE": source, "--vocab": values["vocab"]})
    with user_errors(ctx), locked([output, vocab_out]):
        data = read(source, values)
        write_corpus(data, output, vocab_out, format=to)
    _note(values, f"{output}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens; "
                  f"vocabulary in {vocab_out}")


def _convert_to_shards(ctx, source, values) -> None:
    output = values["output"]
    for s in WRITING[:2]:
        if values[s.name] is not None:
            raise click.BadParameter("a shard folder holds its own vocabulary and npz shard files", param_hint=s.option)
    parent = os.path.dirname(os.path.abspath(output))
    if os.path.lexists(output) and not is_shard_folder(output):
        raise click.BadParameter(f"{output!r} exists and is not a shard folder: refusing to replace it",
                                 param_hint="-o/--output")
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise click.BadParameter(f"expected an existing folder this user may write in for {output!r}, found "
                                 f"{parent!r} missing or read-only", param_hint="-o/--output")
    if _same_file(output, source):
        raise click.BadParameter(f"{output!r} is the SOURCE input: refusing to write over it", param_hint="-o/--output")
    with user_errors(ctx), locked([output]):
        reading = reading_of(values)
        _, notes = split_corpus(source, output, values["shards"], format=reading.pop("input_format", "auto"),
                                **reading)
        for note in notes:
            _note(values, f"{source}: {note}")
        folder = open_shard_folder(output)
    _note(values, f"{output}: {folder.n_docs:,} documents, {folder.n_words:,} words, {folder.n_tokens:,} tokens in "
                  f"{folder.n_shards} shard files")


def default_vocab_path(output: str, out_format: str) -> str:
    """The vocabulary name the readers find on their own beside ``output``."""
    folder, name = os.path.split(output)
    if out_format == "uci" and name.startswith("docword."):
        stem = name[len("docword."):].removesuffix(".gz").removesuffix(".txt")
        return os.path.join(folder, f"vocab.{stem}.txt")
    stem = name.removesuffix(".gz")
    stem = os.path.splitext(stem)[0] if "." in stem else stem
    return os.path.join(folder, stem + ".vocab")
