"""What a model or checkpoint file holds, summarised: ``ldacli info`` and :func:`describe`.

Files of every method and of every readable format version are described the same way: the
method and its own settings, the steps asked for and done and why training stopped, sizes, the
priors and how they were arrived at (set, learned, estimated), provenance and the trace.
"""

from __future__ import annotations

import os

import numpy as np

from ldacli import checks
from ldacli.corpora.formats.read import READING
from ldacli.errors import InputError
from ldacli.methods.driver import SETTINGS as TRAIN
from ldacli.methods.driver import checked_record, method_settings
from ldacli.methods.registry import METHODS
from ldacli.model import Checkpoint, Model
from ldacli.files.npz import kind_at
from ldacli.settings import Text, Texts

# Up to this many topics, every alpha is listed in the text output (JSON always lists them).
ALPHA_LISTED = 10

PROVENANCE = ("ldacli_version", "seed", "corpus_source", "corpus_format", "corpus_fingerprint")
STOPPING = ("stopped_early", "stop_reason", "best_iteration", "best_heldout_perplexity",
            "holdout", "patience", "max_seconds")
# Shown on lines of their own, not among the other parameters.
SHOWN = {"update", "half_life", "topic_names", "seeded", "topic_word_prior", "seed_words", "seed_strength", "method", "iterations", "iterations_done", "stopped", "lineage", "warm_start", "id_stability", "n_topics", "n_words", "n_docs", "n_tokens", "alpha",
         "beta", "loglik_every", "trace", "snapshot_sweeps", *STOPPING}


# The settings a file records as paths (absolute: settings.recorded), from their declarations.
PATHS = {s.name for s in TRAIN + method_settings() + READING
         if isinstance(s.type, Texts) or (isinstance(s.type, Text) and s.type.path)}


def file_name(path) -> str:
    """How info's text and the HTML pages show the path of a file that a file records (the
    training corpus, a warm start's parent, a stop list, ...): its name, without the folders of
    the machine it was made on, which say where someone keeps their files and which a page
    passed on would show to everyone. ``-``, ``<stdin>`` and names are shown as they are."""
    return os.path.basename(path) if isinstance(path, str) and os.path.isabs(path) else str(path)


def shown(name: str, value):
    """``value`` of the param ``name`` as info's text and the pages show it: the paths a file
    records (:data:`PATHS`, the ``path`` of a link such as ``aligned_to``, a seeded prior's
    ``source``, a tokenizer file's paths) by :func:`file_name`; ``info --format json`` keeps them whole."""
    if name in PATHS:
        return [file_name(v) for v in value] if isinstance(value, (list, tuple)) else file_name(value)
    if name == "tokenizer_file" and isinstance(value, dict):  # its own path, the text's, the stop lists'
        return {k: file_name(v) if k in ("path", "source") else shown(k, v) for k, v in value.items()}
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return {**value, "path": file_name(value["path"])}
    if name == "source" and isinstance(value, str):  # a seeded prior's: a file, or kept from a warm start
        head, _, path = value.rpartition(" ")
        return f"{head} {file_name(path)}".strip() if os.path.isabs(path) else value
    return value


def _trace(method, params: dict, iterations: np.ndarray, values: np.ndarray) -> dict:
    """What the trace measures, how often, and its first, last and best points."""
    out = {"name": params.get("trace", method.trace), "label": method.trace_label, "unit": method.unit,
           "every": params.get("loglik_every", method.DEFAULT_LOGLIK_EVERY), "points": int(values.size)}
    if values.size:
        best = int(np.argmax(values))
        for key, i in (("first", 0), ("last", -1), ("best", best)):
            out[key] = {"iteration": int(iterations[i]), "loglik_per_token": float(values[i])}
    return out


def _priors(method, params: dict, alpha: np.ndarray, beta: float) -> dict:
    sources = method.prior_sources(params)
    return {
        "alpha": {
            "values": [float(a) for a in alpha],
            "symmetric": bool(np.all(alpha == alpha[0])),
            "min": float(alpha.min()), "mean": float(alpha.mean()), "max": float(alpha.max()),
            "sum": float(alpha.sum()),
            "source": sources["alpha"],
        },
        "beta": {"value": float(beta), "source": sources["beta"]},
        "learned": sources != {"alpha": "set", "beta": "set"},
        "initial_alpha": params.get("alpha"),
        "initial_beta": params.get("beta"),
    }


def describe(path: str) -> dict:
    """Summary of the model or checkpoint at ``path`` as a JSON-able dict.

    Keys: ``file``, ``kind``; ``method`` (name, title, its own settings); ``iterations``
    (asked, done, unit, and for a checkpoint the steps done so far); ``parameters`` (every
    stored param but provenance); ``sizes`` (topics, words, documents, tokens); ``priors``
    (alpha values and summary, beta, where each came from: set, learned or estimated, and the
    initial values); ``provenance`` (ldacli version, seed, corpus source, format and
    fingerprint); ``loglik_trace`` (what it measures, every how many steps, points, first, last,
    best); ``topic_names`` when the model names topics (K entries, a name or None), ``seeded``
    when it has seeded topics (``params["seeded"]``); for a
    checkpoint also ``iteration``; ``stopping`` when the run recorded why it stopped.
    Raises :class:`~ldacli.errors.InputError` for a file that is neither.
    """
    path = checks.path("path", path, "the path of a model or checkpoint file")
    kind = kind_at(path)
    if kind == "checkpoint":
        ckpt = Checkpoint.load(path)
        params, alpha, beta = {**ckpt.params, "iterations_done": ckpt.iteration}, ckpt.alpha, ckpt.beta
        iterations, values = ckpt.loglik_iterations, ckpt.loglik_per_token
        n_topics, n_words = int(alpha.size), params.get("n_words")
    else:
        model = Model.load(path, documents=False)
        params, alpha, beta = model.params, model.alpha, model.beta
        iterations, values = model.loglik_iterations, model.loglik_per_token
        n_topics, n_words = model.n_topics, len(model.vocab)
    name = params.get("method", "cgs")
    if name not in METHODS:
        raise InputError(path, None, f"expected a file written by method {', '.join(METHODS)}, found method {name!r}")
    method = METHODS[name]
    checked_record(params, path, "checkpoint" if kind == "checkpoint" else "model")
    out = {
        "file": path,
        "kind": "checkpoint" if kind == "checkpoint" else "model",
        "method": {"name": name, "title": method.title,
                   "settings": {s.name: params.get(s.name) for s in method.SETTINGS}},
        # files of format 1 record no iterations_done; their trace ends at the last step
        "iterations": {"asked": params.get("iterations"),
                       "done": params.get("iterations_done", int(iterations[-1]) if iterations.size else None),
                       "stopped": params.get("stopped"), "unit": method.unit},
        "parameters": {k: v for k, v in sorted(params.items()) if k not in PROVENANCE},
        "sizes": {"topics": n_topics, "words": n_words, "documents": params.get("n_docs"),
                  "tokens": params.get("n_tokens")},
        "priors": _priors(method, params, alpha, beta),
        "provenance": {k: params.get(k) for k in PROVENANCE},
        "loglik_trace": _trace(method, params, iterations, values),
    }
    if kind == "checkpoint":
        out["iteration"] = ckpt.iteration
        out["iterations"]["done"] = ckpt.iteration
    if params.get("topic_names"):
        out["topic_names"] = params["topic_names"]
    if params.get("seeded"):
        out["seeded"] = params["seeded"]
    if params.get("lineage"):
        out["lineage"] = params["lineage"]
        out["warm_start"] = params.get("warm_start")
        out["id_stability"] = params.get("id_stability")
    if isinstance(params.get("update"), dict):
        out["update"] = params["update"]
    stopping = {k: params[k] for k in STOPPING if params.get(k) is not None}
    if stopping:
        out["stopping"] = stopping
    return out


def _alpha_text(a: dict) -> str:
    if a["symmetric"]:
        return f"{a['values'][0]:.6g} per topic (sum {a['sum']:.6g})"
    if len(a["values"]) <= ALPHA_LISTED:
        return "[" + ", ".join(f"{v:.4g}" for v in a["values"]) + f"] (sum {a['sum']:.6g})"
    return f"asymmetric, min {a['min']:.4g}, mean {a['mean']:.4g}, max {a['max']:.4g} (sum {a['sum']:.6g})"


def format_text(info: dict) -> list[str]:
    """The human-readable lines of ``ldacli info`` for a :func:`describe` result; the paths the
    file records by their names (:func:`shown`)."""
    p, s, pr, prov, tr = info["parameters"], info["sizes"], info["priors"], info["provenance"], info["loglik_trace"]
    m, its = info["method"], info["iterations"]
    unit = its["unit"]
    lines = [f"file:             {info['file']} ({info['kind']})"]
    settings = ", ".join(f"{k} {shown(k, v)}" for k, v in m["settings"].items() if v is not None)
    lines.append(f"method:           {m['name']}, {m['title']}" + (f" ({settings})" if settings else ""))
    if info["kind"] == "checkpoint":
        lines.append(f"iteration:        {info['iteration']} of {its['asked']} {unit}s done")
    else:
        stopped = f" (stopped: {its['stopped']})" if its["stopped"] else ""
        lines.append(f"{unit + 's:':<18}{its['done']} done of {its['asked']} asked{stopped}")
        if p.get("snapshot_sweeps"):
            lines.append(f"phi, theta:       the mean of the states of {unit}s "
                         + ", ".join(map(str, p["snapshot_sweeps"])))
    lines.append(f"sizes:            K={s['topics']} topics, V={s['words']} words, D={s['documents']} documents, "
                 f"N={s['tokens']} tokens")
    for name, text in (("alpha", _alpha_text(pr["alpha"])), ("beta", f"{pr['beta']['value']:.6g}")):
        source = pr[name]["source"]
        initial = pr[f"initial_{name}"]
        if isinstance(initial, list) and len(initial) > ALPHA_LISTED:  # (a warm start's or an update's, one a topic)
            initial = f"asymmetric (sum {sum(initial):.6g})"
        start = f"; initial {initial}" if source not in ("set",) and not source.startswith("none") else ""
        lines.append(f"{name + ':':<18}{text}, {source}{start}")
    lines += [
        f"seed:             {prov['seed']}",
        f"corpus:           {file_name(prov['corpus_source'])} ({prov['corpus_format']}), fingerprint "
        f"{prov['corpus_fingerprint']}",
        f"ldacli version:   {prov['ldacli_version']}",
    ]
    if tr["points"]:
        f, la, b = tr["first"], tr["last"], tr["best"]
        lines.append(f"trace:            {tr['label']} (natural log), {tr['points']} points every {tr['every']} "
                     f"{unit}s: first {f['loglik_per_token']:.4f} ({unit} {f['iteration']}), "
                     f"last {la['loglik_per_token']:.4f} ({unit} {la['iteration']}), "
                     f"best {b['loglik_per_token']:.4f} ({unit} {b['iteration']})")
    else:
        lines.append(f"trace:            {tr['label']}, no point recorded yet (one every {tr['every']} {unit}s)")
    if info.get("topic_names"):
        lines.append("topic names:      " + ", ".join(f"{k} {n}" for k, n in enumerate(info["topic_names"])
                                                      if n is not None))
    if info.get("seeded"):
        sd = info["seeded"]
        lines.append("seeded topics:    " + ", ".join(f"{t['topic']} {t['name']} ({len(t['words'])} words"
                                                      + (f", {len(t['unknown'])} not in the vocabulary" if t["unknown"]
                                                         else "") + ")" for t in sd["topics"])
                     + (f"; strength {sd['strength']:g} of each word's count" if sd.get("strength") else "")
                     + f"; from {shown('source', sd['source'])}")
    if "stopping" in info:
        lines.append("stopping:         " + ", ".join(f"{k} {v}" for k, v in info["stopping"].items()))
    up = info.get("update")
    if up:
        lines.append(f"update:           of {file_name(up.get('path'))}: a night of {up.get('night_docs')} documents "
                     f"({up.get('night_tokens')} tokens) added to its {up.get('parent_docs')}; old evidence weighed "
                     f"{up.get('decay'):g}" + (f" (half-life {up.get('half_life'):g} updates)" if up.get("half_life")
                                               else "")
                     + f"; {up.get('since_full')} update{'s' * (up.get('since_full') != 1)} since a full training")
        kept = [f for f in up.get("freed") or [] if isinstance(f, dict) and f.get("kept") is True
                and all(isinstance(f.get(k), int) and not isinstance(f.get(k), bool) for k in ("topic", "into"))]
        if kept:
            lines.append(f"{'':<18}" + "; ".join(f"topic {f['topic']} freed for a new theme of the night (its old "
                                                  f"evidence merged into topic {f['into']})" for f in kept))
    if info.get("lineage") and not up:
        ws, ids = info.get("warm_start") or {}, info.get("id_stability")
        lines.append(f"warm start:       from {file_name(ws.get('path'))} ({ws.get('new_words')} new words, "
                     f"{ws.get('gone_words')} gone)" + (f"; {ids['kept']} of {ids['topics']} topics kept their id, "
                                                       f"JS distance to the parent median {ids['median_distance']:.3f}, "
                                                       f"max {ids['max_distance']:.3f}" if ids and ids.get("kept") else ""))
        if ws.get("added") or ws.get("removed"):
            lines.append(f"{'':<18}topics added: {', '.join(map(str, ws['added'])) or 'none'}; removed from the "
                         f"parent: {', '.join(map(str, ws['removed'])) or 'none'}")
    if info.get("lineage"):
        for generation, parent in enumerate(info["lineage"], start=1):
            lines.append(f"{'lineage:' if generation == 1 else '':<18}{'parent' if generation == 1 else f'ancestor {generation}'}: "
                         f"{file_name(parent['path'])} (sha256 {parent['sha256'][:12]}, {parent.get('method')}, "
                         f"K={parent.get('n_topics')})")
    other = {k: v for k, v in p.items() if k not in SHOWN and k not in m["settings"] and v is not None}
    if other:
        lines.append("other parameters: " + ", ".join(f"{k}={shown(k, v)}" for k, v in other.items()))
    return lines
