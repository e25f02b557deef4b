"""``pbf train``: train a learned policy (``job-selection``, ``backfilling``; needs the rl extra and torch)."""
from __future__ import annotations

import argparse
import os

from .options import int_in
from .output import note

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``train`` command's policies and their options."""
    what = parser.add_subparsers(dest="train_cmd", metavar="POLICY")
    what.required = True
    js = what.add_parser("job-selection", help="RLScheduler's job selection: MaskablePPO with the kernel policy")
    _add_common(js, 1e-3, 1.0, 1024)
    js.add_argument("--metric", choices=("bsld", "wait", "turnaround", "utilisation", "slowdown"), default="bsld")
    js.add_argument("--backfill", action="store_true", help="backfill while the picked job waits")
    js.add_argument("--skip", action="store_true", help="add the skip (wait) action")
    js.add_argument("--compat", action="store_true", help="RLScheduler's rules and quirks (docs/rl.md)")
    js.add_argument("--filter", choices=("none", "absolute", "quantile"), default="none",
                    help="RLScheduler's trajectory filter on the window's SJF metric: absolute (10, 150) or "
                         "quantile (median, 2 x mean)")
    js.add_argument("--reward-scale", choices=("sjf", "f1", "none"), default="sjf",
                    help="divide the terminal reward by the window's SJF (default) or F1 metric, or not at all")
    js.add_argument("--hold-apart", type=int_in(0), default=0, metavar="N",
                    help="draw no training window that touches the 10 held-out windows or the N validation "
                         "windows `python -m pbf.rl.select --validation-windows N` chooses on (0: off)")
    js.add_argument("--filter-epochs", type=int_in(1), default=None,
                    help="filter only during the first N epochs, then train on every window")
    js.add_argument("--warm-start", choices=("none", "f1", "sjf"), default="none",
                    help="before PPO, clone F1's or SJF's pick (docs/rl.md, warm start)")
    bf = what.add_parser("backfilling", help="RLBackfilling's learned backfilling: MaskablePPO with the kernel "
                                             "policy over the backfill candidates")
    _add_common(bf, 1e-3, 1.0, 512)
    bf.add_argument("--head", choices=("fcfs", "sjf", "wfp3", "f1", "largest"), default="fcfs",
                    help="base priority of the head job (fcfs)")
    bf.add_argument("--guarded", action="store_true",
                    help="candidates must end before the head's shadow time (default: any job that fits now)")
    bf.add_argument("--relax", type=float, default=0.0, help="shadow window relaxation x expected wait (0)")
    bf.add_argument("--compat", action="store_true", help="RLBackfilling's trace loading and quirks (docs/rl.md)")
    bf.add_argument("--warm-start", choices=("none", "sjbf"), default="none",
                    help="before PPO, clone EASY-SJBF's choice (shortest candidate, never stop): sjbf")


def _add_common(p: argparse.ArgumentParser, lr: float, gae_lambda: float, batch_size: int) -> None:
    p.add_argument("--trace", required=True, help="SWF trace to draw training windows from")
    p.add_argument("--out", help="output folder (default train-<trace>)")
    p.add_argument("--name", help="the model's name (default: the output folder's)")
    p.add_argument("--epochs", type=int_in(1), default=40, help="epochs: rollouts + updates (40)")
    p.add_argument("--trajectories", type=int_in(1), default=100, help="windows per epoch (100)")
    p.add_argument("--window", type=int_in(2), default=256, help="jobs per window (256)")
    p.add_argument("--slice", type=int_in(1), default=None, help="draw windows from the first N jobs only")
    p.add_argument("--envs", type=int_in(1), default=8, help="windows stepped together (8)")
    p.add_argument("--seed", type=int_in(0), default=0)
    p.add_argument("--lr", type=float, default=lr, help=f"Adam learning rate ({lr:g})")
    p.add_argument("--gae-lambda", type=float, default=gae_lambda, help=f"GAE lambda ({gae_lambda:g})")
    p.add_argument("--max-grad-norm", type=float, default=10.0, help="gradient-norm cap (10)")
    p.add_argument("--ppo-epochs", type=int_in(1), default=10, help="passes over each rollout (10)")
    p.add_argument("--ent-coef", type=float, default=0.0, help="entropy bonus coefficient (0)")
    p.add_argument("--batch-size", type=int_in(2), default=batch_size, help=f"minibatch size ({batch_size})")
    p.add_argument("--checkpoint-every", type=int_in(0), default=5, help="epochs between checkpoints (5; 0: none)")
    p.add_argument("--threads", type=int_in(1), default=1, help="torch threads (1)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train the policy, a progress bar per epoch on stderr; the model and its records go to ``--out``."""
    from ..rl.train import TrainConfig, train_backfilling, train_job_selection
    out = args.out or f"train-{os.path.basename(args.trace).split('.swf')[0]}"
    backfilling = args.train_cmd == "backfilling"
    common = dict(epochs=args.epochs, trajectories=args.trajectories, window=args.window, slice_jobs=args.slice,
                  envs=args.envs, seed=args.seed, learning_rate=args.lr, gae_lambda=args.gae_lambda,
                  max_grad_norm=args.max_grad_norm, ppo_epochs=args.ppo_epochs, batch_size=args.batch_size,
                  ent_coef=args.ent_coef,
                  checkpoint_every=args.checkpoint_every, threads=args.threads, name=args.name)
    if backfilling:
        cfg = TrainConfig(args.trace, out, compat="rlbackfilling" if args.compat else None, head=args.head,
                          guarded=args.guarded, relax=args.relax, reward_scale="none",
                          warm_start=args.warm_start, **common)
        base = "EASY-SJBF"
    else:
        cfg = TrainConfig(args.trace, out, metric=args.metric, backfill=args.backfill, skip=args.skip,
                          compat="rlscheduler" if args.compat else None, window_filter=args.filter,
                          filter_epochs=args.filter_epochs, reward_scale=args.reward_scale,
                          warm_start=args.warm_start, hold_apart=args.hold_apart, **common)
        base = "SJF"
    metric = "bsld" if backfilling else args.metric

    def progress(epoch: int, total: int, row: list) -> None:
        left = row[6] / epoch * (total - epoch)
        bar = "#" * (20 * epoch // total) + "-" * (20 - 20 * epoch // total)
        note(args, f"  [{bar}] epoch {epoch}/{total}: {row[2]} windows, mean {metric} {row[3]:.2f} "
                   f"({base} {row[4]:.2f}, ratio {row[5]:.3f}); {row[6]:.0f} s, ~{left / 60:.0f} min left")
    (train_backfilling if backfilling else train_job_selection)(cfg, progress)
    print(f"wrote {os.path.join(out, 'model.npz')} (and training.csv, training.png, config.json, checkpoints/)")
    return 0
