"""The real-Slurm harness on generic resources besides GPUs (docs/slurm-harness.md, "Generic resources
(gres4)").

gres4.conf: four 8-core nodes, three of them with NVMe drives as a GRES (a1, a2: ``nvme:1``; b1:
``nvme:2``), FIFO, backfill every second. 22 of the workload's 48 jobs (make_gres_workload.py) ask
``gres/nvme`` (1 or 2 a node), so that the drives, not the cores, hold them back. Without Slurm: the
workload is its generator's, the private Slurm's gres.conf holds the drives, and the three recorded runs
(tests/data/slurm_harness/recorded_gres4: Slurm 22.05.8) are compared again with a new pbf replay, which
plans the drives as a lane of its nodes' count word; replayed without the jobs' GRES asks, pbf misses the
runs by far.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pbf.validate import compare as cmp
from pbf.validate.jobs import load_workload, scale_jobs
from pbf.validate.slurm_config import write_private_conf

from scheduling import generator_writes, within_pct

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "gres4.conf"
WORKLOAD = DATA / "gres4_jobs.sacct"
REC = DATA / "recorded_gres4"


def test_the_workload_is_its_generators(tmp_path):
    assert generator_writes(DATA, "make_gres_workload.py", "gres4_jobs.sacct", tmp_path) == WORKLOAD.read_bytes()
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1)[0]
    asks = [dict(j.gres).get("nvme", 0) for j in jobs]
    assert len(jobs) == 48 and asks.count(1) == 17 and asks.count(2) == 5


def test_the_private_slurm_holds_the_drives(tmp_path):
    pc = write_private_conf(CONF, tmp_path / "s")
    text, gres = Path(pc.path).read_text(), Path(pc.gres_path).read_text()
    assert "GresTypes=nvme" in text and pc.not_carried == []
    assert [line for line in gres.splitlines() if line.startswith("NodeName")] == [
        "NodeName=a1 Name=nvme Count=1", "NodeName=a2 Name=nvme Count=1", "NodeName=b1 Name=nvme Count=2"]


def test_the_recorded_runs_are_compared_again(tmp_path, capsys):
    if not (REC / "slurm" / "run3").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    from pbf.cli import main
    out = tmp_path / "gres4-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out)]) == 0
    assert "3 run(s)" in capsys.readouterr().out
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 3 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 48
    assert not any("nvme" in u for u in s["not_carried_to_private_slurm"])
    assert s["pbf_end_lag_below"] == {"s": 34, "from": "runs", "runs_s": [34, 36, 32]}
    with open(out / "comparison.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    starts = [[r[k] for r in rows] for k in ("slurm_start", "slurm2_start", "slurm3_start")]
    pbf = [r["pbf_start"] for r in rows]
    # the figures docs/slurm-harness.md quotes: within 2 s, pbf against each run on its own clock (its own
    # replay: 92.4 % on average) and every pair of runs (Slurm against itself: 86.8 %); every start within
    # 60 s; AWT against the runs' mean. Run 1 (clock 11 s) loses a job's end by 3 ms at +237 s (job 23, 32 s,
    # under the 34 s threshold, seen a second late by pbf), and from +265 s its replay goes another way
    assert s["pbf_clock_phase_s"] == [11, 19, 24]
    own = [pbf, [r["pbf2_start"] for r in rows], [r["pbf3_start"] for r in rows]]
    assert [within_pct(p, x) for p, x in zip(own, starts)] == [77.1, 100.0, 100.0]
    assert s["pbf_per_run"]["pooled"]["within_share"] == pytest.approx(0.924, abs=0.001)
    assert [within_pct(starts[a], starts[b]) for a, b in ((0, 1), (0, 2), (1, 2))] == [77.1, 97.9, 85.4]
    assert [within_pct(p, x, 60) for p, x in zip(own, starts)] == [100.0, 100.0, 100.0]
    awt = s["awt_s"]
    mean = (awt["slurm"] + awt["slurm_run2"] + awt["slurm_run3"]) / 3
    assert abs(awt["pbf"] / mean - 1) <= 0.01
    # a job asking nvme runs only on nodes that have the drives it asks, on both sides
    drives = {"a1": 1, "a2": 1, "b1": 2}
    asks = {line.split("|")[0]: 2 if "gres/nvme=2" in line else 1 if "gres/nvme=1" in line else 0
            for line in WORKLOAD.read_text().splitlines()[1:]}
    for r in rows:
        ask = asks[r["job_id"]]
        for side in ("slurm_nodes", "slurm2_nodes", "slurm3_nodes", "pbf_nodes"):
            if ask:                    # (GRES are asked per node: each of the job's nodes holds them)
                assert all(drives.get(n, 0) >= ask for n in r[side].split()), (r["job_id"], side, r[side])


def test_without_the_gres_asks_pbf_misses_the_runs(tmp_path):
    if not (REC / "slurm" / "run3").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    bare = tmp_path / "bare.sacct"
    bare.write_text(WORKLOAD.read_text().replace(",gres/nvme=1", "").replace(",gres/nvme=2", ""))
    s = cmp.validate_slurm(CONF, bare, slurm_runs=REC, out=tmp_path / "bare", verbose=False)
    awt = s["awt_s"]
    mean = (awt["slurm"] + awt["slurm_run2"] + awt["slurm_run3"]) / 3
    assert awt["pbf"] / mean - 1 < -0.2 and s["pbf_vs_slurm"]["within_share"] < 0.5
