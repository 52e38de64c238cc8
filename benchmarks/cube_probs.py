"""Where the cube decisions' error comes from: the net's probabilities (issue 20's note).

    python benchmarks/cube_probs.py [--data PATH] [--positions 400] [--trials 1296] [--seed 8]

1. On the first N positions of gnubg_cube.jsonl: the mean and mean absolute difference
   of Doublet's 0/1/2-ply cubeless probabilities from gnubg's 2-ply ones (the data's
   ``cubeless2``), by position class.
2. On the contact positions where Doublet's 2-ply cubeful take decision differs from
   gnubg 2-ply's: Doublet's 2-ply probabilities and gnubg's, each against rollouts with
   Doublet's own 0-ply play (doublet.training.rollout.Rollout: to the end of contact,
   then the race net; stratified dice), the side on roll's view.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.cube import errors, state_of  # noqa: E402
from doublet.core.board import has_contact  # noqa: E402
from doublet.formats.ids import board_from_position_id  # noqa: E402
from doublet.nn.eval import default_model  # noqa: E402
from doublet.search.cubeful import cube_decision  # noqa: E402
from doublet.search.searcher import Limits, Searcher  # noqa: E402
from doublet.training.rollout import Rollout  # noqa: E402

NAMES = "win, win gammon, win backgammon, lose gammon, lose backgammon"


def _line(name: str, d: np.ndarray) -> str:
    mean, mad = np.round(d.mean(0), 4).tolist(), np.round(np.abs(d).mean(0), 4).tolist()
    return f"| {name} | {len(d)} | {mean} | {mad} |"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "refdata" / "gnubg_cube.jsonl"))
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--seed", type=int, default=8)
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    model = default_model()
    searcher = Searcher(model)

    print(f"Doublet's cubeless probabilities minus gnubg 2-ply's ({NAMES}), first {args.positions}")
    print("| what | n | mean difference | mean absolute difference |\n|---|---|---|---|")
    diffs: dict[str, list] = defaultdict(list)
    for r in rows[: args.positions]:
        b = board_from_position_id(r["pid"])
        g2 = np.array(r["cubeless2"]["probs"])
        for ply in (0, 1, 2):
            p = searcher.evaluate(b, Limits(ply=ply)).astype(float)
            diffs[f"Doublet {ply} ply"].append(p - g2)
            if ply == 2:
                diffs[f"Doublet 2 ply, {r['class']}"].append(p - g2)
    for name, d in diffs.items():
        print(_line(name, np.array(d)))

    rollout = Rollout(model)
    rng = np.random.default_rng(args.seed)
    ours, theirs = [], []
    for r in rows:
        b = board_from_position_id(r["pid"])
        if not has_contact(b):
            continue
        d = cube_decision(searcher, b, state_of(r), 2).decision
        assert d is not None
        _, take_error, _, _ = errors(d.no_double, d.double_take, d.double_pass, r["gnubg"]["2"])
        if take_error > 0:
            ro = rollout(b, args.trials, rng)
            ours.append(searcher.evaluate(b, Limits(ply=2)).astype(float) - ro)
            theirs.append(np.array(r["cubeless2"]["probs"]) - ro)
    print(f"\nOn the contact positions with a wrong 2-ply take: probabilities minus Doublet's "
          f"own {args.trials}-trial rollouts ({NAMES})")  # fmt: skip
    print("| what | n | mean difference | mean absolute difference |\n|---|---|---|---|")
    print(_line("Doublet 2 ply", np.array(ours)))
    print(_line("gnubg 2 ply", np.array(theirs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
