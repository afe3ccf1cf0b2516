"""Held-out perplexity with learned priors against the symmetric default and against tomotopy.

Usage::

    python benchmarks/hyperopt.py                                  # 20NG, K=100, 1000 sweeps, all runs
    python benchmarks/hyperopt.py --runs tomotopy-optim,symmetric  # only some of them
    python benchmarks/hyperopt.py --corpus kos -k 20 --iterations 200

Every 10th document is held out (the split of ``benchmarks/heldout.py``); the other 90% train:

* ``symmetric``      ldacli, alpha = 0.1 per topic and beta = 0.01, fixed;
* ``optimized``      ldacli with ``optimize_interval=10, optimize_burn_in=100`` (learned
  asymmetric alpha and symmetric beta, Minka's fixed point);
* ``tomotopy-optim`` ``tp.LDAModel(k, alpha=0.1, eta=0.01, seed)`` trained with
  ``optim_interval=10`` (tomotopy learns an asymmetric alpha; eta stays fixed), one worker;
* ``tomotopy-sym``   the same with ``optim_interval=0``.

Every model is written as an ldacli model file (tomotopy's topic-word counts are re-smoothed
over ldacli's vocabulary with its own eta, its learned alpha kept) and scored by the same
command, ``ldacli perplexity`` (document completion, same seed), so the figures are comparable.
The table goes to stdout; ``--json FILE`` also writes every figure. Needs ``pip install
tomotopy`` for the tomotopy runs; the corpora folder is ``$LDACLI_CORPORA`` or
``../shared/corpora`` beside the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

import ldacli
from ldacli.corpora.corpus import Corpus

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from heldout import CORPORA, NAMED, score, split  # noqa: E402

RUNS = ("symmetric", "optimized", "tomotopy-optim", "tomotopy-sym")


def run_ldacli(train: Corpus, args, optimize: bool, path: str) -> dict | None:
    extra = {"optimize_interval": args.optimize_interval, "optimize_burn_in": args.optimize_burn_in} if optimize else {}
    t0 = time.perf_counter()
    model = ldacli.train(train, args.topics, iterations=args.iterations, alpha=args.alpha,
                         beta=args.beta, seed=args.seed, **extra)
    seconds = time.perf_counter() - t0
    model.save(path)
    return {"seconds": seconds, "alpha_sum": float(model.alpha.sum()), "beta": float(model.beta)}


def run_tomotopy(train: Corpus, args, optim_interval: int, path: str) -> dict | None:
    try:
        import tomotopy as tp
    except ImportError:
        print("skipping tomotopy: not installed (pip install tomotopy)", file=sys.stderr)
        return None
    mdl = tp.LDAModel(k=args.topics, alpha=args.alpha, eta=args.beta, seed=args.seed)
    words, doc_ptr = train.tokens()
    vocab = np.array(train.vocab, dtype=object)
    for d in range(train.n_docs):
        doc = vocab[words[doc_ptr[d]:doc_ptr[d + 1]]].tolist()
        if doc:
            mdl.add_doc(doc)
    mdl.optim_interval = optim_interval
    t0 = time.perf_counter()
    mdl.train(args.iterations, workers=1)
    seconds = time.perf_counter() - t0
    # get_topic_word_dist(normalize=False) gives n_kw + eta over tomotopy's own vocabulary.
    index = {w: i for i, w in enumerate(train.vocab)}
    cols = np.array([index[w] for w in mdl.used_vocabs], dtype=np.int64)
    eta = float(mdl.eta)
    V = train.n_words
    nkw = np.zeros((args.topics, V))
    for k in range(args.topics):
        nkw[k, cols] = np.asarray(mdl.get_topic_word_dist(k, normalize=False)) - eta
    nkw = np.clip(np.rint(nkw), 0, None)
    phi = (nkw + eta) / (nkw.sum(axis=1, keepdims=True) + V * eta)
    alpha = np.asarray(mdl.alpha, dtype=np.float64)
    ldacli.Model(phi=phi, theta=np.zeros((0, args.topics)), alpha=alpha, beta=eta, vocab=train.vocab,
                 doc_ids=[], loglik_iterations=np.zeros(0, np.int64), loglik_per_token=np.zeros(0),
                 params={"method": f"tomotopy {tp.__version__} LDAModel, optim_interval={optim_interval}"}
                 ).save(path)
    return {"seconds": seconds, "alpha_sum": float(alpha.sum()), "beta": eta,
            "ll_per_word": float(mdl.ll_per_word)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    ap.add_argument("-k", "--topics", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--optimize-interval", type=int, default=10)
    ap.add_argument("--optimize-burn-in", type=int, default=100)
    ap.add_argument("--holdout-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", default=",".join(RUNS), help="comma-separated subset of " + ", ".join(RUNS))
    ap.add_argument("--json", dest="json_out", default=None, help="also write all figures to this file")
    args = ap.parse_args(argv)
    runs = [r for r in args.runs.split(",") if r]
    unknown = sorted(set(runs) - set(RUNS))
    if unknown:
        ap.error(f"--runs: expected names from {', '.join(RUNS)}, found {', '.join(unknown)}")
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    if not os.path.exists(path):
        print(f"skipping: no corpus at {path}", file=sys.stderr)
        return 0
    corpus = ldacli.read_corpus(path)
    train, held = split(corpus, args.holdout_every)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        f = lambda name: os.path.join(tmp, name)  # noqa: E731
        ldacli.write_corpus(held, f("held.ldac"), f("held.vocab"))
        for name in runs:
            print(f"running {name} ...", file=sys.stderr, flush=True)
            model_path = f(f"{name}.npz")
            if name in ("symmetric", "optimized"):
                info = run_ldacli(train, args, name == "optimized", model_path)
            else:
                info = run_tomotopy(train, args, args.optimize_interval if name == "tomotopy-optim" else 0,
                                    model_path)
            if info is None:
                continue
            info.update(score(model_path, f("held.ldac"), args.seed))
            results[name] = info
            print(f"{name}: perplexity {info['perplexity']:.1f} in {info['seconds']:.0f} s", file=sys.stderr, flush=True)
    print(f"corpus {args.corpus}: {train.n_docs} training documents ({train.n_tokens} tokens), "
          f"{held.n_docs} held out; K={args.topics}, {args.iterations} sweeps, start alpha={args.alpha} "
          f"per topic, beta={args.beta}; optimisation every {args.optimize_interval} sweeps")
    if results:
        first = next(iter(results.values()))
        print(f"scored by `ldacli perplexity --seed {args.seed}` ({first['estimator']}, "
              f"{first['n_tokens']} tokens in {first['n_docs']} documents)")
    print(f"{'run':<16} {'train s':>8} {'sum alpha':>10} {'beta':>8} {'perplexity':>11}")
    for name, r in results.items():
        print(f"{name:<16} {r['seconds']:>8.0f} {r['alpha_sum']:>10.3f} {r['beta']:>8.4f} {r['perplexity']:>11.1f}")
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({"args": vars(args), "results": results}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
