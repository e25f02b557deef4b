"""The pass-cost predictor's entry points (``ext/pass_cost.pxd``) on a core's state.

A :class:`PassCostPredictor` takes a :class:`pbf._core.Core`: it reads the figures the core
measured (the mean wall time per tested job of sequential and parallel full passes, the pool's
wake-up and copy rate), sets them (tests, and benchmarks that time one pass as a replay would
choose it), and says what the next full pass is predicted to cost and where it will run. No
decision depends on these figures: a pass decides the same on one thread or on the pool.
Internal: ``pbf replay --workers N`` and :class:`pbf.Engine` choose through it by themselves.
"""
from libc.stdint cimport int64_t

from state cimport State
from pass_cost cimport pc_tests, pc_overhead_ns, pc_predict_seq_ns, pc_predict_par_ns, pc_parallel_pays
from cycle cimport choose_parallel, copy_bytes
from pbf._core cimport Core

#: the figures :meth:`PassCostPredictor.set` takes
COST_KEYS = frozenset(("seq_ns_per_test", "seq_passes", "par_ns_per_test", "par_passes", "wake_ns",
                       "copy_ns_per_byte", "cores"))


cdef class PassCostPredictor:
    """The pass-cost predictor of ``core``."""
    cdef Core core

    def __cinit__(self, Core core not None):
        self.core = core

    def figures(self):
        """The predictor's figures (see :meth:`predict`): the means of the measured wall ns per
        tested job of sequential and parallel full passes and how many passes each holds, the
        pool's measured wake-up and copy rate (0 until a pass first could pay) with the size of the
        buffer it was measured on (0 when set; copies of another size band measure it again), the CPUs, and the last full pass's measurement
        (``last_wall_ns``, ``last_tests``, ``last_parallel``)."""
        cdef State* S = &self.core.s
        return {"seq_ns_per_test": S.cost.seq_ns_per_test, "seq_passes": S.cost.seq_passes,
                "par_ns_per_test": S.cost.par_ns_per_test, "par_passes": S.cost.par_passes,
                "wake_ns": S.cost.wake_ns, "copy_ns_per_byte": S.cost.copy_ns_per_byte,
                "copy_measured_bytes": S.cost.copy_measured_bytes, "cores": S.cost.cores,
                "last_wall_ns": S.cost.last_wall_ns, "last_tests": S.cost.last_tests,
                "last_parallel": bool(S.cost.last_parallel)}

    def set(self, **figures):
        """Set figures of the predictor (names as :meth:`figures` gives them), each >= 0; an unknown
        name or a negative value raises ValueError and sets nothing."""
        unknown = set(figures) - COST_KEYS
        if unknown:
            raise ValueError(f"unknown pass-cost figures: {', '.join(sorted(unknown))}")
        for name, value in figures.items():
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        cdef State* S = &self.core.s
        for name, value in figures.items():
            if name == "seq_ns_per_test": S.cost.seq_ns_per_test = value
            elif name == "seq_passes": S.cost.seq_passes = value
            elif name == "par_ns_per_test": S.cost.par_ns_per_test = value
            elif name == "par_passes": S.cost.par_passes = value
            elif name == "wake_ns": S.cost.wake_ns = value
            elif name == "copy_ns_per_byte":
                S.cost.copy_ns_per_byte = value
                S.cost.copy_known = True
                S.cost.copy_measured_bytes = 0      # stands for copies of any size
            elif name == "cores": S.cost.cores = value

    def predict(self):
        """What the next full pass is predicted to cost: ``tests`` (the queue, at most
        ``max_job_test``), ``copy_bytes`` (about what each worker would copy), ``seq_ns`` and
        ``par_ns`` (its predicted wall time on one thread and on the pool), ``overhead_ns`` (going
        parallel), ``pays`` (parallel predicted at least 10 % faster) and ``parallel`` (whether it
        will run on the pool: also the pool, ``parallel_min_queue`` and the testing switch)."""
        cdef State* S = &self.core.s
        cdef int64_t tests = pc_tests(S.queue.n, S.cfg.max_job_test)
        cdef double nbytes = copy_bytes(S)
        cdef bint parallel = choose_parallel(S)     # (first: it may measure the copy rate)
        return {"tests": tests, "copy_bytes": nbytes, "seq_ns": pc_predict_seq_ns(&S.cost, tests),
                "par_ns": pc_predict_par_ns(&S.cost, tests, S.cfg.workers, nbytes),
                "overhead_ns": pc_overhead_ns(&S.cost, S.cfg.workers, nbytes),
                "pays": bool(pc_parallel_pays(&S.cost, tests, S.cfg.workers, nbytes)),
                "parallel": bool(parallel)}
