"""A played series as a match file: ``.mat`` (the Jellyfish / GNU Backgammon text format,
doublet.formats.matfile), which GNU Backgammon and eXtreme Gammon import.

``to_match(series, names)`` gives the MatMatch of the series' games (the finished ones,
then the current one if anything was played in it), ``to_mat(series, names)`` its text;
``from_match(match)`` is the way back: a match file's games played through Game, with
the file's dice, as a Series (its games finished, `names` the file's players), so that a
match file is reviewed, saved and exported as a played series is.
A money session is a "0 point match"; the Jacoby rule and beavers are written as gnubg
writes them, in the header (``; [Jacoby "On"]``). A series whose first game had no
opening throw (`Series.starter`, doublet play's ``--first``) says who threw first in
the header (``; [First throw "Player 1"]``): that game's first roll may be a doublet.
Each player's plays are in that player's own numbering (24 down to 1; the bar 25, off
0), one part per die, as gnubg writes them (``mat_play``). A resignation has no line of
its own; the game ends with the winner's ``Wins N points``.
Only standard backgammon: the format has no notation for Acey-Deucey's entering
checkers.
"""

from __future__ import annotations

import datetime

import numpy as np

from doublet.core.board import STANDARD
from doublet.core.errors import DoubletError, GameError
from doublet.formats.ids import parse_position
from doublet.formats.matfile import (
    FIRST_THROW,
    MatAction,
    MatGame,
    MatMatch,
    first_thrower,
    money_rules,
    player_name,
    replay,
    rolled_and_resigned,
    to_doublet_notation,
    write_mat,
    write_sgf,
)
from doublet.formats.notation import can_move, parse_play
from doublet.games.game import Game, Rules, Series, Turn
from doublet.games.steps import BAR, OFF, Step
from doublet.games.steps import Turn as Steps

KINDS = {"double": "double", "take": "take", "pass": "drop", "beaver": "beaver"}


def mat_play(t: Turn) -> tuple[tuple[int, int], str]:
    """A play as gnubg writes it in a .mat file: the higher die first, one part per die
    (``25/22 25/22 8/5* 6/3``, no chains or counts), sources from high to low, a hit
    marked where a checker first lands on it; the bar 25, off 0."""
    assert t.dice is not None
    dice = (max(t.dice), min(t.dice))
    if not t.play:
        return dice, ""
    board, _, _ = parse_position(t.before, STANDARD)
    before = np.array(board, np.int8)
    path = Steps(before, *t.dice).path(parse_play(before, *t.dice, t.play))
    steps = sorted((s for s in path if isinstance(s, Step)), key=lambda s: -s.src)
    hits = {s.dst for s in steps if s.hit}
    parts = []
    for s in steps:
        src = 25 if s.src == BAR else s.src
        dst = 0 if s.dst == OFF else s.dst
        parts.append(f"{src}/{dst}" + ("*" if s.dst in hits else ""))
        hits.discard(s.dst)
    return dice, " ".join(parts)


def _game(g: Game, names: tuple[str, str]) -> MatGame:
    n = g.number + 1
    out = MatGame(n, names, g.rules.score)
    for t in g.record:
        if t.action == "play":
            dice, text = mat_play(t)
            out.actions.append(MatAction(n, 1, t.side, "move", dice, text))
        else:
            out.actions.append(MatAction(n, 1, t.side, KINDS[t.action], value=t.cube))
    r = g.result
    if r is not None:
        last = g.record[-1].side if g.record else None
        side, d1, d2 = r.roll or (0, 0, 0)
        if r.roll is not None and can_move(g.board_for(side), d1, d2):
            # resigned with the dice rolled: the roll, with no play (as gnubg writes it; it
            # reads no winner from a Wins alone); dice with no play would read as a dance
            out.actions.append(MatAction(n, 1, side, "move", (max(d1, d2), min(d1, d2)), ""))
            last = side
        # gnubg writes the winner's Wins beside the loser's last entry when that is in the
        # left column and the winner's is the right one; else on a line of its own.
        beside = r.winner == 1 and last == 0
        out.actions.append(MatAction(n, 1 if beside else 0, r.winner, "wins", value=r.value))
    return out


# Why an Acey-Deucey series has no match file (doublet play's export command and --export).
MAT_IS_STANDARD = (
    "the .mat and .sgf match files are for standard backgammon; Acey-Deucey games are "
    "exported as Doublet's text record"
)


def to_match(series: Series, names: tuple[str, str] = ("person", "Doublet"),
             date: datetime.date | None = None) -> MatMatch:  # fmt: skip
    """The series as a MatMatch (side 0 is player 0, the left column)."""
    if series.variant != STANDARD:
        raise GameError(f"{MAT_IS_STANDARD} (export FILE.txt)")
    for name in names:
        if not name or ":" in name or name != name.strip():
            raise GameError(f"a player's name in a .mat file has no colon and no spaces at "
                            f"its ends: {name!r}")  # fmt: skip
    if any(g.from_position for g in [*series.history, series.game]):
        raise GameError("this game began at a position, not at the opening, and a .mat file "
                        "holds games from the opening only")  # fmt: skip
    day = date or datetime.date.today()
    tags = {"Site": "Doublet", "Player 1": names[0], "Player 2": names[1],
            "EventDate": f"{day.year}.{day.month:02d}.{day.day:02d}",
            "Variation": "Backgammon", "Jacoby": "On" if series.jacoby else "Off",
            "Beaver": "On" if series.beavers else "Off"}  # fmt: skip
    if series.length and series.cube:
        tags["Crawford"] = "On"
    if series.starter is not None:  # no opening throw in game 1: its first roll may be a doublet
        tags[FIRST_THROW] = f"Player {series.starter + 1}"
    games = [_game(g, names) for g in series.history]
    if series.game.record or series.game.over:
        games.append(_game(series.game, names))
    return MatMatch(series.length, tags, games)


def to_mat(series: Series, names: tuple[str, str] = ("person", "Doublet"),
           date: datetime.date | None = None) -> str:  # fmt: skip
    """The series as .mat text."""
    return write_mat(to_match(series, names, date))


def to_sgf(series: Series, names: tuple[str, str] = ("person", "Doublet"),
           date: datetime.date | None = None) -> str:  # fmt: skip
    """The series as GNU Backgammon's SGF."""
    return write_sgf(to_match(series, names, date))


# The match files a played series is written as, by the file name's suffix.
MATCH_FILES = {".mat": to_mat, ".sgf": to_sgf}


def from_match(match: MatMatch, seed: int = 0) -> Series:
    """The match as a played Series: each game through doublet.games.game with the
    file's dice and actions (MatchFileError first, from the replay, for a file that does
    not fit the rules; a GameError naming the game, move and player for what Game
    refuses), side 0 the file's player 0. The last game may be unfinished."""
    replayed = replay(match, unfinished=True)
    jacoby, beavers = money_rules(match)
    s = Series.new(STANDARD, games=0, seed=seed, length=match.length, cube=True,
                   jacoby=jacoby, beavers=beavers)  # fmt: skip
    s.names = match.names
    s.starter = first_thrower(match)
    played: list[Game] = []
    for mg, rg in zip(match.games, replayed, strict=True):
        first = next((a.player for a in mg.actions if a.kind != "wins"), 0)
        rules = Rules(True, match.length, rg.score, rg.crawford, jacoby, beavers)
        g = Game.new(STANDARD, seed, len(played), starter=first, rules=rules)
        g.dice = None  # the file's dice, not drawn ones
        for i, a in enumerate(mg.actions):
            try:
                if (rolled_and_resigned(mg.actions, i) and a.dice
                        and can_move(g.board_for(a.player), *a.dice)):  # fmt: skip
                    if g.turn != a.player:
                        raise GameError("it rolls out of turn")
                    g.dice = a.dice
                    continue
                _take(g, a)
            except DoubletError as e:  # the rules of doublet.games refuse what replay took
                at = f"move {a.number}" if a.number else "its Wins line"
                who = player_name(a.player, mg.names)
                raise GameError(f"game {mg.number}, {at}, {who}: {e}") from None
        played.append(g)
    for g in played[:-1]:
        s.history.append(g)
    if played:
        s.game = played[-1]
        for g in played:
            if g.over:
                s.results.append(g.result)  # type: ignore[arg-type]
                s.score[g.result.winner] += g.result.value  # type: ignore[union-attr]
        s.crawford_game = next((g.number for g in played if g.rules.crawford), None)
    return s


def _take(g: Game, a: MatAction) -> None:
    """One entry of a match file (a play with the file's dice, a cube action, a Wins) in
    the game."""
    if a.kind == "move":
        assert a.dice is not None
        if g.turn != a.player:
            raise GameError("it plays out of turn")
        g.dice = (a.dice[0], a.dice[1])
        g.play(to_doublet_notation(a.play))
    elif a.kind == "double":
        if g.phase == "move":
            g.dice = None
        g.double(a.player)
    elif a.kind == "take":
        g.take(a.player)
    elif a.kind == "beaver":
        g.beaver(a.player)
    elif a.kind == "drop":
        g.drop(a.player)
    elif a.kind == "wins" and not g.over:  # a resignation: the loser conceded
        loser = 1 - a.player
        kind = max(1, a.value // g.cube) if g.cube else 1
        g.resign(loser, min(kind, 3))


__all__ = ["MATCH_FILES", "MAT_IS_STANDARD", "from_match", "mat_play", "to_mat", "to_match",
           "to_sgf"]  # fmt: skip
