"""Compiled CSV row formatting for the replay outputs (jobs.csv, passes.csv, estimates.csv).

The rows are formatted without the GIL into a caller's buffer, a block of rows at a time, so that a
file of 100,000 rows costs a few milliseconds instead of the csv module's hundreds and two files can
be formatted on two threads at once. A column is either 64-bit integers (written in decimal) or a
table of byte strings, already quoted as the csv module quotes them, with one index per row: the
Python layer (:mod:`pbf.csv_out`) turns labels, floats and strings into tables, so that the bytes
written are the csv module's, byte for byte.
"""
from libc.stdint cimport int64_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cimport cython

cdef enum:
    KIND_INT = 0
    KIND_TABLE = 1
    INT_WIDTH = 20      # the widest decimal int64: "-9223372036854775808"


cdef inline Py_ssize_t _put_int(uint8_t* out, int64_t v) noexcept nogil:
    # decimal digits of v at out; returns how many bytes were written
    cdef uint8_t tmp[20]
    cdef Py_ssize_t n = 0, k = 0
    cdef uint64_t u
    if v < 0:
        out[0] = 45         # '-'
        k = 1
        u = <uint64_t>(-(v + 1)) + 1      # |INT64_MIN| without overflow
    else:
        u = <uint64_t>v
    while True:
        tmp[n] = <uint8_t>(48 + u % 10)
        n += 1
        u //= 10
        if u == 0:
            break
    cdef Py_ssize_t i
    for i in range(n):
        out[k + i] = tmp[n - 1 - i]
    return k + n


@cython.boundscheck(False)
@cython.wraparound(False)
def format_block(list kinds, list values, list blobs, list offsets, Py_ssize_t first, Py_ssize_t last,
                 uint8_t[::1] out):
    """Format rows ``first`` to ``last - 1`` into ``out`` and return the bytes written.

    Column ``c`` is ``kinds[c]`` 0 (``values[c]``: int64 per row, written in decimal) or 1
    (``values[c]``: int64 index per row into the strings ``blobs[c][offsets[c][i]:offsets[c][i+1]]``).
    Fields are separated by ``,`` and rows end in ``\\r\\n`` (the csv module's excel dialect).
    ``out`` must hold at least the rows' bound (:func:`pbf.csv_out` computes it); returns -1,
    writing nothing usable, if it does not.
    """
    cdef Py_ssize_t n_cols = len(kinds)
    cdef Py_ssize_t c, r, pos = 0, a, b, cap = out.shape[0]
    cdef int64_t[::1] view
    cdef const uint8_t[::1] bview
    cdef int64_t[::1] oview
    if n_cols == 0 or last <= first:
        return 0
    cdef int* kind = <int*>malloc(n_cols * sizeof(int))
    cdef const int64_t** vals = <const int64_t**>malloc(n_cols * sizeof(int64_t*))
    cdef const uint8_t** blob = <const uint8_t**>malloc(n_cols * sizeof(uint8_t*))
    cdef const int64_t** offs = <const int64_t**>malloc(n_cols * sizeof(int64_t*))
    cdef uint8_t* o = &out[0]
    cdef bint short = False
    cdef int64_t idx
    if kind == NULL or vals == NULL or blob == NULL or offs == NULL:
        free(kind); free(vals); free(blob); free(offs)
        raise MemoryError()
    try:
        for c in range(n_cols):
            kind[c] = kinds[c]
            if kind[c] != KIND_INT and kind[c] != KIND_TABLE:
                raise ValueError(f"column {c}: kind {kinds[c]}, expected 0 (integers) or 1 (table)")
            view = values[c]
            if view.shape[0] < last:
                raise ValueError(f"column {c}: {view.shape[0]} values, rows up to {last} asked for")
            vals[c] = &view[0]
            blob[c] = NULL
            offs[c] = NULL
            if kind[c] == KIND_TABLE:
                bview = blobs[c]
                oview = offsets[c]
                # every index of these rows must name a string of the table, inside the blob (only
                # the strings the rows use are checked: a float column's table has a string a row)
                for r in range(first, last):
                    idx = view[r]
                    if idx < 0 or idx >= oview.shape[0] - 1:
                        raise ValueError(f"column {c}, row {r}: index {idx} outside the table")
                    if oview[idx] < 0 or oview[idx] > oview[idx + 1] or oview[idx + 1] > bview.shape[0]:
                        raise ValueError(f"column {c}: string {idx} does not lie in the {bview.shape[0]}-byte table")
                blob[c] = &bview[0] if bview.shape[0] > 0 else NULL
                offs[c] = &oview[0]
        with nogil:
            for r in range(first, last):
                # the row's bound is checked before it is written: a row never overruns `out`
                b = 2
                for c in range(n_cols):
                    if kind[c] == KIND_INT:
                        b += INT_WIDTH + 1
                    else:
                        idx = vals[c][r]
                        b += offs[c][idx + 1] - offs[c][idx] + 1
                if pos + b > cap:
                    short = True
                    break
                for c in range(n_cols):
                    if c:
                        o[pos] = 44        # ','
                        pos += 1
                    if kind[c] == KIND_INT:
                        pos += _put_int(o + pos, vals[c][r])
                    else:
                        idx = vals[c][r]
                        a = offs[c][idx]
                        b = offs[c][idx + 1] - a
                        if b:
                            memcpy(o + pos, blob[c] + a, b)
                            pos += b
                o[pos] = 13
                o[pos + 1] = 10
                pos += 2
    finally:
        free(kind); free(vals); free(blob); free(offs)
    return -1 if short else pos
