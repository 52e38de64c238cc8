"""doublet engine's fast path (doublet.apps.fastpath): a standard best at 0 or 1 ply read
and answered in kernels.

What this module checks:

- Its reply is byte for byte the general path's, json.dumps(Session.answer(request)) and
  a newline, on every refset decision at 0 and 1 ply, with the keys in other orders,
  other white space, an integer id, the ply left to the session's default; and that it
  answers all of them (none left to the general path).
- Every request of another shape is left to the general path (reply None): other
  commands, keys, values (null, floats, strings for numbers, -0, leading zeros), IDs with
  a match ID, white space or bad characters, invalid and finished positions, ply 2,
  escapes, key twice, trailing text; a session with a model, time or variant set, or
  the HTTP API's bounds; a ply-1 search over its budget.
- doublet engine answers through it (engine_reply), and the line after a fallback too.
- The float writer is repr(round(x, 6)) (json.dumps's text), or gives way (-1) only
  within a millionth of a tie, on random and edge values.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from doublet.apps.cli import QUIT, engine_reply
from doublet.apps.fastpath import FastBest, _put_float6
from doublet.apps.protocol import Bounds, Session, loads
from doublet.core import board as B
from doublet.formats.ids import position_id
from doublet.search.analysis import searcher
from tests.helpers import DATA


def _refset() -> list[dict]:
    with open(DATA / "gnubg_refset.jsonl") as f:
        return [json.loads(line) for line in f]


def _general(line: str) -> str:
    return json.dumps(Session().answer(loads(line))) + "\n"


def _dance() -> str:
    """A position whose roll has no play: on the bar against a closed board."""
    b = np.zeros(B.SIZE, np.int8)
    b[B.MY_BAR], b[6], b[B.MY_OFF] = 1, 2, 12
    for p in range(19, 25):
        b[p] = -2
    b[12] = -3
    return position_id(b)


@pytest.mark.parametrize("ply", [0, 1])
def test_the_fast_reply_is_the_general_paths_on_every_refset_decision(ply: int) -> None:
    rng = random.Random(ply)
    session = Session()
    fast = FastBest(session)
    cases = _refset()
    answered = 0
    for n, c in enumerate(cases):
        req: dict = {"cmd": "best", "position": c["pid"], "dice": c["dice"], "ply": ply}
        if n % 3 == 1:
            req["id"] = rng.choice([0, 7, -12, 10**17, rng.randrange(-(10**9), 10**9)])
        items = list(req.items())
        if n % 2:
            rng.shuffle(items)
        line = json.dumps(dict(items), separators=(",", ":") if n % 4 == 3 else None)
        if n % 5 == 4:
            line = " \t" + line.replace(":", " : ").replace(",", " ,\r") + "  "
        fast_reply = fast.reply(line.encode() + b"\n")
        assert fast_reply is not None, line
        answered += 1
        assert fast_reply.decode() == json.dumps(session.answer(loads(line))) + "\n", line
    assert answered == len(cases)


def test_the_session_default_ply_and_a_dance() -> None:
    session = Session()
    fast = FastBest(session)
    line = '{"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [6, 5]}'
    assert fast.reply(line.encode()) is None  # the default, 2 ply, is the general path's
    for ply in (1, 0):
        session.set({"cmd": "set", "ply": ply})
        reply = fast.reply(line.encode())
        assert reply is not None
        assert reply.decode() == json.dumps(session.answer(loads(line))) + "\n"
        assert json.loads(reply)["ply"] == ply
    dance = f'{{"cmd": "best", "position": "{_dance()}", "dice": [6, 6], "ply": 0}}'
    reply = fast.reply(dance.encode())
    assert reply is not None and json.loads(reply)["play"] == ""
    assert reply.decode() == _general(dance)


PID = "4HPwATDgc/ABMA"
ONE = '{"cmd": "best", "position": "' + PID + '", "dice": [3, 1], "ply": 0}'
_FALLBACKS = [  # @: PID
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 2}',
    '{"cmd": "best", "position": "@", "dice": [3, 1]}',  # the default: 2 ply
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": null}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": true}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 1.0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": -0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 01}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0e0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": "0"}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": "a"}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": 1.5}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": -0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": 01}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": 1e3}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": null}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "id": 1234567890123456789}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "cube": {"value": 2}}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "variant": "standard"}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "plies": 0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "time": 1}',
    '{"cmd": "best", "position": "@:cAkAAAAAAAAA", "dice": [3, 1], "ply": 0}',
    '{"cmd": "best", "position": " @", "dice": [3, 1], "ply": 0}',
    '{"cmd": "best", "position": "4HPwATDgc/ABM!", "dice": [3, 1], "ply": 0}',
    '{"cmd": "best", "position": "4HPwATDgc/ABM", "dice": [3, 1], "ply": 0}',
    '{"cmd": "best", "position": "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10", "ply": 0}',
    '{"cmd": "best", "position": "//////////////", "dice": [3, 1], "ply": 0}',  # too many
    '{"cmd": "best", "position": "AAAAAAAAAAAAAA", "dice": [3, 1], "ply": 0}',  # over
    '{"cmd": "best", "position": "@", "dice": [0, 1], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [7, 1], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [3], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1, 2], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [3.0, 1], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": ["3", 1], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [31], "ply": 0}',
    '{"cmd": "best", "position": "@", "ply": 0}',
    '{"cmd": "best", "dice": [3, 1], "ply": 0}',
    '{"position": "@", "dice": [3, 1], "ply": 0}',
    '{"cmd": "analyse", "position": "@", "dice": [3, 1], "ply": 0}',
    '{"cmd": "Best", "position": "@", "dice": [3, 1], "ply": 0}',
    '{"cmd": "b\\u0065st", "position": "@", "dice": [3, 1], "ply": 0}',
    '{"cmd": "best", "cmd": "best", "position": "@", "dice": [3, 1], "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0, "ply": 0}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0}x',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0}{}',
    '{"cmd": "best", "position": "@", "dice": [3, 1], "ply": 0,}',
    '["best", "@", [3, 1], 0]',
    "{}",
    "",
    "   ",
    '{"cmd": "quit"}',
]
FALLBACKS = [line.replace("@", PID) for line in _FALLBACKS]


def test_every_other_request_is_left_to_the_general_path() -> None:
    session = Session()
    fast = FastBest(session)
    for line in FALLBACKS:
        assert fast.reply(line.encode()) is None, line
        assert fast.reply(b"\xef\xbb\xbf" + line.encode()) is None, line  # a BOM
        # what the engine answers is the general path's (an error, or a slower search)
        reply = engine_reply(session, fast, line.encode() + b"\n")
        if line.strip() == "":
            assert reply is None
        elif line == '{"cmd": "quit"}':
            assert reply is QUIT
        else:
            assert isinstance(reply, str) and reply.endswith("\n")
    assert fast.reply(b'{"cmd": "best", "position": "\xe4HPwATDgc/ABMA", "dice": [3, 1]}') is None


def test_a_finished_game_is_the_general_paths_error() -> None:
    b = np.array(B.STARTING)
    b[:] = 0
    b[B.MY_OFF] = 15
    b[1] = -15
    line = ONE.replace(PID, position_id(b))
    fast = FastBest(Session())
    assert fast.reply(line.encode()) is None
    assert "game is over" in json.loads(_general(line))["error"]


def test_session_settings_and_other_bounds_turn_it_off(tmp_path: object) -> None:
    line = ONE.encode()
    for key, value in (("time", 5), ("variant", "standard")):
        session = Session()
        fast = FastBest(session)
        assert fast.reply(line) is not None
        session.set({"cmd": "set", key: value})
        assert fast.reply(line) is None, key
        session.set({"cmd": "set", key: None})
        assert fast.reply(line) is not None, key
    session = Session()
    session.defaults["model"] = "some/model.npz"  # as set would leave it
    assert FastBest(session).reply(line) is None
    assert FastBest(Session(Bounds(default_time=10.0))).reply(line) is None


def test_a_one_ply_search_over_its_budget_is_answered_by_the_general_path() -> None:
    session = Session()
    fast = FastBest(session)
    line = ONE.replace('"ply": 0', '"ply": 1')
    fast.max_evals = (0, 1)  # one evaluation: the search stops at once
    # ... unless the shared searcher's cache holds the search already (an earlier test's
    # 1-ply 3-1 here: then no evaluation is needed and the fast path may answer)
    searcher(None, B.STANDARD).clear_cache()
    assert fast.reply(line.encode()) is None
    reply = engine_reply(session, fast, line.encode())
    assert reply == _general(line)


def test_the_engine_answers_a_session_through_both_paths() -> None:
    session = Session()
    fast = FastBest(session)
    lines = [FALLBACKS[0], ONE, FALLBACKS[10],
             ONE.replace("[3, 1]", "[6, 5]").replace('"ply": 0', '"ply": 1, "id": 3')]  # fmt: skip
    for line in lines:
        assert engine_reply(session, fast, line.encode()) == _general(line)
        assert engine_reply(session, fast, line) == _general(line)  # text: the general path


def _float_text(x: float) -> str | None:
    out = np.empty(40, np.uint8)
    k = _put_float6(out, 0, x)
    return None if k < 0 else out[:k].tobytes().decode()


def test_the_float_writer_is_json_of_round_6() -> None:
    rng = np.random.default_rng(6)
    values = [
        0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.5, 2.5, -2.5, 5e-7, 4.9e-7, 5.1e-7, -4e-7, 1e-6,
        5e-6, 9.9e-5, 9.95e-5, 1e-4, 0.00009951, 0.0001049, 1.5e-5, 0.9999995, 0.9999994,
        1 / 128, 0.1, 0.123456789, -0.000049, 2.999999999, 1e-300, 123.4567891,
    ]  # fmt: skip
    values += rng.random(100_000).astype(np.float32).astype(np.float64).tolist()
    values += (rng.random(100_000) * 6 - 3).tolist()
    values += (rng.random(20_000) * 2e-4).astype(np.float32).astype(np.float64).tolist()
    values += ((rng.integers(0, 3_000_000, 20_000) + 0.5) / 1e6).tolist()  # near ties
    gave_way = 0
    for x in values:
        text = _float_text(x)
        if text is None:
            gave_way += 1
            y = abs(x) * 1e6
            assert abs(y - math.floor(y) - 0.5) < 1e-5, x
        else:
            assert text == json.dumps(round(x, 6)), x
    assert gave_way <= 20_000 + 10  # the near ties, and hardly anything else
    assert _float_text(1 / 128) is None  # an exact tie: Python rounds it half to even
    assert _float_text(math.nan) is None and _float_text(math.inf) is None
