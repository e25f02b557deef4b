"""One node of a cluster (:class:`Node`: cores, memory, GPUs, features) and Slurm's node-range syntax
(:func:`expand_hostlist`), shared by the clusters pbf builds (:mod:`pbf.cluster`) and the ``slurm.conf``
reader (:mod:`pbf.slurm_conf`).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

# (MAX_UNITS, MAX_SLURM_NODES: defined there, so that a replay without nodes need not load this module)
from .bounded import MAX_SLURM_NODES, MAX_UNITS
from .errors import ConfigError
from .gres import MAX_NODE_GRES, good_gres_name

__all__ = ["Node", "good_gpu_type", "expand_hostlist", "count_hostlist", "MAX_UNITS", "MAX_NODE_CORES",
           "MAX_NODE_MEMORY_MB",
           "MAX_NODE_GPUS", "MAX_NODES", "MAX_SLURM_NODES", "MAX_RANGE", "MAX_NAME_LENGTH"]


#: The largest node pbf takes (cores, MB of memory, GPUs): far above any machine built, low enough
#: that sums over a cluster stay exact in 64-bit integers.
MAX_NODE_CORES, MAX_NODE_MEMORY_MB, MAX_NODE_GPUS = 1 << 20, 1 << 40, 1 << 16

#: The most nodes the compiled core holds (``NodeCluster.set`` in ``ext/_nodes.pyx``): 1,048,575.
MAX_NODES = 0xFFFFF
#: The most names one range ``lo-hi`` of a host list may give: Slurm's ``MAX_RANGE``
#: (``src/common/hostlist.h``, = ``MAX_SLURM_NODES``): "anything larger will be assumed to be an error".
MAX_RANGE = 65_536
#: The longest node name pbf takes (a DNS name has at most 253 characters).
MAX_NAME_LENGTH = 255
#: The most characters the names of one host list may add up to (32 MiB): with the two limits above,
#: what keeps a short expression from expanding into gigabytes of names.
MAX_NAME_CHARS = 1 << 25


@dataclass(frozen=True)
class Node:
    """One node: ``name``, ``cores`` (its units), ``memory_mb`` (RealMemory in MB; 0: memory is not
    modelled on it), ``gpus``, ``features`` (Slurm's node features), ``klass`` (the group it belongs to,
    e.g. ``mole``; reports group by it) and ``gpu_type`` (its GPUs' type, e.g. ``a100``: a job asking
    GPUs of a type runs only on nodes of that type; "": untyped; ``a100,v100``: a node of several types,
    where a job asking one of them may use all of the node's GPUs, pbf planning one GPU count a node)
    and ``gres``: its other generic resources, ``(name, count)`` pairs (``(("nvme", 2),)``; a dict is
    taken; :mod:`pbf.gres`)."""
    name: str
    cores: int
    memory_mb: int = 0
    gpus: int = 0
    features: tuple = ()
    klass: str = ""
    gpu_type: str = ""
    gres: tuple = ()

    def __post_init__(self):
        for what, value, top in (("cores", self.cores, MAX_NODE_CORES),
                                 ("memory_mb", self.memory_mb, MAX_NODE_MEMORY_MB), ("gpus", self.gpus, MAX_NODE_GPUS)):
            low = 1 if what == "cores" else 0
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= top:
                raise ConfigError(f"node {self.name!r}: {what} must be an int from {low} to {top:,}, got {value!r}")
        if not isinstance(self.name, str) or not _good_name(self.name):
            raise ConfigError(f"node name must be a non-empty string of at most {MAX_NAME_LENGTH} printable "
                              f"characters without spaces, commas or brackets, got {self.name!r}")
        if not isinstance(self.features, tuple) or not all(isinstance(f, str) and f for f in self.features):
            raise ConfigError(f"node {self.name!r}: features must be a tuple of non-empty strings, "
                              f"got {self.features!r}")
        if not isinstance(self.gpu_type, str) or (self.gpu_type and not all(
                good_gpu_type(t) for t in self.gpu_type.split(","))):
            raise ConfigError(f"node {self.name!r}: gpu_type must be GPU type names (letters, digits, '_', '-', "
                              f"'.', at most {MAX_NAME_LENGTH} characters; several separated by commas), got "
                              f"{self.gpu_type!r}")
        pairs = tuple(self.gres.items()) if isinstance(self.gres, dict) else self.gres
        good = isinstance(pairs, tuple) and all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and good_gres_name(p[0])
            and isinstance(p[1], int) and not isinstance(p[1], bool) and 0 <= p[1] <= MAX_NODE_GRES for p in pairs)
        if not good or len({p[0] for p in pairs}) != len(pairs):
            raise ConfigError(f"node {self.name!r}: gres must be (name, count) pairs, each name once (letters, digits, "
                              f"'_', '-', '.', not gpu) and each count a whole number from 0 to {MAX_NODE_GRES:,}, "
                              f"got {self.gres!r}")
        object.__setattr__(self, "gres", tuple(sorted(p for p in pairs if p[1] > 0)))
        if self.gpu_type and not self.gpus:
            raise ConfigError(f"node {self.name!r}: gpu_type {self.gpu_type!r} given to a node with no GPUs")


def good_gpu_type(name: str) -> bool:
    """Whether ``name`` is a GPU type as Slurm's GRES types are written (``a100``, ``tesla_v100-32g``)."""
    return 0 < len(name) <= MAX_NAME_LENGTH and name.isascii() and all(c.isalnum() or c in "_-." for c in name)


def _good_name(name: str) -> bool:
    return (0 < len(name) <= MAX_NAME_LENGTH and name.isprintable()
            and not any(c in name for c in " ,[]"))


# ---- host lists: Slurm's node-range syntax, counted before it is expanded

_TOKEN = re.compile(r"\[([^\[\]]*)\]|[^\[\],]+|,|\[|\]")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
_CAP = 1 << 62


def _ranges(inner: str) -> list[tuple[int, int, int]]:
    """The ``(lo, hi, width)`` ranges of one bracket's text (``01-39,42``)."""
    out = []
    for r in inner.split(","):
        m = _RANGE.fullmatch(r.strip(" \t"))
        if not m or any(len(g) > 19 for g in m.groups() if g):
            shown = r if len(r) <= 40 else r[:37] + "..."
            raise ValueError(f"ranges such as 01-39 inside brackets (ASCII digits, at most 19), not {shown!r}")
        a, b = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(a), int(b)
        if hi < lo:
            raise ValueError(f"a range a-b with a <= b, not {r.strip()!r}")
        if hi - lo + 1 > MAX_RANGE:
            raise ValueError(f"a range of at most {MAX_RANGE:,} names (Slurm's MAX_RANGE), not {r.strip()!r}")
        out.append((lo, hi, len(a) if a.startswith("0") or len(a) == len(b) else 0))
    return out


def _parse(expr: str) -> list[list]:
    """The parts of a host list, each a list of literal strings and bracket groups (lists of ranges)."""
    if not isinstance(expr, str):
        raise ValueError("a string of node names")
    parts: list[list] = [[]]
    for m in _TOKEN.finditer(expr.strip()):
        tok = m.group(0)
        if tok == ",":
            parts.append([])
        elif tok in ("[", "]"):
            raise ValueError("balanced brackets (one level: n[1-4], not n[[1-4]] or n[1-4)")
        elif m.group(1) is not None:
            parts[-1].append(_ranges(m.group(1)))
        else:
            if any(c.isspace() for c in tok):
                raise ValueError("names without spaces")
            parts[-1].append(tok)
    if parts == [[]]:
        raise ValueError("one or more node names")
    if any(not p for p in parts):
        raise ValueError("names separated by single commas")
    return parts


def _group_size(group) -> int:
    return sum(hi - lo + 1 for lo, hi, _ in group)


def _count(parts) -> tuple[int, int, bool]:
    """(names, characters, exact): what a parsed host list expands into, computed without expanding it.
    The counts stop at 2**62 (multiplying on can be slow: 2**100000); ``exact`` is False then."""
    names = chars = 0
    exact = True
    for part in parts:
        n, longest = 1, 0
        for seg in part:
            if isinstance(seg, str):
                longest += len(seg)
            else:
                n *= _group_size(seg)
                longest += max(max(len(str(hi)), w) for _, hi, w in seg)
                if n > _CAP:
                    n, exact = _CAP, False
        names = min(names + n, _CAP)
        chars = min(chars + n * longest, _CAP)
    return names, chars, exact and names < _CAP


def count_hostlist(expr: str) -> int:
    """How many names :func:`expand_hostlist` gives for ``expr``, counted without expanding it (at most
    2**62). Raises ValueError saying what was expected."""
    return _count(_parse(expr))[0]


def expand_hostlist(expr: str, limit: int = MAX_NODES) -> list[str]:
    """Slurm's node-range syntax: ``"dwarf[01-03,07],elf1"`` → ``dwarf01 dwarf02 dwarf03 dwarf07 elf1``
    (zero padding kept; several bracket groups multiply out). At most ``limit`` names (counted, as a
    product of the groups, before any is made), each of at most :data:`MAX_NAME_LENGTH` characters.
    Raises ValueError saying what was expected."""
    parts = _parse(expr)
    names, chars, exact = _count(parts)
    if names > limit:
        raise ValueError(f"at most {limit:,} node names, not {names:,}{'' if exact else ' or more'}")
    if chars > MAX_NAME_CHARS:
        raise ValueError(f"names of at most {MAX_NAME_CHARS:,} characters in all")
    out: list[str] = []
    for part in parts:
        choices = []
        for seg in part:
            if isinstance(seg, str):
                choices.append((seg,))
            else:
                choices.append([f"{i:0{w}d}" for lo, hi, w in seg for i in range(lo, hi + 1)])
        out.extend("".join(p) for p in itertools.product(*choices))
    for name in out:
        if len(name) > MAX_NAME_LENGTH:
            shown = name if len(name) <= 40 else name[:37] + "..."
            raise ValueError(f"node names of at most {MAX_NAME_LENGTH} characters, not {shown!r}")
    return out
