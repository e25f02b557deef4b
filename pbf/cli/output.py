"""The one way the commands speak. Results go to stdout: text, or JSON with ``--json``; progress and
notes go to stderr and are silenced by ``--quiet``; result files go only where ``--out`` says."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from typing import Any, TextIO


__all__ = ["note", "progress", "show", "write_json", "conclude"]


def note(args: argparse.Namespace, text: str, stream: TextIO | None = None) -> None:
    """``text`` on ``stream`` (default stderr), unless the command runs with ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr if stream is None else stream)


def progress(args: argparse.Namespace, line: Callable[[dict], str]) -> Callable[[dict], None]:
    """A progress callback for a study: each row it reports as ``line(row)`` on stderr, unless ``--quiet``."""
    def report(row: dict) -> None:
        note(args, line(row))
    return report


def show(args: argparse.Namespace, result: Any, text: Callable[[], str], json_view: Any = None) -> None:
    """Print a result: ``text()``, or with ``--json`` the result (or ``json_view``, the part of it
    worth printing) as JSON."""
    if args.json:
        import json  # (only when asked for: a replay's start-up does without it)
        print(json.dumps(result if json_view is None else json_view, indent=2))
    else:
        print(text())


def write_json(path: str, result: Any, indent: int = 2) -> None:
    """``result`` as JSON into the file ``path``."""
    import json
    with open(path, "w") as fh:
        json.dump(result, fh, indent=indent)


def conclude(args: argparse.Namespace, result: Any, text: Callable[[], str], *, json_view: Any = None,
             write: Callable[[Any, str], Sequence[str]] | None = None, indent: int = 2) -> int:
    """The end of an experiment: with ``--out``, the result written there -- as one JSON file, or by
    ``write(result, out)`` (a folder of files, named on stderr) -- and the result shown (:func:`show`).
    Returns the exit status 0."""
    if args.out and write is None:
        write_json(args.out, result, indent)
    show(args, result, text, json_view)
    if args.out and write is not None:
        files = write(result, args.out)
        note(args, "wrote " + ", ".join(files))
    return 0
