import glob
import os
import sys

import pytest

# The tests run against the installed package, with its compiled kernels: `python -m pytest` from
# the repository's root would put the root first on sys.path and import the source tree beside
# them, which has no kernels unless they were built in place (`pip install -e .`).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not glob.glob(os.path.join(ROOT, "ldacli", "_cgs*.so")):
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != ROOT]

import ldacli  # noqa: E402

from ldacli.corpora.formats.write import write_corpus  # noqa: E402
from ldacli.corpora.synthetic import generate  # noqa: E402


# The quick check is `pytest -m "not slow"`: a test marked dask, browser or signals is slow too.
HEAVY = ("dask", "browser", "signals")
# Fixtures that open a headless chromium (tests/test_report.py): a test that takes one is a browser test.
BROWSERS = {"browser", "phone"}


@pytest.fixture(autouse=True, scope="session")
def away_from_the_source_tree(tmp_path_factory):
    """The tests, and every process they start (``python -m ldacli``, ``python -c``), run in a
    folder of their own: from the repository's root, Python would put the source tree's
    ``ldacli/`` (without its compiled kernels) before the installed package; and a test that
    wrote into the working directory would write there."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(here)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if BROWSERS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
        if any(item.get_closest_marker(name) for name in HEAVY):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`pytest -n auto`: one worker per core this process may use (its CPU affinity, which
    taskset, containers and batch schedulers narrow), as ldacli's own --threads counts them."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.fixture
def small_chunks(monkeypatch):
    """Cut the work of the chunked methods (VEM, uncollapsed Gibbs) into many small ranges, each
    with its own random stream, so that the thread tests have something to share."""
    from ldacli import parallel

    monkeypatch.setattr(parallel, "CHUNK_NNZ", 300)


@pytest.fixture
def without_module(monkeypatch):
    """``without_module(name)``: from then on, as where the package ``name`` is not installed,
    importing it fails (an optional extra missing)."""
    import builtins

    real = builtins.__import__

    def without(missing: str) -> None:
        def importing(name, *args, **kwargs):
            if name == missing:
                raise ImportError("not installed")
            return real(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", importing)

    return without


@pytest.fixture
def without_the_report_extra(without_module):
    """As where the report extra (vl-convert-python) is not installed: importing it fails."""
    without_module("vl_convert")


@pytest.fixture(scope="session")
def planted():
    """A synthetic corpus with 5 well-separated planted topics (200 documents of 60 tokens)."""
    return generate(200, 5, 50, doc_length=60, alpha=0.2, seed=7, planted=True)


@pytest.fixture
def small_ldac(tmp_path, planted):
    """The planted corpus written as LDA-C with its vocabulary beside it; returns the path."""
    path = tmp_path / "small.ldac"
    write_corpus(planted.corpus, str(path), str(tmp_path / "small.vocab"), format="ldac")
    return str(path)




@pytest.fixture
def keep_every_checkpoint(monkeypatch, tmp_path):
    """Also copy each checkpoint written to ``tmp_path/at<iteration>.npz``."""
    save = ldacli.Checkpoint.save

    def saving(self, path):
        save(self, path)
        save(self, str(tmp_path / f"at{self.iteration}.npz"))

    monkeypatch.setattr(ldacli.Checkpoint, "save", saving)
