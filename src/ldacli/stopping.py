"""Early stopping on held-out perplexity: the pieces ``train --holdout F --patience N`` uses.

A fixed slice of the training documents is held out (:func:`holdout_split`); every few sweeps
the trainer gives the current topics to a :class:`HeldOutEvaluator`, which scores the slice by
document completion (as ``ldacli perplexity`` does, with fewer sweeps and the same seed every
time, so successive scores differ by the model and not by Monte Carlo noise), and feeds the
score to :class:`EarlyStopping`, which says when it has stopped improving and why. Everything
here is deterministic given its seed, and :class:`EarlyStopping` saves and restores its state as
JSON, so a checkpointed run resumes to the same decision. Intended wiring in the training loop::

    train_part, held, held_docs = holdout_split(corpus, holdout, seed=entropy)
    evaluator = HeldOutEvaluator(held, seed=entropy)
    stopper = EarlyStopping(patience)                  # or EarlyStopping.from_state(ckpt...)
    ... every `loglik_every` sweeps:
        phi = (nwk.T + beta) / (nk[:, None] + V * beta)
        if stopper.observe(it, evaluator.perplexity(phi, alpha)):
            break                                      # stopper.reason says why
    params.update(stopper.summary())
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldacli.corpus import Corpus
from ldacli.errors import LdacliError

DEFAULT_ITERATIONS = 30
DEFAULT_BURN_IN = 10


def holdout_split(corpus: Corpus, fraction: float, seed: int) -> tuple[Corpus, Corpus, np.ndarray]:
    """Hold out ``round(fraction * D)`` documents (at least 1, leaving at least 1) chosen
    uniformly at random from ``seed``. Returns ``(train, held, held_docs)``; ``held_docs`` is the
    sorted (H,) int64 array of the held-out documents' indices in ``corpus``. Both parts keep
    the vocabulary and the source; their ids are the original documents' ids.
    """
    if not (isinstance(fraction, (int, float)) and 0 < fraction < 1):
        raise LdacliError(f"holdout: expected a fraction strictly between 0 and 1, found {fraction!r}")
    D = corpus.n_docs
    if D < 2:
        raise LdacliError(f"holdout: expected at least 2 documents to hold some out, found {D}")
    n_held = min(max(1, round(fraction * D)), D - 1)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    held_docs = np.sort(rng.choice(D, size=n_held, replace=False)).astype(np.int64)
    mask = np.zeros(D, dtype=bool)
    mask[held_docs] = True

    def part(m: np.ndarray) -> Corpus:
        return Corpus(corpus.counts[m], list(corpus.vocab), [d for d, keep in zip(corpus.doc_ids, m) if keep],
                      corpus.source, corpus.format)

    return part(~mask), part(mask), held_docs


class HeldOutEvaluator:
    """Document-completion perplexity of a fixed held-out corpus under changing topics.

    The observed/scored split is :func:`ldacli.evaluate.completion_split`'s; theta is estimated
    with ``iterations`` sweeps of which ``burn_in`` are discarded, from the same ``seed`` at
    every call (common random numbers). Cost per call: ``iterations`` sweeps over the observed
    half of the held-out tokens, dense in K.
    """

    def __init__(self, held: Corpus, *, iterations: int = DEFAULT_ITERATIONS,
                 burn_in: int = DEFAULT_BURN_IN, seed: int = 0):
        # Imported here: ldacli.methods.cgs will import this module, and ldacli.evaluate imports train.
        from ldacli.evaluate import completion_split

        self.obs_words, self.obs_ptr, self.score_docs, self.score_words = completion_split(held)
        if self.score_words.size == 0:
            raise LdacliError("holdout: expected held-out documents with at least 2 tokens, found none")
        self.iterations, self.burn_in, self.seed = iterations, burn_in, seed

    @property
    def n_tokens(self) -> int:
        return int(self.score_words.size)

    def perplexity(self, phi: np.ndarray, alpha: np.ndarray) -> float:
        """exp(-log-likelihood / scored tokens) of the held-out slice under ``phi`` (K, V) and
        ``alpha`` (K,)."""
        from ldacli.evaluate import _score
        from ldacli.inference import estimate_theta

        topics = _Topics(np.asarray(phi, dtype=np.float64), np.asarray(alpha, dtype=np.float64))
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.seed)))
        theta, _ = estimate_theta(topics, self.obs_words, self.obs_ptr, iterations=self.iterations,
                                  burn_in=self.burn_in, rng=rng)
        loglik = _score(theta, np.ascontiguousarray(topics.phi.T), self.score_docs, self.score_words)
        return math.exp(-loglik / self.n_tokens)


@dataclass
class _Topics:
    """The two fields of a Model that the completion estimator reads."""

    phi: np.ndarray
    alpha: np.ndarray

    @property
    def n_topics(self) -> int:
        return self.phi.shape[0]


@dataclass
class EarlyStopping:
    """Stop when the held-out perplexity has not improved for ``patience`` evaluations in a row.

    An evaluation improves when it is below ``best * (1 - min_delta)``. :meth:`observe` returns
    True when training should stop; :attr:`reason` then says why. The state (``history`` of
    ``(iteration, perplexity)`` pairs) round-trips through :meth:`state` / :meth:`from_state`.
    """

    patience: int
    min_delta: float = 0.0
    history: list[tuple[int, float]] = field(default_factory=list)

    def __post_init__(self):
        if isinstance(self.patience, bool) or not isinstance(self.patience, int) or self.patience < 1:
            raise LdacliError(f"patience: expected an integer >= 1, found {self.patience!r}")
        if not (0 <= self.min_delta < 1):
            raise LdacliError(f"min_delta: expected a number in [0, 1), found {self.min_delta!r}")

    def _scan(self) -> tuple[int, float, int]:
        """(best iteration, best perplexity, evaluations since it) over the history."""
        best_it, best, since = -1, math.inf, 0
        for it, value in self.history:
            if value < best * (1 - self.min_delta):
                best_it, best, since = it, value, 0
            else:
                since += 1
        return best_it, best, since

    def observe(self, iteration: int, perplexity: float) -> bool:
        self.history.append((int(iteration), float(perplexity)))
        return self.should_stop

    @property
    def should_stop(self) -> bool:
        return self._scan()[2] >= self.patience

    @property
    def best(self) -> tuple[int, float]:
        it, value, _ = self._scan()
        return it, value

    @property
    def reason(self) -> str | None:
        if not self.should_stop:
            return None
        it, value, since = self._scan()
        return (f"held-out perplexity did not improve for {since} evaluations "
                f"(best {value:.6g} at sweep {it}, last {self.history[-1][1]:.6g} at sweep {self.history[-1][0]})")

    def state(self) -> dict:
        return {"patience": self.patience, "min_delta": self.min_delta, "history": [list(h) for h in self.history]}

    @classmethod
    def from_state(cls, state: dict) -> "EarlyStopping":
        return cls(int(state["patience"]), float(state["min_delta"]),
                   [(int(i), float(v)) for i, v in state["history"]])

    def summary(self) -> dict:
        """What the model's params should record: whether and why it stopped, the best point."""
        it, value = self.best
        return {"stopped_early": self.should_stop, "stop_reason": self.reason,
                "best_iteration": it, "best_heldout_perplexity": value if self.history else None}
