"""Move generation: every distinct legal play of a roll, as the resulting positions.

Kernels (``_name``) take plain arrays and ints and write into the caller's
buffers; ``legal_outcomes`` is the checked wrapper that owns a workspace and
grows it when a roll has more outcomes than the buffer holds.

Outcomes are boards in the *mover's* view (not flipped) after the whole turn,
with an ``again`` flag that is 1 when the mover rolls again (Acey-Deucey's 1-2
chain; never when the turn bore off the mover's last checker: the game is over). A roll
with no legal play yields one outcome: the unchanged board.

Source ranks: a walk tries sources from rank 26 down to 1, where rank 26 is the
mover's bar, rank 25 the unentered checkers (Acey-Deucey) and ranks 24..1 the
points. Both entering ranks enter on point 25 - die.

Standard play has kernels of its own (``_standard``), on bitmasks and without hashing,
that give the same outcomes in the same order as the walk; Acey-Deucey (its home rule,
its 1-2 chain) keeps the walk with its hash table.
"""

from __future__ import annotations

import numpy as np
from numba.core.extending import overload
from numba.cpython.unsafe.numbers import leading_zeros

from doublet.core.board import (
    ACEY_DEUCEY,
    CHECKERS,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    SIZE,
    STANDARD,
    Board,
    Boards,
    flip_into,
)
from doublet.core.dice import N_ROLLS, ROLLS_21
from doublet.core.errors import InvalidDiceError
from doublet.core.jit import NO_REFCOUNT, njit

INITIAL_CAPACITY = 4096  # wildbg's largest standard count is 2220 plays (a 1-1)
_RANK_BAR = 26
_RANK_OUT = 25
_MAX_DEPTH = 4


# The hot kernels below address boards as rows of 2-D arrays (stack[depth, i], out[n, i])
# rather than taking 1-D views: every view numba creates costs reference-count updates,
# which made a roll with no legal play cost microseconds.


@njit
def _highest(s, r):
    """Highest point holding a mover checker of board s[r]; 25 while any is on the bar or
    unentered."""
    if s[r, MY_BAR] > 0 or s[r, MY_OUT] > 0:
        return 25
    for p in range(24, 0, -1):
        if s[r, p] > 0:
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
def _dest(s, r, rank, die, variant, highest):
    """Where a mover checker of source rank in board s[r] goes with die: 1..24, 0 = off,
    -1 = illegal."""
    dst = 25 - die if rank >= _RANK_OUT else rank - die
    if dst >= 1:
        if s[r, dst] < -1:
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


@njit(inline="always")
def _apply(s, r, t, q, rank, dst):
    """t[q] = s[r] with one mover checker moved from rank to dst (rank 0: a plain copy)."""
    for i in range(SIZE):
        t[q, i] = s[r, i]
    if rank == 0:
        return
    t[q, _source_index(rank)] -= 1
    if dst == 0:
        t[q, MY_OFF] += 1
    else:
        if t[q, dst] == -1:  # hit a blot
            t[q, dst] = 0
            t[q, OPP_BAR] -= 1
        t[q, dst] += 1


# Zobrist keys: a board's hash is the XOR of _ZOBRIST[i, b[i] + 16] over its entries, so
# a move updates it with a few XORs instead of rehashing 30 bytes at every leaf.
_ZOBRIST = np.random.default_rng(20261130).integers(0, 2**63, size=(SIZE, 32), dtype=np.int64)


@njit(**NO_REFCOUNT)
def _hash(b):
    """Zobrist hash of a (SIZE,) board."""
    h = np.int64(0)
    for i in range(SIZE):
        h ^= _ZOBRIST[i, b[i] + 16]
    return h


@njit
def _set(h, i, old, new):
    return h ^ _ZOBRIST[i, old + 16] ^ _ZOBRIST[i, new + 16]


@njit
def _moved_hash(h, s, r, rank, dst):
    """Hash of board s[r] after moving a mover checker from rank to dst."""
    src = _source_index(rank)
    h = _set(h, src, s[r, src], s[r, src] - 1)
    if dst == 0:
        return _set(h, MY_OFF, s[r, MY_OFF], s[r, MY_OFF] + 1)
    if s[r, dst] == -1:
        h = _set(h, OPP_BAR, s[r, OPP_BAR], s[r, OPP_BAR] - 1)
        return _set(h, dst, -1, 1)
    return _set(h, dst, s[r, dst], s[r, dst] + 1)


@njit(inline="always")
def _insert(s, r, rank, dst, key, again, out, out_again, hashes, table, slots, n, spare):
    """Add board s[r] after moving rank -> dst (rank 0: s[r] itself), whose hash is key, to
    the outcomes out[:n] unless present. Return the new n, or -1 when out is full.

    The board is only built when its hash matches an outcome (into s[spare], to compare)
    or when it is new (straight into out[n]).
    """
    key ^= again
    mask = table.shape[0] - 1
    j = key & mask
    built = False
    while True:
        k = table[j]
        if k < 0:
            break
        if hashes[k] == key and out_again[k] == again:
            if not built:
                _apply(s, r, s, spare, rank, dst)
                built = True
            same = True
            for i in range(SIZE):
                if out[k, i] != s[spare, i]:
                    same = False
                    break
            if same:
                return n
        j = (j + 1) & mask
    if n >= out.shape[0]:
        return -1
    _apply(s, r, out, n, rank, dst)
    out_again[n] = again
    hashes[n] = key
    table[j] = n
    slots[n] = j
    return n + 1


@njit
def _walk(b, h, ndice, target, ordered, variant, again, acc, n, scratch, commuted=False):
    """Depth-first walk over the plays of dice[:ndice], one die per step.

    target < 0: probe; return the most dice any play can use (stops early at ndice).
    target >= 0: add every board reached after exactly `target` dice to the outcomes;
    return the new n (-1 on overflow). ordered: sources never increase along a play (a
    standard doublet's moves commute, so this loses nothing and saves duplicates).
    commuted: the other order of these two dice was walked already; skip the two-move
    plays that are that walk's plays in the other order (see _roll).
    b: (SIZE,) board, h its hash; scratch = (dice, stack, nxt, high, hashes, landed).
    """
    dice, stack, nxt, high, hs, landed = scratch
    out, out_again, hashes, table, slots = acc
    for i in range(SIZE):
        stack[0, i] = b[i]
    if target == 0:
        return _insert(stack, 0, 0, 0, h, again, out, out_again, hashes, table, slots, n, 1)
    best = 0
    nxt[0] = _RANK_BAR
    high[0] = _highest(stack, 0)
    hs[0] = h
    depth = 0
    while depth >= 0:
        r = nxt[depth]
        die = dice[depth]
        lowest = _RANK_BAR if stack[depth, MY_BAR] > 0 else 1  # bar first
        if commuted and depth == 1 and landed[1] >= 1 and high[1] > 6:
            # No bear-off is possible: only the checker just moved can make a play that
            # the other order lacks (see the skip below).
            lowest = landed[1]
            r = min(r, lowest)
        dst = -1
        while r >= lowest:
            if stack[depth, _source_index(r)] > 0:
                dst = _dest(stack, depth, r, die, variant, high[depth])
                if dst >= 0:
                    break
            r -= 1
        if r < lowest:
            depth -= 1
            continue
        nxt[depth] = r - 1
        if target < 0:
            if depth + 1 > best:
                best = depth + 1
                if best == ndice:
                    return best
        elif depth + 1 == target:
            if commuted and depth == 1 and dst >= 1 and landed[1] >= 1 and r != landed[1]:
                continue
            key = _moved_hash(hs[depth], stack, depth, r, dst)
            # A play that bears off the last checker ends the game: no roll again.
            ag = 0 if dst == 0 and stack[depth, MY_OFF] == CHECKERS - 1 else again
            n = _insert(stack, depth, r, dst, key, ag, out, out_again, hashes, table,
                        slots, n, depth + 1)  # fmt: skip
            if n < 0:
                return -1
            continue
        if depth + 1 == ndice:
            continue
        hs[depth + 1] = _moved_hash(hs[depth], stack, depth, r, dst)
        _apply(stack, depth, stack, depth + 1, r, dst)
        depth += 1
        landed[depth] = dst
        nxt[depth] = r if ordered else _RANK_BAR
        high[depth] = _highest(stack, depth)
    if target < 0:
        return best
    return n


@njit
def _doublet(b, h, d, variant, ordered, again_if_all, acc, n, scratch):
    """Add the plays of doublet d (up to four moves, maximal use). Return (n, dice used)."""
    dice = scratch[0]
    for i in range(_MAX_DEPTH):
        dice[i] = d
    # Probe first: the outcomes may hold this doublet's plays already (the 1-2 chain), so
    # "nothing new was added" would not mean "no play uses four dice".
    m = _walk(b, h, 4, -1, ordered, variant, 0, acc, n, scratch)
    # All four played: roll again, unless the play bore off the last checker, which ends
    # the game (_walk clears the flag of such a play; a review found 11/8 then 4-4: 8/4
    # 4/off(3) flagged as rolling again, which broke that roll at every door).
    again = 1 if again_if_all and m == 4 else 0
    return _walk(b, h, 4, m, ordered, variant, again, acc, n, scratch), m


@njit
def _roll(b, h, d1, d2, variant, acc, n, scratch):
    """Add the outcomes of playing d1-d2 (no 1-2 chain) to out. Return (n, dice used)."""
    if d1 == d2:
        return _doublet(b, h, d1, variant, variant == STANDARD, False, acc, n, scratch)
    dice = scratch[0]
    hi = max(d1, d2)
    lo = min(d1, d2)
    # Most rolls play both dice: collect those plays in both orders at once (outcomes are
    # empty on entry, so nothing added means no play uses both dice).
    dice[0] = hi
    dice[1] = lo
    n2 = _walk(b, h, 2, 2, False, variant, 0, acc, n, scratch)
    if n2 < 0:
        return n2, 2
    dice[0] = lo
    dice[1] = hi
    # In standard play, with no checker on the bar, two moves that neither bear off nor
    # move the same checker are legal in either order with the same result: the hi-lo
    # walk has them already. (Not so in Acey-Deucey: the home rule.)
    commuted = variant == STANDARD and b[MY_BAR] == 0
    n2 = _walk(b, h, 2, 2, False, variant, 0, acc, n2, scratch, commuted)
    if n2 != n:
        return n2, 2
    # No play uses both dice.
    dice[0] = hi
    m_hi = _walk(b, h, 1, -1, False, variant, 0, acc, n, scratch)
    dice[0] = lo
    m = max(m_hi, _walk(b, h, 1, -1, False, variant, 0, acc, n, scratch))
    if m == 1:
        # Only one die can be played: the higher one if it can be (seed 003).
        dice[0] = hi if m_hi == 1 else lo
        return _walk(b, h, 1, 1, False, variant, 0, acc, n, scratch), m
    return _walk(b, h, 0, 0, False, variant, 0, acc, n, scratch), 0


# Standard backgammon has kernels of its own. There the bar is index 25 (MY_BAR) and a
# checker on it enters on 25 - die just as a checker on point p moves to p - die, so the
# sources and the open points fit in int64 masks (bit p = index p, 1..25) and a turn is a
# few nested loops over set bits, highest first: the plays of _walk in _walk's order,
# without its hashing. The opponent's checkers do not move during the turn, so the points
# open to the mover stay the same; only the mask of sources changes.


def _top(m):
    """Index of the highest set bit of m > 0 (pure Python, as with NUMBA_DISABLE_JIT=1)."""
    return int(m).bit_length() - 1


@overload(_top, inline="always")
def _top_compiled(m):
    return lambda m: 63 - leading_zeros(m)  # one instruction where compiled


@njit(inline="always")
def _move(t, q, s, dst):
    """Move a mover checker of board t[q] from index s (1..25) to point dst (<= 0: off),
    hitting a blot there. Return 1 if it hit."""
    t[q, s] -= 1
    if dst <= 0:
        t[q, MY_OFF] += 1
        return 0
    if t[q, dst] == -1:
        t[q, dst] = 1
        t[q, OPP_BAR] -= 1
        return 1
    t[q, dst] += 1
    return 0


@njit(inline="always")
def _unmove(t, q, s, dst, hit):
    """Undo _move(t, q, s, dst), which returned hit."""
    t[q, s] += 1
    if dst <= 0:
        t[q, MY_OFF] -= 1
    elif hit:
        t[q, dst] = -1
        t[q, OPP_BAR] += 1
    else:
        t[q, dst] -= 1


@njit(inline="always")
def _moved_occ(occ, count, s, dst):
    """The source mask once a checker has left s (which held count) for dst."""
    if count == 1:
        occ ^= 1 << s
    if dst >= 1:
        occ |= 1 << dst
    return occ


@njit(inline="always")
def _movers(occ, opn, d):
    """Sources (mask) that can play die d: the bar alone while it holds checkers; once all
    are home (no source above 6), also point d and a highest point below d bear off."""
    if occ >> MY_BAR & 1:
        return (opn >> (MY_BAR - d) & 1) << MY_BAR
    m = occ & (opn << d)
    if occ >> 7 == 0 and occ != 0:
        m |= occ & (1 << d)
        h = _top(occ)
        if h < d:
            m |= 1 << h
    return m


@njit(inline="always")
def _emit(b, out, n, s1, d1, s2, d2):
    """out[n] = b after the moves s1 -> d1, then s2 -> d2 unless s2 is 0."""
    for i in range(SIZE):
        out[n, i] = b[i]
    _move(out, n, s1, d1)
    if s2 > 0:
        _move(out, n, s2, d2)


@njit(**NO_REFCOUNT)
def _std_two(b, hi, lo, occ, opn, out, n):
    """Add the plays of hi-lo (hi > lo) that use both dice, when no checker can bear off
    during the turn (one checker on the bar, or two or more outside the home board).
    Return the new n, -1 when out is full.

    The plays of both orders come as _walk finds them, without its hash: two plays can
    only give the same board when one checker moves hi + lo, and those repeats are
    skipped by rule (a blot hit on the way tells the two routes apart).
    """
    cap = out.shape[0]
    bar = b[MY_BAR]
    mh = occ & (opn << hi)
    if bar:
        mh &= 1 << MY_BAR
    while mh:
        x = _top(mh)
        mh ^= 1 << x
        t = x - hi
        ml = _moved_occ(occ, b[x], x, t) & (opn << lo)
        while ml:
            y = _top(ml)
            ml ^= 1 << y
            # y/x after x/t: one checker went y/x/t, which y/y-hi/t (found at source y)
            # did already unless y-hi held a blot.
            if y - lo == x and y - hi >= 1 and b[y - hi] >= 0:
                continue
            if n >= cap:
                return -1
            _emit(b, out, n, x, t, y, y - lo)
            n += 1
    if bar:
        t = MY_BAR - lo
        if not opn >> t & 1:
            return n
        mh = _moved_occ(occ, 1, MY_BAR, t) & (opn << hi)
        # bar/t/t-hi repeats bar/(25-hi)/t-hi unless one of the two held a blot.
        same = b[MY_BAR - hi] >= 0 and b[t] >= 0
        while mh:
            y = _top(mh)
            mh ^= 1 << y
            if y == t and same:
                continue
            if n >= cap:
                return -1
            _emit(b, out, n, MY_BAR, t, y, y - hi)
            n += 1
        return n
    # Lo first, no bar: the moves of two checkers commute, so only x/t/u (one checker, lo
    # then hi) can be new: not if t held a checker of ours (then t/u x/t came above), nor
    # if x/(x-hi)/u did the same (neither t nor x-hi held a blot).
    ml = occ & (opn << lo)
    while ml:
        x = _top(ml)
        ml ^= 1 << x
        t = x - lo
        u = t - hi
        if u < 1 or not opn >> u & 1 or b[t] > 0 or (b[t] == 0 and b[x - hi] >= 0):
            continue
        if n >= cap:
            return -1
        _emit(b, out, n, x, t, t, u)
        n += 1
    return n


# A linear key of a board: sum of _KEYS[i] * b[i]. Boards reached from one board have
# the same key when they are the same, so only boards with equal keys need comparing.
# Keys below 2^57: the sums of a few stay far from overflow (also without the JIT).
_KEYS = np.random.default_rng(20261201).integers(-(2**57), 2**57, size=SIZE, dtype=np.int64)


@njit(inline="always")
def _step_key(s, dst, hit):
    """How a move s -> dst (<= 0: off; hit: onto a blot) changes a board's linear key."""
    if dst <= 0:
        return _KEYS[MY_OFF] - _KEYS[s]
    if hit:
        return 2 * _KEYS[dst] - _KEYS[OPP_BAR] - _KEYS[s]
    return _KEYS[dst] - _KEYS[s]


@njit(**NO_REFCOUNT)
def _std_two_deduped(b, hi, lo, occ, opn, out, keys, n0):
    """_std_two where checkers can bear off (none on the bar, at most one outside the home
    board): the same two walks, each board compared with those found before whose key
    (keys[n0:n] int64, relative to b) is the same."""
    cap = out.shape[0]
    n = n0
    for first in range(2):
        a = hi if first == 0 else lo
        c = lo if first == 0 else hi
        m1 = _movers(occ, opn, a)
        while m1:
            x = _top(m1)
            m1 ^= 1 << x
            t = x - a
            k1 = _step_key(x, t, t >= 1 and b[t] == -1)
            occ1 = _moved_occ(occ, b[x], x, t)
            m2 = _movers(occ1, opn, c)
            if first == 1 and t >= 1 and occ1 >> 7 != 0:
                m2 &= 1 << t  # nothing bears off: only this checker (see _std_two)
            while m2:
                y = _top(m2)
                m2 ^= 1 << y
                u = y - c
                key = k1 + _step_key(y, u, u >= 1 and u != t and b[u] == -1)
                if n >= cap:
                    return -1
                built = False
                seen = False
                for k in range(n0, n):
                    if keys[k] == key:
                        if not built:
                            _emit(b, out, n, x, t, y, u)
                            built = True
                        diff = 0
                        for i in range(SIZE):
                            diff |= out[k, i] ^ out[n, i]
                        if diff == 0:
                            seen = True
                            break
                if not seen:
                    if not built:
                        _emit(b, out, n, x, t, y, u)
                    keys[n] = key
                    n += 1
    return n


@njit(**NO_REFCOUNT)
def _std_one(b, hi, lo, occ, opn, out, n):
    """No play uses both dice: the plays of the higher die if it has any, else of the
    lower, else the board unchanged. Return the new n, -1 when out is full."""
    cap = out.shape[0]
    d = hi
    m = _movers(occ, opn, hi)
    if m == 0:
        d = lo
        m = _movers(occ, opn, lo)
    if m == 0:
        if n >= cap:
            return -1
        for i in range(SIZE):
            out[n, i] = b[i]
        return n + 1
    while m:
        x = _top(m)
        m ^= 1 << x
        if n >= cap:
            return -1
        _emit(b, out, n, x, x - d, 0, 0)
        n += 1
    return n


@njit(inline="always")
def _leaf(w, out, n, n0, depth, best):
    """A play of `depth` dice ends in w[0]: keep it if no play uses more so far (a longer
    one drops those kept). Return (n, best), n = -1 when out is full."""
    if depth < best:
        return n, best
    if depth > best:
        n = n0
    if n >= out.shape[0]:
        return -1, depth
    for i in range(SIZE):
        out[n, i] = w[0, i]
    return n + 1, depth


@njit(**NO_REFCOUNT)
def _std_doublet(b, d, occ, opn, w, out, n0):
    """Add the plays of the standard doublet d-d: the most moves (up to four) that can be
    played, sources never increasing (the moves commute). Such plays never repeat a
    board, so nothing is compared. w: (>= 1, SIZE) int8 scratch. Return the new n."""
    for i in range(SIZE):
        w[0, i] = b[i]
    n = n0
    best = 0
    m1 = _movers(occ, opn, d)
    while m1:
        s1 = _top(m1)
        m1 ^= 1 << s1
        occ1 = _moved_occ(occ, w[0, s1], s1, s1 - d)
        h1 = _move(w, 0, s1, s1 - d)
        m2 = _movers(occ1, opn, d) & ((2 << s1) - 1)
        if m2 == 0:
            n, best = _leaf(w, out, n, n0, 1, best)
            if n < 0:
                return -1
        while m2:
            s2 = _top(m2)
            m2 ^= 1 << s2
            occ2 = _moved_occ(occ1, w[0, s2], s2, s2 - d)
            h2 = _move(w, 0, s2, s2 - d)
            m3 = _movers(occ2, opn, d) & ((2 << s2) - 1)
            if m3 == 0:
                n, best = _leaf(w, out, n, n0, 2, best)
                if n < 0:
                    return -1
            while m3:
                s3 = _top(m3)
                m3 ^= 1 << s3
                occ3 = _moved_occ(occ2, w[0, s3], s3, s3 - d)
                h3 = _move(w, 0, s3, s3 - d)
                m4 = _movers(occ3, opn, d) & ((2 << s3) - 1)
                if m4 == 0:
                    n, best = _leaf(w, out, n, n0, 3, best)
                    if n < 0:
                        return -1
                elif best < 4:
                    best = 4
                    n = n0
                while m4:
                    s4 = _top(m4)
                    m4 ^= 1 << s4
                    if n >= out.shape[0]:
                        return -1
                    _emit(w[0], out, n, s4, s4 - d, 0, 0)
                    n += 1
                _unmove(w, 0, s3, s3 - d, h3)
            _unmove(w, 0, s2, s2 - d, h2)
        _unmove(w, 0, s1, s1 - d, h1)
    if best == 0:
        if n >= out.shape[0]:
            return -1
        for i in range(SIZE):
            out[n, i] = b[i]
        n += 1
    return n


@njit(**NO_REFCOUNT)
def _standard(b, d1, d2, out, again, keys, w):
    """_outcomes in standard play; keys (C,) int64 and w (>= 1, SIZE) int8 scratch."""
    n = _standard_boards(b, d1, d2, out, keys, w)
    for i in range(n):
        again[i] = 0
    return n


@njit(**NO_REFCOUNT)
def _standard_boards(b, d1, d2, out, keys, w):
    """Fill out[:n] with the distinct outcomes of d1-d2 in standard play. Return n, or -1
    when out is too small."""
    occ = 0
    opn = 0
    outside = 0
    for p in range(1, 25):  # branch-free: LLVM vectorizes it
        v = np.int64(b[p])
        occ |= np.int64(v > 0) << p
        opn |= np.int64(v >= -1) << p
        outside += max(v, 0) if p >= 7 else 0
    bar = b[MY_BAR]
    if bar > 0:
        occ |= 1 << MY_BAR
    if d1 == d2:
        return _std_doublet(b, d1, occ, opn, w, out, 0)
    hi = max(d1, d2)
    lo = min(d1, d2)
    if bar >= 2:
        n = 0
        if opn >> (MY_BAR - hi) & 1 and opn >> (MY_BAR - lo) & 1:
            _emit(b, out, 0, MY_BAR, MY_BAR - hi, MY_BAR, MY_BAR - lo)
            n = 1
    elif bar == 1 or outside >= 2:
        n = _std_two(b, hi, lo, occ, opn, out, 0)
    else:
        n = _std_two_deduped(b, hi, lo, occ, opn, out, keys, 0)
    if n != 0:
        return n
    return _std_one(b, hi, lo, occ, opn, out, 0)


@njit
def _clear(acc, n):
    """Empty the dedupe table after a call (only the slots used): O(n), not O(table)."""
    table = acc[3]
    slots = acc[4]
    for i in range(min(n, slots.shape[0])):
        table[slots[i]] = -1


@njit(**NO_REFCOUNT)
def _outcomes(b, d1, d2, variant, acc, tmp, scratch):
    """Fill out[:n] (mover's view boards after the whole turn) and out_again[:n] with the
    distinct outcomes of rolling d1-d2 in b. Return n, or -1 when the buffers are too small.

    acc = (out (C, SIZE) int8, out_again (C,) int8, hashes (C,) int64, table (2^k >= 2C,)
    int64 all -1 on entry and on return, slots (C,) int64); tmp (C, SIZE) int8 scratch.
    """
    # Kept small: numba's reference counting of the arrays in acc and scratch costs more
    # than a whole standard roll unless it can be pruned, as in a function this simple.
    if variant == STANDARD:
        return _standard(b, d1, d2, acc[0], acc[1], acc[2], scratch[1])
    return _acey_deucey(b, d1, d2, acc, tmp, scratch)


@njit
def _acey_deucey(b, d1, d2, acc, tmp, scratch):
    """_outcomes in Acey-Deucey: _walk with the hash table, and the 1-2 chain."""
    variant = ACEY_DEUCEY
    h = _hash(b)
    if min(d1, d2) == 1 and max(d1, d2) == 2:
        n12, m = _roll(b, h, 2, 1, variant, acc, 0, scratch)
        if n12 < 0 or m < 2:
            _clear(acc, acc[0].shape[0] if n12 < 0 else n12)
            return n12
        # The 1 and the 2 were both played: then any doublet, rolling again if all 4 play
        # (where the 1 and the 2 bore off the last checkers, every doublet has no move:
        # the outcome is that position, not rolling again).
        out = acc[0]
        for i in range(n12):
            for j in range(SIZE):
                tmp[i, j] = out[i, j]
        _clear(acc, n12)
        n = 0
        for i in range(n12):
            hi = _hash(tmp[i])
            for k in range(1, 7):
                n, m = _doublet(tmp[i], hi, k, variant, False, True, acc, n, scratch)
                if n < 0:
                    _clear(acc, out.shape[0])
                    return -1
        _clear(acc, n)
        return n
    n, m = _roll(b, h, d1, d2, variant, acc, 0, scratch)
    _clear(acc, acc[0].shape[0] if n < 0 else n)
    return n


class Workspace:
    """Buffers for the move generator, reused across calls and grown on overflow."""

    def __init__(self, capacity: int = INITIAL_CAPACITY) -> None:
        self.allocate(capacity)
        self.scratch = (
            np.zeros(_MAX_DEPTH, np.int64),  # dice of each step
            np.zeros((_MAX_DEPTH + 1, SIZE), np.int8),  # board at each depth
            np.zeros(_MAX_DEPTH + 1, np.int64),  # next source rank to try
            np.zeros(_MAX_DEPTH + 1, np.int64),  # highest occupied point
            np.zeros(_MAX_DEPTH + 1, np.int64),  # hash
            np.zeros(_MAX_DEPTH + 1, np.int64),  # where the move into this depth landed
        )

    def allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.out = np.zeros((capacity, SIZE), np.int8)
        self.again = np.zeros(capacity, np.int8)
        self.tmp = np.zeros((capacity, SIZE), np.int8)
        table = np.full(1 << (2 * capacity - 1).bit_length(), -1, np.int64)
        self.acc = (self.out, self.again, np.zeros(capacity, np.int64), table,
                    np.zeros(capacity, np.int64))  # fmt: skip

    def run(self, board: Board, d1: int, d2: int, variant: int) -> int:
        """Generate into self.out / self.again, growing as needed; return the count."""
        while True:
            n = int(_outcomes(board, d1, d2, variant, self.acc, self.tmp, self.scratch))
            if n >= 0:
                return n
            self.allocate(self.capacity * 4)


_WORKSPACE: Workspace | None = None


def check_dice(d1: int, d2: int) -> tuple[int, int]:
    """(d1, d2) as Python ints (numpy's too: they go into documents), else
    InvalidDiceError."""
    for d in (d1, d2):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 6:
            raise InvalidDiceError(f"each die must be an integer from 1 to 6, got {d!r}")
    return int(d1), int(d2)


def all_off(board: Board | tuple[int, ...]) -> bool:
    """The mover has borne off all 15: the game is over (after Acey-Deucey's 1 and 2, no
    doublet follows; after its doublet, no roll again)."""
    return bool(board[MY_OFF] == CHECKERS)


def chain_rolls_again(after: Board | tuple[int, ...], played: int) -> bool:
    """Acey-Deucey's 1-2 chain, its doublet played `played` times to `after`: the mover
    rolls again when all four were played, unless they bore off the last checker. The
    Python edges (notation, the browser's steps) read the rule here; the kernel
    (_walk) applies it at the move that bears off the last checker."""
    return played == 4 and not all_off(after)


def legal_outcomes(board: Board, d1: int, d2: int, variant: int = STANDARD
                   ) -> tuple[Boards, np.ndarray]:  # fmt: skip
    """Every distinct outcome of rolling d1-d2: (boards (n, SIZE) int8 in the mover's
    view after the whole turn, again (n,) bool: the mover rolls again)."""
    global _WORKSPACE
    check_dice(d1, d2)
    if _WORKSPACE is None:
        _WORKSPACE = Workspace()
    ws = _WORKSPACE
    if board.dtype != np.int8 or not board.flags.writeable or not board.flags.c_contiguous:
        board = board.astype(np.int8)  # one compiled signature: writeable int8 arrays
    n = ws.run(board, int(d1), int(d2), int(variant))
    return ws.out[:n].copy(), ws.again[:n].astype(bool)


@njit
def _count_batch(boards, rolls, variants, acc, tmp, scratch):
    """Total outcomes over many (board, roll) pairs in one call (benchmarks, perft).
    Returns -1 - i when pair i overflows the buffers."""
    total = 0
    for i in range(boards.shape[0]):
        n = _outcomes(boards[i], rolls[i, 0], rolls[i, 1], variants[i], acc, tmp, scratch)
        if n < 0:
            return -1 - i
        total += n
    return total


def count_batch(boards: Boards, rolls: np.ndarray, variants: np.ndarray,
                ws: Workspace | None = None) -> int:  # fmt: skip
    """Sum of outcome counts over the pairs, all inside one numba call."""
    ws = ws or Workspace()
    rolls = np.ascontiguousarray(rolls, dtype=np.int64)
    variants = np.ascontiguousarray(variants, dtype=np.int64)
    while True:
        total = int(_count_batch(boards, rolls, variants, ws.acc, ws.tmp, ws.scratch))
        if total >= 0:
            return total
        ws.allocate(ws.capacity * 4)


@njit
def _shots(board, point, variant, acc, tmp, scratch, flipped):
    """How many of the 36 rolls let the opponent hit the mover's blot on `point` (1..24;
    0 = any mover blot), counting every roll with any legal play that hits (seed 002),
    so closed points, the bar and maximal use of the dice are taken into account.
    Returns -1 if the buffers are too small."""
    flip_into(board, flipped)  # the opponent to move: the blot on p sits on 25 - p
    hits = 0
    for r in range(N_ROLLS):
        d1, d2 = ROLLS_21[r, 0], ROLLS_21[r, 1]
        n = _outcomes(flipped, d1, d2, variant, acc, tmp, scratch)
        if n < 0:
            return -1
        out = acc[0]
        hit = False
        for k in range(n):
            if point > 0:
                hit = out[k, 25 - point] >= 0  # the blot is gone: only a hit removes it
            else:
                hit = out[k, OPP_BAR] < flipped[OPP_BAR]  # more of ours on the bar
            if hit:
                break
        if hit:
            hits += 1 if d1 == d2 else 2
    return hits


def shots(board: Board, point: int = 0, variant: int = STANDARD) -> int:
    """Rolls out of 36 with which the opponent (next to roll) can hit the mover's blot on
    `point`, or any of the mover's blots with point=0. The blot must be a single checker."""
    if point and board[point] != 1:
        raise ValueError(f"point {point} holds no blot of the mover")
    global _WORKSPACE
    if _WORKSPACE is None:
        _WORKSPACE = Workspace()
    ws = _WORKSPACE
    flipped = np.empty(SIZE, np.int8)
    board = board.astype(np.int8)
    while True:
        n = int(_shots(board, point, variant, ws.acc, ws.tmp, ws.scratch, flipped))
        if n >= 0:
            return n
        ws.allocate(ws.capacity * 4)
