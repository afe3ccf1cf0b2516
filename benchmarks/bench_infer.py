"""Inference speed and quality: ``ldacli infer`` against MALLET's ``infer-topics``, tomotopy's
``infer``, gensim's and scikit-learn's ``transform``, one thread, as ratios in one table.

Usage (prepare untimed, then time on a quiet core)::

    python benchmarks/bench_infer.py --prepare                  # models and documents, cached
    flock /work/.bench.lock taskset -c 1 python benchmarks/bench_infer.py
    python benchmarks/bench_infer.py --tools ldacli,mallet --docs 200000 --peer-docs 20000

Data (under ``--folder``, default ``$LDACLI_DATA/bench_infer``): 20 Newsgroups (the UCI file of
``--corpus``), every 10th document held out. Each tool trains its own K-topic model on the other
nine tenths (untimed; ldacli and tomotopy 200 sweeps, MALLET 200 iterations with alpha 0.1 per
topic and beta 0.01, gensim and scikit-learn their variational Bayes with 10 passes / 20
iterations). The short documents are *generated* from ldacli's model (theta ~ Dir(alpha), then
20 tokens from theta and phi): ``--docs`` of them for ldacli and MALLET, the first
``--peer-docs`` for the slower peers.

Timed: ``ldacli infer MODEL short.ldac -o out`` as a whole process (npz and tsv), with the
defaults (100 sweeps, 50 burn-in, 1 thread); MALLET's ``InferTopics`` as a whole process
(``--num-iterations 100 --burn-in 50``; the import of the documents with the training pipe not
counted); tomotopy's ``infer`` (its defaults, one worker), gensim's ``inference`` and
scikit-learn's ``transform``, the call alone. Token-sweeps per second = tokens x (sweeps + 1)
/ seconds for the Gibbs samplers. Our training's per-token rate on the same core: ``ldacli
train`` of the nine tenths for 100 and for 200 sweeps, the difference (set-up excluded).

Quality: document completion on the held-out tenth, one evaluator for all: each tool infers
theta from the observed half of every held-out document (``completion_split``) with the same
settings as timed, and the scored half is scored with that tool's own topics
(``fixed_topics.score``); printed as perplexity. ``--tweets N`` also times ldacli on N
generated 20-token documents (whole process, its peak RSS).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

import ldacli
from ldacli.corpus import Corpus
from ldacli.fixed_topics import completion_split, score
from ldacli.formats.ldac import ldac_lines

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))
DATA = os.environ.get("LDACLI_DATA", "/work/data")
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(HERE, "..", "..", "shared", "corpora"))
LENGTH = 20


def run(command: list[str], **kw) -> float:
    """Seconds of a whole process (and its peak RSS in MB, via a fresh wrapper)."""
    wrapped = [sys.executable, "-c",
               "import resource, subprocess, sys, time; t = time.perf_counter(); "
               "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
               "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *command]
    out = subprocess.run(wrapped, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": SRC}, **kw).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def split(path: str) -> tuple[Corpus, Corpus]:
    corpus = ldacli.read_corpus(path)
    held = np.arange(corpus.n_docs) % 10 == 9
    part = lambda m: Corpus(corpus.counts[m], corpus.vocab, [d for d, k in zip(corpus.doc_ids, m) if k])  # noqa: E731
    return part(~held), part(held)


def generate(model, n: int, path: str, seed: int = 7) -> None:
    """``n`` documents of LENGTH tokens from the model's generative process, as LDA-C."""
    rng = np.random.default_rng(seed)
    K, V = model.phi.shape
    cum = np.cumsum(model.phi, axis=1)
    cum[:, -1] = 1.0
    with open(path, "w") as f:
        for s in range(0, n, 50_000):
            m = min(50_000, n - s)
            tc = np.cumsum(rng.dirichlet(model.alpha, size=m), axis=1)
            tc[:, -1] = 1.0
            u = rng.random((m, LENGTH))
            z = np.minimum((u[:, :, None] >= tc[:, None, :]).sum(axis=2), K - 1)
            u2 = rng.random((m, LENGTH))
            w = np.empty((m, LENGTH), np.int64)
            for k in range(K):
                mask = z == k
                w[mask] = np.minimum(np.searchsorted(cum[k], u2[mask], side="right"), V - 1)
            counts = sp.csr_array((np.ones(m * LENGTH, np.int64), (np.repeat(np.arange(m), LENGTH), w.ravel())),
                                  shape=(m, V))
            counts.sum_duplicates()
            counts.sort_indices()
            f.writelines(ldac_lines(counts))


def token_lists(counts, vocab) -> list[list[str]]:
    vocab = np.array(vocab)
    return [np.repeat(vocab[row.indices], row.data).tolist() for row in counts]


def write_mallet_text(counts, vocab, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for d, words in enumerate(token_lists(counts, vocab)):
            f.write(f"d{d}\tX\t{' '.join(words)}\n")


class Mallet:
    def __init__(self, home: str, folder: str):
        self.cp = f"{home}/target/classes:{home}/target/dependency/*"
        self.folder = folder

    def java(self, cls: str, *args) -> list[str]:
        return ["java", "-Xmx4g", "-cp", self.cp, cls, *map(str, args)]

    def vectors(self, text: str, out: str, pipe: str | None = None) -> None:
        extra = ["--use-pipe-from", pipe] if pipe else []
        subprocess.run(self.java("cc.mallet.classify.tui.Csv2Vectors", "--input", text, "--output", out,
                                 "--keep-sequence", "--token-regex", r"\S+", *extra), check=True,
                       capture_output=True)

    def infer_command(self, vectors: str, out: str, iterations: int, burn_in: int) -> list[str]:
        return self.java("cc.mallet.topics.tui.InferTopics", "--inferencer", f"{self.folder}/mallet.inferencer",
                         "--input", vectors, "--output-doc-topics", out, "--num-iterations", iterations,
                         "--burn-in", burn_in, "--random-seed", 1)


def read_mallet_theta(path: str, K: int) -> np.ndarray:
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.split()
            rows.append([float(x) for x in parts[2:2 + K]])
    return np.array(rows)


def mallet_phi(path: str, vocab: list[str], K: int) -> np.ndarray:
    index = {w: j for j, w in enumerate(vocab)}
    phi = np.zeros((K, len(vocab)))
    with open(path, encoding="utf-8") as f:
        for line in f:
            k, w, x = line.split("\t")
            if w in index:
                phi[int(k), index[w]] = float(x)
    phi[phi == 0] = 0.01
    return phi / phi.sum(axis=1, keepdims=True)


def prepare(args, folder: str) -> None:
    train, held = split(args.corpus)
    K = args.topics
    if not os.path.exists(f"{folder}/ldacli.npz"):
        ldacli.train(train, K, iterations=200, seed=1, threads=1).save(f"{folder}/ldacli.npz")
    model = ldacli.load_model(f"{folder}/ldacli.npz")
    if not os.path.exists(f"{folder}/short.ldac"):
        generate(model, args.docs, f"{folder}/short.ldac")
        with open(f"{folder}/short.vocab", "w", encoding="utf-8") as f:
            f.writelines(w + "\n" for w in model.vocab)
    short = ldacli.read_corpus(f"{folder}/short.ldac", vocab=f"{folder}/short.vocab")
    ldacli.write_corpus(train, f"{folder}/train.ldac", f"{folder}/train.vocab")
    obs_words, obs_ptr, _, _ = completion_split(held)
    observed = Corpus(sp.csr_array((np.ones(obs_words.size, np.int64), obs_words,
                                    obs_ptr), shape=(obs_ptr.size - 1, len(held.vocab))), held.vocab, held.doc_ids)
    observed.counts.sum_duplicates()
    ldacli.write_corpus(observed, f"{folder}/observed.ldac", f"{folder}/observed.vocab")
    tools = args.tools.split(",")
    if "mallet" in tools and not os.path.exists(f"{folder}/mallet.inferencer"):
        m = Mallet(args.mallet, folder)
        write_mallet_text(train.counts, train.vocab, f"{folder}/train.txt")
        m.vectors(f"{folder}/train.txt", f"{folder}/train.mallet")
        subprocess.run(m.java("cc.mallet.topics.tui.TopicTrainer", "--input", f"{folder}/train.mallet",
                              "--num-topics", K, "--num-iterations", 200, "--num-threads", 1, "--alpha", 0.1 * K,
                              "--beta", 0.01, "--random-seed", 1, "--inferencer-filename",
                              f"{folder}/mallet.inferencer", "--topic-word-weights-file", f"{folder}/mallet.tww"),
                       check=True, capture_output=True)
        for name, counts, vocab in (("short", short.counts, short.vocab), ("observed", observed.counts, held.vocab)):
            write_mallet_text(counts, vocab, f"{folder}/{name}.txt")
            m.vectors(f"{folder}/{name}.txt", f"{folder}/{name}.mallet", pipe=f"{folder}/train.mallet")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("--folder", default=os.path.join(DATA, "bench_infer"))
    p.add_argument("--mallet", default=os.path.join(DATA, "mallet"), help="a MALLET built by build-mallet.sh")
    p.add_argument("-k", "--topics", type=int, default=100)
    p.add_argument("--docs", type=int, default=200_000)
    p.add_argument("--peer-docs", type=int, default=20_000)
    p.add_argument("--tweets", type=int, default=0)
    p.add_argument("--tools", default="ldacli,ldacli-tsv,mallet,tomotopy,gensim,sklearn,train")
    p.add_argument("--prepare", action="store_true", help="only make the models and documents (untimed)")
    args = p.parse_args()
    if not os.path.exists(args.corpus):
        print(f"skipped: {args.corpus} not found (set LDACLI_CORPORA)")
        return
    folder = args.folder
    os.makedirs(folder, exist_ok=True)
    prepare(args, folder)
    if args.prepare:
        return
    tools = args.tools.split(",")
    K = args.topics
    model = ldacli.load_model(f"{folder}/ldacli.npz")
    train, held = split(args.corpus)
    _, _, score_docs, score_words = completion_split(held)
    observed = ldacli.read_corpus(f"{folder}/observed.ldac", vocab=f"{folder}/observed.vocab")

    def quality(theta, phi) -> float:
        return math.exp(-score(theta, np.ascontiguousarray(phi.T), score_docs, score_words) / score_words.size)

    rows = []
    n = args.docs
    ldacli_cmd = [sys.executable, "-m", "ldacli", "infer", f"{folder}/ldacli.npz", "-q", "--seed", "1",
                  "--threads", "1"]
    for tool in tools:
        if tool in ("ldacli", "ldacli-tsv"):
            out = f"{folder}/theta." + ("tsv" if tool == "ldacli-tsv" else "npz")
            seconds, peak = run(ldacli_cmd + [f"{folder}/short.ldac", "-o", out])
            result, _ = ldacli.infer(model, observed, seed=1, threads=1)
            rows.append((tool, n, seconds, n * LENGTH * 101 / seconds, peak, quality(result.theta, model.phi)))
        elif tool == "mallet":
            m = Mallet(args.mallet, folder)
            seconds, peak = run(m.infer_command(f"{folder}/short.mallet", f"{folder}/mallet.short", 100, 50))
            subprocess.run(m.infer_command(f"{folder}/observed.mallet", f"{folder}/mallet.observed", 100, 50),
                           check=True, capture_output=True)
            phi = mallet_phi(f"{folder}/mallet.tww", held.vocab, K)
            rows.append((tool, n, seconds, n * LENGTH * 101 / seconds, peak,
                         quality(read_mallet_theta(f"{folder}/mallet.observed", K), phi)))
        elif tool == "tomotopy":
            import tomotopy as tp

            path = f"{folder}/tomotopy.bin"
            if not os.path.exists(path):
                mdl = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=1)
                for words in token_lists(train.counts, train.vocab):
                    if words:
                        mdl.add_doc(words)
                mdl.train(200, workers=1)
                mdl.save(path)
            mdl = tp.LDAModel.load(path)
            short = ldacli.read_corpus(f"{folder}/short.ldac", vocab=f"{folder}/short.vocab")
            docs = [mdl.make_doc(w) for w in token_lists(short.counts[:args.peer_docs], short.vocab)]
            t0 = time.perf_counter()
            mdl.infer(docs, workers=1)
            seconds = time.perf_counter() - t0
            obs = [mdl.make_doc(w) for w in token_lists(observed.counts, observed.vocab)]
            theta = np.array([d for d in mdl.infer(obs, workers=1)[0]])
            index = {w: j for j, w in enumerate(mdl.used_vocabs)}
            phi = np.full((K, len(held.vocab)), 1e-12)
            cols = [j for j, w in enumerate(held.vocab) if w in index]
            for k in range(K):
                dist = np.asarray(mdl.get_topic_word_dist(k))
                phi[k, cols] = dist[[index[held.vocab[j]] for j in cols]]
            rows.append((tool, args.peer_docs, seconds, args.peer_docs * LENGTH * 101 / seconds, 0,
                         quality(theta, phi / phi.sum(axis=1, keepdims=True))))
        elif tool in ("gensim", "sklearn"):
            short = ldacli.read_corpus(f"{folder}/short.ldac", vocab=f"{folder}/short.vocab")
            X = sp.csr_matrix(short.counts[:args.peer_docs])
            if tool == "sklearn":
                from sklearn.decomposition import LatentDirichletAllocation

                lda = LatentDirichletAllocation(K, doc_topic_prior=0.1, topic_word_prior=0.01, max_iter=20,
                                                learning_method="batch", random_state=1, n_jobs=1)
                lda.fit(sp.csr_matrix(train.counts))
                t0 = time.perf_counter()
                lda.transform(X)
                seconds = time.perf_counter() - t0
                theta = lda.transform(sp.csr_matrix(observed.counts))
                phi = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
            else:
                from gensim.matutils import Sparse2Corpus
                from gensim.models import LdaModel

                lda = LdaModel(Sparse2Corpus(sp.csr_matrix(train.counts), documents_columns=False), num_topics=K,
                               alpha=np.full(K, 0.1), eta=0.01, passes=10, random_state=1)
                t0 = time.perf_counter()
                lda.inference(list(Sparse2Corpus(X, documents_columns=False)))
                seconds = time.perf_counter() - t0
                gamma, _ = lda.inference(list(Sparse2Corpus(sp.csr_matrix(observed.counts), documents_columns=False)))
                theta = gamma / gamma.sum(axis=1, keepdims=True)
                phi = lda.get_topics()
            rows.append((tool, args.peer_docs, seconds, float("nan"), 0, quality(theta, phi)))
        elif tool == "train":
            ldacli.write_corpus(train, f"{folder}/train.ldac", f"{folder}/train.vocab")
            base = [sys.executable, "-m", "ldacli", "train", f"{folder}/train.ldac", "-k", str(K), "--seed", "1",
                    "--threads", "1", "-q", "-o", f"{folder}/t.npz"]
            t100, _ = run(base + ["--iterations", "100"])
            t200, _ = run(base + ["--iterations", "200"])
            rows.append(("train", train.n_docs, t200 - t100, train.n_tokens * 100 / (t200 - t100), 0, float("nan")))
    if args.tweets:
        path = f"{folder}/tweets{args.tweets}.ldac"
        if not os.path.exists(path):
            generate(model, args.tweets, path, seed=11)
            os.link(f"{folder}/short.vocab", path[:-5] + ".vocab")
        seconds, peak = run(ldacli_cmd + [path, "-o", f"{folder}/tweets.npz"])
        rows.append(("ldacli-1M", args.tweets, seconds, args.tweets * LENGTH * 101 / seconds, peak, float("nan")))
    fastest = max((r[1] / r[2] for r in rows if r[0] not in ("ldacli", "ldacli-tsv", "ldacli-1M", "train")),
                  default=float("nan"))
    ours = next((r[1] / r[2] for r in rows if r[0] == "ldacli"), float("nan"))
    train_rate = next((r[3] for r in rows if r[0] == "train"), float("nan"))
    print(f"K={K}, {LENGTH}-token documents generated from ldacli's 20NG model; one thread; "
          f"quality: completion perplexity on the held-out tenth of 20NG ({held.n_docs} documents)")
    print(f"{'tool':>10} {'docs':>8} {'seconds':>8} {'docs/s':>9} {'M tok-sw/s':>10} {'/train':>6} {'peak MB':>8} "
          f"{'ldacli x':>8} {'perplexity':>10}")
    for tool, docs, seconds, rate, peak, ppl in rows:
        per_s = docs / seconds
        print(f"{tool:>10} {docs:>8} {seconds:8.1f} {per_s:9.0f} {rate / 1e6:10.2f} {rate / train_rate:6.2f} "
              f"{peak:8.0f} {ours / per_s:8.2f} {ppl:10.1f}", flush=True)
    print(f"ldacli / fastest peer: {ours / fastest:.2f}x")


if __name__ == "__main__":
    main()
