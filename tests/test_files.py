"""Model, checkpoint and inference files are validated when they are loaded, for every command:
a damaged or doctored file is one clear error (exit 1) naming the file, never a traceback, a
huge allocation, silent nonsense or advice to allow pickles."""

import mmap
import os
import struct
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.errors import InputError
from ldacli.files import fileio
from ldacli.files.npz import BLOCK_BYTES, blocks, let_go, mapped, write_npz


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory, planted):
    # m.npz holds phi and theta (a model of uncollapsed Gibbs sampling, as every model of format
    # 2 did); a collapsed Gibbs model holds counts instead, checked in test_received_files.py
    folder = tmp_path_factory.mktemp("files")
    ldacli.train(planted.corpus, 3, iterations=4, seed=1, checkpoint=str(folder / "c.npz"))
    ldacli.train(planted.corpus, 3, iterations=4, seed=1, method="gibbs").save(str(folder / "m.npz"))
    result, _ = ldacli.infer(ldacli.load_model(str(folder / "m.npz")), planted.corpus, iterations=4, burn_in=1, seed=1)
    result.save(str(folder / "i.npz"))
    return folder


def doctored(files, tmp_path, name, **changes):
    """A copy of ``files/name`` with arrays replaced (None removes one)."""
    with np.load(files / name, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    for key, value in changes.items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    path = tmp_path / name
    write_npz(str(path), arrays)
    return str(path)


def load(path):
    name = os.path.basename(path)
    return {"m.npz": ldacli.load_model, "c.npz": ldacli.Checkpoint.load, "i.npz": ldacli.Inference.load}[name](path)


P = '{"method": "cgs", "n_topics": 3, "iterations": 4}'


@pytest.mark.parametrize("name, changes, message", [
    ("m.npz", {"beta": np.array([0.1, 0.2])}, "expected 'beta' as a number, found float64 of shape (2,)"),
    ("m.npz", {"format_version": np.str_("2")}, "expected 'format_version' as an integer"),
    ("m.npz", {"params": np.str_("[1, 2]")}, "expected a JSON object in 'params', found list"),
    ("m.npz", {"phi": np.zeros((0, 50)), "alpha": np.zeros(0)}, "at least one topic"),
    ("m.npz", {"phi": np.full((3, 50), "x")}, "expected 'phi' as numbers, found <U1"),
    ("m.npz", {"phi": np.full((3, 50), np.nan)}, "expected finite numbers in 'phi'"),
    ("m.npz", {"phi": np.full((3, 50), 0.5)}, "each row of 'phi' to sum to 1"),
    ("m.npz", {"alpha": np.array([0.1, -0.1, 0.1])}, "expected 'alpha' > 0, found -0.1"),
    ("m.npz", {"theta": np.ones((200, 4)) / 4}, "expected 'theta' of shape (any, 3), found shape (200, 4)"),
    ("m.npz", {"vocab": np.arange(50)}, "expected 'vocab' as text"),
    ("m.npz", {"vocab": None}, "expected an array 'vocab', found none"),
    ("m.npz", {"kind": np.str_("checkpoint")}, "expected an ldacli model, found a checkpoint"),
    ("c.npz", {"iteration": np.int64(-5)}, "expected 'iteration' between 0 and the 4 iterations of the run, found -5"),
    ("c.npz", {"iteration": np.int64(7)}, "found 7"),
    ("c.npz", {"rng_states": np.str_("{}")}, "expected a JSON list in 'rng_states'"),
    ("c.npz", {"alpha": np.ones(4)}, "one value per topic"),
    ("c.npz", {"beta": np.float64(np.inf)}, "expected 'beta' as a finite number >= 0"),
    ("i.npz", {"theta": -np.ones((200, 3))}, "expected 'theta' >= 0"),
    ("i.npz", {"doc_ids": np.array(["a"])}, "expected 'doc_ids' of shape (200,)"),
])
def test_doctored_files_are_refused_with_what_is_wrong(files, tmp_path, name, changes, message):
    path = doctored(files, tmp_path, name, **changes)
    with pytest.raises(InputError, match=None) as e:
        load(path)
    assert message in str(e.value) and str(e.value).startswith(path)


def test_commands_report_a_doctored_model_in_one_line(files, tmp_path, small_ldac):
    path = doctored(files, tmp_path, "m.npz", phi=np.full((3, 50), np.nan))
    for args in (["topics", path], ["info", path], ["perplexity", path, small_ldac], ["infer", path, small_ldac, "-o", tmp_path / "t.tsv"]):
        r = run(*args)
        assert r.exit_code == 1 and "finite numbers in 'phi'" in r.stderr and "Traceback" not in r.stderr, args
    assert not (tmp_path / "t.tsv").exists()


def test_a_checkpoint_of_an_unknown_method_or_sampler_is_refused(files, tmp_path, planted):
    ckpt = ldacli.Checkpoint.load(str(files / "c.npz"))
    for key, value, message in (("method", "bogus", "expected a checkpoint of method cgs, vem, gibbs, found 'bogus'"),
                                ("sampler", "bogus", "sampler must be one of")):
        ckpt.params = {**ldacli.Checkpoint.load(str(files / "c.npz")).params, key: value}
        ckpt.save(str(tmp_path / "x.npz"))
        with pytest.raises(ldacli.LdacliError, match=message):
            ldacli.train(planted.corpus, iterations=6, resume=str(tmp_path / "x.npz"))


def test_a_header_declaring_more_than_the_file_holds_is_refused_before_allocating(files, tmp_path):
    """An npy header may declare 10^11 elements: refused from the header, nothing allocated."""
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 1000000), }"
    header += b" " * (118 - len(header)) + b"\n"  # padded to 128 bytes with the magic, as numpy does
    raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + np.zeros(150).tobytes()
    path = tmp_path / "m.npz"
    with zipfile.ZipFile(files / "m.npz") as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, raw if info.filename == "phi.npy" else src.read(info))
    r = run("topics", path)
    assert r.exit_code == 1 and "damaged: array 'phi' declares shape (100000, 1000000)" in r.stderr


def test_damaged_archives_are_reported_as_damaged(files, tmp_path):
    data = (files / "m.npz").read_bytes()
    (tmp_path / "truncated.npz").write_bytes(data[: len(data) // 2])
    flipped = bytearray(data)
    at = data.index(b"phi.npy") + 400  # inside phi's data
    flipped[at] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(flipped))
    (tmp_path / "text.npz").write_text("not an archive")
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, phi=np.array([{"a": 1}], dtype=object))
    for name, message in (("truncated.npz", "truncated or damaged"), ("flipped.npz", "checksum does not match"),
                          ("text.npz", "expected an ldacli model (.npz)"),
                          ("pickled.npz", "an array of Python objects, which ldacli never loads")):
        r = run("topics", tmp_path / name)
        assert r.exit_code == 1 and message in r.stderr, (name, r.stderr)
        assert "allow_pickle" not in r.stderr and "Traceback" not in r.stderr


def test_a_file_is_hashed_again_whenever_it_may_have_changed(tmp_path, monkeypatch):
    # an update checks at its end that its model's file is the one it began from: a digest kept
    # from the start must never hide bytes changed since (in place, the same size; or replaced)
    path = tmp_path / "model.npz"
    path.write_bytes(b"a" * 1000)
    first = fileio.file_sha256(str(path))
    path.write_bytes(b"b" * 1000)  # (within the clock's step, perhaps: too fresh to be kept)
    assert fileio.file_sha256(str(path)) != first
    monkeypatch.setattr(fileio, "_SETTLED_NS", -10 ** 12)  # (as if written long ago: kept)
    second = fileio.file_sha256(str(path))
    assert second in fileio._HASHED.values()
    reads, sha256 = [], fileio.hashlib.sha256
    monkeypatch.setattr(fileio.hashlib, "sha256", lambda: reads.append(1) or sha256())
    assert fileio.file_sha256(str(path)) == second and not reads  # (unchanged: not read again)
    os.utime(path, ns=(10 ** 18, 10 ** 18))  # another modification time: read again
    assert fileio.file_sha256(str(path)) == second and reads
    replaced = tmp_path / "other.npz"
    replaced.write_bytes(b"c" * 1000)
    os.replace(replaced, path)  # an atomic replace, as a run writes a model: another file
    assert fileio.file_sha256(str(path)) != second


def _mapped_kb() -> int:
    """This process's resident pages of mapped files (kB)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssFile:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or not hasattr(mmap, "MADV_DONTNEED"),
                    reason="needs Linux's /proc/self/status and madvise(MADV_DONTNEED)")
def test_an_array_mapped_from_its_file_and_read_in_blocks_is_not_held_by_the_process(tmp_path):
    # an update reads its model's documents once, through a map, into the model it writes: read
    # in blocks, the process lets each block's pages go (64 MB here, more at 100 M tokens)
    path = str(tmp_path / "a.npz")
    whole = np.arange(8 << 20, dtype=np.int64)
    write_npz(path, {"a": whole})
    held = mapped(path, ("a",))["a"]
    before = _mapped_kb()
    assert sum(int(block.sum()) for block in blocks(held)) == int(whole.sum())
    after_blocks = _mapped_kb()
    assert after_blocks - before < (BLOCK_BYTES >> 10) + 64
    assert int(np.asarray(held).sum()) == int(whole.sum())  # read whole through the map: all of it held
    assert _mapped_kb() - after_blocks > 60 << 10
    # a map written to is left alone: its pages, let go, would lose what was written
    changed = np.memmap(tmp_path / "b.bin", dtype=np.int64, mode="w+", shape=(1 << 20,))
    changed.flush()
    copy = np.memmap(tmp_path / "b.bin", dtype=np.int64, mode="c", shape=(1 << 20,))
    copy[:] = 7
    let_go(copy)
    assert bool(np.all(copy == 7))
