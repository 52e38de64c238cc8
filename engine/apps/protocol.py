"""The engine protocol: one JSON request in, one JSON reply out.

``doublet engine`` reads a request a line on stdin and writes each reply as a line on
stdout; ``doublet serve`` answers the same requests (without ``cmd``: the path names it)
at ``POST /api/best``, ``/api/analyse``, ``/api/eval``, ``/api/cube`` and ``/api/moves``.
engine/apps/protocol.md documents every request, reply, default and error; the tables below
(KEYS, DEFAULTS) are what it describes and what the tests check it against.

A Session holds a client's defaults (``{"cmd": "set", ...}``) and the models it loaded.
The HTTP API answers with one session of its own bounds (doublet.apps.serve.HTTP_BOUNDS):
no ``set``, no ``model`` paths, no rollouts, and a time limit on every request, so it
holds no state between requests.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, fields
from typing import Any

from doublet import __version__
from doublet.core import board as B
from doublet.core.board import STANDARD, VARIANT_NAMES, VARIANTS
from doublet.core.dice import MAX_SEED, check_seed
from doublet.core.errors import DoubletError, InvalidDiceError, key_list, shown
from doublet.core.parallel import MAX_WORKERS
from doublet.cube.state import CubeState, from_request
from doublet.formats.ids import (
    check_in_play,
    keys_once,
    load_json_board,
    parse_position,
    position_id,
    variant_number,
)
from doublet.formats.position import Position
from doublet.nn.eval import check_variant, default_model, load_model
from doublet.rules.movegen import legal_outcomes
from doublet.search.analysis import (
    analyse_position,
    analyse_roll,
    best_play,
    cube_document,
    evaluate_position,
    evaluate_with_cube,
)
from doublet.search.cubeful import DEFAULT_METHOD, METHODS
from doublet.search.rollout import RolloutSettings
from doublet.search.rollout_analysis import (
    CUBE_OPTIONS,
    NO_CUBE_WITH_ROLL,
    no_cube_with_roll,
    rollout_document,
)

PROTOCOL = 2  # the protocol's version: 2 added version, set, id, unknown-key errors
MAX_PLY = 4
ANALYSIS_PLY = 2  # the default depth of best, analyse, eval and cube, here and in the CLI
ENGINE_TIME = 30.0  # seconds: the bound of a request that gives no "time" (doublet engine)
MAX_TIME = 600.0  # the most a request may ask for (doublet engine)

_COMMON = {"cmd", "id"}
_POSITION = {"position", "variant"}
_SEARCH = {"ply", "time", "model"}
_STATE = {"cube", "match", "jacoby", "beavers"}
_ROLLOUT = {"trials", "truncate", "seed", "luck", "bearoff", "cubeful", "cube_ply", "until_se",
            "workers", "ray", "top", "select_ply"}  # fmt: skip
KEYS: dict[str, set[str]] = {
    "best": _COMMON | _POSITION | _SEARCH | _STATE | {"dice"},
    "analyse": _COMMON | _POSITION | _SEARCH | _STATE | {"dice", "method", "limit"},
    "eval": _COMMON | _POSITION | _SEARCH | _STATE | {"method"},
    "cube": _COMMON | _POSITION | _SEARCH | _STATE | {"method"},
    "moves": _COMMON | _POSITION | {"dice"},
    "rollout": _COMMON | _POSITION | _SEARCH | _STATE | _ROLLOUT | {"dice"},
    "version": set(_COMMON),
    "set": _COMMON | {"ply", "time", "model", "variant", "method"},
    "quit": set(_COMMON),
}
ALIASES = {"analyze": "analyse"}
SUMMARIES = {
    "best": "the best play of a roll",
    "analyse": "every play of a roll ranked (with dice), or the chances and the cube "
               "decision before the roll (without)",
    "eval": "the side on roll's chances before it rolls",
    "cube": "the cube decision before the roll",
    "moves": "every legal play of a roll",
    "rollout": "a rollout of the position, or of the best plays of a roll",
    "version": "the engine's name, version, protocol, commands, defaults and limits",
    "set": "change this session's defaults",
    "quit": "end the session",
}  # fmt: skip
# What "set" changes, and the value of each before it does (None: see engine/apps/protocol.md).
DEFAULTS: dict[str, Any] = {"ply": ANALYSIS_PLY, "time": None, "model": None, "variant": None,
                            "method": DEFAULT_METHOD}  # fmt: skip


# Each key's JSON schema and meaning (engine/apps/protocol.md says more; the HTTP API's OpenAPI
# description is built from these).
_COUNTS = {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 15},
           "minItems": 26, "maxItems": 26}  # fmt: skip
_BOARD = {"type": "object", "description": 'a JSON board: {"variant", "mover": [26 counts], '
          '"opponent": [26 counts]}',
          "properties": {"variant": {"type": "string", "enum": sorted(VARIANTS)},
                         "mover": _COUNTS, "opponent": _COUNTS},
          "required": ["mover", "opponent"]}  # fmt: skip
_PAIR = {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2,
         "maxItems": 2}  # fmt: skip
KEY_SCHEMAS: dict[str, tuple[dict[str, Any], str]] = {
    "cmd": ({"type": "string", "enum": sorted(KEYS)}, "the command"),
    "id": ({}, "any JSON value, returned as the reply's first key"),
    "position": ({"oneOf": [{"type": "string"}, _BOARD]},
                 "a gnubg Position ID (optionally ID:MatchID), an XGID or a JSON board"),
    "variant": ({"oneOf": [{"type": "string", "enum": sorted(VARIANTS)},
                           {"type": "integer", "enum": [0, 1]}]},
                "the rules, by name or 0 / 1 (default: the position's; a gnubg ID or XGID is "
                "standard)"),
    "dice": ({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6},
              "minItems": 2, "maxItems": 2}, "the roll (default: an XGID's or match ID's dice)"),
    "ply": ({"type": "integer", "minimum": 0, "maximum": MAX_PLY},
            f"search depth (default {ANALYSIS_PLY}; doublet engine's rollout: the trials' "
            "depth, 0 or 1)"),
    "time": ({"type": "number", "exclusiveMinimum": 0},
             "seconds: deepen one ply at a time while they last, answer with the deepest "
             "completed (without it the search runs at 'ply', bounded by the server's limit)"),
    "model": ({"type": "string"}, "path of a model .npz (doublet engine only)"),
    "method": ({"type": "string", "enum": list(METHODS)},
               f"cube decisions by a cubeful search or Janowski's conversion (default "
               f"{DEFAULT_METHOD})"),
    "cube": ({"type": "object", "properties": {"value": {"type": "integer"},
              "owner": {"type": "string", "enum": ["mover", "opponent", "centered"]}},
              "additionalProperties": False},
             "the cube (default: an XGID's, else centered at 1)"),
    "match": ({"type": ["object", "null"], "properties": {
               "length": {"type": "integer"}, "away": _PAIR,
               "score": _PAIR, "crawford": {"type": "boolean"},
               "no_cube": {"type": "boolean"}},
               "required": ["length"], "anyOf": [{"required": ["away"]},
                                                 {"required": ["score"]}],
               "additionalProperties": False},
              "the match (null: money play)"),
    "jacoby": ({"type": "boolean"}, "money play: gammons count once the cube has turned"),
    "beavers": ({"type": "boolean"}, "money play: the taker may beaver"),
    "limit": ({"type": "integer", "minimum": 1}, "analyse: list only the best N plays"),
    "trials": ({"type": "integer"}, "rollout: trials (default 1296)"),
    "truncate": ({"type": "integer"}, "rollout: value by the net after P plays (0: to the end)"),
    "seed": ({"type": "integer", "minimum": 0, "maximum": MAX_SEED},
             "rollout: the dice's seed, 0 to 2**64 - 1 (default 1)"),
    "luck": ({"type": "boolean"}, "rollout: luck adjustment (default true)"),
    "cubeful": ({"type": "boolean"}, "rollout: play the cube in the trials (default false: "
                "Janowski's conversion of the cubeless rollout)"),
    "cube_ply": ({"type": "integer"}, "rollout with cubeful: the cube decisions' depth, 0 or 1"),
    "bearoff": ({"type": "boolean"}, "rollout: end at the exact bear-off database (default "
                "true)"),
    "until_se": ({"type": "number"}, "rollout: stop at this standard error"),
    "workers": ({"type": "integer"}, "rollout: local processes (default 2)"),
    "ray": ({"type": "string"}, "rollout: a Ray address, 'auto' or 'local'"),
    "top": ({"type": "integer"}, "rollout with dice: the plays rolled out (default 3)"),
    "select_ply": ({"type": "integer"}, "rollout with dice: the depth choosing them (default 1)"),
}  # fmt: skip


@dataclass(frozen=True)
class Bounds:
    """What a session allows: the time a request without "time" is bounded by, the most
    one may ask for, and which commands and keys are open (the HTTP API closes some)."""

    default_time: float = ENGINE_TIME
    max_time: float = MAX_TIME
    max_ply: int = MAX_PLY
    settable: bool = True  # "set" and "model"
    where: str = "doublet engine"
    commands: tuple[str, ...] | None = None  # the commands served (None: all of KEYS)
    max_plays: int | None = None  # the most plays a reply lists (None: all)


ENGINE_LIMITS = Bounds()


KEEP_NULL = ("match", "id", "position")  # null is a value here (a position is required)


def check_keys(req: dict[str, Any], keys: set[str], what: str,
               listed: set[str] | None = None) -> None:  # fmt: skip
    """DoubletError naming the keys of `req` that `what` does not take, with the keys it
    does (`listed`, default `keys`): a typo is an error, not ignored."""
    unknown = set(req) - keys
    if unknown:
        names = key_list(sorted(unknown, key=str))[1:-1]
        raise DoubletError(f"{what} takes no {names}: its keys are "
                           f"{', '.join(sorted(keys if listed is None else listed))}")  # fmt: skip


def dice(values: Any, text: bool = False) -> tuple[int, int]:
    """Two dice from a request's JSON (two numbers), or with `text` from the command
    line's words ("3" "1", or one word: "31", "3-1"); InvalidDiceError naming the bad one."""
    if text and isinstance(values, (list, tuple)) and len(values) == 1 and isinstance(
            values[0], str):  # fmt: skip
        one = re.fullmatch(r"\s*([1-6])\s*[-/,x]?\s*([1-6])\s*", values[0])
        if one:
            values = list(one.groups())
    if not isinstance(values, (list, tuple)) or len(values) != 2:
        raise InvalidDiceError(f"dice must be two numbers from 1 to 6, got {shown(values, 40)}")
    out = []
    for v in values:
        if text and isinstance(v, str):
            word = v.strip()
            if not (word.isascii() and word.isdigit() and len(word) <= 2):
                raise InvalidDiceError(f"a die must be a number from 1 to 6, got {v[:20]!r}")
            v = int(word)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6:
            raise InvalidDiceError(f"a die must be a number from 1 to 6, got {shown(v, 20)}")
        out.append(v)
    return out[0], out[1]


def _whole(req: dict[str, Any], key: str, default: int, lo: int | None = None,
           hi: int | None = None) -> int:  # fmt: skip
    v = req.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or (
            hi is not None and v > hi):  # fmt: skip
        span = "" if lo is None else f" {lo}..{hi}" if hi is not None else f" of at least {lo}"
        raise DoubletError(f"'{key}' must be an integer{span}, got {shown(v, 30)}")
    return v


def _seed(req: dict[str, Any]) -> int:
    """A rollout's "seed": 0..MAX_SEED (a larger one would repeat a smaller one's dice)."""
    return check_seed(req.get("seed", RolloutSettings.seed), "'seed' must be an integer from")


def _board_text(position: Any) -> Any:
    """A JSON board given as its text, read (once, by the parser's reader, which refuses
    a key given twice as a request's reader does) into its dict, so that whether it names
    its variant can be seen; any other position as given (the parser says what is wrong)."""
    if isinstance(position, str) and position.lstrip().startswith("{"):
        return load_json_board(position)
    return position


class Session:
    """One client's requests: its defaults (set), the models it named, and the bounds."""

    def __init__(self, bounds: Bounds = ENGINE_LIMITS) -> None:
        self.bounds = bounds
        self.defaults = dict(DEFAULTS)
        self.models: dict[str, Any] = {}

    # -- the pieces of a request ----------------------------------------------------------
    def _model(self, req: dict[str, Any], variant: int | None,
               subject: str = "this position") -> Any:  # fmt: skip
        """The request's model (its "model", else the session's, else the shipped one),
        refused when it is of another variant than `variant` (None: not checked), which
        `subject` has (check_variant's words)."""
        path = req.get("model", self.defaults["model"])
        if path is None:
            return default_model(STANDARD if variant is None else variant)
        if not self.bounds.settable:
            raise DoubletError(f"'model' is not taken by {self.bounds.where}: it uses the "
                               "server's models")  # fmt: skip
        if not isinstance(path, str) or not path:
            raise DoubletError(f"'model' is the path of a model .npz, got {shown(path, 40)}")
        if path not in self.models:
            self.models[path] = load_model(path)
        model = self.models[path]
        return model if variant is None else check_variant(model, path, variant, subject)

    def _ply(self, req: dict[str, Any]) -> int:
        ply = req.get("ply", self.defaults["ply"])
        hi = self.bounds.max_ply
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= hi:
            raise DoubletError(f"'ply' must be an integer 0..{hi}, got {shown(ply, 30)}")
        return ply

    def _time(self, req: dict[str, Any]) -> tuple[float, bool]:
        """(the budget in seconds, whether to deepen iteratively within it): a "time"
        deepens while it lasts; without one, the session's bound caps the search."""
        t = req.get("time", self.defaults["time"])
        if t is None:
            return self.bounds.default_time, False
        hi = self.bounds.max_time
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= hi:
            raise DoubletError(f"'time' is a number of seconds above 0, at most {hi:g} "
                               f"({self.bounds.where}), got {shown(t, 30)}")  # fmt: skip
        return float(t), True

    def _method(self, req: dict[str, Any]) -> str:
        method = req.get("method", self.defaults["method"])
        if method not in METHODS:
            raise DoubletError(f"'method' is one of {', '.join(METHODS)}, got {shown(method, 30)}")
        return str(method)

    def _position(self, req: dict[str, Any], cmd: str) -> tuple[Position, dict[str, Any]]:
        if "position" not in req:
            raise DoubletError(f"'{cmd}' needs a 'position'")
        position, variant = _board_text(req["position"]), req.get("variant")
        named = isinstance(position, dict) and position.get("variant") is not None
        if variant is None and not named:
            variant = self.defaults["variant"]  # a JSON board's own variant wins over it
        board, variant, meta = parse_position(position, variant)
        return Position.checked(board, variant), meta

    # -- requests ----------------------------------------------------------------------------
    def command(self, req: Any) -> str:
        """The request's command, its keys checked: DoubletError naming what is wrong."""
        if not isinstance(req, dict):
            raise DoubletError("a request is a JSON object with a 'cmd'")
        cmd = req.get("cmd")
        cmd = ALIASES.get(cmd, cmd) if isinstance(cmd, str) else cmd
        served = self.bounds.commands or tuple(KEYS)
        if "cmd" not in req:
            raise DoubletError(f"a request needs a 'cmd': one of {', '.join(served)}")
        if cmd not in served:
            raise DoubletError(f"unknown cmd {shown(cmd, 30)}: use {', '.join(served)}")
        taken = KEYS[cmd] - {"cmd"} - (set() if self.bounds.settable else {"model"})
        check_keys(req, KEYS[cmd], f"'{cmd}'", taken)
        return cmd

    def reply(self, req: Any) -> dict[str, Any]:
        """The reply to one request (raises DoubletError for a bad one; "quit" is the
        caller's: it gets {})."""
        cmd = self.command(req)
        if cmd == "quit":
            return {}
        if cmd == "version":
            return self.version()
        if cmd == "set":
            return self.set(req)
        # null is the default, as if the key were left out (a review found it the default
        # for some keys and an error for others); but 'match': null is money play, and
        # the "id" is echoed as given (by the caller).
        req = {k: v for k, v in req.items() if v is not None or k in KEEP_NULL}
        pos, meta = self._position(req, cmd)
        out = self._of_position(req, cmd, pos, meta)
        if meta.get("note"):  # a gnubg ID or XGID read as Acey-Deucey: what it cannot hold
            out["note"] = meta["note"]
        return out

    def _of_position(self, req: dict[str, Any], cmd: str, pos: Position,
                     meta: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
        """reply() for the commands that take a position."""
        if cmd == "moves":
            CubeState.from_meta(meta)  # an ID's cube fields are refused here as elsewhere
            roll = self._roll(req, meta, cmd)
            cap = self.bounds.max_plays
            if cap is not None:
                check_in_play(pos.board, pos.variant)
                n = len(legal_outcomes(pos.board, *roll, pos.variant)[0])
                if n > cap:
                    raise DoubletError(f"this roll has {n:,} plays; {self.bounds.where} lists "
                                       f"at most {cap:,} (doublet engine or doublet moves "
                                       "list them all)")  # fmt: skip
            return {"plays": moves(pos, roll)}
        check_in_play(pos.board, pos.variant)
        state = from_request(req, CubeState.from_meta(meta))
        model = self._model(req, pos.variant)
        budget, iterative = self._time(req)
        if cmd == "rollout":  # its "ply" is the trials' checker play, checked there
            return self._rollout(req, pos, meta, state, model, budget, iterative)
        ply = self._ply(req)
        # A method is checked whether or not the request ends up using it.
        method = self._method(req) if "method" in KEYS[cmd] else DEFAULT_METHOD
        if cmd == "cube":
            return cube_document(pos, state, ply, model, method, budget, iterative)
        if cmd == "eval":
            if not CubeState.carried(meta) and not any(k in req for k in _STATE):
                return evaluate_position(pos, ply, model, budget, iterative)
            return evaluate_with_cube(pos, state, ply, model, method, budget, iterative)
        if cmd == "analyse":
            limit = _whole(req, "limit", 0, 1) if req.get("limit") is not None else None
            cap = self.bounds.max_plays
            if cap is not None:
                limit = min(limit or cap, cap)
            if "dice" not in req and not meta.get("roll"):
                if limit is not None and req.get("limit") is not None:
                    raise DoubletError("'limit' lists the best plays of a roll: give "
                                       "'dice' (without, analyse gives the chances and the "
                                       "cube)")  # fmt: skip
                return analyse_position(pos, state, ply, model, method, budget, iterative)
            d1, d2 = self._roll(req, meta, cmd)
            _refuse_unused_cube(req, state, (d1, d2))
            return analyse_roll(pos, d1, d2, ply, model, state, budget, limit=limit,
                                iterative=iterative)  # fmt: skip
        d1, d2 = self._roll(req, meta, cmd)
        _refuse_unused_cube(req, state, (d1, d2))
        return best_play(pos, d1, d2, ply, model, state, budget, iterative=iterative)

    def answer(self, req: Any) -> dict[str, Any]:
        """reply(), with a bad request's error as {"error": ...} (a failure of the engine
        itself too: "internal error, please report it: ..."); the request's "id" (any
        JSON value) comes back first in its reply."""
        try:
            out = self.reply(req)
        except DoubletError as e:
            out = {"error": str(e)}
        except RecursionError:
            out = {"error": "the request is nested too deeply"}
        except Exception as e:  # a bug must not end the engine for its client
            out = {"error": f"internal error, please report it: {type(e).__name__}: {e}"}
        return with_id(req, out)

    def _roll(self, req: dict[str, Any], meta: dict[str, Any], cmd: str) -> tuple[int, int]:
        if "dice" in req:
            return dice(req["dice"])
        if meta.get("roll"):
            return meta["roll"]
        raise DoubletError(f"'{cmd}' needs 'dice': [d1, d2]")

    def version(self) -> dict[str, Any]:
        b = self.bounds
        return {"name": "doublet", "version": __version__, "protocol": PROTOCOL,
                "commands": sorted(b.commands or KEYS), "variants": sorted(VARIANTS),
                "defaults": dict(self.defaults),
                "limits": {"max_ply": b.max_ply, "time_bound": b.default_time,
                           "max_time": b.max_time}}  # fmt: skip

    def set(self, req: dict[str, Any]) -> dict[str, Any]:
        """Change the session's defaults (a key set to null goes back to its default); each
        value is checked as a request's would be, so a bad one changes nothing."""
        if not self.bounds.settable:
            raise DoubletError(f"'set' is not taken by {self.bounds.where}: each request "
                               "gives its own keys")  # fmt: skip
        new = dict(self.defaults)
        for key in KEYS["set"] - _COMMON:
            if key in req:
                new[key] = DEFAULTS[key] if req[key] is None else req[key]
        probe = Session(self.bounds)
        probe.defaults, probe.models = new, self.models
        probe._ply({})
        probe._time({})
        probe._method({})
        variant = None
        if new["variant"] is not None:  # what a request takes (0 and 1 too)
            try:
                variant = variant_number(new["variant"])
            except DoubletError:
                raise DoubletError(f"'variant' is one of {', '.join(sorted(VARIANTS))} (or "
                                   f"0, 1), got {shown(new['variant'], 30)}") from None  # fmt: skip
            new["variant"] = VARIANT_NAMES[variant]  # echoed by its name, as replies say it
        if new["model"] is not None:
            probe._model({}, variant, "the 'variant' set")  # set has no position
        self.defaults = new
        return {"defaults": dict(new)}

    def _rollout(self, req: dict[str, Any], pos: Position, meta: dict[str, Any],
                 state: CubeState, model: Any, budget: float,
                 timed: bool) -> dict[str, Any]:  # fmt: skip
        """doublet rollout's document, its options as keys (ply: the trials' checker play,
        0 or 1; select_ply: the search that picks the plays). `timed` (a "time"): the
        rollout stops at the budget; without, its trials all run (as doublet rollout's
        without --time) and the budget, the session's bound, bounds the search that
        picks the plays as it bounds any search."""
        from doublet.core.parallel import shared_executor

        flags = {}
        for key, default in (("luck", True), ("bearoff", True), ("cubeful", False)):
            flags[key] = req.get(key, default)
            if not isinstance(flags[key], bool):
                raise DoubletError(f"'{key}' is true or false, got {shown(flags[key], 30)}")
        until = req.get("until_se", 0.0)
        if isinstance(until, bool) or not isinstance(until, (int, float)) or until < 0:
            raise DoubletError(f"'until_se' is a number >= 0, got {shown(until, 30)}")
        ray = req.get("ray")
        if ray is not None and not isinstance(ray, str):
            raise DoubletError(f"'ray' is an address, 'auto' or 'local', got {shown(ray, 30)}")
        settings = RolloutSettings(trials=_whole(req, "trials", RolloutSettings.trials),
                                   ply=req.get("ply", 0), truncate=_whole(req, "truncate", 0),
                                   seed=_seed(req), until_se=float(until),
                                   cube_ply=req.get("cube_ply", 0),
                                   **flags)  # fmt: skip
        # Each range as RolloutSettings states it (the trials' ply is 0 or 1, not a
        # search's 0..4), each key named as a request writes it.
        settings.check({f.name: f"'{f.name}'" for f in fields(RolloutSettings)})
        roll = dice(req["dice"]) if "dice" in req else meta.get("roll")
        for key, what in (("top", "is the number of a roll's plays rolled out"),
                          ("select_ply", "is the depth that picks a roll's plays")):  # fmt: skip
            if roll is None and key in req:  # as 'limit' without a roll: it would do nothing
                raise DoubletError(f"'{key}' {what}: give 'dice' (without, the rollout is of "
                                   "the position)")  # fmt: skip
        _refuse_unused_cube(req, state, roll)
        ex = shared_executor(_whole(req, "workers", 2, 1, MAX_WORKERS), ray)
        return rollout_document(pos, roll, settings, state, model, _whole(req, "top", 3, 1),
                                _whole(req, "select_ply", 1, 0, MAX_PLY), ex, None,
                                budget if timed else None,
                                select_bound=None if timed else budget)  # fmt: skip


def _refuse_unused_cube(req: dict[str, Any], state: CubeState, roll: Any) -> None:
    """DoubletError for a cube key asked for (true) that would do nothing: with a roll
    where no cube is turned (no_cube_with_roll: money play with the cube centred),
    'cubeful' (a rollout's) and 'beavers'. false is what is done there: taken."""
    if roll is None or not no_cube_with_roll(state):
        return
    for key, what in CUBE_OPTIONS.items():  # doublet analyse and rollout refuse their flags alike
        if req.get(key) is True:
            raise DoubletError(f"'{key}' {what}, but {NO_CUBE_WITH_ROLL}")


def _no_constant(name: str) -> Any:
    raise DoubletError(f"it holds {name}, which is not a JSON number (a reply could not carry it)")


def _finite(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise DoubletError(f"it holds {text[:30]}, too large for a JSON number (a reply could "
                           "not carry it)")  # fmt: skip
    return v


_no_twice = keys_once("it", DoubletError)  # "line refused: it gives the key ..."


# Half of a UTF-16 surrogate pair: JSON's "\ud800" escape decodes to one alone, which
# is not a character (json.dumps writes it back as the escape; strict parsers refuse it).
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _no_surrogate(doc: Any) -> None:
    """DoubletError if a string or key anywhere in `doc` holds a lone surrogate (looked
    for with a stack, not recursion: nesting as deep as json.loads reads is fine)."""
    todo = [doc]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            found = _SURROGATE.search(v)
            if found:
                raise DoubletError(f"it holds a lone surrogate (\\u{ord(found.group()):04x}) "
                                   "in a string, half of a UTF-16 pair and not a character "
                                   "(a reply could not carry it)")  # fmt: skip
        elif isinstance(v, dict):
            todo.extend(v)
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)


def loads(text: str | bytes) -> Any:
    """json.loads for a request: NaN, Infinity and numbers too large for a float are
    refused (DoubletError), since a reply echoing them (an "id") would not be JSON; so is
    a lone surrogate in a string (an "id" echoed would not be Unicode text) and a key
    given twice in one object (JSON would keep the last silently)."""
    if isinstance(text, (bytes, bytearray)):  # UTF-8 alone: json.loads guessed UTF-16 and
        text = bytes(text).decode("utf-8")  # took a BOM (a review); UnicodeDecodeError
    doc = json.loads(text, parse_constant=_no_constant, parse_float=_finite,
                     object_pairs_hook=_no_twice)  # fmt: skip
    _no_surrogate(doc)
    return doc


class _Unusable(Exception):
    """An "id" that id_of read but a reply could not carry."""


_BAD = object()  # id_of's reading of a value loads refuses (NaN, 1e999, 5,000 digits)


class _Pairs(list[tuple[str, Any]]):
    """An object as id_of reads it: its pairs, a key given twice kept."""


def _unusable(_: str) -> Any:
    return _BAD


def _lenient_number(text: str) -> Any:
    try:
        v = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:  # an integer of thousands of digits
        return _BAD
    return v if not isinstance(v, float) or math.isfinite(v) else _BAD


def _plain(v: Any) -> Any:
    """An id_of value as loads would give it, or _Unusable raised (a NaN, a key twice,
    a number too long inside it)."""
    if v is _BAD:
        raise _Unusable
    if isinstance(v, _Pairs):
        out = {k: _plain(x) for k, x in v}
        if len(out) < len(v):
            raise _Unusable
        return out
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def id_of(text: str | bytes) -> dict[str, Any]:
    """{"id": value} of a request that loads refused (a NaN or a key twice somewhere in
    it, a line not UTF-8), read leniently, when it is still a JSON object with one
    top-level "id" that a reply can carry; else {} (the error then goes without one)."""
    if isinstance(text, bytes):  # a byte that is not UTF-8 becomes a lone surrogate
        text = text.decode("utf-8", "surrogateescape")
    try:
        doc = json.loads(text, parse_constant=_unusable, parse_float=_lenient_number,
                         parse_int=_lenient_number, object_pairs_hook=_Pairs)  # fmt: skip
        ids = [v for k, v in doc if k == "id"] if isinstance(doc, _Pairs) else []
        if len(ids) != 1:  # none, or two: which would be the request's?
            return {}
        value = _plain(ids[0])
        _no_surrogate(value)
    except (ValueError, RecursionError, DoubletError, _Unusable):
        return {}
    return {"id": value}


def with_id(req: Any, out: dict[str, Any]) -> dict[str, Any]:
    """The reply `out` with the request's "id" first, when it has one."""
    if isinstance(req, dict) and "id" in req:
        return {"id": req["id"], **out}
    return out


def moves(pos: Position, dice: tuple[int, int]) -> list[dict[str, Any]]:
    """The "moves" reply's plays (and `doublet moves --json`'s): every legal play of the
    roll, its text, the board after it (mover's view), whether the mover rolls again
    (Acey-Deucey), and (standard) the position ID seen by the side to roll next."""
    check_in_play(pos.board, pos.variant)
    rows = []
    for p in pos.plays(*dice):
        mover, opponent = B.counts(p.board)
        row: dict[str, Any] = {"play": p.notation, "board": {"mover": mover, "opponent": opponent},
                               "again": p.again}  # fmt: skip
        if pos.variant == B.STANDARD:
            row["position_id"] = position_id(B.flip(p.board))
        rows.append(row)
    return rows


__all__ = ["ANALYSIS_PLY", "DEFAULTS", "KEYS", "PROTOCOL", "Bounds", "Session", "dice", "id_of",
           "loads", "moves", "shown"]  # fmt: skip
