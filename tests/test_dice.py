"""doublet.core.dice: the 21 rolls are the 36 ordered rolls with their weights, in the
order the search and the bear-off database sum them; the seeded streams replay the same
numbers for the same key and differ across keys; the splitmix64 stream gives dice 1..6
uniformly; game_roll is the series' roll of (seed, game, k)."""

from __future__ import annotations

import collections
import itertools

import numpy as np

from doublet.core.dice import (
    DICE_STREAM,
    N_ROLLS,
    ROLL_WEIGHTS,
    ROLLS_21,
    _die,
    _seed_stream,
    game_roll,
    seed64,
    stream,
)


def test_the_21_rolls_are_the_36_with_weights() -> None:
    assert ROLLS_21.shape == (N_ROLLS, 2) and ROLL_WEIGHTS.shape == (N_ROLLS,)
    ordered = collections.Counter(
        (max(a, b), min(a, b)) for a, b in itertools.product(range(1, 7), repeat=2)
    )
    assert {(int(a), int(b)): w * 36 for (a, b), w in zip(ROLLS_21, ROLL_WEIGHTS, strict=True)} \
        == pytest_approx_dict(ordered)  # fmt: skip
    assert abs(ROLL_WEIGHTS.sum() - 1.0) < 1e-15
    assert [tuple(r) for r in ROLLS_21[:4]] == [(1, 1), (2, 1), (2, 2), (3, 1)]
    assert not ROLLS_21.flags.writeable


def pytest_approx_dict(counts: collections.Counter) -> dict:
    return {k: float(v) for k, v in counts.items()}


def test_streams_replay_their_key() -> None:
    a = stream(7, 3).integers(1, 7, 50)
    assert np.array_equal(a, stream(7, 3).integers(1, 7, 50))
    assert not np.array_equal(a, stream(7, 4).integers(1, 7, 50))
    assert np.array_equal(stream(5).random(4), np.random.default_rng(5).random(4))


def test_the_splitmix_stream_gives_fair_dice() -> None:
    state = np.empty(1, np.uint64)
    with np.errstate(over="ignore"):
        _seed_stream(state, seed64(11), 0, DICE_STREAM)
        dice = [int(_die(state)) for _ in range(6000)]
        _seed_stream(state, seed64(11), 0, DICE_STREAM)
        again = [int(_die(state)) for _ in range(20)]
    assert again == dice[:20]
    counts = collections.Counter(dice)
    assert set(counts) == set(range(1, 7))
    assert all(900 < c < 1100 for c in counts.values())


def test_game_roll_is_the_series_roll() -> None:
    assert game_roll(7, 0, 0) == game_roll(7, 0, 0)
    d = np.random.default_rng([7, 2, 5]).integers(1, 7, 2)
    assert game_roll(7, 2, 5) == (int(d[0]), int(d[1]))
    assert all(1 <= x <= 6 for k in range(30) for x in game_roll(3, 1, k))
