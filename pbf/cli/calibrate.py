"""``pbf calibrate``: fit pbf's models to a site's own measurements (``sdiag``: the backfill cost)."""
from __future__ import annotations

import argparse

from .output import show

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``calibrate`` command's measurements and their options."""
    what = parser.add_subparsers(dest="what", required=True, metavar="WHAT")
    sd = what.add_parser("sdiag", help="the backfill cost pref x n^pow from saved sdiag outputs (docs/operations.md)",
                         description="Read the 'Backfilling stats' of one or more saved sdiag outputs (a file may "
                                     "hold many snapshots) and fit the Slurm simulator's cost model: a cycle of n "
                                     "tried jobs costs pref x n^pow microseconds. Prints the fit and the settings "
                                     "that charge it in pbf replay and pbf experiment. Snapshots taken before any "
                                     "backfill cycle ran (Total cycles: 0) are left out and counted.")
    sd.add_argument("files", nargs="+", metavar="FILE", help="saved sdiag outputs")
    sd.add_argument("--json", action="store_true")
    sd.set_defaults(func=run_sdiag)


def run_sdiag(args: argparse.Namespace) -> int:
    """``pbf calibrate sdiag``: the fit, and the replay flags that charge it."""
    from ..sdiag import fit_cost, read_sdiag
    snaps = read_sdiag(*args.files)
    fit = fit_cost(snaps)
    skipped = snaps.skipped
    first = snaps.skipped_at[0] if skipped else None
    flags = f"--cost-per-test {fit.settings()['cost_per_test_us']:g} --cost-power {fit.settings()['cost_power']:g}"

    def text() -> str:
        depths = [n for n, _ in fit.points]
        return "\n".join([
            f"sdiag        {len(snaps):,} snapshot(s) from {len(args.files)} file(s); {len(fit.points)} (tried jobs, "
            f"cycle time) points, {min(depths):,} to {max(depths):,} jobs tried",
            *([f"left out     {snaps.skipped:,} snapshot(s) taken before any backfill cycle ran (Total cycles: 0; "
               f"the first: {first[0]}, line {first[1]})"] if skipped else []),
            *([f"left out     the last-cycle points of {fit.mid_cycle_left_out:,} snapshot(s) taken while a cycle "
               "ran (their depth is the running cycle's, their time the cycle's before)"]
              if fit.mid_cycle_left_out else []),
            f"fit          a cycle of n tried jobs: {fit.pref_us:.4g} us x n^{fit.power:.3f} "
            + (f"(power standard error {fit.power_se:.3f}; " if fit.power_se is not None else "(")
            + f"rms relative error {100 * fit.rel_error:.1f}%)",
            "             " + "; ".join(f"{n:,} jobs: {fit.cycle_us(n) / 1000:.3g} ms" for n in (10, 100, 500)),
            f"replay with  --clock slurm-sim {flags}"])
    show(args, fit, text, {"snapshots": len(snaps), "skipped_before_any_cycle": skipped, "files": list(args.files),
                           "points": [list(p) for p in fit.points],
                           "pref_us": fit.pref_us, "power": fit.power, "power_se": fit.power_se,
                           "rel_error": fit.rel_error, "mid_cycle_left_out": fit.mid_cycle_left_out,
                           "settings": fit.settings(), "flags": flags})
    return 0
