# Start-time estimates of pending jobs (header only): what `squeue --start` answers. A plan made on
# request from the current state: the jobs the last full pass reserved keep their reservation
# (their earliest start from it on, which is the reservation itself when nothing changed since),
# then every other queued job, in priority order, at its earliest start after the jobs before it
# -- a conservative plan, with no backfill window. Pbf jobs take any units, so the start times of
# such a plan are those of a count-based conservative profile. The plan works on the pass profile
# and changes nothing else (it only stops the next pass from resuming this one, which decides the same).

from libc.stdint cimport uint64_t, int64_t, int32_t

from memory cimport grow
from words cimport w_copy
from profile cimport Prof, prof_start_pass, prof_find_start, prof_choose, prof_commit
from pass_steps cimport ensure_scratch
from plan_units cimport build_profile, search_from
from plan_nodes cimport build_node_plan
from node_model cimport NodeModel, nm_find_start, nm_hold
from part_records cimport pr_count, pr_range
from profile cimport prof_round_up
from state cimport State
from pbf._codes cimport JS_PENDING
from pbf._codes cimport RC_OK, RC_NO_MEMORY


cdef inline int plan_starts(State* S, int64_t now, int64_t* out, uint64_t* units_out) noexcept nogil:
    # out[i]: the planned start of the job at queue position i (-1: none ever, its units being down
    # for good); units_out (NULL: not wanted): its planned units, W words each (the planner's)
    S.resume_st.valid = False
    if ensure_scratch(S) != RC_OK:
        return RC_NO_MEMORY
    prof_start_pass(&S.prof, 0, S.cfg.bf_resolution)
    return S.plan.starts(S, now, out, units_out)


cdef inline int plan_starts_units(State* S, int64_t now, int64_t* out, uint64_t* units_out) noexcept nogil:
    # plan_starts on units: the profile, the reserved jobs first, then the others in priority order
    cdef Prof* P = &S.prof
    cdef int64_t i, j, k, d, t, W = S.W, phase
    cdef int32_t si = 0
    if build_profile(S, now) != RC_OK:
        return RC_NO_MEMORY
    for phase in range(2):
        for i in range(S.queue.n):
            j = S.queue.entries[i].job
            if (S.jobs.resv[j] >= 0) != (phase == 0):
                continue
            k = S.queue.entries[i].units
            d = S.queue.entries[i].est
            if phase == 0:
                t = search_from(P, k, d, S.jobs.resv[j] if S.jobs.resv[j] > now else now, now, &si)
            else:
                t = prof_find_start(P, k, d, now, False, &si)
            out[i] = t
            if t < 0:
                continue
            prof_choose(P, k, t, d, si, now)
            if prof_commit(P, k, t, d, si, True) != RC_OK:
                return RC_NO_MEMORY
            if units_out != NULL:
                w_copy(units_out + i * W, P.chosen, W)
    return RC_OK


cdef enum:
    SAME_JOB = -2              # plan_starts: a later queue entry of a split job (its start: at its first)


cdef inline int64_t nodes_hold_start(State* S, NodeModel* M, int64_t j, int32_t rec, int64_t k, int64_t d,
                                     int64_t now, int64_t after, int* rc) noexcept nogil:
    # job j's earliest start from `after` on, held in the plan (-1: none; rc: RC_*). A queue entry of a
    # job of several partitions (part_records.pxd) starts in whichever of its partitions can start it
    # first, and holds it there.
    cdef int64_t t, r, lo, hi, best = -1, best_r = -1, n = pr_count(&S.prec, j)
    cdef uint64_t own = M.jfeat[j]
    if n <= 1:
        t = nm_find_start(M, j, k, d, now, after, False, 0, S.cfg.bf_resolution)
    else:
        pr_range(&S.prec, j, rec, &lo, &hi)
        for r in range(lo, hi):
            M.jfeat[j] = S.prec.mask[r]
            t = nm_find_start(M, j, k, d, now, after, False, 0, S.cfg.bf_resolution)
            if M.failed:
                break
            if t >= 0 and (best < 0 or t < best):
                best = t
                best_r = r
        t = best
        if best_r >= 0 and best_r != hi - 1 and not M.failed:
            M.jfeat[j] = S.prec.mask[best_r]      # (the search again, for its nodes)
            t = nm_find_start(M, j, k, d, now, after, False, 0, S.cfg.bf_resolution)
    rc[0] = RC_NO_MEMORY if M.failed else RC_OK
    M.failed = False
    if t >= 0 and rc[0] == RC_OK:
        rc[0] = nm_hold(M, j, t, prof_round_up(&S.prof, t + d))
    M.jfeat[j] = own
    return t


cdef inline void merge_split_entries(State* S, int64_t* out, uint64_t* units_out) noexcept nogil:
    # a split job's start: the earliest of its entries', at its first entry (the others SAME_JOB)
    cdef int64_t i, f, j, W = S.W
    S.prec.epoch += 1
    for i in range(S.queue.n):
        if S.queue.entries[i].rec < 0:
            continue
        j = S.queue.entries[i].job
        if S.prec.seen[j] != S.prec.epoch:
            S.prec.seen[j] = S.prec.epoch
            S.prec.first_entry[j] = i
            continue
        f = S.prec.first_entry[j]
        if out[i] >= 0 and (out[f] < 0 or out[i] < out[f]):
            out[f] = out[i]
            if units_out != NULL:
                w_copy(units_out + f * W, units_out + i * W, W)
        out[i] = SAME_JOB


cdef inline int plan_starts_nodes(State* S, int64_t now, int64_t* out, uint64_t* units_out) noexcept nogil:
    # plan_starts on a node cluster: the same two phases on the per-node plan; a job's planned units
    # are the lowest units of the nodes it is planned on. Each entry of a split job is planned at its
    # place, as Slurm's backfill reserves for each record of a job; the job's start is the earliest.
    cdef NodeModel* M = &S.nm
    cdef int64_t i, j, k, d, t, u, n, W = S.W, phase
    cdef int rc = RC_OK
    if build_node_plan(S, now) != RC_OK:
        return RC_NO_MEMORY
    for phase in range(2):
        for i in range(S.queue.n):
            j = S.queue.entries[i].job
            if (S.jobs.resv[j] >= 0) != (phase == 0):
                continue
            k = S.queue.entries[i].units
            d = S.queue.entries[i].est
            t = nodes_hold_start(S, M, j, S.queue.entries[i].rec, k, d, now,
                                 S.jobs.resv[j] if phase == 0 and S.jobs.resv[j] > now else now, &rc)
            if rc != RC_OK:
                return rc
            out[i] = t
            if t < 0:
                continue
            if units_out != NULL:
                for u in range(W):
                    units_out[i * W + u] = 0
                for n in range(M.nn):
                    for u in range(M.first[n], M.first[n] + M.take[n]):
                        units_out[i * W + (u >> 6)] |= (<uint64_t>1) << (u & 63)
    if S.prec.nsplit:
        merge_split_entries(S, out, units_out)
    return RC_OK


cdef inline int record_estimates(State* S, int64_t now, int64_t first) noexcept nogil:
    # after the instant `now`: the estimate of each job that arrived at it (jobs first .. next_sub-1;
    # one started at once: its start), and every `every` instants with a pass, every pending job's
    cdef int64_t i, j, c, last = S.replay.next_sub
    cdef bint arrivals = False, periodic = False
    for j in range(first, last):
        if S.jobs.state[j] == JS_PENDING:
            arrivals = True
        elif S.jobs.start[j] >= 0:
            S.est.at_submit[j] = S.jobs.start[j]
    if S.est.every > 0 and S.queue.n > 0:
        S.est.instants += 1
        if S.est.instants >= S.est.every:
            S.est.instants = 0
            periodic = True
    if not arrivals and not periodic:
        return RC_OK
    if grow(<void**>&S.est.plan, &S.est.plan_cap, S.queue.n, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    if plan_starts(S, now, S.est.plan, NULL) != RC_OK:
        return RC_NO_MEMORY
    for i in range(S.queue.n):
        j = S.queue.entries[i].job
        if first <= j < last and S.est.plan[i] != SAME_JOB:
            S.est.at_submit[j] = S.est.plan[i]
    if periodic:
        # three columns of one capacity (each grown from the same old capacity to the same new one)
        c = S.est.log_cap
        if grow(<void**>&S.est.log_t, &c, S.est.nlog + S.queue.n, sizeof(int64_t)) != RC_OK:
            return RC_NO_MEMORY
        c = S.est.log_cap
        if grow(<void**>&S.est.log_job, &c, S.est.nlog + S.queue.n, sizeof(int64_t)) != RC_OK:
            return RC_NO_MEMORY
        c = S.est.log_cap
        if grow(<void**>&S.est.log_est, &c, S.est.nlog + S.queue.n, sizeof(int64_t)) != RC_OK:
            return RC_NO_MEMORY
        S.est.log_cap = c
        for i in range(S.queue.n):
            if S.est.plan[i] == SAME_JOB:
                continue
            S.est.log_t[S.est.nlog] = now
            S.est.log_job[S.est.nlog] = S.queue.entries[i].job
            S.est.log_est[S.est.nlog] = S.est.plan[i]
            S.est.nlog += 1
    return RC_OK
