"""Streaming SWF reader and writer (all 18 fields and the header; gzip read and written transparently).

Records are tokenized by compiled code into blocks of rows (``array.array`` buffers) and cleaned into
columns by compiled code (:mod:`pbf._table`), never into per-job Python objects: reading a log imports
no numpy (the table shows its columns as numpy arrays when they are read).
Every malformed input raises :class:`~pbf.errors.TraceFormatError`
naming the file, the line, the field and the value, unless ``skip_bad_lines`` asks to skip (and count)
malformed records.
"""
from __future__ import annotations

import os
import zlib
from collections.abc import Iterator

from .. import _swf, _table
from ..errors import TraceFormatError
from .cleaning import Cleaning, CleaningReport, clean
from .files import head_text, open_trace
from .jobs import FLOAT_FIELDS, SWF_FIELDS, JobTable, SwfHeader

#: header keys that give the cluster's size
SIZE_KEYS = ("MaxProcs", "MaxNodes")

__all__ = ["SwfReader", "read_swf", "write_swf", "open_trace"]

_CHUNK_BYTES = 4 << 20
#: bytes of a plain file read at a time (below the allocator's threshold for fresh memory, as
#: _ONE_THREAD_BYTES's text: a fresh process reads SDSC-SP2 in 17 ms against 20 with 4 MiB pieces)
_PLAIN_BYTES = 64 << 10
#: compressed bytes of a gzip file inflated at a time (by the helper thread; on one thread at most
#: _ONE_THREAD_BYTES: their text, about 80 KiB, stays below the allocator's threshold for fresh
#: memory, so each piece reuses the last one's instead of costing page faults)
_INFLATE_BYTES = 128 << 10
_ONE_THREAD_BYTES = 16 << 10
_SHOW_BAD = 5
#: which of the 18 fields are fractional (float64 columns); the others are int64
_IS_FLOAT = bytes(name in FLOAT_FIELDS for name in SWF_FIELDS)

_parse_columns, _TOO_BIG = _swf.parse_columns, _swf.TOO_BIG


def _field_name(i):
    return f"{i + 1} ({SWF_FIELDS[i]})"


class _Truncated(Exception):
    """The gzip stream ended before its end marker."""


def _chunks(path):
    """The file's text in chunks, gzip (any number of members) decompressed on the way, so that a
    truncated or corrupt stream is noticed after everything before it was handed out."""
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
        fh.seek(0)
        if not gzipped:
            size = min(_CHUNK_BYTES, _PLAIN_BYTES)
            raw = fh.read(size)
            while raw:
                yield raw
                raw = fh.read(size)
            return
        size = min(_CHUNK_BYTES, _INFLATE_BYTES)
        if os.fstat(fh.fileno()).st_size > 2 * size and _cores() > 1:
            yield from _inflated_aside(fh, size)
        else:
            yield from _inflated(fh, min(size, _ONE_THREAD_BYTES))


def _cores() -> float:
    """The cores free for the reading (more than one: a helper thread inflates): those the process may
    run on less the other work of the last minute (the load average). On a busy host the hand-off
    between the two threads costs more than the inflating they share."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):       # (not every system has it)
        cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        busy = 0.0
    return cores - busy


def _inflated(fh, size):
    """The decompressed text of the gzip file ``fh``, ``size`` compressed bytes at a time."""
    d = zlib.decompressobj(wbits=31)
    raw = fh.read(size)
    while raw:
        out = d.decompress(raw)
        while d.eof and d.unused_data:         # the next gzip member
            rest = d.unused_data
            d = zlib.decompressobj(wbits=31)
            out += d.decompress(rest)
        if out:
            yield out
        raw = fh.read(size)
    if not d.eof:
        raise _Truncated()


def _inflated_aside(fh, size):
    """:func:`_inflated`, run on a helper thread a few pieces ahead of the reader: zlib lets the GIL go
    while it inflates and the tokenizer while it parses, so that two cores share the reading. What
    goes wrong (a truncated or corrupt stream, a read error) is raised here, in its place in the text."""
    import queue
    import threading
    pieces = queue.Queue(maxsize=4)
    stop = threading.Event()

    def inflate():
        try:
            for out in _inflated(fh, size):
                pieces.put(out)
                if stop.is_set():
                    return
            pieces.put(None)
        except BaseException as exc:        # handed to the reader, which raises it
            pieces.put(exc)

    helper = threading.Thread(target=inflate, name="pbf-swf-inflate", daemon=True)
    helper.start()
    try:
        while True:
            item = pieces.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while helper.is_alive():            # (a piece it is putting is taken, so that it sees the stop)
            try:
                pieces.get(timeout=0.01)
            except queue.Empty:
                pass
        helper.join()


class SwfReader:
    """Iterate over an SWF file in blocks of at most ``block_rows`` raw records (:class:`JobTable`).

    ``header`` fills as header lines are met (they come first in every archive log). With
    ``skip_bad_lines`` malformed records are skipped and counted in ``bad_lines`` (the first few line
    numbers kept in ``first_bad_lines``); otherwise the first one raises :class:`TraceFormatError`.
    Submit times must be >= 0 or -1 (missing); whether they must also be non-decreasing is the caller's choice
    (``require_sorted``).
    """

    def __init__(self, path: str | os.PathLike, *, block_rows: int = 65536, skip_bad_lines: bool = False,
                 require_sorted: bool = True):
        self.path = os.fspath(path)
        self.block_rows = block_rows
        self.skip_bad_lines = skip_bad_lines
        self.require_sorted = require_sorted
        self.header = SwfHeader()
        self.bad_lines = 0
        self.first_bad_lines = []
        self.records = 0
        self.lines = 0
        self._last_submit = None
        self._last_submit_line = None

    def _bad(self, line, field, value, expected):
        if not self.skip_bad_lines:
            raise TraceFormatError(self.path, line, field, value, expected)
        self.bad_lines += 1
        if len(self.first_bad_lines) < _SHOW_BAD:
            self.first_bad_lines.append(line)

    def _header_line(self, text, line):
        # the cluster size comes from the header: a value that is not a sane unit count is an error
        self.header.add_line(text)
        key = text.strip().partition(":")[0].strip()
        if key in SIZE_KEYS and key in self.header.fields:
            expected = self.header.size_error(key)
            if expected:
                value = self.header.fields.pop(key)
                self._bad(line, f"{key} (header)", value, expected)

    def __iter__(self) -> Iterator[JobTable]:
        import numpy as np
        for cols, row_line, n in self._scan():
            # (a block handed out keeps its buffers: its columns are numpy views of them)
            yield self._block(np.asarray(cols), np.frombuffer(row_line, dtype=np.int64), n)

    def _scan(self) -> Iterator[tuple]:
        """The raw blocks ``(cols, row_line, n)``: 18 rows of int64 (the fractional fields hold float64
        bits) of ``block_rows`` columns, a 2-D memoryview over an ``array.array``, and the line of each
        of the first ``n`` records; each block is checked (submit order) and counted as it is handed
        out, and the next one gets new buffers."""
        cols, row_line = _new_block(self.block_rows)
        nrows = 0
        line = 1
        tail = b""
        eof = False
        chunks = _chunks(self.path)
        try:
            while not eof:
                try:
                    chunk = next(chunks, b"")
                except _Truncated:
                    raise TraceFormatError(self.path, line, None, "the end of the file inside compressed data",
                                           f"a complete gzip file (it is truncated: the data stops in line {line})"
                                           ) from None
                except zlib.error as exc:
                    raise TraceFormatError(self.path, line, None, f"corrupt gzip data ({exc})",
                                           "a valid gzip stream") from None
                eof = not chunk
                data = tail + chunk
                pos = 0
                while True:
                    status, pos, got, line, ef, ea, eb, ev = _parse_columns(
                        data, pos, eof, cols, _IS_FLOAT, row_line, nrows, line)
                    nrows += got
                    if status == _swf.NEED_DATA:
                        break
                    if status == _swf.FULL:
                        yield self._raw_block(cols, row_line, nrows)
                        cols, row_line = _new_block(self.block_rows)
                        nrows = 0
                        continue
                    eol = data.find(b"\n", pos)
                    eol = len(data) if eol < 0 else eol
                    text = data[pos:eol].decode("utf-8", "replace").rstrip("\r")
                    if status == _swf.COMMENT:
                        self._header_line(text.lstrip()[1:].rstrip(), line)
                    elif status == _swf.FIELD_COUNT:
                        self._bad(line, None, text.strip(), f"18 whitespace-separated fields, found {ef}")
                    elif status == _swf.NOT_NUMBER:
                        token = data[ea:eb].decode("utf-8", "replace")
                        self._bad(line, _field_name(ef), token, "a decimal number")
                    elif status == _TOO_BIG:
                        self._bad(line, _field_name(ef), _fmt(ev), "a number below 2**62")
                    else:                       # BAD_SUBMIT (-1 is SWF's "missing": cleaning drops those)
                        self._bad(line, _field_name(ef), _fmt(ev), "a submit time >= 0 (or -1: missing)")
                    pos = eol + 1
                    line += 1
                tail = data[pos:]
        except TraceFormatError as exc:
            if "gzip" not in exc.expected:
                self._corrupt_after(chunks, exc.line)
            raise
        finally:
            chunks.close()       # (the helper thread inflating a gzip file stops)
        self.lines = line - 1
        if nrows:
            yield self._raw_block(cols, row_line, nrows)

    def _raw_block(self, cols, row_line, n):
        if self.require_sorted and n:
            self._check_sorted(cols, row_line, n)
        self.records += n
        return cols, row_line, n

    def _corrupt_after(self, chunks, line):
        # a corrupt gzip stream may inflate to text that is not SWF before zlib notices (at the latest
        # at the member's checksum): a bad record is reported as the corruption it comes from when
        # the rest of the stream does not inflate
        with open(self.path, "rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                return
        try:
            for _ in chunks:
                pass
        except _Truncated:
            pass
        except zlib.error as err:
            raise TraceFormatError(self.path, line, None, f"corrupt gzip data ({err})",
                                   "a valid gzip stream (what it inflates to is not SWF from this line on)"
                                   ) from None

    def _block(self, cols, row_line, n):
        import numpy as np
        lines = row_line[:n]
        columns = {name: (cols[i, :n].view(np.float64) if _IS_FLOAT[i] else cols[i, :n])
                   for i, name in enumerate(SWF_FIELDS)}
        columns["line"] = lines
        return JobTable(columns, self.header, self.path)

    def _check_sorted(self, cols, lines, n):
        i, last, at = _table.check_sorted(cols, n, self._last_submit is not None, self._last_submit or 0)
        if i >= 0:
            before = self._last_submit_line if at < 0 else int(lines[at])
            raise TraceFormatError(self.path, int(lines[i]), _field_name(1), str(cols[1, i]),
                                   f"a submit time >= {last} (line {before}); "
                                   "pass sort=True (--sort) to sort the jobs by submit time")
        if at >= 0:
            self._last_submit = last
            self._last_submit_line = int(lines[at])


def _new_block(rows):
    """A reader's block: 18 rows of ``rows`` int64 (a 2-D memoryview over an ``array.array``), and the
    line of each record."""
    cols = memoryview(_table.int64_buffer(18 * rows)).cast("B").cast("q", (18, rows))
    return cols, _table.int64_buffer(rows)


def _fmt(v):
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _may_be_sacct(path: str | os.PathLike) -> bool:
    """Whether the file's first line that is not blank holds a ``|``, as a sacct dump's header line does
    (:func:`pbf.workload.sacct.is_sacct` then says whether it is one): an SWF log is read without
    loading the sacct reader."""
    text = head_text(path)
    line = next((line for line in (text or "").split("\n") if line.strip()), "")
    return "|" in line


def _runtime_rule(drop) -> int:
    """``Cleaning.drop_nonpositive_runtime`` as clean() reads it, for the compiled cleaning: 0 drops none
    (False), 1 a run <= 0 (None, a true value), 2 a run < 0 (another false value: 0, numpy's False)."""
    return 0 if drop is False else 1 if drop is None or drop else 2


def read_swf(path: str | os.PathLike, cleaning: Cleaning = Cleaning(), *, skip_bad_lines: bool = False,
             sort: bool = False) -> JobTable:
    """Read a whole SWF file (plain or gzip) into a cleaned :class:`JobTable`. A Slurm accounting
    dump (``sacct --parsable2``, detected by its header line) is read by :mod:`pbf.workload.sacct`.

    ``cleaning``: a :class:`Cleaning` (default: the PWA/pyss convention), or None for no rule at all.
    ``sort``: sort the jobs by submit time (stable) instead of rejecting a file whose submit times go
    backwards. The table's ``report`` (:class:`CleaningReport`) tells what each rule touched.
    """
    if _may_be_sacct(path):
        from .sacct import is_sacct, read_sacct
        if is_sacct(path):
            # a Slurm accounting dump (sacct --parsable2) reads wherever an SWF file does
            table = read_sacct(path)
            report = CleaningReport(records_read=len(table))
            table, report = clean(table, cleaning if cleaning is not None else Cleaning.none(), report)
            return table
    reader = SwfReader(path, skip_bad_lines=skip_bad_lines, require_sorted=not sort)
    cleaning = cleaning if cleaning is not None else Cleaning.none()
    if sort:
        return _read_sorted(reader, cleaning)
    blocks = list(reader._scan())
    report = CleaningReport(records_read=reader.records + reader.bad_lines, bad_lines_skipped=reader.bad_lines,
                            first_bad_lines=tuple(reader.first_bad_lines))
    # the cleaning rules of clean(), compiled, over the reader's blocks (its own: the kept rows are moved
    # to the front of the first one where they fit, as clean() moves a reader's rows in place)
    size = cleaning.cluster_units or reader.header.cluster_units()
    columns, counts = _table.clean_blocks(
        blocks, list(SWF_FIELDS), _IS_FLOAT, ("max", "requested", "allocated").index(cleaning.units_from),
        cleaning.drop_missing_submit, _runtime_rule(cleaning.drop_nonpositive_runtime), cleaning.drop_nonpositive_units,
        {None: 2, True: 1, False: 0}[cleaning.fill_missing_request], cleaning.clip_runtime_to_request,
        -1 if size is None else size, cleaning.oversize == "drop", in_place=True)
    del blocks
    for key, value in counts.items():
        setattr(report, key, value)
    report.cluster_units = size
    table = JobTable._of_buffers(columns, reader.header, reader.path, report)
    report.jobs = len(table)
    return table


def _read_sorted(reader: SwfReader, cleaning: Cleaning) -> JobTable:
    """:func:`read_swf` with ``sort``: the jobs sorted by submit time, then cleaned (numpy)."""
    import numpy as np
    blocks = list(reader)
    # (a log of one block, as most are, is taken as it is: no copy)
    table = blocks[0] if len(blocks) == 1 else JobTable.concat(blocks, header=reader.header)
    table.header = reader.header
    table.source = reader.path
    report = CleaningReport(records_read=reader.records + reader.bad_lines,
                            bad_lines_skipped=reader.bad_lines,
                            first_bad_lines=tuple(reader.first_bad_lines))
    if len(table):
        # stable, and records with a missing submit time (-1) come first, as they do in no order
        order = np.argsort(table.submit, kind="stable")
        report.sorted_by_submit = bool((order != np.arange(len(order))).any())
        table = table.take(order)
    # (the blocks are this reader's alone: cleaning keeps their rows in place)
    table, report = clean(table, cleaning, report, _reuse=True)
    return table


def write_swf(table: JobTable, path: str | os.PathLike, header: SwfHeader | None = None) -> None:
    """Write ``table`` as SWF (gzip when ``path`` ends in .gz, with a fixed gzip timestamp so the same
    table always gives the same bytes). The header is ``header`` or the table's own."""
    import numpy as np
    header = header if header is not None else table.header
    cols = []
    for name in SWF_FIELDS:
        col = table.columns[name]
        if name in FLOAT_FIELDS:
            integral = np.isfinite(col) & (col == np.round(col))
            if integral.all():
                col = col.astype(np.int64)
            else:
                col = [int(v) if ok else repr(float(v)) for v, ok in zip(col.tolist(), integral.tolist())]
                cols.append(col)
                continue
        cols.append(col.tolist())
    out = [";" + line for line in header.lines]
    out.extend(" ".join(map(str, row)) for row in zip(*cols))
    data = ("\n".join(out) + "\n").encode()
    # write beside the target and rename: an interrupted write never leaves a half-written trace
    import gzip
    path = os.fspath(path)
    tmp = path + ".part"
    try:
        with open(tmp, "wb") as raw:
            if path.endswith(".gz"):
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                    gz.write(data)
            else:
                raw.write(data)
        os.replace(tmp, path)
    except OSError as exc:          # (named by the file asked for, not the .part beside it)
        raise OSError(exc.errno, exc.strerror, path) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
