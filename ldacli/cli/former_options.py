"""The options 0.2 spelled otherwise, still taken for one minor version (they go in 0.4).

The one convention of 0.3 (``--format`` for a command's output, ``--input-format`` for how a
corpus is read, ``perplexity --estimator``, ``--corpus`` and ``-n/--top-words`` alike on every
command) renamed options that scripts and cron jobs written for 0.2 use. Each former spelling
is a hidden option of its command (not in ``--help``) that prints one line naming the new
spelling on stderr, even with ``-q`` (the line is for whoever keeps the script, before the
spelling stops working), and then means what it meant. Given with its new spelling and
another value, it is refused (exit 2).

``infer --format`` and ``perplexity --format`` now choose the output: a value only an input
format can be (``uci``, ``ldac``, ...) is taken as 0.2's input format; a value both can be
(``infer --format npz``, ``perplexity --format text``) has its new meaning.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import click

from ldacli.corpora.formats.detect import FORMATS as INPUT_FORMATS

# The version in which the former spellings stop working.
UNTIL = "0.4"


@dataclass(frozen=True)
class Former:
    """0.2's ``spelling`` of the option whose setting is now ``name``; ``value``: a former flag
    that stood for one value of it (``--json`` for ``--format json``)."""

    spelling: str
    name: str
    value: str | None = None

    @property
    def param(self) -> str:
        return "former_" + self.spelling.lstrip("-").replace("-", "_")


# command -> its former spellings (from the one-convention commit, 62964b5).
FORMER: dict[str, tuple[Former, ...]] = {
    "train": (Former("--format", "input_format"),),
    "convert": (Former("--format", "input_format"),),
    "infer": (),  # --format: an input format's value (see ``FormerValue``)
    "perplexity": (Former("--json", "output_format", "json"), Former("--method", "estimator")),
    "diff": (Former("--json", "output_format", "json"),),
    "info": (Former("--json", "output_format", "json"),),
    "topics": (Former("--reference", "corpus"), Former("--reference-format", "input_format"),
               Former("--reference-vocab", "vocab"), Former("--top-n", "top_words")),
    "report": (Former("--corpus-format", "input_format"), Former("--corpus-vocab", "vocab")),
}
# Commands whose --format took the input's format in 0.2 and takes the output's now.
FORMAT_WAS_INPUT = ("infer", "perplexity")


@dataclass(frozen=True)
class FormerValue:
    """A value of ``--format`` that only 0.2's input format can be (``infer --format uci``)."""

    value: str


class OutputChoice(click.Choice):
    """``--format``'s choices, also taking an input format's value that is none of them, as
    0.2 did (a :class:`FormerValue`); ``--help`` and errors show the choices of now."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value in INPUT_FORMATS and value not in self.choices:
            return FormerValue(value)
        return super().convert(value, param, ctx)


def _spelling(command: click.Command, name: str) -> str:
    """The long option of the setting ``name`` on ``command``."""
    return next(p.opts[-1] for p in command.params if p.name == name and not getattr(p, "hidden", False))


def _fold(ctx: click.Context, values: dict, said: str, value, name: str) -> None:
    """Take ``value``, given as ``said`` in 0.2's spelling, as the setting ``name``: say so on
    one line, and refuse it when the new spelling was given another value."""
    option = _spelling(ctx.command, name)
    now = f"{option} {value}"
    click.echo(f"Warning: {said} is the 0.2 spelling: use {now} (the old one stops working in {UNTIL})", err=True)
    given = values.get(name)
    if given is not None and given != value:
        raise click.UsageError(f"{said} (0.2's spelling of {now}) and {option} {given} contradict each other: give "
                               f"{option} once", ctx=ctx)
    values[name] = ctx.params[name] = value


def taking_former_spellings(command: str):
    """Decorate the click command function ``command`` (before ``main.command()`` makes it) so
    that it takes its former spellings (:data:`FORMER`), folding them into the options of now
    before it runs."""
    formers = FORMER.get(command, ())

    def decorate(f):
        params = f.__click_params__
        if command in FORMAT_WAS_INPUT:
            for p in params:
                if p.name == "output_format":
                    p.type = OutputChoice(p.type.choices)
        for former in formers:
            new = next((p for p in params if p.name == former.name), None)
            kind = {"is_flag": True} if former.value is not None else \
                {"type": new.type if new is not None and not new.is_flag else click.STRING}
            params.append(click.Option([former.spelling, former.param], hidden=True, default=None,
                                       help=f"0.2's spelling of the option of {former.name}", **kind))

        @functools.wraps(f)
        def run(*args, **values):
            ctx = click.get_current_context()
            if isinstance(values.get("output_format"), FormerValue):
                value = values["output_format"].value
                values["output_format"] = ctx.params["output_format"] = None
                _fold(ctx, values, f"--format {value}", value, "input_format")
            for former in formers:
                value = values.pop(former.param, None)
                ctx.params.pop(former.param, None)
                if former.value is not None and value:
                    _fold(ctx, values, former.spelling, former.value, former.name)
                elif former.value is None and value is not None:
                    _fold(ctx, values, f"{former.spelling} {value}", value, former.name)
            return f(*args, **values)

        return run

    return decorate
