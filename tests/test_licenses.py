"""Cluster-wide licenses (pbf.licenses, ext/licenses.pxd): a running job holds its licenses; a job whose
licenses are not all free is passed over (Slurm 22.05 without bf_licenses: no start, no reservation,
the jobs after it not blocked); a job asking more than the cluster has, or a kind it lacks, is
rejected. Both node planners held to their oracles (which count licenses themselves); the units
planner and Slurm's main scheduler on small cases; the readers."""
import dataclasses
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf._core import Core
from pbf.cluster import Cluster, Node
from pbf.codes import JobState, RejectReason
from pbf.errors import ConfigError
from pbf.licenses import license_requests, parse_licenses
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.workload.sacct import read_sacct

from scheduling import busy_node_scenarios, node_table, replay_checked


@st.composite
def licensed_scenarios(draw):
    case = draw(busy_node_scenarios())
    licenses = {"matlab": draw(st.integers(0, 3)), "fluent": draw(st.integers(1, 4))}
    for job in case[1]:
        lic = {}
        if draw(st.integers(0, 2)) == 0:
            lic["matlab"] = draw(st.integers(1, 2))
        if draw(st.integers(0, 3)) == 0:
            lic["fluent"] = draw(st.integers(1, 5))
        if draw(st.integers(0, 15)) == 0:
            lic["abaqus"] = 1                      # (a kind the cluster does not have)
        job["lic"] = lic
    return case + (licenses,)


def _text(lic):
    return ",".join(f"{n}:{c}" for n, c in lic.items())


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=licensed_scenarios())
def test_licensed_jobs_follow_the_oracle(search, case):
    nodes, jobs, reservations, first_fit, resolution, window, licenses = case
    if search == "exact":
        resolution = window = 0
    cluster = dataclasses.replace(Cluster.of_nodes(nodes, name="h"), licenses=tuple(licenses.items()))
    table = node_table(jobs)
    table.licenses = [_text(j["lic"]) for j in jobs]
    config = pbf.ReplayConfig(cluster=cluster, node_search=search,
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit")
    got = replay_checked(table, config)
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"], lic=j["lic"],
                req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
           for j in jobs]
    if search == "slurm":
        want = slurm_node_replay(nodes, ref, reservations, window=window, resolution=resolution, first_fit=first_fit,
                                 licenses=licenses)
    else:
        want = node_replay(nodes, ref, reservations, first_fit, licenses=licenses)
    assert got.jobs["start"].tolist() == want["start"]
    # never more licenses in use than the cluster has
    start, end = got.jobs["start"], got.jobs["end"]
    for t in sorted({int(s) for s in start if s >= 0}):
        for name, total in licenses.items():
            used = sum(j["lic"].get(name, 0) for j, s, e in zip(jobs, start, end) if 0 <= s <= t < e)
            assert used <= total


def _units_core(licenses, jobs, trigger="event"):
    # a cluster of 4 interchangeable units, jobs (submit, units, run, licenses)
    core = Core(4)
    core.configure(trigger=1 if trigger == "interval" else 0, bf_interval=1000)
    sub, units, run = (np.array([j[k] for j in jobs], dtype=np.int64) for k in range(3))
    core.load_trace(sub, units, run, run)
    kinds, totals, asked = license_requests(tuple(licenses.items()), [j[3] for j in jobs])
    core.set_licenses(totals)
    core.set_job_licenses(0, asked)
    assert core.planner == "units"
    core.replay()
    state, start, *_ = core.job_arrays()
    return state, start


def test_the_units_planner_passes_over_a_job_waiting_for_licenses():
    jobs = [(0, 1, 10, "matlab:1"), (0, 1, 10, "matlab:1"), (0, 1, 10, ""), (0, 4, 5, ""), (0, 1, 3, "matlab:2")]
    state, start = _units_core({"matlab": 1}, jobs)
    # the second matlab job waits for the first's license, not blocking the job after it; the 4-unit
    # job then waits for the units; the job asking 2 of a kind the cluster has 1 of is rejected
    assert start.tolist()[:4] == [0, 10, 0, 20]
    assert state[4] == JobState.JS_REJECTED


def test_slurms_main_scheduler_goes_on_past_a_job_waiting_for_licenses():
    # the interval trigger: a full pass every 1000 s, the main scheduler's quick pass at each event
    jobs = [(0, 1, 100, "matlab:1"), (5, 1, 10, "matlab:1"), (6, 1, 10, ""), (6, 1, 10, "")]
    state, start = _units_core({"matlab": 1}, jobs, trigger="interval")
    assert start.tolist()[2:] == [6, 6]
    assert start[1] >= 100


def test_a_job_asking_a_license_the_cluster_lacks_is_rejected_saying_so():
    nodes = [Node("a", 4, 8000), Node("b", 4, 8000)]
    cluster = dataclasses.replace(Cluster.of_nodes(nodes, name="c"), licenses=(("matlab", 2),))
    jobs = [dict(submit=0, est=10, run=10, cores=1, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=()) for _ in range(3)]
    table = node_table(jobs)
    table.licenses = ["abaqus:1", "matlab:3", "matlab:2"]
    got = pbf.replay(table, pbf.ReplayConfig(cluster=cluster))
    assert got.jobs["state"].tolist() == [JobState.JS_REJECTED, JobState.JS_REJECTED, JobState.JS_DONE]
    assert got.jobs["reject_reason"][0] == RejectReason.RJ_LICENSES
    assert pbf.codes.label("reject_reason", RejectReason.RJ_LICENSES) == "asks licenses the cluster does not have"


def test_license_lists_as_slurm_writes_them():
    assert parse_licenses("matlab:2,fluent*10,foo,matlab@db:1", "x") == {"matlab": 2, "fluent": 10, "foo": 1,
                                                                           "matlab@db": 1}
    assert parse_licenses("a:1|b:2", "x") == {"a": 1}
    for bad in ("matlab:two", "matlab:-1", "a b:1", "matlab:99999999999"):
        with pytest.raises(ConfigError, match="x: "):
            parse_licenses(bad, "x")


def test_slurm_conf_and_cluster_files_give_licenses(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("Licenses=matlab:2,fluent*4\nNodeName=n[1-2] CPUs=8 RealMemory=16000\n"
                    "PartitionName=p Nodes=ALL Default=YES\n")
    assert Cluster.from_slurm_conf(str(conf)).licenses == (("matlab", 2), ("fluent", 4))
    from pbf.slurm_settings import slurm_settings
    settings = slurm_settings(str(conf))
    assert "matlab:2" in settings.mapped["Licenses"]
    conf.write_text("Licenses=matlab:lots\nNodeName=n1 CPUs=8\nPartitionName=p Nodes=ALL Default=YES\n")
    with pytest.raises(ConfigError, match=r"slurm.conf, line 1: Licenses: 'matlab:lots'"):
        Cluster.from_slurm_conf(str(conf))
    toml = tmp_path / "c.toml"
    toml.write_text(textwrap.dedent("""\
        name = "t"
        licenses = { matlab = 2 }
        [[nodes]]
        name = "n1"
        cores = 8
        """))
    assert Cluster.load(str(toml)).licenses == (("matlab", 2),)
    toml.write_text('name = "t"\nlicenses = { matlab = -1 }\n[[nodes]]\nname = "n1"\ncores = 8\n')
    with pytest.raises(ConfigError, match="field licenses"):
        Cluster.load(str(toml))


def test_a_sacct_dumps_licenses_reach_the_plan(tmp_path):
    dump = tmp_path / "jobs.sacct"
    head = "JobID|Submit|Start|End|Elapsed|Timelimit|ReqCPUS|ReqMem|ReqTRES|Licenses|State|User|Partition\n"
    row = "{i}|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|01:00:00|1|1G|cpu=1,mem=1G|{lic}|" \
          "COMPLETED|u|p\n"
    dump.write_text(head + "".join(row.format(i=i, lic=lic) for i, lic in enumerate(["matlab:1", "matlab:1", ""], 1)))
    table = read_sacct(str(dump))
    cluster = dataclasses.replace(Cluster.of_nodes([Node("n1", 8, 16000)], name="c"), licenses=(("matlab", 1),))
    got = pbf.replay(table, pbf.ReplayConfig(cluster=cluster))
    assert sorted(got.jobs["start"].tolist()) == [0, 0, 600]
