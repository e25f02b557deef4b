"""Embedding pbf in a SimPy model: SimPy owns time and the jobs; pbf decides who starts where.

Jobs arrive as SimPy processes; each arrival or completion wakes a dispatcher that calls
``Engine.advance(now, events)`` once per instant and starts a SimPy process per decision. Run:

    pip install simpy
    python examples/simpy_cluster.py [--jobs 300] [--units 64] [--seed 1]

It prints the schedule's metrics and checks that no unit was ever used by two jobs at once.
"""
import argparse

import numpy as np
import simpy

import pbf


def simulate(n_jobs=300, units=64, seed=1):
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    engine = pbf.Engine(pbf.Cluster(units=units), backfill=pbf.Backfill(reservations=1))
    inbox = []                      # events of the current instant, for the engine
    wake = [env.event()]            # the dispatcher's alarm clock
    record = {}                     # job id -> (submit, start, run, units)
    owner = np.full(units, -1)      # which job holds each unit (checked, not needed by pbf)

    def notify(event):
        inbox.append(event)
        if not wake[0].triggered:
            wake[0].succeed()

    def arrivals():
        for job_id in range(1, n_jobs + 1):
            yield env.timeout(int(rng.exponential(60)))
            size = int(min(units, 2 ** rng.integers(0, 7)))
            requested = int(rng.integers(60, 3600))
            run = int(rng.integers(1, requested + 1))
            record[job_id] = [env.now, None, run, size]
            notify(pbf.Submit(pbf.Job(job_id, int(env.now), size, requested)))

    def running(job_id, unit_ids):
        yield env.timeout(record[job_id][2])
        owner[unit_ids] = -1
        notify(pbf.Finish(job_id, int(env.now)))

    def dispatcher():
        while True:
            yield wake[0]
            wake[0] = env.event()
            yield env.timeout(0)    # let every event of this instant arrive first
            events, inbox[:] = list(inbox), []
            for decision in engine.advance(int(env.now), events):
                assert (owner[decision.units] == -1).all(), "a unit was given twice"
                owner[decision.units] = decision.job_id
                record[decision.job_id][1] = env.now
                env.process(running(decision.job_id, decision.units))

    env.process(arrivals())
    env.process(dispatcher())
    env.run()
    engine.close()
    submit, start, run, size = (np.array([record[j][k] for j in sorted(record)]) for k in range(4))
    return pbf.schedule_metrics(submit, start, run, size, units, tau=10), engine


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
