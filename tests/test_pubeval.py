"""pubeval (doublet.nn.pubeval) against a plain-Python pubeval written here straight
from refdata/README.md, on 300 standard and 100 Acey-Deucey positions from random games
plus the 300 race positions of gnubg_race.jsonl (race weights), all with random dice:
the same play and the same scores; a play bearing off the last checker wins outright.
"""

from __future__ import annotations

import math

import numpy as np

from doublet.core.board import (
    ACEY_DEUCEY,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    OPP_OUT,
    STANDARD,
)
from doublet.formats.ids import board_from_position_id
from doublet.nn.pubeval import load_weights, pubeval_choose, pubeval_score
from doublet.rules.movegen import legal_outcomes
from tests.helpers import DATA, load_jsonl, pos, random_positions

WEIGHTS = load_weights(DATA / "pubeval_weights.json")


# --------------------------------------------------------------------------------------
# A plain-Python pubeval, from refdata/README.md
# --------------------------------------------------------------------------------------


def plain_inputs(b: np.ndarray) -> list[float]:
    """The 122 inputs of the position after the play, mover's view. Acey-Deucey (our
    documented extension): the opponent's unentered checkers count as on the bar."""
    x = [0.0] * 122
    for j in range(1, 25):
        n = int(b[25 - j])
        k = 5 * (j - 1)
        if n == -1:
            x[k] = 1.0
        if n == 1:
            x[k + 1] = 1.0
        if n >= 2:
            x[k + 2] = 1.0
        if n == 3:
            x[k + 3] = 1.0
        if n >= 4:
            x[k + 4] = (n - 3) / 2.0
    x[120] = (-int(b[OPP_BAR]) + int(b[OPP_OUT])) / 2.0
    x[121] = int(b[MY_OFF]) / 15.0
    return x


def plain_contact(b: np.ndarray) -> bool:
    """Some mover checker (bar and unentered: 25) lies above some opponent checker
    (bar and unentered: 0)."""
    mine = [25] * (int(b[MY_BAR]) + int(b[MY_OUT])) + [p for p in range(1, 25) if b[p] > 0]
    theirs = [0] * (-int(b[OPP_BAR]) + int(b[OPP_OUT])) + [p for p in range(1, 25) if b[p] < 0]
    return bool(mine) and bool(theirs) and max(mine) > min(theirs)


def plain_score(after: np.ndarray, race: bool) -> float:
    if after[MY_OFF] == 15:
        return math.inf
    w = WEIGHTS.race if race else WEIGHTS.contact
    s = 0.0
    for wi, xi in zip(w.tolist(), plain_inputs(after), strict=True):
        s += wi * xi  # in input order, like the C code
    return s


def plain_choose(before: np.ndarray, d1: int, d2: int, variant: int) -> int:
    """First outcome with the highest score."""
    boards, _ = legal_outcomes(before, d1, d2, variant)
    race = not plain_contact(before)
    scores = [plain_score(a, race) for a in boards]
    return scores.index(max(scores))


def _cases() -> list[tuple[str, np.ndarray, int, int, int]]:
    rng = np.random.default_rng(7)
    cases = []
    for variant, n in ((STANDARD, 300), (ACEY_DEUCEY, 100)):
        for i, b in enumerate(random_positions(n, variant, seed=11)):
            d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
            cases.append((f"{variant}-{i}", b, d1, d2, variant))
    for row in load_jsonl("gnubg_race.jsonl"):
        d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
        cases.append((f"race-{row['case']}", board_from_position_id(row["pid"]), d1, d2, 0))
    return cases


CASES = _cases()


def test_cases_cover_both_weight_sets() -> None:
    races = sum(not plain_contact(b) for _, b, _, _, _ in CASES)
    assert 300 <= races < len(CASES)


def test_pubeval_matches_plain_python() -> None:
    wrong = []
    for name, b, d1, d2, variant in CASES:
        got = pubeval_choose(b, d1, d2, variant, WEIGHTS)
        want = plain_choose(b, d1, d2, variant)
        if got != want:
            wrong.append((name, d1, d2, got, want))
    assert not wrong, wrong[:5]


def test_pubeval_scores_match_plain_python() -> None:
    for _, b, d1, d2, variant in CASES[::7]:
        race = not plain_contact(b)
        for after in legal_outcomes(b, d1, d2, variant)[0]:
            want = plain_score(after, race)
            got = pubeval_score(after, race, WEIGHTS)
            assert got == want or (math.isinf(want) and got > 1e20)


def test_bearing_off_the_last_checker_beats_every_other_play() -> None:
    # Mover: 6 and 1 point; 6-5 plays 6/off 1/off (all off) or 6/1 1/off (one left).
    b = pos({6: 1, 1: 1}, {24: 15})
    boards, _ = legal_outcomes(b, 6, 5)
    assert len(boards) == 2
    assert boards[pubeval_choose(b, 6, 5, STANDARD, WEIGHTS)][MY_OFF] == 15
