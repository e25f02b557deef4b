# cython: cdivision=True
"""Compiled episodes of the job-selection environment (RLScheduler's semantics).

One :class:`Sim` is one window of consecutive jobs on a cluster modelled, as RLScheduler models it,
by a free-node counter (node identity never matters: without backfilling a job starts when enough
nodes are free, and every backfilling rule here counts nodes). The agent picks which queued job
starts next; the pick is binding: time then advances one event at a time (an arrival when its
submit time is no later than the next release, else the release) until the job fits, with or
without backfilling on the way. The rules, their quirks in ``compat`` mode and the fixes of the
default mode are in ``docs/rl.md``; ``pbf/rl/`` builds the Gymnasium environments on this.

Internal: use :class:`pbf.rl.JobSelectionEnv`.
"""
from libc.stdint cimport int64_t, int8_t
from libc.stdlib cimport malloc, free as c_free
from libc.string cimport memcpy
from libc.math cimport log10, log2, pow, sqrt

from jobs cimport Jobs
from policy cimport Policy, policy_key
from state cimport State
from rl_core cimport rlc_new, rlc_free, rlc_reset, rlc_submit, rlc_start, rlc_finish, rlc_backfill
from pbf._codes cimport PR_SJF, PR_SMALLEST, PR_F1, PR_F2, PR_WFP3, PR_UNICEP, RC_OK

import numpy as np

from .errors import InternalError

cdef enum:
    MAX_ROWS = 128
    NF = 8
cdef double EPS = 1e-5
cdef double MAX_WAIT = 43200.0     # RLScheduler's MAX_WAIT_TIME: 12 h
cdef int64_t INF_T = 0x3fffffffffffffff

# heuristic codes (pbf.rl.HEURISTICS names them)
cdef enum:
    K_FCFS = 0
    K_WFP3 = 1
    K_UNICEP = 2
    K_SJF = 3
    K_F1 = 4
    K_SMALLEST = 5
    K_F2 = 6
H_FCFS, H_WFP3, H_UNICEP, H_SJF, H_F1, H_SMALLEST, H_F2 = range(7)
# metric codes
M_BSLD, M_WAIT, M_TURNAROUND, M_UTIL, M_SLOWDOWN = range(5)
ROWS, FEATURES = MAX_ROWS, NF


cdef inline double core_key(int prio, int64_t est, int64_t units, int64_t submit, int64_t now) noexcept nogil:
    # the compiled engine's priority key (ext/policy.pxd) of one job, read through a one-job view of
    # the job table: the episodes and the engine share one definition of each score
    cdef Jobs one
    cdef Policy pol
    one.est, one.units, one.submit = &est, &units, &submit
    pol.prio = prio
    return policy_key(&pol, &one, NULL, 0, 0, now)


cdef inline double heuristic_key(int code, int64_t req, int64_t procs, int64_t submit, int64_t now,
                                 bint compat) noexcept nogil:
    # the key (ascending runs first) of a job under heuristic `code`, with the requested time as the
    # estimate and the processors as the units: the engine's score wherever RLScheduler's is the
    # same; the exceptions are RLScheduler's (docs/engine.md, "The learned-policy episodes")
    cdef double s = <double>submit, r = <double>req, n = <double>procs, w
    if code == K_FCFS:
        # the engine's FCFS key is 0 with the submit time as its first tie-break: the same order
        return s
    if code == K_SJF:
        return core_key(PR_SJF, req, procs, submit, now)
    if code == K_SMALLEST:
        return core_key(PR_SMALLEST, req, procs, submit, now)
    if code == K_F1:
        if req > 0:
            return core_key(PR_F1, req, procs, submit, now)
        # the engine never holds a job without a positive estimate (rejected at submit); RLScheduler
        # keeps requested times of 0 and reads them as 0.1
        return log10(0.1) * n + 870.0 * log10(s if s > 0 else 0.1)
    if code == K_F2:
        if compat and submit <= 0:
            # RLScheduler's F2 takes log10 of the submit time unguarded (-inf at 0)
            return sqrt(r) * n + 25600.0 * log10(s)
        return core_key(PR_F2, req, procs, submit, now)
    if compat:
        # RLScheduler reads the scheduled time (-1) of a waiting job as "now"
        w = -1.0 - s
        if code == K_WFP3:
            return -pow(w / r, 3.0) * n
        return -(w + 1e-15) / (log2(n + 1e-15) * r)
    return core_key(PR_WFP3 if code == K_WFP3 else PR_UNICEP, req, procs, submit, now)


def heuristic_score(int code, int64_t req, int64_t procs, int64_t submit, int64_t now, bint compat=False):
    """The key of one job under heuristic ``code`` (``H_*``) as the episodes sort by it, lowest first."""
    if not 0 <= code <= K_F2:
        raise ValueError(f"heuristic code {code} is not one of 0..{K_F2}")
    return heuristic_key(code, req, procs, submit, now, compat)


cdef inline void insertion_sort(int64_t* a, int64_t lo, int64_t hi, double* k1, double* k2) noexcept nogil:
    # stable insertion sort of a[lo:hi] by (k1, k2), keys permuted alongside
    cdef int64_t i, j, ai
    cdef double x1, x2
    for i in range(lo + 1, hi):
        ai, x1, x2 = a[i], k1[i], k2[i]
        j = i - 1
        while j >= lo and (x1 < k1[j] or (x1 == k1[j] and x2 < k2[j])):
            a[j + 1], k1[j + 1], k2[j + 1] = a[j], k1[j], k2[j]
            j -= 1
        a[j + 1], k1[j + 1], k2[j + 1] = ai, x1, x2


cdef void stable_sort(int64_t* a, int64_t n, double* k1, double* k2, int64_t* tmp, double* t1,
                      double* t2) noexcept nogil:
    # stable merge sort of a[0:n] by (k1, k2) (parallel arrays, permuted alongside; tmp, t1, t2 are
    # scratch of n entries). Python's list.sort is stable: the list orders the simulated schedulers
    # keep are mirrored exactly.
    cdef int64_t width = 1, lo, mid, hi, i, j, k
    cdef int64_t* src = a
    cdef int64_t* dst = tmp
    cdef double* s1 = k1
    cdef double* s2 = k2
    cdef double* d1 = t1
    cdef double* d2 = t2
    cdef int64_t* ti
    cdef double* td
    cdef int64_t descents = 0
    # the lists the schedulers sort are often sorted already, or sorted but for entries appended
    # since the last sort: those take one pass, or an insertion sort
    for i in range(1, n):
        if k1[i] < k1[i - 1] or (k1[i] == k1[i - 1] and k2[i] < k2[i - 1]):
            descents += 1
    if descents == 0:
        return
    if n <= 32 or descents == 1:
        insertion_sort(a, 0, n, k1, k2)
        return
    # runs of 16 by insertion, then bottom-up merges
    width = 16
    lo = 0
    while lo < n:
        insertion_sort(a, lo, min(lo + width, n), k1, k2)
        lo += width
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if s1[j] < s1[i] or (s1[j] == s1[i] and s2[j] < s2[i]):
                    dst[k], d1[k], d2[k] = src[j], s1[j], s2[j]
                    j += 1
                else:
                    dst[k], d1[k], d2[k] = src[i], s1[i], s2[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k], d1[k], d2[k] = src[i], s1[i], s2[i]
                i += 1
                k += 1
            while j < hi:
                dst[k], d1[k], d2[k] = src[j], s1[j], s2[j]
                j += 1
                k += 1
            lo = hi
        ti = src
        src = dst
        dst = ti
        td = s1
        s1 = d1
        d1 = td
        td = s2
        s2 = d2
        d2 = td
        width *= 2
    if src != a:
        memcpy(a, src, n * sizeof(int64_t))
    if s1 != k1:
        memcpy(k1, s1, n * sizeof(double))
        memcpy(k2, s2, n * sizeof(double))


cdef class Sim:
    """One episode's state over a shared trace (arrays indexed by job, RLScheduler's job order).

    ``nodes[j]``: nodes job j needs; ``procs[j]``: its processors (features and priority keys);
    ``feat``: (jobs, 8) float32 of the static features (columns 1-6; 0 and 7 are made per step).
    """
    cdef const int64_t[:] submit, run, req, nodes, procs
    cdef const float[:, :] feat
    cdef int64_t total_nodes, max_procs, skip_time, cap
    cdef double ppn
    cdef bint compat, backfill, skip
    cdef int metric
    # state
    cdef int64_t first, last, next_arr, t, free, nq, nrun, started, last_start, max_end
    cdef int64_t* q          # the queue in list order
    cdef int64_t* runj       # running jobs in start order
    cdef int64_t* start      # per window job: start time or -1
    cdef int64_t* vis        # row -> job (or -1: the skip row)
    cdef int8_t* mark        # per window job: shown in this observation
    cdef int64_t* tmp
    cdef int64_t* tmp2
    cdef double* k1
    cdef double* k2
    cdef double* t1
    cdef double* t2
    cdef int64_t nvis
    cdef bint over, pivot, stuck
    cdef int broken          # the core failed: 1 out of memory, 2 it and the episode disagree
    cdef double score_sum, util_sum
    cdef State* core         # default mode with backfilling: the core that makes the EASY decisions

    def __cinit__(self, const int64_t[:] submit, const int64_t[:] run, const int64_t[:] req,
                  const int64_t[:] nodes, const int64_t[:] procs, const float[:, :] feat, *,
                  int64_t total_nodes, double ppn, int64_t max_procs, int64_t cap, bint compat,
                  bint backfill, bint skip, int64_t skip_time, int metric):
        self.submit, self.run, self.req, self.nodes, self.procs, self.feat = submit, run, req, nodes, procs, feat
        self.total_nodes, self.ppn, self.max_procs, self.cap = total_nodes, ppn, max_procs, cap
        self.compat, self.backfill, self.skip, self.skip_time, self.metric = compat, backfill, skip, skip_time, metric
        n = cap + 1
        self.q = <int64_t*>malloc(n * sizeof(int64_t))
        self.runj = <int64_t*>malloc(n * sizeof(int64_t))
        self.start = <int64_t*>malloc(n * sizeof(int64_t))
        self.vis = <int64_t*>malloc((MAX_ROWS + 1) * sizeof(int64_t))
        self.mark = <int8_t*>malloc(n * sizeof(int8_t))
        self.tmp = <int64_t*>malloc(n * sizeof(int64_t))
        self.tmp2 = <int64_t*>malloc(n * sizeof(int64_t))
        self.k1 = <double*>malloc(n * sizeof(double))
        self.k2 = <double*>malloc(n * sizeof(double))
        self.t1 = <double*>malloc(n * sizeof(double))
        self.t2 = <double*>malloc(n * sizeof(double))
        if not (self.q and self.runj and self.start and self.vis and self.mark and self.tmp and self.tmp2
                and self.k1 and self.k2 and self.t1 and self.t2):
            raise MemoryError()
        if backfill and not compat:
            self.core = rlc_new(total_nodes, n)
            if self.core == NULL:
                raise MemoryError()
        self.over = True

    def __dealloc__(self):
        c_free(self.q); c_free(self.runj); c_free(self.start); c_free(self.vis); c_free(self.mark)
        c_free(self.tmp); c_free(self.tmp2); c_free(self.k1); c_free(self.k2); c_free(self.t1)
        c_free(self.t2)
        rlc_free(self.core)

    # ------------------------------------------------------------------ events
    cdef inline bint fits(self, int64_t j) noexcept nogil:
        return self.nodes[j] <= self.free

    cdef inline int64_t end_of(self, int64_t j) noexcept nogil:
        return self.start[j - self.first] + self.run[j]

    cdef inline int64_t next_release(self) noexcept nogil:
        # the earliest actual end; ties: the job started first (RLScheduler re-sorts a list stably)
        cdef int64_t i, e, best = INF_T
        for i in range(self.nrun):
            e = self.end_of(self.runj[i])
            if e < best:
                best = e
        return best

    cdef void release_first(self) noexcept nogil:
        cdef int64_t i, e, bi = 0, best = INF_T
        for i in range(self.nrun):
            e = self.end_of(self.runj[i])
            if e < best:
                best, bi = e, i
        if best > self.t:
            self.t = best
        self.free += self.nodes[self.runj[bi]]
        if self.core != NULL:
            rlc_finish(self.core, self.runj[bi] - self.first, self.t)
        for i in range(bi, self.nrun - 1):
            self.runj[i] = self.runj[i + 1]
        self.nrun -= 1

    cdef inline void add_arrival(self) noexcept nogil:
        cdef int64_t j = self.next_arr
        if self.submit[j] > self.t:
            self.t = self.submit[j]
        self.q[self.nq] = j
        self.nq += 1
        self.next_arr += 1
        if self.core != NULL and not rlc_submit(self.core, j - self.first):
            self.broken = 1

    cdef inline bint advance_one(self) noexcept nogil:
        # one event; False when there is none (a job that can never fit)
        cdef int64_t rel = self.next_release()
        if self.next_arr < self.last and self.submit[self.next_arr] <= rel:
            self.add_arrival()
            return True
        if self.nrun == 0:
            self.stuck = True
            return False
        self.release_first()
        return True

    cdef void start_job(self, int64_t j) noexcept nogil:
        cdef int64_t i, k = 0, w, r = self.run[j]
        cdef double resp
        self.start[j - self.first] = self.t
        self.free -= self.nodes[j]
        self.runj[self.nrun] = j
        self.nrun += 1
        for i in range(self.nq):
            if self.q[i] != j:
                self.q[k] = self.q[i]
                k += 1
        self.nq = k
        self.started += 1
        self.last_start = self.t
        if self.t + r > self.max_end:
            self.max_end = self.t + r
        w = self.t - self.submit[j]
        resp = <double>(w + r)
        if self.metric == 0:
            self.score_sum += max(1.0, resp / <double>max(r, 10))
        elif self.metric == 1:
            self.score_sum += <double>w
        elif self.metric == 2:
            self.score_sum += resp
        elif self.metric == 4:
            self.score_sum += resp / <double>r
        self.util_sum += <double>r * <double>self.procs[j]

    cdef bint move_for_job(self) noexcept nogil:
        # RLScheduler's moveforward_for_job: with an empty queue, advance until a job arrives
        cdef int64_t rel
        if self.nq:
            return True
        if self.next_arr >= self.last:
            return False
        while self.nq == 0:
            rel = self.next_release()
            if self.submit[self.next_arr] <= rel:
                self.add_arrival()
                return True
            self.release_first()
        return True

    # ------------------------------------------------------------------ ordering
    cdef void set_keys(self, int code) noexcept nogil:
        # keys of the queue's entries (ascending runs first; SJF and smallest-first tie on submit)
        cdef int64_t i, j
        for i in range(self.nq):
            j = self.q[i]
            self.k1[i] = heuristic_key(code, self.req[j], self.procs[j], self.submit[j], self.t, self.compat)
            self.k2[i] = <double>self.submit[j] if (code == K_SJF or code == K_SMALLEST) else 0.0

    cdef void sort_list(self, int64_t* a, int64_t n) noexcept nogil:
        stable_sort(a, n, self.k1, self.k2, self.tmp2, self.t1, self.t2)

    cdef inline void sort_queue(self, int code) noexcept nogil:
        self.set_keys(code)
        self.sort_list(self.q, self.nq)

    # ------------------------------------------------------------------ backfilling
    cdef bint wait_backfill_compat(self, int64_t job) noexcept nogil:
        # RLScheduler's moveforward_for_resources_backfill: one shadow time, computed first from
        # the estimated ends; a job backfills only if it ends strictly before it (no extra nodes)
        cdef int64_t i, j, n, earliest = self.t
        cdef double free_p = <double>self.free * self.ppn
        n = self.nrun
        for i in range(n):
            self.tmp[i] = self.runj[i]
            self.k1[i] = <double>(self.start[self.runj[i] - self.first] + self.req[self.runj[i]])
            self.k2[i] = 0.0
        self.sort_list(self.tmp, n)
        for i in range(n):
            j = self.tmp[i]
            free_p += <double>self.nodes[j] * self.ppn
            earliest = self.start[j - self.first] + self.req[j]
            if free_p >= <double>self.procs[job]:
                break
        while not self.fits(job):
            self.sort_queue(0)
            n = self.nq
            memcpy(self.tmp, self.q, n * sizeof(int64_t))
            for i in range(n):
                j = self.tmp[i]
                if self.t + self.req[j] < earliest and self.fits(j):
                    self.start_job(j)
            if not self.advance_one():
                return False
        return True

    cdef bint wait_backfill_easy(self, int64_t job) noexcept nogil:
        # EASY: at every event the core's full pass (rl_core.pxd) reserves the picked job at its
        # earliest start and starts, in FCFS order, every queued job the profile holds now for its
        # requested time (it ends by the reservation or leaves its nodes free); the picked job
        # starts once it fits
        cdef int64_t i, k, n
        cdef bint fit
        while not self.fits(job):
            self.sort_queue(0)
            n = self.nq
            self.tmp[0] = job - self.first
            k = 1
            fit = False
            for i in range(n):
                if self.q[i] != job:
                    self.tmp[k] = self.q[i] - self.first
                    k += 1
                    fit = fit or self.fits(self.q[i])
            if fit:
                # (a pass can start only jobs that fit now)
                if rlc_backfill(self.core, self.t, self.tmp, n) != RC_OK:
                    self.broken = 1
                    return False
                for i in range(self.core.decided.nstarted):
                    self.start_job(self.first + self.core.decided.started[i])
                if self.core.nodes.nfree != self.free:
                    self.broken = 2
                    return False
            if not self.advance_one():
                return False
        return True

    cdef bint schedule(self, int64_t job) noexcept nogil:
        # start `job` (waiting, and backfilling if enabled, until it fits); True when the episode ends
        if not self.fits(job):
            if self.backfill:
                if self.compat:
                    self.wait_backfill_compat(job)
                else:
                    self.wait_backfill_easy(job)
            else:
                while not self.fits(job):
                    if not self.advance_one():
                        break
        if self.stuck or self.broken:
            self.over = True
            return True
        if self.core != NULL and not rlc_start(self.core, job - self.first, self.t):
            self.broken = 1
            self.over = True
            return True
        self.start_job(job)
        if not self.move_for_job():
            self.over = True
        return self.over

    cdef void skip_step(self) noexcept nogil:
        # RLScheduler's skip_schedule: move to the next arrival, release or now + skip_time
        cdef int64_t rel = self.next_release(), arr = INF_T
        if self.next_arr < self.last:
            arr = self.submit[self.next_arr]
        elif self.compat and self.next_arr < self.submit.shape[0]:
            arr = self.submit[self.next_arr]     # RLScheduler looks past the window here
        if self.next_arr >= self.last and self.nrun == 0:
            self.pivot = True
            return
        if self.t + self.skip_time < min(arr, rel):
            self.t += self.skip_time
            return
        if self.next_arr < self.last and self.submit[self.next_arr] <= rel:
            self.add_arrival()
        else:
            self.release_first()

    # ------------------------------------------------------------------ observation
    cdef void pick_visible(self) noexcept nogil:
        cdef int64_t i, n = self.nq, j, m, k = 0, nlists
        cdef int64_t pos[3]
        cdef int64_t* lists[3]
        cdef int64_t* sjf = self.tmp
        cdef int64_t* small = self.runj + self.nrun   # unused tail of runj as scratch
        cdef int64_t* oldest = self.q
        self.sort_queue(0)
        if n <= MAX_ROWS:
            memcpy(self.vis, self.q, n * sizeof(int64_t))
            self.nvis = n
            return
        for i in range(n):
            self.mark[self.q[i] - self.first] = 0
        pos[0] = pos[1] = pos[2] = 0
        if self.compat:
            # the queue is sorted in place by F1, F2, SJF, then smallest (each stable on the last);
            # the window alternates the SJF and smallest lists (its "random" list reads the SJF one)
            self.sort_queue(4)
            self.sort_queue(6)
            self.sort_queue(3)
            memcpy(sjf, self.q, n * sizeof(int64_t))
            self.sort_queue(5)
            small = self.q
        else:
            # SJF, smallest and oldest (FCFS) lists in turn: long-waiting jobs are never hidden
            memcpy(sjf, self.q, n * sizeof(int64_t))
            self.set_keys(3)
            self.sort_list(sjf, n)
            memcpy(small, self.q, n * sizeof(int64_t))
            self.set_keys(5)
            self.sort_list(small, n)
        # round robin over the lists, skipping jobs already shown
        lists[0] = sjf
        lists[1] = small
        lists[2] = oldest
        nlists = 2 if self.compat else 3
        m = 0
        while m < MAX_ROWS:
            j = lists[k][pos[k]]
            pos[k] += 1
            if not self.mark[j - self.first]:
                self.mark[j - self.first] = 1
                self.vis[m] = j
                m += 1
            k = (k + 1) % nlists
        self.nvis = MAX_ROWS

    cdef void observe_into(self, float* out, int8_t* mask) noexcept nogil:
        cdef int64_t r, j, f
        cdef float* row
        cdef double w
        if self.over:
            self.nvis = 0
        else:
            self.pick_visible()
        for r in range(MAX_ROWS):
            row = out + r * NF
            if r < self.nvis:
                j = self.vis[r]
                w = <double>(self.t - self.submit[j]) / MAX_WAIT
                row[0] = <float>min(w, 1.0 - EPS)
                for f in range(1, 7):
                    row[f] = self.feat[j, f]
                row[7] = <float>(1.0 - EPS if self.fits(j) else EPS)
                mask[r] = 1
            elif r == self.nvis and self.skip and not self.over:
                for f in range(7):
                    row[f] = 1.0
                row[7] = 1.0 if self.pivot else 0.0
                mask[r] = 0 if self.pivot else 1
                self.vis[r] = -1
            else:
                row[0] = 0.0
                for f in range(1, 7):
                    row[f] = 1.0
                row[7] = 0.0
                mask[r] = 0

    # ------------------------------------------------------------------ Python API
    cdef check(self):
        if self.stuck:
            raise RuntimeError("a job needs more nodes than the cluster has")
        if self.broken == 1:
            raise MemoryError("the episode's scheduler core ran out of memory")
        if self.broken:
            raise InternalError("the episode and its scheduler core disagree on the free nodes")

    def reset(self, int64_t first, int64_t n):
        """Start the window of jobs ``first .. first + n - 1``: the clock at the first submit."""
        if n < 1 or n > self.cap or first < 0 or first + n > self.submit.shape[0]:
            raise ValueError(f"window [{first}, {first + n}) does not fit a trace of "
                             f"{self.submit.shape[0]} jobs with capacity {self.cap}")
        self.first, self.last = first, first + n
        self.t = self.submit[first]
        self.q[0] = first
        self.nq = 1
        self.next_arr = first + 1
        self.free = self.total_nodes
        self.nrun = self.started = 0
        self.score_sum = self.util_sum = 0.0
        self.last_start = self.t
        self.max_end = 0
        self.over = self.pivot = self.stuck = False
        self.broken = 0
        self.nvis = 0
        for i in range(n):
            self.start[i] = -1
        if self.core != NULL:
            rlc_reset(self.core, n, self.t, self.submit, self.nodes, self.req, first)
            if not rlc_submit(self.core, 0):
                raise MemoryError()

    def observe(self, float[::1] out, int8_t[::1] mask):
        """Write the observation (128 x 8, row-major) and the action mask; returns the rows shown."""
        self.observe_into(&out[0], &mask[0])
        return self.nvis

    def step(self, int64_t row, float[::1] out, int8_t[::1] mask):
        """Act on row ``row`` of the last observation (a valid row: the caller checked the mask),
        then observe. Returns True when the episode is over."""
        with nogil:
            self.step_row(row, &out[0], &mask[0])
        self.check()
        return self.over

    cdef void step_row(self, int64_t row, float* out, int8_t* mask) noexcept nogil:
        if self.vis[row] < 0:
            self.skip_step()
        else:
            self.schedule(self.vis[row])
        self.observe_into(out, mask)

    def run_heuristic(self, int code):
        """Run the whole (freshly reset) window with a heuristic pick; returns the metric."""
        cdef int64_t j
        with nogil:
            while not self.over:
                self.sort_queue(code)
                j = self.q[0]
                self.schedule(j)
        self.check()
        return self.value()

    def run_order(self, const int64_t[:] rank):
        """Run the window always picking the queued job of least ``rank[j]`` (ties: list order)."""
        cdef int64_t i, j, best
        with nogil:
            while not self.over:
                best = 0
                for i in range(1, self.nq):
                    if rank[self.q[i]] < rank[self.q[best]]:
                        best = i
                j = self.q[best]
                self.schedule(j)
        self.check()
        return self.value()

    def value(self):
        """The episode's metric (utilisation as a share; the others as means over started jobs)."""
        cdef double span
        if self.started == 0:
            return 0.0
        if self.metric == 3:
            span = <double>((self.t if self.compat else self.max_end) - self.submit[self.first])
            return self.util_sum / (span * self.max_procs) if span > 0 else 0.0
        return self.score_sum / <double>self.started

    def starts(self):
        """Start time of each job of the window (-1: not started)."""
        out = np.empty(self.last - self.first, dtype=np.int64)
        cdef int64_t[::1] o = out
        for i in range(self.last - self.first):
            o[i] = self.start[i]
        return out

    @property
    def done(self):
        return self.over

    @property
    def now(self):
        return self.t

    @property
    def queued(self):
        return self.nq

    def job_at(self, int64_t row):
        """The job (trace index) shown in row ``row`` of the last observation (-1: the skip row)."""
        if not 0 <= row <= self.nvis or row >= MAX_ROWS:
            raise IndexError(f"row {row} of {self.nvis} shown")
        return self.vis[row]

    def visible(self):
        """Job index per row of the last observation (-1: the skip row)."""
        return np.array([self.vis[r] for r in range(self.nvis + (1 if self.skip and not self.over
                                                                  and self.nvis < MAX_ROWS else 0))],
                        dtype=np.int64)


def step_many(list sims, const int64_t[::1] rows, float[:, ::1] obs, int8_t[:, ::1] masks, int8_t[::1] done):
    """Step every sim by its row (one call for a batch of windows); ``done[i]`` set when it ends."""
    cdef Sim s
    cdef Py_ssize_t i
    for i in range(len(sims)):
        s = <Sim>sims[i]
        s.step_row(rows[i], &obs[i, 0], &masks[i, 0])
        s.check()
        done[i] = s.done


# ---------------------------------------------------------------------- the kernel network
cdef extern from "kernel.h":
    void pbf_kernel_scores(long n, int nf, const float* x, const float* w0, const float* b0, const float* w1,
                           const float* b1, const float* w2, const float* b2, const float* w3,
                           const float* b3, float* out) noexcept nogil


cdef class Kernel:
    """The kernel network's weights, copied into C arrays (see ``ext/kernel.h``); ``nf`` inputs per
    row (8: job selection, 6: backfilling)."""
    cdef float w0[256]
    cdef float b0[32]
    cdef float w1[512]
    cdef float b1[16]
    cdef float w2[128]
    cdef float b2[8]
    cdef float w3[8]
    cdef float b3[1]
    cdef readonly int nf

    def __init__(self, const float[:, ::1] w0, const float[::1] b0, const float[:, ::1] w1, const float[::1] b1,
                 const float[:, ::1] w2, const float[::1] b2, const float[:, ::1] w3, const float[::1] b3):
        if not 1 <= w0.shape[0] <= 8 or (w0.shape[1], b0.shape[0], w1.shape[0], w1.shape[1], b1.shape[0],
                                          w2.shape[0], w2.shape[1], b2.shape[0], w3.shape[0], w3.shape[1],
                                          b3.shape[0]) != (32, 32, 32, 16, 16, 16, 8, 8, 8, 1, 1):
            raise ValueError("kernel weights must have the shapes Fx32 (F <= 8), 32, 32x16, 16, 16x8, 8, 8x1, 1")
        self.nf = w0.shape[0]
        memcpy(self.w0, &w0[0, 0], self.nf * 32 * sizeof(float))
        memcpy(self.b0, &b0[0], 32 * sizeof(float))
        memcpy(self.w1, &w1[0, 0], 512 * sizeof(float))
        memcpy(self.b1, &b1[0], 16 * sizeof(float))
        memcpy(self.w2, &w2[0, 0], 128 * sizeof(float))
        memcpy(self.b2, &b2[0], 8 * sizeof(float))
        memcpy(self.w3, &w3[0, 0], 8 * sizeof(float))
        memcpy(self.b3, &b3[0], sizeof(float))

    cdef inline void score_rows(self, const float* x, long n, float* out) noexcept nogil:
        pbf_kernel_scores(n, self.nf, x, self.w0, self.b0, self.w1, self.b1, self.w2, self.b2, self.w3, self.b3,
                          out)

    def scores(self, const float[:, ::1] x, float[::1] out):
        """Scores of the rows of ``x`` (n, nf) into ``out`` (at least n long)."""
        if x.shape[1] != self.nf or out.shape[0] < x.shape[0]:
            raise ValueError(f"scores: x must be (n, {self.nf}) and out at least n long")
        if x.shape[0]:
            with nogil:
                self.score_rows(&x[0, 0], x.shape[0], &out[0])


def run_policy(Sim sim, Kernel kernel):
    """Run the (freshly reset) window of ``sim`` picking, at every decision, the visible row of
    highest score (ties: the first row); returns the metric."""
    cdef float obs[MAX_ROWS * NF]
    cdef int8_t mask[MAX_ROWS]
    cdef float sc[MAX_ROWS]
    cdef int64_t r, best, rows
    if kernel.nf != NF:
        raise ValueError(f"a job-selection kernel has {NF} inputs, this one {kernel.nf}")
    with nogil:
        sim.observe_into(obs, mask)
        while not sim.over:
            rows = min(sim.nvis + 1, MAX_ROWS)     # the jobs and a skip row; the rest is padding
            kernel.score_rows(obs, rows, sc)
            best = -1
            for r in range(rows):
                if mask[r] and (best < 0 or sc[r] > sc[best]):
                    best = r
            sim.step_row(best, obs, mask)
    sim.check()
    return sim.value()


include "rl_backfill.pxi"
