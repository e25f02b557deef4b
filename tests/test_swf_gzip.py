"""A gzip SWF log inflated on a helper thread ahead of the tokenizer reads as it does on one thread:
the same table, truncated and corrupt streams named at the same line, several members, and no
helper thread left behind however the reading ends."""
import gzip
import threading
import zlib

import numpy as np
import pytest

import pbf.workload.swf as swf
from pbf.errors import TraceFormatError
from pbf.workload.swf import SwfReader, read_swf

HEADER = "; MaxProcs: 64\n; Note: a test log\n"


def _rec(i, submit):
    return f"{i} {submit} 0 100 2 -1 -1 2 200 -1 1 {i % 7} 1 -1 1 -1 -1 -1"


def _text(n, first=1):
    return "\n".join(_rec(i, i * 3) for i in range(first, first + n)) + "\n"


@pytest.fixture(params=["helper thread", "one thread"])
def inflate(request, monkeypatch):
    """Small pieces, so that even a small file is inflated in many; with and without the helper."""
    monkeypatch.setattr(swf, "_INFLATE_BYTES", 512)
    if request.param == "one thread":
        monkeypatch.setattr(swf, "_cores", lambda: 1)
    else:
        monkeypatch.setattr(swf, "_cores", lambda: 2)
    return request.param


def _helpers():
    return [t for t in threading.enumerate() if t.name == "pbf-swf-inflate"]


def _columns(table):
    return {k: np.asarray(v).tolist() for k, v in table.columns.items()}


def test_the_table_is_the_plain_files(tmp_path, inflate):
    text = HEADER + _text(3000)
    plain, packed = tmp_path / "t.swf", tmp_path / "t.swf.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    a, b = read_swf(plain), read_swf(packed)
    assert _columns(a) == _columns(b) and len(b) == 3000 and b.header.max_procs == 64
    assert not _helpers()


def test_several_members_read_as_one_text(tmp_path, inflate):
    parts = [HEADER + _text(800), _text(900, 801), _text(5, 1701)]
    path = tmp_path / "m.swf.gz"
    path.write_bytes(b"".join(gzip.compress(p.encode()) for p in parts))
    t = read_swf(path)
    assert t.job_id.tolist() == list(range(1, 1706)) and not _helpers()


def test_a_truncated_stream_is_named_at_the_line_reached(tmp_path, inflate):
    data = gzip.compress((HEADER + _text(5000)).encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="truncated: the data stops in line") as err:
        read_swf(path)
    assert 100 < err.value.line < 5000
    # every record before the cut was read: the line named is the one the text stops in
    got = zlib.decompressobj(wbits=31).decompress(data[: len(data) // 2])
    assert err.value.line == got.count(b"\n") + 1
    assert not _helpers()


def test_a_corrupt_stream_is_a_trace_error(tmp_path, inflate):
    data = bytearray(gzip.compress((HEADER + _text(5000)).encode()))
    data[len(data) // 2: len(data) // 2 + 64] = b"x" * 64
    path = tmp_path / "bad.swf.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match="corrupt gzip data"):
        read_swf(path)
    assert not _helpers()


def test_a_bad_record_stops_the_reading_and_the_helper(tmp_path, inflate):
    text = HEADER + _text(2000) + "1 2 3\n" + _text(3000, 2001)
    path = tmp_path / "bad.swf.gz"
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(TraceFormatError, match="18 whitespace-separated fields, found 3") as err:
        read_swf(path)
    assert err.value.line == 2 + 2000 + 1
    assert not _helpers()


def test_a_reader_left_after_its_first_block_stops_the_helper(tmp_path, inflate):
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress((HEADER + _text(20000)).encode()))
    blocks = iter(SwfReader(path, block_rows=100))
    assert len(next(blocks)) == 100
    blocks.close()
    assert not _helpers()
