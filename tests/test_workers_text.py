"""``--workers N`` said as what it is in ``pbf replay``'s text: modelled workers on the model and slurm-sim
clocks, how many full passes ran on threads on every clock, and why none did."""
import os

from pbf.cli import main
from pbf.cli.replay_text import workers_line

TRACES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "traces")


def _summary(clock="free", workers=2, **passes):
    return {"config": {"workers": workers, "clock": clock, "commit": "ordered", "node_search": "exact"},
            "passes": {"clock": clock, "full": 100, "budget_s": 30 if clock != "free" else None,
                       "thread_tests_per_worker": [0] * workers, **passes}}


def test_one_worker_says_nothing():
    assert workers_line(_summary(workers=1)) is None


def test_free_clock_names_the_same_schedule_and_why_no_threads():
    text = workers_line(_summary())
    assert text.splitlines()[0] == "workers      2: the schedule is the same for any N (free clock, ordered commit)"
    assert "0 of 100 full passes ran on threads" in text and "too short, or no CPU to spare" in text


def test_threads_line_uses_the_count():
    text = workers_line(_summary(threaded_passes=7, thread_tests_per_worker=[40, 35]))
    assert "threads      7 of 100 full passes ran on threads (jobs tested per thread: 40, 35)" in text


def test_modelled_workers_are_named():
    text = workers_line(_summary("slurm-sim", 8))
    assert "8 modelled workers (slurm-sim clock)" in text and "up to 8x the jobs within its budget" in text
    assert "the schedule changes with N" in text
    assert all(len(line) <= 120 for line in text.splitlines())


def test_replay_prints_the_lines(capsys):
    assert main(["replay", os.path.join(TRACES, "lublin1-1000.swf.gz"), "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "\nworkers      2: the schedule is the same for any N" in out and "\nthreads      " in out


def test_slurms_search_names_its_later_starts():
    # on the free clock: the later starts a helper tested; on the slurm-sim clock: why none was
    free = _summary(threaded_passes=0, searches_shared=900, searches_helped=850)
    free["config"]["node_search"] = "slurm"
    assert "850 of 900 later starts tested ahead on a helper thread" in workers_line(free)
    sim = _summary("slurm-sim", 2, threaded_passes=0)
    sim["config"]["node_search"] = "slurm"
    text = workers_line(sim)
    assert "a cycle's tests run on this thread (the workers are modelled" in text and "--threads 2" in text
    assert all(len(line) <= 160 for line in text.splitlines())
    helped = _summary("slurm-sim", 1, sim_threads=2, searches_shared=900, searches_helped=850)
    helped["config"]["node_search"] = "slurm"
    text = workers_line(helped)
    assert text.startswith("threads      2 (--threads; the schedule is the same for any T)")
    assert "850 of 900 later starts tested ahead on a helper thread" in text
