# Jobs inside an advance reservation (header only): a job submitted with --reservation=R (sacct's
# Reservation column) starts only inside R's current window -- the first of R's windows (by start)
# not over -- and only on R's nodes, less those of every other reservation over its time (Slurm
# 22.05's job_test_resv, reservation.c, for a job that names a reservation); R's own hold, which keeps
# every other job off its nodes, does not apply to it; it may run past R's end, until the first 30-second
# time-limit check after R's end plus ResvOverRun (AdvResv.kill, lifecycle.pxd job_start). Before R's start it
# waits (Slurm: reason Reservation, and backfill's "reservation defer"); once R is over it never starts
# (Slurm holds it). The oracle: pbf/reference/resv_ref.py. Here: the start-now units, pbf's exact plan
# (a search over the window's nodes, their lines as the jobs inside see them: ResvLine,
# advance_resv.pxd) and Slurm's backfill (the cycle's records without R's windows, then the cycle's
# reservations of jobs replayed on them; the test on R's nodes, its starts inside R's window).

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport realloc
from libc.string cimport memcpy, memset

from counts cimport cnt_min
from advance_resv cimport AdvResv, ResvLine, ar_current, ar_live, ar_free_units, ar_line, ar_taken_out, rl_least, rl_hold
from node_model cimport (NodeModel, NodeLine, nm_node_cpus, nm_choose, nm_hold_node, nm_add_time, nm_job_mem,
                         EV_T_MAX)
from slurm_space cimport SlurmSpace, ss_reset, ss_reserve
from pbf._codes cimport RC_OK, RC_NO_MEMORY, NO_START

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline int32_t ri_group(const AdvResv* R, int64_t j) noexcept nogil:
    # job j's reservation (0: none)
    return R.jgrp[j] if R.jgrp != NULL and j < R.njobs else 0


cdef inline int64_t ri_current(const AdvResv* R, int32_t g, int64_t now) noexcept nogil:
    # reservation g's current window: its first by start that ends after now (-1: none left)
    return ar_current(R, g, now)


cdef inline bint ri_other_over(const AdvResv* R, int32_t g, int64_t i, int64_t t, int64_t stop) noexcept nogil:
    # does a window of another reservation hold node i over [t, stop)?
    cdef int64_t k
    for k in range(R.first, R.n):
        if (R.grp[k] != g and R.start[k] < stop and R.end[k] > t
                and (R.nbits[k * R.NW + (i >> 6)] >> (i & 63)) & 1):
            return True
    return False


cdef inline uint64_t* ar_job_units(AdvResv* R, int64_t j, uint64_t* free_units, int64_t now, int64_t d) noexcept nogil:
    # the free units job j (of time d) may take now: ar_free_units for a job inside no reservation; for
    # one inside, those of its reservation's window if it has begun (NULL: none), less those of the
    # other windows over [now, now + d) and of the reservations the main pass has taken out
    cdef int32_t g = ri_group(R, j)
    cdef int64_t k, o, w
    if g == 0:
        return ar_free_units(R, free_units, now, d)
    k = ri_current(R, g, now)
    if k < 0 or R.start[k] > now:
        return NULL
    for w in range(R.W):
        R.scratch[w] = free_units[w] & R.ubits[k * R.W + w]
    for o in range(ar_live(R, now), R.n):
        if R.grp[o] != g and (R.start[o] < now + d or ar_taken_out(R, o)):
            for w in range(R.W):
                R.scratch[w] &= ~R.ubits[o * R.W + w]
    return R.scratch


# ---- pbf's exact plan

cdef inline void _line_least(const NodeLine* L, int64_t x, int64_t y, int64_t* c, int64_t* m, int64_t* g, uint64_t hi,
                             int64_t w) noexcept nogil:
    # folds into c, m, g the least free of the plan's line over [x, y) (no cursor moved; g: counts.pxd's
    # lanes hi, w)
    cdef int64_t p = 0
    while p + 1 < L.n and L.t[p + 1] <= x:
        p += 1
    while p < L.n and L.t[p] < y:
        if L.c[p] < c[0]: c[0] = L.c[p]
        if L.m[p] < m[0]: m[0] = L.m[p]
        g[0] = cnt_min(g[0], L.g[p], hi, w)
        p += 1


cdef inline int _pieces(AdvResv* R, NodeModel* M, int32_t g, int64_t i, int64_t t, int64_t stop, int64_t now,
                        int64_t* c, int64_t* m, int64_t* gg, int64_t j, int64_t cores, bint hold) noexcept nogil:
    # node i over [t, stop) as a job inside g sees it: its line, but over g's windows on node i the
    # window's own (ResvLine). hold False: folds the least free into c, m, gg; True: job j holds
    # `cores` there (with its memory and GPUs)
    cdef int64_t k, a, b, x = t, y, mem = nm_job_mem(M, j, cores) if hold else 0
    for k in range(ar_live(R, now), R.n):
        if R.grp[k] != g or not (R.nbits[k * R.NW + (i >> 6)] >> (i & 63)) & 1:
            continue
        a = R.start[k] if R.start[k] > now else now
        b = R.end[k]
        if b <= x:
            continue
        if a >= stop:
            break
        if a > x:
            if hold:
                if nm_hold_node(M, j, i, cores, x, a) != RC_OK:
                    return RC_NO_MEMORY
            else:
                _line_least(&M.line[i], x, a, c, m, gg, M.cnt_hi, M.cnt_w)
            x = a
        y = stop if stop < b else b
        if hold:
            if rl_hold(ar_line(R, k, i), x, y, b, cores, mem, M.gpn[j]) != RC_OK:
                return RC_NO_MEMORY
        else:
            rl_least(ar_line(R, k, i), x, y, c, m, gg, M.cnt_hi, M.cnt_w)
        x = y
        if x >= stop:
            return RC_OK
    if x < stop:
        if hold:
            if nm_hold_node(M, j, i, cores, x, stop) != RC_OK:
                return RC_NO_MEMORY
        else:
            _line_least(&M.line[i], x, stop, c, m, gg, M.cnt_hi, M.cnt_w)
    return RC_OK


cdef inline bint _ri_fits(AdvResv* R, NodeModel* M, int64_t j, int64_t k, int32_t g, int64_t cores, int64_t t,
                          int64_t stop, int64_t now) noexcept nogil:
    # can job j (inside g, whose current window is k) have nodes of k over [t, stop)? M.take: where
    cdef int64_t w, i, c, m, gg
    cdef uint64_t x
    memset(M.cpu, 0, M.nn * sizeof(int64_t))
    for w in range(R.NW):
        x = R.nbits[k * R.NW + w]
        while x:
            i = w * 64 + __builtin_ctzll(x)
            x &= x - 1
            if ri_other_over(R, g, i, t, stop):
                continue
            c = m = gg = (<int64_t>1) << 62
            _pieces(R, M, g, i, t, stop, now, &c, &m, &gg, j, 0, False)
            M.cpu[i] = nm_node_cpus(M, j, i, c, m, gg)
    return nm_choose(M, cores, M.minn[j], M.maxn[j])


cdef inline int64_t ri_find(AdvResv* R, NodeModel* M, int64_t j, int64_t cores, int64_t d, int64_t now,
                            bint now_only, int64_t window, int64_t resolution) noexcept nogil:
    # nm_find_start for a job inside a reservation: the earliest candidate start (now, the window's
    # start, a time some node gains resources) inside its current window at which nodes of the window
    # can be chosen with the resources free throughout [t, round_up(t + d)); M.take: where
    cdef int32_t g = ri_group(R, j)
    cdef int64_t k = ri_current(R, g, now), t, stop, x = 0
    if k < 0:
        return NO_START
    t = R.start[k] if R.start[k] > now else now
    while True:
        if t >= R.end[k] or (now_only and t > now) or (window > 0 and t > now + window):
            return NO_START
        stop = t + d
        if resolution > 1:
            stop = ((stop + resolution - 1) // resolution) * resolution
        if stop >= EV_T_MAX:
            return NO_START
        if _ri_fits(R, M, j, k, g, cores, t, stop, now):
            return t
        while x < M.ntimes and M.times[x] <= t:
            x += 1
        if x >= M.ntimes:
            return NO_START
        t = M.times[x]


cdef inline int ri_hold(AdvResv* R, NodeModel* M, int64_t j, int64_t t, int64_t stop, int64_t now) noexcept nogil:
    # nm_hold for a job inside a reservation: M.take's cores over [t, stop), inside its windows on the
    # windows' lines, outside them on the plan's
    cdef int32_t g = ri_group(R, j)
    cdef int64_t i, c, m, gg
    for i in range(M.nn):
        if M.take[i] > 0 and _pieces(R, M, g, i, t, stop, now, &c, &m, &gg, j, M.take[i], True) != RC_OK:
            return RC_NO_MEMORY
    return nm_add_time(M, stop)


# ---- Slurm's backfill

cdef inline int ri_log(AdvResv* R, int64_t s, int64_t e, const uint64_t* bits) noexcept nogil:
    # a job's reservation of this cycle (nodes `bits`, NW words over [s, e)), for the records a job
    # inside a reservation sees
    cdef int64_t cap
    cdef void* q
    if R.lg_n >= R.lg_cap:
        cap = R.lg_cap * 2 if R.lg_cap else 16
        q = realloc(R.lg_s, cap * sizeof(int64_t))
        if q == NULL: return RC_NO_MEMORY
        R.lg_s = <int64_t*>q
        q = realloc(R.lg_e, cap * sizeof(int64_t))
        if q == NULL: return RC_NO_MEMORY
        R.lg_e = <int64_t*>q
        q = realloc(R.lg_bits, cap * R.NW * sizeof(uint64_t))
        if q == NULL: return RC_NO_MEMORY
        R.lg_bits = <uint64_t*>q
        R.lg_cap = cap
    R.lg_s[R.lg_n] = s
    R.lg_e[R.lg_n] = e
    memcpy(R.lg_bits + R.lg_n * R.NW, bits, R.NW * sizeof(uint64_t))
    R.lg_n += 1
    return RC_OK


cdef inline void _swap_records(AdvResv* R, SlurmSpace* X) noexcept nogil:
    # the cycle's records <-> the second set
    cdef int64_t* p
    cdef uint64_t* a
    cdef int64_t n
    p = X.b; X.b = R.vb; R.vb = p
    p = X.e; X.e = R.ve; R.ve = p
    p = X.nxt; X.nxt = R.vnxt; R.vnxt = p
    a = X.avail; X.avail = R.vavail; R.vavail = a
    n = X.n; X.n = R.vn; R.vn = n
    n = X.cap; X.cap = R.vcap; R.vcap = n


cdef inline int ri_view(AdvResv* R, SlurmSpace* X, int32_t g, int64_t k, int64_t now, int64_t window,
                        int64_t resolution) noexcept nogil:
    # X's records become those a job inside g sees (the cycle's, g's windows left out; ri_unview puts
    # them back), its windows the others', and its test is kept to window k (its nodes, its time)
    cdef int64_t o, xn = 0, r
    cdef uint64_t* keep = X.tbits
    _swap_records(R, X)
    if ss_reset(X, now, window, resolution) != RC_OK:
        return RC_NO_MEMORY
    for o in range(ar_live(R, now), R.n):
        if R.grp[o] == g:
            continue
        R.vxs[xn] = R.start[o]
        R.vxe[xn] = R.end[o]
        memcpy(R.vxbits + xn * R.NW, R.nbits + o * R.NW, R.NW * sizeof(uint64_t))
        xn += 1
        X.tbits = R.nbits + o * R.NW
        if ss_reserve(X, R.start[o] if R.start[o] > now else now, R.end[o]) != RC_OK:
            X.tbits = keep
            return RC_NO_MEMORY
    for r in range(R.lg_n):
        X.tbits = R.lg_bits + r * R.NW
        if ss_reserve(X, R.lg_s[r], R.lg_e[r]) != RC_OK:
            X.tbits = keep
            return RC_NO_MEMORY
    X.tbits = keep
    X.xn = xn
    X.xs = R.vxs
    X.xe = R.vxe
    X.xbits = R.vxbits
    X.in_s = R.start[k]
    X.in_e = R.end[k]
    X.in_bits = R.nbits + k * R.NW
    return RC_OK


cdef inline void ri_unview(AdvResv* R, SlurmSpace* X, int64_t now) noexcept nogil:
    # back to the cycle's records and windows (as ar_seed_space set them)
    cdef int64_t first = ar_live(R, now)
    _swap_records(R, X)
    X.xn = R.n - first
    X.xs = R.start + first
    X.xe = R.end + first
    X.xbits = R.nbits + first * R.NW
    X.in_bits = NULL
