"""The collapsed Gibbs sampler's shards on a Dask cluster, with the same bytes as local threads.

The sweep is the one of :class:`~ldacli.methods.sharded.ShardedSampler` (AD-LDA): every shard
is sampled against the counts of the start of the sweep plus its own moves, with its own random
stream, and the moves are merged afterwards (integer additions, in any order). Here the shards
live on the workers: a :class:`ShardHost` actor per worker keeps its shards' tokens, topics and
random streams across sweeps. Per sweep and shard, the client sends the counts of the shard's
words as they were at the start of the sweep (the word lists, or dense rows) and the topic
totals; the worker samples and sends back the tokens that moved (position, word, old and new
topic) and its stream's state. The client merges the moves into its counts and its copy of the
topics. So the same seed and shards give the same bytes on any number of workers as on any
number of threads.

Faults: the client keeps every shard's state as of the last merged sweep (its topics and
stream). When a worker dies, its shards are rebuilt on another worker from that state and the
sweep is done again for them (the other shards' results are kept: nothing was merged yet), which
draws the same numbers. When the scheduler is lost, :class:`ClusterLost` is raised; the driver
writes the checkpoint of the last merged sweep and the run resumes from it, locally or on
another cluster. Dask is the optional ``dask`` extra (``pip install 'ldacli[dask]'``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

import numpy as np

from ldacli.errors import LdacliError
from ldacli.methods.sharded import SAMPLERS, Replica, alias_arrays, shard_layout, word_capacity

log = logging.getLogger("ldacli")
EXTRA = "pip install 'ldacli[dask]'"
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
    and one replica of the counts to sample them against."""

    def __init__(self, kind: str, n_words: int, n_topics: int, word_ptr: np.ndarray | None):
        empty = np.zeros(0, np.int32)
        self.replica = Replica(kind, n_words, n_topics, empty, empty, word_ptr)
        self.shards: dict[int, dict] = {}

    def add(self, s: int, words: np.ndarray, ptr: np.ndarray, z: np.ndarray, rng_state: dict) -> int:
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = rng_state
        shard = {"words": words, "ptr": ptr, "z": np.array(z, dtype=np.int32), "rng": rng}
        if self.replica.kind == "alias":
            shard.update(alias_arrays(words, ptr))
        self.shards[s] = shard
        return os.getpid()

    def sweep(self, s: int, word_ids: np.ndarray, packed: dict, alpha: np.ndarray, beta: float, beta_sum: float):
        """Sample shard ``s`` against the counts ``packed`` (see :meth:`Replica.pack`); returns
        the moved tokens ``(positions, words, old topics, new topics)`` and the stream's state."""
        shard = self.shards[s]
        self.replica.unpack(word_ids, packed)
        before = shard["z"].copy()
        self.replica.sweep(shard["words"], shard["ptr"], shard["z"], alpha, beta, beta_sum, shard["rng"],
                           shard.get("order"), shard.get("doc_of"))
        moved = np.flatnonzero(before != shard["z"]).astype(np.int32)
        return (moved, shard["words"][moved], before[moved], shard["z"][moved],
                shard["rng"].bit_generator.state)

    def pid(self) -> int:
        return os.getpid()


class DistributedSampler:
    """:class:`~ldacli.methods.sharded.ShardedSampler`'s surface and results, its shards on the
    workers of ``client``. ``z`` (the client's copy, the last merged sweep's) and the snapshot
    counts are kept here; ``traffic`` has, per sweep, the array bytes sent and received, the
    tokens moved, the shards rebuilt, and the seconds spent until every shard was back and
    merging."""

    def __init__(self, kind: str, words, doc_ptr, z, n_words: int, n_topics: int, alpha, beta: float,
                 bounds: np.ndarray, rngs: list, client):
        if kind not in SAMPLERS:
            raise LdacliError(f"sampler must be one of {', '.join(SAMPLERS)}, found {kind!r}")
        self.kind, self.client = kind, client
        self.words, self.doc_ptr, self.z = words, doc_ptr, z
        self.V, self.K = n_words, n_topics
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)
        self.shards = shard_layout(kind, words, doc_ptr, bounds)
        self.rng_states = [r.bit_generator.state for r in rngs]
        self.rngs = rngs
        self.word_ptr = None if kind == "dense" else word_capacity(words, n_words, n_topics)
        self.snapshot = Replica(kind, n_words, n_topics, words, z, self.word_ptr)
        self.traffic: list[dict] = []
        self.hosts: dict[str, object] = {}  # worker address -> actor
        self.placement: dict[int, str] = {}  # shard -> worker address
        self.dead: set[str] = set()
        with self._timeouts():
            self._place(range(len(self.shards)))

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
            future = self.client.submit(ShardHost, self.kind, self.V, self.K, self.word_ptr, actor=True,
                                        workers=[address], allow_other_workers=False, pure=False)
            self.hosts[address] = future.result()
        return self.hosts[address]

    def _place(self, shards) -> None:
        """Put ``shards`` on the live workers (shard s on worker s mod W, sorted by address) with
        their state as of the last merged sweep; a worker that fails meanwhile is left out and
        its shards placed again."""
        shards = list(shards)
        for _ in range(10):
            workers = self._workers()
            calls = []
            try:
                for s in shards:
                    address = workers[s % len(workers)]
                    sh = self.shards[s]
                    lo, hi = sh["lo"], sh["hi"]
                    self.placement[s] = address
                    calls.append((address, self._host(address).add(s, self.words[lo:hi], sh["ptr"], self.z[lo:hi],
                                                                  self.rng_states[s])))
                for address, call in calls:
                    call.result()
                return
            except ClusterLost:
                raise
            except Exception as exc:  # noqa: BLE001 - a worker died while its shards were placed
                self._lost({self.placement[s] for s in shards}, exc)
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

    def set_priors(self, alpha, beta: float) -> None:
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)

    @property
    def counts(self) -> Replica:
        return self.snapshot

    def _submit(self, s: int):
        sh = self.shards[s]
        packed = self.snapshot.pack(sh["word_ids"])
        sent = sum(a.nbytes for a in packed.values()) + sh["word_ids"].nbytes + self.alpha.nbytes
        call = self.hosts[self.placement[s]].sweep(s, sh["word_ids"], packed, self.alpha, self.beta, self.V * self.beta)
        return call, sent

    def sweep(self) -> None:
        with self._timeouts():
            self._sweep()

    def _sweep(self) -> None:
        t0 = time.perf_counter()
        pending = list(range(len(self.shards)))
        results: dict[int, tuple] = {}
        sent = received = rebuilt = 0
        while pending:
            calls, failed = {}, []
            for s in pending:
                try:
                    calls[s], nbytes = self._submit(s)
                    sent += nbytes
                except ClusterLost:
                    raise
                except Exception as exc:  # noqa: BLE001 - the actor's worker is gone
                    failed.append((s, exc))
            for s, call in calls.items():
                try:
                    results[s] = call.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker shows up as many kinds of error
                    failed.append((s, exc))
            pending = []
            if failed:
                dead = {self.placement[s] for s, _ in failed}
                log.warning("worker %s failed (%s: %s); rebuilding its shards elsewhere", ", ".join(sorted(dead)),
                            type(failed[0][1]).__name__, failed[0][1])
                self._lost(dead, failed[0][1])
                # every shard of a dead worker is rebuilt from the last merged sweep and sampled
                # again, also those it had finished this sweep: the new host must hold their state
                pending = [s for s, a in self.placement.items() if a in dead]
                self._place(pending)
                rebuilt += len(pending)
                for s in pending:
                    results.pop(s, None)
        t1 = time.perf_counter()
        # merge, as ShardedSampler does: the moves of every shard into the snapshot and z
        for s, (moved, words, old, new, state) in results.items():
            received += moved.nbytes + words.nbytes + old.nbytes + new.nbytes
            lo = self.shards[s]["lo"]
            self.z[lo + moved] = new
            self.rng_states[s] = state
            self.rngs[s].bit_generator.state = state
            if moved.size:
                order = np.argsort(words, kind="stable").astype(np.int32)
                self.snapshot.move(np.ascontiguousarray(words), order, np.ascontiguousarray(old),
                                   np.ascontiguousarray(new))
        self.traffic.append({"sent": sent, "received": received, "rebuilt_shards": rebuilt,
                             "moved": int(sum(r[0].size for r in results.values())),
                             "sample_seconds": t1 - t0, "merge_seconds": time.perf_counter() - t1})

    def close(self) -> None:
        self.hosts.clear()
