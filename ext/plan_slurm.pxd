# The Slurm planner (header only): Slurm 22.05's backfill on the nodes of plan_nodes.pxd -- its
# will-run test on the nodes free over the job's window and whole-node reservations
# (slurm_space.pxd), with Slurm's node weights (its main scheduler's and submission tests reset
# them). Its table of operations is filled in planner.pxd.

from libc.stdint cimport int64_t, int32_t, uint64_t

from parallel cimport Spec
from state cimport State, PassCtx
from profile cimport Prof
from advance_resv cimport ar_seed_space
from slurm_space cimport (ss_reset, ss_main_test, ss_submit_weights, ss_give_backs_started, ss_reserve,
                          SS_ERROR)
from resv_inside cimport ri_group, ri_current, ri_view, ri_unview, ri_log
from slurm_try_later cimport ss_job_test
from node_model cimport NodeModel, nm_pick_units, nm_note_head
from nodes cimport nodes_occupy_hint
from plan_nodes cimport nodes_fits_now, nodes_main_skips
from part_records cimport pr_count, pr_range
from pass_steps cimport (CM_EAGER, STEP_STOP, STEP_ERROR, commit_start, note_reservation, begin_test,
                         passed_over)
from bf_step cimport bfl_step
from bf_limits cimport BFL_TEST, BFL_SKIP, BFL_ERROR, bfl_reserved
from pbf._codes cimport TR_EVENT
from pbf._codes cimport RC_OK, RC_NO_MEMORY, JS_PENDING


cdef inline int slurm_begin(State* S, int64_t now) noexcept nogil:
    # Slurm's per-cycle state (the nodes' reservations of this cycle) at a pass's start
    # (and the advance reservations as records of it)
    if ss_reset(&S.ss, now, S.cfg.bf_window, S.cfg.bf_resolution) != RC_OK:
        return RC_NO_MEMORY
    S.ar.lg_n = 0                      # (the cycle's reservations of jobs: none yet)
    return ar_seed_space(&S.ar, &S.ss, now) if S.ar.n else RC_OK


cdef inline bint slurm_take_now(State* S, int64_t j, int64_t k) noexcept nogil:
    # Slurm's main scheduler's test: the node weights as its test leaves them, then the nodes now (as
    # nodes_take_now: failed partitions, a job of several partitions tried in each)
    cdef NodeModel* M = &S.nm
    cdef uint64_t parts = M.jpart[j] if M.npart != NULL else 0, own
    cdef int64_t r, lo, hi, n = pr_count(&S.prec, j)
    cdef bint ok = False
    if nodes_main_skips(S, j):
        return False                   # (not tried: no select_nodes, no weights reset)
    if n <= 1:
        ss_main_test(&S.ss, M, &S.nodes, j, k)
        return nodes_fits_now(S, j, k, parts)
    own = M.jfeat[j]
    pr_range(&S.prec, j, S.main.rec, &lo, &hi)
    for r in range(lo, hi):
        if S.prec.part[r] & S.main.failed:
            continue
        M.jfeat[j] = S.prec.mask[r]
        ss_main_test(&S.ss, M, &S.nodes, j, k)
        ok = nodes_fits_now(S, j, k, parts)
        if ok:
            break
        S.main.failed |= S.prec.part[r]
    M.jfeat[j] = own
    return ok


cdef inline void slurm_queued(State* S, int64_t j) noexcept nogil:
    ss_submit_weights(&S.ss, &S.nm, j, S.jobs.units[j])     # (Slurm's submission test)


cdef inline int64_t slurm_step(State* S, NodeModel* M, int64_t p, int64_t j, int64_t k, int64_t d) noexcept nogil:
    # node_step under Slurm's backfill (slurm_space.pxd): start the job now, reserve its nodes, or skip it
    cdef PassCtx* c = &S.ctx
    cdef int64_t t, v, w = -1, res = S.ss.resolution
    cdef int32_t g = ri_group(&S.ar, j)
    cdef bint blocked = c.blocked
    if g:
        w = ri_current(&S.ar, g, c.now)
        if w < 0 or S.ar.start[w] > c.now:
            return p + 1               # (its reservation not begun, or over: job_test_resv, "reservation defer")
    if not c.blocked and S.cfg.trigger == TR_EVENT:
        # (a pass at every event stands for Slurm's main scheduler too: its tests, up to the first job
        # that cannot start, reset the weights as select_nodes does)
        ss_main_test(&S.ss, M, &S.nodes, j, k)
    if g:
        # (a job inside a reservation: the records without its reservation's windows, then the
        # cycle's, and its reservation on the cycle's records too)
        if ri_view(&S.ar, &S.ss, g, w, c.now, S.cfg.bf_window, S.cfg.bf_resolution) != RC_OK:
            return STEP_ERROR
        t = ss_job_test(&S.ss, M, &S.nodes, S.jobs.row, j, k, d, c.now, S.cfg.bf_window,
                        c.resv_left != 0 and not S.ss.lim.now_only, NULL, NULL)
        ri_unview(&S.ar, &S.ss, c.now)
        if t > c.now and ss_reserve(&S.ss, t // res * res, (t + d) // res * res) != RC_OK:
            return STEP_ERROR
    else:
        t = ss_job_test(&S.ss, M, &S.nodes, S.jobs.row, j, k, d, c.now, S.cfg.bf_window,
                        c.resv_left != 0 and not S.ss.lim.now_only, M.split, &S.ssh)
    if t == SS_ERROR:
        return STEP_ERROR
    if t > c.now and S.ar.jgrp != NULL and ri_log(&S.ar, t // res * res, (t + d) // res * res,
                                                   S.ss.tbits) != RC_OK:
        return STEP_ERROR
    if t == c.now:
        nm_pick_units(M, S.nodes.free, S.prof.chosen, S.W)
        nodes_occupy_hint(&S.nodes, S.prof.chosen, M.pick_lo, M.pick_hi)
        v = S.nodes.version
        if commit_start(S, &S.prof, p, j, k, d, 0, False) != RC_OK:
            return STEP_ERROR
        if ss_give_backs_started(&S.ss, M, &S.nodes, S.jobs.row, j, v, S.jobs.start[j] + S.jobs.est[j]) != RC_OK:
            return STEP_ERROR
        return p + 1
    if not c.blocked:
        nm_note_head(M, k, S.nodes.nfree)
    if t > c.now:
        if note_reservation(S, j, t) != RC_OK:
            return STEP_ERROR
        bfl_reserved(&S.ss.lim)
        if g:
            c.blocked = blocked        # (a job inside a reservation blocks no other: schedule()'s failed_resv)
        return p + 1
    if not g:
        c.blocked = True
    return p + 1

cdef inline int64_t slurm_node_step(State* S, Prof* P, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil:
    # The job test under Slurm's backfill (Planner.step): the SJBF phase's stop and the test's start
    # as on nodes, then slurm_step
    cdef PassCtx* c = &S.ctx
    cdef int64_t j, k, d, t, n, r, q, lo, hi, resv = c.resv
    cdef int32_t rec = S.queue.entries[p].rec
    cdef uint64_t own
    cdef bint now_only
    if mode != CM_EAGER and not c.in_phase2 and S.cfg.sjbf and c.resv_left == 0:
        c.phase2 = p
        return STEP_STOP
    if rec >= 0 and S.jobs.state[S.queue.entries[p].job] != JS_PENDING:
        return p + 1                   # (a split job started in another partition: no test, no limit counted)
    j = S.queue.entries[p].job
    n = pr_count(&S.prec, j)
    if n <= 1:
        if S.ss.lim.on:                # Slurm's own backfill limits (bf_limits.pxd)
            t = bfl_step(S, p, M.jpart[j] if M.npart != NULL else 0)
            if t != BFL_TEST:
                return p + 1 if t == BFL_SKIP else (STEP_ERROR if t == BFL_ERROR else STEP_STOP)
        if passed_over(S, j):
            return p + 1               # (before the test: not counted, as Slurm counts only will-run tests)
        if not begin_test(S, p, M.ntimes if c.built else 1, M, &j, &k, &d):
            return STEP_STOP
        return slurm_step(S, M, p, j, k, d)
    # a job of several partitions: a test a partition until one starts it (part_records.pxd), each
    # record through the backfill limits in its own partition, as Slurm's queue record of it
    own = M.jfeat[j]
    q = p + 1
    pr_range(&S.prec, j, rec, &lo, &hi)
    for r in range(lo, hi):
        if S.ss.lim.on:
            t = bfl_step(S, p, S.prec.part[r])
            if t == BFL_SKIP:
                continue
            if t != BFL_TEST:
                q = STEP_ERROR if t == BFL_ERROR else STEP_STOP
                break
        if passed_over(S, j):
            break                      # (licenses or a QOS limit: no record of it is tested)
        if not begin_test(S, p, M.ntimes if c.built else 1, M, &j, &k, &d):
            q = STEP_STOP
            break
        M.jfeat[j] = S.prec.mask[r]
        now_only = S.ss.lim.now_only
        if S.ss.lim.one_resv and (c.resv > resv or (rec >= 0 and S.prec.resv_in[j] == S.totals.count)):
            S.ss.lim.now_only = True   # (bf_one_resv_per_job: an earlier record has reserved)
        q = slurm_step(S, M, p, j, k, d)
        S.ss.lim.now_only = now_only
        if rec >= 0 and c.resv > resv:
            S.prec.resv_in[j] = S.totals.count
        if q < 0 or S.queue.entries[p].job < 0:
            break
    M.jfeat[j] = own
    return q
