"""Which format a corpus file is in, from its content: the format names, and the sniffing that
``format="auto"`` relies on for a file (a zip archive, a Matrix Market banner, or the first
non-empty lines; :func:`~ldacli.corpora.formats.read.read_corpus` tells folders apart itself).
"""

from __future__ import annotations

import contextlib
import re

from ldacli.files.fileio import READ_ERRORS, Source, iter_lines
from ldacli.corpora.formats.matrix import MTX_MAGIC, ZIP_MAGIC

FORMATS = ("auto", "uci", "ldac", "text", "mtx", "npz", "shards")
FILE_FORMATS = ("uci", "ldac", "text", "mtx", "npz")  # detected by content; "shards" is a folder
# What a format is called in the note that says which one content sniffing picked.
FORMAT_NAMES = {"uci": "UCI bag-of-words", "ldac": "LDA-C", "text": "plain text, one document per line",
                "mtx": "Matrix Market (documents x words)", "npz": "a scipy sparse matrix (.npz)"}

_INT_LINE = re.compile(rb"\s*\d+\s*")
_SNIFF_LINES = 4
# A line that looks like LDA-C: a number, then word:count pairs, well formed or not (the LDA-C
# reader then says what is wrong with them, in LDA-C terms).
_LDAC_LIKE = re.compile(rb"\s*[+-]?\d+(?:\s+[^\s:]*:[^\s:]*)+\s*")
# A line that looks like a UCI triple "docID wordID count" (signs allowed: its reader says why not).
_TRIPLE_LIKE = re.compile(rb"\s*[+-]?\d+\s+[+-]?\d+\s+[+-]?\d+\s*")


def detect(source: Source) -> str:
    """'npz' (a zip archive), 'mtx' (a Matrix Market banner), else 'uci', 'ldac' or 'text' from
    the first non-empty lines of ``source``.

    A file that looks like LDA-C or UCI is read as such even when its lines are malformed, so
    that a typo is reported in that format's terms instead of changing what the file means:
    LDA-C when the first line is a number followed by ``id:count``-like pairs (or a lone ``N``
    followed, after lines of single integers, by such a line: empty documents first); UCI when
    the first three lines are single integers (the header), or when fewer are followed by a line
    of three integers (a header a line short).
    """
    with source.stream() as (stream, _):
        try:
            head = stream.read(len(MTX_MAGIC))
        except READ_ERRORS:
            head = b""  # the line reader below reports the damage, with its line
    if head.startswith(ZIP_MAGIC):
        return "npz"
    if head.lower().startswith(MTX_MAGIC):
        return "mtx"
    lines: list[bytes] = []
    with contextlib.closing(iter_lines(source)) as numbered:
        for _, line in numbered:
            if line.strip():
                lines.append(line)
                if len(lines) == _SNIFF_LINES:
                    break
    if not lines:
        return "text"
    if _LDAC_LIKE.fullmatch(lines[0]):
        return "ldac"
    if _INT_LINE.fullmatch(lines[0]):
        n_ints = next((i for i, line in enumerate(lines) if not _INT_LINE.fullmatch(line)), len(lines))
        after = lines[n_ints] if n_ints < len(lines) else None
        if after is None:
            return "uci" if n_ints >= 3 else "ldac"  # "0" lines: empty LDA-C documents
        if _LDAC_LIKE.fullmatch(after):
            return "ldac"
        if n_ints >= 3 or _TRIPLE_LIKE.fullmatch(after):
            return "uci"
    return "text"

