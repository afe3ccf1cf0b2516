"""Nightly updates (``train NIGHT --update MODEL``) against the warm-started retrain of the grown
corpus they replace: cost and quality (issue 46).

Usage::

    python benchmarks/update.py nights --tokens 2e6,2e7 --nights 0.01,0.05,0.1 -k 100 [--variants JSON]
    python benchmarks/update.py chain --tokens 2e6 --nights 30 -k 100 [--refresh 10]
    python benchmarks/update.py fading --tokens 2e6 -k 20 --true-topics 20 --half-life 3
    python benchmarks/update.py cost --corpus zipf100M.npz --tokens 2e6,2e7,1e8 --night-tokens 2e5 -k 1000
    python benchmarks/update.py real --corpus docword.kos.txt.gz --vocab vocab.kos.txt -k 20

The corpora are drawn from LDA's generative process (:func:`ldacli.corpora.synthetic.generate`)
over a Zipfian vocabulary (:func:`~ldacli.corpora.synthetic.zipf_topics`, ``--words`` words) with
20 Newsgroups' document lengths (log-normal, log-mean 4.42, log-sd 0.84): the old corpus from
``K_true`` topics; a night from the same topics, and from a new theme, a topic the old corpus
never had, in ``--new-share`` of its documents (each such document mixes the new theme with old
topics). Two held-out sets are scored by ``ldacli perplexity`` (document completion, seed 1):
documents like the old ones, and documents of the new theme.

Every run is a whole ``ldacli`` process: wall time and peak RSS (``wait4``'s ``ru_maxrss``, from a
small process that starts it: the first version measured from this script, and Linux counted the
script's own memory, the corpora it holds, in every run's peak).

- ``nights``: the model of the old corpus (200 sweeps), then for each night size the warm-started
  retrain of old + night (``--warm-start``, 100 sweeps, the README's cron line) and the update
  (``--update-sweeps``) in each of its ``--variants``: time, peak RSS, both held-out perplexities,
  the update's cost as a share of the retrain's, the topics it freed (``params.update.freed``: the
  night's tokens on each, its gain, the merge's loss, kept or not), and its share of the retrain's gain on the new
  theme (with ``--reference``, also of the part of that gain the night brings: the retrain of the
  old corpus alone, warm-started the same, improves on the old model too). ``--keep PATH`` keeps
  the old model, which a run of other night sizes reuses with ``--old-model PATH`` (the world is
  drawn again from its seeds, the same). ``--variants`` is JSON, a name for each variant and what it adds to the update's command
  line (``{"free 3": {"args": ["--free-topics", "3"]}}``) or, with ``"rejuvenate": S``, Canini et
  al.'s rejuvenation emulated: a random share S of the old documents sampled again with the night
  (given as new documents), the old evidence weighed ``1 - S`` (``--half-life``) for their part.
- ``chain``: ``--nights`` nights in a row, each updating the last model (with ``--refresh N``,
  a warm-started retrain every N nights instead), against a warm-started retrain of everything
  at the end, and the nights whose update kept a freed topic (``births``: night, topic, the
  topic merged into).
- ``fading``: a theme of the old corpus that no night brings again, updated night after night with
  and without ``--half-life``, after each night: the share of the evidence of the old model's topic
  nearest the fading theme, the share of the evidence on the fading theme's own words (those of
  which the fading theme has more than half the mass of the old themes), and how alike that topic
  still is to the fading theme (the Bhattacharyya coefficient of its phi and the theme). Zipfian
  themes share their frequent words, which the nights keep bringing to every topic, the fading
  one's too; with fewer topics than true themes (``-k`` below ``--true-topics``) that topic holds
  themes that still come as well.
- ``real``: how freed topics are judged on a real corpus (``--corpus``, a UCI ``docword`` file, with
  ``--vocab``): a held-out theme, the documents that a model of all of them (100 sweeps) gives half or
  more to one topic of median size; OLD, 85% of the other documents (300 sweeps); for each share of
  ``--nights``, a plain night (other documents, that share of OLD's tokens) and one half of the held-out
  theme; each update (100 sweeps, seed 2) prints its freed topics: the night's tokens on each, the gain,
  the loss, whether it was kept, and its alpha beside the model's mean (docs/guide/retraining.md, "How the judgement was chosen").
- ``cost``: the same night on models of growing corpora: the first ``--tokens`` of ``--corpus`` (a
  large corpus, ``large_corpus.py make``), each trained for ``--old-sweeps``, then updated with the
  corpus's last documents (``--night-tokens`` of them, never in an old corpus; their tokens of words
  the smallest old corpus lacks left out, so that every model samples the same tokens: the 2 M
  model would leave 2% of them out, and sample the rest on one shard, not two), ``--repeat`` times:
  the update's wall time (the median, and every run's) and peak RSS, the tokens it sampled and on
  how many shards, and the sizes of the model files; then the same of an update of the updated
  model (the same night again, as new documents: the nightly case, whose model carries its
  evidence), to show that an update costs what its night holds, not what the model has seen.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.write import write_corpus
from ldacli.corpora.synthetic import generate, zipf_topics
from ldacli.methods import update as updating
from ldacli.model import Model

LOG_MEAN, LOG_SD = 4.42, 0.84  # 20 Newsgroups' document lengths
# where the ldacli processes run: not the repository's root, whose ldacli/ has no compiled kernels
AWAY = tempfile.gettempdir()


def lengths(n_tokens: float, rng: np.random.Generator) -> np.ndarray:
    """Document lengths like 20NG's adding up to about ``n_tokens``."""
    out = []
    total = 0
    while total < n_tokens:
        draw = np.maximum(1, np.rint(rng.lognormal(LOG_MEAN, LOG_SD, size=10_000))).astype(np.int64)
        out.append(draw)
        total += int(draw.sum())
    ls = np.concatenate(out)
    return ls[: int(np.searchsorted(np.cumsum(ls), n_tokens)) + 1]


def draw(topics: np.ndarray, n_tokens: float, seed: int, prefix: str, alpha: float = 0.1) -> Corpus:
    """Documents of ``topics`` (a row each), about ``n_tokens`` tokens, ids ``prefix0, prefix1, ...``."""
    ls = lengths(n_tokens, np.random.default_rng(seed))
    c = generate(ls.size, topics.shape[0], topics.shape[1], doc_length=ls, alpha=alpha, seed=seed, topics=topics).corpus
    return Corpus(c.counts, list(c.vocab), [f"{prefix}{i}" for i in range(c.n_docs)])


def stacked(*corpora: Corpus) -> Corpus:
    return Corpus(sp.vstack([c.counts for c in corpora]).tocsr(), list(corpora[0].vocab),
                  [d for c in corpora for d in c.doc_ids])


class World:
    """The true topics: ``K`` old ones, a new theme (row K) and a theme that fades (row 0)."""

    def __init__(self, K: int, V: int, seed: int = 1):
        self.topics = zipf_topics(K + 1, V, seed=seed)
        self.K = K

    def old(self, n_tokens: float, seed: int, prefix: str) -> Corpus:
        return draw(self.topics[: self.K], n_tokens, seed, prefix)

    def new_theme(self, n_tokens: float, seed: int, prefix: str) -> Corpus:
        # the new theme with three old topics, the theme about half of each document
        return draw(np.vstack([self.topics[self.K:], self.topics[1:4]]), n_tokens, seed, prefix, alpha=0.5)

    def without_fading(self, n_tokens: float, seed: int, prefix: str) -> Corpus:
        return draw(self.topics[1: self.K], n_tokens, seed, prefix)

    def night(self, n_tokens: float, new_share: float, seed: int, prefix: str) -> Corpus:
        parts = [self.old(n_tokens * (1 - new_share), seed, prefix + "o")]
        if new_share > 0:
            parts.append(self.new_theme(n_tokens * new_share, seed + 7919, prefix + "n"))
        return stacked(*parts)


# Starts ldacli from a small process and reports its peak RSS: Linux counts in a child's ru_maxrss
# the high-water mark of the memory it was forked from, which for a child of this script (holding
# the corpora) is this script's, not ldacli's.
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "ldacli", *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"\\npeak-rss-kb {usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(*args: str, env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one ``ldacli`` process, measured with ``wait4`` by a
    small process that starts it (:data:`LAUNCHER`)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *args, "-q"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, cwd=AWAY, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - t0
    err = proc.stderr.decode()
    if proc.returncode != 0:
        raise SystemExit(f"ldacli {' '.join(args)}: exit status {proc.returncode}: {err[-2000:]}")
    return seconds, int(err.rsplit("peak-rss-kb ", 1)[1].split()[0]) / 1024


def perplexity(model: str, held: str) -> float:
    out = subprocess.run([sys.executable, "-m", "ldacli", "perplexity", model, held, "--seed", "1", "--format", "json",
                          "-q"], check=True, capture_output=True, text=True, cwd=AWAY).stdout
    return float(json.loads(out)["perplexity"])


def write(corpus: Corpus, folder: str, name: str) -> str:
    path = os.path.join(folder, name + ".ldac")
    write_corpus(corpus, path, os.path.join(folder, name + ".vocab"), format="ldac")
    return path


def scored(model: str, held: dict[str, str]) -> dict[str, float]:
    return {name: perplexity(model, path) for name, path in held.items()}


def nights(args) -> None:
    variants = json.loads(args.variants)
    for tokens in args.tokens:
        world = World(args.true_topics, args.words)
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            old = world.old(tokens, 1, "d")
            held = {"old-like": write(world.old(min(2e5, tokens / 10), 2, "h"), tmp, "held-old"),
                    "new-theme": write(world.new_theme(min(1e5, tokens / 20), 3, "n"), tmp, "held-new")}
            old_path = write(old, tmp, "old")
            model = args.old_model or os.path.join(tmp, "old-model.npz")
            t = m = None
            if not args.old_model:
                t, m = run_measured("train", old_path, "-k", str(args.topics), "--iterations", str(args.old_sweeps),
                                    "--seed", "1", "--threads", "1", "-o", model)
                if args.keep:
                    shutil.move(model, args.keep)  # (--keep may be on another file system than --tmp)
                    model = args.keep
            base = scored(model, held)
            print(json.dumps({"tokens": old.n_tokens, "model": model if args.old_model else "old",
                              "seconds": t and round(t, 2), "peak_mb": m and round(m, 1), **base}), flush=True)
            for share in args.nights:
                night = world.night(tokens * share, args.new_share, 100 + int(share * 1000), "x")
                night_path = write(night, tmp, "night")
                grown_path = write(stacked(old, night), tmp, "grown")
                out = os.path.join(tmp, "retrain.npz")
                t, m = run_measured("train", grown_path, "--warm-start", model, "--iterations", str(args.retrain_sweeps),
                                    "--seed", "2", "--threads", "1", "-o", out)
                r = {"seconds": t, "peak_mb": m, **scored(out, held)}
                gain_r = base["new-theme"] - r["new-theme"]
                night_gain = None
                if args.reference:  # the retrain's gain that the night brings: against old alone, retrained the same
                    same = os.path.join(tmp, "retrain-old.npz")
                    run_measured("train", old_path, "--warm-start", model, "--iterations", str(args.retrain_sweeps),
                                 "--seed", "2", "--threads", "1", "-o", same)
                    alone = scored(same, held)
                    night_gain = alone["new-theme"] - r["new-theme"]
                    print(json.dumps({"tokens": old.n_tokens, "night": share, "retrain_of_old_alone": alone}), flush=True)
                for name, spec in variants.items():
                    path = night_path
                    extra = list(spec.get("args", []))
                    if spec.get("rejuvenate"):
                        s_ = spec["rejuvenate"]
                        pick = np.sort(np.random.default_rng(5).choice(old.n_docs, int(round(s_ * old.n_docs)), replace=False))
                        sample = Corpus(old.counts[pick], list(old.vocab), [f"r{i}" for i in pick])
                        path = write(stacked(night, sample), tmp, "night-rejuv")
                        extra += ["--half-life", repr(float(-1.0 / np.log2(1 - s_)))]
                    out = os.path.join(tmp, f"update-{name}.npz")
                    t, m = run_measured("train", path, "--update", model, "--iterations", str(args.update_sweeps), *extra,
                                        "--seed", "2", "--threads", "1", "-o", out, env=spec.get("env"))
                    u = {"seconds": t, "peak_mb": m, **scored(out, held)}
                    freed = Model.load(out).params["update"]["freed"]
                    print(json.dumps({
                        "tokens": old.n_tokens, "night": share, "night_tokens": night.n_tokens, "variant": name,
                        "retrain": {k: round(v, 2) for k, v in r.items()}, "update": {k: round(v, 2) for k, v in u.items()},
                        "time_share": round(u["seconds"] / r["seconds"], 3),
                        "memory_share": round(u["peak_mb"] / r["peak_mb"], 3),
                        "old_like_vs_retrain": round(u["old-like"] / r["old-like"] - 1, 4),
                        "new_theme_gain_share": round((base["new-theme"] - u["new-theme"]) / gain_r, 3) if gain_r > 0 else None,
                        **({"share_of_the_nights_gain": round((base["new-theme"] - u["new-theme"]) / night_gain, 3)}
                           if night_gain and night_gain > 0 else {}),
                        "freed": [{k: f[k] for k in ("night_tokens", "gain", "loss", "kept")} for f in freed],
                    }), flush=True)


def chain(args) -> None:
    tokens = args.tokens[0]
    world = World(args.true_topics, args.words)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        old = world.old(tokens, 1, "d")
        held = {"old-like": write(world.old(min(2e5, tokens / 10), 2, "h"), tmp, "held-old"),
                "new-theme": write(world.new_theme(min(1e5, tokens / 20), 3, "n"), tmp, "held-new")}
        model = os.path.join(tmp, "m0.npz")
        run_measured("train", write(old, tmp, "old"), "-k", str(args.topics), "--iterations", str(args.old_sweeps),
                     "--seed", "1", "--threads", "1", "-o", model)
        seen = [old]
        total = 0.0
        births = []  # (night, topic born, topic merged into) of each update that kept a freed topic
        for n in range(1, args.nights + 1):
            night = world.night(tokens * args.night_share, args.new_share, 1000 + n, f"n{n}-")
            seen.append(night)
            nxt = os.path.join(tmp, f"m{n}.npz")
            if args.refresh and n % args.refresh == 0:
                cmd = ["train", write(stacked(*seen), tmp, "grown"), "--warm-start", model, "--iterations",
                       str(args.retrain_sweeps)]
            else:
                cmd = ["train", write(night, tmp, "night"), "--update", model, "--iterations", str(args.update_sweeps)]
            t, m = run_measured(*cmd, "--seed", str(n + 1), "--threads", "1", "-o", nxt)
            total += t
            model = nxt
            if cmd[2] == "--update":
                births += [(n, f["topic"], f["into"]) for f in Model.load(nxt).params["update"]["freed"] if f["kept"]]
            if n % args.every == 0 or n == args.nights:
                print(json.dumps({"night": n, "kind": cmd[2], "seconds": round(t, 2), "peak_mb": round(m, 1),
                                  **scored(model, held)}), flush=True)
        full = os.path.join(tmp, "full.npz")
        t, m = run_measured("train", write(stacked(*seen), tmp, "grown"), "--warm-start", os.path.join(tmp, "m0.npz"),
                            "--iterations", str(args.retrain_sweeps), "--seed", "99", "--threads", "1", "-o", full)
        last, ref = scored(model, held), scored(full, held)
        print(json.dumps({"nights": args.nights, "refresh": args.refresh, "chain_seconds": round(total, 1), "births": births,
                          "retrain_of_everything": {"seconds": round(t, 2), **ref}, "chain_end": last,
                          "vs_retrain": {k: round(last[k] / ref[k] - 1, 4) for k in ref}}), flush=True)


def fading(args) -> None:
    import ldacli as api

    tokens = args.tokens[0]
    world = World(args.true_topics, args.words)
    fade = world.topics[0]
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        old = world.old(tokens, 1, "d")
        m0 = os.path.join(tmp, "m0.npz")
        run_measured("train", write(old, tmp, "old"), "-k", str(args.topics), "--iterations", str(args.old_sweeps),
                     "--seed", "1", "--threads", "1", "-o", m0)
        # the topic of the old model nearest the fading theme: its id stays the same through the updates
        first = api.load_model(m0)
        index = {w: i for i, w in enumerate(world_vocab(args.words))}
        cols = np.array([index[w] for w in first.vocab])
        k = int(np.argmax(first.phi @ (fade[cols] / fade[cols].sum())))
        # the fading theme's own words: most of their mass in the old themes is the fading theme's
        olds = world.topics[: world.K][:, cols]
        own = olds[0] / olds.sum(axis=0) > 0.5
        fading_theme = fade[cols] / fade[cols].sum()

        def shares(path: str) -> tuple[float, float, float]:
            m = api.load_model(path)
            words, topics, values = updating.evidence(m)
            per_topic = np.bincount(topics, weights=values, minlength=first.n_topics)
            return (round(float(per_topic[k] / per_topic.sum()), 5), round(float(values[own[words]].sum() / values.sum()), 5),
                    round(float(np.sqrt(m.phi[k]) @ np.sqrt(fading_theme)), 4))

        before = shares(m0)
        for half_life in (None, args.half_life):
            model = m0
            by_topic, theme, alike = [before[0]], [before[1]], [before[2]]
            for n in range(1, args.nights + 1):
                night = world.without_fading(tokens * args.night_share, 2000 + n, f"n{n}-")
                nxt = os.path.join(tmp, f"f{half_life}-{n}.npz")
                run_measured("train", write(night, tmp, "night"), "--update", model, "--iterations",
                             str(args.update_sweeps), "--seed", str(n + 1), "--threads", "1", "-o", nxt,
                             *(["--half-life", str(half_life)] if half_life else []))
                model = nxt
                a, b, c = shares(model)
                by_topic.append(a)
                theme.append(b)
                alike.append(c)
            print(json.dumps({"half_life": half_life, "fading_topic": k, "its_share_of_the_evidence_by_night": by_topic,
                              "evidence_on_the_fading_themes_own_words_by_night": theme,
                              "the_topic_like_the_fading_theme_by_night": alike}), flush=True)


def real(args) -> None:
    import ldacli

    corpus = ldacli.read_corpus(args.corpus, vocab=args.vocab)
    full = ldacli.train(corpus, args.topics, iterations=100, seed=1, threads=1)
    top, share = full.theta.argmax(axis=1), full.theta.max(axis=1)
    sizes = np.bincount(top[share >= 0.5], minlength=args.topics)
    topic = int(np.argsort(sizes)[args.topics // 2])  # a theme of median size
    theme = np.flatnonzero((share >= 0.5) & (top == topic))
    rest = np.setdiff1d(np.arange(corpus.n_docs), theme)
    np.random.default_rng(7).shuffle(rest)
    cut = int(0.85 * rest.size)
    old, pool = np.sort(rest[:cut]), rest[cut:]
    part = lambda docs, prefix: Corpus(corpus.counts[docs], list(corpus.vocab), [f"{prefix}{d}" for d in docs])
    lengths = np.asarray(corpus.counts.sum(axis=1)).ravel()
    first = lambda docs, tokens: docs[: int(np.searchsorted(np.cumsum(lengths[docs]), tokens)) + 1]
    print(json.dumps({"theme_documents": int(theme.size), "theme_words": [full.vocab[w] for w in
                                                                          np.argsort(-full.phi[topic])[:8]]}), flush=True)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        model = os.path.join(tmp, "old.npz")
        ldacli.train(write(part(old, "o"), tmp, "old"), args.topics, iterations=300, seed=1, threads=1, output=model)
        tokens = int(lengths[old].sum())
        for night_share in args.nights:
            want = night_share * tokens
            nights = {"plain": first(pool, want),
                      "new theme": np.concatenate([first(theme, want / 2), first(pool, want / 2)])}
            for kind, docs in nights.items():
                updated = ldacli.train(write(part(np.sort(docs), "n"), tmp, "night"), iterations=100, seed=2,
                                       threads=1, update=model)
                for f in updated.params["update"]["freed"]:  # (a kept topic's alpha is learned from the night)
                    print(json.dumps({"night": night_share, "kind": kind, **{k: f[k] for k in (
                        "night_tokens", "gain", "loss", "kept")}, "alpha": round(float(updated.alpha[f["topic"]]), 4),
                        "alpha_mean": round(float(np.mean(updated.alpha)), 4)}), flush=True)


def world_vocab(V: int) -> list[str]:
    return generate(1, 1, V, doc_length=1, seed=0).corpus.vocab


def cost(args) -> None:
    import ldacli

    corpus = ldacli.read_corpus(args.corpus)
    ends = np.cumsum(np.asarray(corpus.counts.sum(axis=1)).ravel())
    first_night = int(np.searchsorted(ends, ends[-1] - args.night_tokens))
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        smallest = min(first_night, int(np.searchsorted(ends, min(args.tokens))) + 1)
        known = np.asarray(corpus.counts[:smallest].sum(axis=0)).ravel() > 0  # (the words every model knows)
        counts = corpus.counts[first_night:].tocsr(copy=True)
        counts.data[~known[counts.indices]] = 0
        counts.eliminate_zeros()
        night = Corpus(counts, list(corpus.vocab), corpus.doc_ids[first_night:])
        night_path = write(night, tmp, "night")
        for tokens in args.tokens:
            n_docs = min(first_night, int(np.searchsorted(ends, tokens)) + 1)
            old = Corpus(corpus.counts[:n_docs], list(corpus.vocab), corpus.doc_ids[:n_docs])
            old_path = os.path.join(tmp, "old.npz")
            write_corpus(old, old_path, os.path.join(tmp, "old.vocab"), format="npz")
            model = os.path.join(tmp, "old-model.npz")
            t_old, m_old = run_measured("train", old_path, "-k", str(args.topics), "--iterations",
                                        str(args.old_sweeps), "--seed", "1", "--threads", "1", "-o", model)
            out = os.path.join(tmp, "next.npz")
            def updates(parent: str, seed: int, prefix: str, output: str) -> dict:
                runs = [run_measured("train", night_path, "--update", parent, "--iterations", str(args.update_sweeps),
                                     "--seed", str(seed), "--threads", "1", "-o", output) for _ in range(args.repeat)]
                seconds = sorted(t for t, _ in runs)
                return {f"{prefix}_seconds": round(float(np.median(seconds)), 2),
                        f"{prefix}_seconds_all": [round(t, 2) for t in seconds],
                        f"{prefix}_peak_mb": round(max(m for _, m in runs), 1)}

            first = updates(model, 2, "update", out)
            # (the nightly case: an update's model updated)
            again = updates(out, 3, "update_of_update", os.path.join(tmp, "after-next.npz"))
            sampled = Model.read_params(out)  # (the night's tokens of words the model knows; its shards)
            print(json.dumps({"tokens": old.n_tokens, "documents": old.n_docs, "night_tokens": night.n_tokens,
                              "night_tokens_sampled": sampled["update"]["night_tokens"], "shards": sampled["shards"],
                              "old_train_seconds": round(t_old, 1), "old_train_peak_mb": round(m_old, 1),
                              "old_model_mb": round(os.path.getsize(model) / 2**20, 1),
                              **first, "next_model_mb": round(os.path.getsize(out) / 2**20, 1), **again}), flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("part", choices=("nights", "chain", "fading", "cost", "real"))
    p.add_argument("--corpus", help="cost: the large corpus whose first tokens are the old corpora; real: the corpus")
    p.add_argument("--vocab", help="real: the corpus's vocabulary file")
    p.add_argument("--night-tokens", type=float, default=2e5, help="cost: the night's tokens")
    p.add_argument("--repeat", type=int, default=1, help="cost: updates of each model (the median time is reported: "
                                                          "one run's moves by 5-10%%)")
    p.add_argument("--tokens", type=lambda s: [float(x) for x in s.split(",")], default=[2e6])
    p.add_argument("--nights", default=None,
                   help="nights: the night sizes as shares of the corpus (0.01,0.05,0.1); chain/fading: how many")
    p.add_argument("-k", "--topics", type=int, default=100)
    p.add_argument("--true-topics", type=int, default=50)
    p.add_argument("--words", type=int, default=50_000)
    p.add_argument("--new-share", type=float, default=0.5, help="share of a night's documents of the new theme")
    p.add_argument("--night-share", type=float, default=0.01, help="chain/fading: each night's size")
    p.add_argument("--old-sweeps", type=int, default=200)
    p.add_argument("--keep", help="nights: keep the old corpus's model at this path (a model of 100 M tokens and 200 "
                                  "sweeps takes an hour: the next night sizes can reuse it)")
    p.add_argument("--old-model", help="nights: the old corpus's model kept by --keep (the same --tokens, --words, "
                                       "--true-topics, -k and --old-sweeps), not trained again")
    p.add_argument("--retrain-sweeps", type=int, default=100)
    p.add_argument("--update-sweeps", type=int, default=100)
    p.add_argument("--reference", action="store_true",
                   help="nights: also retrain the old corpus alone, warm-started the same, to tell the retrain's gain "
                        "that the night brings from that of its further sweeps")
    p.add_argument("--refresh", type=int, default=0, help="chain: a warm-started retrain every N nights (0: never)")
    p.add_argument("--every", type=int, default=5, help="chain: score every N nights")
    p.add_argument("--half-life", type=float, default=3.0)
    p.add_argument("--variants", default='{"update": {}}', help="nights: JSON, the update's variants (see above)")
    p.add_argument("--tmp", default=None, help="where the corpora and models go (default: $TMPDIR)")
    args = p.parse_args(argv)
    if args.part in ("cost", "real"):
        if args.corpus is None:
            p.error(f"{args.part} needs --corpus")
        if args.part == "real":
            args.nights = [float(x) for x in (args.nights or "0.01,0.05,0.1").split(",")]
        (cost if args.part == "cost" else real)(args)
    elif args.part == "nights":
        args.nights = [float(x) for x in (args.nights or "0.01,0.05,0.1").split(",")]
        nights(args)
    else:
        args.nights = int(args.nights or (30 if args.part == "chain" else 6))
        (chain if args.part == "chain" else fading)(args)


if __name__ == "__main__":
    main()
