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
the page cache or not; and read_bytes, what came from the storage device) during the sweeps after
the first, per sweep; then, when both ran, the ratios.
``--peers mallet,tomotopy`` adds MALLET 2.1's TopicTrainer and tomotopy on the same corpus (read
whole), one thread, the same sweeps, their models written: whole processes, peak RSS from the
kernel.
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
extra = json.loads(sys.argv[6])

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
                     progress=False, **extra)
wall = time.perf_counter() - t0
sweeps = [b - a for a, b in zip(stamps[:-1], stamps[1:])]
later = range(2, len(ios))
read = [ios[i]["rchar"] - ios[i - 1]["rchar"] for i in later]
written = [ios[i]["wchar"] - ios[i - 1]["wchar"] for i in later]
storage = [ios[i]["read_bytes"] - ios[i - 1]["read_bytes"] for i in later]
print(json.dumps({"tokens": model.params["n_tokens"], "sweep_s": [round(s, 2) for s in sweeps],
                  "wall_s": round(wall, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "read_mb_per_sweep": round(sum(read) / max(1, len(read)) / 2**20),
                  "written_mb_per_sweep": round(sum(written) / max(1, len(written)) / 2**20),
                  "from_storage_mb_per_sweep": round(sum(storage) / max(1, len(storage)) / 2**20)}))
"""


def run(folder: str, k: int, iterations: int, limit: str, extra: dict) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", CHILD, folder, str(k), str(iterations), limit,
                              os.path.join(tmp, "m.npz"), json.dumps(extra)], capture_output=True, text=True, cwd=tmp)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    row = json.loads(out.stdout.strip().splitlines()[-1])
    later = row["sweep_s"][1:] or row["sweep_s"]
    row["mean_later_s"] = round(sum(later) / len(later), 2)
    row["ns_per_token_sweep"] = round(1e9 * row["mean_later_s"] / row["tokens"], 1)
    return row


# Starts a command and prints its seconds and peak RSS. Linux counts in a process's ru_maxrss the
# high-water mark of the memory it was forked from (kept across exec), so a peer started from this
# script, which has held a corpus, would be charged for it: a small launcher, whose own memory is
# fresh after exec, starts it instead.
LAUNCHER = r"""
import os, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(proc.pid, 0)
sys.stderr.write(proc.stderr.read().decode()[-2000:] if status else "")
print(time.perf_counter() - t0, usage.ru_maxrss / 1024, status)
"""


def whole_process(args: list[str], cwd: str) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of a process, from the kernel (``os.wait4``), started by
    :data:`LAUNCHER`."""
    out = subprocess.run([sys.executable, "-c", LAUNCHER, *args], cwd=cwd, capture_output=True, text=True)
    seconds, peak, status = out.stdout.split()
    if int(status) != 0 or out.returncode != 0:
        raise SystemExit(f"{args[:3]} failed: {out.stderr[-2000:]}")
    return float(seconds), float(peak)


def peer(tool: str, folder: str, k: int, iterations: int) -> dict:
    """MALLET's TopicTrainer or tomotopy on the folder's corpus (read whole, each token as its
    word), one thread, ``iterations`` sweeps, the model saved: the whole process's seconds and
    peak RSS (MALLET's import to its instance file before, not counted)."""
    import ldacli
    from bench_train import MALLET_HOME, mallet_import
    from peak_memory import TOMOTOPY

    with tempfile.TemporaryDirectory() as tmp:
        if tool == "mallet":
            instances = mallet_import(ldacli.read_corpus(folder), os.path.join(tmp, "c.mallet"))
            classpath = f"{MALLET_HOME}/target/classes:{MALLET_HOME}/target/dependency/*"
            command = ["java", "-Xmx16g", "-cp", classpath, "cc.mallet.topics.tui.TopicTrainer", "--input",
                       instances, "--num-topics", str(k), "--num-iterations", str(iterations), "--alpha",
                       str(0.1 * k), "--beta", "0.01", "--random-seed", "1", "--num-threads", "1",
                       "--optimize-interval", "0", "--show-topics-interval", "0", "--output-state",
                       os.path.join(tmp, "state.gz"), "--output-doc-topics", os.path.join(tmp, "doc-topics.txt")]
        else:
            command = [sys.executable, "-c", TOMOTOPY, folder, str(k), str(iterations), os.path.join(tmp, "m.bin")]
        seconds, peak = whole_process(command, tmp)
    return {"tool": tool, "wall_s": round(seconds, 1), "peak_rss_mb": round(peak)}




def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="a shard folder (ldacli convert --shards)")
    ap.add_argument("-k", "--topics", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--only", choices=("memory", "disk"))
    ap.add_argument("--snapshot-interval", type=int, help="ldacli's (with --iterations 12 and 1: five snapshots "
                                                          "summed, whose sums 3 sweeps do not have)")
    ap.add_argument("--peers", default="", help="also these, comma-separated: mallet (MALLET_HOME: a build of "
                                                "/work/shared/tools/build-mallet.sh), tomotopy")
    args = ap.parse_args()
    rows = {}
    for where, limit in (("memory", "none"), ("disk", "disk")):
        if args.only in (None, where):
            rows[where] = run(args.folder, args.topics, args.iterations, limit,
                              {} if args.snapshot_interval is None else {"snapshot_interval": args.snapshot_interval})
            print(json.dumps({"where": where, "k": args.topics, **rows[where]}), flush=True)
    for tool in filter(None, args.peers.split(",")):
        rows[tool] = peer(tool, args.folder, args.topics, args.iterations)
        print(json.dumps({"where": tool, "k": args.topics, **rows[tool]}), flush=True)
    if len(rows) >= 2 and "memory" in rows and "disk" in rows:
        m, d = rows["memory"], rows["disk"]
        print(json.dumps({"disk/memory": {"sweep": round(d["mean_later_s"] / m["mean_later_s"], 2),
                                          "peak_rss": round(d["peak_rss_mb"] / m["peak_rss_mb"], 2)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
