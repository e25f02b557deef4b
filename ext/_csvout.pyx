"""Compiled CSV row formatting for the replay outputs (jobs.csv, passes.csv, estimates.csv).

The rows are formatted without the GIL into a caller's buffer, a block of rows at a time, so that a
file of 100,000 rows costs a few milliseconds instead of the csv module's hundreds and two files can
be formatted on two threads at once. A column is either 64-bit integers (written in decimal) or a
table of byte strings, already quoted as the csv module quotes them, with one index per row: the
Python layer (:mod:`pbf.csv_out`) turns labels, floats and strings into tables, so that the bytes
written are the csv module's, byte for byte. :func:`float_texts` makes a float column's table in
compiled code: most values (those a decimal of at most 15 digits and 9 decimals gives back exactly,
as measured wall times in microseconds are) without the GIL, the others by Python's own ``repr``.
"""
from cpython.conversion cimport Py_DTSF_ADD_DOT_0, PyOS_double_to_string
from cpython.mem cimport PyMem_Free
from libc.math cimport fabs, isfinite, signbit
from libc.stdint cimport int64_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, strlen

cimport cython

import numpy as np

cdef enum:
    KIND_INT = 0
    KIND_TABLE = 1
    INT_WIDTH = 20      # the widest decimal int64: "-9223372036854775808"
    FLOAT_WIDTH = 32    # room for one float's text: repr's longest is 24 ("-2.2250738585072014e-308")
    MAX_DECIMALS = 9    # the fast path tries a float as n / 10**k for k up to this

#: 10**k, exact in a double for every k used
cdef double POW10[MAX_DECIMALS + 1]
cdef int64_t IPOW10[MAX_DECIMALS + 1]
POW10[0] = 1.0
IPOW10[0] = 1
for _k in range(1, MAX_DECIMALS + 1):
    POW10[_k] = POW10[_k - 1] * 10.0
    IPOW10[_k] = IPOW10[_k - 1] * 10


#: the two digits of 0..99, for writing integers two digits at a time
cdef const char* DIGIT_PAIRS = (b"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                b"4041424344454647484950515253545556575859606162636465666768697071727374757677787980"
                                b"81828384858687888990919293949596979899")


cdef inline Py_ssize_t _put_int(uint8_t* out, int64_t v) noexcept nogil:
    # decimal digits of v at out; returns how many bytes were written
    cdef uint8_t tmp[INT_WIDTH]
    cdef Py_ssize_t p = INT_WIDTH, k = 0
    cdef uint64_t u, q, d
    if v < 0:
        out[0] = 45         # '-'
        k = 1
        u = <uint64_t>(-(v + 1)) + 1      # |INT64_MIN| without overflow
    else:
        u = <uint64_t>v
    if u < 10:              # the commonest field: 0, -1, a count
        out[k] = <uint8_t>(48 + u)
        return k + 1
    while u >= 100:
        q = u // 100
        d = (u - q * 100) * 2
        p -= 2
        tmp[p] = DIGIT_PAIRS[d]
        tmp[p + 1] = DIGIT_PAIRS[d + 1]
        u = q
    if u >= 10:
        p -= 2
        tmp[p] = DIGIT_PAIRS[u * 2]
        tmp[p + 1] = DIGIT_PAIRS[u * 2 + 1]
    else:
        p -= 1
        tmp[p] = <uint8_t>(48 + u)
    memcpy(out + k, tmp + p, INT_WIDTH - p)
    return k + INT_WIDTH - p


cdef Py_ssize_t _put_float_short(uint8_t* out, double v) noexcept nogil:
    # ``repr(v)`` at out when it is a decimal of at most 15 significant digits and MAX_DECIMALS decimals
    # written without an exponent (1e-4 <= |v| < 1e15, or zero); returns the bytes written, or -1 when
    # v is not such a number (the caller then asks Python's repr).
    #
    # Why this is repr's text: with n / 10**k == v (the division correctly rounded, as strtod rounds the
    # decimal n e-k), the decimal n e-k reads back as v. A decimal of at most 15 significant digits is
    # the only one of at most 15 digits that reads back as a given double (DBL_DIG), so no shorter
    # decimal reads back as v and repr's shortest digits are n's, without its trailing zeros. repr
    # writes them without an exponent for these magnitudes, with ".0" when there is no fraction.
    cdef double a, scaled
    cdef int64_t n = 0, ip, fp
    cdef int k, found = -1, i, nd
    cdef Py_ssize_t pos = 0
    cdef uint8_t digits[20]
    if not isfinite(v):
        return -1
    if v == 0.0:
        if signbit(v):
            out[0] = 45
            pos = 1
        out[pos] = 48
        out[pos + 1] = 46
        out[pos + 2] = 48
        return pos + 3
    a = fabs(v)
    for k in range(MAX_DECIMALS + 1):
        scaled = a * POW10[k]
        if scaled >= 1e15:
            return -1
        n = <int64_t>(scaled + 0.5)
        if n != 0 and n < 1000000000000000LL and <double>n / POW10[k] == a:
            found = k
            break
    if found < 0:
        return -1
    ip = n // IPOW10[found]
    fp = n % IPOW10[found]
    if ip == 0 and fp < IPOW10[found] // 10000:
        return -1           # below 1e-4 with ip 0: repr writes it with an exponent (1e-05)
    if v < 0:
        out[0] = 45         # '-'
        pos = 1
    pos += _put_int(out + pos, ip)
    out[pos] = 46           # '.'
    pos += 1
    if fp == 0:
        out[pos] = 48
        return pos + 1
    nd = found
    while fp % 10 == 0:     # the trailing zeros go
        fp //= 10
        nd -= 1
    for i in range(nd - 1, -1, -1):
        digits[i] = <uint8_t>(48 + fp % 10)
        fp //= 10
    memcpy(out + pos, digits, nd)
    return pos + nd


cdef Py_ssize_t _put_float_repr(uint8_t* out, double v) except -1:
    # repr(v) at out (Python's own shortest round trip; needs the GIL)
    cdef char* text = PyOS_double_to_string(v, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    cdef Py_ssize_t n = strlen(text)
    if n > FLOAT_WIDTH:
        PyMem_Free(text)
        raise ValueError(f"the text of {v!r} is longer than {FLOAT_WIDTH} bytes")
    memcpy(out, text, n)
    PyMem_Free(text)
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def float_texts(const double[::1] values):
    """``(blob, offsets)``: ``repr`` of each value (what the csv module writes for a float), value
    ``i`` being ``blob[offsets[i]:offsets[i+1]]`` (uint8 and int64 arrays)."""
    cdef Py_ssize_t n = values.shape[0], i, pos = 0, got
    blob_arr = np.empty(n * FLOAT_WIDTH, dtype=np.uint8)
    offs_arr = np.empty(n + 1, dtype=np.int64)
    cdef uint8_t[::1] blob = blob_arr
    cdef int64_t[::1] offs = offs_arr
    offs[0] = 0
    if n == 0:
        return blob_arr[:0], offs_arr
    cdef uint8_t* o = &blob[0]
    with nogil:
        for i in range(n):
            got = _put_float_short(o + pos, values[i])
            if got < 0:
                with gil:
                    got = _put_float_repr(o + pos, values[i])
            pos += got
            offs[i + 1] = pos
    return blob_arr[:pos], offs_arr


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
    cdef int64_t idx, widest
    cdef Py_ssize_t row_max = 2      # a row's widest: each field at its widest, a separator each, the row end
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
                widest = 0
                for r in range(first, last):
                    idx = view[r]
                    if idx < 0 or idx >= oview.shape[0] - 1:
                        raise ValueError(f"column {c}, row {r}: index {idx} outside the table")
                    if oview[idx] < 0 or oview[idx] > oview[idx + 1] or oview[idx + 1] > bview.shape[0]:
                        raise ValueError(f"column {c}: string {idx} does not lie in the {bview.shape[0]}-byte table")
                    if oview[idx + 1] - oview[idx] > widest:
                        widest = oview[idx + 1] - oview[idx]
                blob[c] = &bview[0] if bview.shape[0] > 0 else NULL
                offs[c] = &oview[0]
                row_max += widest + 1
            else:
                row_max += INT_WIDTH + 1
        with nogil:
            for r in range(first, last):
                # the row's bound is checked before it is written: a row never overruns `out` (its
                # own bound only when the widest row might not fit)
                if pos + row_max > cap:
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
