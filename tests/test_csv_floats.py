"""The compiled float texts are Python's repr, byte for byte, and the block formatter's bound checks."""
import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pbf import _csvout
from pbf._csvout import format_block


def float_texts(values):
    # (looked up when a test runs: a compiled core built before it fails these tests, not the collection)
    assert hasattr(_csvout, "float_texts"), "pbf._csvout predates float_texts: rebuild the compiled core"
    return _csvout.float_texts(values)

EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 0.1 + 0.2, 2.5, 100.0, 12.345, -0.001,
         1e-4, 1.5e-4, 9.999e-5, 1e-5, 5e-324, 2.2250738585072014e-308, 1e14, 999999999999999.0, 1e15,
         123456789012345.6, 1e16, 1.7976931348623157e308, float("inf"), -float("inf"), float("nan"),
         0.000123456789, 1234567.000001, 4503599627370496.5, 9007199254740993.0]


def _texts(values):
    blob, offsets = float_texts(np.asarray(values, dtype=np.float64))
    data = bytes(blob)
    return [data[offsets[i]:offsets[i + 1]].decode() for i in range(len(values))]


def test_edge_values_are_written_as_their_repr():
    """Zeros of both signs, the smallest and largest doubles, the exponent thresholds, infinities, nan."""
    assert _texts(EDGES) == [repr(v) for v in EDGES]


def test_measured_times_are_written_as_their_repr():
    """Nanoseconds over 1000 (a pass's wall time in microseconds), the values the fast path is for."""
    rng = np.random.default_rng(0)
    ns = np.concatenate([rng.integers(0, 10**6, 5000), rng.integers(0, 10**15, 5000)])
    values = ns / 1000.0
    assert _texts(values) == [repr(v) for v in values.tolist()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.floats(-1e6, 1e6).map(lambda v: round(v, 3)),
                          st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", b.to_bytes(8, "little"))[0]),
                          st.builds(lambda n, k: n / 10.0**k, st.integers(-10**16, 10**16), st.integers(0, 12))),
                max_size=50))
def test_any_double_is_written_as_its_repr(values):
    assert _texts(values) == [repr(v) for v in values]


def test_no_values_give_an_empty_table():
    blob, offsets = float_texts(np.zeros(0))
    assert len(blob) == 0 and offsets.tolist() == [0]


def test_a_buffer_that_holds_the_rows_but_not_their_widest_bound_still_takes_them():
    """The formatter checks a row's own width when the widest row might not fit: rows that fit are
    written, one that does not is refused (-1), never written past the buffer."""
    blob, offs = np.frombuffer(b"xyzzy", np.uint8), np.array([0, 1, 5], np.int64)
    first, second = np.array([0, 0, 1], dtype=np.int64), np.array([0, 1, 0], dtype=np.int64)
    args = [1, 1], [first, second], [blob, blob], [offs, offs]
    want = b"x,x\r\nx,yzzy\r\nyzzy,x\r\n"
    for size in (len(want) + 1, 64):         # (a row's bound counts a separator after its last field)
        buf = np.full(size + 8, 0xAA, np.uint8)
        assert format_block(*args, 0, 3, buf[:size]) == len(want)
        assert bytes(buf[:len(want)]) == want and (buf[len(want):] == 0xAA).all()
    buf = np.full(len(want) + 8, 0xAA, np.uint8)
    assert format_block(*args, 0, 3, buf[:len(want) - 1]) == -1
    assert (buf[len(want) - 1:] == 0xAA).all()
