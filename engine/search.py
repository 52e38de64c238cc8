"""Expectiminimax over the dice: n-ply evaluation and move choice.

    V0(b)  = the net's probabilities for the side on roll of b (exact for finished games,
             and for pure bear-offs from the bear-off database, standard variant only)
    Vn(b)  = sum over the 21 rolls r (weights 1/36, 2/36) of the probabilities of the
             mover's best play of r, judged by V(n-1) of the position after it (seen by
             the side to roll next: the opponent, or the mover again after an
             Acey-Deucey 1-2 chain), converted back to b's side on roll.

A play is chosen at ply N by Vn of the positions after each candidate. Move filtering
as in GNU Backgammon: every play is scored at 0 ply; only the best few (at most
``keep`` within ``width`` equity of the best) are searched deeper, at each level.
Optionally (``Limits.screen_keep``) the root deepens one ply at a time, sending only
the best few of each ply one ply deeper, as GNU Backgammon's multi-level move filters
do. Measured on 300 refset decisions at 2 ply (benchmarks/decision.py's judge, loaded
machine): no screen 39.5 ms median, mean loss 0.0075; keep 4 within 0.12: 30.1 ms,
0.0077; 3 within 0.08: 27.3 ms, 0.0089; 2 within 0.04: 19.7 ms, 0.0100. The 1-ply
screen costs accuracy, so it is off by default.
Pruning (``Limits.prune_keep``, with a model that has a pruning net; engine.eval): at the
inner levels every play is rated by the small pruning net and only the prune_keep it
rates best (and the plays with exact values) are scored by the main net; the root is
never pruned, so analyse shows every play's 0-ply value. Measured on 600 refset
decisions (benchmarks/decision.py --sample 600, the version-2 net of 600,000 more
games, machine loaded): no pruning 1.36 ms median at 1 ply, 48.3 ms at 2 ply, mean loss
0.0078 and 0.0056; a 16-unit pruning net keeping 8: 0.96 and 24.0 ms, 0.0077 and
0.0056; a 32-unit one keeping 5: 0.86 and 19.1 ms, 0.0076 and 0.0054 (the default);
keeping 8: 1.03 and 24.2 ms, 0.0076 and 0.0056. Session 9, all 2,480 refset decisions
at 2 ply with the 128-unit net of session 7 (machine loaded): keeping 5, 24.1 ms median
and loss 0.0049; 4: 22.0 ms, 0.0047; 3: 17.3 ms, 0.0049; 2: 16.7 ms, 0.0050; so a search
of 2 ply or more keeps PRUNE_KEEP_DEEP = 3 and a 1-ply one PRUNE_KEEP = 5 (at 1 ply,
keeping 3 gave 0.0068 against 0.0066). Wider inner filters did not lower the loss either
(keeping 3, 4 plays within 0.08, 0.12: 0.0049 each, 26-30 ms).
A position cache (keyed by board and depth, full board compared) avoids repeated work;
the root's 0-ply scores skip it (nothing looks them up again) and clearing it takes
constant time (a new generation of keys). Cached values deeper than 0 ply depend on the
inner filter and pruning, so each setting of those has a generation of its own: a
Searcher that alternates 1-ply calls (keeping 5) and 2-ply ones (keeping 3) keeps the
entries of both.
Everything is deterministic: ties go to the lower outcome index.

Kernels use one workspace per search level (``levels`` x capacity buffers) because a
level's outcomes stay in use while the level below generates its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from engine.bearoff import _BINOM, _bearoff_probs, database, is_bearoff
from engine.board import SIZE, STANDARD, flip_into
from engine.encode import N_INPUTS, N_PRUNE_INPUTS
from engine.eval import (
    N_OUTPUTS,
    Model,
    _equity,
    _evaluate_one,
    _mover_probs,
    _prune_score,
    _search_scratch,
    _terminal,
)
from engine.jit import njit
from engine.movegen import _hash, _outcomes, check_dice

MAX_PLY = 4
CACHE_BITS = 18
# Filters (GNU Backgammon's "normal" move filter keeps up to 8 plays within 0.16 at the
# root; deeper levels keep fewer).
ROOT_KEEP, ROOT_WIDTH = 8, 0.16
INNER_KEEP, INNER_WIDTH = 2, 0.04
SCREEN_KEEP, SCREEN_WIDTH = 0, 0.08
# Inner levels with the model's pruning net: the main net scores only the plays it rates
# best (and the exact ones): PRUNE_KEEP of them in a 1-ply search, PRUNE_KEEP_DEEP in
# deeper ones. See the module docstring for the measurements.
PRUNE_KEEP = 5
PRUNE_KEEP_DEEP = 3
# A model without a pruning net searches with this one and prune_keep 0 (never used).
_NO_PRUNE = (np.zeros((N_PRUNE_INPUTS, 1), np.float32), np.zeros(1, np.float32),
             np.zeros((1, 1), np.float32), np.zeros(1, np.float32))  # fmt: skip


@dataclass(frozen=True)
class Limits:
    """How deep and how wide to search."""

    ply: int = 0
    root_keep: int = ROOT_KEEP
    root_width: float = ROOT_WIDTH
    inner_keep: int = INNER_KEEP
    inner_width: float = INNER_WIDTH
    screen_keep: int = SCREEN_KEEP  # root: plays that go on from each ply to the next
    screen_width: float = SCREEN_WIDTH
    # Inner levels: plays the main net scores (0: all; None: PRUNE_KEEP at 1 ply,
    # PRUNE_KEEP_DEEP at 2 ply or more).
    prune_keep: int | None = None

    def pruning(self) -> int:
        """The prune_keep this search uses (its own, or the default for its depth)."""
        if self.prune_keep is not None:
            return self.prune_keep
        return PRUNE_KEEP if self.ply <= 1 else PRUNE_KEEP_DEEP


@njit
def _v0(b, variant, contact, race, bo, use_bo, x, hidden, flipped, out):
    """Static probabilities for the side on roll of b (out (5,) float32)."""
    if _terminal(b, out):
        return
    if use_bo and variant == STANDARD and is_bearoff(b):
        tmp = np.zeros(N_OUTPUTS, np.float64)
        _bearoff_probs(b, bo[0], bo[1], bo[2], bo[3], bo[4], tmp)
        for k in range(N_OUTPUTS):
            out[k] = tmp[k]
        return
    _evaluate_one(b, contact, race, x, hidden, flipped, out)


@njit
def _cache_key(b, depth, gen):
    """b's key at depth in the cache's generation gen[0] (clearing the cache starts a new
    generation: older entries no longer match)."""
    return _hash(b) ^ (depth * 0x9E3779B97F4A7C1) ^ (gen[0] * 0x632BE59BD9B4E019)


@njit
def _cache_find(b, h, ck, cb, cp, out):
    """Look b (key h) up in the cache; True and out filled on a hit."""
    slot = h & (ck.shape[0] - 1)
    if ck[slot] != h:
        return False
    for i in range(SIZE):
        if cb[slot, i] != b[i]:
            return False
    for k in range(N_OUTPUTS):
        out[k] = cp[slot, k]
    return True


@njit
def _cache_store(b, h, ck, cb, cp, p):
    slot = h & (ck.shape[0] - 1)
    ck[slot] = h
    for i in range(SIZE):
        cb[slot, i] = b[i]
    for k in range(N_OUTPUTS):
        cp[slot, k] = p[k]


@njit
def _score_level(level, n, variant, contact, race, prune, prune_keep, bo, use_bo, ws, cache,
                 stats, cached):  # fmt: skip
    """probs[level][i] = the mover's 0-ply probabilities after outcome i of level, for the
    outcomes it marks in scored[level] (ws[18]): all n of them, unless pruning.

    Pruning (prune_keep > 0 and more outcomes than that): the pruning net rates every
    outcome and only the prune_keep it rates best are scored with the main net, besides
    the outcomes whose value is exact (a finished game, a database bear-off)."""
    outs, agains, probs, views, scored = ws[0], ws[1], ws[6], ws[8], ws[18]
    x, hidden, flipped, rating = ws[9], ws[10], ws[11], ws[19]
    p = np.empty(N_OUTPUTS, np.float32)
    view = views[level]
    pruning = prune_keep > 0 and n > prune_keep
    for i in range(n):
        scored[level, i] = 1
        if pruning:
            _view_into(outs[level, i], agains[level, i], view)
            if not (_terminal(view, p) or (use_bo and variant == STANDARD and is_bearoff(view))):
                e = _prune_score(view, prune, flipped, hidden)
                rating[i] = e if agains[level, i] else -e
                scored[level, i] = 0
    if pruning:
        _prune_pick(n, rating, scored[level], prune_keep, 2)  # 2: picked, scored below
    for i in range(n):
        if scored[level, i] == 0:
            continue
        _view_into(outs[level, i], agains[level, i], view)
        h = _cache_key(view, 0, cache[3]) if cached else 0
        if not (cached and _cache_find(view, h, cache[0], cache[1], cache[2], p)):
            _v0(view, variant, contact, race, bo, use_bo, x, hidden, flipped, p)
            stats[0] += 1
            if cached:
                _cache_store(view, h, cache[0], cache[1], cache[2], p)
        _mover_probs(p, agains[level, i], probs[level, i])


@njit
def _prune_pick(n, rating, flags, keep, mark):
    """Set flags[i] = mark for the (at most) `keep` outcomes i < n with flags[i] == 0 that
    the pruning net rates best (rating[i], the mover's view; ties: the lowest index)."""
    for _ in range(keep):
        best = -1
        for i in range(n):
            if flags[i] == 0 and (best < 0 or rating[i] > rating[best]):
                best = i
        if best < 0:
            return
        flags[best] = mark


@njit
def _view_into(out, again, view):
    """view = the position after outcome `out`, seen by the side to roll next."""
    if again:
        for j in range(SIZE):
            view[j] = out[j]
    else:
        flip_into(out, view)


@njit
def _generate(b, d1, d2, variant, level, ws):
    """Outcomes of d1-d2 into level's buffers; n, or -1 if they are too small."""
    acc = (ws[0][level], ws[1][level], ws[2][level], ws[3][level], ws[4][level])
    scratch = (ws[12][level], ws[13][level], ws[14][level], ws[15][level], ws[16][level],
               ws[17][level])  # fmt: skip
    return _outcomes(b, d1, d2, variant, acc, ws[5][level], scratch)


@njit
def _immediate(b, depth, variant, contact, race, bo, use_bo, ws, cache, stats, out):
    """Fill out with V_depth(b) when no search is needed: depth 0, a finished game, an
    exact bear-off, or a cache hit. Returns True then."""
    if _terminal(b, out):
        return True
    if depth == 0 or (use_bo and variant == STANDARD and is_bearoff(b)):
        h = _cache_key(b, 0, cache[3])
        if not _cache_find(b, h, cache[0], cache[1], cache[2], out):
            _v0(b, variant, contact, race, bo, use_bo, ws[9], ws[10], ws[11], out)
            stats[0] += 1
            _cache_store(b, h, cache[0], cache[1], cache[2], out)
        return True
    return _cache_find(b, _cache_key(b, depth, cache[3]), cache[0], cache[1], cache[2], out)


@njit
def _take_if_better(deep, again, mp, best_eq, best_p, f):
    """A candidate play's value `deep` (for the side to roll after it) becomes frame f's
    best play when its equity for the mover beats the best so far. mp: (5,) scratch."""
    _mover_probs(deep, again, mp)
    e = _equity(mp)
    if e > best_eq[f]:
        best_eq[f] = e
        for j in range(N_OUTPUTS):
            best_p[f, j] = mp[j]


@njit
def _vn(b, depth, level, variant, contact, race, prune, prune_keep, bo, use_bo, keep, width,
        ws, cache, stats, out):  # fmt: skip
    """out = V_depth(b) for the side on roll of b, using the buffers of levels >= level.
    Returns False on buffer overflow.

    Iterative with an explicit stack of frames (numba cannot load a cached recursive
    function safely): frame f holds a position searched to depth - f on level level + f,
    the roll it is at, the candidate play it is at, and its running sums.
    """
    if _immediate(b, depth, variant, contact, race, bo, use_bo, ws, cache, stats, out):
        return True
    boards = np.empty((depth, SIZE), np.int8)
    roll = np.zeros(depth, np.int64)  # index of the roll being worked on, 0..21
    cand = np.full(depth, -1, np.int64)  # candidate play being searched; -1: new roll
    count = np.zeros(depth, np.int64)  # candidates kept for this roll
    sums = np.zeros((depth, N_OUTPUTS), np.float64)
    best_eq = np.zeros(depth, np.float64)
    best_p = np.zeros((depth, N_OUTPUTS), np.float32)
    deep = np.empty(N_OUTPUTS, np.float32)
    mp = np.empty(N_OUTPUTS, np.float32)
    dice = np.empty((21, 2), np.int64)
    weight = np.empty(21, np.float64)
    r = 0
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            dice[r, 0] = d1
            dice[r, 1] = d2
            weight[r] = (1.0 if d1 == d2 else 2.0) / 36.0
            r += 1
    probs = ws[6]
    for i in range(SIZE):
        boards[0, i] = b[i]
    f = 0
    while True:
        lv = level + f
        if roll[f] == 21:  # frame done: V of its position
            for j in range(N_OUTPUTS):
                deep[j] = sums[f, j]
            h = _cache_key(boards[f], depth - f, cache[3])
            _cache_store(boards[f], h, cache[0], cache[1], cache[2], deep)
            if f == 0:
                for j in range(N_OUTPUTS):
                    out[j] = deep[j]
                return True
            f -= 1
            lv = level + f
            _take_if_better(deep, ws[1][lv, ws[7][lv, cand[f]]], mp, best_eq, best_p, f)
            cand[f] += 1
            continue
        if cand[f] < 0:  # start a roll: every play at 0 ply, then the filter
            n = _generate(boards[f], dice[roll[f], 0], dice[roll[f], 1], variant, lv, ws)
            if n < 0 or n > probs.shape[1]:
                return False
            # Inner levels go through the cache (on 600 decisions at 2 ply it made no
            # measurable difference to the time; it pays off across calls).
            _score_level(lv, n, variant, contact, race, prune, prune_keep, bo, use_bo, ws, cache,
                         stats, True)  # fmt: skip
            count[f] = _filter(probs[lv], ws[18][lv], n, keep, width, ws[7][lv])
            if depth - f == 1:  # the best play at 0 ply is the answer
                i = ws[7][lv, 0]
                for j in range(N_OUTPUTS):
                    sums[f, j] += weight[roll[f]] * probs[lv, i, j]
                roll[f] += 1
                continue
            cand[f] = 0
            best_eq[f] = -1e9
        if cand[f] < count[f]:  # search the next candidate one level deeper
            i = ws[7][lv, cand[f]]
            view = ws[8][lv]
            _view_into(ws[0][lv, i], ws[1][lv, i], view)
            if _immediate(view, depth - f - 1, variant, contact, race, bo, use_bo, ws, cache,
                          stats, deep):  # fmt: skip
                _take_if_better(deep, ws[1][lv, i], mp, best_eq, best_p, f)
                cand[f] += 1
                continue
            for j in range(SIZE):  # depth - f - 1 >= 1 here, so frame f + 1 exists
                boards[f + 1, j] = view[j]
            f += 1
            roll[f] = 0
            cand[f] = -1
            for j in range(N_OUTPUTS):
                sums[f, j] = 0.0
            continue
        for j in range(N_OUTPUTS):  # all candidates of this roll searched
            sums[f, j] += weight[roll[f]] * best_p[f, j]
        roll[f] += 1
        cand[f] = -1


@njit
def _filter(probs, scored, n, keep, width, order):
    """order[:k] = the indices of the best scored plays by equity (stable), at most
    `keep` within `width` of the best. Returns k (>= 1)."""
    eq = np.empty(n, np.float64)
    for i in range(n):
        eq[i] = _equity(probs[i]) if scored[i] else -1e18
    idx = np.argsort(-eq, kind="mergesort")
    best = eq[idx[0]]
    k = 0
    for c in range(min(n, keep)):
        if c > 0 and eq[idx[c]] < best - width:
            break
        order[c] = idx[c]
        k += 1
    return k


@njit
def _analyse_root(b, d1, d2, variant, ply, contact, race, prune, prune_keep, bo, use_bo,
                  root_keep, root_width, keep, width, screen_keep, screen_width, ws, cache,
                  stats, result_probs, result_ply):  # fmt: skip
    """Rank every play of d1-d2 in b. result_probs[:n] = the mover's probabilities after
    each outcome (at the deepest ply it was searched to), result_ply[:n] = that ply.
    Returns n, or -1 on buffer overflow. Outcomes are in ws[0][0][:n].

    Iterative deepening: every play at 0 ply, the best root_keep within root_width go to
    1 ply; from there on, at each ply below the last, only the best screen_keep within
    screen_width go one ply deeper (screen_keep 0: all of the 0-ply survivors go to the
    full depth at once)."""
    n = _generate(b, d1, d2, variant, 0, ws)
    if n < 0 or n > ws[6].shape[1]:
        return -1
    _score_level(0, n, variant, contact, race, prune, 0, bo, use_bo, ws, cache, stats, False)
    probs = ws[6]
    for i in range(n):
        for j in range(N_OUTPUTS):
            result_probs[i, j] = probs[0, i, j]
        result_ply[i] = 0
    if ply == 0:
        return n
    order = ws[7][0]
    k = _filter(probs[0], ws[18][0], n, root_keep, root_width, order)
    cands = order[:k].copy()
    deep = np.empty(N_OUTPUTS, np.float32)
    view = np.empty(SIZE, np.int8)
    mp = np.empty(N_OUTPUTS, np.float32)
    eqs = np.empty(k, np.float64)
    p = 1 if screen_keep > 0 else ply
    while True:
        for c in range(k):
            i = cands[c]
            _view_into(ws[0][0, i], ws[1][0, i], view)
            if not _vn(view, p, 1, variant, contact, race, prune, prune_keep, bo, use_bo, keep,
                       width, ws, cache, stats, deep):  # fmt: skip
                return -1
            _mover_probs(deep, ws[1][0, i], mp)
            for j in range(N_OUTPUTS):
                result_probs[i, j] = mp[j]
            result_ply[i] = p
            eqs[c] = _equity(mp)
        if p == ply:
            return n
        # Keep the best screen_keep within screen_width (stable: ties by first seen).
        idx = np.argsort(-eqs[:k], kind="mergesort")
        best = eqs[idx[0]]
        kept = np.empty(k, np.int64)
        m = 0
        for c in range(min(k, screen_keep)):
            if c > 0 and eqs[idx[c]] < best - screen_width:
                break
            kept[m] = cands[idx[c]]
            m += 1
        k = m
        cands = kept[:k].copy()
        p += 1


class Searcher:
    """Holds the buffers and the cache; `analyse` ranks the plays of a roll, `evaluate`
    gives Vn of a position. One instance serves one thread."""

    def __init__(self, model: Model, variant: int | None = None, capacity: int = 4096,
                 use_bearoff: bool = True) -> None:  # fmt: skip
        self.model = model
        self.variant = model.variant if variant is None else variant
        self.use_bearoff = bool(use_bearoff and self.variant == STANDARD)
        if self.use_bearoff:
            db = database()
            self.bo = (db.off, db.first, db.small, db.two_sided, _BINOM)
        else:
            z = np.zeros((1, 1), np.float32)
            self.bo = (z, z, np.zeros(1, np.int64), z, _BINOM)
        size = 1 << CACHE_BITS
        self.cache = (np.full(size, -1, np.int64), np.zeros((size, SIZE), np.int8),
                      np.zeros((size, N_OUTPUTS), np.float32), np.zeros(1, np.int64))  # fmt: skip
        self.stats = np.zeros(2, np.int64)
        self.prune = _NO_PRUNE if model.prune is None else model.prune
        self._generations: dict[tuple[int, float, int], int] = {}  # each setting's generation
        self._numbers = itertools.count(1)  # fresh generations (cache[3] starts at 0)
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        levels = MAX_PLY + 2
        table = 1 << (2 * capacity - 1).bit_length()
        hidden = _search_scratch(self.model.contact, self.model.race, self.prune)
        self.capacity = capacity
        self.ws = (
            np.zeros((levels, capacity, SIZE), np.int8),  # 0 outcomes
            np.zeros((levels, capacity), np.int8),  # 1 again flags
            np.zeros((levels, capacity), np.int64),  # 2 hashes
            np.full((levels, table), -1, np.int64),  # 3 dedupe table
            np.zeros((levels, capacity), np.int64),  # 4 slots
            np.zeros((levels, capacity, SIZE), np.int8),  # 5 tmp (1-2 chain)
            np.zeros((levels, capacity, N_OUTPUTS), np.float32),  # 6 mover's probs
            np.zeros((levels, capacity), np.int64),  # 7 filter order
            np.zeros((levels, SIZE), np.int8),  # 8 view scratch
            np.zeros(N_INPUTS, np.float32),  # 9 inputs
            np.zeros(hidden, np.float32),  # 10 hidden
            np.zeros(SIZE, np.int8),  # 11 flipped
            np.zeros((levels, 4), np.int64),  # 12 dice
            np.zeros((levels, 5, SIZE), np.int8),  # 13 stack
            np.zeros((levels, 5), np.int64),  # 14 nxt
            np.zeros((levels, 5), np.int64),  # 15 high
            np.zeros((levels, 5), np.int64),  # 16 hashes
            np.zeros((levels, 5), np.int64),  # 17 landed
            np.zeros((levels, capacity), np.int8),  # 18 scored by the main net
            np.zeros(capacity, np.float32),  # 19 pruning net's ratings
        )
        self.result_probs = np.zeros((capacity, N_OUTPUTS), np.float32)
        self.result_ply = np.zeros(capacity, np.int64)

    def _prune_keep(self, limits: Limits) -> int:
        """The pruning setting of a search with these limits. Cached values deeper than 0
        ply depend on the inner filter and pruning, so the cache keys values with the
        generation of those settings (a new one for settings not seen since the last
        clear_cache)."""
        keep = 0 if self.model.prune is None else max(0, limits.pruning())
        inner = (limits.inner_keep, limits.inner_width, keep)
        gen = self._generations.get(inner)
        if gen is None:
            gen = self._generations[inner] = next(self._numbers)
        self.cache[3][0] = gen
        return keep

    def clear_cache(self) -> None:
        """Forget every cached value (in constant time: a new generation of keys)."""
        self._generations.clear()
        self.cache[3][0] = next(self._numbers)

    def _root(self, board: np.ndarray, d1: int, d2: int, limits: Limits) -> int:
        """Run the root search of d1-d2 in board; the count n of its outcomes."""
        check_dice(d1, d2)
        if not 0 <= limits.ply <= MAX_PLY:
            raise ValueError(f"ply must be 0..{MAX_PLY}, got {limits.ply}")
        b = np.array(board, dtype=np.int8)
        m = self.model
        while True:
            n = _analyse_root(b, d1, d2, self.variant, limits.ply, m.contact, m.race,
                              self.prune, self._prune_keep(limits), self.bo, self.use_bearoff,
                              limits.root_keep, limits.root_width, limits.inner_keep,
                              limits.inner_width, limits.screen_keep, limits.screen_width,
                              self.ws, self.cache, self.stats, self.result_probs,
                              self.result_ply)  # fmt: skip
            if n >= 0:
                return n
            self._allocate(self.capacity * 4)

    def analyse(self, board: np.ndarray, d1: int, d2: int, limits: Limits = Limits()
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """(outcome boards (n, SIZE) in the mover's view, again (n,), the mover's
        probabilities (n, 5) after each, the ply each was searched to (n,))."""
        n = self._root(board, d1, d2, limits)
        return (self.ws[0][0, :n].copy(), self.ws[1][0, :n].astype(bool),
                self.result_probs[:n].copy(), self.result_ply[:n].copy())  # fmt: skip

    def evaluate(self, board: np.ndarray, limits: Limits = Limits()) -> np.ndarray:
        """V_ply of the position for the side on roll (before it rolls): (5,) float32."""
        if not 0 <= limits.ply <= MAX_PLY:
            raise ValueError(f"ply must be 0..{MAX_PLY}, got {limits.ply}")
        b = np.array(board, dtype=np.int8)
        out = np.zeros(N_OUTPUTS, np.float32)
        m = self.model
        while not _vn(b, limits.ply, 1, self.variant, m.contact, m.race, self.prune,
                      self._prune_keep(limits), self.bo, self.use_bearoff, limits.inner_keep,
                      limits.inner_width, self.ws, self.cache, self.stats, out):  # fmt: skip
            self._allocate(self.capacity * 4)
        return out

    def best(self, board: np.ndarray, d1: int, d2: int, limits: Limits = Limits()) -> int:
        """Index (into the outcomes of the roll, as analyse lists them) of the play chosen
        at limits.ply: the best equity among the plays searched deepest."""
        n = self._root(board, d1, d2, limits)
        return int(_best_index(self.result_probs, self.result_ply, n))


@njit
def _best_index(probs, plies, n):
    """The first of the best plays by equity among those searched to the deepest ply."""
    deepest = 0
    for i in range(n):
        deepest = max(deepest, plies[i])
    best = -1
    best_eq = -1e9
    for i in range(n):
        if plies[i] == deepest:
            e = _equity(probs[i])
            if e > best_eq:
                best_eq = e
                best = i
    return best
