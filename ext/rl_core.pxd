# The learned-policy episodes' EASY: the core's own full pass (header only, included by _rlsim.pyx).
#
# The episodes keep their own event loop (one event at a time, as RLScheduler and RLBackfilling
# move their clocks) and their own lists, but in the default mode every EASY backfilling decision
# is made by the scheduler core: each episode mirrors its cluster into a core State on the units
# planner (one unit per node: which nodes a job gets never matters), submitting arrivals, starting
# and finishing jobs as it does, and at each backfilling point hands the core its queue in the
# order it wants tried -- the job to protect first, then the candidates -- and runs
# cycle.pxd's full_pass: the head reserved at its earliest start on the profile, every other job
# started now if the profile holds it for its requested time. That is the pass pbf.replay runs
# (EASY: one reservation), on the queue in the episode's order.
#
# Core job c is window job c (trace job first + c); estimates are the requested times, so a job is
# never corrected (a correction stops at the requested time).
#
# The core runs on a half-second clock (every episode time doubled). The episodes take events one
# at a time: at an instant with an arrival and a job's end, the arrival comes first, and the ending
# job still holds its nodes when the pass runs. Its requested end is now; the core, which counts
# in slot 0 only what is free now, plans such a job as ending at the earliest one tick after now.
# With ticks of half a second that tick, now + 1/2 s, comes before any other planned end (all at
# whole seconds): the head's reservation then begins when the episodes' EASY has always begun it
# and leaves it the same nodes to spare, and no job ends by it that did not end by now.

from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free

from state cimport State, state_init, state_free
from jobs cimport jobs_reserve, jobs_clear, users_ensure
from lifecycle cimport job_submit, job_start, job_finish
from pass_steps cimport take_lowest_free
from queue cimport queue_compact
from planner cimport planner_use
from cycle cimport full_pass
from pbf._codes cimport PR_FCFS, PD_GIVEN, JS_PENDING
from pbf._codes cimport RC_OK, RC_NO_MEMORY


cdef inline State* rlc_new(int64_t units, int64_t cap) noexcept nogil:
    # a core of `units` units with room for `cap` window jobs, set for the episodes' EASY: one
    # reservation, the jobs tried in the order the episode gives them, no records, one thread,
    # fresh passes only; NULL: out of memory
    cdef State* S = <State*>malloc(sizeof(State))
    if S == NULL:
        return NULL
    if (state_init(S, units) != RC_OK or jobs_reserve(&S.jobs, cap) != RC_OK
            or users_ensure(&S.users, 1) != RC_OK):
        state_free(S)
        free(S)
        return NULL
    planner_use(S)
    S.cfg.resv_max = 1
    S.cfg.record_passes = 0
    S.cfg.workers = 1
    S.testing.resume = 0
    S.policy.prio = PR_FCFS
    S.policy.predictor = PD_GIVEN
    return S


cdef inline void rlc_free(State* S) noexcept nogil:
    if S != NULL:
        state_free(S)
        free(S)


cdef inline void rlc_reset(State* S, int64_t n, int64_t now, const int64_t[:] submit, const int64_t[:] nodes,
                           const int64_t[:] req, int64_t first) noexcept nogil:
    # a new window of n jobs (trace jobs first .. first + n - 1), none submitted, the cluster empty
    cdef int64_t c, r
    while S.nodes.nrun > 0:
        job_finish(S, S.nodes.running[S.nodes.nrun - 1], 2 * now)
    S.queue.n = 0
    S.queue.nseq = 0
    S.decided.nstarted = 0
    S.decided.nreserved = 0
    for c in range(n):
        S.jobs.submit[c] = 2 * submit[first + c]
        S.jobs.units[c] = nodes[first + c]
        # a requested time of -1 (RLBackfilling's loader keeps it where the run time was missing)
        # ends before the job starts to the episodes: planned as half a second, it ends by any
        # reservation
        r = 2 * req[first + c] if req[first + c] > 0 else 1
        S.jobs.est[c] = r
        S.jobs.req[c] = r
        S.jobs.run[c] = -1            # the episode finishes its jobs itself
        S.jobs.user[c] = 0
        S.jobs.part[c] = 1.0
        S.jobs.qos[c] = 0.0
    jobs_clear(&S.jobs, 0, n)
    S.jobs.n = n


cdef inline bint rlc_submit(State* S, int64_t c) noexcept nogil:
    # window job c arrives; False when the core refuses it (out of memory, or a job it never runs)
    return job_submit(S, c) == RC_OK and S.jobs.state[c] == JS_PENDING


cdef inline bint rlc_start(State* S, int64_t c, int64_t now) noexcept nogil:
    # the episode starts queued job c now outside a pass (the agent's pick, or a head that fits),
    # on the lowest free units; False: out of memory
    cdef int64_t p
    take_lowest_free(S, &S.prof, S.jobs.units[c])
    if job_start(S, c, 2 * now, S.prof.chosen) != RC_OK:
        return False
    for p in range(S.queue.n):
        if S.queue.entries[p].job == c:
            S.queue.entries[p].job = -1
            queue_compact(&S.queue, &S.jobs, p)
            break
    return True


cdef inline void rlc_finish(State* S, int64_t c, int64_t now) noexcept nogil:
    # running job c ended at now
    job_finish(S, c, 2 * now)


cdef inline int rlc_backfill(State* S, int64_t now, const int64_t* order, int64_t n) noexcept nogil:
    # the core's full pass at now over the n queued jobs in `order` (window jobs; order[0] the job
    # to protect, then the others in the order to try them): afterwards S.decided.started holds the
    # jobs started, in the order they started. RC_*
    cdef int64_t i, c
    if n != S.queue.n:
        return RC_NO_MEMORY            # (not reached: the episode and its core hold the same queue)
    for i in range(n):
        c = order[i]
        S.queue.entries[i].job = c
        S.queue.entries[i].units = S.jobs.units[c]
        S.queue.entries[i].est = S.jobs.est[c]
        S.queue.entries[i].tier = 0
        S.queue.entries[i].rec = -1
    return full_pass(S, 2 * now)
