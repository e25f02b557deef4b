# The planner interface's three tables (header only), as Slurm's select plugins and scikit-learn's
# Splitter have one: each cluster kind fills State.plan (state.pxd: the operations and what each
# must do) with its own functions, and the passes, the cycle, start estimates and the parallel pass
# call the table. Adding a planner is a file of its operations and a function here.
#
#   units  plan_units.pxd    the profile of interchangeable units (DESIGN §4)
#   nodes  plan_nodes.pxd    every node's free resources over time, cons_tres best fit
#   slurm  plan_slurm.pxd    Slurm 22.05's backfill on those nodes (slurm_space.pxd)
#
# The parallel pass's operations of each planner (copies, catching up, speculation) are in
# parallel_pass.pxd, with the pass they serve.

from libc.stdint cimport int64_t

from state cimport State, Planner, PL_UNITS, PL_NODES, PL_SLURM
from plan_units cimport build_profile, units_size, units_begin, units_step, units_take_now, units_never_fits
from plan_nodes cimport (build_node_plan, nodes_size, nodes_begin, nodes_step, nodes_take_now, nodes_never_fits,
                         nodes_use)
from plan_slurm cimport slurm_begin, slurm_node_step, slurm_take_now, slurm_queued
from estimates cimport plan_starts_units, plan_starts_nodes
from parallel_pass cimport (units_prepare_copies, nodes_prepare_copies, units_worker_copy, nodes_worker_copy,
                            units_apply, nodes_apply, units_speculate, nodes_speculate, units_copy_bytes,
                            nodes_copy_bytes)


cdef inline void planner_units(Planner* T) noexcept nogil:
    T.kind = PL_UNITS
    T.resumable = True
    T.job_parallel = True
    T.split_search = False
    T.copies_own_prof = True
    T.ncpu_words = 0
    T.build = build_profile
    T.size = units_size
    T.begin = units_begin
    T.step = units_step
    T.take_now = units_take_now
    T.never_fits = units_never_fits
    T.use = NULL
    T.queued = NULL
    T.starts = plan_starts_units
    T.prepare_copies = units_prepare_copies
    T.worker_copy = units_worker_copy
    T.apply = units_apply
    T.speculate = units_speculate
    T.copy_bytes = units_copy_bytes


cdef inline void planner_nodes(Planner* T, int64_t nn) noexcept nogil:
    # nn: the cluster's nodes
    T.kind = PL_NODES
    T.resumable = False
    T.job_parallel = True
    T.split_search = True
    T.copies_own_prof = False
    T.ncpu_words = nn
    T.build = build_node_plan
    T.size = nodes_size
    T.begin = nodes_begin
    T.step = nodes_step
    T.take_now = nodes_take_now
    T.never_fits = nodes_never_fits
    T.use = nodes_use
    T.queued = NULL
    T.starts = plan_starts_nodes
    T.prepare_copies = nodes_prepare_copies
    T.worker_copy = nodes_worker_copy
    T.apply = nodes_apply
    T.speculate = nodes_speculate
    T.copy_bytes = nodes_copy_bytes


cdef inline void planner_slurm(Planner* T, int64_t nn) noexcept nogil:
    # the nodes planner's plan with Slurm's test; passes stay on one thread (the job-parallel pass
    # does not implement Slurm's per-cycle node reservations), a job's later starts tested ahead on a
    # helper thread (slurm_try_later.pxd)
    planner_nodes(T, nn)
    T.kind = PL_SLURM
    T.job_parallel = False
    T.split_search = True
    T.begin = slurm_begin
    T.step = slurm_node_step
    T.take_now = slurm_take_now
    T.queued = slurm_queued


cdef inline void planner_use(State* S) noexcept nogil:
    # the planner for the cluster as set: units, nodes, or Slurm's search on nodes
    if S.ss.on:
        planner_slurm(&S.plan, S.nm.nn)
    elif S.nm.on:
        planner_nodes(&S.plan, S.nm.nn)
    else:
        planner_units(&S.plan)
