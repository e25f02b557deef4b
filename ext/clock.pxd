# What a full pass costs and whether it may go on (DESIGN §4.6), header only: the free clock (nothing),
# the model clock (each job test charged to the least-loaded modelled worker), the wall clock, and the
# slurm-sim clock (charged as the model clock; the loop in slurm_loop.pxd turns charges into simulated time).

from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free
from libc.math cimport pow, floor

from ticks cimport now_ticks
from pbf._codes cimport CK_FREE, CK_MODEL, CK_WALL, CK_SLURM_SIM
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct PassClock:
    int kind                   # CK_*
    int64_t budget_us          # the time budget of a full pass (bf_max_time); <= 0: none
    int64_t cost_test_us       # model clock: charged per job test (the prefactor of cost_power) ...
    int64_t cost_slot_us       # ... plus this per live profile slot ...
    int64_t cost_node_us       # ... per node examined (a node cluster: the nodes that could hold the job) ...
    int64_t cost_resv_us       # ... per reservation already made in the pass
    double cost_power          # a worker's first k tests cost cost_pref_us x k^cost_power (1: linear) ...
    double cost_pref_us        # ... (cost_test_us, or a fraction of a microsecond more or less)
    int64_t* cost              # model clock: accumulated cost per modelled worker ...
    int64_t* tests             # ... and jobs it tested, in the pass under way
    int64_t n                  # modelled workers allocated
    int64_t last_us            # the charge of the worker that took the last test, after it
    int64_t t0                 # wall clock: ticks at the start of the pass under way
    double ns_per_tick         # the tick rate (see ticks.pxd), measured once per process


cdef inline int clock_start(PassClock* C, int64_t workers) noexcept nogil:
    # a new pass: the wall clock notes the time; the model clock zeroes each worker's account
    cdef int64_t i
    if C.kind == CK_WALL:
        C.t0 = now_ticks()
    if C.kind != CK_MODEL and C.kind != CK_SLURM_SIM:
        return RC_OK
    C.last_us = 0
    if C.n < workers:
        free(C.cost)
        free(C.tests)
        C.cost = <int64_t*>calloc(workers, sizeof(int64_t))
        C.tests = <int64_t*>calloc(workers, sizeof(int64_t))
        if C.cost == NULL or C.tests == NULL:
            C.n = 0
            return RC_NO_MEMORY
        C.n = workers
    for i in range(workers):
        C.cost[i] = 0
        C.tests[i] = 0
    return RC_OK


cdef inline int64_t test_cost(const PassClock* C, int64_t k) noexcept nogil:
    # the (k + 1)-th test of a modelled worker: the step of the Slurm simulator's bf_model, pref x n^pow,
    # rounded so that a worker's k tests cost round(pref x k^pow) in all (pow 1: pref each)
    if C.cost_power == 1.0 and C.cost_pref_us == <double>C.cost_test_us:
        return C.cost_test_us
    return (<int64_t>floor(C.cost_pref_us * pow(<double>(k + 1), C.cost_power) + 0.5)
            - <int64_t>floor(C.cost_pref_us * pow(<double>k, C.cost_power) + 0.5))


cdef inline bint clock_charge_test(PassClock* C, int64_t workers, int64_t slots, int64_t nodes,
                                   int64_t resv) noexcept nogil:
    # May the next job be tested? If so, charge the test: its plan of `slots`, the `nodes` it
    # examines and the `resv` reservations the pass made before it. Model clock: the job goes to the
    # modelled worker with the least accumulated cost (the first when tied), as threads taking the
    # next job from a shared queue would; the pass stops once even that worker is over budget.
    cdef int64_t w = 0, i
    if C.kind == CK_FREE:
        return True
    if C.kind == CK_WALL:
        return not (C.budget_us > 0 and (now_ticks() - C.t0) * C.ns_per_tick >= C.budget_us * 1000.0)
    for i in range(1, workers):
        if C.cost[i] < C.cost[w]:
            w = i
    if C.budget_us > 0 and C.cost[w] >= C.budget_us:
        return False
    C.cost[w] += test_cost(C, C.tests[w]) + C.cost_slot_us * slots + C.cost_node_us * nodes + C.cost_resv_us * resv
    C.tests[w] += 1
    C.last_us = C.cost[w]
    return True


cdef inline int64_t clock_elapsed_us(const PassClock* C, int64_t workers) noexcept nogil:
    # model clocks: when the next test would begin (the least-loaded modelled worker's charge)
    cdef int64_t i, mn = C.cost[0]
    for i in range(1, workers):
        if C.cost[i] < mn:
            mn = C.cost[i]
    return mn


cdef inline void clock_charge_all(PassClock* C, int64_t workers, int64_t us) noexcept nogil:
    # model clocks: serial work before the tests (every modelled worker waits for it)
    cdef int64_t i
    for i in range(workers):
        C.cost[i] += us


cdef inline int64_t clock_duration_us(const PassClock* C, int64_t workers) noexcept nogil:
    # the pass's charged duration: the busiest modelled worker, or the measured time
    cdef int64_t i, mx = 0
    if C.kind == CK_MODEL or C.kind == CK_SLURM_SIM:
        for i in range(workers):
            if C.cost[i] > mx:
                mx = C.cost[i]
        return mx
    if C.kind == CK_WALL:
        return <int64_t>((now_ticks() - C.t0) * C.ns_per_tick / 1000.0)
    return 0


cdef inline void clock_free(PassClock* C) noexcept nogil:
    free(C.cost)
    free(C.tests)
    C.cost = NULL
    C.tests = NULL
    C.n = 0
