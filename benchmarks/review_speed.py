"""Match review speed (issue 22): decisions reviewed per second at 0, 1 and 2 ply, with
one worker process and with two (both cores), on a long match.

    python benchmarks/review_speed.py [--ply 0 1 2] [--workers 1 2] [--match FILE]

The match is a 25-point match between two 0-ply Doublet engines with the cube
(benchmarks/data/selfplay25.mat, written by this script with --make from seed 25 when
missing). Each run reviews it without a cache (doublet.games.review.review); a decision
is a move (with its cube decision when the player had access to the cube) or an actual
double / take / pass. The baseline in the same run is one worker at the same ply; each
depth is first run untimed on one game, so that no timing holds a first use's costs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.core.files import atomic_open  # noqa: E402
from doublet.formats.matfile import read_match  # noqa: E402
from doublet.games.game import Series  # noqa: E402
from doublet.games.opponent import engine_step  # noqa: E402
from doublet.games.record import to_mat  # noqa: E402
from doublet.games.review import review  # noqa: E402

MATCH = ROOT / "benchmarks" / "data" / "selfplay25.mat"


def make(path: Path, length: int = 25, seed: int = 25) -> None:
    """A match between two 0-ply engines with the cube, written as .mat."""
    s = Series.new("standard", seed=seed, length=length, cube=True)
    while True:
        g = s.game
        while not g.over:
            engine_step(g, 0)
        if s.over:
            break
        s.next_game()
    with atomic_open(path, "w") as f:
        f.write(to_mat(s, ("doublet-a", "doublet-b")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--ply", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--match", default=str(MATCH))
    ap.add_argument("--make", action="store_true", help="write the match first")
    args = ap.parse_args()
    path = Path(args.match)
    if args.make or not path.exists():
        make(path)
    match, games = read_match(path.read_text())
    review(match, games[:1], 0)  # compile (or load) the kernels first
    n_moves = sum(len(g.moves) for g in games)
    print(f"{path.name}: {match.length}-point match, {len(games)} games, {n_moves} moves")
    print("| ply | workers | decisions | seconds | decisions/s | x one worker |")
    print("|---|---|---|---|---|---|")
    for ply in args.ply:
        base = None
        review(match, games[:1], ply)  # the first use of this depth's code paths, untimed
        for w in args.workers:
            t = time.perf_counter()
            doc = review(match, games, ply, workers=w)
            sec = time.perf_counter() - t
            n = sum(p["moves"] + p["cube_decisions"] for p in doc["players"])
            rate = n / sec
            base = base or rate
            print(f"| {ply} | {w} | {n} | {sec:.1f} | {rate:.1f} | {rate / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
