# What every job test of a full pass shares, whatever the planner (header only): the start of a
# test (its limits and charge), a start or a reservation committed and published to the parallel
# pass's log, and the times a plan is built from. The planners (plan_units.pxd, plan_nodes.pxd,
# plan_slurm.pxd) make their tests from these; the passes (passes.pxd) call the planner's table.

from libc.stdint cimport uint64_t, int64_t, int32_t

from memory cimport append
from words cimport w_copy, w_zero, w_take_lowest
from ticks cimport now_ticks
from profile cimport Prof, prof_ensure_scratch, prof_round_up, prof_commit
from clock cimport clock_charge_test
from sync cimport pbf_store
from lifecycle cimport job_start
from state cimport State, PassCtx
from node_model cimport NodeModel, nm_eligible
from licenses cimport lic_free_now
from qos_limits cimport ql_holds
from pbf._codes cimport CK_FREE, HOW_MAIN, HOW_BACKFILL, EX_END, EX_MAX_JOB_TEST, EX_BUDGET
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


cdef enum:                     # how job_step finds a job's start
    CM_SEARCH = 0              # search the profile (the sequential pass, the SJBF phase)
    CM_ORDERED = 1             # confirm a speculation by the AND test, commits in queue order (DESIGN §5)
    CM_EAGER = 2               # search again, commits in completion order (no queue-order shortcuts)

cdef enum:                     # what job_step returns besides the next queue position
    STEP_STOP = -1             # the pass ends here (PassCtx.ex, phase2 say why)
    STEP_ERROR = -2            # out of memory

# ---- small pieces

cdef inline int64_t pass_clock(State* S) noexcept nogil:
    # A pass's wall time is read only where someone uses it: the per-pass records, or the parallel
    # pass's choice of threads. Two clock reads are 5-10 % of a replay of short passes.
    if S.cfg.record_passes or S.cfg.workers > 1:
        return now_ticks()
    return 0


cdef inline int64_t planned_end(State* S, int64_t i, int64_t now) noexcept nogil:
    # the profile's time for the i-th running job's end (by_end order)
    cdef int64_t e = S.nodes.by_end[i].end
    if e <= now:
        e = now + 1
    if S.prof.resolution > 1:
        e = prof_round_up(&S.prof, e)
    return e


cdef inline int64_t release_time(State* S, int64_t t, int64_t now) noexcept nogil:
    # the profile's time for units coming back at t (as planned_end: never before now + 1, rounded)
    if t <= now:
        t = now + 1
    if S.prof.resolution > 1:
        t = prof_round_up(&S.prof, t)
    return t

cdef inline int ensure_scratch(State* S) noexcept nogil:
    # the backward walk of prof_choose lists at most every slot: 1 + running + 2 per placement
    return prof_ensure_scratch(&S.prof, S.nodes.nrun + 2 * S.queue.n + 8)


cdef inline void take_lowest_free(State* S, Prof* P, int64_t k) noexcept nogil:
    # P.chosen = the k lowest free units (a start now with no reservation in the pass: the future
    # only has more free units, so this is exactly what the profile would give)
    w_copy(P.cand, S.nodes.free, S.W)
    w_zero(P.chosen, S.W)
    w_take_lowest(P.cand, P.chosen, k, S.W)


cdef inline void log_append(State* S, const uint64_t* units, int64_t j, int64_t k, int64_t t, int64_t d,
                            bint resv) noexcept nogil:
    # publish job j's placement (only the committer writes; readers acquire the count)
    cdef int64_t e = S.log.n
    S.log.job[e] = j
    S.log.t[e] = t
    S.log.d[e] = d
    S.log.k[e] = k
    S.log.resv[e] = resv
    w_copy(S.log.bits + e * S.W, units, S.W)
    pbf_store(&S.log.n, e + 1)


cdef inline int commit_start(State* S, Prof* P, int64_t p, int64_t j, int64_t k, int64_t d, int32_t si,
                             bint on_profile) noexcept nogil:
    # start job j (queue position p) now on P.chosen; on_profile: remove them from P too
    cdef PassCtx* c = &S.ctx
    if on_profile:
        P.prev_of_at = -1
        if prof_commit(P, k, c.now, d, si, False) != RC_OK:
            return RC_NO_MEMORY
        if c.parallel:
            log_append(S, P.chosen, j, k, c.now, d, False)
    if job_start(S, j, c.now if c.start_us0 < 0 else (c.start_us0 + S.clock.last_us) // 1000000,
                 P.chosen) != RC_OK:
        return RC_NO_MEMORY
    S.queue.entries[p].job = -1
    if c.first_start < 0 or p < c.first_start:
        c.first_start = p
    S.jobs.how[j] = HOW_BACKFILL if c.blocked else HOW_MAIN
    c.backfilled = c.backfilled or c.blocked
    c.started += 1
    return append(&S.decided.started, &S.decided.nstarted, &S.decided.started_cap, j)


cdef inline int commit_reservation(State* S, Prof* P, int64_t j, int64_t k, int64_t t, int64_t d,
                                   int32_t si) noexcept nogil:
    # reserve P.chosen for job j from t on
    if prof_commit(P, k, t, d, si, True) != RC_OK:
        return RC_NO_MEMORY
    if S.ctx.parallel:
        log_append(S, P.chosen, j, k, t, d, True)
    return note_reservation(S, j, t)


cdef inline int note_reservation(State* S, int64_t j, int64_t t) noexcept nogil:
    # job j is reserved from t on (the plan already holds it)
    cdef PassCtx* c = &S.ctx
    S.jobs.resv[j] = t
    if S.jobs.resv_min[j] < 0 or t < S.jobs.resv_min[j]:
        S.jobs.resv_min[j] = t
    if append(&S.decided.reserved, &S.decided.nreserved, &S.decided.reserved_cap, j) != RC_OK:
        return RC_NO_MEMORY
    c.resv += 1
    if c.resv_left > 0:
        pbf_store(&c.resv_left, c.resv_left - 1)
    c.blocked = True
    return RC_OK


cdef inline int count_rest(State* S, int64_t q, int64_t slots, int64_t* depth) noexcept nogil:
    # The remaining q jobs all fail their test at once (nothing is free now, no reservation left):
    # count them as tested, and charge them, exactly as testing them one by one would. Returns the
    # exit reason.
    if S.clock.kind == CK_FREE:
        if S.cfg.max_job_test >= 0 and depth[0] + q > S.cfg.max_job_test:
            depth[0] = S.cfg.max_job_test
            return EX_MAX_JOB_TEST
        depth[0] += q
        return EX_END
    while q > 0:
        if S.cfg.max_job_test >= 0 and depth[0] >= S.cfg.max_job_test:
            return EX_MAX_JOB_TEST
        if not clock_charge_test(&S.clock, S.cfg.workers, slots, 0, S.ctx.resv):
            return EX_BUDGET
        depth[0] += 1
        q -= 1
    return EX_END


# ---- the start of every job test

cdef inline bint begin_test(State* S, int64_t p, int64_t slots, NodeModel* M, int64_t* j, int64_t* k,
                            int64_t* d) noexcept nogil:
    # The test of the job at queue position p begins: False when the pass ends here instead (the
    # test limit, or the clock's budget, charged for a plan of `slots` and, on a node cluster M, the
    # nodes that could hold the job); else its job, units and duration, and it counts as tested.
    cdef PassCtx* c = &S.ctx
    cdef int64_t nodes = 0
    if S.cfg.max_job_test >= 0 and c.depth >= S.cfg.max_job_test:
        c.ex = EX_MAX_JOB_TEST
        return False
    if S.clock.kind != CK_FREE:
        if M != NULL and S.clock.cost_node_us != 0:
            nm_eligible(M, S.queue.entries[p].job)
            nodes = M.nelig
        if not clock_charge_test(&S.clock, S.cfg.workers, slots, nodes, c.resv):
            c.ex = EX_BUDGET
            return False
    j[0] = S.queue.entries[p].job
    k[0] = S.queue.entries[p].units
    d[0] = S.queue.entries[p].est
    if c.start_us0 >= 0:
        # slurm-sim clock: the job would start when the cycle reaches it, this late after the
        # cycle's now; it is planned so (it needs its units that much longer from now)
        d[0] += (c.start_us0 + S.clock.last_us) // 1000000 - c.now
    c.depth += 1
    return True


cdef inline bint passed_over(State* S, int64_t j) noexcept nogil:
    # job j waits for licenses not all free now (licenses.pxd), or would take its user or its QOS over
    # a QOS limit (qos_limits.pxd): every planner passes over it before its test (no start, no
    # reservation, not counted toward the test limit: Slurm's backfill counts a job toward
    # bf_max_job_test only when it reaches the will-run test, and checks both before). It does not
    # block the jobs after it: Slurm's main scheduler goes on past it, and its backfill plans neither.
    return ((S.lic.on and not lic_free_now(&S.lic, j))
            or (S.qos_lim.on and ql_holds(&S.qos_lim, j, S.jobs.user[j], S.jobs.units[j])))
