"""The dice: the 21 distinct rolls with their weights, and every seeded stream of rolls.

``ROLLS_21[r] = (d1, d2)`` with d1 >= d2, in the order (1,1), (2,1), (2,2), (3,1), ...,
(6,6); ``ROLL_WEIGHTS[r]`` is its chance, 1/36 for a doublet and 2/36 otherwise. It is
the only enumeration of the dice: the search, the bear-off database and the shot
counter all iterate over it (the 36 ordered rolls are ``ROLLS_21`` with the
non-doublets twice).

Seeded streams, so that a seed replays the same games in any process, in any order:

- ``_seed_stream`` / ``_die`` / ``_below``: a counter-based splitmix64 stream per (seed,
  pair, stream) inside numba, for the duplicate-dice harnesses (doublet.games.duplicate
  and duplicate_search). It holds no global state, so a seed gives the same games
  whatever the chunking, the retries after a buffer grows, or other numba code that
  draws from ``np.random`` in between.
- ``game_roll(seed, game, k)``: the k-th roll of game number ``game`` of a series (the
  games people play, doublet.games.game): a saved game resumes with the dice it would
  have had.
- ``stream(*key)``: a numpy Generator for a key of integers (self-play games, training
  data, rollouts), the same numbers for the same key everywhere.
- ``trial_strata(seed)`` / ``_trial_roll``: the dice of trial t of a rollout
  (doublet.search.rollout), from the seed and t alone: the first QUASI_MOVES rolls
  quasi-random (each block of 36 trials has every ordered first roll once and every
  second roll once, each 1,296 trials every pair of them once: a Latin square of two
  seeded permutations), the later ones from the splitmix64 stream of (seed, t).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from doublet.core.errors import DoubletError, shown
from doublet.core.jit import njit


def _rolls() -> tuple[np.ndarray, np.ndarray]:
    rolls, weights = [], []
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            rolls.append((d1, d2))
            weights.append((1.0 if d1 == d2 else 2.0) / 36.0)
    return np.array(rolls, np.int64), np.array(weights, np.float64)


ROLLS_21, ROLL_WEIGHTS = _rolls()
ROLLS_21.flags.writeable = False
ROLL_WEIGHTS.flags.writeable = False
N_ROLLS = 21

# splitmix64 (Steele, Lea, Flood 2014): the golden-ratio increment and the two mixers.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
DICE_STREAM = 0  # the dice of a pair; stream 1 + j: the random choices of game j of it


@njit
def _mix(z):
    """splitmix64's output function: uint64 -> uint64."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit
def _next(state):
    """Next uint64 of the stream state ((1,) uint64, advanced in place)."""
    state[0] += _GOLDEN
    return _mix(state[0])


@njit
def _seed_stream(state, seed, pair, stream):
    """Start state ((1,) uint64) on the stream of (seed uint64, pair, stream)."""
    z = _mix(seed + _GOLDEN)
    z = _mix(z ^ np.uint64(pair))
    state[0] = _mix(z ^ np.uint64(stream + 1))


@njit
def _below(state, n):
    """Uniform integer in 0..n-1 (modulo of 64 random bits: bias below n / 2^64)."""
    return np.int64(_next(state) % np.uint64(n))


@njit
def _die(state):
    """One die, 1..6, from the stream state."""
    return _below(state, 6) + 1


# The seeds the streams tell apart: a rollout's or a duplicate run's splitmix64 streams
# take 64 bits (seed64), a series' dice (game_roll) 63; a larger seed would repeat a
# smaller one, so the front ends refuse it.
MAX_SEED = 2**64 - 1
MAX_GAME_SEED = 2**63 - 1

QUASI_MOVES = 2  # rollouts: the rolls of a trial that are stratified (0, 1 or 2)
ROLLOUT_STREAM = 1 << 40  # the stream number of a rollout trial's later rolls


def trial_strata(seed: int) -> np.ndarray:
    """(2, 36) int64: the two permutations of the 36 ordered rolls (k: d1 = 1 + k // 6,
    d2 = 1 + k % 6) behind the quasi-random first rolls of a rollout with `seed`."""
    g = np.random.default_rng([int(seed), 36])  # any seed of 0..MAX_SEED its own
    return np.stack([g.permutation(36), g.permutation(36)]).astype(np.int64)


@njit
def _trial_roll(strata, quasi, state, trial, move):
    """The ordered roll index k (d1 = 1 + k // 6, d2 = 1 + k % 6) of move `move` (0, 1,
    ...) of rollout trial `trial`: move 0 is strata[0, t % 36], move 1 strata[1, (t % 36
    + t // 36) % 36] (while move < quasi), later moves the next draw of state, the
    trial's stream (_seed_stream(state, seed, trial, ROLLOUT_STREAM))."""
    if move < quasi:
        i = trial % 36
        if move == 0:
            return strata[0, i]
        return strata[1, (i + trial // 36) % 36]
    return _below(state, 36)


@njit
def roll_index(d1, d2):
    """The index into ROLLS_21 of the roll d1-d2 (either order)."""
    hi, lo = max(d1, d2), min(d1, d2)
    return hi * (hi - 1) // 2 + lo - 1


def check_seed(seed: Any, lead: str = "a seed of the dice must be") -> int:
    """`seed` as a seed of the dice, 0..MAX_SEED (a larger one's low 64 bits would repeat
    a smaller seed's dice), or DoubletError "{lead} 0 to 2**64 - 1, got ..." (the front
    ends' leads name their flag or key)."""
    if (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
            or not 0 <= seed <= MAX_SEED):  # fmt: skip
        raise DoubletError(f"{lead} 0 to 2**64 - 1, got {shown(seed, 30)}")
    return int(seed)


def seed64(seed: int) -> np.uint64:
    """A Python seed of 0..MAX_SEED as the streams' uint64 (check_seed)."""
    return np.uint64(check_seed(seed))


def game_roll(seed: int, game: int, k: int) -> tuple[int, int]:
    """The k-th pair of dice of game number `game` of the series with `seed`."""
    d = np.random.default_rng([seed & MAX_GAME_SEED, game, k]).integers(1, 7, 2)
    return int(d[0]), int(d[1])


def stream(*key: int) -> np.random.Generator:
    """The numpy Generator of a key of non-negative integers (e.g. (seed, game))."""
    return np.random.default_rng(list(key))  # a one-number key: the same as default_rng(n)


__all__ = [
    "DICE_STREAM",
    "MAX_GAME_SEED",
    "MAX_SEED",
    "N_ROLLS",
    "QUASI_MOVES",
    "ROLLOUT_STREAM",
    "ROLLS_21",
    "ROLL_WEIGHTS",
    "game_roll",
    "roll_index",
    "seed64",
    "stream",
    "trial_strata",
]
