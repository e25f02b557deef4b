"""One node of a cluster (:class:`Node`: cores, memory, GPUs, features) and Slurm's node-range syntax
(:func:`expand_hostlist`), shared by the clusters pbf builds (:mod:`pbf.cluster`) and the ``slurm.conf``
reader (:mod:`pbf.slurm_conf`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["Node", "expand_hostlist", "MAX_UNITS", "MAX_NODE_CORES", "MAX_NODE_MEMORY_MB", "MAX_NODE_GPUS"]

#: The largest cluster pbf schedules: 2**24 units (16,777,216 cores; the largest machines have under 11
#: million). Each bitmap is then 2 MB, so a profile of a few thousand slots already needs gigabytes.
MAX_UNITS = 1 << 24

#: The largest node pbf takes (cores, MB of memory, GPUs): far above any machine built, low enough
#: that sums over a cluster stay exact in 64-bit integers.
MAX_NODE_CORES, MAX_NODE_MEMORY_MB, MAX_NODE_GPUS = 1 << 20, 1 << 40, 1 << 16


@dataclass(frozen=True)
class Node:
    """One node: ``name``, ``cores`` (its units), ``memory_mb`` (RealMemory in MB; 0: memory is not
    modelled on it), ``gpus``, ``features`` (Slurm's node features) and ``klass`` (the group it belongs to,
    e.g. ``mole``; reports group by it)."""
    name: str
    cores: int
    memory_mb: int = 0
    gpus: int = 0
    features: tuple = ()
    klass: str = ""

    def __post_init__(self):
        for what, value, top in (("cores", self.cores, MAX_NODE_CORES),
                                 ("memory_mb", self.memory_mb, MAX_NODE_MEMORY_MB), ("gpus", self.gpus, MAX_NODE_GPUS)):
            low = 1 if what == "cores" else 0
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= top:
                raise ConfigError(f"node {self.name!r}: {what} must be an int from {low} to {top:,}, got {value!r}")
        if not isinstance(self.name, str) or not self.name or any(c in self.name for c in " ,[]\t\n"):
            raise ConfigError(f"node name must be a non-empty string without spaces, commas or brackets, "
                              f"got {self.name!r}")
        if not isinstance(self.features, tuple) or not all(isinstance(f, str) and f for f in self.features):
            raise ConfigError(f"node {self.name!r}: features must be a tuple of non-empty strings, "
                              f"got {self.features!r}")


def expand_hostlist(expr: str) -> list[str]:
    """Slurm's node-range syntax: ``"dwarf[01-03,07],elf1"`` → ``dwarf01 dwarf02 dwarf03 dwarf07 elf1``
    (zero padding kept; several bracket groups multiply out). Raises ValueError saying what was expected."""
    out: list[str] = []
    for part in _split_top(expr.strip()):
        out.extend(_expand_one(part))
    if not out:
        raise ValueError("one or more node names")
    return out


def _split_top(expr):
    parts, depth, cur = [], 0, ""
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError("balanced brackets")
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise ValueError("balanced brackets")
    parts.append(cur.strip())
    if any(not p for p in parts):
        raise ValueError("names separated by single commas")
    return parts


def _expand_one(part):
    m = re.match(r"([^\[\]]*)\[([^\]]*)\](.*)$", part)
    if not m:
        if re.search(r"[\s\[\]]", part):
            raise ValueError("names without spaces")
        return [part]
    prefix, ranges, rest = m.groups()
    tails = _expand_one(rest) if rest else [""]
    out = []
    for r in ranges.split(","):
        rm = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", r)
        if not rm:
            raise ValueError(f"ranges such as 01-39 inside brackets, not {r!r}")
        a, b = rm.group(1), rm.group(2) or rm.group(1)
        if int(b) < int(a):
            raise ValueError(f"a range a-b with a <= b, not {r!r}")
        if int(b) - int(a) > MAX_UNITS:
            raise ValueError(f"a range of at most {MAX_UNITS:,} names, not {r!r}")
        width = len(a) if a.startswith("0") or len(a) == len(b) else 0
        for i in range(int(a), int(b) + 1):
            out.extend(f"{prefix}{i:0{width}d}{t}" for t in tails)
    return out
