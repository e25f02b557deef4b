"""A cluster of nodes inside :class:`pbf.Engine`: what a job asks of the nodes (checked before anything
changes), handing it to the compiled core, and where a started job landed (its nodes, with the cores,
memory and GPUs it holds on each).

The engine uses the node model when its cluster's nodes carry memory, GPUs or features
(:attr:`pbf.Cluster.has_resources`), as a replay does; otherwise units are interchangeable and a
:class:`Placement` carries only node names and cores.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._nodes import NodeCluster
from .gres import gres_layout
from .resources import Requests, count_words, job_feature_bits, load_nodes, never_bits, reject_detail

if TYPE_CHECKING:
    from ._core import Core
    from .cluster import Cluster
    from .engine_events import Job

__all__ = ["Placement", "EngineNodes", "name_units"]

_MAX_MB = 1 << 40


@dataclass(frozen=True)
class Placement:
    """Where a started job runs on one node: the node's ``name``, the job's ``cores`` there and the
    ``memory_mb``, ``gpus`` and other generic resources (``gres``, ``(name, count)`` pairs) it holds
    there for its whole run."""
    node: str
    cores: int
    memory_mb: int = 0
    gpus: int = 0
    gres: tuple = ()


def name_units(cluster: Cluster, names) -> Cluster:
    """``cluster`` (of units, no named nodes) with the host's names for its units: ``names[u]`` names
    the node unit ``u`` belongs to, the units of one node consecutive. The nodes carry no memory, GPUs
    or features, so units stay interchangeable: the names serve placements and outages only."""
    from .cluster import Cluster as _Cluster
    from .cluster import Node
    from .errors import ConfigError
    if cluster.nodes:
        raise ConfigError("unit_names: the cluster's nodes are named already (give one or the other)")
    if isinstance(names, (str, bytes)):
        raise ConfigError("unit_names must be a sequence of node names, one per unit, not a string")
    names = list(names)
    if len(names) != cluster.units:
        raise ConfigError(f"unit_names has {len(names):,} names for {cluster.units:,} units (give one per unit)")
    runs, seen = [], {}
    for u, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise ConfigError(f"unit_names[{u}] is {name!r}; expected a node name (a non-empty string)")
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
            continue
        if name in seen:
            raise ConfigError(f"unit_names: the units of node {name!r} are not consecutive (units {seen[name]} "
                              f"and {u}); number the host's units node by node")
        seen[name] = u
        runs.append([name, 1])
    return _Cluster.of_nodes([Node(n, c) for n, c in runs], name=cluster.name)


def _whole(value, low):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and low <= value <= _MAX_MB


class EngineNodes:
    """The engine's side of a node cluster (one a :class:`pbf.Engine`)."""

    def __init__(self, core: Core, cluster: Cluster, node_choice: str = "best-fit", node_search: str = "exact") -> None:
        self.cluster = cluster
        self.modelled = cluster.has_resources
        self.first_fit = node_choice == "first-fit"
        self.bits = load_nodes(core, cluster, self.first_fit, node_search) if self.modelled else {}
        self.layout = gres_layout(cluster.nodes)       # (once: it reads every node)
        self.first = np.cumsum([0] + [n.cores for n in cluster.nodes])
        self.unit_names = (np.repeat(np.array([n.name for n in cluster.nodes], dtype=object),
                                     [n.cores for n in cluster.nodes]) if cluster.nodes else None)

    def request(self, job: Job) -> tuple:
        """The job's (memory per core, memory per node, GPUs per node, nodes at least, at most,
        features), the cluster's default memory per core applied."""
        mpc, mpn = int(job.mem_core_mb), int(job.mem_node_mb)
        if mpc == 0 and mpn == 0:
            mpc = int(self.cluster.default_mem_per_core_mb or 0)
        return mpc, mpn, int(job.gpus), min(int(job.nodes_min), int(job.units)), int(job.nodes_max), \
            tuple(sorted(job.features))

    def _requests(self, job: Job) -> Requests:
        mpc, mpn, gpn, lo, hi, feats = self.request(job)
        gres = tuple(sorted(job.gres.items() if isinstance(job.gres, dict) else job.gres))
        return Requests(np.array([mpc]), np.array([mpn]), np.array([gpn]), np.array([lo]), np.array([hi]), (feats,),
                        (), (gres,))

    def problem(self, job: Job) -> str | None:
        """What is malformed in ``job``'s node request, if anything (a misuse: the call is refused)."""
        for name, low in (("mem_core_mb", 0), ("mem_node_mb", 0), ("gpus", 0), ("nodes_min", 1), ("nodes_max", 0)):
            value = getattr(job, name)
            if not _whole(value, low):
                return f"job {job.id} has {name} {value!r}; expected an int >= {low}"
        if job.nodes_max and job.nodes_max < job.nodes_min:
            return f"job {job.id} has nodes_max {job.nodes_max} below nodes_min {job.nodes_min} (0: any)"
        if not isinstance(job.features, tuple) or not all(isinstance(f, str) and f for f in job.features):
            return f"job {job.id} has features {job.features!r}; expected a tuple of names"
        pairs = job.gres.items() if isinstance(job.gres, dict) else job.gres
        if not isinstance(pairs, (tuple, type({}.items()))) or not all(
                isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and p[0] and _whole(p[1], 0)
                for p in pairs):
            return f"job {job.id} has gres {job.gres!r}; expected (name, count) pairs or a dict of them"
        asks = (job.mem_core_mb or job.mem_node_mb or job.gpus or job.features or job.nodes_min > 1 or job.nodes_max
                or job.gres)
        if not self.modelled:
            if asks:
                return (f"job {job.id} asks for memory, GPUs, generic resources, features or node counts, but the "
                        f"cluster's nodes carry none (give the Cluster nodes with memory_mb, gpus, gres or features)")
        return None

    def rejection(self, job: Job) -> str:
        """Why no set of the cluster's nodes, all idle, could ever hold ``job`` (naming the resource),
        the compiled core having found that none does at its submission."""
        return f"no set of nodes can hold it: {reject_detail(self.cluster, self._requests(job), 0, int(job.units))}"

    def hand_over(self, core: Core, j: int, job: Job) -> None:
        """Give the core job j's node request (a node-model cluster only)."""
        if not self.modelled:
            return
        one = self._requests(job)
        counts, never = count_words(self.cluster, one, self.layout)   # (GPUs and other kinds: one word)
        NodeCluster(core).set_requests(j, one.mem_core_mb, one.mem_node_mb, counts, one.nodes_min, one.nodes_max,
                                       job_feature_bits(self.bits, one.features) | never_bits(never))

    def placements(self, units: np.ndarray, job: Job) -> tuple:
        """The nodes of a started job's units, with what it holds on each."""
        if not len(self.cluster.nodes):
            return ()
        node_of = np.searchsorted(self.first, units, side="right") - 1
        ids, counts = np.unique(node_of, return_counts=True)
        mpc, mpn, gpn = self.request(job)[:3] if self.modelled else (0, 0, 0)
        gres = self._requests(job).gres[0] if self.modelled and self.layout is not None else ()
        return tuple(Placement(self.cluster.nodes[int(n)].name, int(c), int(c) * mpc + mpn, gpn, gres)
                     for n, c in zip(ids, counts))
