"""The ARCHER2-sized pass benchmark (pbf.benchmark_nodes) runs and says what it measured (its times are
benchmarks, not asserted)."""
import pytest

from pbf.benchmark_nodes import archer2_passes
from pbf.benchmark_text import format_rows


@pytest.mark.parametrize("search", ["slurm", "exact"])
def test_archer2_passes_run_and_count_their_decisions(search):
    lines = []
    out = archer2_passes(search, queued=300, passes=2, max_job_test=50, report=lines.append)
    assert len(out["walls"]) == len(out["started"]) == len(out["reserved"]) == 3
    assert all(w > 0 for w in out["walls"])
    # a reservation for every job tested, up to bf_max_job_test: the deep queue is full of them
    assert all(0 < s + r <= 50 for s, r in zip(out["started"], out["reserved"]))
    assert lines[0].startswith(f"{search}: ") and len(lines) == 4


def test_a_pass_row_reads_as_a_sentence():
    row = {"slice": "large", "name": "archer2 pass, Slurm search", "params": "100,000 queued", "best_s": 2.5,
           "median_s": 2.8, "trials": 5, "first_pass_s": 6.9, "started": 3, "reservations": 997,
           "peak_rss_mb": 224.0}
    text = format_rows([row])
    assert "started 3, reservations 997 a pass; the pass with the submits 6.90 s; peak RSS 224 MB" in text
