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
PACKAGE = os.path.join(ROOT, "ldacli")
EXT = os.path.join(ROOT, "ext")

# Every module's floor: a module may import only from its own floor or lower ones (nothing
# imports upward), and the whole graph must have no circle. A wing (a folder of the package) is
# one floor for all its modules, sub-folders included: a wing that imports from another is wholly
# above it. A new top-level module or wing gets a line here.
FLOORS = {
    "ldacli.version": 0, "ldacli.errors": 0, "ldacli.escaping": 0, "ldacli.partition": 0,
    "ldacli.checks": 1, "ldacli.memory": 1,
    "ldacli.settings": 2, "ldacli.files": 2,
    "ldacli.parallel": 3, "ldacli.random_streams": 3, "ldacli.signatures": 3, "ldacli.corpora": 3,
    "ldacli.cluster": 3, "ldacli.topic_word_prior": 3, "ldacli.topic_counts": 3,
    "ldacli.model": 4,
    "ldacli.api_input": 5, "ldacli.topic_names": 5,
    "ldacli.diff": 6, "ldacli.scoring": 6,
    "ldacli.methods": 7, "ldacli.exporting": 7,
    "ldacli.info": 8, "ldacli.model_selection": 8, "ldacli.estimator": 8,
    "ldacli.pages": 9,
    "ldacli.over_time": 10,
    "ldacli.cli": 11, "ldacli": 11,
    "ldacli.__main__": 12,
}
# The most modules the top of the package may hold; the rest live in wings named for their job.
MOST_AT_THE_TOP = 25


def floor_of(module: str) -> int | None:
    """The floor of ``module``: its wing's (``ldacli.corpora`` for ``ldacli.corpora.formats.read``)
    or its own line; None when it has none."""
    wing = ".".join(module.split(".")[:2])
    return FLOORS.get(wing, FLOORS.get(module))


MODULES = layout.modules(PACKAGE)
KERNELS = layout.kernels(EXT)


def _imports(path: str) -> list[tuple[str, str | None, int]]:
    return layout.imports(path, MODULES, KERNELS)


LAYERS = {m: floor_of(m) for m in MODULES if floor_of(m) is not None}


def test_every_module_has_a_floor_and_every_floor_a_module():
    assert sorted(set(MODULES) - set(LAYERS)) == []
    assert sorted(set(FLOORS) - set(MODULES)) == []


def test_the_top_of_the_package_holds_few_modules():
    """The wings hold the rest: a flat street of modules hides what belongs together."""
    top = sorted(m for m, p in MODULES.items() if m.count(".") == 1 and not p.endswith("__init__.py"))
    assert len(top) <= MOST_AT_THE_TOP, top


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
    # the public names are in the stub the lazy loader reads (ldacli/__init__.pyi)
    tree = ast.parse(open(MODULES["ldacli"] + "i", encoding="utf-8").read())
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
    roots = [os.path.join(ROOT, "ldacli"), EXT, ROOT]
    gone = sorted(n for n in named if not any(os.path.exists(os.path.join(r, n)) for r in roots))
    assert gone == []
