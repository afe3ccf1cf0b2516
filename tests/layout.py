"""The package's shape read from its source with ``ast`` (imports inside functions included): its
modules, what each imports, the import circles, the imports that go up a layer, and the folders
whose modules import from a folder above them. ``tests/test_layout.py`` checks this tree with it;
``benchmarks/house.py`` reports any commit's tree with it."""

from __future__ import annotations

import ast
import os


def modules(package: str) -> dict[str, str]:
    """Every module of the package at ``package`` (a folder named ``ldacli``): dotted name -> path
    (a package by its name, without ``.__init__``)."""
    out = {}
    for folder, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(package))[:-3].replace(os.sep, ".")
                out[rel.removesuffix(".__init__")] = path
    return out


def kernels(ext: str) -> set[str]:
    """The compiled kernels' module names (``ldacli._cgs``, ...) of the ``.pyx`` files in ``ext``."""
    return {"ldacli." + os.path.splitext(n)[0] for n in os.listdir(ext) if n.endswith(".pyx")}


def imports(path: str, known: dict[str, str], compiled: set[str]) -> list[tuple[str, str | None, int]]:
    """(module imported, name imported from it or None, line) for every ldacli import of the file
    ``path``; ``from ldacli import checks`` is the module ``ldacli.checks`` itself."""
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "ldacli"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ldacli":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                if sub in known or sub in compiled:
                    found.append((sub, None, node.lineno))
                else:
                    found.append((node.module, a.name, node.lineno))
    return found


def graph(known: dict[str, str], compiled: set[str] = frozenset()) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    return {m: {t for t, _, _ in imports(p, known, compiled) if t in known} for m, p in known.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected set of two or more modules (or a module that
    imports itself), sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1 or v in edges.get(v, ()):
                out.append(sorted(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def upward(known: dict[str, str], layers: dict[str, int], compiled: set[str] = frozenset()) -> list[str]:
    """Every import of a module from a module of a higher layer."""
    return [f"{m} imports {t} (line {line})" for m, p in sorted(known.items())
            for t, _, line in imports(p, known, compiled) if t in layers and m in layers and layers[t] > layers[m]]


def folder_of(module: str, known: dict[str, str]) -> str:
    """The folder (package) a module is in: a package's ``__init__`` is in its own folder."""
    return module if known[module].endswith("__init__.py") else module.rsplit(".", 1)[0]


def folders(known: dict[str, str]) -> dict[str, list[str]]:
    """Folder -> its modules (not those of its sub-folders)."""
    out: dict[str, list[str]] = {}
    for m in known:
        out.setdefault(folder_of(m, known), []).append(m)
    return {f: sorted(ms) for f, ms in sorted(out.items())}


def _nested(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def folder_imports(known: dict[str, str], compiled: set[str] = frozenset()) -> dict[tuple[str, str], list[str]]:
    """(folder, other folder) -> the imports from the one into the other, between folders neither
    of which holds the other (``formats`` and ``methods``; not ``methods`` and ``methods.cgs``)."""
    out: dict[tuple[str, str], list[str]] = {}
    for m, targets in graph(known, compiled).items():
        for t in targets:
            a, b = folder_of(m, known), folder_of(t, known)
            if not _nested(a, b):
                out.setdefault((a, b), []).append(f"{m} imports {t}")
    return {k: sorted(v) for k, v in sorted(out.items())}


def folders_upward(known: dict[str, str], layers: dict[str, int], compiled: set[str] = frozenset()) -> list[str]:
    """Imports from one folder into another that do not go wholly down: every module of the
    imported folder must be in a lower layer than every module of the importing one (folders
    are floors, not interleaved)."""
    groups = folders(known)
    bands = {f: (min(layers.get(m, 0) for m in ms), max(layers.get(m, 0) for m in ms)) for f, ms in groups.items()}
    return [f"{a} (layers {bands[a][0]}-{bands[a][1]}) -> {b} (layers {bands[b][0]}-{bands[b][1]}): {found[0]}"
            + (f" and {len(found) - 1} more" if len(found) > 1 else "")
            for (a, b), found in folder_imports(known, compiled).items() if not bands[a][0] > bands[b][1]]
