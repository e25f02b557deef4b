"""A node cluster's entry points (``ext/node_model.pxd``) on a core's state: nodes with cores, memory,
GPUs and features, and what each job asks of them.

A :class:`NodeCluster` takes a :class:`pbf._core.Core` of no jobs yet; :func:`pbf.resources.load_nodes`
sets the nodes, a replay or :class:`pbf.Engine` the jobs' requests. Internal.
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, calloc

from state cimport State
from node_model cimport NodeModel, nm_alloc, nm_reserve_jobs, nm_make_classes
from slurm_space cimport ss_alloc
from advance_resv cimport ar_alloc, ResvLine
from part_records cimport pr_alloc, pr_free, pr_set_tiers
from pbf._core cimport Core
from pbf._codes cimport RC_OK
from memory cimport INF

from pbf.errors import ConfigError


cdef class NodeCluster:
    """The nodes of ``core``'s cluster."""
    cdef Core core

    def __cinit__(self, Core core not None):
        self.core = core

    def set(self, cores, memory_mb, gpus, features, bint first_fit=False, int count_lanes=1):
        """Make the cluster one of nodes (before any job is added): node i has ``cores[i]``
        consecutive units (they add up to the cluster's units), ``memory_mb[i]``, ``gpus[i]`` and the
        feature bits ``features[i]`` (uint64). With ``count_lanes`` R > 1, ``gpus[i]`` (and every job's
        ``gpus_per_node``) is R counts packed as lanes of 64 // R bits, GPUs in the lowest
        (``ext/counts.pxd``, :mod:`pbf.gres`). Validated by the caller (pbf.resources)."""
        cdef const int64_t[::1] vc = np.ascontiguousarray(cores, dtype=np.int64)
        cdef const int64_t[::1] vm = np.ascontiguousarray(memory_mb, dtype=np.int64)
        cdef const int64_t[::1] vg = np.ascontiguousarray(gpus, dtype=np.int64)
        cdef const uint64_t[::1] vf = np.ascontiguousarray(features, dtype=np.uint64)
        cdef int64_t nn = vc.shape[0], i, u, total = 0
        cdef State* S = &self.core.s
        cdef NodeModel* M = &S.nm
        if S.jobs.n or M.on:
            raise RuntimeError("pbf core: the nodes come first (before any job), once")
        for i in range(nn):
            total += vc[i]
        if nn > 0xFFFFF:
            raise ValueError(f"{nn} nodes: pbf holds at most 1,048,575 nodes")
        if total != S.units or nn == 0:
            raise ValueError(f"the nodes' cores add up to {total}, the cluster has {S.units} units")
        if count_lanes < 1 or count_lanes > 32:
            raise ValueError(f"count_lanes must be 1 to 32, got {count_lanes}")
        M.first_fit = first_fit
        if nm_alloc(M, nn, S.units) != RC_OK:
            raise MemoryError("pbf core: out of memory (the nodes)")
        if count_lanes > 1:
            M.cnt_w = 64 // count_lanes
            M.cnt_hi = 0
            for i in range(count_lanes):
                M.cnt_hi |= (<uint64_t>1) << (i * M.cnt_w + M.cnt_w - 1)
            M.cnt_g0 = ((<int64_t>1) << (M.cnt_w - 1)) - 1
        M.first[0] = 0
        for i in range(nn):
            M.first[i + 1] = M.first[i] + vc[i]
            for u in range(M.first[i], M.first[i + 1]):
                M.node_of[u] = <int32_t>i
            M.cap_mem[i] = vm[i]
            M.cap_gpu[i] = vg[i]
            M.feat[i] = vf[i]
            M.free_mem[i] = vm[i]
            M.free_gpu[i] = vg[i]
        if nm_reserve_jobs(M, max(S.jobs.cap, 1)) != RC_OK or nm_make_classes(M) != RC_OK:
            raise MemoryError("pbf core: out of memory (the nodes)")
        M.on = True
        self.core.use_planner()

    def set_search(self, str search):
        """How a pass plans on the nodes (after :meth:`set`, before any job): ``"exact"`` (pbf's plan of
        every node's free resources over time: a job reserves the earliest exact start) or
        ``"slurm"`` (Slurm's backfill: the will-run test and whole-node reservations,
        ``ext/slurm_space.pxd``; passes stay on one thread)."""
        cdef State* S = &self.core.s
        if search not in ("exact", "slurm"):
            raise ValueError(f"node search must be 'exact' or 'slurm', got {search!r}")
        if not S.nm.on:
            raise RuntimeError("pbf core: set the nodes first")
        if S.jobs.n:
            raise RuntimeError("pbf core: the node search is chosen before any job")
        if search == "slurm" and S.ss.offer == NULL:
            if ss_alloc(&S.ss, S.nm.nn) != RC_OK:
                raise MemoryError("pbf core: out of memory (the nodes)")
        S.ss.on = search == "slurm"
        S.nm.wt = S.ss.sw if S.ss.on else NULL      # Slurm's node weights go with its search
        self.core.use_planner()

    def set_requests(self, int64_t first, mem_per_core, mem_per_node, gpus_per_node, min_nodes, max_nodes,
                     features):
        """What jobs first, first+1, ... ask of the nodes (added, not yet submitted): memory per core
        or per node (MB), GPUs per node, nodes at least and at most (0: any), feature bits."""
        cdef const int64_t[::1] a = np.ascontiguousarray(mem_per_core, dtype=np.int64)
        cdef const int64_t[::1] b = np.ascontiguousarray(mem_per_node, dtype=np.int64)
        cdef const int64_t[::1] g = np.ascontiguousarray(gpus_per_node, dtype=np.int64)
        cdef const int64_t[::1] lo = np.ascontiguousarray(min_nodes, dtype=np.int64)
        cdef const int64_t[::1] hi = np.ascontiguousarray(max_nodes, dtype=np.int64)
        cdef const uint64_t[::1] f = np.ascontiguousarray(features, dtype=np.uint64)
        cdef int64_t n = a.shape[0], i
        cdef State* S = &self.core.s
        cdef NodeModel* M = &S.nm
        if not M.on:
            raise RuntimeError("pbf core: set the nodes first")
        if first < 0 or first + n > S.jobs.n:
            raise ValueError("node requests: jobs out of range")
        for i in range(n):
            M.mpc[first + i] = a[i]
            M.mpn[first + i] = b[i]
            M.gpn[first + i] = g[i]
            M.minn[first + i] = lo[i]
            M.maxn[first + i] = hi[i]
            M.jfeat[first + i] = f[i]

    def set_partitions(self, int64_t first, job_parts, node_parts=None):
        """The partitions of jobs first, first+1, ... (added, not yet submitted) and, when given, of the
        nodes: a bit each (at most 64 partitions; a job's 0: any node). Slurm's main scheduler then
        fails a partition at its first job that cannot start and goes on with the others."""
        cdef const uint64_t[::1] jp = np.ascontiguousarray(job_parts, dtype=np.uint64)
        cdef const uint64_t[::1] npv
        cdef int64_t n = jp.shape[0], i
        cdef State* S = &self.core.s
        cdef NodeModel* M = &S.nm
        if not M.on:
            raise RuntimeError("pbf core: set the nodes first")
        if first < 0 or first + n > S.jobs.n:
            raise ValueError("partitions: jobs out of range")
        if node_parts is not None:
            npv = np.ascontiguousarray(node_parts, dtype=np.uint64)
            if npv.shape[0] != M.nn:
                raise ValueError(f"partitions: {npv.shape[0]} nodes given, the cluster has {M.nn}")
            if M.npart == NULL:
                M.npart = <uint64_t*>malloc(M.nn * sizeof(uint64_t))
                if M.npart == NULL:
                    raise MemoryError()
            M.pall = 0
            for i in range(M.nn):
                M.npart[i] = npv[i]
                M.pall |= npv[i]
        elif M.npart == NULL:
            raise ValueError("partitions: give the nodes' partitions first")
        for i in range(n):
            M.jpart[first + i] = jp[i]

    def set_reservations(self, starts, ends, nodes, groups=None, jobs=None, kills=None):
        """Advance reservations (``ext/advance_resv.pxd``), before the replay or the first pass: window k
        holds the nodes ``nodes[k]`` (node indices) from ``starts[k]`` to ``ends[k]`` (seconds) against
        every job. Replaces any set before; none: no window. Jobs inside a reservation
        (``ext/resv_inside.pxd``): ``groups[k]`` names window k's reservation (1, 2, ...; 0: no job is
        inside it) and ``jobs[i]`` the reservation job i (in the order added, all added) is inside (0:
        none); such a job starts only inside its reservation's current window, on its nodes. ``kills[k]``
        (None: none): a job inside window k's reservation that started in window k and still runs then is
        ended at that time (-1: never; ``pbf.slurm_reservations.end_checks``), its reason ``RJ_RESV_OVER``."""
        cdef const int64_t[::1] vs = np.ascontiguousarray(starts, dtype=np.int64)
        cdef const int64_t[::1] ve = np.ascontiguousarray(ends, dtype=np.int64)
        cdef int64_t n = vs.shape[0], k, i, u, W, NW, x
        cdef State* S = &self.core.s
        cdef NodeModel* M = &S.nm
        if not M.on:
            raise RuntimeError("pbf core: set the nodes first")
        if ve.shape[0] != n or len(nodes) != n:
            raise ValueError(f"reservations: {n} starts, {ve.shape[0]} ends, {len(nodes)} node lists")
        picked = []
        for k in range(n):
            if not ve[k] > vs[k]:
                raise ConfigError(f"reservation {k}: its end {ve[k]} is not after its start {vs[k]}")
            idx = np.ascontiguousarray(nodes[k], dtype=np.int64)
            if idx.size == 0 or idx.min() < 0 or idx.max() >= M.nn:
                raise ConfigError(f"reservation {k}: node indices must be 0 .. {M.nn - 1} (and at least one)")
            picked.append(np.unique(idx))
        grp = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
        jg = None if jobs is None else np.asarray(jobs, dtype=np.int64)
        if grp.shape[0] != n or (grp.size and (grp.min() < 0 or grp.max() >= 1 << 30)):
            raise ValueError(f"reservations: {grp.shape[0]} groups for {n} windows, each 0 .. 2**30 - 1")
        if jg is not None and (jg.shape[0] != S.jobs.n or (jg.size and (jg.min() < 0 or jg.max() >= 1 << 30))):
            raise ValueError(f"reservations: {jg.shape[0]} jobs' groups for {S.jobs.n} jobs, each 0 .. 2**30 - 1")
        if jg is not None and not jg.any():
            jg = None
        kl = None if kills is None else np.asarray(kills, dtype=np.int64)
        if kl is not None and kl.shape[0] != n:
            raise ValueError(f"reservations: {kl.shape[0]} kill times for {n} windows")
        if jg is None:
            grp = np.zeros(n, dtype=np.int64)
        W = S.W
        NW = (M.nn + 63) // 64
        if ar_alloc(&S.ar, n, W, NW) != RC_OK:
            raise MemoryError("pbf core: out of memory (advance reservations)")
        order = sorted(range(n), key=lambda x: (int(ve[x]), int(vs[x])))
        for k in range(n):
            S.ar.start[k] = vs[order[k]]
            S.ar.end[k] = ve[order[k]]
            S.ar.grp[k] = <int32_t>grp[order[k]]
            for i in picked[order[k]]:
                S.ar.nbits[k * S.ar.NW + (i >> 6)] |= (<uint64_t>1) << (i & 63)
                for u in range(M.first[i], M.first[i + 1]):
                    S.ar.ubits[k * W + (u >> 6)] |= (<uint64_t>1) << (u & 63)
        # the times a pass is due: every end, and the start of each window some job is inside
        ev = sorted([int(ve[x]) for x in range(n)] + [int(vs[x]) for x in range(n) if grp[x] > 0])
        for x in range(len(ev)):
            S.ar.ev[x] = ev[x]
        S.ar.nev = len(ev)
        if jg is None:
            return
        S.ar.jgrp = <int32_t*>malloc((jg.shape[0] + 1) * sizeof(int32_t))
        S.ar.il_off = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        S.ar.vxs = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        S.ar.vxe = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        S.ar.vxbits = <uint64_t*>malloc((n * NW + 1) * sizeof(uint64_t))
        if S.ar.jgrp == NULL or S.ar.il_off == NULL or S.ar.vxs == NULL or S.ar.vxe == NULL or S.ar.vxbits == NULL:
            raise MemoryError("pbf core: out of memory (advance reservations)")
        for x in range(jg.shape[0]):
            S.ar.jgrp[x] = <int32_t>jg[x]
        S.ar.njobs = jg.shape[0]
        if kl is not None:
            S.ar.kill = <int64_t*>malloc((n + 1) * sizeof(int64_t))
            if S.ar.kill == NULL:
                raise MemoryError("pbf core: out of memory (advance reservations)")
            for k in range(n):
                S.ar.kill[k] = INF if kl[order[k]] < 0 else kl[order[k]]
        x = 0
        for k in range(n):
            S.ar.il_off[k] = x
            if S.ar.grp[k] > 0:
                x += len(picked[order[k]])
        S.ar.il_off[n] = x
        S.ar.il = <ResvLine*>calloc(x + 1, sizeof(ResvLine))
        if S.ar.il == NULL:
            raise MemoryError("pbf core: out of memory (advance reservations)")
        S.ar.nil = x

    def set_part_records(self, counts, masks, parts, tiers=None, factors=None):
        """Jobs of several partitions (``ext/part_records.pxd``), after every job is added: job i (in the
        order added) has ``counts[i]`` records (0 or 1: tested as it is), the next ones of ``masks`` (its
        features with its partition's, uint64) and ``parts`` (that partition's bit), in test order.
        ``tiers``: each record's partition's PriorityTier (non-increasing within a job): a job whose
        records' tiers differ is queued once a tier, each entry at its own tier (before any job is
        submitted; None: every record at the job's place). ``factors``: each record's partition's
        multifactor partition factor (0 .. 2**32 - 1): a job whose records' factors differ is queued once
        a run of records of one tier and one factor, each entry at the priority of its partition (Slurm's
        ``priority_array``; the job's key under a priority other than multifactor; None: the job's)."""
        cdef const int64_t[::1] vn = np.ascontiguousarray(counts, dtype=np.int64)
        cdef const uint64_t[::1] vm = np.ascontiguousarray(masks, dtype=np.uint64)
        cdef const uint64_t[::1] vp = np.ascontiguousarray(parts, dtype=np.uint64)
        cdef int64_t n = vn.shape[0], i, at = 0
        cdef State* S = &self.core.s
        if not S.nm.on or S.nm.npart == NULL:
            raise RuntimeError("pbf core: set the nodes and their partitions first")
        if n != S.jobs.n or vm.shape[0] != vp.shape[0] or int(np.asarray(vn).sum()) != vm.shape[0]:
            raise ValueError("partition records: one count a job, and as many masks and parts as the counts say")
        vt = vf = None
        if tiers is not None:
            vt = np.ascontiguousarray(tiers, dtype=np.int64)
            if vt.shape[0] != vm.shape[0] or (vt.shape[0] and (vt.min() < 0 or vt.max() > 2**31 - 1)):
                raise ValueError("partition records: one tier a record, each in 0 .. 2**31 - 1")
            if S.queue.n or S.nodes.nrun:
                raise RuntimeError("pbf core: partition tiers are set before any job is submitted")
        if factors is not None:
            vf = np.ascontiguousarray(factors, dtype=np.float64)
            if vf.shape[0] != vm.shape[0] or (vf.shape[0] and not (np.isfinite(vf).all() and vf.min() >= 0
                                                                   and vf.max() <= 2.0**32 - 1)):
                raise ValueError("partition records: one factor a record, each a number in 0 .. 2**32 - 1")
            if S.queue.n or S.nodes.nrun:
                raise RuntimeError("pbf core: partition factors are set before any job is submitted")
        if pr_alloc(&S.prec, n, vm.shape[0]) != RC_OK:
            raise MemoryError("pbf core: out of memory (partition records)")
        for i in range(vm.shape[0]):
            S.prec.mask[i] = vm[i]
            S.prec.part[i] = vp[i]
        for i in range(n):
            S.prec.n[i] = <int32_t>vn[i]
            S.prec.at[i] = at
            at += vn[i]
        if tiers is None and factors is None:
            return
        S.prec.tier = <int32_t*>malloc((vm.shape[0] + 1) * sizeof(int32_t))
        if factors is not None:
            S.prec.pf = <double*>malloc((vm.shape[0] + 1) * sizeof(double))
        if S.prec.tier == NULL or (factors is not None and S.prec.pf == NULL):
            pr_free(&S.prec)
            raise MemoryError("pbf core: out of memory (partition records)")
        for i in range(vm.shape[0]):
            S.prec.tier[i] = <int32_t>vt[i] if tiers is not None else 0
            if factors is not None:
                S.prec.pf[i] = vf[i]
        for i in range(n):
            for at in range(S.prec.at[i] + 1, S.prec.at[i] + S.prec.n[i]):
                if S.prec.tier[at] > S.prec.tier[at - 1]:
                    pr_free(&S.prec)
                    raise ValueError(f"partition records: job {i}'s records are not in PriorityTier order")
        if pr_set_tiers(&S.prec) != RC_OK:
            pr_free(&S.prec)
            raise MemoryError("pbf core: out of memory (partition records)")

    def free(self):
        """Per node: (free cores, free memory MB, free GPUs) now (tests and reports; GPUs alone where
        other generic resources share their word)."""
        cdef State* S = &self.core.s
        cdef NodeModel* M = &S.nm
        cdef int64_t i, u, c
        out = []
        for i in range(M.nn):
            c = 0
            for u in range(M.first[i], M.first[i + 1]):
                c += (S.nodes.free[u >> 6] >> (u & 63)) & 1
            out.append((c, M.free_mem[i], M.free_gpu[i] & M.cnt_g0))
        return out

    def classes(self):
        """Each node's class (numbered from 0 in the order of their first node): the nodes of
        identical cores, memory, GPUs and features, which a search asks once whether a job may use."""
        cdef NodeModel* M = &self.core.s.nm
        cdef int64_t i
        out = np.zeros(M.nn if M.on else 0, dtype=np.int64)
        for i in range(M.nn if M.on and M.class_of != NULL else 0):
            out[i] = M.class_of[i]
        return out

    def stats(self):
        """A node cluster's counters: passes whose first job not fitting now was met, those among them
        with enough free cores for it (held by memory, GPUs, features or node shape), and each job's
        node count (0: never started)."""
        cdef State* S = &self.core.s
        cdef NodeModel* M = &S.nm
        cdef int64_t j
        counts = np.zeros(S.jobs.n, dtype=np.int64)
        for j in range(S.jobs.n if M.on else 0):
            counts[j] = M.nused[j]
        return int(M.heads), int(M.heads_cores_free), counts
