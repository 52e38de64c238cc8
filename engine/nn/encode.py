"""Neural-net inputs: the TD-Gammon encoding plus a few gnubg-style contact features.

``encode(board)`` gives N_INPUTS float32 values for a board seen by the side on roll
(the position before that side rolls). Any change to the inputs must bump
ENCODER_VERSION: a model records the version it was trained with, and loading a
model of another version fails (doublet.nn.eval).

Layout (side = mover first, then opponent; each side in its own numbering):
    per side, 24 points x 4 units: n == 1, n == 2, n >= 3, (n - 3) / 2 if n > 3   (96)
    per side: bar / 2, off / 15, unentered / 15 (Acey-Deucey)                     (3)
    per side, contact features (see _side_features)                               (6)
    per side, version 2's contact features (see _side_features2)                  (8)
    contact flag: 1 while the sides can still hit each other                      (1)

Version 1 is version 2 without the 16 inputs of _side_features2; ``upgrade_net`` turns
a version-1 net into a version-2 net that computes exactly the same outputs (zero
weights on the new inputs), so version-1 models still load and training can start
from them.
"""

from __future__ import annotations

import numpy as np

from doublet.core.board import (
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    OPP_OUT,
    SIZE,
    Boards,
    flip_into,
    has_contact,
)
from doublet.core.jit import NO_REFCOUNT, njit

ENCODER_VERSION = 2
_RAW_PER_SIDE = 24 * 4 + 3
N_FEATURES_PER_SIDE = 6
_V1_BLOCK = _RAW_PER_SIDE + N_FEATURES_PER_SIDE
N_FEATURES2_PER_SIDE = 8
_V2_BASE = 2 * _V1_BLOCK  # the version-2 features of side s start at _V2_BASE + 8 s
N_INPUTS = 2 * (_V1_BLOCK + N_FEATURES2_PER_SIDE) + 1
N_INPUTS_BY_VERSION = {1: 2 * _V1_BLOCK + 1, 2: N_INPUTS}


def upgrade_net(net: tuple[np.ndarray, ...], version: int) -> tuple[np.ndarray, ...]:
    """A net (w1 (I, H), b1, w2, b2) of encoder `version` as a current-version net with the
    same outputs: the inputs the old version lacks get zero weights."""
    if version == ENCODER_VERSION:
        return net
    if version != 1:
        raise ValueError(f"no upgrade from encoder version {version}")
    w1, b1, w2, b2 = net
    new = np.zeros((N_INPUTS, w1.shape[1]), np.float32)
    new[:_V2_BASE] = w1[:_V2_BASE]
    new[N_INPUTS - 1] = w1[_V2_BASE]  # the contact flag stays the last input
    return (new, b1, w2, b2)


# Rolls of 36 that hit a blot at distance d (1..24) on an open board (direct + indirect).
HITS_OPEN = np.zeros(25, np.float32)
for _a in range(1, 7):
    for _b in range(1, 7):
        _reach = {_a, _b, _a + _b} if _a != _b else {_a * k for k in range(1, 5)}
        for _d in _reach:
            HITS_OPEN[_d] += 1
del _a, _b, _reach, _d


@njit
def _escape_table():
    """ESCAPES[mask]: rolls of 36 that carry a checker past all blocks in the 12 points
    ahead of it (bit i set = the point i + 1 pips ahead is closed), hopping die by die."""
    table = np.zeros(4096, np.float32)
    for mask in range(4096):
        far = 0
        for i in range(12):
            if mask & (1 << i):
                far = i + 1
        for a in range(1, 7):
            for b in range(1, 7):
                ok = False
                if far == 0:
                    ok = True
                elif a == b:
                    pos = 0
                    for _ in range(4):
                        pos += a
                        if pos <= 12 and mask & (1 << (pos - 1)):
                            break
                        if pos > far:
                            ok = True
                            break
                else:
                    for first, second in ((a, b), (b, a)):
                        if mask & (1 << (first - 1)):
                            continue
                        if first > far:
                            ok = True
                            break
                        pos = first + second
                        if pos > far and (pos > 12 or not mask & (1 << (pos - 1))):
                            ok = True
                            break
                if ok:
                    table[mask] += 1
    return table


ESCAPES = _escape_table()


@njit(**NO_REFCOUNT)
def _lowest_bit(x):
    i = 0
    while not (x >> i) & 1:
        i += 1
    return i


@njit(**NO_REFCOUNT)
def _escape_mask(closed, start):
    """The ESCAPES index of a checker on point start (25: the bar): bit i set when point
    start - 1 - i (of 1..24) is in closed, the bitboard of the points that block it."""
    mask = 0
    for i in range(12):
        q = start - 1 - i
        if q >= 1 and (closed >> q) & 1:
            mask |= 1 << i
    return mask


@njit(**NO_REFCOUNT)
def _hit_masks(blots, held, sources, ob, top):
    """(rolls of 36 on which the opponent can hit one of the mover's blots, the sum over
    those rolls of the pips the costliest such hit loses the mover: 25 - its point).

    Bitboards over points 0..24 of the mover's numbering (bit p: point p): the mover's
    blots and held points (two or more), the opponent's sources (its checkers; bit 0 for
    Acey-Deucey's unentered ones, which enter as if from point 0), ob checkers on the
    opponent's bar, top the highest blot. The opponent moves up the points, one die at a
    time, never stopping on a held point; checkers on its bar enter first: two or more
    use both dice of a roll (and a doublet's first moves)."""
    if blots == 0:
        return 0, 0
    if ob == 0 and (sources & ((1 << top) - 1)) == 0:
        return 0, 0  # no opponent checker behind any blot
    rolls = 0
    pips = 0
    for a in range(1, 7):
        for c in range(a, 7):
            reach = 0
            if a != c:
                if ob >= 2:
                    reach = (1 << a) | (1 << c)
                elif ob == 1:
                    for x, y in ((a, c), (c, a)):
                        if not (held >> x) & 1:
                            reach |= (1 << x) | (((1 << x) | sources) << y)
                else:
                    first_a = (sources << a) & ~held
                    first_c = (sources << c) & ~held
                    reach = first_a | first_c | (first_a << c) | (first_c << a)
            else:
                steps = 4
                start = sources
                if ob >= 1:
                    if (held >> a) & 1:
                        continue
                    reach = 1 << a
                    steps = 4 - ob
                    start = sources | reach
                for _ in range(steps):
                    start = (start << a) & ~held
                    reach |= start
            hit = reach & blots
            if hit:
                w = 1 if a == c else 2
                rolls += w
                pips += w * (25 - _lowest_bit(hit))
    return rolls, pips


@njit
def _hit_rolls(s):
    """_hit_masks for board s (mover's view): the opponent's shots at the mover's blots."""
    blots = 0
    held = 0
    sources = 0
    top = 0
    for p in range(1, 25):
        v = s[p]
        if v == 1:
            blots |= 1 << p
            top = p
        elif v >= 2:
            held |= 1 << p
        elif v < 0:
            sources |= 1 << p
    if s[OPP_OUT] > 0:
        sources |= 1
    return _hit_masks(blots, held, sources, -s[OPP_BAR], top)


@njit(**NO_REFCOUNT)
def _side_into(s, out, base, hits_open, escapes):
    """The inputs of the mover of s (mover's view) for its side of the layout: the raw
    units at out[base:base + 99], version 1's six features after them, and version 2's
    eight at _V2_BASE (side 0: base 0; side 1: base _V1_BLOCK).

    Version 1 (out[base + 99:base + 105]): pip count / 167, longest prime / 6, home
    points made / 6, blots / 5 (capped at 1), the chance that some blot is hit (open-
    board shot tables, combined as independent), escape rolls / 36 of the rearmost
    checker past the opponent's points ahead of it.

    Version 2: rolls of 36 on which the opponent can hit a blot (exact, blocks counted);
    the pips those hits cost, averaged over the 36 rolls (/ 24); the opponent's longest
    run of held points in front of the mover's rearmost checker / 6 (capped); the
    mover's mobility: mean escape rolls / 36 of its checkers on 13..24, the bar and
    unentered (1 if none); pips the mover needs to leave contact (past the opponent's
    rearmost checker) / 200, capped; the rearmost point the mover holds with two or more
    / 24; its anchors in the opponent's home (points 19..24), capped at 2, / 2; and the
    chance that a checker on the bar fails to enter, (closed points of 19..24 / 6)
    squared.

    One pass over the points collects counts and bitboards (bit p: point p); the
    features come from those (tests/reference_encode.py computes each one plainly)."""
    bar_out = s[MY_BAR] + s[MY_OUT]
    pips = 0  # on the points
    count = 0
    run = 0
    prime = 0
    home = 0
    n_blots = 0
    blots = 0  # the mover's blots
    held = 0  # the mover's points with two or more
    sources = 0  # the opponent's checkers
    closed = 0  # the opponent's points with two or more
    top = 0  # the highest blot
    last = 0  # the highest point with a mover checker
    last_held = 0
    anchors = 0
    opp_rear = 25  # the opponent's rearmost checker (its lowest point in the mover's view)
    pips_behind = 0  # pips and checkers of the mover below opp_rear
    count_behind = 0
    if s[OPP_BAR] < 0 or s[OPP_OUT] > 0:
        opp_rear = 0
    for p in range(1, 25):
        n = s[p]
        if n > 0:
            k = base + 4 * (p - 1)
            pips += n * p
            count += n
            last = p
            if n == 1:
                out[k] = 1.0
                blots |= 1 << p
                top = p
                n_blots += 1
                run = 0
            else:
                held |= 1 << p
                last_held = p
                run += 1
                if run > prime:
                    prime = run
                if p <= 6:
                    home += 1
                if p >= 19:
                    anchors += 1
                if n == 2:
                    out[k + 1] = 1.0
                else:
                    out[k + 2] = 1.0
                    if n > 3:
                        out[k + 3] = (n - 3) / 2.0
        else:
            run = 0
            if n < 0:
                sources |= 1 << p
                if opp_rear == 25:
                    opp_rear = p
                    pips_behind = pips
                    count_behind = count
                if n <= -2:
                    closed |= 1 << p
    out[base + 96] = s[MY_BAR] / 2.0
    out[base + 97] = s[MY_OFF] / 15.0
    out[base + 98] = s[MY_OUT] / 15.0
    rear = 25 if bar_out > 0 else last

    # Version 1. Risk: opponent checkers at q < p hit the mover's blot at p from
    # distance p - q (q ascending); the opponent's bar checkers enter on the mover's
    # points 1..6 (distance p).
    miss = 1.0
    opp_bar = -s[OPP_BAR]
    x = blots
    while x:
        p = _lowest_bit(x)
        x &= x - 1
        if opp_bar > 0:
            miss *= 1.0 - hits_open[p] / 36.0
        near = sources & ((1 << p) - 1) & ~((1 << max(1, p - 12)) - 1)
        while near:
            q = _lowest_bit(near)
            near &= near - 1
            miss *= 1.0 - hits_open[p - q] / 36.0
    esc = 36.0
    if rear > 0:
        esc = escapes[_escape_mask(closed, rear)]
    k = base + _RAW_PER_SIDE
    out[k] = (pips + 25 * bar_out) / 167.0
    out[k + 1] = prime / 6.0
    out[k + 2] = home / 6.0
    out[k + 3] = min(n_blots, 5) / 5.0
    out[k + 4] = 1.0 - miss
    out[k + 5] = esc / 36.0

    # Version 2.
    k = _V2_BASE + (base // _V1_BLOCK) * N_FEATURES2_PER_SIDE
    entering = 1 if s[OPP_OUT] > 0 else 0  # Acey-Deucey: enter as if from point 0
    rolls, hit_pips = _hit_masks(blots, held, sources | entering, opp_bar, top)
    out[k] = rolls / 36.0
    out[k + 1] = hit_pips / (36.0 * 24.0)
    # Escape masks: bit i of m(p) = the opponent holds point p - 1 - i.
    back = 0
    esc_sum = 0.0
    m = 0
    for p in range(2, 26):
        m = ((m << 1) | ((closed >> (p - 1)) & 1)) & 4095
        if p >= 13:
            n = bar_out if p == 25 else max(s[p], 0)
            if n > 0:
                back += n
                esc_sum += n * escapes[m]
    # The opponent's longest run of held points in front of the mover's rearmost checker.
    front = closed & ((1 << rear) - 2) if rear > 0 else 0
    run = 0
    while front:
        front &= front << 1
        run += 1
    out[k + 2] = min(run, 6) / 6.0
    out[k + 3] = esc_sum / (36.0 * back) if back > 0 else 1.0
    need = 0
    if opp_rear < 25:
        ahead = count - count_behind
        need = bar_out * (25 - opp_rear) + (pips - pips_behind) - opp_rear * ahead
    out[k + 4] = min(need / 200.0, 1.0)
    out[k + 5] = last_held / 24.0
    out[k + 6] = min(anchors, 2) / 2.0
    n_closed = 0
    for p in range(19, 25):
        n_closed += (closed >> p) & 1
    out[k + 7] = (n_closed / 6.0) ** 2


@njit(**NO_REFCOUNT)
def _encode_into(b, out, scratch, hits_open, escapes):
    """Write the inputs of board b (mover's view, (SIZE,) int8) into out (N_INPUTS,) float32.
    scratch: (SIZE,) int8 for the flipped board."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    flip_into(b, scratch)
    _side_into(b, out, 0, hits_open, escapes)
    _side_into(scratch, out, _V1_BLOCK, hits_open, escapes)
    out[N_INPUTS - 1] = 1.0 if has_contact(b) else 0.0


# The pruning net's inputs (doublet.nn.eval.prune_scores): the raw per-side block alone,
# both sides, no features (so it costs next to nothing to compute).
N_PRUNE_INPUTS = 2 * _RAW_PER_SIDE


@njit
def _raw_into(b, out, scratch):
    """The pruning net's inputs of board b (mover's view) into out (N_PRUNE_INPUTS,):
    the same units as the first _RAW_PER_SIDE inputs of each side of _encode_into."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    flip_into(b, scratch)
    for side in range(2):
        s = b if side == 0 else scratch
        base = side * _RAW_PER_SIDE
        for p in range(1, 25):
            n = s[p]
            if n > 0:
                k = base + 4 * (p - 1)
                if n == 1:
                    out[k] = 1.0
                elif n == 2:
                    out[k + 1] = 1.0
                else:
                    out[k + 2] = 1.0
                    if n > 3:
                        out[k + 3] = (n - 3) / 2.0
        out[base + 96] = s[MY_BAR] / 2.0
        out[base + 97] = s[MY_OFF] / 15.0
        out[base + 98] = s[MY_OUT] / 15.0


@njit
def _raw_batch(boards, out):
    scratch = np.empty(SIZE, np.int8)
    for i in range(boards.shape[0]):
        _raw_into(boards[i], out[i], scratch)


def encode_raw(boards: Boards) -> np.ndarray:
    """The pruning net's inputs of boards (N, SIZE) -> (N, N_PRUNE_INPUTS) float32."""
    bs = np.ascontiguousarray(boards, dtype=np.int8)
    if bs.ndim == 1:
        bs = bs[None, :]
    out = np.empty((bs.shape[0], N_PRUNE_INPUTS), np.float32)
    _raw_batch(bs, out)
    return out


@njit
def _encode_batch(boards, out, hits_open, escapes):
    scratch = np.empty(SIZE, np.int8)
    for i in range(boards.shape[0]):
        _encode_into(boards[i], out[i], scratch, hits_open, escapes)


def encode(boards: Boards) -> np.ndarray:
    """Inputs of boards (N, SIZE) int8 (or one board) -> (N, N_INPUTS) float32."""
    bs = np.ascontiguousarray(boards, dtype=np.int8)
    if bs.ndim == 1:
        bs = bs[None, :]
    out = np.empty((bs.shape[0], N_INPUTS), np.float32)
    _encode_batch(bs, out, HITS_OPEN, ESCAPES)
    return out
