# The nodes planner (header only): nodes with cores, memory, GPUs and features (node_model.pxd),
# planned as a line of each node's free resources over time; a job starts on the nodes cons_tres's
# best fit chooses and reserves its exact earliest start. Its table of operations is filled in
# planner.pxd.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.string cimport memcpy

from memory cimport INF, grow
from nodes cimport Nodes, nodes_occupy_hint
from profile cimport Prof, prof_round_up
from parallel cimport Spec, SPEC_NOW
from state cimport State, PassCtx
from node_model cimport (NodeModel, NodeLine, nl_room, nl_gain, nl_point, nm_add_time, nm_range_count, nm_job_mem,
                         nm_job_nodes, nm_fits_live, nm_pick_units, nm_find_start, nm_hold, nm_plan_ready, nm_note_head,
                         nm_choose, nm_window_cpus, nm_monotone, nm_take_bits, nm_ev_append, nm_never_fits, nm_use,
                         EV_T_MAX)
from advance_resv cimport ar_free_units, ar_hold_lines
from resv_inside cimport ar_job_units, ri_group, ri_find, ri_hold
from part_records cimport pr_count, pr_range, pr_parts
from pass_steps cimport (CM_EAGER, CM_ORDERED, STEP_STOP, STEP_ERROR, planned_end, release_time, log_append,
                         commit_start, note_reservation, begin_test, passed_over)
from pbf._codes cimport EX_RESV_TABLE
from pbf._codes cimport RC_OK, RC_NO_MEMORY, NO_START, JS_PENDING

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


# ---- the plan

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
    if S.ar.n > 0 and ar_hold_lines(&S.ar, M, now) != RC_OK:
        return RC_NO_MEMORY
    M.ev_ok = S.nodes.ndown == 0 and S.ar.n == 0 and M.times[M.ntimes - 1] < EV_T_MAX
    return RC_OK

cdef inline int64_t nodes_size(State* S) noexcept nogil:
    # the plan's distinct times (Planner.size)
    return S.nm.ntimes


cdef inline bint nodes_main_skips(State* S, int64_t j) noexcept nogil:
    # the main scheduler does not try job j: every partition of it has failed in this pass (S.main)
    cdef uint64_t parts = S.nm.jpart[j] if S.nm.npart != NULL else 0
    cdef int64_t lo, hi
    if S.main.rec >= 0:               # (an entry of a split job: its tier's partitions)
        pr_range(&S.prec, j, S.main.rec, &lo, &hi)
        parts = pr_parts(&S.prec, lo, hi)
    S.main.job_parts = parts
    S.main.all_parts = S.nm.pall
    S.main.skip = parts != 0 and (parts & ~S.main.failed) == 0
    return S.main.skip


cdef inline bint nodes_fits_now(State* S, int64_t j, int64_t k, uint64_t parts) noexcept nogil:
    # the main scheduler's test of job j on the nodes as they are now, but for those of the failed
    # partitions (and of the advance reservations it would run into); M.take: where
    cdef NodeModel* M = &S.nm
    cdef uint64_t* free_units = ar_job_units(&S.ar, j, S.nodes.free, S.ar.now, S.ar.d) if S.ar.n else S.nodes.free
    if free_units == NULL or not nm_fits_live(M, j, k, free_units, S.main.failed if parts else 0):
        nm_note_head(M, k, S.nodes.nfree)
        return False
    nm_pick_units(M, S.nodes.free, S.prof.chosen, S.W)
    return True


cdef inline bint nodes_take_now(State* S, int64_t j, int64_t k) noexcept nogil:
    # Slurm's main scheduler on nodes (Planner.take_now): the nodes as they are now decide. With
    # partitions, a job that cannot start fails its partitions for the rest of the pass: their jobs are
    # not tried and no later job gets their nodes, and the pass goes on while a partition has not failed
    # (job_scheduler.c _schedule: failed_parts, avail_node_bitmap). A job of several partitions is tried
    # in each (part_records.pxd), the partitions failed so far left out; each record that cannot start
    # fails its partition.
    cdef NodeModel* M = &S.nm
    cdef uint64_t parts = M.jpart[j] if M.npart != NULL else 0, own
    cdef int64_t r, lo, hi, n = pr_count(&S.prec, j)
    cdef bint ok = False
    if nodes_main_skips(S, j):
        return False
    if n <= 1:
        return nodes_fits_now(S, j, k, parts)
    own = M.jfeat[j]
    pr_range(&S.prec, j, S.main.rec, &lo, &hi)
    for r in range(lo, hi):
        if S.prec.part[r] & S.main.failed:
            continue
        M.jfeat[j] = S.prec.mask[r]
        ok = nodes_fits_now(S, j, k, parts)
        if ok:
            break
        S.main.failed |= S.prec.part[r]
    M.jfeat[j] = own
    return ok


cdef inline bint nodes_never_fits(State* S, int64_t j) noexcept nogil:
    # (a job of several partitions: no partition of its can ever hold it)
    cdef NodeModel* M = &S.nm
    cdef int64_t r, n = pr_count(&S.prec, j)
    cdef uint64_t own
    cdef bint never = True
    if n <= 1:
        return nm_never_fits(M, j, S.jobs.units[j])
    own = M.jfeat[j]
    for r in range(S.prec.at[j], S.prec.at[j] + n):
        M.jfeat[j] = S.prec.mask[r]
        if not nm_never_fits(M, j, S.jobs.units[j]):
            never = False
            break
    M.jfeat[j] = own
    return never


cdef inline void nodes_use(State* S, int64_t j, const uint64_t* units, int64_t sign) noexcept nogil:
    nm_use(&S.nm, units, S.W, j, sign)


cdef inline int nodes_begin(State* S, int64_t now) noexcept nogil:
    return RC_OK


# ---- the test

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

cdef inline int64_t nodes_test(State* S, NodeModel* M, int64_t p, int64_t j, int64_t k, int64_t d, const Spec* spec,
                               int mode) noexcept nogil:
    # nodes_step's test of job j (its units k, its time d) at queue position p
    cdef PassCtx* c = &S.ctx
    cdef int64_t t, now = c.now
    cdef bint inside = S.ar.n > 0 and ri_group(&S.ar, j) != 0
    cdef uint64_t* free_units
    if not c.built:
        # until a job does not fit now there is no reservation: the nodes as they are decide
        free_units = ar_job_units(&S.ar, j, S.nodes.free, now, d) if S.ar.n else S.nodes.free
        if free_units != NULL and nm_fits_live(M, j, k, free_units, 0):
            nm_pick_units(M, S.nodes.free, S.prof.chosen, S.W)
            if c.parallel:
                # (the copies' plans were built at the pass start: the start joins them)
                if nm_hold(M, j, now, prof_round_up(&S.prof, now + d)) != RC_OK:
                    return STEP_ERROR
                log_append(S, S.prof.chosen, j, k, now, d, False)
            nodes_occupy_hint(&S.nodes, S.prof.chosen, M.pick_lo, M.pick_hi)
            return p + 1 if commit_start(S, &S.prof, p, j, k, d, 0, False) == RC_OK else STEP_ERROR
        nm_note_head(&S.nm, k, S.nodes.nfree)
        if not c.parallel and build_node_plan(S, now) != RC_OK:
            return STEP_ERROR
        c.built = True
    if inside:                         # (a job inside a reservation: resv_inside.pxd)
        t = ri_find(&S.ar, M, j, k, d, now, c.resv_left == 0 and not S.cfg.resv_stop, S.cfg.bf_window,
                    S.cfg.bf_resolution)
    elif spec != NULL and mode == CM_ORDERED and nm_monotone(M, j):
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
        if (ri_hold(&S.ar, M, j, now, prof_round_up(&S.prof, now + d), now) if inside
                else nm_hold(M, j, now, prof_round_up(&S.prof, now + d))) != RC_OK:
            return STEP_ERROR
        if c.parallel:
            log_append(S, S.prof.chosen, j, k, now, d, False)
        nodes_occupy_hint(&S.nodes, S.prof.chosen, M.pick_lo, M.pick_hi)
        return p + 1 if commit_start(S, &S.prof, p, j, k, d, 0, False) == RC_OK else STEP_ERROR
    if t > now and c.resv_left != 0:
        if (ri_hold(&S.ar, M, j, t, prof_round_up(&S.prof, t + d), now) if inside
                else nm_hold(M, j, t, prof_round_up(&S.prof, t + d))) != RC_OK:
            return STEP_ERROR
        if c.parallel:
            nm_take_bits(M, S.prof.cand, S.W)
            log_append(S, S.prof.cand, j, k, t, d, True)
        return p + 1 if note_reservation(S, j, t) == RC_OK else STEP_ERROR
    c.blocked = True
    return p + 1


cdef inline int64_t nodes_step(State* S, Prof* P, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil:
    # The job test on nodes (Planner.step): start the job at queue position p now on the nodes
    # Slurm's choice gives, reserve it where they are free throughout its estimate, or skip it. M:
    # the plan decided on (the state's own; in a parallel pass, the committing worker's copy, which
    # every placement joins and the commit log carries to the other copies). A job of several
    # partitions: a test a partition (part_records.pxd) until one starts it.
    cdef PassCtx* c = &S.ctx
    cdef int64_t j, k, d, r, n, q, lo, hi
    cdef int32_t rec = S.queue.entries[p].rec
    cdef uint64_t own
    if mode != CM_EAGER and not c.in_phase2 and S.cfg.sjbf and c.resv_left == 0:
        c.phase2 = p
        return STEP_STOP
    if rec >= 0 and S.jobs.state[S.queue.entries[p].job] != JS_PENDING:
        return p + 1                   # (a split job started in another partition: no test)
    if passed_over(S, S.queue.entries[p].job):
        return p + 1                   # (before the test: not counted, as Slurm counts only will-run tests)
    if not begin_test(S, p, M.ntimes if c.built else 1, M, &j, &k, &d):
        return STEP_STOP
    n = pr_count(&S.prec, j)
    if n <= 1:
        return nodes_test(S, M, p, j, k, d, spec, mode)
    own = M.jfeat[j]
    q = p + 1
    pr_range(&S.prec, j, rec, &lo, &hi)
    for r in range(lo, hi):
        if r > lo and not begin_test(S, p, M.ntimes if c.built else 1, M, &j, &k, &d):
            q = STEP_STOP              # (each record is a test: the limit may fall between them)
            break
        M.jfeat[j] = S.prec.mask[r]
        q = nodes_test(S, M, p, j, k, d, NULL, mode)     # (a speculation was made on the job's own features)
        if q < 0 or S.queue.entries[p].job < 0:
            break                      # (an error, the pass's end, or the job started)
    M.jfeat[j] = own
    return q
