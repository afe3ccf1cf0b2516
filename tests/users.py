"""A second local user for the tests of attacks that need one (issue 32): the attacker's side
runs as ``nobody`` in a process of its own (the tests run as root), in a folder both can
write, as a group folder or a lab server's scratch space is."""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile

import pytest


def as_nobody():
    """preexec_fn for a child run as the user nobody (the tests run as root)."""
    user = pwd.getpwnam("nobody")

    def switch():
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    return switch


def need_a_second_user() -> None:
    """Skip, saying why, where no process can be run as another user."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to run the attacker's side as the user nobody")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody on this machine")


def shared_folder():
    """A new folder under the system's temporary folder that every user can write, without the
    sticky bit (a group folder: anyone may rename anyone's files in it); removed by the caller."""
    folder = tempfile.mkdtemp(prefix="ldacli-shared-", dir="/tmp" if os.path.isdir("/tmp") else None)
    os.chmod(folder, 0o777)
    return folder


def as_attacker(script: str, *args, wait: bool = True, timeout: float = 60):
    """Run the Python ``script`` (standard library only) as nobody; returns the finished process
    (``wait``) or the running one (its stdout a pipe)."""
    python = next((p for p in ("/usr/bin/python3", sys.executable) if p and os.path.exists(p)), sys.executable)
    cmd = [python, "-c", script, *map(str, args)]
    if wait:
        return subprocess.run(cmd, preexec_fn=as_nobody(), cwd="/", capture_output=True, text=True, timeout=timeout)
    return subprocess.Popen(cmd, preexec_fn=as_nobody(), cwd="/", stdout=subprocess.PIPE, stdin=subprocess.PIPE,
                            text=True)


def remove(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
