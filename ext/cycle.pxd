# The scheduling cycle (header only): which full pass runs, and the replay's event loop (arrivals,
# completions at start + run time, passes on events or on an interval), all without the GIL.

from libc.stdint cimport int64_t

from memory cimport INF
from ticks cimport PBF_HAVE_TSC
from lifecycle cimport job_submit, job_finish, refresh_priorities, apply_corrections, heap_pop
from outages cimport outages_apply_due
from estimates cimport record_estimates
from passes cimport quick_pass, full_pass_sequential
from parallel_pass cimport full_pass_parallel
from state cimport State
from pbf._codes cimport PR_WFP3, TR_EVENT


cdef inline int full_pass(State* S, int64_t now) noexcept nogil:
    # a full pass at now (a pass starts at every event: the checks that let both calls out are here)
    cdef int rc
    if S.policy.prio >= PR_WFP3 and refresh_priorities(S, now) != 0:
        return -1
    if S.nodes.nrun > 0 and S.nodes.by_end[0].end <= now and apply_corrections(S, now) != 0:
        return -1
    if S.cfg.no_backfill:
        return quick_pass(S, now)
    # (the parallel pass does not implement the reservation-limit stop: such passes run sequentially)
    if (S.cfg.workers > 1 and S.pool.threads > 0 and S.queue.n >= S.testing.parallel_min_queue
            and not S.cfg.resv_stop
            and S.last.full_wall_ns >= S.testing.parallel_min_wall_ns):
        rc = full_pass_parallel(S, now)
    else:
        rc = full_pass_sequential(S, now)
    if S.cfg.workers > 1:
        # the pass's own measured wall time (reading the clock costs ~10 ns: once per pass end)
        S.last.full_wall_ns = <int64_t>(S.last.wall_ticks * (S.clock.ns_per_tick if PBF_HAVE_TSC else 1.0))
    return rc


cdef inline bint next_instant(State* S, int64_t* tp, bint* events, bint* done) noexcept nogil:
    # move to the next instant and apply its completions and outages; True when the trace is done
    # (done set) or on an error (done not set: the caller returns -1)
    cdef int64_t t, ts, te, tb, to, j
    cdef int rc
    ts = S.jobs.submit[S.replay.next_sub] if S.replay.next_sub < S.jobs.n else INF
    te = S.replay.heap[0].end if S.replay.nheap > 0 else INF
    to = S.outages.t[S.outages.next] if S.outages.next < S.outages.n else INF
    tb = INF
    if S.cfg.trigger != TR_EVENT and S.queue.n > 0:
        tb = S.replay.next_bf
    t = ts if ts < te else te
    if to < t:
        t = to
    if tb < t:
        t = tb
    if t == INF:
        done[0] = True
        return True
    if t < S.replay.now:       # a timer already due: it fires at the current instant
        t = S.replay.now
    S.replay.now = t
    events[0] = False
    while S.replay.nheap > 0 and S.replay.heap[0].end == t:
        j = heap_pop(S)
        job_finish(S, j, t)
        events[0] = True
    if to == t:
        # after the completions of the instant: a job ending when its units fail has completed
        rc = outages_apply_due(S, t)
        if rc < 0:
            return True
        events[0] = True
    tp[0] = t
    return False


cdef inline int replay_run(State* S, int64_t max_instants, bint* done) noexcept nogil:
    # the event loop for at most max_instants instants (< 0: to the end); with Config.hooks it stops
    # (done False, hook_waiting True) at each instant with arrivals or queued jobs for Python
    cdef int64_t t = 0, count = 0, first
    cdef bint events
    cdef int rc
    S.replay.hook_waiting = False
    while max_instants < 0 or count < max_instants:
        if S.replay.hook_resume:
            # Python has seen this instant (arrivals, completions): go on with its arrivals
            S.replay.hook_resume = False
            t = S.replay.hook_t
            events = S.replay.hook_events
            count += 1
        elif next_instant(S, &t, &events, done):
            return 0 if done[0] else -1
        elif S.cfg.hooks and ((S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] == t)
                              or S.queue.n > 0):
            S.replay.hook_t = t
            S.replay.hook_events = events
            S.replay.hook_resume = True
            S.replay.hook_waiting = True
            done[0] = False
            return 0
        else:
            count += 1
        first = S.replay.next_sub
        while S.replay.next_sub < S.jobs.n and S.jobs.submit[S.replay.next_sub] == t:
            if job_submit(S, S.replay.next_sub) != 0:
                return -1
            S.replay.next_sub += 1
            events = True
        if S.queue.n == 0:
            continue
        if S.cfg.trigger == TR_EVENT:
            rc = full_pass(S, t)
            if rc != 0:
                return rc
        elif t >= S.replay.next_bf:
            rc = full_pass(S, t)
            if rc != 0:
                return rc
            # the period runs from the end of the previous pass: its charged duration (0 with the
            # free clock) delays the next one, as in Slurm
            S.replay.next_bf = t + (S.last.charged_us + 999999) // 1000000 + S.cfg.bf_interval
        elif events:
            if quick_pass(S, t) != 0:
                return -1
        if S.est.on and record_estimates(S, t, first) != 0:
            return -1
    done[0] = False
    return 0
