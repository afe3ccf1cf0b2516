"""The worker's side of the collapsed Gibbs sampler on a Dask cluster: :class:`ShardHost`, the
Dask actor that keeps one worker's part of the run for the whole run (a run of consecutive
shards: their tokens, topics and random streams; the word slices of the counts that are on this
worker), samples its blocks of each round, and sends the slice its first shard used straight to
the previous worker; and :class:`ShardSpec`, what the client sends it to load a shard. The
client's side, which places the shards, schedules the rounds and rebuilds them when a worker is
lost, is :mod:`ldacli.methods.cgs.dask_client`; this module never imports it (a worker runs
this one alone).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from dataclasses import dataclass

import numpy as np

from ldacli.corpora.counts import doc_topic_counts, merge_histograms, tokens_of
from ldacli.corpora.formats.shards import open_shard_folder
from ldacli.errors import InputError, LdacliError
from ldacli.memory import available_bytes
from ldacli.methods.cgs.dask_checkpoints import ShardFiles, read_shard_checkpoint, write_shard_checkpoint
from ldacli.methods.cgs.layouts import Priors, Replica, replica_class
from ldacli.methods.cgs.sampler import FirstTopics, block_totals
from ldacli.methods.cgs.shard import (Shard, doc_topic_cells, merge_doc_histograms, merge_pairs, shard_doc_histograms,
                                      shard_log_prior, topic_bits, word_topic_pairs)
from ldacli.methods.cgs.snapshots import CellSums, doc_cell_arrays, doc_sum_bytes
from ldacli.partition import ShardRange


@dataclass
class ShardSpec:
    """What a worker is sent to load shard ``s`` (:meth:`ShardHost.load`): its ``range`` in the
    corpus; its stream's state ``rng_state`` and topics ``z`` when the sync point has them;
    its ``words`` and document pointers ``ptr`` (from 0) when the client holds the corpus;
    its documents' snapshot sums ``doc_cells`` (codes numbered in the shard) when the sync
    point has them."""

    s: int
    range: ShardRange
    rng_state: dict | None = None
    z: np.ndarray | None = None
    words: np.ndarray | None = None
    ptr: np.ndarray | None = None
    doc_cells: tuple[np.ndarray, np.ndarray] | None = None


class ShardHost:
    """One worker's part of the run (a Dask actor): a run of consecutive shards (tokens, topics,
    random streams) and one replica of the counts, of which the word slices on this worker
    (``resident``) are current. Methods run one at a time in the actor's thread, except the
    ``async`` ones (:meth:`receive_pairs`, :meth:`receive_slice`), which other workers call and
    which run at once on the worker's event loop."""

    def __init__(self, kind: str, n_words: int, n_topics: int, layout, slices: np.ndarray,
                 extra: tuple[np.ndarray, np.ndarray, np.ndarray], wide: bool):
        self.cls = replica_class(kind)
        self.V, self.K, self.layout = n_words, n_topics, layout
        self.slices, self.P = slices, slices.size - 1
        self.extra, self.wide = extra, wide
        self.replica: Replica | None = None
        self.shards: dict[int, Shard] = {}
        self.doc_sums: dict[int, CellSums] = {}  # each shard's documents' snapshot sums (a shard folder's run)
        self.mine: list[int] = []
        self.resident: set[int] = set()
        self.incoming: dict[int, dict] = {}
        self.parts: dict[int, list] = {}
        self.index, self.peers, self.prev = 0, [], None
        self.priors: Priors | None = None
        self.pool: concurrent.futures.ThreadPoolExecutor | None = None

    # --- start-up ---------------------------------------------------------------------------------

    def connect(self, index: int, peers: list) -> int:
        """This worker is number ``index`` of ``peers`` (the actors of every worker of the run)."""
        self.index, self.peers = index, peers
        self.prev = peers[index - 1] if len(peers) > 1 else None
        return os.getpid()

    def load(self, specs: list[ShardSpec], source: dict) -> None:
        """Take the shards ``specs`` (``words`` and ``ptr`` when the client sends them, else read
        from ``source["folder"]``), their topics and streams from ``source``: ``"seed"`` (drawn
        from stream 0, whose state is ``source["state"]``; streams in the specs), ``"z"``
        (topics and streams in the specs) or ``"files"`` (a checkpoint's shard files,
        ``source["files"]``)."""
        need = sum(self._bytes_for(spec, source.get("doc_sums", False)) for spec in specs)
        self._check_memory(need, specs)
        folder = open_shard_folder(source["folder"]) if source.get("folder") else None
        loaded = []
        for spec in sorted(specs, key=lambda sp: sp.range.lo):
            s, r = spec.s, spec.range
            if spec.words is not None:
                words, ptr = np.ascontiguousarray(spec.words, dtype=np.int32), np.asarray(spec.ptr, np.int64)
            else:
                words, ptr = tokens_of(folder.shard_counts(s))
                if words.size != r.hi - r.lo:
                    raise InputError(os.path.join(folder.path, folder.files[s]), None,
                                     f"expected {r.hi - r.lo} tokens in shard {s}, found {words.size}")
            doc_cells = spec.doc_cells
            if source["kind"] == "files":
                files: ShardFiles = source["files"]
                z, state, in_file = read_shard_checkpoint(files.path(s), files.sha256[s], s, words.size, self.K,
                                                          source["fingerprint"], r.d_hi - r.d_lo)
                doc_cells = in_file if doc_cells is None else doc_cells
            else:
                z, state = spec.z, spec.rng_state
            self.doc_sums[s] = CellSums(r.d_hi - r.d_lo, self.K)
            if doc_cells is not None:
                self.doc_sums[s].restore_cells(doc_cells)
            loaded.append([spec, words, ptr, z, state])
        if source["kind"] == "seed":
            self._replay(source["state"], loaded)
        for spec, words, ptr, z, state in loaded:
            rng = np.random.Generator(np.random.PCG64())
            rng.bit_generator.state = state
            self.shards[spec.s] = self.cls.shard(words, np.array(z, dtype=np.int32), ptr, spec.range.lo, rng,
                                                 self.slices)
        self.mine = sorted(self.shards)

    def _bytes_for(self, spec: ShardSpec, doc_sums: bool) -> float:
        """About the memory a shard takes here: tokens and topics, where each document's tokens
        and its slices start (int64 and int32), the alias sampler's orders or the sparse
        sampler's lists of each document's topics (at most one entry a token, of 4 bytes unless
        the shard's documents may be long), and with ``doc_sums`` its documents' snapshot sums
        (:func:`~ldacli.methods.cgs.snapshots.doc_sum_bytes`, as the method estimates them)."""
        n, d = spec.range.hi - spec.range.lo, spec.range.d_hi - spec.range.d_lo
        entry = 4.0 if n < 1 << (32 - topic_bits(self.K)) else 8.0  # no document is longer than its shard
        lists = entry * min(n, self.K * d) + 12.0 * d if self.cls.kind == "sparse" else 0.0
        sums = doc_sum_bytes(n, d, self.K) if doc_sums else 0.0
        return n * (16.0 if self.cls.kind == "alias" else 8.0) + 4.0 * d * (self.P + 3) + lists + sums

    def _check_memory(self, need: float, specs: list[ShardSpec]) -> None:
        """Refuse shards that cannot fit in this worker's memory (the machine's available memory,
        and the Dask worker's memory limit), before reading them."""
        from distributed import get_worker

        limit = getattr(getattr(get_worker(), "memory_manager", None), "memory_limit", None) or None
        room = [x for x in (available_bytes(), limit) if x]
        if room and need > min(room):
            names = ", ".join(str(sp.s) for sp in specs)
            tokens = sum(sp.range.hi - sp.range.lo for sp in specs)
            raise LdacliError(f"shards {names} ({tokens:,} tokens) need about {need / 2**30:.1f} GiB of memory, and "
                              f"this worker has {min(room) / 2**30:.1f} GiB (its memory limit or the machine's "
                              f"available memory): use more workers or more shards")

    def _replay(self, state: dict, loaded: list[list]) -> None:
        """Each shard's first topics (``loaded``: [spec, words, ptr, z, state] in token order,
        z set here), drawn from stream 0 (state ``state``) as a run on threads draws them: all
        the corpus's, in order, so the draws before a shard's are drawn again."""
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = state
        first, at = FirstTopics(rng, self.V, self.K), 0
        for part in loaded:
            spec, words = part[0], part[1]
            first.skip(spec.range.lo - at)
            part[3] = first.draw(words)
            at = spec.range.lo + words.size

    async def contribute(self, holders: list[int]) -> np.ndarray:
        """Send each slice's first holder (worker ``holders[j]`` has slice j at round 0) this
        worker's counts of the slice's words, one message per worker; returns the topic totals
        of this worker's shards (K,) int64."""
        totals, out = await self._in_thread(self._pairs, holders)
        calls = []
        for i, parts in out.items():
            if i == self.index:
                self._keep_pairs(parts)
            else:
                calls.append(self.peers[i].receive_pairs(parts))
        await asyncio.gather(*calls)
        return totals

    def _pairs(self, holders: list[int]) -> tuple[np.ndarray, dict[int, dict]]:
        """The topic totals of this worker's shards, and their word-topic pairs by the worker
        that holds each slice first."""
        totals = np.zeros(self.K, np.int64)
        out: dict[int, dict] = {}
        for s in self.mine:
            shard = self.shards[s]
            totals += np.bincount(shard.z, minlength=self.K)
            codes, counts = word_topic_pairs(shard.words, shard.z, self.K)
            cuts = np.searchsorted(codes, self.slices * self.K)
            for j in range(self.P):
                if cuts[j] < cuts[j + 1]:
                    out.setdefault(holders[j], {}).setdefault(j, []).append((codes[cuts[j]:cuts[j + 1]],
                                                                            counts[cuts[j]:cuts[j + 1]]))
        return totals, out

    async def _in_thread(self, fn, *args):
        """``fn(*args)`` on this actor's own thread, awaited on the worker's event loop: the
        sampling runs there, so that waiting on a peer (which may have died) never holds the
        thread the worker runs every actor's plain methods on."""
        if self.pool is None:
            self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ldacli-shards")
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def receive_pairs(self, parts: dict) -> None:
        """Another worker's counts of slices this worker holds first."""
        self._keep_pairs(parts)

    def _keep_pairs(self, parts: dict) -> None:
        for j, pairs in parts.items():
            self.parts.setdefault(j, []).extend(pairs)

    def build(self, holders: list[int]) -> None:
        """The counts of the slices this worker holds first, from every worker's pairs (their
        sum does not depend on the order they came in)."""
        mine = [j for j in range(self.P) if holders[j] == self.index]
        pairs = [p for j in mine for p in self.parts.get(j, [])]
        merged = merge_pairs(pairs) if pairs else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.parts.clear()
        self.replica = self.cls(self.V, self.K, [merged], self.layout)
        self.resident = set(mine)

    def set_priors(self, alpha: np.ndarray, beta: float, beta_sum: np.ndarray) -> None:
        self.priors = Priors.of(alpha, beta, beta_sum, self.extra)

    # --- the rounds ---------------------------------------------------------------------------------

    async def round(self, r: int, start: np.ndarray) -> dict:
        """Round ``r``: sample this worker's blocks from the topic totals ``start`` (K,) int64,
        send the slice the first shard used on to the previous worker (while the other blocks
        are sampled); returns the change of the totals (``delta``, int64) and the bytes sent."""
        loop = asyncio.get_running_loop()
        delta, sent, sending = await self._in_thread(self._sample_round, r, start, loop)
        if sending is not None:
            await sending
        return {"delta": delta, "sent": sent}

    def _sample_round(self, r: int, start: np.ndarray, loop) -> tuple:
        """Round ``r``'s blocks, one after another (on :meth:`_in_thread`'s thread); the first
        block's slice is sent on (from the event loop ``loop``) as soon as it is sampled."""
        self._take_incoming()
        nk, priors = block_totals(start, self.priors, self.wide)
        delta = np.zeros(self.K, np.int64)
        sending, sent = None, 0
        for i, s in enumerate(self.mine):
            j = (s + r) % self.P
            if j not in self.resident:
                raise LdacliError(f"worker {self.index}: word slice {j} is not here for shard {s} in round {r}")
            np.copyto(self.replica.nk, nk)
            self.replica.sweep(self.shards[s], j, priors)
            delta += self.replica.nk
            delta -= nk
            if i == 0 and self.prev is not None:
                arrays = self._slice(j).count_arrays()
                sent = sum(a.nbytes for a in arrays.values())
                sending = asyncio.run_coroutine_threadsafe(self._send(j, arrays), loop)
                self.resident.discard(j)
        return delta, sent, None if sending is None else asyncio.wrap_future(sending, loop=loop)

    async def _send(self, j: int, arrays: dict) -> None:
        await self.prev.receive_slice(j, arrays)

    async def receive_slice(self, j: int, arrays: dict) -> None:
        """Slice ``j``'s counts from the next worker, for this worker's last shard's next block."""
        self.incoming[j] = arrays

    def _take_incoming(self) -> None:
        for j in list(self.incoming):
            self._slice(j).set_count_arrays(self.incoming.pop(j))
            self.resident.add(j)

    def _slice(self, j: int) -> Replica:
        return self.replica.range(int(self.slices[j]), int(self.slices[j + 1]))

    # --- what the method reads --------------------------------------------------------------------------

    def word_histogram(self) -> tuple:
        """The histogram of the non-zero counts of the slices on this worker."""
        self._take_incoming()
        return merge_histograms([self._slice(j).count_histogram() for j in sorted(self.resident)])

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The counts of those cells (``words[i]``, ``topics[i]``) whose word's slice is here:
        their positions and counts."""
        self._take_incoming()
        here = np.isin(np.searchsorted(self.slices, words, side="right") - 1, sorted(self.resident))
        return np.flatnonzero(here), self.replica.counts_at(words[here], topics[here]).astype(np.int64)

    def doc_log_priors(self, alpha: np.ndarray) -> dict[int, float]:
        return {s: shard_log_prior(self.shards[s].ptr, self.shards[s].z, alpha) for s in self.mine}

    def doc_histograms(self) -> tuple[tuple, tuple]:
        return merge_doc_histograms([shard_doc_histograms(self.shards[s].ptr, self.shards[s].z, self.K,
                                                          self.shards[s].lists) for s in self.mine])

    def slice_counts(self, j: int) -> dict:
        self._take_incoming()
        return self._slice(j).count_arrays()

    def doc_topic_counts(self, s: int, lo: int, hi: int) -> np.ndarray:
        """The (hi - lo, K) counts of documents ``lo:hi`` of shard ``s`` (numbered in the shard)."""
        ptr = self.shards[s].ptr[lo:hi + 1]
        return doc_topic_counts(ptr - ptr[0], self.shards[s].z[ptr[0]:ptr[-1]], self.K)

    def doc_topic_cells(self, s: int, first: int) -> tuple[np.ndarray, np.ndarray]:
        """The non-zero document-topic counts of shard ``s`` as cells (codes numbered from its
        first document in the corpus, ``first``; :func:`~ldacli.methods.cgs.shard.doc_topic_cells`)."""
        return doc_topic_cells(self.shards[s], self.K, first)

    def snapshot_docs(self) -> None:
        """Add each shard's documents' topic counts to their snapshot sums."""
        for s in self.mine:
            self.doc_sums[s].add_parts([doc_topic_cells(self.shards[s], self.K, 0)])

    def clear_doc_sums(self) -> None:
        for s in self.mine:
            self.doc_sums[s] = CellSums(*self.doc_sums[s].shape)

    def doc_sum_cells(self, s: int, first: int) -> tuple[np.ndarray, np.ndarray]:
        """Shard ``s``'s documents' snapshot sums as sorted cells, codes numbered from its first
        document in the corpus, ``first`` (what a model file stores of them)."""
        codes, sums = self.doc_sums[s].sparse()
        return codes + first * np.int64(self.K), sums

    def doc_sum_rows(self, s: int, lo: int, hi: int, n: int) -> np.ndarray:
        """Documents ``lo:hi`` (numbered in shard ``s``) of the snapshot sums divided by ``n``,
        (hi - lo, K) float64."""
        out = np.empty((hi - lo, self.K))
        self.doc_sums[s].mean_rows(out, lo, n)
        return out

    def rng_states(self) -> dict[int, dict]:
        return {s: self.shards[s].rng.bit_generator.state for s in self.mine}

    def topics(self, s: int) -> np.ndarray:
        return self.shards[s].z

    def write_checkpoint(self, folder: str, names: dict[int, str], params: dict) -> dict[int, str]:
        """Write each of this worker's shards' topics and stream to ``folder/names[s]``
        (:func:`~ldacli.methods.cgs.dask_checkpoints.write_shard_checkpoint`); their SHA-256s."""
        out = {}
        for s in self.mine:
            shard = self.shards[s]
            out[s] = write_shard_checkpoint(os.path.join(folder, names[s]), shard.z, shard.rng.bit_generator.state,
                                            {**params, "shard": s, "n_tokens": int(shard.z.size)},
                                            doc_cell_arrays(self.doc_sums[s].sparse(), self.K))
        return out

    async def pid(self) -> int:
        """This worker's process id, answered on its event loop (at once, even while a round
        waits on a peer that died): the ping that tells a live worker from a dead one."""
        return os.getpid()
