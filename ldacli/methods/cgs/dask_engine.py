"""The collapsed Gibbs sampler on a Dask cluster: the shards stay on their workers, the word
slices of the counts travel from worker to worker, and the client only schedules the rounds.
The same bytes as local threads.

The Dask engine (:class:`DaskSampler`, a :class:`~ldacli.methods.cgs.sampler.Sampler`). The
sweep is the one of :class:`~ldacli.methods.cgs.threads.ThreadsSampler` (the partition scheme):
P rounds, and in round r shard s samples its tokens of word slice (s + r) mod P, with its own
random stream, against the counts of those words as the earlier rounds left them and the topic
totals as they were at the round's start. Here a :class:`ShardHost` actor per worker keeps, for
the whole run, a run of consecutive shards (their tokens, topics, random streams) and the word
slices of the counts that are on that worker. In round r, worker i samples its blocks one after
another; the slice its first shard used then goes to worker i - 1 (cyclically), whose last shard
needs it in round r + 1: straight from worker to worker (an actor calling the other), while the
worker samples its other blocks. Every other slice stays where it is, because the next shard
that needs it is on the same worker. The client sends each worker the K topic totals at the
start of a round and gets back the change its blocks made, which it adds up (64-bit integers):
per round it sends and receives 2 W vectors of K integers, nothing that grows with the corpus.

So per sweep, W slices cross between workers in each of the P rounds, each slice W times: the
counts (the sorted word lists, or dense rows) cross W times in all. At the start, every worker
sends each slice's initial holder its shards' counts of that slice's words (word-topic pairs);
at the end, the model's counts come to the client slice by slice and its document-topic counts
a block of documents at a time.

Faults: the state lives on the workers, so a worker that dies takes its shards and the slices it
held with it. The run then goes back to its last *sync point*, the last checkpoint written (or
the start: every shard's first topics and streams follow from the seed), rebuilds every shard
and slice from it on the workers alive, and samples the sweeps since again: the numbers drawn are
the same, so the result is unchanged; the cost is the sweeps since the last checkpoint
(``--checkpoint-every`` bounds it). When the scheduler is lost, :class:`ClusterLost` is raised
and the last checkpoint written is what the run resumes from.

The corpus: either the client holds it and sends each worker its shards' tokens once, or (a
shard folder, :mod:`ldacli.corpora.formats.shards`) every worker reads its shards' files from the
folder's path, which every worker must see, and the client reads only the index. Then the
workers also write the checkpoint's topics and streams beside the folder
(:mod:`~ldacli.methods.cgs.dask_checkpoints`). A fresh run's first topics are drawn from one stream
(stream 0) on every machine alike: each worker replays it up to its shards.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ldacli.corpora.counts import doc_topic_counts, merge_histograms, tokens_of
from ldacli.errors import InputError, LdacliError, OutputError
from ldacli.corpora.formats.shards import ShardFolder, open_shard_folder
from ldacli.files.locking import locked
from ldacli.memory import available_bytes
from ldacli.cluster.connection import ClusterLost
from ldacli.methods.cgs.dask_checkpoints import (ARRAY, ShardFiles, checkpoint_folder, prune, read_shard_checkpoint,
                                              shard_file, write_shard_checkpoint)
from ldacli.methods.cgs.sampler import SAMPLERS, FirstTopics, UnderPriors
from ldacli.methods.cgs.snapshots import CellSums, doc_cell_arrays, doc_sum_bytes
from ldacli.methods.cgs.layouts import Priors, Replica, replica_class
from ldacli.methods.cgs.shard import (HISTOGRAM_CHUNK_CELLS, Shard, doc_topic_cells, merge_doc_histograms, merge_pairs,
                                      shard_doc_histograms, shard_log_prior, shard_pointers, topic_bits,
                                      word_topic_pairs)
from ldacli.partition import WIDE_SHARD_TOKENS, ShardRange, word_slices
from ldacli.topic_word_prior import TopicWordPrior

log = logging.getLogger("ldacli")

# How long to wait for a worker to replace a dead one before giving up.
WORKER_WAIT_SECONDS = 60
# How long a call may try to reach a worker before the worker is taken for dead.
CONNECT_TIMEOUT = "5s"
# How long a worker may take to answer a ping after a failure before it is taken for dead.
PING_SECONDS = 5
# How long the client may be reconnecting to the scheduler before the cluster is taken for lost
# (Dask itself waits 30 s).
SCHEDULER_WAIT_SECONDS = 10
# Rebuilds in a row, without a sweep finished between them, before the run gives up.
MAX_REBUILDS = 5
INT32_MAX = int(np.iinfo(np.int32).max)


class ShardsRebuilt(LdacliError):
    """Not an error: a worker was lost and the sampler went back to its sync point, sweep
    ``iteration`` with priors ``alpha`` and ``beta``; the sweeps since are to be sampled again."""

    def __init__(self, iteration: int, alpha: np.ndarray, beta: float):
        self.iteration, self.alpha, self.beta = iteration, alpha, beta
        super().__init__(f"rebuilt from sweep {iteration}")


@dataclass
class SyncPoint:
    """A state of the run every shard can be rebuilt from: after sweep ``iteration``, priors
    ``alpha`` and ``beta``, and each shard's topics and stream: ``z`` (every token's, on the
    client) with ``rng_states``, or ``files`` (the shard files of a checkpoint, which hold
    both), or neither: the start, each shard's first topics drawn from stream 0, whose state
    the sampler keeps, and ``rng_states`` the streams as seeded. ``what`` names it for people."""

    iteration: int
    alpha: np.ndarray
    beta: float
    rng_states: list[dict] | None = None
    z: np.ndarray | None = None
    files: ShardFiles | None = None
    what: str = "the start"
    # the documents' snapshot sums as a checkpoint of the client's held them (sorted codes
    # ``document * K + topic``, float64 sums), which the workers keep from then on; else the
    # files' (or none)
    doc_cells: tuple[np.ndarray, np.ndarray] | None = None


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


def _is_loss(exc: BaseException) -> bool:
    """Whether ``exc`` (raised by a call to a worker) means a worker, or the connection to one,
    was lost (rather than an error of the call itself)."""
    if isinstance(exc, (OSError, TimeoutError, asyncio.CancelledError, concurrent.futures.CancelledError)):
        return True
    if isinstance(exc, RuntimeError) and "lost" in str(exc).lower():
        return True
    return type(exc).__name__ in ("KilledWorker", "FutureCancelledError", "CommClosedError", "StreamClosedError")


def _unless_lost(action, on_loss) -> bool:
    """``action()``, True when it finished; when a worker (or the connection to one) was lost
    meanwhile, ``on_loss(exc)`` and False. Errors of ours, and others, are raised."""
    try:
        action()
        return True
    except (LdacliError, ClusterLost):
        raise
    except Exception as exc:  # noqa: BLE001 - sorted out by _is_loss
        if not _is_loss(exc):
            raise
        on_loss(exc)
        return False


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
        nk, priors = self._block_totals(start)
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

    def _block_totals(self, start: np.ndarray) -> tuple[np.ndarray, Priors]:
        """The totals a block starts from as the kernels take them (int32) and the priors to go
        with them: ``start`` itself while the corpus fits in 32 bits; else less a base that the
        prior's sums take instead (see :data:`WIDE_SHARD_TOKENS`)."""
        if not self.wide:
            return start.astype(np.int32), self.priors
        base = np.maximum(start - WIDE_SHARD_TOKENS, 0)
        p = self.priors
        return (start - base).astype(np.int32), Priors.of(p.alpha, p.beta, p.beta_sum + base, self.extra)

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
        return merge_doc_histograms([shard_doc_histograms(self.shards[s].ptr, self.shards[s].z, self.K)
                                     for s in self.mine])

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


@dataclass
class _Placement:
    """Where the shards are: the workers' addresses and actors (in order), and which worker
    holds each shard (consecutive runs of shards)."""

    addresses: list[str] = field(default_factory=list)
    hosts: list = field(default_factory=list)
    owner: list[int] = field(default_factory=list)


class DaskSampler(UnderPriors):
    """:class:`~ldacli.methods.cgs.threads.ThreadsSampler`'s surface and numbers, the shards and the
    counts on the workers of ``client``: the client keeps the K topic totals (int64), each shard's
    place, and the sync point, nothing per token or per word.

    ``shards``: each shard's tokens ``lo:hi`` and documents ``d_lo:d_hi`` in the corpus;
    ``freq`` (V,) int64 the tokens of each word; ``sync`` where the run starts (a
    :class:`SyncPoint`), ``stream0`` the state of stream 0 (the first topics' stream). The
    tokens: ``words`` and ``doc_ptr`` (the client holds the corpus and sends each worker its
    shards), or ``folder``, a :class:`~ldacli.corpora.formats.shards.ShardFolder` whose files the workers
    read (``fingerprint`` its corpus's). ``traffic`` has, per sweep, the bytes the client sent
    and received and that crossed between workers, and ``rebuilds`` every rebuild."""

    def __init__(self, kind: str, n_words: int, n_topics: int, shards: list[ShardRange], freq: np.ndarray, client,
                 sync: SyncPoint, stream0: dict, *, words: np.ndarray | None = None,
                 doc_ptr: np.ndarray | None = None, folder: ShardFolder | None = None, fingerprint: str = "",
                 prior: TopicWordPrior | None = None, keeps_doc_sums: bool = False):
        if kind not in SAMPLERS:
            raise LdacliError(f"sampler must be one of {', '.join(SAMPLERS)}, found {kind!r}")
        self.kind, self.client, self.folder, self.fingerprint = kind, client, folder, fingerprint
        self.keeps_doc_sums = keeps_doc_sums  # the run averages snapshots, its workers keep the documents' sums
        self.words, self.doc_ptr = words, doc_ptr
        self.V, self.K = n_words, n_topics
        self.shards = shards
        self.n_tokens, self.n_docs = int(shards[-1].hi), int(shards[-1].d_hi)
        self.wide = self.n_tokens > INT32_MAX
        if self.wide and kind == "dense" and int(freq.max()) > INT32_MAX:
            raise LdacliError(f"the dense sampler counts a word's tokens in 32 bits, and a word has {int(freq.max()):,} "
                              f"tokens: use --sampler sparse")
        if self.wide and max(sh.hi - sh.lo for sh in shards) > WIDE_SHARD_TOKENS:
            raise LdacliError(f"a shard of more than {WIDE_SHARD_TOKENS:,} tokens in a corpus of more than {INT32_MAX:,}: "
                              f"cut the corpus into more shards")
        self.slices = word_slices(freq, len(shards))
        self.layout = replica_class(kind).layout_for(freq, n_topics)
        self._set_prior(sync.alpha, sync.beta, prior)
        self.sync, self.stream0 = sync, stream0
        self.done = sync.iteration  # sweeps the workers' state has had
        self.nk = np.zeros(n_topics, np.int64)
        self.place = _Placement()
        self.dead: set[str] = set()
        self.traffic: list[dict] = []
        self.rebuilds: list[dict] = []
        self._counts: Replica | None = None
        self._pending: SyncPoint | None = None
        self._locks = contextlib.ExitStack()
        self._locked: set[str] = set()
        self._run = os.urandom(4).hex()
        with self._timeouts():
            self._place()

    @staticmethod
    def _timeouts():
        import dask

        return dask.config.set({"distributed.comm.timeouts.connect": CONNECT_TIMEOUT})

    # --- placement ------------------------------------------------------------------------------

    def _scheduler(self) -> None:
        """Return when the client is connected to its scheduler; raise :class:`ClusterLost` when
        it has not been for :data:`SCHEDULER_WAIT_SECONDS`."""
        deadline = time.monotonic() + SCHEDULER_WAIT_SECONDS
        while self.client.status != "running":
            if self.client.status in ("closing", "closed", "failed") or time.monotonic() > deadline:
                raise ClusterLost(f"lost the Dask scheduler (the client is {self.client.status})")
            time.sleep(0.2)

    def _workers(self) -> list[str]:
        """The live workers' addresses, sorted (at least one: waits for one to come)."""
        deadline = time.monotonic() + WORKER_WAIT_SECONDS
        while True:
            self._scheduler()
            try:
                workers = sorted(set(self.client.nthreads()) - self.dead)
            except Exception as exc:  # noqa: BLE001 - any failure to reach the scheduler
                raise ClusterLost(f"lost the Dask scheduler ({type(exc).__name__}: {exc})") from None
            if workers:
                return workers
            if time.monotonic() > deadline:
                raise ClusterLost(f"no Dask worker left after waiting {WORKER_WAIT_SECONDS} s")
            time.sleep(0.5)

    def _place(self) -> None:
        """Put every shard and slice on the live workers as of the sync point; a worker that
        fails meanwhile is left out and the placement tried again."""
        for _ in range(MAX_REBUILDS):
            workers = self._workers()[:len(self.shards)]
            if _unless_lost(lambda: self._start(workers), self._forget_dead):
                return
        raise ClusterLost("workers keep failing while the shards are placed on them")

    def _start(self, workers: list[str]) -> None:
        P, W, sync = len(self.shards), len(workers), self.sync
        futures = [self.client.submit(ShardHost, self.kind, self.V, self.K, self.layout, self.slices, self.extra,
                                      self.wide, actor=True, workers=[a], allow_other_workers=False, pure=False)
                   for a in workers]
        hosts = [f.result() for f in futures]
        self.place = _Placement(list(workers), hosts, [s * W // P for s in range(P)])
        self._counts = None
        self.client.sync(_gather, [h.connect(i, hosts) for i, h in enumerate(hosts)], workers)
        if sync.files is not None:
            source = {"kind": "files", "files": sync.files, "fingerprint": self.fingerprint}
        elif sync.z is not None:
            source = {"kind": "z"}
        else:
            source = {"kind": "seed", "state": self.stream0}
        if self.folder is not None:
            source["folder"] = os.path.abspath(self.folder.path)
            source["doc_sums"] = self.keeps_doc_sums
        specs: list[list[ShardSpec]] = [[] for _ in workers]
        for s, shard in enumerate(self.shards):
            spec = ShardSpec(s, shard)
            if sync.files is None:
                spec.rng_state = sync.rng_states[s]
            if sync.z is not None:
                spec.z = sync.z[shard.lo:shard.hi]
            if sync.doc_cells is not None:
                codes, sums = sync.doc_cells
                lo, hi = np.searchsorted(codes, [shard.d_lo * self.K, shard.d_hi * self.K])
                spec.doc_cells = (codes[lo:hi] - np.int64(shard.d_lo) * self.K, sums[lo:hi])
            if self.words is not None:
                spec.words = self.words[shard.lo:shard.hi]
                spec.ptr = shard_pointers(self.doc_ptr, shard)
            specs[self.place.owner[s]].append(spec)
        self._each("load", [(specs[i], source) for i in range(W)])
        holders = self.place.owner
        self.nk = np.sum(self._each("contribute", [(holders,)] * W), axis=0, dtype=np.int64)
        self._each("build", [(holders,)] * W)
        self._push_priors()

    def _each(self, method: str, args: list[tuple]) -> list:
        """Call ``method`` on every worker's actor with its ``args``, all at once; their results,
        or the first failure as soon as it happens (not after the other workers answered). An
        error the worker raised about the data names the worker."""
        return self.client.sync(_gather, [getattr(h, method)(*a) for h, a in zip(self.place.hosts, args)],
                                self.place.addresses)

    def _forget_dead(self, exc: BaseException) -> list[str]:
        """After a failed call: the workers that do not answer a ping (dead), forgotten; raises
        :class:`ClusterLost` when the scheduler is gone."""
        time.sleep(0.5)  # let the client notice a scheduler that went away
        self._scheduler()
        try:
            alive = set(self.client.nthreads())
        except Exception:  # noqa: BLE001
            raise ClusterLost(f"lost the Dask scheduler ({type(exc).__name__}: {exc})") from None
        dead = []
        for address, host in zip(self.place.addresses, self.place.hosts):
            if address not in alive:
                dead.append(address)
                continue
            try:
                host.pid().result(timeout=PING_SECONDS)
            except Exception:  # noqa: BLE001 - whatever the reason, it cannot be used
                dead.append(address)
        self.dead |= set(dead)
        return dead

    # --- the sweep --------------------------------------------------------------------------------

    def set_priors(self, alpha, beta: float) -> None:
        super().set_priors(alpha, beta)
        if getattr(self, "place", None) is not None and self.place.hosts:
            self._push_priors()

    def _push_priors(self) -> None:
        p = self.priors
        self._each("set_priors", [(p.alpha, p.beta, p.beta_sum)] * len(self.place.hosts))

    def sweep(self) -> None:
        """One sweep; when a worker is lost, every shard is rebuilt from the sync point and
        :class:`ShardsRebuilt` says which sweep the state is back at."""
        with self._timeouts():
            _unless_lost(self._sweep, self._rebuild)

    def _sweep(self) -> None:
        """P rounds; ``traffic`` gets the sweep's bytes (the arrays' bytes, not Dask's framing)."""
        P, W = len(self.shards), len(self.place.hosts)
        self._counts = None
        between = 0
        t0 = time.perf_counter()
        for r in range(P):
            results = self._each("round", [(r, self.nk)] * W)
            for result in results:
                self.nk += result["delta"]
                between += result["sent"]
        self.done += 1
        self.traffic.append({"client_sent": P * W * self.nk.nbytes, "client_received": P * W * self.nk.nbytes,
                             "between_workers": between, "seconds": time.perf_counter() - t0})
        if self.rebuilds:
            self.rebuilds[-1]["in_a_row"] = 0

    def _rebuild(self, exc: BaseException) -> None:
        """Rebuild every shard and slice from the sync point on the workers alive; raises
        :class:`ShardsRebuilt`."""
        in_a_row = self.rebuilds[-1]["in_a_row"] + 1 if self.rebuilds else 1
        if in_a_row > MAX_REBUILDS:
            raise ClusterLost(f"workers keep failing ({type(exc).__name__}: {exc})")
        dead = self._forget_dead(exc)
        lost = [s for s, i in enumerate(self.place.owner) if self.place.addresses[i] in dead]
        at, sync = self.done, self.sync
        super().set_priors(sync.alpha, sync.beta)
        self.place = _Placement()
        self._place()
        self.done = sync.iteration
        again = f"sweeps {sync.iteration + 1}-{at + 1}" if at > sync.iteration else f"sweep {at + 1}"
        log.warning("worker %s lost (%s); its shards %s and every other rebuilt on %d workers from %s: %s sampled "
                    "again", ", ".join(dead) or "(unknown)", type(exc).__name__, _listed(lost),
                    len(self.place.hosts), sync.what, again)
        self.rebuilds.append({"dead": dead, "lost_shards": lost, "from": sync.iteration, "at": at,
                              "in_a_row": in_a_row})
        raise ShardsRebuilt(sync.iteration, sync.alpha.copy(), sync.beta)

    # --- what the method reads of the state (the Sampler's questions) ------------------------------

    def topic_totals(self) -> np.ndarray:
        return self.nk.copy()

    def word_histogram(self) -> tuple:
        return merge_histograms(self._each("word_histogram", [()] * len(self.place.hosts)))

    def counts_at(self, words: np.ndarray, topics: np.ndarray) -> np.ndarray:
        out = np.zeros(np.size(words), np.int64)
        args = (np.asarray(words, np.int64), np.asarray(topics, np.int64))
        for where, counts in self._each("counts_at", [args] * len(self.place.hosts)):
            out[where] = counts
        return out

    def doc_log_priors(self, alpha: np.ndarray) -> list[float]:
        return self._by_shard("doc_log_priors", np.asarray(alpha, np.float64))

    def doc_histograms(self) -> tuple[tuple, tuple]:
        return merge_doc_histograms(self._each("doc_histograms", [()] * len(self.place.hosts)))

    @property
    def counts(self) -> Replica:
        """The word-topic counts, gathered slice by slice (for the model's phi)."""
        if self._counts is None:
            replica = replica_class(self.kind).empty(self.V, self.K, self.layout)
            for j in range(len(self.shards)):
                host = self.place.hosts[self.place.owner[j]]  # slice j is back at shard j after a sweep
                arrays = host.slice_counts(j).result()
                replica.range(int(self.slices[j]), int(self.slices[j + 1])).set_count_arrays(arrays)
            replica.nk = self.nk.copy()  # int64: the client's totals
            self._counts = replica
        return self._counts

    def doc_topic_blocks(self, cells: int = HISTOGRAM_CHUNK_CELLS):
        """(first document, (d, K) int32 document-topic counts) of about ``cells`` cells at a
        time, at least :data:`HISTOGRAM_CHUNK_CELLS` (each block is a round trip to a worker;
        whole documents, at least one, within a shard), in order, from the shards' workers."""
        step = max(1, max(cells, HISTOGRAM_CHUNK_CELLS) // self.K)
        for s, shard in enumerate(self.shards):
            host = self.place.hosts[self.place.owner[s]]
            for lo in range(0, shard.d_hi - shard.d_lo, step):
                hi = min(lo + step, shard.d_hi - shard.d_lo)
                yield shard.d_lo + lo, host.doc_topic_counts(s, lo, hi).result()

    def doc_topic_cell_parts(self):
        """Every shard's documents' non-zero topic counts as sorted cells, a shard at a time, in
        shard order, from its worker (read off the sparse sampler's lists there: no (d, K)
        blocks on the way)."""
        for s, shard in enumerate(self.shards):
            yield self.place.hosts[self.place.owner[s]].doc_topic_cells(s, int(shard.d_lo)).result()

    def snapshot_docs(self) -> None:
        """Every worker adds its shards' documents' topic counts to their snapshot sums (which
        :meth:`mean_rows` reads and the shard files of a checkpoint hold)."""
        self._each("snapshot_docs", [()] * len(self.place.hosts))

    def clear_doc_sums(self) -> None:
        self._each("clear_doc_sums", [()] * len(self.place.hosts))

    def doc_sum_cell_parts(self):
        """The workers' snapshot sums of every document as sorted cells, a shard at a time, in
        shard order (codes ``d * K + k`` in the corpus), as a model file stores them."""
        for s, shard in enumerate(self.shards):
            yield self.place.hosts[self.place.owner[s]].doc_sum_cells(s, int(shard.d_lo)).result()

    def mean_rows(self, out: np.ndarray, first: int, n: int) -> None:
        """Documents ``first`` to ``first + len(out)`` of the workers' snapshot sums, divided by
        ``n``, into ``out``, from the shards that hold them."""
        last = first + out.shape[0]
        for s, shard in enumerate(self.shards):
            lo, hi = max(first, shard.d_lo), min(last, shard.d_hi)
            if lo < hi:
                host = self.place.hosts[self.place.owner[s]]
                out[lo - first:hi - first] = host.doc_sum_rows(s, lo - shard.d_lo, hi - shard.d_lo, n).result()

    def rng_states(self) -> list[dict]:
        """Every shard's stream's state, in shard order."""
        return self._by_shard("rng_states")

    def _by_shard(self, method: str, *args) -> list:
        """What every worker's ``method(*args)`` says of each of its shards (a dict by shard),
        in shard order."""
        found: dict[int, object] = {}
        for part in self._each(method, [args] * len(self.place.hosts)):
            found.update(part)
        return [found[s] for s in range(len(self.shards))]

    # --- checkpoints --------------------------------------------------------------------------------

    def checkpoint(self, path: str, iteration: int) -> tuple[list[dict], dict[str, np.ndarray]]:
        """The shards' part of a checkpoint of sweep ``iteration`` to ``path``: the streams'
        states and the arrays for the client's file: ``z``, gathered shard by shard when the
        client holds the corpus; else :data:`~ldacli.methods.cgs.dask_checkpoints.ARRAY`, naming
        the files the workers wrote beside the shard folder. Becomes the sync point when
        :meth:`committed`. A failure is an :class:`~ldacli.errors.OutputError` (the run goes
        on; a lost worker is rebuilt at the next sweep)."""
        try:
            with self._timeouts():
                states = self.rng_states()
                if self.folder is None:
                    z = np.empty(self.n_tokens, np.int32)
                    for s, shard in enumerate(self.shards):
                        z[shard.lo:shard.hi] = self.place.hosts[self.place.owner[s]].topics(s).result()
                    self._pending = SyncPoint(iteration, self.alpha.copy(), self.beta, states, z=z,
                                              what=f"the checkpoint of sweep {iteration}")
                    return states, {"z": z}
                files = self._write_shard_files(path, iteration)
                self._pending = SyncPoint(iteration, self.alpha.copy(), self.beta, states, files=files,
                                          what=f"the checkpoint of sweep {iteration}")
                return states, {ARRAY: files.array()}
        except OutputError:
            raise
        except LdacliError as exc:
            raise OutputError(path, "checkpoint", str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a worker lost: the next sweep rebuilds
            raise OutputError(path, "checkpoint", f"a worker was lost while it was written ({type(exc).__name__}: "
                                                  f"{exc})") from None

    def _write_shard_files(self, path: str, iteration: int) -> ShardFiles:
        """Every worker writes its shards' files of sweep ``iteration`` (under the run's lock on
        the folder they go to, taken here once)."""
        folder = checkpoint_folder(self.folder.path, path)
        if folder not in self._locked:
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                raise OutputError(path, "checkpoint", f"cannot make {folder} for the shards' checkpoints: "
                                                      f"{exc.strerror or exc}") from None
            self._locks.enter_context(locked([folder]))
            self._locked.add(folder)
        names = {s: shard_file(s, iteration, self._run) for s in range(len(self.shards))}
        params = {"sweep": iteration, "n_topics": self.K, "run": self._run, "corpus_fingerprint": self.fingerprint}
        digests = self._by_shard("write_checkpoint", folder, names, params)
        return ShardFiles(folder, [names[s] for s in range(len(self.shards))], digests, iteration)

    def committed(self) -> None:
        """The checkpoint :meth:`checkpoint` returned the arrays of is written: it is the sync
        point now, and the shard files of earlier ones are removed."""
        if self._pending is None:
            return
        self.sync, self._pending = self._pending, None
        if self.sync.files is not None:
            prune(self.sync.files.folder, self.sync.files.files)

    def close(self) -> None:
        self.place = _Placement()
        self._counts = None
        self._locks.close()


async def _gather(calls: list, addresses: list[str]) -> list:
    """The results of actor calls (one per worker of ``addresses``); the first failure raised
    as soon as it comes, an error about the data naming its worker."""
    async def named(call, address):
        try:
            return await call
        except ClusterLost:
            raise
        except LdacliError as exc:  # the worker is alive and says what is wrong
            raise LdacliError(f"worker {address}: {exc}") from None

    return list(await asyncio.gather(*[named(c, a) for c, a in zip(calls, addresses)]))


def _listed(items: list) -> str:
    return ", ".join(map(str, items)) if items else "none"
