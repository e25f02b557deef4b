# The pending queue (header only): pending jobs in priority order, ascending (key, submit, arrival),
# with what a pass reads of each job kept contiguous.

from libc.stdint cimport int64_t
from libc.stdlib cimport free
from libc.string cimport memset, memmove

from memory cimport grow
from jobs cimport Jobs
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct PendEntry:     # a pending job with what the pass reads of it
    int64_t job                # the job index (-1: started by the pass under way; compacted after it)
    int64_t units              # its units ...
    int64_t est                # ... and estimate


ctypedef struct Queue:
    PendEntry* entries         # in priority order
    int64_t n                  # pending jobs
    int64_t cap                # room in entries
    int64_t nseq               # arrivals so far: the next job's arrival sequence


ctypedef struct SortRec:       # a queue entry being re-sorted by a new key
    int64_t tier               # its partition's PriorityTier (higher first) ...
    double key                 # ... the priority key ...
    int64_t submit             # ... then submit time ...
    int64_t seq                # ... then arrival order
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
    return 0


cdef inline bint queue_before(const Jobs* J, int64_t a, int64_t b) noexcept nogil:
    # priority order: does job a come before job b?
    if J.tier != NULL and J.tier[a] != J.tier[b]:
        return J.tier[a] > J.tier[b]
    if J.key[a] != J.key[b]:
        return J.key[a] < J.key[b]
    if J.submit[a] != J.submit[b]:
        return J.submit[a] < J.submit[b]
    return J.seq[a] < J.seq[b]


cdef inline int64_t queue_insert(Queue* Q, const Jobs* J, int64_t j) noexcept nogil:
    # insert pending job j in priority order; returns its position, or RC_NO_MEMORY. Searched
    # from the back: arrivals are mostly latest in FCFS order, so this is usually an append.
    cdef int64_t lo = 0, hi = Q.n, mid
    if grow(<void**>&Q.entries, &Q.cap, Q.n + 1, sizeof(PendEntry)) != RC_OK:
        return RC_NO_MEMORY
    if hi == 0 or not queue_before(J, j, Q.entries[hi - 1].job):
        lo = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if queue_before(J, j, Q.entries[mid].job):
            hi = mid
        else:
            lo = mid + 1
    memmove(Q.entries + lo + 1, Q.entries + lo, (Q.n - lo) * sizeof(PendEntry))
    Q.entries[lo].job = j
    Q.entries[lo].units = J.units[j]
    Q.entries[lo].est = J.est[j]
    Q.n += 1
    return lo


cdef inline void queue_compact(Queue* Q, int64_t first) noexcept nogil:
    # drop the entries a pass marked started (job = -1); nothing before `first` was marked
    cdef int64_t i, n = first
    for i in range(first, Q.n):
        if Q.entries[i].job >= 0:
            Q.entries[n] = Q.entries[i]
            n += 1
    Q.n = n


cdef inline void queue_free(Queue* Q) noexcept nogil:
    free(Q.entries)
    memset(Q, 0, sizeof(Queue))
