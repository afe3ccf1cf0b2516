"""Where the bytes of a training process go: its peak RSS at each stage, and the arrays it holds
while sampling, by kind (issue 45, item 1).

Usage::

    python benchmarks/memory_table.py /work/data/zipf20M.npz -k 1000 --iterations 3
    python benchmarks/memory_table.py C.npz -k 1000 --build before=/tmp/main --build after=.
    python benchmarks/memory_table.py C.npz -k 1000 --iterations 12 --snapshot-interval 1

Each build runs ``ldacli train CORPUS -k K --iterations N --seed 1 -q -o MODEL`` in a process of
its own, started afresh, through the command line's own entry (``ldacli.cli.main``, the code
``python -m ldacli train`` runs), with ``--build NAME=ROOT`` the build at the package of ``ROOT``
(built in place; default: this tree's); other options go to ``ldacli train`` as they are
(``--snapshot-interval 1`` above: five snapshots in 12 sweeps, whose sums three sweeps do not
have). The process watches itself: its peak RSS (``VmHWM``, reset between stages) while it
reads the corpus, builds the sampler (the tokens in the sampler's layout), samples, sums the
snapshots and writes the model; and, after the last sweep, the bytes of every array the
sampler and the snapshots hold, and of the count matrices (``scipy.sparse``) still alive, each
counted once (views of one array are one). Memory does not depend on the machine's load, so
one run is enough. Printed as a table per build (MB = 2^20 bytes, as ``peak_memory.py`` prints
them; bytes a token of the corpus beside), with ``--json`` as one JSON line per build.

The stages' peaks reset the kernel's own (``VmHWM``, and with it what ``os.wait4`` reports), so
the whole process's peak is that of a second run of each build, plain ``python -m ldacli train``
watched by nothing but the kernel (``ru_maxrss``), as ``peak_memory.py`` measures it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from trees import package_parent

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# The child: the command line in this process, a few of its steps wrapped to measure them.
CHILD = r'''
import functools, gc, json, sys
import numpy as np
import scipy.sparse as sp

def status(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

held, sizes, where, peaks = {}, {}, {"stage": "starting"}, {}

def enter(stage):
    """Close the current stage (its peak so far) and start ``stage``."""
    now = where["stage"]
    peaks[now] = max(peaks.get(now, 0), status("VmHWM"))
    reset_peak()
    where["stage"] = stage

def staged(owner, name, stage, within=False, after=None):
    """Wrap ``owner.name``: a call begins ``stage``, which goes on after it (``within``: the
    stage it was called in goes on); ``after`` is called after each, in a stage no table shows."""
    fn = getattr(owner, name)
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        before = where["stage"]
        enter(stage)
        try:
            return fn(*args, **kwargs)
        finally:
            if after is not None:
                enter("measuring")
                after(*args)
                enter(stage)
            if within:
                enter(before)
    setattr(owner, name, wrapper)

def root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a

def arrays_of(x, depth=0):
    """The arrays an object holds in its attributes (and in their dataclasses, lists, tuples)."""
    if isinstance(x, np.ndarray):
        yield x
    elif depth < 3 and isinstance(x, (list, tuple)):
        for item in x:
            yield from arrays_of(item, depth + 1)
    elif depth < 3 and hasattr(x, "__dict__") and not isinstance(x, type):
        for value in vars(x).values():
            yield from arrays_of(value, depth + 1)

def inventory(method, *args):
    s = method.sampler
    kinds = {}
    seen = set()

    def count(kind, arrays):
        for a in arrays:
            r = root(a)
            if id(r) in seen or not r.nbytes:
                continue
            seen.add(id(r))
            kinds[kind] = kinds.get(kind, 0) + r.nbytes

    shards = getattr(s, "shards", [])
    count("topics of the tokens (z)", [s.z])
    count("word ids of the tokens", [s.words])
    count("document lists (sparse)", [a for sh in shards for a in arrays_of(getattr(sh, "lists", None))])
    count("where documents and slices start", [a for sh in shards for a in (sh.ptr, sh.runs)] + [s.doc_ptr])
    count("alias orders", [a for sh in shards for a in (sh.order, sh.doc_of) if a is not None])
    count("word lists (word-topic counts)", list(arrays_of(s.shared)))
    snaps = method.snapshots
    count("snapshot sums: word-topic", list(arrays_of(snaps.cells)))
    count("snapshot sums: document-topic", list(arrays_of(snaps.doc_cells)) + list(arrays_of(snaps.remote)))
    count("snapshot sums: the rest, document lengths", list(arrays_of(snaps)))
    gc.collect()
    matrices = [o for o in gc.get_objects() if sp.issparse(o)]
    count("corpus count matrix (CSR)", [a for m in matrices for a in (m.data, m.indices, m.indptr)])
    held.update(kinds)
    sizes["n_tokens"] = int(method.n_tokens)

from ldacli.cli import commands, main
from ldacli.methods.cgs.method import CollapsedGibbs
from ldacli.methods.cgs import snapshots
staged(commands, "read", "reading")  # and what is done with the corpus before the sampler is made
staged(CollapsedGibbs, "__init__", "building the sampler")
staged(CollapsedGibbs, "step", "sampling", after=inventory)
staged(snapshots.Snapshots, "take", "snapshot sums", within=True)
staged(CollapsedGibbs, "model_counts", "writing the model")
sizes["imported"] = status("VmRSS")
reset_peak()
code = 0
try:
    main(sys.argv[2:], standalone_mode=False)
except SystemExit as exc:
    code = exc.code
enter("end")
print(json.dumps({"peaks": peaks, "held": held, "code": code, **sizes}), file=open(sys.argv[1], "w"))
'''

STAGES = ("reading", "building the sampler", "sampling", "snapshot sums", "writing the model")
LABELS = {"reading": "reading (and checking the corpus)"}


def measure(path: str, K: int, iterations: int, root: str, extra: list[str]) -> dict:
    """One build's run: its stages' peaks, the arrays held while sampling, the whole peak."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([HERE, package_parent(root)])}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "measured.json")
        cmd = [sys.executable, "-c", CHILD, out, "train", path, "-k", str(K), "--iterations", str(iterations),
               "--seed", "1", "-q", "-o", os.path.join(tmp, "model.npz"), *extra]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        stderr = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0 or not os.path.exists(out):
            raise SystemExit(f"{' '.join(cmd[3:])}: exit {os.waitstatus_to_exitcode(status)}: {stderr.strip()[-1000:]}")
        with open(out) as f:
            result = json.load(f)
    if result["code"]:
        raise SystemExit(f"train: exit {result['code']}: {stderr.strip()[-1000:]}")
    # its peaks were reset stage by stage, which the kernel's own peak follows: the whole
    # process's is taken from a run of its own, watched by nothing but the kernel
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "ldacli", "train", path, "-k", str(K), "--iterations", str(iterations),
               "--seed", "1", "-q", "-o", os.path.join(tmp, "model.npz"), *extra]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd[1:])}: exit {os.waitstatus_to_exitcode(status)}")
    result["whole"] = usage.ru_maxrss * 1024
    return result


def table(name: str, result: dict, n_tokens: int) -> str:
    """The table of one build's run."""
    mb = 1 << 20
    lines = [f"{name}: {n_tokens:,} tokens", f"  {'peak RSS while':<36} {'MB':>8} {'bytes/token':>12}",
             f"  {'(the interpreter, ldacli imported)':<36} {result['imported'] / mb:8.0f} "
             f"{result['imported'] / n_tokens:12.1f}"]
    for stage in STAGES:
        if stage in result["peaks"]:
            peak = result["peaks"][stage]
            lines.append(f"  {LABELS.get(stage, stage):<36} {peak / mb:8.0f} {peak / n_tokens:12.1f}")
    lines.append(f"  {'the whole process (a run of its own)':<36} {result['whole'] / mb:8.0f} "
                 f"{result['whole'] / n_tokens:12.1f}")
    lines.append(f"  {'held after the last sweep':<36} {'MB':>8} {'bytes/token':>12}")
    for kind, nbytes in sorted(result["held"].items(), key=lambda kv: -kv[1]):
        lines.append(f"  {kind:<36} {nbytes / mb:8.0f} {nbytes / n_tokens:12.1f}")
    total = sum(result["held"].values())
    lines.append(f"  {'(the arrays above)':<36} {total / mb:8.0f} {total / n_tokens:12.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("corpus", help="a corpus path (benchmarks/large_corpus.py make draws a large one)")
    p.add_argument("-k", "--topics", type=int, default=1000)
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--build", action="append", help="NAME=ROOT of a built ldacli tree (repeatable; default: this one)")
    p.add_argument("--json", action="store_true", help="one JSON line per build instead of the tables")
    args, train_options = p.parse_known_args(argv)  # the others go to ldacli train as they are
    builds = [b.split("=", 1) for b in args.build] if args.build else [("ldacli", REPO)]
    for name, root in builds:
        result = measure(args.corpus, args.topics, args.iterations, root, train_options)
        if args.json:
            print(json.dumps({"build": name, "corpus": args.corpus, "K": args.topics, "iterations": args.iterations,
                              **result}), flush=True)
        else:
            print(table(name, result, result["n_tokens"]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
