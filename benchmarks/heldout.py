"""Held-out perplexity against training time: ldacli and peers, all scored by one command.

Usage::

    python benchmarks/heldout.py                                   # 20NG, K=100, 200 sweeps, vs lda
    python benchmarks/heldout.py --tools ldacli:sparse,tomotopy --threads 2
    python benchmarks/heldout.py --tools ldacli:sparse:2,ldacli:alias:2,tomotopy:1 --budget-of tomotopy:1 --budget-fraction 0.5

Every 10th document is held out; the other 90% train every tool with the same alpha (per
topic), beta and K. Gibbs tools run ``--iterations`` sweeps; with ``--budget-of TOOL`` that
tool runs first and the ldacli tools then get ``--budget-fraction`` of its wall time
(``--max-seconds``, lowered and run again until the whole process, start-up and writing
the model included, fits), which measures "time to reach the peer's perplexity". Every model is then
scored by the same command, ``ldacli perplexity`` (document completion, same seed): peers'
topic-word matrices are written into ldacli model files for that. Tools: ``ldacli:SAMPLER[:T[:S]]``
(T threads, default 1; S shards, default ldacli's; ``+--option=value`` appended gives ``train``
more options, e.g. ``ldacli:sparse+--snapshots=5``), ``lda``, ``tomotopy[:T]``,
``topica[:SAMPLER[:T[:N[:learn]]]]`` (topica's ``sparse`` or ``warp`` sampler; N snapshots of the chain
averaged into phi, topica's default 5; ``:1`` is the last state alone, as every other tool
gives; ``:learn`` its default of learning an asymmetric alpha and beta every 50 sweeps from
sweep 200, from the common priors, else they are fixed) and ``mallet[:T]`` (MALLET's ParallelTopicModel, run with java from ``$MALLET_HOME``, a
build by ``../shared/tools/build-mallet.sh``; its import into MALLET's format is not timed).
Corpora folder: ``$LDACLI_CORPORA`` or ``../shared/corpora`` beside the repository.
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
from bench_train import MALLET_HOME, mallet, mallet_import, token_lists
from ldacli.corpora.corpus import Corpus
from places import CORPORA

HERE = os.path.dirname(os.path.abspath(__file__))
NAMED = {"kos": "docword.kos.txt.gz", "20ng": "docword.20ng.txt.gz"}


def split(corpus: Corpus, every: int) -> tuple[Corpus, Corpus]:
    held = np.arange(corpus.n_docs) % every == every - 1
    part = lambda mask: Corpus(corpus.counts[mask], corpus.vocab,  # noqa: E731
                               [d for d, m in zip(corpus.doc_ids, mask) if m])
    return part(~held), part(held)


def ldacli_cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "ldacli", *args], check=True, capture_output=True, text=True)
    return out.stdout


def score(model_path: str, held_path: str, seed: int) -> dict:
    """``ldacli perplexity --format json`` of a model file on a held-out corpus file."""
    return json.loads(ldacli_cli("perplexity", model_path, held_path, "--seed", str(seed), "--format", "json", "-q"))


def save_peer(path, phi, k, args, vocab, method, alpha=None, beta=None):
    """A peer's topics as an ldacli model file, with its priors (learned ones where given)."""
    alpha = np.full(k, args.alpha) if alpha is None else np.asarray(alpha, dtype=np.float64)
    ldacli.Model(phi=phi, theta=np.zeros((0, k)), alpha=alpha, beta=args.beta if beta is None else beta, vocab=vocab,
                 doc_ids=[], loglik_iterations=np.zeros(0, np.int64), loglik_per_token=np.zeros(0),
                 params={"method": method}).save(path)


def by_vocab(phi: np.ndarray, words: list[str], vocab: list[str]) -> np.ndarray:
    """A peer's topic-word matrix over its own ``words`` as columns of ``vocab`` (words the peer
    dropped get a tiny mass), each row normalised."""
    index = {w: i for i, w in enumerate(words)}
    cols = np.array([index.get(w, -1) for w in vocab])
    phi = np.where(cols >= 0, phi[:, np.maximum(cols, 0)], 0.0) + 1e-12
    return phi / phi.sum(axis=1, keepdims=True)


def run_tool(tool: str, train: Corpus, f, args, budget: float | None) -> dict:
    parts = tool.split(":")
    name = parts[0]
    out = f(tool.replace(":", "_").replace("+", "_").replace("=", "_") + ".npz")
    if name == "ldacli":
        parts[-1], *extra = parts[-1].split("+")  # ldacli:sparse+--snapshots=5: more train options
        sampler = parts[1]
        threads = parts[2] if len(parts) > 2 else "1"
        shards = ["--shards", parts[3]] if len(parts) > 3 else []
        # --max-seconds bounds the sweeps only; start-up, the sweep that crosses the limit and
        # writing the model come on top. The whole process must fit the budget, so a run that
        # went over is repeated with the limit lowered by what it went over (and a little more)
        limit = budget
        for _ in range(4):
            t0 = time.perf_counter()
            ldacli_cli("train", f("train.ldac"), "-k", str(args.topics), "--iterations", str(args.iterations),
                       "--alpha", str(args.alpha), "--beta", str(args.beta), "--seed", str(args.seed),
                       "--sampler", sampler, "--threads", threads, "-q", "-o", out, *shards, *extra,
                       *(["--max-seconds", f"{limit:.3f}"] if budget else []))
            secs = time.perf_counter() - t0
            if not budget or secs <= budget:
                break
            limit -= secs - budget + 0.02 * budget
        with np.load(out, allow_pickle=False) as m:
            sweeps = json.loads(str(m["params"]))["iterations_done"]
    elif name == "lda":
        import logging

        import lda

        logging.getLogger("lda").setLevel(logging.WARNING)
        model = lda.LDA(n_topics=args.topics, n_iter=args.iterations, alpha=args.alpha, eta=args.beta,
                        random_state=args.seed, refresh=10)
        t0 = time.perf_counter()
        model.fit(train.counts.astype(np.int64))
        secs, sweeps = time.perf_counter() - t0, args.iterations
        save_peer(out, model.topic_word_, args.topics, args, train.vocab, "lda package (collapsed Gibbs)")
    elif name == "tomotopy":
        from bench_train import tomotopy_model

        workers = int(parts[1]) if len(parts) > 1 else 1
        t0 = time.perf_counter()
        model = tomotopy_model(train, args.topics, args.alpha, args.beta, args.seed)
        vocab = train.vocab
        model.train(args.iterations, workers=workers)
        secs, sweeps = time.perf_counter() - t0, args.iterations
        tw = np.array([model.get_topic_word_dist(k) for k in range(args.topics)], dtype=np.float64)  # float32 from tomotopy
        phi = by_vocab(tw, list(model.used_vocabs), vocab)
        save_peer(out, phi, args.topics, args, vocab, "tomotopy (collapsed Gibbs)")
    elif name == "topica":
        import topica

        sampler = parts[1] if len(parts) > 1 else "sparse"
        threads = int(parts[2]) if len(parts) > 2 else 1
        samples = int(parts[3]) if len(parts) > 3 else 5
        learn = len(parts) > 4 and parts[4] == "learn"  # its own default: priors learned from sweep 200
        corpus = topica.Corpus.from_documents(token_lists(train))
        fixed = {} if learn else dict(optimize_interval=0, use_symmetric_alpha=True)
        model = topica.LDA(args.topics, alpha_sum=args.alpha * args.topics, beta=args.beta, seed=args.seed,
                           num_threads=threads, sampler=sampler, **fixed)
        t0 = time.perf_counter()
        model.fit(corpus, iters=args.iterations, num_samples=samples, progress=False, keep_theta_draws=False)
        secs, sweeps = time.perf_counter() - t0, args.iterations
        phi = by_vocab(np.asarray(model.topic_word, dtype=np.float64), list(model.vocabulary), train.vocab)
        save_peer(out, phi, args.topics, args, train.vocab, f"topica {sampler} ({samples} snapshots averaged)",
                  *((model.alpha, model.beta) if learn else ()))
    elif name == "mallet":
        threads = parts[1] if len(parts) > 1 else "1"
        instances, counts = f("train.mallet"), f(tool.replace(":", "_") + ".counts")
        if not os.path.exists(instances):
            mallet_import(train, instances)
        t0 = time.perf_counter()
        mallet("cc.mallet.topics.tui.TopicTrainer", "--input", instances, "--num-topics", str(args.topics),
               "--num-iterations", str(args.iterations), "--alpha", str(args.alpha * args.topics),
               "--beta", str(args.beta), "--random-seed", str(args.seed), "--num-threads", threads,
               "--optimize-interval", "0", "--word-topic-counts-file", counts)
        secs, sweeps = time.perf_counter() - t0, args.iterations
        n_kw = np.zeros((args.topics, len(train.vocab)))
        column = {w: i for i, w in enumerate(train.vocab)}
        with open(counts) as lines:  # "index word topic:count topic:count ..."
            for line in lines:
                fields = line.split()
                for pair in fields[2:]:
                    k, c = pair.split(":")
                    n_kw[int(k), column[fields[1]]] = int(c)
        phi = (n_kw + args.beta) / (n_kw.sum(axis=1, keepdims=True) + args.beta * len(train.vocab))
        save_peer(out, phi, args.topics, args, train.vocab, "MALLET ParallelTopicModel (collapsed Gibbs)")
    else:
        raise SystemExit(f"unknown tool {tool}")
    scored = score(out, f("held.ldac"), args.seed)
    return {"tool": tool, "seconds": secs, "sweeps": sweeps, "perplexity": scored["perplexity"],
            "n_tokens": scored["n_tokens"], "estimator": scored["estimator"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20ng", help="kos, 20ng or a corpus path")
    ap.add_argument("--tools", default="ldacli:sparse,lda")
    ap.add_argument("-k", "--topics", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--holdout-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget-of", help="a peer tool whose wall time sets ldacli's budget")
    ap.add_argument("--budget-fraction", type=float, default=0.5)
    args = ap.parse_args(argv)
    path = os.path.join(CORPORA, NAMED[args.corpus]) if args.corpus in NAMED else args.corpus
    if not os.path.exists(path):
        print(f"skipping: no corpus at {path}", file=sys.stderr)
        return 0
    tools = [t for t in args.tools.split(",") if t]
    for t in list(tools):
        peer = t.split(":")[0]
        if peer == "mallet":
            if not os.path.isdir(os.path.join(MALLET_HOME, "target", "classes")):
                print(f"skipping {t}: no MALLET build at {MALLET_HOME} (../shared/tools/build-mallet.sh)", file=sys.stderr)
                tools.remove(t)
        elif peer != "ldacli":
            try:
                __import__(peer)
            except ImportError:
                print(f"skipping {t}: not installed (pip install {peer})", file=sys.stderr)
                tools.remove(t)
    corpus = ldacli.read_corpus(path)
    train, held = split(corpus, args.holdout_every)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        f = lambda name: os.path.join(tmp, name)  # noqa: E731
        ldacli.write_corpus(train, f("train.ldac"), f("train.vocab"))
        ldacli.write_corpus(held, f("held.ldac"), f("held.vocab"))
        budget = None
        if args.budget_of:
            first = run_tool(args.budget_of, train, f, args, None)
            rows.append(first)
            budget = first["seconds"] * args.budget_fraction
            tools = [t for t in tools if t != args.budget_of]
        for tool in tools:
            rows.append(run_tool(tool, train, f, args, budget if tool.startswith("ldacli") else None))
            print(f"  done {tool}", file=sys.stderr, flush=True)
    print(f"corpus {args.corpus}: {train.n_docs} training documents ({train.n_tokens} tokens), "
          f"{held.n_docs} held out; K={args.topics}, alpha={args.alpha}, beta={args.beta}")
    print(f"scored by `ldacli perplexity` ({rows[0]['estimator']}, {rows[0]['n_tokens']} tokens)"
          + (f"; ldacli budget {budget:.1f} s = {args.budget_fraction} x {args.budget_of}'s time" if budget else ""))
    print(f"{'tool':<18} {'sweeps':>6} {'seconds':>8} {'Mtok/s':>7} {'perplexity':>11}")
    for r in rows:
        rate = train.n_tokens * r["sweeps"] / r["seconds"] / 1e6
        print(f"{r['tool']:<18} {r['sweeps']:>6} {r['seconds']:>8.1f} {rate:>7.2f} {r['perplexity']:>11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
