"""Online TD(lambda) with eligibility traces against offline lambda-returns (doublet.training.td).

    python -m doublet.training.td_compare [--games 10000] [--hidden 80] [--check-games 1000]

Both learn from the same self-play games (same dice for game i, same initial weights,
same lambda, learning rate and loss) and are measured the same way: self-play games per
second with learning (over the whole run, and over its second half, where the games have
their trained length), CPU time per game (all processes), and strength against pubeval
after the same number of games (duplicate dice, one seed). Offline runs twice, in one
process (workers=0) and with two worker processes (workers=2); the schedule makes both
give the same net, so only the speed differs. Online TD(lambda) cannot be split across
processes (every roll changes the weights the next roll is played with), so it runs in
one.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence

from doublet.nn.encode import ENCODER_VERSION
from doublet.nn.eval import Model
from doublet.training import configs
from doublet.training.arena import strength

try:
    from doublet.training.td import OnlineTD
    from doublet.training.train import Trainer
except ModuleNotFoundError as e:  # run without torch: one line, not a traceback
    from doublet.training.usage import torch_missing

    torch_missing(__name__, e, "python -m doublet.training.td_compare")


def _cpu() -> float:
    """CPU seconds of this process and its finished children (worker processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m doublet.training.td_compare", description=__doc__)
    p.add_argument("--games", type=int, default=10_000)
    p.add_argument("--hidden", type=int, default=80)
    p.add_argument("--lam", type=float, default=0.7)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--loss", default="bce", choices=("mse", "bce"))
    p.add_argument("--check-games", type=int, default=1000)
    p.add_argument("--check-seed", type=int, default=7)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--skip", nargs="*", default=[], help="rows to skip: offline1 offline2 online")
    args = p.parse_args(argv)
    base = configs.get("td-h80").replace(
        hidden=args.hidden,
        lam=args.lam,
        lr=((0, args.lr),),
        loss=args.loss,
        seed=args.seed,
        check_every=0,
        checkpoint_every=0,
    )
    rows = []
    half = args.games // 2
    tmp = tempfile.mkdtemp(prefix="td_compare")
    try:
        for name, w in (("offline1", 0), ("offline2", 2)):
            if name in args.skip:
                continue
            t = Trainer(base.replace(workers=w), os.path.join(tmp, name), progress=False)
            t0, c0 = time.perf_counter(), _cpu()
            t.run(half)  # the same run as one call: the schedule does not see the split
            t1 = time.perf_counter()
            t.run(args.games)
            t2, cpu = time.perf_counter(), _cpu() - c0
            s = strength(t.model(), args.check_games, args.check_seed, base.variant)
            label = f"offline lambda-returns, {max(1, w)} process" + (
                f"es ({w} self-play + learner)" if w else ""
            )
            rows.append((label, t2 - t0, t2 - t1, cpu, s))
            print(label, f"{args.games / (t2 - t0):.0f} games/s;", s.line(), flush=True)
        if "online" not in args.skip:
            o = OnlineTD(args.hidden, args.lam, args.lr, base.variant, args.seed, args.loss)
            o.game(args.seed, 0)  # compile
            o = OnlineTD(args.hidden, args.lam, args.lr, base.variant, args.seed, args.loss)
            t0, c0 = time.perf_counter(), _cpu()
            for i in range(args.games):
                if i == half:
                    t1 = time.perf_counter()
                o.game(args.seed, i)
            t2, cpu = time.perf_counter(), _cpu() - c0
            net = o.play_net
            s = strength(
                Model(net, net, {"encoder_version": ENCODER_VERSION}),
                args.check_games,
                args.check_seed,
                base.variant,
            )
            label = "online TD(lambda) with traces, 1 process"
            rows.append((label, t2 - t0, t2 - t1, cpu, s))
            print(label, f"{args.games / (t2 - t0):.0f} games/s;", s.line(), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(f"command: python -m doublet.training.td_compare {' '.join(argv or sys.argv[1:])}")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    print(
        f"h{args.hidden}, lambda {args.lam}, lr {args.lr}, loss {args.loss}, "
        f"{args.games} games, strength vs pubeval over {args.check_games} games "
        f"(seed {args.check_seed})"
    )
    print(
        f"{'method':52s} {'games/s':>8s} {'2nd half':>8s} {'CPU ms/game':>11s} "
        f"{'ppg':>7s} {'se':>6s}"
    )
    for name, dt, dt2, cpu, s in rows:
        print(
            f"{name:52s} {args.games / dt:8.0f} {(args.games - half) / dt2:8.0f} "
            f"{1000 * cpu / args.games:11.2f} {s.ppg:+7.3f} {s.se:6.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
