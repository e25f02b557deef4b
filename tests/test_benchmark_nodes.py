"""The ARCHER2-sized pass benchmark (pbf.benchmark_nodes) runs and says what it measured (its times are
benchmarks, not asserted)."""
import pytest

from pbf.benchmark_nodes import archer2_passes
from pbf.benchmark_text import format_rows


@pytest.mark.parametrize("search", ["slurm", "exact"])
def test_archer2_passes_run_and_count_their_decisions(search):
    lines = []
    out = archer2_passes(search, queued=300, passes=2, max_job_test=50, report=lines.append)
    assert len(out["walls"]) == len(out["started"]) == len(out["reserved"]) == 3
    assert all(w > 0 for w in out["walls"])
    # a reservation for every job tested, up to bf_max_job_test: the deep queue is full of them
    assert all(0 < s + r <= 50 for s, r in zip(out["started"], out["reserved"]))
    assert lines[0].startswith(f"{search}: ") and len(lines) == 4


def test_a_pass_row_reads_as_a_sentence():
    row = {"slice": "large", "name": "archer2 pass, Slurm search", "params": "100,000 queued", "best_s": 2.5,
           "median_s": 2.8, "trials": 5, "first_pass_s": 6.9, "started": 3, "reservations": 997,
           "peak_rss_mb": 224.0}
    text = format_rows([row])
    assert "started 3, reservations 997 a pass; the pass with the submits 6.90 s; peak RSS 224 MB" in text


def test_a_node_replay_reports_its_process_and_passes(tmp_path):
    from pbf.benchmark_nodes import REPLAY_JOBS_PER_DAY, node_replay, node_replay_row
    r = node_replay(300, keep=tmp_path)
    assert r["jobs"] == r["completed"] + r["rejected"] == 300
    assert r["window_days"] == pytest.approx(300 / REPLAY_JOBS_PER_DAY, abs=1e-4)
    assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_rss_mb"] > 0 and r["replay_s"] > 0
    assert r["passes"] >= r["full_passes"] > 0 and 0 < r["full_pass_s"] <= r["pass_s"]
    # the workload kept is used again, not written anew
    (sacct,) = tmp_path.glob("archer2-300-*.sacct")
    mtime = sacct.stat().st_mtime_ns
    assert node_replay(300, keep=tmp_path)["passes"] == r["passes"] and sacct.stat().st_mtime_ns == mtime
    row = node_replay_row(r)
    assert row["slice"] == "large" and row["us_per_job"] == pytest.approx(r["wall_s"] / 300 * 1e6)
    text = format_rows([row])
    assert "node replay, exact search: 300 jobs in 0.21 days on 5,860 nodes x 128 cores" in text
    assert f"{r['passes']:,} passes ({r['full_passes']:,} full" in text


def test_the_node_replay_size_comes_from_the_environment(monkeypatch):
    from pbf.benchmark_nodes import REPLAY_JOBS_ENV, archer2_pass_rows, node_replay, node_replay_jobs
    from pbf.errors import ConfigError
    monkeypatch.delenv(REPLAY_JOBS_ENV, raising=False)
    assert node_replay_jobs(100_000) == 100_000
    monkeypatch.setenv(REPLAY_JOBS_ENV, " 1000000 ")
    assert node_replay_jobs(100_000) == 1_000_000
    monkeypatch.setenv(REPLAY_JOBS_ENV, "0")
    assert node_replay_jobs(100_000) == 0
    for bad in ("1e6", "-5", "lots"):
        monkeypatch.setenv(REPLAY_JOBS_ENV, bad)
        with pytest.raises(ConfigError, match=rf"\$PBF_BENCH_NODE_REPLAY_JOBS: '{bad}': expected"):
            node_replay_jobs(100_000)
        # the size is checked before any pass is run
        with pytest.raises(ConfigError):
            archer2_pass_rows(queued=100)
    with pytest.raises(ConfigError, match="replay_jobs"):
        archer2_pass_rows(queued=100, replay_jobs=-1)
    with pytest.raises(ConfigError, match="search"):
        node_replay(10, search="fast")
