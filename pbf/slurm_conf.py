"""A cluster of nodes read from Slurm's own configuration: ``NodeName`` and ``PartitionName`` lines of a
``slurm.conf`` (or a file of such lines), as sites write them.

* ``NodeName=DEFAULT ...`` sets values for the ``NodeName`` lines after it (until the next DEFAULT).
* A node's units are its CPUs: ``CPUs=`` (or its old name ``Procs=``), else
  ``Boards x Sockets x CoresPerSocket x ThreadsPerCore`` (``SocketsPerBoard`` too), else 1 (Slurm's
  default). ``RealMemory=`` is in MB (default 1, as Slurm). ``Gres=gpu:4``, ``gpu:a100:4`` (several
  entries separated by commas; the GPUs add up). ``Feature=``/``Features=`` a comma list.
* Node names use Slurm's ranges (``dwarf[01-39]``, ``n[1-3,7]``, ``a[1-2]b[1-2]``).
* ``PartitionName=NAME Nodes=... [Default=YES] [DefMemPerCPU=MB]``: the cluster is one partition's
  nodes (the one asked for, else the ``Default=YES`` one, else every node). ``Nodes=ALL`` is every
  node. The partition's ``DefMemPerCPU`` (else the file's) is kept as the cluster's default memory
  per core: a job that asks no memory gets it, as under ``CR_Core_Memory``.
* Nodes are numbered **by name**, as slurmctld numbers them whatever the order of the NodeName lines
  (``_sort_node_record_table_ptr`` / ``_sort_nodes_by_name`` in ``src/slurmctld/read_config.c`` of Slurm
  22.05, ``_reorder_nodes_by_name`` in 17.02: ``strnatcmp``, a natural order in which ``a1 < b1 < n2 <
  n10``, see :func:`strnatcmp`). That order is what cons_res's best fit walks; ``node_order="file"``
  keeps the lines' order instead.
* Lines end at ``#``; a line ending in ``\\`` continues on the next. Other keys are read past (and
  listed in :attr:`SlurmConf.ignored`).

Errors name the file, the line, the key and the value.
"""
from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .errors import ConfigError
from .node import Node, expand_hostlist

__all__ = ["SlurmConf", "SlurmPartition", "read_slurm_conf", "read_partition", "strnatcmp", "slurm_node_key",
           "conf_lines", "conf_pairs", "gres_gpus", "NODE_ORDERS"]

#: how nodes read from a slurm.conf are numbered: ``name`` (Slurm's, by :func:`strnatcmp`) or ``file``
NODE_ORDERS = ("name", "file")

_NODE_INT = {"cpus": "CPUs", "procs": "Procs", "boards": "Boards", "sockets": "Sockets",
             "socketsperboard": "SocketsPerBoard", "corespersocket": "CoresPerSocket",
             "threadspercore": "ThreadsPerCore", "realmemory": "RealMemory"}


@dataclass
class SlurmConf:
    """What a ``slurm.conf`` says about nodes and partitions (keys lower-cased)."""
    path: str
    nodes: list = field(default_factory=list)        # (line, {key: value}) in file order, DEFAULTs applied
    partitions: list = field(default_factory=list)   # (line, {key: value})
    settings: dict = field(default_factory=dict)     # other KEY=VALUE lines: key -> (line, value)
    ignored: list = field(default_factory=list)      # keys of node lines pbf does not use


def conf_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each logical line of a ``slurm.conf``: comments cut at ``#``, lines ending
    in ``\\`` joined with the next, blank lines left out."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            raw = fh.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read {path!r}: {exc.strerror}") from None
    buf, first = "", None
    for number, line in enumerate(raw, 1):
        line = line.split("#", 1)[0].rstrip()
        if first is None:
            first = number
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        text = (buf + line).strip()
        buf, start = "", first
        first = None
        if text:
            yield start, text


def conf_pairs(path: str, number: int, text: str) -> dict[str, str]:
    """The ``KEY=VALUE`` items of one line (keys lower-cased); a ConfigError names the file and line of an
    item without ``=``."""
    out = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"{path}, line {number}: {item!r}: expected KEY=VALUE")
        out[key.strip().lower()] = value.strip()
    return out


def read_slurm_conf(path: str | os.PathLike) -> SlurmConf:
    """Read the node, partition and other lines of a ``slurm.conf``."""
    path = os.fspath(path)
    conf = SlurmConf(path)
    default: dict = {}
    for number, text in conf_lines(path):
        pairs = conf_pairs(path, number, text)
        if "nodename" in pairs:
            if pairs["nodename"].upper() == "DEFAULT":
                default = {k: v for k, v in pairs.items() if k != "nodename"}
                continue
            conf.nodes.append((number, {**default, **pairs}))
        elif "partitionname" in pairs:
            if pairs["partitionname"].upper() == "DEFAULT":
                continue
            conf.partitions.append((number, pairs))
        else:
            for key, value in pairs.items():
                conf.settings[key] = (number, value)
    return conf


def _whole(path, number, key, value, low=0):
    if not re.fullmatch(r"\d+", value or "") or int(value) < low:
        raise ConfigError(f"{path}, line {number}: {key}={value!r}: expected a whole number >= {low}")
    return int(value)


def gres_gpus(path: str, number: int, text: str) -> int:
    """The GPUs a ``Gres=`` value gives a node (``gpu:4``, ``gpu:a100:4``, several entries added up)."""
    total = 0
    for entry in filter(None, text.split(",")):
        parts = entry.split(":")
        if parts[0] != "gpu":
            continue
        count = parts[-1].split("(")[0] if len(parts) > 1 else "1"
        count = count.lower()
        scale = 1
        if count and count[-1] in "kmg":
            scale = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[count[-1]]
            count = count[:-1]
        if not count.isdigit():
            raise ConfigError(f"{path}, line {number}: Gres={text!r}: expected gpu:N or gpu:TYPE:N")
        total += int(count) * scale
    return total


def _node_records(conf: SlurmConf) -> list[Node]:
    out = []
    for number, pairs in conf.nodes:
        for key in pairs:
            if key not in _NODE_INT and key not in ("nodename", "gres", "feature", "features", "nodehostname",
                                                    "nodeaddr", "state", "weight", "port") and key not in conf.ignored:
                conf.ignored.append(key)
        ints = {k: _whole(conf.path, number, _NODE_INT[k], pairs[k], 1 if k != "realmemory" else 0)
                for k in _NODE_INT if k in pairs}
        if "cpus" in ints or "procs" in ints:
            cores = ints.get("cpus", ints.get("procs"))
        elif any(k in ints for k in ("sockets", "corespersocket", "threadspercore", "boards", "socketsperboard")):
            sockets = ints.get("sockets") or ints.get("boards", 1) * ints.get("socketsperboard", 1)
            cores = sockets * ints.get("corespersocket", 1) * ints.get("threadspercore", 1)
        else:
            cores = 1
        memory = ints.get("realmemory", 1)
        gpus = gres_gpus(conf.path, number, pairs.get("gres", ""))
        features = tuple(f for f in (pairs.get("features") or pairs.get("feature") or "").split(",") if f)
        try:
            names = expand_hostlist(pairs["nodename"])
        except ConfigError as exc:
            raise ConfigError(f"{conf.path}, line {number}: NodeName={pairs['nodename']!r}: {exc}") from None
        klass = re.sub(r"[\d\[\]\-,]+$", "", pairs["nodename"]) or None
        for name in names:
            out.append(Node(name, cores, memory, gpus, features, klass or name))
    return out


def _digits_right(a, i, b, j):
    # strnatcmp's compare_right: the longest run of digits wins, else the first difference
    bias = 0
    while True:
        da, db = i < len(a) and a[i].isdigit(), j < len(b) and b[j].isdigit()
        if not da and not db:
            return bias
        if not da:
            return -1
        if not db:
            return 1
        if a[i] < b[j] and not bias:
            bias = -1
        elif a[i] > b[j] and not bias:
            bias = 1
        i, j = i + 1, j + 1


def _digits_left(a, i, b, j):
    # strnatcmp's compare_left (a run with a leading zero): the first different digit wins
    while True:
        da, db = i < len(a) and a[i].isdigit(), j < len(b) and b[j].isdigit()
        if not da and not db:
            return 0
        if not da:
            return -1
        if not db:
            return 1
        if a[i] != b[j]:
            return -1 if a[i] < b[j] else 1
        i, j = i + 1, j + 1


def strnatcmp(a: str, b: str) -> int:
    """Slurm's ``strnatcmp`` (``src/common/strnatcmp.c``, Martin Pool's natural order), the order in
    which slurmctld numbers its nodes: -1, 0 or 1. Runs of digits compare as numbers (``n2 < n10``),
    or digit by digit when either starts with 0 (``n01 < n1``, ``n007 < n01``); white space is skipped;
    other characters compare by code (case counts: ``B1 < a1``)."""
    i = j = 0
    while True:
        while i < len(a) and a[i].isspace():
            i += 1
        while j < len(b) and b[j].isspace():
            j += 1
        ca, cb = a[i] if i < len(a) else "", b[j] if j < len(b) else ""
        if ca.isdigit() and cb.isdigit():
            r = _digits_left(a, i, b, j) if "0" in (ca, cb) else _digits_right(a, i, b, j)
            if r:
                return r
        if not ca and not cb:
            return 0
        if ca != cb:
            return -1 if ca < cb else 1
        i, j = i + 1, j + 1


#: the sort key of Slurm's node order: ``sorted(names, key=slurm_node_key)``
slurm_node_key = functools.cmp_to_key(strnatcmp)


@dataclass(frozen=True)
class SlurmPartition:
    """The nodes of one partition of a ``slurm.conf`` (:func:`read_partition`); :meth:`pbf.Cluster.from_slurm_conf`
    makes a cluster of them."""
    name: str
    nodes: tuple[Node, ...]
    #: the partition's ``DefMemPerCPU`` (else the file's; 0: none), MB
    default_mem_per_core_mb: int


def read_partition(path: str | os.PathLike, partition: str | None = None, *,
                   node_order: str = "name") -> SlurmPartition:
    """One partition's nodes of a ``slurm.conf`` (``partition``, else the ``Default=YES`` one, else every
    node), numbered as slurmctld numbers them (``node_order="name"``: by :func:`strnatcmp` of their names;
    ``"file"``: the NodeName lines' order), with the partition's ``DefMemPerCPU``."""
    if node_order not in NODE_ORDERS:
        raise ConfigError(f"node_order must be one of {', '.join(NODE_ORDERS)}, got {node_order!r}")
    conf = read_slurm_conf(path)
    nodes = _node_records(conf)
    if not nodes:
        raise ConfigError(f"{conf.path}: no NodeName lines")
    if node_order == "name":
        nodes.sort(key=lambda n: slurm_node_key(n.name))
    by_name = {n.name: n for n in nodes}
    chosen = None
    if partition is not None:
        chosen = next((p for p in conf.partitions if p[1]["partitionname"] == partition), None)
        if chosen is None:
            names = ", ".join(p[1]["partitionname"] for p in conf.partitions) or "none"
            raise ConfigError(f"{conf.path}: no partition {partition!r} (partitions: {names})")
    else:
        chosen = next((p for p in conf.partitions if p[1].get("default", "").upper() == "YES"), None)
    name = os.path.splitext(os.path.basename(conf.path))[0]
    if chosen is not None:
        number, pairs = chosen
        spec = pairs.get("nodes", "")
        if spec.upper() == "ALL" or not spec:
            picked = nodes
        else:
            picked, seen = [], set()
            for node_name in expand_hostlist(spec):
                if node_name not in by_name:
                    raise ConfigError(f"{conf.path}, line {number}: Nodes={spec!r}: node {node_name!r} has no "
                                      "NodeName line")
                if node_name not in seen:
                    seen.add(node_name)
                    picked.append(by_name[node_name])
            # a partition's nodes keep the cluster's numbering (slurmctld's node bitmaps)
            order = {n.name: i for i, n in enumerate(nodes)}
            picked.sort(key=lambda n: order[n.name])
        name = pairs["partitionname"]
        default_mem = pairs.get("defmempercpu") or conf.settings.get("defmempercpu", (0, "0"))[1]
        line = number
    else:
        picked = nodes
        line, default_mem = conf.settings.get("defmempercpu", (0, "0"))
    mem = _whole(conf.path, line, "DefMemPerCPU", default_mem or "0")
    return SlurmPartition(name=name, nodes=tuple(picked), default_mem_per_core_mb=mem)
