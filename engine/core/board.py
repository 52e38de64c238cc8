"""The one position representation of the engine: a fixed-size int8 array.

A board is always seen from the side on roll (the *mover*)::

    index  0       OPP_BAR   opponent's checkers on the bar, stored <= 0
    index  1..24   points in the mover's numbering (mover's checkers > 0,
                   opponent's < 0); the mover moves 24 -> 1
    index 25       MY_BAR    mover's checkers on the bar, >= 0
    index 26       MY_OFF    mover's checkers borne off, >= 0
    index 27       OPP_OFF   opponent's checkers borne off, >= 0
    index 28       MY_OUT    mover's checkers not yet entered (Acey-Deucey), >= 0
    index 29       OPP_OUT   opponent's checkers not yet entered, >= 0

Both variants share it (MY_OUT and OPP_OUT stay 0 in standard backgammon), so
every kernel, the encoder and the search work on one layout. Because the size
is fixed, ``np.stack`` makes a batch and ``board.tobytes()`` a dict key.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from doublet.core.jit import NO_REFCOUNT, njit

Board: TypeAlias = npt.NDArray[np.int8]  # shape (SIZE,), mover's view
Boards: TypeAlias = npt.NDArray[np.int8]  # shape (N, SIZE)

SIZE = 30
OPP_BAR = 0
MY_BAR = 25
MY_OFF = 26
OPP_OFF = 27
MY_OUT = 28
OPP_OUT = 29
CHECKERS = 15

STANDARD = 0
ACEY_DEUCEY = 1
VARIANTS = {"standard": STANDARD, "acey-deucey": ACEY_DEUCEY}
VARIANT_NAMES = {v: k for k, v in VARIANTS.items()}
RESULT_NAMES = {1: "single game", 2: "gammon", 3: "backgammon"}  # by outcome()'s points

# Game results, from the side that won.
SINGLE, GAMMON, BACKGAMMON = 1, 2, 3


def empty() -> Board:
    return np.zeros(SIZE, np.int8)


def starting(variant: int = STANDARD) -> Board:
    """The position before the first roll, seen by the side that starts."""
    b = empty()
    if variant == ACEY_DEUCEY:
        b[MY_OUT] = CHECKERS
        b[OPP_OUT] = CHECKERS
        return b
    for p, n in ((24, 2), (13, 5), (8, 3), (6, 5)):
        b[p] = n
        b[25 - p] = -n
    return b


STARTING = starting(STANDARD)
STARTING.flags.writeable = False


@njit
def flip(board):
    """The same position seen by the other side: (SIZE,) int8 -> new (SIZE,) int8."""
    out = np.empty_like(board)
    for p in range(26):  # bars and points mirror: p <-> 25 - p
        out[25 - p] = -board[p]
    out[MY_OFF] = board[OPP_OFF]
    out[OPP_OFF] = board[MY_OFF]
    out[MY_OUT] = board[OPP_OUT]
    out[OPP_OUT] = board[MY_OUT]
    return out


@njit(**NO_REFCOUNT)
def flip_into(board, out):
    """Write flip(board) into out (no allocation)."""
    for p in range(26):
        out[25 - p] = -board[p]
    out[MY_OFF] = board[OPP_OFF]
    out[OPP_OFF] = board[MY_OFF]
    out[MY_OUT] = board[OPP_OUT]
    out[OPP_OUT] = board[MY_OUT]


def flip_all(boards: Boards) -> Boards:
    """flip of each row of an (N, SIZE) batch, in numpy: a new (N, SIZE) int8 array."""
    b = np.asarray(boards, dtype=np.int8).reshape(-1, SIZE)
    out = np.empty_like(b)
    out[:, 25::-1] = -b[:, :26]  # bars and points mirror: p <-> 25 - p
    out[:, MY_OFF], out[:, OPP_OFF] = b[:, OPP_OFF], b[:, MY_OFF]
    out[:, MY_OUT], out[:, OPP_OUT] = b[:, OPP_OUT], b[:, MY_OUT]
    return out


@njit
def pip_counts(board):
    """(mover's pips, opponent's pips). Bar and unentered checkers count 25."""
    # int(): the board is int8, and with the JIT off (NUMBA_DISABLE_JIT=1) numpy would
    # keep int8 sums, which overflow; numba widens them to int64 either way.
    mine = 25 * (int(board[MY_BAR]) + int(board[MY_OUT]))
    theirs = 25 * (-int(board[OPP_BAR]) + int(board[OPP_OUT]))
    for p in range(1, 25):
        n = int(board[p])
        if n > 0:
            mine += n * p
        elif n < 0:
            theirs += -n * (25 - p)
    return mine, theirs


@njit(**NO_REFCOUNT)
def outcome(board):
    """Result of a finished game for the mover: 0 if nobody has borne off all 15,
    +1/+2/+3 if the mover has won a single game/gammon/backgammon, -1/-2/-3 if
    the opponent has. Unentered checkers count as on the bar (RULES.md, Acey-Deucey)."""
    if board[MY_OFF] == CHECKERS:
        if board[OPP_OFF] > 0:
            return 1
        if board[OPP_BAR] < 0 or board[OPP_OUT] > 0:
            return 3
        for p in range(1, 7):  # the mover's home board
            if board[p] < 0:
                return 3
        return 2
    if board[OPP_OFF] == CHECKERS:
        if board[MY_OFF] > 0:
            return -1
        if board[MY_BAR] > 0 or board[MY_OUT] > 0:
            return -3
        for p in range(19, 25):  # the opponent's home board
            if board[p] > 0:
                return -3
        return -2
    return 0


@njit(**NO_REFCOUNT)
def has_contact(board):
    """True while some mover checker still has an opponent checker ahead of it."""
    if board[MY_BAR] > 0 or board[MY_OUT] > 0 or board[OPP_BAR] < 0 or board[OPP_OUT] > 0:
        return True
    lowest_opp = 25
    for p in range(1, 25):
        if board[p] < 0:
            lowest_opp = p
            break
    for p in range(24, 0, -1):
        if board[p] > 0:
            return p > lowest_opp
    return False


@njit
def _side_crashed(in_play, first, second):
    """GNU Backgammon's crashed class for one side (its definition, in these words):
    of the side's in_play checkers (on the board, the bar or not yet entered), those
    piled deep do not count: all of its 1-point's when it holds two or more, and all but
    one of its 2-point's. The side is crashed when 6 or fewer are left."""
    dead = (first if first >= 2 else 0) + max(second - 1, 0)
    return in_play - dead <= 6


@njit
def crashed(board):
    """True when the board has contact and either side is crashed (_side_crashed): GNU
    Backgammon's class of positions with a net of its own (tests hold it to gnubg's own
    labels of the refset positions)."""
    if not has_contact(board):
        return False
    mine = board[MY_BAR] + board[MY_OUT]
    theirs = -board[OPP_BAR] + board[OPP_OUT]
    for p in range(1, 25):
        if board[p] > 0:
            mine += board[p]
        else:
            theirs -= board[p]
    my_1, my_2 = max(board[1], 0), max(board[2], 0)
    their_1, their_2 = max(-board[24], 0), max(-board[23], 0)
    return _side_crashed(mine, my_1, my_2) or _side_crashed(theirs, their_1, their_2)


def counts(board: Board) -> tuple[list[int], list[int]]:
    """Both sides as RULES.md's JSON lists (26 ints, each in its own numbering:
    0 = not yet entered, 1..24 = points, 25 = bar)."""
    b = board.tolist() if isinstance(board, np.ndarray) else [int(v) for v in board]
    mover = [n if n > 0 else 0 for n in b[:26]]
    opp = [-n if n < 0 else 0 for n in b[25::-1]]
    mover[0] = b[MY_OUT]
    opp[0] = b[OPP_OUT]
    mover[25] = b[MY_BAR]
    opp[25] = -b[OPP_BAR]
    return mover, opp


def from_counts(mover: list[int], opponent: list[int]) -> Board:
    """Inverse of counts(); no validation here (see doublet.formats.ids)."""
    b = empty()
    b[MY_OUT] = mover[0]
    b[OPP_OUT] = opponent[0]
    for p in range(1, 25):
        b[p] = mover[p] - opponent[25 - p]
    b[MY_BAR] = mover[25]
    b[OPP_BAR] = -opponent[25]
    b[MY_OFF] = CHECKERS - sum(mover)
    b[OPP_OFF] = CHECKERS - sum(opponent)
    return b
