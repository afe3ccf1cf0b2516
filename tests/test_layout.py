"""The package's shape: one direction of dependency, no import circle, no private name imported
across modules, kernels that import nothing from the package, and a docs page
(docs/development/layout.md, How the code is organised) that names every module. Read from the source with ``ast``, imports inside functions included."""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "src", "ldacli")
EXT = os.path.join(ROOT, "ext")

# Every module's layer: a module may import only from its own layer or lower ones (nothing
# imports upward), and the whole graph must have no circle. A new module gets a line here.
LAYERS = {
    "ldacli.version": 0, "ldacli.errors": 0,
    "ldacli.checks": 1, "ldacli.seeds": 1, "ldacli.fileio": 1, "ldacli.parallel": 1, "ldacli.memory": 1,
    "ldacli.counts": 1, "ldacli.tokenizer": 1, "ldacli.settings": 1, "ldacli.tables": 1,
    "ldacli.signatures": 2,
    "ldacli.topic_word_prior": 1, "ldacli.escaping": 0,
    "ldacli.webpage": 2,
    "ldacli.corpus": 2, "ldacli.vocab_rules": 2, "ldacli.npz": 2, "ldacli.locking": 2, "ldacli.methods.sharded": 2,
    "ldacli.formats": 2, "ldacli.formats.parsing": 2, "ldacli.formats.vocab": 2, "ldacli.formats.detect": 2,
    "ldacli.formats.uci": 2, "ldacli.formats.ldac": 2, "ldacli.formats.text": 2, "ldacli.formats.matrix": 2,
    "ldacli.formats.shards": 2, "ldacli.formats.read": 2, "ldacli.formats.write": 2, "ldacli.formats.stream": 2,
    "ldacli.formats.split": 2,
    "ldacli.model": 3, "ldacli.topic_names": 3, "ldacli.seed_words": 3, "ldacli.synthetic": 3, "ldacli.priors": 3,
    "ldacli.fixed_topics": 3, "ldacli.stopping": 3,
    "ldacli.api_input": 3,
    "ldacli.methods": 4, "ldacli.methods.base": 4, "ldacli.methods.cgs": 4,
    "ldacli.methods.vem": 4, "ldacli.methods.ugibbs": 4, "ldacli.diff": 4, "ldacli.methods.distributed": 4,
    "ldacli.methods.cluster": 4, "ldacli.methods.shard_checkpoints": 4, "ldacli.methods.local_cluster": 4,
    "ldacli.methods.driver": 5, "ldacli.inference": 5, "ldacli.evaluate": 5, "ldacli.topic_coherence": 5,
    "ldacli.topic_history": 5, "ldacli.topic_trends": 5,
    "ldacli.info": 6, "ldacli.export": 6, "ldacli.model_selection": 6, "ldacli.topic_diagnostics": 6,
    "ldacli.report": 7, "ldacli.estimator": 7,
    "ldacli.over_time": 7,
    "ldacli.cli": 8, "ldacli.former_options": 8,
    "ldacli.__main__": 9, "ldacli": 9,
}


def _modules() -> dict[str, str]:
    out = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].replace(os.sep, ".")
                out[rel.removesuffix(".__init__")] = path
    return out


MODULES = _modules()
KERNELS = {"ldacli." + os.path.splitext(n)[0] for n in os.listdir(EXT) if n.endswith(".pyx")}


def _imports(path: str) -> list[tuple[str, str | None, int]]:
    """(module imported, name imported from it or None, line) for every ldacli import."""
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "ldacli"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ldacli":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                if sub in MODULES or sub in KERNELS:  # `from ldacli import checks`: the module itself
                    found.append((sub, None, node.lineno))
                else:
                    found.append((node.module, a.name, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    return {m: {target for target, _, _ in _imports(p) if target in MODULES} for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    assert sorted(set(MODULES) - set(LAYERS)) == []
    assert sorted(set(LAYERS) - set(MODULES)) == []


def test_nothing_imports_upward():
    upward = [f"{m} imports {t} (line {line})" for m, p in MODULES.items() for t, _, line in _imports(p)
              if t in LAYERS and LAYERS[t] > LAYERS[m]]
    assert upward == []


def test_no_import_circle():
    graph, state, cycles = _graph(), {}, []

    def visit(m, path):
        state[m] = "open"
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                cycles.append(" -> ".join(path[path.index(t):] + [t]))
            elif t not in state:
                visit(t, path + [t])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_no_private_name_is_imported_across_modules():
    private = [f"{m}: from {t} import {name} (line {line})" for m, p in MODULES.items()
               for t, name, line in _imports(p)
               if name is not None and name.startswith("_") and not name.startswith("__")]
    assert private == []


def test_the_kernels_import_nothing_from_the_package():
    for name in os.listdir(EXT):
        if name.endswith((".pyx", ".pxd")):
            text = open(os.path.join(EXT, name), encoding="utf-8").read()
            assert not re.search(r"^\s*(c?import|from)\s+ldacli", text, re.M), name


def test_no_module_is_shadowed_by_a_name_of_the_package():
    tree = ast.parse(open(MODULES["ldacli"], encoding="utf-8").read())
    names = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for a in node.names}
    names |= {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
              if isinstance(t, ast.Name)}
    submodules = {m.split(".")[1] for m in MODULES if m.count(".") == 1}
    assert sorted(names & submodules) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "ldacli" and not m.endswith("__main__")))
def test_the_docs_layout_page_names_every_module(module):
    with open(os.path.join(ROOT, "docs", "development", "layout.md"), encoding="utf-8") as f:
        page = f.read()
    package = MODULES[module].endswith("__init__.py")
    path = module.replace("ldacli.", "", 1).replace(".", "/") + ("/" if package else ".py")
    assert path in page, f"{path} is not described in docs/development/layout.md"