"""What the tokenizer's settings do to the topics of raw mail and news: 20 Newsgroups as posted.

Usage::

    python benchmarks/tokenizer_quality.py                      # every variant, seeds 1 and 2, K=50
    python benchmarks/tokenizer_quality.py --variants before,drop --seeds 1 --show
    python benchmarks/tokenizer_quality.py -k 20 --sweeps 50 --max-docs 2000   # a quick check

Reads the raw posts (``--raw``: a folder with ``train.txt``/``test.txt``, one post per line, and
``20news-bydate-train/`` with the posts as files; ``$LDACLI_DATA/20ng-raw`` by default, see its
README), trains K topics on the training posts per tokenizer variant and seed (the English stop
list, ``--min-df 5 --max-df 0.3``, collapsed Gibbs, one thread), and prints one row per variant:

* ``words``, ``tokens``: the training vocabulary and tokens after the rules;
* ``NPMI``: mean NPMI of the topics' top 10 words over the test posts read as the model reads
  text (higher is better; comparable across variants, which score their own words);
* ``perplexity``: held-out perplexity of the test posts by document completion (lower is
  better, but only comparable between variants with the same vocabulary);
* ``boiler``: topics made of mail boilerplate: at least 3 of the top 10 words are header
  words, words with at least half of their training tokens in the posts' header lines (From,
  Organization, NNTP-Posting-Host, ...), attribution lines (``In article <...>, ... writes:``)
  or a whitespace-separated chunk holding an ``@``;
* with ``--show``, every topic's top words, boilerplate words marked ``*``.

Variants: ``before`` (ldacli 0.2's tokenizer: letter runs, addresses split), ``drop`` (the
default: letters and digits, numbers dropped, addresses dropped), ``letters`` (letter runs,
addresses dropped), ``keep`` (addresses kept whole), ``numbers`` (numbers kept), ``phrases``
(``drop`` then frequent collocations joined, ``new_york``: adjacent pairs seen 20+ times with
NPMI >= 0.5, as gensim's Phrases would find them).

Measured here (2 cores shared by several runs; seeds 1 and 2, K=50, 500 sweeps)::

    variant     words     tokens                   NPMI               perplexity     boiler  notes
    before     22,234  1,401,927 0.1964 (0.1937/0.1991)         2988 (2984/2992) 17.5 (18/17)
    drop       20,540  1,301,066 0.2307 (0.2330/0.2285)         2813 (2816/2809)  5.0 (5/5)
    letters    20,096  1,286,812 0.2301 (0.2325/0.2277)         2809 (2813/2806)  5.0 (6/4)
    keep       22,001  1,320,550 0.2199 (0.2218/0.2179)         2894 (2889/2899)  6.0 (7/5)
    numbers    21,817  1,335,744 0.2184 (0.2222/0.2146)         2956 (2942/2970)  4.5 (4/5)
    phrases    21,420  1,267,459 0.2181 (0.2294/0.2068)         3021 (3012/3030)  6.0 (4/8)  1361 phrases

Hence the defaults (``drop``), and no n-gram option: collocations did not help, and joined
mail-header pairs (``posting_host``, ``newsreader_tin``) into new boilerplate words.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter

import numpy as np

import ldacli
from ldacli.corpora.tokenizer import LEGACY, Tokenizer
from ldacli.corpora.vocab_rules import load_stop_words
from places import DATA

RAW = os.environ.get("LDACLI_RAW_20NG", os.path.join(DATA, "20ng-raw"))
VARIANTS = {
    "before": dict(LEGACY),
    "drop": {},
    "letters": {"token_pattern": LEGACY["token_pattern"]},
    "keep": {"addresses": "keep"},
    "numbers": {"numbers": "keep"},
    "phrases": {},
}
PHRASE_MIN_COUNT, PHRASE_NPMI = 20, 0.5
BOILER_SHARE, BOILER_TOP, BOILER_WORDS = 0.5, 10, 3


def posts(raw: str, split: str, max_docs: int | None) -> tuple[list[str], list[str]]:
    """The posts of ``split`` as lines and their files' paths (``train.labels`` order)."""
    lines = open(os.path.join(raw, f"{split}.txt"), encoding="utf-8").read().split("\n")[:-1]
    labels = [line.split("\t") for line in open(os.path.join(raw, f"{split}.labels"), encoding="utf-8")]
    files = [os.path.join(raw, f"20news-bydate-{split}", g, n.strip()) for g, n in labels]
    return lines[:max_docs], files[:max_docs]


ATTRIBUTION = re.compile(r"^.*(?:\b(?:writes|wrote|says)\s*:|^in article\b).*$", re.I | re.M)


def header_share(files: list[str], tokenizer: Tokenizer) -> dict[str, float]:
    """Each word's share of its tokens that are in a header line, an attribution line (``In
    article <...>, keith@... (Keith Schneider) writes:``) or an ``@`` chunk."""
    inside, total = Counter(), Counter()
    for path in files:
        text = open(path, "rb").read().decode("utf-8", errors="replace")
        head, _, body = text.partition("\n\n")
        quoted = "\n".join(ATTRIBUTION.findall(body))
        body = ATTRIBUTION.sub("", body)
        at = " ".join(c for c in body.split() if "@" in c)
        rest = " ".join(c for c in body.split() if "@" not in c)
        h = tokenizer(head) + tokenizer(quoted) + tokenizer(at)
        inside.update(h)
        total.update(h)
        total.update(tokenizer(rest))
    return {w: inside[w] / n for w, n in total.items()}


def phrase_texts(train: list[str], test: list[str], tokenizer: Tokenizer) -> tuple[list[str], list[str], int]:
    """The posts as their tokens (stop words out), frequent collocations joined by ``_``."""
    stop = {w.lower() for w in load_stop_words("english")}
    docs = [[t for t in tokenizer(x) if t not in stop] for x in train]
    uni, bi = Counter(), Counter()
    for toks in docs:
        uni.update(toks)
        bi.update(zip(toks, toks[1:]))
    n = sum(uni.values())
    table = set()
    for (a, b), c in bi.items():
        if c >= PHRASE_MIN_COUNT:
            pab = c / n
            if math.log(pab / (uni[a] / n * uni[b] / n)) / -math.log(pab) >= PHRASE_NPMI:
                table.add((a, b))

    def join(toks: list[str]) -> str:
        out, i = [], 0
        while i < len(toks):
            if i + 1 < len(toks) and (toks[i], toks[i + 1]) in table:
                out.append(toks[i] + "_" + toks[i + 1])
                i += 2
            else:
                out.append(toks[i])
                i += 1
        return " ".join(out)

    test_docs = [[t for t in tokenizer(x) if t not in stop] for x in test]
    return [join(d) for d in docs], [join(d) for d in test_docs], len(table)


def run(name: str, seed: int, train: list[str], test: list[str], files: list[str], args, folder: str) -> dict:
    settings = VARIANTS[name]
    tokenizer = Tokenizer(**settings)
    reading = dict(settings, min_df=5, max_df=0.3)
    extra = ""
    if name == "phrases":
        train, test, n_phrases = phrase_texts(train, test, tokenizer)
        reading = dict(token_pattern=r"\S+", addresses="split", numbers="keep", min_token_length=1,
                       stop_words="none", min_df=5, max_df=0.3)
        extra = f"{n_phrases} phrases"
    paths = []
    for split, lines in (("train", train), ("test", test)):
        paths.append(os.path.join(folder, f"{name}-{split}.txt"))
        with open(paths[-1], "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    corpus = ldacli.read_corpus(paths[0], **reading)
    t0 = time.perf_counter()
    model = ldacli.train(corpus, args.topics, iterations=args.sweeps, seed=seed, threads=1)
    seconds = time.perf_counter() - t0
    held = ldacli.read_corpus(paths[1], stop_words=None, **model.reading())
    npmi = ldacli.coherence(model, held, measure="npmi", top_words=10)
    ppl = ldacli.perplexity(model, held, seed=1, threads=1)
    share = header_share(files, tokenizer if name != "phrases" else Tokenizer(**VARIANTS["drop"]))

    def boiler(word: str) -> bool:
        parts = word.split("_") if name == "phrases" else [word]
        return any(share.get(p, 0.0) >= BOILER_SHARE for p in parts)

    tops = model.top_words(BOILER_TOP)
    marked = [[w + ("*" if boiler(w) else "") for w, _ in topic] for topic in tops]
    n_boiler = sum(1 for topic in marked if sum(w.endswith("*") for w in topic) >= BOILER_WORDS)
    return {"variant": name, "seed": seed, "words": corpus.n_words, "tokens": corpus.n_tokens,
            "npmi": npmi["mean"], "perplexity": ppl["perplexity"], "unknown": ppl["unknown_tokens"],
            "boiler": n_boiler, "seconds": seconds, "extra": extra, "topics": marked,
            "per_topic_npmi": npmi["per_topic"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--raw", default=RAW)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--seeds", default="1,2")
    p.add_argument("-k", "--topics", type=int, default=50)
    p.add_argument("--sweeps", type=int, default=500)
    p.add_argument("--max-docs", type=int, default=None)
    p.add_argument("--show", action="store_true", help="print every topic's top words")
    args = p.parse_args()
    if not os.path.isdir(args.raw):
        sys.exit(f"{args.raw}: no raw 20 Newsgroups here (give --raw or LDACLI_RAW_20NG)")
    train, files = posts(args.raw, "train", args.max_docs)
    test, _ = posts(args.raw, "test", args.max_docs)
    folder = tempfile.mkdtemp(prefix="tokenizer-quality-")
    rows = []
    for name in args.variants.split(","):
        for seed in [int(s) for s in args.seeds.split(",")]:
            row = run(name, seed, train, test, files, args, folder)
            rows.append(row)
            print(f"# {name} seed {seed}: {row['seconds']:.0f} s", file=sys.stderr, flush=True)
            if args.show:
                for k, (topic, score) in enumerate(zip(row["topics"], row["per_topic_npmi"])):
                    flag = "B" if sum(w.endswith("*") for w in topic) >= BOILER_WORDS else " "
                    print(f"{name} s{seed} {flag} {k:2d} ({score:+.3f}): {' '.join(topic)}")
    print(f"\nraw 20NG, K={args.topics}, {args.sweeps} sweeps, English list, --min-df 5 --max-df 0.3; "
          f"mean over seeds {args.seeds} (each seed's value in brackets)")
    print(f"{'variant':<9} {'words':>7} {'tokens':>10} {'NPMI':>22} {'perplexity':>24} {'boiler':>10}  notes")
    for name in args.variants.split(","):
        mine = [r for r in rows if r["variant"] == name]
        if not mine:
            continue

        def cell(key: str, fmt: str, mean_fmt: str | None = None) -> str:
            values = [r[key] for r in mine]
            each = "/".join(format(v, fmt) for v in values)
            return f"{np.mean(values):{mean_fmt or fmt}} ({each})" if len(values) > 1 else format(values[0], fmt)
        print(f"{name:<9} {mine[0]['words']:>7,} {mine[0]['tokens']:>10,} {cell('npmi', '.4f'):>22} "
              f"{cell('perplexity', '.0f'):>24} {cell('boiler', 'd', '.1f'):>10}  {mine[0]['extra']}")


if __name__ == "__main__":
    main()
