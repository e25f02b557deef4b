# The pending queue (header only): pending jobs in priority order — a higher PriorityTier first, then
# ascending (key, submit, arrival) — with what a pass reads of each job kept contiguous. A job has one
# entry, but a job of several partitions of different tiers one per tier, and under multifactor
# priority a job of partitions of different factors one per factor, each at its own key
# (part_records.pxd).

from libc.stdint cimport int64_t, int32_t
from libc.stdlib cimport free
from libc.string cimport memset, memmove

from memory cimport grow
from jobs cimport Jobs
from part_records cimport PartRecords, pr_split, pr_split_factor, pr_range
from pbf._codes cimport RC_OK, RC_NO_MEMORY, JS_PENDING


ctypedef struct PendEntry:     # a pending job with what the pass reads of it
    int64_t job                # the job index (-1: started by the pass under way; compacted after it)
    int64_t units              # its units ...
    int64_t est                # ... and estimate
    int32_t tier               # the PriorityTier it is queued at
    int32_t rec                # its first partition record (part_records.pxd; -1: all the job's records)


ctypedef struct Queue:
    PendEntry* entries         # in priority order
    int64_t n                  # pending jobs
    int64_t cap                # room in entries
    int64_t nseq               # arrivals so far: the next job's arrival sequence
    bint siblings              # a split job started: its other entries leave at the next compaction


ctypedef struct SortRec:       # a queue entry being re-sorted by a new key
    int64_t tier               # its partition's PriorityTier (higher first) ...
    double key                 # ... the priority key ...
    int64_t submit             # ... then submit time ...
    int64_t seq                # ... then arrival order ...
    int32_t rec                # ... then its first record (the entries of a split job)
    int64_t job                # the entry's job ...
    int64_t units              # ... its units ...
    int64_t est                # ... and estimate


cdef inline int sortrec_cmp(const void* a, const void* b) noexcept nogil:
    cdef const SortRec* x = <const SortRec*>a
    cdef const SortRec* y = <const SortRec*>b
    if x.tier != y.tier:
        return -1 if x.tier > y.tier else 1
    if x.key != y.key:
        return -1 if x.key < y.key else 1
    if x.submit != y.submit:
        return -1 if x.submit < y.submit else 1
    if x.seq != y.seq:
        return -1 if x.seq < y.seq else 1
    if x.rec != y.rec:
        return -1 if x.rec < y.rec else 1
    return 0


cdef inline double entry_key(const PartRecords* R, const Jobs* J, int64_t j, int32_t rec) noexcept nogil:
    # the priority key of an entry of job j with first record rec: its record's (Slurm's
    # priority_array) where the job's records differ in factor, else the job's
    if rec >= 0 and pr_split_factor(R, j):
        return R.rkey[rec]
    return J.key[j]


cdef inline bint queue_before(const Jobs* J, const PartRecords* R, int64_t a, int32_t ta, int32_t ra,
                              const PendEntry* e) noexcept nogil:
    # priority order: does job a, queued at tier ta with first record ra, come before entry e?
    cdef int64_t b = e.job
    cdef double ka, kb
    if ta != e.tier:
        return ta > e.tier
    ka = entry_key(R, J, a, ra)
    kb = entry_key(R, J, b, e.rec)
    if ka != kb:
        return ka < kb
    if J.submit[a] != J.submit[b]:
        return J.submit[a] < J.submit[b]
    if J.seq[a] != J.seq[b]:
        return J.seq[a] < J.seq[b]
    return ra < e.rec


cdef inline int64_t queue_insert(Queue* Q, const Jobs* J, const PartRecords* R, int64_t j, int32_t rec,
                                 int32_t tier) noexcept nogil:
    # insert an entry of pending job j (its records from rec, at tier) in priority order; returns its
    # position, or RC_NO_MEMORY. Searched from the back: arrivals are mostly latest in FCFS order, so
    # this is usually an append.
    cdef int64_t lo = 0, hi = Q.n, mid
    if grow(<void**>&Q.entries, &Q.cap, Q.n + 1, sizeof(PendEntry)) != RC_OK:
        return RC_NO_MEMORY
    if hi == 0 or not queue_before(J, R, j, tier, rec, &Q.entries[hi - 1]):
        lo = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if queue_before(J, R, j, tier, rec, &Q.entries[mid]):
            hi = mid
        else:
            lo = mid + 1
    memmove(Q.entries + lo + 1, Q.entries + lo, (Q.n - lo) * sizeof(PendEntry))
    Q.entries[lo].job = j
    Q.entries[lo].units = J.units[j]
    Q.entries[lo].est = J.est[j]
    Q.entries[lo].tier = tier
    Q.entries[lo].rec = rec
    Q.n += 1
    return lo


cdef inline int64_t queue_job(Queue* Q, const Jobs* J, const PartRecords* R, int64_t j) noexcept nogil:
    # queue pending job j: an entry, or a split job's entry per tier (and factor: part_records.pxd;
    # its records' keys set first, lifecycle.pxd's set_record_keys); returns the
    # last position taken by an entry that is not behind every other (else Q.n - 1), or RC_NO_MEMORY
    cdef int64_t pos, r, lo, hi, worst = -1
    if not pr_split(R, j):
        return queue_insert(Q, J, R, j, -1, <int32_t>J.tier[j] if J.tier != NULL else 0)
    r = R.at[j]
    while r < R.at[j] + R.n[j]:
        pr_range(R, j, <int32_t>r, &lo, &hi)
        pos = queue_insert(Q, J, R, j, <int32_t>r, R.tier[r])
        if pos < 0:
            return pos
        if pos < Q.n - 1:
            worst = pos
        r = hi
    return worst if worst >= 0 else Q.n - 1


cdef inline void queue_compact(Queue* Q, const Jobs* J, int64_t first) noexcept nogil:
    # drop the entries a pass marked started (job = -1); nothing before `first` was marked. After a
    # split job started, its other entries (anywhere) go too.
    cdef int64_t i, n
    if Q.siblings:
        Q.siblings = False
        n = 0
        for i in range(Q.n):
            if Q.entries[i].job >= 0 and J.state[Q.entries[i].job] == JS_PENDING:
                Q.entries[n] = Q.entries[i]
                n += 1
        Q.n = n
        return
    n = first
    for i in range(first, Q.n):
        if Q.entries[i].job >= 0:
            Q.entries[n] = Q.entries[i]
            n += 1
    Q.n = n


cdef inline void queue_free(Queue* Q) noexcept nogil:
    free(Q.entries)
    memset(Q, 0, sizeof(Queue))
