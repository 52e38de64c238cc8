"""Cube decisions judged by GNU Backgammon's cubeful 2-ply (issue 20).

    python benchmarks/cube.py [--data PATH] [--plies 0 1 2] [--methods cubeful janowski]
                              [--sample N] [--seed S] [--model PATH] [--no-gnubg]

Over the 957 cube decisions of gnubg_cube.jsonl (default ../shared/refdata/, or a seeded
sample of N), for each depth and method (doublet.search.cubeful): Doublet's mean error
per decision on the double and on the take, in mEq (milli-equity, money-equivalent as
gnubg shows it), judged by gnubg's 2-ply cubeful equities as the data's README defines
it (the doubler's error |min(DT, DP) - ND| when its choice differs from 2-ply gnubg's,
the taker's |DP - DT|), with how often each agrees with gnubg 2-ply and the mean of its
no-double and double / take equities less gnubg 2-ply's (the bias, ± its standard
error: above zero, the side on roll's chances are overrated); split by money /
match and by position class; and the median time per decision (one core, the position
cache cleared before each). Beside them, on the same cases and judge: gnubg's own 0 and
1-ply decisions as the data records them, and, with GNU Backgammon 1.07 installed
(``apt-get install gnubg``: /usr/games/gnubg), its time per cubeful decision at each
depth in the same run (benchmarks/gnubg_cube.py inside gnubg).

Goal: Doublet's 2-ply error below gnubg 0-ply's; moonshot: below gnubg 1-ply's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.cube.state import CubeState, from_request  # noqa: E402
from doublet.formats.ids import board_from_position_id  # noqa: E402
from doublet.nn.eval import default_model, load_model  # noqa: E402
from doublet.search.cubeful import METHODS, cube_decision  # noqa: E402
from doublet.search.searcher import Searcher  # noqa: E402

GNUBG = "/usr/games/gnubg"


def state_of(r: dict) -> CubeState:
    """A record's cube state: its cube, match and jacoby fields are the engine's keys."""
    return from_request(r)


def errors(nd: float, dt: float, dp: float, judge: dict) -> tuple[float, float, bool, bool]:
    """(double error, take error, double agrees, take agrees) of the decision that the
    equities nd, dt, dp give, judged by gnubg 2-ply's."""
    jnd, jdt, jdp = judge["no_double"], judge["double_take"], judge["double_pass"]
    double, take = min(dt, dp) > nd, dt <= dp
    jdouble, jtake = min(jdt, jdp) > jnd, jdt <= jdp
    de = abs(min(jdt, jdp) - jnd) if double != jdouble else 0.0
    te = abs(jdp - jdt) if take != jtake else 0.0
    return de, te, double == jdouble, take == jtake


def gnubg_times(path: Path, plies: list[int]) -> dict[int, float] | None:
    if not shutil.which(GNUBG) and not os.path.exists(GNUBG):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.jsonl"
        env = dict(os.environ, GNUBG_CUBE_IN=str(path), GNUBG_CUBE_OUT=str(out),
                   GNUBG_CUBE_PLIES=",".join(map(str, plies)))  # fmt: skip
        subprocess.run([GNUBG, "-t", "-q", "-r", "-p", str(ROOT / "benchmarks" / "gnubg_cube.py")],
                       env=env, check=True, capture_output=True)  # fmt: skip
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    return {n: statistics.median(r[str(n)]["seconds"] for r in rows) for n in plies}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "refdata" / "gnubg_cube.jsonl"))
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model")
    ap.add_argument("--no-gnubg", action="store_true", help="skip gnubg's own timing")
    args = ap.parse_args()

    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    if args.sample:
        rows = random.Random(args.seed).sample(rows, min(args.sample, len(rows)))
    model = load_model(args.model) if args.model else default_model()
    searcher = Searcher(model)
    cube_decision(searcher, board_from_position_id(rows[0]["pid"]), state_of(rows[0]), 1)  # compile

    results: dict[tuple[str, int], list[tuple]] = {}
    for method in args.methods:
        for ply in args.plies:
            if method == "janowski" and ply == 0 and "cubeful" in args.methods:
                continue  # the same computation as cubeful at 0 ply
            out = []
            for r in rows:
                b = board_from_position_id(r["pid"])
                s = state_of(r)
                searcher.clear_cache()
                t = time.perf_counter()
                a = cube_decision(searcher, b, s, ply, method)
                dt = time.perf_counter() - t
                d = a.decision
                assert d is not None
                out.append((r, d.no_double, d.double_take, d.double_pass, dt))
            results[(method, ply)] = out

    gtimes = None if args.no_gnubg else gnubg_times(Path(args.data), args.plies)

    def table(title: str, keep) -> None:
        print(f"\n{title}")
        print("| decider | n | double mEq | take mEq | total mEq | double agrees | take agrees "
              "| no double bias | double / take bias | median ms |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n in (0, 1):
            sel = [r for r in rows if keep(r)]
            if not sel:
                return
            g = [r["gnubg"][str(n)] for r in sel]
            es = [errors(x["no_double"], x["double_take"], x["double_pass"], r["gnubg"]["2"])
                  for x, r in zip(g, sel, strict=True)]  # fmt: skip
            gt = f"{1000 * gtimes[n]:.2f}" if gtimes and n in gtimes else ""
            vs = [(x["no_double"], x["double_take"], r) for x, r in zip(g, sel, strict=True)]
            _row(f"gnubg {n}-ply (data)", es, gt, vs)
        for (method, ply), out in results.items():
            sel = [o for o in out if keep(o[0])]
            es = [errors(nd, dt_, dp, r["gnubg"]["2"]) for r, nd, dt_, dp, _ in sel]
            ms = statistics.median(o[4] for o in sel) * 1000
            vs = [(nd, dt_, r) for r, nd, dt_, _, _ in sel]
            _row(f"Doublet {ply}-ply {method}", es, f"{ms:.2f}", vs)
        if gtimes and 2 in gtimes:
            print(f"| gnubg 2-ply (judge) | | | | | | | | | {1000 * gtimes[2]:.2f} |")

    def bias(diffs: list[float]) -> str:
        """The mean of diffs ± its standard error."""
        d = np.asarray(diffs)
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else 0.0
        return f"{d.mean():+.3f} ± {se:.3f}"

    def _row(name: str, es: list, ms: str, values: list) -> None:
        """values: (no double, double / take, record) a decision: the bias columns are
        their mean differences from gnubg 2-ply's (the record's judge)."""
        de = 1000 * float(np.mean([e[0] for e in es]))
        te = 1000 * float(np.mean([e[1] for e in es]))
        da = 100 * float(np.mean([e[2] for e in es]))
        ta = 100 * float(np.mean([e[3] for e in es]))
        nd = bias([v[0] - v[2]["gnubg"]["2"]["no_double"] for v in values])
        dt = bias([v[1] - v[2]["gnubg"]["2"]["double_take"] for v in values])
        print(f"| {name} | {len(es)} | {de:.2f} | {te:.2f} | {de + te:.2f} | {da:.1f} % "
              f"| {ta:.1f} % | {nd} | {dt} | {ms} |")  # fmt: skip

    print(f"# benchmarks/cube.py: {len(rows)} cube decisions ({args.data}), "
          f"{platform.node()} {platform.processor() or platform.machine()}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")  # fmt: skip
    table("All decisions", lambda r: True)
    table("Money", lambda r: r["match"] is None)
    table("Match", lambda r: r["match"] is not None)
    by_class: dict[str, int] = defaultdict(int)
    for r in rows:
        by_class[r["class"]] += 1
    for c in sorted(by_class):
        table(f"Class {c}", lambda r, c=c: r["class"] == c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
