"""`doublet serve`: play Doublet in the browser, with the cube, money sessions and matches.

A Starlette (ASGI) app run by uvicorn serves the pages (engine/apps/web/: index.html the
game, review.html the review of a finished game, analysis.html the analysis of a
position; board.js draws the board for all three; plain JavaScript, no build step) and a
JSON API. Starlette and uvicorn are the `web` extra and are imported only here, only when
the server starts, so playing and analysing need numpy and numba alone.

Each series of games lives on the server under an unguessable id
(``secrets.token_urlsafe``): the id is the only key, so two browsers never see each
other's games. After every change the series is saved atomically to ``DATA/<id>.json``
(``doublet.games.game.save_json``: the cube, the match score and the finished games are in
it), and a game not in memory is loaded from there, so a restart of the server loses
nothing. The person is side 0 and the engine side 1. Every play the page shows is in the
person's numbering (the points the board is labelled with): the engine's plays are
turned round with doublet.formats.notation.other_side, in the state, the review and the
hints alike (a .mat file keeps the format's own convention, each player's own numbering).

The engine's decisions are doublet.games.opponent's, at the series' depth: it doubles
before its roll when ``engine_doubles`` says so, answers the person's double by
``engine_answer`` (take, beaver or pass), plays by ``engine_play`` and accepts a
resignation only when ``resignation`` says it is worth at least playing on.

API (JSON in and out; errors are ``{"error": "..."}``: 400 malformed request, 403 a
request from another site's page (``Origin``) or, when the server is bound to one
address, for another host (``Host``: DNS rebinding), 404 unknown game, 409 not possible
now (the wrong phase: a roll when the dice are rolled, a double the cube does not allow,
a take with no double waiting; game over, series over) or a ``move`` that is not the
game's (a retried request: the body then holds ``"state"``), 413 a body over 64 KiB, 415
a POST that is not ``application/json``, 422 illegal play, 429 too many saved games, 503
the server cannot save the game or read its saved file (a full disk, a damaged file: the
request was not applied), 500 a bug, as JSON). Every request that changes a game (play,
roll, double, take, pass, beaver, resign, next) carries the state's ``"move"`` (an
integer), so that it is applied once. A key that a new game, an import, the analysis
page or a ``"state"`` does not take is a 400 naming it (a typo is not ignored). Bodies
of POSTs must be JSON (``Content-Type: application/json``): a page of another site cannot
send one without the browser asking this server first.

- ``POST /api/games`` ``{"variant": "standard" | "acey-deucey", "ply": 0..3, "starter":
  "throw" | "you" | "engine", "seed": int (optional), "length": N (a match to N points,
  1..25; 0 or absent: money), "cube": bool (default: true in a match, false in money
  play, so that older clients get the cubeless games they had), "jacoby": bool (money
  with the cube; default true), "beavers": bool (money with the cube; default false),
  "games": a money session's length (0: no limit; a match ignores it)}`` -> 201, the
  state (below). With ``"position"`` (a gnubg ID, with or without its Match ID, an XGID,
  or a JSON board, as text or an object: Acey-Deucey's unentered checkers need one) the
  one game starts there with the person as the side on roll: ``"dice"`` [d1, d2] or
  the ID's dice, and ``"state"`` ({"cube": {"value", "owner": "mover" |
  "opponent" | "centered"}, "match": {"length", "away" | "score", "crawford"} | null,
  "jacoby", "beavers"}, each key overriding the ID's own) say the cube and score.
- ``GET /api/games/{id}``: the state: ``{"id", "variant", "ply", "games", "kind":
  "match" | "money" | "series" (no cube), "describe" ("3-point match"), "rules": {"cube",
  "jacoby", "beavers"}, "score": {"you", "engine"}, "results": [{"winner", "points" (1
  single, 2 gammon, 3 backgammon), "name", "resigned", "passed", "cube", "value" (the
  points scored), "text"}], "series_over", "winner" (a match's: "you" | "engine" |
  null), "match": {"length", "crawford" (this is the Crawford game), "stage" ("Crawford
  game" | "post-Crawford" | ""), "away": {"you", "engine"}} | null, "game": {"number",
  "turn" (the side on roll), "phase": "roll" | "answer" | "move" | "over", "to_act":
  "you" | "engine" | null, "dice", "opening", "over", "result", "no_play"}, "cube":
  {"value", "owner": "you" | "engine" | null (centred), "offered_by", "may_double" (the
  person, now), "why_no_double", "may_beaver", "dead_note" (when the cube is dead for
  the person, a match's side whose win takes the match: why no double is offered and
  the dice are rolled at once; else "")}, "board": {...} (the person's view:
  "points" 0..24 with index p = the person's point p, > 0 the person's checkers, < 0 the
  engine's; "bar", "off", "unentered", "pips" each {"you", "engine"}), "last": the
  engine's turns since the person's last one, "last_play": {"you", "engine"}: each
  side's latest play {"dice", "play", "moves": [{"from", "to", "hit"}]} (the person's
  numbering; "bar", "in", "off") or null, "record": every turn ({"side", "dice", "play",
  "again", "action": "play" | "double" | "take" | "pass" | "beaver", "cube"}), "move":
  the move counter}``.
- ``POST /api/games/{id}/steps`` ``{"steps": [...], "move": m}``: the legal next steps
  after the person's steps so far (doublet.games.steps): ``{"board", "dice", "steps",
  "doublets", "complete", "again", "play"}``; nothing changes on the server. "move"
  (optional: the state's move counter the steps were made for) makes a request for an
  earlier move a 409 carrying the state, as is one when the person is not at their play.
- ``POST /api/games/{id}/play`` ``{"steps": [...]}`` or ``{"play": "13/7 8/7"}``: the
  person's whole play, checked against the legal plays (422 and nothing changes if it
  is not one); then the engine acts: it may double (the state's phase is then "answer"),
  or it rolls and plays, roll-again turns included.
- ``POST /api/games/{id}/roll``: the person rolls (phase "roll": the cube was theirs to
  turn and they did not).
- ``POST /api/games/{id}/double``: the person doubles; the engine answers at once (its
  take, beaver or pass is in "last"; after a take or beaver the person's dice are rolled).
- ``POST /api/games/{id}/take``, ``/pass`` (or ``/drop``), ``/beaver``: the person's
  answer to the engine's double; then the engine rolls and plays.
- ``POST /api/games/{id}/resign`` ``{"points": 1 | 2 | 3}``: the person offers to resign
  a single game, a gammon or a backgammon. The state comes back with ``"resignation":
  {"accepted", "points", "offered", "playing_on" (the engine's values: money points or
  MWC), "would_accept" (the least it would accept, or null), "message"}``; a refused
  resignation leaves the game as it was.
- ``GET /api/games/{id}/hint``: in phase "move" the person's best plays (``"plays"``,
  ranked by equity, cubeful in a game with the cube, with the win and gammon chances and
  the steps of each); in phase "roll" the cube decision (``"cube"``, cube_document); when
  the engine has doubled, the engine's double judged (``"cube"``: take or pass).
- ``POST /api/games/{id}/next``: the next game of the series.
- ``GET /api/games/{id}/export``: the series as text, one line per turn, game by game.
- ``GET /api/games/{id}/mat``: the series as a ``.mat`` file (doublet.games.record; 409 for
  Acey-Deucey, which the format cannot write: the message points to /export).
- ``GET /api/games/{id}/review?game=N&ply=P``: the review of finished game N (default:
  the latest finished) at `ply` (default the series'): doublet.games.review.review_game's
  document, each turn with ``"board"`` (the person's view before it) and ``"moves"``,
  the plays in the person's numbering.
- ``POST /api/page/analysis`` ``{"position", "dice" (optional; else the ID's), "ply",
  "state" (as above)}`` (the analysis page's): ``{"board" (the side on roll is "you"),
  "position_id", "state",
  "state_text", "cube" (cube_document), "roll" (analyse_roll, its first ANALYSE_PLAYS
  plays, "count" all of them) | null}``.
- ``POST /api/import`` ``{"text": a .mat or .sgf file's text, "ply"}`` (up to 1 MiB):
  the match replayed through the rules (a move that does not fit is a 400 naming the
  game, the move and the text) and stored as a series with the file's player names
  (``"names"`` in its state), 201 with its state; the review page (``/review``, "Review
  a match file") sends a file here and reviews its games. It is a record, read-only: a
  change is a 409, and the engine never plays for the file's player 1, even where the
  file ends in the middle of a game.

Depth (doublet.search.choice.engine_depth): the engine searches at the series' ply
(0..3), but in Acey-Deucey a 1-2 (the roll and its chosen doublet: over 800,000 plays in
some positions)
is searched at 0 ply, and other rolls (and cube decisions) at 1 ply at most (2 ply takes
10-20 s there), so that a move answers within a few seconds. Hints use the same depths.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import re
import secrets
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import numpy as np

from doublet import __version__
from doublet.apps import protocol
from doublet.core import board as B
from doublet.core.board import STANDARD, VARIANT_NAMES, VARIANTS
from doublet.core.dice import MAX_GAME_SEED
from doublet.core.errors import ApiError, DoubletError, IllegalPlayError
from doublet.core.files import held_lock, remove_temps, write_error
from doublet.core.jit import SEARCH_KERNELS, announce_compile
from doublet.cube.state import MAX_CUBE, MAX_LENGTH, CubeState, from_request
from doublet.formats.ids import check_in_play, parse_position, position_id
from doublet.formats.matfile import read_match
from doublet.formats.notation import format_play, other_side, parse_play
from doublet.formats.position import Play, Position
from doublet.games import opponent
from doublet.games.game import (
    DEAD_CUBE_NOTE,
    NO_RESIGN_NOW,
    RESULT_NAMES,
    Game,
    GameError,
    Result,
    Rules,
    SaveFileError,
    Series,
    Turn,
    save_json,
)
from doublet.games.record import from_match, to_mat
from doublet.games.review import review_game
from doublet.games.steps import BAR, IN, OFF, Step, can_move, parse_steps
from doublet.games.steps import Turn as Steps
from doublet.nn.eval import equity
from doublet.rules.movegen import legal_outcomes
from doublet.search.analysis import PROB_NAMES, analyse_roll, cube_document, searcher
from doublet.search.choice import MAX_PLAY_PLY, engine_depth, ranking
from doublet.search.searcher import Limits

YOU, ENGINE = 0, 1
SIDES = ("you", "engine")
NAMES = ("You", "Doublet")  # the players' names in a .mat file and the text export
HINT_PLAYS = 5
ANALYSE_PLAYS = 20  # plays of a roll the analysis page lists
ANALYSE_BUDGET = 30.0  # seconds an analysis may search (doublet.search.analysis.deepen)
TEXT_LIMIT = 20_000  # hints with more plays than this read as their steps (see hint)
WEB = Path(__file__).parent / "web"
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
_WEB_EXTRA = (
    "pip install 'doublet[web]' (in a checkout: pip install -e '.[web]'), which "
    "brings starlette and uvicorn"
)
_OWNERS = {"centered": -1, "mover": YOU, "opponent": ENGINE}

# The HTTP API for programs (POST /api/best, ...): the engine protocol's commands, each
# request bounded: without "time" the search is capped at HTTP_TIME seconds (half of it
# at the ply asked, as evaluations, then deepening: doublet.search.analysis.deepen), and
# a "time" may ask for no more; no model paths, no "set", no rollouts; at most HTTP_PLAYS
# plays in a reply.
HTTP_COMMANDS = ("best", "analyse", "eval", "cube", "moves")
HTTP_TIME = 10.0
HTTP_PLAYS = 1000  # the most plays an HTTP reply lists (analyse: the best; moves: refused)
HTTP_BOUNDS = protocol.Bounds(default_time=HTTP_TIME, max_time=HTTP_TIME, settable=False,
                              where="the HTTP API",
                              commands=(*HTTP_COMMANDS, "version"),
                              max_plays=HTTP_PLAYS)  # fmt: skip
# The HTTP API's one session: with no "set" and no model paths it holds no state.
HTTP_SESSION = protocol.Session(HTTP_BOUNDS)


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 description of the HTTP API for programs (GET /api/openapi.json),
    made from the protocol's own tables (doublet.apps.protocol.KEYS, KEY_SCHEMAS)."""

    def error(why: str) -> dict[str, Any]:
        return {"description": why, "content": _json({"$ref": "#/components/schemas/Error"})}

    errors = {"400": error("a bad request: what is wrong"),
              "403": error("a request from another site (its Origin or Host)"),
              "413": error("a body over the size limit"),
              "415": error("a body that is not application/json"),
              "503": error("the game cannot be saved, or its saved file read, on the server"),
              "500": error("an internal error (a bug: please report it)")}  # fmt: skip
    # Here (not in the engine) a request's time is bounded by the server's limit.
    http = {"time": {"maximum": HTTP_TIME}}
    paths: dict[str, Any] = {}
    for cmd in HTTP_COMMANDS:
        keys = sorted(protocol.KEYS[cmd] - {"cmd", "model"})
        # null is any key's default but the position's (a review: "ply": null, taken,
        # was outside the schema)
        props = {k: {"anyOf": [{**protocol.KEY_SCHEMAS[k][0], **http.get(k, {})},
                               *([] if k in ("position", "id") else [{"type": "null"}])],
                     "description": protocol.KEY_SCHEMAS[k][1]} for k in keys}  # fmt: skip
        body = {"type": "object", "properties": props, "required": ["position"],
                "additionalProperties": False}  # fmt: skip
        reply = {"description": "the reply (`doublet engine --doc`)",
                 "content": _json({"type": "object"})}  # fmt: skip
        paths[f"/api/{cmd}"] = {"post": {
            "summary": protocol.SUMMARIES[cmd],
            "description": f"The engine protocol's {cmd!r} request without its 'cmd' "
                           "(`doublet engine --doc` has the reply's keys).",
            "requestBody": {"required": True, "content": _json(body)},
            "responses": {"200": reply, **errors},
        }}  # fmt: skip
    for alias, cmd in protocol.ALIASES.items():  # the protocol's other spellings
        if cmd in HTTP_COMMANDS:
            post = dict(paths[f"/api/{cmd}"]["post"])
            post["summary"] = f"the same as /api/{cmd}"
            paths[f"/api/{alias}"] = {"post": post}
    version = {"description": "name, version, protocol, commands, defaults, limits",
               "content": _json({"type": "object"})}  # fmt: skip
    paths["/api/version"] = {"get": {"summary": protocol.SUMMARIES["version"],
                                     "responses": {"200": version}}}  # fmt: skip
    info = {"title": "Doublet analysis API", "version": __version__,
            "description": "Stateless backgammon analysis: the engine protocol of `doublet "
            f"engine` over HTTP. Every request's search is bounded ({HTTP_TIME:g} s)."}  # fmt: skip
    schema = {"type": "object", "required": ["error"],
              "properties": {"error": {"type": "string"}, "id": {}}}  # fmt: skip
    return {"openapi": "3.1.0", "info": info, "paths": paths,
            "components": {"schemas": {"Error": schema}}}  # fmt: skip


# One lock for the engine: the move generator's buffers and the search's cache are shared
# by the whole process, so two requests must not search at once.
_ENGINE = threading.Lock()


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "doublet" / "web"


# ---------------------------------------------------------------------------
# Games: kept in memory, saved to disk after every change
# ---------------------------------------------------------------------------


MAX_SAVED = 1000  # saved series in the data folder: more are refused (429)
MAX_BODY = 64 * 1024  # bytes of a request body: more are refused (413)
MAX_IMPORT = 1024 * 1024  # a match file sent to /api/import may be longer


class Store:
    """The series by id, in memory and in ``data/<id>.json``."""

    def __init__(self, data: Path, max_saved: int = MAX_SAVED) -> None:
        self.data = Path(data)
        self.games: dict[str, Series] = {}
        self.max_saved = max_saved

    def path(self, gid: str) -> Path:
        return self.data / f"{gid}.json"

    def add(self, series: Series) -> str:
        saved = sum(1 for _ in self.data.glob("*.json")) if self.data.is_dir() else 0
        if saved >= self.max_saved:
            raise ApiError(429, f"{saved} games are saved on this server already (at most "
                                f"{self.max_saved}): delete old ones from {self.data}")  # fmt: skip
        gid = secrets.token_urlsafe(24)
        self.games[gid] = series
        self.save(gid)
        return gid

    def get(self, gid: str) -> Series:
        s = self.games.get(gid)
        if s is not None:
            return s
        if not _ID.fullmatch(gid) or not self.path(gid).is_file():
            raise ApiError(404, f"no game with id {gid!r} (it may have been deleted)")
        try:
            s = Series.load(self.path(gid))
        except SaveFileError as e:
            raise ApiError(503, f"the saved game cannot be read: {e}") from None
        self.games[gid] = s
        return s

    def save(self, gid: str) -> None:
        """Write the series to disk; when that fails (a full disk, the data folder gone)
        the change is undone in memory too (what is on disk is the game, read again at
        the next request) and the request is a 503 that says so."""
        try:
            save_json(self.path(gid), self.games[gid].to_dict())
        except OSError as e:
            self.games.pop(gid, None)
            why = write_error(self.path(gid), e)
            raise ApiError(503, f"the game cannot be saved on the server ({why}): the "
                                "request was not applied; try again later") from None  # fmt: skip


# ---------------------------------------------------------------------------
# The state the page shows
# ---------------------------------------------------------------------------


def board_view(b: np.ndarray) -> dict[str, Any]:
    """A board in the person's view (the person is the mover of b) for the page."""
    mine, theirs = B.pip_counts(b)
    return {
        "points": [0] + [int(x) for x in b[1:25]],
        "bar": {"you": int(b[B.MY_BAR]), "engine": int(-b[B.OPP_BAR])},
        "off": {"you": int(b[B.MY_OFF]), "engine": int(b[B.OPP_OFF])},
        "unentered": {"you": int(b[B.MY_OUT]), "engine": int(b[B.OPP_OUT])},
        "pips": {"you": int(mine), "engine": int(theirs)},
    }


def shown(play: str, side: int) -> str:
    """A play's text in the person's numbering (the engine's plays are turned round)."""
    return other_side(play) if side == ENGINE and play else play


def _where(p: int, side: int) -> int | str:
    if p == BAR:
        return "bar"
    if p == IN:
        return "in"
    if p == OFF:
        return "off"
    return p if side == YOU else 25 - p


@lru_cache(maxsize=512)
def _moves(before: str, d1: int, d2: int, play: str, variant: int, side: int) -> tuple[Any, ...]:
    board, _, _ = parse_position(before, variant)
    b = np.array(board, np.int8)
    path = Steps(b, d1, d2, variant).path(parse_play(b, d1, d2, play, variant))
    return tuple((_where(s.src, side), _where(s.dst, side), s.hit)
                 for s in path if isinstance(s, Step))  # fmt: skip


def play_moves(t: Turn, variant: int) -> list[dict[str, Any]]:
    """The checker moves of a recorded play, one per die, from/to in the person's
    numbering ("bar", "in", "off" by name): what the board marks as a side's last move."""
    if t.dice is None or not t.play:
        return []
    got = _moves(t.before, t.dice[0], t.dice[1], t.play, variant, t.side)
    return [{"from": a, "to": b, "hit": h} for a, b, h in got]


def _turn_json(t: Turn) -> dict[str, Any]:
    return {
        "side": SIDES[t.side],
        "dice": list(t.dice) if t.dice else None,
        "play": shown(t.play, t.side),
        "again": t.again,
        "action": t.action,
        "cube": t.cube,
    }


def _result_json(r: Result | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"winner": SIDES[r.winner], "points": r.points, "name": r.name,
            "resigned": r.resigned, "passed": r.passed, "cube": r.cube, "value": r.value,
            "text": r.describe()}  # fmt: skip


def move_of(s: Series) -> int:
    """The series' move counter: it grows with every turn, roll, result and game, so that
    a state-changing request carrying it is applied once (a retried one gets 409)."""
    g = s.game
    return 100_000 * g.number + len(g.record) + g.rolls + int(g.over)


def to_act(g: Game) -> int | None:
    """The side that acts next: the answerer of a double, else the side on roll."""
    if g.over:
        return None
    return 1 - g.turn if g.phase == "answer" else g.turn


def _last_play(g: Game, side: int) -> dict[str, Any] | None:
    for t in reversed(g.record):
        if t.side == side and t.action == "play":
            return {"dice": list(t.dice) if t.dice else None, "play": shown(t.play, side),
                    "moves": play_moves(t, g.variant)}  # fmt: skip
    return None


def _why_no_double(g: Game) -> str:
    """Why the person may not double now ("" when they may)."""
    if g.turn == YOU or g.over or not g.rules.cube or g.rules.crawford:
        return g.why_no_double()
    return "the cube is turned before your own roll, not in Doublet's turn"


def state(gid: str, s: Series) -> dict[str, Any]:
    g = s.game
    last: list[Turn] = []
    for t in reversed(g.record):
        if t.side == YOU:
            break
        last.append(t)
    no_play = False
    if g.phase == "move" and g.turn == YOU:
        assert g.dice is not None
        no_play = not can_move(g.board, *g.dice, g.variant)
    r = g.rules
    mine = g.turn == YOU
    match = None
    if s.length:
        score = s.final_score()
        match = {"length": s.length, "crawford": r.crawford, "stage": s.game_state_text(),
                 "away": {"you": max(0, s.length - score[YOU]),  # a win may pass the length
                          "engine": max(0, s.length - score[ENGINE])}}  # fmt: skip
    winner = s.winner
    acting = to_act(g)
    return {
        "id": gid,
        "variant": VARIANT_NAMES[s.variant],
        "ply": s.ply,
        "games": s.games,
        "kind": "match" if s.length else "money" if s.cube else "series",
        "describe": s.describe(),
        "names": list(s.names) if s.names else None,  # set: an imported file, read-only
        # /mat can write it (standard, every game from the opening); else /export
        "mat_file": s.variant == STANDARD and not any(x.from_position for x in [*s.history, g]),
        "rules": {"cube": s.cube, "jacoby": s.jacoby, "beavers": s.beavers},
        "score": {"you": s.score[YOU], "engine": s.score[ENGINE]},
        "results": [_result_json(x) for x in s.results],
        "series_over": s.over,
        "winner": None if winner is None else SIDES[winner],
        "match": match,
        "game": {
            "number": g.number + 1,
            "turn": None if g.over else SIDES[g.turn],
            "phase": g.phase,
            "to_act": None if acting is None else SIDES[acting],
            "dice": list(g.dice) if g.dice else None,
            "opening": list(g.opening) if g.opening else None,
            "over": g.over,
            "result": _result_json(g.result),
            "no_play": no_play,
        },
        "cube": {
            "value": g.cube,
            "owner": None if g.owner < 0 else SIDES[g.owner],
            "offered_by": SIDES[g.turn] if g.phase == "answer" else None,
            "may_double": mine and g.may_double(),
            "why_no_double": _why_no_double(g),
            "may_beaver": not mine and g.may_beaver(),
            "dead_note": DEAD_CUBE_NOTE if g.dead_for(YOU) else "",
        },
        "board": board_view(g.board_for(YOU)),
        "last": [_turn_json(t) for t in reversed(last)],
        "last_play": {"you": _last_play(g, YOU), "engine": _last_play(g, ENGINE)},
        "record": [_turn_json(t) for t in g.record],
        "move": move_of(s),
    }


# ---------------------------------------------------------------------------
# What the API does (plain functions; the Starlette layer below only moves JSON)
# ---------------------------------------------------------------------------


def _shown(v: Any) -> str:
    return protocol.shown(v, 30)


# The keys of a new game (POST /api/games): a fresh one, or one at a position.
NEW_KEYS = {"variant", "ply", "seed", "games", "starter", "length", "cube", "jacoby", "beavers"}
AT_KEYS = {"variant", "ply", "seed", "position", "dice", "state"}


def _int_field(body: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    v = body.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ApiError(400, f"{key!r} must be an integer from {lo} to {hi}, got {_shown(v)}")
    return v


def _bool_field(body: dict[str, Any], key: str, default: bool) -> bool:
    v = body.get(key, default)
    if not isinstance(v, bool):
        raise ApiError(400, f"{key!r} must be true or false, got {_shown(v)}")
    return v


def _dice_field(body: dict[str, Any]) -> tuple[int, int] | None:
    d = body.get("dice")
    if d is None:
        return None
    die = (1, 2, 3, 4, 5, 6)
    ok = isinstance(d, list) and len(d) == 2 and all(type(x) is int and x in die for x in d)
    if not ok:
        raise ApiError(400, f"'dice' are two numbers 1..6, like [3, 1], got {_shown(d)}")
    return int(d[0]), int(d[1])


def new_series(body: dict[str, Any], default_ply: int) -> Series:
    at = "position" in body
    if not at and (astray := sorted(k for k in AT_KEYS - NEW_KEYS - {"position"} if k in body)):
        raise ApiError(400, f"{' and '.join(repr(k) for k in astray)} go with 'position' (a new "
                            "game at a position)")  # fmt: skip
    protocol.check_keys(body, AT_KEYS if at else NEW_KEYS,
                        "a new game at a position" if at else "a new game",
                        None if at else NEW_KEYS | {"position"})  # fmt: skip
    variant = body.get("variant", "standard")
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ApiError(400, f"'variant' must be one of {', '.join(VARIANTS)}, got {variant!r}")
    ply = _int_field(body, "ply", default_ply, 0, MAX_PLAY_PLY)
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                             or not 0 <= seed <= MAX_GAME_SEED):  # fmt: skip
        raise ApiError(400, f"'seed' must be an integer from 0 to 2**63 - 1, got {_shown(seed)}")
    if "position" in body:
        s = series_at(body, variant, ply, seed)
    else:
        games = _int_field(body, "games", 1, 0, 99)
        starter_name = body.get("starter", "throw")
        starters = {"throw": None, "you": YOU, "engine": ENGINE}
        if not isinstance(starter_name, str) or starter_name not in starters:
            raise ApiError(400, f"'starter' must be throw, you or engine, got {starter_name!r}")
        length = _int_field(body, "length", 0, 0, MAX_LENGTH)
        cube = _bool_field(body, "cube", length > 0)
        money = cube and not length
        jacoby = _bool_field(body, "jacoby", money)
        beavers = _bool_field(body, "beavers", False)
        if (jacoby or beavers) and not money:
            raise ApiError(400, "the Jacoby rule and beavers are for money play with the cube")
        s = Series.new(variant, games, seed, ply, starters[starter_name], length, cube,
                       jacoby, beavers)  # fmt: skip
    engine_acts(s)
    return s


def position_state(body: dict[str, Any], meta: dict[str, Any]) -> CubeState:
    """The cube and score of a position: its ID's own, with the request's "state" keys."""
    req = body.get("state", {})
    if req is None:
        req = {}
    if not isinstance(req, dict):
        raise ApiError(400, "'state' is an object with cube, match, jacoby and beavers")
    protocol.check_keys(req, {"cube", "match", "jacoby", "beavers"}, "'state'")
    return from_request(req, CubeState.from_meta(meta))


POSITION_FIELD = (
    "'position' is a gnubg ID (with or without its Match ID), an XGID or a JSON "
    'board ({"variant": ..., "mover": [26 ints], "opponent": [26 ints]}, as text '
    "or an object)"
)


def request_position(body: dict[str, Any], variant: str
                     ) -> tuple[Any, int, CubeState, tuple[int, int] | None]:  # fmt: skip
    """A request's "position" (a game's start, the analysis page's), in play: (board,
    variant, its cube state, its dice or None). A JSON board names its own variant:
    'variant' left out does not contradict it."""
    board, v, meta = parse_position(body["position"], variant if "variant" in body else None)
    check_in_play(board, v)
    return board, v, position_state(body, meta), _dice_field(body) or meta.get("roll")


def series_at(body: dict[str, Any], variant: str, ply: int, seed: int | None) -> Series:
    """A series of one game that starts at the request's position, the person (side 0)
    on roll with its cube and score; a match goes on from that score."""
    if not isinstance(body["position"], (str, dict)):  # a JSON board as text or an object
        raise ApiError(400, POSITION_FIELD)
    board, v, st, dice = request_position(body, variant)
    s = Series.new(v, 1, seed, ply, YOU, st.length, True, st.jacoby, st.beavers)
    if st.is_match:
        s.score = [st.length - st.away[0], st.length - st.away[1]]
        if st.crawford:
            s.crawford_game = 0
        elif 1 in st.away and st.length > 1:  # (a 1-point match has no Crawford game)
            s.crawford_game = -1  # post-Crawford: the Crawford game was before this one
    g = s.game
    g.rules = Rules(True, st.length, (s.score[0], s.score[1]), st.crawford, st.jacoby,
                    st.beavers)  # fmt: skip
    g.board = np.array(board, np.int8)
    g.turn, g.opening = YOU, None
    g.cube, g.owner = st.value, _OWNERS[st.owner]
    g.start_cube, g.from_position = (g.cube, g.owner), True
    g.dice = None
    if dice is not None:
        g.dice = (int(dice[0]), int(dice[1]))
    elif not g.may_double():
        g.roll(YOU)
    return s


def _depth(s: Series) -> int:
    """The engine's depth for the position as it is: the dice's (engine_depth), or before
    the roll the depth of a roll that is not Acey-Deucey's 1-2."""
    g = s.game
    return engine_depth(g.variant, s.ply, g.dice if g.dice else (6, 5))


def engine_acts(s: Series) -> None:
    """The engine acts while it is to act: it answers the person's double, doubles before
    its roll or rolls, and plays (roll-again turns included)."""
    g = s.game
    while not g.over:
        if g.phase == "answer":
            if g.turn == ENGINE:
                break  # the engine doubled: the person answers
            answer = opponent.engine_answer(g, _depth(s))
            {"take": g.take, "beaver": g.beaver, "pass": g.drop}[answer](ENGINE)
            continue
        if g.turn != ENGINE:
            break
        if g.phase == "roll":
            if opponent.engine_doubles(g, _depth(s)):
                g.double(ENGINE)
                break
            g.roll(ENGINE)
        assert g.dice is not None
        g.play(opponent.engine_play(g, engine_depth(g.variant, s.ply, g.dice)), ENGINE)
    if g.over:
        s.record_result()


def _now(g: Game) -> str:
    """What the person may do now, for the errors of a request that came at a wrong time."""
    if g.over:
        return "the game is over: start the next game or a new one"
    if g.phase == "answer":
        return ("Doublet has doubled: take or pass" if g.turn == ENGINE
                else "your double waits for Doublet's answer")  # fmt: skip
    if g.turn != YOU:
        return "it is Doublet's turn"
    return "roll (or double)" if g.phase == "roll" else "the dice are rolled: play them"


def expect(s: Series, phase: str) -> None:
    """409 unless the person may act in `phase` now: "roll" (roll or double), "move"
    (play the roll), "answer" (answer the engine's double)."""
    g = s.game
    if phase == "answer":
        ok = g.phase == "answer" and g.turn == ENGINE
        if not ok:
            raise ApiError(409, f"there is no double of Doublet's to answer: {_now(g)}")
        return
    if g.over or g.turn != YOU or g.phase != phase:
        raise ApiError(409, f"not now: {_now(g)}")


def _steps_of(body: Any) -> list[Any]:

    if not isinstance(body, dict) or "steps" not in body:
        raise ApiError(400, 'send {"steps": [...]}')
    try:
        return parse_steps(body["steps"])
    except DoubletError as e:
        raise ApiError(400, str(e)) from None


def _turn(s: Series, items: list[Any]) -> Any:

    g = s.game
    assert g.dice is not None
    try:
        return Steps(g.board, *g.dice, g.variant, items)
    except IllegalPlayError as e:
        raise ApiError(422, str(e)) from None


def options(s: Series, body: Any) -> dict[str, Any]:
    expect(s, "move")
    t = _turn(s, _steps_of(body))
    o = t.options()
    return {
        "board": board_view(o.board),
        "dice": list(o.dice),
        "steps": [x.to_json() for x in o.steps],
        "doublets": o.doublets,
        "complete": o.complete,
        "again": o.again,
        "play": t.notation(),
    }


def play(s: Series, body: Any) -> None:
    expect(s, "move")
    g = s.game
    if isinstance(body, dict) and "play" in body and "steps" in body:
        raise ApiError(400, "send the play as 'play' (its text) or as 'steps', not both")
    if isinstance(body, dict) and "play" in body:
        text = body["play"]
        if not isinstance(text, str):
            raise ApiError(400, "'play' is the play's text, like \"13/7 8/7\"")
        try:
            g.play(text, YOU)
        except DoubletError as e:
            raise ApiError(422, str(e)) from None
    else:
        t = _turn(s, _steps_of(body))
        o = t.options()
        if not o.complete:
            raise ApiError(422, "the play is not complete: more dice can be played")
        g.play(Play(t.notation(), o.board, o.again, g.variant), YOU)  # matched by its board
    engine_acts(s)


def roll_dice(s: Series) -> None:
    expect(s, "roll")
    s.game.roll(YOU)


def double(s: Series) -> None:
    g = s.game
    if g.turn == YOU and not g.over and g.cube_dead():  # rolled at once: say why, not "rolled"
        raise ApiError(409, f"you may not double now: {g.why_no_double()}")
    expect(s, "roll")
    if not g.may_double():
        raise ApiError(409, f"you may not double now: {g.why_no_double()}")
    g.double(YOU)
    engine_acts(s)


def answer(s: Series, how: str) -> None:
    expect(s, "answer")
    g = s.game
    if how == "beaver" and not (g.rules.beavers and not g.rules.length):
        raise ApiError(409, "no beaver: beavers are allowed only in money play with beavers on")
    if how == "beaver" and not g.may_beaver():
        raise ApiError(409, f"no beaver: it would take the cube past its highest ({MAX_CUBE}): "
                            "take or pass")  # fmt: skip
    {"take": g.take, "beaver": g.beaver, "pass": g.drop}[how](YOU)
    engine_acts(s)


def hint(s: Series) -> dict[str, Any]:
    """The person's best plays (phase "move"), ranked as `doublet analyse` ranks them
    (deepest ply, then equity; cubeful in a game with the cube); before the roll the cube
    decision; when the engine has doubled, its double judged (take or pass)."""
    g = s.game
    if not g.over and g.phase == "answer" and g.turn == ENGINE:
        state = g.cube_state(ENGINE)
        assert state is not None
        doc = cube_document(Position(g.board, g.variant), state, _depth(s), made=True)
        return {"kind": "answer", "ply": doc["ply"], "cube": doc}
    if not g.over and g.phase == "roll" and g.turn == YOU:
        state = g.cube_state(YOU)
        assert state is not None
        doc = cube_document(Position(g.board, g.variant), state, _depth(s))
        return {"kind": "cube", "ply": doc["ply"], "cube": doc}
    expect(s, "move")
    assert g.dice is not None
    if g.cube_state(YOU) is not None:  # the cube, or a match's score without it
        return _cubeful_hint(s)
    return _cubeless_hint(s)


def _cubeful_hint(s: Series) -> dict[str, Any]:
    g = s.game
    assert g.dice is not None
    ply = engine_depth(g.variant, s.ply, g.dice)
    state = g.cube_state(YOU)
    assert state is not None
    doc = analyse_roll(Position(g.board, g.variant), *g.dice, ply=ply, state=state, cubeful=True)
    legal, legal_again = legal_outcomes(g.board, *g.dice, g.variant)
    rows = zip(legal.tolist(), legal_again.tolist(), strict=True)
    index = {(tuple(b), bool(a)): k for k, (b, a) in enumerate(rows)}
    t = Steps(g.board, *g.dice, g.variant)
    out = []
    for row in doc["plays"][:HINT_PLAYS]:
        after = B.from_counts(row["board"]["mover"], row["board"]["opponent"])
        path = t.path(index[(tuple(after.tolist()), bool(row["again"]))])
        out.append({**{k: row[k] for k in ("rank", "play", "equity", "loss", "ply", "again")},
                    "probabilities": row["probabilities"],
                    **({"mwc": row["mwc"]} if "mwc" in row else {}),
                    "steps": [x.to_json() if not isinstance(x, int) else {"doublet": x}
                              for x in path]})  # fmt: skip
    return {"kind": "plays", "ply": ply, "dice": list(g.dice), "count": len(doc["plays"]),
            "cubeful": True, "plays": out}  # fmt: skip


def _cubeless_hint(s: Series) -> dict[str, Any]:
    """Only the plays shown are written out: an Acey-Deucey 1-2 can have over 800,000 plays,
    and for more than TEXT_LIMIT of them even one play's text takes seconds (all the
    chain's texts are found at once), so there a play reads as its steps."""
    g = s.game
    assert g.dice is not None
    ply = engine_depth(g.variant, s.ply, g.dice)
    boards, again, probs, plies = searcher(None, g.variant).analyse(g.board, *g.dice,
                                                                    Limits(ply=ply))  # fmt: skip
    eq = np.asarray(equity(probs), dtype=np.float64).reshape(-1)
    order = ranking(probs, plies)
    legal, legal_again = legal_outcomes(g.board, *g.dice, g.variant)
    rows = zip(legal.tolist(), legal_again.tolist(), strict=True)
    index = {(tuple(b), bool(a)): k for k, (b, a) in enumerate(rows)}
    t = Steps(g.board, *g.dice, g.variant)
    out = []
    best = float(eq[order[0]])
    for rank, i in enumerate(order[:HINT_PLAYS], 1):
        path = t.path(index[(tuple(boards[i].tolist()), bool(again[i]))])
        if len(legal) <= TEXT_LIMIT:
            text = format_play(g.board, boards[i], *g.dice, g.variant, bool(again[i]))
        else:
            text = Steps(g.board, *g.dice, g.variant, path).notation()
        out.append({
            "rank": rank,
            "play": text,
            "equity": round(float(eq[i]), 6),
            "loss": round(best - float(eq[i]), 6),
            "probabilities": {k: round(float(v), 6) for k, v in zip(PROB_NAMES, probs[i],
                                                                      strict=True)},
            "again": bool(again[i]),
            "ply": int(plies[i]),
            "steps": [x.to_json() if not isinstance(x, int) else {"doublet": x} for x in path],
        })  # fmt: skip
    return {"kind": "plays", "ply": ply, "dice": list(g.dice), "count": len(boards),
            "cubeful": False, "plays": out}  # fmt: skip


def _value_text(v: float, match: bool) -> str:
    return f"{100 * v:.1f}% to win the match" if match else f"{v:+.3f} points"


def resign(s: Series, body: Any) -> dict[str, Any]:
    """The person offers to resign; the engine accepts only what opponent.resignation
    finds worth at least playing on. Returns the "resignation" answer for the state."""
    g = s.game
    if g.over:
        raise ApiError(409, _now(g))
    if g.phase == "answer":
        raise ApiError(409, NO_RESIGN_NOW)
    points = _int_field(body if isinstance(body, dict) else {}, "points", 1, 1, 3)
    ply = _depth(s)
    v = opponent.resignation(g, YOU, points, ply)
    name = RESULT_NAMES[points]
    doc: dict[str, Any] = {"points": points, **v.to_json(), "would_accept": None}
    if v.accepted:
        g.resign(YOU, points)
        s.record_result()
        doc["message"] = f"Doublet accepts your resignation of a {name}."
        return {"resignation": doc}
    would = next((p for p in range(points + 1, 4)
                  if opponent.resignation(g, YOU, p, ply).accepted), None)  # fmt: skip
    doc["would_accept"] = would
    match = bool(g.rules.length)  # valued in MWC, with the cube or without
    expects = "it would not accept even a backgammon: playing on is worth more to it"
    if would:
        expects = f"it would accept a {RESULT_NAMES[would]}"
    doc["message"] = (f"Doublet plays on: your {name} gives it "
                      f"{_value_text(v.offered, match)}, playing on "
                      f"{_value_text(v.playing_on, match)}; {expects}.")  # fmt: skip
    return {"resignation": doc}


def next_game(s: Series) -> None:
    if not s.game.over:
        raise ApiError(409, "the game is not over yet")
    if s.over:
        raise ApiError(409, "the series is over: start a new one")
    try:
        s.next_game()
    except GameError as e:
        raise ApiError(409, str(e)) from None
    engine_acts(s)


def export_text(s: Series) -> str:
    """The series as text, game by game (Game.export); the dice's seed only once the
    series is over (it gives every roll still to come)."""
    games = [*s.history, s.game]
    return "\n".join(g.export(_names(s), seed=s.over) for g in games)


def _names(s: Series) -> tuple[str, str]:
    """The players' names: an imported file's, else the person's and the engine's."""
    return (s.names[0], s.names[1]) if s.names else NAMES


@dataclass(frozen=True)
class Download:
    """A text answer the browser saves as a file."""

    text: str
    filename: str
    media_type: str = "text/plain"


def export_mat(s: Series) -> Download:
    try:
        text = to_mat(s, _names(s))
    except GameError as e:
        raise ApiError(409, f"{e}; this page's text record is at /export") from None
    day = datetime.date.today().isoformat()
    return Download(text, f"doublet-{day}.mat")


def _game_of(s: Series, number: Any) -> Game:
    """Finished game `number` (1-based; None: the latest finished one)."""
    games = [*s.history, s.game]
    if number is None:
        done = [g for g in games if g.over]
        if not done:
            raise ApiError(409, "no game of this series is finished yet: a review is of a "
                                "finished game")  # fmt: skip
        return done[-1]
    try:
        n = int(number)
    except (TypeError, ValueError):
        raise ApiError(400, f"'game' is a game's number, got {_shown(number)}") from None
    if not 1 <= n <= len(games):
        raise ApiError(400, f"'game' is 1..{len(games)} in this series, got {n}")
    g = games[n - 1]
    if not g.over:
        raise ApiError(409, f"game {n} is not finished: a review is of a finished game")
    return g


def review(s: Series, number: Any, ply: int) -> dict[str, Any]:
    """doublet.games.review.review_game's document of a finished game, each turn with
    the board before it (the person's view) and its checker moves, and the engine's
    plays in the person's numbering."""
    g = _game_of(s, number)
    doc = review_game(g, ply)
    for e in doc["turns"]:
        t = g.record[e["index"]]
        owner = e["cube_before"]["owner"]  # a side, or None: centred
        e["cube_before"] = {"value": e["cube_before"]["value"],
                            "owner": None if owner is None else SIDES[owner],
                            "offered": t.action in ("take", "pass", "beaver")}  # fmt: skip
        board, _, _ = parse_position(t.before, g.variant)
        b = np.array(board, np.int8)
        # A take, pass or beaver's `before` is the doubler's view, like its double's.
        viewer = t.side if t.action in ("play", "double") else 1 - t.side
        e["board"] = board_view(b if viewer == YOU else B.flip(b))
        e["who"] = SIDES[t.side]
        e["moves"] = play_moves(t, g.variant)
        e["cube_value"] = t.cube
        if t.action == "play":
            e["play"] = shown(e["play"], t.side)
            e["best"] = shown(e["best"], t.side)
            e["plays"] = [{**r, "play": shown(r["play"], t.side)} for r in e["plays"]]
    doc["final"] = {"board": board_view(g.board_for(YOU)), "result": _result_json(g.result)}
    doc["game"] = {"number": g.number + 1, "games": len(s.history) + 1,
                   "score": {"you": g.rules.score[YOU], "engine": g.rules.score[ENGINE]},
                   "length": g.rules.length, "crawford": g.rules.crawford}  # fmt: skip
    return doc


def import_match(body: dict[str, Any], default_ply: int) -> Series:
    """A match file's text (.mat or GNU Backgammon's .sgf) as a stored series, for its
    review: every game replayed through the rules (doublet.games.record.from_match)."""
    protocol.check_keys(body, {"text", "name", "ply"}, "an import")
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "'text' is the match file's text (.mat or .sgf)")
    try:
        match, _ = read_match(text, unfinished=True, need_game=True)
        s = from_match(match)
    except GameError as e:
        raise ApiError(400, f"the match file does not replay: {e}") from None
    s.ply = _int_field(body, "ply", min(default_ply, 1), 0, MAX_PLAY_PLY)
    return s


def analyse(body: dict[str, Any], default_ply: int) -> dict[str, Any]:
    """The analysis page's request: a position's cube decision and a roll's plays."""
    keys = {"position", "variant", "ply", "dice", "state"}
    protocol.check_keys(body, keys, "the analysis page's request")
    text = body.get("position")
    if not isinstance(text, (str, dict)) or (isinstance(text, str) and not text.strip()):
        raise ApiError(400, POSITION_FIELD)
    variant = body.get("variant", "standard")
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ApiError(400, f"'variant' must be one of {', '.join(VARIANTS)}, got {variant!r}")
    ply = _int_field(body, "ply", min(default_ply, 2), 0, MAX_PLAY_PLY)
    board, v, state, dice = request_position(body, variant)
    pos = Position(board, v)
    cube_ply = engine_depth(v, ply, (6, 5))
    doc: dict[str, Any] = {
        "variant": VARIANT_NAMES[v],
        "board": board_view(np.array(board, np.int8)),
        "position_id": position_id(np.array(board, np.int8)) if v == STANDARD else None,
        "state": state.to_json(),
        "state_text": state.describe(),
        "cube": cube_document(pos, state, cube_ply, budget=ANALYSE_BUDGET),
        "dice": list(dice) if dice else None,
        "roll": None,
    }
    if dice:
        d1, d2 = int(dice[0]), int(dice[1])
        doc["roll"] = analyse_roll(pos, d1, d2, engine_depth(v, ply, (d1, d2)), state=state,
                                   budget=ANALYSE_BUDGET, cubeful=True,
                                   limit=ANALYSE_PLAYS)  # fmt: skip
    return doc


# ---------------------------------------------------------------------------
# The Starlette app
# ---------------------------------------------------------------------------


def create_app(data: str | os.PathLike[str] | None = None, ply: int = 1,
               hosts: set[str] | None = None, max_saved: int = MAX_SAVED) -> Any:  # fmt: skip
    """The ASGI app; games are saved in ``data`` (default: default_data_dir()). With
    `hosts`, a request whose Host header names another host is refused (403: a page of
    another site reaching this server through DNS rebinding)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    store = Store(Path(data) if data is not None else default_data_dir(), max_saved)
    reviews: dict[tuple[str, int, int, int], dict[str, Any]] = {}  # (id, game, ply, move)

    def guard(request: Request) -> None:
        """The checks of every API request: the host it was sent to, and for a request
        that changes something, where it comes from (Origin) and that it is JSON (so a
        page of another site cannot send one without the browser asking this server
        first)."""
        host = request.headers.get("host", "")
        try:
            name = urlsplit("//" + host).hostname or ""
        except ValueError:
            name = ""
        if hosts is not None and name not in hosts:
            raise ApiError(403, f"this server answers for {', '.join(sorted(hosts))}, not {host!r}")
        if request.method != "POST":
            return
        origin = request.headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1] != host:
            raise ApiError(403, f"a request from a page of {origin} is refused by {host}: "
                                "only its own pages may send requests")  # fmt: skip
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise ApiError(415, "send the request body as JSON (Content-Type: application/json)")
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit_of(request):
            raise ApiError(413, f"the request body is larger than {limit_of(request)} bytes")

    def limit_of(request: Request) -> int:
        return MAX_IMPORT if request.url.path == "/api/import" else MAX_BODY

    async def body_of(request: Request, ids: bool = False) -> Any:
        """The request's JSON body; `ids`: a refused body's error carries its "id" (the
        engine protocol's endpoints), where it still has one a reply can carry."""
        got = bytearray()  # read as it comes: a chunked body has no length said before it
        async for chunk in request.stream():
            got += chunk
            if len(got) > limit_of(request):
                raise ApiError(413, f"the request body is larger than {limit_of(request)} bytes")
        raw = bytes(got)
        if not raw.strip():
            return {}
        import json

        try:
            doc = protocol.loads(raw)
        except UnicodeDecodeError as e:  # as doublet engine says it, with the id kept
            raise ApiError(400, f"the request body is not UTF-8 text (byte {e.start + 1} is "
                                f"{raw[e.start]:#04x})",
                           protocol.id_of(raw) if ids else None) from None  # fmt: skip
        except json.JSONDecodeError as e:
            raise ApiError(400, f"the request body is not JSON: {e}") from None
        except DoubletError as e:  # NaN, Infinity, 1e999, a key twice, a lone surrogate
            raise ApiError(400, f"the request body is refused: {e}",
                           protocol.id_of(raw) if ids else None) from None  # fmt: skip
        except RecursionError:
            raise ApiError(400, "the request body is nested too deeply") from None
        except ValueError:
            raise ApiError(400, "the request body holds a number with too many digits",
                           protocol.id_of(raw) if ids else None) from None  # fmt: skip
        if not isinstance(doc, dict):
            raise ApiError(400, "the request body must be a JSON object")
        return doc

    def endpoint(work: Callable[..., Any], status: int = 200, *, body: bool = False,
                 ids: bool = False, lock: bool = True) -> Any:  # fmt: skip
        """An endpoint that runs work(gid, body) under the engine lock (unless `lock` is
        False: work that searches nothing, such as the version), off the event loop (a
        GET's work gets the query's parameters as its body); `ids`: body_of's."""

        async def handle(request: Request) -> Response:
            try:
                guard(request)
                doc = await body_of(request, ids) if body else dict(request.query_params)
                gid = request.path_params.get("gid", "")

                def locked() -> Any:  # (a review: the version waited 10 s for a search)
                    with _ENGINE if lock else contextlib.nullcontext():
                        return work(gid, doc)

                result = await run_in_threadpool(locked)
            except ApiError as e:
                return JSONResponse({"error": e.message, **(e.doc or {})}, status_code=e.status)
            except DoubletError as e:  # a bad value the work found
                return JSONResponse({"error": str(e)}, status_code=400)
            except Exception as e:  # a bug: a JSON 500, never a bare one
                why = f"internal error, please report it: {type(e).__name__}: {e}"
                return JSONResponse({"error": why}, status_code=500)
            if isinstance(result, Download):
                disposition = f'attachment; filename="{result.filename}"'
                return PlainTextResponse(result.text, media_type=result.media_type,
                                         headers={"Content-Disposition": disposition})  # fmt: skip
            if isinstance(result, str):
                return PlainTextResponse(result)
            return JSONResponse(result, status_code=status)

        return handle

    def create(_: str, doc: dict[str, Any]) -> dict[str, Any]:
        s = new_series(doc, ply)
        gid = store.add(s)
        return state(gid, s)

    def changing(change: Callable[[Series, Any], Any], what: str,
                 keys: frozenset[str] = frozenset()) -> Callable[[str, Any], Any]:  # fmt: skip
        """A request that changes the series: applied once (its "move"), then saved; its
        body holds "move" and `keys`, nothing else (a typo, such as "pionts" for a
        resignation's points, is a 400, not a default applied). A change may return a
        dict of extra keys for the state it answers with."""

        def work(gid: str, doc: Any) -> dict[str, Any]:
            s = store.get(gid)
            if isinstance(doc, dict):
                protocol.check_keys(doc, {"move", *keys}, what)
            move = doc.get("move") if isinstance(doc, dict) else None
            if move is None:
                why = "send the state's 'move' with a request that changes the game"
                raise ApiError(400, why + ": a retried request is then not applied twice")
            if s.names:  # (a review: opening one made the engine play the file's player 1)
                raise ApiError(409, "this series is a match file imported for its review: "
                                    "a record, not a game to play on")  # fmt: skip
            at_move(gid, s, move)
            try:
                extra = change(s, doc)
            except BaseException:
                store.games.pop(gid, None)  # what is on disk is the game: read it again
                raise
            store.save(gid)
            return {**state(gid, s), **(extra if isinstance(extra, dict) else {})}

        return work

    def at_move(gid: str, s: Series, move: Any) -> None:
        """400 unless `move` is an integer; 409, with the state, unless it is the game's
        move now (the request was made for an earlier state: another tab, a retry)."""
        if isinstance(move, bool) or not isinstance(move, int):
            raise ApiError(400, f"'move' is the state's move number, an integer, got "
                                f"{_shown(move)}")  # fmt: skip
        if move != move_of(s):
            raise ApiError(409, f"this request was for move {move!r}, but the game is at "
                                f"move {move_of(s)}: it was applied already, or another "
                                "request came first; the state is attached",
                           {"state": state(gid, s)})  # fmt: skip

    def stepping(gid: str, doc: Any) -> dict[str, Any]:
        """The options after the steps so far of the person's play (changes nothing). With
        the state's "move" (the page sends it) a request made for an earlier move is a 409,
        and so is one when the game is not at the person's play (another tab played it):
        either carries the state, as a stale change's does, so that the page catches up."""
        if isinstance(doc, dict):
            protocol.check_keys(doc, {"steps", "move"}, "a request for the steps")
        s = store.get(gid)
        if isinstance(doc, dict) and doc.get("move") is not None:
            at_move(gid, s, doc["move"])
        try:
            return options(s, doc)
        except ApiError as e:
            if e.status == 409 and e.doc is None:
                e.doc = {"state": state(gid, s)}
            raise

    def reading(read: Callable[[Series], Any]) -> Callable[[str, Any], Any]:
        def work(gid: str, _: Any) -> Any:
            return read(store.get(gid))

        return work

    def show(gid: str, _: Any) -> dict[str, Any]:
        s = store.get(gid)
        acting = to_act(s.game)
        if s.names:  # an imported match file: a record, never played on (a review)
            return state(gid, s)
        if acting == ENGINE or (s.game.over and len(s.results) == s.game.number):
            engine_acts(s)  # saved in the middle of the engine's turn
            store.save(gid)
        return state(gid, s)

    def reviewed(gid: str, query: dict[str, Any]) -> dict[str, Any]:
        # ("?gmae=2" reviewed the latest game without a word)
        protocol.check_keys(query, {"game", "ply"}, "a review's query")
        s = store.get(gid)
        depth = _int_field({"ply": _query_int(query, "ply", s.ply)}, "ply", s.ply, 0,
                           MAX_PLAY_PLY)  # fmt: skip
        g = _game_of(s, query.get("game"))
        key = (gid, g.number, depth, move_of(s))
        if key not in reviews:
            if len(reviews) >= 64:
                reviews.pop(next(iter(reviews)))
            reviews[key] = review(s, g.number + 1, depth)
        return reviews[key]

    def analysing(_: str, doc: dict[str, Any]) -> dict[str, Any]:
        return analyse(doc, ply)

    def program(cmd: str) -> Callable[[str, Any], Any]:
        """The HTTP API for programs: the engine protocol's request (its "cmd" is the path)
        answered by HTTP_SESSION (the HTTP bounds: no state between requests)."""

        def work(_: str, doc: dict[str, Any]) -> dict[str, Any]:
            ids = {"id": doc["id"]} if "id" in doc else None  # back with errors too
            if "cmd" in doc:
                raise ApiError(400, f"'cmd' is the path here: POST /api/{cmd} without it", ids)
            req = {"cmd": cmd, **doc}
            try:
                return protocol.with_id(req, HTTP_SESSION.reply(req))
            except DoubletError as e:  # 400, with the request's id
                raise ApiError(400, str(e), ids) from None

        return work

    def importing(_: str, doc: dict[str, Any]) -> dict[str, Any]:
        s = import_match(doc, ply)
        gid = store.add(s)
        return state(gid, s)

    def page(name: str) -> Callable[[Request], Any]:
        async def serve_page(_: Request) -> Response:
            return FileResponse(WEB / name)

        return serve_page

    async def favicon(_: Request) -> Response:
        return FileResponse(WEB / "favicon.svg", media_type="image/svg+xml")

    plays = changing(play, "a play", frozenset({"play", "steps"}))
    beavers = changing(lambda s, _: answer(s, "beaver"), "a beaver")
    resigns = changing(resign, "a resignation", frozenset({"points"}))
    api = [  # (path under /api/games, method, work, status, reads a body)
        ("", "POST", create, 201, True),
        ("/{gid}", "GET", show, 200, False),
        ("/{gid}/steps", "POST", stepping, 200, True),
        ("/{gid}/play", "POST", plays, 200, True),
        ("/{gid}/roll", "POST", changing(lambda s, _: roll_dice(s), "a roll"), 200, True),
        ("/{gid}/double", "POST", changing(lambda s, _: double(s), "a double"), 200, True),
        ("/{gid}/take", "POST", changing(lambda s, _: answer(s, "take"), "a take"), 200, True),
        ("/{gid}/pass", "POST", changing(lambda s, _: answer(s, "pass"), "a pass"), 200, True),
        ("/{gid}/drop", "POST", changing(lambda s, _: answer(s, "pass"), "a pass"), 200, True),
        ("/{gid}/beaver", "POST", beavers, 200, True),
        ("/{gid}/hint", "GET", reading(hint), 200, False),
        ("/{gid}/resign", "POST", resigns, 200, True),
        ("/{gid}/next", "POST", changing(lambda s, _: next_game(s), "the next game"), 200, True),
        ("/{gid}/export", "GET", reading(export_text), 200, False),
        ("/{gid}/mat", "GET", reading(export_mat), 200, False),
        ("/{gid}/review", "GET", reviewed, 200, False),
    ]
    routes = [
        Route("/", page("index.html")),
        Route("/review", page("review.html")),
        Route("/analysis", page("analysis.html")),
        Route("/favicon.ico", favicon),
        Route("/api/page/analysis", endpoint(analysing, body=True), methods=["POST"]),
        *(
            Route(f"/api/{cmd}", endpoint(program(cmd), body=True, ids=True), methods=["POST"])
            for cmd in HTTP_COMMANDS
        ),
        *(  # the spellings the protocol takes for a cmd ("analyze")
            Route(f"/api/{alias}", endpoint(program(cmd), body=True, ids=True), methods=["POST"])
            for alias, cmd in protocol.ALIASES.items()
            if cmd in HTTP_COMMANDS
        ),
        Route(
            "/api/version",
            endpoint(lambda _, __: HTTP_SESSION.version(), lock=False),
            methods=["GET"],
        ),
        Route("/api/openapi.json", endpoint(lambda _, __: openapi(), lock=False), methods=["GET"]),
        Route("/api/import", endpoint(importing, 201, body=True), methods=["POST"]),
        *(
            Route(f"/api/games{path}", endpoint(work, status, body=body), methods=[method])
            for path, method, work, status, body in api
        ),
        Mount("/static", StaticFiles(directory=WEB), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": f"no such API path: {request.url.path}"}, 404)
        return PlainTextResponse("not found", 404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        headers = getattr(exc, "headers", None) or {}  # Allow: what is (RFC 9110; a review)
        return JSONResponse({"error": f"{request.method} is not allowed here"}, 405,
                            headers=headers)  # fmt: skip

    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


def _query_int(query: dict[str, Any], key: str, default: int) -> Any:
    v = query.get(key)
    if v is None:
        return default
    try:
        return int(v)
    except ValueError:
        return v


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """The `serve` subcommand, registered by doublet.apps.cli."""
    p = sub.add_parser(
        "serve",
        help="play in the browser (a local web server)",
        description="Serve a page to play Doublet in the browser, against the engine: "
        "standard backgammon or Acey-Deucey, money sessions with the cube or matches to N "
        "points, a review of each finished game and an analysis page. Games are kept on "
        f"the server and saved in --data. Needs the web extra: {_WEB_EXTRA}.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--data",
        metavar="DIR",
        help="where games are saved (default $XDG_DATA_HOME/doublet/web or "
        "~/.local/share/doublet/web)",
    )
    p.add_argument(
        "--ply", type=int, default=1, help=f"default engine depth 0..{MAX_PLAY_PLY} (default 1)"
    )
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    import importlib.util

    missing = [m for m in ("starlette", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise DoubletError(f"doublet serve needs {' and '.join(missing)}: {_WEB_EXTRA}")
    if not 0 <= args.ply <= MAX_PLAY_PLY:
        raise DoubletError(f"--ply must be 0..{MAX_PLAY_PLY}, got {args.ply}")
    if not 0 <= args.port <= 65535:
        raise DoubletError(f"--port must be 0..65535, got {args.port}")
    import uvicorn

    data = Path(args.data) if args.data else default_data_dir()
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DoubletError(f"cannot use {str(data)!r} for saved games: "
                           f"{write_error(data, e, folder=True)}") from None  # fmt: skip
    busy = (f"another doublet serve is using the saved games in {str(data)!r}: stop it "
            "first, or give this one --data another folder")  # fmt: skip
    with held_lock(data / ".serve.lock", busy):  # two servers would overwrite each other
        remove_temps(data, "*.json")  # left by a server killed while saving
        sock = _listen(args.host, args.port)  # said now, not after "serving on"
        announce_compile(*SEARCH_KERNELS)
        # Bound to one address: answer only for it (and localhost); bound to all, for any.
        hosts = (None if args.host in ("0.0.0.0", "::")
                 else {"localhost", "127.0.0.1", "::1", args.host})  # fmt: skip
        app = create_app(data, args.ply, hosts=hosts)
        host = f"[{args.host}]" if ":" in args.host else args.host
        print(f"doublet: serving on http://{host}:{sock.getsockname()[1]}/ (games in "
              f"{data}); Ctrl-C stops", file=sys.stderr, flush=True)  # fmt: skip
        config = uvicorn.Config(app, log_level="warning")
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def _listen(host: str, port: int) -> Any:
    """A socket bound to host:port (port 0: a free one), or a DoubletError in words: the
    address unknown, the port taken."""
    import socket

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]  # fmt: skip
    except (socket.gaierror, UnicodeError) as e:
        why = e.strerror if isinstance(e, socket.gaierror) else str(e)
        raise DoubletError(f"cannot listen on {host!r}: {why}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise DoubletError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock
