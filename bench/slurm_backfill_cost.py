"""Slurm's own backfill cost at Beocat's size, measured on a real Slurm (issue 54, items 1 and 2).

Runs a real Slurm 22.05 (root; in a private network namespace, as ``pbf validate slurm`` does) with the
built-in Beocat cluster's 299 nodes (memory and GPUs; ``select/cons_tres``, ``sched/backfill``), one
``slurmd`` per node, a few hundred running jobs filling every node, and queues of pending jobs grown to
each depth; for each depth and ``bf_max_job_test`` it samples ``sdiag`` every few seconds into
``OUT/d{depth}-t{test}/sdiag-NNN.txt`` (with the machine's load in ``samples.csv``), then fits pbf's cost
model through ``pbf calibrate sdiag``'s functions and prints a table (``OUT/summary.json``,
``OUT/table.md``).

    # (as root; a built copy of pbf on PYTHONPATH) the runs of issue 54:
    PYTHONPATH=. python bench/slurm_backfill_cost.py --out /work/measure54/run1 --depths 1000 --min-s 180 --max-s 300
    PYTHONPATH=. python bench/slurm_backfill_cost.py --out /work/measure54/run2 --depths 1000 10000 50000 \
        --min-s 180 --max-s 420
    PYTHONPATH=. python bench/slurm_backfill_cost.py --out /work/measure54/run3-100nodes --max-nodes 100 \
        --depths 1000 10000 --min-s 150 --max-s 360
    PYTHONPATH=. python bench/slurm_backfill_cost.py --analyse /work/measure54/run1 /work/measure54/run2 \
        /work/measure54/run3-100nodes --out /work/measure54/summary
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys

import numpy as np

from pbf.validate.scale import (
    UNLIMITED_TEST,
    case_figures,
    fit_depth_and_queue,
    fit_folder,
    fit_points,
    measure,
    sdiag_files,
)


def _cases(folders):
    out = []
    for f in folders:
        out += sorted(d for d in glob.glob(os.path.join(f, "d*-t*")) if os.path.exists(os.path.join(d, "samples.csv")))
    return out


def _depth_key(case_dir):
    name = os.path.basename(case_dir)
    d, t = name[1:].split("-t")
    return int(d), (UNLIMITED_TEST if t == "unl" else int(t))


def analyse(folders, out=None):
    cases = _cases(folders)
    rows, all_files, end_files = [], [], []
    for c in cases:
        fig = case_figures(c)
        files = sdiag_files(c)
        fit = fit_folder(files)
        fig["fit"] = {k: v for k, v in fit.items() if k not in ("usable", "points")}
        fig["depth"], fig["max_job_test"] = _depth_key(c)
        fig["run"] = os.path.basename(os.path.dirname(c))
        res = os.path.join(os.path.dirname(c), "result.json")
        if os.path.exists(res):
            with open(res) as fh:
                r = json.load(fh)
            rec = next((x for x in r.get("cases", []) if x["name"] == os.path.basename(c)), {})
            q = rec.get("queue_before", {})
            fig["running"], fig["pending"] = q.get("RUNNING"), q.get("PENDING")
            fig["nodes"] = r.get("nodes")
            fig["slurmd_mode"] = r.get("slurmd_mode")
        rows.append(fig)
        all_files += fit.get("usable", [])
        end_files += fig["cycle_end_files"]
    # pbf's fit over every snapshot it reads (the naive series: snapshots taken during a cycle pair one
    # cycle's depth with another's time), and over the snapshots taken just after a cycle ended
    naive = fit_folder(all_files) if all_files else {}
    overall = fit_folder(end_files) if end_files else {}
    cpu_fit = fit_points([(c[0], c[1] * 1e6) for f in rows for c in f["cpu_points"]])
    two = {"sdiag_wall": fit_depth_and_queue([(c[0], c[3], c[1]) for f in rows for c in f["points"]]),
           "thread_cpu": fit_depth_and_queue([(c[0], c[2], c[1] * 1e6) for f in rows for c in f["cpu_points"]])}
    # the CLI itself, on every raw file (to show what it says) and on the usable ones
    raw = [f for c in cases for f in sdiag_files(c)]
    cli = {}
    for label, files in (("raw", raw), ("usable", all_files), ("cycle_ends", end_files)):
        if not files:
            continue
        r = subprocess.run([sys.executable, "-m", "pbf", "calibrate", "sdiag", *files], capture_output=True, text=True)
        cli[label] = {"exit": r.returncode, "stdout": r.stdout.strip(), "stderr": r.stderr.strip()[-2000:]}
    lines = ["| run | depth (pending) | running | nodes | bf_max_job_test | cycles | mean cycle (ms) | "
             "max cycle (ms) | mean tried | cost per test (us) | backfill thread CPU per test (us) | "
             "load1 mean (max) | machine busy % | slurmctld CPU % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in rows:
        t = "unlimited" if f["max_job_test"] >= UNLIMITED_TEST else str(f["max_job_test"])
        def n(x, fmt):
            return "-" if x is None else format(x, fmt)
        lines.append(f"| {f['run']} | {f['depth']:,} ({n(f.get('pending'), ',')}) | {n(f.get('running'), ',')} | "
                     f"{n(f.get('nodes'), 'd')} | {t} | {f['cycles_seen']} | {n(f['mean_cycle_ms'], '.1f')} | "
                     f"{n(f['max_cycle_ms'], '.1f')} | {n(f['mean_tried'], ',.0f')} | {n(f['us_per_test'], ',.0f')} "
                     f"± {n(f['us_per_test_sd'], ',.0f')} | {n(f.get('cpu_us_per_test'), ',.0f')} | "
                     f"{n(f['load1_mean'], '.2f')} ({n(f['load1_max'], '.2f')}) | "
                     f"{n(f['machine_busy_pct'], '.0f')} | {n(f['slurmctld_cpu_pct'], '.0f')} |")
    text = "\n".join(lines)
    if naive.get("pref_us"):
        text += (f"\n\nnaive fit over every readable snapshot ({naive['snapshots']}; {len(naive['points'])} points, "
                 f"{min(p[0] for p in naive['points']):,} to {max(p[0] for p in naive['points']):,} jobs tried): "
                 f"{naive['pref_us']:.4g} us x n^{naive['power']:.3f} (power s.e. {naive['power_se']:.3f}; "
                 f"rms relative error {100 * naive['rel_error']:.1f}%)")
    if overall.get("pref_us"):
        text += (f"\nfit over the snapshots just after a cycle ended, {overall['snapshots']} snapshots "
                 f"({len(overall['points'])} points, "
                 f"{min(p[0] for p in overall['points']):,} to {max(p[0] for p in overall['points']):,} jobs tried): "
                 f"{overall['pref_us']:.4g} us x n^{overall['power']:.3f} (power s.e. {overall['power_se']:.3f}; "
                 f"rms relative error {100 * overall['rel_error']:.1f}%)")
    if cpu_fit:
        text += (f"\nthe backfill thread's CPU time per cycle ({cpu_fit['points']} cycles): "
                 f"{cpu_fit['pref_us']:.4g} us x "
                 f"n^{cpu_fit['power']:.3f} (power s.e. {cpu_fit['power_se']:.3f}; rms relative error "
                 f"{100 * cpu_fit['rel_error']:.1f}%)")
    # pbf's fit at each queue depth (both bf_max_job_test values together): the model pbf charges has the
    # tried jobs alone, so each depth gets its own pref and power
    by_depth = {}
    for f in rows:
        by_depth.setdefault((f.get("nodes"), f["depth"]), []).extend(f["cycle_end_files"])
    per_depth = {}
    for (nodes, depth), files in sorted(by_depth.items(), key=lambda x: (x[0][0] or 0, x[0][1])):
        fit = fit_folder(files)
        if fit.get("pref_us"):
            per_depth[f"{nodes} nodes, {depth} pending"] = {k: fit[k] for k in ("pref_us", "power", "power_se",
                                                                                   "rel_error", "snapshots")}
            text += (f"\npbf's fit at {depth:,} pending on {nodes} nodes ({fit['snapshots']} snapshots after a cycle "
                     f"ended): {fit['pref_us']:.4g} us x n^{fit['power']:.3f} (power s.e. {fit['power_se']:.3f}; "
                     f"rms relative error {100 * fit['rel_error']:.1f}%)")
    # and with the running jobs (the nodes with them: 100 nodes hold 160, 299 hold 425) when they vary
    three = {}
    for label, key, scale in (("sdiag_wall", "points", 1.0), ("thread_cpu", "cpu_points", 1e6)):
        pts = []
        for f in rows:
            for c in f[key]:
                n, t, q = (c[0], c[1], c[3]) if key == "points" else (c[0], c[1] * scale, c[2])
                if n > 0 and q > 0 and t > 0 and f.get("running"):
                    pts.append((n, q, f["running"], t))
        if len(pts) > 5 and len({p[2] for p in pts}) > 1:
            X = np.column_stack([np.ones(len(pts))] + [np.log([p[i] for p in pts]) for i in range(3)])
            y = np.log([p[3] for p in pts])
            beta, *_ = np.linalg.lstsq(X, y, rcond=None)
            resid = y - X @ beta
            se = np.sqrt(np.diag(float(resid @ resid) / max(1, len(pts) - 4) * np.linalg.pinv(X.T @ X)))
            three[label] = {"pref_us": float(np.exp(beta[0])), "p_tried": float(beta[1]), "p_tried_se": float(se[1]),
                            "q_queue": float(beta[2]), "q_queue_se": float(se[2]), "r_running": float(beta[3]),
                            "r_running_se": float(se[3]), "rms_log": float(np.sqrt(resid @ resid / len(pts))),
                            "points": len(pts)}
            f3 = three[label]
            text += (f"\n{label}, on tried jobs, queue and running jobs: t = {f3['pref_us']:.4g} us x "
                     f"tried^{f3['p_tried']:.3f} (s.e. {f3['p_tried_se']:.3f}) x "
                     f"queue^{f3['q_queue']:.3f} (s.e. {f3['q_queue_se']:.3f}) x running^{f3['r_running']:.3f} (s.e. "
                     f"{f3['r_running_se']:.3f}); rms log error {f3['rms_log']:.3f} over {f3['points']} cycles")
    for label, f in two.items():
        if f:
            text += (f"\n{label}, on tried jobs and queue: t = {f['pref_us']:.4g} us x tried^{f['p_tried']:.3f} "
                     f"(s.e. {f['p_tried_se']:.3f}) x "
                     f"queue^{f['q_queue']:.3f} (s.e. {f['q_queue_se']:.3f}); rms log error {f['rms_log']:.3f} over "
                     f"{f['points']} cycles")
    summary = {"per_depth": per_depth, "two_variable": two, "three_variable": three, "cases": rows,
               "fit": {k: v for k, v in overall.items() if k != "usable"},
               "naive_fit": {k: v for k, v in naive.items() if k != "usable"}, "cpu_fit": cpu_fit,
               "cli": cli}
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "summary.json"), "w") as fh:
            json.dump(summary, fh, indent=1, default=str)
        with open(os.path.join(out, "table.md"), "w") as fh:
            fh.write(text + "\n")
    print(text)
    for label, c in cli.items():
        print(f"\npbf calibrate sdiag ({label} files): exit {c['exit']}\n{c['stdout']}{c['stderr'][-600:]}")
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="the folder of the raw outputs (e.g. /work/measure54/run1)")
    ap.add_argument("--depths", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--tests", type=int, nargs="+", default=[500, UNLIMITED_TEST],
                    help=f"bf_max_job_test values ({UNLIMITED_TEST:,}: unlimited)")
    ap.add_argument("--cluster", default="beocat-gpu")
    ap.add_argument("--max-nodes", type=int, default=None)
    ap.add_argument("--min-s", type=float, default=240, help="each case lasts at least this")
    ap.add_argument("--max-s", type=float, default=600, help="and at most this (with --min-cycles cycles)")
    ap.add_argument("--min-cycles", type=int, default=6)
    ap.add_argument("--sample-s", type=float, default=3.0)
    ap.add_argument("--no-poke", action="store_true")
    ap.add_argument("--extra-params", default="", help="more SchedulerParameters (e.g. bf_interval=30)")
    ap.add_argument("--analyse", nargs="+", metavar="FOLDER", help="only analyse earlier outputs")
    args = ap.parse_args(argv)
    if args.analyse:
        analyse(args.analyse, args.out)
        return 0
    if not args.out:
        ap.error("--out is needed")
    result = measure(args.out, args.depths, args.tests, cluster=args.cluster, max_nodes=args.max_nodes,
                     min_s=args.min_s, max_s=args.max_s, min_cycles=args.min_cycles, sample_s=args.sample_s,
                     poke=not args.no_poke, extra_params=args.extra_params)
    print(f"slurmd mode: {result.get('slurmd_mode')}; {result.get('running_jobs')} running jobs; errors: "
          f"{result.get('errors')}", file=sys.stderr)
    analyse([args.out], args.out)
    return 0 if not result.get("errors") else 1


if __name__ == "__main__":
    sys.exit(main())
