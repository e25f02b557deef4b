"""The engine's batch path on preallocated arrays: :meth:`pbf.Engine.batch_buffers` gives a
:class:`BatchBuffers`, whose ``call`` is :meth:`pbf.Engine.advance_arrays` in one compiled call
(``ext/_engine_batch.pyx``), and :class:`BatchDecisions`, the decisions of a batch call as arrays.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from .engine_events import ProtocolError, Rejected, Reserve, Start

try:
    from ._engine_batch import BatchCore, Column, EngineLock, main_pass_at
except ImportError:         # (an extension built before the compiled call: batch_buffers says so)
    BatchCore = Column = EngineLock = main_pass_at = None

__all__ = ["BatchBuffers", "BatchDecisions", "EngineLock"]

_EMPTY = np.empty(0, dtype=np.int64)
_NO_OFFSETS = np.zeros(1, dtype=np.int64)        # (shared: no job started)
_NO_OFFSETS.flags.writeable = False


@dataclass(eq=False, slots=True)
class BatchDecisions:
    """The decisions of one :meth:`~pbf.Engine.advance_arrays` call, as arrays.

    ``at``: the call's now. ``started``: the ids of the jobs to start now (an int64 array when every
    job id the engine holds is a 64-bit int, else an object array), in the order ``advance`` gives
    them; ``units`` and ``offsets``: their unit indices, those of ``started[k]`` being
    ``units[offsets[k]:offsets[k + 1]]`` (:meth:`units_of`). ``rejected`` and ``reasons``: the
    submitted jobs that can never run and why (``Rejected``). ``reserved`` and ``reserved_at``: with
    ``report_reservations``, the jobs the pass reserved and their planned starts."""
    at: int
    started: np.ndarray
    offsets: np.ndarray
    units: np.ndarray
    rejected: np.ndarray = field(default_factory=lambda: _EMPTY)
    reasons: tuple = ()
    reserved: np.ndarray = field(default_factory=lambda: _EMPTY)
    reserved_at: np.ndarray = field(default_factory=lambda: _EMPTY)

    def units_of(self, k: int) -> np.ndarray:
        """The unit indices of the ``k``-th started job."""
        return self.units[self.offsets[k]:self.offsets[k + 1]]

    def objects(self) -> list:
        """The same decisions as ``advance`` returns them (Rejected, Start, Reserve objects)."""
        out = [Rejected(i, why) for i, why in zip(self.rejected.tolist(), self.reasons)]
        out += [Start(i, self.units_of(k), self.at) for k, i in enumerate(self.started.tolist())]
        out += [Reserve(i, t) for i, t in zip(self.reserved.tolist(), self.reserved_at.tolist())]
        return out


def _column(value):
    # a list or tuple of ints as an int64 buffer (None: not so)
    if not value:
        return _EMPTY
    if bool in map(type, value):
        return None
    try:
        return array("q", value)
    except (TypeError, OverflowError, ValueError):
        return None


def _columns(cols):
    # the call's columns with its lists and tuples as int64 buffers (arrays as they are: the compiled
    # call checks them; run and user, the last two, may be None), or None
    out = []
    for k, v in enumerate(cols):
        if type(v) is not np.ndarray and not (v is None and k >= 6):
            if type(v) is not list and type(v) is not tuple:
                return None
            v = _column(v)
            if v is None:
                return None
        out.append(v)
    return tuple(out)


class BatchBuffers(BatchCore or object):
    """:meth:`pbf.Engine.advance_arrays` on preallocated arrays, in one compiled call
    (:meth:`pbf.Engine.batch_buffers`).

        b = eng.batch_buffers()
        b.finish_ids[:2] = (7, 9); b.finish_times[:2] = now
        b.submit_ids[0], b.submit_times[0], b.units[0], b.requested[0] = 12, now, 4, 3600
        n = b.call(now, 2, 1)           # the finishes and submissions in [0, 2) and [0, 1)
        b.started                       # array([12]): the n jobs started now
        b.units_of(0)                   # their unit indices

    ``call(now, nf=0, ns=0, f0=0, s0=0, quick=False)`` is ``advance_arrays`` with the finishes
    ``finish_ids[f0:f0 + nf]``, ``finish_times[f0:f0 + nf]`` and the submissions
    ``submit_ids[s0:s0 + ns]``, ... of the input arrays, and returns how many jobs it started; the
    decisions are then in :attr:`started`, :attr:`offsets`, :attr:`start_units`, :attr:`rejected`
    (with :attr:`reasons`), :attr:`reserved`, :attr:`reserved_at` -- views valid until the engine's
    next batch call. The input arrays are the object's own (int64, ``capacity`` values each,
    :meth:`grow`; ``run`` and ``user`` absent until bound) or arrays the host binds (:meth:`bind`:
    whole columns it owns, each call naming a range of them). Ids are 64-bit ints. Same checks,
    decisions and refusals as ``advance_arrays``, which serves a call the compiled path does not take
    (a misuse to explain, a user not seen yet, Python plugins, nodes with memory, ...). No Python
    object is made per call, only one per new job (its id in the engine's index)."""

    _OWN = ("finish_ids", "finish_times", "submit_ids", "submit_times", "units", "requested")

    def __init__(self, engine, capacity: int = 1024) -> None:
        self._engine = engine
        self.capacity = 0
        self._own = set(self._OWN)          # the input columns that are the object's own arrays
        self.grow(capacity)

    def grow(self, capacity: int) -> None:
        """Give its own input arrays room for ``capacity`` values (new arrays, zeros: read them again
        after this; the host's bound columns stay)."""
        if capacity > self.capacity:
            for name in self._own:
                setattr(self, self._COLUMNS[name], Column(np.zeros(capacity, dtype=np.int64)))
            self.capacity = capacity

    def __new__(cls, engine, capacity: int = 1024):
        fast = engine._batch_fast and engine._est_is_req and not engine._multifactor
        return BatchCore.__new__(cls, engine._core, engine, engine._timing.every_call, fast,
                                 engine.report_reservations)

    _COLUMNS = {"finish_ids": "fid", "finish_times": "ft", "submit_ids": "sid", "submit_times": "st",
                "units": "su", "requested": "sr", "run": "srun", "user": "suser"}

    def bind(self, **columns) -> None:
        """Use the host's arrays as input columns (``finish_ids``, ``finish_times``, ``submit_ids``,
        ``submit_times``, ``units``, ``requested``, ``run``, ``user``): each a 1-d C-contiguous int64
        array, read at every call (the host writes into it; None unbinds ``run`` or ``user``)."""
        for name, a in columns.items():
            if name not in self._COLUMNS:
                raise ProtocolError(f"bind: no column {name!r}; expected one of {', '.join(self._COLUMNS)}")
            if a is None and name in ("run", "user"):
                setattr(self, self._COLUMNS[name], None)
                continue
            if not (isinstance(a, np.ndarray) and a.dtype == np.int64 and a.ndim == 1 and a.flags.c_contiguous):
                raise ProtocolError(f"bind: {name} must be a 1-d C-contiguous int64 array (the host writes into "
                                    f"it), got {type(a).__name__} {getattr(a, 'dtype', '')}")
            setattr(self, self._COLUMNS[name], Column(a))
            self._own.discard(name)

    finish_ids = property(lambda self: self.fid.array, doc="input: the ids of the jobs that ended")
    finish_times = property(lambda self: self.ft.array, doc="input: when they ended")
    submit_ids = property(lambda self: self.sid.array, doc="input: the ids of the jobs that arrived")
    submit_times = property(lambda self: self.st.array, doc="input: when they arrived")
    units = property(lambda self: self.su.array, doc="input: the units each asks for")
    requested = property(lambda self: self.sr.array, doc="input: the time each requested")
    run = property(lambda self: None if self.srun is None else self.srun.array, doc="input: run times (or None)")
    user = property(lambda self: None if self.suser is None else self.suser.array, doc="input: users (or None)")

    @property
    def started(self) -> np.ndarray:
        """The jobs the last call started."""
        return self.o_started.array[:self.nstarted]

    @property
    def offsets(self) -> np.ndarray:
        """Their units are ``start_units[offsets[k]:offsets[k + 1]]``."""
        return self.o_offsets.array[:self.nstarted + 1]

    @property
    def start_units(self) -> np.ndarray:
        """The unit indices of the started jobs, one after the other."""
        return self.o_units.array[:self.o_offsets.array[self.nstarted]]

    def units_of(self, k: int) -> np.ndarray:
        """The unit indices of the ``k``-th started job."""
        off = self.o_offsets.array
        return self.o_units.array[off[k]:off[k + 1]]

    @property
    def rejected(self) -> np.ndarray:
        """The submitted jobs of the last call that can never run."""
        return self.o_rejected.array[:self.nrejected]

    @property
    def reasons(self) -> list:
        """Why (one per :attr:`rejected` job)."""
        return [self._engine._rejected[x] for x in self.rejected.tolist()]

    @property
    def reserved(self) -> np.ndarray:
        """With ``report_reservations``: the jobs the last pass reserved."""
        return self.o_reserved.array[:self.nreserved]

    @property
    def reserved_at(self) -> np.ndarray:
        """Their planned starts."""
        return self.o_reserved_at.array[:self.nreserved]

    def decisions(self) -> BatchDecisions:
        """The last call's decisions as a :class:`BatchDecisions` (copies)."""
        n = self.nstarted
        if n:
            off = self.o_offsets.array[:n + 1].copy()
            started, units = self.o_started.array[:n].copy(), self.o_units.array[:off[n]].copy()
        else:
            started, off, units = _EMPTY, _NO_OFFSETS, _EMPTY
        rejected, reasons = (self.rejected.copy(), tuple(self.reasons)) if self.nrejected else (_EMPTY, ())
        reserved, at = (self.reserved.copy(), self.reserved_at.copy()) if self.nreserved else (_EMPTY, _EMPTY)
        return BatchDecisions(self._engine._now, started, off, units, rejected, reasons, reserved, at)

    def decisions_of_call(self) -> BatchDecisions:
        # (advance_arrays: the compiled call's decisions, read under the engine's lock)
        return self.decisions()

    def counts(self) -> dict:
        """What the compiled call has counted (the engine's ``stats()`` adds them)."""
        return {"submitted": self.submitted, "rejected": self.nrejected_all, "finished": self.finished,
                "passes": self.passes, "started": self.nstarted_all}

    def _slow_call(self, now, nf, ns, f0, s0, quick):
        # a call the compiled path does not take: advance_arrays, its decisions copied into the arrays
        fs, ss = slice(f0, f0 + nf), slice(s0, s0 + ns)
        d = self._engine.advance_arrays(
            now, finish_ids=self.finish_ids[fs], finish_times=self.finish_times[fs], submit_ids=self.submit_ids[ss],
            submit_times=self.submit_times[ss], units=self.units[ss], requested=self.requested[ss],
            run=None if self.srun is None else self.run[ss], user=None if self.suser is None else self.user[ss],
            quick=quick)
        if d.started.dtype != np.int64 or d.rejected.dtype != np.int64:
            raise ProtocolError("batch_buffers: the engine holds job ids that are not 64-bit ints; use advance_arrays")
        n, nrej, nres = len(d.started), len(d.rejected), len(d.reserved)
        self.out_room(n, len(d.units), nrej, nres)
        self.o_started.array[:n] = d.started
        self.o_offsets.array[:n + 1] = d.offsets
        self.o_units.array[:len(d.units)] = d.units
        self.o_rejected.array[:nrej] = d.rejected
        self.o_reserved.array[:nres] = d.reserved
        self.o_reserved_at.array[:nres] = d.reserved_at
        self.set_counts(n, nrej, nres)
        return n
