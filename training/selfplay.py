"""Self-play: the net plays itself at 0 ply, inside one numba kernel per game.

Both sides play doublet.nn.eval's 0-ply choice (the outcome with the best cubeless equity for
the mover) with the same weights; with probability ``epsilon`` a roll is played by a
uniformly random outcome instead (exploration; 0 by default, as in TD-Gammon).

A game is a ``Trajectory``: the board before each roll, seen by the side on roll
(``boards[t]``), whether the next position keeps the same side on roll (``again[t]``:
Acey-Deucey's 1-2 chain; otherwise the sides alternate), and the result for the side on
roll at the last position, which is always the winner (only the mover can bear off its
last checker): 1, 2 or 3; 0 for a game stopped after MAX_PLIES rolls.

Everything is seeded: game ``index`` of a run with seed ``seed`` draws its dice from
``doublet.core.dice.stream(seed, index)`` (the opening roll first: a non-double in
standard backgammon, where the opening single-die throws decide who starts and the
starter plays them; any roll in Acey-Deucey, where the starter rolls both dice afresh),
so the same weights, seed and index give the same game in any process, in any order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from doublet.core.board import SIZE, STANDARD, Boards, flip_into, outcome, starting
from doublet.core.dice import stream
from doublet.core.jit import njit
from doublet.nn.eval import N_OUTPUTS, Model, Net, _choose
from doublet.rules.movegen import Workspace

INITIAL_PLIES = 512  # positions per game before the buffers grow; self-play games are ~60
# A game still running after this many rolls is stopped without a result (0): early in
# training (the first few hundred games of td-h80-race stop a fifth of their games here)
# or with a collapsed net, both sides can keep hitting each other for a very long time;
# learning then bootstraps from the net's own value of the last position (doublet.training.td).
# Trained nets play standard games of about 60 rolls and rarely pass 200.
MAX_PLIES = 1000

_OK, _OVERFLOW, _TOO_LONG = 0, 1, 2

# The 30 ordered non-double rolls: standard backgammon's opening roll (two single dice,
# one per side, equal throws repeated) is one of them, uniformly.
_OPENINGS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7) if a != b], np.int64)


@dataclass(frozen=True, eq=False)
class Trajectory:
    """One self-play game. boards (T, SIZE) int8: the position before roll t, seen by the
    side on roll; again (T,) bool: boards[t + 1] has the same side on roll as boards[t]
    (again[T - 1] is the flag of the winning play, unused); result: 1/2/3, the single
    game/gammon/backgammon won by the side on roll at boards[T - 1], or 0 for a game
    stopped after MAX_PLIES rolls."""

    boards: Boards
    again: npt.NDArray[np.bool_]
    result: int

    def __len__(self) -> int:
        return len(self.boards)


@njit
def _play(
    start, variant, contact, race, dice, explore, epsilon, acc, tmp, scratch, probs, boards, again
):
    """Play one game from start ((SIZE,) int8, the starter's view before the first roll).

    dice (L, 2) int64: the rolls in order; explore (L, 2) float64 uniforms (used only when
    epsilon > 0: u < epsilon plays outcome floor(v n)). Fills boards[:T] ((L, SIZE) int8)
    and again[:T] ((L,) int8). Returns (T, result for the last mover, status).
    """
    b = np.empty(SIZE, np.int8)
    for i in range(SIZE):
        b[i] = start[i]
    for t in range(boards.shape[0]):
        for i in range(SIZE):
            boards[t, i] = b[i]
        best, n = _choose(
            b, dice[t, 0], dice[t, 1], variant, contact, race, acc, tmp, scratch, probs
        )
        if n < 0:
            return 0, 0, _OVERFLOW
        if epsilon > 0.0 and explore[t, 0] < epsilon:
            best = min(int(explore[t, 1] * n), n - 1)
        after = acc[0][best]
        again[t] = acc[1][best]
        r = outcome(after)
        if r != 0:
            return t + 1, r, _OK
        if again[t]:
            for i in range(SIZE):
                b[i] = after[i]
        else:
            flip_into(after, b)
    return 0, 0, _TOO_LONG


def game_dice(
    seed: int, index: int, variant: int, plies: int, epsilon: float
) -> tuple[np.ndarray, np.ndarray]:
    """The rolls (plies, 2) int64 and exploration uniforms (plies, 2) of game `index`."""
    rng = stream(seed, index)
    opening = _OPENINGS[rng.integers(len(_OPENINGS))]
    dice = rng.integers(1, 7, size=(plies, 2), dtype=np.int64)
    if variant == STANDARD:
        dice[0] = opening
    explore = rng.random((plies, 2)) if epsilon > 0 else np.zeros((plies, 2))
    return dice, explore


def _contig(net: Net) -> Net:
    return tuple(np.ascontiguousarray(a, dtype=np.float32) for a in net)  # type: ignore[return-value]


class SelfPlay:
    """Plays self-play games with the weights it is given; owns the kernel's buffers."""

    def __init__(self, variant: int = STANDARD, epsilon: float = 0.0) -> None:
        self.variant = variant
        self.epsilon = float(epsilon)
        self.start = starting(variant)
        self.ws = Workspace()
        self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)
        self.plies = INITIAL_PLIES
        self._alloc()

    def _alloc(self) -> None:
        self.boards = np.zeros((self.plies, SIZE), np.int8)
        self.again = np.zeros(self.plies, np.int8)

    def game(self, contact: Net, race: Net, seed: int, index: int) -> Trajectory:
        """Game `index` of seed `seed` with these nets (see the module docstring)."""
        contact, race = _contig(contact), _contig(race)
        while True:
            dice, explore = game_dice(seed, index, self.variant, self.plies, self.epsilon)
            n, r, status = _play(
                self.start,
                self.variant,
                contact,
                race,
                dice,
                explore,
                self.epsilon,
                self.ws.acc,
                self.ws.tmp,
                self.ws.scratch,
                self.probs,
                self.boards,
                self.again,
            )
            if status == _OK:
                return Trajectory(self.boards[:n].copy(), self.again[:n].astype(bool), int(r))
            if status == _OVERFLOW:  # a roll with more outcomes than the buffers hold
                self.ws.allocate(self.ws.capacity * 4)
                self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)
            elif self.plies >= MAX_PLIES:  # stopped: no result
                return Trajectory(self.boards.copy(), self.again.astype(bool), 0)
            else:  # longer than the buffers: replay with more dice
                self.plies = min(MAX_PLIES, self.plies * 4)
                self._alloc()

    def games(self, model: Model, seed: int, indices: range | list[int]) -> list[Trajectory]:
        return [self.game(model.contact, model.race, seed, i) for i in indices]


def play_games(
    model: Model,
    seed: int,
    indices: range | list[int],
    variant: int = STANDARD,
    epsilon: float = 0.0,
) -> list[Trajectory]:
    """Self-play games `indices` of seed `seed` with `model` for both sides."""
    return SelfPlay(variant, epsilon).games(model, seed, indices)


__all__ = ["SelfPlay", "Trajectory", "game_dice", "play_games"]
