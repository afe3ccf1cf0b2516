"""Comparing two models' topics: which topic of one is which of the other, and how far it moved.

Topics are compared as distributions over words, matched by string across the two
vocabularies (a word one model lacks has probability 0 there), by the Jensen-Shannon distance
(the square root of the JS divergence in bits: 0 for identical topics, 1 for topics with no word
in common). The one-to-one matching that minimises the summed distances is found by the
Hungarian algorithm (``scipy.optimize.linear_sum_assignment``). On that:

* :func:`match_topics` -- the matching and its distances;
* :func:`align` -- a model with its topics renumbered onto a reference model's ids (``train
  --align-to``; warm-started runs keep their ids by construction and are checked with it);
* :func:`diff_models` -- matched topics side by side: distance, top words gained and lost,
  prevalence change, and topics with no counterpart (``ldacli diff``). When the newer model was
  warm-started from the older one's file, its recorded lineage pairs the topics instead: each
  topic with the one it continues, and the topics ``--add-topics`` added and ``--remove-topics``
  removed listed as such, never paired and never counted as drift (:func:`drifted`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ldacli.api_input import as_model
from ldacli.model import TOP_WORDS, Model
from ldacli.settings import Real, Setting
from ldacli.topic_names import carried, with_names

# The default threshold, measured (benchmarks/diff_calibration.py, docs/guide/retraining.md): one topic found again
# by another seed is at most about 0.7 from itself (90% of those sharing 5 of their top 10 words,
# on 20NG and KOS at K=50), and a topic is further than 0.74 from 90% of the other topics of its
# model; warm starts move topics at most 0.53.
THRESHOLD = Setting("threshold", Real(0, 1), 0.7,
                    "Matched topics further apart than this (Jensen-Shannon distance, 0 to 1) are reported as "
                    "having no counterpart (measured: one topic found by two seeds is within 0.7 nine times in "
                    "ten, two different topics further apart nine times in ten).")
MAX_DRIFT = Setting("max_drift", Real(0, 1), None,
                    "Exit with code 3 when a matched topic moved further than this (the comparison succeeded, "
                    "but something needs a look).")
_CHUNK = 1 << 22  # doubles per block of the pairwise distance computation (32 MB)


def common_topics(a: Model, b: Model) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Both models' topics over the union of their vocabularies (a's words first, in a's
    order, then b's new ones): ``(phi_a, phi_b, words)``."""
    index = {w: i for i, w in enumerate(a.vocab)}
    words = list(a.vocab) + [w for w in b.vocab if w not in index]
    index.update({w: i for i, w in enumerate(words)})
    phi_a = np.zeros((a.n_topics, len(words)))
    phi_a[:, :len(a.vocab)] = a.phi
    phi_b = np.zeros((b.n_topics, len(words)))
    phi_b[:, [index[w] for w in b.vocab]] = b.phi
    return phi_a, phi_b, words


def js_distances(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon distances (base 2, in [0, 1]) between every row of ``p`` (A, V) and every
    row of ``q`` (B, V), all rows distributions over the same words: (A, B). Computed as
    ``H(m) - (H(p) + H(q)) / 2`` with ``m = (p + q) / 2``, in blocks of at most about 32 MB."""
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    V = p.shape[1]
    out = np.empty((p.shape[0], q.shape[0]))
    cols = max(1, _CHUNK // max(1, V))
    rows = max(1, _CHUNK // max(1, cols * V))
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log2(p), 0.0).sum(axis=1)
        qlogq = np.where(q > 0, q * np.log2(q), 0.0).sum(axis=1)
        for r in range(0, p.shape[0], rows):
            for c in range(0, q.shape[0], cols):
                m = 0.5 * (p[r:r + rows, None, :] + q[None, c:c + cols, :])
                mlogm = np.where(m > 0, m * np.log2(m), 0.0).sum(axis=2)
                out[r:r + rows, c:c + cols] = 0.5 * (plogp[r:r + rows, None] + qlogq[None, c:c + cols]) - mlogm
    return np.sqrt(np.clip(out, 0.0, 1.0))


def js_distance_rows(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Jensen-Shannon distance (base 2) between each row of ``p`` (n, V) and the same row
    of ``q``: (n,), what the diagonal of :func:`js_distances` would be."""
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    m = 0.5 * (p + q)

    def plogp(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(x > 0, x * np.log2(x), 0.0).sum(axis=1)

    return np.sqrt(np.clip(0.5 * (plogp(p) + plogp(q)) - plogp(m), 0.0, 1.0))


@dataclasses.dataclass
class Matching:
    """``pairs[i] = (k_a, k_b)``: topic k_a of A matched with topic k_b of B, ``distances[i]``
    their JS distance; ``distance`` the full (K_a, K_b) matrix; ``unmatched_a``/``_b`` the
    topics left over when the models have different numbers of topics."""

    pairs: list[tuple[int, int]]
    distances: np.ndarray
    distance: np.ndarray
    unmatched_a: list[int]
    unmatched_b: list[int]


def match_topics(a: Model, b: Model) -> Matching:
    """The one-to-one matching of A's and B's topics with the least summed JS distance (each a
    model or its file's path)."""
    a, b = as_model(a, argument="a"), as_model(b, argument="b")
    phi_a, phi_b, _ = common_topics(a, b)
    dist = js_distances(phi_a, phi_b)
    # imported here: scipy.optimize takes a sixth of a second to import, which every command
    # would otherwise pay
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(dist)
    pairs = [(int(r), int(c)) for r, c in zip(rows, cols)]
    return Matching(pairs, dist[rows, cols], dist,
                    sorted(set(range(a.n_topics)) - set(rows.tolist())),
                    sorted(set(range(b.n_topics)) - set(cols.tolist())))


def align(model: Model, reference: Model) -> tuple[Model, list[int], Matching]:
    """``model`` with its topics renumbered onto ``reference``'s ids: the topic matched to the
    reference's topic k becomes topic k (topics the reference lacks come last, in their old
    order). Returns the model, ``order`` (new topic i is old topic ``order[i]``) and the
    matching. phi, theta's columns, alpha and the topics' names move together; a topic without a
    name takes the name of the reference topic it now stands for when they are no further apart
    than :data:`THRESHOLD`'s default; nothing else changes."""
    model, reference = as_model(model), as_model(reference, argument="reference")
    matching = match_topics(reference, model)
    by_reference = dict(matching.pairs)  # reference topic -> model topic
    order = [by_reference[k] for k in sorted(by_reference)] + matching.unmatched_b
    own = model.topic_names
    names = carried([own[i] for i in order], reference.topic_names,
                    [(ref, order.index(k)) for ref, k in matching.pairs], matching.distances, THRESHOLD.default)
    alpha, params = np.ascontiguousarray(model.alpha[order]), with_names(model.params, names)
    if model.counts is not None:  # the counts keep the run's ids, and the order their phi and theta take
        moved = dataclasses.replace(model, phi=None, theta=None, alpha=alpha, params=params,
                                    counts=model.counts.reordered(order))
    else:
        moved = dataclasses.replace(model, phi=np.ascontiguousarray(model.phi[order]),
                                    theta=np.ascontiguousarray(model.theta[:, order]), alpha=alpha, params=params)
    return moved, order, matching


def prevalence(model: Model) -> np.ndarray:
    """Each topic's share of the training documents (mean of theta's column), (K,); the prior's
    mean for a model without its documents. Added up a block of documents at a time in their
    order, which is how ``theta.mean(axis=0)`` adds them (the same bytes), without making theta."""
    D = model.n_docs
    if D == 0:
        return model.alpha / model.alpha.sum()
    total = None
    for _, block in model.theta_blocks():
        total = block.sum(axis=0) if total is None else np.concatenate([total[None], block]).sum(axis=0)
    return total / D


def lineage_of(a: Model, b: Model, a_sha256: str | None) -> dict | None:
    """What B records of descending from A, when it was warm-started from A's file (its lineage
    names ``a_sha256``, the SHA-256 of A's file): ``descent`` (for each of B's topics the A
    topic it continues, None for one added; after B's topics were renumbered by ``--align-to``,
    in their new order), ``added`` (B's ids) and ``removed`` (A's ids); else None."""
    ws = b.params.get("warm_start") or {}
    if a_sha256 is None or not isinstance(ws, dict) or ws.get("sha256") != a_sha256 or "descent" not in ws:
        return None
    descent, removed = list(ws["descent"]), ws.get("removed")
    continued = [d for d in descent if d is not None]
    if len(descent) != b.n_topics or not isinstance(removed, list) or \
            sorted(continued + removed) != list(range(a.n_topics)):
        return None  # not this pair of models after all (a file edited by hand): each of A's topics is
        # continued by one of B's or removed
    order = (b.params.get("aligned_to") or {}).get("order")
    if order is not None:  # train --warm-start --align-to: B's topic i was topic order[i] when it descended
        if sorted(order) != list(range(b.n_topics)):
            return None
        descent = [descent[i] for i in order]
    return {"added": [k for k, d in enumerate(descent) if d is None], "removed": list(removed), "descent": descent}


def diff_models(a: Model, b: Model, *, top_words: int = TOP_WORDS.default,
                threshold: float = THRESHOLD.default, a_sha256: str | None = None) -> dict:
    """A JSON-able comparison of A and B: for each pair of topics (A's order), the distance, how
    many of their top ``top_words`` words they share (``overlap``), the words among B's top
    words that were not among A's (gained) and the reverse (lost), the prevalence in each and
    each topic's name; pairs further than ``threshold`` apart, and topics left over, are listed
    as having no counterpart (``only_in_a``, ``only_in_b``).

    Topics are paired by the Hungarian matching (``pairing``: ``"matching"``), unless B was
    warm-started from A (``a_sha256``, the SHA-256 of A's file, is the one B's lineage
    records): then each of B's topics is paired with the A topic it continues (``pairing``:
    ``"descent"``), and the topics B added (``added``, B's ids) and the A topics it removed
    (``removed``, A's ids; ``train --add-topics/--remove-topics``) are listed as such, paired
    with nothing and in neither ``only_in`` list; ``warm_start`` holds the lineage
    (:func:`lineage_of`)."""
    top_words, unmatched = TOP_WORDS.check(top_words), THRESHOLD.check(threshold)
    a, b = as_model(a, argument="a"), as_model(b, argument="b")
    lineage = lineage_of(a, b, a_sha256)
    if lineage is None:
        matching = match_topics(a, b)
        pairs, distances = matching.pairs, matching.distances
        left_a, left_b = matching.unmatched_a, matching.unmatched_b
    else:
        phi_a, phi_b, _ = common_topics(a, b)
        pairs = sorted((d, k) for k, d in enumerate(lineage["descent"]) if d is not None)
        distances = js_distance_rows(phi_a[[p for p, _ in pairs]], phi_b[[q for _, q in pairs]])
        left_a, left_b = [], []
    tops_a, tops_b = a.top_words(top_words), b.top_words(top_words)
    prev_a, prev_b = prevalence(a), prevalence(b)
    names_a, names_b = a.topic_names, b.topic_names
    topics = []
    for (ka, kb), d in zip(pairs, distances):
        words_a, words_b = [w for w, _ in tops_a[ka]], [w for w, _ in tops_b[kb]]
        topics.append({
            "a": ka, "b": kb, "name_a": names_a[ka], "name_b": names_b[kb], "distance": float(d),
            "matched": bool(d <= unmatched), "overlap": len(set(words_a) & set(words_b)),
            "top_words_a": words_a, "top_words_b": words_b,
            "gained": [w for w in words_b if w not in words_a], "lost": [w for w in words_a if w not in words_b],
            "prevalence_a": float(prev_a[ka]), "prevalence_b": float(prev_b[kb]),
        })
    matched = [t for t in topics if t["matched"]]
    return {
        "topics": topics,
        "pairing": "matching" if lineage is None else "descent",
        "only_in_a": sorted(left_a + [t["a"] for t in topics if not t["matched"]]),
        "only_in_b": sorted(left_b + [t["b"] for t in topics if not t["matched"]]),
        "added": [] if lineage is None else lineage["added"],
        "removed": [] if lineage is None else lineage["removed"],
        "renumbered": sum(1 for t in matched if t["a"] != t["b"]),
        "max_distance": float(max((t["distance"] for t in matched), default=0.0)),
        "median_distance": float(np.median([t["distance"] for t in matched])) if matched else 0.0,
        "threshold": unmatched,
        "top_words": top_words,
        "warm_start": lineage,
    }


def drifted(result: dict, max_drift: float | None) -> list[dict]:
    """The paired topics of a :func:`diff_models` result that moved further than ``max_drift``
    (none without one): matched or not (a topic that became another is the largest move), but
    never a topic added or removed by a warm start, which is paired with nothing."""
    if max_drift is None:
        return []
    return [t for t in result["topics"] if t["distance"] > max_drift]
