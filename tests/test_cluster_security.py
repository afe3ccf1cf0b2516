"""A Dask cluster ldacli starts is its owner's alone, and --scheduler takes what it promises
(issue 32, rows 2 and 9).

The attack of row 2 as it happens: ``--scheduler local:2`` started by one user, and a second
local user (``nobody``, in a process of its own) connecting to every port the cluster listens
on with ``distributed.Client`` and Dask's own RPC, over TCP and over TLS with credentials of its
own, and asking each port for an HTTP page. Nothing may answer, nothing may run, and the only
listening sockets are the cluster's TLS ones. And the files of such a cluster: the second user
makes Dask's fixed-name ``$TMPDIR/dask-scratch-space`` first, its locks links to the owner's
files; nothing of the owner's or of theirs may change, the cluster keeping its files in a
folder of its own."""

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from users import as_attacker, as_nobody, need_a_second_user, remove, shared_folder

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install 'ldacli[dask]'")
pytestmark = pytest.mark.dask   # real local clusters, entered by another user

# The attacker: for every port, try Dask's RPC (identity) and a Client that would run code in
# the scheduler and the workers; over plain TCP and over TLS with its own credentials; then ask
# for an HTTP page. Prints what each attempt got.
ATTACKER = r"""
import asyncio, json, os, signal, socket, sys
import distributed
from distributed.core import rpc
from distributed.security import Security

ports, marker = json.loads(sys.argv[1]), sys.argv[2]
own = Security.temporary()
out = {"uid": os.getuid(), "ports": {}}

class Hung(Exception):
    pass

def hang_up(*_):
    raise Hung()

signal.signal(signal.SIGALRM, hang_up)

def attempt(what):
    signal.alarm(20)
    try:
        return what()
    except Hung:
        return "no answer: hung"
    except Exception as exc:
        return "refused: " + type(exc).__name__
    finally:
        signal.alarm(0)

def write_marker(path=marker):
    open(path, "w").write("ran as %d" % os.getuid())

async def identity(address, security):
    r = rpc(address, connection_args=security.get_connection_args("client") if security else {}, timeout=5)
    try:
        return await asyncio.wait_for(r.identity(), 10)
    finally:
        await r.close_rpc()

def run_code(address, security):
    with distributed.Client(address, timeout=5, security=security) as client:
        client.run_on_scheduler(write_marker)
        client.run(write_marker)
    return "ran code"

def http_page(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /info/main/workers.html HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        return s.recv(64).decode("latin-1")

for port in ports:
    got = out["ports"][str(port)] = {}
    for scheme, security in (("tcp", None), ("tls", own)):
        address = f"{scheme}://127.0.0.1:{port}"
        got[scheme + " rpc"] = attempt(lambda: "answered: " + str(asyncio.run(identity(address, security))["type"]))
        got[scheme + " client"] = attempt(lambda: run_code(address, security))
    got["http"] = attempt(lambda: http_page(port))
print(json.dumps(out))
"""


def nobodys_python(env: dict) -> str | None:
    """A Python of this version that the user nobody can run and that imports Dask from this
    environment (``env``'s PYTHONPATH): this one, or the system's when this one's folder is
    private (a pyenv under /root); None when there is none."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")):
        if not candidate:
            continue
        try:
            ok = subprocess.run([candidate, "-c", "import distributed"], preexec_fn=as_nobody(), env=env, cwd="/",
                                capture_output=True, timeout=120).returncode == 0
        except OSError:
            ok = False
        if ok:
            return candidate
    return None


def listening_ports(pid: int) -> dict[int, int]:
    """Port -> pid of every listening inet socket of ``pid`` and its descendants."""
    import psutil

    proc = psutil.Process(pid)
    found = {}
    for p in [proc] + proc.children(recursive=True):
        for conn in p.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                found[conn.laddr.port] = p.pid
    return found


@pytest.mark.dask
@pytest.mark.slow
def test_another_local_user_cannot_enter_a_local_cluster_and_no_http_server_listens(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the attacker runs as the user nobody, which needs the tests to run as root")
    from ldacli.cluster.connection import cluster

    env = {**os.environ, "HOME": "/tmp", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    python = nobodys_python(env)
    if python is None:
        pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} that the user nobody can run "
                    f"imports Dask from this environment")
    marker = tmp_path / "pwned"  # where code the attacker got to run would write
    os.chmod(tmp_path, 0o777)  # so that code run as nobody could write it too: only a refusal stops it
    with cluster("local:2") as client:  # as --scheduler local:2 starts it
        ports = listening_ports(os.getpid())
        comms = {client.scheduler.address} | set(client.scheduler_info()["workers"]) | \
            {nanny.address for nanny in client.cluster.workers.values()}
        r = subprocess.run([python, "-c", ATTACKER, json.dumps(sorted(ports)), str(marker)],
                           capture_output=True, text=True, timeout=600, preexec_fn=as_nobody(), env=env,
                           cwd="/")
        assert r.returncode == 0, r.stderr
        seen = json.loads(r.stdout.strip().splitlines()[-1])
        assert client.submit(lambda x: x + 1, 1).result() == 2  # the owner's cluster works
    assert seen["uid"] == pwd.getpwnam("nobody").pw_uid
    # nothing the attacker tried answered it or ran its code, and no port served it a page
    entered = {f"{port} {attempt}": result for port, got in seen["ports"].items() for attempt, result in got.items()
               if attempt != "http" and not result.startswith(("refused", "no answer"))}
    assert entered == {} and not marker.exists()
    assert {port: got["http"] for port, got in seen["ports"].items() if got["http"].startswith("HTTP")} == {}
    # the only listening sockets are the cluster's comms, every one TLS: the scheduler, two
    # nannies and two workers; no HTTP server
    assert len(comms) == 5 and all(a.startswith("tls://127.0.0.1:") for a in comms), comms
    assert sorted(ports) == sorted(int(a.rsplit(":", 1)[1]) for a in comms), (ports, comms)


# The second user, first in a shared $TMPDIR: Dask's fixed-name folder, open to all as Dask
# would want it, its two lock files links to the owner's files, and a worker's folder of theirs.
PLANT_SCRATCH = r"""
import os, sys
tmp, first, second = sys.argv[1:]
scratch = os.path.join(tmp, "dask-scratch-space")
os.mkdir(scratch)
os.chmod(scratch, 0o777)
os.symlink(first, os.path.join(scratch, "global.lock"))
os.symlink(second, os.path.join(scratch, "purge.lock"))
os.mkdir(os.path.join(scratch, "worker-planted"))
open(os.path.join(scratch, "worker-planted", "spilled"), "wb").write(b"not the owner's")
"""


def tree(folder: str) -> dict:
    """Every entry under ``folder`` (links not followed): its owner, mode, size, inode, times of
    change and where a link points."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            found[os.path.relpath(path, folder)] = (st.st_uid, st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns,
                                                    st.st_ctime_ns, os.readlink(path) if os.path.islink(path) else None)
    return found


@pytest.mark.dask
@pytest.mark.slow
def test_a_local_cluster_keeps_its_files_in_a_folder_of_its_own_not_in_a_dask_scratch_space_another_user_made(
        tmp_path, small_ldac):
    need_a_second_user()
    mine = [tmp_path / "thesis.tex", tmp_path / "notes.txt"]  # the owner's, in a folder only the owner enters
    for path in mine:
        path.write_text(f"the owner's {path.name}\n")
    kept = [(path.read_bytes(), os.stat(path).st_mtime_ns) for path in mine]
    shared = shared_folder()
    try:
        os.chmod(shared, 0o1777)  # a $TMPDIR as /tmp is: sticky, everyone's
        planted = as_attacker(PLANT_SCRATCH, shared, *mine)
        assert planted.returncode == 0, planted.stderr
        theirs = tree(shared)
        assert theirs["dask-scratch-space"][0] == pwd.getpwnam("nobody").pw_uid
        with open(tmp_path / "stderr", "w+") as err:
            run = subprocess.Popen([sys.executable, "-m", "ldacli", "train", small_ldac, "-k", "3", "--iterations", "3",
                                    "--seed", "1", "--scheduler", "local:2", "-q", "-o", str(tmp_path / "m.npz")],
                                   stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "TMPDIR": shared})
            own, inside, deadline = {}, set(), time.monotonic() + 300
            while run.poll() is None and time.monotonic() < deadline:  # the cluster's folder, while it runs
                for name in os.listdir(shared):
                    if name.startswith("ldacli-cluster-"):
                        try:
                            own.setdefault(name, os.lstat(os.path.join(shared, name)))
                            inside |= set(os.listdir(os.path.join(shared, name, "dask-scratch-space")))
                        except FileNotFoundError:
                            pass
                time.sleep(0.02)
            if run.poll() is None:
                run.kill()
            run.wait()
            err.seek(0)
            stderr = err.read()
        # the owner's files are as they were, and nothing of the other user's was made or changed
        assert [(path.read_bytes(), os.stat(path).st_mtime_ns) for path in mine] == kept
        assert tree(shared) == theirs
        # the cluster kept its files (the scheduler's and the workers' folders, Dask naming them after
        # their classes) in a folder of its own in $TMPDIR, private, which is gone once the run is over
        [st] = own.values()
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
        assert {n.split("-")[0] for n in inside} >= {"ownscheduler", "ownworker"}, inside
        assert os.listdir(shared) == ["dask-scratch-space"]
        assert run.returncode == 0, stderr
        assert ldacli.load_model(str(tmp_path / "m.npz")).phi.shape[0] == 3
    finally:
        remove(shared)


def test_the_scheduler_option_takes_tcp_tls_and_local_and_refuses_the_rest_in_one_line(tmp_path, small_ldac):
    def train(*args):
        r = CliRunner().invoke(main, ["train", small_ldac, "-k", "3", "--iterations", "2", "-q", "-o",
                                      str(tmp_path / "m.npz"), *map(str, args)])
        return r.exit_code, r.stderr

    for bad in ("file:///etc/passwd", "http://host:8786", "inproc://x", "tcp://", "tcp://host:99999", "host:8786",
                "local:0", "local:x", "local:", "tcp://h o:1"):
        code, err = train("--scheduler", bad)
        assert code == 2, (bad, err)
        assert len(err.splitlines()) == 1 and err.startswith("Error: --scheduler must be "), err
    code, err = train("--scheduler", "tls://127.0.0.1:8786")
    assert code == 1 and err == (
        "Error: scheduler: tls://127.0.0.1:8786 needs TLS credentials: give --tls-ca-file and --tls-cert (and "
        "--tls-key unless the certificate holds it), or set distributed.comm.tls.ca-file and "
        "distributed.comm.tls.client.cert (and .key) in Dask's configuration\n")
    code, err = train("--scheduler", "tls://127.0.0.1:8786", "--tls-ca-file", tmp_path / "ca.pem", "--tls-cert",
                      tmp_path / "cert.pem")
    assert code == 1 and err == f"Error: {tmp_path / 'ca.pem'}: cannot read the TLS certificate authority for " \
                                "tls://127.0.0.1:8786: No such file or directory\n"
    code, err = train("--scheduler", "tcp://127.0.0.1:8786", "--tls-cert", tmp_path / "cert.pem")
    assert code == 2 and err.startswith("Error: --tls-cert applies with a tls:// scheduler only")
    code, err = train("--tls-key", tmp_path / "key.pem")
    assert code == 2 and err.startswith("Error: --tls-key applies with a tls:// scheduler only")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.dask
@pytest.mark.slow
def test_a_tls_scheduler_is_reached_with_the_credentials_given(tmp_path, small_ldac):
    """A TLS scheduler and worker of Dask's own, started with a certificate made here: train
    reaches them with --tls-ca-file/--tls-cert/--tls-key (and through Dask's configuration), and
    gives the bytes of local threads; without a certificate the scheduler refuses."""
    pytest.importorskip("cryptography", reason="the dask extra installs cryptography")
    from distributed.security import Security

    import ldacli

    sec = Security.temporary()
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text(sec.tls_scheduler_cert)
    key.write_text(sec.tls_scheduler_key)
    os.chmod(key, 0o600)
    tls = ["--tls-ca-file", cert, "--tls-cert", cert, "--tls-key", key]
    scheduler_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file), "--protocol",
                               "tls", *map(str, tls)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        import time

        for _ in range(600):
            if scheduler_file.exists() and scheduler_file.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tls://")
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                       "--no-dashboard", "--host", "127.0.0.1", *map(str, tls)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        args = ["-k", 3, "--iterations", 3, "--seed", 1, "--shards", 2, "-q"]
        cli = CliRunner()
        r = cli.invoke(main, ["train", small_ldac, *map(str, args), "-o", str(tmp_path / "threads.npz")])
        assert r.exit_code == 0, r.stderr
        r = cli.invoke(main, ["train", small_ldac, *map(str, args), "--scheduler", address, *map(str, tls), "-o",
                              str(tmp_path / "tls.npz")])
        assert r.exit_code == 0, r.stderr
        a, b = ldacli.load_model(str(tmp_path / "threads.npz")), ldacli.load_model(str(tmp_path / "tls.npz"))
        assert a.phi.tobytes() == b.phi.tobytes()
        # the same credentials from Dask's configuration, as DASK_DISTRIBUTED__COMM__TLS__... set them
        env = {**os.environ, "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(cert),
               "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cert), "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key)}
        r = subprocess.run([sys.executable, "-m", "ldacli", "train", small_ldac, *map(str, args), "--scheduler", address,
                            "-o", str(tmp_path / "config.npz")], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert ldacli.load_model(str(tmp_path / "config.npz")).phi.tobytes() == a.phi.tobytes()
        # credentials the scheduler did not sign: refused in one line
        other = Security.temporary()
        (tmp_path / "other.pem").write_text(other.tls_client_cert + other.tls_client_key)
        r = cli.invoke(main, ["train", small_ldac, *map(str, args), "--scheduler", address, "--tls-ca-file",
                              str(tmp_path / "other.pem"), "--tls-cert", str(tmp_path / "other.pem"), "-o",
                              str(tmp_path / "no.npz")])
        assert r.exit_code == 1 and r.stderr.startswith(f"Error: scheduler: cannot reach {address} (")
        assert len(r.stderr.splitlines()) == 1
    finally:
        for p in procs:
            p.kill()
            p.wait()
