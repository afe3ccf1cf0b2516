"""Instruction counts of the sampling kernels of two or more builds, on the same short run.

Usage (build the old version in a git worktree first; needs valgrind)::

    git worktree add /tmp/old HEAD~1 && (cd /tmp/old && python setup.py build_ext --inplace)
    python benchmarks/instructions.py --build old=/tmp/old --build new=. --sampler sparse -k 100 --shards 1

Wall-clock timings on a shared machine move by 10% from run to run; the number of instructions a
kernel executes does not. For each build this runs, in its own process (``ROOT/src`` or ``ROOT`` on
``PYTHONPATH``, so that the whole package is that build's), after ``--burn-in`` sweeps of one sampler
on KOS (or ``--corpus``) from a fixed seed (run once, by the first build, without valgrind),
then from that state ``--sweeps`` sweeps under valgrind's callgrind
with collection switched on only inside the sampler's kernel (``*_cgs*SAMPLER_sweep``, its inlined
steps and the helpers it calls). It prints each build's instructions per token sampled (Ir) and the
ratio to the first build's. Builds that give the same chains (``check_identity.py``) execute
their instructions on the same states, so the counts compare the code alone. Instructions are not
time (a cache miss costs more than an addition): ``ab_sweep.py`` gives the wall-clock A/B on a
quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from trees import package_parent
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))

# What each build's process runs: argv is corpus, sampler, K, shards, sweeps, state file, mode. Mode
# "save" runs the sweeps (the burn-in) from the seed's random topics and saves the topics and
# the streams' states; mode "count" starts from that file and runs the sweeps (under callgrind).
CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import numpy as np
import ldacli
from bench_dask import build
from ldacli.methods.cgs.threads import ThreadsSampler
path, kind, K, shards, sweeps, state, mode = sys.argv[1:]
K, shards, sweeps = int(K), int(shards), int(sweeps)
corpus = ldacli.read_corpus(path)
words, doc_ptr, z, bounds, rngs = build(corpus, K, seed=7, shards=shards)
if mode == "count":
    with np.load(state) as saved:
        z[:] = saved["z"]
        for rng, s in zip(rngs, json.loads(str(saved["rngs"]))):
            rng.bit_generator.state = s
sampler = ThreadsSampler(kind, words, doc_ptr, z, corpus.n_words, K, np.full(K, 0.1), 0.01, bounds, rngs)
for _ in range(sweeps):
    sampler.sweep()
sampler.close()
if mode == "save":
    np.savez(state, z=z, rngs=json.dumps([r.bit_generator.state for r in rngs]))
print(words.size)
"""


def _child(root: str, args: list[str], prefix: list[str] = ()) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(CHILD.format(here=HERE))
    try:
        env = {**os.environ, "PYTHONPATH": package_parent(root)}
        done = subprocess.run([*prefix, sys.executable, f.name, *args], env=env, capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise SystemExit(f"{root}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def count(root: str, corpus: str, kind: str, K: int, shards: int, sweeps: int, state: str) -> tuple[int, int]:
    """(instructions in the kernel over ``sweeps`` sweeps from ``state``, tokens per sweep) for
    the build at ``root``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                  f"--toggle-collect=*_cgs*{kind}_sweep*"]
        tokens = int(_child(root, [corpus, kind, str(K), str(shards), str(sweeps), state, "count"], prefix).split()[-1])
        with open(out) as f:
            found = re.search(r"^(?:summary|totals):\s*(\d+)", f.read(), re.M)
        return int(found.group(1)), tokens


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", action="append", required=True, help="NAME=ROOT of a built checkout (repeatable)")
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.kos.txt.gz"))
    p.add_argument("--sampler", default="sparse", choices=("dense", "sparse", "alias"))
    p.add_argument("-k", "--topics", type=int, action="append")
    p.add_argument("--shards", type=int, action="append")
    p.add_argument("--burn-in", type=int, default=20, help="sweeps before the counted ones, run by the first build")
    p.add_argument("--sweeps", type=int, default=2, help="counted sweeps")
    args = p.parse_args(argv)
    builds = [b.split("=", 1) for b in args.build]
    print(f"{'sampler':<7} {'K':>5} {'shards':>6}  {'build':<10} {'Ir/token':>9} {'ratio':>6}")
    for K in args.topics or [100]:
        for shards in args.shards or [1]:
            first = None
            with tempfile.TemporaryDirectory() as tmp:
                state = os.path.join(tmp, "state.npz")
                _child(builds[0][1], [args.corpus, args.sampler, str(K), str(shards), str(args.burn_in), state, "save"])
                counted = [(name, *count(root, args.corpus, args.sampler, K, shards, args.sweeps, state))
                           for name, root in builds]
            for name, ir, tokens in counted:
                per_token = ir / (tokens * args.sweeps)
                first = first or per_token
                print(f"{args.sampler:<7} {K:>5} {shards:>6}  {name:<10} {per_token:>9.1f} {per_token / first:>6.3f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
