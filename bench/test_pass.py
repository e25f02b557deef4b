"""One full pass across the pass matrix: queued x units x running x reservations x workers
1/2/4/8 x commit ordered/eager.

Each round runs on a fresh copy of the scenario (set-up not timed) and asserts the pass tested every
queued job and started the same jobs as every other round.
"""
import pytest

from pbf.benchmark import NOW, PASS_MATRIX, PassScenario

CASES = [PassScenario(q, u, r, resv) for q in PASS_MATRIX["queued"] for u in PASS_MATRIX["units"]
         for r in PASS_MATRIX["running"] for resv in PASS_MATRIX["reservations"]]
CASES = [sc for sc in CASES if sc.matrix_affordable()]


@pytest.mark.benchmark(group="pass")
@pytest.mark.parametrize("commit", ["ordered", "eager"])
@pytest.mark.parametrize("workers", [1, 2, 4, 8], ids=lambda w: f"workers{w}")
@pytest.mark.parametrize("sc", CASES, ids=[sc.label().replace(" ", "-").replace("=", "") for sc in CASES])
def test_full_pass(benchmark, sc, workers, commit):
    if commit == "eager" and workers == 1:
        pytest.skip("one worker commits in order whatever the commit order")
    if workers > 1 and (sc.queued * sc.units > 10**8 or sc.reservations is None and sc.queued > 100):
        # forced onto threads, every job of such a pass is a hand-off between threads: on 2 cores
        # one pass takes seconds to minutes and tells nothing the smaller cases do not
        pytest.skip("large passes run with 1 worker only in the matrix (see docs/benchmarks.md)")
    work = []
    cores = []

    def setup():
        while cores:                  # one round's core at a time: a core of the largest cases holds
            cores.pop().stop_pool()   # hundreds of MB, and rounds kept alive added up to gigabytes
        core = sc.core()
        core.configure(commit_eager=int(commit == "eager"))
        if workers > 1:
            core.set_testing(parallel_min_queue=1, parallel=1)
            core.start_pool(workers)
        cores.append(core)
        return (core,), {}

    def one_pass(core):
        core.run_pass(NOW)
        work.append(core.last_pass())

    rounds = 3 if sc.queued * sc.units > 10**8 or sc.reservations is None else 10
    try:
        benchmark.pedantic(one_pass, setup=setup, rounds=rounds, iterations=1)
    finally:
        for core in cores:
            core.stop_pool()
        cores.clear()             # pytest-benchmark keeps this test's closures to the session's end
    assert all(w["depth"] == sc.queued for w in work)
    if commit == "ordered":    # eager results may depend on thread timing
        assert len({(w["started"], w["reservations"]) for w in work}) == 1
    assert work[0]["reservations"] >= 1 or work[0]["started"] == sc.queued
    benchmark.extra_info.update({k: work[0][k] for k in ("depth", "started", "reservations", "slots")})


@pytest.mark.benchmark(group="pass-reference")
@pytest.mark.parametrize("sc", [PassScenario(1_000, 1_024, 100), PassScenario(10_000, 9_128, 2_000)],
                         ids=lambda sc: sc.label().replace(" ", "-").replace("=", ""))
def test_reference_pass(benchmark, sc):
    """The pure-Python oracle on the same state, for the ratio (compare with test_full_pass)."""
    results = []

    def setup():
        return (sc.reference(),), {}

    benchmark.pedantic(lambda ref: results.append(ref.full_pass(NOW)), setup=setup, rounds=2, iterations=1)
    assert all(len(started) > 0 and len(reserved) == 1 for started, reserved in results)
