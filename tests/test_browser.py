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
- A screenshot of the page in the middle of the game is taken (and checked to be a PNG);
  with DOUBLET_SCREENSHOT=PATH it is written there: the README's picture comes from
  `DOUBLET_SCREENSHOT=docs/screenshot.png python -m pytest -q tests/test_browser.py`.
  A plain test run writes nothing into the repository.

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
    page.wait_for_selector("body:not(.busy)", state="attached")


def point(page: Any, where: Any) -> Any:
    return page.locator(f'g.point[data-point="{where}"]')


def test_new_game_from_the_form(server: str, page: Any) -> None:
    page.goto(server + "/")
    page.select_option("#variant", "acey-deucey")
    page.select_option("#ply", "0")
    page.click("#new-game")
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
                if os.environ.get("DOUBLET_SCREENSHOT"):
                    target = Path(os.environ["DOUBLET_SCREENSHOT"])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(png)
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
