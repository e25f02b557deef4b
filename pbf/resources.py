"""What jobs ask of a cluster of nodes -- memory, GPUs, node counts, features -- and how a replay hands
a node cluster and those requests to the compiled core.

A job's request comes from its trace: columns ``mem_core_mb`` / ``mem_node_mb`` (memory per core or per
node, MB), ``gpus`` (GPUs per node), ``nodes_min`` / ``nodes_max`` (0: any) and the attribute
``features`` (one ``"a&b"`` string a job; sacct's Constraints) and ``gpu_type`` (the type of the GPUs it
asks, ``gres/gpu:a100=2``; legend ``; GpuType: N a100``) when the reader or generator gave them
(sacct dumps, ``pbf gen beocat --resources``); otherwise from the SWF fields: requested memory (field
10, KB a processor) or, with ``mem_from="used"``, used memory (field 7), rounded up to whole MB. See
docs/workloads.md "Memory and GPUs".
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._core import Core
from ._nodes import NodeCluster
from .cluster import Cluster
from .errors import ConfigError
from .gres import gres_layout, parse_gres
from .workload.jobs import JobTable, SwfHeader

__all__ = ["Requests", "MEM_FROM", "requests_of", "reject_detail", "load_nodes", "job_feature_bits", "node_features",
           "GPU_TYPE_PREFIX", "count_words", "never_bits"]

#: where a job's memory request comes from in an SWF trace
MEM_FROM = ("requested", "used", "none")

_UNKNOWN_FEATURE = 1 << 63               # a feature no node has: such a job can never run

#: A GPU type is planned as a node feature of this prefix and the type (``gpu:a100``), which a job asking
#: GPUs of that type requires: one type a node, so "GPUs of type T free on the node" is "GPUs free on a
#: node of type T", and the node model's feature bits carry it with no column of its own.
GPU_TYPE_PREFIX = "gpu:"


def node_features(node) -> tuple[str, ...]:
    """A node's features as the node model plans them: Slurm's features and, on a node of typed GPUs,
    ``gpu:TYPE``."""
    return node.features + tuple(GPU_TYPE_PREFIX + t for t in node.gpu_type.split(",") if t)


@dataclass(frozen=True)
class Requests:
    """Per job (numpy columns, one row a job): memory per core and per node (MB), GPUs per node,
    nodes at least and at most (0: any), required features (a tuple of names a job) and, where a
    job can never run for a reason of its own (a partition's limit: :mod:`pbf.slurm_partitions`), that
    reason ("" for the others; ``reasons`` empty: none), and the generic resources other than GPUs it
    asks of each node (``(name, count)`` pairs a job, :mod:`pbf.gres`; ``gres`` empty: none)."""
    mem_core_mb: np.ndarray
    mem_node_mb: np.ndarray
    gpus: np.ndarray
    nodes_min: np.ndarray
    nodes_max: np.ndarray
    features: tuple
    reasons: tuple = ()
    gres: tuple = ()

    def take(self, order: np.ndarray) -> Requests:
        """The requests of jobs ``order`` (an index array), in that order."""
        rows = np.asarray(order)
        return Requests(self.mem_core_mb[order], self.mem_node_mb[order], self.gpus[order], self.nodes_min[order],
                        self.nodes_max[order], tuple(self.features[i] for i in rows),
                        tuple(self.reasons[i] for i in rows) if self.reasons else (),
                        tuple(self.gres[i] for i in rows) if self.gres else ())


def _kb_to_mb(values):
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v) & (v > 0)
    return np.where(ok, np.ceil(np.where(ok, v, 0) / 1024.0), 0).astype(np.int64)


def requests_of(table: JobTable, mem_from: str = "requested", default_mem_per_core_mb: int | np.ndarray = 0,
                default_mem_per_node_mb: int | np.ndarray = 0) -> Requests:
    """The requests of every job of ``table`` (a :class:`pbf.JobTable`), in table order. A job that
    asks no memory gets ``default_mem_per_core_mb`` a core (a partition's DefMemPerCPU), else
    ``default_mem_per_node_mb`` a node (DefMemPerNode); each may be one number or one a job (its
    partition's)."""
    if mem_from not in MEM_FROM:
        raise ConfigError(f"mem_from must be one of {', '.join(MEM_FROM)}, got {mem_from!r}")
    n = len(table)
    cols = table.columns
    zeros = np.zeros(n, dtype=np.int64)
    if "mem_core_mb" in cols or "mem_node_mb" in cols:
        core = np.asarray(cols.get("mem_core_mb", zeros), dtype=np.int64)
        node = np.asarray(cols.get("mem_node_mb", zeros), dtype=np.int64)
    elif mem_from == "requested":
        core, node = _kb_to_mb(table.req_mem), zeros
    elif mem_from == "used":
        core, node = _kb_to_mb(table.used_mem), zeros
    else:
        core, node = zeros, zeros
    if mem_from == "none":
        core, node = zeros, zeros
    per_core = np.asarray(default_mem_per_core_mb, dtype=np.int64)
    per_node = np.asarray(default_mem_per_node_mb, dtype=np.int64)
    if per_core.any() or per_node.any():
        asks_none = (core <= 0) & (node <= 0)
        core = np.where(asks_none & (per_core > 0), per_core, core)
        node = np.where(asks_none & (per_core <= 0) & (per_node > 0), per_node, node)
    gpus = np.asarray(cols.get("gpus", zeros), dtype=np.int64)
    lo = np.asarray(cols.get("nodes_min", np.ones(n, dtype=np.int64)), dtype=np.int64)
    hi = np.asarray(cols.get("nodes_max", zeros), dtype=np.int64)
    feats = getattr(table, "__dict__", {}).get("features")
    if feats is None and "constraint" in cols:
        legend = constraint_legend(table.header)
        feats = [legend.get(int(c), "") for c in cols["constraint"]]
    features = tuple(tuple(sorted(f for f in str(s).split("&") if f)) for s in feats) if feats is not None \
        else tuple(() for _ in range(n))
    types = _gpu_types(table, n)
    if types is not None:
        # a job asking GPUs of a type needs a node of that type (one type a node; a job asking several
        # types needs them all on one node, which no node has: it is rejected, saying so)
        features = tuple(f + tuple(sorted(GPU_TYPE_PREFIX + t for t in types[i].split(",") if t))
                         if types[i] and gpus[i] > 0 else f for i, f in enumerate(features))
    return Requests(np.maximum(core, 0), np.maximum(node, 0), np.maximum(gpus, 0), np.maximum(lo, 1),
                    np.maximum(hi, 0), features, (), _job_gres(table, n))


def _job_gres(table: JobTable, n: int) -> tuple:
    """Each job's generic resources other than GPUs, per node (``(name, count)`` pairs; () none), or ()
    where the trace has none (sacct's ``ReqTRES gres/NAME``, ``ReqGRES``: column ``gres``, legend
    ``; Gres: N nvme:1``)."""
    texts = getattr(table, "__dict__", {}).get("gres_texts")
    if texts is None:
        if "gres" not in table.columns:
            return ()
        legend = constraint_legend(table.header, "Gres")
        texts = [legend.get(int(c), "") for c in table.columns["gres"]]
    if not any(texts):
        return ()
    parsed = {}
    out = []
    for t in texts:
        t = str(t)
        if t not in parsed:
            try:
                parsed[t] = parse_gres(t)
            except ValueError as exc:
                raise ConfigError(f"{getattr(table, 'source', 'the trace')}: {exc}") from None
        out.append(parsed[t])
    return tuple(out)


_NO_LAYOUT = object()


def count_words(cluster: Cluster, requests: Requests, layout=_NO_LAYOUT) -> tuple[np.ndarray, np.ndarray]:
    """The jobs' per-node asks of GPUs and other generic resources as the core's count words
    (:class:`pbf.gres.GresLayout`), and which jobs no node can ever meet for them (a kind the cluster's
    nodes lack, on a cluster that has some). On a cluster with no generic resources besides GPUs the
    word is the GPU count and a trace's other asks are read, not planned. ``layout``: the cluster's
    :func:`pbf.gres.gres_layout`, where the caller keeps it (it reads every node)."""
    layout = gres_layout(cluster.nodes) if layout is _NO_LAYOUT else layout
    gpus = np.asarray(requests.gpus, dtype=np.int64)
    if layout is None:
        return gpus, np.zeros(len(gpus), dtype=bool)
    return layout.ask_words(gpus, requests.gres if requests.gres else [()] * len(gpus))


def _gpu_types(table: JobTable, n: int):
    """Each job's GPU types ("a100", "a100,v100"; "" none), or None where the trace has none."""
    names = getattr(table, "__dict__", {}).get("gpu_types")
    if names is not None:
        return [str(t) for t in names]
    if "gpu_type" not in table.columns:
        return None
    legend = constraint_legend(table.header, "GpuType")
    return [legend.get(int(c), "") for c in table.columns["gpu_type"]]


def constraint_legend(header: SwfHeader, name: str = "Constraint") -> dict[int, str]:
    """The ``; Constraint: N a&b`` lines of a header (sacct dumps): number -> features (``name``: another
    legend of the same form, e.g. ``GpuType``)."""
    out = {}
    for line in header.lines:
        key, sep, value = line.strip().partition(":")
        if sep and key.strip() == name:
            number, _, text = value.strip().partition(" ")
            if number.isdigit():
                out[int(number)] = text.strip()
    return out


def _feature_bits(cluster):
    names = sorted({f for node in cluster.nodes for f in node_features(node)})
    if len(names) > 63:
        raise ConfigError(f"cluster {cluster.name!r} has {len(names)} distinct features and GPU types; pbf's node "
                          f"model holds 63")
    return {name: 1 << i for i, name in enumerate(names)}


def load_nodes(core: Core, cluster: Cluster, first_fit: bool = False, search: str = "exact") -> dict[str, int]:
    """Make ``core`` (a fresh :class:`pbf._core.Core` of ``cluster.units`` units, no jobs yet) a node
    cluster planned by ``search`` (``exact`` or ``slurm``: :class:`pbf.ReplayConfig`); returns the
    feature bits (name -> bit) for :func:`job_feature_bits`."""
    bits = _feature_bits(cluster)
    node_feat = [sum(bits[f] for f in set(node_features(n))) for n in cluster.nodes]
    layout = gres_layout(cluster.nodes)
    counts = (np.array([n.gpus for n in cluster.nodes], dtype=np.int64) if layout is None
              else layout.node_words(cluster.nodes))
    NodeCluster(core).set(np.array([n.cores for n in cluster.nodes], dtype=np.int64),
                          np.array([n.memory_mb for n in cluster.nodes], dtype=np.int64), counts,
                          np.array(node_feat, dtype=np.uint64), first_fit, 1 if layout is None else layout.lanes)
    NodeCluster(core).set_search(search)
    return bits


def never_bits(never) -> np.ndarray:
    """Per job, the feature bit no node has where ``never`` (a job given it can never run: rejected,
    :func:`reject_detail` says why), else 0."""
    return np.where(np.asarray(never, dtype=bool), np.uint64(_UNKNOWN_FEATURE), np.uint64(0)).astype(np.uint64)


def job_feature_bits(bits: dict[str, int], features: Sequence[tuple[str, ...]]) -> np.ndarray:
    """One uint64 a job: the bits of its features (a feature no node has sets the top bit)."""
    out = np.zeros(len(features), dtype=np.uint64)
    for i, names in enumerate(features):
        v = 0
        for f in names:
            v |= bits.get(f, _UNKNOWN_FEATURE)
        out[i] = v
    return out


def _many(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def reject_detail(cluster: Cluster, requests: Requests, i: int, cores: int) -> str:
    """Why job ``i`` can never run on ``cluster``: the resource, what the job asks of it and the most a
    node has; where it is a combination no node has (GPUs on the nodes with the job's features, memory
    on the nodes with its GPUs or features), that combination."""
    if requests.reasons and requests.reasons[i]:
        return requests.reasons[i]
    feats = set(requests.features[i])
    types = sorted(f[len(GPU_TYPE_PREFIX):] for f in feats if f.startswith(GPU_TYPE_PREFIX))
    plain = sorted(f for f in feats if not f.startswith(GPU_TYPE_PREFIX))
    named = " and ".join(([f"features {'&'.join(plain)}"] if plain else [])
                         + ([f"GPUs of type {'+'.join(types)}"] if types else []))
    usable = [n for n in cluster.nodes if feats <= set(node_features(n))]
    if not usable:
        if len(types) > 1:
            return f"asks GPUs of {len(types)} types ({', '.join(types)}); a node has GPUs of one type"
        if types and not any(types[0] in n.gpu_type.split(",") for n in cluster.nodes):
            return f"no node has GPUs of type {types[0]}"
        return f"no node has {named}" if types else f"no node has features {'&'.join(plain)}"
    gpus = int(requests.gpus[i])
    with_gpus = [n for n in usable if n.gpus >= gpus]
    if not with_gpus:
        if feats and any(n.gpus >= gpus for n in cluster.nodes):
            most = max(n.gpus for n in usable)
            return (f"no node has {_many(gpus, 'GPU')} together with {named} (the nodes with them have "
                    f"at most {_many(most, 'GPU')})")
        return f"no node has {_many(gpus, 'GPU')}"
    usable = with_gpus
    if requests.gres and requests.gres[i] and gres_layout(cluster.nodes) is not None:
        for name, count in requests.gres[i]:
            if not any(dict(n.gres).get(name, 0) for n in cluster.nodes):
                return f"asks GRES {name}, which no node has"
            with_kind = [n for n in usable if dict(n.gres).get(name, 0) >= count]
            if not with_kind:
                most = max(dict(n.gres).get(name, 0) for n in cluster.nodes)
                return f"asks {count:,} {name} a node; no node it may use has more than {most:,}"
            usable = with_kind
    # what narrowed the nodes before memory is looked at
    also = " and ".join(([named] if feats else []) + ([_many(gpus, "GPU")] if gpus else []))
    per_node = int(requests.mem_node_mb[i])
    if per_node and not any(n.memory_mb >= per_node for n in usable):
        if also and any(n.memory_mb >= per_node for n in cluster.nodes):
            most = max(n.memory_mb for n in usable)
            return (f"no node has {per_node:,} MB of memory together with {also} (the nodes with them have at most "
                    f"{most:,} MB)")
        return f"no node has {per_node:,} MB of memory"
    per_core = int(requests.mem_core_mb[i])
    if per_core and not any(n.memory_mb >= per_core for n in usable):
        most = max(n.memory_mb for n in usable)
        if also and any(n.memory_mb >= per_core for n in cluster.nodes):
            return (f"asks {per_core:,} MB of memory a core; the most memory a node with {also} has is "
                    f"{most:,} MB")
        return f"asks {per_core:,} MB of memory a core; the most memory a node has is {most:,} MB"
    lo, hi = int(requests.nodes_min[i]), int(requests.nodes_max[i])
    if lo > len(usable):
        return f"asks for {lo} nodes; {len(usable)} can hold it"
    room = sorted((min(n.cores, n.memory_mb // per_core if per_core else n.cores) for n in usable), reverse=True)
    most = sum(room[:hi] if hi else room)
    return (f"asks for {cores:,} cores at {per_core:,} MB a core on at most {hi or len(usable)} nodes; "
            f"the nodes that can hold it give {most:,}")
