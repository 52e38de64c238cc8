"""Rollouts (doublet.search.rollout): correctness, variance reduction, speed, and one
published rollout, every baseline measured in the same run.

    .venv/bin/python benchmarks/rollout.py [--scale 1] [--workers 2] [--no-ray]

1. Pure bear-offs (both sides within six checkers, where the database is exact), rolled
   out to the end with the database's own play: the plain mean against the exact value
   (in standard errors), and the luck-adjusted trials' largest distance from it.
2. Luck adjustment: positions rolled out at 0 ply to the end, plain and luck-adjusted
   on the same trials: the two estimates (their difference in its own standard errors),
   the variance ratio (plain / adjusted: trials saved for the same error), the cost of
   a trial each way (a plain rollout timed on its own; at 0 ply its games are the same),
   and the net gain in time for the same error.
3. Speed: trials/s of the opening position to the end, luck-adjusted, at 0 and 1 ply on
   1 and 2 local worker processes (workers started before the clock), and on a private
   Ray instance of 2 CPUs when Ray is installed.
   Beside them, the cost of the cube in the trials (doublet.search.rollout_cube: the
   no-double and double / take walks of a position's cube decision) at 0 ply.
4. Opening 5-1, 24/23 13/8 and 13/8 6/5, against GNU Backgammon's cubeful rollout with
   variance reduction of 46,656 games posted by Stick Rice (GammOnLine, 26 February
   2006; archived at bkgm.com/rgb/rgb.cgi?view+1344): cubeless +0.0069 ± 0.0007 and
   -0.0058 ± 0.0008.
5. Cube decisions by rollout: a seeded sample of gnubg_cube.jsonl (../shared/refdata;
   two-sided bear-offs left out: every decider is exact there), each position rolled out
   at 0 ply with the cube in the trials, judged by gnubg's cubeful 2 ply as
   benchmarks/cube.py judges (the double's and the take's error, mEq); beside it on the
   same cases the same trials' cubeless probabilities converted by Janowski at the root
   (the default), the cube in the trials at 1 ply, Doublet's cubeful 2-ply search, and
   gnubg's own 0 and 1 ply (the data); and each decider's mean no double and double /
   take equities less gnubg 2-ply's.
6. The 15 opening rolls: the two best plays of each by Doublet's 1-ply search, rolled
   out at 0 ply (cubeless, luck-adjusted, the same dice for both), beside the 15
   best-play equities of Tom Keith's gnubg 0-ply cubeless rollouts as Daniel Murphy
   listed them sorted, without their rolls ("The Opening Bell Curve", bgonline.org
   forum, 4 June 2007; mean 0.0393): Doublet's sorted list against that one, rank by
   rank, and the two means.
7. Timed rollouts in a row, as the engine protocol runs them (`time`: one-trial tasks on
   one kept pool of workers): 8 rollouts of the opening to the end, 1.5 s each, the
   trials each took and how far past its budget each ran; beside them the same with
   the workers ended after each rollout (LocalExecutor.abandon without its grace, as
   before session 43), a new pool started for the next.

    --sections 5 6 runs only those sections (default: all).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from doublet.core.board import STARTING, flip
from doublet.core.parallel import Executor, LocalExecutor, executor
from doublet.cube.state import MONEY, from_request
from doublet.formats.ids import board_from_position_id
from doublet.formats.position import Position
from doublet.nn.eval import Model, default_model
from doublet.rules.bearoff import bearoff_probs
from doublet.search.analysis import analyse_roll
from doublet.search.cubeful import cube_decision
from doublet.search.rollout import EQUITY_GRADIENT, RolloutSettings, rollout
from doublet.search.rollout_analysis import cube_rollout_states, position_document
from doublet.search.searcher import Searcher

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cube import errors

BEAROFFS = {  # both sides in the mover's numbering (tests/helpers.pos)
    "bear-off 6 v 6": ({1: 3, 3: 2, 5: 1}, {24: 2, 22: 2, 19: 2}),
    "bear-off 4 v 5": ({6: 1, 4: 2, 2: 1}, {19: 2, 21: 1, 23: 2}),
}
POSITIONS = {  # gnubg IDs (the side on roll's view), or a board as BEAROFFS writes them
    "after 3-1 8/5 6/5": "sGfwATDgc/ABMA",
    "after 3-1, 6-2": "4HPkQSCwZ/ABMA",
    "after 3-1, 6-2, 4-3": "sGfFATDgc+RBIA",
    "race, 14 v 14 checkers": (
        {6: 3, 5: 3, 4: 2, 3: 2, 9: 2, 8: 2},
        {19: 3, 20: 3, 21: 3, 23: 3, 15: 2},
    ),
}
PUBLISHED_51 = {"24/23 13/8": (0.0069, 0.0007), "13/8 6/5": (-0.0058, 0.0008)}
# Tom Keith's gnubg 0-ply cubeless rollouts of the 15 opening rolls' best plays, sorted
# (Daniel Murphy, "The Opening Bell Curve", bgonline.org forum, 4 June 2007).
PUBLISHED_OPENINGS = (0.1670, 0.1234, 0.1035, 0.0638, 0.0545, 0.0155, 0.0125, 0.0102, 0.0088,
                      0.0072, 0.0066, 0.0056, 0.0053, 0.0032, 0.0024)  # fmt: skip
PUBLISHED_OPENINGS_MEAN = 0.0393
CUBE_DATA = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "refdata" / "gnubg_cube.jsonl"
)


def board(mover: dict[int, int], opponent: dict[int, int]) -> np.ndarray:
    b = np.zeros(30, np.int8)
    for p, n in mover.items():
        b[p] += n
    for p, n in opponent.items():
        b[p] -= n
    b[26] = 15 - sum(mover.values())
    b[27] = 15 - sum(opponent.values())
    return b


def eq_se(v: np.ndarray) -> tuple[float, float]:
    e = v @ EQUITY_GRADIENT - 1.0
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(len(e)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every trial count")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--sections", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6, 7])
    ap.add_argument("--cube-sample", type=int, default=40, help="section 5's decisions")
    ap.add_argument("--cube-data", default=str(CUBE_DATA))
    args = ap.parse_args()
    on = set(args.sections)

    def n(trials: int) -> int:
        return max(36, round(trials * args.scale / 36) * 36)

    model = default_model()
    print(
        f"# benchmarks/rollout.py {' '.join(sys.argv[1:])} (--scale {args.scale:g}, "
        f"--workers {args.workers})"
    )  # as typed (a review: --sections was left out)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at the start")  # fmt: skip
    with executor(args.workers) as ex:
        # Every worker loads the kernels before any clock runs: the plain trials' and the
        # cube's (a trial with its record: without this its first timed run paid for
        # loading them, and the cube looked 6x dearer than it is).
        warm = RolloutSettings(trials=2 * 36 * args.workers, truncate=1)
        rollout(model, STARTING, warm, ex)
        rollout(model, STARTING, warm, ex, cube=cube_rollout_states(MONEY))

        if 1 in on:
            print("\n## 1. Pure bear-offs to the end against the exact database")
            print("| position | exact P(win) | plain rollout | (plain - exact) / SE "
                  "| luck-adjusted: largest |trial - exact| | trials |")  # fmt: skip
            print("|---|---|---|---|---|---|")
            for name, (mine, theirs) in BEAROFFS.items():
                b = board(mine, theirs)
                exact = bearoff_probs(b)
                t = rollout(model, b, RolloutSettings(trials=n(1296), bearoff=False, seed=1), ex)
                raw = t.raw[0, :, 0]
                se = raw.std(ddof=1) / np.sqrt(t.n)
                worst = float(np.abs(t.values()[0] - exact).max())
                print(f"| {name} | {exact[0]:.4f} | {raw.mean():.4f} ± {se:.4f} | "
                      f"{(raw.mean() - exact[0]) / se:+.2f} | {worst:.1e} | {t.n} |")  # fmt: skip

        if 2 in on:
            print("\n## 2. Luck adjustment at 0 ply, to the end, on the same trials")
            print("| position | plain equity | luck-adjusted equity | difference / its SE "
                  "| variance ratio | s a trial plain / adjusted "
                  "| time for the same error |")  # fmt: skip
            print("|---|---|---|---|---|---|---|")
            ratios, gains = [], []
            for name, where in POSITIONS.items():
                b = Position.from_id(where).board if isinstance(where, str) else board(*where)
                s = RolloutSettings(trials=n(216), seed=3)
                t = rollout(model, b, s, ex)
                plain = rollout(model, b, replace(s, luck=False), ex)
                assert np.array_equal(plain.raw, t.raw), "0-ply trials differ with the luck on"
                pe, ps = eq_se(t.raw[0])
                ae, a_s = eq_se(t.values()[0])
                luck = t.luck[0] @ EQUITY_GRADIENT  # each trial's luck, in equity
                ls = float(luck.std(ddof=1) / np.sqrt(t.n))  # the error of plain - adjusted
                ratio = (ps / a_s) ** 2
                cost = t.seconds / plain.seconds
                ratios.append(ratio)
                gains.append(ratio / cost)
                print(f"| {name} | {pe:+.3f} ± {ps:.3f} | {ae:+.3f} ± {a_s:.3f} | "
                      f"{(pe - ae) / max(ls, 1e-12):+.2f} | {ratio:.1f} | "
                      f"{plain.seconds / t.n * 1000:.1f} / {t.seconds / t.n * 1000:.1f} ms "
                      f"({cost:.1f}x) | {ratio / cost:.2f}x less |")  # fmt: skip
            print(f"| mean | | | | {np.mean(ratios):.1f} | | {np.mean(gains):.2f}x less |")

        if 3 in on:
            print("\n## 3. Trials/s, the opening position to the end, luck-adjusted")
            print("| checker play | 1 worker | 2 workers | scaling |")
            print("|---|---|---|---|")
            speeds = {}
            with executor(1) as one:
                rollout(model, STARTING, RolloutSettings(trials=2, truncate=1), one)  # warm
                for ply, trials in ((0, n(72)), (1, n(36))):
                    s = RolloutSettings(trials=trials, ply=ply, seed=5)
                    a = rollout(model, STARTING, s, one)
                    b2 = rollout(model, STARTING, replace(s, trials=2 * trials), ex)
                    assert np.array_equal(b2.raw[:, :trials], a.raw)  # the same trials
                    r1, r2 = a.n / a.seconds, b2.n / b2.seconds
                    speeds[ply] = r2
                    print(f"| {ply} ply | {r1:.2f} | {r2:.2f} | {r2 / r1:.2f}x |")
                s = RolloutSettings(trials=n(72), seed=5)
                plain = rollout(model, STARTING, s, ex)
                cubed = rollout(model, STARTING, s, ex, cube=cube_rollout_states(MONEY))
                assert np.array_equal(plain.raw, cubed.raw)  # the same trials
                r0, rc = plain.n / plain.seconds, cubed.n / cubed.seconds
                print(f"| 0 ply, cube actions in the trials (no double and double / take "
                      f"walked), 2 workers | | {rc:.2f} (without: {r0:.2f}) | "
                      f"{rc / r0:.2f}x |")  # fmt: skip
            if not args.no_ray:
                try:
                    with executor(2, ray="local") as rex:
                        s = RolloutSettings(trials=n(144), seed=5)
                        rollout(model, STARTING, replace(s, trials=144, truncate=1), rex)  # warm
                        r = rollout(model, STARTING, s, rex)
                        loc = rollout(model, STARTING, s, ex)
                        assert np.array_equal(r.raw, loc.raw) and np.array_equal(r.luck, loc.luck)
                        print(f"| 0 ply, Ray (local, 2 CPUs), {r.n} trials | | "
                              f"{r.n / r.seconds:.2f} (local processes, same run: "
                              f"{loc.n / loc.seconds:.2f}) | same numbers |")  # fmt: skip
                except Exception as e:  # Ray missing or refusing: say so, go on
                    print(f"| Ray | not measured: {type(e).__name__}: {e} | | |")

        if 4 in on:
            print("\n## 4. Opening 5-1 against GNU Backgammon's published rollout")
            start = Position(STARTING)
            plays = {p.notation: p for p in start.plays(5, 1)}
            starts = np.stack([flip(plays[k].board) for k in PUBLISHED_51])
            t = rollout(model, starts, RolloutSettings(trials=n(432), seed=7), ex)
            v = t.values()
            print(
                "| play | gnubg (46,656 games, cubeless) | Doublet, 0 ply, luck-adjusted | trials |"
            )
            print("|---|---|---|---|")
            eqs = []
            for i, (k, (g, gse)) in enumerate(PUBLISHED_51.items()):
                e, se = eq_se(v[i])
                eqs.append(v[i] @ EQUITY_GRADIENT)
                print(f"| {k} | {g:+.4f} ± {gse:.4f} | {-e:+.4f} ± {se:.4f} | {t.n} |")
            d = eqs[1] - eqs[0]  # the opponent's: 13/8 6/5 less 24/23 13/8 for the mover
            ind = np.hypot(*(x.std(ddof=1) / np.sqrt(t.n) for x in eqs))
            print(f"| difference (24/23 13/8 - 13/8 6/5) | {0.0069 + 0.0058:+.4f} | "
                  f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(t.n):.4f} (paired; independent "
                  f"dice would give ± {ind:.4f}) | {t.n} |")  # fmt: skip
        if 5 in on:
            cube_section(model, ex, args, n(324))
        if 6 in on:
            opening_section(model, ex, n(432))
    if 7 in on:
        timed_section(model, args.workers)
    print(f"\n# load average {os.getloadavg()[0]:.2f} at the end")


def cube_section(model: Model, ex: Executor, args: argparse.Namespace, trials: int) -> None:
    print(f"\n## 5. Cube decisions by rollout, judged by gnubg's cubeful 2 ply "
          f"({args.cube_sample} decisions of gnubg_cube.jsonl, seed 1, {trials} trials "
          f"each at 0 ply)")  # fmt: skip
    rows = [json.loads(line) for line in Path(args.cube_data).read_text().splitlines()
            if line.strip()]  # fmt: skip
    rows = [r for r in rows if r["class"] != "bearoff2"]
    rows = random.Random(1).sample(rows, min(args.cube_sample, len(rows)))
    searcher = Searcher(model)
    found: dict[str, list[tuple[float, float, float, dict]]] = {}
    ses, seconds = [], 0.0
    for r in rows:
        b = board_from_position_id(r["pid"])
        state = from_request(r)
        pos = Position(b)
        for cube_ply in (0, 1):
            s = RolloutSettings(trials=trials, seed=9, cubeful=True, cube_ply=cube_ply)
            t = rollout(model, b, s, ex,
                        cube=cube_rollout_states(state))  # fmt: skip
            seconds += t.seconds
            docs = [(f"rollout, the cube in the trials at {cube_ply} ply (--cubeful)",
                     position_document(pos, t, state))]  # fmt: skip
            if cube_ply == 0:
                docs.append(("rollout, Janowski at the root (the default)",
                             position_document(pos, replace(t, cube=()), state)))  # fmt: skip
                ses.append(docs[0][1]["cube"]["equities_se"]["difference"])
            for name, doc in docs:
                e = doc["cube"]["equities"]
                found.setdefault(name, []).append((e["no_double"], e["double_take"],
                                                   e["double_pass"], r))  # fmt: skip
        a = cube_decision(searcher, b, state, 2)
        assert a.decision is not None
        d = a.decision
        found.setdefault("Doublet 2-ply cubeful search", []).append(
            (d.no_double, d.double_take, d.double_pass, r))  # fmt: skip
    for ply in (0, 1):
        found[f"gnubg {ply} ply (the data)"] = [
            (g["no_double"], g["double_take"], g["double_pass"], r)
            for r in rows for g in [r["gnubg"][str(ply)]]]  # fmt: skip
    print("| decider | double mEq | take mEq | total mEq | double agrees | take agrees "
          "| no double - gnubg 2 ply | double / take - gnubg 2 ply |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name, out in found.items():
        es = [errors(nd, dt, dp, r["gnubg"]["2"]) for nd, dt, dp, r in out]
        de = 1000 * float(np.mean([e[0] for e in es]))
        te = 1000 * float(np.mean([e[1] for e in es]))
        bias = [np.array([x[k] - x[3]["gnubg"]["2"][key] for x in out])
                for k, key in ((0, "no_double"), (1, "double_take"))]  # fmt: skip
        sd = [f"{b.mean():+.4f} ± {b.std(ddof=1) / np.sqrt(len(b)):.4f}" for b in bias]
        print(f"| {name} | {de:.2f} | {te:.2f} | {de + te:.2f} | "
              f"{100 * np.mean([e[2] for e in es]):.0f} % | "
              f"{100 * np.mean([e[3] for e in es]):.0f} % | {sd[0]} | {sd[1]} |")  # fmt: skip
    print(f"(rollouts: {seconds:.0f} s in all; the standard error of double / take less no "
          f"double, median {np.median(ses):.4f}, largest {max(ses):.4f})")  # fmt: skip


def opening_section(model: Model, ex: Executor, trials: int) -> None:
    print(f"\n## 6. The 15 opening rolls, the two best plays (1-ply search) rolled out, "
          f"{trials} trials at 0 ply, cubeless, luck-adjusted")  # fmt: skip
    print("| roll | best play | equity | second play | equity | difference (paired) |")
    print("|---|---|---|---|---|---|")
    start = Position(STARTING)
    best, best_se = [], []
    for d1 in range(2, 7):
        for d2 in range(1, d1):
            plays = analyse_roll(start, d1, d2, ply=1, model=model)["plays"][:2]
            starts = np.stack(
                [Position.parse(p["position_id"]).board for p in plays]
            )  # the opponent's
            t = rollout(model, starts, RolloutSettings(trials=trials, seed=11), ex)
            eq = -(t.values() @ EQUITY_GRADIENT - 1.0)  # the mover's, trial by trial
            m, se = eq.mean(axis=1), eq.std(axis=1, ddof=1) / np.sqrt(t.n)
            order = np.argsort(-m)
            i, j = int(order[0]), int(order[1])
            d = eq[j] - eq[i]
            best.append(float(m[i]))
            best_se.append(float(se[i]))
            print(f"| {d1}-{d2} | {plays[i]['play']} | {m[i]:+.4f} ± {se[i]:.4f} | "
                  f"{plays[j]['play']} | {m[j]:+.4f} ± {se[j]:.4f} | "
                  f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(t.n):.4f} |")  # fmt: skip
    mine = sorted(best, reverse=True)
    diffs = np.array(mine) - np.array(PUBLISHED_OPENINGS)
    print("\nSorted, beside Tom Keith's gnubg 0-ply cubeless rollouts (Murphy 2007):")
    print("| rank | gnubg | Doublet | Doublet - gnubg |")
    print("|---|---|---|---|")
    for k, (g, me) in enumerate(zip(PUBLISHED_OPENINGS, mine, strict=True), 1):
        print(f"| {k} | {g:+.4f} | {me:+.4f} | {me - g:+.4f} |")
    mean_se = float(np.sqrt(np.sum(np.square(best_se)))) / len(best)
    print(f"| mean | {PUBLISHED_OPENINGS_MEAN:+.4f} | {np.mean(best):+.4f} ± {mean_se:.4f} | "
          f"{np.mean(best) - PUBLISHED_OPENINGS_MEAN:+.4f} |")  # fmt: skip
    print(f"(rank by rank: mean |difference| {np.abs(diffs).mean():.4f}, largest "
          f"{np.abs(diffs).max():.4f}; a best-play equity's standard error: median "
          f"{np.median(best_se):.4f})")  # fmt: skip


class _EndsWorkers(LocalExecutor):
    """The workers ended whenever a rollout stops with tasks running (no grace): the
    baseline of section 7."""

    def abandon(self, grace: float = 0.0) -> None:
        super().abandon(0.0)


def timed_section(model: Model, workers: int, budget: float = 1.5, rounds: int = 8) -> None:
    print(f"\n## 7. Timed rollouts in a row: the opening to the end, {budget:g} s each, "
          f"{rounds} in a row, {workers} workers")  # fmt: skip
    print("| workers after a rollout | trials a rollout (mean) | pools started | "
          "past the budget, mean / largest (s) |")  # fmt: skip
    print("|---|---|---|---|")
    for name, kind in (("kept (tasks let end within POOL_START)", LocalExecutor),
                       ("ended (the baseline)", _EndsWorkers)):  # fmt: skip
        ex = kind(workers)
        rollout(model, STARTING, RolloutSettings(trials=2 * 36 * workers, truncate=1), ex)
        counts, over, starts = [], [], 0
        for k in range(rounds):
            if ex.closed:
                ex, starts = kind(workers), starts + 1
            t0 = time.perf_counter()
            t = rollout(model, STARTING, RolloutSettings(trials=100_000, seed=k + 1), ex,
                        deadline=t0 + budget)  # fmt: skip
            over.append(time.perf_counter() - t0 - budget)
            counts.append(t.n)
        ex.close()
        print(f"| {name} | {np.mean(counts):.1f} | {starts} | {np.mean(over):.2f} / "
              f"{max(over):.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
