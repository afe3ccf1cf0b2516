"""Checkpoints written where the shards live: each Dask worker writes its shards' topics and
random streams beside the shard folder, and the client's checkpoint names those files.

A run on a cluster whose workers read a shard folder ``/shared/big`` and that checkpoints to
``ckpt.npz`` keeps, beside the folder::

    /shared/big.checkpoints/
      .ckpt-0123456789ab.lock          the run's lock (the client holds it while the run lasts)
      ckpt-0123456789ab/               one folder per checkpoint path: its file name, then 12 hex
                                       digits of the SHA-256 of its absolute path
        shard-00000-sweep-000040-9f3a2c1e.npz   shard 0's topics and stream after sweep 40,
        shard-00001-sweep-000040-9f3a2c1e.npz   written by the run 9f3a2c1e (8 random hex digits)
        ...

Each shard file (kind ``"shard checkpoint"``, format_version 1) holds ``params`` (JSON:
``shard``, ``sweep``, ``n_tokens``, ``n_topics``, ``run``, ``corpus_fingerprint``), ``z`` (n,)
int32, the topic of each of the shard's tokens, ``rng_state`` () str, the JSON state of the
shard's PCG64 stream, and, when the run averages snapshots and has taken some, the shard's
documents' sums of them: ``snapshot_doc_cells`` (2, E) int32, documents (numbered in the shard)
and topics, and ``snapshot_doc_sums`` (E,) float64. A worker writes it atomically (a temporary file renamed into place). The
client's checkpoint (``ckpt.npz``, the usual kind ``"checkpoint"``) has no ``z`` (nor the
documents' snapshot sums); its
``shard_checkpoints`` () str is the JSON :class:`ShardFiles` of the same sweep: the folder, each
shard's file name and SHA-256. It is written after every worker has written its files, so it
only ever names complete files; the files of earlier sweeps (and of runs that died) are removed
once it is written. Files of a new sweep never replace those the checkpoint names (the sweep and
the run are in their names), so a crash at any moment leaves a checkpoint that resumes.

``--resume ckpt.npz`` on a cluster lets each worker read its shards' files (checked against the
SHA-256 the checkpoint records); a local run (threads, ``read_corpus`` of the folder) reads them
all (:func:`read_topics`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass

import numpy as np

from ldacli.errors import InputError, OutputError
from ldacli.files.fileio import file_sha256
from ldacli.files.locking import locked
from ldacli.methods.cgs.snapshots import DOC_CELLS, DOC_SUMS, doc_cells_of
from ldacli.files.npz import array, json_object, read_file, write_npz

KIND = "shard checkpoint"
FORMAT_VERSION = 1
# The checkpoint array that names the shard files.
ARRAY = "shard_checkpoints"
_NAME = re.compile(r"shard-(\d{5,})-sweep-(\d{6,})-([0-9a-f]{8})\.npz")


def checkpoint_folder(shard_folder: str, checkpoint: str) -> str:
    """Where the workers of a run on ``shard_folder`` write the shard files of the checkpoint
    ``checkpoint`` (both paths as the client sees them; the workers must see the same paths)."""
    path = os.path.abspath(checkpoint)
    name = os.path.basename(path)
    name = name[:-4] if name.endswith(".npz") else name
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(os.path.abspath(shard_folder) + ".checkpoints", f"{name}-{digest}")


class CheckpointFolders:
    """The folders a run writes its shards' checkpoint files to, each made and locked (the run's
    lock, :func:`~ldacli.files.locking.locked`) the first time it is claimed and held until
    :meth:`close`: a cluster's client and the engine that trains from disk both use one."""

    def __init__(self):
        self._locks = contextlib.ExitStack()
        self._held: set[str] = set()

    def claim(self, folder: str, checkpoint: str) -> str:
        """``folder``, made and locked for the checkpoint ``checkpoint`` (an
        :class:`~ldacli.errors.OutputError` naming it when it cannot be made)."""
        if folder not in self._held:
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                raise OutputError(checkpoint, "checkpoint", f"cannot make {folder} for the shards' checkpoints: "
                                                            f"{exc.strerror or exc}") from None
            self._locks.enter_context(locked([folder]))
            self._held.add(folder)
        return folder

    def close(self) -> None:
        self._locks.close()
        self._held.clear()


def shard_file(s: int, sweep: int, run: str) -> str:
    """The name of shard ``s``'s file of ``sweep`` written by the run ``run`` (8 hex digits)."""
    return f"shard-{s:05d}-sweep-{sweep:06d}-{run}.npz"


def write_shard_checkpoint(path: str, z: np.ndarray, rng_state: dict, params: dict,
                           doc_sums: dict[str, np.ndarray] | None = None) -> str:
    """Write one shard's file (see the module) atomically, with its documents' snapshot sums
    ``doc_sums`` (:func:`~ldacli.methods.cgs.snapshots.doc_cell_arrays`) if any; returns its
    SHA-256."""
    write_npz(path, {"kind": np.str_(KIND), "format_version": np.int64(FORMAT_VERSION),
                     "params": np.str_(json.dumps(params, sort_keys=True)),
                     "z": np.ascontiguousarray(z, dtype=np.int32),
                     "rng_state": np.str_(json.dumps(rng_state, sort_keys=True)), **(doc_sums or {})},
              what="shard checkpoint")
    return file_sha256(path)


def read_shard_checkpoint(path: str, sha256: str, shard: int, n_tokens: int, n_topics: int, fingerprint: str,
                          n_docs: int = 0) -> tuple[np.ndarray, dict, tuple[np.ndarray, np.ndarray] | None]:
    """The topics (n,) int32, the stream state and the documents' snapshot sums (sorted codes
    ``document * K + topic``, documents numbered in the shard, and float64 sums; None when the
    file has none) of shard ``shard`` from its file at ``path``, after checking it is the file
    the checkpoint names (``sha256``) and holds what the run expects: the shard's ``n_tokens``
    topics in [0, ``n_topics``), of the corpus ``fingerprint``, sums of its ``n_docs``
    documents."""
    try:
        found = file_sha256(path)
    except OSError as exc:
        raise InputError(path, None, f"cannot read the checkpoint of shard {shard}: {exc.strerror or exc}") from None
    if found != sha256:
        raise InputError(path, None, f"expected the shard checkpoint the run's checkpoint names (SHA-256 "
                                     f"{sha256[:12]}...), found another file")
    arrays, params = read_file(path, KIND, (FORMAT_VERSION,))
    expected = {"shard": shard, "n_tokens": n_tokens, "n_topics": n_topics, "corpus_fingerprint": fingerprint}
    wrong = {k: params.get(k) for k, v in expected.items() if params.get(k) != v}
    if wrong:
        raise InputError(path, None, f"expected the checkpoint of shard {shard} of this run "
                                     f"({', '.join(f'{k} {expected[k]!r}' for k in wrong)}), found "
                                     f"{', '.join(f'{k} {v!r}' for k, v in wrong.items())}")
    z = array(path, arrays, "z", "iu", (n_tokens,), minimum=0)
    if z.size and int(z.max()) >= n_topics:
        raise InputError(path, None, f"expected topics in [0, {n_topics}), found {int(z.max())}")
    state = json_object(path, arrays, "rng_state", dict)
    doc_cells = None
    if DOC_SUMS in arrays or DOC_CELLS in arrays:
        sums = array(path, arrays, DOC_SUMS, "f", (None,), minimum=0)
        stored = {DOC_CELLS: array(path, arrays, DOC_CELLS, "iu", (2, sums.size)), DOC_SUMS: sums}
        doc_cells = doc_cells_of(stored, path, n_docs, n_topics)
    return np.array(z, dtype=np.int32), state, doc_cells


@dataclass(frozen=True)
class ShardFiles:
    """The shard files of one checkpoint: ``folder`` (absolute), each shard's file name
    (``files``) and SHA-256 (``sha256``), and ``sweep``."""

    folder: str
    files: list[str]
    sha256: list[str]
    sweep: int

    def path(self, s: int) -> str:
        return os.path.join(self.folder, self.files[s])

    def array(self) -> np.ndarray:
        """The checkpoint's :data:`ARRAY`."""
        return np.str_(json.dumps({"folder": self.folder, "files": self.files, "sha256": self.sha256,
                                   "sweep": self.sweep}, sort_keys=True))

    @classmethod
    def from_checkpoint(cls, arrays: dict, source: str, n_shards: int, sweep: int) -> "ShardFiles":
        """The shard files a checkpoint (``arrays``, read from ``source``) names, checked: one
        per shard, of its sweep."""
        record = json_object(source, arrays, ARRAY, dict)
        files, digests, folder = record.get("files"), record.get("sha256"), record.get("folder")
        if not (isinstance(folder, str) and os.path.isabs(folder) and isinstance(files, list)
                and isinstance(digests, list) and len(files) == len(digests) == n_shards
                and all(isinstance(f, str) and _NAME.fullmatch(f) for f in files)
                and all(isinstance(d, str) and len(d) == 64 for d in digests) and record.get("sweep") == sweep):
            raise InputError(source, None, f"expected '{ARRAY}' naming the {n_shards} shard files of sweep {sweep} "
                                           f"in an absolute folder, found {str(record)[:200]}")
        return cls(folder, files, digests, sweep)


def read_topics(files: ShardFiles, ranges: list, n_topics: int,
                fingerprint: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Every shard's topics, end to end (N,) int32, and the documents' snapshot sums (sorted
    codes ``document * K + topic`` in the corpus, float64 sums; None when the files hold none),
    from the files of a checkpoint (``ranges``: each shard's
    :class:`~ldacli.partition.ShardRange`): what a run on this machine resumes from."""
    z = np.empty(ranges[-1].hi if ranges else 0, np.int32)
    codes, sums = [], []
    for s, r in enumerate(ranges):
        z[r.lo:r.hi], _, doc_cells = read_shard_checkpoint(files.path(s), files.sha256[s], s, r.hi - r.lo, n_topics,
                                                           fingerprint, r.d_hi - r.d_lo)
        if doc_cells is not None:
            codes.append(doc_cells[0] + np.int64(r.d_lo) * n_topics)
            sums.append(doc_cells[1])
    return z, ((np.concatenate(codes), np.concatenate(sums)) if codes else None)


def prune(folder: str, keep: list[str]) -> list[str]:
    """Remove from ``folder`` the shard files (and the temporary files of workers that died
    while writing one) other than ``keep``; returns those removed. Only while holding the
    run's lock."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    kept = set(keep)
    for name in names:
        stale = _NAME.fullmatch(name) or (name.startswith(".shard-") and name.endswith(".tmp"))
        if stale and name not in kept:
            try:
                os.unlink(os.path.join(folder, name))
                removed.append(name)
            except OSError:
                pass
    return removed
