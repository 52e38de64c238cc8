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
Optionally (``Limits.blend`` w < 1) the root ranks the plays searched to the full depth by
w times their value there plus 1 - w times their 0-ply value, and gives those blended
probabilities. Session 40 measured it (benchmarks/HISTORY.md). On the refset's fair judge
(benchmarks/decision.py --blend), w 0.75 at 1 ply loses 0.5 mEq less than 1 ply alone
(3 standard errors); at 2 ply nothing is gained. Head to head against gnubg 1 ply it
shows no gain (+0.004 +- 0.007 points a game over 20,000 games). So it is off by default.
Pruning (``Limits.prune_keep``, with a model that has a pruning net; doublet.nn.eval): at the
inner levels every play is rated by the small pruning net and only the prune_keep it
rates best (and the plays with exact values) are scored by the main net; the root is
never pruned, so analyse shows every play's 0-ply value. The ratings of a roll's plays
start from the pruning net's hidden sums of the position before the roll and move by the
few board entries each play changed (doublet.nn.eval._prune_delta_score: half the time
of the full sums, the same ratings up to float rounding). Measured on 600 refset
decisions (benchmarks/decision.py --sample 600, the version-2 net of 600,000 more
games, machine loaded): no pruning 1.36 ms median at 1 ply, 48.3 ms at 2 ply, mean loss
0.0078 and 0.0056; a 16-unit pruning net keeping 8: 0.96 and 24.0 ms, 0.0077 and
0.0056; a 32-unit one keeping 5: 0.86 and 19.1 ms, 0.0076 and 0.0054 (the default then);
keeping 8: 1.03 and 24.2 ms, 0.0076 and 0.0056. Session 9, all 2,480 refset decisions
at 2 ply with the 128-unit net of session 7 (machine loaded): keeping 5, 24.1 ms median
and loss 0.0049; 4: 22.0 ms, 0.0047; 3: 17.3 ms, 0.0049; 2: 16.7 ms, 0.0050; so a search
of 2 ply or more kept 3 until session 22 (at 1 ply, keeping 3 gave 0.0068 against
0.0066). Wider inner filters did not lower the loss either (keeping 3, 4 plays within
0.08, 0.12: 0.0049 each, 26-30 ms). Session 20, all 2,480 refset decisions at 1 ply
with session 17's net, on the fair judge (benchmarks/decision.py --plies 1 --no-gnubg
--prune-keep K; quiet machine): keeping 5, 5.04 mEq and 0.568 ms median; 4, 4.99 mEq
and 0.491 ms; 3, 5.11 mEq and 0.477 ms; so a 1-ply search keeps PRUNE_KEEP = 4.
Session 22, the same at 2 ply (`--plies 2 --no-gnubg --prune-keep K`, races and crashed
positions unpruned as below): keeping 3, 3.175 mEq (contact 3.713); 4, 3.049 (contact
3.540); 5, 3.049; 8, contact 3.454. Decision by decision, keeping 4 against 3 changed
35 of the 2,480 choices, 22 for the better: -0.126 +- 0.054 mEq (contact -0.173 +-
0.073), for about 6 % more time (all decisions back to back, quiet: 15.7 and 14.7 ms
median against 15.0 and 13.8; on 600 of them 14.8 against 12.5); at 3 ply, 291 ms
against 248 (100 decisions). So every depth keeps PRUNE_KEEP = 4. Wider pruning nets
(64 and 128 units, trained on 12,000 games) found the main net's best reply more often
(128 units: among their best 3 in 91.7 % of the refset's contact rolls against 87.9 %,
crashed 81.7 % against 68.9 %, races 68.0 % against 53.5 %) but bought less: at 2 ply
keeping 3, contact 3.590 mEq for 14.8 ms (the time of keeping 4 with the shipped net),
1 ply no better (5.010 against 4.987), and pruning races and crashed positions with it
again lost (races 0.436, crashed 4.80 against 0.313 and 4.175).
Races and crashed positions (doublet.core.board.crashed) are never pruned (session 21):
the pruning net ranks their plays poorly (the main net's best among its best 3 in 46 %
of the refset's race rolls and 69 % of its crashed ones, against 87 % in other contact),
and scoring every reply there took the fair judge's 2-ply loss from 3.57 to 3.18 mEq
(races 1.10 to 0.31, crashed 6.75 to 4.17) for 13.1 ms median against 10.6. A 1-ply
search still prunes them (Limits.prune_all): unpruned, its loss was no lower (races 2.12
against 1.98 mEq, crashed 10.71 against 10.59) and `best` through the pipe was slower.
A position cache (keyed by board and depth, full board compared) avoids repeated work;
the root's 0-ply scores skip it (nothing looks them up again) and clearing it takes
constant time (a new generation of keys). Cached values deeper than 0 ply depend on the
inner filter and pruning, so each setting of those has a generation of its own: a
Searcher that alternates 1-ply calls (races and crashed positions pruned) and 2-ply ones
(not pruned) keeps the entries of both.
Everything is deterministic: ties go to the lower outcome index.

The kernels share named structures built in one place (Workspace by new_workspace,
Cache by new_cache, Nets, Settings from a Limits), never positional tuples: a Workspace
holds one set of move-generator buffers per search level, because a level's outcomes
stay in use while the level below generates its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from doublet.core.board import SIZE, STANDARD, crashed, flip_into, has_contact
from doublet.core.dice import N_ROLLS, ROLL_WEIGHTS, ROLLS_21
from doublet.core.jit import NO_REFCOUNT, njit
from doublet.nn.encode import N_INPUTS, N_PRUNE_INPUTS
from doublet.nn.eval import (
    N_OUTPUTS,
    PRUNE_ROWS,
    PRUNE_SCALES,
    Model,
    Net,
    _equity,
    _evaluate_near,
    _evaluate_one,
    _mover_probs,
    _near_base,
    _no_impossible_gammons,
    _prune_base,
    _prune_delta_score,
    _prune_score,
    _search_scratch,
    _terminal,
)
from doublet.rules.bearoff import Tables as bearoff_tables_type
from doublet.rules.bearoff import _bearoff_probs, _race_backgammon, is_bearoff
from doublet.rules.bearoff import tables as bearoff_tables
from doublet.rules.movegen import _MAX_DEPTH, _hash, _outcomes, check_dice
from doublet.rules.onesided import present as onesided_present
from doublet.rules.onesided import race_probs_into

MAX_PLY = 4
CACHE_BITS = 18
NO_BOARD = 127  # Workspace.near_of's entry before any base: no board holds it
# Filters (GNU Backgammon's "normal" move filter keeps up to 8 plays within 0.16 at the
# root; deeper levels keep fewer).
ROOT_KEEP, ROOT_WIDTH = 8, 0.16
INNER_KEEP, INNER_WIDTH = 2, 0.04
SCREEN_KEEP, SCREEN_WIDTH = 0, 0.08
# Inner levels with the model's pruning net: the main net scores only the PRUNE_KEEP plays
# it rates best (and the exact ones), at every depth. See the module docstring for the
# measurements.
PRUNE_KEEP = 4
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
    # Inner levels: plays the main net scores (0: all; None: PRUNE_KEEP).
    prune_keep: int | None = None
    # Prune races and crashed positions too (None: at 1 ply only; see the module doc).
    prune_all: bool | None = None
    # Root: a play searched to the full depth is ranked (and its probabilities given) as
    # blend times its value at that depth plus 1 - blend times its 0-ply value (1: the
    # full depth alone; see the module doc).
    blend: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.blend <= 1.0:
            raise ValueError(f"blend is a weight from 0 to 1, got {self.blend!r}")

    def pruning(self) -> int:
        """The prune_keep this search uses (its own, or the default PRUNE_KEEP)."""
        return PRUNE_KEEP if self.prune_keep is None else self.prune_keep

    def pruning_all(self) -> bool:
        """Whether races and crashed positions are pruned too (its own, or the default:
        at 1 ply, where searching all their replies gained nothing)."""
        return self.ply <= 1 if self.prune_all is None else bool(self.prune_all)


class Nets(NamedTuple):
    """The nets a search runs: the main model's contact and race nets (doublet.nn.eval's
    (w1, b1, w2, b2) tuples) and its pruning net (_NO_PRUNE when it has none)."""

    contact: Net
    race: Net
    prune: Net


class Settings(NamedTuple):
    """A search's scalars, from its Limits and its Searcher (Searcher._settings builds
    them, with the types the kernels are compiled for)."""

    variant: int
    use_bo: bool  # the exact bear-off database (standard only)
    prune_keep: int  # inner levels: plays the main net scores (0: all)
    root_keep: int
    root_width: float
    keep: int  # inner levels' move filter
    width: float
    screen_keep: int  # root: plays that go on from each ply to the next (0: no screen)
    screen_width: float
    prune_all: bool  # prune races and crashed positions too (1-ply searches: no gain there)
    blend: float  # the root's weight of the full depth's value against the 0-ply one


class Cache(NamedTuple):
    """The position cache: a slot per key's low bits, the full board compared."""

    keys: np.ndarray  # (2^CACHE_BITS,) int64, -1 when empty
    boards: np.ndarray  # (2^CACHE_BITS, SIZE) int8
    probs: np.ndarray  # (2^CACHE_BITS, 5) float32, for the side on roll
    gen: np.ndarray  # (1,) int64: the current generation (clearing the cache: a new one)


class Workspace(NamedTuple):
    """The search's buffers: per level (MAX_PLY + 2 of them: the root, and one per ply
    below it) the move generator's outcomes and scratch and their scores, plus the net's
    scratch. A level's outcomes stay in use while the level below generates its own.
    Built by new_workspace, the one place that knows the sizes."""

    outs: np.ndarray  # (L, C, SIZE) int8: the outcomes of the level's roll (mover's view)
    agains: np.ndarray  # (L, C) int8: the mover rolls again after it
    hashes: np.ndarray  # (L, C) int64: the move generator's dedupe hashes ...
    table: np.ndarray  # (L, T) int64: ... its hash table (T >= 2C, a power of 2, all -1)
    slots: np.ndarray  # (L, C) int64: ... and its table slots
    tmp: np.ndarray  # (L, C, SIZE) int8: the 1-2 chain's first halves (Acey-Deucey)
    probs: np.ndarray  # (L, C, 5) float32: the mover's probabilities after each outcome
    order: np.ndarray  # (L, C) int64: the move filter's picks, best first
    views: np.ndarray  # (L, SIZE) int8: a position seen by the side to roll next
    x: np.ndarray  # (N_INPUTS,) float32: the net's inputs
    hidden: np.ndarray  # float32: the hidden layer (_search_scratch long)
    flipped: np.ndarray  # (SIZE,) int8
    dice: np.ndarray  # (L, 4) int64: the move generator's walk: dice of each step
    stack: np.ndarray  # (L, 5, SIZE) int8: ... the board at each step
    nxt: np.ndarray  # (L, 5) int64: ... the next source to try
    high: np.ndarray  # (L, 5) int64: ... the highest occupied point
    step_hashes: np.ndarray  # (L, 5) int64: ... the hash at each step
    landed: np.ndarray  # (L, 5) int64: ... where the move into each step landed
    scored: np.ndarray  # (L, C) int8: scored by the main net (not pruned away)
    rating: np.ndarray  # (C,) float32: the pruning net's ratings
    prune_base: np.ndarray  # (H,) float32: the pruning net's hidden sums of a roll's parent
    near_of: np.ndarray  # (L, SIZE) int8: flip(the level's parent) whose base is below
    near_x: np.ndarray  # (L, N_INPUTS) float32: ... its inputs (_near_base)
    near_sums: np.ndarray  # (L, H) float32: ... their sums in the contact net


def new_workspace(capacity: int, nets: Nets) -> Workspace:
    """A search's buffers for rolls of up to `capacity` outcomes."""
    levels = MAX_PLY + 2
    table = 1 << (2 * capacity - 1).bit_length()
    steps = _MAX_DEPTH + 1
    return Workspace(
        outs=np.zeros((levels, capacity, SIZE), np.int8),
        agains=np.zeros((levels, capacity), np.int8),
        hashes=np.zeros((levels, capacity), np.int64),
        table=np.full((levels, table), -1, np.int64),
        slots=np.zeros((levels, capacity), np.int64),
        tmp=np.zeros((levels, capacity, SIZE), np.int8),
        probs=np.zeros((levels, capacity, N_OUTPUTS), np.float32),
        order=np.zeros((levels, capacity), np.int64),
        views=np.zeros((levels, SIZE), np.int8),
        x=np.zeros(N_INPUTS, np.float32),
        hidden=np.zeros(_search_scratch(nets.contact, nets.race, nets.prune), np.float32),
        flipped=np.zeros(SIZE, np.int8),
        dice=np.zeros((levels, _MAX_DEPTH), np.int64),
        stack=np.zeros((levels, steps, SIZE), np.int8),
        nxt=np.zeros((levels, steps), np.int64),
        high=np.zeros((levels, steps), np.int64),
        step_hashes=np.zeros((levels, steps), np.int64),
        landed=np.zeros((levels, steps), np.int64),
        scored=np.zeros((levels, capacity), np.int8),
        rating=np.zeros(capacity, np.float32),
        prune_base=np.zeros(nets.prune[1].shape[0], np.float32),
        near_of=np.full((levels, SIZE), NO_BOARD, np.int8),
        near_x=np.zeros((levels, N_INPUTS), np.float32),
        near_sums=np.zeros((levels, nets.contact[1].shape[0]), np.float32),
    )


def new_cache(bits: int = CACHE_BITS) -> Cache:
    size = 1 << bits
    return Cache(np.full(size, -1, np.int64), np.zeros((size, SIZE), np.int8),
                 np.zeros((size, N_OUTPUTS), np.float32), np.zeros(1, np.int64))  # fmt: skip


@njit(**NO_REFCOUNT)
def _v0(b, variant, contact, race_net, bo, use_bo, x, hidden, flipped, out):
    """Static probabilities for the side on roll of b (out (5,) float32); bo: the
    bear-off Tables, used when use_bo: exact in a pure bear-off, and in a race the
    one-sided race net's win and gammon chances (doublet.rules.onesided; the race net's
    when there is none) with exact backgammon chances (_race_backgammon). Gammons the
    rules rule out are 0 (_no_impossible_gammons).

    It allocates nothing (its scratch is in bo) and is compiled without reference
    counting: every leaf of a search calls it with bo, and counting references to bo's
    22 arrays at each call made the whole 0-ply search about 25 % slower (session 25)."""
    if _terminal(b, out):
        return
    if use_bo and variant == STANDARD and is_bearoff(b):
        tmp = bo.scratch
        _bearoff_probs(b, bo.off, bo.first, bo.small, bo.two_sided, bo.binom, tmp)
        for k in range(N_OUTPUTS):
            out[k] = tmp[k]
        return
    race = use_bo and variant == STANDARD and not has_contact(b)
    if race and onesided_present(bo.onesided):
        race_probs_into(b, bo.onesided, bo.off, bo.first, bo.binom, bo.onesided_cache, out)
    else:
        _evaluate_one(b, contact, race_net, x, hidden, flipped, out)
    _no_impossible_gammons(b, out)
    if race:
        _race_backgammon(b, bo.off, bo.zone, bo.binom, out)


@njit(**NO_REFCOUNT)
def _cache_key(b, depth, gen):
    """b's key at depth in the cache's generation gen[0] (clearing the cache starts a new
    generation: older entries no longer match)."""
    return _hash(b) ^ (depth * 0x9E3779B97F4A7C1) ^ (gen[0] * 0x632BE59BD9B4E019)


@njit(**NO_REFCOUNT)
def _cache_find(b, h, cache, out):
    """Look b (key h) up in the cache; True and out filled on a hit."""
    slot = h & (cache.keys.shape[0] - 1)
    if cache.keys[slot] != h:
        return False
    for i in range(SIZE):
        if cache.boards[slot, i] != b[i]:
            return False
    for k in range(N_OUTPUTS):
        out[k] = cache.probs[slot, k]
    return True


@njit(**NO_REFCOUNT)
def _cache_store(b, h, cache, p):
    slot = h & (cache.keys.shape[0] - 1)
    cache.keys[slot] = h
    for i in range(SIZE):
        cache.boards[slot, i] = b[i]
    for k in range(N_OUTPUTS):
        cache.probs[slot, k] = p[k]


@njit
def _score_level(parent, level, n, nets, bo, cfg, prune_keep, ws, cache, stats, cached):
    """ws.probs[level][i] = the mover's 0-ply probabilities after outcome i of level (the
    plays of a roll in parent, the mover's view), for the outcomes it marks in
    ws.scored[level]: all n of them, unless pruning.

    Pruning (prune_keep > 0, more outcomes than that, and, unless cfg.prune_all, parent
    neither a race nor crashed, whose plays the pruning net ranks poorly: the module
    doc): the pruning net rates every outcome and only the prune_keep it rates best are
    scored with the main net, besides the outcomes whose value is exact (a finished
    game, a database bear-off). The ratings start from the parent's hidden sums, once a
    roll, and move by the entries each play changed (_prune_delta_score); an outcome
    after which the mover rolls again (an Acey-Deucey chain, seen unflipped) is rated
    from scratch. Likewise the contact net values each play from flip(parent)'s inputs
    and sums, computed once a parent on each level (_near; doublet.nn.eval's
    _forward_from): the same values up to float32 rounding, about a tenth less time."""
    # Members bound once, outside the loops: numba counts a reference each time a loop
    # takes an array out of a structure (about 15 % of a 2-ply search, measured).
    outs, agains, probs, scored, rating = ws.outs, ws.agains, ws.probs, ws.scored, ws.rating
    x, hidden, flipped = ws.x, ws.hidden, ws.flipped
    contact, race, prune = nets.contact, nets.race, nets.prune
    variant, use_bo = cfg.variant, cfg.use_bo
    p = np.empty(N_OUTPUTS, np.float32)
    view = ws.views[level]
    pruning = prune_keep > 0 and n > prune_keep
    if pruning and not cfg.prune_all:
        pruning = has_contact(parent) and not crashed(parent)
    pw1, pw2, pb2, base = prune[0], prune[2], prune[3], ws.prune_base
    if pruning:
        _prune_base(parent, pw1, prune[1], base, PRUNE_ROWS, PRUNE_SCALES)
    for i in range(n):
        scored[level, i] = 1
        if pruning:
            _view_into(outs[level, i], agains[level, i], view)
            if not (_terminal(view, p) or (use_bo and variant == STANDARD and is_bearoff(view))):
                if agains[level, i]:
                    rating[i] = _prune_score(view, prune, flipped, hidden)
                else:
                    rating[i] = -_prune_delta_score(parent, outs[level, i], pw1, pw2, pb2,
                                                    base, hidden, PRUNE_ROWS,
                                                    PRUNE_SCALES)  # fmt: skip
                scored[level, i] = 0
    if pruning:
        _prune_pick(n, rating, scored[level], prune_keep, 2)  # 2: picked, scored below
    # The contact net values a play from flip(parent)'s sums (_near), once a parent: the
    # rolls of a parent follow one another on its level.
    near = has_contact(parent)
    near_x, near_sums = ws.near_x[level], ws.near_sums[level]
    if near:
        _near(parent, contact, ws.near_of[level], near_x, near_sums, view, flipped)
    for i in range(n):
        if scored[level, i] == 0:
            continue
        _view_into(outs[level, i], agains[level, i], view)
        h = _cache_key(view, 0, cache.gen) if cached else 0
        if not (cached and _cache_find(view, h, cache, p)):
            # (A finished game can count as contact: _v0 sees it first.)
            if near and not agains[level, i] and not _terminal(view, p) and has_contact(view):
                _evaluate_near(view, contact, x, hidden, flipped, near_x, near_sums, p)
                _no_impossible_gammons(view, p)
            else:
                _v0(view, variant, contact, race, bo, use_bo, x, hidden, flipped, p)
            stats[0] += 1
            if cached:
                _cache_store(view, h, cache, p)
        _mover_probs(p, agains[level, i], probs[level, i])


@njit(**NO_REFCOUNT)
def _near(parent, contact, near_of, near_x, near_sums, view, flipped):
    """Make near_x and near_sums flip(parent)'s contact-net inputs and sums (_near_base)
    unless near_of says they are already (view, flipped: scratch)."""
    flip_into(parent, view)
    for j in range(SIZE):
        if near_of[j] != view[j]:
            for k in range(SIZE):
                near_of[k] = view[k]
            _near_base(near_of, contact, near_x, near_sums, flipped)
            return


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


@njit(**NO_REFCOUNT)
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
    acc = (ws.outs[level], ws.agains[level], ws.hashes[level], ws.table[level],
           ws.slots[level])  # fmt: skip
    scratch = (ws.dice[level], ws.stack[level], ws.nxt[level], ws.high[level],
               ws.step_hashes[level], ws.landed[level])  # fmt: skip
    return _outcomes(b, d1, d2, variant, acc, ws.tmp[level], scratch)


@njit
def _immediate(b, depth, nets, bo, cfg, ws, cache, stats, out):
    """Fill out with V_depth(b) when no search is needed: depth 0, a finished game, an
    exact bear-off, or a cache hit. Returns True then."""
    if _terminal(b, out):
        return True
    if depth == 0 or (cfg.use_bo and cfg.variant == STANDARD and is_bearoff(b)):
        h = _cache_key(b, 0, cache.gen)
        if not _cache_find(b, h, cache, out):
            _v0(b, cfg.variant, nets.contact, nets.race, bo, cfg.use_bo, ws.x, ws.hidden,
                ws.flipped, out)  # fmt: skip
            stats[0] += 1
            _cache_store(b, h, cache, out)
        return True
    return _cache_find(b, _cache_key(b, depth, cache.gen), cache, out)


@njit(**NO_REFCOUNT)
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
def _vn(b, depth, level, nets, bo, cfg, ws, cache, stats, out):
    """out = V_depth(b) for the side on roll of b, using the buffers of levels >= level
    and the inner move filter (cfg.keep, cfg.width) and pruning (cfg.prune_keep).
    Returns False on buffer overflow.

    Iterative with an explicit stack of frames (numba cannot load a cached recursive
    function safely): frame f holds a position searched to depth - f on level level + f,
    the roll it is at (an index into ROLLS_21), the candidate play it is at, and its
    running sums.
    """
    if _immediate(b, depth, nets, bo, cfg, ws, cache, stats, out):
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
    probs, outs, agains, order, views, scored = (ws.probs, ws.outs, ws.agains, ws.order,
                                                 ws.views, ws.scored)  # fmt: skip
    keep, width, prune_keep, variant = cfg.keep, cfg.width, cfg.prune_keep, cfg.variant
    for i in range(SIZE):
        boards[0, i] = b[i]
    f = 0
    while True:
        lv = level + f
        if roll[f] == N_ROLLS:  # frame done: V of its position
            for j in range(N_OUTPUTS):
                deep[j] = sums[f, j]
            h = _cache_key(boards[f], depth - f, cache.gen)
            _cache_store(boards[f], h, cache, deep)
            if f == 0:
                for j in range(N_OUTPUTS):
                    out[j] = deep[j]
                return True
            f -= 1
            lv = level + f
            _take_if_better(deep, agains[lv, order[lv, cand[f]]], mp, best_eq, best_p, f)
            cand[f] += 1
            continue
        if cand[f] < 0:  # start a roll: every play at 0 ply, then the filter
            if stats[1] > 0 and stats[0] > stats[1]:
                return False  # past the evaluation budget (Searcher says so)
            n = _generate(boards[f], ROLLS_21[roll[f], 0], ROLLS_21[roll[f], 1], variant, lv, ws)
            if n < 0 or n > probs.shape[1]:
                return False
            # Inner levels go through the cache (on 600 decisions at 2 ply it made no
            # measurable difference to the time; it pays off across calls).
            _score_level(boards[f], lv, n, nets, bo, cfg, prune_keep, ws, cache, stats, True)
            if depth - f == 1:  # the best play at 0 ply is the answer (_filter's first)
                i = _best_scored(probs[lv], scored[lv], n)
                for j in range(N_OUTPUTS):
                    sums[f, j] += ROLL_WEIGHTS[roll[f]] * probs[lv, i, j]
                roll[f] += 1
                continue
            count[f] = _filter(probs[lv], scored[lv], n, keep, width, order[lv])
            cand[f] = 0
            best_eq[f] = -1e9
        if cand[f] < count[f]:  # search the next candidate one level deeper
            i = order[lv, cand[f]]
            view = views[lv]
            _view_into(outs[lv, i], agains[lv, i], view)
            if _immediate(view, depth - f - 1, nets, bo, cfg, ws, cache, stats, deep):
                _take_if_better(deep, agains[lv, i], mp, best_eq, best_p, f)
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
            sums[f, j] += ROLL_WEIGHTS[roll[f]] * best_p[f, j]
        roll[f] += 1
        cand[f] = -1


@njit(**NO_REFCOUNT)
def _best_scored(probs, scored, n):
    """The index of the best scored play by equity, the first of equals: _filter's
    order[0], without its sort (a 1-ply level needs only it)."""
    best = -1
    best_eq = -1e18
    for i in range(n):
        if scored[i]:
            e = _equity(probs[i])
            if e > best_eq:
                best_eq = e
                best = i
    return best


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
def _analyse_root(b, d1, d2, ply, nets, bo, cfg, ws, cache, stats, result_probs, result_ply):
    """Rank every play of d1-d2 in b. result_probs[:n] = the mover's probabilities after
    each outcome (at the deepest ply it was searched to; at the full depth, blended with
    its 0-ply probabilities when cfg.blend < 1), result_ply[:n] = that ply.
    Returns n, or -1 on buffer overflow. Outcomes are in ws.outs[0][:n].

    Iterative deepening: every play at 0 ply, the best cfg.root_keep within
    cfg.root_width go to 1 ply; from there on, at each ply below the last, only the best
    cfg.screen_keep within cfg.screen_width go one ply deeper (screen_keep 0: all of the
    0-ply survivors go to the full depth at once)."""
    n = _generate(b, d1, d2, cfg.variant, 0, ws)
    if n < 0 or n > ws.probs.shape[1]:
        return -1
    _score_level(b, 0, n, nets, bo, cfg, 0, ws, cache, stats, False)  # the root: no pruning
    probs = ws.probs
    for i in range(n):
        for j in range(N_OUTPUTS):
            result_probs[i, j] = probs[0, i, j]
        result_ply[i] = 0
    if ply == 0:
        return n
    order = ws.order[0]
    k = _filter(probs[0], ws.scored[0], n, cfg.root_keep, cfg.root_width, order)
    cands = order[:k].copy()
    deep = np.empty(N_OUTPUTS, np.float32)
    view = np.empty(SIZE, np.int8)
    mp = np.empty(N_OUTPUTS, np.float32)
    eqs = np.empty(k, np.float64)
    p = 1 if cfg.screen_keep > 0 else ply
    while True:
        for c in range(k):
            i = cands[c]
            _view_into(ws.outs[0, i], ws.agains[0, i], view)
            if not _vn(view, p, 1, nets, bo, cfg, ws, cache, stats, deep):
                return -1
            _mover_probs(deep, ws.agains[0, i], mp)
            if p == ply and cfg.blend < 1.0:  # the full depth's value blended with 0 ply's
                for j in range(N_OUTPUTS):
                    mp[j] = cfg.blend * mp[j] + (1.0 - cfg.blend) * probs[0, i, j]
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
        for c in range(min(k, cfg.screen_keep)):
            if c > 0 and eqs[idx[c]] < best - cfg.screen_width:
                break
            kept[m] = cands[idx[c]]
            m += 1
        k = m
        cands = kept[:k].copy()
        p += 1


@njit
def _analyse_root_entry(b, d1, d2, ply, nets, bo, cfg, ws, cache, stats, result_probs,
                        result_ply):  # fmt: skip
    """_analyse_root, called from Python with the structures as plain tuples: numba's
    dispatcher types a plain tuple of arrays in C, a named one in Python (about 5 µs a
    call, a tenth of a 0-ply decision); the names come back here, at no cost."""
    return _analyse_root(b, d1, d2, ply, Nets(*nets), bearoff_tables_type(*bo), Settings(*cfg),
                         Workspace(*ws), Cache(*cache), stats, result_probs,
                         result_ply)  # fmt: skip


@njit
def _all_rolls(b, nets, bo, cfg, ws, cache, stats, outs, agains, probs, starts):
    """Every play of each of the 21 rolls in b, scored at 0 ply as a root is (no pruning,
    no cache): the plays of roll r are outs[starts[r]:starts[r + 1]] (the mover's view),
    with agains and the mover's probabilities after each. Returns the total, or -1 when
    a buffer is too small."""
    total = 0
    for r in range(N_ROLLS):
        n = _generate(b, ROLLS_21[r, 0], ROLLS_21[r, 1], cfg.variant, 0, ws)
        if n < 0 or n > ws.probs.shape[1] or total + n > outs.shape[0]:
            return -1
        _score_level(b, 0, n, nets, bo, cfg, 0, ws, cache, stats, False)
        level_outs, level_agains, level_probs = ws.outs[0], ws.agains[0], ws.probs[0]
        starts[r] = total
        for i in range(n):
            for j in range(SIZE):
                outs[total + i, j] = level_outs[i, j]
            agains[total + i] = level_agains[i]
            for j in range(N_OUTPUTS):
                probs[total + i, j] = level_probs[i, j]
        total += n
    starts[N_ROLLS] = total
    return total


@njit
def _all_rolls_entry(b, nets, bo, cfg, ws, cache, stats, outs, agains, probs, starts):
    """_all_rolls, called from Python with plain tuples (see _analyse_root_entry)."""
    return _all_rolls(b, Nets(*nets), bearoff_tables_type(*bo), Settings(*cfg), Workspace(*ws),
                      Cache(*cache), stats, outs, agains, probs, starts)  # fmt: skip


@njit
def _vn_entry(b, depth, nets, bo, cfg, ws, cache, stats, out):
    """_vn from level 1, called from Python with plain tuples (see _analyse_root_entry)."""
    return _vn(b, depth, 1, Nets(*nets), bearoff_tables_type(*bo), Settings(*cfg),
               Workspace(*ws), Cache(*cache), stats, out)  # fmt: skip


class BudgetExceeded(Exception):
    """A search stopped at its evaluation budget (Searcher.analyse / evaluate max_evals)."""


class Searcher:
    """Holds the buffers and the cache; `analyse` ranks the plays of a roll, `evaluate`
    gives Vn of a position. One instance serves one thread."""

    def __init__(self, model: Model, variant: int | None = None, capacity: int = 4096,
                 use_bearoff: bool = True, use_onesided: bool = True) -> None:  # fmt: skip
        self.model = model
        self.variant = model.variant if variant is None else variant
        self.use_bearoff = bool(use_bearoff and self.variant == STANDARD)
        self.bo = bearoff_tables(self.use_bearoff, use_onesided)
        self.cache = new_cache()
        self.stats = np.zeros(2, np.int64)
        self.nets = Nets(model.contact, model.race,
                         _NO_PRUNE if model.prune is None else model.prune)  # fmt: skip
        # The kernels' entry points take plain tuples (see _analyse_root_entry).
        self._flat = (tuple(self.nets), tuple(self.bo), tuple(self.cache))
        self._generations: dict[tuple[int, float, int, bool], int] = {}  # each setting's generation
        self._numbers = itertools.count(1)  # fresh generations (cache.gen starts at 0)
        self._made: dict[Limits, tuple] = {}  # _settings' for each Limits
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.ws = new_workspace(capacity, self.nets)
        self._flat_ws = tuple(self.ws)
        self.result_probs = np.zeros((capacity, N_OUTPUTS), np.float32)
        self.result_ply = np.zeros(capacity, np.int64)

    def _settings(self, limits: Limits) -> tuple:
        """The kernels' settings for these limits (a Settings as a plain tuple, made once
        for each Limits). Cached values deeper than 0 ply depend on the inner filter and
        pruning, so the cache keys values with the generation of those settings (a new
        one for settings not seen since the last clear_cache)."""
        made = self._made.get(limits)
        if made is None:
            keep = 0 if self.model.prune is None else max(0, limits.pruning())
            prune_all = limits.pruning_all()  # races and crashed positions too (1 ply)
            made = self._made[limits] = (
                (limits.inner_keep, limits.inner_width, keep, prune_all),
                tuple(Settings(int(self.variant), self.use_bearoff, int(keep),
                               int(limits.root_keep), float(limits.root_width),
                               int(limits.inner_keep), float(limits.inner_width),
                               int(limits.screen_keep), float(limits.screen_width),
                               prune_all, float(limits.blend))))  # fmt: skip
        inner, cfg = made
        gen = self._generations.get(inner)
        if gen is None:
            gen = self._generations[inner] = next(self._numbers)
        self.cache.gen[0] = gen
        return cfg

    def _args(self, limits: Limits) -> tuple:
        """(nets, bo, cfg, ws, cache) as the plain tuples the entry kernels take."""
        nets, bo, cache = self._flat
        return nets, bo, self._settings(limits), self._flat_ws, cache

    def _budget(self, max_evals: int) -> None:
        """Let the kernels evaluate at most max_evals more positions (0: no limit): the
        search checks stats[0] against stats[1] as it starts each roll."""
        self.stats[1] = self.stats[0] + max_evals if max_evals > 0 else 0

    def _over_budget(self) -> None:
        """After a kernel gave up: BudgetExceeded if it was the budget (else it was a
        buffer that is too small)."""
        if self.stats[1] > 0 and self.stats[0] > self.stats[1]:
            self.stats[1] = 0
            raise BudgetExceeded("the search passed its budget of evaluations")

    def clear_cache(self) -> None:
        """Forget every cached value (in constant time: a new generation of keys)."""
        self._generations.clear()
        self.cache.gen[0] = next(self._numbers)

    def _root(self, board: np.ndarray, d1: int, d2: int, limits: Limits, max_evals: int = 0) -> int:
        """Run the root search of d1-d2 in board; the count n of its outcomes."""
        check_dice(d1, d2)
        if not 0 <= limits.ply <= MAX_PLY:
            raise ValueError(f"ply must be 0..{MAX_PLY}, got {limits.ply}")
        b = np.array(board, dtype=np.int8)
        self._budget(max_evals)
        try:
            while True:
                nets, bo, cfg, ws, cache = self._args(limits)
                n = _analyse_root_entry(b, d1, d2, limits.ply, nets, bo, cfg, ws, cache,
                                        self.stats, self.result_probs, self.result_ply)  # fmt: skip
                if n >= 0:
                    return n
                self._over_budget()
                self._allocate(self.capacity * 4)
        finally:
            self.stats[1] = 0

    def analyse(self, board: np.ndarray, d1: int, d2: int, limits: Limits = Limits(),
                max_evals: int = 0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """(outcome boards (n, SIZE) in the mover's view, again (n,), the mover's
        probabilities (n, 5) after each, the ply each was searched to (n,)). With
        max_evals > 0, BudgetExceeded once the search has evaluated about that many
        positions."""
        n = self._root(board, d1, d2, limits, max_evals)
        return (self.ws.outs[0, :n].copy(), self.ws.agains[0, :n].astype(bool),
                self.result_probs[:n].copy(), self.result_ply[:n].copy())  # fmt: skip

    def evaluate(self, board: np.ndarray, limits: Limits = Limits(),
                 max_evals: int = 0) -> np.ndarray:  # fmt: skip
        """V_ply of the position for the side on roll (before it rolls): (5,) float32.
        max_evals as in analyse."""
        if not 0 <= limits.ply <= MAX_PLY:
            raise ValueError(f"ply must be 0..{MAX_PLY}, got {limits.ply}")
        b = np.array(board, dtype=np.int8)
        out = np.zeros(N_OUTPUTS, np.float32)
        self._budget(max_evals)
        try:
            while not _vn_entry(b, limits.ply, *self._args(limits), self.stats, out):
                self._over_budget()
                self._allocate(self.capacity * 4)
        finally:
            self.stats[1] = 0
        return out

    def all_rolls(self, board: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every play of each of the 21 rolls (doublet.core.dice.ROLLS_21) at 0 ply, in one
        call: (outcome boards (n, SIZE), again (n,), the mover's probabilities (n, 5),
        starts (22,): roll r's plays are rows starts[r]:starts[r + 1]), each roll's plays
        as analyse(board, d1, d2, Limits(ply=0)) gives them."""
        b = np.array(board, dtype=np.int8)
        if not hasattr(self, "_rolls_outs"):
            self._allocate_rolls(8192)
        starts = np.zeros(N_ROLLS + 1, np.int64)
        while True:
            nets, bo, cfg, ws, cache = self._args(Limits(ply=0))
            n = _all_rolls_entry(b, nets, bo, cfg, ws, cache, self.stats, self._rolls_outs,
                                 self._rolls_agains, self._rolls_probs, starts)  # fmt: skip
            if n >= 0:
                break
            if self._rolls_outs.shape[0] < N_ROLLS * self.capacity:
                self._allocate_rolls(4 * self._rolls_outs.shape[0])
            else:
                self._allocate(self.capacity * 4)
        return (self._rolls_outs[:n].copy(), self._rolls_agains[:n].astype(bool),
                self._rolls_probs[:n].copy(), starts)  # fmt: skip

    def _allocate_rolls(self, rows: int) -> None:
        self._rolls_outs = np.zeros((rows, SIZE), np.int8)
        self._rolls_agains = np.zeros(rows, np.int8)
        self._rolls_probs = np.zeros((rows, N_OUTPUTS), np.float32)

    def best(self, board: np.ndarray, d1: int, d2: int, limits: Limits = Limits(),
             max_evals: int = 0) -> int:  # fmt: skip
        """Index (into the outcomes of the roll, as analyse lists them) of the play chosen
        at limits.ply: the best equity among the plays searched deepest. max_evals as in
        analyse."""
        n = self._root(board, d1, d2, limits, max_evals)
        return int(_best_index(self.result_probs, self.result_ply, n))

    def chosen(self, board: np.ndarray, d1: int, d2: int, limits: Limits = Limits(),
               max_evals: int = 0) -> tuple[np.ndarray, bool, np.ndarray, int]:  # fmt: skip
        """The play best() picks, alone: (the board after it (SIZE,) in the mover's view,
        whether the mover rolls again, the mover's probabilities after it (5,), the ply it
        was searched to), copied out of the buffers; what analyse gives for that index,
        without copying the roll's other plays. max_evals as in analyse."""
        i = self.best(board, d1, d2, limits, max_evals)
        return (self.ws.outs[0, i].copy(), bool(self.ws.agains[0, i]),
                self.result_probs[i].copy(), int(self.result_ply[i]))  # fmt: skip


@njit
def _best_index(probs, plies, n):
    """The first of the best plays by equity among those searched to the deepest ply
    (doublet.search.choice's best_index and ranking agree with it)."""
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
