"""The ``pbf`` command line: :func:`main` runs it, :func:`build_parser` builds its parser.

Each command has a module of its own (:data:`pbf.cli.commands.COMMANDS`); :mod:`.options` holds the
flags several commands share and :mod:`.output` the one way every command prints results, JSON,
progress and the files it wrote. Command modules import the engine (and numpy) inside their
handlers, so that building the parser stays light (``pbf --help``).
"""
from . import process  # noqa: F401  (first: the process's start time and the thread limits)
from .commands import build_parser, main

__all__ = ["main", "build_parser"]
