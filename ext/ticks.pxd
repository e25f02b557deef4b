# Reading the time inside the nogil loops (header only). Pass wall times are read from the CPU's
# time-stamp counter where there is one (a few ns, against ~35 ns for clock_gettime, which matters
# at ~300 ns a pass) and converted to ns with a ratio measured once per process (_core.calibrate).

from libc.stdint cimport int64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID

cdef extern from *:
    """
    #if defined(__x86_64__) || defined(__i386__)
    #include <x86intrin.h>
    static inline long long pbf_ticks(void) { return (long long)__rdtsc(); }
    #define PBF_HAVE_TSC 1
    #else
    static inline long long pbf_ticks(void) { return 0; }
    #define PBF_HAVE_TSC 0
    #endif
    """
    long long pbf_ticks() nogil
    int PBF_HAVE_TSC


cdef inline int64_t clock_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef inline int64_t thread_cpu_ns() noexcept nogil:
    # the CPU time the calling thread has had (a system call: read once per pass at most)
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef inline int64_t now_ticks() noexcept nogil:
    # raw ticks (converted to ns when read out), or ns without a TSC
    if PBF_HAVE_TSC:
        return pbf_ticks()
    return clock_ns()
