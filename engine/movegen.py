"""Move generation: every distinct legal play of a roll, as the resulting positions.

Kernels (``_name``) take plain arrays and ints and write into the caller's
buffers; ``legal_outcomes`` is the checked wrapper that owns a workspace and
grows it when a roll has more outcomes than the buffer holds.

Outcomes are boards in the *mover's* view (not flipped) after the whole turn,
with an ``again`` flag that is 1 when the mover rolls again (Acey-Deucey's 1-2
chain). A roll with no legal play yields one outcome: the unchanged board.

Source ranks: a walk tries sources from rank 26 down to 1, where rank 26 is the
mover's bar, rank 25 the unentered checkers (Acey-Deucey) and ranks 24..1 the
points. Both entering ranks enter on point 25 - die.
"""

from __future__ import annotations

import numpy as np

from engine.board import (
    ACEY_DEUCEY,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    SIZE,
    STANDARD,
    Board,
    Boards,
)
from engine.errors import InvalidDiceError
from engine.jit import njit

INITIAL_CAPACITY = 4096  # wildbg's largest standard count is 2220 plays (a 1-1)
_RANK_BAR = 26
_RANK_OUT = 25
_MAX_DEPTH = 4


@njit
def _highest(b):
    """Highest point holding a mover checker; 25 while any is on the bar or unentered."""
    if b[MY_BAR] > 0 or b[MY_OUT] > 0:
        return 25
    for p in range(24, 0, -1):
        if b[p] > 0:
            return p
    return 0


@njit
def _source_index(rank):
    if rank == _RANK_BAR:
        return MY_BAR
    if rank == _RANK_OUT:
        return MY_OUT
    return rank


@njit
def _dest(b, rank, die, variant, highest):
    """Where a mover checker of source rank goes with die: 1..24, 0 = off, -1 = illegal."""
    if rank >= _RANK_OUT:
        dst = 25 - die
    else:
        dst = rank - die
    if dst >= 1:
        if b[dst] < -1:
            return -1  # closed point
        if variant == ACEY_DEUCEY and highest <= 6:
            return -1  # Acey-Deucey: all home, dice only bear off
        return dst
    if highest > 6:
        return -1  # bearing off needs all 15 home
    if dst == 0:
        return 0
    if variant == STANDARD and rank == highest:
        return 0  # die above the highest point bears off from it
    return -1


@njit
def _apply(src_board, dst_board, rank, dst):
    """dst_board = src_board with one mover checker moved from rank to dst."""
    for i in range(SIZE):
        dst_board[i] = src_board[i]
    dst_board[_source_index(rank)] -= 1
    if dst == 0:
        dst_board[MY_OFF] += 1
    else:
        if dst_board[dst] == -1:  # hit a blot
            dst_board[dst] = 0
            dst_board[OPP_BAR] -= 1
        dst_board[dst] += 1


@njit
def _hash(b, again):
    h = np.uint64(1469598103934665603) ^ np.uint64(again)
    for i in range(SIZE):
        h = (h ^ np.uint64(np.int64(b[i]) + 128)) * np.uint64(1099511628211)
    return h


@njit
def _add(b, again, out, out_again, n, table, slots):
    """Add (b, again) to out[:n] unless present. Return the new n, or -1 if out is full."""
    mask = table.shape[0] - 1
    j = np.int64(_hash(b, again) & np.uint64(mask))
    while True:
        k = table[j]
        if k < 0:
            break
        if out_again[k] == again:
            same = True
            for i in range(SIZE):
                if out[k, i] != b[i]:
                    same = False
                    break
            if same:
                return n
        j = (j + 1) & mask
    if n >= out.shape[0]:
        return -1
    for i in range(SIZE):
        out[n, i] = b[i]
    out_again[n] = again
    table[j] = n
    slots[n] = j
    return n + 1


@njit
def _walk(b, dice, ndice, target, ordered, variant, stack, nxt, high, again,
          out, out_again, n, table, slots):  # fmt: skip
    """Depth-first walk over the plays of dice[:ndice], one die per step.

    target < 0: probe; return the most dice any play can use (stops early at ndice).
    target >= 0: add every board reached after exactly `target` dice to out; return
    the new n (-1 on overflow). ordered: sources never increase along a play (a
    doublet's moves commute, so this loses nothing and saves duplicates).
    """
    best = 0
    for i in range(SIZE):
        stack[0, i] = b[i]
    if target == 0:
        return _add(b, again, out, out_again, n, table, slots)
    nxt[0] = _RANK_BAR
    high[0] = _highest(b)
    depth = 0
    while depth >= 0:
        cur = stack[depth]
        r = nxt[depth]
        die = dice[depth]
        lowest = _RANK_BAR if cur[MY_BAR] > 0 else 1  # bar first
        dst = -1
        while r >= lowest:
            if cur[_source_index(r)] > 0:
                dst = _dest(cur, r, die, variant, high[depth])
                if dst >= 0:
                    break
            r -= 1
        if r < lowest:
            depth -= 1
            continue
        nxt[depth] = r - 1
        child = stack[depth + 1]
        _apply(cur, child, r, dst)
        depth += 1
        if target < 0:
            if depth > best:
                best = depth
                if best == ndice:
                    return best
        elif depth == target:
            n = _add(child, again, out, out_again, n, table, slots)
            if n < 0:
                return -1
            depth -= 1
            continue
        if depth == ndice:
            depth -= 1
            continue
        nxt[depth] = r if ordered else _RANK_BAR
        high[depth] = _highest(child)
    if target < 0:
        return best
    return n


@njit
def _roll(b, d1, d2, variant, ordered_doublets, dice, stack, nxt, high, again,
          out, out_again, n, table, slots):  # fmt: skip
    """Add the outcomes of playing d1-d2 (no 1-2 chain) to out. Return (n, dice used)."""
    if d1 == d2:
        for i in range(_MAX_DEPTH):
            dice[i] = d1
        m = _walk(b, dice, 4, -1, ordered_doublets, variant, stack, nxt, high, again,
                  out, out_again, n, table, slots)  # fmt: skip
        n = _walk(b, dice, 4, m, ordered_doublets, variant, stack, nxt, high, again,
                  out, out_again, n, table, slots)  # fmt: skip
        return n, m
    hi = max(d1, d2)
    lo = min(d1, d2)
    dice[0] = hi
    dice[1] = lo
    m_hi = _walk(b, dice, 2, -1, False, variant, stack, nxt, high, again,
                 out, out_again, n, table, slots)  # fmt: skip
    m = m_hi
    m_lo = 0
    if m_hi < 2:
        dice[0] = lo
        dice[1] = hi
        m_lo = _walk(b, dice, 2, -1, False, variant, stack, nxt, high, again,
                     out, out_again, n, table, slots)  # fmt: skip
        m = max(m_hi, m_lo)
    if m == 2:
        dice[0] = hi
        dice[1] = lo
        n = _walk(b, dice, 2, 2, False, variant, stack, nxt, high, again,
                  out, out_again, n, table, slots)  # fmt: skip
        if n < 0:
            return n, m
        dice[0] = lo
        dice[1] = hi
        n = _walk(b, dice, 2, 2, False, variant, stack, nxt, high, again,
                  out, out_again, n, table, slots)  # fmt: skip
        return n, m
    if m == 1:
        # Only one die can be played: the higher one if it can be (seed 003).
        dice[0] = hi if m_hi == 1 else lo
        n = _walk(b, dice, 1, 1, False, variant, stack, nxt, high, again,
                  out, out_again, n, table, slots)  # fmt: skip
        return n, m
    return _add(b, again, out, out_again, n, table, slots), 0


@njit
def _clear(table, slots, n):
    for i in range(n):
        table[slots[i]] = -1


@njit
def _outcomes(b, d1, d2, variant, out, out_again, tmp, table, slots, dice, stack, nxt, high):
    """Fill out[:n] (mover's view boards) and out_again[:n] with the distinct outcomes
    of rolling d1-d2 in b. Return n, or -1 when out (or tmp) is too small.

    table: int64 (2^k >= 2 * len(out),) all -1 on entry and on return; slots: int64 (len(out),).
    tmp: int8 (len(out), SIZE) scratch for the 1-2 chain.
    """
    ordered = variant == STANDARD  # see _walk; Acey-Deucey's home rule breaks commuting
    if variant == ACEY_DEUCEY and min(d1, d2) == 1 and max(d1, d2) == 2:
        n12, m = _roll(b, 2, 1, variant, ordered, dice, stack, nxt, high, 0,
                       out, out_again, 0, table, slots)  # fmt: skip
        if n12 < 0 or m < 2:
            if n12 < 0:
                _clear(table, slots, out.shape[0])
            else:
                _clear(table, slots, n12)
            return n12
        # Both the 1 and the 2 were played: then any doublet, rolling again if all 4 play.
        for i in range(n12):
            for j in range(SIZE):
                tmp[i, j] = out[i, j]
        _clear(table, slots, n12)
        n = 0
        for i in range(n12):
            for k in range(1, 7):
                for j in range(_MAX_DEPTH):
                    dice[j] = k
                m = _walk(tmp[i], dice, 4, -1, ordered, variant, stack, nxt, high, 0,
                          out, out_again, n, table, slots)  # fmt: skip
                n = _walk(tmp[i], dice, 4, m, ordered, variant, stack, nxt, high,
                          1 if m == 4 else 0, out, out_again, n, table, slots)  # fmt: skip
                if n < 0:
                    _clear(table, slots, out.shape[0])
                    return -1
        _clear(table, slots, n)
        return n
    n, m = _roll(b, d1, d2, variant, ordered, dice, stack, nxt, high, 0,
                 out, out_again, 0, table, slots)  # fmt: skip
    _clear(table, slots, out.shape[0] if n < 0 else n)
    return n


class Workspace:
    """Buffers for the move generator, reused across calls and grown on overflow."""

    def __init__(self, capacity: int = INITIAL_CAPACITY) -> None:
        self.allocate(capacity)
        self.dice = np.zeros(_MAX_DEPTH, np.int64)
        self.stack = np.zeros((_MAX_DEPTH + 1, SIZE), np.int8)
        self.nxt = np.zeros(_MAX_DEPTH + 1, np.int64)
        self.high = np.zeros(_MAX_DEPTH + 1, np.int64)

    def allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.out = np.zeros((capacity, SIZE), np.int8)
        self.again = np.zeros(capacity, np.int8)
        self.tmp = np.zeros((capacity, SIZE), np.int8)
        self.table = np.full(1 << (2 * capacity - 1).bit_length(), -1, np.int64)
        self.slots = np.zeros(capacity, np.int64)

    def run(self, board: Board, d1: int, d2: int, variant: int) -> int:
        """Generate into self.out / self.again, growing as needed; return the count."""
        while True:
            n = int(
                _outcomes(board, d1, d2, variant, self.out, self.again, self.tmp, self.table,
                          self.slots, self.dice, self.stack, self.nxt, self.high)  # fmt: skip
            )
            if n >= 0:
                return n
            self.allocate(self.capacity * 4)


_WORKSPACE: Workspace | None = None


def check_dice(d1: int, d2: int) -> None:
    for d in (d1, d2):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 6:
            raise InvalidDiceError(f"each die must be an integer from 1 to 6, got {d!r}")


def legal_outcomes(board: Board, d1: int, d2: int, variant: int = STANDARD
                   ) -> tuple[Boards, np.ndarray]:  # fmt: skip
    """Every distinct outcome of rolling d1-d2: (boards (n, SIZE) int8 in the mover's
    view after the whole turn, again (n,) bool: the mover rolls again)."""
    global _WORKSPACE
    check_dice(d1, d2)
    if _WORKSPACE is None:
        _WORKSPACE = Workspace()
    ws = _WORKSPACE
    n = ws.run(np.ascontiguousarray(board, dtype=np.int8), int(d1), int(d2), int(variant))
    return ws.out[:n].copy(), ws.again[:n].astype(bool)


@njit
def _count_batch(boards, rolls, variants, out, out_again, tmp, table, slots, dice, stack,
                 nxt, high):  # fmt: skip
    """Benchmark and perft helper: total outcomes over many (board, roll) pairs."""
    total = 0
    for i in range(boards.shape[0]):
        n = _outcomes(boards[i], rolls[i, 0], rolls[i, 1], variants[i], out, out_again, tmp,
                      table, slots, dice, stack, nxt, high)  # fmt: skip
        if n < 0:
            return -1 - i
        total += n
    return total


def count_batch(boards: Boards, rolls: np.ndarray, variants: np.ndarray,
                ws: Workspace | None = None) -> int:  # fmt: skip
    """Sum of outcome counts over the pairs, all inside one numba call."""
    ws = ws or Workspace()
    while True:
        total = int(
            _count_batch(boards, rolls.astype(np.int64), variants.astype(np.int64), ws.out,
                         ws.again, ws.tmp, ws.table, ws.slots, ws.dice, ws.stack, ws.nxt,
                         ws.high)  # fmt: skip
        )
        if total >= 0:
            return total
        ws.allocate(ws.capacity * 4)
