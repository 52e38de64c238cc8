"""Position formats at the edge of the engine: gnubg Position ID, XGID, JSON boards.

The only module (with doublet.formats.notation for plays) that parses text. Everything
returns or takes the engine's board array (doublet.core.board), seen by the side on roll.

API:

- ``position_id(board) -> str`` and ``board_from_position_id(pid) -> Board``: gnubg
  Position ID (14 characters; standard backgammon only, no unentered checkers).
- ``parse_xgid(text) -> XGID``, ``XGID.text() -> str``, ``format_xgid(board, turn, dice,
  ...) -> str``, ``xgid_dice(x) -> (d1, d2) | None``: eXtreme Gammon's XGID.
- ``board_from_json(obj) -> (Board, variant)`` and ``board_to_json(board, variant) -> dict``:
  RULES.md's JSON boards, both variants; ``load_json_board(text)`` reads a board's JSON
  text (a key given twice refused), for board_from_json and the engine protocol.
- ``validate(board, variant)``: raise unless the board is a position that can arise.
- ``parse_position(text_or_obj, variant=None) -> (Board, variant, meta)``: any of the above.

Every error is an ``InvalidPositionError`` whose message says what is wrong and where.

Positions accepted (``validate``), decided here and binding for every parser:

- each side has 15 checkers: on the points + on the bar + unentered + borne off;
- no negative counts; no point held by both sides;
- unentered checkers only in Acey-Deucey, and there never next to checkers borne off
  (bearing off needs all 15 in the home board, so all have entered);
- at most one side has borne off all 15: a finished game is a position (the engine
  sees one after the last play), but the game ends when the first side is done; the
  front ends refuse to analyse one (``check_in_play``, which also refuses an opponent
  with every checker in play on the bar against a home board without a point);
- not both sides on the bar against closed home boards (gnubg's CheckPosition rule: it
  cannot arise, since the side that moved last could not have entered).

XGIDs are read as GNU Backgammon reads them (SetXGID in set.c, PositionFromXG in
positionid.c): the 26 board characters are always from the uppercase player's side; the
turn field names the side whose turn it is (with dice 'D', 'B' or 'R', the one that
doubled), and the board returned is seen from that side (turned when turn is -1).

A cube action no game reaches is refused in both formats: a double offered in the
Crawford game, by the side whose opponent owns the cube, or on the largest cube (32768,
or an XGID's max cube field below 10), and a Match ID's double with the dice rolled; an
XGID's beaver or raccoon outside money play with beavers.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from doublet.core.board import (
    ACEY_DEUCEY,
    CHECKERS,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    OPP_OFF,
    OPP_OUT,
    RESULT_NAMES,
    SIZE,
    STANDARD,
    VARIANT_NAMES,
    VARIANTS,
    Board,
    counts,
    empty,
    flip,
    from_counts,
)
from doublet.core.doubling import MAX_CUBE_EXPONENT, double_barred
from doublet.core.errors import DoubletError, InvalidPositionError, clipped, key_list, shown
from doublet.core.jit import njit

# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def variant_number(variant: object) -> int:
    """A variant given as 0/1 or 'standard'/'acey-deucey', as doublet.core.board's int;
    InvalidPositionError naming the two for anything else."""
    if isinstance(variant, str):
        if variant in VARIANTS:
            return VARIANTS[variant]
    elif (
        isinstance(variant, (int, np.integer))
        and not isinstance(variant, bool)
        and int(variant) in VARIANT_NAMES
    ):
        return int(variant)
    what = clipped(variant) if isinstance(variant, str) else shown(variant)
    raise InvalidPositionError(
        f"unknown variant {what}: use 'standard' ({STANDARD}) or 'acey-deucey' ({ACEY_DEUCEY})"
    )


def board_array(boards: Any) -> np.ndarray:
    """`boards` as int8: one board (SIZE,) or a batch (N, SIZE) of whole-number checker
    counts -15..15; else InvalidPositionError. The kernels check no bounds, so a shorter
    board was read past its end (a review) and a count of 300 wrapped to 44."""
    bs = np.asarray(boards)
    if bs.ndim not in (1, 2) or bs.shape[-1] != SIZE:
        raise InvalidPositionError(f"a board is {SIZE} checker counts (a batch: N rows of "
                                   f"{SIZE}), got an array of shape {bs.shape}")  # fmt: skip
    if bs.dtype.kind not in "iu":
        raise InvalidPositionError(f"a board holds whole numbers of checkers, got {bs.dtype}")
    if bs.size and (int(bs.max()) > CHECKERS or int(bs.min()) < -CHECKERS):
        raise InvalidPositionError("a board's entries are checker counts, -15..15; got "
                                   f"{int(bs.min())}..{int(bs.max())}")  # fmt: skip
    return np.ascontiguousarray(bs, dtype=np.int8)


def validate(board: Board, variant: int | str = STANDARD) -> None:
    """Raise InvalidPositionError unless ``board`` is a position that can arise in ``variant``.

    The rules are listed in the module docstring. Points in messages are numbered for
    the side on roll, as the board stores them.
    """
    variant = variant_number(variant)
    if isinstance(board, np.ndarray) and board.dtype == np.int8 and board.shape == (SIZE,) and (
            _valid(board, variant)):  # fmt: skip
        return  # the kernel's check of the rules below, which say what is wrong when it fails
    if not isinstance(board, np.ndarray) or board.shape != (SIZE,) or board.dtype.kind not in "iu":
        got = (
            f"{board.dtype} array of shape {board.shape}"
            if isinstance(board, np.ndarray)
            else type(board).__name__
        )
        raise InvalidPositionError(f"a board must be an int8 array of shape ({SIZE},), got {got}")
    b = board.tolist()
    if b[OPP_BAR] > 0:
        raise InvalidPositionError(
            f"the opponent's bar (index {OPP_BAR}) is {b[OPP_BAR]}: the opponent's checkers are "
            "stored as negative numbers, so it must be <= 0"
        )
    for idx, what in (
        (MY_BAR, "the side on roll's bar"),
        (MY_OFF, "the side on roll's borne-off count"),
        (OPP_OFF, "the opponent's borne-off count"),
        (MY_OUT, "the side on roll's unentered count"),
        (OPP_OUT, "the opponent's unentered count"),
    ):
        if b[idx] < 0:
            raise InvalidPositionError(f"{what} (index {idx}) is {b[idx]}: it cannot be negative")
    if variant == STANDARD:
        for idx, side in ((MY_OUT, "the side on roll"), (OPP_OUT, "the opponent")):
            if b[idx]:
                raise InvalidPositionError(
                    f"{side} has {b[idx]} unentered checkers (index {idx}) in standard "
                    "backgammon: unentered checkers exist only in Acey-Deucey"
                )
    sides = (
        ("the side on roll", [v for v in b[1:25] if v > 0], b[MY_BAR], b[MY_OUT], b[MY_OFF]),
        ("the opponent", [-v for v in b[1:25] if v < 0], -b[OPP_BAR], b[OPP_OUT], b[OPP_OFF]),
    )
    for side, on_points, bar, out, off in sides:
        in_play = sum(on_points) + bar + out
        if in_play > CHECKERS:
            raise InvalidPositionError(
                f"{side} has {in_play} checkers in play ({sum(on_points)} on the points, "
                f"{bar} on the bar, {out} unentered): at most {CHECKERS}"
            )
        if off != CHECKERS - in_play:
            raise InvalidPositionError(
                f"{side} has {off} checkers borne off but {in_play} in play: borne off must be "
                f"{CHECKERS} - {in_play} = {CHECKERS - in_play}"
            )
        if variant == ACEY_DEUCEY and off > 0 and out > 0:
            raise InvalidPositionError(
                f"{side} has {off} checkers borne off and {out} still unentered: in Acey-Deucey "
                "bearing off needs all 15 in the home board, so all have entered"
            )
    if b[MY_OFF] == CHECKERS and b[OPP_OFF] == CHECKERS:
        raise InvalidPositionError(
            "both sides have borne off all 15 checkers: the game ends when the first side does"
        )
    if (
        b[MY_BAR] > 0
        and b[OPP_BAR] < 0
        and all(b[p] >= 2 for p in range(1, 7))
        and all(b[p] <= -2 for p in range(19, 25))
    ):
        raise InvalidPositionError(
            "both sides have checkers on the bar against closed home boards (points 1-6 of "
            "both sides hold 2 or more checkers each): this position cannot arise"
        )


@njit
def _valid(b, variant):
    """Whether validate accepts the int8 board b, checked rule by rule as validate checks
    them (validate's fast path: when this is False, validate finds and names the fault)."""
    if b[OPP_BAR] > 0:
        return False
    if b[MY_BAR] < 0 or b[MY_OFF] < 0 or b[OPP_OFF] < 0 or b[MY_OUT] < 0 or b[OPP_OUT] < 0:
        return False
    if variant == STANDARD and (b[MY_OUT] != 0 or b[OPP_OUT] != 0):
        return False
    mine = int(b[MY_BAR]) + int(b[MY_OUT])
    theirs = -int(b[OPP_BAR]) + int(b[OPP_OUT])
    for p in range(1, 25):
        v = int(b[p])
        if v > 0:
            mine += v
        else:
            theirs -= v
    for in_play, off, out in ((mine, int(b[MY_OFF]), int(b[MY_OUT])),
                              (theirs, int(b[OPP_OFF]), int(b[OPP_OUT]))):  # fmt: skip
        if in_play > CHECKERS or off != CHECKERS - in_play:
            return False
        if variant == ACEY_DEUCEY and off > 0 and out > 0:
            return False
    if b[MY_OFF] == CHECKERS and b[OPP_OFF] == CHECKERS:
        return False
    if b[MY_BAR] > 0 and b[OPP_BAR] < 0:
        closed = True
        for p in range(1, 7):
            closed = closed and b[p] >= 2 and b[25 - p] <= -2
        if closed:
            return False
    return True


@njit
def _in_play(b, variant):
    """Whether check_in_play accepts the valid int8 board b, checked as check_in_play
    checks it (its fast path, and doublet engine's fast path's check)."""
    if b[MY_OFF] == CHECKERS or b[OPP_OFF] == CHECKERS:
        return False
    if variant == STANDARD and b[OPP_BAR] < 0:
        for p in range(1, 25):
            if b[p] < 0:
                return True
        for p in range(1, 7):
            if b[p] >= 2:
                return True
        return False
    return True


def check_in_play(board: Board, variant: int = STANDARD) -> None:
    """InvalidPositionError unless a valid board (validate) is a position before a roll
    that a game can reach, seen by the side on roll, with the opponent having moved last:

    - the game is not over (validate accepts a finished game: the engine sees one after
      the last play);
    - standard backgammon: the opponent has not every checker in play on the bar unless
      the side on roll holds a point of its home board (it entered none on its last
      turn, so each die it rolled was blocked); so both sides with all 15 on the bar
      cannot arise.

    The front ends (analysis, the engine protocol, doublet moves/eval) check it; boards
    inside the engine (after a play, in the mover's view) need not meet it."""
    b = np.asarray(board)
    if b.dtype == np.int8 and b.shape == (SIZE,) and _in_play(b, variant):
        return  # the kernel's check of the rules below, which say what is wrong when it fails
    for idx, side in ((MY_OFF, "the side on roll"), (OPP_OFF, "the opponent")):
        if int(b[idx]) == CHECKERS:
            raise InvalidPositionError(
                f"the game is over: {side} has borne off all {CHECKERS} checkers, so there is "
                "no roll to play and nothing to analyse"
            )
    if (
        variant == STANDARD
        and b[OPP_BAR] < 0
        and all(b[p] >= 0 for p in range(1, 25))
        and not any(b[p] >= 2 for p in range(1, 7))
    ):
        raise InvalidPositionError(
            "the opponent, who moved last, has every checker in play on the bar, but the side "
            "on roll holds no point of its home board to have kept them out: this position "
            "cannot arise"
        )


# ---------------------------------------------------------------------------
# gnubg Position ID
# ---------------------------------------------------------------------------


@njit
def _pid_key(board, out):
    """gnubg's PositionKey of a standard board into out (10 uint8): for each side (the
    opponent first) and each of its 25 places in its own numbering (points 1..24, the
    bar last), as many 1 bits as checkers and a 0, from the lowest bit of byte 0. Returns
    the bits it took: more than 80 when the board has more checkers than a key holds."""
    out[:] = 0
    bit = 0
    for side in range(2):
        for i in range(25):
            if side == 0:
                n = -int(board[OPP_BAR]) if i == 24 else -int(board[24 - i])
            else:
                n = int(board[MY_BAR]) if i == 24 else int(board[i + 1])
            for _ in range(max(n, 0)):
                if bit < 80:
                    out[bit >> 3] |= np.uint8(1 << (bit & 7))
                bit += 1
            bit += 1
    return bit


# _pid_board's answers besides OK: the key is not a position (the messages name them).
_PID_OK, _PID_SHORT, _PID_TOO_MANY, _PID_BOTH = 0, 1, 2, 3


@njit
def _pid_board(data, out):
    """The standard board a PositionKey (10 uint8) encodes, into out (SIZE int8): _PID_OK,
    or _PID_SHORT (the 80 bits hold fewer than the 50 places, the opponent's 25 then
    the side on roll's, each a run of 1 bits per checker ended by a 0; bits after the
    50th place are not read), _PID_TOO_MANY (a side with more than 15 checkers, the side
    on roll checked first: out[0] is the side, 1 the one on roll, and out[1] its count)
    or _PID_BOTH (both sides on a point: out[0] is the point, the side on roll's)."""
    counts = np.zeros(50, np.int64)  # the opponent's 25 places, then the side on roll's
    places = 0
    for bit in range(80):
        if places == 50:
            break
        if (data[bit >> 3] >> (bit & 7)) & 1:
            counts[places] += 1
        else:
            places += 1
    out[:] = 0
    if places < 50:
        return _PID_SHORT
    for side in (1, 0):
        total = counts[25 * side : 25 * side + 25].sum()
        if total > CHECKERS:
            out[0] = side
            out[1] = total
            return _PID_TOO_MANY
    for p in range(1, 25):
        mine = counts[25 + p - 1]
        theirs = counts[24 - p]  # the opponent's point 25 - p
        if mine and theirs:
            out[0] = p
            return _PID_BOTH
        out[p] = mine - theirs
    out[MY_BAR] = counts[49]
    out[OPP_BAR] = -counts[24]
    out[MY_OFF] = CHECKERS - counts[25:].sum()
    out[OPP_OFF] = CHECKERS - counts[:25].sum()
    return _PID_OK


def position_id(board: Board) -> str:
    """gnubg Position ID (14 characters) of a standard board, the mover on roll: base64
    of _pid_key (tests/reference.py writes it bit by bit)."""
    key = np.empty(10, np.uint8)
    if _pid_key(np.asarray(board, np.int8), key) > 80:
        raise InvalidPositionError("a Position ID holds at most 30 checkers in play (15 a "
                                   "side); this board has more")  # fmt: skip
    return base64.b64encode(key.tobytes()).decode("ascii")[:14]


_BASE64_14 = re.compile(r"[A-Za-z0-9+/]{14}")


def board_from_position_id(pid: str) -> Board:
    """Parse a gnubg Position ID; raise InvalidPositionError saying what is wrong."""
    if not isinstance(pid, str):
        raise InvalidPositionError(f"a gnubg Position ID is a string, got {shown(pid)}")
    s = pid.strip()
    if len(s) != 14:
        raise InvalidPositionError(
            f"gnubg Position ID must have 14 characters, got {len(s)}: {clipped(pid)}"
        )
    if not _BASE64_14.fullmatch(s):  # b64decode would take padding ("=") inside it
        raise InvalidPositionError(
            f"gnubg Position ID has characters outside base64 (A-Z a-z 0-9 + /): {clipped(pid)}"
        )
    data = base64.b64decode(s + "==")
    b = np.empty(SIZE, np.int8)
    code = _pid_board(np.frombuffer(data, np.uint8), b)
    if code == _PID_SHORT:
        raise InvalidPositionError(f"gnubg Position ID {clipped(pid)} does not encode two sides")
    if code == _PID_TOO_MANY:
        name = "the side on roll" if b[0] else "the opponent"
        raise InvalidPositionError(
            f"gnubg Position ID {clipped(pid)} gives {name} {int(b[1])} checkers (at most 15)"
        )
    if code == _PID_BOTH:
        raise InvalidPositionError(
            f"gnubg Position ID {clipped(pid)} puts both sides on point {int(b[0])} of the "
            "side on roll"
        )
    try:
        validate(b, STANDARD)
    except InvalidPositionError as e:
        raise InvalidPositionError(f"gnubg Position ID {clipped(pid)}: {e}") from None
    return b


# ---------------------------------------------------------------------------
# XGID
# ---------------------------------------------------------------------------

# The ten fields, numbered from 1 in messages. The board is always written from the
# uppercase player's side (X), whoever is on roll: index 0 = O's bar, 1..24 = points
# in X's numbering, 25 = X's bar (gnubg's PositionFromXG).
_XGID_FIELDS = (
    "position",
    "cube",
    "cube owner",
    "turn",
    "dice",
    "score of the uppercase player",
    "score of the lowercase player",
    "Crawford/Jacoby flag",
    "match length",
    "max cube",
)
_INT = re.compile(r"-?[0-9]+")
_DICE_WORDS = {"D": "double", "B": "beaver", "R": "raccoon"}
# The max cube field XG writes (log2: 1024), which no game reaches. Doublet's cube model
# has no limit (below 32,768): a smaller value is said in the position's note.
XGID_NO_LIMIT = 10


def _xgid_slot(i: int) -> str:
    if i == 0:
        return "index 0 (the lowercase player's bar)"
    if i == 25:
        return "index 25 (the uppercase player's bar)"
    return f"point {i} (index {i})"


def _check_dice(dice: object) -> str:
    if isinstance(dice, str):
        if dice in _DICE_WORDS or dice == "00":
            return dice
        if len(dice) == 2 and all(c in "0123456789" for c in dice):
            if all("1" <= c <= "6" for c in dice):
                return dice
            raise InvalidPositionError(
                f"XGID dice {clipped(dice)}: each die must be 1-6 (or '00' for not rolled yet)"
            )
    raise InvalidPositionError(
        f"XGID dice must be '00' (not rolled yet), two dice like '31', or 'D', 'B' or 'R' "
        "(double, beaver, raccoon), got "
        f"{clipped(dice) if isinstance(dice, str) else shown(dice)}"
    )


def _int_field(value: object, name: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise InvalidPositionError(f"XGID {name} must be an integer, got {value!r}")


@dataclass(frozen=True, eq=False)
class XGID:
    """A parsed XGID. ``board`` is the engine board seen by the side the turn field names
    (the side on roll; with dice 'D', 'B' or 'R', the side whose turn it is, which has
    doubled); the other fields are kept as written in the XGID, so ``cube_owner`` and the
    scores are absolute: 1 / ``score_x`` is the uppercase player, -1 / ``score_o`` the
    lowercase one, and ``turn`` says which of them the board's mover is.

    Validated in ``__post_init__``; ``board`` is stored as a read-only int8 copy.
    ``parse_xgid(x.text())`` equals ``x``.
    """

    board: Board
    cube: int = 0  # log2 of the cube value
    cube_owner: int = 0  # 1 uppercase, -1 lowercase, 0 centred
    turn: int = 1  # 1 uppercase player's turn (the board's mover), -1 lowercase player's
    dice: str = "00"  # "00" not rolled, "31" a roll, "D"/"B"/"R" double/beaver/raccoon
    score_x: int = 0  # the uppercase player's score (points won)
    score_o: int = 0  # the lowercase player's score
    crawford: int = 0  # match: 1 = Crawford game; money: bit 0 Jacoby, bit 1 beavers
    match_length: int = 0  # 0 = money play
    max_cube: int = XGID_NO_LIMIT  # log2 of the largest cube (below 10: said in a note)

    def __post_init__(self) -> None:
        for name in (
            "cube",
            "cube_owner",
            "turn",
            "score_x",
            "score_o",
            "crawford",
            "match_length",
            "max_cube",
        ):
            object.__setattr__(self, name, _int_field(getattr(self, name), name.replace("_", " ")))
        object.__setattr__(self, "dice", _check_dice(self.dice))
        if self.turn not in (1, -1):
            raise InvalidPositionError(
                f"XGID turn must be 1 (uppercase player) or -1 (lowercase player), got {self.turn}"
            )
        if not 0 <= self.cube <= MAX_CUBE_EXPONENT:
            raise InvalidPositionError(
                f"XGID cube is the log2 of the cube value and must be 0-{MAX_CUBE_EXPONENT}, "
                f"got {self.cube}"
            )
        if self.cube_owner not in (1, 0, -1):
            raise InvalidPositionError(
                "XGID cube owner must be 1 (uppercase player), 0 (centred) or -1 (lowercase "
                f"player), got {self.cube_owner}"
            )
        if self.match_length < 0:
            raise InvalidPositionError(
                f"XGID match length must be >= 0 (0 = money play), got {self.match_length}"
            )
        if self.max_cube < 0:
            raise InvalidPositionError(f"XGID max cube must be >= 0, got {self.max_cube}")
        if self.cube > self.max_cube < XGID_NO_LIMIT:
            raise InvalidPositionError(
                f"XGID cube {1 << self.cube} is above its max cube field ({self.max_cube}: "
                f"{1 << min(self.max_cube, 62)})"
            )
        for name, score in (
            ("uppercase player's", self.score_x),
            ("lowercase player's", self.score_o),
        ):
            if score < 0:
                raise InvalidPositionError(f"XGID {name} score must be >= 0, got {score}")
            if self.match_length and score >= self.match_length:
                raise InvalidPositionError(
                    f"XGID {name} score {score} is not below the match length "
                    f"{self.match_length}: the match would be over"
                )
        if self.match_length:
            if self.crawford not in (0, 1):
                raise InvalidPositionError(
                    "XGID Crawford flag in a match must be 0 or 1 (1 = the Crawford game), "
                    f"got {self.crawford}"
                )
            at_match_point = self.match_length - 1 in (self.score_x, self.score_o)
            if self.crawford and not at_match_point:
                raise InvalidPositionError(
                    f"XGID marks the Crawford game but neither score ({self.score_x}, "
                    f"{self.score_o}) is match length - 1 = {self.match_length - 1}"
                )
        elif not 0 <= self.crawford <= 3:
            raise InvalidPositionError(
                "XGID Jacoby/beaver flags in money play must be 0-3 (bit 0 Jacoby, bit 1 "
                f"beavers), got {self.crawford}"
            )
        if self.dice in _DICE_WORDS:
            self._check_cube_action()
        board = self.board
        if isinstance(board, np.ndarray) and board.shape == (SIZE,) and board.dtype.kind in "iu":
            for idx, side in ((MY_OUT, "the side on roll"), (OPP_OUT, "the opponent")):
                if board[idx]:
                    raise InvalidPositionError(
                        f"an XGID cannot hold unentered checkers (Acey-Deucey), but {side} "
                        f"has {int(board[idx])} (index {idx})"
                    )
        validate(board, STANDARD)
        copy = np.array(board, dtype=np.int8)
        copy.flags.writeable = False
        object.__setattr__(self, "board", copy)

    def _check_cube_action(self) -> None:
        """InvalidPositionError unless the double (beaver, raccoon) of the dice field can be
        offered: with 'D' the turn field names the doubler and the cube field is the cube
        before the double (gnubg's SetXGID). Nobody doubles in the Crawford game, nor
        redoubles a cube the other side owns, nor past the largest cube (the max cube
        field below 10, else 32768); beavers and raccoons are money play's, with its
        beaver flag set."""
        offer = f"XGID dice field (5) {self.dice!r}: a {_DICE_WORDS[self.dice]} offered"
        if self.dice in ("B", "R"):
            if self.match_length:
                raise InvalidPositionError(
                    f"{offer} in a match (field 9, the match length, is {self.match_length}): "
                    "beavers are a money-play rule"
                )
            if not self.crawford & 2:
                raise InvalidPositionError(
                    f"{offer}, but the money-play flags (field 8: {self.crawford}) do not allow "
                    "beavers (bit 1, value 2)"
                )
            return
        top = self.max_cube if self.max_cube < XGID_NO_LIMIT else MAX_CUBE_EXPONENT
        barred = double_barred(bool(self.match_length and self.crawford),
                               self.cube_owner == -self.turn, 1 << self.cube, 1 << top)  # fmt: skip
        if barred == "crawford":
            raise InvalidPositionError(
                f"{offer} in the Crawford game (field 8, the Crawford flag, is 1): nobody may "
                "double in the Crawford game"
            )
        if barred == "owner":
            doubler, owner = (
                ("uppercase", "lowercase") if self.turn == 1 else ("lowercase", "uppercase")
            )
            raise InvalidPositionError(
                f"{offer} by the {doubler} player (field 4, the turn, is {self.turn}), but the "
                f"{owner} player owns the cube (field 3, the cube owner, is {self.cube_owner}): "
                "only the side that owns the cube may redouble"
            )
        if barred == "largest":
            limit = (
                f"the max cube field (10) is {top}: a cube of at most {1 << top}"
                if self.max_cube < XGID_NO_LIMIT
                else f"{1 << top} is the largest cube"
            )
            raise InvalidPositionError(
                f"{offer} of a cube at {1 << self.cube} (field 2: {self.cube}), but {limit}, "
                "which a double would pass"
            )

    def text(self) -> str:
        """The XGID as XG and gnubg write it, with the ``XGID=`` prefix."""
        x_view = self.board if self.turn == 1 else flip(self.board)
        chars = []
        for i in range(26):
            n = int(x_view[i])
            chars.append(chr(64 + n) if n > 0 else chr(96 - n) if n < 0 else "-")
        fields = [
            "".join(chars),
            str(self.cube),
            str(self.cube_owner),
            str(self.turn),
            self.dice,
            str(self.score_x),
            str(self.score_o),
            str(self.crawford),
            str(self.match_length),
            str(self.max_cube),
        ]
        return "XGID=" + ":".join(fields)

    @property
    def cube_value(self) -> int:
        return 1 << self.cube

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, XGID):
            return NotImplemented
        return self.text() == other.text()

    def __hash__(self) -> int:
        return hash(self.text())

    def __repr__(self) -> str:
        return f"parse_xgid({self.text()!r})"


def parse_xgid(text: str) -> XGID:
    """Parse an XGID, with or without the ``XGID=`` prefix.

    ``parse_xgid(s).text() == s`` for every valid ``s`` written as XG writes it (with
    the prefix, integers without leading zeros or '+').
    """
    if not isinstance(text, str):
        raise InvalidPositionError(f"an XGID is a string, got {shown(text)}")
    s = text.strip()
    if s[:5].upper() == "XGID=":
        s = s[5:]
    fields = s.split(":")
    if len(fields) != len(_XGID_FIELDS):
        raise InvalidPositionError(
            f"XGID {clipped(text)} has {len(fields)} fields separated by ':', expected "
            f"{len(_XGID_FIELDS)} ({', '.join(_XGID_FIELDS)})"
        )
    pos = fields[0]
    if len(pos) != 26:
        raise InvalidPositionError(
            f"XGID {clipped(text)}: the position field must have 26 characters (the lowercase "
            f"player's bar, points 1-24, the uppercase player's bar), got {len(pos)}"
        )
    signed = [0] * 26
    for i, ch in enumerate(pos):
        if ch == "-":
            continue
        if "A" <= ch <= "Z":
            n = ord(ch) - ord("A") + 1
        elif "a" <= ch <= "z":
            n = -(ord(ch) - ord("a") + 1)
        else:
            raise InvalidPositionError(
                f"XGID {clipped(text)}: bad character {ch!r} at {_xgid_slot(i)}; use '-' (empty), "
                "'A'-'O' (1-15 uppercase checkers) or 'a'-'o' (1-15 lowercase checkers)"
            )
        if abs(n) > CHECKERS:
            raise InvalidPositionError(
                f"XGID {clipped(text)}: {ch!r} at {_xgid_slot(i)} means {abs(n)} checkers "
                f"(at most {CHECKERS})"
            )
        if i == 0 and n > 0:
            raise InvalidPositionError(
                f"XGID {clipped(text)}: uppercase {ch!r} at {_xgid_slot(0)}: only lowercase "
                "checkers can be there"
            )
        if i == 25 and n < 0:
            raise InvalidPositionError(
                f"XGID {clipped(text)}: lowercase {ch!r} at {_xgid_slot(25)}: only uppercase "
                "checkers can be there"
            )
        signed[i] = n
    for name, total in (
        ("the uppercase player", sum(n for n in signed if n > 0)),
        ("the lowercase player", -sum(n for n in signed if n < 0)),
    ):
        if total > CHECKERS:
            raise InvalidPositionError(
                f"XGID {clipped(text)} gives {name} {total} checkers (at most {CHECKERS})"
            )
    values: dict[int, int] = {}
    for k in (1, 2, 3, 5, 6, 7, 8, 9):
        if not _INT.fullmatch(fields[k]) or len(fields[k]) > 6:
            raise InvalidPositionError(
                f"XGID {clipped(text)}: field {k + 1} ({_XGID_FIELDS[k]}) must be an integer "
                f"of at most 6 digits, got {clipped(fields[k], 20)}"
            )
        values[k] = int(fields[k])
    turn = values[3]
    if turn not in (1, -1):
        raise InvalidPositionError(
            f"XGID {clipped(text)}: field 4 (turn) must be 1 (uppercase player) or -1 (lowercase "
            f"player), got {clipped(fields[3], 20)}"
        )
    x_view = empty()
    x_view[:26] = signed
    x_view[MY_OFF] = CHECKERS - sum(n for n in signed if n > 0)
    x_view[OPP_OFF] = CHECKERS + sum(n for n in signed if n < 0)
    board = x_view if turn == 1 else flip(x_view)
    try:
        return XGID(
            board=board,
            cube=values[1],
            cube_owner=values[2],
            turn=turn,
            dice=fields[4],
            score_x=values[5],
            score_o=values[6],
            crawford=values[7],
            match_length=values[8],
            max_cube=values[9],
        )
    except InvalidPositionError as e:
        msg = str(e)
        if msg.startswith(("XGID ", "an XGID ")):
            raise InvalidPositionError(f"{msg} (in {clipped(text)})") from None
        raise InvalidPositionError(f"XGID {clipped(text)}: {msg}") from None


def format_xgid(
    board: Board,
    turn: int = 1,
    dice: tuple[int, int] | str | None = None,
    *,
    cube: int = 0,
    cube_owner: int = 0,
    score_x: int = 0,
    score_o: int = 0,
    crawford: int = 0,
    match_length: int = 0,
    max_cube: int = 10,
) -> str:
    """The XGID of a standard board (mover's view). ``turn`` says which letter the mover
    gets: 1 uppercase, -1 lowercase. ``dice``: None (not rolled, '00'), two dice, or
    the dice field itself ('31', 'D', ...). The other fields as in ``XGID``."""
    if dice is None:
        dice_text = "00"
    elif isinstance(dice, str):
        dice_text = dice
    else:
        try:
            d1, d2 = dice
        except (TypeError, ValueError):
            raise InvalidPositionError(f"XGID dice must be two dice, got {dice!r}") from None
        for d in (d1, d2):
            if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or not 1 <= d <= 6:
                raise InvalidPositionError(f"XGID dice must be two dice 1-6, got {dice!r}")
        dice_text = f"{int(d1)}{int(d2)}"
    return XGID(
        board=board,
        cube=cube,
        cube_owner=cube_owner,
        turn=turn,
        dice=dice_text,
        score_x=score_x,
        score_o=score_o,
        crawford=crawford,
        match_length=match_length,
        max_cube=max_cube,
    ).text()


def xgid_dice(x: XGID | str) -> tuple[int, int] | None:
    """The roll to play in an XGID (an ``XGID`` or its text), dice in the order written;
    None when there is none ('00' not rolled yet, 'D'/'B'/'R' a cube action)."""
    if isinstance(x, str):
        x = parse_xgid(x)
    if not isinstance(x, XGID):
        raise InvalidPositionError(f"xgid_dice takes an XGID or its text, got {shown(x)}")
    if x.dice == "00" or x.dice in _DICE_WORDS:
        return None
    return int(x.dice[0]), int(x.dice[1])


# ---------------------------------------------------------------------------
# JSON boards (RULES.md section 3)
# ---------------------------------------------------------------------------

_JSON_KEYS = ("variant", "mover", "opponent")


def _json_slot(side: str, i: int) -> str:
    if i == 0:
        return f"{side}[0] (unentered)"
    if i == 25:
        return f"{side}[25] (bar)"
    return f"{side}[{i}] (point {i} of the {side})"


def _json_side(value: object, side: str, variant: int) -> list[int]:
    if not isinstance(value, list) or len(value) != 26:
        got = f"a list of {len(value)}" if isinstance(value, list) else shown(value)
        raise InvalidPositionError(
            f"JSON board: {side!r} must be a list of 26 integers (0 = unentered, 1-24 = "
            f"points, 25 = bar), got {got}"
        )
    for i, n in enumerate(value):
        if not isinstance(n, int) or isinstance(n, bool):
            raise InvalidPositionError(
                f"JSON board: {_json_slot(side, i)} must be an integer, got {shown(n)}"
            )
        if n < 0:
            raise InvalidPositionError(
                f"JSON board: {_json_slot(side, i)} is {n}: counts cannot be negative"
            )
    if variant == STANDARD and value[0]:
        raise InvalidPositionError(
            f"JSON board: {_json_slot(side, 0)} is {value[0]} in standard backgammon: "
            "unentered checkers exist only in Acey-Deucey"
        )
    total = sum(value)
    if total > CHECKERS:
        raise InvalidPositionError(
            f"JSON board: the {side} has {total} checkers (at most {CHECKERS})"
        )
    return list(value)


def keys_once(subject: str, error: type[DoubletError] = InvalidPositionError
              ) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:  # fmt: skip
    """A json.loads object_pairs_hook that refuses a key given twice in one object (JSON
    keeps the last silently) with `error`: "{subject} gives the key ... twice in one
    object: give it once" (a JSON board's reader here, the engine protocol's requests)."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise error(f"{subject} gives the key {shown(k, 30)} twice in one object: "
                            "give it once")  # fmt: skip
            out[k] = v
        return out

    return hook


_once = keys_once("JSON board")


def load_json_board(text: str) -> Any:
    """The values of a JSON board's text (not yet checked as a board), read as the board
    given as an object would be: a key given twice in one object is refused (json.loads
    keeps the last silently, and the engine protocol refuses it in a request). The one
    reader of a board's text (board_from_json, and the protocol reading a board's variant
    from it); InvalidPositionError says what does not parse."""
    try:
        return json.loads(text, object_pairs_hook=_once)
    except json.JSONDecodeError as e:
        raise InvalidPositionError(
            f"JSON board does not parse: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    except RecursionError:
        raise InvalidPositionError("JSON board is nested too deeply to read") from None
    except InvalidPositionError:
        raise
    except ValueError:
        raise InvalidPositionError("JSON board holds a number with too many digits") from None


def board_from_json(
    obj: Mapping[str, Any] | str, variant: int | str | None = None
) -> tuple[Board, int]:
    """Parse a JSON board (a dict or its JSON text) into ``(board, variant)``.

    ``variant``, when given, must agree with the board's ``"variant"``; it stands in for
    a missing ``"variant"`` key."""
    data = load_json_board(obj) if isinstance(obj, str) else obj
    if not isinstance(data, Mapping):
        raise InvalidPositionError(
            f"a JSON board must be an object with keys {', '.join(_JSON_KEYS)}, got {shown(data)}"
        )
    unknown = sorted(str(k) for k in data if k not in _JSON_KEYS)
    if unknown:
        raise InvalidPositionError(
            f"JSON board has unknown keys {key_list(unknown)}: only {', '.join(_JSON_KEYS)}"
        )
    for key in ("mover", "opponent"):
        if key not in data:
            raise InvalidPositionError(f"JSON board has no {key!r} list")
    wanted = None if variant is None else variant_number(variant)
    if "variant" in data:
        name = data["variant"]
        if not isinstance(name, str) or name not in VARIANTS:
            raise InvalidPositionError(
                "JSON board: 'variant' must be 'standard' or 'acey-deucey', got "
                f"{clipped(name) if isinstance(name, str) else shown(name)}"
            )
        v = VARIANTS[name]
        if wanted is not None and wanted != v:
            raise InvalidPositionError(
                f"JSON board is {name!r} but {VARIANT_NAMES[wanted]!r} was asked for"
            )
    elif wanted is None:
        raise InvalidPositionError(
            "JSON board has no 'variant' ('standard' or 'acey-deucey') and none was given"
        )
    else:
        v = wanted
    mover = _json_side(data["mover"], "mover", v)
    opponent = _json_side(data["opponent"], "opponent", v)
    for p in range(1, 25):
        if mover[p] and opponent[25 - p]:
            raise InvalidPositionError(
                f"JSON board puts both sides on one point: the mover's point {p} (the "
                f"opponent's point {25 - p}) holds {mover[p]} mover and {opponent[25 - p]} "
                "opponent checkers"
            )
    board = from_counts(mover, opponent)
    try:
        validate(board, v)
    except InvalidPositionError as e:
        raise InvalidPositionError(f"JSON board: {e}") from None
    return board, v


def board_to_json(board: Board, variant: int | str = STANDARD) -> dict[str, Any]:
    """RULES.md's JSON board: ``{"variant", "mover", "opponent"}``, 26 ints per side."""
    v = variant_number(variant)
    validate(board, v)
    mover, opponent = counts(board)
    return {"variant": VARIANT_NAMES[v], "mover": mover, "opponent": opponent}


# ---------------------------------------------------------------------------
# Any format
# ---------------------------------------------------------------------------

_NO_UNENTERED_NOTE = (
    "{fmt} carries no unentered checkers: every checker missing from the board is taken "
    "as borne off (use a JSON board for Acey-Deucey positions with unentered checkers)"
)


# gnubg's game states, by the code a Match ID holds (bits 8-10).
GAME_STATES = ("no game", "playing", "over", "over by resignation", "over by a dropped double")
PLAYING = 1


def decode_match_id(text: str) -> dict[str, Any]:
    """The fields of a GNU Backgammon Match ID (12 base64 characters: 66 bits, least
    significant bit of the first byte first, as gnubg writes them): ``cube`` (the value),
    ``owner`` (0 or 1: that player; -1: centred), ``on_roll`` (the player on roll, 0 or
    1), ``crawford``, ``state``, ``turn``, ``doubled``, ``resigned``, ``dice`` ((high,
    low), or None before the roll), ``length`` (0: money), ``score`` (player 0's, player
    1's) and ``jacoby`` (gnubg sets bit 66 when the Jacoby rule is off). Checked against
    IDs written by gnubg 1.07 (tests/data/gnubg_match_ids.json). Fields no game reaches
    are refused, saying why: a score that ends the match, a double offered with the dice
    rolled, where no double may be (``_check_match_id_double``) or with the turn still the
    doubler's (a beaver aside), the Crawford bit in money play or where neither player is
    one point away, and (the game being played) the turn not the player on roll's with no
    double or resignation to answer."""
    if len(text) != 12 or not re.fullmatch(r"[A-Za-z0-9+/]{12}", text):
        raise InvalidPositionError(f"a gnubg match ID is 12 base64 characters, got {clipped(text)}")
    raw = base64.b64decode(text)
    value = int.from_bytes(raw, "little")

    def field(start: int, n: int) -> int:
        return (value >> start) & ((1 << n) - 1)

    owner = field(4, 2)
    if owner == 2:
        raise InvalidPositionError(f"match ID {text!r}: cube owner code 2 does not exist")
    state = field(8, 3)
    if state >= len(GAME_STATES):
        raise InvalidPositionError(f"match ID {text!r}: game state code {state} does not exist "
                                   "(gnubg writes 0 to 4)")  # fmt: skip
    d1, d2 = field(15, 3), field(18, 3)
    if (d1 == 0) != (d2 == 0) or d1 > 6 or d2 > 6:
        raise InvalidPositionError(f"match ID {text!r}: dice {d1}-{d2} are not a roll")
    if d1 and field(12, 1):
        raise InvalidPositionError(f"match ID {text!r}: a double is offered and the dice are "
                                   "rolled: no game reaches that")  # fmt: skip
    length = field(21, 15)
    score = (field(36, 15), field(51, 15))
    if length and max(score) >= length:
        raise InvalidPositionError(f"match ID {text!r}: a score of {score[0]}-{score[1]} "
                                   f"ends a {length}-point match")  # fmt: skip
    if field(7, 1) and not length:
        raise InvalidPositionError(f"match ID {text!r}: the Crawford bit is set in money play "
                                   "(match length 0): the Crawford game is a match's, so no "
                                   "money game has one")  # fmt: skip
    if field(7, 1) and length - 1 not in score:
        raise InvalidPositionError(f"match ID {text!r}: the Crawford bit is set but neither "
                                   f"score ({score[0]}-{score[1]}) is {length - 1}, one away "
                                   f"from the {length}-point match: the Crawford game is the "
                                   "one after a player first reaches it")  # fmt: skip
    on_roll, turn, doubled, resigned = field(6, 1), field(11, 1), field(12, 1), field(13, 2)
    if state == PLAYING and turn != on_roll and not doubled and not resigned:
        # gnubg hands the turn (who decides next) to the other player only to answer an offer
        raise InvalidPositionError(f"match ID {text!r}: the turn is player {turn}'s but player "
                                   f"{on_roll} is on roll, with no double or resignation to "
                                   "answer: no game reaches that")  # fmt: skip
    # A beaver offered (money play): gnubg keeps the doubled bit, doubles the cube, gives it
    # to the beaverer and hands the turn back to the doubler, who takes it or passes.
    beaver = bool(doubled and not length and owner == 1 - on_roll and turn == on_roll
                  and field(0, 4) >= 1)  # fmt: skip
    if doubled and not beaver:
        _check_match_id_double(text, 1 << field(0, 4), owner, on_roll, length and field(7, 1))
    if doubled and not beaver and turn == on_roll:
        raise InvalidPositionError(f"match ID {text!r}: player {on_roll}, on roll, has doubled, "
                                   "but the turn (who decides next) is still theirs: gnubg "
                                   "hands it to the player who takes or passes")  # fmt: skip
    return {
        "cube": 1 << field(0, 4),
        "owner": -1 if owner == 3 else owner,
        "on_roll": on_roll,
        "crawford": field(7, 1),
        "state": state,
        "turn": turn,
        "doubled": doubled,
        "beaver": beaver,
        "resigned": resigned,
        "dice": (max(d1, d2), min(d1, d2)) if d1 else None,
        "length": length,
        "score": score,
        "jacoby": 0 if field(66, 1) else 1,
    }


def _check_match_id_double(text: str, cube: int, owner: int, on_roll: int, crawford: int) -> None:
    """InvalidPositionError unless the player on roll may double as the Match ID ``text``
    says it has: not in the Crawford game, nor a cube the other player owns (``owner``:
    gnubg's code, 3 centred), nor past the largest cube (as XGID.__post_init__ checks)."""
    barred = double_barred(bool(crawford), owner not in (3, on_roll), cube)
    if barred == "crawford":
        raise InvalidPositionError(f"match ID {text!r}: a double is offered in the Crawford "
                                   "game (its Crawford bit is set): nobody may double in the "
                                   "Crawford game")  # fmt: skip
    if barred == "owner":
        raise InvalidPositionError(f"match ID {text!r}: player {on_roll}, on roll, has doubled, "
                                   f"but player {owner} owns the cube: only the side that owns "
                                   "the cube may redouble")  # fmt: skip
    if barred == "largest":
        raise InvalidPositionError(f"match ID {text!r}: a double is offered with the cube "
                                   f"at {cube}, the largest cube: a double would pass "
                                   "it")  # fmt: skip


def parse_position(
    text_or_obj: str | Mapping[str, Any], variant: int | str | None = None
) -> tuple[Board, int, dict[str, Any]]:
    """Parse a gnubg Position ID, an XGID or a JSON board (its text or a dict).

    Returns ``(board, variant, meta)``. ``meta["format"]`` is "gnubg", "xgid" or "json";
    for an XGID, meta also holds ``"xgid"`` (the XGID) and its fields (cube, cube_owner,
    turn, dice, score_x, score_o, crawford, match_length, max_cube) and ``"roll"``
    (``xgid_dice``). A gnubg ID or XGID is standard unless ``variant`` says Acey-Deucey;
    then ``meta["note"]`` says that it holds no unentered checkers. A gnubg ID may carry
    gnubg's match ID after a colon (``"4HPwATDgc/ABMA:cAkAAAAAAAAA"``): meta then holds
    it as ``"match_id"``, its fields (``decode_match_id``) as ``"gnubg_match"`` and its
    dice, if rolled, as ``"roll"``; the position ID is the side on roll's, as gnubg
    writes it. ``meta["note"]`` also says what an ID holds that the analysis does not take
    up: a Match ID's game not started, double or resignation offered, score in money play
    (a session's); an XGID's double, beaver or raccoon offered, max cube field below 10.
    """
    notes: list[str] = []
    wanted = None if variant is None else variant_number(variant)
    if isinstance(text_or_obj, Mapping):
        board, v = board_from_json(text_or_obj, wanted)
        return board, v, {"format": "json"}
    if not isinstance(text_or_obj, str):
        raise InvalidPositionError(
            "a position is a gnubg Position ID, an XGID or a JSON board (text or dict), "
            f"got {shown(text_or_obj)}"
        )
    s = text_or_obj.strip()
    if s.startswith("{"):
        board, v = board_from_json(text_or_obj, wanted)
        return board, v, {"format": "json"}
    v = STANDARD if wanted is None else wanted
    meta: dict[str, Any]
    parts = s.split(":")
    is_xgid = s[:5].upper() == "XGID="
    if len(parts) > 2 and not is_xgid and len(parts) != 10 and len(parts[0]) == 14:
        raise InvalidPositionError(
            f"{clipped(text_or_obj)} looks like a GNU Backgammon ID (position:match), but has "
            f"{len(parts) - 2} more ':' field{'s' if len(parts) > 3 else ''} after the match ID"
        )
    if len(parts) == 2 and not is_xgid:  # an XGID has 10 fields
        pid, match_id = parts
        gnubg = f"{clipped(text_or_obj)} looks like a GNU Backgammon ID (position:match)"
        if len(pid) != 14:
            raise InvalidPositionError(f"{gnubg}, but the Position ID {clipped(pid)} has "
                                       f"{len(pid)} characters, not 14")  # fmt: skip
        if len(match_id) != 12 or not re.fullmatch(r"[A-Za-z0-9+/]{12}", match_id):
            raise InvalidPositionError(
                f"{gnubg}, but the match ID {clipped(match_id)} is not 12 base64 characters"
            )
        board = board_from_position_id(pid)
        fields = decode_match_id(match_id)
        if fields["state"] > PLAYING:
            raise InvalidPositionError(
                f"match ID {match_id!r} says the game is {GAME_STATES[fields['state']]}: "
                "there is no decision left in it to analyse"
            )
        meta = {"format": "gnubg", "match_id": match_id, "gnubg_match": fields,
                "roll": fields["dice"]}  # fmt: skip
        fmt = "a gnubg Position ID"
        notes += _match_id_notes(fields)
    elif is_xgid or ":" in s:
        x = parse_xgid(s)
        board = np.array(x.board, dtype=np.int8)
        meta = {
            "format": "xgid",
            "xgid": x,
            "cube": x.cube,
            "cube_owner": x.cube_owner,
            "turn": x.turn,
            "dice": x.dice,
            "roll": xgid_dice(x),
            "score_x": x.score_x,
            "score_o": x.score_o,
            "crawford": x.crawford,
            "match_length": x.match_length,
            "max_cube": x.max_cube,
        }
        fmt = "an XGID"
        if x.max_cube < XGID_NO_LIMIT:  # (XG writes 10)
            notes.append(f"the XGID's max cube field ({x.max_cube}: a cube of at most "
                         f"{1 << x.max_cube}) is not applied: the cube is valued as if it had "
                         "no limit")  # fmt: skip
        if x.dice == "D":
            notes.append("the XGID says a double is offered: the cube decision's take or pass "
                         "answers it")  # fmt: skip
        elif x.dice in _DICE_WORDS:  # a review found "take or pass answers it" under a reply
            # that valued another decision (the owner's, or the next redouble)
            notes.append(
                f"the XGID says a {_DICE_WORDS[x.dice]} is offered: Doublet does not "
                "judge the answer to it; the position is analysed as it stands"
            )
    elif len(s) == 14:
        board = board_from_position_id(s)
        meta = {"format": "gnubg"}
        fmt = "a gnubg Position ID"
    else:
        raise InvalidPositionError(
            f"not a position: {clipped(text_or_obj)} is neither a gnubg Position ID (14 base64 "
            "characters, like '4HPwATDgc/ABMA'), an XGID ('XGID=...' with 10 fields "
            'separated by \':\') nor a JSON board (\'{"variant": ..., "mover": [...], '
            '"opponent": [...]}\')'
        )
    if v == ACEY_DEUCEY:
        validate(board, v)
        notes.append(_NO_UNENTERED_NOTE.format(fmt=fmt))
    if notes:
        meta["note"] = "; ".join(notes)
    return board, v, meta


def _match_id_notes(fields: Mapping[str, Any]) -> list[str]:
    """What a Match ID says that an analysis does not take up: no game started, a double
    or a resignation offered, a money session's score (gnubg writes these; the position is
    analysed as it stands)."""
    notes = []
    if fields["state"] == 0:
        notes.append("the match ID says no game is in play: the position is analysed as if "
                     "it were")  # fmt: skip
    if fields.get("beaver"):
        notes.append(f"the match ID says the side on roll has doubled and been beavered (the "
                     f"cube at {fields['cube']}, the opponent's): Doublet does not judge the "
                     "answer to a beaver; the position is analysed as it stands")  # fmt: skip
    elif fields["doubled"]:
        notes.append("the match ID says the side on roll has doubled: the cube decision's "
                     "take or pass answers it")  # fmt: skip
    if not fields["length"] and any(fields["score"]):
        notes.append(f"the match ID's score {fields['score'][0]}-{fields['score'][1]} is a money "
                     "session's: the analysis does not take it up (in money play each game "
                     "stands alone)")  # fmt: skip
    if fields["resigned"]:
        notes.append(f"the match ID says a resignation ({RESULT_NAMES[fields['resigned']]}) is "
                     "offered: Doublet does not judge resignations; the position is analysed "
                     "as it stands")  # fmt: skip
    return notes


__all__ = [
    "XGID",
    "XGID_NO_LIMIT",
    "board_array",
    "board_from_json",
    "board_from_position_id",
    "board_to_json",
    "check_in_play",
    "decode_match_id",
    "format_xgid",
    "keys_once",
    "load_json_board",
    "parse_position",
    "parse_xgid",
    "position_id",
    "validate",
    "variant_number",
    "xgid_dice",
]
