"""Where the real archive logs are: the one lookup the studies, the benchmarks and the tests share.

The logs are never copied into the repository. They are found in ``$PBF_TRACES`` if it is set, else
in ``../shared/traces`` beside the checkout this package was imported from (an in-place or editable
build); never from the current folder, so a command finds the same logs wherever it is run.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError

__all__ = ["shared_trace_dir", "shared_trace"]


def shared_trace_dir() -> Path | None:
    """The folder of the real logs (a :class:`~pathlib.Path`): ``$PBF_TRACES``, else ``../shared/traces``
    beside the checkout this package was imported from; None when neither is there."""
    env = os.environ.get("PBF_TRACES")
    if env:
        return Path(env)
    cand = Path(__file__).resolve().parents[2].parent / "shared" / "traces"
    return cand if cand.is_dir() else None


def shared_trace(name: str | os.PathLike) -> Path:
    """The path of the real log ``name`` (a file name in that folder, or a path that exists);
    raises :class:`~pbf.ConfigError` saying where it looked when it is not there."""
    if os.path.exists(name):
        return Path(name)
    folder = shared_trace_dir()
    if folder is None:
        raise ConfigError(f"trace {name!r} not found: no $PBF_TRACES and no ../shared/traces beside the checkout "
                          "pbf was imported from (set PBF_TRACES to the folder of the logs or pass the file)")
    path = folder / name
    if not path.exists():
        raise ConfigError(f"trace {name!r} not found in {folder} (set PBF_TRACES or pass the file)")
    return path
