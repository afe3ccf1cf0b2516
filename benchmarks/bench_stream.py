"""Streaming inference at scale: documents per second and peak memory of ``ldacli infer`` on
generated corpora of growing size, against tomotopy's ``infer`` on the same documents.

Usage::

    python benchmarks/bench_stream.py                           # 100 k and 1 M documents, K=100
    python benchmarks/bench_stream.py --docs 2000,5000 --tools ldacli,tomotopy   # a quick check

For each size N, documents are drawn from the LDA generative process (K topics over V words,
documents of 20 to 120 tokens; ``ldacli.corpora.synthetic.generate``, chunk by chunk so that writing the
file stays small in memory) and written once as LDA-C with its vocabulary. A model is trained
(untimed) on the first 5,000 of them, by ldacli and by tomotopy. Then each tool infers the
topic proportions of all N documents in its own process (``--iterations`` sweeps, ``--threads``
threads), timed from the process's start to its end, its peak RSS read from the kernel
(``resource.getrusage(RUSAGE_CHILDREN)``):

* ``ldacli``: ``ldacli infer MODEL corpus.ldac -o theta.tsv`` (the command line: read, infer
  and write a block at a time);
* ``ldacli-npz``: the same writing ``theta.npz``;
* ``tomotopy``: reads the file into ``Document`` objects (``make_doc``), ``LDAModel.infer`` on
  all of them, writes the proportions as TSV: tomotopy has no streaming reader, so this is how
  a user would do it.

Flat memory means the ldacli rows' peak RSS stays the same from 100 k to 1 M documents. Ratios
are printed per size (tool / ldacli). Timings are only meaningful on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
import ldacli  # noqa: E402

# the package this script imported (an install, or a checkout's src), for the processes it starts
SRC = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))
from ldacli.corpora.formats.ldac import ldac_lines  # noqa: E402
from ldacli.corpora.synthetic import generate  # noqa: E402

CHUNK_DOCS = 50_000

TOMOTOPY = r"""
import sys, time
import numpy as np
import tomotopy as tp
model_path, corpus, vocab_path, out, iterations, workers = sys.argv[1:7]
mdl = tp.LDAModel.load(model_path)
vocab = [w.rstrip("\n") for w in open(vocab_path, encoding="utf-8")]
docs = []
with open(corpus) as f:
    for line in f:
        words = []
        for pair in line.split()[1:]:
            w, c = pair.split(":")
            words += [vocab[int(w)]] * int(c)
        docs.append(mdl.make_doc(words))
topics, _ = mdl.infer(docs, iterations=int(iterations), workers=int(workers))
with open(out, "w") as f:
    for i, d in enumerate(topics):
        f.write(str(i + 1) + "\t" + "\t".join("%.6g" % p for p in np.asarray(d)) + "\n")
"""


def write_corpus(path: str, n_docs: int, K: int, V: int, seed: int) -> list[str]:
    """N documents from LDA (one set of topics) as LDA-C, a chunk at a time; returns the vocabulary."""
    vocab, topics = None, None
    with open(path, "w") as f:
        for i, start in enumerate(range(0, n_docs, CHUNK_DOCS)):
            n = min(CHUNK_DOCS, n_docs - start)
            syn = generate(n, K, V, doc_length=(20, 120), alpha=0.1, beta=0.01, seed=seed + i, topics=topics)
            vocab, topics = syn.corpus.vocab, syn.phi
            f.writelines(ldac_lines(syn.corpus.counts))
    return vocab


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", default="100000,1000000", help="corpus sizes, comma-separated")
    p.add_argument("-k", "--topics", type=int, default=100)
    p.add_argument("--words", type=int, default=20_000)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tools", default="ldacli,ldacli-npz,tomotopy")
    p.add_argument("--folder", default=None, help="where to write the corpora (default: a temporary folder)")
    args = p.parse_args()
    tools = args.tools.split(",")
    folder = args.folder or tempfile.mkdtemp(prefix="bench-stream-")
    sizes = [int(s) for s in args.docs.split(",")]
    print(f"K={args.topics}, V={args.words}, {args.iterations} sweeps, {args.threads} thread(s); files in {folder}")
    print(f"{'documents':>10} {'tool':>11} {'seconds':>9} {'docs/s':>10} {'peak MB':>8} {'s / ldacli':>10} "
          f"{'MB / ldacli':>11}")
    # the child processes' peak RSS is a maximum over all children so far: measure each in a fresh
    # interpreter that runs one child, so the numbers never mix
    for n in sizes:
        corpus = os.path.join(folder, f"c{n}.ldac")
        vocab = write_corpus(corpus, n, args.topics, args.words, seed=1)
        with open(os.path.join(folder, f"c{n}.vocab"), "w", encoding="utf-8") as f:
            f.writelines(w + "\n" for w in vocab)
        head = ldacli.read_corpus(corpus, vocab=os.path.join(folder, f"c{n}.vocab"))
        train = ldacli.Corpus(head.counts[:5000], head.vocab, head.doc_ids[:5000])
        model_path = os.path.join(folder, f"m{n}.npz")
        ldacli.train(train, args.topics, iterations=100, seed=1).save(model_path)
        del head
        results = {}
        for tool in tools:
            if tool.startswith("ldacli"):
                out = os.path.join(folder, "theta." + ("npz" if tool == "ldacli-npz" else "tsv"))
                command = [sys.executable, "-m", "ldacli", "infer", model_path, corpus, "-q", "--seed", "1",
                           "--threads", str(args.threads), "--iterations", str(args.iterations),
                           "--burn-in", str(args.iterations // 2), "-o", out]
            else:
                try:
                    import tomotopy as tp
                except ImportError:
                    print(f"{n:>10} {tool:>11} (not installed: pip install tomotopy)")
                    continue
                mdl = tp.LDAModel(k=args.topics, alpha=0.1, eta=0.01, seed=1)
                for row in train.counts:
                    mdl.add_doc(np.repeat(np.array(train.vocab)[row.indices], row.data).tolist())
                mdl.train(100, workers=1)
                tmodel = os.path.join(folder, f"t{n}.bin")
                mdl.save(tmodel)
                script = os.path.join(folder, "tomotopy_infer.py")
                with open(script, "w") as f:
                    f.write(TOMOTOPY)
                command = [sys.executable, script, tmodel, corpus, os.path.join(folder, f"c{n}.vocab"),
                           os.path.join(folder, "t.tsv"), str(args.iterations), str(args.threads)]
            wrapped = [sys.executable, "-c",
                       "import resource, subprocess, sys, time; t = time.perf_counter(); "
                       "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
                       "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                       *command]
            out = subprocess.run(wrapped, check=True, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": SRC}).stdout.split()
            seconds, peak = float(out[0]), int(out[1]) / 1024
            results[tool] = (seconds, peak)
            base = results.get("ldacli")
            ratio = f"{seconds / base[0]:10.2f} {peak / base[1]:11.2f}" if base else ""
            print(f"{n:>10} {tool:>11} {seconds:9.1f} {n / seconds:10.0f} {peak:8.0f} {ratio}", flush=True)


if __name__ == "__main__":
    main()
