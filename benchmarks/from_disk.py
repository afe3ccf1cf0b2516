"""Training from disk against the same run in memory (issue 45): seconds a sweep, nanoseconds a
token-sweep, peak RSS of the whole process, and the bytes read and written a sweep.

Usage::

    python benchmarks/large_corpus.py make --tokens 20M -o $LDACLI_DATA/zipf20M.npz
    ldacli convert $LDACLI_DATA/zipf20M.npz --shards 32 -o $LDACLI_DATA/zipf20M-shards
    python benchmarks/from_disk.py $LDACLI_DATA/zipf20M-shards -k 1000 --iterations 3
    python benchmarks/from_disk.py $LDACLI_DATA/zipf1G-shards -k 1000 --iterations 3 --only disk

Each run is a process of its own (``ldacli.train`` on the shard folder: its path, read whole, in
memory; its index, ``ldacli.open_shard_folder``, from disk, as ``--memory-limit`` below the
run's need in memory does), one
thread, the default snapshots, the model written to a temporary file. Printed as one JSON line a
run: the corpus's tokens, the seconds of each sweep, the mean of all but the first (which, from
disk, also writes the blocks), ns a token-sweep, peak RSS (MB), the RSS at the start of the first
sweep, and the bytes the process read and wrote (``/proc/self/io``'s rchar and wchar: through
the page cache or not) during the sweeps after the first, per sweep; then, when both ran, the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, resource, sys, time
import ldacli
from ldacli.memory import return_freed_memory
return_freed_memory()
path, k, iterations, limit, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]

def io():
    with open("/proc/self/io") as f:
        return {line.split(":")[0]: int(line.split()[1]) for line in f}

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) / 1024 for l in f if l.startswith("VmRSS:"))

stamps, ios = [time.perf_counter()], [io()]
start_rss = []
def callback(it):
    stamps.append(time.perf_counter())
    ios.append(io())
t0 = time.perf_counter()
corpus = ldacli.open_shard_folder(path) if limit == "disk" else path
model = ldacli.train(corpus, n_topics=k, iterations=iterations, seed=1, threads=1, output=out, callback=callback,
                     progress=False)
wall = time.perf_counter() - t0
sweeps = [b - a for a, b in zip(stamps[:-1], stamps[1:])]
later = range(2, len(ios))
read = [ios[i]["rchar"] - ios[i - 1]["rchar"] for i in later]
written = [ios[i]["wchar"] - ios[i - 1]["wchar"] for i in later]
print(json.dumps({"tokens": model.params["n_tokens"], "sweep_s": [round(s, 2) for s in sweeps],
                  "wall_s": round(wall, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "read_mb_per_sweep": round(sum(read) / max(1, len(read)) / 2**20),
                  "written_mb_per_sweep": round(sum(written) / max(1, len(written)) / 2**20)}))
"""


def run(folder: str, k: int, iterations: int, limit: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", CHILD, folder, str(k), str(iterations), limit,
                              os.path.join(tmp, "m.npz")], capture_output=True, text=True, cwd=tmp)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    row = json.loads(out.stdout.strip().splitlines()[-1])
    later = row["sweep_s"][1:] or row["sweep_s"]
    row["mean_later_s"] = round(sum(later) / len(later), 2)
    row["ns_per_token_sweep"] = round(1e9 * row["mean_later_s"] / row["tokens"], 1)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="a shard folder (ldacli convert --shards)")
    ap.add_argument("-k", "--topics", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--only", choices=("memory", "disk"))
    args = ap.parse_args()
    rows = {}
    for where, limit in (("memory", "none"), ("disk", "disk")):
        if args.only in (None, where):
            rows[where] = run(args.folder, args.topics, args.iterations, limit)
            print(json.dumps({"where": where, "k": args.topics, **rows[where]}), flush=True)
    if len(rows) == 2:
        m, d = rows["memory"], rows["disk"]
        print(json.dumps({"disk/memory": {"sweep": round(d["mean_later_s"] / m["mean_later_s"], 2),
                                          "peak_rss": round(d["peak_rss_mb"] / m["peak_rss_mb"], 2)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
