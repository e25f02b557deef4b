# The profile (DESIGN §4.2): the plan of the future during one pass, as a linked list of time slots
# (header only). A slot has the count of the units free in it and a bitmap of the units that running
# jobs and this pass's starts leave free -- once free, such a unit stays free -- while this pass's
# reservations are kept aside as a list (sparse, sorted by begin): a slot's free units are its bitmap
# minus the reservations active in it. A reservation then costs a count update per slot instead of a
# bitmap update (one cache line) per slot, and a search needs one bitmap read per candidate start.
# Every function works on a Prof struct without the GIL, so that each worker thread of the parallel
# pass can own a private copy.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memmove, memcpy

from memory cimport INF, grow
from words cimport w_popcount, w_any_common, w_copy, w_zero, w_take_lowest, w_take_lowest_busy, w_span
from pbf._codes cimport RC_OK, RC_SLOT_NOT_FOUND
from pbf._codes cimport RC_NO_MEMORY, NO_START

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil

cdef enum:
    FRONTIER_MAX = 32          # (units, estimate) misfit pairs a pass remembers
    BLOCK_SLOTS = 32           # slots a block is made with (it splits at twice that)
    HINTS_MAX = 16             # earliest starts a pass remembers

ctypedef struct Hints:         # earliest starts found by a pass's full searches: (units, estimate) ->
                               # start (-1: none within the window); a lower bound, on the profile they
                               # were found on and on any later state of it in the pass, for every job
                               # at least as wide and as long (a ring, newest last)
    int64_t k[HINTS_MAX]       # units ...
    int64_t d[HINTS_MAX]       # ... estimate ...
    int64_t t[HINTS_MAX]       # ... earliest start found
    int64_t n                  # entries held
    int64_t next               # the entry the next search overwrites once the ring is full


ctypedef struct Prof:
    int64_t W                  # words per bitmap
    int64_t window             # bf_window (0 = unlimited)
    int64_t resolution         # bf_resolution (0 = exact)
    int64_t* s_begin           # slot i begins at s_begin[i] (slot 0: now) ...
    int64_t* s_cnt             # ... has s_cnt[i] + b_lazy[s_blk[i]] units free (prof_cnt) ...
    int32_t* s_next            # ... and is followed by slot s_next[i] (-1: the last slot) ...
    int32_t* s_prev            # ... and preceded by slot s_prev[i] (-1: slot 0)
    uint64_t* s_bits           # the units of slot i that no running job or start of this pass holds
                               # (W words from s_bits + i W); minus the reservations active in the
                               # slot, they are its free units
    # The slots, in list order, fall into blocks of about BLOCK_SLOTS: a reservation covering a
    # whole block subtracts its units from the block's count once (b_lazy), and the window search
    # skips a block whose least count is enough, so neither walks the block's slots.
    int32_t* s_blk             # the block of slot i
    int32_t* b_first           # block b's slots run from b_first[b] to b_last[b] in list order ...
    int32_t* b_last
    int32_t* b_size            # ... b_size[b] of them (0: the block is gone)
    int64_t* b_lazy            # units taken from every slot of the block
    int64_t* b_min             # at most the least s_cnt in the block (b_min + b_lazy bounds counts)
    int64_t nblk               # blocks made in this pass
    int64_t blk_slots          # slots a block is made with (BLOCK_SLOTS; tests make it small)
    int64_t nslots             # slots allocated in this pass (merged ones included)
    int64_t slot_cap           # room for slots
    int64_t nmerged            # slots unlinked by merging (live slots = nslots - nmerged)
    int32_t prev_of_at         # set by prof_find_start: the slot before the one returned, or -1
    bint monotone              # every slot's free units include the previous slot's (no reservation yet)
    uint64_t* cand             # units free throughout the window found by the last search
    uint64_t* chosen           # the units picked for the placement
    int32_t* q_nz              # prof_commit's scratch: the words of a placement
    uint64_t* prow             # scratch: a slot's free units as this pass sees them (W words)
    uint64_t* prow2            # scratch: the same for a second slot
    # this pass's reservations, their units kept sparse (a reservation's k units touch at most k
    # of the W words; most Beocat jobs are serial):
    int64_t* r_begin           # reservation i holds its units from r_begin[i] ...
    int64_t* r_stop            # ... to r_stop[i] ...
    int64_t* r_wofs            # ... and they are r_mask[m] in word r_word[m], r_wofs[i] <= m < r_wofs[i+1]
    int32_t* r_word
    uint64_t* r_mask
    int32_t* r_order           # the reservations by r_begin (ties: made earlier first)
    int32_t* r_ostop           # the reservations by r_stop (ties: made earlier first)
    int32_t* r_act             # scratch: reservations active in a slot (prof_choose)
    int32_t* r_list            # scratch: reservations that matter to a unit choice
    int64_t nresv_pass         # reservations made in this pass
    int64_t r_cap              # room in r_begin, r_stop, r_wofs (one more)
    int64_t r_words_cap        # room in r_word, r_mask
    # (units, estimate) pairs that could not start now in this pass, Pareto-minimal: a job at least
    # as wide and as long cannot start now either, since a pass only ever removes free units
    int64_t f_units[FRONTIER_MAX]  # sorted ascending ...
    int64_t f_est[FRONTIER_MAX]    # ... so these fall
    int64_t nfrontier          # pairs held
    Hints hints                # earliest starts found by this pass's full searches
    int32_t* scratch_idx       # prof_choose's backward walk: slots before a reservation's start
    int64_t scratch_cap        # room in scratch_idx


cdef inline int prof_init(Prof* P, int64_t W) noexcept nogil:
    memset(P, 0, sizeof(Prof))
    P.W = W
    P.blk_slots = BLOCK_SLOTS
    P.cand = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.chosen = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.q_nz = <int32_t*>malloc(max(1, W) * sizeof(int32_t))
    P.prow = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.prow2 = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.r_wofs = <int64_t*>malloc(sizeof(int64_t))
    if (P.cand == NULL or P.chosen == NULL or P.q_nz == NULL or P.prow == NULL or P.prow2 == NULL
            or P.r_wofs == NULL):
        return RC_NO_MEMORY
    P.r_wofs[0] = 0
    return RC_OK


cdef inline void prof_free(Prof* P) noexcept nogil:
    free(P.s_begin)
    free(P.s_cnt)
    free(P.s_next)
    free(P.s_prev)
    free(P.s_bits)
    free(P.s_blk)
    free(P.b_first)
    free(P.b_last)
    free(P.b_size)
    free(P.b_lazy)
    free(P.b_min)
    free(P.cand)
    free(P.chosen)
    free(P.q_nz)
    free(P.prow)
    free(P.prow2)
    free(P.r_list)
    free(P.r_begin)
    free(P.r_stop)
    free(P.r_wofs)
    free(P.r_word)
    free(P.r_mask)
    free(P.r_order)
    free(P.r_ostop)
    free(P.r_act)
    free(P.scratch_idx)
    memset(P, 0, sizeof(Prof))


cdef inline void prof_start_pass(Prof* P, int64_t window, int64_t resolution) noexcept nogil:
    # per-pass state: no reservation, no known misfit, monotone
    P.window = window
    P.resolution = resolution
    P.monotone = True
    P.nfrontier = 0
    P.nresv_pass = 0
    P.hints.n = 0
    P.hints.next = 0


cdef inline int prof_copy(Prof* D, const Prof* S) noexcept nogil:
    # D becomes a copy of S's slots, reservations and per-pass state (a worker's private profile)
    cdef int64_t n = S.nslots, cap
    D.window = S.window
    D.resolution = S.resolution
    D.blk_slots = S.blk_slots
    D.monotone = S.monotone
    D.nfrontier = 0
    D.hints.n = 0
    D.hints.next = 0
    D.nslots = 0
    if prof_reserve_slots(D, n) != RC_OK:
        return RC_NO_MEMORY
    memcpy(D.s_begin, S.s_begin, n * sizeof(int64_t))
    memcpy(D.s_cnt, S.s_cnt, n * sizeof(int64_t))
    memcpy(D.s_next, S.s_next, n * sizeof(int32_t))
    memcpy(D.s_prev, S.s_prev, n * sizeof(int32_t))
    memcpy(D.s_bits, S.s_bits, <size_t>(n * D.W) * sizeof(uint64_t))
    memcpy(D.s_blk, S.s_blk, n * sizeof(int32_t))
    memcpy(D.b_first, S.b_first, S.nblk * sizeof(int32_t))
    memcpy(D.b_last, S.b_last, S.nblk * sizeof(int32_t))
    memcpy(D.b_size, S.b_size, S.nblk * sizeof(int32_t))
    memcpy(D.b_lazy, S.b_lazy, S.nblk * sizeof(int64_t))
    memcpy(D.b_min, S.b_min, S.nblk * sizeof(int64_t))
    D.nblk = S.nblk
    D.nslots = n
    D.nmerged = S.nmerged
    D.nresv_pass = 0
    if prof_reserve_resv(D, S.nresv_pass, S.r_wofs[S.nresv_pass]) != RC_OK:
        return RC_NO_MEMORY
    memcpy(D.r_begin, S.r_begin, S.nresv_pass * sizeof(int64_t))
    memcpy(D.r_stop, S.r_stop, S.nresv_pass * sizeof(int64_t))
    memcpy(D.r_wofs, S.r_wofs, (S.nresv_pass + 1) * sizeof(int64_t))
    memcpy(D.r_order, S.r_order, S.nresv_pass * sizeof(int32_t))
    memcpy(D.r_ostop, S.r_ostop, S.nresv_pass * sizeof(int32_t))
    memcpy(D.r_word, S.r_word, S.r_wofs[S.nresv_pass] * sizeof(int32_t))
    memcpy(D.r_mask, S.r_mask, S.r_wofs[S.nresv_pass] * sizeof(uint64_t))
    D.nresv_pass = S.nresv_pass
    return RC_OK


cdef inline int prof_apply(Prof* P, int64_t k, int64_t t, int64_t d, const uint64_t* units, bint reservation) noexcept nogil:
    # Apply a placement committed elsewhere (the commit log of the parallel pass) exactly as the
    # committer applied it: its start t is a slot beginning in every copy that has applied the same
    # earlier placements, so the same splits and merges happen.
    cdef int32_t prev
    cdef int32_t si = prof_seek(P, t, &prev)
    if P.s_begin[si] != t:
        return RC_SLOT_NOT_FOUND
    P.prev_of_at = prev
    w_copy(P.chosen, units, P.W)
    return prof_commit(P, k, t, d, si, reservation)


cdef inline int prof_ensure_scratch(Prof* P, int64_t need) noexcept nogil:
    # the backward walk of prof_choose lists at most every slot
    return grow(<void**>&P.scratch_idx, &P.scratch_cap, need, sizeof(int32_t))


cdef inline int64_t prof_live_slots(const Prof* P) noexcept nogil:
    return P.nslots - P.nmerged


cdef inline int prof_reserve_slots(Prof* P, int64_t n) noexcept nogil:
    # room for n slots (doubling)
    cdef int64_t cap
    cdef void* q
    if n <= P.slot_cap:
        return RC_OK
    cap = P.slot_cap * 2 if P.slot_cap else 64
    while cap < n:
        cap *= 2
    q = realloc(P.s_begin, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    P.s_begin = <int64_t*>q
    q = realloc(P.s_cnt, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    P.s_cnt = <int64_t*>q
    q = realloc(P.s_next, cap * sizeof(int32_t))
    if q == NULL: return RC_NO_MEMORY
    P.s_next = <int32_t*>q
    q = realloc(P.s_prev, cap * sizeof(int32_t))
    if q == NULL: return RC_NO_MEMORY
    P.s_prev = <int32_t*>q
    q = realloc(P.s_bits, <size_t>(cap * P.W) * sizeof(uint64_t))
    if q == NULL: return RC_NO_MEMORY
    P.s_bits = <uint64_t*>q
    # every block holds a slot when made: no more blocks than slots
    q = realloc(P.s_blk, cap * sizeof(int32_t))
    if q == NULL: return RC_NO_MEMORY
    P.s_blk = <int32_t*>q
    q = realloc(P.b_first, cap * sizeof(int32_t))
    if q == NULL: return RC_NO_MEMORY
    P.b_first = <int32_t*>q
    q = realloc(P.b_last, cap * sizeof(int32_t))
    if q == NULL: return RC_NO_MEMORY
    P.b_last = <int32_t*>q
    q = realloc(P.b_size, cap * sizeof(int32_t))
    if q == NULL: return RC_NO_MEMORY
    P.b_size = <int32_t*>q
    q = realloc(P.b_lazy, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    P.b_lazy = <int64_t*>q
    q = realloc(P.b_min, cap * sizeof(int64_t))
    if q == NULL: return RC_NO_MEMORY
    P.b_min = <int64_t*>q
    P.slot_cap = cap
    return RC_OK


cdef inline int32_t prof_new_slot(Prof* P) noexcept nogil:
    if P.nslots >= P.slot_cap and prof_reserve_slots(P, P.nslots + 1) != RC_OK:
        return RC_NO_MEMORY
    P.nslots += 1
    return <int32_t>(P.nslots - 1)


cdef inline int64_t prof_cnt(const Prof* P, int64_t i) noexcept nogil:
    # the units free in slot i
    return P.s_cnt[i] + P.b_lazy[P.s_blk[i]]


cdef inline void prof_blocks_build(Prof* P) noexcept nogil:
    # cut the freshly built list (slots 0 .. nslots-1 in order) into blocks of blk_slots, and
    # link it backwards. Built counts only grow along the list: a block's least is its first.
    cdef int64_t i, b = 0, r = 0, n = P.nslots, m = P.blk_slots
    for i in range(n):
        P.s_prev[i] = <int32_t>(i - 1)
        P.s_blk[i] = <int32_t>b
        r += 1
        if r == m:
            r = 0
            b += 1
    P.nblk = b + (r > 0)
    for b in range(P.nblk):
        P.b_first[b] = <int32_t>(b * m)
        P.b_last[b] = <int32_t>(min(n, (b + 1) * m) - 1)
        P.b_size[b] = P.b_last[b] - P.b_first[b] + 1
        P.b_lazy[b] = 0
        P.b_min[b] = P.s_cnt[P.b_first[b]]


cdef inline void prof_block_split(Prof* P, int32_t b) noexcept nogil:
    # block b has grown to twice blk_slots: its second half becomes a new block (there is room:
    # no more blocks than slots)
    cdef int32_t j = P.b_first[b], nb = <int32_t>P.nblk
    cdef int64_t n
    P.nblk += 1
    P.b_lazy[nb] = P.b_lazy[b]
    P.b_min[b] = INF
    for n in range(P.blk_slots):
        if P.s_cnt[j] < P.b_min[b]:
            P.b_min[b] = P.s_cnt[j]
        if n < P.blk_slots - 1:
            j = P.s_next[j]
    P.b_first[nb] = P.s_next[j]
    P.b_last[nb] = P.b_last[b]
    P.b_size[nb] = P.b_size[b] - P.blk_slots
    P.b_last[b] = j
    P.b_size[b] = <int32_t>P.blk_slots
    P.b_min[nb] = INF
    j = P.b_first[nb]
    while True:
        P.s_blk[j] = nb
        if P.s_cnt[j] < P.b_min[nb]:
            P.b_min[nb] = P.s_cnt[j]
        if j == P.b_last[nb]:
            break
        j = P.s_next[j]


cdef inline int32_t prof_seek(const Prof* P, int64_t t, int32_t* prev) noexcept nogil:
    # the last slot beginning at or before t (t >= slot 0's beginning), and in *prev the slot before
    # it (-1 for none); whole blocks are stepped over
    cdef int32_t i = 0, p = -1, b, nx
    while True:
        b = P.s_blk[i]
        if i == P.b_first[b]:
            nx = P.s_next[P.b_last[b]]
            if nx != -1 and P.s_begin[nx] <= t:
                p = P.b_last[b]
                i = nx
                continue
        nx = P.s_next[i]
        if nx == -1 or P.s_begin[nx] > t:
            break
        p = i
        i = nx
    prev[0] = p
    return i


cdef inline int64_t prof_round_up(Prof* P, int64_t t) noexcept nogil:
    if P.resolution <= 1:
        return t
    return ((t + P.resolution - 1) // P.resolution) * P.resolution


cdef inline int64_t prof_find_start(Prof* P, int64_t k, int64_t d, int64_t now, bint now_only,
                         int32_t* at) noexcept nogil:
    # Earliest start t >= now at which k units are free throughout [t, round_up(t+d)); P.cand
    # gets the units free throughout, *at the slot starting at t. Candidate starts are slot
    # beginnings. Returns NO_START if none (only with now_only or a bounded window).
    cdef int32_t i = 0, j, prev = -1
    cdef int64_t t, c, w, e
    cdef int64_t W = P.W
    cdef bint ok
    cdef uint64_t* bits
    if P.monotone:
        # free units only grow with time: the first slot with k free units is the answer
        while i != -1:
            t = P.s_begin[i]
            if P.window > 0 and t > now + P.window:
                return NO_START
            if P.s_cnt[i] >= k:        # (no reservation yet: no block has a lazy count)
                w_copy(P.cand, P.s_bits + <int64_t>i * W, W)
                at[0] = i
                P.prev_of_at = prev
                return t
            if now_only:
                return NO_START
            prev = i
            i = P.s_next[i]
        return NO_START
    if not now_only:
        return prof_find_start_hinted(P, k, d, now, at)
    # Can it start now? The units free throughout [now, stop) are exactly slot 0's free units
    # minus those of this pass's reservations overlapping the window: running jobs only give
    # units back as time goes on, and every start-now placement already left slot 0. So one AND
    # per overlapping reservation replaces one per slot (thousands on a busy cluster).
    e = prof_round_up(P, now + d)
    if prof_window_units(P, 0, now, e, k) < k:
        return NO_START
    at[0] = 0
    P.prev_of_at = -1
    return now


cdef inline int64_t hints_bound(const Hints* H, int64_t k, int64_t d) noexcept nogil:
    # the latest start found for a job no wider and no longer: -1 if one had none within the
    # window, -2 if no such job was searched
    cdef int64_t h, bound = -2
    for h in range(H.n):
        if H.k[h] <= k and H.d[h] <= d:
            if H.t[h] < 0:
                return -1
            if H.t[h] > bound:
                bound = H.t[h]
    return bound


cdef inline void hints_add(Hints* H, int64_t k, int64_t d, int64_t t) noexcept nogil:
    cdef int64_t h = H.n if H.n < HINTS_MAX else H.next
    if H.n < HINTS_MAX:
        H.n += 1
    else:
        H.next = (H.next + 1) % HINTS_MAX
    H.k[h] = k
    H.d[h] = d
    H.t[h] = t


cdef inline int64_t prof_find_start_bounded(Prof* P, int64_t k, int64_t d, int64_t now, int64_t bound,
                                            int32_t* at) noexcept nogil:
    # The window search, begun at `bound` (hints_bound): within a pass the profile only loses free
    # units, and a wider or longer job fits nowhere a narrower or shorter one does not, so its
    # earliest start is not before that one (nor is there one within the window if that one had
    # none). The search begins at the last slot beginning at or before the bound, with the same
    # answer and candidates as from slot 0: bursts of identical jobs cost one walk, not one each.
    cdef int32_t i = 0, prev = -1
    if bound == -1:
        return NO_START
    if bound >= 0:
        i = prof_seek(P, bound, &prev)
    return prof_find_start_window(P, k, d, now, i, prev, at)


cdef inline int64_t prof_find_start_hinted(Prof* P, int64_t k, int64_t d, int64_t now, int32_t* at) noexcept nogil:
    # the window search, bounded by this profile's own hints, which it then extends
    cdef int64_t bound = hints_bound(&P.hints, k, d), t
    if bound == -1:
        return NO_START
    t = prof_find_start_bounded(P, k, d, now, bound, at)
    hints_add(&P.hints, k, d, t)
    return t


cdef inline int64_t prof_find_start_window(Prof* P, int64_t k, int64_t d, int64_t now, int32_t first,
                                   int32_t first_prev, int32_t* at) noexcept nogil:
    # The earliest start t >= now at which k units are free throughout [t, round_up(t + d)).
    # Free counts are read first: a window holding a slot with fewer than k free units is skipped,
    # with every candidate up to that slot, before any bitmap work. A candidate whose window passes
    # is tested without walking its slots (prof_window_units): one bitmap read and a few sparse
    # words, where an AND over every slot of a long job's window would cross thousands of cache
    # lines.
    # Returns the earliest start, or NO_START (beyond bf_window). The candidates begin at slot `first`
    # (whose predecessor is first_prev): 0 and -1 for all.
    cdef int64_t W = P.W, t, stop
    # e: how far the window's counts were read; bad: the last slot read with fewer than k free units
    cdef int32_t i = first, e = first, prev = first_prev, bad = -1, b
    cdef bint bad_in_window = False
    while i != -1:
        t = P.s_begin[i]
        if P.window > 0 and t > now + P.window:
            return NO_START
        stop = prof_round_up(P, t + d)
        # extend the window to every slot beginning before the placement's end, reading counts only
        while e != -1 and P.s_begin[e] < stop:
            b = P.s_blk[e]
            if e == P.b_first[b] and P.s_begin[P.b_last[b]] < stop and P.b_min[b] + P.b_lazy[b] >= k:
                e = P.s_next[P.b_last[b]]       # the whole block is in the window, none short
                continue
            if P.s_cnt[e] + P.b_lazy[b] < k:
                bad = e
                bad_in_window = True
            e = P.s_next[e]
        if bad_in_window:
            # A slot of the window has fewer than k free units: no start here, nor at any slot up to
            # that one (each of their windows holds it too). Go past it without any bitmap work.
            prev = bad
            i = P.s_next[bad]
            bad_in_window = False
            continue
        if prof_window_units(P, i, t, stop, k) >= k:
            at[0] = i
            P.prev_of_at = prev
            return t
        prev = i
        i = P.s_next[i]
    return NO_START


cdef inline void prof_choose(Prof* P, int64_t k, int64_t t, int64_t d, int32_t si, int64_t now) noexcept nogil:
    # Pick k units of P.cand into P.chosen (DESIGN §4.4):
    #  - a job starting now takes first the units that a later slot (a reservation) needs, the
    #    earliest-needed first, so units free for long stay free for long jobs;
    #  - a reservation takes first the units busy just before it starts (freed by running jobs or
    #    earlier placements), latest-busy first, so units free now stay free for backfill.
    # Ties and the rest: lowest unit index.
    cdef int64_t W = P.W, need = k, n = 0, nl = 0, lo, hi, r, m, w, b, o, o2, stop
    cdef int32_t j, i
    if w_popcount(P.cand, W) == k:
        # every candidate is needed: the order of preference cannot change the set
        w_copy(P.chosen, P.cand, W)
        w_zero(P.cand, W)
        return
    w_zero(P.chosen, W)
    w_span(P.cand, W, &lo, &hi)     # the busy units below only matter among the candidates
    if t == now and not P.monotone:
        # (while the profile is monotone no later slot lacks any of these units: nothing to prefer)
        # A candidate is free now and outside every reservation overlapping the placement, so a
        # later slot lacks it only inside a reservation beginning at or after the placement's end:
        # walking the later slots, the units taken at each are those of the reservations beginning
        # there, lowest first.
        stop = prof_round_up(P, t + d)
        for w in range(lo, hi):
            P.prow[w] = ~(<uint64_t>0)
        o = prof_first_resv_from(P, stop)
        while o < P.nresv_pass and need > 0:
            b = P.r_begin[P.r_order[o]]
            n = o
            while o < P.nresv_pass and P.r_begin[P.r_order[o]] == b:
                r = P.r_order[o]
                for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
                    w = P.r_word[m]
                    if w >= lo and w < hi:
                        P.prow[w] &= ~P.r_mask[m]
                o += 1
            need = w_take_lowest_busy(P.cand, P.chosen, need, lo, hi, P.prow)
            for n in range(n, o):
                r = P.r_order[n]
                for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
                    w = P.r_word[m]
                    if w >= lo and w < hi:
                        P.prow[w] = ~(<uint64_t>0)
    elif t != now:
        # Slots before t, latest first. A candidate is busy in one of them when running jobs or
        # this pass's starts hold it there (the slot's bitmap) or a reservation ending by t does
        # (one overlapping t would overlap the placement too). Walking back, those reservations
        # join the active set as the walk passes their ends (by stop) and leave it at their begins;
        # the walk seldom goes past a slot or two.
        for w in range(lo, hi):
            P.prow2[w] = 0                      # the units of the active reservations
        o = prof_first_stop_after(P, t) - 1     # the next reservation to join
        nl = 0
        j = P.s_prev[si]
        while j != -1 and need > 0:
            b = P.s_begin[j]
            while o >= 0 and P.r_stop[P.r_ostop[o]] > b:
                r = P.r_ostop[o]
                o -= 1
                if P.r_begin[r] <= b and prof_resv_meets(P, r, P.cand):
                    P.r_act[nl] = <int32_t>r
                    nl += 1
                    for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
                        P.prow2[P.r_word[m]] |= P.r_mask[m]
            # those that began after this slot leave; the rest are ORed again (two reservations at
            # different times may hold the same unit)
            stop = nl
            o2 = 0
            while o2 < nl:
                r = P.r_act[o2]
                if P.r_begin[r] > b:
                    nl -= 1
                    P.r_act[o2] = P.r_act[nl]
                else:
                    o2 += 1
            if nl < stop:
                for w in range(lo, hi):
                    P.prow2[w] = 0
                for o2 in range(nl):
                    r = P.r_act[o2]
                    for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
                        P.prow2[P.r_word[m]] |= P.r_mask[m]
            if nl == 0:
                need = w_take_lowest_busy(P.cand, P.chosen, need, lo, hi, P.s_bits + <int64_t>j * W)
            else:
                for w in range(lo, hi):
                    P.prow[w] = P.s_bits[<int64_t>j * W + w] & ~P.prow2[w]
                need = w_take_lowest_busy(P.cand, P.chosen, need, lo, hi, P.prow)
            j = P.s_prev[j]
    if need > 0:
        w_take_lowest(P.cand, P.chosen, need, W)


cdef inline int prof_commit(Prof* P, int64_t k, int64_t t, int64_t d, int32_t si, bint reservation) noexcept nogil:
    # Place P.chosen over [t, t+d): every slot overlapping it loses k free units, the last one split
    # at the end. A start takes the units out of the slots' bitmaps; a reservation is listed. A
    # placement holds its units until its end rounded up to the resolution, as running jobs' planned
    # ends are, so that a job started in this pass looks the same as one started before.
    cdef int64_t W = P.W, w, end, stop = prof_round_up(P, t + d), nw = 0, m
    cdef int32_t j = si, n, last = si, b
    cdef bint split = False
    cdef uint64_t* row
    if not reservation:
        # only the words holding chosen units change
        for w in range(W):
            if P.chosen[w]:
                P.q_nz[nw] = <int32_t>w
                nw += 1
    while j != -1 and P.s_begin[j] < stop:
        b = P.s_blk[j]
        if reservation and j == P.b_first[b]:
            # a block inside the placement loses k units in every slot: once, for the block
            n = P.s_next[P.b_last[b]]
            if n != -1 and P.s_begin[n] <= stop:
                P.b_lazy[b] -= k
                last = P.b_last[b]
                j = n
                continue
        end = P.s_begin[P.s_next[j]] if P.s_next[j] != -1 else INF
        if end > stop:
            n = prof_new_slot(P)
            if n < 0:
                return RC_NO_MEMORY
            P.s_begin[n] = stop
            P.s_cnt[n] = P.s_cnt[j]
            P.s_next[n] = P.s_next[j]
            P.s_prev[n] = j
            if P.s_next[j] != -1:
                P.s_prev[P.s_next[j]] = n
            P.s_next[j] = n
            w_copy(P.s_bits + <int64_t>n * W, P.s_bits + <int64_t>j * W, W)
            P.s_blk[n] = b
            if P.b_last[b] == j:
                P.b_last[b] = n
            P.b_size[b] += 1
            split = True
        row = P.s_bits + <int64_t>j * W
        for m in range(nw):
            w = P.q_nz[m]
            row[w] &= ~P.chosen[w]
        P.s_cnt[j] -= k
        if P.s_cnt[j] < P.b_min[b]:
            P.b_min[b] = P.s_cnt[j]
        last = j
        j = P.s_next[j]
    if split and P.b_size[P.s_blk[last]] >= 2 * P.blk_slots:
        prof_block_split(P, P.s_blk[last])
    if reservation:
        P.monotone = False
        if prof_note_resv(P, t, stop) != RC_OK:
            return RC_NO_MEMORY
    # Only at the placement's two edges can neighbouring slots have become equal (inside it every
    # slot lost the same units). Merge them: a later boundary with the same free units is never
    # an earliest start, and unit choice sees the same units, so no decision changes; the slot
    # count stays bounded.
    # (the counts tell most neighbours apart: checked here, where it costs no call)
    n = P.s_next[last]
    if n != -1 and prof_cnt(P, last) == prof_cnt(P, n):
        prof_merge_equal(P, last, n)
    if P.prev_of_at >= 0:
        n = P.s_next[P.prev_of_at]
        if n != -1 and prof_cnt(P, P.prev_of_at) == prof_cnt(P, n):
            prof_merge_equal(P, P.prev_of_at, n)
    return RC_OK


cdef inline void prof_merge_equal(Prof* P, int32_t a, int32_t b) noexcept nogil:
    # unlink b, a's successor, when both have the same free units (their counts are equal)
    cdef int64_t w, W = P.W
    cdef int32_t bb
    if not prof_resv_boundary(P, P.s_begin[b]):
        # the same reservations are active in both, and they hold units free in both bitmaps (a
        # reservation takes free units): the free units are equal exactly when the bitmaps are
        for w in range(W):
            if P.s_bits[<int64_t>a * W + w] != P.s_bits[<int64_t>b * W + w]:
                return
    else:
        prof_slot_free(P, a, P.prow, 0, W)
        prof_slot_free(P, b, P.prow2, 0, W)
        for w in range(W):
            if P.prow[w] != P.prow2[w]:
                return
    bb = P.s_blk[b]
    P.b_size[bb] -= 1
    if P.b_first[bb] == b:
        P.b_first[bb] = P.s_next[b]     # (unless the block is now empty: then unreachable)
    elif P.b_last[bb] == b:
        P.b_last[bb] = a                # (b was not first: a is in the same block)
    P.s_next[a] = P.s_next[b]
    if P.s_next[b] != -1:
        P.s_prev[P.s_next[b]] = a
    P.nmerged += 1


cdef inline bint prof_known_misfit(Prof* P, int64_t k, int64_t d) noexcept nogil:
    # The pairs are Pareto-minimal and kept sorted by units (so estimates fall): of those no wider
    # than k, the last has the shortest estimate.
    cdef int64_t i = 0
    while i < P.nfrontier and P.f_units[i] <= k:
        i += 1
    return i > 0 and P.f_est[i - 1] <= d


cdef inline void prof_note_misfit(Prof* P, int64_t k, int64_t d) noexcept nogil:
    # insert (k, d), dropping the pairs it dominates (at least as wide and as long): in the sorted
    # order they are the run starting at the first pair at least k wide
    cdef int64_t a = 0, b, i, n = P.nfrontier, gone
    if prof_known_misfit(P, k, d):
        return
    while a < n and P.f_units[a] < k:
        a += 1
    b = a
    while b < n and P.f_est[b] >= d:
        b += 1
    gone = b - a
    if gone == 0 and n >= FRONTIER_MAX:
        return                          # full: a cache may forget
    # shift the tail [b, n) to a + 1
    if gone != 1:
        memmove(&P.f_units[a + 1], &P.f_units[b], (n - b) * sizeof(int64_t))
        memmove(&P.f_est[a + 1], &P.f_est[b], (n - b) * sizeof(int64_t))
    P.f_units[a] = k
    P.f_est[a] = d
    P.nfrontier = n - gone + 1


cdef inline int prof_reserve_resv(Prof* P, int64_t n, int64_t nwords) noexcept nogil:
    # room for n reservations holding nwords sparse words
    cdef int64_t cap
    cdef void* q
    if n > P.r_cap:
        cap = P.r_cap * 2 if P.r_cap > 0 else 16
        while cap < n:
            cap *= 2
        q = realloc(P.r_begin, cap * sizeof(int64_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_begin = <int64_t*>q
        q = realloc(P.r_stop, cap * sizeof(int64_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_stop = <int64_t*>q
        q = realloc(P.r_order, cap * sizeof(int32_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_order = <int32_t*>q
        q = realloc(P.r_list, cap * sizeof(int32_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_list = <int32_t*>q
        q = realloc(P.r_ostop, cap * sizeof(int32_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_ostop = <int32_t*>q
        q = realloc(P.r_act, cap * sizeof(int32_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_act = <int32_t*>q
        q = realloc(P.r_wofs, (cap + 1) * sizeof(int64_t))
        if q == NULL: return RC_NO_MEMORY
        P.r_wofs = <int64_t*>q
        P.r_cap = cap
    if nwords > P.r_words_cap:
        cap = P.r_words_cap
        if grow(<void**>&P.r_word, &cap, nwords, sizeof(int32_t)) != RC_OK: return RC_NO_MEMORY
        cap = P.r_words_cap
        if grow(<void**>&P.r_mask, &cap, nwords, sizeof(uint64_t)) != RC_OK: return RC_NO_MEMORY
        P.r_words_cap = cap
    return RC_OK


cdef inline int prof_note_resv(Prof* P, int64_t t, int64_t stop) noexcept nogil:
    # record P.chosen as a reservation over [t, stop)
    cdef int64_t n = P.nresv_pass, m = P.r_wofs[n], w
    if prof_reserve_resv(P, n + 1, m + P.W) != RC_OK:
        return RC_NO_MEMORY
    for w in range(P.W):
        if P.chosen[w]:
            P.r_word[m] = <int32_t>w
            P.r_mask[m] = P.chosen[w]
            m += 1
    P.r_begin[n] = t
    P.r_stop[n] = stop
    P.r_wofs[n + 1] = m
    m = prof_first_resv_from(P, t + 1)
    memmove(&P.r_order[m + 1], &P.r_order[m], (n - m) * sizeof(int32_t))
    P.r_order[m] = <int32_t>n
    m = prof_first_stop_after(P, stop)
    memmove(&P.r_ostop[m + 1], &P.r_ostop[m], (n - m) * sizeof(int32_t))
    P.r_ostop[m] = <int32_t>n
    P.nresv_pass = n + 1
    return RC_OK


cdef inline int64_t prof_first_stop_after(const Prof* P, int64_t t) noexcept nogil:
    # the position in r_ostop of the first reservation ending after t
    cdef int64_t lo = 0, hi = P.nresv_pass, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if P.r_stop[P.r_ostop[mid]] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline bint prof_resv_boundary(const Prof* P, int64_t x) noexcept nogil:
    # does a reservation begin or end at x?
    cdef int64_t o
    if P.nresv_pass <= 8:
        for o in range(P.nresv_pass):
            if P.r_begin[o] == x or P.r_stop[o] == x:
                return True
        return False
    o = prof_first_resv_from(P, x)
    if o < P.nresv_pass and P.r_begin[P.r_order[o]] == x:
        return True
    o = prof_first_stop_after(P, x - 1)
    return o < P.nresv_pass and P.r_stop[P.r_ostop[o]] == x


cdef inline int64_t prof_overlapping(Prof* P, int64_t lo, int64_t hi) noexcept nogil:
    # P.r_list = the reservations overlapping [lo, hi) (beginning before hi and ending after lo);
    # returns how many. Walks the shorter of the two candidate runs: those beginning before hi
    # (by begin) or those ending after lo (by stop).
    cdef int64_t nb, s0, n = 0, o, r
    if P.nresv_pass <= 8:
        # (few: a scan costs less than the two binary searches; EASY passes hold one)
        for r in range(P.nresv_pass):
            if P.r_begin[r] < hi and P.r_stop[r] > lo:
                P.r_list[n] = <int32_t>r
                n += 1
        return n
    nb = prof_first_resv_from(P, hi)
    s0 = prof_first_stop_after(P, lo)
    if nb <= P.nresv_pass - s0:
        for o in range(nb):
            r = P.r_order[o]
            if P.r_stop[r] > lo:
                P.r_list[n] = <int32_t>r
                n += 1
    else:
        for o in range(s0, P.nresv_pass):
            r = P.r_ostop[o]
            if P.r_begin[r] < hi:
                P.r_list[n] = <int32_t>r
                n += 1
    return n


cdef inline int64_t prof_first_resv_from(const Prof* P, int64_t t) noexcept nogil:
    # the position in r_order of the first reservation beginning at or after t
    cdef int64_t lo = 0, hi = P.nresv_pass, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if P.r_begin[P.r_order[mid]] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline bint prof_resv_meets(const Prof* P, int64_t r, const uint64_t* units) noexcept nogil:
    # does reservation r hold any of these units?
    cdef int64_t m
    for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
        if units[P.r_word[m]] & P.r_mask[m]:
            return True
    return False


cdef inline int64_t prof_window_units(Prof* P, int32_t i, int64_t t, int64_t stop, int64_t k) noexcept nogil:
    # P.cand = the units free throughout [t, stop), t the beginning of slot i: a unit that running
    # jobs and this pass's starts leave free at t stays free, so they are slot i's bitmap minus the
    # units of every reservation overlapping [t, stop). Returns how many, or stops early (with some
    # fewer than k, P.cand then partial) once fewer than k remain.
    cdef int64_t W = P.W, o, r, m, w, c = 0
    cdef const uint64_t* row = P.s_bits + <int64_t>i * W
    cdef uint64_t x
    for w in range(W):
        x = row[w]
        P.cand[w] = x
        c += __builtin_popcountll(x)
    if c < k:
        return c
    for o in range(prof_overlapping(P, t, stop)):
        r = P.r_list[o]
        for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
            w = P.r_word[m]
            x = P.cand[w] & P.r_mask[m]
            if x:
                c -= __builtin_popcountll(x)
                P.cand[w] &= ~x
        if c < k:
            return c
    return c


cdef inline void prof_slot_free(Prof* P, int32_t i, uint64_t* out, int64_t lo, int64_t hi) noexcept nogil:
    # words [lo, hi) of slot i's free units: its bitmap minus the reservations active in it
    cdef int64_t b = P.s_begin[i], o, r, m, w
    cdef const uint64_t* row = P.s_bits + <int64_t>i * P.W
    for w in range(lo, hi):
        out[w] = row[w]
    for o in range(prof_overlapping(P, b, b + 1)):
        r = P.r_list[o]
        for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
            w = P.r_word[m]
            if w >= lo and w < hi:
                out[w] &= ~P.r_mask[m]
