"""Jobs inside an advance reservation in the compiled core (ext/resv_inside.pxd): both node searches held
to their oracles (pbf.reference.resv_ref) on random scenarios with jobs inside reservations, the worked
example replayed, a job naming a reservation the dump does not hold refused, and a replay without jobs
inside any reservation unchanged by the names."""
import datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_resv_inside import inside_scenarios

import pbf
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_reservations import SiteReservations

from scheduling import node_table, replay_checked


def _stamp(t):
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%S")


def _dump(path, windows, names):
    out = []
    for s, e, idx, name in windows:
        out.append(f"ReservationName={name} StartTime={_stamp(s)} EndTime={_stamp(e)} Duration=1\n"
                   f"   Nodes={','.join(names[i] for i in idx)} NodeCnt={len(idx)} Flags=IGNORE_JOBS\n")
    path.write_text("\n".join(out))


def _table(jobs):
    table = node_table(jobs)
    legend = {name: k + 1 for k, name in enumerate(sorted({j["resv"] for j in jobs if j.get("resv")}))}
    table.columns["reservation"] = np.array([legend.get(j.get("resv"), 0) for j in jobs], dtype=np.int64)
    for name, n in legend.items():
        table.header.add_line(f" Reservation: {n} {name}")
    return table


def _config(nodes, dump, search, reservations, resolution, window, first_fit):
    return pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search=search,
                            backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                            node_choice="first-fit" if first_fit else "best-fit",
                            reservations=SiteReservations(str(dump), known=tuple(n.name for n in nodes)))




@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(case=inside_scenarios())
def test_jobs_inside_reservations_follow_the_oracle(search, case, tmp_path):
    nodes, jobs, reservations, first_fit, resolution, window, windows = case
    if search == "exact":
        resolution = window = 0
    dump = tmp_path / "resv.txt"
    _dump(dump, windows, [n.name for n in nodes])
    got = replay_checked(_table(jobs), _config(nodes, dump, search, reservations, resolution, window, first_fit))
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"], resv=j.get("resv"),
                req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
           for j in jobs]
    if search == "slurm":
        want = slurm_node_replay(nodes, ref, reservations, window=window, resolution=resolution, first_fit=first_fit,
                                 windows=windows)
    else:
        want = node_replay(nodes, ref, reservations, first_fit, windows=windows)
    assert got.jobs["start"].tolist() == want["start"]


@pytest.mark.parametrize("search", ["exact", "slurm"])
@pytest.mark.parametrize("reservations", [1, None])
def test_the_worked_example_replayed(search, reservations, tmp_path):
    # two 4-core nodes; R holds n1 from 100 to 500 (tests/test_resv_inside.py, on the oracles)
    nodes = [Node(f"n{i}", 4, 4000) for i in range(2)]
    rows = [(0, 4, 1000, 1000, None), (10, 4, 200, 300, "R"), (20, 2, 50, 50, None), (30, 4, 100, 100, "R"),
            (40, 2, 100, 100, "R"), (50, 4, 200, 200, "R"), (60, 4, 100, 100, None)]
    jobs = [dict(submit=s, est=est, run=run, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=(), resv=r)
            for s, c, run, est, r in rows]
    dump = tmp_path / "resv.txt"
    _dump(dump, [(100, 500, [1], "R")], ["n0", "n1"])
    got = replay_checked(_table(jobs), _config(nodes, dump, search, reservations, 0, 0, False))
    assert got.jobs["start"].tolist() == [0, 100, 20, 300, 400, -1, 500]
    assert got.jobs["nodes"].tolist()[:5] == ["n0", "n1", "n1", "n1", "n1"]


def test_a_job_naming_a_reservation_the_dump_does_not_hold_is_refused(tmp_path):
    nodes = [Node("n0", 4, 4000)]
    jobs = [dict(submit=0, est=10, run=10, cores=1, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=(), resv="nope")]
    dump = tmp_path / "resv.txt"
    _dump(dump, [(100, 500, [0], "R")], ["n0"])
    with pytest.raises(ConfigError, match="Reservation 'nope': no reservation of that name in .*resv.txt"):
        pbf.replay(_table(jobs), _config(nodes, dump, "exact", 1, 0, 0, False))


def test_the_cli_replays_jobs_inside_a_reservation(tmp_path):
    # n1 reserved 00:10-01:00 for "proj": job 2 (inside) waits for it and runs on n1; job 3 (outside,
    # 40 min on one node) would run into it on n1, so it waits for job 1's n0
    import json
    import subprocess
    import sys
    conf = tmp_path / "slurm.conf"
    conf.write_text("SelectType=select/cons_tres\nNodeName=n[0-1] CPUs=4 RealMemory=8000\n"
                    "PartitionName=p Nodes=n[0-1] Default=YES MaxTime=UNLIMITED\n")
    sacct = tmp_path / "jobs.sacct"
    sacct.write_text("JobID|User|Partition|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|"
                     "Reservation\n"
                     "1|u|p|2023-01-01T00:00:00|2023-01-01T00:00:00|3000|60|4|1|1000M|COMPLETED|\n"
                     "2|u|p|2023-01-01T00:00:10|2023-01-01T00:10:00|600|20|4|1|1000M|COMPLETED|proj\n"
                     "3|u|p|2023-01-01T00:00:20|2023-01-01T00:50:00|600|40|4|1|1000M|COMPLETED|\n")
    resv = tmp_path / "resv.txt"
    resv.write_text("ReservationName=proj StartTime=2023-01-01T00:10:00 EndTime=2023-01-01T01:00:00 "
                    "Nodes=n1 Flags=IGNORE_JOBS\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pbf", "replay", str(sacct), "--slurm-conf", str(conf), "--slurm-reservations",
           str(resv), "--quiet", "--out", str(out), "--record-nodes"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["reservations"]["read"]["jobs_inside"] == {"proj": 1}
    rows = [r.split(",") for r in (out / "jobs.csv").read_text().splitlines()]
    head = rows[0]
    start = [int(float(r[head.index("start")])) for r in rows[1:]]
    nodes = [r[head.index("nodes")] for r in rows[1:]]
    assert start == [0, 600, 3000] and nodes == ["n0", "n1", "n0"]
    bad = tmp_path / "bad.sacct"
    bad.write_text(sacct.read_text().replace("|proj\n", "|other\n"))
    got = subprocess.run([cmd[0], "-m", "pbf", "replay", str(bad)] + cmd[5:], capture_output=True, text=True)
    assert got.returncode != 0 and "bad.sacct, line 3: Reservation 'other': no reservation of that name" in got.stderr


@pytest.mark.parametrize("clock", ["slurm-sim", "free"])
def test_a_job_still_waiting_when_its_reservation_ends_is_rejected_and_the_replay_ends(tmp_path, clock):
    # job 2 waits behind job 1 inside r2 (a1, +2 s for 10 s) and is still pending at its end; job 3 names r2
    # after it ended. Slurm holds both for good (RESV_DEL_HOLD); pbf rejects them, saying why, and the
    # replay ends (before: a slurm-sim replay's main-scheduler timer ran on to the pass limit)
    from dataclasses import replace

    from pbf.slurm_settings import slurm_settings
    from pbf.validate.jobs import HarnessJob, pbf_table
    from pbf.validate.reservation import parse_reservation, pbf_reservation
    conf = str(Path(__file__).resolve().parent / "data" / "slurm_harness" / "small4.conf")
    nodes = ("a1", "a2", "b1", "g1")
    spec = parse_reservation("Nodes=a1 StartTime=+2 Duration=10 Flags=none Name=r2", nodes)
    resv, _ = pbf_reservation(spec, None, str(tmp_path), nodes, 1.0)
    jobs = [HarnessJob(id=1, submit=0, run=50, limit_min=2, cores=8, reservation="r2"),
            HarnessJob(id=2, submit=1, run=5, limit_min=1, cores=8, reservation="r2"),
            HarnessJob(id=3, submit=30, run=5, limit_min=1, cores=1, reservation="r2")]
    config = replace(slurm_settings(conf, None).config, reservations=resv, max_passes=5000)
    if clock == "free":
        config = replace(config, clock="free")
    got = pbf.replay(pbf_table(jobs), config)
    assert got.jobs["start"].tolist() == [2, -1, -1]
    assert got.label("state", got.jobs["state"]).tolist()[1:] == ["rejected", "rejected"]
    assert got.label("reject_reason", got.jobs["reject_reason"]).tolist()[1:] == [
        "its reservation ended before it started"] * 2


def test_a_job_whose_reservation_has_not_begun_takes_its_nodes_out_of_the_main_pass(tmp_path):
    # small4: a1, b1 and g1 are full to +300 s; a2 is reserved from +120 s for r (Flags=none). At +5 s
    # job 4 (inside r) and job 5 (8 cores, a 1-minute limit: only a2 can hold it, and it would end before
    # r begins) arrive. Job 4 comes first in the queue; its reservation has not begun, so Slurm's main
    # scheduler takes a2 out of that pass (_schedule, ESLURM_RESERVATION_NOT_USABLE): job 5 waits for
    # the backfill cycle, which starts it on a2. Job 4 starts in r at +120 s.
    from dataclasses import replace

    from pbf.slurm_settings import slurm_settings
    from pbf.validate.jobs import HarnessJob, pbf_table
    from pbf.validate.reservation import parse_reservation, pbf_reservation
    conf = str(Path(__file__).resolve().parent / "data" / "slurm_harness" / "small4.conf")
    nodes = ("a1", "a2", "b1", "g1")
    spec = parse_reservation("Nodes=a2 StartTime=+120 Duration=120 Flags=none Name=r", nodes)
    resv, _ = pbf_reservation(spec, None, str(tmp_path), nodes, 1.0)
    jobs = [HarnessJob(id=1, submit=0, run=300, limit_min=6, cores=8, features=("avx2",)),
            HarnessJob(id=2, submit=0, run=300, limit_min=6, cores=4),
            HarnessJob(id=3, submit=0, run=300, limit_min=6, cores=4),
            HarnessJob(id=4, submit=5, run=10, limit_min=1, cores=1, reservation="r"),
            HarnessJob(id=5, submit=5, run=30, limit_min=1, cores=8)]
    config = replace(slurm_settings(conf, None).config, reservations=resv, record_nodes=True)
    got = pbf.replay(pbf_table(jobs), config)
    nodes_of = list(got.jobs["nodes"])
    assert nodes_of[:3] == ["a1", "b1", "g1"] and nodes_of[4] == "a2"
    assert got.jobs["start"].tolist()[3:] == [120, 5]
    # at +5 s the main scheduler's pass starts nothing (a2 is out of it); the backfill cycle of the same
    # second starts job 5 (before, the main pass started it)
    p = got.passes
    at5 = [(kind, int(n)) for t, kind, n in zip(p["time"], got.label("kind", p["kind"]).tolist(), p["started"])
           if t == 5]
    assert at5 == [("quick", 0), ("full", 1)], at5
