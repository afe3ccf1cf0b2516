"""The measurements behind ``--sampler auto``: where the dense sampler beats the sparse one.

Usage::

    python benchmarks/auto_rules.py                       # 20NG, KOS, short and long documents
    python benchmarks/auto_rules.py --corpus 20ng -k 16 -k 24 -k 32

Both samplers are exact: they draw from the same conditional, so the chains are alike sweep for
sweep and the time per sweep decides. For every corpus and K, each is timed in its own process
(``bench_train.measure``: default shards, one thread, ``--burn-in`` untimed sweeps, then
``--sweeps`` timed). The table gives both times, the faster sampler and what ``auto`` picks;
a line per corpus gives the smallest K from which sparse stays ahead. The Metropolis-Hastings
``alias`` sampler mixes differently, so it is judged on held-out perplexity within a time
budget instead (``benchmarks/heldout.py``; see the README's Performance section).
"""

from __future__ import annotations

import argparse
import sys

from bench_train import load, measure

from ldacli.methods.cgs.sampler import choose_sampler

CORPORA = ("20ng", "kos", "synth:1M:20", "synth:1M:1000")
TOPICS = (8, 16, 24, 32, 48, 64, 100)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", help="as bench_train.py's (repeatable)")
    ap.add_argument("-k", "--topics", type=int, action="append", help="K values (repeatable)")
    ap.add_argument("--burn-in", type=int, default=20)
    ap.add_argument("--sweeps", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"{'corpus':<14} {'tok/doc':>7} {'K':>5} {'dense s':>8} {'sparse s':>8} {'faster':>7} {'auto':>7}")
    for corpus in args.corpus or CORPORA:
        c = load(corpus)
        per_doc = c.n_tokens / max(1, c.n_docs)
        crossover = None
        for k in sorted(args.topics or TOPICS):
            times = {}
            for kind in ("dense", "sparse"):
                r = measure(dict(corpus=corpus, tool=f"ldacli:{kind}", k=k, threads=1, burn_in=args.burn_in,
                                 sweeps=args.sweeps, shards=None, alpha=0.1, beta=0.01))
                times[kind] = r["n_tokens"] / r["tokens_per_s"] if r else float("nan")
            faster = "sparse" if times["sparse"] < times["dense"] else "dense"
            crossover = (crossover or k) if faster == "sparse" else None
            print(f"{corpus:<14} {per_doc:>7.0f} {k:>5} {times['dense']:>8.3f} {times['sparse']:>8.3f} {faster:>7} "
                  f"{choose_sampler(k, per_doc):>7}", flush=True)
        print(f"{corpus}: sparse is faster from K={crossover}" if crossover else f"{corpus}: dense throughout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
