"""How far apart are "the same topic" and "different topics"? Measured distances for ``diff``'s threshold.

Usage::

    python benchmarks/diff_calibration.py                       # 20NG and KOS, K=50, 1000 sweeps
    python benchmarks/diff_calibration.py --corpus kos -k 50 --iterations 300 --folder /tmp/calib

For each corpus (``$LDACLI_CORPORA`` or ``../shared/corpora``) it trains, one thread each (the
figures are distances, not timings):

* ``seed1``, ``seed2``: two ordinary runs with different seeds (reruns);
* ``warm``: ``seed1`` warm-started on the same corpus for ``--warm-sweeps`` sweeps (a nightly
  retrain with nothing new);
* ``grown``: ``early`` (a run on 90% of the documents) warm-started on all of them (a nightly
  retrain on a grown corpus).

Then, for every pair (seed1/seed2, seed1/warm, early/grown), the Hungarian matching on
Jensen-Shannon distance (``ldacli.match_topics``, as ``diff`` does) and, for each matched pair,
the distance and how many of their top 10 words they share. Beside them, the distances between
*different* topics of one model (each topic's nearest other topic in ``seed1``): a threshold
between the two populations tells a moved topic from a different one. Reported as quantiles, the
distances of matched pairs sharing at least 5 of their top 10 words against those sharing fewer,
and how many pairs each candidate threshold calls "no counterpart". Models are kept in
``--folder`` (reused when present, so a second run only re-measures).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

import ldacli
from ldacli.diff import js_distances
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"20ng": "docword.20ng.txt.gz", "kos": "docword.kos.txt.gz"}
CANDIDATES = (0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8)


def train(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "ldacli", "train", *args, "--threads", "1", "-q"], check=True)


def overlap(a, b, ka: int, kb: int, n: int = 10) -> int:
    wa = {w for w, _ in a.top_words(n)[ka]}
    return len(wa & {w for w, _ in b.top_words(n)[kb]})


def pairs(a, b) -> list[tuple[float, int]]:
    m = ldacli.match_topics(a, b)
    return [(float(d), overlap(a, b, ka, kb)) for (ka, kb), d in zip(m.pairs, m.distances)]


def quantiles(x) -> str:
    if len(x) == 0:
        return "none"
    q = np.quantile(x, [0, 0.1, 0.5, 0.9, 1])
    return f"n={len(x)} min {q[0]:.3f} p10 {q[1]:.3f} median {q[2]:.3f} p90 {q[3]:.3f} max {q[4]:.3f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", action="append", choices=sorted(FILES), help="20ng, kos (default both)")
    p.add_argument("-k", "--topics", type=int, default=50)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--warm-sweeps", type=int, default=200)
    p.add_argument("--folder", default="/tmp/ldacli-diff-calibration")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    report = {}
    for name in args.corpus or ["20ng", "kos"]:
        path = os.path.join(CORPORA, FILES[name])
        if not os.path.exists(path):
            print(f"{path}: missing, skipped", file=sys.stderr)
            continue
        out = lambda tag: os.path.join(args.folder, f"{name}-k{args.topics}-{tag}.npz")  # noqa: E731
        common = ["-k", str(args.topics), "--iterations", str(args.iterations)]
        for seed in (1, 2):
            if not os.path.exists(out(f"seed{seed}")):
                train(path, *common, "--seed", str(seed), "-o", out(f"seed{seed}"))
        if not os.path.exists(out("warm")):
            train(path, "--warm-start", out("seed1"), "--iterations", str(args.warm_sweeps), "--seed", "3",
                  "-o", out("warm"))
        if not os.path.exists(out("grown")):
            corpus = ldacli.read_corpus(path)
            keep = np.sort(np.random.default_rng(1).permutation(corpus.n_docs)[:int(0.9 * corpus.n_docs)])
            early_corpus = os.path.join(args.folder, f"{name}-early.ldac")
            ldacli.write_corpus(ldacli.Corpus(corpus.counts[keep], corpus.vocab, [corpus.doc_ids[i] for i in keep],
                                              corpus.source, corpus.format), early_corpus,
                                early_corpus.replace(".ldac", ".vocab"), format="ldac")
            train(early_corpus, *common, "--seed", "4", "-o", out("early"))
            train(path, "--warm-start", out("early"), "--iterations", str(args.warm_sweeps), "--seed", "5",
                  "-o", out("grown"))
        m = {tag: ldacli.load_model(out(tag)) for tag in ("seed1", "seed2", "warm", "early", "grown")}
        found = {"rerun": pairs(m["seed1"], m["seed2"]), "warm start": pairs(m["seed1"], m["warm"]),
                 "grown warm start": pairs(m["early"], m["grown"])}
        own = js_distances(m["seed1"].phi, m["seed1"].phi)
        np.fill_diagonal(own, np.inf)
        nearest = own.min(axis=1)
        report[name] = {"pairs": found, "nearest_other_topic": nearest.tolist()}
        if args.json:
            continue
        print(f"== {name}, K={args.topics}, {args.iterations} sweeps (warm starts: {args.warm_sweeps} sweeps)")
        for what, ps in found.items():
            d = np.array([x for x, _ in ps])
            o = np.array([y for _, y in ps])
            print(f"{what:>17}: all {quantiles(d)}")
            print(f"{'':>17}  sharing >= 5 of top 10: {quantiles(d[o >= 5])}")
            print(f"{'':>17}  sharing <  5 of top 10: {quantiles(d[o < 5])}")
            print(f"{'':>17}  called no counterpart at threshold " +
                  ", ".join(f"{t}: {int((d > t).sum())} ({int(((d > t) & (o >= 5)).sum())} sharing >= 5)"
                            for t in CANDIDATES))
        print(f"{'nearest other':>17}: {quantiles(nearest)} (each topic of seed1 to its nearest other topic)")
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
