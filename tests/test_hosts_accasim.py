"""pbf inside the real AccaSim (pbf.hosts.accasim): the same starts as ``pbf replay`` in every mode,
rejected jobs answered, nodes with memory respected; and AccaSim's own EASYBackfilling on the
3-job workload of docs/validation.md."""
from pathlib import Path

import numpy as np
import pytest

import pbf

pytest.importorskip("accasim", reason="AccaSim is the host under test (pip install accasim; the test extra has it)")

# (first: it lets AccaSim 1.1.3 import on Python >= 3.10)
from pbf.hosts import MODES  # noqa: E402
from pbf.hosts.accasim import PbfDispatcher, StartLog  # noqa: E402

# isort: split
from accasim.base.allocator_class import FirstFit  # noqa: E402
from accasim.base.scheduler_class import EASYBackfilling  # noqa: E402
from accasim.base.simulator_class import Simulator  # noqa: E402

TRACE = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"


def system(tmp_path, nodes, core=1, mem=0):
    path = tmp_path / "system.json"
    group = f'"core": {core}' + (f', "mem": {mem}' if mem else "")
    path.write_text(f'{{"groups": {{"g": {{{group}}}}}, "resources": {{"g": {nodes}}}}}')
    return str(path)


def simulate(tmp_path, workload, sys_config, dispatcher):
    """AccaSim's run of ``workload``: {job id: (start, nodes)} from AccaSim's own job records."""
    sim = Simulator(str(workload), sys_config, dispatcher, additional_data=[StartLog],
                    RESULTS_FOLDER_PATH=str(tmp_path / "out"), scheduling_output=False, statistics_output=False,
                    show_statistics=False, LOG_LEVEL="ERROR")
    log = StartLog.of(sim)
    sim.start_simulation()
    return log.starts


def host_workload(jobs, path):
    """``jobs`` as an SWF file both sides read: submit times from 1,000 s (AccaSim takes a first
    submit time of 0 for "no time yet") and run times cut at the request (the replay kills there)."""
    jobs.columns["submit"] = jobs.submit - jobs.submit.min() + 1000
    jobs.columns["run"] = np.minimum(jobs.run, jobs.req_time)
    pbf.write_swf(jobs, path)
    return pbf.read_swf(path)


def check_identical(tmp_path, jobs, units, mode):
    ref = pbf.replay(jobs, pbf.ReplayConfig(units=units, backfill=MODES[mode])).jobs
    want = {str(i): s for i, s in zip(ref["id"].tolist(), ref["start"].tolist())}
    dispatcher = PbfDispatcher(mode)
    got = simulate(tmp_path, tmp_path / "w.swf", system(tmp_path, units), dispatcher)
    dispatcher.close()
    same = sum(got.get(i, (-1,))[0] == s for i, s in want.items() if s >= 0)
    rejected = {i for i, s in want.items() if s < 0}
    assert same == len(want) - len(rejected), f"{mode}: {same} of {len(want) - len(rejected)} starts identical"
    assert not rejected & set(got) and dispatcher.engine.stats()["rejected"] == len(rejected)
    return same


@pytest.mark.parametrize("mode", list(MODES))
def test_starts_are_pbf_replays_on_lublin(tmp_path, mode):
    jobs = host_workload(pbf.read_swf(TRACE), tmp_path / "w.swf")
    assert check_identical(tmp_path, jobs, 256, mode) == 1000


@pytest.mark.parametrize("mode", list(MODES))
def test_starts_are_pbf_replays_on_sdsc_sp2(tmp_path, shared_trace, mode):
    jobs = pbf.read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    jobs = host_workload(jobs.take(np.arange(10_000, 14_000)), tmp_path / "w.swf")
    assert check_identical(tmp_path, jobs, 128, mode) == 4000


def swf(path, rows):
    """rows of (id, submit, run, procs, requested[, mem per processor])"""
    lines = [f"{r[0]} {r[1]} -1 {r[2]} {r[3]} -1 -1 {r[3]} {r[4]} {r[5] if len(r) > 5 else -1} 1 1 1 1 1 1 -1 -1"
             for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


# the 3-job workload of docs/validation.md: 4 one-core nodes; job 2 needs all four and is reserved
# at 110, when job 1 ends; job 3 is long and would delay it
THREE = [(1, 10, 100, 2, 100), (2, 11, 100, 4, 100), (3, 12, 1000, 2, 1000)]


def test_accasim_easy_does_not_protect_its_reservation(tmp_path):
    work = swf(tmp_path / "three.swf", THREE)
    theirs = simulate(tmp_path, work, system(tmp_path, 4), EASYBackfilling(FirstFit()))
    assert {i: s for i, (s, _) in theirs.items()} == {"1": 10, "3": 12, "2": 1012}   # job 3 jumped job 2
    ours = simulate(tmp_path, work, system(tmp_path, 4), PbfDispatcher("easy"))
    assert {i: s for i, (s, _) in ours.items()} == {"1": 10, "2": 110, "3": 210}


def test_rejected_jobs_and_nodes_with_memory(tmp_path):
    # 4 nodes of 4 cores and 1,000 (MB) each; slots of one core with the SWF's memory per processor
    rows = [(1, 10, 100, 4, 200, 500),     # 4 x 500: two nodes by memory
            (2, 10, 100, 2, 200, 1000),    # 2 x 1000: a node each
            (3, 11, 50, 1, 0),             # no requested time: rejected
            (4, 11, 50, 17, 100),          # wider than the cluster: rejected
            (5, 12, 10, 8, 100, 250)]      # 8 x 250: 4 cores and 1,000 on each of two nodes
    work = swf(tmp_path / "mem.swf", rows)
    dispatcher = PbfDispatcher("conservative")
    got = simulate(tmp_path, work, system(tmp_path, 4, core=4, mem=1000), dispatcher)
    assert set(got) == {"1", "2", "5"} and dispatcher.engine.stats()["rejected"] == 2
    assert dispatcher.cluster.has_resources
    # jobs 1 and 2 run together: no node holds more than its 1,000 (AccaSim's resource manager
    # accepted every placement as pbf made it; a refused one would have been postponed)
    held = {}
    for i, per_slot in (("1", 500), ("2", 1000)):
        for node in got[i][1]:
            held[node] = held.get(node, 0) + per_slot
    assert max(held.values()) <= 1000 and sum(held.values()) == 4000
    # the two memory-bound jobs need the four nodes' memory: job 5 waits for both to end
    assert got["1"][0] == got["2"][0] == 10 and got["5"][0] == 110
