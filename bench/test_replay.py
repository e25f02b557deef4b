"""Replay throughput on the real logs (when present) and the Beocat-like traces."""
import pytest

from pbf.replayer import ReplayConfig, replay
from pbf.workload import read_swf
from pbf.workload.beocat import TRAFFIC_WINDOWS, generate_beocat


def _run(benchmark, table, trigger):
    result = benchmark.pedantic(replay, args=(table, ReplayConfig(trigger=trigger)), rounds=1, iterations=1)
    jobs = result.summary["jobs"]
    assert jobs["completed"] + jobs["rejected"] == len(table) and jobs["completed"] > 0
    wall = benchmark.stats.stats.median
    benchmark.extra_info.update({"jobs": len(table), "passes": result.summary["passes"]["count"],
                                 "jobs_per_s": len(table) / wall,
                                 "passes_per_s": result.summary["passes"]["count"] / wall})


@pytest.mark.benchmark(group="replay")
@pytest.mark.parametrize("name", ["SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz",
                                  "LLNL-Thunder-2007-1.1-cln.swf.gz"])
def test_replay_real_log(benchmark, shared_trace, name):
    _run(benchmark, read_swf(shared_trace(name)), "event")


@pytest.mark.benchmark(group="replay")
@pytest.mark.parametrize("traffic", ["high", "low"])
def test_replay_beocat(benchmark, traffic):
    _run(benchmark, generate_beocat(100_000, TRAFFIC_WINDOWS[traffic], seed=0), "interval")


@pytest.mark.benchmark(group="replay-scoring")
@pytest.mark.parametrize("preset", ["easy", "easy++", "gaussier"])
def test_replay_sdsc_preset(benchmark, shared_trace, preset):
    """The scoring speed target: a full SDSC-SP2 replay with the regression predictor (gaussier)."""
    table = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    result = benchmark.pedantic(replay, args=(table, ReplayConfig.from_preset(preset)), rounds=3, iterations=1)
    assert result.summary["jobs"]["completed"] > 50_000
    benchmark.extra_info.update({"jobs": len(table), "bsld": result.metrics.bsld,
                                 "corrections": result.summary["prediction"]["corrections"]})
