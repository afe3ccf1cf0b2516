"""Held-out perplexity and training speed of ldacli against the ``lda`` package, one run.

Usage::

    python benchmarks/heldout.py                      # 20NG, K=100, 200 sweeps
    python benchmarks/heldout.py --corpus kos -k 20 --iterations 100

Every 10th document is held out; the other 90% train both tools with the same alpha (per
topic), beta, K and number of sweeps. Both models are then scored by the same command,
``ldacli perplexity`` (document completion, same seed): ``lda``'s topic-word matrix is written
into an ldacli model file for that. Needs ``pip install lda``; the corpora folder is
``$LDACLI_CORPORA`` or ``../shared/corpora`` beside the repository.
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
from ldacli.corpus import Corpus

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(HERE, "..", "..", "shared", "corpora"))
NAMED = {"kos": "docword.kos.txt.gz", "20ng": "docword.20ng.txt.gz"}


def split(corpus: Corpus, every: int) -> tuple[Corpus, Corpus]:
    held = np.arange(corpus.n_docs) % every == every - 1
    part = lambda mask: Corpus(corpus.counts[mask], corpus.vocab,  # noqa: E731
                               [d for d, m in zip(corpus.doc_ids, mask) if m])
    return part(~held), part(held)


def ldacli_cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "ldacli", *args], check=True, capture_output=True, text=True)
    return out.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    ap.add_argument("-k", "--topics", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--holdout-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        import lda
    except ImportError:
        print("skipping: the lda package is not installed (pip install lda)", file=sys.stderr)
        return 0
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    if not os.path.exists(path):
        print(f"skipping: no corpus at {path}", file=sys.stderr)
        return 0
    corpus = ldacli.read_corpus(path)
    train, held = split(corpus, args.holdout_every)
    common = ["-k", str(args.topics), "--iterations", str(args.iterations), "--alpha", str(args.alpha),
              "--beta", str(args.beta), "--seed", str(args.seed)]
    with tempfile.TemporaryDirectory() as tmp:
        f = lambda name: os.path.join(tmp, name)  # noqa: E731
        ldacli.write_corpus(train, f("train.ldac"), f("train.vocab"))
        ldacli.write_corpus(held, f("held.ldac"), f("held.vocab"))

        t0 = time.perf_counter()
        ldacli_cli("train", f("train.ldac"), *common, "-q", "-o", f("ours.npz"))
        ours_s = time.perf_counter() - t0

        model = lda.LDA(n_topics=args.topics, n_iter=args.iterations, alpha=args.alpha, eta=args.beta,
                        random_state=args.seed, refresh=10)
        t0 = time.perf_counter()
        model.fit(train.counts.astype(np.int64))
        lda_s = time.perf_counter() - t0
        ldacli.Model(phi=model.topic_word_, theta=model.doc_topic_, alpha=np.full(args.topics, args.alpha),
                     beta=args.beta, vocab=train.vocab, doc_ids=train.doc_ids,
                     loglik_iterations=np.zeros(0, np.int64), loglik_per_token=np.zeros(0),
                     params={"method": "lda package 3 (collapsed Gibbs)"}).save(f("lda.npz"))

        scores = {}
        for name in ("ours", "lda"):
            scores[name] = json.loads(ldacli_cli("perplexity", f(f"{name}.npz"), f("held.ldac"),
                                                 "--seed", str(args.seed), "--json", "-q"))
    n = train.n_tokens * args.iterations
    print(f"corpus {args.corpus}: {train.n_docs} training documents ({train.n_tokens} tokens), "
          f"{held.n_docs} held out; K={args.topics}, {args.iterations} sweeps, alpha={args.alpha}, beta={args.beta}")
    print(f"scored by `ldacli perplexity` ({scores['ours']['estimator']}, {scores['ours']['n_tokens']} tokens)")
    print(f"{'tool':<8} {'train s':>8} {'Mtok/s':>8} {'perplexity':>11}")
    for name, secs in (("ldacli", ours_s), ("lda", lda_s)):
        p = scores["ours" if name == "ldacli" else "lda"]["perplexity"]
        print(f"{name:<8} {secs:>8.1f} {n / secs / 1e6:>8.2f} {p:>11.1f}")
    print(f"speed ratio ldacli/lda: {lda_s / ours_s:.2f}x; perplexity ratio ldacli/lda: "
          f"{scores['ours']['perplexity'] / scores['lda']['perplexity']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
