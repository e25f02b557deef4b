"""pbf report: figures and a self-contained report.html from a replay's output folder."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pbf.cli import main
from pbf.errors import ConfigError

pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
from pbf.report import load_run, write_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.join(os.path.dirname(HERE), "traces")
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def slurm_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    assert main(["replay", os.path.join(TRACES, "beocat-2000-1d.swf.gz"), "--preset", "slurm", "--workers", "4",
                 "--out", str(out), "--report", "--quiet"]) == 0
    return out


def test_replay_report_writes_figures_and_html(slurm_run):
    files = sorted(os.listdir(slurm_run / "report"))
    assert files == ["bsld_classes.png", "passes.png", "report.html", "utilisation.png", "wait_cdf.png",
                     "workers.png"]
    for f in files[:-1]:
        if f.endswith(".png"):
            assert (slurm_run / "report" / f).read_bytes()[:8] == PNG
    page = (slurm_run / "report" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 5       # self-contained: every figure embedded
    assert "<th>mean bounded slowdown</th>" in page and "<th>backfill workers</th>" in page
    assert "src='report/" not in page and "href=" not in page
    # people's words, every table titled, raw keys gone
    assert "awt_s" not in page and "bsld_tau_s" not in page and "thread_tests_per_worker" not in page
    assert page.count("<table>") == page.count("<caption>")
    assert "modelled cost of a job test (µs)" in page      # the slurm-sim clock: its costs apply


def test_report_shows_only_what_applies(tmp_path):
    # the free clock: no costs of a job test; one worker: no parallel rows; no empty heatmap rows
    from pbf.report_labels import label, settings_that_apply
    out = tmp_path / "run"
    assert main(["replay", os.path.join(TRACES, "lublin1-1000.swf.gz"), "--out", str(out), "--report",
                 "--quiet"]) == 0
    page = (out / "report" / "report.html").read_text()
    assert "cost of a job test" not in page and "cost_per_test_us" not in page
    assert "busiest worker" not in page and "<th>mean wait (h)</th>" in page
    assert label("down_core_hours") == "down (core-hours)" and label("median_abs_s") == "median abs (s)"
    cfg = {"clock": "free", "workers": 1, "cost_per_test_us": 10000, "commit": "ordered", "cluster": None,
           "backfill": {"reservations": None, "window": 0}}
    assert settings_that_apply(cfg) == [("clock", "free"), ("backfill workers", 1),
                                        ("backfill reservations", "unlimited")]


def test_workers_figure_only_over_passes_on_threads():
    # a pass on one thread records its depth as the busiest and the idlest worker's tests
    import numpy as np

    from pbf.report import _workers_note, threaded_passes
    passes = {"time": np.arange(4.0), "depth": np.array([5.0, 5, 0, 9]), "kind": np.array(["full"] * 3 + ["quick"],
              dtype=object), "tests_max_worker": np.array([5.0, 3, 0, 9]), "tests_min_worker": np.array([5.0, 2, 0, 9])}
    assert threaded_passes(passes, "free").tolist() == [False, True, False, False]
    assert threaded_passes(passes, "slurm-sim").tolist() == [True, True, False, False]
    one = dict(passes, tests_max_worker=passes["depth"], tests_min_worker=passes["depth"])
    summary = {"config": {"workers": 4, "clock": "free"}}
    assert "No pass ran on more than one thread" in _workers_note(summary, one)
    assert _workers_note(summary, passes) is None


def test_one_worker_and_no_passes(tmp_path):
    # without parallel passes there is no per-worker figure; without passes.csv no pass figures
    out = tmp_path / "run"
    assert main(["replay", os.path.join(TRACES, "lublin1-1000.swf.gz"), "--out", str(out), "--quiet",
                 "--no-pass-records"]) == 0
    written = write_report(out, tmp_path / "rep")
    names = sorted(os.path.basename(p) for p in written)
    assert names == ["bsld_classes.png", "report.html", "utilisation.png", "wait_cdf.png"]
    summary, jobs, passes = load_run(out)
    assert passes is None and len(jobs["submit"]) == summary["jobs"]["submitted"]


def test_errors_name_the_problem(tmp_path, capsys):
    with pytest.raises(ConfigError, match="summary.json, jobs.csv missing"):
        write_report(tmp_path)
    (tmp_path / "summary.json").write_text("{not json")
    (tmp_path / "jobs.csv").write_text("id,submit\n1,2\n")
    with pytest.raises(ConfigError, match="not JSON"):
        write_report(tmp_path)
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ConfigError, match="column 'start' missing"):
        write_report(tmp_path)
    assert main(["replay", os.path.join(TRACES, "lublin1-1000.swf.gz"), "--report"]) != 0
    assert "--report needs --out" in capsys.readouterr().err


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def test_report_opens_in_a_headless_browser(slurm_run, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no headless browser (chromium) installed")
    page = slurm_run / "report" / "report.html"
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("<img") == 5 and "pbf report" in done.stdout


def test_sweep_folder_report(tmp_path):
    from pbf.sweeps import sweep
    spec = {"trace": {"gen": "lublin", "jobs": 400}, "config": {}, "grid": {"reservations": [1, 2], "seed": [0, 1]}}
    sweep(spec, tmp_path / "sw", jobs=1, progress=False)
    assert main(["report", str(tmp_path / "sw"), "--quiet"]) == 0
    files = sorted(os.listdir(tmp_path / "sw" / "report"))
    assert "sweep_bsld.png" in files and "sweep_bsld_heatmap.png" in files and "report.html" in files
    page = (tmp_path / "sw" / "report" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 6 and page.count("<tr>") == 5


def test_parallel_backfill_experiment_report(tmp_path):
    result = tmp_path / "pb.json"
    assert main(["experiment", "parallel-backfill", "--jobs", "2000", "--workers", "1,2", "--procs", "1",
                 "--out", str(result), "--quiet"]) == 0
    assert main(["report", str(result), "--out", str(tmp_path / "rep"), "--quiet"]) == 0
    assert (tmp_path / "rep" / "workers.png").read_bytes()[:8] == PNG
    page = (tmp_path / "rep" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and page.count("<tr>") == 5


def test_report_shows_failures_estimates_and_coallocation(tmp_path):
    from pbf.cli import main
    trace = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"
    out = tmp_path / "run"
    assert main(["replay", str(trace), "--mtbf", "300", "--start-estimates", "--out", str(out), "--report",
                 "--quiet"]) == 0
    page = (out / "report" / "report.html").read_text()
    assert "<h2>Failures</h2>" in page and "requeued" in page
    assert "<h2>Start-time estimates</h2>" in page and "waited: median abs (s)" in page
    out2 = tmp_path / "co"
    assert main(["replay", str(trace), "--coalloc", "asax", "--out", str(out2), "--report", "--quiet"]) == 0
    assert "<h2>Co-allocation</h2>" in (out2 / "report" / "report.html").read_text()
