"""Association limits (pbf.associations, ext/qos_limits.pxd): MaxJobs (inherited down the account tree),
GrpJobs and GrpTRES cpu (summed up it) hold a job that would go over them; a job alone over a cpu limit,
over MaxTRESPerJob or over a MaxWall is refused at submission. Both node planners held to their oracles
(pbf.reference: ``Holds`` with each job's association path), and the reader."""
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_qos_limits import HEAD, _table

import pbf
from pbf.associations import read_assoc_limits
from pbf.cluster import Cluster, Node
from pbf.codes import JobState, RejectReason
from pbf.errors import TraceFormatError
from pbf.qos import read_qos_limits
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay

from scheduling import busy_node_scenarios

DUMP = """\
# To edit this file start with a cluster line for the new cluster
Cluster - 'snowflake':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'physics':Description='physics':Organization='sci':Fairshare=1{physics}
Account - 'chem':Description='chem':Organization='sci':Fairshare=1{chem}
Parent - 'physics'
Account - 'astro':Description='astro':Organization='sci'{astro}
User - '1':DefaultAccount='physics':Fairshare=1{u1}
User - '2':DefaultAccount='physics':Fairshare=1{u2}
Parent - 'astro'
User - '3':DefaultAccount='astro':Fairshare=1{u3}
Parent - 'chem'
User - '4':DefaultAccount='chem':Fairshare=1{u4}
"""
#: each user's account (users 1-3 under physics, 3 through astro; 4 in chem)
PATH = {1: ("physics", "root"), 2: ("physics", "root"), 3: ("astro", "physics", "root"), 4: ("chem", "root")}


def _opts(max_jobs=0, grp_jobs=0, grp_cpus=0, max_submit=0, grp_submit=0):
    return ((f":MaxJobs={max_jobs}" if max_jobs else "") + (f":GrpJobs={grp_jobs}" if grp_jobs else "")
            + (f":GrpTRES=cpu={grp_cpus},mem=100G" if grp_cpus else "")
            + (f":MaxSubmitJobs={max_submit}" if max_submit else "")
            + (f":GrpSubmitJobs={grp_submit}" if grp_submit else ""))


def _write(text, suffix=".cfg"):
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


def _effective(limits):
    # (MaxJobs, GrpJobs, GrpTRES cpu, MaxSubmitJobs, GrpSubmitJobs) of each association as the oracle
    # gets them: a user's Max* inherited from the nearest account above that sets them
    eff = {a: (0, v[1], v[2], 0, v[4]) for a, v in limits.items() if not a.startswith("u")}
    for u, path in PATH.items():
        own = limits.get(f"u{u}", (0,) * 5)

        def inherit(i, own=own, path=path):
            return own[i] or next((limits[a][i] for a in path if limits.get(a, (0,) * 5)[i]), 0)
        eff[f"u{u}"] = (inherit(0), own[1], own[2], inherit(3), own[4])
    return eff


@st.composite
def assoc_scenarios(draw):
    case = draw(busy_node_scenarios())
    lim = st.tuples(st.integers(0, 3), st.integers(0, 4), st.sampled_from([0, 10, 20]), st.integers(0, 4),
                    st.sampled_from([0, 0, 3, 6]))
    limits = {k: draw(lim) for k in ("physics", "chem", "astro", "u1", "u2", "u3", "u4")}
    qos = draw(st.none() | st.tuples(st.integers(0, 2), st.just(0), st.integers(0, 3), st.sampled_from([0, 12]),
                                     st.integers(0, 3)))
    for job in case[1]:
        job["user"] = draw(st.integers(1, 5))                   # (user 5: not in the dump)
        job["queue"] = draw(st.sampled_from([1, 1, 2]))         # (QOS 2: no limits)
    return case + (limits, qos)


def _ref_jobs(jobs, limits):
    eff = _effective(limits)
    out = []
    for j in jobs:
        path = [(f"u{j['user']}", eff[f"u{j['user']}"])] if j["user"] in PATH else []
        path += [(a, eff[a]) if a in eff else (a, (0,) * 5) for a in PATH.get(j["user"], ())]
        out.append(dict(submit=j["submit"], run=j["run"], est=j["est"], user=j["user"], qos=str(j["queue"]),
                        assoc=path, req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"],
                                                    frozenset(j["feat"]))))
    return out


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=assoc_scenarios())
def test_association_limits_follow_the_oracle(search, case):
    nodes, jobs, reservations, first_fit, resolution, window, limits, qos = case
    if search == "exact":
        resolution = window = 0
    path = _write(DUMP.format(**{k: _opts(*v) for k, v in limits.items()}))
    qos_path = None if qos is None else _write(
        HEAD + "1|0|{}|{}|{}|{}||{}\n".format(*(v or "" for v in qos[:2]), qos[2] or "",
                                             f"cpu={qos[3]}" if qos[3] else "", qos[4] or ""))
    try:
        config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search=search, assoc_limits=path,
                                  qos_limits=qos_path,
                                  backfill=pbf.Backfill(reservations=reservations, resolution=resolution,
                                                        window=window),
                                  node_choice="first-fit" if first_fit else "best-fit")
        got = pbf.replay(_table(jobs), config)
    finally:
        os.unlink(path)
        if qos_path:
            os.unlink(qos_path)
    ref = _ref_jobs(jobs, limits)
    qos_limits = None if qos is None else {"1": qos}
    if search == "slurm":
        want = slurm_node_replay(nodes, ref, reservations, window=window, resolution=resolution, first_fit=first_fit,
                                 qos_limits=qos_limits)
    else:
        want = node_replay(nodes, ref, reservations, first_fit, qos_limits=qos_limits)
    assert got.jobs["start"].tolist() == want["start"]
    # at every start, no association over a limit its QOS leaves to it
    start, end = got.jobs["start"], got.jobs["end"]
    eff = _effective(limits)
    q = qos or (0,) * 5
    for t in sorted({int(s) for s in start if s >= 0}):
        run = [j for j, s, e in zip(jobs, start, end) if 0 <= s <= t < e]
        for key, (mj, gj, gc, _, _) in eff.items():
            mine = [j for j in run if (key == f"u{j['user']}" or key in PATH.get(j["user"], ()))]
            free = [j for j in mine if j["queue"] != 1 or qos is None]
            assert not gj or len(mine if not q[2] else free) <= gj
            assert not gc or sum(j["cores"] for j in (mine if not q[3] else free)) <= gc
            assert not (mj and key.startswith("u")) or len(mine if not q[0] else free) <= mj


def _jobs(*rows):
    return [dict(submit=0, est=e, run=e, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=u, queue=1)
            for c, u, e in rows]


def test_an_account_at_grp_jobs_holds_its_users_and_not_the_others(tmp_path):
    # physics GrpJobs=1: users 1 and 2 (physics) run one at a time; user 4 (chem) starts at once;
    # MaxJobs=1 set on chem is inherited by user 4
    dump = tmp_path / "assoc.cfg"
    dump.write_text(DUMP.format(physics=":GrpJobs=1", chem=":MaxJobs=1", astro="", u1="", u2="", u3="", u4=""))
    jobs = _jobs((2, 1, 100), (2, 2, 100), (2, 4, 100), (2, 4, 100), (2, 5, 100))
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=Cluster.of_nodes([Node("n1", 16, 64000)], name="c"),
                                                    assoc_limits=str(dump)))
    assert got.jobs["start"].tolist() == [0, 100, 0, 100, 0]
    a = got.summary["assoc_limits"]
    assert a["held"] >= 2 and a["jobs_of_unknown_users"] == 1 and a["limits"]["physics"]["grp_jobs"] == 1
    assert a["limits"]["4@chem"]["max_jobs"] == 1 and a["cluster"] == "snowflake"


def test_jobs_over_a_per_job_limit_are_refused_at_submission(tmp_path):
    # user 1: MaxTRESPerJob=cpu=4 and MaxWallDurationPerJob=60 (minutes); QOS 1 MaxWall=00:30:00 comes
    # first for its jobs; physics GrpTRES=cpu=8: a 10-core job of user 2 never fits
    dump = tmp_path / "assoc.cfg"
    dump.write_text(DUMP.format(physics=":GrpTRES=cpu=8", chem="", astro="",
                                u1=":MaxTRESPerJob=cpu=4:MaxWallDurationPerJob=60", u2="", u3="", u4=""))
    qos = tmp_path / "qos.txt"
    qos.write_text(HEAD + "1|0|||||00:30:00|\n2|0|||||2-00:00:00|\n")
    jobs = _jobs((5, 1, 100), (2, 1, 3000), (10, 2, 100), (2, 4, 7200), (2, 3, 60))
    cluster = Cluster.of_nodes([Node("n1", 16, 64000)], name="c")
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=cluster, assoc_limits=str(dump)))
    rejected = (got.jobs["state"] == JobState.JS_REJECTED).tolist()
    assert rejected == [True, False, True, False, False]
    assert set(got.jobs["reject_reason"][np.array(rejected)]) == {RejectReason.RJ_QOS_LIMIT}
    assert got.summary["assoc_limits"]["refused"] == {"AssocGrpCpuLimit": 1, "AssocMaxCpuPerJobLimit": 1}
    # with the QOS dump: its MaxWall (30 minutes) refuses the 3,000 s and 7,200 s jobs of QOS 1
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=cluster, assoc_limits=str(dump), qos_limits=str(qos)))
    assert (got.jobs["state"] == JobState.JS_REJECTED).tolist() == [True, True, True, True, False]
    assert got.summary["assoc_limits"]["refused"]["QOSMaxWallDurationPerJobLimit"] == 2
    # the QOS dump alone
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=cluster, qos_limits=str(qos)))
    assert (got.jobs["state"] == JobState.JS_REJECTED).tolist() == [False, True, False, True, False]
    assert got.summary["qos_limits"]["refused"] == {"QOSMaxWallDurationPerJobLimit": 2}


def test_the_dump_as_sacctmgr_writes_it(tmp_path):
    dump = tmp_path / "assoc.cfg"
    dump.write_text(DUMP.format(physics=":GrpTRES=cpu=512,mem=1T:GrpJobs=40:MaxJobs=8:MaxSubmitJobs=20",
                                chem=":GrpTRESMins=cpu=1000", astro=":MaxWallDurationPerJob=120",
                                u1=":MaxJobs=2", u2="", u3=":Partition='gpu'", u4="")
                    + "Parent - 'astro'\nUser - '3':DefaultAccount='astro':MaxTRES=cpu=16\n")
    a = read_assoc_limits(dump)
    assert set(a.accounts) == {"root", "physics", "chem", "astro"} and a.accounts["astro"].parent == "physics"
    assert (a.users["1", "physics"].max_jobs, a.users["2", "physics"].max_jobs) == (2, 8)   # set, inherited
    assert a.users["3", "astro"].max_jobs == 8 and a.users["3", "astro"].max_wall == 120
    assert a.users["3", "astro"].max_cpus_pj == 16 and a.default_account["3"] == "astro"
    assert a.accounts["physics"].grp_cpus == 512 and a.accounts["physics"].grp_jobs == 40
    said = "\n".join(a.not_modelled)
    assert "GrpTRES mem=1T" in said and "GrpTRESMins=cpu=1000" in said and "MaxSubmit" not in said
    assert a.users["2", "physics"].max_submit == 20 and a.users["4", "chem"].max_submit == 0
    assert "partition gpu" in said
    keys, limits, parent = a.rows()
    assert parent[keys.index(("", "root"))] == -1
    assert keys[parent[keys.index(("3", "astro"))]] == ("", "astro")


def test_submission_limits_refuse_jobs_while_the_user_has_that_many_in(tmp_path):
    # QOS 1 MaxSubmitPU=2: user 1's third job at 0 is refused, the fourth (at 150, after the first ended
    # at 100) accepted; user 2 (QOS 2, no MaxSubmitPU) falls to its association's MaxSubmitJobs=1; chem
    # GrpSubmitJobs=1 refuses user 4's second job
    dump = tmp_path / "assoc.cfg"
    dump.write_text(DUMP.format(physics="", chem=":GrpSubmitJobs=1", astro="", u1=":MaxSubmitJobs=1",
                                u2=":MaxSubmitJobs=1", u3="", u4=""))
    qos = tmp_path / "qos.txt"
    qos.write_text(HEAD + "1|0||||||2\n2|0|||||||\n")
    rows = [(0, 1, 1, 100), (0, 1, 1, 200), (0, 1, 1, 200), (150, 1, 1, 100), (0, 2, 2, 100), (0, 2, 2, 100),
            (0, 4, 1, 100), (0, 4, 1, 100)]
    jobs = [dict(submit=t, est=e, run=e, cores=1, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=u, queue=q)
            for t, u, q, e in rows]
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=Cluster.of_nodes([Node("n1", 16, 64000)], name="c"),
                                                    assoc_limits=str(dump), qos_limits=str(qos)))
    refused = {int(i) for i, st_ in zip(got.jobs["id"], got.jobs["state"]) if st_ == JobState.JS_REJECTED}
    assert refused == {3, 6, 8}                                  # (ids from 1, in the rows' order)
    assert got.summary["assoc_limits"]["refused"] == {"AssocGrpSubmitJobsLimit": 1, "AssocMaxSubmitJobLimit": 1,
                                                      "QOSMaxSubmitJobPerUserLimit": 1}
    assert got.summary["qos_limits"]["refused"] == got.summary["assoc_limits"]["refused"]


def test_jobs_csv_says_the_limit_that_last_held_each_job(tmp_path):
    # QOS 1 MaxJobsPU=1, MaxTRESPU=cpu=4; physics GrpJobs=2. User 1's second job waits for its QOS,
    # user 2's second for physics (user 1's second took the place); a 5-core job of QOS 1 is refused
    dump = tmp_path / "assoc.cfg"
    dump.write_text(DUMP.format(physics=":GrpJobs=2", chem="", astro="", u1="", u2="", u3="", u4=""))
    qos = tmp_path / "qos.txt"
    qos.write_text(HEAD + "1|0|1|cpu=4||||\n2|0|||||||\n")
    rows = [(1, 1, 1, 100), (1, 1, 1, 100), (1, 2, 2, 300), (1, 2, 2, 100), (5, 3, 1, 100)]
    jobs = [dict(submit=0, est=e, run=e, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=u, queue=q)
            for c, u, q, e in rows]
    cluster = Cluster.of_nodes([Node("n1", 16, 64000)], name="c")
    got = pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=cluster, assoc_limits=str(dump), qos_limits=str(qos)))
    assert got.jobs["start"].tolist() == [0, 100, 0, 200, -1]
    assert got.jobs["limit_reason"].tolist() == ["", "QOSMaxJobsPerUserLimit", "", "AssocGrpJobsLimit",
                                                 "QOSMaxCpuPerUserLimit"]
    out = tmp_path / "out"
    got.write(out)
    assert (out / "jobs.csv").read_text().splitlines()[0].endswith(",limit_reason")
    assert "limit_reason" not in pbf.replay(_table(jobs), pbf.ReplayConfig(cluster=cluster)).jobs


@pytest.mark.parametrize("text, where", [
    ("Parent - 'root'\n", "line 1.*Cluster - name"),
    ("Cluster - 'c'\nAccount - 'a'\n", "line 2.*Parent - account"),
    ("Cluster - 'c'\nParent - 'nope'\n", "line 2: field Parent: got 'nope'"),
    ("Cluster - 'c'\nParent - 'root'\nUser - 'u':MaxJobs=many\n", "line 3: field MaxJobs: got 'many'"),
    ("Cluster - 'c'\nParent - 'root'\nAccount - 'a':GrpTRES=cpu\n", "line 3: field GrpTRES"),
    ("Cluster - 'c'\nParent - 'root'\nUser - 'u':MaxWallDurationPerJob='1:2:3:4'\n", "line 3: field MaxWall"),
    ("Cluster - 'c'\nParent - 'root'\nAccount - 'a'\nAccount - 'a'\n", "line 4: field Account.*once"),
    ("Cluster - 'c'\nCluster - 'd'\n", "line 2: field Cluster"),
    ("Cluster - 'c'\nwhat is this\n", "line 2.*sacctmgr dump"),
    ("Cluster - 'c\n", "line 1.*quotes"),
])
def test_bad_dumps_name_file_line_field_and_value(tmp_path, text, where):
    dump = tmp_path / "bad.cfg"
    dump.write_text(text)
    with pytest.raises(TraceFormatError, match=where):
        read_assoc_limits(dump)


def test_qos_max_wall_is_read_in_slurm_time_forms(tmp_path):
    qos = tmp_path / "qos.txt"
    qos.write_text(HEAD + "a|0|||||2-00:00:00|\nb|0|||||45|\nc|0|||||1-12:30|\nd|0||||||\n")
    assert read_qos_limits(qos).max_wall == {"a": 2880, "b": 45, "c": 2190}
    qos.write_text(HEAD + "a|0||||||5\n")
    assert read_qos_limits(qos).max_submit == {"a": 5}
    qos.write_text(HEAD + "a|0|||||two days|\n")
    with pytest.raises(TraceFormatError, match="line 2: field MaxWall"):
        read_qos_limits(qos)
