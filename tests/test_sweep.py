"""pbf sweep: grids of replays on local processes (and on a real Ray head inside a private network
namespace), results appended cell by cell, resumable, with failing cells recorded."""
import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from pbf.cli import main
from pbf.errors import ConfigError
from pbf.sweeps import cells_of, load_spec, sweep

SPEC = """name = "reservations-workers"
[trace]
gen = "lublin"
jobs = 800
preset = "lublin-1"
[config]
priority = "fcfs"
[grid]
reservations = [1, 4]
workers = [1, 2, 4, 8]
seed = [0, 1, 2]
"""
TIMING = ("replay_s", "cell_s")


def _spec(tmp_path, text=SPEC):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def _table(folder):
    with open(folder / "results.csv", newline="") as fh:
        return {r["cell"]: {k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    spec = _spec(tmp)
    records = sweep(spec, tmp / "local", jobs=2, progress=False)
    return spec, tmp / "local", records


def test_local_grid(local_run):
    spec, out, records = local_run
    assert len(records) == 24 and all(r["status"] == "ok" for r in records)
    table = _table(out)
    assert len(table) == 24
    # the free clock: the same decisions for any number of workers (the grid shows it)
    by = {}
    for r in records:
        p = r["params"]
        by.setdefault((p["reservations"], p["seed"]), set()).add(json.dumps(
            {k: v for k, v in r["metrics"].items() if k not in TIMING}, sort_keys=True))
    assert all(len(v) == 1 for v in by.values())
    # seeds and reservations change the traces and the schedules
    assert len({next(iter(v)) for v in by.values()}) == 6
    assert json.loads((out / "spec.json").read_text())["grid"]["workers"] == [1, 2, 4, 8]


def test_resume_runs_only_the_missing_cells(local_run, tmp_path):
    spec, out, _ = local_run
    part = tmp_path / "part"
    part.mkdir()
    lines = (out / "results.jsonl").read_text().splitlines()
    # a sweep killed after 10 cells, in the middle of writing the 11th line
    (part / "results.jsonl").write_text("\n".join(lines[:10]) + "\n" + lines[10][:40])
    with pytest.raises(ConfigError, match="--resume"):
        sweep(spec, part, jobs=2, progress=False)
    records = sweep(spec, part, jobs=2, resume=True, progress=False)
    assert len(records) == 24
    assert len((part / "results.jsonl").read_text().splitlines()) == 11 + 14
    assert _table(part) == _table(out)


def test_a_failing_cell_is_recorded_and_the_rest_complete(tmp_path, capsys):
    spec = _spec(tmp_path, SPEC.replace("reservations = [1, 4]", "reservations = [1, -1]"))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"]) == 1
    records = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    bad = [r for r in records if r["status"] == "error"]
    assert len(records) == 24 and len(bad) == 12
    assert all(r["params"]["reservations"] == -1 and "reservations must be" in r["error"] for r in bad)
    rows = _table(tmp_path / "out")
    assert sum(r["status"] == "ok" for r in rows.values()) == 12


@pytest.mark.parametrize("text,message", [
    ("[oops]\n", "unknown sections"),
    ("[trace]\ngen='lublin'\n[grid]\nspeed=[1]\n", "unknown settings"),
    ("[trace]\ngen='lublin'\n[grid]\nworkers=3\n", "non-empty list"),
    ("[grid]\nworkers=[1]\n", "give path = FILE"),
    ("[trace\n", "not valid TOML"),
])
def test_spec_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_spec(_spec(tmp_path, text))


def test_cells_are_stable():
    spec = {"trace": {"gen": "lublin"}, "grid": {"workers": [1, 2]}, "config": {}}
    a, b = cells_of(spec), cells_of(dict(spec))
    assert [c["id"] for c in a] == [c["id"] for c in b] and len({c["id"] for c in a}) == 2


def _can_isolate():
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    done = subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up && ip -o addr"], capture_output=True,
                          text=True)
    if done.returncode != 0:
        return f"no private network namespace can be made here ({done.stderr.strip()[:200]})"
    return None


def test_ray_backend_matches_local_inside_a_private_network(local_run, tmp_path):
    pytest.importorskip("ray", reason='the ray extra is not installed (pip install "pbf[ray]")')
    why = _can_isolate()
    if why:
        pytest.skip(why)
    spec, local, _ = local_run
    out = tmp_path / "ray"
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    # the head, the sweep and the shutdown all run in a namespace whose only interface is loopback:
    # Ray binds every interface it has, and here that is 127.0.0.1 alone
    script = (f"ip link set lo up && {ray_bin} start --head --port=6391 --num-cpus=2 "
              f"--object-store-memory=100000000 --include-dashboard=false --node-ip-address=127.0.0.1 "
              f"--disable-usage-stats >{tmp_path / 'ray.log'} 2>&1 && "
              f"{sys.executable} -m pbf sweep {spec} --out {out} --backend ray --address 127.0.0.1:6391 --quiet && "
              f"{sys.executable} -m pbf experiment parallel-backfill --jobs 2000 --workers 1,2 --backend ray "
              f"--address 127.0.0.1:6391 --json --quiet > {tmp_path / 'exp-ray.json'}; "
              f"rc=$?; {ray_bin} stop --force >/dev/null 2>&1; exit $rc")
    # (run from the test's folder: in a source checkout the uncompiled pbf/ would shadow the installed one)
    done = subprocess.run(["unshare", "-rn", "sh", "-c", script], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:] + (tmp_path / "ray.log").read_text()[-2000:]
    assert _table(out) == _table(local)
    # the paper experiment's cells on Ray equal those on local processes
    assert main(["experiment", "parallel-backfill", "--jobs", "2000", "--workers", "1,2", "--procs", "1",
                 "--out", str(tmp_path / "exp-local.json"), "--quiet"]) == 0
    strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]  # noqa: E731
    ray_rows = json.loads((tmp_path / "exp-ray.json").read_text())["rows"]
    local_rows = json.loads((tmp_path / "exp-local.json").read_text())["rows"]
    assert len(ray_rows) == 4 and strip(ray_rows) == strip(local_rows)


def _records(path):
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass                                     # the line the kill cut
    return out


def test_resume_after_a_real_kill(tmp_path):
    import signal
    import time
    spec = _spec(tmp_path, SPEC.replace("jobs = 800", "jobs = 3000"))
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "pbf", "sweep", str(spec), "--out", str(out), "--jobs", "1",
                             "--quiet"], cwd=tmp_path, start_new_session=True)
    path = out / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not path.exists() or len(path.read_text().splitlines()) < 4):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)             # the sweep and its worker process, mid-run
    proc.wait()
    before = _records(path)
    assert 4 <= len(before) < 24, "the kill must land mid-sweep"
    records = sweep(spec, out, jobs=2, resume=True, progress=False)
    assert len(records) == 24 and all(r["status"] == "ok" for r in records)
    after = _records(path)
    assert len(after) == 24                          # only the missing cells ran
    assert {r["cell"] for r in after[len(before):]} == {r["cell"] for r in records} - {r["cell"] for r in before}


def test_cluster_is_a_grid_setting(tmp_path):
    """A cluster file beside the spec is found from the spec's folder; node cells carry the resource
    figures and decide as a replay on that cluster does."""
    import pbf
    from pbf.sweep_cell import cell_config, run_cell, trace_table
    shutil.copy(os.path.join(os.path.dirname(__file__), "data", "slurm", "site.conf"), tmp_path / "site.conf")
    spec = _spec(tmp_path, """[trace]
gen = "beocat"
jobs = 300
window = 3000
[grid]
cluster = ["site.conf:batch", "beocat"]
""")
    cells = cells_of(spec)
    assert [c["params"]["cluster"] for c in cells] == [str(tmp_path / "site.conf") + ":batch", "beocat"]
    trace = load_spec(spec)["trace"]
    for cell in cells:
        got = run_cell(trace, cell["params"])
        want = pbf.replay(trace_table(trace, cell["params"]), cell_config(cell["params"])).summary
        assert got["awt_h"] == want["metrics"]["awt_h"]
        assert got["memory_held"] == want["nodes"]["utilisation"]["memory"]
        assert got["never_fit"] == want["nodes"]["never_fit"]
    with pytest.raises(pbf.ConfigError, match="cluster"):
        pbf.replay(trace_table(trace, cells[0]["params"]), cell_config({"cluster": "no-such-cluster"}))
