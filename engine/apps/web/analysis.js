// The analysis page: a gnubg ID (with or without its Match ID) or an XGID, optional cube
// and score fields; shows the cube decision (cube_document) and the ranked plays of a
// roll (analyse_roll) from POST /api/page/analysis, and starts a game there (POST /api/games
// with the same position). /analysis?position=ID fills the form and analyses it.
"use strict";

const A = { request: null, doc: null };

async function post(path, body) {
  const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                  body: JSON.stringify(body) });
  const doc = await res.json();
  if (!res.ok) throw new Error(doc.error || res.statusText);
  return doc;
}

function request() {
  // The form as a request; empty fields leave the ID's own values.
  const v = (id) => document.getElementById(id).value.trim();
  const body = { position: v("position"), ply: Number(v("ply")) };
  const dice = v("dice").replace(/[^1-6]/g, "");
  if (v("dice")) {
    if (dice.length !== 2) throw new Error("dice are two numbers 1..6, like 31 or 3-1");
    body.dice = [Number(dice[0]), Number(dice[1])];
  }
  const state = {};
  // A field that only means something beside another is refused alone, not dropped.
  if (v("cube-owner") && !v("cube-value")) {
    throw new Error("the cube's owner goes with its value: choose the cube too");
  }
  if (v("cube-value")) {
    const value = Number(v("cube-value"));
    if (value > 1 && !v("cube-owner")) throw new Error(`a cube at ${value} has an owner: choose it`);
    if (value === 1 && v("cube-owner")) throw new Error("a cube at 1 is centred: it has no owner");
    state.cube = { value, owner: value === 1 ? "centered" : v("cube-owner") };
  }
  const scored = v("score-mover") !== "" || v("score-opponent") !== "";
  const money = v("match-length") === "" || Number(v("match-length")) === 0;
  if ((scored || v("crawford") === "yes") && money) {
    throw new Error("a score and the Crawford game go with a match: give its length too");
  }
  if (v("match-length") !== "") {
    const length = Number(v("match-length"));
    if (length === 0) state.match = null;
    else {
      state.match = { length, score: [Number(v("score-mover") || 0), Number(v("score-opponent") || 0)],
                      crawford: v("crawford") === "yes" };
    }
  }
  if (v("jacoby")) state.jacoby = v("jacoby") === "yes";
  body.state = state;
  return body;
}

async function analyse(ev) {
  if (ev) ev.preventDefault();
  const err = document.getElementById("error");
  err.textContent = "";
  document.body.classList.add("busy");
  try {
    A.request = request();
    A.doc = await post("/api/page/analysis", A.request);
    show(A.doc);
  } catch (e) {
    err.textContent = e.message;
    A.doc = null;  // no analysis of another position beside the error
    document.getElementById("analysis-result").hidden = true;
  } finally {
    document.body.classList.remove("busy");
  }
}

function cubeOwner(state) {
  const o = state.cube.owner;
  return o === "centered" ? null : o === "mover" ? "you" : "engine";
}

function show(doc) {
  document.getElementById("analysis-result").hidden = false;
  document.getElementById("state-text").textContent =
    doc.state_text + (doc.position_id ? ` · ${doc.position_id}` : "");
  drawBoard(document.getElementById("board"), doc.board, {
    variant: doc.variant,
    cube: { value: doc.state.cube.value, owner: cubeOwner(doc.state) },
    dice: doc.dice ? { you: doc.dice } : {},
    names: { you: "the side on roll's", engine: "the opponent's" },
  });
  const c = doc.cube;
  const box = document.getElementById("cube-decision");
  box.replaceChildren();
  const line = (text, cls) => {
    const p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    box.appendChild(p);
  };
  line(`${c.action} (${c.ply} ply)`, "action");
  const eq = c.equities;
  const t = document.createElement("table");
  t.className = "plays";
  t.id = "cube-table";
  const head = t.insertRow();
  for (const h of ["", "equity", ...(c.mwc ? ["MWC"] : [])]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  // With beavers a take the doubler loses on is a beaver: double_take is the beavered game's.
  const take = c.beaver ? "Double, beaver" : "Double, take";
  for (const [k, label] of [["no_double", "No double"], ["double_take", take],
                            ["double_pass", "Double, pass"]]) {
    const row = t.insertRow();
    row.dataset.key = k;
    row.insertCell().textContent = label;
    row.insertCell().textContent = signed(eq[k]);
    if (c.mwc) row.insertCell().textContent = c.mwc[k] === null ? "–" : pct(c.mwc[k]);
  }
  box.appendChild(t);
  const p = c.probabilities;
  line(`Win ${pct(p.win)} (gammon ${pct(p.win_gammon)}), lose gammon ${pct(p.lose_gammon)}; ` +
       `cubeless equity ${signed(c.cubeless_equity)}`);
  const plays = document.getElementById("plays");
  plays.replaceChildren();
  const title = document.getElementById("plays-title");
  if (!doc.roll) {
    title.textContent = "Plays: give the dice to rank the plays of a roll";
    return;
  }
  const r = doc.roll;
  title.textContent = `Plays of ${r.dice[0]}-${r.dice[1]} (${r.count} legal, ${r.ply} ply, ` +
    `${r.equity === "cubeful" ? "cubeful" : "cubeless"} equity)`;
  playRows(plays, r.plays);
}

async function playHere() {
  const err = document.getElementById("error");
  err.textContent = "";
  try {
    const st = await post("/api/games", request());  // the form as it is now
    localStorage.setItem("doublet-game", st.id);
    location.href = "/#" + st.id;
  } catch (e) {
    err.textContent = e.message;
  }
}

window.addEventListener("DOMContentLoaded", () => {
  document.getElementById("analyse-form").addEventListener("submit", analyse);
  document.getElementById("play-here").addEventListener("click", playHere);
  const q = new URLSearchParams(location.search);
  if (q.get("position")) {
    document.getElementById("position").value = q.get("position");
    if (q.get("dice")) document.getElementById("dice").value = q.get("dice");
    analyse();
  }
});
