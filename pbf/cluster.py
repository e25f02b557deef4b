"""Clusters: how many units the node state has, optionally grouped into named nodes for display."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["Cluster", "beocat_cluster", "MAX_UNITS"]

#: The largest cluster pbf schedules: 2**24 units (16,777,216 cores; the largest machines have under 11
#: million). Each bitmap is then 2 MB, so a profile of a few thousand slots already needs gigabytes.
MAX_UNITS = 1 << 24


@dataclass(frozen=True)
class Cluster:
    """A homogeneous pool of ``units`` schedulable units (one bit each).

    ``nodes`` optionally lists ``(name, cores)`` in unit order (units 0..cores-1 are the first node's,
    and so on); it must add up to ``units``. Scheduling treats units alike; nodes are for display and
    for the consecutive-unit choice rules.
    """
    units: int
    nodes: tuple = ()
    name: str = "cluster"

    def __post_init__(self):
        if not isinstance(self.units, int) or isinstance(self.units, bool) or not 1 <= self.units <= MAX_UNITS:
            raise ConfigError(f"units must be an int from 1 to {MAX_UNITS:,}, got {self.units!r}")
        if self.nodes and sum(c for _, c in self.nodes) != self.units:
            raise ConfigError(f"nodes add up to {sum(c for _, c in self.nodes)} cores, "
                              f"but units={self.units}")


# Beocat's `normal` partition (the Parallel Backfill paper's cluster): (class, cores per node, count), in
# slurm.conf order so that consecutive-unit choices behave as Slurm's do. 299 nodes, 9,128 cores.
_BEOCAT_NORMAL = (("dwarf", 32, 60), ("elf", 16, 8), ("elf", 20, 21), ("hero", 24, 25), ("hero", 48, 7),
                  ("mage", 80, 4), ("mole", 20, 119), ("warlock", 32, 4), ("warlock", 64, 2),
                  ("warlock", 128, 11), ("wizard", 32, 29), ("wizard", 40, 4), ("wizard", 48, 3),
                  ("wizard", 64, 2))


def beocat_cluster() -> Cluster:
    """The Beocat-like cluster: the `normal` partition, 299 nodes, 9,128 cores (1 unit = 1 core)."""
    nodes = []
    for cls, cores, count in _BEOCAT_NORMAL:
        start = sum(1 for n, _ in nodes if n.startswith(cls))
        nodes.extend((f"{cls}{start + i + 1:02d}", cores) for i in range(count))
    return Cluster(units=sum(c for _, c in nodes), nodes=tuple(nodes), name="beocat-normal")
