"""Which topics do the junk flags catch, and which good ones do they flag? The calibration of
``ldacli.scoring.diagnostics``'s thresholds, on real corpora.

Usage::

    python benchmarks/diagnostics_calibration.py                  # raw 20NG and KOS, K=50, seeds 1 and 2
    python benchmarks/diagnostics_calibration.py --corpus ap --corpus 20ng-uci --folder /tmp/calib
    python benchmarks/diagnostics_calibration.py --all-topics     # every topic, not only the flagged ones
    python benchmarks/diagnostics_calibration.py --model mine.npz   # another model (its corpus where it records)

For each corpus it trains (one thread; models kept in ``--folder`` and reused) K=50 topics with
1000 sweeps and seeds 1 and 2, computes the diagnostics against the training corpus and prints
the flagged topics with their top words and the measures the flags read (a measurement, not a
verdict, in brackets: ``benchmarks/calibration.py`` holds the flags out; only verdicts count as
flagged below). Corpora: ``20ng-raw``
(``$LDACLI_DATA/20ng-raw/train.txt``, one post a line, headers and signatures kept; English stop
list, ``--min-df 5 --max-df 0.3``), ``kos`` and ``20ng-uci`` (``$LDACLI_CORPORA``), ``ap``
(``$LDACLI_DATA/ap/ap.dat``).

Beside them, the topics a person judged junk (e-mail hosts, signatures and headers, uuencoded
files, background words, site templates, mixtures) or borderline when the thresholds were set:
named by their first three words, so that a model that is not the one judged (another version's
sampler, another tokenizer) is noticed and left uncounted; look at its topics yourself then
(``--all-topics``). With the judgement: flagged junk (hits), junk not flagged (misses), and good
topics flagged (false alarms). Seed 1 set the thresholds; seed 2 checks them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import ldacli
from ldacli.scoring.coherence import training_reference
from ldacli.scoring.diagnostics import THRESHOLDS, diagnostics
from places import CORPORA, DATA

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = {
    "20ng-raw": ([os.path.join(DATA, "20ng-raw", "train.txt")], ["--stop-words", "english", "--min-df", "5",
                                                                "--max-df", "0.3"]),
    "kos": ([os.path.join(CORPORA, "docword.kos.txt.gz")], []),
    "20ng-uci": ([os.path.join(CORPORA, "docword.20ng.txt.gz")], []),
    "ap": ([os.path.join(DATA, "ap", "ap.dat")], ["--vocab", os.path.join(DATA, "ap", "vocab.txt")]),
}
# The judgements of the models this script trains (ldacli 0.2), by each topic's first three words:
# junk, then borderline; every other topic was judged good. 20ng-raw seed 1 has two: today's
# tokenizer, and the text engineer's of issue 33 (addresses and URLs are not words), whose model
# was trained on its tokens (convert, then train); the one whose words are all found applies.
JUDGED = {
    ("20ng-raw", 1): [(
        ["ibm apr science", "berkeley mot brian", "uchicago year upenn", "org utexas reply", "max bhj giz",
         "cwru cleveland freenet", "uiuc cso indiana", "virginia cramer men", "stratus points andy",
         "entry output file", "mil navy iastate", "access newsreader tin", "state ohio acs", "andrew cmu gov", "washington apple uni",
         "pitt gordon banks", "san new california", "think people good", "point time people", "thanks please know"],
        ["sun eng apr", "caltech keith morality", "people time left", "list mail information", "research health study",
         "money insurance columbia"]), (
        ["inc opinions systems", "file entry output", "newsreader tin version", "san california new",
         "western case usa", "please thanks mail", "max g9v b8f", "apr reply computer", "time year years",
         "technology institute software", "people think know"],
        ["research center information", "people know saw", "black new white", "science different time",
         "good year players", "problem problems time", "msg men food"])],
    ("20ng-raw", 2): [(
        ["ibm pitt austin", "apr bnr umd", "berkeley sun brian", "thanks please help", "newsreader tin sandvik",
         "mit purdue indiana", "file entry output", "uiuc cso uni", "people think know", "netcom washington san",
         "cwru cleveland freenet", "state ohio acs", "people think question", "msg food steve", "max bhj giz",
         "colorado rpi radar", "stanford mil navy", "time good problem"],
        ["caltech keith sgi", "fbi stratus koresh", "men sex cramer", "sale andrew cmu", "information april new",
         "people know time", "period play pts"])],
    ("kos", 1): [(
        ["november voting election", "november vote voting", "november house account", "november ground trouble",
         "november poll vote", "article wrong read", "time strong place", "people theyre time"],
        ["people policy issues", "meteor blades time", "people life family"])],
    ("kos", 2): [(
        ["people theyre isnt", "times article read", "november poll house", "november voting kerry", "time people win",
         "time close politics"],
        ["time dkos ive", "blair security women", "america people men", "people american rights",
         "policy energy states"])],
    ("20ng-uci", 1): [(
        ["edu lines organization", "max bhj giz", "com writes edu", "file entry output", "com article writes",
         "edu uiuc writes", "com lines subject", "edu com article", "time use large", "com netcom writes",
         "does think people", "edu university article", "edu writes article", "don just like", "edu pitt lines",
         "edu state colorado"],
        ["edu sale lines", "space access henry", "fbi koresh batf", "god edu writes", "information national research",
         "said went didn"])],
}
SHOWN = ("npmi", "document_dist", "companion_topics", "top_docs_share", "top_doc_similarity", "tokens")


def train(files: list[str], options: list[str], k: int, iterations: int, seed: int, out: str) -> None:
    subprocess.run([sys.executable, "-m", "ldacli", "train", files[0], *options, "-k", str(k), "--iterations",
                    str(iterations), "--seed", str(seed), "--threads", "1", "-q", "-o", out], check=True)


def judge(result: dict, words: list[str]) -> str:
    """Hits, misses and false alarms against the judgement in :data:`JUDGED` of this model (the
    one whose topics' words are all found), or why there is none."""
    judgements = [(junk, borderline) for each in JUDGED.values() for junk, borderline in each
                  if all(w in words for w in junk + borderline)]
    if not judgements:
        return ("no judgement of this model (not one judged: another sampler, tokenizer or version): look at its "
                "topics (--all-topics)")
    junk, borderline = judgements[0]
    label = ["junk" if w in junk else "borderline" if w in borderline else "good" for w in words]
    flagged = [t["topic"] for t in result["topics"] if t["flags"]]

    def count(kind):
        return f"{sum(label[k] == kind for k in flagged)} of {label.count(kind)}"

    missed = [words[k] for k in range(len(words)) if label[k] == "junk" and k not in flagged]
    return (f"flagged {len(flagged)} of {len(words)}: junk {count('junk')} (missed: {', '.join(missed) or 'none'}), "
            f"borderline {count('borderline')}, good {count('good')} (false alarms)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", action="append", choices=sorted(SOURCES), help="20ng-raw, kos (default both)")
    p.add_argument("--seed", action="append", type=int, help="1 and 2 by default")
    p.add_argument("-k", "--topics", type=int, default=50)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--folder", default="/tmp/ldacli-diagnostics-calibration")
    p.add_argument("--all-topics", action="store_true", help="list every topic, not only the flagged ones")
    p.add_argument("--model", action="append", default=[],
                   help="also a model file trained elsewhere (its training corpus must be where it records)")
    args = p.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    print("thresholds: " + ", ".join(f"{k} {v:g}" for k, v in THRESHOLDS.items()))
    models = []
    for name in args.corpus or ([] if args.model else ["20ng-raw", "kos"]):
        files, options = SOURCES[name]
        if not os.path.exists(files[0]):
            print(f"{files[0]}: missing, {name} skipped", file=sys.stderr)
            continue
        for seed in args.seed or [1, 2]:
            out = os.path.join(args.folder, f"{name}-k{args.topics}-i{args.iterations}-s{seed}.npz")
            if not os.path.exists(out):
                train(files, options, args.topics, args.iterations, seed, out)
            models.append((f"{name}, K={args.topics}, {args.iterations} sweeps, seed {seed}", out))
    models += [(path, path) for path in args.model]
    for title, path in models:
        model = ldacli.load_model(path)
        result = diagnostics(model, training_reference(model))
        words = [" ".join(w for w, _ in top) for top in model.top_words(3)]
        print(f"\n== {title}: " + judge(result, words))
        print(f"{'topic':>5}  " + "  ".join(f"{s[:10]:>10}" for s in SHOWN) + "  flags: top words")
        tops = model.top_words(8)
        for t in result["topics"]:
            if t["flags"] or t["measured"] or args.all_topics:
                cells = "  ".join("         -" if t[s] is None else f"{t[s]:>10.4g}" for s in SHOWN)
                raised = t["flags"] + [f"({m})" for m in t["measured"]]  # measurements in brackets: not verdicts
                print(f"{t['topic']:>5}  {cells}  {','.join(raised) or '-'}: "
                      + " ".join(w for w, _ in tops[t["topic"]]))


if __name__ == "__main__":
    main()
