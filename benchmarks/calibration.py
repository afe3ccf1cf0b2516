"""Judgements validated on corpora nobody tuned them on: the junk flags and the drift alarm, fitted on six
corpora and scored on the seventh, each corpus held out in turn (issue 49).

Usage::

    python benchmarks/calibration.py prepare                       # the raw texts, from the files fetched (below)
    nice -n 10 python benchmarks/calibration.py models            # train every model (kept, reused), ~15 min
    python benchmarks/calibration.py topics > topics.txt           # every topic's top words, to judge by reading
    python benchmarks/calibration.py flags [--markdown]            # the junk flags, leave one corpus out
    python benchmarks/calibration.py drift [--markdown]            # the drift alarm on 1%, 10%, 100% nights
    python benchmarks/calibration.py history [--first 0.05]        # the retraining guide's nights on the speeches

The seven corpora (:data:`CORPORA`; one thread, K=25 (Reuters 20), 150 sweeps, seeds 1 and 2, larger ones
subsampled): KOS and 20 Newsgroups (UCI bags of words, ``$LDACLI_CORPORA``), the Reuters sample
(LDA-C, same folder), the NumPy/SciPy docstrings (``sample_corpora``), and three raw texts that no
threshold was ever set on, kept in ``$LDACLI_DATA/calib/raw`` (not in the repository): the US State
of the Union addresses 1790-2009, one paragraph a line with its year in ``sotu.years`` (19,254
paragraphs: ``data/sotu.rda`` of GitHub's MansMeg/tidytopic, MALLET's example corpus, read with
pyreadr), arXiv abstracts of April 2007, title and abstract a line (2,000: ``arxiv_data.csv`` of
gechhai/Topic_Discovery), and answers from the statistics Q&A site Cross Validated, one a line
(2,000: ``data-raw/stats.txt`` of MansMeg/tidytopic). ``prepare`` turns those three files, put in
that folder as ``sotu.rda``, ``arxiv_data.csv`` and ``stats.txt``, into one document a line (the
first needs pyreadr). Raw texts are read with the English stop words, ``--min-df 5 --max-df 0.5``.

``flags``: every topic of every model was judged by reading its top words
(``calibration_judged.json``: junk and borderline by their first three words; the rest good). For
each held-out corpus the flags' thresholds are fitted on the other six (both seeds), each flag on
its own (:func:`fit`: the most junk caught at 90% precision, at most 1% of the good topics flagged,
junk caught in three corpora or more; else off; then the least precise switched off while together
they flag more than :data:`FIT_GOOD` of the good topics or keep less than :data:`FIT_PRECISION` of
junk), once for every flag and once for the verdicts alone (``diagnostics.VERDICTS``); the held-out
corpus's two models are scored with those, with the shipped verdicts and with the rule before
(every flag a verdict, background at 1.1). The issue's bar: at most 1 good topic in 20 flagged, at
least 3 junk in 4 flagged.

``drift``: each corpus in its own order (the speeches by year) is cut in half; a model of the first
half (seed 1) is followed by one night that brings 1%, 10% or 100% of the first half's documents
more, retrained as the retraining guide's nightly job does (``--update`` with the night; and the
refresh, ``--warm-start`` on the grown corpus, 100 sweeps each). Every topic is paired with its
parent by descent and its drift measured as ``diff`` does; a pair that shares at least 5 of its top
10 words is the same topic, one sharing at most 2 a topic whose meaning changed. For each schedule
and held-out corpus, the alarm's threshold is fitted on the other six (the smallest that false-alarms
on at most 5% of their same-topic pairs) and scored on the held-out one; and history's identity
threshold (the largest drift of a same topic on the other six) beside diff's 0.7.

``history``: the retraining guide's Makefile as five nights over the speeches in order (K=50, a full
training the first night, ``--update`` after), read by ``ldacli.history``: which topics it follows
through a change of meaning.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

import ldacli
from ldacli.corpora.corpus import Corpus
from ldacli.files.fileio import file_sha256
from places import CORPORA as SHARED, DATA

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "sample_corpora")
RAW = os.path.join(DATA, "calib", "raw")
FOLDER = os.path.join(DATA, "calib", "models")
TEXT = {"stop_words": "english", "min_df": 5, "max_df": 0.5}
# name -> how to read it, documents kept (every n-th, in order, or None), topics
CORPORA = {
    "kos": (dict(path=os.path.join(SHARED, "docword.kos.txt.gz")), None, 25),
    "20ng": (dict(path=os.path.join(SHARED, "docword.20ng.txt.gz")), 4, 25),
    "reuters": (dict(path=os.path.join(SHARED, "reuters.ldac"), vocab=os.path.join(SHARED, "reuters.tokens")), None,
                20),
    "numpy": (dict(path=os.path.join(SAMPLE, "numpy_scipy_docs.txt"),
                   stop_words=os.path.join(SAMPLE, "stopwords_docstrings.txt"), min_df=5, max_df=0.5), None, 25),
    "sotu": (dict(path=os.path.join(RAW, "sotu.txt"), **TEXT), 3, 25),
    "arxiv": (dict(path=os.path.join(RAW, "arxiv.txt"), **TEXT), None, 25),
    "crossvalidated": (dict(path=os.path.join(RAW, "crossvalidated.txt"), **TEXT), None, 25),
}
SEEDS, SWEEPS, NIGHT_SWEEPS = (1, 2), 150, 100
NIGHTS = (0.01, 0.1, 1.0)
FIT_GOOD, FIT_PRECISION = 0.05, 0.75
FIT_FLAG_GOOD, FIT_FLAG_PRECISION, FIT_FLAG_CORPORA = 0.01, 0.9, 3
SAME, CHANGED = 5, 2  # of the top 10 words shared: at least SAME, the same topic; at most CHANGED, another


def prepare() -> None:
    """The raw texts, one document a line, from the files fetched into :data:`RAW` (see the module
    docstring)."""
    import csv
    import re

    def line(text) -> str:
        return re.sub(r"\s+", " ", str(text)).strip() + "\n"

    import pyreadr  # not a dependency of ldacli: only to read the R data file of the speeches

    speeches = pyreadr.read_r(os.path.join(RAW, "sotu.rda"))["sotu"]
    with open(os.path.join(RAW, "sotu.txt"), "w", encoding="utf-8") as text, \
            open(os.path.join(RAW, "sotu.years"), "w", encoding="utf-8") as years:
        for paragraph, year in zip(speeches["text"], speeches["year"]):
            text.write(line(paragraph))
            years.write(f"{int(year)}\n")
    with open(os.path.join(RAW, "arxiv_data.csv"), encoding="utf-8", newline="") as f, \
            open(os.path.join(RAW, "arxiv.txt"), "w", encoding="utf-8") as out:
        for row in csv.DictReader(f):
            out.write(line(row["title"] + " . " + row["abstract"]))
    with open(os.path.join(RAW, "stats.txt"), encoding="utf-8") as f, \
            open(os.path.join(RAW, "crossvalidated.txt"), "w", encoding="utf-8") as out:
        out.writelines(line(answer) for answer in f)


def corpus(name: str) -> Corpus:
    """The corpus ``name``, read as :data:`CORPORA` says (every n-th document kept, in order)."""
    options, every, _ = CORPORA[name]
    options = dict(options)
    c = ldacli.read_corpus(options.pop("path"), **options)
    if every:
        keep = np.arange(0, c.n_docs, every)
        c = Corpus(c.counts[keep], c.vocab, [c.doc_ids[i] for i in keep], c.source, c.format)
    return c


def subset(c: Corpus, rows) -> Corpus:
    rows = np.asarray(rows)
    return Corpus(c.counts[rows], c.vocab, [c.doc_ids[i] for i in rows], c.source, c.format)


def path(*parts: str) -> str:
    return os.path.join(FOLDER, "-".join(parts) + ".npz")


def available() -> list[str]:
    return [n for n, (options, _, _) in CORPORA.items() if os.path.exists(options["path"])]


def trained(out: str, make) -> str:
    if not os.path.exists(out):
        print(f"training {os.path.basename(out)}", file=sys.stderr, flush=True)
        make().save(out)
    return out


def models() -> None:
    os.makedirs(FOLDER, exist_ok=True)
    for name in available():
        c, k = corpus(name), CORPORA[name][2]
        for seed in SEEDS:
            trained(path(name, f"s{seed}"), lambda: ldacli.train(c, k, iterations=SWEEPS, seed=seed, threads=1))
        half = c.n_docs // 2
        base = trained(path(name, "half"), lambda: ldacli.train(subset(c, range(half)), k, iterations=SWEEPS, seed=1,
                                                                threads=1))
        for night in NIGHTS:
            end = min(c.n_docs, half + max(1, round(night * half)))
            trained(path(name, f"update{night:g}"),
                    lambda: ldacli.train(subset(c, range(half, end)), update=base, iterations=NIGHT_SWEEPS, seed=2,
                                         threads=1))
            trained(path(name, f"warm{night:g}"),
                    lambda: ldacli.train(subset(c, range(end)), warm_start=base, iterations=NIGHT_SWEEPS, seed=2,
                                         threads=1))


# --- the junk flags -----------------------------------------------------------------------------------

def judged_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibration_judged.json")


def load_judged() -> dict:
    """The judgement by reading of every model :func:`models` trains (ldacli 0.3, these settings): per
    (corpus, seed), the junk topics and the borderline ones by their first three words; every other
    topic was judged good."""
    with open(judged_path(), encoding="utf-8") as f:
        return {(c, int(s)): (v["junk"], v["borderline"]) for c, by_seed in json.load(f).items()
                for s, v in by_seed.items()}


def topics_text() -> None:
    from ldacli.scoring.diagnostics import diagnostics

    for name in available():
        c = corpus(name)
        for seed in SEEDS:
            m = ldacli.load_model(path(name, f"s{seed}"))
            result = diagnostics(m, c)
            print(f"== {name} seed {seed}")
            for t, top in zip(result["topics"], m.top_words(12)):
                print(f"{t['topic']:>3} {','.join(t['flags']) or '-':<24} " + " ".join(w for w, _ in top))


def labelled() -> list[dict]:
    """Every topic of the flag models, with its diagnostics, its model's context and its label."""
    from ldacli.scoring.diagnostics import context_of, diagnostics

    judged = load_judged()
    out = []
    for name in available():
        c = corpus(name)
        for seed in SEEDS:
            m = ldacli.load_model(path(name, f"s{seed}"))
            result = diagnostics(m, c)
            context = context_of(result)
            junk, borderline = judged[name, seed]
            for t, top in zip(result["topics"], m.top_words(3)):
                key = " ".join(w for w, _ in top)
                label = "junk" if key in junk else "borderline" if key in borderline else "good"
                out.append({"corpus": name, "seed": seed, "key": key, "label": label, "topic": t,
                            "context": context, "words": [w["word"] for w in t["words"]]})
            missing = [k for k in junk + borderline if k not in {o["key"] for o in out[-m.n_topics:]}]
            if missing:
                raise SystemExit(f"{name} seed {seed}: judged topics not found ({missing}): another model than the "
                                 f"one judged; judge it again (topics)")
    return out


# Each threshold's candidates; None switches the flag off.
GRID = {
    "background": [None, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3],
    "many_companions": [None, 1.1, 1.2, 1.25, 1.3, 1.4, 1.5, 1.7],
    "many_companions_rank_1": [0.05, 0.1, 0.15, 0.2],
    "low_npmi": [None, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    "few_documents": [None, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6],
    "few_documents_fill": [0.5, 0.75, 1.0, 1.5],
    "near_duplicates": [None, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7],
    "tiny": [None, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3],
}


def raised_with(topics: list[dict], thresholds: dict) -> list[list[str]]:
    from ldacli.scoring.diagnostics import raised

    return [raised(o["topic"], o["context"], thresholds) for o in topics]


def counts(topics: list[dict], flagged: list[list[str]]) -> dict:
    good = sum(o["label"] == "good" for o in topics)
    junk = sum(o["label"] == "junk" for o in topics)
    hit = sum(bool(f) and o["label"] == "junk" for o, f in zip(topics, flagged))
    alarm = sum(bool(f) and o["label"] == "good" for o, f in zip(topics, flagged))
    border = sum(bool(f) and o["label"] == "borderline" for o, f in zip(topics, flagged))
    return {"good": good, "junk": junk, "flagged": hit + alarm + border, "hit": hit, "alarm": alarm,
            "borderline": border}


def acceptable(c: dict) -> bool:
    return c["alarm"] <= FIT_GOOD * c["good"] and c["hit"] >= FIT_PRECISION * (c["hit"] + c["alarm"])


# Each flag's thresholds (THRESHOLDS' keys), fitted together.
FLAG_KEYS = {"background": ("background",), "many-companions": ("many_companions", "many_companions_rank_1"),
             "low-npmi": ("low_npmi",), "few-documents": ("few_documents", "few_documents_fill"),
             "near-duplicates": ("near_duplicates",), "tiny": ("tiny",)}


def fit(topics: list[dict], flags=None) -> dict:
    """Thresholds from :data:`GRID`, each flag on its own: the values that catch the most junk of
    ``topics`` while at least :data:`FIT_FLAG_PRECISION` of the junk and good topics it flags are junk,
    it flags at most :data:`FIT_FLAG_GOOD` of the good ones and it catches junk in at least
    :data:`FIT_FLAG_CORPORA` corpora (a flag that works on one corpus is that corpus's; else the flag
    is off); then, while
    the flags together flag more good topics than :func:`acceptable` allows, the least precise is
    switched off. ``flags``: those fitted (default: every flag; the others off)."""
    import itertools

    off = {key: None if None in values else values[0] for key, values in GRID.items()}
    good = sum(o["label"] == "good" for o in topics)
    chosen, precision = dict(off), {}
    for flag, keys in FLAG_KEYS.items():
        if flags is not None and flag not in flags:
            continue
        best = None
        for values in itertools.product(*(GRID[k] for k in keys)):
            if values[0] is None:
                continue
            th = {**off, **dict(zip(keys, values))}
            c = counts(topics, raised_with(topics, th))
            where = {o["corpus"] for o, f in zip(topics, raised_with(topics, th)) if f and o["label"] == "junk"}
            if c["hit"] < FIT_FLAG_PRECISION * (c["hit"] + c["alarm"]) or c["alarm"] > FIT_FLAG_GOOD * good or \
                    len(where) < FIT_FLAG_CORPORA:
                continue
            score = (c["hit"], -c["alarm"])
            if best is None or score > best[0]:
                best = (score, dict(zip(keys, values)), c["hit"] / (c["hit"] + c["alarm"]))
        if best is not None:
            chosen.update(best[1])
            precision[flag] = best[2]
    while precision and not acceptable(counts(topics, raised_with(topics, chosen))):
        worst = min(precision, key=precision.get)
        chosen[FLAG_KEYS[worst][0]] = None
        del precision[worst]
    return chosen


def only(thresholds: dict, flags) -> dict:
    """``thresholds`` with every flag but ``flags`` off."""
    return {**thresholds, **{FLAG_KEYS[f][0]: None for f in FLAG_KEYS if f not in flags}}


def flags(markdown: bool) -> None:
    from ldacli.scoring.diagnostics import THRESHOLDS, VERDICTS

    topics = labelled()
    names = sorted({o["corpus"] for o in topics}, key=list(CORPORA).index)
    rules = {"every flag, fitted": lambda train: fit(train),
             "verdicts, fitted": lambda train: fit(train, VERDICTS),
             "verdicts, shipped": lambda train: only(THRESHOLDS, VERDICTS),
             "every flag as verdicts, before": lambda train: {**THRESHOLDS, "background": 1.1}}
    rows, fitted, pooled = [], {}, {what: [] for what in rules}
    for held in names:
        train = [o for o in topics if o["corpus"] != held]
        test = [o for o in topics if o["corpus"] == held]
        for what, rule in rules.items():
            th = rule(train)
            if what == "every flag, fitted":
                fitted[held] = th
            flagged = raised_with(test, th)
            pooled[what] += list(zip(test, flagged))
            rows.append((held, what, counts(test, flagged)))
    print(f"Junk flags, each corpus held out (seeds {', '.join(map(str, SEEDS))}): good topics flagged / good topics, "
          f"junk among the flagged (verdicts: {', '.join(VERDICTS)})")
    head = ["held out", "rule", "topics (good/junk/borderline)", "good flagged", "flagged junk", "flagged borderline",
            "junk caught"]

    def line(held, what, c, borderline):
        return [held, what, f"{c['good']}/{c['junk']}/{borderline}",
                f"{c['alarm']}/{c['good']} ({c['alarm'] / max(c['good'], 1):.1%})",
                f"{c['hit']}/{c['flagged']}" + (f" ({c['hit'] / c['flagged']:.0%})" if c["flagged"] else ""),
                str(c["borderline"]), f"{c['hit']}/{c['junk']}"]

    lines = [line(held, what, c, sum(o["label"] == "borderline" for o in topics if o["corpus"] == held))
             for held, what, c in rows]
    for what, got in pooled.items():
        lines.append(line("all (pooled)", what, counts([o for o, _ in got], [f for _, f in got]),
                          sum(o["label"] == "borderline" for o in topics)))
    table(head, lines, markdown)
    print("\nThresholds fitted with each corpus held out (every flag):")
    keys = list(GRID)
    table(["held out"] + keys, [[h] + ["off" if fitted[h][k] is None else f"{fitted[h][k]:g}" for k in keys]
                                for h in fitted], markdown)
    print("\nPer flag, pooled over the held-out corpora (every flag, fitted): junk / borderline / good it raised on")
    per = {}
    for o, f in pooled["every flag, fitted"]:
        for name in f:
            per.setdefault(name, {"junk": 0, "borderline": 0, "good": 0})[o["label"]] += 1
    table(["flag", "junk", "borderline", "good"], [[n, *map(str, v.values())] for n, v in per.items()], markdown)
    for what in ("verdicts, fitted", "every flag, fitted"):
        print(f"\nEvery topic flagged on its held-out corpus ({what}), with the judgement by reading:")
        for o, f in pooled[what]:
            if f:
                print(f"  {o['corpus']:<14} s{o['seed']} {o['topic']['topic']:>3} {o['label']:<10} {','.join(f):<16} "
                      + " ".join(o["words"][:10]))
    print("\nJunk not flagged on its held-out corpus (verdicts, fitted):")
    for o, f in pooled["verdicts, fitted"]:
        if not f and o["label"] == "junk":
            print(f"  {o['corpus']:<14} s{o['seed']} {o['topic']['topic']:>3} " + " ".join(o["words"][:10]))


def table(head: list[str], rows: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head, *rows]:
        print("  ".join(f"{str(x):<{w}}" for x, w in zip(r, widths)))


# --- the drift alarm ----------------------------------------------------------------------------------

def drift_pairs() -> list[dict]:
    """Every topic of every night's model, paired with its parent by descent: its distance and the
    top 10 words it shares with the parent."""
    out = []
    for name in available():
        base = path(name, "half")
        if not os.path.exists(base):
            continue
        a, sha = ldacli.load_model(base), file_sha256(base)
        for night in NIGHTS:
            for how in ("update", "warm"):
                b = ldacli.load_model(path(name, f"{how}{night:g}"))
                result = ldacli.diff_models(a, b, a_sha256=sha)
                assert result["pairing"] == "descent", result["pairing"]
                for t in result["topics"]:
                    out.append({"corpus": name, "night": night, "how": how, "distance": t["distance"],
                                "overlap": t["overlap"], "words_a": t["top_words_a"], "words_b": t["top_words_b"]})
    return out


def alarm_threshold(pairs: list[dict], allowed: float = 0.05) -> float:
    """The smallest threshold that false-alarms on at most ``allowed`` of the same-topic pairs."""
    same = np.sort([p["distance"] for p in pairs if p["overlap"] >= SAME])
    if not same.size:
        return 1.0
    k = int(np.floor(allowed * same.size))
    return float(same[same.size - 1 - k]) if k < same.size else 0.0


def scored(pairs: list[dict], threshold: float) -> tuple[int, int, int, int]:
    """Of ``pairs``: the same-topic pairs further apart than ``threshold`` (false alarms, or
    topics split), the same-topic pairs, the changed pairs further apart (caught), the changed
    pairs."""
    same = [p for p in pairs if p["overlap"] >= SAME]
    changed = [p for p in pairs if p["overlap"] <= CHANGED]
    return (sum(p["distance"] > threshold for p in same), len(same),
            sum(p["distance"] > threshold for p in changed), len(changed))


def drift(markdown: bool) -> None:
    from ldacli.diff import THRESHOLD

    pairs = drift_pairs()
    names = sorted({p["corpus"] for p in pairs}, key=list(CORPORA).index)
    print("Drift of each topic from its parent after one night (JS distance, by descent): median / 90th percentile / "
          "max, and the pairs sharing <= 2 of their top 10 words")
    lines = []
    for night in NIGHTS:
        for how in ("update", "warm"):
            for name in names:
                d = np.array([p["distance"] for p in pairs
                              if (p["corpus"], p["night"], p["how"]) == (name, night, how)])
                changed = sum(p["overlap"] <= CHANGED for p in pairs
                              if (p["corpus"], p["night"], p["how"]) == (name, night, how))
                lines.append([f"{night:.0%}", how, name, f"{np.median(d):.3f}", f"{np.quantile(d, 0.9):.3f}",
                              f"{d.max():.3f}", f"{changed}/{d.size}"])
    table(["night", "retrain", "corpus", "median", "p90", "max", "changed"], lines, markdown)
    print(f"\nThe alarm's threshold fitted on six corpora (false alarms on <= 5% of their same-topic pairs: sharing >= "
          f"{SAME} of the top 10), scored on the seventh; and diff's threshold ({THRESHOLD.default:g}) and the "
          f"guide's --max-drift (0.6) on all:")
    lines = []
    for night, how in [(n, h) for n in NIGHTS for h in ("update", "warm", "either")]:
        schedule = [p for p in pairs if p["night"] == night and how in (p["how"], "either")]
        alarms, catches, fitted = [0, 0], [0, 0], []
        for held in names:
            th = alarm_threshold([p for p in schedule if p["corpus"] != held])
            fitted.append(th)
            over_same, n_same, over_changed, n_changed = scored([p for p in schedule if p["corpus"] == held], th)
            alarms[0] += over_same
            alarms[1] += n_same
            catches[0] += over_changed
            catches[1] += n_changed
        row = [f"{night:.0%}", how, f"{min(fitted):.3f}-{max(fitted):.3f}",
               f"{alarms[0]}/{alarms[1]} ({alarms[0] / max(alarms[1], 1):.1%})",
               f"{catches[0]}/{catches[1]}" + (f" ({catches[0] / catches[1]:.0%})" if catches[1] else "")]
        for th in (0.6, THRESHOLD.default):
            over_same, n_same, over_changed, n_changed = scored(schedule, th)
            row += [f"{over_same}/{n_same}", f"{over_changed}/{n_changed}"]
        lines.append(row)
    table(["night", "retrain", "fitted threshold (range over held-out)", "held-out false alarms (same topic)",
           "held-out changed topics caught", "0.6: false alarms", "0.6: caught", "0.7: false alarms", "0.7: caught"],
          lines, markdown)
    print("\nHistory's identity rule (a pair further apart is a death and a birth, 'meaning changed'): the threshold "
          "fitted on six corpora, every schedule (the largest drift of a same-topic pair there), scored on the "
          "seventh, "
          "beside diff's:")
    lines, split, caught = [], [0, 0], [0, 0]
    for held in names:
        th = max(p["distance"] for p in pairs if p["corpus"] != held and p["overlap"] >= SAME)
        test = [p for p in pairs if p["corpus"] == held]
        over_same, n_same, over_changed, n_changed = scored(test, th)
        split[0] += over_same
        split[1] += n_same
        caught[0] += over_changed
        caught[1] += n_changed
        at_diff = scored(test, THRESHOLD.default)
        lines.append([held, f"{th:.3f}", f"{over_same}/{n_same}", f"{over_changed}/{n_changed}",
                      f"{at_diff[0]}/{at_diff[1]}", f"{at_diff[2]}/{at_diff[3]}"])
    at_diff = scored(pairs, THRESHOLD.default)
    lines.append(["all", "", f"{split[0]}/{split[1]}", f"{caught[0]}/{caught[1]}", f"{at_diff[0]}/{at_diff[1]}",
                  f"{at_diff[2]}/{at_diff[3]}"])
    table(["held out", "fitted", "same topics split", "changed topics split", f"{THRESHOLD.default:g}: same split",
           f"{THRESHOLD.default:g}: changed split"], lines, markdown)
    print("\nPairs over 0.7 (diff's threshold) that share >= 5 of their top 10 words, and pairs sharing <= 2 "
          "within it:")
    for p in pairs:
        if (p["distance"] > THRESHOLD.default and p["overlap"] >= SAME) or \
                (p["distance"] <= THRESHOLD.default and p["overlap"] <= CHANGED):
            print(f"  {p['corpus']:<14} {p['night']:.0%} {p['how']:<6} JS {p['distance']:.3f} shares {p['overlap']}: "
                  f"{' '.join(p['words_a'][:6])} -> {' '.join(p['words_b'][:6])}")


# --- history over the speeches ------------------------------------------------------------------------

def history(first: float) -> None:
    """Five nights over the speeches in order, as the guide's Makefile runs them (REFRESH 10: a full
    training, then updates): the first night holds the first ``first`` of the paragraphs (1/5: the
    first fifth), the four others the rest in equal parts."""
    from ldacli.over_time.history import read_history, text_lines

    options = dict(CORPORA["sotu"][0])
    c = ldacli.read_corpus(options.pop("path"), **options)
    folder = os.path.join(FOLDER, f"sotu-nights-{first:g}")
    os.makedirs(folder, exist_ok=True)
    start = round(c.n_docs * first)
    cuts = [0, start] + [start + round((c.n_docs - start) * n / 4) for n in range(1, 5)]
    previous = None
    for n in range(1, 6):
        out = os.path.join(folder, f"night{n}.npz")
        if n == 1:
            trained(out, lambda: ldacli.train(subset(c, range(cuts[1])), 50, iterations=NIGHT_SWEEPS, seed=1,
                                              threads=1))
        else:
            trained(out, lambda: ldacli.train(subset(c, range(cuts[n - 1], cuts[n])), update=previous,
                                              iterations=NIGHT_SWEEPS, seed=n, threads=1))
        previous = out
    result = read_history(folder)
    for line in text_lines(result):
        print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("prepare", "models", "topics", "flags", "drift", "history"))
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--first", type=float, default=0.2, help="history: the share of the paragraphs of the first night")
    args = p.parse_args()
    if args.what == "prepare":
        prepare()
    elif args.what == "models":
        models()
    elif args.what == "topics":
        topics_text()
    elif args.what == "flags":
        flags(args.markdown)
    elif args.what == "drift":
        drift(args.markdown)
    else:
        history(args.first)


if __name__ == "__main__":
    main()
