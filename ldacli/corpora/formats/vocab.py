"""Vocabulary files: one word per line, line ``i`` (1-based) is word ``i - 1``.

Reading strips trailing whitespace (``\r`` included); empty lines at the end are ignored,
elsewhere they are errors, as are repeated words and invalid UTF-8. A corpus's vocabulary is
found beside it by name (:func:`vocab_candidates`). Writing refuses words that would not read
back the same.
"""

from __future__ import annotations

import os
import re
from typing import IO

from ldacli.errors import InputError, LdacliError
from ldacli.files.fileio import Source, iter_lines
from ldacli.corpora.formats.parsing import check_word_lengths, decode_error


def read_vocab(path: str | os.PathLike[str], *, stdin: IO | None = None) -> list[str]:
    """Read a vocabulary file: one word per line, line ``i`` (1-based) is word ``i - 1``.

    Trailing whitespace (including ``\\r``) is stripped. Empty lines at the end are ignored;
    elsewhere they are errors, as are repeated words and invalid UTF-8.
    """
    source = Source.open(path, stdin)
    words: list[str] = []
    first_line: dict[str, int] = {}
    blank: int | None = None
    for lineno, raw in iter_lines(source):
        try:
            word = raw.decode("utf-8").rstrip()
        except UnicodeDecodeError as exc:
            raise decode_error(source.name, lineno, raw, exc, auto=False) from None
        if not word:
            if blank is None:
                blank = lineno
            continue
        if blank is not None:
            raise InputError(source.name, blank, "expected a word (one per line), found an empty line")
        check_word_lengths(source.name, lineno, (word,), "is it a vocabulary file, one word per line?")
        if word in first_line:
            raise InputError(source.name, lineno, f"expected each word once, found {word!r} again "
                                                  f"(first on line {first_line[word]})")
        first_line[word] = lineno
        words.append(word)
    if not words:
        raise InputError(source.name, None, "empty vocabulary: expected at least one word (one per line)")
    return words


def vocab_candidates(path: str) -> list[str]:
    """The vocabulary files looked for beside the corpus file ``path``, in order.

    ``docword.NAME.txt[.gz]`` -> ``vocab.NAME.txt[.gz]``; then for any ``X.ext[.gz]``:
    ``X.tokens``, ``X.vocab`` and ``vocab.txt`` in the same folder.
    """
    folder, name = os.path.split(path)
    base = name[:-3] if name.endswith(".gz") else name
    names: list[str] = []
    uci = re.fullmatch(r"docword\.(.+)\.txt", base)
    if uci:
        names += [f"vocab.{uci[1]}.txt", f"vocab.{uci[1]}.txt.gz"]
    stem = os.path.splitext(base)[0] if "." in base.lstrip(".") else base
    names += [stem + ".tokens", stem + ".vocab", "vocab.txt"]
    candidates = []
    for candidate in dict.fromkeys(os.path.join(folder, n) for n in names):
        if os.path.abspath(candidate) != os.path.abspath(path):
            candidates.append(candidate)
    return candidates


def find_vocab(path: str) -> str | None:
    """The first of :func:`vocab_candidates` that is a file, or None."""
    for candidate in vocab_candidates(path):
        if os.path.isfile(candidate):
            return candidate
    return None


def check_writable_vocab(vocab: list[str]) -> None:
    """Refuse words a vocabulary file cannot hold: each on its own line, read back the same."""
    seen: set[str] = set()
    for i, word in enumerate(vocab):
        if not word or word != word.rstrip() or "\n" in word or "\r" in word or word.startswith("\ufeff"):
            raise LdacliError(f"vocabulary: expected words without line breaks, surrounding "
                              f"whitespace or a byte-order mark, found {word!r} (word {i})")
        if word in seen:
            raise LdacliError(f"vocabulary: expected distinct words, found {word!r} more than once")
        seen.add(word)


def vocab_text(vocab: list[str]) -> bytes:
    """The vocabulary file's bytes: one word per line, UTF-8."""
    return "".join(w + "\n" for w in vocab).encode("utf-8")
