"""Generic resources other than GPUs (``nvme``, ``mps``, a site's own names) as columns of the node model:
a node's counts (slurm.conf ``Gres=nvme:2``, a cluster file's ``gres``), a job's per-node ask (sacct
``ReqTRES=gres/nvme=2``, ``ReqGRES``). Both node planners held to their oracles, which compare kind by
kind (pbf.reference.counts_ref), on clusters of one to seven kinds besides GPUs (lanes of 32 down to 8
bits, counts up to a lane's top); the readers; the rejection reasons; the rule that a cluster without
generic resources reads a trace's asks without planning them."""
import dataclasses
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError
from pbf.gres import GresLayout, gres_layout, parse_gres
from pbf.reference.counts_ref import Counts, least
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.resources import reject_detail, requests_of
from pbf.workload.sacct import read_sacct

from scheduling import busy_node_scenarios, node_table, replay_against_node_oracles

KINDS = ("mps", "nvme", "shard", "fpga", "bw", "lic_x", "vram")


@st.composite
def gres_scenarios(draw):
    nodes, jobs, reservations, first_fit, resolution, window = draw(busy_node_scenarios())
    kinds = KINDS[:draw(st.integers(1, len(KINDS)))]
    top = GresLayout(kinds).max_count
    # small counts (several jobs a node) or counts at a lane's top (a borrow would cross lanes)
    scale = draw(st.sampled_from([1, 1, top // 3]))
    nodes = [dataclasses.replace(n, gres=tuple((k, draw(st.integers(0, 3)) * scale) for k in kinds
                                               if draw(st.booleans()))) for n in nodes]
    for job in jobs:
        asks = [(k, draw(st.integers(1, 3)) * scale) for k in kinds + ("absent",) if draw(st.integers(0, 3)) == 0]
        job["gres"] = tuple(sorted(asks))
    return nodes, jobs, reservations, first_fit, resolution, window


def _table(jobs):
    table = node_table(jobs)
    table.gres_texts = [",".join(f"{k}:{c}" for k, c in j["gres"]) for j in jobs]
    return table


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"]),
                                 gres=j["gres"]))
            for j in jobs]


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=gres_scenarios())
def test_gres_jobs_follow_the_oracle(search, case):
    nodes, jobs, reservations, first_fit, resolution, window = case
    got = replay_against_node_oracles(search, nodes, _table(jobs), _ref_jobs(jobs), reservations, first_fit,
                                      resolution, window)
    _no_kind_overbooked(nodes, jobs, got)


def _no_kind_overbooked(nodes, jobs, got):
    # at every start, on every node, the jobs running there ask no more of any kind than the node has
    if gres_layout(nodes) is None:
        return                           # (not planned: read only)
    by_name = {n.name: i for i, n in enumerate(nodes)}
    spans = [(int(s), int(s) + int(j["run"]), placed.split(","), dict(j["gres"]))
             for j, s, placed in zip(jobs, got.jobs["start"], got.jobs["nodes"].tolist()) if placed and s >= 0]
    for t, _, _, _ in spans:
        for name, i in by_name.items():
            held = Counts()
            for s, e, placed, asks in spans:
                if s <= t < e and name in placed:
                    held = held + Counts(asks)
            assert Counts(dict(nodes[i].gres)) >= Counts({k: v for k, v in held.items() if k != "gpu"})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=gres_scenarios())
def test_a_cluster_without_gres_reads_the_asks_without_planning_them(case):
    nodes, jobs, reservations, first_fit, _, _ = case
    nodes = [dataclasses.replace(n, gres=()) for n in nodes]
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), record_nodes=True,
                              backfill=pbf.Backfill(reservations=reservations))
    with_asks = pbf.replay(_table(jobs), config)
    without = pbf.replay(node_table(jobs), config)
    assert with_asks.jobs["start"].tolist() == without.jobs["start"].tolist()
    want = node_replay(nodes, _ref_jobs(jobs), reservations, False)
    assert with_asks.jobs["start"].tolist() == want["start"]


@given(a=st.lists(st.integers(0, 127), min_size=7, max_size=7), b=st.lists(st.integers(0, 127), min_size=7,
                                                                              max_size=7))
def test_the_lanes_compare_and_take_minima_kind_by_kind(a, b):
    # the word arithmetic of ext/counts.pxd, written out in Python over the packed words, against the
    # kinds one by one (7 kinds: 8 lanes of 8 bits, a count at most 127)
    layout = GresLayout(KINDS[:7])
    hi = sum(1 << (k * layout.width + layout.width - 1) for k in range(layout.lanes))
    wa = layout.word(0, list(zip(KINDS, a)))
    wb = layout.word(0, list(zip(KINDS, b)))
    fits = ((wa | hi) - wb) & hi == hi
    assert fits == all(x >= y for x, y in zip(a, b))
    ge = ((wa | hi) - wb) & hi
    mask = ((ge << 1) - (ge >> (layout.width - 1))) % (1 << 64)
    low = (wa & ~mask) | (wb & mask)
    assert low == layout.word(0, list(zip(KINDS, [min(x, y) for x, y in zip(a, b)])))
    assert least(Counts(zip(KINDS, a)), Counts(zip(KINDS, b))) == Counts(zip(KINDS, map(min, a, b)))


def test_the_layout_packs_gpus_first_and_refuses_counts_a_lane_cannot_hold():
    nodes = [Node("a", 4, gpus=2, gres=(("nvme", 3),)), Node("b", 4, gres={"mps": 100})]
    layout = gres_layout(nodes)
    assert layout.kinds == ("mps", "nvme") and layout.width == 21 and layout.max_count == (1 << 20) - 1
    assert layout.node_words(nodes).tolist() == [2 | 3 << 42, 100 << 21]
    words, never = layout.ask_words(np.array([1, 0, 5, (1 << 20)]), [(("nvme", 1),), (("fpga", 1),), (), ()])
    assert words.tolist()[0] == 1 | 1 << 42 and words.tolist()[2] == 5 and never.tolist() == [False, True, False, True]
    assert gres_layout([Node("c", 4, gpus=2)]) is None
    with pytest.raises(ConfigError, match="node 'x': 65,536 mps: with 8 kinds"):
        GresLayout(KINDS).node_words([Node("x", 4, gres={"mps": 65536})])
    assert parse_gres("nvme:2,mps:100,nvme:fast:1") == (("mps", 100), ("nvme", 3))
    with pytest.raises(ValueError, match="entry 'gpu:2'"):
        parse_gres("gpu:2")


def _site():
    return Cluster.of_nodes([Node("d1", 8, 64000, gres=(("nvme", 2),)), Node("d2", 8, 64000, gres=(("nvme", 1),)),
                             Node("c1", 8, 64000)], name="disks")


def _jobs(asks, cores=2):
    jobs = [dict(submit=0, est=100, run=100, cores=cores, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), gres=a)
            for a in asks]
    return _table(jobs)


def test_a_job_waits_for_its_kind_while_cores_are_free():
    # two jobs of 2 nvme a node: the first takes d1's two, the second waits for it (d2 has one, c1 none);
    # a job asking none goes where best fit puts it, d1's free cores, as ever
    got = pbf.replay(_jobs([(("nvme", 2),), (("nvme", 2),), (("nvme", 1),), ()]),
                     pbf.ReplayConfig(cluster=_site(), record_nodes=True))
    assert got.jobs["nodes"].tolist() == ["d1", "d1", "d2", "d1"]
    assert got.jobs["start"].tolist() == [0, 100, 0, 0]


def test_a_kind_no_node_has_is_rejected_saying_so():
    table = _jobs([(("fpga", 1),), (("nvme", 3),), (("nvme", 1),)])
    got = pbf.replay(table, pbf.ReplayConfig(cluster=_site()))
    assert got.jobs["state"].tolist()[:2] == [pbf.codes.JobState.JS_REJECTED] * 2
    req = requests_of(table)
    assert reject_detail(_site(), req, 0, 2) == "asks GRES fpga, which no node has"
    assert reject_detail(_site(), req, 1, 2) == "asks 3 nvme a node; no node it may use has more than 2"


def test_the_cluster_file_and_slurm_conf_give_gres(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text(textwrap.dedent("""\
        name = "t"
        [[nodes]]
        names = "d[1-2]"
        cores = 8
        gres = { nvme = 2, mps = 100 }
        [[nodes]]
        name = "c1"
        cores = 8
        """))
    assert [n.gres for n in Cluster.load(str(toml)).nodes] == [(("mps", 100), ("nvme", 2))] * 2 + [()]
    toml.write_text('name = "t"\n[[nodes]]\nname = "c1"\ncores = 8\ngres = { gpu = 2 }\n')
    with pytest.raises(ConfigError, match="field gres"):
        Cluster.load(str(toml))
    conf = tmp_path / "slurm.conf"
    conf.write_text("GresTypes=gpu,nvme,mps\nNodeName=g[1-2] CPUs=8 RealMemory=64000 Gres=gpu:a100:4,nvme:2,mps:1K\n"
                    "NodeName=c1 CPUs=8\nPartitionName=p Nodes=ALL Default=YES\n")
    nodes = Cluster.from_slurm_conf(str(conf)).nodes
    assert sorted((n.name, n.gpus, n.gres) for n in nodes) == [
        ("c1", 0, ()), ("g1", 4, (("mps", 1024), ("nvme", 2))), ("g2", 4, (("mps", 1024), ("nvme", 2)))]
    conf.write_text("NodeName=g1 CPUs=8 Gres=nv/me:2\nPartitionName=p Nodes=ALL Default=YES\n")
    with pytest.raises(ConfigError, match=r"slurm.conf, line 1: Gres=.*NAME:N or NAME:TYPE:N"):
        Cluster.from_slurm_conf(str(conf))


def test_a_sacct_dump_s_gres_reach_the_plan(tmp_path):
    dump = tmp_path / "jobs.sacct"
    head = "JobID|Submit|Start|End|Elapsed|Timelimit|ReqCPUS|ReqMem|ReqTRES|ReqGRES|NNodes|State|User|Partition\n"
    row = ("{}|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|01:00:00|2|1G|{}|{}|{}|"
           "COMPLETED|u|p\n")
    dump.write_text(head + row.format(1, "cpu=2,mem=1G,node=1,gres/nvme=2", "", 1)
                    + row.format(2, "cpu=4,mem=1G,node=2,gres/nvme=2", "", 2)
                    + row.format(3, "cpu=2,mem=1G,node=1", "nvme:1(IDX:0)", 1)
                    + row.format(4, "cpu=2,mem=1G,node=1", "", 1))
    table = read_sacct(str(dump))
    assert [dict(g) for g in requests_of(table).gres] == [{"nvme": 2}, {"nvme": 1}, {"nvme": 1}, {}]
    got = pbf.replay(table, pbf.ReplayConfig(cluster=_site(), record_nodes=True))
    assert got.jobs["nodes"].tolist()[0] == "d1"
    assert np.all(got.jobs["state"] == pbf.codes.JobState.JS_DONE)
    from pbf.workload.sacct_report import describe_sacct
    said = " ".join(describe_sacct(table.sacct))
    assert "GRES other than GPUs, jobs asking each: nvme 3" in said and "gres/nvme" not in said


def test_the_engine_places_gres_jobs_and_says_what_they_hold():
    eng = pbf.Engine(_site())
    jobs = [pbf.Job(1, 0, 2, 100, gres={"nvme": 2}), pbf.Job(2, 0, 2, 100, gres=(("nvme", 2),)),
            pbf.Job(3, 0, 2, 100, gres={"fpga": 1})]
    out = eng.advance(0, [pbf.Submit(j) for j in jobs])
    starts = [d for d in out if isinstance(d, pbf.Start)]
    assert [(d.job_id, [p.node for p in d.nodes]) for d in starts] == [(1, ["d1"])]
    assert starts[0].nodes[0].gres == (("nvme", 2),)
    assert any(isinstance(d, pbf.Rejected) and d.job_id == 3 and "asks GRES fpga, which no node has" in d.reason
               for d in out)
    with pytest.raises(pbf.ProtocolError, match="gres"):
        eng.advance(1, [pbf.Submit(pbf.Job(4, 1, 2, 100, gres={"nvme": -1}))])
