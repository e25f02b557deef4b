# Advance reservations on a node cluster (header only): Slurm's maintenance and user reservations
# (`scontrol create reservation`), read from a site's own dump (pbf/slurm_reservations.py). Each is a
# window [start, end) on whole nodes that no job of the replay may hold: a job whose window
# [t, t + its time) overlaps it does not get its nodes (Slurm's job_test_resv, reservation.c, for a job
# that asks no reservation: a full-node reservation's nodes are taken out of the job's nodes). So the
# plans see each window as its nodes' resources held from its start (or now) to its end: pbf's exact
# plan as nothing free on those nodes then, Slurm's backfill as a record of its node_space holding
# them and, at each of its tests, the nodes of every window over the job's [start, end) left out of
# its offer (job_test_resv, even past the cycle's bf_window), and the tests of a start now (the main scheduler, a pass's first tests) leave out the nodes of
# every window that starts before the job would end. A window's end is an event: a pass may start
# jobs on its nodes then (Slurm's _more_work counts last_resv_update).
# Jobs inside a reservation (sbatch --reservation; resv_inside.pxd, pbf/reference/resv_ref.py): a
# window's grp names its reservation among those some job is inside (0: none is), jgrp each job's;
# the start of such a window is an event too, and the exact plan keeps each of its nodes' line over
# it without the windows' holds (ResvLine: what the jobs inside see there). A job inside a reservation
# that started in window k and still runs at kill[k] is ended then (Slurm 22.05's job_time_limit: the
# first 30-second time-limit check after the reservation's end plus ResvOverRun; computed in Python,
# pbf.slurm_reservations.end_checks).

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memmove

from memory cimport INF
from counts cimport cnt_min
from node_model cimport NodeModel, NodeLine, nl_point, nm_add_time
from slurm_space cimport SlurmSpace, ss_reserve
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil
    int __builtin_popcountll(unsigned long long x) nogil


ctypedef struct ResvLine:      # a node's free cores, memory and GPUs over a window, as a job inside it sees them
    int64_t* t                 # value p holds from t[p] to t[p + 1] (the last: to the window's end)
    int64_t* c
    int64_t* m
    int64_t* g
    int64_t n, cap


ctypedef struct AdvResv:
    int64_t n                  # windows (0: none; nothing else is read)
    int64_t* start             # window k holds from start[k] ...
    int64_t* end               # ... to end[k] (windows in end order)
    int64_t first              # the first window whose end is after the last time asked (ar_live)
    uint64_t* ubits            # its units (W words a window) ...
    uint64_t* nbits            # ... and its nodes (NW words a window)
    int64_t W, NW
    int64_t next_end           # the first window whose end the event loop has not reached
    uint64_t* scratch          # W words: the free units a test of a start now may use
    int64_t now, d             # the main scheduler's test under way: its time and the job's (set before
                               # Planner.take_now)
    int32_t* grp               # each window's reservation, 1.. among those some job is inside (0: none is)
    uint64_t main_out          # the reservations (1..64, a bit each) a main-scheduler pass has taken out:
                               # one of their jobs found them not begun (_schedule's
                               # ESLURM_RESERVATION_NOT_USABLE), so their nodes go to no later job of the
                               # pass; 0 outside main passes
    int32_t* jgrp              # each job's reservation (0: none; NULL: no job is inside one) ...
    int64_t njobs              # ... for jobs 0 .. njobs - 1
    int64_t* kill              # (n; NULL: none) a job inside window k's reservation that started in window k
                               # ends at kill[k] if it still runs then (INF: never)
    int64_t* ev                # the times a pass is due: every window's end and the start of each window
    int64_t nev                # some job is inside, sorted
    int64_t* il_off            # (n + 1) window k's lines il[il_off[k] ...], one for each of its nodes in order
    ResvLine* il               # (the windows some job is inside only)
    int64_t nil
    # Slurm's backfill: this cycle's reservations of jobs (start, end, nodes), replayed on the records
    # a job inside a reservation sees (resv_inside.pxd), and those records
    int64_t* lg_s
    int64_t* lg_e
    uint64_t* lg_bits
    int64_t lg_n, lg_cap
    int64_t* vb
    int64_t* ve
    int64_t* vnxt
    uint64_t* vavail
    int64_t vn, vcap
    int64_t* vxs               # (n) the windows but those of the job's reservation
    int64_t* vxe
    uint64_t* vxbits


cdef inline void ar_free(AdvResv* R) noexcept nogil:
    cdef int64_t x
    for x in range(R.nil):
        free(R.il[x].t); free(R.il[x].c); free(R.il[x].m); free(R.il[x].g)
    free(R.il); free(R.il_off); free(R.grp); free(R.jgrp); free(R.ev); free(R.kill)
    R.kill = NULL
    free(R.lg_s); free(R.lg_e); free(R.lg_bits); free(R.vb); free(R.ve); free(R.vnxt); free(R.vavail)
    free(R.vxs); free(R.vxe); free(R.vxbits)
    R.il = NULL
    R.il_off = NULL
    R.nil = 0
    R.grp = NULL
    R.jgrp = NULL
    R.njobs = 0
    R.ev = NULL
    R.nev = 0
    R.lg_s = NULL
    R.lg_e = NULL
    R.lg_bits = NULL
    R.lg_n = 0
    R.lg_cap = 0
    R.vb = NULL
    R.ve = NULL
    R.vnxt = NULL
    R.vavail = NULL
    R.vn = 0
    R.vcap = 0
    R.vxs = NULL
    R.vxe = NULL
    R.vxbits = NULL
    free(R.start); free(R.end); free(R.ubits); free(R.nbits); free(R.scratch)
    R.start = NULL
    R.end = NULL
    R.ubits = NULL
    R.nbits = NULL
    R.scratch = NULL
    R.n = 0


cdef inline int ar_alloc(AdvResv* R, int64_t n, int64_t W, int64_t NW) noexcept nogil:
    # room for n windows on a cluster of W unit words and NW node words (every bit clear)
    cdef int64_t i
    ar_free(R)
    R.start = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    R.end = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    R.ubits = <uint64_t*>malloc((n * W + 1) * sizeof(uint64_t))
    R.nbits = <uint64_t*>malloc((n * NW + 1) * sizeof(uint64_t))
    R.scratch = <uint64_t*>malloc((W + 1) * sizeof(uint64_t))
    R.grp = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    R.ev = <int64_t*>malloc((2 * n + 1) * sizeof(int64_t))
    if (R.start == NULL or R.end == NULL or R.ubits == NULL or R.nbits == NULL
            or R.scratch == NULL or R.grp == NULL or R.ev == NULL):
        ar_free(R)
        return RC_NO_MEMORY
    for i in range(n * W):
        R.ubits[i] = 0
    for i in range(n * NW):
        R.nbits[i] = 0
    for i in range(n):
        R.grp[i] = 0
    R.W = W
    R.NW = NW
    R.next_end = 0
    R.first = 0
    R.n = n
    return RC_OK


cdef inline int64_t ar_current(const AdvResv* R, int32_t g, int64_t now) noexcept nogil:
    # reservation g's current window: its first by start that ends after now (-1: none left)
    cdef int64_t k, best = -1
    for k in range(R.n):
        if R.grp[k] == g and R.end[k] > now and (best < 0 or R.start[k] < R.start[best]
                                                 or (R.start[k] == R.start[best] and R.end[k] < R.end[best])):
            best = k
    return best


cdef inline int64_t ar_kill_at(const AdvResv* R, int64_t j, int64_t now) noexcept nogil:
    # when job j, starting now, is ended by its reservation (INF: never; inside none): the kill time of
    # its reservation's current window
    cdef int64_t k
    if R.kill == NULL or R.jgrp == NULL or j >= R.njobs or R.jgrp[j] == 0:
        return INF
    k = ar_current(R, R.jgrp[j], now)
    return INF if k < 0 else R.kill[k]


cdef inline int64_t ar_live(AdvResv* R, int64_t now) noexcept nogil:
    # the first window that ends after now (time only moves on: the windows before it are over)
    while R.first < R.n and R.end[R.first] <= now:
        R.first += 1
    return R.first


cdef inline bint ar_taken_out(const AdvResv* R, int64_t k) noexcept nogil:
    # window k's reservation taken out of the main-scheduler pass under way (AdvResv.main_out)
    return R.main_out != 0 and 0 < R.grp[k] <= 64 and (R.main_out >> (R.grp[k] - 1)) & 1


cdef inline uint64_t* ar_free_units(AdvResv* R, uint64_t* free_units, int64_t now, int64_t d) noexcept nogil:
    # the free units a job of time d may take now: those of the windows that start before it would end
    # (and end after now) left out
    cdef int64_t k, w
    cdef bint copied = False
    for k in range(ar_live(R, now), R.n):
        if R.start[k] < now + d or ar_taken_out(R, k):
            if not copied:
                memcpy(R.scratch, free_units, R.W * sizeof(uint64_t))
                copied = True
            for w in range(R.W):
                R.scratch[w] &= ~R.ubits[k * R.W + w]
    return R.scratch if copied else free_units


cdef inline int ar_hold_lines(AdvResv* R, NodeModel* M, int64_t now) noexcept nogil:
    # pbf's exact plan: nothing free on a window's nodes from its start (or now) to its end
    cdef int64_t k, w, i, a, b, q, pa, pb, x2
    cdef uint64_t x
    cdef NodeLine* L
    for k in range(ar_live(R, now), R.n if R.jgrp != NULL else 0):
        if R.grp[k] == 0:
            continue
        a = R.start[k] if R.start[k] > now else now
        x2 = R.il_off[k]
        for w in range(R.NW):          # (before any window's hold: what a job inside sees there)
            x = R.nbits[k * R.NW + w]
            while x:
                i = w * 64 + __builtin_ctzll(x)
                x &= x - 1
                if rl_copy(&R.il[x2], &M.line[i], a, R.end[k]) != RC_OK:
                    return RC_NO_MEMORY
                x2 += 1
    for k in range(ar_live(R, now), R.n):
        a = R.start[k] if R.start[k] > now else now
        b = R.end[k]
        for w in range(R.NW):
            x = R.nbits[k * R.NW + w]
            while x:
                i = w * 64 + __builtin_ctzll(x)
                x &= x - 1
                L = &M.line[i]
                pa = nl_point(L, a)
                if pa < 0:
                    return RC_NO_MEMORY
                pb = nl_point(L, b)
                if pb < 0:
                    return RC_NO_MEMORY
                for q in range(pa, pb):
                    L.c[q] = 0
                    L.m[q] = 0
                    L.g[q] = 0
        # (both ends join the candidate starts: the plan's events are sorted by their place among
        # them, nm_make_events; a start at a window's start is never earlier than at the one before)
        if nm_add_time(M, a) != RC_OK or nm_add_time(M, b) != RC_OK:
            return RC_NO_MEMORY
    return RC_OK


cdef inline int ar_seed_space(AdvResv* R, SlurmSpace* X, int64_t now) noexcept nogil:
    # Slurm's backfill: the windows not over as records of the cycle's node_space holding their nodes,
    # and each test's job_test_resv (ss_job_test) told of them, for the windows beyond the records' reach
    cdef int64_t k, first = ar_live(R, now)
    X.xn = R.n - first
    X.xs = R.start + first
    X.xe = R.end + first
    X.xbits = R.nbits + first * R.NW
    for k in range(first, R.n):
        memcpy(X.tbits, R.nbits + k * R.NW, R.NW * sizeof(uint64_t))
        if ss_reserve(X, R.start[k] if R.start[k] > now else now, R.end[k]) != RC_OK:
            return RC_NO_MEMORY
    return RC_OK


cdef inline int64_t ar_next_end(const AdvResv* R) noexcept nogil:
    # the first window end (or start of a window some job is inside) the event loop has not reached
    # (INF: none)
    return R.ev[R.next_end] if R.next_end < R.nev else INF


cdef inline bint ar_ends_due(AdvResv* R, int64_t t) noexcept nogil:
    # a window ends by t, or one some job is inside starts (each counted once): a pass may start jobs
    # on its nodes
    cdef bint due = False
    while R.next_end < R.nev and R.ev[R.next_end] <= t:
        R.next_end += 1
        due = True
    return due


# ---- a node's line over a window, as the jobs inside it see it (exact plan)

cdef inline int rl_room(ResvLine* D, int64_t n) noexcept nogil:
    cdef int64_t cap
    cdef void* q
    if n <= D.cap:
        return RC_OK
    cap = D.cap * 2 if D.cap else 8
    while cap < n:
        cap *= 2
    q = realloc(D.t, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    D.t = <int64_t*>q
    q = realloc(D.c, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    D.c = <int64_t*>q
    q = realloc(D.m, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    D.m = <int64_t*>q
    q = realloc(D.g, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    D.g = <int64_t*>q
    D.cap = cap
    return RC_OK


cdef inline int rl_copy(ResvLine* D, const NodeLine* L, int64_t a, int64_t b) noexcept nogil:
    # D = the line L over [a, b) (L.t[0] <= a)
    cdef int64_t p = 0
    while p + 1 < L.n and L.t[p + 1] <= a:
        p += 1
    D.n = 0
    while True:
        if rl_room(D, D.n + 1) != RC_OK:
            return RC_NO_MEMORY
        D.t[D.n] = a if D.n == 0 else L.t[p]
        D.c[D.n] = L.c[p]
        D.m[D.n] = L.m[p]
        D.g[D.n] = L.g[p]
        D.n += 1
        p += 1
        if p >= L.n or L.t[p] >= b:
            return RC_OK


cdef inline void rl_least(const ResvLine* D, int64_t x, int64_t y, int64_t* c, int64_t* m, int64_t* g, uint64_t hi,
                          int64_t w) noexcept nogil:
    # folds into c, m, g the least free over [x, y) (within D's window; g: counts.pxd's lanes hi, w)
    cdef int64_t p = 0
    while p + 1 < D.n and D.t[p + 1] <= x:
        p += 1
    while p < D.n and D.t[p] < y:
        if D.c[p] < c[0]: c[0] = D.c[p]
        if D.m[p] < m[0]: m[0] = D.m[p]
        g[0] = cnt_min(g[0], D.g[p], hi, w)
        p += 1


cdef inline int64_t rl_point(ResvLine* D, int64_t t) noexcept nogil:
    # the index of a point at t (D.t[0] <= t), made by splitting the one before it; -1: out of memory
    cdef int64_t p = 0
    while p + 1 < D.n and D.t[p + 1] <= t:
        p += 1
    if D.t[p] == t:
        return p
    if rl_room(D, D.n + 1) != RC_OK:
        return -1
    p += 1
    memmove(D.t + p + 1, D.t + p, (D.n - p) * sizeof(int64_t))
    memmove(D.c + p + 1, D.c + p, (D.n - p) * sizeof(int64_t))
    memmove(D.m + p + 1, D.m + p, (D.n - p) * sizeof(int64_t))
    memmove(D.g + p + 1, D.g + p, (D.n - p) * sizeof(int64_t))
    D.t[p] = t
    D.c[p] = D.c[p - 1]
    D.m[p] = D.m[p - 1]
    D.g[p] = D.g[p - 1]
    D.n += 1
    return p


cdef inline int rl_hold(ResvLine* D, int64_t x, int64_t y, int64_t b, int64_t dc, int64_t dm, int64_t dg) noexcept nogil:
    # a job inside holds (dc, dm, dg) over [x, y) (y <= b, the window's end)
    cdef int64_t pa = rl_point(D, x), pb, p
    if pa < 0:
        return RC_NO_MEMORY
    pb = D.n
    if y < b:
        pb = rl_point(D, y)
        if pb < 0:
            return RC_NO_MEMORY
    for p in range(pa, pb):
        D.c[p] -= dc
        D.m[p] -= dm
        D.g[p] -= dg
    return RC_OK


cdef inline ResvLine* ar_line(AdvResv* R, int64_t k, int64_t i) noexcept nogil:
    # window k's line of its node i
    cdef int64_t w, r = 0
    for w in range(i >> 6):
        r += __builtin_popcountll(R.nbits[k * R.NW + w])
    r += __builtin_popcountll(R.nbits[k * R.NW + (i >> 6)] & (((<uint64_t>1) << (i & 63)) - 1))
    return &R.il[R.il_off[k] + r]
