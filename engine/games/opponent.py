"""The engine as an opponent: its plays, its cube actions, its answers to doubles and to
resignations, each by the search at the engine's depth. The terminal and the browser
import these; neither decides for the engine itself.

- ``engine_play(game, ply)``: the play for the side on roll's dice (cubeless in a game
  without the cube; with it, the best by cubeful equity, doublet.search.choice.choose).
- ``engine_doubles(game, ply)``: whether the side on roll doubles now (the cube decision
  of doublet.search.cubeful at `ply`: "Double, ..." or "Redouble, ..."; an optional
  double and "too good" are not doubled; nor, even with noise, a dead cube in a match,
  one at least as large as both sides' away scores: the double would change nothing,
  and a noisy player would redouble it without end).
- ``engine_answer(game, ply)``: "take", "beaver" or "pass" for the double waiting.
- ``engine_step(game, ply)``: the next of these, for self-play (both sides the engine).
- ``noise`` (each of the three, with a seeded ``rng``): a weaker player for self-play
  (benchmarks/selfplay_matches.py). Gaussian noise of that standard deviation is added
  to the equity of each play before the best is taken (cubeful, money-equivalent, in
  units of the cube) and to each of the cube decision's three equities (no double,
  double/take, double/pass) before its action is read from them; a new draw for every
  decision.
- ``playing_on(game, ply)``: the value of the game to the side on roll, both sides
  acting well from here (absolute: money points with the cube's value, a match's MWC).
- ``resignation(game, side, points, ply)``: whether the other side accepts `side`'s
  resignation of a single game, gammon or backgammon (`points` 1, 2, 3): it does when
  the resignation is worth at least as much to it as playing on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from doublet.cube import met
from doublet.cube.equity import Decision, action_words, optimal
from doublet.formats.position import Play
from doublet.games.game import Game, GameError
from doublet.nn.eval import equity
from doublet.rules.movegen import legal_outcomes
from doublet.search.analysis import play_equities, searcher
from doublet.search.choice import choose, ranking
from doublet.search.cubeful import cube_decision, play_values
from doublet.search.searcher import Limits

# A resignation exactly as good as playing on is accepted; this much of rounding in the
# engine's favour is forgiven.
EPSILON = 1e-9


def engine_play(game: Game, ply: int = 0, model: Any = None, noise: float = 0.0,
                rng: np.random.Generator | None = None) -> Play:  # fmt: skip
    """The play the engine chooses for the side on roll at `ply` (only that play is
    written out, see Game.play); with `noise`, see the module."""
    if game.phase != "move":
        raise GameError(f"no play to choose: the game is at {game.phase!r}")
    assert game.dice is not None
    if ply > 0 or noise:  # a forced play needs no search
        boards, again = legal_outcomes(game.board, *game.dice, game.variant)
        if len(boards) == 1:
            return game._play_of(boards[0], bool(again[0]))
    s = searcher(model, game.variant)
    if noise:
        boards, again, probs, plies = s.analyse(game.board, *game.dice, Limits(ply=ply))
        eq, _ = play_equities(s, boards, again, probs, game.cube_state())
        i = ranking(probs, plies, eq + _draw(rng, noise, len(eq)))[0]
        return game._play_of(boards[i], bool(again[i]))
    after, again_ = choose(s, game.board, *game.dice, ply, game.cube_state())
    return game._play_of(after, again_)


def _draw(rng: np.random.Generator | None, noise: float, n: int) -> np.ndarray:
    if rng is None:
        raise GameError("a noisy engine needs its random generator (rng)")
    return rng.normal(0.0, noise, n)


def _noisy(d: Decision, noise: float, rng: np.random.Generator | None) -> tuple[bool, bool, str]:
    """(double, take, words) of a cube decision, with noise on its three equities."""
    if not noise:
        return d.double, d.take, d.action
    nd, dt, dp = np.array([d.no_double, d.double_take, d.double_pass]) + _draw(rng, noise, 3)
    return action_words(float(nd), float(dt), float(dp), d.state)


def engine_doubles(game: Game, ply: int = 0, model: Any = None, noise: float = 0.0,
                   rng: np.random.Generator | None = None) -> bool:  # fmt: skip
    """Whether the side on roll doubles (redoubles) now, by its cube decision (with
    `noise`, see the module)."""
    if not game.may_double():
        return False
    state = game.cube_state()
    assert state is not None
    a = cube_decision(searcher(model, game.variant), game.board, state, ply)
    return a.decision is not None and _noisy(a.decision, noise, rng)[0]


def engine_answer(game: Game, ply: int = 0, model: Any = None, noise: float = 0.0,
                  rng: np.random.Generator | None = None) -> str:  # fmt: skip
    """The answer to the side on roll's double: "take", "beaver" (money play with
    beavers, when the double is a big enough mistake) or "pass" (with `noise`, see the
    module)."""
    if game.phase != "answer":
        raise GameError("there is no double to answer")
    state = game.cube_state()  # the doubler's
    assert state is not None
    a = cube_decision(searcher(model, game.variant), game.board, state, ply)
    assert a.decision is not None
    _, take, words = _noisy(a.decision, noise, rng)
    if not take:
        return "pass"
    return "beaver" if words.endswith("beaver") and game.may_beaver() else "take"


def engine_step(game: Game, ply: int = 0, model: Any = None,
                noise: tuple[float, float] = (0.0, 0.0),
                rng: np.random.Generator | None = None) -> str:  # fmt: skip
    """The next decision of a game both of whose sides are the engine (self-play): the
    side on roll doubles or rolls ("double", "roll"), the other answers a double ("take",
    "pass", "beaver"), or the side on roll plays ("play"); `noise` is each side's (side
    0's, side 1's), with `rng`. Returns what was done."""
    phase = game.phase
    if phase == "roll":
        if engine_doubles(game, ply, model, noise[game.turn], rng):
            game.double()
            return "double"
        game.roll()
        return "roll"
    if phase == "answer":
        answer = engine_answer(game, ply, model, noise[1 - game.turn], rng)
        {"take": game.take, "pass": game.drop, "beaver": game.beaver}[answer]()
        return answer
    if phase == "move":
        game.play(engine_play(game, ply, model, noise[game.turn], rng))
        return "play"
    raise GameError("the game is over")


def _best(values: Any) -> float:
    return float(np.max(np.asarray(values, dtype=np.float64)))


def playing_on(game: Game, ply: int = 0, model: Any = None) -> float:
    """The side on roll's value of playing on at `ply` (absolute: money points, the cube's
    value included; a match, with the cube or without: the MWC; a money game without the
    cube: cubeless equity)."""
    game._check_on()
    s = searcher(model, game.variant)
    state = game.cube_state()
    if game.phase == "move":
        assert game.dice is not None
        boards, again, probs, _ = s.analyse(game.board, *game.dice, Limits(ply=ply))
        if state is None:
            return _best(equity(probs))
        return _best(play_values(s, boards, again, probs, state))
    if state is None:
        return float(equity(s.evaluate(game.board, Limits(ply=ply))))
    a = cube_decision(s, game.board, state, ply)
    d = a.decision
    if state.is_match:
        if d is None:
            assert a.no_double_mwc is not None
            return a.no_double_mwc
        assert d.mwc is not None
        nd, dt, dp = d.mwc["no_double"], d.mwc["double_take"], d.mwc["double_pass"]
    else:
        if d is None:
            return a.no_double * state.value
        nd, dt, dp = (v * state.value for v in (d.no_double, d.double_take, d.double_pass))
    if game.phase == "answer":  # the doubler's value: the other side answers as suits it
        return min(dt, dp)
    return float(optimal(nd, dt, dp, state))


@dataclass(frozen=True)
class Verdict:
    """An answer to a resignation, with the two values it compares (absolute, for the
    side that would accept: money points or MWC)."""

    accepted: bool
    offered: float  # what the resignation gives it
    playing_on: float  # what playing on is worth to it at the engine's depth

    def to_json(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "offered": round(self.offered, 6),
                "playing_on": round(self.playing_on, 6)}  # fmt: skip


def resignation(game: Game, side: int, points: int, ply: int = 0, model: Any = None) -> Verdict:
    """Whether the other side accepts `side`'s resignation of `points` (1, 2 or 3)."""
    game._check_on()
    if points not in (1, 2, 3):
        raise GameError(f"a resignation concedes 1, 2 or 3 points, not {points!r}")
    taker = 1 - side
    value = game._value(points)  # the points the resignation scores
    on = playing_on(game, ply, model)
    if game.turn != taker:
        on = (1.0 - on) if game.rules.length else -on  # a match's MWC, with or without the cube
    state = game.cube_state(taker)
    if state is not None and state.is_match:
        offered = met.result(state, value)
    elif state is None:
        offered = float(points)  # cubeless: a single game is 1, a gammon 2 ...
    else:
        offered = float(value)
    return Verdict(offered >= on - EPSILON, offered, on)


__all__ = [
    "Verdict",
    "engine_answer",
    "engine_doubles",
    "engine_play",
    "engine_step",
    "playing_on",
    "resignation",
]
