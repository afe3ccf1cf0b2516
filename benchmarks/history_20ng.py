"""`ldacli history` over a schedule of 30 K=100 models of 20 Newsgroups: its time and peak memory.

Usage::

    python benchmarks/history_20ng.py                   # trains the schedule once (about 10 minutes), then measures
    python benchmarks/history_20ng.py --models $LDACLI_DATA/history/ng20-schedule --steps 30 --topics 100

The schedule is made from the raw 20 Newsgroups posts (``$LDACLI_DATA/20ng-raw``: ``train.txt`` and
``test.txt``, one post per line, English stop words, ``--min-df 5 --max-df 0.3``) in date order as
far as the "bydate" copy allows: its posts carry no Date header (35 of 11,314 do), but the test
split was posted after the training split, and within a newsgroup the article numbers grow with
time. So the order is the training split, then the test split, each with its newsgroups interleaved
by each post's rank among its group's article numbers. Step s retrains on the first (s + 1) / 30 of
the posts (a corpus that grows, as a nightly job's does): step 0 cold (``--iterations`` sweeps),
then each step warm-started from the model before (``--warm`` sweeps), one thread.

Measured, each in a fresh process: ``ldacli.history`` over the folder (time and peak resident
memory, against a process that loads one model, and against what every model's topic-word array
held at once would take), the command line writing the page, and one step paired by diff's
matching (two of the models compared as if neither descended from the other: the whole K x K
Jensen-Shannon matrix). Then what history saw: the drift per step and the topics whose share
moved most.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import scipy.sparse as sp

import ldacli
from ldacli.corpora.corpus import Corpus
from places import DATA

RAW = os.path.join(DATA, "20ng-raw")
MEASURE = """
import json, sys, time
t0 = time.perf_counter()
import ldacli
from ldacli.over_time.history import read_history
imported = time.perf_counter() - t0
t0, c0 = time.perf_counter(), time.process_time()
what = sys.argv[1]
if what == "history":
    result = read_history(sys.argv[2])
    out = {"models": len(result["models"]), "topics": len(result["topics"])}
elif what == "one":
    m = ldacli.load_model(sys.argv[2])
    out = {"phi_bytes": m.phi.nbytes, "theta_bytes": m.theta.nbytes}
else:
    from ldacli.diff import match_topics
    a, b = ldacli.load_model(sys.argv[2]), ldacli.load_model(sys.argv[3])
    t0, c0 = time.perf_counter(), time.process_time()
    match_topics(a, b)
    out = {}
# this process's own peak (VmHWM: ru_maxrss would also count the parent it was forked from)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
out.update(seconds=time.perf_counter() - t0, cpu=time.process_time() - c0, imported=imported, peak_mib=peak / 1024)
print(json.dumps(out))
"""


def date_order() -> tuple[list[str], list[str]]:
    """The posts (text lines) and their ids, training split then test split, each split's
    newsgroups interleaved by the rank of each post's article number within its group."""
    texts, ids, keys = [], [], []
    for split_index, split in enumerate(("train", "test")):
        with open(os.path.join(RAW, f"{split}.labels"), encoding="utf-8") as f:
            labels = [line.rstrip("\n").split("\t") for line in f]
        with open(os.path.join(RAW, f"{split}.txt"), encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        by_group: dict[str, list[int]] = {}
        for i, (group, number) in enumerate(labels):
            by_group.setdefault(group, []).append(i)
        rank = {}
        for group, members in by_group.items():
            members.sort(key=lambda i: int(labels[i][1]))
            for r, i in enumerate(members):
                rank[i] = (r + 0.5) / len(members)
        for i, (group, number) in enumerate(labels):
            texts.append(lines[i])
            ids.append(f"{split}/{group}/{number}")
            keys.append((split_index, rank[i], group))
    order = sorted(range(len(texts)), key=lambda i: keys[i])
    return [texts[i] for i in order], [ids[i] for i in order]


def train(folder: str, steps: int, topics: int, iterations: int, warm: int, seed: int, threads: int) -> None:
    texts, ids = date_order()
    t0 = time.perf_counter()
    corpus = Corpus.from_texts(texts, doc_ids=ids, stop_words="english", min_df=5, max_df=0.3)
    print(f"20NG raw in date order: {corpus.n_docs:,} posts, {corpus.n_words:,} words, {corpus.n_tokens:,} tokens "
          f"(read in {time.perf_counter() - t0:.0f} s)", flush=True)
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, exist_ok=True)
    temporary = tempfile.mkdtemp(prefix=".ng20-schedule-", dir=parent)
    previous = None
    for s in range(steps):
        n = round(corpus.n_docs * (s + 1) / steps)
        part = Corpus(sp.csr_array(corpus.counts[:n]), list(corpus.vocab), corpus.doc_ids[:n], "20ng-raw", "texts")
        path = os.path.join(temporary, f"model-{s:02d}.npz")
        t0 = time.perf_counter()
        if previous is None:
            ldacli.train(part, topics, iterations=iterations, seed=seed, threads=threads, output=path)
        else:
            ldacli.train(part, warm_start=previous, iterations=warm, seed=seed + s, threads=threads, output=path)
        print(f"step {s}: {n:,} posts, {time.perf_counter() - t0:.0f} s", flush=True)
        previous = path
    os.rename(temporary, folder)


def measure(*args) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=os.path.join(DATA, "history", "ng20-schedule"), help="the schedule's folder (made if missing)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--iterations", type=int, default=300, help="sweeps of the first, cold model")
    p.add_argument("--warm", type=int, default=50, help="sweeps of each warm start")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, help="timings taken, the best reported")
    args = p.parse_args()
    if not os.path.isdir(args.models):
        train(args.models, args.steps, args.topics, args.iterations, args.warm, args.seed, args.threads)
    paths = sorted(os.path.join(args.models, n) for n in os.listdir(args.models) if n.endswith(".npz"))
    one = measure("one", paths[-1])
    runs = [measure("history", args.models) for _ in range(args.repeat)]
    best = min(runs, key=lambda r: r["seconds"])
    sizes = [ldacli.load_model(p).phi.nbytes for p in paths]
    print(f"\n{len(paths)} models of K={args.topics}, the last with phi {one['phi_bytes'] / 2**20:.0f} MiB and theta "
          f"{one['theta_bytes'] / 2**20:.0f} MiB; every phi at once would be {sum(sizes) / 2**20:.0f} MiB")
    print(f"\n(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: on a busy machine the CPU seconds are "
          f"the steadier figure)")
    print("\n| what (a fresh process each) | seconds | CPU seconds | peak resident memory |")
    print("|---|---|---|---|")
    print(f"| load the last model alone | {one['seconds']:.2f} | {one['cpu']:.2f} | {one['peak_mib']:.0f} MiB |")
    timings = ", ".join(f"{r['seconds']:.2f}" for r in runs)
    print(f"| ldacli.history over the {best['models']} models (best of {args.repeat}: {timings}) | "
          f"{best['seconds']:.2f} | {best['cpu']:.2f} | {best['peak_mib']:.0f} MiB |")
    page = tempfile.mktemp(suffix=".html")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ldacli", "history", args.models, "-o", page, "-q"], check=True)
    cli = time.perf_counter() - t0
    print(f"| ldacli history {args.models} -o page.html (the whole command) | {cli:.2f} | | |")
    matched = measure("match", paths[-2], paths[-1])
    print(f"| one step paired by diff's matching (K x K Jensen-Shannon, Hungarian) | {matched['seconds']:.2f} | "
          f"{matched['cpu']:.2f} | {matched['peak_mib']:.0f} MiB |")
    print(f"\nthe page: {os.path.getsize(page) / 2**20:.1f} MiB")
    os.remove(page)
    h = ldacli.history(args.models, as_frame=False)
    r = h.result
    print("\nper step, drift median / max: " + "; ".join(
        f"{m['step']}: {m['median_drift']:.2f}/{m['max_drift']:.2f}" for m in r["models"] if m["max_drift"] is not None))
    change = [(t["shares"][-1] - t["shares"][0], t) for t in r["topics"] if t["shares"][0] is not None
              and t["shares"][-1] is not None]
    change.sort(key=lambda x: x[0])
    print("\nshare rose most (first -> last model):")
    for d, t in change[::-1][:5]:
        print(f"  topic {t['topic']}: {100 * t['shares'][0]:.1f}% -> {100 * t['shares'][-1]:.1f}%: "
              + " ".join(t["words"][-1][:8]))
    print("share fell most:")
    for d, t in change[:5]:
        print(f"  topic {t['topic']}: {100 * t['shares'][0]:.1f}% -> {100 * t['shares'][-1]:.1f}%: "
              + " ".join(t["words"][-1][:8]))


if __name__ == "__main__":
    main()
