"""Opening trace files: plain or gzip, whatever the name says (SWF logs and sacct dumps alike)."""
from __future__ import annotations

import gzip
import os
from typing import BinaryIO

__all__ = ["open_trace"]


def open_trace(path: str | os.PathLike) -> BinaryIO:
    """Open a trace file for reading in binary, decompressing gzip (detected by its magic bytes)."""
    path = os.fspath(path)
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")
