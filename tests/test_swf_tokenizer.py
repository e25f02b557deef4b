"""The compiled SWF tokenizer against a line-by-line reference written in Python, with the file cut
into pieces of any size (a field, a line end or a CR-LF split between two pieces) and blocks of any
number of rows: the same rows, line numbers, header lines, skipped lines and first error."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbf.workload.swf as swf
from pbf.errors import TraceFormatError
from pbf.workload.jobs import FLOAT_FIELDS, SWF_FIELDS
from pbf.workload.swf import SwfReader

SEPARATORS = b" \t\r\x0b\x0c"
NUMBER = re.compile(rb"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _number(token):
    """The value the tokenizer gives a field, or None when it refuses it."""
    if not NUMBER.fullmatch(token):
        return None
    digits = re.fullmatch(rb"[+-]?([0-9]+)", token)
    if digits is None or len(digits.group(1)) > 18:
        if len(token) >= 64:
            return None
    return float(token)


def _reference(data):
    """What the reader makes of ``data``: rows (line, values), header lines, bad lines (line, field
    index or None, value), in the file's order."""
    rows, header, bad = [], [], []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, 1):
        stripped = raw.strip(SEPARATORS)
        if not stripped:
            continue
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if stripped.startswith(b";"):
            header.append((number, text.lstrip()[1:].rstrip()))
            continue
        tokens = re.split(b"[" + re.escape(SEPARATORS) + b"]+", stripped)
        values = []
        for i, token in enumerate(tokens[:18]):
            v = _number(token)
            if v is None:
                bad.append((number, i, token.decode("utf-8", "replace")))
                break
            values.append(v)
        else:
            if len(tokens) != 18:
                bad.append((number, None, text.strip()))
            elif any(abs(v) >= 2.0 ** 62 for v in values):
                bad.append((number, "big", None))
            elif values[1] < 0 and values[1] != -1:
                bad.append((number, 1, None))
            else:
                rows.append((number, values))
    return rows, header, bad


TOKENS = [b"0", b"1", b"-1", b"7", b"+3", b"123456789", b"999999999999999999", b"1234567890123456789",
          b"3" * 40, b"3" * 70, b"12.5", b".5", b"5.", b"1e3", b"2.5E-2", b"1e", b".", b"-", b"abc", b"nan",
          b"inf", b"0x10", "١٢".encode(), b"1e300", b"-5", b"\x00", b"1,5"]
PLAIN = TOKENS[:6]
NUMBERS = [t for t in TOKENS if _number(t) is not None]
separator = st.sampled_from([b" ", b"  ", b"\t", b" \r ", b"\x0b", b"     "])


@st.composite
def swf_line(draw):
    kind = draw(st.sampled_from(["record"] * 6 + ["comment", "blank", "short", "long"]))
    lead = draw(st.sampled_from([b"", b" ", b"\t  "]))
    if kind == "comment":
        return lead + b"; " + draw(st.sampled_from([b"Note: x", b"MaxProcs: 64", b"Version: 2.2", b""]))
    if kind == "blank":
        return draw(st.sampled_from([b"", b"   ", b"\r", b" \t "]))
    count = {"record": 18, "short": draw(st.integers(1, 17)), "long": draw(st.integers(19, 22))}[kind]
    pool = draw(st.sampled_from([PLAIN, PLAIN, NUMBERS, TOKENS]))      # (NUMBERS: too big, bad submits)
    fields = [draw(st.sampled_from(pool)) for _ in range(count)]
    out = lead + fields[0]
    for f in fields[1:]:
        out += draw(separator) + f
    return out + draw(st.sampled_from([b"", b"\r", b"  "]))


def _read(path, skip, chunk, block):
    old = swf._CHUNK_BYTES
    swf._CHUNK_BYTES = chunk            # the file handed to the tokenizer in pieces of this size
    try:
        reader = SwfReader(path, block_rows=block, skip_bad_lines=skip, require_sorted=False)
        tables = list(reader)
    finally:
        swf._CHUNK_BYTES = old
    lines = np.concatenate([t.columns["line"] for t in tables]).tolist() if tables else []
    values = [np.concatenate([t.columns[name] for t in tables]).tolist() if tables else [] for name in SWF_FIELDS]
    return reader, lines, values


@settings(max_examples=250, deadline=None)
@given(lines=st.lists(swf_line(), max_size=12), end=st.sampled_from([b"", b"\n", b"\r\n"]),
       chunk=st.integers(1, 64), block=st.integers(1, 4))
def test_the_reader_agrees_with_the_reference_however_the_file_is_cut(tmp_path_factory, lines, end, chunk,
                                                                     block):
    data = b"\n".join(lines) + end
    path = tmp_path_factory.mktemp("swf") / "t.swf"
    path.write_bytes(data)
    rows, header, bad = _reference(data)
    reader, got_lines, got_values = _read(path, True, chunk, block)
    assert got_lines == [n for n, _ in rows]
    for i, name in enumerate(SWF_FIELDS):
        want = [v[i] if name in FLOAT_FIELDS else int(v[i]) for _, v in rows]
        assert got_values[i] == want, name
    assert reader.header.lines == [text for _, text in header]
    assert reader.bad_lines == len(bad)
    assert reader.first_bad_lines == sorted(n for n, _, _ in bad)[:5]
    if not bad:
        return
    # without skipping: the first bad line is the error, naming its line, field and value
    line, field, value = min(bad, key=lambda b: b[0])
    with pytest.raises(TraceFormatError) as err:
        _read(path, False, chunk, block)
    assert err.value.line == line
    if field is None:
        assert err.value.field is None and err.value.value == value
    elif isinstance(field, int) and value is not None:
        assert err.value.field == f"{field + 1} ({SWF_FIELDS[field]})" and err.value.value == value


def values_of(rows):
    return [v for _, v in rows]


def test_a_record_split_at_every_byte_reads_the_same(tmp_path):
    """Every cut of a small file, CR-LF line ends and a last line without its end included."""
    data = (b"; MaxProcs: 8\r\n  1 0 5 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\r\n\r\n"
            b"2\t3 0 12.5 1 97.25 -1 1 15 -1 1 2 1 -1 1 -1 -1 -1")
    path = tmp_path / "t.swf"
    path.write_bytes(data)
    rows, _, _ = _reference(data)
    for chunk in range(1, len(data) + 1):
        reader, lines, values = _read(path, False, chunk, 65536)
        assert lines == [2, 4] and reader.header.max_procs == 8 and reader.lines == 4
        assert values[3] == [10, 12] and values[5] == [-1.0, 97.25]     # run (int64), avg_cpu (float)
        assert [[v[i] if SWF_FIELDS[i] in FLOAT_FIELDS else int(v[i]) for v in values_of(rows)]
                for i in range(18)] == values
