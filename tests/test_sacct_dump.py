"""A generated Beocat-like workload with resources, written as a sacct dump and read back, replays as
the table itself does; the dump keeps GPUs, memory and node bounds that SWF cannot hold."""
import subprocess
import sys

import numpy as np
import pytest

import pbf
from pbf.workload import read_swf
from pbf.workload.beocat import generate_beocat
from pbf.workload.sacct_dump import write_sacct


def test_resources_add_gpus_and_change_nothing_else():
    plain = generate_beocat(3000, 86400, seed=4)
    rich = generate_beocat(3000, 86400, seed=4, resources=True)
    for name in ("submit", "run", "req_procs", "req_time", "req_mem", "user"):
        assert np.array_equal(plain.columns[name], rich.columns[name])
    gpu = rich.columns["gpus"] > 0
    assert 0.005 < gpu.mean() < 0.08                       # 2.9 % in expectation, drawn per burst
    assert set(np.unique(rich.columns["gpus"][gpu])) <= {1, 2, 4}
    assert (rich.columns["nodes_max"][gpu] == 1).all() and (rich.columns["nodes_max"][~gpu] == 0).all()
    assert np.array_equal(rich.columns["mem_core_mb"], np.ceil(rich.req_mem / 1024).astype(np.int64))


def test_a_dump_replays_as_the_table(tmp_path):
    table = generate_beocat(1500, 6 * 3600, seed=2, resources=True)
    write_sacct(table, tmp_path / "w.sacct")
    back = read_swf(tmp_path / "w.sacct")
    assert len(back) == len(table)
    for name in ("gpus", "mem_core_mb", "nodes_min", "nodes_max"):
        assert np.array_equal(back.columns[name], table.columns[name]), name
    config = pbf.ReplayConfig(cluster="beocat-gpu")
    a, b = pbf.replay(table, config), pbf.replay(back, config)
    # (a dump counts time from its first submit)
    shift = int(table.submit.min())
    assert np.array_equal(a.jobs["start"] - shift, b.jobs["start"])
    assert a.summary["nodes"]["utilisation"] == b.summary["nodes"]["utilisation"]
    assert b.summary["nodes"]["utilisation"]["gpus"] > 0


def test_gpu_jobs_on_several_nodes_cannot_be_written(tmp_path):
    table = generate_beocat(200, 3600, seed=1, resources=True)
    table.columns["gpus"][:] = 1
    table.columns["nodes_max"][:] = 0
    with pytest.raises(pbf.ConfigError, match="one-node"):
        write_sacct(table, tmp_path / "x.sacct")
    assert not (tmp_path / "x.sacct").exists()


def test_cli_resources_need_the_sacct_form(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "pbf", *a], capture_output=True, text=True,  # noqa: E731
                                    cwd=tmp_path)
    bad = run("gen", "beocat", "--jobs", "50", "--resources", "-o", "x.swf")
    assert bad.returncode == 2 and "sacct form" in bad.stderr and not (tmp_path / "x.swf").exists()
    ok = run("gen", "beocat", "--jobs", "400", "--window", "1h", "--resources", "-o", "x.sacct")
    assert ok.returncode == 0, ok.stderr
    assert "GPU jobs" in ok.stdout
    rep = run("replay", "x.sacct", "--cluster", "beocat-gpu", "--json")
    assert rep.returncode == 0, rep.stderr
