"""Priority functions (DESIGN §6.1): the queue runs in ascending (key, submit, arrival) order.

Each built-in has a compiled twin in ``ext/policy.pxd`` (``policy_key``); :meth:`Priority.key` here is
the plain-Python formula the oracle uses, written operation for operation like the C so that both
give the same doubles. ``r`` is the job's estimate (the predictor's; the requested time with the
default predictor), ``n`` its units, ``s`` its submit time, ``w = now - s`` its wait so far.

A user's priority function is any object with ``keys(jobs, now) -> array`` (or a plain callable
``f(jobs, now)``) taking a :class:`~pbf.plugins.JobsView` of the queue: it is called with the GIL
before every pass, and its keys order the queue (ascending; ties by submit time, then arrival).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..codes import Priority as PR
from ..errors import ConfigError
from .registry import Registry, _as_floats, call_plugin, is_multifactor

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np

    from .views import JobsView

__all__ = ["Priority", "PythonPriority", "PRIORITIES", "FCFS", "SJF", "Smallest", "F1", "F2", "F3",
           "F4", "WFP3", "UNICEP"]

class Priority:
    """A built-in priority function with a compiled twin."""
    name = ""
    code = PR.PR_FCFS
    #: the key changes with time: recomputed before passes (at most every ``period`` seconds)
    dynamic = False
    period = 0

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        """The key of one job (plain Python, the oracle's formula)."""
        raise NotImplementedError

    def keys(self, jobs: JobsView, now: int) -> np.ndarray:
        """Keys of a :class:`JobsView` (array in, array out)."""
        import numpy as np
        return np.array([self.key(int(e), int(u), int(s), now)
                         for e, u, s in zip(jobs.estimate, jobs.units, jobs.submit)], dtype=np.float64)

    def core_settings(self) -> dict:
        """The compiled core's settings for this priority (see :mod:`pbf.core_config`)."""
        return {"prio": int(self.code), "prio_period": self.period}

    def describe(self) -> str:
        return self.name


def _log_submit(s):
    return math.log10(float(s) if s > 0 else 0.1)


class FCFS(Priority):
    """First come, first served: by submit time, then arrival."""
    name, code = "fcfs", PR.PR_FCFS

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return 0.0


class SJF(Priority):
    """Shortest job first: by estimate r."""
    name, code = "sjf", PR.PR_SJF

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return float(est)


class Smallest(Priority):
    """Smallest first: by units n."""
    name, code = "smallest", PR.PR_SMALLEST

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return float(units)


class F1(Priority):
    """Carastan-Santos & de Camargo F1: log10(r) n + 870 log10(s)."""
    name, code = "f1", PR.PR_F1

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return math.log10(float(est)) * float(units) + 870.0 * _log_submit(submit)


class F2(Priority):
    """F2: sqrt(r) n + 25600 log10(s)."""
    name, code = "f2", PR.PR_F2

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return math.sqrt(float(est)) * float(units) + 25600.0 * _log_submit(submit)


class F3(Priority):
    """F3: r n + 6,860,000 log10(s)."""
    name, code = "f3", PR.PR_F3

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return float(est) * float(units) + 6860000.0 * _log_submit(submit)


class F4(Priority):
    """F4: r sqrt(n) + 530,000 log10(s)."""
    name, code = "f4", PR.PR_F4

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return float(est) * math.sqrt(float(units)) + 530000.0 * _log_submit(submit)


class WFP3(Priority):
    """WFP3: -(w / r)^3 n (long waits relative to the estimate first; recomputed every pass)."""
    name, code, dynamic = "wfp3", PR.PR_WFP3, True

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return -math.pow(float(now - submit) / float(est), 3.0) * float(units)


class UNICEP(Priority):
    """UNICEP: -w / (log2(n) r), with RLScheduler's 1e-15 guards (serial jobs first)."""
    name, code, dynamic = "unicep", PR.PR_UNICEP, True

    def key(self, est: int, units: int, submit: int, now: int) -> float:
        return -(float(now - submit) + 1e-15) / (math.log2(float(units) + 1e-15) * float(est))


@dataclass
class PythonPriority:
    """A user's priority function (``keys(jobs, now)`` or a callable), called before every pass."""
    fn: object
    where: str = ""
    code = PR.PR_KEYED
    dynamic = True
    period = 0

    @property
    def name(self) -> str:
        return self.where

    def keys(self, jobs: JobsView, now: int) -> np.ndarray:
        import numpy as np
        fn = self.fn.keys if hasattr(self.fn, "keys") and not isinstance(self.fn, dict) else self.fn
        out = _as_floats(call_plugin("priority", self.where, fn, jobs, now), f"priority {self.where}")
        if out.shape != (len(jobs),):
            raise ConfigError(f"priority {self.where}: returned {out.shape} keys for {len(jobs)} jobs")
        if np.isnan(out).any():
            raise ConfigError(f"priority {self.where}: returned NaN keys")
        return out

    def core_settings(self) -> dict:
        return {"prio": int(PR.PR_KEYED), "prio_period": 0}

    def describe(self) -> str:
        return self.where


def _adapt(obj, where):
    if isinstance(obj, (Priority, PythonPriority)) or is_multifactor(obj):
        return obj
    if callable(obj) or hasattr(obj, "keys"):
        return PythonPriority(obj, where)
    raise ConfigError(f"priority {where}: expected an object with keys(jobs, now) or a callable, got {obj!r}")


PRIORITIES = Registry("priority", _adapt)
for _cls in (FCFS, SJF, Smallest, WFP3, UNICEP, F1, F2, F3, F4):
    PRIORITIES.register(_cls.name, _cls, _cls.__doc__.splitlines()[0])


def _multifactor(**overrides):
    # (:meth:`Multifactor.beocat`; its module is loaded when the priority is chosen)
    from .multifactor import Multifactor
    return Multifactor.beocat(**overrides)


PRIORITIES.register("multifactor", _multifactor,
                    "Slurm multifactor: age, fair share with decay, job size, partition, QOS (Beocat's weights)")


def _learned(path):
    from ..rl.kernel import KernelPolicy
    policy = KernelPolicy.load(path)
    policy._as_priority()
    return policy


PRIORITIES.register_prefix("learned", _learned,
                           "a learned job-selection kernel policy: learned:FILE.npz or learned:NAME (shipped)")
