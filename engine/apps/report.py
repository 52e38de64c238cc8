"""`doublet review --html OUT`: the review of a match as one self-contained HTML file.

The file needs nothing but itself (no script, no font, no network): the figures of both
players (doublet.games.review's document) in a table, then the worst decisions, each
with its board drawn in SVG (``board_svg``: the player to move at the bottom, moving
counter-clockwise to its home at the bottom right, points numbered from its side, a
checker count on stacks taller than five, the bar, the borne-off checkers, the cube and
the dice), what was played, the best play or the proper cube action, and the loss,
with the gnubg Position ID and the XGID to paste into another program.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.formats.ids import parse_position

# The board's geometry (SVG user units).
W, H = 520, 300
POINT_W = 34
BAR_W = 30
MARGIN = 20
TRAY_W = 36
R = 13  # a checker's radius: two stacks of five on one column meet in the middle
COLORS = {"mover": "#f4efe1", "opponent": "#2b2b2b", "dark": "#9c5b33", "light": "#d9b48a"}


def _point_x(p: int) -> float:
    """The centre x of point p (1..24, the mover's numbering: 1 at the bottom right)."""
    if p <= 12:  # the bottom row, right to left
        i = p - 1
        x = W - TRAY_W - MARGIN - POINT_W / 2 - i * POINT_W
        return x - (BAR_W if i >= 6 else 0)
    i = 24 - p  # the top row, right to left from 24
    x = W - TRAY_W - MARGIN - POINT_W / 2 - i * POINT_W
    return x - (BAR_W if i >= 6 else 0)


def board_svg(board: np.ndarray, dice: tuple[int, int] | None = None, cube: int = 1,
              owner: str = "centered", label: str = "") -> str:  # fmt: skip
    """A standard board (the mover's view) as an SVG element."""
    b = np.asarray(board)
    top, bottom = MARGIN, H - MARGIN
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" '
             f'aria-label="{html.escape(label or "board")}" class="board">',
             f'<rect width="{W}" height="{H}" rx="8" fill="#5a3a22"/>',
             f'<rect x="{MARGIN - 8}" y="{top}" width="{W - TRAY_W - 2 * MARGIN + 16}" '
             f'height="{bottom - top}" fill="#2f6b3a"/>']  # fmt: skip
    bar_x = _point_x(6) - POINT_W / 2 - BAR_W
    parts.append(f'<rect x="{bar_x}" y="{top}" width="{BAR_W}" height="{bottom - top}" '
                 'fill="#5a3a22"/>')  # fmt: skip
    height = (bottom - top) * 0.42
    for p in range(1, 25):
        x = _point_x(p)
        color = COLORS["dark"] if p % 2 else COLORS["light"]
        if p <= 12:
            pts = f"{x - POINT_W / 2},{bottom} {x + POINT_W / 2},{bottom} {x},{bottom - height}"
            ty = H - 5
        else:
            pts = f"{x - POINT_W / 2},{top} {x + POINT_W / 2},{top} {x},{top + height}"
            ty = 14
        parts.append(f'<polygon points="{pts}" fill="{color}"/>')
        parts.append(f'<text x="{x}" y="{ty}" font-size="11" text-anchor="middle" '
                     f'fill="#f0e6d2">{p}</text>')  # fmt: skip
        n = int(b[p])
        if n:
            parts += _stack(x, p <= 12, abs(n), "mover" if n > 0 else "opponent")
    # The bar: the mover's checkers in the lower half, the opponent's in the upper, each
    # stack growing away from the middle (where a centered cube stands).
    cx = bar_x + BAR_W / 2
    if b[B.MY_BAR]:
        parts += _stack(cx, False, int(b[B.MY_BAR]), "mover", base=H / 2 + 13 + R + 2)
    if b[B.OPP_BAR]:
        parts += _stack(cx, True, int(-b[B.OPP_BAR]), "opponent", base=H / 2 - 13 - R - 2)
    # Borne off, in the tray on the right: the mover's below, the opponent's above.
    tray = W - TRAY_W / 2 - 6
    for n, who, y in ((int(b[B.MY_OFF]), "mover", bottom - 12),
                      (int(b[B.OPP_OFF]), "opponent", top + 12)):  # fmt: skip
        if n:
            parts.append(f'<rect x="{tray - 14}" y="{y - 9}" width="28" height="18" rx="3" '
                         f'fill="{COLORS[who]}" stroke="#000" stroke-width="0.5"/>')  # fmt: skip
            fill = "#000" if who == "mover" else "#fff"
            parts.append(f'<text x="{tray}" y="{y + 4}" font-size="11" text-anchor="middle" '
                         f'fill="{fill}">{n} off</text>')  # fmt: skip
    # The cube: centred on the bar, else on its owner's side of the tray.
    cy = {"centered": H / 2, "mover": bottom - 50, "opponent": top + 50}[owner]
    cx_cube = cx if owner == "centered" else tray
    parts.append(f'<rect x="{cx_cube - 13}" y="{cy - 13}" width="26" height="26" rx="4" '
                 'fill="#fafafa" stroke="#000"/>')  # fmt: skip
    shown = 64 if owner == "centered" and cube == 1 else cube
    parts.append(f'<text x="{cx_cube}" y="{cy + 5}" font-size="13" font-weight="bold" '
                 f'text-anchor="middle" class="cube">{shown}</text>')  # fmt: skip
    if dice:  # in the tray, one above the other: a stack of five reaches the board's middle
        for k, d in enumerate(dice):
            y0 = H / 2 - 28 + k * 30
            parts.append(f'<rect x="{tray - 13}" y="{y0}" width="26" height="26" rx="5" '
                         f'fill="{COLORS["mover"]}" stroke="#000"/>')  # fmt: skip
            parts.append(f'<text x="{tray}" y="{y0 + 18}" font-size="15" '
                         f'text-anchor="middle" class="die">{d}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def _stack(x: float, bottom: bool, n: int, who: str, base: float | None = None) -> list[str]:
    """Up to five checkers from the board's edge inwards; taller stacks show their count."""
    out = []
    start = base if base is not None else (H - MARGIN - R if bottom else MARGIN + R)
    step = -2 * R if bottom else 2 * R
    for k in range(min(n, 5)):
        y = start + k * step
        out.append(f'<circle cx="{x}" cy="{y}" r="{R - 1}" fill="{COLORS[who]}" '
                   'stroke="#000" stroke-width="1"/>')  # fmt: skip
    if n > 5:
        y = start + 4 * step
        fill = "#000" if who == "mover" else "#fff"
        out.append(f'<text x="{x}" y="{y + 4}" font-size="12" font-weight="bold" '
                   f'text-anchor="middle" fill="{fill}" class="count">{n}</text>')  # fmt: skip
    return out


ROWS = [("Unforced moves", "unforced_moves", "{:d}"),
        ("Checker errors (EMG)", "checker_error", "{:.3f}"),
        ("Checker error rate (mEMG)", "checker_error_rate_memg", "{:.1f}"),
        ("Cube decisions", "cube_decisions", "{:d}"),
        ("Cube errors (EMG)", "cube_error", "{:.3f}"),
        ("Cube error rate (mEMG)", "cube_error_rate_memg", "{:.1f}"),
        ("Cube decisions counted", "counted_cube_decisions", "{:d}"),
        ("Error rate (mEMG)", "error_rate_memg", "{:.1f}"),
        ("PR (500 x mean error)", "pr", "{:.1f}"),
        ("Luck (EMG)", "luck", "{:+.3f}"),
        ("Luck rate (mEMG a roll)", "luck_rate_memg", "{:+.1f}")]  # fmt: skip

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem;
       padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { padding: 0.25rem 0.8rem; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.error { margin: 1.5rem 0; padding: 1rem; border: 1px solid #ddd; border-radius: 8px; }
.board { width: 100%; max-width: 520px; height: auto; display: block; }
code { font-size: 0.85rem; word-break: break-all; }
.loss { font-weight: bold; color: #a11; }
"""


def _row(label: str, cells: list[str], tag: str = "td") -> str:
    return (f"<tr><{tag}>{label}</{tag}>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells)
            + "</tr>")  # fmt: skip


def html_report(doc: dict[str, Any], title: str, top: int = 20) -> str:
    """The review document `doc` (doublet.games.review.review) as an HTML page."""
    esc = html.escape
    players = doc["players"]
    kind = f"{doc['length']}-point match" if doc["length"] else "money session"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(title)}: Doublet review</title><style>{STYLE}</style></head><body>",
           f"<h1>{esc(title)}</h1>",
           f"<p>{kind}, reviewed by Doublet at {doc['ply']} ply.</p>",
           "<table><thead>" + _row("", [esc(p["name"]) for p in players], "th")
           + "</thead><tbody>"]  # fmt: skip
    for label, key, f in ROWS:
        out.append(_row(label, [f.format(p[key]) for p in players]))
    for what, key in (("Checker", "checker_verdicts"), ("Cube", "cube_verdicts")):
        for words in ("doubtful", "bad", "very bad"):
            out.append(_row(f"{what} {words}", [str(p[key][words]) for p in players]))
    out.append("</tbody></table>")
    worst = sorted(doc["errors"], key=lambda e: -e["loss"])[:top]
    out.append(f"<h2>The worst decisions ({len(worst)} of {len(doc['errors'])})</h2>")
    for e in worst:
        board, _, meta = parse_position(e["xgid"])
        cube = 1 << int(meta["cube"])
        owner = {0: "centered", 1: "mover", -1: "opponent"}[int(meta["cube_owner"])]
        dice = tuple(e["dice"]) if "dice" in e else None
        who = players[e["player"]]["name"]
        if e["kind"] == "checker play":
            what = (f"{esc(who)} played <b>{esc(e['play'])}</b>; best "
                    f"<b>{esc(e['best'])}</b>")  # fmt: skip
        else:
            what = f"{esc(who)}: {esc(e['kind'])}; proper action <b>{esc(e['proper'])}</b>"
        label = f"game {e['game']} move {e['move']}"
        out.append(f'<section class="error"><h3>Game {e["game"]}, move {e["move"]}</h3>'
                   f"{board_svg(np.array(board), dice, cube, owner, label)}"
                   f'<p>{what}; loses <span class="loss">{e["loss"]:.3f}</span></p>'
                   f"<p><code>{esc(e['position_id'])}</code> <code>{esc(e['xgid'])}</code>"
                   "</p></section>")  # fmt: skip
    out.append("</body></html>")
    return "\n".join(out) + "\n"


__all__ = ["board_svg", "html_report"]
