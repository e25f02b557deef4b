"""The backfill-cost measurement at scale (pbf.validate.scale, bench/slurm_backfill_cost.py; issue 54),
without Slurm: the Beocat site file and its private configuration, the running and pending jobs, sdiag
read back (a real 22.05 output before any cycle and one after), a case's figures, and the fit over saved
outputs with the snapshots before the first cycle left out."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

from pbf.sdiag import SdiagError, read_sdiag
from pbf.validate.scale import (
    UNLIMITED_TEST,
    beocat_site_conf,
    case_figures,
    fit_folder,
    pending_jobs,
    power_error,
    running_jobs,
    sched_params,
)
from pbf.validate.scale_inside import sdiag_numbers, set_scheduler_parameters

# slurm-wlm 22.05.8's sdiag right after 'sdiag -r', before any backfill cycle (no Mean / Depth Mean lines)
BEFORE = """*******************************************************
sdiag output at Sat Nov 28 00:10:12 2026 (1795824612)
Data since      Sat Nov 28 00:10:09 2026 (1795824609)
*******************************************************
Server thread count:  3

Backfilling stats
\tTotal backfilled jobs (since last slurm start): 0
\tTotal backfilled jobs (since last stats cycle start): 0
\tTotal backfilled heterogeneous job components: 0
\tTotal cycles: 0
\tLast cycle when: Sat Nov 28 00:09:52 2026 (1795824592)
\tLast cycle: 0
\tMax cycle:  0
\tLast depth cycle: 0
\tLast depth cycle (try sched): 0
\tLast queue length: 0
\tLast table size: 1

Latency for 1000 calls to gettimeofday(): 24 microseconds
"""

AFTER = """*******************************************************
sdiag output at Sat Nov 28 00:11:12 2026 (1795824672)
Data since      Sat Nov 28 00:10:09 2026 (1795824609)
*******************************************************
Backfilling stats
\tTotal backfilled jobs (since last slurm start): 0
\tTotal backfilled jobs (since last stats cycle start): 0
\tTotal backfilled heterogeneous job components: 0
\tTotal cycles: {cycles}
\tLast cycle when: Sat Nov 28 00:10:55 2026 (1795824655)
\tLast cycle: {last}
\tMax cycle:  1142073
\tMean cycle: {mean}
\tLast depth cycle: {depth}
\tLast depth cycle (try sched): {depth}
\tDepth Mean: {depth}
\tDepth Mean (try depth): {depth}
\tLast queue length: 1000
\tQueue length mean: 1000
\tLast table size: 11
\tMean table size: 11

Latency for 1000 calls to gettimeofday(): 24 microseconds
"""


def test_sdiag_numbers_and_the_known_refusal():
    assert sdiag_numbers(BEFORE)["Total cycles"] == 0
    after = sdiag_numbers(AFTER.format(cycles=2, last=1046078, mean=1094075, depth=500))
    assert after["Last cycle"] == 1046078 and after["Last depth cycle (try sched)"] == 500
    assert after["Max cycle"] == 1142073
    # a snapshot taken before any cycle (sdiag leaves the mean lines out then) is skipped and counted;
    # alone, there is nothing to fit
    with pytest.raises(SdiagError, match="before any backfill cycle"):
        read_sdiag(BEFORE)
    snaps = read_sdiag(BEFORE, AFTER.format(cycles=2, last=1046078, mean=1094075, depth=500))
    assert len(snaps) == 1 and snaps.skipped == 1


def test_fit_folder_leaves_out_snapshots_before_the_first_cycle(tmp_path):
    files = []
    (tmp_path / "sdiag-001.txt").write_text(BEFORE)
    files.append(str(tmp_path / "sdiag-001.txt"))
    for k, (n, us) in enumerate([(500, 1_000_000), (1000, 2_100_000), (5000, 11_000_000), (10000, 23_000_000)], 2):
        p = tmp_path / f"sdiag-{k:03d}.txt"
        p.write_text(AFTER.format(cycles=1, last=us, mean=us, depth=n))
        files.append(str(p))
    fit = fit_folder(files)
    assert fit["all_files"] == "read"              # (the series is read whole: the first snapshot skipped)
    assert [os.path.basename(f) for f, _ in fit["refused"]] == ["sdiag-001.txt"]
    assert fit["snapshots"] == 4 and 1.0 < fit["power"] < 1.1
    assert fit["power_se"] > 0 and fit["power_se"] < 0.05


def test_power_error():
    exact = [(n, 3.0 * n ** 1.2) for n in (10, 100, 1000, 10000)]
    se, _ = power_error(exact)
    assert se == pytest.approx(0.0, abs=1e-9)
    rng = np.random.default_rng(1)
    noisy = [(n, 3.0 * n ** 1.2 * math.exp(rng.normal(0, 0.2))) for n in (10, 100, 1000, 10000) * 3]
    se, _ = power_error(noisy)
    assert 0.01 < se < 0.2
    assert math.isnan(power_error([(10, 1.0), (10, 2.0), (10, 3.0)])[0])


def test_case_figures_one_figure_per_cycle(tmp_path):
    d = tmp_path / "d1000-t500"
    d.mkdir()
    head = ("file,t_s,epoch,cycles,last_cycle_us,last_depth,last_depth_try,queue_len,load1,machine_busy_pct,"
            "slurmctld_cpu_pct,poked,bckfl_cpu_s\n")
    rows = ["sdiag-001.txt,3,0,0,0,0,0,0,1.0,50,0,0,10.00",
            "sdiag-002.txt,6,0,1,1000000,500,500,1000,1.5,60,30,1,11.00",
            "sdiag-003.txt,9,0,1,1000000,500,500,1000,1.5,60,0,0,11.00",
            "sdiag-004.txt,12,0,2,3000000,1000,1000,1000,2.0,70,40,1,13.00"]
    (d / "samples.csv").write_text(head + "\n".join(rows) + "\n")
    f = case_figures(str(d))
    assert f["cycles_seen"] == 2 and f["mean_tried"] == 750
    assert f["us_per_test"] == pytest.approx(4_000_000 / 1500)
    assert f["max_cycle_ms"] == 3000
    assert [os.path.basename(x) for x in f["cycle_end_files"]] == ["sdiag-002.txt", "sdiag-004.txt"]
    # the backfill thread's CPU: only the second cycle is bracketed by samples at cycle ends (2 s, 1000 tries)
    assert f["cpu_cycles"] == 1 and f["cpu_us_per_test"] == pytest.approx(2000)


def test_beocat_site_conf_and_jobs(tmp_path):
    site = tmp_path / "site.conf"
    nodes = beocat_site_conf(str(site), max_job_test=UNLIMITED_TEST)
    text = site.read_text()
    assert len(nodes) == 299 and text.count("NodeName=") == 299
    assert sum(n.gpus for n in nodes) == 157
    assert f"SchedulerParameters=bf_max_job_test={UNLIMITED_TEST}" in text
    assert "SelectType=select/cons_tres" in text and "SchedulerType=sched/backfill" in text
    run = running_jobs(nodes, "normal", "/w")
    by_node = {}
    for args in run:
        node = next(a for a in args if a.startswith("--nodelist=")).split("=")[1]
        cores = int(next(a for a in args if a.startswith("--ntasks=")).split("=")[1])
        limit = int(next(a for a in args if a.startswith("--time=")).split("=")[1])
        sleep = int(args[-1].split()[-1])
        assert limit >= 360 and sleep == limit * 60 - 120
        by_node[node] = by_node.get(node, 0) + cores
    assert by_node == {n.name: n.cores for n in nodes}
    assert 300 <= len(run) <= 500
    pend = pending_jobs(50, "normal", "/w", skip=10)
    assert len(pend) == 50 and all(a[-1].startswith("--wrap=sleep ") for a in pend)
    assert pend == pending_jobs(50, "normal", "/w", skip=10)          # the same draw every time
    assert sched_params(500) == "bf_max_job_test=500"


def test_private_conf_of_the_site_and_parameters_rewritten(tmp_path):
    from pbf.validate.slurm_config import write_private_conf
    site = tmp_path / "site.conf"
    beocat_site_conf(str(site), max_nodes=40)
    private = write_private_conf(str(site), str(tmp_path / "scratch"), debug_flags="")
    assert len(private.nodes) == 40 and private.partition == "normal"
    set_scheduler_parameters(private.path, "bf_max_job_test=1000000")
    lines = open(private.path).read().splitlines()
    assert [x for x in lines if x.startswith("SchedulerParameters")] == ["SchedulerParameters=bf_max_job_test=1000000"]
    assert not any(x.startswith("DebugFlags") for x in lines)
