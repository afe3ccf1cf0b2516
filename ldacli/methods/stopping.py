"""Early stopping on held-out perplexity: when to stop, and why (``train --holdout F --patience N``).

The training driver holds out a slice of the documents (:func:`ldacli.scoring.fixed_topics.holdout_split`),
scores it every ``loglik_every`` sweeps with :class:`ldacli.scoring.fixed_topics.HeldOutEvaluator`, and feeds
each score to :class:`EarlyStopping`, which says when it has stopped improving and why. Its state
round-trips through JSON, so a checkpointed run resumes to the same decision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ldacli import checks
from ldacli.errors import LdacliError


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
        self.patience = checks.count("patience", self.patience, 1)
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
    def from_state(cls, state: dict, patience: int | None = None) -> "EarlyStopping":
        """The rule as :meth:`state` saved it, with another ``patience`` when given (a resumed
        run may change it); a malformed state is an :class:`LdacliError`."""
        try:
            return cls(int(state["patience"] if patience is None else patience), float(state["min_delta"]),
                       [(int(i), float(v)) for i, v in state["history"]])
        except (KeyError, TypeError, ValueError) as exc:
            raise LdacliError(f"expected an early-stopping state (patience, min_delta, history), found "
                              f"{state!r:.80} ({exc})") from None

    def summary(self) -> dict:
        """What the model's params should record: whether and why it stopped, the best point."""
        it, value = self.best
        return {"stopped_early": self.should_stop, "stop_reason": self.reason,
                "best_iteration": it, "best_heldout_perplexity": value if self.history else None}
