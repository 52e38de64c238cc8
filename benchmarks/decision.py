"""Decision speed and accuracy of Doublet's search, judged by GNU Backgammon's 2-ply.

    python benchmarks/decision.py [--model PATH] [--plies 0 1 2] [--sample N] [--seed S]

For each ply, over the (position, roll) cases of tests/data/gnubg_refset.jsonl (all of
them, or a seeded sample of N): the median and mean time to choose a play (one core,
the search's position cache cleared before each decision), and the mean equity loss of
the chosen play judged by gnubg's 2-ply evaluations of its five best candidates (the
``best["2"]["top"]`` field: a play outside them is counted at the fifth candidate's
loss, and reported as a bound). Beside it, on the same cases and the same judge, gnubg's
own 0-ply choice. If the `gnubg` Python module is installed, gnubg's own decision time
is measured in the same run (optional).
Goals (issue 4): no slower than gnubg at each depth; Doublet's 2-ply loss below gnubg's
0-ply loss.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.board import flip  # noqa: E402
from engine.eval import default_model, load_model  # noqa: E402
from engine.ids import board_from_position_id, position_id  # noqa: E402
from engine.search import Limits, Searcher  # noqa: E402


def judge(case: dict, after: str) -> tuple[float, bool]:
    """(equity loss of the play leading to `after` by gnubg's 2-ply, outside the top 5)."""
    top = case["best"]["2"]["top"]
    best = top[0]["equity"]
    for cand in top:
        if cand["after"] == after:
            return best - cand["equity"], False
    if len(top) == case["n_legal"] or case["n_legal"] <= len(top):
        return 0.0, False  # cannot happen: every legal play is in the list
    return best - top[-1]["equity"], True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="model .npz (default: the shipped one)")
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--sample", type=int, default=0, help="cases per ply (0: all 3600)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    model = load_model(args.model) if args.model else default_model()
    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        cases = [json.loads(line) for line in f]
    cases = [c for c in cases if c["n_legal"] > 1]  # decisions only
    if args.sample:
        rng = np.random.default_rng(args.seed)
        idx = np.sort(rng.choice(len(cases), size=min(args.sample, len(cases)), replace=False))
        cases = [cases[i] for i in idx]
    gnubg0 = [judge(c, c["best"]["0"]["after"])[0] for c in cases]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; model {model.meta.get('games', '?')} games; "
          f"{len(cases)} decisions (cases with more than one legal play)")  # fmt: skip
    print(f"command: {' '.join(sys.argv)}")
    print(f"{'player':<22}{'median ms':>10}{'mean ms':>10}{'mean loss':>11}{'outside top 5':>15}")
    print(f"{'gnubg 0-ply (judge: 2)':<22}{'':>10}{'':>10}{np.mean(gnubg0):>11.4f}{0:>15}")
    s = Searcher(model)
    s.best(board_from_position_id(cases[0]["pid"]), *cases[0]["dice"])  # compile / load
    for ply in args.plies:
        times, losses, outside = [], [], 0
        for c in cases:
            b = board_from_position_id(c["pid"])
            s.clear_cache()
            t = time.perf_counter()
            boards, _, probs, plies = s.analyse(b, *c["dice"], Limits(ply=ply))
            eq = 2 * probs[:, 0] - 1 + probs[:, 1] - probs[:, 3] + probs[:, 2] - probs[:, 4]
            eq = np.where(plies == plies.max(), eq, -np.inf)
            i = int(np.argmax(eq))
            times.append(time.perf_counter() - t)
            loss, out = judge(c, position_id(flip(boards[i])))
            losses.append(loss)
            outside += out
        print(f"{f'Doublet {ply}-ply':<22}{1e3 * statistics.median(times):>10.2f}"
              f"{1e3 * statistics.mean(times):>10.2f}{np.mean(losses):>11.4f}"
              f"{outside:>15}")  # fmt: skip
    try:
        import gnubg  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        print("gnubg Python module not installed: its decision time is not measured here "
              "(pip install gnubg)")  # fmt: skip


if __name__ == "__main__":
    main()
