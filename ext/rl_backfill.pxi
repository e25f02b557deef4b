# Compiled episodes of the backfilling environment (RLBackfilling's semantics); included by
# _rlsim.pyx, whose stable sort, kernel and constants it shares.
#
# One BackfillSim is one window of consecutive jobs on RLBackfilling's free-node counter cluster.
# The head job (by the base priority) starts when it fits; while it does not, the jobs that could
# start now are the backfilling candidates: with more than act_size of them the agent picks one (it
# starts now) or, with the stop row, none; with fewer the classic rule runs (FCFS order, only jobs
# that cannot delay the head), with none time advances one event. The lists RLBackfilling keeps (queue, running jobs) are
# mirrored in their order, with stable sorts where it sorts, so that ties break as in its code.
# docs/rl.md lists the rules, the compat-mode quirks and what the default mode fixes.

cdef enum:
    BF_NF = 6
    BK_FCFS = 0
    BK_SJF = 1
    BK_WFP3 = 2
    BK_F1 = 3
    BK_LARGEST = 4

# order codes (pbf.rl.backfill_env.ORDERS names them)
O_FCFS, O_SJF, O_WFP3, O_F1, O_LARGEST = range(5)
BF_FEATURES = BF_NF


cdef class BackfillSim:
    """One backfilling episode over a shared trace (arrays indexed by job, in RLBackfilling's order).

    ``head``: the base priority's order code; ``guarded``: candidates must not delay the head (end
    before its shadow time + ``relax`` x its expected wait; in the default mode also: fit in the
    extra nodes), else any job that fits now is one; ``act_size``:
    the agent is asked when more candidates than this exist; ``compat``: keep RLBackfilling's quirks;
    ``stop``: a last row (features 0 but the sixth, 1) that ends backfilling until the next event.
    """
    cdef const int64_t[:] submit, run, req, nodes, procs
    cdef int64_t total_nodes, cap, act_size
    cdef double ppn, max_procs, max_exec, relax
    cdef bint compat, guarded, stop
    cdef int head_code, sorted_code, run_sorted     # run_sorted: 0 unknown, 1 by end, 2 by requested end
    # state
    cdef int64_t first, last, next_arr, t, free, nq, nrun, head, nvis, decisions, shadow, extra
    cdef double ew
    cdef bint over
    cdef State* core         # default mode: the core that makes the EASY decisions (rl_core.pxd) ...
    cdef bint mirror         # ... mirroring this episode (run_heuristic; the agent's, with act_size > 0)
    cdef int broken          # the core failed: 1 out of memory, 2 it and the episode disagree
    cdef int64_t* q          # the queue in list order
    cdef int64_t* runj       # running jobs in list order
    cdef int64_t* start      # per window job: start time or -1
    cdef int64_t* vis        # row -> job of the last observation
    cdef int64_t* tmp
    cdef double* k1
    cdef double* k2
    cdef double* t1
    cdef double* t2

    def __cinit__(self, const int64_t[:] submit, const int64_t[:] run, const int64_t[:] req,
                  const int64_t[:] nodes, const int64_t[:] procs, int64_t total_nodes, double ppn,
                  double max_procs, double max_exec, int64_t cap, int head=0, bint guarded=False,
                  double relax=0.0, bint compat=True, int64_t act_size=1, bint stop=False):
        cdef int64_t n = len(submit)
        if not (len(run) == len(req) == len(nodes) == len(procs) == n):
            raise ValueError("job arrays differ in length")
        if total_nodes <= 0 or ppn <= 0 or max_procs <= 0 or max_exec <= 0 or cap <= 0:
            raise ValueError("total_nodes, ppn, max_procs, max_exec and cap must be positive")
        if act_size < (0 if stop else 1):
            raise ValueError("act_size must be >= 1 (>= 0 with the stop row)")
        if not 0 <= head <= BK_LARGEST:
            raise ValueError(f"head order code {head} is not one of 0..{BK_LARGEST}")
        for i in range(n):
            if nodes[i] < 1 or nodes[i] > total_nodes:
                raise ValueError(f"job {i} needs {nodes[i]} nodes; every job needs at least one and at most "
                                 f"the cluster's {total_nodes}")
        self.submit, self.run, self.req, self.nodes, self.procs = submit, run, req, nodes, procs
        self.total_nodes, self.ppn, self.max_procs, self.max_exec = total_nodes, ppn, max_procs, max_exec
        self.cap, self.head_code, self.guarded, self.relax = cap, head, guarded, relax
        self.compat, self.act_size, self.stop = compat, act_size, stop
        self.q = <int64_t*>malloc(cap * sizeof(int64_t))
        self.runj = <int64_t*>malloc(cap * sizeof(int64_t))
        self.start = <int64_t*>malloc(cap * sizeof(int64_t))
        self.vis = <int64_t*>malloc(MAX_ROWS * sizeof(int64_t))
        self.tmp = <int64_t*>malloc(cap * sizeof(int64_t))
        self.k1 = <double*>malloc(cap * sizeof(double))
        self.k2 = <double*>malloc(cap * sizeof(double))
        self.t1 = <double*>malloc(cap * sizeof(double))
        self.t2 = <double*>malloc(cap * sizeof(double))
        if not (self.q and self.runj and self.start and self.vis and self.tmp and self.k1 and self.k2
                and self.t1 and self.t2):
            raise MemoryError()
        if not compat and relax == 0.0:
            # (a relaxed shadow is no EASY: the episode's own rule decides)
            self.core = rlc_new(total_nodes, cap)
            if self.core == NULL:
                raise MemoryError()
        self.over = True

    def __dealloc__(self):
        c_free(self.q)
        c_free(self.runj)
        c_free(self.start)
        c_free(self.vis)
        c_free(self.tmp)
        c_free(self.k1)
        c_free(self.k2)
        c_free(self.t1)
        c_free(self.t2)
        rlc_free(self.core)

    # ------------------------------------------------------------------ the cluster and the lists
    cdef inline bint fits(self, int64_t j) noexcept nogil:
        return self.nodes[j] <= self.free

    cdef inline void key_of(self, int64_t j, int code, double* x1, double* x2) noexcept nogil:
        # RLBackfilling's score functions (ascending runs first): RLScheduler's, shared with the
        # job-selection episodes (heuristic_key); the largest first is the smallest first reversed
        cdef int64_t r = self.req[j], p = self.procs[j], s = self.submit[j]
        x2[0] = 0.0
        if code == BK_FCFS:
            x1[0] = heuristic_key(K_FCFS, r, p, s, self.t, self.compat)
        elif code == BK_SJF:
            x1[0], x2[0] = heuristic_key(K_SJF, r, p, s, self.t, self.compat), <double>s
        elif code == BK_WFP3:
            x1[0] = heuristic_key(K_WFP3, r, p, s, self.t, self.compat)
        elif code == BK_F1:
            x1[0] = heuristic_key(K_F1, r, p, s, self.t, self.compat)
        else:
            x1[0], x2[0] = -heuristic_key(K_SMALLEST, r, p, s, self.t, self.compat), <double>s

    cdef void sort_by(self, int64_t* a, int64_t n, int code) noexcept nogil:
        # a stable sort of the queue by `code`. The queue remembers the order it is sorted in
        # (orders whose keys do not change with time): a sorted list is left as it is, which is
        # what a stable sort would do with it
        cdef int64_t i
        if a == self.q and code == self.sorted_code:
            return
        for i in range(n):
            self.key_of(a[i], code, &self.k1[i], &self.k2[i])
        stable_sort(a, n, self.k1, self.k2, self.tmp, self.t1, self.t2)
        if a == self.q:
            self.sorted_code = code if (code != BK_WFP3 or self.compat) else -1

    cdef inline int64_t end_of(self, int64_t j, bint by_request) noexcept nogil:
        return self.start[j - self.first] + (self.req[j] if by_request else self.run[j])

    cdef void sort_running(self, bint by_request) noexcept nogil:
        # by requested or actual end; like the queue, the list remembers which order it is in
        cdef int64_t i, j
        if self.run_sorted == (2 if by_request else 1):
            return
        for i in range(self.nrun):
            self.k1[i] = <double>self.end_of(self.runj[i], by_request)
            self.k2[i] = 0.0
        stable_sort(self.runj, self.nrun, self.k1, self.k2, self.tmp, self.t1, self.t2)
        self.run_sorted = 2 if by_request else 1

    cdef void start_job(self, int64_t j) noexcept nogil:
        # the episode starts j now (the core, when it follows, too)
        if self.mirror and not rlc_start(self.core, j - self.first, self.t):
            self.broken = 1
        self.took(j)

    cdef void took(self, int64_t j) noexcept nogil:
        # j started now: the lists and the free nodes
        cdef int64_t i, k = 0
        self.start[j - self.first] = self.t
        self.free -= self.nodes[j]
        if self.run_sorted and self.nrun and \
                self.end_of(j, self.run_sorted == 2) < self.end_of(self.runj[self.nrun - 1], self.run_sorted == 2):
            self.run_sorted = 0
        self.runj[self.nrun] = j
        self.nrun += 1
        for i in range(self.nq):
            if self.q[i] != j:
                self.q[k] = self.q[i]
                k += 1
        self.nq = k

    cdef void append(self, int64_t j) noexcept nogil:
        # an arrival joins the end of the queue; the queue stays sorted if it sorts last
        cdef double a1, a2, b1, b2
        if self.sorted_code >= 0 and self.nq > 0:
            self.key_of(self.q[self.nq - 1], self.sorted_code, &a1, &a2)
            self.key_of(j, self.sorted_code, &b1, &b2)
            if b1 < a1 or (b1 == a1 and b2 < a2):
                self.sorted_code = -1
        self.run_sorted = 0
        self.q[self.nq] = j
        self.nq += 1
        if self.mirror and not rlc_submit(self.core, j - self.first):
            self.broken = 1

    cdef bint jump(self) noexcept nogil:
        # one event: the next arrival if it comes no later than the next release, else the release
        cdef int64_t rel, j, i
        if self.nrun:
            self.sort_running(False)
            j = self.runj[0]
            rel = self.start[j - self.first] + self.run[j]
            if self.next_arr < self.last and self.submit[self.next_arr] <= rel:
                self.t = max(self.t, self.submit[self.next_arr])
                self.append(self.next_arr)
                self.next_arr += 1
            else:
                self.t = max(self.t, rel)
                self.free += self.nodes[j]
                if self.mirror:
                    rlc_finish(self.core, j - self.first, self.t)
                for i in range(1, self.nrun):
                    self.runj[i - 1] = self.runj[i]
                self.nrun -= 1
            return True
        if self.next_arr >= self.last:
            return False
        self.t = max(self.t, self.submit[self.next_arr])
        self.append(self.next_arr)
        self.next_arr += 1
        return True

    cdef void set_shadow(self, int64_t h) noexcept nogil:
        # the head's earliest start from the running jobs' requested ends, its expected wait, and
        # (EASY, default mode) the nodes still free at that time once the head has its own
        cdef double avail = <double>self.free * self.ppn
        cdef int64_t i, r, est = self.t, nodes = self.free
        self.sort_running(True)
        i = 0
        while i < self.nrun:
            r = self.runj[i]
            avail += <double>self.nodes[r] * self.ppn
            nodes += self.nodes[r]
            est = self.start[r - self.first] + self.req[r]
            i += 1
            if avail >= <double>self.procs[h]:
                break
        while i < self.nrun and self.start[self.runj[i] - self.first] + self.req[self.runj[i]] == est:
            nodes += self.nodes[self.runj[i]]      # every job ending at the shadow time frees its nodes
            i += 1
        self.shadow = est
        self.ew = <double>(est - self.submit[h])
        self.extra = max(nodes - self.nodes[h], 0)

    cdef inline bint ends_in_time(self, int64_t j) noexcept nogil:
        # RLBackfilling: strictly before the shadow time; EASY (default): by it
        if self.compat:
            return <double>(self.t + self.req[j]) < <double>self.shadow + self.ew * self.relax
        return <double>(self.t + self.req[j]) <= <double>self.shadow + self.ew * self.relax

    cdef inline bint safe(self, int64_t j) noexcept nogil:
        # backfilling j now cannot delay the head: it ends in time or (default mode) fits in the
        # extra nodes
        return self.ends_in_time(j) or (not self.compat and self.nodes[j] <= self.extra)

    cdef inline bint candidate(self, int64_t j, int64_t h) noexcept nogil:
        return j != h and self.fits(j) and (not self.guarded or self.safe(j))

    cdef void classic(self, int64_t h, int code) noexcept nogil:
        # start, in `code` order, every job that fits and cannot delay the head. RLBackfilling
        # removes from the list it iterates, so the job after each start is not tested (compat).
        # The default mode's EASY is the core's pass: the head reserved, the others tried in order.
        cdef int64_t i = 0, j, k
        cdef bint fit = False
        self.sort_by(self.q, self.nq, code)
        if self.mirror:
            self.tmp[0] = h - self.first
            k = 1
            for i in range(self.nq):
                if self.q[i] != h:
                    self.tmp[k] = self.q[i] - self.first
                    k += 1
                    fit = fit or self.fits(self.q[i])
            if not fit:
                return                  # (a pass can start only jobs that fit now)
            if rlc_backfill(self.core, self.t, self.tmp, self.nq) != RC_OK:
                self.broken = 1
                return
            for i in range(self.core.decided.nstarted):
                self.took(self.first + self.core.decided.started[i])
            if self.core.nodes.nfree != self.free:
                self.broken = 2
            return
        while i < self.nq and self.free > 0:     # (every job needs a node)
            j = self.q[i]
            if j != h and self.safe(j) and self.fits(j):
                if not self.ends_in_time(j):
                    self.extra -= self.nodes[j]
                self.start_job(j)
                if self.compat:
                    i += 1
            else:
                i += 1

    cdef void reset_state(self, int64_t first, int64_t n, bint mirror) noexcept nogil:
        # mirror: the core follows the episode (its EASY decides the classic rule's starts)
        cdef int64_t i
        self.mirror = mirror and self.core != NULL
        self.broken = 0
        self.first, self.last = first, first + n
        self.t = self.submit[first]
        self.q[0] = first
        self.nq, self.nrun, self.next_arr = 1, 0, first + 1
        self.sorted_code = -1
        self.run_sorted = 0
        self.free = self.total_nodes
        self.over, self.nvis, self.decisions, self.head = False, 0, 0, -1
        for i in range(n):
            self.start[i] = -1
        if self.mirror:
            rlc_reset(self.core, n, self.t, self.submit, self.nodes, self.req, first)
            if not rlc_submit(self.core, 0):
                self.broken = 1

    # ------------------------------------------------------------------ the agent's episode
    cdef void proceed(self, bint at_head) noexcept nogil:
        # RLBackfilling's reset_to_next_backfill_or_end / step: run until the agent has a choice to
        # make (self.head set, the candidates listed in self.vis) or the window is over
        cdef int64_t h = self.head, n, i, j
        cdef int64_t rows = MAX_ROWS - 1 if self.stop else MAX_ROWS
        while True:
            if at_head:
                if self.fits(h):
                    self.start_job(h)
                    if self.nq == 0 and not self.jump():
                        self.over = True
                        return
                else:
                    # the running list is sorted (by requested end) exactly where RLBackfilling
                    # sorts it: its order breaks ties between equal ends at the next release
                    if self.guarded:
                        self.set_shadow(h)
                    n = 0
                    if self.free > 0:
                        for i in range(self.nq):
                            j = self.q[i]
                            if self.candidate(j, h):
                                self.vis[n] = j     # the rows of the observation, in queue order
                                n += 1
                                if n == rows and n > self.act_size:
                                    break           # enough: the agent is asked
                    self.nvis = min(n, rows)
                    if n > 0 and not self.guarded:
                        self.set_shadow(h)
                    if n > self.act_size:
                        self.head = h
                        return
                    if n > 0:
                        self.classic(h, BK_FCFS)
                        if not self.jump():
                            self.over = True
                            return
                    elif not self.jump():
                        self.over = True      # (not reached: the head waits for a running job)
                        return
            while self.nq == 0:
                if not self.jump():
                    self.over = True
                    return
            self.sort_by(self.q, self.nq, self.head_code)
            h = self.q[0]
            at_head = True

    cdef void observe_into(self, float* out, int8_t* mask) noexcept nogil:
        # the candidates proceed() listed (self.vis), then the stop row, then padding
        cdef int64_t r = 0, j
        cdef float* row
        cdef double gap = <double>self.shadow + self.relax * self.ew + 1.0 - <double>self.t
        if self.over:
            self.nvis = 0
        else:
            for r in range(self.nvis):
                j = self.vis[r]
                row = out + r * BF_NF
                row[0] = min(<double>(self.t - self.submit[j]) / MAX_WAIT, 1.0 - EPS)
                row[1] = min(<double>self.req[j] / self.max_exec, 1.0 - EPS)
                row[2] = min(<double>self.procs[j] / self.max_procs, 1.0 - EPS)
                row[3] = min(<double>self.req[j] / (gap + 1.0), 1.0 - EPS)
                row[4] = min(<double>self.nodes[j] / <double>self.free, 1.0 - EPS)
                row[5] = 0.0
                mask[r] = 1
            r = self.nvis
            if self.stop:
                row = out + r * BF_NF
                row[0], row[1], row[2], row[3], row[4], row[5] = 0.0, 0.0, 0.0, 0.0, 0.0, 1.0
                mask[r] = 1
                self.vis[r] = -1
                r += 1
        while r < MAX_ROWS:
            row = out + r * BF_NF
            row[0], row[1], row[2], row[3], row[4], row[5] = 0.0, 1.0, 1.0, 1.0, 1.0, 0.0
            mask[r] = 0
            r += 1

    cdef void step_row(self, int64_t row, float* out, int8_t* mask) noexcept nogil:
        if self.over:
            self.observe_into(out, mask)
            return
        self.decisions += 1
        if self.stop and row == self.nvis:
            # no more backfilling now: the next event, then the head again
            if not self.jump():
                self.over = True
            else:
                self.proceed(False)
            self.observe_into(out, mask)
            return
        if row < 0 or row >= self.nvis:
            row = 0                  # an invalid pick takes the first candidate
        self.start_job(self.vis[row])
        self.proceed(True)
        self.observe_into(out, mask)

    def reset(self, int64_t first, int64_t n):
        """Start the window of jobs [first, first + n) and run to the agent's first choice."""
        if n <= 0 or n > self.cap or first < 0 or first + n > len(self.submit):
            raise ValueError(f"window [{first}, {first + n}) does not fit the trace or the capacity {self.cap}")
        with nogil:
            self.reset_state(first, n, self.act_size > 0)
            self.proceed(False)
        self.check()

    def observe(self, float[::1] out, int8_t[::1] mask):
        """Write the observation (128 x 6 floats, row-major) and the mask of candidate rows."""
        with nogil:
            self.observe_into(&out[0], &mask[0])

    def step(self, int64_t row, float[::1] out, int8_t[::1] mask):
        """Start the candidate in ``row``, run to the next choice, write its observation."""
        with nogil:
            self.step_row(row, &out[0], &mask[0])
        self.check()

    # ------------------------------------------------------------------ the heuristics
    def run_heuristic(self, int64_t first, int64_t n, int head, int order):
        """Schedule the window with the ``head`` order for the head job and EASY backfilling in
        ``order`` (RLBackfilling's test_schedule_curr_sequence: head by a score, candidates FCFS;
        its easyback_schedule_curr_sequence: FCFS head, candidates by a score); returns the mean
        bounded slowdown. In compat mode the head's shadow is computed once while it waits."""
        cdef int64_t h
        if n <= 0 or n > self.cap or first < 0 or first + n > len(self.submit):
            raise ValueError(f"window [{first}, {first + n}) does not fit the trace or the capacity {self.cap}")
        if not (0 <= head <= BK_LARGEST and 0 <= order <= BK_LARGEST):
            raise ValueError("order codes are 0..4")
        with nogil:
            self.reset_state(first, n, True)
            while True:
                while self.nq == 0:
                    if not self.jump():
                        self.over = True
                        break
                if self.over:
                    break
                self.sort_by(self.q, self.nq, head)
                h = self.q[0]
                if not self.fits(h):
                    self.set_shadow(h)
                    while not self.fits(h):
                        self.classic(h, order)
                        self.jump()
                        if not self.compat and not self.fits(h):
                            self.set_shadow(h)
                self.start_job(h)
                if self.nq:
                    continue
                if not self.jump():
                    self.over = True
                    break
        self.check()
        return self.value()

    # ------------------------------------------------------------------ results
    cdef check(self):
        if self.broken == 1:
            raise MemoryError("the episode's scheduler core ran out of memory")
        if self.broken:
            raise InternalError("the episode and its scheduler core disagree on the free nodes")

    def value(self):
        """Mean bounded slowdown over the window's jobs (a job not started counts its wait so far)."""
        cdef int64_t i, j, st
        cdef double s = 0.0, r
        if self.last <= self.first:
            return 0.0
        for i in range(self.last - self.first):
            j = self.first + i
            st = self.start[i] if self.start[i] >= 0 else self.t
            r = <double>self.run[j]
            s += max(1.0, <double>(st - self.submit[j] + self.run[j]) / max(r, 10.0))
        return s / <double>(self.last - self.first)

    def starts(self):
        """Start time of each job of the window (-1: not started)."""
        out = np.empty(self.last - self.first, dtype=np.int64)
        cdef int64_t[::1] o = out
        for i in range(self.last - self.first):
            o[i] = self.start[i]
        return out

    def job_at(self, int64_t row):
        """The job (trace index) in row ``row`` of the last observation (-1: the stop row)."""
        if not 0 <= row < self.nvis + (1 if self.stop and not self.over else 0) or row >= MAX_ROWS:
            raise IndexError(f"row {row} of {self.nvis} shown")
        return self.vis[row]

    def visible(self):
        """Job index per row of the last observation (-1: the stop row)."""
        return np.array([self.vis[r] for r in range(self.nvis + (1 if self.stop and not self.over else 0))],
                        dtype=np.int64)

    @property
    def done(self):
        return self.over

    @property
    def now(self):
        return self.t

    @property
    def head_job(self):
        return self.head

    @property
    def decisions_made(self):
        return self.decisions


def bf_step_many(list sims, const int64_t[::1] rows, float[:, ::1] obs, int8_t[:, ::1] masks, int8_t[::1] done):
    """Step every backfilling sim by its row (one call for a batch of windows)."""
    cdef BackfillSim s
    cdef Py_ssize_t i
    for i in range(len(sims)):
        s = <BackfillSim>sims[i]
        s.step_row(rows[i], &obs[i, 0], &masks[i, 0])
        s.check()
        done[i] = s.over


def run_backfill_policy(BackfillSim sim, Kernel kernel):
    """Run the (freshly reset) window of ``sim``, starting at every choice the candidate of highest
    score (ties: the first row); returns the mean bounded slowdown."""
    cdef float obs[MAX_ROWS * BF_NF]
    cdef int8_t mask[MAX_ROWS]
    cdef float sc[MAX_ROWS]
    cdef int64_t r, best
    if kernel.nf != BF_NF:
        raise ValueError(f"a backfilling kernel has {BF_NF} inputs, this one {kernel.nf}")
    with nogil:
        sim.observe_into(obs, mask)
        while not sim.over:
            kernel.score_rows(obs, sim.nvis + sim.stop, sc)
            best = 0
            for r in range(1, sim.nvis + sim.stop):
                if sc[r] > sc[best]:
                    best = r
            sim.step_row(best, obs, mask)
    sim.check()
    return sim.value()
