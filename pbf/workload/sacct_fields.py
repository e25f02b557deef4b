"""The fields of a Slurm accounting record that need parsing of their own (:mod:`pbf.workload.sacct`
reads the rest): array element lists (``123_[1-9,20%4]``), ``SubmitLine`` options and dependencies,
``TRES`` and ``GRES`` strings, and the dependency parents of the jobs read."""
from __future__ import annotations

import os
import re
from collections import Counter

import numpy as np

from ..bounded import parse_whole

#: the largest array index pbf reads (Slurm's MaxArraySize tops at 4,000,001)
_MAX_ARRAY_INDEX = 4_000_000
#: the texts sacct prints for an empty value
_EMPTY = frozenset(("", "(null)", "None", "Unknown", "N/A", "n/a"))
#: the record of a job, in the order the reader packs it (all numbers, one float64 each)
_R = ("submit", "wait", "run", "req_procs", "req_mem", "req_time", "status", "user", "group", "queue", "partition",
      "mem_core_mb", "mem_node_mb", "gpus", "nodes_min", "nodes_max", "constraint", "alloc_procs", "gpu_type",
      "licenses", "reason", "flags", "exclusive", "slurm_id", "array_job", "het_job", "dependency", "account",
      "reservation", "gres")
#: columns another column gives the same information as (named as such in the report)
_SAME_AS = {"elapsed": "ElapsedRaw", "timelimit": "TimelimitRaw", "uid": "User", "gid": "Group", "qosraw": "QOS",
            "ncpus": "AllocCPUS", "nnodes": "AllocNodes", "end": "Start + Elapsed", "cputime": "Elapsed x AllocCPUS",
            "cputimeraw": "Elapsed x AllocCPUS"}

# SubmitLine options (sbatch, srun, salloc). Short options and the long ones they stand for.
_SHORT = {"a": "array", "A": "account", "b": "begin", "B": "extra-node-info", "c": "cpus-per-task",
          "C": "constraint", "d": "dependency", "D": "chdir", "e": "error", "E": "preserve-env", "F": "nodefile",
          "G": "gpus", "h": "help", "H": "hold", "i": "input", "I": "immediate", "J": "job-name", "k": "no-kill",
          "K": "kill-command", "l": "label", "L": "licenses", "m": "distribution", "M": "clusters", "n": "ntasks",
          "N": "nodes", "o": "output", "O": "overcommit", "p": "partition", "q": "qos", "Q": "quiet",
          "r": "relative", "s": "oversubscribe", "S": "core-spec", "t": "time", "T": "threads", "u": "unbuffered",
          "v": "verbose", "V": "version", "w": "nodelist", "W": "wait", "x": "exclude", "X": "disable-status",
          "Z": "no-allocate"}
_SHORT_VALUE = frozenset("aAbBcCdDeFGiJLmMnNopqrStTwx")
_LONG_VALUE = frozenset((
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint", "clusters",
    "comment", "constraint", "container", "container-id", "core-spec", "cores-per-socket", "cpu-bind", "cpu-freq",
    "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution", "error", "exclude",
    "export", "export-file", "extra", "extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
    "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "hint", "input", "job-name", "jobid", "licenses",
    "mail-type", "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "mpi",
    "network", "nice", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu",
    "ntasks-per-node", "ntasks-per-socket", "open-mode", "output", "partition", "power", "prefer", "priority",
    "profile", "qos", "reservation", "segment", "signal", "sockets-per-node", "switches", "thread-spec",
    "threads-per-core", "time", "time-min", "tmp", "tres-bind", "tres-per-task", "uid", "wckey", "wrap"))
#: options whose effect is in the dump's own columns (ReqCPUS, ReqMem, ReqNodes, ReqTRES, Timelimit, ...)
_FROM_COLUMNS = frozenset((
    "account", "array", "constraint", "cores-per-socket", "cpus-per-gpu", "cpus-per-task", "extra-node-info", "gpus",
    "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "job-name", "mem", "mem-per-cpu", "mem-per-gpu",
    "mincpus", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
    "partition", "qos", "sockets-per-node", "threads-per-core", "time", "tres-per-task", "licenses", "dependency",
    "exclusive", "reservation"))
#: options that do not change when or where a job runs (files, mail, environment, output, binding)
_NO_EFFECT = frozenset((
    "acctg-freq", "batch", "chdir", "comment", "container", "container-id", "cpu-bind", "cpu-freq",
    "disable-status", "error", "export", "export-file", "get-user-env", "gpu-bind", "gpu-freq", "help", "hint",
    "input", "kill-command", "kill-on-bad-exit", "label", "mail-type", "mail-user", "mem-bind", "mpi", "no-kill",
    "open-mode", "output", "parsable", "preserve-env", "profile", "propagate", "pty", "quiet", "relative",
    "signal", "tres-bind", "unbuffered", "usage", "verbose", "version", "wait", "wckey", "wrap", "x11", "overlap",
    "exact", "distribution", "threads", "task-epilog", "task-prolog", "epilog", "prolog", "multi-prog", "uid",
    "gid", "ignore-pbs", "test-only", "send-libs", "no-allocate", "jobid", "het-group", "accel-bind"))
_SUBMIT_COMMANDS = ("sbatch", "srun", "salloc")
_DEPENDENCY_KINDS = ("after", "afterany", "afterburstbuffer", "aftercorr", "afternotok", "afterok", "singleton",
                     "expand")
#: TRES a job's request gives that pbf models (others are counted as read and not modelled)
_TRES_MODELLED = ("cpu", "mem", "node", "gres/gpu")
_PARENS = re.compile(r"\([^)]*\)")


def _array_elements(spec: str) -> tuple[int, int | None]:
    """``(elements, throttle)`` of a pending array record's index list (``1-9``, ``1-3,5%2``, ``0-15:4``):
    counted without being expanded; ValueError if it is not one."""
    spec, pct, limit = spec.partition("%")
    throttle = parse_whole(limit, 0, _MAX_ARRAY_INDEX + 1) if pct else None
    if "..." in spec:
        # sacct cuts a long list at 64 characters (SLURM_BITSTR_LEN) and ends it with "...", over the
        # end of the last item shown: the items before it are counted
        spec = spec[:spec.index("...")].rpartition(",")[0]
    count = 0
    for item in spec.split(","):
        item = item.strip()
        span, colon, step = item.partition(":")
        lo, dash, hi = span.partition("-")
        first = parse_whole(lo, 0, _MAX_ARRAY_INDEX)
        last = parse_whole(hi, first, _MAX_ARRAY_INDEX) if dash else first
        count += (last - first) // (parse_whole(step, 1, _MAX_ARRAY_INDEX) if colon else 1) + 1
    return count, throttle


def _submit_options(text: str) -> list[tuple[str, str | None]] | None:
    """The options of a submit line (``sbatch -N 2 --exclusive job.sh``) as ``(long name, value)``, up
    to the script (or, after ``--wrap``, the long options only); None when the line is not an
    ``sbatch``/``srun``/``salloc`` line. sacct keeps the words joined by blanks, without the
    shell's quotes, so the line is split at blanks."""
    words = text.split()
    if not words or os.path.basename(words[0]) not in _SUBMIT_COMMANDS:
        return None
    out, i, wrapped = [], 1, False
    while i < len(words):
        word = words[i]
        if word == "--":
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if not eq and name in _LONG_VALUE and i + 1 < len(words):
                i += 1
                value, eq = words[i], "="
            out.append((name, value if eq else None))
            wrapped = wrapped or name == "wrap"
        elif word.startswith("-") and len(word) > 1 and not wrapped:
            for j in range(1, len(word)):
                letter = word[j]
                name = _SHORT.get(letter, letter)
                if letter in _SHORT_VALUE:
                    value = word[j + 1:]
                    if not value and i + 1 < len(words):
                        i += 1
                        value = words[i]
                    out.append((name, value))
                    break
                out.append((name, None))
        elif not wrapped:
            break           # the script or program: what follows are its own arguments
        i += 1
    return out


def _dependency(spec: str) -> tuple[list[str], list[str]]:
    """``(kinds, targets)`` of a ``--dependency`` value (``afterok:12:13,afterany:14``, ``?`` for or,
    ``after:12+5``, ``singleton``); an unknown kind is kept as ``unknown``."""
    kinds, targets = [], []
    for part in re.split(r"[,?]", spec):
        kind, _, ids = part.partition(":")
        kind = kind.strip().lower()
        if not kind:
            continue
        kinds.append(kind if kind in _DEPENDENCY_KINDS else "unknown")
        targets += [t.split("+")[0].strip() for t in ids.split(":") if t.strip()]
    return kinds, targets


def _tres(text: str, number) -> tuple[int | None, dict, list[str], str | None, tuple[str, ...], dict]:
    """``(GPUs in all or None, GPUs by type, licenses as NAME:N, mem or None, the TRES named, other GRES
    in all by kind)`` of a TRES string (``billing=4,cpu=4,mem=16G,node=1,gres/gpu=2,gres/gpu:a100=2,
    license/matlab=1,gres/nvme=2``: a kind's typed entries count where it has no untyped one).
    ``number(text, expected)`` reads a count."""
    total, typed, licenses, mem, keys = None, {}, [], None, []
    others, others_typed = {}, {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if not name:
            continue
        keys.append("gres/gpu" if name.startswith("gres/gpu:") else name)
        if name == "gres/gpu":
            total = number(value, "gres/gpu=N with N a whole number of GPUs")
        elif name.startswith("gres/gpu:"):
            typed[name[9:]] = typed.get(name[9:], 0) + number(value, "gres/gpu:TYPE=N with N a whole number of GPUs")
        elif name.startswith("license/"):
            licenses.append(f"{name[8:]}:{number(value, 'license/NAME=N with N a whole number')}")
        elif name == "mem":
            mem = value.strip()
        elif name.startswith("gres/"):
            kind, _, sub = name[5:].partition(":")
            got = number(value, "gres/NAME=N with N a whole number")
            if sub:
                others_typed[kind] = others_typed.get(kind, 0) + got
            else:
                others[kind] = others.get(kind, 0) + got
    for kind, n in others_typed.items():
        others.setdefault(kind, n)
    return total, typed, licenses, mem, tuple(dict.fromkeys(keys)), others


def _gres(text: str, counts: Counter, key: str, number) -> tuple[int | None, dict, dict]:
    """``(GPUs in all or None, GPUs by type, other GRES by kind)`` of a ``ReqGRES``/``AllocGRES`` value
    (``gpu:4``, ``gpu:tesla:2``, ``gpu:2(IDX:0-1)``, ``gpu:2,mps:100``); the other kinds are also
    counted in ``counts`` (``ReqGRES mps``)."""
    total, typed, others = None, {}, {}
    for item in _PARENS.sub("", text).split(","):
        parts = [p.strip() for p in item.split(":")]
        if not parts[0] or parts[0] in _EMPTY:
            continue
        if parts[0] != "gpu":
            counts[f"{key} {parts[0]}"] += 1
            n = 1
            if len(parts) > 1 and parts[-1].isascii() and parts[-1].isdigit():
                n = number(parts[-1], f"{parts[0]}:N or {parts[0]}:TYPE:N with N a whole number")
            others[parts[0]] = others.get(parts[0], 0) + n
            continue
        n = 1
        if len(parts) > 1 and parts[-1].isascii() and parts[-1].isdigit():
            n = number(parts[-1], "gpu:N or gpu:TYPE:N with N a whole number of GPUs")
            parts = parts[:-1]
        total = (total or 0) + n
        if len(parts) > 1:
            kind = ":".join(parts[1:])
            typed[kind] = typed.get(kind, 0) + n
    return total, typed, others


def _gres_per_node(total: dict | None, nodes: int, seen: Counter) -> str:
    """A job's GRES other than GPUs a node (``nvme:1,mps:50``: its total over its nodes, rounded up), the
    kinds it asks counted in ``seen``."""
    if not total:
        return ""
    seen.update(k for k, v in total.items() if v)
    return ",".join(f"{k}:{-(-v // max(nodes, 1))}" for k, v in sorted(total.items()) if v)


def _parents(a, depends, elements, rank, info):
    """SWF field 17 (preceding job) of every record: of the jobs its dependencies name that are in the
    dump, the number of the one that ended last (a job whose end is unknown counts as ending first).
    A number names the job with that Slurm id, and every element or component of the array or
    heterogeneous job with that id; ``123_4`` names an element."""
    prev = np.full(len(a), -1, dtype=np.int64)
    found = outside = several = 0
    if depends:
        ended = np.where((a[:, 1] >= 0) & (a[:, 2] >= 0), a[:, 0] + a[:, 1] + a[:, 2], -np.inf)
        column = {name: a[:, k].astype(np.int64).tolist() for k, name in enumerate(_R)
                  if name in ("slurm_id", "array_job", "het_job")}
        by_id = {}
        for name in ("array_job", "het_job"):
            for index, number in enumerate(column[name]):
                if number:
                    by_id.setdefault(number, set()).add(index)
        for index in range(len(a) - 1, -1, -1):         # (the first record of an id wins)
            number = column["slurm_id"][index]
            if number:
                first = by_id.setdefault(("raw", number), set())
                first.clear()
                first.add(index)
        for index, targets in depends.items():
            parents = set()
            for t in targets:
                got = set()
                if t in elements:
                    got = {elements[t]}
                elif t.isascii() and t.isdigit() and len(t) <= 10:
                    got = by_id.get(("raw", int(t)), set()) | by_id.get(int(t), set())
                parents |= got
                outside += not got
            parents.discard(index)
            if parents:
                found += 1
                several += len(parents) > 1
                prev[index] = rank[max(parents, key=lambda p: (ended[p], rank[p]))]
    info["dependency_parents"] = {"jobs_with_a_parent_in_the_dump": found, "with_several": several,
                                  "targets_not_in_the_dump": outside}
    return prev
