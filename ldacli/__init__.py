"""ldacli: Latent Dirichlet Allocation from the command line and from Python.

The Python API is what the CLI runs::

    import ldacli
    corpus = ldacli.read_corpus("docword.kos.txt.gz")
    model = ldacli.train(corpus, 20, iterations=200, seed=1)       # collapsed Gibbs
    model = ldacli.train(corpus, 20, method="vem", seed=1)          # or variational EM, "gibbs"
    model.save("kos.npz")
    model = ldacli.load_model("kos.npz")
    result, unknown = ldacli.infer(model, "new.txt")                 # a path, a Corpus, texts, a matrix
    ldacli.write_shards(corpus, "/shared/kos", 16)                   # for a Dask cluster:
    model = ldacli.train(ldacli.open_shard_folder("/shared/kos"), 20, scheduler="tcp://host:8786")

The functions re-exported here live in wings named after their job (``ldacli.methods.driver``,
``ldacli.corpora.formats.read``, ``ldacli.scoring.inference``, ``ldacli.scoring.perplexity``,
``ldacli.info``, ...), which stay importable under their own names. Each is imported when it is first
used (``__init__.pyi`` lists them, for type checkers, the API reference and the lazy loader
alike), so that ``import ldacli``, and every command line's ``--version`` and ``--help``, pay only
for what they use.
"""
import lazy_loader

from ldacli.version import __version__

_attached, _, _names = lazy_loader.attach_stub(__name__, __file__)
__all__ = sorted([*_names, "load_model", "__version__"])


def __getattr__(name: str):
    """A public name, imported when first asked for (``LatentDirichletAllocation`` needs
    scikit-learn, the sklearn extra); ``load_model`` is ``Model.load``."""
    if name == "load_model":
        return _attached("Model").load
    return _attached(name)


def __dir__() -> list[str]:
    return list(__all__)
