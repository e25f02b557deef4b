"""The Slurm version a site is replayed as (pbf.slurm_versions, --slurm-version): the defaults and rules that
differ between Slurm 20.11, 22.05 and 23.11, and the node weights' rules on the compiled core against the
oracle (pbf.reference.slurm_backfill_ref.NodeWeights)."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import cli
from pbf.bf_limits import SlurmBackfill
from pbf.cluster import Cluster
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_settings import slurm_settings
from pbf.slurm_versions import VERSION_RULES, node_marks

from scheduling import busy_node_scenarios, node_table, replay_checked

NODES = "NodeName=n[1-2] CPUs=4 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n"


def _conf(tmp_path, text, name="slurm.conf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_each_versions_defaults_where_the_file_is_silent(tmp_path):
    site = _conf(tmp_path, "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n" + NODES)
    old, now, new = (slurm_settings(site, slurm_version=v) for v in ("20.11", "22.05", "23.11"))
    assert (old.config.backfill.max_job_test, now.config.backfill.max_job_test, new.config.backfill.max_job_test) \
        == (100, 500, 500)
    assert old.mapped["SchedulerParameters bf_max_job_test"] == "100 (Slurm 20.11 default)"
    assert (old.slurm_version, now.slurm_version, new.as_dict()["slurm_version"]) == ("20.11", "22.05", "23.11")
    assert now.mapped["slurm_version"].startswith("22.05 (pbf's default")
    assert (old.config.backfill.marks(), now.config.backfill.marks(), new.config.backfill.marks()) \
        == ("carry", "carry", "per-test")
    with pytest.raises(ConfigError, match="slurm_version must be one of 20.11, 22.05, 23.11"):
        slurm_settings(site, slurm_version="21.08")


def test_what_one_version_refuses_and_another_takes(tmp_path):
    # bf_interval=-1 turns backfill off from 22.05; 20.11 takes 1 to 10800
    off = _conf(tmp_path, "SchedulerParameters=bf_interval=-1\n" + NODES, "off.conf")
    assert slurm_settings(off).config.backfill.enabled is False
    with pytest.raises(ConfigError, match="bf_interval='-1': expected a whole number from 1 to 10,800"):
        slurm_settings(off, slurm_version="20.11")
    # cons_tres without SelectTypeParameters: CR_Core_Memory from 22.05, a fatal error in 20.11
    bare = _conf(tmp_path, "SelectType=select/cons_tres\n" + NODES, "bare.conf")
    assert slurm_settings(bare).config.mem_from == "requested"
    with pytest.raises(ConfigError, match="without SelectTypeParameters: Slurm 20.11's slurmctld stops at start"):
        slurm_settings(bare, slurm_version="20.11")
    # select/cons_res: gone in 23.11; before it, no GPU marks on the nodes' weights
    res = _conf(tmp_path, "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n" + NODES, "res.conf")
    assert slurm_settings(res, slurm_version="20.11").config.backfill.marks() == "none"
    with pytest.raises(ConfigError, match=r"line 1: SelectType='select/cons_res': expected select/cons_tres .*"
                                          "Slurm 23.11 removed select/cons_res"):
        slurm_settings(res, slurm_version="23.11")
    with pytest.raises(ConfigError, match="Slurm 23.11 removed select/cons_res"):
        SlurmBackfill(slurm_version="23.11", select_type="cons_res")


def test_every_rule_names_its_source():
    for rule, by_version, source in VERSION_RULES:
        assert set(by_version) == {"20.11", "22.05", "23.11"} and "src/" in source, rule
    assert node_marks("22.05", "cons_res") == "none" and node_marks("23.11", "cons_tres") == "per-test"


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
            for j in jobs]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_node_scenarios(), st.sampled_from([("22.05", "cons_tres"), ("23.11", "cons_tres"),
                                               ("22.05", "cons_res")]))
def test_compiled_node_weights_by_version_are_the_oracle(case, version):
    nodes, jobs, reservations, first_fit, resolution, window = case
    bf = SlurmBackfill(reservations=reservations, resolution=resolution, window=window, slurm_version=version[0],
                       select_type=version[1])
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm", backfill=bf,
                              node_choice="first-fit" if first_fit else "best-fit")
    got = replay_checked(node_table(jobs), config)
    want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations, window=window, resolution=resolution,
                             first_fit=first_fit, marks=bf.marks())
    assert got.jobs["start"].tolist() == want["start"]
    names = [",".join(nodes[i].name for i in sorted(a)) if a else "" for a in want["alloc"]]
    assert got.jobs["nodes"].tolist() == names


def test_the_version_flag_goes_with_slurm_conf(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    rows = [f"{i} {10 * i} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1" for i in range(1, 6)]
    swf.write_text("; MaxProcs: 8\n" + "\n".join(rows) + "\n")
    site = _conf(tmp_path, "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n" + NODES)
    out = tmp_path / "out"
    assert cli.main(["replay", str(swf), "--slurm-conf", str(site), "--slurm-version", "20.11", "--quiet",
                     "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["slurm_conf"]["slurm_version"] == "20.11" and s["config"]["backfill"]["max_job_test"] == 100
    assert s["config"]["backfill"]["slurm_version"] == "20.11"
    assert cli.main(["replay", str(swf), "--slurm-version", "23.11", "--quiet"]) != 0
    assert "--slurm-version says which Slurm's rules read a site's slurm.conf" in capsys.readouterr().err
