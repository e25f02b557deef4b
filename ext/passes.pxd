# The passes (header only): the sequential full pass and its SJBF phase, and Slurm's quick
# main-scheduler pass. A pass asks the cluster's planner (State.plan, planner.pxd) for its plan and
# for each job test; the parallel pass (parallel_pass.pxd) commits through the same test, and
# sequential is the one-worker case.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport qsort


from memory cimport INF, grow, append
from nodes cimport EndKey, endkey_cmp
from queue cimport PendEntry, queue_compact, entry_key
from profile cimport Prof, prof_start_pass
from clock cimport clock_start, clock_duration_us
from records cimport records_add
from parallel cimport Spec
from lifecycle cimport job_start, refresh_priorities, apply_corrections
from state cimport State, PassCtx
from node_model cimport NodeModel
from bf_limits cimport bfl_main_passes_over
from resv_inside cimport ri_group, ri_current
from pass_steps cimport CM_SEARCH, STEP_STOP, STEP_ERROR, pass_clock, ensure_scratch, passed_over
from pbf._codes cimport (CK_FREE, CK_MODEL, CK_SLURM_SIM, HOW_MAIN, PK_FULL, PK_QUICK, EX_END, EX_MAX_JOB_TEST,
                         EX_QUICK_BLOCKED, EX_BUDGET)
from pbf._codes cimport RC_OK, RC_NO_MEMORY, JS_PENDING, prio_time_dependent


cdef inline int build_plan(State* S, int64_t now) noexcept nogil:
    # the pass's plan of the future (the planner's: per unit, or per node)
    return S.plan.build(S, now)


cdef inline int64_t pass_slots(State* S) noexcept nogil:
    # the size of the pass's plan (its record; the model clock's per-slot charge)
    if not S.ctx.built:
        return 0
    return S.plan.size(S)


cdef inline int64_t job_step(State* S, Prof* P, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil:
    # Test the job at queue position p: start it now, reserve it, or skip it, and count it (the
    # planner's test, on the profile P or the node plan M). Every full pass runs its jobs through
    # here: the sequential pass and its SJBF phase (CM_SEARCH), and the commits of the parallel pass
    # (CM_ORDERED, CM_EAGER), which find the start from their speculation `spec`. Returns the next
    # queue position to test, STEP_STOP or STEP_ERROR.
    return S.plan.step(S, P, M, p, mode, spec)


# ---- the sequential full pass

cdef inline int begin_full_pass(State* S, int64_t now, bint parallel) noexcept nogil:
    # what every full pass does first: scratch space, the clock, a fresh per-pass profile state
    # (monotone: a start now clears units only before its end; a reservation takes units from the
    # future and breaks it), last pass's plans forgotten, a fresh PassCtx
    cdef int64_t p
    cdef PassCtx* c = &S.ctx
    if ensure_scratch(S) != RC_OK or clock_start(&S.clock, S.cfg.workers) != RC_OK:
        return RC_NO_MEMORY
    prof_start_pass(&S.prof, S.cfg.bf_window, S.cfg.bf_resolution)
    for p in range(S.decided.nreserved):
        S.jobs.resv[S.decided.reserved[p]] = -1
    S.decided.nstarted = 0
    S.decided.nreserved = 0
    c.now = now
    c.start_us0 = -1
    c.depth = 0
    c.started = 0
    c.resv = 0
    c.resv_left = S.cfg.resv_max
    c.phase2 = -1
    c.first_start = -1
    c.reeval = 0
    c.conflicts = 0
    c.inversions = 0
    c.ex = EX_END
    c.blocked = False
    c.backfilled = False
    c.built = False
    c.parallel = parallel
    c.in_phase2 = False
    return S.plan.begin(S, now)


cdef inline bint can_resume(State* S, int64_t now) noexcept nogil:
    # The last full pass can be continued instead of run again when nothing it decided can come out
    # differently: no job started or ended since (its own starts aside) and no estimate changed;
    # every arrival since is queued behind its jobs (static priority); no slot boundary of its
    # profile has been reached (the profile at `now` is the same but for where slot 0 begins); it
    # started nothing after its first blocked job (a backfill start would change the units a fresh
    # pass gives the reservations made before it); and nothing depends on how many jobs are tested
    # (free clock, no max_job_test, no window, no SJBF phase). Every job it left queued then fails
    # again -- a job that could not start at the last pass cannot start later on the same profile,
    # and each reservation comes out the same -- so a fresh pass would repeat its decisions and
    # only test the new arrivals.
    return (S.testing.resume and S.resume_st.valid and S.resume_st.version == S.nodes.version
            and S.clock.kind == CK_FREE and S.cfg.max_job_test < 0 and S.cfg.bf_window == 0
            and not S.cfg.resv_stop and S.plan.resumable
            and not S.cfg.sjbf and not prio_time_dependent(S.policy.prio) and now >= S.resume_st.time
            and S.queue.n >= S.resume_st.npend
            and (S.prof.s_next[0] == -1 or S.prof.s_begin[S.prof.s_next[0]] > now))


cdef inline int resume_pass(State* S, int64_t now) noexcept nogil:
    # continue the last pass: its queued jobs count as tested, its reservations stand
    cdef PassCtx* c = &S.ctx
    if ensure_scratch(S) != RC_OK:
        return RC_NO_MEMORY
    S.prof.s_begin[0] = now
    S.decided.nstarted = 0
    c.now = now
    c.start_us0 = -1
    c.depth = S.resume_st.npend
    c.started = 0
    c.resv = S.resume_st.resv
    c.resv_left = S.resume_st.resv_left
    c.blocked = S.resume_st.blocked
    c.phase2 = -1
    c.first_start = -1
    c.ex = EX_END
    c.backfilled = False
    c.built = True
    c.parallel = False
    c.in_phase2 = False
    c.reeval = 0
    c.conflicts = 0
    c.inversions = 0
    S.resume_st.count += 1
    return RC_OK


cdef inline int sjbf_phase(State* S, Prof* P, NodeModel* M) noexcept nogil:
    # EASY-SJBF: the jobs after the reserved ones are tried shortest estimate first (or by a
    # chooser's keys), for a start now only; ties in priority order. Starts here are backfill.
    cdef PassCtx* c = &S.ctx
    cdef int64_t first = c.phase2, n = S.queue.n - c.phase2, i, q
    cdef EndKey* order
    if n <= 0:
        return RC_OK
    if grow(<void**>&S.ends, &S.ends_cap, n, sizeof(EndKey)) != RC_OK:
        return RC_NO_MEMORY
    order = S.ends
    for i in range(n):
        order[i].end = (S.jobs.bfkey[S.queue.entries[first + i].job] if S.cfg.bf_keyed
                        else S.queue.entries[first + i].est)
        order[i].job = first + i
    qsort(order, n, sizeof(EndKey), endkey_cmp)
    c.in_phase2 = True
    c.blocked = True
    for i in range(n):
        q = job_step(S, P, M, order[i].job, CM_SEARCH, NULL)
        if q == STEP_ERROR:
            return RC_NO_MEMORY
        if q == STEP_STOP:
            break
    return RC_OK


cdef inline void end_full_pass(State* S, Prof* P) noexcept nogil:
    # the SJBF phase done, the queue loses the jobs started; the figures of the pass
    cdef PassCtx* c = &S.ctx
    cdef int64_t i, n = S.cfg.workers
    if c.started:
        queue_compact(&S.queue, &S.jobs, c.first_start)
    S.last.charged_us = clock_duration_us(&S.clock, n) if S.clock.kind != CK_FREE else 0
    S.last.reeval = c.reeval
    S.last.conflicts = c.conflicts
    S.last.inversions = c.inversions
    S.last.tests_max = -1
    S.last.tests_min = -1
    if (S.clock.kind == CK_MODEL or S.clock.kind == CK_SLURM_SIM) and S.clock.n >= n:
        S.last.tests_max = S.clock.tests[0]
        S.last.tests_min = S.clock.tests[0]
        for i in range(n):
            if S.clock.tests[i] > S.last.tests_max:
                S.last.tests_max = S.clock.tests[i]
            if S.clock.tests[i] < S.last.tests_min:
                S.last.tests_min = S.clock.tests[i]


cdef inline int record_pass(State* S, int64_t now, int kind, int64_t queue, int64_t depth, int64_t started,
                            int64_t resv, int ex, int64_t wall, int64_t slots) noexcept nogil:
    S.last.wall_ticks = wall
    return records_add(&S.records, &S.totals, &S.last, S.cfg.record_passes, now, kind, queue, depth,
                       started, resv, ex, wall, slots)


cdef inline int pass_prologue(State* S, int64_t now) noexcept nogil:
    # before a full pass or a backfill cycle at now: time-dependent priorities refreshed, running
    # jobs whose planned end is not in the future corrected (the checks that let both calls out are here)
    if prio_time_dependent(S.policy.prio) and refresh_priorities(S, now) != RC_OK:
        return RC_NO_MEMORY
    if S.nodes.nrun > 0 and S.nodes.by_end[0].end <= now and apply_corrections(S, now) != RC_OK:
        return RC_NO_MEMORY
    return RC_OK


cdef inline int full_pass_sequential(State* S, int64_t now) noexcept nogil:
    cdef int64_t t0 = pass_clock(S), queue = S.queue.n, p
    cdef PassCtx* c = &S.ctx
    if can_resume(S, now):
        if resume_pass(S, now) != RC_OK:
            return RC_NO_MEMORY
        p = S.resume_st.npend
    else:
        if begin_full_pass(S, now, False) != RC_OK:
            return RC_NO_MEMORY
        p = 0
    while p < S.queue.n:
        p = job_step(S, &S.prof, &S.nm, p, CM_SEARCH, NULL)
        if p == STEP_ERROR:
            return RC_NO_MEMORY
        if p == STEP_STOP:
            break
    if c.phase2 >= 0 and c.ex == EX_END:
        if not c.built:
            if build_plan(S, now) != RC_OK:
                return RC_NO_MEMORY
            c.built = True
        if sjbf_phase(S, &S.prof, &S.nm) != RC_OK:
            return RC_NO_MEMORY
    S.resume_st.valid = c.ex == EX_END and c.phase2 < 0 and c.built and not c.backfilled
    if S.resume_st.valid:
        S.resume_st.version = S.nodes.version
        S.resume_st.resv = c.resv
        S.resume_st.resv_left = c.resv_left
        S.resume_st.blocked = c.blocked
        S.resume_st.time = now
    end_full_pass(S, &S.prof)
    if S.resume_st.valid:
        S.resume_st.npend = S.queue.n
    return record_pass(S, now, PK_FULL, queue, c.depth, c.started, c.resv, c.ex, pass_clock(S) - t0,
                       pass_slots(S))


# ---- Slurm's main scheduler

cdef inline int main_pass(State* S, int64_t t_us, int64_t depth_limit, int64_t max_cost_us, int64_t cost_test_us,
                          int64_t* cost_out) noexcept nogil:
    # Start jobs in priority order while they fit now, stopping at the first that does not (it keeps
    # the queue head from being overtaken between backfill passes), after depth_limit jobs (< 0: no
    # limit) or once the tests have cost max_cost_us. Each test costs cost_test_us; a job starts when
    # the pass reaches it (t_us plus the cost so far; with no cost, at t_us). The slurm-sim clock's
    # main scheduler sets the limits; the interval trigger's quick pass has none.
    cdef int64_t t0 = pass_clock(S), now = t_us // 1000000, cost = 0, p, j, k, w, started = 0, depth = 0, first = -1
    cdef int64_t queue = S.queue.n
    cdef int ex = EX_END
    if refresh_priorities(S, now) != RC_OK:
        return RC_NO_MEMORY
    cdef int32_t g
    S.decided.nstarted = 0
    S.decided.nreserved = 0
    S.main.failed = 0
    S.main.failed_resv = 0
    S.ar.main_out = 0
    for p in range(S.queue.n):
        S.main.skip = False
        S.main.job_parts = 0
        if depth_limit >= 0 and depth >= depth_limit:
            ex = EX_MAX_JOB_TEST
            break
        if cost >= max_cost_us:
            ex = EX_BUDGET
            break
        j = S.queue.entries[p].job
        k = S.queue.entries[p].units
        S.main.rec = S.queue.entries[p].rec
        if S.main.rec >= 0 and S.jobs.state[j] != JS_PENDING:
            continue                  # (a split job started in another partition: not tried, not counted)
        depth += 1
        cost += cost_test_us
        if passed_over(S, j):
            continue                  # (Slurm's main scheduler goes on past it: reason Licenses, QOS...)
        g = ri_group(&S.ar, j)
        if 0 < g <= 64 and (S.main.failed_resv >> (g - 1)) & 1:
            continue                  # (a job of its reservation failed in this pass: not tried, reason Priority)
        S.ar.now = (t_us + cost) // 1000000
        S.ar.d = S.queue.entries[p].est
        if not S.plan.take_now(S, j, k):
            if S.main.skip:
                continue              # (every partition of the job failed in this pass: not tried)
            if bfl_main_passes_over(&S.ss.lim, S.jobs.submit[j], -entry_key(&S.prec, &S.jobs, j, S.main.rec), now):
                continue              # (bf_min_age_reserve / bf_min_prio_reserve: it blocks nothing)
            if g > 0:
                # Slurm's _schedule: a job inside a reservation that cannot start fails its reservation
                # for the rest of the pass (failed_resv), not its partition; one whose reservation has
                # not begun (ESLURM_RESERVATION_NOT_USABLE) also takes the reservation's nodes out of
                # the pass (avail_node_bitmap)
                if g <= 64:
                    S.main.failed_resv |= (<uint64_t>1) << (g - 1)
                    w = ri_current(&S.ar, g, S.ar.now)
                    if w >= 0 and S.ar.start[w] > S.ar.now:
                        S.ar.main_out |= (<uint64_t>1) << (g - 1)
                continue
            if S.main.job_parts:
                # Slurm's _schedule: its partitions fail for the rest of the pass (their jobs are not
                # tried, their nodes go to no later job); the pass goes on while one has not failed
                S.main.failed |= S.main.job_parts
                if S.main.all_parts & ~S.main.failed:
                    continue
            ex = EX_QUICK_BLOCKED
            break
        if job_start(S, j, (t_us + cost) // 1000000, S.prof.chosen) != RC_OK:
            return RC_NO_MEMORY
        S.jobs.how[j] = HOW_MAIN
        S.queue.entries[p].job = -1
        if first < 0:
            first = p
        started += 1
        if append(&S.decided.started, &S.decided.nstarted, &S.decided.started_cap, j) != RC_OK:
            return RC_NO_MEMORY
    S.main.rec = -1
    S.ar.main_out = 0
    if started:
        # (the started entries: the first `started` ones, but for jobs passed over for licenses)
        queue_compact(&S.queue, &S.jobs, first)
        S.resume_st.valid = False
    S.last.charged_us = cost
    cost_out[0] = cost
    return record_pass(S, now, PK_QUICK, queue, depth, started, 0, ex, pass_clock(S) - t0, 0)


cdef inline int quick_pass(State* S, int64_t now) noexcept nogil:
    # the interval trigger's main scheduler: no depth limit, no cost
    cdef int64_t cost
    return main_pass(S, now * 1000000, -1, INF, 0, &cost)
