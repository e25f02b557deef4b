"""The job table: a struct of numpy arrays, one column per SWF field, plus the trace's header.

A table read from a file holds its columns as ``array.array`` buffers until they are first read as
numpy arrays (:attr:`JobTable.columns`, ``table.submit``): a plain replay uses the buffers
(:meth:`JobTable.buffer`) and never imports numpy; a reader of the columns gets numpy arrays over the
same memory, without a copy."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..bounded import MAX_UNITS

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np

    from .cleaning import CleaningReport

__all__ = ["SWF_FIELDS", "FLOAT_FIELDS", "SwfHeader", "JobTable", "user_names"]

#: The 18 SWF fields in file order, under the names the job table uses.
SWF_FIELDS = ("job_id", "submit", "wait", "run", "alloc_procs", "avg_cpu", "used_mem", "req_procs",
              "req_time", "req_mem", "status", "user", "group", "executable", "queue", "partition",
              "prev_job", "think_time")
#: Fields the SWF allows to be fractional; kept as float64. All others are int64 (truncated toward 0).
FLOAT_FIELDS = frozenset({"avg_cpu", "used_mem", "req_mem"})

#: Header keys of SWF version 2.2 that may appear more than once.
_REPEATABLE = frozenset({"Queue", "Partition", "Note"})
_KNOWN_KEYS = frozenset({
    "Version", "Computer", "Installation", "Acknowledge", "Information", "Conversion", "MaxJobs",
    "MaxRecords", "Preemption", "UnixStartTime", "TimeZone", "TimeZoneString", "StartTime", "EndTime",
    "MaxNodes", "MaxProcs", "MaxRuntime", "MaxMemory", "AllowOveruse", "MaxQueues", "Queues", "Queue",
    "MaxPartitions", "Partitions", "Partition", "Note", "Copyright"})
#: Header keys whose value is a number (the archive may write a note after it).
NUMERIC_KEYS = ("Version", "MaxJobs", "MaxRecords", "UnixStartTime", "TimeZone", "MaxNodes", "MaxProcs",
                "MaxRuntime", "MaxMemory", "MaxQueues", "MaxPartitions")

# The archive writes a header number, then often a note: "338 (batch partition; 512 total)",
# "184  ( 6,  171,   7)", "-28800 (PST)". The number ends at white space or at an opening bracket;
# "338abc", "2^63" or "0x10" have no leading number.
_LEADING_NUMBER = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
                             r"(?:\s+|(?=[(\[{])|$)(.*)$", re.S)


def split_number(value: object) -> tuple[str, str] | None:
    """``(number text, note)`` of a header value that starts with a number (the note is the rest,
    stripped, '' when none), or None when it does not start with one."""
    m = _LEADING_NUMBER.match(str(value))
    if m is None:
        return None
    return m.group(1), m.group(2).strip()


@dataclass
class SwfHeader:
    """The header comments of an SWF file, kept verbatim (``lines``) and by key (``fields``).

    Lines of the form ``; Key: value`` with a key of the SWF 2.2 header go to ``fields`` (repeatable
    keys such as ``Queue`` and ``Note`` to lists); every comment line, including free text and
    continuation lines, stays in ``lines`` so that writing the header back loses nothing.
    """
    lines: list = field(default_factory=list)
    fields: dict = field(default_factory=dict)

    def add_line(self, text: str) -> None:
        """Record one comment line (without its leading ';')."""
        self.lines.append(text)
        key, sep, value = text.strip().partition(":")
        key = key.strip()
        if sep and key in _KNOWN_KEYS:
            value = value.strip()
            if key in _REPEATABLE:
                self.fields.setdefault(key, []).append(value)
            else:
                self.fields.setdefault(key, value)

    def set(self, key: str, value: object) -> None:
        """Set (or replace) a ``; Key: value`` line."""
        text = f" {key}: {value}"
        for i, line in enumerate(self.lines):
            if line.strip().partition(":")[0].strip() == key:
                self.lines[i] = text
                break
        else:
            self.lines.append(text)
        self.fields[key] = str(value) if key not in _REPEATABLE else [str(value)]

    def size_error(self, key: str) -> str | None:
        """For a cluster-size key (MaxProcs, MaxNodes) present in the header: what is wrong with its
        value (a message of what was expected), or None when it is a whole number from 1 to
        :data:`pbf.cluster.MAX_UNITS`."""
        parts = split_number(self.fields.get(key, ""))
        value = parts[0] if parts else ""
        if value.isdigit() and value.isascii() and 1 <= int(value) <= MAX_UNITS:
            return None
        return (f"a whole number of units from 1 to {MAX_UNITS:,}, optionally followed by a note "
                "(e.g. '338 (batch partition)')")

    def number(self, key: str) -> int | None:
        """The leading number of the header value of ``key`` as an int (a note after it is ignored;
        see :meth:`notes`), or None when absent or not a number."""
        if key in _REPEATABLE:
            return None
        parts = split_number(self.fields.get(key, ""))
        if parts is None:
            return None
        try:
            number = float(parts[0])
        except ValueError:
            return None
        # (a header may say anything: "inf", "1e400", "nan" are no numbers of seconds)
        return int(number) if math.isfinite(number) and abs(number) < 2 ** 62 else None

    def notes(self) -> dict[str, str]:
        """The notes written after header numbers, by key: ``{"MaxNodes": "(batch partition; 512
        total)"}``. They are kept for the reader and never used as numbers."""
        out = {}
        for key, value in self.fields.items():
            if key not in NUMERIC_KEYS:
                continue
            parts = split_number(value)
            if parts and parts[1]:
                out[key] = parts[1]
        return out

    def size_info(self) -> dict:
        """Where the cluster size comes from: ``{"units", "from", "max_procs", "max_nodes", "notes"}``
        (``from`` is "MaxProcs", "MaxNodes" or None; ``notes`` holds the notes of those two keys)."""
        procs, nodes = self.max_procs, self.max_nodes
        source = "MaxProcs" if procs and procs > 0 else "MaxNodes" if nodes and nodes > 0 else None
        notes = {k: v for k, v in self.notes().items() if k in ("MaxProcs", "MaxNodes")}
        return {"units": self.cluster_units(), "from": source, "max_procs": procs, "max_nodes": nodes,
                "notes": notes}

    @property
    def max_procs(self) -> int | None:
        """The header's ``MaxProcs`` (None when absent or not a number)."""
        return self.number("MaxProcs")

    @property
    def max_nodes(self) -> int | None:
        """The header's ``MaxNodes`` (None when absent or not a number)."""
        return self.number("MaxNodes")

    @property
    def unix_start_time(self) -> int | None:
        """The header's ``UnixStartTime``, seconds since the epoch (None when absent)."""
        return self.number("UnixStartTime")

    @property
    def max_runtime(self) -> int | None:
        """The header's ``MaxRuntime``, seconds (None when absent)."""
        return self.number("MaxRuntime")

    def cluster_units(self) -> int | None:
        """Cluster size implied by the header: MaxProcs, else MaxNodes, else None."""
        for value in (self.max_procs, self.max_nodes):
            if value is not None and value > 0:
                return value
        return None


class JobTable:
    """Jobs as columns: ``table.submit``, ``table.run``, ... (see :data:`SWF_FIELDS`), all the same length.

    ``units`` is the number of units a job asks the scheduler for (set by cleaning; see
    :class:`pbf.workload.Cleaning`). ``line`` holds the 1-based source line of each job when the table
    was read from a file. ``header`` is the :class:`SwfHeader`; ``report`` the cleaning report.
    """

    def __init__(self, columns: dict, header: SwfHeader | None = None, source: str | None = None,
                 report: CleaningReport | None = None):
        n = None
        for name in SWF_FIELDS:
            if name not in columns:
                raise KeyError(f"job table needs column {name!r}")
        for name, col in columns.items():
            if n is None:
                n = len(col)
            elif len(col) != n:
                raise ValueError(f"column {name!r} has {len(col)} rows, expected {n}")
        import numpy as np
        self.columns = {}
        for name, col in columns.items():
            dtype = np.float64 if name in FLOAT_FIELDS else np.int64
            self.columns[name] = np.ascontiguousarray(col, dtype=dtype)
        if "units" not in self.columns:
            self.columns["units"] = np.maximum(self.columns["req_procs"], self.columns["alloc_procs"])
        self.header = header if header is not None else SwfHeader()
        self.source = source
        self.report = report

    @classmethod
    def _of_buffers(cls, buffers: dict, header: SwfHeader | None = None, source: str | None = None,
                    report: CleaningReport | None = None) -> JobTable:
        """A table over ``buffers`` (``array.array`` or memoryview columns of float64 for
        :data:`FLOAT_FIELDS`, int64 else; every SWF field and ``units``): numpy arrays over them are made
        when the columns are first read (:attr:`columns`)."""
        table = cls.__new__(cls)
        table._buffers = buffers
        table.header = header if header is not None else SwfHeader()
        table.source = source
        table.report = report
        return table

    def buffer(self, name: str) -> object:
        """Column ``name`` as a buffer of int64 or float64 (a numpy array, or the buffer a reader
        filled while the columns have not been read as numpy arrays): for compiled code."""
        columns = self.__dict__.get("columns")
        return columns[name] if columns is not None else self.__dict__["_buffers"][name]

    def __getattr__(self, name):
        # (only what is not set on the table comes here: a column, or ``columns`` before it is made)
        d = self.__dict__
        if name.startswith("__"):
            raise AttributeError(name)
        if "columns" not in d:
            buffers = d.get("_buffers")
            if buffers is None:
                raise AttributeError(name)
            import numpy as np
            # numpy arrays over the reader's buffers (no copy), the table's columns from now on
            d["columns"] = {k: np.frombuffer(v, dtype=np.float64 if k in FLOAT_FIELDS else np.int64)
                            for k, v in buffers.items()}
            del d["_buffers"]
            if name == "columns":
                return d["columns"]
        try:
            return d["columns"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __len__(self) -> int:
        return len(self.buffer("job_id"))

    def __getstate__(self) -> dict:
        # (a reader's columns may be memoryviews of its blocks, which do not pickle: their values then)
        state = dict(self.__dict__)
        if "_buffers" in state:
            state["_buffers"] = {k: _owned(v) for k, v in state["_buffers"].items()}
        return state

    def __repr__(self):
        return f"JobTable({len(self)} jobs, source={self.source!r})"

    def take(self, index: np.ndarray) -> JobTable:
        """A new table with the rows selected by a boolean mask or an index array."""
        return JobTable({k: v[index] for k, v in self.columns.items()}, self.header, self.source,
                        self.report)

    @classmethod
    def from_arrays(cls, header: SwfHeader | None = None, **arrays: np.ndarray) -> JobTable:
        """Build a table from some columns; missing SWF fields are filled with -1 (SWF's "missing")."""
        import numpy as np
        n = len(next(iter(arrays.values())))
        cols = {name: np.full(n, -1, dtype=np.float64 if name in FLOAT_FIELDS else np.int64)
                for name in SWF_FIELDS}
        cols.update(arrays)
        return cls(cols, header)

    @classmethod
    def concat(cls, tables: Iterable[JobTable], header: SwfHeader | None = None) -> JobTable:
        """Rows of several tables (same columns) one after another."""
        import numpy as np
        tables = list(tables)
        if not tables:
            return cls.from_arrays(header, job_id=np.empty(0, np.int64))
        names = tables[0].columns.keys()
        return cls({k: np.concatenate([t.columns[k] for t in tables]) for k in names},
                   header if header is not None else tables[0].header)


def _owned(column: object) -> object:
    """``column``, or an ``array.array`` of its values when it is a memoryview (of a reader's block)."""
    if not isinstance(column, memoryview):
        return column
    import array
    out = array.array(column.format)
    out.frombytes(column.cast("B"))
    return out


def user_names(table: JobTable) -> dict:
    """``{user number: name}`` from the header's ``; User: NUMBER NAME`` lines (pbf writes them when it
    reads a sacct dump, whose users it numbers from 1); empty when there are none, and a user
    without a line goes by its number."""
    out = {}
    for line in table.header.lines:
        key, sep, value = line.strip().partition(":")
        if sep and key.strip() == "User":
            number, _, name = value.strip().partition(" ")
            if number.lstrip("-").isdigit() and name.strip():
                out[int(number)] = name.strip()
    return out
