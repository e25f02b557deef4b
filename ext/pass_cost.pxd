# The choice of a parallel pass (header only): a full pass runs on the worker pool when its cost,
# predicted before it starts, says the threads save time. Pure arithmetic on the figures below, so
# that tests can check it; cycle.pxd feeds it the pass's figures and measured wall times.
#
#   tests      = queued jobs, at most max_job_test
#   sequential = tests x seq_ns_per_test
#   parallel   = overhead + tests x par_ns_per_test
#   overhead   = wake_ns + (workers - 1) x copy_bytes x copy_ns_per_byte
#                (waking the pool, each worker's copy of the profile or node plan)
# The pass runs parallel when parallel <= PAYS_MARGIN x sequential. seq_ns_per_test and
# par_ns_per_test are exponentially weighted means of the measured wall time per tested job of the
# recent sequential and parallel passes (the parallel one net of the overhead). Until a parallel
# pass has been measured, par_ns_per_test is predicted from the sequential one:
# seq_ns_per_test x (PRIOR_SERIAL_SHARE + (1 - PRIOR_SERIAL_SHARE) / min(workers, cores)). A pass
# chosen parallel that turns out slower raises par_ns_per_test, and the passes after it run
# sequentially. wake_ns is measured when the pool starts (Core.start_pool); copy_ns_per_byte only
# when a pass first could pay with free copies (pc_ensure_copy_rate): a replay whose passes never
# could, never pays for it. It is measured on a buffer the size of the copy (64 KB to 32 MB: a small
# profile is copied from the caches, a large one from memory), so that measuring costs about five
# copies; a measurement stands for copies of its size band (64-256 KB, 256 KB-1 MB, 1-4 MB, 4-16 MB,
# 16-32 MB) and is kept per process, so copies that move to another band measure again once.

from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy

from ticks cimport now_ticks


ctypedef struct PassCost:
    double seq_ns_per_test     # EWMA over sequential full passes: wall ns per tested job ...
    int64_t seq_passes         # ... over this many (0: none measured, nothing to predict from)
    double par_ns_per_test     # EWMA over parallel full passes, net of the overhead ...
    int64_t par_passes         # ... over this many (0: predicted from the sequential mean)
    double wake_ns             # the pool's wake-up round trip (posting a pass, every thread back)
    double copy_ns_per_byte    # copying memory, as a worker copies the profile ...
    bint copy_known            # ... once measured (or set) ...
    double copy_measured_bytes # ... on a buffer of this size (0 when set: stands for every size)
    double ns_per_tick         # the tick counter's ns (what the copy-rate measurement reads)
    int64_t cores              # CPUs this process may run on (more workers than that share them)
    double last_wall_ns        # the last full pass's wall time, ns (what the last update used)
    int64_t last_tests         # ... the jobs it tested ...
    bint last_parallel         # ... and whether it ran on the pool


cdef enum:
    CHOICE_NEVER = -1          # Testing.parallel: every full pass sequential
    CHOICE_AUTO = 0            # ... the predicted costs choose (the default)
    CHOICE_ALWAYS = 1          # ... every full pass on the pool (with at least parallel_min_queue queued)

cdef extern from *:
    """
    #define PBF_EWMA_WEIGHT 0.25
    #define PBF_PRIOR_SERIAL_SHARE 0.25
    #define PBF_PAYS_MARGIN 0.9
    """
    # the weight of the newest pass in the means (about the last 4 passes count)
    const double EWMA_WEIGHT "PBF_EWMA_WEIGHT"
    # the share of a pass no worker can take over (profile build, unit choice and placement at each
    # commit, bookkeeping), until a parallel pass has been measured: perf on the Slurm-like deep pass
    const double PRIOR_SERIAL_SHARE "PBF_PRIOR_SERIAL_SHARE"
    # parallel only when predicted at least 10 % faster: a misprediction costs about that at most
    const double PAYS_MARGIN "PBF_PAYS_MARGIN"

cdef extern from *:
    """
    /* the process's measurements of the copy rate, one a size band (ns a byte, 0: none; the buffer
       size). Cores of one process may race here: the worst a torn pair does is a rate measured on
       another size of the same band, which only moves the choice, never a decision. */
    #define PBF_COPY_BANDS 5
    static double pbf_copy_rate_cache[PBF_COPY_BANDS], pbf_copy_rate_bytes[PBF_COPY_BANDS];
    static double pbf_copy_rate_get(int band, double* nbytes) {
        *nbytes = pbf_copy_rate_bytes[band]; return pbf_copy_rate_cache[band]; }
    static void pbf_copy_rate_put(int band, double x, double nbytes) {
        pbf_copy_rate_cache[band] = x; pbf_copy_rate_bytes[band] = nbytes; }
    #define PBF_COPY_MIN_BYTES (64.0 * 1024)
    #define PBF_COPY_MAX_BYTES (32.0 * 1024 * 1024)
    """
    double copy_rate_get "pbf_copy_rate_get"(int band, double* nbytes) nogil
    void copy_rate_put "pbf_copy_rate_put"(int band, double x, double nbytes) nogil
    const int COPY_BANDS "PBF_COPY_BANDS"
    # the smallest and largest buffer the copy rate is measured on
    const double COPY_MIN_BYTES "PBF_COPY_MIN_BYTES"
    const double COPY_MAX_BYTES "PBF_COPY_MAX_BYTES"


cdef inline int64_t pc_tests(int64_t queued, int64_t max_job_test) noexcept nogil:
    # the jobs a full pass will test: the queue, or max_job_test of it
    if max_job_test >= 0 and max_job_test < queued:
        return max_job_test
    return queued


cdef inline double pc_overhead_ns(const PassCost* C, int64_t workers, double copy_bytes) noexcept nogil:
    # what going parallel costs a pass whatever its jobs: the wake-up and the workers' copies
    return C.wake_ns + (workers - 1) * copy_bytes * C.copy_ns_per_byte


cdef inline double pc_par_ns_per_test(const PassCost* C, int64_t workers) noexcept nogil:
    # the measured parallel cost per test, or its prediction from the sequential one
    cdef int64_t n = workers if C.cores <= 0 or workers < C.cores else C.cores
    if C.par_passes > 0:
        return C.par_ns_per_test
    return C.seq_ns_per_test * (PRIOR_SERIAL_SHARE + (1.0 - PRIOR_SERIAL_SHARE) / (n if n >= 1 else 1))


cdef inline double pc_predict_seq_ns(const PassCost* C, int64_t tests) noexcept nogil:
    return tests * C.seq_ns_per_test


cdef inline double pc_predict_par_ns(const PassCost* C, int64_t tests, int64_t workers,
                                     double copy_bytes) noexcept nogil:
    return pc_overhead_ns(C, workers, copy_bytes) + tests * pc_par_ns_per_test(C, workers)


cdef inline bint pc_parallel_pays(const PassCost* C, int64_t tests, int64_t workers,
                                  double copy_bytes) noexcept nogil:
    # no sequential pass measured yet: nothing to predict from, and a sequential pass is never slower
    if C.seq_passes == 0 or tests <= 0 or workers < 2:
        return False
    return pc_predict_par_ns(C, tests, workers, copy_bytes) <= PAYS_MARGIN * pc_predict_seq_ns(C, tests)


cdef inline double pc_mean(double old, int64_t count, double x) noexcept nogil:
    # the exponentially weighted mean of `count` values with x added (the first value starts it)
    if count == 0:
        return x
    return old + EWMA_WEIGHT * (x - old)


cdef inline void pc_update(PassCost* C, bint parallel, double wall_ns, int64_t tests, double overhead_ns) noexcept nogil:
    # a full pass measured: wall_ns for `tests` tested jobs (overhead_ns: what its going parallel cost)
    cdef double x
    C.last_wall_ns = wall_ns
    C.last_tests = tests
    C.last_parallel = parallel
    if tests <= 0 or wall_ns <= 0:
        return
    if parallel:
        x = wall_ns - overhead_ns
        C.par_ns_per_test = pc_mean(C.par_ns_per_test, C.par_passes, (x if x > 0 else 0.0) / tests)
        C.par_passes += 1
    else:
        C.seq_ns_per_test = pc_mean(C.seq_ns_per_test, C.seq_passes, wall_ns / tests)
        C.seq_passes += 1


cdef inline double pc_copy_size(double copy_bytes) noexcept nogil:
    # the buffer the copy rate of copies of copy_bytes is measured on
    if copy_bytes < COPY_MIN_BYTES:
        return COPY_MIN_BYTES
    if copy_bytes > COPY_MAX_BYTES:
        return COPY_MAX_BYTES
    return copy_bytes


cdef inline int pc_copy_band(double copy_bytes) noexcept nogil:
    # the size band of copies of copy_bytes: 0 below 256 KB, then one band each 4x, the last to 32 MB
    cdef int band = 0
    cdef double top = COPY_MIN_BYTES * 4
    while band < COPY_BANDS - 1 and copy_bytes >= top:
        band += 1
        top *= 4
    return band


cdef inline bint pc_copy_rate_covers(const PassCost* C, double copy_bytes) noexcept nogil:
    # whether the core's copy rate stands for copies of copy_bytes: set by hand, or measured in their band
    return C.copy_known and (C.copy_measured_bytes <= 0
                             or pc_copy_band(C.copy_measured_bytes) == pc_copy_band(copy_bytes))


cdef inline bint pc_ensure_copy_rate(PassCost* C, double copy_bytes) noexcept nogil:
    # the copy rate of copies of copy_bytes, measured now unless this core, a setter or this process
    # has it for their size band; False when it cannot be had (no memory for the buffers: the pass
    # stays sequential)
    cdef int band = pc_copy_band(copy_bytes)
    cdef double rate, nbytes = 0
    if pc_copy_rate_covers(C, copy_bytes):
        return True
    rate = copy_rate_get(band, &nbytes)
    if rate <= 0:
        nbytes = pc_copy_size(copy_bytes)
        rate = pc_copy_ns_per_byte(C.ns_per_tick if C.ns_per_tick > 0 else 1.0, <int64_t>nbytes)
        if rate < 0:
            return False
        copy_rate_put(band, rate, nbytes)
    C.copy_ns_per_byte = rate
    C.copy_measured_bytes = nbytes
    C.copy_known = True
    return True


cdef inline double pc_copy_ns_per_byte(double ns_per_tick, int64_t nbytes) noexcept nogil:
    # ns per byte of copying nbytes (the best of 3); -1 when the buffers cannot be had
    cdef int64_t i, t0, best = -1
    cdef char* a = <char*>malloc(nbytes)
    cdef char* b = <char*>malloc(nbytes)
    if a == NULL or b == NULL:
        free(a)
        free(b)
        return -1.0
    memset(a, 1, nbytes)
    memset(b, 0, nbytes)
    for i in range(3):
        t0 = now_ticks()
        memcpy(b, a, nbytes)
        t0 = now_ticks() - t0
        if best < 0 or t0 < best:
            best = t0
    free(a)
    free(b)
    return best * ns_per_tick / nbytes
