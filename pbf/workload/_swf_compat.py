"""``parse_columns`` over a compiled core built before it had one (its ``parse_block`` fills rows of
doubles and does not check the values): the same results, slower. Used only until the compiled core
is rebuilt (``pip install -e .`` or ``python setup.py build_ext --inplace``); then unused.
"""
import numpy as np

from .. import _swf

_MAX = 2.0 ** 62
_TOO_BIG, _BAD_SUBMIT = 5, 6


def parse_columns(buf, pos, final, cols, is_float, row_line, row0, line0):
    """As :func:`pbf._swf.parse_columns`."""
    cap = cols.shape[1]
    rows = np.empty((cap, 18), dtype=np.float64)
    status, end, got, line, ef, ea, eb = _swf.parse_block(buf, pos, final, rows, row_line, row0, line0)
    part = rows[row0:row0 + got]
    bad_value = (np.abs(part) >= _MAX).any(axis=1) | ((part[:, 1] < 0) & (part[:, 1] != -1))
    ev = 0.0
    if bad_value.any():
        k = int(np.argmax(bad_value))
        big = np.nonzero(np.abs(part[k]) >= _MAX)[0]
        status, ef = (_TOO_BIG, int(big[0])) if len(big) else (_BAD_SUBMIT, 1)
        ev = float(part[k, ef])
        line = int(row_line[row0 + k])
        data = bytes(buf)
        end = pos
        for _ in range(line - line0):       # the start of the record's line
            end = data.index(b"\n", end) + 1
        got, part = k, part[:k]
    for i in range(18):
        if is_float[i]:
            cols[i, row0:row0 + got] = part[:, i].view(np.int64)
        else:
            cols[i, row0:row0 + got] = part[:, i].astype(np.int64)
    return status, end, got, line, ef, ea, eb, ev
