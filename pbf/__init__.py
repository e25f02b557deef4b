"""pbf: a parallel-backfill HPC batch-scheduler engine with a compiled core.

The public API is small and listed in ``__all__``; everything else is internal. Names are loaded on
first use, so that ``import pbf`` (and the ``pbf`` command) start fast.
"""
import importlib

try:
    from . import _bitmap, _swf  # noqa: F401  (the compiled core)
except ImportError as exc:  # pragma: no cover - an unbuilt source checkout (run from a clone's root)
    from ._checkout import use_installed
    use_installed(__path__[0], exc)     # the installed pbf takes this import over, or one clear error

__version__ = "0.3.0"

_WHERE = {
    # the engine (embedding API) and the replayer
    "Engine": "engine", "Job": "engine", "Submit": "engine", "Finish": "engine", "Start": "engine",
    "Reserve": "engine", "Rejected": "engine", "BatchDecisions": "engine", "ProtocolError": "engine",
    "Backfill": "config", "SlurmBackfill": "bf_limits",
    "Drain": "engine", "Fail": "engine", "Resume": "engine", "Stopped": "engine", "Lend": "engine",
    "Placement": "engine_nodes",
    "replay": "replayer", "ReplayConfig": "replayer", "ReplayResult": "replayer", "SlurmSim": "scheduler_time",
    # sweeps of replays (local processes or Ray)
    "sweep": "sweeps",
    # node drains and failures in replays
    "Failures": "outages",
    # co-allocation
    "CoAllocation": "coalloc",
    # cluster and workloads
    "Cluster": "cluster", "Node": "cluster", "beocat_cluster": "cluster",
    "JobTable": "workload", "Cleaning": "workload",
    "CleaningReport": "workload", "read_swf": "workload", "write_swf": "workload",
    # metrics
    "Metrics": "metrics", "schedule_metrics": "metrics",
    # errors
    "PbfError": "errors", "ConfigError": "errors", "TraceFormatError": "errors", "InternalError": "errors",
}

#: subpackages reachable as attributes (``pbf.plugins.Regression``)
_SUBPACKAGES = ("plugins", "rl")

__all__ = list(_WHERE) + list(_SUBPACKAGES)


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pbf' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
