"""Files received from someone else (issue 32, rows 3, 6 and 10): a checkpoint, a model, a
corpus sent by another person is data. It names no path that ldacli writes, decompresses to no
more than it says and no more than memory holds, and a doctored one is refused in one line."""

import json
import os
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.npz import write_npz


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_received_checkpoint_writes_where_the_command_line_says_not_where_it_says(tmp_path, small_ldac):
    sender = tmp_path / "sender"
    sender.mkdir()
    r = run("train", small_ldac, "-k", 3, "--iterations", 4, "--seed", 1, "--checkpoint", sender / "c.npz",
            "-q", "-o", sender / "m.npz")
    assert r.exit_code == 0 and (sender / "c.npz").exists(), r.stderr
    # what the sender's checkpoint records as its path is a file of ours, which it must not touch
    ours = tmp_path / "ours.npz"
    ckpt = ldacli.Checkpoint.load(str(sender / "c.npz"))
    ckpt.params["checkpoint"] = str(ours)
    ckpt.save(str(tmp_path / "received.npz"))
    ours.write_bytes(b"my own file")
    r = run("train", small_ldac, "--resume", tmp_path / "received.npz", "--iterations", 8, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    assert ours.read_bytes() == b"my own file" and str(ours) not in r.stderr
    assert ldacli.Checkpoint.load(str(tmp_path / "received.npz")).iteration == 8  # --resume X writes X
    # and --checkpoint, when given, wins
    ckpt.save(str(tmp_path / "received2.npz"))
    r = run("train", small_ldac, "--resume", tmp_path / "received2.npz", "--iterations", 8, "--checkpoint",
            tmp_path / "mine.npz", "-o", tmp_path / "m2.npz")
    assert r.exit_code == 0, r.stderr
    assert ldacli.Checkpoint.load(str(tmp_path / "mine.npz")).iteration == 8 and ours.read_bytes() == b"my own file"
