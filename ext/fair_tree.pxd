# Slurm 22.05's Fair Tree fair-share factor over an association tree (header only). The oracle, with
# the rules and the Slurm functions they come from, is pbf/fairshare.py; every floating-point
# operation happens in the same order there.

from libc.stdint cimport int64_t, int8_t
from libc.stdlib cimport free, qsort
from libc.string cimport memset

from libc.math cimport INFINITY


ctypedef struct FtRec:         # one association while its siblings are sorted
    double lfs                 # level fair share (S / U)
    int64_t acct               # 1: an account, 0: a user (users first where level fair shares are equal)
    int64_t a                  # the association (last tie-break: its index)


ctypedef struct FtFrame:       # one account of the walk's path from the root
    int64_t p                  # the account
    int64_t k                  # the next of its sorted children (an index into rec)
    double prev                # the level fair share of the child before it ...
    bint have_prev             # ... if there was one
    bint tied                  # the account was tied with the sibling before it


ctypedef struct FairTree:
    int64_t n                  # associations; 0 is the root, a parent comes before its children
    int64_t* parent            # the account above each association (-1: the root)
    double* shares_norm        # raw shares over the siblings' (itself included)
    int8_t* is_user            # a user association (a leaf)
    int64_t* child_start       # children of a: child[child_start[a] .. child_start[a + 1]] (n + 1 items)
    int64_t* child
    int64_t user_assocs        # user associations in the tree (Slurm's g_user_assoc_count)
    int64_t n_map              # trace users with a leaf ...
    int64_t* user_of           # ... and their leaves
    double* usage              # scratch: each association's usage, its subtree's included
    double* factor             # scratch: each user association's factor
    FtRec* rec                 # scratch: siblings being sorted (laid out as child)
    FtFrame* frame             # scratch: the walk's path (at most n accounts deep)


cdef inline void ft_free(FairTree* T) noexcept nogil:
    if T == NULL:
        return
    free(T.parent); free(T.shares_norm); free(T.is_user); free(T.child_start); free(T.child)
    free(T.user_of); free(T.usage); free(T.factor); free(T.rec); free(T.frame)
    free(T)


cdef inline int _ft_cmp(const void* x, const void* y) noexcept nogil:
    # level fair share descending, users before accounts, then by index
    cdef const FtRec* a = <const FtRec*>x
    cdef const FtRec* b = <const FtRec*>y
    if a.lfs != b.lfs:
        return 1 if a.lfs < b.lfs else -1
    if a.acct != b.acct:
        return 1 if a.acct > b.acct else -1
    return 1 if a.a > b.a else (-1 if a.a < b.a else 0)


cdef inline void _ft_sort_children(FairTree* T, int64_t p) noexcept nogil:
    # the children of account p by level fair share (S / U), in T.rec[child_start[p] .. child_start[p + 1])
    cdef int64_t lo = T.child_start[p], hi = T.child_start[p + 1], k, a
    cdef double pu = T.usage[p], u, s
    for k in range(lo, hi):
        a = T.child[k]
        u = T.usage[a] / pu if pu != 0.0 else 0.0
        s = T.shares_norm[a]
        T.rec[k].a = a
        T.rec[k].acct = 0 if T.is_user[a] else 1
        if s == 0.0:
            T.rec[k].lfs = 0.0
        elif u == 0.0:
            T.rec[k].lfs = INFINITY
        else:
            T.rec[k].lfs = s / u
    if hi > lo:
        qsort(&T.rec[lo], <size_t>(hi - lo), sizeof(FtRec), _ft_cmp)


cdef inline void _ft_walk(FairTree* T, int64_t* rank, int64_t* rnt) noexcept nogil:
    # _calc_tree_fs from the root, depth first, without recursion (a tree may be as deep as it has
    # associations): T.frame[d] is the account at depth d, the child it is at, and the level fair
    # share of the child before it; an account's first child is tied when the account itself was
    cdef int64_t d = 0, k, a, p
    cdef bint tied
    cdef FtFrame* f
    _ft_sort_children(T, 0)
    T.frame[0].p, T.frame[0].k, T.frame[0].have_prev, T.frame[0].tied = 0, T.child_start[0], False, False
    while d >= 0:
        f = &T.frame[d]
        p = f.p
        k = f.k
        if k >= T.child_start[p + 1]:
            d -= 1
            continue
        a = T.rec[k].a
        if k == T.child_start[p] and f.tied:
            tied = True
        else:
            tied = f.have_prev and f.prev == T.rec[k].lfs
        f.prev = T.rec[k].lfs
        f.have_prev = True
        f.k = k + 1
        if T.is_user[a]:
            if not tied:
                rank[0] = rnt[0]
            T.factor[a] = <double>rank[0] / <double>T.user_assocs
            rnt[0] -= 1
        elif T.child_start[a + 1] > T.child_start[a]:
            _ft_sort_children(T, a)
            d += 1
            T.frame[d].p, T.frame[d].k, T.frame[d].have_prev, T.frame[d].tied = a, T.child_start[a], False, tied


cdef inline void ft_compute(FairTree* T, const double* user_usage, int64_t n_users, double* fsf) noexcept nogil:
    # every mapped user's Fair Tree factor into fsf[0 .. min(n_users, n_map)) from its decayed usage
    cdef int64_t i, k, m = n_users if n_users < T.n_map else T.n_map
    cdef int64_t rank = T.user_assocs, rnt = T.user_assocs
    memset(T.usage, 0, <size_t>T.n * sizeof(double))
    for k in range(m):
        T.usage[T.user_of[k]] += user_usage[k]
    i = T.n - 1
    while i > 0:
        T.usage[T.parent[i]] += T.usage[i]
        i -= 1
    _ft_walk(T, &rank, &rnt)
    for k in range(m):
        fsf[k] = T.factor[T.user_of[k]]
