# Nodes with memory, GPUs and features (header only). A node is a run of consecutive units (its
# cores); memory and GPUs are per-node counters. Here: the cluster's nodes and what each job asks of
# them, the live memory and GPU use, a pass's plan of each node's free cores, memory and GPUs over
# future time (one short step function a node: a node holds few jobs, so a plan costs the running
# jobs' size, not their number times the node count), and Slurm's node choice (cons_res
# _eval_nodes / _choose_nodes / _cpus_to_use; the oracle is pbf/reference/nodes_ref.py).

from libc.stdint cimport uint64_t, uint32_t, uint8_t, int64_t, int32_t, int8_t
from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.string cimport memset, memmove, memcpy

from memory cimport INF, grow
from counts cimport cnt_fits, cnt_min
from ticks cimport now_ticks
from sync cimport pbf_load, pbf_store, pbf_cas, pbf_fetch_add, pbf_pause, sched_yield
from pbf._codes cimport RC_OK, RC_NO_MEMORY, RC_TIME_RANGE, NO_START

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


cdef enum:
    MISFITS_MAX = 16
    STARTS_MAX = 64
    EVX_MAX = 256              # plan points added in a pass wait in NodeModel.evx, at most this many
    SPLIT_SHIFT = 10           # NodeSplit.share: parts of SPLIT_SCALE ...
    SPLIT_SCALE = 1024
    SPLIT_STEP = 8             # ... moved by this much after each shared search

cdef extern from *:
    """
    #define PBF_EV_T_MAX (((long long)1) << 43)
    """
    long long EV_T_MAX "PBF_EV_T_MAX"


ctypedef struct NodeLine:      # one node's free cores, memory and GPUs over future time
    int64_t* t                 # value p holds from t[p] to t[p + 1] (the last: for ever); t[0] = now
    int64_t* c                 # free cores ...
    int64_t* m                 # ... memory (MB) ...
    int64_t* g                 # ... and GPUs
    int64_t n                  # points
    int64_t cap                # room
    int64_t cur                # the search's cursor: the last point at or before its candidate ...
    int64_t b                  # ... the last before the end of the job's window ...
    int64_t* qp                # ... and the points between, as a queue of rising minima (the
    int64_t* qf                # cores the node gives the job from that point to the window's end)
    int64_t qh, qt             # (qt < 0: not made yet; nm_windows leaves it to the search's sweep)
    bint changed               # in the plan's list of nodes changed since the last search (NodeModel.chg)


ctypedef struct NodeSplit:      # a search's per-node set-up shared with a helper thread (nm_split_helper)
    int64_t posted             # tasks the searching thread posted ...
    int64_t claimed            # ... the last one claimed (by the helper, or by the searcher itself
                               # when the helper had not taken it: nobody ever waits for a helper
                               # that is not running) ...
    int64_t finished           # ... and the last one the helper finished
    int64_t slot               # the helper: -2 none (and none asked for), -1 one is running, g > 0
                               # asked of the pool's generation g (the first thread woken takes it)
    int64_t leave              # 1: the helper returns to the pool
    int64_t idle_ticks         # the helper returns by itself after this long without a task
    int64_t min_nodes          # searches over fewer eligible nodes are not shared
    bint wait                  # (tests) every shared part waits for the helper, never taken back
    void (*start)(void* arg) noexcept nogil    # asks the pool for a helper
    void* start_arg
    void (*work)(void* X) noexcept nogil  # the task (its argument: this NodeSplit), when not a node search's set-up (NULL) ...
    void* task                 # ... and what it works on (slurm_try_later.pxd: a later start's test)
    void* M                    # the set-up's task: the plan (NodeModel*) ...
    int64_t j, t, stop         # ... the job and its first candidate window ...
    int64_t lo, hi             # ... the helper's part of the eligible nodes, elig[lo:hi] ...
    int64_t total, used        # ... and the helper's answer: its nodes' cores for the job over the
                               # window, and how many give any
    int64_t share              # the helper's part of the nodes (of SPLIT_SCALE)
    int64_t stall_ticks        # a wait for the helper longer than this is a stall (it lost its CPU) ...
    int64_t stalls             # ... counted here (over the passes not yet judged)
    int64_t backoff            # passes without sharing after a bad one (0: none) ...
    int64_t backoff_left       # ... of which this many are left
    int64_t backoffs           # times it backed off, over the replay
    int64_t wall0, cpu0        # the pass's start: wall and this thread's CPU time (ns) ...
    int64_t acc_wall, acc_cpu  # ... and the sums over the passes not yet judged
    int64_t tasks              # searches shared so far ...
    int64_t helped             # ... and those the helper took part in
    # whether sharing pays on this host and workload, measured (split_trial_* in parallel_pass.pxd):
    # passes with and without sharing, in turn, then the faster way kept for a while
    int64_t trial_share        # the next pass of the trial shares (1) or not (0)
    int64_t trial_on           # 1: a trial runs; 0: its verdict is kept ...
    int64_t trial_keep_ns      # ... for this much more pass wall time
    int64_t trial_verdict      # the last trial's verdict: 1 share, 0 not
    double trial_ns[2]         # the trial's pass wall time (ns) and tests, not shared and shared
    double trial_tests[2]
    double trial_tasks         # the searches offered to the helper in the trial's shared passes ...
    int64_t tasks_armed        # ... (tasks when the pass began)
    int64_t trial_retries      # trials run again in a row, their passes too far apart to compare
    int64_t trial_idle_run     # verdicts in a row against sharing from passes with little to share
    int64_t trials             # trials over the replay ...
    int64_t trials_shared      # ... and those sharing won
    # where a shared will-run test's time goes (ticks; slurm_try_later.pxd; read by _core's
    # _search_helper_ticks): this thread posting, its own test while the helper has one, its waits
    # for the helper's answer (needed, or not: the test told to stop), and the helper's tests
    int64_t tk_post, tk_own, tk_wait, tk_wait_unneeded, tk_help, tk_jobs, tk_take
    int64_t n_own, n_wait, n_wait_unneeded, n_help, n_jobs, n_take


ctypedef struct NodeModel:
    bint on                    # the cluster is made of nodes (else: interchangeable units)
    bint first_fit             # nodes in index order instead of Slurm's best fit
    int64_t nn                 # nodes
    int64_t* first             # node i's units: first[i] .. first[i + 1] - 1 (nn + 1 entries)
    int32_t* node_of           # the node of each unit
    int64_t* cap_mem           # memory (MB) and GPUs of each node ...
    int64_t* cap_gpu           # (GPUs and any other generic resources: lanes of one word, counts.pxd) ...
    uint64_t cnt_hi            # ... the lanes' guard bits (0: one plain count, GPUs) ...
    int64_t cnt_w              # ... their width ...
    int64_t cnt_g0             # ... and the GPUs' lane (all bits where there is one count)
    uint64_t* feat             # ... and its features (a bit each)
    int32_t* class_of          # each node's class: the nodes of identical cores, memory, GPUs and
    int64_t ncls               # features (nm_make_classes; NULL: not made) ...
    int64_t* k_cores           # ... each class's cores, memory, GPUs and features ...
    int64_t* k_mem
    int64_t* k_gpu
    uint64_t* k_feat
    uint8_t* k_ok              # ... (scratch of nm_eligible: the classes whose nodes may give a job a core)
    int64_t* free_mem          # memory and GPUs no running job holds, now
    int64_t* free_gpu
    # what each job asks (per job index; grown with the job table)
    int64_t* mpc               # memory per core (MB; 0: none) ...
    int64_t* mpn               # ... or per node
    int64_t* gpn               # GPUs per node
    int64_t* minn              # nodes at least ...
    int64_t* maxn              # ... and at most (0: any)
    uint64_t* jfeat            # features every node must have
    uint64_t* jpart            # the partitions a job may run in, a bit each (0: any; npart NULL: no partitions)
    uint64_t* npart            # (nn) the partitions each node is in, a bit each (NULL: partitions not modelled)
    uint64_t pall              # every partition with a node
    int32_t* wlo               # the first and last words of a running job's units (set at its start:
    int32_t* whi               # a plan build scans only those) ...
    int32_t* nused             # ... and its nodes
    int64_t heads              # passes whose first job not fitting now ...
    int64_t heads_cores_free   # ... had enough free cores (memory, GPUs, features or node shape held it)
    int64_t jcap               # room in the job columns
    # a pass's plan (built at its first misfit, like the unit profile)
    NodeLine* line             # one per node
    int64_t* times             # the candidate starts: now and every time a node gains resources,
    int64_t ntimes             # ... sorted, distinct
    int64_t times_cap
    # scratch (nn each)
    int64_t* cpu               # cores each node can give
    int64_t* take              # cores taken from each node (the answer of a search) ...
    int32_t* tlist             # ... zero but on the nodes listed here, those the last choice gave cores
    int64_t ntlist             # (each choice clears only these: on 160,000 nodes a whole reset cost
    bint tdirty                # more than the choice), unless tdirty: take may hold any values
    int64_t* avail             # _eval's per-run copy
    int64_t* cut               # _choose_nodes's reduced counts
    int64_t* r_cpus            # runs of consecutive usable nodes: cores, nodes, first, last
    int64_t* r_nodes
    int64_t* r_first
    int64_t* r_last
    int64_t* r_w               # ... and their scheduling weight
    int64_t* jn_node           # (scratch of nm_job_nodes: a running job's nodes, its cores on each,
    int64_t* jn_all            # and those of them up)
    int64_t* jn_up
    int64_t* wt                # each node's scheduling weight (Slurm's sched_weight; NULL: all equal):
                               # runs break where it changes, the lowest is taken first (slurm_space.pxd)
    int32_t* elig              # the nodes a job may use at all (features, capacity) ...
    int64_t nelig
    bint elig_ok               # ... worked out for this ask (per node memory and GPUs, features)
    int64_t e_mpc, e_mpn, e_gpn
    uint64_t e_feat
    int64_t* pcpu              # the search's cores each node can give over the candidate's window
    int32_t* pos               # the eligible nodes that give any at the candidate Slurm's choice was
    int64_t npos               # last made at (ascending: the only nodes with cores in cpu)
    uint64_t* givers           # the search's eligible nodes that give any now (pcpu > 0), a bit each
    const int32_t* take_among  # the only nodes the last choice may have given cores (take; ascending;
    int64_t ntake_among        # NULL: any node)
    int64_t pick_lo, pick_hi   # the words nm_pick_units last wrote bits in (pick_hi < pick_lo: none)
    const uint64_t* use_units  # (job_start: nm_use of use_units reads only its words use_lo .. use_hi)
    int64_t use_lo, use_hi
    int32_t* open              # nodes with free cores now in the plan (some may have lost them since),
    int64_t nopen              # most free memory first ...
    int32_t* open_pos          # ... and where each node is in it (-1: not there)
    bint open_ok               # ... made (by the plan's first test of a start now only, if it has one)
    int64_t* sortkey           # (scratch)
    int64_t now_t              # the plan's now and its free cores, memory and GPUs then, all nodes
    int64_t now_c, now_m, now_g
    int64_t* ev                # every plan point after now, in time order (of nodes within a time: any):
                               # time << 20 | node ...
    int64_t nev, ev_cap
    int64_t* evx               # ... but those added since ev was made or last merged with them,
    int64_t nevx, evx_cap      # kept apart in time order (a point joins a short list, not a long one)
    bint ev_ok                 # (ev and evx are made for this plan)
    int64_t* pidx              # (scratch of its making)
    int64_t pidx_cap
    int64_t* tcnt
    int64_t tcnt_cap
    bint failed                # a search ran out of memory (the pass reports it)
    uint8_t* is_elig           # (nn) the nodes in elig
    # what a search leaves for the next one (nm_find_start_search): every eligible node's window
    # [w_t, w_stop) for the ask w_mpc, w_mpn, w_gpn, w_feat (its cursor, last point, queue and pcpu)
    # and their sums. The next search from the same window with the same ask (most often a job like
    # the one before, from the start that job found) finds again only the nodes changed since.
    bint w_ok
    bint w_never               # (tests) no search takes over the last one's windows or skips a node
    int64_t w_t, w_stop, w_total, w_used
    int64_t w_mpc, w_mpn, w_gpn
    uint64_t w_feat
    int32_t* chg               # (nn) the nodes whose line or window changed since the last search ...
    int64_t nchg               # ... (NodeLine.changed: each at most once)
    int64_t* zero_to           # (nn) a search's eligible node that gives the job nothing because of a
                               # point in its window: from when it may give again (that point's
                               # successor's time, whose index NodeLine.cur then holds; INF: never);
                               # its window is not kept meanwhile. -1: its window is kept (cursor,
                               # last point, queue)
    NodeSplit* split           # a helper thread for the searches' per-node set-up (NULL: none)
    # requests that found no start in this pass (the plan only loses resources within a pass, so a
    # job asking the same per node, at least as many cores and at least as long, finds none either)
    int64_t mf_job[MISFITS_MAX]    # a job with that request ...
    uint64_t mf_feat[MISFITS_MAX]  # ... its features then (a job of several partitions: a record's) ...
    int64_t mf_cores[MISFITS_MAX]  # ... its cores ...
    int64_t mf_d[MISFITS_MAX]      # ... and duration
    bint mf_now[MISFITS_MAX]       # ... found no start now (else: none within the window)
    int64_t nmf
    int64_t mf_next
    # starts found in this pass: a job asking at least as much of each node, of any nodes (at most
    # one node at least), no fewer cores and no shorter, starts no earlier (there it fits exactly when the nodes'
    # cores for it add up to its own, and the plan only loses resources within a pass)
    int64_t fs_job[STARTS_MAX]
    uint64_t fs_feat[STARTS_MAX]
    int64_t fs_cores[STARTS_MAX]
    int64_t fs_d[STARTS_MAX]
    int64_t fs_t[STARTS_MAX]
    int64_t nfs
    int64_t fs_next


cdef inline int nm_alloc(NodeModel* M, int64_t nn, int64_t units) noexcept nogil:
    # the arrays of a cluster of nn nodes over `units` units (filled by the caller; nm_free frees
    # them, also after a failure)
    M.nn = nn
    M.first = <int64_t*>malloc((nn + 1) * sizeof(int64_t))
    M.node_of = <int32_t*>malloc((units if units > 0 else 1) * sizeof(int32_t))
    M.cap_mem = <int64_t*>malloc(nn * sizeof(int64_t))
    M.cap_gpu = <int64_t*>malloc(nn * sizeof(int64_t))
    M.feat = <uint64_t*>malloc(nn * sizeof(uint64_t))
    M.free_mem = <int64_t*>malloc(nn * sizeof(int64_t))
    M.free_gpu = <int64_t*>malloc(nn * sizeof(int64_t))
    M.line = <NodeLine*>calloc(nn, sizeof(NodeLine))
    M.cpu = <int64_t*>malloc(nn * sizeof(int64_t))
    M.take = <int64_t*>malloc(nn * sizeof(int64_t))
    M.tlist = <int32_t*>malloc(nn * sizeof(int32_t))
    M.ntlist = 0
    M.tdirty = True
    M.avail = <int64_t*>malloc(nn * sizeof(int64_t))
    M.cut = <int64_t*>malloc(nn * sizeof(int64_t))
    M.r_cpus = <int64_t*>malloc(nn * sizeof(int64_t))
    M.r_nodes = <int64_t*>malloc(nn * sizeof(int64_t))
    M.r_first = <int64_t*>malloc(nn * sizeof(int64_t))
    M.r_last = <int64_t*>malloc(nn * sizeof(int64_t))
    M.r_w = <int64_t*>malloc(nn * sizeof(int64_t))
    M.jn_node = <int64_t*>malloc(nn * sizeof(int64_t))
    M.jn_all = <int64_t*>malloc(nn * sizeof(int64_t))
    M.jn_up = <int64_t*>malloc(nn * sizeof(int64_t))
    M.elig = <int32_t*>malloc(nn * sizeof(int32_t))
    M.pcpu = <int64_t*>malloc(nn * sizeof(int64_t))
    M.open = <int32_t*>malloc(nn * sizeof(int32_t))
    M.is_elig = <uint8_t*>calloc(nn, sizeof(uint8_t))
    M.open_pos = <int32_t*>malloc(nn * sizeof(int32_t))
    M.sortkey = <int64_t*>malloc(nn * sizeof(int64_t))
    M.chg = <int32_t*>malloc(nn * sizeof(int32_t))
    M.zero_to = <int64_t*>malloc(nn * sizeof(int64_t))
    M.pos = <int32_t*>malloc(nn * sizeof(int32_t))
    M.npos = 0
    M.givers = <uint64_t*>calloc((nn + 63) >> 6, sizeof(uint64_t))
    M.take_among = NULL
    M.cnt_hi = 0                       # (one count, GPUs, until the cluster says otherwise)
    M.cnt_w = 64
    M.cnt_g0 = -1
    M.elig_ok = False
    M.w_ok = False
    M.nchg = 0
    if (M.chg == NULL or M.zero_to == NULL or M.pos == NULL or M.givers == NULL or M.r_w == NULL or M.jn_node == NULL or M.jn_all == NULL or M.jn_up == NULL or M.first == NULL or M.node_of == NULL or M.cap_mem == NULL or M.cap_gpu == NULL or M.feat == NULL
            or M.free_mem == NULL or M.free_gpu == NULL or M.line == NULL or M.cpu == NULL or M.take == NULL
            or M.tlist == NULL
            or M.avail == NULL or M.cut == NULL or M.r_cpus == NULL or M.r_nodes == NULL
            or M.r_first == NULL or M.r_last == NULL or M.elig == NULL or M.pcpu == NULL
            or M.open == NULL or M.open_pos == NULL or M.sortkey == NULL or M.is_elig == NULL):
        return RC_NO_MEMORY
    return RC_OK


cdef inline int nm_make_classes(NodeModel* M) noexcept nogil:
    # the nodes' classes (nodes of identical cores, memory, GPUs and features), numbered in the
    # order of their first node, by a table of open addressing (a cluster of any size in one pass)
    cdef int64_t nn = M.nn, size = 16, i, h, k, cores
    cdef int32_t* table
    free(M.class_of); free(M.k_cores); free(M.k_mem); free(M.k_gpu); free(M.k_feat); free(M.k_ok)
    M.ncls = 0
    M.class_of = <int32_t*>malloc((nn if nn > 0 else 1) * sizeof(int32_t))
    M.k_cores = <int64_t*>malloc((nn if nn > 0 else 1) * sizeof(int64_t))
    M.k_mem = <int64_t*>malloc((nn if nn > 0 else 1) * sizeof(int64_t))
    M.k_gpu = <int64_t*>malloc((nn if nn > 0 else 1) * sizeof(int64_t))
    M.k_feat = <uint64_t*>malloc((nn if nn > 0 else 1) * sizeof(uint64_t))
    M.k_ok = <uint8_t*>malloc((nn if nn > 0 else 1) * sizeof(uint8_t))
    while size < 2 * nn:
        size <<= 1
    table = <int32_t*>malloc(size * sizeof(int32_t))
    if (table == NULL or M.class_of == NULL or M.k_cores == NULL or M.k_mem == NULL or M.k_gpu == NULL
            or M.k_feat == NULL or M.k_ok == NULL):
        free(table)
        return RC_NO_MEMORY
    memset(table, 0xFF, size * sizeof(int32_t))
    for i in range(nn):
        cores = M.first[i + 1] - M.first[i]
        h = <int64_t>((<uint64_t>cores * <uint64_t>0x1E3779B97F4A7C15 ^ <uint64_t>M.cap_mem[i] * <uint64_t>0x42B2AE3D27D4EB4F
                       ^ <uint64_t>M.cap_gpu[i] * <uint64_t>0x165667B19E3779F9
                       ^ M.feat[i] * <uint64_t>0x27D4EB2F165667C5) >> 20)
        h &= size - 1
        while True:
            k = table[h]
            if k < 0:                  # a new class
                k = M.ncls
                M.ncls += 1
                table[h] = <int32_t>k
                M.k_cores[k] = cores
                M.k_mem[k] = M.cap_mem[i]
                M.k_gpu[k] = M.cap_gpu[i]
                M.k_feat[k] = M.feat[i]
                break
            if (M.k_cores[k] == cores and M.k_mem[k] == M.cap_mem[i] and M.k_gpu[k] == M.cap_gpu[i]
                    and M.k_feat[k] == M.feat[i]):
                break
            h = (h + 1) & (size - 1)
        M.class_of[i] = <int32_t>k
    free(table)
    return RC_OK


cdef inline void nm_free(NodeModel* M) noexcept nogil:
    cdef int64_t i
    if M.line != NULL:
        for i in range(M.nn):
            free(M.line[i].t); free(M.line[i].c); free(M.line[i].m); free(M.line[i].g)
            free(M.line[i].qp); free(M.line[i].qf)
    free(M.line)
    free(M.first); free(M.node_of); free(M.cap_mem); free(M.cap_gpu); free(M.feat)
    free(M.class_of); free(M.k_cores); free(M.k_mem); free(M.k_gpu); free(M.k_feat); free(M.k_ok)
    free(M.free_mem); free(M.free_gpu)
    free(M.mpc); free(M.mpn); free(M.gpn); free(M.minn); free(M.maxn); free(M.jfeat); free(M.jpart); free(M.npart)
    free(M.times)
    free(M.cpu); free(M.take); free(M.tlist); free(M.avail); free(M.cut)
    free(M.r_cpus); free(M.r_nodes); free(M.r_first); free(M.r_last); free(M.r_w); free(M.elig)
    free(M.wlo); free(M.whi); free(M.nused); free(M.pcpu); free(M.open); free(M.open_pos)
    free(M.ev); free(M.evx); free(M.is_elig); free(M.pidx); free(M.tcnt)
    free(M.sortkey); free(M.jn_node); free(M.jn_all); free(M.jn_up); free(M.chg); free(M.zero_to); free(M.pos)
    free(M.givers)
    memset(M, 0, sizeof(NodeModel))


cdef inline int nm_reserve_jobs(NodeModel* M, int64_t n) noexcept nogil:
    # room for n jobs' requests (new rows: one core's worth, one node, no memory, GPU or feature)
    cdef int64_t cap = M.jcap, i
    if n <= M.jcap:
        return RC_OK
    cap = M.jcap
    if grow(<void**>&M.mpc, &cap, n, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.mpn, &cap, n, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.gpn, &cap, n, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.minn, &cap, n, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.maxn, &cap, n, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.jfeat, &cap, n, sizeof(uint64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.jpart, &cap, n, sizeof(uint64_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.wlo, &cap, n, sizeof(int32_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.whi, &cap, n, sizeof(int32_t)) != RC_OK: return RC_NO_MEMORY
    cap = M.jcap
    if grow(<void**>&M.nused, &cap, n, sizeof(int32_t)) != RC_OK: return RC_NO_MEMORY
    for i in range(M.jcap, cap):
        M.mpc[i] = 0
        M.mpn[i] = 0
        M.gpn[i] = 0
        M.minn[i] = 1
        M.maxn[i] = 0
        M.jfeat[i] = 0
        M.jpart[i] = 0
        M.wlo[i] = 0
        M.whi[i] = -1
        M.nused[i] = 0
    M.jcap = cap
    return RC_OK


cdef inline int64_t nm_job_mem(const NodeModel* M, int64_t j, int64_t cores) noexcept nogil:
    # the memory job j holds on a node where it has `cores` cores
    return cores * M.mpc[j] + M.mpn[j]


# ---- live use

cdef inline uint64_t nm_node_bits(NodeModel* M, int64_t w, uint64_t x, int64_t i) noexcept nogil:
    # the bits of word w of x that are node i's units (i: the node of x's lowest bit); a node's units
    # are consecutive, so its bits in a word are one run: counted by popcount, not bit by bit (a node
    # of 128 cores is two words, not 128 steps)
    cdef int64_t e = M.first[i + 1] - w * 64
    if e >= 64:
        return x
    return x & (((<uint64_t>1) << e) - 1)


cdef inline void nm_use(NodeModel* M, const uint64_t* units, int64_t W, int64_t j, int64_t sign) noexcept nogil:
    # job j takes (sign -1) or gives back (+1) the memory and GPUs of its units' nodes
    cdef int64_t w, i, c, last = -1, lo = -1, hi = -1, nodes = 0, wa = 0, wb = W - 1
    cdef uint64_t x, seg
    c = 0
    if sign > 0 and M.wlo[j] >= 0 and M.whi[j] >= M.wlo[j]:
        wa = M.wlo[j]                  # (its words, as its start found them)
        wb = M.whi[j]
    elif sign < 0 and units == M.use_units and M.use_hi >= M.use_lo:
        wa = M.use_lo
        wb = M.use_hi
    for w in range(wa, wb + 1):
        x = units[w]
        if x:
            if lo < 0:
                lo = w
            hi = w
        while x:
            i = M.node_of[w * 64 + __builtin_ctzll(x)]
            seg = nm_node_bits(M, w, x, i)
            x &= ~seg
            if i != last:
                if last >= 0:
                    M.free_mem[last] += sign * nm_job_mem(M, j, c)
                    M.free_gpu[last] += sign * M.gpn[j]
                last = i
                c = 0
                nodes += 1
            c += __builtin_popcountll(seg)
    if last >= 0:
        M.free_mem[last] += sign * nm_job_mem(M, j, c)
        M.free_gpu[last] += sign * M.gpn[j]
    if sign < 0:
        M.wlo[j] = <int32_t>lo
        M.whi[j] = <int32_t>hi
        M.nused[j] = <int32_t>nodes


cdef inline int64_t nm_job_nodes(NodeModel* M, const uint64_t* row, int64_t W, const uint64_t* down,
                                 int64_t ndown, int64_t j) noexcept nogil:
    # running job j's nodes (its units in row), in index order: M.jn_node, with its cores on each
    # (M.jn_all) and those of them that are up (M.jn_up, not in `down`); returns how many nodes
    cdef int64_t w, i, n = 0, lo = M.wlo[j], hi = M.whi[j]
    cdef uint64_t x, seg
    if hi < lo:                        # (its words are not known: all of them)
        lo = 0
        hi = W - 1
    for w in range(lo, hi + 1):
        x = row[w]
        while x:
            i = M.node_of[w * 64 + __builtin_ctzll(x)]
            seg = nm_node_bits(M, w, x, i)
            x &= ~seg
            if n == 0 or M.jn_node[n - 1] != i:
                M.jn_node[n] = i
                M.jn_all[n] = 0
                M.jn_up[n] = 0
                n += 1
            M.jn_all[n - 1] += __builtin_popcountll(seg)
            M.jn_up[n - 1] += __builtin_popcountll(seg & ~down[w]) if ndown > 0 else __builtin_popcountll(seg)
    return n


cdef inline void nm_note_head(NodeModel* M, int64_t cores, int64_t free_cores) noexcept nogil:
    # a pass's first job that does not fit now: was it held by more than cores?
    M.heads += 1
    if free_cores >= cores:
        M.heads_cores_free += 1


cdef inline int64_t nm_range_count(const uint64_t* bits, int64_t lo, int64_t hi) noexcept nogil:
    # set bits among units lo .. hi - 1
    cdef int64_t w, c = 0, wl = lo >> 6, wh = (hi - 1) >> 6
    cdef uint64_t x
    if hi <= lo:
        return 0
    for w in range(wl, wh + 1):
        x = bits[w]
        if w == wl and (lo & 63):
            x &= ~((<uint64_t>1 << (lo & 63)) - 1)
        if w == wh and (hi & 63):
            x &= (<uint64_t>1 << (hi & 63)) - 1
        c += __builtin_popcountll(x)
    return c


cdef inline void nm_pick_units(NodeModel* M, const uint64_t* free_units, uint64_t* out, int64_t W) noexcept nogil:
    # out = for every node, its take[i] lowest free units (M.pick_lo .. pick_hi: the words written);
    # only the nodes of M.tlist have any unless take may hold anything
    cdef int64_t i, u, need, x, lo = W, hi = -1
    memset(out, 0, W * sizeof(uint64_t))
    for x in range(M.nn if M.tdirty else M.ntlist):
        i = x if M.tdirty else M.tlist[x]
        need = M.take[i]
        u = M.first[i]
        while need > 0 and u < M.first[i + 1]:
            if free_units[u >> 6] & (<uint64_t>1 << (u & 63)):
                out[u >> 6] |= <uint64_t>1 << (u & 63)
                need -= 1
                if (u >> 6) < lo:
                    lo = u >> 6
                if (u >> 6) > hi:
                    hi = u >> 6
            u += 1
    M.pick_lo = lo
    M.pick_hi = hi


# ---- what a search leaves for the next one

cdef inline void nm_changed(NodeModel* M, int64_t i) noexcept nogil:
    # node i's line (its points, their values) or its window state changed outside a search's sweep:
    # the next search that takes over the last one's windows finds node i's window again
    cdef NodeLine* L = &M.line[i]
    if not L.changed:
        L.changed = True
        M.chg[M.nchg] = <int32_t>i
        M.nchg += 1


cdef inline void nm_changes_seen(NodeModel* M) noexcept nogil:
    # every node's window is now up to date (the list of changed nodes empties)
    cdef int64_t x
    for x in range(M.nchg):
        M.line[M.chg[x]].changed = False
    M.nchg = 0


cdef inline void nm_forget_windows(NodeModel* M) noexcept nogil:
    # no search's windows are kept (a new plan, or a copy of one)
    M.w_ok = False
    if M.chg != NULL and M.line != NULL:
        nm_changes_seen(M)


cdef inline bint nm_windows_kept(const NodeModel* M, int64_t j, int64_t t, int64_t stop) noexcept nogil:
    # does the last search's windows state hold job j's first window [t, stop)? (the same window
    # and what job j asks of a node: nm_node_cpus reads nothing else of the job)
    return (M.w_ok and M.w_t == t and M.w_stop == stop and M.w_mpc == M.mpc[j] and M.w_mpn == M.mpn[j]
            and M.w_gpn == M.gpn[j] and M.w_feat == M.jfeat[j])


cdef inline void nm_windows_keep(NodeModel* M, int64_t j, int64_t t, int64_t stop, int64_t total,
                                 int64_t used) noexcept nogil:
    # a search ends with every eligible node's window at [t, stop): the next one may take them over
    M.w_ok = not M.w_never
    M.w_t = t
    M.w_stop = stop
    M.w_total = total
    M.w_used = used
    M.w_mpc = M.mpc[j]
    M.w_mpn = M.mpn[j]
    M.w_gpn = M.gpn[j]
    M.w_feat = M.jfeat[j]


# ---- per-node capacity: what a node can give

cdef inline int64_t nm_node_cpus(const NodeModel* M, int64_t j, int64_t i, int64_t c, int64_t m, int64_t g) noexcept nogil:
    # how many of job j's cores node i can give with c cores, m MB and g GPUs free (Slurm's cpu_cnt
    # under CR_Core_Memory; nodes_ref.node_cpus)
    if not cnt_fits(g, M.gpn[j], M.cnt_hi) or (M.jfeat[j] & ~M.feat[i]) != 0:
        return 0
    if M.mpc[j] > 0 and m < c * M.mpc[j]:     # (m // mpc < c, without a division where memory is ample)
        if m <= 0:
            return 0
        if (m >> 32) == 0 and (M.mpc[j] >> 32) == 0:   # (a 32-bit division is several times quicker)
            c = <int64_t>(<uint32_t>m // <uint32_t>M.mpc[j])
        else:
            c = m // M.mpc[j]
    if M.mpn[j] > m:
        return 0
    return c if c > 0 else 0


cdef inline void nm_eligible(NodeModel* M, int64_t j) noexcept nogil:
    # the nodes that could ever give job j a core (features, GPUs, memory for one core); kept while
    # the jobs tested ask the same of a node
    cdef int64_t i, k
    if (M.elig_ok and M.e_mpc == M.mpc[j] and M.e_mpn == M.mpn[j] and M.e_gpn == M.gpn[j]
            and M.e_feat == M.jfeat[j]):
        return
    # (nm_node_cpus(capacity) > 0 without its division: memory for one core and the per-node ask;
    # asked once per class of identical nodes)
    for i in range(M.nelig if M.elig_ok else 0):
        M.is_elig[M.elig[i]] = 0
    M.nelig = 0
    if M.class_of != NULL and M.k_ok != NULL:
        for k in range(M.ncls):
            M.k_ok[k] = (cnt_fits(M.k_gpu[k], M.gpn[j], M.cnt_hi) and (M.jfeat[j] & ~M.k_feat[k]) == 0 and M.mpn[j] <= M.k_mem[k]
                         and M.mpc[j] <= M.k_mem[k] and M.k_cores[k] > 0)
        for i in range(M.nn):
            if M.k_ok[M.class_of[i]]:
                M.elig[M.nelig] = <int32_t>i
                M.is_elig[i] = 1
                M.nelig += 1
    else:
        for i in range(M.nn):
            if (cnt_fits(M.cap_gpu[i], M.gpn[j], M.cnt_hi) and (M.jfeat[j] & ~M.feat[i]) == 0 and M.mpn[j] <= M.cap_mem[i]
                    and M.mpc[j] <= M.cap_mem[i] and M.first[i + 1] > M.first[i]):
                M.elig[M.nelig] = <int32_t>i
                M.is_elig[i] = 1
                M.nelig += 1
    M.elig_ok = True
    M.e_mpc = M.mpc[j]
    M.e_mpn = M.mpn[j]
    M.e_gpn = M.gpn[j]
    M.e_feat = M.jfeat[j]


# ---- Slurm's node choice

cdef inline void nm_take_clear(NodeModel* M) noexcept nogil:
    # M.take all zero again: only the nodes the last choice gave cores, unless it may hold anything
    cdef int64_t x
    if M.tdirty:
        memset(M.take, 0, M.nn * sizeof(int64_t))
        M.tdirty = False
    else:
        for x in range(M.ntlist):
            M.take[M.tlist[x]] = 0
    M.ntlist = 0


cdef inline void nm_take_put(NodeModel* M, int64_t i, int64_t a) noexcept nogil:
    # node i gives a (> 0) cores to the choice (a choice gives to each node at most once)
    M.take[i] = a
    M.tlist[M.ntlist] = <int32_t>i
    M.ntlist += 1

cdef inline bint _eval_runs(NodeModel* M, const int64_t* cpu, int64_t rem_cpus, int64_t min_nodes,
                            int64_t max_nodes, const int32_t* idx, int64_t nidx) noexcept nogil:
    # cons_res _eval_nodes (consecutive runs, best fit) over cpu[]; M.take gets the answer
    # (with weights M.wt: runs also break where the weight changes, the lowest weight first).
    # idx: the only nodes whose cpu may be positive, ascending (a search's eligible nodes), so that
    # the runs are found without reading the others; NULL: all nodes
    cdef int64_t n = M.nn, i, r, nr = 0, best, bc = 0, bw = 0, a, keep, single, x = 0, m
    cdef int64_t rem_nodes = min_nodes, min_rem = min_nodes
    cdef bint suff, bs = False, new
    nm_take_clear(M)
    M.take_among = idx                 # (take gets cores only among these)
    M.ntake_among = nidx
    # (with idx, the same runs: a node outside idx has no cores to give, so it ends a run as it would)
    m = nidx if idx != NULL else n
    while x < m:
        i = idx[x] if idx != NULL else x
        if cpu[i] > 0:
            M.r_first[nr] = i
            M.r_cpus[nr] = 0
            M.r_nodes[nr] = 0
            M.r_w[nr] = M.wt[i] if M.wt != NULL else 0
            while (x < m and (idx == NULL or idx[x] == i) and cpu[i] > 0
                   and (M.wt == NULL or M.wt[i] == M.r_w[nr])):
                M.r_cpus[nr] += cpu[i]
                M.r_nodes[nr] += 1
                i += 1
                x += 1
            M.r_last[nr] = i - 1
            nr += 1
        else:
            x += 1
    while nr > 0 and max_nodes > 0:
        best = -1
        for r in range(nr):
            if M.r_nodes[r] == 0:
                continue
            suff = M.r_cpus[r] >= rem_cpus and M.r_nodes[r] >= rem_nodes
            if best < 0 or M.r_w[r] < bw:
                new = True
            else:
                new = M.r_w[r] == bw and ((suff and not bs) or (suff and M.r_cpus[r] < bc)
                                          or (not suff and M.r_cpus[r] > bc))
            if new:
                best = r
                bc = M.r_cpus[r]
                bs = suff
                bw = M.r_w[r]
        if best < 0:
            break
        for i in range(M.r_first[best], M.r_last[best] + 1):
            M.avail[i] = cpu[i] if M.take[i] == 0 else 0
        if rem_nodes <= 1:
            # one node still to find: the run's node with the fewest sufficient cores
            single = -1
            for i in range(M.r_first[best], M.r_last[best] + 1):
                if M.take[i] != 0 or cpu[i] < rem_cpus:
                    continue
                if single < 0 or cpu[i] < cpu[single]:
                    single = i
                    if cpu[i] == rem_cpus:
                        break
            if single >= 0:
                for i in range(M.r_first[best], M.r_last[best] + 1):
                    if i != single:
                        M.avail[i] = 0
        for i in range(M.r_first[best], M.r_last[best] + 1):
            if max_nodes <= 0 or (rem_nodes <= 0 and rem_cpus <= 0):
                break
            a = M.avail[i]
            if a <= 0:
                continue
            if max_nodes == 1 and a < rem_cpus:
                continue
            # _cpus_to_use: leave one core for each further node the job must have
            keep = rem_cpus - (min_rem - 1 if min_rem > 1 else 0)
            if keep < 1:
                keep = 1
            if a > keep:
                a = keep
            nm_take_put(M, i, a)
            rem_cpus -= a
            rem_nodes -= 1
            min_rem -= 1
            max_nodes -= 1
        if rem_nodes <= 0 and rem_cpus <= 0:
            return True
        M.r_cpus[best] = 0
        M.r_nodes[best] = 0
    return rem_cpus <= 0 and rem_nodes <= 0


cdef inline bint nm_choose(NodeModel* M, int64_t cores, int64_t min_nodes, int64_t max_nodes) noexcept nogil:
    # nodes for `cores` cores given M.cpu (nodes_ref.eval_nodes): M.take, or False
    return nm_choose_among(M, cores, min_nodes, max_nodes, NULL, 0)


cdef inline bint nm_choose_among(NodeModel* M, int64_t cores, int64_t min_nodes, int64_t max_nodes,
                                 const int32_t* idx, int64_t nidx) noexcept nogil:
    # nm_choose where only the nodes idx (ascending; NULL: all) may have cores in M.cpu
    cdef int64_t n = M.nn, i, x, used = 0, total = 0, top = 0, count, rem, left, a
    cdef int64_t m = nidx if idx != NULL else n
    cdef bint changed
    if max_nodes <= 0:
        max_nodes = n
    for x in range(m):
        i = idx[x] if idx != NULL else x
        if M.cpu[i] > 0:
            used += 1
            total += M.cpu[i]
            if M.cpu[i] > top:
                top = M.cpu[i]
    if min_nodes > max_nodes or used < min_nodes or total < cores:
        return False
    if M.first_fit:
        rem = cores
        left = min_nodes
        used = 0
        nm_take_clear(M)
        M.take_among = idx
        M.ntake_among = nidx
        for x in range(m):
            i = idx[x] if idx != NULL else x
            if M.cpu[i] <= 0 or used >= max_nodes:
                continue
            a = rem - (left - 1 if left > 1 else 0)
            if a < 1:
                a = 1
            if a > M.cpu[i]:
                a = M.cpu[i]
            nm_take_put(M, i, a)
            used += 1
            rem -= a
            left -= 1
            if rem <= 0 and left <= 0:
                return True
        return False
    if _eval_runs(M, M.cpu, cores, min_nodes, max_nodes, idx, nidx):
        return True
    # _choose_nodes: drop nodes with 1, 2, ... usable cores and try again (knapsack traps)
    for x in range(m):
        i = idx[x] if idx != NULL else x
        M.cut[i] = M.cpu[i]
    for count in range(1, top):
        changed = False
        for x in range(m):
            i = idx[x] if idx != NULL else x
            if 0 < M.cut[i] <= count:
                M.cut[i] = 0
                changed = True
        if changed and _eval_runs(M, M.cut, cores, min_nodes, max_nodes, idx, nidx):
            return True
    return False


cdef inline bint nm_never_fits(NodeModel* M, int64_t j, int64_t cores) noexcept nogil:
    # can no set of nodes, all idle, ever hold job j? (whatever weights other jobs left on the nodes)
    cdef int64_t i
    cdef int64_t* wt = M.wt
    cdef bint fits
    for i in range(M.nn):
        M.cpu[i] = nm_node_cpus(M, j, i, M.first[i + 1] - M.first[i], M.cap_mem[i], M.cap_gpu[i])
    M.wt = NULL
    fits = nm_choose(M, cores, M.minn[j], M.maxn[j])
    M.wt = wt
    return not fits


cdef inline bint nm_fits_live(NodeModel* M, int64_t j, int64_t cores, const uint64_t* free_units,
                              uint64_t blocked) noexcept nogil:
    # can job j start now on the nodes as they are (no reservation in the way), but for the nodes of the
    # partitions `blocked`? M.take: where
    cdef int64_t i
    for i in range(M.nn):
        if blocked and (M.npart[i] & blocked):
            M.cpu[i] = 0
            continue
        M.cpu[i] = nm_node_cpus(M, j, i, nm_range_count(free_units, M.first[i], M.first[i + 1]),
                                M.free_mem[i], M.free_gpu[i])
    return nm_choose(M, cores, M.minn[j], M.maxn[j])


# ---- a pass's plan

cdef inline int nl_room(NodeLine* L, int64_t n) noexcept nogil:
    cdef int64_t cap
    cdef void* q
    if n <= L.cap:
        return RC_OK
    cap = L.cap * 2 if L.cap else 8
    while cap < n:
        cap *= 2
    q = realloc(L.t, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    L.t = <int64_t*>q
    q = realloc(L.c, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    L.c = <int64_t*>q
    q = realloc(L.m, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    L.m = <int64_t*>q
    q = realloc(L.g, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    L.g = <int64_t*>q
    q = realloc(L.qp, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    L.qp = <int64_t*>q
    q = realloc(L.qf, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    L.qf = <int64_t*>q
    L.cap = cap
    return RC_OK


cdef inline int nl_gain(NodeLine* L, int64_t t, int64_t dc, int64_t dm, int64_t dg) noexcept nogil:
    # the node gains (dc, dm, dg) from t on; t is not before the last point (the plan is built in
    # time order)
    cdef int64_t p = L.n - 1
    if L.t[p] != t:
        if nl_room(L, L.n + 1) != RC_OK:
            return RC_NO_MEMORY
        p = L.n
        L.t[p] = t
        L.c[p] = L.c[p - 1]
        L.m[p] = L.m[p - 1]
        L.g[p] = L.g[p - 1]
        L.n += 1
    L.c[p] += dc
    L.m[p] += dm
    L.g[p] += dg
    return RC_OK


cdef inline int64_t nl_point(NodeLine* L, int64_t t) noexcept nogil:
    # the index of a point at t (made by splitting the one before it; t >= t[0]); RC_NO_MEMORY: out of memory
    cdef int64_t lo = 0, hi = L.n, mid
    while lo < hi:                         # the first point after t
        mid = (lo + hi) >> 1
        if L.t[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    if L.t[lo - 1] == t:
        return lo - 1
    if nl_room(L, L.n + 1) != RC_OK:
        return RC_NO_MEMORY
    memmove(L.t + lo + 1, L.t + lo, (L.n - lo) * sizeof(int64_t))
    memmove(L.c + lo + 1, L.c + lo, (L.n - lo) * sizeof(int64_t))
    memmove(L.m + lo + 1, L.m + lo, (L.n - lo) * sizeof(int64_t))
    memmove(L.g + lo + 1, L.g + lo, (L.n - lo) * sizeof(int64_t))
    L.t[lo] = t
    L.c[lo] = L.c[lo - 1]
    L.m[lo] = L.m[lo - 1]
    L.g[lo] = L.g[lo - 1]
    L.n += 1
    return lo


cdef inline int nl_hold(NodeLine* L, int64_t t, int64_t stop, int64_t dc, int64_t dm, int64_t dg) noexcept nogil:
    # a placement holds (dc, dm, dg) over [t, stop)
    cdef int64_t a = nl_point(L, t), b, p
    if a < 0:
        return RC_NO_MEMORY
    b = nl_point(L, stop)
    if b < 0:
        return RC_NO_MEMORY
    for p in range(a, b):
        L.c[p] -= dc
        L.m[p] -= dm
        L.g[p] -= dg
    return RC_OK


cdef inline int64_t nl_least(NodeLine* L, int64_t t, int64_t stop, int64_t* c, int64_t* m, int64_t* g, uint64_t hi,
                             int64_t w) noexcept nogil:
    # the least free cores, memory and GPUs over [t, stop) (GPUs: counts.pxd's lanes hi, w); the cursor
    # moves forward with t (the search's candidates come in time order). Returns the first point at or
    # after stop (L.n: none).
    cdef int64_t p
    while L.cur + 1 < L.n and L.t[L.cur + 1] <= t:
        L.cur += 1
    p = L.cur
    c[0] = L.c[p]
    m[0] = L.m[p]
    g[0] = L.g[p]
    p += 1
    while p < L.n and L.t[p] < stop:
        if L.c[p] < c[0]: c[0] = L.c[p]
        if L.m[p] < m[0]: m[0] = L.m[p]
        g[0] = cnt_min(g[0], L.g[p], hi, w)
        p += 1
    return p


cdef inline int64_t _first_at(const int64_t* a, int64_t n, int64_t v) noexcept nogil:
    # the first index of the sorted a[0:n] holding v or more (n: none); without a branch on the data
    # (the halves are chosen by a conditional move: a search's places are unpredictable)
    cdef int64_t base = 0, half
    if n <= 0:
        return 0
    while n > 1:
        half = n >> 1
        base = base + half if a[base + half] < v else base
        n -= half
    return base + (a[base] < v)


cdef inline int _desc(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x < y) - (x > y)


cdef inline int nm_plan_ready(NodeModel* M) noexcept nogil:
    # a built plan's totals now
    cdef int64_t i
    cdef NodeLine* L
    M.now_c = 0
    M.now_m = 0
    M.now_g = 0
    M.now_t = M.times[0]
    for i in range(M.nn):
        L = &M.line[i]
        M.now_c += L.c[0]
        M.now_m += L.m[0] if L.m[0] > 0 else 0
        M.now_g += L.g[0] & M.cnt_g0    # (GPUs only: the quick test of a start now)
    M.open_ok = False                  # (made by the plan's first test of a start now, if it has one)
    M.ev_ok = False                    # (made by build_node_plan, else by the pass's first search)
    nm_forget_windows(M)               # (a new plan)
    return RC_OK


cdef inline void nm_open_make(NodeModel* M) noexcept nogil:
    # the nodes with free cores now by free memory (most first): a test of a start now stops at the
    # first node without the job's memory for one core. Made at the plan's first such test: nodes
    # only lose cores and memory now within a pass, so the nodes with free cores then are those with
    # free cores at the build less those that lost them (which a test skips), kept in order since
    # by nm_open_less; which of two nodes with as much memory comes first changes no test's answer
    cdef int64_t i, k = 0
    cdef NodeLine* L
    for i in range(M.nn):
        L = &M.line[i]
        M.open_pos[i] = -1
        if L.c[0] > 0:
            # memory (clamped to 2^42 MB) above, the node's index below: one sortable number
            M.sortkey[k] = ((L.m[0] if L.m[0] < (<int64_t>1 << 42) else (<int64_t>1 << 42) - 1) << 20) | (0xFFFFF - i)
            k += 1
    qsort(M.sortkey, k, sizeof(int64_t), _desc)
    for i in range(k):
        M.open[i] = <int32_t>(0xFFFFF - (M.sortkey[i] & 0xFFFFF))
        M.open_pos[M.open[i]] = <int32_t>i
    M.nopen = k
    M.open_ok = True


cdef inline int nm_make_events(NodeModel* M) noexcept nogil:
    # every plan point after now, in time order (nodes ascending within a time): a counting sort by
    # the point's place among the candidate times, which hold every point's time
    cdef int64_t i, k = 0, p, x, T = M.ntimes, lo, hi, s, v
    cdef NodeLine* L
    for i in range(M.nn):
        k += M.line[i].n - 1
    if (grow(<void**>&M.ev, &M.ev_cap, k + 1, sizeof(int64_t)) != RC_OK
            or grow(<void**>&M.pidx, &M.pidx_cap, k + 1, sizeof(int64_t)) != RC_OK
            or grow(<void**>&M.tcnt, &M.tcnt_cap, T + 1, sizeof(int64_t)) != RC_OK):
        return RC_NO_MEMORY
    memset(M.tcnt, 0, (T + 1) * sizeof(int64_t))
    k = 0
    for i in range(M.nn):
        L = &M.line[i]
        x = 0
        for p in range(1, L.n):
            if L.t[p] >= EV_T_MAX:
                return RC_TIME_RANGE
            # (a line's points ascend: the place of each from the last one's, by doubling steps)
            v = L.t[p]
            lo = x
            hi = x + 1
            s = 1
            while hi < T and M.times[hi] < v:
                lo = hi
                s <<= 1
                hi = lo + s
            if hi > T:
                hi = T
            x = lo + _first_at(M.times + lo, hi - lo, v)
            M.pidx[k] = x
            M.tcnt[x + 1] += 1
            k += 1
    for x in range(T):
        M.tcnt[x + 1] += M.tcnt[x]
    k = 0
    for i in range(M.nn):
        L = &M.line[i]
        for p in range(1, L.n):
            x = M.pidx[k]
            M.ev[M.tcnt[x]] = (L.t[p] << 20) | i
            M.tcnt[x] += 1
            k += 1
    M.nev = k
    M.nevx = 0
    M.ev_ok = True
    return RC_OK


cdef inline int nm_ev_append(NodeModel* M, int64_t t, int64_t i) noexcept nogil:
    # (a plan's build, whose points come in time order) a new point of node i at t joins the events
    if grow(<void**>&M.ev, &M.ev_cap, M.nev + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    M.ev[M.nev] = (t << 20) | i
    M.nev += 1
    return RC_OK


cdef inline int nm_ev_insert(NodeModel* M, int64_t t, int64_t i) noexcept nogil:
    # a new plan point of node i at t joins the events (those added wait in evx, at most EVX_MAX,
    # then join ev all at once: ev may hold every point of a plan of deep queues)
    cdef int64_t key = (t << 20) | i, lo
    if t >= EV_T_MAX:
        return RC_TIME_RANGE
    if M.nevx >= EVX_MAX and nm_ev_merge(M) != RC_OK:
        return RC_NO_MEMORY
    if grow(<void**>&M.evx, &M.evx_cap, EVX_MAX, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    lo = _first_at(M.evx, M.nevx, key)
    memmove(M.evx + lo + 1, M.evx + lo, (M.nevx - lo) * sizeof(int64_t))
    M.evx[lo] = key
    M.nevx += 1
    return RC_OK


cdef inline int nm_ev_merge(NodeModel* M) noexcept nogil:
    # the points waiting in evx join ev (a merge from the back: each key is a point's, so none is
    # in both; ev in time order, evx in key order, so the merge is in time order)
    cdef int64_t a = M.nev - 1, b = M.nevx - 1, k = M.nev + M.nevx - 1
    if grow(<void**>&M.ev, &M.ev_cap, M.nev + M.nevx + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    while b >= 0:
        if a >= 0 and M.ev[a] > M.evx[b]:
            M.ev[k] = M.ev[a]
            a -= 1
        else:
            M.ev[k] = M.evx[b]
            b -= 1
        k -= 1
    M.nev += M.nevx
    M.nevx = 0
    return RC_OK


cdef inline void nm_open_less(NodeModel* M, int64_t i) noexcept nogil:
    # node i lost memory now: it moves down the list to keep it sorted
    cdef int64_t p
    cdef int32_t o
    if not M.open_ok:
        return
    p = M.open_pos[i]
    if p < 0:
        return
    while p + 1 < M.nopen and M.line[M.open[p + 1]].m[0] > M.line[i].m[0]:
        o = M.open[p + 1]
        M.open[p] = o
        M.open_pos[o] = <int32_t>p
        p += 1
    M.open[p] = <int32_t>i
    M.open_pos[i] = <int32_t>p


cdef inline int nm_add_time(NodeModel* M, int64_t t) noexcept nogil:
    # t joins the candidate starts
    cdef int64_t lo = 0, hi = M.ntimes, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if M.times[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    if lo < M.ntimes and M.times[lo] == t:
        return RC_OK
    if grow(<void**>&M.times, &M.times_cap, M.ntimes + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    memmove(M.times + lo + 1, M.times + lo, (M.ntimes - lo) * sizeof(int64_t))
    M.times[lo] = t
    M.ntimes += 1
    return RC_OK


cdef inline bint nm_same_ask(const NodeModel* M, int64_t a, int64_t b, uint64_t bfeat) noexcept nogil:
    # jobs a and b (b with the features bfeat it had then) ask the same of each node
    return (M.mpc[a] == M.mpc[b] and M.mpn[a] == M.mpn[b] and M.gpn[a] == M.gpn[b] and M.minn[a] == M.minn[b]
            and M.maxn[a] == M.maxn[b] and M.jfeat[a] == bfeat)


cdef inline bint nm_asks_more(const NodeModel* M, int64_t b, int64_t a, uint64_t afeat) noexcept nogil:
    # job b asks at least what job a (with the features afeat it had then) asks of every node it uses (so
    # no node gives b more cores)
    return (M.mpc[b] >= M.mpc[a] and M.mpn[b] >= M.mpn[a] and cnt_fits(M.gpn[b], M.gpn[a], M.cnt_hi)
            and (afeat & ~M.jfeat[b]) == 0)


cdef inline bint nm_known_misfit(const NodeModel* M, int64_t j, int64_t cores, int64_t d, bint now_only) noexcept nogil:
    # a job asking the same per node, no fewer cores and no shorter, found no start in this pass
    # (one with no start now says nothing of a full search)
    cdef int64_t x
    for x in range(M.nmf):
        if (cores >= M.mf_cores[x] and d >= M.mf_d[x] and (now_only or not M.mf_now[x])
                and nm_same_ask(M, j, M.mf_job[x], M.mf_feat[x])):
            return True
    return False


cdef inline void nm_note_misfit(NodeModel* M, int64_t j, int64_t cores, int64_t d, bint now_only) noexcept nogil:
    cdef int64_t x = M.nmf if M.nmf < MISFITS_MAX else M.mf_next
    if M.nmf < MISFITS_MAX:
        M.nmf += 1
    else:
        M.mf_next = (M.mf_next + 1) % MISFITS_MAX
    M.mf_job[x] = j
    M.mf_feat[x] = M.jfeat[j]
    M.mf_cores[x] = cores
    M.mf_d[x] = d
    M.mf_now[x] = now_only


cdef inline int64_t nm_find_start(NodeModel* M, int64_t j, int64_t cores, int64_t d, int64_t now, int64_t t_from,
                                  bint now_only, int64_t window, int64_t resolution) noexcept nogil:
    # The earliest candidate start t >= t_from (>= now) at which nodes can be chosen for job j with the
    # resources free throughout [t, round_up(t + d)); M.take gets them. NO_START: none (now_only, or
    # beyond the window). A start is only ever worth trying where some node gains resources.
    cdef int64_t x, i, n, t, stop, c, m, g, total, used, p
    cdef NodeLine* L
    cdef int64_t bound = now
    if nm_known_misfit(M, j, cores, d, now_only):
        return NO_START
    if M.minn[j] <= 1 and M.maxn[j] == 0:
        for x in range(M.nfs):
            if (cores >= M.fs_cores[x] and d >= M.fs_d[x] and M.fs_t[x] > bound
                    and nm_asks_more(M, j, M.fs_job[x], M.fs_feat[x])):
                bound = M.fs_t[x]
    if bound > t_from:
        if now_only:
            return NO_START
        t = nm_find_start_search(M, j, cores, d, now, bound, False, window, resolution)
    else:
        t = nm_find_start_search(M, j, cores, d, now, t_from, now_only, window, resolution)
    if t_from == now:
        if t < 0:
            nm_note_misfit(M, j, cores, d, now_only)
        elif M.minn[j] <= 1 and M.maxn[j] == 0:
            x = M.nfs if M.nfs < STARTS_MAX else M.fs_next
            if M.nfs < STARTS_MAX:
                M.nfs += 1
            else:
                M.fs_next = (M.fs_next + 1) % STARTS_MAX
            M.fs_job[x] = j
            M.fs_feat[x] = M.jfeat[j]
            M.fs_cores[x] = cores
            M.fs_d[x] = d
            M.fs_t[x] = t
    return t


cdef inline int64_t nm_start_now(NodeModel* M, int64_t j, int64_t cores, int64_t d, int64_t resolution) noexcept nogil:
    # nm_find_start_search for a start now only: the whole cluster's free resources now first, then
    # only the nodes with free cores now
    cdef int64_t x, i, p, c, m, g, cw = 0, uw = 0, now = M.now_t, stop = now + d, need
    cdef NodeLine* L
    if (cores > M.now_c or cores * M.mpc[j] + M.minn[j] * M.mpn[j] > M.now_m
            or M.minn[j] * (M.gpn[j] & M.cnt_g0) > M.now_g):
        return NO_START
    if resolution > 1:
        stop = ((stop + resolution - 1) // resolution) * resolution
    if not M.open_ok:
        nm_open_make(M)
    memset(M.cpu, 0, M.nn * sizeof(int64_t))
    need = M.mpc[j] if M.mpc[j] > M.mpn[j] else M.mpn[j]
    for x in range(M.nopen):
        i = M.open[x]
        L = &M.line[i]
        if need > 0 and L.m[0] < need:
            break                      # (and every node after it)
        if L.c[0] <= 0:                # (lost its free cores to a start in this pass)
            continue
        if nm_node_cpus(M, j, i, L.c[0], L.m[0], L.g[0]) == 0:
            continue
        nm_changed(M, i)               # (its cursor moves)
        L.cur = 0
        nl_least(L, now, stop, &c, &m, &g, M.cnt_hi, M.cnt_w)
        p = nm_node_cpus(M, j, i, c, m, g)
        M.cpu[i] = p
        if p > 0:
            cw += p
            uw += 1
    if cw >= cores and uw >= M.minn[j] and nm_choose(M, cores, M.minn[j], M.maxn[j]):
        return now
    return NO_START


cdef inline void _window_update(NodeModel* M, int64_t i, int64_t* total, int64_t* used) noexcept nogil:
    # node i gives what its queue's head gives (the search's set-up: the givers are listed after it)
    cdef NodeLine* L = &M.line[i]
    cdef int64_t w = L.qf[L.qh], old = M.pcpu[i]
    total[0] += w - old
    used[0] += (w > 0) - (old > 0)
    M.pcpu[i] = w


cdef inline void _give(NodeModel* M, int64_t i, int64_t w, int64_t* total, int64_t* used) noexcept nogil:
    # node i now gives w: pcpu, the sums and the givers follow
    cdef int64_t old = M.pcpu[i]
    total[0] += w - old
    if (w > 0) != (old > 0):
        used[0] += 1 if w > 0 else -1
        M.givers[i >> 6] ^= <uint64_t>1 << (i & 63)
    M.pcpu[i] = w


cdef inline void _givers_list(NodeModel* M) noexcept nogil:
    # the givers found anew (after a search's set-up: the eligible nodes with pcpu > 0)
    cdef int64_t x, i
    memset(M.givers, 0, ((M.nn + 63) >> 6) * sizeof(uint64_t))
    for x in range(M.nelig):
        i = M.elig[x]
        if M.pcpu[i] > 0:
            M.givers[i >> 6] |= <uint64_t>1 << (i & 63)


cdef inline void _givers_in_order(NodeModel* M) noexcept nogil:
    # M.pos = the givers in index order, with their cores in M.cpu (the last choice's pos cleared)
    cdef int64_t x, w, i
    cdef uint64_t b
    for x in range(M.npos):
        M.cpu[M.pos[x]] = 0
    M.npos = 0
    for w in range((M.nn + 63) >> 6):
        b = M.givers[w]
        while b:
            i = (w << 6) + __builtin_ctzll(b)
            b &= b - 1
            M.pos[M.npos] = <int32_t>i
            M.npos += 1
            M.cpu[i] = M.pcpu[i]


cdef inline bint _window_extend(NodeModel* M, int64_t j, int64_t i, NodeLine* L, int64_t stop,
                                bint zero) noexcept nogil:
    # node i's window grows to end at stop: its new points join the queue of rising minima. With
    # `zero`, a point where the node gives the job nothing ends it: the node gives nothing until that
    # point leaves the window (M.zero_to; the window is found again then); returns True
    cdef int64_t f
    while L.b + 1 < L.n and L.t[L.b + 1] < stop:
        L.b += 1
        f = nm_node_cpus(M, j, i, L.c[L.b], L.m[L.b], L.g[L.b])
        if f == 0 and zero:
            M.zero_to[i] = L.t[L.b + 1] if L.b + 1 < L.n else INF
            L.cur = L.b + 1            # (its index, where the window is found again from)
            return True
        while L.qt > L.qh and L.qf[L.qt - 1] >= f:
            L.qt -= 1
        L.qp[L.qt] = L.b
        L.qf[L.qt] = f
        L.qt += 1
    return False


cdef inline void _window_queue(NodeModel* M, int64_t j, int64_t i, NodeLine* L) noexcept nogil:
    # make the queue of rising minima of node i's window (its points cur..b), left unmade by nm_windows
    cdef int64_t b = L.b
    if L.qt >= 0:
        return
    L.qh = 0
    L.qt = 0
    L.b = L.cur - 1
    if b >= L.cur:
        _window_extend(M, j, i, L, L.t[b] + 1, False)


cdef inline int64_t _window_find(NodeModel* M, int64_t j, int64_t i, NodeLine* L, int64_t t, int64_t stop,
                                 int64_t p) noexcept nogil:
    # the cores eligible node i gives job j over [t, stop), found directly (p: its last point at or
    # before t). If a point of the window gives nothing, neither does the window until that point
    # leaves it (M.zero_to: its successor's time; the first such point ends the scan: the window is
    # found again from there, and most nodes give nothing from their first point); else the node's
    # window is kept
    # (cursor, last point; the queue is made when the sweep first moves it). What a node gives over
    # a window is what it gives with the window's least free cores, memory and GPUs (nm_node_cpus
    # is the least of one rising function of each), so one pass of minima finds it. A point gives
    # nothing exactly where it has no free core, too little memory for one core or the node's ask,
    # or too few GPUs (nm_node_cpus without its division: an eligible node has the job's features).
    cdef int64_t c = L.c[p], m = L.m[p], g = L.g[p], q = p + 1, z = -1
    cdef int64_t gpn = M.gpn[j], need = M.mpn[j] if M.mpn[j] > M.mpc[j] else M.mpc[j], w = M.cnt_w
    cdef uint64_t hi = M.cnt_hi
    if c < 1 or m < need or not cnt_fits(g, gpn, hi):
        z = p
    while (z < 0 or M.w_never) and q < L.n and L.t[q] < stop:
        if L.c[q] < c: c = L.c[q]
        if L.m[q] < m: m = L.m[q]
        g = cnt_min(g, L.g[q], hi, w)
        if L.c[q] < 1 or L.m[q] < need or not cnt_fits(L.g[q], gpn, hi):
            z = q
        q += 1
    if z >= 0 and not M.w_never:
        M.zero_to[i] = L.t[z + 1] if z + 1 < L.n else INF
        L.cur = z + 1                  # (its index, where the window is found again from)
        return 0
    M.zero_to[i] = -1
    L.cur = p
    L.b = q - 1
    L.qt = -1
    return nm_node_cpus(M, j, i, c, m, g)


cdef inline void nm_windows(NodeModel* M, int64_t j, int64_t t, int64_t stop, int64_t lo, int64_t hi,
                            bint queues, int64_t* total, int64_t* used) noexcept nogil:
    # the windows [t, stop) of the eligible nodes elig[lo:hi], found directly (_window_find): the
    # cores each node gives the job (pcpu; their sum and how many give any are added to total and
    # used), and its window or when it may give again. Writes only those nodes' lines, pcpu and
    # zero_to. The queue of rising minima that the sweep moves is made only for the few nodes whose
    # window the sweep changes (_window_queue): most searches end at their first candidate. With
    # `queues`, every node's window is kept and its queue made here (a helper thread's part: the
    # sweep would otherwise make them on the searching thread, from lines in the helper's caches).
    cdef int64_t x, i, p, w
    cdef NodeLine* L
    for x in range(lo, hi):
        i = M.elig[x]
        L = &M.line[i]
        p = 0 if L.n == 1 or L.t[1] > t else _first_at(L.t, L.n, t + 1) - 1
        if queues:
            L.cur = p
            L.qh = 0
            L.qt = 0
            L.b = p - 1
            _window_extend(M, j, i, L, stop, False)
            M.zero_to[i] = -1
            M.pcpu[i] = 0
            _window_update(M, i, total, used)
            continue
        w = _window_find(M, j, i, L, t, stop, p)
        M.pcpu[i] = w
        total[0] += w
        used[0] += w > 0


cdef inline void nm_windows_changed(NodeModel* M, int64_t j, int64_t t, int64_t stop, int64_t* total,
                                    int64_t* used) noexcept nogil:
    # the last search's windows, which are [t, stop) for job j's ask (nm_windows_kept), brought up
    # to date: the eligible nodes changed since find theirs again (as nm_windows); total and used
    # (the kept sums) follow
    cdef int64_t x, i, w
    cdef NodeLine* L
    for x in range(M.nchg):
        i = M.chg[x]
        if not M.is_elig[i]:
            continue
        L = &M.line[i]
        w = _window_find(M, j, i, L, t, stop, 0 if L.n == 1 or L.t[1] > t else _first_at(L.t, L.n, t + 1) - 1)
        _give(M, i, w, total, used)


cdef inline void nm_windows_split(NodeModel* M, NodeSplit* X, int64_t j, int64_t t, int64_t stop, int64_t ne,
                                  int64_t* total, int64_t* used) noexcept nogil:
    # nm_windows over every eligible node, the last ones offered to the helper thread: the same
    # values whoever computes them (each node's are its own), so the search's answer is the same.
    # The parts are fixed, so that each node's search state stays in one CPU's caches from search
    # to search; where they meet moves with who waited (nodes hold more or fewer plan points).
    cdef int64_t s, cut, since
    if pbf_load(&X.slot) == -2:
        X.start(X.start_arg)            # (this search goes on without waiting for it)
    if X.share <= 0 or X.share >= SPLIT_SCALE:
        X.share = SPLIT_SCALE >> 1
    cut = ne - (ne * X.share >> SPLIT_SHIFT)
    X.work = NULL
    X.M = M
    X.j = j
    X.t = t
    X.stop = stop
    X.lo = cut
    X.hi = ne
    s = X.posted + 1
    pbf_store(&X.posted, s)
    nm_windows(M, j, t, stop, 0, cut, False, total, used)
    X.tasks += 1
    if X.wait:
        while pbf_load(&X.claimed) != s:
            if pbf_load(&X.slot) == -2:
                X.start(X.start_arg)    # (the helper had left, idle)
            pbf_pause()
    elif pbf_cas(&X.claimed, s - 1, s):
        nm_windows(M, j, t, stop, cut, ne, False, total, used)      # (the helper did not come for it)
        return
    X.helped += 1
    if pbf_load(&X.finished) == s:
        if X.share < SPLIT_SCALE - SPLIT_STEP:
            X.share += SPLIT_STEP       # the helper was done first: it takes more next time
    else:
        if X.share > SPLIT_STEP:
            X.share -= SPLIT_STEP
        since = now_ticks()
        while pbf_load(&X.finished) != s:
            pbf_pause()
        if now_ticks() - since > X.stall_ticks:
            X.stalls += 1
    total[0] += X.total
    used[0] += X.used


cdef inline void nm_split_helper(NodeSplit* X) noexcept nogil:
    # a helper thread's work: take the searches' posted parts until told to leave or idle for
    # X.idle_ticks (between passes too: a sleeping helper is woken too late for the next pass's
    # first searches). It spins, yielding now and then so that a host with no CPU to spare still
    # runs the searching thread.
    cdef int64_t s, total, used, spins = 0, since = now_ticks()
    while not pbf_load(&X.leave):
        s = pbf_load(&X.posted)
        if s != pbf_load(&X.claimed) and pbf_cas(&X.claimed, s - 1, s):
            if X.work != NULL:
                X.work(<void*>X)
            else:
                total = 0
                used = 0
                nm_windows(<NodeModel*>X.M, X.j, X.t, X.stop, X.lo, X.hi, True, &total, &used)
                X.total = total
                X.used = used
            pbf_store(&X.finished, s)
            since = now_ticks()
        else:
            pbf_pause()
            spins += 1
            if spins & 0x3FF == 0:
                if now_ticks() - since > X.idle_ticks:
                    return
                if spins & 0xFFFF == 0:
                    sched_yield()


cdef inline void _window_enter(NodeModel* M, int64_t j, int64_t i, int64_t stop, int64_t* total,
                               int64_t* used) noexcept nogil:
    # a point of node i enters the search's window, which now ends at stop
    cdef NodeLine* L
    if not M.is_elig[i] or M.zero_to[i] >= 0:       # (a node giving nothing: not until zero_to)
        return
    L = &M.line[i]
    _window_queue(M, j, i, L)
    _give(M, i, 0 if _window_extend(M, j, i, L, stop, not M.w_never) else L.qf[L.qh], total, used)


cdef inline void _window_leave(NodeModel* M, int64_t j, int64_t i, int64_t t, int64_t stop, int64_t* total,
                               int64_t* used) noexcept nogil:
    # a point of node i leaves the search's window, which now starts at t (and ends at stop)
    cdef NodeLine* L
    cdef int64_t p
    if not M.is_elig[i]:
        return
    L = &M.line[i]
    if M.zero_to[i] >= 0:
        if M.zero_to[i] > t:
            return                                  # (its point giving nothing is still in)
        p = L.cur                                   # (the point at zero_to: at or before t)
        while p + 1 < L.n and L.t[p + 1] <= t:
            p += 1
        _give(M, i, _window_find(M, j, i, L, t, stop, p), total, used)
        return
    _window_queue(M, j, i, L)
    while L.cur + 1 < L.n and L.t[L.cur + 1] <= t:
        L.cur += 1
    while L.qp[L.qh] < L.cur:
        L.qh += 1
    _give(M, i, L.qf[L.qh], total, used)


cdef inline int64_t nm_find_start_search(NodeModel* M, int64_t j, int64_t cores, int64_t d, int64_t now,
                                         int64_t t_from, bint now_only, int64_t window,
                                         int64_t resolution) noexcept nogil:
    # Candidates in time order, each node's cores for the job over the candidate's window [t, stop)
    # kept up to date as both ends move forward: what a node gives over a window is the least it
    # gives at the window's points (the least cores, memory and GPUs give the same), so each node keeps
    # its window's points as a queue of rising minima, and two walks along the plan's points in time
    # order (those entering the window at stop, those leaving it at t) visit only the nodes whose
    # window changes. A search costs the plan's points, not its candidates times its nodes.
    # The windows it ends with are kept: the next search from that window for the same ask (most
    # often the next job in the queue, alike, from the start this one found) takes them over and
    # finds again only the nodes changed since (the placement just made), not every node's.
    cdef int64_t n, t, stop, total = 0, used = 0, ne, lp, tp, lx, tx, at = NO_START, wt, wstop
    if now_only and t_from == M.now_t:
        return nm_start_now(M, j, cores, d, resolution)
    if not M.ev_ok and nm_make_events(M) != RC_OK:
        M.failed = True
        return NO_START
    nm_eligible(M, j)
    memset(M.cpu, 0, M.nn * sizeof(int64_t))
    M.npos = 0
    ne = M.nelig
    n = _first_at(M.times, M.ntimes, t_from)
    if n >= M.ntimes:
        return NO_START
    # the nodes' windows at the first candidate, found directly (a search may start late)
    t = M.times[n]
    stop = t + d
    if resolution > 1:
        stop = ((stop + resolution - 1) // resolution) * resolution
    if stop >= EV_T_MAX:
        # (a start whose end lies beyond the plan's reach, 2^43 s, is none: the job waits unreserved)
        return NO_START
    if nm_windows_kept(M, j, t, stop):
        total = M.w_total
        used = M.w_used
        nm_windows_changed(M, j, t, stop, &total, &used)
    else:
        if M.split != NULL and ne >= M.split.min_nodes:
            nm_windows_split(M, M.split, j, t, stop, ne, &total, &used)
        else:
            nm_windows(M, j, t, stop, 0, ne, False, &total, &used)
        _givers_list(M)
    nm_changes_seen(M)
    wt = t                             # (the windows are at [wt, wstop))
    wstop = stop
    # (the two walks visit ev and evx apart: a node's window moves to [t, stop) at its first point
    # in a walk, whichever list that point is in, and its later ones in the walk change nothing)
    lp = _first_at(M.ev, M.nev, stop << 20)
    tp = _first_at(M.ev, M.nev, (t + 1) << 20)
    lx = _first_at(M.evx, M.nevx, stop << 20)
    tx = _first_at(M.evx, M.nevx, (t + 1) << 20)
    while n < M.ntimes:
        t = M.times[n]
        n += 1
        if window > 0 and t > now + window:
            break
        stop = t + d
        if resolution > 1:
            stop = ((stop + resolution - 1) // resolution) * resolution
        if stop >= EV_T_MAX:
            break
        while lp < M.nev and (M.ev[lp] >> 20) < stop:      # points entering the window
            _window_enter(M, j, M.ev[lp] & 0xFFFFF, stop, &total, &used)
            lp += 1
        while lx < M.nevx and (M.evx[lx] >> 20) < stop:
            _window_enter(M, j, M.evx[lx] & 0xFFFFF, stop, &total, &used)
            lx += 1
        while tp < M.nev and (M.ev[tp] >> 20) <= t:        # ... and leaving it
            _window_leave(M, j, M.ev[tp] & 0xFFFFF, t, stop, &total, &used)
            tp += 1
        while tx < M.nevx and (M.evx[tx] >> 20) <= t:
            _window_leave(M, j, M.evx[tx] & 0xFFFFF, t, stop, &total, &used)
            tx += 1
        wt = t
        wstop = stop
        if total >= cores and used >= M.minn[j]:
            # Slurm's choice among the nodes that give any (the same runs as among all eligible
            # nodes: the others give nothing, so they end runs as they would)
            _givers_in_order(M)
            if nm_choose_among(M, cores, M.minn[j], M.maxn[j], M.pos, M.npos):
                at = t
                break
        if now_only:
            break
    nm_windows_keep(M, j, wt, wstop, total, used)
    return at


cdef inline int nm_hold_node(NodeModel* M, int64_t j, int64_t i, int64_t cores, int64_t t, int64_t stop) noexcept nogil:
    # the plan holds `cores` of node i for job j (with their memory and GPUs) over [t, stop)
    cdef int64_t n0
    cdef int rc
    cdef NodeLine* L = &M.line[i]
    nm_changed(M, i)
    n0 = L.n
    if nl_point(L, t) < 0:
        return RC_NO_MEMORY
    if L.n > n0 and t > L.t[0] and M.ev_ok:
        rc = nm_ev_insert(M, t, i)
        if rc != RC_OK:
            return rc
    n0 = L.n
    if nl_point(L, stop) < 0:
        return RC_NO_MEMORY
    if L.n > n0 and M.ev_ok:
        rc = nm_ev_insert(M, stop, i)
        if rc != RC_OK:
            return rc
    if nl_hold(L, t, stop, cores, nm_job_mem(M, j, cores), M.gpn[j]) != RC_OK:
        return RC_NO_MEMORY
    if t == M.now_t and stop > t:
        M.now_c -= cores
        M.now_m -= nm_job_mem(M, j, cores)
        M.now_g -= M.gpn[j] & M.cnt_g0
        nm_open_less(M, i)
    return RC_OK


cdef inline int nm_hold(NodeModel* M, int64_t j, int64_t t, int64_t stop) noexcept nogil:
    # the plan holds M.take's cores (with their memory and GPUs) over [t, stop)
    cdef int64_t x, i
    cdef int rc
    for x in range(M.ntake_among if M.take_among != NULL else M.nn):
        i = M.take_among[x] if M.take_among != NULL else x
        if M.take[i] > 0:
            rc = nm_hold_node(M, j, i, M.take[i], t, stop)
            if rc != RC_OK:
                return rc
    return nm_add_time(M, stop)


# ---- the parallel pass's copies of the plan (parallel_pass.pxd)

cdef inline void nm_take_bits(const NodeModel* M, uint64_t* out, int64_t W) noexcept nogil:
    # out = the first take[i] units of every node: the placement's cores per node, as units (a
    # reservation names no units; only the count on each node matters to a copy of the plan)
    cdef int64_t i, u
    memset(out, 0, W * sizeof(uint64_t))
    for i in range(M.nn):
        for u in range(M.first[i], M.first[i] + M.take[i]):
            out[u >> 6] |= <uint64_t>1 << (u & 63)


cdef inline int nm_apply(NodeModel* M, int64_t j, int64_t t, int64_t stop, const uint64_t* units,
                         int64_t W) noexcept nogil:
    # a placement of job j over [t, stop) with `units`' count of cores on each of their nodes joins
    # this copy of the plan (nm_hold from a commit log entry)
    cdef int64_t w, u, i, c = 0, last = -1
    cdef int rc
    cdef uint64_t x
    for w in range(W):
        x = units[w]
        while x:
            u = w * 64 + __builtin_ctzll(x)
            x &= x - 1
            i = M.node_of[u]
            if i != last:
                if last >= 0:
                    rc = nm_hold_node(M, j, last, c, t, stop)
                    if rc != RC_OK:
                        return rc
                last = i
                c = 0
            c += 1
    if last >= 0:
        rc = nm_hold_node(M, j, last, c, t, stop)
        if rc != RC_OK:
            return rc
    return nm_add_time(M, stop)


cdef inline int64_t nm_window_cpus(NodeModel* M, int64_t j, int64_t i, int64_t t, int64_t stop) noexcept nogil:
    # the cores node i can give job j throughout [t, stop) on this plan
    cdef NodeLine* L = &M.line[i]
    cdef int64_t c, m, g
    nm_changed(M, i)                   # (its cursor moves)
    L.cur = 0 if L.n == 1 or L.t[1] > t else _first_at(L.t, L.n, t + 1) - 1
    nl_least(L, t, stop, &c, &m, &g, M.cnt_hi, M.cnt_w)
    return nm_node_cpus(M, j, i, c, m, g)


cdef inline bint nm_monotone(const NodeModel* M, int64_t j) noexcept nogil:
    # job j fits exactly where the nodes' cores for it add up to its own (any number of nodes, at
    # most one at least): more resources anywhere never make it fit later
    return M.minn[j] <= 1 and M.maxn[j] == 0


cdef inline void nm_share(NodeModel* dst, const NodeModel* src) noexcept nogil:
    # dst reads the cluster and the jobs' requests from src (read-only during a pass)
    dst.on = src.on
    dst.first_fit = src.first_fit
    dst.nn = src.nn
    dst.first = src.first
    dst.node_of = src.node_of
    dst.cap_mem = src.cap_mem
    dst.cap_gpu = src.cap_gpu
    dst.cnt_hi = src.cnt_hi
    dst.cnt_w = src.cnt_w
    dst.cnt_g0 = src.cnt_g0
    dst.feat = src.feat
    dst.free_mem = src.free_mem
    dst.free_gpu = src.free_gpu
    dst.mpc = src.mpc
    dst.mpn = src.mpn
    dst.gpn = src.gpn
    dst.minn = src.minn
    dst.maxn = src.maxn
    dst.jfeat = src.jfeat
    dst.jpart = src.jpart
    dst.npart = src.npart
    dst.pall = src.pall
    dst.wlo = src.wlo
    dst.whi = src.whi
    dst.nused = src.nused
    dst.jcap = src.jcap
    dst.wt = src.wt
    dst.w_never = src.w_never
    dst.class_of = src.class_of
    dst.ncls = src.ncls
    dst.k_cores = src.k_cores
    dst.k_mem = src.k_mem
    dst.k_gpu = src.k_gpu
    dst.k_feat = src.k_feat


cdef inline void nm_free_copy(NodeModel* M) noexcept nogil:
    # a plan copy's own memory (not what it shares with the model it copies)
    cdef int64_t i
    if M.line != NULL:
        for i in range(M.nn):
            free(M.line[i].t); free(M.line[i].c); free(M.line[i].m); free(M.line[i].g)
            free(M.line[i].qp); free(M.line[i].qf)
    free(M.line)
    free(M.times)
    free(M.cpu); free(M.take); free(M.tlist); free(M.avail); free(M.cut)
    free(M.r_cpus); free(M.r_nodes); free(M.r_first); free(M.r_last); free(M.r_w); free(M.elig)
    free(M.pcpu); free(M.open); free(M.open_pos)
    free(M.ev); free(M.evx); free(M.is_elig); free(M.pidx); free(M.tcnt)
    free(M.sortkey); free(M.chg); free(M.zero_to); free(M.pos)
    free(M.givers); free(M.k_ok)
    memset(M, 0, sizeof(NodeModel))


cdef inline int nm_copy_plan(NodeModel* dst, const NodeModel* src) noexcept nogil:
    # dst = a private copy of src's plan (its lines, candidate times, events and start-now
    # order), sharing src's cluster and requests, with its own scratch and empty caches
    cdef int64_t i, nn = src.nn
    cdef NodeLine* L
    cdef const NodeLine* K
    if dst.line == NULL or dst.nn != nn:
        nm_free_copy(dst)
        dst.nn = nn
        dst.line = <NodeLine*>calloc(nn, sizeof(NodeLine))
        dst.cpu = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.take = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.tlist = <int32_t*>malloc(nn * sizeof(int32_t))
        dst.ntlist = 0
        dst.tdirty = True
        dst.avail = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.cut = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.r_cpus = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.r_nodes = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.r_first = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.r_last = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.r_w = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.elig = <int32_t*>malloc(nn * sizeof(int32_t))
        dst.pcpu = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.open = <int32_t*>malloc(nn * sizeof(int32_t))
        dst.is_elig = <uint8_t*>calloc(nn, sizeof(uint8_t))
        dst.open_pos = <int32_t*>malloc(nn * sizeof(int32_t))
        dst.sortkey = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.chg = <int32_t*>malloc(nn * sizeof(int32_t))
        dst.zero_to = <int64_t*>malloc(nn * sizeof(int64_t))
        dst.pos = <int32_t*>malloc(nn * sizeof(int32_t))
        dst.givers = <uint64_t*>calloc((nn + 63) >> 6, sizeof(uint64_t))
        dst.nchg = 0
        if (dst.chg == NULL or dst.zero_to == NULL or dst.pos == NULL or dst.givers == NULL
                or dst.line == NULL or dst.cpu == NULL or dst.take == NULL or dst.avail == NULL or dst.cut == NULL
                or dst.tlist == NULL
                or dst.r_cpus == NULL or dst.r_nodes == NULL or dst.r_first == NULL or dst.r_last == NULL
                or dst.r_w == NULL
                or dst.elig == NULL or dst.pcpu == NULL or dst.open == NULL or dst.is_elig == NULL
                or dst.open_pos == NULL or dst.sortkey == NULL):
            nm_free_copy(dst)
            return RC_NO_MEMORY
    nm_share(dst, src)
    if dst.k_ok == NULL and src.ncls > 0:
        dst.k_ok = <uint8_t*>malloc(src.ncls * sizeof(uint8_t))
        if dst.k_ok == NULL:
            return RC_NO_MEMORY
    for i in range(nn):
        K = &src.line[i]
        L = &dst.line[i]
        if nl_room(L, K.n) != RC_OK:
            return RC_NO_MEMORY
        memcpy(L.t, K.t, K.n * sizeof(int64_t))
        memcpy(L.c, K.c, K.n * sizeof(int64_t))
        memcpy(L.m, K.m, K.n * sizeof(int64_t))
        memcpy(L.g, K.g, K.n * sizeof(int64_t))
        L.n = K.n
    if grow(<void**>&dst.times, &dst.times_cap, src.ntimes + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    memcpy(dst.times, src.times, src.ntimes * sizeof(int64_t))
    dst.ntimes = src.ntimes
    dst.ev_ok = False
    if src.ev_ok:
        if grow(<void**>&dst.ev, &dst.ev_cap, src.nev + 1, sizeof(int64_t)) != RC_OK:
            return RC_NO_MEMORY
        memcpy(dst.ev, src.ev, src.nev * sizeof(int64_t))
        dst.nev = src.nev
        if grow(<void**>&dst.evx, &dst.evx_cap, EVX_MAX, sizeof(int64_t)) != RC_OK:
            return RC_NO_MEMORY
        memcpy(dst.evx, src.evx, src.nevx * sizeof(int64_t))
        dst.nevx = src.nevx
        dst.ev_ok = True
    dst.open_ok = src.open_ok
    if src.open_ok:
        memcpy(dst.open, src.open, nn * sizeof(int32_t))
        memcpy(dst.open_pos, src.open_pos, nn * sizeof(int32_t))
        dst.nopen = src.nopen
    dst.now_t = src.now_t
    dst.now_c = src.now_c
    dst.now_m = src.now_m
    dst.now_g = src.now_g
    if dst.elig_ok:
        for i in range(dst.nelig):
            dst.is_elig[dst.elig[i]] = 0
    dst.elig_ok = False
    dst.nelig = 0
    nm_forget_windows(dst)
    dst.failed = False
    dst.nmf = 0
    dst.mf_next = 0
    dst.nfs = 0
    dst.fs_next = 0
    return RC_OK
