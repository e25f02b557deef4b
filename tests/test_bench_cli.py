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
    assert "cores" in text and "one full pass" in text and "vs reference" in text
