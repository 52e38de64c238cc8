// Doublet in the browser: the game page. It draws the board (board.js), sends the
// person's steps, rolls and cube actions to the server and shows what the engine did.
// Plain JavaScript, no build step. The server is the authority: it answers which steps
// are legal next (POST /api/games/ID/steps), checks the whole play when Done is pressed
// and says in each state what may be done now (phase, cube). The partial play lives here
// until then.
"use strict";

const S = { id: null, state: null, steps: [], opts: null, selected: null, busy: false,
            down: null, notice: "" };

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
    if (e.state) {
      // The game moved on elsewhere (another tab or window): show where it is now.
      S.state = e.state;
      await startTurn().catch(() => {});
      setError("The game had moved on (in another tab or window?): this is where it is now.");
    } else {
      setError(e.message);
    }
  } finally {
    S.busy = false;
    document.body.classList.remove("busy");
    renderControls();
  }
}

async function loadGame(id) {
  // S.id changes only once the game is read: a wrong #id keeps the game on the board.
  const st = await api("GET", "/" + id);
  if (st.names) {
    // An imported match file is a record for its review, not a game to play on: its
    // address opens the review; as the stored game (an older page's) it is forgotten.
    if (localStorage.getItem("doublet-game") === id) localStorage.removeItem("doublet-game");
    if (location.hash === "#" + id) location.replace(`/review#${id}`);
    return;
  }
  S.id = id;
  S.state = st;
  // The New game form starts from this game's settings.
  const f = document.getElementById("new-game-form");
  f.variant.value = st.variant;
  f.ply.value = String(st.ply);
  f.querySelector(`input[name="kind"][value="${st.kind}"]`).checked = true;
  if (st.match && f.querySelector(`#length option[value="${st.match.length}"]`)) {
    f.length.value = String(st.match.length);
  }
  localStorage.setItem("doublet-game", id);
  if (location.hash !== "#" + id) history.replaceState(null, "", "#" + id);
  await startTurn();
}

async function startTurn() {
  S.steps = [];
  S.selected = null;
  S.opts = null;
  clearHints();
  if (moving()) await refreshOptions();
  render();
}

async function refreshOptions() {
  S.opts = await api("POST", "/" + S.id + "/steps", { steps: S.steps, move: S.state.move });
}

function phase() {
  return S.state ? S.state.game.phase : null;
}

function yourTurn() {
  return S.state && S.state.game.turn === "you";
}

function moving() {
  // The person has rolled and plays.
  return yourTurn() && phase() === "move";
}

function rolling() {
  return yourTurn() && phase() === "roll";
}

function answering() {
  // Doublet has doubled: the person takes, passes or beavers.
  return S.state && phase() === "answer" && S.state.game.to_act === "you";
}

async function change(what, body) {
  const doc = await api("POST", `/${S.id}/${what}`, { ...(body || {}), move: S.state.move });
  S.state = doc;
  return doc;
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

function act(what, body, notice) {
  run(async () => {
    S.notice = "";
    const doc = await change(what, body);
    S.notice = notice ? notice(doc) : "";
    await startTurn();
  });
}

function done() {
  act("play", { steps: S.steps });
}

function roll() {
  act("roll");
}

// A play typed in the usual notation (13/7 8/7, bar/22*, 6/off, 8/5(2)): for the
// keyboard, and for a player who prefers typing; the server checks it.
function playTyped(ev) {
  ev.preventDefault();
  const box = document.getElementById("play-text");
  const text = box.value.trim();
  if (!text) {
    setError("Type a play, like 13/7 8/7, or move the checkers on the board.");
    return;
  }
  act("play", { play: text }, () => {
    box.value = ""; // played: kept on an error, to be corrected
    return "";
  });
}

function double() {
  act("double", undefined, (doc) => engineAnswer(doc));
}

function engineAnswer(doc) {
  const t = doc.last.find((x) => x.side === "engine" && x.action !== "play");
  if (!t) return "";
  if (t.action === "take") return `Doublet takes: the cube is at ${doc.cube.value}, Doublet's.`;
  if (t.action === "beaver") return `Doublet beavers: the cube is at ${t.cube}, Doublet's.`;
  if (t.action === "pass") return "Doublet passes.";
  return "";
}

function hint() {
  run(async () => {
    const doc = await api("GET", "/" + S.id + "/hint");
    showHints(doc);
  });
}

function kindValue(k) {
  // The points a resignation of kind k (1 single, 2 gammon, 3 backgammon) concedes now.
  const st = S.state;
  const jacoby = st.rules.jacoby && st.kind === "money" && st.cube.value === 1;
  return st.cube.value * (jacoby ? 1 : k);
}

async function resign() {
  const names = { 1: "a single game", 2: "a gammon", 3: "a backgammon" };
  const choices = [1, 2, 3].map((k) => {
    const v = kindValue(k);
    return { value: String(k), id: `resign-${k}`,
             label: `${names[k]} (${v} point${v === 1 ? "" : "s"})` };
  });
  choices.push({ value: "", id: "resign-cancel", label: "Cancel" });
  const got = await ask("Resign: what do you offer Doublet? It accepts only what is worth " +
                        "at least playing on to it.", choices);
  if (!got) return;
  act("resign", { points: Number(got) }, (doc) => doc.resignation ? doc.resignation.message : "");
}

function nextGame() {
  act("next");
}

function inProgress() {
  const st = S.state;
  return !!st && !st.series_over && (st.record.length > 0 || st.results.length > 0);
}

function openNewGame() {
  const d = document.getElementById("new-dialog");
  syncNewForm();
  document.body.classList.add("asking"); // until the dialog closes: see ask()
  d.showModal();
}

function syncNewForm() {
  const f = document.getElementById("new-game-form");
  const kind = f.querySelector('input[name="kind"]:checked').value;
  for (const e of f.querySelectorAll(".money-only")) e.hidden = kind !== "money";
  for (const e of f.querySelectorAll(".not-match")) e.hidden = kind === "match";
  f.length.disabled = kind !== "match";
}

async function newGame() {
  const f = document.getElementById("new-game-form");
  const kind = f.querySelector('input[name="kind"]:checked').value;
  const body = {
    variant: f.variant.value,
    ply: Number(f.ply.value),
    starter: f.starter.value,
    games: kind === "match" ? 0 : Number(f.games.value),
    length: kind === "match" ? Number(f.length.value) : 0,
    cube: kind !== "series",
    jacoby: kind === "money" && f.jacoby.checked,
    beavers: kind === "money" && f.beavers.checked,
  };
  if (inProgress()) {
    const what = S.state.kind === "match" ? "the match" : "the game";
    const sure = await ask(`Replace ${what} in progress with a new one? (It stays saved: ` +
                           "its address is in your browser's history.)",
                           [{ value: "yes", id: "ask-yes", label: "Start the new one" },
                            { value: "", id: "ask-no", label: "Keep playing" }]);
    if (!sure) return;
  }
  run(async () => {
    const st = await api("POST", "", body);
    S.state = st;
    S.id = st.id;
    S.notice = "";
    localStorage.setItem("doublet-game", st.id);
    history.pushState(null, "", "#" + st.id);
    await startTurn();
  });
}

function ask(text, choices) {
  // A question in a modal dialog; resolves with the chosen button's value ("" for none).
  const d = document.getElementById("ask-dialog");
  document.getElementById("ask-text").textContent = text;
  const box = document.getElementById("ask-buttons");
  box.replaceChildren();
  for (const c of choices) {
    const b = document.createElement("button");
    b.type = "submit";
    b.value = c.value;
    b.id = c.id;
    b.textContent = c.label;
    if (c.value) b.className = "main";
    box.appendChild(b);
  }
  return new Promise((resolve) => {
    d.returnValue = "";
    d.addEventListener("close", () => {
      document.body.classList.remove("asking");
      resolve(d.returnValue);
    }, { once: true });
    document.body.classList.add("asking");
    d.showModal();
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
  const e = document.elementFromPoint(ev.clientX, ev.clientY);
  const g = e && e.closest("[data-point]");
  return g ? g.dataset.point : null;
}

function onDown(ev) {
  if (S.busy || !moving()) return;
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

// The keyboard: Enter or Space on a focused point picks it, as a click does (a source,
// then its destination).
function onKey(ev) {
  if (ev.key !== "Enter" && ev.key !== " ") return;
  const g = ev.target.closest && ev.target.closest("[data-point]");
  if (!g) return;
  ev.preventDefault();
  if (S.busy || !moving()) return;
  const p = g.dataset.point;
  if (S.selected !== null && S.selected !== p) {
    const s = stepTo(S.selected, p);
    if (s) {
      step(s);
      return;
    }
  }
  S.selected = sources().has(p) && S.selected !== p ? p : null;
  render();
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

function engineDice(st) {
  // The engine's roll since the person's last turn (the dice it played), if any.
  const plays = st.last.filter((t) => t.action === "play" && t.dice);
  return plays.length ? plays[plays.length - 1].dice : null;
}

function render() {
  const svg = document.getElementById("board");
  const st = S.state;
  if (!st) {
    drawBoard(svg, null, { empty: "Choose New game to start" });
    renderControls();
    return;
  }
  const src = sources();
  const dests = new Set();
  if (S.selected !== null && S.opts) {
    for (const s of S.opts.steps) if (key(s.from) === S.selected) dests.add(key(s.to));
  }
  const classOf = (p) => (p === S.selected ? " selected" : "") +
    (dests.has(p) ? " dest" : "") + (src.has(p) ? " source" : "");
  const mine = moving() && S.opts;
  const view = mine ? S.opts.board : st.board;
  const marks = { engine: st.last_play.engine ? st.last_play.engine.moves : [] };
  if (!moving() && st.last_play.you) marks.you = st.last_play.you.moves;
  // A point that had the keyboard focus keeps it through the redraw.
  const had = document.activeElement;
  const focused = had && svg.contains(had) && had.dataset ? had.dataset.point : null;
  drawBoard(svg, view, {
    variant: st.variant,
    focusable: true,
    classOf,
    cube: st.rules.cube ? { value: st.cube.value, owner: st.cube.owner,
                            offered: phase() === "answer" } : null,
    dice: { you: moving() ? st.game.dice : null, engine: engineDice(st) },
    unused: mine ? S.opts.dice : null,
    marks,
  });
  if (focused) {
    const g = svg.querySelector(`[data-point="${focused}"]`);
    if (g) g.focus();
  }
  renderControls();
  renderSide();
}

function describeTurn(t) {
  const you = t.side === "you";
  const who = you ? "You" : "Doublet";
  const s = you ? "" : "s";
  if (t.action === "double") return `${who} double${s} to ${t.cube}`;
  if (t.action === "take") return `${who} take${s}`;
  if (t.action === "pass") return `${who} pass${you ? "" : "es"}`;
  if (t.action === "beaver") return `${who} beaver${s}: the cube is at ${t.cube}`;
  return `${who} ${t.dice[0]}-${t.dice[1]}: ${t.play || "no legal play"}` +
    (t.again ? " (rolls again)" : "");
}

function show(id, on) {
  document.getElementById(id).hidden = !on;
}

function renderControls() {
  const st = S.state;
  const mine = moving() && S.opts;
  const byId = (id) => document.getElementById(id);
  const over = !st || st.game.over;
  show("roll", !!st && rolling());
  show("double", !!st && rolling() && st.cube.may_double);
  show("take", !!st && answering());
  show("pass", !!st && answering());
  show("beaver", !!st && answering() && st.cube.may_beaver);
  for (const id of ["roll", "double", "take", "pass", "beaver"]) byId(id).disabled = S.busy;
  if (st && rolling()) byId("double").textContent = st.cube.owner ? `Redouble to ${2 * st.cube.value}` : "Double";
  show("play-form", !!st && moving());
  byId("play-typed").disabled = S.busy;
  show("undo", !st || moving());
  show("done", !st || moving());
  byId("undo").disabled = S.busy || !mine || S.steps.length === 0;
  byId("done").disabled = S.busy || !mine || !S.opts.complete;
  byId("hint").disabled = S.busy || over || !(moving() || rolling() || answering());
  // No resigning while a double waits for its answer: the server refuses it (pass instead).
  byId("resign").disabled = S.busy || over || phase() === "answer";
  show("next-game", !!st && st.game.over && !st.series_over);
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
  byId("status").textContent = statusText();
  byId("answer").textContent = S.notice;
}

function statusText() {
  const st = S.state;
  if (!st) return "";
  if (st.game.over) return describeResult(st.game.result, st.names) + "." + overText(st);
  if (answering()) {
    const offer = 2 * st.cube.value;
    const beaver = st.cube.may_beaver ? `, or beaver (the cube at ${2 * offer}, yours)` : "";
    return `Doublet doubles: the cube would be at ${offer}, yours. Take${beaver}, or pass ` +
      `(Doublet wins ${st.cube.value} point${st.cube.value === 1 ? "" : "s"})?`;
  }
  if (rolling()) {
    return st.cube.may_double ? `Your turn: roll, or ${st.cube.owner ? "redouble" : "double"} ` +
      `to ${2 * st.cube.value}.` : "Your turn: roll.";
  }
  if (!moving() || !S.opts) return "";
  const d = st.game.dice;
  if (st.game.no_play) return `You rolled ${d[0]}-${d[1]}: no legal play. Press Done.`;
  if (S.opts.doublets.length) return "Choose the doublet to play after the 1 and the 2.";
  if (S.opts.complete && S.opts.steps.length === 0) {
    return `${S.opts.play || "no play"}: press Done` + (S.opts.again ? " (then you roll again)." : ".");
  }
  return `You rolled ${d[0]}-${d[1]}. ` + (S.selected === null
    ? "Click a checker, then where it goes."
    : "Click a highlighted point to move there.");
}

function overText(st) {
  if (!st.series_over) return "";
  if (st.winner) {
    const who = st.winner === "you" ? "You win" : "Doublet wins";
    return ` ${who} the match, ${st.score[st.winner]}-${st.score[st.winner === "you" ? "engine" : "you"]}.`;
  }
  return " The series is over.";
}

function renderSide() {
  const st = S.state;
  const byId = (id) => document.getElementById(id);
  byId("you-score").textContent = String(st.score.you);
  byId("engine-score").textContent = String(st.score.engine);
  // During the person's play, the pips of the board as the steps so far have left it.
  const pips = (moving() && S.opts ? S.opts.board : st.board).pips;
  byId("you-pips").textContent = `${pips.you} pips`;
  byId("engine-pips").textContent = `${pips.engine} pips`;
  const info = [];
  if (st.match) {
    info.push(`${st.match.length}-point match`);
    if (st.match.stage) info.push(st.match.stage);
  } else info.push(st.kind === "money" ? "money" : "no cube");
  // A dead cube (the person's win takes the match): say why no double is offered and
  // the dice are rolled at once, in the line and, whole, as its title.
  if (st.cube.dead_note) info.push("your cube is dead");
  const mi = byId("match-info");
  mi.textContent = info.join(" · ");
  mi.title = st.cube.dead_note;
  mi.dataset.stage = st.match ? st.match.stage : "";
  byId("score-title").textContent = st.match ? "Match" : "Series";
  const series = st.match ? "" : st.games ? ` of ${st.games}` : ", no limit";
  byId("score").textContent =
    `You ${st.score.you} · Doublet ${st.score.engine} (game ${st.game.number}${series}; ` +
    `${st.describe}; ${st.variant}, ${st.ply} ply)`;
  const results = byId("results");
  results.replaceChildren();
  for (const r of st.results) {
    const li = document.createElement("li");
    li.textContent = describeResult(r, st.names);
    results.appendChild(li);
  }
  byId("result").textContent = st.game.over ? describeResult(st.game.result, st.names) + "." + overText(st) : "";
  byId("last").textContent = st.last.length
    ? "Doublet: " + st.last.map((t) => describeTurn(t).replace(/^Doublet /, "")).join("; ")
    : (st.game.opening && !st.game.over && st.record.length === 0
      ? `Opening throw: you ${st.game.opening[0]}, Doublet ${st.game.opening[1]}` : "");
  const yours = st.last_play.you;
  byId("last-yours").textContent = yours && !moving()
    ? `You: ${yours.dice[0]}-${yours.dice[1]}: ${yours.play || "no legal play"}` : "";
  const rec = byId("record");
  rec.replaceChildren();
  for (const t of st.record) {
    const li = document.createElement("li");
    li.textContent = describeTurn(t);
    li.dataset.side = t.side;
    rec.appendChild(li);
  }
  rec.scrollTop = rec.scrollHeight;
  const review = byId("review-link");
  review.hidden = st.results.length === 0;
  review.href = `/review#${st.id}`;
  const mat = byId("mat-link");
  mat.hidden = st.record.length === 0 && st.results.length === 0;
  // A .mat file holds standard games from the opening: else the text record.
  mat.href = `/api/games/${st.id}/${st.mat_file ? "mat" : "export"}`;
  mat.textContent = st.mat_file ? "Download .mat" : "Download record";
}

function clearHints() {
  document.getElementById("hints").replaceChildren();
  document.getElementById("cube-hint").textContent = "";
}

function showHints(doc) {
  clearHints();
  if (doc.kind !== "plays") {
    const c = doc.cube;
    const eq = c.equities;
    // The equities are the doubler's: Doublet's when the person answers its double.
    const whose = doc.kind === "answer" ? "for Doublet, the doubler: " : "";
    const nums = `${whose}no double ${signed(eq.no_double)}, double/${c.beaver ? "beaver" : "take"} ` +
      `${signed(eq.double_take)}, double/pass ${signed(eq.double_pass)}`;
    const answer = c.beaver ? "beaver" : c.take ? "take" : "pass";
    const advice = doc.kind === "answer" ? answer : (c.double ? "double" : "roll");
    document.getElementById("cube-hint").textContent =
      `${c.action} (${doc.ply} ply): ${nums}. You should ${advice}.`;
    return;
  }
  const t = document.getElementById("hints");
  const rows = playRows(t, doc.plays);
  doc.plays.forEach((r, i) => {
    const row = rows[i];
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
  });
  const cap = t.createCaption();
  cap.textContent = `${doc.count} legal play${doc.count === 1 ? "" : "s"}, ${doc.ply} ply` +
    (doc.cubeful ? ", cubeful equity" : "");
}

function setError(msg) {
  document.getElementById("error").textContent = msg;
}

// ---------------------------------------------------------------------------------------

window.addEventListener("DOMContentLoaded", () => {
  const svg = document.getElementById("board");
  svg.addEventListener("pointerdown", onDown);
  svg.addEventListener("pointerup", onUp);
  svg.addEventListener("keydown", onKey);
  document.getElementById("play-form").addEventListener("submit", playTyped);
  const on = (id, f) => document.getElementById(id).addEventListener("click", f);
  on("undo", undo);
  on("done", done);
  on("roll", roll);
  on("double", double);
  on("take", () => act("take"));
  on("pass", () => act("pass"));
  on("beaver", () => act("beaver"));
  on("hint", hint);
  on("resign", resign);
  on("next-game", nextGame);
  on("new-game", openNewGame);
  const form = document.getElementById("new-game-form");
  form.addEventListener("change", syncNewForm);
  document.getElementById("new-dialog").addEventListener("close", (ev) => {
    document.body.classList.remove("asking");
    if (ev.target.returnValue === "start") newGame();
  });
  window.addEventListener("hashchange", openFromHash);
  render();
  const id = location.hash.slice(1) || localStorage.getItem("doublet-game");
  if (id) openGame(id);
});

function openFromHash() {
  // Another game's address: open it once the page is not busy.
  const id = location.hash.slice(1);
  if (!id || id === S.id) return;
  if (S.busy) setTimeout(openFromHash, 100);
  else openGame(id);
}

function openGame(id) {
  // A game by its id (the page's address ends with #ID, so it can be bookmarked). One
  // that cannot be read is forgotten only if it is the stored one; the game on the
  // board, if any, stays, and so does the address of it.
  run(() => loadGame(id).catch((e) => {
    if (localStorage.getItem("doublet-game") === id) localStorage.removeItem("doublet-game");
    if (S.id) history.replaceState(null, "", "#" + S.id);
    throw e;
  }));
}
