"""Generators: reproducible bit for bit, and close to the figures they model."""
import numpy as np
import pytest

import pbf
from pbf import beocat_cluster
from pbf.errors import ConfigError
from pbf.workload import Cleaning, read_swf, write_swf
from pbf.workload.beocat import TRAFFIC_WINDOWS, generate_beocat
from pbf.workload.lublin import LUBLIN_PRESETS, _gamcdf, generate_lublin
from pbf.workload.rescale import rescale


def test_beocat_cluster_is_the_normal_partition():
    c = beocat_cluster()
    assert c.units == 9128 and len(c.nodes) == 299


def test_beocat_is_reproducible_bit_for_bit(tmp_path):
    a, b, c = (generate_beocat(5000, seed=s) for s in (7, 7, 8))
    write_swf(a, tmp_path / "a.swf.gz")
    write_swf(b, tmp_path / "b.swf.gz")
    write_swf(c, tmp_path / "c.swf.gz")
    assert (tmp_path / "a.swf.gz").read_bytes() == (tmp_path / "b.swf.gz").read_bytes()
    assert (tmp_path / "a.swf.gz").read_bytes() != (tmp_path / "c.swf.gz").read_bytes()


@pytest.fixture(scope="module")
def high():
    return generate_beocat(100_000, TRAFFIC_WINDOWS["high"], seed=0)


def test_beocat_statistics_follow_the_reference(high):
    cores, run, req = high.units, high.run, high.req_time
    assert len(high) == 100_000
    assert abs((cores == 1).mean() - 0.63) < 0.03          # 63% single-core
    assert 3.0 < cores.mean() < 4.5                         # mean about 3.6 cores
    assert cores.max() <= 64
    acc = run / req
    assert abs(np.median(acc) - 0.011) < 0.004              # median run/request 0.011
    assert abs(acc.mean() - 0.109) < 0.03 and abs(np.quantile(acc, 0.9) - 0.42) < 0.05
    assert np.median(req) in (84600, 86400) and (run <= req).all() and (run >= 1).all()
    assert abs((run < 60).mean() - 0.356) < 0.03           # 35.6% shorter than a minute
    gaps = np.diff(high.submit)
    assert (gaps >= 0).all() and (gaps == 0).mean() > 0.6  # bursts in the same second
    assert len(np.unique(high.user)) > 300
    assert high.submit.min() >= 0 and high.submit.max() < 7 * 86400
    assert high.header.max_procs == 9128


def test_low_traffic_has_the_same_jobs_in_two_weeks(high):
    low = generate_beocat(100_000, TRAFFIC_WINDOWS["low"], seed=0)
    for k in ("job_id", "run", "req_time", "units", "user"):
        assert np.array_equal(high.columns[k], low.columns[k])
    assert low.submit.max() > 7 * 86400 and low.submit.max() < 14 * 86400


def test_pack_arrivals_are_evenly_spaced():
    t = generate_beocat(1000, 7000, seed=1, arrivals="pack")
    assert list(np.unique(np.diff(t.submit))) == [7]


def test_bad_generator_arguments():
    with pytest.raises(ConfigError, match="n_jobs"):
        generate_beocat(0)
    with pytest.raises(ConfigError, match="arrivals"):
        generate_beocat(10, arrivals="poisson")
    with pytest.raises(ConfigError, match="unknown Lublin preset 'x'; known: typed"):
        generate_lublin(10, preset="x")


def test_gamcdf_matches_known_values():
    # P(1, x) = 1 - e^-x; P(a, x) for a large x -> 1
    assert _gamcdf(2.0, 1.0, 1.0) == pytest.approx(1 - np.exp(-2.0), rel=1e-9)
    assert _gamcdf(30.0, 2.0, 1.0) == pytest.approx(1 - 31 * np.exp(-30.0), rel=1e-9)


def _moments(t):
    n, r, s = t.alloc_procs, t.run, t.submit
    return {"serial": (n == 1).mean(), "size": n.mean(), "run": r.mean(), "run_median": np.median(r),
            "interarrival": np.diff(s).mean()}


@pytest.mark.parametrize("preset, name", [("lublin-1", "rlsched_lublin_256.swf.gz"),
                                          ("lublin-2", "rlsched_lublin_256_new2.swf.gz")])
def test_lublin_moments_match_rlscheduler_traces(shared_trace, preset, name):
    ref = _moments(read_swf(shared_trace(name), Cleaning.none()))
    got = _moments(generate_lublin(10_000, preset, seed=0))
    assert abs(got["serial"] - ref["serial"]) < 0.03
    assert got["size"] == pytest.approx(ref["size"], rel=0.15)
    assert got["run"] == pytest.approx(ref["run"], rel=0.25)
    assert got["run_median"] == pytest.approx(ref["run_median"], rel=0.35)
    assert got["interarrival"] == pytest.approx(ref["interarrival"], rel=0.25)


@pytest.mark.parametrize("preset", list(LUBLIN_PRESETS))
def test_lublin_presets_are_reproducible_and_bounded(preset):
    a, b = generate_lublin(2000, preset, seed=3), generate_lublin(2000, preset, seed=3)
    assert all(np.array_equal(a.columns[k], b.columns[k]) for k in a.columns)
    assert (np.diff(a.submit) >= 0).all() and (a.run >= 1).all() and (a.run <= 162754).all()
    assert (a.alloc_procs >= 1).all() and (a.alloc_procs <= a.header.max_procs).all()
    assert (a.req_time == -1).all()            # the model has no requested time


def test_lublin_typed_mixes_both_job_types():
    t = generate_lublin(5000, "typed", seed=0)
    assert 0.05 < (t.queue == 1).mean() < 0.95


def test_rescale_linear_and_pack():
    t = generate_beocat(3000, 86400, seed=2)
    lin = rescale(t, 3600)
    assert lin.submit.min() == t.submit.min() and lin.submit.max() < t.submit.min() + 3600
    assert (np.diff(lin.submit) >= 0).all()
    same = np.diff(t.submit) == 0
    assert (np.diff(lin.submit)[same] == 0).all()          # bursts stay bursts
    packed = rescale(t, 3000, "pack")
    assert list(np.unique(np.diff(packed.submit))) == [1]
    stretched = rescale(t, 2 * 86400)
    assert stretched.submit.max() > 86400
    with pytest.raises(ConfigError, match="mode"):
        rescale(t, 10, "log")


def test_committed_samples_match_their_commands(tmp_path):
    """traces/README.md says how each committed sample was made; the command still makes it."""
    from pathlib import Path

    from pbf.cli import main
    repo = Path(__file__).resolve().parents[1]
    for name, argv in (("beocat-2000-1d.swf.gz", ["beocat", "--jobs", "2000", "--window", "1d", "--seed", "0"]),
                       ("lublin1-1000.swf.gz", ["lublin", "--jobs", "1000", "--preset", "lublin-1", "--seed", "0"])):
        out = tmp_path / name
        assert main(["gen", *argv, "-o", str(out), "--quiet"]) == 0
        assert out.read_bytes() == (repo / "traces" / name).read_bytes(), name


def test_archer2_like_workload_and_cluster(tmp_path):
    from pbf.workload.archer2 import archer2_cluster, archer2_slurm_conf, generate_archer2
    from pbf.workload.sacct_dump import write_sacct
    t = generate_archer2(3_000, window=2 * 86400, seed=1)
    again = generate_archer2(3_000, window=2 * 86400, seed=1)
    assert (t.run == again.run).all() and (t.submit == again.submit).all()
    nodes = t.columns["nodes_min"]
    exclusive = t.columns["mem_node_mb"] > 0
    assert 0.85 < exclusive.mean() < 0.95
    assert (t.req_procs[exclusive] == nodes[exclusive] * 128).all() and (t.req_procs[~exclusive] <= 32).all()
    assert nodes.max() <= 1024 and (t.run <= t.req_time).all() and (t.req_time <= 48 * 3600).all()
    conf, dump = tmp_path / "a2.conf", tmp_path / "a2.sacct"
    archer2_slurm_conf(conf)
    write_sacct(t, dump)
    cluster = pbf.Cluster.from_slurm_conf(conf)
    assert cluster.units == archer2_cluster().units == 5_860 * 128
    assert sum(n.memory_mb == 512_000 for n in cluster.nodes) == 584 and cluster.default_mem_per_core_mb == 1_984
    small = archer2_cluster(64)
    r = pbf.replay(generate_archer2(300, window=3600, seed=2, nodes=64), pbf.ReplayConfig(cluster=small))
    assert r.summary["jobs"]["rejected"] == 0 and r.summary["jobs"]["completed"] == 300
