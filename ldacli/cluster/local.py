"""A local Dask cluster only its owner can use (``--scheduler local:N``).

Dask's ``LocalCluster`` listens on loopback without authentication, and 127.0.0.1 is every
local user's: another user of the machine could connect with ``distributed.Client`` and run
code as you, in the workers and in this process (the scheduler lives here), and read the HTTP
pages every scheduler and worker serves even with ``dashboard_address=None``. Here instead:

* every connection is mutual TLS with credentials made for this cluster alone
  (``Security.temporary()``: a fresh key and self-signed certificate, held in memory and handed
  to the worker processes through the pipe that starts them; the ``cryptography`` package, which
  the ``dask`` extra installs). Without them a connection to the scheduler, a nanny or a worker
  fails its handshake; plain TCP is refused (``require_encryption``);
* no HTTP server at all: the scheduler and the workers are Dask's own with
  :meth:`start_http_server` listening nowhere, so the only sockets are the TLS ones;
* their files in a folder made for this cluster alone: ``$TMPDIR/ldacli-cluster-XXXXXXXX``
  (``tempfile.mkdtemp``: a new name, mode 0700, yours), given to the scheduler, the nannies and
  the workers as their ``local_directory``, and removed when the cluster closes. Left to itself,
  Dask keeps them in ``$TMPDIR/dask-scratch-space``, a fixed name whoever made it first owns:
  another user who made it could have the locks Dask opens there (``global.lock``,
  ``purge.lock``, which it truncates) be links to your files, swap the workers' folders, whose
  spilled data Dask unpickles, for theirs, and put modules there, since each process puts its
  folder first on ``sys.path``.

It is otherwise Dask's ``LocalCluster``: N worker processes under nannies (a dead worker is
restarted), one thread each, loopback only, the machine's memory shared between them. Imported
only when a local cluster starts: it needs Dask.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading

from distributed import Client, Nanny, Scheduler, SpecCluster, Worker
from distributed.http.routing import RoutingApplication
from distributed.security import Security
from distributed.worker_memory import parse_memory_limit

log = logging.getLogger("ldacli")
HOST = "127.0.0.1"


class WithoutPages:
    """A Dask server (scheduler or worker) that serves no HTTP pages: its HTTP server is never
    made, so nothing listens for it (an application without routes stands in for what Dask
    stops when the server closes)."""

    def start_http_server(self, routes, dashboard_address, default_port=0, ssl_options=None):
        self.http_application, self.http_server = RoutingApplication([]), None


class OwnScheduler(WithoutPages, Scheduler):
    """Dask's scheduler without HTTP pages."""


class OwnWorker(WithoutPages, Worker):
    """Dask's worker without HTTP pages (the worker processes pickle it by its module and name),
    deaf to SIGINT: a Ctrl-C at the terminal reaches every process of the foreground group, the
    workers too, and the run's client is the one to answer it (it checkpoints the sweep on the
    workers, then closes the cluster). Left to Python, each worker died of the KeyboardInterrupt
    with two tracebacks, the checkpoint could not be written and the client waited a minute for
    workers before it stopped."""

    def __init__(self, *args, **kwargs):
        if multiprocessing.parent_process() is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a nanny's worker process (of this cluster only)
        super().__init__(*args, **kwargs)


class OwnNanny(Nanny):
    """Dask's nanny, starting :class:`OwnWorker` processes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, worker_class=OwnWorker, **kwargs)


class OwnCluster(SpecCluster):
    """Dask's ``SpecCluster`` whose processes keep their files in ``folder``, made for it alone
    (:func:`start`), which it removes once it has closed them: on every way a cluster closes
    (:func:`ldacli.cluster.connection.cluster` after the run, an error or a signal; a start that
    failed; Dask's own close at exit), all of which pass through :meth:`_close`."""

    def __init__(self, folder: str, **kwargs):
        self.folder = folder
        super().__init__(**kwargs)

    async def _close(self):
        try:
            await super()._close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            if os.path.lexists(self.folder):
                log.warning("could not remove the local cluster's folder %s", self.folder)


def start(n_workers: int, *, silence_logs: int, death_timeout: float) -> Client:
    """A client of a new cluster of ``n_workers`` local worker processes that only this user
    can reach, keeping their files in a new folder of their own (module docstring); Dask's errors
    propagate (the caller says why in one line)."""
    security = Security.temporary()
    folder = tempfile.mkdtemp(prefix="ldacli-cluster-")
    common = {"host": HOST, "protocol": "tls://", "security": security, "local_directory": folder}
    scheduler = {"cls": OwnScheduler, "options": {**common, "port": 0, "dashboard": False, "dashboard_address": None}}
    worker = {"cls": OwnNanny, "options": {**common, "nthreads": 1, "dashboard": False, "silence_logs": silence_logs,
                                           "death_timeout": death_timeout,
                                           "memory_limit": parse_memory_limit("auto", 1, n_workers, logger=log)}}
    cluster = OwnCluster(folder, workers={i: worker for i in range(n_workers)}, scheduler=scheduler, worker=worker,
                         security=security, silence_logs=silence_logs, name="ldacli")
    try:
        return Client(cluster, security=security, direct_to_workers=True)
    except BaseException:
        cluster.close()
        raise
