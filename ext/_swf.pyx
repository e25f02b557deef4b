"""Compiled SWF record tokenizer.

Parses whole lines of a byte buffer into rows of 18 doubles without the GIL. It never raises: it stops
at the first line Python must look at (a comment, a malformed record, a full output block) and reports
where, so that the Python layer can keep the header, skip or raise a :class:`TraceFormatError` naming
the line, the field and the value.
"""
from libc.stdint cimport int64_t
from libc.stdlib cimport strtod
from libc.string cimport memcpy

# statuses returned to Python
cdef enum:
    ST_NEED_DATA = 0    # every complete line consumed; pos = start of the incomplete tail
    ST_FULL = 1         # the output block is full; pos = start of the next line
    ST_COMMENT = 2      # pos = start of a ';' line
    ST_FIELD_COUNT = 3  # pos = start of a line with != 18 fields; err_field = fields found
    ST_NOT_NUMBER = 4   # pos = start of a line; err_field = 0-based field; err_a:err_b = the token

# what _parse_number returns
cdef enum:
    PARSED = 0
    NOT_PARSED = -1     # the token is not a decimal number

NEED_DATA, FULL, COMMENT, FIELD_COUNT, NOT_NUMBER = 0, 1, 2, 3, 4
N_FIELDS = 18


cdef inline bint _is_space(unsigned char c) noexcept nogil:
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


cdef inline bint _is_digit(unsigned char c) noexcept nogil:
    return 48 <= c <= 57


cdef int _parse_number(const unsigned char* s, Py_ssize_t n, double* out) noexcept nogil:
    # A decimal number: [sign] digits [. digits] [(e|E) [sign] digits], at least one mantissa digit.
    # Returns PARSED and sets *out (correctly rounded), or NOT_PARSED when the token is anything else.
    cdef Py_ssize_t i = 0
    cdef int ndig = 0, edig = 0
    cdef bint neg = False, simple = True
    cdef int64_t ival = 0
    cdef char tmp[64]
    if i < n and (s[i] == 45 or s[i] == 43):
        neg = s[i] == 45
        i += 1
    while i < n and _is_digit(s[i]):
        if ndig < 18:
            ival = ival * 10 + (s[i] - 48)
        else:
            simple = False
        i += 1
        ndig += 1
    if i < n and s[i] == 46:
        simple = False
        i += 1
        while i < n and _is_digit(s[i]):
            i += 1
            ndig += 1
    if ndig == 0:
        return NOT_PARSED
    if i < n and (s[i] == 101 or s[i] == 69):
        simple = False
        i += 1
        if i < n and (s[i] == 45 or s[i] == 43):
            i += 1
        while i < n and _is_digit(s[i]):
            i += 1
            edig += 1
        if edig == 0:
            return NOT_PARSED
    if i != n:
        return NOT_PARSED
    if simple:              # the common case: a plain integer of at most 18 digits, exact
        out[0] = <double>(-ival if neg else ival)
        return PARSED
    if n >= 64:
        return NOT_PARSED
    # the grammar above already rejected what strtod would also accept (inf, nan, hex floats)
    memcpy(tmp, s, n)
    tmp[n] = 0
    out[0] = strtod(tmp, NULL)
    return PARSED


def parse_block(const unsigned char[::1] buf, Py_ssize_t pos, bint final,
                double[:, ::1] rows, int64_t[::1] row_line, Py_ssize_t row0, int64_t line0):
    """Parse lines of ``buf`` from byte ``pos`` into ``rows[row0:]``.

    ``line0`` is the 1-based number of the line starting at ``pos``; each parsed row's line number goes
    to ``row_line``. When ``final`` the buffer's end also ends the last line.
    Returns ``(status, pos, nrows, line, err_field, err_a, err_b)``: ``pos``/``line`` locate the line to
    resume at (or the offending line), ``nrows`` is the number of rows filled.
    """
    cdef Py_ssize_t n = buf.shape[0], cap = rows.shape[0]
    cdef Py_ssize_t r = row0, eol, p, a, nf
    cdef int64_t line = line0
    cdef int status = ST_NEED_DATA
    cdef Py_ssize_t err_field = -1, err_a = -1, err_b = -1
    cdef double v
    cdef const unsigned char* base
    if n == 0:
        return ST_NEED_DATA, pos, 0, line, -1, -1, -1
    base = &buf[0]
    with nogil:
        while pos < n:
            if r >= cap:
                status = ST_FULL
                break
            eol = pos
            while eol < n and base[eol] != 10:
                eol += 1
            if eol == n and not final:
                status = ST_NEED_DATA
                break
            p = pos
            while p < eol and _is_space(base[p]):
                p += 1
            if p == eol:            # blank line
                pos = eol + 1
                line += 1
                continue
            if base[p] == 59:       # ';' comment / header line
                status = ST_COMMENT
                break
            nf = 0
            while True:
                while p < eol and _is_space(base[p]):
                    p += 1
                if p >= eol:
                    break
                a = p
                while p < eol and not _is_space(base[p]):
                    p += 1
                if nf < 18:
                    if _parse_number(base + a, p - a, &v) != PARSED:
                        status = ST_NOT_NUMBER
                        err_field = nf
                        err_a = a
                        err_b = p
                        break
                    rows[r, nf] = v
                nf += 1
            if status == ST_NOT_NUMBER:
                break
            if nf != 18:
                status = ST_FIELD_COUNT
                err_field = nf
                break
            row_line[r] = line
            r += 1
            pos = eol + 1
            line += 1
        if pos >= n and status == ST_NEED_DATA:
            pos = n
    return status, pos, r - row0, line, err_field, err_a, err_b
