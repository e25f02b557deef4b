"""Outages' entry points (``ext/outages.pxd``) on a core's state: units drained, failed and resumed.

An :class:`Outages` takes a :class:`pbf._core.Core`: a replay loads its outage events before it
runs; the embedding API (:class:`pbf.Engine`) applies each outage as it happens. Internal: use
:func:`pbf.replay` or :class:`pbf.Engine`.
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t, int8_t
from libc.stdlib cimport malloc
from libc.string cimport memcpy

from memory cimport INF
from state cimport State
from nodes cimport OutageEvents, outage_events_free
from outages cimport units_down, units_resume
from pbf._core cimport Core, int64_array, raise_status
from pbf._codes cimport OK_RESUME, RC_OK


cdef class Outages:
    """Outages on ``core``."""
    cdef Core core

    def __cinit__(self, Core core not None):
        self.core = core

    def load(self, const int64_t[::1] t, const int8_t[::1] kind, const int64_t[::1] until,
             const uint64_t[:, ::1] bits, bint requeue):
        """A replay's outage events (checked and sorted by the caller: time order, resumes of an
        instant first): OK_DRAIN / OK_FAIL take ``bits`` (rows of W words) out of service until
        ``until`` (-1: until a resume), OK_RESUME brings back those whose until is at most
        ``until`` (-1: every one). ``requeue``: a failed unit's running job goes back to the queue
        (else it ends killed). Later outages cannot be added: the replay rejects a pending job once
        no event left can bring enough units back."""
        cdef State* S = &self.core.s
        cdef int64_t n = t.shape[0], i, W = S.W
        cdef OutageEvents* O = &S.outages
        if bits.shape[0] != n or (n and bits.shape[1] != W):
            raise ValueError("outage bits: one row of W words per event")
        outage_events_free(O)
        O.t = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        O.until = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        O.kind = <int8_t*>malloc(max(n, 1) * sizeof(int8_t))
        O.bits = <uint64_t*>malloc(max(n * W, 1) * sizeof(uint64_t))
        if O.t == NULL or O.until == NULL or O.kind == NULL or O.bits == NULL:
            outage_events_free(O)
            raise MemoryError("pbf core: out of memory (loading outages)")
        for i in range(n):
            O.t[i] = t[i]
            O.kind[i] = kind[i]
            O.until[i] = INF if until[i] < 0 else until[i]
            if W:
                memcpy(O.bits + i * W, &bits[i, 0], W * sizeof(uint64_t))
        O.n = n
        O.next = 0
        O.requeue = requeue
        O.final = True

    def set_requeue(self, bint requeue):
        """Embedding API: a failed unit's running job goes back to the queue (else it ends killed)."""
        self.core.s.outages.requeue = requeue

    def jobs_on(self, const uint64_t[::1] bits):
        """Running job indices holding any unit of ``bits`` (W words)."""
        cdef State* S = &self.core.s
        cdef int64_t i, j, w, W = S.W
        out = []
        for i in range(S.nodes.nrun):
            j = S.nodes.running[i]
            for w in range(W):
                if S.nodes.rows[<int64_t>S.jobs.row[j] * W + w] & bits[w]:
                    out.append(j)
                    break
        return np.array(sorted(out), dtype=np.int64)

    def apply(self, int64_t now, int kind, const uint64_t[::1] bits, int64_t until=-1):
        """Embedding API: apply one outage at ``now`` (OK_DRAIN, OK_FAIL: ``until`` -1 = until a
        resume; OK_RESUME: every unit of ``bits``). Returns the running jobs a failure stopped."""
        cdef State* S = &self.core.s
        cdef int rc = RC_OK
        if bits.shape[0] != S.W:
            raise ValueError("outage bits: W words")
        hit = self.jobs_on(bits) if kind != OK_RESUME else np.empty(0, np.int64)
        if kind == OK_RESUME:
            units_resume(S, &bits[0], INF if until < 0 else until)
        else:
            rc = units_down(S, &bits[0], INF if until < 0 else until, kind, now, S.outages.requeue)
        if rc != RC_OK:
            raise_status(rc, "an outage")
        return hit

    def figures(self):
        """What the outages did: killed, requeued, lost unit-seconds, units down now, units down
        that no event brings back, units down that a running job still holds."""
        cdef State* S = &self.core.s
        cdef OutageEvents* O = &S.outages
        return {"killed": O.killed, "requeued": O.requeued, "lost_unit_s": O.lost,
                "units_down": S.nodes.ndown, "units_lost": O.units_lost, "units_down_held": S.nodes.held_down}

    def down_units(self):
        """The units out of service now (W words)."""
        cdef State* S = &self.core.s
        arr = np.zeros(S.W, dtype=np.uint64)
        cdef uint64_t[::1] v = arr
        cdef int64_t w
        for w in range(S.W):
            v[w] = S.nodes.down[w]
        return arr

    def failure_arrays(self):
        """(requeues, lost unit-seconds) per job."""
        cdef State* S = &self.core.s
        n = S.jobs.n
        if S.jobs.requeues == NULL:
            return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        return int64_array(S.jobs.requeues, n), int64_array(S.jobs.lost, n)
