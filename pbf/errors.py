"""The error hierarchy: every pbf error derives from :class:`PbfError` and the builtin it specialises."""
from __future__ import annotations

import os

__all__ = ["PbfError", "TraceFormatError", "ConfigError", "InternalError"]


class PbfError(Exception):
    """Base class of every error pbf raises on purpose."""


class ConfigError(PbfError, ValueError):
    """An argument or option has a value pbf cannot use; the message names both."""


class TraceFormatError(PbfError, ValueError):
    """A workload file is malformed. Carries the file, the 1-based line, the field and the value."""

    def __init__(self, path: str | os.PathLike, line: int | None, field: str | None, value: object, expected: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.value = value
        self.expected = expected
        where = f"{self.path}, line {line}" if line is not None else self.path
        what = f"field {field}" if field is not None else "record"
        shown = value if len(str(value)) <= 80 else str(value)[:77] + "..."
        super().__init__(f"{where}: {what}: got {shown!r}, expected {expected}")


class InternalError(PbfError, RuntimeError):
    """pbf broke one of its own invariants (a bug in pbf, not in the input); the message says which."""
