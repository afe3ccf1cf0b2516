"""The topic-word prior of seeded topics: the symmetric beta plus extra mass on a few cells.

A seeded topic's prior favours its seed words: ``beta_kw = beta + extra_kw``, where ``extra``
is zero except on the (topic, seed word) cells. The collapsed Gibbs samplers (dense, sparse and
alias, on threads or Dask) sample the exact posterior under it; phi and the joint
log-likelihood use it (:mod:`ldacli.methods.cgs.method`); a checkpoint carries it, so that a resumed
run samples under the same prior, and a model records it in ``params["topic_word_prior"]``.

Build one with :func:`seed_prior` and give it to the method as ``settings["topic_word_prior"]``
(or to the samplers as ``prior=``)::

    prior = seed_prior({0: [12, 40, 7], 1: [3, 99]}, strength=50.0, n_words=V, n_topics=K)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ldacli.corpora.counts import starts
from ldacli.errors import LdacliError, SettingError


def _in_prior_order(words: np.ndarray, topics: np.ndarray) -> bool:
    """Whether cells are in a prior's order: by word, then topic (a cell given twice, next to itself)."""
    return bool(np.all((words[1:] > words[:-1]) | ((words[1:] == words[:-1]) & (topics[1:] >= topics[:-1]))))


def _repeats(words: np.ndarray, topics: np.ndarray) -> np.ndarray:
    """(E - 1,) bool: whether each cell after the first is the one before it again (cells in a
    prior's order: a cell given twice, next to itself)."""
    return (words[1:] == words[:-1]) & (topics[1:] == topics[:-1])


def _sorted(words: np.ndarray, topics: np.ndarray, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells in a prior's order, stably (a cell given twice keeps the order given)."""
    order = np.lexsort((topics, words))
    return words[order], topics[order], extra[order]


@dataclass(frozen=True, eq=False)
class TopicWordPrior:
    """The extra topic-word prior mass of some cells: ``beta_kw = beta + extra_kw``.

    ``words``, ``topics`` (E,) int32 and ``extra`` (E,) float64 list the cells with extra mass
    (each cell once, sorted by word then topic, every extra finite and > 0) of a model of
    ``n_words`` words and ``n_topics`` topics; every other cell's prior is beta alone. The
    symmetric part, beta, is not held here: it is the run's ``beta``.
    """

    n_words: int
    n_topics: int
    words: np.ndarray
    topics: np.ndarray
    extra: np.ndarray

    @classmethod
    def of_cells(cls, n_words: int, n_topics: int, words, topics, extra, source: str = "topic_word_prior"
                 ) -> "TopicWordPrior":
        """A prior from its cells in any order, checked (``source`` names them in errors)."""
        words, topics, extra = cls._checked(n_words, n_topics, words, topics, extra, source)
        if _in_prior_order(words, topics):  # (its own arrays: the prior keeps them)
            words, topics, extra = words.copy(), topics.copy(), extra.copy()
        else:
            words, topics, extra = _sorted(words, topics, extra)
        if np.any(_repeats(words, topics)):
            raise LdacliError(f"{source}: expected each (topic, word) cell once, found one twice")
        return cls(int(n_words), int(n_topics), words.astype(np.int32, copy=False),
                   topics.astype(np.int32, copy=False), extra)

    @classmethod
    def added(cls, n_words: int, n_topics: int, words, topics, extra, source: str = "topic_word_prior"
              ) -> "TopicWordPrior":
        """A prior from its cells in any order, a cell given more than once holding their extra
        added up (in the order given), checked. The arrays sorted here, or given sorted by word
        then topic, int32 and float64, are the prior's, not copied (an update's evidence has
        millions of cells, 3.3 M at 100 M tokens): the caller gives them away."""
        words, topics, extra = cls._checked(n_words, n_topics, words, topics, extra, source)
        if not _in_prior_order(words, topics):
            words, topics, extra = _sorted(words, topics, extra)
        words, topics = words.astype(np.int32, copy=False), topics.astype(np.int32, copy=False)
        first = np.ones(words.size, bool)
        first[1:] = ~_repeats(words, topics)
        if not first.all():
            at = np.flatnonzero(first)
            extra = np.add.reduceat(extra, at)
            words, topics = words[at], topics[at]
        return cls(int(n_words), int(n_topics), words, topics, extra)

    @staticmethod
    def _checked(n_words: int, n_topics: int, words, topics, extra, source: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        words, topics = np.asarray(words), np.asarray(topics)
        extra = np.asarray(extra, dtype=np.float64)
        if not (words.ndim == topics.ndim == extra.ndim == 1 and words.size == topics.size == extra.size):
            raise LdacliError(f"{source}: expected three arrays of one length (words, topics, extra), found shapes "
                              f"{words.shape}, {topics.shape}, {extra.shape}")
        if words.size and (words.dtype.kind not in "iu" or topics.dtype.kind not in "iu"):
            raise LdacliError(f"{source}: expected integer word and topic ids, found {words.dtype} and {topics.dtype}")
        if words.size and (words.min() < 0 or words.max() >= n_words):
            raise LdacliError(f"{source}: expected word ids in [0, {n_words}), found {int(words.min())} to "
                              f"{int(words.max())}")
        if topics.size and (topics.min() < 0 or topics.max() >= n_topics):
            raise LdacliError(f"{source}: expected topic ids in [0, {n_topics}), found {int(topics.min())} to "
                              f"{int(topics.max())}")
        if extra.size and not (np.all(np.isfinite(extra)) and extra.min() > 0):
            raise LdacliError(f"{source}: expected extra prior mass finite and > 0 on every cell, found others")
        return words, topics, extra

    @property
    def n_cells(self) -> int:
        return int(self.extra.size)

    @cached_property
    def topic_extra(self) -> np.ndarray:
        """(K,) float64: each topic's extra mass, summed over its words in word order (once: an
        update's prior has millions of cells, and every trace point asks; read only)."""
        extra = np.bincount(self.topics, weights=self.extra, minlength=self.n_topics).astype(np.float64)
        extra.flags.writeable = False
        return extra

    def topic_sums(self, beta: float) -> np.ndarray:
        """(K,) float64: each topic's prior summed over the words, ``V beta + sum_w extra_kw``
        (exactly ``V beta`` for a topic without extra mass)."""
        return self.n_words * beta + self.topic_extra

    def by_word(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells by word, as the kernels take them: ``ptr`` (V+1,) int64 (word w's cells
        are ``ptr[w]:ptr[w+1]``), ``topics`` (E,) int32, ``extra`` (E,) float64."""
        return starts(self.words, self.n_words), np.ascontiguousarray(self.topics), np.ascontiguousarray(self.extra)

    def dense(self, beta: float) -> np.ndarray:
        """(K, V) float64: every cell's prior ``beta + extra_kw``."""
        out = np.full((self.n_topics, self.n_words), float(beta))
        out[self.topics, self.words] += self.extra
        return out

    def __eq__(self, other) -> bool:
        return (isinstance(other, TopicWordPrior) and (self.n_words, self.n_topics) == (other.n_words, other.n_topics)
                and np.array_equal(self.words, other.words) and np.array_equal(self.topics, other.topics)
                and np.array_equal(self.extra, other.extra))

    # --- in files ---------------------------------------------------------------------------------

    ARRAYS = ("prior_words", "prior_topics", "prior_extra")

    def arrays(self) -> dict[str, np.ndarray]:
        """The prior as a checkpoint's arrays (:data:`ARRAYS`)."""
        return dict(zip(self.ARRAYS, (self.words, self.topics, self.extra)))

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], n_words: int, n_topics: int, source: str
                    ) -> "TopicWordPrior | None":
        """The prior a model's or a checkpoint's ``arrays`` hold (None when they hold none), checked,
        in the order :meth:`arrays` gives them."""
        present = [name for name in cls.ARRAYS if name in arrays]
        if not present:
            return None
        if len(present) < len(cls.ARRAYS):
            raise LdacliError(f"{source}: expected arrays {', '.join(cls.ARRAYS)} of the topic-word prior, found "
                              f"only {', '.join(present)}")
        words, topics, extra = cls._checked(n_words, n_topics, *(arrays[name] for name in cls.ARRAYS), source)
        if not _in_prior_order(words, topics) or np.any(_repeats(words, topics)):
            raise LdacliError(f"{source}: expected the cells of {', '.join(cls.ARRAYS)} each once, by word then "
                              f"topic, as ldacli writes them, found others")
        # (the arrays read are the prior's, as the file holds them: an update maps them from it again)
        return cls(int(n_words), int(n_topics), words.astype(np.int32, copy=False), topics.astype(np.int32, copy=False),
                   extra)

    def params(self) -> dict:
        """The prior as a model's ``params["topic_word_prior"]`` (JSON; floats round-trip)."""
        return {"words": self.words.tolist(), "topics": self.topics.tolist(), "extra": self.extra.tolist()}

    @classmethod
    def from_params(cls, params: Mapping, n_words: int, n_topics: int, source: str) -> "TopicWordPrior":
        """The prior :meth:`params` recorded in a model (its vocabulary of ``n_words``)."""
        try:
            cells = [params[name] for name in ("words", "topics", "extra")]
        except (KeyError, TypeError):
            raise LdacliError(f"{source}: expected params.topic_word_prior with words, topics and extra") from None
        return cls.of_cells(n_words, n_topics, np.array(cells[0], dtype=np.int64), np.array(cells[1], dtype=np.int64),
                            cells[2], source=source)


def seed_prior(seed_words: Mapping[int, Sequence[int]], strength: float, n_words: int, n_topics: int
               ) -> TopicWordPrior:
    """The prior of seeded topics: topic k's seed words ``seed_words[k]`` (word ids) each get
    ``strength`` more prior mass in topic k, ``beta_kw = beta + strength``.

    ``strength`` is in tokens: it weighs as much as that many occurrences of the word already
    assigned to the topic (so what is strong depends on the corpus: a topic of a corpus of N
    tokens holds about N / K of them). A word may seed several topics; a word listed twice for
    one topic counts once. Raises :class:`~ldacli.errors.SettingError` (``seed_words``,
    ``strength``) for ids out of range or a strength that is not a positive finite number.
    """
    if isinstance(strength, bool) or not isinstance(strength, (int, float)) or not math.isfinite(strength) \
            or strength <= 0:
        raise SettingError("strength", f"strength must be a positive finite number, found {strength!r}")
    cells = set()
    for topic, words in seed_words.items():
        if not (isinstance(topic, (int, np.integer)) and 0 <= topic < n_topics):
            raise SettingError("seed_words", f"seed_words must name topics 0 to {n_topics - 1}, found {topic!r}")
        for w in words:
            if not (isinstance(w, (int, np.integer)) and 0 <= w < n_words):
                raise SettingError("seed_words", f"seed_words must be word ids 0 to {n_words - 1}, found {w!r} "
                                                 f"for topic {topic}")
            cells.add((int(w), int(topic)))
    ordered = sorted(cells)
    words = np.array([w for w, _ in ordered], np.int64)
    topics = np.array([t for _, t in ordered], np.int64)
    return TopicWordPrior.of_cells(n_words, n_topics, words, topics, np.full(len(ordered), float(strength)))


def topic_sums(prior: TopicWordPrior | None, beta: float, n_words: int, n_topics: int) -> np.ndarray:
    """(K,) float64: each topic's ``sum_w beta_kw`` (``V beta`` for every topic without a prior)."""
    return np.full(n_topics, n_words * beta) if prior is None else prior.topic_sums(beta)


def extra_by_word(prior: TopicWordPrior | None, n_words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`TopicWordPrior.by_word`, or that of no extra mass at all (None)."""
    if prior is None:
        return np.zeros(n_words + 1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64)
    return prior.by_word()
