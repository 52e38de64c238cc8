"""Games and series between two sides, for the programs people play with.

The terminal (`doublet play`) and the browser (`doublet serve`) both drive a `Series`:
a money session of N games or a match to N points, with the doubling cube or without
it. It holds the current `Game`, the finished ones, the score, the Crawford game, and the
rule for who throws first in the next game (RULES.md, seed 002). A `Game` holds the
board seen by the side on roll, the dice, the cube (value, owner, a double waiting for
an answer), its `Rules` (cube or not, match length and score, Crawford, Jacoby,
beavers), the record of the turns and cube actions, and the result. Sides are 0 and 1;
side 0 is the person in the programs, side 1 the engine, but nothing here depends on
that; the engine's decisions are in doublet.games.opponent.

A turn goes through phases (``Game.phase``): "roll" when the side on roll may double
first (``double`` or ``roll``; without the right to double the dice are rolled at once),
"answer" after a double (``take``, ``beaver``, ``drop``), "move" (``play``), and "over".
Nobody doubles before the first roll of a game.

Dice are drawn from (seed, game number, roll number), so a saved game resumes with the
same dice it would have had, and a seed replays a whole series. Everything saves to plain
JSON (`to_dict` / `from_dict`); `save` writes atomically and `load` names what is wrong
with a damaged file.

>>> s = Series.new(variant="standard", games=3, seed=7, cube=True)
>>> g = s.game
>>> g.opening, g.turn, g.dice
((6, 4), 0, (6, 4))
>>> [p.notation for p in g.plays()][:3]
['24/20 24/18', '24/14', '24/18 13/9']
>>> g.play("24/18 24/20").play
'24/20 24/18'
>>> g.turn, g.phase, g.may_double()
(1, 'roll', True)
>>> g.double().cube, g.phase
(2, 'answer')
>>> _ = g.take()
>>> g.cube, g.owner, g.phase, g.dice
(2, 0, 'move', (5, 5))
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from doublet.core import board as B
from doublet.core.board import ACEY_DEUCEY, RESULT_NAMES, STANDARD, VARIANT_NAMES
from doublet.core.dice import game_roll as roll
from doublet.core.errors import (
    DoubletError,
    GameError,
    IllegalPlayError,
    InvalidPositionError,
    SaveFileError,
    shown,
)
from doublet.core.files import atomic_open
from doublet.cube.state import MAX_CUBE, MAX_LENGTH, CubeState, is_cube_value
from doublet.formats.ids import board_to_json, parse_position, position_id, variant_number
from doublet.formats.notation import format_play, parse_play
from doublet.formats.position import Play, Position
from doublet.rules.movegen import legal_outcomes
from doublet.search.choice import MAX_PLAY_PLY

FORMAT = "doublet-game"
FORMAT_VERSION = 2  # 2: the cube and matches; version 1 files (no cube) are read too
READS_VERSIONS = (1, 2)


def _variant(v: int | str) -> int:
    """formats.ids.variant_number's variant, its error a GameError."""
    try:
        return variant_number(v)
    except InvalidPositionError as e:
        raise GameError(str(e)) from None


ACTIONS = ("play", "double", "take", "pass", "beaver")
NO_RESIGN_NOW = (
    "a double is waiting for its answer: take, or pass (which gives up the game "
    "for the cube's present value)"
)
PHASE_ERRORS = {
    "answer": "a double is waiting for an answer: take or pass",
    "roll": "roll first (or double)",
    "move": "the dice are rolled: play",
}


_P = ParamSpec("_P")
_R = TypeVar("_R")
_changing = 0  # changes of a game running in the main thread (nested ones count too)
_held: list[int] = []  # signals a held_while_changing handler kept back, in arrival order

SignalHandler = Callable[[int, Any], Any]


def held_while_changing(handler: SignalHandler) -> SignalHandler:
    """A signal handler that waits while a game or series is changing: a program that
    saves the game on a signal (doublet play: Ctrl-C, kill, a closed terminal) installs
    its handlers through this, so that a save never holds half a turn (a play in the
    record with the board before it: a resumed game would play that roll twice). The
    signal is noted and delivered, to `handler`, once the change is whole (`_whole`).
    Held in Python, not by a signal mask: a process's signal may be taken by any of its
    threads (numpy's own, say), while Python runs every handler in the main thread."""

    @functools.wraps(handler)
    def run(signum: int, frame: Any) -> Any:
        if _changing:
            _held.append(signum)
            return None
        return handler(signum, frame)

    return run


def _whole(change: Callable[_P, _R]) -> Callable[_P, _R]:
    """A change of a game or series, run whole as held_while_changing says (in the main
    thread: other threads, the web server's, get no signals). Two integer operations a
    change when no signal comes."""

    @functools.wraps(change)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        global _changing
        if threading.current_thread() is not threading.main_thread():
            return change(*args, **kwargs)
        _changing += 1
        try:
            return change(*args, **kwargs)
        finally:
            _changing -= 1
            if not _changing and _held:
                _deliver()

    return run


def _deliver() -> None:
    """Raise each signal held during a change again, once each, in the order they came:
    their handlers run now (signal.raise_signal runs them at once); the first exception
    one raises (KeyboardInterrupt, doublet play's Quit) is raised after all have run."""
    came = list(dict.fromkeys(_held))
    _held.clear()
    first: BaseException | None = None
    for n in came:
        try:
            signal.raise_signal(n)
        except BaseException as e:  # every held signal is delivered first
            first = first or e
    if first is not None:
        raise first


@dataclass
class Turn:
    """One entry of the record: a play (who rolled what, the position before in the
    mover's view, the play's notation, "" when no play was legal) or a cube action of
    `side` ("double" and "beaver" with the cube's new `cube` value, "take", "pass"; no
    dice, `before` the position of the side on roll)."""

    side: int
    dice: tuple[int, int] | None
    play: str
    before: str  # gnubg Position ID (standard) or JSON board text (Acey-Deucey)
    again: bool = False
    action: str = "play"
    cube: int = 0  # double, beaver: the cube's value after it

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "side": self.side,
            "dice": list(self.dice) if self.dice else None,
            "play": self.play,
            "before": self.before,
            "again": self.again,
        }
        if self.action != "play":
            d["action"] = self.action
            d["cube"] = self.cube
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Turn:
        action = str(d.get("action", "play"))
        if action not in ACTIONS:
            raise SaveFileError(f"unknown action {action!r} in the record")
        dice = d["dice"]
        return cls(
            int(d["side"]),
            (int(dice[0]), int(dice[1])) if dice else None,
            str(d["play"]),
            str(d["before"]),
            bool(d.get("again", False)),
            action,
            int(d.get("cube", 0)),
        )


@dataclass
class Result:
    """How a game ended: the winner, the kind (`points` 1, 2 or 3: a single game, a
    gammon, a backgammon), whether by resignation or by a pass of a double, the cube's
    value and `value`, the points scored: the cube times the kind (times 1 for a gammon
    or backgammon under the Jacoby rule with the cube not turned)."""

    winner: int
    points: int
    resigned: bool = False
    passed: bool = False
    cube: int = 1
    value: int = 0  # 0: the cube times `points`
    # A resignation with the dice rolled: (the side on roll, its two dice), which a .mat
    # file writes before the Wins (GNU Backgammon reads no winner from a Wins alone).
    roll: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        if not self.value:
            self.value = self.cube * self.points

    @property
    def name(self) -> str:
        return RESULT_NAMES[self.points]

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "points": self.points, "resigned": self.resigned,
                "passed": self.passed, "cube": self.cube, "value": self.value,
                **({"roll": list(self.roll)} if self.roll else {})}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        roll = d.get("roll")
        if roll is not None:
            ok = (isinstance(roll, list) and len(roll) == 3 and roll[0] in (0, 1)
                  and all(isinstance(v, int) and 1 <= v <= 6 for v in roll[1:]))  # fmt: skip
            if not ok:
                raise ValueError(f"a result's roll is [side, die, die], got {shown(roll)}")
            roll = (int(roll[0]), int(roll[1]), int(roll[2]))
        return cls(int(d["winner"]), int(d["points"]), bool(d.get("resigned", False)),
                   bool(d.get("passed", False)), int(d.get("cube", 1)),
                   int(d.get("value", 0)), roll)  # fmt: skip

    def describe(self) -> str:
        """The result in words: "a gammon: 4 points", "a single game (double passed): 1
        point"."""
        how = " by resignation" if self.resigned else " (double passed)" if self.passed else ""
        return f"a {self.name}{how}: {self.value} point{'s' * (self.value != 1)}"


@dataclass(frozen=True)
class Rules:
    """What a game is played for: with the cube or not, the match (`length` 0: money;
    `score` the points of sides 0 and 1 before this game), whether this is the Crawford
    game, and the money options (Jacoby, beavers)."""

    cube: bool = False
    length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False

    def cube_state(self, side: int, cube: int, owner: int) -> CubeState | None:
        """The cube (its value, its owner: a side or -1) and the score under these rules,
        seen by `side`; in a match without the cube, the score with no cube (valued by
        the match equity table, cubeless); None in a money game without the cube."""
        if not self.cube:
            if not self.length:
                return None
            return CubeState.for_player(side, self.length, 1, -1, self.score,
                                        crawford=self.crawford, no_cube=True)  # fmt: skip
        return CubeState.for_player(side, self.length, cube, owner, self.score,
                                    crawford=self.crawford, jacoby=self.jacoby,
                                    beavers=self.beavers)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {"cube": self.cube, "length": self.length, "score": list(self.score),
                "crawford": self.crawford, "jacoby": self.jacoby,
                "beavers": self.beavers}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Rules:
        if d is None:
            return cls()
        score = d.get("score", (0, 0))
        return cls(bool(d.get("cube", False)), int(d.get("length", 0)),
                   (int(score[0]), int(score[1])), bool(d.get("crawford", False)),
                   bool(d.get("jacoby", False)), bool(d.get("beavers", False)))  # fmt: skip


# What the person is told when the cube is dead for them (Game.dead_for): doublet play
# says it, doublet serve's state carries it for the page.
DEAD_CUBE_NOTE = (
    "The cube is dead for you: winning this game wins you the match, so you are "
    "not offered a double and your dice are rolled at once."
)


@dataclass
class Game:
    """One game. `board` is seen by `turn`, the side on roll, who has rolled `dice`."""

    variant: int
    seed: int
    number: int
    board: np.ndarray
    turn: int
    dice: tuple[int, int] | None
    opening: tuple[int, int] | None  # the single dice thrown for the start (side 0, side 1)
    rolls: int = 0  # dice drawn so far in this game
    record: list[Turn] = field(default_factory=list)
    result: Result | None = None
    rules: Rules = field(default_factory=Rules)
    cube: int = 1
    owner: int = -1  # the side that owns the cube; -1: centred
    offered: bool = False  # the side on roll has doubled; the other side answers
    # The cube (value, owner) the game began with: centred at 1, or a position's own (a
    # game started at a position, doublet serve's; also the sign it did not start at the
    # opening, which a .mat file cannot hold).
    start_cube: tuple[int, int] = (1, -1)
    from_position: bool = False

    # -- construction -----------------------------------------------------------------
    @classmethod
    def new(cls, variant: int | str = STANDARD, seed: int | None = None, number: int = 0,
            starter: int | None = None, rules: Rules | None = None) -> Game:  # fmt: skip
        """A new game. With `starter` None both sides throw one die (again on a tie); the
        higher starts, with those two dice in standard backgammon and with a fresh roll
        in Acey-Deucey. Otherwise `starter` has the first throw and rolls both dice
        (nobody doubles before the first roll of a game)."""
        v = _variant(variant)
        seed = secrets.randbits(63) if seed is None else int(seed)
        g = cls(v, seed, number, B.starting(v), 0, None, None, rules=rules or Rules())
        if starter is None:
            while True:
                d0, d1 = g._draw()
                if d0 != d1:
                    break
            g.opening = (d0, d1)
            g.turn = 0 if d0 > d1 else 1
            if v == STANDARD:
                g.dice = (d0, d1) if g.turn == 0 else (d1, d0)
            else:
                g.dice = g._draw()
        else:
            if starter not in (0, 1):
                raise GameError(f"the starter is side 0 or 1, not {starter!r}")
            g.turn = starter
            g.dice = g._draw()
        return g

    def _draw(self) -> tuple[int, int]:
        d = roll(self.seed, self.number, self.rolls)
        self.rolls += 1
        return d

    # -- queries ------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def phase(self) -> str:
        """Where the game is: "over"; "answer": the side on roll has doubled and the
        other side takes, beavers or passes; "roll": the side on roll may double, then
        rolls; "move": the side on roll has rolled `dice` and plays."""
        if self.result is not None:
            return "over"
        if self.offered:
            return "answer"
        return "roll" if self.dice is None else "move"

    def cube_state(self, side: int | None = None) -> CubeState | None:
        """The cube and score seen by `side` (default the side on roll); None in a game
        without the cube."""
        return self.rules.cube_state(self.turn if side is None else side, self.cube, self.owner)

    def _cube_available(self, side: int | None = None) -> bool:
        """Whether `side` (default the side on roll) may turn the cube in this game, the
        score aside: the rules have it, not the Crawford game, centred or its own, below
        the highest, the game not over."""
        r = self.rules
        owner = self.turn if side is None else side
        return (r.cube and not r.crawford and self.owner in (-1, owner)
                and self.cube < MAX_CUBE and self.result is None)  # fmt: skip

    def cube_dead(self, side: int | None = None) -> bool:
        """In a match, whether the cube is dead for `side` (default the side on roll):
        winning this game at the cube's value already wins it the match (CubeState.dead).
        The rules do not forbid a double (a match file that holds one replays: `double`);
        it is not offered."""
        state = self.cube_state(side)
        return state is not None and state.dead

    def dead_for(self, side: int) -> bool:
        """Whether `side` holds a dead cube: the cube would be its to turn in this game
        (the rules have it, not the Crawford game, centred or its own, below the highest)
        but winning this game at the cube's value already wins it the match, so it is not
        offered a double (cube_dead); what the person is told (doublet play, serve)."""
        return self._cube_available(side) and self.cube_dead(side)

    def _cube_live(self) -> bool:
        """Whether the side on roll has a cube to turn before its roll: available to it
        (the rules, the owner) and not dead for it."""
        return self._cube_available() and not self.cube_dead()

    def may_double(self) -> bool:
        """Whether the side on roll may double (or redouble) now, before it rolls: the
        rules allow it and the cube is not dead for it (cube_dead)."""
        return self.phase == "roll" and self._cube_live()

    def why_no_double(self) -> str:
        """Why the side on roll may not double now ("" when it may)."""
        if self.may_double():
            return ""
        # What holds for the whole game first: in the Crawford game "the dice are
        # rolled" would say that a double could have come before the roll.
        if self.result is not None:
            return "the game is over"
        if not self.rules.cube:
            return "this game is played without the cube"
        if self.rules.crawford:
            return "the Crawford game: nobody may double"
        if self.phase == "answer":
            return "a double is waiting for an answer"
        if self.cube >= MAX_CUBE:
            return f"the cube is at its highest ({MAX_CUBE})"
        if self.owner not in (-1, self.turn):
            return "the opponent owns the cube"
        if self.cube_dead():
            return "the cube is dead: winning this game at its value already wins the match"
        if self.phase == "move" and not self.record and not self.from_position:
            return "nobody doubles before a game's first roll, which is played as thrown"
        return "the dice are rolled: a double comes before the roll"

    def position(self) -> Position:
        """The position seen by the side on roll."""
        return Position(self.board, self.variant)

    def board_for(self, side: int) -> np.ndarray:
        """The board seen by `side` (a copy)."""
        return self.board.copy() if side == self.turn else B.flip(self.board)

    def plays(self) -> list[Play]:
        """The legal plays of the side on roll (one empty play when none is legal)."""
        self._check_on()
        assert self.dice is not None
        return self.position().plays(*self.dice)

    def has_play(self) -> bool:
        """Whether the side on roll has a legal play (else it passes: one empty play)."""
        self._check_on()
        assert self.dice is not None
        boards, _ = legal_outcomes(self.board, *self.dice, self.variant)
        return not (len(boards) == 1 and np.array_equal(boards[0], self.board))

    def _play_of(self, after: np.ndarray, again: bool) -> Play:
        assert self.dice is not None
        text = format_play(self.board, after, *self.dice, self.variant, again)
        board = np.array(after, dtype=np.int8)
        board.flags.writeable = False
        return Play(text, board, again, self.variant)

    def pip_counts(self, side: int = 0) -> tuple[int, int]:
        """(side's, the other side's) pip counts."""
        mine, theirs = B.pip_counts(self.board_for(side))
        return int(mine), int(theirs)

    def describe(self, board: np.ndarray | None = None) -> str:
        """A board's text for the record: gnubg ID (standard) or compact JSON."""
        b = self.board if board is None else board
        if self.variant == STANDARD:
            return position_id(b)
        return json.dumps(board_to_json(b, self.variant), separators=(",", ":"))

    # -- moves --------------------------------------------------------------------------
    def _check_on(self) -> None:
        if self.result is not None:
            raise GameError("the game is over")

    def _check_phase(self, phase: str, side: int | None, who: int | None = None) -> None:
        self._check_on()
        if self.phase != phase:
            raise GameError(PHASE_ERRORS[self.phase] if phase != "answer"
                            else "there is no double to answer")  # fmt: skip
        expected = self.turn if who is None else who
        if side is not None and side != expected:
            raise GameError(f"it is side {expected}'s turn, not side {side}'s")

    def _begin_turn(self) -> None:
        """The side on roll now: it rolls at once unless it may double first (the cube
        available to it and not dead)."""
        self.dice = None if self._cube_live() else self._draw()

    def _value(self, points: int) -> int:
        """The points a result of kind `points` scores with the cube as it is."""
        r = self.rules
        jacoby = r.jacoby and r.length == 0 and self.cube == 1
        return self.cube * (1 if jacoby else points)

    @_whole
    def roll(self, side: int | None = None) -> tuple[int, int]:
        """The side on roll rolls (it did not double)."""
        self._check_phase("roll", side)
        self.dice = self._draw()
        return self.dice

    def _cube_turn(self, side: int, action: str, cube: int = 0) -> Turn:
        turn = Turn(side, None, "", self.describe(), action=action, cube=cube)
        self.record.append(turn)
        return turn

    @_whole
    def double(self, side: int | None = None) -> Turn:
        """The side on roll doubles (redoubles) before its roll; the other side answers."""
        self._check_phase("roll", side)
        if not self._cube_available():
            raise GameError(f"no double: {self.why_no_double()}")
        self.offered = True
        return self._cube_turn(self.turn, "double", 2 * self.cube)

    @_whole
    def take(self, side: int | None = None) -> Turn:
        """The other side takes the double: it owns the cube at twice the value; the
        doubler rolls."""
        self._check_phase("answer", side, 1 - self.turn)
        self.cube *= 2
        self.owner = 1 - self.turn
        self.offered = False
        turn = self._cube_turn(1 - self.turn, "take")
        self.dice = self._draw()
        return turn

    @_whole
    def beaver(self, side: int | None = None) -> Turn:
        """Money play with beavers: the other side takes and redoubles at once, keeping
        the cube (four times the value); the doubler rolls."""
        self._check_phase("answer", side, 1 - self.turn)
        if not self.rules.beavers or self.rules.length:
            raise GameError("beavers are not allowed in this game")
        if not self.may_beaver():
            raise GameError(f"a beaver would take the cube past its highest ({MAX_CUBE}): "
                            "take or pass")  # fmt: skip
        self.cube *= 4
        self.owner = 1 - self.turn
        self.offered = False
        turn = self._cube_turn(1 - self.turn, "beaver", self.cube)
        self.dice = self._draw()
        return turn

    def may_beaver(self) -> bool:
        """Whether the side answering a double may beaver it: money play with beavers,
        and four times the cube no higher than the highest (MAX_CUBE)."""
        return (self.phase == "answer" and self.rules.beavers and not self.rules.length
                and 4 * self.cube <= MAX_CUBE)  # fmt: skip

    @_whole
    def drop(self, side: int | None = None) -> Result:
        """The other side passes the double: the doubler wins the cube's value."""
        self._check_phase("answer", side, 1 - self.turn)
        self._cube_turn(1 - self.turn, "pass")
        self.offered = False
        self.result = Result(self.turn, 1, passed=True, cube=self.cube, value=self.cube)
        return self.result

    @_whole
    def play(self, play: str | Play, side: int | None = None) -> Turn:
        """Play `play` (notation, or a Play of `plays()`) for the side on roll; the next
        dice are rolled, or the game ends. IllegalPlayError / NotationError name what is
        wrong with a play that is not legal."""
        self._check_phase("move", side)
        assert self.dice is not None
        # Only the chosen play is written out: an Acey-Deucey 1-2 can have over 800,000 plays,
        # and writing all of them (Position.plays) takes seconds.
        boards, again = legal_outcomes(self.board, *self.dice, self.variant)
        if isinstance(play, Play):
            same = (boards == np.asarray(play.board, np.int8)).all(axis=1) & (again == play.again)
            found = np.flatnonzero(same)
            if not len(found):
                raise IllegalPlayError(f"{play.notation!r} is not a legal play of {self.dice}")
            i = int(found[0])
        else:
            i = parse_play(self.board, *self.dice, play, self.variant)
        chosen = self._play_of(boards[i], bool(again[i]))
        turn = Turn(self.turn, self.dice, chosen.notation, self.describe(), chosen.again)
        self.record.append(turn)
        after = np.array(chosen.board, dtype=np.int8)
        points = int(B.outcome(after))
        if points > 0:
            self.board = after
            self.dice = None
            self.result = Result(self.turn, points, cube=self.cube, value=self._value(points))
            return turn
        if chosen.again:
            self.board = after
            self.dice = self._draw()
        else:
            self.board = B.flip(after)
            self.turn = 1 - self.turn
            self._begin_turn()
        return turn

    @_whole
    def resign(self, side: int, points: int = 1) -> Result:
        """`side` gives up the game, conceding `points` (1, 2 or 3). Not while a double
        waits for its answer: passing it gives up the game at the cube's present value,
        and a .mat file has no way to write a double answered by a resignation."""
        self._check_on()
        if self.offered:
            raise GameError(NO_RESIGN_NOW)
        if points not in RESULT_NAMES:
            raise GameError(f"a resignation concedes 1, 2 or 3 points, not {points!r}")
        self.board = self.board.copy()
        roll = None if self.dice is None else (self.turn, *self.dice)
        self.dice = None
        self.offered = False
        self.result = Result(1 - side, points, resigned=True, cube=self.cube,
                             value=self._value(points), roll=roll)  # fmt: skip
        return self.result

    # -- records ------------------------------------------------------------------------
    def export(self, names: tuple[str, str] = ("side 0", "side 1"), seed: bool = True) -> str:
        """The game as text: one line per turn (number, side, dice, position before, play),
        then the result. Without `seed` the header leaves the dice's seed out (it gives
        every roll still to come: doublet serve's record of a series not yet over)."""
        lines = [f"; Doublet {VARIANT_NAMES[self.variant]} game {self.number + 1}"
                 + (f", seed {self.seed}" if seed else "")]  # fmt: skip
        if self.opening:
            lines.append(
                f"; opening throw: {names[0]} {self.opening[0]}, {names[1]} {self.opening[1]}"
            )
        for i, t in enumerate(self.record, 1):
            if t.dice is None:
                what = {"double": f"doubles to {t.cube}", "take": "takes", "pass": "passes",
                        "beaver": f"beavers: the cube is at {t.cube}"}[t.action]  # fmt: skip
                lines.append(f"{i:3d}  {names[t.side]:<10} {what}")
                continue
            play = t.play or "(no play)"
            again = "  (rolls again)" if t.again else ""
            lines.append(
                f"{i:3d}  {names[t.side]:<10} {t.dice[0]}-{t.dice[1]}  {t.before}  {play}{again}"
            )
        if self.result:
            r = self.result
            wins = "win" if names[r.winner].lower() == "you" else "wins"  # "You win"
            lines.append(f"; {names[r.winner]} {wins} {r.describe()}")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": VARIANT_NAMES[self.variant],
            "seed": self.seed,
            "number": self.number,
            "board": board_to_json(self.board, self.variant),
            "turn": self.turn,
            "dice": list(self.dice) if self.dice else None,
            "opening": list(self.opening) if self.opening else None,
            "rolls": self.rolls,
            "record": [t.to_dict() for t in self.record],
            "result": self.result.to_dict() if self.result else None,
            "rules": self.rules.to_dict(),
            "cube": self.cube,
            "owner": self.owner,
            "offered": self.offered,
            **({"start_cube": list(self.start_cube)} if self.start_cube != (1, -1) else {}),
            **({"from_position": True} if self.from_position else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Game:
        v = _variant(d["variant"])
        board, _, _ = parse_position(d["board"], v)
        dice = d.get("dice")
        opening = d.get("opening")
        result = d.get("result")
        g = cls(
            v,
            int(d["seed"]),
            int(d["number"]),
            np.array(board, dtype=np.int8),
            int(d["turn"]),
            (int(dice[0]), int(dice[1])) if dice else None,
            (int(opening[0]), int(opening[1])) if opening else None,
            int(d["rolls"]),
            [Turn.from_dict(t) for t in d.get("record", [])],
            Result.from_dict(result) if result else None,
            Rules.from_dict(d.get("rules")),
            int(d.get("cube", 1)),
            int(d.get("owner", -1)),
            bool(d.get("offered", False)),
        )
        start = d.get("start_cube", [1, -1])
        g.start_cube = (int(start[0]), int(start[1]))
        g.from_position = bool(d.get("from_position", False))
        if g.turn not in (0, 1) or g.owner not in (-1, 0, 1):
            raise SaveFileError("the saved game's turn or cube owner is not a side")
        for what, pair in (("dice", g.dice), ("opening throw", g.opening)):
            if pair is not None and not all(1 <= x <= 6 for x in pair):
                raise SaveFileError(f"the saved game's {what} {list(pair)} are not dice 1..6")
        if g.number < 0 or g.rolls < 0:
            raise SaveFileError("the saved game's number or count of rolls is negative")
        for what, (c, o) in (("starting cube", g.start_cube), ("cube", (g.cube, g.owner))):
            if not is_cube_value(c) or (c > 1) == (o < 0) or o not in (-1, 0, 1):
                raise SaveFileError(f"the saved game's {what} ({c}, owner {o}) is inconsistent")
        if g.result is not None:
            ok = g.dice is None and not g.offered
        elif g.offered:
            ok = g.dice is None and g.rules.cube
        else:
            ok = g.dice is not None or g._cube_available()
        if not ok:
            raise SaveFileError("the saved game's turn or dice are inconsistent")
        return g


@dataclass
class Series:
    """A money session of `games` games (0: no limit) or a match to `length` points,
    with the cube or without it, and its running score. The Crawford rule: the game
    after a side first comes within 1 point of the match is played without the cube
    (`crawford_game` its number), the later ones with it (post-Crawford)."""

    variant: int
    games: int
    seed: int
    score: list[int]
    results: list[Result]
    game: Game
    ply: int = 0  # the engine's search depth (kept with the series for resuming)
    starter: int | None = None  # who starts game 1 (None: the opening throw)
    length: int = 0  # a match to `length` points; 0: a money session
    cube: bool = False
    jacoby: bool = False
    beavers: bool = False
    crawford_game: int | None = None
    history: list[Game] = field(default_factory=list)  # the finished games before `game`
    names: tuple[str, str] | None = None  # the players' names (a series read from a file)
    export: str | None = None  # where doublet play writes the record (kept for --resume)
    # The seed was chosen (--seed), not drawn: it may be shown before the series ends (it
    # gives every roll to come). Saves from before it was recorded: True.
    seed_chosen: bool = True

    @classmethod
    def new(cls, variant: int | str = STANDARD, games: int = 1, seed: int | None = None,
            ply: int = 0, starter: int | None = None, length: int = 0, cube: bool = False,
            jacoby: bool = False, beavers: bool = False) -> Series:  # fmt: skip
        """A money session (`length` 0) of `games` games, or a match to `length` points
        (played until a side has them; `games` does not apply)."""
        v = _variant(variant)
        if games < 0:
            raise GameError(f"a series has 0 (no limit) or more games, not {games}")
        if isinstance(length, bool) or not 0 <= length <= MAX_LENGTH:
            raise GameError(f"a match is 1 to {MAX_LENGTH} points (0: money), not {length!r}")
        if length and (jacoby or beavers):
            raise GameError("the Jacoby rule and beavers are for money play, not matches")
        if beavers and not cube:
            raise GameError("beavers need the cube")
        chosen = seed is not None
        seed = secrets.randbits(63) if seed is None else int(seed)
        jacoby = bool(jacoby) and bool(cube)
        first = Rules(bool(cube), length, (0, 0), False, jacoby, bool(beavers))
        return cls(v, 0 if length else games, seed, [0, 0], [],
                   Game.new(v, seed, 0, starter, first), ply, starter, length, bool(cube),
                   jacoby, bool(beavers), seed_chosen=chosen)  # fmt: skip

    def _rules(self, number: int) -> Rules:
        """The rules of game `number`, played at the current score; a match's Crawford
        game is recorded when it begins."""
        crawford = False
        if self.length and self.cube and self.crawford_game is None:
            near = [self.length - x == 1 for x in self.score]
            if near.count(True) == 1:
                crawford = True
                self.crawford_game = number
        return Rules(self.cube, self.length, (self.score[0], self.score[1]), crawford,
                     self.jacoby, self.beavers)  # fmt: skip

    @property
    def is_match(self) -> bool:
        return self.length > 0

    def final_score(self) -> list[int]:
        """The score with the current game's result counted (whether or not it is yet)."""
        score = list(self.score)
        r = self.game.result
        if r is not None and len(self.results) == self.game.number:
            score[r.winner] += r.value
        return score

    @property
    def over(self) -> bool:
        """The last game of the series is finished: a side has won the match, or the
        session's last game is played."""
        if not self.game.over:
            return False
        if self.length:
            return max(self.final_score()) >= self.length
        return self.games > 0 and self.game.number + 1 >= self.games

    @property
    def winner(self) -> int | None:
        """The side that won the match (None: not over, or a money session)."""
        if not (self.length and self.over):
            return None
        score = self.final_score()
        return 0 if score[0] >= self.length else 1

    def describe(self) -> str:
        """What is played: "5-point match", "money session of 3 games, cube, Jacoby"."""
        if self.length:
            what = f"{self.length}-point match"
            if not self.cube:
                what += " without the cube"
            return what
        what = "money session" if self.cube else "series"
        what += f" of {self.games} game{'s' * (self.games != 1)}" if self.games else ""
        if self.cube:
            opts = [o for o, on in (("Jacoby", self.jacoby), ("beavers", self.beavers)) if on]
            what += ", cube" + "".join(f", {o}" for o in opts)
        return what

    def game_state_text(self) -> str:
        """The match state of the current game: "Crawford game", "post-Crawford", ""."""
        if not self.length or not self.cube:
            return ""
        if self.game.rules.crawford:
            return "Crawford game"
        if self.crawford_game is not None and self.crawford_game < self.game.number:
            return "post-Crawford"
        return ""

    @_whole
    def record_result(self) -> Result:
        """Count the current game's result in the score (once); returns it."""
        r = self.game.result
        if r is None:
            raise GameError("the game is not over")
        if len(self.results) == self.game.number:
            self.results.append(r)
            self.score[r.winner] += r.value
        return r

    @_whole
    def next_game(self) -> Game:
        """Start the next game: the winner of a single game has the first throw; after a
        gammon or backgammon both sides throw one die (seed 002)."""
        r = self.record_result()
        if self.over:
            raise GameError("the series is over")
        starter = r.winner if r.points == 1 else None
        number = self.game.number + 1
        self.history.append(self.game)
        self.game = Game.new(self.variant, self.seed, number, starter, self._rules(number))
        return self.game

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "variant": VARIANT_NAMES[self.variant],
            "games": self.games,
            "seed": self.seed,
            "score": list(self.score),
            "results": [r.to_dict() for r in self.results],
            "ply": self.ply,
            "starter": self.starter,
            "length": self.length,
            "cube": self.cube,
            "jacoby": self.jacoby,
            "beavers": self.beavers,
            "crawford_game": self.crawford_game,
            "history": [g.to_dict() for g in self.history],
            "names": list(self.names) if self.names else None,
            "export": self.export,
            "seed_chosen": self.seed_chosen,
            "game": self.game.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Series:
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise SaveFileError("not a Doublet saved game")
        if d.get("version") not in READS_VERSIONS:
            raise SaveFileError(
                f"saved game format version {d.get('version')!r}; this Doublet reads "
                f"versions {', '.join(map(str, READS_VERSIONS))}"
            )
        try:
            crawford = d.get("crawford_game")
            s = cls(
                _variant(d["variant"]),
                int(d["games"]),
                int(d["seed"]),
                [int(x) for x in d["score"]],
                [Result.from_dict(r) for r in d["results"]],
                Game.from_dict(d["game"]),
                int(d.get("ply", 0)),
                d.get("starter"),
                int(d.get("length", 0)),
                bool(d.get("cube", False)),
                bool(d.get("jacoby", False)),
                bool(d.get("beavers", False)),
                None if crawford is None else int(crawford),
                [Game.from_dict(g) for g in d.get("history", [])],
                _names(d.get("names")),
                _export(d.get("export")),
            )
        except SaveFileError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, DoubletError) as e:
            raise SaveFileError(f"damaged saved game ({_damage(e)})") from None
        chosen = d.get("seed_chosen", True)  # missing: a save from before it was kept
        if not isinstance(chosen, bool):  # (a review: "false" or null read as chosen)
            raise SaveFileError(f"damaged saved game (seed_chosen is true or false, got "
                                f"{shown(chosen, 20)})")  # fmt: skip
        s.seed_chosen = chosen
        if len(s.score) != 2 or not 0 <= s.length <= MAX_LENGTH or min(s.score) < 0:
            raise SaveFileError("the saved series' score or match length is not valid")
        if s.games < 0 or not 0 <= s.ply <= MAX_PLAY_PLY:
            raise SaveFileError(f"the saved series' number of games ({s.games}) or engine "
                                f"depth ({s.ply}) is not valid")  # fmt: skip
        if s.game.rules.cube != s.cube or s.game.rules.length != s.length:
            raise SaveFileError("the saved game's rules differ from its series'")
        if any(not g.over for g in s.history) or len(s.history) > s.game.number:
            raise SaveFileError("the saved series' earlier games are not all finished")
        return s

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically: a crash leaves the old file or the new one, never half."""
        save_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Series:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SaveFileError(f"no saved game at {str(p)!r}") from None
        except OSError as e:
            raise SaveFileError(f"cannot read {str(p)!r}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise SaveFileError(f"{str(p)!r} is not a saved game (not UTF-8 text)") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise SaveFileError(f"{str(p)!r} is not a saved game (bad JSON: {e.msg})") from None
        except (RecursionError, ValueError):
            raise SaveFileError(f"{str(p)!r} is not a saved game (JSON too deep or a number "
                                "too long)") from None  # fmt: skip
        try:
            return cls.from_dict(doc)
        except SaveFileError as e:
            raise SaveFileError(f"{str(p)!r}: {e}") from None
        except (TypeError, KeyError, ValueError, AttributeError, IndexError) as e:
            raise SaveFileError(f"{str(p)!r}: damaged saved game ({_damage(e)})") from None


def _damage(e: Exception) -> str:
    """What is wrong in a damaged saved game, in words (not Python's exception names)."""
    if isinstance(e, KeyError):
        return f"it has no {str(e)[:80]}"
    if isinstance(e, (TypeError, AttributeError)):
        return "a value of the wrong kind"
    if isinstance(e, IndexError):
        return "a list too short"
    return str(e)[:120]


def _names(v: Any) -> tuple[str, str] | None:
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 2 or not all(isinstance(x, str) for x in v):
        raise SaveFileError("the saved series' names are not two strings")
    return (v[0][:100], v[1][:100])


def _export(v: Any) -> str | None:
    if v is not None and (not isinstance(v, str) or not v or "\0" in v):
        raise SaveFileError("the saved series' record file is not a path")
    return v


def save_json(path: str | os.PathLike[str], doc: Any) -> None:
    """Write JSON to `path` atomically (a temporary file in the same folder, then rename)."""
    with atomic_open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


__all__ = [
    "ACEY_DEUCEY",
    "NO_RESIGN_NOW",
    "STANDARD",
    "Game",
    "GameError",
    "Result",
    "Rules",
    "SaveFileError",
    "Series",
    "Turn",
    "roll",
    "save_json",
]
