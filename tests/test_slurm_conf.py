"""Clusters read from Slurm's NodeName/PartitionName lines as sites write them, and the resources a
sacct dump asks for (ReqMem, ReqNodes, ReqTRES gres/gpu, Constraints)."""
from pathlib import Path

import numpy as np
import pytest

import pbf
from pbf.cluster import Cluster
from pbf.errors import ConfigError
from pbf.resources import requests_of
from pbf.slurm_conf import slurm_node_key, strnatcmp
from pbf.workload.sacct import read_sacct

DATA = Path(__file__).resolve().parent / "data" / "slurm"


def test_default_partition_with_node_defaults_and_continuations():
    c = Cluster.load(DATA / "site.conf")
    assert c.name == "batch" and c.default_mem_per_core_mb == 1000
    assert [n.name for n in c.nodes] == ["big1", "dwarf01", "dwarf02", "dwarf03"]    # by name, as slurmctld
    assert [n.cores for n in c.nodes] == [32, 8, 8, 8]            # Sockets x CoresPerSocket from DEFAULT; CPUs=
    assert c.nodes[1].memory_mb == 16000 and c.nodes[0].memory_mb == 256000
    assert c.nodes[1].features == ("avx2", "ib") and c.nodes[1].klass == "dwarf"
    old = Cluster.from_slurm_conf(DATA / "site.conf", node_order="file")
    assert [n.name for n in old.nodes] == ["dwarf01", "dwarf02", "dwarf03", "big1"]
    with pytest.raises(ConfigError, match="node_order must be one of name, file"):
        Cluster.from_slurm_conf(DATA / "site.conf", node_order="lines")


def test_a_named_partition_in_slurms_node_order_with_gres():
    c = Cluster.load(f"{DATA / 'site.conf'}:gpu")
    assert [n.name for n in c.nodes] == ["dwarf01", "gpu1"]
    assert c.nodes[1].gpus == 3 and c.nodes[1].cores == 8      # gpu:a100:2,gpu:v100:1; Procs=
    assert c.default_mem_per_core_mb == 500                    # the file's DefMemPerCPU


@pytest.mark.parametrize("text, expected", [
    ("NodeName=n1 CPUs=x\n", "line 1: CPUs='x': expected a whole number from 1 to 1,048,576"),
    ("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n[1-2] Default=YES\n", "line 2: Nodes='n[1-2]': node 'n2' has no"),
    ("NodeName=n1 Gres=gpu:many\n", "line 1: Gres='gpu:many'"),
    ("NodeName=n1 CPUs\n", "line 1: 'CPUs': expected KEY=VALUE"),
    ("ClusterName=x\n", "no NodeName lines"),
])
def test_errors_name_the_file_line_key_and_value(tmp_path, text, expected):
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        Cluster.load(path)
    assert str(path) in str(err.value) and expected in str(err.value)


def test_nodes_are_numbered_by_name_as_slurmctld_numbers_them(tmp_path):
    """Slurm 22.05 (and 17.02) sort the node table by strnatcmp of the names, whatever the lines' order."""
    path = tmp_path / "slurm.conf"
    path.write_text("NodeName=n10 CPUs=1\nNodeName=n2 CPUs=2\nNodeName=b1 CPUs=3\nNodeName=a1 CPUs=4\n"
                    "PartitionName=p Nodes=n10,n2,b1,a1 Default=YES\n")
    c = Cluster.load(path)
    assert [n.name for n in c.nodes] == ["a1", "b1", "n2", "n10"] and [n.cores for n in c.nodes] == [4, 3, 2, 1]


@pytest.mark.parametrize("a, b, sign", [
    ("n2", "n10", -1), ("a1", "b1", -1), ("n01", "n1", -1), ("n007", "n01", -1), ("B1", "a1", -1),
    ("c01", "c01", 0), ("n10b", "n10c", -1), ("rack2-n9", "rack10-n1", -1), ("x", "x1", -1), ("n 2", "n2", 0),
])
def test_strnatcmp_is_slurms(a, b, sign):
    assert strnatcmp(a, b) == sign and strnatcmp(b, a) == -sign


def test_slurm_node_key_sorts_like_slurm():
    names = ["wizard10", "wizard9", "dwarf100", "dwarf099", "dwarf1", "mole02", "Mage1"]
    assert sorted(names, key=slurm_node_key) == ["Mage1", "dwarf099", "dwarf1", "dwarf100", "mole02", "wizard9",
                                                 "wizard10"]


def test_unknown_partition_lists_the_partitions():
    with pytest.raises(ConfigError, match="no partition 'nope' \\(partitions: batch, gpu\\)"):
        Cluster.load(f"{DATA / 'site.conf'}:nope")


def test_sacct_resources():
    table = read_sacct(DATA / "resources.sacct")
    r = requests_of(table)
    assert r.mem_node_mb.tolist() == [4096, 0] and r.mem_core_mb.tolist() == [0, 2000]
    assert r.gpus.tolist() == [2, 0] and r.nodes_min.tolist() == [1, 2] and r.nodes_max.tolist() == [1, 4]
    assert r.features == (("elves", "ib"), ())


def test_default_memory_per_core_applies_to_jobs_that_ask_none():
    table = read_sacct(DATA / "resources.sacct")
    r = requests_of(table, default_mem_per_core_mb=1000)
    assert r.mem_core_mb.tolist() == [0, 2000]                 # both ask memory: unchanged
    from pbf.workload.jobs import JobTable
    t = JobTable.from_arrays(job_id=np.array([1]), submit=np.array([0]), run=np.array([5]), req_procs=np.array([2]),
                             req_time=np.array([5]))
    assert requests_of(t, default_mem_per_core_mb=750).mem_core_mb.tolist() == [750]


def test_replay_a_sacct_dump_on_a_slurm_conf_cluster(tmp_path):
    # job 1 asks features elves&ib that no node of the partition has: rejected, naming them
    result = pbf.replay(read_sacct(DATA / "resources.sacct"),
                        pbf.ReplayConfig(cluster=str(DATA / "site.conf")))
    assert result.summary["nodes"]["never_fit_by_reason"] == {"no node has features elves&ib": 1}
    assert result.summary["jobs"]["completed"] == 1


@pytest.mark.parametrize("clock", ["free", "slurm-sim"])
def test_node_replays_under_each_clock_with_failures_keep_nodes_within_capacity(clock):
    from pbf.workload.beocat import generate_beocat
    table = generate_beocat(3000, 6 * 3600, seed=5)
    config = pbf.ReplayConfig.from_preset("slurm") if clock == "slurm-sim" else pbf.ReplayConfig()
    import dataclasses
    config = dataclasses.replace(config, cluster="beocat", failures=pbf.Failures(mtbf_hours=200, seed=1),
                                 workers=2)
    result = pbf.replay(table, config)
    j = result.summary["jobs"]
    assert j["submitted"] == j["completed"] + j["rejected"] + j["killed"]
    assert j["completed"] > 0 and result.summary["nodes"]["nodes"] == 299
    one = pbf.replay(table, dataclasses.replace(config, workers=1))
    assert one.jobs["start"].tolist() == result.jobs["start"].tolist()
