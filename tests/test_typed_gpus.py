"""GPUs by type (``gpu:a100:2``): a node's GPUs have one type (slurm.conf ``Gres=gpu:a100:4``, a cluster
file's ``gpu_type``), a job asking GPUs of a type (sacct ``ReqTRES=gres/gpu:a100=2``) runs only on nodes
of that type, an untyped GPU job on any. Both node planners held to their oracles, which check the type
themselves (pbf.reference: ``NodeRequest.gpu_type``); the readers; the rejection reasons."""
import dataclasses
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest
from pbf.resources import reject_detail, requests_of
from pbf.workload.sacct import read_sacct

from scheduling import busy_node_scenarios, node_table, replay_against_node_oracles

TYPES = ("a100", "v100")


@st.composite
def typed_scenarios(draw):
    nodes, jobs, reservations, first_fit, resolution, window = draw(busy_node_scenarios())
    nodes = [dataclasses.replace(n, gpu_type=draw(st.sampled_from(TYPES + ("", "a100,v100")))) if n.gpus else n
             for n in nodes]
    for job in jobs:
        # (h100: a type no node has)
        job["gtype"] = draw(st.sampled_from(("", "") + TYPES + ("h100",))) if job["gpus"] else ""
    return nodes, jobs, reservations, first_fit, resolution, window


def _table(jobs):
    table = node_table(jobs)
    table.gpu_types = [j["gtype"] for j in jobs]
    return table


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"]),
                                 j["gtype"]))
            for j in jobs]


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=typed_scenarios())
def test_typed_gpu_jobs_follow_the_oracle(search, case):
    nodes, jobs, reservations, first_fit, resolution, window = case
    got = replay_against_node_oracles(search, nodes, _table(jobs), _ref_jobs(jobs), reservations, first_fit,
                                      resolution, window)
    # and every typed job that ran, ran on nodes of its type only
    by_name = {n.name: n for n in nodes}
    for j, placed in zip(jobs, got.jobs["nodes"].tolist()):
        if j["gtype"] and placed:
            assert all(j["gtype"] in by_name[name].gpu_type.split(",") for name in placed.split(","))


def _two_types():
    return Cluster.of_nodes([Node("a1", 8, 64000, 4, gpu_type="a100"), Node("v1", 8, 64000, 4, gpu_type="v100"),
                             Node("c1", 8, 64000)], name="typed")


def _jobs(types, gpus=1):
    jobs = [dict(submit=0, est=100, run=100, cores=2, mpc=0, mpn=0, gpus=gpus, nmin=1, nmax=1, feat=(), gtype=t)
            for t in types]
    return _table(jobs)


def test_a_typed_job_waits_for_its_type_while_the_other_type_is_free():
    # two a100 jobs taking all of a1's GPUs: the second waits although v1's GPUs are free; untyped: v1
    table = _jobs(["a100", "a100", ""], gpus=4)
    got = pbf.replay(table, pbf.ReplayConfig(cluster=_two_types(), record_nodes=True))
    assert got.jobs["nodes"].tolist() == ["a1", "a1", "v1"]
    assert got.jobs["start"].tolist() == [0, 100, 0]


def test_a_type_no_node_has_is_rejected_saying_so():
    table = _jobs(["h100", "a100"])
    got = pbf.replay(table, pbf.ReplayConfig(cluster=_two_types()))
    assert got.jobs["state"][0] == pbf.codes.JobState.JS_REJECTED
    req = requests_of(table)
    assert reject_detail(_two_types(), req, 0, 2) == "no node has GPUs of type h100"
    table = _jobs(["a100,v100"])
    assert reject_detail(_two_types(), requests_of(table), 0, 2) == \
        "asks GPUs of 2 types (a100, v100); a node has GPUs of one type"


def test_the_cluster_file_and_slurm_conf_give_gpu_types(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text(textwrap.dedent("""\
        name = "t"
        [[nodes]]
        names = "a[1-2]"
        cores = 8
        gpus = 4
        gpu_type = "a100"
        [[nodes]]
        name = "c1"
        cores = 8
        """))
    cluster = Cluster.load(str(toml))
    assert [n.gpu_type for n in cluster.nodes] == ["a100", "a100", ""]
    toml.write_text('name = "t"\n[[nodes]]\nname = "c1"\ncores = 8\ngpu_type = "a100"\n')
    with pytest.raises(ConfigError, match="gpu_type"):
        Cluster.load(str(toml))
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=g[1-2] CPUs=8 RealMemory=64000 Gres=gpu:a100:4\nNodeName=c1 CPUs=8\n"
                    "PartitionName=p Nodes=ALL Default=YES\n")
    nodes = Cluster.from_slurm_conf(str(conf)).nodes
    assert sorted((n.name, n.gpus, n.gpu_type) for n in nodes) == [("c1", 0, ""), ("g1", 4, "a100"), ("g2", 4, "a100")]
    conf.write_text("NodeName=g1 CPUs=8 Gres=gpu:a100:2,gpu:v100:2\nPartitionName=p Nodes=ALL Default=YES\n")
    assert [n.gpu_type for n in Cluster.from_slurm_conf(str(conf)).nodes] == ["a100,v100"]
    from pbf.slurm_settings import slurm_settings
    assert any("a node of several GPU types" in line for line in slurm_settings(str(conf)).unmodelled)
    conf.write_text("NodeName=g1 CPUs=8 Gres=gpu:a1/00:2\nPartitionName=p Nodes=ALL Default=YES\n")
    with pytest.raises(ConfigError, match=r"slurm.conf, line 1: Gres=.*gpu:TYPE:N with TYPE"):
        Cluster.from_slurm_conf(str(conf))


def test_a_sacct_dump_s_typed_gpus_reach_the_plan(tmp_path):
    dump = tmp_path / "jobs.sacct"
    dump.write_text("JobID|Submit|Start|End|Elapsed|Timelimit|ReqCPUS|ReqMem|ReqTRES|State|User|Partition\n"
                    "1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|01:00:00|2|1G|"
                    "cpu=2,mem=1G,node=1,gres/gpu=4,gres/gpu:v100=4|COMPLETED|u|p\n"
                    "2|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|01:00:00|2|1G|"
                    "cpu=2,mem=1G,node=1,gres/gpu=1|COMPLETED|u|p\n")
    table = read_sacct(str(dump))
    got = pbf.replay(table, pbf.ReplayConfig(cluster=_two_types(), record_nodes=True))
    assert got.jobs["nodes"].tolist()[0] == "v1"
    assert np.all(got.jobs["state"] == pbf.codes.JobState.JS_DONE)
