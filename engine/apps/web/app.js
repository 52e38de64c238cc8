// Doublet in the browser: draws the board, sends the person's steps to the server and
// shows what the engine played. Plain JavaScript, no build step. The server is the
// authority: it answers which steps are legal next (POST /api/games/ID/steps) and checks
// the whole play when Done is pressed. The partial play lives here until then.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const R = 22; // checker radius
const W = 50; // point width
const TOP = 20, BOTTOM = 440, POINT_H = 180;
const S = { id: null, state: null, steps: [], opts: null, selected: null, busy: false,
            down: null };

// ---------------------------------------------------------------------------------------
// Talking to the server
// ---------------------------------------------------------------------------------------

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch("/api/games" + path, init);
  const type = res.headers.get("Content-Type") || "";
  const doc = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new Error(doc.error || String(doc));
    err.state = doc.state; // 409: the game moved on; here is where it is
    throw err;
  }
  return doc;
}

async function run(work) {
  if (S.busy) return;
  S.busy = true;
  setError("");
  document.body.classList.add("busy");
  try {
    await work();
  } catch (e) {
    setError(e.message);
  } finally {
    S.busy = false;
    document.body.classList.remove("busy");
    renderControls();
  }
}

async function loadGame(id) {
  S.id = id;
  S.state = await api("GET", "/" + id);
  // The form shows this game's settings, ready for the next new game.
  const f = document.getElementById("new-game-form");
  f.variant.value = S.state.variant;
  f.ply.value = String(S.state.ply);
  if (f.querySelector(`#games option[value="${S.state.games}"]`)) f.games.value = S.state.games;
  localStorage.setItem("doublet-game", id);
  if (location.hash !== "#" + id) history.replaceState(null, "", "#" + id);
  await startTurn();
}

async function startTurn() {
  S.steps = [];
  S.selected = null;
  S.opts = null;
  clearHints();
  if (yourTurn()) await refreshOptions();
  render();
}

async function refreshOptions() {
  S.opts = await api("POST", "/" + S.id + "/steps", { steps: S.steps });
}

function yourTurn() {
  return S.state && S.state.game.turn === "you";
}

// ---------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------

function step(s) {
  run(async () => {
    S.steps.push({ from: s.from, to: s.to, die: s.die });
    S.selected = null;
    try {
      await refreshOptions();
    } catch (e) {
      S.steps.pop();
      throw e;
    }
    render();
  });
}

function chooseDoublet(k) {
  run(async () => {
    S.steps.push({ doublet: k });
    await refreshOptions();
    render();
  });
}

function undo() {
  run(async () => {
    S.steps.pop();
    S.selected = null;
    await refreshOptions();
    render();
  });
}

function done() {
  run(async () => {
    S.state = await api("POST", "/" + S.id + "/play", { steps: S.steps, move: S.state.move });
    await startTurn();
  });
}

function hint() {
  run(async () => {
    const doc = await api("GET", "/" + S.id + "/hint");
    showHints(doc);
  });
}

function resign() {
  if (!window.confirm("Resign this game (Doublet wins a single game)?")) return;
  run(async () => {
    S.state = await api("POST", "/" + S.id + "/resign", { points: 1, move: S.state.move });
    await startTurn();
  });
}

function nextGame() {
  run(async () => {
    S.state = await api("POST", "/" + S.id + "/next", { move: S.state.move });
    await startTurn();
  });
}

function newGame(ev) {
  ev.preventDefault();
  const f = document.getElementById("new-game-form");
  const body = {
    variant: f.variant.value,
    ply: Number(f.ply.value),
    games: Number(f.games.value),
    starter: f.starter.value,
  };
  run(async () => {
    const st = await api("POST", "", body);
    S.state = st;
    S.id = st.id;
    localStorage.setItem("doublet-game", st.id);
    history.replaceState(null, "", "#" + st.id);
    await startTurn();
  });
}

// ---------------------------------------------------------------------------------------
// Clicking and dragging: press on a checker's point, release on its destination (or
// click one, then the other).
// ---------------------------------------------------------------------------------------

function key(p) {
  return String(p);
}

function sources() {
  const out = new Set();
  if (S.opts) for (const s of S.opts.steps) out.add(key(s.from));
  return out;
}

function stepTo(from, to) {
  if (!S.opts) return null;
  return S.opts.steps.find((s) => key(s.from) === from && key(s.to) === to) || null;
}

function pointAt(ev) {
  const el = document.elementFromPoint(ev.clientX, ev.clientY);
  const g = el && el.closest("[data-point]");
  return g ? g.dataset.point : null;
}

function onDown(ev) {
  if (S.busy || !yourTurn()) return;
  const p = pointAt(ev);
  if (p === null) return;
  if (S.selected !== null && S.selected !== p) {
    const s = stepTo(S.selected, p);
    if (s) {
      S.down = null;
      step(s);
      return;
    }
  }
  if (sources().has(p)) {
    S.down = { point: p, wasSelected: S.selected === p };
    S.selected = p;
    render();
  } else {
    S.down = null;
    if (S.selected !== null) {
      S.selected = null;
      render();
    }
  }
}

function onUp(ev) {
  const d = S.down;
  S.down = null;
  if (!d) return;
  const p = pointAt(ev);
  if (p === d.point) {
    if (d.wasSelected) {
      S.selected = null;
      render();
    }
    return;
  }
  const s = p === null ? null : stepTo(d.point, p);
  if (s) step(s);
}

// ---------------------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------------------

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function pointX(p) {
  // The person's points: 1..6 bottom right, 7..12 bottom left, 13..18 top left,
  // 19..24 top right.
  if (p <= 6) return 730 - p * W;
  if (p <= 12) return 370 - (p - 6) * W;
  if (p <= 18) return 70 + (p - 13) * W;
  return 430 + (p - 19) * W;
}

function stack(g, cx, top, n, who, point) {
  const shown = Math.min(n, 5);
  for (let i = 0; i < shown; i++) {
    const cy = top ? TOP + R + 1 + i * 2 * R : BOTTOM - R - 1 - i * 2 * R;
    el("circle", { cx, cy, r: R - 1, class: "checker " + who, "data-owner": who,
                   "data-point": point }, g);
    if (i === shown - 1 && n > 5) {
      el("text", { x: cx, y: cy + 5, class: "count " + who }, g, String(n));
    }
  }
}

function trayStack(g, x, top, n, who, label) {
  // Borne-off or unentered checkers: thin slabs, 15 fit in a half.
  for (let i = 0; i < n; i++) {
    const y = top ? TOP + i * 11 : BOTTOM - 10 - i * 11;
    el("rect", { x: x + 5, y, width: 40, height: 9, rx: 2, class: "slab " + who }, g);
  }
  el("text", { x: x + 25, y: top ? TOP + 15 * 11 + 14 : BOTTOM - 15 * 11 - 6,
               class: "tray-label" }, g, label + " " + n);
}

function render() {
  const svg = document.getElementById("board");
  svg.replaceChildren();
  const st = S.state;
  if (!st) {
    el("text", { x: 405, y: 230, class: "empty" }, svg, "Choose New game to start");
    renderControls();
    return;
  }
  const board = yourTurn() && S.opts ? S.opts.board : st.board;
  const acey = st.variant === "acey-deucey";
  const src = sources();
  const dests = new Set();
  if (S.selected !== null && S.opts) {
    for (const s of S.opts.steps) if (key(s.from) === S.selected) dests.add(key(s.to));
  }
  const cls = (p) => (key(p) === S.selected ? " selected" : "") +
    (dests.has(key(p)) ? " dest" : "") + (src.has(key(p)) ? " source" : "");

  el("rect", { x: 65, y: 10, width: 670, height: 440, class: "frame" }, svg);
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p);
    const top = p >= 13;
    const n = board.points[p];
    const who = n > 0 ? "you" : "engine";
    const label = `point ${p}` + (n ? `, ${Math.abs(n)} ${n > 0 ? "yours" : "Doublet's"}` : "");
    const g = el("g", { class: "point" + cls(p), "data-point": String(p), role: "button",
                        "aria-label": label }, svg);
    el("rect", { x, y: top ? TOP : BOTTOM - POINT_H, width: W, height: POINT_H,
                 class: "hit-area" }, g);
    const tip = top ? TOP + POINT_H : BOTTOM - POINT_H;
    const base = top ? TOP : BOTTOM;
    el("polygon", { points: `${x + 2},${base} ${x + W - 2},${base} ${x + W / 2},${tip}`,
                    class: "tri " + (p % 2 ? "odd" : "even") }, g);
    el("text", { x: x + W / 2, y: top ? 16 : 456, class: "num" }, svg, String(p));
    if (n) stack(g, x + W / 2, top, Math.abs(n), who, String(p));
  }
  // The bar: Doublet's checkers in the top half, the person's in the bottom half.
  el("rect", { x: 370, y: 10, width: 60, height: 440, class: "bar" }, svg);
  const engineBar = el("g", { class: "bar-engine" }, svg);
  stack(engineBar, 400, true, board.bar.engine, "engine", "engine-bar");
  const bar = el("g", { class: "point bar-you" + cls("bar"), "data-point": "bar", role: "button",
                        "aria-label": `bar, ${board.bar.you} yours` }, svg);
  el("rect", { x: 370, y: 240, width: 60, height: 210, class: "hit-area" }, bar);
  stack(bar, 400, false, board.bar.you, "you", "bar");
  // Borne off (right), Doublet's on top, the person's below.
  const off = el("g", { class: "point tray" + cls("off"), "data-point": "off", role: "button",
                        "aria-label": `borne off, ${board.off.you} yours` }, svg);
  el("rect", { x: 745, y: 240, width: 50, height: 210, class: "hit-area" }, off);
  trayStack(off, 745, false, board.off.you, "you", "off");
  trayStack(svg, 745, true, board.off.engine, "engine", "off");
  // Unentered (Acey-Deucey, left): the person's on top (they enter on 24..19).
  if (acey) {
    const inn = el("g", { class: "point tray" + cls("in"), "data-point": "in", role: "button",
                          "aria-label": `not entered, ${board.unentered.you} yours` }, svg);
    el("rect", { x: 5, y: 10, width: 50, height: 210, class: "hit-area" }, inn);
    trayStack(inn, 5, true, board.unentered.you, "you", "in");
    trayStack(svg, 5, false, board.unentered.engine, "engine", "in");
  }
  // Pips and dice.
  el("text", { x: 220, y: 236, class: "pips", id: "pips" }, svg,
     `pips: you ${board.pips.you} · Doublet ${board.pips.engine}`);
  const dice = yourTurn() && S.opts ? S.opts.dice : [];
  const rolled = st.game.dice || [];
  const g = el("g", { id: "dice", "data-dice": rolled.join("-"),
                      "aria-label": rolled.length ? `dice ${rolled.join("-")}` : "no dice" }, svg);
  dice.forEach((d, i) => drawDie(g, 520 + i * 46, 212, d));
  renderControls();
  renderSide();
}

const PIPS = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
               4: [[-1, -1], [1, -1], [-1, 1], [1, 1]],
               5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
               6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };

function drawDie(g, x, y, d) {
  el("rect", { x, y, width: 36, height: 36, rx: 6, class: "die", "data-die": d }, g);
  for (const [dx, dy] of PIPS[d]) {
    el("circle", { cx: x + 18 + dx * 9, cy: y + 18 + dy * 9, r: 3.5, class: "pip" }, g);
  }
}

function describeResult(r) {
  if (!r) return "";
  const who = r.winner === "you" ? "You win" : "Doublet wins";
  const how = r.resigned ? " by resignation" : "";
  return `${who} a ${r.name}${how} (${r.points} point${r.points > 1 ? "s" : ""})`;
}

function describeTurn(t) {
  return `${t.dice[0]}-${t.dice[1]}: ${t.play || "no legal play"}` +
    (t.again ? " (rolls again)" : "");
}

function renderControls() {
  const st = S.state;
  const mine = yourTurn() && S.opts;
  const byId = (id) => document.getElementById(id);
  byId("undo").disabled = S.busy || !mine || S.steps.length === 0;
  byId("done").disabled = S.busy || !mine || !S.opts.complete;
  byId("hint").disabled = S.busy || !mine;
  byId("resign").disabled = S.busy || !yourTurn();
  byId("next-game").hidden = !(st && st.game.over && !st.series_over);
  const box = byId("doublets");
  box.replaceChildren();
  if (mine) {
    for (const k of S.opts.doublets) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = `${k}-${k}`;
      b.dataset.doublet = k;
      b.setAttribute("aria-label", `choose ${k}-${k}`);
      b.addEventListener("click", () => chooseDoublet(k));
      box.appendChild(b);
    }
  }
  let status = "";
  if (!st) status = "";
  else if (st.game.over) status = describeResult(st.game.result);
  else if (mine) {
    const d = st.game.dice;
    if (st.game.no_play) status = `You rolled ${d[0]}-${d[1]}: no legal play. Press Done.`;
    else if (S.opts.doublets.length) status = "Choose the doublet to play after the 1 and the 2.";
    else if (S.opts.complete && S.opts.steps.length === 0) {
      status = `${S.opts.play || "no play"}: press Done` +
        (S.opts.again ? " (then you roll again)." : ".");
    } else status = `You rolled ${d[0]}-${d[1]}. ` + (S.selected === null
      ? "Click a checker, then where it goes."
      : "Click a highlighted point to move there.");
  }
  byId("status").textContent = status;
}

function renderSide() {
  const st = S.state;
  const byId = (id) => document.getElementById(id);
  const series = st.games ? ` of ${st.games}` : ", no limit";
  byId("score").textContent =
    `You ${st.score.you} · Doublet ${st.score.engine} (game ${st.game.number}${series}; ` +
    `${st.variant}, ${st.ply} ply)`;
  const results = byId("results");
  results.replaceChildren();
  for (const r of st.results) {
    const li = document.createElement("li");
    li.textContent = describeResult(r);
    results.appendChild(li);
  }
  byId("result").textContent = st.game.over
    ? describeResult(st.game.result) + (st.series_over ? ". The series is over." : "")
    : "";
  byId("last").textContent = st.last.length
    ? st.last.map(describeTurn).join("; ")
    : (st.game.opening ? `Opening throw: you ${st.game.opening[0]}, Doublet ${st.game.opening[1]}` : "");
  const rec = byId("record");
  rec.replaceChildren();
  for (const t of st.record) {
    const li = document.createElement("li");
    li.textContent = (t.side === "you" ? "You " : "Doublet ") + describeTurn(t);
    rec.appendChild(li);
  }
}

function clearHints() {
  document.getElementById("hints").replaceChildren();
}

function showHints(doc) {
  const t = document.getElementById("hints");
  t.replaceChildren();
  const head = t.insertRow();
  for (const h of ["", "play", "equity", "win", "gammon", "lose g."]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  const pct = (x) => (100 * x).toFixed(1) + "%";
  for (const r of doc.plays) {
    const row = t.insertRow();
    row.dataset.rank = r.rank;
    const p = r.probabilities;
    for (const v of [r.rank, r.play || "no play", r.equity.toFixed(3), pct(p.win),
                     pct(p.win_gammon), pct(p.lose_gammon)]) {
      row.insertCell().textContent = String(v);
    }
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "Show";
    b.setAttribute("aria-label", `show play ${r.rank}`);
    b.addEventListener("click", () => run(async () => {
      S.steps = r.steps.slice();
      S.selected = null;
      await refreshOptions();
      render();
    }));
    row.insertCell().appendChild(b);
  }
  const cap = t.createCaption();
  cap.textContent = `${doc.count} legal play${doc.count === 1 ? "" : "s"}, ${doc.ply} ply`;
}

function setError(msg) {
  document.getElementById("error").textContent = msg;
}

// ---------------------------------------------------------------------------------------

window.addEventListener("DOMContentLoaded", () => {
  const svg = document.getElementById("board");
  svg.addEventListener("pointerdown", onDown);
  svg.addEventListener("pointerup", onUp);
  document.getElementById("undo").addEventListener("click", undo);
  document.getElementById("done").addEventListener("click", done);
  document.getElementById("hint").addEventListener("click", hint);
  document.getElementById("resign").addEventListener("click", resign);
  document.getElementById("next-game").addEventListener("click", nextGame);
  document.getElementById("new-game-form").addEventListener("submit", newGame);
  window.addEventListener("hashchange", () => {
    const id = location.hash.slice(1);
    if (id && id !== S.id) openGame(id);
  });
  render();
  const id = location.hash.slice(1) || localStorage.getItem("doublet-game");
  if (id) openGame(id);
});

function openGame(id) {
  // A game by its id (the page's address ends with #ID, so it can be bookmarked).
  run(() => loadGame(id).catch((e) => {
    localStorage.removeItem("doublet-game");
    throw e;
  }));
}
