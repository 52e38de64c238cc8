"""The net's inputs written plainly: version 2's encoding as it was first written, one
loop per feature, in plain Python (slow). engine.encode computes the same inputs in one
pass per side with bitboards; tests/test_encode.py compares the two.

Tables come in as Python floats so that every sum is taken in float64, as numba does.
"""

from __future__ import annotations

import numpy as np

from engine.board import MY_BAR, MY_OFF, MY_OUT, OPP_BAR, OPP_OUT, flip, has_contact
from engine.encode import (
    _RAW_PER_SIDE,
    _V1_BLOCK,
    _V2_BASE,
    ESCAPES,
    HITS_OPEN,
    N_FEATURES2_PER_SIDE,
    N_INPUTS,
)


def ref_rearmost(b):
    """The mover's rearmost checker: 25 while any is on the bar or unentered, else its
    highest point (0 with none left on the board)."""
    if b[MY_BAR] > 0 or b[MY_OUT] > 0:
        return 25
    for p in range(24, 0, -1):
        if b[p] > 0:
            return p
    return 0


def ref_side_features(b, hits_open, escapes, out, k):
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
    rear = ref_rearmost(b)
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


def ref_lowest_bit(x):
    i = 0
    while not (x >> i) & 1:
        i += 1
    return i


def ref_hit_rolls(s):
    """(rolls of 36 on which the opponent of s's mover can hit one of its blots, and the sum
    over those rolls of the pips the costliest such hit loses the mover: 25 - its point).

    Bitboards over points 0..24 of the mover's numbering (the opponent moves up them,
    entering from 0): for each roll, the points the opponent's checkers can reach, one
    die at a time, never stopping on a point the mover holds. Checkers on the opponent's
    bar enter first: two or more use both dice of a roll (and a doublet's first moves);
    Acey-Deucey's unentered checkers enter as if from point 0."""
    blots = 0
    held = 0
    sources = 0
    top = 0  # the highest blot
    for p in range(1, 25):
        v = s[p]
        if v == 1:
            blots |= 1 << p
            top = p
        elif v >= 2:
            held |= 1 << p
        elif v < 0:
            sources |= 1 << p
    if blots == 0:
        return 0, 0
    ob = -s[OPP_BAR]
    if s[OPP_OUT] > 0:
        sources |= 1
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
                pips += w * (25 - ref_lowest_bit(hit))
    return rolls, pips


def ref_side_features2(s, escapes, out, k):
    """Version 2's features of the mover of s (mover's view), written to out[k:k+8]:
    rolls of 36 on which the opponent can hit a blot (exact, blocks counted); the pips
    those hits cost, averaged over the 36 rolls (/ 24); the opponent's longest run of held
    points in front of the mover's rearmost checker / 6 (capped); the mover's mobility:
    mean escape rolls / 36 of its checkers on 13..24, the bar and unentered (1 if none);
    pips the mover needs to leave contact (past the opponent's rearmost checker) / 200,
    capped; the rearmost point the mover holds with two or more / 24; its anchors in
    the opponent's home (points 19..24), capped at 2, / 2; and the chance that a checker
    on the bar fails to enter, (closed points of 19..24 / 6) squared."""
    rolls, pips = ref_hit_rolls(s)
    out[k] = rolls / 36.0
    out[k + 1] = pips / (36.0 * 24.0)
    # Escape masks: bit i of mask(p) = the opponent holds point p - 1 - i.
    back = 0
    esc_sum = 0.0
    m = 0
    for p in range(1, 26):
        if p >= 2:
            m = ((m << 1) | (1 if s[p - 1] <= -2 else 0)) & 4095
        e = escapes[m]
        n = 0
        if p <= 24:
            n = s[p] if s[p] > 0 else 0
        else:
            n = s[MY_BAR] + s[MY_OUT]
        if p >= 13 and n > 0:
            back += n
            esc_sum += n * e
    # The opponent's longest run of held points in front of the mover's rearmost checker.
    rear = ref_rearmost(s)
    run = 0
    prime = 0
    for p in range(1, rear):
        if s[p] <= -2:
            run += 1
            if run > prime:
                prime = run
        else:
            run = 0
    out[k + 2] = min(prime, 6) / 6.0
    out[k + 3] = esc_sum / (36.0 * back) if back > 0 else 1.0
    opp_rear = 25
    if s[OPP_BAR] < 0 or s[OPP_OUT] > 0:
        opp_rear = 0
    else:
        for q in range(1, 25):
            if s[q] < 0:
                opp_rear = q
                break
    need = (s[MY_BAR] + s[MY_OUT]) * (25 - opp_rear) if opp_rear < 25 else 0
    for p in range(opp_rear + 1, 25):
        if s[p] > 0:
            need += s[p] * (p - opp_rear)
    out[k + 4] = min(need / 200.0, 1.0)
    rear_anchor = 0
    anchors = 0
    closed = 0
    for p in range(1, 25):
        if s[p] >= 2:
            rear_anchor = p
            if p >= 19:
                anchors += 1
        if p >= 19 and s[p] <= -2:
            closed += 1
    out[k + 5] = rear_anchor / 24.0
    out[k + 6] = min(anchors, 2) / 2.0
    out[k + 7] = (closed / 6.0) ** 2


def ref_encode_into(b, out, scratch, hits_open, escapes):
    """Write the inputs of board b (mover's view, (SIZE,) int8) into out (N_INPUTS,) float32.
    (scratch: unused here; the flipped board is a list.)"""
    for i in range(out.shape[0]):
        out[i] = 0.0
    board = np.asarray(b, np.int8)
    b = [int(v) for v in board]
    scratch = [int(v) for v in flip(board)]
    for side in range(2):
        s = b if side == 0 else scratch
        base = side * _V1_BLOCK
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
        ref_side_features(s, hits_open, escapes, out, base + _RAW_PER_SIDE)
        ref_side_features2(s, escapes, out, _V2_BASE + side * N_FEATURES2_PER_SIDE)
    out[N_INPUTS - 1] = 1.0 if has_contact(board) else 0.0


# The pruning net's inputs (engine.eval.prune_scores): the raw per-side block alone,
# both sides, no features (so it costs next to nothing to compute).
N_PRUNE_INPUTS = 2 * _RAW_PER_SIDE


def reference_encode(board: np.ndarray) -> np.ndarray:
    """The N_INPUTS inputs of one board (mover's view), float32."""
    out = np.zeros(N_INPUTS, np.float32)
    b = np.asarray(board, np.int8)
    hits_open = [float(v) for v in HITS_OPEN]
    ref_encode_into(b, out, None, hits_open, [float(v) for v in ESCAPES])
    return out
