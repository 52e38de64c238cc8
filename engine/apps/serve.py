"""`doublet serve`: play Doublet in the browser.

A Starlette (ASGI) app run by uvicorn serves the page (engine/web/: index.html, app.js,
style.css; plain JavaScript, no build step) and a JSON API. Starlette and uvicorn are
the `web` extra and are imported only here, only when the server starts, so playing and
analysing need numpy and numba alone.

Each series of games lives on the server under an unguessable id
(``secrets.token_urlsafe``): the id is the only key, so two browsers never see each
other's games. After every change the series is saved atomically to ``DATA/<id>.json``
(``doublet.games.game.save_json``), and a game not in memory is loaded from there, so a restart
of the server loses nothing. The person is side 0 and the engine side 1.

API (JSON in and out; errors are ``{"error": "..."}``: 400 malformed request, 403 a
request from another site's page (``Origin``) or, when the server is bound to one
address, for another host (``Host``: DNS rebinding), 404 unknown game, 409 not possible
now (game over, series over) or a ``move`` that is not the game's (a retried request:
the body then holds ``"state"``), 413 a body over 64 KiB, 415 a POST that is not
``application/json``, 422 illegal play, 429 too many saved games, 500 a bug, as JSON).
Every request that changes a game (play, resign, next) carries the state's ``"move"``,
so that it is applied once. Bodies of POSTs must be JSON (``Content-Type:
application/json``): a page of another site cannot send one without the browser asking
this server first.

- ``POST /api/games`` ``{"variant": "standard" | "acey-deucey", "ply": 0..3, "games":
  series length (0: no limit), "starter": "throw" | "you" | "engine", "seed": int
  (optional)}`` -> 201, the state (below).
- ``GET /api/games/{id}``: the state: ``{"id", "variant", "ply", "games", "score":
  {"you", "engine"}, "results": [...], "series_over", "game": {"number", "turn": "you"
  | "engine" | null, "dice", "opening", "over", "result", "no_play"}, "board": {...}
  (the person's view: "points" 0..24 with index p = the person's point p, > 0 the
  person's checkers, < 0 the engine's; "bar", "off", "unentered", "pips" each
  {"you", "engine"}), "last": the engine's turns since the person's last play,
  "record": every turn, "move": the game's move counter}``.
- ``POST /api/games/{id}/steps`` ``{"steps": [...]}``: the legal next steps after the
  person's steps so far (doublet.games.steps): ``{"board", "dice", "steps", "doublets",
  "complete", "again", "play"}``; nothing changes on the server.
- ``POST /api/games/{id}/play`` ``{"steps": [...]}`` or ``{"play": "13/7 8/7"}``: the
  person's whole play, checked against the legal plays (422 and nothing changes if it
  is not one); then the engine plays its turn(s), roll-again turns included. Returns
  the state (its "last" holds what the engine played).
- ``GET /api/games/{id}/hint``: the person's best plays ranked by equity, with the
  win and gammon chances and the steps of each.
- ``POST /api/games/{id}/resign`` ``{"points": 1 | 2 | 3}``: the person resigns.
- ``POST /api/games/{id}/next``: the next game of the series.
- ``GET /api/games/{id}/export``: the game as text, one line per turn.

Depth (doublet.search.choice.engine_depth): the engine searches at the series' ply
(0..3), but in Acey-Deucey a 1-2 (the roll
and its chosen doublet, up to ~114,000 plays) is searched at 0 ply, and other rolls at
1 ply at most (2 ply takes 10-20 s there), so that a move answers within a few seconds.
Hints use the same depths.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import numpy as np

from doublet.core import board as B
from doublet.core.board import VARIANT_NAMES, VARIANTS
from doublet.core.errors import ApiError, DoubletError, IllegalPlayError
from doublet.core.jit import announce_compile
from doublet.formats.notation import format_play
from doublet.formats.position import Play
from doublet.games.game import (
    GameError,
    SaveFileError,
    Series,
    Turn,
    save_json,
)
from doublet.games.opponent import engine_play
from doublet.games.steps import Turn as Steps
from doublet.games.steps import can_move, parse_steps
from doublet.nn.eval import equity
from doublet.rules.movegen import legal_outcomes
from doublet.search.analysis import PROB_NAMES, searcher
from doublet.search.choice import MAX_PLAY_PLY, engine_depth, ranking
from doublet.search.searcher import Limits

YOU, ENGINE = 0, 1
SIDES = ("you", "engine")
HINT_PLAYS = 5
TEXT_LIMIT = 20_000  # hints with more plays than this read as their steps (see hint)
WEB = Path(__file__).parent / "web"
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
_WEB_EXTRA = "pip install -e '.[web]' (starlette and uvicorn)"

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
            raise ApiError(500, f"the saved game cannot be read: {e}") from None
        self.games[gid] = s
        return s

    def save(self, gid: str) -> None:
        save_json(self.path(gid), self.games[gid].to_dict())


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


def _turn_json(t: Turn) -> dict[str, Any]:
    return {
        "side": SIDES[t.side],
        "dice": list(t.dice) if t.dice else None,
        "play": t.play,
        "again": t.again,
    }


def _result_json(r: Any) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"winner": SIDES[r.winner], "points": r.points, "name": r.name,
            "resigned": r.resigned}  # fmt: skip


def move_of(s: Series) -> int:
    """The series' move counter: it grows with every turn and every game, so that a
    state-changing request carrying it is applied once (a retried one gets 409)."""
    return 100_000 * s.game.number + len(s.game.record)


def state(gid: str, s: Series) -> dict[str, Any]:
    g = s.game
    last: list[Turn] = []
    for t in reversed(g.record):
        if t.side == YOU:
            break
        last.append(t)
    no_play = False
    if not g.over and g.turn == YOU:
        assert g.dice is not None
        no_play = not can_move(g.board, *g.dice, g.variant)
    return {
        "id": gid,
        "variant": VARIANT_NAMES[s.variant],
        "ply": s.ply,
        "games": s.games,
        "score": {"you": s.score[YOU], "engine": s.score[ENGINE]},
        "results": [_result_json(r) for r in s.results],
        "series_over": s.over,
        "game": {
            "number": g.number + 1,
            "turn": None if g.over else SIDES[g.turn],
            "dice": list(g.dice) if g.dice else None,
            "opening": list(g.opening) if g.opening else None,
            "over": g.over,
            "result": _result_json(g.result),
            "no_play": no_play,
        },
        "board": board_view(g.board_for(YOU)),
        "last": [_turn_json(t) for t in reversed(last)],
        "record": [_turn_json(t) for t in g.record],
        "move": move_of(s),
    }


# ---------------------------------------------------------------------------
# What the API does (plain functions; the Starlette layer below only moves JSON)
# ---------------------------------------------------------------------------


def _int_field(body: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    v = body.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ApiError(400, f"{key!r} must be an integer from {lo} to {hi}, got {v!r}")
    return v


def new_series(body: dict[str, Any], default_ply: int) -> Series:
    variant = body.get("variant", "standard")
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ApiError(400, f"'variant' must be one of {', '.join(VARIANTS)}, got {variant!r}")
    ply = _int_field(body, "ply", default_ply, 0, MAX_PLAY_PLY)
    games = _int_field(body, "games", 1, 0, 99)
    starter_name = body.get("starter", "throw")
    starters = {"throw": None, "you": YOU, "engine": ENGINE}
    if not isinstance(starter_name, str) or starter_name not in starters:
        raise ApiError(400, f"'starter' must be throw, you or engine, got {starter_name!r}")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                             or not 0 <= seed < 2**63):  # fmt: skip
        raise ApiError(400, f"'seed' must be an integer from 0 to 2**63 - 1, got {str(seed)[:30]}")
    s = Series.new(variant, games, seed, ply, starters[starter_name])
    engine_turns(s)
    return s


def engine_turns(s: Series) -> None:
    """The engine plays while it is on roll (roll-again turns included)."""
    g = s.game
    while not g.over and g.turn == ENGINE:
        assert g.dice is not None
        g.play(engine_play(g, engine_depth(g.variant, s.ply, g.dice)), ENGINE)
    if g.over:
        s.record_result()


def _your_turn(s: Series) -> None:
    if s.game.over:
        raise ApiError(409, "the game is over: start the next game or a new one")
    if s.game.turn != YOU:
        raise ApiError(409, "it is the engine's turn")


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
    _your_turn(s)
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
    _your_turn(s)
    g = s.game
    if isinstance(body, dict) and "play" in body and "steps" not in body:
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
    engine_turns(s)


def hint(s: Series) -> dict[str, Any]:
    """The best plays, ranked as `doublet analyse` ranks them (deepest ply, then equity).
    Only the plays shown are written out: an Acey-Deucey 1-2 can have 100,000 plays, and
    for more than TEXT_LIMIT of them even one play's text takes seconds (all the chain's
    texts are found at once), so there a play reads as its steps."""

    _your_turn(s)
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
            "probabilities": {k: round(float(v), 6) for k, v in zip(PROB_NAMES, probs[i],
                                                                      strict=True)},
            "again": bool(again[i]),
            "ply": int(plies[i]),
            "steps": [x.to_json() if not isinstance(x, int) else {"doublet": x} for x in path],
        })  # fmt: skip
    return {"ply": ply, "dice": list(g.dice), "count": len(boards), "plays": out}


def resign(s: Series, body: Any) -> None:
    _your_turn(s)
    points = _int_field(body if isinstance(body, dict) else {}, "points", 1, 1, 3)
    s.game.resign(YOU, points)
    s.record_result()


def next_game(s: Series) -> None:
    if not s.game.over:
        raise ApiError(409, "the game is not over yet")
    if s.over:
        raise ApiError(409, "the series is over: start a new one")
    try:
        s.next_game()
    except GameError as e:
        raise ApiError(409, str(e)) from None
    engine_turns(s)


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
            raise ApiError(403, f"a request from {origin} may not change games on {host}")
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise ApiError(415, "send the request body as JSON (Content-Type: application/json)")
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY:
            raise ApiError(413, f"the request body is larger than {MAX_BODY} bytes")

    async def body_of(request: Request) -> Any:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            raise ApiError(413, f"the request body is larger than {MAX_BODY} bytes")
        if not raw.strip():
            return {}
        import json

        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the request body is not JSON: {e}") from None
        except RecursionError:
            raise ApiError(400, "the request body is nested too deeply") from None
        except ValueError:
            raise ApiError(400, "the request body holds a number with too many digits") from None
        if not isinstance(doc, dict):
            raise ApiError(400, "the request body must be a JSON object")
        return doc

    def endpoint(work: Callable[..., Any], status: int = 200, *, body: bool = False) -> Any:
        """An endpoint that runs work(gid, body) under the engine lock, off the event loop."""

        async def handle(request: Request) -> Response:
            try:
                guard(request)
                doc = await body_of(request) if body else None
                gid = request.path_params.get("gid", "")

                def locked() -> Any:
                    with _ENGINE:
                        return work(gid, doc)

                result = await run_in_threadpool(locked)
            except ApiError as e:
                return JSONResponse({"error": e.message, **(e.doc or {})}, status_code=e.status)
            except DoubletError as e:  # a bad value the work found
                return JSONResponse({"error": str(e)}, status_code=400)
            except Exception as e:  # a bug: a JSON 500, never a bare one
                why = f"internal error, please report it: {type(e).__name__}: {e}"
                return JSONResponse({"error": why}, status_code=500)
            if isinstance(result, str):
                return PlainTextResponse(result)
            return JSONResponse(result, status_code=status)

        return handle

    def create(_: str, doc: dict[str, Any]) -> dict[str, Any]:
        s = new_series(doc, ply)
        gid = store.add(s)
        return state(gid, s)

    def changing(change: Callable[[Series, Any], Any]) -> Callable[[str, Any], Any]:
        def work(gid: str, doc: Any) -> dict[str, Any]:
            s = store.get(gid)
            move = doc.get("move") if isinstance(doc, dict) else None
            if move is None:
                why = "send the state's 'move' with a request that changes the game"
                raise ApiError(400, why + ": a retried request is then not applied twice")
            if move != move_of(s):
                raise ApiError(409, f"this request was for move {move!r}, but the game is at "
                                    f"move {move_of(s)}: it was applied already, or another "
                                    "request came first; the state is attached",
                               {"state": state(gid, s)})  # fmt: skip
            try:
                change(s, doc)
            except BaseException:
                store.games.pop(gid, None)  # what is on disk is the game: read it again
                raise
            store.save(gid)
            return state(gid, s)

        return work

    def reading(read: Callable[[Series], Any]) -> Callable[[str, Any], Any]:
        def work(gid: str, _: Any) -> Any:
            return read(store.get(gid))

        return work

    def show(gid: str, _: Any) -> dict[str, Any]:
        s = store.get(gid)
        if not s.game.over and s.game.turn == ENGINE:  # saved in the middle of a turn
            engine_turns(s)
            store.save(gid)
        return state(gid, s)

    def names() -> tuple[str, str]:
        return ("you", "Doublet")

    async def index(_: Request) -> Response:
        return FileResponse(WEB / "index.html")

    api = [  # (path under /api/games, method, work, status, reads a body)
        ("", "POST", create, 201, True),
        ("/{gid}", "GET", show, 200, False),
        ("/{gid}/steps", "POST", lambda gid, doc: options(store.get(gid), doc), 200, True),
        ("/{gid}/play", "POST", changing(play), 200, True),
        ("/{gid}/hint", "GET", reading(hint), 200, False),
        ("/{gid}/resign", "POST", changing(resign), 200, True),
        ("/{gid}/next", "POST", changing(lambda s, _: next_game(s)), 200, True),
        ("/{gid}/export", "GET", reading(lambda s: s.game.export(names())), 200, False),
    ]
    routes = [
        Route("/", index),
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
        return JSONResponse({"error": f"{request.method} is not allowed here"}, 405)

    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """The `serve` subcommand, registered by doublet.apps.cli."""
    p = sub.add_parser(
        "serve",
        help="play in the browser (a local web server)",
        description="Serve a page to play Doublet in the browser, against the engine: "
        "standard backgammon or Acey-Deucey, single games or series. Games are kept on the "
        f"server and saved in --data. Needs the web extra: {_WEB_EXTRA}.",
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
        raise DoubletError(f"cannot use {str(data)!r} for saved games: {e.strerror}") from None
    announce_compile("searcher", "_analyse_root")
    # Bound to one address: answer only for it (and localhost); bound to all, for any.
    hosts = None if args.host in ("0.0.0.0", "::") else {"localhost", "127.0.0.1", "::1", args.host}
    app = create_app(data, args.ply, hosts=hosts)
    print(f"doublet: serving on http://{args.host}:{args.port}/ (games in {data}); "
          "Ctrl-C stops", file=sys.stderr, flush=True)  # fmt: skip
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
