"""Seed words: a file of named topics and the words each should be about (``train --seed-words``).

The file has one seeded topic a line, its name, a colon and its seed words separated by blanks::

    # lines starting with # and blank lines are skipped
    sports: game team season coach player
    space: nasa orbit launch shuttle moon

Names follow :func:`ldacli.model.check_name` and are unique; a word may seed one topic only.
The seeded topics become topics 0, 1, ... of the model, in the file's order, carrying their
names; their topic-word prior favours their seed words (:func:`seed_ids` matches the words to the
corpus's vocabulary; words it lacks are reported, not fatal). :func:`seeded_prior` makes a run's
seeded topics and their prior, from a file or kept from a seeded warm start; after the run,
:func:`warn_lost_seeds` names the seeded topics that lost their seeds
(:func:`ldacli.topic_names.seed_ranks`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from ldacli.corpora.corpus import Corpus
from ldacli.errors import InputError, SettingError
from ldacli.files.fileio import Source, iter_lines
from ldacli.settings import Text
from ldacli.model import Model, check_name
from ldacli.topic_names import SEEDS_KEPT_WITHIN, lost_seeds_text, seed_ranks
from ldacli.topic_word_prior import TopicWordPrior

log = logging.getLogger("ldacli")
# The default strength of a seed word's prior in its topic: this share of the word's count.
DEFAULT_SEED_STRENGTH = 0.25


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


def seeded_prior(values: Mapping, corpus: Corpus, method: str, kept: dict | None = None,
                 descent: list[int | None] | None = None, notes: bool = True
                 ) -> tuple[dict | None, TopicWordPrior | None]:
    """The seeded topics of a fresh run of ``method`` on ``corpus`` (its settings ``values``),
    from ``values["seed_words"]`` or kept from a seeded warm start (``kept``, the parent's
    ``params["seeded"]``, mapped through the topics' ``descent``), as the model records them
    (``params["seeded"]``, whose ``strength`` is the run's ``seed_strength``: the one given or
    declared, or the warm start's when it keeps its seeds), and the prior the method samples
    under (:class:`~ldacli.topic_word_prior.TopicWordPrior`: beta plus that strength times each
    seed word's count in its topic). (None, None): no seeds; a method without a seeded prior
    keeps a seeded warm start's names only (no prior)."""
    K, spec, strength = values["n_topics"], values.get("seed_words"), values.get("seed_strength")
    if spec is not None:
        topics = [(k, t.name, list(t.words)) for k, t in enumerate(seeded_topics(spec))]
        source = os.path.abspath(spec) if isinstance(spec, str) else "seed_words given in Python"
        if len(topics) > K:
            raise SettingError("seed_words", f"seed_words names {len(topics)} topics, more than the {K} of the run")
    elif kept:
        old = kept
        topics = [(descent.index(t["topic"]), t["name"], list(t["words"])) for t in old["topics"]
                  if t["topic"] in descent]
        source = f"kept from the warm start {values['warm_start']}"
        if "seed_words" not in values:  # a method without a seeded prior keeps the names only
            log.warning("%s: method %s has no seeded prior: the warm start's seeded topics keep their names only",
                        values["warm_start"], method)
            return {"source": source, "strength": None, "topics": [
                {"topic": k, "name": name, "words": words, "unknown": []} for k, name, words in topics]}, None
        if strength is None:  # the warm start's, or the declared default where it kept names only
            strength = old["strength"] if old.get("strength") is not None else DEFAULT_SEED_STRENGTH
    else:
        return None, None
    ids, unknown = seed_ids([SeededTopic(name, tuple(words)) for _, name, words in topics], corpus.vocab)
    frequency = corpus.word_frequencies()
    cells = [(w, k) for (k, _, _), i in zip(topics, ids) for w in i]
    prior = TopicWordPrior.of_cells(
        corpus.n_words, K, [w for w, _ in cells], [k for _, k in cells],
        [strength * max(1, int(frequency[w])) for w, _ in cells], source="seed_words")
    total = sum(len(w) for _, _, w in topics)
    found = sum(len(i) for i in ids)
    if notes and unknown:
        log.warning("seed words: %d of %d found in the vocabulary of %s; not found: %s", found, total, corpus.source,
                    "; ".join(f"{name}: {' '.join(words)}" for name, words in unknown.items()))
    elif notes:
        log.info("seed words: all %d found in the vocabulary", total)
    for (k, name, _), i in zip(topics, ids):
        if not i and notes:
            log.warning("seed words: none of topic %d %s's words is in the vocabulary: it is named, not seeded",
                        k, name)
    return {"source": source, "strength": strength, "found": found, "given": total, "topics": [
        {"topic": k, "name": name, "words": [w for w in words if w not in unknown.get(name, ())],
         "unknown": unknown.get(name, [])} for k, name, words in topics]}, prior


def warn_lost_seeds(model: Model) -> list[dict]:
    """Log a warning for each seeded topic of a trained ``model`` that lost its seeds (none
    among its :data:`~ldacli.topic_names.SEEDS_KEPT_WITHIN` words of most tokens): its name
    then says what it is not about. Returns those topics (:func:`~ldacli.topic_names.seed_ranks`)."""
    lost = [t for t in seed_ranks(model) if t["lost"]]
    top = model.top_words(5) if lost else []
    for t in lost:
        log.warning("seed words: topic %d %s: %s (none among its %d words of most tokens): its name is not what "
                    "it is about (%s); weak seeds are rare words, words of another theme, too few, or a weak "
                    "--seed-strength (docs/guide/seeded-topics.md)", t["topic"], t["name"], lost_seeds_text(t),
                    SEEDS_KEPT_WITHIN, " ".join(w for w, _ in top[t["topic"]]))
    return lost
