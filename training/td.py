"""TD(lambda) learning from self-play games: offline lambda-returns, one step per game.

For each finished game the learner evaluates all its positions s_0..s_{T-1} with the
current net (one batched torch forward pass, which also gives the gradients), builds the
lambda-return targets backwards from the result,

    y_{T-1} = the result as probabilities for the winner, who is on roll at s_{T-1}
    y_t     = C_t((1 - lambda) V(s_{t+1}) + lambda y_{t+1})

where C_t converts s_{t+1}'s view into s_t's: the identity when the same side is on roll
again (Acey-Deucey's 1-2 chain), otherwise P(win) -> 1 - P(win), P(wg) <-> P(lg),
P(wbg) <-> P(lbg); V(s_{t+1}) is the net's own evaluation as the engine sees it (with
doublet.nn.eval's consistency clamps), and a game stopped unfinished (selfplay.MAX_PLIES)
starts from V(s_{T-1}) instead of a result. Then one SGD step on the loss summed over
the positions and outputs (a sum, so that the step is the sum of TD-Gammon's
per-position updates, lr alpha each). This is the forward view of TD(lambda); applied at
the end of the game it is exactly offline TD(lambda) with eligibility traces (the
backward view, updates summed over the game).

Loss: with loss "mse" the step is TD-Gammon's, (y - V) times the gradient of V; with
"bce" (the default) the loss is the cross-entropy of the sigmoid outputs against the
targets, whose step is (y - V) times the gradient of V's logit: the same direction
without the factor V(1 - V), so an output that saturates on the wrong side still learns
(with "mse" at lr 0.03 and above the h80 net's P(win) output stuck at 1; doublet.training.configs).

Why offline lambda-returns rather than online TD(lambda) with eligibility traces: both
were implemented (OnlineTD below; the test suite checks that both take the same step
when it is small) and measured on the same games (same dice, same initial h80 net,
lambda 0.7, lr 0.02, bce, blocks of 16) by ``python -m doublet.training.td_compare --games 10000
--check-games 2000`` on the 2-core machine:

    method                                 games/s  2nd half  CPU ms/game  vs pubeval
    offline lambda-returns, 1 process          170       378         5.87  +0.124 (0.031)
    offline, 2 self-play processes + learner   280       279         3.59  +0.124 (0.031)
    online TD(lambda), traces, 1 process       188       185         5.31  +0.037 (0.032)

(strength: points per game against pubeval after 10,000 games, 2000 duplicate games,
seed 7, standard error in brackets; a first run with 1000 games gave +0.157 and +0.046.)
Once the games have their trained length (the second half), online TD(lambda) is half as
fast per core: every roll updates 5 traces of all 17,500 weights (the view change mixes
the five outputs' traces) and the weights themselves, where offline learning takes one
batched torch step per game. It cannot use the second core either, since each roll
changes the weights the next roll is played with, while offline targets need only the
game's own positions: worker processes play with a copy of the weights and the learner
learns (the same net for 1 or 2 processes, doublet.training.train). And after the same 10,000
games the offline net was the stronger one. (The 2-process row was measured while
another job held one of the two cores; on the idle machine the same design ran about
685 games/s in steady state: 5000 games per 7.3 s in the curve.csv of an h80 run with
lr 0.01, 10,000 to 20,000 games.)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from doublet.core.board import flip_into, outcome, starting
from doublet.core.jit import njit
from doublet.nn.encode import ESCAPES, HITS_OPEN, N_INPUTS, _encode_into, encode
from doublet.nn.eval import N_OUTPUTS, Net, _choose, random_net
from doublet.rules.movegen import Workspace
from doublet.training.model import TDNet, consistent
from doublet.training.selfplay import MAX_PLIES, Trajectory, game_dice

LOSSES = ("mse", "bce")


@njit
def _lambda_targets(values, again, result, lam, out):
    """lambda-return targets. values (T, 5): the net's probabilities for the side on roll
    at each position; again (T,) bool: position t + 1 has the same side on roll; result
    1/2/3 won by the side on roll at T - 1 (0: the game was stopped unfinished, and the
    last position's target is its own value). Writes out (T, 5), each in its position's
    view."""
    t_last = values.shape[0] - 1
    if result == 0:
        for k in range(N_OUTPUTS):
            out[t_last, k] = values[t_last, k]
    else:
        out[t_last, 0] = 1.0
        out[t_last, 1] = 1.0 if result >= 2 else 0.0
        out[t_last, 2] = 1.0 if result >= 3 else 0.0
        out[t_last, 3] = 0.0
        out[t_last, 4] = 0.0
    m = np.empty(N_OUTPUTS, out.dtype)
    for t in range(t_last - 1, -1, -1):
        for k in range(N_OUTPUTS):
            m[k] = (1.0 - lam) * values[t + 1, k] + lam * out[t + 1, k]
        if again[t]:
            for k in range(N_OUTPUTS):
                out[t, k] = m[k]
        else:
            out[t, 0] = 1.0 - m[0]
            out[t, 1] = m[3]
            out[t, 2] = m[4]
            out[t, 3] = m[1]
            out[t, 4] = m[2]


def lambda_targets(values: np.ndarray, again: np.ndarray, result: int, lam: float) -> np.ndarray:
    """The lambda-return targets (T, 5) of a game (see _lambda_targets)."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != N_OUTPUTS or len(v) == 0:
        raise ValueError(f"values must be (T >= 1, {N_OUTPUTS}), got {v.shape}")
    if result not in (0, 1, 2, 3):
        raise ValueError(f"result must be 1, 2 or 3 (won by the last mover) or 0, got {result}")
    out = np.empty_like(v)
    _lambda_targets(v, np.ascontiguousarray(again, dtype=np.bool_), int(result), float(lam), out)
    return out


def learning_rate(schedule: Sequence[tuple[int, float]], games: int) -> float:
    """Piecewise-linear in games between the (games, lr) points; flat outside them."""
    pts = sorted(schedule)
    if games <= pts[0][0]:
        return float(pts[0][1])
    for (g0, a0), (g1, a1) in itertools.pairwise(pts):
        if games <= g1:
            return float(a0 + (a1 - a0) * (games - g0) / max(1, g1 - g0))
    return float(pts[-1][1])


def make_optimizer(net: TDNet, name: str, lr: float) -> torch.optim.Optimizer:
    if name == "sgd":
        return torch.optim.SGD(net.parameters(), lr=lr)
    if name == "adam":
        return torch.optim.Adam(net.parameters(), lr=lr)
    raise ValueError(f"unknown optimizer {name!r} (sgd or adam)")


class Learner:
    """Offline TD(lambda): one optimizer step per `games_per_step` games."""

    def __init__(
        self,
        net: TDNet,
        lam: float,
        schedule: Sequence[tuple[int, float]],
        optimizer: str = "sgd",
        loss: str = "mse",
    ) -> None:
        if loss not in LOSSES:
            raise ValueError(f"unknown loss {loss!r} ({', '.join(LOSSES)})")
        self.loss = loss
        self.net = net
        self.lam = float(lam)
        self.schedule = [(int(g), float(a)) for g, a in schedule]
        self.opt = make_optimizer(net, optimizer, learning_rate(self.schedule, 0))

    def step(self, games: Sequence[Trajectory], games_done: int) -> dict[str, Any]:
        """Learn from these games (one step); games_done: games learned before them (for the
        learning rate). Returns {"loss": mean squared error per position, "positions"}."""
        lr = learning_rate(self.schedule, games_done)
        for group in self.opt.param_groups:
            group["lr"] = lr
        boards = np.concatenate([g.boards for g in games]) if len(games) > 1 else games[0].boards
        x = torch.from_numpy(encode(boards))
        logits = self.net.logits(x)
        raw = torch.sigmoid(logits)
        values = consistent(raw.detach()).numpy().astype(np.float64)
        targets = np.empty_like(values)
        k = 0
        for g in games:
            n = len(g)
            _lambda_targets(values[k : k + n], g.again, g.result, self.lam, targets[k : k + n])
            k += n
        y = torch.from_numpy(targets.astype(np.float32))
        err = raw - y
        mse = float((err.detach() ** 2).mean())
        if self.loss == "mse":
            loss = 0.5 * (err * err).sum()
        else:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="sum")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        self.opt.step()
        return {"loss": mse, "positions": k}


# --------------------------------------------------------------------------------------
# Online TD(lambda) with eligibility traces (the alternative, kept for the measurement)
# --------------------------------------------------------------------------------------


@njit
def _flip_rows(e):
    """A trace (5, n) into the other side's view: row 0 negated, rows 1 <-> 3, 2 <-> 4."""
    for c in range(e.shape[1]):
        e[0, c] = -e[0, c]
        v = e[1, c]
        e[1, c] = e[3, c]
        e[3, c] = v
        v = e[2, c]
        e[2, c] = e[4, c]
        e[4, c] = v


@njit
def _online_game(
    start, variant, net, play, dice, lam, alpha, logit_grad, acc, tmp, scratch, probs, traces
):
    """Play one self-play game with one net (contact = race) and learn online: after each
    roll, w += alpha * sum_k delta_k e_k with e_k the eligibility trace of output k
    (converted to the new side's view when the side on roll changes, then decayed by
    lambda). logit_grad: the traces follow the gradients of the output logits, not of the
    outputs (the "bce" loss's update). net = (w1, b1, w2, b2) float64, updated in place;
    play: its float32 copy that chooses the plays, refreshed after each update;
    traces = (ew1 (5, I * H), eb1 (5, H), ew2 (5, H * 5), eb2 (5, 5)) float64 scratch:
    full traces, since the view change mixes the outputs' rows. Returns (plies, status).
    """
    w1, b1, w2, b2 = net
    ew1, eb1, ew2, eb2 = traces
    n_in, nh = w1.shape
    ew1[:] = 0.0
    eb1[:] = 0.0
    ew2[:] = 0.0
    eb2[:] = 0.0
    x = np.empty(n_in, np.float32)
    flipped = np.empty(start.shape[0], np.int8)
    b = start.copy()
    h = np.empty(nh, np.float64)
    dh = np.empty(nh, np.float64)
    o = np.empty(N_OUTPUTS, np.float64)
    nz = np.empty(n_in, np.int64)
    for t in range(dice.shape[0]):
        _encode_into(b, x, flipped, HITS_OPEN, ESCAPES)
        n_nz = 0
        for i in range(n_in):
            if x[i] != 0.0:
                nz[n_nz] = i
                n_nz += 1
        for j in range(nh):
            s = np.float64(b1[j])
            for q in range(n_nz):
                i = nz[q]
                s += x[i] * w1[i, j]
            h[j] = 1.0 / (1.0 + math.exp(-s))
        for k in range(N_OUTPUTS):
            s = np.float64(b2[k])
            for j in range(nh):
                s += h[j] * w2[j, k]
            o[k] = 1.0 / (1.0 + math.exp(-s))
        # Traces: decayed (already in this position's view), plus this position's gradient.
        ew1 *= lam
        eb1 *= lam
        ew2 *= lam
        eb2 *= lam
        for k in range(N_OUTPUTS):
            g = 1.0 if logit_grad else o[k] * (1.0 - o[k])
            eb2[k, k] += g
            for j in range(nh):
                ew2[k, j * N_OUTPUTS + k] += g * h[j]
                dh[j] = g * w2[j, k] * h[j] * (1.0 - h[j])
                eb1[k, j] += dh[j]
            for q in range(n_nz):
                i = nz[q]
                xi = x[i]
                base = i * nh
                for j in range(nh):
                    ew1[k, base + j] += xi * dh[j]
        best, n = _choose(b, dice[t, 0], dice[t, 1], variant, play, play, acc, tmp, scratch, probs)
        if n < 0:
            return t, 1
        w1f = w1.reshape(n_in * nh)
        for k in range(N_OUTPUTS):
            d = alpha * (probs[best, k] - o[k])
            for m in range(N_OUTPUTS):
                b2[m] += d * eb2[k, m]
            for j in range(nh):
                b1[j] += d * eb1[k, j]
                for m in range(N_OUTPUTS):
                    w2[j, m] += d * ew2[k, j * N_OUTPUTS + m]
            for c in range(n_in * nh):
                w1f[c] += d * ew1[k, c]
        for i in range(n_in):
            for j in range(nh):
                play[0][i, j] = w1[i, j]
        for j in range(nh):
            play[1][j] = b1[j]
            for k in range(N_OUTPUTS):
                play[2][j, k] = w2[j, k]
        for k in range(N_OUTPUTS):
            play[3][k] = b2[k]
        after = acc[0][best]
        if outcome(after) != 0:
            return t + 1, 0
        if acc[1][best]:
            b[:] = after
        else:
            flip_into(after, b)
            _flip_rows(ew1)
            _flip_rows(eb1)
            _flip_rows(ew2)
            _flip_rows(eb2)
    return dice.shape[0], 2


class OnlineTD:
    """Online TD(lambda) self-play in one process (one net for contact and race): the
    alternative to Learner that doublet.training.td_compare measures."""

    def __init__(
        self,
        hidden: int,
        lam: float,
        alpha: float,
        variant: int = 0,
        seed: int = 0,
        loss: str = "mse",
    ) -> None:
        self.net = tuple(a.astype(np.float64) for a in random_net(hidden, seed))
        self.lam, self.alpha, self.variant = float(lam), float(alpha), variant
        self.logit_grad = loss == "bce"
        self.start = starting(variant)
        self.ws = Workspace()
        self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)
        self.traces = (
            np.zeros((N_OUTPUTS, N_INPUTS * hidden)),
            np.zeros((N_OUTPUTS, hidden)),
            np.zeros((N_OUTPUTS, hidden * N_OUTPUTS)),
            np.zeros((N_OUTPUTS, N_OUTPUTS)),
        )

    @property
    def play_net(self) -> Net:
        """The weights as the engine's float32 net."""
        w1, b1, w2, b2 = (a.astype(np.float32) for a in self.net)
        return (w1, b1, w2, b2)

    def game(self, seed: int, index: int) -> int:
        """Play and learn game `index` of `seed` (selfplay's dice); return its rolls."""
        backup = tuple(a.copy() for a in self.net)
        dice, _ = game_dice(seed, index, self.variant, MAX_PLIES, 0.0)
        while True:
            play = self.play_net
            n, status = _online_game(
                self.start,
                self.variant,
                self.net,
                play,
                dice,
                self.lam,
                self.alpha,
                self.logit_grad,
                self.ws.acc,
                self.ws.tmp,
                self.ws.scratch,
                self.probs,
                self.traces,
            )
            if status != 1:  # finished, or stopped at MAX_PLIES (learned up to there)
                return int(n)
            for a, b in zip(self.net, backup, strict=True):  # a roll overflowed: replay
                a[:] = b
            self.ws.allocate(self.ws.capacity * 4)
            self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)


__all__ = ["LOSSES", "Learner", "OnlineTD", "lambda_targets", "learning_rate"]
