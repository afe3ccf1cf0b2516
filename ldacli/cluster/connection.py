"""Connecting to a Dask cluster, quietly: a scheduler's address, or a local cluster started here.

The one connection of every command that runs on a cluster (training's Dask engine,
:mod:`ldacli.methods.cgs.dask_client`; ``perplexity``, ``infer`` and ``select-k``), below them
all: it imports nothing of training.

``--scheduler tcp://host:8786`` connects to a running scheduler, ``tls://host:8786`` to one that
speaks TLS (the credentials from :data:`TLS`'s options or Dask's configuration,
``distributed.comm.tls``); ``--scheduler local:N`` starts N worker processes on this machine
that only this user can reach (:mod:`ldacli.cluster.local`: TLS with credentials made
for it, no HTTP pages). Anything else is refused in one line. Either way Dask's own log
lines (the nanny restarting a worker, a connection reset while a worker dies, the client
reconnecting) stay out of the user's stderr unless ldacli's log is verbose (``-v``): ldacli
says in one line of its own what happened instead (a worker lost, its shards rebuilt).

A local cluster that cannot start says why in one line: which resource ran out and its limit
(open files, processes, memory), or that its workers did not start in time on a loaded machine.
Before starting, the open-file limit is raised to its hard limit when it is lower than a
cluster of N workers needs; a start that timed out is tried again with twice the time.
Dask is the optional ``dask`` extra (``pip install 'ldacli[dask]'``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import warnings
from dataclasses import dataclass

from ldacli.errors import LdacliError, SettingError
from ldacli.settings import Setting, Text

log = logging.getLogger("ldacli")
EXTRA = "pip install 'ldacli[dask]'"

# A scheduler's address: tcp:// or tls://, a host (a name, an IPv4 address or [an IPv6 one]), a port.
ADDRESS = re.compile(r"(tcp|tls)://([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?/?")


@dataclass(frozen=True)
class SchedulerAddress:
    """``--scheduler``'s constraint: ``tcp://HOST:PORT``, ``tls://HOST:PORT`` or ``local:N``
    (N >= 1), or a ``distributed.Client`` (the Python API), passed as given."""

    def check(self, name: str, value):
        if not isinstance(value, str):
            if value is not None and not hasattr(value, "scheduler_info"):
                raise SettingError(name, f"{name} must be an address (tcp://host:8786, tls://host:8786), local:N or "
                                         f"a distributed.Client, found {type(value).__name__}")
            return value
        if value.startswith("local:"):
            local_workers(value)
        elif not ADDRESS.fullmatch(value) or int((ADDRESS.fullmatch(value).group(3) or ":0")[1:]) > 65535:
            raise SettingError(name, f"{name} must be tcp://HOST:PORT, tls://HOST:PORT or local:N, found {value!r}")
        return value

    def describe(self) -> str:
        return "tcp://HOST:PORT, tls://HOST:PORT or local:N"


SCHEDULER = Setting("scheduler", SchedulerAddress(), None,
                    "Run on a Dask cluster: a scheduler's address (tcp://host:8786, or tls://host:8786 with --tls-* "
                    "or Dask's TLS configuration) or local:N for N local worker processes that only you can reach "
                    "(TLS with credentials made for them, no HTTP pages); the result is the same as on threads. The "
                    f"cluster runs code as you: see docs/trust.md. Needs the dask extra: {EXTRA}.")
# The client's TLS credentials for a tls:// scheduler, as `dask scheduler` and `dask worker` name
# them; not given, Dask's configuration (distributed.comm.tls.ca-file, .client.cert, .client.key).
TLS = (
    Setting("tls_ca_file", Text(path=True), None,
            "With --scheduler tls://: the certificate authority (PEM) that signed the scheduler's and the workers' "
            "certificates.", default_help="Dask's distributed.comm.tls.ca-file", result=False),
    Setting("tls_cert", Text(path=True), None,
            "With --scheduler tls://: this client's certificate (PEM; it may hold the key too).",
            default_help="Dask's distributed.comm.tls.client.cert", result=False),
    Setting("tls_key", Text(path=True), None,
            "With --scheduler tls://: this client's private key (PEM), when --tls-cert does not hold it.",
            default_help="Dask's distributed.comm.tls.client.key", result=False),
)
# Dask's configuration keys of the TLS settings.
TLS_CONFIG = {"tls_ca_file": "distributed.comm.tls.ca-file", "tls_cert": "distributed.comm.tls.client.cert",
              "tls_key": "distributed.comm.tls.client.key"}

# Dask's loggers, silenced unless ldacli's log is verbose.
DASK_LOGGERS = ("distributed", "dask", "tornado", "asyncio")
# Open files a local cluster needs: for the client, its scheduler and nannies, and per worker
# (measured: local:2 starts with 48 and fails with 32; the rest is room for connections between
# the workers as they pass the counts, and for the files a run reads and writes).
FILES_BASE = 256
FILES_PER_WORKER = 64
# Starting a local cluster: attempts, and the seconds its workers get to start at first
# (doubled at each attempt: a loaded machine starts processes slowly).
START_ATTEMPTS = 3
START_SECONDS = 60


class ClusterLost(LdacliError):
    """The scheduler (or every worker) went away; the run can resume from its checkpoint."""


def distributed_module():
    """``distributed``, or an error naming the extra that installs it."""
    try:
        import distributed
    except ImportError:
        raise LdacliError(f"--scheduler needs Dask, which the dask extra installs: {EXTRA}") from None
    return distributed


def verbose() -> bool:
    """Whether ldacli's log is verbose (``-v``): then Dask's own log lines are shown too."""
    return logging.getLogger("ldacli").isEnabledFor(logging.INFO)


@contextlib.contextmanager
def quiet_dask():
    """Dask's loggers at CRITICAL and its Python warnings ignored for the block (as they were
    after), unless ldacli's log is verbose."""
    if verbose():
        yield
        return
    names = set(DASK_LOGGERS) | {name for name in list(logging.root.manager.loggerDict)
                                 if name.split(".")[0] in DASK_LOGGERS}
    loggers = [logging.getLogger(name) for name in sorted(names)]  # Dask sets levels on some children
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():  # e.g. "Port 8787 is already in use" as a local cluster starts
            for name in DASK_LOGGERS:
                warnings.filterwarnings("ignore", module=rf"{name}(\.|$)")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def local_workers(scheduler: str) -> int | None:
    """N of ``local:N`` (None for an address); a bad N is refused."""
    if not scheduler.startswith("local:"):
        return None
    n = scheduler.split(":", 1)[1]
    if not (n.isascii() and n.isdigit() and int(n) >= 1):
        raise SettingError("scheduler", f"scheduler must be local:N with N >= 1 workers, found {scheduler!r}")
    return int(n)


@contextlib.contextmanager
def tls_options(scheduler: str | None, given: dict):
    """The TLS settings given (``tls_ca_file``, ``tls_cert``, ``tls_key``: :data:`TLS`) as Dask's
    configuration for the block, refused unless ``scheduler`` is a ``tls://`` address; for a
    ``tls://`` address the credentials are checked first (:func:`tls_security`), before any
    work."""
    given = {k: v for k, v in given.items() if k in TLS_CONFIG and v is not None}
    tls = isinstance(scheduler, str) and scheduler.startswith("tls://")
    if given and not tls:
        name = next(iter(given))
        raise SettingError(name, f"{name} applies with a tls:// scheduler only, found scheduler {scheduler!r}")
    if not tls:
        yield
        return
    for s in TLS:
        if s.name in given:
            s.check(given[s.name])
    import dask

    with dask.config.set({TLS_CONFIG[k]: os.path.abspath(v) for k, v in given.items()}):
        tls_security(scheduler)
        yield


def tls_security(scheduler: str):
    """The ``distributed.Security`` of a ``tls://`` scheduler's client, from Dask's configuration
    (:func:`tls_options` puts the options there): one line when a credential is missing or
    unreadable."""
    distributed = distributed_module()
    security = distributed.Security()
    if not (security.tls_ca_file and security.tls_client_cert):
        raise LdacliError(f"scheduler: {scheduler} needs TLS credentials: give --tls-ca-file and --tls-cert (and "
                          f"--tls-key unless the certificate holds it), or set distributed.comm.tls.ca-file and "
                          f"distributed.comm.tls.client.cert (and .key) in Dask's configuration")
    for what, path in (("certificate authority", security.tls_ca_file), ("certificate", security.tls_client_cert),
                       ("key", security.tls_client_key)):
        if path and "\n" not in path:  # Dask's configuration may hold the PEM text itself
            try:
                with open(path, "rb"):
                    pass
            except OSError as exc:
                raise LdacliError(f"{path}: cannot read the TLS {what} for {scheduler}: {exc.strerror or exc}") from None
    return security


def raise_open_file_limit(n_workers: int) -> None:
    """Raise this process's open-file limit (which the workers inherit) to its hard limit when it
    is below what ``n_workers`` local workers need; refuse in one line when the hard limit is."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    need = FILES_BASE + FILES_PER_WORKER * n_workers
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    target = need if hard == resource.RLIM_INFINITY else min(hard, max(need, soft))
    if target > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            log.info("raised the open-file limit from %d to %d for %d local workers", soft, target, n_workers)
            soft = target
    if soft < need:
        raise LdacliError(f"scheduler: cannot start a local cluster of {n_workers} workers: it needs about {need} "
                          f"open files, and the open-file limit is {soft} (hard limit {hard}; raise it with "
                          f"ulimit -n {need})")


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost exception of ``exc``'s chain (Dask wraps the one that says why)."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    return exc


def _why_not_started(exc: BaseException, n: int, seconds: float) -> tuple[str, bool]:
    """Why a local cluster of ``n`` workers did not start, in words, and whether trying again
    (with more time) may help."""
    import resource

    cause = _root_cause(exc)
    if isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        return (f"too many open files (the open-file limit is {soft}, hard limit {hard}; raise it with "
                f"ulimit -n)"), False
    if isinstance(cause, OSError) and cause.errno in (errno.EAGAIN, errno.ENOMEM):
        soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
        limit = "unlimited" if soft == resource.RLIM_INFINITY else soft
        return (f"cannot start a process ({os.strerror(cause.errno)}: out of memory, or the process limit, "
                f"ulimit -u, is {limit})"), False
    if isinstance(cause, MemoryError):
        return "out of memory", False
    if isinstance(cause, TimeoutError) or "timed out" in str(exc).lower():
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        return (f"its worker processes did not start within {seconds:g} s (load average {load:.1f} on "
                f"{os.cpu_count()} cores)"), True
    return f"{type(cause).__name__}: {cause}".strip(), True


def start_local(n: int):
    """A ``distributed.Client`` of a new local cluster of ``n`` worker processes (one thread
    each, loopback) that only this user can reach (:mod:`ldacli.cluster.local`), started
    after raising the open-file limit if needed, and again with twice the time when its workers
    were too slow to start; one line saying why when it cannot."""
    distributed_module()
    try:
        import cryptography  # noqa: F401 - the cluster's TLS credentials are made with it
    except ImportError:
        raise LdacliError(f"--scheduler local:N needs the cryptography package for the cluster's TLS credentials, "
                          f"which the dask extra installs: {EXTRA}") from None
    import dask

    from ldacli.cluster import local as dask_local_cluster

    raise_open_file_limit(n)
    silence = logging.CRITICAL if not verbose() else logging.WARNING
    seconds, last = START_SECONDS, ""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            with quiet_dask(), dask.config.set({"distributed.comm.timeouts.connect": f"{seconds}s"}):
                return dask_local_cluster.start(n, silence_logs=silence, death_timeout=seconds)
        except Exception as exc:  # noqa: BLE001 - Dask raises RuntimeError, TimeoutError and others
            last, again = _why_not_started(exc, n, seconds)
            if not again or attempt == START_ATTEMPTS:
                break
            log.warning("a local cluster of %d workers did not start (%s); trying again with %g s", n, last,
                        2 * seconds)
            seconds *= 2
    tried = f" (tried {attempt} times)" if attempt > 1 else ""
    raise LdacliError(f"scheduler: cannot start a local cluster of {n} workers: {last}{tried}")


def connect(scheduler: str):
    """A Dask client: ``local:N`` starts a local cluster of N worker processes
    (:func:`start_local`); else ``scheduler`` is a scheduler's address (``tcp://host:8786``, or
    ``tls://host:8786`` with :func:`tls_security`'s credentials). Anything else is refused."""
    scheduler = SCHEDULER.check(scheduler)
    n = local_workers(scheduler)
    if n is not None:
        return start_local(n)
    distributed = distributed_module()
    security = tls_security(scheduler) if scheduler.startswith("tls://") else None
    try:
        with quiet_dask():
            return distributed.Client(scheduler, timeout=30, direct_to_workers=True, security=security)
    except (OSError, TimeoutError, ValueError) as exc:  # ssl.SSLError is an OSError; a bad port a ValueError
        raise LdacliError(f"scheduler: cannot reach {scheduler} ({_root_cause(exc)})") from None


@contextlib.contextmanager
def cluster(scheduler):
    """A Dask client for ``scheduler`` for the block, Dask's log quiet meanwhile
    (:func:`quiet_dask`): None for None, a ``distributed.Client`` as given (its owner closes it),
    else :func:`connect`'s, closed (with its local cluster) afterwards."""
    if scheduler is None:
        yield None
        return
    if not isinstance(scheduler, str):
        with quiet_dask():
            yield scheduler
        return
    client = connect(scheduler)
    with quiet_dask():
        try:
            yield client
        finally:
            local = getattr(client, "cluster", None)
            with contextlib.suppress(Exception):
                client.close()
            if local is not None:
                with contextlib.suppress(Exception):
                    local.close()
