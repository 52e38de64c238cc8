"""The browser game in a real headless browser: Debian's chromium driven by Playwright.

What this module checks:

- `New game` from the page's form starts a game and draws the board and the dice.
- A whole standard game, engine at 0 ply with a fixed seed, played to its end by clicks
  on the board: for each turn the test asks the API for a legal play's steps (the hint's
  best play) and clicks each checker's point, then its destination, then Done (Done
  alone when there is no legal play); highlights mark the legal sources and destinations.
  The result is shown on the page and matches the server's.
- Hint shows the ranked plays with their chances; Undo takes back a step; a step can
  also be made by dragging a checker.
- Acey-Deucey: entering from the unentered tray, the 1-2 chain's doublet buttons, and the
  roll again after four moves of the doublet.
- A match to 3 points from the New game dialog (the engine's cube actions scripted by
  monkeypatching doublet.games.opponent in this process): the person's double taken,
  Doublet's redouble passed, the cube drawn on its owner's side, the score, the Crawford
  game without the cube, the match won by a resignation, the .mat download. New game in
  the middle of the match asks before replacing it.
- A resignation the engine refuses (the reason shown, the game going on), then one it
  accepts.
- The review page: stepping through a finished game (buttons, arrow keys, the list),
  the board and the last move's marks, the verdicts and proper cube actions, the totals.
- The analysis page: an XGID's cube decision and ranked plays, fields overriding the
  ID, a bad position's message, and a game started from the position.
- Stacks of five on opposite points do not overlap; a taller stack shows its count.
- At 390 and 1280 px wide nothing overflows the screen and the point numbers are at
  least 10 px tall. Screenshots are taken and checked to be PNGs; with
  DOUBLET_SCREENSHOTS=DIR they are written there: the README's pictures come from
  `DOUBLET_SCREENSHOTS=docs python -m pytest -q tests/test_browser.py` (screenshot.png,
  screenshot-390.png, review.png). A plain test run writes nothing into the repository.

The server runs in this process (uvicorn on a free localhost port). Skipped only when
/usr/bin/chromium is missing (`apt-get install -y chromium`).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")
HTTP = httpx.Client(timeout=60)  # a loaded machine can take seconds to answer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import uvicorn

    from doublet.apps.serve import create_app

    app = create_app(tmp_path_factory.mktemp("games"), ply=0)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 760})
        pg.set_default_timeout(60_000)
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        yield pg
        browser.close()
        assert not errors, errors


def idle(page: Any) -> None:
    """The page is done: no request running and no dialog waiting for its answer."""
    page.wait_for_selector("body:not(.busy):not(.asking)", state="attached")


def point(page: Any, where: Any) -> Any:
    return page.locator(f'g.point[data-point="{where}"]')


def test_new_game_from_the_form(server: str, page: Any) -> None:
    page.goto(server + "/")
    page.click("#new-game")
    page.check('input[name="kind"][value="series"]')
    assert page.is_hidden("#jacoby")  # money-only options
    page.select_option("#variant", "acey-deucey")
    page.select_option("#ply", "0")
    page.click("#start")
    page.wait_for_selector("#dice[data-dice]:not([data-dice=''])")
    idle(page)
    assert page.locator('g.point[data-point="in"]').count() == 1  # unentered checkers
    assert "acey-deucey" in page.inner_text("#score")
    gid = page.evaluate("location.hash").lstrip("#")
    st = HTTP.get(f"{server}/api/games/{gid}").json()
    assert st["variant"] == "acey-deucey"
    # Acey-Deucey's opening: the engine may have moved first; the person is on roll now.
    assert st["game"]["turn"] == "you"
    assert page.get_attribute("#dice", "data-dice") == "-".join(map(str, st["game"]["dice"]))


def click_steps(page: Any, steps: list[dict[str, Any]]) -> None:
    for s in steps:
        if "doublet" in s:
            page.click(f'#doublets button[data-doublet="{s["doublet"]}"]')
        else:
            src = point(page, s["from"])
            assert "source" in (src.get_attribute("class") or "")
            if "selected" not in (src.get_attribute("class") or ""):
                src.click()
            dst = point(page, s["to"])
            assert "dest" in (dst.get_attribute("class") or ""), s
            dst.click()
        idle(page)


def drag_step(page: Any, s: dict[str, Any]) -> None:
    """One step by dragging the checker from its point to its destination."""

    def centre(where: Any) -> tuple[float, float]:
        box = point(page, where).bounding_box()
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    page.mouse.move(*centre(s["from"]))
    page.mouse.down()
    page.mouse.move(*centre(s["to"]), steps=5)
    page.mouse.up()
    idle(page)


def test_a_whole_game_by_clicks(server: str, page: Any) -> None:
    r = HTTP.post(f"{server}/api/games", json={"variant": "standard", "ply": 0, "seed": 2024})
    gid = r.json()["id"]
    page.goto(f"{server}/#{gid}")
    page.wait_for_selector("#board .checker")
    idle(page)
    turns = 0
    shot = False
    for _ in range(300):
        st = HTTP.get(f"{server}/api/games/{gid}").json()
        if st["game"]["over"]:
            break
        assert st["game"]["turn"] == "you"
        assert page.get_attribute("#dice", "data-dice") == "-".join(map(str, st["game"]["dice"]))
        if not st["game"]["no_play"]:
            steps = HTTP.get(f"{server}/api/games/{gid}/hint").json()["plays"][0]["steps"]
            if turns == 2:  # Undo takes back a step, and the same step can be made again
                click_steps(page, steps[:1])
                page.click("#undo")
                idle(page)
                assert page.is_disabled("#undo")
            if turns == 4:  # the first step by dragging
                drag_step(page, steps[0])
                made = {k: steps[0][k] for k in ("from", "to", "die")}
                assert page.evaluate("S.steps") == [made], "the drag made no step"
                steps = steps[1:]
            if turns == 8 and not shot and len(steps) >= 2:
                page.click("#hint")
                page.wait_for_selector('#hints tr[data-rank="1"]')
                click_steps(page, steps[:1])
                point(page, steps[1]["from"]).click()  # a checker chosen: its destinations
                idle(page)
                assert page.locator("g.point.dest").count() >= 1
                png = page.screenshot()
                assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
                shot = True
                steps = steps[1:]
            click_steps(page, steps)
        assert page.is_enabled("#done")
        page.click("#done")
        idle(page)
        turns += 1
    st = HTTP.get(f"{server}/api/games/{gid}").json()
    assert st["game"]["over"] and shot, f"not over after {turns} turns"
    result = st["game"]["result"]
    shown = page.inner_text("#result")
    assert ("You win" if result["winner"] == "you" else "Doublet wins") in shown
    assert result["name"] in shown and "The series is over" in shown
    assert page.is_disabled("#done") and page.is_hidden("#next-game")
    score = st["score"]["you"], st["score"]["engine"]
    assert f"You {score[0]} · Doublet {score[1]}" in page.inner_text("#score")
    assert turns >= 10


def test_acey_deucey_chain_by_clicks(server: str, page: Any) -> None:
    from doublet.games.game import roll

    seed = next(s for s in range(1000) if sorted(roll(s, 0, 0)) == [1, 2])
    body = {"variant": "acey-deucey", "ply": 0, "seed": seed, "starter": "you"}
    gid = HTTP.post(f"{server}/api/games", json=body).json()["id"]
    page.goto(f"{server}/#{gid}")
    page.wait_for_selector('g.point.source[data-point="in"]')
    idle(page)
    steps = [{"from": "in", "to": 23, "die": 2}, {"from": "in", "to": 24, "die": 1}]
    click_steps(page, steps)
    assert page.locator("#doublets button").count() == 6
    assert "Choose the doublet" in page.inner_text("#status")
    click_steps(page, [{"doublet": 5}, *[{"from": "in", "to": 20, "die": 5}] * 4])
    assert "then you roll again" in page.inner_text("#status")
    page.click("#done")
    idle(page)
    st = HTTP.get(f"{server}/api/games/{gid}").json()
    assert (
        st["record"][-1]["play"] == "in/24 in/23 then 5-5: in/20(4)" and st["record"][-1]["again"]
    )
    assert (
        st["game"]["turn"] == "you"
        and page.locator('g.point[data-point="20"] .checker').count() == 4
    )
    assert page.get_attribute("#dice", "data-dice") == "-".join(map(str, roll(seed, 0, 1)))


# ---------------------------------------------------------------------------------------
# The cube, matches, resignations, the review and the analysis pages
# ---------------------------------------------------------------------------------------


def open_url(page: Any, url: str) -> None:
    """A fresh load of `url` (a change of the address's #ID alone would not reload the
    page, and the page would still be busy with the previous test's game)."""
    page.goto("about:blank")
    page.goto(url)


def open_without_a_game(page: Any, url: str) -> None:
    """`url` opened with no game of an earlier test to fall back on. The page first opens
    the game its storage names, and that load writes the id back when it ends: storage
    is cleared only once the page is idle, or a load still running would restore it."""
    page.goto(url)
    idle(page)
    page.evaluate("localStorage.clear()")
    open_url(page, url)
    idle(page)
    assert page.evaluate("localStorage.getItem('doublet-game')") is None


def state_of(server: str, page: Any) -> dict[str, Any]:
    gid = page.evaluate("S.id")
    return dict(HTTP.get(f"{server}/api/games/{gid}").json())


def play_turn(server: str, page: Any) -> None:
    """The person plays the hint's best play by clicks (Done alone without a legal play)."""
    st = state_of(server, page)
    assert st["game"]["phase"] == "move" and st["game"]["turn"] == "you", st["game"]
    if not st["game"]["no_play"]:
        hint = HTTP.get(f"{server}/api/games/{st['id']}/hint").json()
        click_steps(page, hint["plays"][0]["steps"])
    page.click("#done")
    idle(page)


def until(server: str, page: Any, phase: str) -> dict[str, Any]:
    """Play the person's turns until the game is in `phase` with the person to act."""
    for _ in range(40):
        st = state_of(server, page)
        if st["game"]["phase"] == phase and st["game"]["to_act"] == "you":
            return st
        if st["game"]["phase"] == "roll":
            page.click("#roll")
            idle(page)
            continue
        play_turn(server, page)
    raise AssertionError(f"never came to {phase!r}")


def script_cube(monkeypatch: pytest.MonkeyPatch, doubles: Any, answer: str) -> None:
    """The engine's cube actions decided by the test (the server runs in this process)."""
    from doublet.games import opponent

    monkeypatch.setattr(opponent, "engine_doubles",
                        lambda g, ply=0, model=None: g.may_double() and doubles(g))  # fmt: skip
    monkeypatch.setattr(opponent, "engine_answer", lambda g, ply=0, model=None: answer)


def new_game_dialog(page: Any, kind: str, length: int = 3) -> None:
    page.click("#new-game")
    page.check(f'input[name="kind"][value="{kind}"]')
    if kind == "match":
        page.select_option("#length", str(length))
    page.select_option("#variant", "standard")
    page.select_option("#ply", "0")
    page.select_option("#starter", "you")
    page.click("#start")


def test_a_match_to_3_with_the_cube_by_clicks(server: str, page: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A 3-point match from the New game dialog: the person doubles and Doublet takes;
    Doublet redoubles and the person passes (0-2); the Crawford game has no cube and
    ends the match with a resignation. New game in the middle asks first."""
    script_cube(monkeypatch, doubles=lambda g: g.owner == 1, answer="take")
    open_without_a_game(page, server + "/")  # New game then starts one without asking
    new_game_dialog(page, "match")
    page.wait_for_function("S.state !== null")
    idle(page)
    gid = page.evaluate("S.id")
    assert "3-point match" in page.inner_text("#match-info")
    # every length the API takes (1..25) can be chosen in the dialog
    lengths = page.eval_on_selector_all("#length option", "os => os.map((o) => +o.value)")
    assert lengths == list(range(1, 26))
    assert page.get_attribute("#cube", "data-owner") == "centre"
    play_turn(server, page)
    # New game in the middle of the match asks; "Keep playing" keeps it.
    new_game_dialog(page, "money")
    page.wait_for_selector("#ask-dialog[open]")
    assert "Replace the match in progress" in page.inner_text("#ask-text")
    page.click("#ask-no")
    idle(page)
    assert page.evaluate("S.id") == gid
    st = until(server, page, "roll")
    assert page.is_visible("#double") and page.is_visible("#roll")
    assert page.is_hidden("#take") and "double to 2" in page.inner_text("#status")
    page.click("#double")
    idle(page)
    assert "Doublet takes" in page.inner_text("#answer")
    assert page.get_attribute("#cube", "data-owner") == "engine"
    assert page.get_attribute("#cube", "data-value") == "2"
    assert "You double to 2\nDoublet takes" in page.inner_text("#record")
    st = until(server, page, "answer")  # Doublet redoubles at its first chance
    assert page.is_visible("#take") and page.is_visible("#pass") and page.is_hidden("#beaver")
    assert page.is_hidden("#roll") and "Doublet doubles" in page.inner_text("#status")
    assert page.locator("#cube .cube-offer").count() == 1
    page.click("#pass")
    idle(page)
    st = state_of(server, page)
    assert st["game"]["over"] and st["score"] == {"you": 0, "engine": 2}
    assert "Doublet wins a single game (double passed): 2 points" in page.inner_text("#result")
    assert page.inner_text("#engine-score") == "2" and page.inner_text("#you-score") == "0"
    assert page.is_visible("#next-game") and page.is_visible("#review-link")
    page.click("#next-game")
    idle(page)
    # The Crawford game: no cube, the dice rolled at once.
    assert page.get_attribute("#match-info", "data-stage") == "Crawford game"
    assert "Crawford game" in page.inner_text("#match-info")
    play_turn(server, page)
    assert page.is_hidden("#double") and page.is_hidden("#roll")
    assert state_of(server, page)["game"]["phase"] == "move"
    page.click("#resign")
    page.wait_for_selector("#ask-dialog[open]")
    page.click("#resign-1")
    idle(page)
    st = state_of(server, page)
    assert st["series_over"] and st["winner"] == "engine"
    assert "Doublet wins the match, 3-0" in page.inner_text("#result")
    assert page.is_hidden("#next-game")
    mat = HTTP.get(server + page.get_attribute("#mat-link", "href"))
    assert mat.status_code == 200 and "Doubles => 2" in mat.text and "Drops" in mat.text
    assert " 3 point match" in mat.text and "Takes" in mat.text and "Doubles => 4" in mat.text


RESIGN_ID = "WwUAAODn4ANAAA"  # the person on the bar against a 5-point board, Doublet bearing
# off with 8 off (tests/test_serve.py draws it): worth more than a single game to Doublet


def test_a_resignation_the_engine_refuses(server: str, page: Any) -> None:
    body = {"position": RESIGN_ID, "state": {"jacoby": False}, "ply": 0}
    gid = HTTP.post(f"{server}/api/games", json=body).json()["id"]
    open_url(page, f"{server}/#{gid}")
    page.wait_for_selector("#board .checker")
    idle(page)
    page.click("#resign")
    page.wait_for_selector("#ask-dialog[open]")
    assert "a gammon (2 points)" in page.inner_text("#ask-buttons")
    page.click("#resign-1")
    idle(page)
    answer = page.inner_text("#answer")
    assert "Doublet plays on" in answer and "it would accept a gammon" in answer
    assert not state_of(server, page)["game"]["over"] and page.is_visible("#roll")
    page.click("#resign")
    page.wait_for_selector("#ask-dialog[open]")
    page.click("#resign-cancel")  # nothing happens
    idle(page)
    assert not state_of(server, page)["game"]["over"]
    page.click("#resign")
    page.wait_for_selector("#ask-dialog[open]")
    page.click("#resign-2")
    idle(page)
    assert "Doublet wins a gammon by resignation: 2 points" in page.inner_text("#result")


def finished_game(server: str, monkeypatch: pytest.MonkeyPatch, seed: int = 31) -> str:
    """A money game played through the API: some plays, a double Doublet takes, a
    redouble the person passes."""
    script_cube(monkeypatch, doubles=lambda g: g.owner == 1, answer="take")
    base = f"{server}/api/games"
    gid = HTTP.post(base, json={"cube": True, "seed": seed, "ply": 0, "starter": "you"}).json()[
        "id"
    ]
    doubled = False
    for _ in range(80):
        st = HTTP.get(f"{base}/{gid}").json()
        g, move = st["game"], st["move"]
        if g["over"]:
            return gid
        if g["phase"] == "answer":
            HTTP.post(f"{base}/{gid}/pass", json={"move": move})
        elif g["phase"] == "roll":
            what = "roll" if doubled or len(st["record"]) < 4 else "double"
            doubled = doubled or what == "double"
            HTTP.post(f"{base}/{gid}/{what}", json={"move": move})
        else:
            steps = (
                [] if g["no_play"] else HTTP.get(f"{base}/{gid}/hint").json()["plays"][0]["steps"]
            )
            HTTP.post(f"{base}/{gid}/play", json={"move": move, "steps": steps})
    raise AssertionError("the game did not end")


def test_the_review_page(server: str, page: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gid = finished_game(server, monkeypatch)
    open_url(page, f"{server}/#{gid}")
    idle(page)
    page.click("#review-link")
    page.wait_for_selector("#entry-table tr[data-index]")
    doc = HTTP.get(f"{server}/api/games/{gid}/review?ply=0").json()
    n = len(doc["turns"])
    assert page.locator("#entry-table tr[data-index]").count() == n + 1  # and the end
    assert page.inner_text("#where") == f"Decision 1 of {n}" and page.is_disabled("#prev")
    assert page.locator("#totals tr[data-total]").count() == 6
    assert "Review of game 1" in page.inner_text("#title")
    page.click("#next")
    assert page.inner_text("#where") == f"Decision 2 of {n}"
    first = doc["turns"][1]
    assert first["who"] == "engine" and first["play"] in page.inner_text("#detail")
    marks = page.get_attribute("#board .marks.engine", "data-moves")
    assert marks == " ".join(f"{m['from']}/{m['to']}" for m in first["moves"])
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#where") == f"Decision 3 of {n}"
    # The double, and Doublet's take: the proper action and the verdict.
    kinds = [e["kind"] for e in doc["turns"]]
    i = kinds.index("take")
    page.click(f'#entry-table tr[data-index="{i}"]')
    assert "Doublet takes" in page.inner_text("#detail")
    assert "Proper action: " + doc["turns"][i]["best"] in page.inner_text("#detail")
    assert page.get_attribute("#cube", "data-value") == "1"
    page.click("#last")
    assert page.inner_text("#where") == "The end" and page.is_disabled("#next")
    assert "double passed" in page.inner_text("#detail")
    if os.environ.get("DOUBLET_SCREENSHOTS"):
        page.click(f'#entry-table tr[data-index="{kinds.index("play", 6)}"]')
        shot(page, "review.png")


def test_the_analysis_page(server: str, page: Any) -> None:
    xgid = "XGID=-b----E-C---eE---c-e----B-:1:1:1:31:0:0:0:5:10"
    page.goto(f"{server}/analysis")
    page.fill("#position", xgid)
    page.select_option("#ply", "0")
    page.click("#analyse")
    page.wait_for_selector('#plays tr[data-rank="1"]')
    assert "5-point match" in page.inner_text("#state-text")
    assert page.locator("#cube-table tr[data-key]").count() == 3
    assert "ply" in page.inner_text("#cube-decision .action")
    assert "Plays of 3-1 (16 legal" in page.inner_text("#plays-title")
    assert page.get_attribute("#cube", "data-owner") == "you"  # the side on roll's cube
    # Fields override the ID: money play, the cube centred, another roll.
    page.fill("#match-length", "0")
    page.select_option("#cube-value", "1")
    page.fill("#dice", "6-5")
    page.click("#analyse")
    page.wait_for_selector("text=Plays of 6-5")
    assert page.inner_text("#state-text").startswith("money game")
    # A bad position says what is wrong, and the last analysis (of another position) goes.
    page.fill("#position", "nonsense")
    page.click("#analyse")
    page.wait_for_selector("#error:has-text('not a position')")
    assert page.is_hidden("#analysis-result")
    # A field that means something only beside another is refused alone, not dropped.
    page.fill("#position", xgid)
    page.select_option("#cube-value", "")
    page.select_option("#cube-owner", "opponent")
    page.click("#analyse")
    page.wait_for_selector("#error:has-text('goes with its value')")
    page.select_option("#cube-owner", "")
    page.fill("#match-length", "")
    page.fill("#score-mover", "2")
    page.click("#analyse")
    page.wait_for_selector("#error:has-text('go with a match')")
    page.fill("#score-mover", "")
    # Play from the position: a game starts there, the person on roll with 3-1.
    page.fill("#position", xgid)
    page.fill("#match-length", "")
    page.select_option("#cube-value", "")
    page.fill("#dice", "")
    page.click("#analyse")
    page.wait_for_selector('#plays tr[data-rank="1"]')
    page.click("#play-here")
    page.wait_for_url(f"{server}/#*")
    page.wait_for_selector("#dice[data-dice='3-1']")
    idle(page)
    st = state_of(server, page)
    assert st["match"]["length"] == 5 and st["cube"] == {**st["cube"], "value": 2, "owner": "you"}
    assert page.locator('g.point.source[data-point="8"]').count() == 1


def shot(page: Any, name: str) -> bytes:
    png = bytes(page.screenshot(full_page=False))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    if os.environ.get("DOUBLET_SCREENSHOTS"):
        target = Path(os.environ["DOUBLET_SCREENSHOTS"]) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)
    return png


def test_the_page_at_390_and_1280_pixels(server: str, page: Any,
                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A 5-point match in the middle: the cube taken, both sides' last moves marked, a
    checker chosen. At 390 px nothing is wider than the screen and the point numbers are
    at least 10 px tall; the screenshots of both widths are the README's."""
    script_cube(monkeypatch, doubles=lambda g: False, answer="take")
    base = f"{server}/api/games"
    gid = HTTP.post(base, json={"length": 5, "seed": 21, "ply": 0, "starter": "you"}).json()["id"]
    doubled = False
    for _ in range(40):
        st = HTTP.get(f"{base}/{gid}").json()
        g, move = st["game"], st["move"]
        if g["phase"] == "roll":
            what = "roll" if doubled or len(st["record"]) < 6 else "double"
            doubled = doubled or what == "double"
            HTTP.post(f"{base}/{gid}/{what}", json={"move": move})
            continue
        if doubled and len(st["record"]) >= 12 and not g["no_play"]:
            break
        steps = [] if g["no_play"] else HTTP.get(f"{base}/{gid}/hint").json()["plays"][0]["steps"]
        HTTP.post(f"{base}/{gid}/play", json={"move": move, "steps": steps})
    try:
        for width, height, name in (
            (1280, 760, "screenshot.png"),
            (390, 844, "screenshot-390.png"),
        ):
            page.set_viewport_size({"width": width, "height": height})
            open_url(page, f"{server}/#{gid}")
            page.wait_for_selector("#board .checker")
            idle(page)
            page.click("#hint")
            page.wait_for_selector('#hints tr[data-rank="1"]')
            steps = HTTP.get(f"{base}/{gid}/hint").json()["plays"][0]["steps"]
            point(page, steps[0]["from"]).click()
            idle(page)
            assert page.locator("g.point.dest").count() >= 1
            assert page.locator("#board .marks.engine").count() == 1
            assert page.get_attribute("#cube", "data-owner") == "engine"
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"{wide} px wide at {width}"
            tall = page.evaluate("document.querySelector('#board text.num')"
                                 ".getBoundingClientRect().height")  # fmt: skip
            assert tall >= 10, f"point numbers {tall:.1f} px tall at {width} px"
            shot(page, name)
    finally:
        page.set_viewport_size({"width": 1280, "height": 760})


def test_stacks_taller_than_five_show_their_count(server: str, page: Any) -> None:
    """Stacks of five on opposite points (13 and 12, 19 and 6) do not overlap, and a
    stack of six shows five checkers and its count. The position: the start, with one
    checker of the 8-point on the 6-point."""
    body = {"position": "4HPwATDgc/ABMA", "dice": [6, 5], "ply": 0}
    six = {"position": "4HPwATDgZ/ABMA", "dice": [6, 5], "ply": 0}
    for doc in (body, six):
        gid = HTTP.post(f"{server}/api/games", json=doc).json()["id"]
        open_url(page, f"{server}/#{gid}")
        page.wait_for_selector("#board .checker")
        idle(page)
        for top, bottom in ((13, 12), (19, 6)):
            edges = page.evaluate(f"""[{top}, {bottom}].map((p) => [...document.querySelectorAll(
                `g.point[data-point="${{p}}"] .checker`)].map((c) => c.getBoundingClientRect()))""")
            low = max(r["bottom"] for r in edges[0])
            high = min(r["top"] for r in edges[1])
            assert low < high, (top, bottom, low, high)
    assert page.locator('g.point[data-point="6"] .checker').count() == 5
    assert page.text_content('g.point[data-point="6"] .count') == "6"
    assert page.locator('g.point[data-point="13"] .count').count() == 0


def test_the_review_page_opens_a_match_file(server: str, page: Any, tmp_path: Path) -> None:
    open_without_a_game(page, f"{server}/review")
    page.wait_for_selector("#import-file", state="attached")
    page.wait_for_function("document.getElementById('error').textContent.length > 0")
    assert "open a match file" in page.inner_text("#error")
    page.set_input_files("#import-file", str(ROOT / "tests" / "data" / "matches" / "match01.mat"))
    page.wait_for_selector("#entry-table tr[data-index]", timeout=120_000)
    assert "gnubg" in page.inner_text("#totals") and "root" in page.inner_text("#totals")
    assert page.locator("#game option").count() == 5  # the match's five games
    assert "/review#" in page.url
    # The file's players by their names, not You and Doublet; and "Back to the game" is
    # not the imported match (no game of the person's was open here: the play page).
    first = page.locator("#game option").first.inner_text()
    assert "You win" not in first and "Doublet wins" not in first, first
    assert page.get_attribute("#game-link", "href") == "/"
    bad = tmp_path / "bad.mat"
    text = (ROOT / "tests" / "data" / "matches" / "match01.mat").read_text()
    bad.write_text(text.replace("8/5 6/5", "8/4 6/5", 1))
    page.set_input_files("#import-file", str(bad))
    page.wait_for_function("document.getElementById('error').textContent.includes('bad.mat')")
    assert "game 1, move 1" in page.inner_text("#error")


def test_keyboard_and_typed_plays_and_a_stale_tab(server: str, page: Any) -> None:
    """Found by a user-level review: the board could not be played from the keyboard, and
    a tab whose game another tab had played was stuck (its steps request got a 409
    without the state). Now: Tab reaches the points and Enter picks a source, then its
    destination; a play can be typed; and a stale tab catches up with a plain message."""
    r = HTTP.post(f"{server}/api/games", json={"variant": "standard", "ply": 0, "seed": 7,
                                               "starter": "you"})  # fmt: skip
    gid = r.json()["id"]
    page.goto(f"{server}/#{gid}")
    page.wait_for_selector("#board .checker")
    idle(page)
    st = HTTP.get(f"{server}/api/games/{gid}").json()
    steps = HTTP.post(f"{server}/api/games/{gid}/steps", json={"steps": []}).json()["steps"]
    s = steps[0]
    src, dst = point(page, s["from"]), point(page, s["to"])
    assert src.get_attribute("tabindex") == "0"
    src.focus()
    page.keyboard.press("Enter")
    idle(page)
    assert "selected" in (src.get_attribute("class") or "")
    dst.focus()
    page.keyboard.press("Enter")
    idle(page)
    left = page.locator("#status").inner_text()
    assert "Undo" not in left and not page.is_disabled("#undo")  # one step was played
    page.click("#undo")
    idle(page)
    # A typed play: a bad one says why and stays in the box; a legal one is played.
    page.fill("#play-text", "24/1")
    page.click("#play-typed")
    idle(page)
    assert page.inner_text("#error") and page.input_value("#play-text") == "24/1"
    move = st["move"]
    page.fill("#play-text", first_play(st))
    page.click("#play-typed")
    idle(page)
    after = HTTP.get(f"{server}/api/games/{gid}").json()
    assert after["move"] != move and page.input_value("#play-text") == ""
    # Another tab plays the person's whole roll while this one has a step in hand.
    after = to_move(server, gid)
    page.goto(f"{server}/#{gid}")
    page.wait_for_selector("#board .checker")
    idle(page)
    first = HTTP.post(f"{server}/api/games/{gid}/steps", json={"steps": []}).json()["steps"][0]
    point(page, first["from"]).click()
    idle(page)
    whole = first_play(after)
    done = HTTP.post(f"{server}/api/games/{gid}/play", json={"play": whole, "move": after["move"]})
    assert done.status_code == 200, done.text
    point(page, first["to"]).click()  # this tab's stale step
    idle(page)
    assert "moved on" in page.inner_text("#error")
    now = HTTP.get(f"{server}/api/games/{gid}").json()
    assert page.inner_text("#status") and now["move"] == done.json()["move"]


def first_play(st: dict[str, Any]) -> str:
    """The text of the first legal play of the person's roll in a state (its board is the
    person's view: points 1..24, the person's checkers positive)."""
    from doublet.core.board import from_counts
    from doublet.formats.position import Position

    b = st["board"]
    mover = [0] * 26
    opponent = [0] * 26
    for p in range(1, 25):
        n = b["points"][p]
        if n > 0:
            mover[p] = n
        elif n < 0:
            opponent[25 - p] = -n
    mover[25], opponent[25] = b["bar"]["you"], b["bar"]["engine"]
    pos = Position(from_counts(mover, opponent))
    return pos.plays(*st["game"]["dice"])[0].notation


def to_move(server: str, gid: str) -> dict[str, Any]:
    """The game's state once the person has rolled (rolling if it is their roll)."""
    st = HTTP.get(f"{server}/api/games/{gid}").json()
    for _ in range(40):
        g = st["game"]
        if g["turn"] == "you" and g["phase"] == "move" and not g.get("no_play"):
            return dict(st)
        if g["turn"] == "you" and g["phase"] == "roll":
            st = HTTP.post(f"{server}/api/games/{gid}/roll", json={"move": st["move"]}).json()
            continue
        if g["phase"] == "move" and g.get("no_play"):
            st = HTTP.post(f"{server}/api/games/{gid}/play",
                           json={"play": "", "move": st["move"]}).json()  # fmt: skip
            continue
        raise AssertionError(f"not the person's play: {g}")
    raise AssertionError("no play of the person's in 40 turns")


def test_a_dead_cube_is_said_on_the_page(server: str, page: Any) -> None:
    """3-away with the cube at 8 on the person's side: a win takes the match, so no double
    is offered and the dice are rolled at once; the match line says the cube is dead, and
    its title says why. A live cube (3-away, the cube at 1) says nothing of it."""
    live = {"cube": {"value": 1, "owner": "centered"}, "match": {"length": 3, "score": [0, 0]}}
    dead = {"cube": {"value": 8, "owner": "mover"}, "match": {"length": 3, "score": [0, 0]}}
    for state, is_dead in ((dead, True), (live, False)):
        body = {"position": "4HPwATDgc/ABMA", "ply": 0, "state": state}
        gid = HTTP.post(f"{server}/api/games", json=body).json()["id"]
        open_url(page, f"{server}/#{gid}")
        page.wait_for_selector("#board .checker")
        idle(page)
        info = page.inner_text("#match-info")
        assert "3-point match" in info
        assert ("your cube is dead" in info) == is_dead, info
        title = page.get_attribute("#match-info", "title") or ""
        assert ("winning this game wins you the match" in title) == is_dead, title
    assert page.is_visible("#double")  # the live cube: roll or double


def test_a_wrong_address_keeps_the_game_and_imports_open_their_review(
    server: str, page: Any
) -> None:
    """(a review) A wrong #id cleared the stored game and left the old board with a bad
    id behind every button; an imported match opened on the play page made the engine
    play for the file's player 1; a game from a position offered a .mat it cannot be."""
    body = {"position": RESIGN_ID, "state": {"jacoby": False}, "ply": 0}
    gid = HTTP.post(f"{server}/api/games", json=body).json()["id"]
    open_url(page, f"{server}/#{gid}")
    page.wait_for_selector("#board .checker")
    idle(page)
    assert page.get_attribute("#mat-link", "href").endswith(f"/{gid}/export")  # not a .mat
    page.evaluate("location.hash = 'noSuchGame0123456789'")
    page.wait_for_function("document.getElementById('error').textContent.includes('no game')")
    idle(page)
    assert page.evaluate("location.hash") == f"#{gid}"
    assert page.evaluate("localStorage.getItem('doublet-game')") == gid
    page.click("#resign")  # the buttons still act on the game on the board
    page.wait_for_selector("#ask-dialog[open]")
    page.keyboard.press("Escape")
    idle(page)
    text = (ROOT / "tests" / "data" / "matches" / "match01.mat").read_text()
    cut = text.index("62: 13/11 24/18", text.index(" Game 5"))  # the file's player 1 next
    imported = HTTP.post(f"{server}/api/import", json={"text": text[:cut] + "\n"}).json()
    open_url(page, f"{server}/#{imported['id']}")
    page.wait_for_url(f"{server}/review#{imported['id']}")
    page.wait_for_selector("#entry-table tr[data-index]", timeout=120_000)
    after = HTTP.get(f"{server}/api/games/{imported['id']}").json()
    assert after["record"] == imported["record"]
    assert page.evaluate("localStorage.getItem('doublet-game')") == gid
