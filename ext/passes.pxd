# The passes (header only): the one job-test step, the sequential full pass and its SJBF phase, and
# Slurm's quick main-scheduler pass. The parallel pass (parallel_pass.pxd) commits through the same
# step; sequential is the one-worker case.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport qsort, malloc, calloc, free
from libc.string cimport memmove, memcpy

from memory cimport INF, grow, append
from words cimport w_copy, w_zero, w_or_into, w_take_lowest, w_popcount, w_any_common
from ticks cimport now_ticks
from nodes cimport Nodes, EndKey, endkey_cmp
from queue cimport PendEntry, queue_compact
from profile cimport (Prof, prof_start_pass, prof_reserve_slots, prof_ensure_scratch, prof_live_slots,
                      prof_round_up, prof_find_start, prof_find_start_window, prof_choose, prof_commit,
                      prof_known_misfit, prof_note_misfit, prof_cnt, prof_blocks_build, prof_seek)
from clock cimport clock_start, clock_charge_test, clock_duration_us
from records cimport records_add
from parallel cimport SPEC_NOW, SPEC_FULL
from sync cimport pbf_store
from lifecycle cimport job_start, refresh_priorities, apply_corrections
from state cimport State, PassCtx
from slurm_space cimport ss_reset, ss_job_test, ss_main_test, SS_ERROR
from bf_step cimport bfl_step
from bf_limits cimport BFL_TEST, BFL_SKIP, BFL_ERROR
from node_model cimport (NodeModel, NodeLine, nl_room, nl_gain, nl_point, nm_add_time, nm_range_count, nm_job_mem,
                         nm_job_nodes, nm_fits_live, nm_pick_units, nm_find_start, nm_hold, nm_plan_ready, nm_note_head,
                         nm_choose, nm_window_cpus, nm_monotone, nm_take_bits, nm_eligible, nm_ev_append,
                         EV_T_MAX)
from pbf._codes cimport (CK_FREE, CK_MODEL, CK_SLURM_SIM, HOW_MAIN, HOW_BACKFILL, PK_FULL, PK_QUICK, EX_END,
                         EX_MAX_JOB_TEST, EX_QUICK_BLOCKED, EX_BUDGET, EX_RESV_TABLE, TR_EVENT)
from pbf._codes cimport RC_OK, RC_NO_MEMORY, NO_START, prio_time_dependent

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


cdef enum:                     # how job_step finds a job's start
    CM_SEARCH = 0              # search the profile (the sequential pass, the SJBF phase)
    CM_ORDERED = 1             # confirm a speculation by the AND test, commits in queue order (DESIGN §5)
    CM_EAGER = 2               # search again, commits in completion order (no queue-order shortcuts)

cdef enum:                     # what job_step returns besides the next queue position
    STEP_STOP = -1             # the pass ends here (PassCtx.ex, phase2 say why)
    STEP_ERROR = -2            # out of memory


ctypedef struct Spec:          # a speculative result of the parallel pass
    int64_t t                  # the earliest start found, or -1
    int64_t mode               # what was asked (SPEC_*)
    int64_t seen               # log entries the copy had applied
    const uint64_t* cand       # the units free throughout [t, t + d) on that copy (SPEC_FULL), W words
    const uint64_t* chosen     # the units prof_choose took among them there (NULL: none proposed)
    const int64_t* ncpu        # a node cluster: the cores each node gave the job at t on that copy


# ---- small pieces

cdef inline int64_t pass_clock(State* S) noexcept nogil:
    # A pass's wall time is read only where someone uses it: the per-pass records, or the parallel
    # pass's choice of threads. Two clock reads are 5-10 % of a replay of short passes.
    if S.cfg.record_passes or S.cfg.workers > 1:
        return now_ticks()
    return 0


cdef inline int64_t planned_end(State* S, int64_t i, int64_t now) noexcept nogil:
    # the profile's time for the i-th running job's end (by_end order)
    cdef int64_t e = S.nodes.by_end[i].end
    if e <= now:
        e = now + 1
    if S.prof.resolution > 1:
        e = prof_round_up(&S.prof, e)
    return e


cdef inline int64_t release_time(State* S, int64_t t, int64_t now) noexcept nogil:
    # the profile's time for units coming back at t (as planned_end: never before now + 1, rounded)
    if t <= now:
        t = now + 1
    if S.prof.resolution > 1:
        t = prof_round_up(&S.prof, t)
    return t


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


cdef inline int ensure_scratch(State* S) noexcept nogil:
    # the backward walk of prof_choose lists at most every slot: 1 + running + 2 per placement
    return prof_ensure_scratch(&S.prof, S.nodes.nrun + 2 * S.queue.n + 8)


cdef inline void take_lowest_free(State* S, Prof* P, int64_t k) noexcept nogil:
    # P.chosen = the k lowest free units (a start now with no reservation in the pass: the future
    # only has more free units, so this is exactly what the profile would give)
    w_copy(P.cand, S.nodes.free, S.W)
    w_zero(P.chosen, S.W)
    w_take_lowest(P.cand, P.chosen, k, S.W)


cdef inline void log_append(State* S, const uint64_t* units, int64_t j, int64_t k, int64_t t, int64_t d,
                            bint resv) noexcept nogil:
    # publish job j's placement (only the committer writes; readers acquire the count)
    cdef int64_t e = S.log.n
    S.log.job[e] = j
    S.log.t[e] = t
    S.log.d[e] = d
    S.log.k[e] = k
    S.log.resv[e] = resv
    w_copy(S.log.bits + e * S.W, units, S.W)
    pbf_store(&S.log.n, e + 1)


cdef inline int commit_start(State* S, Prof* P, int64_t p, int64_t j, int64_t k, int64_t d, int32_t si,
                             bint on_profile) noexcept nogil:
    # start job j (queue position p) now on P.chosen; on_profile: remove them from P too
    cdef PassCtx* c = &S.ctx
    if on_profile:
        P.prev_of_at = -1
        if prof_commit(P, k, c.now, d, si, False) != RC_OK:
            return RC_NO_MEMORY
        if c.parallel:
            log_append(S, P.chosen, j, k, c.now, d, False)
    if job_start(S, j, c.now if c.start_us0 < 0 else (c.start_us0 + S.clock.last_us) // 1000000,
                 P.chosen) != RC_OK:
        return RC_NO_MEMORY
    S.queue.entries[p].job = -1
    if c.first_start < 0 or p < c.first_start:
        c.first_start = p
    S.jobs.how[j] = HOW_BACKFILL if c.blocked else HOW_MAIN
    c.backfilled = c.backfilled or c.blocked
    c.started += 1
    return append(&S.decided.started, &S.decided.nstarted, &S.decided.started_cap, j)


cdef inline int commit_reservation(State* S, Prof* P, int64_t j, int64_t k, int64_t t, int64_t d,
                                   int32_t si) noexcept nogil:
    # reserve P.chosen for job j from t on
    if prof_commit(P, k, t, d, si, True) != RC_OK:
        return RC_NO_MEMORY
    if S.ctx.parallel:
        log_append(S, P.chosen, j, k, t, d, True)
    return note_reservation(S, j, t)


cdef inline int note_reservation(State* S, int64_t j, int64_t t) noexcept nogil:
    # job j is reserved from t on (the plan already holds it)
    cdef PassCtx* c = &S.ctx
    S.jobs.resv[j] = t
    if S.jobs.resv_min[j] < 0 or t < S.jobs.resv_min[j]:
        S.jobs.resv_min[j] = t
    if append(&S.decided.reserved, &S.decided.nreserved, &S.decided.reserved_cap, j) != RC_OK:
        return RC_NO_MEMORY
    c.resv += 1
    if c.resv_left > 0:
        pbf_store(&c.resv_left, c.resv_left - 1)
    c.blocked = True
    return RC_OK


cdef inline int count_rest(State* S, int64_t q, int64_t slots, int64_t* depth) noexcept nogil:
    # The remaining q jobs all fail their test at once (nothing is free now, no reservation left):
    # count them as tested, and charge them, exactly as testing them one by one would. Returns the
    # exit reason.
    if S.clock.kind == CK_FREE:
        if S.cfg.max_job_test >= 0 and depth[0] + q > S.cfg.max_job_test:
            depth[0] = S.cfg.max_job_test
            return EX_MAX_JOB_TEST
        depth[0] += q
        return EX_END
    while q > 0:
        if S.cfg.max_job_test >= 0 and depth[0] >= S.cfg.max_job_test:
            return EX_MAX_JOB_TEST
        if not clock_charge_test(&S.clock, S.cfg.workers, slots, 0, S.ctx.resv):
            return EX_BUDGET
        depth[0] += 1
        q -= 1
    return EX_END


# ---- the start of every job test

cdef inline bint begin_test(State* S, int64_t p, int64_t slots, NodeModel* M, int64_t* j, int64_t* k,
                            int64_t* d) noexcept nogil:
    # The test of the job at queue position p begins: False when the pass ends here instead (the
    # test limit, or the clock's budget, charged for a plan of `slots` and, on a node cluster M, the
    # nodes that could hold the job); else its job, units and duration, and it counts as tested.
    cdef PassCtx* c = &S.ctx
    cdef int64_t nodes = 0
    if S.cfg.max_job_test >= 0 and c.depth >= S.cfg.max_job_test:
        c.ex = EX_MAX_JOB_TEST
        return False
    if S.clock.kind != CK_FREE:
        if M != NULL and S.clock.cost_node_us != 0:
            nm_eligible(M, S.queue.entries[p].job)
            nodes = M.nelig
        if not clock_charge_test(&S.clock, S.cfg.workers, slots, nodes, c.resv):
            c.ex = EX_BUDGET
            return False
    j[0] = S.queue.entries[p].job
    k[0] = S.queue.entries[p].units
    d[0] = S.queue.entries[p].est
    if c.start_us0 >= 0:
        # slurm-sim clock: the job would start when the cycle reaches it, this late after the
        # cycle's now; it is planned so (it needs its units that much longer from now)
        d[0] += (c.start_us0 + S.clock.last_us) // 1000000 - c.now
    c.depth += 1
    return True


# ---- nodes with memory and GPUs (node_model.pxd)

cdef inline int node_plan_gain(State* S, const uint64_t* row, int64_t j, int64_t e) noexcept nogil:
    # running job j's resources come back at e: on each node of its units, its cores that are up,
    # and the memory and GPUs it holds there
    cdef NodeModel* M = &S.nm
    cdef int64_t k, n0, n = nm_job_nodes(M, row, S.W, S.nodes.down, S.nodes.ndown, j)
    cdef NodeLine* L
    for k in range(n):
        L = &M.line[M.jn_node[k]]
        n0 = L.n
        if nl_gain(L, e, M.jn_up[k], nm_job_mem(M, j, M.jn_all[k]), M.gpn[j]) != RC_OK:
            return RC_NO_MEMORY
        if L.n > n0 and nm_ev_append(M, e, M.jn_node[k]) != RC_OK:     # (a new point)
            return RC_NO_MEMORY
    return RC_OK


cdef inline int node_plan_unit_back(State* S, int64_t u, int64_t t) noexcept nogil:
    # a down unit comes back at t (any time: the plan is complete by then)
    cdef NodeLine* L = &S.nm.line[S.nm.node_of[u]]
    cdef int64_t p = nl_point(L, t), q
    if p < 0:
        return RC_NO_MEMORY
    for q in range(p, L.n):
        L.c[q] += 1
    return nm_add_time(&S.nm, t)


cdef inline int build_node_lines(State* S, int64_t now) noexcept nogil:
    # Each node's free cores, memory and GPUs from now on: what is free now, plus each running job's
    # resources at its planned end (start + estimate, never before now + 1, rounded up; as
    # build_profile), plus down units at their until (held by a running job: not before its end;
    # as build_profile_down). Candidate starts: now and those times.
    cdef NodeModel* M = &S.nm
    cdef Nodes* N = &S.nodes
    cdef NodeLine* L
    cdef int64_t i, r, j, e, w, u, W = S.W
    cdef uint64_t x
    cdef const uint64_t* row
    for i in range(M.nn):
        L = &M.line[i]
        if nl_room(L, 1) != RC_OK:
            return RC_NO_MEMORY
        L.n = 1
        L.t[0] = now
        L.c[0] = nm_range_count(N.free, M.first[i], M.first[i + 1])
        L.m[0] = M.free_mem[i]
        L.g[0] = M.free_gpu[i]
    if grow(<void**>&M.times, &M.times_cap, N.nrun + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    M.times[0] = now
    M.ntimes = 1
    M.nmf = 0                          # a fresh plan: no known misfit or start
    M.mf_next = 0
    M.nfs = 0
    M.fs_next = 0
    for r in range(N.nrun):
        e = planned_end(S, r, now)
        j = N.by_end[r].job
        if node_plan_gain(S, N.rows + <int64_t>S.jobs.row[j] * W, j, e) != RC_OK:
            return RC_NO_MEMORY
        if e != M.times[M.ntimes - 1]:
            M.times[M.ntimes] = e
            M.ntimes += 1
    if N.ndown == 0:
        return RC_OK
    for r in range(N.nrun if N.held_down > 0 else 0):
        j = N.by_end[r].job
        row = N.rows + <int64_t>S.jobs.row[j] * W
        for w in range(W):
            x = row[w] & N.down[w]
            while x:
                u = w * 64 + __builtin_ctzll(x)
                x &= x - 1
                if N.until[u] != INF and node_plan_unit_back(
                        S, u, max(release_time(S, N.until[u], now), planned_end(S, r, now))) != RC_OK:
                    return RC_NO_MEMORY
    for w in range(W):
        x = N.down[w]
        for r in range(N.nrun if N.held_down > 0 else 0):
            x &= ~(N.rows + <int64_t>S.jobs.row[N.by_end[r].job] * W)[w]
        while x:
            u = w * 64 + __builtin_ctzll(x)
            x &= x - 1
            if N.until[u] != INF and node_plan_unit_back(S, u, release_time(S, N.until[u], now)) != RC_OK:
                return RC_NO_MEMORY
    return RC_OK


cdef inline int build_node_plan(State* S, int64_t now) noexcept nogil:
    # the lines, and the plan's points in time order as they are made (the running jobs come back
    # in time order): a search walks them (nm_make_events sorts them instead where units down
    # come back, at any time, or a time is out of the events' range)
    cdef NodeModel* M = &S.nm
    M.nev = 0
    M.nevx = 0
    if build_node_lines(S, now) != RC_OK or nm_plan_ready(M) != RC_OK:
        return RC_NO_MEMORY
    M.ev_ok = S.nodes.ndown == 0 and M.times[M.ntimes - 1] < EV_T_MAX
    return RC_OK


cdef inline int build_plan(State* S, int64_t now) noexcept nogil:
    # the pass's plan of the future: per node (a node cluster) or per unit
    return build_node_plan(S, now) if S.nm.on else build_profile(S, now)


cdef inline int64_t pass_slots(State* S) noexcept nogil:
    # the size of the pass's plan (its record; the model clock's per-slot charge)
    if not S.ctx.built:
        return 0
    return S.nm.ntimes if S.nm.on else prof_live_slots(&S.prof)


cdef inline int64_t node_recheck(State* S, NodeModel* M, int64_t j, int64_t k, int64_t d, int64_t t, int64_t seen,
                                 bint now_only, bint choose, bint* changed, bint* searched) noexcept nogil:
    # A start t found for a job whose fit is monotone (nm_monotone) on a copy of the plan that had
    # applied the first `seen` log entries, with M.cpu the cores each node gave it there, brought up
    # to date on M, which holds every entry. The plan only loses resources within a pass, so the
    # earliest start on M is not before t (and there is none where the older copy had none). At t
    # each node gives what it gave, unless a newer entry holds that node during the window: those
    # nodes are asked again. If the cores still add up, t stands (with `choose`, Slurm's choice is
    # made on them: M.take); else the search goes on from t. Returns the start, or NO_START.
    cdef int64_t stop, e, w, u, i, f, last, total = 0, W = S.W, now = S.ctx.now
    cdef uint64_t x
    cdef const uint64_t* bits
    changed[0] = False
    searched[0] = False
    if t < 0 or (now_only and t != now):
        return NO_START
    stop = prof_round_up(&S.prof, t + d)
    for e in range(seen, S.log.n):
        if S.log.t[e] >= stop or prof_round_up(&S.prof, S.log.t[e] + S.log.d[e]) <= t:
            continue
        bits = S.log.bits + e * W
        last = -1
        for w in range(W):
            x = bits[w]
            while x:
                u = w * 64 + __builtin_ctzll(x)
                x &= x - 1
                i = M.node_of[u]
                if i != last:
                    last = i
                    if M.cpu[i] > 0:
                        f = nm_window_cpus(M, j, i, t, stop)
                        if f != M.cpu[i]:
                            M.cpu[i] = f
                            changed[0] = True
    if changed[0]:
        for i in range(M.nn):
            total += M.cpu[i]
        if total >= k and (not choose or nm_choose(M, k, M.minn[j], M.maxn[j])):
            return t
    elif not choose or nm_choose(M, k, M.minn[j], M.maxn[j]):
        return t
    searched[0] = True
    return nm_find_start(M, j, k, d, now, t, now_only, S.cfg.bf_window, S.cfg.bf_resolution)


cdef inline int64_t node_confirm(State* S, NodeModel* M, int64_t j, int64_t k, int64_t d, const Spec* spec,
                                 bint now_only) noexcept nogil:
    # the ordered commit's check of a speculation on a node cluster (node_recheck on the
    # committing copy, from the speculation's cores per node)
    cdef PassCtx* c = &S.ctx
    cdef bint changed, searched
    cdef int64_t t
    if spec.mode == SPEC_NOW and not now_only:
        # (not reached: reservations left only grow fewer within a pass)
        return nm_find_start(M, j, k, d, c.now, c.now, False, S.cfg.bf_window, S.cfg.bf_resolution)
    if spec.t >= 0:
        memcpy(M.cpu, spec.ncpu, M.nn * sizeof(int64_t))
    t = node_recheck(S, M, j, k, d, spec.t, spec.seen, now_only, True, &changed, &searched)
    if changed:
        c.conflicts += 1
    if searched:
        c.reeval += 1
    return t


cdef inline int64_t slurm_step(State* S, NodeModel* M, int64_t p, int64_t j, int64_t k, int64_t d) noexcept nogil:
    # node_step under Slurm's backfill (slurm_space.pxd): start the job now, reserve its nodes, or skip it
    cdef PassCtx* c = &S.ctx
    cdef int64_t t
    if not c.blocked and S.cfg.trigger == TR_EVENT:
        # (a pass at every event stands for Slurm's main scheduler too: its tests, up to the first job
        # that cannot start, reset the weights as select_nodes does)
        ss_main_test(&S.ss, M, &S.nodes, j, k)
    t = ss_job_test(&S.ss, M, &S.nodes, S.jobs.row, j, k, d, c.now, S.cfg.bf_window,
                    c.resv_left != 0 and not S.ss.lim.now_only)
    if t == SS_ERROR:
        return STEP_ERROR
    if t == c.now:
        nm_pick_units(M, S.nodes.free, S.prof.chosen, S.W)
        return p + 1 if commit_start(S, &S.prof, p, j, k, d, 0, False) == RC_OK else STEP_ERROR
    if not c.blocked:
        nm_note_head(M, k, S.nodes.nfree)
    if t > c.now:
        return p + 1 if note_reservation(S, j, t) == RC_OK else STEP_ERROR
    c.blocked = True
    return p + 1


cdef inline int64_t node_step(State* S, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil:
    # job_step on a node cluster: start the job at queue position p now on the nodes Slurm's choice
    # gives, reserve it where they are free throughout its estimate, or skip it. M: the plan decided
    # on (the state's own; in a parallel pass, the committing worker's copy, which every placement
    # joins and the commit log carries to the other copies)
    cdef PassCtx* c = &S.ctx
    cdef int64_t j, k, d, t, now = c.now, stop
    if mode != CM_EAGER and not c.in_phase2 and S.cfg.sjbf and c.resv_left == 0:
        c.phase2 = p
        return STEP_STOP
    if S.ss.lim.on and S.ss.on:        # Slurm's own backfill limits (bf_limits.pxd)
        t = bfl_step(S, p)
        if t != BFL_TEST:
            return p + 1 if t == BFL_SKIP else (STEP_ERROR if t == BFL_ERROR else STEP_STOP)
    if not begin_test(S, p, M.ntimes if c.built else 1, M, &j, &k, &d):
        return STEP_STOP
    if S.ss.on:
        return slurm_step(S, M, p, j, k, d)
    if not c.built:
        # until a job does not fit now there is no reservation: the nodes as they are decide
        if nm_fits_live(M, j, k, S.nodes.free):
            nm_pick_units(M, S.nodes.free, S.prof.chosen, S.W)
            if c.parallel:
                # (the copies' plans were built at the pass start: the start joins them)
                if nm_hold(M, j, now, prof_round_up(&S.prof, now + d)) != RC_OK:
                    return STEP_ERROR
                log_append(S, S.prof.chosen, j, k, now, d, False)
            return p + 1 if commit_start(S, &S.prof, p, j, k, d, 0, False) == RC_OK else STEP_ERROR
        nm_note_head(&S.nm, k, S.nodes.nfree)
        if not c.parallel and build_node_plan(S, now) != RC_OK:
            return STEP_ERROR
        c.built = True
    if spec != NULL and mode == CM_ORDERED and nm_monotone(M, j):
        t = node_confirm(S, M, j, k, d, spec, c.resv_left == 0)
    else:
        t = nm_find_start(M, j, k, d, now, now, c.resv_left == 0 and not S.cfg.resv_stop, S.cfg.bf_window,
                          S.cfg.bf_resolution)
        if spec != NULL:
            c.reeval += 1
            if t != spec.t:
                c.conflicts += 1
    if M.failed:
        M.failed = False
        return STEP_ERROR
    if c.resv_left == 0 and S.cfg.resv_stop and t > now:
        c.ex = EX_RESV_TABLE           # Slurm 17.02's table-size stop (as job_step)
        return STEP_STOP
    if t == now:
        nm_pick_units(M, S.nodes.free, S.prof.chosen, S.W)
        if nm_hold(M, j, now, prof_round_up(&S.prof, now + d)) != RC_OK:
            return STEP_ERROR
        if c.parallel:
            log_append(S, S.prof.chosen, j, k, now, d, False)
        return p + 1 if commit_start(S, &S.prof, p, j, k, d, 0, False) == RC_OK else STEP_ERROR
    if t > now and c.resv_left != 0:
        if nm_hold(M, j, t, prof_round_up(&S.prof, t + d)) != RC_OK:
            return STEP_ERROR
        if c.parallel:
            nm_take_bits(M, S.prof.cand, S.W)
            log_append(S, S.prof.cand, j, k, t, d, True)
        return p + 1 if note_reservation(S, j, t) == RC_OK else STEP_ERROR
    c.blocked = True
    return p + 1


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

cdef inline int64_t job_step(State* S, Prof* P, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil:
    # Test the job at queue position p on profile P: start it now, reserve it, or skip it, and count
    # it. Every full pass runs its jobs through here: the sequential pass and its SJBF phase
    # (CM_SEARCH), and the commits of the parallel pass (CM_ORDERED, CM_EAGER), which find the start
    # from their speculation `spec`. M: the node plan to decide on (a node cluster). Returns the next
    # queue position to test, STEP_STOP or STEP_ERROR.
    cdef PassCtx* c = &S.ctx
    cdef int64_t j, k, d, t, q, lim, c0, now = c.now
    cdef int32_t si = 0
    cdef bint overlap = False, proposal = False
    if S.nm.on:
        return node_step(S, M, p, mode, spec)
    if mode != CM_EAGER and not c.in_phase2:
        if S.cfg.sjbf and c.resv_left == 0:
            c.phase2 = p
            return STEP_STOP
        if c.resv_left == 0 and c.built and prof_cnt(P, 0) == 0 and c.start_us0 < 0 and not S.cfg.resv_stop:
            # nothing is free now and no reservation is left: every remaining job fails at once
            # (not under the slurm-sim clock: there, any test may be a yield point)
            c.ex = count_rest(S, S.queue.n - p, prof_live_slots(P), &c.depth)
            return STEP_STOP
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
    if S.ss.on and ss_reset(&S.ss, now, S.cfg.bf_window, S.cfg.bf_resolution) != RC_OK:
        return RC_NO_MEMORY
    return RC_OK


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
            and not S.cfg.resv_stop and not S.nm.on
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
        queue_compact(&S.queue, c.first_start)
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
    cdef int64_t t0 = pass_clock(S), now = t_us // 1000000, cost = 0, p, j, k, started = 0, depth = 0
    cdef int64_t queue = S.queue.n
    cdef int ex = EX_END
    if refresh_priorities(S, now) != RC_OK:
        return RC_NO_MEMORY
    S.decided.nstarted = 0
    S.decided.nreserved = 0
    for p in range(S.queue.n):
        if depth_limit >= 0 and depth >= depth_limit:
            ex = EX_MAX_JOB_TEST
            break
        if cost >= max_cost_us:
            ex = EX_BUDGET
            break
        j = S.queue.entries[p].job
        k = S.queue.entries[p].units
        depth += 1
        cost += cost_test_us
        if S.nm.on:
            if S.ss.on:
                ss_main_test(&S.ss, &S.nm, &S.nodes, j, k)      # (Slurm's node weights, as its test leaves them)
            if not nm_fits_live(&S.nm, j, k, S.nodes.free):
                nm_note_head(&S.nm, k, S.nodes.nfree)
                ex = EX_QUICK_BLOCKED
                break
            nm_pick_units(&S.nm, S.nodes.free, S.prof.chosen, S.W)
        else:
            if k > S.nodes.nfree:
                ex = EX_QUICK_BLOCKED
                break
            take_lowest_free(S, &S.prof, k)
        if job_start(S, j, (t_us + cost) // 1000000, S.prof.chosen) != RC_OK:
            return RC_NO_MEMORY
        S.jobs.how[j] = HOW_MAIN
        started += 1
        if append(&S.decided.started, &S.decided.nstarted, &S.decided.started_cap, j) != RC_OK:
            return RC_NO_MEMORY
    if started:
        # the started jobs are exactly the first `started` entries
        memmove(S.queue.entries, S.queue.entries + started, (S.queue.n - started) * sizeof(PendEntry))
        S.queue.n -= started
        S.resume_st.valid = False
    S.last.charged_us = cost
    cost_out[0] = cost
    return record_pass(S, now, PK_QUICK, queue, depth, started, 0, ex, pass_clock(S) - t0, 0)


cdef inline int quick_pass(State* S, int64_t now) noexcept nogil:
    # the interval trigger's main scheduler: no depth limit, no cost
    cdef int64_t cost
    return main_pass(S, now * 1000000, -1, INF, 0, &cost)
