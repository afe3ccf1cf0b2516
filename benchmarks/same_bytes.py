"""Check that the same commands give the same results as an earlier commit: whole CLI runs.

Usage::

    python benchmarks/same_bytes.py --base f78e28a [--corpus ../shared/corpora/docword.kos.txt.gz]

The earlier commit is checked out into a temporary worktree and its wheel built; then every
command of :data:`COMMANDS` (train with every method and sampler, shards and threads, learned
priors, warm starts, alignment, early stopping, a resume, seed words and an update; infer;
perplexity with each estimator) runs once with that build and once with this tree's (its
kernels built in place: ``python setup.py build_ext --inplace``), in separate processes, each
spelled as its own version spells it (a base before the options were renamed gets the old
spelling). Every array of every output file must be equal, and the numbers printed by
``perplexity``; ``params`` may only gain keys (new settings recorded), which
are listed. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from trees import package_parent
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# (name, arguments for the base, arguments for this tree, output file or None for stdout).
# {c} is the corpus, {o} the output folder, {s} a seed-words file of the corpus's words (:data:`SEEDS`); a dict of spellings maps a new option to the old one.
TRAIN = "train {c} -k 20 --iterations 30 --seed 1"
COMMANDS = [
    ("cgs-dense", f"{TRAIN} --sampler dense -o {{o}}/cgs-dense.npz", None),
    ("cgs-sparse-4-shards", f"{TRAIN} --sampler sparse --shards 4 --threads 2 -o {{o}}/cgs-sparse.npz", None),
    ("cgs-alias", f"{TRAIN} --sampler alias --shards 2 -o {{o}}/cgs-alias.npz", None),
    ("cgs-sparse-1-shard", f"{TRAIN} --sampler sparse --shards 1 -o {{o}}/cgs-1.npz", None),
    ("cgs-optimize", f"{TRAIN} --optimize-interval 5 --optimize-burn-in 10 -o {{o}}/cgs-opt.npz", None),
    ("cgs-holdout", f"{TRAIN} --holdout 0.1 --patience 2 --loglik-every 5 -o {{o}}/cgs-hold.npz", None),
    ("vem", "train {c} -k 10 --method vem --iterations 8 --seed 1 --em-tol 0 -o {o}/vem.npz", None),
    ("vem-plain", "train {c} -k 10 --method vem --iterations 6 --seed 1 --no-smoothed --fixed-alpha "
                  "-o {o}/vem-plain.npz", None),
    ("gibbs", "train {c} -k 10 --method gibbs --iterations 30 --burn-in 10 --seed 1 --threads 2 -o {o}/gibbs.npz",
     None),
    ("warm-start", "train {c} --warm-start {o}/cgs-dense.npz --iterations 10 --seed 2 -o {o}/warm.npz", None),
    ("align-to", "train {c} -k 20 --iterations 20 --seed 5 --align-to {o}/cgs-dense.npz -o {o}/aligned.npz", None),
    ("checkpointed", f"{TRAIN} --checkpoint {{o}}/c.npz --checkpoint-every 10 --max-seconds 1e9 "
                     f"-o {{o}}/checkpointed.npz", None),
    ("resumed", "train {c} --iterations 40 --resume {o}/c.npz -o {o}/resumed.npz", None),
    ("seeded", "train {c} -k 10 --iterations 20 --seed 1 --seed-words {s} -o {o}/seeded.npz", None),
    ("update", "train {c} --update {o}/cgs-dense.npz --iterations 10 --seed 2 -o {o}/updated.npz", None),
    ("infer", "infer {o}/cgs-dense.npz {c} --seed 4 -o {o}/theta.npz", None),
    ("infer-tsv", "infer {o}/cgs-dense.npz {c} --seed 4 -o {o}/theta.tsv", None),
    ("completion", ("perplexity {o}/cgs-dense.npz {c} --seed 3 --json",
                    "perplexity {o}/cgs-dense.npz {c} --seed 3 --format json"), "stdout"),
    ("left-to-right", ("perplexity {o}/cgs-dense.npz {c} --seed 3 --method left-to-right --particles 3 --json",
                       "perplexity {o}/cgs-dense.npz {c} --seed 3 --estimator left-to-right --particles 3 "
                       "--format json"), "stdout"),
    ("importance", ("perplexity {o}/cgs-dense.npz {c} --seed 3 --method importance --samples 50 --json",
                    "perplexity {o}/cgs-dense.npz {c} --seed 3 --estimator importance --samples 50 "
                    "--format json"), "stdout"),
]
# Seeded topics of KOS (the default corpus): another corpus lacks some of the words, which is reported.
SEEDS = "war: iraq war troops\nelection: kerry bush dean poll vote\neconomy: economy jobs\n"
# Keys of perplexity's JSON that name things rather than measure them.
NAMES = {"model", "corpus", "ldacli_version", "method", "notes"}


def build(base: str, where: str) -> str:
    """Check ``base`` out at ``where``, build its wheel (pip, in an isolated build environment
    as a user's install would) and unpack it; returns the folder to put on ``PYTHONPATH``."""
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", where, base], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wheels = os.path.join(where, "wheels")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--wheel-dir", wheels, where],
                   check=True, stdout=subprocess.DEVNULL)
    site = os.path.join(where, "site")
    for name in os.listdir(wheels):
        zipfile.ZipFile(os.path.join(wheels, name)).extractall(site)
    return site


def run(src: str, args: str, corpus: str, out: str, seeds: str) -> str:
    argv = args.format(c=corpus, o=out, s=seeds).split()
    env = {**os.environ, "PYTHONPATH": src}
    # run from the output folder: `-m` puts the working folder first on sys.path, ahead of PYTHONPATH
    done = subprocess.run([sys.executable, "-m", "ldacli", *argv, "-q"], env=env, capture_output=True, text=True,
                          cwd=out)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} (PYTHONPATH={src}): exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def compare_npz(a: str, b: str) -> tuple[list[str], list[str]]:
    """(arrays that differ, params keys only the new file has); params that differ count as arrays."""
    with np.load(a, allow_pickle=False) as fa, np.load(b, allow_pickle=False) as fb:
        differ = [k for k in fa.files if k != "params" and (k not in fb.files or not np.array_equal(fa[k], fb[k]))]
        differ += [k for k in fb.files if k not in fa.files]
        pa, pb = json.loads(str(fa["params"])), json.loads(str(fb["params"]))
    def pathless(value):  # (a record of a file, the model an update continues: its path is each side's)
        return {k: v for k, v in value.items() if k != "path"} if isinstance(value, dict) else value

    for key in pa:
        if key in ("ldacli_version", "corpus_source", "warm_start", "lineage", "align_to", "aligned_to",
                   "model_params"):
            continue  # paths and versions
        if pathless(pb.get(key)) != pathless(pa[key]):
            differ.append(f"params.{key}: {pa[key]!r} -> {pb.get(key)!r}")
    return differ, sorted(set(pb) - set(pa))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the earlier commit")
    parser.add_argument("--corpus", default=os.path.join(CORPORA, "docword.kos.txt.gz"))
    args = parser.parse_args(argv)
    corpus = os.path.abspath(args.corpus)
    tmp = tempfile.mkdtemp(prefix="ldacli-same-bytes-")
    base_tree = os.path.join(tmp, "base")
    try:
        base_src = build(args.base, base_tree)
        here_src = package_parent(REPO)
        outs = {side: os.path.join(tmp, side + "-out") for side in ("base", "here")}
        for path in outs.values():
            os.makedirs(path)
        seeds = os.path.join(tmp, "seeds.txt")
        with open(seeds, "w") as f:
            f.write(SEEDS)
        failed = 0
        # a base that already spells perplexity's options as this tree does is given this tree's spelling
        helped = subprocess.run([sys.executable, "-m", "ldacli", "perplexity", "--help"], capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": base_src}, cwd=tmp).stdout
        same_spelling = "--estimator" in helped
        for name, spelled, kind in COMMANDS:
            old, new = spelled if isinstance(spelled, tuple) else (spelled, spelled)
            if same_spelling:
                old = new
            printed = {side: run(src, cmd, corpus, outs[side], seeds)
                       for side, src, cmd in (("base", base_src, old), ("here", here_src, new))}
            if kind == "stdout":
                a, b = json.loads(printed["base"]), json.loads(printed["here"])
                differ = [k for k in a if k not in NAMES and a[k] != b.get(k)]
                added = sorted(set(b) - set(a))
            else:
                target = new.split("-o ")[1].split()[0].replace("{o}/", "")
                if target.endswith(".npz"):
                    differ, added = compare_npz(os.path.join(outs["base"], target), os.path.join(outs["here"], target))
                else:
                    same = open(os.path.join(outs["base"], target), "rb").read() == \
                        open(os.path.join(outs["here"], target), "rb").read()
                    differ, added = ([] if same else [target]), []
            failed += bool(differ)
            print(f"{name:22} {'same' if not differ else 'DIFFERS: ' + ', '.join(differ)}"
                  + (f"   (new keys: {', '.join(added)})" if added else ""))
        print(f"{len(COMMANDS) - failed} of {len(COMMANDS)} commands give the same results as {args.base}")
        return 1 if failed else 0
    finally:
        subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", base_tree], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
