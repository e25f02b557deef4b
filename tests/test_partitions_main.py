"""Slurm's main scheduler with several partitions: a job that cannot start fails its partitions for the
rest of the pass (their jobs are not tried, their nodes go to no later job), and the pass goes on with
the jobs of the other partitions (src/slurmctld/job_scheduler.c, _schedule: failed_parts)."""
import numpy as np
import pytest

import pbf
from pbf.slurm_conf import read_slurm_conf
from pbf.slurm_partitions import partition_cluster
from pbf.workload.jobs import JobTable, SwfHeader

NODES = "NodeName=n[1-3] CPUs=4 RealMemory=8000\n"


def _site(tmp_path, text):
    path = tmp_path / "site.conf"
    path.write_text(NODES + text)
    return partition_cluster(read_slurm_conf(path))


def _jobs(parts, submit, run, req, cores, legend):
    h = SwfHeader()
    for i, name in enumerate(legend, 1):
        h.add_line(f" Partition: {i} {name}")
    n = len(parts)
    return JobTable.from_arrays(header=h, job_id=np.arange(1, n + 1), submit=np.asarray(submit),
                                run=np.asarray(run), req_procs=np.asarray(cores), req_time=np.asarray(req),
                                partition=np.asarray(parts), queue=np.ones(n, dtype=np.int64))


def _starts(tmp_path, conf, table, search):
    cluster, site = _site(tmp_path, conf)
    config = pbf.ReplayConfig(cluster=cluster, partitions=site, node_search=search, trigger="interval",
                              bf_interval=30, record_nodes=True)
    got = pbf.replay(table, config)
    return got.jobs["start"].tolist(), got.jobs["nodes"]


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_the_main_scheduler_goes_on_to_the_other_partitions(tmp_path, search):
    # job 2 (partition a) cannot start: a fails, and job 3 (partition b) starts at its own arrival's
    # main-scheduler pass, not at the next backfill cycle (t = 30)
    table = _jobs([1, 1, 2], submit=[0, 5, 6], run=[1000, 10, 10], req=[1000, 100, 100], cores=[4, 4, 4],
                  legend=("a", "b"))
    starts, nodes = _starts(tmp_path, "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2\n", table, search)
    assert starts == [0, 1000, 6] and nodes[2] == "n2"


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_a_failed_partitions_nodes_go_to_no_later_job(tmp_path, search):
    # a = n1,n2 and b = n2,n3 overlap on n2. Job 2 (a, 8 cores) cannot start (n1 is busy): a fails, and
    # its nodes (n1 and n2) go to no later job in this pass: job 3 (b, 4 cores) starts on n3, not n2;
    # job 4 (b, 4 cores) finds no node of b outside a, so b fails too
    table = _jobs([1, 1, 2, 2], submit=[0, 5, 6, 6], run=[1000, 10, 10, 10], req=[1000, 100, 100, 100],
                  cores=[4, 8, 4, 4], legend=("a", "b"))
    starts, nodes = _starts(tmp_path, "PartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n[2-3]\n", table,
                            search)
    assert starts[2] == 6 and nodes[2] == "n3"
    assert starts[3] > 6                 # (not before the next backfill cycle)


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_one_partition_stops_at_the_first_job_that_cannot_start(tmp_path, search):
    # with one partition the pass stops there, as before: job 2 (8 cores) cannot start, and job 3, which
    # fits on n2, waits for the backfill cycle at 30
    table = _jobs([1, 1, 1], submit=[0, 5, 6], run=[1000, 10, 10], req=[1000, 100, 100], cores=[4, 8, 4],
                  legend=("a",))
    starts, _ = _starts(tmp_path, "PartitionName=a Nodes=n[1-2]\n", table, search)
    assert starts[0] == 0 and starts[2] == 30


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_a_higher_priority_tier_runs_first(tmp_path, search):
    # a (tier 1) and b (tier 2) share n1. Job 2 (a) waits from 5, job 3 (b) from 6; when n1 frees at
    # 100 the higher tier starts first, whatever the submit order (Slurm's sort_job_queue2)
    table = _jobs([1, 1, 2], submit=[0, 5, 6], run=[100, 10, 10], req=[100, 100, 100], cores=[4, 4, 4],
                  legend=("a", "b"))
    conf = "PartitionName=a Nodes=n1 PriorityTier=1\nPartitionName=b Nodes=n1 PriorityTier=2\n"
    cluster, site = _site(tmp_path, conf)
    got = pbf.replay(table, pbf.ReplayConfig(cluster=cluster, partitions=site, node_search=search))
    assert got.jobs["start"].tolist() == [0, 110, 100]
    same = "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n1\n"          # one tier: submit order
    cluster, site = _site(tmp_path, same)
    got = pbf.replay(table, pbf.ReplayConfig(cluster=cluster, partitions=site, node_search=search))
    assert got.jobs["start"].tolist() == [0, 100, 110]
