"""Position formats at the edge of the engine: gnubg Position ID, XGID, JSON boards.

The only module (with engine.notation for plays) that parses text. Everything
returns or takes the engine's board array (engine.board), seen by the side on roll.
"""

from __future__ import annotations

import base64

import numpy as np

from engine.board import MY_BAR, OPP_BAR, Board, CHECKERS, empty, MY_OFF, OPP_OFF
from engine.errors import InvalidPositionError


def _gnubg_sides(board: Board) -> tuple[list[int], list[int]]:
    """gnubg's anBoard[0] (opponent) and anBoard[1] (on roll): 25 ints each, own numbering."""
    opp = [0] * 25
    me = [0] * 25
    for p in range(1, 25):
        n = int(board[p])
        if n > 0:
            me[p - 1] = n
        elif n < 0:
            opp[24 - p] = -n
    me[24] = int(board[MY_BAR])
    opp[24] = -int(board[OPP_BAR])
    return opp, me


def position_id(board: Board) -> str:
    """gnubg Position ID (14 characters) of a standard board, the mover on roll."""
    bits: list[int] = []
    for side in _gnubg_sides(board):
        for n in side:
            bits.extend([1] * n)
            bits.append(0)
    bits.extend([0] * (80 - len(bits)))
    data = bytearray(10)
    for i, bit in enumerate(bits):
        if bit:
            data[i // 8] |= 1 << (i % 8)
    return base64.b64encode(bytes(data)).decode("ascii")[:14]


def board_from_position_id(pid: str) -> Board:
    """Parse a gnubg Position ID; raise InvalidPositionError saying what is wrong."""
    s = pid.strip()
    if len(s) != 14:
        raise InvalidPositionError(f"gnubg Position ID must have 14 characters, got {len(s)}: {pid!r}")
    try:
        data = base64.b64decode(s + "==", validate=True)
    except ValueError:
        raise InvalidPositionError(f"gnubg Position ID has characters outside base64: {pid!r}") from None
    bits = [(data[i // 8] >> (i % 8)) & 1 for i in range(80)]
    sides: list[list[int]] = [[0] * 25, [0] * 25]
    side, point, i = 0, 0, 0
    while side < 2 and i < 80:
        if bits[i]:
            sides[side][point] += 1
        else:
            point += 1
            if point == 25:
                side, point = side + 1, 0
        i += 1
    if side < 2:
        raise InvalidPositionError(f"gnubg Position ID {pid!r} does not encode two sides")
    opp, me = sides
    for name, cnt in (("the side on roll", me), ("the opponent", opp)):
        if sum(cnt) > CHECKERS:
            raise InvalidPositionError(
                f"gnubg Position ID {pid!r} gives {name} {sum(cnt)} checkers (at most 15)"
            )
    b = empty()
    for p in range(1, 25):
        if me[p - 1] and opp[24 - p]:
            raise InvalidPositionError(
                f"gnubg Position ID {pid!r} puts both sides on point {p} of the side on roll"
            )
        b[p] = me[p - 1] - opp[24 - p]
    b[MY_BAR] = me[24]
    b[OPP_BAR] = -opp[24]
    b[MY_OFF] = CHECKERS - sum(me)
    b[OPP_OFF] = CHECKERS - sum(opp)
    return b


__all__ = ["position_id", "board_from_position_id", "np"]
