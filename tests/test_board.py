"""doublet.core.board, the one position representation: flip is an involution that swaps
the sides (and flip_into writes the same), pip counts and contact follow their
definitions on hand-made boards, a finished game scores single, gammon or backgammon
from either side, the JSON counts round-trip, and the crashed class is GNU Backgammon's
on every contact position of the refset."""

from __future__ import annotations

import numpy as np
import pytest

from doublet.core.board import (
    ACEY_DEUCEY,
    MY_BAR,
    MY_OFF,
    OPP_BAR,
    OPP_OFF,
    SIZE,
    STANDARD,
    counts,
    crashed,
    flip,
    flip_into,
    from_counts,
    has_contact,
    outcome,
    pip_counts,
    starting,
)
from doublet.formats.ids import board_from_position_id, parse_position
from tests.helpers import load_jsonl, pos, random_positions


def _positions(n: int, variant: int, seed: int) -> list[np.ndarray]:
    """Standard: positions of random games. Acey-Deucey: the reference cases' positions
    (random Acey-Deucey games meet 1-2 chains of up to 100,000 plays, too slow for the
    run with the JIT off)."""
    if variant == STANDARD:
        return random_positions(n, variant, seed=seed)
    return [parse_position(c["position"])[0] for c in load_jsonl("acey_deucey.jsonl")[:n]]


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_flip_is_an_involution_that_swaps_the_sides(variant: int) -> None:
    for b in _positions(200, variant, seed=2):
        f = flip(b)
        assert np.array_equal(flip(f), b)
        out = np.empty(SIZE, np.int8)
        flip_into(b, out)
        assert np.array_equal(out, f)
        assert pip_counts(f) == pip_counts(b)[::-1]
        assert (f[MY_OFF], f[OPP_OFF]) == (b[OPP_OFF], b[MY_OFF])


def test_the_start_is_symmetric_with_167_pips() -> None:
    b = starting(STANDARD)
    assert np.array_equal(flip(b), b) and pip_counts(b) == (167, 167)
    assert pip_counts(starting(ACEY_DEUCEY)) == (375, 375)  # 15 unentered count 25 each


def test_pips_and_contact_by_hand() -> None:
    b = pos({6: 2}, {3: 1}, my_bar=1)  # mover: two on 6 and one on the bar; opponent on 3
    assert pip_counts(b) == (2 * 6 + 25, 22)
    assert has_contact(b)
    assert not has_contact(pos({6: 2}, {19: 1}))  # passed each other: a race
    assert has_contact(pos({20: 1}, {19: 1}))


def test_outcomes_single_gammon_backgammon() -> None:
    # pos() bears off every checker it is not given.
    won = pos({}, {19: 14})  # the opponent has one off
    assert won[MY_OFF] == 15 and won[OPP_OFF] == 1 and outcome(won) == 1
    gammon = pos({}, {19: 15})
    assert outcome(gammon) == 2 and outcome(flip(gammon)) == -2
    in_home = pos({}, {5: 1, 19: 14})  # an opponent checker in the mover's home board
    assert outcome(in_home) == 3
    on_bar = pos({}, {19: 14}, opp_bar=1)
    assert outcome(on_bar) == 3 and outcome(flip(on_bar)) == -3
    assert outcome(starting(STANDARD)) == 0


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_counts_round_trip(variant: int) -> None:
    for b in _positions(100, variant, seed=5):
        mover, opponent = counts(b)
        assert len(mover) == len(opponent) == 26
        assert mover[25] == b[MY_BAR] and opponent[25] == -b[OPP_BAR]
        assert np.array_equal(from_counts(mover, opponent), b)


def test_flip_all_flips_each_row() -> None:
    from doublet.core import board as B

    rng = np.random.default_rng(5)
    rows = []
    for _ in range(20):
        b = B.starting()
        b[1:25] = rng.integers(-3, 4, 24)
        b[B.MY_BAR], b[B.OPP_BAR], b[B.MY_OFF], b[B.OPP_OFF] = 1, -2, 3, 4
        b[B.MY_OUT], b[B.OPP_OUT] = 5, 6
        rows.append(b)
    batch = np.stack(rows)
    assert np.array_equal(B.flip_all(batch), np.stack([B.flip(b) for b in rows]))


def test_crashed_is_gnubgs_class_on_the_refset() -> None:
    """gnubg 1.07 labelled each refset position contact, crashed, race or bear-off: the
    crashed ones are exactly those crashed() finds among the positions with contact
    (2,868: 422 crashed), and no race or bear-off is crashed."""
    seen = {"crashed": 0, "contact": 0, "other": 0}
    for c in load_jsonl("gnubg_refset.jsonl"):
        b = board_from_position_id(c["pid"])
        kind = c["class"] if c["class"] in ("crashed", "contact") else "other"
        assert crashed(b) == (kind == "crashed"), (c["pid"], c["class"])
        assert crashed(flip(b)) == crashed(b)
        seen[kind] += 1
    assert seen["crashed"] == 422 and seen["contact"] == 2446


def test_crashed_by_hand() -> None:
    """The mover with 7 checkers in play: with 3 of them on its 1-point only 4 count
    (crashed); with one there all 7 count (not crashed); with 3 on its 2-point, 2 of them
    do not count (crashed). The opponent, 15 in play, is never crashed here; with 11 of
    them off it is."""
    b = np.zeros(SIZE, np.int8)
    b[22], b[18], b[15], b[10] = -4, -4, -4, -3  # the opponent: 15, none on its low points
    b[MY_OFF], b[1], b[8], b[13], b[20] = 8, 3, 2, 1, 1
    assert has_contact(b) and crashed(b)
    b[1], b[3] = 1, 2
    assert not crashed(b) and not crashed(flip(b))
    b[1], b[2], b[3] = 0, 3, 0
    assert crashed(b) and crashed(flip(b))
    b[2], b[3] = 1, 2
    assert not crashed(b)
    b[OPP_OFF], b[22], b[18], b[15], b[10] = 11, -2, -2, 0, 0
    assert crashed(b)
