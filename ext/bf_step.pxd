# Slurm's own backfill limits at a job's test (header only): bf_limits.pxd's rules on the engine's state,
# called by plan_slurm.pxd slurm_node_step before the test of the job at a queue position.

from libc.stdint cimport int64_t, uint64_t

from state cimport State, PassCtx
from bf_limits cimport bfl_check, BFL_STOP
from queue cimport entry_key
from pbf._codes cimport EX_MAX_JOB_TEST


cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline int bfl_step(State* S, int64_t p, uint64_t parts) noexcept nogil:
    # bf_limits.pxd's BFL_* for the job at queue position p of the cycle under way, in the first of the
    # partitions `parts` (a record's; 0: none, counted as partition 0). The cycle's number
    # is the count of passes recorded before it; its time where it reaches the job, the cycle's now
    # plus, under the slurm-sim clock, what its tests so far have cost. bf_max_job_start ends the pass
    # as a test limit does (EX_MAX_JOB_TEST).
    cdef PassCtx* c = &S.ctx
    cdef int64_t j = S.queue.entries[p].job
    cdef int64_t now = c.now if c.start_us0 < 0 else (c.start_us0 + S.clock.last_us) // 1000000
    cdef int rc = bfl_check(&S.ss.lim, S.jobs.user[j], S.users.n, __builtin_ctzll(parts) if parts else 0,
                            S.jobs.submit[j], -entry_key(&S.prec, &S.jobs, j, S.queue.entries[p].rec),
                            S.totals.count, now, c.depth, S.cfg.max_job_test, c.started)
    if rc == BFL_STOP:
        c.ex = EX_MAX_JOB_TEST
    return rc
