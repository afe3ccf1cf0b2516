"""Warm starts: a run that begins from a model (retraining on a grown corpus), its lineage and
how well it kept its parent's topic ids.

A warm start keeps the parent's vocabulary order (words gone from the corpus left out, new ones
appended: :func:`grown_corpus`), says which parent topic each topic descends from
(:func:`topic_descent`: the parent's, less those removed, then those added), takes the parent's
priors as its starting values (:func:`from_parent`), draws every token's first topic from the
parent's topics (:func:`warm_start_state`), records where it comes from (:func:`lineage`) and,
at the end, how well the topic ids held (:func:`id_stability`). The driver
(:mod:`ldacli.methods.driver`) calls these; a method sees only the :class:`~ldacli.methods.base.Start`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

import numpy as np

from ldacli.corpora.corpus import Corpus
from ldacli.diff import match_topics
from ldacli.errors import LdacliError, SettingError
from ldacli.files.fileio import file_sha256
from ldacli.scoring.fixed_topics import fold_in
from ldacli.methods.base import Start
from ldacli.model import Model

log = logging.getLogger("ldacli")

# Gibbs sweeps under the parent's topics that draw a warm start's first topics.
FOLD_IN_SWEEPS = 10
# The random stream of the fold-in, apart from every method's (those are children 0, 1, ...).
FOLD_IN_STREAM = 2**32 - 1


def grown_corpus(corpus: Corpus, parent: Model, source: str, notes: bool = True) -> Corpus:
    """``corpus`` over the parent's vocabulary order: the parent's words that still occur, in
    its order, then the new words in the corpus's order; says how many are new and gone."""
    present = set(corpus.vocab)
    known = set(parent.vocab)
    kept = [w for w in parent.vocab if w in present]
    new = [w for w in corpus.vocab if w not in known]
    if notes:
        log.warning("%s: warm start from %s: %d new words appended to its %d, %d of its words no longer occur",
                    corpus.source, source, len(new), parent.phi.shape[1], parent.phi.shape[1] - len(kept))
    grown, _ = corpus.align(kept + new)
    return grown


def parent_if_unchanged(warm_start: dict | None) -> Model | None:
    """The parent model a warm start recorded, when its file is still there unchanged."""
    if not warm_start:
        return None
    path = warm_start.get("path", "")
    try:
        if os.path.isfile(path) and file_sha256(path) == warm_start.get("sha256"):
            return Model.load(path)
    except (OSError, LdacliError):
        pass
    log.warning("%s: the warm start's parent is gone or changed; topic ids are not checked against it", path)
    return None


def from_parent(values: Mapping, given: dict) -> tuple[Model, list[int | None], dict]:
    """The parent model of a run warm-started from ``values["warm_start"]``, the descent of its
    topics (:func:`topic_descent`), and the values of the run's settings that follow from it:
    ``n_topics`` (the parent's, with those added and removed; one given must agree), the
    parent's priors as the starting values unless ``alpha`` or ``beta`` is given, and learned
    (``optimize_interval``) as the parent's were unless that is given."""
    parent = Model.load(values["warm_start"])
    descent, settled = settle_from_parent(values, given, parent.n_topics, parent.params)
    if given.get("alpha") is None:  # the parent's priors are the starting values unless given
        kept = [float(parent.alpha[d]) for d in descent if d is not None]
        new = kept[0] if len(set(kept)) == 1 else float(np.mean(kept))  # a symmetric alpha stays so
        settled["alpha"] = [float(parent.alpha[d]) if d is not None else new for d in descent]
    if given.get("beta") is None and parent.beta > 0:
        settled["beta"] = float(parent.beta)
    return parent, descent, settled


def settle_from_parent(values: Mapping, given: dict, n_parent: int, params: dict) -> tuple[list[int | None], dict]:
    """The descent of a warm-started run of the settings ``values`` from its parent of
    ``n_parent`` topics whose params are ``params``, and the values of the settings it takes
    from the parent (``n_topics``; ``optimize_interval`` unless given), refusing what
    contradicts the parent (a ``n_topics`` given, topic ids to remove that it lacks). The
    parent's params are enough (:meth:`Model.read_params`), so that
    :func:`~ldacli.methods.driver.check_given` refuses these before the corpus is read."""
    descent = topic_descent(n_parent, values["add_topics"], values["remove_topics"], values["warm_start"])
    if given.get("n_topics") is not None and values["n_topics"] != len(descent):
        raise SettingError("n_topics", f"n_topics must be the warm start's {n_parent} topics "
                                       + (f"with {values['add_topics'] or 0} added and "
                                          f"{len(values['remove_topics'] or [])} removed, {len(descent)}, "
                                          if len(descent) != n_parent else "")
                                       + f"(topic k descends from its topic k), found {values['n_topics']}")
    settled: dict = {"n_topics": len(descent)}
    if values.get("optimize_interval", 0) is None:  # learned as the parent's were (a seeded one's: not)
        settled["optimize_interval"] = int(params.get("optimize_interval") or 0)
    return descent, settled


def topic_descent(n_parent: int, add: int | None, remove: list[int] | None, source: str) -> list[int | None]:
    """Which topic of a warm start's parent (of ``n_parent`` topics) each topic of the new model
    descends from: the parent's topics but those in ``remove``, in their order, then ``add`` new
    ones (None)."""
    remove = sorted(set(remove or []))
    outside = [k for k in remove if k >= n_parent]
    if outside:
        raise SettingError("remove_topics", f"remove_topics must be topic ids of the warm start {source} (0 to "
                                            f"{n_parent - 1}), found {outside[0]}")
    descent: list[int | None] = [k for k in range(n_parent) if k not in remove] + [None] * (add or 0)
    if not descent:
        raise SettingError("remove_topics", f"remove_topics would leave no topic of the {n_parent} of {source}: "
                                            f"keep one, or add some with add_topics", ("add_topics",))
    return descent


def warm_start_state(parent: Model, corpus: Corpus, settings: Mapping,
                     descent: list[int | None] | None = None) -> Start:
    """The first state of a run warm-started from ``parent`` on ``corpus`` (whose vocabulary
    begins with the parent's surviving words): every token's topic drawn by
    :data:`FOLD_IN_SWEEPS` Gibbs sweeps under the parent's topics (words the parent never saw
    weigh every topic alike, so their tokens follow their document and the prior), and the
    starting priors. ``descent`` (:func:`topic_descent`; by default the parent's topics as they
    are) says which parent topic each new topic is; a new topic (None) weighs the words the
    parent saw by their frequency in ``corpus``, a background that takes the tokens the
    parent's topics explain badly, where a new theme begins. Deterministic given the run's seed."""
    descent = list(range(parent.n_topics)) if descent is None else descent
    index = {w: i for i, w in enumerate(parent.vocab)}
    phi = np.ones((len(descent), corpus.n_words))
    old = [(j, index[w]) for j, w in enumerate(corpus.vocab) if w in index]
    if old:
        cols, parent_cols = (list(c) for c in zip(*old))
        rows = [i for i, d in enumerate(descent) if d is not None]
        phi[np.ix_(rows, cols)] = parent.phi[np.ix_([d for d in descent if d is not None], parent_cols)]
        added = [i for i, d in enumerate(descent) if d is None]
        if added:
            frequency = corpus.word_frequencies()[cols].astype(np.float64) + 1.0
            phi[np.ix_(added, cols)] = frequency / frequency.sum()
    alpha = np.broadcast_to(np.asarray(settings["alpha"], dtype=np.float64), (len(descent),)).copy()
    words, doc_ptr = corpus.tokens()
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(settings["seed"], spawn_key=(FOLD_IN_STREAM,))))
    z = fold_in(phi, alpha, words, doc_ptr, sweeps=FOLD_IN_SWEEPS, rng=rng)
    return Start(z, alpha, float(settings["beta"]))


def lineage(parent: Model, path: str, corpus: Corpus, descent: list[int | None]) -> dict:
    """What a warm-started model records about where it comes from: the parent, the words new
    and gone, and the topics' descent (``descent[k]``: the parent topic topic k continues, or
    None for a topic added; ``added``, ``removed``: the new model's added ids, the parent's
    removed ones)."""
    same = corpus.vocab is parent.vocab  # (an update's night shares its model's list: no sets of 200,000 words)
    grown = 0 if same else len(set(corpus.vocab) - set(parent.vocab))
    this = {"path": os.path.abspath(path), "sha256": file_sha256(path),
            "corpus_fingerprint": parent.params.get("corpus_fingerprint"),
            "method": parent.params.get("method"), "n_topics": parent.n_topics}
    return {"warm_start": {**this, "new_words": grown,
                           "gone_words": 0 if same else len(set(parent.vocab) - set(corpus.vocab)),
                           "fold_in_sweeps": FOLD_IN_SWEEPS, "descent": list(descent),
                           "added": [k for k, d in enumerate(descent) if d is None],
                           "removed": sorted(set(range(parent.n_topics)) - set(descent))},
            "lineage": [this] + list(parent.params.get("lineage", []))[:MAX_LINEAGE - 1]}

# Generations of parents a model lists.
MAX_LINEAGE = 20


def id_stability(parent: Model, model: Model, descent: list[int | None] | None = None) -> dict:
    """How well a warm-started model kept its parent's topic ids: topic k should still be the
    parent's topic ``descent[k]`` (by default k; None for a topic added). The Hungarian matching
    of its topics to the parent's (Jensen-Shannon distance) tells; topics matched better to
    another parent topic are listed (and logged), with the distance of each kept topic to the
    one it descends from."""
    descent = list(range(min(parent.n_topics, model.n_topics))) if descent is None else descent
    matching = match_topics(parent, model)
    expected = {k: d for k, d in enumerate(descent) if d is not None}
    moved = [[a, b] for a, b in matching.pairs if b in expected and expected[b] != a]
    own = {b: d for (a, b), d in zip(matching.pairs, matching.distances) if expected.get(b) == a}
    if moved:
        log.warning("warm start: %d of %d topics match another id of the parent better (new <- parent: %s)",
                    len(moved), model.n_topics, ", ".join(f"{b} <- {a}" for a, b in moved[:10]))
    distances = np.array(list(own.values())) if own else np.zeros(0)
    return {"kept": len(own), "topics": model.n_topics, "moved": moved,
            "median_distance": float(np.median(distances)) if distances.size else None,
            "max_distance": float(distances.max()) if distances.size else None}
