"""Fixed work ranges and a thread pool to run nogil kernels on them.

Results must not depend on ``--threads``: ranges are cut from the data alone (never from the
thread count), each range writes only its own part of the outputs or, where it has a random
stream, uses the stream spawned for that range, and anything summed across ranges is summed
afterwards in range order (or is an integer sum, which does not depend on order).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from ldacli import checks
from ldacli.settings import Integer, Setting

THREADS = Setting("threads", Integer(1), None,
                  "Threads; the result is the same for any number (training: cgs samples the blocks of a round in "
                  "parallel, and at most --shards threads help; vem parallelises the E-step, gibbs every step).",
                  default_help="all cores this process may use: its CPU affinity mask, which taskset, containers "
                               "and batch schedulers narrow")

T = TypeVar("T")

# Non-zero (document, word) entries per document range: small enough that 2-16 threads stay
# busy on a mid-sized corpus, large enough that the per-call overhead is negligible.
CHUNK_NNZ = 1 << 15


def default_threads() -> int:
    """"All cores": the cores this process may run on (its CPU affinity mask, which a container,
    ``taskset`` or a batch scheduler may narrow), else the machine's count; at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def check_threads(threads: int | None) -> int:
    """``threads`` checked, or :func:`default_threads` when it is None."""
    return default_threads() if threads is None else checks.count("threads", threads, 1)


def doc_ranges(indptr: np.ndarray, target: int | None = None) -> list[tuple[int, int]]:
    """Consecutive document ranges ``(start, stop)`` covering all documents, each ending with
    the first document that brings it to ``target`` (default :data:`CHUNK_NNZ`) non-zero
    entries or more. Depends only on the corpus's CSR ``indptr``; also cuts words by a CSC
    ``colptr``."""
    target = CHUNK_NNZ if target is None else target
    n_docs = indptr.size - 1
    if n_docs == 0:
        return []
    nnz = int(indptr[-1])
    cuts = np.searchsorted(indptr, np.arange(target, nnz, target), side="left")
    bounds = np.unique(np.concatenate(([0], np.minimum(cuts, n_docs), [n_docs])))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def even_ranges(n: int, target: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into consecutive pieces of ``target`` items (the last may be shorter)."""
    return [(a, min(a + target, n)) for a in range(0, n, target)]


class Pool:
    """Runs a function over items on ``threads`` threads and returns the results in item order.

    With one thread everything runs in the calling thread. Use as a context manager, or call
    :meth:`close`.
    """

    def __init__(self, threads: int):
        self.threads = threads
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="ldacli") if threads > 1 else None

    def map(self, fn: Callable[..., T], items: Iterable) -> list[T]:
        if self._executor is None:
            return [fn(item) for item in items]
        return list(self._executor.map(fn, items))

    def ahead(self, fn: Callable[..., T], items: Iterable) -> Iterator[T]:
        """``fn`` of each item, in item order, as they are taken: on threads, as many items at
        once as threads, the next ones computed while the caller takes one (the items read as
        needed, in the calling thread), for results too large to hold all at once."""
        if self._executor is None:
            yield from map(fn, items)
            return
        pending: deque = deque()
        for item in items:
            pending.append(self._executor.submit(fn, item))
            if len(pending) == self.threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
