"""The partition rule: how a corpus is cut into document shards and its vocabulary into word
slices, for the collapsed Gibbs sampler's blocks (:mod:`ldacli.methods.cgs`) and for the shard
folders that are written cut by the same rule (:mod:`ldacli.corpora.formats.shards`), so that shard s of
a folder is shard s of a run. Both cuts depend on the corpus and the number of shards only,
never on the threads or the workers that sample them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Default shards (default_shards): one per 100,000 tokens up to 4; from 5 M tokens, one per
# 625,000 tokens rounded down to a power of two, up to 16.
MAX_DEFAULT_SHARDS = 4
TOKENS_PER_SHARD = 100_000
LARGE_TOKENS_PER_SHARD = 625_000
MAX_LARGE_SHARDS = 16
# A shard of a corpus of more than 2^31 - 1 tokens holds at most this many: the kernels count
# topic totals in 32 bits, so a block is given its totals less a base (``min(n_k, WIDE_SHARD_TOKENS)``,
# the base added to the prior's sums instead), which only a block this small cannot overflow.
# Shard folders are cut to it (``convert --shards``) and the cluster's engine refuses more.
WIDE_SHARD_TOKENS = 1 << 30


def default_shards(n_tokens: int) -> int:
    """The shards of a corpus of ``n_tokens`` tokens when none are asked for (from the corpus
    only, so that the bytes never depend on the threads): one per 100,000 tokens, at most 4, so
    that small corpora get the exact sequential sampler; from 5 M tokens on, one per 625,000
    tokens rounded down to a power of two, at most 16 (8 from 5 M, 16 from 10 M): up to 16
    threads busy, at what a sweep costs least on one core. A document is visited once per word
    slice it has tokens in, each visit costing its list of topics (80-100 at K=1000), while more
    slices keep a block's word lists in the cache: from the state of ``ldacli train`` at sweep
    17, K=1000, one core, ns a token-sweep at 1 / 4 / 8 / 16 / 32 shards: 20 M tokens 207 / 178
    / 171 / 176 / 211, 100 M (4 / 8 / 16 / 32) 183 / 193 / 192 / 212 (``benchmarks/ab_sweep.py
    --start``; docs/performance.md, "Default shards"); ``--shards 32`` for 32 cores, at 10-25%
    more work a sweep. A power of two splits each round's blocks evenly over 2, 4, 8 or 16
    threads."""
    small = min(MAX_DEFAULT_SHARDS, n_tokens // TOKENS_PER_SHARD)
    large = min(MAX_LARGE_SHARDS, n_tokens // LARGE_TOKENS_PER_SHARD)
    return int(max(1, small, 1 << (large.bit_length() - 1) if large else 0))


def shard_bounds(doc_ptr: np.ndarray, n_shards: int) -> np.ndarray:
    """Document boundaries (n_shards + 1,) cutting the corpus into shards of ~equal tokens
    (fewer shards when there are fewer documents). Shard folders are cut by this rule too
    (:mod:`ldacli.corpora.formats.shards`), so that shard s of a folder is shard s of a run."""
    D = doc_ptr.size - 1
    n_shards = max(1, min(n_shards, D))
    targets = np.arange(1, n_shards) * (doc_ptr[-1] / n_shards)
    cuts = np.searchsorted(doc_ptr, targets, side="left")
    bounds = np.concatenate([[0], cuts, [D]]).astype(np.int64)
    return np.maximum.accumulate(bounds)


def word_slices(freq: np.ndarray, n_slices: int) -> np.ndarray:
    """Cut the word ids into ``n_slices`` ranges of about equal token counts: slice j is the
    words ``cuts[j] <= w < cuts[j + 1]`` of the returned (n_slices + 1,) int64 ``cuts``."""
    cum = np.cumsum(freq, dtype=np.int64)
    total = int(cum[-1]) if cum.size else 0
    cuts = [0] + [int(np.searchsorted(cum, total * j // n_slices, side="right")) for j in range(1, n_slices)]
    return np.maximum.accumulate(np.array(cuts + [freq.size], np.int64))


@dataclass(frozen=True)
class ShardRange:
    """Where a shard is in the corpus: its tokens ``lo:hi`` and its documents ``d_lo:d_hi``."""

    lo: int
    hi: int
    d_lo: int
    d_hi: int


def shard_ranges(bounds: np.ndarray, offsets: np.ndarray) -> list[ShardRange]:
    """Each shard's range, from the first document of each shard ``bounds`` (S+1,) and the
    token each of them starts at ``offsets`` (S+1,) (``doc_ptr[bounds]``)."""
    return [ShardRange(int(offsets[s]), int(offsets[s + 1]), int(bounds[s]), int(bounds[s + 1]))
            for s in range(len(bounds) - 1)]
