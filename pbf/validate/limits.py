"""QOS and association limits for a harness case (``pbf validate slurm --limits FILE``).

``FILE`` holds the ``sacctmgr`` commands that set the case's limits, one a line (``#`` starts a comment)::

    modify qos normal set GrpTRES=cpu=16
    modify account a1 set GrpJobs=2
    modify user root where account=a2 set MaxJobs=1

Only ``add`` and ``modify`` of a ``qos``, ``account`` or ``user`` are taken. The harness runs ``slurmdbd``
(``AccountingStorageEnforce=associations,limits,qos``), makes its accounts (``a<user>``, one per trace
user, user ``root`` in each: every job is submitted by root to its trace user's account), runs the
commands with ``sacctmgr -i`` before ``slurmctld`` starts, and keeps ``sacctmgr -P show qos``
(``qos.txt``) and ``sacctmgr dump`` (``assoc.cfg``) in the run's folder. Every job runs in the default
QOS ``normal``.

pbf's side reads the run's own dumps, as ``pbf replay --qos-limits qos.txt --assoc-limits assoc.cfg``
reads a site's: the first run's, after it ran (comparing recorded runs again: the first recorded
run's, with or without ``--limits``). One translation: where the dump says user ``root`` in account
``a<N>``, pbf's dump says user ``N`` (the trace's user whom root stood for), its default account
``a<N>``. A limit of one user counts root's jobs in Slurm -- every job -- so per-user QOS limits
(``MaxJobsPU``, ``MaxTRESPU``) would not be the trace users' there. With ``--as-users`` each job is
submitted by its trace user's own Unix user ``pbfu<N>`` (made inside the run's private mount namespace,
its association in ``a<N>``, root in none of them): per-user limits then count the trace's users in
Slurm as in pbf, and pbf's copy of the dump names user ``pbfu<N>`` ``N``.

The summary's ``limits`` compares the pending reasons: for each limit reason (``QOS...``, ``Assoc...``)
the jobs that squeue showed held by it at some poll in each Slurm run (``slurm``; squeue is polled about
every second from the first submission on) and the jobs whose last limit reason it was (``slurm_last``),
beside the jobs pbf held by it (jobs.csv's ``limit_reason``: the limit that last held each job).
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, replace

from ..errors import ConfigError

__all__ = ["LimitsCase", "read_limits_case", "pbf_dumps", "recorded_limits", "limits_config", "limits_summary",
           "QOS_NAME", "NONE"]

#: ``--limits none``: pbf's side without the limits a recorded limits case kept (a what-if)
NONE = "none"
#: the QOS every job of a limits case runs in (Slurm's default)
QOS_NAME = "normal"
_VERBS = ("add", "modify")
_ENTITIES = ("qos", "account", "user")
_WORD = re.compile(r"^[A-Za-z0-9_.,=:/+-]+$")


@dataclass(frozen=True)
class LimitsCase:
    """A limits case: ``path`` and its ``sacctmgr`` commands (``setup``: each a list of words)."""
    path: str
    setup: tuple

    def as_dict(self) -> dict:
        return {"file": self.path, "sacctmgr": [" ".join(c) for c in self.setup]}


def read_limits_case(path: str | os.PathLike) -> LimitsCase:
    """The :class:`LimitsCase` of the file at ``path`` (module docstring); :class:`pbf.ConfigError` naming
    the file, line and word otherwise."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--limits {path!r}: cannot read it: {exc}") from None
    setup = []
    for number, text in enumerate(lines, 1):
        words = text.split("#", 1)[0].split()
        if not words:
            continue
        if words[0].lower() not in _VERBS or len(words) < 4 or words[1].lower() not in _ENTITIES:
            raise ConfigError(f"{path}, line {number}: {text.strip()[:80]!r}: expected 'add|modify qos|account|user "
                              "NAME ... set KEY=VALUE' (a sacctmgr command)")
        bad = [w for w in words if not _WORD.match(w)]
        if bad:
            raise ConfigError(f"{path}, line {number}: {bad[0][:40]!r}: expected letters, digits and , = : . / + - _")
        setup.append(tuple(words))
    if not setup:
        raise ConfigError(f"{path}: no sacctmgr command (expected lines such as 'modify qos normal set GrpJobs=4')")
    return LimitsCase(path, tuple(setup))


def _translate_assoc(text: str) -> str:
    """The ``sacctmgr dump`` ``text`` with user root in each account ``a<N>`` named ``N`` (default account
    ``a<N>``)."""
    out, parent = [], None
    for line in text.splitlines():
        m = re.match(r"^\s*Parent\s*-\s*'([^']*)'", line)
        if m:
            parent = m.group(1)
        m = re.match(r"^(\s*User\s*-\s*)'pbfu(\d+)'(.*)$", line)
        if m:                 # a trace user's own Unix user (--as-users): user N
            out.append(f"{m.group(1)}'{m.group(2)}'{m.group(3)}")
            continue
        m = re.match(r"^(\s*User\s*-\s*)'root'(.*)$", line)
        if m and parent and re.fullmatch(r"a\d+", parent):
            rest = re.sub(r"DefaultAccount='[^']*'", f"DefaultAccount='{parent}'", m.group(2))
            if "DefaultAccount=" not in rest:
                rest = f":DefaultAccount='{parent}'" + rest
            line = f"{m.group(1)}'{parent[1:]}'{rest}"
        out.append(line)
    return "\n".join(out) + "\n"


def pbf_dumps(folder: str | os.PathLike | None, out: str) -> tuple[str, str] | None:
    """(qos dump, association dump) for pbf's side, written into ``out`` from the run kept in ``folder``
    (``qos.txt`` copied, ``assoc.cfg`` translated: module docstring); None when ``folder`` has neither."""
    if folder is None:
        return None
    qos, assoc = os.path.join(os.fspath(folder), "qos.txt"), os.path.join(os.fspath(folder), "assoc.cfg")
    if not (os.path.isfile(qos) and os.path.isfile(assoc)):
        return None
    q_out, a_out = os.path.join(out, "qos.txt"), os.path.join(out, "assoc.cfg")
    if os.path.abspath(qos) != os.path.abspath(q_out):
        shutil.copyfile(qos, q_out)
    with open(assoc, errors="replace") as fh:
        text = _translate_assoc(fh.read())
    with open(a_out, "w") as fh:
        fh.write(text)
    return q_out, a_out


def recorded_limits(folder: str | os.PathLike | None) -> bool:
    """Whether the run kept in ``folder`` was a limits case (it kept ``qos.txt`` and ``assoc.cfg``)."""
    return folder is not None and all(os.path.isfile(os.path.join(os.fspath(folder), n))
                                      for n in ("qos.txt", "assoc.cfg"))


def limits_config(config, case: LimitsCase, folder: str | None, out: str):
    """``config`` with the QOS and association limits of the run kept in ``folder`` (its dumps; unchanged
    when there are none yet: a live case replays pbf again after its first run)."""
    got = pbf_dumps(folder, out)
    if got is None:
        return config
    return replace(config, qos_limits=got[0], assoc_limits=got[1])


def _is_limit(reason: str) -> bool:
    return reason.startswith(("QOS", "Assoc"))


def limits_summary(case: LimitsCase, pbf_result, run_meta: list) -> dict:
    """summary.json's ``limits``: the case's commands, and for each limit reason the jobs held by it in
    each Slurm run (squeue, ``pending_reasons.jobs``), their mean, pbf's count and its relative
    difference from the mean; ``slurm_other_reasons``: the other reasons' counts per run."""
    j = pbf_result.jobs
    pbf_counts = {}
    if "limit_reason" in j:
        for r in j["limit_reason"]:
            if r:
                pbf_counts[str(r)] = pbf_counts.get(str(r), 0) + 1
    runs = [((m.get("pending_reasons") or {}).get("jobs") or {}) for m in run_meta]
    lasts = [(m.get("pending_reasons") or {}).get("last_limit") for m in run_meta]
    names = sorted({r for c in runs for r in c if _is_limit(r)} | set(pbf_counts))
    rows = {}

    def mean(xs):
        return sum(xs) / len(xs) if xs else None
    for r in names:
        counts = [c.get(r, 0) for c in runs]
        last = [c.get(r, 0) for c in lasts if c is not None]
        got = pbf_counts.get(r, 0)
        m, ml = mean(counts), mean(last)
        rows[r] = {"slurm": counts, "slurm_mean": m, "pbf": got, "relative_difference": (got - m) / m if m else None,
                   "slurm_last": last, "slurm_last_mean": ml,
                   "relative_difference_last": (got - ml) / ml if ml else None}
    other = [{r: n for r, n in c.items() if not _is_limit(r)} for c in runs]
    ps = pbf_result.summary
    return {"case": case.as_dict(), "by_reason": rows, "slurm_other_reasons": other,
            "pbf_qos_limits": ps.get("qos_limits"), "pbf_assoc_limits": ps.get("assoc_limits")}
