# The on-line regression predictor of Gaussier et al. (SC'15) (header only).
#
# A degree-2 polynomial model over the paper's Table 2 features, trained at each job completion by
# Normalized Adaptive Gradient (Ross, Mineiro & Langford, UAI'13) on the E-Loss family: a squared or
# linear branch for over- and for under-prediction, times one of the job weightings of Table 3, plus
# an l2 penalty. pbf/plugins/regression.py is the same model in plain Python (the oracle); every
# floating-point operation here happens in the same order there, so both predict the same seconds.

from libc.stdint cimport int64_t
from libc.string cimport memset
from libc.math cimport log, sqrt, fabs

from pbf._codes cimport RW_CONSTANT, RW_SHORT_WIDE, RW_LONG_NARROW, RW_SMALL_AREA

cdef enum:
    REG_NF = 20        # raw features (Table 2)
    REG_DIM = 231      # 1 + 2 REG_NF + REG_NF (REG_NF - 1) / 2: 1, x, x^2, x_i x_j (i < j)

ctypedef struct Reg:
    double w[REG_DIM]      # the model's weights over the basis
    double s[REG_DIM]      # largest |phi_i| seen (NAG's per-feature scale)
    double G[REG_DIM]      # sum of squared gradients
    double phi[REG_DIM]    # scratch: the basis of the example at hand
    double N               # NAG's normaliser: sum over examples of sum_i (phi_i / s_i)^2
    double n               # examples seen + 1
    double eta             # NAG's learning rate
    double lam             # the l2 penalty's weight
    int over_sq            # over-prediction branch: 1 squared, 0 linear
    int under_sq           # under-prediction branch: 1 squared, 0 linear
    int weight             # the job weighting (RW_*)
    double over_slope      # the over-prediction branch's factor (predictsim's rightparam)
    double under_slope     # the under-prediction branch's factor (predictsim's leftparam)
    int64_t fits           # examples fitted


cdef inline void reg_init(Reg* R, double eta, double lam, int over_sq, int under_sq, int weight,
                   double over_slope, double under_slope) noexcept nogil:
    memset(R, 0, sizeof(Reg))
    R.n = 1.0
    R.eta = eta
    R.lam = lam
    R.over_sq = over_sq
    R.under_sq = under_sq
    R.weight = weight
    R.over_slope = over_slope
    R.under_slope = under_slope


cdef inline void reg_phi(Reg* R, const double* x) noexcept nogil:
    cdef int i, j, k = 1 + 2 * REG_NF
    R.phi[0] = 1.0
    for i in range(REG_NF):
        R.phi[1 + i] = x[i]
        R.phi[1 + REG_NF + i] = x[i] * x[i]
    for i in range(REG_NF):
        for j in range(i + 1, REG_NF):
            R.phi[k] = x[i] * x[j]
            k += 1


cdef inline double reg_value(Reg* R) noexcept nogil:
    cdef double f = 0.0
    cdef int i
    for i in range(REG_DIM):
        f += R.w[i] * R.phi[i]
    return f


cdef inline int64_t reg_predict(Reg* R, const double* x, int64_t req) noexcept nogil:
    # the model's prediction clipped to [1, requested] (a negative or NaN value gives 1)
    reg_phi(R, x)
    cdef double f = reg_value(R)
    if not (f >= 1.0):
        return 1
    if f >= <double>req:
        return req
    return <int64_t>f


cdef inline double reg_weight(int kind, double q, double p) noexcept nogil:
    # Table 3, floored at 0: a negative weight would turn the loss upside down
    cdef double g
    if kind == RW_CONSTANT:
        g = 1.0
    elif kind == RW_SHORT_WIDE:
        g = 5.0 + log(q / p)
    elif kind == RW_LONG_NARROW:
        g = 5.0 + log(p / q)
    elif kind == RW_SMALL_AREA:
        g = 11.0 + log(1.0 / (q * p))
    else:
        g = log(q * p)
    return g if g > 0.0 else 0.0


cdef inline void reg_fit(Reg* R, const double* x, double y, double gamma) noexcept nogil:
    cdef int i
    cdef double a, e, dl, g, norm = 0.0
    reg_phi(R, x)
    for i in range(REG_DIM):
        a = fabs(R.phi[i])
        if a > R.s[i]:
            if R.s[i] > 0.0:
                R.w[i] = R.w[i] * (R.s[i] / a)
            R.s[i] = a
    for i in range(REG_DIM):
        if R.s[i] > 0.0:
            norm += (R.phi[i] * R.phi[i]) / (R.s[i] * R.s[i])
    R.N += norm
    e = reg_value(R) - y
    if e > 0.0:            # over-prediction
        dl = gamma * R.over_slope * (2.0 * e if R.over_sq else 1.0)
    elif e < 0.0:          # under-prediction
        dl = gamma * R.under_slope * (2.0 * e if R.under_sq else -1.0)
    else:
        dl = 0.0
    for i in range(REG_DIM):
        g = dl * R.phi[i] + R.lam * R.w[i]
        R.G[i] += g * g
        if R.G[i] > 0.0 and R.s[i] > 0.0:
            R.w[i] = R.w[i] - R.eta * g / (sqrt(R.N * R.G[i] / R.n) * R.s[i])
    R.n += 1.0
    R.fits += 1
