"""The kernels that list a state's cells in sorted order and add them to running sums (what the
snapshots phi and theta average keep): equal to their NumPy versions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldacli import _cgs


def packed_lists(nwk: np.ndarray, dtype=np.uint32, slack: int = 2):
    """The sparse sampler's word lists of dense counts ``nwk`` (V, K): each word's non-zero
    (topic, count) entries packed and sorted, largest first, with some free room after each."""
    V, K = nwk.shape
    bits = max(1, int(K - 1).bit_length())
    mask = (1 << bits) - 1
    lengths = np.count_nonzero(nwk, axis=1).astype(np.int32)
    wt_ptr = np.zeros(V + 1, np.int64)
    np.cumsum(lengths + slack, out=wt_ptr[1:])
    wt = np.zeros(wt_ptr[-1], dtype)
    for w in range(V):
        (topics,) = np.nonzero(nwk[w])
        entries = np.sort((nwk[w, topics].astype(dtype) << dtype(bits)) | (dtype(mask) - topics.astype(dtype)))[::-1]
        wt[wt_ptr[w]:wt_ptr[w] + entries.size] = entries
    return wt_ptr, wt, lengths, bits


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 70), st.integers(0, 2**31 - 1), st.sampled_from([np.uint32, np.uint64]))
def test_word_list_cells_are_the_non_zero_counts_in_word_major_order(V, K, seed, dtype):
    rng = np.random.default_rng(seed)
    nwk = (rng.random((V, K)) < 0.3) * rng.integers(1, 50, size=(V, K))
    wt_ptr, wt, lengths, bits = packed_lists(nwk.astype(np.int32), dtype)
    codes = np.full(wt.size, -1, np.int64)
    counts = np.zeros(wt.size, np.int32)
    n = _cgs.word_list_cells(wt_ptr, wt, lengths, bits, K, codes, counts, np.zeros(K, np.uint64))
    words, topics = np.nonzero(nwk)
    assert n == words.size
    np.testing.assert_array_equal(codes[:n], words.astype(np.int64) * K + topics)
    np.testing.assert_array_equal(counts[:n], nwk[words, topics])


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_list_cells_number_the_rows_from_first(dtype):
    ptr = np.array([0, 3, 3, 7], np.int64)  # room for 3, 0 and 4 topics; 2, 0 and 3 used
    length = np.array([2, 0, 3], np.int32)
    topics = np.array([1, 4, 9, 0, 2, 3, 9], dtype)
    counts = np.array([5, 1, 9, 7, 2, 6, 9], dtype)
    bits = 4  # enough for K - 1 = 9
    codes, out = np.zeros(7, np.int64), np.zeros(7, np.int32)
    n = _cgs.list_cells(ptr, length, (counts << dtype(bits)) | topics, bits, 10, 100, codes, out)
    assert n == 5
    np.testing.assert_array_equal(codes[:n], [1001, 1004, 1020, 1022, 1023])
    np.testing.assert_array_equal(out[:n], [5, 1, 7, 2, 6])


@pytest.mark.parametrize("K", [3, 40, 1000])
def test_word_list_cells_of_long_lists_are_sorted_too(K):
    # lists longer than the insertion sort's (qsort), with counts in every order
    rng = np.random.default_rng(K)
    nwk = rng.integers(0, 4, size=(5, K)).astype(np.int32)
    wt_ptr, wt, lengths, bits = packed_lists(nwk)
    codes, counts = np.zeros(wt.size, np.int64), np.zeros(wt.size, np.int32)
    n = _cgs.word_list_cells(wt_ptr, wt, lengths, bits, K, codes, counts, np.zeros(K, np.uint64))
    words, topics = np.nonzero(nwk)
    np.testing.assert_array_equal(codes[:n], words.astype(np.int64) * K + topics)
    np.testing.assert_array_equal(counts[:n], nwk[words, topics])
