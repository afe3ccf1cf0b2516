"""What the commands print: lines for people (escaped), the log on stderr, and the stream results
are written to (stdout or an atomically written file)."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

import click

from ldacli.escaping import PrintableWriter, is_terminal, printable


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


def setup_logging(values: dict) -> bool:
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


def tell(values: dict, message: str) -> None:
    if not values.get("quiet"):
        echo(message, err=True)


@contextmanager
def results_to(path: str, binary: bool = False):
    """A stream for results: stdout for ``-`` (text on a terminal escaped,
    :class:`~ldacli.escaping.PrintableWriter`), else the file written atomically."""
    from ldacli.files.fileio import atomic_write

    if path == "-":
        if binary:
            yield sys.stdout.buffer
        else:
            yield PrintableWriter(sys.stdout) if is_terminal(sys.stdout) else sys.stdout
        return
    with atomic_write(path, "wb" if binary else "w", what="output") as f:
        yield f


def emit(values: dict, lines) -> None:
    """Write result lines to ``-o`` (stdout by default)."""
    with results_to(values.get("output") or "-") as out:
        for line in lines:
            out.write(line + "\n")
