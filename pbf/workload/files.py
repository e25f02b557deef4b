"""Opening trace files: plain or gzip, whatever the name says (SWF logs and sacct dumps alike).

:func:`text_lines` reads a text trace (a sacct dump) line by line, so that neither a gzip bomb nor a
line without an end fills the memory, and turns every decompression or decoding failure (a truncated
or corrupt gzip stream) into a :class:`~pbf.errors.TraceFormatError` naming the file and the line.
"""
from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator

from ..errors import TraceFormatError

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["open_trace", "text_lines", "head_text", "MAX_LINE_BYTES"]

#: the longest line a text trace may have (a sacct record is a few hundred bytes)
MAX_LINE_BYTES = 1 << 20
_CHUNK_BYTES = 1 << 20
_NONBLANK = re.compile(rb"[^\s]")


def _gzip_errors() -> tuple[type[BaseException], ...]:
    """What can go wrong while decompressing (``gzip.BadGzipFile`` is an ``OSError``); gzip is imported
    when a file is opened with it, not with this module (an SWF log is read without it)."""
    import gzip
    return (EOFError, zlib.error, gzip.BadGzipFile)


def open_trace(path: str | os.PathLike) -> BinaryIO:
    """Open a trace file for reading in binary, decompressing gzip (detected by its magic bytes)."""
    path = os.fspath(path)
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic != b"\x1f\x8b":
        return open(path, "rb")
    import gzip
    return gzip.open(path, "rb")


def _gzip_error(path: str, line: int, exc: BaseException) -> TraceFormatError:
    if isinstance(exc, EOFError):
        return TraceFormatError(path, line, None, "the end of the file inside compressed data",
                                f"a complete gzip file (it is truncated: the data stops in line {line})")
    return TraceFormatError(path, line, None, f"corrupt gzip data ({exc})", "a valid gzip stream")


def text_lines(path: str | os.PathLike, *, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of a text trace (plain or gzip) that is not blank, the line
    end (``\n``, ``\r\n``) removed; bytes that are not UTF-8 are replaced (U+FFFD) and a leading
    byte-order mark dropped. Runs of blank lines are passed over at the speed of a byte search (a gzip
    file of a few hundred kilobytes may hold a gigabyte of them). :class:`TraceFormatError` for a
    truncated or corrupt gzip stream or a line longer than ``max_line`` bytes; ``OSError`` when the
    file cannot be opened."""
    path = os.fspath(path)
    number, tail = 1, b""
    with open_trace(path) as fh:
        while True:
            try:
                chunk = fh.read(_CHUNK_BYTES)
            except _gzip_errors() as exc:
                raise _gzip_error(path, number + tail.count(b"\n"), exc) from None
            data = tail + chunk
            pos = 0
            while True:
                text_at = _nonblank(data, pos)
                if text_at == len(data):               # blank to the end: count its line ends
                    cut = data.rfind(b"\n", pos) + 1
                    if cut:
                        number += data.count(b"\n", pos, cut)
                        pos = cut
                    break
                start = max(data.rfind(b"\n", pos, text_at) + 1, pos)
                number += data.count(b"\n", pos, start)
                pos = start
                end = data.find(b"\n", pos)
                if end < 0 and chunk:
                    break                              # the line goes on in the next chunk
                end = len(data) if end < 0 else end
                if end - pos > max_line:
                    raise _too_long(path, number, data[pos:pos + 60], max_line)
                text = data[pos:end].decode("utf-8", "replace").rstrip("\r")
                if number == 1 and text.startswith("\ufeff"):
                    text = text[1:]                    # (a byte-order mark)
                if text.strip() or number > 1:
                    yield number, text
                number += 1
                pos = end + 1
            tail = data[pos:]
            if len(tail) > max_line:
                raise _too_long(path, number, tail[:60], max_line)
            if not chunk:
                return


def _nonblank(data: bytes, pos: int) -> int:
    """The index of the first byte from ``pos`` on that is not ASCII white space (``len(data)``: none);
    a long blank run is passed over by ``bytes.lstrip`` on growing slices (gigabytes a second)."""
    m = _NONBLANK.search(data, pos, pos + 256)
    if m is not None:
        return m.start()
    at, width = pos + 256, 4096
    while at < len(data):
        seg = data[at:at + width]
        rest = seg.lstrip()
        if rest:
            return at + len(seg) - len(rest)
        at += len(seg)
        width *= 4
    return len(data)


def _too_long(path, number, start, max_line):
    return TraceFormatError(path, number, None, start.decode("utf-8", "replace"),
                            f"a line of at most {max_line:,} bytes")


def head_text(path: str | os.PathLike, limit: int = 1 << 16) -> str | None:
    """The first ``limit`` bytes of a trace (decompressed as far as the first ``limit`` bytes of a gzip
    file go, so that a truncated file still shows its start), as text; None when the file cannot be
    opened or its start is not gzip data after all (the reader that opens it then says why)."""
    try:
        with open(os.fspath(path), "rb") as fh:
            data = fh.read(limit)
    except OSError:
        return None
    if data[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompressobj(wbits=31).decompress(data, limit)
        except zlib.error:
            return None
    text = data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text
