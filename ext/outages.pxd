# Units out of service (header only): drains, failures and resumes, applied by the replay's event
# loop (its outage events, loaded in time order) or by the embedding API. A down unit takes no new
# job. A drained unit lets its running job finish and then stays down; a failed unit kills its
# running job, which goes back to the queue (requeue) or ends killed. The profile (passes.pxd
# build_profile_down) brings a down unit back at its `until`: a unit that never comes back is
# simply never free again, so no pass can place a job on it.

from libc.stdint cimport uint64_t, int64_t, int8_t
from libc.stdlib cimport malloc, calloc, free

from memory cimport INF
from nodes cimport Nodes, nodes_by_end_remove, nodes_release
from queue cimport queue_job, queue_compact
from lifecycle cimport user_unlink, heap_remove, job_leave_nodes
from qos_limits cimport ql_submitted
from coalloc cimport co_stop
from state cimport State
from pbf._codes cimport (JS_PENDING, JS_RUNNING, JS_KILLED, JS_REJECTED, RJ_UNITS_DOWN, HOW_NONE, HOW_COALLOC,
                         OK_DRAIN, OK_FAIL, OK_RESUME)
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline void units_lost_recount(State* S) noexcept nogil:
    # down units that no event brings back by itself (until = INF)
    cdef Nodes* N = &S.nodes
    cdef int64_t w, n = 0
    cdef uint64_t x
    for w in range(S.W):
        x = N.down[w]
        while x:
            if N.until[w * 64 + __builtin_ctzll(x)] == INF:
                n += 1
            x &= x - 1
    S.outages.units_lost = n


cdef inline int job_kill(State* S, int64_t j, int64_t now, bint requeue) noexcept nogil:
    # running job j's units failed at now: it stops (its units not down go back to free) and is
    # requeued with its submission's estimate and priority, or ends killed. Its run is not learned
    # from (a cut-short run says nothing of its run time), but its usage is charged. A co-allocated
    # secondary job holds no units in the node state: it only leaves its lent cores.
    if S.jobs.requeues == NULL:
        S.jobs.requeues = <int64_t*>calloc(S.jobs.cap, sizeof(int64_t))
        S.jobs.lost = <int64_t*>calloc(S.jobs.cap, sizeof(int64_t))
        if S.jobs.requeues == NULL or S.jobs.lost == NULL:
            return RC_NO_MEMORY
    if S.co.on and co_stop(S, j, now) != RC_OK:
        return RC_NO_MEMORY
    if S.jobs.how[j] != HOW_COALLOC:
        job_leave_nodes(S, j)
        if S.jobs.run[j] >= 0:
            heap_remove(S, j)
    user_unlink(S, j, now)
    S.jobs.lost[j] += S.jobs.units[j] * (now - S.jobs.start[j])
    S.outages.lost += S.jobs.units[j] * (now - S.jobs.start[j])
    if requeue:
        S.jobs.requeues[j] += 1
        S.outages.requeued += 1
        S.jobs.state[j] = JS_PENDING
        S.jobs.start[j] = -1
        S.jobs.end[j] = -1
        S.jobs.how[j] = HOW_NONE
        S.jobs.est[j] = S.jobs.pred0[j]
        S.jobs.ncorr[j] = 0
        S.jobs.resv[j] = -1
        if queue_job(&S.queue, &S.jobs, &S.prec, j) < 0:
            return RC_NO_MEMORY
    else:
        S.outages.killed += 1
        if S.qos_lim.on:
            ql_submitted(&S.qos_lim, j, S.jobs.user[j], -1)
        S.jobs.state[j] = JS_KILLED
        S.jobs.end[j] = now
    return RC_OK


cdef inline bint _listed(const int64_t* jobs, int64_t n, int64_t j) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if jobs[i] == j:
            return True
    return False


cdef inline int units_down(State* S, const uint64_t* bits, int64_t until, int kind, int64_t now,
                           bint requeue) noexcept nogil:
    # the units in bits go out of service at now until `until` (INF: until a resume; a unit already
    # down keeps the later of the two); OK_FAIL kills their running jobs
    cdef Nodes* N = &S.nodes
    cdef int64_t w, u, i, j, W = S.W, nk = 0
    cdef uint64_t x
    cdef int64_t* kill = NULL
    cdef int rc = 0
    for w in range(W):
        x = bits[w]
        # units going down that a running job holds (neither free nor down yet)
        N.held_down += __builtin_popcountll(x & ~N.down[w] & ~N.free[w])
        N.nfree -= __builtin_popcountll(N.free[w] & x)
        N.free[w] &= ~x
        N.ndown += __builtin_popcountll(x & ~N.down[w])
        while x:
            u = w * 64 + __builtin_ctzll(x)
            if not (N.down[w] >> (u & 63)) & 1 or N.until[u] < until:
                N.until[u] = until
            x &= x - 1
        N.down[w] |= bits[w]
    if kind == OK_FAIL and (N.nrun > 0 or S.co.on):
        # the running jobs holding a failed unit (listed first: killing reorders the running list),
        # with co-allocation first the secondary jobs on failed lent cores
        kill = <int64_t*>malloc((N.nrun + (S.units if S.co.on else 0) + 1) * sizeof(int64_t))
        if kill == NULL:
            return RC_NO_MEMORY
        if S.co.on:
            for w in range(W):
                x = bits[w]
                while x:
                    u = w * 64 + __builtin_ctzll(x)
                    x &= x - 1
                    j = S.co.sec[u]
                    if j >= 0 and (nk == 0 or not _listed(kill, nk, j)):
                        kill[nk] = j
                        nk += 1
        for i in range(N.nrun):
            j = N.running[i]
            for w in range(W):
                if N.rows[<int64_t>S.jobs.row[j] * W + w] & bits[w]:
                    kill[nk] = j
                    nk += 1
                    break
        for i in range(nk):
            if job_kill(S, kill[i], now, requeue) != RC_OK:
                rc = -1
                break
        free(kill)
    N.version += 1
    S.resume_st.valid = False
    units_lost_recount(S)
    return rc


cdef inline void units_resume(State* S, const uint64_t* bits, int64_t due) noexcept nogil:
    # the down units in bits whose until is at most `due` (INF: every one) are back in service; those
    # no running job holds are free again
    cdef Nodes* N = &S.nodes
    cdef int64_t w, u, i, j, W = S.W
    cdef uint64_t x, back, held
    for w in range(W):
        x = bits[w] & N.down[w]
        back = 0
        while x:
            u = w * 64 + __builtin_ctzll(x)
            if N.until[u] <= due:
                back |= (<uint64_t>1) << (u & 63)
            x &= x - 1
        if back == 0:
            continue
        held = 0
        for i in range(N.nrun):
            j = N.running[i]
            held |= N.rows[<int64_t>S.jobs.row[j] * W + w] & back
        N.down[w] &= ~back
        N.ndown -= __builtin_popcountll(back)
        N.held_down -= __builtin_popcountll(back & held)
        N.free[w] |= back & ~held
        N.nfree += __builtin_popcountll(back & ~held)
    N.version += 1
    S.resume_st.valid = False
    units_lost_recount(S)


cdef inline void reject_unrunnable(State* S) noexcept nogil:
    # With no outage event left to come, a pending job wider than the units that will ever be up
    # again can never start: it is rejected (a replay ends with every job completed, killed or
    # rejected with a reason).
    cdef int64_t i, j, up = S.units - S.outages.units_lost, n = 0
    if S.outages.units_lost == 0 or not S.outages.final or S.outages.next < S.outages.n:
        return
    for i in range(S.queue.n):
        j = S.queue.entries[i].job
        if S.queue.entries[i].units > up:
            S.jobs.state[j] = JS_REJECTED
            S.jobs.reason[j] = RJ_UNITS_DOWN
            S.queue.entries[i].job = -1
            n += 1
    if n:
        queue_compact(&S.queue, &S.jobs, 0)
        S.resume_st.valid = False


cdef inline int outages_apply_due(State* S, int64_t t) noexcept nogil:
    # apply the replay's outage events at time t (in their order); 1 when any was applied
    cdef int64_t e
    cdef int8_t k
    cdef bint any = False
    while S.outages.next < S.outages.n and S.outages.t[S.outages.next] == t:
        e = S.outages.next
        k = S.outages.kind[e]
        if k == OK_RESUME:
            units_resume(S, S.outages.bits + e * S.W, S.outages.until[e])
        elif units_down(S, S.outages.bits + e * S.W, S.outages.until[e], k, t, S.outages.requeue) != RC_OK:
            return RC_NO_MEMORY
        S.outages.next += 1
        any = True
    if any:
        reject_unrunnable(S)
    return 1 if any else 0
