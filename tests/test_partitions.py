"""Every partition of a site's slurm.conf (pbf.slurm_partitions): the PartitionName lines read (overlaps,
DEFAULT lines, ALL, errors naming file, line, key and value), each job kept on its own partitions' nodes
(both node searches, against their oracles), the partitions' limits rejecting with Slurm's pending
reason, their default memory, PriorityJobFactor as the partition factor (each record of a job of several
partitions at its own partition's priority, against the oracles), and --slurm-conf FILE."""
import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pbf
from pbf import cli
from pbf.cluster import Node
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_conf import read_slurm_conf
from pbf.slurm_partitions import PARTITION_PREFIX, SitePartitions, partition_cluster, read_partitions
from pbf.slurm_settings import choose_partition, slurm_settings
from pbf.workload.jobs import JobTable, SwfHeader
from pbf.workload.sacct import read_sacct

from scheduling import replay_checked

NODES = "NodeName=n[1-4] CPUs=4 RealMemory=8000\n"


def _conf(tmp_path, text, name="site.conf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _site(tmp_path, text):
    conf = read_slurm_conf(_conf(tmp_path, text))
    return partition_cluster(conf)


def _table(parts, *, legend=("a", "b", "a,b"), req=None, cores=None, queue=None, qos=(), nodes_min=None,
           nodes_max=None, submit=None, run=None, mem=None):
    """Jobs naming partitions by SWF number (legend: the header's '; Partition: N name' lines)."""
    n = len(parts)
    h = SwfHeader()
    for i, name in enumerate(legend, 1):
        h.add_line(f" Partition: {i} {name}")
    for i, name in enumerate(qos, 1):
        h.add_line(f" Queue: {i} {name}")
    cols = {}
    if nodes_min is not None:
        cols["nodes_min"] = np.asarray(nodes_min)
        cols["nodes_max"] = np.asarray(nodes_max if nodes_max is not None else [0] * n)
    if mem is not None:
        cols["mem_core_mb"] = np.asarray(mem)
        cols["mem_node_mb"] = np.zeros(n, dtype=np.int64)
        cols["gpus"] = np.zeros(n, dtype=np.int64)
    return JobTable.from_arrays(header=h, job_id=np.arange(1, n + 1),
                                submit=np.asarray(submit if submit is not None else np.arange(n) * 10),
                                run=np.asarray(run if run is not None else [50] * n),
                                req_procs=np.asarray(cores if cores is not None else [2] * n),
                                req_time=np.asarray(req if req is not None else [100] * n),
                                partition=np.asarray(parts), queue=np.asarray(queue if queue is not None else [1] * n),
                                **cols)


# ---------------------------------------------------------------- reading


def test_partitions_read_with_overlaps_defaults_and_all(tmp_path):
    """Overlapping node sets, PartitionName=DEFAULT values, Nodes=ALL, the old Priority key."""
    cluster, site = _site(tmp_path, NODES + "PartitionName=DEFAULT MaxTime=1:00:00 State=UP\n"
                                            "PartitionName=a Nodes=n[1-3] Default=YES PriorityTier=5\n"
                                            "PartitionName=b Nodes=n[3-4] MaxTime=UNLIMITED MaxNodes=1 Priority=7\n"
                                            "PartitionName=c Nodes=ALL State=DRAIN DefMemPerNode=500 DefMemPerCPU=9\n")
    a, b, c = site.partitions
    assert a.nodes == ("n1", "n2", "n3") and b.nodes == ("n3", "n4") and c.nodes == ("n1", "n2", "n3", "n4")
    assert a.max_time == 3600 and b.max_time is None and b.max_nodes == 1 and a.max_nodes is None
    assert (a.priority_tier, a.priority_job_factor, b.priority_tier, b.priority_job_factor) == (5, 1, 7, 7)
    assert site.default is a and c.state == "DRAIN"
    assert (c.def_mem_per_node, c.def_mem_per_cpu) == (500, 0)       # DefMemPerNode wins, as slurmctld reads them
    assert [n.name for n in cluster.nodes] == ["n1", "n2", "n3", "n4"] and cluster.units == 16
    said = " | ".join(site.unmodelled())
    assert "DefMemPerCPU=9 (ignored: DefMemPerNode is set" in said
    assert "PriorityTier" not in said                   # (modelled: the queue's order, tests/test_partitions_main.py)


def test_the_cluster_is_the_union_of_the_partitions(tmp_path):
    """Nodes in no partition are not scheduled (slurmctld never gives them a job)."""
    cluster, site = _site(tmp_path, NODES + "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n3 Default=YES\n"
                                            "PartitionName=e Nodes=\n")
    assert [n.name for n in cluster.nodes] == ["n1", "n3"] and site.partitions[2].nodes == ()


def test_keys_read_and_not_modelled_are_listed(tmp_path):
    _, site = _site(tmp_path, NODES + "PartitionName=a Nodes=ALL Hidden=YES OverSubscribe=NO LLN=YES "
                                      "Alternate=b ExclusiveUser=NO\n")
    said = site.unmodelled()
    assert said == ["PartitionName=a: LLN=YES (line 2): not modelled by pbf",
                    "PartitionName=a: Alternate=b (line 2): not modelled by pbf"]


@pytest.mark.parametrize("line, message", [
    ("PartitionName=a Nodes=n[1-9]", "line 2: Nodes='n[1-9]': expected nodes given on NodeName lines, or ALL "
                                     "(node 'n5' has no NodeName line)"),
    ("PartitionName=a Nodes=n1\nPartitionName=a Nodes=n2", "line 3: PartitionName='a': expected each partition "
                                                           "named once (also on line 2"),
    ("PartitionName=a Nodes=n1 State=SLEEPY", "line 2: State='SLEEPY': expected UP, DOWN, DRAIN or INACTIVE"),
    ("PartitionName=a Nodes=n1 MaxTime=soon", "line 2: MaxTime='soon': expected a Slurm time"),
    ("PartitionName=a Nodes=n1 PriorityTier=70000", "line 2: PriorityTier='70000': expected a whole number from 0 "
                                                    "to 65,535"),
    ("PartitionName=a Nodes=n1 MaxNodes=-2", "line 2: MaxNodes='-2': expected a whole number"),
    ("PartitionName=a Nodes=n1 Default=maybe", "line 2: Default='maybe': expected YES or NO"),
    ("PartitionName=a Nodes=n1 DefMemPerCPU=lots", "line 2: DefMemPerCPU='lots': expected a whole number"),
    ("PartitionName=a Nodes=n1 AllowQos=a,,b", "line 2: AllowQos='a,,b': expected names separated by commas"),
])
def test_bad_partition_lines_name_the_file_line_key_and_value(tmp_path, line, message):
    path = _conf(tmp_path, NODES + line + "\n")
    with pytest.raises(ConfigError) as err:
        partition_cluster(read_slurm_conf(path))
    assert f"{path}, {message}" in str(err.value)


def test_a_partition_line_of_an_included_file_is_named_by_that_file(tmp_path):
    (tmp_path / "parts.conf").write_text("PartitionName=a Nodes=n1 MaxTime=soon\n")
    path = _conf(tmp_path, NODES + "include parts.conf\n")
    with pytest.raises(ConfigError, match=r"parts\.conf, line 1: MaxTime='soon'"):
        partition_cluster(read_slurm_conf(path))


def test_choose_partition_keeps_its_rules(tmp_path):
    path = _conf(tmp_path, NODES + "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2\n")
    assert choose_partition(path, "b")[1]["partitionname"] == "b"
    with pytest.raises(ConfigError, match="2 partitions and none has Default=YES"):
        choose_partition(path)
    with pytest.raises(ConfigError, match="no partition 'z'"):
        choose_partition(path, "z")


# ---------------------------------------------------------------- the jobs' partitions

TWO = NODES + "PartitionName=a Nodes=n[1-3] Default=YES\nPartitionName=b Nodes=n[3-4]\n"


def test_each_set_of_partitions_gets_a_feature_on_its_union(tmp_path):
    cluster, site = _site(tmp_path, TWO)
    placed = site.place(_table([1, 2, 3, 1]), cluster)
    feats = {n.name: set(n.features) for n in placed.cluster.nodes}
    assert feats == {"n1": {"partition:a"}, "n2": {"partition:a"}, "n3": {"partition:a", "partition:b"},
                     "n4": {"partition:b"}}
    # a job of a and b may use every node: it needs no feature
    assert placed.requests.features == (("partition:a",), ("partition:b",), (), ("partition:a",))
    assert placed.summary["jobs_by_partitions"] == {"a": 2, "b": 1, "a,b": 1}


def test_jobs_without_a_partition_go_to_the_default_one(tmp_path):
    cluster, site = _site(tmp_path, TWO)
    table = _table([1, 2], legend=("(none)", "b"))
    assert site.place(table, cluster).requests.features == (("partition:a",), ("partition:b",))
    # an SWF trace without the legend names no partition: every job to the default
    no_legend = _table([1, 2], legend=())
    assert site.place(no_legend, cluster).requests.features == (("partition:a",), ("partition:a",))


def test_no_default_and_jobs_without_a_partition_is_an_error(tmp_path):
    cluster, site = _site(tmp_path, NODES + "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2\n")
    with pytest.raises(ConfigError, match=r"2 partitions and none has Default=YES, and the trace names no partition"):
        site.check_trace(_table([1, 2], legend=()))
    site.check_trace(_table([1, 2]))         # (each job names its own)


def test_a_file_of_one_partition_takes_every_job(tmp_path):
    cluster, site = _site(tmp_path, NODES + "PartitionName=only Nodes=ALL\n")
    placed = site.place(_table([1, 2, 3], legend=("x", "y", "z")), cluster)
    assert placed.requests.features == ((), (), ()) and placed.summary["jobs_by_partitions"] == {"only": 3}


def test_too_many_sets_of_partitions_for_the_feature_bits(tmp_path):
    names = [f"p{i}" for i in range(64)]
    text = "NodeName=n[1-64] CPUs=1\n" + "".join(f"PartitionName={p} Nodes=n{i + 1}\n" for i, p in enumerate(names))
    path = _conf(tmp_path, text + "PartitionName=all Nodes=ALL Default=YES\n")
    cluster, site = partition_cluster(read_slurm_conf(path))
    with pytest.raises(ConfigError, match=r"the jobs use 64 distinct sets of partitions .* pbf's node model holds 63"):
        site.place(_table(list(range(1, 65)), legend=names, cores=[1] * 64), cluster)


# ---------------------------------------------------------------- limits: rejected with Slurm's reason


def _never(result):
    return result.summary["nodes"]["never_fit_by_reason"]


def test_jobs_over_a_partitions_limits_are_rejected_with_the_reason(tmp_path):
    cluster, site = _site(tmp_path, NODES + "PartitionName=a Nodes=n[1-3] Default=YES MaxTime=10:00 MaxNodes=2\n"
                                            "PartitionName=b Nodes=n4 AllowQos=high\n"
                                            "PartitionName=d Nodes=n4 State=DOWN\n"
                                            "PartitionName=r Nodes=n4 State=DRAIN\n")
    table = _table([1, 1, 2, 2, 3, 4, 5, 1, 6], legend=("a", "b", "a,b", "d", "r", "zz"),
                   req=[600, 601, 100, 100, 601, 100, 100, 100, 100], qos=("normal", "high"),
                   queue=[1, 1, 1, 2, 1, 1, 1, 1, 1], nodes_min=[1, 1, 1, 1, 1, 1, 1, 3, 1],
                   nodes_max=[0, 0, 0, 0, 0, 0, 0, 0, 0])
    result = pbf.replay(table, pbf.ReplayConfig(cluster=cluster, partitions=site))
    state = result.jobs["state"].tolist()
    done, rejected = 3, 4
    assert state == [done, rejected, rejected, done, rejected, rejected, rejected, rejected, rejected]
    reasons = _never(result)
    assert reasons == result.summary["partitions"]["rejected_by_reason"]
    # (a job of a and b that neither takes: the first partition's reason)
    assert reasons["asks more time than partition a's MaxTime (600 s) (Slurm: pending, reason PartitionTimeLimit)"] == 2
    assert reasons["QOS normal may not use partition b (Slurm: pending, reason WAIT_QOS)"] == 1
    assert "partition d is DOWN (Slurm: pending, reason PartitionDown)" in reasons
    assert "partition r is DRAIN: it takes no new job (Slurm refuses it)" in reasons
    assert "partition 'zz' is not in the slurm.conf (Slurm refuses it: invalid partition)" in reasons
    assert ("asks more nodes than partition a's MaxNodes (2) (Slurm: pending, reason PartitionNodeLimit)"
            in reasons)
    assert result.summary["jobs"]["rejected_by_reason"] == {"no set of nodes can hold it": 7}


def test_a_job_of_several_partitions_keeps_those_it_passes(tmp_path):
    cluster, site = _site(tmp_path, NODES + "PartitionName=a Nodes=n[1-2] MaxTime=10\nPartitionName=b Nodes=n[3-4]\n")
    placed = site.place(_table([3], legend=("a", "b", "a,b"), req=[3600]), cluster)
    assert placed.requests.features == (("partition:b",),) and placed.requests.reasons == ("",)


def test_a_job_of_several_partitions_in_the_first_alone(tmp_path):
    """multi='first': the first partition the job passes, alone (Slurm runs it inside one partition)."""
    cluster, site = _site(tmp_path, NODES + "PartitionName=a Nodes=n[1-2] MaxTime=10\nPartitionName=b Nodes=n[3-4]\n"
                                            "PartitionName=c Nodes=n1\n")
    first = dataclasses.replace(site, multi="first")
    table = _table([3, 4, 5], legend=("a", "b", "a,b", "b,c", "c,b"), req=[3600, 5, 5])
    assert first.place(table, cluster).requests.features == (("partition:b",), ("partition:b",), ("partition:c",))
    assert site.place(table, cluster).requests.features == (("partition:b",), ("partition:b,c",),
                                                            ("partition:b,c",))
    with pytest.raises(ConfigError, match="multi must be one of each, union, first"):
        dataclasses.replace(site, multi="any")


def test_accounts_from_a_sacct_dump(tmp_path):
    dump = tmp_path / "jobs.sacct"
    dump.write_text("JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|State|User|Partition|Account\n"
                    "1|2024-01-01T00:00:00|2024-01-01T00:00:00|60|5|2|1|COMPLETED|u1|a|phys\n"
                    "2|2024-01-01T00:00:01|2024-01-01T00:00:01|60|5|2|1|COMPLETED|u1|a|chem\n"
                    "3|2024-01-01T00:00:02|2024-01-01T00:00:02|60|5|2|1|COMPLETED|u1|b|chem\n")
    table = read_sacct(dump)
    cluster, site = _site(tmp_path, NODES + "PartitionName=a Nodes=n[1-2] AllowAccounts=phys\n"
                                            "PartitionName=b Nodes=n[3-4] DenyAccounts=phys Default=YES\n")
    placed = site.place(table, cluster)
    assert placed.requests.reasons == ("", "account chem may not use partition a (Slurm: pending, reason "
                                           "WAIT_ACCOUNT)", "")
    assert placed.summary["not_checked"] == []
    bare = _table([1], legend=("a",))
    assert site.place(bare, cluster).summary["not_checked"] == [
        "AllowAccounts/DenyAccounts of partition a: the trace names no accounts (sacct's Account column)",
        "AllowAccounts/DenyAccounts of partition b: the trace names no accounts (sacct's Account column)"]


# ---------------------------------------------------------------- default memory, partition factor


def test_default_memory_is_the_first_partitions(tmp_path):
    cluster, site = _site(tmp_path, "DefMemPerCPU=100\n" + NODES +
                          "PartitionName=a Nodes=n[1-2] DefMemPerCPU=1000\nPartitionName=b Nodes=n[3-4] "
                          "DefMemPerNode=3000\nPartitionName=c Nodes=n1 Default=YES\n")
    table = _table([1, 2, 3, 4, 1], legend=("a", "b", "c", "b,a"), mem=[0, 0, 0, 0, 250])
    r = site.place(table, cluster).requests
    assert r.mem_core_mb.tolist() == [1000, 0, 100, 0, 250] and r.mem_node_mb.tolist() == [0, 3000, 0, 3000, 0]


def test_priority_job_factor_is_the_partition_factor(tmp_path):
    path = _conf(tmp_path, "PriorityType=priority/multifactor\nPriorityWeightPartition=1000\n" + NODES +
                 "PartitionName=lo Nodes=ALL Default=YES\nPartitionName=hi Nodes=ALL PriorityJobFactor=4\n")
    s = slurm_settings(path, all_partitions=True)
    assert s.config.partitions is not None and s.partition == "lo,hi"
    table = _table([1, 2, 3], legend=("lo", "hi", "lo,hi"))
    assert s.config.partitions.partition_factors(table) == {1: 0.25, 2: 1.0, 3: 1.0}
    # two jobs that both want the whole cluster: the later one, of the higher factor, goes first
    table = _table([1, 2, 1], legend=("lo", "hi"), cores=[16, 16, 16], submit=[0, 5, 5], run=[100, 100, 100],
                   req=[200, 200, 200])
    mf = dataclasses.replace(s.config.priority, partition_factors=s.config.partitions.partition_factors(table),
                             weight_age=0.0, weight_fairshare=0.0)
    cfg = pbf.ReplayConfig(cluster=s.config.cluster, partitions=s.config.partitions, priority=mf)
    start = pbf.replay(table, cfg).jobs["start"].tolist()
    assert start[1] < start[2]


# ---------------------------------------------------------------- every job on its own partitions' nodes

@st.composite
def _sites(draw):
    nn = draw(st.integers(2, 6))
    nodes = [Node(f"n{i}", draw(st.integers(2, 6)), draw(st.sampled_from([4000, 8000]))) for i in range(nn)]
    parts, tiered, factored = [], draw(st.booleans()), draw(st.booleans())
    for k in range(draw(st.integers(2, 4))):
        members = sorted(draw(st.sets(st.integers(0, nn - 1), min_size=1, max_size=nn)))
        parts.append((f"p{k}", members, draw(st.integers(1, 3)) if tiered else 1,
                      draw(st.integers(1, 3)) if factored else 1))
    jobs, t = [], 0
    for _ in range(draw(st.integers(4, 30))):
        t += draw(st.integers(0, 30))
        est = draw(st.integers(1, 20)) * 30
        names = draw(st.sets(st.sampled_from([p for p, *_ in parts]), min_size=1, max_size=2))
        jobs.append(dict(submit=t, est=est, run=draw(st.integers(1, est)), cores=draw(st.integers(1, 8)),
                         mpc=draw(st.sampled_from([0, 500])), nmax=draw(st.sampled_from([0, 1, 2])),
                         label=",".join(sorted(names))))
    return nodes, parts, jobs, draw(st.sampled_from([1, None]))


def _site_of(tmp_path, nodes, parts):
    text = "".join(f"NodeName={n.name} CPUs={n.cores} RealMemory={n.memory_mb}\n" for n in nodes)
    text += "".join(f"PartitionName={p} Nodes={','.join(nodes[i].name for i in m)} PriorityTier={t} "
                    f"PriorityJobFactor={f}\n" for p, m, t, f in parts)
    path = tmp_path / "gen.conf"
    path.write_text(text)
    return partition_cluster(read_slurm_conf(path))


def _oracle_starts(placed, ref, reservations, search):
    # the oracle of the node search asked for: each job's start
    if search == "slurm":
        return slurm_node_replay(placed.cluster.nodes, ref, reservations, window=0, resolution=0)["start"]
    return node_replay(placed.cluster.nodes, ref, reservations)["start"]


def _oracle_jobs(jobs, placed):
    """_sites' jobs as the node oracles take them, each with its partitions' records where it has several."""
    def request(k, j, features):
        return NodeRequest(j["cores"], int(placed.requests.mem_core_mb[k]), 0, 0, 1, j["nmax"], frozenset(features))
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"], req=request(k, j, placed.requests.features[k]))
           for k, j in enumerate(jobs)]
    for k, j in enumerate(jobs):
        records = placed.job_records[k] if placed.job_records is not None else None
        if records:
            own = [f for f in placed.requests.features[k] if not f.startswith(PARTITION_PREFIX)]
            ref[k]["records"] = [request(k, j, own + ([f] if f else [])) for f, _ in records]
            if placed.record_tiers is not None:
                ref[k]["tiers"] = list(placed.record_tiers[k])
        if placed.job_tiers is not None:
            ref[k]["tier"] = int(placed.job_tiers[k])
    return ref


def _never_in_first_record():
    # a job of p0 (tier 1, n0-n3) and p1 (tier 2, n0-n2) asking 6 cores on one node: its p1 record, tested
    # first, can never start (no p1 node has 6 cores) and so spends no reservation; its p0 record reserves n3
    nodes = [Node(f"n{i}", 6 if i == 3 else 2, 4000) for i in range(6)]
    job = dict(submit=0, est=30, run=1, cores=1, mpc=0, nmax=0, label="p0")
    jobs = [dict(job, cores=3), dict(job), dict(job, cores=6, nmax=1, label="p0,p1")] + [dict(job)] * 6
    jobs.append(dict(job, est=60))
    return nodes, [("p0", [0, 1, 2, 3], 1, 1), ("p1", [0, 1, 2], 2, 1)], jobs, 1


@pytest.mark.parametrize("multi", ["each", "union"])
@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=_sites())
@example(case=_never_in_first_record())
def test_a_job_runs_only_on_its_partitions_nodes_and_the_oracle_agrees(tmp_path, search, multi, case):
    nodes, parts, jobs, reservations = case
    cluster, site = _site_of(tmp_path, nodes, parts)
    site = dataclasses.replace(site, multi=multi)
    labels = list(dict.fromkeys(j["label"] for j in jobs))
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = _table([labels.index(j["label"]) + 1 for j in jobs], legend=labels, req=col("est"), cores=col("cores"),
                   submit=col("submit"), run=col("run"), mem=col("mpc"), nodes_min=[1] * len(jobs),
                   nodes_max=col("nmax"))
    config = pbf.ReplayConfig(cluster=cluster, partitions=site, node_search=search,
                              backfill=pbf.Backfill(reservations=reservations, resolution=0, window=0))
    got = replay_checked(table, config)
    members = {p: {nodes[i].name for i in m} for p, m, *_ in parts}
    for k, job in enumerate(jobs):
        if got.jobs["start"][k] >= 0:
            used = set(got.jobs["nodes"][k].split(","))
            inside = [p for p in job["label"].split(",") if used <= members[p]]
            if multi == "each":            # (as Slurm: inside one of its partitions)
                assert inside, (job["label"], got.jobs["nodes"][k])
            else:
                assert used <= set().union(*(members[p] for p in job["label"].split(",")))
    placed = site.place(table, cluster)
    ref = _oracle_jobs(jobs, placed)
    assert got.jobs["start"].tolist() == _oracle_starts(placed, ref, reservations, search)


# ---------------------------------------------------------------- pbf replay --slurm-conf FILE

DUMP = ("JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|State|User|Partition|QOS\n"
        "1|2024-01-01T00:00:00|2024-01-01T00:00:00|60|5|4|1|COMPLETED|u1|a|normal\n"
        "2|2024-01-01T00:00:01|2024-01-01T00:00:01|60|5|4|1|COMPLETED|u1|b|normal\n"
        "3|2024-01-01T00:00:02|2024-01-01T00:00:02|60|5|4|1|COMPLETED|u1|a,b|normal\n"
        "4|2024-01-01T00:00:03|2024-01-01T00:00:03|60|90|4|1|COMPLETED|u1|b|normal\n")


def test_replay_with_every_partition_of_the_file(tmp_path, capsys):
    dump = tmp_path / "jobs.sacct"
    dump.write_text(DUMP)
    site = _conf(tmp_path, NODES + "PartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n[2-4] MaxTime=1:00:00\n")
    out = tmp_path / "out"
    assert cli.main(["replay", str(dump), "--quiet", "--record-nodes", "--out", str(out), "--slurm-conf",
                     str(site)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["slurm_conf"]["partition"] == "a,b" and s["units"] == 16
    assert s["slurm_conf"]["mapped"]["partitions"].startswith("2 partitions: a (2 nodes), b (3 nodes)")
    assert s["partitions"]["jobs_by_partitions"] == {"a": 1, "b": 1, "a,b": 1, "(rejected)": 1}
    assert s["jobs"]["rejected"] == 1 and s["config"]["partitions"] == {"names": ["a", "b"], "multi": "each"}
    jobs = (out / "jobs.csv").read_text().splitlines()
    header = jobs[0].split(",")
    nodes = [dict(zip(header, line.split(","))) for line in jobs[1:]]
    assert nodes[0]["nodes"] in ("n1", "n2") and nodes[1]["nodes"] in ("n2", "n3", "n4")
    # FILE:PARTITION: that partition alone, every job on it, as before
    out2 = tmp_path / "one"
    assert cli.main(["replay", str(dump), "--quiet", "--out", str(out2), "--slurm-conf", f"{site}:b"]) == 0
    one = json.loads((out2 / "summary.json").read_text())
    assert one["slurm_conf"]["partition"] == "b" and one["units"] == 12 and "partitions" not in one


def test_replay_of_a_trace_whose_partitions_the_file_lacks_is_refused(tmp_path, capsys):
    dump = tmp_path / "jobs.sacct"
    dump.write_text(DUMP.replace("|a|", "|x|").replace("|b|", "|y|").replace("|a,b|", "|x|"))
    site = _conf(tmp_path, NODES + "PartitionName=a Nodes=n[1-2] Default=YES\nPartitionName=b Nodes=n[2-4]\n")
    assert cli.main(["replay", str(dump), "--quiet", "--slurm-conf", str(site)]) == 2
    err = capsys.readouterr().err
    assert "every job of the trace names a partition the slurm.conf does not have ('x' (2 jobs), 'y' (2 jobs)" in err
    assert "FILE:PARTITION" in err


def test_partitions_need_a_cluster():
    with pytest.raises(ConfigError, match="partitions place jobs on the nodes of their partitions"):
        pbf.ReplayConfig(partitions=SitePartitions("x", ()))


def test_read_partitions_is_usable_alone(tmp_path):
    conf = read_slurm_conf(_conf(tmp_path, TWO))
    parts = read_partitions(conf, ["n1", "n2", "n3", "n4"])
    assert [p.name for p in parts] == ["a", "b"] and PARTITION_PREFIX == "partition:"


# ---------------------------------------------------------------- a job of partitions of different tiers

TIERED = ("JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|State|User|Partition|QOS\n"
          "1|2024-01-01T00:00:00|2024-01-01T00:00:00|100|2|4|1|COMPLETED|u1|cpu|normal\n"
          "2|2024-01-01T00:00:00|2024-01-01T00:00:00|200|4|4|1|COMPLETED|u1|small|normal\n"
          "3|2024-01-01T00:00:02|2024-01-01T00:00:02|50|1|4|1|COMPLETED|u1|cpu|normal\n"
          "4|2024-01-01T00:00:03|2024-01-01T00:00:03|50|1|4|1|COMPLETED|u1|cpu,small|normal\n")


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_a_job_of_two_tiers_is_queued_at_each_tier(tmp_path, search):
    # cpu (n1) at tier 1, small (n2) at tier 2. Job 4 asks both: Slurm queues its small record at
    # tier 2, ahead of everything, and its cpu record at tier 1, behind job 3 (submitted first). When
    # n1 frees at 100, job 3 takes it; job 4 follows at 150 on n1, before small frees at 200. With
    # every record at the job's highest tier, job 4 would take n1 at 100 ahead of job 3.
    conf = _conf(tmp_path, "NodeName=n[1-2] CPUs=4 RealMemory=8000\n"
                           "PartitionName=cpu Nodes=n1 Default=YES PriorityTier=1\n"
                           "PartitionName=small Nodes=n2 PriorityTier=2\n")
    dump = tmp_path / "jobs.sacct"
    dump.write_text(TIERED)
    settings_ = slurm_settings(conf, all_partitions=True)
    table = read_sacct(dump)
    placed = settings_.config.partitions.place(table, settings_.config.cluster)
    assert placed.record_tiers[3] == (2, 1) and placed.record_tiers[2] is None
    cfg = dataclasses.replace(settings_.config, node_search=search)
    got = replay_checked(table, cfg)
    assert got.jobs["start"].tolist() == [0, 0, 100, 150]
    assert got.jobs["nodes"].tolist()[2:] == ["n1", "n1"]
    ref = [dict(submit=int(s), run=int(r), est=int(e),
                req=NodeRequest(4, int(placed.requests.mem_core_mb[k]), 0, 0, 1, 0,
                                frozenset(placed.requests.features[k])), tier=int(placed.job_tiers[k]))
           for k, (s, r, e) in enumerate(zip(table.submit, table.run, table.req_time))]
    own = [f for f in placed.requests.features[3] if not f.startswith(PARTITION_PREFIX)]
    ref[3]["records"] = [NodeRequest(4, int(placed.requests.mem_core_mb[3]), 0, 0, 1, 0, frozenset(own + [f]))
                         for f, _ in placed.job_records[3]]
    ref[3]["tiers"] = list(placed.record_tiers[3])
    want = (slurm_node_replay(placed.cluster.nodes, ref, cfg.backfill.reservations, window=cfg.backfill.window,
                              resolution=cfg.backfill.resolution) if search == "slurm"
            else node_replay(placed.cluster.nodes, ref, cfg.backfill.reservations))
    assert want["start"] == [0, 0, 100, 150]


def test_core_lists_a_job_of_two_tiers_once(tmp_path):
    conf = _conf(tmp_path, "NodeName=n[1-2] CPUs=4 RealMemory=8000\n"
                           "PartitionName=cpu Nodes=n1 Default=YES PriorityTier=1\n"
                           "PartitionName=small Nodes=n2 PriorityTier=2\n")
    dump = tmp_path / "jobs.sacct"
    dump.write_text(TIERED)
    settings_ = slurm_settings(conf, all_partitions=True)
    got = replay_checked(read_sacct(dump), dataclasses.replace(settings_.config, start_estimates=True))
    # job 4 at its arrival, by the limits (2, 4, 1, 1 minutes): planned on n2 at 240 (its tier-2 entry)
    # and on n1 at 180, after job 3 (its tier-1 entry): the earlier of the two, once
    assert got.jobs["start"].tolist() == [0, 0, 100, 150]
    assert got.jobs["estimated_start"].tolist() == [0, 0, 120, 180]
    core_estimates = dataclasses.replace(settings_.config, start_estimates=True, estimate_every=1)
    got = replay_checked(read_sacct(dump), core_estimates)
    assert got.jobs["estimated_start"].tolist() == [0, 0, 120, 180]


def _limited_starts(tmp_path, case, **limits):
    """_sites' case replayed with Slurm's backfill limits ``limits`` (SlurmBackfill's fields): the compiled
    core's starts and the oracle's, each job's records counted in their own partitions."""
    nodes, parts, jobs, reservations = case
    cluster, site = _site_of(tmp_path, nodes, parts)
    labels = list(dict.fromkeys(j["label"] for j in jobs))
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = _table([labels.index(j["label"]) + 1 for j in jobs], legend=labels, req=col("est"), cores=col("cores"),
                   submit=col("submit"), run=col("run"), mem=col("mpc"), nodes_min=[1] * len(jobs),
                   nodes_max=col("nmax"))
    backfill = pbf.SlurmBackfill(reservations=reservations, resolution=0, window=0, **limits)
    got = replay_checked(table, pbf.ReplayConfig(cluster=cluster, partitions=site, node_search="slurm",
                                                 backfill=backfill))
    placed = site.place(table, cluster)
    ref = _oracle_jobs(jobs, placed)
    for k, r in enumerate(ref):
        bits = int(placed.job_parts[k]) if placed.job_parts is not None else 0
        r["partition"] = (bits & -bits).bit_length() - 1 if bits else 0
        if placed.job_records is not None and placed.job_records[k]:
            r["record_parts"] = [index for _, index in placed.job_records[k]]
    want = slurm_node_replay(placed.cluster.nodes, ref, reservations, window=0, resolution=0,
                             limits=backfill.reference_limits())
    return got.jobs["start"].tolist(), want["start"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=_sites(), per_part=st.sampled_from([1, 2]), per_user_part=st.sampled_from([0, 1, 3]))
def test_backfill_limits_count_in_each_partition_as_the_oracle(tmp_path, case, per_part, per_user_part):
    # bf_max_job_part / bf_max_job_user_part: a count a partition; a job of several partitions counts
    # once in each of its records' partitions
    got, want = _limited_starts(tmp_path, case, max_job_part=per_part, max_job_user_part=per_user_part)
    assert got == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=_sites(), part_resv=st.sampled_from([1, 2]), one_resv=st.booleans())
def test_reservations_count_in_each_partition_as_the_oracle(tmp_path, case, part_resv, one_resv):
    # bf_job_part_count_reserve: once a partition's jobs have made that many reservations in the cycle,
    # its later jobs only start now; another partition's jobs still reserve
    got, want = _limited_starts(tmp_path, case, job_part_count_reserve=part_resv, one_resv_per_job=one_resv)
    assert got == want


def test_a_partition_out_of_reservations_leaves_the_other_reserving(tmp_path):
    # n1 (4 cores) makes partition a, n2 (4 cores) partition b. At t=0 a 4-core job of a holds n1 to
    # 1000; two 2-core jobs of b hold n2 to 1000 and to 500. Then a's A1, A2 and b's B1 (4 cores, 1000 s
    # each) arrive, and b's small Bs (1 core, 2000 s). With bf_job_part_count_reserve=1 each partition
    # reserves once a cycle: A1 on n1 and B1 on n2 from 1000, so that Bs, which would fit n2's two free
    # cores from 500, waits behind B1. Counted over both partitions as one (reservations=1) only A1
    # reserves: Bs starts at 500's cycle and B1 waits for its end.
    path = tmp_path / "two.conf"
    path.write_text("NodeName=n1 CPUs=4 RealMemory=8000\nNodeName=n2 CPUs=4 RealMemory=8000\n"
                    "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2\n")
    cluster, site = partition_cluster(read_slurm_conf(path))
    table = _table([1, 2, 2, 1, 1, 2, 2], legend=("a", "b"), req=[1000, 1000, 500, 1000, 1000, 1000, 2000],
                   cores=[4, 2, 2, 4, 4, 4, 1], submit=[0, 0, 0, 1, 2, 3, 5],
                   run=[1000, 1000, 500, 1000, 1000, 1000, 2000], mem=[0] * 7,
                   nodes_min=[1] * 7)
    starts = {}
    for name, backfill in (("per-partition", pbf.SlurmBackfill(reservations=None, job_part_count_reserve=1)),
                           ("as one", pbf.SlurmBackfill(reservations=1))):
        got = replay_checked(table, pbf.ReplayConfig(cluster=cluster, partitions=site, node_search="slurm",
                                                     backfill=backfill, trigger="interval", bf_interval=30))
        starts[name] = got.jobs["start"].tolist()
    per, one = starts["per-partition"], starts["as one"]
    assert 1000 <= per[3] < 1100 and 1000 <= per[5] < 1100 and per[6] >= 2000
    assert 500 <= one[6] < 600 and one[5] >= 2500


# ---------------------------------------------------------------- a job of partitions of different factors

def _factor_priority(site, table):
    """Multifactor with the partition factor alone (PriorityWeightPartition 1000): each job's priority is
    floor(1000 x its partition's PriorityJobFactor / the file's largest)."""
    return pbf.plugins.Multifactor(weight_age=0.0, weight_fairshare=0.0, weight_job_size=0.0, weight_qos=0.0,
                                   weight_partition=1000.0, partition_factors=site.partition_factors(table))


def _oracle_priorities(ref, site, table, placed):
    """The oracles' ``prio`` a job (its own: the largest factor of its partitions) and ``prios`` a record
    (its partition's: Slurm's priority_array), under :func:`_factor_priority`."""
    factors = site.partition_factors(table)
    top = max(p.priority_job_factor for p in site.partitions)
    for k, r in enumerate(ref):
        r["prio"] = math.floor(1000.0 * factors.get(int(table.partition[k]), 1.0))
        records = placed.job_records[k] if placed.job_records is not None else None
        if records:
            r["prios"] = [math.floor(1000.0 * (site.partitions[i].priority_job_factor / top)) for _, i in records]
    return ref


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=_sites())
def test_each_record_at_its_partitions_priority_as_the_oracle(tmp_path, search, case):
    # under multifactor a job of partitions of different PriorityJobFactor has a queue entry per run of
    # records of one tier and one factor, each at its partition's priority; a job whose partitions share
    # both is queued once at its own
    nodes, parts, jobs, reservations = case
    cluster, site = _site_of(tmp_path, nodes, parts)
    labels = list(dict.fromkeys(j["label"] for j in jobs))
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = _table([labels.index(j["label"]) + 1 for j in jobs], legend=labels, req=col("est"), cores=col("cores"),
                   submit=col("submit"), run=col("run"), mem=col("mpc"), nodes_min=[1] * len(jobs),
                   nodes_max=col("nmax"))
    config = pbf.ReplayConfig(cluster=cluster, partitions=site, node_search=search,
                              priority=_factor_priority(site, table),
                              backfill=pbf.Backfill(reservations=reservations, resolution=0, window=0))
    got = replay_checked(table, config)
    placed = site.place(table, cluster)
    ref = _oracle_priorities(_oracle_jobs(jobs, placed), site, table, placed)
    assert got.jobs["start"].tolist() == _oracle_starts(placed, ref, reservations, search)


FACTORED = ("PriorityType=priority/multifactor\nPriorityWeightPartition=1000\nPriorityWeightAge=0\n"
            "PriorityWeightFairshare=0\nPriorityWeightJobSize=0\nPriorityWeightQOS=0\n"
            "NodeName=n[1-2] CPUs=4 RealMemory=8000\n"
            "PartitionName=cpu Nodes=n1 Default=YES PriorityJobFactor=1\n"
            "PartitionName=small Nodes=n2 PriorityJobFactor=2\n")


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_a_job_of_two_factors_is_queued_at_each_partitions_priority(tmp_path, search):
    # cpu (n1) of factor 1, small (n2) of factor 2, one tier: cpu jobs have priority 500, small jobs
    # 1000. Job 4 asks both: Slurm queues its small record at 1000, ahead of job 3 (cpu, 500), and its
    # cpu record at 500, behind job 3 (submitted first). When n1 frees at 100 job 3 takes it; job 4
    # follows at 150 on n1, before small frees at 200. With the job's one priority (1000) on every
    # record, job 4 would take n1 at 100 ahead of job 3.
    conf = _conf(tmp_path, FACTORED)
    dump = tmp_path / "jobs.sacct"
    dump.write_text(TIERED)
    settings_ = slurm_settings(conf, all_partitions=True)
    table = read_sacct(dump)
    site = settings_.config.partitions
    placed = site.place(table, settings_.config.cluster)
    assert placed.job_tiers is None and [site.partitions[i].name for _, i in placed.job_records[3]] == ["cpu", "small"]
    # (the partition factors as pbf replay --slurm-conf gives them: PriorityJobFactor / the largest)
    cfg = dataclasses.replace(settings_.config, node_search=search, priority=dataclasses.replace(
        settings_.config.priority, partition_factors=site.partition_factors(table)))
    assert cfg.priority.weight_partition == 1000 and cfg.priority.weight_age == 0
    got = replay_checked(table, cfg)
    assert got.jobs["start"].tolist() == [0, 0, 100, 150]
    assert got.jobs["nodes"].tolist()[2:] == ["n1", "n1"]
    own = [f for f in placed.requests.features[3] if not f.startswith(PARTITION_PREFIX)]
    ref = [dict(submit=int(s), run=int(r), est=int(e),
                req=NodeRequest(4, int(placed.requests.mem_core_mb[k]), 0, 0, 1, 0,
                                frozenset(placed.requests.features[k])))
           for k, (s, r, e) in enumerate(zip(table.submit, table.run, table.req_time))]
    ref[3]["records"] = [NodeRequest(4, int(placed.requests.mem_core_mb[3]), 0, 0, 1, 0, frozenset(own + [f]))
                         for f, _ in placed.job_records[3]]
    _oracle_priorities(ref, site, table, placed)
    assert [r["prio"] for r in ref] == [500, 1000, 500, 1000] and ref[3]["prios"] == [500, 1000]
    want = (slurm_node_replay(placed.cluster.nodes, ref, cfg.backfill.reservations, window=cfg.backfill.window,
                              resolution=cfg.backfill.resolution) if search == "slurm"
            else node_replay(placed.cluster.nodes, ref, cfg.backfill.reservations))
    assert want["start"] == [0, 0, 100, 150]
    # the job's one priority on every record (what pbf did before): job 4 first at 100
    del ref[3]["prios"]
    assert node_replay(placed.cluster.nodes, ref, cfg.backfill.reservations)["start"] == [0, 0, 150, 100]
    # the partition factors replaced (--mf-partition) or FCFS: every record at the job's priority
    from pbf.replayer import record_factors
    records = list(placed.job_records)
    assert record_factors(cfg.priority, site, table, records) == [0.5, 1.0]
    assert record_factors(dataclasses.replace(cfg.priority, partition_factors={1: 1.0}), site, table, records) is None
    assert record_factors(dataclasses.replace(cfg.priority, weight_partition=0.0), site, table, records) is None
    assert record_factors(pbf.ReplayConfig().scoring().priority, site, table, records) is None
    # the same through pbf replay --slurm-conf
    out = tmp_path / "out"
    assert cli.main(["replay", str(dump), "--quiet", "--out", str(out), "--slurm-conf", str(conf),
                     "--node-search", search]) == 0
    lines = (out / "jobs.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert [int(line.split(",")[header.index("start")]) for line in lines[1:]] == [0, 0, 100, 150]


@pytest.mark.parametrize("bad", [[-1.0, 1.0], [float("nan"), 1.0], [1.0]])
def test_record_factors_the_core_cannot_take_are_refused(tmp_path, bad):
    from unittest import mock
    conf = _conf(tmp_path, FACTORED)
    dump = tmp_path / "jobs.sacct"
    dump.write_text(TIERED)
    settings_ = slurm_settings(conf, all_partitions=True)
    with mock.patch("pbf.replayer.record_factors", return_value=bad), \
            pytest.raises(ValueError, match="partition records: one factor a record, each a number in 0 .. 2"):
        pbf.replay(read_sacct(dump), settings_.config)
