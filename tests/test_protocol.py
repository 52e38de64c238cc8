"""The engine protocol (doublet.apps.protocol) and its two transports.

What this module checks:

- engine/apps/protocol.md documents every command and every key of KEYS, and the defaults of
  DEFAULTS; the OpenAPI description served at /api/openapi.json takes exactly the keys
  of each command (less cmd and model).
- Keys: a key a command does not take is an error naming it and the keys it takes,
  for every command; an unknown cmd names the commands; "analyze" is "analyse".
- One default depth: best, analyse, eval and cube answer at 2 ply without "ply", as
  `doublet analyse` and `doublet eval` do; `doublet eval --json` prints the engine's
  eval reply exactly; `best` is the first row of `analyse` (its keys) at 0 and 1 ply,
  cubeless and cubeful, on refset positions.
- version, set (a default used by later requests, null resets, a bad value changes
  nothing), id echoed first in every reply (errors included).
- Bounds: a request without "time" that passes its bound answers shallower with
  "stopped"; a "time" deepens and stops at its deadline; the watchdog's interrupt
  answers at once with the deepest ply done.
- The HTTP API: each command answers as the session does; 400 for unknown keys, a
  "cmd", a "model", a "time" over the bound, set/rollout not served; the version lists
  the HTTP commands.
- `doublet engine` through its pipe: version, set, id and an error in one session.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from doublet.apps import protocol
from doublet.apps.protocol import DEFAULTS, KEYS, Bounds, Session
from doublet.core.errors import DoubletError
from doublet.formats.position import Position
from doublet.search.analysis import BEST_KEYS, analyse_roll, searcher, watchdog

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "engine" / "apps" / "protocol.md"
START = "4HPwATDgc/ABMA"
AD_START = {"variant": "acey-deucey", "mover": [15] + [0] * 25, "opponent": [15] + [0] * 25}


def refset(n: int) -> list[dict[str, Any]]:
    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        cases = [json.loads(line) for line in f]
    return [c for c in cases if c["n_legal"] > 1][::97][:n]


# -- the documentation ---------------------------------------------------------------------


def test_every_command_and_key_is_documented() -> None:
    text = DOC.read_text()
    for cmd in KEYS:
        assert f"`{cmd}`" in text, cmd
    for key in set().union(*KEYS.values()):
        assert f"`{key}`" in text, key
    for key in DEFAULTS:
        assert f"`{key}`" in text
    assert f"**{protocol.ANALYSIS_PLY}**" in text  # the default depth, stated once


# -- keys and commands ----------------------------------------------------------------------


@pytest.mark.parametrize("cmd", sorted(KEYS))
def test_an_unknown_key_is_an_error(cmd: str) -> None:
    reply = Session().answer({"cmd": cmd, "position": START, "plies": 3})
    assert "'plies'" in reply["error"] and "its keys are" in reply["error"]
    for key in KEYS[cmd] - {"cmd"}:  # the command itself is not listed
        assert key in reply["error"].split("its keys are ")[1]


def test_unknown_commands_and_the_alias() -> None:
    s = Session()
    assert 'unknown cmd "fly"' in s.answer({"cmd": "fly"})["error"]
    assert "a JSON object" in s.answer([1, 2])["error"]
    doc = s.answer({"cmd": "analyze", "position": START, "dice": [3, 1], "ply": 0})
    assert len(doc["plays"]) == 16


def test_one_default_depth() -> None:
    s = Session()
    assert s.answer({"cmd": "best", "position": START, "dice": [3, 1]})["ply"] == 2
    assert s.answer({"cmd": "analyse", "position": START, "dice": [3, 1]})["ply"] == 2
    assert s.answer({"cmd": "eval", "position": START})["ply"] == 2
    assert s.answer({"cmd": "cube", "position": START})["ply"] == 2
    cli = subprocess.run([sys.executable, "-m", "doublet", "analyse", START, "3", "1", "--json"],
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    assert json.loads(cli.stdout)["ply"] == 2


def test_eval_reply_is_doublet_eval_json() -> None:
    for ply in (0, 1):
        cli = subprocess.run([sys.executable, "-m", "doublet", "eval", START, "--json",
                              "--ply", str(ply)], capture_output=True, text=True, timeout=300,
                             check=True)  # fmt: skip
        engine = Session().answer({"cmd": "eval", "position": START, "ply": ply})
        assert json.loads(cli.stdout) == engine
        assert engine["ply"] == ply and set(engine["evaluation"]) == {"probabilities", "equity"}


@pytest.mark.parametrize("ply", [0, 1])
def test_best_is_the_first_row_of_analyse(ply: int) -> None:
    s = Session()
    states: list[dict[str, Any]] = [{}, {"match": {"length": 7, "away": [2, 4]}},
                                    {"cube": {"value": 2, "owner": "mover"}}]  # fmt: skip
    for c in refset(12):
        for extra in states:
            req = {"position": c["pid"], "dice": c["dice"], "ply": ply, **extra}
            best = s.answer({"cmd": "best", **req})
            top = s.answer({"cmd": "analyse", **req})["plays"][0]
            want = {k: top[k] for k in (*BEST_KEYS, "position_id") if k in top}
            assert best == want, (c["pid"], c["dice"], extra)
            limited = s.answer({"cmd": "analyse", "limit": 2, **req})
            assert limited["plays"][0] == top and len(limited["plays"]) <= 2
            assert limited["count"] == c["n_legal"]
    # Acey-Deucey (its plays written by format_play; an outcome may roll again)
    with open(ROOT / "tests" / "data" / "acey_deucey.jsonl") as f:
        cases = [json.loads(line) for line in f][:40:4]
    for c in cases:
        req = {"position": c["position"], "dice": c["dice"], "ply": ply}
        best = s.answer({"cmd": "best", **req})
        top = s.answer({"cmd": "analyse", **req})["plays"][0]
        assert "error" not in best and "position_id" not in best
        assert best == {k: top[k] for k in BEST_KEYS if k in top}, (c["position"], c["dice"])


def test_analyse_without_dice_is_the_cli_document() -> None:
    doc = Session().answer({"cmd": "analyse", "position": START, "ply": 1})
    assert {"evaluation", "cube", "state_text"} <= set(doc)
    cli = subprocess.run([sys.executable, "-m", "doublet", "analyse", START, "--ply", "1",
                          "--json"], capture_output=True, text=True, timeout=300,
                         check=True)  # fmt: skip
    assert json.loads(cli.stdout) == doc


# -- version, set, id -------------------------------------------------------------------------


def test_version_set_and_id() -> None:
    s = Session()
    v = s.answer({"cmd": "version", "id": 1})
    assert next(iter(v)) == "id" and v["id"] == 1 and v["protocol"] == protocol.PROTOCOL
    assert v["defaults"] == DEFAULTS and set(v["commands"]) == set(KEYS)
    assert s.answer({"cmd": "set", "ply": 0, "id": "a"}) == {
        "id": "a",
        "defaults": {**DEFAULTS, "ply": 0},
    }
    assert s.answer({"cmd": "best", "position": START, "dice": [3, 1]})["ply"] == 0
    assert s.answer({"cmd": "eval", "position": START})["ply"] == 0
    # A bad value changes nothing, with the reason.
    bad = s.answer({"cmd": "set", "ply": 1, "method": "guess", "id": [2]})
    assert bad["id"] == [2] and "'method'" in bad["error"]
    assert s.defaults["ply"] == 0
    assert "'model'" in s.answer({"cmd": "set", "model": ""})["error"]
    assert "does not exist" in s.answer({"cmd": "set", "model": "/nonexistent.npz"})["error"]
    assert "'variant'" in s.answer({"cmd": "set", "variant": "chess"})["error"]
    # set takes what a request takes: 0 and 1 too (1 was refused while a request took it)
    assert s.answer({"cmd": "set", "variant": 1})["defaults"]["variant"] == "acey-deucey"
    assert "'variant'" in s.answer({"cmd": "set", "variant": 2})["error"]
    assert s.answer({"cmd": "rollout", "position": START, "until_se": -1})["error"] == (
        "'until_se' is a number >= 0, got -1"
    )  # the value as sent, not -1.0
    s.answer({"cmd": "set", "variant": "acey-deucey"})
    ad = s.answer({"cmd": "moves", "position": {"mover": AD_START["mover"],
                                                 "opponent": AD_START["opponent"]},
                   "dice": [6, 5]})  # fmt: skip
    assert ad["plays"][0]["play"].startswith("in/")
    # Found by a user-level review: the default refused a JSON board naming its own
    # variant; it only fills a variant the request leaves out.
    standard = {"variant": "standard", "mover": [0, 0, 0, 0, 0, 0, 15] + [0] * 19,
                "opponent": [0, 0, 0, 0, 0, 0, 15] + [0] * 19}  # fmt: skip
    for board in (standard, json.dumps(standard)):
        doc = s.answer({"cmd": "moves", "position": board, "dice": [6, 5]})
        assert [p["play"] for p in doc["plays"]] == ["6/1 6/off"], doc
    assert "asked for" in s.answer({"cmd": "moves", "position": standard, "dice": [6, 5],
                                    "variant": "acey-deucey"})["error"]  # fmt: skip
    assert s.answer({"cmd": "set", "ply": None, "variant": None})["defaults"] == DEFAULTS
    err = s.answer({"cmd": "best", "position": "nonsense", "dice": [3, 1], "id": None})
    assert list(err) == ["id", "error"] and err["id"] is None


# -- bounds and time ------------------------------------------------------------------------


def test_a_bound_answers_shallower_and_says_so() -> None:
    s = Session(Bounds(default_time=1.0))
    start = time.perf_counter()
    doc = s.answer({"cmd": "best", "position": AD_START, "dice": [2, 1], "ply": 3})
    assert time.perf_counter() - start < 3  # the watchdog backs the evaluation count
    assert doc["ply"] < 3 and "time budget of 1 s" in doc["stopped"] and doc["play"]


def test_time_deepens_until_its_deadline() -> None:
    s = Session()
    start = time.perf_counter()
    doc = s.answer({"cmd": "analyse", "position": START, "dice": [6, 5], "ply": 4, "time": 0.5})
    spent = time.perf_counter() - start
    assert spent < 3, spent  # 4 ply takes half a minute: the watchdog stopped it
    assert 1 <= doc["ply"] < 4 and "time budget of 0.5 s" in doc["stopped"]
    quick = s.answer({"cmd": "best", "position": START, "dice": [6, 5], "ply": 1, "time": 5})
    assert quick["ply"] == 1 and "stopped" not in quick
    assert "'time'" in s.answer({"cmd": "best", "position": START, "dice": [6, 5],
                                 "time": 601})["error"]  # fmt: skip


def test_an_interrupt_answers_with_the_deepest_ply_done() -> None:
    pos = Position.from_id(START)
    s = searcher(None, 0)
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(doc=analyse_roll(
        pos, 6, 5, 4, budget=None, iterative=True)))  # fmt: skip
    thread.start()
    time.sleep(1.5)
    start = time.perf_counter()
    watchdog(s).interrupt()
    thread.join(10)
    assert not thread.is_alive() and time.perf_counter() - start < 2
    assert out["doc"]["ply"] < 4 and out["doc"]["stopped"].startswith("interrupted")


# -- the HTTP API ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from doublet.apps.serve import create_app

    return TestClient(create_app(tmp_path_factory.mktemp("web")))


def test_http_answers_as_the_protocol(client: Any) -> None:
    from doublet.apps.serve import HTTP_BOUNDS, HTTP_COMMANDS

    reqs = {"best": {"position": START, "dice": [3, 1], "ply": 1},
            "analyse": {"position": START, "dice": [6, 5], "ply": 1, "limit": 3},
            "eval": {"position": START, "ply": 1, "match": {"length": 5, "away": [3, 2]}},
            "cube": {"position": START, "ply": 1},
            "moves": {"position": START, "dice": [6, 6]}}  # fmt: skip
    assert set(reqs) == set(HTTP_COMMANDS)
    for cmd, body in reqs.items():
        r = client.post(f"/api/{cmd}", json=body)
        assert r.status_code == 200, r.text
        assert r.json() == Session(HTTP_BOUNDS).answer({"cmd": cmd, **body})
    v = client.get("/api/version").json()
    assert v["commands"] == sorted([*HTTP_COMMANDS, "version"])
    assert v["limits"]["max_time"] == v["limits"]["time_bound"] == 10


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("best", {"position": START, "dice": [3, 1], "plies": 2}, "takes no 'plies'"),
        ("best", {"cmd": "best", "position": START, "dice": [3, 1]}, "'cmd' is the path"),
        ("best", {"position": START, "dice": [3, 1], "model": "/etc/passwd"}, "'model'"),
        ("best", {"position": START, "dice": [3, 1], "time": 11}, "at most 10"),
        ("best", {"position": START}, "needs 'dice'"),
        ("eval", {"position": "4HPwATDgc/ABMX"}, "Position ID"),
        ("cube", {"position": START, "ply": 9}, "'ply'"),
    ],
)
def test_http_bad_requests(client: Any, path: str, body: dict[str, Any], words: str) -> None:
    r = client.post(f"/api/{path}", json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.text
    r = client.post(f"/api/{path}", json={"id": 9, **body})  # an error carries the id too
    assert r.status_code == 400 and r.json()["id"] == 9 and words in r.json()["error"], r.text


def test_http_serves_no_set_and_no_rollout(client: Any) -> None:
    for path in ("set", "rollout", "quit"):
        assert client.post(f"/api/{path}", json={"ply": 1}).status_code == 404
    r = client.post("/api/best", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415


def test_openapi_describes_each_commands_keys(client: Any) -> None:
    from doublet.apps.serve import HTTP_COMMANDS

    doc = client.get("/api/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    for cmd in HTTP_COMMANDS:
        schema = doc["paths"][f"/api/{cmd}"]["post"]["requestBody"]["content"][
            "application/json"]["schema"]  # fmt: skip
        assert set(schema["properties"]) == KEYS[cmd] - {"cmd", "model"}
        assert schema["additionalProperties"] is False
        # each key's own schema, or null (its default); the position is never null
        props = {k: v["anyOf"][0] for k, v in schema["properties"].items()}
        assert all(v["anyOf"][1:] == [{"type": "null"}] for k, v in
                   schema["properties"].items() if k not in ("position", "id"))  # fmt: skip
        assert schema["properties"]["position"]["anyOf"] == [props["position"]]
        assert "time" not in props or props["time"]["maximum"] == 10  # the server's bound
        for key in ("cube", "match"):  # unknown keys inside them are refused too
            if key in props:
                assert props[key]["additionalProperties"] is False
        responses = doc["paths"][f"/api/{cmd}"]["post"]["responses"]
        assert {"200", "400", "403", "413", "415", "500"} <= set(responses)
    assert doc["paths"]["/api/analyze"]["post"]["requestBody"] == (
        doc["paths"]["/api/analyse"]["post"]["requestBody"])  # fmt: skip
    assert "/api/version" in doc["paths"]
    r = client.post("/api/best", json={"position": START, "dice": [3, 1], "time": 10.5})
    assert r.status_code == 400 and "at most 10" in r.json()["error"]


# -- doublet engine through its pipe ----------------------------------------------------------


def test_engine_session_through_the_pipe() -> None:
    lines = [{"cmd": "version", "id": 0},
             {"cmd": "set", "ply": 0},
             {"cmd": "best", "position": START, "dice": [3, 1], "id": "x"},
             {"cmd": "best", "position": START, "dice": [3, 1], "ply": 1, "extra": 1},
             {"cmd": "quit", "id": 9},
             {"cmd": "version"}]  # fmt: skip
    r = subprocess.run([sys.executable, "-m", "doublet", "engine"], text=True, timeout=300,
                       input="\n".join(json.dumps(x) for x in lines) + "\n",
                       capture_output=True)  # fmt: skip
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and len(out) == 4  # nothing after quit
    assert out[0]["id"] == 0 and re.fullmatch(r"\d+\.\d+\.\d+.*", out[0]["version"])
    assert out[1]["defaults"]["ply"] == 0
    assert out[2]["id"] == "x" and out[2]["ply"] == 0 and out[2]["play"] == "8/5 6/5"
    assert "takes no 'extra'" in out[3]["error"]


def test_the_load_test_runs() -> None:
    """benchmarks/http_load.py (the HTTP API under load) in a small size: a real server
    on 127.0.0.1, every reply checked (it exits 1 on any failed request)."""
    pytest.importorskip("uvicorn")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "http_load.py"), "--requests",
                        "30", "--clients", "2", "--ply", "0", "--seconds", "60"],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "best, 0 ply, HTTP" in r.stdout and "mix of the five" in r.stdout


# -- what a review found (session 15) --------------------------------------------------------


def test_an_interrupt_stops_the_cubeful_search_too() -> None:
    """The cube half of an analysis without dice is a cubeful search in Python between
    its kernels: the watchdog's stop reaches it as well, and once interrupted the rest of
    the command's searches stop at once (the CLI clears the flag before each command)."""
    from doublet.cube.state import MONEY
    from doublet.search.analysis import analyse_position

    pos = Position.from_id(START)
    s = searcher(None, 0)
    dog = watchdog(s)
    dog.interrupted = False
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(doc=analyse_position(
        pos, MONEY, 4, budget=None, iterative=True)))  # fmt: skip
    thread.start()
    time.sleep(1.0)
    start = time.perf_counter()
    dog.interrupt()
    thread.join(20)
    assert not thread.is_alive() and time.perf_counter() - start < 5
    doc = out["doc"]
    assert doc["evaluation"] and doc["cube"]["action"]
    assert "interrupted" in doc.get("stopped", "") + doc["cube"].get("stopped", "")
    dog.interrupted = False
    # Nothing is left armed: the same searcher's next searches run whole.
    again = analyse_roll(pos, 3, 1, 2, budget=None, iterative=True)
    assert again["ply"] == 2 and "stopped" not in again
    assert s.analyse(pos.board, 6, 5)[0].shape[0] == 7


def test_checked_keys_and_echoed_ids() -> None:
    s = Session()
    bad = s.answer({"cmd": "analyse", "position": START, "dice": [3, 1], "method": "guess"})
    assert "'method'" in bad["error"]
    assert "'method'" in s.answer({"cmd": "eval", "position": START, "method": 1})["error"]
    r = s.answer({"cmd": "rollout", "position": START, "dice": [3, 1], "select_ply": 9,
                  "id": 5})  # fmt: skip
    assert r["id"] == 5 and "'select_ply'" in r["error"]
    assert "'workers'" in s.answer({"cmd": "rollout", "position": START,
                                    "workers": 0})["error"]  # fmt: skip
    assert s.answer({"cmd": "rollout", "position": START, "workers": 65})["error"] == (
        "'workers' must be an integer 1..64, got 65")  # fmt: skip
    # As 'limit' without a roll: a rollout's 'top' and 'select_ply' would do nothing.
    for key in ("top", "select_ply"):
        err = s.answer({"cmd": "rollout", "position": START, key: 1})["error"]
        assert err.startswith(f"'{key}' is ") and err.endswith(
            ": give 'dice' (without, the rollout is of the position)"
        )


def test_an_acey_deucey_cube_asked_deeper_says_it_answers_at_1_ply() -> None:
    """Found by a user-level review: ply 2 answered at ply 1 without a word."""
    s = Session()
    doc = s.answer({"cmd": "cube", "position": AD_START, "ply": 2})
    assert doc["ply"] == 1 and "searched at 1 ply at most" in doc["stopped"]
    assert "stopped" not in s.answer({"cmd": "cube", "position": AD_START, "ply": 1})


def test_values_are_checked_by_their_json_type_and_shown_as_json() -> None:
    """A die is a number, not a string (as "ply" is); a bad value is shown as its JSON."""
    s = Session()
    for dice, shown in ((["3", 1], '"3"'), ([" 3", 1], '" 3"'), ([3.0, 1], "3.0")):
        err = s.answer({"cmd": "best", "position": START, "dice": dice})["error"]
        assert err == f"a die must be a number from 1 to 6, got {shown}"
    # The command line takes a roll as one word too ("31", "3-1"); JSON keeps two numbers.
    assert protocol.dice(["3-1"], text=True) == protocol.dice(["31"], text=True) == (3, 1)
    assert protocol.dice(["6", "5"], text=True) == (6, 5)
    for word in (["7-1"], ["3"], ["31x"], ["3--1"]):
        with pytest.raises(DoubletError, match="dice must be two numbers"):
            protocol.dice(word, text=True)
    assert "dice must be two" in s.answer({"cmd": "best", "position": START,
                                           "dice": ["31"]})["error"]  # fmt: skip
    cases = (({"cmd": "moves", "position": None, "dice": [3, 1]}, "got null"),
             ({"cmd": "cube", "position": START, "cube": {"value": 2, "owner": "me"}},
              'got "me"'),
             ({"cmd": "cube", "position": START, "match": {"length": 7, "away": [2, 4],
                                                          "crawford": 1}}, "got 1"),
             ({"cmd": "rollout", "position": START, "until_se": -1.0}, "got -1.0"),
             ({"cmd": "cube", "position": START, "jacoby": "yes"}, 'got "yes"'))  # fmt: skip
    for req, words in cases:
        assert words in s.answer(req)["error"], req


def test_an_internal_error_keeps_the_id(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Session, req: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(Session, "reply", broken)
    out = Session().answer({"cmd": "version", "id": "q"})
    assert out == {"id": "q", "error": "internal error, please report it: RuntimeError: boom"}


def test_http_ids_and_play_caps(client: Any) -> None:
    r = client.post("/api/best", json={"position": START, "dice": [3, 1], "ply": 0, "id": 3})
    assert r.status_code == 200 and next(iter(r.json())) == "id" and r.json()["id"] == 3
    r = client.post("/api/best", json={"position": START, "dice": [3, 9], "id": 4})
    assert r.status_code == 400 and r.json()["id"] == 4 and "die" in r.json()["error"]
    many = {
        "variant": "acey-deucey",  # a 1-2 of acey_deucey.jsonl with 1,210 plays
        "mover": [0] * 11 + [4, 0, 1, 0, 3, 0, 0, 0, 0, 1, 0, 3, 0, 1, 2],
        "opponent": [1] + [0] * 7 + [1, 1] + [0] * 6 + [1, 5, 1, 0, 2, 2, 1, 0, 0, 0],
    }
    ad = {"position": many, "dice": [1, 2]}
    r = client.post("/api/moves", json=ad)
    assert r.status_code == 400 and "at most 1,000" in r.json()["error"]
    r = client.post("/api/analyse", json={**ad, "ply": 0})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert len(doc["plays"]) == 1000 and doc["count"] == 1210


# -- found by a review of the CLI and the engine (session 23) ----------------------------------


def test_a_model_of_the_other_variant_is_refused() -> None:
    """A standard position with the Acey-Deucey model (or the reverse) gets one clear
    error, from the engine, the CLI and `set`, instead of that net's wrong answer."""
    ad = str(ROOT / "models" / "doublet-acey-deucey.npz")
    std = str(ROOT / "models" / "doublet-standard.npz")
    s = Session()
    out = s.answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": 0, "model": ad})
    assert "trained for Acey-Deucey; this position is standard backgammon" in out["error"]
    out = s.answer({"cmd": "eval", "position": START, "variant": "acey-deucey", "ply": 0,
                    "model": std})  # fmt: skip
    assert "trained for standard backgammon; this position is Acey-Deucey" in out["error"]
    assert "play" in s.answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": 0,
                               "model": std})  # fmt: skip
    # set: checked against the variant it sets; without one, each request checks it
    assert "error" in s.answer({"cmd": "set", "model": ad, "variant": "standard"})
    assert s.answer({"cmd": "set", "model": ad})["defaults"]["model"] == ad
    assert "trained for" in s.answer({"cmd": "eval", "position": START, "ply": 0})["error"]
    assert "probabilities" in s.answer({"cmd": "eval", "position": START, "ply": 0,
                              "variant": "acey-deucey"})["evaluation"]  # fmt: skip
    argv = [sys.executable, "-m", "doublet", "analyse", START, "3", "1", "--ply", "0"]
    r = subprocess.run([*argv, "--model", ad], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "trained for Acey-Deucey" in r.stderr.splitlines()[-1]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-2e400"])
def test_a_number_json_cannot_carry_is_refused(number: str) -> None:
    """NaN, Infinity and floats too large for a double are not JSON numbers a reply could
    echo (as an "id"): the line gets one error, the engine goes on."""
    with pytest.raises(DoubletError, match=number.lstrip("-")[:3]):
        protocol.loads('{"cmd": "version", "id": ' + number + "}")
    assert protocol.loads('{"id": 1.5e300}')["id"] == 1.5e300
    with pytest.raises(DoubletError, match='key "ply" twice in one object'):
        protocol.loads('{"cmd": "best", "ply": 0, "position": {"ply": 1}, "ply": 2}')
    assert protocol.loads('{"a": {"ply": 1}, "ply": 2}') == {"a": {"ply": 1}, "ply": 2}
    r = subprocess.run([sys.executable, "-m", "doublet", "engine"], text=True, timeout=300,
                       input=f'{{"cmd": "version", "id": {number}}}\n{{"cmd": "version", '
                       '"id": 2}\n', capture_output=True)  # fmt: skip
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == 2
    first, second = (json.loads(x) for x in lines)  # both strict JSON
    assert "error" in first and number.lstrip("-") in first["error"]
    assert second["id"] == 2


def test_no_ray_cluster_is_a_clear_error() -> None:
    """--ray auto with no cluster running is the user's setup, not an internal error."""
    pytest.importorskip("ray")
    r = subprocess.run([sys.executable, "-m", "doublet", "rollout", START, "--trials", "36",
                        "--ray", "auto"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "RAY_ADDRESS": ""})  # fmt: skip
    assert r.returncode == 2 and "internal error" not in r.stderr
    assert "doublet: error: no Ray cluster to join at 'auto'" in r.stderr


def test_a_ray_address_where_nothing_answers_is_refused_at_once() -> None:
    """ray.init retried a dead address for minutes (and an engine's later requests waited
    behind it); a port that refuses connections, or a host that does not resolve, is now
    a doublet error before Ray is asked."""
    pytest.importorskip("ray")
    from doublet.core.parallel import RayExecutor

    with socket.socket() as s:  # a free port, closed again: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for address, why in ((f"127.0.0.1:{port}", "refused"), ("nosuch.invalid:1234", "")):
        t0 = time.perf_counter()
        with pytest.raises(
            DoubletError, match=f"no Ray cluster to join at .*nothing answers there.*{why}"
        ):
            RayExecutor(address)
        assert time.perf_counter() - t0 < 30


def test_a_ray_host_whose_name_never_resolves_is_refused_in_time(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Session 43: the address check's connection had a timeout but the name's lookup
    had none, so a resolver that did not answer held `--ray host:port` (and an engine's
    later requests) as long as it liked. The lookup now has RAY_CONNECT_SECONDS too."""
    from doublet.core import parallel

    monkeypatch.setattr(parallel, "RAY_CONNECT_SECONDS", 0.5)
    monkeypatch.setattr(parallel, "_resolve", lambda host, port: time.sleep(30))
    t0 = time.perf_counter()
    with pytest.raises(
        DoubletError,
        match=re.escape(
            "nothing answers there (the name 'slow.example' was not resolved within 0.5 s)"
        ),
    ):
        parallel._reachable("slow.example:6379")
    assert time.perf_counter() - t0 < 5


def test_the_shared_executor_on_a_ray_cluster_ignores_the_worker_count(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Session 43: the kept executor was keyed on (workers, address), so rollouts on the
    same Ray cluster asking 2, then 3 workers left Ray and joined it again (a cluster's
    CPUs are its own; the count is not used there). A private instance ('local') has as
    many CPUs as asked, so a new count starts a new one."""
    from doublet.core import parallel

    made: list[tuple[int, str | None]] = []

    def fake(workers: int = 2, ray: str | None = None) -> parallel.Executor:
        made.append((workers, ray))
        return parallel.Executor()

    parallel.close_shared()
    monkeypatch.setattr(parallel, "executor", fake)
    try:
        a = parallel.shared_executor(2, "10.0.0.1:6379")
        assert parallel.shared_executor(3, "10.0.0.1:6379") is a
        parallel.shared_executor(2, "local")
        parallel.shared_executor(3, "local")
        assert made == [(2, "10.0.0.1:6379"), (2, "local"), (3, "local")]
    finally:
        parallel.close_shared()


def test_a_short_rollout_budget_does_not_wait_for_the_workers_to_start() -> None:
    """A time budget shorter than local workers take to start (POOL_START) rolls out in
    this process, one trial past the budget at most; a started pool is used as given."""
    from doublet.core.parallel import LocalExecutor
    from doublet.nn.eval import default_model
    from doublet.search.rollout import POOL_START, RolloutSettings, rollout

    model = default_model()
    start = Position.from_id(START).board
    ex = LocalExecutor(2)
    try:
        t0 = time.perf_counter()
        t = rollout(model, start, RolloutSettings(trials=1296), ex, deadline=t0 + 0.05)
        assert t.where == "this process" and 2 <= t.n < 36 and not ex.started
        # a deadline already past still measures two trials: one has no standard error
        past = rollout(model, start, RolloutSettings(trials=1296), None, deadline=t0)
        assert past.n == 2 and float(past.running()[1].max()) > 0
        assert "time budget" in (t.stopped or "")
        far = time.perf_counter() + POOL_START + 600
        t = rollout(model, start, RolloutSettings(trials=72), ex, deadline=far)
        assert t.where == "2 local processes" and t.n == 72 and ex.started
        t = rollout(model, start, RolloutSettings(trials=72), ex, deadline=time.perf_counter())
        assert t.where == "2 local processes"  # running already: used
    finally:
        ex.close()


def test_inputs_that_would_be_ignored_or_misread_get_a_clear_error() -> None:
    """A cube above 1 without its owner, and a 'limit' without a roll (session 23: the
    first said "not 'centered'", which the request never said; the second was ignored)."""
    s = Session()
    out = s.answer({"cmd": "cube", "position": START, "ply": 0, "cube": {"value": 2}})
    assert "a cube at 2 has been turned: say who owns it" in out["error"]
    out = s.answer({"cmd": "analyse", "position": START, "ply": 0, "limit": 2})
    assert "'limit' lists the best plays of a roll: give 'dice'" in out["error"]
    out = s.answer({"cmd": "analyse", "position": START, "ply": 0, "limit": 2, "dice": [3, 1]})
    assert len(out["plays"]) == 2
    out = s.answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": "2"})
    assert out["error"].endswith('got "2"')  # a string, shown as one
    assert "needs a 'cmd'" in s.answer({"position": START})["error"]
    # 'cubeful' with a roll in centred money play would be ignored (the CLI refuses it too)
    out = s.answer({"cmd": "rollout", "position": START, "dice": [3, 1], "trials": 4,
                    "workers": 1, "cubeful": True})  # fmt: skip
    assert "'cubeful' plays the cube in the trials, but with a roll" in out["error"]


def test_beavers_with_a_roll_where_no_cube_is_turned_is_refused() -> None:
    """'beavers': true with a roll in money play with the cube centred did nothing (the
    plays are ranked cubeless, no cube is turned) and was taken; doublet analyse and
    rollout refuse --beavers there. It is refused alike, the roll given or an XGID's own;
    taken before the roll, with the Jacoby rule, or as false (what is done there)."""
    s = Session()
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"  # money, centred, 3-1 rolled
    refused = [{"cmd": "best", "position": START, "dice": [3, 1]},
               {"cmd": "analyse", "position": START, "dice": [3, 1]},
               {"cmd": "analyse", "position": xgid},
               {"cmd": "rollout", "position": START, "dice": [3, 1], "trials": 4,
                "workers": 1}]  # fmt: skip
    for req in refused:
        out = s.answer({**req, "ply": 0, "beavers": True})
        assert out.get("error", "").startswith(
            "'beavers' lets the taker of a double beaver, but with a roll in money play with "
            "the cube centred (no owned cube, no Jacoby) the plays are ranked by cubeless "
            "equity and no cube is turned"), (req, out)  # fmt: skip
    taken = [{"cmd": "best", "position": START, "dice": [3, 1], "beavers": False},
             {"cmd": "best", "position": START, "dice": [3, 1], "beavers": True, "jacoby": True},
             {"cmd": "analyse", "position": START, "beavers": True},
             {"cmd": "eval", "position": xgid, "beavers": True}]  # fmt: skip
    for req in taken:
        out = s.answer({**req, "ply": 0})
        assert "error" not in out, (req, out)


@pytest.mark.parametrize(("flags", "message"), [
    (["--cube", "3"], "--cube 3: the cube is a power of 2 from 1 to 32768"),
    (["--cube", "0", "--owner", "me"], "--cube 0: the cube is a power of 2"),
    (["--match", "-1"], "--match -1: a match is 1 to 25 points"),
    (["--match", "100000", "--away", "2", "2"], "--match 100000: a match is 1 to 25 points"),
    (["--match", "0", "--crawford"], "--crawford is for match play, not --match 0"),
])  # fmt: skip
def test_analyse_cube_and_match_flags_name_what_is_wrong(flags: list[str], message: str) -> None:
    r = subprocess.run([sys.executable, "-m", "doublet", "analyse", START, "--ply", "0", *flags],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(f"doublet: error: {message}")


def test_a_gnubg_id_read_as_acey_deucey_carries_its_note() -> None:
    """The parser's note (an ID holds no unentered checkers) reaches the reply."""
    s = Session()
    s.answer({"cmd": "set", "variant": "acey-deucey"})
    out = s.answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": 0})
    assert "play" in out and "carries no unentered checkers" in out["note"]
    plain = Session().answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": 0})
    assert "note" not in plain


def test_null_is_the_default_for_every_key_but_match() -> None:
    """A review found null the default for some keys ("time", "model") and an error for
    others ("ply", "method", "seed"): it is the default throughout, as if left out; but
    'match': null is money play (over an XGID's match), and a position is required."""
    s = Session()
    plain = s.answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": 0})
    for key in ("time", "model", "variant", "method", "cube", "jacoby", "beavers"):
        req = {"cmd": "best", "position": START, "dice": [3, 1], "ply": 0, key: None}
        if key == "method":
            req["cmd"] = "analyse"
        got = s.answer(req)
        assert "error" not in got, (key, got)
    assert s.answer({"cmd": "eval", "position": START, "ply": None})["ply"] == 2
    assert s.answer({"cmd": "best", "position": START, "dice": [3, 1], "ply": 0,
                     "time": None})["play"] == plain["play"]  # fmt: skip
    roll = {"cmd": "rollout", "position": START, "dice": [3, 1], "trials": 36, "ply": 0,
            "top": 1, "seed": None, "until_se": None, "truncate": None, "ray": None}  # fmt: skip
    assert "error" not in s.answer(roll)
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:2:4:0:5:10"  # a 5-point match
    assert s.answer({"cmd": "cube", "position": xgid, "ply": 0})["state"]["match"]
    assert s.answer({"cmd": "cube", "position": xgid, "ply": 0, "match": None})["state"][
        "match"] is None  # fmt: skip
    assert "got null" in s.answer({"cmd": "eval", "position": None})["error"]
    assert s.answer({"cmd": "eval", "position": START, "ply": 0, "id": None})["id"] is None


def test_a_double_no_game_can_offer_is_an_error_not_a_note() -> None:
    """A review found these accepted, the reply's "note" saying a double is offered beside
    "action": "No double available ...": a double in the Crawford game, by the side whose
    opponent owns the cube, and (Match ID) with the cube at 32768, the largest."""
    s = Session()
    board = "XGID=-b----E-C---eE---c-e----B-"
    for position, words in (
        (board + ":0:0:1:D:6:2:1:7:10", "in the Crawford game"),
        (board + ":1:-1:1:D:0:0:0:0:10", "the lowercase player owns the cube"),
        ("sGfwATDgc/ABMA:8BGgACAAIAAA", "in the Crawford game"),
        ("sGfwATDgc/ABMA:QREAAAAAAAAA", "player 0 owns the cube"),
        ("sGfwATDgc/ABMA:XxEAAAAAAAAA", "the cube at 32768, the largest cube"),
    ):
        out = s.answer({"cmd": "cube", "position": position, "ply": 0})
        assert list(out) == ["error"] and words in out["error"], out


def test_a_json_board_as_text_gives_each_key_once() -> None:
    """A review found a JSON board given as a string accepted with "mover" twice (the last
    taken) while the same board as an object is refused: both are now refused."""
    home = [0, 0, 0, 0, 0, 0, 15] + [0] * 19
    text = ('{"variant": "standard", "mover": ' + json.dumps([0, 15] + [0] * 24) + ', "mover": '
            + json.dumps(home) + ', "opponent": ' + json.dumps(home) + "}")  # fmt: skip
    s = Session()
    out = s.answer({"cmd": "moves", "position": text, "dice": [6, 5]})
    assert out == {"error": 'JSON board gives the key "mover" twice in one object: give it once'}
    with pytest.raises(DoubletError, match='key "mover" twice in one object'):
        protocol.loads('{"cmd": "moves", "position": ' + text + ', "dice": [6, 5]}')
    once = s.answer({"cmd": "moves", "position": text.replace('"mover": [0, 15', '"x": [0, 15'),
                     "dice": [6, 5]})  # fmt: skip
    assert "unknown keys ['x']" in once["error"]


def test_errors_do_not_echo_a_huge_input_whole() -> None:
    """A review found errors that echoed a 50,000-character value (an unknown variant, a
    model path, a Ray address, an object's unknown keys), and a model path too long for
    the file system was an internal error."""
    s = Session()
    big = "Z" * 50_000
    many = {f"k{i}": i for i in range(5_000)}
    cases = [
        ({"cmd": "eval", "position": START, "variant": big}, "unknown variant 'ZZZ"),
        ({"cmd": "eval", "position": START, "variant": list(range(50_000))}, "unknown variant"),
        ({"cmd": "eval", "position": START, "model": big}, "cannot be read: File name too long"),
        ({"cmd": "eval", "position": START, "cube": many}, "'cube' has unknown keys ['k0'"),
        ({"cmd": "eval", "position": START, "match": many}, "'match' has unknown keys"),
        ({"cmd": "eval", "position": many}, "JSON board has unknown keys"),
        ({"cmd": "eval", "position": START, **many}, "'eval' takes no 'k0'"),
    ]
    for req, words in cases:
        err = s.answer(req)["error"]
        assert words in err and len(err) < 600, (words, err[:200])
        assert "internal error" not in err


# -- found by a review of the engine protocol (session 42) -------------------------------------


def test_a_rollouts_ply_and_a_set_models_variant_are_named_for_what_they_are() -> None:
    """A rollout's "ply" is its trials' checker play, 0 or 1: -1 said "0..4" (the
    search's range) and 2 said "0 or 1". `set` with a model of the other variant said
    "this position is", though `set` has no position: it names the variant set."""
    s = Session()
    for ply, shown in ((-1, "-1"), (2, "2"), (5, "5"), ("1", '"1"'), (1.0, "1.0")):
        err = s.answer({"cmd": "rollout", "position": START, "ply": ply, "trials": 1,
                        "workers": 1})["error"]  # fmt: skip
        assert err.startswith("'ply' (the trials' checker play) must be "), err
        assert err.endswith(f" 0 or 1, got {shown}"), err
    err = s.answer({"cmd": "rollout", "position": START, "cubeful": True, "cube_ply": 2})["error"]
    assert err == "'cube_ply' must be 0 or 1, got 2", err
    ad = str(ROOT / "models" / "doublet-acey-deucey.npz")
    err = s.answer({"cmd": "set", "model": ad, "variant": "standard"})["error"]
    assert "trained for Acey-Deucey; the 'variant' set is standard backgammon" in err, err
    assert "position" not in err


def test_an_acey_deucey_rollout_is_refused_as_documented() -> None:
    """Rollouts are for standard backgammon: the engine refused an Acey-Deucey one, and
    protocol.md said nothing of it (neither under rollout nor under the errors)."""
    err = Session().answer({"cmd": "rollout", "position": AD_START, "trials": 1})["error"]
    assert err.startswith("rollouts are for standard backgammon"), err
    text = " ".join(DOC.read_text().split())
    rollout = text.split("- **`rollout`**")[1].split("- **`version`**")[0]
    assert 'an Acey-Deucey position is refused ("rollouts are for standard backgammon' in rollout
    errors = text.split("## Errors")[1]
    assert "a rollout of an Acey-Deucey position" in errors


def test_a_lone_surrogate_is_refused_and_never_echoed() -> None:
    """An "id" of "\\ud800" (a JSON escape of half a UTF-16 pair, not of a character) was
    echoed back as json.dumps writes it, and strict JSON parsers refused the reply. A line
    holding one, in any string or key, is refused as a line a reply could not carry,
    without the id; an escaped pair is one character and is taken."""
    from doublet.apps.cli import engine_reply
    from doublet.apps.fastpath import FastBest

    for text in ('{"cmd": "version", "id": "\\ud800"}', '{"cmd": "version", "id": "a\\uDFFFb"}',
                 '{"cmd": "eval", "position": "4HPwATDgc/\\ud83dABMA"}', '{"\\udc00": 1}',
                 '{"cmd": "version", "id": ["x", {"k": "\\ud83d"}]}'):  # fmt: skip
        with pytest.raises(DoubletError, match="lone surrogate"):
            protocol.loads(text)
    assert protocol.loads('{"id": "\\ud83d\\ude00"}') == {"id": "\U0001f600"}
    session = Session()
    fast = FastBest(session)
    reply = engine_reply(session, fast, b'{"cmd": "version", "id": "\\ud800"}\n')
    assert isinstance(reply, str)
    out = json.loads(reply)
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # strict: no surrogate in the reply
    assert list(out) == ["error"] and "lone surrogate (\\ud800)" in out["error"], out
    reply = engine_reply(session, fast, b'{"cmd": "version", "id": "\\ud83d\\ude00"}\n')
    assert isinstance(reply, str) and json.loads(reply)["id"] == "\U0001f600"


def test_a_line_refused_while_read_keeps_its_id(client: Any) -> None:
    """A line refused as it is read (a NaN, 1e400, a 5,000-digit integer, a key twice, a
    byte that is not UTF-8) got {"error": "line refused: ..."} without the request's
    "id", which the document promises with every error. The id comes back where the line
    is still a JSON object with one "id" a reply can carry; not where the id itself is
    what was refused, is given twice, or the line is not a JSON object."""
    from doublet.apps.cli import engine_reply
    from doublet.apps.fastpath import FastBest

    session = Session()
    fast = FastBest(session)
    best = '{"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [3, 1], '
    kept = [(best + '"ply": NaN, "id": 7}', "NaN"),
            (best + '"ply": 0, "ply": 1, "id": 7}', 'key "ply" twice'),
            (best + '"ply": 1e400, "id": 7}', "1e400"),
            (best + '"ply": ' + "9" * 5000 + ', "id": 7}', "too many digits"),
            (best + '"variant": "\\ud800", "id": 7}', "lone surrogate"),
            (best + '"ply": NaN, "id": {"n": [1, "a", null]}}', "NaN")]  # fmt: skip
    for line, words in kept:
        out = json.loads(str(engine_reply(session, fast, line.encode() + b"\n")))
        assert next(iter(out)) == "id" and words in out["error"], (line[:80], out)
        assert out["id"] == (7 if '"id": 7' in line else {"n": [1, "a", None]})
    out = json.loads(str(engine_reply(session, fast, b'{"cmd": "eval", "position": "\xff", '
                                      b'"id": 7}\n')))  # fmt: skip
    assert out["id"] == 7 and "not UTF-8" in out["error"]
    dropped = [b'{"cmd": "version", "id": NaN}', b'{"cmd": "version", "id": "\\ud800"}',
               b'{"cmd": "version", "id": 7, "id": 8}', b'{"cmd": "version", "id": "\xff"}',
               b'{"cmd": "version", "id": {"a": 1, "a": 2}}',
               b'{"cmd": "version", "id": [1, ' + b"9" * 5000 + b"]}",
               b'{"cmd": "version", "id": 7', b"[" * 100_000 + b"]" * 100_000,
               b'[{"cmd": "version", "id": 7}, NaN]']  # fmt: skip
    for raw in dropped:
        out = json.loads(str(engine_reply(session, fast, raw + b"\n")))
        assert list(out) == ["error"], (raw[:60], out)
    # doublet moves --batch (the engine's moves requests) and the HTTP API alike.
    from doublet.apps.cli import _batch_lines

    batch = [b'{"position": "4HPwATDgc/ABMA", "dice": [3, 1], "id": 5, "x": NaN}\n']
    assert [json.loads(x)["id"] for x in _batch_lines(iter(batch), None)] == [5]
    r = client.post("/api/best", content=best[:-2].encode() + b', "ply": NaN, "id": 7}',
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 400 and r.json()["id"] == 7 and "NaN" in r.json()["error"], r.text
    r = client.post("/api/best", content=b'{"cmd": "best", "id": 7, "x": "\xff"}',
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 400 and r.json()["id"] == 7 and "not UTF-8" in r.json()["error"]


def test_a_second_signal_during_a_stuck_write_ends_the_engine_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine finishes the reply it is writing before it ends on SIGTERM; a reader
    that stopped reading a full pipe would hold that write for good, so a second signal
    then exits at once."""
    import signal

    from doublet.apps import cli

    exits: list[int] = []
    monkeypatch.setattr(cli.os, "_exit", exits.append)
    ending = cli._Ending()
    with pytest.raises(cli.Ended):  # reading or working: ends where it is
        ending.handle(signal.SIGTERM, None)
    ending = cli._Ending()
    ending.writing = True
    ending.handle(signal.SIGTERM, None)  # noted: the write goes on
    assert ending.status == 143 and exits == []
    ending.handle(signal.SIGTERM, None)  # the second: at once
    assert exits == [143]


def _children(pid: int) -> list[str]:
    return subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()


@pytest.mark.skipif(not (shutil.which("pgrep") and Path("/proc").is_dir()),
                    reason="needs pgrep and /proc to find the workers")  # fmt: skip
def test_sigterm_ends_the_engine_as_quit_does() -> None:
    """SIGTERM killed doublet engine (status -15) and, after a rollout on worker
    processes, left "resource_tracker: There appear to be 5 leaked semaphore objects" on
    stderr. It now ends as quit and the end of input do, its workers shut down, with the
    status a shell gives a process the signal ended (143, as doublet play's): idle after
    a reply, and in the middle of a rollout (that request gets no reply)."""
    import signal

    rollout = {"cmd": "rollout", "position": START, "trials": 4, "truncate": 1, "workers": 2}
    for busy in (False, True):
        p = subprocess.Popen([sys.executable, "-m", "doublet", "engine"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        assert p.stdin is not None and p.stdout is not None and p.stderr is not None
        p.stdin.write((json.dumps({**rollout, "id": 1}) + "\n").encode())
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["id"] == 1
        kids = _children(p.pid)
        assert len(kids) >= 2  # the two workers (and numba's or multiprocessing's helpers)
        if busy:  # a rollout of minutes: the signal comes while the workers run it
            long = {**rollout, "trials": 36_000, "truncate": 0, "id": 2}
            p.stdin.write((json.dumps(long) + "\n").encode())
            p.stdin.flush()
            time.sleep(2)
        p.send_signal(signal.SIGTERM)
        status = p.wait(60)
        rest, err = p.stdout.read().decode(), p.stderr.read().decode()
        p.stdin.close()
        assert status == 143, (busy, status, err[-800:])
        assert rest == "" and "leaked" not in err and "Traceback" not in err, (busy, err[-800:])
        settle = time.monotonic() + 20
        while any(Path(f"/proc/{k}").exists() for k in kids) and time.monotonic() < settle:
            time.sleep(0.2)
        alive = [k for k in kids if Path(f"/proc/{k}").exists()
                 and "zombie" not in Path(f"/proc/{k}/status").read_text()]  # fmt: skip
        assert not alive, (busy, alive)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_engine_in_the_middle_of_a_long_search(signame: str) -> None:
    """The engine saw a signal only when the search's kernel returned to Python: seconds
    at 4 ply (3.6 s for the opening 6-5, whose search takes about 24 s). A thread of its
    own now stops the search as the signal arrives."""
    import signal

    p = subprocess.Popen([sys.executable, "-m", "doublet", "engine"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(b'{"cmd": "version"}\n')
    p.stdin.flush()
    assert "version" in json.loads(p.stdout.readline())
    req = {"cmd": "best", "position": START, "dice": [6, 5], "ply": 4}
    p.stdin.write((json.dumps(req) + "\n").encode())
    p.stdin.flush()
    time.sleep(2)
    start = time.monotonic()
    p.send_signal(getattr(signal, signame))
    status = p.wait(60)
    took = time.monotonic() - start
    p.stdin.close()
    assert status == {"SIGTERM": 143, "SIGINT": 130}[signame]
    assert p.stdout.read() == b""  # the search's reply is not written
    assert took < 1.5, took


def test_a_rollout_without_time_runs_its_trials_and_with_time_stops_at_it() -> None:
    """A rollout without "time" stopped at the engine's 30 s bound ("the time budget ran
    out after 612 trials" of the 1,296 asked); it now runs its trials, as doublet rollout
    does without --time (the bound still bounds the search that picks a roll's plays,
    as it bounds any search). With "time" it stopped at the first 36-trial chunk's end
    past the deadline (1.35 s for 0.3 s; seconds at 1 ply), and the search that picks
    the plays, up to 4 ply, had no bound at all: the plays are picked within half the
    time and the trials stop at the first trial's end past it."""
    bounded = Session(Bounds(default_time=0.01))  # a bound every rollout below passes
    doc = bounded.answer({"cmd": "rollout", "position": START, "trials": 72, "truncate": 1,
                          "workers": 1})  # fmt: skip
    assert doc["rollout"]["trials"] == 72 and "stopped" not in doc, doc.get("stopped")
    from doublet.search.analysis import searcher

    searcher(None, 0).clear_cache()  # 6-5 at 2 ply searched by an earlier test: not within 0.01 s
    doc = bounded.answer({"cmd": "rollout", "position": START, "dice": [6, 5], "trials": 72,
                          "truncate": 1, "workers": 1, "top": 2, "select_ply": 2})  # fmt: skip
    assert doc["rollout"]["trials"] == 72 and len(doc["plays"]) == 2
    picked = doc["stopped"]  # the search's bound, not the trials'
    assert picked.startswith("picking the plays: the time budget of 0.01 s allowed"), picked
    s = Session()
    s.answer({"cmd": "rollout", "position": START, "trials": 1, "ply": 1, "workers": 1})  # warm
    start = time.perf_counter()
    doc = s.answer({"cmd": "rollout", "position": START, "ply": 1, "time": 0.3, "workers": 1})
    spent = time.perf_counter() - start
    assert spent < 1.5 and 2 <= doc["rollout"]["trials"] < 36, (spent, doc["rollout"])
    assert doc["stopped"].startswith("the time budget ran out after"), doc["stopped"]
    start = time.perf_counter()
    doc = s.answer({"cmd": "rollout", "position": START, "dice": [6, 5], "select_ply": 4,
                    "time": 0.5, "workers": 1})  # fmt: skip
    spent = time.perf_counter() - start
    assert spent < 2.5 and 2 <= doc["rollout"]["trials"] < 36, (spent, doc["rollout"])
    picked, ran_out = doc["stopped"].split("; ")
    assert picked.startswith("picking the plays: the time budget of 0.25 s allowed"), picked
    assert ran_out.startswith("the time budget ran out after"), ran_out
    assert all(row["search"]["ply"] < 4 for row in doc["plays"])


@pytest.mark.parametrize("position", [
    "XGID=-b----E-C---eE---c-e----B-:1:0:1:31:0:0:0:0:10",  # a cube at 2, centred
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:6:6:1:7:10",  # the Crawford game at 6-6
    "4HPwATDgc/ABMA:AAEAAAAAAAAA",  # gnubg: the cube at 1, owned
])  # fmt: skip
def test_moves_refuses_the_id_cube_fields_every_other_command_refuses(position: str) -> None:
    """A review found moves listing the plays of IDs that analyse, eval, cube and best
    refuse; each says which ID's fields are at fault."""
    which = "XGID's" if position.startswith("XGID") else "gnubg Match ID's"
    for cmd in ("moves", "best", "eval"):
        req: dict[str, Any] = {"cmd": cmd, "position": position}
        if cmd != "moves":
            req["ply"] = 0
        if not position.startswith("XGID") and cmd != "eval":
            req["dice"] = [3, 1]
        with pytest.raises(DoubletError, match=f"the {which} cube and score fields do not"):
            Session().reply(req)
