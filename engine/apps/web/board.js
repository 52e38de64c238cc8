// Doublet's board, drawn in SVG for the game, the review and the analysis pages. Plain
// JavaScript (a classic script: its functions are globals), no build step.
//
// drawBoard(svg, view, opts) draws `view` (the server's board_view: "points" 0..24 with
// index p = the person's point p, > 0 the person's checkers, < 0 the engine's; "bar",
// "off", "unentered" each {you, engine}) seen by the person, whose home board is bottom
// right. opts: variant, dice {you: [d1, d2], engine: [...]}, unused (the person's dice
// still to play), cube {value, owner: "you" | "engine" | null}, marks {you: moves,
// engine: moves} (a side's last move: [{from, to}] in the person's numbering), classOf(p)
// (extra classes of a point: source, dest, selected), names {you, engine}.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const GEO = {
  W: 50, // point width
  R: 20, // checker radius
  STEP: 36, // distance between stacked checkers: five fit in a point, clear of the middle
  TOP: 34, // top edge of the upper points
  BOTTOM: 466, // bottom edge of the lower points
  POINT_H: 180,
  MID: 250, // the middle of the board, between the halves
  FRAME_X: 65, FRAME_W: 670,
  BAR_X: 370, BAR_W: 60,
  TRAY_X: 745, // borne-off checkers (right)
  HEIGHT: 500,
};
const SHOWN = 5; // checkers drawn on a point; a taller stack shows its count

function svgEl(name, attrs, parent, text) {
  const e = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function pointX(p) {
  // The person's points: 1..6 bottom right, 7..12 bottom left, 13..18 top left,
  // 19..24 top right. The left edge of the point's column.
  const W = GEO.W;
  if (p <= 6) return 730 - p * W;
  if (p <= 12) return 370 - (p - 6) * W;
  if (p <= 18) return 70 + (p - 13) * W;
  return 430 + (p - 19) * W;
}

function checkerY(top, i) {
  return top ? GEO.TOP + GEO.R + i * GEO.STEP : GEO.BOTTOM - GEO.R - i * GEO.STEP;
}

function drawStack(g, cx, top, n, who, point) {
  const shown = Math.min(n, SHOWN);
  for (let i = 0; i < shown; i++) {
    const cy = checkerY(top, i);
    svgEl("circle", { cx, cy, r: GEO.R - 1, class: "checker " + who, "data-owner": who,
                      "data-point": point }, g);
    if (i === shown - 1 && n > SHOWN) {
      svgEl("text", { x: cx, y: cy + 7, class: "count " + who, "data-count": n }, g, String(n));
    }
  }
}

function drawTray(g, x, top, n, who, label) {
  // Borne-off or unentered checkers: thin slabs, 15 fit in a half.
  for (let i = 0; i < n; i++) {
    const y = top ? GEO.TOP + i * 11 : GEO.BOTTOM - 9 - i * 11;
    svgEl("rect", { x: x + 5, y, width: 40, height: 9, rx: 2, class: "slab " + who }, g);
  }
  svgEl("text", { x: x + 25, y: top ? GEO.TOP + 15 * 11 + 16 : GEO.BOTTOM - 15 * 11 - 6,
                  class: "tray-label" }, g, `${label} ${n}`);
}

const PIPS = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
               4: [[-1, -1], [1, -1], [-1, 1], [1, 1]],
               5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
               6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };

function drawDie(g, x, y, d, who, used) {
  svgEl("rect", { x, y, width: 40, height: 40, rx: 7,
                  class: `die ${who}` + (used ? " used" : ""), "data-die": d }, g);
  for (const [dx, dy] of PIPS[d]) {
    svgEl("circle", { cx: x + 20 + dx * 10, cy: y + 20 + dy * 10, r: 4, class: `pip ${who}` }, g);
  }
}

function drawDice(svg, dice, who, unused) {
  // The person's dice on the right half, the engine's on the left, as players roll them.
  const g = svgEl("g", { class: "dice " + who, id: who === "you" ? "dice" : "engine-dice",
                         "data-dice": (dice || []).join("-"),
                         "aria-label": dice && dice.length ? `${who === "you" ? "your" : "Doublet's"} dice ${dice.join("-")}` : "no dice" }, svg);
  if (!dice || !dice.length) return g;
  const cx = who === "you" ? 580 : 218;
  const left = unused ? unused.slice() : null;
  dice.forEach((d, i) => {
    let used = false;
    if (left) {
      const k = left.indexOf(d);
      if (k >= 0) left.splice(k, 1); else used = true;
    }
    drawDie(g, cx - 46 + i * 52, GEO.MID - 20, d, who, used);
  });
  return g;
}

function drawCube(svg, cube, leftX) {
  // Centred: the middle of the left strip; owned: at its owner's edge (the person's is
  // the bottom).
  if (!cube) return;
  const size = 44;
  const y = cube.owner === "you" ? GEO.BOTTOM - size - 6
    : cube.owner === "engine" ? GEO.TOP + 6 : GEO.MID - size / 2;
  const owner = cube.owner || "centre";
  const g = svgEl("g", { id: "cube", class: "cube " + owner, "data-value": cube.value,
                         "data-owner": owner,
                         "aria-label": `cube ${cube.value}` + (cube.owner ? `, ${cube.owner === "you" ? "yours" : "Doublet's"}` : ", centred") }, svg);
  svgEl("rect", { x: leftX, y, width: size, height: size, rx: 6, class: "cube-face" }, g);
  // A centred cube shows 64, as on a real board; it is worth 1.
  const face = cube.owner ? String(cube.value) : "64";
  svgEl("text", { x: leftX + size / 2, y: y + size / 2 + 8, class: "cube-value" }, g, face);
  if (cube.offered) {
    svgEl("text", { x: leftX + size / 2, y: y - 6, class: "cube-offer" }, g, "×2?");
  }
}

function anchor(where, who, top) {
  // Where an arrow of a move starts or ends: the point's stack, the bar, the trays.
  if (where === "bar") {
    return [GEO.BAR_X + GEO.BAR_W / 2, who === "engine" ? GEO.TOP + 70 : GEO.BOTTOM - 70];
  }
  if (where === "off") return [GEO.TRAY_X + 25, who === "engine" ? GEO.TOP + 60 : GEO.BOTTOM - 60];
  if (where === "in") return [30, who === "engine" ? GEO.BOTTOM - 60 : GEO.TOP + 60];
  const p = Number(where);
  const up = p >= 13;
  return [pointX(p) + GEO.W / 2, up ? GEO.TOP + 60 : GEO.BOTTOM - 60];
}

function drawMarks(svg, moves, who) {
  if (!moves || !moves.length) return;
  const g = svgEl("g", { class: "marks " + who, "data-side": who,
                         "data-moves": moves.map((m) => `${m.from}/${m.to}`).join(" ") }, svg);
  moves.forEach((m, i) => {
    const [x1, y1] = anchor(m.from, who);
    const [x2, y2] = anchor(m.to, who);
    // A curve bowed towards the middle, so a move along one side stays readable.
    const mx = (x1 + x2) / 2;
    const bow = Math.abs(x1 - x2) < 5 ? 0 : (y1 < GEO.MID ? 55 : -55);
    const my = (y1 + y2) / 2 + bow + i * 4;
    svgEl("circle", { cx: x1, cy: y1, r: 7, class: "mark-from" }, g);
    svgEl("path", { d: `M ${x1} ${y1} Q ${mx} ${my} ${x2} ${y2}`, class: "mark-path",
                    "marker-end": `url(#arrow-${who})` }, g);
  });
}

function drawBoard(svg, view, opts) {
  opts = opts || {};
  svg.replaceChildren();
  const acey = opts.variant === "acey-deucey";
  // The cube's strip is left of the points; Acey-Deucey's unentered checkers take that
  // place, so there the picture widens to the left.
  const stripX = acey ? -55 : 8;
  svg.setAttribute("viewBox", `${acey ? -60 : 0} 0 ${acey ? 880 : 820} ${GEO.HEIGHT}`);
  const defs = svgEl("defs", {}, svg);
  for (const who of ["you", "engine"]) {
    const mk = svgEl("marker", { id: `arrow-${who}`, viewBox: "0 0 10 10", refX: 8, refY: 5,
                                 markerWidth: 5, markerHeight: 5, orient: "auto-start-reverse" },
                     defs);
    svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", class: `arrow-head ${who}` }, mk);
  }
  if (!view) {
    svgEl("text", { x: 405, y: 255, class: "empty" }, svg, opts.empty || "");
    return;
  }
  const cls = opts.classOf || (() => "");
  const names = opts.names || { you: "yours", engine: "Doublet's" };
  svgEl("rect", { x: GEO.FRAME_X, y: 26, width: GEO.FRAME_W, height: 448, class: "frame" }, svg);
  // The play page's points take the keyboard focus (Tab, then Enter or Space picks).
  const tab = opts.focusable ? { tabindex: "0" } : {};
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p);
    const top = p >= 13;
    const n = view.points[p];
    const who = n > 0 ? "you" : "engine";
    const label = `point ${p}` + (n ? `, ${Math.abs(n)} ${n > 0 ? names.you : names.engine}` : "");
    const g = svgEl("g", { class: "point" + cls(String(p)), "data-point": String(p),
                           role: "button", "aria-label": label, ...tab }, svg);
    svgEl("rect", { x, y: top ? GEO.TOP : GEO.BOTTOM - GEO.POINT_H, width: GEO.W,
                    height: GEO.POINT_H, class: "hit-area" }, g);
    const tip = top ? GEO.TOP + GEO.POINT_H : GEO.BOTTOM - GEO.POINT_H;
    const base = top ? GEO.TOP : GEO.BOTTOM;
    svgEl("polygon", { points: `${x + 2},${base} ${x + GEO.W - 2},${base} ${x + GEO.W / 2},${tip}`,
                       class: "tri " + (p % 2 ? "odd" : "even") }, g);
    svgEl("text", { x: x + GEO.W / 2, y: top ? 21 : 493, class: "num" }, svg, String(p));
    if (n) drawStack(g, x + GEO.W / 2, top, Math.abs(n), who, String(p));
  }
  // The bar: Doublet's checkers in the top half, the person's in the bottom half.
  svgEl("rect", { x: GEO.BAR_X, y: 26, width: GEO.BAR_W, height: 448, class: "bar" }, svg);
  const engineBar = svgEl("g", { class: "bar-engine", "aria-label": `bar, ${view.bar.engine} ${names.engine}` }, svg);
  drawStack(engineBar, 400, true, view.bar.engine, "engine", "engine-bar");
  const bar = svgEl("g", { class: "point bar-you" + cls("bar"), "data-point": "bar", ...tab,
                           role: "button", "aria-label": `bar, ${view.bar.you} ${names.you}` }, svg);
  svgEl("rect", { x: GEO.BAR_X, y: GEO.MID, width: GEO.BAR_W, height: 224, class: "hit-area" }, bar);
  drawStack(bar, 400, false, view.bar.you, "you", "bar");
  // Borne off (right), Doublet's on top, the person's below.
  const off = svgEl("g", { class: "point tray" + cls("off"), "data-point": "off", role: "button",
                           "aria-label": `borne off, ${view.off.you} ${names.you}`, ...tab }, svg);
  svgEl("rect", { x: GEO.TRAY_X, y: GEO.MID, width: 50, height: 224, class: "hit-area" }, off);
  drawTray(off, GEO.TRAY_X, false, view.off.you, "you", "off");
  drawTray(svg, GEO.TRAY_X, true, view.off.engine, "engine", "off");
  // Unentered (Acey-Deucey, left): the person's on top (they enter on 24..19).
  if (acey) {
    const inn = svgEl("g", { class: "point tray" + cls("in"), "data-point": "in", role: "button",
                             "aria-label": `not entered, ${view.unentered.you} ${names.you}`,
                             ...tab }, svg);
    svgEl("rect", { x: 5, y: 26, width: 50, height: 224, class: "hit-area" }, inn);
    drawTray(inn, 5, true, view.unentered.you, "you", "in");
    drawTray(svg, 5, false, view.unentered.engine, "engine", "in");
  }
  if (opts.cube) drawCube(svg, opts.cube, stripX);
  const dice = opts.dice || {};
  drawDice(svg, dice.engine, "engine", null);
  drawDice(svg, dice.you, "you", opts.unused || null);
  const marks = opts.marks || {};
  drawMarks(svg, marks.you, "you");
  drawMarks(svg, marks.engine, "engine");
}

// Shared words for the pages.
function pct(x) {
  return (100 * x).toFixed(1) + "%";
}

function signed(x, digits) {
  if (x === null || x === undefined) return "–";
  const s = x.toFixed(digits === undefined ? 3 : digits);
  return x >= 0 ? "+" + s : s;
}

// A roll's ranked plays as rows of `table` (the game page's hint, the analysis page):
// a header, then rank, play, equity, loss, win and gammon chances; returns the rows.
function playRows(table, plays) {
  const head = table.insertRow();
  for (const h of ["", "play", "equity", "loss", "win", "gammon"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  return plays.map((r) => {
    const row = table.insertRow();
    row.dataset.rank = r.rank;
    const p = r.probabilities;
    for (const v of [r.rank, r.play || "no play", signed(r.equity), r.loss.toFixed(3),
                     pct(p.win), pct(p.win_gammon)]) {
      row.insertCell().textContent = String(v);
    }
    return row;
  });
}

// names: the players' names when they are not You and Doublet (an imported match file).
function describeResult(r, names) {
  if (!r) return "";
  const name = names ? names[r.winner === "you" ? 0 : 1] : null;
  const who = name ? `${name} wins` : r.winner === "you" ? "You win" : "Doublet wins";
  const how = r.resigned ? " by resignation" : r.passed ? " (double passed)" : "";
  const pts = r.value === undefined ? r.points : r.value;
  return `${who} a ${r.name}${how}: ${pts} point${pts === 1 ? "" : "s"}`;
}
