"""The states of the chain that phi and theta average (snapshots): which sweeps, and their
counts' sums, kept sparse; what a checkpoint holds of them.
"""

from __future__ import annotations

import logging

import numpy as np

from ldacli import _cgs
from ldacli.errors import LdacliError
from ldacli.methods.base import Method
from ldacli.model import Checkpoint
from ldacli.topic_counts import SparseRows, block_parts, cell_parts, sorted_cells

log = logging.getLogger("ldacli")

# A checkpoint's document-topic sums (the client's, or a shard file's, numbered in the shard).
DOC_CELLS, DOC_SUMS = "snapshot_doc_cells", "snapshot_doc_sums"
# Cells of dense sums turned into a model file's sparse rows at a time.
BLOCK_CELLS = 1 << 20


def snapshot_sweeps(iterations: int, snapshots: int, interval: int) -> frozenset[int]:
    """The sweeps whose states phi and theta average: the last and every ``interval`` before
    it, ``snapshots`` in all, those in the second half of the run only (a state of the first
    half is too far from the posterior to help a short run)."""
    return frozenset(s for s in range(iterations, iterations - snapshots * interval, -interval)
                     if s > iterations // 2)


class Snapshots:
    """Sums of the word-topic, topic and document-topic counts of the states at ``sweeps``,
    which phi and theta average (Griffiths & Steyvers 2004 average samples of the chain; so does
    topica by default). Each kind of sum is kept sparse or dense, whichever is smaller
    (:class:`CellSums`): a few snapshots of a converged chain share most cells, so they take
    about what the sampler's own counts take, not a dense (K, V) and (D, K) more; a chain that
    spreads (a large corpus early in its run) goes dense before its sparse sums outgrow the array.
    A checkpoint holds them, sparse (``snapshot_taken``, the sweeps summed; ``snapshot_cells``,
    the word-topic cells' words and topics (2, C) int32 and ``snapshot_cell_sums`` (C,);
    ``snapshot_topic`` (K,); ``snapshot_doc_cells`` (2, E) int32, documents and topics, and
    ``snapshot_doc_sums`` (E,)); a resumed run whose schedule no longer contains those sweeps
    starts the sums again. On a cluster whose workers read a shard folder, each worker keeps
    its shards' documents' sums (:meth:`keep_docs_on`; the client holds nothing per document
    but its length) and writes them in its shard files, not in the client's checkpoint.

    A time-limited run (``paced``: the number of snapshots and the sweeps between them) cannot
    know its last sweep in advance: it takes them where the pace so far says its last sweeps
    are (:meth:`due`, after :meth:`expect_last`), so that a run stopped by ``--max-seconds``
    still averages the states of its end, not its final state alone."""

    def __init__(self, sweeps: frozenset[int], K: int, V: int, doc_lengths: np.ndarray, checkpoint: Checkpoint | None,
                 source: str | None, paced: tuple[int, int] | None = None,
                 doc_cells: tuple[np.ndarray, np.ndarray] | None = None, workers_read_docs: bool = False):
        """``doc_cells``: the document-topic sums of a checkpoint whose shard files hold them
        (sorted codes and sums, as :func:`doc_cells_of` reads them), read here; or
        ``workers_read_docs``: the workers read them from those files."""
        # one sweep to average is the final state alone: no sums
        self.sweeps, self.K, self.V = (sweeps if len(sweeps) > 1 else frozenset()), K, V
        self.paced, self.last = paced, None
        self.lengths = np.asarray(doc_lengths, dtype=np.int64)  # the corpus's (D,), not a copy
        self.taken: list[int] = []
        self.cells, self.doc_cells = CellSums(K, V), CellSums(self.lengths.size, K)
        self.remote = None  # the sampler whose workers keep the document-topic sums (keep_docs_on)
        self._docs_in_files = False  # the workers read the sums restored (docs_to_send)
        self.topic = np.zeros(K)
        if checkpoint is None or "snapshot_taken" not in checkpoint.arrays or not self.sweeps:
            return
        a = checkpoint.arrays
        shapes = {"snapshot_taken": a["snapshot_taken"].shape, "snapshot_cells": (2, a["snapshot_cell_sums"].size),
                  "snapshot_cell_sums": a["snapshot_cell_sums"].shape, "snapshot_topic": (K,)}
        in_files = DOC_SUMS not in a and (doc_cells is not None or workers_read_docs)
        if not in_files:
            shapes.update({DOC_CELLS: (2, a[DOC_SUMS].size), DOC_SUMS: a[DOC_SUMS].shape})
        stored = Method.checkpoint_arrays(checkpoint, source, shapes)
        taken = [int(t) for t in stored["snapshot_taken"]]
        if self.paced is None and not set(taken) <= self.sweeps:
            log.info("%s: the snapshots of sweeps %s are not among this run's (--iterations changed); phi and "
                     "theta average the states from here on", source, ", ".join(map(str, taken)))
            return
        words, topics = stored["snapshot_cells"]
        cells = _checked_cells(topics, words, stored["snapshot_cell_sums"], K, V, source, f"{K} topics and {V} words")
        if not in_files:
            doc_cells = doc_cells_of(stored, source, self.lengths.size, K)
        self.taken, self.topic = taken, stored["snapshot_topic"]
        self.cells.restore_cells(cells)
        if doc_cells is not None:
            self.doc_cells.restore_cells(doc_cells)
        self._docs_in_files = in_files and workers_read_docs

    def docs_to_send(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The document-topic sums a cluster's workers are to start from (sorted codes, sums;
        none if no snapshot is summed), or None when they read them from the shard files."""
        return None if self._docs_in_files else self.doc_cells.sparse()

    def keep_docs_on(self, sampler) -> None:
        """From now on ``sampler``'s workers keep the document-topic sums (their shards'
        documents' each; those restored here went to them with the shards), and the client
        none."""
        self.remote, self.doc_cells = sampler, CellSums(self.lengths.size, self.K)

    def expect_last(self, sweep: int) -> None:
        """A time-limited run's projected last sweep. States summed more than ``interval``
        sweeps before the projected end's window (a resumed run's, whose end was the previous
        run's; a pace that has grown since) are not of this run's end: the sums start again."""
        self.last = sweep
        if self.paced is None or not self.taken:
            return
        n, interval = self.paced
        if self.taken[0] < max(sweep - (n - 1) * interval, sweep // 2 + 1) - interval:
            self.restore(([], CellSums.EMPTY, CellSums.EMPTY, np.zeros(self.K)))
            if self.remote is not None:
                self.remote.clear_doc_sums()

    def due(self, sweep: int) -> bool:
        """Whether the state after ``sweep`` is one to sum: one of the schedule's sweeps; for a
        time-limited run, one of the last ``n`` the projection allows, in the second half of the
        projected run and at least ``interval`` sweeps after the one taken before (a projection
        that moves takes a sweep later, never two close together)."""
        if not self.sweeps:
            return False
        if self.paced is None:
            return sweep in self.sweeps
        if self.last is None:
            return False
        n, interval = self.paced
        return (sweep > self.last // 2 and sweep >= self.last - (n - 1) * interval
                and (not self.taken or sweep - self.taken[-1] >= interval))

    def state(self) -> tuple:
        """The sums as they are (to go back to: :meth:`restore`; the workers' sums of a cluster
        go back with the shards, to their sync point's)."""
        return list(self.taken), self.cells.state(), self.doc_cells.state(), self.topic.copy()

    def restore(self, state: tuple) -> None:
        taken, cells, doc_cells, topic = state
        self.cells.restore(cells)
        if self.remote is None:
            self.doc_cells.restore(doc_cells)
        self.taken, self.topic = list(taken), topic.copy()

    def take(self, sweep: int, sampler) -> None:
        """Add the sampler's current counts to the sums."""
        counts = sampler.counts
        words, topics, n = counts.cells()
        self.cells.add_cells(topics.astype(np.int64) * self.V + words, n)
        self.topic += counts.nk
        if self.remote is not None:
            self.remote.snapshot_docs()
        else:
            self.doc_cells.add_parts(list(sampler.doc_topic_cell_parts()))
        self.taken.append(sweep)

    def arrays(self) -> dict[str, np.ndarray]:
        if not self.taken:
            return {}
        codes, sums = self.cells.sparse()
        out = {"snapshot_taken": np.array(self.taken, dtype=np.int32),
               "snapshot_cells": np.array([codes % self.V, codes // self.V], dtype=np.int32),
               "snapshot_cell_sums": sums, "snapshot_topic": self.topic}
        if self.remote is None:  # (else in the workers' shard files)
            out.update(doc_cell_arrays(self.doc_cells.sparse(), self.K))
        return out

    def word_sum_rows(self, out: np.ndarray, first: int) -> None:
        """Rows (topics) ``first`` to ``first + len(out)`` of the word-topic sums, (K, V) topic-major,
        into ``out`` (float64), what :func:`~ldacli.topic_counts.phi_rows` takes."""
        self.cells.mean_rows(out, first, 1)

    def doc_sum_rows(self, out: np.ndarray, first: int) -> None:
        """Rows (documents) ``first`` to ``first + len(out)`` of the document-topic sums into
        ``out`` (float64), what :func:`~ldacli.topic_counts.theta_rows` takes."""
        (self.remote or self.doc_cells).mean_rows(out, first, 1)

    def word_sums(self) -> SparseRows:
        """The word-topic sums by topic (phi's layout), as a model file keeps them, made as it
        is written."""
        return SparseRows.streamed(self.cells.parts(), self.K, self.V)

    def doc_sums(self) -> SparseRows:
        """The document-topic sums by document, as a model file keeps them, made as it is written
        (from the workers that keep them, a shard at a time)."""
        parts = self.doc_cells.parts() if self.remote is None else self.remote.doc_sum_cell_parts
        return SparseRows.streamed(parts, self.lengths.size, self.K)


class CellSums:
    """The sums of a (rows, columns) array of counts over the snapshots, kept sparse (sorted
    cell codes ``row * columns + column`` and their float64 sums) while that is smaller, and
    as the dense array (int32; int64 from the snapshot that could take a sum past 2^31 - 1)
    from the snapshot whose cells would make the sparse sums (16 bytes a cell) twice its size.
    Both hold the same whole numbers, so the model and the checkpoint (always sparse) are the
    same bytes either way. A sparse snapshot merges its cells into the sums in place (the
    arrays grow by its cells and are merged from the end), a dense one adds them where they are.

    :meth:`state` hands out the arrays as they are; they are then copied before they next
    change (once per checkpoint on a cluster, whose run may go back to it); otherwise a
    snapshot changes them in place."""

    EMPTY = (None, None, 0)  # the state of no sums

    def __init__(self, rows: int, columns: int):
        self.shape = (rows, columns)
        self.codes = self.sums = self.dense = None
        self.most = 0  # no sum is above this: the snapshots' largest counts, added up
        self._shared = False

    def state(self) -> tuple:
        self._shared = self.codes is not None or self.dense is not None
        return ((self.codes, self.sums) if self.codes is not None else None), self.dense, self.most

    def restore(self, state: tuple) -> None:
        sparse, self.dense, self.most = state
        self.codes, self.sums = sparse if sparse is not None else (None, None)
        self._shared = self.codes is not None or self.dense is not None

    def restore_cells(self, cells: tuple[np.ndarray, np.ndarray]) -> None:
        """The sums as a checkpoint stored them: sorted codes and float64 sums (copied before
        they next change)."""
        codes, sums = cells
        self.restore(((codes, sums), None, int(sums.max(initial=0))))

    def add_cells(self, codes: np.ndarray, values: np.ndarray) -> None:
        """Add the cells ``codes`` (each once, in any order) with counts ``values``."""
        self.most += int(values.max(initial=0))
        if self._to_dense(codes.size):
            self._dense_add([(codes, values)])
        else:
            self._sparse_add([sorted_cells(codes, values)])

    def add_parts(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Add the cells ``parts``: each part's codes (int64) sorted and above the part's before,
        with their counts (int32; a sampler's document-topic cells, a shard at a time), merged
        without joining them first."""
        self.most += max((int(v.max(initial=0)) for _, v in parts), default=0)
        if self._to_dense(sum(c.size for c, _ in parts)):
            self._dense_add(parts)
        else:
            self._sparse_add(parts)

    def sparse(self) -> tuple[np.ndarray, np.ndarray]:
        """The sums as sorted codes (int64) and their sums (float64), the non-zero cells only
        (sparse sums handed out as they are: copied before they next change)."""
        if self.dense is None:
            self._shared = self.codes is not None
            return self._running()
        flat = self.dense.reshape(-1)
        codes = np.flatnonzero(flat)
        return codes, flat[codes].astype(np.float64)

    def parts(self):
        """The non-zero sums as :data:`~ldacli.topic_counts.Parts` (sorted cells, a chunk or a
        block of rows at a time), for a model file."""
        if self.dense is None:
            return cell_parts(*self.sparse())
        step = max(1, BLOCK_CELLS // self.shape[1])
        rows = self.shape[0]
        return block_parts(lambda: ((first, self.dense[first:first + step]) for first in range(0, rows, step)),
                           self.shape[1])

    def mean_rows(self, out: np.ndarray, first: int, n: int) -> None:
        """Rows ``first`` to ``first + len(out)`` of the sums, divided by ``n``, into ``out``."""
        if self.dense is not None:
            out[...] = self.dense[first:first + out.shape[0]]
            out /= n
        else:
            _mean_rows(out, first, self._running(), n)

    def _running(self) -> tuple[np.ndarray, np.ndarray]:
        """The sparse sums (none: empty arrays)."""
        return (self.codes, self.sums) if self.codes is not None else (np.zeros(0, np.int64), np.zeros(0))

    def _to_dense(self, new: int) -> bool:
        """Whether the sums are dense, or become so now, before ``new`` more cells are added."""
        dtype = np.int32 if self.most < 2**31 else np.int64
        if self.dense is None:
            # going dense holds both for a moment: it pays once the sparse sums would be twice the array
            summed = self.codes.size if self.codes is not None else 0
            if 16 * (summed + new) <= 2 * self.shape[0] * self.shape[1] * 4:
                return False
            self.dense = np.zeros(self.shape, dtype)
            if summed:
                self.dense.reshape(-1)[self.codes] = self.sums
            self.codes = self.sums = None
        elif self.dense.dtype != dtype:
            self.dense = self.dense.astype(dtype)
        elif self._shared:
            self.dense = self.dense.copy()
        self._shared = False
        return True

    def _sparse_add(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Sparse sums plus ``parts``: the first sums are the parts joined; later ones are merged
        into the running arrays themselves, from their end (:func:`_merged_in_place`), copied
        first when they were handed out (:meth:`state`, :meth:`sparse`)."""
        parts = [(c, v) for c, v in parts if c.size]
        if self.codes is None:
            self.codes = np.concatenate([np.zeros(0, np.int64)] + [c for c, _ in parts])
            self.sums = np.concatenate([np.zeros(0)] + [v for _, v in parts]).astype(np.float64, copy=False)
        elif parts:
            if self._shared:
                self.codes, self.sums = self.codes.copy(), self.sums.copy()
            self.codes, self.sums = _merged_in_place(self.codes, self.sums, parts)
        else:
            return
        self._shared = False

    def _dense_add(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> None:
        flat = self.dense.reshape(-1)
        for codes, values in parts:
            flat[codes] += values  # each code once within a part


def doc_sum_bytes(tokens: float, docs: float, K: int) -> float:
    """At most what the documents' snapshot sums take, of ``docs`` documents holding ``tokens``
    tokens: 16 bytes a cell (at most a cell a token), or 8 a document and topic once dense."""
    return min(16.0 * min(tokens, K * docs), 8.0 * K * docs)


def doc_cell_arrays(cells: tuple[np.ndarray, np.ndarray], K: int) -> dict[str, np.ndarray]:
    """Document-topic sums (sorted codes ``document * K + topic`` and their sums) as a
    checkpoint stores them: :data:`DOC_CELLS` (2, E) int32, documents and topics, and
    :data:`DOC_SUMS` (E,) float64."""
    codes, sums = cells
    return {DOC_CELLS: np.array([codes // K, codes % K], dtype=np.int32), DOC_SUMS: sums}


def doc_cells_of(arrays: dict, source: str, n_docs: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The document-topic sums :func:`doc_cell_arrays` stored (their shapes and numbers checked
    already), checked to lie within ``n_docs`` documents and ``K`` topics, each cell once; as
    sorted codes and float64 sums."""
    docs, topics = arrays[DOC_CELLS]
    return _checked_cells(docs, topics, arrays[DOC_SUMS], n_docs, K, source, f"{n_docs} documents and {K} topics")


def _checked_cells(rows: np.ndarray, columns: np.ndarray, sums: np.ndarray, n_rows: int, n_columns: int,
                   source: str, within: str) -> tuple[np.ndarray, np.ndarray]:
    """Stored cells of a (n_rows, n_columns) sum, checked, as sorted codes and float64 sums."""
    if rows.size and (rows.min() < 0 or rows.max() >= n_rows or columns.min() < 0 or columns.max() >= n_columns):
        raise LdacliError(f"{source}: expected snapshot cells within {within}, found others")
    codes, sums = sorted_cells(rows.astype(np.int64) * n_columns + columns, np.asarray(sums, np.float64))
    if np.any(codes[1:] == codes[:-1]):
        raise LdacliError(f"{source}: expected each snapshot cell once, found some twice")
    return codes, sums


def _mean_rows(out: np.ndarray, first: int, cells: tuple[np.ndarray, np.ndarray], n: int) -> None:
    """Rows ``first`` to ``first + len(out)`` of the dense array whose sparse sums are ``cells``
    (sorted codes ``row * columns + column``, sums), divided by ``n``, into ``out``."""
    codes, sums = cells
    columns = out.shape[1]
    lo, hi = np.searchsorted(codes, [first * columns, (first + out.shape[0]) * columns])
    out.fill(0.0)
    out.reshape(-1)[codes[lo:hi] - first * columns] = sums[lo:hi] / n


def _merged_in_place(codes: np.ndarray, sums: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]]
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The running sums ``codes`` (int64, sorted), ``sums`` (float64; arrays of their own, which
    nothing else refers to) plus the non-empty ``parts`` (as :meth:`CellSums.add_parts` takes
    them), in those arrays: grown by the parts' cells, merged from the end, a part at a time
    from the last (each with the running cells from its first code on), then moved down and
    shrunk. A snapshot then touches fresh memory only for its new cells, where a merge into new
    arrays faulted in the whole sum again each time (most of a large run's snapshot) and held
    two sums at once."""
    old = codes.size
    starts = [0] + [int(np.searchsorted(codes, c[0])) for c, _ in parts[1:]]
    end = old + sum(c.size for c, _ in parts)
    codes.resize(end, refcheck=False)
    sums.resize(end, refcheck=False)
    top, hi = end, old
    for (part_codes, values), lo in zip(reversed(parts), reversed(starts)):
        top = _cgs.merge_cells_back(codes, sums, lo, hi, np.ascontiguousarray(part_codes, dtype=np.int64),
                                    np.ascontiguousarray(values, dtype=np.int32), top)
        hi = lo
    _cgs.move_cells(codes, sums, top, end)
    return _shrunk(codes, end - top), _shrunk(sums, end - top)


def _shrunk(x: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` entries of ``x``, an array of its own that nothing else refers to, in its
    own memory (a large one shrinks where it is: no copy of a sum beside the room it was made in)."""
    x.resize(n, refcheck=False)
    return x
