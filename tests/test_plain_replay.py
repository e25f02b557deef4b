"""A plain replay's compiled steps over buffers (pbf._table) give what numpy gives, bit for bit: the
cleaning, the arrival order and the users' numbering, the sums (numpy's pairwise summation), the
summary's figures; and a whole replay on the compiled path gives the jobs and summary of the numpy one.
(That a plain replay's process imports no numpy: tests/test_startup.py.)"""
import array
import pickle

import numpy as np
import pytest

import pbf
from pbf import _table
from pbf.metrics import schedule_metrics
from pbf.workload import Cleaning, JobTable, SwfHeader, clean
from pbf.workload.jobs import FLOAT_FIELDS, SWF_FIELDS
from pbf.workload.swf import _IS_FLOAT, _new_block, _runtime_rule


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 1000, 8191, 8192, 8193, 20_000, 70_001])
def test_sums_are_numpys(n):
    """numpy sums float64 pairwise over the whole array, and int64 as float64 in buffers of 8192, each
    summed pairwise: a plain left-to-right loop differs in the last bits on such values."""
    rng = np.random.default_rng(n)
    x = rng.random(n) * rng.choice([1.0, 1e10, 1e-5], n)
    assert _table.float_sum(x) == (float(x.sum()) if n else 0.0)
    assert _table.float_sum(array.array("d", x.tolist())) == _table.float_sum(x)
    i = rng.integers(-2**62, 2**62, n)
    if n:
        assert _table.int_mean(i) == float(i.mean())
        assert _table.int_mean(array.array("q", i.tolist())) == float(i.mean())
    if n > 200:
        assert sum(x.tolist()) != float(x.sum()) or sum(float(v) for v in i.tolist()) / n != float(i.mean())


def _schedules(count, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.choice([1, 5, 60, 300, 9000]))
        span = int(rng.choice([1, 3, 10, 1000, 10**6, 2**40]))
        submit = int(rng.choice([0, 2**52, -2**53, 10**9])) + rng.integers(0, span, n)
        if rng.random() < 0.7:
            submit.sort()
        start = submit + rng.integers(0, span, n) * (rng.random(n) < 0.7)
        yield rng, submit, start, rng.integers(0, span, n), rng.integers(1, 5, n)


@pytest.mark.parametrize("tau", [10.0, 0.5, 600.0])
def test_schedule_figures_are_schedule_metrics(tau):
    for rng, submit, start, run, units in _schedules(150, seed=int(tau * 2)):
        n = len(submit)
        state = rng.choice([3, 3, 3, 4, 5, 2], n).astype(np.int8)
        how = rng.integers(0, 4, n).astype(np.int8)
        reason = rng.integers(0, 10, n).astype(np.int8)
        predicted = run + rng.integers(-50, 50, n)
        corrections = rng.integers(0, 3, n) * (rng.random(n) < 0.3)
        end = start + run
        f = _table.schedule_figures(submit, start, end, run, units, state, how, reason, predicted, corrections,
                                    16, tau)
        done = state == 3
        assert f["metrics"] == tuple(schedule_metrics(submit[done], start[done], run[done], units[done], 16,
                                                      tau).as_dict().values())
        err = (predicted[done] - run[done]).astype(np.float64)
        assert f["mae_s"] == (float(np.abs(err).mean()) if done.any() else 0.0)
        assert f["under_predicted"] == (float((err < 0).mean()) if done.any() else 0.0)
        assert f["completed"] == done.sum() and f["killed"] == (state == 5).sum()
        assert f["rejected_by_reason"] == np.bincount(reason[state == 4], minlength=10).tolist()
        assert (f["started_by_main"], f["backfilled"]) == ((how == 1).sum(), (how == 2).sum())
        assert f["ended_by_reservation"] == (reason == 9).sum() and f["jobs_corrected"] == (corrections > 0).sum()
        assert f["last_time"] == max(end.max(), submit.max())


def test_replay_columns_are_numpys():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(0, 300))
        submit = np.sort(rng.integers(0, 50, n)) if rng.random() < 0.5 else rng.integers(0, 50, n)
        ids = rng.integers(0, 20, n) if rng.random() < 0.5 else np.arange(n)
        units, req, run = rng.integers(1, 9, n), rng.integers(-2, 100, n), rng.integers(-3, 150, n)
        user = rng.integers(-5, int(rng.choice([3, 100, 10**7, 2**62])), n)
        kill, clairvoyant = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        order, s, u, q, r, e, w, user_ids = _table.replay_columns(submit, ids, units, req, run, user, kill,
                                                                  clairvoyant)
        want = np.lexsort((ids, submit))
        got = np.arange(n) if order is None else np.frombuffer(order, dtype=np.int64)
        assert np.array_equal(got, want) and (order is None) == np.array_equal(want, np.arange(n))
        want_run = np.maximum(run[want], 0)
        if kill:
            want_run = np.where(req[want] > 0, np.minimum(want_run, req[want]), want_run)
        for a, b in ((s, submit[want]), (u, units[want]), (q, req[want]), (r, want_run),
                     (e, np.maximum(want_run, 1) if clairvoyant else req[want])):
            assert np.frombuffer(a, dtype=np.int64).tolist() == b.tolist()
        distinct, inverse = np.unique(user[want], return_inverse=True)
        assert list(user_ids) == distinct.tolist() and list(w) == inverse.tolist()


def _raw(n, seed, rows, reader_blocks=False):
    """Random raw records as a reader's blocks of ``rows`` (18 rows of int64, the fractional fields' bits):
    numpy arrays, or (``reader_blocks``) memoryviews over ``array.array`` as the reader makes them."""
    rng = np.random.default_rng(seed)
    cols = np.empty((18, n), dtype=np.int64)
    for i, name in enumerate(SWF_FIELDS):
        cols[i] = rng.normal(0, 1e6, n).view(np.int64) if name in FLOAT_FIELDS else rng.integers(-3, 500, n)
    cols[1] = np.sort(rng.integers(-1, 10_000, n))
    lines = np.arange(1, n + 1) * 2
    blocks = []
    for a in range(0, n, rows):
        m = min(rows, n - a)
        if reader_blocks:
            block, line = _new_block(rows)
            np.asarray(block)[:, :m] = cols[:, a:a + m]
            np.frombuffer(line, dtype=np.int64)[:m] = lines[a:a + m]
        else:
            block = np.zeros((18, rows), dtype=np.int64)
            block[:, :m] = cols[:, a:a + m]
            line = np.zeros(rows, dtype=np.int64)
            line[:m] = lines[a:a + m]
        blocks.append((block, line, m))
    table = {name: cols[i].view(np.float64) if name in FLOAT_FIELDS else cols[i] for i, name in enumerate(SWF_FIELDS)}
    table["line"] = lines
    return blocks, JobTable(table)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cleaning", [Cleaning(), Cleaning(oversize="drop", cluster_units=300),
                                      Cleaning(fill_missing_request=True, units_from="requested"),
                                      Cleaning(units_from="allocated", drop_nonpositive_runtime=False),
                                      Cleaning(cluster_units=200, clip_runtime_to_request=False), Cleaning.none(),
                                      Cleaning(drop_nonpositive_runtime=0)])
@pytest.mark.parametrize("in_place", [False, True])
def test_compiled_cleaning_is_clean(seed, cleaning, in_place):
    """The same columns and counts as clean(), copied out of the blocks or moved to the first block's front
    (where they fit: with 1000 rows of 333 a block, only when cleaning drops enough)."""
    n = [0, 7, 1000, 5000][seed]
    blocks, raw = _raw(n, seed, [64, 1000, 333, 4096][seed], reader_blocks=in_place)
    want, report = clean(raw, cleaning)
    size = cleaning.cluster_units or -1
    columns, counts = _table.clean_blocks(
        blocks, list(SWF_FIELDS), _IS_FLOAT, ("max", "requested", "allocated").index(cleaning.units_from),
        cleaning.drop_missing_submit, _runtime_rule(cleaning.drop_nonpositive_runtime), cleaning.drop_nonpositive_units,
        {None: 2, True: 1, False: 0}[cleaning.fill_missing_request], cleaning.clip_runtime_to_request, size,
        cleaning.oversize == "drop", in_place=in_place)
    assert list(columns) == list(want.columns)
    moved = in_place and n and len(want) <= blocks[0][0].shape[1]
    for name, col in columns.items():
        assert getattr(col, "typecode", getattr(col, "format", None)) == (
            "d" if want.columns[name].dtype == np.float64 else "q")
        assert isinstance(col, memoryview) == bool(moved and name != "units")
        assert np.array_equal(np.frombuffer(col, dtype=np.int64), want.columns[name].view(np.int64)), name
    assert {k: getattr(report, k) for k in counts} == counts


def test_a_table_of_buffers_shows_numpy_columns(tmp_path):
    columns = {name: array.array("d" if name in FLOAT_FIELDS else "q", range(5)) for name in SWF_FIELDS}
    columns["units"] = array.array("q", [2] * 5)
    table = JobTable._of_buffers(columns, SwfHeader(), "x")
    assert len(table) == 5 and table.buffer("units") is columns["units"]
    again = pickle.loads(pickle.dumps(table))
    assert isinstance(table.submit, np.ndarray) and table.submit.tolist() == list(range(5))
    assert table.columns["avg_cpu"].dtype == np.float64 and list(table.columns)[-1] == "units"
    table.submit[0] = 9                        # (the same memory: no copy)
    assert columns["submit"][0] == 9 and isinstance(table.buffer("submit"), np.ndarray)
    assert len(again) == 5 and again.units.tolist() == [2] * 5
    # a table read from a log (its columns memoryviews of the reader's block) pickles and copies
    import copy

    from pbf.workload import read_swf
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n" + "".join(f"{i} {i} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n"
                                                 for i in range(1, 6)))
    read = read_swf(path)
    assert isinstance(read.buffer("submit"), memoryview)
    for other in (pickle.loads(pickle.dumps(read)), copy.deepcopy(read), copy.copy(read)):
        assert len(other) == 5 and other.submit.tolist() == list(range(1, 6)) and other.req_mem.dtype == np.float64
    assert read.avg_cpu.tolist() == [-1.0] * 5
    with pytest.raises(AttributeError):
        _ = table.nothing


def test_a_table_whose_columns_differ_in_length_is_refused():
    table = JobTable.from_arrays(submit=np.arange(5), run=np.full(5, 10), units=np.ones(5, dtype=np.int64),
                                 req_time=np.full(5, 20))
    table.columns["user"] = np.array([1])
    with pytest.raises(ValueError, match="columns differ in length: .*user 1"):
        pbf.replay(table, pbf.ReplayConfig(units=4))


def _replays(table, config, monkeypatch):
    import pbf.replayer as replayer
    plain = pbf.replay(table, config)
    with monkeypatch.context() as m:
        m.setattr(replayer, "_plain", lambda *a: False)
        other = pbf.replay(table, config)
    return plain, other


@pytest.mark.parametrize("config", [pbf.ReplayConfig(), pbf.ReplayConfig(backfill=pbf.Backfill(reservations=None)),
                                    pbf.ReplayConfig(predictor="clairvoyant", priority="sjf"),
                                    pbf.ReplayConfig.from_preset("slurm"), pbf.ReplayConfig(workers=2),
                                    pbf.ReplayConfig.from_preset("gaussier"),
                                    pbf.ReplayConfig(predictor="ave2", units=40)])
def test_the_compiled_path_replays_as_numpys(config, monkeypatch, tmp_path):
    """Jobs and summary of the compiled path (a plain replay) and of the numpy one, on a trace out of
    order (ties of submit times, ids going back) and with jobs cleaning keeps for the engine to reject."""
    from pbf.workload.lublin import generate_lublin
    t = generate_lublin(2000, seed=5)
    rng = np.random.default_rng(0)
    t.columns["job_id"] = rng.permutation(len(t))
    t.columns["submit"] = t.submit // 600 * 600          # (many ties: the ids order them)
    t.columns["user"] = rng.integers(0, 30, len(t))
    t.columns["units"][::97] = 10_000                     # (larger than the cluster: rejected)
    for table in (t, pbf.read_swf(_write(t, tmp_path / "t.swf"))):
        plain, other = _replays(table, config, monkeypatch)
        assert "_jobs" in plain.__dict__ and not isinstance(plain.__dict__["_jobs"], dict)
        assert isinstance(other.__dict__["_jobs"], dict)
        a, b = dict(plain.summary), dict(other.summary)
        for s in (a, b):
            # (wall times; with threads, how the tests were shared between them: both vary run to run)
            s.pop("wall_s")
            s["passes"] = {k: v for k, v in s["passes"].items()
                           if not any(w in k for w in ("wall", "worker", "thread", "search"))}
        assert a == b
        assert plain.metrics == other.metrics
        assert list(plain.jobs) == list(other.jobs)
        for name in other.jobs:
            assert plain.jobs[name].dtype == other.jobs[name].dtype and np.array_equal(
                plain.jobs[name], other.jobs[name]), name


def _write(table, path):
    from pbf.workload import write_swf
    header = SwfHeader()
    header.set("MaxProcs", int(table.header.cluster_units() or 256))
    write_swf(table, path, header)
    return path
