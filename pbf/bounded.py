"""Bounded numbers: the one parser every site file, flag and API argument goes through.

Site files (``slurm.conf``, sacct and ``sacctmgr`` dumps, sdiag outputs, failure files, cluster TOML) and
the command line hand pbf text; the compiled core takes 64-bit integers. Between the two every number is
checked here, so that none reaches C out of range (an ``OverflowError``), silently wraps (an over-commit)
or makes a loop spin for 2**63 steps:

* digits are ASCII digits (``str.isdigit`` accepts ``'²'``, which ``int`` refuses), at most
  :data:`MAX_DIGITS` of them (``int`` of 5,000 digits is slow and of 4,301 raises);
* floats are finite (no ``nan``, ``inf``, ``1e400``);
* each value lies in the range its reader names, and the message names that range.

The functions raise ``ValueError`` whose text is what was expected (``"a whole number from 1 to
1,048,576"``); each reader adds the file, the line and the key as the file spells them (:func:`where`).
"""
from __future__ import annotations

import math
import numbers

from .errors import ConfigError

__all__ = ["MAX_DIGITS", "INT64_MAX", "MAX_TIME", "MAX_SECONDS", "MAX_GENERATED_JOBS", "MAX_UNITS", "MAX_SLURM_NODES",
           "parse_whole", "parse_real",
           "check_int", "check_real", "expected_whole", "expected_real", "where"]

#: the most digits a whole number may have (20 digits already exceed 2**63)
MAX_DIGITS = 19
INT64_MAX = (1 << 63) - 1
#: the latest time pbf schedules (2**40 s, ~34,800 years): sums of a few times stay exact in int64
MAX_TIME = 1 << 40
#: the longest duration any setting may have (seconds): a timer, window or resolution of at most 2**40 s
MAX_SECONDS = MAX_TIME
#: the most jobs a generator makes in one trace (about 6 GB of columns; far beyond any log)
MAX_GENERATED_JOBS = 100_000_000
#: The largest cluster pbf schedules: 2**24 units (16,777,216 cores; the largest machines have under 11
#: million). Each bitmap is then 2 MB, so a profile of a few thousand slots already needs gigabytes.
#: (Here, not in :mod:`pbf.node`, which re-exports it: a replay without nodes does not load the node code.)
MAX_UNITS = 1 << 24
#: The most nodes Slurm takes in one cluster: ``MAX_SLURM_NODES`` (``slurm/slurm.h``, 65,536), past
#: which slurmctld refuses to create a node record (``src/common/node_conf.c``); a ``slurm.conf`` names
#: at most that many. (Re-exported by :mod:`pbf.node`.)
MAX_SLURM_NODES = 65_536


def expected_whole(lo: int, hi: int | None) -> str:
    """``"a whole number from LO to HI"`` (``"from LO up"`` without a top below 2**63)."""
    if hi is None or hi >= INT64_MAX:
        return f"a whole number from {lo:,} up"
    return f"a whole number from {lo:,} to {hi:,}"


def expected_real(lo: float, hi: float | None, *, lo_open: bool = False) -> str:
    """``"a number from LO to HI"`` (``lo_open``: ``"above LO"``)."""
    low = f"above {lo:g}" if lo_open else f"from {lo:g}"
    return f"a finite number {low}" + (f" to {hi:g}" if hi is not None else "")


def parse_whole(text: str, lo: int = 0, hi: int | None = INT64_MAX, *, expected: str | None = None) -> int:
    """``text`` as a whole number from ``lo`` to ``hi``: optional sign, ASCII digits only, at most
    :data:`MAX_DIGITS`; surrounding blanks ignored. ``ValueError(expected)`` otherwise."""
    hint = expected or expected_whole(lo, hi)
    if not isinstance(text, str):
        raise ValueError(hint)
    body = text.strip()
    digits = body[1:] if body[:1] in "+-" else body
    if not digits or len(digits) > MAX_DIGITS or not (digits.isascii() and digits.isdigit()):
        raise ValueError(hint)
    value = int(body)
    if value < lo or (hi is not None and value > hi):
        raise ValueError(hint)
    return value


def parse_real(text: str, lo: float = 0.0, hi: float | None = None, *, lo_open: bool = False,
               expected: str | None = None) -> float:
    """``text`` as a finite float in ``[lo, hi]`` (``lo_open``: ``(lo, hi]``); ASCII only, no ``_``.
    ``ValueError(expected)`` otherwise."""
    hint = expected or expected_real(lo, hi, lo_open=lo_open)
    if not isinstance(text, str):
        raise ValueError(hint)
    body = text.strip()
    if not body or len(body) > 64 or not body.isascii() or "_" in body:
        raise ValueError(hint)
    try:
        value = float(body)
    except ValueError:
        raise ValueError(hint) from None
    if not math.isfinite(value) or value < lo or (lo_open and value == lo) or (hi is not None and value > hi):
        raise ValueError(hint)
    return value


def check_int(name: str, value: object, lo: int, hi: int | None = INT64_MAX, *, allow_none: bool = False) -> None:
    """An API argument: ``value`` must be an int (numpy's too, never a bool) from ``lo`` to ``hi``;
    :class:`ConfigError` naming ``name`` and the range otherwise."""
    if value is None and allow_none:
        return
    if (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and lo <= int(value) and (hi is None or int(value) <= hi)):
        return
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise ConfigError(f"{name} must be an int from {lo:,}" + (f" to {hi:,}" if hi is not None else " up")
                      + (" or None" if allow_none else "") + f", got {shown}")


def check_real(name: str, value: object, lo: float, hi: float | None = None, *, lo_open: bool = False) -> None:
    """An API argument: a finite real number in range; :class:`ConfigError` naming ``name`` otherwise."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = math.isfinite(v) and v >= lo and not (lo_open and v == lo) and (hi is None or v <= hi)
    if not ok:
        raise ConfigError(f"{name} must be {expected_real(lo, hi, lo_open=lo_open)}, got {value!r}")


def where(path: str, line: int | None, key: str, value: str, expected: str) -> str:
    """``"FILE, line N: KEY='VALUE': expected ..."`` (long values cut), the form of every site-file error."""
    shown = value if len(value) <= 60 else value[:57] + "..."
    at = f"{path}, line {line}" if line is not None else f"{path}"
    return f"{at}: {key}={shown!r}: expected {expected}"
