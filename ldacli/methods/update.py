"""Updates: a night's documents added to a model (``train NIGHT --update MODEL``), at a cost set by
the night, not by the corpus the model has seen.

The parent model's topic-word evidence ``E_kw`` (the word-topic counts its phi was computed from,
averaged over the states it summed, plus the evidence it carried itself when it was an update) is
the prior of a collapsed Gibbs run on the night's documents alone: ``beta_kw = beta + d E_kw``,
``d`` the decay of an update (1, or ``2^(-1/H)`` with a half-life of ``H`` updates). That is the
topic-word posterior the parent's assignments give, so the night's tokens are drawn as a full run
would draw them with the old tokens' topics held where they are; the new model's phi is computed
from the night's counts under it, and its evidence (``d E`` plus the night's counts) is what the
next update starts from. On-line LDA (AlSumait, Barbara & Domeniconi, ICDM 2008) carries the
previous counts as the next prior in the same way; holding old assignments fixed is the
incremental Gibbs sampler of Canini, Shi & Griffiths (AISTATS 2009) without its rejuvenation.
docs/guide/retraining.md gives the measurements that chose it and the refresh schedule.

The new model continues the parent as a warm start does (topic ids and names, descent, lineage),
records ``params["update"]``, keeps the parent's priors (not learned: they would be learned from
the night alone) and describes every document seen so far: the parent's with the proportions it
gave them, then the night's. The driver (:mod:`ldacli.methods.driver`) calls these.
"""

from __future__ import annotations

import dataclasses
import logging
import os

import numpy as np

from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.read import READING, READING_FOR_MODEL
from ldacli.errors import LdacliError, SettingError
from ldacli.files.fileio import file_sha256
from ldacli.topic_word_prior import TopicWordPrior
from ldacli.model import Model
from ldacli.settings import FIXED, Real, Setting, Text

SETTINGS = (
    Setting("update", Text(path=True), None,
            "Add this night's documents (CORPUS holds only them) to this model, at a cost set by the night: its "
            "topics' evidence is the prior of a run on the night alone; the new model continues its topic ids and "
            "describes its documents and the night's. Its method, topics, priors, vocabulary and tokenizer apply.",
            FIXED),
    Setting("half_life", Real(0, min_open=True), None,
            "With --update: old evidence halves every this many updates (each update weighs it 2^(-1/H)), so that "
            "themes that stop coming fade.", FIXED, default_help="none: old evidence keeps its weight"),
)

# Settings an update takes from its model, or which begin, align or seed a run otherwise: why each
# does not apply beside it.
REFUSED = {
    "warm_start": "the model it continues is its start",
    "add_topics": "it keeps its model's topics (retrain to add some)",
    "remove_topics": "it keeps its model's topics (retrain to remove some)",
    "align_to": "it keeps its model's topic ids",
    "seed_words": "it keeps its model's topics",
    "seed_strength": "it keeps its model's topics",
    "alpha": "it keeps its model's priors",
    "beta": "it keeps its model's priors",
    "optimize_interval": "it keeps its model's priors (learned from the night alone they would drift)",
    "optimize_burn_in": "it keeps its model's priors",
    "holdout": "it trains on the whole night",
    "patience": "it trains on the whole night",
}
METHOD = "cgs"

log = logging.getLogger("ldacli")


def check_given(given: dict) -> None:
    """Refuse, before anything is read, what cannot go with an update (or a half-life without one)."""
    if given.get("update") is None:
        if given.get("half_life") is not None:
            raise SettingError("half_life", "half_life weighs the old evidence of update: give update too", ("update",))
        return
    for name, why in REFUSED.items():
        if given.get(name) is not None:
            raise SettingError(name, f"{name} does not apply beside update: {why}", ("update",))
    for s in READING:
        if s not in READING_FOR_MODEL and given.get(s.name) is not None:
            raise SettingError(s.name, f"{s.name} does not apply beside update: the night is read as its model "
                                       f"reads documents (its vocabulary and tokenizer)", ("update",))
    if given.get("method") not in (None, METHOD):
        raise SettingError("method", f"method must be {METHOD} beside update (its model's), found {given['method']}",
                           ("update",))


def decay(half_life: float | None) -> float:
    """The weight an update gives its parent's evidence."""
    return 1.0 if half_life is None else float(2.0 ** (-1.0 / half_life))


def parent_of(path: str) -> Model:
    """The model at ``path``, which an update continues, checked for what an update needs: a
    collapsed Gibbs model that records its counts, without seeded topics."""
    parent = Model.load(path)
    method = parent.params.get("method")
    if method != METHOD:
        raise LdacliError(f"{path}: an update continues a model of method {METHOD}, found one of method {method}: "
                          f"retrain with warm_start")
    if parent.params.get("seeded"):
        raise LdacliError(f"{path}: an update of a model with seeded topics is not supported: retrain it with "
                          f"warm_start, which keeps its seeds")
    if parent.counts is None:
        raise LdacliError(f"{path}: expected a model that records its word-topic counts (written by ldacli 0.3 or "
                          f"later), found one without: retrain it once, then update it")
    return parent


def evidence(parent: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parent's topic-word evidence as cells ``(words, topics, values)`` (float64, > 0; topics
    are its ids): the word-topic counts its phi is computed from, averaged over the states summed
    (:meth:`~ldacli.model.Model.word_topic_counts`), plus the evidence it carried itself as its
    prior when it was an update."""
    counts = parent.word_topic_counts()
    words, topics, values = counts.words, counts.topics, counts.sums / counts.states
    held = parent.counts
    if held.carried and held.prior is not None:
        carried = held.prior
        run_topics = carried.topics.astype(np.int64)
        ids = run_topics if held.order is None else np.argsort(held.order)[run_topics]
        words = np.concatenate([words, carried.words.astype(np.int64)])
        topics = np.concatenate([topics, ids])
        values = np.concatenate([values, carried.extra])
        V = len(parent.vocab)
        cells, where = np.unique(topics * V + words, return_inverse=True)
        values = np.bincount(where, weights=values, minlength=cells.size)
        words, topics = cells % V, cells // V
    keep = values > 0
    return words[keep], topics[keep], values[keep]


def prior(parent: Model, weight: float) -> TopicWordPrior:
    """The prior of an update of ``parent``: its evidence weighed ``weight`` (:func:`decay`)."""
    words, topics, values = evidence(parent)
    V, K = len(parent.vocab), parent.n_topics
    return TopicWordPrior.of_cells(V, K, words, topics, values * weight, source="update")


def positional(ids: list[str]) -> int | None:
    """The first number of ``ids`` that are their documents' positions (0, 1, 2, ... or 1, 2, 3,
    ...: formats whose documents have no ids of their own), or None."""
    for base in (0, 1):
        if all(d == str(i + base) for i, d in enumerate(ids)):
            return base
    return None


def night_over(night: Corpus, parent: Model, notes: bool = True) -> Corpus:
    """The night's documents over every word of the parent's vocabulary, in its order (the new
    model's phi has a row for each); tokens of words the parent never saw are left out, and said.
    Documents numbered by their position (LDA-C, UCI, Matrix Market, lines of text) are numbered
    after the parent's, as if appended to its corpus; ids of their own (a folder's file names)
    are kept."""
    if night.n_tokens == 0:
        raise LdacliError(f"{night.name}: expected a night with at least one token, found none")
    base, before = positional(list(night.doc_ids)), positional(list(parent.doc_ids))
    if base is not None and before is not None:
        night = dataclasses.replace(night, doc_ids=[str(len(parent.doc_ids) + before + i)
                                                    for i in range(night.n_docs)])
    if list(night.vocab) == list(parent.vocab):
        return night
    aligned, dropped = night.align(list(parent.vocab), frozenset(parent.removed_words))
    if dropped and notes:
        log.warning("%s: %d tokens of words the model never saw are left out (an update keeps its model's "
                    "vocabulary; a full retrain takes new words in)", night.source, dropped)
    if aligned.n_tokens == 0:
        raise LdacliError(f"{night.name}: expected a night with tokens of the model's words, found none")
    return aligned


def settle(values: dict, given: dict, parent: Model, night: Corpus) -> None:
    """Set an update's settings in ``values`` from its parent (its topics, priors; not learned)
    and its prior; refuse a night that repeats one of the parent's documents."""
    K = parent.n_topics
    if given.get("n_topics") is not None and values["n_topics"] != K:
        raise SettingError("n_topics", f"n_topics must be the {K} topics of the model of update, found "
                                       f"{values['n_topics']}", ("update",))
    values["n_topics"] = K
    values["alpha"] = [float(a) for a in parent.alpha]
    values["beta"] = float(parent.beta)
    values["optimize_interval"] = 0
    seen = set(parent.doc_ids)
    again = next((d for d in night.doc_ids if d in seen), None)
    if again is not None:
        raise LdacliError(f"{night.source}: document {again!r} is already in the model {values['update']} (an update "
                          f"adds new documents; retrain with warm_start to change old ones)")
    values["topic_word_prior"] = prior(parent, decay(values["half_life"]))


def record(parent: Model, path: str, night: Corpus, half_life: float | None) -> dict:
    """What an updated model records of its update (``params["update"]``): the model updated,
    the night's size, the weight of the old evidence, and how many updates since a full run."""
    before = parent.params.get("update") or {}
    return {"update": {"path": os.path.abspath(path), "sha256": file_sha256(path), "night_docs": night.n_docs,
                       "night_tokens": night.n_tokens, "half_life": half_life, "decay": decay(half_life),
                       "since_full": int(before.get("since_full", 0)) + 1,
                       "parent_docs": len(parent.doc_ids)}}


def merged(model: Model, parent: Model) -> Model:
    """The model of an update: ``model`` (trained on the night) describing the parent's documents
    too, first, with the proportions the parent gave them, and keeping the evidence it carried
    (its prior) for the next update."""
    model.counts = dataclasses.replace(model.counts.after(parent.counts), carried=True)
    model.doc_ids = list(parent.doc_ids) + list(model.doc_ids)
    p = model.params
    p["n_docs"] = len(model.doc_ids)
    p["n_tokens"] = int(parent.params.get("n_tokens", 0)) + int(p.get("n_tokens", 0))
    return model
