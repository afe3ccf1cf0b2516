"""Growing a model: does --add-topics catch a new theme while the old ids keep their topics?

Usage::

    python benchmarks/grow.py                       # 19 old themes + 1 new, 500k + 50k tokens
    python benchmarks/grow.py --old-k 19 --docs 5000 --new-docs 500 --iterations 300 --warm-sweeps 200

Topics are drawn once (Dirichlet(``--topic-beta``) over ``--words`` words). The old corpus is
drawn from the first ``--old-k`` of them; the grown corpus adds ``--new-docs`` documents of the
last one, a new planted theme.
A model of the old corpus with ``--old-k`` topics warm-starts training on the grown corpus with
``--add-topics 1`` (one thread; ``ldacli.train``, what the CLI runs). Reported: the Jensen-Shannon
distance of each true topic to the closest topic of the grown model and which id that is (the new
theme should be the added id, ``--old-k``), and how many old ids keep their topics: the grown
model's topic k is still closest to the parent's topic k and within diff's threshold of it.
Beside it, the same warm start without ``--add-topics`` (where must the new theme go?).
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import scipy.sparse as sp

import ldacli
from ldacli.corpora.corpus import Corpus
from ldacli.diff import THRESHOLD, common_topics, js_distances
from ldacli.corpora.synthetic import generate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old-k", type=int, default=19)
    p.add_argument("--words", type=int, default=5000)
    p.add_argument("--topic-beta", type=float, default=0.05)
    p.add_argument("--docs", type=int, default=5000)
    p.add_argument("--new-docs", type=int, default=500)
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--warm-sweeps", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    K = args.old_k + 1
    rng = np.random.default_rng(args.seed)
    phi = rng.dirichlet(np.full(args.words, args.topic_beta), size=K)
    old = generate(args.docs, args.old_k, args.words, doc_length=(50, 150), alpha=0.1, seed=args.seed,
                   topics=phi[:args.old_k] / phi[:args.old_k].sum(axis=1, keepdims=True)).corpus
    new = generate(args.new_docs, 1, args.words, doc_length=(50, 150), alpha=0.1, seed=args.seed + 1, topics=phi[-1:])
    grown = Corpus(sp.csr_array(sp.vstack([old.counts, new.corpus.counts])), old.vocab,
                   [f"old{i}" for i in range(old.n_docs)] + [f"new{i}" for i in range(args.new_docs)],
                   "grown", "synthetic")
    truth = ldacli.Model(phi, np.zeros((0, K)), np.ones(K), 0.01, list(old.vocab), [], np.zeros(0, np.int64),
                         np.zeros(0))
    print(f"old corpus: {old.n_docs:,} documents, {old.n_tokens:,} tokens, {args.old_k} themes; grown: "
          f"+{args.new_docs:,} documents ({new.corpus.n_tokens:,} tokens) of a new theme")
    with tempfile.TemporaryDirectory() as folder:
        parent_path = os.path.join(folder, "parent.npz")
        parent = ldacli.train(old, args.old_k, iterations=args.iterations, seed=args.seed, threads=1)
        parent.save(parent_path)
        for add in (1, None):
            model = ldacli.train(grown, warm_start=parent_path, add_topics=add, iterations=args.warm_sweeps,
                                 seed=args.seed + 2, threads=1)
            to_truth = js_distances(*common_topics(truth, model)[:2])
            to_parent = js_distances(*common_topics(parent, model)[:2])
            nearest = np.argmin(to_truth[-1])
            kept = [k for k in range(args.old_k) if np.argmin(to_parent[:, k]) == k
                    and to_parent[k, k] <= THRESHOLD.default]
            print(f"--add-topics {add or 0}: the new theme's closest topic is id {nearest} (JS {to_truth[-1, nearest]:.3f}"
                  f"; the added id is {args.old_k}); old ids that keep their topic: {len(kept)} of {args.old_k} "
                  f"({len(kept) / args.old_k:.0%}; JS to the parent's same id: median "
                  f"{np.median(np.diag(to_parent)[:args.old_k]):.3f}, max {np.diag(to_parent)[:args.old_k].max():.3f})")
            print(f"    each true old theme's closest topic: JS median "
                  f"{np.median(to_truth[:args.old_k].min(axis=1)):.3f}, max {to_truth[:args.old_k].min(axis=1).max():.3f}")


if __name__ == "__main__":
    main()
