"""Retraining on a growing corpus: warm start against a cold run, topic-id stability, and locks.

Usage::

    python benchmarks/retrain.py                       # 20NG, K=50, cold runs of 200 sweeps
    python benchmarks/retrain.py -k 50 --cold-sweeps 200 --warm-sweeps 10,20,40,66

The corpus (``$LDACLI_CORPORA`` or ``../shared/corpora``, 20 Newsgroups) grows: month 1 is a
random 80% of the documents, month 2 is month 1 plus another 10%, and the last 10% is held out
and scored throughout by ``ldacli perplexity`` (document completion, seed 1). Every run is a
whole ``ldacli`` process (start-up included in its wall time).

1. Time to quality: the model of month 1 (a cold run) warm-starts training on month 2; the
   warm run is scored after each of ``--warm-sweeps`` sweeps (checkpoint and resume, which give
   exactly the uninterrupted run) and compared with a cold run of ``--cold-sweeps`` on month 2.
   Reported: the fewest warm sweeps reaching the cold run's perplexity, and the wall time of one
   warm run of that length against the cold run's.
2. Stability: how many warm-started topics keep their parent's id (Hungarian matching on
   Jensen-Shannon distance) and their distance to it (median, worst); beside it, two cold runs of
   month 2 with different seeds, the second aligned onto the first with ``--align-to``.
3. Locking: ``--concurrent`` runs started at once on one output: how many trained, how many
   exited 75, and whether the model is whole.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import ldacli
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.write import write_corpus
from ldacli.corpora.synthetic import generate
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))


def cli(*args: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ldacli", *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - t0, out.stdout


def perplexity(model: str, held: str) -> float:
    _, out = cli("perplexity", model, held, "--seed", "1", "--format", "json", "-q")
    return json.loads(out)["perplexity"]


def months(corpus: Corpus, seed: int) -> tuple[Corpus, Corpus, Corpus]:
    order = np.random.default_rng(seed).permutation(corpus.n_docs)
    n = corpus.n_docs

    def part(idx):
        idx = np.sort(idx)
        return Corpus(corpus.counts[idx], corpus.vocab, [corpus.doc_ids[i] for i in idx], corpus.source, corpus.format)

    return part(order[:int(0.8 * n)]), part(order[:int(0.9 * n)]), part(order[int(0.9 * n):])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("-k", "--topics", type=int, default=50)
    p.add_argument("--cold-sweeps", type=int, default=200)
    p.add_argument("--warm-sweeps", default="10,20,30,40,50,66")
    p.add_argument("--threads", default="2")
    p.add_argument("--concurrent", type=int, default=20)
    p.add_argument("--parts", default="quality,locks", help="quality (1 and 2), locks (3), or both")
    args = p.parse_args()
    parts = args.parts.split(",")
    warm_points = [int(x) for x in args.warm_sweeps.split(",")]
    corpus = ldacli.read_corpus(args.corpus)
    m1, m2, held = months(corpus, 1)
    with tempfile.TemporaryDirectory() as d:
        f = lambda name: os.path.join(d, name)  # noqa: E731
        for name, c in (("m1", m1), ("m2", m2), ("held", held)):
            write_corpus(c, f(f"{name}.ldac"), f(f"{name}.vocab"))
        common = ["-k", str(args.topics), "--threads", args.threads, "-q"]
        print(f"corpus {os.path.basename(args.corpus)}: month 1 {m1.n_docs} documents, month 2 {m2.n_docs}, "
              f"held out {held.n_docs}; K={args.topics}; {args.threads} threads", flush=True)

        if "quality" in parts:
            quality(args, f, common, warm_points)
        if "locks" in parts:
            locks(args, f)


def quality(args, f, common, warm_points) -> None:
    t_m1, _ = cli("train", f("m1.ldac"), *common, "--iterations", str(args.cold_sweeps), "--seed", "1", "-o", f("m1.npz"))
    t_cold, _ = cli("train", f("m2.ldac"), *common, "--iterations", str(args.cold_sweeps), "--seed", "2", "-o", f("cold.npz"))
    target = perplexity(f("cold.npz"), f("held.ldac"))
    print(f"month 1, cold {args.cold_sweeps} sweeps: {t_m1:.1f} s, perplexity {perplexity(f('m1.npz'), f('held.ldac')):.1f}")
    print(f"month 2, cold {args.cold_sweeps} sweeps: {t_cold:.1f} s, perplexity {target:.1f}  (the target)")

    # 1. warm start, scored along the way (resumed from checkpoints: the same as one run)
    reached = None
    for n in warm_points:
        resume = ["--resume", f("warm.ckpt.npz")] if n != warm_points[0] else \
            ["--warm-start", f("m1.npz"), "--seed", "3"]
        cli("train", f("m2.ldac"), "--threads", args.threads, "-q", "--iterations", str(n),
            "--checkpoint", f("warm.ckpt.npz"), "-o", f(f"warm{n}.npz"), *resume)
        ppl = perplexity(f(f"warm{n}.npz"), f("held.ldac"))
        print(f"month 2, warm start, {n:3d} sweeps: perplexity {ppl:.1f}", flush=True)
        if reached is None and ppl <= target:
            reached = n
    if reached is not None:
        t_warm, _ = cli("train", f("m2.ldac"), "--threads", args.threads, "-q", "--iterations", str(reached),
                        "--warm-start", f("m1.npz"), "--seed", "3", "-o", f("warm_timed.npz"))
        print(f"warm start reached the cold perplexity after {reached} sweeps ({reached / args.cold_sweeps:.2f} of "
              f"the sweeps) in {t_warm:.1f} s against {t_cold:.1f} s ({t_warm / t_cold:.2f} of the wall time)")
    else:
        print(f"warm start did not reach the cold perplexity within {warm_points[-1]} sweeps")

    # 2. stability
    warm = ldacli.load_model(f(f"warm{warm_points[-1]}.npz"))
    ids = warm.params["id_stability"]
    print(f"stability, warm start ({warm_points[-1]} sweeps): {ids['kept']} of {ids['topics']} topics kept their id "
          f"({100 * ids['kept'] / ids['topics']:.0f}%); JS distance to the parent median {ids['median_distance']:.3f}, "
          f"worst {ids['max_distance']:.3f}")
    cli("train", f("m2.ldac"), *common, "--iterations", str(args.cold_sweeps), "--seed", "4",
        "--align-to", f("cold.npz"), "-o", f("cold2.npz"))
    aligned = ldacli.load_model(f("cold2.npz")).params["aligned_to"]["distances"]
    print(f"stability, two cold runs (seeds 2 and 4, the second --align-to the first): JS distance of matched "
          f"topics median {np.median(aligned):.3f}, worst {np.max(aligned):.3f}")



def locks(args, f) -> None:
    # 3. locks: runs started together on one output
    small = f("small.ldac")
    write_corpus(generate(300, 5, 200, doc_length=100, seed=1).corpus, small, f("small.vocab"))
    procs = [subprocess.Popen([sys.executable, "-m", "ldacli", "train", small, "-k", "5", "--iterations", "300",
                               "--seed", "1", "-q", "-o", f("locked.npz")], stderr=subprocess.PIPE, text=True)
             for _ in range(args.concurrent)]
    codes = [proc.wait() for proc in procs]
    whole = ldacli.load_model(f("locked.npz")).params["iterations_done"] == 300
    print(f"locking: {args.concurrent} runs on one output: {codes.count(0)} trained, {codes.count(75)} exited 75, "
          f"others {[c for c in codes if c not in (0, 75)]}; the model loads and is whole: {whole}")


if __name__ == "__main__":
    main()
