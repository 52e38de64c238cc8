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
checks each "Wins", each score line, each cube value and the Crawford game (no
double): a move that does not parse or is not legal, a cube action out of turn or a
wrong score is a MatchFileError naming the game, the move number, the player and the
text. ``parse_sgf`` reads GNU Backgammon's .sgf into the same match, ``write_mat``
writes a match as .mat (read back, it is the same match). Not yet: an .sgf writer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from doublet.core import board as B
from doublet.core.errors import DoubletError, MatchFileError
from doublet.formats.position import Position

_TAG = re.compile(r';\s*\[([^"\]]+?)\s+"(.*)"\]\s*$')
_LENGTH = re.compile(r"\s*(\d+)\s+point match\s*$", re.I)
_GAME = re.compile(r"\s*Game\s+(\d+)\s*$", re.I)
_SCORE = re.compile(r"\s*(.+?)\s*:\s*(\d+)\s+(.+?)\s*:\s*(\d+)\s*$")
_NUMBERED = re.compile(r"\s*(\d+)\)(.*)$")
_WINS = re.compile(r"\s*Wins\s+(\d+)\s+points?\s*$", re.I)
# The start of a column's entry: a roll, or a cube word, or Wins.
_ENTRY = re.compile(r"(\d\d:|Doubles\b|Takes\b|Drops\b|Beavers\b|Wins\b)", re.I)
RIGHT_COLUMN = 28  # a column entry starting at or after this offset (after "NN) ") is player 1's


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
        return self.games[0].names if self.games else ("", "")


def _where(game: int, number: int, player: int | None, text: str) -> str:
    who = "" if player is None else f", player {player}"
    return f"game {game}, move {number}{who}: {text.strip()!r}"


def _entry(game: int, number: int, player: int, text: str) -> MatAction:
    t = text.strip()
    m = re.fullmatch(r"(\d)(\d):\s*(.*)", t)
    if m:
        d1, d2 = int(m.group(1)), int(m.group(2))
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            raise MatchFileError(f"{_where(game, number, player, t)}: dice {d1}{d2} are not a roll")
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
    raise MatchFileError(f"{_where(game, number, player, t)}: not a move or a cube action")


def parse_mat(text: str) -> MatMatch:
    """Read a .mat file's text (see the module docstring); MatchFileError names the line."""
    tags: dict[str, str] = {}
    length: int | None = None
    games: list[MatGame] = []
    for k, raw in enumerate(text.splitlines(), 1):
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
                raise MatchFileError(f"line {k}: expected ' N point match', got {line.strip()!r}")
            length = int(m.group(1))
            continue
        m = _GAME.fullmatch(line)
        if m:
            games.append(MatGame(int(m.group(1)), ("", ""), (0, 0)))
            continue
        if not games:
            raise MatchFileError(f"line {k}: expected ' Game 1', got {line.strip()!r}")
        g = games[-1]
        m = _NUMBERED.fullmatch(line)
        if m:
            number, rest = int(m.group(1)), m.group(2)
            for start, player in _columns(rest):
                end = _column_end(rest, start)
                g.actions.append(_entry(g.number, number, player, rest[start:end]))
            continue
        m = _WINS.fullmatch(line)
        if m:
            indent = len(line) - len(line.lstrip())
            player = 0 if indent < RIGHT_COLUMN else 1
            g.actions.append(MatAction(g.number, 0, player, "wins", value=int(m.group(1)),
                                       text=line.strip()))  # fmt: skip
            continue
        m = _SCORE.fullmatch(line)
        if m and not g.actions:
            g.names = (m.group(1), m.group(3))
            g.score = (int(m.group(2)), int(m.group(4)))
            continue
        raise MatchFileError(f"game {g.number}, line {k}: cannot read {line.strip()!r}")
    if length is None:
        raise MatchFileError("not a match file: no ' N point match' line")
    return MatMatch(length, tags, games)


def _columns(rest: str) -> list[tuple[int, int]]:
    """(offset, player) of the column entries of a move line's text after 'NN)'."""
    out: list[tuple[int, int]] = []
    for m in _ENTRY.finditer(rest):
        player = 0 if m.start() < RIGHT_COLUMN else 1
        if not out or out[-1][1] != player:
            out.append((m.start(), player))
    return out


def _column_end(rest: str, start: int) -> int:
    if start < RIGHT_COLUMN:
        nxt = [m.start() for m in _ENTRY.finditer(rest) if m.start() >= RIGHT_COLUMN]
        return nxt[0] if nxt else len(rest)
    return len(rest)


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


def replay(match: MatMatch) -> list[ReplayedGame]:
    """Play every game of the match through the rules; MatchFileError at the first move,
    cube action or score that does not fit."""
    out: list[ReplayedGame] = []
    score = [0, 0]
    crawford_played = False
    for g in match.games:
        if match.length and tuple(score) != g.score and out:
            raise MatchFileError(f"game {g.number}: its score line says {g.score[0]}-{g.score[1]}, "
                                 f"but the games before it make {score[0]}-{score[1]}")  # fmt: skip
        score = list(g.score)
        # The Crawford game: the first in which a side needs one point; nobody doubles.
        crawford = bool(match.length) and not crawford_played and match.length - 1 in score
        crawford_played = crawford_played or crawford
        out.append(_replay_game(g, crawford))
        r = out[-1]
        score[r.winner] += r.points
    return out


def _replay_game(g: MatGame, crawford: bool = False) -> ReplayedGame:
    board = B.starting()
    mover: int | None = None  # whose view `board` is
    cube, owner = 1, -1
    offered: int | None = None  # the player who doubled, awaiting an answer
    moves: list[ReplayedMove] = []
    cube_actions: list[MatAction] = []
    winner: int | None = None
    points = 0
    resigned = False
    for a in g.actions:
        where = _where(g.number, a.number, a.player, a.text)
        if winner is not None and a.kind != "wins":
            raise MatchFileError(f"{where}: the game is over already")
        if a.kind == "move":
            if offered is not None:
                raise MatchFileError(f"{where}: a double is waiting for its answer")
            if mover is None:
                mover = a.player
            elif a.player != mover:
                board = B.flip(board)
                mover = a.player
            assert a.dice is not None
            try:
                play = Position(board).play(to_doublet_notation(a.play), *a.dice)
            except DoubletError as e:
                raise MatchFileError(f"{where}: {e}") from None
            moves.append(ReplayedMove(g.number, a.number, a.player, board.copy(), a.dice,
                                      play.notation, cube, owner))  # fmt: skip
            board = np.array(play.board, dtype=np.int8)  # the mover's view after its play
            result = B.outcome(board)
            if result:
                winner, points = a.player, abs(int(result)) * cube
        elif a.kind == "double":
            if crawford:
                raise MatchFileError(f"{where}: nobody may double in the Crawford game")
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
                if a.value not in (cube, 2 * cube, 3 * cube) or offered is not None:
                    raise MatchFileError(f"{where}: the game is not over, and {a.value} points "
                                         f"is not a resignation at a cube of {cube}")  # fmt: skip
                winner, points = a.player, a.value
                resigned = True
            if a.player != winner or a.value != points:
                raise MatchFileError(f"{where}: by the moves, player {winner} wins {points} "
                                     f"point{'s' * (points != 1)}")  # fmt: skip
    if winner is None:
        raise MatchFileError(f"game {g.number}: it ends before anyone has won")
    return ReplayedGame(g.number, g.score, moves, cube_actions, winner, points, resigned, crawford)


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


def write_mat(match: MatMatch) -> str:
    """The match as .mat text, laid out as GNU Backgammon writes it (so that parse_mat
    reads it back to the same match; a match read from .sgf is thus converted)."""
    lines = [f'; [{k} "{v}"]' for k, v in match.tags.items()]
    lines += ["", f" {match.length} point match", ""]
    for g in match.games:
        lines.append(f" Game {g.number}")
        lines.append(f" {g.names[0]} : {g.score[0]}".ljust(31) + f" {g.names[1]} : {g.score[1]}")
        # Lines are numbered 1, 2, ... in the order of the actions: a line holds player
        # 0's entry, then player 1's, so an entry of player 0 after one of player 1 (or a
        # second one of either) starts the next line.
        number = 0
        row: list[str] | None = None
        for a in g.actions:
            if a.number == 0:  # a Wins line of its own, in the winner's column
                if row is not None:
                    lines.append(_line(number, row))
                    row = None
                lines.append(" " * (6 if a.player == 0 else 36) + _entry_text(a))
                continue
            if row is None or row[1] or (a.player == 0 and row[0]):
                if row is not None:
                    lines.append(_line(number, row))
                number += 1
                row = ["", ""]
            row[a.player] = _entry_text(a)
        if row is not None:
            lines.append(_line(number, row))
        lines.append("")
    return "\n".join(lines) + "\n"


def _line(number: int, row: list[str]) -> str:
    return f"{number:3d})  {row[0]:<28} {row[1]}".rstrip()


# -- GNU Backgammon's SGF ----------------------------------------------------------------------

_SGF_PROP = re.compile(r"([A-Z]+)((?:\[(?:[^\]\\]|\\.)*\])+)")
_SGF_VALUE = re.compile(r"\[((?:[^\]\\]|\\.)*)\]")


def _sgf_point(c: str, player: int) -> int:
    """An SGF point letter as the player's own point: 'a'..'x' are White's (player 0's)
    points 1..24, 'y' the bar, 'z' off."""
    if c == "y":
        return 25
    if c == "z":
        return 0
    k = ord(c) - ord("a") + 1
    if not 1 <= k <= 24:
        raise ValueError(c)
    return k if player == 0 else 25 - k


def parse_sgf(text: str) -> MatMatch:
    """Read GNU Backgammon's SGF (``GM[6]``: one game tree a game, ``MI[length:N][game:K]
    [ws:W][bs:B]``, ``PW``/``PB`` the players (White is player 0, the .mat file's left
    column), moves ``;W[52lqac]`` (dice, then from-to letter pairs), ``[double]``,
    ``[take]``, ``[drop]``, the result ``RE[W+2]``, ``RE[W+2R]`` for a resignation)
    into the MatMatch that parse_mat would give."""
    if "GM[6]" not in text:
        raise MatchFileError("not a backgammon SGF file (no GM[6])")
    games: list[MatGame] = []
    length = 0
    tags: dict[str, str] = {}
    for k, tree in enumerate(re.split(r"\(\s*;", text)[1:], 1):
        names = ("", "")
        score = (0, 0)
        actions: list[MatAction] = []
        number = k
        result: tuple[int, int] | None = None
        move = 0
        for node in tree.split(";"):
            props = {m.group(1): _SGF_VALUE.findall(m.group(2)) for m in _SGF_PROP.finditer(node)}
            if "MI" in props:
                info = dict(v.split(":", 1) for v in props["MI"] if ":" in v)
                try:
                    length = int(info.get("length", 0))
                    number = int(info.get("game", k - 1)) + 1
                    score = (int(info.get("ws", 0)), int(info.get("bs", 0)))
                except ValueError:
                    raise MatchFileError(f"game {k}: a bad MI[] {props['MI']}") from None
            if "PW" in props or "PB" in props:
                names = (props.get("PW", [names[0]])[0], props.get("PB", [names[1]])[0])
            if "DT" in props:
                tags["EventDate"] = props["DT"][0]
            if "RE" in props:
                m = re.fullmatch(r"([WB])\+(\d+)R?", props["RE"][0])
                if not m:
                    raise MatchFileError(f"game {number}: a result RE[{props['RE'][0]}] not read")
                result = (0 if m.group(1) == "W" else 1, int(m.group(2)))
            for colour in ("W", "B"):
                if colour not in props:
                    continue
                player = 0 if colour == "W" else 1
                value = props[colour][0]
                move += 1
                if value in ("double", "take", "drop"):
                    kind = value
                    actions.append(MatAction(number, move, player, kind,
                                             value=0, text=value))  # fmt: skip
                    continue
                m = re.fullmatch(r"([1-6])([1-6])((?:[a-z][a-z])*)", value)
                if not m:
                    raise MatchFileError(f"{_where(number, move, player, value)}: not a move")
                pairs = m.group(3)
                try:
                    steps = [f"{_sgf_point(pairs[i], player)}/{_sgf_point(pairs[i + 1], player)}"
                             for i in range(0, len(pairs), 2)]  # fmt: skip
                except ValueError:
                    raise MatchFileError(f"{_where(number, move, player, value)}: "
                                         "a point letter outside a-z") from None  # fmt: skip
                dice = (int(m.group(1)), int(m.group(2)))
                actions.append(MatAction(number, move, player, "move", dice, " ".join(steps),
                                         text=value))  # fmt: skip
        # The cube's values are implicit in SGF: each double doubles it.
        cube = 1
        for i, a in enumerate(actions):
            if a.kind == "double":
                cube *= 2
                actions[i] = MatAction(
                    a.game, a.number, a.player, "double", value=cube, text=a.text
                )
        if result is not None:
            actions.append(MatAction(number, 0, result[0], "wins", value=result[1],
                                     text=f"RE[{'WB'[result[0]]}+{result[1]}]"))  # fmt: skip
        games.append(MatGame(number, names, score, actions))
    return MatMatch(length, tags, games)


def read_match(text: str) -> tuple[MatMatch, list[ReplayedGame]]:
    """A .mat or a gnubg .sgf file's text (told apart by its first characters), read and
    replayed."""
    m = parse_sgf(text) if text.lstrip().startswith("(;") else parse_mat(text)
    return m, replay(m)


__all__ = [
    "MatAction",
    "MatGame",
    "MatMatch",
    "ReplayedGame",
    "ReplayedMove",
    "parse_mat",
    "parse_sgf",
    "read_match",
    "replay",
    "to_doublet_notation",
    "to_mat_notation",
    "write_mat",
]
