// The review of a finished game: step through it decision by decision with the board,
// each play and cube action with the engine's verdict and the equity lost, and the
// game's totals (GET /api/games/ID/review, doublet.games.review.review_game). The address
// is /review#ID; ?game=N&ply=P choose the game of the series and the depth.
"use strict";

const R = { id: null, state: null, doc: null, at: 0 };
const WHO = { you: "You", engine: "Doublet" };

async function getJSON(path) {
  const res = await fetch(path);
  const doc = await res.json();
  if (!res.ok) throw new Error(doc.error || res.statusText);
  return doc;
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

function setError(text) {
  document.getElementById("error").textContent = text;
}

async function start() {
  R.id = location.hash.slice(1) || localStorage.getItem("doublet-game");
  if (!R.id) {
    setError("No game to review: play one first, or open a match file (.mat, .sgf) above.");
    return;
  }
  // Back to the person's own game (the one the play page last had), not to an imported
  // match, which is a file's, not a game to go on with.
  const own = localStorage.getItem("doublet-game");
  document.getElementById("game-link").href = own ? "/#" + own : "/";
  try {
    R.state = await getJSON(`/api/games/${R.id}`);
  } catch (e) {
    setError(e.message);
    return;
  }
  // A match file's players have their own names; a game played here is You and Doublet.
  R.named = Boolean(R.state.names);
  WHO.you = R.named ? R.state.names[0] : "You";
  WHO.engine = R.named ? R.state.names[1] : "Doublet";
  document.querySelector("#scorebar .player.you b").textContent = WHO.you;
  document.querySelector("#scorebar .player.engine b").textContent = WHO.engine;
  const finished = R.state.results.length;
  const sel = document.getElementById("game");
  sel.replaceChildren();
  for (let n = 1; n <= finished; n++) {
    const o = document.createElement("option");
    o.value = String(n);
    const r = R.state.results[n - 1];
    o.textContent = `${n}: ${describeResult(r, R.state.names)}`;
    sel.appendChild(o);
  }
  if (!finished) {
    setError("No game of this series is finished yet: the review comes when one is.");
    return;
  }
  const q = new URLSearchParams(location.search);
  sel.value = q.get("game") || String(finished);
  document.getElementById("review-ply").value = q.get("ply") || String(Math.min(R.state.ply, 1));
  await load();
}

async function load() {
  const game = document.getElementById("game").value;
  const ply = document.getElementById("review-ply").value;
  setError("");
  setStatus(`Reviewing game ${game} at ${ply} ply…`);
  document.body.classList.add("busy");
  try {
    R.doc = await getJSON(`/api/games/${R.id}/review?game=${game}&ply=${ply}`);
  } catch (e) {
    setError(e.message);
    setStatus("");
    return;
  } finally {
    document.body.classList.remove("busy");
  }
  const g = R.doc.game;
  document.getElementById("title").textContent =
    `Review of game ${g.number}: ${describeResult(R.doc.final.result, R.state.names)}`;
  setStatus(`${R.doc.turns.length} entries, ${R.doc.ply} ply`);
  renderTotals();
  renderEntries();
  go(0);
}

function entryText(e) {
  const who = WHO[e.who];
  if (e.kind === "play") {
    const play = e.play || "no legal play";
    return `${who} ${e.dice[0]}-${e.dice[1]}: ${play}` + (e.forced ? " (forced)" : "");
  }
  const s = e.who === "you" && !R.named ? "" : "s";
  if (e.kind === "double") return `${who} double${s} to ${e.cube_value}`;
  if (e.kind === "take") return `${who} take${s}`;
  if (e.kind === "pass") return `${who} pass${e.who === "you" ? "" : "es"}`;
  if (e.kind === "beaver") return `${who} beaver${s} (the cube at ${e.cube_value})`;
  return `${who} ${e.kind}`;
}

function verdictCell(td, loss, verdict) {
  td.textContent = verdict ? `${verdict} (−${loss.toFixed(3)})` : loss > 0 ? `−${loss.toFixed(3)}` : "✓";
  if (verdict) td.className = "verdict-" + verdict.replace(" ", "-");
}

function worst(e) {
  // An entry's worst judgement: its own, or its cube decision before the roll.
  const own = { loss: e.loss || 0, verdict: e.verdict || "" };
  if (e.cube && e.cube.loss > own.loss) return { loss: e.cube.loss, verdict: e.cube.verdict };
  return own;
}

function renderEntries() {
  const t = document.getElementById("entry-table");
  t.replaceChildren();
  const head = t.insertRow();
  for (const h of ["#", "decision", "verdict"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  R.doc.turns.forEach((e, i) => {
    const row = t.insertRow();
    row.dataset.index = String(i);
    row.dataset.kind = e.kind;
    row.insertCell().textContent = String(i + 1);
    row.insertCell().textContent = entryText(e);
    const w = worst(e);
    verdictCell(row.insertCell(), w.loss, w.verdict);
    row.addEventListener("click", () => go(i));
  });
  const end = t.insertRow();
  end.dataset.index = String(R.doc.turns.length);
  end.insertCell().textContent = "";
  end.insertCell().textContent = describeResult(R.doc.final.result, R.state.names);
  end.insertCell().textContent = "";
  end.addEventListener("click", () => go(R.doc.turns.length));
}

function renderTotals() {
  const t = document.getElementById("totals");
  t.replaceChildren();
  const head = t.insertRow();
  for (const h of ["", WHO.you, WHO.engine]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  const rows = [
    ["decisions", "decisions counted", (x) => String(x)],
    ["unforced", "unforced plays", (x) => String(x)],
    ["checker_error", "checker error", (x) => x.toFixed(3)],
    ["cube_error", "cube error", (x) => x.toFixed(3)],
    ["error_rate_memg", "error rate (mEMG)", (x) => x.toFixed(1)],
    ["pr", "PR", (x) => x.toFixed(1)],
  ];
  for (const [k, label, f] of rows) {
    const row = t.insertRow();
    row.dataset.total = k;
    row.insertCell().textContent = label;
    for (const side of R.doc.totals) row.insertCell().textContent = f(side[k]);
  }
}

function go(i) {
  const n = R.doc.turns.length;
  R.at = Math.max(0, Math.min(n, i));
  const svg = document.getElementById("board");
  const variant = R.doc.variant;
  const cubeOn = R.doc.rules.cube;
  const byId = (id) => document.getElementById(id);
  for (const row of document.querySelectorAll("#entry-table tr[data-index]")) {
    row.classList.toggle("current", Number(row.dataset.index) === R.at);
  }
  const cur = document.querySelector("#entry-table tr.current");
  if (cur) cur.scrollIntoView({ block: "nearest" });
  byId("where").textContent = R.at < n ? `Decision ${R.at + 1} of ${n}` : "The end";
  byId("first").disabled = byId("prev").disabled = R.at === 0;
  byId("next").disabled = byId("last").disabled = R.at === n;
  const g = R.doc.game;
  byId("you-score").textContent = String(g.score.you);
  byId("engine-score").textContent = String(g.score.engine);
  byId("match-info").textContent = g.length
    ? `${g.length}-point match` + (g.crawford ? " · Crawford game" : "") : (cubeOn ? "money" : "no cube");
  const detail = byId("detail");
  detail.replaceChildren();
  if (R.at === n) {
    const f = R.doc.final;
    drawBoard(svg, f.board, { variant });
    pips(f.board);
    para(detail, describeResult(f.result, R.state.names) + ".");
    return;
  }
  const e = R.doc.turns[R.at];
  drawBoard(svg, e.board, {
    variant,
    cube: cubeOn ? e.cube_before : null,
    dice: e.dice ? { [e.who]: e.dice } : {},
    marks: { [e.who]: e.moves },
  });
  pips(e.board);
  para(detail, entryText(e), "entry");
  if (e.cube) {
    para(detail, `Before the roll: ${e.cube.proper}. ` + (e.cube.verdict
      ? `Not doubling was ${e.cube.verdict}: −${e.cube.loss.toFixed(3)}.`
      : e.cube.loss > 0 ? `Not doubling lost ${e.cube.loss.toFixed(3)}.` : "Rolling was right."),
         "cube-verdict");
  }
  if (e.kind === "play") {
    if (e.forced) para(detail, "Forced: " + (e.play ? "the only legal play." : "no legal play."));
    else {
      para(detail, (e.verdict ? `${cap(e.verdict)}: ` : e.loss > 0 ? "" : "Best play. ") +
           (e.loss > 0 ? `lost ${e.loss.toFixed(3)} against the best, ${e.best}.` : ""),
           "play-verdict");
      detail.appendChild(playsTable(e));
    }
  } else {
    para(detail, `Proper action: ${e.best}. ` + (e.verdict
      ? `${cap(e.verdict)}: −${e.loss.toFixed(3)}.` : e.loss > 0 ? `Lost ${e.loss.toFixed(3)}.` : "Right."),
         "cube-verdict");
  }
}

function pips(view) {
  document.getElementById("you-pips").textContent = `${view.pips.you} pips`;
  document.getElementById("engine-pips").textContent = `${view.pips.engine} pips`;
}

function cap(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function para(parent, text, cls) {
  const p = document.createElement("p");
  p.textContent = text;
  if (cls) p.className = cls;
  parent.appendChild(p);
}

function playsTable(e) {
  const t = document.createElement("table");
  t.className = "plays";
  t.id = "plays";
  const head = t.insertRow();
  for (const h of ["play", "equity", "loss"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  for (const r of e.plays) {
    const row = t.insertRow();
    if (r.play === e.play) row.className = "current";
    row.insertCell().textContent = r.play || "no play";
    row.insertCell().textContent = signed(r.equity);
    row.insertCell().textContent = r.loss.toFixed(3);
  }
  return t;
}

// A match file (.mat or GNU Backgammon's .sgf) read here and sent to POST /api/import:
// its games are replayed by the server and stored as a series, reviewed as one.
async function importFile(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  setError("");
  setStatus(`Reading ${file.name}…`);
  try {
    const text = await file.text();
    const res = await fetch("/api/import", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text, name: file.name }),
    });
    const doc = await res.json();
    if (!res.ok) throw new Error(doc.error || res.statusText);
    history.replaceState(null, "", `/review#${doc.id}`);
    await start();
  } catch (e) {
    setError(`${file.name}: ${e.message}`);
    setStatus("");
  }
}

window.addEventListener("DOMContentLoaded", () => {
  const on = (id, f) => document.getElementById(id).addEventListener("click", f);
  on("first", () => go(0));
  on("prev", () => go(R.at - 1));
  on("next", () => go(R.at + 1));
  on("last", () => go(R.doc.turns.length));
  document.getElementById("review-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    load();
  });
  document.getElementById("import-file").addEventListener("change", importFile);
  window.addEventListener("keydown", (ev) => {
    if (!R.doc || ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowRight") go(R.at + 1);
    if (ev.key === "ArrowLeft") go(R.at - 1);
  });
  drawBoard(document.getElementById("board"), null, { empty: "" });
  start();
});
