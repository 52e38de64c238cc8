"""Rollouts: the value of a position for the side on roll, by playing it out.

Both sides play on at 0 ply, each play chosen by cubeless equity with the exact bear-off
database wherever a position is a pure bear-off (and, with a pruning net, only the
ROLLOUT_PRUNE_KEEP plays it rates best are judged by the main net, except in crashed
positions, which the search never prunes either: the pruning net ranks their plays
poorly), until a trial ends:

- at the end of the game, or a pure bear-off: its exact database probabilities;
- ``RaceRollout`` (race positions): nothing else, so the value is the play's own;
- ``Rollout`` (contact positions): also when contact is broken, at the race net's value
  of that position (the race net is fitted to race rollouts: doublet.training.distill
  --race-trials); this truncation removes the race's luck from the result;
- after MAX_MOVES plays (only very long games): the net's value.

``RaceRollout(model)(board, trials, rng)`` starts trial t with roll t mod 36 (each of
the 36 ordered rolls once per 36 trials, so the first roll's luck cancels) and goes on
with random dice from rng. ``Rollout`` stratifies every roll: for each block of 36
trials and each move number, the 36 rolls in a random order, so each trial's dice are
still uniform and independent while each roll of each move is played equally often
(the quasi-random dice of GNU Backgammon's rollouts, by the Latin-hypercube route).
These values are the supervised targets of doublet.training.distill (``--race-trials``,
``--rollout-trials``): the value of the current net's own play, measured by playing,
not the net's estimate of it. Measured (benchmarks/RESULTS.md, session 6): fitting the
race net to race rollouts helped; fitting the contact net to 36-trial contact rollouts
of 334,000 positions did not make its plays better.
"""

from __future__ import annotations

import numpy as np

from doublet.core.board import SIZE, STANDARD, crashed, flip_into, has_contact, outcome
from doublet.core.jit import njit
from doublet.nn.encode import N_INPUTS
from doublet.nn.eval import (
    N_OUTPUTS,
    Model,
    _equity,
    _mover_probs,
    _prune_score,
    _search_scratch,
    _terminal,
)
from doublet.rules.bearoff import is_bearoff
from doublet.rules.bearoff import tables as bearoff_tables
from doublet.rules.movegen import Workspace, _outcomes
from doublet.search.searcher import _NO_PRUNE, _prune_pick, _v0

# Plays the main net judges in a rollout's 0-ply choice (the pruning net picks them): 5,
# the value of the search's PRUNE_KEEP when every rollout data set of the shipped model
# was made (from its first, 2026-11-30); session 20 set the 1-ply search's to 4 and left
# the rollouts' as they were.
ROLLOUT_PRUNE_KEEP = 5

MAX_MOVES = 120


@njit
def _choose(b, d1, d2, contact, race, prune, prune_keep, bo, acc, tmp, scratch, work,
            best_board, best_p):  # fmt: skip
    """The mover's 0-ply choice for d1-d2 in b: best_board = the position after it, seen
    by the opponent; best_p = the mover's probabilities there. Returns the number of
    plays, or -1 when the move buffers overflow."""
    x, hidden, flipped, view, p, mover, rating, picked = work
    n = _outcomes(b, d1, d2, STANDARD, acc, tmp, scratch)
    if n < 0:
        return n
    # Crashed positions unpruned, as in the search (doublet.search.searcher): pruned, the
    # rollouts valued the positions after the plays of 16 crashed refset decisions 0.098
    # below gnubg 1.07 2 ply on average, unpruned 0.052 (benchmarks/HISTORY.md, session 32).
    pruning = prune_keep > 0 and n > prune_keep and not crashed(b)
    for i in range(n):
        picked[i] = 1
    if pruning:
        for i in range(n):
            flip_into(acc[0][i], view)
            if not (_terminal(view, p) or is_bearoff(view)):
                rating[i] = -_prune_score(view, prune, flipped, hidden)
                picked[i] = 0
        _prune_pick(n, rating, picked, prune_keep, 1)
    best_eq = -1e9
    for i in range(n):
        if not picked[i]:
            continue
        flip_into(acc[0][i], view)
        _v0(view, STANDARD, contact, race, bo, True, x, hidden, flipped, p)
        _mover_probs(p, False, mover)
        e = _equity(mover)
        if e > best_eq:
            best_eq = e
            for j in range(SIZE):
                best_board[j] = view[j]
            for k in range(N_OUTPUTS):
                best_p[k] = mover[k]
    return n


@njit
def _trials(start, dice, contact, race, prune, prune_keep, bo, stop_race, acc, tmp, scratch,
            out):  # fmt: skip
    """out (5,) float64 = the mean over trials of the start side's probabilities.

    dice (trials, MAX_MOVES, 2) int64; stop_race: end a trial when contact is broken;
    prune_keep > 0: the pruning net picks the plays the main net judges. Returns False
    when the move buffers overflow."""
    cap = acc[0].shape[0]
    work = (np.empty(N_INPUTS, np.float32),
            np.empty(_search_scratch(contact, race, prune), np.float32),
            np.empty(SIZE, np.int8), np.empty(SIZE, np.int8), np.empty(N_OUTPUTS, np.float32),
            np.empty(N_OUTPUTS, np.float32), np.empty(cap, np.float32),
            np.zeros(cap, np.int8))  # fmt: skip
    x, hidden, flipped = work[0], work[1], work[2]
    b = np.empty(SIZE, np.int8)
    nxt = np.empty(SIZE, np.int8)
    p = np.empty(N_OUTPUTS, np.float32)
    mover = np.empty(N_OUTPUTS, np.float32)
    for k in range(N_OUTPUTS):
        out[k] = 0.0
    trials = dice.shape[0]
    for t in range(trials):
        for i in range(SIZE):
            b[i] = start[i]
        side = 0  # 0: the start side is on roll at b
        for m in range(MAX_MOVES + 1):
            if (m == MAX_MOVES or outcome(b) != 0 or is_bearoff(b)
                    or (stop_race and not has_contact(b))):  # fmt: skip
                _v0(b, STANDARD, contact, race, bo, True, x, hidden, flipped, p)
                if side == 0:
                    for k in range(N_OUTPUTS):
                        out[k] += p[k]
                else:
                    _mover_probs(p, False, mover)  # the start side moved last
                    for k in range(N_OUTPUTS):
                        out[k] += mover[k]
                break
            if _choose(b, dice[t, m, 0], dice[t, m, 1], contact, race, prune, prune_keep, bo,
                       acc, tmp, scratch, work, nxt, mover) < 0:  # fmt: skip
                return False
            for i in range(SIZE):
                b[i] = nxt[i]
            side ^= 1
    for k in range(N_OUTPUTS):
        out[k] /= trials
    return True


class _Base:
    def __init__(self, model: Model, prune: bool) -> None:
        if model.variant != STANDARD:
            raise ValueError("rollouts use the standard bear-off database")
        self.model = model
        self.bo = bearoff_tables(True)
        self.ws = Workspace()
        use = prune and model.prune is not None
        self.prune = model.prune if use else _NO_PRUNE
        self.prune_keep = ROLLOUT_PRUNE_KEEP if use else 0

    def _run(self, b: np.ndarray, dice: np.ndarray, stop_race: bool) -> np.ndarray:
        out = np.zeros(N_OUTPUTS, np.float64)
        m = self.model
        while not _trials(b, dice, m.contact, m.race, self.prune, self.prune_keep, self.bo,
                          stop_race, self.ws.acc, self.ws.tmp, self.ws.scratch, out):  # fmt: skip
            self.ws.allocate(self.ws.capacity * 4)
        return out


class RaceRollout(_Base):
    """Rolls out race positions with a model (standard backgammon only)."""

    def __init__(self, model: Model) -> None:
        super().__init__(model, prune=False)

    def __call__(self, board: np.ndarray, trials: int, rng: np.random.Generator) -> np.ndarray:
        """The mean probabilities (5,) for the side on roll of race `board` over `trials`."""
        b = np.ascontiguousarray(board, dtype=np.int8)
        if has_contact(b):
            raise ValueError("race rollouts need a position without contact")
        if is_bearoff(b) or outcome(b) != 0:
            trials = 1  # exact: every trial would end at once
        dice = rng.integers(1, 7, size=(trials, MAX_MOVES, 2), dtype=np.int64)
        first = np.arange(trials) % 36
        dice[:, 0, 0] = 1 + first // 6
        dice[:, 0, 1] = 1 + first % 6
        return self._run(b, dice, False)


def stratified_dice(trials: int, rng: np.random.Generator) -> np.ndarray:
    """(trials, MAX_MOVES, 2) dice: for each block of 36 trials and each move, the 36
    ordered rolls in a random order (a last, partial block takes the first of its order)."""
    rolls = np.empty((trials, MAX_MOVES), np.int64)
    for start in range(0, trials, 36):
        n = min(36, trials - start)
        rolls[start : start + n] = rng.permuted(np.tile(np.arange(36), (MAX_MOVES, 1)),
                                                axis=1).T[:n]  # fmt: skip
    return np.stack((1 + rolls // 6, 1 + rolls % 6), axis=2)


class Rollout(_Base):
    """Rolls out contact positions to the end of contact (standard backgammon only)."""

    def __init__(self, model: Model, prune: bool = True) -> None:
        super().__init__(model, prune)

    def __call__(self, board: np.ndarray, trials: int, rng: np.random.Generator) -> np.ndarray:
        """The mean probabilities (5,) for the side on roll of contact `board`."""
        b = np.ascontiguousarray(board, dtype=np.int8)
        if not has_contact(b) or outcome(b) != 0:
            raise ValueError("contact rollouts need a position with contact")
        return self._run(b, stratified_dice(trials, rng), True)


__all__ = ["MAX_MOVES", "RaceRollout", "Rollout", "stratified_dice"]
