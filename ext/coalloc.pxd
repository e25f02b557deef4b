# Co-allocation (header only; docs/coalloc.md): a running *primary* job lends a fraction a of its
# cores; after each pass, queued jobs start in priority order as *secondary* jobs on lent cores (they
# hold no units in the node state and never a reservation). Every job progresses at a rate: on node
# k, demand D_k = sum over its units of the CPU use of the primary and the secondary on it, and
# q_k = min(1, cores_k / D_k) / (1 + beta x secondary units on k); a job runs at the slowest rate of
# its nodes. When a rate changes, the job's work left is brought up to date and its completion moved
# (rounded up to the second). With a = 0 nothing is ever lent, every rate stays 1 and the replay is
# the plain one. The fraction comes from a policy: fixed, ASA_X's Algorithm 1, Hedge or EXP3.

from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t
from libc.stdlib cimport malloc, free
from libc.math cimport exp, log, sqrt, ceil, floor

from memory cimport INF, grow
from costate cimport CoAlloc, CA_ACTIONS, CA_DTS, CA_EXPERTS
from queue cimport queue_compact
from lifecycle cimport job_finish, heap_push
from lifecycle cimport user_started, user_finished
from qos_limits cimport ql_submitted
from state cimport State
from pbf._codes cimport JS_RUNNING, JS_DONE, HOW_COALLOC, CA_FIXED, CA_ASAX, CA_HEDGE, CA_EXP3
from pbf._codes cimport RC_OK, RC_NO_MEMORY, prio_time_dependent

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


# ---- small pieces

cdef inline double co_rand(CoAlloc* C) noexcept nogil:
    # xorshift64*: a uniform double in [0, 1)
    C.rng ^= C.rng >> 12
    C.rng ^= C.rng << 25
    C.rng ^= C.rng >> 27
    return <double>((C.rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0


cdef inline void co_settle(State* S, int64_t j, int64_t t) noexcept nogil:
    # bring job j's work left up to t at its current rate
    cdef CoAlloc* C = &S.co
    cdef double w = C.rate[j] * <double>(t - C.t_upd[j])
    if not C.dynamics or t <= C.t_upd[j]:
        # (an earlier time: the slurm-sim clock applies an end at the iteration after it, when
        # jobs on its nodes may already be settled further)
        return
    if w > C.work[j]:
        w = C.work[j]
    C.work[j] -= w
    C.done_work[j] += w
    C.t_upd[j] = t


cdef inline double co_node_rate(State* S, int64_t k) noexcept nogil:
    cdef CoAlloc* C = &S.co
    cdef int64_t u, first = C.node_first[k], last = first + C.node_cap[k]
    cdef double d = 0.0, q
    for u in range(first, last):
        if C.prim[u] >= 0:
            d += C.u[C.prim[u]]
        if C.sec[u] >= 0:
            d += C.u[C.sec[u]]
    q = 1.0 if d <= C.node_cap[k] else C.node_cap[k] / d
    return q / (1.0 + C.beta * C.node_nsec[k])


cdef inline double co_job_rate(State* S, int64_t j) noexcept nogil:
    # the slowest rate of its nodes
    cdef CoAlloc* C = &S.co
    cdef double r = 1.0
    cdef int64_t w, i, W = S.W, u
    cdef uint64_t x
    cdef const uint64_t* row
    if C.sec_units[j] != NULL:
        for i in range(S.jobs.units[j]):
            if C.node_q[C.node_of[C.sec_units[j][i]]] < r:
                r = C.node_q[C.node_of[C.sec_units[j][i]]]
        return r
    row = S.nodes.rows + <int64_t>S.jobs.row[j] * W
    for w in range(W):
        x = row[w]
        while x:
            u = w * 64 + __builtin_ctzll(x)
            x &= x - 1
            if C.node_q[C.node_of[u]] < r:
                r = C.node_q[C.node_of[u]]
    return r


cdef inline int co_reschedule(State* S, int64_t j, int64_t t) noexcept nogil:
    # move job j's completion to where its work left at its rate takes it (the heap keeps stale
    # entries: the loop skips an entry that is not the job's end)
    cdef CoAlloc* C = &S.co
    cdef int64_t e
    if C.work[j] <= 1e-9:
        e = t
    else:
        e = t + <int64_t>ceil(C.work[j] / C.rate[j] - 1e-7)
    if e != S.jobs.end[j]:
        S.jobs.end[j] = e
        if heap_push(S, e, j) != RC_OK:
            return RC_NO_MEMORY
    return RC_OK


# ---- an update of the nodes of some units: settle the jobs there, change, recompute

cdef inline int co_note_job(State* S, int64_t j, int64_t t) noexcept nogil:
    # job j (-1: none) is on a touched node: settled once an update, listed for its new rate
    cdef CoAlloc* C = &S.co
    if j < 0 or C.stamp[j] == C.stamp_now:
        return RC_OK
    C.stamp[j] = C.stamp_now
    co_settle(S, j, t)
    if grow(<void**>&C.aff_jobs, &C.aff_jobs_cap, C.naff_jobs + 1, sizeof(int32_t)) != RC_OK:
        return RC_NO_MEMORY
    C.aff_jobs[C.naff_jobs] = <int32_t>j
    C.naff_jobs += 1
    return RC_OK


cdef inline int co_touch_unit(State* S, int64_t u, int64_t t) noexcept nogil:
    # before a change on unit u: settle the jobs on u's node (once an update) and note the node
    cdef CoAlloc* C = &S.co
    cdef int64_t k = C.node_of[u], v, first, last
    if C.node_stamp[k] == C.stamp_now:
        return RC_OK
    C.node_stamp[k] = C.stamp_now
    if grow(<void**>&C.aff_nodes, &C.aff_nodes_cap, C.naff_nodes + 1, sizeof(int32_t)) != RC_OK:
        return RC_NO_MEMORY
    C.aff_nodes[C.naff_nodes] = <int32_t>k
    C.naff_nodes += 1
    first = C.node_first[k]
    last = first + C.node_cap[k]
    for v in range(first, last):
        if co_note_job(S, C.prim[v], t) != RC_OK or co_note_job(S, C.sec[v], t) != RC_OK:
            return RC_NO_MEMORY
    return RC_OK


cdef inline double co_used(CoAlloc* C, int64_t j, int64_t skip) noexcept nogil:
    # the CPU job j (-1: none) uses at its rate; -1: a rate outside (0, 1]
    if j < 0 or j == skip:
        return 0.0
    if not (0.0 < C.rate[j] <= 1.0):
        return -1.0
    return C.u[j] * C.rate[j]


cdef inline void co_check(State* S, int64_t skip) noexcept nogil:
    # every touched node: rates in (0, 1], and the CPU its jobs use at their rates within its cores
    cdef CoAlloc* C = &S.co
    cdef int64_t i, k, v
    cdef double used, a, b
    for i in range(C.naff_nodes):
        k = C.aff_nodes[i]
        if not (0.0 < C.node_q[k] <= 1.0):
            C.violations += 1
        used = 0.0
        for v in range(C.node_first[k], C.node_first[k] + C.node_cap[k]):
            a = co_used(C, C.prim[v], skip)
            b = co_used(C, C.sec[v], skip)
            if a < 0 or b < 0:
                C.violations += 1
            used += (a if a > 0 else 0.0) + (b if b > 0 else 0.0)
        if used > C.node_cap[k] * (1.0 + 1e-9):
            C.violations += 1


cdef inline void co_begin(State* S) noexcept nogil:
    S.co.stamp_now += 1
    S.co.naff_jobs = 0
    S.co.naff_nodes = 0


cdef inline int co_end(State* S, int64_t t, int64_t skip) noexcept nogil:
    # after the change: the touched nodes' rates, then the rates and completions of their jobs
    # (and of those now on them), except `skip` (a job that just ended)
    cdef CoAlloc* C = &S.co
    cdef int64_t i, j, k, v, first, last
    cdef double r
    if not C.dynamics:
        return RC_OK                              # (the host runs the jobs)
    for i in range(C.naff_nodes):
        k = C.aff_nodes[i]
        C.node_q[k] = co_node_rate(S, k)
        first = C.node_first[k]
        last = first + C.node_cap[k]
        for v in range(first, last):           # jobs that arrived on the node in the change
            if co_note_job(S, C.prim[v], t) != RC_OK or co_note_job(S, C.sec[v], t) != RC_OK:
                return RC_NO_MEMORY
    for i in range(C.naff_jobs):
        j = C.aff_jobs[i]
        if j == skip or S.jobs.state[j] != JS_RUNNING:
            continue
        r = co_job_rate(S, j)
        if r != C.rate[j]:
            C.rate[j] = r
            if co_reschedule(S, j, t) != RC_OK:
                return RC_NO_MEMORY
    if C.check:
        co_check(S, skip)
    return RC_OK



# ---- the lenders

cdef inline int64_t co_offer(CoAlloc* C, int64_t p) noexcept nogil:
    return C.lend[p] - C.lent[p] if C.lend[p] > C.lent[p] else 0


cdef inline int co_set_offer(State* S, int64_t p, int64_t lend, int64_t lent) noexcept nogil:
    # primary p lends `lend` cores, `lent` of them hosting a secondary: the offer, the lenders
    cdef CoAlloc* C = &S.co
    cdef int64_t before = co_offer(C, p)
    C.lend[p] = <int32_t>lend
    C.lent[p] = <int32_t>lent
    C.avail += co_offer(C, p) - before
    if co_offer(C, p) > before:
        C.changes += 1
    if co_offer(C, p) > 0 and before == 0:
        if grow(<void**>&C.lenders, &C.lenders_cap, C.nlenders + 1, sizeof(int32_t)) != RC_OK:
            return RC_NO_MEMORY
        C.lenders[C.nlenders] = <int32_t>p
        C.nlenders += 1
    return RC_OK


cdef inline int co_set_lend(State* S, int64_t p, int64_t lend) noexcept nogil:
    return co_set_offer(S, p, lend, S.co.lent[p])


cdef inline void co_drop_lenders(CoAlloc* C) noexcept nogil:
    # keep only the primaries that still offer cores (in order)
    cdef int64_t i, n = 0
    for i in range(C.nlenders):
        if C.lend[C.lenders[i]] > C.lent[C.lenders[i]]:
            C.lenders[n] = C.lenders[i]
            n += 1
    C.nlenders = n


# ---- the policies

cdef inline void co_features(State* S, int64_t p, int64_t t, int8_t* leaf) noexcept nogil:
    # the leaf of each tree: CPU use (<.25, <.5, <.75, more), job class (serial, 2-16 units,
    # wider), time of day (6 h buckets of the trace clock), happiness (rate >= .95, >= .8, less)
    cdef CoAlloc* C = &S.co
    cdef double cpu = C.u[p], h = C.rate[p]
    leaf[0] = 0 if cpu < 0.25 else (1 if cpu < 0.5 else (2 if cpu < 0.75 else 3))
    leaf[1] = 0 if S.jobs.units[p] == 1 else (1 if S.jobs.units[p] <= 16 else 2)
    leaf[2] = <int8_t>(((t // 3600) % 24 + 24) % 24 // 6)
    leaf[3] = 0 if h >= 0.95 else (1 if h >= 0.8 else 2)


cdef inline int co_expert_action(int64_t e, int8_t cpu_leaf) noexcept nogil:
    # Hedge / EXP3 experts: e < 10 lends e x 10 % always; then "lend k x 10 % if CPU use < theta,
    # else nothing" for theta in .25, .5, .75 and k in 3, 5, 7, 9
    cdef int64_t i
    if e < CA_ACTIONS:
        return <int>e
    i = e - CA_ACTIONS
    return <int>(3 + 2 * (i % 4)) if cpu_leaf < 1 + i // 4 else 0


cdef inline void co_leaf_probs(CoAlloc* C, int64_t i, int64_t leaf, double* out) noexcept nogil:
    # tree i's action probabilities at a leaf: exponential weights over the actions' cumulative
    # losses there (learning rate sqrt(8 ln m / n))
    cdef int64_t a
    cdef double eta = sqrt(8.0 * log(<double>CA_ACTIONS) / (C.leaf_n[i][leaf] if C.leaf_n[i][leaf] > 0 else 1))
    cdef double lo = C.leaf_loss[i][leaf][0], z = 0.0
    for a in range(CA_ACTIONS):
        if C.leaf_loss[i][leaf][a] < lo:
            lo = C.leaf_loss[i][leaf][a]
    for a in range(CA_ACTIONS):
        out[a] = exp(-eta * (C.leaf_loss[i][leaf][a] - lo))
        z += out[a]
    for a in range(CA_ACTIONS):
        out[a] /= z


cdef inline void co_expert_probs(CoAlloc* C, double* out, bint explore) noexcept nogil:
    cdef int64_t e
    cdef double hi = C.logw[0], z = 0.0
    for e in range(CA_EXPERTS):
        if C.logw[e] > hi:
            hi = C.logw[e]
    for e in range(CA_EXPERTS):
        out[e] = exp(C.logw[e] - hi)
        z += out[e]
    for e in range(CA_EXPERTS):
        out[e] /= z
        if explore:                       # EXP3's uniform mix
            out[e] = 0.9 * out[e] + 0.1 / CA_EXPERTS


cdef inline int64_t co_sample(CoAlloc* C, const double* p, int64_t n) noexcept nogil:
    cdef double x = co_rand(C), acc = 0.0
    cdef int64_t i
    for i in range(n):
        acc += p[i]
        if x < acc:
            return i
    return n - 1


cdef inline int co_decide(State* S, int64_t p, int64_t t) noexcept nogil:
    # choose the fraction primary p lends from now on
    cdef CoAlloc* C = &S.co
    cdef int64_t a = 0, i, e, k, lend
    cdef double probs[CA_EXPERTS]
    cdef double agg[CA_ACTIONS]
    cdef double trees[CA_DTS][CA_ACTIONS]
    cdef int8_t* leaf = C.dec_leaf + p * CA_DTS
    co_features(S, p, t, leaf)
    C.dec_e[p] = -1
    C.dec_p[p] = 1.0
    if C.policy == CA_FIXED:
        a = <int64_t>floor(C.fixed * CA_ACTIONS + 1e-9)
    elif C.policy == CA_ASAX:
        for k in range(CA_ACTIONS):
            agg[k] = 0.0
        for i in range(CA_DTS):
            co_leaf_probs(C, i, leaf[i], trees[i])
            for k in range(CA_ACTIONS):
                agg[k] += C.alpha[i] * trees[i][k]
        a = co_sample(C, agg, CA_ACTIONS)
        C.dec_p[p] = agg[a]
        for i in range(CA_DTS):
            C.dec_pi[p * CA_DTS + i] = trees[i][a]
    else:
        co_expert_probs(C, probs, C.policy == CA_EXP3)
        e = co_sample(C, probs, CA_EXPERTS)
        a = co_expert_action(e, leaf[0])
        C.dec_e[p] = <int16_t>e
        C.dec_p[p] = 0.0
        for i in range(CA_EXPERTS):            # the probability of the action played
            if co_expert_action(i, leaf[0]) == a:
                C.dec_p[p] += probs[i]
    C.dec_a[p] = <int8_t>a
    C.dec_t0[p] = t
    C.dec_w0[p] = C.work[p]
    C.act_count[a] += 1
    if C.policy == CA_FIXED:
        lend = <int64_t>floor(C.fixed * S.jobs.units[p] + 1e-9)
    else:
        lend = (a * S.jobs.units[p]) // CA_ACTIONS
    if lend < C.lent[p]:
        lend = C.lent[p]                      # (secondaries already there stay)
    return co_set_lend(S, p, lend)


cdef inline double co_loss(CoAlloc* C, double a_eff, double h) noexcept nogil:
    # in [-1, 1]: lam x the slowdown beyond tau (1/h - 1 - tau, over dmax - 1, clipped) minus
    # (1 - lam) x the share of the primary's cores doing secondary work
    cdef double slow = (1.0 / h - 1.0 - C.tau) / (C.dmax - 1.0)
    cdef double gain = a_eff * C.fill_lent / C.fill_lend * (C.sec_u_sum / C.sec_started if C.sec_started else 0.5)
    if slow < 0.0:
        slow = 0.0
    if slow > 1.0:
        slow = 1.0
    if gain > 1.0:
        gain = 1.0
    return C.lam * slow - (1.0 - C.lam) * gain


cdef inline double co_model_rate(CoAlloc* C, double a_eff, double cpu) noexcept nogil:
    # the rate the load model gives a primary lending a_eff of its cores (filled as observed)
    cdef double ubar = C.sec_u_sum / C.sec_started if C.sec_started else 0.5
    cdef double d = cpu + a_eff * C.fill_lent / C.fill_lend * ubar
    cdef double q = 1.0 if d <= 1.0 else 1.0 / d
    return q / (1.0 + C.beta * (1.0 if a_eff > 0 else 0.0))


cdef inline void co_feedback(State* S, int64_t p, int64_t t) noexcept nogil:
    # the loss of the decision in force on p, observed over [dec_t0, t], and the counterfactual
    # losses of the other actions from the load model, calibrated to what was observed
    cdef CoAlloc* C = &S.co
    cdef int64_t a = C.dec_a[p], k, i, e, n = S.jobs.units[p]
    cdef double h_obs, scale, l_played, lk, exp_loss, ae, est, g, mx
    cdef double probs[CA_EXPERTS]
    cdef double losses[CA_ACTIONS]
    cdef int8_t* leaf = C.dec_leaf + p * CA_DTS
    if a < 0:
        return
    C.dec_a[p] = -1
    if t <= C.dec_t0[p]:
        return                                # (no time passed: nothing observed)
    if C.dynamics:
        h_obs = (C.dec_w0[p] - C.work[p]) / <double>(t - C.dec_t0[p])
    else:
        h_obs = C.h_given
    if h_obs > 1.0:
        h_obs = 1.0
    if h_obs < 1e-6:
        h_obs = 1e-6
    if C.lend[p] > 0:
        C.fill_lent += C.lent[p]
        C.fill_lend += C.lend[p]
    if C.policy == CA_FIXED:
        # (nothing learns: the played loss only, for the summary)
        C.loss_sum += co_loss(C, <double>((a * n) // CA_ACTIONS) / n, h_obs)
        C.decisions += 1
        return
    scale = h_obs / co_model_rate(C, <double>((a * n) // CA_ACTIONS) / n, C.u[p])
    for k in range(CA_ACTIONS):
        ae = <double>((k * n) // CA_ACTIONS) / n
        if k == a:
            losses[k] = co_loss(C, ae, h_obs)
        else:
            est = co_model_rate(C, ae, C.u[p]) * scale
            losses[k] = co_loss(C, ae, est if est < 1.0 else 1.0)
    l_played = losses[a]
    C.loss_sum += l_played
    C.decisions += 1
    if C.policy == CA_ASAX:
        for i in range(CA_DTS):
            C.risk[i] += C.dec_pi[p * CA_DTS + i] * l_played      # (the tree's p_i(a) when it was played)
            for k in range(CA_ACTIONS):
                C.leaf_loss[i][leaf[i]][k] += (losses[k] + 1.0) / 2.0
            C.leaf_n[i][leaf[i]] += 1
        mx = C.risk[0]
        for i in range(CA_DTS):
            if C.risk[i] > mx:
                mx = C.risk[i]
        if mx > 1.0:
            # the risk bound is hit: the trees' weights move by exp(-gamma_t r), and the risk restarts
            C.rounds += 1
            g = sqrt(8.0 * log(<double>CA_DTS) / C.rounds)
            lk = 0.0
            for i in range(CA_DTS):
                C.alpha[i] *= exp(-g * C.risk[i])
                lk += C.alpha[i]
            for i in range(CA_DTS):
                C.alpha[i] /= lk
                C.risk[i] = 0.0
    elif C.policy == CA_HEDGE:
        co_expert_probs(C, probs, False)
        exp_loss = 0.0
        g = sqrt(8.0 * log(<double>CA_EXPERTS) / C.decisions)
        for e in range(CA_EXPERTS):
            lk = (losses[co_expert_action(e, leaf[0])] + 1.0) / 2.0
            exp_loss += probs[e] * lk
            C.cum_loss[e] += lk
            C.logw[e] -= g * lk
        C.cum_expected += exp_loss
    elif C.policy == CA_EXP3:
        # only the played action's loss, importance-weighted over the experts that chose it
        lk = (l_played + 1.0) / 2.0 / (C.dec_p[p] if C.dec_p[p] > 1e-12 else 1e-12)
        for e in range(CA_EXPERTS):
            C.cum_loss[e] += (losses[co_expert_action(e, leaf[0])] + 1.0) / 2.0     # (for the regret only)
            if co_expert_action(e, leaf[0]) == a:
                C.logw[e] -= 0.1 * lk / CA_ACTIONS
        C.cum_expected += (l_played + 1.0) / 2.0


# ---- jobs starting and ending

cdef inline int co_primary_units(State* S, int64_t j, int64_t t, int64_t owner, int64_t skip) noexcept nogil:
    # primary j's units now belong to `owner` (j when it starts; -1 when it ends, its secondaries
    # staying, no longer counted against it); the nodes it shares with secondary jobs are updated
    # (`skip`: a job that ends)
    cdef CoAlloc* C = &S.co
    cdef int64_t w, u, W = S.W
    cdef uint64_t x
    cdef const uint64_t* row = S.nodes.rows + <int64_t>S.jobs.row[j] * W
    cdef bint shared = False
    co_begin(S)
    for w in range(W):
        x = row[w]
        while x:
            u = w * 64 + __builtin_ctzll(x)
            x &= x - 1
            if C.node_nsec[C.node_of[u]] > 0:
                shared = True
                if co_touch_unit(S, u, t) != RC_OK:
                    return RC_NO_MEMORY
            C.prim[u] = <int32_t>owner
            if owner < 0 and C.lent_by[u] == j:
                C.lent_by[u] = -1
    if shared:
        return co_end(S, t, skip)
    return RC_OK


cdef inline int co_primary_start(State* S, int64_t j, int64_t t) noexcept nogil:
    cdef CoAlloc* C = &S.co
    C.work[j] = <double>S.jobs.run[j]
    C.done_work[j] = 0.0
    C.rate[j] = 1.0
    C.t_upd[j] = t
    C.lend[j] = 0
    C.lent[j] = 0
    # (the primary itself is on the touched nodes: co_end finds it there)
    if co_primary_units(S, j, t, j, -1) != RC_OK:
        return RC_NO_MEMORY
    return co_decide(S, j, t)


cdef inline int co_primary_finish(State* S, int64_t j, int64_t t) noexcept nogil:
    cdef CoAlloc* C = &S.co
    co_settle(S, j, t)
    co_feedback(S, j, t)
    C.avail -= co_offer(C, j)
    C.lend[j] = 0
    C.lent[j] = 0                             # (it leaves the lenders at the next drop)
    if co_primary_units(S, j, t, -1, j) != RC_OK:
        return RC_NO_MEMORY
    co_drop_lenders(C)
    if t - S.jobs.start[j] > S.jobs.req[j]:
        C.overruns += 1
    return RC_OK


cdef inline int co_secondary_start(State* S, int64_t j, int64_t t, const int32_t* units) noexcept nogil:
    cdef CoAlloc* C = &S.co
    cdef int64_t i, u, p, k = S.jobs.units[j]
    C.sec_units[j] = <int32_t*>malloc(k * sizeof(int32_t))
    if C.sec_units[j] == NULL:
        return RC_NO_MEMORY
    S.jobs.state[j] = JS_RUNNING
    S.jobs.start[j] = t
    S.jobs.resv[j] = -1
    S.jobs.how[j] = HOW_COALLOC
    S.jobs.end[j] = -1
    user_started(S, j, t)
    C.work[j] = <double>S.jobs.run[j]
    C.done_work[j] = 0.0
    C.rate[j] = 1.0
    C.t_upd[j] = t
    C.sec_u_sum += C.u[j]
    C.sec_started += 1
    co_begin(S)
    for i in range(k):
        u = units[i]
        C.sec_units[j][i] = <int32_t>u
        if co_touch_unit(S, u, t) != RC_OK:
            return RC_NO_MEMORY
    for i in range(k):
        u = units[i]
        p = C.prim[u]
        C.sec[u] = <int32_t>j
        C.lent_by[u] = <int32_t>p
        C.node_nsec[C.node_of[u]] += 1
        if p >= 0 and co_set_offer(S, p, C.lend[p], C.lent[p] + 1) != RC_OK:
            return RC_NO_MEMORY
    co_drop_lenders(C)
    if co_end(S, t, -1) != RC_OK:
        return RC_NO_MEMORY
    if S.jobs.end[j] < 0 and C.dynamics:
        return co_reschedule(S, j, t)
    return RC_OK


cdef inline int co_secondary_leave(State* S, int64_t j, int64_t t) noexcept nogil:
    # secondary job j leaves its lent cores at t (it ends, or a failure stops it)
    cdef CoAlloc* C = &S.co
    cdef int64_t i, u, p, k = S.jobs.units[j]
    co_begin(S)
    for i in range(k):
        if co_touch_unit(S, C.sec_units[j][i], t) != RC_OK:
            return RC_NO_MEMORY
    for i in range(k):
        u = C.sec_units[j][i]
        p = C.lent_by[u]
        C.sec[u] = -1
        C.lent_by[u] = -1
        C.node_nsec[C.node_of[u]] -= 1
        if p >= 0 and co_set_offer(S, p, C.lend[p], C.lent[p] - 1) != RC_OK:   # (back among the lenders)
            return RC_NO_MEMORY
    if co_end(S, t, j) != RC_OK:
        return RC_NO_MEMORY
    C.changes += 1                            # (cores an orphan held are free again)
    return RC_OK


cdef inline int co_secondary_finish(State* S, int64_t j, int64_t t) noexcept nogil:
    if co_secondary_leave(S, j, t) != RC_OK:
        return RC_NO_MEMORY
    S.jobs.state[j] = JS_DONE
    if S.qos_lim.on:
        ql_submitted(&S.qos_lim, j, S.jobs.user[j], -1)
    S.jobs.end[j] = t
    if t - S.jobs.start[j] > S.jobs.req[j]:
        S.co.overruns += 1
    user_finished(S, j, t)
    return RC_OK


cdef inline int co_stop(State* S, int64_t j, int64_t t) noexcept nogil:
    # running job j is stopped by a failure of its units at t: its co-allocation state ends (a
    # secondary leaves its lent cores; a primary's secondaries stay as orphans, as at its end); the
    # caller requeues or kills it (outages.pxd)
    cdef CoAlloc* C = &S.co
    if S.jobs.how[j] == HOW_COALLOC:
        if co_secondary_leave(S, j, t) != RC_OK:
            return RC_NO_MEMORY
        free(C.sec_units[j])
        C.sec_units[j] = NULL                 # (requeued, it may start again as a primary)
        return RC_OK
    co_settle(S, j, t)
    C.avail -= co_offer(C, j)
    C.lend[j] = 0
    C.lent[j] = 0
    if co_primary_units(S, j, t, -1, j) != RC_OK:
        return RC_NO_MEMORY
    co_drop_lenders(C)
    return RC_OK


cdef inline int co_job_ended(State* S, int64_t j, int64_t t) noexcept nogil:
    # the replay's completion of job j at t (its end)
    cdef int rc = 0
    if S.jobs.how[j] == HOW_COALLOC:
        return co_secondary_finish(S, j, t)
    rc = co_primary_finish(S, j, t)
    job_finish(S, j, t)
    return rc


# ---- the co-allocation pass (after each pass) and the decision rounds (a timer of the replay's loop)

cdef inline int co_pass(State* S, int64_t t) noexcept nogil:
    # queued jobs in priority order start on lent cores while some are offered: the offered cores,
    # listed once a pass (lenders in start order, each one's lowest free units up to its offer), go
    # to the jobs in that order
    cdef CoAlloc* C = &S.co
    cdef int64_t q, j, k, n = 0, used = 0, i, p, w, u, take, W = S.W, tested = 0, started = 0
    cdef uint64_t x
    cdef const uint64_t* row
    if C.avail <= 0 or S.queue.n == 0:
        return RC_OK
    if C.idle and C.changes == C.changes_seen and not (S.cfg.max_job_test >= 0 and prio_time_dependent(S.policy.prio)):
        return RC_OK                              # nothing started last time and nothing changed since
    C.changes_seen = C.changes
    C.idle = True
    for q in range(S.queue.n):
        if used >= n and n > 0:
            break                             # every offered core is taken
        if S.cfg.max_job_test >= 0 and tested >= S.cfg.max_job_test:
            break
        tested += 1
        k = S.queue.entries[q].units
        if k > C.avail:
            continue
        if n == 0:
            for i in range(C.nlenders):
                p = C.lenders[i]
                take = co_offer(C, p)
                row = S.nodes.rows + <int64_t>S.jobs.row[p] * W
                w = 0
                while take > 0 and w < W:
                    x = row[w]
                    while x and take > 0:
                        u = w * 64 + __builtin_ctzll(x)
                        x &= x - 1
                        if C.sec[u] < 0 and not (S.nodes.down[w] >> (u & 63)) & 1:
                            C.pick[n] = <int32_t>u
                            n += 1
                            take -= 1
                    w += 1
            if n == 0:
                return RC_OK
        if k > n - used:
            continue
        j = S.queue.entries[q].job
        S.queue.entries[q].job = -1
        if co_secondary_start(S, j, t, C.pick + used) != RC_OK:
            return RC_NO_MEMORY
        used += k
        started += 1
        C.idle = False
    if started:
        queue_compact(&S.queue, &S.jobs, 0)
        S.resume_st.valid = False
    return RC_OK


cdef inline int co_after_pass(State* S, int64_t t) noexcept nogil:
    # the primaries the pass started (each at its start: under the slurm-sim clock a job starts
    # when the cycle reaches it), then the co-allocation pass at t
    cdef int64_t i, j
    for i in range(S.decided.nstarted):
        j = S.decided.started[i]
        if co_primary_start(S, j, S.jobs.start[j]) != RC_OK:
            return RC_NO_MEMORY
    S.decided.nstarted = 0
    return co_pass(S, t)


cdef inline int co_tick(State* S, int64_t t) noexcept nogil:
    # a decision round: every running primary's decision is fed back and taken again
    cdef int64_t i, j
    for i in range(S.nodes.nrun):
        j = S.nodes.running[i]
        co_settle(S, j, t)
        co_feedback(S, j, t)
        if co_decide(S, j, t) != RC_OK:
            return RC_NO_MEMORY
    co_drop_lenders(&S.co)
    return RC_OK
