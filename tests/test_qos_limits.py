"""QOS limits on running jobs (pbf.qos, ext/qos_limits.pxd): MaxJobsPU, MaxTRESPU cpu, GrpJobs and
GrpTRES cpu hold a job that would go over them (passed over as licenses are); a job alone over a cpu
limit is rejected. Both node planners held to their oracles (pbf.reference: ``Holds``), the units
planner on a small case, and the reader."""
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.cluster import Cluster, Node
from pbf.codes import JobState, RejectReason
from pbf.errors import TraceFormatError
from pbf.qos import read_qos_limits
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.workload.jobs import JobTable

from scheduling import busy_node_scenarios

HEAD = "Name|Priority|MaxJobsPU|MaxTRESPU|GrpJobs|GrpTRES|MaxWall|MaxSubmitPU\n"


def _table(jobs):
    n = len(jobs)
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=col("submit"), run=col("run"),
                                 req_procs=col("cores"), req_time=col("est"), mem_core_mb=col("mpc"),
                                 mem_node_mb=col("mpn"), gpus=col("gpus"), nodes_min=col("nmin"),
                                 nodes_max=col("nmax"), user=col("user"), queue=col("queue"))
    table.features = ["&".join(j["feat"]) for j in jobs]
    return table


def _dump(limits):
    fd, path = tempfile.mkstemp(suffix=".qos")
    with os.fdopen(fd, "w") as fh:
        fh.write(HEAD + "".join(f"{name}|10|{a or ''}|{f'cpu={b}' if b else ''}|{c or ''}|"
                                f"{f'cpu={d},mem=10G' if d else ''}|2-00:00:00|\n"
                                for name, (a, b, c, d) in limits.items()))
    return path


@st.composite
def qos_scenarios(draw):
    case = draw(busy_node_scenarios())
    limits = {"1": (draw(st.integers(0, 3)), draw(st.sampled_from([0, 8, 16])), draw(st.integers(0, 4)),
                    draw(st.sampled_from([0, 12, 24]))),
              "2": (draw(st.integers(0, 2)), 0, 0, draw(st.sampled_from([0, 10])))}
    for job in case[1]:
        job["user"] = draw(st.integers(1, 3))
        job["queue"] = draw(st.sampled_from([1, 1, 2, 3]))      # (QOS 3: no limits)
    return case + (limits,)


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=qos_scenarios())
def test_qos_limits_follow_the_oracle(search, case):
    nodes, jobs, reservations, first_fit, resolution, window, limits = case
    if search == "exact":
        resolution = window = 0
    path = _dump(limits)
    try:
        config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search=search, qos_limits=path,
                                  backfill=pbf.Backfill(reservations=reservations, resolution=resolution,
                                                        window=window),
                                  node_choice="first-fit" if first_fit else "best-fit")
        got = pbf.replay(_table(jobs), config)
    finally:
        os.unlink(path)
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"], user=j["user"], qos=str(j["queue"]),
                req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
           for j in jobs]
    if search == "slurm":
        want = slurm_node_replay(nodes, ref, reservations, window=window, resolution=resolution, first_fit=first_fit,
                                 qos_limits=limits)
    else:
        want = node_replay(nodes, ref, reservations, first_fit, qos_limits=limits)
    assert got.jobs["start"].tolist() == want["start"]
    # at every start, no user and no QOS over a limit
    start, end = got.jobs["start"], got.jobs["end"]
    for t in sorted({int(s) for s in start if s >= 0}):
        run = [j for j, s, e in zip(jobs, start, end) if 0 <= s <= t < e]
        for name, (jpu, cpu, gj, gc) in limits.items():
            mine = [j for j in run if str(j["queue"]) == name]
            assert not gj or len(mine) <= gj
            assert not gc or sum(j["cores"] for j in mine) <= gc
            for u in {j["user"] for j in mine}:
                theirs = [j for j in mine if j["user"] == u]
                assert not jpu or len(theirs) <= jpu
                assert not cpu or sum(j["cores"] for j in theirs) <= cpu


def test_a_user_at_max_jobs_waits_and_the_jobs_after_it_do_not(tmp_path):
    # QOS normal: MaxJobsPU=1. User 1's second job waits for the first; user 2's job starts at once;
    # a job asking more cores than MaxTRESPU is rejected
    dump = tmp_path / "qos.txt"
    dump.write_text(HEAD + "1|0|1|cpu=4||||\n")
    jobs = [dict(submit=0, est=100, run=100, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=u, queue=1)
            for c, u in ((2, 1), (2, 1), (2, 2), (5, 3))]
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=Cluster.of_nodes([Node("n1", 16, 64000)], name="c"),
                                                    qos_limits=str(dump)))
    assert got.jobs["start"].tolist()[:3] == [0, 100, 0]
    assert got.jobs["state"][3] == JobState.JS_REJECTED and got.jobs["reject_reason"][3] == RejectReason.RJ_QOS_LIMIT
    q = got.summary["qos_limits"]
    assert q["held"] >= 1 and q["limits"]["1"]["max_jobs_pu"] == 1 and q["jobs_without_limits"] == 0


def test_the_dump_as_sacctmgr_writes_it(tmp_path):
    dump = tmp_path / "qos.txt"
    names = ("Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|"
             "GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|"
             "MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|MaxSubmitPA|MinTRES").split("|")

    def row(**set_):
        base = {"Priority": "0", "GraceTime": "00:00:00", "PreemptMode": "cluster", "UsageFactor": "1.000000"}
        return "|".join({**base, **set_}.get(n, "") for n in names) + "\n"
    dump.write_text("|".join(names) + "\n"
                    + row(Name="normal", GrpTRES="cpu=1000", GrpJobs="50", MaxWall="2-00:00:00",
                          MaxTRESPU="cpu=256,mem=1T", MaxJobsPU="20", MaxSubmitPU="100")
                    + row(Name="debug", Priority="100", MaxWall="00:30:00", MaxSubmitPU="4"))
    q = read_qos_limits(dump)
    assert q.limits == {"normal": (20, 256, 50, 1000), "debug": (0, 0, 0, 0)}
    assert set(q.not_modelled) == {"QOS normal: MaxTRESPU mem=1T"}
    assert q.max_wall == {"normal": 2880, "debug": 30} and q.max_submit == {"normal": 100, "debug": 4}
    dump.write_text(HEAD + "normal|0|two|||||\n")
    with pytest.raises(TraceFormatError, match="line 2.*MaxJobsPU"):
        read_qos_limits(dump)
