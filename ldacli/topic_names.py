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
"""

from __future__ import annotations


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
