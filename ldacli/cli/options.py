"""The command line's options, made from the settings' declarations (:mod:`ldacli.settings`): the
command line's own settings (``-o``, ``--format``, ``-q``, ``-v``), a setting as a click option, the
values given, and the checks every command makes of its outputs before any work."""

from __future__ import annotations

import os

import click

from ldacli import settings
from ldacli.cli.exits import in_options
from ldacli.corpora.formats.read import READING
from ldacli.corpora.tokenizer import TOKENIZING
from ldacli.errors import SettingError
from ldacli.settings import Choice, Flag, Integer, Real, Setting, Size, Text, Texts

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
DIFF_OUT = output_setting("Where to write the comparison", ("any name",), stdout=True, required=False)
REPORT_OUT = output_setting("The HTML file to write", (".html", ".htm"))
CONVERT_OUT = output_setting("Bag-of-words file (or shard folder, with --shards) to write", ("any name",))
SUFFIXES = {"model": (".npz",), "checkpoint": (".npz",), "report": (".html", ".htm")}
THETA_FORMATS = ("tsv", "csv", "jsonl", "parquet", "npz", "mallet")

TEXT_OR_JSON = format_setting(("text", "json"))
TOPICS_FORMAT = format_setting(("text", "tsv", "json"), "Output format: text (one line per topic), tsv (topic, "
                                                        "rank, word, probability) or json.")
THETA_FORMAT = format_setting(THETA_FORMATS, "Output format: tsv, csv, jsonl or parquet (a doc_id column, then "
                                             "topic_0 ... topic_{K-1}; with --min-proportion or --top-topics: doc_id, "
                                             "rank, topic, proportion), npz (theta, doc_ids, params) or mallet "
                                             "(MALLET's --output-doc-topics layout, as export writes it).",
                              default_help="by -o's ending; tsv for -o -")


class SettingOption(click.Option):
    """A click option made from a :class:`~ldacli.settings.Setting` (``.setting``)."""

    def __init__(self, param_decls, *, setting: Setting, **kwargs):
        self.setting = setting
        super().__init__(param_decls, **kwargs)


CLICK_TYPES = {Integer: click.INT, Real: click.FLOAT, Text: click.STRING, Size: click.STRING}


def constrained(setting: Setting, given=lambda ctx, param, value: value):
    """A click callback that refuses a value outside ``setting``'s constraint as the command
    line parses it (a usage error in the command line's words, before the command runs), after
    ``given`` has made the value, and a required setting not given; the value passes on as
    click parsed it. Every option is checked so, whether or not its command checks it again
    (``topics -n -3`` was taken)."""

    def check(ctx, param, value):
        value = given(ctx, param, value)
        if value is None and setting.required and not ctx.resilient_parsing:  # (its click default is None)
            raise click.MissingParameter(ctx=ctx, param=param)
        if value is not None and not isinstance(setting.type, Choice):  # click's Choice is the check
            try:
                setting.check(value)
            except SettingError as exc:
                raise click.UsageError(in_options(ctx, exc), ctx=ctx) from None
        return value

    return check


def option(setting: Setting):
    """The click option of ``setting``: its spellings, a type that parses the value, its
    constraint checked as it is parsed (:func:`constrained`; the library checks it again for
    Python's callers), no default of click's own (None means not given, so a resumed run can
    tell), and the help with the declared default."""
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
        elif isinstance(setting.type, Size):
            kind["metavar"] = "SIZE"
        if isinstance(setting.type, Texts):  # given several times: a tuple, or None when not given
            kind.update(multiple=True, callback=constrained(setting, lambda ctx, param, given: given or None))
    kind.setdefault("callback", constrained(setting))
    # None: not given (the library applies the default). Click 8.2 and later take an explicit
    # None as a value given, also for a required option: constrained() refuses it missing.
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


def same_file(a: str, b: str) -> bool:
    if a == "-" or b == "-":
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs: dict[str, tuple[str | None, tuple[str, ...]]],
                  inputs: dict[str, str | list[str] | None]) -> None:
    """Before any work, the same for every command: each output (option -> (path, the endings
    it may have; empty: any)) names a file in an existing folder this user may write in, with a
    right ending, is not a folder, and is none of the inputs (option -> path, or the list of
    files it stands for: a folder's, a pattern's) nor another output. ``-`` is stdout. A usage
    error (exit 2) names the option."""
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
            for one in [source] if isinstance(source, str) else source or []:
                if one and same_file(path, one):
                    which = f"the {other} input" if isinstance(source, str) else f"one of the {other} inputs ({one!r})"
                    raise click.BadParameter(f"{path!r} is {which}: refusing to write over it", param_hint=opt)
        endings = outputs[opt][1]
        if endings and not path.lower().endswith(endings):
            raise click.BadParameter(f"expected a file name ending in {' or '.join(endings)}, found {path!r}",
                                     param_hint=opt)
    names = list(given)
    for i, opt in enumerate(names):
        for other in names[i + 1:]:
            if same_file(given[opt], given[other]):
                raise click.BadParameter(f"{opt} and {other} must be different files, found {given[opt]!r} twice",
                                         param_hint=opt)


def reading_of(values: dict) -> dict:
    """The reading settings of a command's ``values``: each with its default, but the
    tokenizer's, which stay None when not given (given for input that is not text, they are
    refused)."""
    return {s.name: values[s.name] if s in TOKENIZING else value(values, s) for s in READING if s.name in values}
