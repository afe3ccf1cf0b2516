"""The package's shape at a commit: rooms (modules and lines per folder), floors (the layer table
of that commit's ``tests/test_layout.py``), upward arrows and import circles, computed from the
source (``tests/layout.py``), for a before-and-after of a reorganisation.

Usage::

    python benchmarks/house.py [--at COMMIT] [--modules]

Without ``--at``, the working tree. Reports: each folder's modules and lines (and the
collapsed-Gibbs engine's, :data:`ENGINE`, with ``ext/_cgs.pyx``); the modules of each layer;
the imports that go up a layer of the commit's own table; the imports between folders that are
not wholly downward (a folder's modules all above the other's); the circles between modules
and between folders; and which training modules evaluation, inference and select-k import,
directly or not.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
from trees import package_folders, package_parent

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))

import layout  # noqa: E402

# The collapsed-Gibbs engine's modules, as they were named before and after issue 34.
ENGINE = re.compile(r"ldacli\.(methods\.(cgs|sharded|distributed|shard_checkpoints|cluster|local_cluster)(\..*)?"
                    r"|dask_\w+|partition)")


def tree_at(commit: str | None, where: str) -> str:
    """The repository's files at ``commit`` unpacked in ``where`` (the working tree for None)."""
    if commit is None:
        return REPO
    top = subprocess.run(["git", "-C", REPO, "ls-tree", "--name-only", commit], check=True, capture_output=True,
                         text=True).stdout.split()
    archive = subprocess.run(["git", "-C", REPO, "archive", commit, *package_folders(top), "ext", "tests/test_layout.py"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", where], input=archive, check=True)
    return where


def layer_table(root: str, known: dict[str, str]) -> dict[str, int]:
    """Each module's layer in the tree's ``tests/test_layout.py``: its ``LAYERS`` dict (up to 0.2),
    or its ``FLOORS`` (a wing's floor for every module in it, a top-level module's own)."""
    tree = ast.parse(open(os.path.join(root, "tests", "test_layout.py"), encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "LAYERS" for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                continue  # derived from FLOORS
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "FLOORS" for t in node.targets):
            floors = ast.literal_eval(node.value)
            return {m: floors.get(".".join(m.split(".")[:2]), floors.get(m)) for m in known
                    if floors.get(".".join(m.split(".")[:2]), floors.get(m)) is not None}
    return {}


def lines(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def closure(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        for t in edges.get(m, ()):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def report(root: str, show_modules: bool) -> None:
    known = layout.modules(os.path.join(package_parent(root), "ldacli"))
    compiled = layout.kernels(os.path.join(root, "ext"))
    layers = layer_table(root, known)
    edges = layout.graph(known, compiled)
    print(f"{len(known)} modules, {sum(lines(p) for p in known.values()):,} lines")
    print("\nRooms (folder: modules, lines)")
    for folder, ms in layout.folders(known).items():
        print(f"  {folder.replace('.', '/') + '/':28} {len(ms):3} {sum(lines(known[m]) for m in ms):7,}")
        if show_modules:
            for m in ms:
                print(f"      {m:44} {lines(known[m]):5}  layer {layers.get(m, '?')}")
    engine = sorted(m for m in known if ENGINE.fullmatch(m))
    pyx = os.path.join(root, "ext", "_cgs.pyx")
    print(f"\nThe collapsed-Gibbs engine: {len(engine)} modules, {sum(lines(known[m]) for m in engine):,} lines "
          f"+ ext/_cgs.pyx {lines(pyx):,}: " + ", ".join(m.replace("ldacli.", "") for m in engine))
    print("\nFloors (layer: modules)")
    for level in sorted(set(layers.values())):
        ms = sorted(m.replace("ldacli.", "") for m, v in layers.items() if v == level)
        print(f"  {level}: {len(ms):2}  {', '.join(ms)}")
    up = layout.upward(known, layers, compiled)
    print(f"\nImports up a layer (the commit's own table): {len(up)}")
    for line in up:
        print("  " + line)
    between = layout.folder_imports(known, compiled)
    print("\nImports between folders:")
    for (a, b), found in between.items():
        print(f"  {a} -> {b}: {len(found)}")
    fup = layout.folders_upward(known, layers, compiled)
    print(f"\nFolders importing a folder not wholly below them: {len(fup)}")
    for line in fup:
        print("  " + line)
    cyc = layout.circles(edges)
    print(f"\nImport circles between modules: {len(cyc)}")
    for c in cyc:
        print("  " + " <-> ".join(c))
    fedges: dict[str, set[str]] = {}
    for a, b in between:
        fedges.setdefault(a, set()).add(b)
    fcyc = layout.circles(fedges)
    print(f"Import circles between folders: {len(fcyc)}")
    for c in fcyc:
        print("  " + " <-> ".join(c))
    print("\nTraining modules reached (directly or not) from:")
    training = ("ldacli.methods",)
    for m in ("ldacli.scoring.perplexity", "ldacli.scoring.inference", "ldacli.model_selection", "ldacli.corpora.formats.shards"):
        if m in known:
            reached = sorted(t for t in closure(edges, m) if t.startswith(training))
            print(f"  {m}: {len(reached)}" + (f" ({', '.join(t.replace('ldacli.', '') for t in reached)})"
                                              if reached else ""))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--at", help="a commit (default: the working tree)")
    parser.add_argument("--modules", action="store_true", help="list every module with its lines and layer")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ldacli-house-") as tmp:
        report(tree_at(args.at, tmp), args.modules)
    return 0


if __name__ == "__main__":
    sys.exit(main())
