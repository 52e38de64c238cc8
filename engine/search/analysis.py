"""Position analysis for people and programs: ranked plays, probabilities, pips, shots.

The functions here return plain dicts (the documented JSON of ``doublet analyse --json``
and of the ``doublet engine`` protocol) and draw the board for the terminal.

JSON of an analysis (keys are stable; numbers rounded to 6 decimals):

    {"variant": "standard", "position": {JSON board}, "position_id": "..." (standard),
     "pips": {"mover": 167, "opponent": 167}, "ply": 2,
     "evaluation": {"probabilities": {...}, "equity": ...},        # without dice
     "dice": [3, 1], "plays": [                                     # with dice
        {"rank": 1, "play": "8/5 6/5", "equity": 0.16, "loss": 0.0, "ply": 2,
         "probabilities": {"win": ..., "win_gammon": ..., "win_backgammon": ...,
                           "lose_gammon": ..., "lose_backgammon": ...},
         "again": false, "position_id": "<ID seen by the side to roll next>",
         "board": {"mover": [...], "opponent": [...]}}, ...],
     "shots": [{"point": 5, "rolls": 11}, ...]}  # the opponent's hitting rolls against
                                                 # each blot left by the best play

With a cube state that is not money play with the cube centered (a match score, an owned
cube, the Jacoby rule), a roll's document also has ``"equity": "cubeful"`` and
``"state"`` (CubeState.to_json) and ``"state_text"`` (its words), and each play's
``equity`` is its cubeful equity (money
in units of the cube; a match: money-equivalent, doublet.cube.met.to_money) with
``"cubeless_equity"`` beside it and, in a match, ``"mwc"``; the ranking and the losses
follow the cubeful equity.

A cube decision (``cube_document``: the engine's ``cube`` reply, and ``"cube"`` in
``doublet analyse`` without dice):

    {"double": false, "take": true, "action": "No double, take",
     "equities": {"no_double": 0.10, "double_take": -0.16, "double_pass": 1.0},
     "optimal": 0.10,                  # the equity after the proper action
     "mwc": {...},                     # match play: the three as match-winning chances
     "probabilities": {...}, "cubeless_equity": 0.08,   # behind the decision, at "ply"
     "ply": 2, "method": "cubeful",    # or "janowski" (doublet.search.cubeful)
     "exact": true,                    # only where the values are the bear-off table's
     "beaver": true,                   # only where the take is a beaver (money, beavers):
                                       # double_take is then the beavered game's value
     "state": {"cube": {"value": 1, "owner": "centered"}, "match": null,
               "jacoby": false, "beavers": false},
     "gammon_values": {"mover_gammon": ..., ...}}   # match play (doublet.cube.met)

The probabilities are those of the cube decision's own search: at "cubeful" depths
its tree picks each play by cubeful equity, so they can differ a little from eval's at
the same ply, whose plays are picked by cubeless equity (the text says which it shows).
The equities are the side on roll's, normalised to the cube's value as GNU Backgammon
shows them (double / pass = 1.0). Where the side on roll has no cube decision (it may
not double, or the cube is dead: winning this game at its value wins the match),
``double`` is false, ``take``, ``double_take`` and ``double_pass`` are null and
``action`` says why.
A small bear-off in money (both sides within 6 checkers, "cubeful" method) has the exact
values of doublet.cube.bearoff at every ply, and ``"exact": true``.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple, ParamSpec, TypeVar

import numpy as np

from doublet.core import board as B
from doublet.core.dice import ROLL_WEIGHTS, ROLLS_21, roll_index
from doublet.core.errors import DoubletError, InvalidDiceError
from doublet.cube import equity as E
from doublet.cube.met import gammon_values, to_money
from doublet.cube.state import MONEY, CubeState
from doublet.formats.ids import check_in_play, position_id
from doublet.formats.notation import describe_outcomes, play_text
from doublet.formats.position import Position
from doublet.nn.eval import Model, default_model, equity, is_default_model
from doublet.rules.movegen import check_dice, shots
from doublet.search.choice import ranking
from doublet.search.cubeful import DEFAULT_METHOD, cube_decision, play_values
from doublet.search.searcher import MAX_PLY, BudgetExceeded, Limits, Searcher
from doublet.search.watch import Watchdog, retire, watchdog

T = TypeVar("T")

PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

# The searchers of the models used last (the shipped ones and up to KEPT_SEARCHERS in
# all: a searcher holds its model and caches, a few MB; a review found one kept for ever
# for every model a program loaded).
KEPT_SEARCHERS = 8
_SEARCHERS: OrderedDict[tuple[int, int], Searcher] = OrderedDict()
_SEARCHERS_LOCK = threading.Lock()
# A Searcher serves one thread at a time (its kernels share its work arrays and cache, and
# run without the GIL), so the functions below that search run one at a time, whichever
# thread calls them: a review found two threads' analyse_roll giving wrong plays. Work
# in parallel runs in processes (doublet.core.parallel, the rollouts' workers).
_ONE_AT_A_TIME = threading.RLock()
P = ParamSpec("P")
R = TypeVar("R")


def one_at_a_time(f: Callable[P, R]) -> Callable[P, R]:
    """f, run by one thread at a time (the searchers' lock)."""

    @functools.wraps(f)
    def serial(*args: P.args, **kwargs: P.kwargs) -> R:
        with _ONE_AT_A_TIME:
            return f(*args, **kwargs)

    return serial


def searcher(model: Model | None, variant: int) -> Searcher:
    """A Searcher for the model (default: the shipped one), kept for reuse (the
    KEPT_SEARCHERS used last)."""
    m = model if model is not None else default_model(variant)
    key = (id(m), variant)
    with _SEARCHERS_LOCK:
        s = _SEARCHERS.pop(key, None)
        if s is None or s.model is not m:  # (an id can be reused once a model is gone)
            s = Searcher(m, variant)
        _SEARCHERS[key] = s
        # The oldest go first, the shipped models' never (they live as long as the process).
        extra = [k for k, v in _SEARCHERS.items() if not is_default_model(v.model)]
        for k in extra[: max(0, len(_SEARCHERS) - KEPT_SEARCHERS)]:
            retire(_SEARCHERS.pop(k))  # its watchdog's thread too
    return s


def _probs(p: np.ndarray) -> dict[str, float]:
    return {k: round(v, 6) for k, v in zip(PROB_NAMES, np.asarray(p, np.float64).tolist(),
                                           strict=True)}  # fmt: skip


def _base(pos: Position, ply: int) -> dict[str, Any]:
    mine, theirs = pos.pip_counts()
    doc: dict[str, Any] = {"variant": B.VARIANT_NAMES[pos.variant], "position": pos.to_json()}
    if pos.variant == B.STANDARD:
        doc["position_id"] = pos.id()
    doc["pips"] = {"mover": mine, "opponent": theirs}
    doc["ply"] = ply
    return doc


# Time budgets (seconds). Without one a search runs at the ply asked. With one (a bound:
# the engine protocol's and the HTTP API's default), the ply asked is searched within
# half of it, counted in evaluations at EVALS_PER_SECOND (measured: 136,000 to 186,000 a
# second at 1 to 3 ply on the project's machine, cache cleared; so that the answer is
# the same whatever the load), and where a search can be long, also by the watchdog's
# clock; if that does not finish, the search deepens from 0 ply within the rest and
# answers with the deepest ply completed ("stopped" says so). Iterative deepening
# (`iterative`: the CLI's --time, a request's "time") searches 0, 1, ... ply while time
# remains and answers with the deepest completed. The watchdog thread
# (doublet.search.watch) stops the kernels at the deadline or on Ctrl-C; 0 ply always
# finishes.
EVALS_PER_SECOND = 150_000


def check_search(ply: Any, budget: Any) -> tuple[int, float | None]:
    """(ply, budget) as the searches take them, else DoubletError: ply a whole number
    0..MAX_PLY (numpy's too, as a Python int: it goes into the documents), budget None
    or seconds above 0 (infinity: none). A review found ValueError, numba's TypingError
    and OverflowError here, and a negative budget answering at 0 ply."""
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or not (
            0 <= ply <= MAX_PLY):  # fmt: skip
        raise DoubletError(f"ply must be a whole number 0..{MAX_PLY}, got {ply!r}")
    if budget is not None:
        if (
            isinstance(budget, bool)
            or not isinstance(budget, (int, float, np.number))
            or not (budget > 0)
        ):  # fmt: skip (NaN too)
            raise DoubletError(f"the time budget is a number of seconds above 0, got {budget!r}")
        if math.isinf(budget):
            budget = None
    return int(ply), None if budget is None else float(budget)


def deepen(s: Searcher, compute: Callable[[int, int, float], T], ply: int,
           budget: float | None, iterative: bool = False) -> tuple[T, int, str | None]:  # fmt: skip
    """compute(n, 0, deadline) at ply n as the budget allows (see above): (the result, its
    ply, None or why the search stopped short of `ply`)."""
    dog = watchdog(s)
    try:
        return _deepen(s, dog, compute, ply, budget, iterative)
    finally:
        dog.disarm()  # whatever happened, no stop is left for the next search


def _deepen(s: Searcher, dog: Watchdog, compute: Callable[[int, int, float], T], ply: int,
            budget: float | None, iterative: bool) -> tuple[T, int, str | None]:  # fmt: skip
    if ply == 0 or (budget is None and not iterative):
        dog.ply = ply
        return compute(ply, 0, float("inf")), ply, None
    start = time.perf_counter()
    deadline = float("inf") if budget is None else start + budget
    if not iterative:
        half = budget / 2  # type: ignore[operator]
        dog.ply, dog.done = ply, -1
        # Bounded by a count of evaluations (the same answer whatever the load), and where
        # a search can be long (2 ply and up, or Acey-Deucey, whose 1-2 can generate
        # over 800,000 plays that the count hardly sees) by the watchdog too.
        watch = ply >= 2 or s.variant != B.STANDARD
        try:
            if watch:
                dog.arm(start + half)
            return compute(ply, max(1, int(half * EVALS_PER_SECOND)), start + half), ply, None
        except BudgetExceeded:
            pass
        finally:
            if watch:
                dog.disarm()
    dog.ply, dog.done = 0, -1
    result = compute(0, 0, float("inf"))
    done = dog.done = 0

    def short(why: str = "") -> tuple[T, int, str]:
        if dog.interrupted:
            return result, done, f"interrupted: answered at {done} ply of the {ply} asked for"
        return result, done, (f"the time budget of {budget:g} s allowed {done} ply of the "
                              f"{ply} asked for{why}")  # fmt: skip

    dog.arm(deadline)  # deepen disarms it
    for p in range(1, ply + 1):
        if dog.interrupted or time.perf_counter() >= deadline:  # no time left to start it
            return short(f": ply {p} did not finish within it")
        dog.ply = p
        try:
            result = compute(p, 0, deadline)
        except BudgetExceeded:
            return short(f": ply {p} did not finish within it")
        done = dog.done = p
    return result, done, None


@one_at_a_time
def evaluate_position(pos: Position, ply: int = 0, model: Model | None = None,
                      budget: float | None = None,
                      iterative: bool = False) -> dict[str, Any]:  # fmt: skip
    """The side on roll's chances before it rolls, at `ply` (with a time `budget` in
    seconds, at the deepest ply that fits it: see deepen)."""
    ply, budget = check_search(ply, budget)
    check_in_play(pos.board, pos.variant)
    s = searcher(model, pos.variant)
    b = np.array(pos.board)
    p, done, stopped = deepen(s, lambda n, m, _: s.evaluate(b, Limits(ply=n), m), ply, budget,
                              iterative)  # fmt: skip
    doc = _base(pos, done)
    doc["evaluation"] = {"probabilities": _probs(p), "equity": round(float(equity(p)), 6)}
    if stopped:
        doc["stopped"] = stopped
    return doc


@one_at_a_time
def evaluate_with_cube(pos: Position, state: CubeState, ply: int, model: Model | None,
                       method: str = DEFAULT_METHOD, budget: float | None = None,
                       iterative: bool = False) -> dict[str, Any]:  # fmt: skip
    """evaluate_position with the cube decision in `state` as its ``"cube"``
    (cube_document), the two sharing the time `budget`, half each: the engine's ``eval``
    reply, and ``doublet eval``'s, for a position with a cube or a score."""
    ply, budget = check_search(ply, budget)
    half = None if budget is None else max(budget / 2, 1e-6)  # (checked again inside)
    doc = evaluate_position(pos, ply, model, half, iterative)
    doc["cube"] = cube_document(pos, state, ply, model, method, half, iterative)
    _stopped_with_cube(doc)
    return doc


def _stopped_with_cube(doc: dict[str, Any]) -> None:
    """A cube decision searched short of the ply asked for says so at the top as well,
    where the reply's "stopped" is looked for (the evaluation may have reached it)."""
    if "stopped" in doc["cube"] and "stopped" not in doc:
        doc["stopped"] = f"the cube decision: {doc['cube']['stopped']}"


@one_at_a_time
def cube_document(pos: Position, state: CubeState = MONEY, ply: int = 2, model: Model | None = None,
                  method: str = DEFAULT_METHOD, budget: float | None = None,
                  iterative: bool = False, made: bool = False) -> dict[str, Any]:  # fmt: skip
    """The side on roll's cube decision before its roll: the reply of the engine's
    ``cube`` command (see the module docstring). A dead cube (state.dead) has no decision
    unless `made`: a double that was made all the same (a match file's, judged by the
    review; one waiting for its answer) is valued as any other."""
    ply, budget = check_search(ply, budget)
    check_in_play(pos.board, pos.variant)
    s = searcher(model, pos.variant)
    b = np.array(pos.board)
    act = made or not state.dead  # a dead cube's double is not searched unless it was made
    a, _, stopped = deepen(s, lambda n, m, t: cube_decision(s, b, state, n, method, m, t, act),
                           ply, budget, iterative)  # fmt: skip
    if a.decision is None:
        doc = E.no_double_json(state, a.no_double, a.no_double_mwc)
    else:
        doc = a.decision.to_json()
        doc["optimal"] = round(a.decision.optimal, 6)
    doc["probabilities"] = _probs(a.probs)
    doc["cubeless_equity"] = round(float(equity(a.probs.astype(np.float32))), 6)
    doc["ply"] = a.ply
    doc["method"] = a.method
    if a.exact:  # a small bear-off in money: the table's values, whatever the ply
        doc["exact"] = True
    if not stopped and a.ply < ply and pos.variant != B.STANDARD:
        stopped = (f"Acey-Deucey's cube decisions are searched at {a.ply} ply at most (a 1-2 "
                   "can have over 800,000 plays)")  # fmt: skip
    if stopped:
        doc["stopped"] = stopped
    doc["state"] = state.to_json()
    if state.is_match:
        doc["gammon_values"] = {k: round(v, 6) for k, v in gammon_values(state).items()}
    return doc


@one_at_a_time
def analyse_position(pos: Position, state: CubeState = MONEY, ply: int = 2,
                     model: Model | None = None, method: str = DEFAULT_METHOD,
                     budget: float | None = None,
                     iterative: bool = False) -> dict[str, Any]:  # fmt: skip
    """Without a roll: the side on roll's chances at `ply` (``evaluation``, as
    evaluate_position) and its cube decision (``cube``, as cube_document), each within
    half the time budget."""
    doc = evaluate_with_cube(pos, state, ply, model, method, budget, iterative)
    doc["state_text"] = state.describe()
    return doc


def blot_shots(board: np.ndarray, variant: int) -> list[dict[str, int]]:
    """Rolls of 36 with which the opponent (next to roll) hits each of the mover's blots."""
    out = []
    for p in range(1, 25):
        if board[p] == 1:
            out.append({"point": p, "rolls": shots(board, p, variant)})
    return out


def play_equities(s: Searcher, boards: np.ndarray, again: np.ndarray, probs: np.ndarray,
                  state: CubeState | None) -> tuple[np.ndarray, np.ndarray | None]:  # fmt: skip
    """The equities a roll's plays are ranked by, and in a match their MWC: cubeless
    without a `state`; with one, the cubeful equity after each play (play_values) in units
    of the cube, money-equivalent in a match."""
    if state is None:
        return np.asarray(equity(probs), dtype=np.float64).reshape(-1), None
    values = play_values(s, boards, again, probs, state)
    if state.is_match:
        return np.asarray(to_money(state, values), dtype=np.float64), values
    return values / state.value, None


@one_at_a_time
def luck(pos: Position, dice: tuple[int, int], state: CubeState = MONEY,
         model: Model | None = None, cubeful: bool | None = None) -> float:  # fmt: skip
    """The luck of rolling `dice` at `pos` for the side on roll, as GNU Backgammon measures
    it: the 0-ply equity after the best play of that roll minus the mean of the same over
    the 36 rolls (ranked and valued as analyse_roll ranks: cubeful where `cubeful`, by
    default away from money with the cube centred; money-equivalent, units of the cube).
    Standard backgammon only (an Acey-Deucey 1-2 can have over 800,000 plays)."""
    if pos.variant != B.STANDARD:
        raise DoubletError("luck is measured in standard backgammon only")
    check_in_play(pos.board, pos.variant)
    if not isinstance(dice, (tuple, list)) or len(dice) != 2:
        raise InvalidDiceError(f"dice are two numbers 1..6, got {dice!r}")
    dice = check_dice(*dice)  # a review found (0, 1) valued as 6-6
    s = searcher(model, pos.variant)
    outs, again, probs, starts = s.all_rolls(np.array(pos.board))
    if cubeful is None:
        cubeful = not state.is_default
    eq, _ = play_equities(s, outs, again, probs, state if cubeful else None)
    best = np.array([eq[starts[r] : starts[r + 1]].max() for r in range(len(ROLLS_21))])
    return float(best[roll_index(*dice)] - float(np.dot(ROLL_WEIGHTS, best)))


class Ranked(NamedTuple):
    """A roll's plays searched and ranked (rank_plays): the search's arrays, the equities
    they are ranked by, and `order` (the indices, best first)."""

    boards: np.ndarray
    again: np.ndarray
    probs: np.ndarray
    plies: np.ndarray
    equity: np.ndarray  # cubeful where `cubeful`, else cubeless (`top`: maybe the best's only)
    mwc: np.ndarray | None
    cubeless: np.ndarray
    order: list[int]
    cubeful: bool
    ply: int  # the ply completed
    stopped: str | None


@one_at_a_time
def rank_plays(pos: Position, d1: int, d2: int, ply: int = 0, model: Model | None = None,
               state: CubeState = MONEY, budget: float | None = None,
               cubeful: bool | None = None, iterative: bool = False) -> Ranked:  # fmt: skip
    """Every legal play of d1-d2 searched (within the budget: deepen) and ranked as
    analyse_roll documents; nothing is formatted."""
    ply, budget = check_search(ply, budget)
    d1, d2 = check_dice(d1, d2)
    check_in_play(pos.board, pos.variant)
    s = searcher(model, pos.variant)
    b = np.array(pos.board)
    found, ply, stopped = deepen(s, lambda n, m, _: s.analyse(b, d1, d2, Limits(ply=n), m),
                                 ply, budget, iterative)  # fmt: skip
    boards, again, probs, plies = found
    if cubeful is None:
        cubeful = not state.is_default
    eq, mwc = play_equities(s, boards, again, probs, state if cubeful else None)
    cubeless = np.asarray(equity(probs), dtype=np.float64).reshape(-1) if cubeful else eq
    # The plays searched deepest come first, by equity; then the rest by their 0-ply equity.
    order = ranking(probs, plies, eq if cubeful else None)
    return Ranked(boards, again, probs, plies, eq, mwc, cubeless, order, cubeful, ply, stopped)


# Writing out the plays of a roll with more than this (an Acey-Deucey 1-2 can have
# 865,132: 17 s to name its best 20, about 2 minutes for all of them in --json) shows on
# the progress line (the Watchdog's phase) instead of the search.
MANY_PLAYS = 20_000

# Acey-Deucey plays are formatted one at a time (notation.play_text) up to this many, or
# when they are fewer than 1/ONE_BY_ONE of the roll's plays (the best 20 of a 1-2's
# 865,132: writing them all took 120 s); else all at once (notation.describe_outcomes).
# Standard plays always one at a time: play_text is a kernel there (2.4 us a play against
# 9.0 for the Python writer, on the refset's 56,335 plays).
ONE_BY_ONE = 4


def play_rows(pos: Position, d1: int, d2: int, r: Ranked,
              limit: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of the best `limit` plays (all: None), as analyse_roll documents them;
    only those plays are written out."""
    chosen = [int(i) for i in (r.order if limit is None else r.order[: max(0, limit)])]
    if (pos.variant == B.STANDARD or len(chosen) <= ONE_BY_ONE
            or len(chosen) * ONE_BY_ONE <= len(r.boards)):  # fmt: skip
        texts = {i: play_text(pos.board, r.boards[i], d1, d2, pos.variant, bool(r.again[i]))
                 for i in chosen}  # fmt: skip
    else:
        texts = dict(enumerate(describe_outcomes(pos.board, r.boards, r.again, d1, d2,
                                                 pos.variant)))  # fmt: skip
    best_eq = r.equity[r.order[0]]
    rows = []
    for rank, i in enumerate(chosen, 1):
        mover, opponent = B.counts(r.boards[i])
        row: dict[str, Any] = {
            "rank": rank,
            "play": texts[i],
            "equity": round(float(r.equity[i]), 6),
            "loss": round(float(best_eq - r.equity[i]), 6),
            "ply": int(r.plies[i]),
            "probabilities": _probs(r.probs[i]),
            "again": bool(r.again[i]),
        }
        if r.cubeful:
            row["cubeless_equity"] = round(float(r.cubeless[i]), 6)
            if r.mwc is not None:
                row["mwc"] = round(float(r.mwc[i]), 6)
        if pos.variant == B.STANDARD:
            row["position_id"] = position_id(B.flip(r.boards[i]))
        row["board"] = {"mover": mover, "opponent": opponent}
        rows.append(row)
    return rows


@one_at_a_time
def analyse_roll(pos: Position, d1: int, d2: int, ply: int = 0, model: Model | None = None,
                 state: CubeState = MONEY, budget: float | None = None,
                 cubeful: bool | None = None, limit: int | None = None,
                 iterative: bool = False) -> dict[str, Any]:  # fmt: skip
    """Every legal play of d1-d2 ranked by equity (deepest ply first), with losses.

    In money play with the cube centered (the default `state`) the equity is cubeless;
    at a match score, with an owned cube or under the Jacoby rule it is the cubeful
    equity after the play (doublet.search.cubeful.play_values: the probabilities at the
    ply searched, converted for the side to roll next, who may double first), money
    equivalent in a match, each play's match-winning chance beside it (``mwc``), and
    the cubeless equity as ``cubeless_equity``. `cubeful` True ranks by the cubeful
    equity in any state (a game played with the cube does, as its engine chooses:
    doublet.search.choice.choose), False by the cubeless one. With `limit`, only the
    best `limit` plays are listed (and written out); ``"count"`` is then the number of
    legal plays."""
    ply, budget = check_search(ply, budget)
    d1, d2 = check_dice(d1, d2)
    r = rank_plays(pos, d1, d2, ply, model, state, budget, cubeful, iterative)
    doc = _base(pos, r.ply)
    if r.cubeful:
        doc["equity"] = "cubeful"
        doc["state"] = state.to_json()
    if not state.is_default:
        doc["state_text"] = state.describe()
    doc["dice"] = [d1, d2]
    if r.stopped:
        doc["stopped"] = r.stopped
    total = len(r.order)
    listed = total if limit is None else min(total, max(0, limit))
    dog = watchdog(searcher(model, pos.variant)) if total > MANY_PLAYS else None
    if dog is not None:  # naming even a few of them builds the roll's notation tables
        some = f"the best {listed:,} of " if listed < total else ""
        dog.phase = f"writing out {some}{total:,} plays"
    try:
        doc["plays"] = play_rows(pos, d1, d2, r, limit)
    finally:
        if dog is not None:
            dog.phase = ""
    if limit is not None:
        doc["count"] = len(r.order)
    doc["shots"] = blot_shots(r.boards[r.order[0]], pos.variant)
    return doc


# The keys of the engine's ``best`` reply, in order, from the best play's row.
BEST_KEYS = ("play", "equity", "again", "probabilities", "ply", "board", "cubeless_equity",
             "mwc")  # fmt: skip


@one_at_a_time
def best_play(pos: Position, d1: int, d2: int, ply: int = 0, model: Model | None = None,
              state: CubeState = MONEY, budget: float | None = None,
              cubeful: bool | None = None, iterative: bool = False) -> dict[str, Any]:  # fmt: skip
    """The best play of d1-d2 (the first row of analyse_roll, only it written out): the
    engine's ``best`` reply, its row's BEST_KEYS, ``stopped`` when the search stopped
    short, and ``position_id`` (standard). Ranked by cubeless equity (money with the
    cube centred, or `cubeful` False), only the chosen play is copied out of the search
    (Searcher.chosen: the engine's hot path)."""
    ply, budget = check_search(ply, budget)
    d1, d2 = check_dice(d1, d2)
    if cubeful is None:
        cubeful = not state.is_default
    if cubeful:
        r = rank_plays(pos, d1, d2, ply, model, state, budget, cubeful, iterative)
        (row,) = play_rows(pos, d1, d2, r, 1)
        reply = {k: row[k] for k in BEST_KEYS if k in row}
        stopped, pid = r.stopped, row.get("position_id")
    else:
        check_in_play(pos.board, pos.variant)
        s = searcher(model, pos.variant)
        b = pos.board
        found, _, stopped = deepen(s, lambda n, m, _: s.chosen(b, d1, d2, Limits(ply=n), m),
                                   ply, budget, iterative)  # fmt: skip
        after, again, probs, plied = found
        reply = {"play": play_text(pos.board, after, d1, d2, pos.variant, again),
                 "equity": round(float(equity(probs)), 6), "again": again,
                 "probabilities": _probs(probs), "ply": plied}  # fmt: skip
        mover, opponent = B.counts(after)
        reply["board"] = {"mover": mover, "opponent": opponent}
        pid = position_id(B.flip(after)) if pos.variant == B.STANDARD else None
    if stopped:
        reply["stopped"] = stopped
    if pid is not None:
        reply["position_id"] = pid
    return reply


def diagram(board: np.ndarray, dice: tuple[int, int] | None = None) -> str:
    """The board as text, seen by the side on roll (X, moving down to its point 1 at the
    bottom right); O is the opponent. Stacks taller than 5 show their count."""
    b = np.asarray(board)
    mine, theirs = B.pip_counts(b)

    def cell(p: int, row: int) -> str:
        n = int(b[p])
        c = "X" if n > 0 else "O"
        n = abs(n)
        if n == 0 or (row >= n and not (row == 4 and n > 5)):
            return " . " if row == 0 and n == 0 else "   "
        if row == 4 and n > 5:
            return f"{n:^3d}"
        return f" {c} "

    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    lines = [
        " " + "".join(f"{p:^3d}" for p in top[:6]) + "|   |" + "".join(f"{p:^3d}" for p in top[6:])
    ]
    lines.append("+" + "-" * 18 + "+---+" + "-" * 18 + "+")
    for row in range(5):
        bar = f" {'O' if -b[B.OPP_BAR] > row else ' '} "
        lines.append("|" + "".join(cell(p, row) for p in top[:6]) + "|" + bar + "|"
                     + "".join(cell(p, row) for p in top[6:]) + "|")  # fmt: skip
    lines.append("|" + " " * 18 + "|BAR|" + " " * 18 + "|")
    for row in range(4, -1, -1):
        bar = f" {'X' if b[B.MY_BAR] > row else ' '} "
        lines.append("|" + "".join(cell(p, row) for p in bottom[:6]) + "|" + bar + "|"
                     + "".join(cell(p, row) for p in bottom[6:]) + "|")  # fmt: skip
    lines.append("+" + "-" * 18 + "+---+" + "-" * 18 + "+")
    lines.append(
        " "
        + "".join(f"{p:^3d}" for p in bottom[:6])
        + "|   |"
        + "".join(f"{p:^3d}" for p in bottom[6:])
    )
    extra = []
    if b[B.MY_BAR] > 5 or -b[B.OPP_BAR] > 5:
        extra.append(f"bar: X {int(b[B.MY_BAR])}, O {int(-b[B.OPP_BAR])}")
    if b[B.MY_OUT] or b[B.OPP_OUT]:
        extra.append(f"not entered: X {int(b[B.MY_OUT])}, O {int(b[B.OPP_OUT])}")
    extra.append(f"off: X {int(b[B.MY_OFF])}, O {int(b[B.OPP_OFF])}")
    extra.append(f"pips: X {mine}, O {theirs}")
    if dice:
        extra.append(f"X to play {dice[0]}-{dice[1]}")
    else:
        extra.append("X on roll")
    lines.append("  ".join(extra))
    return "\n".join(lines)


def render_cube(cube: dict[str, Any]) -> list[str]:
    """The lines of a cube decision, as GNU Backgammon words them."""
    state = cube["state"]
    match = state.get("match")
    eq = cube["equities"]
    mwc = cube.get("mwc")
    out = [f"Cube decision, {cube['ply']} ply ({cube['method']}):"]
    if cube.get("exact"):
        out = ["Cube decision, exact (the two-sided bear-off table, as at every ply):"]
    p = cube["probabilities"]
    if cube["method"] == "cubeful" and cube["ply"] > 0 and not cube.get("exact"):
        out.append("  chances of the cube's own search (its plays picked by cubeful equity):")
    out.append(f"  cubeless: win {100 * p['win']:.2f}% (gammon {100 * p['win_gammon']:.2f}%, "
               f"backgammon {100 * p['win_backgammon']:.2f}%), lose {100 * (1 - p['win']):.2f}% "
               f"(gammon {100 * p['lose_gammon']:.2f}%, backgammon "
               f"{100 * p['lose_backgammon']:.2f}%), "
               f"equity {cube['cubeless_equity']:+.3f}")  # fmt: skip
    if match:
        gv = cube["gammon_values"]
        out.append(f"  gammon values: X {gv['mover_gammon']:.3f} (backgammon "
                   f"{gv['mover_backgammon']:.3f}), O {gv['opponent_gammon']:.3f} (backgammon "
                   f"{gv['opponent_backgammon']:.3f})")  # fmt: skip
    if eq["double_take"] is None:
        line = f"  No double        {eq['no_double']:+.4f}"
        if mwc:
            line += f"  (MWC {100 * mwc['no_double']:.2f}%)"
        out.append(line)
        out.append(f"Proper cube action: {cube['action']}")
        return out
    best = cube["optimal"]
    verb = "Redouble" if state["cube"]["owner"] == "mover" else "Double"
    beaver = cube.get("beaver", False)  # the row's value is the beavered game's
    rows = [("no_double", f"No {verb.lower()}"),
            ("double_take", f"{verb}, {'beaver' if beaver else 'take'}"),
            ("double_pass", f"{verb}, pass")]  # fmt: skip
    out.append(
        "  cubeful equities" + (" (money-equivalent, match-winning chance)" if match else "") + ":"
    )
    for key, name in rows:
        diff = f"{eq[key] - best:+.4f}"
        line = f"  {name:<16} {eq[key]:+.4f}"
        line += f"  ({diff})" if diff not in ("+0.0000", "-0.0000") else " " * 11
        if mwc:
            line += f"  MWC {100 * mwc[key]:6.2f}%"
        out.append(line)
    out.append(f"Proper cube action: {cube['action']}")
    return out


# A roll with no legal play has one play, "" (the position unchanged): the texts (doublet
# moves, analyse, rollout) say so in these words.
NO_PLAY = "no legal play (no checker can move)"
NO_PLAY_ROW = "(no legal play)"


def plays_heading(count: int) -> str:
    """The heading of a roll's `count` legal plays in the texts (doublet moves and
    analyse): "16 legal plays", "1,204 legal plays", or NO_PLAY for none."""
    return f"{count:,} legal play{'s' if count != 1 else ''}" if count else NO_PLAY


def render(doc: dict[str, Any], board: np.ndarray, limit: int = 20) -> str:
    """The human text of an analysis: diagram, then the evaluation and the cube decision,
    or the ranked plays."""
    dice = tuple(doc["dice"]) if "dice" in doc else None
    out = [diagram(board, dice)]
    where = doc.get("position_id", "")
    out.append(f"{doc['variant']} {where}".rstrip())
    if "state_text" in doc:
        out.append(doc["state_text"])
    top, cube = doc.get("stopped"), doc.get("cube", {}).get("stopped")
    for stopped in (top, None if top == f"the cube decision: {cube}" else cube):
        if stopped:
            out.append(f"(Stopped short: {stopped}.)")
    if "cube" in doc:
        out += render_cube(doc["cube"])
        return "\n".join(out)
    if "evaluation" in doc:
        ev = doc["evaluation"]
        p = ev["probabilities"]
        out.append(f"{doc['ply']}-ply evaluation for X before the roll:")
        out.append(f"  win {100 * p['win']:.2f}%  (gammon {100 * p['win_gammon']:.2f}%, "
                   f"backgammon {100 * p['win_backgammon']:.2f}%)")  # fmt: skip
        out.append(f"  lose {100 * (1 - p['win']):.2f}%  (gammon {100 * p['lose_gammon']:.2f}%, "
                   f"backgammon {100 * p['lose_backgammon']:.2f}%)")  # fmt: skip
        out.append(f"  cubeless equity {ev['equity']:+.3f}")
        return "\n".join(out)
    plays = doc["plays"]
    width = max([len(r["play"] or NO_PLAY_ROW) for r in plays[:limit]] + [4])
    kind = ""
    if doc.get("equity") == "cubeful":
        kind = " by cubeful equity" + (
            " (money-equivalent; MWC beside it)" if "mwc" in plays[0] else ""
        )
    total = doc.get("count", len(plays))  # with a limit, the plays listed are the best few
    heading = plays_heading(0 if total == 1 and not plays[0]["play"] else total)
    out.append(f"{heading}{kind}:")
    out.append(f"  #  {'play':<{width}}  ply  equity   loss     win    wg    wbg    lg    lbg")
    for r in plays[:limit]:
        p = r["probabilities"]
        text = r["play"] or NO_PLAY_ROW
        again = "  rolls again" if r["again"] else ""
        mwc = f"  MWC {100 * r['mwc']:.2f}%" if "mwc" in r else ""
        out.append(f"{r['rank']:3d}  {text:<{width}}  {r['ply']:3d}  {r['equity']:+.3f}  "
                   f"{r['loss'] + 0.0:6.3f}  {100 * p['win']:5.1f} {100 * p['win_gammon']:5.1f} "
                   f"{100 * p['win_backgammon']:5.1f} {100 * p['lose_gammon']:5.1f} "
                   f"{100 * p['lose_backgammon']:5.1f}{mwc}{again}")  # fmt: skip
    if total > min(limit, len(plays)):
        out.append(f"  ... {total - min(limit, len(plays)):,} more (--all or --json shows them)")
    hit = [x for x in doc["shots"] if x["rolls"]]
    if hit:
        s = ", ".join(f"{x['point']}: {x['rolls']}/36" for x in hit)
        out.append(f"shots at X's blots after the best play: {s}")
    elif doc["shots"]:  # blots past every opposing checker (a race, a bear-off)
        out.append("no shot at X's blots after the best play")
    else:
        out.append("no blot left by the best play")
    return "\n".join(out)
