"""Compiled SWF record tokenizer.

Parses whole lines of a byte buffer into 18 columns without the GIL (int64, or the bits of float64
for the fractional fields), in one pass over each line, and checks each record's values (every field a decimal number of magnitude below 2**62, the
submit time >= 0 or -1). It never raises: it stops at the first line Python must look at (a comment,
a malformed record, a full output block) and reports where, so that the Python layer can keep the
header, skip or raise a :class:`TraceFormatError` naming the line, the field and the value, in the
file's order.
"""
from libc.math cimport fabs
from libc.stdint cimport int64_t
from libc.stdlib cimport strtod
from libc.string cimport memchr, memcpy

# statuses returned to Python
cdef enum:
    ST_NEED_DATA = 0    # every complete line consumed; pos = start of the incomplete tail
    ST_FULL = 1         # the output block is full; pos = start of the next line
    ST_COMMENT = 2      # pos = start of a ';' line
    ST_FIELD_COUNT = 3  # pos = start of a line with != 18 fields; err_field = fields found
    ST_NOT_NUMBER = 4   # pos = start of a line; err_field = 0-based field; err_a:err_b = the token
    ST_TOO_BIG = 5      # pos = start of a record with a value of magnitude >= 2**62; err_field = its field
    ST_BAD_SUBMIT = 6   # pos = start of a record whose submit time is negative and not -1

# what _parse_number returns
cdef enum:
    PARSED = 0
    NOT_PARSED = -1     # the token is not a decimal number

NEED_DATA, FULL, COMMENT, FIELD_COUNT, NOT_NUMBER, TOO_BIG, BAD_SUBMIT = 0, 1, 2, 3, 4, 5, 6
N_FIELDS = 18
#: the magnitude from which a value is refused (the columns are int64)
MAX_VALUE = 2.0 ** 62
cdef double C_MAX_VALUE = MAX_VALUE
cdef enum:
    SUBMIT_FIELD = 1    # (0-based) the submit time: >= 0, or -1 for missing


#: each byte's class for the line scanner: a separator (space, tab, CR, VT, FF), the line end, other
cdef enum:
    C_OTHER = 0
    C_SPACE = 1
    C_NEWLINE = 2
cdef unsigned char BYTE_CLASS[256]
for _b in range(256):
    BYTE_CLASS[_b] = C_SPACE if _b in (32, 9, 13, 11, 12) else C_NEWLINE if _b == 10 else C_OTHER


cdef inline bint _is_space(unsigned char c) noexcept nogil:
    return BYTE_CLASS[c] == C_SPACE


cdef inline Py_ssize_t _skip_spaces(const unsigned char* base, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    # the first byte from p on that is not a separator (n: none)
    while p < n and BYTE_CLASS[base[p]] == C_SPACE:
        p += 1
    return p


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


def parse_columns(const unsigned char[::1] buf, Py_ssize_t pos, bint final, int64_t[:, ::1] cols,
                  const unsigned char[::1] is_float, int64_t[::1] row_line, Py_ssize_t row0, int64_t line0):
    """Parse lines of ``buf`` from byte ``pos`` into the columns ``cols[:, row0:]`` (18 rows of int64:
    a field flagged in ``is_float`` holds a float64's bits, view it as float64; the others the value
    truncated toward zero, as ``astype(int64)`` would).

    ``line0`` is the 1-based number of the line starting at ``pos``; each parsed record's line number
    goes to ``row_line``. When ``final`` the buffer's end also ends the last line.
    Returns ``(status, pos, nrows, line, err_field, err_a, err_b, err_value)``: ``pos``/``line`` locate
    the line to resume at (or the offending line), ``nrows`` is the number of records added,
    ``err_value`` the value refused by TOO_BIG or BAD_SUBMIT.
    """
    cdef Py_ssize_t n = buf.shape[0], cap = cols.shape[1]
    cdef Py_ssize_t r = row0, p, a, nf
    cdef int64_t line = line0
    cdef int status = ST_NEED_DATA
    cdef Py_ssize_t err_field = -1, err_a = -1, err_b = -1
    cdef double v, err_value = 0.0
    cdef double row[18]
    cdef bint flt[18]
    cdef const unsigned char* base
    cdef int64_t ival
    cdef int nd
    cdef bint neg, ended
    cdef unsigned char c
    if cols.shape[0] != 18 or is_float.shape[0] != 18 or row_line.shape[0] < cap:
        raise ValueError("parse_columns: cols must be 18 columns, is_float 18 flags, row_line one per row")
    for nf in range(18):
        flt[nf] = is_float[nf] != 0
    if n == 0:
        return ST_NEED_DATA, pos, 0, line, -1, -1, -1, 0.0
    base = &buf[0]
    with nogil:
        # one pass over each line: its fields are parsed as they are met (a plain integer at once,
        # anything else by _parse_number); a line is committed only once its end is seen
        while pos < n:
            if r >= cap:
                status = ST_FULL
                break
            p = pos
            p = _skip_spaces(base, p, n)
            if p == n:                  # blank to the buffer's end
                if final:
                    pos = n
                    line += 1
                break
            if base[p] == 10:           # blank line
                pos = p + 1
                line += 1
                continue
            if base[p] == 59:           # ';' comment / header line: Python reads it once it is whole
                if not final and memchr(base + p, 10, n - p) == NULL:
                    break
                status = ST_COMMENT
                break
            nf = 0
            ended = False
            while True:
                # p is at a field's first byte
                a = p
                neg = False
                c = base[p]
                if c == 45 or c == 43:
                    neg = c == 45
                    p += 1
                ival = 0
                nd = 0
                while p < n and _is_digit(base[p]):
                    if nd < 18:
                        ival = ival * 10 + (base[p] - 48)
                    nd += 1
                    p += 1
                if 0 < nd <= 18 and (p == n or BYTE_CLASS[base[p]] != C_OTHER):
                    v = <double>(-ival if neg else ival)
                    if nf < 18:
                        row[nf] = v
                else:
                    while p < n and BYTE_CLASS[base[p]] == C_OTHER:
                        p += 1
                    if nf < 18:
                        if p == n and not final:
                            break       # the field may go on in the next buffer
                        if _parse_number(base + a, p - a, &v) != PARSED:
                            if not final and memchr(base + p, 10, n - p) == NULL:
                                break   # reported once the whole line is there
                            status = ST_NOT_NUMBER
                            err_field = nf
                            err_a = a
                            err_b = p
                            break
                        row[nf] = v
                nf += 1
                p = _skip_spaces(base, p, n)
                if p == n:
                    ended = final
                    break
                if base[p] == 10:
                    ended = True
                    break
            if status == ST_NOT_NUMBER or not ended:
                break                   # an error, or the line goes on in the next buffer
            if nf != 18:
                status = ST_FIELD_COUNT
                err_field = nf
                break
            for nf in range(18):
                if fabs(row[nf]) >= C_MAX_VALUE:
                    status = ST_TOO_BIG
                    err_field = nf
                    err_value = row[nf]
                    break
            if status == ST_TOO_BIG:
                break
            if row[SUBMIT_FIELD] < 0 and row[SUBMIT_FIELD] != -1:
                status = ST_BAD_SUBMIT
                err_field = SUBMIT_FIELD
                err_value = row[SUBMIT_FIELD]
                break
            for nf in range(18):
                if flt[nf]:
                    memcpy(&cols[nf, r], &row[nf], sizeof(double))
                else:
                    cols[nf, r] = <int64_t>row[nf]    # |value| < 2**62: exact truncation toward zero
            row_line[r] = line
            r += 1
            pos = p + 1 if p < n else n
            line += 1
    return status, pos, r - row0, line, err_field, err_a, err_b, err_value
