"""Cube actions inside rollout trials: a cubeful rollout (doublet.search.rollout).

A trial is played as doublet.search.rollout's kernel plays it (the checker play is the
searcher's cubeless choice, so one played-out trial serves every cube state), and the
kernel records each move's position before its roll. This module then walks the trial
with a cube state, as a game with the cube would go:

- before each roll, the side on roll, when it may double (the cube centered or its own,
  not the Crawford game, below the largest cube), takes its cube decision by Janowski's
  model (doublet.cube.equity, the cube efficiency of the position's class) from the
  probabilities recorded for it: the net's at rollout ply 0, the 1-ply mean at ply 1.
  (a small bear-off in money: the exact values of doublet.cube.bearoff instead). It
  doubles when double / take or double / pass (the opponent answering as suits it)
  is worth more than no double. The opponent then takes (the cube doubled, its own; in
  money play with beavers, a take that the doubler gains from is beavered: the cube
  quadrupled, still the taker's) or passes, which ends the trial at the cube's value;
- at the trial's end: a finished game is scored at the cube as it then stands (gammons,
  backgammons, the Jacoby rule, the match score through the table); a position valued by
  the net or the bear-off database (truncation, the database) gets its 0-ply cubeful
  value for its side on roll after that side's cube action (doublet.search.cubeful's
  leaf_values: exact for a small bear-off in money, where a money trial ends).

Luck adjustment with the cube: before each roll, g(r) is the mover's cubeful value after
the best 0-ply play of roll r (the opponent's 0-ply cubeful value after its cube action,
in the cube state after this turn's cube action), and the luck of the roll rolled is
g(rolled) - sum_r w_r g(r). Each term has mean zero given everything before the roll, so
the adjusted value estimates the same cubeful equity with less variance.

Values are absolute and seen by the trial's start side: money in points of the base
stake (the cube's value counted), a match in match-winning chances. ``walk`` decides
every move between two turns of the cube in one batch; tests/reference_rollout.py walks
the same way move by move and roll by roll, from this docstring.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from doublet.core.board import STANDARD, flip_all
from doublet.core.dice import ROLL_WEIGHTS
from doublet.cube import equity as E
from doublet.cube.state import MAX_CUBE, CubeState
from doublet.search.cubeful import _other, _scale, conversions, flip_probs, leaf_values

_W = ROLL_WEIGHTS.astype(np.float64)


class Record(NamedTuple):
    """One trial as the kernel recorded it (doublet.search.rollout._trial): n plays;
    pre_b[m], pre_p[m] (m <= n); roll_b[m], roll_p[m], rolled[m] (m < n, with luck);
    terminal: the game is over at move n."""

    n: int
    pre_b: np.ndarray
    pre_p: np.ndarray
    roll_b: np.ndarray
    roll_p: np.ndarray
    rolled: np.ndarray
    terminal: bool


def _view(s: CubeState, side: int) -> CubeState:
    """The start side's state `s` seen by `side` (0: the start side)."""
    return s if side == 0 else s.flipped()


def _decisions(probs: np.ndarray, boards: np.ndarray, view: CubeState
               ) -> tuple[np.ndarray, np.ndarray, float]:  # fmt: skip
    """no double and double / take (rows) and double / pass, per unit of the cube (money)
    or as MWC (match), for positions before the roll of view's mover."""
    nd, dt = conversions(probs, boards, view, True, STANDARD)
    assert dt is not None  # walk asks only where view's mover may double
    return nd, dt, E.double_pass(view)


def _answer(view: CubeState, dt: float, dp: float) -> CubeState | None:
    """The state after the opponent's answer to view's mover's double: None for a pass;
    a take (the cube doubled, the taker's), beavered where the rules allow and it pays."""
    if dt > dp:
        return None
    new = view.doubled()
    if view.beavers and not view.is_match and dt < 0 and 4 * view.value <= MAX_CUBE:
        new = replace(new, value=4 * view.value)
    return new


def _luck(rec: Record, ks: np.ndarray, view: CubeState) -> float:
    """The sum of the luck of moves ks (all of view's mover's), in view's absolute units."""
    k = len(ks)
    boards = flip_all(rec.roll_b[ks].reshape(-1, rec.roll_b.shape[-1]))
    probs = flip_probs(rec.roll_p[ks].reshape(-1, 5))
    g = _other(leaf_values(probs, boards, view.flipped(), True, STANDARD), view).reshape(k, -1)
    return float((g[np.arange(k), rec.rolled[ks]] - g @ _W).sum())


def _end(rec: Record, s: CubeState, act_first: bool) -> float:
    """The trial's value at its end in state s, seen by the start side: a finished game
    as it is; a position valued by the net or the database after its side's cube action
    (none when that is the start position of a no-double or double / take trial)."""
    view = _view(s, rec.n % 2)
    act = not rec.terminal and (rec.n > 0 or act_first)
    v = leaf_values(rec.pre_p[rec.n][None].astype(np.float64), rec.pre_b[rec.n][None], view,
                    act, STANDARD)[0]  # fmt: skip
    return float(v if rec.n % 2 == 0 else _other(v, view))


def walk(rec: Record, state: CubeState, act_first: bool, luck_on: bool) -> tuple[float, float]:
    """(value, luck) of a recorded trial played with the cube from `state` (the start
    side's view); act_first: the start side may take a cube action before its first roll
    (False for a no-double or a double / take rollout, whose first action is given)."""
    s, m, luck = state, 0, 0.0
    n = rec.n
    while True:
        d = n  # the next double, at or after m
        for side in (0, 1):
            view = _view(s, side)
            if not view.may_double():
                continue
            ks = np.arange(m + (m - side) % 2, n, 2)
            if not act_first:
                ks = ks[ks > 0]
            if len(ks) == 0:
                continue
            nd, dt, dp = _decisions(rec.pre_p[ks].astype(np.float64), rec.pre_b[ks], view)
            doubles = np.minimum(dt, dp) - nd > E.OPTIONAL
            if doubles.any():
                d = min(d, int(ks[np.argmax(doubles)]))
        if luck_on:
            for side in (0, 1):
                ks = np.arange(m + (m - side) % 2, d, 2)
                if len(ks):
                    view = _view(s, side)
                    lk = _luck(rec, ks, view)
                    luck += lk if side == 0 else -lk
        if d == n:
            return _end(rec, s, act_first), luck
        side = d % 2
        view = _view(s, side)
        _, dt, dp = _decisions(rec.pre_p[d : d + 1].astype(np.float64), rec.pre_b[d : d + 1],
                               view)  # fmt: skip
        new = _answer(view, float(dt[0]), dp)
        if new is None:  # a pass: the doubler wins the cube's value
            v = np.asarray(dp * _scale(view))
            return float(v if side == 0 else _other(v, view)), luck
        s = _view(new, side)
        if luck_on:  # this roll's luck, in the state after the cube's turn
            lk = _luck(rec, np.array([d]), new)
            luck += lk if side == 0 else -lk
        m = d + 1


__all__ = ["Record", "walk"]
