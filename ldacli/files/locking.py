"""Exclusive locks on output paths, so that two runs (two cron jobs, say) never write one file.

While it works, a run holds a kernel lock (``flock``) on a lock file ``.NAME.lock`` beside each
output ``NAME`` (the model, the checkpoint). The kernel releases the lock when the process ends,
however it ends, so a run killed with ``kill -9`` leaves nothing that blocks the next one; a
run that ends normally removes its lock file, and the next run reuses (then removes) one that
a killed run left. A second run on the same paths is refused at once with
:class:`~ldacli.errors.LockedError` (exit code 75, EX_TEMPFAIL), or waits up to ``wait``
seconds. Holding the locks, a run also removes the temporary files that killed runs left beside
its outputs (:func:`ldacli.files.fileio.stale_temporaries`): no other run can be writing them.

Removing a lock file safely: the holder unlinks it before it unlocks, and a run that has just
locked a file checks that it is still the one at the path (same inode), else tries again, so two
runs can never both hold "the" lock. Where the platform has no ``flock`` (Windows), outputs are
not locked.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterator

from ldacli.errors import LockedError, OutputError
from ldacli.files.fileio import same_file, stale_temporaries

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None

log = logging.getLogger("ldacli")

# Exit code of a run refused because another holds the lock (sysexits.h EX_TEMPFAIL).
EXIT_LOCKED = 75
POLL_SECONDS = 0.05


def lock_file(path: str) -> str:
    """The lock file of the output ``path``: ``.NAME.lock`` in the same folder."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.lock")


def _holder(fd: int) -> str:
    """Who holds the lock of the lock file ``fd``: ``PID 1234`` (the holder writes its process
    id into it), or ``a process`` when it has not yet or cannot be read."""
    try:
        pid = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        pid = ""
    return f"PID {pid}" if pid.isdigit() else "a process"


def _open_lock(name: str, path: str) -> int:
    """A descriptor of the lock file ``name`` (of the output ``path``), created if missing, checked
    before anything is written into it: never through a symbolic link (``O_NOFOLLOW``: in a shared
    folder another user may have planted one pointing at a file of ours), a regular file of ours
    with no other name (a hard link to a file of ours would be truncated too). Refused with an
    :class:`OutputError` naming the output and the lock file."""
    flags = os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:  # a killed run's, or a live run's: open it as it is
            fd = os.open(name, flags)
    except FileNotFoundError:
        return -1  # removed between the two opens by the run that held it: try again
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(path, "lock file", f"{name} is a symbolic link, which ldacli never follows "
                                                 f"(someone else may have put it there): remove it") from None
        raise OutputError(path, "lock file", f"cannot open {name}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        problem = None
        if not stat.S_ISREG(st.st_mode):
            problem = "is not a regular file"
        elif st.st_nlink != 1:
            problem = f"has {st.st_nlink} names (a hard link to another file)"
        elif hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            problem = f"belongs to another user (uid {st.st_uid})"
        if problem is not None:
            raise OutputError(path, "lock file", f"{name} {problem}: refusing to use it as a lock "
                                                 f"(someone else may have put it there): remove it")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _acquire(path: str, deadline: float, announce: bool) -> int | None:
    """A descriptor of ``path``'s lock file, locked; None when the platform cannot lock. When
    ``announce`` (a wait was asked for) and another run holds the lock, it says so (once) on
    ldacli's log, naming the holder, even if the wait is over before the first try (a loaded
    machine): the refusal that follows is then never without it."""
    if fcntl is None:
        return None
    name = lock_file(path)
    waiting = False
    while True:
        fd = _open_lock(name, path)
        if fd < 0:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            left = deadline - time.monotonic()
            if announce and not waiting:
                log.warning("%s: another ldacli run (%s) holds its lock; waiting up to %.3g s for it", path, holder,
                            max(left, 0.0))
                waiting = True
            if left <= 0:
                raise LockedError(f"{path}: another ldacli run ({holder}) is writing it (lock {name} is held); "
                                  f"try again later") from None
            time.sleep(POLL_SECONDS)
            continue
        if same_file(name, fd):
            try:  # who holds it, for a run that waits: a full disk only costs that message
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError:
                pass
            return fd
        os.close(fd)  # the holder we waited for removed it: lock the new one


def _release(path: str, fd: int | None) -> None:
    if fd is None:
        return
    name = lock_file(path)
    if same_file(name, fd):  # ours still: never another file put at its name since
        with contextlib.suppress(OSError):
            os.unlink(name)
    os.close(fd)


@contextlib.contextmanager
def locked(paths: list[str | None], wait: float | None = None) -> Iterator[list[str]]:
    """Hold exclusive locks on every path in ``paths`` (None entries are skipped) for the
    block; yields the stale temporary files removed beside them. ``wait``: seconds to wait for
    a lock held by another run (None or 0: do not wait)."""
    targets = sorted({os.path.abspath(p) for p in paths if p})  # one order for every run: no deadlock
    deadline = time.monotonic() + (wait or 0)
    held: list[tuple[str, int | None]] = []
    try:
        for path in targets:
            held.append((path, _acquire(path, deadline, bool(wait))))
        removed = []
        for path in targets:
            for stale in stale_temporaries(path):
                with contextlib.suppress(OSError):
                    if os.path.isdir(stale) and not os.path.islink(stale):
                        shutil.rmtree(stale)  # an atomic_folder's
                    else:
                        os.unlink(stale)
                    removed.append(stale)
        yield removed
    finally:
        for path, fd in reversed(held):
            _release(path, fd)
