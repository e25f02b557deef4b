# A bound on what Slurm's will-run test can find by a time t (header only): with every running job
# that ends by t given back, a node none of whose jobs is left gives a job at most the most cores of
# a node (vmax), one with a free core, or a job given back, at most vmax - 1 (a job left holds a core
# there), any other none. If the offered nodes cannot hold the job so, no batch of give-backs ending
# by t can start it, and the test's walk over them can be skipped (slurm_space.pxd: ss_will_run).
#
# Made once for each change of the running jobs (their give-back lists), read by any test and thread:
# the times at which each node first gains a free core and has none of its jobs left, in time order,
# and every S of them the nodes so far as a bitmap, so that the nodes by a time t are a bitmap and at
# most S - 1 nodes after it.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from nodes cimport Nodes

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil


ctypedef struct SsBound:
    int64_t gen                    # the give-back lists it was made from (SlurmSpace.gb_gen; -1: none)
    int64_t S                      # events between bitmaps (a multiple of 64)
    int64_t nf, np
    int64_t* ft                    # "full" events, in time order: at ft[e] node fnode[e] has none of its
    int32_t* fnode                 # running jobs left ...
    uint64_t* fck                  # ... and bitmap c (NW words) the nodes with none from the start and
                                   # those of events 0 .. c * S - 1
    int64_t* pt                    # "part" events: at pt[e] node pnode[e] gains its first free core
    int32_t* pnode                 # (the nodes with one now, or with no job, have none) ...
    uint64_t* pck                  # ... and bitmap c: those with a free core from the start and events
                                   # 0 .. c * S - 1
    int32_t* rem                   # (scratch: each node's jobs not yet given back)


cdef inline int sb_alloc(SsBound* B, int64_t nn, int64_t NW) noexcept nogil:
    # (the bitmaps: about 32 of them whatever the cluster's size, at most one for every 128 nodes)
    cdef int64_t n = nn if nn > 0 else 1, nck
    B.S = 64 * (NW // 32 if NW >= 64 else 2)
    nck = n // B.S + 1
    B.gen = -1
    B.nf = 0
    B.np = 0
    B.ft = <int64_t*>malloc(n * sizeof(int64_t))
    B.fnode = <int32_t*>malloc(n * sizeof(int32_t))
    B.pt = <int64_t*>malloc(n * sizeof(int64_t))
    B.pnode = <int32_t*>malloc(n * sizeof(int32_t))
    B.rem = <int32_t*>malloc(n * sizeof(int32_t))
    B.fck = <uint64_t*>malloc(nck * (NW if NW > 0 else 1) * sizeof(uint64_t))
    B.pck = <uint64_t*>malloc(nck * (NW if NW > 0 else 1) * sizeof(uint64_t))
    if (B.ft == NULL or B.fnode == NULL or B.pt == NULL or B.pnode == NULL or B.rem == NULL or B.fck == NULL
            or B.pck == NULL):
        return -1
    return 0


cdef inline void sb_free(SsBound* B) noexcept nogil:
    free(B.ft); free(B.fnode); free(B.pt); free(B.pnode); free(B.rem); free(B.fck); free(B.pck)
    B.ft = NULL; B.fnode = NULL; B.pt = NULL; B.pnode = NULL; B.rem = NULL; B.fck = NULL; B.pck = NULL
    B.gen = -1


cdef inline void _sb_marks(uint64_t* ck, int64_t NW, const int32_t* node, int64_t n, int64_t S) noexcept nogil:
    # bitmaps 1 .. n // S: each the one before and S more events' nodes
    cdef int64_t c, e, i
    for c in range(1, n // S + 1):
        memcpy(ck + c * NW, ck + (c - 1) * NW, NW * sizeof(uint64_t))
        for e in range((c - 1) * S, c * S):
            i = node[e]
            ck[c * NW + (i >> 6)] |= (<uint64_t>1) << (i & 63)


cdef inline void sb_make(SsBound* B, const Nodes* N, int64_t nn, int64_t NW, int64_t gen, const int64_t* gb_off,
                         const int32_t* gb_node, const int32_t* gb_on, const uint64_t* gb_idle,
                         const uint64_t* fbits) noexcept nogil:
    # B for the lists gen (gb_off, gb_node: each running job's nodes in end order; gb_on, gb_idle: each
    # node's running jobs, the nodes with none; fbits: the nodes with a free core now)
    cdef int64_t r, e, i, t, w
    memcpy(B.rem, gb_on, nn * sizeof(int32_t))
    B.nf = 0
    B.np = 0
    for r in range(N.nrun):
        t = N.by_end[r].end
        for e in range(gb_off[r], gb_off[r + 1]):
            i = gb_node[e]
            if B.rem[i] == gb_on[i] and not (fbits[i >> 6] >> (i & 63)) & 1:
                B.pt[B.np] = t
                B.pnode[B.np] = <int32_t>i
                B.np += 1
            B.rem[i] -= 1
            if B.rem[i] == 0:
                B.ft[B.nf] = t
                B.fnode[B.nf] = <int32_t>i
                B.nf += 1
    for w in range(NW):
        B.fck[w] = gb_idle[w]
        B.pck[w] = gb_idle[w] | fbits[w]
    _sb_marks(B.fck, NW, B.fnode, B.nf, B.S)
    _sb_marks(B.pck, NW, B.pnode, B.np, B.S)
    B.gen = gen


cdef inline int64_t _sb_offered_by(const uint64_t* ck, int64_t NW, const int64_t* times, const int32_t* node,
                                   int64_t n, int64_t S, const uint64_t* offer, int64_t t) noexcept nogil:
    # the offered nodes among those of the events at or before t and the first bitmap's
    cdef int64_t lo = 0, hi = n, mid, c, w, e, i, k = 0
    cdef const uint64_t* b
    while lo < hi:                     # (lo: the events at or before t)
        mid = (lo + hi) >> 1
        if times[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    c = lo // S
    b = ck + c * NW
    for w in range(NW):
        k += __builtin_popcountll(offer[w] & b[w])
    for e in range(c * S, lo):
        i = node[e]
        k += (offer[i >> 6] >> (i & 63)) & 1
    return k


cdef inline bint sb_cannot(const SsBound* B, int64_t NW, const uint64_t* offer, int64_t t, int64_t cores,
                           int64_t minn, int64_t maxn, int64_t vmax) noexcept nogil:
    # the offered nodes cannot hold cores on minn .. maxn nodes (maxn <= 0: any) by t as B bounds them
    cdef int64_t full, some, part, m, f
    some = _sb_offered_by(B.pck, NW, B.pt, B.pnode, B.np, B.S, offer, t)
    if some < minn:
        return True
    full = _sb_offered_by(B.fck, NW, B.ft, B.fnode, B.nf, B.S, offer, t)
    part = some - full
    m = maxn if 0 < maxn < some else some
    f = full if full < m else m
    return f * vmax + (part if part < m - f else m - f) * (vmax - 1) < cores
