"""Cube decisions and cubeful play values by search over the dice.

Two ways to a cubeful equity at n ply, both measured (benchmarks/cube.py, RESULTS.md):

- ``"janowski"``: the searcher's cubeless n-ply probabilities of the position, converted
  once with Janowski's model (doublet.cube.equity).
- ``"cubeful"``: a cubeful n-ply search, as GNU Backgammon's cubeful evaluation does it.
  Every node is a position before a roll with a set of cube states (one for each branch
  of the cube decisions above it); a node at depth 0 is converted with Janowski's model,
  and the side on roll there takes its best cube action (no double, or a double the
  opponent answers as suits it). A node at depth d > 0 averages over the 21 rolls the
  value of the play the mover picks, judged one ply down: the play is picked per roll
  and per state (each cube state after the node's cube action its own) by its 0-ply
  cubeful value, and the states that picked the same play are searched together below
  it; the side on roll takes its cube action from these averages (no double: the cube as
  it is; double / take: the cube doubled and the opponent's, twice that when the taker
  beavers; double / pass: the cube's value won). A turn that goes on (an Acey-Deucey
  1-2 rolling again) is the same side's and has no cube action.

In money play a small bear-off (both sides with at most 6 checkers left, nobody can be
gammoned) has exact cubeful values (doublet.cube.bearoff, as GNU Backgammon's two-sided
database): the cubeful method takes them in place of Janowski's conversion at every node
they apply to, at any depth (a root of its own is exact at any ply: CubeAnalysis.exact).

Values inside the search are absolute: money in points of the base stake (the cube's
value counted), match play in match-winning chances, each for the side on roll of its
node. doublet.cube.equity.Decision normalises them as GNU Backgammon shows them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from doublet.core.board import ACEY_DEUCEY, STANDARD, Board, flip_all
from doublet.core.dice import ROLL_WEIGHTS, ROLLS_21
from doublet.core.errors import DoubletError
from doublet.cube import bearoff as CB
from doublet.cube import equity as E
from doublet.cube.met import to_money
from doublet.cube.state import CubeState
from doublet.search.searcher import MAX_PLY, BudgetExceeded, Limits, Searcher
from doublet.search.watch import stopping

METHODS = ("cubeful", "janowski")
DEFAULT_METHOD = "cubeful"
# Acey-Deucey's 1-2 can have over 800,000 plays: its cubeful search stops at 1 ply.
ACEY_DEUCEY_CUBE_PLY = 1


def flip_probs(p: np.ndarray) -> np.ndarray:
    """The five probabilities seen by the other side (rows of (N, 5) or one (5,))."""
    q = np.asarray(p, dtype=np.float64)
    return np.stack([1.0 - q[..., 0], q[..., 3], q[..., 4], q[..., 1], q[..., 2]], axis=-1)


def _other(v: np.ndarray, state: CubeState) -> np.ndarray:
    """Absolute values for one side as the other side's."""
    return 1.0 - v if state.is_match else -v


def _scale(state: CubeState) -> float:
    """From doublet.cube.equity's units to absolute ones: money per unit of the cube
    times its value; a match's MWC as it is."""
    return 1.0 if state.is_match else float(state.value)


def next_views(outs: np.ndarray, again: np.ndarray, probs: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The positions after plays (the mover's view, with the mover's probabilities) seen
    by the side to roll next, with that side's probabilities: the opponent's, or the
    mover's own after an Acey-Deucey 1-2 rolling again."""
    ag = np.asarray(again, dtype=bool)[:, None]
    return np.where(ag, outs, flip_all(outs)), np.where(ag, probs, flip_probs(probs))


def conversions(probs: np.ndarray, boards: np.ndarray, state: CubeState, take: bool,
                variant: int, table: bool = True
                ) -> tuple[np.ndarray, np.ndarray | None]:  # fmt: skip
    """No double and double / take (None unless `take` and the mover may double) per
    unit of the cube (doublet.cube.equity's units) of positions before their roll, each
    with its side on roll's probabilities and board, in `state` (that side's view):
    Janowski's conversion, or with `table` the exact values of the small bear-offs of
    standard backgammon in money (doublet.cube.bearoff; Acey-Deucey's 1-2 rolls again)."""
    x = E.efficiencies(boards)
    nd = E.no_double(probs, x, state)
    dt = E.double_take(probs, x, state) if take and state.may_double() else None
    if variant != STANDARD or not table:
        return nd, dt
    exact, end, edt = CB.values(boards, state)
    if exact.any():
        nd = np.where(exact, end, nd)
        if dt is not None:
            dt = np.where(exact, edt, dt)
    return nd, dt


def leaf_values(probs: np.ndarray, boards: np.ndarray, state: CubeState, act: bool,
                variant: int) -> np.ndarray:  # fmt: skip
    """The 0-ply cubeful value (absolute) of positions before their roll, each with its
    side on roll's probabilities and board, in `state` (that side's view): after the
    side's best cube action when `act`, else without one (conversions)."""
    nd, dt = conversions(probs, boards, state, act, variant)
    if dt is None:
        return nd * _scale(state)
    sc = _scale(state)
    return np.asarray(E.optimal(nd * sc, dt * sc, E.double_pass(state) * sc, state))


def values_after(side_probs: np.ndarray, views: np.ndarray, again: np.ndarray,
                 state: CubeState, variant: int) -> np.ndarray:  # fmt: skip
    """The mover's absolute value after plays, in `state` (the mover's view), from the
    positions after them (next_views): the opponent's 0-ply value after its cube action,
    or the mover's own without one when it rolls again."""
    if not again.any():
        return _other(leaf_values(side_probs, views, state.flipped(), True, variant), state)
    stay = leaf_values(side_probs, views, state, False, variant)
    if again.all():
        return stay
    turn = _other(leaf_values(side_probs, views, state.flipped(), True, variant), state)
    return np.where(again, stay, turn)


@dataclass
class Node:
    """A searched node's values, per state (absolute, the side on roll's): after its cube
    action, with no double, with double / take (None where it may not double); and the
    cubeless probabilities the search gives it."""

    optimal: list[float]
    no_double: list[float]
    double_take: list[float | None]
    probs: np.ndarray


class CubefulSearch:
    """The cubeful n-ply search over a Searcher's move generator and nets."""

    def __init__(self, searcher: Searcher, deadline: float | None = None) -> None:
        self.searcher = searcher
        self.deadline = deadline  # time.perf_counter() after which a node raises BudgetExceeded

    def _rolls(self, board: Board, branches: list[CubeState]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """Every play of the 21 rolls and the one the mover picks for each roll in each
        state of `branches`, by its 0-ply cubeful value there: (the boards after the plays
        seen by the side to roll next (N, SIZE), whether that is the mover again (N,),
        that side's 0-ply probabilities (N, 5), picks (B, 21): the index of each state's
        play of each roll, values (B, 21): the mover's 0-ply values of those plays). All
        the rolls' plays are valued in one batch."""
        out, again, prob, starts = self.searcher.all_rolls(board)
        views, side_probs = next_views(out, again, prob)
        picks = np.empty((len(branches), len(starts) - 1), np.int64)
        values = np.empty(picks.shape)
        for k, s in enumerate(branches):
            value = values_after(side_probs, views, again, s, self.searcher.variant)
            # The best play of each roll (ties: the first), one segment of the batch a roll.
            best = np.maximum.reduceat(value, starts[:-1])
            tops = np.flatnonzero(value >= np.repeat(best, np.diff(starts)))
            picks[k] = tops[np.searchsorted(tops, starts[:-1])]
            values[k] = value[picks[k]]
        return views, again, side_probs, picks, values

    def node(self, board: Board, states: list[CubeState], depth: int, act: bool) -> Node:
        """Search `board` (before its side on roll rolls) `depth` plies deep for each state."""
        b = np.asarray(board, dtype=np.int8)
        if (self.deadline is not None and time.perf_counter() > self.deadline) or stopping(
                self.searcher):  # fmt: skip
            raise BudgetExceeded("the cubeful search passed its time budget, or was stopped")
        if depth == 0 or all(exact_for(b, s, self.searcher.variant) for s in states):
            p = self.searcher.evaluate(b, Limits(ply=0)).astype(np.float64)
            return self._leaf(p, b, states, act)
        branches: list[CubeState] = []  # the states after this node's cube action
        for s in states:
            branches.append(s)
            if act and s.may_double():
                branches.append(s.doubled())
        views, again, side_probs, picks, values = self._rolls(b, branches)
        weights = ROLL_WEIGHTS.astype(np.float64)
        totals = np.zeros(len(branches))
        if depth == 1:
            totals = values @ weights
            first = picks[0]  # the first state's plays give the node's cubeless chances
            probs = weights @ np.where(again[first, None], side_probs[first],
                                       flip_probs(side_probs[first]))  # fmt: skip
        else:
            probs = np.zeros(5)
            for r in range(len(ROLLS_21)):
                w = float(weights[r])
                # The states that picked the same play are searched together below it.
                for i in dict.fromkeys(picks[:, r].tolist()):
                    ks = [k for k in range(len(branches)) if picks[k, r] == i]
                    group = [branches[k] for k in ks]
                    child = group if again[i] else [s.flipped() for s in group]
                    sub = self.node(views[i], child, depth - 1, not again[i])
                    for v, k, s in zip(sub.optimal, ks, group, strict=True):
                        totals[k] += w * (v if again[i] else _other(np.asarray(v), s))
                    if ks[0] == 0:
                        probs += w * (sub.probs if again[i] else flip_probs(sub.probs))
        out = Node([], [], [], probs)
        k = 0
        for s in states:
            nd = float(totals[k])
            k += 1
            dt = None
            opt = nd
            if act and s.may_double():
                dt = float(totals[k])
                k += 1
                if s.beavers and not s.is_match and dt < 0:  # the taker beavers, as
                    dt *= 2.0  # doublet.cube.equity.double_take has it at the leaves
                opt = float(E.optimal(nd, dt, E.double_pass(s) * _scale(s), s))
            out.optimal.append(opt)
            out.no_double.append(nd)
            out.double_take.append(dt)
        return out

    def _leaf(self, p: np.ndarray, b: Board, states: list[CubeState], act: bool,
              exact: bool = True) -> Node:  # fmt: skip
        """A node's values by conversions (exact: the bear-off table where it applies),
        or by Janowski's model alone (not exact)."""
        out = Node([], [], [], p)
        for s in states:
            nds, dts = conversions(p, np.asarray(b)[None], s, act, self.searcher.variant, exact)
            nd = float(nds[0]) * _scale(s)
            dt = None
            opt = nd
            if dts is not None:
                dt = float(dts[0]) * _scale(s)
                opt = float(E.optimal(nd, dt, E.double_pass(s) * _scale(s), s))
            out.optimal.append(opt)
            out.no_double.append(nd)
            out.double_take.append(dt)
        return out


@dataclass(frozen=True)
class CubeAnalysis:
    """A cube decision with the cubeless probabilities behind it, the depth and method."""

    decision: E.Decision | None  # None: the mover may not double (see state.why_no_double)
    no_double: float  # normalised, as GNU Backgammon shows it
    no_double_mwc: float | None
    probs: np.ndarray
    ply: int
    method: str
    exact: bool = False  # the values are the bear-off table's (doublet.cube.bearoff)


def exact_for(board: Board, state: CubeState, variant: int) -> bool:
    """Whether doublet.cube.bearoff's table gives `board`'s exact cubeful values in `state`
    (a table's value is final: the search does not go below it)."""
    return variant == STANDARD and bool(CB.values(np.asarray(board)[None], state)[0][0])


def check_ply(ply: int, variant: int) -> int:
    if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_PLY:
        raise DoubletError(f"ply must be an integer 0..{MAX_PLY}, got {ply!r}")
    if variant == ACEY_DEUCEY:
        return min(ply, ACEY_DEUCEY_CUBE_PLY)
    return ply


def cube_decision(searcher: Searcher, board: Board, state: CubeState, ply: int,
                  method: str = DEFAULT_METHOD, max_evals: int = 0,
                  deadline: float | None = None, act: bool = True) -> CubeAnalysis:  # fmt: skip
    """The mover's cube decision before its roll, `ply` deep (Acey-Deucey: at most
    ACEY_DEUCEY_CUBE_PLY), by `method` ("cubeful" or "janowski", see the module).
    max_evals bounds a janowski search (Searcher.evaluate), deadline a cubeful one
    (time.perf_counter()); past either, BudgetExceeded. Without `act` only playing on is
    valued (decision None), as where the mover may not double."""
    if method not in METHODS:
        raise DoubletError(f"the cube method is one of {', '.join(METHODS)}, got {method!r}")
    ply = check_ply(ply, searcher.variant)
    b = np.asarray(board, dtype=np.int8)
    scale = _scale(state)
    exact = method == "cubeful" and exact_for(b, state, searcher.variant)
    if method == "janowski" or ply == 0 or exact:
        p = searcher.evaluate(b, Limits(ply=0 if exact else ply), max_evals).astype(np.float64)
        node = CubefulSearch(searcher)._leaf(p, b, [state], act, exact=method == "cubeful")
    else:
        node = CubefulSearch(searcher, deadline).node(b, [state], ply, act)
    nd = node.no_double[0]
    dt = node.double_take[0]
    mwc = nd if state.is_match else None
    if dt is None:
        nd_norm = float(to_money(state, nd)) if state.is_match else nd / scale
        return CubeAnalysis(None, nd_norm, mwc, node.probs, ply, method, exact)
    decision = E.decide_values(nd / scale, dt / scale, state)
    return CubeAnalysis(decision, decision.no_double, mwc, node.probs, ply, method, exact)


def play_values(searcher: Searcher, boards: np.ndarray, again: np.ndarray, probs: np.ndarray,
                state: CubeState) -> np.ndarray:  # fmt: skip
    """The mover's cubeful value (absolute) after each play of a roll in `state` (the
    mover's view): the probabilities of each play (the mover's, after it, at the depth it
    was searched to) converted with Janowski's model for the side to roll next, who
    takes its cube action first (none after an Acey-Deucey 1-2 rolling again)."""
    ag = np.asarray(again, dtype=bool)
    views, side_probs = next_views(boards, ag, probs)
    return values_after(side_probs, views, ag, state, searcher.variant)


__all__ = [
    "ACEY_DEUCEY_CUBE_PLY",
    "DEFAULT_METHOD",
    "METHODS",
    "CubeAnalysis",
    "CubefulSearch",
    "conversions",
    "cube_decision",
    "exact_for",
    "flip_probs",
    "leaf_values",
    "next_views",
    "play_values",
    "values_after",
]
