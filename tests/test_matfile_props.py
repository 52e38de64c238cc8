"""Match files, by property (hypothesis): random legal matches and money sessions, played
through doublet.games (random plays of Game.plays, random doubles, takes, drops and
beavers, resignations of 1 to 3 points, match lengths 0 (money) to 7 with the Crawford
game and post-Crawford play as the Series has them, Jacoby on or off), written with
doublet.games.record.to_match, come back the same:

- .mat: write_mat -> parse_mat gives the same match, and it replays (the reader's rules,
  doublet.formats.matfile.replay) to the series' own plays, cube actions, winners and
  points;
- .sgf: write_sgf -> parse_sgf gives the match that parse_mat reads from the .mat, line
  numbers, hit marks and tags included;
- .mat -> .sgf -> .mat: the same match, and the same .mat text but for the order of the
  header's tags;
- a file with one character changed, deleted or added is read or refused with a
  MatchFileError, never another exception;
- GNU Backgammon 1.07 imports both files of nine random series with the series' own
  winners and points.

Players' names and tag values come with the characters SGF escapes (``]``, ``\\``)."""

from __future__ import annotations

import contextlib
import datetime
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doublet.core.errors import MatchFileError
from doublet.formats.matfile import (
    MatMatch,
    ReplayedGame,
    parse_mat,
    parse_sgf,
    read_match,
    replay,
    write_mat,
    write_sgf,
)
from doublet.games.game import Game, Series
from doublet.games.record import to_match
from tests.helpers import GNUBG, gnubg_results

SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=SLOW_DATA)

# Names as a .mat score line holds them: no colon, no space at the ends, not a comment.
NAME = st.text(st.sampled_from("abcXYZ019 _-.()[]\\]"), min_size=1, max_size=10).filter(
    lambda s: s == s.strip()
)
VALUE = st.text(st.sampled_from('ab Z9.-"[]\\]'), max_size=12)


def play_series(rnd: random.Random, length: int, games: int, jacoby: bool,
                beavers: bool) -> Series:  # fmt: skip
    """A series played out at random: plays, doubles where allowed (each answered at
    random), and in some games a resignation now and then (others go to the bear-off)."""
    s = Series.new("standard", games=games, seed=rnd.randrange(2**32), length=length,
                   cube=True, jacoby=jacoby, beavers=beavers)  # fmt: skip
    while True:
        g = s.game
        resigns = rnd.choice([0.0, 0.005, 0.03])
        while not g.over:
            if rnd.random() < resigns:  # either side resigns a single game, gammon or backgammon
                g.resign(rnd.randrange(2), rnd.randint(1, 3))
                break
            if g.phase == "roll":
                if g.may_double() and rnd.random() < 0.08:
                    g.double()
                    answer(g, rnd)
                    continue
                g.roll()
            else:
                g.play(rnd.choice(g.plays()))
        if s.over:
            s.record_result()
            return s
        s.next_game()


def answer(g: Game, rnd: random.Random) -> None:
    choices = [g.take, g.drop] + [g.beaver] * g.rules.beavers
    rnd.choice(choices)()


@st.composite
def series_and_match(draw: Any) -> tuple[Series, MatMatch]:
    length = draw(st.integers(0, 7))
    money = length == 0
    jacoby = money and draw(st.booleans())
    beavers = money and draw(st.booleans())
    games = draw(st.integers(1, 3)) if money else 0
    # The play is drawn from a seed: hypothesis' own random numbers lean to the smallest,
    # which would resign every game at once.
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    s = play_series(rnd, length, games, jacoby, beavers)
    names = (draw(NAME), draw(NAME))
    day = draw(st.dates(datetime.date(1990, 1, 1), datetime.date(2099, 12, 31)))
    m = to_match(s, names, day)
    tag = st.sampled_from(["Event", "Round", "Transcriber", "Comment", "Site", "Unrated"])
    extra = draw(st.dictionaries(tag, VALUE, max_size=3))
    m.tags.update(extra)
    return s, m


def content(m: MatMatch) -> Any:
    """What a match says, without its line numbers: length, tags, each game's number,
    names, score and entries (a Wins on a line of its own or beside the last entry)."""
    return (m.length, m.tags, [(g.number, g.names, g.score,
                                [(a.player, a.kind, a.dice, a.play, a.value,
                                  a.kind == "wins" and a.number == 0) for a in g.actions])
                               for g in m.games])  # fmt: skip


def full(m: MatMatch) -> Any:
    """content() with the entries' line numbers."""
    return (content(m), [[a.number for a in g.actions] for g in m.games])


def outcome(games: list[ReplayedGame]) -> Any:
    return [(g.score, g.winner, g.points, g.resigned, g.crawford,
             [(mv.player, mv.dice, mv.play) for mv in g.moves],
             [(a.player, a.kind, a.value) for a in g.cube_actions]) for g in games]  # fmt: skip


def series_outcome(s: Series) -> Any:
    """The series' own games in outcome()'s terms (the play's notation is Doublet's)."""
    out = []
    for g in [*s.history, s.game]:
        r = g.result
        assert r is not None
        kinds = {"pass": "drop"}
        out.append((g.rules.score, r.winner, r.value, r.resigned, g.rules.crawford,
                    [(t.side, tuple(sorted(t.dice or (), reverse=True)), t.play)
                     for t in g.record if t.action == "play"],
                    [(t.side, kinds.get(t.action, t.action), t.cube)
                     for t in g.record if t.action != "play"]))  # fmt: skip
    return out


def normalised(games: list[ReplayedGame]) -> Any:
    """outcome() with the dice high first and only doubles' and beavers' cube values
    (the series records the cube on those alone)."""
    return [(score, w, p, res, cr, [(pl, tuple(sorted(d, reverse=True)), t) for pl, d, t in mv],
             [(pl, k, v if k in ("double", "beaver") else 0) for pl, k, v in cube])
            for score, w, p, res, cr, mv, cube in outcome(games)]  # fmt: skip


@SETTINGS
@given(series_and_match())
def test_a_mat_file_reads_back_to_the_same_match_and_replays_as_played(
    sm: tuple[Series, MatMatch],
) -> None:
    s, m = sm
    back = parse_mat(write_mat(m))
    assert content(back) == content(m)
    assert normalised(replay(back)) == series_outcome(s)


@SETTINGS
@given(series_and_match())
def test_an_sgf_file_reads_back_to_the_match_of_the_mat_file_and_back_to_the_mat_file(
    sm: tuple[Series, MatMatch],
) -> None:
    _, m = sm
    text = write_mat(m)
    mat = parse_mat(text)
    sgf = parse_sgf(write_sgf(m))
    assert full(sgf) == full(mat)
    assert outcome(replay(sgf)) == outcome(replay(mat))
    # .mat -> .sgf -> .mat: the same file but for the order of the tags.
    again = write_mat(parse_sgf(write_sgf(mat)))
    assert full(parse_mat(again)) == full(mat)

    def body(t: str) -> list[str]:
        return [line for line in t.splitlines() if not line.startswith(";")]

    assert body(again) == body(text)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_damaged_file_is_read_or_refused_with_a_match_file_error(data: Any) -> None:
    rnd = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    s = play_series(rnd, data.draw(st.integers(0, 3)), 1, False, False)
    m = to_match(s, ("a", "b"), datetime.date(2026, 12, 1))
    text = data.draw(st.sampled_from([write_mat(m), write_sgf(m)]))
    i = data.draw(st.integers(0, len(text) - 1))
    change = data.draw(st.sampled_from(["delete", "replace", "insert"]))
    c = data.draw(st.sampled_from("0123456789abyz;:()[]\\/* \n=>WBDTR+-"))
    damaged = {"delete": text[:i] + text[i + 1 :], "replace": text[:i] + c + text[i + 1 :],
               "insert": text[:i] + c + text[i:]}[change]  # fmt: skip
    with contextlib.suppress(MatchFileError):
        read_match(damaged)


@pytest.mark.skipif(not GNUBG.exists(), reason="GNU Backgammon 1.07 is not installed (apt-get "
                    "install gnubg)")  # fmt: skip
def test_gnu_backgammon_imports_random_matches_with_the_same_results(tmp_path: Path) -> None:
    # Seeds 0..8 of play_series: money sessions of 3 games (Jacoby and beavers on and off,
    # resignations, passes, bear-offs), matches to 1, 3, 5 and 7 points (the Crawford
    # game). gnubg's .mat import drops a game resigned before its first play (seed 9's
    # third game); its SGF holds one.
    paths, want = [], []
    for seed in range(9):
        length = [0, 0, 0, 1, 3, 5, 7][seed % 7]
        money = length == 0
        s = play_series(random.Random(seed), length, 3 * money, money and seed % 2 == 0,
                        money and seed % 3 == 0)  # fmt: skip
        m = to_match(s, ("alice", "bob"), datetime.date(2026, 12, 1))
        results = [["X" if g.result.winner == 0 else "O", g.result.value]
                   for g in [*s.history, s.game] if g.result is not None]  # fmt: skip
        for ext, text in ((".mat", write_mat(m)), (".sgf", write_sgf(m))):
            paths.append(tmp_path / f"m{seed}{ext}")
            paths[-1].write_text(text)
            want.append(results)
    assert gnubg_results(paths, tmp_path) == want
