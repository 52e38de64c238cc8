"""One path of single-die moves from a board to one outcome of a roll, standard
backgammon: what doublet.formats.notation.play_text writes down for the play a search
chose, without listing the roll's other plays (doublet.formats.notation.describe_outcomes
lists them all, and is the reference the tests hold this to).

The search is depth first over the dice in a fixed order, the longest the roll allows
first (a legal play uses as many dice as any play can, so no path of more dice reaches
the outcome): for a non-double the higher die first, then the lower first. Each state's
moves, by doublet.rules.movegen's single-die rules (_dest, _apply), are tried in
notation._steps' order (the bar, then points 24 down to 1), and a move
is taken only while the mover still has, on or above every point it leaves behind, at
least as many checkers as the outcome has there (checkers only move down), which cuts
the search to a few states.
"""

from __future__ import annotations

import numpy as np

from doublet.core.board import MY_BAR, SIZE, STANDARD
from doublet.core.jit import njit
from doublet.rules.movegen import _RANK_BAR, _apply, _dest, _highest, _source_index

NO_PLAY = 0  # play_path: the roll has no legal play, and the outcome is the board itself
NOT_AN_OUTCOME = -1  # play_path: no path of the roll's dice reaches the outcome


@njit
def _above(b, out):
    """out[p]: the mover's checkers on point p or higher (the bar counts as 25)."""
    n = int(b[MY_BAR])
    out[25] = n
    for p in range(24, 0, -1):
        if b[p] > 0:
            n += int(b[p])
        out[p] = n
    out[0] = n


@njit
def _sources(b, out):
    """The points the mover can move from, as doublet.rules.movegen ranks them
    (_RANK_BAR for the bar), in the order tried: the bar alone while a checker is on it,
    else points 24 down to 1. Returns how many."""
    if b[MY_BAR] > 0:
        out[0] = _RANK_BAR
        return 1
    n = 0
    for p in range(24, 0, -1):
        if b[p] > 0:
            out[n] = p
            n += 1
    return n


@njit
def _search(before, after, dice, length, need, states, srcs, nsrc, cursor, have, path):
    """A path playing dice[:length] in order from before to after, into path[:length]:
    True when found."""
    states[0, :] = before
    if length == 0:
        for i in range(SIZE):
            if before[i] != after[i]:
                return False
        return True
    nsrc[0] = _sources(before, srcs[0])
    cursor[0] = 0
    depth = 0
    while depth >= 0:
        die = dice[depth]
        moved = False
        _above(states[depth], have)
        highest = _highest(states, depth)
        while cursor[depth] < nsrc[depth]:
            rank = srcs[depth, cursor[depth]]
            cursor[depth] += 1
            dst = _dest(states, depth, rank, die, STANDARD, highest)
            if dst < 0:
                continue
            s = _source_index(rank)
            ok = True
            for p in range(dst + 1, s + 1):  # the points the checker leaves behind
                if have[p] <= need[p]:
                    ok = False
                    break
            if not ok:
                continue
            _apply(states, depth, states, depth + 1, rank, dst)
            path[depth, 0] = s
            path[depth, 1] = dst
            moved = True
            break
        if not moved:
            depth -= 1
            continue
        depth += 1
        if depth == length:
            same = True
            for i in range(SIZE):
                if states[depth, i] != after[i]:
                    same = False
                    break
            if same:
                return True
            depth -= 1
            continue
        nsrc[depth] = _sources(states[depth], srcs[depth])
        cursor[depth] = 0
    return False


@njit
def _can_move(states, r, die, srcs):
    """Whether any checker of board states[r] can move by die."""
    n = _sources(states[r], srcs)
    highest = _highest(states, r)
    for k in range(n):
        if _dest(states, r, srcs[k], die, STANDARD, highest) >= 0:
            return True
    return False


@njit
def play_path(before, after, d1, d2, path):
    """The single-die moves (source, destination) of a play of d1-d2 that turns before
    into after (standard boards, int8 (SIZE,), the mover's view), into path (4, 2): how
    many, NO_PLAY (0) when the roll cannot be played at all and after is before, or
    NOT_AN_OUTCOME (-1)."""
    hi = max(d1, d2)
    lo = min(d1, d2)
    dice = np.empty(4, np.int64)
    need = np.empty(26, np.int64)
    have = np.empty(26, np.int64)
    states = np.empty((5, SIZE), np.int8)
    srcs = np.empty((4, 26), np.int64)
    nsrc = np.zeros(4, np.int64)
    cursor = np.zeros(4, np.int64)
    _above(after, need)
    most = 4 if hi == lo else 2
    for length in range(most, -1, -1):
        for order in range(2 if (hi != lo and length > 0) else 1):
            for k in range(4):
                dice[k] = hi if hi == lo else ((hi, lo)[(k + order) % 2])
            if _search(before, after, dice, length, need, states, srcs, nsrc, cursor, have,
                       path):  # fmt: skip
                if length > 0:
                    return length
                if not (_can_move(states, 0, hi, srcs[0]) or _can_move(states, 0, lo, srcs[0])):
                    return NO_PLAY
    return NOT_AN_OUTCOME
