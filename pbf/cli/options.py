"""Argument types and the flags several commands share: the cleaning of a trace (``replay``,
``trace info``), the modelled cost of a pass (``replay``, ``experiment parallel-backfill``) and
comma-separated worker counts."""
from __future__ import annotations

import argparse
from collections.abc import Callable

from ..bounded import INT64_MAX, MAX_SECONDS, MAX_UNITS, parse_real, parse_whole
from ..config import MAX_COUNT
from ..errors import ConfigError
from ..scheduler_time import MAX_COST_US

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from typing import Any

    from ..workload import Cleaning, JobTable

__all__ = ["int_in", "float_in", "positive_seconds", "positive_number", "seconds_from_0", "seconds_from_1",
           "count_from_0", "count_from_1", "micros", "swf_number", "reservations", "key_values", "worker_list",
           "add_cost_options", "cost_settings", "add_cleaning", "cleaning", "read_trace"]


def int_in(lo: int, hi: int = INT64_MAX) -> Callable[[str], int]:
    """An argparse type: a whole number from lo to hi (ASCII digits; argparse names the flag in its error)."""
    def parse(text: str) -> int:
        try:
            return parse_whole(text, lo, hi)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"expected {exc}, got {_shown(text)}") from None
    return parse


def float_in(lo: float, hi: float, what: str = "a number") -> Callable[[str], float]:
    """An argparse type: a finite number from lo to hi."""
    def parse(text: str) -> float:
        try:
            return parse_real(text, lo, hi)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} from {lo:g} to {hi:g}, got {_shown(text)}") from None
    return parse


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


def _positive(text: str, what: str) -> float:
    try:
        return parse_real(text, 0, MAX_SECONDS, lo_open=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} above 0 and at most {MAX_SECONDS:,}, "
                                         f"got {_shown(text)}") from None


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0 (at most 2**40)."""
    return _positive(text, "a number of seconds")


def positive_number(text: str) -> float:
    """An argparse type: a finite number > 0 (a ratio, a factor)."""
    return _positive(text, "a number")


#: an argparse type: whole seconds from 0 / from 1 to 2**40 (every time pbf schedules stays in 64 bits)
seconds_from_0, seconds_from_1 = int_in(0, MAX_SECONDS), int_in(1, MAX_SECONDS)
#: an argparse type: a count of jobs, passes or instants (Slurm's are 32-bit ints)
count_from_0, count_from_1 = int_in(0, MAX_COUNT), int_in(1, MAX_COUNT)
#: an argparse type: a modelled cost in microseconds (at most 1,000 s a step)
micros = int_in(0, MAX_COST_US)


def swf_number(text: str) -> int:
    """An SWF number (a partition, a queue): a whole number that fits in 64 bits."""
    return parse_whole(text, -INT64_MAX - 1, INT64_MAX)


def reservations(text: str) -> int | None:
    """An argparse type: reservations per pass, an int >= 0 or unlimited (None)."""
    if text in ("unlimited", "conservative", "inf"):
        return None
    try:
        return parse_whole(text, 0, MAX_COUNT)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected {exc} or 'unlimited', got {_shown(text)}") from None


def key_values(items: list[str] | None, flag: str, keys: Any = None,
               key_type: Callable[[str], Any] = str) -> dict[Any, float]:
    """``KEY=NUMBER`` items of a repeated flag as a dict (``keys``: the keys allowed)."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            key = key_type(key)
            out[key] = parse_real(value, -1e300, 1e300)
        except ValueError:
            raise ConfigError(f"{flag} {_shown(item)}: expected KEY=NUMBER (a finite number)") from None
        if keys is not None and key not in keys:
            raise ConfigError(f"{flag} {item!r}: KEY must be one of {', '.join(keys)}")
    return out


def worker_list(text: str) -> tuple[int, ...]:
    """``--workers 1,2,4,8``: the worker counts, each from 1 to 256."""
    try:
        workers = tuple(parse_whole(w, 1, 256) for w in text.split(","))
    except ValueError:
        raise ConfigError(f"--workers {_shown(text)}: expected comma-separated whole numbers from 1 to 256, "
                          "e.g. 1,2,4,8") from None
    if not workers or min(workers) < 1 or max(workers) > 256:
        raise ConfigError(f"--workers {text!r}: each count must be from 1 to 256")
    return workers


def add_cost_options(p: argparse.ArgumentParser, test_help: str, slot_help: str,
                     title: str = "the modelled cost of a pass (--clock model or slurm-sim; docs/engine.md)") -> None:
    """The modelled cost of a pass (docs/engine.md, Scheduler time): the same flags on replay and experiment."""
    g = p.add_argument_group(title)
    g.add_argument("--cost-per-test", type=float_in(0, 1e9, "microseconds"), default=None, metavar="US",
                   help=test_help + "; with --cost-power, the prefactor")
    g.add_argument("--cost-per-slot", type=micros, default=None, metavar="US", help=slot_help)
    g.add_argument("--cost-power", type=float_in(0.01, 4, "a power"), default=1.0, metavar="POW",
                   help="a worker's first n tests of a pass cost COST_PER_TEST x n^POW (the Slurm simulator's "
                        "bf_model; 1, the default: a constant cost per test); `pbf calibrate sdiag` fits it")
    g.add_argument("--cost-per-node", type=micros, default=0, metavar="US",
                   help="microseconds per node that could hold the tested job (node clusters; 0)")
    g.add_argument("--cost-per-reservation", type=micros, default=0, metavar="US",
                   help="microseconds per reservation the pass made before the test (0)")


def cost_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The cost flags as :class:`pbf.ReplayConfig` settings."""
    return dict(cost_per_test_us=args.cost_per_test, cost_per_slot_us=args.cost_per_slot,
                cost_power=args.cost_power, cost_per_node_us=args.cost_per_node,
                cost_per_reservation_us=args.cost_per_reservation)


def add_cleaning(p: argparse.ArgumentParser) -> None:
    """How a trace is read and cleaned (the PWA/pyss convention by default)."""
    g = p.add_argument_group("cleaning (defaults: the PWA/pyss convention)")
    g.add_argument("--units-from", choices=("max", "requested", "allocated"), default="max",
                   help="SWF field giving a job's units: max of requested and allocated (default)")
    runtime = g.add_mutually_exclusive_group()
    runtime.add_argument("--keep-nonpositive-runtime", action="store_true",
                         help="keep jobs with run time <= 0 (SWF: dropped by default; a sacct dump: also the jobs "
                              "that never started or had not ended at the dump, as zero-length jobs)")
    runtime.add_argument("--drop-zero-length", action="store_true",
                         help="drop the zero-length jobs of a sacct dump (jobs that started and ended in the same "
                              "second; kept by default, said in the output); SWF drops them by default")
    g.add_argument("--keep-nonpositive-units", action="store_true",
                   help="keep jobs asking for <= 0 units (dropped by default)")
    g.add_argument("--no-clip-runtime", action="store_true",
                   help="do not cut run times longer than the requested time")
    g.add_argument("--fill-missing-request", action="store_true", default=None,
                   help="use the run time as requested time where none is given (default: only when no "
                        "job of the trace has one, e.g. Lublin-model traces; said in the output)")
    g.add_argument("--oversize", choices=("reject", "drop"), default="reject",
                   help="jobs larger than the cluster: rejected by the engine (default) or dropped")
    g.add_argument("--units", type=int_in(1, MAX_UNITS), default=None,
                   help="cluster size in units (default: the header's MaxProcs, else MaxNodes)")
    g.add_argument("--skip-bad-lines", action="store_true",
                   help="skip malformed records (count and report them) instead of failing")
    g.add_argument("--sort", action="store_true",
                   help="sort jobs by submit time instead of failing on times that go backwards")


def cleaning(args: argparse.Namespace) -> Cleaning:
    """The :class:`pbf.Cleaning` the cleaning flags ask for."""
    from ..workload import Cleaning
    return Cleaning(units_from=args.units_from,
                    drop_nonpositive_runtime=False if args.keep_nonpositive_runtime else
                    (True if args.drop_zero_length else None),
                    drop_nonpositive_units=not args.keep_nonpositive_units,
                    clip_runtime_to_request=not args.no_clip_runtime,
                    fill_missing_request=args.fill_missing_request, oversize=args.oversize,
                    cluster_units=args.units)


def read_trace(args: argparse.Namespace) -> JobTable:
    """``args.trace`` read and cleaned as the cleaning flags say."""
    from ..workload import read_swf
    return read_swf(args.trace, cleaning(args), skip_bad_lines=args.skip_bad_lines, sort=args.sort)
