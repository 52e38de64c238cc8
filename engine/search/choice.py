"""One of each decision: the ranking of a roll's plays, the play a searcher picks, and
the depth a front end searches at. Analysis, the terminal and browser games, the
duplicate-dice harnesses and training all import these; none re-derives them.

- ``ranking(probs, plies[, equities])``: the plays searched deepest first, by cubeless
  equity (or by the cubeful equities given, at a match score or an owned cube), then the
  rest by theirs (each at the ply it was searched to); ties by the lower index.
- ``best_index(probs, plies)``: the first of that ranking, the play chosen
  (doublet.search.searcher's ``_best_index`` kernel, which Searcher.best runs).
- ``choose(searcher, board, d1, d2, ply[, state])``: that play's outcome board and again
  flag (with a cube state: the best by cubeful equity, as ``doublet analyse`` ranks);
  ``ply`` may be a whole Limits (the search's filters and pruning too).
- ``engine_depth(variant, ply, dice)`` and the front ends' ``MAX_PLAY_PLY`` /
  ``DEFAULT_PLY``: the search depth of a game the engine plays.

Equities are those of doublet.nn.eval.equity (float64 from the float32 probabilities),
the same numbers the search's kernels compare.
"""

from __future__ import annotations

import numpy as np

from doublet.core.board import ACEY_DEUCEY, Board
from doublet.cube.state import CubeState
from doublet.nn.eval import equity
from doublet.search.cubeful import play_values
from doublet.search.searcher import Limits, Searcher, _best_index

# The deepest search a game front end (doublet play, doublet serve) offers, and its
# default by variant. Acey-Deucey searches at most ACEY_DEUCEY_MAX_PLY, and a 1-2 (over
# 800,000 plays in some positions) at 0 ply, so that no move takes more than a few seconds.
MAX_PLAY_PLY = 3
DEFAULT_PLY = {"standard": 2, "acey-deucey": 1}
ACEY_DEUCEY_MAX_PLY = 1


def ranking(probs: np.ndarray, plies: np.ndarray, equities: np.ndarray | None = None) -> list[int]:
    """Indices of the plays, best first: deepest searched first, then by equity: the
    cubeless equity of `probs`, or the given `equities` (cubeful, at a match score or an
    owned cube: doublet.search.cubeful.play_values)."""
    if equities is None:
        eq = np.asarray(equity(probs), dtype=np.float64).reshape(-1)
    else:
        eq = np.asarray(equities, dtype=np.float64).reshape(-1)
    depth = np.asarray(plies, dtype=np.int64).reshape(-1)
    # np.lexsort sorts by its last key first and is stable: ties keep the index order.
    return np.lexsort((-eq, -depth)).tolist()


def best_index(probs: np.ndarray, plies: np.ndarray) -> int:
    """The chosen play: the first of ranking(probs, plies)."""
    p = np.ascontiguousarray(probs, dtype=np.float32)
    d = np.ascontiguousarray(plies, dtype=np.int64)
    return int(_best_index(p, d, len(d)))


def choose(searcher: Searcher, board: Board, d1: int, d2: int, ply: int | Limits,
           state: CubeState | None = None) -> tuple[Board, bool]:  # fmt: skip
    """The board after the play the searcher picks at `ply` (the mover's view; a Limits:
    searched with those settings) and whether the mover rolls again: by cubeless equity,
    or with a cube `state` (a game played with the cube) by the cubeful equity after the
    play (play_values)."""
    limits = ply if isinstance(ply, Limits) else Limits(ply=ply)
    boards, again, probs, plies = searcher.analyse(board, d1, d2, limits)
    if state is None:
        i = best_index(probs, plies)
    else:
        i = ranking(probs, plies, play_values(searcher, boards, again, probs, state))[0]
    return boards[i], bool(again[i])


def engine_depth(variant: int, ply: int, dice: tuple[int, int]) -> int:
    """The depth the engine searches a roll at in a game: `ply`, but in Acey-Deucey at
    most ACEY_DEUCEY_MAX_PLY, and 0 for a 1-2."""
    if variant != ACEY_DEUCEY:
        return ply
    return 0 if sorted(dice) == [1, 2] else min(ply, ACEY_DEUCEY_MAX_PLY)


__all__ = [
    "ACEY_DEUCEY_MAX_PLY",
    "DEFAULT_PLY",
    "MAX_PLAY_PLY",
    "best_index",
    "choose",
    "engine_depth",
    "ranking",
]
