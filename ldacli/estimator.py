"""``ldacli.LatentDirichletAllocation``: ldacli as a scikit-learn estimator (the ``sklearn`` extra).

It takes scikit-learn's parameter names (``n_components``, ``doc_topic_prior``,
``topic_word_prior``, ``max_iter``, ``random_state``, ``n_jobs``) plus ldacli's, and drops into a
``Pipeline`` after ``CountVectorizer``. Every method runs through the library's one path:
``fit`` is :func:`ldacli.train` on :meth:`Corpus.from_matrix`, ``transform``
:func:`ldacli.infer`, ``score`` and ``perplexity`` :func:`ldacli.perplexity`'s document
completion, ``partial_fit`` a warm start (``train(warm_start=...)``). No second implementation.

What differs from scikit-learn's estimator, and why:

* ``components_`` is the topic-word probabilities p(w | k) (rows sum to 1; a word that never
  occurs in the training documents gets 0), not variational pseudo-counts; normalising either
  gives the topics.
* ``transform`` estimates theta by Gibbs sampling with the topics fixed, from the seed recorded
  at ``fit``, every document on its own random stream (from the seed and its counts): a row is
  the same whatever other rows are transformed with it, in any order.
* ``score(X)`` is the held-out log-likelihood of X by document completion (natural log; theta
  from half of each document, the other half scored), the figure ``ldacli perplexity`` prints,
  not scikit-learn's variational bound; ``perplexity(X)`` is ``exp(-score / scored tokens)``.
* Counts must be whole numbers (LDA samples tokens): a fractional value raises ValueError,
  unless ``fractional_counts="round"``, which rounds them to the nearest whole number.

scikit-learn's estimator checks (``sklearn.utils.estimator_checks``, in
``tests/test_sklearn_estimator.py``) all pass, ``check_methods_subset_invariance`` and
``check_methods_sample_order_invariance`` among them. The checks feed random real numbers, so
they run with ``fractional_counts="round"``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.scoring.perplexity import perplexity as heldout_perplexity
from ldacli.scoring.inference import infer
from ldacli.methods.driver import train
from ldacli.model import Model

SKLEARN_EXTRA = "pip install 'ldacli[sklearn]'"
try:
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.utils import check_random_state
    from sklearn.utils.validation import check_is_fitted, check_non_negative, validate_data
except ImportError:  # pragma: no cover - the error names the extra
    raise ImportError(f"ldacli.LatentDirichletAllocation needs scikit-learn, which the sklearn extra installs: "
                      f"{SKLEARN_EXTRA}") from None


@contextlib.contextmanager
def _as_value_errors():
    """ldacli's errors (a setting out of range, a corpus it cannot use) as scikit-learn's ValueError."""
    try:
        yield
    except LdacliError as exc:
        raise ValueError(str(exc)) from None


class LatentDirichletAllocation(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Latent Dirichlet Allocation fitted by ldacli (collapsed Gibbs sampling by default).

    Parameters (scikit-learn's names first):

    n_components : int, default 10. Topics (``ldacli train -k``).
    doc_topic_prior : float or None. Alpha for each topic; None: ldacli's default, 0.1 (cgs: the
        starting value of a learned alpha, as ``optimize_interval`` says).
    topic_word_prior : float or None. Beta; None: ldacli's default, 0.01 (the same).
    max_iter : int or None. Sweeps (vem: EM iterations); None: the method's default (cgs 1000).
    random_state : int, RandomState or None. The seed; None draws fresh entropy, recorded in
        ``model_.params["seed"]``.
    n_jobs : int or None. Threads (None or -1: all cores); never changes the result.
    method : "cgs", "vem" or "gibbs" (``ldacli train --method``).
    sampler : cgs's sampler, "auto", "dense", "sparse" or "alias".
    optimize_interval : int or None. cgs: learn alpha and beta every N sweeps; None: ldacli's
        default, every 10 from sweep 50, or never when either prior above is given.
    infer_iterations, infer_burn_in : int. Sweeps (and those discarded) of ``transform``,
        ``score`` and ``perplexity`` (100 and 50, as ``ldacli infer``).
    fractional_counts : "error" or "round". What to do with counts that are not whole numbers.

    Attributes after ``fit``: ``model_`` (the :class:`ldacli.Model`), ``components_`` (K,
    n_features) p(w | k), ``exp_dirichlet_component_`` (the same, as scikit-learn names its
    normalised topics), ``n_features_in_``, ``feature_names_in_`` (when X has column names),
    ``n_iter_`` (sweeps done), ``doc_topic_prior_``, ``topic_word_prior_``.
    """

    def __init__(self, n_components=10, *, doc_topic_prior=None, topic_word_prior=None, max_iter=None,
                 random_state=None, n_jobs=None, method="cgs", sampler=None, optimize_interval=None,
                 infer_iterations=100, infer_burn_in=50, fractional_counts="error"):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.method = method
        self.sampler = sampler
        self.optimize_interval = optimize_interval
        self.infer_iterations = infer_iterations
        self.infer_burn_in = infer_burn_in
        self.fractional_counts = fractional_counts

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    # --- the data --------------------------------------------------------------------------------------

    def _counts(self, X, *, reset: bool):
        """X checked (scikit-learn's way: shape, NaN, features) as a corpus over the words."""
        X = validate_data(self, X, reset=reset, accept_sparse=("csr", "csc", "coo"), dtype=(np.float64, np.float32,
                                                                                            np.int64, np.int32))
        check_non_negative(X, f"{type(self).__name__} (input X)")
        if self.fractional_counts not in ("error", "round"):
            raise ValueError(f"fractional_counts must be 'error' or 'round', found {self.fractional_counts!r}")
        values = X.data if sp.issparse(X) else X
        if values.dtype.kind == "f" and np.any(values != np.round(values)):
            if self.fractional_counts == "error":
                raise ValueError("X must hold whole-number counts (LDA samples tokens), found fractional values; "
                                 "use CountVectorizer rather than TfidfVectorizer, or fractional_counts='round'")
            X = X.copy()
            if sp.issparse(X):
                X.data = np.round(X.data)
            else:
                X = np.round(X)
        names = getattr(self, "feature_names_in_", None)
        vocab = [str(n) for n in names] if names is not None else None
        with _as_value_errors():
            return Corpus.from_matrix(X, vocab)

    def _threads(self):
        return None if self.n_jobs in (None, -1) else self.n_jobs

    def _seed(self) -> int | None:
        if self.random_state is None or isinstance(self.random_state, (int, np.integer)):
            return None if self.random_state is None else int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    # --- fitting -----------------------------------------------------------------------------------------

    def _train(self, corpus: Corpus, update: str | None = None) -> "LatentDirichletAllocation":
        settings = {"method": self.method, "iterations": self.max_iter, "alpha": self.doc_topic_prior,
                    "beta": self.topic_word_prior, "seed": self._seed(), "threads": self._threads(),
                    "sampler": self.sampler, "optimize_interval": self.optimize_interval}
        if update is not None:  # the model's topics and priors apply
            settings = {k: settings[k] for k in ("iterations", "seed", "threads", "sampler")}
        with _as_value_errors():
            if corpus.n_tokens == 0:
                raise LdacliError("X holds no counts: expected at least one token")
            model = train(corpus, self.n_components, update=update,
                          **{k: v for k, v in settings.items() if v is not None})
        self.model_ = model
        index = {w: j for j, w in enumerate(corpus.vocab)}
        components = np.zeros((model.n_topics, corpus.n_words))
        components[:, [index[w] for w in model.vocab]] = model.phi
        self.components_ = components
        self.exp_dirichlet_component_ = components
        self.n_iter_ = int(model.params.get("iterations_done", 0))
        self.doc_topic_prior_ = float(np.mean(model.alpha))
        self.topic_word_prior_ = float(model.beta)
        self._n_features_out = model.n_topics
        return self

    def fit(self, X, y=None):
        """Fit the model to the counts X (documents x words); returns the estimator."""
        return self._train(self._counts(X, reset=True))

    def partial_fit(self, X, y=None):
        """Add the documents X to what was learned (an update, ``ldacli train --update``: the
        fitted topics' evidence is the prior of ``max_iter`` sweeps on X alone, the topics keep
        their ids, and words absent from X keep what they had); the first call fits. Method cgs
        only (the others' models hold no counts to add to)."""
        if not hasattr(self, "model_"):
            return self.fit(X)
        if self.method != "cgs":
            raise ValueError(f"partial_fit adds documents to a model of method cgs, found method {self.method}: "
                             f"fit on all the documents instead")
        corpus = self._counts(X, reset=False)
        with tempfile.TemporaryDirectory(prefix="ldacli-") as folder:
            parent = os.path.join(folder, "parent.npz")
            self.model_.save(parent)
            return self._train(corpus, update=parent)

    # --- using it ----------------------------------------------------------------------------------------

    def _fitted_corpus(self, X) -> Corpus:
        check_is_fitted(self, "model_")
        return self._counts(X, reset=False)

    def transform(self, X):
        """Topic proportions (n_samples, n_components) of the documents X, by ldacli's inference
        with the topics fixed, from the seed of the fit (so the same X gives the same rows)."""
        corpus = self._fitted_corpus(X)
        with _as_value_errors():
            result, _ = infer(self.model_, corpus, iterations=self.infer_iterations, burn_in=self.infer_burn_in,
                              seed=int(self.model_.params["seed"]), threads=self._threads())
        return result.theta

    def _heldout(self, X) -> dict:
        corpus = self._fitted_corpus(X)
        with _as_value_errors():
            return heldout_perplexity(self.model_, corpus, iterations=self.infer_iterations,
                                      burn_in=self.infer_burn_in, seed=int(self.model_.params["seed"]),
                                      threads=self._threads())

    def score(self, X, y=None) -> float:
        """Held-out log-likelihood of X by document completion (natural log; higher is better)."""
        return float(self._heldout(X)["log_likelihood"])

    def perplexity(self, X) -> float:
        """Per-word perplexity of X by document completion, ``exp(-log_likelihood / tokens scored)``."""
        return float(self._heldout(X)["perplexity"])

    @property
    def model(self) -> Model:
        """The fitted :class:`ldacli.Model` (to save, export or report)."""
        check_is_fitted(self, "model_")
        return self.model_
