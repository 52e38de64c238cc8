"""Neural-net inputs: the TD-Gammon encoding plus a few gnubg-style contact features.

``encode(board)`` gives N_INPUTS float32 values for a board seen by the side on roll
(the position before that side rolls). Any change to the inputs must bump
ENCODER_VERSION: a model records the version it was trained with, and loading a
model of another version fails (engine.eval).

Layout (side = mover first, then opponent; each side in its own numbering):
    per side, 24 points x 4 units: n == 1, n == 2, n >= 3, (n - 3) / 2 if n > 3   (96)
    per side: bar / 2, off / 15, unentered / 15 (Acey-Deucey)                     (3)
    per side, contact features (see _side_features)                               (6)
    contact flag: 1 while the sides can still hit each other                      (1)
"""

from __future__ import annotations

import numpy as np

from engine.board import MY_BAR, MY_OFF, MY_OUT, SIZE, Boards, flip_into, has_contact
from engine.jit import njit

ENCODER_VERSION = 1
_RAW_PER_SIDE = 24 * 4 + 3
N_FEATURES_PER_SIDE = 6
N_INPUTS = 2 * (_RAW_PER_SIDE + N_FEATURES_PER_SIDE) + 1

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


@njit
def _side_features(b, hits_open, escapes, out, k):
    """Features of the mover of b (mover's view), written to out[k:k+6]:
    pip count / 167, longest prime / 6, home points made / 6, blots / 5 (capped at 1),
    chance that some blot is hit (open-board shot tables, combined as independent),
    escape rolls / 36 of the rearmost checker past the opponent's points."""
    pips = 25 * (b[MY_BAR] + b[MY_OUT])
    run = 0
    prime = 0
    home = 0
    blots = 0
    for p in range(1, 25):
        n = b[p]
        if n > 0:
            pips += n * p
        if n >= 2:
            run += 1
            if run > prime:
                prime = run
            if p <= 6:
                home += 1
        else:
            run = 0
        if n == 1:
            blots += 1
    # Risk: opponent checkers (b < 0) at q < p hit the mover's blot at p from distance p - q;
    # the opponent's bar checkers enter on the mover's points 1..6 (distance p).
    miss = 1.0
    opp_bar = -b[0]
    for p in range(1, 25):
        if b[p] != 1:
            continue
        if opp_bar > 0 and p <= 24:
            miss *= 1.0 - hits_open[p] / 36.0
        for q in range(max(1, p - 12), p):
            if b[q] < 0:
                miss *= 1.0 - hits_open[p - q] / 36.0
    # Escapes of the rearmost checker: the opponent's points ahead of it (lower numbers).
    rear = 25 if (b[MY_BAR] > 0 or b[MY_OUT] > 0) else 0
    if rear == 0:
        for p in range(24, 0, -1):
            if b[p] > 0:
                rear = p
                break
    esc = 36.0
    if rear > 0:
        mask = 0
        for i in range(12):
            q = rear - 1 - i
            if q >= 1 and b[q] <= -2:
                mask |= 1 << i
        esc = escapes[mask]
    out[k] = pips / 167.0
    out[k + 1] = prime / 6.0
    out[k + 2] = home / 6.0
    out[k + 3] = min(blots, 5) / 5.0
    out[k + 4] = 1.0 - miss
    out[k + 5] = esc / 36.0


@njit
def _encode_into(b, out, scratch, hits_open, escapes):
    """Write the inputs of board b (mover's view, (SIZE,) int8) into out (N_INPUTS,) float32.
    scratch: (SIZE,) int8 for the flipped board."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    flip_into(b, scratch)
    for side in range(2):
        s = b if side == 0 else scratch
        base = side * (_RAW_PER_SIDE + N_FEATURES_PER_SIDE)
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
        _side_features(s, hits_open, escapes, out, base + _RAW_PER_SIDE)
    out[N_INPUTS - 1] = 1.0 if has_contact(b) else 0.0


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
