"""pbf: a parallel-backfill HPC batch-scheduler engine with a compiled core.

The public API is small and listed in ``__all__``; everything else is internal.
"""
try:
    from . import _bitmap, _swf  # noqa: F401  (the compiled core)
except ImportError as exc:  # pragma: no cover - depends on how pbf was installed
    raise ImportError(
        f"pbf's compiled modules are not built in {__path__[0]}. If that is a source checkout, "
        "either run from another folder (the installed pbf is then used) or build in place with "
        "'pip install -e .'") from exc

from .cluster import Cluster, beocat_cluster
from .config import Backfill
from .engine import Engine, Finish, Job, ProtocolError, Reserve, Start, Submit
from .errors import ConfigError, PbfError, TraceFormatError
from .metrics import Metrics, schedule_metrics
from .replay import ReplayConfig, ReplayResult, replay
from .workload import Cleaning, CleaningReport, JobTable, read_swf, write_swf

__version__ = "0.1.0"

__all__ = [
    # the engine (embedding API) and the replayer
    "Engine", "Backfill", "Job", "Submit", "Finish", "Start", "Reserve", "replay", "ReplayConfig",
    "ReplayResult",
    # cluster and workloads
    "Cluster", "beocat_cluster", "JobTable", "Cleaning", "CleaningReport", "read_swf", "write_swf",
    # metrics
    "Metrics", "schedule_metrics",
    # errors
    "PbfError", "ConfigError", "TraceFormatError", "ProtocolError",
]
