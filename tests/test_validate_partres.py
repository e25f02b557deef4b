"""The real-Slurm harness on a backfill reservation count per partition (SchedulerParameters
bf_job_part_count_reserve on two partitions; docs/slurm-harness.md, "A reservation count per partition
(partres2)").

partres2.conf: two disjoint partitions of one priority tier (pa = a1, a2; pb = b1, b2; 8 cores each),
FIFO, backfill every second, ``bf_job_part_count_reserve=1``. Slurm 22.05 keeps that count in each
partition (``part_ptr->bf_data->resv_usage`` in ``_attempt_backfill``, reset each cycle): once a
partition's job has reserved in a cycle, that partition's later jobs are tested for a start now only.
The workload (make_partres_workload.py) holds one partition's wide job for about two minutes behind a
long job while the other partition's wide job, queued just after it, needs a reservation to keep a
stream of small jobs off its nodes. Without Slurm: the workload is its generator's, the recorded runs
(tests/data/slurm_harness/recorded_partres2: three real Slurm 22.05.8 runs) show the count per
partition, and they are compared again with a new pbf replay, which counts in each partition too. As
the partitions share no node, each replayed alone is the per-partition count exactly: pbf's replay of
both must equal it, and counted over both partitions as one it misses the runs. With Slurm (skipped,
saying why, where it cannot run): a held wide job in one partition and a free one in the other reserve
in one cycle.
"""
from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

from pbf.replayer import replay
from pbf.slurm_settings import slurm_settings
from pbf.validate import compare as cmp
from pbf.validate.jobs import load_workload, pbf_table, scale_jobs
from pbf.validate.slurm_run import is_recording, read_run

from scheduling import generator_writes, slurm_or_skip, within_pct

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "partres2.conf"
WORKLOAD = DATA / "partres2_jobs.sacct"
REC = DATA / "recorded_partres2"
#: the wide jobs (8 cores) held behind a long job of their partition (pa in wave 1, pb in wave 2), and
#: the other partition's wide jobs queued just after them, which only a reservation of their own starts early
HELD, FREE = (4, 53), (5, 54)
#: a reservation keeps the small jobs (1-minute limits) off a free wide job's nodes within a minute
FREE_WAIT_S = 60


def _jobs():
    table, req = load_workload(WORKLOAD)
    return scale_jobs(table, req, 1, partitions=True)[0]


def test_the_workload_is_its_generators(tmp_path):
    # make_partres_workload.py rewrites the file byte for byte
    assert generator_writes(DATA, "make_partres_workload.py", "partres2_jobs.sacct", tmp_path) == WORKLOAD.read_bytes()


def test_the_case():
    jobs = {j.id: j for j in _jobs()}
    assert len(jobs) == 78 and {j.partition for j in jobs.values()} == {"pa", "pb"}
    wide = sorted(i for i, j in jobs.items() if j.cores == 8)
    assert wide == [4, 5, 10, 53, 54, 58]
    for held, free in zip(HELD, FREE):
        # queued first, and in the other partition; the held one waits for its partition's long job
        assert jobs[held].submit < jobs[free].submit and jobs[held].partition != jobs[free].partition
        blocker = max(i for i, j in jobs.items() if j.cores == 2 and j.limit_min == 3 and i < held)
        assert jobs[blocker].partition == jobs[held].partition and jobs[blocker].run == 150


def _starts(run):
    return {i: r["start"] for i, r in run.jobs.items()}


def test_slurm_counts_the_reservations_in_each_partition_in_every_recorded_run():
    # what Slurm did, without pbf: in every run each held wide job and the other partition's wide job just
    # after it both started early enough that both reserved in the same cycles (counted over the two
    # partitions as one, the free one could not reserve while the held one waited, and would start only
    # when the small jobs' stream left its whole partition idle: pbf's global count starts it at 177 s and 316 s)
    jobs = _jobs()
    runs = sorted((REC / "slurm").iterdir())
    assert len(runs) == 3 and all(is_recording(r) for r in runs)
    sub = {j.id: j.submit for j in jobs}
    for run_dir in runs:
        starts = _starts(read_run(run_dir, jobs))
        assert all(s is not None for s in starts.values())
        for held, free in zip(HELD, FREE):
            assert starts[free] - sub[free] <= FREE_WAIT_S, (run_dir.name, free, starts[free])
            assert starts[held] >= starts[free], (run_dir.name, held, starts[held])


def test_the_recorded_runs_are_compared_again(tmp_path, capsys):
    from pbf.cli import main
    out = tmp_path / "partres2-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 run(s)" in text and "partitions   pa,pb" in text
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 3 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 78
    assert s["partitions"]["jobs_by_partitions"] == {"pa": 39, "pb": 39}
    # Slurm against itself (the recording; exact, as the replay is deterministic)
    assert [round(100 * x["within_share"], 1) for x in s["slurm_vs_slurm"]] == [93.6, 100.0]
    awt = s["awt_s"]
    assert [round(awt[k], 1) for k in ("slurm", "slurm_run2", "slurm_run3")] == [30.1, 31.0, 30.5]
    assert s["pbf_end_lag_below"] == {"s": 88, "from": "runs", "runs_s": [88, None, None]}
    assert s["partitions"]["outside_one_partition"] == {"pbf": 0, "slurm": [0, 0, 0]}
    # pbf counts bf_job_part_count_reserve in each partition, as Slurm does (SlurmBackfill.job_part_count_reserve):
    # 98.7, 93.6 and 100 % of the starts within 2 s of runs 1, 2 and 3 (Slurm against itself: 95.7 % on
    # average), every start within 60 s, AWT 31.0 s, +1.4 % of the runs' mean; the free wide jobs start with
    # Slurm's (job 5 at +42 s in every run). Counted over both partitions as one (the pbf before), 35.9 % and
    # -17.0 %, job 5 at +177 s (test_a_count_over_both_partitions_misses_the_runs)
    assert not any("bf_job_part_count_reserve" in u for u in s["unmodelled"])
    assert "SlurmBackfill.job_part_count_reserve" in json.dumps(s["pbf_settings"])
    with open(out / "comparison.csv", newline="") as fh:
        rows = {int(r["job_id"]): r for r in csv.DictReader(fh)}
    starts = [[r[k] for r in rows.values()] for k in ("slurm_start", "slurm2_start", "slurm3_start")]
    pbf = [r["pbf_start"] for r in rows.values()]
    assert [within_pct(pbf, x) for x in starts] == [98.7, 93.6, 100.0]
    assert [within_pct(pbf, x, 60) for x in starts] == [100.0, 100.0, 100.0]
    mean = (awt["slurm"] + awt["slurm_run2"] + awt["slurm_run3"]) / 3
    assert round(awt["pbf"], 1) == 31.0 and abs(awt["pbf"] / mean - 1) <= 0.05
    for i in FREE:
        assert abs(int(rows[i]["pbf_start"]) - int(rows[i]["slurm_start"])) <= 2, i


def _starts_of(jobs, partition=None, count="site"):
    """pbf's starts of ``jobs``, replayed as the harness replays them (the runs' own end lag: every end seen a
    second late): every partition (``partition`` None) or ``partition`` alone; ``count`` "site" as the file
    says (in each partition), else that many reservations a cycle over every partition as one (None: no limit)."""
    table, requests = load_workload(WORKLOAD)
    st = slurm_settings(CONF, partition, requests=requests, all_partitions=partition is None)
    config = replace(st.config, slurm_sim=replace(st.config.slurm_sim, end_lag_below=0))
    if count != "site":
        config = replace(config, backfill=replace(config.backfill, reservations=count, job_part_count_reserve=0))
    if partition is not None:
        jobs = [replace(j, partition="") for j in jobs if j.partition == partition]
    return {i: r["start"] for i, r in cmp.pbf_starts(replay(pbf_table(jobs), config)).items()}


def _each_alone(jobs, count="site"):
    out = {}
    for p in ("pa", "pb"):
        out.update(_starts_of(jobs, p, count))
    return out


def test_pbf_counts_the_reservations_in_each_partition():
    # pa and pb share no node and order their jobs by submission alone: without the count pbf's replay of
    # both is each partition replayed alone, job for job; with the count kept in each partition (the
    # file's setting on a site of several partitions) too; counted over both as one it is not
    jobs = _jobs()
    assert _starts_of(jobs, count=None) == _each_alone(jobs, None)
    alone = _each_alone(jobs)
    assert _starts_of(jobs) == alone
    both = _starts_of(jobs, count=1)
    assert sum(both[i] != s for i, s in alone.items()) >= 30      # (50 of 78 jobs)


def _runs(jobs):
    return [{i: r["start"] for i, r in read_run(REC / "slurm" / f"run{k}", jobs).jobs.items()} for k in (1, 2, 3)]


def test_a_count_over_both_partitions_misses_the_runs():
    # the sensitivity of the case: the same replay with the count over both partitions as one (N, 2N) or
    # without it, against the recorded runs: within 2 s of each run, and AWT against the runs' mean
    jobs = _jobs()
    runs = _runs(jobs)
    mean = sum(cmp.awt(jobs, r) for r in runs) / 3

    def figures(starts):
        return ([round(100 * cmp.agreement(jobs, r, starts)["within_share"], 1) for r in runs],
                round(100 * (cmp.awt(jobs, starts) / mean - 1), 1))
    assert figures(_starts_of(jobs)) == ([84.6, 89.7, 85.9], 2.3)               # in each partition
    assert figures(_starts_of(jobs, count=1)) == ([35.9, 35.9, 35.9], -17.0)    # one over both
    assert figures(_starts_of(jobs, count=2)) == ([79.5, 82.1, 80.8], 10.6)     # two over both
    assert figures(_starts_of(jobs, count=None)) == ([74.4, 75.6, 73.1], 13.1)  # no limit
    assert [_starts_of(jobs, count=1)[i] for i in FREE] == [177, 316]


# ---------------------------------------------------------------- with a real Slurm

def test_real_slurm_reserves_in_each_partition(tmp_path):
    # pa's wide job (3) is held by a long job (1) and queued first; pb's wide job (4) needs a reservation to keep
    # a stream of small jobs off b1 and b2. Slurm reserves for both in one cycle and starts job 4 once job 2
    # ends (about +20 s); counted over both partitions as one, job 4 would wait for the stream's end (+55 s)
    slurm_or_skip()
    rows = [(1, 0, 60, 2, 2, "pa"), (2, 0, 20, 1, 2, "pb"), (3, 1, 5, 1, 8, "pa"), (4, 2, 5, 1, 8, "pb")]
    rows += [(5 + k, 4 + 4 * k, 15, 1, 1, "pb") for k in range(10)]
    work = tmp_path / "jobs.sacct"
    head = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|User|Partition\n"
    work.write_text(head + "".join(
        f"{i}|2024-01-01T00:00:{s:02d}|2024-01-01T00:00:{s:02d}|{run}|{lim}|{cores}||500Mc|COMPLETED|u1|{part}\n"
        for i, s, run, lim, cores, part in rows))
    s = cmp.validate_slurm(CONF, work, out=tmp_path / "out", verbose=False)
    assert not s["runs"][0]["errors"] and s["runs"][0]["finished"]
    with open(tmp_path / "out" / "comparison.csv", newline="") as fh:
        got = {int(r["job_id"]): r for r in csv.DictReader(fh)}
    assert int(got[4]["slurm_start"]) <= 30 and int(got[3]["slurm_start"]) >= 55
    # (submitted in the workload's order: Slurm's job ids are the workload's)
    log = (tmp_path / "out" / "slurm" / "run1" / "log" / "slurmctld.log").read_text()
    both = [c for c in log.split("_attempt_backfill: beginning") if "JobId=3 to start at" in c
            and "JobId=4 to start at" in c]
    assert both and all(" in partition pa" in c and " in partition pb" in c for c in both)
