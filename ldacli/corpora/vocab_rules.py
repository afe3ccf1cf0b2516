"""Which words a corpus keeps: the vocabulary rules, the same for every input format.

The rules, applied in this order:

1. ``stop_words``: the words of the lists named go; several lists add up (their union).
   ``"english"`` is the list shipped in ``ldacli/data/stopwords_en.txt``; any other name is the
   path of a UTF-8 file of one word per line (blank lines and lines starting with ``#`` are
   ignored), so ``["english", "mine.txt"]`` extends the English list and ``"mine.txt"`` alone
   replaces it. ``None`` or ``"none"`` (alone) is no list. ``"auto"`` (the default, alone) is
   the English list for text that builds its own vocabulary, and no list for bag-of-words input
   (UCI, LDA-C, Matrix Market, scipy ``.npz``, shard folders: their vocabulary was chosen when
   they were made) nor for any corpus read against a fixed vocabulary. Words match by string,
   exactly as the vocabulary spells them; for text, whatever the case (the lists are
   lowercased and so is each word before it is looked up).
2. ``remove_top``: the N words with the most tokens go (tomotopy's ``rm_top``); ties go to the
   word earlier in the vocabulary's order.
3. ``min_df``, ``max_df``: words in fewer than ``min_df`` documents go (``min_df=1``, the
   default, removes nothing; above 1 it also removes words that never occur), then words in
   more than ``max_df * D`` of the D documents.
4. ``max_vocab``: of the words left, only the ``max_vocab`` with the most tokens stay; ties go
   to the word earlier in the vocabulary's order.

Each rule judges the words the previous ones left, by their counts in the corpus as read
(removing a word changes no other word's counts, and documents are never removed). The
vocabulary's order is the file's for bag-of-words input and alphabetical (by code point) for
text; the words kept stay in that order.

With a fixed vocabulary (the model's, when ``infer`` or ``perplexity`` read new documents) the
columns are not the corpus's to change: the rules remove the words' tokens from the documents
and keep every column.

For every rule that removed anything there is a note, e.g. ``stop words (english): removed 312
words, 1,204,331 tokens`` (with a fixed vocabulary, the words counted are those that lost
tokens).

What the rules removed from a corpus that builds its vocabulary (the words, and every word of
the stop lists) is :attr:`ldacli.Corpus.removed_words`; a model keeps it, so that ``infer`` and
``perplexity`` count the tokens of those words apart from the tokens of words never seen.
"""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.counts import drop_columns, keep_columns, word_documents, word_totals
from ldacli.errors import SettingError
from ldacli.files.fileio import Source, iter_lines
from ldacli.corpora.formats.parsing import decode_error, plural
from ldacli.settings import FIXED, Integer, Real, Setting, Texts

AUTO = "auto"
ENGLISH = "english"
NONE = "none"
STOPWORDS_RESOURCE = "stopwords_en.txt"

# The rules, in the order they apply. At its default each removes nothing (stop_words "auto"
# removes the English stop words from text that builds its own vocabulary, and nothing else).
STOP_WORDS = Setting("stop_words", Texts((AUTO, ENGLISH, NONE)), AUTO,
                     "Words to remove: 'english' (the shipped list), a file of words (one per line), or 'none'; "
                     "given several times, the lists add up (--stop-words english --stop-words mine.txt extends "
                     "the English list). auto: english for text that builds its vocabulary, none otherwise.",
                     FIXED)
REMOVE_TOP = Setting("remove_top", Integer(0), 0, "Remove the N most frequent words (by tokens).", FIXED)
MIN_DF = Setting("min_df", Integer(1), 1, "Remove words in fewer documents than this.", FIXED)
MAX_DF = Setting("max_df", Real(0, 1, min_open=True), 1.0, "Remove words in more than this fraction of documents.",
                 FIXED)
MAX_VOCAB = Setting("max_vocab", Integer(1), None, "Keep only this many most frequent words.", FIXED)
RULES = (STOP_WORDS, REMOVE_TOP, MIN_DF, MAX_DF, MAX_VOCAB)


def _parse_word_list(lines: Iterable[tuple[int, bytes]], name: str) -> frozenset[str]:
    words = set()
    for lineno, raw in lines:
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise decode_error(name, lineno, raw, exc, auto=False) from None
        if line and not line.startswith("#"):
            words.add(line)
    return frozenset(words)


def load_stop_words(spec: str | os.PathLike[str] | None) -> frozenset[str]:
    """The words of the one stop-word list ``spec`` names, as written in it: ``"english"``,
    ``None``/``"none"`` (no words), or a file's path. ``"auto"`` is resolved by
    :meth:`VocabRules.stop_list`, not here."""
    if spec is None or (isinstance(spec, str) and spec.lower() == NONE):
        return frozenset()
    if isinstance(spec, str) and spec.lower() == ENGLISH:
        resource = importlib.resources.files("ldacli").joinpath("data", STOPWORDS_RESOURCE)
        data = resource.read_bytes()
        return _parse_word_list(enumerate(data.split(b"\n"), start=1), STOPWORDS_RESOURCE)
    source = Source.open(spec)
    return _parse_word_list(iter_lines(source), source.name)


@dataclass(frozen=True)
class VocabRules:
    """The vocabulary rules (see the module docstring), checked when made; the stop-word files
    are read then too, so that a missing one is reported before any corpus is read.
    ``stop_words`` becomes a tuple of the lists' names (``("auto",)``, ``("none",)``,
    ``("english", "mine.txt")``)."""

    stop_words: str | os.PathLike[str] | tuple | list | None = STOP_WORDS.default
    remove_top: int = REMOVE_TOP.default
    min_df: int = MIN_DF.default
    max_df: float = MAX_DF.default
    max_vocab: int | None = MAX_VOCAB.default
    words: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        lists = STOP_WORDS.check(NONE if self.stop_words is None else self.stop_words)
        for alone in (AUTO, NONE):
            if alone in lists and len(lists) > 1:
                also = "name english to extend the English list" if alone == AUTO else "it means no list"
                raise SettingError("stop_words", f"stop_words {alone!r} must be given alone ({also}), found "
                                                 f"{', '.join(map(repr, lists))}")
        object.__setattr__(self, "stop_words", lists)
        for rule in RULES[1:]:
            object.__setattr__(self, rule.name, rule.check(getattr(self, rule.name)))
        words: set[str] = set()
        for spec in lists:
            words |= load_stop_words(ENGLISH if spec == AUTO else spec)
        object.__setattr__(self, "words", frozenset(words))

    @property
    def stop_list_names(self) -> str:
        """The lists, as the notes name them: ``english``, ``english + mine.txt``."""
        return " + ".join(ENGLISH if s == AUTO else s for s in self.stop_words)

    def stop_list(self, *, text: bool, fixed: bool) -> tuple[str, frozenset[str]]:
        """The stop words for a corpus (``text``: its vocabulary comes from the tokenizer, and
        the words are lowercased; ``fixed``: its vocabulary is fixed) and the lists' names for
        the note."""
        if self.stop_words == (NONE,) or (self.stop_words == (AUTO,) and (fixed or not text)):
            return "", frozenset()
        return self.stop_list_names, frozenset(w.lower() for w in self.words) if text else self.words

    def recorded(self, *, text: bool, fixed: bool) -> dict:
        """The rules as a corpus's ``reading`` (and so a model) records them: each rule's value
        (the stop lists' names, paths absolute) and ``stop_list_size``, the number of words
        the stop lists removed from a corpus of this kind (``text``, ``fixed``) when present."""
        return {STOP_WORDS.name: STOP_WORDS.comparable(self.stop_words),
                **{rule.name: getattr(self, rule.name) for rule in RULES[1:]},
                "stop_list_size": len(self.stop_list(text=text, fixed=fixed)[1])}

    @property
    def needs_counts(self) -> bool:
        """Whether the rules judge words by their counts in the corpus (all but the stop words),
        which a corpus read as a stream must be read once more to know."""
        return bool(self.remove_top) or self.min_df > 1 or self.max_df < 1 or self.max_vocab is not None

    def decide(self, df: np.ndarray, total: np.ndarray, n_docs: int, vocab: list[str], *, text: bool,
               fixed: bool) -> tuple[np.ndarray, list[str]]:
        """Which words stay, (V,) bool, from each word's documents ``df`` and tokens ``total``
        in a corpus of ``n_docs`` documents, and the notes of the rules that removed words."""
        n_words = len(vocab)
        keep = np.ones(n_words, dtype=bool)
        notes: list[str] = []

        def remove(rule: str, words: np.ndarray) -> None:
            words = words & keep
            keep[words] = False
            tokens = int(total[words].sum())
            n = int(np.count_nonzero(words & (total > 0))) if fixed else int(np.count_nonzero(words))
            if n:
                notes.append(f"{rule}: removed {plural(n, 'word')}, {plural(tokens, 'token')}")

        name, stop = self.stop_list(text=text, fixed=fixed)
        if stop and text and not fixed and ENGLISH not in self.stop_words and AUTO not in self.stop_words:
            name += ", which replaces the English list; name english too to extend it"
        if stop:
            remove(f"stop words ({name})", np.fromiter(((w.lower() if text else w) in stop for w in vocab),
                                                       dtype=bool, count=n_words))
        if self.remove_top:
            remove(f"remove_top={self.remove_top}", _most_frequent(total, keep, self.remove_top))
        if self.min_df > 1:
            remove(f"min_df={self.min_df}", df < self.min_df)
        if self.max_df < 1:
            remove(f"max_df={self.max_df:g}", df > self.max_df * n_docs)
        if self.max_vocab is not None:
            remove(f"max_vocab={self.max_vocab}", keep & ~_most_frequent(total, keep, self.max_vocab))
        return keep, notes

    def apply(self, counts: sp.csr_array, vocab: list[str], *, text: bool,
              fixed: bool) -> tuple[sp.csr_array, list[str], list[str]]:
        """The counts (D, V) over ``vocab`` after the rules: ``(counts, vocab, notes)``.

        Without ``fixed`` the words removed leave the vocabulary (the others keep their order);
        with it, only their tokens go and the columns stay.
        """
        n_docs, n_words = counts.shape
        keep, notes = self.decide(word_documents(counts, n_words), word_totals(counts, n_words),
                                  n_docs, vocab, text=text, fixed=fixed)
        return keep_removed(counts, keep, vocab, fixed=fixed) + (notes,)


    def removed_words(self, before: list[str], after: list[str], *, text: bool) -> list[str]:
        """What the rules removed from a corpus that builds its vocabulary, sorted: the words of
        ``before`` (its vocabulary as read) not in ``after`` (as kept), and every word of the
        stop lists (as looked up: lowercased for ``text``), found in it or not."""
        kept = set(after)
        return sorted({w for w in before if w not in kept} | self.stop_list(text=text, fixed=False)[1])


def keep_removed(counts: sp.csr_array, keep: np.ndarray, vocab: list[str], *,
                 fixed: bool) -> tuple[sp.csr_array, list[str]]:
    """``counts`` and ``vocab`` without the words where ``keep`` is False: their columns go, or
    with ``fixed`` only their tokens."""
    if keep.all():
        return counts, vocab
    if fixed:
        return drop_columns(counts, ~keep), vocab
    return keep_columns(counts, keep), [vocab[j] for j in np.flatnonzero(keep).tolist()]


def _most_frequent(total: np.ndarray, among: np.ndarray, n: int) -> np.ndarray:
    """(V,) bool: the ``n`` words of ``among`` with the largest ``total``, ties to the smaller id."""
    candidates = np.flatnonzero(among)
    ranked = candidates[np.argsort(-total[candidates], kind="stable")]
    chosen = np.zeros(total.size, dtype=bool)
    chosen[ranked[:n]] = True
    return chosen
