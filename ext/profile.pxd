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

cdef extern from *:
    # The window search's stack transfer: move the back stack onto the (empty) front stack, newest
    # first, keeping suffix ANDs, so that the front's top holds the AND of the whole queue from its
    # oldest slot; returns the front's size. In C to keep it out of line and the search's stack
    # sizes in registers (a `cdef inline` taking their addresses was ~9 % slower on deep passes).
    """
    static __attribute__((noinline)) int64_t pbf_window_transfer(uint64_t* fa, int32_t* front_idx,
            const int32_t* back_idx, int64_t nb, const uint64_t* s_bits, int64_t W) {
        int64_t n = 0, m, w;
        for (m = nb - 1; m >= 0; m--) {
            const uint64_t* bits = s_bits + (int64_t)back_idx[m] * W;
            if (n == 0) {
                for (w = 0; w < W; w++) fa[w] = bits[w];
            } else {
                for (w = 0; w < W; w++) fa[n * W + w] = fa[(n - 1) * W + w] & bits[w];
            }
            front_idx[n] = back_idx[m];
            n++;
        }
        return n;
    }
    """
    int64_t pbf_window_transfer(uint64_t* fa, int32_t* front_idx, const int32_t* back_idx, int64_t nb,
                                const uint64_t* s_bits, int64_t W) nogil

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
    # the sliding-window AND over slots of prof_find_start_window, a queue made of two stacks:
    uint64_t* q_front_agg      # front stack: suffix ANDs, W words an entry
    int32_t* q_front_idx       # front stack: slot indices
    int32_t* q_back_idx        # back stack: slot indices
    uint64_t* q_back_agg       # back stack: the AND of all its slots (W words) ...
    int32_t* q_nz              # ... the words of it that are not zero (the others stay zero; also
                               # prof_commit's scratch: the words of a placement)
    int64_t q_cap              # room in each stack
    # this pass's reservations:
    int64_t* r_begin           # reservation i holds its units from r_begin[i] ...
    int64_t* r_stop            # ... to r_stop[i] ...
    uint64_t* r_bits           # ... and they are these W words
    int64_t nresv_pass         # reservations made in this pass
    int64_t r_cap              # room in r_begin, r_stop
    int64_t r_bits_cap         # room in r_bits (words)
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
    P.q_back_agg = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
    P.q_nz = <int32_t*>malloc(max(1, W) * sizeof(int32_t))
    if P.cand == NULL or P.chosen == NULL or P.q_back_agg == NULL or P.q_nz == NULL:
        return -1
    return 0


cdef inline void prof_free(Prof* P) noexcept nogil:
    free(P.s_begin)
    free(P.s_cnt)
    free(P.s_next)
    free(P.s_bits)
    free(P.cand)
    free(P.chosen)
    free(P.q_front_agg)
    free(P.q_front_idx)
    free(P.q_back_idx)
    free(P.q_back_agg)
    free(P.q_nz)
    free(P.r_begin)
    free(P.r_stop)
    free(P.r_bits)
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
    for cap in range(S.nresv_pass):
        w_copy(D.chosen, S.r_bits + cap * S.W, D.W)
        if prof_note_resv(D, S.r_begin[cap], S.r_stop[cap]) != 0:
            return -1
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
    for i in range(P.nresv_pass):
        if P.r_begin[i] < e:
            bits = P.r_bits + <int64_t>i * W
            for w in range(W):
                P.cand[w] &= ~bits[w]
    c = 0
    for w in range(W):
        c += __builtin_popcountll(P.cand[w])
    if c < k:
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
    # The earliest start t >= now at which k units are free throughout [t, round_up(t + d)), in
    # O(slots x W): as the candidate start moves to later slots, the end of its window only moves
    # later too, so the AND over the window is kept in a queue of slots built from two stacks (each
    # slot is ANDed in a constant number of times). Free counts are read first: a window holding a
    # slot with fewer than k free units is skipped, with every candidate up to that slot, before any
    # bitmap work. Returns the earliest start, or -1 (beyond bf_window / out of memory).
    # The candidates begin at slot `first` (whose predecessor is first_prev): 0 and -1 for all.
    cdef int64_t W = P.W, w, t, stop, c, nf = 0, nb = 0, nnz = 0, m, j
    # e: how far the window's counts were read; ea: how far its slots are in the AND queue; bad: the
    # last slot read with fewer than k free units
    cdef int32_t i = first, e = first, ea = first, prev = first_prev, bad = -1
    cdef bint bad_in_window = False
    cdef uint64_t* fa
    cdef uint64_t* bits
    cdef uint64_t x
    if P.q_cap < P.nslots + 1:
        if grow(<void**>&P.q_front_idx, &P.q_cap, P.nslots + 1, sizeof(int32_t)) != 0:
            return -1
        free(P.q_back_idx)
        free(P.q_front_agg)
        P.q_back_idx = <int32_t*>malloc(P.q_cap * sizeof(int32_t))
        P.q_front_agg = <uint64_t*>malloc(<size_t>(P.q_cap * W) * sizeof(uint64_t))
        if P.q_back_idx == NULL or P.q_front_agg == NULL:
            P.q_cap = 0
            return -1
    if P.q_back_agg == NULL:
        P.q_back_agg = <uint64_t*>malloc(max(1, W) * sizeof(uint64_t))
        if P.q_back_agg == NULL:
            return -1
    fa = P.q_front_agg
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
            nf = 0
            nb = 0
            ea = i
            continue
        # every slot of the window has k free units: AND the ones not yet in the queue. The back
        # stack's AND is kept sparse: near `now` few units are free, so after its first slot only a
        # few words are not zero, and later slots are ANDed on those words only.
        while ea != e:
            bits = P.s_bits + <int64_t>ea * W
            if nb == 0:
                w_copy(P.q_back_agg, bits, W)
                nnz = 0
                for w in range(W):
                    if bits[w]:
                        P.q_nz[nnz] = <int32_t>w
                        nnz += 1
            else:
                m = 0
                for j in range(nnz):
                    w = P.q_nz[j]
                    x = P.q_back_agg[w] & bits[w]
                    P.q_back_agg[w] = x
                    if x:
                        P.q_nz[m] = <int32_t>w
                        m += 1
                nnz = m
            P.q_back_idx[nb] = ea
            nb += 1
            ea = P.s_next[ea]
        if nf == 0:
            # the front is empty: the window's AND is the back stack's, ready without a transfer
            # (most searches succeed at their first counted candidate; the transfer is only for
            # dropping slots)
            c = 0
            for j in range(nnz):
                c += __builtin_popcountll(P.q_back_agg[P.q_nz[j]])
            if c >= k:
                w_copy(P.cand, P.q_back_agg, W)
                at[0] = i
                P.prev_of_at = prev
                return t
            nf = pbf_window_transfer(fa, P.q_front_idx, P.q_back_idx, nb, P.s_bits, W)
            nb = 0
            nf -= 1
            prev = i
            i = P.s_next[i]
            continue
        c = 0
        if nb > 0:
            # the window's AND is not zero outside the back stack's non-zero words
            w_zero(P.cand, W)
            for j in range(nnz):
                w = P.q_nz[j]
                x = fa[(nf - 1) * W + w] & P.q_back_agg[w]
                P.cand[w] = x
                c += __builtin_popcountll(x)
        else:
            for w in range(W):
                x = fa[(nf - 1) * W + w]
                P.cand[w] = x
                c += __builtin_popcountll(x)
        if c >= k:
            at[0] = i
            P.prev_of_at = prev
            return t
        # drop slot i, the queue's oldest, and move to the next candidate start
        nf -= 1
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
            if P.r_stop[i] > stop and P.r_stop[i] > last and w_any_common(P.cand, P.r_bits + i * W, W):
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


cdef inline int prof_note_resv(Prof* P, int64_t t, int64_t stop) noexcept nogil:
    cdef int64_t cap = P.r_cap
    if P.nresv_pass >= P.r_cap:
        if grow(<void**>&P.r_begin, &cap, P.nresv_pass + 1, sizeof(int64_t)) != 0:
            return -1
        cap = P.r_cap
        if grow(<void**>&P.r_stop, &cap, P.nresv_pass + 1, sizeof(int64_t)) != 0:
            return -1
        P.r_cap = cap
    if grow(<void**>&P.r_bits, &P.r_bits_cap, (P.nresv_pass + 1) * P.W, sizeof(uint64_t)) != 0:
        return -1
    P.r_begin[P.nresv_pass] = t
    P.r_stop[P.nresv_pass] = stop
    w_copy(P.r_bits + P.nresv_pass * P.W, P.chosen, P.W)
    P.nresv_pass += 1
    return 0
