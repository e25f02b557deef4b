"""Generic resources (Slurm's GRES other than GPUs: ``nvme``, ``mps``, ``shard``, a site's own names) as
columns of the node model.

A node's counts and a job's per-node ask are rows of one vector: GPUs first, then every other kind the
cluster's nodes have, in name order. The compiled planners carry the vector as one 64-bit word of lanes
(``ext/counts.pxd``): with R kinds in all (GPUs counted) a lane is ``64 // R`` bits, of which the top
one is a guard, so a node's count of any kind is at most ``2 ** (64 // R - 1) - 1`` (R = 2: about two
billion; R = 8: 127). Adding a kind is data -- a name in a ``Gres=`` list -- not code.

A kind is planned only where some node of the cluster has it. Where none has a kind a job asks, the
ask is read and reported, not planned, when the cluster has no generic resources at all (as licenses);
on a cluster with some, the job is rejected ("asks GRES nvme, which no node has"), as Slurm refuses an
invalid GRES request. Typed entries of a kind (``nvme:fast:2``) count toward the kind; GPU types are
node features (:data:`pbf.resources.GPU_TYPE_PREFIX`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["GresLayout", "MAX_GRES_KINDS", "MAX_NODE_GRES", "gres_layout", "parse_gres", "gres_text", "good_gres_name"]

#: the most generic resource kinds besides GPUs (lanes of at least two bits)
MAX_GRES_KINDS = 31
#: the most of one kind a node may have (read as given; the lanes of a cluster with several kinds hold less,
#: :attr:`GresLayout.max_count`)
MAX_NODE_GRES = 1 << 40


def good_gres_name(name: str) -> bool:
    """Whether ``name`` is a GRES name as Slurm writes them (letters, digits, ``_``, ``-``, ``.``), and
    not ``gpu`` (GPUs have their own column)."""
    return (0 < len(name) <= 64 and name.isascii() and all(c.isalnum() or c in "_-." for c in name)
            and name != "gpu")


def parse_gres(text: str, what: str = "GRES") -> tuple[tuple[str, int], ...]:
    """``"nvme:2,mps:100"`` -> ``(("mps", 100), ("nvme", 2))`` (kinds in name order, a kind's entries
    added up, ``NAME:TYPE:N`` counted toward NAME, a bare ``NAME`` one). Raises ValueError naming the
    entry and what was expected (``what``: the field, for the message)."""
    counts: dict[str, int] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        parts = entry.split("(")[0].split(":")
        name, count = parts[0], parts[-1] if len(parts) > 1 else "1"
        if not good_gres_name(name) or not (count.isascii() and count.isdigit()) or len(count) > 18:
            raise ValueError(f"{what} entry {entry!r}: expected NAME:N or NAME:TYPE:N (NAME of letters, digits, "
                             f"'_', '-', '.', not gpu; N a whole number)")
        counts[name] = counts.get(name, 0) + int(count)
    return tuple(sorted(counts.items()))


def gres_text(pairs: Iterable[tuple[str, int]]) -> str:
    """The ``NAME:N,...`` text of ``(name, count)`` pairs (the inverse of :func:`parse_gres`)."""
    return ",".join(f"{name}:{count}" for name, count in pairs)


@dataclass(frozen=True)
class GresLayout:
    """The lanes of a cluster's count word: GPUs, then ``kinds`` (names, sorted)."""
    kinds: tuple

    @property
    def lanes(self) -> int:
        return 1 + len(self.kinds)

    @property
    def width(self) -> int:
        return 64 // self.lanes

    @property
    def max_count(self) -> int:
        """The most of any kind one word holds."""
        return (1 << (self.width - 1)) - 1

    def word(self, gpus: int, gres: Sequence[tuple[str, int]]) -> int:
        """The packed word of ``gpus`` and ``gres`` pairs (of known kinds, each at most :attr:`max_count`)."""
        value = int(gpus)
        for name, count in gres:
            value |= int(count) << ((1 + self.kinds.index(name)) * self.width)
        return value

    def node_words(self, nodes):
        """One word a node (:class:`pbf.Node`; a numpy array); a count beyond a lane is an error naming
        the node."""
        import numpy as np  # (pbf.node imports this module; the CLI's parser needs no numpy)
        for n in nodes:
            for name, count in (("gpu", n.gpus),) + tuple(n.gres):
                if count > self.max_count:
                    raise ConfigError(f"node {n.name!r}: {count:,} {name}: with {self.lanes} kinds of generic "
                                      f"resources (GPUs counted) a node holds at most {self.max_count:,} of each")
        return np.array([self.word(n.gpus, n.gres) for n in nodes], dtype=np.int64)

    def ask_words(self, gpus, gres: Sequence[tuple]):
        """Per job, its ask's word, and whether it can never be met (a kind no node has, or more of a
        kind than a word holds: no node has that many): two numpy arrays."""
        import numpy as np
        top = self.max_count
        words = np.asarray(gpus, dtype=np.int64).copy()
        never = words > top
        words[never] = 0
        for i, pairs in enumerate(gres):
            if not pairs or never[i]:
                continue
            if any(name not in self.kinds or count > top for name, count in pairs):
                never[i] = True
                continue
            words[i] = self.word(words[i], pairs)
        return words, never


def gres_layout(nodes) -> GresLayout | None:
    """The layout of the nodes' generic resources, or None where they have none besides GPUs (the
    word is then a plain GPU count)."""
    kinds = sorted({name for n in nodes for name, _ in n.gres})
    if not kinds:
        return None
    if len(kinds) > MAX_GRES_KINDS:
        raise ConfigError(f"the nodes have {len(kinds)} kinds of generic resources besides GPUs "
                          f"({', '.join(kinds[:5])}, ...): pbf plans at most {MAX_GRES_KINDS}")
    return GresLayout(tuple(kinds))
