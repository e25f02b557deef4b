"""Advance reservations (pbf.slurm_reservations, ext/advance_resv.pxd): a reservation's nodes held from
its start to its end against every job. Both node planners held to their oracles (which hold the
windows themselves); the main scheduler's start-now test; the readers of scontrol and sacctmgr dumps,
their errors, repeats; the CLI end to end."""
import datetime
import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_reservations import SiteReservations, read_reservations

from scheduling import busy_node_scenarios, node_table, replay_checked


def _stamp(t):
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%S")


def _scontrol(windows, names):
    out = []
    for k, (s, e, idx) in enumerate(windows):
        nodes = ",".join(names[i] for i in idx)
        out.append(f"ReservationName=r{k} StartTime={_stamp(s)} EndTime={_stamp(e)} Duration=1\n"
                   f"   Nodes={nodes} NodeCnt={len(idx)} CoreCnt=1 Features=(null) PartitionName=(null) "
                   f"Flags=MAINT,IGNORE_JOBS\n   TRES=cpu=1\n   Users=root Groups=(null) Accounts=(null) "
                   f"Licenses=(null) State=INACTIVE BurstBuffer=(null) Watts=n/a\n   MaxStartDelay=(null)\n")
    return "\n".join(out)


@st.composite
def reserved_scenarios(draw):
    case = draw(busy_node_scenarios())
    nodes, jobs = case[0], case[1]
    horizon = max(j["submit"] for j in jobs) + 300
    windows = []
    for _ in range(draw(st.integers(1, 3))):
        s = draw(st.integers(0, horizon))
        e = s + draw(st.integers(1, 40)) * draw(st.sampled_from([5, 30, 60]))
        idx = sorted(set(draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1, max_size=len(nodes)))))
        windows.append((s, e, idx))
    return case + (windows,)


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(case=reserved_scenarios())
def test_reserved_nodes_follow_the_oracle(search, case, tmp_path):
    nodes, jobs, reservations, first_fit, resolution, window, windows = case
    if search == "exact":
        resolution = window = 0
    dump = tmp_path / "resv.txt"
    dump.write_text(_scontrol(windows, [n.name for n in nodes]))
    cluster = Cluster.of_nodes(nodes, name="h")
    config = pbf.ReplayConfig(cluster=cluster, node_search=search,
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit",
                              reservations=SiteReservations(str(dump), known=tuple(n.name for n in nodes)))
    got = replay_checked(node_table(jobs), config)
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"],
                req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
           for j in jobs]
    if search == "slurm":
        want = slurm_node_replay(nodes, ref, reservations, window=window, resolution=resolution, first_fit=first_fit,
                                 windows=windows)
    else:
        want = node_replay(nodes, ref, reservations, first_fit, windows=windows)
    assert got.jobs["start"].tolist() == want["start"]
    # no job ever holds a reserved node inside its window
    recorded = got.jobs["nodes"].tolist()
    names = [n.name for n in nodes]
    for j, (s, e, text) in enumerate(zip(got.jobs["start"], got.jobs["end"], recorded)):
        if s < 0:
            continue
        used = {names.index(x) for x in str(text).split(",") if x}
        for ws, we, idx in windows:
            if s < we and ws < max(e, s + 1):
                assert not used & set(idx), (j, s, e, ws, we, idx)


def _cluster(n=2, cores=4):
    return Cluster.of_nodes([Node(f"n{i}", cores, 8000) for i in range(n)], name="c")


def _replay(jobs, windows, search="exact", **kw):
    cluster = _cluster()
    table = node_table([dict(submit=s, est=est, run=run, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=())
                        for s, est, run, c in jobs])
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/r.txt"
        with open(path, "w") as f:
            f.write(_scontrol(windows, [n.name for n in cluster.nodes]))
        config = pbf.ReplayConfig(cluster=cluster, node_search=search,
                                  reservations=SiteReservations(path, known=("n0", "n1")), **kw)
        return pbf.replay(table, config)


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_a_job_that_would_run_into_a_maintenance_waits_for_its_end(search):
    # two 4-core nodes; both reserved from 100 to 200: a 150 s job submitted at 0 would run into it
    got = _replay([(0, 150, 150, 4), (0, 50, 50, 4)], [(100, 200, [0, 1])], search)
    assert got.jobs["start"].tolist() == [200, 0]


@pytest.mark.parametrize("clock", ["free", "slurm-sim"])
def test_slurms_main_scheduler_leaves_the_reserved_nodes_out(clock):
    # one node reserved from 10 to 500: the second job would run into it there, so it waits for the
    # first job's node
    kw = dict(clock=clock) if clock == "free" else dict(clock=clock, trigger="interval")
    got = _replay([(0, 100, 100, 4), (0, 100, 100, 4)], [(10, 500, [0])], "slurm", **kw)
    start = got.jobs["start"].tolist()
    assert start == [0, 100]


def test_scontrol_one_line_and_multi_line_dumps_read_alike(tmp_path):
    multi = tmp_path / "m.txt"
    multi.write_text(textwrap.dedent("""\
        ReservationName=maint StartTime=2023-03-01T08:00:00 EndTime=2023-03-01T20:00:00 Duration=12:00:00
           Nodes=n[0-1] NodeCnt=2 CoreCnt=8 Features=(null) PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES
           TRES=cpu=8
           Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) Watts=n/a
           MaxStartDelay=(null) Comment=monthly patch day

        ReservationName=gpu StartTime=2023-03-02T00:00:00 EndTime=2023-03-03T00:00:00 Duration=1-00:00:00
           Nodes=n1 NodeCnt=1 CoreCnt=4 Features=(null) PartitionName=(null) Flags=FLEX
        """))
    one = tmp_path / "o.txt"
    one.write_text("ReservationName=maint StartTime=2023-03-01T08:00:00 EndTime=2023-03-01T20:00:00 "
                   "Duration=12:00:00 Nodes=n[0-1] NodeCnt=2 CoreCnt=8 Flags=MAINT,IGNORE_JOBS,SPEC_NODES\n"
                   "ReservationName=gpu StartTime=2023-03-02T00:00:00 EndTime=2023-03-03T00:00:00 "
                   "Duration=1-00:00:00 Nodes=n1 NodeCnt=1 CoreCnt=4 Flags=FLEX\n")
    a, fa = read_reservations(multi)
    b, fb = read_reservations(one)
    assert fa == fb == "scontrol"
    assert [(r.name, r.nodes, r.start, r.end, r.flags) for r in a] == [(r.name, r.nodes, r.start, r.end, r.flags)
                                                                      for r in b]
    assert a[0].flags == ("MAINT", "IGNORE_JOBS", "SPEC_NODES") and a[1].nodes == ("n1",)
    origin = a[0].start - 3600
    site = SiteReservations(str(multi), origin=origin, known=("n0", "n1"))
    starts, ends, idx = site.windows(_cluster(), 10 * 86400)
    assert (starts, ends, idx) == ([3600, a[1].start - origin], [3600 + 12 * 3600, a[1].end - origin], [[0, 1], [1]])
    assert site.counts["not_modelled"] == {"FLEX": 1}


def test_a_sacctmgr_history_and_its_errors(tmp_path):
    dump = tmp_path / "h.txt"
    dump.write_text("Cluster|Name|NodeName|TimeStart|TimeEnd|Flags|TRES\n"
                    "c|maint|n0|2023-01-01T00:10:00|2023-01-01T00:20:00|MAINT|cpu=4\n"
                    "c|lic||2023-01-01T00:10:00|2023-01-01T00:20:00||license/matlab=2\n")
    recs, fmt = read_reservations(dump)
    assert fmt == "sacctmgr" and [r.name for r in recs] == ["maint", "lic"]
    site = SiteReservations(str(dump), origin=_epoch("2023-01-01T00:00:00"), known=("n0", "n1"))
    assert site.windows(_cluster(), 86400) == ([600], [1200], [[0]])
    assert site.counts["no_nodes"] == 1
    default = tmp_path / "d.txt"
    default.write_text("Cluster|Name|TRES|TimeStart|TimeEnd|UnusedWall\nc|m|cpu=4|2023-01-01T00:10:00|"
                       "2023-01-01T00:20:00|0\n")
    with pytest.raises(ConfigError, match=r"d\.txt, line 1: the header has no nodename column"):
        read_reservations(default)
    bad = tmp_path / "b.txt"
    bad.write_text("Name|NodeName|TimeStart|TimeEnd\nm|n0|2023-01-01 00:10|2023-01-01T00:20:00\n")
    with pytest.raises(ConfigError, match=r"b\.txt, line 2: TimeStart '2023-01-01 00:10': expected a time"):
        read_reservations(bad)
    unknown = tmp_path / "u.txt"
    unknown.write_text("Name|NodeName|TimeStart|TimeEnd\nm|n9|2023-01-01T00:10:00|2023-01-01T00:20:00\n")
    with pytest.raises(ConfigError, match=r"u\.txt, line 2: Nodes 'n9': a node the slurm.conf does not name"):
        SiteReservations(str(unknown), known=("n0", "n1")).windows(_cluster(), 86400)
    backwards = tmp_path / "e.txt"
    backwards.write_text("ReservationName=x StartTime=2023-01-01T00:20:00 EndTime=2023-01-01T00:10:00 Nodes=n0\n")
    with pytest.raises(ConfigError, match=r"e\.txt, line 1: reservation 'x' ends"):
        SiteReservations(str(backwards), known=("n0", "n1")).windows(_cluster(), 86400)
    junk = tmp_path / "j.txt"
    junk.write_text("hello world\n")
    with pytest.raises(ConfigError, match=r"j\.txt: the first line 'hello world' is neither"):
        read_reservations(junk)


def _epoch(text):
    return int((datetime.datetime.fromisoformat(text) - datetime.datetime(1970, 1, 1)).total_seconds())


def test_repeating_reservations_repeat_to_the_end_of_the_replay(tmp_path):
    dump = tmp_path / "r.txt"
    # 2023-01-06 is a Friday: WEEKDAY repeats Friday, then Monday to Friday
    dump.write_text("ReservationName=d StartTime=2023-01-06T02:00:00 EndTime=2023-01-06T03:00:00 Nodes=n0 "
                    "Flags=WEEKDAY\n")
    origin = _epoch("2023-01-06T00:00:00")
    starts, ends, _ = SiteReservations(str(dump), origin=origin, known=("n0", "n1")).windows(_cluster(), 7 * 86400)
    days = [(origin + s) // 86400 for s in starts]
    weekday = [(d + 4) % 7 for d in days]           # 0 Sunday
    assert weekday == [5, 1, 2, 3, 4] and all(e - s == 3600 for s, e in zip(starts, ends))


def test_the_cli_replays_a_site_with_its_maintenance(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("SelectType=select/cons_tres\nNodeName=n[0-1] CPUs=4 RealMemory=8000\n"
                    "PartitionName=p Nodes=n[0-1] Default=YES MaxTime=UNLIMITED\n")
    sacct = tmp_path / "jobs.sacct"
    sacct.write_text("JobID|User|Partition|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State\n"
                     "1|u|p|2023-01-01T00:00:00|2023-01-01T00:00:00|3000|60|8|2|1000M|COMPLETED\n"
                     "2|u|p|2023-01-01T00:00:10|2023-01-01T00:00:10|60|5|4|1|1000M|COMPLETED\n")
    resv = tmp_path / "resv.txt"
    resv.write_text("ReservationName=maint StartTime=2023-01-01T00:30:00 EndTime=2023-01-01T02:00:00 "
                    "Nodes=n[0-1] Flags=MAINT\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pbf", "replay", str(sacct), "--slurm-conf", str(conf), "--slurm-reservations",
           str(resv), "--quiet", "--out", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["reservations"]["read"]["windows"] == 1
    jobs = (out / "jobs.csv").read_text().splitlines()
    head = jobs[0].split(",")
    starts = [int(float(r.split(",")[head.index("start")])) for r in jobs[1:]]
    assert starts[0] >= 7200 - 0 and starts[1] < 1800
    without = subprocess.run(cmd[:7] + ["--quiet", "--slurm-reservations", str(tmp_path / "none.txt")],
                             capture_output=True, text=True)
    assert without.returncode != 0 and "--slurm-reservations" in without.stderr and "no such file" in without.stderr
