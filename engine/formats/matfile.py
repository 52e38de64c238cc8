"""Match files: the Jellyfish / GNU Backgammon text format (``.mat``), read and replayed.

The format, as GNU Backgammon 1.07 writes it (tests/data/matches/ holds four of its
matches):

    ; [Tag "value"]                       optional header lines
     5 point match                        (0 point match: a money session)
     Game 1
     gnubg : 0                      root : 0                  player 0, player 1, scores
      1) 41: 24/20 24/23             41: 6/5* 24/20           move number, then a column
      2)                             62: 13/7 24/22           per player: dice and play
      4)  Doubles => 2                Takes                   cube actions in a column
      7) 66:                         61: 22/16 16/15          no play: a dance
          Wins 8 points                                       the winner's column

Points are each player's own (24 down to 1), 25 is the bar and 0 is off. Player 0 is
the left column. A game that ends with "Wins" before it is over by the moves was
resigned by the other player (gnubg writes no line for a resignation).

``parse_mat`` reads the text into a MatMatch; ``replay`` plays every move through the
rules (doublet.formats.position) from the starting position, the cube with it, and
checks that the players take turns (their entries alternate: a play, then the other
player's entry; a double, its answer, then the doubler's play; a dance is the dice
alone; the Wins after the winner's own last play is no turn; either player may open, a
game's first line then leaving the left column empty), each "Wins", each score line,
each cube value and the Crawford game (no double; the first game in which exactly one
side needs a point), and in money play the Jacoby rule of a ``; [Jacoby "On"]`` header:
a move that does not parse or is not legal, an entry or cube action out of turn or a
wrong score is a MatchFileError naming the game, the move number, the player and the
text. A beaver (``Beavers => 4``, money play only) is the taker's answer; the doubler
rolls next. A game's first roll is no doublet where the opening throw gave it (see
``replay``).

GNU Backgammon's SGF (``.sgf``, ``GM[6]``), as gnubg 1.07 writes it, one game tree a
game:

    (;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:5][game:0][ws:0][bs:0]
    PW[gnubg]PB[root]DT[2026-12-01]RU[Crawford]RE[W+8]     root: match, players, result
    ;W[41xtxw]                  White (player 0) plays 4-1: 24/20 24/23, a letter a point
    ;B[double]                  Black doubles; ;W[take] or ;W[drop]
    ;W[66])                     a dance: the dice alone

``parse_sgf`` reads it into the match that parse_mat reads from the same match's .mat
(the same entries, line numbers and hit marks), ``write_sgf`` writes it (gnubg's four
matches come back node for node, but for gnubg's analysis), ``write_mat`` writes the
.mat; read back, each is the same match. tests/test_matfile_props.py checks the round
trips on random matches, and GNU Backgammon imports what both writers write with the
same winners and points (tests/test_matfile.py, tests/test_selfplay_matches.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from doublet.core import board as B
from doublet.core.errors import DoubletError, MatchFileError, clipped
from doublet.formats.notation import can_move, single_moves
from doublet.formats.position import Position

_TAG = re.compile(r';\s*\[([^"\]]+?)\s+"(.*)"\]\s*$')
_LENGTH = re.compile(r"\s*(\d+)\s+point match\s*$", re.I)
_GAME = re.compile(r"\s*Game\s+(\d+)\s*$", re.I)
# A name holds no colon (the score's separator; doublet's writer refuses one): [^:] keeps
# the match linear, where (.+?) took minutes on a long line of colons.
_SCORE = re.compile(r"\s*([^:]+?)\s*:\s*(\d+)\s+([^:]+?)\s*:\s*(\d+)\s*$")
_NUMBERED = re.compile(r"\s*(\d+)\)(.*)$")
# "Wins 3 points", and as Snowie, FIBS and eXtreme Gammon end a match's last game, "Wins 3
# points and the match".
_WINS = re.compile(r"\s*Wins\s+(\d+)\s+points?(?:\s+and\s+the\s+match)?\s*$", re.I)
# The start of a column's entry: a roll, or a cube word, or Wins.
_ENTRY = re.compile(r"(\d\d:|Doubles\b|Takes\b|Drops\b|Beavers\b|Wins\b)", re.I)
RIGHT_COLUMN = 28  # a column entry starting at or after this offset (after "NN) ") is player 1's
# The byte-order mark that Windows editors write at the start of a UTF-8 file: no part of
# the text, left out wherever a match file is read.
BOM = "\ufeff"


@dataclass(frozen=True)
class MatAction:
    """One entry of a move line: a play (`dice` and `play`, "" for no play) or a cube
    action ("double" with its new `value`, "take", "drop", "beaver"), or "wins"."""

    game: int
    number: int  # the move line's number (0 for a Wins line of its own)
    player: int
    kind: str
    dice: tuple[int, int] | None = None
    play: str = ""
    value: int = 0  # double: the cube's new value; wins: the points
    text: str = ""  # as written


@dataclass
class MatGame:
    number: int
    names: tuple[str, str]
    score: tuple[int, int]  # before the game
    actions: list[MatAction] = field(default_factory=list)


@dataclass
class MatMatch:
    length: int  # 0: money
    tags: dict[str, str]
    games: list[MatGame]

    @property
    def names(self) -> tuple[str, str]:
        """The players' names: the first game's, else the header's Player 1 and 2 tags
        (a file with no game yet); a name left empty (an .sgf's ``PW[]``) is "player 1"
        or "player 2"."""
        if self.games:
            got = self.games[0].names
        else:
            got = (self.tags.get("Player 1", ""), self.tags.get("Player 2", ""))
        return (got[0].strip() or "player 1", got[1].strip() or "player 2")


def player_name(player: int, names: tuple[str, str] = ("", "")) -> str:
    """A player as a match file's reader knows them: "player 1" is the left column (the
    header's Player 1, SGF's White), with the name where the file gives one."""
    name = names[player] if 0 <= player < len(names) else ""
    return f"player {player + 1}" + (f" ({name})" if name else "")


def _where(game: int, number: int, player: int | None, text: str, after: int = 0,
           names: tuple[str, str] = ("", "")) -> str:  # fmt: skip
    """Where an entry is: its game and move number (a "Wins" line has none: `after`, the
    last move before it), its player and its text."""
    who = "" if player is None else f", {player_name(player, names)}"
    at = f"move {number}" if number or not after else f"after move {after}"
    return f"game {game}, {at}{who}: {clipped(text.strip())}"


def _entry(game: int, number: int, player: int, text: str,
           names: tuple[str, str] = ("", "")) -> MatAction:  # fmt: skip
    t = text.strip()
    m = re.fullmatch(r"(\d)(\d):\s*(.*)", t)
    if m:
        d1, d2 = int(m.group(1)), int(m.group(2))
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            where = _where(game, number, player, t, names=names)
            raise MatchFileError(f"{where}: dice {d1}{d2} are not a roll")
        return MatAction(game, number, player, "move", (d1, d2), m.group(3).strip(), 0, t)
    m = re.fullmatch(r"(Doubles|Beavers)\s*=>\s*(\d+)", t, re.I)
    if m:
        kind = "double" if m.group(1).lower() == "doubles" else "beaver"
        return MatAction(game, number, player, kind, value=int(m.group(2)), text=t)
    low = t.lower()
    if low in ("takes", "drops"):
        return MatAction(game, number, player, low[:-1], text=t)
    m = _WINS.fullmatch(t)
    if m:
        return MatAction(game, number, player, "wins", value=int(m.group(1)), text=t)
    raise MatchFileError(f"{_where(game, number, player, t, names=names)}: not a move or a cube "
                         "action")  # fmt: skip


def parse_mat(text: str) -> MatMatch:
    """Read a .mat file's text (see the module docstring); MatchFileError names the line."""
    tags: dict[str, str] = {}
    length: int | None = None
    games: list[MatGame] = []
    lines = text.removeprefix(BOM).splitlines()
    right = _right_column(lines)
    for k, raw in enumerate(lines, 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.lstrip().startswith(";"):
            m = _TAG.match(line.strip())
            if m:
                tags[m.group(1)] = m.group(2)
            continue
        if length is None:
            m = _LENGTH.fullmatch(line)
            if not m:
                got = clipped(line.strip())
                raise MatchFileError(f"line {k}: expected ' N point match', got {got}")
            length = int(m.group(1))
            continue
        m = _GAME.fullmatch(line)
        if m:
            games.append(MatGame(int(m.group(1)), ("", ""), (0, 0)))
            continue
        if not games:
            raise MatchFileError(f"line {k}: expected ' Game 1', got {clipped(line.strip())}")
        g = games[-1]
        # The line after " Game K" is its score line, even when a name looks like the
        # start of a move line ("1) : 0 ...").
        m = _SCORE.fullmatch(line) if not g.actions and g.names == ("", "") else None
        if m:
            g.names = (m.group(1), m.group(3))
            g.score = (int(m.group(2)), int(m.group(4)))
            continue
        m = _NUMBERED.fullmatch(line)
        if m:
            number, rest = int(m.group(1)), m.group(2)
            columns = _columns(rest, right)
            if rest.strip() and (not columns or rest[: columns[0][0]].strip()):
                # text that is no entry ("51 3/0 1/0" without its colon, "31" cut short):
                # refused, not dropped (the game would then end by a resignation)
                raise MatchFileError(f"game {g.number}, line {k}: cannot read "
                                     f"{clipped(line.strip())}: an entry is a roll ('51: "
                                     "3/off 1/off'), a cube action or a Wins")  # fmt: skip
            ends = [at for at, _ in columns[1:]] + [len(rest)]  # each entry to the next
            for (start, player), end in zip(columns, ends, strict=True):
                g.actions.append(_entry(g.number, number, player, rest[start:end], g.names))
            continue
        m = _WINS.fullmatch(line)
        if m:
            indent = len(line) - len(line.lstrip())
            player = 0 if indent < right else 1
            g.actions.append(MatAction(g.number, 0, player, "wins", value=int(m.group(1)),
                                       text=line.strip()))  # fmt: skip
            continue
        m = _SCORE.fullmatch(line)
        if m and not g.actions:
            g.names = (m.group(1), m.group(3))
            g.score = (int(m.group(2)), int(m.group(4)))
            continue
        raise MatchFileError(f"game {g.number}, line {k}: cannot read {clipped(line.strip())}")
    if length is None:
        raise MatchFileError("not a match file: no ' N point match' line")
    return MatMatch(length, tags, games)


def _right_column(lines: list[str]) -> int:
    """Where player 1's column starts in this file's move lines (offset after 'NN)'):
    RIGHT_COLUMN, or less in a file written with narrower columns than gnubg's, as the
    lines with two entries (neither a Wins) show (a review: a file with the columns 4
    spaces apart had both players' entries read as player 0's)."""
    seconds = []
    for line in lines:
        m = _NUMBERED.fullmatch(line.rstrip())
        if m is None:
            continue
        starts = [e.start() for e in _ENTRY.finditer(m.group(2))]
        if len(starts) >= 2 and "wins" not in m.group(2).lower():
            seconds.append(starts[1])
    return min([RIGHT_COLUMN, *seconds])


def _columns(rest: str, right: int = RIGHT_COLUMN) -> list[tuple[int, int]]:
    """(offset, player) of the column entries of a move line's text after 'NN)', player
    1's column starting at offset `right`. A Wins
    is an entry of its own even in the column of the entry before it: gnubg writes a
    roll and the Wins of the same player in one column ("54:       Wins 2 points", the
    other player having resigned after that roll)."""
    out: list[tuple[int, int]] = []
    for m in _ENTRY.finditer(rest):
        player = 0 if m.start() < right else 1
        if not out or out[-1][1] != player or m.group(1).lower() == "wins":
            out.append((m.start(), player))
    return out


def to_mat_notation(play: str) -> str:
    """Doublet's notation in the .mat file's: the bar is 25, off is 0."""
    return re.sub(r"\bbar\b", "25", re.sub(r"\boff\b", "0", play))


def to_doublet_notation(play: str) -> str:
    """gnubg's .mat play text in Doublet's notation: point 25 is the bar, 0 is off."""
    parts = []
    for part in play.split():
        pieces = []
        for piece in part.split("/"):
            m = re.fullmatch(r"(\d+)(\**)(\(\d\))?", piece)
            if m and m.group(1) == "25":
                piece = "bar" + m.group(2) + (m.group(3) or "")
            elif m and m.group(1) == "0":
                piece = "off" + m.group(2) + (m.group(3) or "")
            pieces.append(piece)
        parts.append("/".join(pieces))
    return " ".join(parts)


@dataclass(frozen=True)
class ReplayedMove:
    """A play of a replayed game: who, the position before it (that player's view), the
    dice, the play (Doublet's notation), the cube (value, owner: -1 centred, else the
    player), and the score before the game."""

    game: int
    number: int
    player: int
    board: np.ndarray
    dice: tuple[int, int]
    play: str
    cube: int
    owner: int


@dataclass
class ReplayedGame:
    number: int
    score: tuple[int, int]
    moves: list[ReplayedMove]
    cube_actions: list[MatAction]
    winner: int
    points: int
    resigned: bool = False  # the loser conceded (a "Wins" before the game was over)
    crawford: bool = False  # the Crawford game
    # 1, 2, 3: a single game, a gammon, a backgammon; a resignation's is read from its
    # points (1 under the Jacoby rule at a cube of 1, whatever was resigned)
    kind: int = 1


def money_rules(match: MatMatch) -> tuple[bool, bool]:
    """(Jacoby, beavers) of a money session's file: its "Jacoby" and "Beaver" tags "On",
    or a beaver played; both False in a match."""
    if match.length:
        return False, False
    on = {k: match.tags.get(k, "").strip().lower() == "on" for k in ("Jacoby", "Beaver")}
    beaver_played = any(a.kind == "beaver" for g in match.games for a in g.actions)
    return on["Jacoby"], on["Beaver"] or beaver_played


def crawford_rule(match: MatMatch) -> bool:
    """Whether the match is played with the Crawford rule: every match is unless its
    "Crawford" tag says "Off" (gnubg's SGF of a match without it has no RU[Crawford]; its
    .mat says nothing, and reads as a match with the rule, as gnubg reads it)."""
    return bool(match.length) and match.tags.get("Crawford", "On").strip().lower() != "off"


# The header tag that names the player who threw first with two dice in game 1, with no
# opening throw ("Player 1" or "Player 2"; doublet play --first, Series.starter).
FIRST_THROW = "First throw"


ANYONE = -1  # replay's first_throw: either player may open the game with a doublet


def first_thrower(match: MatMatch) -> int | None:
    """The player who had the first throw of game 1 with both dice (its FIRST_THROW tag),
    or None: the opening throw decided who started."""
    value = match.tags.get(FIRST_THROW, "").strip().lower()
    return {"player 1": 0, "player 2": 1}.get(value)


def rolled_and_resigned(actions: Sequence[MatAction], i: int) -> bool:
    """Whether entry `i` is dice rolled and not played: a roll with no play that is the
    game's last entry but its Wins. Its player rolled, then a side resigned (gnubg writes
    "62:" and the winner's Wins), or the game stops there unfinished (gnubg's file of a
    match in progress ends with the roll to play). A dance, the dice with no legal play,
    reads the same there and ends the same."""
    a = actions[i]
    rest = actions[i + 1 :]
    return (a.kind == "move" and not a.play
            and (not rest or (len(rest) == 1 and rest[0].kind == "wins")))  # fmt: skip


def replay(match: MatMatch, unfinished: bool = False) -> list[ReplayedGame]:
    """Play every game of the match through the rules; MatchFileError at the first move,
    cube action or score that does not fit. `unfinished`: the last game may end before
    anyone has won (a match still being played; its winner is -1).

    A game's first roll is no doublet where the opening throw (one die each) decided who
    starts, the starter playing those two dice (RULES.md): after a gammon or backgammon.
    The winner of a single game has the first throw of the next game with both dice (seed
    002, as doublet.games plays a series). In game 1 the FIRST_THROW tag's player may
    (doublet play --first: one player throws first, with both dice); without the tag game
    1 is not checked, as that command's files from before the tag do not say so."""
    out: list[ReplayedGame] = []
    score = [0, 0]
    crawford_played = False
    jacoby = money_rules(match)[0]
    tagged = first_thrower(match)  # who may open the game with a doublet: game 1's
    thrower: int | None = ANYONE if tagged is None else tagged  # tag, else either player
    for k, g in enumerate(match.games):
        said = f"game {g.number}: its score line says {g.score[0]}-{g.score[1]}"
        if min(g.score) < 0:
            raise MatchFileError(f"{said}: a score is 0 points or more")
        if match.length and tuple(score) != g.score and out:
            raise MatchFileError(f"{said}, but the games before it make {score[0]}-{score[1]}")
        if match.length and max(g.score) >= match.length:
            n = match.length
            raise MatchFileError(f"{said}, but a {n}-point match is over once a player has "
                                 f"{n} points")  # fmt: skip
        score = list(g.score)
        crawford = (crawford_rule(match) and not crawford_played
                    and _crawford(match.length, score))  # fmt: skip
        crawford_played = crawford_played or crawford
        last = unfinished and k == len(match.games) - 1
        out.append(_replay_game(g, crawford, jacoby, last, beavers=not match.length,
                                first_throw=thrower))  # fmt: skip
        r = out[-1]
        if r.winner >= 0:
            score[r.winner] += r.points
        thrower = r.winner if r.winner >= 0 and r.kind == 1 else None
    return out


def _crawford(length: int, score: list[int] | tuple[int, int]) -> bool:
    """Whether a game at this score is the Crawford game, if none was played before: the
    first in which exactly one side needs one point (as GNU Backgammon and doublet.games
    have it; in a 1-point match both do, and the cube may be turned)."""
    return [length - x == 1 for x in score].count(True) == 1


def _replay_game(g: MatGame, crawford: bool = False, jacoby: bool = False,
                 unfinished: bool = False, beavers: bool = True,
                 first_throw: int | None = None) -> ReplayedGame:  # fmt: skip
    """One game through the rules. `beavers`: money play, where a beaver may answer a
    double; `first_throw`: the player who may open the game with a doublet (see replay)."""
    board = B.starting()
    mover: int | None = None  # whose view `board` is
    cube, owner = 1, -1
    offered: int | None = None  # the player who doubled, awaiting an answer
    moves: list[ReplayedMove] = []
    cube_actions: list[MatAction] = []
    winner: int | None = None
    points = 0
    kind = 1
    resigned = False
    last = 0  # the last move number seen
    before: MatAction | None = None  # the last entry that is not a Wins
    for i, a in enumerate(g.actions):
        last = a.number or last
        where = _where(g.number, a.number, a.player, a.text or _entry_text(a), last, g.names)
        if winner is not None and a.kind != "wins":
            raise MatchFileError(f"{where}: the game is over already")
        view = board if mover in (None, a.player) else B.flip(board)  # a.player's view
        # dice not played where a play was there to make (else a dance, the play it is)
        if rolled_and_resigned(g.actions, i) and a.dice and can_move(view, *a.dice):
            if offered is not None:
                raise MatchFileError(f"{where}: a double is waiting for its answer")
            if before is not None and before.player == a.player:
                raise MatchFileError(f"{where}: out of turn: the entry before it (move "
                                     f"{before.number}) is this player's too, and the "
                                     "players take turns")  # fmt: skip
            before = a
            continue
        if a.kind != "wins":
            # The players' entries alternate: a play, then the other's; a double, the
            # other's answer, then the doubler's play (a dance is an entry too: the dice
            # alone). The Wins after the winner's own last play is no turn.
            if before is not None and before.player == a.player:
                raise MatchFileError(f"{where}: out of turn: the entry before it (move "
                                     f"{before.number}) is this player's too, and the "
                                     "players take turns")  # fmt: skip
            before = a
        if a.kind == "move":
            if offered is not None:
                raise MatchFileError(f"{where}: a double is waiting for its answer")
            if mover is None:
                mover = a.player
            elif a.player != mover:
                board = B.flip(board)
                mover = a.player
            assert a.dice is not None
            if (not moves and a.dice[0] == a.dice[1]
                    and first_throw not in (a.player, ANYONE)):  # fmt: skip
                raise MatchFileError(f"{where}: a game's first roll cannot be a doublet: the "
                                     "opening throw (one die each, thrown again on a tie) "
                                     "gives it; only the winner of a single game throws "
                                     "first with both dice in the next game")  # fmt: skip
            try:
                play = Position(board).play(to_doublet_notation(a.play), *a.dice)
            except DoubletError as e:
                raise MatchFileError(f"{where}: {e}") from None
            moves.append(ReplayedMove(g.number, a.number, a.player, board.copy(), a.dice,
                                      play.notation, cube, owner))  # fmt: skip
            board = np.array(play.board, dtype=np.int8)  # the mover's view after its play
            result = B.outcome(board)
            if result:
                # The Jacoby rule (money): gammons count single while the cube is at 1.
                kind = abs(int(result))
                winner, points = a.player, (1 if jacoby and cube == 1 else kind) * cube
        elif a.kind == "double":
            if crawford:
                raise MatchFileError(f"{where}: nobody may double in the Crawford game")
            if mover is None:  # no roll yet: the opening throw comes first
                raise MatchFileError(f"{where}: nobody doubles before a game's first roll")
            if offered is not None or owner == 1 - a.player:
                raise MatchFileError(f"{where}: this player may not double now")
            if a.value != 2 * cube:
                raise MatchFileError(f"{where}: the cube is at {cube}, so a double makes it "
                                     f"{2 * cube}, not {a.value}")  # fmt: skip
            offered = a.player
            cube_actions.append(a)
        elif a.kind in ("take", "drop", "beaver"):
            if offered is None or a.player == offered:
                raise MatchFileError(f"{where}: there is no double of the other player to answer")
            if a.kind == "beaver" and not beavers:
                raise MatchFileError(f"{where}: a beaver in a match: beavers are for money "
                                     "play only")  # fmt: skip
            if a.kind == "beaver" and a.value != 4 * cube:
                raise MatchFileError(f"{where}: the cube is at {cube}, so a beaver makes it "
                                     f"{4 * cube}, not {a.value}")  # fmt: skip
            cube_actions.append(a)
            if a.kind == "drop":
                winner, points = offered, cube
            else:
                cube *= 2 if a.kind == "take" else 4
                owner = a.player
                offered = None
        elif a.kind == "wins":
            if winner is None:
                # Not over by the moves: the other player resigned (gnubg's .mat writes
                # no resignation line), conceding a single game, a gammon or a backgammon.
                if offered is not None:
                    raise MatchFileError(f"{where}: a double is waiting for its answer")
                if a.value not in (cube, 2 * cube, 3 * cube):
                    worth = f"{cube}, {2 * cube} or {3 * cube}"
                    raise MatchFileError(f"{where}: the moves do not end the game, and a "
                                         f"resignation at a cube of {cube} is worth {worth} "
                                         f"points, not {a.value}")  # fmt: skip
                winner, points, kind = a.player, a.value, a.value // cube
                resigned = True
            if a.player != winner or a.value != points:
                who = player_name(winner, g.names)
                raise MatchFileError(f"{where}: by the moves, {who} wins {points} "
                                     f"point{'s' * (points != 1)}")  # fmt: skip
    if winner is None:
        if not unfinished:
            raise MatchFileError(f"game {g.number}: it ends before anyone has won")
        winner = -1
    return ReplayedGame(g.number, g.score, moves, cube_actions, winner, points, resigned, crawford,
                        kind)  # fmt: skip


# -- writing ----------------------------------------------------------------------------------


def _entry_text(a: MatAction) -> str:
    if a.kind == "move":
        assert a.dice is not None
        return f"{a.dice[0]}{a.dice[1]}: {a.play}".rstrip()
    if a.kind == "double":
        return f"Doubles => {a.value}"
    if a.kind == "beaver":
        return f"Beavers => {a.value}"
    if a.kind == "take":
        return "Takes"
    if a.kind == "drop":
        return "Drops"
    return f"Wins {a.value} point{'s' * (a.value != 1)}"


class _Lines:
    """The numbers of a .mat game's move lines, as GNU Backgammon lays the entries out: a
    line holds player 0's entry, then player 1's, so an entry of player 0 after one of
    player 1 (or a second one of either) starts the next line."""

    def __init__(self) -> None:
        self.number = 0
        self.row = [True, True]  # whether the current line's columns are taken

    def entry(self, player: int) -> int:
        """The number of the line that an entry of `player` goes on next."""
        if self.row[1] or (player == 0 and self.row[0]):
            self.number += 1
            self.row = [False, False]
        self.row[player] = True
        return self.number

    def beside(self, winner: int) -> bool:
        """Whether the winner's Wins goes on the current line (gnubg: the winner's column
        is the right one, the loser's last entry is in the left one) rather than on a
        line of its own."""
        return winner == 1 and self.row[0] and not self.row[1]

    def close(self) -> None:
        """A line of its own was written: the next entry starts a new line."""
        self.row = [True, True]


def write_mat(match: MatMatch) -> str:
    """The match as .mat text, laid out as GNU Backgammon writes it (so that parse_mat
    reads it back to the same match; a match read from .sgf is thus converted). A Wins
    numbered 0 goes on a line of its own, any other entry on the line _Lines gives it."""
    lines = [f'; [{k} "{v}"]' for k, v in match.tags.items()]
    lines += ["", f" {match.length} point match", ""]
    for g in match.games:
        lines.append(f" Game {g.number}")
        lines.append(f" {g.names[0]} : {g.score[0]}".ljust(31) + f" {g.names[1]} : {g.score[1]}")
        layout = _Lines()
        number = 0
        row: list[str] | None = None
        for a in g.actions:
            if a.kind == "wins" and a.number == 0:  # a line of its own, the winner's column
                if row is not None:
                    lines.append(_line(number, row))
                    row = None
                lines.append(" " * (6 if a.player == 0 else 36) + _entry_text(a))
                layout.close()
                continue
            n = layout.entry(a.player)
            if n != number:
                if row is not None:
                    lines.append(_line(number, row))
                number, row = n, ["", ""]
            assert row is not None
            row[a.player] = _entry_text(a)
        if row is not None:
            lines.append(_line(number, row))
        lines.append("")
    return "\n".join(lines) + "\n"


def _line(number: int, row: list[str]) -> str:
    return f"{number:3d})  {row[0]:<28} {row[1]}".rstrip()


# -- GNU Backgammon's SGF ----------------------------------------------------------------------

# An SGF node: its properties, each with its values (unescaped).
SgfNode = dict[str, list[str]]

# Tags of a .mat header that have a property of their own in gnubg's SGF (the first
# game's root node); gnubg keeps the others as lines '[Name "value"]' in the game
# comment GC, and so does write_sgf.
_SGF_TAGS = {"Event": "EV", "Round": "RO", "Site": "PC", "Transcriber": "AN"}
_TAG_LINE = re.compile(r'\s*\[([^"\]]+?)\s+"(.*)"\]\s*')
_DATE = re.compile(r"(\d{4})\.(\d\d)\.(\d\d)")
_SGF_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
SGF_APPLICATION = "Doublet"


def _sgf_trees(text: str) -> list[list[SgfNode]]:
    """The game trees of an SGF collection, each as the nodes of its main line (the first
    variation at each branch, the one gnubg reads). A value's backslash escapes the next
    character (a backslash before a line break drops it)."""
    trees: list[list[SgfNode]] = []
    stack: list[list[bool]] = []  # each open tree: [on the main line, has a child tree]
    node: SgfNode | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "(":
            if stack:
                parent = stack[-1]
                stack.append([parent[0] and not parent[1], False])
                parent[1] = True
            else:
                trees.append([])
                stack.append([True, False])
            node = None
            i += 1
        elif c == ")":
            if not stack:
                raise MatchFileError(f"SGF: a ')' at character {i} closes no game tree")
            stack.pop()
            node = None
            i += 1
        elif c == ";":
            if not stack:
                raise MatchFileError(f"SGF: a node at character {i} is outside any game tree")
            node = {}
            if stack[-1][0]:
                trees[-1].append(node)
            i += 1
        elif c.isalpha():
            m = re.compile(r"[A-Za-z]+").match(text, i)
            assert m
            ident = "".join(ch for ch in m.group() if ch.isupper())  # FF[3]: "AddBlack" is AB
            i = m.end()
            values: list[str] = []
            while True:
                while i < n and text[i].isspace():
                    i += 1
                if i >= n or text[i] != "[":
                    break
                value, i = _sgf_value(text, i)
                values.append(value)
            if node is None or not values:
                raise MatchFileError(f"SGF: the property {m.group()} at character {m.start()} "
                                     "is not in a node or has no value")  # fmt: skip
            node.setdefault(ident, []).extend(values)
        elif c.isspace():
            i += 1
        else:
            raise MatchFileError(f"SGF: {c!r} at character {i} is not SGF")
    if stack:
        raise MatchFileError("SGF: the text ends inside a game tree (a ')' is missing)")
    return trees


def _sgf_value(text: str, i: int) -> tuple[str, int]:
    """The value that starts with the '[' at text[i], unescaped, and the index after it."""
    out: list[str] = []
    i += 1
    while i < len(text) and text[i] != "]":
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
            if text[i] != "\n":
                out.append(text[i])
        else:
            out.append(text[i])
        i += 1
    if i >= len(text):
        raise MatchFileError("SGF: the text ends inside a property value (a ']' is missing)")
    return "".join(out), i + 1


def _sgf_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


def _sgf_point(c: str, player: int) -> int:
    """An SGF point letter as the player's own point: 'a'..'x' are White's (player 0's)
    points 1..24, Black's 24..1; 'y' the bar, 'z' off (gnubg's sgf.c, Point)."""
    if c == "y":
        return 25
    if c == "z":
        return 0
    k = ord(c) - ord("a") + 1
    if not 1 <= k <= 24:
        raise ValueError(c)
    return k if player == 0 else 25 - k


def _sgf_letter(point: int, player: int) -> str:
    """The inverse of _sgf_point: a player's own point (25 the bar, 0 off) as a letter."""
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") - 1 + (point if player == 0 else 25 - point))


def _apply(board: np.ndarray, steps: list[tuple[int, int]]) -> list[str]:
    """Move the mover's checkers of `board` (its view, changed in place) by the
    single-die steps; each step's text as gnubg's .mat writes it: a hit marked ('*')
    on the step that hits."""
    parts = []
    for src, dst in steps:
        board[src] -= 1
        hit = False
        if dst == 0:
            board[B.MY_OFF] += 1
        else:
            if board[dst] == -1:
                board[dst] = 0
                board[B.OPP_BAR] -= 1
                hit = True
            board[dst] += 1
        parts.append(f"{src}/{dst}" + "*" * hit)
    return parts


def parse_sgf(text: str) -> MatMatch:
    """Read GNU Backgammon's SGF into the MatMatch that parse_mat reads from the same
    match's .mat: one game tree a game (``GM[6]``; ``MI[length:N][game:K][ws:W][bs:B]``,
    ``PW``/``PB`` the players (White is player 0, the .mat file's left column), the
    result ``RE[W+2]``, ``RE[W+2R]`` for a resignation, ``RU[Crawford:CrawfordGame:
    Jacoby]``), moves ``;W[52lqac]`` (dice, then a from-to letter pair a die), ``;W[double]``,
    ``[take]``, ``[drop]``; a beaver is the taker's ``[double]``, then the doubler's
    ``[take]`` (as gnubg writes it). The entries get the numbers of the .mat file's move
    lines, and a play its hit marks, as gnubg's .mat export has them. The first game's
    ``DT``, ``EV``, ``RO``, ``PC``, ``AN`` are the tags EventDate, Event, Round, Site and
    Transcriber; lines ``[Name "value"]`` of its comment ``GC`` (gnubg's place for the
    others) are tags too, and ``RU[Jacoby]`` is ``Jacoby "On"``. The games' ``MI``
    give one match length (a game that says another is refused)."""
    text = text.removeprefix(BOM)
    trees = [t for t in _sgf_trees(text) if t and t[0].get("GM", [""])[0].strip() == "6"]
    if not trees:
        raise MatchFileError("not a backgammon SGF file (no game tree with GM[6])")
    games: list[MatGame] = []
    length = 0
    first_mi: int | None = None  # the first game whose MI[] gives the length
    tags: dict[str, str] = {}
    for k, nodes in enumerate(trees, 1):
        root = nodes[0]
        number, score = k, (0, 0)
        if "MI" in root:
            info = dict(v.split(":", 1) for v in root["MI"] if ":" in v)
            try:
                given = int(info.get("length", 0))
                number = int(info.get("game", k - 1)) + 1
                score = (int(info.get("ws", 0)), int(info.get("bs", 0)))
            except ValueError:
                raise MatchFileError(f"game {k}: a bad MI[] {root['MI']}") from None
            if given < 0:
                raise MatchFileError(f"game {number}: MI[length:{given}]: the match length is "
                                     "not valid: 1 point or more, or 0 for money play")  # fmt: skip
            if first_mi is not None and given != length:
                was, now = _length_words(length), _length_words(given)
                raise MatchFileError(f"game {number}: its MI[length:{given}] says {now}, "
                                     f"but game {first_mi}'s says {was}: a file holds one "
                                     "match")  # fmt: skip
            if first_mi is None:
                first_mi = number
            length = given
        if root.get("CV", ["1"])[0].strip() != "1":
            raise MatchFileError(f"game {number}: the cube starts at {root['CV'][0]} (automatic "
                                 "doubles), which is not read")  # fmt: skip
        names = (root.get("PW", [""])[0], root.get("PB", [""])[0])
        _sgf_root_tags(root, tags, length)
        result: tuple[int, int] | None = None
        if "RE" in root:
            m = re.fullmatch(r"([WB])\+(\d+)R?", root["RE"][0].strip())
            if not m:
                raise MatchFileError(f"game {number}: a result RE[{root['RE'][0]}] not read")
            result = (0 if m.group(1) == "W" else 1, int(m.group(2)))
        actions = _sgf_actions(number, nodes[1:], names)
        if result is not None:
            layout = _Lines()
            for a in actions:
                layout.entry(a.player)
            at = layout.number if layout.beside(result[0]) else 0
            actions.append(MatAction(number, at, result[0], "wins", value=result[1],
                                     text=f"RE[{root['RE'][0]}]"))  # fmt: skip
        games.append(MatGame(number, names, score, actions))
    return MatMatch(length, tags, games)


def _length_words(length: int) -> str:
    return f"a {length}-point match" if length else "money play"


def _sgf_root_tags(root: SgfNode, tags: dict[str, str], length: int) -> None:
    """The .mat tags of a game's root node, added to `tags` (the first game's count)."""
    if "DT" in root:
        m = _SGF_DATE.fullmatch(root["DT"][0].strip())
        tags.setdefault("EventDate", ".".join(m.groups()) if m else root["DT"][0])
    for tag, prop in _SGF_TAGS.items():
        if prop in root:
            tags.setdefault(tag, root[prop][0])
    if "GC" in root:
        stray = []
        for line in root["GC"][0].splitlines():
            m = _TAG_LINE.fullmatch(line)
            if m:
                tags.setdefault(m.group(1), m.group(2))
            elif line.strip():
                stray.append(line.strip())
        if stray:
            tags.setdefault("Comment", " ".join(stray))
    rules = root.get("RU", [""])[0].split(":")
    if "Jacoby" in rules and not length:
        tags.setdefault("Jacoby", "On")
    if length and "Crawford" not in rules:  # gnubg writes it in each game of a match with it
        tags.setdefault("Crawford", "Off")


def _sgf_actions(number: int, nodes: list[SgfNode],
                 names: tuple[str, str] = ("", "")) -> list[MatAction]:  # fmt: skip
    """A game's moves and cube actions, numbered as the .mat lines they go on."""
    actions: list[MatAction] = []
    layout = _Lines()
    board = B.starting()  # the mover's view, for the hit marks
    mover: int | None = None
    cube = 1
    doubled: int | None = None  # the player whose double waits for its answer
    beavered: int | None = None  # the doubler, whose take after a beaver is the beaver's
    for k, node in enumerate(nodes):
        setup = [p for p in ("AE", "AB", "AW", "CV", "CP") if p in node]
        if setup:
            raise MatchFileError(f"game {number}: a node sets up the board or the cube "
                                 f"({', '.join(setup)}); only games from the starting "
                                 "position are read")  # fmt: skip
        colour = next((p for p in node if p in ("W", "B")), None)  # gnubg: one move a node
        if colour is None:
            # gnubg's dice rolled and not played (PL, DI): after the game's last move or
            # cube action, a resignation or the game in progress follows them.
            m = re.fullmatch(r"([1-6])([1-6])", node.get("DI", [""])[0].strip())
            last = not any("W" in n or "B" in n for n in nodes[k + 1 :])
            if m and last and node.get("PL", [""])[0].strip() in ("W", "B"):
                player = 0 if node["PL"][0].strip() == "W" else 1
                d1, d2 = int(m.group(1)), int(m.group(2))
                actions.append(MatAction(number, layout.entry(player), player, "move",
                                         (max(d1, d2), min(d1, d2)), "",
                                         text=f"DI[{node['DI'][0]}]"))  # fmt: skip
            continue
        player = 0 if colour == "W" else 1
        value = node[colour][0].strip()
        if value == "take" and beavered == player:
            beavered = None  # the doubler takes the beaver: written as the beaver itself
            continue
        beavered = None
        move = layout.entry(player)
        where = _where(number, move, player, value, names=names)
        if value == "double" and doubled is not None and doubled != player:
            cube *= 4
            actions.append(MatAction(number, move, player, "beaver", value=cube, text=value))
            beavered, doubled = doubled, None
            continue
        if value in ("double", "take", "drop"):
            if value == "double":
                doubled = player
            elif value == "take" and doubled is not None:
                cube *= 2
                doubled = None
            actions.append(MatAction(number, move, player, value,
                                     value=2 * cube if value == "double" else 0,
                                     text=value))  # fmt: skip
            continue
        m = re.fullmatch(r"([1-6])([1-6])((?:[a-z][a-z])*)", value)
        if not m:
            raise MatchFileError(f"{where}: not a move")
        pairs = m.group(3)
        try:
            steps = [(_sgf_point(pairs[i], player), _sgf_point(pairs[i + 1], player))
                     for i in range(0, len(pairs), 2)]  # fmt: skip
        except ValueError:
            raise MatchFileError(f"{where}: a point letter outside a-z") from None
        if mover is not None and player != mover:
            board = B.flip(board)
        mover = player
        dice = (int(m.group(1)), int(m.group(2)))
        actions.append(MatAction(number, move, player, "move", dice,
                                 " ".join(_apply(board, steps)), text=value))  # fmt: skip
    return actions


def write_sgf(match: MatMatch) -> str:
    """The match as GNU Backgammon's SGF, as gnubg 1.07 writes a match without its
    analysis: a game tree a game (the root: ``MI``, the players, the first game's tags,
    ``RU`` with Crawford in a match, CrawfordGame, Jacoby in money play with ``Jacoby
    "On"``, the result ``RE``), then a node a move or cube action. A play is written one
    die a move (its parts as the match wrote them, when they are one; else in an order
    they can be played), a beaver as gnubg has it (see parse_sgf). parse_sgf reads the
    text back to the same match: the same games, players, scores, plays, cube actions,
    winners and points, the entries numbered as write_mat lays them out. The match is
    replayed first (the plays' single-die moves and a resignation need the positions;
    the last game may be unfinished, without ``RE``); MatchFileError if it does not."""
    replayed = replay(match, unfinished=True)
    out = []
    for k, (g, r) in enumerate(zip(match.games, replayed, strict=True)):
        root = ["(;FF[4]GM[6]CA[UTF-8]", f"AP[{SGF_APPLICATION}:{_version()}]",
                f"MI[length:{match.length}][game:{g.number - 1}][ws:{g.score[0]}]"
                f"[bs:{g.score[1]}]",
                f"PW[{_sgf_escape(g.names[0])}]PB[{_sgf_escape(g.names[1])}]"]  # fmt: skip
        if k == 0:
            root.append(_sgf_tags(match.tags, match.length))
        rules = ["Crawford"] * crawford_rule(match) + ["CrawfordGame"] * r.crawford
        if not match.length and match.tags.get("Jacoby", "").strip().lower() == "on":
            rules.append("Jacoby")
        if rules:
            root.append(f"RU[{':'.join(rules)}]")
        if r.winner >= 0:
            root.append(f"RE[{'WB'[r.winner]}+{r.points}{'R' * r.resigned}]")
        nodes = []
        moves = iter(r.moves)
        for i, a in enumerate(g.actions):
            colour = "WB"[a.player]
            if rolled_and_resigned(g.actions, i):  # the dice alone, as gnubg writes them
                assert a.dice is not None
                nodes.append(f";PL[{colour}]DI[{a.dice[0]}{a.dice[1]}]")
            elif a.kind == "move":
                nodes.append(f";{colour}[{_sgf_move(a, next(moves))}]")
            elif a.kind == "beaver":  # the taker redoubles, the doubler takes
                nodes += [f";{colour}[double]", f";{'WB'[1 - a.player]}[take]"]
            elif a.kind != "wins":
                nodes.append(f";{colour}[{a.kind}]")
        out.append("".join(root) + "".join("\n" + x for x in nodes) + ")\n")
    return "".join(out)


def _version() -> str:
    from doublet import __version__

    return __version__


def _sgf_tags(tags: dict[str, str], length: int) -> str:
    """The first game's root properties for the match's tags, in gnubg's order (a money
    session's ``Jacoby "On"`` is the rule RU[Jacoby] alone)."""
    props: dict[str, str] = {}
    rest = []
    for tag, value in tags.items():
        m = _DATE.fullmatch(value)
        if tag == "Jacoby" and value == "On" and not length:
            continue
        if tag == "EventDate" and m:
            props["DT"] = "-".join(m.groups())
        elif tag in _SGF_TAGS and value.strip() and value == value.strip():
            props[_SGF_TAGS[tag]] = value
        else:
            rest.append(f'[{tag} "{value}"]\n')
    if rest:
        props["GC"] = "".join(rest)
    order = ["DT", "EV", "RO", "PC", "AN", "GC"]
    return "".join(f"{p}[{_sgf_escape(props[p])}]" for p in order if p in props)


_STEP = re.compile(r"(\d+|bar|off)/(\d+|bar|off)\*?")


def _sgf_move(a: MatAction, mv: ReplayedMove) -> str:
    """A play as its SGF value: the dice, then a from-to letter pair a die."""
    assert a.dice is not None
    text = f"{a.dice[0]}{a.dice[1]}"
    if not a.play:
        return text
    hint: list[tuple[int, int]] = []
    for part in a.play.split():
        m = _STEP.fullmatch(part)
        if not m:
            hint = []
            break
        src, dst = (25 if x == "bar" else 0 if x == "off" else int(x) for x in m.groups())
        hint.append((src, dst))
    after = Position(mv.board).play(mv.play, *mv.dice).board
    steps = single_moves(mv.board, after, *mv.dice, hint=hint)
    return text + "".join(_sgf_letter(s, a.player) + _sgf_letter(d, a.player) for s, d in steps)


def decode_match_file(data: bytes) -> str:
    """A match file's bytes as text: UTF-16 where it starts with its byte-order mark, else
    UTF-8, else (older programs' exports, Jellyfish's and Snowie's, a player's accented
    name) Windows-1252, or Latin-1 where that has no character for a byte. MatchFileError
    for a binary file (NUL bytes outside UTF-16)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise MatchFileError("not a text match file: it starts as UTF-16 and is not "
                                 "UTF-16 past that") from None  # fmt: skip
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if b"\0" in data:
        raise MatchFileError("not a text match file: it holds NUL bytes (a binary file?)")
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_match(
    text: str,
    unfinished: bool = False,
    need_game: bool = False,
    tags: Mapping[str, str] | None = None,
) -> tuple[MatMatch, list[ReplayedGame]]:
    """A .mat or a gnubg .sgf file's text (told apart by its first characters, after a
    byte-order mark), read and replayed; with `unfinished` its last game may stop before
    anyone has won (a match still being played, as `doublet play`'s export writes one:
    its winner is -1). A file with no game yet (a header alone) reads as a match with
    none; with `need_game` it is refused (doublet review, the server's import: there is
    nothing to review). `tags` replace the file's own before the replay (doublet review's
    --jacoby and --beavers: "Jacoby" and "Beaver", "On" or "Off")."""
    text = text.removeprefix(BOM)
    if not text.strip():
        raise MatchFileError("the file is empty: no match in it")
    if text.startswith("; Doublet "):  # Game.export's text record (a review found it read as
        # a broken .mat file: "line 2: expected ' N point match'")
        raise MatchFileError(
            "this is Doublet's own text record of a game (doublet play --export FILE.txt), "
            "not a .mat or .sgf match file: export a standard game as .mat or .sgf to review "
            "it here (an Acey-Deucey game is reviewed only where it was played in the "
            "browser, doublet serve)"
        )
    m = parse_sgf(text) if re.match(r"\s*\(\s*;", text) else parse_mat(text)
    if need_game and not m.games:
        raise MatchFileError(f"no game in the file: no ' Game 1' line after ' {m.length} point "
                             "match', so nothing to review")  # fmt: skip
    m.tags.update(tags or {})
    return m, replay(m, unfinished)


__all__ = [
    "MatAction",
    "MatGame",
    "MatMatch",
    "ReplayedGame",
    "ReplayedMove",
    "decode_match_file",
    "parse_mat",
    "parse_sgf",
    "player_name",
    "read_match",
    "replay",
    "to_doublet_notation",
    "to_mat_notation",
    "write_mat",
    "write_sgf",
]
