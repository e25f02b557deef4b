# Atomics, mutexes and condition variables for the parallel pass (header only).

from libc.stdint cimport int64_t

cdef extern from *:
    """
    #include <stdint.h>
    static inline int64_t pbf_fetch_add(int64_t* p, int64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
    static inline int64_t pbf_load(int64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void pbf_store(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int pbf_cas(int64_t* p, int64_t expected, int64_t desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    #if defined(__x86_64__) || defined(__i386__)
    static inline void pbf_pause(void) { __builtin_ia32_pause(); }
    #elif defined(__aarch64__)
    static inline void pbf_pause(void) { __asm__ __volatile__("yield"); }
    #else
    static inline void pbf_pause(void) { }
    #endif
    """
    int64_t pbf_fetch_add(int64_t* p, int64_t v) nogil
    int64_t pbf_load(int64_t* p) nogil
    void pbf_store(int64_t* p, int64_t v) nogil
    bint pbf_cas(int64_t* p, int64_t expected, int64_t desired) nogil
    void pbf_pause() nogil             # a spin-wait hint to the CPU

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    int pthread_mutex_init(pthread_mutex_t*, const void*)
    int pthread_mutex_destroy(pthread_mutex_t*)
    int pthread_mutex_lock(pthread_mutex_t*)
    int pthread_mutex_unlock(pthread_mutex_t*)
    int pthread_cond_init(pthread_cond_t*, const void*)
    int pthread_cond_destroy(pthread_cond_t*)
    int pthread_cond_wait(pthread_cond_t*, pthread_mutex_t*)
    int pthread_cond_broadcast(pthread_cond_t*)
    int pthread_cond_signal(pthread_cond_t*)

cdef extern from "<sched.h>" nogil:
    int sched_yield()
