# The replay under the slurm-sim clock (header only): the Slurm 17.02 simulator's main loop, in which
# scheduling takes simulated time. One iteration: arrivals and completions due by now, the main
# scheduler when its timers allow, a backfill cycle when due, then TimeStep. A cycle charges its tests
# to the modelled workers (clock.pxd) and every bf_yield_interval of cycle time yields: when arrivals
# or completions are due by then, they are applied, the main scheduler runs and the cycle ends. The
# semantics, and each default's source: docs/engine.md "Scheduler time"; the oracle:
# pbf/reference/slurm_sim_ref.py.

from libc.stdint cimport int64_t
from libc.string cimport memmove

from memory cimport INF
from profile cimport prof_live_slots
from clock cimport clock_elapsed_us, clock_charge_all, clock_duration_us
from lifecycle cimport job_submit, job_finish, refresh_priorities, apply_corrections, heap_pop
from outages cimport outages_apply_due
from passes cimport (begin_full_pass, end_full_pass, job_step, record_pass, pass_clock, main_pass,
                     CM_SEARCH, STEP_STOP, STEP_ERROR)
from state cimport State, PassCtx
from pbf._codes cimport JS_PENDING, PR_WFP3, PK_FULL, EX_YIELD


cdef inline bint sim_events_due(State* S, int64_t now) noexcept nogil:
    # an arrival or a completion due by now (seconds)?
    return ((S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] <= now)
            or (S.replay.nheap > 0 and S.replay.heap[0].end <= now)
            or (S.outages.next < S.outages.n and S.outages.t[S.outages.next] <= now))


cdef inline int sim_apply_events(State* S, int64_t now) noexcept nogil:
    # the simulator's order: submit every job due, then complete every job due. A job's end stays
    # start + run time; its units come back now (the first iteration or yield at or after it).
    cdef int64_t j, n = 0, t
    cdef int rc
    while S.outages.next < S.outages.n and S.outages.t[S.outages.next] <= now:
        # outages due (rare), in time order with the completions before them: a job that ended by
        # the time its units failed has completed
        t = S.outages.t[S.outages.next]
        while S.replay.nheap > 0 and S.replay.heap[0].end <= t:
            j = heap_pop(S)
            job_finish(S, j, S.jobs.end[j])
            n += 1
        rc = outages_apply_due(S, t)
        if rc < 0:
            return -1
        n += 1
    while S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] <= now:
        j = S.replay.next_sub
        if job_submit(S, j) != 0:
            return -1
        S.replay.next_sub += 1
        if S.jobs.state[j] == JS_PENDING:
            n += 1
    while S.replay.nheap > 0 and S.replay.heap[0].end <= now:
        j = heap_pop(S)
        job_finish(S, j, S.jobs.end[j])
        n += 1
    if n:
        S.sim.event = True
        S.sim.changes += n
    return 0


cdef inline int sim_main_pass(State* S, int64_t depth_limit) noexcept nogil:
    # Slurm's main scheduler (passes.pxd main_pass) with its limits and its cost in simulated time
    cdef int64_t depth0 = S.totals.depth, cost = 0, started
    if main_pass(S, S.sim.now_us, depth_limit, S.sim.max_sched_us, S.sim.cost_main_us, &cost) != 0:
        return -1
    started = S.decided.nstarted
    S.sim.changes += started
    S.sim.main_passes += 1
    S.sim.main_tests += S.totals.depth - depth0
    S.sim.main_started += started
    S.sim.main_us += cost
    S.sim.now_us += cost
    return 0


cdef inline int sim_main_scheduler(State* S) noexcept nogil:
    # a full-depth main pass every sched_interval; otherwise, after arrivals or completions, one of
    # default_queue_depth jobs at most every batch_sched_delay
    cdef int64_t now = S.sim.now_us // 1000000
    if S.queue.n == 0:
        return 0
    if now - S.sim.last_full >= S.sim.sched_interval:
        S.sim.last_full = now
        S.sim.last_sched = now
        S.sim.event = False
        return sim_main_pass(S, -1)
    if S.sim.event and now - S.sim.last_sched >= S.sim.sched_delay:
        S.sim.last_sched = now
        S.sim.event = False
        return sim_main_pass(S, S.sim.queue_depth)
    return 0


cdef inline int sim_cycle(State* S) noexcept nogil:
    # One backfill cycle from now_us (the sequential pass with yields; decisions are those of the
    # full pass with the model clock, jobs start when the cycle reaches them). Advances now_us by
    # the cycle's charged time (its busiest modelled worker).
    cdef int64_t t0 = pass_clock(S), T0 = S.sim.now_us, now = T0 // 1000000, queue = S.queue.n
    cdef int64_t p = 0, elapsed = 0, next_yield, dur, W = S.cfg.workers, budget = S.clock.budget_us
    cdef PassCtx* c = &S.ctx
    cdef bint yielded = False
    cdef int rc
    if S.policy.prio >= PR_WFP3 and refresh_priorities(S, now) != 0:
        return -1
    if S.nodes.nrun > 0 and S.nodes.by_end[0].end <= now and apply_corrections(S, now) != 0:
        return -1
    if begin_full_pass(S, now, False) != 0:
        return -1
    c.start_us0 = T0
    # building and sorting the cycle's queue is serial work
    clock_charge_all(&S.clock, W, S.sim.cost_queue_us * queue)
    next_yield = S.sim.yield_us
    while p < S.queue.n:
        elapsed = clock_elapsed_us(&S.clock, W)
        if elapsed >= next_yield and not (budget > 0 and elapsed >= budget):
            S.sim.yields += 1
            if sim_events_due(S, (T0 + elapsed) // 1000000):
                c.ex = EX_YIELD
                yielded = True
                break
            next_yield = elapsed + S.sim.yield_us
        p = job_step(S, &S.prof, p, CM_SEARCH, NULL)
        if p == STEP_ERROR:
            return -1
        if p == STEP_STOP:
            break
    S.resume_st.valid = False
    end_full_pass(S, &S.prof)
    dur = S.last.charged_us
    rc = record_pass(S, now, PK_FULL, queue, c.depth, c.started, c.resv, c.ex, pass_clock(S) - t0,
                     prof_live_slots(&S.prof) if c.built else 0)
    if rc != 0:
        return rc
    S.sim.cycles += 1
    S.sim.cycle_us += dur
    if yielded:
        # the yield's mini loop: arrivals and completions due, the main scheduler; then the cycle ends
        S.sim.cycles_yielded += 1
        S.sim.now_us = T0 + elapsed
        if sim_apply_events(S, S.sim.now_us // 1000000) != 0 or sim_main_scheduler(S) != 0:
            return -1
        if S.sim.now_us < T0 + dur:
            S.sim.now_us = T0 + dur
    else:
        S.sim.now_us = T0 + dur
    return 0


cdef inline int64_t sim_next_action_us(State* S) noexcept nogil:
    # the earliest simulated time at which an iteration could do something (INF: the trace is done)
    cdef int64_t t = INF, x
    if S.replay.next_sub < S.jobs.n:
        t = S.jobs.submit[S.replay.next_sub] * 1000000
    if S.replay.nheap > 0:
        x = S.replay.heap[0].end * 1000000
        if x < t:
            t = x
    if S.outages.next < S.outages.n:
        x = S.outages.t[S.outages.next] * 1000000
        if x < t:
            t = x
    if S.queue.n > 0:
        x = (S.sim.last_full + S.sim.sched_interval) * 1000000
        if x < t:
            t = x
        if S.sim.event:
            x = (S.sim.last_sched + S.sim.sched_delay) * 1000000
            if x < t:
                t = x
        if S.sim.changes > 0 and S.sim.next_bf_us < t and not S.cfg.no_backfill:
            t = S.sim.next_bf_us
    return t


cdef inline int sim_run(State* S, int64_t max_iterations, bint* done) noexcept nogil:
    # the main loop for at most max_iterations iterations that do something (< 0: to the end);
    # iterations in which nothing can happen are skipped in one step (each still adds TimeStep)
    cdef int64_t count = 0, now, target, k
    if not S.sim.started:
        if S.jobs.n == 0:
            done[0] = True
            return 0
        S.sim.started = True
        now = S.jobs.submit[0]
        S.sim.now_us = now * 1000000
        S.sim.last_sched = now - S.sim.sched_delay
        S.sim.last_full = now - S.sim.sched_interval
        S.sim.next_bf_us = S.sim.now_us
    while max_iterations < 0 or count < max_iterations:
        count += 1
        S.sim.iterations += 1
        now = S.sim.now_us // 1000000
        S.replay.now = now
        if sim_apply_events(S, now) != 0 or sim_main_scheduler(S) != 0:
            return -1
        if (S.queue.n > 0 and S.sim.changes > 0 and S.sim.now_us >= S.sim.next_bf_us
                and not S.cfg.no_backfill):
            # Slurm's _more_work: a cycle only after a job or node changed since the last one
            S.sim.changes = 0
            if sim_cycle(S) != 0:
                return -1
            S.sim.next_bf_us = S.sim.now_us + S.cfg.bf_interval * 1000000
        S.sim.now_us += S.sim.step_us
        target = sim_next_action_us(S)
        if target == INF:
            S.replay.now = S.sim.now_us // 1000000
            done[0] = True
            return 0
        if target > S.sim.now_us:
            k = (target - S.sim.now_us + S.sim.step_us - 1) // S.sim.step_us
            S.sim.now_us += k * S.sim.step_us
            S.sim.iterations += k
    done[0] = False
    return 0
