# A job's life in the engine (header only): submission (rejected with a reason, or queued in priority
# order), start on chosen units, finish; the user history and usage that follow each; and the two
# things a pass does to the whole queue or running set first: new priority keys, corrected estimates.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memmove

from memory cimport INF, grow, append
from words cimport w_copy
from jobs cimport UserHist
from nodes cimport EndKey, endkey_less, nodes_occupy, nodes_release, nodes_by_end_find, nodes_by_end_put, nodes_by_end_remove
from queue cimport SortRec, sortrec_cmp, queue_job, entry_key
from part_records cimport pr_split, pr_split_factor
from policy cimport (policy_key_nodes, policy_multifactor_part, policy_predict, policy_learn, policy_correct,
                    policy_charge_usage)
from state cimport State
from licenses cimport lic_never, lic_hold
from qos_limits cimport ql_never, ql_count, ql_submit_refused, ql_submitted
from pbf._codes cimport (JS_PENDING, JS_RUNNING, JS_DONE, JS_REJECTED, RJ_OVERSIZE, RJ_NO_ESTIMATE, RJ_LICENSES, RJ_QOS_LIMIT,
                         RJ_NO_UNITS, RJ_NO_NODES, RJ_UNITS_DOWN, PD_GIVEN, PR_KEYED, PR_MULTIFACTOR)
from pbf._codes cimport RC_OK, RC_NO_MEMORY, RJ_NONE, RJ_RESV_OVER, prio_time_dependent
from advance_resv cimport ar_kill_at


cdef inline void set_record_keys(State* S, int64_t j, int64_t now) noexcept nogil:
    # after job j's key: the keys of its records where they differ in partition factor (Slurm's
    # priority_array: each record its partition's priority under multifactor; else the job's key)
    cdef int64_t r
    if not pr_split_factor(&S.prec, j):
        return
    for r in range(S.prec.at[j], S.prec.at[j] + S.prec.n[j]):
        if S.policy.prio == PR_MULTIFACTOR:
            S.prec.rkey[r] = -policy_multifactor_part(&S.policy, &S.jobs, &S.users, S.units,
                                                      S.nm.nn if S.nm.on else 0, S.nm.minn, j, now, S.prec.pf[r])
        else:
            S.prec.rkey[r] = S.jobs.key[j]


cdef inline int job_submit(State* S, int64_t j) noexcept nogil:
    # a new pending job; rejected with a reason when it can never run
    cdef int64_t e, pos
    if S.jobs.units[j] <= 0:
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_NO_UNITS
        return RC_OK
    if S.jobs.units[j] > S.units:
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_OVERSIZE
        return RC_OK
    if S.lic.on and lic_never(&S.lic, j):
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_LICENSES
        return RC_OK
    if S.qos_lim.on and ql_never(&S.qos_lim, j, S.jobs.units[j]):
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_QOS_LIMIT
        return RC_OK
    if S.plan.never_fits(S, j):
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_NO_NODES
        return RC_OK
    if (S.outages.units_lost > 0 and S.outages.final and S.outages.next >= S.outages.n
            and S.jobs.units[j] > S.units - S.outages.units_lost):
        # (outages.pxd reject_unrunnable: no event left brings enough units back)
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_UNITS_DOWN
        return RC_OK
    if S.jobs.req[j] <= 0:
        # no requested time: no kill limit, no cap for a prediction; rejected under every predictor,
        # so that runs with different predictors cover the same jobs
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_NO_ESTIMATE
        return RC_OK
    if S.policy.predictor != PD_GIVEN:
        e = policy_predict(&S.policy, &S.jobs, &S.users, j, S.jobs.submit[j])
        if e < 0:
            return RC_NO_MEMORY
        S.jobs.est[j] = e
    if S.jobs.est[j] <= 0:
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_NO_ESTIMATE
        return RC_OK
    if S.qos_lim.on and ql_submit_refused(&S.qos_lim, j, S.jobs.user[j]):
        S.jobs.state[j] = JS_REJECTED
        S.jobs.reason[j] = RJ_QOS_LIMIT
        return RC_OK
    if S.qos_lim.on:
        ql_submitted(&S.qos_lim, j, S.jobs.user[j], 1)
    S.jobs.pred0[j] = S.jobs.est[j]
    S.jobs.seq[j] = S.queue.nseq
    S.jobs.key[j] = policy_key_nodes(&S.policy, &S.jobs, &S.users, S.units, S.nm.nn if S.nm.on else 0, S.nm.minn,
                                    j, S.jobs.submit[j])
    set_record_keys(S, j, S.jobs.submit[j])
    pos = queue_job(&S.queue, &S.jobs, &S.prec, j)
    if pos < 0:
        return RC_NO_MEMORY
    S.jobs.state[j] = JS_PENDING
    S.queue.nseq += 1
    if pos < S.queue.n - 1:
        S.resume_st.valid = False      # not behind every queued job: the last pass cannot be resumed
    return RC_OK


cdef inline int job_start(State* S, int64_t j, int64_t now, const uint64_t* units) noexcept nogil:
    # start job j now on `units`
    cdef int64_t cut, lo = 0, hi = S.W - 1
    cdef int32_t r
    if units == S.nodes.occ_units and S.nodes.version == S.nodes.occ_version and S.nodes.occ_hi >= S.nodes.occ_lo:
        lo = S.nodes.occ_lo             # (a node search's choice: its words, for nm_use too)
        hi = S.nodes.occ_hi
    r = nodes_occupy(&S.nodes, units, S.jobs.units[j])
    if r < 0:
        return RC_NO_MEMORY
    if grow(<void**>&S.nodes.running, &S.nodes.running_cap, S.nodes.nrun + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    if grow(<void**>&S.nodes.by_end, &S.nodes.by_end_cap, S.nodes.nrun + 1, sizeof(EndKey)) != RC_OK:
        return RC_NO_MEMORY
    if S.testing.record_units:
        memcpy(S.jobs.bits + j * S.W, units, S.W * sizeof(uint64_t))
    if S.plan.use != NULL:
        S.nm.use_units = units
        S.nm.use_lo = lo
        S.nm.use_hi = hi
        S.plan.use(S, j, units, -1)
        S.nm.use_units = NULL
    if S.lic.on:
        lic_hold(&S.lic, j, -1)
    if S.qos_lim.on:
        ql_count(&S.qos_lim, j, S.jobs.user[j], S.jobs.units[j], 1)
    S.jobs.row[j] = r
    S.jobs.state[j] = JS_RUNNING
    if pr_split(&S.prec, j):
        S.queue.siblings = True        # (its other entries leave the queue at the next compaction)
    S.jobs.start[j] = now
    S.jobs.resv[j] = -1
    S.jobs.runpos[j] = S.nodes.nrun
    S.nodes.running[S.nodes.nrun] = j
    nodes_by_end_put(&S.nodes, S.nodes.nrun, now + S.jobs.est[j], j)
    S.nodes.nrun += 1
    S.nodes.version += 1
    user_started(S, j, now)
    if S.jobs.run[j] >= 0:
        S.jobs.end[j] = now + S.jobs.run[j]
        if S.ar.kill != NULL:
            # inside a reservation: ended at its end (plus ResvOverRun) if it still runs then (advance_resv.pxd)
            cut = ar_kill_at(&S.ar, j, now)
            if cut < S.jobs.end[j]:
                S.jobs.end[j] = cut
                S.jobs.reason[j] = RJ_RESV_OVER
            elif S.jobs.reason[j] == RJ_RESV_OVER:
                S.jobs.reason[j] = RJ_NONE         # (requeued by a failure since, and not ended there this time)
        if heap_push(S, S.jobs.end[j], j) != RC_OK:
            return RC_NO_MEMORY
    return RC_OK


cdef inline void job_leave_nodes(State* S, int64_t j) noexcept nogil:
    # running job j gives its units back (those not down) and leaves the running lists
    cdef int64_t p, last
    nodes_by_end_remove(&S.nodes, S.jobs.start[j] + S.jobs.est[j], j)
    if S.plan.use != NULL:
        S.plan.use(S, j, S.nodes.rows + <int64_t>S.jobs.row[j] * S.W, 1)
    if S.lic.on:
        lic_hold(&S.lic, j, 1)
    if S.qos_lim.on:
        ql_count(&S.qos_lim, j, S.jobs.user[j], S.jobs.units[j], -1)
    nodes_release(&S.nodes, S.jobs.row[j], S.jobs.units[j])
    S.jobs.row[j] = -1
    p = S.jobs.runpos[j]
    last = S.nodes.running[S.nodes.nrun - 1]
    S.nodes.running[p] = last
    S.jobs.runpos[last] = p
    S.nodes.nrun -= 1
    S.jobs.runpos[j] = -1


cdef inline void job_finish(State* S, int64_t j, int64_t now) noexcept nogil:
    job_leave_nodes(S, j)
    S.jobs.state[j] = JS_DONE
    if S.qos_lim.on:
        ql_submitted(&S.qos_lim, j, S.jobs.user[j], -1)
    S.jobs.end[j] = now
    S.nodes.version += 1
    user_finished(S, j, now)


cdef inline void user_started(State* S, int64_t j, int64_t now) noexcept nogil:
    # the user's running list stays in start order: starts come in time order
    cdef UserHist* h = &S.users.hist[S.jobs.user[j]]
    S.jobs.acc[j] = now
    S.jobs.unext[j] = -1
    S.jobs.uprev[j] = h.last_run
    if h.last_run >= 0:
        S.jobs.unext[h.last_run] = j
    else:
        h.first_run = j
    h.last_run = j
    h.n_run += 1
    h.run_units += S.jobs.units[j]
    h.run_start_sum += now


cdef inline void user_unlink(State* S, int64_t j, int64_t now) noexcept nogil:
    # job j leaves its user's running list; its usage up to now is charged (fair share)
    cdef int64_t u = S.jobs.user[j]
    cdef UserHist* h = &S.users.hist[u]
    if S.jobs.uprev[j] >= 0:
        S.jobs.unext[S.jobs.uprev[j]] = S.jobs.unext[j]
    else:
        h.first_run = S.jobs.unext[j]
    if S.jobs.unext[j] >= 0:
        S.jobs.uprev[S.jobs.unext[j]] = S.jobs.uprev[j]
    else:
        h.last_run = S.jobs.uprev[j]
    h.n_run -= 1
    h.run_units -= S.jobs.units[j]
    h.run_start_sum -= S.jobs.start[j]
    S.users.raw[u] += S.jobs.units[j] * (now - S.jobs.acc[j])


cdef inline void user_finished(State* S, int64_t j, int64_t now) noexcept nogil:
    # history for the predictors (and the model's training step), usage for fair share
    cdef int64_t run = now - S.jobs.start[j]
    cdef UserHist* h = &S.users.hist[S.jobs.user[j]]
    user_unlink(S, j, now)
    policy_learn(&S.policy, &S.jobs, j, run)
    h.p3 = h.p2
    h.p2 = h.p1
    h.p1 = run
    h.n_done += 1
    h.sum_run += run
    h.sum_units += S.jobs.units[j]
    h.last_end = now
    if S.cfg.hooks:
        append(&S.replay.finished, &S.replay.nfinished, &S.replay.finished_cap, j)


cdef inline int apply_corrections(State* S, int64_t now) noexcept nogil:
    # Running jobs still running at their planned end get a new estimate (DESIGN §6.2). Applied
    # before every full pass: the profile and reservations follow the corrected estimates.
    cdef int64_t n = 0, i, j, e
    while n < S.nodes.nrun and S.nodes.by_end[n].end <= now:
        n += 1
    if n == 0:
        return RC_OK
    S.nodes.version += 1
    if grow(<void**>&S.ends, &S.ends_cap, n, sizeof(EndKey)) != RC_OK:
        return RC_NO_MEMORY
    memcpy(S.ends, S.nodes.by_end, n * sizeof(EndKey))
    memmove(S.nodes.by_end, S.nodes.by_end + n, (S.nodes.nrun - n) * sizeof(EndKey))
    for i in range(n):
        j = S.ends[i].job
        e = policy_correct(&S.policy, &S.jobs, j, now)
        S.jobs.est[j] = e
        # back into the planned-end order (nrun - n + i entries are in place)
        nodes_by_end_put(&S.nodes, S.nodes.nrun - n + i, S.jobs.start[j] + e, j)
    return RC_OK


cdef inline int refresh_priorities(State* S, int64_t now) noexcept nogil:
    # time-dependent keys: recompute (when due) and re-sort the queue
    cdef int64_t i, j
    cdef SortRec* rec
    if not prio_time_dependent(S.policy.prio):
        return RC_OK
    if S.policy.prio == PR_KEYED:
        if not S.policy.keys_dirty:
            return RC_OK
    elif S.policy.prio_period > 0 and now < S.policy.next_prio:
        return RC_OK
    else:
        if S.policy.prio == PR_MULTIFACTOR:
            policy_charge_usage(&S.policy, &S.jobs, &S.users, &S.nodes, now)
        S.policy.next_prio = now + S.policy.prio_period
    S.policy.keys_dirty = False
    S.resume_st.valid = False
    if S.queue.n == 0:
        return RC_OK
    rec = <SortRec*>malloc(S.queue.n * sizeof(SortRec))
    if rec == NULL:
        return RC_NO_MEMORY
    for i in range(S.queue.n):
        j = S.queue.entries[i].job
        if S.policy.prio != PR_KEYED:
            S.jobs.key[j] = policy_key_nodes(&S.policy, &S.jobs, &S.users, S.units, S.nm.nn if S.nm.on else 0,
                                             S.nm.minn, j, now)
        set_record_keys(S, j, now)
        rec[i].key = entry_key(&S.prec, &S.jobs, j, S.queue.entries[i].rec)
        rec[i].tier = S.queue.entries[i].tier
        rec[i].submit = S.jobs.submit[j]
        rec[i].seq = S.jobs.seq[j]
        rec[i].rec = S.queue.entries[i].rec
        rec[i].job = j
        rec[i].units = S.queue.entries[i].units
        rec[i].est = S.queue.entries[i].est
    qsort(rec, S.queue.n, sizeof(SortRec), sortrec_cmp)
    for i in range(S.queue.n):
        S.queue.entries[i].job = rec[i].job
        S.queue.entries[i].units = rec[i].units
        S.queue.entries[i].est = rec[i].est
        S.queue.entries[i].tier = <int32_t>rec[i].tier
        S.queue.entries[i].rec = rec[i].rec
    free(rec)
    return RC_OK


# ---- the replay's heap of actual ends

cdef inline int heap_push(State* S, int64_t end, int64_t job) noexcept nogil:
    cdef int64_t i, parent
    cdef EndKey tmp
    cdef EndKey* h
    if grow(<void**>&S.replay.heap, &S.replay.heap_cap, S.replay.nheap + 1, sizeof(EndKey)) != RC_OK:
        return RC_NO_MEMORY
    h = S.replay.heap
    i = S.replay.nheap
    h[i].end = end
    h[i].job = job
    S.replay.nheap += 1
    while i > 0:
        parent = (i - 1) // 2
        if not endkey_less(&h[i], &h[parent]):
            break
        tmp = h[i]; h[i] = h[parent]; h[parent] = tmp
        i = parent
    return RC_OK


cdef inline void heap_sift(State* S, int64_t i) noexcept nogil:
    # restore the heap order at entry i (moved in from elsewhere): up, then down
    cdef EndKey* h = S.replay.heap
    cdef int64_t parent, c, n = S.replay.nheap
    cdef EndKey tmp
    while i > 0:
        parent = (i - 1) // 2
        if not endkey_less(&h[i], &h[parent]):
            break
        tmp = h[i]; h[i] = h[parent]; h[parent] = tmp
        i = parent
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and endkey_less(&h[c + 1], &h[c]):
            c += 1
        if not endkey_less(&h[c], &h[i]):
            break
        tmp = h[i]; h[i] = h[c]; h[c] = tmp
        i = c


cdef inline void heap_remove(State* S, int64_t job) noexcept nogil:
    # drop a running job's end (a failure killed it; rare: a scan finds it)
    cdef int64_t i
    for i in range(S.replay.nheap):
        if S.replay.heap[i].job == job:
            S.replay.nheap -= 1
            S.replay.heap[i] = S.replay.heap[S.replay.nheap]
            if i < S.replay.nheap:
                heap_sift(S, i)
            return


cdef inline int64_t heap_pop(State* S) noexcept nogil:
    cdef int64_t job = S.replay.heap[0].job
    S.replay.nheap -= 1
    S.replay.heap[0] = S.replay.heap[S.replay.nheap]
    heap_sift(S, 0)
    return job


cdef inline int64_t heap_top_end(State* S) noexcept nogil:
    # the earliest actual end of a running job (INF: none). Co-allocation moves ends (a rate
    # change pushes a new entry): entries that are not their job's end are dropped on the way.
    while S.co.on and S.replay.nheap > 0 and (S.jobs.state[S.replay.heap[0].job] != JS_RUNNING
                                              or S.jobs.end[S.replay.heap[0].job] != S.replay.heap[0].end):
        heap_pop(S)
    return S.replay.heap[0].end if S.replay.nheap > 0 else INF
