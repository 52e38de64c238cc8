"""Games and series between two sides, for the programs people play with.

The terminal (`doublet play`) and the browser (`doublet serve`) both drive a `Series`:
it holds the current `Game`, the score, and the rule for who throws first in the next
game (RULES.md, seed 002). A `Game` holds the board seen by the side on roll, the dice,
the record of the turns and the result. Sides are 0 and 1; side 0 is the person in the
programs, side 1 the engine, but nothing here depends on that.

Dice are drawn from (seed, game number, roll number), so a saved game resumes with the
same dice it would have had, and a seed replays a whole series. Everything saves to plain
JSON (`to_dict` / `from_dict`); `save` writes atomically and `load` names what is wrong
with a damaged file.

>>> s = Series.new(variant="standard", games=3, seed=7)
>>> g = s.game
>>> g.opening, g.turn, g.dice
((6, 4), 0, (6, 4))
>>> [p.notation for p in g.plays()][:3]
['24/20 24/18', '24/14', '24/18 13/9']
>>> g.play("24/18 24/20")
Turn(side=0, dice=(6, 4), play='24/20 24/18', before='4HPwATDgc/ABMA', again=False)
>>> g.turn, g.dice
(1, (5, 5))
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.core.board import ACEY_DEUCEY, STANDARD, VARIANT_NAMES, VARIANTS
from doublet.core.dice import game_roll as roll
from doublet.core.errors import DoubletError, GameError, IllegalPlayError, SaveFileError
from doublet.core.files import atomic_open
from doublet.formats.ids import board_to_json, parse_position, position_id
from doublet.formats.notation import format_play, parse_play
from doublet.formats.position import Play, Position
from doublet.rules.movegen import legal_outcomes
from doublet.search.analysis import searcher
from doublet.search.choice import choose

FORMAT = "doublet-game"
FORMAT_VERSION = 1
RESULT_NAMES = {1: "single game", 2: "gammon", 3: "backgammon"}


def _variant(v: int | str) -> int:
    if isinstance(v, str):
        if v not in VARIANTS:
            raise GameError(f"unknown variant {v!r}; choose one of {', '.join(VARIANTS)}")
        return VARIANTS[v]
    if v not in VARIANT_NAMES:
        raise GameError(f"unknown variant {v!r}")
    return int(v)


@dataclass
class Turn:
    """One turn of the record: who rolled what, the position before (the mover's view)
    and the play (notation; "" when no play was legal)."""

    side: int
    dice: tuple[int, int]
    play: str
    before: str  # gnubg Position ID (standard) or JSON board text (Acey-Deucey)
    again: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "dice": list(self.dice),
            "play": self.play,
            "before": self.before,
            "again": self.again,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Turn:
        return cls(
            int(d["side"]),
            (int(d["dice"][0]), int(d["dice"][1])),
            str(d["play"]),
            str(d["before"]),
            bool(d.get("again", False)),
        )


@dataclass
class Result:
    """How a game ended: the winner, the points (1, 2 or 3) and whether by resignation."""

    winner: int
    points: int
    resigned: bool = False

    @property
    def name(self) -> str:
        return RESULT_NAMES[self.points]

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "points": self.points, "resigned": self.resigned}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        return cls(int(d["winner"]), int(d["points"]), bool(d.get("resigned", False)))


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

    # -- construction -----------------------------------------------------------------
    @classmethod
    def new(cls, variant: int | str = STANDARD, seed: int | None = None, number: int = 0,
            starter: int | None = None) -> Game:  # fmt: skip
        """A new game. With `starter` None both sides throw one die (again on a tie); the
        higher starts, with those two dice in standard backgammon and with a fresh roll
        in Acey-Deucey. Otherwise `starter` has the first throw and rolls both dice."""
        v = _variant(variant)
        seed = secrets.randbits(63) if seed is None else int(seed)
        g = cls(v, seed, number, B.starting(v), 0, None, None)
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

    def play(self, play: str | Play, side: int | None = None) -> Turn:
        """Play `play` (notation, or a Play of `plays()`) for the side on roll; the next
        dice are rolled, or the game ends. IllegalPlayError / NotationError name what is
        wrong with a play that is not legal."""
        self._check_on()
        if side is not None and side != self.turn:
            raise GameError(f"it is side {self.turn}'s turn, not side {side}'s")
        assert self.dice is not None
        # Only the chosen play is written out: an Acey-Deucey 1-2 can have 100,000 plays,
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
            self.result = Result(self.turn, points)
            return turn
        if chosen.again:
            self.board = after
        else:
            self.board = B.flip(after)
            self.turn = 1 - self.turn
        self.dice = self._draw()
        return turn

    def resign(self, side: int, points: int = 1) -> Result:
        """`side` gives up the game, conceding `points` (1, 2 or 3)."""
        self._check_on()
        if points not in RESULT_NAMES:
            raise GameError(f"a resignation concedes 1, 2 or 3 points, not {points!r}")
        self.board = self.board.copy()
        self.dice = None
        self.result = Result(1 - side, points, resigned=True)
        return self.result

    # -- records ------------------------------------------------------------------------
    def export(self, names: tuple[str, str] = ("side 0", "side 1")) -> str:
        """The game as text: one line per turn (number, side, dice, position before, play),
        then the result."""
        lines = [
            f"; Doublet {VARIANT_NAMES[self.variant]} game {self.number + 1}, seed {self.seed}"
        ]
        if self.opening:
            lines.append(
                f"; opening throw: {names[0]} {self.opening[0]}, {names[1]} {self.opening[1]}"
            )
        for i, t in enumerate(self.record, 1):
            play = t.play or "(no play)"
            again = "  (rolls again)" if t.again else ""
            lines.append(
                f"{i:3d}  {names[t.side]:<10} {t.dice[0]}-{t.dice[1]}  {t.before}  {play}{again}"
            )
        if self.result:
            r = self.result
            how = " by resignation" if r.resigned else ""
            lines.append(
                f"; {names[r.winner]} wins a {r.name}{how}: {r.points} point{'s' * (r.points > 1)}"
            )
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
        )
        if g.turn not in (0, 1) or (g.dice is None) != (g.result is not None):
            raise SaveFileError("the saved game's turn or dice are inconsistent")
        return g


@dataclass
class Series:
    """A series of `games` games (0: no limit) and its running score."""

    variant: int
    games: int
    seed: int
    score: list[int]
    results: list[Result]
    game: Game
    ply: int = 0  # the engine's search depth (kept with the series for resuming)
    starter: int | None = None  # who starts game 1 (None: the opening throw)

    @classmethod
    def new(cls, variant: int | str = STANDARD, games: int = 1, seed: int | None = None,
            ply: int = 0, starter: int | None = None) -> Series:  # fmt: skip
        v = _variant(variant)
        if games < 0:
            raise GameError(f"a series has 0 (no limit) or more games, not {games}")
        seed = secrets.randbits(63) if seed is None else int(seed)
        return cls(v, games, seed, [0, 0], [], Game.new(v, seed, 0, starter), ply, starter)

    @property
    def over(self) -> bool:
        """The last game of the series is finished."""
        return self.game.over and self.games > 0 and len(self.results) >= self.games

    def record_result(self) -> Result:
        """Count the current game's result in the score (once); returns it."""
        r = self.game.result
        if r is None:
            raise GameError("the game is not over")
        if len(self.results) == self.game.number:
            self.results.append(r)
            self.score[r.winner] += r.points
        return r

    def next_game(self) -> Game:
        """Start the next game: the winner of a single game has the first throw; after a
        gammon or backgammon both sides throw one die (seed 002)."""
        r = self.record_result()
        if self.over:
            raise GameError("the series is over")
        starter = r.winner if r.points == 1 else None
        self.game = Game.new(self.variant, self.seed, self.game.number + 1, starter)
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
            "game": self.game.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Series:
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise SaveFileError("not a Doublet saved game")
        if d.get("version") != FORMAT_VERSION:
            raise SaveFileError(
                f"saved game format version {d.get('version')!r}; this Doublet reads "
                f"version {FORMAT_VERSION}"
            )
        try:
            return cls(
                _variant(d["variant"]),
                int(d["games"]),
                int(d["seed"]),
                [int(x) for x in d["score"]],
                [Result.from_dict(r) for r in d["results"]],
                Game.from_dict(d["game"]),
                int(d.get("ply", 0)),
                d.get("starter"),
            )
        except SaveFileError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, DoubletError) as e:
            raise SaveFileError(f"damaged saved game: {type(e).__name__}: {e}") from None

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
            raise SaveFileError(f"{str(p)!r}: a damaged saved game ({type(e).__name__}: "
                                f"{str(e)[:80]})") from None  # fmt: skip


def save_json(path: str | os.PathLike[str], doc: Any) -> None:
    """Write JSON to `path` atomically (a temporary file in the same folder, then rename)."""
    with atomic_open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def engine_play(game: Game, ply: int = 0, model: Any = None) -> Play:
    """The play the engine chooses for the side on roll at `ply` (only that play is
    written out, see Game.play)."""
    game._check_on()
    assert game.dice is not None
    if ply > 0:  # a forced play needs no search
        boards, again = legal_outcomes(game.board, *game.dice, game.variant)
        if len(boards) == 1:
            return game._play_of(boards[0], bool(again[0]))
    after, again_ = choose(searcher(model, game.variant), game.board, *game.dice, ply)
    return game._play_of(after, again_)


__all__ = [
    "ACEY_DEUCEY",
    "STANDARD",
    "Game",
    "GameError",
    "Result",
    "SaveFileError",
    "Series",
    "Turn",
    "engine_play",
    "roll",
    "save_json",
]
