"""Match review against GNU Backgammon's own analysis of the same matches (issue 22).

    python benchmarks/review.py [--ply 0 2] [--dir tests/data/matches]

For each match of the folder (``matchNN.mat`` with gnubg's ``matchNN.stats.txt``, its
`analyse match` at 2 ply): per player, Doublet's unforced moves, checker-play error rate
and overall error rate (mEMG) at each ply (doublet.games.review) beside gnubg's, whether
the two rank the players alike, and the time per decision.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.formats.matfile import read_match  # noqa: E402
from doublet.games.review import review  # noqa: E402


def gnubg_stats(text: str) -> dict[str, tuple[float, float]]:
    def pair(section: str, row: str) -> tuple[float, float]:
        part = text.split(section, 1)[1]
        m = re.search(
            re.escape(row) + r"\s+(-?[\d.]+)(?:\s+\(\s*[-+]?[\d.]+%\))?\s+(-?[\d.]+)", part
        )
        assert m, row
        return abs(float(m.group(1))), abs(float(m.group(2)))

    return {
        "unforced": pair("Chequerplay statistics", "Unforced moves"),
        "checker": pair("Chequerplay statistics", "Error rate mEMG (MWC)"),
        "overall": pair("Overall statistics", "Error rate mEMG (MWC)"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ply", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--dir", default=str(ROOT / "tests" / "data" / "matches"))
    args = ap.parse_args()
    print("| match | ply | unforced (Doublet / gnubg) | checker mEMG p0, p1 (gnubg) "
          "| overall mEMG p0, p1 (gnubg) | same order | ms a decision |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    agree = total = 0
    for path in sorted(Path(args.dir).glob("*.mat")):
        g = gnubg_stats(path.with_suffix(".stats.txt").read_text())
        m, games = read_match(path.read_text())
        for ply in args.ply:
            t = time.perf_counter()
            doc = review(m, games, ply)
            seconds = time.perf_counter() - t
            p = doc["players"]
            n = sum(x["moves"] + x["cube_decisions"] for x in p)
            mine = [x["error_rate_memg"] for x in p]
            same = (mine[0] < mine[1]) == (g["overall"][0] < g["overall"][1])
            agree += same
            total += 1
            print(f"| {path.stem} | {ply} | {p[0]['unforced_moves']}, {p[1]['unforced_moves']} / "
                  f"{g['unforced'][0]:.0f}, {g['unforced'][1]:.0f} | "
                  f"{p[0]['checker_error_rate_memg']:.1f}, {p[1]['checker_error_rate_memg']:.1f} "
                  f"({g['checker'][0]:.1f}, {g['checker'][1]:.1f}) | {mine[0]:.1f}, {mine[1]:.1f} "
                  f"({g['overall'][0]:.1f}, {g['overall'][1]:.1f}) | {'yes' if same else 'no'} | "
                  f"{1000 * seconds / max(n, 1):.1f} |")  # fmt: skip
    print(f"\nplayers ranked as gnubg ranks them: {agree} of {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
