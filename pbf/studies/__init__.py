"""Research applications built on the library: the reproductions of published experiments that
``pbf experiment`` runs.

* :mod:`.experiments`: the Parallel Backfill paper's Tables 1 and 2 (``parallel-backfill``), and the
  replay settings and the runner of its cells that the other parallel-backfill studies share;
* :mod:`.worker_grid`: the grid of workers x cost per test x load x main scheduler (``--grid``) and
  the scheduler-time mechanisms switched one by one (``--mechanisms``);
* :mod:`.validation`: Gaussier et al.'s run-time prediction (``runtime-prediction``) and
  RLScheduler's heuristics (``priority-functions``);
* :mod:`.rlscheduler`, :mod:`.rlbackfilling`: the learned policies' evaluations (``rlscheduler``,
  ``rlbackfilling``);
* :mod:`.coalloc`: the co-allocation study (``coalloc``);
* :mod:`.series`: hourly queue, utilisation and wait series of a replay, for their figures;
* :mod:`.traces`: where the real archive logs are (``$PBF_TRACES``), shared with the tests and
  benchmarks.

The user commands ``pbf report`` and ``pbf bench`` live in :mod:`pbf.report` and :mod:`pbf.benchmark`.
"""
