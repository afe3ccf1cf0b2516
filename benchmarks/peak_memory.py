"""Peak memory (RSS) of whole training processes that write their model: ldacli and tomotopy.

Usage::

    python benchmarks/peak_memory.py --corpus 20ng -k 100 -k 1000 --iterations 20
    python benchmarks/peak_memory.py -k 1000 --build base=/tmp/old --build new=.   # two ldacli builds

Each measurement is one process, started afresh, whose peak resident set size the kernel reports
when it ends (``os.wait4``): for ldacli, ``python -m ldacli train CORPUS -k K --iterations N
--seed 1 -o MODEL.npz`` exactly as a user runs it (with ``--build NAME=ROOT``, the build at
the package of ``ROOT``; default: this tree's); for tomotopy (``pip install tomotopy``; skipped with a note
when absent), a script that reads the same corpus file with ``ldacli.read_corpus``, adds its
documents, trains ``N`` sweeps on one thread and saves its model (``LDAModel.save``). Memory does
not depend on the machine's load, so one run is enough; ratios are to tomotopy's peak.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from trees import package_parent
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NAMED = {"kos": "docword.kos.txt.gz", "20ng": "docword.20ng.txt.gz"}

TOMOTOPY = f"""
import sys
sys.path.insert(0, {HERE!r})
import ldacli
from bench_train import tomotopy_model
path, K, iterations, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
corpus = ldacli.read_corpus(path)
model = tomotopy_model(corpus, K, 0.1, 0.01)
del corpus
model.train(iterations, workers=1)
model.save(out)
"""


def peak_mb(cmd: list[str], env: dict) -> float:
    """The peak RSS in MB of the process ``cmd`` (which must succeed)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}: {stderr.strip()[-1000:]}")
    return usage.ru_maxrss / 1024


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    p.add_argument("-k", "--topics", type=int, action="append")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--build", action="append", help="NAME=ROOT of a built ldacli checkout (repeatable; default: this one)")
    p.add_argument("--no-tomotopy", action="store_true")
    args = p.parse_args(argv)
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    builds = [b.split("=", 1) for b in args.build] if args.build else [("ldacli", REPO)]
    try:
        import tomotopy  # noqa: F401
        peer = not args.no_tomotopy
    except ImportError:
        peer = False
        print("tomotopy is not installed (pip install tomotopy): ldacli only", file=sys.stderr)
    print(f"{'corpus':<8} {'K':>5} {'tool':<12} {'peak RSS MB':>11} {'/ tomotopy':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for K in args.topics or [100, 1000]:
            rows = []
            if peer:
                env = {**os.environ, "PYTHONPATH": package_parent(REPO)}
                rows.append(("tomotopy", peak_mb([sys.executable, "-c", TOMOTOPY, path, str(K), str(args.iterations),
                                                  os.path.join(tmp, "tomotopy.bin")], env)))
            for name, root in builds:
                env = {**os.environ, "PYTHONPATH": package_parent(root)}
                rows.append((name, peak_mb([sys.executable, "-m", "ldacli", "train", path, "-k", str(K), "--iterations",
                                            str(args.iterations), "--seed", "1", "-q", "-o",
                                            os.path.join(tmp, f"{name}.npz")], env)))
            reference = rows[0][1] if peer else None
            for name, mb in rows:
                ratio = f"{mb / reference:10.2f}" if reference else f"{'':>10}"
                print(f"{args.corpus:<8} {K:>5} {name:<12} {mb:>11.0f} {ratio}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
