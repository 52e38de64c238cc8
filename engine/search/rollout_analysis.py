"""Rollout documents for people and programs: ``doublet rollout``, ``analyse --rollout``
and the engine protocol's ``rollout`` command (the rollouts themselves:
doublet.search.rollout).

JSON of a position's rollout (numbers rounded to 6 decimals)::

    {"variant": "standard", "position": {...}, "position_id": "...", "pips": {...},
     "rollout": {"trials": 1296, "trials_asked": 1296, "ply": 0, "truncate": 0,
                 "bearoff": true, "luck": true, "seed": 1, "quasi": 2, "until_se": null,
                 "cubeful": false, "cube_ply": 0,
                 "seconds": ..., "trials_per_second": ..., "mean_plays": ..., "where": ...,
                 "equity_plain": ..., "equity_plain_se": ...},   # not luck-adjusted
     "probabilities": {...}, "probabilities_se": {...}, "equity": ..., "equity_se": ...,
     "cube": {"double": ..., "take": ..., "action": ..., "equities": {...},
              "optimal": ..., "mwc": {...},             # mwc: match play only
              "equities_se": {...}, "method": "janowski", "state": {...}},
     "state_text": "...",    # the cube and score in words, away from money with the
                             # cube centered
     "stopped": "..."}       # only when it stopped before the trials asked (or, with
                             # dice, the search picked the plays short of select_ply)

The probabilities (clamped into their ranges: the luck adjustment can take a rare
event's mean a little below 0) and "equity" (the unclamped means') are cubeless, and so
are the trials by default: the cube
decision is Janowski's conversion of the rollout's probabilities at the root
(``"method": "janowski"``; a small bear-off in money has the exact values of
doublet.cube.bearoff instead, ``"exact": true``). With ``cubeful`` (``--cubeful``) the
same trials are also played with the cube (doublet.search.rollout_cube), once with no
double now and once doubled and taken, and the decision is theirs (``"method":
"rollout"``, and
``equities_se`` has "difference": the standard error of double / take less no double,
trial by trial).

With dice, instead of the probabilities and the cube: ``"dice": [d1, d2]`` and
``"plays"``, ranked by the rollout's equity (cubeful, ``"equity": "cubeful"``,
``"state"`` and ``"state_text"``, away from money with the cube centered: Janowski's
conversion after each play, or with ``cubeful`` the trials played with the cube, the
opponent on roll first),
each ``{"rank", "play", "equity", "equity_se", "difference", "difference_se",
"probabilities", "probabilities_se", "search": {"rank", "ply", "equity"}, "mwc",
"position_id"}``: the difference to the best play and its standard error measured on
the same trials (paired), where the search ranked the play, and in a match its
match-winning chance (the trials' mean with the cube in them, else that of the mean
chances, as analyse gives it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.core.board import STANDARD
from doublet.core.errors import DoubletError, InvalidDiceError, shown
from doublet.core.parallel import Executor
from doublet.cube import bearoff as CB
from doublet.cube import equity as E
from doublet.cube.state import MONEY, CubeState
from doublet.formats.ids import check_in_play
from doublet.formats.position import Position
from doublet.nn.eval import N_OUTPUTS, Model, _terminal, default_model
from doublet.search.analysis import (
    NO_PLAY_ROW,
    analyse_roll,
    one_at_a_time,
    play_equities,
    searcher,
)
from doublet.search.cubeful import _other, _scale, leaf_values
from doublet.search.rollout import (
    EQUITY_GRADIENT,
    PROB_NAMES,
    Cube,
    Progress,
    RolloutSettings,
    Trials,
    flip_values,
    gradient,
    normalise,
    rollout,
)
from doublet.search.searcher import MAX_PLY, Searcher

# With a roll in money play with the cube centred (no owned cube, no Jacoby), the plays are
# ranked by cubeless equity (analyse_roll's ranking there) and no cube is turned, so a cube
# option (a cubeful rollout, beavers) would do nothing: the front ends refuse one with this.
NO_CUBE_WITH_ROLL = (
    "with a roll in money play with the cube centred (no owned cube, no "
    "Jacoby) the plays are ranked by cubeless equity and no cube is turned"
)


# What each cube option does, for that error: doublet analyse's and rollout's flags
# (--cubeful, --beavers) and the engine protocol's keys ("cubeful", "beavers").
CUBE_OPTIONS = {
    "cubeful": "plays the cube in the trials",
    "beavers": "lets the taker of a double beaver",
}


def no_cube_with_roll(state: CubeState) -> bool:
    """Whether a roll's plays in `state` are ranked with no cube in them (NO_CUBE_WITH_ROLL):
    money play with the cube centred and no Jacoby."""
    return state.is_default


# -- documents --------------------------------------------------------------------------------


def _probs(p: np.ndarray) -> dict[str, float]:
    return {k: round(float(v), 6) for k, v in zip(PROB_NAMES, p, strict=True)}


def _chances(p: np.ndarray) -> dict[str, float]:
    """_probs of luck-adjusted means, made chances again: the adjustment can take a rare
    event's mean a little below 0 (a backgammon the trials never saw, its luck counted
    against it), or a gammon's above its win's; each is clamped into its range (win in
    [0, 1], gammons within the wins, backgammons within the gammons). The equities are
    the unclamped means' (unbiased); the difference is far inside their errors."""
    win = min(max(float(p[0]), 0.0), 1.0)
    wg = min(max(float(p[1]), 0.0), win)
    lg = min(max(float(p[3]), 0.0), 1.0 - win)
    return _probs(np.array([win, wg, min(max(float(p[2]), 0.0), wg), lg,
                            min(max(float(p[4]), 0.0), lg)]))  # fmt: skip


def _header(pos: Position, t: Trials) -> dict[str, Any]:
    mine, theirs = pos.pip_counts()
    doc: dict[str, Any] = {"variant": B.VARIANT_NAMES[pos.variant], "position": pos.to_json(),
                           "position_id": pos.id(),
                           "pips": {"mover": mine, "opponent": theirs}}  # fmt: skip
    seconds = max(t.seconds, 1e-9)
    moves = t.moves.size
    doc["rollout"] = {"trials": t.n, "trials_asked": t.settings.trials, **t.settings.to_json(),
                      "seconds": round(t.seconds, 3),
                      "trials_per_second": round(t.n * t.raw.shape[0] / seconds, 2),
                      "mean_plays": round(float(t.moves.mean()), 2) if moves else 0.0,
                      "where": t.where}  # fmt: skip
    if t.stopped:
        doc["stopped"] = t.stopped
    return doc


def _linear(fn: Callable[[np.ndarray], float], values: np.ndarray
            ) -> tuple[float, np.ndarray]:  # fmt: skip
    """fn at the mean of the trial values (n, 5), and each trial's linearised
    contribution (n,) (g . (x_t - mean)): its std / sqrt(n) is fn's standard error."""
    mean = values.mean(axis=0)
    return float(fn(mean)), (values - mean) @ gradient(fn, mean)


def _se1(z: np.ndarray) -> float:
    return float(z.std(ddof=1) / np.sqrt(len(z))) if len(z) > 1 else 0.0


def _cube(values: np.ndarray, board: np.ndarray, state: CubeState) -> dict[str, Any]:
    """The cube decision from the rollout's probabilities (Janowski at the root), or a
    small bear-off's exact one in money (doublet.cube.bearoff: "exact", errors 0)."""
    x = E.efficiency(board)
    exact, end, edt = CB.values(np.asarray(board)[None], state)

    def decide(p: np.ndarray) -> E.Decision:  # the table's does not depend on p
        if exact[0]:
            return E.decide_values(float(end[0]), float(edt[0]), state)
        return E.decide(p, x, state)

    def nd(p: np.ndarray) -> float:
        return decide(p).no_double

    def dt(p: np.ndarray) -> float:
        return decide(p).double_take

    decision = decide(values.mean(axis=0))
    doc: dict[str, Any]
    if not state.has_cube_decision():  # mwc: a match (the Crawford game), as cube_document's
        mwc = None if decision.mwc is None else decision.mwc["no_double"]
        doc = E.no_double_json(state, decision.no_double, mwc)
        doc["equities_se"] = {"no_double": round(_se1(_linear(nd, values)[1]), 6)}
    else:
        doc = decision.to_json()
        doc["optimal"] = round(decision.optimal, 6)
        doc["equities_se"] = {"no_double": round(_se1(_linear(nd, values)[1]), 6),
                              "double_take": round(_se1(_linear(dt, values)[1]), 6)}  # fmt: skip
    doc["method"] = "janowski"
    if exact[0]:
        doc["exact"] = True
    doc["state"] = state.to_json()
    return doc


def cube_rollout_states(state: CubeState) -> Cube:
    """The cube states a position's cubeful rollout plays each trial in: no double (the
    mover's first cube action given), and double / take where the mover has a cube
    decision (it may double and the cube is not dead)."""
    if not state.has_cube_decision():
        return ((state, False),)
    return ((state, False), (state.doubled(), False))


def _cube_rolled(t: Trials, state: CubeState, board: np.ndarray) -> dict[str, Any]:
    """The cube decision from a cubeful rollout's no double and double / take trials (a
    small bear-off in money: every trial ends at once on the exact table, "exact")."""
    v = t.cube_values()[0]  # (n, S): absolute, the mover's
    nd = normalise(state, v[:, 0])
    doc: dict[str, Any]
    if len(t.cube) == 1:
        mwc = float(v[:, 0].mean()) if state.is_match else None
        doc = E.no_double_json(state, float(nd.mean()), mwc)
        doc["equities_se"] = {"no_double": round(_se1(nd), 6)}
    else:
        dt_abs = v[:, 1].copy()
        if state.beavers and not state.is_match and dt_abs.mean() < 0:
            dt_abs *= 2.0  # the taker beavers: the cube doubled again, values twice
        dt = normalise(state, dt_abs)
        unit = _scale(state)  # absolute values to decide_values' native units
        decision = E.decide_values(float(v[:, 0].mean()) / unit, float(dt_abs.mean()) / unit,
                                   state)  # fmt: skip
        doc = decision.to_json()
        doc["optimal"] = round(decision.optimal, 6)
        doc["equities_se"] = {"no_double": round(_se1(nd), 6), "double_take": round(_se1(dt), 6),
                              "difference": round(_se1(dt - nd), 6)}  # fmt: skip
    doc["method"] = "rollout"
    if CB.values(board[None], state)[0][0]:
        doc["exact"] = True
    doc["state"] = state.to_json()
    return doc


def position_document(pos: Position, t: Trials, state: CubeState = MONEY) -> dict[str, Any]:
    """The rollout of a position before its roll (t: one start, pos itself; with cube
    states, cube_rollout_states(state))."""
    doc = _header(pos, t)
    if not state.is_default or state.beavers:
        doc["state_text"] = state.describe()
    if t.n == 0:
        return doc
    p, se = t.probabilities()[0], t.probability_se()[0]
    eq, eq_se = t.equity()
    doc["probabilities"] = _chances(p)
    doc["probabilities_se"] = _probs(se)
    doc["equity"] = round(float(eq[0]), 6)
    doc["equity_se"] = round(float(eq_se[0]), 6)
    if t.settings.luck:
        plain = t.raw[0] @ EQUITY_GRADIENT
        doc["rollout"]["equity_plain"] = round(float(plain.mean()) - 1.0, 6)
        doc["rollout"]["equity_plain_se"] = round(_se1(plain), 6)
    if t.cube:
        doc["cube"] = _cube_rolled(t, state, np.asarray(pos.board))
    else:
        doc["cube"] = _cube(t.values()[0], np.asarray(pos.board), state)
    return doc


def _play_value(s: Searcher, after: np.ndarray, state: CubeState | None
                ) -> Callable[[np.ndarray], float]:  # fmt: skip
    """The equity (cubeless, or cubeful in `state` as analyse ranks plays) of a play with
    the mover's probabilities p after it (after: the board, the mover's view)."""

    def fn(p: np.ndarray) -> float:
        eq, _ = play_equities(s, after[None], np.zeros(1, bool), np.asarray(p)[None], state)
        return float(eq[0])

    return fn


def plays_document(pos: Position, d1: int, d2: int, candidates: list[dict[str, Any]],
                   t: Trials, state: CubeState = MONEY,
                   searcher: Searcher | None = None) -> dict[str, Any]:  # fmt: skip
    """The rollout of a roll's candidate plays (rows of analyse_roll's document, in its
    order; t: one start each, the position after it seen by the opponent), ranked by
    the rollout's equity, each with its difference to the best and that difference's
    standard error on the same trials."""
    doc = _header(pos, t)
    doc["dice"] = [d1, d2]
    cubeful = not no_cube_with_roll(state)
    doc["rollout"]["cubeful"] = bool(t.cube)  # what was played: no_cube_with_roll, none
    if cubeful:
        doc["equity"] = "cubeful"
        doc["state"] = state.to_json()
        doc["state_text"] = state.describe()
    if t.n == 0:
        doc["plays"] = []
        return doc
    mover = flip_values(t.values())  # (K, n, 5): the mover's, after each play
    eqs, zs = [], []
    mwcs: list[float] | None = None
    if cubeful and t.cube:  # the trials played with the cube: their values, the mover's
        absolute = _other(t.cube_values()[:, :, 0], state)
        for i in range(len(candidates)):
            z = normalise(state, absolute[i])
            eqs.append(float(z.mean()))
            zs.append(z - z.mean())
        if state.is_match:
            mwcs = [float(a.mean()) for a in absolute]
    else:
        s = searcher or Searcher(default_model(STANDARD))
        if cubeful and state.is_match:
            mwcs = []
        for i, row in enumerate(candidates):
            after = B.from_counts(row["board"]["mover"], row["board"]["opponent"])
            v, z = _linear(_play_value(s, after, state if cubeful else None), mover[i])
            eqs.append(v)
            zs.append(z)
            if mwcs is not None:  # the MWC of the same mean chances, as analyse gives it
                mean = mover[i].mean(axis=0)[None]
                mwc = play_equities(s, after[None], np.zeros(1, bool), mean, state)[1]
                mwcs.append(float(mwc[0]))  # type: ignore[index]
    order = sorted(range(len(candidates)), key=lambda i: (-eqs[i], i))
    best = order[0]
    se_all = t.probability_se()
    rows = []
    for rank, i in enumerate(order, 1):
        row = candidates[i]
        out: dict[str, Any] = {"rank": rank, "play": row["play"], "equity": round(eqs[i], 6),
                               "equity_se": round(_se1(zs[i]), 6),
                               "difference": round(eqs[i] - eqs[best], 6),
                               "difference_se": round(_se1(zs[i] - zs[best]), 6) if i != best
                               else 0.0,
                               "probabilities": _chances(mover[i].mean(axis=0)),
                               # the mover's view: the same errors, re-ordered
                               "probabilities_se": _probs(se_all[i][[0, 3, 4, 1, 2]]),
                               "search": {"rank": row["rank"], "ply": row["ply"],
                                          "equity": row["equity"]}}  # fmt: skip
        if mwcs is not None:
            out["mwc"] = round(mwcs[i], 6)
        if "position_id" in row:
            out["position_id"] = row["position_id"]
        rows.append(out)
    doc["plays"] = rows
    return doc


# -- what the front ends call -----------------------------------------------------------------


@one_at_a_time
def rollout_document(pos: Position, dice: tuple[int, int] | None = None,
                     settings: RolloutSettings | None = None,
                     state: CubeState = MONEY, model: Model | None = None, top: int = 3,
                     select_ply: int = 1, ex: Executor | None = None,
                     progress: Progress | None = None, budget: float | None = None,
                     select_bound: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Without dice: the rollout of the position (its probabilities and equities with
    their standard errors, and the cube decision from them). With dice: the best `top`
    plays of the roll by the search at `select_ply` (analyse_roll's ranking), each rolled
    out on the same dice. budget: seconds for it all (the trials stop at the first
    trial's end past them; with dice, the search that picks the plays deepens to
    `select_ply` within half of them). select_bound: without a budget, the bound of the
    search that picks the plays (analyse_roll's budget: seconds, not iterative; None:
    none). A search that picks the plays short of `select_ply` says so in "stopped"."""
    if pos.variant != STANDARD:
        raise DoubletError("rollouts are for standard backgammon (Acey-Deucey's 1-2 can have "
                           "over 800,000 plays)")  # fmt: skip
    check_in_play(pos.board, pos.variant)
    settings = settings or RolloutSettings()
    settings.check()
    if isinstance(select_ply, bool) or not isinstance(select_ply, (int, np.integer)) or not (
            0 <= select_ply <= MAX_PLY):  # fmt: skip
        raise DoubletError(f"the depth that picks the plays (select_ply) must be an integer "
                           f"0..{MAX_PLY}, got {shown(select_ply)}")  # fmt: skip
    if budget is not None and not budget > 0:  # NaN too
        raise DoubletError(f"a rollout's time is a number of seconds above 0, got {budget!r}")
    m = model if model is not None else default_model(STANDARD)
    deadline = None if budget is None else time.perf_counter() + budget
    if dice is None:
        cube = cube_rollout_states(state) if settings.cubeful else ()
        t = rollout(m, np.array(pos.board), settings, ex, progress, deadline, cube)
        return position_document(pos, t, state)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise DoubletError(f"top must be an integer 1 or more, got {shown(top)}")
    if not isinstance(dice, (tuple, list)) or len(dice) != 2:
        raise InvalidDiceError(f"dice are two numbers 1..6, got {shown(dice)}")
    d1, d2 = dice
    if budget is not None:  # the trials keep at least half of the time
        found = analyse_roll(pos, d1, d2, select_ply, m, state, budget / 2, iterative=True)
    else:
        found = analyse_roll(pos, d1, d2, select_ply, m, state, select_bound)
    candidates = found["plays"][:top]
    starts = np.array([B.flip(B.from_counts(r["board"]["mover"], r["board"]["opponent"]))
                       for r in candidates])  # fmt: skip
    # A play that ends the game is its own value: roll out the others.
    live = [i for i, b in enumerate(starts) if B.outcome(b) == 0]
    done = [i for i in range(len(starts)) if i not in live]
    cube = ((state.flipped(), True),) if settings.cubeful and not no_cube_with_roll(state) else ()
    measure = None
    if not cube and not no_cube_with_roll(state):  # shown: cubeful, converted at the root
        s = searcher(m, STANDARD)
        fns = [_play_value(s, B.from_counts(candidates[i]["board"]["mover"],
                                            candidates[i]["board"]["opponent"]), state)
               for i in live]  # fmt: skip

        def measure(t: Trials) -> np.ndarray:  # the shown equities' errors (plays_document)
            mover = flip_values(t.values())
            return np.array([_se1(_linear(fn, mover[k])[1]) for k, fn in enumerate(fns)])

    rolled = (rollout(m, starts[live], settings, ex, progress, deadline, cube, measure)
              if live else None)  # fmt: skip
    t = _with_finished(rolled, starts, live, done, settings, cube)
    doc = plays_document(pos, d1, d2, candidates, t, state, searcher(m, STANDARD))
    if found.get("stopped"):
        picked = f"picking the plays: {found['stopped']}"
        doc["stopped"] = f"{picked}; {doc['stopped']}" if doc.get("stopped") else picked
    return doc


def _with_finished(t: Trials | None, starts: np.ndarray, live: list[int], done: list[int],
                   settings: RolloutSettings, cube: Cube = ()) -> Trials:  # fmt: skip
    """The trials of every start, those of finished games (each trial its result, with
    the cube: its value in each cube state) put in."""
    n = t.n if t is not None else settings.trials
    k = len(starts)
    raw = np.zeros((k, n, N_OUTPUTS))
    luck = np.zeros_like(raw)
    moves = np.zeros((k, n), np.int64)
    c_raw = np.zeros((k, n, len(cube)))
    p = np.zeros(N_OUTPUTS, np.float32)
    for i in done:
        _terminal(starts[i], p)
        raw[i] = p
        for j, (s, _) in enumerate(cube):
            c_raw[i, :, j] = leaf_values(p[None].astype(np.float64), starts[i][None], s,
                                         False, STANDARD)[0]  # fmt: skip
    extra: dict[str, Any] = {}
    if cube:
        extra = {"cube": cube, "cube_raw": c_raw, "cube_luck": np.zeros_like(c_raw)}
    if t is not None:
        raw[live], luck[live], moves[live] = t.raw, t.luck, t.moves
        if cube:
            assert t.cube_raw is not None and t.cube_luck is not None
            c_raw[live] = t.cube_raw
            extra["cube_luck"][live] = t.cube_luck
        return replace(t, raw=raw, luck=luck, moves=moves, **extra)
    return Trials(settings, raw, luck, moves, **extra)


def render(doc: dict[str, Any]) -> str:
    """The text of a rollout document."""
    r = doc["rollout"]
    lines = [f"Rollout of {doc['position_id']}" + (f", {doc['dice'][0]}-{doc['dice'][1]}" if
                                                   "dice" in doc else "")
             + f": {r['trials']} trials at {r['ply']} ply"
             + (f", truncated after {r['truncate']} plays" if r["truncate"] else "")
             + (", luck-adjusted" if r["luck"] else "") + f", seed {r['seed']}"
             + (f", the cube in the trials at {r['cube_ply']} ply" if r.get("cubeful")
                else "")]  # fmt: skip
    lines.append(f"  {r['seconds']:.1f} s on {r['where']}, {r['trials_per_second']:.1f} "
                 f"trials/s, {r['mean_plays']:.1f} plays a trial")  # fmt: skip
    if "stopped" in doc:
        lines.append(f"(Stopped early: {doc['stopped']}.)")
    if r["trials"] < 2:
        lines.append("(One trial measures no standard error: the ± figures below show 0 "
                     "for it; roll out 2 trials or more.)")  # fmt: skip
    if "plays" in doc:
        if "state_text" in doc:
            lines.append(f"  {doc['state_text']}")
        kind = " (cubeful)" if doc.get("equity") == "cubeful" else ""
        mwc = any("mwc" in p for p in doc["plays"])
        width = max([len(p["play"] or NO_PLAY_ROW) for p in doc["plays"]] + [4])
        lines.append(f"  #  {'play':<{width}}  equity{kind}     diff     "
                     + ("   mwc   " if mwc else "")
                     + " win    wg    wbg    lg    lbg   search")  # fmt: skip
        for p in doc["plays"]:
            q = p["probabilities"]
            diff = (f"{p['difference']:+.3f}±{p['difference_se']:.3f}" if p["rank"] > 1
                    else " " * 12)  # fmt: skip
            chance = f"{100 * p['mwc']:6.2f}%  " if "mwc" in p else ""
            lines.append(f"{p['rank']:3d}  {p['play'] or NO_PLAY_ROW:<{width}}  "
                         f"{p['equity']:+.3f}±{p['equity_se']:.3f}  {diff}  {chance}"
                         f"{100 * q['win']:5.1f} {100 * q['win_gammon']:5.1f} "
                         f"{100 * q['win_backgammon']:5.1f} {100 * q['lose_gammon']:5.1f} "
                         f"{100 * q['lose_backgammon']:5.1f}   #{p['search']['rank']} "
                         f"{p['search']['equity']:+.3f} at {p['search']['ply']} ply")  # fmt: skip
        return "\n".join(lines)
    if "probabilities" not in doc:
        return "\n".join(lines)
    if "state_text" in doc:
        lines.append(f"  {doc['state_text']}")
    p, se = doc["probabilities"], doc["probabilities_se"]
    for name, key in (("win", "win"), ("win gammon", "win_gammon"),
                      ("win backgammon", "win_backgammon"), ("lose gammon", "lose_gammon"),
                      ("lose backgammon", "lose_backgammon")):  # fmt: skip
        lines.append(f"  {name:<16}{100 * p[key]:6.2f} % ± {100 * se[key]:.2f}")
    lines.append(f"  cubeless equity {doc['equity']:+.4f} ± {doc['equity_se']:.4f}")
    if "equity_plain" in r:
        lines.append(f"  (not luck-adjusted: {r['equity_plain']:+.4f} ± "
                     f"{r['equity_plain_se']:.4f})")  # fmt: skip
    cube = doc["cube"]
    eq, ese, mwc = cube["equities"], cube["equities_se"], cube.get("mwc")

    def mwc_text(key: str) -> str:  # a match: the match-winning chance beside the equity
        return f"MWC {100 * mwc[key]:.2f}%" if mwc and mwc.get(key) is not None else ""

    take = "beaver" if cube.get("beaver") else "take"
    rows = [("no double", f"{eq['no_double']:+.4f} ± {ese['no_double']:.4f}", "no_double")]
    if eq["double_take"] is not None:
        rows += [
            (
                f"double/{take}",
                f"{eq['double_take']:+.4f} ± {ese['double_take']:.4f}",
                "double_take",
            ),
            ("double/pass", f"{eq['double_pass']:+.4f}", "double_pass"),
        ]
    how = ("exact, the two-sided bear-off table" if cube.get("exact") else
           "rolled out with cube actions in the trials" if cube["method"] == "rollout" else
           "Janowski, from the cubeless rollout")  # fmt: skip
    lines.append(f"  cubeful ({how}):")
    lines += [f"    {name:<14}{value:<18}{mwc_text(key)}".rstrip() for name, value, key in rows]
    if eq["double_take"] is not None and ese.get("difference") is not None:
        # measured on the same trials, so its error is smaller than either equity's
        lines.append(f"  double/{take} less no double {eq['double_take'] - eq['no_double']:+.4f} "
                     f"± {ese['difference']:.4f}")  # fmt: skip
    lines.append(f"  Proper cube action: {cube['action']}")
    return "\n".join(lines)


__all__ = [
    "CUBE_OPTIONS",
    "NO_CUBE_WITH_ROLL",
    "no_cube_with_roll",
    "plays_document",
    "position_document",
    "render",
    "rollout_document",
]
