"""Match review against GNU Backgammon's own analysis of the same matches (issue 22).

    python benchmarks/review.py [--ply 0 1 2] [--set shared selfplay noise11]

A set is a folder of .mat files and a JSON of gnubg 1.07's `analyse match` of them
(benchmarks/gnubg_review.py, at 2 ply: gnubg's "World class" analysis):

- shared: gnubg's four matches (tests/data/matches), benchmarks/data/gnubg2_shared.json;
- selfplay: four 5-point matches between Doublet players with noise (tests/data/selfplay,
  made by benchmarks/selfplay_matches.py), benchmarks/data/gnubg2_selfplay.json;
- noise11: six 11-point matches between noisy Doublet players (benchmarks/data/noise11),
  benchmarks/data/gnubg2_noise11.json.

For each match and ply: per player, Doublet's unforced moves and error rate (mEMG, over
the unforced moves and the close, actual or wrong cube decisions; doublet.games.review) beside
gnubg's (over the unforced moves and the close or actual cube decisions), whether the two
rank the match's players alike, and the time per decision. Then over all players of the
chosen sets, per ply: how often the order agrees, the mean absolute difference of the
error rates, and their rank correlation (Spearman). Regenerate gnubg's figures with

    MATCHES="a.mat b.mat ..." PLY=2 OUT=benchmarks/data/gnubg2_SET.json \
        gnubg -t -q -r -p benchmarks/gnubg_review.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.formats.matfile import read_match  # noqa: E402
from doublet.games.review import review  # noqa: E402

SETS = {
    "shared": (ROOT / "tests" / "data" / "matches", "gnubg2_shared.json"),
    "selfplay": (ROOT / "tests" / "data" / "selfplay", "gnubg2_selfplay.json"),
    "noise11": (ROOT / "benchmarks" / "data" / "noise11", "gnubg2_noise11.json"),
}


def ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--ply", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--set", nargs="+", default=list(SETS), choices=list(SETS))
    args = ap.parse_args()
    print("| set | match | ply | unforced (Doublet / gnubg) | error rate mEMG p0, p1 (gnubg) "
          "| same order | ms a decision |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    pairs: dict[int, list[tuple[float, float]]] = {p: [] for p in args.ply}
    agree = {p: 0 for p in args.ply}
    total = {p: 0 for p in args.ply}
    for name in args.set:
        folder, gnubg_file = SETS[name]
        gnubg = json.loads((ROOT / "benchmarks" / "data" / gnubg_file).read_text())
        for path in sorted(folder.glob("*.mat")):
            g = gnubg[path.name]["players"]
            m, games = read_match(path.read_text())
            for ply in args.ply:
                t = time.perf_counter()
                doc = review(m, games, ply, workers=2)
                seconds = time.perf_counter() - t
                p = doc["players"]
                n = sum(x["moves"] + x["cube_decisions"] for x in p)
                mine = [x["error_rate_memg"] for x in p]
                theirs = [x["error_rate_memg"] for x in g]
                same = (mine[0] < mine[1]) == (theirs[0] < theirs[1])
                agree[ply] += same
                total[ply] += 1
                pairs[ply] += list(zip(mine, theirs, strict=True))
                print(f"| {name} | {path.stem} | {ply} | {p[0]['unforced_moves']}, "
                      f"{p[1]['unforced_moves']} / {g[0]['unforced']}, {g[1]['unforced']} | "
                      f"{mine[0]:.1f}, {mine[1]:.1f} ({theirs[0]:.1f}, {theirs[1]:.1f}) | "
                      f"{'yes' if same else 'no'} | {1000 * seconds / max(n, 1):.1f} |"
                      )  # fmt: skip
    print()
    print("| ply | matches whose players are ranked as gnubg ranks them | mean abs. difference "
          "of the error rates (mEMG) | Spearman rank correlation, all players |")  # fmt: skip
    print("|---|---|---|---|")
    for ply in args.ply:
        a = [x for x, _ in pairs[ply]]
        b = [y for _, y in pairs[ply]]
        mad = sum(abs(x - y) for x, y in pairs[ply]) / len(pairs[ply])
        print(f"| {ply} | {agree[ply]} of {total[ply]} | {mad:.1f} | {spearman(a, b):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
