"""Seeded topics: does a seeded topic become the theme its seed words name, at its id, at no cost in fit?

Usage::

    python benchmarks/seeded.py                        # planted corpus, then 20NG
    python benchmarks/seeded.py --part planted --runs 3
    python benchmarks/seeded.py --part 20ng -k 50 --iterations 500

Planted: a corpus drawn from ``--true-k`` Dirichlet(0.05) topics over 5,000 words (about 1 M
tokens); the seed-words file names 5 of them and gives each its 5 most probable words. Models of
``--true-k`` topics are trained with and without ``--seed-words`` (``--runs`` seeds each, one
thread): for each seeded topic, how many of its planted topic's 10 top words are among the 10 top
words of the model's topic of the same id (seeded: should be most; unseeded: the planted topic
lands at a random id), and which id holds the planted topic.

20NG (``$LDACLI_CORPORA`` or ``../shared/corpora``): 90% of the documents (held-out split seed
1) trained with ``-k`` topics with and without seeds for five newsgroups' themes (space, hockey,
cryptography, medicine, christianity); the seeded topics' top words are shown, and both models'
held-out perplexity on the other 10% by ``ldacli perplexity`` (document completion, seed 1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import ldacli
from ldacli.scoring.fixed_topics import holdout_split
from ldacli.corpora.synthetic import generate
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
NEWSGROUPS = """\
space: space nasa orbit launch shuttle moon satellite
hockey: hockey team game season players nhl league
cryptography: encryption key clipper chip keys security privacy
medicine: medical disease doctor patients treatment health cancer
christianity: god jesus christ church bible christian faith
"""


def planted(args, folder: str) -> None:
    rng = np.random.default_rng(args.seed)
    K = args.true_k
    phi = rng.dirichlet(np.full(5000, 0.05), size=K)
    syn = generate(10_000, K, 5000, doc_length=(50, 150), alpha=0.1, seed=args.seed, topics=phi)
    corpus = syn.corpus
    top10 = [{corpus.vocab[w] for w in np.argsort(-phi[k])[:10]} for k in range(K)]  # by word: a model
    # leaves out the words that never occur, so its columns are not the generator's
    chosen = rng.choice(K, size=5, replace=False)
    path = os.path.join(folder, "planted-seeds.txt")
    with open(path, "w") as f:
        for i, k in enumerate(chosen):
            f.write(f"theme{i}: " + " ".join(corpus.vocab[w] for w in np.argsort(-phi[k])[:5]) + "\n")
    print(f"planted: {corpus.n_docs:,} documents, {corpus.n_tokens:,} tokens, {K} topics; seeds for topics "
          f"{[int(k) for k in chosen]} (5 words each), strength {args.strength or 'default'}")
    for seeded in (True, False):
        hits, ids = [], []
        for run in range(1, args.runs + 1):
            extra = {"seed_words": path, "seed_strength": args.strength} if seeded else {}
            model = ldacli.train(corpus, K, iterations=args.iterations, seed=run, threads=1, **extra)
            found = [{w for w, _ in words} for words in model.top_words(10)]
            for i, k in enumerate(chosen):
                hits.append(len(found[i] & top10[k]))
                ids.append(int(np.argmax([len(f & top10[k]) for f in found])))
        what = "seeded" if seeded else "unseeded"
        print(f"  {what:>8}: top-10 words of topic i shared with planted topic i's: mean {np.mean(hits):.1f} of 10, "
              f"min {min(hits)} ({args.runs} runs x 5 seeded topics); the planted topic sits at id i in "
              f"{sum(a == i % 5 for i, a in enumerate(ids))} of {len(ids)}")


def newsgroups(args, folder: str) -> None:
    path = os.path.join(CORPORA, "docword.20ng.txt.gz")
    if not os.path.exists(path):
        print(f"{path}: missing, 20NG part skipped")
        return
    corpus = ldacli.read_corpus(path)
    train, held, _ = holdout_split(corpus, 0.1, seed=1)
    train_path, held_path = os.path.join(folder, "train.ldac"), os.path.join(folder, "held.ldac")
    ldacli.write_corpus(train, train_path, train_path.replace(".ldac", ".vocab"), format="ldac")
    ldacli.write_corpus(held, held_path, held_path.replace(".ldac", ".vocab"), format="ldac")
    seeds = os.path.join(folder, "newsgroups-seeds.txt")
    with open(seeds, "w") as f:
        f.write(NEWSGROUPS)
    print(f"20NG: {train.n_docs:,} training documents, {held.n_docs:,} held out; K={args.topics}, "
          f"{args.iterations} sweeps, one thread")
    scores = {}
    for seeded in (False, True):
        out = os.path.join(folder, f"20ng-{'seeded' if seeded else 'plain'}.npz")
        extra = ["--seed-words", seeds] + (["--seed-strength", str(args.strength)] if args.strength else []) \
            if seeded else []
        subprocess.run([sys.executable, "-m", "ldacli", "train", train_path, "-k", str(args.topics), "--iterations",
                        str(args.iterations), "--seed", "1", "--threads", "1", "-q", "-o", out, *extra], check=True)
        result = subprocess.run([sys.executable, "-m", "ldacli", "perplexity", out, held_path, "--seed", "1",
                                 "--threads", "1", "--format", "json", "-q"], check=True, capture_output=True,
                                text=True)
        scores[seeded] = json.loads(result.stdout)["perplexity"]
        if seeded:
            model = ldacli.load_model(out)
            for k, name in enumerate(model.topic_names[:5]):
                print(f"  topic {k} {name}: " + " ".join(w for w, _ in model.top_words(10)[k]))
    print(f"  held-out perplexity: unseeded {scores[False]:.1f}, seeded {scores[True]:.1f} "
          f"({100 * (scores[True] / scores[False] - 1):+.2f}%)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("planted", "20ng", "both"), default="both")
    p.add_argument("--true-k", type=int, default=20)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("-k", "--topics", type=int, default=50)
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--strength", type=float, default=None, help="--seed-strength (default: ldacli's)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.part in ("planted", "both"):
            planted(args, folder)
        if args.part in ("20ng", "both"):
            newsgroups(args, folder)


if __name__ == "__main__":
    main()
