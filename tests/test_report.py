"""`doublet review --html`: the review as one self-contained HTML page
(doublet.apps.report): the boards drawn in SVG hold the position's checkers (five a
stack at most, the count written on taller ones), the cube and the dice; the page lists
the worst decisions with their boards, needs no script or network, and renders in
Chromium (skipped without /usr/bin/chromium)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from doublet.apps.report import board_svg, html_report
from doublet.core import board as B
from doublet.formats.ids import parse_position
from doublet.formats.matfile import read_match
from doublet.games.review import review

ROOT = Path(__file__).resolve().parent.parent
MATCH = ROOT / "tests" / "data" / "matches" / "match01.mat"
CHROMIUM = Path("/usr/bin/chromium")


def test_the_starting_board_has_its_30_checkers_and_the_cube_at_64() -> None:
    svg = board_svg(B.starting(), (3, 1))
    assert svg.count("<circle") == 30
    assert re.search(r'class="cube">64<', svg) and svg.count('class="die"') == 2
    assert 'class="count"' not in svg


def test_the_dice_are_drawn_clear_of_the_checkers_and_the_cube() -> None:
    """Found by a review (session 43): the dice were drawn in the board's middle, over a
    stack of five (and two stacks of five on one column overlapped). They are in the
    tray, clear of every checker, the cube wherever it is and the trays' counts off."""
    b = np.zeros(B.SIZE, np.int8)
    for p in (2, 4, 6, 19, 21, 23):  # stacks of five near the board's middle, both rows
        b[p] = 5 if p < 12 else -5
    for cube, owner in ((1, "centered"), (2, "mover"), (2, "opponent")):
        svg = board_svg(b, (6, 5), cube, owner)
        boxes = [
            tuple(float(v) for v in m)
            for m in re.findall(
                r'<rect x="([\d.]+)" y="([\d.]+)" width="(\d+)" height="(\d+)" rx="[345]"', svg
            )
        ]
        dice = [r for r in boxes if r[2] == 26 and r[3] == 26][-2:]  # the cube's comes first
        others = [r for r in boxes if r not in dice]
        assert len(dice) == 2 and svg.count('class="die"') == 2
        for x, y, w, h in dice:
            for cx, cy, r in (tuple(float(v) for v in m) for m in re.findall(
                    r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', svg)):  # fmt: skip
                nx, ny = min(max(cx, x), x + w), min(max(cy, y), y + h)
                assert (nx - cx) ** 2 + (ny - cy) ** 2 > r * r, (owner, cx, cy)
            for ox, oy, ow, oh in others:
                assert x + w <= ox or ox + ow <= x or y + h <= oy or oy + oh <= y, owner
    # Checkers on the bar grow away from the middle, clear of a centered cube (a second
    # mover's checker on the bar was drawn over it).
    bar = b.copy()
    bar[2], bar[B.MY_BAR], bar[21], bar[B.OPP_BAR] = 2, 3, -2, -3
    svg = board_svg(bar)
    (cube,) = [tuple(float(v) for v in m) for m in re.findall(
        r'<rect x="([\d.]+)" y="([\d.]+)" width="(26)" height="(26)" rx="4"', svg)]  # fmt: skip
    x, y, w, h = cube
    for cx, cy, r in (tuple(float(v) for v in m) for m in re.findall(
            r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', svg)):  # fmt: skip
        nx, ny = min(max(cx, x), x + w), min(max(cy, y), y + h)
        assert (nx - cx) ** 2 + (ny - cy) ** 2 > r * r, (cx, cy)
    # Nor do two checkers overlap: stacks of five on points 6 and 19 (one column) met
    # in the middle of the board, one over the other (R was 15).
    circles = [tuple(float(v) for v in m) for m in re.findall(
        r'<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', board_svg(b))]  # fmt: skip
    assert len(circles) == 30
    for k, (x1, y1, r1) in enumerate(circles):
        for x2, y2, r2 in circles[k + 1 :]:
            assert (x1 - x2) ** 2 + (y1 - y2) ** 2 >= (r1 + r2) ** 2, (x1, y1, y2)


def test_stacks_taller_than_five_show_their_count() -> None:
    board, _, _ = parse_position("XGID=-A---BFC-----------bbbbb--:0:0:1:00:0:0:0:0:10")
    svg = board_svg(np.array(board), cube=4, owner="opponent")
    counts = re.findall(r'class="count">(\d+)<', svg)
    assert counts == ["6"]  # the 6 on point 6; the others are 5 or fewer
    n = sum(min(abs(int(x)), 5) for x in np.array(board)[1:25])
    assert svg.count("<circle") == n
    assert re.search(r'class="cube">4<', svg)


def test_the_page_lists_the_worst_errors_with_their_boards() -> None:
    match, games = read_match(MATCH.read_text())
    doc = review(match, games, ply=0)
    page = html_report(doc, "match01.mat", top=7)
    assert page.count("<svg") == 7 and page.count('class="error"') == 7
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    worst = sorted(doc["errors"], key=lambda e: -e["loss"])[:7]
    for e in worst:
        assert e["xgid"] in page and f"{e['loss']:.3f}" in page
    for p in doc["players"]:
        assert f"<th>{p['name']}</th>" in page


def test_doublet_review_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "doublet", "review", str(MATCH), "--html",
                           str(out), "--top", "3"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text().count("<svg") == 3
    (tmp_path / "a file").write_text("")
    where = tmp_path / "a file" / "r.html"  # under a file: no folder can be made there
    bad = subprocess.run([sys.executable, "-m", "doublet", "review", str(MATCH), "--html",
                          str(where)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)  # fmt: skip
    assert bad.returncode == 2 and f"cannot write {str(where)!r}" in bad.stderr
    # a folder: refused before the analysis, not after it
    folder = subprocess.run([sys.executable, "-m", "doublet", "review", str(MATCH), "--html",
                             str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                            timeout=300)  # fmt: skip
    assert folder.returncode == 2, folder.stderr
    assert f"cannot write {str(tmp_path)!r}: it is a folder" in folder.stderr
    # a missing folder is refused, not made (a review made /nonexistent/ from a typo), as
    # play --export refuses it
    typo = tmp_path / "no-such-folder" / "r.html"
    made = subprocess.run([sys.executable, "-m", "doublet", "review", str(MATCH), "--html",
                           str(typo)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)  # fmt: skip
    assert made.returncode == 2 and "its folder does not exist" in made.stderr, made.stderr
    assert not typo.parent.exists()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")
def test_the_page_renders_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    match, games = read_match(MATCH.read_text())
    page_file = tmp_path / "r.html"
    page_file.write_text(html_report(review(match, games, ply=0), "match01.mat", top=5))
    with sync_playwright() as p:
        args = ["--headless", "--no-sandbox", "--disable-gpu"]
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            errors: list[str] = []
            for width in (390, 1280):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.goto(page_file.as_uri())
                boxes = [b.bounding_box() for b in page.query_selector_all("svg.board")]
                assert len(boxes) == 5
                for box in boxes:  # each board fits the page and keeps its shape
                    assert box and 0 < box["width"] <= width and box["height"] > 0.5 * box["width"]
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                page.close()
            assert not errors
        finally:
            browser.close()
