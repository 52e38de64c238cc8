"""The match equity table: the Kazaross XG2 table to 25 points (data/met_kazaross_xg2.json,
as GNU Backgammon 1.07 ships it and uses by default), pre- and post-Crawford.

``mwc(a, b, crawford_done)`` is the match-winning chance of a side needing `a` points
against one needing `b`, at the start of a game with the cube at 1:

- a <= 0: 1 (the match is won); b <= 0: 0;
- if the Crawford game has been played (``crawford_done``) and a side is 1-away, the
  post-Crawford table (the trailer's chance against a 1-away leader);
- otherwise the pre-Crawford table, whose 1-away row is the leader's chance in the
  Crawford game itself.

A game's results are looked up with ``crawford_done`` = this game is the Crawford game or
a later one: the game after the one in which a side first reaches 1-away is the Crawford
game. Gammon values (``gammon_values``) follow from the table, as GNU Backgammon defines
them: what winning a gammon instead of a single game adds, over half of what a single
game swings (so 1 in money play).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

import numpy as np

from doublet.cube.state import MAX_LENGTH, CubeState


@lru_cache(maxsize=1)
def tables() -> tuple[np.ndarray, np.ndarray]:
    """(pre (25, 25), post (25,)): pre[i, j] the MWC needing i+1 against j+1; post[j] the
    trailer's needing j+1 against a 1-away leader after the Crawford game."""
    text = resources.files("doublet.cube").joinpath("data/met_kazaross_xg2.json").read_text()
    doc = json.loads(text)
    pre = np.array(doc["pre_crawford_table"], dtype=np.float64)
    post = np.array(doc["post_crawford_table"], dtype=np.float64)
    assert pre.shape == (MAX_LENGTH, MAX_LENGTH) and post.shape == (MAX_LENGTH,)
    return pre, post


def mwc(a: int, b: int, crawford_done: bool) -> float:
    """The match-winning chance needing `a` against `b` at the start of a game (see the
    module docstring)."""
    if a <= 0:
        return 1.0
    if b <= 0:
        return 0.0
    pre, post = tables()
    if crawford_done:
        if a == 1:
            return float(1.0 - post[b - 1])
        if b == 1:
            return float(post[a - 1])
    return float(pre[a - 1, b - 1])


def crawford_done(state: CubeState) -> bool:
    """Whether a game played in `state` is the Crawford game or a later one, so that its
    results are looked up in the post-Crawford table."""
    return state.crawford or state.post_crawford


def now(state: CubeState) -> float:
    """The mover's MWC at the start of a game in `state` with the cube at 1."""
    a, b = state.away
    if state.post_crawford:
        return mwc(a, b, True)
    return mwc(a, b, False)


def result(state: CubeState, points: int) -> float:
    """The mover's MWC after this game ends with the mover winning `points` (negative: the
    opponent wins that many)."""
    a, b = state.away
    done = crawford_done(state)
    if points >= 0:
        return mwc(a - points, b, done)
    return mwc(a, b + points, done)


def gammon_values(state: CubeState) -> dict[str, float]:
    """The gammon and backgammon values of each side at this score and cube, from the
    table, as GNU Backgammon defines them (its "gammon price"): for the mover, what a
    gammon adds to a single win, (MWC(win gammon) - MWC(win single)), over half the swing
    of a single game, (MWC(win single) - MWC(lose single)) / 2; a backgammon's value is
    what it adds to a gammon, on the same scale; likewise for the opponent, from its
    side. Money play: 1 each (0 with the Jacoby rule and a centered cube)."""
    v = state.value
    if not state.is_match:
        g = 0.0 if (state.jacoby and state.owner == "centered") else 1.0
        return {"mover_gammon": g, "mover_backgammon": g, "opponent_gammon": g,
                "opponent_backgammon": g}  # fmt: skip
    win, lose = result(state, v), result(state, -v)
    swing = (win - lose) / 2.0
    return {
        "mover_gammon": (result(state, 2 * v) - win) / swing,
        "mover_backgammon": (result(state, 3 * v) - result(state, 2 * v)) / swing,
        "opponent_gammon": (lose - result(state, -2 * v)) / swing,
        "opponent_backgammon": (result(state, -2 * v) - result(state, -3 * v)) / swing,
    }


def to_money(state: CubeState, m: float | np.ndarray) -> float | np.ndarray:
    """A match-winning chance as money-equivalent equity at this cube, as GNU Backgammon
    shows it: -1 for losing the cube's value, +1 for winning it, linear between."""
    win, lose = result(state, state.value), result(state, -state.value)
    return (2.0 * m - (win + lose)) / (win - lose)


__all__ = ["crawford_done", "gammon_values", "mwc", "now", "result", "tables", "to_money"]
