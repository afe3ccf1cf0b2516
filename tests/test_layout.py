"""The package's shape: one direction of dependency between modules and between folders, no
import circle, no private name imported across modules, kernels that import nothing from the
package, and a docs page (docs/development/layout.md) that names every module and no file that
is gone. Read from the source with ``ast``, imports inside functions included (:mod:`layout`)."""

import ast
import os
import re

import layout
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "src", "ldacli")
EXT = os.path.join(ROOT, "ext")

# Every module's layer: a module may import only from its own layer or lower ones (nothing
# imports upward), and the whole graph must have no circle. A new module gets a line here.
LAYERS = {
    "ldacli.version": 0, "ldacli.errors": 0,
    "ldacli.checks": 1, "ldacli.random_streams": 1, "ldacli.fileio": 1, "ldacli.parallel": 1, "ldacli.memory": 1,
    "ldacli.counts": 1, "ldacli.tokenizer": 1, "ldacli.settings": 1, "ldacli.table_formats": 1,
    "ldacli.signatures": 2,
    "ldacli.topic_word_prior": 1, "ldacli.escaping": 0,
    "ldacli.webpage": 2,
    "ldacli.corpus": 2, "ldacli.vocab_rules": 2, "ldacli.npz": 2, "ldacli.locking": 2, "ldacli.partition": 1,
    "ldacli.dask_local_cluster": 1, "ldacli.dask_connection": 2,
    "ldacli.formats": 2, "ldacli.formats.parsing": 2, "ldacli.formats.vocab": 2, "ldacli.formats.detect": 2,
    "ldacli.formats.uci": 2, "ldacli.formats.ldac": 2, "ldacli.formats.text": 2, "ldacli.formats.matrix": 2,
    "ldacli.formats.shards": 2, "ldacli.formats.read": 2, "ldacli.formats.write": 2, "ldacli.formats.stream": 2,
    "ldacli.formats.split": 2,
    "ldacli.model": 3, "ldacli.topic_names": 3, "ldacli.seed_words": 3, "ldacli.synthetic": 3, "ldacli.priors": 3,
    "ldacli.fixed_topics": 3, "ldacli.stopping": 3,
    "ldacli.api_input": 3,
    "ldacli.methods": 4, "ldacli.methods.base": 4, "ldacli.methods.cgs": 4, "ldacli.methods.cgs.method": 4,
    "ldacli.methods.vem": 4, "ldacli.methods.uncollapsed_gibbs": 4, "ldacli.diff": 4,
    "ldacli.methods.cgs.dask_engine": 4,
    "ldacli.methods.cgs.threads": 4, "ldacli.methods.cgs.dask_checkpoints": 4, "ldacli.methods.registry": 4,
    "ldacli.methods.cgs.shard": 4, "ldacli.methods.cgs.layouts": 4, "ldacli.methods.cgs.sampler": 4,
    "ldacli.methods.cgs.snapshots": 4, "ldacli.methods.warm_start": 4,
    "ldacli.methods.driver": 5, "ldacli.inference": 5, "ldacli.evaluate": 5, "ldacli.topic_coherence": 5,
    "ldacli.topic_history": 5, "ldacli.topic_trends": 5,
    "ldacli.info": 6, "ldacli.export": 6, "ldacli.model_selection": 6, "ldacli.topic_diagnostics": 6,
    "ldacli.report": 7, "ldacli.estimator": 7,
    "ldacli.over_time": 7,
    "ldacli.cli": 8, "ldacli.former_options": 8,
    "ldacli.__main__": 9, "ldacli": 9,
}


MODULES = layout.modules(PACKAGE)
KERNELS = layout.kernels(EXT)


def _imports(path: str) -> list[tuple[str, str | None, int]]:
    return layout.imports(path, MODULES, KERNELS)


def test_every_module_has_a_layer():
    assert sorted(set(MODULES) - set(LAYERS)) == []
    assert sorted(set(LAYERS) - set(MODULES)) == []


def test_nothing_imports_upward():
    assert layout.upward(MODULES, LAYERS, KERNELS) == []


def test_no_folder_imports_upward():
    """Folders are floors: a folder that imports from another is wholly above it (formats/, the
    corpus readers, below methods/, training), so neither reaches into the other's middle."""
    assert layout.folders_upward(MODULES, LAYERS, KERNELS) == []


def test_no_import_circle():
    assert layout.circles(layout.graph(MODULES, KERNELS)) == []


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


# The docs page that says how the code is organised.
LAYOUT_PAGE = os.path.join(ROOT, "docs", "development", "layout.md")


def _layout_page() -> str:
    with open(LAYOUT_PAGE, encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "ldacli" and not m.endswith("__main__")))
def test_the_docs_layout_page_names_every_module(module):
    page = _layout_page()
    package = MODULES[module].endswith("__init__.py")
    path = module.replace("ldacli.", "", 1).replace(".", "/") + ("/" if package else ".py")
    assert path in page, f"{path} is not described in docs/development/layout.md"


def test_the_docs_layout_page_names_no_file_that_is_gone():
    """Every file the page names (a module, a kernel, a test, a benchmark) is in the tree: the
    page follows the code when a module moves or is renamed."""
    named = set(re.findall(r"`([a-z0-9_/]+\.(?:py|pyx|pxd))`", _layout_page()))  # not ext/NAME.pyx
    roots = [os.path.join(ROOT, "src", "ldacli"), EXT, ROOT]
    gone = sorted(n for n in named if not any(os.path.exists(os.path.join(r, n)) for r in roots))
    assert gone == []
