# Slurm's backfill job test (header only): _attempt_backfill's TRY_LATER loop -- a job's will-run
# test from now, then from each later start the cycle's reservations leave open, until one holds the
# job -- with the next later start tested ahead on a helper thread.
#
# On a deep queue a job tries tens of later starts (84 a job on ARCHER2's 5,860 nodes with 10,000
# queued), each a will-run test over every node. A later start's test reads only the cycle's
# reservations, the running jobs and the nodes as they are, which no test changes, and writes only
# its own scratch: so the helper (NodeSplit, node_model.pxd) tests start k + 1 on a scratch of its
# own (SlurmShadow) while this thread tests start k, and the answers are taken in order. An answer
# is the same on either thread, the first start that holds the job wins: the decisions are those of
# one thread. A test whose answer is no longer needed (the job started or reserved at the start
# before) stops at its next batch of give-backs. The tests of a GPU job (whose choice may mark the
# node weights, cons_tres) and those under Slurm 23.11's per-test weights are not offered: they
# depend on each other.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from sync cimport pbf_load, pbf_store, pbf_cas, pbf_pause
from ticks cimport now_ticks
from nodes cimport Nodes
from node_model cimport NodeModel, NodeSplit, nm_take_clear, nm_take_put
from slurm_space cimport (SlurmSpace, SS_SKIP, SS_ERROR, SS_MARKS_PER_TEST, ss_later_at, ss_offer_at, ss_test_at,
                          ss_now_ready,
                          ss_give_backs, ss_usable_bits, ss_take_bits, ss_overlaps, ss_reserve_words, ss_reset_weights,
                          _ss_choose, _ss_hist_ready)
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct SlurmShadow:
    SlurmSpace X               # the helper's backfill space: the cycle's records, the give-back lists and
    NodeModel M                # the caches shared (read only during a test), its own scratch; and its
                               # node model: the cluster and requests shared, its own choice's scratch
    int64_t nn, NW, vmax       # what its buffers were made for (nn 0: none yet)
    uint64_t* offer
    uint64_t* base
    int64_t* fc
    int64_t* fm
    int64_t* fg
    int32_t* cand
    int64_t* pc
    int64_t* dstamp
    int32_t* dirty
    int64_t* hist
    int64_t stamp
    int64_t* istamp
    int64_t itest
    uint64_t* tch
    int64_t* cpu
    int64_t* take
    int32_t* tlist             # (the helper's take: what nm_take_clear needs of it between tests)
    int64_t ntlist
    bint tdirty
    int64_t* avail
    int64_t* cut
    int64_t* r_cpus
    int64_t* r_nodes
    int64_t* r_first
    int64_t* r_last
    int64_t* r_w
    const Nodes* N             # the task: the nodes as they are, each job's row ...
    const int32_t* rows_of
    int64_t j, cores, d, now, start_res     # ... the job and the later start to test ...
    int64_t later, start       # ... and the answer (ss_offer_at's next later start; ss_test_at's start)
    int64_t cancel             # 1: the answer is no longer needed (the test may stop)


cdef inline void sh_free(SlurmShadow* H) noexcept nogil:
    free(H.offer); free(H.base); free(H.fc); free(H.fm); free(H.fg); free(H.cand); free(H.pc)
    free(H.dstamp); free(H.dirty); free(H.hist); free(H.istamp); free(H.tch); free(H.cpu); free(H.take); free(H.tlist); free(H.avail); free(H.cut)
    free(H.r_cpus); free(H.r_nodes); free(H.r_first); free(H.r_last); free(H.r_w)
    H.offer = NULL; H.base = NULL; H.fc = NULL; H.fm = NULL; H.fg = NULL; H.cand = NULL; H.pc = NULL
    H.dstamp = NULL; H.dirty = NULL; H.hist = NULL; H.istamp = NULL; H.tch = NULL; H.cpu = NULL; H.take = NULL; H.tlist = NULL; H.avail = NULL; H.cut = NULL
    H.r_cpus = NULL; H.r_nodes = NULL; H.r_first = NULL; H.r_last = NULL; H.r_w = NULL
    H.nn = 0


cdef inline int _sh_ready(SlurmShadow* H, const SlurmSpace* X) noexcept nogil:
    # buffers for X's nodes (made once; again if the cluster changed)
    cdef int64_t i, nn = X.nn
    if H.nn == nn and H.vmax == X.vmax:
        return RC_OK
    sh_free(H)
    H.offer = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    H.base = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    H.fc = <int64_t*>malloc(nn * sizeof(int64_t))
    H.fm = <int64_t*>malloc(nn * sizeof(int64_t))
    H.fg = <int64_t*>malloc(nn * sizeof(int64_t))
    H.cand = <int32_t*>malloc(nn * sizeof(int32_t))
    H.pc = <int64_t*>malloc(nn * sizeof(int64_t))
    H.dstamp = <int64_t*>malloc(nn * sizeof(int64_t))
    H.dirty = <int32_t*>malloc(nn * sizeof(int32_t))
    H.istamp = <int64_t*>malloc(nn * sizeof(int64_t))
    H.tch = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    H.hist = <int64_t*>malloc((X.vmax + 1) * sizeof(int64_t))
    H.cpu = <int64_t*>malloc(nn * sizeof(int64_t))
    H.take = <int64_t*>malloc(nn * sizeof(int64_t))
    H.tlist = <int32_t*>malloc(nn * sizeof(int32_t))
    H.ntlist = 0
    H.tdirty = True
    H.avail = <int64_t*>malloc(nn * sizeof(int64_t))
    H.cut = <int64_t*>malloc(nn * sizeof(int64_t))
    H.r_cpus = <int64_t*>malloc(nn * sizeof(int64_t))
    H.r_nodes = <int64_t*>malloc(nn * sizeof(int64_t))
    H.r_first = <int64_t*>malloc(nn * sizeof(int64_t))
    H.r_last = <int64_t*>malloc(nn * sizeof(int64_t))
    H.r_w = <int64_t*>malloc(nn * sizeof(int64_t))
    if (H.offer == NULL or H.base == NULL or H.fc == NULL or H.fm == NULL or H.fg == NULL or H.pc == NULL
            or H.cand == NULL or H.dstamp == NULL or H.dirty == NULL or H.hist == NULL or H.cpu == NULL
            or H.take == NULL or H.tlist == NULL or H.avail == NULL or H.cut == NULL or H.r_cpus == NULL or H.r_nodes == NULL
            or H.r_first == NULL or H.r_last == NULL or H.r_w == NULL or H.istamp == NULL
            or H.tch == NULL):
        sh_free(H)
        return RC_NO_MEMORY
    for i in range(nn):
        H.dstamp[i] = -1
        H.istamp[i] = -1
    H.stamp = 0
    H.itest = 0
    H.nn = nn
    H.NW = X.NW
    H.vmax = X.vmax
    return RC_OK


cdef inline void _sh_task(SlurmShadow* H, const SlurmSpace* X, const NodeModel* M, const Nodes* N,
                          const int32_t* rows_of, int64_t j, int64_t cores, int64_t d, int64_t now,
                          int64_t start_res) noexcept nogil:
    # the helper's views: X's and M's state as they are now, its own scratch in place of theirs
    H.X = X[0]
    H.X.offer = H.offer
    H.X.base = H.base
    H.X.fc = H.fc
    H.X.fm = H.fm
    H.X.fg = H.fg
    H.X.cand = H.cand
    H.X.pc = H.pc
    H.X.dstamp = H.dstamp
    H.X.dirty = H.dirty
    H.X.hist = H.hist
    H.X.stamp = H.stamp
    H.X.istamp = H.istamp
    H.X.tch = H.tch
    H.X.itest = H.itest
    H.X.tbits = NULL                   # (a test does not choose for a reservation)
    H.X.cancel = &H.cancel
    H.cancel = 0
    H.M = M[0]
    H.M.cpu = H.cpu
    H.M.take = H.take
    H.M.tlist = H.tlist
    H.M.ntlist = H.ntlist
    H.M.tdirty = H.tdirty
    H.M.avail = H.avail
    H.M.cut = H.cut
    H.M.r_cpus = H.r_cpus
    H.M.r_nodes = H.r_nodes
    H.M.r_first = H.r_first
    H.M.r_last = H.r_last
    H.M.r_w = H.r_w
    H.M.split = NULL
    H.N = N
    H.rows_of = rows_of
    H.j = j
    H.cores = cores
    H.d = d
    H.now = now
    H.start_res = start_res


cdef inline void sh_work(void* arg) noexcept nogil:
    # NodeSplit.work on the helper thread: the posted later start's test
    cdef NodeSplit* P = <NodeSplit*>arg
    cdef SlurmShadow* H = <SlurmShadow*>P.task
    cdef int64_t t0 = now_ticks()
    H.later = ss_offer_at(&H.X, H.d, H.now, H.start_res)
    H.start = ss_test_at(&H.X, &H.M, H.N, H.rows_of, H.j, H.cores, H.now, H.start_res, True, H.later)
    P.tk_help += now_ticks() - t0
    P.n_help += 1
    H.ntlist = H.M.ntlist
    H.tdirty = H.M.tdirty
    H.stamp = H.X.stamp
    H.itest = H.X.itest


cdef inline void _sh_take_over(NodeModel* M, const SlurmShadow* H) noexcept nogil:
    # M.take = the helper's choice (H.take): only the nodes it gave cores, unless its take may hold anything
    cdef int64_t x, i
    if H.tdirty:
        memcpy(M.take, H.take, M.nn * sizeof(int64_t))
        M.tdirty = True
        M.ntlist = 0
        return
    nm_take_clear(M)
    for x in range(H.ntlist):
        i = H.tlist[x]
        nm_take_put(M, i, H.take[i])


cdef inline bint _sh_post(NodeSplit* P, SlurmShadow* H, SlurmSpace* X, NodeModel* M, const Nodes* N,
                          const int32_t* rows_of, int64_t j, int64_t cores, int64_t d, int64_t now,
                          int64_t start_res) noexcept nogil:
    # offer the test of the later start start_res to the helper (False: not offered, out of memory:
    # this thread tests it when it comes to it). What a test would make on first use and then share
    # is made here first: the nodes now, the give-back lists, the job's usable nodes.
    if _ss_hist_ready(X, M) != RC_OK or ss_give_backs(X, M, N, rows_of) != RC_OK or _sh_ready(H, X) != RC_OK:
        return False
    ss_now_ready(X, M, N, j, True)
    ss_usable_bits(X, M, j)
    if pbf_load(&P.slot) == -2:
        P.start(P.start_arg)            # (the tests go on without waiting for it)
    _sh_task(H, X, M, N, rows_of, j, cores, d, now, start_res)
    P.work = sh_work
    P.task = <void*>H
    pbf_store(&P.posted, P.posted + 1)
    P.tasks += 1
    return True


cdef inline bint _sh_claim(NodeSplit* P, SlurmShadow* H, bint needed) noexcept nogil:
    # take the posted test back before the helper starts it (True), or wait for the helper's answer
    # (False; not needed: the helper is told it may stop). In the tests' mode where every part is the
    # helper's, always wait. (A wait is not a stall here: a later start's test may well take longer
    # than this thread's own; a helper without a CPU shows in the trials.)
    cdef int64_t s = P.posted
    if P.wait:
        while pbf_load(&P.claimed) != s:
            if pbf_load(&P.slot) == -2:
                P.start(P.start_arg)    # (the helper had left, idle)
            pbf_pause()
    elif pbf_cas(&P.claimed, s - 1, s):
        return True
    P.helped += 1
    if not needed:
        pbf_store(&H.cancel, 1)
    cdef int64_t t0 = now_ticks()
    while pbf_load(&P.finished) != s:
        pbf_pause()
    if needed:
        P.tk_wait += now_ticks() - t0
        P.n_wait += 1
    else:
        P.tk_wait_unneeded += now_ticks() - t0
        P.n_wait_unneeded += 1
    return False


cdef inline int64_t ss_job_test(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of, int64_t j,
                                int64_t cores, int64_t d, int64_t now, int64_t window, bint reserve,
                                NodeSplit* P, SlurmShadow* H) noexcept nogil:
    # One job's backfill test (_attempt_backfill): now (start it now on M.take), a later start (its
    # nodes are reserved in X), SS_SKIP, or SS_ERROR. d: its limit; window: bf_window (0: unlimited);
    # reserve False: only a start now counts. P: a helper thread to test later starts ahead (NULL: none).
    cdef int64_t start_res, later = now, start, s, e, ahead = -1, t0, t1 = 0
    cdef const int64_t* took
    cdef bint share = (P != NULL and H != NULL and reserve and (M.gpn[j] & M.cnt_g0) <= 0 and X.marks != SS_MARKS_PER_TEST
                       and M.nn >= P.min_nodes)
    cdef int64_t tj = now_ticks() if share else 0
    while True:
        start_res = later
        # the start offered to the helper: its answer, unless this thread takes the test back (or
        # another start: the answer is not needed, and the test is taken back or waited for)
        if ahead >= 0 and not _sh_claim(P, H, ahead == start_res) and ahead == start_res:
            later = H.later
            start = H.start
            took = H.take              # (read, not copied: most answers lead to the next later start)
            ahead = -1
        else:
            took = M.take
            ahead = -1
            if share:                  # (the next later start first, so that both threads test a whole start)
                t0 = now_ticks()
                later = ss_later_at(X, d, now, start_res)
                if later >= 0 and _sh_post(P, H, X, M, N, rows_of, j, cores, d, now, later):
                    ahead = later
                t1 = now_ticks()
                P.tk_post += t1 - t0
            later = ss_offer_at(X, d, now, start_res)
            start = ss_test_at(X, M, N, rows_of, j, cores, now, start_res, reserve, later)
            if ahead >= 0:
                P.tk_own += now_ticks() - t1
                P.n_own += 1
        if start == SS_ERROR:
            break
        if start < 0:
            if later >= 0 and reserve:
                continue
            start = SS_SKIP
            break
        if start < start_res:
            start = start_res
        if start <= now:
            if ahead >= 0:             # (the helper's test reads the weights this resets)
                _sh_claim(P, H, False)
                ahead = -1
            # _start_job: select_nodes on the offered nodes, their weights reset, as they are now
            ss_reset_weights(X, M, j, True)
            start = now if _ss_choose(X, M, j, cores, False) else SS_SKIP
            break
        if not reserve:
            start = SS_SKIP
            break
        if later >= 0 and start > later:
            continue
        s = start // X.resolution * X.resolution
        e = (start + d) // X.resolution * X.resolution
        if window > 0 and start > now + window:
            start = SS_SKIP
            break
        if took != M.take:             # (the helper's choice becomes this thread's: the job's nodes)
            t0 = now_ticks()
            _sh_take_over(M, H)
            P.tk_take += now_ticks() - t0
            P.n_take += 1
            M.take_among = NULL
            M.ntake_among = 0
            took = M.take
        if M.tdirty:
            ss_take_bits(X, M.take, M.take_among, M.ntake_among)
        else:                          # (the nodes the choice gave cores: a few, of 160,000)
            ss_take_bits(X, M.take, M.tlist, M.ntlist)
        if ss_overlaps(X, s, e):
            if start <= start_res:
                start = SS_SKIP
                break
            later = start
            continue
        if ahead >= 0:                 # (the helper reads the records this changes)
            _sh_claim(P, H, False)
            ahead = -1
        if ss_reserve_words(X, s, e, X.tw, X.ntw) != RC_OK:
            start = SS_ERROR
        break
    if ahead >= 0:
        _sh_claim(P, H, False)
    if share:
        P.tk_jobs += now_ticks() - tj
        P.n_jobs += 1
    return start
