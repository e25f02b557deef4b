"""Fixtures of the test suite (defined in helpers.py, which the benchmarks share). The real logs: where
$PBF_TRACES is not set, ../shared/traces beside this clone (pbf itself never looks in the current
folder, and an installed pbf is not beside the clone)."""
import os
from pathlib import Path

from helpers import shared_trace  # noqa: F401  (a fixture: pytest finds it here)

_BESIDE = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
if "PBF_TRACES" not in os.environ and _BESIDE.is_dir():
    os.environ["PBF_TRACES"] = str(_BESIDE)
