# Slurm's backfill on nodes (header only): the cycle's map of whole-node reservations (Slurm's
# node_space, a linked list of time records as in src/plugins/sched/backfill/backfill.c) and the
# select plugin's will-run test (_will_run_test, src/plugins/select/cons_common/job_test.c), Slurm
# 22.05. A job's test (_attempt_backfill's TRY_LATER loop) offers the nodes no reservation holds over
# its window to the will-run test, which plans from the running jobs alone: it gives back their
# resources in batches of ends within a window of 30 s that doubles, and starts the job at the last
# end of the first batch after which it fits. The oracle is pbf/reference/slurm_backfill_ref.py; its
# docstring has the rules.

from libc.stdint cimport uint64_t, uint8_t, int64_t, int32_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memcpy, memmove

from sync cimport pbf_load
from nodes cimport Nodes, nodes_by_end_find
from counts cimport cnt_fits
from node_model cimport NodeModel, nm_node_cpus, nm_choose_among, nm_range_count, nm_job_mem, nm_job_nodes
from bf_limits cimport BfLimits, bfl_free
from slurm_bound cimport SsBound, sb_alloc, sb_free, sb_make, sb_cannot
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil
    int __builtin_clzll(unsigned long long x) nogil

cdef enum:
    SS_WINDOW = 30                 # the will-run test's first window (s), fixed in Slurm
    SS_KILL_WAIT = 30              # Slurm's default KillWait: a job past its end is guessed to end this later
    SS_BATCH_CHECK = 200           # removals before Slurm checks its wall-time limit (and skips that test)
    SS_SKIP = -1                   # ss_job_test: no start now, no reservation
    SS_ERROR = -2                  # ... out of memory

cdef enum:                         # how a GPU job's tests mark the nodes' weights, by Slurm version and plugin
    SS_MARKS_CARRY = 0             # cons_tres of Slurm 20.11 and 22.05: a mark stays until a start attempt
    SS_MARKS_NONE = 1              # cons_res: no marks
    SS_MARKS_PER_TEST = 2          # cons_tres of Slurm 23.11: each will-run test resets its offered nodes first


ctypedef struct SlurmSpace:
    bint on                        # a node cluster's passes use Slurm's backfill (else pbf's exact plan)
    int64_t nn, NW                 # nodes, and words of a node bitmap
    int64_t n, cap                 # records made this cycle (record 0 is the head), room
    int64_t* b                     # record r holds from b[r] ...
    int64_t* e                     # ... to e[r]
    int64_t* nxt                   # the next record in time (0: the last)
    uint64_t* avail                # NW words a record: the nodes no reservation holds then
    int64_t resolution
    uint64_t* offer                # (scratch, NW words each) the nodes offered to a test ...
    uint64_t* base                 # ... the usable nodes ...
    int64_t* fc                    # ... and the will-run test's future free cores, memory, GPUs
    int64_t* fm
    int64_t* fg
    int32_t* cand                  # (scratch) the offered nodes that give a choice's job a core, ascending
    int64_t* sw                    # each node's scheduling weight's low byte (NodeModel.wt points here):
                                   # 0xff, less the GPUs a GPU job's test would use there, until a start
                                   # attempt resets it (cons_tres can_job_run_on_node, _sync_node_weight)
    BfLimits lim                   # Slurm's own backfill limits (bf_limits.pxd)
    # the advance reservations (advance_resv.pxd; set at each cycle's start, xn 0: none): window k holds
    # the nodes xbits[k * NW ...] from xs[k] to xe[k]; job_test_resv leaves them out of a job's nodes
    # where they overlap its [start, end), whether or not the cycle's records reach that far
    int64_t xn
    const int64_t* xs
    const int64_t* xe
    const uint64_t* xbits
    # a job inside a reservation (resv_inside.pxd; in_bits NULL: none): a start tried outside
    # [in_s, in_e) is none ("reservation defer"), and only the nodes in_bits are offered
    int64_t in_s, in_e
    const uint64_t* in_bits
    int marks                      # SS_MARKS_*: the node weights' rule of the Slurm version and select plugin
    int64_t phase                  # the replay's second 0 on Slurm's clock (Unix time), modulo SS_WINDOW: the
                                   # will-run test aligns its windows on multiples of SS_WINDOW of Unix time
    int64_t marked                 # nodes whose weight is not 0xff (none: a reset changes nothing)
    int64_t* cancel                # (a helper thread's test: *cancel set, its answer is not needed; NULL: none)
    # what the will-run test gives back, the running jobs in end order: the same for every test of a
    # pass until a job starts, so read from their bitmaps once (made for Nodes.version gb_version of
    # this pass; -1: not made). Running job r (by_end order) has entries gb_off[r] .. gb_off[r + 1] - 1:
    # a node, its cores there that are up, its memory and GPUs there.
    int64_t gb_version
    int64_t gb_gen                 # (counts the lists made or changed: never the same twice, unlike versions)
    int64_t* gb_off
    int64_t gb_off_cap
    int32_t* gb_node
    int64_t* gb_up
    int64_t* gb_mem
    int64_t* gb_gpu
    int32_t* gb_run                # entries e .. e + gb_run[e] - 1: the same job on consecutive nodes
    int64_t gb_cap
    int64_t* gb_job                # running job r's index, by_end key (end) and row stamp (Nodes.row_stamp)
    int64_t* gb_end                # when its entries were read: where all three are the same at the next
    int64_t* gb_stamp              # making, its entries are copied from the lists before, not read again
    int64_t gb_n                   # running jobs in the lists (-1: none to copy from)
    bint gb_down                   # (units were down when they were made: gb_up is not all of each node)
    # the lists before (gb2_*, as gb_*): the next making reads them and writes gb_*, then they swap
    int64_t* gb2_off
    int64_t* gb2_job
    int64_t* gb2_end
    int64_t* gb2_stamp
    int64_t gb2_off_cap
    int32_t* gb2_node
    int64_t* gb2_up
    int64_t* gb2_mem
    int64_t* gb2_gpu
    int32_t* gb2_run
    int64_t gb2_cap
    int32_t* gb_on                 # each node's running jobs, with the lists ...
    uint64_t* gb_idle              # ... and the nodes with none
    SsBound bd                     # what the offered nodes can give by a time, at most (slurm_bound.pxd),
                                   # made from the lists (gb_gen) once the walks since they changed have
    int64_t bd_spent, bd_spent_gen # cost as much as its making (bd_spent: entries and jobs they read)
    # a test's cores each offered node could give the job after the give-backs so far (nm_node_cpus),
    # kept up to date at each batch for the nodes touched since (dirty: once each, dstamp == stamp),
    # so that a batch after which the job cannot fit is known without a choice over every node
    int64_t* pc
    int64_t* dstamp
    int32_t* dirty
    int64_t stamp
    int64_t* fnow                  # each node's free cores now (for Nodes.version fnow_version; -1: not made)
    int64_t fnow_version
    uint64_t* fsnap                # (Nodes.free as fnow was made from, fsnap_w words: the next making reads
    int64_t fsnap_w                # again only the nodes of the words that differ)
    int32_t* freel                 # ... the nodes with some free now, ascending (the only ones whose pcnow
    int64_t nfree                  # is not 0), and as NW words (fbits)
    uint64_t* fbits
    int64_t* pcnow                 # the cores each node could give a job now (for Nodes.version pcnow_version),
    int64_t pcnow_version          # the start of each of its will-run tests: the same for every job that asks
    uint64_t pcnow_feat            # what nm_node_cpus reads of it (features, GPUs and memory a node and a
    int64_t pcnow_gpn, pcnow_mpc, pcnow_mpn    # core: a job of several partitions changes its features)
    int32_t* pcl                   # (pc_zero: pcnow is zero but on these npcl nodes, so that the next job
    int64_t npcl                   # clears only those, not 160,000 words)
    bint pc_zero
    # a test's nodes whose fc, fm, fg and pc are its own (istamp == itest): those the give-backs touched.
    # The others are as they are now (fnow, free_mem, free_gpu; pc = pcnow), read from there
    int64_t* istamp
    int64_t itest
    uint64_t* tch                  # (scratch, NW words) the nodes the give-backs touched in the test
    int64_t* hist                  # ... and how many offered nodes give each count (1 .. vmax), so that
    int64_t vmax                   # the most any maxn of them give together is known (vmax: the most
                                   # cores of a node; 0: not worked out yet)
    # the nodes a job may use at all (ss_usable), NW words, for the ask u_feat, u_mpn, u_mpc (u_ok: made)
    uint64_t* ubits
    uint64_t* tbits                # (scratch, NW words) the nodes a choice takes cores of ...
    int32_t* tw                    # ... and its words that are not zero, as ss_take_bits found them (a
    int64_t ntw                    # reservation's test and records then read only these; NW at most)
    bint u_ok
    uint64_t u_feat
    int64_t u_mpn, u_mpc


cdef inline int ss_alloc(SlurmSpace* X, int64_t nn) noexcept nogil:
    cdef int64_t i
    X.nn = nn
    X.NW = (nn + 63) // 64
    X.offer = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    X.base = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    X.fc = <int64_t*>malloc(nn * sizeof(int64_t))
    X.fm = <int64_t*>malloc(nn * sizeof(int64_t))
    X.fg = <int64_t*>malloc(nn * sizeof(int64_t))
    X.cand = <int32_t*>malloc(nn * sizeof(int32_t))
    X.sw = <int64_t*>malloc(nn * sizeof(int64_t))
    X.pc = <int64_t*>malloc(nn * sizeof(int64_t))
    X.dstamp = <int64_t*>malloc(nn * sizeof(int64_t))
    X.dirty = <int32_t*>malloc(nn * sizeof(int32_t))
    X.ubits = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    X.tbits = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    X.tw = <int32_t*>malloc(X.NW * sizeof(int32_t))
    X.ntw = 0
    X.u_ok = False
    X.in_bits = NULL
    X.gb_version = -1
    X.gb_n = -1
    X.fnow = <int64_t*>malloc(nn * sizeof(int64_t))
    X.pcnow = <int64_t*>malloc(nn * sizeof(int64_t))
    X.pcl = <int32_t*>malloc(nn * sizeof(int32_t))
    X.npcl = 0
    X.pc_zero = False
    X.freel = <int32_t*>malloc(nn * sizeof(int32_t))
    X.istamp = <int64_t*>malloc(nn * sizeof(int64_t))
    X.fbits = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    X.tch = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    X.gb_on = <int32_t*>malloc(nn * sizeof(int32_t))
    X.gb_idle = <uint64_t*>malloc(X.NW * sizeof(uint64_t))
    if sb_alloc(&X.bd, nn, X.NW) != 0:
        return RC_NO_MEMORY
    X.gb_gen = 0
    X.nfree = 0
    X.itest = 0
    X.fnow_version = -1
    X.fsnap_w = -1                     # (fnow is made from every node first)
    X.pcnow_version = -1
    if (X.fnow == NULL or X.pcnow == NULL or X.pcl == NULL or X.offer == NULL or X.base == NULL or X.fc == NULL or X.fm == NULL or X.fg == NULL or X.sw == NULL
            or X.cand == NULL or X.pc == NULL or X.dstamp == NULL or X.dirty == NULL or X.ubits == NULL
            or X.tbits == NULL or X.tw == NULL or X.freel == NULL or X.istamp == NULL
            or X.fbits == NULL or X.tch == NULL or X.gb_on == NULL or X.gb_idle == NULL):
        return RC_NO_MEMORY
    for i in range(nn):
        X.sw[i] = 0xff
        X.dstamp[i] = -1
        X.istamp[i] = -1
    return RC_OK


cdef inline void ss_free(SlurmSpace* X) noexcept nogil:
    free(X.b); free(X.e); free(X.nxt); free(X.avail)
    free(X.offer); free(X.base); free(X.fc); free(X.fm); free(X.fg); free(X.cand); free(X.sw)
    free(X.gb_off); free(X.gb_node); free(X.gb_up); free(X.gb_mem); free(X.gb_gpu); free(X.gb_run)
    free(X.gb_job); free(X.gb_end); free(X.gb_stamp)
    free(X.gb2_off); free(X.gb2_node); free(X.gb2_up); free(X.gb2_mem); free(X.gb2_gpu); free(X.gb2_run)
    free(X.gb2_job); free(X.gb2_end); free(X.gb2_stamp)
    free(X.pc); free(X.hist); free(X.fnow); free(X.pcnow); free(X.pcl); free(X.dstamp); free(X.dirty); free(X.ubits); free(X.tbits); free(X.tw)
    free(X.freel); free(X.istamp); free(X.fbits); free(X.tch); free(X.fsnap)
    free(X.gb_on); free(X.gb_idle)
    sb_free(&X.bd)
    bfl_free(&X.lim)
    memset(X, 0, sizeof(SlurmSpace))


cdef inline int _ss_room(SlurmSpace* X, int64_t need) noexcept nogil:
    # room for `need` records
    cdef int64_t c = X.cap * 2 if X.cap > 0 else 16
    cdef void* p
    if need <= X.cap:
        return RC_OK
    while c < need:
        c *= 2
    p = realloc(X.b, c * sizeof(int64_t))
    if p == NULL: return RC_NO_MEMORY
    X.b = <int64_t*>p
    p = realloc(X.e, c * sizeof(int64_t))
    if p == NULL: return RC_NO_MEMORY
    X.e = <int64_t*>p
    p = realloc(X.nxt, c * sizeof(int64_t))
    if p == NULL: return RC_NO_MEMORY
    X.nxt = <int64_t*>p
    p = realloc(X.avail, c * X.NW * sizeof(uint64_t))
    if p == NULL: return RC_NO_MEMORY
    X.avail = <uint64_t*>p
    X.cap = c
    return RC_OK


cdef inline int ss_reset(SlurmSpace* X, int64_t now, int64_t window, int64_t resolution) noexcept nogil:
    # a new cycle at now: one record, every node free, to the end of the window (0: unlimited)
    cdef int64_t w
    X.resolution = resolution if resolution > 1 else 1
    X.xn = 0                           # (the advance reservations: ar_seed_space, after this)
    X.gb_version = -1                  # (a rollback may bring back an older Nodes.version)
    X.fnow_version = -1
    X.pcnow_version = -1
    if _ss_room(X, 4) != RC_OK:
        return RC_NO_MEMORY
    X.n = 1
    X.b[0] = now // X.resolution * X.resolution
    X.e[0] = (now + window) // X.resolution * X.resolution if window > 0 else (<int64_t>1) << 50
    X.nxt[0] = 0
    for w in range(X.NW):
        X.avail[w] = ~(<uint64_t>0)
    if X.nn & 63:
        X.avail[X.NW - 1] = ((<uint64_t>1) << (X.nn & 63)) - 1
    return RC_OK


cdef inline int _ss_split(SlurmSpace* X, int64_t j, int64_t t) noexcept nogil:
    # a new record after j from t to j's end, with j's nodes; j now ends at t
    cdef int64_t i = X.n
    if _ss_room(X, X.n + 1) != RC_OK:
        return RC_NO_MEMORY
    X.b[i] = t
    X.e[i] = X.e[j]
    X.e[j] = t
    memcpy(X.avail + i * X.NW, X.avail + j * X.NW, X.NW * sizeof(uint64_t))
    X.nxt[i] = X.nxt[j]
    X.nxt[j] = i
    X.n += 1
    return RC_OK


cdef inline bint _ss_same(const SlurmSpace* X, int64_t a, int64_t b, const int32_t* tw, int64_t ntw) noexcept nogil:
    # records a and b hold the same nodes (the words tw first: where a reservation just made differs)
    cdef int64_t w, x
    if tw != NULL:
        for x in range(ntw):
            w = tw[x]
            if X.avail[a * X.NW + w] != X.avail[b * X.NW + w]:
                return False
    for w in range(X.NW):
        if X.avail[a * X.NW + w] != X.avail[b * X.NW + w]:
            return False
    return True


cdef inline void ss_take_bits(SlurmSpace* X, const int64_t* take, const int32_t* among, int64_t n_among) noexcept nogil:
    # X.tbits: the nodes with take[i] > 0, and X.tw its words that are not zero (among: the only
    # nodes take may give cores, in any order, as NodeModel.take_among or tlist; NULL: any node)
    cdef int64_t i, x
    memset(X.tbits, 0, X.NW * sizeof(uint64_t))
    X.ntw = 0
    for x in range(n_among if among != NULL else X.nn):
        i = among[x] if among != NULL else x
        if take[i] > 0:
            if X.tbits[i >> 6] == 0:
                X.tw[X.ntw] = <int32_t>(i >> 6)
                X.ntw += 1
            X.tbits[i >> 6] |= (<uint64_t>1) << (i & 63)


cdef inline int ss_reserve_words(SlurmSpace* X, int64_t start, int64_t end, const int32_t* tw,
                                 int64_t ntw) noexcept nogil:
    # ss_reserve, where X.tbits is zero but in the words tw (NULL: words 0 .. ntw - 1): a one-node
    # job's reservation on 160,000 nodes then reads one word of each record, not 2,500
    cdef int64_t j = 0, i, w, x, one_before = 0, one_after = -1
    cdef bint placed = False
    if start < X.b[0]:
        start = X.b[0]
    if end < start + X.resolution:
        end = start + X.resolution
    while True:
        if X.e[j] > start:
            if _ss_split(X, j, start) != RC_OK:
                return RC_NO_MEMORY
            placed = True
            break
        if X.e[j] == start:
            placed = True
            break
        one_before = j
        j = X.nxt[j]
        if j == 0:
            break
    while placed:
        j = X.nxt[j]
        if j == 0:
            break
        if end < X.e[j] and _ss_split(X, j, end) != RC_OK:
            return RC_NO_MEMORY
        if tw == NULL:
            for w in range(ntw):
                X.avail[j * X.NW + w] &= ~X.tbits[w]
        else:
            for x in range(ntw):
                w = tw[x]
                X.avail[j * X.NW + w] &= ~X.tbits[w]
        if end == X.e[j]:
            if X.nxt[j] != 0:
                one_after = X.nxt[j]
            break
    # drop records left identical (up to one pair)
    i = one_before
    while i != one_after:
        j = X.nxt[i]
        if j == 0:
            break
        if not _ss_same(X, i, j, tw, ntw):
            i = j
            continue
        X.e[i] = X.e[j]
        X.nxt[i] = X.nxt[j]
        break
    return RC_OK


cdef inline int ss_reserve(SlurmSpace* X, int64_t start, int64_t end) noexcept nogil:
    # _add_reservation: the nodes of X.tbits (as its writer left them: any word may be set) are held
    # over [start, end)
    return ss_reserve_words(X, start, end, NULL, X.NW)


cdef inline bint ss_overlaps(const SlurmSpace* X, int64_t start, int64_t end) noexcept nogil:
    # _test_resv_overlap: does a reservation hold one of the nodes of X.tbits (ss_take_bits: only its
    # words X.tw are read) within [start, end)?
    cdef int64_t j = 0, w, x
    while True:
        if X.e[j] > start and X.b[j] < end:
            for x in range(X.ntw):
                w = X.tw[x]
                if X.tbits[w] & ~X.avail[j * X.NW + w]:
                    return True
        j = X.nxt[j]
        if j == 0:
            return False


cdef inline int64_t ss_offer(SlurmSpace* X, int64_t start_res, int64_t end_time) noexcept nogil:
    # X.offer = the usable nodes (X.base) no reservation holds over [start_res, end_time]; returns
    # later_start (-1: none): the end of the first record after start_res whose successor offers a
    # node the records so far do not
    cdef int64_t j = 0, k, w, later = -1, W = X.NW
    cdef const uint64_t* r
    memcpy(X.offer, X.base, W * sizeof(uint64_t))
    while True:
        if X.e[j] > start_res and X.nxt[j] != 0 and later < 0:
            k = X.nxt[j]
            for w in range(W):
                if (X.base[w] & X.avail[k * W + w]) & ~(X.offer[w] & X.avail[j * W + w]):
                    later = X.e[j]
                    break
        if X.e[j] <= start_res:
            pass
        elif X.b[j] <= end_time:
            r = X.avail + j * W
            for w in range(W):
                X.offer[w] &= r[w]
        else:
            break
        j = X.nxt[j]
        if j == 0:
            break
    return later


cdef inline int64_t ss_later(SlurmSpace* X, int64_t start_res, int64_t end_time) noexcept nogil:
    # ss_offer's later_start alone, with every node usable (X.base all ones: ss_later_at), the
    # records' AND only as far as it is found (most often the first record or two), X.offer as
    # scratch, written only from the second record ANDed on (before it, the AND is a record's own)
    cdef int64_t j = 0, k, w, W = X.NW
    cdef const uint64_t* r
    cdef const uint64_t* so_far = NULL     # (NULL: every node so far)
    while True:
        if X.e[j] > start_res and X.nxt[j] != 0:
            k = X.nxt[j]
            r = X.avail + j * W
            if so_far == NULL:
                for w in range(W):
                    if X.avail[k * W + w] & ~r[w]:
                        return X.e[j]
            else:
                for w in range(W):
                    if X.avail[k * W + w] & ~(so_far[w] & r[w]):
                        return X.e[j]
        if X.e[j] <= start_res:
            pass
        elif X.b[j] <= end_time:
            r = X.avail + j * W
            if so_far == NULL:
                so_far = r
            else:
                if so_far != X.offer:
                    memcpy(X.offer, so_far, W * sizeof(uint64_t))
                    so_far = X.offer
                for w in range(W):
                    X.offer[w] &= r[w]
        else:
            return -1
        j = X.nxt[j]
        if j == 0:
            return -1


cdef inline bint _ss_offered(const SlurmSpace* X, int64_t i) noexcept nogil:
    return (X.offer[i >> 6] >> (i & 63)) & 1


cdef inline bint ss_usable(const NodeModel* M, int64_t j, int64_t i) noexcept nogil:
    # job_req_node_filter: the job's features, and memory for one core or for the node (not GPUs)
    return (M.jfeat[j] & ~M.feat[i]) == 0 and M.mpn[j] <= M.cap_mem[i] and M.mpc[j] <= M.cap_mem[i]


cdef inline void ss_usable_bits(SlurmSpace* X, const NodeModel* M, int64_t j) noexcept nogil:
    # X.ubits: the nodes job j may use (ss_usable), kept while the jobs tested ask the same
    cdef int64_t i
    if X.u_ok and X.u_feat == M.jfeat[j] and X.u_mpn == M.mpn[j] and X.u_mpc == M.mpc[j]:
        return
    memset(X.ubits, 0, X.NW * sizeof(uint64_t))
    for i in range(M.nn):
        if ss_usable(M, j, i):
            X.ubits[i >> 6] |= (<uint64_t>1) << (i & 63)
    X.u_ok = True
    X.u_feat = M.jfeat[j]
    X.u_mpn = M.mpn[j]
    X.u_mpc = M.mpc[j]


cdef inline bint _ss_resize(void** p, size_t nbytes) noexcept nogil:
    # *p reallocated to nbytes (False: out of memory, *p as it was)
    cdef void* q = realloc(p[0], nbytes)
    if q == NULL:
        return False
    p[0] = q
    return True


cdef inline int _ss_gb_room(SlurmSpace* X, int64_t need) noexcept nogil:
    cdef int64_t c = X.gb_cap * 2 if X.gb_cap > 0 else 1024
    if need <= X.gb_cap:
        return RC_OK
    while c < need:
        c *= 2
    if not (_ss_resize(<void**>&X.gb_node, c * sizeof(int32_t)) and _ss_resize(<void**>&X.gb_up, c * sizeof(int64_t))
            and _ss_resize(<void**>&X.gb_mem, c * sizeof(int64_t)) and _ss_resize(<void**>&X.gb_gpu, c * sizeof(int64_t))
            and _ss_resize(<void**>&X.gb_run, c * sizeof(int32_t))):
        return RC_NO_MEMORY
    X.gb_cap = c
    return RC_OK


cdef inline int _ss_gb_off_room(SlurmSpace* X, int64_t need) noexcept nogil:
    # room for `need` offsets of the give-back list (and its jobs' keys)
    cdef size_t nbytes = need * 2 * sizeof(int64_t)
    if need <= X.gb_off_cap:
        return RC_OK
    if not (_ss_resize(<void**>&X.gb_off, nbytes) and _ss_resize(<void**>&X.gb_job, nbytes)
            and _ss_resize(<void**>&X.gb_end, nbytes) and _ss_resize(<void**>&X.gb_stamp, nbytes)):
        return RC_NO_MEMORY
    X.gb_off_cap = need * 2
    return RC_OK


cdef inline void _ss_gb_swap(SlurmSpace* X) noexcept nogil:
    # the lists become the lists before, and those before the ones to write
    X.gb_off, X.gb2_off = X.gb2_off, X.gb_off
    X.gb_job, X.gb2_job = X.gb2_job, X.gb_job
    X.gb_end, X.gb2_end = X.gb2_end, X.gb_end
    X.gb_stamp, X.gb2_stamp = X.gb2_stamp, X.gb_stamp
    X.gb_off_cap, X.gb2_off_cap = X.gb2_off_cap, X.gb_off_cap
    X.gb_node, X.gb2_node = X.gb2_node, X.gb_node
    X.gb_up, X.gb2_up = X.gb2_up, X.gb_up
    X.gb_mem, X.gb2_mem = X.gb2_mem, X.gb_mem
    X.gb_gpu, X.gb2_gpu = X.gb2_gpu, X.gb_gpu
    X.gb_run, X.gb2_run = X.gb2_run, X.gb_run
    X.gb_cap, X.gb2_cap = X.gb2_cap, X.gb_cap


cdef inline void _ss_gb_runs(SlurmSpace* X, int64_t a, int64_t b) noexcept nogil:
    # gb_run over one job's entries a .. b - 1 (its nodes ascending)
    cdef int64_t e = b - 1
    while e >= a:
        X.gb_run[e] = X.gb_run[e + 1] + 1 if e + 1 < b and X.gb_node[e + 1] == X.gb_node[e] + 1 else 1
        e -= 1


cdef inline int _ss_gb_read(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of, int64_t jj,
                            int64_t at, bint count) noexcept nogil:
    # running job jj's entries read from its units, from entry `at` (count: into gb_on and gb_idle
    # too); returns how many, or RC_NO_MEMORY
    cdef int64_t k, i, n = nm_job_nodes(M, N.rows + <int64_t>rows_of[jj] * N.W, N.W, N.down, N.ndown, jj)
    if _ss_gb_room(X, at + n) != RC_OK:
        return RC_NO_MEMORY
    for k in range(n):
        i = M.jn_node[k]
        X.gb_node[at + k] = <int32_t>i
        X.gb_up[at + k] = M.jn_up[k]
        X.gb_mem[at + k] = nm_job_mem(M, jj, M.jn_all[k])
        X.gb_gpu[at + k] = M.gpn[jj]
        if count:
            X.gb_on[i] += 1
            X.gb_idle[i >> 6] &= ~((<uint64_t>1) << (i & 63))
    _ss_gb_runs(X, at, at + n)
    return n


cdef inline void _ss_gb_key(SlurmSpace* X, const Nodes* N, const int32_t* rows_of, int64_t r) noexcept nogil:
    # list entry r is the running job at by_end[r]
    cdef int64_t jj = N.by_end[r].job
    X.gb_job[r] = jj
    X.gb_end[r] = N.by_end[r].end
    X.gb_stamp[r] = N.row_stamp[rows_of[jj]]


cdef inline void _ss_gb_drop(SlurmSpace* X, int64_t r) noexcept nogil:
    # the lists before's job r is not in the new ones: its nodes hold one running job fewer
    cdef int64_t e, i
    for e in range(X.gb2_off[r], X.gb2_off[r + 1]):
        i = X.gb2_node[e]
        X.gb_on[i] -= 1
        if X.gb_on[i] == 0:
            X.gb_idle[i >> 6] |= (<uint64_t>1) << (i & 63)


cdef inline int _ss_gb_merge(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of, int64_t on) noexcept nogil:
    # the lists from the lists before: a running job with the same key and row stamp as one there is
    # copied (its units cannot have changed, nor, with no unit down either time, which are up), the
    # others are read; gb_on and gb_idle follow the jobs gone and come (on: the jobs before)
    cdef int64_t r, i = 0, at = 0, n, a, jj, e
    _ss_gb_swap(X)
    if _ss_gb_off_room(X, N.nrun + 1) != RC_OK:
        return RC_NO_MEMORY
    for r in range(N.nrun):
        jj = N.by_end[r].job
        e = N.by_end[r].end
        while i < on and (X.gb2_end[i] < e or (X.gb2_end[i] == e and X.gb2_job[i] < jj)):
            _ss_gb_drop(X, i)
            i += 1
        _ss_gb_key(X, N, rows_of, r)
        X.gb_off[r] = at
        if i < on and X.gb2_job[i] == jj and X.gb2_end[i] == e and X.gb2_stamp[i] == X.gb_stamp[r]:
            a = X.gb2_off[i]
            n = X.gb2_off[i + 1] - a
            if _ss_gb_room(X, at + n) != RC_OK:
                return RC_NO_MEMORY
            memcpy(X.gb_node + at, X.gb2_node + a, n * sizeof(int32_t))
            memcpy(X.gb_up + at, X.gb2_up + a, n * sizeof(int64_t))
            memcpy(X.gb_mem + at, X.gb2_mem + a, n * sizeof(int64_t))
            memcpy(X.gb_gpu + at, X.gb2_gpu + a, n * sizeof(int64_t))
            memcpy(X.gb_run + at, X.gb2_run + a, n * sizeof(int32_t))
            i += 1
        else:
            n = _ss_gb_read(X, M, N, rows_of, jj, at, True)
            if n < 0:
                return RC_NO_MEMORY
        at += n
    while i < on:
        _ss_gb_drop(X, i)
        i += 1
    X.gb_off[N.nrun] = at
    return RC_OK


cdef inline int ss_give_backs(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of) noexcept nogil:
    # X.gb_*: each running job's nodes (in end order), with its cores there that are up, its memory and
    # GPUs, read from its bitmap once for every test until the running jobs change, and then only
    # for the jobs that started since (_ss_gb_merge)
    cdef int64_t r, k, n, at = 0
    if X.gb_version == N.version:
        return RC_OK
    X.gb_version = -1
    if X.gb_n >= 0 and not X.gb_down and N.ndown == 0:
        n = X.gb_n
        X.gb_n = -1                    # (until the merge is whole)
        if _ss_gb_merge(X, M, N, rows_of, n) != RC_OK:
            return RC_NO_MEMORY
    else:
        X.gb_n = -1
        if _ss_gb_off_room(X, N.nrun + 1) != RC_OK:
            return RC_NO_MEMORY
        memset(X.gb_on, 0, X.nn * sizeof(int32_t))
        for r in range(N.nrun):
            _ss_gb_key(X, N, rows_of, r)
            X.gb_off[r] = at
            n = _ss_gb_read(X, M, N, rows_of, N.by_end[r].job, at, False)
            if n < 0:
                return RC_NO_MEMORY
            at += n
        X.gb_off[N.nrun] = at
        memset(X.gb_idle, 0, X.NW * sizeof(uint64_t))
        for k in range(at):
            X.gb_on[X.gb_node[k]] += 1
        for k in range(X.nn):
            if X.gb_on[k] == 0:
                X.gb_idle[k >> 6] |= (<uint64_t>1) << (k & 63)
    X.gb_down = N.ndown > 0
    X.gb_n = N.nrun
    X.gb_gen += 1
    X.gb_version = N.version
    return RC_OK


cdef inline int ss_give_backs_started(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of,
                                      int64_t j, int64_t version_before, int64_t end) noexcept nogil:
    # job j has just started (its by_end key: end): put it into the list where it was up to date before
    # (else the next test remakes the list)
    cdef int64_t p, r, n, at
    if X.gb_version != version_before or X.gb_version < 0 or N.nrun < 1:
        return RC_OK
    X.gb_version = -1                  # (until the list holds j)
    p = nodes_by_end_find(<Nodes*>N, N.nrun, end, j)
    if p >= N.nrun or N.by_end[p].job != j or X.gb_n != N.nrun - 1:
        return RC_OK
    X.gb_n = -1
    n = nm_job_nodes(M, N.rows + <int64_t>rows_of[j] * N.W, N.W, N.down, N.ndown, j)
    at = X.gb_off[N.nrun - 1]          # (the entries before the start)
    if _ss_gb_room(X, at + n) != RC_OK:
        return RC_NO_MEMORY
    if _ss_gb_off_room(X, N.nrun + 1) != RC_OK:
        return RC_NO_MEMORY
    r = X.gb_off[p]
    memmove(X.gb_node + r + n, X.gb_node + r, (at - r) * sizeof(int32_t))
    memmove(X.gb_up + r + n, X.gb_up + r, (at - r) * sizeof(int64_t))
    memmove(X.gb_mem + r + n, X.gb_mem + r, (at - r) * sizeof(int64_t))
    memmove(X.gb_gpu + r + n, X.gb_gpu + r, (at - r) * sizeof(int64_t))
    memmove(X.gb_run + r + n, X.gb_run + r, (at - r) * sizeof(int32_t))
    for at in range(n):
        X.gb_node[r + at] = <int32_t>M.jn_node[at]
        X.gb_up[r + at] = M.jn_up[at]
        X.gb_mem[r + at] = nm_job_mem(M, j, M.jn_all[at])
        X.gb_gpu[r + at] = M.gpn[j]
        X.gb_on[M.jn_node[at]] += 1
        X.gb_idle[M.jn_node[at] >> 6] &= ~((<uint64_t>1) << (M.jn_node[at] & 63))
    _ss_gb_runs(X, r, r + n)
    X.gb_gen += 1
    memmove(X.gb_job + p + 1, X.gb_job + p, (N.nrun - 1 - p) * sizeof(int64_t))
    memmove(X.gb_end + p + 1, X.gb_end + p, (N.nrun - 1 - p) * sizeof(int64_t))
    memmove(X.gb_stamp + p + 1, X.gb_stamp + p, (N.nrun - 1 - p) * sizeof(int64_t))
    _ss_gb_key(X, N, rows_of, p)
    r = N.nrun
    while r > p:
        X.gb_off[r] = X.gb_off[r - 1] + n
        r -= 1
    X.gb_down = X.gb_down or N.ndown > 0
    X.gb_n = N.nrun
    X.gb_version = N.version
    return RC_OK


cdef inline void _ss_setw(SlurmSpace* X, int64_t i, int64_t v) noexcept nogil:
    # node i's weight becomes v (X.marked follows)
    if X.sw[i] != 0xff:
        X.marked -= 1
    if v != 0xff:
        X.marked += 1
    X.sw[i] = v


cdef inline void _ss_mark(SlurmSpace* X, const NodeModel* M, int64_t i, int64_t c, int64_t gf, int64_t need,
                          int64_t g) noexcept nogil:
    # node i, with c cores and gf GPUs free, could hold a task of a job asking g GPUs (need: the cores
    # it must find there): its weight becomes 0xff less the GPUs the job would use there (not with
    # cons_res). (gf, g: every generic resource, counts.pxd; the weight counts the GPUs' lane)
    if c >= need and c > 0 and cnt_fits(gf, g, M.cnt_hi) and X.marks != SS_MARKS_NONE:
        gf &= M.cnt_g0
        g &= M.cnt_g0
        _ss_setw(X, i, 0xff - (gf if gf < g else g))


cdef inline void ss_gpu_weights(SlurmSpace* X, const NodeModel* M, int64_t j, int64_t cores, const int64_t* fc,
                                const int64_t* fg) noexcept nogil:
    # a GPU job's test marks each offered node with its GPUs and cores for one task free (all its
    # cores when it must be one node) (cons_tres can_job_run_on_node, "favor nodes with more
    # co-located GPUs")
    cdef int64_t i, need = cores if M.maxn[j] == 1 else 1, g = M.gpn[j]
    if (g & M.cnt_g0) <= 0:
        return
    for i in range(M.nn):
        if _ss_offered(X, i):
            _ss_mark(X, M, i, fc[i], fg[i], need, g)


cdef inline void ss_reset_weights(SlurmSpace* X, const NodeModel* M, int64_t j, bint offered_only) noexcept nogil:
    # a start attempt (Slurm's select_nodes: a main-scheduler test, a backfill start) resets the weight
    # of each candidate node the job may use (_sync_node_weight)
    cdef int64_t i, w
    cdef uint64_t x
    if X.marked == 0:
        return                         # (every weight is 0xff already)
    if offered_only:
        for w in range(X.NW):
            x = X.offer[w]
            while x:
                i = (w << 6) + __builtin_ctzll(x)
                x &= x - 1
                if ss_usable(M, j, i) and cnt_fits(M.cap_gpu[i], M.gpn[j], M.cnt_hi):
                    _ss_setw(X, i, 0xff)
        return
    for i in range(M.nn):
        if ss_usable(M, j, i) and cnt_fits(M.cap_gpu[i], M.gpn[j], M.cnt_hi):
            _ss_setw(X, i, 0xff)


cdef inline void ss_submit_weights(SlurmSpace* X, const NodeModel* M, int64_t j, int64_t cores) noexcept nogil:
    # a submission is a test-only select_nodes (job_allocate): the job's usable nodes reset, then, for a
    # GPU job, each that could hold it on an idle node marked with the GPUs it would use there
    cdef int64_t i, need = cores if M.maxn[j] == 1 else 1, g = M.gpn[j]
    ss_reset_weights(X, M, j, False)
    if (g & M.cnt_g0) <= 0:
        return
    for i in range(M.nn):
        if ss_usable(M, j, i):
            _ss_mark(X, M, i, M.first[i + 1] - M.first[i], M.cap_gpu[i], need, g)


cdef inline void ss_main_test(SlurmSpace* X, const NodeModel* M, const Nodes* N, int64_t j, int64_t cores) noexcept nogil:
    # the weights as the main scheduler's test of job j leaves them, before its choice on the nodes as
    # they are (select_nodes: reset, then the job's own test)
    cdef int64_t i, need = cores if M.maxn[j] == 1 else 1, g = M.gpn[j]
    ss_reset_weights(X, M, j, False)
    if (g & M.cnt_g0) <= 0:
        return
    for i in range(M.nn):
        if ss_usable(M, j, i) and cnt_fits(M.cap_gpu[i], g, M.cnt_hi):
            _ss_mark(X, M, i, nm_range_count(N.free, M.first[i], M.first[i + 1]), M.free_gpu[i], need, g)


cdef inline int64_t _ss_cand(SlurmSpace* X, NodeModel* M, int64_t i, int64_t c, int64_t n) noexcept nogil:
    # node i gives the choice c cores: a candidate if any (n candidates so far; returns how many now)
    M.cpu[i] = c
    if c > 0:
        X.cand[n] = <int32_t>i
        return n + 1
    return n


cdef inline bint _ss_choose(SlurmSpace* X, NodeModel* M, int64_t j, int64_t cores, bint future) noexcept nogil:
    # the select plugin's choice among the offered nodes (M.take), now or after the removals so far.
    # The choice is handed only the offered nodes that give the job a core (X.cand, ascending: the
    # same runs and the same answer as over every node with the others at 0), so that its scans read
    # those rather than every node of the cluster (M.cpu is left stale elsewhere; nothing reads it there).
    # Now: the nodes as they are (X.fnow, ss_now_ready), of which only those with a free core
    # (X.freel, ascending) can give one
    cdef int64_t i, w, c, n = 0
    cdef uint64_t x
    ss_gpu_weights(X, M, j, cores, X.fc if future else X.fnow, X.fg if future else M.free_gpu)
    if not future:
        for w in range(X.nfree):
            i = X.freel[w]
            if (X.offer[i >> 6] >> (i & 63)) & 1:
                n = _ss_cand(X, M, i, nm_node_cpus(M, j, i, X.fnow[i], M.free_mem[i], M.free_gpu[i]), n)
        return nm_choose_among(M, cores, M.minn[j], M.maxn[j], X.cand, n)
    for w in range(X.NW):              # (the offered nodes, a set bit at a time)
        x = X.offer[w]
        while x:
            i = (w << 6) + __builtin_ctzll(x)
            x &= x - 1
            n = _ss_cand(X, M, i, nm_node_cpus(M, j, i, X.fc[i], X.fm[i], X.fg[i]), n)
    return nm_choose_among(M, cores, M.minn[j], M.maxn[j], X.cand, n)


cdef inline bint _ss_choose_now_free(SlurmSpace* X, NodeModel* M, int64_t j, int64_t cores) noexcept nogil:
    # _ss_choose now where X.pcnow holds what each node gives job j now and no GPU mark applies (a test
    # that skips hopeless choices): only the offered nodes of X.freel may give a core
    cdef int64_t x, i, c, n = 0
    for x in range(X.nfree):
        i = X.freel[x]
        if (X.offer[i >> 6] >> (i & 63)) & 1:
            c = X.pcnow[i]
            M.cpu[i] = c
            if c > 0:
                X.cand[n] = <int32_t>i
                n += 1
    return nm_choose_among(M, cores, M.minn[j], M.maxn[j], X.cand, n)


cdef inline bint _ss_choose_later(SlurmSpace* X, NodeModel* M, int64_t j, int64_t cores) noexcept nogil:
    # _ss_choose after the removals so far, in the same test: a node the give-backs touched gives X.pc
    # (brought up to date at the batch), the others what they give now (X.pcnow: none but those with
    # free cores now). The offered nodes among those two sets alone are read
    cdef int64_t i, w, c, n = 0
    cdef uint64_t x
    for w in range(X.NW):
        x = X.offer[w] & (X.fbits[w] | X.tch[w])
        while x:
            i = (w << 6) + __builtin_ctzll(x)
            x &= x - 1
            c = X.pc[i] if X.istamp[i] == X.itest else X.pcnow[i]
            M.cpu[i] = c
            if c > 0:
                X.cand[n] = <int32_t>i
                n += 1
    return nm_choose_among(M, cores, M.minn[j], M.maxn[j], X.cand, n)


cdef inline void _ss_count(SlurmSpace* X, const NodeModel* M, int64_t j, int64_t i, int64_t c, int64_t* total,
                           int64_t* used) noexcept nogil:
    # node i now gives job j c cores: the test's sums and counts follow
    if X.pc[i] > 0:
        total[0] -= X.pc[i]
        used[0] -= 1
        X.hist[X.pc[i]] -= 1
    X.pc[i] = c
    if c > 0:
        total[0] += c
        used[0] += 1
        X.hist[c] += 1


cdef inline int _ss_hist_ready(SlurmSpace* X, const NodeModel* M) noexcept nogil:
    # X.hist all zero, for counts up to the most cores of a node
    cdef int64_t i, v
    if X.vmax == 0:
        for i in range(M.nn):
            v = M.first[i + 1] - M.first[i]
            if v > X.vmax:
                X.vmax = v
        X.hist = <int64_t*>malloc((X.vmax + 1) * sizeof(int64_t))
        if X.hist == NULL:
            X.vmax = 0
            return RC_NO_MEMORY
    memset(X.hist, 0, (X.vmax + 1) * sizeof(int64_t))
    return RC_OK


cdef inline bint _ss_hopeless(const SlurmSpace* X, int64_t total, int64_t used, int64_t cores, int64_t minn,
                              int64_t maxn) noexcept nogil:
    # the offered nodes cannot hold the job as they are now: too few nodes, too few cores, or too few in
    # the maxn nodes that give most (each a condition nm_choose needs)
    cdef int64_t v, left = maxn, got = 0, t
    if used < minn or total < cores:
        return True
    if maxn <= 0 or maxn >= used:
        return False
    v = X.vmax
    while v > 0 and left > 0:
        t = X.hist[v] if X.hist[v] < left else left
        got += t * v
        left -= t
        v -= 1
    return got < cores


cdef inline void _ss_fnow_all(SlurmSpace* X, const NodeModel* M, const Nodes* N) noexcept nogil:
    # X.fnow, X.freel and X.fbits from every node (and the words read, into X.fsnap if it is there)
    cdef int64_t i
    X.nfree = 0
    memset(X.fbits, 0, X.NW * sizeof(uint64_t))
    for i in range(M.nn):
        X.fnow[i] = nm_range_count(N.free, M.first[i], M.first[i + 1])
        if X.fnow[i] > 0:
            X.freel[X.nfree] = <int32_t>i
            X.nfree += 1
            X.fbits[i >> 6] |= (<uint64_t>1) << (i & 63)
    if X.fsnap != NULL:
        memcpy(X.fsnap, N.free, N.W * sizeof(uint64_t))


cdef inline void _ss_fnow_diff(SlurmSpace* X, const NodeModel* M, const Nodes* N) noexcept nogil:
    # X.fnow, X.freel and X.fbits again for the nodes of the units whose free bit changed since X.fsnap
    cdef int64_t w, i, u, last, x = 0
    cdef uint64_t d
    cdef bint changed = False
    for w in range(N.W):
        d = N.free[w] ^ X.fsnap[w]
        if d == 0:
            continue
        X.fsnap[w] = N.free[w]
        changed = True
        u = w * 64 + __builtin_ctzll(d)
        last = w * 64 + 63 - __builtin_clzll(d)
        i = M.node_of[u]
        while i < M.nn and M.first[i] <= last:
            X.fnow[i] = nm_range_count(N.free, M.first[i], M.first[i + 1])
            if X.fnow[i] > 0:
                X.fbits[i >> 6] |= (<uint64_t>1) << (i & 63)
            else:
                X.fbits[i >> 6] &= ~((<uint64_t>1) << (i & 63))
            i += 1
    if not changed:
        return
    X.nfree = 0                        # (freel ascending, from fbits)
    for w in range(X.NW):
        d = X.fbits[w]
        while d:
            X.freel[X.nfree] = <int32_t>(w * 64 + __builtin_ctzll(d))
            X.nfree += 1
            d &= d - 1


cdef inline void ss_now_ready(SlurmSpace* X, const NodeModel* M, const Nodes* N, int64_t j,
                              bint per_job) noexcept nogil:
    # X.fnow: each node's free cores as the nodes are now (the same for every test until a start);
    # per_job: also X.pcnow, the cores each could give job j now (the same for each of its tests, and
    # for every job that asks the same of a node)
    # (a node with no free core gives none: pcnow is worked out for the nodes of X.freel alone)
    cdef int64_t i, x, c
    if X.fnow_version != N.version:
        if X.fsnap != NULL and X.fsnap_w == N.W:
            _ss_fnow_diff(X, M, N)
        else:
            free(X.fsnap)
            X.fsnap = <uint64_t*>malloc(N.W * sizeof(uint64_t))   # (NULL: every node each time)
            X.fsnap_w = N.W
            _ss_fnow_all(X, M, N)
        X.fnow_version = N.version
    if per_job and (X.pcnow_version != N.version or X.pcnow_feat != M.jfeat[j] or X.pcnow_gpn != M.gpn[j]
                    or X.pcnow_mpc != M.mpc[j] or X.pcnow_mpn != M.mpn[j]):
        if X.pc_zero:
            for x in range(X.npcl):
                X.pcnow[X.pcl[x]] = 0
        else:
            memset(X.pcnow, 0, M.nn * sizeof(int64_t))
            X.pc_zero = True
        X.npcl = 0
        for x in range(X.nfree):
            i = X.freel[x]
            c = nm_node_cpus(M, j, i, X.fnow[i], M.free_mem[i], M.free_gpu[i])
            X.pcnow[i] = c
            if c != 0:
                X.pcl[X.npcl] = <int32_t>i
                X.npcl += 1
        X.pcnow_version = N.version
        X.pcnow_feat = M.jfeat[j]
        X.pcnow_gpn = M.gpn[j]
        X.pcnow_mpc = M.mpc[j]
        X.pcnow_mpn = M.mpn[j]


cdef inline bint ss_bound_ready(SlurmSpace* X, const Nodes* N) noexcept nogil:
    # X.bd for the give-back lists as they are (made after them and X.fbits, for the same nodes), or
    # False: not made, as the walks since the lists changed have not yet cost as much as making it
    # (a cluster of 160,000 nodes whose jobs start one after another would remake it at each start for
    # few tests), or on a helper thread (which makes nothing the searching thread shares)
    cdef int64_t cost
    if X.bd.gen == X.gb_gen:
        return True
    if X.cancel != NULL:
        return False
    if X.bd_spent_gen != X.gb_gen:
        X.bd_spent = 0
        X.bd_spent_gen = X.gb_gen
    cost = X.gb_off[N.nrun] + 2 * (X.nn // X.bd.S + 1) * X.NW
    if X.bd_spent * 4 < cost:          # (a walk's entry costs about four of the making's reads)
        return False
    sb_make(&X.bd, N, X.nn, X.NW, X.gb_gen, X.gb_off, X.gb_node, X.gb_on, X.gb_idle, X.fbits)
    return True


cdef inline void _ss_spend(SlurmSpace* X, int64_t n) noexcept nogil:
    # a walk the bound could have skipped read n entries and jobs (ss_bound_ready)
    if X.bd_spent_gen != X.gb_gen:
        X.bd_spent = 0
        X.bd_spent_gen = X.gb_gen
    X.bd_spent += n


cdef inline bint _ss_cannot_by(SlurmSpace* X, const NodeModel* M, int64_t j, int64_t cores,
                               int64_t t) noexcept nogil:
    # the offered nodes cannot hold job j with every running job that ends by t given back (X.bd made)
    return sb_cannot(&X.bd, X.NW, X.offer, t, cores, M.minn[j], M.maxn[j], X.vmax)


cdef inline bint _ss_touches(const SlurmSpace* X, int64_t r) noexcept nogil:
    # running job r (by_end order) holds an offered node
    cdef int64_t e = X.gb_off[r], i, stop, span
    cdef uint64_t bits
    while e < X.gb_off[r + 1]:
        i = X.gb_node[e]
        stop = i + X.gb_run[e]
        e += X.gb_run[e]
        while i < stop:
            span = 64 - (i & 63)
            if span > stop - i:
                span = stop - i
            bits = X.offer[i >> 6] >> (i & 63)
            if span < 64:
                bits &= ((<uint64_t>1) << span) - 1
            if bits:
                return True
            i += span
    return False


cdef inline int64_t _ss_batches_by(const SlurmSpace* X, const Nodes* N, int64_t stop_after,
                                   int64_t* last_by) noexcept nogil:
    # the will-run test's batches of give-backs (ss_will_run's walk, without the give-backs): the end of
    # the first that ends after stop_after (-1: none), and in last_by the end of the last tested batch
    # that ends by it (-1: none)
    cdef int64_t k = 0, r, window = SS_WINDOW, end_time = -1, last, nxt, removed
    cdef bint more = True, test
    last_by[0] = -1
    while more:
        last = -1
        nxt = -1
        removed = 0
        test = True
        while True:
            if k >= N.nrun:
                more = False
                break
            r = k
            k += 1
            if not _ss_touches(X, r):
                continue
            if end_time < 0:
                end_time = N.by_end[r].end + (window - (N.by_end[r].end + X.phase) % window)
            last = r
            if k >= N.nrun:
                more = False
                break
            nxt = k
            if N.by_end[k].end > end_time + window:
                break
            removed += 1
            if removed > SS_BATCH_CHECK + 1:
                test = False
                break
        if last < 0:
            break
        if N.by_end[last].end > stop_after:
            return N.by_end[last].end
        if not test:
            continue
        last_by[0] = N.by_end[last].end
        window *= 2
        while nxt >= 0 and N.by_end[nxt].end > end_time + window:
            window *= 2
    return -1


cdef inline int64_t ss_will_run(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of,
                                int64_t j, int64_t cores, int64_t now, bint now_only,
                                int64_t stop_after) noexcept nogil:
    # _will_run_test on the offered nodes: the start (M.take: where), -1, or SS_ERROR. rows_of: each
    # job's row; now_only: only the test on the nodes as they are (TEST_NOW_ONLY: no reservation is left);
    # stop_after >= 0: a start after it is as good as none to the caller (its next later start is tested
    # either way), so the give-backs stop at the first batch ending after it, which is returned
    cdef int64_t i, r, e, x, k = 0, window = SS_WINDOW, end_time = -1, removed, last, nxt, nd = 0
    cdef int64_t total = 0, used = 0, i0, stop, span, n_i
    cdef bint more = True, test, touched, spend = False
    cdef int64_t spent = 0
    # without the GPU marks a choice leaves on the nodes, a choice that cannot succeed (too few cores
    # or nodes in all: nm_choose's own first check) need not be made
    cdef bint skip_hopeless = (M.gpn[j] & M.cnt_g0) <= 0 or X.marks == SS_MARKS_NONE
    # lazy: the offered nodes' fc, fm, fg and pc are made when the give-backs first touch them (the
    # others are read from the nodes now); not where each test resets the offered nodes' weights first
    cdef bint lazy = skip_hopeless and X.marks != SS_MARKS_PER_TEST
    cdef uint64_t bits
    cdef int64_t t = X.itest + 1
    X.itest = t
    if skip_hopeless and _ss_hist_ready(X, M) != RC_OK:
        return SS_ERROR
    ss_now_ready(X, M, N, j, skip_hopeless)
    if lazy:
        memset(X.tch, 0, X.NW * sizeof(uint64_t))
        # the counts of what the offered nodes give now: only the nodes with free cores give any
        for x in range(X.nfree):
            i = X.freel[x]
            if X.pcnow[i] > 0 and (X.offer[i >> 6] >> (i & 63)) & 1:
                total += X.pcnow[i]
                used += 1
                X.hist[X.pcnow[i]] += 1
    else:
        for x in range(X.NW):
            bits = X.offer[x]
            while bits:
                i = (x << 6) + __builtin_ctzll(bits)
                bits &= bits - 1
                X.istamp[i] = t
                X.pc[i] = 0
                X.fc[i] = X.fnow[i]
                X.fm[i] = M.free_mem[i]    # (fc, fm and fg are read only for offered nodes)
                X.fg[i] = M.free_gpu[i]
                if X.marks == SS_MARKS_PER_TEST:
                    _ss_setw(X, i, 0xff)   # (Slurm 23.11's cons_tres _will_run_test: _set_sched_weight first)
                if skip_hopeless:
                    _ss_count(X, M, j, i, X.pcnow[i], &total, &used)
    if X.cancel != NULL and pbf_load(X.cancel):
        return -1                      # (a test ahead whose answer is no longer needed)
    if lazy:
        if not _ss_hopeless(X, total, used, cores, M.minn[j], M.maxn[j]) and _ss_choose_now_free(X, M, j, cores):
            return now
    elif (not skip_hopeless or not _ss_hopeless(X, total, used, cores, M.minn[j], M.maxn[j])) \
            and _ss_choose(X, M, j, cores, False):
        return now
    if now_only:
        return -1
    if ss_give_backs(X, M, N, rows_of) != RC_OK:
        return SS_ERROR
    spend = lazy and stop_after >= 0 and X.cancel == NULL
    if lazy and stop_after >= 0 and ss_bound_ready(X, N):
        # a start by stop_after is the only answer the walk's give-backs need find, and only at the end
        # of a tested batch: where the offered nodes cannot hold the job by then, the walk is skipped
        # (its answer, none or a start after stop_after, is the same to the caller)
        if _ss_cannot_by(X, M, j, cores, stop_after):
            return -1
        e = _ss_batches_by(X, N, stop_after, &last)
        if last < 0 or _ss_cannot_by(X, M, j, cores, last):
            return e
    X.stamp += 1
    while more:
        if X.cancel != NULL and pbf_load(X.cancel):
            return -1                  # (a test ahead whose answer is no longer needed)
        last = -1
        nxt = -1
        removed = 0
        test = True
        while True:
            if k >= N.nrun:
                more = False
                break
            r = k
            k += 1
            # running job r's resources return to the offered nodes: its entries a run of consecutive
            # nodes at a time, whose offered ones are read from the offer's words (most of a deep
            # queue's nodes are held by reservations: a word's nodes are passed over together)
            touched = False
            e = X.gb_off[r]
            while e < X.gb_off[r + 1]:
                i0 = X.gb_node[e]
                i = i0
                stop = i0 + X.gb_run[e]
                while i < stop:
                    span = 64 - (i & 63)
                    if span > stop - i:
                        span = stop - i
                    bits = X.offer[i >> 6] >> (i & 63)
                    if span < 64:
                        bits &= ((<uint64_t>1) << span) - 1
                    while bits:
                        n_i = i + __builtin_ctzll(bits)
                        bits &= bits - 1
                        x = e + (n_i - i0)
                        if X.istamp[n_i] != t:         # (first touched in this test)
                            X.istamp[n_i] = t
                            X.fc[n_i] = X.fnow[n_i]
                            X.fm[n_i] = M.free_mem[n_i]
                            X.fg[n_i] = M.free_gpu[n_i]
                            X.pc[n_i] = X.pcnow[n_i]
                            X.tch[n_i >> 6] |= (<uint64_t>1) << (n_i & 63)
                        X.fc[n_i] += X.gb_up[x]
                        spent += 1
                        X.fm[n_i] += X.gb_mem[x]
                        X.fg[n_i] += X.gb_gpu[x]
                        touched = True
                        if X.dstamp[n_i] != X.stamp:
                            X.dstamp[n_i] = X.stamp
                            X.dirty[nd] = <int32_t>n_i
                            nd += 1
                    i += span
                e += stop - i0
            if not touched:
                continue
            if end_time < 0:
                # (Slurm aligns the first window on its clock's multiples of 30 s: end_time % 30 of the
                # Unix time, so where the replay's second 0 falls on that clock moves the batches)
                end_time = N.by_end[r].end + (window - (N.by_end[r].end + X.phase) % window)
            last = r
            if k >= N.nrun:
                more = False
                break
            nxt = k
            if N.by_end[k].end > end_time + window:
                break
            removed += 1
            if removed > SS_BATCH_CHECK + 1:
                test = False
                break
        if last < 0:
            break
        if stop_after >= 0 and N.by_end[last].end > stop_after:
            if spend:
                _ss_spend(X, spent + k)
            return N.by_end[last].end  # (every answer from this batch on is a start after stop_after, or none)
        if not test:
            continue
        window *= 2
        while nxt >= 0 and N.by_end[nxt].end > end_time + window:
            window *= 2
        if skip_hopeless:
            for x in range(nd):
                i = X.dirty[x]
                _ss_count(X, M, j, i, nm_node_cpus(M, j, i, X.fc[i], X.fm[i], X.fg[i]), &total, &used)
            nd = 0
            X.stamp += 1
            if _ss_hopeless(X, total, used, cores, M.minn[j], M.maxn[j]):
                continue
        if (_ss_choose_later(X, M, j, cores) if lazy else _ss_choose(X, M, j, cores, True)):
            if spend:
                _ss_spend(X, spent + k)
            if N.by_end[last].end > now:
                return N.by_end[last].end
            return N.by_end[last].end + SS_KILL_WAIT if N.by_end[last].end + SS_KILL_WAIT > now else now + 1
    if spend:
        _ss_spend(X, spent + k)
    return -1


cdef inline void _ss_all_nodes(SlurmSpace* X) noexcept nogil:
    cdef int64_t w
    for w in range(X.NW):
        X.base[w] = ~(<uint64_t>0)
    if X.nn & 63:
        X.base[X.NW - 1] = ((<uint64_t>1) << (X.nn & 63)) - 1


cdef inline int64_t ss_later_at(SlurmSpace* X, int64_t d, int64_t now, int64_t start_res) noexcept nogil:
    # what ss_offer_at returns, without the rest of its work (X.offer is left undefined)
    return ss_later(X, start_res, (start_res if start_res > now else now) + d)


cdef inline int64_t ss_offer_at(SlurmSpace* X, int64_t d, int64_t now, int64_t start_res) noexcept nogil:
    # A later start's first half in _attempt_backfill: X.offer = the nodes no reservation of the
    # cycle, and no advance reservation (job_test_resv), holds over the job's time from start_res
    # (d: its limit); returns the next later start to try (-1: none)
    cdef int64_t end_time = (start_res if start_res > now else now) + d, later, i, w
    _ss_all_nodes(X)
    later = ss_offer(X, start_res, end_time)
    for i in range(X.xn):              # (job_test_resv: the windows over [start_res, end_time))
        if X.xs[i] < end_time and X.xe[i] > start_res:
            for w in range(X.NW):
                X.offer[w] &= ~X.xbits[i * X.NW + w]
    if X.in_bits != NULL:              # (a job inside a reservation: its window's nodes, inside its time)
        if not X.in_s <= start_res < X.in_e:
            memset(X.offer, 0, X.NW * sizeof(uint64_t))
            return -1
        for w in range(X.NW):
            X.offer[w] &= X.in_bits[w]
    return later


cdef inline int64_t ss_test_at(SlurmSpace* X, NodeModel* M, const Nodes* N, const int32_t* rows_of, int64_t j,
                               int64_t cores, int64_t now, int64_t start_res, bint reserve,
                               int64_t later) noexcept nogil:
    # ... and its second half, on X.offer: the will-run test's start (M.take: where), -1 (none: too
    # few nodes offered, no fit, or only a start now counts and start_res is later), or SS_ERROR.
    # later: the next later start to try (-1: none); a start found after it may be any start after it
    cdef int64_t cnt = 0, w
    cdef int64_t minn = M.minn[j] if M.minn[j] > 1 else 1
    if not reserve and start_res > now:
        return -1
    ss_usable_bits(X, M, j)
    for w in range(X.NW):
        X.offer[w] &= X.ubits[w]
        cnt += __builtin_popcountll(X.offer[w])
    if cnt < minn:
        # no node outside these can give the job a core, so every running job's end would be given
        # back for nothing: the walk's answer, -1, without it (in a deep queue most failed tests are
        # these: the nodes left free of reservations over the job's time are too few, or not its kind)
        return -1
    return ss_will_run(X, M, N, rows_of, j, cores, now, not reserve, later if reserve else -1)
