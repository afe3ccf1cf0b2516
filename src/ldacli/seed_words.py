"""Seed words: a file of named topics and the words each should be about (``train --seed-words``).

The file has one seeded topic a line, its name, a colon and its seed words separated by blanks::

    # lines starting with # and blank lines are skipped
    sports: game team season coach player
    space: nasa orbit launch shuttle moon

Names follow :func:`ldacli.model.check_name` and are unique; a word may seed one topic only.
The seeded topics become topics 0, 1, ... of the model, in the file's order, carrying their
names; their topic-word prior favours their seed words (:func:`seed_ids` matches the words to the
corpus's vocabulary; words it lacks are reported, not fatal).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ldacli.errors import InputError, SettingError
from ldacli.fileio import Source, iter_lines
from ldacli.settings import Text
from ldacli.model import check_name


@dataclass(frozen=True)
class SeedWords(Text):
    """A seed-words file's path, or (from Python) a mapping of topic names to their seed words
    (``{"sports": ["game", "team"]}``)."""

    path: bool = True

    def check(self, name: str, value):
        if isinstance(value, Mapping):
            if not all(isinstance(v, str) or (isinstance(v, (list, tuple)) and all(isinstance(w, str) for w in v))
                       for v in value.values()):
                raise SettingError(name, f"{name} must be {self.describe()} (each a list of words, or one string "
                                         f"of them), found {value!r:.80}")
            return {str(k): [str(w) for w in v] if not isinstance(v, str) else v.split() for k, v in value.items()}
        return super().check(name, value)

    def describe(self) -> str:
        return "a path, or a mapping of topic names to seed words"


@dataclass(frozen=True)
class SeededTopic:
    """A seeded topic: its ``name`` and its seed ``words`` (in the file's order)."""

    name: str
    words: tuple[str, ...]


def seeded_topics(spec) -> list[SeededTopic]:
    """The seeded topics of ``spec``: a seed-words file's path (:func:`read_seed_words`) or a
    mapping of names to words, checked alike (errors name the entry)."""
    if isinstance(spec, Mapping):
        for name in spec:
            if ":" in name:
                raise SettingError("seed_words", f"seed_words must name topics without ':', found {name!r}")
        return read_seed_words("seed_words", lines=[f"{name}: {words if isinstance(words, str) else ' '.join(words)}"
                                                    for name, words in spec.items()])
    return read_seed_words(os.fspath(spec))


def read_seed_words(path: str, lines: list[str] | None = None) -> list[SeededTopic]:
    """The seeded topics of the file at ``path`` (``.gz`` read transparently), or of ``lines``
    (``path`` then only names them); an :class:`~ldacli.errors.InputError` names the line of
    anything else."""
    topics: list[SeededTopic] = []
    names: dict[str, int] = {}
    owner: dict[str, tuple[str, int]] = {}
    numbered = enumerate((x.encode("utf-8") for x in lines), start=1) if lines is not None \
        else iter_lines(Source.open(path))
    for lineno, raw in numbered:
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise InputError(path, lineno, "expected UTF-8 text, found other bytes") from None
        if not line or line.startswith("#"):
            continue
        name, colon, rest = line.partition(":")
        words = rest.split()
        if not colon or not words:
            raise InputError(path, lineno, f"expected 'name: word word ...', found {line[:60]!r}")
        try:
            name = check_name(name, "topic name")
        except SettingError as exc:
            raise InputError(path, lineno, str(exc)) from None
        if name is None:
            raise InputError(path, lineno, f"expected a topic name before ':', found {line[:60]!r}")
        if name in names:
            raise InputError(path, lineno, f"expected each topic once, found {name!r} again (line {names[name]})")
        names[name] = lineno
        kept = []
        for w in words:
            if w in owner and owner[w][0] != name:
                raise InputError(path, lineno, f"expected a word to seed one topic, found {w!r} seeding "
                                               f"{owner[w][0]!r} (line {owner[w][1]}) too")
            if w not in owner:
                owner[w] = (name, lineno)
                kept.append(w)
        topics.append(SeededTopic(name, tuple(kept)))
    if not topics:
        raise InputError(path, None, "expected at least one line 'name: word word ...', found none")
    return topics


def seed_ids(topics: list[SeededTopic], vocab: list[str]) -> tuple[list[list[int]], dict[str, list[str]]]:
    """Each seeded topic's seed words as ids of ``vocab`` (words it lacks left out), and the
    words left out per topic name."""
    index = {w: i for i, w in enumerate(vocab)}
    ids, unknown = [], {}
    for t in topics:
        ids.append([index[w] for w in t.words if w in index])
        missing = [w for w in t.words if w not in index]
        if missing:
            unknown[t.name] = missing
    return ids, unknown
