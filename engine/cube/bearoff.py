"""Exact cubeful money equities of the small bear-offs, where Janowski's model is least
right: both sides with at most SMALL_CHECKERS (6) checkers left on their home boards,
as GNU Backgammon's two-sided bear-off database holds them.

With 9 or more checkers off each side nobody can be gammoned, so a game is worth the
cube's value to its winner, and a money game's value per unit of the cube depends only
on the two positions, whose turn it is and where the cube is. For the side on roll with
small position i against the opponent's j, before its roll, ``ND[s, i, j]`` is its value
per unit of the cube when it does not double now, the cube s = 0 centered, 1 its own,
2 the opponent's, and both sides play on perfectly, checkers and cube alike:

    ND[s, i, j] = sum over the 21 rolls r of w(r) * max over the plays i -> a of
                  (+1 if a has every checker off, else -E[s', j, a]),

s' the same cube seen by the opponent (centered stays centered, owned swaps), and E the
value after the side on roll's cube action:

    E[centered] = max(ND[0], min(DT, +1)),  E[own] = max(ND[1], min(DT, +1)),
    E[opponent's] = ND[2],  where DT = 2 ND[2] (double / take: the cube doubled, the
    taker's) and +1 is double / pass.

With beavers a taker beavers when that gains (ND[2] < 0), and DT = 4 ND[2]; but then
4 ND[2] < ND[2] <= ND[0], ND[1] (a cube of one's own, or centered, is worth at least the
opponent's), so nobody doubles where a beaver could follow, and the table is the same:
``values`` gives the beavered DT from it.

A play lowers its side's pips, so the pairs are filled in order of their total pips,
each from pairs filled before it (doublet.rules.bearoff._small_moves). The cube is taken
to be always available to be turned again (no largest value): ``values`` uses the table
only while the cube is at most MAX_TABLE_CUBE. The Jacoby rule changes nothing (no
gammons). A match's equities depend on the score: the table is money's only.

Built with numba on first use (a few seconds) and cached on disk beside the bear-off
database; tests/test_cube_bearoff.py checks it against a recursion written from the
definition above and against GNU Backgammon's own table.
"""

from __future__ import annotations

import contextlib

import numpy as np

from doublet.core.board import MY_OFF, OPP_OFF, SIZE
from doublet.core.dice import N_ROLLS, ROLL_WEIGHTS
from doublet.core.doubling import MAX_CUBE
from doublet.core.files import atomic_open
from doublet.core.jit import njit
from doublet.cube.state import CubeState
from doublet.rules.bearoff import _BINOM, _cache_dir, _small_moves, _small_pair
from doublet.rules.movegen import Workspace

TABLE_VERSION = 1
CENTERED, OWN, THEIRS = 0, 1, 2
OWNER_INDEX = {"centered": CENTERED, "mover": OWN, "opponent": THEIRS}
# Deeper in a game the cube could reach the largest value, where the table (which lets
# it be turned again) would be wrong: beyond this cube, Janowski's model as elsewhere.
MAX_TABLE_CUBE = MAX_CUBE // 64


@njit
def _build(children, nchild, order, empty):
    """ND (3, S, S) float64 as the module defines it."""
    ns = children.shape[0]
    nd = np.zeros((3, ns, ns), np.float64)
    eq = np.zeros((3, ns, ns), np.float64)  # after the side on roll's cube action
    swap = np.array([CENTERED, THEIRS, OWN], np.int64)
    w = np.zeros(N_ROLLS, np.float64)
    for r in range(N_ROLLS):
        w[r] = ROLL_WEIGHTS[r]
    for o in range(ns * ns):
        i = order[o] // ns
        j = order[o] % ns
        if i == empty or j == empty:  # a game over (never on roll in play)
            v = 1.0 if i == empty else -1.0
            for s in range(3):
                nd[s, i, j] = v
                eq[s, i, j] = v
            continue
        for s in range(3):
            t = swap[s]
            total = 0.0
            for r in range(N_ROLLS):
                best = -np.inf
                for c in range(nchild[i, r]):
                    a = children[i, r, c]
                    v = 1.0 if a == empty else -eq[t, j, a]
                    if v > best:
                        best = v
                total += w[r] * best
            nd[s, i, j] = total
        x = nd[THEIRS, i, j]
        doubled = min(2.0 * x, 1.0)
        eq[CENTERED, i, j] = max(nd[CENTERED, i, j], doubled)
        eq[OWN, i, j] = max(nd[OWN, i, j], doubled)
        eq[THEIRS, i, j] = x
    return nd


@njit
def _pairs(boards, small, binom, out):
    """out[k] = (i, j): the small indices of boards[k]'s side on roll and opponent, or
    (-1, -1) where it is not a small bear-off."""
    for k in range(boards.shape[0]):
        out[k, 0], out[k, 1] = _small_pair(boards[k], small, binom)


_TABLE: tuple[np.ndarray, np.ndarray] | None = None


def build() -> tuple[np.ndarray, np.ndarray]:
    """(small (N_POSITIONS,) int64, ND (3, S, S) float64): computed now."""
    ws = Workspace()
    small, children, nchild, order = _small_moves(_BINOM, ws.acc, ws.tmp, ws.scratch)
    return small, _build(children, nchild, order, int(small[0]))


def table() -> tuple[np.ndarray, np.ndarray]:
    """(small, ND as float32): from the disk cache, or built and cached (kept in memory
    where the cache cannot be written)."""
    global _TABLE
    if _TABLE is None:
        path = _cache_dir() / f"bearoff-cube-v{TABLE_VERSION}.npz"
        try:
            with np.load(path, allow_pickle=False) as z:
                small, nd = z["small"], z["nd"]
            if nd.ndim != 3 or nd.shape[0] != 3 or nd.shape[1] != nd.shape[2]:
                raise ValueError(f"{path} has the wrong shape")
        except (OSError, ValueError, KeyError):
            small, full = build()
            nd = full.astype(np.float32)
            with contextlib.suppress(OSError):  # a read-only home: kept in memory
                path.parent.mkdir(parents=True, exist_ok=True)
                with atomic_open(path) as f:
                    np.savez_compressed(f, small=small, nd=nd)
        _TABLE = (np.ascontiguousarray(small, dtype=np.int64),
                  np.ascontiguousarray(nd, dtype=np.float32))  # fmt: skip
    return _TABLE


def applies(state: CubeState) -> bool:
    """Whether the table values positions in `state`: money with the cube in play, at
    most MAX_TABLE_CUBE."""
    return not state.is_match and state.value <= MAX_TABLE_CUBE


def values(boards: np.ndarray, state: CubeState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For positions before their roll (N, SIZE), each seen by its side on roll, in
    `state` (that side's view): (exact (N,) bool: the table values it, no double (N,),
    double / take (N,)), both per unit of the cube as doublet.cube.equity gives them
    (NaN where not exact). Nothing is exact where the table does not apply (`applies`)."""
    b = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, SIZE)
    n = b.shape[0]
    nan = np.full(n, np.nan)
    # (9 or more off each side: a cheap test first, so that a search of contact
    # positions neither loads the table nor ranks any board)
    if not applies(state) or not ((b[:, MY_OFF] >= 9) & (b[:, OPP_OFF] >= 9)).any():
        return np.zeros(n, bool), nan, nan.copy()
    small, nd = table()
    ij = np.empty((n, 2), np.int64)
    _pairs(b, small, _BINOM, ij)
    exact = ij[:, 0] >= 0
    i, j = ij[exact, 0], ij[exact, 1]
    no_double, double_take = nan, nan.copy()
    no_double[exact] = nd[OWNER_INDEX[state.owner], i, j]
    theirs = nd[THEIRS, i, j].astype(np.float64)
    double_take[exact] = np.where(state.beavers & (theirs < 0), 4.0, 2.0) * theirs
    return exact, no_double, double_take


__all__ = ["MAX_TABLE_CUBE", "OWNER_INDEX", "applies", "build", "table", "values"]
