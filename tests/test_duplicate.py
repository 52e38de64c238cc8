"""Duplicate-dice matches (doublet.games.duplicate and doublet.games.duplicate_search).

- pubeval beats the random player by a wide margin over 200 duplicate games
  (measured ppg 2.46 +- 0.05 with seed 1; the test asks for > 1.5 and a win rate > 90 %);
- a deterministic player against itself with duplicate dice scores exactly 0 (pubeval
  and a net): the two games of each pair mirror each other;
- a seed gives the same games (whatever the chunking); another seed other games;
- play_game records the same game as play_match, and its record replays through
  legal_outcomes to the recorded result (standard and Acey-Deucey, 1-2 chains included);
- the standard error comes from pair sums (a hand-computed case) and the rates add up;
- Acey-Deucey matches run to completion; odd game counts are refused;
- doublet.games.duplicate_search: a chooser factory in a seat plays the very games of its spec, in
  one process and in two spawned workers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from doublet.core.board import (
    ACEY_DEUCEY,
    STANDARD,
    flip,
    outcome,
)
from doublet.games.duplicate import (
    GameRecord,
    MatchPlayer,
    MatchResult,
    net_player,
    play_game,
    play_match,
    ppg_and_se,
    pubeval_player,
    random_player,
)
from doublet.nn.eval import random_model
from doublet.nn.pubeval import load_weights
from doublet.rules.movegen import legal_outcomes
from tests.helpers import DATA

WEIGHTS = load_weights(DATA / "pubeval_weights.json")


# --------------------------------------------------------------------------------------
# Matches
# --------------------------------------------------------------------------------------


def test_pubeval_beats_random_by_a_wide_margin() -> None:
    r = play_match(pubeval_player(), random_player(), 200, seed=1)
    assert r.errors == 0
    assert r.ppg > 1.5, (r.ppg, r.se)  # measured 2.46 +- 0.05; a random player gets ~0
    assert r.win_rate > 0.9
    mirrored = play_match(random_player(), pubeval_player(), 200, seed=1)
    assert mirrored.ppg < -1.5


@pytest.mark.parametrize("player", [pubeval_player(), net_player(random_model(8, seed=3))],
                         ids=["pubeval", "net"])  # fmt: skip
def test_deterministic_player_against_itself_scores_exactly_zero(player: MatchPlayer) -> None:
    r = play_match(player, player, 100, seed=5)
    assert r.ppg == 0.0 and r.se == 0.0
    assert (r.points[0::2] == -r.points[1::2]).all()
    assert (r.points != 0).all()  # every game decided
    assert r.gammon_rate[0] == r.gammon_rate[1]


def test_same_seed_same_games() -> None:
    a, b = random_player(), pubeval_player()
    r1 = play_match(a, b, 40, seed=3)
    r2 = play_match(a, b, 40, seed=3, chunk_pairs=3)
    assert (r1.points == r2.points).all() and (r1.turns == r2.turns).all()
    r3 = play_match(a, b, 40, seed=4)
    assert (r1.turns != r3.turns).any()


def test_random_against_random_is_even_and_seeded() -> None:
    r = play_match(random_player(), random_player(), 200, seed=2)
    assert r.errors == 0 and abs(r.ppg) < 4 * r.se + 0.05
    assert (r.points != play_match(random_player(), random_player(), 200, seed=9).points).any()


def _replay(g: GameRecord, variant: int) -> None:
    """Walk the record through legal_outcomes; the last play ends the game."""
    for t, (b, (d1, d2), k) in enumerate(g.steps()):
        boards, again = legal_outcomes(b, d1, d2, variant)
        assert 0 <= k < len(boards)
        after = boards[k]
        if t + 1 == len(g.choices):
            r = outcome(after)
            assert r != 0 and g.result == (r if g.seats[t] == 0 else -r)
        else:
            assert outcome(after) == 0
            nxt = after if again[k] else flip(after)
            assert (g.boards[t + 1] == nxt).all()
            assert g.seats[t + 1] == (g.seats[t] if again[k] else 1 - g.seats[t])


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY], ids=["standard", "acey-deucey"])
def test_play_game_is_the_match_game_and_replays(variant: int) -> None:
    a, b = pubeval_player(), random_player()
    games = 6 if variant == STANDARD else 4  # Acey-Deucey's 1-2 rolls are slow to replay
    r = play_match(a, b, games, seed=8, variant=variant)
    for game in range(games):
        g = play_game(a, b, seed=8, pair=game // 2, swapped=bool(game % 2), variant=variant)
        assert not g.error
        assert g.points_a == r.points[game] and len(g.choices) == r.turns[game]
        lo, hi = g.opening
        assert lo != hi and g.seats[0] == (0 if lo > hi else 1)
        if variant == STANDARD:
            assert tuple(g.dice[0]) == g.opening
        _replay(g, variant)
    # Both games of a pair share the dice: the same opening throws.
    assert play_game(a, b, 8, 1).opening == play_game(a, b, 8, 1, swapped=True).opening


def test_acey_deucey_match_runs_to_completion() -> None:
    # Few games: a 1-2 roll has ~15,000 outcomes in mid-game (tens of ms to generate).
    for a, b, n in ((pubeval_player(), random_player(), 10), (random_player(), random_player(), 4)):
        r = play_match(a, b, n, seed=1, variant=ACEY_DEUCEY)
        assert r.games == n and r.errors == 0 and (r.points != 0).all()
        assert (r.turns > 0).all()


def test_standard_error_comes_from_pair_sums() -> None:
    points = [1, -1, 2, 0, -1, 3, 1, 1]  # pair sums 0, 2, 2, 2
    ppg, se = ppg_and_se(points)
    assert ppg == 0.75
    assert se == pytest.approx(0.25)  # sd(0, 2, 2, 2) = 1 (ddof 1), / (2 sqrt(4))
    r = MatchResult.from_points(points)
    assert (r.games, r.ppg, r.win_rate) == (8, 0.75, 5 / 8)
    assert r.gammon_rate == (2 / 8, 0.0) and r.backgammon_rate == (1 / 8, 0.0)
    assert math.isnan(ppg_and_se([2, -1])[1])
    with pytest.raises(ValueError):
        ppg_and_se([1, 2, 3])


def test_odd_number_of_games_is_refused() -> None:
    with pytest.raises(ValueError, match="even"):
        play_match(pubeval_player(), random_player(), 7, seed=1)


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_python_game_loop_plays_the_kernel_games(variant: int) -> None:
    from doublet.games.duplicate_search import play_match_with

    # The same dice streams and choices: identical games, point for point, roll for roll.
    fast = play_match(pubeval_player(), random_player(), 12, 21, variant)
    slow = play_match_with("pubeval", "random", 12, 21, variant)
    assert np.array_equal(fast.points, slow.points)
    assert np.array_equal(fast.turns, slow.turns)


def test_search_matches_do_not_depend_on_the_workers() -> None:
    from doublet.games.duplicate_search import play_match_with

    one = play_match_with("search:0", "pubeval", 8, 3, chunk_pairs=1)
    two = play_match_with("search:0", "pubeval", 8, 3, chunk_pairs=2, workers=2)
    assert np.array_equal(one.points, two.points)
    assert np.array_equal(one.turns, two.turns)


def _pubeval_factory(variant: int):  # module level: it pickles into spawned workers
    from doublet.games.duplicate_search import player

    return player("pubeval", variant)


def test_a_chooser_factory_plays_the_games_of_its_spec() -> None:
    from doublet.games.duplicate_search import play_match_with

    spec = play_match_with("search:0", "pubeval", 8, 5, chunk_pairs=2)
    one = play_match_with("search:0", _pubeval_factory, 8, 5, chunk_pairs=2)
    two = play_match_with("search:0", _pubeval_factory, 8, 5, chunk_pairs=2, workers=2)
    for r in (one, two):
        assert np.array_equal(spec.points, r.points)
        assert np.array_equal(spec.turns, r.turns)


def test_bad_search_specs_are_refused() -> None:
    from doublet.games.duplicate_search import player

    for spec in ("search:9", "search:x", "pubeval:3", "nobody"):
        with pytest.raises(ValueError):
            player(spec, STANDARD)
