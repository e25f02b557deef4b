"""pbf bench and the bench module: they run, report the machine's load, and check the work done."""
import json

import pytest

from pbf import benchmark as bench
from pbf.cli import main


def test_pass_rows_check_work_and_compare_with_the_reference():
    rows = bench.pass_rows([bench.PassScenario(50, 64, 8), bench.PassScenario(50, 64, 8, None)], trials=2)
    for row in rows:
        assert row["depth"] == 50 and row["started"] > 0 and row["ratio_vs_reference"] > 0
    assert rows[1]["reservations"] > rows[0]["reservations"] == 1
    # the automatic choice is compared with 1 worker after the same pool start
    for row in rows:
        assert row["auto_2_speedup"] == pytest.approx(row["auto_2_baseline_median_s"] / row["auto_2_median_s"])


def test_scenarios_are_deterministic_and_checked():
    sc = bench.PassScenario(200, 256, 20)
    assert bench.time_pass(sc)[1] == bench.time_pass(sc)[1] == bench.time_pass(sc, "reference")[1]
    assert bench.time_pass(sc, pool_first=2)[1] == bench.time_pass(sc)[1]
    with pytest.raises(ValueError, match="pool_first"):
        bench.time_pass(sc, workers=2, pool_first=2)
    assert not bench.PassScenario(10, 128, 10_000).feasible()
    assert not bench.PassScenario(50_000, 9_128, 2_000, None).matrix_affordable()


def test_growth_fits_slopes():
    rows = bench.growth_rows(queue_sizes=(200, 400, 800), unit_sizes=(128, 256, 512), trials=1)
    slopes = [r for r in rows if "slope" in r]
    assert len(slopes) == 2 and all(-1 < r["slope"] < 3 for r in slopes)


def test_pbf_bench_bitmap_json(capsys):
    assert main(["bench", "--slice", "bitmap", "--quick", "--trials", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cores"] >= 1 and out["other_processes_cpu_cores"] >= 0
    assert {r["name"] for r in out["rows"]} >= {"popcount", "count_and", "first_fit(n/4)"}


def test_pbf_bench_table(monkeypatch, capsys):
    real = bench.pass_rows
    monkeypatch.setattr(bench, "pass_rows", lambda scen, **kw: real([bench.PassScenario(30, 64, 4)], trials=1))
    assert main(["bench", "--quick", "--trials", "1"]) == 0
    text = capsys.readouterr().out
    assert "cores" in text and "one full pass" in text and "faster than the pure-Python reference" in text
    assert "2 workers: " in text and all(len(line) < 120 for line in text.splitlines())


def test_every_ratio_says_its_direction_or_noise():
    from pbf.benchmark_text import format_rows, ratio_text, within_noise
    assert within_noise([1.0, 1.1, 0.9], [1.0, 1.0, 1.0])            # the trials disagree on the direction
    assert within_noise([1.02, 1.01, 1.02], [1.0, 1.0, 1.0])         # all one way, but under 3 %
    assert within_noise([2.0, 2.0], [1.0, 1.0])                      # too few trials to tell
    assert not within_noise([2.0, 2.1, 2.2], [1.0, 1.0, 1.0])
    assert ratio_text(0.97, True) == "0.97x, within noise"
    assert ratio_text(1.41, False) == "1.41x faster" and ratio_text(0.62, False) == "0.62x, slower"
    row = {"slice": "pass", "name": "one full pass", "params": "queued=100", "median_s": 1e-5, "best_s": 9e-6,
           "trials": 5, "depth": 100, "started": 3, "reservations": 1,
           "speedup_2_workers": 0.5, "speedup_2_workers_best": 0.6, "speedup_2_workers_within_noise": False,
           "auto_2_speedup": 1.41, "auto_2_within_noise": True, "auto_2_parallel_trials": 0}
    text = format_rows([row])
    assert "2 workers: a replay keeps this pass on one thread" in text and "0.50x, slower" in text
    row.update(auto_2_parallel_trials=5)
    assert "2 workers: 1.41x, within noise (threads taken in 5/5 trials)" in format_rows([row])


def test_skipped_real_logs_are_said():
    from pathlib import Path
    note = bench.skipped_logs_note(["SDSC-SP2-1998-4.2-cln.swf.gz"], None)
    assert "skipped SDSC-SP2-1998-4.2-cln.swf.gz" in note and "PBF_TRACES" in note
    assert "not in /nowhere" in bench.skipped_logs_note(["x.swf"], Path("/nowhere"))
    text = bench.format_rows([{"slice": "replay", "name": "skipped", "note": note}])
    assert "skipped SDSC-SP2" in text and all(len(line) < 120 for line in text.splitlines())
