"""Jobs of several partitions as Slurm schedules them (ext/part_records.pxd, SitePartitions.multi="each"):
a test in each partition apart, the job run inside one; the main scheduler failing each partition a
record could not start in. The oracle comparison over random sites (each job inside one of its
partitions) is in tests/test_partitions.py."""
import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_partitions import _oracle_jobs, _site_of, _sites, _table

import pbf
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_conf import read_slurm_conf
from pbf.slurm_partitions import partition_cluster
from pbf.workload.jobs import JobTable, SwfHeader

NODES = "NodeName=n[1-3] CPUs=4 RealMemory=8000\n"


def _replay(tmp_path, conf, parts, legend, submit, run, req, cores, search, multi="each", **kw):
    path = tmp_path / "site.conf"
    path.write_text(NODES + conf)
    cluster, site = partition_cluster(read_slurm_conf(path))
    h = SwfHeader()
    for i, name in enumerate(legend, 1):
        h.add_line(f" Partition: {i} {name}")
    n = len(parts)
    table = JobTable.from_arrays(header=h, job_id=np.arange(1, n + 1), submit=np.asarray(submit),
                                 run=np.asarray(run), req_procs=np.asarray(cores), req_time=np.asarray(req),
                                 partition=np.asarray(parts), queue=np.ones(n, dtype=np.int64))
    config = pbf.ReplayConfig(cluster=cluster, partitions=dataclasses.replace(site, multi=multi),
                              node_search=search, record_nodes=True, **kw)
    got = pbf.replay(table, config)
    return got.jobs["start"].tolist(), list(got.jobs["nodes"]), got


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_the_second_partition_starts_what_the_first_cannot(tmp_path, search):
    # a = n1 (busy until 100), b = n2: the job of a,b starts at once on n2
    conf = "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2\n"
    starts, nodes, _ = _replay(tmp_path, conf, [1, 3], ("a", "b", "a,b"), [0, 1], [100, 50], [200, 200],
                               [4, 4], search)
    assert starts == [0, 1] and nodes[1] == "n2"


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_a_higher_tier_partition_is_tried_first(tmp_path, search):
    # both partitions free; b has the higher PriorityTier: the job runs in b
    conf = "PartitionName=a Nodes=n1 PriorityTier=1\nPartitionName=b Nodes=n2 PriorityTier=5\n"
    starts, nodes, _ = _replay(tmp_path, conf, [3], ("a", "b", "a,b"), [0], [50], [200], [4], search)
    assert starts == [0] and nodes[0] == "n2"


@pytest.mark.parametrize("search", ["exact", "slurm"])
def test_the_main_scheduler_fails_each_record_and_goes_on(tmp_path, search):
    # a = n1,n2, b = n2,n3. Job 1 (a) holds n1. Job 2 (a,b, 8 cores) cannot start in a (n1 busy): a
    # fails, taking n1 and n2 from later tests; its record in b then finds only n3: b fails too. Job 3
    # (b, 4 cores) is not tried in this main-scheduler pass (every partition has failed): it starts at
    # the next backfill cycle (t = 30), not at its arrival
    conf = "PartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n[2-3]\n"
    starts, nodes, _ = _replay(tmp_path, conf, [1, 3, 2], ("a", "b", "a,b"), [0, 5, 6], [1000, 10, 10],
                               [1000, 100, 100], [4, 8, 4], search, trigger="interval", bf_interval=30)
    assert starts[0] == 0 and starts[1] == 30 and nodes[1] == "n2,n3"
    assert starts[2] == 30 or starts[2] >= 40


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=_sites())
def test_one_reservation_a_job_follows_the_oracle(tmp_path, case):
    # bf_one_resv_per_job: once a record of a job of several partitions has reserved, its later records
    # only start it now (Slurm's backfill, against its oracle)
    nodes, parts, jobs, reservations = case
    cluster, site = _site_of(tmp_path, nodes, parts)
    labels = list(dict.fromkeys(j["label"] for j in jobs))
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = _table([labels.index(j["label"]) + 1 for j in jobs], legend=labels, req=col("est"), cores=col("cores"),
                   submit=col("submit"), run=col("run"), mem=col("mpc"), nodes_min=[1] * len(jobs),
                   nodes_max=col("nmax"))
    backfill = pbf.SlurmBackfill(reservations=reservations, resolution=0, window=0, one_resv_per_job=True)
    got = pbf.replay(table, pbf.ReplayConfig(cluster=cluster, partitions=site, node_search="slurm", backfill=backfill))
    placed = site.place(table, cluster)
    ref = _oracle_jobs(jobs, placed)
    want = slurm_node_replay(placed.cluster.nodes, ref, reservations, window=0, resolution=0,
                             limits=backfill.reference_limits())
    assert got.jobs["start"].tolist() == want["start"]
