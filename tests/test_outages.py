"""Node drains and failures: the compiled core makes the oracle's decisions with outages, no job is
ever placed on a down unit, every job ends completed, killed or rejected with a reason."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.codes import JobState, OutageKind, label
from pbf.config import Backfill
from pbf.errors import ConfigError, TraceFormatError
from pbf.outages import NodeLayout, Outage, core_events, down_unit_seconds, generate_failures, read_failures

from scheduling import compiled_replay, oracle_replay

DONE, KILLED, REJECTED = int(JobState.JS_DONE), int(JobState.JS_KILLED), int(JobState.JS_REJECTED)


def down_intervals(events, total_units):
    """Per unit, the [from, to) intervals it is down, replaying the core's outage events."""
    t, kind, until, bits = events
    down = {}                      # unit -> (since, until)
    spans = {u: [] for u in range(total_units)}
    for i in range(len(t)):
        units = [u for u in range(total_units) if int(bits[i, u // 64]) >> (u % 64) & 1]
        u_until = np.inf if until[i] < 0 else until[i]
        for u in units:
            if kind[i] == OutageKind.OK_RESUME:
                if u in down and down[u][1] <= u_until:
                    spans[u].append((down[u][0], int(t[i])))
                    del down[u]
            elif u in down:
                down[u] = (down[u][0], max(down[u][1], u_until))
            else:
                down[u] = (int(t[i]), u_until)
    for u, (since, _) in down.items():
        spans[u].append((since, np.inf))
    return spans


def failures_at(events, total_units):
    """(time, unit) of every failure."""
    t, kind, _, bits = events
    return [(int(t[i]), u) for i in range(len(t)) if kind[i] == OutageKind.OK_FAIL
            for u in range(total_units) if int(bits[i, u // 64]) >> (u % 64) & 1]


def check_outage_invariants(r, submit, run, total_units, events):
    state, start, end, reason, bits = (r[k] for k in ("state", "start", "end", "reason", "bits"))
    assert set(np.unique(state)) <= {DONE, KILLED, REJECTED}, "every job ends completed, killed or rejected"
    assert ((state == REJECTED) == (reason > 0)).all()
    spans = down_intervals(events, total_units)
    fails = failures_at(events, total_units)
    for j in np.flatnonzero(state != REJECTED):
        units = [u for u in range(total_units) if int(bits[j, u // 64]) >> (u % 64) & 1]
        assert start[j] >= submit[j]
        for u in units:
            for a, b in spans[u]:
                assert not a <= start[j] < b, f"job {j} started at {start[j]} on unit {u}, down over [{a}, {b})"
        if state[j] == DONE:
            assert end[j] - start[j] == run[j]
            # a failure of one of its units while it ran would have stopped it
            assert not any(u in units and start[j] <= t < end[j] and end[j] > start[j] for t, u in fails)
        else:
            assert any(u in units and t == end[j] for t, u in fails), f"job {j} killed with no failure"
    # no unit held by two runs at once (runs cut short included)
    timed = (state != REJECTED) & (end > start)
    marks = sorted([(int(end[j]), 0, j) for j in np.flatnonzero(timed)] +
                   [(int(start[j]), 1, j) for j in np.flatnonzero(timed)])
    busy = np.zeros(bits.shape[1], dtype=np.uint64)
    for _, kind, j in marks:
        if kind == 0:
            busy &= ~bits[j]
        else:
            assert not (busy & bits[j]).any(), f"job {j} takes a unit another job holds"
            busy |= bits[j]


@st.composite
def outage_scenarios(draw):
    units = draw(st.integers(1, 80))
    n = draw(st.integers(1, 30))
    submit = np.cumsum(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    size = np.array([draw(st.integers(1, units)) for _ in range(n)])
    req = np.array(draw(st.lists(st.integers(1, 300), min_size=n, max_size=n)))
    run = np.array([draw(st.integers(0, int(r))) for r in req])
    if draw(st.booleans()):
        for i in range(1, n):          # bursts of identical jobs
            if draw(st.integers(0, 2)) == 0:
                size[i], req[i], run[i], submit[i] = size[i - 1], req[i - 1], run[i - 1], submit[i - 1]
    est = np.maximum(run, 1) if draw(st.booleans()) else req
    outages = []
    horizon = int(submit[-1]) + 200
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, horizon))
        kind = draw(st.sampled_from(["drain", "fail", "fail", "resume"]))
        picked = draw(st.lists(st.integers(0, units - 1), min_size=1, max_size=min(units, 12), unique=True))
        duration = None if kind == "resume" or (kind == "drain" and draw(st.booleans())) else draw(st.integers(1, 300))
        outages.append(Outage(at, tuple(sorted(picked)), kind, None if duration is None else at + duration))
    outages.sort(key=lambda o: o.time)
    reservations = draw(st.sampled_from([0, 1, 2, None]))
    backfill = Backfill(reservations=reservations, window=draw(st.sampled_from([0, 0, 100])),
                        resolution=draw(st.sampled_from([0, 0, 7])),
                        order=draw(st.sampled_from(["queue", "sjbf"])))
    return dict(submit=submit, units=size, est=est, run=run, total_units=units, backfill=backfill,
                trigger=draw(st.sampled_from(["event", "interval"])), bf_interval=draw(st.integers(1, 60)),
                events=core_events(outages, units), requeue=draw(st.booleans()), prio_sjf=draw(st.booleans()))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outage_scenarios())
def test_compiled_equals_oracle_with_outages(sc):
    args = (sc["submit"], sc["units"], sc["est"], sc["run"], sc["total_units"])
    kw = {k: sc[k] for k in ("backfill", "trigger", "bf_interval", "requeue", "prio_sjf")}
    got = compiled_replay(*args, **kw, outages=sc["events"])
    want = oracle_replay(*args, **kw, outages=sc["events"])
    for key in ("state", "start", "end", "how", "reason", "requeues", "lost"):
        assert np.array_equal(got[key], want[key]), key
    assert np.array_equal(got["bits"], want["bits"]), "unit choice differs"
    for key in ("kind", "time", "depth", "started", "reservations", "exit", "slots"):
        assert np.array_equal(got["passes"][key], want["passes"][key]), f"pass statistic {key}"
    for key in ("killed", "requeued", "lost_unit_s"):
        assert got["outage_figures"][key] == want["outage_figures"][key], key
    check_outage_invariants(got, sc["submit"], sc["run"], sc["total_units"], sc["events"])
    end = 10_000
    spans = down_intervals(sc["events"], sc["total_units"])
    assert down_unit_seconds(sc["events"], sc["total_units"], end) == sum(
        min(b, end) - a for s in spans.values() for a, b in s if a < end)
    # the parallel pass decides the same
    par = compiled_replay(*args, **kw, outages=sc["events"], workers=2)
    for key in ("state", "start", "end", "bits"):
        assert np.array_equal(par[key], got[key]), key


def _replay(outages, submit, units, run, total, requeue=True, **kw):
    est = kw.pop("est", run)
    return compiled_replay(submit, units, est, run, total, outages=core_events(outages, total),
                           requeue=requeue, **kw)


def test_a_drained_unit_lets_its_job_finish_and_takes_no_new_one():
    # 2 units; job 0 runs on unit 0 for 100 s; unit 0 drains at 10 (until a resume at 500);
    # job 1 (2 units) must wait for the resume, job 2 (1 unit) runs on unit 1
    r = _replay([Outage(10, (0,), "drain"), Outage(500, (0,), "resume")],
                [0, 20, 30], [1, 2, 1], [100, 50, 50], 2)
    assert list(r["state"]) == [DONE] * 3
    assert r["end"][0] == 100                  # not killed
    assert r["start"][1] == 500                # both units only after the resume
    assert r["start"][2] == 30 and int(r["bits"][2, 0]) == 0b10


def test_a_failure_requeues_its_job_which_restarts_from_scratch():
    r = _replay([Outage(40, (0,), "fail", 60)], [0], [2], [100], 2)
    assert r["requeues"][0] == 1 and r["lost"][0] == 2 * 40
    assert r["start"][0] == 60 and r["end"][0] == 160 and r["state"][0] == DONE
    assert r["outage_figures"]["requeued"] == 1


def test_kill_mode_ends_the_job_killed():
    r = _replay([Outage(40, (1,), "fail", 60)], [0, 0], [1, 1], [100, 100], 2, requeue=False)
    assert list(r["state"]) == [DONE, KILLED]
    assert r["end"][1] == 40 and label("state", r["state"][1]) == "killed"
    assert r["outage_figures"]["killed"] == 1


def test_a_job_ending_when_its_unit_fails_completes():
    r = _replay([Outage(100, (0,), "fail", 200)], [0], [1], [100], 1)
    assert r["state"][0] == DONE and r["requeues"][0] == 0


def test_reservation_waits_for_the_unit_to_come_back():
    # 4 units, unit 3 failed from 0 to 300; job 0 (3 units) runs to 100; job 1 needs 4 units: its
    # reservation is at 300 (the failure's end), and job 2 (1 unit, 150 s) backfills before it at
    # 100, when job 0's units come back (ending at 250, it does not delay the reservation)
    r = _replay([Outage(0, (3,), "fail", 300)], [0, 1, 2], [3, 4, 1], [100, 10, 150], 4)
    assert r["first_planned"][1] == 300 and r["start"][1] == 300
    assert r["start"][2] == 100 and r["how"][2] == 2


def test_job_wider_than_the_units_left_is_rejected_with_a_reason():
    r = _replay([Outage(5, (0, 1), "drain")], [0, 10, 20], [1, 4, 2], [50, 10, 10], 4)
    assert list(r["state"]) == [DONE, REJECTED, DONE]
    assert label("reject_reason", r["reason"][1]) == "wider than the units left up"


def test_a_drain_until_a_time_brings_the_unit_back():
    r = _replay([Outage(0, (0, 1), "drain", 70)], [0], [2], [10], 2)
    assert r["start"][0] == 70


def test_overlapping_outages_keep_the_unit_down_until_the_later_end():
    r = _replay([Outage(0, (0,), "fail", 100), Outage(50, (0,), "fail", 200)], [10], [1], [10], 1)
    assert r["start"][0] == 200


# ---------------------------------------------------------------- failure files and the generator

def _write(tmp_path, text):
    p = tmp_path / "failures.csv"
    p.write_text(text)
    return p


def test_failure_file_reads_ranges_names_and_comments(tmp_path):
    p = _write(tmp_path, "# outages\nkind,time,nodes,duration\nfail,3600,2,7200\ndrain,100,0-1;5,\n"
                         "resume,9000,0-1 5,\n")
    out = read_failures(p, NodeLayout.of(2, 12))
    assert [(o.time, o.kind, o.until) for o in out] == [(100, "drain", None), (3600, "fail", 10800),
                                                         (9000, "resume", None)]
    assert out[0].units == (0, 1, 2, 3, 10, 11) and out[1].units == (4, 5)


def test_beocat_layout_takes_node_names():
    layout = NodeLayout.of("beocat", 9128)
    assert len(layout.cores) == 299 and layout.units_of([0]) == tuple(range(32))


@pytest.mark.parametrize("text, message", [
    ("time,nodes,kind\n1,2,fail\n", "line 1: field header: got 'time,nodes,kind', expected the columns"),
    ("time,nodes,duration,kind\n1,2,10,explode\n", "line 2: field kind: got 'explode', expected drain or fail"),
    ("time,nodes,duration,kind\n1.5,2,10,fail\n", "line 2: field time: got '1.5', expected a whole number of"),
    ("time,nodes,duration,kind\n1,2,,fail\n", "field duration: got '', expected seconds: a failure needs"),
    ("time,nodes,duration,kind\n1,2,0,fail\n", "field duration: got '0', expected .* from 1 to"),
    ("time,nodes,duration,kind\n1,99,10,fail\n", "field nodes: got '99', expected nodes that exist \\(0 to 7\\)"),
    ("time,nodes,duration,kind\n1,5-2,10,fail\n", "got '5-2', expected a range a-b with a <= b"),
    ("time,nodes,duration,kind\n1,abc,10,fail\n", "got 'abc', expected node indices 0..7"),
    ("time,nodes,duration,kind\n1,2,10\n", "line 2: record: got '1,2,10', expected 4 fields"),
    ("", "got 'an empty file'"),
])
def test_failure_file_errors_name_line_field_and_value(tmp_path, text, message):
    with pytest.raises(TraceFormatError, match=message):
        read_failures(_write(tmp_path, text), NodeLayout.of(1, 8))


def test_generated_failures_are_seeded_and_follow_the_mtbf():
    layout = NodeLayout.of(1, 200)
    a = generate_failures(layout, 0, 365 * 86400, 24 * 30, 4, seed=3)
    assert a == generate_failures(layout, 0, 365 * 86400, 24 * 30, 4, seed=3)
    assert a != generate_failures(layout, 0, 365 * 86400, 24 * 30, 4, seed=4)
    # about 200 nodes x 365 / 30 failures a year
    assert 0.85 * 200 * 365 / 30 < len(a) < 1.15 * 200 * 365 / 30
    assert all(o.kind == "fail" and o.until > o.time for o in a)


def test_failures_config_errors():
    with pytest.raises(ConfigError, match="exactly one"):
        pbf.Failures()
    with pytest.raises(ConfigError, match="on_failure"):
        pbf.Failures(mtbf_hours=10, on_failure="explode")
    with pytest.raises(ConfigError, match="mtbf_hours must be a number > 0 and at most"):
        pbf.Failures(mtbf_hours=-1)


def test_replay_with_failures_reports_what_they_did(shared_trace):
    table = pbf.read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    base = pbf.replay(table, pbf.ReplayConfig())
    cfg = pbf.ReplayConfig(failures=pbf.Failures(mtbf_hours=24 * 7, repair_hours=2, seed=1))
    r = pbf.replay(table, cfg)
    f = r.summary["failures"]
    assert f["events"]["fail"] > 0 and f["requeued"] > 0 and f["lost_core_hours"] > 0
    assert r.summary["jobs"]["completed"] == base.summary["jobs"]["completed"]
    assert int(r.jobs["requeues"].sum()) == f["requeued"]
    assert r.summary["config"]["failures"]["mtbf_hours"] == 24 * 7
    # the same with two workers
    r2 = pbf.replay(table, pbf.ReplayConfig(failures=cfg.failures, workers=2))
    assert np.array_equal(r2.jobs["start"], r.jobs["start"])
    killed = pbf.replay(table, pbf.ReplayConfig(failures=pbf.Failures(mtbf_hours=24 * 7, repair_hours=2,
                                                                      seed=1, on_failure="kill")))
    assert killed.summary["jobs"]["killed"] == killed.summary["failures"]["killed"] > 0


def test_down_time_follows_the_core_rules():
    events = core_events([Outage(0, (0, 1), "drain"), Outage(10, (1,), "fail", 50), Outage(20, (0, 1), "resume"),
                          Outage(30, (2,), "fail", 40)], 4)
    # unit 0: down 0..20; unit 1: down 0..20 (the resume brings it back: explicit resumes take every
    # unit); unit 2: 30..40
    assert down_unit_seconds(events, 4, 100) == 20 + 20 + 10
    assert down_unit_seconds(core_events([Outage(5, (3,), "drain")], 4), 4, 100) == 95


SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "traces" / "beocat-2000-1d.swf.gz"


def test_cli_replay_with_a_failure_file(tmp_path, capsys):
    from pbf.cli import main
    f = _write(tmp_path, "time,nodes,duration,kind\n3600,0-9,7200,fail\n7200,20-29,,drain\n")
    assert main(["replay", str(SAMPLE), "--failures", str(f), "--node-cores", "4", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["failures"]["events"] == {"fail": 1, "drain": 1, "resume": 0}
    assert s["failures"]["units_never_back"] == 40 and s["config"]["failures"]["node_cores"] == "4"
    assert main(["replay", str(SAMPLE), "--mtbf", "500", "--on-failure", "kill", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    import csv
    rows = list(csv.DictReader(open(tmp_path / "o" / "jobs.csv")))
    assert {"requeues", "lost_unit_s"} <= set(rows[0]) and any(r["state"] == "killed" for r in rows)


@pytest.mark.parametrize("argv, message", [
    (["--on-failure", "kill"], "--on-failure needs --failures FILE or --mtbf HOURS"),
    (["--mtbf", "10", "--failures", "x.csv"], "not both"),
    (["--failures", "/nonexistent.csv"], "cannot read the failure file"),
])
def test_cli_failure_option_errors(argv, message, capsys):
    from pbf.cli import main
    assert main(["replay", str(SAMPLE), "--quiet"] + argv) == 2
    assert message in capsys.readouterr().err


def test_failures_under_the_slurm_sim_clock_and_python_plugins():
    table = pbf.read_swf(SAMPLE)
    f = pbf.Failures(mtbf_hours=100, node_cores="beocat", seed=2)
    for cfg in (pbf.ReplayConfig.from_preset("slurm", failures=f),
                pbf.ReplayConfig(priority=lambda jobs, now: jobs.submit * 1.0, failures=f)):
        r = pbf.replay(table, cfg)
        fs = r.summary["failures"]
        assert fs["events"]["fail"] > 0 and fs["requeued"] == int(r.jobs["requeues"].sum()) > 0
        assert set(np.unique(r.jobs["state"])) <= {DONE, REJECTED}
        assert (r.jobs["start"][r.jobs["state"] == DONE] >= r.jobs["submit"][r.jobs["state"] == DONE]).all()
