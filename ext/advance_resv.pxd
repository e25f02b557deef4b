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

from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from memory cimport INF
from node_model cimport NodeModel, NodeLine, nl_point, nm_add_time
from slurm_space cimport SlurmSpace, ss_reserve
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


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


cdef inline void ar_free(AdvResv* R) noexcept nogil:
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
    if (R.start == NULL or R.end == NULL or R.ubits == NULL or R.nbits == NULL
            or R.scratch == NULL):
        ar_free(R)
        return RC_NO_MEMORY
    for i in range(n * W):
        R.ubits[i] = 0
    for i in range(n * NW):
        R.nbits[i] = 0
    R.W = W
    R.NW = NW
    R.next_end = 0
    R.first = 0
    R.n = n
    return RC_OK


cdef inline int64_t ar_live(AdvResv* R, int64_t now) noexcept nogil:
    # the first window that ends after now (time only moves on: the windows before it are over)
    while R.first < R.n and R.end[R.first] <= now:
        R.first += 1
    return R.first


cdef inline uint64_t* ar_free_units(AdvResv* R, uint64_t* free_units, int64_t now, int64_t d) noexcept nogil:
    # the free units a job of time d may take now: those of the windows that start before it would end
    # (and end after now) left out
    cdef int64_t k, w
    cdef bint copied = False
    for k in range(ar_live(R, now), R.n):
        if R.start[k] < now + d:
            if not copied:
                memcpy(R.scratch, free_units, R.W * sizeof(uint64_t))
                copied = True
            for w in range(R.W):
                R.scratch[w] &= ~R.ubits[k * R.W + w]
    return R.scratch if copied else free_units


cdef inline int ar_hold_lines(AdvResv* R, NodeModel* M, int64_t now) noexcept nogil:
    # pbf's exact plan: nothing free on a window's nodes from its start (or now) to its end
    cdef int64_t k, w, i, a, b, q, pa, pb
    cdef uint64_t x
    cdef NodeLine* L
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
    # the first window end the event loop has not reached (INF: none)
    return R.end[R.next_end] if R.next_end < R.n else INF


cdef inline bint ar_ends_due(AdvResv* R, int64_t t) noexcept nogil:
    # a window ends by t (each counted once): a pass may start jobs on its nodes
    cdef bint due = False
    while R.next_end < R.n and R.end[R.next_end] <= t:
        R.next_end += 1
        due = True
    return due
