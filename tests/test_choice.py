"""doublet.search.choice, the one chooser: its ranking puts the deepest-searched plays
first by equity (ties to the lower index); its best play is the ranking's first and the
search kernel's own pick (Searcher.best) on refset positions at 0, 1 and 2 ply; choose
returns that play's board; the front ends' depth policy caps Acey-Deucey."""

from __future__ import annotations

import numpy as np
import pytest

from doublet.core.board import ACEY_DEUCEY, STANDARD
from doublet.formats.ids import board_from_position_id
from doublet.nn.eval import default_model, equity
from doublet.search.choice import (
    MAX_PLAY_PLY,
    best_index,
    choose,
    engine_depth,
    ranking,
)
from doublet.search.searcher import MAX_PLY, Limits, Searcher
from tests.helpers import load_jsonl


def _probs(equities: list[float]) -> np.ndarray:
    """Probabilities with the given cubeless equities (no gammons: e = 2 w - 1)."""
    p = np.zeros((len(equities), 5), np.float32)
    p[:, 0] = [(e + 1) / 2 for e in equities]
    return p


def test_ranking_puts_the_deepest_first_then_equity_then_index() -> None:
    probs = _probs([0.5, 0.1, 0.3, 0.3, 0.9])
    plies = np.array([2, 2, 2, 2, 0])
    assert ranking(probs, plies) == [0, 2, 3, 1, 4]  # the 0-ply 0.9 comes last
    assert best_index(probs, plies) == 0
    assert ranking(probs, np.zeros(5, np.int64)) == [4, 0, 2, 3, 1]
    assert best_index(probs, np.zeros(5, np.int64)) == 4


def test_ties_go_to_the_lower_index() -> None:
    probs = _probs([0.2, 0.2, 0.2])
    assert ranking(probs, np.ones(3, np.int64)) == [0, 1, 2]
    assert best_index(probs, np.ones(3, np.int64)) == 0


@pytest.mark.parametrize("ply", [0, 1, 2])
def test_best_is_the_search_kernels_pick_and_the_rankings_first(ply: int) -> None:
    s = Searcher(default_model(STANDARD))
    for case in load_jsonl("gnubg_refset.jsonl")[:: 120 if ply == 2 else 40]:
        b = board_from_position_id(case["pid"])
        d1, d2 = case["dice"]
        boards, again, probs, plies = s.analyse(b, d1, d2, Limits(ply=ply))
        i = best_index(probs, plies)
        assert i == ranking(probs, plies)[0] == s.best(b, d1, d2, Limits(ply=ply))
        deepest = plies == plies.max()
        assert equity(probs[i]) == pytest.approx(float(np.max(equity(probs[deepest]))))
        after, again_i = choose(s, b, d1, d2, ply)
        assert np.array_equal(after, boards[i]) and again_i == bool(again[i])


def test_engine_depth_caps_acey_deucey() -> None:
    assert engine_depth(STANDARD, 2, (2, 1)) == 2
    assert engine_depth(STANDARD, 3, (6, 6)) == 3
    assert engine_depth(ACEY_DEUCEY, 2, (2, 1)) == 0
    assert engine_depth(ACEY_DEUCEY, 1, (1, 2)) == 0
    assert engine_depth(ACEY_DEUCEY, 2, (6, 5)) == 1
    assert engine_depth(ACEY_DEUCEY, 0, (6, 5)) == 0
    assert MAX_PLAY_PLY <= MAX_PLY
