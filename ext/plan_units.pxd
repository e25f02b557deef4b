# The units planner (header only): interchangeable units, planned on the profile of DESIGN §4 -- a
# slot at each distinct planned end of a running job, with the units free throughout it. Its table
# of operations is filled in planner.pxd.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport qsort, malloc, calloc, free

from memory cimport INF
from words cimport w_copy, w_or_into, w_popcount, w_any_common
from nodes cimport Nodes, EndKey, endkey_cmp
from profile cimport (Prof, prof_reserve_slots, prof_live_slots, prof_round_up, prof_find_start,
                      prof_find_start_window, prof_choose, prof_known_misfit, prof_note_misfit, prof_cnt,
                      prof_blocks_build, prof_seek)
from parallel cimport Spec, SPEC_FULL
from state cimport State, PassCtx
from node_model cimport NodeModel
from pass_steps cimport (CM_SEARCH, CM_EAGER, STEP_STOP, STEP_ERROR, planned_end, release_time, take_lowest_free,
                         commit_start, commit_reservation, count_rest, begin_test, passed_over)
from pbf._codes cimport CK_FREE, EX_RESV_TABLE
from pbf._codes cimport RC_OK, RC_NO_MEMORY, NO_START

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


# ---- the plan

cdef inline int build_profile_down(State* S, int64_t now) noexcept nogil:
    # build_profile with units out of service: a running job brings back only its units that are
    # up; a down unit comes back at its until (never, when INF), or, held by a running job (drained
    # under it), at the later of its until and the job's planned end. A slot begins where units come
    # back, as in build_profile.
    cdef int64_t i, r, m = 0, j, e, t, u, w, W = S.W, cnt, nrun = S.nodes.nrun
    cdef int32_t s
    cdef uint64_t x
    cdef uint64_t* bits
    cdef const uint64_t* row
    cdef Prof* P = &S.prof
    cdef Nodes* N = &S.nodes
    cdef EndKey* rel = <EndKey*>malloc((N.ndown + 1) * sizeof(EndKey))   # (time, unit)
    cdef uint64_t* held = <uint64_t*>calloc(W + 1, sizeof(uint64_t))
    if rel == NULL or held == NULL:
        free(rel)
        free(held)
        return RC_NO_MEMORY
    # (no down unit held by a running job, the usual case after failures: no row meets a down unit)
    for i in range(nrun if N.held_down > 0 else 0):
        j = N.by_end[i].job
        row = N.rows + <int64_t>S.jobs.row[j] * W
        for w in range(W):
            x = row[w] & N.down[w]
            held[w] |= x
            while x:
                u = w * 64 + __builtin_ctzll(x)
                x &= x - 1
                if N.until[u] != INF:
                    rel[m].end = max(release_time(S, N.until[u], now), planned_end(S, i, now))
                    rel[m].job = u
                    m += 1
    for w in range(W):
        x = N.down[w] & ~held[w]
        while x:
            u = w * 64 + __builtin_ctzll(x)
            x &= x - 1
            if N.until[u] != INF:
                rel[m].end = release_time(S, N.until[u], now)
                rel[m].job = u
                m += 1
    free(held)
    qsort(rel, m, sizeof(EndKey), endkey_cmp)
    P.nslots = 0
    P.nmerged = 0
    if prof_reserve_slots(P, nrun + m + 1) != RC_OK:
        free(rel)
        return RC_NO_MEMORY
    P.s_begin[0] = now
    cnt = N.nfree
    P.s_cnt[0] = cnt
    P.s_next[0] = -1
    bits = P.s_bits
    w_copy(bits, N.free, W)
    s = 0
    i = 0
    r = 0
    while i < nrun or r < m:
        e = planned_end(S, i, now) if i < nrun else INF
        if r < m and rel[r].end < e:
            e = rel[r].end
        P.s_next[s] = s + 1
        s += 1
        P.s_begin[s] = e
        P.s_next[s] = -1
        w_copy(bits + W, bits, W)
        bits += W
        while i < nrun and planned_end(S, i, now) == e:
            j = N.by_end[i].job
            row = N.rows + <int64_t>S.jobs.row[j] * W
            if N.held_down == 0:
                w_or_into(bits, bits, row, W)
                cnt += S.jobs.units[j]
            else:
                for w in range(W):
                    x = row[w] & ~N.down[w]
                    bits[w] |= x
                    cnt += __builtin_popcountll(x)
            i += 1
        while r < m and rel[r].end == e:
            u = rel[r].job
            bits[u // 64] |= (<uint64_t>1) << (u % 64)
            cnt += 1
            r += 1
        P.s_cnt[s] = cnt
        if cnt == P.s_cnt[s - 1]:
            # nothing came back (a job whose units are all down): no boundary, as if no job ended
            # there (no start can be found at a boundary where no unit comes back)
            s -= 1
            bits -= W
            P.s_next[s] = -1
    free(rel)
    P.nslots = s + 1
    prof_blocks_build(P)
    return RC_OK


cdef inline int build_profile(State* S, int64_t now) noexcept nogil:
    # slot 0 = [now, first planned end) with the units free now; a new slot at each distinct planned
    # end of a running job (start + estimate, never before now + 1, rounded up), adding its units
    cdef int64_t i, j, e, e_next, W = S.W, cnt, nrun = S.nodes.nrun
    cdef int32_t s
    cdef uint64_t* bits
    cdef Prof* P = &S.prof
    if S.nodes.ndown > 0:
        return build_profile_down(S, now)
    P.nslots = 0
    P.nmerged = 0
    # room for every slot up front: at most one per running job, plus slot 0
    if prof_reserve_slots(P, nrun + 1) != RC_OK:
        return RC_NO_MEMORY
    P.nslots = 1
    P.s_begin[0] = now
    cnt = S.nodes.nfree
    P.s_cnt[0] = cnt
    P.s_next[0] = -1
    bits = P.s_bits
    w_copy(bits, S.nodes.free, W)
    s = 0
    i = 0
    e_next = planned_end(S, 0, now) if nrun > 0 else 0
    while i < nrun:
        # planned ends in order; clamping to now + 1 and rounding keep the order
        e = e_next
        P.s_next[s] = s + 1
        s += 1
        P.s_begin[s] = e
        P.s_next[s] = -1
        # the new slot = the previous one plus the first ending job's units, in one sweep
        j = S.nodes.by_end[i].job
        w_or_into(bits + W, bits, S.nodes.rows + <int64_t>S.jobs.row[j] * W, W)
        bits += W
        cnt += S.jobs.units[j]
        i += 1
        while i < nrun:
            e_next = planned_end(S, i, now)
            if e_next != e:
                break
            j = S.nodes.by_end[i].job
            w_or_into(bits, bits, S.nodes.rows + <int64_t>S.jobs.row[j] * W, W)
            cnt += S.jobs.units[j]
            i += 1
        P.s_cnt[s] = cnt
    P.nslots = s + 1
    prof_blocks_build(P)
    return RC_OK


cdef inline int64_t units_size(State* S) noexcept nogil:
    # the profile's live slots (Planner.size)
    return prof_live_slots(&S.prof)


cdef inline bint units_take_now(State* S, int64_t j, int64_t k) noexcept nogil:
    # Slurm's main scheduler on units (Planner.take_now): k free units, the lowest
    if k > S.nodes.nfree:
        return False
    take_lowest_free(S, &S.prof, k)
    return True


cdef inline bint units_never_fits(State* S, int64_t j) noexcept nogil:
    # any job of at most the cluster's units fits (the size check comes before)
    return False


cdef inline int units_begin(State* S, int64_t now) noexcept nogil:
    return RC_OK


# ---- the ordered commit's shortcuts (DESIGN §5)

cdef inline int64_t search_from(Prof* P, int64_t k, int64_t d, int64_t t, int64_t now, int32_t* at) noexcept nogil:
    # The earliest start on the up-to-date copy P is not before t, the earliest on an older copy
    # (every start feasible now was feasible then, and one inside a slot of the older copy would
    # have made that slot's beginning feasible): the window search may begin at the last slot
    # beginning at or before t, with the same answer and candidates as from slot 0.
    cdef int32_t prev
    cdef int32_t i = prof_seek(P, t, &prev)
    return prof_find_start_window(P, k, d, now, i, prev, at)


cdef inline int64_t confirm(State* S, Prof* P, int64_t k, int64_t d, const Spec* spec, int32_t* at,
                            bint* overlap, bint* untouched) noexcept nogil:
    # The AND test. spec.cand holds the units free throughout [t, t + d) on the copy as it was at the
    # speculation, which had applied the first spec.seen log entries. A pass only removes free units,
    # so the earliest start on the up-to-date copy is not before t; and the units free throughout the
    # window now are spec.cand minus the units of the newer entries overlapping it. If k remain, t is
    # the sequential pass's answer and those units its candidates (a slot beginning still: were it
    # merged into the slot before, the job would have fitted earlier on the older copy too).
    # Returns t, or NO_START to search again. *untouched: no newer entry holds any of spec.cand's
    # units at any time (then every unit choice among them sees what it saw on the older copy).
    cdef int64_t W = S.W, e, w, t = spec.t, stop = prof_round_up(P, t + d), n = S.log.n
    cdef int32_t i = 0, prev = -1
    cdef uint64_t* bits
    w_copy(P.cand, spec.cand, W)
    for e in range(spec.seen, n):
        bits = S.log.bits + e * W
        if S.log.t[e] < stop and prof_round_up(P, S.log.t[e] + S.log.d[e]) > t:
            if w_any_common(P.cand, bits, W):
                overlap[0] = True
                untouched[0] = False
                for w in range(W):
                    P.cand[w] &= ~bits[w]
        elif untouched[0] and w_any_common(spec.cand, bits, W):
            untouched[0] = False
    if overlap[0] and w_popcount(P.cand, W) < k:
        return NO_START
    i = prof_seek(P, t, &prev)
    if P.s_begin[i] != t:
        return NO_START                     # (not reached, by the argument above; searching is safe)
    at[0] = i
    P.prev_of_at = prev
    return t


cdef inline void choose_units(Prof* P, int64_t k, int64_t t, int64_t d, int32_t si, int64_t now, const Spec* spec,
                              bint proposal_holds) noexcept nogil:
    # P.chosen = the units for the placement: the speculating worker's choice when it holds (its
    # candidates untouched by every newer placement, so the same rules saw the same units), else
    # the choice made here
    if proposal_holds:
        w_copy(P.chosen, spec.chosen, P.W)
    else:
        prof_choose(P, k, t, d, si, now)

# ---- the step

cdef inline int64_t units_step(State* S, Prof* P, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil:
    # The job test on interchangeable units (Planner.step): on profile P, start the job at queue
    # position p now, reserve it, or skip it, and count it. The sequential pass and its SJBF phase
    # search (CM_SEARCH); the commits of the parallel pass (CM_ORDERED, CM_EAGER) find the start
    # from their speculation `spec`. Returns the next queue position to test, STEP_STOP or STEP_ERROR.
    cdef PassCtx* c = &S.ctx
    cdef int64_t j, k, d, t, q, lim, c0, now = c.now
    cdef int32_t si = 0
    cdef bint overlap = False, proposal = False
    if mode != CM_EAGER and not c.in_phase2:
        if S.cfg.sjbf and c.resv_left == 0:
            c.phase2 = p
            return STEP_STOP
        if c.resv_left == 0 and c.built and prof_cnt(P, 0) == 0 and c.start_us0 < 0 and not S.cfg.resv_stop:
            # nothing is free now and no reservation is left: every remaining job fails at once
            # (not under the slurm-sim clock: there, any test may be a yield point)
            c.ex = count_rest(S, S.queue.n - p, prof_live_slots(P), &c.depth)
            return STEP_STOP
    if passed_over(S, S.queue.entries[p].job):
        return p + 1                   # (before the test: not counted, as Slurm counts only will-run tests)
    if not begin_test(S, p, prof_live_slots(P) if c.built else 1, NULL, &j, &k, &d):
        return STEP_STOP
    if not c.built:
        # Until a job does not fit now, the profile is not needed: with no reservation the future
        # only has more free units, so "fits now" is the free count.
        if k <= S.nodes.nfree:
            take_lowest_free(S, P, k)
            return p + 1 if commit_start(S, P, p, j, k, d, 0, c.parallel) == RC_OK else STEP_ERROR
        if not c.parallel and build_profile(S, now) != RC_OK:
            return STEP_ERROR
        c.built = True
    if c.resv_left == 0:
        # no reservation left: only "can it start now?"
        if mode == CM_SEARCH and S.cfg.resv_stop:
            # Slurm 17.02's table-size stop: the pass ends at the first job that would need a
            # reservation (a start within the window, not now)
            t = prof_find_start(P, k, d, now, False, &si)
            if t > now:
                c.ex = EX_RESV_TABLE
                return STEP_STOP
        elif mode == CM_SEARCH:
            c0 = prof_cnt(P, 0)
            if k > c0 or prof_known_misfit(P, k, d):
                c.blocked = True
                q = p + 1
                if S.clock.kind == CK_FREE and not c.in_phase2:
                    # and the jobs after it too, while they are rejected the same way (nothing to
                    # charge; the checks above resume at the first that needs a search)
                    lim = S.queue.n
                    if S.cfg.max_job_test >= 0 and q + S.cfg.max_job_test - c.depth < lim:
                        lim = q + S.cfg.max_job_test - c.depth
                    while q < lim and (S.queue.entries[q].units > c0 or prof_known_misfit(
                            P, S.queue.entries[q].units, S.queue.entries[q].est)):
                        q += 1
                    c.depth += q - (p + 1)
                return q
            t = prof_find_start(P, k, d, now, True, &si)
            if t < 0:
                prof_note_misfit(P, k, d)
        else:
            if k > prof_cnt(P, 0) or spec.t != now:
                c.blocked = True             # could not start now on an older copy: cannot now
                return p + 1
            # a speculative "fits now" is checked again on the up-to-date copy (one AND per
            # reservation); a conflict is when the commits it had not seen changed the answer
            t = prof_find_start(P, k, d, now, True, &si)
            c.reeval += 1
            if t != spec.t:
                c.conflicts += 1
    elif mode == CM_SEARCH:
        t = prof_find_start(P, k, d, now, False, &si)
    elif spec.mode == SPEC_FULL and spec.t < 0:
        c.blocked = True                     # no start within the window on an older copy either
        return p + 1
    elif mode == CM_EAGER:
        t = prof_find_start(P, k, d, now, False, &si)
        c.reeval += 1
        if t != spec.t:
            c.conflicts += 1
    else:
        t = -1
        if spec.mode == SPEC_FULL:
            proposal = spec.chosen != NULL
            t = confirm(S, P, k, d, spec, &si, &overlap, &proposal)
            if overlap:
                c.conflicts += 1
        if t < 0:
            proposal = False
            c.reeval += 1
            if spec.mode == SPEC_FULL and not P.monotone:
                t = search_from(P, k, d, spec.t, now, &si)   # no start before the speculative one
            else:
                t = prof_find_start(P, k, d, now, False, &si)
    if t == now:
        choose_units(P, k, t, d, si, now, spec, proposal)
        return p + 1 if commit_start(S, P, p, j, k, d, si, True) == RC_OK else STEP_ERROR
    if t > now and c.resv_left != 0:
        choose_units(P, k, t, d, si, now, spec, proposal)
        return p + 1 if commit_reservation(S, P, j, k, t, d, si) == RC_OK else STEP_ERROR
    c.blocked = True
    return p + 1
