"""Fuzz every reader: tens of thousands of generated inputs, valid and broken, per format.

Usage::

    python benchmarks/fuzz.py                      # 2,000 inputs per family (16,000 in all)
    python benchmarks/fuzz.py --per-family 5000 --seed 3 --show 5

The generators are the test suite's (``tests/fuzzing.py``): LDA-C, UCI, text files and folders,
Matrix Market and scipy ``.npz`` corpora (each also gzipped, truncated-gzipped or on standard
input), vocabularies, and ldacli's model, checkpoint and inference files with arrays swapped,
dropped, bytes flipped or truncated; and "hostile names": models whose words, document ids, topic
names and params hold escape sequences and control characters, run through topics, info, diff,
export and name on a real terminal or into a pipe (an input fails when a terminal gets a raw
control character, text for people or JSON holds one, or a table does not parse back)::

    python benchmarks/fuzz.py --families "hostile names" --per-family 10000

and three families of issue 32's inputs: "long words" (text, folders, vocabularies and LDA-C
with words around the 200 characters a vocabulary holds, and lines around a line limit scaled
down for the run), "compressed members" (ldacli's own files, which must be refused, and scipy
corpora with members deflated, bzip2'd or lzma'd and declared sizes changed) and "non-regular
files" (pipes, devices, sockets, folders, dangling links as a corpus, a vocabulary, a stop list, a
model, a checkpoint or a folder's document: each must be refused, none may hang)::

    python benchmarks/fuzz.py --families "long words,compressed members,non-regular files" --per-family 3400

and four of issue 49's: "history" (folders of small models whose warm starts, alignments and
lineages name each other by SHA-256, right or wrong, beside other files, read as a folder, a
pattern or paths), "trends" (dates files of every form, right and wrong, too short or too long,
and tables to append to), "select-k folders" (a finished or killed run's folder with its files
kept, removed, corrupted, swapped for JSON of other shapes, a pipe or a device, run again) and
"token patterns" (a received model recording any regular expression, tokenizing texts made to
show backtracking: refused, or done within 5 s)::

    python benchmarks/fuzz.py --families "history,trends,select-k folders,token patterns" --per-family 10000

For each family it prints the inputs run, how many were
read and how many refused, the number of distinct error messages (particulars blanked out),
exceptions other than ldacli's own (must be 0; the first few are shown) and the time taken.
Exits 1 when any input raised something else.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import fuzzing  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

FAMILIES = {
    "ldac": lambda: fuzzing.transported(fuzzing.ldac_inputs()),
    "uci": lambda: fuzzing.transported(fuzzing.uci_inputs()),
    "text": lambda: fuzzing.transported(fuzzing.text_inputs()),
    "textdir": fuzzing.textdir_inputs,
    "mtx": lambda: fuzzing.transported(fuzzing.mtx_inputs()),
    "npz": lambda: fuzzing.transported(fuzzing.scipy_npz_inputs()),
    "vocab": fuzzing.vocab_inputs,
    "own files": fuzzing.own_file_inputs,
    "shard folder": fuzzing.shard_folder_inputs,
    "hostile names": fuzzing.hostile_name_inputs,
    "long words": fuzzing.long_word_inputs,
    "compressed members": fuzzing.compressed_member_inputs,
    "non-regular files": fuzzing.non_regular_inputs,
    "history": fuzzing.history_inputs,
    "trends": fuzzing.trends_inputs,
    "select-k folders": fuzzing.select_k_inputs,
    "token patterns": fuzzing.token_pattern_inputs,
}


def run_family(name: str, n: int, rng_seed: int) -> dict:
    stats = {"inputs": 0, "read": 0, "errors": collections.Counter(), "other": []}

    @seed(rng_seed)
    @settings(max_examples=n, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(FAMILIES[name]())
    def one(item):
        stats["inputs"] += 1
        try:
            outcome = fuzzing.check(*item)
        except fuzzing.NotOurError as exc:
            stats["other"].append(str(exc)[:300])
            return
        if outcome is None:
            stats["read"] += 1
        else:
            stats["errors"][outcome] += 1

    t0 = time.perf_counter()
    one()
    stats["seconds"] = time.perf_counter() - t0
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=3, help="other exceptions shown per family")
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    print(f"{'family':10} {'inputs':>7} {'read':>6} {'refused':>7} {'distinct errors':>15} {'other exc.':>10} {'seconds':>8}")
    total_other = total_inputs = 0
    for name in args.families.split(","):
        s = run_family(name, args.per_family, args.seed)
        refused = sum(s["errors"].values())
        print(f"{name:10} {s['inputs']:7d} {s['read']:6d} {refused:7d} {len(s['errors']):15d} {len(s['other']):10d} "
              f"{s['seconds']:8.1f}", flush=True)
        for text in s["other"][:args.show]:
            print(f"    OTHER: {text}")
        total_other += len(s["other"])
        total_inputs += s["inputs"]
    print(f"{'all':10} {total_inputs:7d}  other exceptions: {total_other}")
    return 1 if total_other else 0


if __name__ == "__main__":
    sys.exit(main())
