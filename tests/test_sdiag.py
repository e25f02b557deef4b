"""Saved sdiag outputs: reading their backfill statistics and fitting the Slurm simulator's cost model
pref x n^pow to them (texts written from sdiag's definitions, plus one recorded from Slurm 22.05)."""
from pathlib import Path

import pytest

from pbf.sdiag import SdiagError, fit_cost, read_sdiag

RECORDED = Path(__file__).parent / "data" / "slurm_harness" / "recorded_small4" / "sdiag.txt"


def snapshot(when, depth_try, cycle_us, mean_depth_try, mean_cycle_us, cycles=40):
    # one sdiag output as Slurm prints it (the backfill block tab-indented; the lines around it kept)
    return f"""*******************************************************
sdiag output at Tue Nov 24 10:{when:02d}:00 2026 (17955{when:05d})
Data since      Tue Nov 24 00:00:00 2026 (1795500000)
*******************************************************
Server thread count:  3

Main schedule statistics (microseconds):
\tLast cycle:   90
\tMax cycle:    154
\tTotal cycles: 11
\tMean cycle:   72
\tLast queue length: 0

Backfilling stats
\tTotal backfilled jobs (since last slurm start): 2000
\tTotal backfilled jobs (since last stats cycle start): 120
\tTotal backfilled heterogeneous job components: 0
\tTotal cycles: {cycles}
\tLast cycle when: Tue Nov 24 10:{when:02d}:00 2026 (17955{when:05d})
\tLast cycle: {cycle_us}
\tMax cycle:  {cycle_us * 3}
\tMean cycle: {mean_cycle_us}
\tLast depth cycle: {depth_try + 7}
\tLast depth cycle (try sched): {depth_try}
\tDepth Mean: {mean_depth_try + 9}
\tDepth Mean (try depth): {mean_depth_try}
\tLast queue length: 5000
\tQueue length mean: 4800
\tLast table size: 3
\tMean table size: 5

Latency for 1000 calls to gettimeofday(): 23 microseconds

Remote Procedure Call statistics by message type
\tREQUEST_JOB_INFO                        ( 2003) count:21     ave_time:185    total_time:3889
"""


def cost(pref, power, n):
    return int(round(pref * n ** power))


def test_a_file_of_many_snapshots_gives_back_the_cost_it_was_written_from(tmp_path):
    pref, power = 62.0, 1.3
    depths = [(40, 55), (120, 90), (300, 210), (500, 380), (80, 70)]
    text = "".join(snapshot(i, a, cost(pref, power, a), b, cost(pref, power, b)) for i, (a, b) in enumerate(depths))
    path = tmp_path / "sdiag.log"
    path.write_text(text)
    snaps = read_sdiag(path)
    assert len(snaps) == 5
    assert [s.line for s in snaps] == [2 + 35 * i for i in range(5)]
    assert snaps[1].last_depth_try == 120 and snaps[1].depth_mean_try == 90 and snaps[1].queue_mean == 4800
    fit = fit_cost(snaps)
    assert fit.pref_us == pytest.approx(pref, rel=0.01) and fit.power == pytest.approx(power, abs=0.005)
    assert fit.rel_error < 0.005 and len(fit.points) == 10
    assert fit.settings() == {"cost_per_test_us": round(fit.pref_us, 3), "cost_power": round(fit.power, 4)}


def test_several_files_are_read_together(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(snapshot(1, 100, 6200, 100, 6200))
    b.write_text(snapshot(2, 400, 24800, 400, 24800))
    fit = fit_cost(read_sdiag(a, b))
    assert fit.power == pytest.approx(1.0) and fit.pref_us == pytest.approx(62.0)


def test_one_depth_gives_a_constant_cost_per_job():
    fit = fit_cost(read_sdiag(snapshot(1, 200, 20_000, 200, 24_000)))
    assert fit.power == 1.0 and fit.pref_us == pytest.approx(44_000 / 400)


def test_the_recorded_slurm_output_reads():
    (snap,) = read_sdiag(RECORDED)
    assert (snap.cycles, snap.last_cycle_us, snap.mean_cycle_us, snap.last_depth_try, snap.depth_mean_try) == (
        24, 357, 696, 1, 5)
    assert fit_cost([snap]).cycle_us(1) == pytest.approx(357)


def test_a_bad_value_names_the_file_line_and_field(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(snapshot(1, 100, 6200, 100, 6200).replace("Mean cycle: 6200", "Mean cycle: 6.2ms"))
    with pytest.raises(SdiagError, match=r"bad\.txt, line 22: Mean cycle='6\.2ms': expected a whole number of micro"):
        read_sdiag(path)


def test_a_block_without_the_depth_lines_is_refused(tmp_path):
    path = tmp_path / "short.txt"
    path.write_text("\n".join(x for x in snapshot(1, 10, 620, 10, 620).splitlines() if "try" not in x))
    with pytest.raises(SdiagError, match=r"short\.txt, line 14: .*\(the snapshot of line 2\) lack 'Last depth cycle "
                                         r"\(try sched\)', 'Depth Mean \(try"):
        read_sdiag(path)


def test_text_without_backfill_statistics_is_refused(tmp_path):
    path = tmp_path / "other.txt"
    path.write_text("Main schedule statistics (microseconds):\n\tLast cycle: 9\n")
    with pytest.raises(SdiagError, match="other.txt: no sdiag backfill statistics"):
        read_sdiag(path)
    with pytest.raises(SdiagError, match="cannot read it"):
        read_sdiag(tmp_path / "missing.txt")


def test_nothing_to_fit_is_refused():
    with pytest.raises(SdiagError, match="nothing to fit"):
        fit_cost(read_sdiag(snapshot(1, 0, 0, 0, 0, cycles=0)))


def test_pbf_calibrate_sdiag_prints_the_fit_and_the_flags(tmp_path):
    import json
    import subprocess
    import sys
    path = tmp_path / "sdiag.log"
    path.write_text("".join(snapshot(i, a, cost(62.0, 1.3, a), a, cost(62.0, 1.3, a))
                            for i, a in enumerate((40, 120, 300, 500))))
    run = lambda *a: subprocess.run([sys.executable, "-m", "pbf", "calibrate", "sdiag", *a],  # noqa: E731
                                    capture_output=True, text=True, cwd=tmp_path)
    out = run(str(path))
    assert out.returncode == 0, out.stderr
    assert "4 snapshot(s)" in out.stdout and "--cost-power 1.3" in out.stdout
    got = json.loads(run(str(path), "--json").stdout)
    assert got["settings"]["cost_power"] == pytest.approx(1.3, abs=1e-3) and got["snapshots"] == 4
    # the flags it prints are accepted by pbf replay
    flags = got["flags"].split()
    trace = tmp_path / "t.swf"
    trace.write_text("".join(f"{i} {i * 10} 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 -1 -1 -1\n" for i in range(1, 40)))
    rep = subprocess.run([sys.executable, "-m", "pbf", "replay", str(trace), "--units", "8", "--clock", "slurm-sim",
                          "--trigger", "interval", *flags], capture_output=True, text=True, cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    bad = run(str(tmp_path / "missing.txt"))
    assert bad.returncode == 2 and "missing.txt: cannot read it" in bad.stderr


def before_any_cycle(when):
    # sdiag before the first backfill cycle: no 'Last cycle when', and the mean lines left out
    lines = [x for x in snapshot(when, 0, 0, 0, 0, cycles=0).splitlines()
             if not x.strip().startswith(("Mean cycle", "Depth Mean", "Queue length mean", "Mean table size"))
             or x.startswith("\tMean cycle:   72")]
    return "\n".join(x.replace("Last cycle when:", "Last cycle when: N/A #") for x in lines) + "\n"


def test_a_series_whose_first_snapshots_precede_any_backfill_cycle_reads_and_counts_them(tmp_path):
    # as `while sleep 60; do sdiag; done >> sdiag.log` saves it from slurmctld's start
    path = tmp_path / "sdiag.log"
    path.write_text(before_any_cycle(0) + before_any_cycle(1) + snapshot(2, 100, 6200, 80, 5000)
                    + snapshot(3, 200, 12400, 90, 5600))
    snaps = read_sdiag(path)
    early = len(before_any_cycle(0).splitlines())
    assert len(snaps) == 2 and snaps.skipped == 2 and snaps.skipped_at == ((str(path), 2), (str(path), 2 + early))
    assert [s.line for s in snaps] == [2 + 2 * early, 2 + 2 * early + 35]
    fit_cost(snaps)
    only_early = tmp_path / "early.log"
    only_early.write_text(before_any_cycle(0) + before_any_cycle(1))
    with pytest.raises(SdiagError, match=r"early\.log: all 2 snapshot\(s\) were taken before any backfill cycle ran "
                                         r"\('Total cycles: 0', the first at .*early\.log, line 2\): nothing to fit"):
        read_sdiag(only_early)
    # with another file that has cycles, the early one only adds to the count
    assert read_sdiag(only_early, path).skipped == 4


def test_pbf_calibrate_sdiag_says_what_it_left_out(tmp_path, capsys):
    from pbf.cli import main
    path = tmp_path / "sdiag.log"
    path.write_text(before_any_cycle(0) + snapshot(2, 100, 6200, 80, 5000))
    assert main(["calibrate", "sdiag", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 snapshot(s) from 1 file(s)" in out
    said = f"left out     1 snapshot(s) taken before any backfill cycle ran (Total cycles: 0; the first: {path}, line 2"
    assert said in out
    assert main(["calibrate", "sdiag", str(path), "--json"]) == 0
    import json
    assert json.loads(capsys.readouterr().out)["skipped_before_any_cycle"] == 1


def test_a_snapshot_taken_mid_cycle_gives_no_last_cycle_point_and_the_power_has_an_error():
    # sdiag heads the block with a warning while a cycle runs: its last depth is the running cycle's,
    # its last cycle time the one before; such a point (here 250 jobs beside a 500-job cycle's time) is
    # left out, the mean point kept
    good = [snapshot(k, n, cost(30.0, 1.2, n), n, cost(30.0, 1.2, n)) for k, n in enumerate((50, 200, 800, 3200))]
    mid = snapshot(9, 250, cost(30.0, 1.2, 500), 500, cost(30.0, 1.2, 500)).replace(
        "Backfilling stats\n", "Backfilling stats (WARNING: data obtained in the middle of backfilling execution.)\n")
    snaps = read_sdiag("".join(good) + mid)
    assert [s.mid_cycle for s in snaps] == [False] * 4 + [True]
    fit = fit_cost(snaps)
    assert fit.mid_cycle_left_out == 1 and (250, cost(30.0, 1.2, 500)) not in fit.points
    assert fit.power == pytest.approx(1.2, abs=1e-3) and fit.power_se == pytest.approx(0.0, abs=1e-3)
    assert fit_cost(read_sdiag(snapshot(1, 100, 5000, 100, 5000))).power_se is None     # one depth: no error
