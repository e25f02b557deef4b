"""Opening trace files: plain or gzip, whatever the name says (SWF logs and sacct dumps alike).

:func:`text_lines` reads a text trace (a sacct dump) line by line, so that neither a gzip bomb nor a
line without an end fills the memory, and turns every decompression or decoding failure (a truncated
or corrupt gzip stream) into a :class:`~pbf.errors.TraceFormatError` naming the file and the line.
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from ..errors import TraceFormatError

__all__ = ["open_trace", "text_lines", "head_text", "MAX_LINE_BYTES"]

#: the longest line a text trace may have (a sacct record is a few hundred bytes)
MAX_LINE_BYTES = 1 << 20
#: what can go wrong while decompressing (``gzip.BadGzipFile`` is an ``OSError``)
_GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


def open_trace(path: str | os.PathLike) -> BinaryIO:
    """Open a trace file for reading in binary, decompressing gzip (detected by its magic bytes)."""
    path = os.fspath(path)
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def _gzip_error(path: str, line: int, exc: BaseException) -> TraceFormatError:
    if isinstance(exc, EOFError):
        return TraceFormatError(path, line, None, "the end of the file inside compressed data",
                                f"a complete gzip file (it is truncated: the data stops in line {line})")
    return TraceFormatError(path, line, None, f"corrupt gzip data ({exc})", "a valid gzip stream")


def text_lines(path: str | os.PathLike, *, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of a text trace (plain or gzip), the line end (``\\n``,
    ``\\r\\n``) removed; bytes that are not UTF-8 are replaced (U+FFFD) and a leading byte-order mark
    dropped. :class:`TraceFormatError` for a truncated or corrupt gzip stream or a line longer than
    ``max_line`` bytes; ``OSError`` when the file cannot be opened."""
    path = os.fspath(path)
    number = 0
    with open_trace(path) as fh:
        while True:
            number += 1
            try:
                raw = fh.readline(max_line + 1)
            except _GZIP_ERRORS as exc:
                raise _gzip_error(path, number, exc) from None
            if not raw:
                return
            if len(raw) > max_line and not raw.endswith(b"\n"):
                raise TraceFormatError(path, number, None, raw[:60].decode("utf-8", "replace"),
                                       f"a line of at most {max_line:,} bytes")
            text = raw.decode("utf-8", "replace")
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield number, text.rstrip("\r\n")


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
