"""Decision speed and accuracy of Doublet's search, judged by GNU Backgammon's 2-ply.

    python benchmarks/decision.py [--model PATH] [--plies 0 1 2] [--sample N] [--seed S]
                                  [--blend W]

For each ply, over the (position, roll) cases of tests/data/gnubg_refset.jsonl (all of
them, or a seeded sample of N): the median and mean time to choose a play
(`Searcher.best`, one core, the search's position cache cleared before each decision;
all decisions are timed first and judged afterwards), and the mean equity loss of
the chosen play judged by gnubg's 2-ply evaluations of its five best candidates (the
``best["2"]["top"]`` field). Beside it, on the same cases and the same judge, gnubg's
own 0-ply choice as the refdata records it (and in the fair judge's tables, its 1-ply
choice too). `--blend W` searches with Limits.blend W (deeper than 0 ply only).

With the optional `gnubg` Python module (``pip install -e '.[gnubg]'``), in the same run:

- gnubg's own decision time at each ply on the same cases: findbestmove, cubeless, with
  the settings of benchmarks/vs_gnubg.py (pruning nets, the "normal" move filter, one
  thread), its evaluation cache emptied before each decision like ours (outside the
  timing), the board converted beforehand; and the loss of its choice on the same judge;
- a choice outside gnubg's top five is judged by gnubg itself: the chosen play's
  resulting position evaluated at 2 ply, its loss = gnubg's best 2-ply equity (its
  findbestmoves at 2 ply) minus that, floored at 0 (a play its filter skipped can come
  out better); without the module it is counted at the fifth candidate's loss and the
  mean is reported as a lower bound;
- a check of the setup: gnubg's best equity at each ply against the refdata's ``best``
  field (mean and largest difference) and how often its choice is the refdata's.

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

from benchmarks.fair_judge import BLUNDER, JUDGE, FairJudge, paired  # noqa: E402
from benchmarks.vs_gnubg import (  # noqa: E402
    MISSING,
    NORMAL_FILTER,
    GnubgChooser,
    GnubgMoveError,
    eval_context,
    flush_cache,
    gnubg,
    to_gnubg,
)
from doublet.core.board import flip  # noqa: E402
from doublet.formats.ids import board_from_position_id, position_id  # noqa: E402
from doublet.nn.eval import default_model, load_model  # noqa: E402
from doublet.search.searcher import (  # noqa: E402
    INNER_KEEP,
    INNER_WIDTH,
    PRUNE_KEEP,
    ROOT_KEEP,
    ROOT_WIDTH,
    Limits,
    Searcher,
)


class Judge:
    """gnubg's 2-ply verdict on the plays of a case: the refdata's top five, and beyond
    them gnubg itself when it is installed."""

    def __init__(self) -> None:
        self.live = GnubgChooser(2) if gnubg is not None else None
        self.by_gnubg = 0  # plays outside the top five judged by gnubg
        self.floored = 0  # ... that gnubg's own 2-ply found better than its best
        self._best: dict[tuple[str, int, int], float] = {}

    def __call__(self, case: dict, after: np.ndarray) -> tuple[float, bool]:
        """(equity loss of the play leading to `after` (mover's view), outside top 5)."""
        top = case["best"]["2"]["top"]
        pid = position_id(flip(after))
        for cand in top:
            if cand["after"] == pid:
                return top[0]["equity"] - cand["equity"], False
        if case["n_legal"] <= len(top):
            raise AssertionError(f"case {case['case']}: a play outside its full list")
        if self.live is None:
            return top[0]["equity"] - top[-1]["equity"], True
        b = board_from_position_id(case["pid"])
        key = (case["pid"], *case["dice"])
        if key not in self._best:
            moves = gnubg.findbestmoves(to_gnubg(b), self.live.ci, self.live.ec,
                                        tuple(case["dice"]), NORMAL_FILTER)  # fmt: skip
            self._best[key] = float(moves[0]["score"])
        loss = self._best[key] - self.live.value(after)
        self.by_gnubg += 1
        self.floored += loss < 0
        return max(loss, 0.0), True


def _row(name: str, times: list[float], losses: list[float], outside: int,
         bound: bool) -> str:  # fmt: skip
    loss = f"{'>=' if bound and outside else ''}{np.mean(losses):.5f}"
    return (f"{name:<24}{1e3 * statistics.median(times):>10.3f}"
            f"{1e3 * statistics.mean(times):>10.3f}{loss:>12}{outside:>15}")  # fmt: skip


def fair_report(cases: list[dict], chosen: dict[int, list[str]], judge: FairJudge,
                worst: int) -> list[str]:  # fmt: skip
    """The fair judge's tables (issue 24): every legal play valued by gnubg 1.07 at 2 ply.
    Per ply and position class: Doublet's mean loss (mEq), gnubg 0-ply's (its choice as
    the refdata records it) on the same decisions, the paired difference with its
    standard error, and the blunders (> BLUNDER) of each; then the tags where Doublet's
    2-ply (the deepest ply run) loses most against gnubg 0 ply, and its worst decisions;
    beside them gnubg 1-ply's own choice on the same judge."""
    g0 = np.array([judge.loss(c, c["best"]["0"]["after"]) for c in cases])
    classes = sorted({c["class"] for c in cases})
    out = ["fair judge: every legal play valued by gnubg 1.07 at 2 ply "
           f"(benchmarks/fair_judge.py); loss in mEq; blunders lose more than {BLUNDER}",
           f"{'':<18}{'class':<10}{'n':>6}{'Doublet':>9}{'gnubg 0':>9}"
           f"{'Doublet - gnubg 0':>20}{'blunders':>10}{'gnubg 0':>9}"]  # fmt: skip
    for ply, afters in sorted(chosen.items()):
        mine = np.array([judge.loss(c, a) for c, a in zip(cases, afters, strict=True)])
        for cls in [*classes, "all"]:
            idx = np.array([cls in ("all", c["class"]) for c in cases])
            if not idx.any():
                continue
            a, b = mine[idx], g0[idx]
            out.append(f"{'Doublet ' + str(ply) + '-ply':<18}{cls:<10}{idx.sum():>6}"
                       f"{1000 * a.mean():>9.3f}{1000 * b.mean():>9.3f}{paired(a - b):>20}"
                       f"{int((a > BLUNDER).sum()):>10}{int((b > BLUNDER).sum()):>9}")  # fmt: skip
    if all("1" in c["best"] for c in cases):  # gnubg 1-ply's choice (2 ply's is the judge's)
        g = np.array([judge.loss(c, c["best"]["1"]["after"]) for c in cases])
        by = ", ".join(f"{cls} {1000 * g[[c['class'] == cls for c in cases]].mean():.3f}"
                       for cls in classes)  # fmt: skip
        out.append(f"gnubg 1-ply's own choice (the refdata's): {1000 * g.mean():.3f} ({by}), "
                   f"{int((g > BLUNDER).sum())} blunders")  # fmt: skip
    deep = max(chosen)
    mine = np.array([judge.loss(c, a) for c, a in zip(cases, chosen[deep], strict=True)])
    by_tag: dict[str, list[int]] = {}
    for k, c in enumerate(cases):
        for tag in c.get("tags", []):
            by_tag.setdefault(tag, []).append(k)
    excess = sorted(((float((mine[ix] - g0[ix]).sum()), tag, ix) for tag, ix in by_tag.items()),
                    reverse=True)  # fmt: skip
    out.append(f"tags where Doublet {deep}-ply loses most beyond gnubg 0-ply (total mEq, n, "
               "Doublet mean, gnubg 0 mean):")  # fmt: skip
    for total, tag, ix in excess[:8]:
        out.append(f"  {tag:<20}{1000 * total:>9.1f}{len(ix):>6}{1000 * mine[ix].mean():>8.2f}"
                   f"{1000 * g0[ix].mean():>8.2f}")  # fmt: skip
    out.append(f"Doublet {deep}-ply's worst decisions (loss; the position ID and roll; its play "
               "and gnubg 2-ply's best):")  # fmt: skip
    for k in np.argsort(-mine)[:worst]:
        c = cases[int(k)]
        best = max(judge.table[c["case"]], key=judge.table[c["case"]].get)
        out.append(f"  {mine[k]:.3f}  {c['pid']} {c['dice'][0]}{c['dice'][1]} {c['class']:<8} "
                   f"after {chosen[deep][int(k)]}, best after {best}")  # fmt: skip
    return out


def gnubg_rows(cases: list[dict], plies: list[int], judge: Judge) -> list[str]:
    """gnubg's rows (time, loss) and its setup check against the refdata."""
    rows, checks = [], []
    for ply in plies:
        chooser = GnubgChooser(ply)
        ec = eval_context(ply)
        chooser.move(board_from_position_id(cases[0]["pid"]), *cases[0]["dice"])  # load nets
        times, moves = [], []
        for c in cases:  # timed first, judged after, as Doublet's
            gb, dice = to_gnubg(board_from_position_id(c["pid"])), tuple(c["dice"])
            flush_cache()
            t = time.perf_counter()
            mv = gnubg.findbestmove(gb, chooser.ci, ec, dice, NORMAL_FILTER)
            times.append(time.perf_counter() - t)
            moves.append(tuple(mv))
        losses, outside, bad, diffs, same = [], 0, 0, [], 0
        for c, mv in zip(cases, moves, strict=True):
            b = board_from_position_id(c["pid"])
            gb, dice = to_gnubg(b), tuple(c["dice"])
            try:
                after = chooser.resolve(b, *dice, mv)
            except GnubgMoveError as e:
                bad += 1
                print(f"error: {e}", file=sys.stderr)
                continue
            loss, out = judge(c, after)
            losses.append(loss)
            outside += out
            ref = c["best"].get(str(ply))
            if ref is not None:
                best = gnubg.findbestmoves(gb, chooser.ci, ec, dice, NORMAL_FILTER)[0]
                diffs.append(abs(float(best["score"]) - ref["equity"]))
                same += position_id(flip(after)) == ref["after"]
        rows.append(_row(f"gnubg {ply}-ply (this run)", times, losses, outside,
                         judge.live is None))  # fmt: skip
        checks.append(f"  {ply}-ply: best equity vs refdata: mean |diff| {np.mean(diffs):.5f}, "
                      f"largest {np.max(diffs):.5f}; same play as the refdata in "
                      f"{same}/{len(diffs)}; {bad} moves not among the legal outcomes; "
                      f"{chooser.completed} cut short at a bear-off and completed")  # fmt: skip
    return [*rows, "check of gnubg's setup (cubeless, prune, normal filter):", *checks]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="model .npz (default: the shipped one)")
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--sample", type=int, default=0, help="cases per ply (0: all 3600)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prune-keep", type=int, default=None,
                    help="plays the main net scores at inner levels when the model has a "
                    f"pruning net (0: all; default {PRUNE_KEEP})")  # fmt: skip
    ap.add_argument(
        "--inner-keep",
        type=int,
        default=INNER_KEEP,
        help=f"inner levels' move filter: plays searched deeper (default {INNER_KEEP})",
    )
    ap.add_argument(
        "--inner-width",
        type=float,
        default=INNER_WIDTH,
        help=f"... within this equity of the best (default {INNER_WIDTH})",
    )
    ap.add_argument(
        "--root-keep",
        type=int,
        default=ROOT_KEEP,
        help=f"the root's move filter: plays searched deeper (default {ROOT_KEEP})",
    )
    ap.add_argument(
        "--root-width",
        type=float,
        default=ROOT_WIDTH,
        help=f"... within this equity of the best (default {ROOT_WIDTH})",
    )
    ap.add_argument("--prune-all", choices=("yes", "no"), default=None,
                    help="prune races and crashed positions too (default: 1 ply only)")  # fmt: skip
    ap.add_argument("--blend", type=float, default=1.0,
                    help="the root ranks its deepest plays by W times their value at the "
                    "full depth plus 1 - W times their 0-ply value (Limits.blend; "
                    "default 1)")  # fmt: skip
    ap.add_argument("--no-gnubg", action="store_true", help="skip gnubg's own rows")
    ap.add_argument("--no-fair", action="store_true",
                    help="skip the fair judge's tables (benchmarks/fair_judge.py)")  # fmt: skip
    ap.add_argument("--worst", type=int, default=10, help="worst decisions listed (fair judge)")
    args = ap.parse_args()
    try:
        Limits(blend=args.blend)  # its own check of the weight, before the long run
    except ValueError as e:
        ap.error(f"--blend: {e}")
    model = load_model(args.model) if args.model else default_model()
    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        cases = [json.loads(line) for line in f]
    cases = [c for c in cases if c["n_legal"] > 1]  # decisions only
    if args.sample:
        rng = np.random.default_rng(args.seed)
        idx = np.sort(rng.choice(len(cases), size=min(args.sample, len(cases)), replace=False))
        cases = [cases[i] for i in idx]
    judge = Judge()
    gnubg0 = [judge(c, flip(board_from_position_id(c["best"]["0"]["after"])))
              for c in cases]  # fmt: skip
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; model {model.meta.get('games', '?')} games; "
          f"{len(cases)} decisions (cases with more than one legal play)")  # fmt: skip
    keeps = " / ".join(f"{Limits(ply=p, prune_keep=args.prune_keep).pruning()} at {p} ply"
                       for p in args.plies if p > 0)  # fmt: skip
    print(f"command: {' '.join(sys.argv)}; pruning net: "
          f"{'none' if model.prune is None else f'keep {keeps}'}")  # fmt: skip
    print(f"{'player':<24}{'median ms':>10}{'mean ms':>10}{'mean loss':>12}{'outside top 5':>15}")
    print(f"{'gnubg 0-ply (refdata)':<24}{'':>10}{'':>10}"
          f"{np.mean([g[0] for g in gnubg0]):>12.5f}{sum(g[1] for g in gnubg0):>15}")  # fmt: skip
    s = Searcher(model)
    s.best(board_from_position_id(cases[0]["pid"]), *cases[0]["dice"])  # compile / load
    fair: dict[int, list[str]] = {}  # ply -> the position after each chosen play
    fair_judge = FairJudge() if JUDGE.exists() and not args.no_fair else None
    prune_all = None if args.prune_all is None else args.prune_all == "yes"
    for ply in args.plies:
        limits = Limits(ply=ply, prune_keep=args.prune_keep, inner_keep=args.inner_keep,
                        inner_width=args.inner_width, root_keep=args.root_keep,
                        root_width=args.root_width, prune_all=prune_all,
                        blend=args.blend)  # fmt: skip
        times, chosen = [], []
        for c in cases:  # timed first, judged after: the judge does not disturb the timing
            b = board_from_position_id(c["pid"])
            s.clear_cache()
            t = time.perf_counter()
            i = s.best(b, *c["dice"], limits)
            times.append(time.perf_counter() - t)
            chosen.append(i)
        losses, outside, afters = [], 0, []
        for c, i in zip(cases, chosen, strict=True):
            boards, _, _, _ = s.analyse(board_from_position_id(c["pid"]), *c["dice"], limits)
            loss, out = judge(c, boards[i])
            losses.append(loss)
            outside += out
            afters.append(position_id(flip(boards[i])))
        print(_row(f"Doublet {ply}-ply", times, losses, outside, judge.live is None), flush=True)
        fair[ply] = afters
    if fair_judge is not None:
        for line in fair_report(cases, fair, fair_judge, args.worst):
            print(line, flush=True)
    if args.no_gnubg:
        return
    if gnubg is None:
        print(MISSING + ": its decision time is not measured here, and losses of plays "
              "outside gnubg's top five are counted at the fifth's (lower bounds, >=)")  # fmt: skip
        return
    for line in gnubg_rows(cases, args.plies, judge):
        print(line, flush=True)
    print(
        f"plays outside gnubg's top five judged by gnubg 2-ply: {judge.by_gnubg} "
        f"({judge.floored} of them found better than gnubg's best: loss 0)"
    )


if __name__ == "__main__":
    main()
