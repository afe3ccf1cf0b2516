"""The collapsed Gibbs sampler on a Dask cluster, the client's side: the shards stay on their
workers, the word slices of the counts travel from worker to worker, and the client only
schedules the rounds. The same bytes as local threads.

The Dask engine (:class:`DaskSampler`, a :class:`~ldacli.methods.cgs.sampler.Sampler`); the
workers' side, the actor each worker runs, is :mod:`ldacli.methods.cgs.dask_worker`. The
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
import logging
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ldacli.cluster.connection import ClusterLost
from ldacli.corpora.counts import merge_histograms
from ldacli.corpora.formats.shards import ShardFolder
from ldacli.errors import LdacliError, OutputError
from ldacli.methods.cgs.dask_checkpoints import (ARRAY, CheckpointFolders, ShardFiles, checkpoint_folder, prune,
                                                shard_file)
from ldacli.methods.cgs.dask_worker import ShardHost, ShardSpec
from ldacli.methods.cgs.layouts import Replica, replica_class
from ldacli.methods.cgs.sampler import SAMPLERS, UnderPriors, wide_totals
from ldacli.methods.cgs.shard import HISTOGRAM_CHUNK_CELLS, merge_doc_histograms, shard_pointers
from ldacli.partition import ShardRange, word_slices
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
        self.wide = wide_totals(shards, folder.path if folder is not None else None)
        if self.wide and kind == "dense" and int(freq.max()) > INT32_MAX:
            raise LdacliError(f"the dense sampler counts a word's tokens in 32 bits, and a word has {int(freq.max()):,} "
                              f"tokens: use --sampler sparse")
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
        self._folders = CheckpointFolders()
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
        folder = self._folders.claim(checkpoint_folder(self.folder.path, path), path)
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
        self._folders.close()


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
