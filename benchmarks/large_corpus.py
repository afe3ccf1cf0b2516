"""A large generated corpus, and ldacli trained on it sweep by sweep (issue 35, target 4).

Usage::

    python benchmarks/large_corpus.py make --tokens 100M -o $LDACLI_DATA/large/zipf100M.npz
    python benchmarks/large_corpus.py make --tokens 1000M --shards 32 -o $LDACLI_DATA/zipf1G-shards
    python benchmarks/large_corpus.py train $LDACLI_DATA/large/zipf100M.npz -k 1000 --iterations 100
    python benchmarks/large_corpus.py train C.npz -k 1000 --iterations 100 --checkpoint C.ckpt --stop-after 50
    python benchmarks/large_corpus.py train C.npz -k 1000 --iterations 100 --checkpoint C.ckpt --resume

``make`` draws a corpus of exactly ``--tokens`` tokens from LDA's generative process
(:func:`ldacli.corpora.synthetic.generate`) with text's statistics:

- a Zipfian vocabulary of ``--words`` words (200,000 by default): 100 true topics from
  :func:`ldacli.corpora.synthetic.zipf_topics` (exponent 1.07), whose mixture gives word frequencies that
  fall as a power of their rank, so that frequent words occur in many topics and the rarest of the
  200,000 a few times in 100 M tokens;
- document lengths like 20 Newsgroups': log-normal with the log-mean 4.42 and log-sd 0.84 of
  20NG's 18,828 documents (median 83 tokens, mean about 120, a long tail of thousands), at least 1;
- alpha 0.1.

Documents are drawn ten million tokens at a time, each chunk from its own child of the seed's
``SeedSequence``, so memory stays at the corpus plus a chunk (about 6 s a chunk on one core; the true
topics take 8 s once). The same seed draws the same corpus. Written as a scipy ``.npz`` count matrix
with its vocabulary beside it (``NAME.vocab``), which every ldacli command reads.

``train`` runs ``ldacli.train`` on it (the user's code path: the restricted start at K=1000, default
shards, the sparse sampler, snapshots, the model written to ``-o`` or a temporary file) on one
thread, recording the time of every sweep. With ``--stop-after S`` the run is stopped by SIGTERM
after sweep S, as a user's job is, writing ``--checkpoint`` if given; ``--resume`` continues it from
there (so a run longer than a lock's 30 minutes is timed in parts; without a checkpoint, the first S
sweeps of a run of ``--iterations`` are timed alone). Printed as one JSON line: the corpus's
sizes, per-sweep seconds, their mean over all sweeps run and over the second half, the whole run's
wall time, peak RSS of the whole process (the end of a run, where the snapshots' sums become the model,
is its peak), that peak as it stood at every tenth sweep's end, and the RSS before training (the corpus
loaded).

Where the time of a sweep goes as the corpus grows, counted rather than timed (so the machine's load
does not change it; this machine's perf has no hardware counters): run ``train`` under callgrind with
its cache simulation, counting only sweeps B+1 to B+S::

    valgrind --tool=callgrind --instr-atstart=no --cache-sim=yes --callgrind-out-file=OUT \
        python benchmarks/large_corpus.py train C.npz -k 1000 --iterations 22 --snapshots 1 --callgrind 20:2

then ``callgrind_annotate OUT`` gives the instructions, and the first-level and last-level data
cache misses of those sweeps (divide by the tokens and sweeps for per-token figures).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_train import _count, peak_rss_mb, reset_peak_rss  # noqa: E402

# 20 Newsgroups' document lengths (docword.20ng: 18,828 documents, 2.41 M tokens): mean and standard
# deviation of their logarithms.
LOG_MEAN, LOG_SD = 4.42, 0.84
TRUE_TOPICS = 100
CHUNK_TOKENS = 10_000_000
LENGTH_BLOCK = 1 << 16


def doc_lengths(n_tokens: int, rng: np.random.Generator) -> np.ndarray:
    """Log-normal document lengths (int64, each >= 1) summing to exactly ``n_tokens`` (the last cut)."""
    parts, total = [], 0
    while total < n_tokens:
        block = np.maximum(1, np.rint(rng.lognormal(LOG_MEAN, LOG_SD, LENGTH_BLOCK))).astype(np.int64)
        parts.append(block)
        total += int(block.sum())
    lengths = np.concatenate(parts)
    ends = np.cumsum(lengths)
    n_docs = int(np.searchsorted(ends, n_tokens)) + 1
    lengths = lengths[:n_docs]
    lengths[-1] -= int(ends[n_docs - 1]) - n_tokens
    return lengths


def make(n_tokens: int, n_words: int, seed: int):
    """The corpus (an ldacli ``Corpus``) of ``n_tokens`` tokens over ``n_words`` words."""
    from ldacli.corpora.corpus import Corpus
    from ldacli.corpora.synthetic import generate, zipf_topics

    root = np.random.SeedSequence(seed)
    lengths_seed, topics_seed = root.spawn(2)
    lengths = doc_lengths(n_tokens, np.random.default_rng(lengths_seed))
    phi = zipf_topics(TRUE_TOPICS, n_words, seed=int(topics_seed.generate_state(1)[0]))
    ends = np.cumsum(lengths)
    cuts = np.unique(np.concatenate(([0], np.searchsorted(ends, np.arange(CHUNK_TOKENS, n_tokens, CHUNK_TOKENS)) + 1,
                                     [lengths.size])))
    chunk_seeds = np.random.SeedSequence([seed, 1]).spawn(cuts.size - 1)
    parts = []
    for c, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        syn = generate(int(hi - lo), TRUE_TOPICS, n_words, doc_length=lengths[lo:hi], alpha=0.1,
                       seed=chunk_seeds[c], topics=phi)
        parts.append(syn.corpus.counts)
        vocab = syn.corpus.vocab
    counts = sp.csr_array(sp.vstack(parts, format="csr", dtype=np.int32))
    counts.sort_indices()
    return Corpus(counts, vocab, [str(d) for d in range(lengths.size)], source="large_corpus.py", format="synthetic")


def vocab_path(path: str) -> str:
    return os.path.splitext(path)[0] + ".vocab"


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def train(args) -> dict:
    import ldacli

    corpus = ldacli.read_corpus(args.corpus)
    loaded = rss_mb()
    reset_peak_rss()
    stamps: list[float] = []
    sweeps: list[int] = []
    peaks: list[float] = []  # the peak RSS so far, at each sweep's end

    def callback(it: int) -> None:
        stamps.append(time.perf_counter())
        sweeps.append(it)
        peaks.append(peak_rss_mb())
        if args.callgrind and it in (args.callgrind[0], sum(args.callgrind)):  # count only these sweeps
            subprocess.run(["callgrind_control", "-i", "on" if it == args.callgrind[0] else "off", str(os.getpid())],
                           check=True, capture_output=True)
        if args.stop_after and it == args.stop_after:
            os.kill(os.getpid(), signal.SIGTERM)  # as a scheduler stops a job: the driver writes the checkpoint

    given = dict(iterations=args.iterations, seed=args.seed, threads=1, loglik_every=args.loglik_every)
    if args.snapshots is not None:
        given["snapshots"] = args.snapshots
    if args.snapshot_interval is not None:
        given["snapshot_interval"] = args.snapshot_interval
    if args.checkpoint:
        given["checkpoint"] = args.checkpoint
    if args.resume:
        given["resume"] = args.checkpoint
    stopped = False
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        output = args.output or os.path.join(tmp, "model.npz")
        t0 = time.perf_counter()
        try:
            ldacli.train(corpus, None if args.resume else args.topics, output=output, callback=callback, **given)
        except ldacli.TrainingInterrupted:
            stopped = True
        wall = time.perf_counter() - t0
    per = np.diff(np.concatenate(([t0], stamps)))
    half = per[per.size // 2:]
    return {"corpus": args.corpus, "n_docs": corpus.n_docs, "n_words": int(np.count_nonzero(corpus.word_frequencies())),
            "n_tokens": corpus.n_tokens, "K": args.topics, "sweeps": [sweeps[0], sweeps[-1]] if sweeps else [],
            "stopped": stopped, "s_per_sweep": round(float(per.mean()), 4),
            "s_per_sweep_second_half": round(float(half.mean()), 4),
            "ns_per_token_sweep": round(float(per.mean()) / corpus.n_tokens * 1e9, 2),
            "ns_per_token_sweep_second_half": round(float(half.mean()) / corpus.n_tokens * 1e9, 2),
            "wall_s": round(wall, 2), "first_sweep_s": round(float(per[0]), 3) if per.size else None,
            "rss_loaded_mb": round(loaded), "peak_rss_mb": round(peak_rss_mb()),
            "peak_rss_by_sweep_mb": {sweeps[i]: round(peaks[i]) for i in range(0, len(sweeps), max(1, len(sweeps) // 10))},
            "per_sweep": [round(float(x), 4) for x in per]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make", help="write a generated corpus (.npz and its .vocab)")
    mk.add_argument("--tokens", required=True, help="tokens in all: 1M, 100M, 2500000, ...")
    mk.add_argument("--words", type=int, default=200_000, help="vocabulary size (default 200,000)")
    mk.add_argument("--seed", type=int, default=1)
    mk.add_argument("-o", "--output", required=True, help="the .npz to write (the vocabulary goes beside it)")
    mk.add_argument("--shards", type=int, help="write a shard folder of this many shards at --output instead, as "
                                               "ldacli convert --shards does (a corpus to train from disk)")
    tr = sub.add_parser("train", help="ldacli.train on a corpus, one thread, timing every sweep")
    tr.add_argument("corpus")
    tr.add_argument("-k", "--topics", type=int, default=1000)
    tr.add_argument("--iterations", type=int, default=100)
    tr.add_argument("--seed", type=int, default=1)
    tr.add_argument("--loglik-every", type=int, default=10)
    tr.add_argument("--snapshots", type=int, help="states phi and theta average (default: ldacli's)")
    tr.add_argument("--snapshot-interval", type=int, help="sweeps between two snapshots (default: ldacli's)")
    tr.add_argument("--checkpoint", help="checkpoint file (written at --stop-after; read with --resume)")
    tr.add_argument("--stop-after", type=int, help="stop with SIGTERM after this sweep (writing --checkpoint if given)")
    tr.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    tr.add_argument("--callgrind", type=lambda t: tuple(int(x) for x in t.split(":")), metavar="B:S",
                    help="under valgrind --tool=callgrind --instr-atstart=no: count sweeps B+1 to B+S only")
    tr.add_argument("-o", "--output", help="keep the model here (default: a temporary file, deleted)")
    tr.add_argument("--tmp", default=None, help="folder for the temporary model (default: the system's)")
    args = ap.parse_args(argv)
    if args.command == "make":
        import ldacli

        t0 = time.perf_counter()
        corpus = make(_count(args.tokens), args.words, args.seed)
        made = time.perf_counter() - t0
        if args.shards:  # what `ldacli convert --shards` writes, without the .npz in between
            corpus, _ = corpus.without_unused_words()
            ldacli.write_shards(corpus, args.output, args.shards)
        else:
            ldacli.write_corpus(corpus, args.output, vocab_path(args.output), format="npz")
        print(json.dumps({"output": args.output, "n_docs": corpus.n_docs, "n_tokens": corpus.n_tokens,
                          "words_used": int(np.count_nonzero(corpus.word_frequencies())), "nnz": corpus.counts.nnz,
                          "generate_s": round(made, 1), "peak_rss_mb": round(peak_rss_mb())}))
        return 0
    if args.resume and not args.checkpoint:
        ap.error("--resume needs --checkpoint")
    print(json.dumps(train(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
