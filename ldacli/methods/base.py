"""What a training method supplies to the driver: its settings, its state and its step.

Everything around the steps (settings common to all methods, resume, checkpoints, signals, time
limits, early stopping, the trace, progress and the model file) is the driver's
(:mod:`ldacli.methods.driver`). A method is a subclass of :class:`Method` in its own module,
listed in :data:`ldacli.methods.registry.METHODS`; nothing else changes to add one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.model import Checkpoint
from ldacli.settings import Setting
from ldacli.topic_counts import TopicCounts


def word_topic_counts(words, z, n_words: int, n_topics: int) -> np.ndarray:
    """Dense (V, K) int32 counts of tokens per word and topic."""
    codes = words.astype(np.int64) * n_topics + z
    return np.bincount(codes, minlength=n_words * n_topics).astype(np.int32).reshape(n_words, n_topics)


@dataclass
class Start:
    """Where a warm-started run begins: ``z`` (N,) int32, a topic for every token in the
    corpus's token order (:meth:`~ldacli.corpora.corpus.Corpus.tokens`), drawn from the parent model;
    ``alpha`` (K,) and ``beta`` the priors to start from. Each method turns it into its own first
    state (collapsed Gibbs: z itself; the others: the counts of z)."""

    z: np.ndarray
    alpha: np.ndarray
    beta: float


class Method:
    """A training method's state; one :meth:`step` is one sweep (one EM iteration for vem).

    Class attributes: ``name`` (``--method``), ``title`` (its name in words), ``unit`` (what a
    step is called), ``trace`` (what :meth:`loglik` measures, recorded as ``params["trace"]``)
    and ``trace_label`` (the same for people), ``DEFAULT_ITERATIONS``,
    ``DEFAULT_LOGLIK_EVERY``, ``TRACE_EVERY_STEP`` (the trace value is a by-product of every step
    and the method needs all of them, so ``loglik_every`` must be 1) and ``SETTINGS``, the
    method's own settings (:class:`~ldacli.settings.Setting`, declared with
    :func:`~ldacli.settings.owned_by`; the command line's options follow from them).

    The constructor builds the state for ``corpus`` from ``settings`` (the run's settings, all
    resolved and read-only, :attr:`Plan.values <ldacli.methods.driver.Plan.values>`: ``n_topics``,
    ``alpha``, ``beta``, ``seed``, ``iterations`` and the method's own), starting fresh, from a
    :class:`Start` (a warm start), or from a :class:`~ldacli.model.Checkpoint`. Attributes
    ``alpha`` (K,) and ``beta`` are the current priors.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    unit: ClassVar[str] = "sweep"
    trace: ClassVar[str]
    trace_label: ClassVar[str]
    DEFAULT_ITERATIONS: ClassVar[int] = 1000
    DEFAULT_LOGLIK_EVERY: ClassVar[int] = 10
    TRACE_EVERY_STEP: ClassVar[bool] = False
    # Whether the method runs on a Dask cluster (the constructor then takes ``client``).
    DISTRIBUTED: ClassVar[bool] = False
    SETTINGS: ClassVar[tuple[Setting, ...]] = ()

    alpha: np.ndarray
    beta: float

    @classmethod
    def prior_sources(cls, params: dict) -> dict[str, str]:
        """How the method arrived at the priors of a run with ``params``, in words:
        ``{"alpha": ..., "beta": ...}`` ("set" when they are the values given)."""
        return {"alpha": "set", "beta": "set"}

    @classmethod
    def settle_given(cls, values: Mapping, given: dict) -> dict:
        """What follows from the settings ``given`` alone (a warm start's parent already read,
        if any), as the values of the settings it settles, refusing a combination that cannot
        apply. :func:`~ldacli.methods.driver.check_given` runs it before anything is read;
        :meth:`resolve` settles the rest. Nothing by default."""
        return {}

    @classmethod
    def resolve(cls, values: Mapping, given: dict, corpus: Corpus) -> dict:
        """What depends on the corpus (``sampler auto``, the shards), as the values of the
        settings it settles, from ``values`` (every setting of a fresh run, checked, defaults
        filled in) and ``given`` (the values the caller gave). Refuse a combination that cannot
        apply. The driver's :func:`~ldacli.methods.driver.settle` takes them into the run's
        :class:`~ldacli.methods.driver.Plan`; nothing writes to ``values``."""
        return {}

    @classmethod
    def check(cls, values: Mapping) -> None:
        """Refuse settings that contradict each other, fresh or resumed (raises
        :class:`~ldacli.errors.SettingError`)."""

    @classmethod
    def estimate_bytes(cls, corpus: Corpus, settings: Mapping, threads: int, streamed: bool = False) -> float:
        """About how much memory the state and the model take for ``corpus`` (the driver refuses
        a run that cannot fit before anything is allocated); ``streamed``: the model is written
        to a file as it is assembled and never needed whole in the run (a method with
        :meth:`model_counts` then need not hold them whole)."""
        raise NotImplementedError

    def __init__(self, corpus: Corpus, settings: Mapping, *, threads: int, checkpoint: Checkpoint | None,
                 source: str | None = None, start: Start | None = None):
        raise NotImplementedError

    def step(self, iteration: int) -> None:
        """Advance the state by one sweep; ``iteration`` is the sweep's number (1-based)."""
        raise NotImplementedError

    def loglik(self) -> float:
        """The trace's value for the current state, per token."""
        raise NotImplementedError

    def phi(self) -> np.ndarray:
        """The current topics (K, V), for early stopping."""
        raise NotImplementedError

    def converged(self, trace: list[float]) -> bool:
        """Whether the method has converged by its own criterion, given the trace so far."""
        return False

    def expect_last(self, iteration: int) -> None:
        """The step a time-limited run (``--max-seconds``) is expected to end at, as the time
        so far projects it; told before each step after the first. Nothing by default."""

    def rng_states(self) -> list:
        """The states of the method's random streams, in the order it restores them."""
        raise NotImplementedError

    def arrays(self) -> dict[str, np.ndarray]:
        """The method's own checkpoint arrays (besides the common ones)."""
        raise NotImplementedError

    def checkpoint_state(self, path: str, iteration: int) -> tuple[list, dict[str, np.ndarray]]:
        """What a checkpoint of step ``iteration`` to ``path`` holds of the method:
        :meth:`rng_states` and :meth:`arrays` (a method whose state is elsewhere, a Dask
        cluster's workers, writes its part there first; a failure is an
        :class:`~ldacli.errors.OutputError`)."""
        return self.rng_states(), self.arrays()

    def checkpoint_written(self, path: str, iteration: int) -> None:
        """The checkpoint :meth:`checkpoint_state` gave the state of is written to ``path``."""

    def result(self, iterations_done: int) -> tuple[np.ndarray, np.ndarray, dict]:
        """The model's ``phi`` (K, V) and ``theta`` (D, K), and params to add, at the end."""
        raise NotImplementedError

    def model_counts(self, iterations_done: int) -> tuple[TopicCounts, dict] | None:
        """The whole numbers the model's phi and theta are computed from, exactly, and params to
        add, at the end, for a method that has them (collapsed Gibbs): the model then holds and
        stores them instead of :meth:`result`'s arrays. Their sparse parts may be made as a file
        takes them (:meth:`~ldacli.topic_counts.SparseRows.streamed`: written, or
        :meth:`~ldacli.topic_counts.TopicCounts.materialized`, before :meth:`close`). None (the
        default): the method has none."""
        return None

    def note(self) -> str:
        """A few words on the last step for the log and the progress bar ('' for none)."""
        return ""

    def close(self) -> None:
        """Release threads and the like."""

    @staticmethod
    def checkpoint_arrays(checkpoint: Checkpoint, source: str, shapes: dict[str, tuple]) -> dict[str, np.ndarray]:
        """The method's arrays of ``checkpoint`` as float64/int32 contiguous copies, each checked
        against its expected shape (``shapes``: name -> shape; the dtype follows the name's
        stored dtype kind) and, for floats, to be finite and non-negative."""
        out = {}
        for name, shape in shapes.items():
            if name not in checkpoint.arrays:
                raise LdacliError(f"{source}: expected array '{name}' in this {checkpoint.method} checkpoint, found none")
            value = checkpoint.arrays[name]
            if value.shape != shape:
                raise LdacliError(f"{source}: expected '{name}' of shape {shape}, found {value.shape}")
            if value.dtype.kind not in "iuf":
                raise LdacliError(f"{source}: expected numbers in '{name}', found {value.dtype}")
            if value.dtype.kind == "f" and value.size and not (np.all(np.isfinite(value)) and value.min() >= 0):
                raise LdacliError(f"{source}: expected finite numbers >= 0 in '{name}', found others")
            dtype = np.int32 if value.dtype.kind in "iu" else np.float64
            out[name] = np.array(value, dtype=dtype, order="C")
        return out
