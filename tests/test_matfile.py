"""doublet.formats.matfile: GNU Backgammon's .mat and .sgf files read, replayed through
the rules and written. The four matches of tests/data/matches (written by gnubg 1.07)
replay move by move, their score lines add up, and each player's number of moves is the
"Total moves" of gnubg's own statistics of the match; each .sgf reads to the same match
as its .mat (line numbers and hit marks too), and write_sgf writes gnubg's .sgf again
node for node (less the analysis). Beavers, the Jacoby rule, a 1-point match, an
unfinished game; the hand-made files of tests/data/handmade (every kind of line) replay
and round-trip through .sgf, GNU Backgammon imports them and their .sgf alike, and
broken files are refused with the game, move, player and text named: among them a
player who moves twice in a row (the players take turns), a beaver in a match, a
doublet as a game's first roll where the opening throw gave it (not after a single game
won by the roller, nor with the "First throw" tag), .sgf games of different match
lengths, a length or score that is not valid. A byte-order mark at the start is no part
of the file; a file with no game reads, but not for a review (need_game)."""

from __future__ import annotations

import re

import pytest

from doublet.core.errors import MatchFileError
from doublet.formats.matfile import first_thrower, parse_mat, read_match, to_doublet_notation
from tests.helpers import DATA, GNUBG, gnubg_results

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
        (GOOD.replace("8/5 6/5", "8/4 6/5"), "game 1, move 1, player 1 (a): '31: 8/4 6/5'"),
        (GOOD.replace("8/5 6/5", "8/x 6/5"), "game 1, move 1, player 1 (a)"),
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


# The players take turns. Player 1 (the right column) opens, so the first line's left
# column is empty; player 1 doubles and player 0 drops on the next line, and the Wins
# goes beside the drop, as gnubg lays them out.
TURNS = """ 3 point match

 Game 1
 a : 0                          b : 0
  1)                             31: 8/5 6/5
  2) 52: 13/8 13/11               Doubles => 2
  3)  Drops                       Wins 1 point
"""


def test_the_players_take_turns() -> None:
    _, games = read_match(TURNS)
    assert [(mv.player, mv.play) for mv in games[0].moves] == [(1, "8/5 6/5"), (0, "13/11 13/8")]
    assert (games[0].winner, games[0].points) == (1, 1)


HEAD = " 5 point match\n\n Game 1\n a : 0                          b : 0\n"
SGF_HEAD = "(;FF[4]GM[6]MI[length:5][game:0][ws:0][bs:0]PW[a]PB[b]"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # Line 1's right column empty in mid-game: player 0 plays twice in a row.
        (HEAD + "  1) 41: 24/20 24/23\n"
                "  2) 31: 8/5 6/5                 21: 13/11 6/5*\n",
         "game 1, move 2, player 1 (a): '31: 8/5 6/5': out of turn: the entry before it "
         "(move 1) is this player's too"),
        (SGF_HEAD + ";W[41xtxw];W[31hefe];B[21lnst])",
         "game 1, move 2, player 1 (a): '31hefe': out of turn"),
        # Line 2's left column empty in mid-game: player 1 plays twice in a row.
        (HEAD + "  1) 41: 24/20 24/23             21: 24/22 24/23\n"
                "  2)                             31: 8/5 6/5\n",
         "game 1, move 2, player 2 (b): '31: 8/5 6/5': out of turn"),
        # A double comes before the doubler's roll, not after its own play.
        (HEAD + "  1) 41: 24/20 24/23\n"
                "  2)  Doubles => 2                Takes\n",
         "game 1, move 2, player 1 (a): 'Doubles => 2': out of turn"),
    ],
)  # fmt: skip
def test_a_player_who_moves_twice_in_a_row_is_refused(text: str, words: str) -> None:
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(text, unfinished=True)


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
        (
            "(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];W[31hcfe])",
            "game 1, move 1, player 1: '31hcfe'",
        ),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0]RE[W+1x];W[31hefe])", "RE[W+1x]"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];W[31hefe]", "a ')' is missing"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];W[31hefe", "a ']' is missing"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];AB[a][b];W[31hefe])", "sets up"),
        ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0]CV[2];W[31hefe])", "automatic doubles"),
        (
            "(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0];W[31hefe];B[double];W[take];B[double])",
            "game 1, move 2, player 2: 'double': this player may not double now",
        ),
    ],
)
def test_broken_sgf_files(text: str, words: str) -> None:
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(text)


def test_an_sgf_whose_games_give_different_match_lengths_is_refused() -> None:
    # Game 1 says a 5-point match, game 2 a 7-point one: which is it? (It was read as
    # the last game's 7.)
    game1 = SGF_HEAD + "RE[B+1];W[41xtxw];B[double];W[drop])\n"
    game2 = "(;FF[4]GM[6]MI[length:{}][game:1][ws:0][bs:1]PW[a]PB[b];W[31hefe])\n"
    assert read_match(game1 + game2.format(5), unfinished=True)[0].length == 5
    words = "game 2: its MI[length:7] says a 7-point match, but game 1's says a 5-point match"
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(game1 + game2.format(7), unfinished=True)
    with pytest.raises(MatchFileError, match=re.escape("says money play, but game 1's")):
        read_match(game1 + game2.format(0), unfinished=True)


def test_a_beaver_in_a_match_is_refused() -> None:
    # Beavers are money play only: b doubles, a beavers, b rolls.
    game = (" Game 1\n a : 0                          b : 0\n"
            "  1) 41: 24/20 24/23              Doubles => 2\n"
            "  2)  Beavers => 4               21: 24/22 24/23\n")  # fmt: skip
    _, games = read_match(" 0 point match\n\n" + game, unfinished=True)
    assert [a.kind for a in games[0].cube_actions] == ["double", "beaver"]
    words = (
        "game 1, move 2, player 1 (a): 'Beavers => 4': a beaver in a match: beavers are for money"
    )
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(" 5 point match\n\n" + game, unfinished=True)
    # In .sgf a beaver is the taker's double, then the doubler's take.
    sgf = SGF_HEAD + ";W[41xtxw];B[double];W[double];B[take];B[21acab])"
    with pytest.raises(MatchFileError, match=re.escape("game 1, move 2, player 1 (a): 'double': a "
                                                       "beaver in a match")):  # fmt: skip
        read_match(sgf, unfinished=True)


# Game 1: a doubles, b drops: a wins a single game, and so has the first throw of game 2
# with both dice (seed 002, as doublet.games plays a series); GNU Backgammon, and the
# first game, have the opening throw, one die each, which is never a doublet.
SINGLE = """ 7 point match

 Game 1
 a : 0                          b : 0
  1) 31: 8/5 6/5                 52: 13/8 13/11
  2)  Doubles => 2                Drops
      Wins 1 point

 Game 2
 a : 1                          b : 0
"""
A_44 = "  1) 44: 24/20 24/20 13/9 13/9\n"
B_44 = "  1)                             44: 24/20 24/20 13/9 13/9\n"
GAMMON = SINGLE.replace("  2)  Doubles => 2                Drops\n      Wins 1 point\n",
                        "      Wins 2 points\n").replace(" a : 1 ", " a : 2 ")  # fmt: skip


def test_a_games_first_roll_is_no_doublet_where_the_opening_throw_gave_it() -> None:
    game1 = SINGLE[: SINGLE.index(" Game 2")]
    # Game 1 is not checked: doublet play --first's exports from before the First throw
    # tag open with a doublet 1 time in 6 and do not say who threw first.
    _, games = read_match(game1.replace("31: 8/5 6/5", "44: 24/20 24/20 13/9 13/9"))
    assert games[0].moves[0].dice == (4, 4)
    _, games = read_match(SINGLE + A_44, unfinished=True)  # the winner of a single game
    assert games[1].moves[0].dice == (4, 4)
    for text, who in [
        (SINGLE + B_44, "2 (b)"),
        (GAMMON + A_44, "1 (a)"),
    ]:  # the loser; after a gammon
        words = f"game 2, move 1, player {who}: '44: 24/20 24/20 13/9 13/9': a game's first roll"
        with pytest.raises(MatchFileError, match=re.escape(words)):
            read_match(text, unfinished=True)


def test_the_first_throw_tag_names_game_1s_starter() -> None:
    # doublet play --first: the starter throws both dice in game 1, with no opening throw.
    game = " 5 point match\n\n Game 1\n a : 0                          b : 0\n" + A_44
    tag = '; [First throw "Player {}"]\n'
    assert first_thrower(parse_mat(tag.format(1) + game)) == 0
    assert first_thrower(parse_mat(tag.format(2) + game)) == 1
    assert first_thrower(parse_mat(game)) is None
    for text in (tag.format(1) + game, game):  # with the tag, and an export from before it
        assert read_match(text, unfinished=True)[1][0].moves[0].dice == (4, 4)
    with pytest.raises(
        MatchFileError, match=r"game 1, move 1, player 1 \(a\): .* cannot be a doublet"
    ):
        read_match(tag.format(2) + game, unfinished=True)  # the tag names the other player


def test_a_byte_order_mark_at_the_start_is_no_part_of_the_file() -> None:
    # Windows editors start a UTF-8 file with U+FEFF; an .sgf with one was taken for a .mat.
    from doublet.formats.matfile import parse_sgf

    sgf = (DATA / "matches" / "match01.sgf").read_text()
    for text, parse in [(GOOD, parse_mat), (sgf, parse_sgf)]:
        m, games = read_match("\ufeff" + text)
        assert m == parse(text) == parse("\ufeff" + text)
        assert [(g.winner, g.points, len(g.moves)) for g in games] == [
            (g.winner, g.points, len(g.moves)) for g in read_match(text)[1]
        ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # A negative length was read, and the review said "a score of 0-0 ends a -5-point match".
        (SGF_HEAD.replace("length:5", "length:-5") + ";W[41xtxw])",
         "game 1: MI[length:-5]: the match length is not valid: 1 point or more, or 0 for "
         "money play"),
        (SGF_HEAD.replace("[ws:0]", "[ws:-3]") + ";W[41xtxw])",
         "game 1: its score line says -3-0: a score is 0 points or more"),
        # A score at the match length or beyond: the match is over before the game.
        (HEAD.replace(" a : 0 ", " a : 8 ") + "  1) 41: 24/20 24/23\n",
         "game 1: its score line says 8-0, but a 5-point match is over once a player has 5 "
         "points"),
        (SGF_HEAD.replace("[bs:0]", "[bs:5]") + ";W[41xtxw])",
         "game 1: its score line says 0-5, but a 5-point match is over"),
    ],
)  # fmt: skip
def test_a_length_or_a_score_that_is_not_valid_is_named(text: str, words: str) -> None:
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(text, unfinished=True)


def test_a_file_with_no_game_has_nothing_to_review() -> None:
    # The header alone reads (doublet play's export before a game, its players' names),
    # but doublet review and the server's import, which ask for a game, refuse it.
    assert read_match(" 5 point match\n")[1] == []
    for text in (" 5 point match\n", '; [Player 1 "a"]\n\n 0 point match\n\n'):
        with pytest.raises(MatchFileError, match="no game in the file: no ' Game 1' line"):
            read_match(text, unfinished=True, need_game=True)


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
    """A money session of random legal games, each ended by a bear-off or a drop, each
    opened by player 0 with a roll of the opening throw (no doublet)."""
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
            while d1 == d2 and not any(x.kind == "move" for x in actions):  # the opening throw
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


# -- GNU Backgammon's SGF, written --------------------------------------------------------

# The properties of gnubg's analysis (moves A, cube DA, statistics GS, luck LU, marks
# and skill), which write_sgf has no values for.
_ANALYSIS = re.compile(
    r"(?<![A-Z])(?:A|DA|GS|MR|LU|BM|DO|BC|DC|GB|GW|CR|C)(?:\[(?:[^\]\\]|\\.)*\])+"
)


def _full(m):  # type: ignore[no-untyped-def]
    """A match's entries with their line numbers, and its tags (not the text as written)."""
    return (m.length, m.tags, [(g.number, g.names, g.score,
                                [(a.number, a.player, a.kind, a.dice, a.play, a.value)
                                 for a in g.actions]) for g in m.games])  # fmt: skip


@pytest.mark.parametrize("path", MATCHES, ids=lambda p: p.stem)
def test_gnubgs_sgf_reads_as_its_mat_line_numbers_and_hit_marks_too(path) -> None:  # type: ignore[no-untyped-def]
    from doublet.formats.matfile import parse_sgf

    sgf = parse_sgf(path.with_suffix(".sgf").read_text())
    assert _full(sgf) == _full(parse_mat(path.read_text()))


@pytest.mark.parametrize("path", MATCHES, ids=lambda p: p.stem)
def test_write_sgf_writes_gnubgs_file_node_for_node(path) -> None:  # type: ignore[no-untyped-def]
    from doublet.formats.matfile import parse_sgf, write_sgf

    text = path.with_suffix(".sgf").read_text()
    gnubg = _ANALYSIS.sub("", text).replace("AP[GNU Backgammon:1.07.001]", "AP[Doublet:0.1.0]")
    assert write_sgf(parse_sgf(text)) == gnubg
    assert write_sgf(parse_mat(path.read_text())) == gnubg


# gnubg's own SGF of a money session (gnubg 1.07's `save match`, its statistics left
# out): person doubles, Doublet beavers, the cube is at 4, Doublet plays 3-1, then
# person resigns; in game 2 person resigns a gammon after one play.
GNUBG_BEAVER = """(;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:0][game:0][ws:0][bs:0]\
PW[person]PB[Doublet]DT[2026-12-01]PC[Doublet]RU[Jacoby]RE[B+4R]
;W[65xrrm]
;B[double]
;W[double]
;B[take]
;B[31qtst])
(;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:0][game:1][ws:0][bs:4]PW[person]\
PB[Doublet]RU[Jacoby]RE[B+2R]
;B[51ablq])
"""


def test_a_beaver_in_sgf_is_the_takers_double_then_the_doublers_take() -> None:
    from doublet.formats.matfile import write_sgf

    m, games = read_match(GNUBG_BEAVER)
    assert m.tags == {"EventDate": "2026.12.01", "Site": "Doublet", "Jacoby": "On"}
    g = games[0]
    assert [(a.player, a.kind, a.value) for a in g.cube_actions] == [(1, "double", 2),
                                                                      (0, "beaver", 4)]  # fmt: skip
    assert (g.winner, g.points, g.resigned) == (1, 4, True)
    assert [(mv.player, mv.play, mv.cube, mv.owner) for mv in g.moves] == [
        (0, "24/13", 1, -1), (1, "8/5 6/5", 4, 0)]  # fmt: skip
    assert (games[1].winner, games[1].points, games[1].resigned) == (1, 2, True)
    assert write_sgf(m).replace("Doublet:0.1.0", "GNU Backgammon:1.07.001") == GNUBG_BEAVER.replace(
        "\\\n", ""
    )


ONE_POINT = """ 1 point match

 Game 1
 a : 0                          b : 0
  1) 31: 8/5 6/5                 52: 13/8 13/11
  2)  Doubles => 2                Takes
  3) 52: 13/11 13/8
      Wins 2 points
"""


def test_a_one_point_match_has_no_crawford_game() -> None:
    # In a 1-point match both sides need one point: gnubg (and doublet.games) let the
    # cube be turned there (gnubg 1.07 imports this file: X wins 2 points, resigned).
    _, games = read_match(ONE_POINT)
    assert (games[0].crawford, games[0].winner, games[0].points) == (False, 0, 2)


def test_the_jacoby_rule_of_a_money_session_counts_a_gammon_at_a_centred_cube_single() -> None:
    import datetime
    import random

    from doublet.games.game import Series
    from doublet.games.record import to_mat

    # Random plays, seed 5: side 0 wins a gammon with the cube at 1, worth 1 point.
    rnd = random.Random(5)
    s = Series.new("standard", games=1, seed=5, cube=True, jacoby=True)
    g = s.game
    while not g.over:
        g.roll() if g.phase == "roll" else g.play(rnd.choice(g.plays()))
    assert g.result is not None and (g.result.points, g.cube, g.result.value) == (2, 1, 1)
    text = to_mat(s, date=datetime.date(2026, 12, 1))
    assert '; [Jacoby "On"]' in text and "Wins 1 point" in text
    assert read_match(text)[1][0].points == 1
    with pytest.raises(MatchFileError, match=r"by the moves, player 1 \(person\) wins 2 points"):
        read_match(text.replace('; [Jacoby "On"]', '; [Jacoby "Off"]'))


def test_an_unfinished_game_is_written_without_a_result() -> None:
    from doublet.formats.matfile import parse_sgf, replay, write_sgf

    text = GOOD.replace("  2)  Doubles => 2                Drops\n      Wins 1 point\n", "")
    m = parse_mat(text)
    with pytest.raises(MatchFileError, match="before anyone has won"):
        write_sgf(replace_last_game(m, 5))  # a later game would follow an unfinished one
    sgf = write_sgf(m)
    assert "RE[" not in sgf
    back = replay(parse_sgf(sgf), unfinished=True)
    assert back[0].winner == -1 and [mv.play for mv in back[0].moves] == ["8/5 6/5", "13/11 13/8"]


def replace_last_game(m, number):  # type: ignore[no-untyped-def]
    """The match with a copy of its last game appended as game `number`."""
    import copy

    m = copy.deepcopy(m)
    g = copy.deepcopy(m.games[-1])
    g.number = number
    m.games.append(g)
    return m


def test_a_play_as_single_die_moves_keeps_the_files_order_when_it_is_one() -> None:
    # The SGF writer's moves (doublet.formats.notation.single_moves), from the start.
    from doublet.core.board import starting
    from doublet.core.errors import IllegalPlayError
    from doublet.formats.notation import single_moves
    from doublet.formats.position import Position

    start = Position(starting())

    def moves(text: str, d1: int, d2: int, hint=()):  # type: ignore[no-untyped-def]
        return single_moves(start.board, start.play(text, d1, d2).board, d1, d2, hint)

    assert moves("24/20 6/5", 4, 1) == [(24, 20), (6, 5)]  # sources from high to low
    assert moves("24/20 6/5", 4, 1, [(6, 5), (24, 20)]) == [(6, 5), (24, 20)]  # gnubg's order
    assert moves("13/6", 5, 2) == [(13, 8), (8, 6)]
    assert moves("13/6", 5, 2, [(8, 6), (13, 8)]) == [(8, 6), (13, 8)]  # 8 has checkers
    assert moves("13/6", 5, 2, [(11, 6), (13, 11)]) == [(13, 8), (8, 6)]  # 11 has none yet
    assert moves("13/6", 5, 2, [(13, 11), (11, 6)]) == [(13, 11), (11, 6)]
    assert moves("24/18(2)", 3, 3) == [(24, 21), (24, 21), (21, 18), (21, 18)]
    assert moves("24/23 24/20", 4, 1, [(24, 23)]) == [(24, 23), (24, 20)]  # one die short
    with pytest.raises(IllegalPlayError):
        single_moves(start.board, starting(), 4, 1)


# -- hand-made files (tests/data/handmade) ----------------------------------------------

HANDMADE = sorted((DATA / "handmade").glob("*.mat"))


@pytest.mark.parametrize("path", HANDMADE, ids=lambda p: p.stem)
def test_a_hand_made_file_replays_and_round_trips_through_sgf(path) -> None:  # type: ignore[no-untyped-def]
    from doublet.formats.matfile import parse_sgf, write_mat, write_sgf

    m, games = read_match(path.read_text())
    back = parse_sgf(write_sgf(m))
    assert _full(back) == _full(parse_mat(write_mat(m)))
    assert [(g.winner, g.points, g.resigned) for g in read_match(write_sgf(m))[1]] == [
        (g.winner, g.points, g.resigned) for g in games
    ]


def test_the_hand_made_files_hold_every_kind_of_line() -> None:
    texts = {p.stem: p.read_text() for p in HANDMADE}
    money, games = read_match(texts["money_session"])
    match, match_games = read_match(texts["crawford_match"])
    assert money.length == 0 and money.tags["Jacoby"] == "On" and match.length == 3
    every = [*games, *match_games]
    plays = [mv.play for g in every for mv in g.moves]
    kinds = {a.kind for g in every for a in g.cube_actions}
    assert kinds == {"double", "take", "drop", "beaver"}
    assert "" in plays  # a dance
    assert any(p.startswith("bar/") for p in plays) and any("/off" in p for p in plays)
    assert any("*" in p for p in plays)  # hits
    resigned = [g for g in every if g.resigned]
    assert len(resigned) >= 3 and not all(g.moves[-1].player == g.winner for g in resigned)
    assert [g.crawford for g in match_games] == [False, True, False, False]
    assert [a.kind for a in match_games[2].cube_actions] == ["double", "drop"]  # post-Crawford
    assert [(g.winner, g.points) for g in match_games] == [(0, 2), (1, 1), (1, 1), (0, 1)]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("illegal_move",
         "game 1, move 1, player 1 (anna): '64: 24/18 13/8': the roll 6-4 cannot move"),
        ("move_does_not_parse", "game 1, move 1, player 1 (anna): '64: 24/18 13/x': '13/x'"),
        ("broken_score_line", "game 2, line 53: cannot read 'anna : 2"),
        ("score_does_not_add_up", "game 3: its score line says 2-0, but the games before it "
                                  "make 2-1"),
        ("double_in_the_crawford_game",
         "game 2, move 1, player 2 (ben): 'Doubles => 2': nobody may double in the Crawford game"),
        ("double_without_the_cube", "game 3, move 2, player 2 (ben): 'Doubles => 4': this player "
                                    "may not double now"),
        ("take_without_a_double", "game 2, move 3, player 1 (anna): 'Takes': there is no double"),
    ],
)  # fmt: skip
def test_a_broken_hand_made_file_is_refused_naming_the_game_the_move_and_the_text(
    name: str, words: str
) -> None:
    text = (DATA / "handmade" / "broken" / f"{name}.mat").read_text()
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(text)


@pytest.mark.skipif(not GNUBG.exists(), reason="GNU Backgammon 1.07 is not installed (apt-get "
                    "install gnubg)")  # fmt: skip
def test_gnu_backgammon_imports_the_hand_made_files_and_their_sgf_alike(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from doublet.formats.matfile import write_sgf

    paths, want = [], []
    for p in HANDMADE:
        m, games = read_match(p.read_text())
        sgf = tmp_path / f"{p.stem}.sgf"
        sgf.write_text(write_sgf(m))
        results = [["X" if g.winner == 0 else "O", g.points] for g in games]
        paths += [p, sgf]
        want += [results, results]
    assert gnubg_results(paths, tmp_path) == want


def test_a_wins_line_that_is_no_resignation_names_where_and_what() -> None:
    """match02's first game ends with a resigned gammon (Wins 4 points at a cube of 2,
    before the last checkers are off); 3 points is no resignation there: the error names
    the line after the last move and the values it could have (session 23: "move 0")."""
    text = (DATA / "matches" / "match02.mat").read_text()
    assert read_match(text)[1][0].points == 4
    bad = text.replace("      Wins 4 points", "      Wins 3 points", 1)
    words = ("game 1, after move 24, player 1 (gnubg): 'Wins 3 points': the moves do not end the "
             "game, and a resignation at a cube of 2 is worth 2, 4 or 6 points, not 3")  # fmt: skip
    with pytest.raises(MatchFileError, match=re.escape(words)):
        read_match(bad)


def test_an_empty_file_and_a_file_without_games() -> None:
    """An empty file says so, whatever its name (session 23: an empty .sgf got the .mat
    header's message); a file with no game yet takes its names from its header tags."""
    for text in ("", "  \n\n"):
        with pytest.raises(MatchFileError, match="the file is empty"):
            read_match(text)
    m, games = read_match('; [Player 1 "person"]\n; [Player 2 "Doublet"]\n\n 0 point match\n')
    assert games == [] and m.names == ("person", "Doublet")


def test_an_empty_players_name_is_named_by_its_place() -> None:
    sgf = (DATA / "matches" / "match01.sgf").read_text().replace("PW[gnubg]", "PW[]")
    match, _ = read_match(sgf)
    assert match.names == ("player 1", "root")


def test_what_a_review_found_in_real_and_damaged_files() -> None:
    """A review of doublet review (session 43), each fixed here:
    - "Wins 12 points and the match" (Snowie, FIBS and eXtreme Gammon end a match so) was
      refused: it reads as the Wins it is;
    - a move line that is no entry ("18) 51 3/0 1/0", its colon missing) was dropped
      silently, and the game then ended by a resignation: it is refused, naming it;
    - a long line after a game's header took minutes (76 s at 72 KB) to be refused;
    - a double before a game's first roll was read, then left out of the statistics;
    - a match without the Crawford rule (gnubg's SGF with no RU[Crawford]) was refused at
      the leader's double at 1-away."""
    text = (DATA / "matches" / "match03.mat").read_text()
    last = [line for line in text.splitlines() if "Wins" in line][-1]
    m, games = read_match(text.replace(last, last.rstrip() + " and the match"))
    assert games[-1].points == read_match(text)[1][-1].points
    text = (DATA / "matches" / "match02.mat").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith(" 18) 51:"))
    with pytest.raises(MatchFileError, match=r"cannot read '18\) 51 3/0 1/0': an entry is a roll"):
        read_match(text.replace(line, " 18) 51 3/0 1/0"))
    with pytest.raises(MatchFileError, match="cannot read '1\\) 31': an entry"):
        read_match(GOOD.replace("  1) 31: 8/5 6/5                 52: 13/8 13/11", "  1) 31"))
    import time

    started = time.perf_counter()
    with pytest.raises(MatchFileError, match="cannot read"):
        read_match(" 5 point match\n Game 1\n" + "a : 1 " * 12000 + "x\n")
    assert time.perf_counter() - started < 5
    early = GOOD.replace("  1) 31: 8/5 6/5                 52: 13/8 13/11\n"
                         "  2)  Doubles => 2                Drops",
                         "  1)  Doubles => 2                Drops")  # fmt: skip
    with pytest.raises(MatchFileError, match="nobody doubles before a game's first roll"):
        read_match(early)
    # match01 has the Crawford rule: a double by the leader at 1-away in the Crawford
    # game is refused; the same file marked without the rule reads it.
    sgf = (DATA / "matches" / "match01.sgf").read_text()
    assert "RU[Crawford" in sgf
    m, games = read_match(sgf.replace("RU[Crawford:CrawfordGame]", "").replace("RU[Crawford]", ""))
    assert m.tags["Crawford"] == "Off" and not any(g.crawford for g in games)
    assert any(g.crawford for g in read_match(sgf)[1])


def test_a_match_file_that_is_not_utf8_is_read() -> None:
    """Older programs wrote Windows-1252 (a player's accented name), some UTF-16: both
    read (doublet review said "not UTF-8"); a binary file is said to be one."""
    from doublet.formats.matfile import decode_match_file

    text = GOOD.replace('"a"', '"José"').replace(" a : 0", " José : 0")
    assert read_match(decode_match_file(text.encode("cp1252")))[0].names[0] == "José"
    assert decode_match_file(text.encode("utf-16")) == text
    assert decode_match_file(text.encode("utf-8")) == text
    with pytest.raises(MatchFileError, match="NUL bytes"):
        decode_match_file(b"\x00\x01\xff\xfe binary")


@pytest.mark.parametrize("path", MATCHES, ids=lambda p: p.stem)
def test_a_file_with_narrower_columns_reads_as_gnubgs(path) -> None:  # type: ignore[no-untyped-def]
    """(a review) A .mat written with player 1's column nearer than gnubg's (offset 28)
    had both players' entries read as player 0's: a merged entry, refused far from the
    cause. The column is now found from the lines with two entries."""
    narrow = []
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"(\s*\d+\))(.*)", line)
        if m:
            rest = m.group(2)
            starts = [e.start() for e in re.finditer(r"\d\d:|Doubles|Takes|Drops|Beavers|Wins",
                                                     rest) if e.start() >= 28]  # fmt: skip
            cut = starts[0] if starts else len(rest)
            left, right = rest[:cut].strip(), rest[cut:].strip()
            if right.lower().startswith("wins") or not right:
                narrow.append(line)  # a Wins in the other column keeps its place
                continue
            narrow.append(m.group(1) + " " + (left.ljust(22) + "  " + right).rstrip())
        else:
            narrow.append(line)
    text = "\n".join(narrow) + "\n"
    assert text != path.read_text()
    got, want = parse_mat(text), parse_mat(path.read_text())

    def entries(m):  # type: ignore[no-untyped-def]
        return [[(a.player, a.kind, a.dice, a.play, a.value) for a in g.actions] for g in m.games]

    assert entries(got) == entries(want)
