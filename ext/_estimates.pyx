"""Start-time estimates' entry points (``ext/estimates.pxd``) on a core's state.

A :class:`StartEstimates` takes a :class:`pbf._core.Core`: a replay records each job's estimated
start as it runs (:meth:`StartEstimates.record`, read back with :meth:`StartEstimates.recorded`);
the embedding API asks for the plan of the queue now (:meth:`StartEstimates.plan`). Internal: use
:func:`pbf.replay` (``start_estimates=True``) or :meth:`pbf.Engine.plan`.
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport malloc, free

from state cimport State
from records cimport StartEstimates as EstimateRecords
from estimates cimport plan_starts
from pbf._core cimport Core, int64_array, raise_status
from pbf._codes cimport RC_OK


cdef class StartEstimates:
    """Start-time estimates on ``core``."""
    cdef Core core

    def __cinit__(self, Core core not None):
        self.core = core

    def record(self, int64_t every=0):
        """Replay (after load_trace): record each job's estimated start right after the instant it
        arrives, and with ``every`` > 0 every pending job's every ``every`` instants with a pass."""
        cdef State* S = &self.core.s
        cdef int64_t i, n = S.jobs.n
        free(S.est.at_submit)
        S.est.at_submit = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if S.est.at_submit == NULL:
            raise MemoryError("pbf core: out of memory (start estimates)")
        for i in range(n):
            S.est.at_submit[i] = -1
        S.est.on = True
        S.est.every = every

    def recorded(self):
        """(estimate at arrival per job, periodic records: time, job, estimate)."""
        cdef State* S = &self.core.s
        cdef EstimateRecords* E = &S.est
        at = int64_array(E.at_submit, S.jobs.n) if E.at_submit != NULL else None
        return at, (int64_array(E.log_t, E.nlog), int64_array(E.log_job, E.nlog), int64_array(E.log_est, E.nlog))

    def plan(self, int64_t now):
        """The start-time plan of the queued jobs at ``now`` (estimates.pxd): (jobs in queue order,
        planned starts (-1: none), planned units (W words each))."""
        cdef State* S = &self.core.s
        cdef int64_t n = S.queue.n, W = S.W
        jobs = self.core.pending()
        starts = np.empty(n, dtype=np.int64)
        units = np.zeros((n, W), dtype=np.uint64)
        cdef int64_t[::1] vs = starts
        cdef uint64_t[:, ::1] vu = units
        cdef int rc = RC_OK
        if n == 0:
            return jobs, starts, units
        with nogil:
            rc = plan_starts(S, now, &vs[0], &vu[0, 0] if W else NULL)
        if rc != RC_OK:
            raise_status(rc, "a plan")
        if S.prec.nsplit:               # (a job queued once a partition tier: planned at its first entry)
            keep = starts != -2
            starts, units = starts[keep], units[keep]
        return jobs, starts, units
