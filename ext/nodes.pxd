# Node state (header only): which units are free now, the units of every running job, and the
# running jobs in the order of their planned ends (the order the profile is built in).

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memmove

from memory cimport grow

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
from words cimport w_copy

cdef extern from *:
    """
    #include <string.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Memory that reads as zero until written, grown keeping what is written: on Linux an anonymous
       mapping (mremap), whose pages cost nothing until written; elsewhere realloc and zeroing. */
    static inline void* pbf_zeroed_grow(void* old, size_t old_bytes, size_t new_bytes) {
    #if defined(__linux__)
        void* p;
        if (old == NULL)
            p = mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        else
            p = mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE);
        return p == MAP_FAILED ? NULL : p;
    #else
        char* p = (char*)realloc(old, new_bytes);
        if (p != NULL)
            memset(p + old_bytes, 0, new_bytes - old_bytes);
        return p;
    #endif
    }
    static inline void pbf_zeroed_free(void* p, size_t bytes) {
    #if defined(__linux__)
        if (p != NULL)
            munmap(p, bytes);
    #else
        free(p);
    #endif
    }
    """
    void* pbf_zeroed_grow(void* old, size_t old_bytes, size_t new_bytes) nogil
    void pbf_zeroed_free(void* p, size_t nbytes) nogil
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct EndKey:        # a (time, job) pair ordered by time, then job: planned and actual ends
    int64_t end                # the time
    int64_t job                # the job index


cdef inline bint endkey_less(const EndKey* x, const EndKey* y) noexcept nogil:
    return x.end < y.end or (x.end == y.end and x.job < y.job)


cdef inline int endkey_cmp(const void* a, const void* b) noexcept nogil:
    # qsort's form of endkey_less (one definition of the order)
    cdef const EndKey* x = <const EndKey*>a
    cdef const EndKey* y = <const EndKey*>b
    if endkey_less(x, y):
        return -1
    return 1 if endkey_less(y, x) else 0


ctypedef struct Nodes:
    int64_t units              # units in the cluster
    int64_t W                  # words per bitmap: ceil(units / 64)
    uint64_t* free             # the units free now (W words)
    int64_t nfree              # how many
    uint64_t* rows             # rows of W words: the units of running jobs (Jobs.row says which). A
                               # row reads as zero until written and is written only where it changes
                               # (nodes_occupy): on a wide cluster most of a row's pages stay untouched.
                               # A row given back keeps its units (a rollback relinks it: _checkpoint)
    int64_t rows_cap           # rows allocated
    int64_t* row_stamp         # per row: the occupy that wrote it (never the same twice: a job whose row
    int64_t stamps             # and stamp are unchanged holds the same units; slurm_space.pxd reads it)
    int32_t* row_lo            # per row: its words outside row_lo .. row_hi are zero (a job of a few
    int32_t* row_hi            # nodes on a wide cluster: a few words written and given back, not W)
    const uint64_t* occ_units  # a hint for the next nodes_occupy of occ_units while version is still
    int64_t occ_version        # occ_version: its words outside occ_lo .. occ_hi are zero (a node
    int64_t occ_lo, occ_hi     # search's choice knows them); any other occupy reads all W words
    int32_t* spare             # rows not in use ...
    int64_t nspare             # ... how many ...
    int64_t spare_cap          # ... and room in spare
    int64_t* running           # running job indices, in no order (Jobs.runpos is each one's place)
    int64_t nrun               # how many
    int64_t running_cap        # room in running
    EndKey* by_end             # running jobs sorted by (start + estimate, job): the profile's order
    int64_t by_end_cap         # room in by_end
    int64_t version            # bumped whenever a job starts or ends, an estimate changes or a unit
                               # goes down or comes back
    # units out of service (outages.pxd): they take no new job; a drained one may still hold a
    # running job, which releases it to `down`, not to `free`
    uint64_t* down             # W words
    int64_t ndown              # how many ...
    int64_t held_down          # ... and of those, held by a running job (drained under it)
    int64_t* until             # per unit, while down: when it comes back (INF: at a resume)


ctypedef struct OutageEvents:  # a replay's outage events in time order, and what they did (outages.pxd)
    int64_t n                  # events ...
    int64_t next               # ... the next to apply
    int64_t* t                 # when
    int64_t* until             # drain, fail: when the units come back (INF: at a resume); resume:
                               # only units whose until is at most this come back (INF: every one)
    int8_t* kind               # OK_*
    uint64_t* bits             # the units, W words an event
    bint requeue               # a failed unit's running job goes back to the queue (else: killed)
    bint final                 # no outage comes but these (a replay; the embedding API may send more)
    int64_t units_lost         # down units no event brings back by itself
    int64_t killed             # jobs killed ...
    int64_t requeued           # ... and requeued by failures ...
    int64_t lost               # ... and the unit-seconds of their runs cut short


cdef inline void outage_events_free(OutageEvents* O) noexcept nogil:
    free(O.t); free(O.until); free(O.kind); free(O.bits)
    O.t = NULL
    O.until = NULL
    O.kind = NULL
    O.bits = NULL
    O.n = 0
    O.next = 0


cdef inline int nodes_init(Nodes* N, int64_t units) noexcept nogil:
    # every unit free
    memset(N, 0, sizeof(Nodes))
    N.units = units
    N.W = (units + 63) // 64
    N.free = <uint64_t*>malloc((N.W if N.W > 0 else 1) * sizeof(uint64_t))
    if N.free == NULL:
        return RC_NO_MEMORY
    memset(N.free, 0xFF, N.W * sizeof(uint64_t))
    if units % 64:
        N.free[N.W - 1] = ((<uint64_t>1) << (units % 64)) - 1
    N.nfree = units
    N.down = <uint64_t*>calloc((N.W if N.W > 0 else 1), sizeof(uint64_t))
    N.until = <int64_t*>calloc((units if units > 0 else 1), sizeof(int64_t))
    if N.down == NULL or N.until == NULL:
        return RC_NO_MEMORY
    return RC_OK


cdef inline int64_t _row_words(const Nodes* N) noexcept nogil:
    return N.W if N.W > 0 else 1


cdef inline void nodes_free(Nodes* N) noexcept nogil:
    pbf_zeroed_free(N.rows, <size_t>(N.rows_cap * _row_words(N)) * sizeof(uint64_t))
    free(N.free); free(N.spare); free(N.running); free(N.by_end); free(N.row_stamp); free(N.row_lo); free(N.row_hi)
    free(N.down); free(N.until)
    memset(N, 0, sizeof(Nodes))


cdef inline int32_t nodes_alloc_row(Nodes* N) noexcept nogil:
    # a free row for a running job's units, growing the rows when none is left; RC_NO_MEMORY: out of memory
    cdef int64_t rows, r
    cdef void* q
    if N.nspare == 0:
        rows = N.rows_cap * 2 if N.rows_cap else 64
        q = pbf_zeroed_grow(N.rows, <size_t>(N.rows_cap * _row_words(N)) * sizeof(uint64_t),
                            <size_t>(rows * _row_words(N)) * sizeof(uint64_t))
        if q == NULL:
            return RC_NO_MEMORY
        N.rows = <uint64_t*>q
        if grow(<void**>&N.spare, &N.spare_cap, rows, sizeof(int32_t)) != RC_OK:
            return RC_NO_MEMORY
        q = realloc(N.row_stamp, rows * sizeof(int64_t))
        if q == NULL:
            return RC_NO_MEMORY
        N.row_stamp = <int64_t*>q
        q = realloc(N.row_lo, rows * sizeof(int32_t))
        if q == NULL:
            return RC_NO_MEMORY
        N.row_lo = <int32_t*>q
        q = realloc(N.row_hi, rows * sizeof(int32_t))
        if q == NULL:
            return RC_NO_MEMORY
        N.row_hi = <int32_t*>q
        for r in range(N.rows_cap, rows):
            N.row_lo[r] = 0            # (a new row reads as zero)
            N.row_hi[r] = -1
        r = rows
        while r > N.rows_cap:
            r -= 1
            N.spare[N.nspare] = <int32_t>r
            N.nspare += 1
        N.rows_cap = rows
    N.nspare -= 1
    return N.spare[N.nspare]


cdef inline int32_t nodes_occupy(Nodes* N, const uint64_t* units, int64_t k) noexcept nogil:
    # the k units in `units` become busy: a row holds them; returns the row, or RC_NO_MEMORY
    cdef int32_t r = nodes_alloc_row(N)
    cdef int64_t i, lo = 0, hi = N.W - 1, a, b
    cdef uint64_t* row
    if units == N.occ_units and N.version == N.occ_version and N.occ_hi >= N.occ_lo:
        lo = N.occ_lo
        hi = N.occ_hi
    N.occ_units = NULL
    if r < 0:
        return RC_NO_MEMORY
    N.stamps += 1
    N.row_stamp[r] = N.stamps
    row = N.rows + <int64_t>r * N.W
    a = N.row_lo[r] if N.row_lo[r] < lo else lo
    b = N.row_hi[r] if N.row_hi[r] > hi else hi
    for i in range(a, b + 1):
        if row[i] != units[i]:     # (the row's last job's units, if any, are cleared here)
            row[i] = units[i]
    for i in range(lo, hi + 1):
        N.free[i] &= ~units[i]
    N.row_lo[r] = <int32_t>lo
    N.row_hi[r] = <int32_t>hi
    N.nfree -= k
    return r


cdef inline void nodes_release(Nodes* N, int32_t r, int64_t k) noexcept nogil:
    # the k units of row r are free again (those not down), and so is the row
    cdef int64_t i
    cdef uint64_t* row = N.rows + <int64_t>r * N.W
    cdef uint64_t x
    if N.ndown == 0:
        for i in range(N.row_lo[r], N.row_hi[r] + 1):
            N.free[i] |= row[i]
        N.nfree += k
    else:
        for i in range(N.row_lo[r], N.row_hi[r] + 1):       # units that went down while it ran stay down
            x = row[i] & ~N.down[i]
            N.free[i] |= x
            N.nfree += __builtin_popcountll(x)
            N.held_down -= __builtin_popcountll(row[i] & N.down[i])
    N.spare[N.nspare] = r
    N.nspare += 1


cdef inline void nodes_occupy_hint(Nodes* N, const uint64_t* units, int64_t lo, int64_t hi) noexcept nogil:
    # the next nodes_occupy of `units`, before any job starts or ends, may read only its words lo .. hi
    N.occ_units = units
    N.occ_version = N.version
    N.occ_lo = lo
    N.occ_hi = hi


cdef inline int64_t nodes_by_end_find(Nodes* N, int64_t n, int64_t end, int64_t j) noexcept nogil:
    # position of the first entry not before (end, j) among the first n of by_end
    cdef int64_t lo = 0, hi = n, mid
    cdef EndKey key
    key.end = end
    key.job = j
    while lo < hi:
        mid = (lo + hi) // 2
        if endkey_less(&N.by_end[mid], &key):
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline void nodes_by_end_put(Nodes* N, int64_t n, int64_t end, int64_t j) noexcept nogil:
    # insert (end, j) among the first n sorted entries (room for n + 1 is there)
    cdef int64_t p = nodes_by_end_find(N, n, end, j)
    memmove(N.by_end + p + 1, N.by_end + p, (n - p) * sizeof(EndKey))
    N.by_end[p].end = end
    N.by_end[p].job = j


cdef inline void nodes_by_end_remove(Nodes* N, int64_t end, int64_t j) noexcept nogil:
    # remove (end, j) from the nrun sorted entries
    cdef int64_t p = nodes_by_end_find(N, N.nrun, end, j)
    memmove(N.by_end + p, N.by_end + p + 1, (N.nrun - p - 1) * sizeof(EndKey))
