"""Inference speed and quality: ``ldacli infer`` against MALLET's ``infer-topics``, tomotopy's
``infer``, gensim's and scikit-learn's ``transform``, one thread, as ratios in one table.

Usage (prepare untimed, then time on a quiet core)::

    python benchmarks/bench_infer.py --prepare                  # models and documents, cached
    flock ../.bench.lock taskset -c 1 python benchmarks/bench_infer.py
    python benchmarks/bench_infer.py --tools ldacli,mallet --docs 200000 --peer-docs 20000
    python benchmarks/bench_infer.py -k 1000 --length 20ng --tools ldacli,train --docs 20000
    python benchmarks/bench_infer.py --tools ldacli --build before=/tmp/old   # another build too
    python benchmarks/bench_infer.py --tools kernel               # the kernel alone, in process

Data (under ``--folder``, default ``$LDACLI_DATA/bench_infer``, a subfolder per K): 20
Newsgroups (the UCI file of ``--corpus``), every 10th document held out. Each tool trains its
own K-topic model on the other nine tenths in ``--prepare`` (ldacli and tomotopy 200 sweeps,
MALLET 200 iterations with alpha 0.1 per topic and beta 0.01, gensim and scikit-learn their
variational Bayes with 10 passes / 20 iterations). The documents inferred are *generated* from
ldacli's model (theta ~ Dir(alpha), then tokens from theta and phi): ``--length 20`` tokens each
(tweets), or ``--length 20ng``, each as long as a 20NG training document drawn at random;
``--docs`` of them for ldacli and MALLET, the first ``--peer-docs`` for the slower peers.

Timed: ``ldacli infer MODEL docs.ldac -o out`` as a whole process (npz and tsv; every
``--build NAME=ROOT`` too, a built checkout's ``src`` first on ``PYTHONPATH``), with the
defaults (100 sweeps, 50 burn-in, 1 thread); MALLET's ``InferTopics`` as a whole process
(``--num-iterations 100 --burn-in 50``; the import of the documents with the training pipe not
counted); tomotopy's ``infer`` (its defaults, one worker), gensim's ``inference`` and
scikit-learn's ``transform``, the call alone; ``kernel``: the fixed-topics kernel alone in this
process on the documents already read (``fixed_topics.theta_of_chunk`` chunk by chunk), which
with the whole process says what reading and writing cost. Token-sweeps per second = tokens x
(sweeps + 1) / seconds for the Gibbs samplers (a document's tokens are placed once, then swept
100 times). Our training's per-token rate on the same core: ``ldacli train`` of the nine tenths
for 100 and for 200 sweeps, the difference (set-up excluded).

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
from ldacli.corpora.corpus import Corpus
from ldacli.scoring.fixed_topics import completion_split, score
from ldacli.corpora.formats.ldac import ldac_lines
from trees import package_parent
from places import CORPORA, DATA

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))
SWEEPS, BURN_IN = 100, 50
PEERS = ("mallet", "tomotopy", "gensim", "sklearn")


def run(command: list[str], src: str = SRC, **kw) -> tuple[float, float]:
    """Seconds of a whole process and its peak RSS in MB (via a fresh wrapper), with ``src`` first
    on ``PYTHONPATH``."""
    wrapped = [sys.executable, "-c",
               "import resource, subprocess, sys, time; t = time.perf_counter(); "
               "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
               "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *command]
    out = subprocess.run(wrapped, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": src}, **kw).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def split(path: str) -> tuple[Corpus, Corpus]:
    corpus = ldacli.read_corpus(path)
    held = np.arange(corpus.n_docs) % 10 == 9
    part = lambda m: Corpus(corpus.counts[m], corpus.vocab, [d for d, k in zip(corpus.doc_ids, m) if k])  # noqa: E731
    return part(~held), part(held)


def generate(model, n: int, path: str, lengths: np.ndarray | None, seed: int = 7) -> None:
    """``n`` documents from the model's generative process, as LDA-C: 20 tokens each, or (with
    ``lengths``) each as long as one of ``lengths`` drawn at random."""
    rng = np.random.default_rng(seed)
    K, V = model.phi.shape
    cum = np.cumsum(model.phi, axis=1)
    cum[:, -1] = 1.0
    with open(path + ".part", "w") as f:  # renamed when whole: a killed run leaves no file taken for done
        for s in range(0, n, 20_000):
            m = min(20_000, n - s)
            size = rng.choice(lengths, size=m) if lengths is not None else np.full(m, 20)
            docs = np.repeat(np.arange(m), size)
            tc = np.cumsum(rng.dirichlet(model.alpha, size=m), axis=1)
            tc[:, -1] = 1.0
            u = rng.random(docs.size)
            step = max(1, (1 << 27) // K)  # tokens at a time: a (tokens, K) comparison of 128 M cells
            z = np.concatenate([np.minimum((u[i:i + step, None] >= tc[docs[i:i + step]]).sum(axis=1), K - 1)
                                for i in range(0, docs.size, step)])
            u2 = rng.random(docs.size)
            w = np.empty(docs.size, np.int64)
            for k in range(K):
                mask = z == k
                w[mask] = np.minimum(np.searchsorted(cum[k], u2[mask], side="right"), V - 1)
            counts = sp.csr_array((np.ones(docs.size, np.int64), (docs, w)), shape=(m, V))
            counts.sum_duplicates()
            counts.sort_indices()
            f.writelines(ldac_lines(counts))
    os.replace(path + ".part", path)


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


def sklearn_model(K: int, components: np.ndarray):
    """scikit-learn's LDA with the fitted ``components`` (its variational topic-word parameters),
    as its ``fit`` leaves what ``transform`` reads."""
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.decomposition._online_lda_fast import _dirichlet_expectation_2d

    lda = LatentDirichletAllocation(K, doc_topic_prior=0.1, topic_word_prior=0.01, max_iter=20,
                                    learning_method="batch", random_state=1, n_jobs=1)
    lda.components_ = components
    lda.exp_dirichlet_component_ = np.exp(_dirichlet_expectation_2d(components))
    lda.doc_topic_prior_, lda.topic_word_prior_ = 0.1, 0.01
    lda.n_features_in_ = components.shape[1]
    lda.random_state_ = np.random.RandomState(1)
    return lda


def gensim_model(K: int, sstats: np.ndarray):
    """gensim's LdaModel with the fitted sufficient statistics ``sstats`` (K, V)."""
    from gensim.models import LdaModel

    lda = LdaModel(num_topics=K, id2word={j: str(j) for j in range(sstats.shape[1])}, alpha=np.full(K, 0.1), eta=0.01,
                   random_state=1)
    lda.state.sstats[:] = sstats
    lda.sync_state()
    return lda


def prepare(args, folder: str) -> None:
    """Models and documents, untimed, each made once."""
    train, held = split(args.corpus)
    K = args.topics
    tools = args.tools.split(",")
    if not os.path.exists(f"{folder}/ldacli.npz"):
        ldacli.train(train, K, iterations=200, seed=1, threads=1).save(f"{folder}/ldacli.npz")
    model = ldacli.load_model(f"{folder}/ldacli.npz")
    name = docs_name(args)
    if not os.path.exists(f"{folder}/{name}.ldac"):
        lengths = np.diff(train.tokens()[1]) if args.length == "20ng" else None
        generate(model, args.docs, f"{folder}/{name}.ldac", lengths[lengths > 0] if lengths is not None else None)
        with open(f"{folder}/{name}.vocab", "w", encoding="utf-8") as f:
            f.writelines(w + "\n" for w in model.vocab)
    docs = ldacli.read_corpus(f"{folder}/{name}.ldac", vocab=f"{folder}/{name}.vocab")
    if not os.path.exists(f"{folder}/train.ldac"):
        ldacli.write_corpus(train, f"{folder}/train.ldac", f"{folder}/train.vocab")
    obs_words, obs_ptr, _, _ = completion_split(held)
    observed = Corpus(sp.csr_array((np.ones(obs_words.size, np.int64), obs_words,
                                    obs_ptr), shape=(obs_ptr.size - 1, len(held.vocab))), held.vocab, held.doc_ids)
    observed.counts.sum_duplicates()
    if not os.path.exists(f"{folder}/observed.ldac"):
        ldacli.write_corpus(observed, f"{folder}/observed.ldac", f"{folder}/observed.vocab")
    if args.tweets and not os.path.exists(f"{folder}/tweets{args.tweets}.ldac"):
        generate(model, args.tweets, f"{folder}/tweets{args.tweets}.ldac", None, seed=11)
        os.link(f"{folder}/{name}.vocab", f"{folder}/tweets{args.tweets}.vocab")
    if "mallet" in tools:
        m = Mallet(args.mallet, folder)
        if not os.path.exists(f"{folder}/mallet.inferencer"):
            write_mallet_text(train.counts, train.vocab, f"{folder}/train.txt")
            m.vectors(f"{folder}/train.txt", f"{folder}/train.mallet")
            subprocess.run(m.java("cc.mallet.topics.tui.TopicTrainer", "--input", f"{folder}/train.mallet",
                                  "--num-topics", K, "--num-iterations", 200, "--num-threads", 1, "--alpha",
                                  0.1 * K, "--beta", 0.01, "--random-seed", 1, "--inferencer-filename",
                                  f"{folder}/mallet.inferencer", "--topic-word-weights-file", f"{folder}/mallet.tww"),
                           check=True, capture_output=True)
        for part, counts, vocab in ((name, docs.counts, docs.vocab), ("observed", observed.counts, held.vocab)):
            if not os.path.exists(f"{folder}/{part}.mallet"):
                write_mallet_text(counts, vocab, f"{folder}/{part}.txt")
                m.vectors(f"{folder}/{part}.txt", f"{folder}/{part}.mallet", pipe=f"{folder}/train.mallet")
    if "tomotopy" in tools and not os.path.exists(f"{folder}/tomotopy.bin"):
        import tomotopy as tp

        mdl = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=1)
        for words in token_lists(train.counts, train.vocab):
            if words:
                mdl.add_doc(words)
        mdl.train(200, workers=1)
        mdl.save(f"{folder}/tomotopy.bin")
    if "sklearn" in tools and not os.path.exists(f"{folder}/sklearn.npy"):
        lda = sklearn_model(K, np.ones((K, train.n_words)))
        lda.fit(sp.csr_matrix(train.counts))
        np.save(f"{folder}/sklearn.npy", lda.components_)
    if "gensim" in tools and not os.path.exists(f"{folder}/gensim.npy"):
        from gensim.matutils import Sparse2Corpus
        from gensim.models import LdaModel

        lda = LdaModel(Sparse2Corpus(sp.csr_matrix(train.counts), documents_columns=False), num_topics=K,
                       alpha=np.full(K, 0.1), eta=0.01, passes=10, random_state=1)
        np.save(f"{folder}/gensim.npy", lda.state.sstats)


def docs_name(args) -> str:
    return f"docs{args.length}-{args.docs}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(CORPORA, "docword.20ng.txt.gz"))
    p.add_argument("--folder", default=os.path.join(DATA, "bench_infer"))
    p.add_argument("--mallet", default=os.path.join(DATA, "mallet"), help="a MALLET built by build-mallet.sh")
    p.add_argument("-k", "--topics", type=int, default=100)
    p.add_argument("--length", choices=("20", "20ng"), default="20", help="20 tokens a document, or 20NG's lengths")
    p.add_argument("--docs", type=int, default=200_000)
    p.add_argument("--peer-docs", type=int, default=20_000)
    p.add_argument("--tweets", type=int, default=0)
    p.add_argument("--build", action="append", default=[], help="NAME=ROOT: ldacli from a built checkout too")
    p.add_argument("--tools", default="ldacli,ldacli-tsv,mallet,tomotopy,gensim,sklearn,train")
    p.add_argument("--prepare", action="store_true", help="only make the models and documents (untimed)")
    args = p.parse_args()
    if not os.path.exists(args.corpus):
        print(f"skipped: {args.corpus} not found (set LDACLI_CORPORA)")
        return
    folder = os.path.join(args.folder, f"k{args.topics}")
    os.makedirs(folder, exist_ok=True)
    prepare(args, folder)
    if args.prepare:
        return
    tools = args.tools.split(",")
    K = args.topics
    model = ldacli.load_model(f"{folder}/ldacli.npz")
    train, held = split(args.corpus)
    _, _, score_docs, score_words = completion_split(held)
    seen = np.asarray(train.counts.sum(axis=0)).ravel() > 0  # no tool knows the other words: not scored
    score_docs, score_words = score_docs[seen[score_words]], score_words[seen[score_words]]
    index = {w: j for j, w in enumerate(held.vocab)}
    our_phi = np.zeros((K, len(held.vocab)))
    our_phi[:, [index[w] for w in model.vocab]] = model.phi
    observed = ldacli.read_corpus(f"{folder}/observed.ldac", vocab=f"{folder}/observed.vocab")
    name = docs_name(args)
    docs = ldacli.read_corpus(f"{folder}/{name}.ldac", vocab=f"{folder}/{name}.vocab")
    n, n_tokens = docs.n_docs, docs.n_tokens
    peer_tokens = int(docs.counts[:args.peer_docs].sum())

    def quality(theta, phi) -> float:
        return math.exp(-score(theta, np.ascontiguousarray(phi.T), score_docs, score_words) / score_words.size)

    rows = Rows()
    ldacli_cmd = [sys.executable, "-m", "ldacli", "infer", f"{folder}/ldacli.npz", "-q", "--seed", "1",
                  "--threads", "1"]
    builds = [("", SRC)] + [(f"@{b.split('=', 1)[0]}", package_parent(b.split("=", 1)[1]))
                            for b in args.build]
    for tool in tools:
        if tool.split(":")[0] in ("ldacli", "ldacli-tsv"):
            # ldacli[-tsv][:ITERATIONS:BURN_IN]
            base, *sweeps = tool.split(":")
            iterations, burn_in = map(int, sweeps) if sweeps else (SWEEPS, BURN_IN)
            extra = ["--iterations", str(iterations), "--burn-in", str(burn_in)] if sweeps else []
            for suffix, src in builds:
                out = f"{folder}/theta." + ("tsv" if base == "ldacli-tsv" else "npz")
                seconds, peak = run(ldacli_cmd + extra + [f"{folder}/{name}.ldac", "-o", out], src)
                ppl = float("nan")
                if not suffix:
                    result, _ = ldacli.infer(model, observed, seed=1, threads=1, iterations=iterations,
                                             burn_in=burn_in)
                    ppl = quality(result.theta, our_phi)
                rows.append((tool + suffix, n, n_tokens * (iterations + 1), seconds, peak, ppl))
        elif tool == "kernel":
            from ldacli.corpora.counts import tokens_of
            from ldacli.scoring.fixed_topics import PriorTables, cut_chunks, theta_of_chunk

            alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
            phi_wk = np.ascontiguousarray(model.phi.T)
            t0 = time.perf_counter()
            prior = PriorTables.of(phi_wk, alpha)
            tables = time.perf_counter() - t0
            chunks = list(cut_chunks([tokens_of(docs.counts)]))
            t0 = time.perf_counter()
            for words, doc_ptr in chunks:
                theta_of_chunk(phi_wk, prior, alpha, words, doc_ptr, SWEEPS, BURN_IN, 1, 12345)
            seconds = time.perf_counter() - t0
            print(f"kernel: alias tables {tables:.2f} s", flush=True)
            rows.append(("kernel", n, n_tokens * (SWEEPS + 1), seconds, 0, float("nan")))
        elif tool == "mallet":
            m = Mallet(args.mallet, folder)
            seconds, peak = run(m.infer_command(f"{folder}/{name}.mallet", f"{folder}/mallet.out", SWEEPS, BURN_IN))
            subprocess.run(m.infer_command(f"{folder}/observed.mallet", f"{folder}/mallet.observed", SWEEPS, BURN_IN),
                           check=True, capture_output=True)
            phi = mallet_phi(f"{folder}/mallet.tww", held.vocab, K)
            theta = read_mallet_theta(f"{folder}/mallet.observed", K)
            rows.append((tool, n, n_tokens * (SWEEPS + 1), seconds, peak, quality(theta, phi)))
        elif tool == "tomotopy":
            import tomotopy as tp

            mdl = tp.LDAModel.load(f"{folder}/tomotopy.bin")
            some = [mdl.make_doc(w) for w in token_lists(docs.counts[:args.peer_docs], docs.vocab)]
            t0 = time.perf_counter()
            mdl.infer(some, workers=1)
            seconds = time.perf_counter() - t0
            obs = [mdl.make_doc(w) for w in token_lists(observed.counts, observed.vocab)]
            theta = np.array([d for d in mdl.infer(obs, workers=1)[0]])
            index = {w: j for j, w in enumerate(mdl.used_vocabs)}
            phi = np.full((K, len(held.vocab)), 1e-12)
            cols = [j for j, w in enumerate(held.vocab) if w in index]
            for k in range(K):
                dist = np.asarray(mdl.get_topic_word_dist(k))
                phi[k, cols] = dist[[index[held.vocab[j]] for j in cols]]
            rows.append((tool, args.peer_docs, peer_tokens * (SWEEPS + 1), seconds, 0,
                         quality(theta, phi / phi.sum(axis=1, keepdims=True))))
        elif tool in ("gensim", "sklearn"):
            from gensim.matutils import Sparse2Corpus

            # the documents' words (the model's vocabulary) as columns of the training corpus's
            some = docs.counts[:args.peer_docs].tocoo()
            column = {w: j for j, w in enumerate(held.vocab)}
            into = np.array([column[w] for w in docs.vocab])
            X = sp.csr_matrix((some.data, (some.row, into[some.col])), shape=(some.shape[0], len(held.vocab)))
            if tool == "sklearn":
                lda = sklearn_model(K, np.load(f"{folder}/sklearn.npy"))
                t0 = time.perf_counter()
                lda.transform(X)
                seconds = time.perf_counter() - t0
                theta = lda.transform(sp.csr_matrix(observed.counts))
                phi = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
            else:
                lda = gensim_model(K, np.load(f"{folder}/gensim.npy"))
                t0 = time.perf_counter()
                lda.inference(list(Sparse2Corpus(X, documents_columns=False)))
                seconds = time.perf_counter() - t0
                gamma, _ = lda.inference(list(Sparse2Corpus(sp.csr_matrix(observed.counts), documents_columns=False)))
                theta = gamma / gamma.sum(axis=1, keepdims=True)
                phi = lda.get_topics()
            rows.append((tool, args.peer_docs, float("nan"), seconds, 0, quality(theta, phi)))
        elif tool == "train":
            base = [sys.executable, "-m", "ldacli", "train", f"{folder}/train.ldac", "-k", str(K), "--seed", "1",
                    "--threads", "1", "-q", "-o", f"{folder}/t.npz"]
            t100, _ = run(base + ["--iterations", "100"])
            t200, _ = run(base + ["--iterations", "200"])
            rows.append(("train", train.n_docs, train.n_tokens * 100, t200 - t100, 0, float("nan")))
    if args.tweets:
        path = f"{folder}/tweets{args.tweets}.ldac"
        seconds, peak = run(ldacli_cmd + [path, "-o", f"{folder}/tweets.npz"])
        rows.append(("ldacli-1M", args.tweets, args.tweets * 20 * (SWEEPS + 1), seconds, peak, float("nan")))
    report(rows, K, args.length, held.n_docs)


class Rows(list):
    """The table's rows, each also printed (to stderr) as it is measured, so that a tool that
    fails later does not lose the others' figures."""

    def append(self, row: tuple) -> None:
        print("measured:", *row, file=sys.stderr, flush=True)
        super().append(row)


def report(rows: list[tuple], K: int, length: str, held_docs: int) -> None:
    """One table: documents/s, token-sweeps/s and its ratio to training's, peak RSS, ours over
    each, held-out perplexity."""
    fastest = max((r[1] / r[3] for r in rows if r[0] in PEERS), default=float("nan"))
    ours = next((r[1] / r[3] for r in rows if r[0] == "ldacli"), float("nan"))
    train_rate = next((r[2] / r[3] for r in rows if r[0] == "train"), float("nan"))
    print(f"K={K}, documents of {length} tokens generated from ldacli's 20NG model; one thread; "
          f"quality: completion perplexity on the held-out tenth of 20NG ({held_docs} documents)")
    print(f"{'tool':>14} {'docs':>8} {'seconds':>8} {'docs/s':>9} {'M tok-sw/s':>10} {'/train':>6} "
          f"{'peak MB':>8} {'ldacli x':>8} {'perplexity':>10}")
    for tool, docs, token_sweeps, seconds, peak, ppl in rows:
        per_s = docs / seconds
        rate = token_sweeps / seconds
        print(f"{tool:>14} {docs:>8} {seconds:8.2f} {per_s:9.0f} {rate / 1e6:10.2f} "
              f"{rate / train_rate:6.2f} {peak:8.0f} {ours / per_s:8.2f} {ppl:10.1f}", flush=True)
    print(f"ldacli / fastest peer: {ours / fastest:.2f}x")


if __name__ == "__main__":
    main()
