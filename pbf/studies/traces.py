"""Where the real archive logs are: the one lookup the studies, the benchmarks and the tests share.

The logs are never copied into the repository. They are found in ``$PBF_TRACES`` if it is set, else
in ``../shared/traces`` next to the working directory, else next to the repository this package was
imported from.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError

__all__ = ["shared_trace_dir", "shared_trace"]


def shared_trace_dir() -> Path | None:
    """The folder of the real logs (a :class:`~pathlib.Path`), or None when none is found."""
    env = os.environ.get("PBF_TRACES")
    if env:
        return Path(env)
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        cand = base.parent / "shared" / "traces"
        if cand.is_dir():
            return cand
    return None


def shared_trace(name: str | os.PathLike) -> Path:
    """The path of the real log ``name`` (a file name in that folder, or a path that exists);
    raises :class:`~pbf.ConfigError` saying where it looked when it is not there."""
    if os.path.exists(name):
        return Path(name)
    folder = shared_trace_dir()
    if folder is None:
        raise ConfigError(f"trace {name!r} not found: no $PBF_TRACES and no ../shared/traces "
                          "(set PBF_TRACES to the folder of the logs or pass the file)")
    path = folder / name
    if not path.exists():
        raise ConfigError(f"trace {name!r} not found in {folder} (set PBF_TRACES or pass the file)")
    return path
