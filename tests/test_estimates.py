"""Start-time estimates: Engine.estimates() and replays with start_estimates."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import Backfill, Engine, Finish, Job, Start, Submit
from pbf.errors import ConfigError
from pbf.start_estimates import estimate_accuracy

LUBLIN = __import__("pathlib").Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"


def test_estimates_keep_the_reservation_and_plan_the_rest():
    eng = Engine(4, report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 3, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30)),
                    Submit(Job(4, 0, 1, 500))])
    # job 1 runs (3 units, to 100); job 4 backfills on the fourth unit? No: it would delay job 2's
    # reservation at 100, so it waits; job 2 reserved at 100; job 3 after job 2, at 150
    assert eng.reservations() == {2: 100}
    est = eng.estimates()
    assert est[2][0] == 100 and list(est[2][1]) == [0, 1, 2, 3]
    assert est[3][0] == 150 and len(est[3][1]) == 2
    assert est[4][0] == 150 and len(est[4][1]) == 1
    # the plan changes nothing: the next pass decides as if it had not been made
    assert eng.reservations() == {2: 100}
    out = eng.advance(100, [Finish(1, 100)])
    assert [d.job_id for d in out if isinstance(d, Start)] == [2]


def test_estimates_wait_for_units_to_come_back():
    eng = Engine(2)
    eng.advance(0, [pbf.Fail(units=(0,), at=0, until=40), pbf.Drain(units=(1,), at=0),
                    Submit(Job(1, 0, 1, 10)), Submit(Job(2, 0, 2, 10))])
    est = eng.estimates()
    assert est[1][0] == 40 and est[2][0] is None
    assert Engine(2).estimates() == {}


@st.composite
def conservative_traces(draw):
    n = draw(st.integers(1, 40))
    submit = np.cumsum(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)))
    run = np.array(draw(st.lists(st.integers(1, 200), min_size=n, max_size=n)))
    return submit, run


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conservative_traces())
def test_conservative_plan_with_exact_run_times_estimates_each_start_exactly(trace):
    """The identity: conservative, FCFS, exact run times, where the choice of units cannot matter
    (a one-unit cluster): the estimate a job gets when it arrives is its actual start."""
    submit, run = trace
    table = pbf.JobTable.from_arrays(submit=submit, units=np.ones(len(run), np.int64), run=run, req_time=run)
    r = pbf.replay(table, pbf.ReplayConfig(units=1, predictor="clairvoyant", backfill=Backfill(reservations=None),
                                           start_estimates=True))
    assert np.array_equal(r.jobs["estimated_start"], r.jobs["start"])


def test_estimate_at_arrival_is_the_reservation_the_pass_made(shared_trace):
    table = pbf.read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    r = pbf.replay(table, pbf.ReplayConfig(predictor="clairvoyant", backfill=Backfill(reservations=None),
                                           start_estimates=True))
    est, start, first = r.jobs["estimated_start"], r.jobs["start"], r.jobs["first_reservation"]
    waited = (start > r.jobs["submit"]) & (est >= 0)
    # every job that waited was reserved by the pass at its arrival (conservative): the plan is
    # that reservation, and no reservation was ever earlier than the one at arrival...
    assert (first[waited] <= est[waited]).all()
    # ... and with exact run times the estimate is the start for all but a few (which a
    # different choice of units at a reservation's start moves; docs/operations.md)
    assert (est[waited] == start[waited]).mean() > 0.95
    acc = r.summary["start_estimates"]
    assert acc["waited"]["jobs"] == int(waited.sum()) and set(acc["by_size"]) <= {"1", "2-8", "9-64", "65-512", ">512"}


def test_accuracy_figures():
    acc = estimate_accuracy([0, 0, 0, 0], [0, 100, 5000, -1], [0, 100, 1000, 50], [1, 4, 100, 1])
    assert acc["all"]["jobs"] == 3 and acc["waited"]["jobs"] == 2
    assert acc["waited"]["median_abs_s"] == 2000.0 and acc["waited"]["within_1h"] == 0.5
    assert acc["waited"]["late"] == 0.5 and acc["by_size"]["65-512"]["jobs"] == 1


def test_replay_and_cli_write_estimates(tmp_path, capsys):
    from pbf.cli import main
    out = tmp_path / "run"
    assert main(["replay", str(LUBLIN), "--start-estimates", "--estimate-every", "50", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "estimates    of " in text and "estimates.csv" in text
    import csv
    rows = list(csv.DictReader(open(out / "estimates.csv")))
    assert rows and set(rows[0]) == {"time", "id", "estimate", "start", "error_s"}
    assert "estimated_start" in next(csv.DictReader(open(out / "jobs.csv")))
    with pytest.raises(ConfigError, match="estimate_every needs start_estimates"):
        pbf.ReplayConfig(estimate_every=3)
