"""Cubeful equity from the five cubeless probabilities: Janowski's model, for money and
for match play, and the cube decision it gives.

Janowski (1993): a game's cubeful value lies between two extremes. With a *dead* cube
nobody will turn it again, and the value is the cubeless one. With a fully *live* cube
the chances move continuously, so the owner of the cube doubles exactly at the
opponent's take point; the value is then linear in the winning chance p between the
points where the cube is turned (the game is a fair bet between them). Real games lie
between: value = x * live + (1 - x) * dead, with a cube efficiency x by position class
(``efficiency``: GNU Backgammon's figures, 0.68 for contact and crashed positions,
0.55 + 0.00125 * the mover's pips clamped to 0.6..0.7 in a race, 0.6 in a bear-off).

Money (values per unit of the cube, the mover's view): with W and L the mean value of
a win and of a loss (W = 1 + (P(win gammon) + P(win backgammon)) / p, likewise L),
    dead = p W - (1 - p) L;  take point TP = (L - 1/2) / (W + L + 1/2),
    cash point CP = (L + 1) / (W + L + 1/2);
    live, mover owns the cube: -L at p = 0 rising to +1 at CP, +1 above;
    live, opponent owns it: -1 up to TP, rising to W at p = 1;
    live, centered: -1 up to TP, +1 from CP, linear between.
The Jacoby rule (money, cube centered): the game played out without a double counts no
gammons (the dead value and the ends beyond TP and CP use W = L = 1), while TP and CP,
where the cube is turned and gammons start to count, use the real W and L.

Match (values are match-winning chances, from doublet.cube.met): the same shapes, with
the mean MWC of a win and of a loss at cube c (Win(c), Lose(c)) from the gammon and
backgammon fractions of the probabilities, and the cash and take points found from the
top down: a cube is dead for a side once winning at its value already wins the match
(c >= the points it needs); below that, the mover's cash point at c is where the
opponent, owning 2c after a take, is indifferent between taking and passing, and the
mover's take point where the mover, owning 2c, is. So the free drop, a dead cube, the
Crawford game and post-Crawford doubling all follow from the table.

``decide`` gives the three cubeful equities of the mover's cube decision (no double,
double / take, double / pass), normalised as GNU Backgammon shows them: money in units
of the current cube (double / pass = +1), match play as money-equivalent equity
(doublet.cube.met.to_money) with the MWCs beside them; and the proper action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.cube import met
from doublet.cube.state import CubeState

CONTACT_X = 0.68
RACE_X_BASE, RACE_X_PER_PIP, RACE_X_MIN, RACE_X_MAX = 0.55, 0.00125, 0.6, 0.7
BEAROFF_X = 0.6
# Equities closer than this are a tie: an "optional" double.
OPTIONAL = 1e-6
_EPS = 1e-9


def efficiencies(boards: np.ndarray) -> np.ndarray:
    """The cube efficiency x of each position of an (N, SIZE) batch (each seen by its
    side on roll, before the roll), in numpy: 0.68 with contact, 0.6 when both sides are
    bearing off, else 0.55 + 0.00125 * the mover's pips within 0.6..0.7."""
    b = np.asarray(boards, dtype=np.int64).reshape(-1, B.SIZE)
    pts = b[:, 1:25]
    idx = np.arange(1, 25)
    mover_top = np.where(pts > 0, idx, 0).max(axis=1)  # the mover's rearmost checker
    opp_low = np.where(pts < 0, idx, 25).min(axis=1)  # the opponent's rearmost, mover's numbering
    off_board = (
        (b[:, B.MY_BAR] > 0) | (b[:, B.MY_OUT] > 0) | (b[:, B.OPP_BAR] < 0) | (b[:, B.OPP_OUT] > 0)
    )
    contact = off_board | (mover_top > opp_low)
    bearoff = ~off_board & (mover_top <= 6) & (opp_low >= 19)
    pips = (np.where(pts > 0, pts, 0) * idx).sum(axis=1)
    race = np.clip(RACE_X_BASE + RACE_X_PER_PIP * pips, RACE_X_MIN, RACE_X_MAX)
    return np.where(contact, CONTACT_X, np.where(bearoff, BEAROFF_X, race))


def efficiency(board: np.ndarray) -> float:
    """The cube efficiency x of one position (see efficiencies)."""
    return float(efficiencies(np.asarray(board)[None, :])[0])


def _split(probs: np.ndarray) -> tuple[np.ndarray, ...]:
    """p and, given a win (a loss), the chance it is single / gammon / backgammon."""
    pr = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    p = np.clip(pr[:, 0], 0.0, 1.0)
    q = 1.0 - p
    wg, wbg, lg, lbg = (np.clip(pr[:, k], 0.0, 1.0) for k in (1, 2, 3, 4))
    safe_p = np.where(p > _EPS, p, 1.0)
    safe_q = np.where(q > _EPS, q, 1.0)
    w_bg = np.where(p > _EPS, np.minimum(wbg, wg) / safe_p, 0.0)
    w_g = np.where(p > _EPS, np.minimum(wg, p) / safe_p, 0.0) - w_bg
    l_bg = np.where(q > _EPS, np.minimum(lbg, lg) / safe_q, 0.0)
    l_g = np.where(q > _EPS, np.minimum(lg, q) / safe_q, 0.0) - l_bg
    return p, 1.0 - w_g - w_bg, w_g, w_bg, 1.0 - l_g - l_bg, l_g, l_bg


# -- money ------------------------------------------------------------------------------------


def _money_values(probs: np.ndarray, x: np.ndarray, owner: str, jacoby: bool
                  ) -> np.ndarray:  # fmt: skip
    """The mover's cubeful money equity per unit of the cube, the cube where `owner` says.
    jacoby: the cube is centered under the Jacoby rule, so the game played out without a
    double counts no gammons, while the points where the cube is turned (after which
    gammons count) are those of the real W and L."""
    p, ws, wg, wb, ls, lg, lb = _split(probs)
    w = ws + 2 * wg + 3 * wb
    lo = ls + 2 * lg + 3 * lb
    # The values of playing the game out from here with no more doubles.
    w_end, lo_end = (np.ones_like(p), np.ones_like(p)) if jacoby else (w, lo)
    dead = p * w_end - (1 - p) * lo_end
    span = w + lo + 0.5
    tp = (lo - 0.5) / span
    cp = (lo + 1.0) / span
    # Beyond the points where a side would turn the cube, the value keeps rising (or
    # falling) to that of playing the game out: from +1 at CP to W at p = 1, from -L at
    # p = 0 to -1 at TP (GNU Backgammon's figures agree with this, not with a flat +-1).
    above = 1.0 + (w_end - 1.0) * (p - cp) / np.maximum(1.0 - cp, _EPS)
    below = -lo_end + (lo_end - 1.0) * p / np.maximum(tp, _EPS)
    if owner == "mover":
        live = np.where(p >= cp, above, -lo + p * span)
    elif owner == "opponent":
        live = np.where(p <= tp, below, -1.0 + (p - tp) * span)
    else:
        mid = -1.0 + 2.0 * (p - tp) / np.maximum(cp - tp, _EPS)
        live = np.where(p >= cp, above, np.where(p <= tp, below, mid))
    return x * live + (1 - x) * dead


# -- match ------------------------------------------------------------------------------------


class _Match:
    """The live-cube breakpoints of a match score for rows of probabilities."""

    def __init__(self, probs: np.ndarray, state: CubeState) -> None:
        self.p, self.ws, self.wg, self.wb, self.ls, self.lg, self.lb = _split(probs)
        self.a, self.b = state.away
        self.done = met.crawford_done(state)
        self.no_cube = state.crawford or state.no_cube
        self._cp: dict[int, np.ndarray] = {}
        self._tp: dict[int, np.ndarray] = {}

    def m(self, a: int, b: int) -> float:
        return met.mwc(a, b, self.done)

    def win(self, c: int) -> np.ndarray:
        a, b = self.a, self.b
        return (
            self.ws * self.m(a - c, b)
            + self.wg * self.m(a - 2 * c, b)
            + self.wb * self.m(a - 3 * c, b)
        )

    def lose(self, c: int) -> np.ndarray:
        a, b = self.a, self.b
        return (
            self.ls * self.m(a, b - c)
            + self.lg * self.m(a, b - 2 * c)
            + self.lb * self.m(a, b - 3 * c)
        )

    def dead(self, c: int, p: np.ndarray) -> np.ndarray:
        return p * self.win(c) + (1 - p) * self.lose(c)

    def live_for_mover(self, c: int) -> bool:
        return not self.no_cube and c < self.a

    def live_for_opponent(self, c: int) -> bool:
        return not self.no_cube and c < self.b

    def cash_point(self, c: int) -> np.ndarray:
        """The p at which the mover, turning the cube from c to 2c, leaves the opponent
        indifferent between passing and taking (then owning 2c)."""
        if c not in self._cp:
            target = self.m(self.a - c, self.b)
            win2 = self.win(2 * c)
            if not self.live_for_opponent(2 * c):
                lose2 = self.lose(2 * c)
                cp = (target - lose2) / np.maximum(win2 - lose2, _EPS)
            else:
                tp2 = self.take_point(2 * c)
                cash2 = self.m(self.a, self.b - 2 * c)
                cp = tp2 + (target - cash2) / np.maximum(win2 - cash2, _EPS) * (1 - tp2)
            self._cp[c] = np.clip(cp, 0.0, 1.0)
        return self._cp[c]

    def take_point(self, c: int) -> np.ndarray:
        """The p at which the mover, doubled from c to 2c, is indifferent between passing
        and taking (then owning 2c)."""
        if c not in self._tp:
            target = self.m(self.a, self.b - c)
            lose2 = self.lose(2 * c)
            if not self.live_for_mover(2 * c):
                win2 = self.win(2 * c)
                tp = (target - lose2) / np.maximum(win2 - lose2, _EPS)
            else:
                cp2 = self.cash_point(2 * c)
                cash2 = self.m(self.a - 2 * c, self.b)
                tp = cp2 * (target - lose2) / np.maximum(cash2 - lose2, _EPS)
            self._tp[c] = np.clip(tp, 0.0, 1.0)
        return self._tp[c]

    def owned(self, c: int, p: np.ndarray) -> np.ndarray:
        """Live MWC, the mover owning cube c."""
        if not self.live_for_mover(c):
            return self.dead(c, p)
        cp = self.cash_point(c)
        lose, cash = self.lose(c), self.m(self.a - c, self.b)
        above = cash + (self.win(c) - cash) * (p - cp) / np.maximum(1 - cp, _EPS)
        return np.where(p >= cp, above, lose + (cash - lose) * p / np.maximum(cp, _EPS))

    def opponent_owned(self, c: int, p: np.ndarray) -> np.ndarray:
        """Live MWC, the opponent owning cube c."""
        if not self.live_for_opponent(c):
            return self.dead(c, p)
        tp = self.take_point(c)
        cash, win = self.m(self.a, self.b - c), self.win(c)
        below = self.lose(c) + (cash - self.lose(c)) * p / np.maximum(tp, _EPS)
        return np.where(p <= tp, below, cash + (win - cash) * (p - tp) / np.maximum(1 - tp, _EPS))

    def centered(self, c: int, p: np.ndarray) -> np.ndarray:
        mover, opp = self.live_for_mover(c), self.live_for_opponent(c)
        if mover and opp and not self.live_for_mover(2 * c) and not self.live_for_opponent(2 * c):
            # Either side may double and the first double is the last (2-away 2-away at
            # cube 1): GNU Backgammon counts such a centered cube as dead until it is
            # turned, and so do we (its 0-ply figures agree with this, not with the live
            # model's line). Where only one side may double (2-away 1-away after the
            # Crawford game) the cube is that side's, live, below.
            return self.dead(c, p)
        if mover and not opp:
            return self.owned(c, p)
        if opp and not mover:
            return self.opponent_owned(c, p)
        if not mover and not opp:
            return self.dead(c, p)
        tp, cp = self.take_point(c), self.cash_point(c)
        lo, hi = self.m(self.a, self.b - c), self.m(self.a - c, self.b)
        mid = lo + (hi - lo) * (p - tp) / np.maximum(cp - tp, _EPS)
        above = hi + (self.win(c) - hi) * (p - cp) / np.maximum(1 - cp, _EPS)
        below = self.lose(c) + (lo - self.lose(c)) * p / np.maximum(tp, _EPS)
        return np.where(p >= cp, above, np.where(p <= tp, below, mid))

    def value(self, c: int, owner: str, x: np.ndarray) -> np.ndarray:
        p = self.p
        live = {"mover": self.owned, "opponent": self.opponent_owned,
                "centered": self.centered}[owner](c, p)  # fmt: skip
        return x * live + (1 - x) * self.dead(c, p)


# -- the decision -----------------------------------------------------------------------------


def _per_row(x: np.ndarray | float, probs: np.ndarray) -> np.ndarray:
    """The cube efficiency for each row of probs (one x for all rows, or one a row)."""
    rows = np.asarray(probs).reshape(-1, 5).shape[0]
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (rows,))


def no_double(probs: np.ndarray, x: np.ndarray | float, state: CubeState) -> np.ndarray:
    """The mover's cubeful value if it does not double now (or may not): money equity per
    unit of the cube, or match-winning chance. One value per row of probs."""
    xs = _per_row(x, probs)
    if not state.is_match:
        return _money_values(probs, xs, state.owner, state.jacoby and state.owner == "centered")
    return _Match(probs, state).value(state.value, state.owner, xs)


def double_take(probs: np.ndarray, x: np.ndarray | float, state: CubeState) -> np.ndarray:
    """The mover's cubeful value if it doubles and is taken, in no_double's units (money:
    per unit of the cube before the double, so twice the doubled game's; with beavers, a
    taker who gains beavers, doubling it again)."""
    xs = _per_row(x, probs)
    if not state.is_match:
        dt = 2.0 * _money_values(probs, xs, "opponent", False)
        if state.beavers:
            dt = np.where(dt < 0, 2.0 * dt, dt)
        return dt
    return _Match(probs, state).value(2 * state.value, "opponent", xs)


def double_pass(state: CubeState) -> float:
    """The mover's value if it doubles and the opponent passes."""
    return 1.0 if not state.is_match else met.result(state, state.value)


def optimal(nd: np.ndarray | float, dt: np.ndarray | float, dp: float,
            state: CubeState) -> np.ndarray | float:  # fmt: skip
    """The mover's value after its best cube action: no double, or a double that the
    opponent answers as suits it (take when taking loses less). Arrays or one value."""
    if not state.may_double():
        return nd
    return np.maximum(nd, np.minimum(dt, dp))


@dataclass(frozen=True)
class Decision:
    """A cube decision: the three cubeful values in their native units (money: per unit of
    the cube; match: MWC) and as GNU Backgammon shows them (money-equivalent), the proper
    action, and its words."""

    state: CubeState
    no_double: float
    double_take: float
    double_pass: float
    double: bool
    take: bool
    action: str
    mwc: dict[str, float] | None = None  # match play: the three as match-winning chances

    @property
    def optimal(self) -> float:
        return float(optimal(self.no_double, self.double_take, self.double_pass, self.state))

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "double": self.double,
            "take": self.take,
            "action": self.action,
            "equities": {
                "no_double": round(self.no_double, 6),
                "double_take": round(self.double_take, 6),
                "double_pass": round(self.double_pass, 6),
            },
        }
        if self.mwc is not None:
            doc["mwc"] = {k: round(v, 6) for k, v in self.mwc.items()}
        if beavered(self.state, self.double_take, self.double_pass):
            doc["beaver"] = True  # double_take is the beavered game's value
        return doc


def no_double_json(state: CubeState, no_double: float, mwc: float | None = None) -> dict[str, Any]:
    """The cube document's decision part where the mover has none (state.may_double() is
    False, or the cube is dead): playing on is the only action and its equity the
    optimal one; `mwc` is its match-winning chance in a match."""
    doc: dict[str, Any] = {
        "double": False,
        "take": None,
        "action": f"No double available ({state.why_no_double()})",
        "equities": {"no_double": round(no_double, 6), "double_take": None, "double_pass": None},
        "optimal": round(no_double, 6),
    }
    if mwc is not None:
        doc["mwc"] = {"no_double": round(mwc, 6), "double_take": None, "double_pass": None}
    return doc


def beavered(state: CubeState, dt: float, dp: float) -> bool:
    """Whether the taker's best answer to a double is a beaver: money play with beavers,
    a take (dt <= dp) that the doubler loses on (dt < 0); double_take is then the value of
    the beavered game (the cube at 4 times its value, the taker's)."""
    return state.beavers and not state.is_match and dt <= dp and dt < 0


def action_words(nd: float, dt: float, dp: float, state: CubeState) -> tuple[bool, bool, str]:
    """(double, take, words) for equities in any one unit, as GNU Backgammon words them:
    "No double, take", "Double, pass", "Too good to redouble, take", "Optional double,
    take", "No double, beaver" ... A tie (within OPTIONAL) of no double with double /
    take is an optional double; with double / pass (a sure win of the cube's value
    either way) it is "Double, pass", as gnubg words 143 of the 145 such decisions of
    tests/data/gnubg_cube0.jsonl."""
    take = dt <= dp
    if not state.may_double():
        return False, take, f"No double available ({state.why_no_double()})"
    verb = "redouble" if state.owner == "mover" else "double"
    answer = "beaver" if beavered(state, dt, dp) else "take" if take else "pass"
    best = min(dt, dp)
    if abs(best - nd) <= OPTIONAL:
        if take:
            return False, take, f"Optional {verb}, {answer}"
        return True, take, f"{verb.capitalize()}, {answer}"
    if best > nd:
        return True, take, f"{verb.capitalize()}, {answer}"
    if nd > dp:
        return False, take, f"Too good to {verb}, {answer}"
    return False, take, f"No {verb}, {answer}"


def decide_values(nd_native: float, dt_native: float, state: CubeState) -> Decision:
    """The Decision for no-double and double/take values in native units (money per unit
    of the cube, match MWC); double/pass follows from the state."""
    dp_native = double_pass(state)
    if state.is_match:
        nd, dt = (float(met.to_money(state, v)) for v in (nd_native, dt_native))
        dp = 1.0  # to_money of the cube's value won, by definition
        mwc = {"no_double": nd_native, "double_take": dt_native, "double_pass": dp_native}
    else:
        nd, dt, dp, mwc = float(nd_native), float(dt_native), float(dp_native), None
    double, take, words = action_words(nd, dt, dp, state)
    return Decision(state, nd, dt, dp, double, take, words, mwc)


def decide(probs: np.ndarray, x: float, state: CubeState) -> Decision:
    """The 0-ply cube decision: Janowski's values from the probabilities (the mover's,
    before the roll) at cube efficiency x."""
    nd = float(no_double(probs, x, state)[0])
    dt = float(double_take(probs, x, state)[0])
    return decide_values(nd, dt, state)


__all__ = [
    "Decision",
    "action_words",
    "beavered",
    "decide",
    "decide_values",
    "double_pass",
    "double_take",
    "efficiencies",
    "efficiency",
    "no_double",
    "optimal",
]
