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
``ldacli.info``, ...), which stay importable under their own names.
"""

from ldacli.version import __version__  # noqa: E402

from ldacli.corpora.corpus import Corpus  # noqa: E402
from ldacli.diff import align, diff_models, match_topics  # noqa: E402
from ldacli.errors import InputError, LdacliError, SettingError  # noqa: E402
from ldacli.scoring.perplexity import perplexity  # noqa: E402
from ldacli.export import to_pyldavis  # noqa: E402
from ldacli.corpora.formats.read import read_corpus  # noqa: E402
from ldacli.corpora.formats.shards import ShardFolder, open_shard_folder  # noqa: E402
from ldacli.corpora.formats.write import write_corpus, write_shards  # noqa: E402
from ldacli.scoring.inference import infer  # noqa: E402
from ldacli.info import describe  # noqa: E402
from ldacli.methods.driver import RunStopped, TrainingInterrupted, train  # noqa: E402
from ldacli.methods.registry import METHODS  # noqa: E402
from ldacli.model import Checkpoint, Inference, Model  # noqa: E402
from ldacli.model_selection import select_k  # noqa: E402
from ldacli.topic_names import name_topic  # noqa: E402
from ldacli.scoring.coherence import coherence  # noqa: E402
from ldacli.scoring.diagnostics import diagnostics  # noqa: E402
from ldacli.over_time.history import TopicHistory, history  # noqa: E402
from ldacli.over_time.trends import trends  # noqa: E402

load_model = Model.load


def __getattr__(name):
    """``ldacli.LatentDirichletAllocation``, imported when first asked for (it needs scikit-learn,
    the sklearn extra)."""
    if name == "LatentDirichletAllocation":
        from ldacli.estimator import LatentDirichletAllocation

        return LatentDirichletAllocation
    raise AttributeError(f"module 'ldacli' has no attribute {name!r}")


__all__ = [
    "Checkpoint", "Corpus", "Inference", "InputError", "LatentDirichletAllocation", "LdacliError", "METHODS", "Model", "RunStopped", "SettingError",
    "ShardFolder", "TopicHistory", "TrainingInterrupted", "align", "coherence", "describe", "diagnostics", "diff_models",
    "history", "infer", "load_model", "match_topics", "name_topic", "open_shard_folder", "perplexity", "read_corpus",
    "select_k", "to_pyldavis", "train", "trends",
    "write_corpus",
    "write_shards",
    "__version__",
]
