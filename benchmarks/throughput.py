"""Training throughput: the numba forward pass, and self-play games per second with learning.

    python benchmarks/throughput.py [--hidden 80] [--warmup 5000] [--games 5000]

Prints one table:
- positions evaluated per second by doublet.nn.eval.evaluate (encode + the hidden and output
  layers, batched in one numba call, one core) on a few thousand self-play positions;
- self-play games per second with TD(lambda) learning (doublet.training.train), in one process
  (workers=0) and with the two-core design (2 self-play processes + the learner).

The learning runs start from the same checkpoint, a net already trained for --warmup
games (games of an untrained net are two to three times longer than those of a trained
one, so an untrained start would understate the steady state), and play exactly the same
games: the trainer's schedule makes the run independent of the number of processes.
Rates are over the training loop (train_seconds), without the start of the processes;
CPU ms/game counts every process (on a shared machine the wall rate depends on what else
runs, CPU time per game much less: two free cores give about 2000 / (CPU ms/game)).
Goals (issue): >= 200,000 evals/s on one core; >= 100 games/s on two cores (h80).
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
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.nn.eval import evaluate  # noqa: E402
from doublet.training import configs  # noqa: E402
from doublet.training.selfplay import play_games  # noqa: E402
from doublet.training.train import Trainer  # noqa: E402


def eval_rate(model, boards: np.ndarray, repeat: int) -> float:  # type: ignore[no-untyped-def]
    evaluate(boards[:8], model)  # compile / load
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        evaluate(boards, model)
        best = min(best, time.perf_counter() - t)
    return len(boards) / best


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the worker processes, whose
    start-up is included: about a second each)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--config", default="td-h80")
    p.add_argument("--hidden", type=int, default=None, help="default: the config's")
    p.add_argument("--warmup", type=int, default=5000, help="games trained before timing")
    p.add_argument("--games", type=int, default=5000, help="games timed per run")
    p.add_argument("--positions", type=int, default=5000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    cfg = configs.get(args.config).replace(check_every=0, checkpoint_every=0)
    if args.hidden:
        cfg = cfg.replace(hidden=args.hidden)
    tmp = Path(tempfile.mkdtemp(prefix="throughput"))
    rows: list[tuple[str, str]] = []
    try:
        t0 = time.perf_counter()
        warm = Trainer(cfg.replace(workers=2), tmp / "warm", progress=False, log=lambda s: None)
        warm.run(args.warmup)
        warm_s = time.perf_counter() - t0
        model = warm.model()
        games = play_games(model, seed=99, indices=range(200))
        boards = np.concatenate([g.boards for g in games])[: args.positions]
        plies = np.mean([len(g) for g in games])
        rate = eval_rate(model, boards, args.repeat)
        rows.append(
            (f"evaluate(), h{cfg.hidden}, {len(boards)} positions, 1 core", f"{rate:,.0f} evals/s")
        )
        rows.append(
            (
                f"warm-up: {args.warmup} games from scratch, 2 workers",
                f"{args.warmup / warm_s:,.0f} games/s (wall, incl. start)",
            )
        )
        for w in (0, 2):
            t = Trainer.from_checkpoint(
                warm.checkpoint_path, tmp / f"w{w}", progress=False, log=lambda s: None
            )
            t.cfg = t.cfg.replace(workers=w)
            before = t.train_seconds
            cpu0 = _cpu()
            t.run(args.warmup + args.games)
            cpu = _cpu() - cpu0
            dt = t.train_seconds - before
            what = (
                "1 process (self-play + learner)"
                if w == 0
                else f"{w} self-play processes + learner"
            )
            rows.append(
                (
                    f"self-play + TD learning, h{cfg.hidden}, {what}",
                    f"{args.games / dt:,.0f} games/s, {1000 * cpu / args.games:.2f} CPU ms/game",
                )
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    import numba
    import torch

    print(f"command: python benchmarks/throughput.py {' '.join(sys.argv[1:])}".rstrip())
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(os.sched_getaffinity: {len(os.sched_getaffinity(0))}), Python "
        f"{platform.python_version()}, numba {numba.__version__}, torch {torch.__version__}"
    )
    print(
        f"config {cfg.name}: lambda {cfg.lam}, loss {cfg.loss}, block {cfg.block}, lag {cfg.lag}; "
        f"self-play games after warm-up: {plies:.0f} rolls on average"
    )
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>24}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
