"""The states of the chain that phi and theta average (snapshots): which sweeps, and their
counts' sums, kept sparse; what a checkpoint holds of them.
"""

from __future__ import annotations

import logging

import numpy as np

from ldacli.corpora.counts import starts
from ldacli.errors import LdacliError
from ldacli.methods.base import Method
from ldacli.model import Checkpoint
from ldacli.parallel import Pool
from ldacli.topic_counts import SparseRows, narrowest, sorted_cells, unmarked

log = logging.getLogger("ldacli")

# A checkpoint's document-topic sums (the client's, or a shard file's, numbered in the shard).
DOC_CELLS, DOC_SUMS = "snapshot_doc_cells", "snapshot_doc_sums"


def snapshot_sweeps(iterations: int, snapshots: int, interval: int) -> frozenset[int]:
    """The sweeps whose states phi and theta average: the last and every ``interval`` before
    it, ``snapshots`` in all, those in the second half of the run only (a state of the first
    half is too far from the posterior to help a short run)."""
    return frozenset(s for s in range(iterations, iterations - snapshots * interval, -interval)
                     if s > iterations // 2)


class Snapshots:
    """Sums of the word-topic, topic and document-topic counts of the states at ``sweeps``,
    which phi and theta average (Griffiths & Steyvers 2004 average samples of the chain; so does
    topica by default). Each kind of sum is kept by rows, in the narrowest dtypes its values
    take (:class:`CellSums`): the word-topic sums by word, the word lists' cells merged a range
    of words at a time, the document-topic sums by document, a shard's cells at a time, so that
    a snapshot's merge takes scratch of a part of the sums, never a copy of them or of the new
    cells all at once. A checkpoint holds them, sparse (``snapshot_taken``, the sweeps summed; ``snapshot_cells``,
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
        # the word-topic sums by word, (V, K): the word lists give a snapshot's cells word by word
        self.cells, self.doc_cells = CellSums(V, K), CellSums(self.lengths.size, K)
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
        cells = _checked_cells(words, topics, stored["snapshot_cell_sums"], V, K, source, f"{K} topics and {V} words")
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
        counts, K = sampler.counts, self.K

        def word_cells():  # a range of words at a time, each word's cells by topic
            for words, topics, n in counts.cell_parts():
                codes = words.astype(np.int64) * K + topics
                order = np.argsort(codes, kind="stable")
                yield codes[order], n[order]
        pool = getattr(sampler, "pool", None)  # (the threads engine's: its threads are free between sweeps)
        self.cells.add_parts(word_cells(), pool)
        self.topic += counts.nk
        if self.remote is not None:
            self.remote.snapshot_docs()
        else:  # a shard's cells at a time
            self.doc_cells.add_parts(sampler.doc_topic_cell_parts(), pool)
        self.taken.append(sweep)

    def arrays(self) -> dict[str, np.ndarray]:
        if not self.taken:
            return {}
        codes, sums = joined(self.cells.column_parts(), self.cells.n_cells)  # by topic, then word
        out = {"snapshot_taken": np.array(self.taken, dtype=np.int32),
               "snapshot_cells": np.array([codes % self.V, codes // self.V], dtype=np.int32),
               "snapshot_cell_sums": sums, "snapshot_topic": self.topic}
        if self.remote is None:  # (else in the workers' shard files)
            out.update(doc_cell_arrays(self.doc_cells.sparse(), self.K))
        return out

    def word_sum_rows(self, out: np.ndarray, first: int) -> None:
        """Rows (topics) ``first`` to ``first + len(out)`` of the word-topic sums, (K, V) topic-major,
        into ``out`` (float64), what :func:`~ldacli.topic_counts.phi_rows` takes."""
        self.cells.mean_columns(out, first, 1)

    def doc_sum_rows(self, out: np.ndarray, first: int) -> None:
        """Rows (documents) ``first`` to ``first + len(out)`` of the document-topic sums into
        ``out`` (float64), what :func:`~ldacli.topic_counts.theta_rows` takes."""
        (self.remote or self.doc_cells).mean_rows(out, first, 1)

    def word_sums(self) -> SparseRows:
        """The word-topic sums by topic (phi's layout), as a model file keeps them, made as it
        is written."""
        return SparseRows.streamed(self.cells.column_parts(), self.K, self.V)

    def doc_sums(self) -> SparseRows:
        """The document-topic sums by document, as a model file keeps them, made as it is written
        (from the workers that keep them, a shard at a time)."""
        parts = self.doc_cells.parts() if self.remote is None else self.remote.doc_sum_cell_parts
        return SparseRows.streamed(parts, self.lengths.size, self.K)


class CellSums:
    """The sums of a (rows, columns) array of whole numbers over the snapshots, kept by rows (as a
    model file keeps them) in parts of consecutive rows (:class:`RowPart`): each row's columns
    and sums, in the narrowest unsigned dtypes their values take (a sum as a byte, those of 255
    or more kept apart when that is smaller: 3 bytes a cell where the columns fit in 16 bits),
    where the sorted codes and float64 sums they replace took 16. A snapshot's cells are merged a part at a time
    (about :data:`PART_CELLS` cells each: a part that grows past twice that is cut), so that
    merging takes scratch of one part, never of all the sums; the parts' arrays are replaced,
    never changed in place, so that a :meth:`state` handed out stays as it was.

    The cells come as sorted codes ``row * columns + column``; :meth:`sparse` gives them back
    so, and :meth:`parts` and :meth:`column_parts` a part or a block of columns at a time (the
    model file's rows, the word-topic sums being kept by word and written by topic)."""

    EMPTY = None  # the state of no sums

    def __init__(self, rows: int, columns: int):
        self.shape = (rows, columns)
        self.cuts = np.array([0, rows], np.int64)  # part p holds rows cuts[p] to cuts[p + 1]
        self.rows = [RowPart.empty(rows, columns)]

    def state(self) -> tuple:
        return self.cuts, list(self.rows)

    def restore(self, state: tuple | None) -> None:
        if state is None:
            self.__init__(*self.shape)
        else:
            self.cuts, self.rows = state[0], list(state[1])

    @property
    def n_cells(self) -> int:
        return sum(part.n_cells for part in self.rows)

    def restore_cells(self, cells: tuple[np.ndarray, np.ndarray]) -> None:
        """The sums as a checkpoint stored them: sorted codes and (float64) sums."""
        self.__init__(*self.shape)
        codes, sums = cells
        self.add_parts([(np.asarray(codes, np.int64), sums)])

    def add_cells(self, codes: np.ndarray, values: np.ndarray) -> None:
        """Add the cells ``codes`` (each once, in any order) with counts ``values``."""
        self.add_parts([sorted_cells(np.asarray(codes, np.int64), values)])

    def add_parts(self, parts, pool: Pool | None = None) -> None:
        """Add the cells ``parts`` (an iterable, read once): each part's codes (int64) sorted and
        above the part's before, with their counts (a sampler's document-topic cells, a shard at
        a time; the word lists' cells, a range of words at a time). Each of the sums' parts is
        merged once with the new cells that fall in it, a part that would take more than
        :data:`PART_CELLS` of them being cut first (the first snapshot's sums are made so); on
        ``pool``'s threads, while the next new cells are read."""
        columns = self.shape[1]
        todo = list(zip(self.cuts[:-1].tolist(), self.cuts[1:].tolist(), self.rows))  # the first is being added to
        self.rows = []  # each part let go of once merged (unless a state handed out holds it)

        def merges():
            """Each part of the sums, in order, with the new cells of its rows: (first row, part,
            codes in the part, counts)."""
            pending: list[tuple[np.ndarray, np.ndarray]] = []
            n_pending = 0

            def cut(upto: int | None = None):
                """The current part with all the pending cells, or with those of rows below
                ``upto``, the part cut there (the rest pending for the part of rows from ``upto``)."""
                nonlocal pending, n_pending
                lo, hi, part = todo[0]
                codes = np.concatenate([c for c, _ in pending]) if pending else np.zeros(0, np.int64)
                values = np.concatenate([v for _, v in pending]) if pending else np.zeros(0, np.int32)
                end = codes.size if upto is None else int(np.searchsorted(codes, upto * columns))
                if upto is None:
                    todo.pop(0)
                else:
                    part, rest = part.split(upto - lo)
                    todo[0] = (upto, hi, rest)
                pending = [(codes[end:], values[end:])] if end < codes.size else []
                n_pending = codes.size - end
                return lo, part, codes[:end] - lo * columns, values[:end]

            for codes, values in parts:
                at = 0
                while at < codes.size:
                    lo, hi, _ = todo[0]
                    if codes[at] >= hi * columns:
                        yield cut()
                        continue
                    end = int(np.searchsorted(codes, hi * columns))
                    pending.append((codes[at:end], values[at:end]))
                    n_pending += end - at
                    at = end
                    if n_pending > PART_CELLS:
                        row = int(pending[-1][0][-1]) // columns  # rows before it are complete
                        if row > lo:
                            yield cut(row)
            while todo:
                yield cut()

        def merged(merge) -> tuple[int, RowPart]:
            lo, part, codes, values = merge
            return lo, part.plus(codes, values, int(values.max(initial=0))) if codes.size else part

        done = list(map(merged, merges()) if pool is None else pool.ahead(merged, merges()))
        self.cuts = np.array([lo for lo, _ in done] + [self.shape[0]], np.int64)
        self.rows = [part for _, part in done]
        self._cut()

    def _cut(self) -> None:
        """Cut each part of more than twice :data:`PART_CELLS` cells into parts of about that many
        (whole rows)."""
        if all(part.n_cells <= 2 * PART_CELLS for part in self.rows):
            return
        cuts, rows = [0], []
        for lo, hi, part in zip(self.cuts[:-1].tolist(), self.cuts[1:].tolist(), self.rows):
            for _, b, piece in part.pieces(PART_CELLS) if part.n_cells > 2 * PART_CELLS else [(0, hi - lo, part)]:
                rows.append(piece)
                cuts.append(lo + b)
        self.cuts, self.rows = np.array(cuts, np.int64), rows

    def sparse(self) -> tuple[np.ndarray, np.ndarray]:
        """The sums as sorted codes (int64) and their sums (float64), the non-zero cells only (new
        arrays)."""
        return joined(self.parts(), self.n_cells)

    def parts(self):
        """The non-zero sums as :data:`~ldacli.topic_counts.Parts` (sorted cells, a part at a
        time), for a model file."""
        columns = self.shape[1]

        def parts():
            for lo, part in zip(self.cuts[:-1].tolist(), self.rows):
                if part.n_cells:
                    yield part.codes() + lo * np.int64(columns), part.sums
        return parts

    def column_parts(self):
        """The non-zero sums of the transposed array, (columns, rows), as
        :data:`~ldacli.topic_counts.Parts`: codes ``column * rows + row``, sorted, a block of
        columns of about :data:`PART_CELLS` cells at a time (each block a pass over the
        parts' columns)."""
        rows, columns = self.shape
        running = np.zeros(columns, np.int64)
        for part in self.rows:
            running += np.bincount(part.columns, minlength=columns)
        np.cumsum(running, out=running)
        total = int(running[-1]) if columns else 0
        edges = np.unique(np.concatenate(([0], np.searchsorted(running, np.arange(PART_CELLS, total, PART_CELLS),
                                                               side="right"), [columns]))).tolist()
        blocks = list(zip(edges[:-1], edges[1:]))

        def parts():
            for c_lo, c_hi in blocks:
                codes, sums = [np.zeros(0, np.int64)], [np.zeros(0, np.uint8)]
                for lo, part in zip(self.cuts[:-1].tolist(), self.rows):
                    inside = (part.columns >= c_lo) & (part.columns < c_hi)
                    if inside.any():
                        codes.append(part.columns[inside] * np.int64(rows) + (part.row_of_cells()[inside] + lo))
                        sums.append(part.sums[inside])
                codes, sums = np.concatenate(codes), np.concatenate(sums)
                order = np.argsort(codes, kind="stable")
                yield codes[order], sums[order]
        return parts

    def mean_rows(self, out: np.ndarray, first: int, n: int) -> None:
        """Rows ``first`` to ``first + len(out)`` of the sums, divided by ``n``, into ``out``."""
        out.fill(0.0)
        last = first + out.shape[0]
        for lo, hi, part in zip(self.cuts[:-1].tolist(), self.cuts[1:].tolist(), self.rows):
            a, b = max(first, lo), min(last, hi)
            if a < b:
                cells = slice(int(part.ptr[a - lo]), int(part.ptr[b - lo]))
                rows = part.row_of_cells()[cells] + (lo - first)
                out[rows, part.columns[cells]] = part.sums[cells] / n

    def mean_columns(self, out: np.ndarray, first: int, n: int) -> None:
        """Columns ``first`` to ``first + len(out)`` of the sums, divided by ``n``, into the rows of
        ``out`` ((columns, rows), the transposed array's rows)."""
        out.fill(0.0)
        last = first + out.shape[0]
        for lo, part in zip(self.cuts[:-1].tolist(), self.rows):
            inside = (part.columns >= first) & (part.columns < last)
            if inside.any():
                out[part.columns[inside].astype(np.int64) - first, part.row_of_cells()[inside] + lo] = \
                    part.sums[inside] / n


def joined(parts, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` cells of :data:`~ldacli.topic_counts.Parts` ``parts`` in two arrays: codes
    (int64) and sums (float64)."""
    codes, sums, at = np.empty(n, np.int64), np.empty(n), 0
    for piece_codes, piece_sums in parts():
        codes[at:at + piece_codes.size] = piece_codes
        sums[at:at + piece_codes.size] = piece_sums
        at += piece_codes.size
    return codes, sums


# Cells a part of CellSums holds (a part that grows past twice this many is cut): its merge's
# scratch is about 40 bytes a cell of it.
PART_CELLS = 1 << 18


class RowPart:
    """Consecutive rows of :class:`CellSums`: ``ptr`` (rows + 1,) int64, where each row's cells
    start; ``columns`` each cell's column, in the narrowest unsigned dtype the number of columns
    allows; each cell's sum in ``small``, in the narrowest unsigned dtype of the largest, or as a
    byte where the few of 255 or more cost less kept apart (as a model file keeps them): the
    mark 255 in ``small`` and the sum in ``large``, in the cells' order; ``most``, the largest
    the sums could be (the largest counts of the snapshots summed, added up). Cells are sorted
    by row, then column; made anew by each merge (:meth:`plus`), never changed."""

    def __init__(self, ptr: np.ndarray, columns: np.ndarray, small: np.ndarray, large: np.ndarray, most: int,
                 n_columns: int):
        self.ptr, self.columns, self.small, self.large = ptr, columns, small, large
        self.most, self.n_columns = most, n_columns

    @classmethod
    def empty(cls, rows: int, n_columns: int) -> "RowPart":
        return cls(np.zeros(rows + 1, np.int64), np.zeros(0, narrowest(max(n_columns - 1, 0))),
                   np.zeros(0, np.uint8), np.zeros(0, np.uint8), 0, n_columns)

    @property
    def n_cells(self) -> int:
        return int(self.columns.size)

    @property
    def sums(self) -> np.ndarray:
        """(cells,) each cell's sum (unsigned)."""
        return unmarked(self.small, self.large)

    def row_of_cells(self) -> np.ndarray:
        """(cells,) int64: each cell's row (in the part)."""
        return np.repeat(np.arange(self.ptr.size - 1, dtype=np.int64), np.diff(self.ptr))

    def codes(self) -> np.ndarray:
        """(cells,) int64: each cell's code ``row * columns + column`` (in the part), increasing."""
        codes = self.row_of_cells()
        codes *= self.n_columns
        codes += self.columns
        return codes

    def plus(self, codes: np.ndarray, values: np.ndarray, largest: int) -> "RowPart":
        """These sums plus the cells ``codes`` (int64, in the part, sorted, each once) and their
        whole-number ``values`` (at most ``largest``): a new part."""
        most = self.most + largest
        kind = narrowest(most)
        old = self.codes()
        at = np.searchsorted(old, codes)
        hit = at < old.size
        hit[hit] = old[at[hit]] == codes[hit]
        sums = self.sums.astype(kind)
        sums[at[hit]] += values[hit].astype(kind)
        miss = ~hit
        if miss.any():  # the new cells go before the old ones at their places, in order
            places = at[miss]
            moved = np.arange(old.size)
            moved += np.cumsum(np.bincount(places, minlength=old.size + 1))[:old.size]
            places += np.arange(places.size)
            merged, merged_sums = np.empty(old.size + places.size, np.int64), np.empty(old.size + places.size, kind)
            merged[moved], merged[places] = old, codes[miss]
            merged_sums[moved], merged_sums[places] = sums, values[miss]
            old, sums = merged, merged_sums
        rows = self.ptr.size - 1
        return RowPart(starts(old // self.n_columns, rows), (old % self.n_columns).astype(self.columns.dtype),
                       *_kept(sums), most, self.n_columns)

    def _slice(self, a: int, b: int) -> "RowPart":
        """Rows ``a`` to ``b`` as a part (arrays of their own)."""
        lo, hi = int(self.ptr[a]), int(self.ptr[b])
        first = last = 0
        if self.large.size:
            first, last = (int(np.count_nonzero(self.small[:at] == MARK)) for at in (lo, hi))
        return RowPart(self.ptr[a:b + 1] - lo, self.columns[lo:hi].copy(), self.small[lo:hi].copy(),
                       self.large[first:last].copy(), self.most, self.n_columns)

    def split(self, row: int) -> tuple["RowPart", "RowPart"]:
        """Rows before ``row`` and rows from it, as two parts."""
        return self._slice(0, row), self._slice(row, self.ptr.size - 1)

    def pieces(self, cells: int):
        """This part cut into parts of about ``cells`` cells (whole rows): (first row, end row,
        part) each."""
        rows = self.ptr.size - 1
        cuts = np.unique(np.concatenate(([0], np.searchsorted(self.ptr, np.arange(cells, self.n_cells, cells)), [rows])))
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            yield a, b, self._slice(a, b)


# The mark of a sum kept apart (RowPart.large), in a part whose sums are kept as bytes.
MARK = 255


def _kept(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums (unsigned) as :class:`RowPart` keeps them: ``small`` and ``large``."""
    wide = narrowest(int(sums.max(initial=0)))
    marked = sums >= MARK
    n_large = int(np.count_nonzero(marked))
    if wide.itemsize > 1 and n_large * wide.itemsize < sums.size * (wide.itemsize - 1):
        return np.minimum(sums, MARK).astype(np.uint8), sums[marked].astype(wide)
    if wide.itemsize == 1 and n_large:  # a sum of 255 itself: not a byte of this layout
        wide = np.dtype(np.uint16)
    return sums.astype(wide), np.zeros(0, np.uint8)


def sum_cell_bytes(columns: int, sum_bytes: int) -> int:
    """What a cell of :class:`CellSums` of ``columns`` columns takes, its sums of ``sum_bytes``."""
    return narrowest(max(columns - 1, 0)).itemsize + sum_bytes


def doc_sum_bytes(tokens: float, docs: float, K: int) -> float:
    """About what the documents' snapshot sums take, of ``docs`` documents holding ``tokens``
    tokens: a cell for each topic a document has in any of the snapshots summed (1.65 a token
    after 12 sweeps of 20 M tokens, K=1000, five snapshots: counted as 2 here; at most K a
    document), each a column and a sum of a byte (the few of 255 or more kept apart: 308 of 34.7
    M cells there), and 8 bytes a document."""
    return sum_cell_bytes(K, 1) * min(2.0 * tokens, float(K) * docs) + 8.0 * docs


# The scratch of a merge of CellSums: about 40 bytes a cell of the part merged (at most twice
# PART_CELLS), what the method's memory estimate counts.
MERGE_BYTES = 40.0 * 2 * PART_CELLS


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
