"""``ldacli history``: the models of a schedule of retrains read in order, each topic followed
across them.

A *topic of the history* is one topic followed from the model where it first appears to the last
one that has it; its id in the history (``topic``) is its id in the first model for the first
model's topics, and the next free number for each topic born later, in the order of the
models and of their ids (so a schedule that only adds topics keeps every id). In each model it
has its own ``id`` (a removal moves the later ids down), its share (the mean of its column of
theta over the model's training documents, what ``diff`` calls prevalence), its name and top
words, and its drift from the model before: the Jensen-Shannon distance between its two word
distributions (base 2, words matched by string), as ``diff`` measures it
(:func:`ldacli.diff.js_distance_rows`).

Each model is paired with the one before it, in the first way that applies:

* ``descent``: it was warm-started from that model's file (its lineage names the file's
  SHA-256): each topic continues the one it descends from, topics ``--add-topics`` added are
  born ("added") and those ``--remove-topics`` removed die ("removed"), as
  :func:`ldacli.diff.lineage_of` reads the lineage; a topic that moved far is still the same
  topic, with a large drift;
* ``aligned``: it was trained with ``--align-to`` that model, and has at least its topics:
  topic k continues topic k;
* ``matching``: neither (models trained apart, or a parent missing from the list): the topics
  are paired by ``diff``'s matching (:func:`ldacli.diff.match_topics`: Hungarian, on the
  Jensen-Shannon distance; the whole K x K matrix, the only costly step).

Without a recorded descent, a pair further apart than the threshold (``diff --threshold``,
0.7) is no pair: the old topic dies and the new one is born ("no counterpart"), as are the
topics left over when the numbers of topics differ. However it was paired, a topic is one topic of
the history only while its words stay within the threshold: of its words in the model before, and of
its words in the model where it was born (a topic that moves a little each night, from one subject
to another, is not followed through the change). Beyond either, the topic dies and the one it
became is born, both "meaning changed", with the distance and each other's topic (``became``,
``came_from``): a descent says where a topic came from, not that it still means the same.

The models are read one at a time (their files' params and SHA-256 first, to order them, then
each model whole), and only the previous model's topics are kept beside the current one's, with
each living topic's words where it was born (a row per topic over the words seen so far): memory
does not grow with the number of models. Their order is the lineage's (each model after
the model it was warm-started from or aligned to, when that is among them; otherwise by the
files' modification times, then as given), or as given. A folder or a pattern takes the models of
this user, of root and of the folder's owner: a model another user put in a folder others can
write (with an old date, it would be the history's first) is skipped and said in the notes; a
model named by its path is read whoever's it is.
"""

from __future__ import annotations

import dataclasses
import datetime
import glob
import heapq
import os
import re
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ldacli import checks
from ldacli.diff import THRESHOLD, common_topics, js_distance_rows, lineage_of, match_topics, prevalence
from ldacli.errors import InputError, LdacliError, SettingError
from ldacli.escaping import printable
from ldacli.files.fileio import file_sha256, open_regular, stranger
from ldacli.model import TOP_WORDS, Model, pandas_module
from ldacli.files.npz import file_kind
from ldacli.settings import Choice, Setting
from ldacli.signatures import takes_settings
from ldacli.files.tables import Table, batched

ORDER = Setting("order", Choice(("lineage", "given")), "lineage",
                "The models' order: lineage (each model after the one it was warm-started from or aligned to, "
                "when that is among them; else by the files' modification times, then as given) or given (as "
                "listed; a folder's or a pattern's files by name).")
SETTINGS = (ORDER, TOP_WORDS, THRESHOLD)
MODELS_KINDS = "a model file's path, a folder of model files, a glob pattern, or a list of these"
GLOB = re.compile(r"[*?[]")
# How a topic came and went.
FIRST, ADDED, REMOVED, UNPAIRED = "first model", "added", "removed", "no counterpart"
CHANGED = "meaning changed"
PAIRINGS = {"descent": "warm-started from the previous model: topics paired by their recorded descent",
            "aligned": "aligned to the previous model (--align-to): topic k continues topic k",
            "matching": "not warm-started from the previous model: topics paired by diff's matching"}


# --- which models, in which order --------------------------------------------------------------------

def _kind(path: str) -> tuple[str | None, int | None]:
    """The kind of the ldacli file at ``path`` (None: not one, or unreadable) and, when another
    user put it in its folder (:func:`~ldacli.files.fileio.stranger`), that user's id."""
    try:
        with open_regular(path) as f:
            return file_kind(f), stranger(os.fstat(f.fileno()), os.path.dirname(path))
    except (OSError, InputError):
        return None, None


class ModelFiles(NamedTuple):
    """The model files a list of models names (:func:`model_files`): their ``paths`` and the
    ``notes`` on what was skipped."""

    paths: list[str]
    notes: list[str]


def model_files(models) -> ModelFiles:
    """The model files that ``models`` names (a path, a folder, a glob pattern, or a list of
    these): a folder's and a pattern's ``.npz`` files that are ldacli models, by name (hidden
    files, other kinds of file and models another user put there skipped, and said in the
    notes: in a folder others can write, a model planted with an old date would be the
    history's first); a path as it is, whoever's. Returns the paths and the notes; ``models``
    already a :class:`ModelFiles`, as it is."""
    if isinstance(models, ModelFiles):
        return models
    if isinstance(models, (str, os.PathLike)):
        models = [models]
    elif not isinstance(models, Iterable) or isinstance(models, (bytes, dict)):
        raise SettingError("models", f"models must be {MODELS_KINDS}, found {type(models).__name__}")
    models = list(models)
    if not models:
        raise SettingError("models", f"models must be {MODELS_KINDS}, found an empty list")
    paths: list[str] = []
    notes: list[str] = []
    for given in models:
        path = checks.path("models", given, MODELS_KINDS)
        if os.path.isdir(path):
            found = sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".npz") and not n.startswith("."))
            what = "in this folder"
        elif not os.path.lexists(path) and GLOB.search(path):
            found = sorted(p for p in glob.glob(path) if os.path.isfile(p))
            what = "matching this pattern"
        else:
            paths.append(path)
            continue
        kinds = {p: _kind(p) for p in found}
        kept = [p for p in found if kinds[p] == ("model", None)]
        strangers = [f"{os.path.basename(p)} (uid {uid})" for p, (kind, uid) in kinds.items()
                     if kind == "model" and uid is not None]
        skipped = (f"{len(strangers)} model(s) another user put there, read only when named: "
                   f"{', '.join(strangers[:3])}" + (", ..." if len(strangers) > 3 else "")) if strangers else ""
        if not kept:
            raise InputError(path, None, f"expected ldacli model files (.npz) {what}, found none"
                                         + (f" (skipped {skipped})" if skipped else ""))
        others = [os.path.basename(p) for p, (kind, _) in kinds.items() if kind != "model"]
        if others:
            notes.append(f"{path}: skipped {len(others)} file(s) that are not models: {', '.join(others[:3])}"
                         + (", ..." if len(others) > 3 else ""))
        if skipped:
            notes.append(f"{path}: skipped {skipped}")
        paths += kept
    return ModelFiles(paths, notes)


@dataclasses.dataclass
class _File:
    path: str
    sha256: str
    params: dict
    modified: float
    given: int


def _ancestors(params: dict) -> list[str]:
    """The SHA-256s of the files a model records descending from, nearest first: the file it
    was warm-started from, or else aligned to, then the older generations of its lineage."""
    out = []
    for key in ("warm_start", "aligned_to"):
        entry = params.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
            out.append(entry["sha256"])
            break
    lineage = params.get("lineage")
    if isinstance(lineage, list):
        out += [e["sha256"] for e in lineage if isinstance(e, dict) and isinstance(e.get("sha256"), str)]
    return out


def _nearest(params: dict, index: dict[str, int]) -> int | None:
    """Which of ``index``'s files (SHA-256 -> position) is a model's nearest recorded ancestor."""
    return next((index[sha] for sha in _ancestors(params) if sha in index), None)


def _files(paths: list[str], notes: list[str]) -> list[_File]:
    """Each model file's params, SHA-256 and modification time; a file given twice (or two
    copies of one file) once."""
    files: list[_File] = []
    seen: dict[str, str] = {}
    for path in paths:
        params = Model.read_params(path)
        try:
            sha, modified = file_sha256(path), os.stat(path).st_mtime
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
        if sha in seen:
            notes.append(f"{path}: skipped, the same file as {seen[sha]}")
            continue
        seen[sha] = path
        files.append(_File(path, sha, params, modified, len(files)))
    return files


def lineage_order(files: list[_File]) -> list[_File]:
    """``files`` with each model after the one it was warm-started from or aligned to, or its
    nearest ancestor among them when that one is not (a schedule whose middle models were
    deleted), and otherwise by modification time, then as given: the models whose parents are
    placed are taken earliest first."""
    index = {f.sha256: i for i, f in enumerate(files)}
    children: dict[int, list[int]] = {}
    roots = []
    for i, f in enumerate(files):
        parent = _nearest(f.params, index)
        if parent is None or parent == i:
            roots.append(i)
        else:
            children.setdefault(parent, []).append(i)
    ready = [(files[i].modified, i) for i in roots]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for c in children.get(i, []):
            heapq.heappush(ready, (files[c].modified, c))
    order += [i for i in range(len(files)) if i not in set(order)]  # a cycle: only a SHA-256 collision makes one
    return [files[i] for i in order]


# --- following the topics ----------------------------------------------------------------------------

@dataclasses.dataclass
class _Topic:
    """One topic of the history, with a value per model (None where it does not exist)."""

    topic: int
    born: int
    how_born: str
    steps: int
    died: int | None = None
    how_died: str | None = None
    came_from: int | None = None
    became: int | None = None
    ids: list = dataclasses.field(default_factory=list)
    names: list = dataclasses.field(default_factory=list)
    shares: list = dataclasses.field(default_factory=list)
    drifts: list = dataclasses.field(default_factory=list)
    words: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        for field in ("ids", "names", "shares", "drifts", "words"):
            setattr(self, field, [None] * self.steps)


def _paired(prev: Model, prev_sha: str, model: Model, threshold: float):
    """How ``model`` is paired with ``prev``: ``(pairing, pairs, distances, born, died)``, pairs
    ``(prev id, id)``, born ``(id, how, distance, prev id)`` and died ``(prev id, how, distance,
    id)`` (the distance and the other id of a pair too far apart to be one; else None)."""
    lineage = lineage_of(prev, model, prev_sha)
    if lineage is not None:
        pairs = [(d, k) for k, d in enumerate(lineage["descent"]) if d is not None]
        return ("descent", pairs, _distances(prev, model, pairs), [(k, ADDED, None, None) for k in lineage["added"]],
                [(k, REMOVED, None, None) for k in lineage["removed"]])
    aligned = model.params.get("aligned_to")
    if isinstance(aligned, dict) and aligned.get("sha256") == prev_sha and model.n_topics >= prev.n_topics:
        pairing, pairs = "aligned", [(k, k) for k in range(prev.n_topics)]
        distances, left_a, left_b = _distances(prev, model, pairs), [], list(range(prev.n_topics, model.n_topics))
    else:
        matching = match_topics(prev, model)
        pairing, pairs, distances = "matching", matching.pairs, matching.distances
        left_a, left_b = matching.unmatched_a, matching.unmatched_b
    far = [(p, float(d)) for p, d in zip(pairs, distances) if d > threshold]
    kept = [(p, d) for p, d in zip(pairs, distances) if d <= threshold]
    born = [(k, UNPAIRED, None, None) for k in left_b] + [(b, UNPAIRED, d, a) for (a, b), d in far]
    died = [(k, UNPAIRED, None, None) for k in left_a] + [(a, UNPAIRED, d, b) for (a, b), d in far]
    return pairing, [p for p, _ in kept], np.array([d for _, d in kept]), sorted(born), sorted(died)


class _Births:
    """Each living topic of the history's words in the model where it was born, over the words of
    every model read so far (a row per topic, widened as new words come): what a topic is compared
    with to tell whether it still means what it meant."""

    def __init__(self):
        self.index: dict[str, int] = {}
        self.rows: dict[int, np.ndarray] = {}

    def over_words(self, model: Model) -> np.ndarray:
        """``model``'s topics (K, words so far), its new words added to the words so far."""
        for w in model.vocab:
            self.index.setdefault(w, len(self.index))
        phi = np.zeros((model.n_topics, len(self.index)))
        phi[:, [self.index[w] for w in model.vocab]] = model.phi
        return phi

    def distances(self, topics: list[int], phi: np.ndarray, ids: list[int]) -> np.ndarray:
        """The distance of each topic of the history from its words at birth to ``phi[ids]``."""
        if not topics:
            return np.zeros(0)
        born = np.zeros((len(topics), phi.shape[1]))
        for i, t in enumerate(topics):
            row = self.rows[t]
            born[i, :row.size] = row
        return js_distance_rows(born, phi[ids])

    def keep(self, following: dict[int, int], phi: np.ndarray) -> None:
        """The rows of the topics alive in the model just read (``following``: id -> topic), the
        topics born there taking their words there."""
        self.rows = {t: self.rows[t] if t in self.rows else phi[k].copy() for k, t in following.items()}


def _distances(prev: Model, model: Model, pairs: list[tuple[int, int]]) -> np.ndarray:
    """The Jensen-Shannon distance of each pair (prev id, id), over both vocabularies."""
    if not pairs:
        return np.zeros(0)
    phi_a, phi_b, _ = common_topics(prev, model)
    return js_distance_rows(phi_a[[a for a, _ in pairs]], phi_b[[b for _, b in pairs]])


def _modified(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(timespec="seconds")


def read_history(models, *, order: str = ORDER.default, top_words: int = TOP_WORDS.default,
                 threshold: float = THRESHOLD.default, progress=None) -> dict:
    """Follow the topics of ``models`` (what :func:`model_files` takes, or gave) across them, as the
    module docstring says. Returns a JSON-able dict: ``models`` (one entry per model, in
    order: ``step``, ``path``, ``sha256``, ``modified``, sizes, ``parent`` (the step of the
    model it was warm-started from or aligned to, or of its nearest recorded ancestor, when
    listed), ``pairing`` and its ``note``,
    the ids ``born`` and ``died``, the drift's median and max), ``topics`` (one entry per topic
    of the history: ``topic``, ``born``, ``how_born``, ``died``, ``how_died`` and, per model,
    ``ids``, ``names``, ``shares``, ``drifts``, ``words``; None where it does not exist),
    ``events`` (births and deaths after the first model, by step: ``how``, ``distance`` (why a
    pair is none: the larger of its drift and its distance from its words at birth), ``drift`` (from
    the model before), ``nearest``: the other id of that pair), ``notes`` and the settings. Topics
    whose meaning changed name each other (``became``, ``came_from``).
    ``progress``: a function called with each model's path as it is read."""
    order, top_words, threshold = ORDER.check(order), TOP_WORDS.check(top_words), THRESHOLD.check(threshold)
    paths, notes = model_files(models)
    files = _files(paths, notes)
    if order == "lineage":
        files = lineage_order(files)
    steps = len(files)
    step_of = {f.sha256: s for s, f in enumerate(files)}
    topics: list[_Topic] = []
    entries: list[dict] = []
    events: list[dict] = []
    current: dict[int, int] = {}  # id in the previous model -> topic of the history
    prev: Model | None = None
    births = _Births()
    for step, f in enumerate(files):
        if progress is not None:
            progress(f.path)
        model = Model.load(f.path)
        shares, tops, names = prevalence(model), model.top_words(top_words), model.topic_names
        parent = _nearest(model.params, step_of)
        entry = {"step": step, "path": f.path, "sha256": f.sha256, "modified": _modified(f.modified),
                 "n_topics": model.n_topics, "n_docs": model.n_docs,
                 "n_tokens": model.params.get("n_tokens"), "method": model.params.get("method"),
                 "iterations_done": model.params.get("iterations_done"),
                 "parent": parent if parent != step else None, "pairing": None, "note": None,
                 "born": [], "died": [], "median_drift": None, "max_drift": None}
        phi = births.over_words(model)
        changed: dict[int, int] = {}  # id here -> the topic of the history it was, for a topic whose meaning changed
        moved: dict[int, float] = {}  # id before -> its drift to this model, for a topic whose meaning changed
        if prev is None:
            following = {}
            born = [(k, FIRST, None, None) for k in range(model.n_topics)]
            died = []
        else:
            pairing, pairs, distances, born, died = _paired(prev, files[step - 1].sha256, model, threshold)
            entry["pairing"] = pairing
            entry["note"] = PAIRINGS[pairing]
            if pairing != "descent" and parent is not None and parent != step - 1:
                entry["note"] += f" (its nearest recorded ancestor here is the model of step {parent})"
            if len(distances):
                entry["median_drift"], entry["max_drift"] = float(np.median(distances)), float(np.max(distances))
            since_born = births.distances([current[a] for a, _ in pairs], phi, [b for _, b in pairs])
            following = {}
            for (a, b), d, far in zip(pairs, distances, since_born):
                t = topics[current[a]]
                if max(d, far) > threshold:  # the same topic by descent or matching, but not in meaning
                    died.append((a, CHANGED, float(max(d, far)), b))
                    born.append((b, CHANGED, float(max(d, far)), a))
                    changed[b], moved[a] = t.topic, float(d)
                    continue
                t.drifts[step] = float(d)
                following[b] = t.topic
            born.sort()
            died.sort()
            for a, how, d, b in died:
                t = topics[current[a]]
                t.died, t.how_died = step, how
                events.append({"step": step, "event": "died", "topic": t.topic, "id": a, "how": how, "distance": d,
                               "drift": moved.get(a, d), "nearest": b, "words": t.words[step - 1]})
            entry["died"] = [a for a, _, _, _ in died]
        for k, how, d, a in born:
            t = _Topic(len(topics), step, how, steps)
            topics.append(t)
            following[k] = t.topic
            if k in changed:
                t.came_from, topics[changed[k]].became = changed[k], t.topic
            if step:
                events.append({"step": step, "event": "born", "topic": t.topic, "id": k, "how": how, "distance": d,
                               "drift": moved.get(a, d) if how == CHANGED else d, "nearest": a,
                               "words": [w for w, _ in tops[k]]})
        entry["born"] = [k for k, _, _, _ in born] if step else []
        births.keep(following, phi)
        for k, topic in following.items():
            t = topics[topic]
            t.ids[step], t.names[step], t.shares[step] = k, names[k], float(shares[k])
            t.words[step] = [w for w, _ in tops[k]]
        current = following
        entries.append(entry)
        # what the next step needs of this model: its topics and words, not its documents
        prev = dataclasses.replace(model, theta=np.zeros((0, model.n_topics)))
        del model
    events.sort(key=lambda e: (e["step"], e["event"] != "died", e["topic"]))
    return {"models": entries, "topics": [dataclasses.asdict(t) for t in topics], "events": events,
            "order": order, "threshold": threshold, "top_words": top_words, "notes": notes}


def drifted(result: dict, max_drift: float | None) -> list[dict]:
    """Where a topic moved further than ``max_drift`` from one model to the next: the paired
    topics (``step``, ``topic``, ``id_before``, ``id``, ``drift``), and pairs whose old topic died
    and new one was born (pairs of the matching further apart than the threshold, and topics whose
    meaning changed: ``became``, the topic born; the distance of the pair from one model to the next
    as the drift); never a topic added or removed by a warm start."""
    if max_drift is None:
        return []
    out = []
    for t in result["topics"]:
        for step, d in enumerate(t["drifts"]):
            if d is not None and d > max_drift:
                out.append({"step": step, "topic": t["topic"], "id_before": t["ids"][step - 1], "id": t["ids"][step],
                            "drift": d, "became": None})
    events = result["events"]
    born = {(e["step"], e["id"]): e["topic"] for e in events if e["event"] == "born"}
    for e in events:
        if e["event"] == "died" and e["drift"] is not None and e["drift"] > max_drift:
            out.append({"step": e["step"], "topic": e["topic"], "id_before": e["id"], "id": e["nearest"],
                        "drift": e["drift"], "became": born[e["step"], e["nearest"]]})
    return sorted(out, key=lambda x: (x["step"], x["topic"]))


# --- tables ------------------------------------------------------------------------------------------

TOPIC_COLUMNS = [("step", "int"), ("model", "str"), ("topic", "int"), ("id", "int"), ("name", "str"),
                 ("share", "float"), ("drift", "float"), ("event", "str"), ("top_words", "str_list")]
MODEL_COLUMNS = [("step", "int"), ("model", "str"), ("sha256", "str"), ("modified", "str"), ("n_topics", "int"),
                 ("n_docs", "int"), ("pairing", "str"), ("parent", "int"), ("born", "int"), ("died", "int"),
                 ("median_drift", "float"), ("max_drift", "float")]
EVENT_COLUMNS = [("step", "int"), ("model", "str"), ("event", "str"), ("topic", "int"), ("id", "int"),
                 ("how", "str"), ("distance", "float"), ("top_words", "str_list")]


def topics_table(result: dict) -> Table:
    """One row per topic of the history and model that has it (by step, then topic):
    ``step``, ``model``, ``topic``, ``id`` (in that model), ``name``, ``share``, ``drift``
    (empty where the topic is born), ``event`` (how it was born, at that step; else empty)
    and ``top_words``."""
    models = result["models"]

    def rows():
        for step, m in enumerate(models):
            for t in result["topics"]:
                if t["ids"][step] is None:
                    continue
                yield (step, m["path"], t["topic"], t["ids"][step], t["names"][step] or "", t["shares"][step],
                       t["drifts"][step], t["how_born"] if t["born"] == step else "", t["words"][step])

    return Table(TOPIC_COLUMNS, batched(rows()))


def models_table(result: dict) -> Table:
    """One row per model: its step, path, SHA-256, modification time, sizes, how it was paired
    with the one before (``parent``: the step of the model it descends from or was aligned to,
    -1 when none is listed), how many topics were born and died, and the drift's median and max."""
    return Table(MODEL_COLUMNS, [[
        (m["step"], m["path"], m["sha256"], m["modified"], m["n_topics"], m["n_docs"], m["pairing"] or "",
         -1 if m["parent"] is None else m["parent"], len(m["born"]), len(m["died"]), m["median_drift"],
         m["max_drift"]) for m in result["models"]]])


def events_table(result: dict) -> Table:
    """One row per birth and death after the first model."""
    paths = [m["path"] for m in result["models"]]
    return Table(EVENT_COLUMNS, [[
        (e["step"], paths[e["step"]], e["event"], e["topic"], e["id"], e["how"], e["distance"], e["words"])
        for e in result["events"]]])


def as_arrays(table: Table) -> dict[str, np.ndarray]:
    """``table``'s columns as NumPy arrays: integers int64, numbers float64 (NaN where empty),
    text as strings, word lists as an object array of lists."""
    rows = list(table.rows())
    out = {}
    for i, (name, kind) in enumerate(table.columns):
        values = [r[i] for r in rows]
        if kind == "float":
            out[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        elif kind == "int":
            out[name] = np.array(values, dtype=np.int64)
        elif kind == "str":
            out[name] = np.array(values, dtype=np.str_) if values else np.zeros(0, dtype=np.str_)
        else:
            out[name] = np.empty(len(values), dtype=object)
            out[name][:] = values
    return out


def as_frame(table: Table):
    """``table`` as a pandas DataFrame (the ``pandas`` extra), empty numbers as NaN."""
    pd = pandas_module()
    rows = list(table.rows())
    frame = pd.DataFrame(rows, columns=table.names)
    for name, kind in table.columns:
        if kind == "float":
            frame[name] = pd.to_numeric(frame[name]).astype("float64")
        elif kind == "int":
            frame[name] = frame[name].astype("int64")
    return frame


def frames(tables: dict[str, Table], as_frame_: bool | None):
    """The tables as DataFrames (``as_frame_`` True, or None and pandas is installed) or as
    dicts of arrays."""
    if as_frame_ is None:
        try:
            pandas_module()
            as_frame_ = True
        except LdacliError:
            as_frame_ = False
    checks.flag("as_frame", as_frame_)
    return {name: as_frame(t) if as_frame_ else as_arrays(t) for name, t in tables.items()}


@dataclasses.dataclass
class TopicHistory:
    """What :func:`history` found, as three tables (pandas DataFrames, or dicts of NumPy arrays
    without pandas): ``topics``, one row per topic of the history and model that has it
    (:func:`topics_table`); ``models``, one row per model (:func:`models_table`); ``events``,
    the births and deaths (:func:`events_table`); and ``result``, everything as plain data (what
    ``ldacli history --format json`` prints)."""

    topics: object
    models: object
    events: object
    result: dict

    def __repr__(self) -> str:
        r = self.result
        return (f"<TopicHistory: {len(r['models'])} models, {len(r['topics'])} topics, "
                f"{sum(e['event'] == 'born' for e in r['events'])} born and "
                f"{sum(e['event'] == 'died' for e in r['events'])} died after the first model>")


@takes_settings(SETTINGS)
def history(models, *, as_frame: bool | None = None, **given) -> TopicHistory:
    """Follow each topic across the models of a schedule (``ldacli history``): its id, share,
    name, top words and drift in each model, when it was born and when it died.

    ``models``: a model file's path, a folder of model files, a glob pattern (``"models/*.npz"``),
    or a list of these. The models are read one at a time and paired each with the one before:
    by the descent a warm start records (``--add-topics`` added, ``--remove-topics`` removed), by
    id after ``--align-to``, else by ``diff``'s matching. ``as_frame``: pandas DataFrames (the
    default when pandas is installed) or dicts of NumPy arrays (the default without it).

    >>> h = ldacli.history("models/")                                        # doctest: +SKIP
    >>> h.topics.pivot(index="step", columns="topic", values="share")          # doctest: +SKIP
    """
    result = read_history(models, **given)
    tables = frames({"topics": topics_table(result), "models": models_table(result),
                     "events": events_table(result)}, as_frame)
    return TopicHistory(tables["topics"], tables["models"], tables["events"], result)


# --- text for people ----------------------------------------------------------------------------------

SPARKS = "▁▂▃▄▅▆▇█"
def sparkline(values: list, low: float | None = None, high: float | None = None) -> str:
    """``values`` as a row of block characters (a space where a value is None), from ``low``
    (default: the smallest) to ``high`` (the largest)."""
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    low = min(present) if low is None else low
    high = max(present) if high is None else high
    span = high - low
    return "".join(" " if v is None else SPARKS[0 if span <= 0 else min(7, int((v - low) / span * 7.999))]
                   for v in values)


def text_lines(result: dict, *, words: int = 8) -> Iterable[str]:
    """The history for people: the models and how each was paired, then each topic's shares as
    a sparkline, its first and last share, its largest drift and its last top words."""
    models, topics = result["models"], result["topics"]
    yield (f"{len(models)} model{'s' if len(models) != 1 else ''}, {len(topics)} topics over the history (ordered "
           f"{'by lineage and modification time' if result['order'] == 'lineage' else 'as given'})")
    width = max(len(printable(m["path"])) for m in models)
    yield f"{'step':>4}  {'model':<{width}}  {'topics':>6}  {'paired by':<9}  drift median / max  born / died"
    for m in models:
        drift = "" if m["max_drift"] is None else f"{m['median_drift']:.3f} / {m['max_drift']:.3f}"
        changes = ", ".join([f"+{k}" for k in m["born"]] + [f"-{k}" for k in m["died"]])
        yield (f"{m['step']:>4}  {printable(m['path']):<{width}}  {m['n_topics']:>6}  {m['pairing'] or '-':<9}  "
               f"{drift:<18}  {changes or '-'}")
    for m in models:
        if m["pairing"] and m["pairing"] != "descent":
            yield f"step {m['step']}: {m['note']}"
    if result["events"]:
        yield "births and deaths (ids in the model of that step; + born, - died):"
        for e in result["events"]:
            sign = "+" if e["event"] == "born" else "-"
            far = f", JS {e['distance']:.3f} from its best match" if e["distance"] is not None else ""
            if e["how"] == CHANGED:
                t = topics[e["topic"]]
                far = (f", JS {e['distance']:.3f}: " + (f"became topic {t['became']}" if e["event"] == "died"
                                                         else f"was topic {t['came_from']}"))
            yield (f"  step {e['step']:>3}  {sign} topic {e['topic']} (id {e['id']}, {e['how']}{far}): "
                   + " ".join(printable(w) for w in (e["words"] or [])[:words]))
    # one scale for every topic's sparkline (0 to the largest share of any), so that rows compare
    high = max((s for t in topics for s in t["shares"] if s is not None), default=0.0)
    yield (f"topics: share in each model (one mark per step, one scale: 0 to {100 * high:.1f}%), first and last "
           f"share, largest drift, last top words:")
    tw = max(len(str(t["topic"])) for t in topics)
    for t in topics:
        present = [s for s in t["shares"] if s is not None]
        last = max(i for i, s in enumerate(t["shares"]) if s is not None)
        drifts = [(d, i) for i, d in enumerate(t["drifts"]) if d is not None]
        worst = max(drifts) if drifts else None
        name = t["names"][last]
        life = ""
        if t["born"]:
            life += f" born at step {t['born']} ({t['how_born']}" + (
                f": was topic {t['came_from']})" if t.get("came_from") is not None else ")")
        if t["died"] is not None:
            life += f" died at step {t['died']} ({t['how_died']}" + (
                f": became topic {t['became']})" if t.get("became") is not None else ")")
        yield (f"  topic {t['topic']:>{tw}}{(' ' + printable(name)) if name else ''}: {sparkline(t['shares'], 0.0, high)}  "
               f"{100 * present[0]:.1f}% -> {100 * present[-1]:.1f}%"
               + (f", max drift {worst[0]:.3f} (step {worst[1]})" if worst else "") + life + ": "
               + " ".join(printable(w) for w in t["words"][last][:words]))
