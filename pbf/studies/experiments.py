"""Experiments reproduced as one command: ``pbf experiment parallel-backfill``.

The Parallel Backfill paper (Riffel et al., PEARC'24, Tables 1 and 2) replays 100,000 Beocat jobs
submitted within one week (high traffic) and two weeks (low traffic) with Slurm's backfill and 1, 2, 4
and 8 worker threads, under Slurm 17.02's rule that a backfill pass stops after ``bf_interval``
seconds. pbf emulates that with the model clock: every job test costs a modelled time, N workers share
the pass's budget, so more workers test deeper into the queue in the same time.
"""
import time
from dataclasses import asdict, dataclass

from ..config import Backfill
from ..replayer import ReplayConfig, replay
from ..workload.beocat import TRAFFIC_WINDOWS, generate_beocat

__all__ = ["ParallelBackfillExperiment", "PAPER_TABLES", "format_tables"]

#: Riffel et al. 2024, Tables 1 and 2 (AWT, ART in hours; their "BSLD (Hours)" uses a 10-minute bound).
PAPER_TABLES = {
    "high": {1: (45.89, 50.61, 143.71), 2: (34.35, 39.05, 108.40), 4: (22.94, 27.63, 71.65),
             8: (17.12, 21.80, 52.82)},
    "low": {1: (1.68, 6.36, 4.84), 2: (1.39, 6.06, 3.77), 4: (1.37, 6.04, 3.79), 8: (1.38, 6.05, 3.76)},
}


@dataclass(frozen=True)
class ParallelBackfillExperiment:
    """The experiment's settings (defaults: the paper's datasets, Slurm 17.02 defaults, and DESIGN
    §4.6's modelled cost of a production controller's job test)."""
    jobs: int = 100_000
    workers: tuple = (1, 2, 4, 8)
    seed: int = 0
    bf_interval: int = 30
    bf_max_time: int | None = None
    cost_per_test_us: int = 10_000
    cost_per_slot_us: int = 20
    bsld_bound: float = 600.0

    def run(self, progress=None):
        """Replay both traffic levels with every worker count; returns a JSON-ready dict."""
        rows = []
        for traffic in ("high", "low"):
            table = generate_beocat(self.jobs, TRAFFIC_WINDOWS[traffic], seed=self.seed)
            for w in self.workers:
                cfg = ReplayConfig(units=9128, trigger="interval", bf_interval=self.bf_interval,
                                   clock="model", bf_max_time=self.bf_max_time, workers=w,
                                   cost_per_test_us=self.cost_per_test_us,
                                   cost_per_slot_us=self.cost_per_slot_us, bsld_bound=self.bsld_bound,
                                   backfill=Backfill(reservations=1))
                t0 = time.perf_counter()
                r = replay(table, cfg)
                m, p = r.summary["metrics"], r.summary["passes"]
                rows.append({"traffic": traffic, "workers": w, "awt_h": m["awt_h"], "art_h": m["art_h"],
                             "bsld": m["bsld"], "max_queue": m["max_queue"],
                             "mean_queue": m["mean_queue"], "mean_depth_full": p["mean_depth_full"],
                             "full_passes": p["full"], "budget_exits": p["exit_reasons"].get("time budget", 0),
                             "charged_s_mean_full": p["charged_s_mean_full"],
                             "wall_s": time.perf_counter() - t0,
                             "paper": dict(zip(("awt_h", "art_h", "bsld"), PAPER_TABLES[traffic].get(w, (None,) * 3)))})
                if progress:
                    progress(rows[-1])
        return {"experiment": "parallel-backfill", "settings": asdict(self), "rows": rows}


def format_tables(result):
    """The paper-shaped tables, pbf's figures beside the paper's."""
    out = []
    s = result["settings"]
    out.append(f"Parallel Backfill (Riffel et al. 2024), Beocat-like traces of {s['jobs']:,} jobs, EASY, "
               f"interval trigger {s['bf_interval']} s, model clock {s['cost_per_test_us']} us/test + "
               f"{s['cost_per_slot_us']} us/slot, budget {s['bf_max_time'] or s['bf_interval']} s, "
               f"BSLD bound {s['bsld_bound']:g} s")
    for traffic, title in (("high", "Table 1: high-job traffic (7 days)"),
                           ("low", "Table 2: low-job traffic (14 days)")):
        out.append(f"\n{title}")
        out.append(f"{'workers':>8} {'AWT h':>8} {'ART h':>8} {'BSLD':>8} {'max queue':>10} {'depth/pass':>11}"
                   f" | paper: {'AWT h':>7} {'ART h':>7} {'BSLD':>7}")
        for r in (r for r in result["rows"] if r["traffic"] == traffic):
            pa = r["paper"]
            paper = (f"{pa['awt_h']:7.2f} {pa['art_h']:7.2f} {pa['bsld']:7.2f}" if pa["awt_h"] is not None
                     else f"{'-':>7} {'-':>7} {'-':>7}")
            label = "1 (orig)" if r["workers"] == 1 else str(r["workers"])
            out.append(f"{label:>8} {r['awt_h']:8.2f} {r['art_h']:8.2f} {r['bsld']:8.2f} {r['max_queue']:10,} "
                       f"{r['mean_depth_full']:11.1f} |        {paper}")
    return "\n".join(out)
