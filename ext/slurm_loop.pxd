# The slurm-sim clock as a time model of the replay's event loop (header only; the loop is cycle.pxd):
# the Slurm 17.02 simulator's main loop, in which scheduling takes simulated time. An iteration
# applies the arrivals and completions due by now, runs the main scheduler when its timers allow and
# a backfill cycle when due, then adds TimeStep. A cycle charges its tests to the modelled workers
# (clock.pxd) and every bf_yield_interval of cycle time yields: when arrivals or completions are due
# by then, the cycle ends and the loop's next instant is the yield (those events applied, the main
# scheduler run), after which time goes on from the cycle's end. The semantics, and each default's
# source: docs/engine.md "Scheduler time"; the oracle: pbf/reference/slurm_sim_ref.py.
#
# The modelled workers are not threads: a cycle's tests run on this thread. With SimTime.threads 2 or
# more (`pbf replay --threads`) a helper thread tests Slurm's later starts ahead as on the free clock
# (slurm_try_later.pxd, NodeSplit): the answers are taken in order, so the decisions, the charged
# time and the schedule are those of one thread; only the wall time changes. The free clock's
# trials and back-offs decide whether a cycle shares, on the cycles' own wall time.

from libc.stdint cimport int64_t

from memory cimport INF
from ticks cimport now_ticks
from profile cimport prof_live_slots
from clock cimport clock_elapsed_us, clock_charge_all
from pass_steps cimport pass_clock, CM_SEARCH, STEP_STOP, STEP_ERROR
from parallel_pass cimport split_arm, split_disarm, split_trial_share, split_trial_note
from passes cimport pass_slots, begin_full_pass, end_full_pass, job_step, record_pass, main_pass, pass_prologue
from lifecycle cimport heap_top_end
from state cimport State, PassCtx
from pbf._codes cimport PK_FULL, EX_YIELD
from pbf._codes cimport RC_OK, RC_NO_MEMORY


cdef inline bint sim_events_due(State* S, int64_t now) noexcept nogil:
    # an arrival or a completion due by now (seconds)?
    return ((S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] <= now)
            or heap_top_end(S) <= now
            or (S.outages.next < S.outages.n and S.outages.t[S.outages.next] <= now))


cdef inline int sim_main_pass(State* S, int64_t depth_limit) noexcept nogil:
    # Slurm's main scheduler (passes.pxd main_pass) with its limits and its cost in simulated time
    cdef int64_t depth0 = S.totals.depth, cost = 0, started
    if main_pass(S, S.sim.now_us, depth_limit, S.sim.max_sched_us, S.sim.cost_main_us, &cost) != RC_OK:
        return RC_NO_MEMORY
    started = S.decided.nstarted
    S.sim.changes += started
    S.sim.main_passes += 1
    S.sim.main_tests += S.totals.depth - depth0
    S.sim.main_started += started
    S.sim.main_us += cost
    S.sim.now_us += cost
    return RC_OK


cdef inline int sim_main_scheduler(State* S) noexcept nogil:
    # a full-depth main pass every sched_interval; otherwise, after arrivals or completions, one of
    # default_queue_depth jobs at most every batch_sched_delay; with end_main, after completions one
    # at once (Slurm 22.05: an epilog-complete RPC calls schedule(false), which neither waits for nor
    # restarts batch_sched_delay; controller.c's timer serves the submissions)
    cdef int64_t now = S.sim.now_us // 1000000
    cdef bint ended = S.sim.ended
    S.sim.ended = False
    if S.queue.n == 0:
        return RC_OK
    if now - S.sim.last_full >= S.sim.sched_interval:
        S.sim.last_full = now
        S.sim.last_sched = now
        S.sim.event = False
        return sim_main_pass(S, -1)
    if S.sim.event and now - S.sim.last_sched >= S.sim.sched_delay:
        S.sim.last_sched = now
        S.sim.event = False
        return sim_main_pass(S, S.sim.queue_depth)
    if ended:
        return sim_main_pass(S, S.sim.queue_depth)
    return RC_OK


cdef inline bint sim_split_pays(State* S) noexcept nogil:
    # whether a cycle's tests may share with a helper thread (cycle.pxd split_pays, with the real
    # threads in place of the workers, which are modelled here)
    return (S.plan.split_search and S.sim.threads > 1 and S.pool.threads > 0 and S.cost.cores > 1
            and S.testing.split_min_nodes > 0)


cdef inline int sim_cycle(State* S) noexcept nogil:
    # One backfill cycle from now_us (the sequential pass with yields; decisions are those of the
    # full pass with the model clock, jobs start when the cycle reaches them). Advances now_us by
    # the cycle's charged time (its busiest modelled worker), or to the yield that ended it.
    cdef int64_t t0 = pass_clock(S), T0 = S.sim.now_us, now = T0 // 1000000, queue = S.queue.n
    cdef int64_t p = 0, elapsed = 0, next_yield, dur, W = S.cfg.workers, budget = S.clock.budget_us
    cdef PassCtx* c = &S.ctx
    cdef bint yielded = False, split = sim_split_pays(S), shared = False
    cdef int64_t w0 = 0
    cdef int rc
    if pass_prologue(S, now) != RC_OK or begin_full_pass(S, now, False) != RC_OK:
        return RC_NO_MEMORY
    if split:
        shared = split_trial_share(S) and split_arm(S, S.testing.split_min_nodes)
        w0 = now_ticks()
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
        p = job_step(S, &S.prof, &S.nm, p, CM_SEARCH, NULL)
        if p == STEP_ERROR or p == STEP_STOP:
            break
    if split:
        if shared:
            split_disarm(S)
        split_trial_note(S, shared, now_ticks() - w0, c.depth)
    if p == STEP_ERROR:
        return RC_NO_MEMORY
    S.resume_st.valid = False
    end_full_pass(S, &S.prof)
    dur = S.last.charged_us
    rc = record_pass(S, now, PK_FULL, queue, c.depth, c.started, c.resv, c.ex, pass_clock(S) - t0,
                     pass_slots(S))
    if rc != RC_OK:
        return rc
    S.sim.cycles += 1
    S.sim.cycle_us += dur
    if yielded:
        # the loop's next instant is the yield (its arrivals and completions, the main scheduler);
        # time then goes on from the cycle's end
        S.sim.cycles_yielded += 1
        S.sim.now_us = T0 + elapsed
        S.sim.resume_us = T0 + dur
        S.sim.in_yield = True
    else:
        S.sim.now_us = T0 + dur
    return RC_OK


cdef inline int64_t sim_next_action_us(State* S, int64_t t) noexcept nogil:
    # the earliest simulated time at which an iteration could do something, given t (us), the
    # earliest of the event sources (arrivals, completions, outages, timers); INF: the trace is done
    cdef int64_t x
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
