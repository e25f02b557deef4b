# The scoring policies (DESIGN §6) as functions of the job table and the users (header only):
# priority keys, Slurm's multifactor with fair-share usage, the run-time predictors computed at
# submission, and the corrections of estimates. The Python twins (the oracle's formulas) are in
# pbf/plugins/; every floating-point operation happens in the same order there.

from libc.stdint cimport int64_t
from libc.stdlib cimport free
from libc.math cimport log10, log2, floor, pow, sqrt, cos, sin, M_PI

from memory cimport INF, grow
from jobs cimport Jobs, Users, UserHist
from nodes cimport Nodes
from regression cimport Reg, REG_NF, reg_predict, reg_fit, reg_weight
from fair_tree cimport FairTree, ft_compute, ft_free
from pbf._codes cimport (PR_FCFS, PR_SJF, PR_SMALLEST, PR_F1, PR_F2, PR_F3, PR_F4, PR_WFP3, PR_UNICEP,
                         PR_MULTIFACTOR, PR_KEYED, PD_GIVEN, PD_AVE2, PD_REGRESSION, CR_REQUESTED, CR_DOUBLING)
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    # Tsafrir et al.'s increments (0, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h,
    # 100 h); pbf/plugins/corrections.py reads them from pbf._core.INCREMENTS
    """
    static const int64_t PBF_INCREMENTS[12] = {0, 60, 300, 900, 1800, 3600, 7200, 18000, 36000, 72000, 180000, 360000};
    """
    const int64_t* INCREMENTS "PBF_INCREMENTS"


ctypedef struct Policy:
    int prio                   # the priority function (PR_*): the queue runs in ascending key order
    int64_t prio_period        # time-dependent keys are recomputed at most this often (0: every pass)
    int64_t next_prio          # ... next at or after this time
    bint keys_dirty            # PR_KEYED: Python set new keys since the queue was last sorted
    int predictor              # PD_*
    int correction             # CR_*
    int64_t n_corrections      # corrections applied so far
    double w_age               # multifactor weights: PriorityWeightAge ...
    double w_fs                # ... FairShare ...
    double w_js                # ... JobSize ...
    double w_part              # ... Partition ...
    double w_qos               # ... and QOS
    int64_t max_age            # PriorityMaxAge (s)
    int64_t half_life          # PriorityDecayHalfLife (s)
    bint favor_small           # PriorityFavorSmall
    bint js_relative           # PriorityFlags=SMALL_RELATIVE_TO_TIME: job size over its time limit
    int64_t js_nodes           # the job-size factor's cluster nodes and CPUs: Slurm counts every node
    int64_t js_cpus            # of slurm.conf (0: the replayed cluster's)
    double fs_damp             # FairShareDampeningFactor (classic fair share)
    Reg* reg                   # the regression model (PD_REGRESSION), or NULL
    FairTree* ft               # multifactor: Fair Tree over this association tree, or NULL (classic)


cdef inline double policy_job_size(const Policy* pol, const Jobs* J, int64_t units, int64_t nodes,
                                   const int64_t* minn, int64_t j) noexcept nogil:
    # Slurm's job-size factor in [0, 1] (priority_multifactor.c, set_priority_factors; the same in
    # 20.11, 22.05 and 23.11): (min nodes / N + CPUs / C) / 2, favor_small ((N - min nodes) / N +
    # (C - CPUs) / C) / 2, SMALL_RELATIVE_TO_TIME max(min nodes x C / N, CPUs) / time limit (min) / C
    # (favor_small: 1 minus that). N and C: the cluster's nodes and CPUs (nodes = 0: a cluster of
    # units, each a node of one CPU, and the job's min nodes are its units). Python twin:
    # pbf.plugins.multifactor.job_size_factor, the same operations in the same order.
    cdef int64_t cpus = J.units[j], mn = cpus, n_all = units, c_all = units, limit
    cdef double js
    if nodes > 0:
        mn = minn[j]
        n_all = nodes
    if pol.js_nodes > 0:
        n_all = pol.js_nodes
    if pol.js_cpus > 0:
        c_all = pol.js_cpus
    if pol.js_relative:
        js = <double>mn * <double>c_all / <double>n_all
        if <double>cpus > js:
            js = <double>cpus
        limit = (J.req[j] + 59) // 60      # Slurm keeps time limits in whole minutes, rounded up
        if limit <= 0:
            return 0.0 if pol.favor_small else 1.0      # Slurm divides by 0: inf, clamped
        js /= <double>limit
        js /= <double>c_all
        if pol.favor_small:
            js = 1.0 - js
    elif pol.favor_small:
        js = <double>(n_all - mn) / <double>n_all
        if cpus != 0:
            js += <double>(c_all - cpus) / <double>c_all
            js /= 2.0
    else:
        js = <double>mn / <double>n_all
        if cpus != 0:
            js += <double>cpus / <double>c_all
            js /= 2.0
    if js < 0.0:
        return 0.0
    if js > 1.0:
        return 1.0
    return js


cdef inline double policy_age_fs(const Policy* pol, const Jobs* J, const Users* U, int64_t j, int64_t now,
                                 double* fs) noexcept nogil:
    # the multifactor age factor of job j at time now; its fair-share factor in fs
    cdef double age, total = U.total, usage_norm, shares_norm
    age = 1.0
    if pol.max_age > 0:
        age = <double>(now - J.submit[j]) / <double>pol.max_age
        if age > 1.0:
            age = 1.0
    if pol.ft != NULL:
        fs[0] = U.fsf[J.user[j]]
    else:
        usage_norm = U.usage[J.user[j]] / total if total > 0.0 else 0.0
        shares_norm = 1.0 / <double>(U.n if U.n > 0 else 1)
        fs[0] = pow(2.0, -((usage_norm / shares_norm) / pol.fs_damp))
    return age


cdef inline double policy_multifactor(const Policy* pol, const Jobs* J, const Users* U, int64_t units,
                                      int64_t nodes, const int64_t* minn, int64_t j, int64_t now) noexcept nogil:
    # Slurm's priority/multifactor: an integer, the weighted sum of factors in [0, 1]
    cdef double age, fs, js
    age = policy_age_fs(pol, J, U, j, now, &fs)
    js = policy_job_size(pol, J, units, nodes, minn, j)
    return floor(pol.w_age * age + pol.w_fs * fs + pol.w_js * js
                 + pol.w_part * J.part[j] + pol.w_qos * J.qos[j])


cdef inline double policy_multifactor_part(const Policy* pol, const Jobs* J, const Users* U, int64_t units,
                                           int64_t nodes, const int64_t* minn, int64_t j, int64_t now,
                                           double part) noexcept nogil:
    # the priority of job j in a partition of factor `part` (Slurm's priority_array, made by
    # _get_priority_internal in priority_multifactor.c: the partition's weighted factor plus the sum
    # of the job's other weighted factors, in that order)
    cdef double age, fs, js
    age = policy_age_fs(pol, J, U, j, now, &fs)
    js = policy_job_size(pol, J, units, nodes, minn, j)
    return floor(pol.w_part * part + (pol.w_age * age + pol.w_fs * fs + pol.w_js * js + pol.w_qos * J.qos[j]))


cdef inline double policy_key_nodes(const Policy* pol, const Jobs* J, const Users* U, int64_t units, int64_t nodes,
                                    const int64_t* minn, int64_t j, int64_t now) noexcept nogil:
    # the priority key of pending job j at time now (ascending: lowest runs first); the formulas
    # are RLScheduler's (reference §6.1) and Slurm's multifactor (§1.8). units: the cluster's;
    # nodes: its nodes and minn the jobs' min nodes (nodes = 0: a cluster of units)
    cdef double r = <double>J.est[j], n = <double>J.units[j]
    cdef double s = <double>J.submit[j], w = <double>(now - J.submit[j])
    cdef int pr = pol.prio
    if pr == PR_FCFS or pr == PR_KEYED:
        return J.key[j] if pr == PR_KEYED else 0.0
    if pr == PR_SJF:
        return r
    if pr == PR_SMALLEST:
        return n
    if s <= 0.0:
        s = 0.1
    if pr == PR_F1:
        return log10(r) * n + 870.0 * log10(s)
    if pr == PR_F2:
        return sqrt(r) * n + 25600.0 * log10(s)
    if pr == PR_F3:
        return r * n + 6860000.0 * log10(s)
    if pr == PR_F4:
        return r * sqrt(n) + 530000.0 * log10(s)
    if pr == PR_WFP3:
        return -pow(w / r, 3.0) * n
    if pr == PR_UNICEP:
        return -(w + 1e-15) / (log2(n + 1e-15) * r)
    return -policy_multifactor(pol, J, U, units, nodes, minn, j, now)


cdef inline double policy_key(const Policy* pol, const Jobs* J, const Users* U, int64_t units, int64_t j,
                              int64_t now) noexcept nogil:
    # the priority key of pending job j at time now on a cluster of units (policy_key_nodes)
    return policy_key_nodes(pol, J, U, units, 0, NULL, j, now)


cdef inline void policy_charge_usage(const Policy* pol, Jobs* J, Users* U, const Nodes* N, int64_t now) noexcept nogil:
    # multifactor fair share: decay every user's usage to now, then fold in what ran since
    cdef int64_t i, j, u
    cdef double decay = 1.0
    if U.last_calc > -INF and pol.half_life > 0 and now > U.last_calc:
        decay = pow(2.0, -<double>(now - U.last_calc) / <double>pol.half_life)
    for i in range(N.nrun):
        j = N.running[i]
        U.raw[J.user[j]] += J.units[j] * (now - J.acc[j])
        J.acc[j] = now
    U.total = 0.0
    for u in range(U.n):
        U.usage[u] = U.usage[u] * decay + <double>U.raw[u]
        U.raw[u] = 0
        U.total += U.usage[u]
    U.last_calc = now
    if pol.ft != NULL:
        ft_compute(pol.ft, U.usage, U.n, U.fsf)


cdef inline void policy_features(const Jobs* J, const Users* U, int64_t j, int64_t now, double* x) noexcept nogil:
    # Gaussier et al.'s Table 2, from the user's history at the job's submission
    cdef UserHist* h = &U.hist[J.user[j]]
    cdef double q = <double>J.units[j]
    cdef int64_t s = J.submit[j]
    cdef double a
    x[0] = <double>J.req[j]
    x[1] = <double>h.p1 if h.n_done >= 1 else 0.0
    x[2] = <double>h.p2 if h.n_done >= 2 else 0.0
    x[3] = <double>h.p3 if h.n_done >= 3 else 0.0
    if h.n_done >= 2:
        x[4] = (x[1] + x[2]) / 2.0
    else:
        x[4] = x[1]
    if h.n_done >= 3:
        x[5] = (x[1] + x[2] + x[3]) / 3.0
    else:
        x[5] = x[4]
    x[6] = <double>h.sum_run / <double>h.n_done if h.n_done > 0 else 0.0
    x[7] = q
    x[8] = <double>h.sum_units / <double>h.n_done if h.n_done > 0 else 0.0
    x[9] = q / x[8] if h.n_done > 0 else 0.0
    x[10] = <double>h.run_units / <double>h.n_run if h.n_run > 0 else 0.0
    x[11] = <double>h.n_run
    x[12] = <double>(now - J.start[h.first_run]) if h.n_run > 0 else 0.0
    x[13] = <double>(h.n_run * now - h.run_start_sum)
    x[14] = <double>h.run_units
    x[15] = <double>(now - h.last_end) if h.last_end >= 0 else 0.0
    a = 2.0 * M_PI * <double>(((s % 86400) + 86400) % 86400) / 86400.0
    x[16] = cos(a)
    x[17] = sin(a)
    a = 2.0 * M_PI * <double>(((s % 604800) + 604800) % 604800) / 604800.0
    x[18] = cos(a)
    x[19] = sin(a)


cdef inline int64_t policy_predict(Policy* pol, Jobs* J, const Users* U, int64_t j, int64_t now) noexcept nogil:
    # the estimate of job j at its submission, in [1, requested]; RC_NO_MEMORY: out of memory
    cdef int64_t req = J.req[j], e
    cdef UserHist* h = &U.hist[J.user[j]]
    if pol.predictor == PD_AVE2:
        # Tsafrir et al.: mean of the user's last two run times, once there are two
        if h.n_done < 2:
            return req
        e = (h.p1 + h.p2) // 2
        return 1 if e < 1 else (req if e > req else e)
    if grow(<void**>&J.x, &J.x_cap, (j + 1) * REG_NF, sizeof(double)) != RC_OK:
        return RC_NO_MEMORY
    policy_features(J, U, j, now, J.x + j * REG_NF)
    return reg_predict(pol.reg, J.x + j * REG_NF, req)


cdef inline void policy_learn(Policy* pol, const Jobs* J, int64_t j, int64_t run) noexcept nogil:
    # the regression model's training step at a job's completion
    cdef double p
    if pol.predictor == PD_REGRESSION and J.pred0[j] >= 0:
        p = <double>(run if run > 1 else 1)
        reg_fit(pol.reg, J.x + j * REG_NF, <double>run, reg_weight(pol.reg.weight, <double>J.units[j], p))


cdef inline int64_t policy_correct(Policy* pol, Jobs* J, int64_t j, int64_t now) noexcept nogil:
    # the corrected estimate of running job j, which is still running at its planned end: corrected
    # until the planned end is in the future or the estimate is the requested time
    cdef int64_t r = J.req[j], e = J.est[j], k
    while J.start[j] + e <= now and e < r:
        k = J.ncorr[j] + 1
        J.ncorr[j] = k
        if pol.correction == CR_REQUESTED:
            e = r
        elif pol.correction == CR_DOUBLING:
            e = 2 * e
        elif k < 12:
            e = J.pred0[j] + INCREMENTS[k]
        else:   # past the list: 100 h more each time
            e = J.pred0[j] + INCREMENTS[11] * (k - 10)
        if e > r:
            e = r
        pol.n_corrections += 1
    return e


cdef inline void policy_free(Policy* pol) noexcept nogil:
    free(pol.reg)
    pol.reg = NULL
    ft_free(pol.ft)
    pol.ft = NULL
