"""Jobs inside an advance reservation (sbatch --reservation=R; sacct's Reservation column): the node
oracles' rules (pbf.reference.resv_ref: a job starts only inside its reservation's current window, on
its nodes, which are held from every other job), a worked example with known starts, properties of
both oracles on random scenarios; the sacct reader's column and the check of its names against the
reservations dump."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbf.cluster import Node
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.resv_ref import current, usable_at
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_reservations import SiteReservations
from pbf.workload.sacct import read_sacct

from scheduling import busy_node_scenarios


def _job(submit, cores, run, est, resv=None):
    d = dict(submit=submit, run=run, est=est, req=NodeRequest(cores))
    if resv is not None:
        d["resv"] = resv
    return d


def _replays(nodes, jobs, reservations, windows, **kw):
    return (node_replay(nodes, jobs, reservations, windows=windows, **kw),
            slurm_node_replay(nodes, jobs, reservations, windows=windows, **kw))


@pytest.mark.parametrize("reservations", [1, None])
def test_worked_example_jobs_start_inside_their_reservation(reservations):
    # two 4-core nodes; reservation R holds n1 from 100 to 500
    nodes = [Node(f"n{i}", 4, 4000) for i in range(2)]
    jobs = [_job(0, 4, 1000, 1000),          # n0 until 1000 (n1 would run into R)
            _job(10, 4, 200, 300, "R"),      # waits for R: 100, on n1
            _job(20, 2, 50, 50),             # n1 before R starts: 20 (ends 70)
            _job(30, 4, 100, 100, "R"),      # after the first R job ends (300)
            _job(40, 2, 100, 100, "R"),      # after that one (400)
            _job(50, 4, 200, 200, "R"),      # n1 is busy until 500, R's end: never starts (held)
            _job(60, 4, 100, 100)]           # n1 once R is over and its last job ended: 500
    windows = [(100, 500, [1], "R")]
    for got in _replays(nodes, jobs, reservations, windows):
        assert got["start"] == [0, 100, 20, 300, 400, -1, 500]
        assert [sorted(a) if a else None for a in got["alloc"]] == [[0], [1], [1], [1], [1], None, [1]]
        assert got["reject"][5] == "Reservation"


def test_a_job_inside_runs_past_the_end_and_other_reservations_stay_out():
    # R on both nodes 0..100; M (another reservation) on n0 from 150: a 200 s job inside R may run past
    # R's end, but not on n0 (M over its time)
    nodes = [Node(f"n{i}", 4, 4000) for i in range(2)]
    jobs = [_job(0, 4, 200, 200, "R")]
    windows = [(0, 100, [0, 1], "R"), (150, 400, [0], "M")]
    for got in _replays(nodes, jobs, 1, windows):
        assert got["start"] == [0] and sorted(got["alloc"][0]) == [1]


def test_a_job_whose_reservation_is_over_never_starts():
    nodes = [Node("n0", 4, 4000)]
    jobs = [_job(50, 1, 10, 10, "R"), _job(60, 1, 10, 10)]
    for got in _replays(nodes, jobs, 1, [(0, 40, [0], "R")]):
        assert got["start"] == [-1, 60] and got["reject"][0] == "Reservation"


def test_a_repeating_reservation_takes_its_jobs_in_its_next_window():
    nodes = [Node("n0", 4, 4000)]
    jobs = [_job(50, 4, 30, 30, "R")]
    windows = [(0, 40, [0], "R"), (100, 140, [0], "R")]
    for got in _replays(nodes, jobs, 1, windows):
        assert got["start"] == [100]
    assert current(windows, "R", 50)[0] == 100 and usable_at(windows, "R", 50, 120) == {0}
    assert usable_at(windows, "R", 50, 140) is None and usable_at(windows, "R", 50, 99) is None


@st.composite
def inside_scenarios(draw):
    nodes, jobs, reservations, first_fit, resolution, window = draw(busy_node_scenarios())
    horizon = max(j["submit"] for j in jobs) + 300
    windows = []
    for _ in range(draw(st.integers(1, 3))):
        s = draw(st.integers(0, horizon))
        e = s + draw(st.integers(1, 40)) * draw(st.sampled_from([5, 30, 60]))
        idx = sorted(set(draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1, max_size=len(nodes)))))
        name = draw(st.sampled_from(["A", "B", "C"]))
        if not any(w[3] == name and w[0] < e and s < w[1] for w in windows):
            windows.append((s, e, idx, name))   # (a reservation's windows never overlap)
    names = sorted({w[3] for w in windows})
    for job in jobs:
        if draw(st.integers(0, 2)) == 0:
            job["resv"] = draw(st.sampled_from(names))
    return nodes, jobs, reservations, first_fit, resolution, window, windows


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"], resv=j.get("resv"),
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
            for j in jobs]


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=inside_scenarios())
def test_the_oracles_keep_each_job_to_its_reservation(search, case):
    nodes, jobs, reservations, first_fit, resolution, window, windows = case
    ref = _ref_jobs(jobs)
    if search == "slurm":
        got = slurm_node_replay(nodes, ref, reservations, window=window, resolution=max(resolution, 1),
                                first_fit=first_fit, windows=windows)
    else:
        got = node_replay(nodes, ref, reservations, first_fit, windows=windows)
    for j, job in enumerate(ref):
        s = got["start"][j]
        if s < 0:
            continue
        used = set(got["alloc"][j])
        end = s + max(job["est"], 1)
        name = job["resv"]
        if name is not None:
            # inside its reservation's window when it starts, on its nodes
            w = [w for w in windows if w[3] == name and w[0] <= s < w[1]]
            assert w and used <= set(w[0][2]), (j, s, used, w)
        for ws, we, idx, wname in windows:
            if wname == name:
                continue
            # never on another reservation's nodes over its planned time
            assert not (s < we and ws < end and used & set(idx)), (j, s, end, ws, we, idx, wname)


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=inside_scenarios())
def test_named_windows_without_jobs_inside_are_plain_holds(search, case):
    nodes, jobs, reservations, first_fit, resolution, window, windows = case
    ref = [dict(j, resv=None) for j in _ref_jobs(jobs)]
    plain = [w[:3] for w in windows]
    if search == "slurm":
        run = lambda ws: slurm_node_replay(nodes, ref, reservations, window=window,  # noqa: E731
                                           resolution=max(resolution, 1), first_fit=first_fit, windows=ws)
    else:
        run = lambda ws: node_replay(nodes, ref, reservations, first_fit, windows=ws)  # noqa: E731
    assert run(windows)["start"] == run(plain)["start"]


HEAD = "JobID|User|Partition|Submit|Start|Elapsed|Timelimit|ReqCPUS|ReqNodes|State|Reservation"


def _dump(tmp_path, rows):
    p = tmp_path / "jobs.sacct"
    p.write_text(HEAD + "\n" + "\n".join(rows) + "\n")
    return p


ROWS = ["1|u|p|2023-03-01T00:00:00|2023-03-01T00:00:10|00:01:00|00:02:00|1|1|COMPLETED|",
        "2|u|p|2023-03-01T00:01:00|2023-03-01T00:01:10|00:01:00|00:02:00|1|1|COMPLETED|maint",
        "3|u|p|2023-03-01T00:02:00|2023-03-01T00:02:10|00:01:00|00:02:00|1|1|COMPLETED|(null)",
        "4|u|p|2023-03-01T00:03:00|2023-03-01T00:03:10|00:01:00|00:02:00|1|1|COMPLETED|maint"]
RESV = ("ReservationName=maint StartTime=2023-03-01T00:00:00 EndTime=2023-03-01T02:00:00 Duration=2:00:00\n"
        "   Nodes=n0 NodeCnt=1 CoreCnt=4 Flags=MAINT\n")


def test_the_sacct_reader_reads_the_reservation_column(tmp_path):
    table = read_sacct(_dump(tmp_path, ROWS))
    assert table.reservation.tolist() == [0, 1, 0, 1]
    assert " Reservation: 1 maint" in table.header.lines
    assert table.reservation_lines == {"maint": (3, 1)}
    resv = tmp_path / "r.txt"
    resv.write_text(RESV)
    site = SiteReservations(str(resv), known=("n0",))
    assert site.jobs_inside(table) == {"maint": 2}
    assert site.as_dict()["read"]["jobs_inside"] == {"maint": 2}


def test_a_job_naming_a_reservation_the_dump_does_not_hold_is_an_error(tmp_path):
    rows = ROWS + ["5|u|p|2023-03-01T00:04:00|2023-03-01T00:04:10|00:01:00|00:02:00|1|1|COMPLETED|gpu_day"]
    table = read_sacct(_dump(tmp_path, rows))
    resv = tmp_path / "r.txt"
    resv.write_text(RESV)
    with pytest.raises(ConfigError, match=r"jobs.sacct, line 6: Reservation 'gpu_day': no reservation of that "
                                          r"name in .*r.txt \(expected one of its reservations: maint\)"):
        SiteReservations(str(resv), known=("n0",)).jobs_inside(table)


def test_a_trace_without_the_column_has_no_jobs_inside(tmp_path):
    p = tmp_path / "j.sacct"
    p.write_text(HEAD.rsplit("|", 1)[0] + "\n" + "\n".join(r.rsplit("|", 1)[0] for r in ROWS) + "\n")
    table = read_sacct(p)
    assert not table.reservation.any()
    resv = tmp_path / "r.txt"
    resv.write_text(RESV)
    assert SiteReservations(str(resv), known=("n0",)).jobs_inside(table) == {}
