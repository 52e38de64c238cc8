"""Races judged by GNU Backgammon 1.07 at 2 ply, on decisions the refset does not hold
(issue 24: is Doublet's 2-ply loss in races below gnubg 0-ply's?).

    python benchmarks/race_judge.py build [--selfplay 900] [--seed 2024] [--workers 2]
    python benchmarks/race_judge.py [--plies 0 1 2] [--model PATH]
                                    [--root-keep K] [--root-width W]

The refset has 296 race decisions; their figures rest on a few decisions (one 5-1 is a
quarter of Doublet's 2-ply race loss there). This set is larger and made apart from it:

- every gnubg class `race` position of tests/data/gnubg_race.jsonl (100, gnubg's own
  games) with 6 of the 21 rolls drawn at random;
- race positions met in Doublet's 0-ply self-play with 15 % of the plays random (at most
  two a game, a quarter of the race turns drawn), `--selfplay` of them.

A decision is kept when the position has no contact, is not a bear-off of both sides
(exact for both engines), has more than one legal play and is not a refset decision.
`build` values every legal play's position with gnubg 1.07 at 2 ply and at 0 ply
(benchmarks/gnubg_judge.py inside Debian's gnubg, --workers processes; about 4 minutes
on 2 cores) and writes benchmarks/data/race_judge.jsonl.gz: one line per decision,
``{"pid", "dice", "origin", "legal", "gnubg2", "gnubg0"}`` (the mover's cubeless money
equity after each play of ``legal``, position IDs with the opponent on roll). gnubg
0-ply's choice is the play its 0-ply values highest (its findbestmove at 0 ply: no
filter). The self-play positions depend on the model that played them (the shipped one
at build time); the file is what the figures are measured on.

The run: for each ply, Doublet's choice (Searcher.best, the shipped search settings,
one core), its loss against gnubg 2 ply's best, in mEq, beside gnubg 0-ply's on the
same decisions, the paired difference with its standard error, blunders (> 0.05), and
the same by bucket: the mover saving a gammon (gnubg 2 ply's best equity below -1),
winning one (above +1), the rest; and by origin. With ``--onesided PATH``, also the 0-ply
choices made with a one-sided race net (doublet.training.onesided) instead of the race
net (its win and gammon chances; the backgammons as the engine has them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fair_judge import BLUNDER, paired, run_judges  # noqa: E402
from doublet.core import board as B  # noqa: E402
from doublet.core.dice import ROLLS_21  # noqa: E402
from doublet.formats.ids import board_from_position_id, position_id  # noqa: E402
from doublet.nn.eval import default_model, load_model  # noqa: E402
from doublet.rules.bearoff import is_bearoff  # noqa: E402
from doublet.rules.movegen import legal_outcomes  # noqa: E402
from doublet.search.searcher import ROOT_KEEP, ROOT_WIDTH, Limits, Searcher  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "race_judge.jsonl.gz"
ROLLS_PER_POSITION = 6
RANDOM_PLAYS = 0.15


def _decision(b: np.ndarray, d1: int, d2: int, origin: str,
              refset: set[tuple[str, int, int]]) -> dict | None:  # fmt: skip
    """The decision of rolling d1-d2 in b, or None when it is not one this set keeps."""
    if B.has_contact(b) or is_bearoff(b):
        return None
    outs, _ = legal_outcomes(b, d1, d2)
    legal = sorted({position_id(B.flip(o)) for o in outs})
    pid = position_id(b)
    if len(legal) < 2 or (pid, d1, d2) in refset:
        return None
    return {"pid": pid, "dice": [d1, d2], "origin": origin, "legal": legal}


def decisions(selfplay: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        refset = {(c["pid"], *c["dice"]) for c in map(json.loads, f)}
    out: list[dict] = []
    with open(ROOT / "tests" / "data" / "gnubg_race.jsonl") as f:
        for c in map(json.loads, f):
            if c["class"] != "race":
                continue
            b = board_from_position_id(c["pid"])
            for r in rng.choice(len(ROLLS_21), ROLLS_PER_POSITION, replace=False):
                d = _decision(b, int(ROLLS_21[r, 0]), int(ROLLS_21[r, 1]), "gnubg_race", refset)
                if d:
                    out.append(d)
    searcher, zero, target = Searcher(default_model()), Limits(ply=0), len(out) + selfplay
    while len(out) < target:
        b, taken = B.starting().copy(), 0
        while True:
            d1, d2 = (int(d) for d in sorted(rng.integers(1, 7, 2), reverse=True))
            if taken < 2 and not B.has_contact(b) and rng.random() < 0.25:
                d = _decision(b, d1, d2, "selfplay", refset)
                if d and len(out) < target:
                    out.append(d)
                    taken += 1
            outs, again = legal_outcomes(b, d1, d2)
            if rng.random() < RANDOM_PLAYS:
                i = int(rng.integers(len(outs)))
            else:
                i = searcher.best(b, d1, d2, zero)
            if outs[i][B.MY_OFF] == 15:
                break
            b = outs[i] if again[i] else B.flip(outs[i])
    return out


def judge(cases: list[dict], ply: int, workers: int, binary: str) -> list[list[float]]:
    """gnubg 1.07's equities (ply) after every legal play of each case."""
    rows = [{"case": i, "legal": c["legal"]} for i, c in enumerate(cases)]
    with tempfile.TemporaryDirectory() as tmp:
        outs = run_judges(rows, Path(tmp), "", workers, binary, ply)
        if not outs:
            raise SystemExit("a gnubg process failed")
        found: dict[int, list[float]] = {}
        for o in outs:
            for line in o.read_text().splitlines():
                r = json.loads(line)
                found[r["case"]] = r["equities"]
    if len(found) != len(cases):
        raise SystemExit(f"gnubg judged {len(found)} of {len(cases)} decisions")
    return [found[i] for i in range(len(cases))]


def build(args: argparse.Namespace) -> None:
    if not os.path.exists(args.gnubg):
        raise SystemExit(f"no gnubg at {args.gnubg}: apt-get install gnubg")
    cases = decisions(args.selfplay, args.seed)
    print(f"{len(cases)} decisions, {sum(len(c['legal']) for c in cases):,} positions",
          flush=True)  # fmt: skip
    for ply in (2, 0):
        for c, eqs in zip(cases, judge(cases, ply, args.workers, args.gnubg), strict=True):
            c[f"gnubg{ply}"] = eqs
    tmp = DATA.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    os.replace(tmp, DATA)
    print(f"wrote {DATA} ({DATA.stat().st_size:,} bytes)")


def _report(title: str, d: np.ndarray, g0: np.ndarray, buckets: dict[str, np.ndarray]) -> None:
    print(title)
    for name, sel in [("all", np.ones(len(d), bool)), *buckets.items()]:
        if not sel.any():
            continue
        blunders = f"{(d[sel] > 1000 * BLUNDER).sum()} / {(g0[sel] > 1000 * BLUNDER).sum()}"
        print(f"  {name:<20}{sel.sum():>6}{d[sel].mean():>9.3f}{g0[sel].mean():>9.3f}"
              f"{paired((d[sel] - g0[sel]) / 1000):>17}{blunders:>11}")  # fmt: skip


def onesided_losses(cases: list[dict], best: np.ndarray, model: Any, path: str) -> np.ndarray:
    """mEq lost by choosing each play with doublet.training.onesided's values (a
    one-sided race net, the backgammons from the model's 0-ply evaluation, exact)."""
    from doublet.training.onesided import OneSided, position_probs

    onesided = OneSided.load(path)
    pids = sorted({p for c in cases for p in c["legal"]})
    boards = np.array([board_from_position_id(p) for p in pids])
    searcher, zero = Searcher(model), Limits(ply=0)
    v0 = np.array([searcher.evaluate(b, zero) for b in boards])
    p = position_probs(onesided, boards, v0[:, [2, 4]])
    mover = dict(zip(pids, -(2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]),
                     strict=True))  # fmt: skip
    out = []
    for c, b in zip(cases, best, strict=True):
        j = int(np.argmax([mover[q] for q in c["legal"]]))
        out.append(1000 * (b - c["gnubg2"][j]))
    return np.array(out)


def run(args: argparse.Namespace) -> None:
    if not DATA.exists():
        raise SystemExit(f"no {DATA}: run `python benchmarks/race_judge.py build` first")
    with gzip.open(DATA, "rt") as f:
        cases = [json.loads(line) for line in f]
    model = load_model(args.model) if args.model else default_model()
    best = np.array([max(c["gnubg2"]) for c in cases])
    g0 = 1000 * np.array([b - c["gnubg2"][int(np.argmax(c["gnubg0"]))]
                          for b, c in zip(best, cases, strict=True)])  # fmt: skip
    buckets = {"saving a gammon": best < -1, "winning a gammon": best > 1,
               "the rest": (best >= -1) & (best <= 1)}  # fmt: skip
    for origin in sorted({c["origin"] for c in cases}):
        buckets[f"from {origin}"] = np.array([c["origin"] == origin for c in cases])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; {len(cases)} race decisions; command: "
          f"{' '.join(sys.argv)}")  # fmt: skip
    print(f"{'':<22}{'n':>6}{'Doublet':>9}{'gnubg 0':>9}{'difference':>17}{'blunders':>11}")
    prune_all = None if args.prune_all is None else args.prune_all == "yes"
    for ply in args.plies:
        searcher = Searcher(model)
        limits = Limits(ply=ply, root_keep=args.root_keep, root_width=args.root_width,
                        prune_all=prune_all)  # fmt: skip
        mine, times = [], []
        for c, b in zip(cases, best, strict=True):
            board = board_from_position_id(c["pid"])
            searcher.clear_cache()
            t = time.perf_counter()
            n, outs = searcher.best(board, *c["dice"], limits), searcher.ws.outs[0]
            times.append(time.perf_counter() - t)
            after = position_id(B.flip(outs[n]))
            mine.append(1000 * (b - c["gnubg2"][c["legal"].index(after)]))
        _report(f"Doublet {ply} ply (median {1000 * np.median(times):.2f} ms a decision)",
                np.array(mine), g0, buckets)  # fmt: skip
    if args.onesided:
        _report(f"the one-sided race net {args.onesided} at 0 ply",
                onesided_losses(cases, best, model, args.onesided), g0, buckets)  # fmt: skip
    print(
        "mEq a decision; difference: Doublet minus gnubg 0 ply, decision by decision, "
        "± its standard error; blunders: Doublet / gnubg 0 ply"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", nargs="?", choices=["build"], help="make the data file")
    ap.add_argument("--selfplay", type=int, default=900, help="decisions from self-play")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gnubg", default=shutil.which("gnubg") or "/usr/games/gnubg")
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--model", help="model .npz (default: the shipped one)")
    ap.add_argument("--root-keep", type=int, default=ROOT_KEEP)
    ap.add_argument("--root-width", type=float, default=ROOT_WIDTH)
    ap.add_argument("--prune-all", choices=("yes", "no"), default=None,
                    help="prune races too (default: the search's, at 1 ply only)")  # fmt: skip
    ap.add_argument("--onesided", metavar="PATH",
                    help="also choose at 0 ply with this one-sided race net "
                    "(python -m doublet.training.onesided)")  # fmt: skip
    args = ap.parse_args()
    build(args) if args.what == "build" else run(args)


if __name__ == "__main__":
    main()
