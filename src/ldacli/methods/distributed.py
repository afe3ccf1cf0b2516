"""The collapsed Gibbs sampler's shards on a Dask cluster, with the same bytes as local threads.

The sweep is the one of :class:`~ldacli.methods.sharded.ShardedSampler` (the partition
scheme): P rounds, and in round r shard s samples its tokens of word slice (s + r) mod P, with
its own random stream, against the counts of those words as the earlier rounds left them and
the topic totals as they were at the round's start. Here the shards live on the workers: a
:class:`ShardHost` actor per worker keeps its shards' tokens, topics and random streams across
sweeps. Per round and shard, the client sends the counts of the block's words (the word lists,
or dense rows) and the topic totals; the worker samples and sends back the tokens that moved
(position, word, old and new topic) and its stream's state. The client merges each block's moves
into its counts and its copy of the topics as soon as the block is back, while the others
sample: the blocks of a round have disjoint words, and every block of the round was sent its
counts before any was merged. So the same seed and shards give the same bytes on any number of
workers as on any number of threads.

Faults: the client keeps every shard's state (its topics and stream) as of its last merged
block, and the counts each block was sent until it is back. When a worker dies, its shards are
rebuilt on another worker from that state; those not yet back are sampled again against the
counts they were sent, which draws the same numbers. When the scheduler is lost, :class:`ClusterLost` is raised; the driver
writes the checkpoint of the last merged sweep and the run resumes from it, locally or on
another cluster.

Shard folders (:mod:`ldacli.formats.shards`): given one, each worker reads its shards' files
from the folder's path (which every worker must see), and the client, which reads only the
index, keeps the topics of the tokens (4 bytes each) and the counts, never the corpus; a
rebuilt shard is read again from its file. Dask is the optional ``dask`` extra
(``pip install 'ldacli[dask]'``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

import numpy as np

from ldacli.errors import LdacliError
from ldacli.settings import Anything, Setting
from ldacli.methods.sharded import (SAMPLERS, ListLayout, Priors, Replica, UnderPriors, merge_pairs, replica_class,
                                    sample_block, shard_layout, word_slices, word_topic_pairs)
from ldacli.topic_word_prior import TopicWordPrior
from ldacli.counts import tokens_of
from ldacli.formats.shards import ShardFolder, open_shard_folder

log = logging.getLogger("ldacli")
EXTRA = "pip install 'ldacli[dask]'"

SCHEDULER = Setting("scheduler", Anything("a scheduler's address, local:N or a distributed.Client"), None,
                    "Run on a Dask cluster: a scheduler's address (tcp://host:8786) or local:N for N local worker "
                    f"processes; the result is the same as on threads. Needs the dask extra: {EXTRA}.")
# How long to wait for a worker to replace a dead one before giving up.
WORKER_WAIT_SECONDS = 60
# How long a call may try to reach a worker before the worker is taken for dead.
CONNECT_TIMEOUT = "5s"
# How long the client may be reconnecting to the scheduler before the cluster is taken for lost
# (Dask itself waits 30 s).
SCHEDULER_WAIT_SECONDS = 10


class ClusterLost(LdacliError):
    """The scheduler (or every worker) went away; the run can resume from its checkpoint."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise LdacliError(f"--scheduler needs Dask, which the dask extra installs: {EXTRA}") from None
    return distributed


def connect(scheduler: str):
    """A Dask client: ``local:N`` starts a local cluster of N worker processes (one thread
    each, loopback only); anything else is a scheduler's address (``tcp://host:8786``)."""
    distributed = _distributed()
    if scheduler.startswith("local:"):
        try:
            n = int(scheduler.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise LdacliError(f"scheduler: expected local:N with N >= 1 workers, found {scheduler!r}")
        try:
            local = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None)
        except Exception as exc:  # noqa: BLE001 - LocalCluster raises RuntimeError and others
            raise LdacliError(f"scheduler: cannot start a local cluster of {n} workers ({exc})") from None
        return distributed.Client(local)
    try:
        return distributed.Client(scheduler, timeout=30)
    except (OSError, TimeoutError) as exc:
        raise LdacliError(f"scheduler: cannot reach {scheduler} ({exc})") from None


@contextlib.contextmanager
def cluster(scheduler):
    """A Dask client for ``scheduler`` for the block: None for None, a ``distributed.Client``
    as given (its owner closes it), else :func:`connect`'s, closed (with its local cluster)
    afterwards."""
    if scheduler is None or not isinstance(scheduler, str):
        yield scheduler
        return
    client = connect(scheduler)
    try:
        yield client
    finally:
        local = getattr(client, "cluster", None)
        with contextlib.suppress(Exception):
            client.close()
        if local is not None:
            with contextlib.suppress(Exception):
                local.close()


class ShardHost:
    """Shards resident on one worker (a Dask actor): their tokens, topics and random streams,
    one replica of the counts to sample them against, and the topic-word prior's extra mass by
    word (``extra``: :func:`~ldacli.topic_word_prior.extra_by_word`), sent once."""

    def __init__(self, kind: str, n_words: int, n_topics: int, layout: ListLayout | None, slices: np.ndarray,
                 extra: tuple[np.ndarray, np.ndarray, np.ndarray]):
        self.replica = replica_class(kind).empty(n_words, n_topics, layout)
        self.extra = extra
        self.n_topics = n_topics
        self.slices = slices
        self.shards: dict[int, dict] = {}
        self.folders: dict[str, ShardFolder] = {}

    def add(self, s: int, words: np.ndarray, ptr: np.ndarray, z: np.ndarray, rng_state: dict) -> int:
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = rng_state
        shard = {"words": words, "ptr": ptr, "z": np.array(z, dtype=np.int32), "rng": rng}
        shard.update(self.replica.shard_arrays(words, ptr, self.slices))
        self.shards[s] = shard
        return os.getpid()

    def load(self, s: int, folder: str, z: np.ndarray, rng_state: dict) -> np.ndarray:
        """:meth:`add` shard ``s`` of the shard folder at ``folder`` (a path this worker sees),
        read here; returns the shard's distinct words."""
        if folder not in self.folders:
            self.folders[folder] = open_shard_folder(folder)
        words, ptr = tokens_of(self.folders[folder].shard_counts(s))
        if words.size != len(z):
            raise LdacliError(f"{folder}: shard {s} holds {words.size} tokens, the client expected {len(z)}")
        self.add(s, words, ptr, z, rng_state)
        return np.unique(words).astype(np.int32)

    def counts(self, s: int) -> dict:
        """Shard ``s``'s word-topic counts (:func:`~ldacli.methods.sharded.word_topic_pairs`) as
        ``codes`` and ``counts``."""
        codes, counts = word_topic_pairs(self.shards[s]["words"], self.shards[s]["z"], self.n_topics)
        return {"codes": codes, "counts": counts}

    def sweep(self, s: int, j: int, word_ids: np.ndarray, packed: dict, alpha: np.ndarray, beta: float,
              beta_sum: np.ndarray):
        """Sample shard ``s``'s tokens of word slice ``j`` against the counts ``packed`` (see
        :meth:`Replica.pack`) of its words ``word_ids``, under the priors ``alpha``, ``beta``,
        ``beta_sum`` (:class:`~ldacli.methods.sharded.Priors`) and the prior's extra mass;
        returns the moved tokens (``moved`` their positions, ``words``, ``old`` and ``new``
        topics) and the stream's ``state``."""
        shard = self.shards[s]
        self.replica.unpack(word_ids, packed)
        before = shard["z"].copy()
        sample_block(self.replica, shard, shard["words"], shard["z"], shard["rng"], j,
                     Priors.of(alpha, beta, beta_sum, self.extra))
        moved = np.flatnonzero(before != shard["z"]).astype(np.int32)
        return {"moved": moved, "words": shard["words"][moved], "old": before[moved], "new": shard["z"][moved],
                "state": shard["rng"].bit_generator.state}

    def pid(self) -> int:
        return os.getpid()


class DistributedSampler(UnderPriors):
    """:class:`~ldacli.methods.sharded.ShardedSampler`'s surface and results, its shards on the
    workers of ``client``. ``z`` (the client's copy, as of the last merged blocks) and the
    counts are kept here; ``traffic`` has, per sweep, the array bytes sent and received, the
    tokens moved, the shards rebuilt, and the seconds spent waiting for shards and merging.

    With ``folder`` (a :class:`~ldacli.formats.shards.ShardFolder` whose shards are ``bounds``)
    and ``words`` None, every worker reads its shards' files itself and the client never holds
    the corpus: the counts are built from the counts the workers send back."""

    def __init__(self, kind: str, words, doc_ptr, z, n_words: int, n_topics: int, alpha, beta: float,
                 bounds: np.ndarray, rngs: list, client, folder: ShardFolder | None = None,
                 prior: TopicWordPrior | None = None):
        if kind not in SAMPLERS:
            raise LdacliError(f"sampler must be one of {', '.join(SAMPLERS)}, found {kind!r}")
        self.kind, self.client, self.folder = kind, client, folder
        self.words, self.doc_ptr, self.z = words, doc_ptr, z
        self.V, self.K = n_words, n_topics
        self._set_prior(alpha, beta, prior)
        self.rng_states = [r.bit_generator.state for r in rngs]
        self.rngs = rngs
        self.shards = shard_layout(doc_ptr, bounds)  # the workers keep the rest of each shard
        if folder is None:
            freq = np.bincount(words, minlength=n_words)
            for shard in self.shards:
                shard["word_ids"] = np.unique(words[shard["lo"]:shard["hi"]]).astype(np.int32)
        else:  # each shard's distinct words come back from its worker
            freq = folder.word_frequencies()
        self.slices = word_slices(freq, len(bounds) - 1)
        self.layout = replica_class(kind).layout_for(freq, n_topics)
        self.traffic: list[dict] = []
        self.hosts: dict[str, object] = {}  # worker address -> actor
        self.placement: dict[int, str] = {}  # shard -> worker address
        self.dead: set[str] = set()
        with self._timeouts():
            placed = self._place(range(len(self.shards)))
            if folder is None:
                pairs = word_topic_pairs(words, z, n_topics)
            else:
                for s, word_ids in placed.items():
                    self.shards[s]["word_ids"] = word_ids
                pairs = self._gather_counts()
        self.shared = replica_class(kind)(n_words, n_topics, pairs, self.layout)

    def _gather_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """The word-topic counts of every shard, from their workers one shard at a time, so that
        the client holds at most the sum so far and one shard's."""
        total = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        for s in range(len(self.shards)):
            for _ in range(10):
                try:
                    part = self.hosts[self.placement[s]].counts(s).result()
                    break
                except ClusterLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - the worker died: place its shards again
                    dead = self.placement[s]
                    self._lost({dead}, exc)
                    self._place([t for t, a in self.placement.items() if a == dead])
            else:
                raise ClusterLost("workers keep failing while the shards' counts are gathered")
            total = merge_pairs([total, (part["codes"], part["counts"])])
            part.clear()  # see _sweep: free the arrays now, not at the next garbage collection
        return total

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

    def _host(self, address: str):
        if address not in self.hosts:
            future = self.client.submit(ShardHost, self.kind, self.V, self.K, self.layout, self.slices, self.extra,
                                        actor=True, workers=[address], allow_other_workers=False, pure=False)
            self.hosts[address] = future.result()
        return self.hosts[address]

    def _place(self, shards) -> dict:
        """Put ``shards`` on the live workers (shard s on worker s mod W, sorted by address) with
        their state as of the last merged sweep: sent, or read by the worker from the shard
        folder. A worker that fails meanwhile is left out and its shards placed again. Returns
        what each shard's placement returned (:meth:`ShardHost.load`'s words)."""
        shards, results = list(shards), {}
        for _ in range(10):
            workers = self._workers()
            calls, failed, error = {}, set(), None
            for s in shards:
                address = self.placement[s] = workers[s % len(workers)]
                lo, hi = self.shards[s]["lo"], self.shards[s]["hi"]
                try:
                    host = self._host(address)
                    if self.folder is None:
                        calls[s] = host.add(s, self.words[lo:hi], self.shards[s]["ptr"], self.z[lo:hi],
                                            self.rng_states[s])
                    else:
                        calls[s] = host.load(s, os.path.abspath(self.folder.path), self.z[lo:hi],
                                             self.rng_states[s])
                except ClusterLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - the worker is gone
                    failed.add(address)
                    error = exc
            for s, call in calls.items():
                try:
                    results[s] = call.result()
                except LdacliError as exc:  # the worker is alive but cannot read its shard
                    raise LdacliError(f"worker {self.placement[s]}: {exc}") from None
                except Exception as exc:  # noqa: BLE001 - a worker died while its shards were placed
                    failed.add(self.placement[s])
                    error = exc
            shards = [s for s in shards if s not in results]
            if not shards:
                return results
            self._lost(failed, error)
        raise ClusterLost("workers keep failing while shards are placed on them")

    def _lost(self, addresses: set[str], exc: BaseException) -> None:
        """Forget the workers at ``addresses`` (dead, or the scheduler is: then raise)."""
        time.sleep(0.5)  # let the client notice a scheduler that went away
        self._scheduler()
        try:
            self.client.nthreads()
        except Exception:  # noqa: BLE001
            raise ClusterLost(f"lost the Dask scheduler ({type(exc).__name__}: {exc})") from None
        self.dead |= addresses
        for address in addresses:
            self.hosts.pop(address, None)

    # --- the sweep --------------------------------------------------------------------------------

    @property
    def counts(self) -> Replica:
        return self.shared

    def sweep(self) -> None:
        with self._timeouts():
            self._sweep()

    def _sweep(self) -> None:
        """One sweep: P rounds of :meth:`_round`; ``traffic`` gets the sweep's sums."""
        totals = dict.fromkeys(("sent", "received", "rebuilt_shards", "moved", "sample_seconds", "merge_seconds"), 0)
        for r in range(len(self.shards)):
            for key, value in self._round(r).items():
                totals[key] += value
        self.traffic.append(totals)

    def _block_words(self, s: int, j: int) -> np.ndarray:
        """Shard ``s``'s distinct words in word slice ``j``."""
        word_ids = self.shards[s]["word_ids"]
        a, b = np.searchsorted(word_ids, self.slices[j:j + 2])
        return word_ids[a:b]

    def _round(self, r: int) -> dict:
        """Round ``r``: every block sent the counts of its words and the totals before any block
        is merged, and each block's moves merged as soon as it is back (while the others are
        still sampling). A shard of a worker that dies is placed elsewhere with its state as the
        client has it: sampled this round if its moves were merged, else as the round began, and
        then sampled again against the same counts as before, so the numbers drawn and the result
        are the same."""
        P = len(self.shards)
        packs: dict[int, dict] = {}  # shard -> the counts sent at the round's start, until it is back
        todo, done = list(range(P)), set()
        sent = received = rebuilt = moved = 0
        waited = merged = 0.0
        while todo:
            calls, failed = {}, []
            for s in todo:
                j = (s + r) % P
                word_ids = self._block_words(s, j)
                if s not in packs:
                    packs[s] = self.shared.pack(word_ids)
                try:
                    p = self.priors
                    calls[s] = self.hosts[self.placement[s]].sweep(s, j, word_ids, packs[s], p.alpha, p.beta,
                                                                   p.beta_sum)
                    sent += (sum(a.nbytes for a in packs[s].values()) + word_ids.nbytes + p.alpha.nbytes
                             + p.beta_sum.nbytes)
                except ClusterLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - the actor's worker is gone
                    failed.append((s, exc))
            for s, call in calls.items():
                t0 = time.perf_counter()
                try:
                    result = call.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker shows up as many kinds of error
                    failed.append((s, exc))
                    continue
                finally:
                    waited += time.perf_counter() - t0
                t0 = time.perf_counter()
                received += self._merge(s, result)
                moved += result["moved"].size
                # Dask keeps an actor call's arguments and result in reference cycles that only
                # the cyclic garbage collector frees, late: empty them now so their arrays go
                result.clear()
                packs.pop(s).clear()
                done.add(s)
                merged += time.perf_counter() - t0
            todo = []
            if failed:
                dead = {self.placement[s] for s, _ in failed}
                log.warning("worker %s failed (%s: %s); rebuilding its shards elsewhere", ", ".join(sorted(dead)),
                            type(failed[0][1]).__name__, failed[0][1])
                self._lost(dead, failed[0][1])
                lost = [s for s, a in self.placement.items() if a in dead]
                self._place(lost)
                rebuilt += len(lost)
                todo = [s for s in lost if s not in done]
        return {"sent": sent, "received": received, "rebuilt_shards": rebuilt, "moved": moved,
                "sample_seconds": waited, "merge_seconds": merged}

    def _merge(self, s: int, result: dict) -> int:
        """Merge shard ``s``'s moves into the counts and ``z``, take its stream's state; returns
        the bytes received."""
        moved, words, old, new = result["moved"], result["words"], result["old"], result["new"]
        self.z[self.shards[s]["lo"] + moved] = new
        self.rng_states[s] = result["state"]
        self.rngs[s].bit_generator.state = result["state"]
        if moved.size:
            order = np.argsort(words, kind="stable").astype(np.int32)
            self.shared.move(np.ascontiguousarray(words), order, np.ascontiguousarray(old), np.ascontiguousarray(new))
        return moved.nbytes + words.nbytes + old.nbytes + new.nbytes

    def close(self) -> None:
        self.hosts.clear()
