"""The collapsed Gibbs sampler trained from disk: a shard folder's tokens and their topics are
kept in block files on disk and streamed through each sweep, so that a corpus larger than memory
trains on one machine, to the bytes the same run gives in memory.

The sweep is the partition scheme's (:mod:`ldacli.methods.cgs.threads`): P rounds, in round r
shard s samples its tokens of word slice (s + r) mod P. A block (shard s, slice j) is what one
such step reads and writes, so the tokens are written to disk grouped by block: each shard's
file holds, for each slice j in turn, the start and end of each of its documents' tokens of
slice j in the block ((d, 2) int32), their words and their topics (int32 each). A round reads
1/P of the tokens, a sweep each token once; a reading thread reads the next block while the
current one is sampled, and the topics of a block are written back as soon as it is sampled.
Each block is sampled as the threads engine samples it (the sparse kernel, the shard's stream,
the round's topic totals), so the bytes are the same as in memory at any thread count.

What stays in memory: the word-topic counts (in the sparse sampler's word lists), the lists of
each document's topics (the sparse sampler's, min(K, N_d) entries of 4 bytes a document), each
document's length, and the blocks being read, sampled and written (at most ``threads + 1``).
At the start, each shard's tokens are read from the folder, given their first topics and
written out by block, and its word-topic counts to a file beside them, which are then summed a
range of words at a time (:class:`PairFiles`). What needs a shard's topics in corpus order (the
log likelihood, the model's document-topic counts, a checkpoint) puts them together from its
blocks, a shard at a time; the documents' snapshot sums, when the run averages snapshots, are
kept in a file per shard beside the blocks.

Checkpoints are the shard files a cluster's workers write (:mod:`~ldacli.methods.cgs.dask_checkpoints`),
in a folder beside the checkpoint, so that a run from disk resumes from disk, on a cluster, or in
memory.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import tempfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ldacli.corpora.counts import doc_pointers, tokens_of
from ldacli.errors import LdacliError, OutputError
from ldacli.methods.cgs.dask_checkpoints import (ARRAY, CheckpointFolders, ShardFiles, checkpoint_folder, prune,
                                                read_shard_checkpoint, shard_file, write_shard_checkpoint)
from ldacli.methods.cgs.layouts import WordLists
from ldacli.methods.cgs.sampler import FirstTopics, OneCopyOfCounts, block_totals, wide_totals
from ldacli.methods.cgs.snapshots import CellSums, doc_cell_arrays
from ldacli.methods.cgs.shard import (HISTOGRAM_CHUNK_CELLS, Shard, doc_topic_blocks, doc_topic_cells,
                                      document_lists, merge_doc_histograms, shard_doc_histograms, shard_log_prior,
                                      slice_runs, word_topic_pairs)
from ldacli.partition import word_slices
from ldacli.topic_counts import narrowest
from ldacli.topic_word_prior import TopicWordPrior

log = logging.getLogger("ldacli")

# Ranges of words (of about equal tokens) whose counts the start sums at a time.
PAIR_RANGES = 64


@dataclass
class Block:
    """A block as read from disk: ``runs`` (d, 2) int32, each document's tokens of the slice in
    the block (start, end), their ``words`` and topics ``z`` (int32)."""

    runs: np.ndarray
    words: np.ndarray
    z: np.ndarray


def _in_memory(path: str) -> bool:
    """Whether ``path`` is on a file system held in memory (tmpfs, ramfs), by the mount that holds it."""
    best, kind = "", ""
    try:
        with open("/proc/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 2 and (path == fields[1] or path.startswith(fields[1].rstrip("/") + "/")):
                    if len(fields[1]) > len(best):
                        best, kind = fields[1], fields[2]
    except OSError:
        return False
    return kind in ("tmpfs", "ramfs")


def _read_into(fd: int, array: np.ndarray, offset: int) -> None:
    view = memoryview(array).cast("B")
    done = 0
    while done < view.nbytes:
        n = os.preadv(fd, [view[done:]], offset + done)
        if n <= 0:
            raise OSError(f"the block file ended {view.nbytes - done} bytes early")
        done += n


def _write_from(fd: int, array: np.ndarray, offset: int) -> None:
    view = memoryview(np.ascontiguousarray(array)).cast("B")
    done = 0
    while done < view.nbytes:
        done += os.pwrite(fd, view[done:], offset + done)


class BlockFiles:
    """The blocks of every shard, a file per shard in a private folder (mode 0700) made inside
    ``where`` (None: the temporary folder), removed by :meth:`close`. For block (s, j) the file
    of shard s holds, from ``at[s][j]``: the runs, the words, the topics."""

    def __init__(self, where: str | None, n_shards: int, n_slices: int):
        try:
            self.folder = tempfile.mkdtemp(prefix="ldacli-blocks-", dir=where)
        except OSError as exc:
            raise OutputError(where or tempfile.gettempdir(), "the blocks of a run from disk",
                              f"cannot make a folder for them: {exc.strerror or exc}") from None
        if _in_memory(self.folder):
            log.warning("%s: the block files of a run from disk are in a folder held in memory (tmpfs): give "
                        "--scratch a folder on a disk", self.folder)
        self.fds: list[int] = []
        self.at: list[list[tuple[int, int, int]]] = []  # per shard, per slice: (offset, documents, tokens)
        self.P = n_slices

    def path(self, s: int) -> str:
        return os.path.join(self.folder, f"blocks-{s:05d}.bin")

    def add(self, s: int, words: np.ndarray, z: np.ndarray, runs: np.ndarray) -> None:
        """Write shard ``s`` (its tokens ``words``, topics ``z`` and ``runs`` (d, P+1), as
        :func:`~ldacli.methods.cgs.shard.slice_runs` gives them) by block."""
        assert s == len(self.fds)
        fd = os.open(self.path(s), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        self.fds.append(fd)
        places, offset = [], 0
        d = runs.shape[0]
        for j in range(self.P):
            lo, hi = runs[:, j].astype(np.int64), runs[:, j + 1].astype(np.int64)
            lengths = hi - lo
            ends = np.cumsum(lengths)
            n = int(ends[-1]) if d else 0
            at = np.repeat(lo - (ends - lengths), lengths) + np.arange(n, dtype=np.int64)
            block_runs = np.empty((d, 2), np.int32)
            block_runs[:, 0], block_runs[:, 1] = ends - lengths, ends
            try:
                _write_from(fd, block_runs, offset)
                _write_from(fd, words[at], offset + block_runs.nbytes)
                _write_from(fd, z[at], offset + block_runs.nbytes + 4 * n)
            except OSError as exc:
                raise OutputError(self.path(s), "the blocks of a run from disk",
                                  f"cannot write: {exc.strerror or exc}") from None
            places.append((offset, d, n))
            offset += block_runs.nbytes + 8 * n
        self.at.append(places)

    def read(self, s: int, j: int) -> Block:
        offset, d, n = self.at[s][j]
        block = Block(np.empty((d, 2), np.int32), np.empty(n, np.int32), np.empty(n, np.int32))
        try:
            _read_into(self.fds[s], block.runs, offset)
            _read_into(self.fds[s], block.words, offset + 8 * d)
            _read_into(self.fds[s], block.z, offset + 8 * d + 4 * n)
        except OSError as exc:
            raise LdacliError(f"{self.path(s)}: cannot read a block of a run from disk: {exc}") from None
        return block

    def write_topics(self, s: int, j: int, z: np.ndarray) -> None:
        offset, d, n = self.at[s][j]
        try:
            _write_from(self.fds[s], z, offset + 8 * d + 4 * n)
        except OSError as exc:
            raise OutputError(self.path(s), "the blocks of a run from disk",
                              f"cannot write: {exc.strerror or exc}") from None

    def topics(self, s: int, ptr: np.ndarray) -> np.ndarray:
        """Shard ``s``'s topics in corpus order (its documents' pointers ``ptr``, from 0): each
        document's tokens of slice 0, then of slice 1, ... (its words are in increasing order)."""
        z = np.empty(int(ptr[-1]), np.int32)
        before = np.asarray(ptr[:-1], np.int64).copy()  # where each document's next slice goes
        for j in range(self.P):
            block = self.read(s, j)
            lengths = (block.runs[:, 1] - block.runs[:, 0]).astype(np.int64)
            at = np.repeat(before - block.runs[:, 0], lengths) + np.arange(block.z.size, dtype=np.int64)
            z[at] = block.z
            before += lengths
        return z

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        shutil.rmtree(self.folder, ignore_errors=True)


class DiskSampler(OneCopyOfCounts):
    """The engine that trains from disk (a :class:`~ldacli.methods.cgs.sampler.Sampler`): the
    sparse sampler over a :class:`~ldacli.corpora.formats.shards.ShardFolder`, its shards those
    of the folder, with the same numbers as :class:`~ldacli.methods.cgs.threads.ThreadsSampler`
    on the folder read whole. ``first``: the run's first topics (drawn shard after shard from
    stream 0, as in memory), or ``files``: the shard checkpoint files to resume from, or ``z``:
    every token's topic (a checkpoint written in memory).
    ``scratch``: where the block files go (None: the temporary folder). ``keeps_doc_sums``: the
    run averages snapshots, and the documents' snapshot sums are kept on disk here, a file per
    shard (in the checkpoint's shard files too), never all in memory."""

    kind = "sparse"

    def __init__(self, folder, n_topics: int, alpha, beta: float, rngs: list, *, threads: int = 1,
                 prior: TopicWordPrior | None = None, first: FirstTopics | None = None,
                 files: ShardFiles | None = None, z: np.ndarray | None = None, scratch: str | None = None,
                 keeps_doc_sums: bool = False):
        self.folder = folder
        self.V, self.K = folder.n_words, n_topics
        self.n_docs = folder.n_docs
        self._set_prior(alpha, beta, prior)
        self.rngs = rngs
        ranges = folder.shard_ranges()
        self.ranges = ranges
        self.P = len(ranges)
        self.n_tokens = int(ranges[-1].hi)
        self.wide = wide_totals(ranges, folder.path)  # past 2^31 - 1 tokens, blocks sample against totals less a base
        freq = folder.word_frequencies()
        self.slices = word_slices(freq, self.P)
        lengths = folder.doc_lengths
        self.ptrs = [doc_pointers(lengths[r.d_lo:r.d_hi]) for r in ranges]
        self.blocks = BlockFiles(scratch, self.P, self.P)
        self.fingerprint = folder.fingerprint()
        self._run = secrets.token_hex(4)
        self._folders = CheckpointFolders()
        self._pending: ShardFiles | None = None
        self.keeps_doc_sums = keeps_doc_sums  # the run averages snapshots: the documents' sums are kept here
        try:
            pairs = PairFiles(self.blocks.folder, freq, self.K)
            self.lists = []
            totals = np.zeros(self.K, np.int64)
            for s, r in enumerate(ranges):
                words, ptr = tokens_of(folder.shard_counts(s))
                if files is not None:
                    topics, _, doc_cells = read_shard_checkpoint(files.path(s), files.sha256[s], s, r.hi - r.lo,
                                                                 self.K, self.fingerprint, r.d_hi - r.d_lo)
                    if doc_cells is not None and keeps_doc_sums:
                        sums = CellSums(r.d_hi - r.d_lo, self.K)
                        sums.restore_cells(doc_cells)
                        self._keep_doc_sums(s, sums)
                else:
                    topics = z[r.lo:r.hi] if z is not None else first.draw(words)
                pairs.add(words, topics)
                totals += np.bincount(topics, minlength=self.K)
                self.blocks.add(s, words, topics, slice_runs(words, ptr, self.slices))
                self.lists.append(document_lists(ptr, topics, self.K))
                del words, topics
            self.shared = WordLists(self.V, self.K, pairs.merged(), WordLists.layout_for(freq, self.K))
            pairs.close()
        except BaseException:
            self.blocks.close()
            raise
        threads = max(1, min(threads, self.P))
        self._free: deque = deque(self.shared.sharing() for _ in range(threads))  # int32 totals, for the kernels
        self.shared.nk = totals  # int64 (those the counts were made with are 32-bit)
        self._pool = ThreadPoolExecutor(threads)
        self._reader = ThreadPoolExecutor(1)
        self.threads = threads

    def _sample(self, s: int, j: int, block, start: np.ndarray, priors) -> np.ndarray:
        """Sample block (shard ``s``, slice ``j``), read by ``block`` (a future), from the
        round's totals ``start`` (int32) under ``priors`` (:func:`~ldacli.methods.cgs.sampler.block_totals`),
        write its topics back; returns the change of the totals."""
        data = block.result()
        worker = self._free.popleft()
        try:
            np.copyto(worker.nk, start)
            shard = Shard(data.words, data.z, self.ptrs[s], self.ranges[s].lo, self.rngs[s], data.runs,
                          lists=self.lists[s])
            worker.sweep(shard, 0, priors)
            delta = worker.nk - start
        finally:
            self._free.append(worker)
        self.blocks.write_topics(s, j, data.z)
        return delta

    def sweep(self) -> None:
        P = self.P
        for r in range(P):
            start, priors = block_totals(self.shared.nk, self.priors, self.wide)
            in_flight: deque = deque()
            deltas = []
            for s in range(P):
                if len(in_flight) > self.threads:
                    deltas.append(in_flight.popleft().result())
                j = (s + r) % P
                block = self._reader.submit(self.blocks.read, s, j)
                in_flight.append(self._pool.submit(self._sample, s, j, block, start, priors))
            deltas.extend(f.result() for f in in_flight)
            self.shared.nk += np.sum(deltas, axis=0, dtype=np.int64)

    # What the method reads of the state besides the counts: from the document lists, or each
    # shard's topics put together from its blocks, in shard order.

    def _topics(self):
        for s in range(self.P):
            yield s, self.ptrs[s], self.blocks.topics(s, self.ptrs[s])

    def doc_log_priors(self, alpha: np.ndarray) -> list[float]:
        return [shard_log_prior(ptr, z, alpha) for _, ptr, z in self._topics()]

    def doc_histograms(self) -> tuple[tuple, tuple]:
        # (off the documents' lists, which every shard has here: its topics are not read back)
        return merge_doc_histograms([shard_doc_histograms(self.ptrs[s], None, self.K, self.lists[s])
                                     for s in range(self.P)])

    def doc_topic_blocks(self, cells: int = HISTOGRAM_CHUNK_CELLS):
        for s, ptr, z in self._topics():
            for lo, block in doc_topic_blocks(ptr, z, self.K, cells):
                yield self.ranges[s].d_lo + lo, block

    def _lists_shard(self, s: int) -> Shard:
        """Shard ``s`` as far as its documents' lists go."""
        return Shard(None, None, self.ptrs[s], self.ranges[s].lo, self.rngs[s], None, lists=self.lists[s])

    def doc_topic_cell_parts(self):
        for s, r in enumerate(self.ranges):
            yield doc_topic_cells(self._lists_shard(s), self.K, r.d_lo)

    def rng_states(self) -> list[dict]:
        return [rng.bit_generator.state for rng in self.rngs]

    def checkpoint(self, path: str, iteration: int) -> tuple[list[dict], dict[str, np.ndarray]]:
        """The shards' part of a checkpoint: each shard's topics and stream written to its file
        in a folder beside the checkpoint (``CKPT.checkpoints/``; the shard folder may be read-only
        or shared), as a cluster's workers write them, named by the checkpoint."""
        # beside the checkpoint: CKPT.checkpoints/
        folder = self._folders.claim(checkpoint_folder(os.path.splitext(path)[0], path), path)
        states = self.rng_states()
        names, digests = [], []
        for s, ptr, z in self._topics():
            names.append(shard_file(s, iteration, self._run))
            params = {"shard": s, "sweep": iteration, "n_tokens": int(z.size), "n_topics": self.K,
                      "run": self._run, "corpus_fingerprint": self.fingerprint}
            try:
                sums = self._doc_sums(s) if self.keeps_doc_sums else None
                digests.append(write_shard_checkpoint(os.path.join(folder, names[-1]), z, states[s], params,
                                                      doc_cell_arrays(sums.sparse(), self.K) if sums else None))
            except OSError as exc:
                raise OutputError(path, "checkpoint", f"cannot write {names[-1]} in {folder}: "
                                                      f"{exc.strerror or exc}") from None
        self._pending = ShardFiles(folder, names, digests, iteration)
        return states, {ARRAY: self._pending.array()}

    def committed(self) -> None:
        if self._pending is not None:
            prune(self._pending.folder, self._pending.files)
            self._pending = None

    # The documents' snapshot sums, a file per shard beside the blocks (the method's snapshots
    # leave them here: :meth:`~ldacli.methods.cgs.snapshots.Snapshots.keep_docs_on`), read and
    # written a shard at a time.

    def _doc_sums_path(self, s: int) -> str:
        return os.path.join(self.blocks.folder, f"docsums-{s:05d}.npy")

    def _doc_sums(self, s: int) -> CellSums:
        sums = CellSums(self.ranges[s].d_hi - self.ranges[s].d_lo, self.K)
        path = self._doc_sums_path(s)
        if os.path.exists(path):
            with open(path, "rb") as f:
                sums.add_parts(_pieces_of(f))
        return sums

    def _keep_doc_sums(self, s: int, sums: CellSums) -> None:
        """Write shard ``s``'s sums, a part of them at a time (codes and sums in their narrowest
        dtypes), then an empty array."""
        path = self._doc_sums_path(s)
        code = narrowest(sums.shape[0] * sums.shape[1])
        try:
            with open(path + ".tmp", "wb") as f:
                for codes, values in sums.parts()():
                    np.save(f, codes.astype(code))
                    np.save(f, values)
                np.save(f, np.zeros(0, code))
            os.replace(path + ".tmp", path)
        except OSError as exc:
            raise OutputError(path, "the snapshot sums of a run from disk", f"cannot write: {exc.strerror or exc}"
                              ) from None

    def start_doc_sums(self, cells: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Start the documents' sums from ``cells`` (sorted codes ``d * K + k`` in the corpus and
        their sums; a checkpoint written in memory), split by shard."""
        if cells is None:
            return
        codes, values = cells
        for s, r in enumerate(self.ranges):
            lo, hi = np.searchsorted(codes, [r.d_lo * np.int64(self.K), r.d_hi * np.int64(self.K)])
            sums = CellSums(r.d_hi - r.d_lo, self.K)
            sums.restore_cells((codes[lo:hi] - r.d_lo * np.int64(self.K), values[lo:hi]))
            self._keep_doc_sums(s, sums)

    def snapshot_docs(self) -> None:
        """Add each shard's documents' topic counts to their snapshot sums."""
        for s, r in enumerate(self.ranges):
            sums = self._doc_sums(s)
            sums.add_parts([doc_topic_cells(self._lists_shard(s), self.K, 0)])
            self._keep_doc_sums(s, sums)

    def clear_doc_sums(self) -> None:
        for s in range(self.P):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._doc_sums_path(s))

    def doc_sum_cell_parts(self):
        """Every shard's documents' snapshot sums as sorted cells (codes ``d * K + k`` in the
        corpus), a shard at a time, in shard order."""
        for s, r in enumerate(self.ranges):
            for codes, values in self._doc_sums(s).parts()():
                yield codes + r.d_lo * np.int64(self.K), values

    def mean_rows(self, out: np.ndarray, first: int, n: int) -> None:
        """Documents ``first`` to ``first + len(out)`` of the snapshot sums, divided by ``n``."""
        last = first + out.shape[0]
        for s, r in enumerate(self.ranges):
            lo, hi = max(first, r.d_lo), min(last, r.d_hi)
            if lo < hi:
                self._doc_sums(s).mean_rows(out[lo - first:hi - first], lo - r.d_lo, n)

    def close(self) -> None:
        for pool in (self._pool, self._reader):
            pool.shutdown()
        self.blocks.close()
        self._folders.close()


def _pieces_of(f):
    """The pieces of sums :meth:`DiskSampler._keep_doc_sums` wrote in the open file ``f``: codes
    (int64) and sums."""
    while True:
        codes = np.load(f)
        if not codes.size:
            return
        yield codes.astype(np.int64), np.load(f)


class PairFiles:
    """The word-topic counts of each shard's tokens as they are read at the start (sorted codes
    ``word * K + topic``, int64, and their counts, int32), in a file in ``folder``, with where
    each of :data:`PAIR_RANGES` ranges of words starts in it; :meth:`merged` sums them a range of
    words at a time: the start holds one range of every shard's cells, never a (V, K) array or
    all of them."""

    def __init__(self, folder: str, freq: np.ndarray, n_topics: int):
        self.K = n_topics
        self.ranges = word_slices(freq, PAIR_RANGES)
        self.path = os.path.join(folder, "pairs.bin")
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        self.parts: list[tuple[int, np.ndarray]] = []  # per shard: offset, where each range starts
        self.end = 0

    def add(self, words: np.ndarray, z: np.ndarray) -> None:
        codes, counts = word_topic_pairs(words, z, self.K)
        cuts = np.searchsorted(codes, self.ranges * self.K)
        try:
            _write_from(self.fd, codes, self.end)
            _write_from(self.fd, counts.astype(np.int32), self.end + 8 * codes.size)
        except OSError as exc:
            raise OutputError(self.path, "the start of a run from disk",
                              f"cannot write: {exc.strerror or exc}") from None
        self.parts.append((self.end, cuts))
        self.end += 12 * codes.size

    def merged(self):
        """The sums of every shard's counts, as :class:`~ldacli.methods.cgs.layouts.Replica` takes
        them: (codes, counts) int64 of whole words, in increasing order."""
        for r in range(self.ranges.size - 1):
            codes, counts = [], []
            for offset, cuts in self.parts:
                n, lo, hi = int(cuts[-1]), int(cuts[r]), int(cuts[r + 1])
                c, v = np.empty(hi - lo, np.int64), np.empty(hi - lo, np.int32)
                _read_into(self.fd, c, offset + 8 * lo)
                _read_into(self.fd, v, offset + 8 * n + 4 * lo)
                codes.append(c)
                counts.append(v)
            codes, inverse = np.unique(np.concatenate(codes), return_inverse=True)
            yield codes, np.bincount(inverse, weights=np.concatenate(counts), minlength=codes.size).astype(np.int64)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
            os.unlink(self.path)
