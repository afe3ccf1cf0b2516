"""What the line-oriented corpus readers share: parsing unsigned numbers, and describing what
they found in an error message or a note.

Also the limits they check against: counts and sizes fit in 32-bit integers, and the memory a
declared number of documents costs (:data:`BYTES_PER_DOC`) is checked before it is allocated.
"""

from __future__ import annotations

import numpy as np

from ldacli.errors import InputError

INT32_MAX = int(np.iinfo(np.int32).max)
# Memory a document read whole costs before it holds any word, counted where a header declares
# it: peak RSS over a process's start per empty document a UCI or Matrix Market header declares,
# 3 / 10 / 30 million of them: convert 22 / 20 / 20 bytes; train, which then keeps it beside a
# model, 106 / 105 / 104 (issue 49: counted at 100, train took more). A stream (infer,
# perplexity) holds a block of documents, whatever their number.
BYTES_PER_DOC = 120
# The longest word a vocabulary may hold: a model stores its words at the width of the longest
# (4 bytes a character), so one 100,000-letter "word" made a 2 GB model of a 370 KB text.
# The longest words of natural languages are under 100 characters; long web addresses and
# identifiers fit in 200.
MAX_WORD_LENGTH = 200


def check_word_lengths(name: str, line: int, words, hint: str = "a line without spaces or punctuation? Remove it, "
                                                                  "or choose a --token-pattern that cuts it") -> None:
    """Refuse a word of ``words`` (from line ``line`` of ``name``) longer than
    :data:`MAX_WORD_LENGTH` characters, quoting its start and saying ``hint``."""
    if words and max(map(len, words)) > MAX_WORD_LENGTH:
        word = next(w for w in words if len(w) > MAX_WORD_LENGTH)
        raise InputError(name, line, f"expected words of at most {MAX_WORD_LENGTH} characters, found one of "
                                     f"{len(word):,} ({word[:20]!r}...): {hint}")


def quote(token: bytes, limit: int = 40) -> str:
    """A token as quoted, printable text for an error message (long ones cut)."""
    text = token.decode("utf-8", "backslashreplace")
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)


def describe_line(line: bytes) -> str:
    """How to describe ``line`` after 'found' in a message."""
    return "an empty line" if not line.strip() else quote(line.strip())


def parse_uint(token: bytes) -> int | None:
    """The value of an unsigned ASCII decimal ``token``; ``None`` if it is not one.

    Values too long to matter come back as a huge number, so range checks reject them
    (and Python's limit on converting very long digit strings is never hit).
    """
    if not token.isdigit():
        return None
    if len(token) > 18:
        return 10**18
    return int(token)


def decode_error(name: str, lineno: int, raw: bytes, exc: UnicodeDecodeError, auto: bool) -> InputError:
    """The error for the undecodable ``raw`` line ``lineno`` of ``name``; ``auto``: the format was
    being guessed, so the message says which formats the file is none of."""
    byte = raw[exc.start]
    where = f"invalid byte 0x{byte:02x} at column {exc.start + 1}"
    if auto:
        return InputError(name, lineno, f"neither UCI, LDA-C nor UTF-8 text: expected a UCI, LDA-C or "
                                        f"UTF-8 text corpus, found {where}")
    return InputError(name, lineno, f"expected UTF-8 text, found {where}")


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1: "1 token", "1,204 tokens"."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"

