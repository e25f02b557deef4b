"""Association limits on running jobs from a site's ``sacctmgr dump`` file (``--assoc-limits FILE``).

``sacctmgr dump CLUSTER file=FILE`` writes the cluster's association tree, one association a line::

    Cluster - 'snowflake':Fairshare=1:QOS='normal'
    Parent - 'root'
    User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
    Account - 'physics':Description='physics':Organization='sci':GrpJobs=40:GrpTRES=cpu=512
    Parent - 'physics'
    User - 'alice':DefaultAccount='physics':MaxJobs=4:MaxSubmitJobs=10:GrpTRES=cpu=64

``Cluster`` holds the root association's limits, ``Parent - 'a'`` names the account the lines after
it belong to, ``Account`` adds an account under it and ``User`` the user's association in it. Options
are ``Key=Value`` separated by ``:``, values optionally quoted, keys in any case (Slurm's
src/sacctmgr/file_functions.c writes them; ``#`` lines are comments).

Modelled (ext/qos_limits.pxd, as Slurm 22.05's acct_policy.c applies them):

* ``MaxJobs``: the running jobs of one user association. Set on an account it is inherited by every
  association below it that does not set its own (slurmdbd copies the parent's ``MaxJobs``,
  ``MaxSubmitJobs``, ``MaxWallDurationPerJob`` and ``MaxTRESPerJob`` to children that leave them
  unset: as_mysql_assoc.c); only the job's own association's is checked.
* ``GrpJobs`` and ``GrpTRES`` ``cpu=``: the running jobs and cores of the association and every
  association below it, checked for the job's association and each account above it up to the root.
* A job that would go over one is passed over, as for a QOS limit; an association's ``GrpJobs``,
  ``GrpTRES`` cpu and ``MaxJobs`` apply only when the job's QOS (``--qos-limits``) does not set
  ``GrpJobs``, ``GrpTRES`` cpu and ``MaxJobsPU``: the QOS's limit comes first.
* Refused at submission (rejected, reason ``RJ_QOS_LIMIT``; the summary counts them by Slurm's reason
  name): a job whose cores alone exceed a ``GrpTRES`` cpu on its path or its ``MaxTRESPerJob`` cpu
  (``AssocMaxCpuPerJobLimit``), or whose time limit exceeds ``MaxWallDurationPerJob``
  (``AssocMaxWallDurationPerJobLimit``) or its QOS's ``MaxWall`` (``QOSMaxWallDurationPerJobLimit``,
  which comes first). Slurm refuses such a job at ``sbatch`` when its QOS has ``DenyOnLimit`` and
  otherwise keeps it pending for ever with that reason: either way it never runs.

A job's association is its user's (``; User: N name`` legend of a sacct dump, else the user number as
text) in its account (a sacct dump's ``Account`` column), or in the user's ``DefaultAccount`` when the
trace has no account. A job whose user or (user, account) the dump does not have is not limited; the
summary counts them. An SWF log has user numbers only: its users must be named by number in the dump.

Read and not modelled, listed in the summary (``assoc_limits.not_modelled``): ``MaxSubmitJobs`` and
``GrpSubmitJobs`` (they depend on how many of the user's jobs wait, which the replay would have to count
at submission), limits on other TRES, ``...Mins``/``...RunMins``, ``GrpWall``, ``MaxTRESPerNode``,
``...Accrue``, ``MinPrioThreshold``, associations of one partition (``Partition=``), ``Fairshare``,
``QOS``/``DefaultQOS``, ``Priority``, and the QOS lines of a dump (read those from
``sacctmgr show qos`` with ``--qos-limits``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .errors import ConfigError, TraceFormatError
from .qos import _count, _tres_cpu, read_qos_limits, wall_minutes

__all__ = ["Association", "AssocLimits", "read_assoc_limits", "set_assoc_limits", "limit_reasons", "LIMIT_REASONS"]

#: the compiled core's codes of the limit that last held or refused a job (ext/qos_limits.pxd LR_*), by
#: Slurm's reason name (src/common/job_state_reason.c)
LIMIT_REASONS = ("", "QOSGrpJobsLimit", "QOSMaxJobsPerUserLimit", "AssocGrpJobsLimit", "AssocMaxJobsLimit",
                 "QOSGrpCpuLimit", "QOSMaxCpuPerUserLimit", "AssocGrpCpuLimit", "QOSMaxSubmitJobPerUserLimit",
                 "AssocMaxSubmitJobLimit", "AssocGrpSubmitJobsLimit")

#: option -> the limit it sets (Slurm's spellings, as sacctmgr dumps and loads them)
_KEYS = {"maxjobs": "max_jobs", "grpjobs": "grp_jobs", "grptres": "grp_cpus", "grpcpus": "grp_cpus",
         "maxtresperjob": "max_cpus_pj", "maxtrespj": "max_cpus_pj", "maxtres": "max_cpus_pj",
         "maxcpusperjob": "max_cpus_pj", "maxcpus": "max_cpus_pj", "maxsubmitjobs": "max_submit",
         "maxsubmit": "max_submit", "grpsubmitjobs": "grp_submit", "grpsubmit": "grp_submit",
         "maxwalldurationperjob": "max_wall", "maxwall": "max_wall"}
_INHERITED = ("max_jobs", "max_cpus_pj", "max_submit", "max_wall")
#: options read and not limits
_PLAIN = {"description", "organization", "defaultaccount", "defaultwckey", "adminlevel", "coordinator", "wckeys",
          "comment", "classification", "fairshare", "defaultqos", "qos", "priority"}


@dataclass
class Association:
    """One association: ``account``, ``user`` (None: the account's own), ``parent`` (the account above;
    None: the root), its ``line``, and its limits (0: none; ``max_*`` after inheritance):
    ``max_jobs``, ``grp_jobs``, ``grp_cpus``, ``max_cpus_pj`` (MaxTRESPerJob cpu), ``max_submit``
    (MaxSubmitJobs), ``grp_submit`` (GrpSubmitJobs), ``max_wall`` (MaxWallDurationPerJob, minutes)."""
    account: str
    user: str | None
    parent: str | None
    line: int
    max_jobs: int = 0
    grp_jobs: int = 0
    grp_cpus: int = 0
    max_cpus_pj: int = 0
    max_submit: int = 0
    grp_submit: int = 0
    max_wall: int = 0
    set_here: frozenset = field(default_factory=frozenset)


@dataclass(frozen=True)
class AssocLimits:
    """``cluster``; ``accounts``: account -> :class:`Association` (``root`` included); ``users``:
    (user, account) -> :class:`Association`; ``default_account``: user -> account; ``not_modelled``:
    what the dump sets that pbf does not model; ``path``: the file."""
    cluster: str
    accounts: dict
    users: dict
    default_account: dict
    not_modelled: tuple
    path: str

    def rows(self):
        """The associations as rows (accounts, then users): their keys, (MaxJobs, GrpJobs, GrpTRES cpu)
        and parent rows (-1: none)."""
        keys = [("", a) for a in self.accounts] + list(self.users)
        row = {k: i for i, k in enumerate(keys)}
        assoc = list(self.accounts.values()) + list(self.users.values())
        limits = np.array([(a.max_jobs if a.user is not None else 0, a.grp_jobs, a.grp_cpus) for a in assoc],
                          dtype=np.int64).reshape(len(assoc), 3)
        parent = np.array([row[("", a.parent if a.user is None else a.account)] if a.parent is not None
                           or a.user is not None else -1 for a in assoc], dtype=np.int32)
        return keys, limits, parent

    def submit_rows(self):
        """(MaxSubmitJobs, GrpSubmitJobs) of the rows of :meth:`rows`, in its order."""
        assoc = list(self.accounts.values()) + list(self.users.values())
        return np.array([(a.max_submit if a.user is not None else 0, a.grp_submit) for a in assoc],
                        dtype=np.int64).reshape(len(assoc), 2)


def _split(text):
    # the ':'-separated options of a line, quotes kept together (file_functions.c _parse_option)
    out, cur, quote = [], [], None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ":":
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if quote:
        return None
    out.append("".join(cur))
    return out


def _unquote(v):
    v = v.strip()
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"" else v


def read_assoc_limits(path: str | os.PathLike) -> AssocLimits:
    """The association tree and limits of a ``sacctmgr dump`` file (module docstring); errors name the
    file, line, field and value."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            lines = fh.read(64 << 20).splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the association dump {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise TraceFormatError(path, None, None, "binary data", "a sacctmgr dump text file") from None
    cluster, parent = None, None
    accounts, users, default, said = {}, {}, {}, []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kind, sep, rest = line.partition(" - ")
        kind = kind.strip().lower()
        if not sep or kind not in ("cluster", "parent", "account", "user", "qos"):
            raise TraceFormatError(path, number, None, line[:200], "a line 'Cluster - ...', 'Parent - ...', "
                                   "'Account - ...', 'User - ...' or 'QOS - ...' (sacctmgr dump)")
        parts = _split(rest.strip())
        if parts is None:
            raise TraceFormatError(path, number, None, line[:200], "quotes closed on the line")
        name = _unquote(parts[0])
        if not name or "=" in parts[0]:
            raise TraceFormatError(path, number, kind.capitalize(), parts[0], "a quoted name first ('name')")
        if kind == "qos":
            said.append(f"line {number}: QOS {name} (QOS limits are read from sacctmgr show qos: --qos-limits)")
            continue
        if kind == "cluster":
            if cluster is not None:
                raise TraceFormatError(path, number, "Cluster", name, f"one cluster a dump (cluster {cluster!r} "
                                       "came first)")
            cluster = name
            a = accounts["root"] = Association("root", None, None, number)
        elif cluster is None:
            raise TraceFormatError(path, number, None, line[:200], "a 'Cluster - name' line before the others")
        elif kind == "parent":
            if name.lower() not in accounts:
                raise TraceFormatError(path, number, "Parent", name, "an account added above (or root)")
            parent = name.lower()
            continue
        elif parent is None:
            raise TraceFormatError(path, number, None, line[:200], "a 'Parent - account' line before it")
        elif kind == "account":
            if name.lower() in accounts:
                raise TraceFormatError(path, number, "Account", name, f"each account once (line "
                                       f"{accounts[name.lower()].line})")
            a = accounts[name.lower()] = Association(name.lower(), None, parent, number)
        else:
            a = Association(parent, name, parent, number)
        opts = {}
        for part in parts[1:]:
            key, eq, value = part.partition("=")
            key = key.strip()
            if not key:
                continue
            if not eq:
                raise TraceFormatError(path, number, key, part, "Key=Value")
            opts[key] = _unquote(value)
        if a.user is not None and any(k.lower() == "partition" for k in opts):
            said.append(f"line {number}: user {name} in {parent}, partition {opts.get('Partition', '')}: "
                        "associations of one partition are not modelled (skipped)")
            continue
        _limits(path, number, a, opts, said, f"{'user ' + name + ' in ' if a.user else 'account '}{a.account}")
        if a.user is not None:
            if (name, parent) in users:
                raise TraceFormatError(path, number, "User", name, f"each user once in account {parent} (line "
                                       f"{users[name, parent].line})")
            users[name, parent] = a
            for k, v in opts.items():
                if k.lower() == "defaultaccount" and v:
                    default[name] = v.lower()
    if cluster is None:
        raise TraceFormatError(path, None, None, "no 'Cluster - name' line", "a sacctmgr dump of one cluster")
    _inherit(accounts, users)
    for user in {u for u, _ in users}:
        if user not in default:
            default[user] = next(acct for u, acct in users if u == user)
    return AssocLimits(cluster, accounts, users, default, tuple(said), path)


def _limits(path, number, a, opts, said, who):
    others, set_here = [], set()
    for key, value in opts.items():
        k = key.lower()
        limit = _KEYS.get(k)
        if limit is None:
            if k not in _PLAIN and k != "partition":
                others.append(f"{key}={value}")
            continue
        if value.strip() in ("", "-1"):
            continue
        if k in ("grptres", "maxtres", "maxtrespj", "maxtresperjob"):
            if "cpu=" not in value.lower().replace(" ", ""):
                _tres_cpu(path, number, key, value, others)
                continue
            v = _tres_cpu(path, number, key, value, others)
        elif limit == "max_wall":
            v = wall_minutes(path, number, key, value)
        else:
            v = _count(path, number, key, value)
        setattr(a, limit, v)
        set_here.add(limit)
    a.set_here = frozenset(set_here)
    said += [f"{who}: {o}" for o in others]


def _inherit(accounts, users):
    # Max* limits unset on an association come from the nearest account above that sets them
    def up(acct, limit):
        while acct is not None:
            a = accounts[acct]
            if limit in a.set_here:
                return getattr(a, limit)
            acct = a.parent
        return 0
    for a in list(accounts.values()) + list(users.values()):
        for limit in _INHERITED:
            if limit not in a.set_here:
                setattr(a, limit, up(a.parent if a.user is None else a.account, limit))


def _legend(table, name):
    from .resources import constraint_legend
    return constraint_legend(table.header, name)


def _path_least(limits, parent, column):
    # the smallest limit (0: none) of a column on each row's path to the root
    out = []
    for i in range(len(parent)):
        p, least = i, 0
        while p >= 0:
            if limits[p, column] and (not least or limits[p, column] < least):
                least = int(limits[p, column])
            p = parent[p]
        out.append(least)
    return out


def _job_rows(A, keys, table, order):
    # each job's user association row (-1: none) and the counts of jobs of unknown users / associations
    from .workload.jobs import user_names
    row = {k: i for i, k in enumerate(keys)}
    named = user_names(table)
    accounts = (_legend(table, "Account"), table.columns["account"][order]) \
        if "account" in getattr(table, "columns", {}) else None
    out = np.full(len(order), -1, dtype=np.int64)
    missing = {"user": 0, "association": 0}
    cache = {}
    for k, u in enumerate(table.user[order]):
        user = named.get(int(u), str(int(u)))
        acct = accounts[0].get(int(accounts[1][k]), "").lower() if accounts is not None else ""
        if (user, acct) not in cache:
            cache[user, acct] = row.get((user, acct or A.default_account.get(user, "")), -1)
        out[k] = cache[user, acct]
        if out[k] < 0:
            missing["association" if user in A.default_account else "user"] += 1
    return out, missing


def set_assoc_limits(core, assoc_path, qos_path, table, order) -> dict:
    """Give the compiled core the association limits of ``assoc_path`` (None: none) and each job's
    association, the submission limits (QOS ``MaxSubmitPU``, association ``MaxSubmitJobs`` and
    ``GrpSubmitJobs``), and refuse the jobs a limit alone stops (module docstring; ``qos_path``: the
    QOS dump, already given to the core, or None). Returns the summary's ``assoc_limits`` (None without
    ``assoc_path``; without the counts the replay adds) and the refusals by reason."""
    n = len(order)
    why = {}
    req = np.asarray(table.req_time)[order]
    cores = np.asarray(table.req_procs)[order]
    q = read_qos_limits(qos_path) if qos_path is not None else None
    qos_names = [None] * n
    if q is not None:
        legend = _legend(table, "Queue")
        qos_names = [legend.get(int(c), str(int(c))) for c in table.queue[order]]
    qos_lim = q.limits if q is not None else {}
    assoc = np.full(n, -1, dtype=np.int64)
    read = A = None
    if assoc_path is not None:
        A = read_assoc_limits(assoc_path)
        keys, limits, parent = A.rows()
        core.set_assoc_limits(np.ascontiguousarray(limits), np.ascontiguousarray(parent))
        grp_cpus = _path_least(limits, parent, 2)
        assoc, missing = _job_rows(A, keys, table, order)
        for k in np.flatnonzero(assoc >= 0):
            r, qos = int(assoc[k]), qos_lim.get(qos_names[k], (0, 0, 0, 0))
            a = A.users[keys[r]]
            if a.max_cpus_pj and cores[k] > a.max_cpus_pj:
                why[k] = "AssocMaxCpuPerJobLimit"
            elif not qos[3] and 0 < grp_cpus[r] < cores[k]:
                why[k] = "AssocGrpCpuLimit"
            elif a.max_wall and not (q and q.max_wall.get(qos_names[k])) and req[k] > a.max_wall * 60:
                why[k] = "AssocMaxWallDurationPerJobLimit"
        read = {"file": A.path, "cluster": A.cluster, "accounts": len(A.accounts), "user_associations": len(A.users),
                "limits": {f"{k[0]}@{k[1]}" if k[0] else k[1]: dict(zip(("max_jobs", "grp_jobs", "grp_cpus",
                                                                          "max_submit_jobs", "grp_submit_jobs"),
                                                                         map(int, v)))
                           for k, v in zip(keys, np.hstack([limits, A.submit_rows()])) if v.any()},
                "jobs_of_unknown_users": missing["user"], "jobs_of_unknown_associations": missing["association"],
                "not_modelled": list(A.not_modelled)}
    if q is not None:
        for k, name in enumerate(qos_names):
            wall, lim = q.max_wall.get(name), qos_lim.get(name, (0, 0, 0, 0))
            if wall and req[k] > wall * 60:
                why[k] = "QOSMaxWallDurationPerJobLimit"
            elif 0 < lim[3] < cores[k]:
                why[k] = "QOSGrpCpuLimit"
            elif 0 < lim[1] < cores[k]:
                why[k] = "QOSMaxCpuPerUserLimit"
    never = np.zeros(n, dtype=np.uint8)
    never[list(why)] = 1
    if A is not None or why:
        core.set_job_assoc(0, assoc, never)
    qos_submit = np.array([q.max_submit.get(name, 0) for name in q.limits] if q is not None else [], dtype=np.int64)
    assoc_submit = A.submit_rows() if A is not None else np.zeros((0, 2), dtype=np.int64)
    if qos_submit.any() or assoc_submit.any():
        core.set_submit_limits(qos_submit, np.ascontiguousarray(assoc_submit))
    refused = {}
    for reason in why.values():
        refused[reason] = refused.get(reason, 0) + 1
    return {"assoc": read, "refused": dict(sorted(refused.items())), "why": why}


def limit_reasons(codes, refused: dict) -> np.ndarray:
    """jobs.csv's ``limit_reason``: for each job (in the core's order) the limit that last held it
    before it started, or refused it, by Slurm's reason name ("" none). ``codes``: the core's
    (``Core.limit_reasons``); ``refused``: the refusals :func:`set_assoc_limits` decided (``why``)."""
    out = np.asarray(LIMIT_REASONS, dtype=object)[np.asarray(codes, dtype=np.intp)]
    for k, reason in refused.items():
        out[k] = reason
    return out
