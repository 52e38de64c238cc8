"""doublet.formats.matfile: GNU Backgammon's .mat files read and replayed through the
rules. The four matches of tests/data/matches (written by gnubg 1.07) replay move by
move, their score lines add up, and each player's number of moves is the "Total moves"
of gnubg's own statistics of the match; broken files are refused with the game, move,
player and text named."""

from __future__ import annotations

import re

import pytest

from doublet.core.errors import MatchFileError
from doublet.formats.matfile import parse_mat, read_match, to_doublet_notation
from tests.helpers import DATA

MATCHES = sorted((DATA / "matches").glob("*.mat"))


def _total_moves(stats: str) -> tuple[int, int]:
    m = re.search(r"Total moves\s+(\d+)\s+(\d+)", stats)
    assert m
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("path", MATCHES, ids=lambda p: p.stem)
def test_gnubgs_matches_replay(path) -> None:  # type: ignore[no-untyped-def]
    match, games = read_match(path.read_text())
    assert match.names == ("gnubg", "root") and match.length in (5, 9)
    score = [0, 0]
    for g in games:
        assert g.score == tuple(score)
        score[g.winner] += g.points
    assert max(score) >= match.length  # the match is won
    moves = [sum(1 for g in games for mv in g.moves if mv.player == p) for p in (0, 1)]
    assert tuple(moves) == _total_moves(path.with_suffix(".stats.txt").read_text())


def test_notation() -> None:
    assert to_doublet_notation("25/20* 6/0") == "bar/20* 6/off"
    assert to_doublet_notation("13/7 8/7") == "13/7 8/7"


GOOD = """; [Player 1 "a"]

 3 point match

 Game 1
 a : 0                          b : 0
  1) 31: 8/5 6/5                 52: 13/8 13/11
  2)  Doubles => 2                Drops
      Wins 1 point
"""


def test_a_small_hand_made_match() -> None:
    m, games = read_match(GOOD)
    assert m.tags == {"Player 1": "a"} and m.length == 3
    g = games[0]
    assert [mv.play for mv in g.moves] == ["8/5 6/5", "13/11 13/8"]
    assert (
        g.winner == 0 and g.points == 1 and [a.kind for a in g.cube_actions] == ["double", "drop"]
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (GOOD.replace("8/5 6/5", "8/4 6/5"), "game 1, move 1, player 0: '31: 8/4 6/5'"),
        (GOOD.replace("8/5 6/5", "8/x 6/5"), "game 1, move 1, player 0"),
        (GOOD.replace("Doubles => 2", "Doubles => 4"), "not 4"),
        (GOOD.replace("Wins 1 point", "Wins 2 points"), "wins 1 point"),
        (GOOD.replace(" 3 point match", " three point match"), "point match"),
        (GOOD.replace("52: 13/8 13/11", "72: 13/8 13/11"), "not a roll"),
        (
            GOOD.replace("  2)  Doubles => 2                Drops\n      Wins 1 point\n", ""),
            "before anyone has won",
        ),
        (GOOD.replace("  1) 31: 8/5 6/5", "  1) 31: 8/5 6/5 junk here"), "game 1, move 1"),
    ],
)
def test_broken_files_name_the_game_the_move_and_the_text(text: str, words: str) -> None:
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(text)


def test_no_double_in_the_crawford_game() -> None:
    # A 2-point match: game 1 is won for 1 point, so a needs 1 and game 2 is the
    # Crawford game, in which nobody may double.
    crawford = GOOD.replace(" 3 point match", " 2 point match")
    crawford += """
 Game 2
 a : 1                          b : 0
  1)  Doubles => 2                Takes
"""
    with pytest.raises(MatchFileError, match="Crawford"):
        read_match(crawford)


@pytest.mark.parametrize("path", MATCHES, ids=lambda p: p.stem)
def test_gnubgs_sgf_replays_as_its_mat(path) -> None:  # type: ignore[no-untyped-def]
    mat_match, mat_games = read_match(path.read_text())
    sgf_match, sgf_games = read_match(path.with_suffix(".sgf").read_text())
    assert (sgf_match.length, sgf_match.names) == (mat_match.length, mat_match.names)

    def summary(games):  # type: ignore[no-untyped-def]
        return [(g.score, g.winner, g.points, g.resigned,
                 [(m.player, m.dice, m.play) for m in g.moves],
                 [(a.player, a.kind, a.value) for a in g.cube_actions]) for g in games]  # fmt: skip

    assert summary(sgf_games) == summary(mat_games)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("(;FF[4]GM[1]SZ[19])", "GM[6]"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];W[31hefe];B[99])", "not a move"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];W[31hcfe])", "game 1, move 1, player 0"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0]RE[W+1x];W[31hefe])", "RE[W+1x]"),
    ],
)
def test_broken_sgf_files(text: str, words: str) -> None:
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(text)


@pytest.mark.parametrize("path", MATCHES[:2], ids=lambda p: p.stem)
def test_a_review_counts_gnubgs_unforced_moves(path) -> None:  # type: ignore[no-untyped-def]
    from doublet.games.review import review

    match, games = read_match(path.read_text())
    doc = review(match, games, ply=0)
    stats = path.with_suffix(".stats.txt").read_text()
    m = re.search(r"Unforced moves\s+(\d+)\s+(\d+)", stats)
    assert m
    players = doc["players"]
    unforced = (players[0]["unforced_moves"], players[1]["unforced_moves"])
    assert unforced == (int(m.group(1)), int(m.group(2)))
    for p in players:
        assert p["checker_error"] >= 0 and p["cube_error"] >= 0
        assert p["error_rate_memg"] >= 0 and p["pr"] == pytest.approx(
            p["error_rate_memg"] / 2, abs=0.02
        )
    losses = [e["loss"] for e in doc["errors"]]
    assert all(x > 0 for x in losses)
    total = sum(e["loss"] for e in doc["errors"] if e["player"] == 0)
    assert total == pytest.approx(players[0]["checker_error"] + players[0]["cube_error"], abs=1e-4)


@pytest.mark.parametrize("path", MATCHES, ids=lambda p: p.stem)
@pytest.mark.parametrize("ext", [".mat", ".sgf"])
def test_written_matches_read_back_the_same(path, ext: str) -> None:  # type: ignore[no-untyped-def]
    from doublet.formats.matfile import parse_sgf, write_mat

    text = path.with_suffix(ext).read_text()
    m = parse_mat(text) if ext == ".mat" else parse_sgf(text)
    back = parse_mat(write_mat(m))

    def key(x, numbers: bool):  # type: ignore[no-untyped-def]
        def act(a):  # type: ignore[no-untyped-def]
            return (a.number if numbers else 0, a.player, a.kind, a.dice, a.play, a.value)

        return (x.length, [(g.number, g.names, g.score, [act(a) for a in g.actions])
                           for g in x.games])  # fmt: skip

    # A .mat file comes back line for line; an .sgf's actions get .mat line numbers.
    assert key(back, ext == ".mat") == key(m, ext == ".mat")


def _random_match(seed: int, games: int = 3):  # type: ignore[no-untyped-def]
    """A money session of random legal games, each ended by a bear-off or a drop."""
    import random as rnd

    import numpy as np

    from doublet.core import board as B
    from doublet.formats.matfile import MatAction, MatGame, MatMatch, to_mat_notation
    from doublet.formats.notation import describe_outcomes
    from doublet.rules.movegen import legal_outcomes

    rng = rnd.Random(seed)
    out = []
    for k in range(1, games + 1):
        board, player, actions, n = B.starting(), 0, [], 0
        cube, owner = 1, -1
        while True:
            n += 1
            if rng.random() < 0.03 and cube < 8 and owner in (-1, player):  # a double
                actions.append(MatAction(k, n, player, "double", value=2 * cube))
                if rng.random() < 0.5:
                    actions.append(MatAction(k, n, 1 - player, "drop"))
                    actions.append(MatAction(k, 0, player, "wins", value=cube))
                    break
                actions.append(MatAction(k, n, 1 - player, "take"))
                cube, owner = 2 * cube, 1 - player
                n += 1
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
            boards, again = legal_outcomes(board, d1, d2, B.STANDARD)
            texts = describe_outcomes(board, boards, again, d1, d2, B.STANDARD)
            i = rng.randrange(len(boards))
            actions.append(MatAction(k, n, player, "move", (d1, d2), to_mat_notation(texts[i])))
            board = np.array(boards[i])
            if B.outcome(board):
                actions.append(
                    MatAction(k, 0, player, "wins", value=abs(int(B.outcome(board))) * cube)
                )
                break
            board, player = B.flip(board), 1 - player
        out.append(MatGame(k, ("a", "b"), (0, 0), actions))
    return MatMatch(0, {}, out)


@pytest.mark.parametrize("seed", range(6))
def test_random_matches_round_trip(seed: int) -> None:
    from doublet.formats.matfile import replay, write_mat

    m = _random_match(seed)
    games = replay(m)  # every random move is legal, so it replays
    back = parse_mat(write_mat(m))
    again = replay(back)
    assert [[(mv.player, mv.dice, mv.play) for mv in g.moves] for g in again] == [
        [(mv.player, mv.dice, mv.play) for mv in g.moves] for g in games
    ]
    assert [(g.winner, g.points) for g in again] == [(g.winner, g.points) for g in games]
