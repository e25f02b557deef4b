"""Embedding pbf in a SimPy model: SimPy owns time and the jobs; pbf decides who starts where.

The model's jobs arrive as SimPy processes and run through :class:`pbf.hosts.simpy.SimPyHost`, which
hands each instant's arrivals and completions to ``Engine.advance`` in one call and answers every
job with its start (docs/hosts.md). Run:

    pip install simpy
    python examples/simpy_cluster.py [--jobs 300] [--units 64] [--seed 1]

It prints the schedule's metrics and checks that no unit was ever used by two jobs at once.
"""
import argparse

import numpy as np
import simpy

import pbf
from pbf.hosts.simpy import SimPyHost


def simulate(n_jobs=300, units=64, seed=1):
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    host = SimPyHost(env, pbf.Engine(pbf.Cluster(units=units), backfill=pbf.Backfill(reservations=1)))
    record = {}                     # job id -> [submit, start, run, units]
    owner = np.full(units, -1)      # which job holds each unit (checked, not needed by pbf)

    def job(job_id, size, requested, run):
        handle = host.submit(pbf.Job(job_id, host.now, size, requested))
        start = yield handle.started
        assert (owner[start.units] == -1).all(), "a unit was given twice"
        owner[start.units] = job_id
        record[job_id][1] = env.now
        yield env.timeout(run)
        owner[start.units] = -1
        host.finish(job_id)

    def arrivals():
        for job_id in range(1, n_jobs + 1):
            yield env.timeout(int(rng.exponential(60)))
            size = int(min(units, 2 ** rng.integers(0, 7)))
            requested = int(rng.integers(60, 3600))
            run = int(rng.integers(1, requested + 1))
            record[job_id] = [env.now, None, run, size]
            env.process(job(job_id, size, requested, run))

    env.process(arrivals())
    env.run()
    host.close()
    submit, start, run, size = (np.array([record[j][k] for j in sorted(record)]) for k in range(4))
    return pbf.schedule_metrics(submit, start, run, size, units, tau=10), host.engine


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    metrics, engine = simulate(args.jobs, args.units, args.seed)
    print(f"{metrics.jobs} jobs on {args.units} units: AWT {metrics.awt:.1f} s, ART {metrics.art:.1f} s, "
          f"BSLD {metrics.bsld:.2f}, utilisation {metrics.utilisation:.3f}, "
          f"max queue {metrics.max_queue}; {engine.stats()['passes']} engine passes")


if __name__ == "__main__":
    main()
