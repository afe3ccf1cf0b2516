"""What a model or checkpoint file holds, summarised: ``ldacli info`` and :func:`describe`."""

from __future__ import annotations

import zipfile

import numpy as np

from ldacli.model import Checkpoint, Model

# Up to this many topics, every alpha is listed in the text output (JSON always lists them).
ALPHA_LISTED = 10


def _kind(path: str) -> str | None:
    """The ``kind`` stored in an ``.npz``, or None when it cannot be told (the loader then
    reports what is wrong with the file)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return str(f["kind"]) if "kind" in f.files else None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def _trace(iterations: np.ndarray, values: np.ndarray, every) -> dict:
    """First, last and best points of the log-likelihood-per-token trace."""
    if values.size == 0:
        return {"points": 0}
    best = int(np.argmax(values))
    return {
        "points": int(values.size),
        "every": every,
        "first": {"iteration": int(iterations[0]), "loglik_per_token": float(values[0])},
        "last": {"iteration": int(iterations[-1]), "loglik_per_token": float(values[-1])},
        "best": {"iteration": int(iterations[best]), "loglik_per_token": float(values[best])},
    }


def _priors(params: dict, alpha: np.ndarray | None, beta: float | None) -> dict:
    learned = bool(params.get("optimize_interval"))
    out: dict = {"learned": learned}
    if learned:
        out["optimize_interval"] = params.get("optimize_interval")
        out["optimize_burn_in"] = params.get("optimize_burn_in", 0)
    if alpha is not None:
        out["alpha"] = {
            "values": [float(a) for a in alpha],
            "symmetric": bool(np.all(alpha == alpha[0])),
            "min": float(alpha.min()), "mean": float(alpha.mean()), "max": float(alpha.max()),
            "sum": float(alpha.sum()),
        }
    if beta is not None:
        out["beta"] = float(beta)
    out["initial_alpha"] = params.get("alpha")
    out["initial_beta"] = params.get("beta")
    return out


def describe(path: str) -> dict:
    """Summary of the model or checkpoint at ``path`` as a JSON-able dict.

    Keys: ``file``, ``kind``; ``parameters`` (the stored params but provenance); ``sizes``
    (topics, words, documents, tokens); ``priors`` (alpha values and summary, beta, whether
    they were learned, the initial values); ``provenance`` (ldacli version, seed, corpus
    source, format and fingerprint); ``loglik_trace`` (points, first, last, best); for a
    checkpoint also ``iteration``; ``stopping`` when the run recorded why it stopped.
    Raises :class:`~ldacli.errors.InputError` for a file that is neither.
    """
    kind = _kind(path)
    if kind == "checkpoint":
        ckpt = Checkpoint.load(path)
        params, alpha, beta = ckpt.params, None, None
        trace = _trace(ckpt.loglik_iterations, ckpt.loglik_per_token, params.get("loglik_every"))
        n_topics = params.get("n_topics")
        n_words = params.get("n_words")
    else:
        model = Model.load(path)
        params, alpha, beta = model.params, model.alpha, model.beta
        trace = _trace(model.loglik_iterations, model.loglik_per_token, params.get("loglik_every"))
        n_topics, n_words = model.n_topics, model.phi.shape[1]
    provenance_keys = ("ldacli_version", "seed", "corpus_source", "corpus_format", "corpus_fingerprint")
    out = {
        "file": path,
        "kind": "checkpoint" if kind == "checkpoint" else "model",
        "parameters": {k: v for k, v in sorted(params.items()) if k not in provenance_keys},
        "sizes": {"topics": n_topics, "words": n_words, "documents": params.get("n_docs"),
                  "tokens": params.get("n_tokens")},
        "priors": _priors(params, alpha, beta),
        "provenance": {k: params.get(k) for k in provenance_keys},
        "loglik_trace": trace,
    }
    if kind == "checkpoint":
        out["iteration"] = ckpt.iteration
    stopping = {k: params[k] for k in ("stopped", "stopped_early", "stop_reason", "best_iteration",
                                       "best_heldout_perplexity", "holdout", "patience")
                if params.get(k) is not None}
    if stopping:
        out["stopping"] = stopping
    return out


def format_text(info: dict) -> list[str]:
    """The human-readable lines of ``ldacli info`` for a :func:`describe` result."""
    p, s, pr, prov, tr = info["parameters"], info["sizes"], info["priors"], info["provenance"], info["loglik_trace"]
    lines = [f"file:             {info['file']} ({info['kind']})"]
    if info["kind"] == "checkpoint":
        lines.append(f"iteration:        {info['iteration']} of {p.get('iterations')} sweeps done")
    lines += [
        f"method:           {p.get('method')} (sampler {p.get('sampler')})",
        f"sweeps:           {p.get('iterations')}",
        f"sizes:            K={s['topics']} topics, V={s['words']} words, D={s['documents']} documents, "
        f"N={s['tokens']} tokens",
    ]
    how = "learned" if pr["learned"] else "set"
    if pr["learned"]:
        how += f" every {pr['optimize_interval']} sweeps after {pr['optimize_burn_in']}"
    if "alpha" in pr:
        a = pr["alpha"]
        if a["symmetric"]:
            text = f"{a['values'][0]:.6g} per topic (sum {a['sum']:.6g})"
        elif len(a["values"]) <= ALPHA_LISTED:
            text = "[" + ", ".join(f"{v:.4g}" for v in a["values"]) + f"] (sum {a['sum']:.6g})"
        else:
            text = f"asymmetric, min {a['min']:.4g}, mean {a['mean']:.4g}, max {a['max']:.4g} (sum {a['sum']:.6g})"
        lines.append(f"alpha:            {text}, {how}" + (f"; initial {pr['initial_alpha']}" if pr["learned"] else ""))
        lines.append(f"beta:             {pr['beta']:.6g}, {how}" + (f"; initial {pr['initial_beta']}" if pr["learned"] else ""))
    else:
        lines.append(f"priors:           alpha {pr['initial_alpha']} per topic, beta {pr['initial_beta']} at the start, {how}")
    lines += [
        f"seed:             {prov['seed']}",
        f"corpus:           {prov['corpus_source']} ({prov['corpus_format']}), fingerprint {prov['corpus_fingerprint']}",
        f"ldacli version:   {prov['ldacli_version']}",
    ]
    if tr["points"]:
        f, la, b = tr["first"], tr["last"], tr["best"]
        lines.append(f"log-likelihood:   per token (natural log), {tr['points']} points every {tr['every']} sweeps: "
                     f"first {f['loglik_per_token']:.4f} (sweep {f['iteration']}), "
                     f"last {la['loglik_per_token']:.4f} (sweep {la['iteration']}), "
                     f"best {b['loglik_per_token']:.4f} (sweep {b['iteration']})")
    else:
        lines.append("log-likelihood:   no trace recorded")
    if "stopping" in info:
        lines.append("stopping:         " + ", ".join(f"{k} {v}" for k, v in info["stopping"].items()))
    other = {k: v for k, v in p.items() if k not in {"method", "sampler", "iterations", "n_topics", "n_words",
                                                     "n_docs", "n_tokens", "alpha", "beta", "optimize_interval",
                                                     "optimize_burn_in", "loglik_every", "stopped_early",
                                                     "stop_reason", "best_iteration", "best_heldout_perplexity",
                                                     "holdout", "patience", "stopped"}}
    if other:
        lines.append("other parameters: " + ", ".join(f"{k}={v}" for k, v in other.items()))
    return lines
