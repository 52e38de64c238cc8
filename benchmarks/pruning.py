"""What the pruning net buys the search: decision time with and without it, same positions.

    python benchmarks/pruning.py [--variant standard|acey-deucey] [--model PATH]
                                 [--plies 1] [--positions 300] [--seed 3]

Positions: `--positions` drawn (seeded) from self-play games of the model's own net, each
with a random roll. For each ply: the median and mean time of `Searcher.best` (one
core, the position cache cleared before each decision) with the model as it is (its
pruning net, keep PRUNE_KEEP) and with the pruning net taken out (the baseline: every
reply scored by the main net), how often the two choose the same play, and the mean
equity the pruned choice gives up as the unpruned search values the plays.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.core.board import VARIANTS  # noqa: E402
from doublet.nn.eval import default_model, equity, load_model  # noqa: E402
from doublet.search.searcher import Limits, Searcher  # noqa: E402
from doublet.training.selfplay import SelfPlay  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=list(VARIANTS), default="standard")
    ap.add_argument("--model", help="model .npz (default: the variant's shipped model)")
    ap.add_argument("--plies", type=int, nargs="+", default=[1])
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    model = load_model(args.model) if args.model else default_model(VARIANTS[args.variant])
    if model.prune is None:
        raise SystemExit("error: the model has no pruning net (python -m doublet.training.prune)")
    bare = dataclasses.replace(model, prune=None)
    rng = np.random.default_rng(args.seed)
    sp = SelfPlay(model.variant)
    boards: list[np.ndarray] = []
    game = 0
    while len(boards) < args.positions:
        traj = sp.game(model.contact, model.race, args.seed, game)
        take = rng.choice(len(traj.boards), size=min(10, len(traj.boards)), replace=False)
        boards.extend(traj.boards[i] for i in take)
        game += 1
    boards = boards[: args.positions]
    dice = rng.integers(1, 7, size=(len(boards), 2))
    print(f"{args.variant}, {len(boards)} positions of {game} self-play games; "
          f"command: {' '.join(sys.argv)}")  # fmt: skip
    print(f"{'ply':>3} {'search':<18}{'median ms':>10}{'mean ms':>10}")
    for ply in args.plies:
        limits = Limits(ply=ply)
        chosen = {}
        for name, m in (("no pruning net", bare), ("pruning net", model)):
            s = Searcher(m)
            s.best(boards[0], 3, 1, limits)  # compile, load
            times, picks = [], []
            for b, (d1, d2) in zip(boards, dice, strict=True):
                s.clear_cache()
                t = time.perf_counter()
                picks.append(s.best(b, int(d1), int(d2), limits))
                times.append(time.perf_counter() - t)
            chosen[name] = picks
            print(f"{ply:>3} {name:<18}{1e3 * statistics.median(times):>10.3f}"
                  f"{1e3 * statistics.mean(times):>10.3f}", flush=True)  # fmt: skip
        s = Searcher(bare)
        lost = []
        for b, (d1, d2), i, j in zip(boards, dice, chosen["no pruning net"],
                                     chosen["pruning net"], strict=True):  # fmt: skip
            _, _, probs, _ = s.analyse(b, int(d1), int(d2), limits)
            e = equity(probs)
            lost.append(float(e[i] - e[j]))
        same = np.mean(np.array(chosen["no pruning net"]) == np.array(chosen["pruning net"]))
        print(f"{ply:>3} same play {same:.1%}; mean equity given up by pruning (as the "
              f"unpruned search values it): {np.mean(lost):.5f}")  # fmt: skip


if __name__ == "__main__":
    main()
