"""What a collapsed Gibbs model's phi and theta are computed from, and that computation.

Collapsed Gibbs sampling (:mod:`ldacli.methods.cgs.method`) estimates

    phi_kw   = (n_kw + beta_kw) / (n_k + sum_w beta_kw)
    theta_dk = (n_dk + alpha_k) / (N_d + sum_k alpha_k)

from whole numbers: the counts of the chain's final state, or their sums over the S states its
snapshots took, whose mean (sum / S) then stands for the counts. Most cells of both arrays are
zero, so those whole numbers, kept by rows (:class:`SparseRows`: each topic's words and sums,
each document's topics and sums) in the narrowest integer dtypes their values fit
(:func:`narrowest`), are a small part of the dense float64 (K, V) and (D, K) arrays. A model file stores them
(:class:`TopicCounts`) instead of phi and theta, and :func:`phi_rows` and :func:`theta_rows` are
the one computation the method runs on its live state and a loaded model on the stored numbers,
the same operations in the same order, so that a model read back gives the very float64 bytes
the run computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ldacli._update import renumbered_rows
from ldacli.errors import InputError
from ldacli.files.npz import StreamedArray, array, blocks, let_go, mapped, scalar
from ldacli.topic_word_prior import TopicWordPrior, topic_sums

# Whole numbers up to here are exact in float64: every sum, and all of them added up, stay below.
EXACT = 1 << 52
# The unsigned integer dtypes a file's arrays are written in, narrowest first.
UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)
# Cells spread into a dense array at a time (their row ids are made for them).
SPREAD_CELLS = 1 << 20


def narrowest(largest: int) -> np.dtype:
    """The narrowest unsigned integer dtype that holds 0 to ``largest``."""
    for kind in UNSIGNED:
        if largest <= np.iinfo(kind).max:
            return np.dtype(kind)
    raise ValueError(f"{largest} does not fit in 64 bits")


def unmarked(sums: np.ndarray, large: np.ndarray) -> np.ndarray:
    """Values kept with the few large ones apart (as :class:`SparseRows` keeps them): ``sums``
    (unsigned), each marked one (its dtype's largest) taken from ``large`` in order."""
    if not large.size:
        return sums
    values = sums.astype(np.promote_types(sums.dtype, large.dtype))
    values[sums == np.iinfo(sums.dtype).max] = large
    return values


def marked(values: np.ndarray, kind: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (whole numbers >= 0, int64) kept in the unsigned dtype ``kind``, the inverse of
    :func:`unmarked`: each value of at least its largest (the mark) as the mark, and those values
    apart, in order (none in uint64, which no value reaches)."""
    mark = np.iinfo(kind).max
    if mark >= 1 << 62:
        return values.astype(kind), values[:0]
    return np.minimum(values, mark).astype(kind), values[values >= mark]


# Cells of an update's older documents (TopicCounts.after) renumbered or folded at a time.
AFTER_CELLS = 1 << 20


def sorted_cells(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cells ``codes`` (each once) and their ``values`` in increasing order of code."""
    if codes.size > 1 and not bool(np.all(codes[1:] > codes[:-1])):
        order = np.argsort(codes, kind="stable")
        codes, values = codes[order], values[order]
    return codes, values


# --- the computation -----------------------------------------------------------------------------

def phi_rows(out: np.ndarray, first: int, snapshots: int, totals: np.ndarray, beta: float,
             beta_sum: np.ndarray, prior: TopicWordPrior | None) -> None:
    """Rows (topics) ``first`` to ``first + len(out)`` of phi, in place: ``out`` holds those
    topics' word-topic counts on entry (float64, topic-major; every cell, zeros included), the
    final state's when ``snapshots`` is 0, else their sums over that many states; ``totals``
    (K,) each topic's counts (sums) over all words, ``beta_sum`` (K,) each topic's ``sum_w
    beta_kw`` (:func:`~ldacli.topic_word_prior.topic_sums`), ``prior`` the topic-word prior's
    extra mass (None: the symmetric ``beta``). The final state's phi is ``(n_kw + beta) /
    (n_k + sum_w beta_kw)`` with ``n_kw + (beta + extra_kw)`` on the prior's cells; the
    snapshots' ``(sum_kw / S + beta + extra_kw) / (n_k / S + sum_w beta_kw)``, added in that
    order."""
    last = first + out.shape[0]
    cells = None
    if prior is not None:
        inside = (prior.topics >= first) & (prior.topics < last)
        cells = prior.topics[inside] - first, prior.words[inside]
        extra = prior.extra[inside]
    if snapshots:
        out /= snapshots
        out += beta
        if cells is not None:
            out[cells] += extra
        out /= (totals[first:last] / snapshots + beta_sum[first:last])[:, None]
        return
    if cells is not None:
        seeded = out[cells] + (beta + extra)
    out += beta
    if cells is not None:
        out[cells] = seeded
    out /= (totals[first:last] + beta_sum[first:last])[:, None]


def theta_rows(out: np.ndarray, snapshots: int, lengths: np.ndarray, alpha: np.ndarray) -> None:
    """Rows (documents) of theta, in place: ``out`` holds their document-topic counts on entry
    (float64; every cell), the final state's when ``snapshots`` is 0, else their sums over that
    many states; ``lengths`` their tokens. ``(n_dk + alpha_k) / (N_d + sum alpha)``, the mean
    ``sum_dk / S`` standing for ``n_dk`` after snapshots."""
    if snapshots:
        out /= snapshots
    out += alpha
    out /= (lengths + alpha.sum())[:, None]


# --- the counts, kept sparse ---------------------------------------------------------------------

# Where a part of the cells comes from: called again for each pass over them, it gives their
# codes ``row * columns + column`` (increasing, within and across the parts) and whole-number
# values of any numeric dtype.
Parts = Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]


@dataclass(frozen=True, eq=False)
class SparseRows:
    """A (rows, columns) array of whole numbers >= 0 kept by rows (CSR): row r's cells are the
    columns ``columns[ptr[r]:ptr[r+1]]`` (increasing), every other cell 0; ``ptr`` (rows + 1,) and
    ``columns`` (C,) in the narrowest unsigned dtype their values fit (:func:`narrowest`). The
    cells' :attr:`values` are kept as ``sums`` (C,), in the unsigned dtype that makes them smallest,
    and ``large``: a value of at least that dtype's largest (its mark) is the mark in ``sums``
    and itself in ``large``, in the cells' order, so that a few large values do not widen every
    cell. Made :meth:`streamed`, ``columns``, ``sums`` and ``large`` are
    :class:`~ldacli.files.npz.StreamedArray`, made from their source as a file takes them
    (:meth:`materialized` makes the arrays)."""

    ptr: np.ndarray
    columns: np.ndarray | StreamedArray
    sums: np.ndarray | StreamedArray
    large: np.ndarray | StreamedArray
    n_columns: int

    @property
    def n_rows(self) -> int:
        return self.ptr.size - 1

    @property
    def n_cells(self) -> int:
        return int(self.ptr[-1])

    @cached_property
    def values(self) -> np.ndarray:
        """(C,) the cells' values (``sums`` with the marked ones taken from ``large``)."""
        return unmarked(self.sums, self.large)

    @classmethod
    def streamed(cls, parts: Parts, n_rows: int, n_columns: int) -> "SparseRows":
        """The non-zero cells of ``parts`` (:data:`Parts`): one pass over them now counts each
        row's cells, the largest value and how many reach each mark; the columns and the values
        are made again from them, a part at a time, when they are written or :meth:`materialized`."""
        lengths, largest, reaching = np.zeros(n_rows, np.int64), 0, np.zeros(len(MARKS), np.int64)
        for codes, values in _nonzero(parts()):
            rows = codes // n_columns
            low = int(rows[0])
            lengths[low:int(rows[-1]) + 1] += np.bincount(rows - low)
            largest = max(largest, int(values.max()))
            reaching += [np.count_nonzero(values >= mark) for mark in MARKS]
        ptr = np.zeros(n_rows + 1, narrowest(int(lengths.sum())))
        np.cumsum(lengths, out=ptr[1:], dtype=ptr.dtype)
        cells = int(ptr[-1])
        column_type = narrowest(max(n_columns - 1, 0))
        sum_type, large_type, n_large = _value_layout(cells, largest, reaching)

        def pieces(of):
            for codes, values in _nonzero(parts()):
                yield memoryview(np.ascontiguousarray(of(codes, values)))

        large = pieces(lambda c, v: marked(v, sum_type)[1].astype(large_type)) if n_large else ()
        return cls(ptr, StreamedArray(column_type, (cells,), pieces(lambda c, v: (c % n_columns).astype(column_type))),
                   StreamedArray(sum_type, (cells,), pieces(lambda c, v: marked(v, sum_type)[0])),
                   StreamedArray(large_type, (n_large,), large), int(n_columns))

    @classmethod
    def of_parts(cls, parts: Parts, n_rows: int, n_columns: int) -> "SparseRows":
        """:meth:`streamed`, made into arrays."""
        return cls.streamed(parts, n_rows, n_columns).materialized()

    @classmethod
    def empty(cls, n_rows: int, n_columns: int) -> "SparseRows":
        return cls.of_parts(lambda: (), n_rows, n_columns)

    @classmethod
    def stacked(cls, top: "SparseRows", bottom: "SparseRows") -> "SparseRows":
        """The rows of ``top``, then those of ``bottom`` (the same columns), kept as
        :meth:`of_parts` keeps their cells (the same bytes), made as a file takes them (as
        :meth:`streamed`): each part's arrays as they are, or converted to the wider dtype,
        neither their cells made again nor the two copied into one (an update's older documents:
        the most of what it holds at its end)."""
        cells = top.n_cells + bottom.n_cells
        sum_type, large_type, n_large = _value_layout(cells, max(top.largest(), bottom.largest()),
                                                      top.reaching() + bottom.reaching())
        ptr = np.empty(top.n_rows + bottom.n_rows + 1, narrowest(cells))
        ptr[:top.n_rows + 1] = top.ptr
        let_go(top.ptr)
        ptr[top.n_rows + 1:] = bottom.ptr[1:].astype(np.int64) + top.n_cells
        column_type = narrowest(max(top.n_columns - 1, 0))

        def pieces(of, kind):  # (a block at a time: the older documents are mapped from their file)
            for part in (top, bottom):
                for block in blocks(np.asarray(of(part))):
                    yield memoryview(np.ascontiguousarray(block.astype(kind, copy=False)))

        return cls(ptr, StreamedArray(column_type, (cells,), pieces(lambda p: p.columns, column_type)),
                   StreamedArray(sum_type, (cells,), pieces(lambda p: p.kept_as(sum_type)[0], sum_type)),
                   StreamedArray(large_type, (n_large,), pieces(lambda p: p.kept_as(sum_type)[1], large_type)),
                   top.n_columns)

    def largest(self) -> int:
        """The largest value (0 without cells)."""
        return max((int(b.max()) for b in blocks(self.large if self.large.size else self.sums)), default=0)

    def reaching(self) -> np.ndarray:
        """(len(MARKS),) int64: how many values are at least each of :data:`MARKS` (a block of
        them at a time)."""
        mark = np.iinfo(self.sums.dtype).max
        out = np.zeros(len(MARKS), np.int64)
        for values, marks in ((self.sums, [m < mark for m in MARKS]), (self.large, [m >= mark for m in MARKS])):
            for block in blocks(values):
                out += [np.count_nonzero(block >= m) if on else 0 for m, on in zip(MARKS, marks)]
        return out

    def kept_as(self, kind: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        """``sums`` and ``large`` as they are kept in the unsigned dtype ``kind`` (its largest the mark)."""
        if self.sums.dtype == kind:
            return self.sums, self.large
        return marked(unmarked(self.sums, self.large).astype(np.int64, copy=False), kind)

    def materialized(self) -> "SparseRows":
        """The same with ``columns``, ``sums`` and ``large`` as arrays (itself when they are)."""
        if not isinstance(self.columns, StreamedArray):
            return self
        return SparseRows(self.ptr, _filled(self.columns), _filled(self.sums), _filled(self.large), self.n_columns)

    def column(self, column: int, weights: np.ndarray | None = None) -> np.ndarray:
        """(rows,) float64: each row's value in ``column``, divided by the row's ``weights``
        (as a document's sums by the states they add up), without making every cell's value."""
        columns = np.asarray(self.columns)
        at = np.flatnonzero(columns == column)
        sums = np.asarray(self.sums)
        values = sums[at].astype(np.float64)
        large = np.asarray(self.large)
        if large.size:  # (a marked cell's value is the large one of its rank among the marked)
            marked = np.flatnonzero(sums == np.iinfo(sums.dtype).max)
            hit = np.flatnonzero(sums[at] == np.iinfo(sums.dtype).max)
            values[hit] = large[np.searchsorted(marked, at[hit])]
        rows = np.searchsorted(self.ptr.astype(np.int64), at, side="right") - 1
        out = np.zeros(self.n_rows)
        out[rows] = values if weights is None else values / weights[rows]
        return out

    def rows_of_cells(self, lo: int, hi: int) -> np.ndarray:
        """(hi - lo,) int64: the row of each cell ``lo`` to ``hi``."""
        ptr = self.ptr.astype(np.int64)
        first, last = int(np.searchsorted(ptr, lo, "right")) - 1, int(np.searchsorted(ptr, hi, "left"))
        cut = np.clip(ptr[max(first, 0):last + 1], lo, hi)
        return np.repeat(np.arange(max(first, 0), max(first, 0) + cut.size - 1), np.diff(cut))

    def row_sums(self) -> np.ndarray:
        """(rows,) int64: each row's values added up, :data:`SPREAD_CELLS` cells at a time (no
        array of 8 bytes a cell: at 56 M cells its running sums took 450 MB)."""
        ptr = self.ptr.astype(np.int64)
        out = np.zeros(self.n_rows, np.int64)
        running = np.zeros(min(self.n_cells, SPREAD_CELLS) + 1, np.int64)
        bounds = [(lo, min(lo + SPREAD_CELLS, self.n_cells)) for lo in range(0, self.n_cells, SPREAD_CELLS)]
        for (lo, hi), values in zip(bounds, self.value_blocks(bounds)):
            np.cumsum(values, out=running[1:hi - lo + 1], dtype=np.int64)
            first, last = int(np.searchsorted(ptr, lo, "right")) - 1, int(np.searchsorted(ptr, hi, "left"))
            out[first:last] += running[np.clip(ptr[first + 1:last + 1], lo, hi) - lo] \
                - running[np.clip(ptr[first:last], lo, hi) - lo]
        return out

    def value_blocks(self, bounds: Iterable[tuple[int, int]]) -> Iterator[np.ndarray]:
        """The cells' values (:attr:`values`) a block at a time, for consecutive ``bounds`` ``(lo,
        hi)`` of cells from the first: each block's marked values taken from the large ones, in
        order, without making every cell's value."""
        mark, taken = np.iinfo(self.sums.dtype).max, 0
        for lo, hi in bounds:
            values = sums = np.asarray(self.sums[lo:hi])
            large = self.large[taken:taken]
            if self.large.size:
                n = int(np.count_nonzero(values == mark))
                large = self.large[taken:taken + n]
                values, taken = unmarked(values, np.asarray(large)), taken + n
            yield values
            let_go(sums)  # (pages of a mapped file: see files.npz.blocks)
            let_go(large)

    def put(self, out: np.ndarray, first: int) -> None:
        """Rows ``first`` to ``first + len(out)`` into ``out`` ((rows, columns) float64), zeros
        in the cells without a value, :data:`SPREAD_CELLS` cells at a time."""
        out.fill(0.0)
        lo, hi = int(self.ptr[first]), int(self.ptr[first + out.shape[0]])
        values = self.values
        for at in range(lo, hi, SPREAD_CELLS):
            end = min(at + SPREAD_CELLS, hi)
            out[self.rows_of_cells(at, end) - first, self.columns[at:end]] = values[at:end]

    def members(self, name: str, columns: str) -> dict[str, np.ndarray | StreamedArray]:
        """The arrays of a file: ``{name}_ptr``, ``{name}_{columns}``, ``{name}_sums`` and
        ``{name}_sums_large``."""
        return {f"{name}_ptr": self.ptr, f"{name}_{columns}": self.columns, f"{name}_sums": self.sums,
                f"{name}_sums_large": self.large}

    @classmethod
    def read(cls, path: str, arrays: dict, name: str, columns: str, n_rows: int, n_columns: int) -> "SparseRows":
        """The members :meth:`members` wrote, checked as strictly as the rest of a model: integer
        arrays of one dimension, the pointers rising from 0 to the number of cells, the columns
        below ``n_columns`` and increasing within each row (each cell once), values >= 0 (each
        marked one in the large values, each of those at least the mark) adding up to less than
        :data:`EXACT`. An :class:`~ldacli.errors.InputError` naming ``path`` and the member
        otherwise."""
        ptr_name, columns_name, sums_name = f"{name}_ptr", f"{name}_{columns}", f"{name}_sums"
        large_name = f"{sums_name}_large"
        ptr = array(path, arrays, ptr_name, "iu", (n_rows + 1,), minimum=0)
        cols = array(path, arrays, columns_name, "iu", (None,), minimum=0)
        sums = array(path, arrays, sums_name, "iu", cols.shape, minimum=0)
        large = array(path, arrays, large_name, "iu", (None,), minimum=0)
        falls = bool(np.any(ptr[1:] < ptr[:-1]))
        if int(ptr[0]) != 0 or int(ptr[-1]) != cols.size or falls:
            raise InputError(path, None, f"expected '{ptr_name}' to rise from 0 to the {cols.size} cells of "
                                         f"'{columns_name}', found {int(ptr[0])} to {int(ptr[-1])}"
                                         + (", falling on the way" if falls else ""))
        if cols.size and int(cols.max()) >= n_columns:
            raise InputError(path, None, f"expected ids below {n_columns} in '{columns_name}', found {int(cols.max())}")
        # (the cells checked SPREAD_CELLS at a time: no array of a byte a cell, 56 M at 100 M tokens and K=1000)
        mark, n_marked, total = np.iinfo(sums.dtype).max, 0, float(large.sum(dtype=np.float64))
        firsts = ptr[1:-1]  # (cell i is a row's first where it is one of these: it need not rise)
        for lo in range(0, cols.size, SPREAD_CELLS):
            hi = min(lo + SPREAD_CELLS, cols.size)
            top = min(hi, cols.size - 1)  # (cell i against cell i + 1, for i from lo to top - 1)
            rising = cols[lo + 1:top + 1] > cols[lo:top]
            starts = firsts[np.searchsorted(firsts, lo + 1):np.searchsorted(firsts, top, "right")]
            rising[starts.astype(np.int64) - lo - 1] = True
            if not rising.all():
                raise InputError(path, None, f"expected the ids of each row in '{columns_name}' increasing, each "
                                             f"once, found cell {lo + int(np.argmin(rising)) + 1} out of order")
            marked = sums[lo:hi] == mark
            n_marked += int(np.count_nonzero(marked))
            total += float(sums[lo:hi].sum(dtype=np.float64, where=~marked))
        if n_marked != large.size or (large.size and int(large.min()) < mark):
            raise InputError(path, None, f"expected a value of at least {mark} in '{large_name}' for each {mark} in "
                                         f"'{sums_name}', found {large.size} values (the least "
                                         f"{int(large.min(initial=0))}) for {n_marked}")
        if total >= EXACT:
            raise InputError(path, None, f"expected the values of '{sums_name}' to add up to less than 2^52, found "
                                         f"{total:.4g}")
        return cls(ptr, cols, sums, large, int(n_columns))


# A value this large or larger is kept apart when the values are kept in uint8, uint16, uint32.
MARKS = tuple(int(np.iinfo(kind).max) for kind in UNSIGNED[:-1])


def _value_layout(cells: int, largest: int, reaching: np.ndarray) -> tuple[np.dtype, np.dtype, int]:
    """How ``cells`` values are kept (:class:`SparseRows`), whose ``largest`` is given and of
    which ``reaching[i]`` are at least :data:`MARKS` ``[i]``: the dtype of ``sums`` and of
    ``large`` and the number of large values that make the fewest bytes (the narrowest first)."""
    best = None
    for i, kind in enumerate(UNSIGNED):
        n_large = int(reaching[i]) if i < len(MARKS) else 0
        large_type = narrowest(largest) if n_large else np.dtype(np.uint8)
        size = cells * np.dtype(kind).itemsize + n_large * large_type.itemsize
        if best is None or size < best[0]:
            best = (size, np.dtype(kind), large_type, n_large)
    return best[1:]


def _nonzero(parts: Iterable[tuple[np.ndarray, np.ndarray]]):
    """The parts without their zero values and without the parts left empty, the values as int64
    (whole numbers below :data:`EXACT`, whatever dtype they came in)."""
    for codes, values in parts:
        keep = values != 0
        if not keep.all():
            codes, values = codes[keep], values[keep]
        if codes.size:
            yield codes, values.astype(np.int64, copy=False)


def _filled(streamed: StreamedArray) -> np.ndarray:
    """The array whose bytes ``streamed`` gives, made from its pieces."""
    out = np.empty(streamed.shape, streamed.dtype)
    flat, at = out.reshape(-1).view(np.uint8), 0
    for piece in streamed.pieces:
        raw = np.frombuffer(piece, np.uint8)
        flat[at:at + raw.size] = raw
        at += raw.size
    return out


def cell_parts(codes: np.ndarray, values: np.ndarray) -> Parts:
    """:data:`Parts` of cells held whole (sorted codes and values), :data:`SPREAD_CELLS` at a time."""
    def parts():
        step = SPREAD_CELLS
        return ((codes[at:at + step], values[at:at + step]) for at in range(0, codes.size, step))
    return parts


def block_parts(blocks: Callable[[], Iterable[tuple[int, np.ndarray]]], n_columns: int) -> Parts:
    """:data:`Parts` of the non-zero cells of dense blocks: ``blocks()`` gives (first row,
    (rows, n_columns) block), covering the rows in order."""
    def parts():
        for first, block in blocks():
            flat = block.reshape(-1)
            at = np.flatnonzero(flat)
            yield at + first * np.int64(n_columns), flat[at]
    return parts


@dataclass(frozen=True, eq=False)
class WordTopicCounts:
    """The word-topic whole numbers a model's phi is computed from: the cells ``topics`` and
    ``words`` (C,) int64 (sorted by topic, then word; a cell not listed is 0) and their ``sums``
    (C,) int64, each cell's counts added up over ``states`` states of the chain (1: the final
    state's counts; a cell's mean count is ``sums / states``); ``topic_totals`` (K,) int64,
    each topic's sums over every word. Topics are the model's ids."""

    topics: np.ndarray
    words: np.ndarray
    sums: np.ndarray
    states: int
    topic_totals: np.ndarray


# A model file's members for the counts (see docs/reference/file-formats.md): the word-topic sums
# by topic, the document-topic sums by document, how many snapshots they add up, and the order
# of a renumbered model's topics.
WORDS, DOCS = ("topic_word", "words"), ("doc_topic", "topics")
SNAPSHOTS, ORDER = "snapshots_summed", "topic_order"
# An update's model (ldacli.methods.update): the runs of documents sampled by one run, (first
# document, snapshots its sums add up) each, the parent's first.
SEGMENTS = "doc_segments"
WORD_MEMBERS = tuple(f"{WORDS[0]}_{p}" for p in ("ptr", WORDS[1], "sums", "sums_large"))
DOC_MEMBERS = tuple(f"{DOCS[0]}_{p}" for p in ("ptr", DOCS[1], "sums", "sums_large"))


@dataclass(frozen=True, eq=False)
class TopicCounts:
    """What a collapsed Gibbs model's phi and theta are computed from: ``words`` (K rows of V
    words, phi's layout), each topic's sums of its word-topic counts, and ``docs`` (D rows of K
    topics), each document's sums of its document-topic counts, over ``snapshots`` states (0:
    the counts of the final state alone); ``prior`` the topic-word prior's extra mass (None:
    the symmetric beta); ``order`` (K,) for a model whose topics were renumbered
    (:func:`ldacli.diff.align`): its topic i is the run's topic ``order[i]``, the counts and
    the prior keeping the run's ids (None: the run's own order). With a model's alpha and beta
    they give its phi and theta (:meth:`phi`, :meth:`theta_rows`) through :func:`phi_rows` and
    :func:`theta_rows`, as the run computed them."""

    words: SparseRows
    docs: SparseRows
    snapshots: int
    prior: TopicWordPrior | None = None
    order: np.ndarray | None = None
    segments: np.ndarray | None = None
    carried: bool = False  # the prior is an update's evidence, kept in the file's arrays

    @property
    def states(self) -> int:
        """How many states the sums add up (1: the final state)."""
        return max(1, self.snapshots)

    @property
    def n_topics(self) -> int:
        return self.words.n_rows

    @property
    def n_words(self) -> int:
        return self.words.n_columns

    @property
    def n_docs(self) -> int:
        return self.docs.n_rows

    @cached_property
    def topic_totals(self) -> np.ndarray:
        """(K,) int64, the run's topic ids: each topic's sums over every word."""
        return self.words.row_sums()

    @cached_property
    def doc_states(self) -> np.ndarray:
        """(D,) int64: how many states each document's sums add up (1: the final state's): the
        model's, or for an update's model (:attr:`segments`) the run's that sampled it."""
        if self.segments is None:
            return np.full(self.n_docs, self.states, np.int64)
        firsts = np.append(self.segments[:, 0], self.n_docs)
        return np.repeat(np.maximum(1, self.segments[:, 1]), np.diff(firsts))

    @cached_property
    def doc_lengths(self) -> np.ndarray:
        """(D,) int64: each document's tokens (its sums over the states, divided by them)."""
        return self.docs.row_sums() // self.doc_states

    def _doc_segments(self, first: int, last: int):
        """(lo, hi, snapshots): the runs of documents ``first`` to ``last`` whose sums add up the
        same number of snapshots (one run but for an update's model)."""
        if self.segments is None:
            yield first, last, self.snapshots
            return
        firsts = np.append(self.segments[:, 0], self.n_docs)
        for (lo, s), hi in zip(self.segments.tolist(), firsts[1:].tolist()):
            if lo < last and hi > first:
                yield max(lo, first), min(hi, last), s

    def phi(self, beta: float) -> np.ndarray:
        """(K, V) float64, the model's topic ids: phi under ``beta`` (and :attr:`prior`), built in
        place (a renumbered model's rows then moved in place: no second (K, V) array)."""
        K, V = self.n_topics, self.n_words
        out = np.empty((K, V))
        self.words.put(out, 0)
        phi_rows(out, 0, self.snapshots, self.topic_totals, beta, topic_sums(self.prior, beta, V, K), self.prior)
        if self.order is not None:
            _permute_rows(out, self.order)
        return out

    def theta_rows(self, out: np.ndarray, first: int, alpha: np.ndarray) -> None:
        """Rows (documents) ``first`` to ``first + len(out)`` of theta under the model's
        ``alpha`` into ``out`` ((rows, K) float64, the model's topic ids)."""
        run_alpha = alpha
        if self.order is not None:  # the model's alpha in the run's ids
            run_alpha = np.empty_like(alpha)
            run_alpha[self.order] = alpha
        self.docs.put(out, first)
        for lo, hi, snapshots in self._doc_segments(first, first + out.shape[0]):
            theta_rows(out[lo - first:hi - first], snapshots, self.doc_lengths[lo:hi], run_alpha)
        if self.order is not None:
            out[...] = out[:, self.order]

    def word_topic_counts(self) -> WordTopicCounts:
        """The word-topic sums as cells, in the model's topic ids (:class:`WordTopicCounts`)."""
        topics, words, sums = self._word_cells(np.int64, np.int64)
        totals = self.topic_totals if self.order is None else self.topic_totals[self.order]
        return WordTopicCounts(topics, words, sums, self.states, totals.copy())

    def word_means(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The word-topic cells as ``(words, topics, means)``, int32, int32 and float64 (each
        cell's sums over the states divided by them), in the model's topic ids, sorted by topic
        then word: :meth:`word_topic_counts` in 16 bytes a cell (an update's evidence, 3.3 M
        cells at 100 M tokens), made without its 24."""
        topics, words, sums = self._word_cells(np.int32, np.int32, np.float64)  # (counts: a float copy)
        sums /= self.states
        return words, topics, sums

    def _word_cells(self, topic_kind, word_kind, sum_kind=np.int64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = self.words
        topics = np.repeat(np.arange(rows.n_rows, dtype=topic_kind), np.diff(rows.ptr.astype(np.int64)))
        words, sums = rows.columns.astype(word_kind), np.asarray(rows.values).astype(sum_kind, copy=False)
        if self.order is not None:
            topics = np.argsort(self.order).astype(topic_kind)[topics]
            by = np.argsort(topics, kind="stable")  # each topic's words stay in order
            topics, words, sums = topics[by], words[by], sums[by]
        return topics, words, sums

    def reordered(self, order) -> "TopicCounts":
        """The counts of the model whose topic i is this one's topic ``order[i]``."""
        order = np.asarray(order, dtype=np.int64)
        return replace(self, order=order if self.order is None else self.order[order])

    def after(self, older: "TopicCounts", fold: np.ndarray | None = None) -> "TopicCounts":
        """An update's counts (:mod:`ldacli.methods.update`): these, a run's on the night alone (its
        topics and its documents), with ``older``'s documents first (the parent's, their topics
        in the parent's model ids, which the night's run continues); each run of documents keeps
        the number of snapshots its sums add up (:attr:`segments`, when they differ). ``fold``
        (K,) int64: the older documents' topic k counted as topic ``fold[k]`` (an update's freed
        topics, merged into their nearest); None: each its own. The documents are made as a file
        takes them (:meth:`SparseRows.streamed`), a block of the older ones at a time."""
        K, old, new = self.n_topics, older.docs.materialized(), self.docs.materialized()
        D_old = old.n_rows
        runs = [[int(lo), int(s)] for lo, _, s in older._doc_segments(0, D_old)] if D_old else []
        runs.append([D_old, self.snapshots])
        segments = None if len({s for _, s in runs}) == 1 else np.array(runs, np.int64)
        if older.order is None and fold is None:  # the older documents' cells as they are: copied
            return replace(self, docs=SparseRows.stacked(old, new), segments=segments)
        to = np.arange(K, dtype=np.int64) if older.order is None else np.argsort(older.order)
        if fold is not None:
            to = np.asarray(fold, dtype=np.int64)[to]
        ptr = old.ptr.astype(np.int64)
        let_go(old.ptr)
        rows, lo = [], 0  # the older documents, a block of rows at a time (about AFTER_CELLS cells)
        while lo < D_old:
            hi = min(D_old, max(lo + 1, int(np.searchsorted(ptr, ptr[lo] + AFTER_CELLS, "right")) - 1))
            rows.append((lo, hi))
            lo = hi
        cells = [(int(ptr[lo]), int(ptr[hi])) for lo, hi in rows]

        def parts():
            for (lo, hi), (a, b), values in zip(rows, cells, old.value_blocks(cells)):
                if a < b:  # (each row's topics renumbered, in order again, two folded into one cell)
                    codes, sums = np.empty(b - a, np.int64), np.empty(b - a, np.int64)
                    columns = np.asarray(old.columns[a:b])
                    n = renumbered_rows(ptr[lo:hi + 1] - a, columns, values, to, K, lo, codes, sums)
                    let_go(columns)
                    yield codes[:n], sums[:n]
            if new.n_cells:
                yield (new.rows_of_cells(0, new.n_cells) + D_old) * K + new.columns.astype(np.int64), np.asarray(new.values)

        return replace(self, docs=SparseRows.streamed(parts, D_old + new.n_rows, K), segments=segments)

    def without_documents(self) -> "TopicCounts":
        """The counts of the topics alone (no document)."""
        return replace(self, docs=SparseRows.empty(0, self.n_topics), segments=None)

    def materialized(self) -> "TopicCounts":
        """The same with every array made (see :meth:`SparseRows.streamed`)."""
        return replace(self, words=self.words.materialized(), docs=self.docs.materialized())

    def mapped(self, path: str) -> "TopicCounts":
        """The same, its arrays read-only memory maps of the model file at ``path`` that
        :meth:`members` were just written to (trusted: see :func:`~ldacli.files.npz.mapped`)."""
        a = mapped(path, WORD_MEMBERS + DOC_MEMBERS)
        words, docs = (SparseRows(*(a[n] for n in names), n_columns) for names, n_columns
                       in ((WORD_MEMBERS, self.n_words), (DOC_MEMBERS, self.n_topics)))
        return replace(self, words=words, docs=docs)

    def members(self) -> dict[str, np.ndarray | StreamedArray]:
        """The arrays a model file holds of them: the prior's too when it is an update's (the
        evidence it carries, too large for the model's params, where a seeded prior is)."""
        out = {**self.words.members(*WORDS), **self.docs.members(*DOCS), SNAPSHOTS: np.int64(self.snapshots)}
        if self.order is not None:
            out[ORDER] = self.order.astype(narrowest(self.n_topics - 1))
        if self.segments is not None:
            out[SEGMENTS] = self.segments.astype(np.int64)
        if self.prior is not None and self.carried:
            out.update(self.prior.arrays())
        return out

    @classmethod
    def read(cls, path: str, arrays: dict, n_topics: int, n_words: int, n_docs: int | None,
             prior: TopicWordPrior | None, beta: float) -> "TopicCounts":
        """The counts a model file at ``path`` holds (``arrays``) for K topics and V words, and its
        ``n_docs`` documents (None: the documents' members were left unread), checked: each part
        (:meth:`SparseRows.read`), the number of snapshots (>= 0), each document's sums a whole
        multiple of the states (its length), the topic order a permutation, and every topic's
        phi defined under ``beta`` (some tokens, or prior mass)."""
        words = SparseRows.read(path, arrays, *WORDS, n_topics, n_words)
        snapshots = scalar(path, arrays, SNAPSHOTS, "iu")
        if snapshots < 0:
            raise InputError(path, None, f"expected '{SNAPSHOTS}' >= 0, found {snapshots}")
        order = None
        if ORDER in arrays:
            order = array(path, arrays, ORDER, "iu", (n_topics,), minimum=0).astype(np.int64)
            if not np.array_equal(np.sort(order), np.arange(n_topics)):
                raise InputError(path, None, f"expected '{ORDER}' to hold each of the {n_topics} topic ids once, "
                                             f"found others")
        carried = prior is not None and TopicWordPrior.ARRAYS[0] in arrays
        counts = cls(words, SparseRows.empty(0, n_topics), int(snapshots), prior, order, None, carried)
        if n_docs is not None:
            counts = counts.with_documents(path, arrays, n_docs)
        if not np.all(counts.topic_totals + topic_sums(prior, beta, n_words, n_topics) > 0):
            raise InputError(path, None, f"expected every topic to hold tokens in '{WORD_MEMBERS[2]}' or prior mass, "
                                         f"found one with neither under beta {beta:g}")
        return counts

    def with_documents(self, path: str, arrays: dict, n_docs: int, checked: bool = True) -> "TopicCounts":
        """These counts with the documents' part of the model file at ``path`` (``arrays``, its
        ``n_docs`` documents), checked (:meth:`read` reads a whole model's so; an update reads
        its model's documents apart, :func:`~ldacli.methods.update.read_documents`): each
        document's sums a whole multiple of the states its run summed (its length), the runs of
        an update's model (:attr:`segments`) starting at 0 and rising. ``checked=False``: taken
        as they are (a file checked already, whose sha256 says it has not changed since)."""
        if not checked:
            segments = arrays[SEGMENTS].astype(np.int64) if SEGMENTS in arrays else None
            return replace(self, docs=SparseRows(*(arrays[name] for name in DOC_MEMBERS), self.n_topics),
                           segments=segments)
        docs = SparseRows.read(path, arrays, *DOCS, n_docs, self.n_topics)
        segments = None
        if SEGMENTS in arrays:
            segments = array(path, arrays, SEGMENTS, "iu", (None, 2), minimum=0).astype(np.int64)
            firsts = segments[:, 0]
            if not segments.size or firsts[0] != 0 or np.any(firsts[1:] <= firsts[:-1]) or firsts[-1] >= max(1, n_docs):
                raise InputError(path, None, f"expected '{SEGMENTS}' to start runs of documents at 0 and rising "
                                             f"below the {n_docs} documents, found others")
        counts = replace(self, docs=docs, segments=segments)
        if docs.n_cells and np.any(docs.row_sums() % counts.doc_states):
            raise InputError(path, None, f"expected each document's sums in '{DOC_MEMBERS[2]}' to be "
                                         f"{'the states summed' if segments is not None else counts.states} "
                                         f"times its length (a count a token in each state summed), found others")
        return counts


def _permute_rows(a: np.ndarray, order: np.ndarray) -> None:
    """``a[:] = a[order]`` in place, a row at a time along each cycle of the permutation."""
    done = np.zeros(order.size, bool)
    for start in range(order.size):
        if done[start] or order[start] == start:
            continue
        held = a[start].copy()
        i = start
        while True:
            done[i] = True
            j = int(order[i])
            if j == start:
                a[i] = held
                break
            a[i] = a[j]
            i = j
