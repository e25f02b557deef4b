"""The host a benchmark runs on: how much CPU other processes took meanwhile (:class:`MachineLoad`),
and holding the timing thread on one CPU (:func:`one_cpu`)."""
from __future__ import annotations

import contextlib
import os
import time

__all__ = ["MachineLoad", "one_cpu"]

_PASS_CPU: int | None = None


@contextlib.contextmanager
def one_cpu():
    """Hold the calling thread on one CPU (the same every time: the last of those it may use), then
    give it back its CPUs; where the platform cannot, do nothing."""
    global _PASS_CPU
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        yield
        return
    if _PASS_CPU is None or _PASS_CPU not in allowed:
        _PASS_CPU = max(allowed)
    try:
        os.sched_setaffinity(0, {_PASS_CPU})
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


class MachineLoad:
    """Context manager measuring the CPU that other processes used meanwhile (in cores)."""

    def __enter__(self) -> MachineLoad:
        import psutil
        self._psutil = psutil
        self._me = psutil.Process()
        self._cpu0, self._own0, self._t0 = psutil.cpu_times(), self._me.cpu_times(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        cpu1, own1 = self._psutil.cpu_times(), self._me.cpu_times()
        wall = max(1e-9, time.perf_counter() - self._t0)
        total = lambda c: c.user + c.system + getattr(c, "nice", 0)
        mine = lambda c: c.user + c.system + c.children_user + c.children_system
        self.other_cores = max(0.0, (total(cpu1) - total(self._cpu0)) - (mine(own1) - mine(self._own0))) / wall
        self.wall = wall
