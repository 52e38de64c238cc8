"""The browser game's server (doublet.apps.serve) through its JSON API, with Starlette's TestClient.

What this module checks:

- Create a game (201, the person's view, saved to the data folder), play a legal play
  by steps and by notation; the engine answers with its turn and the page sees it.
- Bad requests answer 4xx with {"error": ...} and change nothing (the state and the
  saved file): an illegal or incomplete play (422), an unknown game id (404), malformed
  JSON or a malformed body (400), a play after the game is over (409).
- A restart (a new app on the same data folder) sees the game and plays on; two games
  never share anything.
- Acey-Deucey's 1-2 chain through the API: the 1 and the 2, the doublet choice, four
  moves, the person rolls again (the engine does not play).
- Hint: ranked plays with chances, and steps that the steps endpoint accepts.
- Resign, the series score and the next game; the capped engine depth for Acey-Deucey.
- A whole Acey-Deucey game through the API, the person playing the hint's steps.
- doublet.games.game keeps the roll-again flag of a chosen Play (a 1-2 outcome can be reached
  with and without rolling again).
- `doublet serve` without the web extra says what to install; importing the CLI does
  not import starlette.
"""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from doublet.apps.serve import create_app
from doublet.core.board import ACEY_DEUCEY, from_counts
from doublet.games.game import Game, roll
from tests.helpers import load_jsonl

ROOT = Path(__file__).resolve().parent.parent


class MoveClient(TestClient):
    """A client that sends the game's current move with every request that changes a game
    (as the page does), so that the tests below are about the games; the move check
    itself is tested on a plain TestClient."""

    def post(self, url: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        parts = str(url).split("/")
        if len(parts) == 5 and parts[4] in ("play", "resign", "next") and "content" not in kwargs:
            body = dict(kwargs.pop("json", None) or {})
            if "move" not in body:
                state = self.get("/".join(parts[:4]))
                if state.status_code == 200:
                    body["move"] = state.json()["move"]
            kwargs["json"] = body
        return super().post(url, *args, **kwargs)


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return MoveClient(create_app(tmp_path, ply=0))


def new(c: TestClient, **body: Any) -> dict[str, Any]:
    body = {"variant": "standard", "ply": 0, "seed": 7, "starter": "you", **body}
    r = c.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def first_play_steps(c: TestClient, gid: str) -> list[dict[str, Any]]:
    """The steps of one legal play, found step by step through the API."""
    steps: list[dict[str, Any]] = []
    while True:
        o = c.post(f"/api/games/{gid}/steps", json={"steps": steps}).json()
        if o["complete"] and not o["steps"] and not o["doublets"]:
            return steps
        steps.append({"doublet": o["doublets"][-1]} if o["doublets"] else o["steps"][0])


def test_create_and_play(client: TestClient, tmp_path: Path) -> None:
    st = new(client)
    gid = st["id"]
    assert len(gid) >= 30 and (tmp_path / f"{gid}.json").is_file()
    assert st["game"]["turn"] == "you" and st["game"]["dice"] == [6, 4]
    assert st["board"]["points"][24] == 2 and st["board"]["points"][1] == -2
    assert st["board"]["pips"] == {"you": 167, "engine": 167}
    o = client.post(f"/api/games/{gid}/steps", json={"steps": []}).json()
    assert {"from": 24, "to": 18, "die": 6, "hit": False} in o["steps"]
    assert not o["complete"] and o["dice"] == [6, 4]
    steps = [{"from": 24, "to": 18, "die": 6}, {"from": 18, "to": 14, "die": 4}]
    o = client.post(f"/api/games/{gid}/steps", json={"steps": steps}).json()
    assert o["complete"] and o["play"] == "24/18 18/14" and o["board"]["points"][14] == 1
    r = client.post(f"/api/games/{gid}/play", json={"steps": steps})
    assert r.status_code == 200, r.text
    st = r.json()
    assert st["record"][0] == {"side": "you", "dice": [6, 4], "play": "24/14", "again": False}
    assert st["last"] and st["last"][0]["side"] == "engine" and st["game"]["turn"] == "you"
    saved = json.loads((tmp_path / f"{gid}.json").read_text())
    assert len(saved["game"]["record"]) == len(st["record"])
    # A play in notation.
    text = first_play_text(client, gid)
    r = client.post(f"/api/games/{gid}/play", json={"play": text})
    assert r.status_code == 200, r.text
    assert r.json()["record"][len(st["record"])]["side"] == "you"


def first_play_text(c: TestClient, gid: str) -> str:
    return c.post(f"/api/games/{gid}/steps", json={"steps": first_play_steps(c, gid)}).json()[
        "play"
    ]


def test_bad_plays_change_nothing(client: TestClient, tmp_path: Path) -> None:
    gid = new(client)["id"]
    before = client.get(f"/api/games/{gid}").json()
    saved = (tmp_path / f"{gid}.json").read_bytes()
    cases = [
        ({"play": "24/14 24/20"}, 422, "6-4"),
        ({"play": "24/1"}, 422, "closed"),
        ({"play": "24/x"}, 422, "unknown point"),
        ({"steps": [{"from": 24, "to": 18, "die": 6}]}, 422, "not complete"),
        ({"steps": [{"from": 24, "to": 20, "die": 5}]}, 422, "not a legal step"),
        ({"steps": [{"from": 13, "to": 7, "die": 6}, {"from": 7, "to": 1, "die": 6}]}, 422, ""),
        ({"steps": [{"from": "nowhere", "to": 7, "die": 6}]}, 400, "'from' is not valid"),
        ({"steps": "24/18"}, 400, "steps are a list"),
        ({"play": 42}, 400, "the play's text"),
        ({}, 400, "steps"),
    ]
    for body, status, msg in cases:
        r = client.post(f"/api/games/{gid}/play", json=body)
        assert r.status_code == status, (body, r.text)
        assert msg in r.json()["error"], (body, r.json())
    for raw in (b"{not json", b"[1, 2]", b'"text"'):
        headers = {"content-type": "application/json"}
        r = client.post(f"/api/games/{gid}/play", content=raw, headers=headers)
        assert r.status_code == 400 and r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before
    assert (tmp_path / f"{gid}.json").read_bytes() == saved


def test_unknown_id_and_bad_creation(client: TestClient) -> None:
    for path in ("/api/games/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/api/games/..%2Fsecret",
                 "/api/games/x/hint"):  # fmt: skip
        r = client.get(path)
        assert r.status_code == 404 and "error" in r.json()
    r = client.post("/api/games/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/play", json={"play": "24/18"})
    assert r.status_code == 404 and "no game" in r.json()["error"]
    for body, msg in [
        ({"variant": "chess"}, "variant"),
        ({"ply": 9}, "'ply' must be"),
        ({"games": -1}, "'games' must be"),
        ({"starter": "me"}, "'starter'"),
        ({"seed": "x"}, "'seed'"),
    ]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and msg in r.json()["error"], r.text
    r = client.post("/api/games", content=b"{", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]


def test_restart_keeps_games(tmp_path: Path) -> None:
    c1 = MoveClient(create_app(tmp_path, ply=0))
    st = new(c1, seed=11)
    gid = st["id"]
    r = c1.post(f"/api/games/{gid}/play", json={"steps": first_play_steps(c1, gid)})
    st = r.json()
    c2 = MoveClient(create_app(tmp_path, ply=0))  # a new server on the same data
    assert c2.get(f"/api/games/{gid}").json() == st
    r = c2.post(f"/api/games/{gid}/play", json={"steps": first_play_steps(c2, gid)})
    assert r.status_code == 200 and len(r.json()["record"]) > len(st["record"])
    assert c2.get(f"/api/games/{gid}/export").text.startswith("; Doublet standard game 1")


def test_two_games_are_independent(client: TestClient) -> None:
    a = new(client, seed=5)
    b = new(client, seed=5)
    assert a["id"] != b["id"]
    b_before = client.get(f"/api/games/{b['id']}").json()
    r = client.post(f"/api/games/{a['id']}/play", json={"steps": first_play_steps(client, a["id"])})
    assert r.status_code == 200
    assert client.get(f"/api/games/{b['id']}").json() == b_before
    assert client.get(f"/api/games/{a['id']}").json()["record"] != b_before["record"]


def test_acey_deucey_chain_through_the_api(client: TestClient) -> None:
    seed = next(s for s in range(1000) if sorted(roll(s, 0, 0)) == [1, 2])
    st = new(client, variant="acey-deucey", seed=seed)
    gid = st["id"]
    assert st["board"]["unentered"] == {"you": 15, "engine": 15}
    url = f"/api/games/{gid}/steps"
    steps: list[dict[str, Any]] = [{"from": "in", "to": 23, "die": 2}]
    o = client.post(url, json={"steps": steps}).json()
    assert [s["to"] for s in o["steps"] if s["from"] == "in"] == [24]
    steps.append({"from": "in", "to": 24, "die": 1})
    o = client.post(url, json={"steps": steps}).json()
    assert o["doublets"] == [1, 2, 3, 4, 5, 6] and o["steps"] == [] and not o["complete"]
    r = client.post(url, json={"steps": [*steps, {"from": "in", "to": 19, "die": 6}]})
    assert r.status_code == 422 and "choose the doublet" in r.json()["error"]
    steps.append({"doublet": 6})
    r = client.post(f"/api/games/{gid}/play", json={"steps": steps})
    assert r.status_code == 422 and "not complete" in r.json()["error"]
    steps += [{"from": "in", "to": 19, "die": 6}] * 4
    o = client.post(url, json={"steps": steps}).json()
    assert o["complete"] and o["again"]
    assert o["play"] == "in/23 in/24 then 6-6: in/19 in/19 in/19 in/19"
    st = client.post(f"/api/games/{gid}/play", json={"steps": steps}).json()
    chain = "in/24 in/23 then 6-6: in/19(4)"
    dice = list(roll(seed, 0, 0))
    assert st["record"][-1] == {"side": "you", "dice": dice, "play": chain, "again": True}
    assert st["game"]["turn"] == "you" and st["last"] == []  # the person rolls again
    assert st["board"]["points"][19] == 4 and st["board"]["unentered"]["you"] == 9
    assert st["game"]["dice"] == list(roll(seed, 0, 1))


def test_hint_steps_play(client: TestClient) -> None:
    gid = new(client, seed=3)["id"]
    h = client.get(f"/api/games/{gid}/hint").json()
    plays = h["plays"]
    assert 1 <= len(plays) <= 5 and h["count"] >= len(plays) and h["ply"] == 0
    assert [p["rank"] for p in plays] == list(range(1, len(plays) + 1))
    assert all(a["equity"] >= b["equity"] for a, b in pairwise(plays))
    for p in plays:
        assert 0 <= p["probabilities"]["win"] <= 1 and "win_gammon" in p["probabilities"]
        o = client.post(f"/api/games/{gid}/steps", json={"steps": p["steps"]}).json()
        assert o["complete"]
    r = client.post(f"/api/games/{gid}/play", json={"steps": plays[0]["steps"]})
    assert r.json()["record"][0]["play"] == plays[0]["play"]


def test_resign_score_and_next_game(client: TestClient) -> None:
    st = new(client, games=2)
    gid = st["id"]
    st = client.post(f"/api/games/{gid}/resign", json={"points": 2}).json()
    assert st["game"]["over"] and st["game"]["result"]["winner"] == "engine"
    assert st["score"] == {"you": 0, "engine": 2} and not st["series_over"]
    r = client.post(f"/api/games/{gid}/play", json={"play": "24/18 13/9"})
    assert r.status_code == 409 and "over" in r.json()["error"]
    assert client.get(f"/api/games/{gid}/hint").status_code == 409
    st = client.post(f"/api/games/{gid}/next").json()
    assert st["game"]["number"] == 2 and not st["game"]["over"] and st["game"]["turn"] == "you"
    st = client.post(f"/api/games/{gid}/resign", json={}).json()
    assert st["series_over"] and st["score"]["engine"] == 3 and len(st["results"]) == 2
    r = client.post(f"/api/games/{gid}/next")
    assert r.status_code == 409 and "series is over" in r.json()["error"]
    r = client.post(f"/api/games/{gid}/resign", json={"points": 5})
    assert r.status_code == 409


def test_game_keeps_the_roll_again_flag() -> None:
    # tests/data/acey_deucey.jsonl line 229: some boards after the 1-2 chain are reached
    # both with a doublet played four times (roll again) and with one played less.
    case = load_jsonl("acey_deucey.jsonl")[228]
    board = from_counts(case["position"]["mover"], case["position"]["opponent"])
    g = Game.new(ACEY_DEUCEY, seed=1, starter=0)
    g.board, g.dice = board, (1, 2)
    plays = g.plays()
    keys = [p.board.tobytes() for p in plays]
    twice = [p for p in plays if keys.count(p.board.tobytes()) == 2]
    assert twice
    for again in (True, False):
        g = Game.new(ACEY_DEUCEY, seed=1, starter=0)
        g.board, g.dice = board.copy(), (1, 2)
        chosen = next(p for p in twice if p.again == again)
        t = g.play(chosen)
        assert t.again == again and g.turn == (0 if again else 1)
        assert np.array_equal(g.board_for(0), chosen.board)


def test_serve_without_the_web_extra(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    import importlib.util

    from doublet.apps import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "starlette" else real(name, *a),
    )
    assert cli.main(["serve", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "doublet: error: doublet serve needs starlette: pip install -e '.[web]'" in err
    code = (
        "import sys, doublet.apps.cli, doublet.apps.serve, doublet.games.game, "
        "doublet.games.steps; "
        "doublet.apps.cli.build_parser().parse_args(['serve']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_whole_acey_deucey_game_through_the_api(client: TestClient) -> None:
    """The hint's best play each turn (its steps), to the end: chains, rolling again,
    entering, exact bear-off; every play is accepted and the record grows."""
    st = new(client, variant="acey-deucey", seed=1, starter="throw")
    gid = st["id"]
    chains = turns = 0
    while not st["game"]["over"]:
        steps: list[dict[str, Any]] = []
        if not st["game"]["no_play"]:
            steps = client.get(f"/api/games/{gid}/hint").json()["plays"][0]["steps"]
            chains += any("doublet" in s for s in steps)
        r = client.post(f"/api/games/{gid}/play", json={"steps": steps})
        assert r.status_code == 200, r.text
        assert len(r.json()["record"]) > len(st["record"])
        st = r.json()
        turns += 1
        assert turns < 300
    assert chains >= 1 and st["game"]["result"]["points"] in (1, 2, 3)
    assert st["score"][st["game"]["result"]["winner"]] == st["game"]["result"]["points"]
    assert st["series_over"] and st["results"] == [st["game"]["result"]]


def test_a_retried_play_is_not_played_twice(tmp_path: Path) -> None:
    c = TestClient(create_app(tmp_path, ply=0))
    st = new(c)
    gid, move = st["id"], st["move"]
    steps = first_play_steps(c, gid)
    r = c.post(f"/api/games/{gid}/play", json={"steps": steps})
    assert r.status_code == 400 and "'move'" in r.json()["error"]
    r = c.post(f"/api/games/{gid}/play", json={"steps": steps, "move": move})
    assert r.status_code == 200
    after = r.json()
    assert after["move"] > move
    again = c.post(f"/api/games/{gid}/play", json={"steps": steps, "move": move})  # a retry
    assert again.status_code == 409 and "applied already" in again.json()["error"]
    assert again.json()["state"] == after
    assert c.get(f"/api/games/{gid}").json() == after
    r = c.post(f"/api/games/{gid}/resign", json={"points": 1, "move": move})
    assert r.status_code == 409 and c.get(f"/api/games/{gid}").json() == after


def test_requests_from_other_sites_and_odd_requests_are_refused(tmp_path: Path) -> None:
    c = TestClient(create_app(tmp_path, ply=0, hosts={"127.0.0.1", "localhost", "testserver"}))
    gid = new(c)["id"]
    before = c.get(f"/api/games/{gid}").json()
    move = before["move"]
    # A form or text/plain post (no preflight in a browser) changes nothing.
    r = c.post(f"/api/games/{gid}/resign", content=b'{"points": 1, "move": %d}' % move,
               headers={"content-type": "text/plain"})  # fmt: skip
    assert r.status_code == 415
    r = c.post("/api/games", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    # Another site's page, through the user's browser.
    r = c.post(f"/api/games/{gid}/resign", json={"points": 1, "move": move},
               headers={"origin": "https://evil.example"})  # fmt: skip
    assert r.status_code == 403 and "evil.example" in r.json()["error"]
    # DNS rebinding: a Host this server does not answer for.
    r = c.get(f"/api/games/{gid}", headers={"host": "evil.example"})
    assert r.status_code == 403
    # A body too large, nested too deeply, or with a huge number.
    big = b'{"steps": [' + b"1," * 40000 + b"1]}"
    r = c.post(f"/api/games/{gid}/steps", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413
    for raw in (b"[" * 5000 + b"]" * 5000, b'{"points": ' + b"9" * 5000 + b"}"):
        r = c.post(f"/api/games/{gid}/resign", content=raw,
                   headers={"content-type": "application/json"})  # fmt: skip
        assert r.status_code == 400 and r.json()["error"]
    # A list where a string belongs is a 400 with an error, never a bare 500.
    r = c.post("/api/games", json={"variant": ["standard"]})
    assert r.status_code == 400 and "variant" in r.json()["error"]
    assert c.get(f"/api/games/{gid}").json() == before


def test_the_number_of_saved_games_is_capped(tmp_path: Path) -> None:
    c = TestClient(create_app(tmp_path, ply=0, max_saved=3))
    for _ in range(3):
        new(c)
    r = c.post("/api/games", json={"variant": "standard", "ply": 0})
    assert r.status_code == 429 and "at most 3" in r.json()["error"]
