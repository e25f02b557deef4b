"""The ``pbf`` commands, the parser built from them, and the entry point.

Every command lives in a module of its own (:data:`COMMANDS`). The top parser knows each command by
its name and help line; a command's options are added only when it is the command run (or when the
whole parser is built), so that ``pbf --help`` and each command load no other command's code.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Iterable, Sequence

from .. import __version__
from ..errors import ConfigError, PbfError
from . import process

__all__ = ["COMMANDS", "build_parser", "main"]

#: command: (module with ``add_arguments(parser)``, the line ``pbf --help`` shows), in ``--help``'s order
COMMANDS = {
    "gen": ("pbf.cli.gen", "generate or transform workloads"),
    "replay": ("pbf.cli.replay", "replay a trace through the scheduler"),
    "sweep": ("pbf.cli.sweep", "run a grid of replays (local processes or a Ray cluster)"),
    "report": ("pbf.cli.report", "figures and report.html from a replay, a sweep or an experiment result"),
    "list": ("pbf.cli.list", "the priority functions, predictors, corrections, orders and presets"),
    "bench": ("pbf.cli.bench", "microbenchmarks of passes, kernels and replays"),
    "experiment": ("pbf.cli.experiment", "reproduce a paper's experiment"),
    "calibrate": ("pbf.cli.calibrate", "fit pbf's models to a site's own measurements"),
    "train": ("pbf.cli.train", "train a learned policy (needs the rl extra and torch)"),
    "trace": ("pbf.cli.trace", "inspect traces, convert Slurm accounting dumps"),
    "validate": ("pbf.validate.command", "compare pbf with a real scheduler, job by job"),
}


def _one_line_error(parser: argparse.ArgumentParser, message: str) -> None:
    parser.exit(2, f"pbf: error: {message} (`{parser.prog} --help` lists the options)\n")


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (and with it bz2, lzma, fnmatch:
    about 2 ms of a replay's start): ``$COLUMNS``, else the terminal's width, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class _Parser(argparse.ArgumentParser):
    """argparse whose refusals are one line with one prefix, ``pbf: error: ...``, and where the options
    are listed (not the whole usage, which runs to dozens of lines for ``replay``)."""
    error = _one_line_error

    def _get_formatter(self: _Parser) -> argparse.HelpFormatter:
        # argparse's formatter takes the width shutil gives, for every option add_argument checks
        return self.formatter_class(prog=self.prog, width=_columns() - 2)

    def parse_known_args(self: _Parser, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(namespace, "_pbf_prog"):
            namespace._pbf_prog = self.prog      # the innermost command that left them (it parses first)
        return namespace, extras

    def parse_args(self: _Parser, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        namespace, extras = self.parse_known_args(args, namespace)
        prog = getattr(namespace, "_pbf_prog", self.prog)
        if hasattr(namespace, "_pbf_prog"):
            del namespace._pbf_prog
        if extras:
            self.exit(2, f"pbf: error: unrecognized arguments: {' '.join(extras)} "
                         f"(`{prog} --help` lists the options)\n")
        return namespace


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The ``pbf`` parser with the options of ``commands`` (default: every command's); the others
    keep their name and help line."""
    parser = _Parser(prog="pbf", description="Parallel-backfill HPC scheduler engine.")
    parser.add_argument("--version", action="version", version=f"pbf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    filled = set(COMMANDS if commands is None else commands)
    for name, (module, help_line) in COMMANDS.items():
        command = sub.add_parser(name, help=help_line)
        if name in filled:
            importlib.import_module(module).add_arguments(command)
    return parser


def _command_named(argv: Sequence[str]) -> list[str]:
    """The command ``argv`` runs (its first word that is not an option), if it is one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return [first] if first in COMMANDS else []


def _check_output_names(args: argparse.Namespace) -> None:
    """Refuse an empty ``--out``/``-o`` (which would silently mean "no output") and the file system's root
    as an output folder, before anything runs."""
    for name, flag in (("out", "--out"), ("output", "-o/--output")):
        value = getattr(args, name, None)
        if not isinstance(value, str):
            continue
        if not value.strip():
            raise ConfigError(f"{flag}: got an empty name, expected a folder or file name")
        if os.path.realpath(value) == os.path.realpath(os.sep):
            raise ConfigError(f"{flag} {value!r}: pbf does not write into the root of the file system; "
                              "give a folder of its own")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pbf`` with ``argv``; returns the exit status. Without ``argv`` (the ``pbf`` command,
    ``python -m pbf``) the process's arguments are run and the process is taken to end with them: the
    objects left are then frozen out of the garbage collector (``gc.freeze``), so that Python's exit
    does not make full collections over every loaded module's objects (about 12 ms of a small replay's
    0.2 s); exit handlers still run, and every file pbf writes is closed before."""
    if argv is not None:
        return _main(list(argv))
    process.hold_collector()        # (until the command's work begins: process.release_collector)
    process.untranslated_argparse()
    try:
        status = _main(sys.argv[1:])
    finally:
        process.release_collector()
    gc.freeze()
    return status


#: the commands that hand the collector back themselves, when their long work begins
_RELEASE_LATE = {"replay"}


def _main(argv: list[str]) -> int:
    args = build_parser(_command_named(argv)).parse_args(argv)
    if getattr(args, "command", None) not in _RELEASE_LATE:
        process.release_collector()
    try:
        _check_output_names(args)
        status = args.func(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # the reader went away (`pbf list | head -1`): stop quietly, as Unix tools do, and keep
        # Python from failing again when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except PbfError as exc:
        print(f"pbf: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        # files and folders the user named: missing, a folder where a file is meant, no permission,
        # no space left
        where = f": {exc.filename}" if exc.filename else ""
        print(f"pbf: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
