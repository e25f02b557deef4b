# The Slurm simulator's clock, its settings and state (header only; the loop is slurm_loop.pxd).
# Simulated time is kept in microseconds: scheduling work is charged in microseconds, jobs' times
# are whole seconds (the simulator's time() is the floor of its microsecond clock).

from libc.stdint cimport int64_t


ctypedef struct SimTime:
    # settings (Slurm 17.02 names; see docs/engine.md "Scheduler time" for each default's source)
    int64_t yield_us           # bf_yield_interval: cycle time between lock yields
    int64_t step_us            # TimeStep: what every main-loop iteration adds
    int64_t sched_delay        # batch_sched_delay, s: an event-triggered main pass at most this often
    int64_t sched_interval     # sched_interval, s: a full-depth main pass this often
    int64_t queue_depth        # default_queue_depth: jobs an event-triggered main pass tests
    int64_t max_sched_us       # max_sched_time: a main pass stops once it has cost this much
    int64_t cost_main_us       # charged per job a main pass tests
    int64_t cost_queue_us      # charged per queued job when a cycle builds and sorts its queue
    int64_t phase_us           # the timers' phase: the first backfill cycle this much after it would
                               # come, the first full main pass this much after the first submission
                               # (a site's cycle phase is not in its files)
    int64_t late_below         # (with end_main) a job that runs less than this many seconds ends after the
                               # backfill cycle of its last second (0: none): its end is seen by that
                               # second's main scheduler, not by its cycle (Slurm 22.05: launch and
                               # completion take longer than the cycles' drift over the run)
    bint end_main              # a job's end runs the main scheduler at once, default_queue_depth jobs, not
                               # waiting for batch_sched_delay (Slurm 22.05's epilog-complete RPC:
                               # schedule(false); off: an end is an event as an arrival is)
    int64_t threads            # real threads for a cycle's tests (not the modelled workers): 2 or more,
                               # a helper tests Slurm's later starts ahead (slurm_loop.pxd; same decisions)
    # state
    int64_t now_us             # simulated time
    int64_t next_bf_us         # the next cycle may start from here (bf_interval after the last)
    int64_t last_sched         # s: the last main pass ...
    int64_t last_full          # ... and the last full-depth one
    bint event                 # arrivals or completions since the last main pass
    bint ended                 # (end_main) completions since the last main pass
    int64_t changes            # arrivals, completions and main-pass starts since the last cycle
    bint started               # the loop has begun (now_us is set)
    bint phased                # the first cycle has been put off by phase_us
    bint in_yield              # a cycle yielded with work due: the loop's next instant is the yield's
    int64_t resume_us          # ... after which time goes on from the cycle's end
    # figures
    int64_t iterations         # main-loop iterations (those skipped as empty counted too)
    int64_t cycles             # backfill cycles ...
    int64_t cycles_yielded     # ... ended by a yield that saw a change
    int64_t yields             # lock yields
    int64_t main_passes        # main-scheduler passes ...
    int64_t main_tests         # ... jobs they tested ...
    int64_t main_started       # ... and started
    int64_t cycle_us           # simulated time spent in cycles ...
    int64_t main_us            # ... and in main passes


cdef inline void simtime_defaults(SimTime* T) noexcept nogil:
    T.yield_us = 2_000_000
    T.step_us = 1_000_000
    T.sched_delay = 3
    T.sched_interval = 60
    T.queue_depth = 100
    T.max_sched_us = 2_000_000
    T.cost_main_us = 62
    T.cost_queue_us = 0
    T.phase_us = 0
    T.threads = 1
    T.end_main = False
    T.late_below = 0
