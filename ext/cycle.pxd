# The scheduling cycle and the replay's one event loop (header only), all without the GIL.
#
# The loop moves from instant to instant over a small table of event sources: arrivals, completions
# (at start + run time, or where co-allocation's rates move them), outages, and the timers: the
# interval trigger's backfill pass, co-allocation's decision rounds. At each instant it applies the
# completions and outages due, stops for Python plugins when they are on (Config.hooks), applies the
# arrivals, schedules, then runs the after-pass hooks: the co-allocation pass and start-time
# estimates. Scheduling depends on the time model:
#   * event and model/wall clocks: a full pass on every event (TR_EVENT), or one every bf_interval
#     with the main scheduler's quick pass on events between (TR_INTERVAL); scheduling takes no
#     simulated time;
#   * the slurm-sim clock (slurm_loop.pxd): instants are the simulator's main-loop iterations (every
#     TimeStep, skipped in one step while nothing can happen) and the yields of backfill cycles;
#     its main scheduler and cycles cost simulated time, and it applies an instant's arrivals before
#     the completions due (the Slurm simulator's order).

from libc.stdint cimport int64_t, int32_t
from libc.stdlib cimport realloc, free

from memory cimport INF
from ticks cimport PBF_HAVE_TSC
from lifecycle cimport job_submit, job_finish, heap_pop, heap_top_end
from outages cimport outages_apply_due
from advance_resv cimport ar_next_end, ar_ends_due
from resv_inside cimport ri_group, ri_current
from qos_limits cimport ql_submitted
from estimates cimport record_estimates
from coalloc cimport co_after_pass, co_tick, co_job_ended
from passes cimport quick_pass, full_pass_sequential, pass_prologue, record_pass, pass_slots
from parallel_pass cimport full_pass_parallel, split_arm, split_disarm, split_trial_share, split_trial_note
from slurm_loop cimport sim_main_scheduler, sim_cycle, sim_next_action_us
from state cimport State, RepeatState, PL_UNITS, PL_SLURM
from pass_cost cimport (CHOICE_NEVER, CHOICE_ALWAYS, pc_tests, pc_overhead_ns, pc_parallel_pays, pc_update,
                        pc_ensure_copy_rate, pc_copy_rate_covers)
from pbf._codes cimport TR_EVENT, CK_FREE, CK_SLURM_SIM, JS_PENDING, JS_REJECTED, RJ_RESV_ENDED, PK_FULL, EX_END
from pbf._codes cimport EX_MAX_JOB_TEST
from queue cimport queue_compact
from pbf._codes cimport prio_time_dependent
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef enum:
    TRACE_DONE = 1             # what the instant functions return when no event is left (not an error)


cdef inline double copy_bytes(State* S) noexcept nogil:
    # about what each worker copies at a parallel pass's start (the planner's plan)
    return S.plan.copy_bytes(S)


cdef inline bint split_pays(State* S) noexcept nogil:
    # whether a sequential pass on nodes shares its searches with a helper thread: with threads, a
    # CPU for the helper and the switch on (pbf's node search shares each search's set-up, Slurm's
    # tests a job's next later start ahead). Each offers its part and takes it back itself when the
    # helper is not there, so a pass never waits for a helper that is not running: nothing to predict.
    return (S.plan.split_search and S.cfg.workers > 1 and S.pool.threads > 0 and S.cost.cores > 1
            and S.testing.split_min_nodes > 0)


cdef inline bint choose_parallel(State* S) noexcept nogil:
    # whether the next full pass runs on the pool: with threads, enough queued jobs and no
    # reservation-limit stop, Slurm's backfill on nodes or job inside an advance reservation (the
    # parallel pass implements none),
    # when the testing switch says so or the predicted costs say the threads save time
    # (pass_cost.pxd; the copy rate is measured the first time a pass could pay without copies, and
    # again when the copies have grown)
    cdef int64_t tests
    cdef double nbytes
    if (S.cfg.workers < 2 or S.pool.threads == 0 or S.queue.n < S.testing.parallel_min_queue
            or S.cfg.resv_stop or S.testing.parallel == CHOICE_NEVER or not S.plan.job_parallel
            or S.ar.jgrp != NULL):     # (nor jobs inside an advance reservation: resv_inside.pxd)
        return False
    if S.testing.parallel == CHOICE_ALWAYS:
        return True
    if split_pays(S):
        # on nodes the searches' set-up shared with a helper saves more than speculation (whose
        # consecutive reservations conflict): docs/engine.md
        return False
    tests = pc_tests(S.queue.n, S.cfg.max_job_test)
    nbytes = copy_bytes(S)
    if not pc_copy_rate_covers(&S.cost, nbytes) and (not pc_parallel_pays(&S.cost, tests, S.cfg.workers, 0.0)
                                                     or not pc_ensure_copy_rate(&S.cost, nbytes)):
        return False
    return pc_parallel_pays(&S.cost, tests, S.cfg.workers, nbytes)


cdef inline int full_pass(State* S, int64_t now) noexcept nogil:
    # a full pass at now
    cdef int rc
    cdef bint parallel, shared
    cdef int64_t resumed = S.resume_st.count
    cdef double overhead = 0
    if pass_prologue(S, now) != RC_OK:
        return RC_NO_MEMORY
    if S.cfg.no_backfill:
        return quick_pass(S, now)
    parallel = choose_parallel(S)
    if parallel:
        overhead = pc_overhead_ns(&S.cost, S.cfg.workers, copy_bytes(S))
        rc = full_pass_parallel(S, now)
    elif split_pays(S):
        shared = split_trial_share(S) and split_arm(S, S.testing.split_min_nodes)
        rc = full_pass_sequential(S, now)
        if shared:
            split_disarm(S)
        split_trial_note(S, shared, S.last.wall_ticks, S.ctx.depth)
    else:
        rc = full_pass_sequential(S, now)
    if S.cfg.workers > 1 and S.resume_st.count == resumed:
        # the pass's own measured wall time (reading the clock costs ~10 ns: once per pass end); a
        # resumed pass tested only the arrivals and says nothing of a fresh pass's cost
        pc_update(&S.cost, parallel, S.last.wall_ticks * (S.clock.ns_per_tick if PBF_HAVE_TSC else 1.0),
                  S.ctx.depth, overhead)
    return rc


# ---- the event sources

cdef inline int64_t next_event(State* S, bint bf_timer) noexcept nogil:
    # the earliest time, in seconds, at which a source is due (INF: none): arrivals, completions,
    # outages, co-allocation's decision rounds (while a primary runs) and, with bf_timer, the
    # interval trigger's pass (while jobs wait)
    cdef int64_t t = INF, x
    if S.replay.next_sub < S.jobs.n:
        t = S.jobs.submit[S.replay.next_sub]
    x = heap_top_end(S)
    if x < t:
        t = x
    if S.outages.next < S.outages.n and S.outages.t[S.outages.next] < t:
        t = S.outages.t[S.outages.next]
    if S.co.on and S.co.interval > 0:
        if S.co.next_tick < S.replay.now:
            # (no primary ran over some rounds: the next one is the first not yet past)
            S.co.next_tick += (S.replay.now - S.co.next_tick + S.co.interval - 1) // S.co.interval * S.co.interval
        if S.nodes.nrun > 0 and S.co.next_tick < t:
            t = S.co.next_tick
    if bf_timer and S.cfg.trigger != TR_EVENT and S.queue.n > 0 and S.replay.next_bf < t:
        t = S.replay.next_bf
    if S.ar.n and S.queue.n > 0:
        # (an advance reservation's end: its nodes may take waiting jobs)
        x = ar_next_end(&S.ar)
        if x < t:
            t = x
    return t


cdef inline int _finish_one(State* S, int64_t j, int64_t e, int64_t* n) noexcept nogil:
    # running job j ends at e (its lent cores back under co-allocation); n counts it
    if S.co.on:
        if co_job_ended(S, j, e) != RC_OK:
            return RC_NO_MEMORY
    else:
        job_finish(S, j, e)
    n[0] += 1
    return RC_OK


cdef inline int finish_due(State* S, int64_t t, int64_t* n) noexcept nogil:
    # the completions due by t, in end order, each at its end
    cdef int64_t e, j
    while True:
        e = heap_top_end(S)
        if e > t:
            return RC_OK
        j = heap_pop(S)
        if _finish_one(S, j, e, n) != RC_OK:
            return RC_NO_MEMORY


cdef inline int sim_finish_due(State* S, int64_t t, int64_t* n, int64_t** late, int64_t* nlate,
                               int64_t* late_cap) noexcept nogil:
    # finish_due for the slurm-sim clock: a job shorter than SimTime.late_below that ends at t is kept
    # in `late` (grown with malloc; the caller frees it), to end after t's backfill cycle
    cdef int64_t e, j
    cdef void* p
    while True:
        e = heap_top_end(S)
        if e > t:
            return RC_OK
        j = heap_pop(S)
        if e == t and S.sim.late_below > 0 and S.jobs.run[j] < S.sim.late_below:
            if nlate[0] == late_cap[0]:
                late_cap[0] = 2 * late_cap[0] + 8
                p = realloc(late[0], late_cap[0] * sizeof(int64_t))
                if p == NULL:
                    return RC_NO_MEMORY
                late[0] = <int64_t*>p
            late[0][nlate[0]] = j
            nlate[0] += 1
        elif _finish_one(S, j, e, n) != RC_OK:
            return RC_NO_MEMORY


cdef inline int outages_due(State* S, int64_t t, int64_t* n) noexcept nogil:
    # the outage events due by t, in time order, each after the completions due by its time (a job
    # that ended when its units failed has completed)
    cdef int64_t to
    while S.outages.next < S.outages.n and S.outages.t[S.outages.next] <= t:
        to = S.outages.t[S.outages.next]
        if finish_due(S, to, n) != RC_OK or outages_apply_due(S, to) < 0:
            return RC_NO_MEMORY
        n[0] += 1
    return RC_OK


cdef inline bint resv_over(State* S, int64_t j, int64_t now) noexcept nogil:
    # whether pending job j is inside a reservation with no window left after now: then it is rejected
    # for good (Slurm holds it, RESV_DEL_HOLD: "linked to defunct reservation"), its queue entries
    # left for queue_compact (Queue.siblings)
    cdef int32_t g
    if S.ar.jgrp == NULL or S.jobs.state[j] != JS_PENDING:
        return False
    g = ri_group(&S.ar, j)
    if g == 0 or ri_current(&S.ar, g, now) >= 0:
        return False
    S.jobs.state[j] = JS_REJECTED
    S.jobs.reason[j] = RJ_RESV_ENDED
    if S.qos_lim.on:
        ql_submitted(&S.qos_lim, j, S.jobs.user[j], -1)
    S.queue.siblings = True
    S.resume_st.valid = False
    return True


cdef inline void resv_purge(State* S, int64_t now) noexcept nogil:
    # a reservation's window ended: the queued jobs inside one with no window left leave the queue
    cdef int64_t i
    cdef bint any = False
    if S.ar.jgrp == NULL:
        return
    for i in range(S.queue.n):
        if S.queue.entries[i].job >= 0 and resv_over(S, S.queue.entries[i].job, now):
            any = True
    if any:
        queue_compact(&S.queue, &S.jobs, 0)


cdef inline int arrivals_due(State* S, int64_t t, int64_t* pending) noexcept nogil:
    # the jobs submitted by t; `pending` counts those that were queued (not rejected)
    cdef int64_t j
    cdef bint over = False
    while S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] <= t:
        j = S.replay.next_sub
        if job_submit(S, j) != RC_OK:
            return RC_NO_MEMORY
        if resv_over(S, j, t):         # (its reservation over before it came)
            over = True
        if S.plan.queued != NULL and S.jobs.state[j] == JS_PENDING:
            S.plan.queued(S, j)
        S.replay.next_sub += 1
        if S.jobs.state[j] == JS_PENDING:
            pending[0] += 1
        if S.co.on:
            S.co.changes += 1
    if over:
        queue_compact(&S.queue, &S.jobs, 0)
    return RC_OK


cdef inline bint hook_due(State* S, int64_t t) noexcept nogil:
    # Python has something to see at t: arrivals (their estimates and keys) or queued jobs (keys)
    return S.cfg.hooks and ((S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] <= t)
                            or S.queue.n > 0)


# ---- the instants

cdef inline int event_instant(State* S, int64_t* tp, bint* events) noexcept nogil:
    # the next instant (tp) of the event-driven time models with its completions, outages and
    # decision round applied; TRACE_DONE: the trace is done; RC_*: an error
    cdef int64_t t = next_event(S, True), n = 0
    cdef bint tick
    if t == INF:
        return TRACE_DONE
    if t < S.replay.now:       # a timer already due: it fires at the current instant
        t = S.replay.now
    S.replay.now = t
    tick = S.co.on and S.co.interval > 0 and S.nodes.nrun > 0 and S.co.next_tick <= t
    if outages_due(S, t, &n) != RC_OK or finish_due(S, t, &n) != RC_OK:
        return RC_NO_MEMORY
    events[0] = n > 0
    if S.ar.n and ar_ends_due(&S.ar, t):
        events[0] = True
        resv_purge(S, t)
    if tick:
        while S.co.next_tick <= t:
            S.co.next_tick += S.co.interval
        if co_tick(S, t) != RC_OK:
            return RC_NO_MEMORY
        events[0] = True
    tp[0] = t
    return RC_OK


cdef inline int sim_instant(State* S, int64_t* tp) noexcept nogil:
    # the next instant (tp) of the slurm-sim clock: the main loop's next iteration (TimeStep on,
    # skipped in one step while nothing can happen) or a cycle's yield, with its outages (and the
    # completions due by each) and decision round applied; TRACE_DONE: the trace is done; RC_*: an error
    cdef int64_t target, k, t, n = 0
    cdef bint tick
    if not S.sim.started:
        if S.jobs.n == 0:
            return TRACE_DONE
        S.sim.started = True
        t = S.jobs.submit[0]
        S.sim.now_us = t * 1000000
        S.sim.last_sched = t - S.sim.sched_delay
        S.sim.last_full = t - S.sim.sched_interval + S.sim.phase_us // 1000000
        S.sim.next_bf_us = S.sim.now_us
        S.sim.phased = S.sim.phase_us == 0
        S.sim.iterations += 1
    elif not S.sim.in_yield:
        S.sim.now_us += S.sim.step_us
        target = next_event(S, False)
        target = sim_next_action_us(S, INF if target == INF else target * 1000000)
        if target == INF:
            S.replay.now = S.sim.now_us // 1000000
            return TRACE_DONE
        if target > S.sim.now_us:
            k = (target - S.sim.now_us + S.sim.step_us - 1) // S.sim.step_us
            S.sim.now_us += k * S.sim.step_us
            S.sim.iterations += k
        S.sim.iterations += 1
    t = S.sim.now_us // 1000000
    S.replay.now = t
    tick = S.co.on and S.co.interval > 0 and S.nodes.nrun > 0 and S.co.next_tick <= t
    if outages_due(S, t, &n) != RC_OK:
        return RC_NO_MEMORY
    if tick:
        while S.co.next_tick <= t:
            S.co.next_tick += S.co.interval
        if co_tick(S, t) != RC_OK:
            return RC_NO_MEMORY
    if n:
        S.sim.event = True
        S.sim.changes += n
    if S.ar.n and ar_ends_due(&S.ar, t):
        S.sim.changes += 1             # (backfill's _more_work: last_resv_update)
        resv_purge(S, t)
    tp[0] = t
    return RC_OK


# ---- scheduling at an instant, and the after-pass hooks

cdef inline int after_pass(State* S, int64_t t) noexcept nogil:
    # the co-allocation pass after each pass (its primaries lend, queued jobs start on lent cores)
    if S.co.on:
        return co_after_pass(S, t)
    return RC_OK


cdef inline bint repeats_last(State* S, int64_t now) noexcept nogil:
    # Whether the full pass due at now (the interval trigger's timer, nothing else at this instant)
    # would repeat the last full pass decision for decision: that pass started nothing and ended at
    # the queue's end or at max_job_test; since then no job arrived, started or ended, no estimate
    # changed and no unit went down or came back (Nodes.version), and no running job has reached
    # its planned end (no correction due). The plan of every node (or the units' profile) is then
    # the one that pass saw from its time t1 on, constant until the first planned end e1 > now. A
    # job that could not start at t1 cannot at any s in [t1, e1) either (a later start needs the
    # same free resources over a window reaching further past e1; rounding by bf_resolution only
    # moves its end later), so each job's earliest start, in queue order, is the same time >= e1
    # on the same reservations, and nothing starts. Only where nothing else depends on now or on
    # the pass having run: static priority, the free clock, no window (it moves with now), no SJBF
    # phase, no Slurm backfill limits, QOS or association limits (their counters), advance
    # reservations, start-time estimates, co-allocation or Python hooks, and pbf's own planners
    # (Slurm's will-run search is another algorithm). On units, no slot boundary of the profile
    # may have been reached (as for resuming a pass).
    return (S.testing.repeat and S.rep.valid and S.rep.version == S.nodes.version
            and S.rep.next_sub == S.replay.next_sub and S.rep.queue == S.queue.n
            and S.clock.kind == CK_FREE and S.cfg.bf_window == 0 and not S.cfg.sjbf and not S.cfg.hooks
            and not S.cfg.no_backfill and not prio_time_dependent(S.policy.prio)
            and S.plan.kind != PL_SLURM and not S.ss.lim.on and not S.qos_lim.on and S.ar.n == 0
            and not S.est.on and not S.co.on
            and (S.nodes.nrun == 0 or S.nodes.by_end[0].end > now)
            and (S.plan.kind != PL_UNITS or S.prof.s_next[0] == -1 or S.prof.s_begin[S.prof.s_next[0]] > now))


cdef inline void note_full(State* S) noexcept nogil:
    # after a full pass of the replay: whether the next one due may repeat it (repeats_last)
    cdef RepeatState* R = &S.rep
    R.valid = S.ctx.started == 0 and (S.ctx.ex == EX_END or S.ctx.ex == EX_MAX_JOB_TEST)
    R.version = S.nodes.version
    R.next_sub = S.replay.next_sub
    R.queue = S.queue.n
    R.depth = S.ctx.depth
    R.resv = S.ctx.resv
    R.ex = S.ctx.ex
    R.slots = pass_slots(S)


cdef inline int repeat_full(State* S, int64_t now) noexcept nogil:
    # the full pass due at now, taken as a repeat of the last (repeats_last): no search runs; its
    # reservations stand; it is counted and recorded with the last one's figures (no wall time)
    S.rep.count += 1
    return record_pass(S, now, PK_FULL, S.rep.queue, S.rep.depth, 0, S.rep.resv, S.rep.ex, 0, S.rep.slots)


cdef inline int event_schedule(State* S, int64_t t, bint events) noexcept nogil:
    # TR_EVENT: a full pass; TR_INTERVAL: a full pass when due (a repeat of the last one when
    # nothing could change: repeats_last), else the quick pass after events
    cdef int rc = 0
    S.decided.nstarted = 0
    if S.cfg.trigger == TR_EVENT:
        rc = full_pass(S, t)
    elif t >= S.replay.next_bf:
        if not events and repeats_last(S, t):
            rc = repeat_full(S, t)
        else:
            rc = full_pass(S, t)
            if rc == RC_OK:
                note_full(S)
        if rc != RC_OK:
            return rc
        # the period runs from the end of the previous pass: its charged duration (0 with the
        # free clock) delays the next one, as in Slurm
        S.replay.next_bf = t + (S.last.charged_us + 999999) // 1000000 + S.cfg.bf_interval
    elif events:
        rc = quick_pass(S, t)
    if rc != RC_OK:
        return rc
    return after_pass(S, t)


cdef inline int sim_finish_late(State* S, int64_t t, const int64_t* late, int64_t nlate) noexcept nogil:
    # the ends kept for after t's backfill cycle (sim_finish_due): each at t, then the main scheduler
    # they run (SimTime.end_main)
    cdef int64_t k, counted = 0
    for k in range(nlate):
        if _finish_one(S, late[k], t, &counted) != RC_OK:
            return RC_NO_MEMORY
    if S.sim.end_main:
        S.sim.ended = True
    else:
        S.sim.event = True
    S.sim.changes += nlate
    S.decided.nstarted = 0
    if sim_main_scheduler(S) != RC_OK:
        return RC_NO_MEMORY
    return after_pass(S, S.sim.now_us // 1000000)


cdef inline int sim_schedule(State* S) noexcept nogil:
    # the main scheduler when its timers allow; then, at an iteration, a backfill cycle when due
    # (Slurm's _more_work: only after a job or node changed since the last one), or at a yield's
    # instant, time on from the cycle's end
    S.decided.nstarted = 0
    if sim_main_scheduler(S) != RC_OK or after_pass(S, S.sim.now_us // 1000000) != RC_OK:
        return RC_NO_MEMORY
    if S.sim.in_yield:
        S.sim.in_yield = False
        if S.sim.now_us < S.sim.resume_us:
            S.sim.now_us = S.sim.resume_us
        S.sim.next_bf_us = S.sim.now_us + S.cfg.bf_interval * 1000000
    elif (S.queue.n > 0 and S.sim.changes > 0 and S.sim.now_us >= S.sim.next_bf_us
            and not S.cfg.no_backfill and not S.sim.phased):
        # the first cycle comes phase_us later than it would: the cycles after it follow it, a backfill
        # interval apart while work goes on (the chain a site's cycles are on is not in its files)
        S.sim.phased = True
        S.sim.next_bf_us = S.sim.now_us + S.sim.phase_us
    elif (S.queue.n > 0 and S.sim.changes > 0 and S.sim.now_us >= S.sim.next_bf_us
            and not S.cfg.no_backfill):
        S.sim.changes = 0
        S.decided.nstarted = 0
        if sim_cycle(S) != RC_OK or after_pass(S, S.sim.now_us // 1000000) != RC_OK:
            return RC_NO_MEMORY
        if not S.sim.in_yield:
            # (after a yield, the period runs from the yield's instant: set there)
            S.sim.next_bf_us = S.sim.now_us + S.cfg.bf_interval * 1000000
    return RC_OK


# ---- the loop

cdef inline int replay_run(State* S, int64_t max_instants, bint* done) noexcept nogil:
    # the event loop for at most max_instants instants (< 0: to the end); with Config.hooks it stops
    # (done False, hook_waiting True) at each instant with arrivals or queued jobs for Python
    cdef int64_t t = 0, count = 0, first, pending, n, nlate = 0, late_cap = 0
    cdef int64_t* late = NULL
    cdef bint events, queued, sim = S.clock.kind == CK_SLURM_SIM
    cdef int rc
    S.replay.hook_waiting = False
    while max_instants < 0 or count < max_instants:
        if S.replay.hook_resume:
            # Python has seen this instant (arrivals, completions): go on with its arrivals
            S.replay.hook_resume = False
            t = S.replay.hook_t
            events = S.replay.hook_events
        else:
            events = False
            rc = sim_instant(S, &t) if sim else event_instant(S, &t, &events)
            if rc != RC_OK:
                done[0] = rc == TRACE_DONE
                return RC_OK if rc == TRACE_DONE else rc
            if hook_due(S, t):
                S.replay.hook_t = t
                S.replay.hook_events = events
                S.replay.hook_resume = True
                S.replay.hook_waiting = True
                done[0] = False
                return RC_OK
        count += 1
        first = S.replay.next_sub
        pending = 0
        if arrivals_due(S, t, &pending) != RC_OK:
            return RC_NO_MEMORY
        if S.replay.next_sub > first:
            events = True
        if sim:
            n = 0
            nlate = 0
            if sim_finish_due(S, t, &n, &late, &nlate, &late_cap) != RC_OK:
                free(late)
                return RC_NO_MEMORY
            if pending or (n and not S.sim.end_main):
                S.sim.event = True
            if n and S.sim.end_main:
                S.sim.ended = True
            S.sim.changes += pending + n
            queued = S.queue.n > 0
            rc = sim_schedule(S)
            if rc == RC_OK and nlate:
                rc = sim_finish_late(S, t, late, nlate)
            free(late)                 # (rare and short: kept for one instant only)
            late = NULL
            late_cap = 0
            if rc != RC_OK:
                return RC_NO_MEMORY
            if queued and S.est.on and record_estimates(S, S.sim.now_us // 1000000, first) != RC_OK:
                return RC_NO_MEMORY
            continue
        if S.queue.n == 0:
            continue
        rc = event_schedule(S, t, events)
        if rc != RC_OK:
            return rc
        if S.est.on and record_estimates(S, t, first) != RC_OK:
            return RC_NO_MEMORY
    done[0] = False
    return RC_OK
