"""Training from disk: a shard folder whose run does not fit under the memory limit streams its
tokens through each sweep, to the bytes the same run gives in memory."""

import os
import shlex
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.corpora.formats.shards import open_shard_folder
from ldacli.corpora.synthetic import generate
from ldacli.methods.driver import memory_needed


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A shard folder of 4 shards: 300 documents of about 80 tokens over 400 words."""
    corpus = generate(300, 8, 400, doc_length=80, alpha=0.2, seed=11).corpus
    where = tmp_path_factory.mktemp("disk")
    ldacli.write_corpus(corpus, str(where / "c.ldac"), str(where / "c.vocab"), format="ldac")
    assert cli("convert", where / "c.ldac", "--shards", 4, "-o", where / "shards", "-q").exit_code == 0
    return str(where / "shards")


def read_bytes(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("settings", [
    {"n_topics": 12, "iterations": 12},
    # learned priors and averaged snapshots
    {"n_topics": 30, "iterations": 20, "optimize_interval": 5, "optimize_burn_in": 5, "snapshots": 4},
    # the restricted start of K >= 1000
    {"n_topics": 1000, "iterations": 3},
])
def test_a_run_from_disk_gives_the_bytes_of_the_run_in_memory(folder, tmp_path, threads, settings):
    ldacli.train(folder, seed=5, threads=1, output=tmp_path / "memory.npz", **settings)
    ldacli.train(open_shard_folder(folder), seed=5, threads=threads, output=tmp_path / "disk.npz", **settings)
    assert read_bytes(tmp_path / "disk.npz") == read_bytes(tmp_path / "memory.npz")


@pytest.mark.parametrize("first, then", [("disk", "disk"), ("disk", "memory"), ("memory", "disk")])
def test_a_run_from_disk_resumes_from_disk_or_in_memory_to_the_same_bytes(folder, tmp_path, first, then):
    kw = {"n_topics": 20, "seed": 2, "threads": 1, "snapshots": 3, "optimize_interval": 4}
    ldacli.train(folder, iterations=16, output=tmp_path / "whole.npz", **kw)
    source = {"disk": lambda: open_shard_folder(folder), "memory": lambda: folder}
    ldacli.train(source[first](), iterations=7, checkpoint=tmp_path / "ckpt.npz", output=tmp_path / "part.npz", **kw)
    ldacli.train(source[then](), iterations=16, resume=tmp_path / "ckpt.npz", output=tmp_path / "resumed.npz")
    assert read_bytes(tmp_path / "resumed.npz") == read_bytes(tmp_path / "whole.npz")


def test_a_shard_folder_read_with_a_vocabulary_rule_resumes_as_its_run_read_it(folder, tmp_path):
    # a path read as the checkpoint's run read it (whole, its 100 most frequent words), by the
    # library as by the command (ldacli.train settled it on the folder's index, whose vocabulary
    # is the checkpoint's no more, and refused it)
    kw = {"n_topics": 6, "seed": 3, "threads": 1, "max_vocab": 100}
    ldacli.train(folder, iterations=6, output=tmp_path / "whole.npz", **kw)
    ldacli.train(folder, iterations=3, checkpoint=tmp_path / "c.npz", **kw)
    ldacli.train(folder, iterations=6, resume=tmp_path / "c.npz", output=tmp_path / "resumed.npz")
    assert read_bytes(tmp_path / "resumed.npz") == read_bytes(tmp_path / "whole.npz")
    done = cli("train", folder, "--resume", tmp_path / "c.npz", "--iterations", 6, "-o", tmp_path / "command.npz")
    assert done.exit_code == 0, done.output
    assert read_bytes(tmp_path / "command.npz") == read_bytes(tmp_path / "whole.npz")


def limits(folder, **given):
    """The estimates of a run on the folder from disk and read whole."""
    return (memory_needed(open_shard_folder(folder), **given),
            memory_needed(ldacli.read_corpus(folder), **given))


def test_the_command_trains_from_disk_when_the_run_in_memory_exceeds_the_limit(folder, tmp_path):
    disk, memory = limits(folder, n_topics=15)
    assert disk < memory
    base = ["train", folder, "-k", 15, "--iterations", 8, "--seed", 4]
    done = cli(*base, "-o", tmp_path / "memory.npz")
    assert done.exit_code == 0 and "trained from disk" not in done.output
    done = cli(*base, "--memory-limit", int((disk + memory) / 2), "-o", tmp_path / "disk.npz")
    assert done.exit_code == 0, done.output
    assert "trained from disk" in done.output
    assert read_bytes(tmp_path / "disk.npz") == read_bytes(tmp_path / "memory.npz")


def test_a_limit_below_what_the_counts_need_is_refused_in_one_line_naming_one_that_works(folder, tmp_path):
    disk, _ = limits(folder, n_topics=15)
    done = cli("train", folder, "-k", 15, "--memory-limit", int(disk / 2), "-q", "-o", tmp_path / "m.npz")
    assert done.exit_code == 1
    message = done.output.strip()
    assert "\n" not in message and "Traceback" not in message
    assert "from disk" in message and "give --memory-limit" in message
    least = message.split("give --memory-limit ")[1].split()[0]
    assert not os.path.exists(tmp_path / "m.npz")
    # the limit it names is enough
    again = cli("train", folder, "-k", 15, "--iterations", 2, "--memory-limit", least, "-o", tmp_path / "m.npz")
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize("value", ["lots", "-1G", "0", "1.5Q"])
def test_a_memory_limit_that_is_not_a_size_is_a_usage_error(folder, tmp_path, value):
    done = cli("train", folder, "--memory-limit", value, "-o", tmp_path / "m.npz")
    assert done.exit_code == 2 and "memory_limit must be a size" in done.output.replace("-", "_")


def test_another_sampler_than_sparse_is_refused_from_disk(folder, tmp_path):
    with pytest.raises(ldacli.SettingError, match="sparse sampler"):
        ldacli.train(open_shard_folder(folder), n_topics=5, sampler="dense", output=tmp_path / "m.npz")
    assert not os.path.exists(tmp_path / "m.npz")


def scratch_of_a_run(folder, tmp_path, **settings) -> tuple[int, dict[str, int], list[str]]:
    """A run from disk with its scratch folder in ``tmp_path``: the mode of the folder it made
    there and its files' sizes, seen after the first sweep, and what the scratch folder holds
    after the run."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    seen = []

    def look(iteration):
        if not seen:
            (inside,) = os.listdir(scratch)
            seen.append((stat.S_IMODE(os.stat(scratch / inside).st_mode),
                         {f: os.path.getsize(scratch / inside / f) for f in os.listdir(scratch / inside)}))

    ldacli.train(open_shard_folder(folder), n_topics=10, scratch=scratch, callback=look, output=tmp_path / "m.npz",
                 **settings)
    return *seen[0], os.listdir(scratch)


def test_the_blocks_live_in_a_private_folder_inside_scratch_removed_at_the_end(folder, tmp_path):
    mode, files, left = scratch_of_a_run(folder, tmp_path, iterations=2)
    assert mode == 0o700
    assert sorted(files) == [f"blocks-{s:05d}.bin" for s in range(4)]
    assert left == []


def test_the_blocks_hold_each_token_once_with_its_topic(folder, tmp_path):
    # 8 bytes a token (word, topic) and 8 bytes a document and slice: what the docs promise
    _, files, _ = scratch_of_a_run(folder, tmp_path, iterations=1)
    f = open_shard_folder(folder)
    assert sum(files.values()) == 8 * f.n_tokens + 8 * f.n_docs * f.n_shards
    assert np.isfinite(ldacli.Model.load(tmp_path / "m.npz").phi).all()


@pytest.mark.slow
@pytest.mark.signals
def test_a_run_from_disk_stopped_by_sigterm_continues_with_the_command_it_printed(folder, tmp_path):
    # A real process from disk, stopped by a real SIGTERM mid-run; the command it printed, run as
    # a user would copy it, gives the bytes of the run never stopped (in memory), and no block
    # files are left behind in the scratch folder.
    disk, memory = limits(folder, n_topics=12)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    common = ["train", folder, "-k", 12, "--seed", 3, "--iterations", 600]
    straight = subprocess.run([sys.executable, "-m", "ldacli", *map(str, common), "-o", "straight.npz", "-q"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert straight.returncode == 0, straight.stderr
    proc = subprocess.Popen([sys.executable, "-m", "ldacli", *map(str, common), "--memory-limit",
                             str(int((disk + memory) / 2)), "--scratch", str(scratch), "--checkpoint", "c.npz",
                             "--checkpoint-every", "7", "-o", "m.npz"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "c.npz").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "trained from disk" in stderr and "Traceback" not in stderr
    assert os.listdir(scratch) == []
    last = stderr.strip().splitlines()[-1]
    command = shlex.split(last.split("; continue with: ")[1])
    assert command[:2] == ["ldacli", "train"] and 7 <= ldacli.Checkpoint.load(str(tmp_path / "c.npz")).iteration < 600
    resumed = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert (tmp_path / "m.npz").read_bytes() == (tmp_path / "straight.npz").read_bytes()


def test_a_scratch_folder_held_in_memory_is_warned_of(folder, tmp_path, caplog):
    with open("/proc/mounts") as f:
        if not any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in f):
            pytest.skip("no tmpfs at /dev/shm here")
    with caplog.at_level("WARNING", logger="ldacli"):
        ldacli.train(open_shard_folder(folder), n_topics=12, iterations=1, scratch="/dev/shm",
                     output=tmp_path / "m.npz")
    assert any("held in memory (tmpfs)" in r.getMessage() and "--scratch" in r.getMessage() for r in caplog.records)


def test_a_checkpoint_of_a_run_from_disk_keeps_its_shard_files_beside_it(folder, tmp_path):
    # not beside the shard folder, which may be read-only or shared with other users
    ldacli.train(open_shard_folder(folder), n_topics=12, iterations=3, checkpoint=tmp_path / "ck.npz",
                 output=tmp_path / "m.npz")
    (inside,) = os.listdir(tmp_path / "ck.checkpoints")
    assert sorted(f.split("-sweep-")[0] for f in os.listdir(tmp_path / "ck.checkpoints" / inside)) == \
        [f"shard-{s:05d}" for s in range(4)]
    assert not os.path.exists(folder + ".checkpoints")


@pytest.mark.parametrize("threads", [1, 2])
def test_past_2_31_tokens_blocks_sample_against_totals_less_a_base_to_the_bytes_of_the_run_in_memory(
        folder, tmp_path, monkeypatch, threads):
    """A corpus of more than 2^31 - 1 tokens trains from disk as on a cluster: its topic totals
    are 64-bit and each block is given them less a base, which the prior's sums take instead
    (:func:`~ldacli.methods.cgs.sampler.block_totals`). Forced here on the small folder (every
    corpus past the limit, the headroom its largest shard, 3 topics: some topic always holds
    more): no block is given a total past the headroom, and the model is the bytes of the run in
    memory, whose blocks are given the totals whole."""
    from ldacli.methods.cgs import sampler
    from ldacli.methods.cgs.layouts import WordLists

    f = open_shard_folder(folder)
    headroom = max(r.hi - r.lo for r in f.shard_ranges())
    assert f.n_tokens > 3 * headroom
    settings = {"n_topics": 3, "sampler": "sparse", "iterations": 12, "seed": 7, "optimize_interval": 4,
                "optimize_burn_in": 4, "snapshots": 3, "snapshot_interval": 2}
    ldacli.train(folder, threads=1, output=tmp_path / "memory.npz", **settings)
    monkeypatch.setattr(sampler, "NARROW_TOKENS", 0)
    monkeypatch.setattr(sampler, "WIDE_SHARD_TOKENS", headroom)
    given, sweep = [], WordLists.sweep

    def watched(self, shard, part, priors):  # the totals each block starts from
        given.append(int(self.nk.max()))
        sweep(self, shard, part, priors)

    monkeypatch.setattr(WordLists, "sweep", watched)
    ldacli.train(f, threads=threads, output=tmp_path / "disk.npz", **settings)
    assert len(given) == 12 * f.n_shards ** 2 and max(given) == headroom
    assert read_bytes(tmp_path / "disk.npz") == read_bytes(tmp_path / "memory.npz")


def test_past_2_31_tokens_a_shard_past_the_headroom_is_refused_in_one_line_before_anything_is_read(tmp_path):
    """A shard folder of more than 2^32 tokens without two billion tokens on this machine (a few
    documents of large counts on few words, as ``tests/test_dask.py``'s): cut in 2 shards, each
    is past :data:`~ldacli.partition.WIDE_SHARD_TOKENS`, and the engine refuses it, as a
    cluster's does, before a token is read or a block file written; cut in 10, it is not."""
    import scipy.sparse as sp

    from ldacli.corpora.formats.shards import write_shard_folder
    from ldacli.errors import LdacliError
    from ldacli.methods.cgs.disk import DiskSampler
    from ldacli.methods.cgs.sampler import FirstTopics, wide_totals
    from ldacli.partition import WIDE_SHARD_TOKENS

    big = (1 << 28) + 3
    rows = np.array([[big, 5, 0, 1], [0, big, 7, 0], [3, 0, big, 2], [big, 1, 0, 0], [0, 0, 4, big]] * 4)
    for n in (2, 10):
        write_shard_folder(str(tmp_path / f"f{n}"), sp.csr_array(rows.astype(np.int32)), list("abcd"),
                           [f"d{i}" for i in range(20)], n, fingerprint="x", source="made here", format="npz")
    wide = open_shard_folder(str(tmp_path / "f2"))
    assert wide.n_tokens > 2**32 and max(r.hi - r.lo for r in wide.shard_ranges()) > WIDE_SHARD_TOKENS
    (tmp_path / "scratch").mkdir()
    rngs = [np.random.default_rng(s) for s in range(3)]
    with pytest.raises(LdacliError) as refused:
        DiskSampler(wide, 3, np.full(3, 0.1), 0.01, rngs[1:], first=FirstTopics(rngs[0], 4, 3),
                    scratch=str(tmp_path / "scratch"))
    assert str(refused.value) == (f"{wide.path}: a shard of more than {WIDE_SHARD_TOKENS:,} tokens in a corpus of "
                                  f"more than 2,147,483,647: cut the corpus into more shards")
    assert os.listdir(tmp_path / "scratch") == []
    assert wide_totals(open_shard_folder(str(tmp_path / "f10")).shard_ranges()) is True
