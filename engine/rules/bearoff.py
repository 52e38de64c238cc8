"""Exact bear-off: a one-sided database of every position of up to 15 checkers on the six
home points (54,264 per side), built with numba on first use and cached on disk.

For each one-sided position it stores two distributions over the number of turns n:
``OFF[i, n]`` = P(all checkers are off after exactly n turns) when the side plays to
minimise the expected number of turns (gnubg's one-sided database does the same), and
``FIRST[i, n]`` = P(the first checker is off after exactly n turns) when it plays to get
a checker off soonest (for gammons). Two sides combine into the probabilities of a race
to bear off: the side on roll wins when it needs no more turns than the other.

A third, ``ZONE[i, n]``, reads the same positions as a side's checkers in the other
side's home board (distances 1..6 from leaving it): P(the last of them leaves after
exactly n turns). With OFF it gives a race's backgammon chances (_race_backgammon).

Positions are ranked by the combinatorial number system: the counts c1..c6 and the
slack c7 = 15 - sum are a composition of 15 into 7 parts, i.e. the 6 "bars"
s_k = (k - 1) + c1 + ... + ck, 0 <= s_1 < ... < s_6 <= 20; rank = sum C(s_k, k).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from doublet.core.board import MY_BAR, MY_OFF, MY_OUT, OPP_BAR, OPP_OFF, SIZE, STANDARD
from doublet.core.dice import N_ROLLS, ROLL_WEIGHTS, ROLLS_21
from doublet.core.files import atomic_open
from doublet.core.jit import njit
from doublet.rules.movegen import Workspace, _outcomes

N_POSITIONS = 54_264  # C(21, 6)
MAX_TURNS = 32  # P(more turns) is below 1e-12 for every position
DB_VERSION = 3  # 3: the ZONE table (_build_zone)
_BINOM = np.array([[0 if k > n else 1 for k in range(8)] for n in range(22)], np.int64)
for _n in range(22):
    for _k in range(1, 8):
        if _k <= _n:
            _BINOM[_n, _k] = _BINOM[_n - 1, _k - 1] + _BINOM[_n - 1, _k] if _n > 0 else 0
del _n, _k


@njit
def _rank_points(b, first, sign, binom):
    """(rank, checkers) of six points of b read as a home board: sign=1 the mover's
    checkers on points first..first + 5 (distances 1..6), sign=-1 the opponent's on
    points first..first - 5."""
    s = -1
    rank = 0
    total = 0
    for k in range(1, 7):
        n = b[first + sign * (k - 1)] * sign
        if n < 0:
            n = 0
        total += n
        s += 1 + n
        rank += binom[s, k]
    return rank, total


@njit
def _rank(b, sign, binom):
    """Rank of one side's home board: sign=1 the mover's points 1..6 of b, sign=-1 the
    opponent's (the mover's points 24..19). Checkers elsewhere are not looked at."""
    return _rank_points(b, 1 if sign == 1 else 24, sign, binom)[0]


@njit
def _rank_counts(c, binom):
    """Rank of the counts c (6,) of the points 1..6 (or distances 1..6), as _rank ranks
    a home board."""
    s = -1
    rank = 0
    for k in range(6):
        s += 1 + c[k]
        rank += binom[s, k + 1]
    return rank


@njit
def _unrank_all(binom):
    """counts (N_POSITIONS, 6) int8 of every rank."""
    out = np.zeros((N_POSITIONS, 6), np.int8)
    c = np.zeros(6, np.int64)
    # enumerate all compositions with sum <= 15
    for c1 in range(16):
        for c2 in range(16 - c1):
            for c3 in range(16 - c1 - c2):
                for c4 in range(16 - c1 - c2 - c3):
                    for c5 in range(16 - c1 - c2 - c3 - c4):
                        for c6 in range(16 - c1 - c2 - c3 - c4 - c5):
                            c[0], c[1], c[2], c[3], c[4], c[5] = c1, c2, c3, c4, c5, c6
                            r = _rank_counts(c, binom)
                            for k in range(6):
                                out[r, k] = c[k]
    return out


@njit
def _pip_order(counts):
    """The ranks in order of their pips (a position's successors come before it)."""
    pips = np.zeros(N_POSITIONS, np.int64)
    for r in range(N_POSITIONS):
        for k in range(6):
            pips[r] += (k + 1) * counts[r, k]
    return np.argsort(pips, kind="mergesort")


@njit
def _build(binom, acc, tmp, scratch):
    """Fill OFF and FIRST (N_POSITIONS, MAX_TURNS) float64 (see the module docstring)."""
    counts = _unrank_all(binom)
    order = _pip_order(counts)
    off = np.zeros((N_POSITIONS, MAX_TURNS), np.float64)
    first = np.zeros((N_POSITIONS, MAX_TURNS), np.float64)
    mean_off = np.zeros(N_POSITIONS, np.float64)
    mean_first = np.zeros(N_POSITIONS, np.float64)
    b = np.zeros(SIZE, np.int8)
    for idx in range(N_POSITIONS):
        r = order[idx]
        total = 0
        for k in range(6):
            total += counts[r, k]
        if total == 0:
            off[r, 0] = 1.0
            first[r, 0] = 1.0
            continue
        for i in range(SIZE):
            b[i] = 0
        for k in range(6):
            b[k + 1] = counts[r, k]
        b[MY_OFF] = 15 - total
        b[OPP_OFF] = 15  # no opponent on the board: a pure bear-off
        first_done = total < 15  # a checker is off already
        for ri in range(N_ROLLS):
            d1, d2 = ROLLS_21[ri, 0], ROLLS_21[ri, 1]
            w = ROLL_WEIGHTS[ri]
            n = _outcomes(b, d1, d2, STANDARD, acc, tmp, scratch)
            best_off = -1
            best_off_mean = 1e18
            best_first = -1
            best_first_mean = 1e18
            for j in range(n):
                rr = _rank(acc[0][j], 1, binom)
                if mean_off[rr] < best_off_mean:
                    best_off_mean = mean_off[rr]
                    best_off = rr
                fm = 0.0 if acc[0][j][MY_OFF] > 0 else mean_first[rr]
                if fm < best_first_mean:
                    best_first_mean = fm
                    best_first = rr
                    if acc[0][j][MY_OFF] > 0:
                        best_first = -2  # a checker comes off this turn
            for t in range(MAX_TURNS - 1):
                off[r, t + 1] += w * off[best_off, t]
            if first_done:
                pass
            elif best_first == -2:
                first[r, 1] += w
            else:
                for t in range(MAX_TURNS - 1):
                    first[r, t + 1] += w * first[best_first, t]
        if first_done:
            first[r, 0] = 1.0
        m = 0.0
        f = 0.0
        for t in range(MAX_TURNS):
            m += t * off[r, t]
            f += t * first[r, t]
        mean_off[r] = m
        mean_first[r] = f
    return off, first


@njit
def _zone_die(c, k, die):
    """Move a checker at distance k + 1 by die: it leaves the zone when die >= k + 1."""
    c[k] -= 1
    if die <= k:
        c[k - die] += 1


@njit
def _zone_undo(c, k, die):
    c[k] += 1
    if die <= k:
        c[k - die] -= 1


@njit
def _zone_best(c, dice, nd, mean, binom):
    """The least expected number of further turns to clear the zone among the states
    that playing dice[:nd] in order on c reaches (each die on a checker still in the
    zone; once it is clear the rest are not needed): (that mean, the state's rank).
    A depth-first walk (no recursion: numba's disk cache does not keep recursive
    kernels); c is as it was on return."""
    choice = np.full(4, -1, np.int64)  # the distance class moved at each depth
    best = 1e18
    best_r = -1
    depth = 0
    while depth >= 0:
        clear = True
        for k in range(6):
            if c[k] > 0:
                clear = False
                break
        if depth == nd or clear:
            r = _rank_counts(c, binom)
            if mean[r] < best:
                best = mean[r]
                best_r = r
            depth -= 1
            if depth >= 0:
                _zone_undo(c, choice[depth], dice[depth])
            continue
        k = choice[depth] + 1
        while k < 6 and c[k] == 0:
            k += 1
        if k == 6:
            choice[depth] = -1
            depth -= 1
            if depth >= 0:
                _zone_undo(c, choice[depth], dice[depth])
            continue
        choice[depth] = k
        _zone_die(c, k, dice[depth])
        depth += 1
    return best, best_r


@njit
def _build_zone(binom):
    """ZONE (N_POSITIONS, MAX_TURNS) float64: for a side's checkers in the other side's
    home board, counted by their distance 1..6 from leaving it (the side's points 19..24
    are distances 1..6) and ranked as a home board is, ZONE[i, n] = P(the last of them
    leaves after exactly n turns) when the side plays every die on them to minimise
    the expected number of turns. A die at least a checker's distance takes it out; the
    side's other checkers and the opponent (all behind them in a race) change nothing.
    The backgammon of a race (_race_backgammon) is the other side bearing off first."""
    counts = _unrank_all(binom)
    order = _pip_order(counts)
    zone = np.zeros((N_POSITIONS, MAX_TURNS), np.float64)
    mean = np.zeros(N_POSITIONS, np.float64)
    c = np.zeros(6, np.int64)
    dice = np.zeros(4, np.int64)
    for idx in range(N_POSITIONS):
        r = order[idx]
        total = 0
        for k in range(6):
            c[k] = counts[r, k]
            total += c[k]
        if total == 0:
            zone[r, 0] = 1.0
            continue
        for ri in range(N_ROLLS):
            d1, d2 = ROLLS_21[ri, 0], ROLLS_21[ri, 1]
            if d1 == d2:
                for j in range(4):
                    dice[j] = d1
                _, nxt = _zone_best(c, dice, 4, mean, binom)
            else:
                dice[0], dice[1] = d1, d2
                m1, r1 = _zone_best(c, dice, 2, mean, binom)
                dice[0], dice[1] = d2, d1
                m2, r2 = _zone_best(c, dice, 2, mean, binom)
                nxt = r1 if m1 <= m2 else r2
            w = ROLL_WEIGHTS[ri]
            for t in range(MAX_TURNS - 1):
                zone[r, t + 1] += w * zone[nxt, t]
        m = 0.0
        for t in range(MAX_TURNS):
            m += t * zone[r, t]
        mean[r] = m
    return zone


SMALL_CHECKERS = 6  # both sides within this many checkers: the exact two-sided table


@njit
def _small_moves(binom, acc, tmp, scratch):
    """The small positions (at most SMALL_CHECKERS checkers left on the home board) and
    their plays: (small (N_POSITIONS,) int64: index among the small positions or -1,
    children (S, 21, 256) and nchild (S, 21): the small indices after each legal play of
    each roll, order (S * S,): the pairs i * S + j by their total pips, so that every
    pair after a play comes before the pair it is played from)."""
    counts = _unrank_all(binom)
    small = np.full(N_POSITIONS, -1, np.int64)
    ranks = np.zeros(N_POSITIONS, np.int64)
    pips = np.zeros(N_POSITIONS, np.int64)
    ns = 0
    for r in range(N_POSITIONS):
        total = 0
        for k in range(6):
            total += counts[r, k]
            pips[r] += (k + 1) * counts[r, k]
        if total <= SMALL_CHECKERS:
            small[r] = ns
            ranks[ns] = r
            ns += 1
    maxc = 256
    children = np.zeros((ns, 21, maxc), np.int64)
    nchild = np.zeros((ns, 21), np.int64)
    b = np.zeros(SIZE, np.int8)
    for i in range(ns):
        r = ranks[i]
        for x in range(SIZE):
            b[x] = 0
        total = 0
        for k in range(6):
            b[k + 1] = counts[r, k]
            total += counts[r, k]
        b[MY_OFF] = 15 - total
        b[OPP_OFF] = 15
        for ri in range(N_ROLLS):
            n = _outcomes(b, ROLLS_21[ri, 0], ROLLS_21[ri, 1], STANDARD, acc, tmp, scratch)
            for j in range(min(n, maxc)):
                children[i, ri, j] = small[_rank(acc[0][j], 1, binom)]
            nchild[i, ri] = min(n, maxc)
    spips = np.zeros(ns, np.int64)
    for i in range(ns):
        spips[i] = pips[ranks[i]]
    key = np.zeros(ns * ns, np.int64)
    for i in range(ns):
        for j in range(ns):
            key[i * ns + j] = spips[i] + spips[j]
    order = np.argsort(key, kind="mergesort")
    return small, children, nchild, order


@njit
def _build_two_sided(binom, acc, tmp, scratch):
    """Exact P(win) for the side on roll when both sides have at most 6 checkers left on
    their home boards (as gnubg's two-sided database): each side plays to maximise its
    chance to win, not to minimise its expected turns. Returns (small (N_POSITIONS,)
    int64: index among the small positions or -1, table (S, S) float32: P(win) for the
    side on roll with small position i against j)."""
    small, children, nchild, order = _small_moves(binom, acc, tmp, scratch)
    ns = children.shape[0]
    weights = np.zeros(21, np.float64)
    for ri in range(N_ROLLS):
        weights[ri] = ROLL_WEIGHTS[ri]
    table = np.zeros((ns, ns), np.float32)
    empty_small = small[0]
    for o in range(ns * ns):
        i = order[o] // ns
        j = order[o] % ns
        if i == empty_small:
            table[i, j] = 1.0  # already off (never on roll in play)
            continue
        if j == empty_small:
            table[i, j] = 0.0
            continue
        p = 0.0
        for ri in range(N_ROLLS):
            best = 0.0
            for c in range(nchild[i, ri]):
                a = children[i, ri, c]
                v = 1.0 if a == empty_small else 1.0 - table[j, a]
                if v > best:
                    best = v
            p += weights[ri] * best
        table[i, j] = p
    return small, table


def _cache_dir() -> Path:
    env = os.environ.get("DOUBLET_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "doublet"


def cache_path() -> Path:
    return _cache_dir() / f"bearoff1-v{DB_VERSION}.npz"


class BearoffDB:
    """The one-sided database: OFF, FIRST and ZONE as float32 (N_POSITIONS, MAX_TURNS),
    and the exact two-sided table of the small positions."""

    def __init__(self, off: np.ndarray, first: np.ndarray, small: np.ndarray,
                 two_sided: np.ndarray, zone: np.ndarray,
                 build_seconds: float = 0.0) -> None:  # fmt: skip
        self.off = np.ascontiguousarray(off, dtype=np.float32)
        self.first = np.ascontiguousarray(first, dtype=np.float32)
        self.zone = np.ascontiguousarray(zone, dtype=np.float32)
        self.small = np.ascontiguousarray(small, dtype=np.int64)
        self.two_sided = np.ascontiguousarray(two_sided, dtype=np.float32)
        self.build_seconds = build_seconds

    @classmethod
    def build(cls) -> BearoffDB:
        ws = Workspace()
        t = time.perf_counter()
        off, first = _build(_BINOM, ws.acc, ws.tmp, ws.scratch)
        small, two = _build_two_sided(_BINOM, ws.acc, ws.tmp, ws.scratch)
        zone = _build_zone(_BINOM)
        return cls(off, first, small, two, zone, time.perf_counter() - t)

    def save(self, path: Path) -> None:
        with atomic_open(path) as f:
            np.savez_compressed(f, off=self.off, first=self.first, small=self.small,
                                two_sided=self.two_sided, zone=self.zone,
                                build_seconds=np.float64(self.build_seconds))  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> BearoffDB:
        with np.load(path, allow_pickle=False) as z:
            db = cls(z["off"], z["first"], z["small"], z["two_sided"], z["zone"],
                     float(z["build_seconds"]))  # fmt: skip
        shape = (N_POSITIONS, MAX_TURNS)
        if db.off.shape != shape or db.first.shape != shape or db.zone.shape != shape:
            raise ValueError(f"bear-off database {path} has the wrong shape")
        return db


class Tables(NamedTuple):
    """The database as kernels take it (doublet.search, the rollouts): _bearoff_probs'
    and _race_backgammon's arrays by name, and the one-sided race net that carries the
    database past the home board (doublet.rules.onesided; a plain tuple of its arrays,
    with no rows when there is none: the race net values races then) with a cache of its
    distributions and the scratch the search's static value needs, so that it allocates
    nothing (each tables() call makes its own: one per Searcher). tables(False)
    gives empty stand-ins of the same types, for a search that does not use the
    database (one compiled signature either way)."""

    off: np.ndarray  # (N_POSITIONS, MAX_TURNS) float32
    first: np.ndarray  # (N_POSITIONS, MAX_TURNS) float32
    small: np.ndarray  # (N_POSITIONS,) int64
    two_sided: np.ndarray  # float32
    binom: np.ndarray  # (22, 8) int64
    zone: np.ndarray  # (N_POSITIONS, MAX_TURNS) float32
    onesided: tuple  # doublet.rules.onesided.Net as a plain tuple
    onesided_cache: tuple  # doublet.rules.onesided.new_cache's (the cache, then scratch)
    scratch: np.ndarray  # (5,) float64: a bear-off's probabilities (the search's _v0)


def tables(use: bool = True, use_onesided: bool = True) -> Tables:
    """The database's Tables (built or loaded once), with the shipped one-sided race net
    when use_onesided and there is one; or empty ones when not used."""
    from doublet.rules import onesided  # it reads this module's tables: imported here

    if use:
        db = database()
        net = onesided.shipped() if use_onesided else onesided.empty()
        cache = onesided.new_cache(onesided.CACHE_BITS if onesided.present(tuple(net)) else 0,
                                   net.l1_b.shape[0])  # fmt: skip
        return Tables(db.off, db.first, db.small, db.two_sided, _BINOM, db.zone, tuple(net),
                      cache, np.zeros(5, np.float64))  # fmt: skip
    z = np.zeros((1, 1), np.float32)
    return Tables(z, z, np.zeros(1, np.int64), z, _BINOM, z, tuple(onesided.empty()),
                  onesided.new_cache(0), np.zeros(5, np.float64))  # fmt: skip


_DB: BearoffDB | None = None


def database(verbose: bool = False) -> BearoffDB:
    """The database, loaded from the disk cache or built (about a minute) and cached."""
    global _DB
    if _DB is None:
        path = cache_path()
        try:
            _DB = BearoffDB.load(path)
        except (OSError, ValueError, KeyError):
            if verbose:
                print("doublet: building the bear-off database (once)...", flush=True)
            _DB = BearoffDB.build()
            with contextlib.suppress(OSError):  # a read-only home: keep it in memory
                _DB.save(path)
    return _DB


@njit
def is_bearoff(b):
    """True when both sides have all their checkers (still on the board) in their home
    boards: nothing on the bar, unentered, or outside points 1-6 / 19-24."""
    if b[MY_BAR] != 0 or b[OPP_BAR] != 0 or b[MY_OUT] != 0 or b[29] != 0:
        return False
    for p in range(7, 19):
        if b[p] != 0:
            return False
    for p in range(1, 7):
        if b[p] < 0:
            return False
    for p in range(19, 25):
        if b[p] > 0:
            return False
    return True


@njit
def _small_pair(b, small, binom):
    """(i, j): the indices among the small positions (the exact two-sided table's) of a
    pure bear-off's side on roll and opponent, or (-1, -1) where b is not one of them."""
    if not is_bearoff(b):
        return -1, -1
    i = small[_rank(b, 1, binom)]
    j = small[_rank(b, -1, binom)]
    if i < 0 or j < 0:
        return -1, -1
    return i, j


@njit
def _bearoff_probs(b, off, first, small, two_sided, binom, out):
    """Probabilities (5,) for the side on roll of a pure bear-off position b: exact when
    both sides have at most 6 checkers left, else the one-sided combination."""
    me = _rank(b, 1, binom)
    opp = _rank(b, -1, binom)
    if small[me] >= 0 and small[opp] >= 0:
        for k in range(5):
            out[k] = 0.0
        out[0] = two_sided[small[me], small[opp]]  # 9+ checkers off each: no gammons
        return
    # P(I need exactly n turns) and P(the opponent needs >= n turns), n >= 1.
    win = 0.0
    opp_tail = 1.0  # P(opponent needs >= n)
    for n in range(MAX_TURNS):
        if n >= 1:
            win += off[me, n] * opp_tail
        opp_tail -= off[opp, n]
    wg = 0.0
    lg = 0.0
    if b[OPP_OFF] == 0:  # gammon: I am off before the opponent's first checker
        tail = 1.0
        for n in range(MAX_TURNS):
            if n >= 1:
                wg += off[me, n] * tail
            tail -= first[opp, n]
    if b[MY_OFF] == 0:  # the opponent is off (its turn m) before my first checker
        tail = 1.0 - first[me, 0]  # P(my first checker needs more than m turns)
        for m in range(1, MAX_TURNS):
            tail -= first[me, m]
            lg += off[opp, m] * max(tail, 0.0)
    out[0] = min(max(win, 0.0), 1.0)
    out[1] = min(wg, out[0])
    out[2] = 0.0  # no backgammon: nobody is on the bar or in the other home board
    out[3] = min(lg, 1.0 - out[0])
    out[4] = 0.0


@njit
def _zone_rank(b, sign, binom):
    """Rank (as _build_zone's) of the checkers of one side in the other's home board:
    sign=1 the mover's on its points 19..24 (distances 1..6), sign=-1 the opponent's on
    the mover's points 6..1. The count of them is returned too."""
    return _rank_points(b, 19 if sign == 1 else 6, sign, binom)


@njit
def _race_backgammon(b, off, zone, binom, out):
    """In a race (no contact), the backgammon chances of out (5,), the side on roll's
    probabilities, made exact where a backgammon is possible: when a side has borne off
    none and still has checkers in the other side's home board, that other side has
    every checker home (they passed each other), and it wins a backgammon when it bears
    off its last checker before the last of those leaves (OFF and ZONE, each side
    playing for it; gnubg does the same in races). The gammon chance is raised to at
    least it. Where no backgammon is possible (none off and no checker left in the other
    side's home board: checkers only move forward in a race) it is 0."""
    if b[MY_OFF] == 0:  # I may be backgammoned
        mine, n = _zone_rank(b, 1, binom)
        if n > 0:
            opp = _rank(b, -1, binom)
            # My turn m clears the zone; the opponent's turn n < m (after my n-th) ends it.
            p = 0.0
            opp_done = 0.0  # P(the opponent needs at most m - 1 turns)
            for m in range(1, MAX_TURNS):
                opp_done += off[opp, m - 1]
                p += zone[mine, m] * opp_done
            p = min(max(p, 0.0), 1.0 - out[0])
            out[4] = p
            if out[3] < p:
                out[3] = p
        else:  # none of mine is left in its home board: no backgammon
            out[4] = 0.0
    if b[OPP_OFF] == 0:  # I may win a backgammon
        theirs, n = _zone_rank(b, -1, binom)
        if n > 0:
            me = _rank(b, 1, binom)
            # My turn n ends it when the opponent's zone needs n or more of its turns.
            p = 0.0
            tail = 1.0  # P(the opponent's zone needs >= n turns)
            for t in range(MAX_TURNS):
                if t >= 1:
                    p += off[me, t] * tail
                tail -= zone[theirs, t]
            p = min(max(p, 0.0), out[0])
            out[2] = p
            if out[1] < p:
                out[1] = p
        else:
            out[2] = 0.0


def bearoff_probs(board: np.ndarray) -> np.ndarray:
    """Exact (one-sided combination) probabilities for the side on roll of a bear-off."""
    b = np.ascontiguousarray(board, dtype=np.int8)
    if not is_bearoff(b):
        raise ValueError("not a pure bear-off position")
    db = database()
    out = np.zeros(5, np.float64)
    _bearoff_probs(b, db.off, db.first, db.small, db.two_sided, _BINOM, out)
    return out


__all__ = ["N_POSITIONS", "BearoffDB", "bearoff_probs", "cache_path", "database", "is_bearoff"]
