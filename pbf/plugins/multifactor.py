"""Slurm's priority/multifactor plugin (reference §1.8), compiled in ``ext/policy.pxd``.

    priority = floor(W_age age + W_fs fs + W_js js + W_part part + W_qos qos)      (an integer, as Slurm)
    age  = min(1, (now - submit) / max_age)
    js   = (min nodes / N + CPUs / C) / 2   (Slurm's job-size factor, :func:`job_size_factor`)
    fs   = 2 ^ -((usage_norm / shares_norm) / dampening)  (classic fair share), or
           Slurm 22.05's Fair Tree rank over an association tree (``fairshare="fair-tree"``)
    part = the partition's factor / the largest;  qos = the QOS's priority / the largest

The job-size factor is Slurm's (``src/plugins/priority/multifactor/priority_multifactor.c``,
``set_priority_factors``; the same in Slurm 20.11, 22.05 and 23.11): N and C are the cluster's nodes and
CPUs (Slurm counts every node of ``slurm.conf``: ``size_nodes`` / ``size_cpus`` give them when the replay
is of fewer nodes), the job's min nodes its requested node count (at least 1) and its CPUs its units. On a
cluster of units each unit is a node of one CPU: min nodes = units, N = C = the cluster's units, and the
factor is units / cluster units. ``favor_small`` (``PriorityFavorSmall=YES``) and ``size_relative``
(``PriorityFlags=SMALL_RELATIVE_TO_TIME``) are Slurm's variants.

A job's "partition" is the SWF partition number and its "QOS" the SWF queue number; factors come
from ``partition_factors`` / ``qos_priorities`` (missing ones: partition 1.0, QOS 0), each divided
by the largest (partition: at least 1.0).

Usage: every user has equal shares (``shares_norm = 1 / users in the trace``); a running job charges
its units x seconds to its user; at each recomputation (every ``calc_period`` s, Slurm's
PriorityCalcPeriod) every user's usage first decays by ``2^-(elapsed / half_life)`` and then takes
what ran since; ``usage_norm`` = the user's share of all usage. Keys are recomputed, and the queue
re-sorted, every ``calc_period``; a job submitted in between gets its priority at submission.

With ``fairshare="fair-tree"`` (Slurm's default since 19.05, what ``--slurm-conf`` uses unless
``PriorityFlags`` has ``NO_FAIR_TREE``) the same decayed usage feeds :func:`pbf.fairshare.fair_tree_factors`
at each recomputation: over ``associations`` (an :class:`pbf.fairshare.Associations`), or, when none is
given, over :meth:`~pbf.fairshare.Associations.flat` (each trace user in an account of its own, equal
shares, and the root account's user ``root``, as ``sacctmgr`` makes a cluster). Before the first
recomputation every factor is 1, as in Slurm with no usage.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..bounded import MAX_SECONDS, MAX_SLURM_NODES, check_int
from ..codes import Priority
from ..errors import ConfigError

__all__ = ["Multifactor", "job_size_factor"]


@dataclass(frozen=True)
class Multifactor:
    """Slurm multifactor priority. Defaults: Slurm's PriorityMaxAge and PriorityDecayHalfLife
    (7 days), PriorityCalcPeriod (5 min) and Beocat's weights (:meth:`beocat` also sets Beocat's
    ages)."""
    weight_age: float = 50000.0
    weight_fairshare: float = 50000.0
    weight_job_size: float = 200000.0
    weight_partition: float = 1000000.0
    weight_qos: float = 20000.0
    max_age: int = 7 * 86400
    half_life: int = 7 * 86400
    calc_period: int = 300
    favor_small: bool = False
    size_relative: bool = False
    size_nodes: int = 0
    size_cpus: int = 0
    partition_factors: dict = field(default_factory=dict)
    qos_priorities: dict = field(default_factory=dict)
    fairshare: str = "classic"
    associations: object = None
    dampening: int = 1
    name = "multifactor"
    code = Priority.PR_MULTIFACTOR
    dynamic = True

    def __post_init__(self):
        _U32 = (1 << 32) - 1
        for f in ("weight_age", "weight_fairshare", "weight_job_size", "weight_partition", "weight_qos"):
            v = getattr(self, f)
            # (Slurm's PriorityWeight* are 32-bit)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or not 0 <= v <= _U32:
                raise ConfigError(f"multifactor {f} must be a number from 0 to {_U32:,}, got {v!r}")
        for f in ("max_age", "half_life", "calc_period"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_SECONDS:
                raise ConfigError(f"multifactor {f} must be an int from 0 to {MAX_SECONDS:,} seconds, got {v!r}")
        for f in ("favor_small", "size_relative"):
            if not isinstance(getattr(self, f), bool):
                raise ConfigError(f"multifactor {f} must be True or False, got {getattr(self, f)!r}")
        # (Slurm's node count is at most its node table's; its cluster_cpus is 32-bit)
        check_int("multifactor size_nodes (the job-size factor's cluster nodes; 0: the replay's)", self.size_nodes,
                  0, MAX_SLURM_NODES)
        check_int("multifactor size_cpus (the job-size factor's cluster CPUs; 0: the replay's)", self.size_cpus,
                  0, _U32)
        if not isinstance(self.dampening, int) or isinstance(self.dampening, bool) or not 1 <= self.dampening <= 65535:
            raise ConfigError(f"multifactor dampening (FairShareDampeningFactor) must be an int from 1 to 65,535, "
                              f"got {self.dampening!r}")
        if self.fairshare not in ("classic", "fair-tree"):
            raise ConfigError(f"multifactor fairshare must be 'classic' or 'fair-tree', got {self.fairshare!r}")
        if self.associations is not None:
            from ..fairshare import Associations
            if not isinstance(self.associations, Associations):
                raise ConfigError("multifactor associations must be a pbf.fairshare.Associations, got "
                                  f"{type(self.associations).__name__}")
            if self.fairshare != "fair-tree":
                raise ConfigError("multifactor associations are used by fairshare='fair-tree' only")
        for f in ("partition_factors", "qos_priorities"):
            for k, v in getattr(self, f).items():
                if not isinstance(k, int) or isinstance(k, bool) or not -(1 << 63) <= k < (1 << 63):
                    raise ConfigError(f"multifactor {f}: key {k!r} must be an int (an SWF number, 64-bit)")
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or not 0 <= v <= _U32:
                    raise ConfigError(f"multifactor {f}[{k!r}] must be a number from 0 to {_U32:,}, got {v!r}")

    @classmethod
    def beocat(cls, **overrides: object) -> Multifactor:
        """Beocat's simulator configuration (reference §1.8): PriorityDecayHalfLife 4 h,
        PriorityMaxAge 5 h, FavorSmall NO, weights fair share 50,000, age 50,000, partition
        1,000,000, job size 200,000, QOS 20,000."""
        return cls(**{"max_age": 5 * 3600, "half_life": 4 * 3600, **overrides})

    @property
    def period(self) -> int:
        """Seconds between recomputations of the keys (``calc_period``)."""
        return self.calc_period

    def factors(self, partition: np.ndarray, queue: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(part, qos) columns in [0, 1] for jobs of these SWF partition and queue numbers."""
        pf, qf = self.partition_factors, self.qos_priorities
        pmax = max([*pf.values(), 1.0])
        qmax = max(qf.values(), default=0.0) or 1.0
        part = np.array([pf.get(int(p), 1.0) / pmax for p in partition], dtype=np.float64)
        qos = np.array([qf.get(int(q), 0.0) / qmax for q in queue], dtype=np.float64)
        return part, qos

    def core_settings(self) -> dict:
        """The compiled core's settings (see :mod:`pbf.core_config`)."""
        return {"prio": int(Priority.PR_MULTIFACTOR), "prio_period": self.calc_period,
                "mf_w_age": float(self.weight_age), "mf_w_fs": float(self.weight_fairshare),
                "mf_w_js": float(self.weight_job_size), "mf_w_part": float(self.weight_partition),
                "mf_w_qos": float(self.weight_qos), "mf_max_age": self.max_age,
                "mf_half_life": self.half_life, "mf_favor_small": int(self.favor_small),
                "mf_fs_damp": float(self.dampening),
                # (the job-size variants only when set: a core built before them takes the rest)
                **({"mf_js_relative": int(self.size_relative), "mf_js_nodes": self.size_nodes,
                    "mf_js_cpus": self.size_cpus}
                   if self.size_relative or self.size_nodes or self.size_cpus else {})}

    def tree_for(self, n_users: int, names: list | None = None):
        """The association tree of a Fair Tree replay of ``n_users`` trace users (None: classic);
        ``names``: the users' names, which a tree read from a ``sacctmgr`` dump matches them by."""
        if self.fairshare != "fair-tree":
            return None
        from ..fairshare import Associations
        if self.associations is None:
            return Associations.flat(n_users)
        if self.associations.by_name and names is not None:
            return self.associations.for_users(names)
        if len(self.associations.user_of) < n_users:
            tree, mapped = self.associations, len(self.associations.user_of)
            example = (repr(names[mapped]) if names is not None and len(names) > mapped
                       else f"the trace's user number {mapped + 1}")
            why = ("the sacctmgr dump has no user associations ('User - ' lines)" if tree.source and not tree.by_name
                   else "they are matched by name and this replay names no user" if tree.by_name
                   else f"the associations map {mapped:,} trace users")
            raise ConfigError(f"multifactor associations{' of ' + tree.source if tree.source else ''}: "
                              f"{n_users - mapped:,} of the trace's {n_users:,} users have none, e.g. {example}: "
                              f"{why}")
        return self.associations

    def describe(self) -> str:
        tree = ", Fair Tree" if self.fairshare == "fair-tree" else ""
        return (f"multifactor{tree}(age {self.weight_age:g}, fairshare {self.weight_fairshare:g}, "
                f"size {self.weight_job_size:g}, partition {self.weight_partition:g}, qos {self.weight_qos:g}, "
                f"max_age {self.max_age} s, half_life {self.half_life} s, calc {self.calc_period} s)")

    # the oracle's formulas (pbf/reference/engine_ref.py keeps the usage)
    def job_size(self, units: int, cluster_units: int, min_nodes: int | None = None, cluster_nodes: int = 0,
                 req: int = 0) -> float:
        """The job-size factor of a job of ``units`` CPUs on a cluster of ``cluster_units``: on
        ``cluster_nodes`` nodes (0: a cluster of units) with ``min_nodes`` asked; ``req``: its
        requested time (s, for ``size_relative``). ``size_nodes`` / ``size_cpus`` replace N and C."""
        return job_size_factor(units, cluster_units, min_nodes, cluster_nodes, req=req, favor_small=self.favor_small,
                               relative=self.size_relative, size_nodes=self.size_nodes, size_cpus=self.size_cpus)

    def priority(self, units: int, submit: int, user_usage: float, total_usage: float, n_users: int, part: float,
                 qos: float, cluster_units: int, now: int, fs_factor: float | None = None,
                 min_nodes: int | None = None, cluster_nodes: int = 0, req: int = 0) -> float:
        """The priority of one job (the oracle's formula, as the compiled core computes it);
        ``fs_factor``: the user's Fair Tree factor (else classic fair share from the usage);
        ``min_nodes``, ``cluster_nodes``, ``req``: as :meth:`job_size`."""
        age = 1.0
        if self.max_age > 0:
            age = float(now - submit) / float(self.max_age)
            if age > 1.0:
                age = 1.0
        if fs_factor is not None:
            fs = fs_factor
        else:
            usage_norm = user_usage / total_usage if total_usage > 0.0 else 0.0
            shares_norm = 1.0 / float(n_users if n_users > 0 else 1)
            fs = math.pow(2.0, -((usage_norm / shares_norm) / float(self.dampening)))
        js = self.job_size(units, cluster_units, min_nodes, cluster_nodes, req)
        return math.floor(float(self.weight_age) * age + float(self.weight_fairshare) * fs
                          + float(self.weight_job_size) * js + float(self.weight_partition) * part
                          + float(self.weight_qos) * qos)


def job_size_factor(cpus: int, cluster_cpus: int, min_nodes: int | None = None, cluster_nodes: int = 0, *,
                    req: int = 0, favor_small: bool = False, relative: bool = False, size_nodes: int = 0,
                    size_cpus: int = 0) -> float:
    """Slurm's job-size factor in [0, 1] (``priority_multifactor.c``, ``set_priority_factors``, Slurm
    20.11 to 23.11), the same operations in the same order as ``ext/policy.pxd`` (``policy_job_size``):

        (min_nodes / N + cpus / C) / 2                                  (Slurm's default)
        ((N - min_nodes) / N + (C - cpus) / C) / 2                      (``favor_small``)
        max(min_nodes * C / N, cpus) / time limit (minutes) / C         (``relative``: SMALL_RELATIVE_TO_TIME;
                                                                          ``favor_small``: 1 minus that)

    N = ``cluster_nodes`` and C = ``cluster_cpus`` (``size_nodes`` / ``size_cpus`` when > 0: Slurm's
    counts, every node of ``slurm.conf``); ``cluster_nodes`` 0: a cluster of units, each a node of one
    CPU (min nodes = cpus). ``req``: the job's time limit in seconds, in Slurm's whole minutes rounded
    up. A job of 0 CPUs has the nodes' term only, as in Slurm."""
    mn, n_all, c_all = cpus, cluster_cpus, cluster_cpus
    if cluster_nodes > 0:
        mn = 1 if min_nodes is None else min_nodes
        n_all = cluster_nodes
    if size_nodes > 0:
        n_all = size_nodes
    if size_cpus > 0:
        c_all = size_cpus
    if relative:
        js = float(mn) * float(c_all) / float(n_all)
        if float(cpus) > js:
            js = float(cpus)
        limit = (req + 59) // 60
        if limit <= 0:
            return 0.0 if favor_small else 1.0
        js /= float(limit)
        js /= float(c_all)
        if favor_small:
            js = 1.0 - js
    elif favor_small:
        js = float(n_all - mn) / float(n_all)
        if cpus != 0:
            js += float(c_all - cpus) / float(c_all)
            js /= 2.0
    else:
        js = float(mn) / float(n_all)
        if cpus != 0:
            js += float(cpus) / float(c_all)
            js /= 2.0
    return 0.0 if js < 0.0 else 1.0 if js > 1.0 else js
