"""Text from a corpus or a model, made safe for the channel it leaves by: a terminal, a message,
JSON. The one place where ldacli escapes; everything that prints a word, a document id, a topic
name, a parameter or a path read from a file calls :func:`printable` or :func:`json_text`.

Escaped (:data:`UNSAFE`): the C0 controls (ESC sequences retitle windows, clear screens and
make links; ``\\r`` and backspace overwrite what was printed), DEL, the C1 controls (a terminal
may take U+009B for ESC [), Unicode's bidirectional controls (U+202E and its kin reorder what a
line shows), the line and paragraph separators, and lone surrogates (a file name that is not
UTF-8, which no UTF-8 stream can encode). They become ``\\n``, ``\\r``, ``\\t``, ``\\x1b`` or
``\\u202e``, as Python writes them. Other format characters (zero-width joiners, soft hyphens)
are left alone: words of Persian, Hindi and emoji need them, and they move no cursor.

Where ldacli escapes, and why:

* text for people (``topics``, ``info``, ``diff``, ``perplexity``, notes, errors, the log):
  always, whether to a terminal, a pipe or a file. A pipe often ends at a person (``| less -R``,
  cron's mail read in a terminal, a log ``cat`` later), and text output is not a data format:
  ``--format tsv`` or ``json`` carry the data exactly.
* JSON: always, losslessly. :func:`json_text` writes the characters above as ``\\uXXXX``
  escapes, which every JSON reader turns back into the same text, so a pipe into ``jq`` or
  pandas gets the data exactly and a terminal gets nothing it acts on.
* tables (TSV, CSV, MALLET's layouts) on stdout: escaped when stdout is a terminal (a person
  reads it; tabs and line ends kept); exact when it is a pipe or a file (``export -o - |
  python -c 'pandas.read_csv(...)'`` must read back every id and word), where the fields are
  quoted instead (:mod:`ldacli.files.tables`). Binary formats (Parquet) are refused on a terminal.
"""

from __future__ import annotations

import json
import os
import re
import shlex

# Bidi_Control characters (Unicode's property): the marks, embeddings, overrides and isolates.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# What json.dumps leaves raw: DEL, C1, the bidi controls, the line and paragraph separators,
# lone surrogates (it escapes the C0 controls itself).
JSON_RAW = re.compile(f"[\x7f-\x9f{BIDI}\u2028\u2029\ud800-\udfff]")
UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI}\u2028\u2029\ud800-\udfff]")
NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    c = match.group()
    return NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def printable(text: str, keep: str = "") -> str:
    """``text`` with every character of :data:`UNSAFE` but those in ``keep`` (say ``"\\t\\n"``
    for a table's own separators) written as a Python escape: ``\\x1b``, ``\\r``, ``\\u202e``."""
    if not keep:
        return UNSAFE.sub(_escape, text)
    return UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)


def shell_word(arg: str) -> str:
    """``arg`` quoted for a POSIX shell, as a command ldacli prints for the user to run:
    ``shlex.quote``'s form, or bash's ``$'...'`` when ``arg`` holds a character of
    :data:`UNSAFE`, each such character as the escapes of its bytes (``\\x1b``,
    ``\\xe2\\x80\\xae``; a file name's undecodable byte as itself), so that the printed command,
    run as printed, gets ``arg`` back and the terminal gets nothing it acts on."""
    if not UNSAFE.search(arg):
        return shlex.quote(arg)
    out = []
    for c in arg:
        if c in "\\'":
            out.append("\\" + c)
        elif UNSAFE.match(c):
            out.append(NAMED.get(c) or "".join(f"\\x{b:02x}" for b in _bytes_of(c)))
        else:
            out.append(c)
    return "$'" + "".join(out) + "'"


def _bytes_of(c: str) -> bytes:
    """What the shell should get for ``c``: its bytes as a file name (a lone surrogate that
    stands for an undecodable byte is that byte; any other, as UTF-8 would carry it)."""
    try:
        return os.fsencode(c)
    except UnicodeEncodeError:
        return c.encode("utf-8", "surrogatepass")


def json_text(obj, **options) -> str:
    """``json.dumps(obj, **options)`` with the characters it leaves raw (:data:`JSON_RAW`) as
    ``\\uXXXX`` escapes: the same JSON value, nothing a terminal acts on, valid UTF-8."""
    return JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, **options))


class PrintableWriter:
    """A text stream over ``stream`` that writes what it is given through :func:`printable`
    (``keep`` kept): a table shown on a terminal."""

    def __init__(self, stream, keep: str = "\t\n"):
        self.stream, self.keep = stream, keep

    def write(self, text: str) -> int:
        return self.stream.write(printable(text, self.keep))

    def flush(self) -> None:
        self.stream.flush()


def is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (False for anything without ``isatty``)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False
