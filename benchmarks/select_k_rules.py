"""Which rule should select-k recommend by? Every candidate rule on the same stored runs of real and planted corpora.

Usage::

    python benchmarks/select_k_rules.py run kos            # ldacli select-k on one corpus (resumes its folder)
    python benchmarks/select_k_rules.py table              # every rule on every corpus whose runs are done
    python benchmarks/select_k_rules.py table --markdown   # the same as Markdown tables

``run NAME`` runs ``ldacli select-k`` as a process, once, with 3 seeds and 300 sweeps (``--seed 1``,
``--threads`` pairs at a time, 1 unless given: the same scores at any number), into ``$LDACLI_DATA/select-k/NAME`` (default ``$LDACLI_DATA``); stopped (SIGTERM, as
a 30-minute slot ends) it is run again and continues its unfinished pairs. ``table`` reads each
folder's stored per-(K, seed) scores and models (``k{K}-s{i}.json``, ``.npz``, as select-k writes
them) and applies every candidate rule of :data:`RULES` offline to the same numbers, printing
per corpus the per-K measures beside each rule's choice. A corpus whose files are missing is
skipped with a note.

The corpora: the UCI KOS and 20 Newsgroups bags of words (``$LDACLI_CORPORA``, default
``../shared/corpora``), raw 20 Newsgroups text (one post a line, ``$LDACLI_DATA/20ng-raw/train.txt``,
English stop words, ``--min-df 5 --max-df 0.3``), AP (LDA-C, ``$LDACLI_DATA/ap/ap.dat`` and
``vocab.txt``), the NumPy/SciPy docstring sample (``sample_corpora``, its own stop words), and two
planted corpora drawn from the LDA generative process (``ldacli.corpora.synthetic.generate``): 15
well-separated topics, and 50 topics that overlap more (written as LDA-C into the data folder).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys

import numpy as np

from ldacli.model_selection import balance, quality, recommend
from places import CORPORA, DATA

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if not os.path.isdir(CORPORA):
    CORPORA = os.path.join(ROOT, "..", "shared", "corpora")
SAMPLE = os.path.join(ROOT, "sample_corpora")
SEEDS, ITERATIONS = 3, 300

# name -> (corpus path, reading options, grid, truth or None, how to make it when planted)
PLANTED = {"planted15": dict(n_docs=5000, n_topics=15, n_words=5000, beta=0.05),
           "planted50": dict(n_docs=5000, n_topics=50, n_words=3000, beta=0.1)}


def corpora() -> dict[str, dict]:
    return {
        "planted15": {"path": os.path.join(DATA, "select-k", "planted15.ldac"), "grid": "5,10,15,20,30", "truth": 15,
                      "options": ["--vocab", os.path.join(DATA, "select-k", "planted15.vocab")]},
        "planted50": {"path": os.path.join(DATA, "select-k", "planted50.ldac"), "grid": "10,20,50,100,200",
                      "truth": 50, "options": ["--vocab", os.path.join(DATA, "select-k", "planted50.vocab")]},
        "kos": {"path": os.path.join(CORPORA, "docword.kos.txt.gz"), "grid": "2,5,10,20,50,100,200",
                "tables": ["5,10,20,50,100,200", "2,5,10,20,50,100,200"],
                "options": ["--vocab", os.path.join(CORPORA, "vocab.kos.txt")]},
        "20ng": {"path": os.path.join(CORPORA, "docword.20ng.txt.gz"), "grid": "10,20,50,100,200",
                 "tables": ["10,20,50,100,200", "10,20,50"],
                 "options": ["--vocab", os.path.join(CORPORA, "vocab.20ng.txt")]},
        "20ng-text": {"path": os.path.join(DATA, "20ng-raw", "train.txt"), "grid": "10,20,50,100,200",
                      "options": ["--stop-words", "english", "--min-df", "5", "--max-df", "0.3"],
                      "ready": os.path.join(DATA, "20ng-raw", "DONE")},
        "ap": {"path": os.path.join(DATA, "ap", "ap.dat"), "grid": "10,20,25,40,50,100,200",
               "tables": ["10,25,50,100,200", "25,50,100,200", "10,20,40", "10,20,25,40,50,100,200"],
               "options": ["--vocab", os.path.join(DATA, "ap", "vocab.txt")],
               "ready": os.path.join(DATA, "ap", "DONE")},
        "numpy-scipy": {"path": os.path.join(SAMPLE, "numpy_scipy_docs.txt"), "grid": "5,10,20,40,80,160",
                        "tables": ["5,10,20,40,80", "5,10,20,40,80,160"],
                        "options": ["--stop-words", os.path.join(SAMPLE, "stopwords_docstrings.txt"), "--min-df", "5",
                                    "--max-df", "0.5"]},
    }


def folder(name: str) -> str:
    return os.path.join(DATA, "select-k", name)


def make_planted(name: str, spec: dict) -> None:
    """Draw a planted corpus (once) and write it as LDA-C with its vocabulary."""
    path = spec["path"]
    if os.path.exists(path):
        return
    import ldacli
    from ldacli.corpora.synthetic import generate

    os.makedirs(os.path.dirname(path), exist_ok=True)
    p = PLANTED[name]
    syn = generate(p["n_docs"], p["n_topics"], p["n_words"], doc_length=(50, 150), alpha=0.1, beta=p["beta"], seed=1)
    ldacli.write_corpus(syn.corpus, path, spec["options"][1], format="ldac")


def run(name: str, threads: int = 1) -> int:
    spec = corpora()[name]
    if name in PLANTED:
        make_planted(name, spec)
    if not os.path.exists(spec["path"]) or ("ready" in spec and not os.path.exists(spec["ready"])):
        print(f"{name}: {spec['path']} is not there (yet): skipped", file=sys.stderr)
        return 0
    args = [sys.executable, "-m", "ldacli", "select-k", spec["path"], *spec["options"], "-k", spec["grid"],
            "--seeds", str(SEEDS), "--iterations", str(ITERATIONS), "--seed", "1", "--threads", str(threads),
            "-o", folder(name), "--format", "tsv"]
    print(" ".join(args), file=sys.stderr, flush=True)
    os.execv(sys.executable, args)  # the process itself: a slot's SIGTERM reaches select-k, which stops cleanly


# --- the measures, from the stored runs ------------------------------------------------------------

def rows_of(result: dict, where: str) -> list[dict]:
    """One row per K: each measure's mean and standard error over the seeds (stability over
    pairs of seeds, from select-k's table) and quality = NPMI x diversity per run (diversity
    computed again from each stored model, as this ldacli defines it)."""
    from ldacli import load_model
    from ldacli.scoring.coherence import diversity

    rows = []
    for r in result["table"]:
        runs = [{**p, "diversity": diversity(load_model(os.path.join(where, p["model"])).phi)}
                for p in result["pairs"] if p["k"] == r["k"]]
        row = {"k": r["k"]}
        for key in ("perplexity", "npmi", "diversity", "exclusivity", "quality", "balance"):
            x = np.array([quality(p["npmi"], p["diversity"]) if key == "quality" else
                          balance(p) if key == "balance" else p[key] for p in runs], dtype=float)
            row[key] = float(x.mean())
            row[key + "_se"] = float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0
        for key in ("distance", "matched"):
            row[key], row[key + "_se"] = r[key], r[key + "_se"] or 0.0
        rows.append(row)
    return sorted(rows, key=lambda r: r["k"])


def gain_per_doubling(a: dict, b: dict) -> float:
    """How much lower held-out perplexity is at b than at a, per doubling of K (a fraction)."""
    return 1.0 - (b["perplexity"] / a["perplexity"]) ** (1.0 / math.log2(b["k"] / a["k"]))


# --- the candidate rules: rows -> (K or None for "not determined", a few words) --------------------

def best(rows, key, lower=False):
    return (min if lower else max)(rows, key=lambda r: r[key])


def within_se(rows, key, lower=False):
    """The rows within one standard error of the best (the best's SE)."""
    b = best(rows, key, lower)
    if lower:
        return [r for r in rows if r[key] <= b[key] + b[key + "_se"]]
    return [r for r in rows if r[key] >= b[key] - b[key + "_se"]]


def rule_current(rows):
    """select-k's rule until 0.x (issue 31): among the Ks whose perplexity is within 5% (or one
    SE) of the best, the most stable."""
    b = best(rows, "perplexity", lower=True)
    band = b["perplexity"] + max(b["perplexity_se"], 0.05 * b["perplexity"])
    within = [r for r in rows if r["perplexity"] <= band]
    return min(within, key=lambda r: (r["distance"], r["k"]))["k"], f"perplexity band: K = {[r['k'] for r in within]}"


def rule_perplexity(rows):
    return best(rows, "perplexity", lower=True)["k"], "lowest held-out perplexity"


def rule_perplexity_1se(rows):
    near = within_se(rows, "perplexity", lower=True)
    return min(r["k"] for r in near), "smallest K within 1 SE of the best perplexity"


def rule_kneedle(rows):
    """Kneedle (Satopaa et al. 2011) on perplexity against log K: the K farthest below the chord
    from the first to the last point, both normalised to [0, 1]."""
    x = np.log([r["k"] for r in rows])
    y = np.array([r["perplexity"] for r in rows])
    if len(rows) < 3 or y.max() == y.min():
        return None, "no knee"
    xn, yn = (x - x[0]) / (x[-1] - x[0]), (y - y.min()) / (y.max() - y.min())
    # a decreasing convex curve: the knee is where 1 - xn - yn (distance below the chord) is largest
    d = (1 - xn) - yn
    i = int(np.argmax(d))
    return rows[i]["k"], "knee of perplexity against log K"


def rule_npmi(rows):
    return best(rows, "npmi")["k"], "highest NPMI"


def rule_stability(rows):
    return best(rows, "distance", lower=True)["k"], "most stable (lowest matched JS distance)"


def rule_frontier(rows):
    """The K with the largest sum of standardised NPMI and exclusivity (stm's pairing of
    semantic coherence with exclusivity; topica's frontier)."""
    def z(key):
        v = np.array([r[key] for r in rows])
        return (v - v.mean()) / (v.std() or 1.0)
    i = int(np.argmax(z("npmi") + z("exclusivity")))
    return rows[i]["k"], "best NPMI + exclusivity (standardised)"


def rule_quality(rows):
    return best(rows, "quality")["k"], "highest NPMI x diversity"


def rule_quality_1se(rows):
    """Dieng et al.'s topic quality (NPMI x diversity) within one SE of the best; ties to the
    more stable K, then the smaller."""
    near = within_se(rows, "quality")
    return min(near, key=lambda r: (r["distance"], r["k"]))["k"], "quality within 1 SE, most stable"


def rule_floor(threshold):
    def rule(rows):
        """The brief's candidate: the perplexity floor (the smallest K after which doubling K gains
        less than ``threshold``), then the best quality within 1 SE above it, ties to the more
        stable and smaller K; not determined when the last doubling still gains ``threshold``."""
        gains = [gain_per_doubling(a, b) for a, b in zip(rows, rows[1:])]
        if gains and gains[-1] >= threshold:
            return None, f"perplexity still gains {gains[-1]:.0%} per doubling at the largest K"
        floor = next((rows[i]["k"] for i, g in enumerate(gains) if all(h < threshold for h in gains[i:])),
                     rows[-1]["k"])
        above = [r for r in rows if r["k"] >= floor]
        near = within_se(above, "quality")
        return min(near, key=lambda r: (r["distance"], r["k"]))["k"], f"floor K={floor}"
    return rule


def rule_ratio(rows):
    """Topic quality per unit of held-out perplexity (NPMI x diversity / perplexity), within one
    SE of the best, ties to the more stable then the smaller K: K grows while a doubling gains
    more fit (relative) than it costs quality (relative)."""
    near = within_se(rows, "balance")
    b = best(rows, "balance")
    k = min(near, key=lambda r: (r["distance"], r["k"]))["k"]
    edge = " (at the grid's edge)" if b["k"] in (rows[0]["k"], rows[-1]["k"]) else ""
    return k, f"best quality/perplexity K={b['k']}{edge}, within 1 SE: {[r['k'] for r in near]}"


def rule_new(rows):
    """select-k's rule now (ldacli.model_selection.recommend)."""
    k, why = recommend(rows)
    return k, why.split(":")[0] if k is None else "quality/perplexity, 1 SE, stable"


RULES = {
    "current": rule_current,
    "perplexity": rule_perplexity,
    "perplexity 1se": rule_perplexity_1se,
    "kneedle": rule_kneedle,
    "NPMI": rule_npmi,
    "stability": rule_stability,
    "NPMI+excl.": rule_frontier,
    "quality": rule_quality,
    "quality 1se": rule_quality_1se,
    "quality/perplexity": rule_ratio,
    "floor 5%": rule_floor(0.05),
    "floor 10%": rule_floor(0.10),
    "floor 15%": rule_floor(0.15),
    "select-k now": rule_new,
}


def table(markdown: bool) -> None:
    """Per corpus and grid: the per-K measures and each rule's choice; then, over every grid of
    three or more of each corpus's Ks, how often each rule points at the grid's edge."""
    subgrids = {rule: {"edge": 0, "undetermined": 0, "inside": 0, "truth": 0, "truth_of": 0, "same": 0, "same_of": 0}
                for rule in RULES}
    summary = []
    for name, spec in corpora().items():
        path = os.path.join(folder(name), "select-k.json")
        if not os.path.exists(path):
            print(f"{name}: no finished select-k in {folder(name)}: skipped\n")
            continue
        with open(path) as f:
            result = json.load(f)
        every = rows_of(result, folder(name))
        truth = spec.get("truth")
        for grid in spec.get("tables", [spec["grid"]]):
            ks = [int(k) for k in grid.split(",")]
            rows = [r for r in every if r["k"] in ks]
            if len(rows) < len(ks):
                print(f"{name} -k {grid}: not every K is done yet: skipped\n")
                continue
            show(name, grid, result, rows, truth, markdown)
            summary.append([f"{name} -k {grid}" + (f" (planted {truth})" if truth else "")]
                           + ["-" if k is None else str(k) for k in (fn(rows)[0] for fn in RULES.values())])
        whole = {rule: fn(every)[0] for rule, fn in RULES.items()}
        for n in range(3, len(every) + 1):
            for sub in itertools.combinations(every, n):
                sub = list(sub)
                ks = [r["k"] for r in sub]
                for rule, fn in RULES.items():
                    k, _ = fn(sub)
                    tally = subgrids[rule]
                    tally["undetermined" if k is None else "edge" if k in (ks[0], ks[-1]) else "inside"] += 1
                    if whole[rule] is not None and whole[rule] in ks and k is not None:
                        tally["same_of"] += 1
                        tally["same"] += k == whole[rule]
                    if truth in ks[1:-1]:
                        i = ks.index(truth)
                        tally["truth_of"] += 1
                        tally["truth"] += k is not None and ks[i - 1] <= k <= ks[i + 1]
    print("Each rule's K on each corpus and grid (-: not determined)")
    _print([["corpus, grid", *RULES]] + summary, markdown)
    print("Every grid of 3 or more of each corpus's Ks (all corpora): where each rule's choice lies; planted: "
          "found within the grid's neighbours of the truth (grids with the truth inside); as on the whole grid: "
          "the same choice as on the corpus's whole grid (grids that hold that K, where the rule chose one)")
    lines = [["rule", "at an edge", "not determined", "inside", "planted K found", "as on the whole grid"]]
    for rule, t in subgrids.items():
        total = t["edge"] + t["undetermined"] + t["inside"]
        if total:
            lines.append([rule, f"{t['edge'] / total:.0%}", f"{t['undetermined'] / total:.0%}",
                          f"{t['inside'] / total:.0%}", f"{t['truth']}/{t['truth_of']}",
                          f"{t['same']}/{t['same_of']}"])
    print(f"({total} grids)")
    _print(lines, markdown)


def show(name, grid, result, rows, truth, markdown) -> None:
    gains = [None] + [gain_per_doubling(a, b) for a, b in zip(rows, rows[1:])]
    print(f"{name}: {result['corpus']['n_docs']:,} documents, {result['corpus']['n_tokens']:,} tokens, "
          f"-k {grid}, {result['settings']['seeds']} seeds, {result['settings']['train'].get('iterations')} "
          f"sweeps" + (f", planted K = {truth}" if truth else ""))
    head = ["K", "perplexity", "gain/doubling", "NPMI", "diversity", "quality", "quality/ppl", "exclusivity",
            "JS stab.", "matched"]
    lines = [head]
    for r, g in zip(rows, gains):
        lines.append([str(r["k"]), f"{r['perplexity']:.0f} ± {r['perplexity_se']:.0f}",
                      "" if g is None else f"{g:.1%}", f"{r['npmi']:.3f} ± {r['npmi_se']:.3f}",
                      f"{r['diversity']:.3f}", f"{r['quality']:.4f} ± {r['quality_se']:.4f}",
                      f"{r['balance']:.3f} ± {r['balance_se']:.3f}",
                      f"{r['exclusivity']:.3f}", f"{r['distance']:.3f}", f"{r['matched']:.2f}"])
    _print(lines, markdown)
    choices = [["rule", "K", "why"]]
    for rule, fn in RULES.items():
        k, why = fn(rows)
        choices.append([rule, "not determined" if k is None else str(k), why])
    _print(choices, markdown)
    print()


def _print(lines, markdown):
    if markdown:
        print("| " + " | ".join(lines[0]) + " |")
        print("|" + "---|" * len(lines[0]))
        for line in lines[1:]:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
        for line in lines:
            print("  ".join(c.rjust(w) if i < len(line) - 1 or len(lines[0]) > 3 else c.ljust(w)
                            for i, (c, w) in enumerate(zip(line, widths))))
    print()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="run select-k on one corpus")
    r.add_argument("name", choices=sorted(corpora()))
    r.add_argument("--threads", type=int, default=1, help="pairs at a time (the same scores at any number)")
    t = sub.add_parser("table", help="every rule on every corpus whose runs are done")
    t.add_argument("--markdown", action="store_true")
    args = p.parse_args()
    if args.what == "run":
        return run(args.name, args.threads)
    table(args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
