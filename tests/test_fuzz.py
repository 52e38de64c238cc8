"""Fuzzing (issue 26): generated garbage and mutations of valid inputs thrown at every
door a user or a program can knock on. Each input must end in its result or in one clean
error of the documented kind: never another exception, a traceback, a dead process, a
5xx, or a changed file on disk.

The budgets are fixed (hypothesis, derandomized; seeded generators: the same inputs
every run) and small enough for CI: 200 inputs a door. `DOUBLET_FUZZ=2000 pytest -m
"slow or not slow" tests/test_fuzz.py` runs 2,000 a door, the engine and web runs
included (marked slow). Counts are in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doublet.core.errors import (
    CubeError,
    DoubletError,
    InvalidPositionError,
    ModelError,
    SaveFileError,
)
from doublet.cube.state import from_request
from doublet.formats.ids import decode_match_id, parse_position, validate
from doublet.formats.position import Position
from doublet.games.game import Series
from doublet.nn.eval import load_model

ROOT = Path(__file__).resolve().parent.parent
CI = int(os.environ.get("DOUBLET_FUZZ", "200"))
SLOW = 2000


def _settings(n: int) -> Any:
    return settings(max_examples=n, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))  # fmt: skip


VALID_TEXT = [
    "4HPwATDgc/ABMA",
    "4HPwATDgc/ABMA:MIHlAFAAGAAE",
    "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:5:10",
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10",
    '{"variant": "acey-deucey", "mover": [15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '
    '0, 0, 0, 0, 0, 0, 0, 0, 0], "opponent": [15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '
    "0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}",
    "sGfwATDgc/ABMA",
]
PLAYS = ["8/5 6/5", "24/13", "bar/20*", "6/off", "8/5(2)", "24/18/13", "13/7* 8/7", "in/22"]
ALPHABET = '0123456789/:*()-=,{}[]" abcxXgGiDoOfnbar\u00b2\u0662\x00\n'


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str]) -> str:
    """A valid text with a few characters replaced, inserted, deleted or repeated."""
    s = list(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 3))
        i = draw(st.integers(0, max(len(s) - 1, 0)))
        c = draw(st.sampled_from(ALPHABET))
        if kind == 0 and s:
            s[i] = c
        elif kind == 1:
            s.insert(i, c)
        elif kind == 2 and s:
            del s[i]
        else:
            s[i:i] = s[i : i + draw(st.integers(1, 20))] * draw(st.integers(1, 50))
    return "".join(s)


texts = st.one_of(st.text(max_size=200), st.text(ALPHABET, max_size=200), mutated(VALID_TEXT))


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    _containers,
    max_leaves=30,
)


def _parses_or_refuses(value: Any) -> None:
    try:
        board, variant, _ = parse_position(value)
    except InvalidPositionError:
        return
    validate(board, variant)  # what is accepted is a board that can arise


@_settings(CI)
@given(texts)
def test_position_parsers(text: str) -> None:
    _parses_or_refuses(text)


@_settings(CI)
@given(json_values)
def test_position_parsers_on_json_values(value: Any) -> None:
    _parses_or_refuses(value)


@_settings(CI)
@given(st.one_of(st.text(max_size=60), st.text(ALPHABET, max_size=60), mutated(PLAYS)),
       st.integers(1, 6), st.integers(1, 6))  # fmt: skip
def test_play_parser(text: str, d1: int, d2: int) -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    try:
        play = pos.play(text, d1, d2)
    except DoubletError:
        return
    assert play.notation in {p.notation for p in pos.plays(d1, d2)}


@_settings(CI)
@given(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=12,
               max_size=12))  # fmt: skip
def test_match_ids(text: str) -> None:
    try:
        fields = decode_match_id(text)
    except InvalidPositionError:
        return
    assert fields["cube"] >= 1 and fields["owner"] in (-1, 0, 1)


@_settings(CI)
@given(st.dictionaries(st.sampled_from(["cube", "match", "jacoby", "beavers", "x"]), json_values,
                       max_size=4))  # fmt: skip
def test_cube_requests(req: dict[str, Any]) -> None:
    with contextlib.suppress(CubeError):
        from_request(req)


# -- doublet engine, as a subprocess ---------------------------------------------------------

GOOD = {"cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": [2, 1]}
KEYS = ["cmd", "position", "dice", "ply", "variant", "model", "cube", "match", "jacoby",
        "method", "time", "id", "limit", "plies"]  # fmt: skip
VALUES: dict[str, list[Any]] = {
    "cmd": ["best", "eval", "analyse", "moves", "cube", "version", "analyze", "quiet", None, 3],
    "id": [1, None, {"a": [1]}, "x" * 50],
    "limit": [1, 0, -1, "3", 10**6, None],
    "plies": [2],  # a key no command takes
    "position": [*VALID_TEXT, 7, None, {"variant": "standard"}, "x" * 300],
    "dice": [[3, 1], [6, 6], [0, 1], ["3", "1"], "31", [1], None, [7, 2]],
    "ply": [0, 1, -1, 9, "2", True, 2.5],
    "variant": ["standard", "acey-deucey", "chess", 1, ["standard"]],
    "model": ["/nonexistent.npz", 5, ""],
    "cube": [{"value": 2, "owner": "mover"}, {"value": 3}, "2", None],
    "match": [{"length": 7, "away": [2, 4]}, {"length": 7, "away": [0, 4]}, None, []],
    "jacoby": [True, "yes", None],
    "method": ["cubeful", "janowski", "guess"],
    "time": [1, 0, -5, "1", 10**400 if False else 1e308],
}


def _request_lines(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    lines: list[bytes] = []
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:  # a request of known keys and odd values
            req = {k: rng.choice(VALUES[k]) for k in rng.sample(KEYS, rng.randint(1, len(KEYS)))}
            if "time" not in req:
                req["time"] = 1
            if isinstance(req.get("ply"), int) and not isinstance(req["ply"], bool):
                req["ply"] = min(req["ply"], 1)  # bounded anyway; keeps the run short
            lines.append(json.dumps(req).encode())
        elif kind == 1:  # a good request with one character changed
            t = list(json.dumps(GOOD))
            t[rng.randrange(len(t))] = rng.choice(ALPHABET)
            lines.append("".join(t).encode())
        elif kind == 2:  # bytes
            lines.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(
                b"\n", b" "))  # fmt: skip
        else:  # structure: deep, long, huge numbers
            huge = b'{"cmd": "best", "dice": [' + b"9" * 5000 + b"]}"
            lines.append(rng.choice([b"[" * 3000, huge, b'"' + b"a" * 10000 + b'"', b"{}",
                                     b"null", b"[]"]))  # fmt: skip
    return [x.replace(b"\n", b" ") for x in lines]  # one request a line


def _engine_survives(n: int, seed: int) -> tuple[int, int]:
    lines = _request_lines(n, seed)
    good = json.dumps(GOOD).encode()
    text = b"".join(x + b"\n" + good + b"\n" for x in lines)
    r = subprocess.run([sys.executable, "-m", "doublet", "engine"], input=text, capture_output=True,
                       cwd=ROOT, timeout=3000)  # fmt: skip
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-2000:]
    out = r.stdout.decode().splitlines()
    # A line that is only whitespace or empty after decoding gets no reply.
    expected = [x for x in lines if x.decode("utf-8", "replace").strip()]
    assert len(out) == len(expected) + len(lines)
    handled = 0
    k = 0
    for x in lines:
        if x.decode("utf-8", "replace").strip():
            reply = json.loads(out[k])
            k += 1
            assert "internal error" not in reply.get("error", ""), (x[:200], reply)
            handled += 1
        assert len(json.loads(out[k])["plays"]) == 15  # the good line after it
        k += 1
    return len(lines), handled


def test_the_engine_answers_every_generated_line() -> None:
    tried, handled = _engine_survives(CI, seed=1)
    assert handled == tried - sum(1 for x in _request_lines(CI, 1)
                                  if not x.decode("utf-8", "replace").strip())  # fmt: skip


@pytest.mark.slow
def test_the_engine_answers_every_generated_line_long() -> None:
    _engine_survives(SLOW, seed=2)


# -- the web API ------------------------------------------------------------------------------


def _web_fuzz(n: int, seed: int, tmp: Path) -> int:
    from starlette.testclient import TestClient

    from doublet.apps.serve import create_app

    c = TestClient(create_app(tmp, ply=0), raise_server_exceptions=False)
    gid = c.post("/api/games", json={"variant": "standard", "ply": 0, "seed": 3}).json()["id"]
    rng = random.Random(seed)
    paths = ["", f"/{gid}", f"/{gid}/steps", f"/{gid}/play", f"/{gid}/hint", f"/{gid}/resign",
             f"/{gid}/next", f"/{gid}/export", "/AAAA", "/../x", f"/{gid}/nope"]  # fmt: skip
    bodies: list[Any] = [{}, [], "x", None, {"steps": "24/18"}, {"play": "24/18 13/9"},
                         {"points": 9}, {"move": "x"}, {"variant": ["standard"]},
                         {"steps": [{"from": 99, "to": -3, "die": 7}]},
                         {"seed": 10**30}]  # fmt: skip
    for _ in range(n):
        method = rng.choice(["GET", "POST", "PUT"])
        path = "/api/games" + rng.choice(paths)
        body = rng.choice(bodies)
        if rng.random() < 0.3 and isinstance(body, dict):
            body = {**body, "move": c.get(f"/api/games/{gid}").json().get("move")}
        kind = rng.choice(["application/json", "text/plain", ""])
        raw = json.dumps(body).encode() if rng.random() < 0.8 else bytes(
            rng.randrange(256) for _ in range(rng.randrange(1, 40)))  # fmt: skip
        r = c.request(method, path, content=raw, headers={"content-type": kind} if kind else {})
        assert r.status_code < 500, (method, path, raw[:100], r.status_code, r.text[:300])
        if r.status_code >= 400:
            assert "error" in r.json()
    for f in tmp.glob("*.json"):  # every game on disk is still a game
        Series.load(f)
    return n


def _program_api_fuzz(n: int, seed: int, tmp: Path) -> int:
    """The HTTP API for programs (POST /api/best ...): requests of the engine's keys with
    odd values, never a 5xx, every error a JSON {"error"}."""
    from starlette.testclient import TestClient

    from doublet.apps.serve import HTTP_COMMANDS, create_app

    c = TestClient(create_app(tmp, ply=0), raise_server_exceptions=False)
    rng = random.Random(seed)
    keys = [k for k in KEYS if k != "cmd"]
    for _ in range(n):
        body: Any = {k: rng.choice(VALUES[k]) for k in rng.sample(keys, rng.randint(1, 6))}
        if isinstance(body.get("ply"), int) and not isinstance(body["ply"], bool):
            body["ply"] = min(body["ply"], 1)  # bounded anyway; keeps the run short
        body.setdefault("time", 1)
        if rng.random() < 0.1:
            body = rng.choice([[], "x", None, 3])
        path = "/api/" + rng.choice([*HTTP_COMMANDS, "version", "set", "rollout"])
        r = c.post(path, content=json.dumps(body).encode(),
                   headers={"content-type": "application/json"})  # fmt: skip
        assert r.status_code < 500, (path, body, r.status_code, r.text[:300])
        if r.status_code >= 400:
            assert "error" in r.json()
            assert "internal error" not in r.json()["error"], (path, body, r.text[:300])
    return n


def test_the_web_api_never_answers_5xx(tmp_path: Path) -> None:
    assert _web_fuzz(CI, seed=1, tmp=tmp_path) == CI
    assert _program_api_fuzz(CI, seed=1, tmp=tmp_path) == CI


@pytest.mark.slow
def test_the_web_api_never_answers_5xx_long(tmp_path: Path) -> None:
    _web_fuzz(SLOW, seed=2, tmp=tmp_path)
    _program_api_fuzz(SLOW, seed=2, tmp=tmp_path)


# -- loaders: models and saved games, damaged ------------------------------------------------


def _damaged(good: bytes, rng: random.Random) -> bytes:
    b = bytearray(good)
    kind = rng.randrange(3)
    if kind == 0:
        return bytes(b[: rng.randrange(len(b))])
    if kind == 1:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b)
    return bytes(b) + bytes(rng.randrange(256) for _ in range(rng.randint(1, 50)))


@pytest.mark.parametrize("n", [60])
def test_damaged_models_are_model_errors(tmp_path: Path, n: int) -> None:
    good = (ROOT / "models" / "doublet-acey-deucey.npz").read_bytes()
    rng = random.Random(5)
    for k in range(n):
        p = tmp_path / f"m{k}.npz"
        data = _damaged(good, rng)
        p.write_bytes(data)
        try:
            m = load_model(p)
        except ModelError:
            pass
        else:
            assert np.isfinite(m.contact[0]).all()
        assert p.read_bytes() == data  # the loader wrote nothing


def test_damaged_saves_are_save_file_errors(tmp_path: Path) -> None:
    save = tmp_path / "game.json"
    Series.new("standard", 1, 4, 0, None).save(save)
    good = save.read_bytes()
    rng = random.Random(6)
    for k in range(200):
        p = tmp_path / f"s{k}.json"
        data = _damaged(good, rng)
        p.write_bytes(data)
        with contextlib.suppress(SaveFileError):
            Series.load(p)
        assert p.read_bytes() == data


def test_damaged_checkpoints_are_checkpoint_errors(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from doublet.training import checkpoint

    good_path = tmp_path / "good.pt"
    checkpoint.save(good_path, {"games": 8, "weights": torch.zeros(40, 3), "curve": [1.0, 2.0]})
    good = good_path.read_bytes()
    rng = random.Random(7)
    for k in range(60):
        p = tmp_path / f"c{k}.pt"
        data = _damaged(good, rng)
        p.write_bytes(data)
        try:
            checkpoint.load(p)
        except checkpoint.CheckpointError as e:
            assert "weights_only=False" not in str(e)
        assert p.read_bytes() == data


def _play_until_stopped(base: str, stop: Any) -> None:
    """Create games and play them through the API until `stop` is set or the server dies."""
    import httpx2 as httpx

    client = httpx.Client(timeout=30)
    try:
        while not stop.is_set():
            st = client.post(base, json={"variant": "standard", "ply": 1}).json()
            for _ in range(3):
                steps: list[Any] = []
                while True:
                    o = client.post(f"{base}/{st['id']}/steps", json={"steps": steps}).json()
                    if o["complete"] and not o["steps"] and not o["doublets"]:
                        break
                    steps.append(o["steps"][0] if o["steps"] else {"doublet": o["doublets"][-1]})
                body = {"steps": steps, "move": st["move"]}
                st = client.post(f"{base}/{st['id']}/play", json=body).json()
    except (httpx.TransportError, KeyError, ValueError, TypeError):
        return
    finally:
        client.close()


def test_a_server_killed_mid_request_keeps_every_game_readable(tmp_path: Path) -> None:
    """doublet serve as a process, games being created and played from a thread, killed
    with SIGKILL at a few moments: every saved game loads afterwards."""
    pytest.importorskip("uvicorn")
    import signal
    import socket
    import threading
    import time

    import httpx2 as httpx

    for round_ in range(3):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        argv = [sys.executable, "-m", "doublet", "serve", "--port", str(port), "--data",
                str(tmp_path), "--ply", "1"]  # fmt: skip
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        base = f"http://127.0.0.1:{port}/api/games"
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(base + "/AAAA", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "no server"
                time.sleep(0.2)
        stop = threading.Event()
        t = threading.Thread(target=_play_until_stopped, args=(base, stop), daemon=True)
        t.start()
        time.sleep(1.0 + round_)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        stop.set()
        t.join(30)
    saved = list(tmp_path.glob("*.json"))
    assert saved
    for f in saved:
        Series.load(f)
