"""A played series written as a .mat file (doublet.games.record), or as GNU Backgammon's
.sgf (doublet.formats.matfile.write_sgf of its match), reads back with the project's
reader (doublet.formats.matfile.read_match, which replays every move through the rules
and checks the cube, the scores and the Crawford game) to the same games: the same
plays, cube actions, winners and points; GNU Backgammon 1.07 imports both files with
the same winners and points."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from doublet.core.errors import GameError
from doublet.formats.ids import position_id
from doublet.formats.matfile import read_match, to_doublet_notation, write_sgf
from doublet.formats.position import Position
from doublet.games.game import Series
from doublet.games.opponent import engine_play, engine_step
from doublet.games.record import to_mat, to_match
from tests.helpers import GNUBG, gnubg_results

DAY = datetime.date(2026, 12, 1)


def play_out(s: Series, ply: int = 0, games: int = 50) -> None:
    """Both sides are the engine at `ply`, with its cube, until the series is over."""
    for _ in range(games):
        g = s.game
        while not g.over:
            engine_step(g, ply)
        if s.over:
            s.record_result()
            return
        s.next_game()


def same(s: Series, text: str) -> None:
    match, replayed = read_match(text)
    games = [*s.history, s.game]
    assert match.length == s.length and len(replayed) == len(games)
    for g, r, m in zip(games, replayed, match.games, strict=True):
        assert m.score == g.rules.score
        plays = [t for t in g.record if t.action == "play"]
        assert [mv.player for mv in r.moves] == [t.side for t in plays]
        assert [sorted(mv.dice) for mv in r.moves] == [sorted(t.dice) for t in plays]
        for mv, t in zip(r.moves, plays, strict=True):  # the same play, board for board
            before = Position(mv.board)
            assert position_id(mv.board) == t.before
            assert before.play(to_doublet_notation(mv.play), *mv.dice).notation == t.play
        kinds = [a.kind for a in r.cube_actions]
        want = [{"pass": "drop"}.get(t.action, t.action) for t in g.record if t.action != "play"]
        assert kinds == want
        assert (r.winner, r.points) == (g.result.winner, g.result.value)


def test_a_match_to_5_with_doubles_reads_back() -> None:
    s = Series.new("standard", seed=8, length=5, cube=True)
    play_out(s)
    text = to_mat(s, date=DAY)
    assert " 5 point match" in text and " Game 1" in text and "Wins" in text
    assert "(2)" not in text and "bar" not in text and "off" not in text
    assert "Doubles => 2" in text  # seed 8: the engine doubles in this match
    same(s, text)
    same(s, write_sgf(to_match(s, date=DAY)))


def test_a_money_session_with_jacoby_reads_back() -> None:
    s = Series.new("standard", games=4, seed=3, cube=True, jacoby=True)
    play_out(s)
    text = to_mat(s, date=DAY)
    assert " 0 point match" in text and '; [Jacoby "On"]' in text
    same(s, text)
    same(s, write_sgf(to_match(s, date=DAY)))


def test_a_resignation_and_a_pass_are_written_as_gnubg_writes_them() -> None:
    s = Series.new("standard", games=2, seed=5, cube=True)
    g = s.game
    g.play(engine_play(g, 0))
    g.double()
    g.drop()
    s.next_game()
    g = s.game
    g.play(engine_play(g, 0))
    g.resign(g.turn, 2)
    text = to_mat(s, names=("alice", "bob"), date=DAY)
    lines = text.splitlines()
    assert lines[0] == '; [Site "Doublet"]' and '; [Player 1 "alice"]' in lines
    assert any("Doubles => 2" in ln for ln in lines) and any("Drops" in ln for ln in lines)
    assert sum("Wins" in ln for ln in lines) == 2
    same(s, text)
    same(s, write_sgf(to_match(s, names=("alice", "bob"), date=DAY)))


def resigned_at_once() -> Series:
    """A 5-point match whose games 1 and 2 are resigned with the dice rolled and nothing
    played: a gammon at game 1's first roll, a single game at game 2's second."""
    s = Series.new("standard", seed=4, length=5, cube=True)
    g = s.game
    assert g.dice is not None and not g.record  # the opening roll, to play
    g.resign(g.turn, 2)
    s.next_game()
    g = s.game
    g.play(engine_play(g, 0))
    g.roll()
    g.resign(g.turn, 1)
    return s


def test_a_game_resigned_with_the_dice_rolled_keeps_its_roll() -> None:
    """Found by a review (session 43): a game resigned at its first roll was written as a
    Wins alone, from which GNU Backgammon reads no winner (the match score then differs
    by the game's points), and gnubg's own layout of a roll followed by a resignation
    ("54:       Wins 2 points", one column) did not read here. The roll is kept with the
    result and written before the Wins, as gnubg writes it; both layouts read, to the
    same series."""
    from doublet.formats.matfile import parse_mat
    from doublet.games.record import from_match

    s = resigned_at_once()
    first = s.history[0].result
    assert first is not None and first.roll is not None and first.roll[0] == s.history[0].turn
    text = to_mat(s, date=DAY)
    same(s, text)
    same(s, write_sgf(to_match(s, date=DAY)))
    back = from_match(parse_mat(text))
    games = [*s.history, s.game]
    assert [r.roll for r in back.results] == [g.result.roll for g in games]  # type: ignore[union-attr]
    assert back.score == [sum(g.result.value for g in games if g.result.winner == k)  # type: ignore[union-attr]
                          for k in (0, 1)]  # fmt: skip
    gnubg = (
        " 3 point match\n\n Game 1\n gnubg : 0                      root : 0\n"
        "  1) 54:       Wins 2 points\n\n Game 2\n gnubg : 2                      root : 0\n"
        "  1) 62:                         Wins 1 point\n"
    )  # gnubg 1.07's export
    back = from_match(parse_mat(gnubg))
    assert back.score == [2, 1] and [r.roll for r in back.results] == [(0, 5, 4), (0, 6, 2)]


@pytest.mark.skipif(not GNUBG.exists(), reason="GNU Backgammon 1.07 is not installed (apt-get "
                    "install gnubg)")  # fmt: skip
def test_gnu_backgammon_reads_the_winner_of_a_game_resigned_at_once(tmp_path: Path) -> None:
    s = resigned_at_once()
    mat, sgf = tmp_path / "m.mat", tmp_path / "m.sgf"
    mat.write_text(to_mat(s, date=DAY))
    sgf.write_text(write_sgf(to_match(s, date=DAY)))
    want = [["X" if g.result.winner == 0 else "O", g.result.value] for g in [*s.history, s.game]]
    got = gnubg_results([mat, sgf], tmp_path)
    assert [r[:2] if r else r for r in got] == [want, want], got


def test_what_the_format_cannot_hold_is_refused() -> None:
    with pytest.raises(GameError, match="standard backgammon"):
        to_mat(Series.new("acey-deucey", seed=1, cube=True))
    with pytest.raises(GameError, match="colon"):
        to_mat(Series.new("standard", seed=1), names=("a:b", "c"))


def test_a_play_is_written_one_die_a_part_as_gnubg_does() -> None:
    from doublet.core.board import starting
    from doublet.games.game import Turn
    from doublet.games.record import mat_play

    start = position_id(starting())
    assert mat_play(Turn(0, (3, 3), "8/5(2) 6/3(2)", start)) == ((3, 3), "8/5 8/5 6/3 6/3")
    assert mat_play(Turn(0, (1, 6), "13/7 8/7", start)) == ((6, 1), "13/7 8/7")
    assert mat_play(Turn(0, (4, 5), "24/15", start)) == ((5, 4), "24/20 20/15")
    assert mat_play(Turn(0, (6, 6), "", start)) == ((6, 6), "")


@pytest.mark.skipif(not GNUBG.exists(), reason="GNU Backgammon 1.07 is not installed (apt-get "
                    "install gnubg)")  # fmt: skip
@pytest.mark.parametrize("kind", ["match", "money"])
def test_gnu_backgammon_imports_the_file_with_the_same_results(tmp_path: Path, kind: str) -> None:
    if kind == "match":
        s = Series.new("standard", seed=8, length=5, cube=True)
    else:
        s = Series.new("standard", games=4, seed=3, cube=True, jacoby=True)
    play_out(s)
    mat, sgf = tmp_path / "m.mat", tmp_path / "m.sgf"
    mat.write_text(to_mat(s, date=DAY))
    sgf.write_text(write_sgf(to_match(s, date=DAY)))
    # gnubg names the left column's player (side 0) X.
    want = [["X" if g.result.winner == 0 else "O", g.result.value] for g in [*s.history, s.game]]
    assert gnubg_results([mat, sgf], tmp_path) == [want, want]


def test_a_first_game_with_no_opening_throw_says_who_threw_first() -> None:
    """doublet play --first: the starter throws both dice in game 1 (seed 5: 5-5), which
    the opening throw never gives; the file's header says who threw first, so that it
    reads back, through from_match and to_mat too."""
    from doublet.games.record import from_match

    s = Series.new("standard", seed=5, length=3, cube=True, starter=0)
    assert s.game.dice == (5, 5)
    play_out(s)
    text = to_mat(s, date=DAY)
    assert '; [First throw "Player 1"]' in text
    same(s, text)
    same(s, write_sgf(to_match(s, date=DAY)))
    back = from_match(read_match(text)[0])
    assert back.starter == 0
    same(back, to_mat(back, date=DAY))
    old = from_match(read_match(text.replace('; [First throw "Player 1"]\n', ""))[0])
    assert old.game.record == back.game.record  # an export from before the tag reads too


def test_what_doublet_games_refuses_in_a_match_file_names_the_game_and_the_move() -> None:
    """from_match plays a file through Game after the reader's replay; what Game refuses
    and the replay took (here a double past Game's highest cube, MAX_CUBE) names the game,
    move and player too."""
    from doublet.cube.state import MAX_CUBE
    from doublet.formats.matfile import MatAction, parse_mat, write_mat
    from doublet.games.record import from_match

    s = Series.new("standard", seed=1)  # no cube: the dice are rolled at once
    for _ in range(17):
        s.game.play(s.game.plays()[0])
    m = to_match(s, ("a", "b"), DAY)
    actions, cube = [], 1
    for a in m.games[0].actions:  # before each play but the first: a double, taken
        if actions:
            cube *= 2
            actions += [MatAction(1, 1, a.player, "double", value=cube),
                        MatAction(1, 1, 1 - a.player, "take")]  # fmt: skip
        actions.append(a)
    m.games[0].actions = actions
    assert cube == 2 * MAX_CUBE
    words = r"game 1, move \d+, player \d \(\w\): no double: the cube is at its highest"
    with pytest.raises(GameError, match=words):
        from_match(parse_mat(write_mat(m)))


@pytest.mark.parametrize("name", ["match00", "match01", "match02", "match03"])
def test_a_match_file_becomes_a_played_series_and_back(name: str, tmp_path: Path) -> None:
    from doublet.games.record import from_match

    folder = Path(__file__).parent / "data" / "matches"
    match, games = read_match((folder / f"{name}.mat").read_text())
    s = from_match(match)
    assert s.names == match.names and s.length == match.length
    played = [*s.history, s.game]
    assert len(played) == len(games)
    for g, r in zip(played, games, strict=True):
        assert g.over and (g.result.winner, g.result.value) == (r.winner, r.points)
        assert g.rules.crawford == r.crawford and g.rules.score == r.score
        plays = [t for t in g.record if t.action == "play"]
        assert [(t.side, sorted(t.dice)) for t in plays] == [
            (m.player, sorted(m.dice)) for m in r.moves
        ]
    # Saved and read back it is the same series; written as .mat it is the same match.
    s.save(tmp_path / "s.json")
    assert Series.load(tmp_path / "s.json").to_dict() == s.to_dict()
    _, regames = read_match(to_mat(s, match.names, date=DAY))
    assert [(r.winner, r.points, len(r.moves)) for r in regames] == [
        (r.winner, r.points, len(r.moves)) for r in games
    ]


def test_a_name_like_a_move_number_is_read_as_a_name() -> None:
    # Found by tests/test_matfile_props.py: a player called "0)" made the score line
    # read as move line 0.
    from doublet.formats.matfile import parse_mat

    s = Series.new("standard", seed=4, length=3, cube=True)
    s.game.resign(0, 1)
    m = parse_mat(to_mat(s, names=("0)", "12) x"), date=DAY))
    assert m.games[0].names == ("0)", "12) x") and m.games[0].score == (0, 0)
