"""Which teacher values blitz and crashed positions best, judged by GNU Backgammon 1.07 at
2 ply (issue 24: what to fit the net to next).

    python benchmarks/teacher.py [--model M] [--cases 40] [--top 6] [--trials 144] [--ply 1]
                                 [--workers 2] [--seed 3] [--out FILE.npz]
                                 [--distill-trials 288]
    python benchmarks/teacher.py --level [--deep-every 10] [--model M]

The decisions: refset decisions (tests/data/gnubg_refset.jsonl) with more than one legal
play that are not races and are crashed (gnubg's class) or have a checker on the bar
(tag ``bar``), `--cases` of them drawn with `--seed`; in each, the `--top` plays that gnubg
2 ply values best (fewer where a decision has fewer). Each position after one of those
plays is valued for the mover by:

- the net at 0 ply (the baseline: what the net says today);
- Doublet's search, V2 of the position after the play (what `analyse --ply 2` ranks by);
- a rollout of `--trials` trials with `--ply`-ply checker play (doublet.search.rollout:
  luck adjusted, seed 7, a decision's plays on the same dice, `--workers` processes);
- with `--distill-trials N`, also the rollouts `distill data --rollout-trials N` makes
  (doublet.training.rollout: 0-ply play, the race net's value at the end of contact, no
  luck adjustment, one process).

The judge is benchmarks/data/gnubg2_all_refset.jsonl.gz (benchmarks/fair_judge.py: gnubg
1.07's 2-ply equity of every legal play). Printed for all the positions, for those of
crashed decisions and for the others: the mean absolute difference to the judge with its
mean (the bias: below 0, the teacher values the mover's position lower than gnubg); the
same after removing each decision's mean difference ("centred": how well the teacher
tells a decision's plays apart); and the mean loss, by the judge, of the play each
teacher would choose among the top plays, with its standard error. `--out` keeps the
values (rows: case, play index, judge, net, search, rollout, rollout's standard error,
distill's rollout or NaN).

`--level`: the net's level against the judge on every legal play of every refset decision
(no rollouts): the mean difference (bias) and mean absolute difference of the net at 0
ply, and of the 2-ply search on every `--deep-every`-th decision, by the decision's
class (gnubg's: contact, crashed, race) and, for contact and crashed, with a checker on
the bar or not.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

from doublet.core.board import has_contact
from doublet.core.parallel import shared_executor
from doublet.formats.ids import board_from_position_id
from doublet.nn.eval import default_model, equity, load_model
from doublet.search.analysis import searcher
from doublet.search.rollout import RolloutSettings, rollout
from doublet.search.searcher import Limits
from doublet.training.rollout import RaceRollout, Rollout

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fair_judge import FairJudge, decisions  # noqa: E402

ROLLOUT_SEED = 7
NAMES = ("net, 0 ply", "search, 2 ply", "rollout", "distill's rollout")


def sample(n: int, seed: int) -> list[tuple[dict, list[float]]]:
    """The sampled decisions (case, the judge's equity of each legal play)."""
    judge = FairJudge()
    cases = {c["case"]: c for c in decisions() if c["class"] != "race" and (
             c["class"] == "crashed" or "bar" in c["tags"])}  # fmt: skip
    ids = sorted(cases)
    rng = np.random.default_rng(seed)
    pick = sorted(rng.choice(ids, size=min(n, len(ids)), replace=False).tolist())
    return [(cases[i], [judge.table[i][pid] for pid in cases[i]["legal"]]) for i in pick]


def value(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    """Rows (case, play index, judge, net, search, rollout, rollout se, distill's rollout)
    and whether each is of a crashed decision."""
    model = load_model(args.model) if args.model else default_model(0)
    s = searcher(model, 0)
    ex = shared_executor(args.workers)
    settings = RolloutSettings(trials=args.trials, ply=args.ply, seed=ROLLOUT_SEED, luck=True)
    contact_ro, race_ro = Rollout(model), RaceRollout(model)
    distill_rng = np.random.default_rng(11)
    rows, crashed = [], []
    t0 = time.perf_counter()
    todo = sample(args.cases, args.seed)
    for n, (c, eqs) in enumerate(todo, 1):
        order = np.argsort(-np.array(eqs), kind="stable")[: args.top]
        # The position after a play is the opponent's to roll: its values, negated, are the
        # mover's (cubeless money equity).
        after = np.array([board_from_position_id(c["legal"][i]) for i in order])
        net = [-float(equity(s.evaluate(b, Limits(ply=0)))) for b in after]
        deep = [-float(equity(s.evaluate(b, Limits(ply=2)))) for b in after]
        ro, se = rollout(model, after, settings, ex).equity()
        distill = [float("nan")] * len(after)
        if args.distill_trials:
            distill = [-float(equity((contact_ro if has_contact(b) else race_ro)(
                b, args.distill_trials, distill_rng))) for b in after]  # fmt: skip
        for k, i in enumerate(order):
            rows.append((c["case"], i, eqs[i], net[k], deep[k], -float(ro[k]), float(se[k]),
                         distill[k]))  # fmt: skip
            crashed.append(c["class"] == "crashed")
        print(f"  {n}/{len(todo)} decisions, {time.perf_counter() - t0:.0f} s", file=sys.stderr,
              flush=True)  # fmt: skip
    return np.array(rows, float).reshape(-1, 8), np.array(crashed, bool)


def level(args: argparse.Namespace) -> None:
    """--level: the net's and the 2-ply search's bias against the judge, by class."""
    model = load_model(args.model) if args.model else default_model(0)
    s = searcher(model, 0)
    cases = {c["case"]: c for c in decisions()}
    judged = FairJudge().table  # case -> {position after a play: the judge's equity}
    groups: dict[str, list[tuple[float, float, float]]] = {}
    t0 = time.perf_counter()
    for n, (case, table) in enumerate(judged.items()):
        c = cases[case]
        deep = n % args.deep_every == 0
        kind = c["class"] if c["class"] == "race" else (
            f"{c['class']}, {'bar' if 'bar' in c['tags'] else 'no bar'}")  # fmt: skip
        for pid, judge in table.items():
            b = board_from_position_id(pid)
            net = -float(equity(s.evaluate(b, Limits(ply=0))))
            two = -float(equity(s.evaluate(b, Limits(ply=2)))) if deep else float("nan")
            groups.setdefault(kind, []).append((judge, net, two, n))
    which = "every decision" if args.deep_every == 1 else f"every {args.deep_every}th decision"
    print(f"{time.perf_counter() - t0:.0f} s; every legal play of {len(judged)} refset decisions; "
          f"the 2-ply search on {which}")  # fmt: skip
    print("centred: each play's difference less its decision's mean difference (what a "
          "choice among the plays sees)")  # fmt: skip
    print(f"{'class':<20}{'plays':>8}{'net bias':>10}{'net MAE':>9}{'centred':>9}"
          f"{'2-ply plays':>13}{'2-ply bias':>12}{'2-ply MAE':>11}")  # fmt: skip
    for kind in sorted(groups):
        g = np.array(groups[kind])
        d0 = g[:, 1] - g[:, 0]
        case = g[:, 3]
        centred = _centred(d0, case)
        two = g[~np.isnan(g[:, 2])]
        d2 = two[:, 2] - two[:, 0]
        print(f"{kind:<20}{len(g):>8}{d0.mean():>+10.4f}{np.abs(d0).mean():>9.4f}"
              f"{np.abs(centred).mean():>9.4f}{len(two):>13}{d2.mean():>+12.4f}"
              f"{np.abs(d2).mean():>11.4f}")  # fmt: skip


def _centred(d: np.ndarray, case: np.ndarray) -> np.ndarray:
    """Each difference less the mean difference of its decision (case): what a choice
    among a decision's plays sees."""
    return np.concatenate([d[case == u] - d[case == u].mean() for u in np.unique(case)])


def _loss(r: np.ndarray, col: int) -> float:
    """The judge's loss of the play that column `col` values best, among one decision's."""
    return float(r[:, 2].max() - r[np.argmax(r[:, col]), 2])


def report(rows: np.ndarray, crashed: np.ndarray) -> None:
    print(f"{'':34}{'MAE':>8}{'bias':>9}{'centred':>9}{'choice loss mEq':>20}")
    for label, mask in (("all", np.ones(len(rows), bool)), ("crashed decisions", crashed),
                        ("the others (a checker on the bar)", ~crashed)):  # fmt: skip
        r = rows[mask]
        if not len(r):
            continue
        case = r[:, 0]
        cases = np.unique(case)
        print(f"{label}: {len(r)} positions, {len(cases)} decisions, rollout standard error "
              f"{r[:, 6].mean():.4f} on average")  # fmt: skip
        for col, name in zip((3, 4, 5, 7), NAMES, strict=True):
            if np.isnan(r[:, col]).any():
                continue
            d = r[:, col] - r[:, 2]
            centred = _centred(d, case)
            loss = np.array([_loss(r[case == u], col) for u in cases]) * 1000
            se = loss.std(ddof=1) / np.sqrt(len(loss)) if len(loss) > 1 else float("nan")
            print(f"  {name:<32}{np.abs(d).mean():>8.4f}{d.mean():>+9.4f}"
                  f"{np.abs(centred).mean():>9.4f}{loss.mean():>11.2f} ± {se:.2f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=40, help="decisions drawn")
    ap.add_argument("--top", type=int, default=6, help="plays of each (gnubg 2 ply's best)")
    ap.add_argument("--trials", type=int, default=144, help="rollout trials")
    ap.add_argument("--ply", type=int, default=1, choices=(0, 1), help="rollout's checker play")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--model", help="model .npz (default: the shipped one)")
    ap.add_argument("--seed", type=int, default=3, help="the draw of the decisions")
    ap.add_argument("--out", type=Path, help="keep the values (.npz)")
    ap.add_argument("--distill-trials", type=int, default=0,
                    help="also distill data's rollouts of this many trials")  # fmt: skip
    ap.add_argument("--level", action="store_true",
                    help="the net's bias on every refset play, by class (no rollouts)")  # fmt: skip
    ap.add_argument("--deep-every", type=int, default=10,
                    help="--level: the 2-ply search on every Nth decision")  # fmt: skip
    args = ap.parse_args()
    if args.level:
        print(f"machine: {platform.machine()}, command: benchmarks/teacher.py "
              f"{' '.join(sys.argv[1:])}")  # fmt: skip
        level(args)
        return
    print(f"machine: {platform.machine()}, command: benchmarks/teacher.py {' '.join(sys.argv[1:])}")
    t = time.perf_counter()
    rows, crashed = value(args)
    if args.out:
        np.savez(args.out, rows=rows, crashed=crashed)
    print(f"{time.perf_counter() - t:.0f} s; judge: gnubg 1.07 2 ply (fair_judge.py); rollouts "
          f"of {args.trials} trials, {args.ply}-ply play")  # fmt: skip
    report(rows, crashed)


if __name__ == "__main__":
    main()
