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
- The cube (the engine's cube actions scripted by monkeypatching doublet.games.opponent):
  a money session (Jacoby on), roll and double before the roll, the engine's take and
  pass of the person's doubles and the person's take and pass of the engine's; a double
  waiting for an answer survives a restart; beavers both ways; every request at the
  wrong time is a 409 that says what may be done now.
- A match to 3: a double taken, a redouble passed, the Crawford game without the cube,
  the match's winner; its .mat download read back by the .mat reader; the text export of
  both games; Acey-Deucey has no .mat (409 pointing to /export).
- A resignation the engine refuses leaves the game as it was and says what it would
  accept; the one it accepts ends the game.
- A game from a position (XGID, gnubg ID with Match ID, the request's own cube and
  score; the Crawford game and post-Crawford); bad positions, dice and states are 400s.
- The engine's plays in the state, its last play's marks and the review are in the
  person's numbering.
- The review of a finished game (boards, verdicts, totals, the cube before each entry)
  and its bad requests; the analysis endpoint (cube decision and ranked plays) and its
  bad requests; the pages and the favicon are served.
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
from doublet.games.game import DEAD_CUBE_NOTE, Game, roll
from tests.helpers import load_jsonl

ROOT = Path(__file__).resolve().parent.parent


CHANGING = ("play", "roll", "double", "take", "pass", "drop", "beaver", "resign", "next")


class MoveClient(TestClient):
    """A client that sends the game's current move with every request that changes a game
    (as the page does), so that the tests below are about the games; the move check
    itself is tested on a plain TestClient."""

    def post(self, url: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        parts = str(url).split("/")
        if len(parts) == 5 and parts[4] in CHANGING and "content" not in kwargs:
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
    body = {"variant": "standard", "ply": 0, "seed": 7, **body}
    if "position" not in body:  # at a position the person is on roll: no starter
        body.setdefault("starter", "you")
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
    assert st["record"][0] == {"side": "you", "dice": [6, 4], "play": "24/14", "again": False,
                              "action": "play", "cube": 0}  # fmt: skip
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
        ({"play": "24/1"}, 422, "the roll 6-4 cannot move 24/1"),
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
    text = c2.get(f"/api/games/{gid}/export").text
    # the dice's seed gives every roll to come: left out until the series is over
    assert text.startswith("; Doublet standard game 1\n") and "seed" not in text


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
    assert st["record"][-1] == {"side": "you", "dice": dice, "play": chain, "again": True,
                                "action": "play", "cube": 0}  # fmt: skip
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
    assert "doublet: error: doublet serve needs starlette: pip install 'doublet[web]' (in a " in err
    assert "checkout: pip install -e '.[web]')" in err
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
    for wrong in (str(after["move"]), True, float(after["move"])):  # the type, not a retry
        r = c.post(f"/api/games/{gid}/resign", json={"points": 1, "move": wrong})
        assert r.status_code == 400 and "an integer" in r.json()["error"], wrong
    assert c.get(f"/api/games/{gid}").json() == after


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


# ---------------------------------------------------------------------------------------
# The cube, money sessions and matches
# ---------------------------------------------------------------------------------------


def test_a_request_that_changes_a_game_refuses_unknown_keys(client: TestClient) -> None:
    """A typo in a request that changes the game is a 400 naming it, and the game is as it
    was: "pionts" must not resign a single game; the steps request is checked the same."""
    gid = new(client)["id"]
    before = client.get(f"/api/games/{gid}").json()
    typos = [("resign", {"pionts": 3}, "pionts"), ("play", {"steps": [], "foo": 1}, "foo"),
             ("roll", {"now": True}, "now"), ("next", {"games": 2}, "games")]  # fmt: skip
    for what, body, bad in typos:
        r = client.post(f"/api/games/{gid}/{what}", json=body)
        assert r.status_code == 400, (what, r.text)
        assert f"takes no {bad!r}" in r.json()["error"], r.text
    r = client.post(f"/api/games/{gid}/steps", json={"steps": [], "foo": 1})
    assert r.status_code == 400 and "takes no 'foo'" in r.json()["error"], r.text
    # The steps' move is checked as a change's is: its type (400), then its state (409).
    r = client.post(f"/api/games/{gid}/steps", json={"steps": [], "move": "3"})
    assert r.status_code == 400 and "an integer" in r.json()["error"], r.text
    r = client.post(f"/api/games/{gid}/steps", json={"steps": [], "move": before["move"] + 1})
    assert r.status_code == 409 and r.json()["state"]["move"] == before["move"], r.text
    assert client.get(f"/api/games/{gid}").json() == before
    r = client.post(f"/api/games/{gid}/resign", json={"points": 1})  # the right key
    assert r.status_code == 200 and "resignation" in r.json(), r.text


def act(c: TestClient, gid: str, what: str, **body: Any) -> Any:
    return c.post(f"/api/games/{gid}/{what}", json=body)


def play_on(c: TestClient, gid: str) -> dict[str, Any]:
    """The person plays a legal play (or none); returns the state after the engine acted."""
    st = c.get(f"/api/games/{gid}").json()
    steps = [] if st["game"]["no_play"] else first_play_steps(c, gid)
    r = act(c, gid, "play", steps=steps)
    assert r.status_code == 200, r.text
    return dict(r.json())


def to_your_roll(c: TestClient, gid: str) -> dict[str, Any]:
    """Play until the person is to roll (and may double)."""
    st = c.get(f"/api/games/{gid}").json()
    for _ in range(30):
        if st["game"]["phase"] == "roll" and st["game"]["turn"] == "you":
            return dict(st)
        assert st["game"]["phase"] == "move" and st["game"]["turn"] == "you", st["game"]
        st = play_on(c, gid)
    raise AssertionError("the person never came to roll")


def script_cube(monkeypatch: pytest.MonkeyPatch, doubles: Any = None,
                answer: str | None = None) -> None:  # fmt: skip
    """The engine's cube actions decided by the test: `doubles(game)` whether it doubles
    (when the rules let it), `answer` its answer to the person's doubles."""
    from doublet.games import opponent

    if doubles is not None:
        monkeypatch.setattr(opponent, "engine_doubles",
                            lambda g, ply=0, model=None: g.may_double() and doubles(g))  # fmt: skip
    if answer is not None:
        monkeypatch.setattr(opponent, "engine_answer", lambda g, ply=0, model=None: answer)


def test_money_session_roll_double_and_the_wrong_phases(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_cube(monkeypatch, doubles=lambda g: False, answer="take")
    st = new(client, cube=True, seed=4)
    gid = st["id"]
    assert st["kind"] == "money" and st["rules"] == {"cube": True, "jacoby": True, "beavers": False}
    assert st["describe"] == "money session of 1 game, cube, Jacoby" and st["match"] is None
    assert st["cube"]["value"] == 1 and st["cube"]["owner"] is None
    # The first roll comes without a double: the dice are rolled.
    assert st["game"]["phase"] == "move" and not st["cube"]["may_double"]
    for what, msg in [("roll", "the dice are rolled"), ("double", "the dice are rolled"),
                      ("take", "no double of Doublet's"), ("pass", "no double of Doublet's"),
                      ("beaver", "no double of Doublet's")]:  # fmt: skip
        r = act(client, gid, what)
        assert r.status_code == 409 and msg in r.json()["error"], (what, r.text)
    st = to_your_roll(client, gid)
    assert st["game"]["dice"] is None and st["cube"]["may_double"]
    assert st["game"]["to_act"] == "you" and st["cube"]["why_no_double"] == ""
    for what, body in (("play", {"steps": []}), ("take", {})):
        r = act(client, gid, what, **body)
        assert r.status_code == 409 and "roll (or double)" in r.json()["error"], r.text
    assert client.post(f"/api/games/{gid}/steps", json={"steps": []}).status_code == 409
    hint = client.get(f"/api/games/{gid}/hint").json()
    assert hint["kind"] == "cube" and "action" in hint["cube"] and hint["ply"] == 0
    st = act(client, gid, "roll").json()
    assert st["game"]["phase"] == "move" and len(st["game"]["dice"]) == 2
    assert act(client, gid, "roll").status_code == 409
    st = to_your_roll(client, gid)
    # The person doubles; the engine takes: the cube at 2 is the engine's, the person rolls.
    st = act(client, gid, "double").json()
    assert st["cube"] == {"value": 2, "owner": "engine", "offered_by": None, "may_double": False,
                          "why_no_double": "the opponent owns the cube",
                          "may_beaver": False, "dead_note": ""}  # fmt: skip
    assert [t["action"] for t in st["record"][-2:]] == ["double", "take"]
    assert st["record"][-2] == {"side": "you", "dice": None, "play": "", "again": False,
                                "action": "double", "cube": 2}  # fmt: skip
    assert st["last"][-1]["action"] == "take" and st["game"]["phase"] == "move"
    # Later the engine owns the cube: the person rolls at once, and may not double.
    st = play_on(client, gid)
    assert st["game"]["phase"] == "move" and not st["cube"]["may_double"]
    r = act(client, gid, "double")
    assert r.status_code == 409


def test_the_engine_doubles_the_person_takes_or_passes(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_cube(monkeypatch, doubles=lambda g: True)
    st = new(client, cube=True, seed=9)
    gid = st["id"]
    st = play_on(client, gid)  # the engine doubles at its first chance
    assert st["game"]["phase"] == "answer" and st["game"]["turn"] == "engine"
    assert st["game"]["to_act"] == "you" and st["cube"]["offered_by"] == "engine"
    assert st["last"][-1]["action"] == "double" and st["last"][-1]["cube"] == 2
    for what, msg in [("roll", "Doublet has doubled"), ("double", "Doublet has doubled"),
                      ("beaver", "beavers are allowed only")]:  # fmt: skip
        r = act(client, gid, what)
        assert r.status_code == 409 and msg in r.json()["error"], (what, r.text)
    r = act(client, gid, "play", play="24/18")
    assert r.status_code == 409 and "take or pass" in r.json()["error"]
    r = act(client, gid, "resign", points=1)  # a pass gives up the game here
    assert r.status_code == 409 and "take, or pass" in r.json()["error"]
    assert client.get(f"/api/games/{gid}/hint").json()["kind"] == "answer"
    # A restart keeps the double waiting.
    c2 = MoveClient(create_app(tmp_path, ply=0))
    assert c2.get(f"/api/games/{gid}").json() == st
    st = act(c2, gid, "take").json()
    assert st["cube"]["value"] == 2 and st["cube"]["owner"] == "you"
    assert [t["action"] for t in st["record"][-3:]] == ["double", "take", "play"]
    assert st["record"][-1]["side"] == "engine" and st["game"]["phase"] == "roll"
    assert st["cube"]["may_double"] and st["cube"]["owner"] == "you"
    # A redouble: the engine passes; the person wins the cube's value.
    script_cube(monkeypatch, answer="pass")
    st = act(c2, gid, "double").json()
    assert st["game"]["over"] and st["last"][-1]["action"] == "pass"
    assert st["game"]["result"] == {"winner": "you", "points": 1, "name": "single game",
                                    "resigned": False, "passed": True, "cube": 2, "value": 2,
                                    "text": "a single game (double passed): 2 points"}  # fmt: skip
    assert st["score"] == {"you": 2, "engine": 0} and st["series_over"]
    # The person passes the engine's double in another game.
    script_cube(monkeypatch, doubles=lambda g: True)
    gid = new(client, cube=True, seed=9)["id"]
    play_on(client, gid)
    st = act(client, gid, "pass").json()
    assert st["game"]["result"]["winner"] == "engine" and st["game"]["result"]["passed"]
    assert st["score"]["engine"] == 1 and st["record"][-1]["action"] == "pass"


def test_beavers(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    script_cube(monkeypatch, doubles=lambda g: g.cube == 1, answer="beaver")
    st = new(client, cube=True, beavers=True, jacoby=False, seed=9)
    gid = st["id"]
    assert st["rules"] == {"cube": True, "jacoby": False, "beavers": True}
    st = play_on(client, gid)
    assert st["game"]["phase"] == "answer" and st["cube"]["may_beaver"]
    st = act(client, gid, "beaver").json()
    assert st["cube"]["value"] == 4 and st["cube"]["owner"] == "you"
    assert [t["action"] for t in st["record"][-3:]] == ["double", "beaver", "play"]
    script_cube(monkeypatch, doubles=lambda g: False)
    gid = new(client, cube=True, beavers=True, seed=4)["id"]
    st = to_your_roll(client, gid)
    st = act(client, gid, "double").json()
    assert st["cube"]["value"] == 4 and st["cube"]["owner"] == "engine"
    assert st["last"][-1]["action"] == "beaver" and st["game"]["phase"] == "move"
    # In a match there are no beavers, whatever the request says.
    r = client.post("/api/games", json={"length": 5, "beavers": True})
    assert r.status_code == 400 and "money play" in r.json()["error"]
    # A beaver past the highest cube is refused as a double the cube does not allow (409;
    # it was 400, a review found)
    script_cube(monkeypatch, doubles=lambda g: True)
    state = {"beavers": True, "jacoby": False, "cube": {"value": 16384, "owner": "opponent"}}
    st = new(client, position="4HPwATDgc/ABMA", state=state, dice=[3, 1])
    st = play_on(client, st["id"])
    assert st["game"]["phase"] == "answer" and not st["cube"]["may_beaver"], st["game"]
    r = act(client, st["id"], "beaver")
    assert r.status_code == 409 and "past its highest (32768)" in r.json()["error"], r.text


def test_a_match_to_3_with_the_crawford_game(client: TestClient,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The person doubles, the engine takes; the engine redoubles, the person passes (0-2:
    the engine is 1-away); the Crawford game has no cube; a resignation ends the match."""
    script_cube(monkeypatch, doubles=lambda g: g.owner == 1, answer="take")
    st = new(client, length=3, seed=12)
    gid = st["id"]
    assert st["kind"] == "match" and st["describe"] == "3-point match"
    assert st["match"] == {"length": 3, "crawford": False, "stage": "",
                           "away": {"you": 3, "engine": 3}}  # fmt: skip
    assert st["rules"] == {"cube": True, "jacoby": False, "beavers": False}
    to_your_roll(client, gid)
    st = act(client, gid, "double").json()
    assert st["cube"]["owner"] == "engine" and st["cube"]["value"] == 2
    for _ in range(30):
        if st["game"]["phase"] == "answer":
            break
        st = play_on(client, gid)
    assert st["cube"]["offered_by"] == "engine" and st["last"][-1]["cube"] == 4
    st = act(client, gid, "pass").json()
    assert st["game"]["result"]["value"] == 2 and st["score"] == {"you": 0, "engine": 2}
    assert not st["series_over"] and st["winner"] is None
    st = act(client, gid, "next").json()
    assert st["match"] == {"length": 3, "crawford": True, "stage": "Crawford game",
                           "away": {"you": 3, "engine": 1}}  # fmt: skip
    assert st["game"]["number"] == 2 and st["game"]["phase"] == "move"
    st = play_on(client, gid)
    assert st["game"]["phase"] == "move" and not st["cube"]["may_double"]  # no cube: rolled
    assert st["cube"]["why_no_double"] == "the Crawford game: nobody may double"
    r = act(client, gid, "double")
    assert r.status_code == 409
    st = act(client, gid, "resign", points=1).json()
    assert st["resignation"]["accepted"] and st["series_over"] and st["winner"] == "engine"
    assert st["score"] == {"you": 0, "engine": 3} and len(st["results"]) == 2
    assert act(client, gid, "next").status_code == 409
    # The .mat file of the match, read back by the .mat reader.
    from doublet.formats.matfile import read_match

    r = client.get(f"/api/games/{gid}/mat")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert r.headers["content-disposition"].startswith('attachment; filename="doublet-')
    text = r.text
    assert " 3 point match" in text and "Doubles => 2" in text and "Takes" in text
    assert "Doubles => 4" in text and "Drops" in text and "Wins 2 points" in text
    match, games = read_match(text)
    assert match.length == 3 and len(games) == 2 and games[1].crawford
    assert client.get(f"/api/games/{gid}/export").text.count("; Doublet standard game") == 2


RESIGN_ID = "WwUAAODn4ANAAA"  # the person on the bar against a 5-point board, Doublet bearing
# off with 8 checkers off, 7 left (no gammon for the person to save cheaply):
#  13 14 15 16 17 18 |   |19 20 21 22 23 24
# | X  .  .  .  .  . |   | .  O  O  O  O  O |
# | X                |   |             O  O |
# | X  ...                 (X: 13 x5, 8 x3, 6 x6, bar 1)
#  12 11 10  9  8  7 |   | 6  5  4  3  2  1


def test_a_resignation_the_engine_refuses(client: TestClient, tmp_path: Path) -> None:
    st = new(client, position=RESIGN_ID, state={"jacoby": False})
    gid, move = st["id"], st["move"]
    assert st["board"]["bar"]["you"] == 1 and st["board"]["off"]["engine"] == 8
    assert st["game"]["phase"] == "roll" and st["kind"] == "money"
    saved = (tmp_path / f"{gid}.json").read_bytes()
    r = act(client, gid, "resign", points=1)
    assert r.status_code == 200, r.text
    st = r.json()
    v = st["resignation"]
    assert not v["accepted"] and v["would_accept"] == 2 and v["playing_on"] > v["offered"] == 1
    assert v["message"].startswith("Doublet plays on: your single game gives it +1.000 points")
    assert "it would accept a gammon" in v["message"]
    assert not st["game"]["over"] and st["move"] == move and st["record"] == []
    assert json.loads((tmp_path / f"{gid}.json").read_bytes()) == json.loads(saved)
    st = act(client, gid, "resign", points=2).json()
    assert st["resignation"]["accepted"] and st["game"]["over"]
    assert st["game"]["result"]["resigned"] and st["game"]["result"]["value"] == 2
    assert st["score"] == {"you": 0, "engine": 2}
    r = act(client, gid, "resign", points=1)
    assert r.status_code == 409 and "over" in r.json()["error"]


def test_a_game_from_a_position(client: TestClient) -> None:
    # An XGID: a 5-point match at 0-0, the cube at 2 owned by the side on roll, 3-1 rolled.
    xgid = "XGID=-b----E-C---eE---c-e----B-:1:1:1:31:0:0:0:5:10"
    st = new(client, position=xgid)
    assert st["board"]["points"][6] == 5 and st["board"]["points"][24] == 2
    assert st["game"]["phase"] == "move" and st["game"]["dice"] == [3, 1]
    assert st["cube"]["value"] == 2 and st["cube"]["owner"] == "you"
    assert st["match"]["length"] == 5 and st["score"] == {"you": 0, "engine": 0}
    st = play_on(client, st["id"])
    assert st["record"][0]["side"] == "you" and st["record"][0]["dice"] == [3, 1]
    # Its review starts from the position's cube (2, the person's), not from 1 centred;
    # a .mat file cannot hold a game that began at a position: 409, the text record instead.
    st = act(client, st["id"], "resign", points=3).json()
    assert st["game"]["over"], st
    doc = client.get(f"/api/games/{st['id']}/review?ply=0").json()
    assert doc["turns"][0]["cube_before"]["value"] == 2
    assert doc["turns"][0]["cube_before"]["owner"] in ("you", 0)
    r = client.get(f"/api/games/{st['id']}/mat")
    assert r.status_code == 409 and "began at a position" in r.json()["error"]
    assert client.get(f"/api/games/{st['id']}/export").status_code == 200
    # A gnubg ID with its Match ID: money, cube centred, nothing rolled (the person may double).
    st = new(client, position="4HPwATDgc/ABMA:cAkAAAAAAAAA")
    assert st["kind"] == "money" and st["game"]["phase"] == "roll" and st["cube"]["may_double"]
    # The request's state overrides the ID's: a 7-point match, 5-6 (the Crawford game) ...
    state = {"match": {"length": 7, "score": [5, 6], "crawford": True}}
    st = new(client, position="4HPwATDgc/ABMA", state=state, dice=[6, 5])
    assert st["match"] == {"length": 7, "crawford": True, "stage": "Crawford game",
                           "away": {"you": 2, "engine": 1}}  # fmt: skip
    assert st["game"]["dice"] == [6, 5] and st["score"] == {"you": 5, "engine": 6}
    st = new(
        client,
        position="4HPwATDgc/ABMA",
        state={"match": {"length": 7, "score": [0, 0]}},
        dice=[6, 5],
    )  # given dice: no "nobody doubles before a game's first roll"
    assert st["cube"]["why_no_double"] == "the dice are rolled: a double comes before the roll"
    # A 1-point match has no Crawford game, so none after it
    st = new(client, position="4HPwATDgc/ABMA", state={"match": {"length": 1, "away": [1, 1]}})
    assert st["match"]["stage"] == "" and not st["cube"]["may_double"]
    # ... and post-Crawford.
    state = {"match": {"length": 7, "away": [2, 1], "crawford": False}}
    st = new(client, position="4HPwATDgc/ABMA", state=state)
    assert st["match"]["stage"] == "post-Crawford" and st["cube"]["may_double"]
    for body, msg in [
        ({"position": "nonsense"}, "not a position"),
        ({"position": 12}, "'position'"),
        ({"position": "4HPwATDgc/ABMA", "dice": [7, 1]}, "'dice'"),
        ({"position": "4HPwATDgc/ABMA", "state": {"cube": {"value": 3}}}, "power of 2"),
        ({"position": "4HPwATDgc/ABMA", "state": []}, "'state'"),
        ({"position": "AAAAAAAAAAAAAA"}, ""),  # no checkers: not a position in play
    ]:
        r = client.post("/api/games", json={"ply": 0, **body})
        assert r.status_code == 400 and msg in r.json()["error"], (body, r.text)


def test_new_game_options_are_checked(client: TestClient) -> None:
    for body, msg in [
        ({"length": 26}, "'length' must be"),
        ({"length": "3"}, "'length' must be"),
        ({"cube": "yes"}, "'cube' must be true or false"),
        ({"length": 3, "jacoby": True}, "money play"),
        ({"cube": False, "beavers": True}, "money play"),
        ({"lenght": 5}, "a new game takes no 'lenght'"),  # a typo is not ignored
        ({"lenght": 5}, "its keys are beavers, cube, games, jacoby, length, ply, position,"),
        ({"dice": [3, 1]}, "'dice' go with 'position' (a new game at a position)"),
        ({"dice": [3, 1], "state": {}}, "'dice' and 'state' go with 'position'"),
        ({"position": "4HPwATDgc/ABMA", "length": 5}, "at a position takes no 'length'"),
        ({"position": "4HPwATDgc/ABMA", "state": {"jacobi": True}}, "'state' takes no 'jacobi'"),
    ]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and msg in r.json()["error"], (body, r.text)
    st = new(client)  # no cube asked for in money play: the games are cubeless, as before
    assert st["kind"] == "series" and not st["rules"]["cube"]


def test_the_engines_plays_are_in_the_persons_numbering(client: TestClient, tmp_path: Path) -> None:
    from doublet.formats.notation import other_side

    gid = new(client, cube=True, seed=21)["id"]
    for _ in range(3):
        st = play_on(client, gid)
        if st["game"]["phase"] == "roll":
            st = act(client, gid, "roll").json()
    saved = json.loads((tmp_path / f"{gid}.json").read_text())["game"]["record"]
    for shown, raw in zip(st["record"], saved, strict=True):
        mover = shown["side"] == "you"
        assert shown["play"] == (raw["play"] if mover else other_side(raw["play"]))
    last = st["last_play"]["engine"]
    assert last["play"] == st["last"][-1]["play"] if st["last"] else True
    # The marks of the engine's last play: its moves, in the person's numbering.
    parts = last["play"].replace("*", "").split()
    assert last["moves"] and all(isinstance(m["to"], int) or m["to"] == "off"
                                 for m in last["moves"])  # fmt: skip
    assert str(last["moves"][0]["from"]) in " ".join(parts) or last["moves"][0]["from"] == "bar"
    mine = st["last_play"]["you"]
    assert mine["play"] == next(t["play"] for t in reversed(st["record"])
                                if t["side"] == "you" and t["action"] == "play")  # fmt: skip


def test_review_of_a_finished_game(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    script_cube(monkeypatch, doubles=lambda g: False, answer="take")
    st = new(client, length=3, seed=12)
    gid = st["id"]
    r = client.get(f"/api/games/{gid}/review")
    assert r.status_code == 409 and "finished" in r.json()["error"]
    to_your_roll(client, gid)
    act(client, gid, "double")
    play_on(client, gid)
    st = act(client, gid, "resign", points=1).json()
    assert st["game"]["over"], st.get("resignation")
    r = client.get(f"/api/games/{gid}/review?ply=0")
    assert r.status_code == 200, r.text
    doc = r.json()
    assert len(doc["turns"]) == len(st["record"]) and len(doc["totals"]) == 2
    assert doc["final"]["result"]["resigned"] and doc["game"]["number"] == 1
    for e, t in zip(doc["turns"], st["record"], strict=True):
        assert e["who"] == t["side"] and e["kind"] == t["action"]
        assert set(e["board"]) == {"points", "bar", "off", "unentered", "pips"}
        if e["kind"] == "play":
            assert e["play"] == t["play"]  # the person's numbering, as in the state
            assert e["verdict"] in ("", "doubtful", "bad", "very bad")
    kinds = [e["kind"] for e in doc["turns"]]
    assert "double" in kinds and "take" in kinds
    take = doc["turns"][kinds.index("take")]
    assert take["cube_before"] == {"value": 1, "owner": None, "offered": True}
    assert doc["turns"][0]["board"]["points"][24] == 2  # the start, the person's view
    assert client.get(f"/api/games/{gid}/review?game=1&ply=0").json() == doc
    for query, status in [("game=2", 400), ("game=x", 400), ("ply=9", 400), ("ply=x", 400)]:
        r = client.get(f"/api/games/{gid}/review?{query}")
        assert r.status_code == status and r.json()["error"], (query, r.text)


def test_analyse(client: TestClient) -> None:
    xgid = "XGID=-b----E-C---eE---c-e----B-:1:1:1:31:0:0:0:5:10"
    r = client.post("/api/page/analysis", json={"position": xgid, "ply": 0})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["dice"] == [3, 1] and doc["roll"]["plays"][0]["rank"] == 1
    assert doc["roll"]["count"] == 16 and doc["roll"]["equity"] == "cubeful"
    assert doc["cube"]["state"]["match"]["length"] == 5 and "action" in doc["cube"]
    assert doc["state_text"].startswith("5-point match") and doc["board"]["points"][6] == 5
    doc = client.post("/api/page/analysis", json={"position": "4HPwATDgc/ABMA", "ply": 0}).json()
    assert doc["roll"] is None and doc["cube"]["action"] and doc["position_id"] == "4HPwATDgc/ABMA"
    state = {"cube": {"value": 2, "owner": "mover"}, "match": {"length": 5, "score": [2, 3]}}
    doc = client.post("/api/page/analysis", json={"position": "4HPwATDgc/ABMA", "ply": 0,
                                            "dice": [6, 5], "state": state}).json()  # fmt: skip
    assert doc["state"]["match"]["away"] == [3, 2] and doc["roll"]["plays"][0]["play"] == "24/13"
    for body, msg in [
        ({}, "'position'"),
        ({"position": "nonsense"}, "not a position"),
        ({"position": "4HPwATDgc/ABMA", "dice": "31"}, "'dice'"),
        ({"position": "4HPwATDgc/ABMA", "ply": 7}, "'ply'"),
        ({"position": "4HPwATDgc/ABMA", "state": {"match": {"length": 5}}}, "away"),
    ]:
        r = client.post("/api/page/analysis", json=body)
        assert r.status_code == 400 and msg in r.json()["error"], (body, r.text)
    r = client.post("/api/page/analysis", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415


def test_acey_deucey_has_no_mat_file(client: TestClient) -> None:
    gid = new(client, variant="acey-deucey", cube=True)["id"]
    r = client.get(f"/api/games/{gid}/mat")
    assert r.status_code == 409 and "/export" in r.json()["error"]
    assert client.get(f"/api/games/{gid}/export").text.startswith("; Doublet acey-deucey game 1")


def test_pages_and_the_favicon(client: TestClient) -> None:
    for path, kind in [("/", "text/html"), ("/review", "text/html"), ("/analysis", "text/html"),
                       ("/favicon.ico", "image/svg+xml"), ("/static/favicon.svg", "image/svg+xml"),
                       ("/static/board.js", "javascript")]:  # fmt: skip
        r = client.get(path)
        assert r.status_code == 200 and kind in r.headers["content-type"], path
    assert 'rel="icon"' in client.get("/").text


def test_a_match_file_is_imported_for_review(client: TestClient) -> None:
    text = (ROOT / "tests" / "data" / "matches" / "match01.mat").read_text()
    r = client.post("/api/import", json={"text": text, "name": "match01.mat"})
    assert r.status_code == 201, r.text
    st = r.json()
    assert st["names"] == ["gnubg", "root"] and st["match"]["length"] == 5
    assert len(st["results"]) == 5 and st["series_over"]
    gid = st["id"]
    assert client.get(f"/api/games/{gid}").json()["results"] == st["results"]  # stored
    mat = client.get(f"/api/games/{gid}/mat").text  # the file's players, not You / Doublet
    assert '[Player 1 "gnubg"]' in mat and '[Player 2 "root"]' in mat
    assert "gnubg" in client.get(f"/api/games/{gid}/export").text
    r = client.post("/api/import", json={"text": text, "nmae": "x"})
    assert r.status_code == 400 and "an import takes no 'nmae'" in r.json()["error"]
    going = text[: text.index(" Game 5")] + " Game 5\n gnubg : 4                      root : 2\n"
    r = client.post("/api/import", json={"text": going})  # a match still being played
    assert r.status_code == 201, r.text
    doc = client.get(f"/api/games/{gid}/review?game=2&ply=0").json()
    r = client.get(f"/api/games/{gid}/review?gmae=2")  # a typo reviewed the latest game
    assert r.status_code == 400 and "takes no 'gmae'" in r.json()["error"]
    assert doc["game"]["number"] == 2 and doc["turns"] and len(doc["totals"]) == 2
    sgf = (ROOT / "tests" / "data" / "matches" / "match01.sgf").read_text()
    again = client.post("/api/import", json={"text": sgf}).json()
    assert again["results"] == st["results"] and again["score"] == st["score"]
    bad = text.replace("8/5 6/5", "8/4 6/5", 1)
    for body, words in [({"text": bad}, "game 1, move 1"), ({"text": ""}, "'text'"),
                        ({"text": "hello"}, ""), ({}, "'text'")]:  # fmt: skip
        r = client.post("/api/import", json=body)
        assert r.status_code == 400 and words in r.json()["error"], r.text
    big = {"text": "x" * (2 * 1024 * 1024)}
    assert client.post("/api/import", json=big).status_code == 413


def test_an_imported_match_file_is_a_record_never_played_on(client: TestClient) -> None:
    """A file that ends with the file's player 1 to move: opening it made the engine
    play a roll and a move of its own for that player, saved into the record (a review)."""
    text = (ROOT / "tests" / "data" / "matches" / "match01.mat").read_text()
    cut = text.index("62: 13/11 24/18", text.index(" Game 5"))
    st = client.post("/api/import", json={"text": text[:cut] + "\n"}).json()
    gid, record = st["id"], st["record"]
    assert st["game"]["to_act"] == "engine" and record  # the file's player 1 is to roll
    for _ in range(2):
        again = client.get(f"/api/games/{gid}").json()
        assert again["record"] == record and again["move"] == st["move"]
    assert client.get(f"/api/games/{gid}/mat").text.rstrip().endswith("8/4 6/4")
    for path in ("roll", "double", "resign", "next"):
        r = client.post(f"/api/games/{gid}/{path}", json={"move": again["move"]})
        assert r.status_code == 409 and "imported for its review" in r.json()["error"], path
    assert client.get(f"/api/games/{gid}/review?game=4&ply=0").status_code == 200


def test_an_imported_match_file_may_start_with_a_byte_order_mark(client: TestClient) -> None:
    """A file saved by a Windows editor starts with U+FEFF; an .sgf with it was taken for
    a .mat and refused."""
    for name in ("match01.mat", "match01.sgf"):
        text = "\ufeff" + (ROOT / "tests" / "data" / "matches" / name).read_text()
        r = client.post("/api/import", json={"text": text})
        assert r.status_code == 201, r.text
        assert len(r.json()["results"]) == 5


def test_an_imported_match_file_with_no_game_is_refused(client: TestClient) -> None:
    r = client.post("/api/import", json={"text": '; [Player 1 "a"]\n\n 5 point match\n'})
    assert r.status_code == 400 and "no game in the file" in r.json()["error"], r.text


def test_the_analyze_spelling_and_the_keys_http_takes(client: TestClient) -> None:
    """POST /api/analyze is /api/analyse (the protocol takes "analyze" as its cmd); an
    unknown key's error lists the keys HTTP takes, not "cmd" or "model" (session 23)."""
    body = {"position": "4HPwATDgc/ABMA", "dice": [3, 1], "ply": 0}
    a, b = client.post("/api/analyze", json=body), client.post("/api/analyse", json=body)
    assert a.status_code == b.status_code == 200 and a.json() == b.json()
    r = client.post("/api/best", json={**body, "plies": 1})
    assert r.status_code == 400
    keys = r.json()["error"].split("its keys are ")[1].split(", ")
    assert "dice" in keys and "cmd" not in keys and "model" not in keys


def test_a_failed_save_undoes_the_change_and_a_damaged_one_is_a_503(tmp_path: Path) -> None:
    """A save that fails (the data folder gone, a full disk) answers 503 and undoes the
    change in memory as well: what is on disk stays the game, and the same request
    succeeds once the server can save again. A saved file damaged on disk is a 503 too,
    not the 500 of a bug."""
    data = tmp_path / "d"
    c = MoveClient(create_app(data, ply=0))
    st = new(c)
    gid, move = st["id"], st["move"]
    steps = first_play_steps(c, gid)
    data.rename(tmp_path / "away")
    data.write_text("")  # a file where the folder was: nothing can be saved
    r = c.post(f"/api/games/{gid}/play", json={"steps": steps, "move": move})
    assert r.status_code == 503 and "cannot be saved" in r.json()["error"], r.text
    data.unlink()
    (tmp_path / "away").rename(data)
    again = c.get(f"/api/games/{gid}").json()
    assert again["move"] == move and again["record"] == []  # the play was not applied
    r = c.post(f"/api/games/{gid}/play", json={"steps": steps, "move": move})
    assert r.status_code == 200, r.text
    saved = json.loads((data / f"{gid}.json").read_text())
    assert saved["game"]["record"]  # applied and saved this time
    (data / f"{gid}.json").write_text('{"format": "doublet-game", "vers')  # cut short
    r = TestClient(create_app(data, ply=0)).get(f"/api/games/{gid}")  # not in memory
    assert r.status_code == 503 and "cannot be read" in r.json()["error"]


def test_a_play_is_its_text_or_its_steps_and_steps_take_no_other_keys(client: TestClient) -> None:
    """A body with both a play's text and its steps is refused (they may disagree), and
    so is a step with a key it does not take, or a 'hit' that is not true or false."""
    gid = new(client)["id"]
    steps = first_play_steps(client, gid)
    for body, msg in [
        ({"steps": steps, "play": "24/14"}, "not both"),
        ({"steps": [{**steps[0], "x": 1}]}, "a step takes no 'x'"),
        ({"steps": [{**steps[0], "hit": "yes"}]}, "'hit' is true or false"),
    ]:
        r = client.post(f"/api/games/{gid}/play", json=body)
        assert r.status_code == 400 and msg in r.json()["error"], (body, r.text)
    assert client.get(f"/api/games/{gid}").json()["record"] == []
    r = client.post(f"/api/games/{gid}/play", json={"steps": [{**s, "hit": False} for s in steps]})
    assert r.status_code == 200, r.text  # the page sends the steps as given, "hit" too


def test_a_chunked_body_over_the_limit_is_refused(tmp_path: Path) -> None:
    """A body sent in chunks (no Content-Length) is counted as it comes: the server stops
    reading soon after 64 KiB and answers 413, not after reading it all (a 300 MB body
    took 600 MB of memory). The app is called as the ASGI server calls it, with a body
    of 4 MiB in 4 KiB chunks, counting the chunks it asks for."""
    import asyncio

    app = create_app(tmp_path, ply=0)
    asked = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return {"type": "http.request", "body": b" " * 4096, "more_body": asked < 1024}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/api/games",
             "raw_path": b"/api/games", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}  # fmt: skip
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert start["status"] == 413
    assert asked <= 64 * 1024 // 4096 + 1  # 17 chunks, not 1,024


def test_no_double_is_offered_with_a_dead_cube(client: TestClient) -> None:
    """The person 3-away with the cube at 8 (theirs), or in a 1-point match: winning the
    game already wins the match, so no double is offered (the dice are rolled at once),
    and one is refused (409)."""
    state = {"cube": {"value": 8, "owner": "mover"}, "match": {"length": 3, "score": [0, 0]}}
    st = new(client, position="4HPwATDgc/ABMA", state=state)
    assert st["game"]["phase"] == "move" and st["game"]["dice"]  # no double: rolled at once
    assert not st["cube"]["may_double"] and "dead" in st["cube"]["why_no_double"]
    assert st["cube"]["dead_note"] == DEAD_CUBE_NOTE  # the page says why
    st = play_on(client, new(client, length=1, cube=True)["id"])  # the person's second turn
    assert st["game"]["phase"] == "move" and st["game"]["turn"] == "you"  # rolled at once
    assert not st["cube"]["may_double"] and "dead" in st["cube"]["why_no_double"]
    assert st["cube"]["dead_note"] == DEAD_CUBE_NOTE
    # a live cube has no note: 3-away with the cube at 1, and money play
    state = {"cube": {"value": 1, "owner": "centered"}, "match": {"length": 3, "score": [0, 0]}}
    assert new(client, position="4HPwATDgc/ABMA", state=state)["cube"]["dead_note"] == ""
    assert new(client, cube=True)["cube"]["dead_note"] == ""
    r = client.post(f"/api/games/{st['id']}/double", json={})
    assert r.status_code == 409 and "the cube is dead" in r.json()["error"], r.text


def test_serve_refuses_a_second_server_on_its_data_and_a_taken_port(tmp_path: Path) -> None:
    """`doublet serve` holds its data folder: a second server on it is refused (they would
    overwrite each other's games); a port in use is said as a doublet error before any
    "serving on"; temporary files a killed server left are removed at the start."""
    import os
    import re
    import signal

    data = tmp_path / "d"
    data.mkdir()
    left = data / "x.json.abc123.tmp"
    left.write_text("half")
    cmd = [sys.executable, "-m", "doublet", "serve", "--ply", "0", "--port", "0"]
    first = subprocess.Popen([*cmd, "--data", str(data)], cwd=ROOT, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert first.stderr is not None
        line = first.stderr.readline()
        m = re.search(r"serving on http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        assert not left.exists()
        second = subprocess.run([*cmd, "--data", str(data)], cwd=ROOT, capture_output=True,
                                text=True, timeout=120)  # fmt: skip
        assert second.returncode == 2 and "another doublet serve" in second.stderr
        taken = [sys.executable, "-m", "doublet", "serve", "--port", m[1], "--data",
                 str(tmp_path / "e")]  # fmt: skip
        third = subprocess.run(taken, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert third.returncode == 2, third.stderr
        assert f"cannot listen on 127.0.0.1:{m[1]}" in third.stderr
        assert "serving on" not in third.stderr and "Traceback" not in third.stderr
    finally:
        os.kill(first.pid, signal.SIGINT)
        first.wait(timeout=60)


def test_an_acey_deucey_game_from_a_json_board_ends_with_its_winning_chain(
        client: TestClient) -> None:  # fmt: skip
    """A JSON board object (the only way to write unentered checkers) starts a game as the
    same board as text does (a review: 400 'a gnubg ID ... or an XGID'); and a 1-2 whose
    doublet bears off the last checkers ends the game (it was refused, flagged as
    rolling again, and a game in which the engine rolled it was stuck)."""
    zeros = [0] * 26
    mover, opponent = list(zeros), list(zeros)
    mover[11], mover[4] = 1, 2  # 12 off
    opponent[6] = 15
    board = {"variant": "acey-deucey", "mover": mover, "opponent": opponent}
    r = client.post("/api/games", json={"ply": 0, "seed": 7, "position": board, "dice": [1, 2]})
    assert r.status_code == 201, r.text  # the board's own variant (a diff review)
    assert r.json()["variant"] == "acey-deucey"
    st = new(client, variant="acey-deucey", position=board, dice=[1, 2])
    assert st["game"]["phase"] == "move" and st["game"]["dice"] == [1, 2]
    r = act(client, st["id"], "play", play="11/8 then 4-4: 8/off 4/off(2)")
    assert r.status_code == 200, r.text
    assert r.json()["game"]["over"], r.json()["game"]
    r = client.post("/api/games", json={"variant": "acey-deucey", "ply": 0, "seed": 7,
                                        "position": 3, "dice": [1, 2]})  # fmt: skip
    assert r.status_code == 400 and "JSON board" in r.json()["error"]


def test_the_version_does_not_wait_for_a_search_and_a_405_says_what_is_allowed(
    client: TestClient,
) -> None:
    """(a review) /api/version and /api/openapi.json waited behind a 10-s search (the
    engine's lock); a 405 carried no Allow header; a UTF-16 body was read as JSON."""
    import threading

    import doublet.apps.serve as serve

    got: list[int] = []
    with serve._ENGINE:  # a search running
        for path in ("/api/version", "/api/openapi.json"):
            t = threading.Thread(target=lambda p=path: got.append(client.get(p).status_code))
            t.start()
            t.join(20)
            assert not t.is_alive(), path
    assert got == [200, 200]
    r = client.get("/api/best")
    assert r.status_code == 405 and "POST" in r.headers.get("allow", ""), r.headers
    body = json.dumps({"id": 1, "position": "4HPwATDgc/ABMA", "dice": [3, 1]})
    r = client.post("/api/best", content=body.encode("utf-16-le"),
                    headers={"Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 400 and "not JSON" in r.json()["error"], r.text  # (was a 200)
