"""Kernels of updates (``ldacli.methods.update``).

As in ``_cgs.pyx``: the caller allocates and coerces every array, a kernel updates its output in
place inside one ``nogil`` block, and nothing is validated here. The plain NumPy each kernel
equals, bit for bit, is in its docstring and in ``tests/oracle.py``.
"""

from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

# The dtypes a model's cells are kept in (``topic_counts.narrowest``: its columns and sums, the
# few large values apart), read as they are, and int64.
ctypedef fused cell_column:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    int64_t

ctypedef fused cell_value:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    int64_t


def root_overlaps(const int64_t[::1] ptr, const int32_t[::1] rows, const double[::1] values,
                  const double[::1] totals, double[::1] roots, double[:, ::1] out):
    """Add to ``out`` ((K, K) float64) the products of each column's pairs of cells' roots, a
    column at a time, in order: column c's cells are ``ptr[c]`` to ``ptr[c + 1]`` (rows ``rows``,
    all different, values ``values``; a CSC matrix of K rows), the root of cell i is ``sqrt(values[i]
    / totals[rows[i]])`` (put in ``roots``, (K,) scratch, a column at a time), and ``out[a, b] +=
    root_i * root_j`` for each pair ``i < j``, ``a, b`` their rows, the lower first. ``out`` above
    the diagonal then holds ``R @ R.T`` (each pair of rows once), R the matrix of roots, summed
    column by column: one multiply-add per pair of cells that share a column, where scipy's sparse
    product makes both halves and the diagonal, at about ten times the cost a pair, and no array
    of roots as large as the cells. NumPy: for each column, ``r = np.sqrt(v / totals[rows])`` and
    ``out[lo, hi] += r[i] * r[j]`` over ``i, j = np.triu_indices(n, 1)``."""
    cdef Py_ssize_t c, i, j, first, n
    cdef int32_t a, b
    cdef double r
    with nogil:
        for c in range(ptr.shape[0] - 1):
            first = ptr[c]
            n = ptr[c + 1] - first
            for i in range(n):
                roots[i] = sqrt(values[first + i] / totals[rows[first + i]])
            for i in range(n):
                a = rows[first + i]
                r = roots[i]
                for j in range(i + 1, n):
                    b = rows[first + j]
                    if a < b:
                        out[a, b] += r * roots[j]
                    else:
                        out[b, a] += r * roots[j]


def renumbered_rows(const int64_t[::1] ptr, const cell_column[::1] columns, const cell_value[::1] values,
                    const int64_t[::1] to, int64_t n_columns, int64_t first_row, int64_t[::1] codes,
                    int64_t[::1] sums):
    """Rows of cells (CSR: row r's are ``ptr[r]`` to ``ptr[r + 1]``, in order of column) with each
    column ``c`` renumbered ``to[c]``, written in order again as codes ``(first_row + r) *
    n_columns + to[c]`` and their ``sums`` (two cells of a row renumbered alike are one, their
    values added, in the order the row holds them); returns how many were written (``codes`` and
    ``sums`` hold at least as many as the rows' cells). ``columns`` and ``values`` are read in
    the dtypes a model keeps them in (no int64 copy of each block: 21 M cells four times over
    at 100 M tokens). Each row is put in order by insertion:
    a renumbering that moves a few columns (an update's freed topic counted in another) moves a
    few cells. NumPy: for each row, ``np.unique(to[cols], return_inverse=True)`` and the values
    added with ``np.bincount`` over the inverse."""
    cdef Py_ssize_t r, i, n = 0, start, lo, hi, mid, k
    cdef int64_t code, base
    with nogil:
        for r in range(ptr.shape[0] - 1):
            start = n
            base = (first_row + r) * n_columns
            for i in range(ptr[r], ptr[r + 1]):
                code = base + to[<Py_ssize_t>columns[i]]
                if n == start or codes[n - 1] < code:  # (in order: appended)
                    codes[n] = code
                    sums[n] = <int64_t>values[i]
                    n += 1
                    continue
                lo, hi = start, n  # (the first of the row's codes at least code)
                while lo < hi:
                    mid = (lo + hi) // 2
                    if codes[mid] < code:
                        lo = mid + 1
                    else:
                        hi = mid
                if codes[lo] == code:
                    sums[lo] += <int64_t>values[i]
                    continue
                k = n
                while k > lo:
                    codes[k] = codes[k - 1]
                    sums[k] = sums[k - 1]
                    k -= 1
                codes[lo] = code
                sums[lo] = <int64_t>values[i]
                n += 1
    return n
