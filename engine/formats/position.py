"""Position: a thin, frozen wrapper for people (CLI, tests, notebooks).

Search, self-play and batching stay on plain arrays (doublet.core.board); this class
validates, formats and explains.

>>> pos = Position.from_id("4HPwATDgc/ABMA")
>>> len(pos.plays(3, 1))
16
>>> pos.play("8/5 6/5", 3, 1).position()
Position.from_id('sGfwATDgc/ABMA')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.core.board import STANDARD, Board
from doublet.core.errors import InvalidPositionError, shown
from doublet.formats.ids import (
    board_array,
    board_from_position_id,
    board_to_json,
    check_in_play,
    format_xgid,
    parse_position,
    position_id,
    validate,
    variant_number,
)
from doublet.formats.notation import describe_outcomes, format_play, parse_play
from doublet.rules.movegen import check_dice, legal_outcomes, shots


@dataclass(frozen=True, eq=False)
class Position:
    """A position seen by the side on roll, in one variant (0 standard, 1 Acey-Deucey)."""

    board: Board
    variant: int = STANDARD

    def __post_init__(self) -> None:
        variant = variant_number(self.variant)  # 0 / 1 or its name; anything else refused
        raw = board_array(self.board)  # (a cast to int8 first wrapped 256 + n to n: a review)
        if raw.ndim != 1:
            raise InvalidPositionError(f"a Position's board is one board of {B.SIZE} checker "
                                       f"counts, got an array of shape {raw.shape}")  # fmt: skip
        b = _frozen(raw)
        validate(b, variant)
        object.__setattr__(self, "board", b)
        object.__setattr__(self, "variant", variant)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def start(cls, variant: int | str = STANDARD) -> Position:
        """The position before the first roll (``variant``: 0 / 1 or its name)."""
        v = variant_number(variant)
        return cls(B.starting(v), v)

    @classmethod
    def from_id(cls, pid: str) -> Position:
        """From a gnubg Position ID (standard backgammon)."""
        return cls.checked(board_from_position_id(pid), STANDARD)

    @classmethod
    def parse(cls, text: str | Mapping[str, Any], variant: int | str | None = None) -> Position:
        """From a gnubg Position ID, an XGID or a JSON board (text or dict)."""
        board, v, _ = parse_position(text, variant)
        return cls.checked(board, v)

    @classmethod
    def checked(cls, board: Board, variant: int) -> Position:
        """A board the parsers of doublet.formats.ids made (so validated already) as a
        Position, without validating it again (the engine protocol's hot path)."""
        pos = object.__new__(cls)
        object.__setattr__(pos, "board", _frozen(board))
        object.__setattr__(pos, "variant", int(variant))
        return pos

    # -- formats -------------------------------------------------------------------------
    def id(self) -> str:
        """gnubg Position ID (standard backgammon; unentered checkers cannot be written:
        InvalidPositionError, as xgid() gives)."""
        if self.board[B.MY_OUT] or self.board[B.OPP_OUT]:  # (a review: 'AAAAAAAAAAAAAA')
            raise InvalidPositionError("a gnubg Position ID cannot hold Acey-Deucey's unentered "
                                       "checkers: write the position as a JSON board")  # fmt: skip
        return position_id(self.board)

    def xgid(self) -> str:
        """The XGID of a standard position, the side on roll uppercase, money play with the
        cube centred and no roll (an Acey-Deucey one: InvalidPositionError)."""
        return format_xgid(self.board)

    def to_json(self) -> dict[str, Any]:
        """The JSON board: {"variant", "mover": [26 ints], "opponent": [26 ints]}."""
        return board_to_json(self.board, self.variant)

    def __repr__(self) -> str:
        if self.variant == STANDARD:
            return f"Position.from_id({self.id()!r})"
        return f"Position.parse({self.to_json()!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and self.variant == other.variant
            and bool(np.array_equal(self.board, other.board))
        )

    def __hash__(self) -> int:
        return hash((self.variant, self.board.tobytes()))

    # -- rules ---------------------------------------------------------------------------
    def flip(self) -> Position:
        """The same position seen by the opponent."""
        return Position(B.flip(self.board), self.variant)

    def pip_counts(self) -> tuple[int, int]:
        """(mover's, opponent's) pip counts; bar and unentered checkers count 25."""
        mine, theirs = B.pip_counts(self.board)
        return int(mine), int(theirs)

    def outcome(self) -> int:
        """0 while the game goes on; else +-1/2/3 (single, gammon, backgammon) for the mover."""
        return int(B.outcome(self.board))

    def shots(self, point: int = 0) -> int:
        """Rolls of 36 with which the opponent can hit the mover's blot on `point`
        (0: any blot), the opponent being next to roll. InvalidPositionError for a point
        that is not 0..24 or holds no blot of the mover."""
        if isinstance(point, bool) or not isinstance(point, (int, np.integer)):
            raise InvalidPositionError(f"a point is an integer 0..24, got {shown(point)}")
        if not 0 <= point <= 24:
            raise InvalidPositionError(f"a point is 0 (any blot) or 1..24, got {point}")
        if point and self.board[point] != 1:
            raise InvalidPositionError(f"point {point} holds no blot of the mover")
        return shots(self.board, int(point), self.variant)

    def plays(self, d1: int, d2: int) -> list[Play]:
        """Every distinct legal play of the roll (one empty play when none is legal); a
        finished game has none (InvalidPositionError, as the analysis gives)."""

        check_dice(d1, d2)
        check_in_play(self.board, self.variant)  # (a review: '1/off(4)' after the game)
        boards, again = legal_outcomes(self.board, d1, d2, self.variant)
        texts = describe_outcomes(self.board, boards, again, d1, d2, self.variant)
        return [
            Play(t, _frozen(b), bool(a), self.variant)
            for t, b, a in zip(texts, boards, again, strict=True)
        ]

    def play(self, text: str, d1: int, d2: int) -> Play:
        """The legal play that `text` means; NotationError or IllegalPlayError otherwise
        (InvalidPositionError in a finished game)."""

        check_dice(d1, d2)
        check_in_play(self.board, self.variant)
        boards, again = legal_outcomes(self.board, d1, d2, self.variant)
        i = parse_play(self.board, d1, d2, text, self.variant)
        t = format_play(self.board, boards[i], d1, d2, self.variant, bool(again[i]))
        return Play(t, _frozen(boards[i]), bool(again[i]), self.variant)


@dataclass(frozen=True, eq=False)
class Play:
    """A legal play: its notation, the board after the whole turn (the mover's view), and
    whether the mover rolls again (Acey-Deucey's 1-2 chain)."""

    notation: str
    board: Board
    again: bool
    variant: int = STANDARD

    def position(self) -> Position:
        """The position after the play, seen by the side to roll next."""
        b = self.board if self.again else B.flip(self.board)
        return Position(b, self.variant)

    def __repr__(self) -> str:
        return f"Play({self.notation!r}{', again' if self.again else ''})"

    def __eq__(self, other: object) -> bool:
        # the same outcome (board after the turn, rolling again or not) is the same play,
        # however it was reached: `pos.play("13/8 13/10", 5, 3) in pos.plays(5, 3)`
        return (
            isinstance(other, Play)
            and self.variant == other.variant
            and self.again == other.again
            and bool(np.array_equal(self.board, other.board))
        )

    def __hash__(self) -> int:  # as __eq__ compares: the counts, whatever the array's dtype
        return hash((self.variant, self.again, np.asarray(self.board, np.int8).tobytes()))


def _frozen(b: Any) -> Board:
    """b as an int8 array over bytes of its own: read-only for good (a review set
    flags.writeable back to True on a Position's board and changed its hash)."""
    return np.frombuffer(np.asarray(b, dtype=np.int8).tobytes(), dtype=np.int8)
