"""Model file sizes: a collapsed Gibbs model's counts (format 3) against its dense phi and theta.

Usage::

    python benchmarks/model_size.py --iterations 20 --iterations 200   # 2 M tokens, V = 40,000, K = 100 and 1,000
    python benchmarks/model_size.py --tokens 500000 -k 50 --iterations 10

For each K and each ``--iterations``, trains ``ldacli.train`` (seed 1) on a synthetic corpus of
text-like statistics (Zipfian word frequencies over ``--words`` words,
:func:`~ldacli.corpora.synthetic.zipf_topics` of 100 true topics; documents of 20 to 216 tokens,
118 on average, as in a corpus of 20 M tokens and 170,000 documents), twice: a model of the final
state (``snapshots=1``, what the defaults give a run of 20 sweeps) and one of five snapshots
(``--snapshot-interval`` 10 as by default, or a tenth of the run when that is shorter: the sums
of five states, as a long run's model holds them). Writes the
model as ``train -o`` does (format 3: the counts) and the same model with phi and theta (as every
format-2 file was), and prints both sizes, the cells of each kind of counts per token, the bytes
a cell takes, and what those cells per token project to at ``--project`` tokens, K=1,000,
V=150,000, D=170,000 (the word ids then take 4 bytes, the topic ids 2, the sums what they took
here, or 4: the most they can need). Sizes and counts only, no timings.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import zipfile

import numpy as np

import ldacli
from ldacli.corpora.synthetic import generate, zipf_topics

MB = 1e6


def corpus_of(tokens: int, words: int, seed: int = 1):
    """The synthetic corpus (see the module docstring), without words that never occur."""
    docs = max(1, tokens // 118)
    phi = zipf_topics(100, words, seed=seed)
    return generate(docs, 100, words, doc_length=(20, 216), alpha=0.1, seed=seed, topics=phi).corpus \
        .without_unused_words()[0]


def members(path: str) -> dict[str, int]:
    """Each member's bytes in the file (header included)."""
    with zipfile.ZipFile(path) as zf:
        return {info.filename[:-4]: info.file_size for info in zf.infolist()}


def measure(corpus, k: int, iterations: int, folder: str, **settings) -> dict:
    """The sizes of one run's model, as counts and as phi and theta."""
    compact = os.path.join(folder, "counts.npz")
    model = ldacli.train(corpus, k, iterations=iterations, seed=1, output=compact, **settings)
    counts = model.counts
    dense = os.path.join(folder, "dense.npz")
    dataclasses.replace(model).save(dense)  # given its phi and theta, a model writes them
    sizes = members(compact)

    def sums_bytes(name):  # a cell's sum, the large ones apart included
        return sum(sizes[f"{name}_{part}"] - 128 for part in ("sums", "sums_large"))

    w, d = counts.words, counts.docs
    out = {"K": k, "V": len(model.vocab), "D": model.n_docs, "N": corpus.n_tokens, "states": counts.states,
           "dense": os.path.getsize(dense), "counts": os.path.getsize(compact),
           "word_cells": w.n_cells, "doc_cells": d.n_cells,
           "word_sum_bytes": sums_bytes("topic_word") / max(1, w.n_cells),
           "doc_sum_bytes": sums_bytes("doc_topic") / max(1, d.n_cells),
           "dtypes": f"{w.columns.dtype}/{w.sums.dtype}+{w.large.size} {w.large.dtype}, "
                     f"{d.columns.dtype}/{d.sums.dtype}+{d.large.size} {d.large.dtype}"}
    os.remove(dense)
    os.remove(compact)
    return out


def projected(row: dict, tokens: float, K: int = 1000, V: int = 150_000, D: int = 170_000) -> tuple[float, float,
                                                                                                     float]:
    """Bytes of phi and theta, and of the counts two ways, at ``tokens`` tokens from ``row``'s
    cells per token: each word id 4 bytes, each topic id 2, each pointer 4, and each sum as many
    bytes as it took here (the large ones apart included), or 4 (the most a sum can need there)."""
    word_cells = row["word_cells"] / row["N"] * tokens
    doc_cells = row["doc_cells"] / row["N"] * tokens
    ids = 4.0 * word_cells + 2.0 * doc_cells + 4.0 * (K + D + 2)
    return (8.0 * K * (V + D), ids + row["word_sum_bytes"] * word_cells + row["doc_sum_bytes"] * doc_cells,
            ids + 4.0 * (word_cells + doc_cells))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=2_000_000)
    ap.add_argument("--words", type=int, default=40_000)
    ap.add_argument("-k", "--topics", type=int, action="append", help="K (repeatable; default 100 and 1000)")
    ap.add_argument("--iterations", type=int, action="append", help="sweeps (repeatable; default 20)")
    ap.add_argument("--project", type=float, default=20e6, help="tokens to project the sizes to (K=1000)")
    args = ap.parse_args(argv)
    corpus = corpus_of(args.tokens, args.words)
    print(f"corpus: {corpus.n_tokens:,} tokens, {corpus.n_words:,} words, {corpus.n_docs:,} documents")
    print()
    print("| K | sweeps | model | phi and theta (MB) | counts (MB) | ratio | word-topic cells a token | "
          "document-topic cells a token | dtypes (words/sums + large, topics/sums + large) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for k in args.topics or [100, 1000]:
            for sweeps in args.iterations or [20]:
                interval = max(1, min(10, sweeps // 10))
                for label, settings in (("final state", {"snapshots": 1}),
                                        (f"5 snapshots, {interval} apart", {"snapshots": 5,
                                                                            "snapshot_interval": interval})):
                    row = measure(corpus, k, sweeps, folder, **settings)
                    rows.append({**row, "sweeps": sweeps, "label": label})
                    print(f"| {k:,} | {sweeps} | {label} | {row['dense'] / MB:,.1f} | {row['counts'] / MB:,.2f} | "
                          f"{row['dense'] / row['counts']:.1f}x | {row['word_cells'] / row['N']:.3f} | "
                          f"{row['doc_cells'] / row['N']:.3f} | {row['dtypes']} |", flush=True)
    print()
    for row in rows:
        if row["K"] != 1000:
            continue
        dense, counts, widest = projected(row, args.project)
        print(f"at {args.project / 1e6:g} M tokens, K=1000, V=150,000, D=170,000, from the cells a token of the "
              f"model of {row['sweeps']} sweeps, {row['label']}: phi and theta {dense / MB:,.0f} MB, counts "
              f"{counts / MB:,.0f} MB ({dense / counts:.1f}x smaller; {widest / MB:,.0f} MB, {dense / widest:.1f}x, "
              f"with every sum 4 bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
