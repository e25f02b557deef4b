"""The Ray backend of :func:`pbf.sweep`: cells as Ray tasks, each trace put once in the
object store, metrics (not job tables) returned, records appended as tasks finish.

``address``: a running cluster (``ray start --head`` prints it; ``ray://HOST:10001`` for a remote
one through Ray Client), or None to start a Ray instance on this machine for the sweep. Ray binds
every interface of the machines it runs on: run it on a trusted network.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable

from .errors import ConfigError
from .sweep_cell import run_recorded, trace_table

__all__ = ["run_ray"]


def _trace_key(trace, params):
    if "trace" in params:
        return json.dumps({"path": params["trace"]})
    if "path" in trace:
        return json.dumps({"path": trace["path"]})
    return json.dumps({**trace, "seed": params.get("seed", trace.get("seed", 0))}, sort_keys=True)


#: called as each cell ends: (cell, status, metrics, error, seconds)
Finished = Callable[[dict, str, dict | None, str | None, float], None]


def run_ray(trace: dict, todo: list[dict], finished: Finished, address: str | None) -> None:
    """Run the cells ``todo`` of a sweep whose trace setting is ``trace`` as Ray tasks on the cluster at
    ``address`` (None: a Ray instance started here for the sweep); ``finished`` is called as each ends."""
    try:
        import ray
    except ImportError:
        raise ConfigError('the ray backend needs Ray: pip install "pbf[ray]"') from None
    if not todo:
        return
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        task = ray.remote(num_cpus=1)(run_recorded)
        tables = {}
        pending = {}
        for cell in todo:
            key = _trace_key(trace, cell["params"])
            if key not in tables:          # each trace goes to the object store once
                try:
                    tables[key] = ray.put(trace_table(trace, cell["params"]))
                except Exception as exc:  # noqa: BLE001 - recorded for the cells of that trace
                    tables[key] = exc
            if isinstance(tables[key], Exception):
                finished(cell, "error", None, f"{type(tables[key]).__name__}: {tables[key]}", 0.0)
                continue
            ref = task.remote(trace, cell["params"], tables[key])
            pending[ref] = (cell, time.perf_counter())
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                cell, t0 = pending.pop(ref)
                status, metrics, error = ray.get(ref)
                finished(cell, status, metrics, error, time.perf_counter() - t0)
    finally:
        if started_here:
            ray.shutdown()
