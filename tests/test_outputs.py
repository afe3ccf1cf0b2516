"""Outputs under stress: a full disk, a killed run, a second run on the same files, output paths
that would destroy an input. The previous model always survives and nothing is left behind."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import uuid

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.errors import LockedError, OutputError
from ldacli.files.fileio import atomic_write, stale_temporaries
from ldacli.files.locking import EXIT_LOCKED, lock_file, locked


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def tiny_disk(tmp_path):
    """A folder on a 256 KiB tmpfs (skipped where this process may not mount one)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.decode().strip() or 'not permitted'}); "
                    "test_a_file_size_limit_... covers a full disk with RLIMIT_FSIZE instead")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".lock")))


def test_a_full_disk_keeps_the_previous_model_and_leaves_no_temporary_file(tiny_disk, small_ldac):
    previous = tiny_disk / "m.npz"
    previous.write_bytes(b"yesterday's model")
    (tiny_disk / "filler").write_bytes(b"\0" * (240 * 1024))
    # the 16 KB left do not hold the counts of 200 documents x 400 topics (38 KB)
    r = run("train", small_ldac, "-k", 400, "--iterations", 2, "--seed", 1, "-o", previous)
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert f"{previous}: cannot write the model: No space left on device" in r.stderr
    assert previous.read_bytes() == b"yesterday's model"
    assert leftovers(tiny_disk) == []


def test_a_checkpoint_that_cannot_be_written_is_reported_and_the_model_is_still_written(tiny_disk, small_ldac, tmp_path):
    (tiny_disk / "filler").write_bytes(b"\0" * (250 * 1024))  # the disk is full
    ckpt, out = tiny_disk / "c.npz", tmp_path / "m.npz"
    r = run("train", small_ldac, "-k", 5, "--iterations", 6, "--seed", 1, "--checkpoint", ckpt,
            "--checkpoint-every", 2, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert f"{ckpt}: cannot write the checkpoint: No space left on device (at sweep 2; training goes on" in r.stderr
    assert ldacli.load_model(str(out)).params["iterations_done"] == 6
    assert not ckpt.exists() and leftovers(tiny_disk) == []


def test_a_file_size_limit_keeps_the_previous_model_and_leaves_no_temporary_file(tmp_path, small_ldac):
    """The full disk again, where no tmpfs can be mounted: writes beyond RLIMIT_FSIZE fail."""
    previous = tmp_path / "m.npz"
    previous.write_bytes(b"yesterday's model")
    script = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))  # the model's counts take 38 KB
        from ldacli.cli import main
        sys.exit(main(["train", {small_ldac!r}, "-k", "400", "--iterations", "2", "--seed", "1", "-o", {str(previous)!r}]))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{previous}: cannot write the model: File too large" in r.stderr
    assert previous.read_bytes() == b"yesterday's model" and leftovers(tmp_path) == []


def test_atomic_write_names_the_users_file_not_the_temporary_one(tmp_path):
    target = tmp_path / "no-such-folder" / "m.npz"
    with pytest.raises(OutputError) as e:
        with atomic_write(target, what="model") as f:
            f.write(b"x")
    assert str(e.value).startswith(f"{target}: cannot write the model: ") and ".tmp" not in str(e.value)


def test_temporaries_of_killed_runs_are_swept_by_the_next_run_holding_the_lock(tmp_path, small_ldac):
    out = tmp_path / "m.npz"
    stale = [tmp_path / f".m.npz.{uuid.uuid4().hex[:8]}.tmp" for _ in range(3)]
    for p in stale:
        p.write_bytes(b"half a model")
    unrelated = tmp_path / ".other.npz.abcdefgh.tmp"
    unrelated.write_bytes(b"another output's")
    assert stale_temporaries(out) == sorted(str(p) for p in stale)
    r = run("train", small_ldac, "-k", 3, "--iterations", 2, "--seed", 1, "-o", out)
    assert r.exit_code == 0 and r.stderr.count("a temporary file left by a run that was killed") == 3
    assert not any(p.exists() for p in stale) and unrelated.exists()
    assert leftovers(tmp_path) == [unrelated.name]


def _hold(path, seconds):
    """A real process holding the lock on ``path`` for ``seconds``; returns it once it holds it."""
    script = textwrap.dedent(f"""
        import sys, time
        from ldacli.files.locking import locked
        with locked([{str(path)!r}]):
            print("held", flush=True)
            time.sleep({seconds})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_run_on_a_locked_output_exits_75_at_once_or_waits(tmp_path, small_ldac):
    out = tmp_path / "m.npz"
    holder = _hold(out, 60)
    try:
        r = run("train", small_ldac, "-k", 3, "--iterations", 2, "-o", out)
        # refused while the holder still runs and holds the lock: it did not wait for it
        assert r.exit_code == EXIT_LOCKED and holder.poll() is None
        assert f"{out}: another ldacli run (PID {holder.pid}) is writing it" in r.stderr
        assert r.stderr.rstrip().endswith("try again later, or give --wait SECONDS to wait for it")
        assert len(r.stderr.splitlines()) == 1 and not out.exists()
        r = run("train", small_ldac, "-k", 3, "--iterations", 2, "-o", out, "--wait", 0.3)
        assert r.exit_code == EXIT_LOCKED and holder.poll() is None
        # it said that it waited, and for whom, before giving up
        waited, refused = r.stderr.splitlines()
        assert f"{out}: another ldacli run (PID {holder.pid}) holds its lock; waiting up to 0.3 s" in waited
        assert f"another ldacli run (PID {holder.pid}) is writing it" in refused
    finally:
        holder.kill()
        holder.wait()
    # the holder was killed with SIGKILL: nothing it left blocks the next run
    r = run("train", small_ldac, "-k", 3, "--iterations", 2, "-o", out, "--wait", 5)
    assert r.exit_code == 0, r.stderr
    assert not os.path.exists(lock_file(str(out)))


def test_a_checkpoint_is_locked_by_the_library_too(tmp_path, planted):
    ckpt = tmp_path / "c.npz"
    holder = _hold(ckpt, 60)
    try:
        with pytest.raises(LockedError, match="another ldacli run"):
            ldacli.train(planted.corpus, 3, iterations=2, checkpoint=str(ckpt))
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    ldacli.train(planted.corpus, 3, iterations=2, checkpoint=str(ckpt))
    with locked([str(ckpt)]):  # and released: this process takes it again
        pass


@pytest.mark.parametrize("args, option, fragment", [
    (["-o", "{corpus}"], "-o/--output", "is the CORPUS input"),
    (["-o", "{dir}"], "-o/--output", "expected a file name, found the folder"),
    (["-o", "{dir}/missing/m.npz"], "-o/--output", "expected an existing folder"),
    (["-o", "{dir}/m.npz", "--checkpoint", "{corpus}"], "--checkpoint", "is the CORPUS input"),
    (["-o", "{dir}/m.npz", "--checkpoint", "{dir}/m.npz"], "-o/--output", "must be different files"),
    (["-o", "{dir}/c.npz", "--resume", "{dir}/c.npz"], "-o/--output", "is the --resume input: refusing to write over it"),
])
def test_output_paths_are_checked_before_any_work(tmp_path, small_ldac, args, option, fragment):
    (tmp_path / "c.npz").write_bytes(b"a checkpoint")
    before = (tmp_path / "small.ldac").read_bytes()
    r = run("train", small_ldac, "-k", 3, *[a.format(corpus=small_ldac, dir=tmp_path) for a in args])
    assert r.exit_code == 2 and option in r.stderr and fragment in r.stderr, r.stderr
    assert (tmp_path / "small.ldac").read_bytes() == before and (tmp_path / "c.npz").read_bytes() == b"a checkpoint"
    with contextlib.suppress(FileNotFoundError):
        assert leftovers(tmp_path) == []


@pytest.mark.signals
def test_kill_9_at_random_moments_then_resume_gives_the_same_bytes_and_leaves_nothing(tmp_path, small_ldac):
    out, ckpt = tmp_path / "m.npz", tmp_path / "c.npz"
    args = [small_ldac, "-k", "5", "--seed", "4", "--iterations", "6000", "--shards", "2", "-q", "-o", str(out)]
    r = run("train", *args[:-2], "-o", tmp_path / "straight.npz")
    assert r.exit_code == 0, r.stderr
    rng = __import__("random").Random(7)
    kills = 0
    while not out.exists():
        resume = ["--resume", str(ckpt)] if ckpt.exists() else []
        proc = subprocess.Popen([sys.executable, "-m", "ldacli", "train", *args, "--checkpoint", str(ckpt),
                                 "--checkpoint-every", "7", *resume], stderr=subprocess.PIPE, text=True)
        try:
            proc.wait(timeout=rng.uniform(0.7, 1.5) if kills < 5 else 120)
        except subprocess.TimeoutExpired:
            proc.kill()  # SIGKILL, at whatever the process was doing
            kills += 1
        proc.wait()
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.read()
    assert kills == 5
    assert out.read_bytes() == (tmp_path / "straight.npz").read_bytes()
    assert leftovers(tmp_path) == []


def test_a_disk_full_from_the_start_names_the_file_and_leaves_no_lock_file(tiny_disk, small_ldac):
    (tiny_disk / "filler").write_bytes(b"\0" * (256 * 1024))  # as full as it gets
    while True:  # the last blocks too
        try:
            with open(tiny_disk / "filler", "ab") as f:
                f.write(b"\0" * 4096)
        except OSError:
            break
    out = tiny_disk / "m.npz"
    r = run("train", small_ldac, "-k", 3, "--iterations", 2, "--seed", 1, "-q", "-o", out)
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"Error: {out}: cannot write the model: No space left on device"
    assert leftovers(tiny_disk) == [] and not out.exists()
