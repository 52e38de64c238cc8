"""A slow rollout written from its definition (doublet.search.rollout's docstring), sharing
no code with the kernel: Python loops over the legal plays (the move generator and the
net are tested on their own), its own splitmix64 for the dice, its own luck.

    dice of trial t, move m:  m = 0: strata[0][t % 36]; m = 1: strata[1][(t % 36 + t // 36)
        % 36]; later: the next number of splitmix64 started from (seed, t, stream) modulo 36
        (the ordered roll k: d1 = 1 + k // 6, d2 = 1 + k % 6)
    value(b):  a finished game's result, the database for a pure bear-off, else the net
    play:      the legal play whose position, seen by the opponent, is worst for it (the
               mover's equity after it highest; ties: the first generated), or at 1 ply
               Searcher.best
    luck:      f(r) = the mover's probabilities after its best 0-ply play of r (21 rolls);
               luck = f(rolled) - sum_r w_r f(r), seen by the start side

cube_trial plays the same trial at 0 ply with the cube (doublet.search.rollout_cube's
docstring): before each roll the side on roll's cube decision by Janowski's model from the
net's probabilities, the answer, and the cubeful luck, one scalar decision at a time.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from doublet.core.board import CHECKERS, MY_OFF, OPP_OFF, flip, has_contact, outcome
from doublet.cube import bearoff as CB
from doublet.cube import equity as E
from doublet.cube.state import MAX_CUBE, CubeState
from doublet.nn.eval import Model, evaluate
from doublet.rules import onesided
from doublet.rules.bearoff import bearoff_probs, is_bearoff
from doublet.rules.movegen import legal_outcomes
from doublet.search.searcher import Limits, Searcher
from tests.reference import without_impossible_gammons

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix(z: int) -> int:
    """splitmix64's finaliser (Steele, Lea and Flood 2014)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class SplitMix:
    """splitmix64 started at (seed, pair, stream) as doublet.core.dice documents it."""

    def __init__(self, seed: int, pair: int, stream: int) -> None:
        z = mix((seed + GOLDEN) & MASK)
        z = mix(z ^ pair)
        self.state = mix(z ^ (stream + 1))

    def next(self) -> int:
        self.state = (self.state + GOLDEN) & MASK
        return mix(self.state)


def trial_dice(strata: np.ndarray, quasi: int, seed: int, trial: int, stream: int,
               moves: int) -> list[tuple[int, int]]:  # fmt: skip
    """The first `moves` rolls (d1, d2) of trial `trial`."""
    g = SplitMix(seed & MASK, trial, stream)
    out = []
    for m in range(moves):
        if m < quasi:
            i = trial % 36
            k = int(strata[0][i]) if m == 0 else int(strata[1][(i + trial // 36) % 36])
        else:
            k = g.next() % 36
        out.append((1 + k // 6, 1 + k % 6))
    return out


def result_probs(b: np.ndarray) -> np.ndarray:
    """The side on roll's five probabilities of a finished game."""
    r = outcome(b)
    assert r != 0 and (b[MY_OFF] == CHECKERS or b[OPP_OFF] == CHECKERS)
    if r > 0:
        return np.array([1.0, r >= 2, r >= 3, 0.0, 0.0], float)
    return np.array([0.0, 0.0, 0.0, r <= -2, r <= -3], float)


def value(b: np.ndarray, model: Model) -> np.ndarray:
    """The 0-ply value of b for its side on roll."""
    if outcome(b) != 0:
        return result_probs(b)
    if is_bearoff(b):
        return np.asarray(bearoff_probs(b), float)
    # The rules' zeros: a side with a checker off loses no gammon; in a race, a side with
    # none off and no checker in the other side's home board loses no backgammon. (Races
    # where a backgammon is still possible take the database's ZONE table, which this
    # reference does not restate: its trials must not reach one.)
    if has_contact(b) or not onesided.present(tuple(onesided.shipped())):
        p = without_impossible_gammons(b, evaluate(b, model))
    else:  # a race: the one-sided race net's chances (tests/test_onesided.py holds it)
        p = without_impossible_gammons(
            b, onesided.race_probs(b[None], onesided.shipped())[0].astype(float)
        )
    if not has_contact(b):
        mine_there = any(b[q] > 0 for q in range(19, 25))
        theirs_there = any(b[q] < 0 for q in range(1, 7))
        assert not (mine_there and b[MY_OFF] == 0) and not (theirs_there and b[OPP_OFF] == 0)
        p[2] = p[4] = 0.0  # (with a checker off, or none left there)
    return p


def other_side(p: np.ndarray) -> np.ndarray:
    return np.array([1.0 - p[0], p[3], p[4], p[1], p[2]])


def equity(p: np.ndarray) -> float:
    return float(2 * p[0] - 1 + p[1] + p[2] - p[3] - p[4])


def best_play(b: np.ndarray, d1: int, d2: int, model: Model) -> tuple[np.ndarray, np.ndarray]:
    """(the board after the best 0-ply play, the mover's view; the mover's probabilities)."""
    outs, _ = legal_outcomes(b, d1, d2)
    best, best_p = None, None
    for o in outs:
        p = other_side(value(flip(o), model)).astype(np.float32).astype(float)
        if best_p is None or equity(p) > equity(best_p):
            best, best_p = o, p
    assert best is not None and best_p is not None
    return best, best_p


def trial(model: Model, start: np.ndarray, t: int, strata: np.ndarray, seed: int,
          stream: int, ply: int = 0, truncate: int = 0, bearoff: bool = True,
          quasi: int = 2) -> tuple[np.ndarray, np.ndarray, int]:  # fmt: skip
    """(value, luck, plays) of trial t, both seen by start's side on roll."""
    rolls = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    weights = [(1 if a == b else 2) / 36 for a, b in rolls]
    dice = trial_dice(strata, quasi, seed, t, stream, 1000)
    searcher = Searcher(model) if ply else None
    b = start.copy()
    luck = np.zeros(5)
    for m in range(1001):
        mine = m % 2 == 0  # the start side is on roll
        end = outcome(b) != 0 or (bearoff and is_bearoff(b)) or (truncate and m == truncate)
        if end:
            v = value(b, model)
            return (v if mine else other_side(v)), luck, m
        d1, d2 = dice[m]
        f = {r: best_play(b, r[0], r[1], model)[1] for r in rolls}
        mean = sum(w * f[r] for r, w in zip(rolls, weights, strict=True))
        diff = f[(max(d1, d2), min(d1, d2))] - mean
        luck += diff if mine else np.array([-diff[0], diff[3], diff[4], diff[1], diff[2]])
        if searcher is None:
            after, _ = best_play(b, d1, d2, model)
        else:
            outs, _, _, _ = searcher.analyse(b, d1, d2, Limits(ply=ply))
            after = outs[searcher.best(b, d1, d2, Limits(ply=ply))]
        b = flip(after)
    raise AssertionError("no game is this long")


# -- the cube in the trials (doublet.search.rollout_cube's docstring) --------------------------


def _scale(view: CubeState) -> float:
    return 1.0 if view.is_match else float(view.value)


def _for_other(v: float, view: CubeState) -> float:
    return 1.0 - v if view.is_match else -v


def conversion(p: np.ndarray, b: np.ndarray, view: CubeState) -> tuple[float, float]:
    """No double and double / take per unit of the cube: the exact table's in a small
    money bear-off (doublet.cube.bearoff, tested on its own), else Janowski's."""
    exact, nd, dt = CB.values(b[None], view)
    if exact[0]:
        return float(nd[0]), float(dt[0])
    x = E.efficiency(b)
    return float(E.no_double(p, x, view)[0]), float(E.double_take(p, x, view)[0])


def cubeful(p: np.ndarray, b: np.ndarray, view: CubeState, act: bool) -> float:
    """The 0-ply cubeful value (absolute) of b before its roll, for its side on roll
    with probabilities p in `view`, after that side's cube action when `act`."""
    nd, dt = conversion(p, b, view)
    if not (act and view.may_double() and 2 * view.value <= MAX_CUBE):
        return nd * _scale(view)
    return max(nd, min(dt, E.double_pass(view))) * _scale(view)


def cube_trial(model: Model, start: np.ndarray, t: int, strata: np.ndarray, seed: int,
               stream: int, state: CubeState, act_first: bool, truncate: int = 0,
               bearoff: bool = True, cube_ply: int = 0, small_only: bool = False
               ) -> tuple[float, float, int, int]:  # fmt: skip
    """(value, luck, plays, doubles) of trial t at 0 ply played with the cube from `state`
    (the start side's view), both absolute and seen by the start side (plays -1: it
    ended on a pass, before the cubeless trial's end); the cube decided
    from the net's probabilities (cube_ply 0) or their mean over the rolls after the best
    0-ply play of each (1). small_only: the trial ends at a small bear-off only (a
    rollout whose cube states are all money's), else at any."""
    rolls = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    weights = [(1 if a == b else 2) / 36 for a, b in rolls]
    dice = trial_dice(strata, 2, seed, t, stream, 1000)
    b = start.copy()
    s, luck, doubles = state, 0.0, 0
    for m in range(1001):
        mine = m % 2 == 0
        view = s if mine else s.flipped()
        over = outcome(b) != 0
        # A money rollout's trials end at a small bear-off, whose cubeful values are exact.
        small = not small_only or CB.values(b[None], view)[0][0]
        if over or (bearoff and is_bearoff(b) and small) or (truncate and m == truncate):
            v = cubeful(value(b, model), b, view, not over and (act_first or m > 0))
            return (v if mine else _for_other(v, view)), luck, m, doubles
        bests = {r: best_play(b, r[0], r[1], model) for r in rolls}
        if view.may_double() and 2 * view.value <= MAX_CUBE and (act_first or m > 0):
            p = value(b, model)
            if cube_ply == 1:
                p = sum(w * bests[r][1] for r, w in zip(rolls, weights, strict=True))
            nd, dt = conversion(p, b, view)
            dp = E.double_pass(view)
            if min(dt, dp) - nd > E.OPTIONAL:
                doubles += 1
                if dt > dp:  # a pass: plays is -1 (the trial's own plays go on)
                    v = dp * _scale(view)
                    return (v if mine else _for_other(v, view)), luck, -1, doubles
                new = view.doubled()
                if view.beavers and not view.is_match and dt < 0:
                    new = replace(new, value=4 * view.value)
                view = new
                s = new if mine else new.flipped()
        g = {}
        for r in rolls:
            after, p_after = bests[r]
            g[r] = _for_other(cubeful(other_side(p_after), flip(after), view.flipped(), True),
                              view)  # fmt: skip
        d1, d2 = dice[m]
        lk = g[(max(d1, d2), min(d1, d2))] - sum(w * g[r] for r, w in zip(rolls, weights,
                                                                          strict=True))  # fmt: skip
        luck += lk if mine else -lk
        after, _ = best_play(b, d1, d2, model)
        b = flip(after)
    raise AssertionError("no game is this long")
