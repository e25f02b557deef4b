"""Clusters: the schedulable units (cores), optionally grouped into nodes with memory, GPUs and features.

A cluster is ``units`` cores, one bit each in the node state. Its ``nodes`` (optional) cut the units into
consecutive runs in node order -- units 0..c0-1 are the first node's, and so on -- and each node may also
carry memory, GPUs and features (a :class:`Node`). A cluster is read from a small TOML file
(:meth:`Cluster.from_toml`), or is one of the built-in ones (:meth:`Cluster.builtin`: ``beocat``,
``beocat-gpu``); :meth:`Cluster.load` takes either.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import ConfigError
from .gres import MAX_NODE_GRES, good_gres_name
from .licenses import MAX_LICENSES, slurm_conf_licenses
from .node import (
    MAX_NAME_LENGTH,
    MAX_NODE_CORES,
    MAX_NODE_GPUS,
    MAX_NODE_MEMORY_MB,
    MAX_NODES,
    MAX_UNITS,
    Node,
    _good_name,
    count_hostlist,
    expand_hostlist,
    good_gpu_type,
)
from .slurm_conf import MAX_CONF_BYTES, MAX_FEATURES, read_partition, read_slurm_conf

__all__ = ["Cluster", "Node", "beocat_cluster", "expand_hostlist", "MAX_UNITS", "BUILTIN_CLUSTERS"]

@dataclass(frozen=True)
class Cluster:
    """``units`` schedulable units (one bit each), optionally grouped into ``nodes``.

    ``nodes`` lists :class:`Node` records (or ``(name, cores)`` pairs, which become nodes without
    memory or GPUs) in unit order; their cores must add up to ``units``. With nodes that carry memory
    or GPUs (:attr:`has_resources`) a replay places jobs on nodes by Slurm's consumable-resource rules
    (docs/engine.md, "Nodes and resources"); otherwise units are interchangeable and nodes serve names,
    outages and the consecutive-unit choice rules.
    """
    units: int
    nodes: tuple = ()
    name: str = "cluster"
    #: memory per core (MB) a job gets when it asks for none (a partition's DefMemPerCPU; 0: none)
    default_mem_per_core_mb: int = 0
    #: cluster-wide licenses, ``(name, count)`` pairs (slurm.conf ``Licenses=``; pbf.licenses)
    licenses: tuple = ()
    _index: dict = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.units, int) or isinstance(self.units, bool) or not 1 <= self.units <= MAX_UNITS:
            raise ConfigError(f"units must be an int from 1 to {MAX_UNITS:,}, got {self.units!r}")
        nodes = tuple(n if isinstance(n, Node) else Node(*n) for n in self.nodes)
        object.__setattr__(self, "nodes", nodes)
        if nodes and sum(n.cores for n in nodes) != self.units:
            raise ConfigError(f"nodes add up to {sum(n.cores for n in nodes)} cores, but units={self.units}")
        index = {}
        for i, n in enumerate(nodes):
            if n.name in index:
                raise ConfigError(f"node {n.name!r} is listed twice")
            index[n.name] = i
        object.__setattr__(self, "_index", index)
        lic = tuple((str(n), c) for n, c in (self.licenses.items() if isinstance(self.licenses, dict)
                                             else self.licenses))
        for name, count in lic:
            if not name or not name.isprintable() or " " in name or "," in name or not isinstance(count, int) \
                    or isinstance(count, bool) or not 0 <= count <= MAX_LICENSES:
                raise ConfigError(f"cluster {self.name!r}: license ({name!r}, {count!r}): expected a name and a "
                                  f"whole count from 0 to {MAX_LICENSES:,}")
        if len({n for n, _ in lic}) != len(lic):
            raise ConfigError(f"cluster {self.name!r}: a license named twice in {lic!r}")
        object.__setattr__(self, "licenses", lic)

    @classmethod
    def of_nodes(cls, nodes: Iterable[Node], name: str = "cluster") -> Cluster:
        """A cluster of these :class:`Node` records (units = their cores)."""
        nodes = tuple(nodes)
        if not nodes:
            raise ConfigError(f"cluster {name!r} has no nodes")
        return cls(units=sum(n.cores for n in nodes), nodes=nodes, name=name)

    @property
    def has_resources(self) -> bool:
        """True when some node carries memory, GPUs, other generic resources or features (the node
        model applies)."""
        return any(n.memory_mb or n.gpus or n.gres or n.features for n in self.nodes)

    def node_index(self, name: str) -> int:
        """The position of the node called ``name`` (KeyError if there is none)."""
        return self._index[name]

    def first_units(self) -> list[int]:
        """The first unit of each node, in node order."""
        out, first = [], 0
        for n in self.nodes:
            out.append(first)
            first += n.cores
        return out

    def totals(self) -> dict:
        """Cores, memory (MB), GPUs and nodes in all, the nodes per class and, where the nodes have
        generic resources besides GPUs, each kind in all (``gres``)."""
        classes: dict = {}
        gres: dict = {}
        for n in self.nodes:
            classes[n.klass or n.name] = classes.get(n.klass or n.name, 0) + 1
            for kind, count in n.gres:
                gres[kind] = gres.get(kind, 0) + count
        return {"nodes": len(self.nodes), "cores": self.units, "memory_mb": sum(n.memory_mb for n in self.nodes),
                "gpus": sum(n.gpus for n in self.nodes), "classes": classes, **({"gres": gres} if gres else {})}

    # ---- reading

    @classmethod
    def load(cls, spec: str | os.PathLike) -> Cluster:
        """A built-in cluster by name (:data:`BUILTIN_CLUSTERS`), one read from a TOML file
        (``*.toml``), or from Slurm's ``NodeName``/``PartitionName`` lines (any other file, e.g.
        ``slurm.conf``; ``FILE:PARTITION`` picks a partition, see :mod:`pbf.slurm_conf`)."""
        if isinstance(spec, str) and spec in BUILTIN_CLUSTERS:
            return cls.builtin(spec)
        path = os.fspath(spec)
        partition = None
        if not os.path.exists(path) and ":" in path and os.path.exists(path.rsplit(":", 1)[0]):
            path, partition = path.rsplit(":", 1)
        if not os.path.exists(path):
            raise ConfigError(f"cluster {path!r}: no such file, and not a built-in cluster "
                              f"({', '.join(BUILTIN_CLUSTERS)})")
        if path.endswith(".toml"):
            return cls.from_toml(path)
        return cls.from_slurm_conf(path, partition)

    @classmethod
    def from_slurm_conf(cls, path: str | os.PathLike, partition: str | None = None, *,
                        node_order: str = "name") -> Cluster:
        """The cluster of a ``slurm.conf``: one partition's nodes (``partition``, else the ``Default=YES``
        one, else every node), numbered as slurmctld numbers them (``node_order="name"``: by
        :func:`pbf.slurm_conf.strnatcmp` of their names; ``"file"``: the NodeName lines' order), with the
        partition's ``DefMemPerCPU`` as the default memory per core (:func:`pbf.slurm_conf.read_partition`)."""
        conf = read_slurm_conf(path)
        part = read_partition(conf, partition, node_order=node_order)
        licenses = slurm_conf_licenses(conf)
        return cls(units=sum(n.cores for n in part.nodes), nodes=part.nodes, name=part.name,
                   default_mem_per_core_mb=part.default_mem_per_core_mb, licenses=tuple(licenses.items()))

    @classmethod
    def builtin(cls, name: str) -> Cluster:
        """``beocat``: Beocat's ``normal`` partition (299 nodes, 9,128 cores, memory per node);
        ``beocat-gpu``: the same nodes with the GPUs of Beocat's GPU nodes (157 GPUs on 46 nodes)."""
        if name not in BUILTIN_CLUSTERS:
            raise ConfigError(f"unknown built-in cluster {name!r}: expected one of {', '.join(BUILTIN_CLUSTERS)}")
        return BUILTIN_CLUSTERS[name]()

    @classmethod
    def from_toml(cls, path: str | os.PathLike) -> Cluster:
        """Read a cluster from a TOML file::

            name = "mycluster"
            [[nodes]]
            names = "dwarf[01-39]"      # or name = "dwarf01"; Slurm's node-range syntax
            cores = 32
            memory = "125G"             # or memory_mb = 128000; units K, M (default), G, T
            gpus = 2                    # optional
            gpu_type = "a100"           # optional: the GPUs' type (jobs asking gpu:a100 run only here)
            features = ["avx2", "ib"]   # optional
            class = "dwarf"             # optional: the group reports use (default: the name's letters)

        Each entry's fields are checked before its names are made, and the names are counted before
        (at most :data:`pbf.node.MAX_NODES` in the file, the most the compiled core holds). Errors name
        the file, the ``[[nodes]]`` entry, the field, the value and what was expected."""
        import tomllib  # (Python 3.11+; the rest of pbf runs on 3.10)
        path = os.fspath(path)
        try:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_CONF_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"cannot read cluster file {path!r}: {exc.strerror}") from None
        if len(raw) > MAX_CONF_BYTES:
            raise ConfigError(f"{path}: more than {MAX_CONF_BYTES:,} bytes: expected a cluster file (TOML)")
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: byte {exc.start + 1:,} is not UTF-8 text") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except RecursionError:
            raise ConfigError(f"{path}: not valid TOML for pbf: arrays or tables nested too deep") from None
        unknown = set(data) - {"name", "nodes", "licenses"}
        if unknown:
            shown = ", ".join(sorted(unknown)[:10]) + (" ..." if len(unknown) > 10 else "")
            raise ConfigError(f"{path}: unknown key(s) {shown}; expected name, licenses and [[nodes]]")
        licenses = data.get("licenses", {})
        if not isinstance(licenses, dict) or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_LICENSES for c in licenses.values()):
            raise ConfigError(f"{path}: field licenses: got {_shown(licenses)}, expected a table of license names "
                              f"and whole counts from 0 to {MAX_LICENSES:,} (licenses = {{ matlab = 2 }})")
        name = data.get("name", os.path.splitext(os.path.basename(path))[0])
        if not isinstance(name, str) or not name or len(name) > MAX_NAME_LENGTH or not name.isprintable():
            raise ConfigError(f"{path}: field name: got {_shown(name)}, expected a cluster name (text of at most "
                              f"{MAX_NAME_LENGTH} printable characters)")
        entries = data.get("nodes")
        if not isinstance(entries, list) or not entries:
            raise ConfigError(f"{path}: no [[nodes]] entries")
        nodes, seen = [], {}
        for k, entry in enumerate(entries, 1):
            where = f"{path}, [[nodes]] entry {k}"
            for node in _nodes_of_entry(entry, where, MAX_NODES - len(nodes)):
                if node.name in seen:
                    raise ConfigError(f"{where}: node {node.name!r} is listed twice (also in entry {seen[node.name]})")
                seen[node.name] = k
                nodes.append(node)
        units = sum(n.cores for n in nodes)
        if units > MAX_UNITS:
            raise ConfigError(f"{path}: the nodes have {units:,} cores in all: expected at most {MAX_UNITS:,} (the "
                              "largest cluster pbf schedules)")
        features = {f for n in nodes for f in n.features}
        if len(features) > MAX_FEATURES:
            raise ConfigError(f"{path}: the nodes have {len(features)} distinct features: expected at most "
                              f"{MAX_FEATURES} (pbf's node model holds a bit for each)")
        cluster = cls.of_nodes(nodes, name=name)
        return dataclasses.replace(cluster, licenses=tuple(licenses.items())) if licenses else cluster


_ENTRY_KEYS = {"name", "names", "cores", "memory", "memory_mb", "gpus", "gpu_type", "features", "class", "gres"}


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _nodes_of_entry(entry, where, room=MAX_NODES):
    """The nodes of one ``[[nodes]]`` entry: its fields checked first, its names counted (at most
    ``room``) before they are made."""
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected a table of node settings, got {_shown(entry)}")
    unknown = set(entry) - _ENTRY_KEYS
    if unknown:
        shown = ", ".join(sorted(unknown)[:10]) + (" ..." if len(unknown) > 10 else "")
        raise ConfigError(f"{where}: unknown field(s) {shown}; expected {', '.join(sorted(_ENTRY_KEYS))}")
    if ("name" in entry) == ("names" in entry):
        raise ConfigError(f"{where}: give name or names (one of them)")
    key = "name" if "name" in entry else "names"
    spec = entry[key]
    if not isinstance(spec, str):
        raise ConfigError(f"{where}: field {key}: got {_shown(spec)}, expected a string such as 'dwarf[01-39]'")

    def whole(field, default, low, high):
        value = entry.get(field, default)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ConfigError(f"{where}: field {field}: got {_shown(value)}, expected a whole number from {low:,} "
                              f"to {high:,}")
        return value

    cores = whole("cores", None, 1, MAX_NODE_CORES)
    if "memory" in entry and "memory_mb" in entry:
        raise ConfigError(f"{where}: give memory or memory_mb, not both")
    memory = whole("memory_mb", 0, 0, MAX_NODE_MEMORY_MB) if "memory" not in entry else _memory_mb(entry["memory"],
                                                                                                  where)
    gpus = whole("gpus", 0, 0, MAX_NODE_GPUS)
    features = entry.get("features", [])
    if isinstance(features, str):
        features = [f for f in features.split(",") if f]
    if not isinstance(features, list) or not all(isinstance(f, str) and f.strip() and f.strip().isprintable()
                                                 for f in features):
        raise ConfigError(f"{where}: field features: got {_shown(features)}, expected a list of names")
    klass = entry.get("class")
    if klass is not None and (not isinstance(klass, str) or len(klass) > MAX_NAME_LENGTH or not klass.isprintable()):
        raise ConfigError(f"{where}: field class: got {_shown(klass)}, expected a string of at most "
                          f"{MAX_NAME_LENGTH} printable characters")
    try:
        count = count_hostlist(spec)
        if count > room:
            raise ValueError(f"at most {MAX_NODES:,} nodes in the file (the most pbf's core holds); this entry "
                             f"names {count:,}")
        names = expand_hostlist(spec, room)
    except ValueError as exc:
        raise ConfigError(f"{where}: field {key}: got {_shown(spec)}, expected {exc}") from None
    for n in names:
        if not _good_name(n):
            raise ConfigError(f"{where}: field {key}: got {_shown(spec)}, expected node names of at most "
                              f"{MAX_NAME_LENGTH} printable characters without spaces, commas or brackets, not "
                              f"{_shown(n)}")
    feats = tuple(f.strip() for f in features)
    gpu_type = entry.get("gpu_type", "")
    if not isinstance(gpu_type, str) or (gpu_type and not all(good_gpu_type(t) for t in gpu_type.split(","))) \
            or (gpu_type and not gpus):
        raise ConfigError(f"{where}: field gpu_type: got {_shown(gpu_type)}, expected a GPU type name (letters, "
                          f"digits, '_', '-', '.'; several separated by commas) on an entry with gpus")
    gres = entry.get("gres", {})
    if not isinstance(gres, dict) or not all(
            isinstance(k, str) and good_gres_name(k) and isinstance(c, int) and not isinstance(c, bool)
            and 0 <= c <= MAX_NODE_GRES for k, c in gres.items()):
        raise ConfigError(f"{where}: field gres: got {_shown(gres)}, expected a table of generic resource names "
                          f"(not gpu) and whole counts from 0 to {MAX_NODE_GRES:,} (gres = {{ nvme = 2 }})")
    return [Node(n, cores, memory, gpus, feats, klass if klass is not None else n.rstrip("0123456789-_.") or n,
                 gpu_type, tuple(gres.items())) for n in names]


_MEM_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
_MEMORY = re.compile(r"\s*([0-9]{1,19}(?:\.[0-9]{1,19})?)\s*([KMGT]?)B?\s*", re.IGNORECASE | re.ASCII)


def _memory_mb(value, where) -> int:
    """Memory as Slurm writes it: a whole number of MB, or a number with K, M, G or T; at most
    :data:`pbf.node.MAX_NODE_MEMORY_MB`."""
    too_big = f"{where}: field memory: got {_shown(value)}, expected at most {MAX_NODE_MEMORY_MB:,} MB"
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        if value > MAX_NODE_MEMORY_MB:
            raise ConfigError(too_big)
        return value
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        value = repr(value)                 # a TOML float: MB
    m = _MEMORY.fullmatch(value) if isinstance(value, str) and len(value) <= 64 else None
    if not m:
        raise ConfigError(f"{where}: field memory: got {_shown(value)}, expected a size such as 125G, 64000M or "
                          "64000")
    mb = float(m.group(1)) * _MEM_UNITS[(m.group(2) or "M").upper()]
    if mb > MAX_NODE_MEMORY_MB:
        raise ConfigError(too_big)
    return int(round(mb))


# ---- built-in clusters

# Beocat's `normal` partition (the Parallel Backfill paper's cluster; reference §3.1): (class, cores per
# node, RealMemory GiB, count), in slurm.conf order so that consecutive-unit choices behave as Slurm's
# do. 299 nodes, 9,128 cores. Where a class's memory is given as a range, the midpoint; which nodes of a
# class lie outside the partition is not known, so a dwarf class keeps its 1 node of 93 GiB and its 8 of
# 503 GiB (51 of the 55 of 125 GiB are in). ~45.2 TiB against the reference's ~48.1 (the 11 warlocks of
# 251-1,511 GiB carry most of the difference; no job of the Beocat-like workload needs that much).
_BEOCAT_NORMAL = (("dwarf", 32, 125, 51), ("dwarf", 32, 93, 1), ("dwarf", 32, 503, 8),
                  ("elf", 16, 58, 8), ("elf", 20, 78, 15), ("elf", 20, 354, 6),
                  ("hero", 24, 125, 25), ("hero", 48, 125, 7), ("mage", 80, 1007, 4), ("mole", 20, 27, 119),
                  ("warlock", 32, 125, 4), ("warlock", 64, 503, 2), ("warlock", 128, 881, 11),
                  ("wizard", 32, 92, 26), ("wizard", 32, 1510, 3), ("wizard", 40, 140, 4), ("wizard", 48, 187, 3),
                  ("wizard", 64, 754, 2))


def _beocat_nodes(gpus=None):
    nodes, count = [], {}
    for cls, cores, gib, n in _BEOCAT_NORMAL:
        for _ in range(n):
            count[cls] = count.get(cls, 0) + 1
            name = f"{cls}{count[cls]:02d}"
            g = gpus(name, cores) if gpus else 0
            nodes.append(Node(name, cores, gib * 1024, g, ("gpu",) if g else (), cls))
    return nodes


def _beocat_gpus(name, cores):
    # reference §3.2: wizard01-19, 29, 32-38 have 4 GPUs (wizard10: 3), wizard20-21 2, dwarf22-25 and
    # 29-39 2, and the two 64-core warlocks 8 each: 157 GPUs on 46 nodes
    cls, num = re.fullmatch(r"([a-z]+)(\d+)", name).groups()
    i = int(num)
    if cls == "wizard":
        if i == 10:
            return 3
        if i <= 19 or i == 29 or 32 <= i <= 38:
            return 4
        if i in (20, 21):
            return 2
    if cls == "dwarf" and (22 <= i <= 25 or 29 <= i <= 39):
        return 2
    if cls == "warlock" and cores == 64:
        return 8
    return 0


def beocat_cluster(resources: bool = False) -> Cluster:
    """The Beocat-like cluster: the `normal` partition, 299 nodes, 9,128 cores (1 unit = 1 core).
    With ``resources`` each node carries its memory (the ``beocat`` built-in cluster); without, nodes
    are names and core counts only, the cluster pbf's unit replays of Beocat have always used."""
    nodes = _beocat_nodes()
    if not resources:
        nodes = [Node(n.name, n.cores, klass=n.klass) for n in nodes]
    return Cluster.of_nodes(nodes, name="beocat-normal")


#: The built-in clusters by name (``--cluster NAME``).
BUILTIN_CLUSTERS = {
    "beocat": lambda: Cluster.of_nodes(_beocat_nodes(), name="beocat"),
    "beocat-gpu": lambda: Cluster.of_nodes(_beocat_nodes(_beocat_gpus), name="beocat-gpu"),
}

