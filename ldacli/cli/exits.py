"""Errors as one line and an exit code, the same for every command: click's group that turns a usage
error, a library error, a signal or a closed pipe into one line on stderr and its code, and the
hint that continues a stopped run."""

from __future__ import annotations

import errno
import os
import re
import signal
import sys
import threading
from contextlib import contextmanager

import click

from ldacli import settings
from ldacli.cli.text import echo
from ldacli.errors import LdacliError, LockedError, RunStopped, SettingError, TrainingInterrupted
from ldacli.escaping import shell_word
from ldacli.files.locking import EXIT_LOCKED
from ldacli.memory import out_of_memory
from ldacli.settings import Flag

# Exit code when stdout's reader closed it (128 + SIGPIPE, as a shell reports a tool killed by it).
EXIT_PIPE = 141
# `diff --max-drift`, `history --max-drift`: a paired topic moved further than asked.
EXIT_DRIFT = 3
# `select-k`: it ran and wrote everything, but the data do not determine K.
EXIT_UNDETERMINED = 3


# --- errors as one line -------------------------------------------------------------------------------

class HelpOption:
    """-h/--help with False as its default, which the command-line reference shows (click's own
    is a sentinel, shown there as Sentinel.UNSET)."""

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option


class Command(HelpOption, click.Command):
    """An ldacli command (:class:`HelpOption`)."""


class Group(HelpOption, click.Group):
    """ldacli's commands: a usage error is one line on stderr with exit code 2 (not click's usage
    banner), every other error one line with its own code."""

    command_class = Command

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


@contextmanager
def user_errors(ctx: click.Context):
    """Report users' mistakes as one line on stderr: exit code 1 for data and runtime errors, 2
    for a setting the library refused (naming the option), 128 + the signal's number when a
    signal stopped the command (130 for SIGINT, 143 for SIGTERM), 75 when another run holds the
    lock on an output."""
    try:
        yield
    except TrainingInterrupted as exc:  # what the user asked for: not an error
        echo(str(exc) + continue_with(ctx, exc), err=True)
        sys.exit(128 + exc.signum)
    except RunStopped as exc:
        raise click.ClickException(str(exc) + continue_with(ctx, exc)) from None
    except SettingError as exc:
        raise click.UsageError(in_options(ctx, exc), ctx=ctx) from None
    except LockedError as exc:  # and when the command can wait, how
        wait = option_spelling(ctx, "wait", long=True)
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
    subject = option_spelling(ctx, exc.name)
    if subject is not None and message.startswith(exc.name + " "):
        message, named = subject + message[len(exc.name):], True
    for other in exc.mentions:
        spelled = option_spelling(ctx, other, long=True)
        if spelled is not None:
            message, n = re.subn(rf"(?<![\w-]){re.escape(other)}(?![\w-])", spelled, message)
            named = named or (other == exc.name and n > 0)
    return message if named or subject is None else f"{subject}: {message}"


def option_spelling(ctx: click.Context, name: str, long: bool = False) -> str | None:
    """How the command line spells the setting ``name`` (``-k/--topics``; ``long``: its long
    option alone, ``--topics``; an argument: ``TOPIC``), or None when the command has none."""
    for param in ctx.command.params:
        if param.name == name and not getattr(param, "hidden", False):
            if isinstance(param, click.Argument):
                return param.human_readable_name
            return param.opts[-1] if long else "/".join(param.opts + param.secondary_opts)
    return None


def continue_with(ctx: click.Context, exc: RunStopped) -> str:
    """The command that continues a stopped training run, exactly: the corpus and the output,
    ``--resume`` and the free options given (the checkpoint holds the rest)."""
    if ctx.command.name == "select-k":
        return "; continue with the same command: " + command_line(ctx)
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


def command_line(ctx: click.Context) -> str:
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
