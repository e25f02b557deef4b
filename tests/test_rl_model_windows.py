"""Validation and held-out windows drawn from a fresh sample of a Lublin trace's workload model
(pbf.rl.model_windows), and their use in python -m pbf.rl.select and pbf experiment rlscheduler."""
import os
import shutil

import numpy as np
import pytest

from pbf.errors import ConfigError
from pbf.rl.kernel import KernelPolicy, shipped_models
from pbf.rl.model_windows import (
    HELD_OUT_SEED,
    consecutive_starts,
    held_out_sample,
    model_sample,
    trace_sample,
)
from pbf.rl.trace import RLTrace

from helpers import write_small_swf

LUBLIN_2 = "rlsched_lublin_256_new2.swf.gz"


def test_a_sample_reads_like_rlschedulers_lublin_file(shared_trace, tmp_path):
    # what the compat loader reads: no requested time (run time stands in), 256 nodes of one processor,
    # nothing dropped, and the original trace's normalisers rather than the sample's own
    from pbf.cli import main
    path = shared_trace(LUBLIN_2)
    ref = RLTrace.load(path, compat=True)
    s = held_out_sample("lublin-2", path)
    t = s.trace
    assert (ref.req == ref.run).all() and (t.req == t.run).all()
    assert (t.total_nodes, t.max_procs, t.procs_per_node) == (ref.total_nodes, ref.max_procs, ref.procs_per_node)
    assert (t.total_nodes, t.procs_per_node) == (256, 1.0)
    assert len(t) == 10 * 1024 and sum(t.dropped.values()) == 0
    assert t.norm == ref.norm
    own = RLTrace.load(_written(tmp_path, "lublin-2", HELD_OUT_SEED, 10 * 1024), compat=True)
    assert own.norm["req"] != ref.norm["req"]        # a sample's largest run time is its own
    assert np.allclose(t.features[:, 1], np.minimum(t.run / ref.norm["req"], 1 - 1e-5))
    assert s.starts == tuple(range(0, 10 * 1024, 1024)) and s.window == 1024
    assert s.source == "pbf gen lublin --preset lublin-2 --seed 1 --jobs 10240"
    # the command in `source` makes the same trace
    out = tmp_path / "cli.swf"
    assert main(s.source.split()[1:] + ["-o", str(out), "--quiet"]) == 0
    again = trace_sample(out, path, count=10).trace
    for k in ("submit", "run", "req", "procs", "nodes", "features"):
        assert np.array_equal(getattr(again, k), getattr(t, k)), k
    # seeds give independent samples
    other = model_sample("lublin-2", 2, path, count=10).trace
    assert not np.array_equal(other.run, t.run)


def _written(tmp_path, preset, seed, jobs):
    from pbf.workload.lublin import generate_lublin
    from pbf.workload.swf import write_swf
    out = tmp_path / f"{preset}-{seed}.swf"
    write_swf(generate_lublin(jobs, preset=preset, seed=seed), out)
    return out


def test_load_with_given_normalisers(tmp_path):
    path = write_small_swf(tmp_path / "small.swf")
    own = RLTrace.load(path, compat=True)
    norm = dict(own.norm, req=own.norm["req"] * 4)
    t = RLTrace.load(path, compat=True, norm=norm)
    assert t.norm["req"] == norm["req"]
    assert np.allclose(t.features[:, 1], np.minimum(t.req / norm["req"], 1 - 1e-5), atol=1e-6)
    assert (t.features[:, 1] < own.features[:, 1]).any()
    assert np.array_equal(t.features[:, 2], own.features[:, 2])
    with pytest.raises(ConfigError, match="norm"):
        RLTrace.load(path, compat=True, norm={"req": 100.0})
    with pytest.raises(ConfigError, match="norm"):
        RLTrace.load(path, compat=True, norm=dict(own.norm, req=0))


def test_consecutive_windows():
    assert consecutive_starts(3000, 2, 1024) == (0, 1024)
    with pytest.raises(ConfigError, match="need 3072 jobs"):
        consecutive_starts(3000, 3, 1024)
    with pytest.raises(ConfigError):
        consecutive_starts(3000, 0, 1024)
    with pytest.raises(ConfigError, match="no workload model"):
        model_sample("sdsc-sp2", 1, "unused.swf", count=1)
    assert held_out_sample("hpc2n", "unused.swf") is None


def test_select_chooses_across_runs_on_windows_of_the_model(shared_trace, tmp_path, capsys):
    # two runs compete; only the validation mean on the sample's windows chooses; the held-out windows
    # are the experiment's (a sample of seed 1)
    from pbf.rl.select import main, select_run
    path = shared_trace(LUBLIN_2)
    runs = [tmp_path / "a", tmp_path / "b"]
    for r in runs:
        (r / "checkpoints").mkdir(parents=True)
    shutil.copy(shipped_models()["lublin-2"], runs[0] / "model.npz")
    KernelPolicy.random(0, {"kind": "job-selection", "name": "random"}).save(runs[1] / "checkpoints" / "epoch0001.npz")
    val = model_sample("lublin-2", 2, path, count=4)
    r = select_run(runs, path, False, validation=val)
    assert r["validation"]["window"] == 1024 and r["validation"]["starts"] == [0, 1024, 2048, 3072]
    assert r["validation"]["source"].startswith("pbf gen lublin --preset lublin-2 --seed 2")
    assert set(r["val"]) == {str(runs[0] / "model.npz"), str(runs[1] / "checkpoints" / "epoch0001.npz")}
    assert r["chosen"] == min(r["val"], key=r["val"].get) == str(runs[0] / "model.npz")
    assert r["test"][r["chosen"]] == pytest.approx(626.07, abs=0.01)        # docs/rl.md's figure
    assert r["held_out_source"] == "pbf gen lublin --preset lublin-2 --seed 1 --jobs 10240"
    assert r["held-out"]["sjf"] != r["test"]["sjf"]
    # each candidate's lead over the better heuristic on the validation windows, with its standard error
    vs = r["val_vs_heuristic"]
    bar = vs["heuristic"]
    assert r["val_heuristics"][bar] == min(r["val_heuristics"].values())
    for c, mean in r["val"].items():
        d, se = vs["candidates"][c]
        assert d == pytest.approx(mean - r["val_heuristics"][bar]) and se > 0
    # which candidates the validation windows cannot tell from the choice
    for c, (d, se) in r["tied_with_choice"].items():
        assert c != r["chosen"] and d == pytest.approx(r["val"][c] - r["val"][r["chosen"]]) and d < 2 * se
    assert r["tied_with_choice"] == {}           # the random policy is far behind
    twin = tmp_path / "c"
    twin.mkdir()
    shutil.copy(shipped_models()["lublin-2"], twin / "model.npz")
    r2 = select_run(runs + [twin], path, False, validation=val)
    assert r2["chosen"] == str(runs[0] / "model.npz") and list(r2["tied_with_choice"]) == [str(twin / "model.npz")]
    assert r2["tied_with_choice"][str(twin / "model.npz")][0] == 0
    assert main([str(runs[0]), str(runs[1]), "--trace", str(path), "--validation-seed", "2",
                 "--validation-windows", "4"]) == 0
    text = capsys.readouterr().out
    assert "4 windows of 1024 jobs of pbf gen lublin --preset lublin-2 --seed 2 --jobs 4096" in text
    assert "a/model.npz *" in text and f"vs {bar.upper()} (se)" in text and "within two standard errors" not in text
    assert main([str(runs[0]), str(runs[1]), str(twin), "--trace", str(path), "--validation-seed", "2",
                 "--validation-windows", "4"]) == 0
    assert "within two standard errors of 1 other candidate(s) on the validation windows (paired): c/model.npz " \
        "+0.00" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="not one of RLScheduler's Lublin traces"):
        main([str(runs[0]), "--trace", str(write_small_swf(tmp_path / "small.swf")), "--validation-seed", "2"])


def test_select_draws_as_many_windows_of_the_trace_as_asked(shared_trace, tmp_path, capsys):
    # --validation-windows N on the trace's own windows: N windows apart from the test and held-out
    # windows, after --after; refused for backfilling runs (RLBackfilling's 10 windows) and for N < 1
    from pbf.rl.evaluate import RLS_TEST_STARTS, held_out_starts
    from pbf.rl.select import main, select_run
    path = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz")
    (tmp_path / "checkpoints").mkdir()
    shutil.copy(shipped_models()["sdsc-sp2"], tmp_path / "model.npz")
    r = select_run(tmp_path, path, False, after=10_000, windows=3)
    starts = r["validation"]["starts"]
    assert len(set(starts)) == 3 and all(s >= 10_000 for s in starts) and r["validation"]["window"] == 1024
    taken = list(RLS_TEST_STARTS) + list(held_out_starts(len(RLTrace.load(path, compat=True))))
    assert all(s + 1024 <= t or s >= t + 1024 for s in starts for t in taken)
    assert starts == r["validation"]["starts"][:3] == select_run(tmp_path, path, False, 10_000, windows=4)[
        "validation"]["starts"][:3]          # the same draw, longer
    bf = tmp_path / "bf"
    (bf / "checkpoints").mkdir(parents=True)
    shutil.copy(shipped_models()["rlbf-sdsc-sp2"], bf / "model.npz")
    with pytest.raises(ConfigError, match="--validation-windows"):
        main([str(bf), "--trace", str(path), "--validation-windows", "3"])
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--trace", str(path), "--validation-windows", "0"])
    assert "argument --validation-windows: expected a whole number from 1 up" in capsys.readouterr().err


def test_the_standard_error_of_a_paired_difference_counts_shared_jobs():
    from pbf.rl.evaluate import paired_difference
    a, b = [3.0, 5.0, 4.0, 8.0], [1.0, 1.0, 2.0, 2.0]
    d = np.subtract(a, b)
    disjoint = paired_difference(a, b, [0, 1024, 2048, 4096])
    assert disjoint == pytest.approx((d.mean(), d.std(ddof=1) / 2))
    # windows 0 and 512 share half their jobs: var = s^2 (4 + 2 x 0.5) / 16
    shared = paired_difference(a, b, [0, 512, 2048, 4096])
    assert shared[1] == pytest.approx(np.sqrt(d.var(ddof=1) * 5) / 4)
    # the same window four times: no more information than one window
    assert paired_difference(a, b, [7, 7, 7, 7])[1] == pytest.approx(d.std(ddof=1))
    assert paired_difference([1.0], [2.0], [0]) == (-1.0, None)
    with pytest.raises(ValueError):
        paired_difference(a, b, [0, 1])


def test_held_out_rows_of_the_lublin_traces_come_from_the_model(shared_trace):
    from pbf.studies.rlscheduler import format_rlscheduler, rlscheduler_table
    path = shared_trace("rlsched_lublin_256.swf.gz")
    res = rlscheduler_table(trace_dir=os.path.dirname(path), traces=("lublin-1",), backfill=(True,), held_out=True)
    test, held = res["rows"]
    assert (test["windows"], held["windows"]) == ("test", "held-out")
    assert held["windows_source"] == "pbf gen lublin --preset lublin-1 --seed 1 --jobs 10240"
    assert held["starts"] == list(range(0, 10 * 1024, 1024))
    assert held["model"] == "lublin-1-backfill" and held["paper"] is None
    assert held["pbf"]["sjf"] != test["pbf"]["sjf"]
    assert "windows from the workload model, not the trace" in format_rlscheduler(res)


@pytest.mark.parametrize("trace,backfill", [("hpc2n", False), ("hpc2n", True), ("lublin-1", True),
                                            ("lublin-2", False), ("lublin-2", True)])
def test_shipped_models_that_beat_the_heuristics_on_held_out_windows_still_do(shared_trace, trace, backfill):
    # docs/rl.md lists five models below the best heuristic on their held-out windows (greedy)
    from pbf.rl.evaluate import RLS_TRACES
    from pbf.studies.rlscheduler import HEURISTIC_COLUMNS, rlscheduler_table, shipped_model_for
    name = shipped_model_for(trace, backfill)
    assert name is not None
    path = shared_trace(RLS_TRACES[trace])
    res = rlscheduler_table(trace_dir=os.path.dirname(path), traces=(trace,), backfill=(backfill,), held_out=True)
    (held,) = [r for r in res["rows"] if r["windows"] == "held-out"]
    assert held["model"] == name
    assert held["pbf"]["rl"] < min(held["pbf"][h] for h in HEURISTIC_COLUMNS), (name, held["pbf"])


def test_more_held_out_windows_extend_the_draw_and_give_the_lead_with_its_standard_error(shared_trace):
    # --held-out-windows N: the first 10 of N windows drawn after job 10,000 are the 10 of
    # --held-out; each row with a model gives its mean per-window difference from the best
    # heuristic on those windows and the standard error of that difference
    from pbf.studies.rlscheduler import HEURISTIC_COLUMNS, rlscheduler_table
    path = shared_trace("HPC2N-2002-2.2-cln.swf.gz")
    ten, twelve = (rlscheduler_table(trace_dir=os.path.dirname(path), traces=("hpc2n",), backfill=(False,),
                                     held_out=True, held_out_windows=n)["rows"] for n in (10, 12))
    assert len(twelve[1]["starts"]) == 12 and twelve[1]["starts"][:10] == ten[1]["starts"]
    for row in twelve:
        vs, per = row["rl_vs_best"], row["per_window"]
        assert vs["heuristic"] == min(HEURISTIC_COLUMNS, key=lambda h: row["pbf"][h])
        d = np.asarray(per["rl"]) - np.asarray(per[vs["heuristic"]])
        assert vs["difference"] == pytest.approx(d.mean())
        # windows sharing jobs count as correlated: never less than the independent windows' error
        assert vs["se"] >= d.std(ddof=1) / np.sqrt(len(d)) * (1 - 1e-12)
    with pytest.raises(ConfigError):
        rlscheduler_table(trace_dir=os.path.dirname(path), traces=("hpc2n",), held_out=True, held_out_windows=0)


@pytest.mark.parametrize("model", ["lublin-1-backfill", "lublin-2-backfill"])
def test_models_ahead_by_more_than_two_standard_errors_on_100_held_out_windows_stay_so(shared_trace, model):
    # docs/rl.md: on 100 held-out windows of the workload model only these two models lead the best
    # heuristic by more than two standard errors of the paired difference
    from pbf.rl.evaluate import RLS_TRACES
    from pbf.studies.rlscheduler import rlscheduler_table
    trace = model.removesuffix("-backfill")
    path = shared_trace(RLS_TRACES[trace])
    res = rlscheduler_table(trace_dir=os.path.dirname(path), traces=(trace,), backfill=(True,), held_out=True,
                            held_out_windows=100)
    (held,) = [r for r in res["rows"] if r["windows"] == "held-out"]
    assert held["model"] == model and len(held["starts"]) == 100
    vs = held["rl_vs_best"]
    assert vs["difference"] + 2 * vs["se"] < 0, vs


def test_a_model_mix_is_the_trace_then_the_model_sample(tmp_path):
    from pbf.rl.model_mix import main, write_model_mix
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxNodes: 256\n"
                     + "".join(f"{i} {100 * i} -1 {r} 4 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
                               for i, r in ((1, 50), (2, 900), (3, 7))))
    out = tmp_path / "mix.swf"
    got = write_model_mix(trace, "lublin-2", 3, 200, out)
    assert got["trace_jobs"] == 3 and got["model_jobs"] == 200 and got["longest_run"] == 900
    lines = [x.split() for x in out.read_text().splitlines() if not x.startswith(";")]
    assert [x[0] for x in lines] == [str(i) for i in range(1, 204)]          # ids continue
    assert lines[:3] == [x.split() for x in trace.read_text().splitlines()[1:]]
    submits = [int(x[1]) for x in lines]
    assert submits[3] == 300 + 100 and submits == sorted(submits)          # one mean gap after the trace
    runs = [float(x[3]) for x in lines[3:]]
    assert max(runs) == 900 and sum(r == 900 for r in runs) >= got["capped"] > 0
    assert RLTrace.load(out, compat=True).norm["req"] == 900               # normalised as the trace
    bad = tmp_path / "bad.swf"
    bad.write_text("1 2 3\n")
    with pytest.raises(ConfigError, match="line 1: an SWF record has 18 fields"):
        write_model_mix(bad, "lublin-2", 3, 10, tmp_path / "no.swf")
    assert not (tmp_path / "no.swf").exists()
    assert main([str(trace), "--preset", "lublin-1", "--jobs", "5", "-o", str(tmp_path / "m.swf")]) == 0
