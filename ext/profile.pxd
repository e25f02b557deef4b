# The profile (DESIGN §4.2): the plan of the future during one pass, as a linked list of time slots,
# each with the bitmap and count of the units free in it (header only). Every function works on a
# Prof struct without the GIL, so that each worker thread of the parallel pass can own a private copy.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memmove, memcpy

from memory cimport INF, grow
from words cimport w_popcount, w_any_common, w_copy, w_zero, w_take_lowest, w_take_lowest_busy, w_span
from pbf._codes cimport RC_SLOT_NOT_FOUND

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil

cdef enum:
    FRONTIER_MAX = 32          # (units, estimate) misfit pairs a pass remembers
    HINTS_MAX = 16             # earliest starts a pass remembers

ctypedef struct Prof:
    int64_t W                  # words per bitmap
    int64_t window             # bf_window (0 = unlimited)
    int64_t resolution         # bf_resolution (0 = exact)
    int64_t* s_begin           # slot i begins at s_begin[i] (slot 0: now) ...
    int64_t* s_cnt             # ... has s_cnt[i] units free ...
    int32_t* s_next            # ... and is followed by slot s_next[i] (-1: the last slot)
    uint64_t* s_bits           # the free units of slot i: W words from s_bits + i W
    int64_t nslots             # slots allocated in this pass (merged ones included)
    int64_t slot_cap           # room for slots
    int64_t nmerged            # slots unlinked by merging (live slots = nslots - nmerged)
    int32_t prev_of_at         # set by prof_find_start: the slot before the one returned, or -1
    bint monotone              # every slot's free units include the previous slot's (no reservation yet)
    uint64_t* cand             # units free throughout the window found by the last search
    uint64_t* chosen           # the units picked for the placement
    int32_t* q_nz              # prof_commit's scratch: the words of a placement
    # this pass's reservations, their units kept sparse (a reservation's k units touch at most k
    # of the W words; most Beocat jobs are serial):
    int64_t* r_begin           # reservation i holds its units from r_begin[i] ...
    int64_t* r_stop            # ... to r_stop[i] ...
    int64_t* r_wofs            # ... and they are r_mask[m] in word r_word[m], r_wofs[i] <= m < r_wofs[i+1]
    int32_t* r_word
    uint64_t* r_mask
    int32_t* r_order           # the reservations by r_begin (ties: made earlier first)
    int64_t nresv_pass         # reservations made in this pass
    int64_t r_cap              # room in r_begin, r_stop, r_wofs (one more)
    int64_t r_words_cap        # room in r_word, r_mask
    # (units, estimate) pairs that could not start now in this pass, Pareto-minimal: a job at least
    # as wide and as long cannot start now either, since a pass only ever removes free units
    int64_t f_units[FRONTIER_MAX]  # sorted ascending ...
    int64_t f_est[FRONTIER_MAX]    # ... so these fall
    int64_t nfrontier          # pairs held
    # earliest starts found by this pass's full searches: (units, estimate) -> start (-1: none within
    # the window); a lower bound for every job at least as wide and as long (a ring, newest last)
    int64_t hint_k[HINTS_MAX]  # units ...
    int64_t hint_d[HINTS_MAX]  # ... estimate ...
    int64_t hint_t[HINTS_MAX]  # ... earliest start found
    int64_t nhint              # entries held
    int64_t hint_next          # the entry the next search overwrites once the ring is full
    int32_t* scratch_idx       # prof_choose's backward walk: slots before a reservation's start
    int64_t scratch_cap        # room in scratch_idx


cdef inline int prof_init(Prof* P, int64_t W) noexcept nogil:
    memset(P, 0, sizeof(Prof))
    P.W = W
    P.cand = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.chosen = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.q_nz = <int32_t*>malloc(max(1, W) * sizeof(int32_t))
    P.r_wofs = <int64_t*>malloc(sizeof(int64_t))
    if P.cand == NULL or P.chosen == NULL or P.q_nz == NULL or P.r_wofs == NULL:
        return -1
    P.r_wofs[0] = 0
    return 0


cdef inline void prof_free(Prof* P) noexcept nogil:
    free(P.s_begin)
    free(P.s_cnt)
    free(P.s_next)
    free(P.s_bits)
    free(P.cand)
    free(P.chosen)
    free(P.q_nz)
    free(P.r_begin)
    free(P.r_stop)
    free(P.r_wofs)
    free(P.r_word)
    free(P.r_mask)
    free(P.r_order)
    free(P.scratch_idx)
    memset(P, 0, sizeof(Prof))


cdef inline void prof_start_pass(Prof* P, int64_t window, int64_t resolution) noexcept nogil:
    # per-pass state: no reservation, no known misfit, monotone
    P.window = window
    P.resolution = resolution
    P.monotone = True
    P.nfrontier = 0
    P.nresv_pass = 0
    P.nhint = 0
    P.hint_next = 0


cdef inline int prof_copy(Prof* D, const Prof* S) noexcept nogil:
    # D becomes a copy of S's slots, reservations and per-pass state (a worker's private profile)
    cdef int64_t n = S.nslots, cap
    D.window = S.window
    D.resolution = S.resolution
    D.monotone = S.monotone
    D.nfrontier = 0
    D.nhint = 0
    D.hint_next = 0
    D.nslots = 0
    if D.slot_cap < n:
        cap = D.slot_cap
        if grow(<void**>&D.s_begin, &cap, n, sizeof(int64_t)) != 0: return -1
        cap = D.slot_cap
        if grow(<void**>&D.s_cnt, &cap, n, sizeof(int64_t)) != 0: return -1
        cap = D.slot_cap
        if grow(<void**>&D.s_next, &cap, n, sizeof(int32_t)) != 0: return -1
        free(D.s_bits)
        D.s_bits = <uint64_t*>malloc(<size_t>(cap * D.W) * sizeof(uint64_t))
        if D.s_bits == NULL:
            D.slot_cap = 0
            return -1
        D.slot_cap = cap
    memcpy(D.s_begin, S.s_begin, n * sizeof(int64_t))
    memcpy(D.s_cnt, S.s_cnt, n * sizeof(int64_t))
    memcpy(D.s_next, S.s_next, n * sizeof(int32_t))
    memcpy(D.s_bits, S.s_bits, <size_t>(n * D.W) * sizeof(uint64_t))
    D.nslots = n
    D.nmerged = S.nmerged
    D.nresv_pass = 0
    if prof_reserve_resv(D, S.nresv_pass, S.r_wofs[S.nresv_pass]) != 0:
        return -1
    memcpy(D.r_begin, S.r_begin, S.nresv_pass * sizeof(int64_t))
    memcpy(D.r_stop, S.r_stop, S.nresv_pass * sizeof(int64_t))
    memcpy(D.r_wofs, S.r_wofs, (S.nresv_pass + 1) * sizeof(int64_t))
    memcpy(D.r_order, S.r_order, S.nresv_pass * sizeof(int32_t))
    memcpy(D.r_word, S.r_word, S.r_wofs[S.nresv_pass] * sizeof(int32_t))
    memcpy(D.r_mask, S.r_mask, S.r_wofs[S.nresv_pass] * sizeof(uint64_t))
    D.nresv_pass = S.nresv_pass
    return 0


cdef inline int prof_apply(Prof* P, int64_t k, int64_t t, int64_t d, const uint64_t* units, bint reservation) noexcept nogil:
    # Apply a placement committed elsewhere (the commit log of the parallel pass) exactly as the
    # committer applied it: its start t is a slot beginning in every copy that has applied the same
    # earlier placements, so the same splits and merges happen.
    cdef int32_t si = 0, prev = -1
    while si != -1 and P.s_begin[si] != t:
        prev = si
        si = P.s_next[si]
    if si == -1:
        return RC_SLOT_NOT_FOUND
    P.prev_of_at = prev
    w_copy(P.chosen, units, P.W)
    if prof_commit(P, k, t, d, si) != 0:
        return -1
    if reservation:
        P.monotone = False
        if prof_note_resv(P, t, prof_round_up(P, t + d)) != 0:
            return -1
    return 0


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
        return 0
    cap = P.slot_cap * 2 if P.slot_cap else 64
    while cap < n:
        cap *= 2
    q = realloc(P.s_begin, cap * sizeof(int64_t))
    if q == NULL: return -1
    P.s_begin = <int64_t*>q
    q = realloc(P.s_cnt, cap * sizeof(int64_t))
    if q == NULL: return -1
    P.s_cnt = <int64_t*>q
    q = realloc(P.s_next, cap * sizeof(int32_t))
    if q == NULL: return -1
    P.s_next = <int32_t*>q
    q = realloc(P.s_bits, <size_t>(cap * P.W) * sizeof(uint64_t))
    if q == NULL: return -1
    P.s_bits = <uint64_t*>q
    P.slot_cap = cap
    return 0


cdef inline int32_t prof_new_slot(Prof* P) noexcept nogil:
    if P.nslots >= P.slot_cap and prof_reserve_slots(P, P.nslots + 1) != 0:
        return -1
    P.nslots += 1
    return <int32_t>(P.nslots - 1)


cdef inline int64_t prof_round_up(Prof* P, int64_t t) noexcept nogil:
    if P.resolution <= 1:
        return t
    return ((t + P.resolution - 1) // P.resolution) * P.resolution


cdef inline int64_t prof_find_start(Prof* P, int64_t k, int64_t d, int64_t now, bint now_only,
                         int32_t* at) noexcept nogil:
    # Earliest start t >= now at which k units are free throughout [t, round_up(t+d)); P.cand
    # gets the units free throughout, *at the slot starting at t. Candidate starts are slot
    # beginnings. Returns -1 if none (only with now_only, a bounded window, or out of memory).
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
                return -1
            if P.s_cnt[i] >= k:
                w_copy(P.cand, P.s_bits + <int64_t>i * W, W)
                at[0] = i
                P.prev_of_at = prev
                return t
            if now_only:
                return -1
            prev = i
            i = P.s_next[i]
        return -1
    if not now_only:
        return prof_find_start_hinted(P, k, d, now, at)
    # Can it start now? The units free throughout [now, stop) are exactly slot 0's free units
    # minus those of this pass's reservations overlapping the window: running jobs only give
    # units back as time goes on, and every start-now placement already left slot 0. So one AND
    # per overlapping reservation replaces one per slot (thousands on a busy cluster).
    e = prof_round_up(P, now + d)
    w_copy(P.cand, P.s_bits, W)
    if prof_minus_resv(P, P.s_cnt[0], -INF, e, k) < k:
        return -1
    at[0] = 0
    P.prev_of_at = -1
    return now


cdef inline int64_t prof_find_start_hinted(Prof* P, int64_t k, int64_t d, int64_t now, int32_t* at) noexcept nogil:
    # The window search, begun at the latest earliest start this pass found for a job no wider and
    # no longer: within a pass the profile only loses free units, and a wider or longer job fits
    # nowhere a narrower or shorter one does not, so its earliest start is not before that one
    # (nor is there one within the window if that one had none). The search begins at the last
    # slot beginning at or before the bound, with the same answer and candidates as from slot 0:
    # bursts of identical jobs cost one walk, not one each.
    cdef int32_t i = 0, prev = -1
    cdef int64_t t, bound = -2, h
    for h in range(P.nhint):
        if P.hint_k[h] <= k and P.hint_d[h] <= d:
            if P.hint_t[h] < 0:
                return -1
            if P.hint_t[h] > bound:
                bound = P.hint_t[h]
    if bound >= 0:
        while P.s_next[i] != -1 and P.s_begin[P.s_next[i]] <= bound:
            prev = i
            i = P.s_next[i]
    t = prof_find_start_window(P, k, d, now, i, prev, at)
    h = P.nhint if P.nhint < HINTS_MAX else P.hint_next
    if P.nhint < HINTS_MAX:
        P.nhint += 1
    else:
        P.hint_next = (P.hint_next + 1) % HINTS_MAX
    P.hint_k[h] = k
    P.hint_d[h] = d
    P.hint_t[h] = t
    return t


cdef inline int64_t prof_find_start_window(Prof* P, int64_t k, int64_t d, int64_t now, int32_t first,
                                   int32_t first_prev, int32_t* at) noexcept nogil:
    # The earliest start t >= now at which k units are free throughout [t, round_up(t + d)).
    # Free counts are read first: a window holding a slot with fewer than k free units is skipped,
    # with every candidate up to that slot, before any bitmap work. A candidate whose window passes
    # is tested without walking its slots: apart from this pass's reservations, a unit once free
    # stays free (running jobs and starts now only give units back), so the units free throughout
    # the window are those free in its first slot minus the units of the reservations beginning
    # inside it. That is one bitmap read and a few sparse words per candidate, where an AND over
    # every slot of a long job's window would cross thousands of cache lines.
    # Returns the earliest start, or -1 (beyond bf_window). The candidates begin at slot `first`
    # (whose predecessor is first_prev): 0 and -1 for all.
    cdef int64_t W = P.W, t, stop
    # e: how far the window's counts were read; bad: the last slot read with fewer than k free units
    cdef int32_t i = first, e = first, prev = first_prev, bad = -1
    cdef bint bad_in_window = False
    while i != -1:
        t = P.s_begin[i]
        if P.window > 0 and t > now + P.window:
            return -1
        stop = prof_round_up(P, t + d)
        # extend the window to every slot beginning before the placement's end, reading counts only
        while e != -1 and P.s_begin[e] < stop:
            if P.s_cnt[e] < k:
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
        w_copy(P.cand, P.s_bits + <int64_t>i * W, W)
        if prof_minus_resv(P, P.s_cnt[i], t + 1, stop, k) >= k:
            at[0] = i
            P.prev_of_at = prev
            return t
        prev = i
        i = P.s_next[i]
    return -1


cdef inline void prof_choose(Prof* P, int64_t k, int64_t t, int64_t d, int32_t si, int64_t now) noexcept nogil:
    # Pick k units of P.cand into P.chosen (DESIGN §4.4):
    #  - a job starting now takes first the units that a later slot (a reservation) needs, the
    #    earliest-needed first, so units free for long stay free for long jobs;
    #  - a reservation takes first the units busy just before it starts (freed by running jobs or
    #    earlier placements), latest-busy first, so units free now stay free for backfill.
    # Ties and the rest: lowest unit index.
    cdef int64_t W = P.W, need = k, n = 0, i, last, stop, lo, hi
    cdef int32_t j
    if w_popcount(P.cand, W) == k:
        # every candidate is needed: the order of preference cannot change the set
        w_copy(P.chosen, P.cand, W)
        w_zero(P.cand, W)
        return
    w_zero(P.chosen, W)
    w_span(P.cand, W, &lo, &hi)     # the busy units below only matter among the candidates
    if t == now and not P.monotone:
        # (while the profile is monotone no later slot lacks any of these units: nothing to prefer)
        # A candidate is free now and outside every start-now placement of this pass; running jobs
        # only give units back, so a later slot lacks it only inside one of this pass's
        # reservations: past the last reservation's end no slot can take anything.
        stop = prof_round_up(P, t + d)
        last = -1
        for i in range(P.nresv_pass):
            if P.r_stop[i] > stop and P.r_stop[i] > last and prof_resv_meets(P, i, P.cand):
                last = P.r_stop[i]
        j = si
        if last <= stop:
            j = -1
        while j != -1 and P.s_begin[j] < stop:
            j = P.s_next[j]
        while j != -1 and need > 0 and P.s_begin[j] < last:
            need = w_take_lowest_busy(P.cand, P.chosen, need, lo, hi, P.s_bits + <int64_t>j * W)
            j = P.s_next[j]
    elif t != now:
        j = 0
        while j != -1 and P.s_begin[j] < t:
            P.scratch_idx[n] = j
            n += 1
            j = P.s_next[j]
        while n > 0 and need > 0:
            n -= 1
            need = w_take_lowest_busy(P.cand, P.chosen, need, lo, hi, P.s_bits + <int64_t>P.scratch_idx[n] * W)
    if need > 0:
        w_take_lowest(P.cand, P.chosen, need, W)


cdef inline int prof_commit(Prof* P, int64_t k, int64_t t, int64_t d, int32_t si) noexcept nogil:
    # remove P.chosen from every slot overlapping [t, t+d), splitting the last one at t+d
    # a placement holds its units until its end rounded up to the resolution, as running jobs'
    # planned ends are, so that a job started in this pass looks the same as one started before
    cdef int64_t W = P.W, w, end, stop = prof_round_up(P, t + d), nw = 0, m
    cdef int32_t j = si, n, last = si
    cdef uint64_t* row
    # only the words holding chosen units change: a placement's units are few, but a reservation's
    # may be scattered (it takes the units busy just before it), so the words are listed, not spanned
    for w in range(W):
        if P.chosen[w]:
            P.q_nz[nw] = <int32_t>w
            nw += 1
    while j != -1 and P.s_begin[j] < stop:
        end = P.s_begin[P.s_next[j]] if P.s_next[j] != -1 else INF
        if end > stop:
            n = prof_new_slot(P)
            if n < 0:
                return -1
            P.s_begin[n] = stop
            P.s_cnt[n] = P.s_cnt[j]
            P.s_next[n] = P.s_next[j]
            P.s_next[j] = n
            w_copy(P.s_bits + <int64_t>n * W, P.s_bits + <int64_t>j * W, W)
        row = P.s_bits + <int64_t>j * W
        for m in range(nw):
            w = P.q_nz[m]
            row[w] &= ~P.chosen[w]
        P.s_cnt[j] -= k
        last = j
        j = P.s_next[j]
    # Only at the placement's two edges can neighbouring slots have become equal (inside it every
    # slot lost the same units). Merge them: a later boundary with the same free units is never
    # an earliest start, and unit choice sees the same units, so no decision changes; the slot
    # count stays bounded.
    prof_merge_next(P, last)
    if P.prev_of_at >= 0:
        prof_merge_next(P, P.prev_of_at)
    return 0


cdef inline void prof_merge_next(Prof* P, int32_t a) noexcept nogil:
    # unlink a's successor when both have the same free units
    cdef int32_t b = P.s_next[a]
    cdef int64_t w, W = P.W
    if b == -1 or P.s_cnt[a] != P.s_cnt[b]:
        return
    for w in range(W):
        if P.s_bits[<int64_t>a * W + w] != P.s_bits[<int64_t>b * W + w]:
            return
    P.s_next[a] = P.s_next[b]
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
        if q == NULL: return -1
        P.r_begin = <int64_t*>q
        q = realloc(P.r_stop, cap * sizeof(int64_t))
        if q == NULL: return -1
        P.r_stop = <int64_t*>q
        q = realloc(P.r_order, cap * sizeof(int32_t))
        if q == NULL: return -1
        P.r_order = <int32_t*>q
        q = realloc(P.r_wofs, (cap + 1) * sizeof(int64_t))
        if q == NULL: return -1
        P.r_wofs = <int64_t*>q
        P.r_cap = cap
    if nwords > P.r_words_cap:
        cap = P.r_words_cap
        if grow(<void**>&P.r_word, &cap, nwords, sizeof(int32_t)) != 0: return -1
        cap = P.r_words_cap
        if grow(<void**>&P.r_mask, &cap, nwords, sizeof(uint64_t)) != 0: return -1
        P.r_words_cap = cap
    return 0


cdef inline int prof_note_resv(Prof* P, int64_t t, int64_t stop) noexcept nogil:
    # record P.chosen as a reservation over [t, stop)
    cdef int64_t n = P.nresv_pass, m = P.r_wofs[n], w
    if prof_reserve_resv(P, n + 1, m + P.W) != 0:
        return -1
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
    P.nresv_pass = n + 1
    return 0


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


cdef inline int64_t prof_minus_resv(Prof* P, int64_t c, int64_t lo, int64_t hi, int64_t k) noexcept nogil:
    # Remove from P.cand (c units) those of every reservation beginning in [lo, hi); returns how
    # many remain, or stops early (with some fewer than k) once fewer than k do.
    cdef int64_t o, r, m, w
    cdef uint64_t x
    o = prof_first_resv_from(P, lo) if lo > -INF else 0
    while o < P.nresv_pass:
        r = P.r_order[o]
        if P.r_begin[r] >= hi:
            break
        for m in range(P.r_wofs[r], P.r_wofs[r + 1]):
            w = P.r_word[m]
            x = P.cand[w] & P.r_mask[m]
            if x:
                c -= __builtin_popcountll(x)
                P.cand[w] &= ~x
        if c < k:
            return c
        o += 1
    return c
