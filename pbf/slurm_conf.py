"""A cluster of nodes read from Slurm's own configuration: ``NodeName`` and ``PartitionName`` lines of a
``slurm.conf`` (or a file of such lines), as sites write them.

* ``NodeName=DEFAULT ...`` sets values for the ``NodeName`` lines after it; a later DEFAULT line adds to
  (and overrides) the values of the earlier ones, as slurmctld merges them. ``PartitionName=DEFAULT``
  likewise for partitions.
* A node's units are its CPUs: ``CPUs=`` (or its old name ``Procs=``), else
  ``Boards x Sockets x CoresPerSocket x ThreadsPerCore`` (``SocketsPerBoard`` too), else 1 (Slurm's
  default). ``RealMemory=`` is in MB (default 1, as Slurm). ``Gres=gpu:4``, ``gpu:a100:4`` (several
  entries separated by commas; the GPUs add up); other kinds (``nvme:2``, ``mps:400``) are the node's
  generic resources (:mod:`pbf.gres`). ``Feature=``/``Features=`` a comma list.
* Node names use Slurm's ranges (``dwarf[01-39]``, ``n[1-3,7]``, ``a[1-2]b[1-2]``), counted before they
  are expanded: at most :data:`pbf.node.MAX_RANGE` names a range and :data:`pbf.node.MAX_SLURM_NODES`
  nodes in the file (Slurm's own limits); a node named twice is refused, as slurmctld refuses it.
* ``PartitionName=NAME Nodes=... [Default=YES] [DefMemPerCPU=MB]``: the cluster is one partition's
  nodes (the one asked for, else the ``Default=YES`` one, else every node). ``Nodes=ALL`` is every
  node. The partition's ``DefMemPerCPU`` (else the file's) is kept as the cluster's default memory
  per core: a job that asks no memory gets it, as under ``CR_Core_Memory``.
* Nodes are numbered **by name**, as slurmctld numbers them whatever the order of the NodeName lines
  (``_sort_node_record_table_ptr`` / ``_sort_nodes_by_name`` in ``src/slurmctld/read_config.c`` of Slurm
  22.05, ``_reorder_nodes_by_name`` in 17.02: ``strnatcmp``, a natural order in which ``a1 < b1 < n2 <
  n10``, see :func:`strnatcmp`). That order is what cons_res's best fit walks; ``node_order="file"``
  keeps the lines' order instead.
* The text is read as slurmctld's parser reads it (``src/common/parse_config.c``): a line ends at a
  ``#`` not escaped by ``\\``; a line ending in an odd number of ``\\`` continues on the next (also on
  the last line of the file); a ``\\`` escapes the character after it; ``KEY=VALUE`` items may have
  blanks around ``=`` and a value in double quotes (``Reason="disk failed"``); keys are case-blind.
  ``include FILE`` (or ``Include``) reads FILE in place, a relative name taken from the folder of the
  ``slurm.conf`` (``get_extra_conf_path`` in ``src/common/read_config.c``), ``%c`` standing for the
  ``ClusterName``; pbf refuses an include of a file already being read and more than
  :data:`MAX_INCLUDE_DEPTH` levels or :data:`MAX_CONF_FILES` files (slurmctld has no limit and recurses
  until it crashes). Other keys
  are read past (and listed in :attr:`SlurmConf.ignored`).

Every number goes through :mod:`pbf.bounded` (ASCII digits, in the range Slurm or pbf's core takes).
Errors name the file (the included one, where it is), the line, the key as the file spells it, the
value and what was expected. A file of more than :data:`MAX_CONF_BYTES` in all (with what it includes)
or with a NUL byte is refused.
"""
from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .bounded import parse_whole, where
from .errors import ConfigError
from .gres import MAX_NODE_GRES, good_gres_name
from .node import (
    MAX_NODE_CORES,
    MAX_NODE_GPUS,
    MAX_NODE_MEMORY_MB,
    MAX_SLURM_NODES,
    MAX_UNITS,
    Node,
    _good_name,
    count_hostlist,
    expand_hostlist,
    good_gpu_type,
)

__all__ = ["SlurmConf", "SlurmPartition", "ConfLine", "Pairs", "read_slurm_conf", "read_partition", "strnatcmp",
           "slurm_node_key", "conf_lines", "conf_pairs", "conf_items", "gres_gpus", "gres_gpu_type", "gres_others",
           "node_lines", "NODE_ORDERS",
           "MAX_CONF_BYTES", "MAX_CONF_FILES", "MAX_INCLUDE_DEPTH", "MAX_FEATURES"]

#: how nodes read from a slurm.conf are numbered: ``name`` (Slurm's, by :func:`strnatcmp`) or ``file``
NODE_ORDERS = ("name", "file")
#: the most bytes pbf reads for one slurm.conf with every file it includes (16 MiB: a site's file with
#: thousands of node lines has well under 1 MiB)
MAX_CONF_BYTES = 1 << 24
#: the deepest chain of ``include`` lines pbf follows (a file that includes itself is refused at once)
MAX_INCLUDE_DEPTH = 16
#: the most files pbf reads for one slurm.conf, itself included (a site's includes a handful)
MAX_CONF_FILES = 1024
#: the most distinct node features pbf's node model holds (a bit each in a 64-bit word, one kept apart)
MAX_FEATURES = 63

#: node keys read as whole numbers: (the key as Slurm spells it, smallest, largest)
_NODE_INT = {"cpus": ("CPUs", 1, MAX_NODE_CORES), "procs": ("Procs", 1, MAX_NODE_CORES),
             "boards": ("Boards", 1, MAX_NODE_CORES), "sockets": ("Sockets", 1, MAX_NODE_CORES),
             "socketsperboard": ("SocketsPerBoard", 1, MAX_NODE_CORES),
             "corespersocket": ("CoresPerSocket", 1, MAX_NODE_CORES),
             "threadspercore": ("ThreadsPerCore", 1, MAX_NODE_CORES),
             "realmemory": ("RealMemory", 0, MAX_NODE_MEMORY_MB)}
#: Slurm's node Weight is a uint32 (``INFINITE``/``UNLIMITED`` allowed)
_WEIGHT_MAX = (1 << 32) - 1
#: lines whose first key starts a record of its own kind (the rest of the line is that record's)
_RECORD_KEYS = frozenset(("nodeset", "downnodes", "frontendname", "switchname"))


class ConfLine(int):
    """A line number that knows its file (``path``): a slurm.conf or a file it includes. It prints and
    compares as the number."""
    path: str

    def __new__(cls, number: int, path: str):
        obj = super().__new__(cls, number)
        obj.path = path
        return obj

    def __getnewargs__(self):
        return int(self), self.path


class Pairs(dict):
    """The ``KEY=VALUE`` items of a line (keys lower-cased), with where each came from: ``spelled[key]``
    is ``(line, key as the file spells it)`` (a DEFAULT line's, for values it gave)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.spelled: dict = {}

    def merged(self, other: Pairs) -> Pairs:
        """These pairs with ``other``'s over them."""
        out = Pairs({**self, **other})
        out.spelled = {**self.spelled, **other.spelled}
        return out

    def origin(self, key: str, line: int, spelled: str) -> tuple[int, str]:
        """(line, spelling) of ``key``; ``line`` and ``spelled`` when unknown."""
        return self.spelled.get(key, (line, spelled))


@dataclass
class SlurmConf:
    """What a ``slurm.conf`` says about nodes and partitions (keys lower-cased)."""
    path: str
    nodes: list = field(default_factory=list)        # (line, Pairs) in file order, DEFAULTs applied
    partitions: list = field(default_factory=list)   # (line, Pairs), PartitionName=DEFAULT applied
    settings: dict = field(default_factory=dict)     # other KEY=VALUE lines: key -> (line, value)
    ignored: list = field(default_factory=list)      # keys of node lines pbf does not use
    #: each setting's (line, key as the file spells it)
    origins: dict = field(default_factory=dict)
    #: the files read: the slurm.conf, then each file it includes
    files: list = field(default_factory=list)

    def at(self, key: str) -> tuple[int | None, str]:
        """(line, spelling) of a setting (None and the key when the file does not set it)."""
        return self.origins.get(key, (None, key))


def _at(path: str, line) -> str:
    """``FILE, line N`` of a line number (the included file's, for a :class:`ConfLine`)."""
    return f"{getattr(line, 'path', path)}, line {line}" if line is not None else f"{path}"


def _path_of(path: str, line) -> str:
    return getattr(line, "path", path)


def _strip_comment(line: str) -> str:
    # slurmctld's _strip_comments: a '#' after an even number of backslashes starts a comment
    i = line.find("#")
    while i >= 0:
        j = i
        while j > 0 and line[j - 1] == "\\":
            j -= 1
        if (i - j) % 2 == 0:
            return line[:i]
        i = line.find("#", i + 1)
    return line


_ESCAPE = re.compile(r"\\(.?)", re.S)
_INCLUDE = re.compile(r"include\s", re.I)
_CLUSTER = re.compile(r"(?:^|\s)clustername\s*=\s*(?:\"([^\"]*)\"|(\S+))", re.I)


def conf_lines(path: str | os.PathLike) -> Iterator[tuple[ConfLine, str]]:
    """``(line, text)`` of each logical line of a ``slurm.conf`` and the files it includes, in the order
    slurmctld reads them: comments cut at ``#``, lines ending in ``\\`` joined with the next (the last
    line's too), escapes removed, blank lines left out, ``include FILE`` lines replaced by FILE's lines.
    ``line`` is a :class:`ConfLine` (its number, the first of a joined group, and its file)."""
    yield from _lines(os.fspath(path), {})


def _lines(top: str, state: dict) -> Iterator[tuple[ConfLine, str]]:
    state.update(bytes=0, cluster=None, stack=[], files=[])
    yield from _file_lines(top, top, state, None)


def _read_bytes(path: str, state: dict, included_at) -> bytes:
    if len(state["files"]) >= MAX_CONF_FILES:
        raise ConfigError(f"{included_at}: include {os.path.basename(path)!r}: expected at most {MAX_CONF_FILES:,} "
                          "files read in all (the slurm.conf and the files it includes)")
    left = MAX_CONF_BYTES - state["bytes"]
    try:
        with open(path, "rb") as fh:
            data = fh.read(left + 1)
    except OSError as exc:
        if included_at is not None:
            raise ConfigError(f"{included_at}: cannot read {path!r}: {exc.strerror}") from None
        raise ConfigError(f"cannot read {path!r}: {exc.strerror}") from None
    state["bytes"] += len(data)
    if len(data) > left:
        raise ConfigError(f"{path}: more than {MAX_CONF_BYTES:,} bytes (with the files it is included from "
                          "or includes): expected a slurm.conf (a site's has well under 1 MB)")
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise ConfigError(f"{path}, line {line}: a NUL byte: expected text (is {os.path.basename(path)!r} a "
                          "slurm.conf?)")
    return data


def _file_lines(path: str, top: str, state: dict, included_at) -> Iterator[tuple[ConfLine, str]]:
    real = os.path.realpath(path)
    data = _read_bytes(path, state, included_at)
    state["files"].append(path)
    state["stack"].append(real)
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")     # (a byte-order mark some editors add)
    buf, first = "", None
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    for number, raw in enumerate(physical, 1):
        line = (_strip_comment(raw) if "#" in raw else raw).rstrip()
        if not line and not buf:
            first = None                # a blank line, nothing pending: the common case made cheap
            continue
        if first is None:
            first = number
        if (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            buf += line[:-1]            # slurmctld joins the next line on directly
            if number < len(physical):
                continue
            line = ""                   # the last line ended in '\': its text is read all the same
        else:
            buf += line
        logical = _ESCAPE.sub(r"\1", buf).strip()
        start, buf, first = ConfLine(first, path), "", None
        if not logical:
            continue
        if _INCLUDE.match(logical):
            yield from _include(logical, start, top, state)
            continue
        m = _CLUSTER.search(logical)
        if m:
            state["cluster"] = (m.group(1) if m.group(1) is not None else m.group(2)).lower()
        yield start, logical
    state["stack"].pop()


def _include(text: str, line: ConfLine, top: str, state: dict) -> Iterator[tuple[ConfLine, str]]:
    at = _at(top, line)
    words = text.split()
    if len(words) != 2:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ConfigError(f"{at}: {shown!r}: expected include FILE (one file name)")
    name = words[1]
    if "*" in name:
        raise ConfigError(f"{at}: include {name!r}: expected a file name (Slurm does not expand glob patterns; "
                          "slurmctld skips such a line with an error)")
    if "%c" in name:
        if state["cluster"] is None:
            raise ConfigError(f"{at}: include {name!r}: %c stands for the ClusterName, and no ClusterName line "
                              "comes before it")
        name = name.replace("%c", state["cluster"])
    # slurmctld takes a relative name from the slurm.conf's folder (get_extra_conf_path), at any depth
    full = name if os.path.isabs(name) else os.path.join(os.path.dirname(top), name)
    if os.path.realpath(full) in state["stack"]:
        raise ConfigError(f"{at}: include {name!r}: {full!r} is already being read (it includes itself): "
                          "expected a file not yet open")
    if len(state["stack"]) > MAX_INCLUDE_DEPTH:
        raise ConfigError(f"{at}: include {name!r}: expected at most {MAX_INCLUDE_DEPTH} levels of include")
    yield from _file_lines(full, top, state, at)


_ITEM = re.compile(r'([A-Za-z0-9_.]+)[ \t]*([-*+/]?)=([ \t]*)(?:"([^"]*)"(?=\s|$)|(\S*))')


def conf_items(path: str, number: int, text: str) -> list[tuple[str, str]]:
    """The ``(KEY, VALUE)`` items of one line, keys as the file spells them (slurmctld's ``KEY=VALUE``:
    blanks allowed around ``=``, a value in double quotes may hold blanks). A ConfigError names the file,
    line and item that is not ``KEY=VALUE``."""
    out, pos, n = [], 0, len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            return out
        m = _ITEM.match(text, pos)
        if not m:
            item = text[pos:].split(None, 1)[0]
            shown = item if len(item) <= 60 else item[:57] + "..."
            raise ConfigError(f"{_at(path, number)}: {shown!r}: expected KEY=VALUE")
        key, op, blank = m.group(1), m.group(2), m.group(3)
        value = m.group(4) if m.group(4) is not None else m.group(5)
        end = m.end()
        if blank and m.group(4) is None and "=" in value:
            # "Key= Other=1": slurmctld would take "Other=1" as Key's value; pbf takes Key as empty
            value, end = "", m.start(5)
        if op:
            raise ConfigError(f"{_at(path, number)}: {key}{op}={value!r}: expected KEY=VALUE (pbf does not read "
                              f"Slurm's {op}= forms)")
        out.append((key, value))
        pos = end


def conf_pairs(path: str, number: int, text: str) -> Pairs:
    """The ``KEY=VALUE`` items of one line (keys lower-cased; :attr:`Pairs.spelled` keeps each key's
    spelling and line); a ConfigError names the file and line of an item without ``=``."""
    out = Pairs()
    for key, value in conf_items(path, number, text):
        out[key.lower()] = value
        out.spelled[key.lower()] = (number, key)
    return out


def read_slurm_conf(path: str | os.PathLike) -> SlurmConf:
    """Read the node, partition and other lines of a ``slurm.conf`` (and the files it includes)."""
    path = os.fspath(path)
    conf = SlurmConf(path)
    state: dict = {}
    node_default, part_default = Pairs(), Pairs()
    for number, text in _lines(path, state):
        pairs = conf_pairs(path, number, text)
        first = next(iter(pairs))
        if first == "nodename":
            if pairs["nodename"].upper() == "DEFAULT":
                pairs.pop("nodename")
                node_default = node_default.merged(pairs)       # slurmctld merges DEFAULT lines
                continue
            conf.nodes.append((number, node_default.merged(pairs)))
        elif first == "partitionname":
            if pairs["partitionname"].upper() == "DEFAULT":
                pairs.pop("partitionname")
                part_default = part_default.merged(pairs)
                continue
            conf.partitions.append((number, part_default.merged(pairs)))
        elif first in _RECORD_KEYS:
            # NodeSet=, DownNodes=, ...: a record of its own; kept whole as one setting
            conf.settings[first] = (number, text.split("=", 1)[1].strip())
            conf.origins[first] = pairs.spelled[first]
        else:
            for key, value in pairs.items():
                conf.settings[key] = (number, value)
                conf.origins[key] = pairs.spelled[key]
    conf.files = state["files"]
    return conf


# ---- numbers and nodes


def _number(path: str, line, key: str, value: str, lo: int, hi: int, what: str = "") -> int:
    """``value`` as a whole number from ``lo`` to ``hi`` (:func:`pbf.bounded.parse_whole`); a ConfigError
    naming the file, line, key and the range otherwise."""
    try:
        return parse_whole(value, lo, hi)
    except ValueError as exc:
        raise ConfigError(where(_path_of(path, line), line, key, value, f"{exc}{what}")) from None


_GRES_SCALE = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


def gres_gpus(path: str, number: int, text: str, key: str = "Gres") -> int:
    """The GPUs a ``Gres=`` value gives a node (``gpu:4``, ``gpu:a100:4``, several entries added up; a
    count may end in K, M or G, 1024 each as Slurm reads it), at most :data:`pbf.node.MAX_NODE_GPUS`."""
    expected = (f"gpu:N or gpu:TYPE:N (entries separated by commas), N a whole number of GPUs, at most "
                f"{MAX_NODE_GPUS:,} a node")
    total = 0
    for entry in filter(None, text.split(",")):
        parts = entry.split(":")
        if parts[0] != "gpu":
            continue
        count = parts[-1].split("(")[0] if len(parts) > 1 else "1"
        scale = _GRES_SCALE.get(count[-1:].lower(), 1)
        if scale > 1:
            count = count[:-1]
        if not (count.isascii() and count.isdigit()) or len(count) > 19:
            raise ConfigError(where(_path_of(path, number), number, key, text, expected))
        total += int(count) * scale
        if total > MAX_NODE_GPUS:
            raise ConfigError(where(_path_of(path, number), number, key, text, expected))
    return total


def gres_others(path: str, number: int, text: str, key: str = "Gres") -> tuple[tuple[str, int], ...]:
    """A node's generic resources other than GPUs in a ``Gres=`` value (``nvme:2``, ``mps:400``,
    ``bandwidth:lustre:4G``: a kind's entries added up, its types counted toward it, a count ending in
    K, M or G 1024 each), as ``(name, count)`` pairs in name order (:mod:`pbf.gres`)."""
    expected = ("NAME:N or NAME:TYPE:N (entries separated by commas), NAME of letters, digits, '_', '-', '.' "
                f"and N a whole number, at most {MAX_NODE_GRES:,} a node")
    counts = {}
    for entry in filter(None, text.split(",")):
        parts = entry.split(":")
        if parts[0] == "gpu":
            continue
        count = parts[-1].split("(")[0] if len(parts) > 1 else "1"
        scale = _GRES_SCALE.get(count[-1:].lower(), 1)
        if scale > 1:
            count = count[:-1]
        if not good_gres_name(parts[0]) or not (count.isascii() and count.isdigit()) or len(count) > 19:
            raise ConfigError(where(_path_of(path, number), number, key, text, expected))
        counts[parts[0]] = counts.get(parts[0], 0) + int(count) * scale
        if counts[parts[0]] > MAX_NODE_GRES:
            raise ConfigError(where(_path_of(path, number), number, key, text, expected))
    return tuple(sorted(counts.items()))


def gres_gpu_type(path: str, number: int, text: str, key: str = "Gres") -> str:
    """The type of the GPUs a ``Gres=`` value gives a node (``gpu:a100:4`` -> ``a100``; ``gpu:4`` -> "";
    a node of several types, ``gpu:a100:2,gpu:v100:2`` -> ``a100,v100``: pbf plans one GPU count a node,
    which a job asking any of its types may use, and says so)."""
    types = []
    for entry in filter(None, text.split(",")):
        parts = entry.split(":")
        if parts[0] == "gpu" and len(parts) > 2 and parts[1] not in types:
            if not good_gpu_type(parts[1]):
                raise ConfigError(where(_path_of(path, number), number, key, text,
                                        "gpu:TYPE:N with TYPE made of letters, digits, '_', '-' and '.'"))
            types.append(parts[1])
    return ",".join(types)


def _node_numbers(conf: SlurmConf, line, pairs: Pairs) -> tuple[int, int, int]:
    """(CPUs, RealMemory, GPUs) of a NodeName line, each in the range pbf's core takes."""
    ints = {}
    for key, (spelled, lo, hi) in _NODE_INT.items():
        if key in pairs:
            at, name = pairs.origin(key, line, spelled)
            ints[key] = _number(conf.path, at, name, pairs[key], lo, hi)
    if "cpus" in ints or "procs" in ints:
        cores = ints.get("cpus", ints.get("procs"))
    elif any(k in ints for k in ("sockets", "corespersocket", "threadspercore", "boards", "socketsperboard")):
        keys = (["sockets"] if "sockets" in ints else [k for k in ("boards", "socketsperboard") if k in ints]) + [
            k for k in ("corespersocket", "threadspercore") if k in ints]
        cores = 1
        for k in keys:
            cores *= ints[k]
        if cores > MAX_NODE_CORES:
            said = " ".join(f"{pairs.origin(k, line, _NODE_INT[k][0])[1]}={pairs[k]}" for k in keys)
            raise ConfigError(f"{_at(conf.path, line)}: {said}: {cores:,} CPUs; expected at most "
                              f"{MAX_NODE_CORES:,} CPUs a node")
    else:
        cores = 1
    memory = ints.get("realmemory", 1)
    at, name = pairs.origin("gres", line, "Gres")
    gpus = gres_gpus(conf.path, at, pairs.get("gres", ""), name)
    if "weight" in pairs and pairs["weight"].upper() not in ("INFINITE", "UNLIMITED"):
        at, name = pairs.origin("weight", line, "Weight")
        _number(conf.path, at, name, pairs["weight"], 0, _WEIGHT_MAX, " (Slurm's node Weight, or INFINITE)")
    return cores, memory, gpus


def _names(conf: SlurmConf, line, pairs: Pairs, seen: dict) -> list[str]:
    """The node names of a NodeName line: counted before they are made (at most
    :data:`pbf.node.MAX_SLURM_NODES` in the file, as slurmctld: ``seen`` holds the names of the lines
    before), each name good and named once in the file."""
    at, key = pairs.origin("nodename", line, "NodeName")
    expr = pairs["nodename"]
    path = _path_of(conf.path, at)
    if expr.upper() == "ALL":
        raise ConfigError(where(path, at, key, expr, "node names other than ALL (a word Slurm reserves)"))
    try:
        total = len(seen) + count_hostlist(expr)
        if total > MAX_SLURM_NODES:
            raise ValueError(f"at most {MAX_SLURM_NODES:,} nodes in the file (Slurm's MAX_SLURM_NODES); the "
                             f"NodeName lines up to this one name {total:,}")
        names = expand_hostlist(expr, MAX_SLURM_NODES)
    except ValueError as exc:
        raise ConfigError(where(path, at, key, expr, str(exc))) from None
    for name in names:
        if not _good_name(name):
            raise ConfigError(where(path, at, key, expr, "node names of at most 255 printable characters "
                                                         f"without spaces, commas or brackets, not {name!r}"))
        if name in seen:
            other = seen[name]
            there = f"line {other}" + (f" of {other.path}" if getattr(other, "path", path) != path else "")
            raise ConfigError(where(path, at, key, expr, f"each node named once (node {name!r} is also on "
                                                         f"{there}; slurmctld refuses a node named twice)"))
        seen[name] = at
    return names


def node_lines(conf: SlurmConf) -> list[tuple[int, Pairs, list[str]]]:
    """``(line, pairs, names)`` of each NodeName line of ``conf``, its numbers checked before its names
    are made (:func:`_names`)."""
    out, seen = [], {}
    for line, pairs in conf.nodes:
        _node_numbers(conf, line, pairs)
        out.append((line, pairs, _names(conf, line, pairs, seen)))
    return out


def _node_records(conf: SlurmConf) -> list[Node]:
    out, seen = [], {}
    for number, pairs in conf.nodes:
        for key in pairs:
            if key not in _NODE_INT and key not in ("nodename", "gres", "feature", "features", "nodehostname",
                                                    "nodeaddr", "state", "weight", "port") and key not in conf.ignored:
                conf.ignored.append(key)
        cores, memory, gpus = _node_numbers(conf, number, pairs)
        at, key = pairs.origin("gres", number, "Gres")
        gpu_type = gres_gpu_type(conf.path, at, pairs.get("gres", ""), key) if gpus else ""
        gres = gres_others(conf.path, at, pairs.get("gres", ""), key)
        names = _names(conf, number, pairs, seen)
        features = tuple(f for f in (pairs.get("features") or pairs.get("feature") or "").split(",") if f)
        klass = pairs["nodename"].rstrip("0123456789[]-,") or None
        for name in names:
            out.append(Node(name, cores, memory, gpus, features, klass or name, gpu_type, gres))
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


def read_partition(path: str | os.PathLike | SlurmConf, partition: str | None = None, *,
                   node_order: str = "name") -> SlurmPartition:
    """One partition's nodes of a ``slurm.conf`` (``partition``, else the ``Default=YES`` one, else every
    node), numbered as slurmctld numbers them (``node_order="name"``: by :func:`strnatcmp` of their names;
    ``"file"``: the NodeName lines' order), with the partition's ``DefMemPerCPU``. ``path`` may be a
    :class:`SlurmConf` already read."""
    if node_order not in NODE_ORDERS:
        raise ConfigError(f"node_order must be one of {', '.join(NODE_ORDERS)}, got {node_order!r}")
    conf = path if isinstance(path, SlurmConf) else read_slurm_conf(path)
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
            names = ", ".join(p[1]["partitionname"] for p in conf.partitions[:20]) or "none"
            more = f" and {len(conf.partitions) - 20} more" if len(conf.partitions) > 20 else ""
            raise ConfigError(f"{conf.path}: no partition {partition!r} (partitions: {names}{more})")
    else:
        chosen = next((p for p in conf.partitions if p[1].get("default", "").upper() == "YES"), None)
    name = os.path.splitext(os.path.basename(conf.path))[0]
    if chosen is not None:
        number, pairs = chosen
        spec = pairs.get("nodes", "")
        if spec.upper() == "ALL" or not spec:
            picked = nodes
        else:
            at, key = pairs.origin("nodes", number, "Nodes")
            try:
                listed = expand_hostlist(spec, MAX_SLURM_NODES)
            except ValueError as exc:
                raise ConfigError(where(_path_of(conf.path, at), at, key, spec, str(exc))) from None
            picked, seen = [], set()
            for node_name in listed:
                if node_name not in by_name:
                    shown = spec if len(spec) <= 60 else spec[:57] + "..."
                    raise ConfigError(f"{_at(conf.path, at)}: {key}={shown!r}: node {node_name!r} has no NodeName "
                                      "line (expected nodes given on NodeName lines, or ALL)")
                if node_name not in seen:
                    seen.add(node_name)
                    picked.append(by_name[node_name])
            # a partition's nodes keep the cluster's numbering (slurmctld's node bitmaps)
            order = {n.name: i for i, n in enumerate(nodes)}
            picked.sort(key=lambda n: order[n.name])
        name = pairs["partitionname"]
        if "defmempercpu" in pairs:
            (line, key), default_mem = pairs.origin("defmempercpu", number, "DefMemPerCPU"), pairs["defmempercpu"]
        else:
            (line, key), default_mem = conf.at("defmempercpu"), conf.settings.get("defmempercpu", (0, "0"))[1]
    else:
        picked = nodes
        (line, key), default_mem = conf.at("defmempercpu"), conf.settings.get("defmempercpu", (0, "0"))[1]
    mem = _number(conf.path, line, "DefMemPerCPU" if key == "defmempercpu" else key, default_mem, 0,
                  MAX_NODE_MEMORY_MB, " MB")
    units = sum(n.cores for n in picked)
    if units > MAX_UNITS:
        raise ConfigError(f"{conf.path}: the nodes of {'partition ' + repr(name) if chosen else 'the file'} have "
                          f"{units:,} CPUs in all: expected at most {MAX_UNITS:,} (the largest cluster pbf "
                          "schedules)")
    feats = {f for n in picked for f in n.features}
    if len(feats) > MAX_FEATURES:
        raise ConfigError(f"{conf.path}: the nodes of {'partition ' + repr(name) if chosen else 'the file'} have "
                          f"{len(feats)} distinct features: expected at most {MAX_FEATURES} (pbf's node model "
                          "holds a bit for each)")
    return SlurmPartition(name=name, nodes=tuple(picked), default_mem_per_core_mb=mem)
