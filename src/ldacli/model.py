"""The files ldacli writes and reads: models, checkpoints and inferred proportions, all ``.npz``.

Every file carries ``format_version``, ``kind`` and ``params`` (a JSON string with the effective
parameters and the package version). Files are written atomically and deterministically (fixed
zip timestamps, uncompressed members, fixed member order), so the same run gives the same bytes,
and are always loaded with ``allow_pickle=False``.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldacli.errors import InputError
from ldacli.fileio import atomic_write

# 2: one checkpoint format for every method (version 1 files are still read).
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)


def write_npz(path: str, arrays: dict[str, Any]) -> None:
    """Write ``arrays`` to ``path`` as an ``.npz`` whose bytes depend only on the arrays."""
    with atomic_write(path) as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, value in arrays.items():
                info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                with zf.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def read_npz(path: str, kind: str, required: tuple[str, ...]) -> tuple[dict[str, np.ndarray], dict]:
    """Load an ldacli ``.npz`` of the given kind; returns its arrays and its parsed params.

    Raises :class:`InputError` naming the file when it is missing, is not an ``.npz``, is of
    another kind or format version, or lacks one of the ``required`` arrays.
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    except (ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(path, None, f"expected an ldacli {kind} (.npz), found unreadable data ({exc})") from None
    if not isinstance(arrays, dict) or "kind" not in arrays or "format_version" not in arrays:
        raise InputError(path, None, f"expected an ldacli {kind} (.npz with 'kind' and 'format_version'), found another file")
    found = str(arrays["kind"])
    if found != kind:
        raise InputError(path, None, f"expected an ldacli {kind}, found a {found}")
    version = int(arrays["format_version"])
    if version not in READABLE_VERSIONS:
        raise InputError(path, None, f"expected format version {' or '.join(map(str, READABLE_VERSIONS))}, "
                                     f"found {version} (written by another ldacli version)")
    missing = [name for name in required + ("params",) if name not in arrays]
    if missing:
        raise InputError(path, None, f"expected arrays {', '.join(missing)} in this {kind}, found none")
    try:
        params = json.loads(str(arrays["params"]))
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"expected JSON in 'params', found invalid text ({exc})") from None
    return arrays, params


def _header(kind: str, params: dict) -> dict[str, Any]:
    return {
        "format_version": np.int64(FORMAT_VERSION),
        "kind": np.str_(kind),
        "params": np.str_(json.dumps(params, sort_keys=True)),
    }


@dataclass
class Model:
    """A trained topic model: what ``infer``, ``topics`` and ``perplexity`` need.

    ``phi`` (K, V) topic-word probabilities; ``theta`` (D, K) topic proportions of the training
    documents; ``alpha`` (K,) document-topic prior; ``beta`` the symmetric topic-word prior;
    ``vocab`` (V words); ``doc_ids`` (D training document names); ``loglik_iterations`` and
    ``loglik_per_token`` the trace of the joint log-likelihood per token; ``params`` the
    effective parameters and provenance.
    """

    phi: np.ndarray
    theta: np.ndarray
    alpha: np.ndarray
    beta: float
    vocab: list[str]
    doc_ids: list[str]
    loglik_iterations: np.ndarray
    loglik_per_token: np.ndarray
    params: dict = field(default_factory=dict)

    @property
    def n_topics(self) -> int:
        return self.phi.shape[0]

    def save(self, path: str) -> None:
        arrays = _header("model", self.params)
        arrays.update(
            phi=np.ascontiguousarray(self.phi, dtype=np.float64),
            theta=np.ascontiguousarray(self.theta, dtype=np.float64),
            alpha=np.asarray(self.alpha, dtype=np.float64),
            beta=np.float64(self.beta),
            vocab=np.array(self.vocab, dtype=np.str_),
            doc_ids=np.array(self.doc_ids, dtype=np.str_),
            loglik_iterations=np.asarray(self.loglik_iterations, dtype=np.int64),
            loglik_per_token=np.asarray(self.loglik_per_token, dtype=np.float64),
        )
        write_npz(path, arrays)

    @classmethod
    def load(cls, path: str) -> "Model":
        names = ("phi", "theta", "alpha", "beta", "vocab", "doc_ids", "loglik_iterations", "loglik_per_token")
        a, params = read_npz(path, "model", names)
        phi, alpha, vocab = a["phi"], a["alpha"], a["vocab"]
        if phi.ndim != 2 or alpha.shape != (phi.shape[0],) or vocab.shape != (phi.shape[1],):
            raise InputError(path, None, f"expected phi (K, V), alpha (K,), vocab (V,), found shapes {phi.shape}, {alpha.shape}, {vocab.shape}")
        return cls(
            phi=phi,
            theta=a["theta"],
            alpha=alpha,
            beta=float(a["beta"]),
            vocab=[str(w) for w in vocab],
            doc_ids=[str(d) for d in a["doc_ids"]],
            loglik_iterations=a["loglik_iterations"],
            loglik_per_token=a["loglik_per_token"],
            params=params,
        )

    def top_words(self, n: int) -> list[list[tuple[str, float]]]:
        """The ``n`` most probable words of each topic, with their probabilities.

        Ties are broken by word id so the listing is deterministic.
        """
        n = min(n, self.phi.shape[1])
        out = []
        for row in self.phi:
            order = np.lexsort((np.arange(row.size), -row))[:n]
            out.append([(self.vocab[w], float(row[w])) for w in order])
        return out


@dataclass
class Checkpoint:
    """Everything needed to continue a training run exactly where it stopped, for every method.

    ``params`` the run's settings and provenance (``params["method"]`` names the method, the
    corpus fingerprint is checked on resume); ``iteration`` sweeps (EM iterations) done;
    ``rng_states`` the states of the run's random streams after them (PCG64, in the order the
    method spawned them); ``loglik_iterations`` and ``loglik_per_token`` the trace so far;
    ``alpha`` (K,) and ``beta`` the current priors (learned or estimated ones included);
    ``arrays`` the method's own state (collapsed Gibbs: ``z``; variational EM: ``topics``,
    ``gamma``; uncollapsed Gibbs: ``theta``, ``phi_wk``, ``theta_sum``, ``phi_sum``);
    ``state`` the rest as JSON (``early_stopping``: the early-stopping history, or None).
    """

    params: dict
    iteration: int
    rng_states: list
    loglik_iterations: np.ndarray
    loglik_per_token: np.ndarray
    alpha: np.ndarray
    beta: float
    arrays: dict[str, np.ndarray]
    state: dict = field(default_factory=dict)

    COMMON = ("iteration", "rng_states", "loglik_iterations", "loglik_per_token", "alpha", "beta", "state")

    @property
    def method(self) -> str:
        return str(self.params.get("method"))

    def save(self, path: str) -> None:
        arrays = _header("checkpoint", self.params)
        arrays.update(
            iteration=np.int64(self.iteration),
            rng_states=np.str_(json.dumps(self.rng_states, sort_keys=True)),
            loglik_iterations=np.asarray(self.loglik_iterations, dtype=np.int64),
            loglik_per_token=np.asarray(self.loglik_per_token, dtype=np.float64),
            alpha=np.asarray(self.alpha, dtype=np.float64),
            beta=np.float64(self.beta),
            state=np.str_(json.dumps(self.state, sort_keys=True)),
        )
        arrays.update(self.arrays)
        write_npz(path, arrays)

    @classmethod
    def load(cls, path: str) -> "Checkpoint":
        """Read a checkpoint of any method, of this format version or the previous one."""
        a, params = read_npz(path, "checkpoint", ())
        if int(a["format_version"]) == 1:
            a, params = _checkpoint_from_v1(path, a, params)
        missing = [name for name in cls.COMMON if name not in a]
        if missing:
            raise InputError(path, None, f"expected arrays {', '.join(missing)} in this checkpoint, found none")
        rng_states, state = _json(path, a, "rng_states"), _json(path, a, "state")
        header = ("format_version", "kind", "params") + cls.COMMON
        return cls(
            params=params,
            iteration=int(a["iteration"]),
            rng_states=rng_states,
            loglik_iterations=a["loglik_iterations"],
            loglik_per_token=a["loglik_per_token"],
            alpha=np.ascontiguousarray(a["alpha"], dtype=np.float64),
            beta=float(a["beta"]),
            arrays={name: value for name, value in a.items() if name not in header},
            state=state,
        )


def _json(path: str, arrays: dict, name: str):
    try:
        return json.loads(str(arrays[name]))
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"expected JSON in '{name}', found invalid text ({exc})") from None


def _checkpoint_from_v1(path: str, a: dict, params: dict) -> tuple[dict, dict]:
    """The arrays and params of a format-1 checkpoint (ldacli before the common format) in
    today's names, so it resumes exactly as it would have."""
    a = dict(a)
    params = dict(params)
    method = params.setdefault("method", "cgs")
    if method == "cgs":
        if "extra" not in a or "rng_state" not in a:
            raise InputError(path, None, "expected arrays rng_state, extra in this checkpoint, found none")
        extra = _json(path, a, "extra")
        a["rng_states"] = a.pop("rng_state")
        a["alpha"] = np.asarray(extra["alpha"], dtype=np.float64)
        a["beta"] = np.float64(extra["beta"])
        a["state"] = np.str_(json.dumps({"early_stopping": extra.get("early_stopping")}))
        del a["extra"]
    elif method == "vem":
        a["beta"] = a.pop("eta")
        a["rng_states"] = np.str_("[]")
        a["state"] = np.str_(json.dumps({"early_stopping": None}))
        params.setdefault("loglik_every", 1)
    elif method == "gibbs":
        a["alpha"] = np.full(int(params["n_topics"]), float(params["alpha"]))
        a["beta"] = np.float64(params["beta"])
        a["state"] = np.str_(json.dumps({"early_stopping": None}))
    return a, params


@dataclass
class Inference:
    """Topic proportions inferred for new documents: ``theta`` (D, K) and ``doc_ids``."""

    theta: np.ndarray
    doc_ids: list[str]
    params: dict

    def save(self, path: str) -> None:
        """Write ``.npz`` (theta, doc_ids, params), or ``.tsv``/``.csv`` (doc id, then K columns)."""
        lower = path.lower()
        if lower.endswith(".npz"):
            arrays = _header("inference", self.params)
            arrays.update(theta=np.ascontiguousarray(self.theta, dtype=np.float64),
                          doc_ids=np.array(self.doc_ids, dtype=np.str_))
            write_npz(path, arrays)
            return
        sep = "," if lower.endswith(".csv") else "\t"
        K = self.theta.shape[1]
        with atomic_write(path) as f:
            text = io.TextIOWrapper(f, encoding="utf-8", newline="")
            writer = csv.writer(text, delimiter=sep, lineterminator="\n")
            writer.writerow(["doc_id"] + [f"topic_{k}" for k in range(K)])
            for doc, row in zip(self.doc_ids, self.theta):
                writer.writerow([doc] + [f"{p:.6g}" for p in row])
            text.flush()
            text.detach()
