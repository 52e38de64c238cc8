"""Race rollouts: the value of a race position for the side on roll, by playing it out.

A race (no contact) is played on at 0 ply by both sides, each play chosen by cubeless
equity with the exact bear-off database wherever a position is a pure bear-off, until
the side on roll stands in a pure bear-off (both sides home): that position's exact
database probabilities end the trial (as does the end of the game). A trial that
reaches neither within MAX_MOVES plays (only runs of the lowest rolls could) ends on the
net's value.

``RaceRollout(model)(board, trials, rng)`` averages `trials` trials; trial t starts with
roll t mod 36 (each of the 36 ordered rolls once per 36 trials, so the first roll's luck
cancels) and goes on with random dice from rng. These values are the supervised targets
of the race net (training.distill data --race-trials): near the database they are
exact, further out they are the value of the current net's own race play (measured by
playing, not the net's estimate of it).
"""

from __future__ import annotations

import numpy as np

from engine.bearoff import _BINOM, database, is_bearoff
from engine.board import SIZE, STANDARD, flip_into, has_contact, outcome
from engine.encode import N_INPUTS
from engine.eval import N_OUTPUTS, Model, _equity, _mover_probs
from engine.jit import njit
from engine.movegen import Workspace, _outcomes
from engine.search import _v0

MAX_MOVES = 120


@njit
def _trials(start, dice, contact, race, bo, acc, tmp, scratch, out):
    """out (5,) float64 = the mean over trials of the start side's probabilities.

    dice (trials, MAX_MOVES, 2) int64. Returns False when the move buffers overflow."""
    hidden = np.empty(max(contact[1].shape[0], race[1].shape[0]), np.float32)
    x = np.empty(N_INPUTS, np.float32)
    flipped = np.empty(SIZE, np.int8)
    b = np.empty(SIZE, np.int8)
    view = np.empty(SIZE, np.int8)
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
            if m == MAX_MOVES or outcome(b) != 0 or is_bearoff(b):
                _v0(b, STANDARD, contact, race, bo, True, x, hidden, flipped, p)
                if side == 0:
                    for k in range(N_OUTPUTS):
                        out[k] += p[k]
                else:
                    _mover_probs(p, False, mover)  # the start side moved last
                    for k in range(N_OUTPUTS):
                        out[k] += mover[k]
                break
            n = _outcomes(b, dice[t, m, 0], dice[t, m, 1], STANDARD, acc, tmp, scratch)
            if n < 0:
                return False
            best = 0
            best_eq = -1e9
            for i in range(n):
                flip_into(acc[0][i], view)
                _v0(view, STANDARD, contact, race, bo, True, x, hidden, flipped, p)
                _mover_probs(p, False, mover)
                e = _equity(mover)
                if e > best_eq:
                    best_eq = e
                    best = i
            flip_into(acc[0][best], b)
            side ^= 1
    for k in range(N_OUTPUTS):
        out[k] /= trials
    return True


class RaceRollout:
    """Rolls out race positions with a model (standard backgammon only)."""

    def __init__(self, model: Model) -> None:
        if model.variant != STANDARD:
            raise ValueError("race rollouts use the standard bear-off database")
        db = database()
        self.model = model
        self.bo = (db.off, db.first, db.small, db.two_sided, _BINOM)
        self.ws = Workspace()

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
        out = np.zeros(N_OUTPUTS, np.float64)
        m = self.model
        while not _trials(b, dice, m.contact, m.race, self.bo, self.ws.acc, self.ws.tmp,
                          self.ws.scratch, out):  # fmt: skip
            self.ws.allocate(self.ws.capacity * 4)
        return out


__all__ = ["MAX_MOVES", "RaceRollout"]
