"""Proof that the reference move generator (tests/reference.py) is right.

The reference is the oracle for the fast move generator, so it is itself checked
against facts computed elsewhere:

- all 3600 GNU Backgammon cases of tests/data/gnubg_refset.jsonl: the set of
  resulting positions (gnubg Position IDs seen by the opponent) equals ``legal``,
  its size ``n_legal`` (0 for the 425 rolls with no play, which leave the position
  unchanged);
- all 400 Acey-Deucey cases of tests/data/acey_deucey.jsonl: ``n_outcomes``, the
  SHA-256 of the sorted outcome lines and, where given, the lines themselves
  (the 1-2 chain, the rolls-again flag, exact bear-off, bar and unentered checkers);
  the heaviest 1-2 cases (over 20,000 outcomes) are marked ``slow``;
- every outcome keeps 15 checkers a side and MY_OFF / OPP_OFF consistent;
- the per-roll opening counts and the perft totals of refdata/README.md
  (depth 1: 447, weighted 637; depth 2: 202,782, weighted 419,783);
- small hand-made positions for the binding choices of RULES.md: maximal use to the
  very end (2/1*/off with 4-1), bar before everything, Acey-Deucey exact bear-off,
  unentered checkers without a duty to enter, the 1-2 chain ending early or rolling
  again; and that the input board is not modified and bad arguments are refused.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from doublet.core.board import (
    ACEY_DEUCEY,
    CHECKERS,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_OFF,
    STANDARD,
    STARTING,
    counts,
    empty,
    flip,
    from_counts,
)
from doublet.formats.ids import board_from_position_id, position_id

try:  # the repository root on sys.path (python -m pytest)
    from tests.reference import reference_outcomes
except ModuleNotFoundError:  # only tests/ on sys.path (pytest's default rootdir-less import)
    from reference import reference_outcomes

DATA = Path(__file__).parent / "data"
SLOW_OUTCOMES = 20_000  # Acey-Deucey cases above this many outcomes take ~0.3-2.5 s each


def _load(name: str) -> list[dict]:
    with open(DATA / name) as f:
        return [json.loads(line) for line in f]


GNUBG = [
    {k: c[k] for k in ("case", "pid", "dice", "n_legal", "no_move", "legal")}
    for c in _load("gnubg_refset.jsonl")
]
ACEY = _load("acey_deucey.jsonl")


def _board(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.int8)


def _check_conservation(b: np.ndarray) -> None:
    mover, opponent = counts(b)
    assert sum(mover) + int(b[MY_OFF]) == CHECKERS
    assert sum(opponent) + int(b[OPP_OFF]) == CHECKERS


def _outcome_line(raw: bytes, again: bool) -> str:
    """refdata/README.md: '<mover hex26>|<opponent hex26>|<again>'."""
    b = _board(raw)
    _check_conservation(b)
    mover, opponent = counts(b)
    return (
        "".join(f"{n:x}" for n in mover)
        + "|"
        + "".join(f"{n:x}" for n in opponent)
        + f"|{int(again)}"
    )


def _make(mover: dict[int, int], opponent: dict[int, int]) -> np.ndarray:
    """A board from {index: count} for each side (own numbering, 0 = unentered, 25 = bar)."""
    m, o = [0] * 26, [0] * 26
    for i, n in mover.items():
        m[i] = n
    for i, n in opponent.items():
        o[i] = n
    return from_counts(m, o)


def _points(raw: bytes) -> dict[int, int]:
    """The mover's checkers on points 1..24 of an outcome."""
    b = _board(raw)
    return {p: int(b[p]) for p in range(1, 25) if b[p] > 0}


# ---------------------------------------------------------------------------
# GNU Backgammon reference set (standard rules)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", GNUBG, ids=[f"case{c['case']}" for c in GNUBG])
def test_gnubg_refset(case: dict) -> None:
    board = board_from_position_id(case["pid"])
    d1, d2 = case["dice"]
    outcomes = reference_outcomes(board, d1, d2, STANDARD)
    assert not any(again for _, again in outcomes)
    for raw, _ in outcomes:
        _check_conservation(_board(raw))
    ids = sorted(position_id(flip(_board(raw))) for raw, _ in outcomes)
    assert ids == case["legal"]
    if case["no_move"]:  # n_legal counts plays: none; the one entry is the unchanged position
        assert case["n_legal"] == 0
        assert outcomes == {(board.tobytes(), False)}
    else:
        assert len(ids) == case["n_legal"]


# ---------------------------------------------------------------------------
# Acey-Deucey reference set
# ---------------------------------------------------------------------------


def _acey_param(i: int, case: dict):
    marks = [pytest.mark.slow] if case["n_outcomes"] > SLOW_OUTCOMES else []
    d1, d2 = case["dice"]
    return pytest.param(case, marks=marks, id=f"ad{i}-{d1}{d2}-n{case['n_outcomes']}")


@pytest.mark.parametrize("case", [_acey_param(i, c) for i, c in enumerate(ACEY)])
def test_acey_deucey(case: dict) -> None:
    pos = case["position"]
    assert pos["variant"] == "acey-deucey"
    board = from_counts(pos["mover"], pos["opponent"])
    d1, d2 = case["dice"]
    outcomes = reference_outcomes(board, d1, d2, ACEY_DEUCEY)
    lines = sorted(_outcome_line(raw, again) for raw, again in outcomes)
    assert len(lines) == case["n_outcomes"]
    if "outcomes" in case:
        assert lines == case["outcomes"]
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    assert digest == case["outcomes_sha256"]
    if {d1, d2} != {1, 2}:
        assert not any(again for _, again in outcomes)


def test_acey_deucey_data_has_slow_and_fast_cases() -> None:
    """The default run keeps most of the Acey-Deucey set, 1-2 rolls included."""
    fast = [c for c in ACEY if c["n_outcomes"] <= SLOW_OUTCOMES]
    assert len(fast) >= 380
    assert sum(1 for c in fast if sorted(c["dice"]) == [1, 2]) >= 40


# ---------------------------------------------------------------------------
# Counts from the starting position (refdata/README.md)
# ---------------------------------------------------------------------------

OPENING = {
    (2, 1): 15, (3, 1): 16, (4, 1): 14, (5, 1): 8, (6, 1): 10, (3, 2): 17, (4, 2): 18,
    (5, 2): 8, (6, 2): 14, (4, 3): 17, (5, 3): 9, (6, 3): 14, (5, 4): 9, (6, 4): 14,
    (6, 5): 7, (1, 1): 42, (2, 2): 75, (3, 3): 73, (4, 4): 52, (5, 5): 4, (6, 6): 11,
}  # fmt: skip


def _weight(roll: tuple[int, int]) -> int:
    return 1 if roll[0] == roll[1] else 2


@pytest.mark.parametrize("roll", sorted(OPENING))
def test_opening_roll_counts(roll: tuple[int, int]) -> None:
    n = len(reference_outcomes(STARTING, *roll, STANDARD))
    assert n == OPENING[roll]
    assert n == len(reference_outcomes(STARTING, roll[1], roll[0], STANDARD))


def test_perft_depth_1() -> None:
    sizes = {roll: len(reference_outcomes(STARTING, *roll, STANDARD)) for roll in OPENING}
    assert sum(sizes.values()) == 447
    assert sum(_weight(r) * n for r, n in sizes.items()) == 637


def test_perft_depth_2() -> None:
    plain = weighted = 0
    for first in OPENING:
        for raw, _ in reference_outcomes(STARTING, *first, STANDARD):
            reply = flip(_board(raw))
            for second in OPENING:
                n = len(reference_outcomes(reply, *second, STANDARD))
                plain += n
                weighted += _weight(first) * _weight(second) * n
    assert plain == 202_782
    assert weighted == 419_783


# ---------------------------------------------------------------------------
# Hand-made positions for the binding choices of RULES.md
# ---------------------------------------------------------------------------


def test_maximal_use_to_the_very_end() -> None:
    """One checker on the 2 point, an opposing blot on the 1 point, 4-1: only 2/1*/off."""
    board = _make({2: 1}, {24: 1, 6: 14})
    outcomes = reference_outcomes(board, 4, 1, STANDARD)
    assert len(outcomes) == 1
    ((raw, again),) = outcomes
    after = _board(raw)
    assert not again
    assert after[MY_OFF] == CHECKERS
    assert after[0] == -1  # the blot was hit and sits on the opponent's bar
    assert after[1] == 0


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_bar_checker_blocks_every_other_move(variant: int) -> None:
    """A checker on the bar that cannot enter (19 and 20 closed) loses the whole 6-5."""
    board = _make({25: 1, 10: 14}, {5: 2, 6: 2, 1: 11})
    assert reference_outcomes(board, 6, 5, variant) == {(board.tobytes(), False)}


def test_standard_bear_off_from_highest_point() -> None:
    board = _make({3: 5, 2: 5, 1: 5}, {1: 15})
    outcomes = reference_outcomes(board, 6, 5, STANDARD)
    assert [_points(raw) for raw, _ in outcomes] == [{3: 3, 2: 5, 1: 5}]


def test_acey_deucey_bears_off_with_exact_numbers_only() -> None:
    board = _make({3: 5, 2: 5, 1: 5}, {0: 15})
    assert reference_outcomes(board, 6, 5, ACEY_DEUCEY) == {(board.tobytes(), False)}
    # 3-1 takes one checker from the 3 point and one from the 1 point, nothing else
    outcomes = reference_outcomes(board, 3, 1, ACEY_DEUCEY)
    assert [_points(raw) for raw, _ in outcomes] == [{3: 4, 2: 5, 1: 4}]
    # 6-3: the 6 is lost, the 3 still bears off (no moving 3/x inside the board)
    outcomes = reference_outcomes(board, 6, 3, ACEY_DEUCEY)
    assert [_points(raw) for raw, _ in outcomes] == [{3: 4, 2: 5, 1: 5}]


def test_acey_deucey_unentered_checkers_need_not_enter() -> None:
    board = _make({0: 14, 10: 1}, {0: 15})
    outcomes = reference_outcomes(board, 6, 5, ACEY_DEUCEY)
    got = sorted(sorted((p, n) for p, n in _points(raw).items()) for raw, _ in outcomes)
    assert got == sorted(
        [
            [(4, 1), (20, 1)],  # 10/4 and enter on 20
            [(5, 1), (19, 1)],  # 10/5 and enter on 19
            [(10, 1), (19, 1), (20, 1)],  # enter two checkers
            [(10, 1), (14, 1)],  # one checker enters and moves on
        ]
    )


def test_acey_deucey_1_2_that_cannot_be_played_in_full_ends_the_turn() -> None:
    """All home: the 2 bears off from the 2 point, the 1 has no checker on its point."""
    board = _make({3: 1, 2: 1}, {0: 15})
    outcomes = reference_outcomes(board, 1, 2, ACEY_DEUCEY)
    assert [(_points(raw), again) for raw, again in outcomes] == [({3: 1}, False)]


def test_acey_deucey_1_2_chain_rolls_again_after_a_full_doublet() -> None:
    """1-2 bears off from the 1 and 2 points; 6-6 then bears off four of the five on the 6
    point and rolls again; any other doublet cannot be played at all, so the turn ends."""
    board = _make({6: 5, 2: 1, 1: 1}, {0: 15})
    outcomes = reference_outcomes(board, 2, 1, ACEY_DEUCEY)
    got = {(tuple(sorted(_points(raw).items())), again) for raw, again in outcomes}
    assert got == {(((6, 1),), True), (((6, 5),), False)}


def test_acey_deucey_chain_ends_with_the_game() -> None:
    """The side that bears off all 15 wins (RULES.md): a 6-6 that bears off the last four
    does not roll again, and a 1 and 2 that bear off the last two are followed by no
    doublet at all."""
    board = _make({6: 4, 2: 1, 1: 1}, {0: 15})
    outcomes = reference_outcomes(board, 2, 1, ACEY_DEUCEY)
    got = {(tuple(sorted(_points(raw).items())), again) for raw, again in outcomes}
    assert got == {((), False), (((6, 4),), False)}
    board = _make({2: 1, 1: 1}, {0: 15})
    outcomes = reference_outcomes(board, 2, 1, ACEY_DEUCEY)
    assert [(_points(raw), again) for raw, again in outcomes] == [({}, False)]


def test_acey_deucey_start_enters_from_the_unentered_pile() -> None:
    board = empty()
    board[MY_OUT] = CHECKERS
    board[29] = CHECKERS
    outcomes = reference_outcomes(board, 5, 3, ACEY_DEUCEY)
    got = sorted(tuple(sorted(_points(raw).items())) for raw, _ in outcomes)
    assert got == [((17, 1),), ((20, 1), (22, 1))]
    for raw, _ in outcomes:
        assert _board(raw)[MY_BAR] == 0


def test_input_board_is_not_modified() -> None:
    board = STARTING.copy()
    reference_outcomes(board, 6, 6, STANDARD)
    assert np.array_equal(board, STARTING)


@pytest.mark.parametrize(("dice", "variant"), [((0, 3), STANDARD), ((7, 1), STANDARD), ((3, 1), 2)])
def test_bad_arguments_are_refused(dice: tuple[int, int], variant: int) -> None:
    with pytest.raises(ValueError):
        reference_outcomes(STARTING, *dice, variant)
