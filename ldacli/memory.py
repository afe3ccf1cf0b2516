"""How much memory this process may use, and refusing work that cannot fit in it.

Large allocations (a corpus's tokens, a model's K x V arrays, the documents a header declares)
are estimated before they are made; when the estimate exceeds the memory available, the work is
refused with a message that says how much it needs, instead of ending in an out-of-memory
traceback or a machine swapping for hours.
"""

from __future__ import annotations

import ctypes
import os

from ldacli.errors import LdacliError

GIB = 1 << 30
# glibc's mallopt parameter M_MMAP_THRESHOLD: blocks of this size or more get memory of their own
# from the system (mmap), which free gives back (munmap).
_M_MMAP_THRESHOLD = -3
# Its default, 128 KiB, which glibc raises (up to 32 MiB) to the size of each such block freed,
# unless it is set: see return_freed_memory.
MAPPED_FROM = 128 * 1024


def return_freed_memory() -> None:
    """Have the C library give every block of :data:`MAPPED_FROM` bytes or more back to the
    system when it is freed, for the rest of the process (glibc's ``mallopt(M_MMAP_THRESHOLD)``;
    elsewhere nothing is done). By default glibc raises that threshold to the size of each large
    block freed, up to 32 MiB, and blocks below it come from its heap, which it cannot shrink past
    a block still in use: a sampler's lasting arrays of a few MB (each shard's document lists,
    made among the scratch of making them) then keep the scratch's pages resident, 100 MB at 20 M
    tokens (docs/performance.md, "Memory"). The command line calls it once; a program that trains
    on large corpora may too."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc, or no C library to ask
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, MAPPED_FROM)


def available_bytes() -> int | None:
    """Memory available to this process now: the kernel's MemAvailable, capped by a cgroup
    memory limit and by the room left under ``RLIMIT_AS`` and ``RLIMIT_DATA`` when there are
    some; None where the platform does not say."""
    found = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file, encoding="ascii") as f:
                limit = f.read().strip()
            with open(usage_file, encoding="ascii") as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 1 << 60:
            room = max(0, int(limit) - usage)
            found = room if found is None else min(found, room)
        break
    room = _rlimit_room()
    if room is not None:
        found = room if found is None else min(found, room)
    return found


def _rlimit_room() -> int | None:
    """What this process may still map under its ``RLIMIT_AS`` (address space, as ``ulimit -v``
    and SGE's h_vmem set it) and ``RLIMIT_DATA`` limits, from its current sizes (VmSize,
    VmData); None without a limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    used = {}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(("VmSize:", "VmData:")):
                    used[line.split(":")[0]] = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    room = None
    for limit, field in ((resource.RLIMIT_AS, "VmSize"), (getattr(resource, "RLIMIT_DATA", None), "VmData")):
        if limit is None or field not in used:
            continue
        soft = resource.getrlimit(limit)[0]
        if soft != resource.RLIM_INFINITY:
            left = max(0, soft - used[field])
            room = left if room is None else min(room, left)
    return room


def _size(n: float) -> str:
    return f"{n / GIB:.1f} GiB" if n >= GIB / 10 else f"{n / (1 << 20):.0f} MiB"


def out_of_memory(what: str) -> LdacliError:
    """The one-line refusal for a :class:`MemoryError` met while doing ``what`` (an allocation
    that the estimates did not foresee)."""
    available = available_bytes()
    room = f" ({_size(available)} is available)" if available is not None else ""
    return LdacliError(f"{what}: out of memory{room}; use fewer topics or a smaller corpus, or free memory")


def memory_room(limit: int | None = None) -> int | None:
    """The memory a run may use: ``limit`` (``--memory-limit``) capped by the memory available
    (:func:`available_bytes`); None when neither is known."""
    available = available_bytes()
    if limit is None:
        return available
    return limit if available is None else min(limit, available)


SMALLER = "use fewer topics, or train on a shard folder (ldacli convert --shards), which trains from disk"


def check_fits(what: str, needed: float, limit: int | None = None, advice: str = SMALLER) -> None:
    """Raise :class:`LdacliError` when ``needed`` bytes (an estimate of ``what``, e.g. "training
    with K=200 topics on this corpus") exceed the memory available, or ``limit`` (a run's
    ``--memory-limit``) when it is lower; the environment variable ``LDACLI_NO_MEMORY_CHECK=1``
    turns the check off (the estimate may be pessimistic). ``advice``: what to do instead."""
    if os.environ.get("LDACLI_NO_MEMORY_CHECK"):
        return
    available = available_bytes()
    if limit is not None and (available is None or limit < available):
        if needed > limit:
            raise LdacliError(f"{what} needs about {_size(needed)} of memory, over the memory limit of "
                              f"{_size(limit)}: give --memory-limit {_size(needed * 1.05).replace(' ', '')} or "
                              f"more, or {advice}")
        return
    if available is not None and needed > available:
        raise LdacliError(f"{what} needs about {_size(needed)} of memory, and {_size(available)} is available; "
                          f"{advice}, or free memory (LDACLI_NO_MEMORY_CHECK=1 skips this check)")
