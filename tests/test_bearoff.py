"""The exact bear-off database (doublet.rules.bearoff).

- ranks: every one-sided position of up to 15 checkers on 6 points has a distinct rank
  in [0, 54264), and the board ranker agrees with the enumeration;
- the two-sided figures match gnubg's exact bearoff2 database (tests/data/gnubg_race.jsonl,
  100 cases) to within 0.001 in P(win) (the issue's bound; measured ~4e-5);
- the one-sided combination matches gnubg's bearoff1 evaluations (100 cases) to 1e-4,
  gammons included;
- distributions sum to 1, and the database survives a save/load round trip;
- the ZONE table (turns for a side's checkers to leave the other side's home board)
  matches tests/reference.py's zone_turns, written from the definition, on every
  position of up to 4 checkers and a sample of larger ones; and the backgammon chances
  of races it gives (doublet.search's 0 ply) match gnubg's 0-ply race evaluations
  (100 cases, 24 of them with a backgammon at stake) to 0.002.
"""

from __future__ import annotations

import numpy as np
import pytest

import doublet.rules.bearoff as bo
from doublet.core.board import STANDARD, flip
from doublet.formats.ids import board_from_position_id
from tests import reference
from tests.helpers import load_jsonl, pos

RACE = load_jsonl("gnubg_race.jsonl")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> bo.BearoffDB:
    d = bo.BearoffDB.build()
    path = tmp_path_factory.mktemp("cache") / "bearoff.npz"
    d.save(path)
    loaded = bo.BearoffDB.load(path)
    assert np.array_equal(loaded.off, d.off) and np.array_equal(loaded.two_sided, d.two_sided)
    assert np.array_equal(loaded.zone, d.zone)
    bo._DB = loaded
    return loaded


def test_ranks_are_a_bijection() -> None:
    counts = bo._unrank_all(bo._BINOM)
    assert counts.shape == (bo.N_POSITIONS, 6)
    keys = {tuple(c) for c in counts}
    assert len(keys) == bo.N_POSITIONS
    assert counts.sum(axis=1).max() == 15
    for r in (0, 1, 777, 54263):
        c = counts[r]
        b = pos({k + 1: int(n) for k, n in enumerate(c) if n}, {24: 1})
        assert bo._rank(b, 1, bo._BINOM) == r
        assert bo._rank(flip(b), -1, bo._BINOM) == r


def test_distributions_sum_to_one(db: bo.BearoffDB) -> None:
    assert np.allclose(db.off.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(db.first.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(db.zone.sum(axis=1), 1.0, atol=1e-5)


def test_zone_matches_the_reference(db: bo.BearoffDB) -> None:
    counts = bo._unrank_all(bo._BINOM)
    rng = np.random.default_rng(5)
    sample = [r for r in range(bo.N_POSITIONS) if counts[r].sum() <= 4]
    assert len(sample) == 210
    larger = [r for r in range(bo.N_POSITIONS) if 5 <= counts[r].sum() <= 7]
    sample += [int(r) for r in rng.choice(larger, 12, replace=False)]
    for r in sample:  # (the reference's sets grow too large for a test beyond 7)
        distances = tuple(k + 1 for k in range(6) for _ in range(int(counts[r, k])))
        want = reference.zone_turns(distances)
        assert np.allclose(db.zone[r], want, atol=1e-6), (distances, db.zone[r][:6], want[:6])


@pytest.mark.parametrize("case", [c for c in RACE if c["class"] == "race"],
                         ids=lambda c: c["pid"])  # fmt: skip
def test_race_backgammons_match_gnubg(db: bo.BearoffDB, case: dict) -> None:
    from doublet.nn.eval import default_model
    from doublet.search.searcher import Limits, Searcher

    b = board_from_position_id(case["pid"])
    got = Searcher(default_model()).evaluate(b, Limits(ply=0))
    want = case["eval0"]["probs"]
    assert abs(got[2] - want[2]) < 0.002 and abs(got[4] - want[4]) < 0.002, (got, want)


def test_no_backgammon_once_a_race_has_left_the_home_board(db: bo.BearoffDB) -> None:
    """In a race checkers only move forward, so a side with none of its checkers left
    in the other side's home board cannot be backgammoned: 0, not the net's near-0."""
    from doublet.nn.eval import default_model, evaluate
    from doublet.search.searcher import Limits, Searcher

    model = default_model()
    searcher = Searcher(model)
    # Neither side has a checker in the other's home board, none off.
    b = pos({12: 3, 10: 4, 9: 4, 8: 4}, {14: 5, 15: 5, 16: 5})
    net = evaluate(b, model)
    assert net[2] > 0 and net[4] > 0  # what the net alone says
    for board in (b, flip(b)):
        got = searcher.evaluate(board, Limits(ply=0))
        assert got[2] == 0.0 and got[4] == 0.0, got
        assert got[1] > 0.0 and got[3] > 0.0  # gammons stay possible (if unlikely)
    # With three checkers still on its 19 point and the opponent 3 checkers from home,
    # the mover is backgammoned when it rolls no doublet and the opponent one: 5/36.
    stuck = pos({19: 3, 10: 4, 9: 4, 8: 4}, {24: 2, 23: 1})
    assert abs(searcher.evaluate(stuck, Limits(ply=0))[4] - 5 / 36) < 1e-6


@pytest.mark.parametrize("case", [c for c in RACE if c["class"] == "bearoff2"],
                         ids=lambda c: c["pid"])  # fmt: skip
def test_two_sided_matches_gnubg_bearoff2(db: bo.BearoffDB, case: dict) -> None:
    b = board_from_position_id(case["pid"])
    assert bo.is_bearoff(b)
    assert abs(bo.bearoff_probs(b)[0] - case["eval0"]["probs"][0]) < 0.001


@pytest.mark.parametrize("case", [c for c in RACE if c["class"] == "bearoff1"],
                         ids=lambda c: c["pid"])  # fmt: skip
def test_one_sided_matches_gnubg_bearoff1(db: bo.BearoffDB, case: dict) -> None:
    b = board_from_position_id(case["pid"])
    assert np.allclose(bo.bearoff_probs(b), case["eval0"]["probs"], atol=1e-4)


def test_not_a_bearoff_is_refused() -> None:
    with pytest.raises(ValueError, match="bear-off"):
        bo.bearoff_probs(pos({13: 1}, {1: 1}))
    assert STANDARD == 0
