"""QOS limits on running jobs from a site's ``sacctmgr show qos`` dump (``--qos-limits FILE``).

``sacctmgr --parsable2 show qos`` (or ``format=Name,MaxJobsPU,MaxTRESPU,GrpJobs,GrpTRES,...``; any
order, any case) lists each QOS and its limits. Modelled (ext/qos_limits.pxd), as Slurm 22.05's
acct_policy.c applies them to a job about to start: ``MaxJobsPU`` (running jobs of one user in the
QOS), ``MaxTRESPU`` ``cpu=`` (their cores), ``GrpJobs`` and ``GrpTRES`` ``cpu=`` (the QOS's as a whole).
A job that would go over one is passed over -- not started, not reserved, not counted toward
``bf_max_job_test``, not blocking the jobs after it -- until running jobs end; a job that alone asks
more cores than a cpu limit is rejected. A job's QOS is its trace's ``QOS`` (sacct dumps: the header's
``; Queue: N name`` legend; an SWF's queue number, as text); a job whose QOS the dump does not limit
is not limited. ``MaxWall``: a job whose time limit exceeds its QOS's is refused at submission (rejected,
reason ``RJ_QOS_LIMIT``; :mod:`pbf.associations`): Slurm refuses it at ``sbatch`` under ``DenyOnLimit``
and otherwise keeps it pending for ever (``QOSMaxWallDurationPerJobLimit``); it never runs either way.
``MaxSubmitPU``: a job submitted while its user already has that many jobs of the QOS pending or running
is refused, as ``sbatch`` is (``QOSMaxSubmitJobPerUserLimit``); a replayed trace then loses the jobs
Slurm would have refused (a sacct dump holds only the jobs Slurm accepted, so a replay of the site's own
dump refuses none unless the schedule differs).

Read and not modelled, listed in the replay's summary (``qos_limits.not_modelled``): limits on other
TRES (``mem=``, ``node=``, ``gres/...``), per-account limits (``...PA``), submission limits
(``GrpSubmit``), time limits (``GrpWall``,
``...Mins``), per-job and per-node limits (``MaxTRES``, ``MaxTRESPerNode``, ``MinTRES``),
``Flags``, ``UsageFactor``, preemption. A QOS's ``Priority`` is multifactor's (``--mf-qos``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import ConfigError, TraceFormatError

__all__ = ["QosLimits", "read_qos_limits", "wall_minutes", "MAX_QOS_LIMIT"]

#: the largest limit read (Slurm's are 32-bit counts)
MAX_QOS_LIMIT = 2**32 - 1
_MODELLED = ("maxjobspu", "maxtrespu", "grpjobs", "grptres")
_NOT_MODELLED = ("grptresmins", "grptresrunmins", "grpsubmit", "grpwall", "maxtres", "maxtrespernode",
                 "maxtresmins", "maxtrespa", "maxjobspa", "maxsubmitpa", "mintres",
                 "flags", "usagefactor", "usagethres", "preempt", "preemptmode", "gracetime")


@dataclass(frozen=True)
class QosLimits:
    """``limits``: QOS name -> (MaxJobsPU, MaxTRESPU cpu, GrpJobs, GrpTRES cpu), 0 none;
    ``not_modelled``: what the dump sets that pbf does not model; ``path``: the file; ``max_wall``:
    QOS name -> MaxWall in minutes (the QOS that set one; a longer job is refused at submission);
    ``max_submit``: QOS name -> MaxSubmitPU (a user's jobs in the QOS, pending or running)."""
    limits: dict
    not_modelled: tuple
    path: str
    max_wall: dict = field(default_factory=dict)
    max_submit: dict = field(default_factory=dict)


def _count(path, number, field, value):
    v = value.strip()
    if not v:
        return 0
    if not (v.isascii() and v.isdigit()) or len(v) > 10 or int(v) > MAX_QOS_LIMIT:
        raise TraceFormatError(path, number, field, v, f"a whole count from 0 to {MAX_QOS_LIMIT:,}, or empty")
    return int(v)


def wall_minutes(path, number, field, value) -> int:
    """Minutes of a Slurm time limit (``time_str2mins``: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``,
    ``D-H:M:S``; seconds round up); 0 for none (empty, ``-1``, ``UNLIMITED``, ``INFINITE``)."""
    v = value.strip()
    if v.upper() in ("", "-1", "UNLIMITED", "INFINITE"):
        return 0
    days, dash, rest = v.partition("-")
    if not dash:
        days, rest = "0", v
    parts = rest.split(":")
    if (not (days.isascii() and days.isdigit()) or not all(p.isascii() and p.isdigit() for p in parts)
            or len(parts) > 3 or len(v) > 20):
        raise TraceFormatError(path, number, field, v, "a time limit: minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S")
    n = [int(p) for p in parts]
    if dash:
        h, m, s = (n + [0, 0])[:3]
    else:
        h, m, s = ([0, 0] + n)[-3:] if len(n) == 3 else (0, n[0], n[1] if len(n) > 1 else 0)
    minutes = int(days) * 1440 + h * 60 + m + (s + 59) // 60
    if minutes > MAX_QOS_LIMIT:
        raise TraceFormatError(path, number, field, v, f"a time limit up to {MAX_QOS_LIMIT:,} minutes")
    return minutes


def _tres_cpu(path, number, field, value, others):
    # the cpu= of a TRES list (cpu=256,mem=1T,node=4); the other kinds are said
    cpu = 0
    for item in filter(None, (x.strip() for x in value.split(","))):
        name, sep, v = item.partition("=")
        if not sep:
            raise TraceFormatError(path, number, field, value, "a TRES list such as cpu=256,mem=1T")
        if name.strip().lower() == "cpu":
            cpu = _count(path, number, field, v)
        else:
            others.append(f"{field} {item}")
    return cpu


def read_qos_limits(path: str | os.PathLike) -> QosLimits:
    """The QOS limits of a ``sacctmgr show qos`` dump (module docstring); errors name the file, line,
    field and value."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            lines = fh.read(64 << 20).splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the QOS dump {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise TraceFormatError(path, None, None, "binary data", "a sacctmgr --parsable2 text dump") from None
    if not lines or "|" not in lines[0]:
        raise TraceFormatError(path, 1 if lines else None, None, lines[0][:200] if lines else "an empty file",
                               "a sacctmgr --parsable2 header naming Name and the limits (Name|MaxJobsPU|...)")
    spelled = [n.strip() for n in lines[0].split("|")]
    col = {}
    for i, n in enumerate(spelled):
        col.setdefault(n.lower(), i)
    if "name" not in col or not any(k in col for k in _MODELLED):
        raise TraceFormatError(path, 1, None, lines[0][:200], "a header naming Name and at least one of MaxJobsPU, "
                               "MaxTRESPU, GrpJobs, GrpTRES")
    limits, said, walls, submits = {}, [], {}, {}
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) < len(spelled):
            raise TraceFormatError(path, number, None, line[:200], f"{len(spelled)} fields separated by '|'")
        name = cells[col["name"]].strip()
        if not name:
            raise TraceFormatError(path, number, "Name", "", "a QOS name")
        if name in limits:
            raise TraceFormatError(path, number, "Name", name, "each QOS once")
        def get(key, cells=cells):
            return cells[col[key]] if key in col else ""
        others = []
        row = (_count(path, number, "MaxJobsPU", get("maxjobspu")),
               _tres_cpu(path, number, "MaxTRESPU", get("maxtrespu"), others),
               _count(path, number, "GrpJobs", get("grpjobs")),
               _tres_cpu(path, number, "GrpTRES", get("grptres"), others))
        limits[name] = row
        wall = wall_minutes(path, number, "MaxWall", get("maxwall"))
        if wall:
            walls[name] = wall
        submit = _count(path, number, "MaxSubmitPU", get("maxsubmitpu"))
        if submit:
            submits[name] = submit
        for key in _NOT_MODELLED:
            if key in col and cells[col[key]].strip() not in ("", "0", "00:00:00", "cluster", "1.000000"):
                others.append(f"{spelled[col[key]]}={cells[col[key]].strip()}")
        said += [f"QOS {name}: {o}" for o in others]
    if not limits:
        raise TraceFormatError(path, None, None, "a header only", "at least one QOS line")
    return QosLimits(limits, tuple(said), path, walls, submits)
