r"""The tokenizer: plain text to the words a text corpus counts.

Each document (a line of a text file, or a whole ``.txt`` file of a folder) must be UTF-8.

1. The text is lowercased with Python's :meth:`str.lower`.
2. Tokens are the maximal runs of Unicode letters: the matches of the regular expression
   ``[^\W\d_]+`` (Python :mod:`re`, Unicode mode), i.e. word characters other than digits and
   the underscore. Everything else separates tokens: digits, ``_``, punctuation, whitespace,
   apostrophes, hyphens. ``"Don't re-use X11, the_end"`` splits into ``don``, ``t``, ``re``,
   ``use``, ``x``, ``the``, ``end``.
3. Tokens shorter than 3 characters (code points, after lowercasing) are dropped: above,
   ``don``, ``use``, ``the``, ``end`` remain.
4. Stop words, when given, are removed (``don`` and ``the`` above, with the English list).

No Unicode normalisation is applied: a letter followed by a combining accent (``e`` + U+0301)
ends the token there, while the precomposed ``é`` is part of it. Lines end at ``\n``; a
``\r`` before it is simply a separator.
"""

from __future__ import annotations

import re

TOKEN_PATTERN = re.compile(r"[^\W\d_]+")
MIN_TOKEN_LENGTH = 3


def tokenize(text: str, stop_words: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The tokens of ``text`` in order: lowercased letter runs of 3+ characters, minus stop words."""
    return [
        tok
        for tok in TOKEN_PATTERN.findall(text.lower())
        if len(tok) >= MIN_TOKEN_LENGTH and tok not in stop_words
    ]
