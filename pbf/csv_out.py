"""Writing columns as CSV files, byte for byte as the csv module writes them, but compiled.

A replay of SDSC-SP2 writes 150,000 rows; the csv module took a quarter of the whole process for
them. Here every column becomes int64 values or a table of quoted byte strings (labels, and the
``str`` of other values, as the csv module writes them), and :mod:`pbf._csvout` formats
blocks of rows without the GIL, so that files written on several threads are formatted at once.
The texts of float columns (a pass's wall time) are made in compiled code too (their ``repr``).

Not a general CSV writer: the dialect is the csv module's default (``excel``: ``,`` between fields,
``"`` quoting only fields that need it, ``\\r\\n`` after each row), which is what the outputs use.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from ._csvout import float_texts, format_block

__all__ = ["write_csv"]

#: the csv module quotes a field holding any of these (QUOTE_MINIMAL, excel dialect)
_SPECIAL = (",", '"', "\r", "\n")
#: bytes a block of rows may take before it is written out
_BLOCK_BYTES = 4 << 20
_INT_WIDTH = 20


def _quote(text: str) -> str:
    if any(ch in text for ch in _SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


def _as_text(value) -> str:
    # what the csv module writes for a value: '' for None, str otherwise (a float's str is its repr)
    return "" if value is None else str(value)


def _table(strings: Sequence[str], quote: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(blob, offsets)`` of the strings, quoted where the csv module quotes them (``quote=False``:
    strings that never need it): string ``i`` is ``blob[offsets[i]:offsets[i+1]]``."""
    encoded = [(_quote(s) if quote else s).encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _column(values, labels: Sequence[str] | None):
    """``(kind, values, blob, offsets)`` of one column for :func:`pbf._csvout.format_block` (blob
    and offsets None for integers)."""
    col = np.asarray(values)
    if col.ndim != 1:
        raise ValueError(f"a column must be one value per row, got an array of shape {col.shape}")
    if labels is not None:
        blob, offs = _table(labels)
        if col.dtype.kind not in "iu" and len(col):
            raise ValueError(f"codes must be integers, got {col.dtype}")
        codes = col.astype(np.int64)
        if len(codes) and (codes.min() < 0 or codes.max() >= len(labels)):
            raise ValueError(f"a code outside 0..{len(labels) - 1}")
        return 1, np.ascontiguousarray(codes), blob, offs
    if col.dtype.kind in "iu" and (col.dtype.itemsize < 8 or col.dtype.kind == "i" or
                                   len(col) == 0 or col.max() <= np.iinfo(np.int64).max):
        return 0, np.ascontiguousarray(col, dtype=np.int64), None, None
    if col.dtype.kind == "f" and col.dtype.itemsize <= 8:
        # floats are mostly distinct: a table entry per row (their repr, made in compiled code), no
        # search for repeats. (A long double's str is numpy's, not a float's: it takes the general way.)
        blob, offs = float_texts(np.ascontiguousarray(col, dtype=np.float64))
        return 1, np.arange(len(col), dtype=np.int64), blob, offs
    # booleans, strings, objects: each distinct text once
    seen: dict[str, int] = {}
    index = np.fromiter((seen.setdefault(_as_text(v), len(seen)) for v in col.tolist()), dtype=np.int64,
                        count=len(col))
    blob, offs = _table(list(seen))
    return 1, index, blob, offs


def write_csv(path: str | os.PathLike, columns: Mapping[str, object],
              labels: Mapping[str, Sequence[str]] | None = None) -> None:
    """Write ``columns`` (name -> values, all of one length) to ``path`` as the csv module would:
    a header of the names, then one row per index. A column named in ``labels`` holds codes,
    written as ``labels[name][code]``. The file appears complete or not at all (written to
    ``path + ".part"`` and renamed)."""
    labels = labels or {}
    names = list(columns)
    lengths = {len(np.asarray(columns[n])) for n in names}
    if len(lengths) > 1:
        raise ValueError(f"{os.fspath(path)}: columns of different lengths {sorted(lengths)}")
    n_rows = lengths.pop() if lengths else 0
    # the header row as the csv module writes it (a lone empty name aside, below)
    header = (",".join(_quote(_as_text(n)) for n in names) + "\r\n").encode("utf-8")
    tmp = os.fspath(path) + ".part"
    if len(names) == 1:
        # a lone empty field is quoted ('""'): the one case the block formatter does not follow
        import csv
        col = np.asarray(columns[names[0]])
        texts = np.asarray(labels[names[0]], dtype=object)[col] if names[0] in labels else col
        _written_whole(tmp, path, lambda fh: csv.writer(fh).writerows([[names[0]]] + [[v] for v in texts.tolist()]),
                       text=True)
        return
    cols = [_column(columns[n], labels.get(n)) for n in names]
    kinds = [c[0] for c in cols]
    values = [c[1] for c in cols]
    blobs = [c[2] if c[2] is not None else np.zeros(0, np.uint8) for c in cols]
    offsets = [c[3] if c[3] is not None else np.zeros(1, np.int64) for c in cols]
    # a row's widest: each field at its widest, a separator each, and the row's end
    row_bound = 2 + sum((_INT_WIDTH if c[0] == 0 else int(np.diff(c[3]).max(initial=0))) + 1 for c in cols)
    rows_per_block = max(1, _BLOCK_BYTES // row_bound)
    buf = np.empty(min(n_rows, rows_per_block) * row_bound + 1, dtype=np.uint8)

    def rows(fh):
        fh.write(header)
        for first in range(0, n_rows, rows_per_block):
            last = min(n_rows, first + rows_per_block)
            n = format_block(kinds, values, blobs, offsets, first, last, buf)
            if n < 0:       # cannot happen: the buffer holds a block's bound
                raise RuntimeError(f"{os.fspath(path)}: rows {first}-{last} overran their bound")
            fh.write(memoryview(buf)[:n])
    _written_whole(tmp, path, rows, text=False)


def _written_whole(tmp, path, write, text):
    # write into tmp, then rename it to path; on any error remove tmp and raise
    try:
        with (open(tmp, "w", newline="", encoding="utf-8") if text else open(tmp, "wb")) as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(exc, OSError) and exc.errno is not None:   # (named by the file asked for, not the .part)
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
        raise
