"""Seeds and random streams: one way to turn ``--seed`` into generators, everywhere.

A run's seed is the entropy of a :class:`numpy.random.SeedSequence`: the ``seed`` given, or 128
bits of fresh entropy drawn when none is (recorded in every output, so ``--seed <that number>``
repeats the run). Independent streams for shards, document ranges or topics are spawned from it,
so a run's numbers never depend on the number of threads. Every generator is a PCG64, but a
document's under fixed topics (``infer``, ``perplexity``): an SFC64 seeded from a word of the
run's seed and the document's :func:`content_keys`, so that its draws depend on the seed and its
tokens only, never on the documents around it.
"""

from __future__ import annotations

from hashlib import blake2b

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


# The spawn key of the documents' streams' run key: apart from the streams numbered from 0.
DOCUMENT_STREAMS = 2**32 - 1
# Raw outputs numpy discards after setting an SFC64's state from a seed.
SFC64_WARM_UP = 12


def document_key(entropy: int) -> int:
    """The word of seed ``entropy`` in every document's stream (:func:`document_generator`)."""
    return int(np.random.SeedSequence(entropy, spawn_key=(DOCUMENT_STREAMS,)).generate_state(1, np.uint64)[0])


def content_keys(words: np.ndarray, doc_ptr: np.ndarray) -> np.ndarray:
    """Each document's words in its stream, (D, 2) uint64: the 16-byte BLAKE2b digest of its tokens
    ``words[doc_ptr[d]:doc_ptr[d + 1]]`` as little-endian int32. The same tokens give the same
    key wherever the document is; ids are not used, since they repeat and stdin has none."""
    data = memoryview(np.ascontiguousarray(words, dtype="<i4")).cast("B")
    ends = (np.asarray(doc_ptr, dtype=np.int64) * 4).tolist()
    digest = b"".join([blake2b(data[s:e], digest_size=16).digest() for s, e in zip(ends[:-1], ends[1:])])
    return np.frombuffer(digest, dtype="<u8").astype(np.uint64).reshape(-1, 2)


def document_generator(run_key: int, content_key: np.ndarray) -> np.random.Generator:
    """One document's stream, the draws the fixed-topics kernels make for it: an SFC64 seeded, as
    numpy seeds one from three words, from the document's ``content_key`` (:func:`content_keys`)
    and the run's :func:`document_key`: state ``(*content_key, run_key, 1)``, then
    :data:`SFC64_WARM_UP` outputs discarded."""
    bit_generator = np.random.SFC64()
    bit_generator.state = {"bit_generator": "SFC64", "has_uint32": 0, "uinteger": 0,
                           "state": {"state": np.array([*content_key, run_key, 1], dtype=np.uint64)}}
    bit_generator.random_raw(SFC64_WARM_UP)
    return np.random.Generator(bit_generator)


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
