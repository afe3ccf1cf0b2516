"""Topic names: what a model calls its topics, ``params["topic_names"]``.

A model's params may hold ``topic_names``, a list of K entries, each a topic's name or None
(JSON null); models without names lack the key. Names come from seed words (``train
--seed-words``: a seeded topic carries its name) or are set after training (``ldacli name``,
:func:`name_topic`); warm starts keep the names of the topics they keep, and alignment carries
them with the topics it renumbers. Every output that shows a topic id shows its name beside it
(:meth:`ldacli.model.Model.topic_label`).

A name is one line of at most :data:`~ldacli.model.MAX_NAME_LENGTH` characters without tabs, control, bidi or
line-separating characters (it goes into tables, TSV, HTML and terminals), unique within the
model; an empty name removes it. The rule is :func:`ldacli.model.check_name`, which every model
and checkpoint loaded is checked with too, so a file someone sent cannot carry what ``ldacli
name`` refuses.

A seeded topic's name says what its seed words are about; :func:`seed_ranks` says whether the
topic kept them (a seed among its top words by the tokens it took) or lost them, which the
outputs that show the topic then say beside its name (:func:`lost_seeds_text`).
"""

from __future__ import annotations

import numpy as np

from ldacli import checks
from ldacli.errors import SettingError
from ldacli.files.locking import locked
from ldacli.model import Model, check_name, check_unique


def with_names(params: dict, names: list[str | None]) -> dict:
    """``params`` with ``topic_names`` set to ``names``, or without the key when none is named."""
    params = {k: v for k, v in params.items() if k != "topic_names"}
    if any(n is not None for n in names):
        params["topic_names"] = list(names)
    return params


def name_topic(path: str, topic: int, name: str | None, *, wait: float | None = None) -> Model:
    """Name topic ``topic`` of the model at ``path`` (``None`` or ``""`` removes its name),
    rewriting the file atomically while holding its lock (:mod:`ldacli.files.locking`; another run
    writing it raises :class:`~ldacli.errors.LockedError`, or is waited for ``wait`` seconds).
    Returns the model as written."""
    path = checks.path("path", path, "the path of a model file")
    name = None if name is None else check_name(name)
    with locked([path], wait=wait):
        model = Model.load(path)
        if isinstance(topic, bool) or not isinstance(topic, int) or not 0 <= topic < model.n_topics:
            raise SettingError("topic", f"topic must be a topic id from 0 to {model.n_topics - 1} of {path}, "
                                        f"found {topic!r}")
        names = model.topic_names
        names[topic] = name
        check_unique(names)
        model.params = with_names(model.params, names)
        model.save(path)
    return model


def carried(own: list[str | None], reference: list[str | None], pairs: list[tuple[int, int]],
            distances, threshold: float) -> list[str | None]:
    """Names after a model was matched to a reference: its ``own`` names, and for its unnamed
    topics the name of the reference topic it was matched to (``pairs``: (reference topic, own
    topic), with ``distances``) when they are at most ``threshold`` apart and the name is not
    taken."""
    out = list(own)
    taken = {n for n in out if n is not None}
    for (ref, k), d in zip(pairs, distances):
        name = reference[ref]
        if out[k] is None and name is not None and name not in taken and d <= threshold:
            out[k] = name
            taken.add(name)
    return out


# A seeded topic keeps its seeds while at least one of its seed words is among its this many words
# that took the most of the corpus's tokens (the default --top-words: the words a user reads). Measured
# on 20 Newsgroups, K=50 (docs/guide/seeded-topics.md): every topic that kept its theme had a seed at
# rank 1 or 2, every one that lost it had none above rank 106.
SEEDS_KEPT_WITHIN = 10


def seed_ranks(model: Model) -> list[dict]:
    """Each seeded topic of ``model`` (``params["seeded"]``) whose seed words its vocabulary has,
    and where its seeds rank among its words by the tokens it took from the corpus: ``topic``
    (the model's id, after any renumbering by ``--align-to``), ``name``, ``words`` (the seed
    words) and ``ranks`` (1 for its word of most tokens; ties share the better rank), and
    ``lost``: none of them within :data:`SEEDS_KEPT_WITHIN`. The tokens are the model's counts
    without the seeds' prior, which alone can hold a seed among the top words of a topic that
    is about something else (a word seen 2,000 times puts 500 tokens' worth in its topic at the
    default strength); a model that holds phi itself is ranked by phi."""
    seeded = model.params.get("seeded")
    if not seeded:
        return []
    K = model.n_topics
    aligned = model.params.get("aligned_to")
    order = aligned.get("order") if isinstance(aligned, dict) else None
    place = {int(run): k for k, run in enumerate(order)} if order and sorted(order) == list(range(K)) else None
    index = {w: i for i, w in enumerate(model.vocab)}
    wanted = []
    for t in seeded["topics"]:
        k = place.get(t["topic"]) if place is not None else t["topic"]
        words = [w for w in t["words"] if w in index]
        if k is not None and 0 <= k < K and words:
            wanted.append((k, words))
    if not wanted:
        return []
    rows = _weights(model, sorted({k for k, _ in wanted}))
    out = []
    for k, words in wanted:
        row = rows[k]
        ranks = [int(np.count_nonzero(row > row[index[w]])) + 1 for w in words]
        out.append({"topic": k, "name": model.topic_names[k], "words": words, "ranks": ranks,
                    "lost": min(ranks) > SEEDS_KEPT_WITHIN})
    return out


def _weights(model: Model, topics: list[int]) -> dict[int, np.ndarray]:
    """Each of ``topics``' words' weight in it: its tokens (the counts' sums) when the model
    holds counts, else phi's row."""
    if model.counts is None:
        phi = model.phi
        return {k: np.asarray(phi[k]) for k in topics}
    counts = model.counts
    out = {}
    for k in topics:
        row = np.zeros((1, len(model.vocab)))
        counts.words.put(row, int(counts.order[k]) if counts.order is not None else k)  # the run's topic id
        out[k] = row[0]
    return out


def lost_seeds_text(topic: dict) -> str:
    """A seeded topic that lost its seeds (:func:`seed_ranks`) as the outputs say it: ``seeds
    lost: space, nasa, orbit rank 1,825-2,911``."""
    low, high = min(topic["ranks"]), max(topic["ranks"])
    where = f"rank {low:,}" if low == high else f"rank {low:,}-{high:,}"
    return f"seeds lost: {', '.join(topic['words'])} {where}"
