"""Co-allocation's entry points (``ext/coalloc.pxd``, docs/coalloc.md) on a core's state.

A :class:`Coalloc` takes a :class:`pbf._core.Core`: a replay turns co-allocation on before it
runs and reads the figures after; the embedding API (:class:`pbf.Engine`) also runs the pass after
each core pass and reports the jobs the host ran. Internal: use :func:`pbf.replay` or
:class:`pbf.Engine`.
"""
from libc.stdint cimport uint64_t, int64_t, int32_t

from memory cimport INF
from state cimport State
from lifecycle cimport job_finish
from coalloc cimport co_after_pass, co_primary_finish, co_secondary_finish
from costate cimport CoAlloc, CA_DTS, CA_EXPERTS, CA_ACTIONS, CA_LEAVES, coalloc_init, coalloc_grow
from pbf._core cimport Core, raise_status
from pbf._codes cimport JS_RUNNING, HOW_COALLOC, RC_OK


class _Numpy:
    # numpy, imported on first use: a replay imports this module, and only co-allocation uses numpy here
    def __getattr__(self, name):
        global np
        import numpy
        np = numpy
        return getattr(numpy, name)


np = _Numpy()


cdef class Coalloc:
    """Co-allocation on ``core`` (off until :meth:`enable`)."""
    cdef Core core

    def __cinit__(self, Core core not None):
        self.core = core

    def enable(self, int policy, double fixed, double beta, int64_t interval, double lam, double tau,
               double dmax, uint64_t seed, const int32_t[::1] node_cores, const double[::1] cpu_use,
               bint dynamics=True):
        """Co-allocation with a policy (CoallocPolicy), over nodes of ``node_cores`` consecutive
        units, with each job's CPU use in (0, 1] (checked by the caller). A replay (after
        load_trace) runs the load model (``dynamics``); the embedding API does not (the host runs
        the jobs) and adds jobs later (:meth:`set_cpu`)."""
        cdef State* S = &self.core.s
        cdef CoAlloc* C = &S.co
        cdef int64_t n = S.jobs.n, i
        if coalloc_init(C, S.units, &node_cores[0] if node_cores.shape[0] else NULL, node_cores.shape[0],
                        n) != RC_OK:
            raise MemoryError("pbf core: out of memory (co-allocation)")
        for i in range(n):
            C.u[i] = cpu_use[i]
        C.on = True
        C.dynamics = dynamics
        C.policy = policy
        C.fixed = fixed
        C.beta = beta
        C.interval = interval if dynamics else 0
        C.next_tick = S.jobs.submit[0] + interval if n and interval > 0 else INF
        C.lam = lam
        C.tau = tau
        C.dmax = dmax
        C.rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL
        if C.rng == 0:
            C.rng = 1
        C.fill_lent = 1.0
        C.fill_lend = 1.0

    def set_cpu(self, int64_t j, double u):
        """Job j's CPU use (after add_jobs)."""
        cdef State* S = &self.core.s
        if coalloc_grow(&S.co, max(S.jobs.cap, j + 1)) != RC_OK:
            raise MemoryError("pbf core: out of memory (co-allocation)")
        S.co.u[j] = u

    def after_pass(self, int64_t now):
        """After a core pass: the started primaries lend, and queued jobs start on lent cores.
        Returns ([(primary, cores lent)], [secondary job indices])."""
        cdef State* S = &self.core.s
        cdef int64_t i
        prim = [S.decided.started[i] for i in range(S.decided.nstarted)]
        queued = self.core.pending()
        cdef int rc = co_after_pass(S, now)
        if rc != RC_OK:
            raise_status(rc, "co-allocation")
        lends = [(p, S.co.lend[p]) for p in prim]
        started = [int(j) for j in queued if S.jobs.state[j] == JS_RUNNING]
        return lends, started

    def units(self, int64_t j):
        """A secondary job's units (indices)."""
        cdef State* S = &self.core.s
        cdef CoAlloc* C = &S.co
        cdef int64_t i
        if C.sec_units == NULL or j >= C.cap or C.sec_units[j] == NULL:
            return np.empty(0, dtype=np.int64)
        return np.array(sorted(C.sec_units[j][i] for i in range(S.jobs.units[j])), dtype=np.int64)

    def finish(self, int64_t j, int64_t now, double rate):
        """Running job j (primary or secondary) ended at now; ``rate``: its progress rate as the
        host observed it (the learner's feedback)."""
        cdef State* S = &self.core.s
        cdef int rc
        S.co.h_given = rate
        if S.jobs.how[j] == HOW_COALLOC:
            rc = co_secondary_finish(S, j, now)
        else:
            rc = co_primary_finish(S, j, now)
            job_finish(S, j, now)
        if rc != RC_OK:
            raise_status(rc, "co-allocation")

    def secondaries(self):
        """Indices of the running secondary jobs."""
        cdef State* S = &self.core.s
        cdef int64_t j
        if not S.co.on:
            return []
        return [j for j in range(S.jobs.n) if S.jobs.state[j] == JS_RUNNING and S.jobs.how[j] == HOW_COALLOC]

    def check(self, bint on=True):
        """Tests: check every node an update touches (rates, CPU use within cores); the count of
        violations is in :meth:`figures`."""
        self.core.s.co.check = on

    def figures(self):
        """What co-allocation did: per job (CPU use, work done), and the learner's state."""
        cdef State* S = &self.core.s
        cdef CoAlloc* C = &S.co
        cdef int64_t n = S.jobs.n, i, k, leaf
        u = np.empty(n)
        done = np.empty(n)
        cdef double[::1] vu = u, vd = done
        for i in range(n):
            vu[i] = C.u[i]
            vd[i] = C.done_work[i]
        return {"cpu_use": u, "work_done": done, "overruns": C.overruns, "decisions": C.decisions,
                "violations": C.violations,
                "secondaries": C.sec_started, "loss_sum": C.loss_sum,
                "actions": [C.act_count[k] for k in range(CA_ACTIONS)],
                "alpha": [C.alpha[k] for k in range(CA_DTS)], "rounds": C.rounds,
                "cum_loss": [C.cum_loss[k] for k in range(CA_EXPERTS)], "cum_expected": C.cum_expected,
                "logw": [C.logw[k] for k in range(CA_EXPERTS)],
                "leaf_best": [[int(np.argmin([C.leaf_loss[k][leaf][i] for i in range(CA_ACTIONS)]))
                               if C.leaf_n[k][leaf] else -1 for leaf in range(CA_LEAVES)] for k in range(CA_DTS)],
                "leaf_n": [[C.leaf_n[k][leaf] for leaf in range(CA_LEAVES)] for k in range(CA_DTS)],
                "fill": C.fill_lent / C.fill_lend}
