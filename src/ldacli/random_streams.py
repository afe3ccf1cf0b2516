"""Seeds and random streams: one way to turn ``--seed`` into generators, everywhere.

A run's seed is the entropy of a :class:`numpy.random.SeedSequence`: the ``seed`` given, or 128
bits of fresh entropy drawn when none is (recorded in every output, so ``--seed <that number>``
repeats the run). Independent streams for shards, document ranges or topics are spawned from it,
so a run's numbers never depend on the number of threads. Every generator is a PCG64.
"""

from __future__ import annotations

import numpy as np

from ldacli import checks
from ldacli.errors import LdacliError
from ldacli.settings import FIXED, Integer, Setting

SEED = Setting("seed", Integer(0), None,
               "Random seed; without it fresh entropy is drawn and recorded in the output (a model's params.seed), "
               "so --seed <that number> repeats the run.", FIXED, default_help="fresh entropy")


def resolve(seed: int | None) -> int:
    """The entropy to use and record: ``seed`` checked, or fresh when it is None."""
    return np.random.SeedSequence().entropy if seed is None else checks.count("seed", seed, 0)


def generator(entropy: int) -> np.random.Generator:
    """The generator of a run's root stream."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def generators(entropy: int, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``entropy`` (the same ``n`` gives the same ones)."""
    return [np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(entropy).spawn(n)]


def stream(entropy: int, i: int) -> np.random.Generator:
    """The ``i``-th of the generators :func:`generators` spawns from ``entropy``, for any ``n``
    larger than ``i``: made alone, when the number of streams is not known in advance."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(i,))))


def states(rngs: list[np.random.Generator]) -> list[dict]:
    """The bit-generator states of ``rngs``, JSON-able, to store in a checkpoint."""
    return [r.bit_generator.state for r in rngs]


def restore(rngs: list[np.random.Generator], stored: list, source: str) -> None:
    """Set ``rngs`` to the ``stored`` states (from :func:`states`), checking they match."""
    if len(stored) != len(rngs):
        raise LdacliError(f"{source}: expected {len(rngs)} random stream states, found {len(stored)}")
    for rng, state in zip(rngs, stored):
        try:
            rng.bit_generator.state = state
        except (TypeError, ValueError, KeyError) as exc:
            raise LdacliError(f"{source}: expected PCG64 random stream states, found an invalid one ({exc})") from None
