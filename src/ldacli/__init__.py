"""ldacli: Latent Dirichlet Allocation from the command line and from Python.

The Python API is what the CLI runs::

    import ldacli
    corpus = ldacli.read_corpus("docword.kos.txt.gz")
    model = ldacli.train(corpus, n_topics=20, iterations=200, seed=1)
    # or ldacli.train_vem(corpus, 20, seed=1), ldacli.train_gibbs(corpus, 20, seed=1)
    model.save("kos.npz")
    model = ldacli.load_model("kos.npz")
"""

__version__ = "0.1.0"

from ldacli.topic_coherence import coherence  # noqa: E402
from ldacli.corpus import Corpus, read_corpus, write_corpus  # noqa: E402
from ldacli.errors import InputError, LdacliError  # noqa: E402
from ldacli.evaluate import perplexity  # noqa: E402
from ldacli.inference import infer  # noqa: E402
from ldacli.info import describe  # noqa: E402
from ldacli.model import Checkpoint, Inference, Model  # noqa: E402
from ldacli.methods.cgs import train  # noqa: E402
from ldacli.methods.ugibbs import train_gibbs  # noqa: E402
from ldacli.methods.vem import train_vem  # noqa: E402

load_model = Model.load

__all__ = [
    "Checkpoint", "Corpus", "Inference", "InputError", "LdacliError", "Model",
    "infer", "load_model", "perplexity", "read_corpus", "train", "train_gibbs", "train_vem",
    "write_corpus", "__version__", "coherence", "describe",
]
