"""Rollouts: the value of a position by playing it out many times, with the field's
variance reduction, the same dice for every candidate play, and standard errors.

A trial of a position b (the side on roll before its roll; standard backgammon) plays
both sides from b with the play the searcher picks at ``ply`` (doublet.search.searcher:
0 or 1 ply, the same choice as ``Searcher.best``) until it ends:

- the game is over: its result (win, gammon, backgammon, for either side);
- ``bearoff`` and a pure bear-off: the exact database's probabilities (in a cubeful
  money rollout the cube's walk goes on to a small bear-off, both sides within 6
  checkers, whose cubeful values are exact too: doublet.cube.bearoff, its cube
  decisions taken in the trial; the cubeless value is still the first bear-off's);
- ``truncate`` = P > 0 and P plays made: the net's 0-ply probabilities there;
- MAX_MOVES plays (no game needs that many): the net's 0-ply probabilities.

The trial's value is the five probabilities (win, win gammon, win backgammon, lose
gammon, lose backgammon) of the side on roll of b at that end. Trial t's dice come from
the seed and t alone (doublet.core.dice._trial_roll): the first two rolls quasi-random
(every block of 36 trials has each first roll once and each second roll once, every
1,296 trials each pair once), the rest from the trial's own stream; so every candidate
play of a roll is rolled out on the same dice, trial by trial, and a result depends on
the seed and the number of trials, never on the workers or their order.

Luck adjustment (``luck``, on by default; GNU Backgammon's "variance reduction"): before
each roll of a trial, f(r) is the mover's 0-ply probabilities after the best 0-ply play
of roll r (as doublet.search.analysis.luck measures luck), for each of the 21 rolls;
the luck of the roll rolled is f(rolled) - sum_r w_r f(r), seen by b's side on roll.
The adjusted value of a trial is its value less the sum of its rolls' luck. Each luck
term has mean zero whatever came before it, so the adjusted mean estimates the same
value, with a variance that is lower the better the 0-ply net predicts the play-out (in
a bear-off with the exact database it is the exact value in every trial).

The estimate is the mean over trials; its standard error is the sample standard
deviation over sqrt(trials). For a function of the probabilities (the cubeless equity,
Janowski's cubeful equity, the difference between two plays) the error is that of its
linearisation at the mean (the delta method), per trial; two plays' difference is
measured trial by trial on the same dice (paired), so its error is far below either
play's own.

With ``cube`` states (a cubeful rollout), each trial is also played with the cube from
each state: the kernel records the trial (``cube_ply``: the depth of the decisions) and
doublet.search.rollout_cube walks the record, giving each trial's cubeful value and
cubeful luck (Trials.cube_raw, cube_luck). The documents of the front ends (the cube by
Janowski's conversion of the rollout's probabilities at the root, or from the cubeful
trials) are doublet.search.rollout_analysis's.

The work goes to an executor (doublet.core.parallel: this process, local processes, or
Ray tasks) in chunks of CHUNK trials; chunks are taken in trial order, so that a
stopping rule (``until_se``: stop once the equity's standard error, of every play, is at
most that) stops at the same trial whatever the workers. With a time budget (a
deadline) the tasks are single trials, taken in order too, so that the rollout stops
at the first trial's end past the deadline rather than a chunk's, seconds later at 1
ply (at least MIN_TIMED_TRIALS, two, are done, so that a standard error is measured; a
budget shorter than the workers take to start,
POOL_START, runs in this process).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from doublet.core.board import SIZE, STANDARD, flip_into
from doublet.core.dice import (
    N_ROLLS,
    QUASI_MOVES,
    ROLL_WEIGHTS,
    ROLLOUT_STREAM,
    _seed_stream,
    _trial_roll,
    check_seed,
    roll_index,
    seed64,
    trial_strata,
)
from doublet.core.errors import DoubletError, shown
from doublet.core.jit import njit
from doublet.core.parallel import Executor, LocalExecutor
from doublet.cube import bearoff as CB
from doublet.cube.met import to_money
from doublet.cube.state import CubeState
from doublet.formats.ids import board_array, check_in_play, validate
from doublet.nn.eval import N_OUTPUTS, Model, _equity, _mover_probs, _terminal, equity
from doublet.rules.bearoff import Tables as bearoff_tables_type
from doublet.rules.bearoff import _small_pair, is_bearoff
from doublet.search.rollout_cube import Record, walk
from doublet.search.searcher import (
    Cache,
    Limits,
    Nets,
    Searcher,
    Settings,
    Workspace,
    _all_rolls,
    _analyse_root,
    _best_index,
    _v0,
)

MAX_MOVES = 1000
CHUNK = 36  # trials a task: one block of the quasi-random first roll
TIMED_TASK = 1  # trials a task with a deadline: the clock is looked at after each
MIN_TIMED_TRIALS = 2  # a deadline stops no rollout before these: one trial has no error
# Local worker processes take a while to start (spawned, the package imported, the
# kernels read from numba's cache): the opening's first block of 36 trials at 0 ply took
# 1.8-2.3 s on a fresh pool of 2 against 1.4-1.5 s in this process (session 23, machine
# loaded), so about 0.3-0.8 s. A rollout whose time budget is under POOL_START seconds
# runs in this process unless its workers are running already, rather than spend half
# its budget starting them.
POOL_START = 1.0
MAX_ROLLOUT_PLY = 1
# A rollout keeps every trial's values (about 90 bytes a trial and position rolled out):
# at most MAX_TRIALS trials (1,000 cycles of the 1,296 first-two-roll pairs) and at most
# MAX_TRIAL_VALUES trials over all its positions (about 1.8 GB), so that a mistyped count
# is refused rather than filling the memory.
MAX_TRIALS = 1_296_000
MAX_TRIAL_VALUES = 20_000_000
# The estimate is assembled (for the progress report and the stopping rule) after each
# of the first EVERY_CHUNK chunks, then after every (chunks done // EVERY_CHUNK)-th: its
# cost stays proportional to the trials done, and where a stopping rule stops depends on
# the trials only, never on timing.
EVERY_CHUNK = 32
EQUITY_GRADIENT = np.array([2.0, 1.0, 1.0, -1.0, -1.0])  # d equity / d probabilities
# Cube states for a cubeful rollout: each (the start side's view, whether the start side
# may take a cube action before its first roll).
Cube = tuple[tuple[CubeState, bool], ...]
PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out (see the module docstring)."""

    trials: int = 1296
    ply: int = 0  # the checker play's depth, 0 or 1
    truncate: int = 0  # plays before a trial is valued by the net (0: play to the end)
    bearoff: bool = True  # end a trial at a pure bear-off with the database's value
    luck: bool = True  # luck adjustment
    seed: int = 1
    quasi: int = QUASI_MOVES  # rolls of a trial that are quasi-random (0, 1 or 2)
    until_se: float = 0.0  # > 0: stop once every equity's standard error is at most this
    cubeful: bool = False  # play the cube in the trials (where the documents use the cube)
    cube_ply: int = 0  # the depth of the cube decisions in the trials, 0 or 1

    def check(self, names: Mapping[str, str] | None = None) -> None:
        """DoubletError for the first setting out of its range, named as `names` maps
        its field (a front end's own names: doublet rollout's flags; default the field's
        name), with its meaning where the name does not say it."""

        def name(field: str, what: str = "") -> str:
            named = field if names is None else names.get(field, field)
            return f"{named} ({what})" if what else named

        def whole(field: str, lo: int, hi: int | None = None, what: str = "") -> None:
            v = getattr(self, field)
            integer = isinstance(v, int) and not isinstance(v, bool)
            if not integer or v < lo or (hi is not None and v > hi):
                span = (f"{lo} or more" if hi is None else f"{lo} or {hi}" if hi == lo + 1
                        else f"{lo}..{hi}")  # fmt: skip
                a = "" if integer else "an integer "
                raise DoubletError(f"{name(field, what)} must be {a}{span}, got {shown(v)}")

        whole("trials", 1, MAX_TRIALS)
        whole("ply", 0, MAX_ROLLOUT_PLY, "the trials' checker play")
        whole("truncate", 0)
        check_seed(self.seed, f"{name('seed')} must be")
        whole("quasi", 0, 2)
        whole("cube_ply", 0, MAX_ROLLOUT_PLY)
        if self.cube_ply and not self.cubeful:
            raise DoubletError(f"{name('cube_ply')} is the depth of the cube decisions in "
                               "the trials: it goes with a cubeful rollout "
                               f"({name('cubeful')})")  # fmt: skip
        se = self.until_se
        number = isinstance(se, (int, float))
        if not number or not se >= 0:  # NaN too
            got = f"{se:g}" if isinstance(se, float) else shown(se)
            raise DoubletError(f"{name('until_se', 'the standard error to stop at')} must be "
                               f"{'' if number else 'a number '}0 or more, got {got}")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The settings as the rollout document records them."""
        return {"ply": self.ply, "truncate": self.truncate, "bearoff": self.bearoff,
                "luck": self.luck, "seed": int(self.seed), "quasi": self.quasi,
                "until_se": self.until_se or None, "cubeful": self.cubeful,
                "cube_ply": self.cube_ply}  # fmt: skip


# -- the kernels ------------------------------------------------------------------------------


@njit
def _keep_end(p, out, end, terminal):
    """A trial's last value p (its side on roll's) into out; end[0] = terminal."""
    for j in range(N_OUTPUTS):
        out[j] = p[j]
    end[0] = terminal


BEAROFF_NONE, BEAROFF_ANY, BEAROFF_SMALL = 0, 1, 2  # where a trial ends at the database


@njit
def _small_bearoff(b, bo):
    """A pure bear-off with both sides within the small two-sided table's checkers (and
    the database in use: bo.small is a stand-in of one entry when not)."""
    return bo.small.shape[0] > 1 and _small_pair(b, bo.small, bo.binom)[0] >= 0


@njit
def _trial(start, trial, seed, strata, quasi, ply, truncate, bearoff, luck_on, nets, bo, cfg,
           ws, cache, stats, rp, rply, r_outs, r_agains, r_probs, r_starts, state, b, p,
           raw, luck, cube_ply, pre_b, pre_p, roll_b, roll_p, rolled_at, end):  # fmt: skip
    """Play trial `trial` of `start` (SIZE,); raw (5,) float64 = its value, luck (5,)
    float64 = the sum of its rolls' luck (0 unless luck_on), both seen by start's side on
    roll. Returns the plays made n, or -1 when a buffer is too small.

    With cube_ply 0 or 1 (-1: no record), the record the cube actions are walked on
    (doublet.search.rollout_cube): each move m's position before its roll (pre_b[m], the
    mover's view) with the probabilities its cube decision is taken by (pre_p[m], the
    mover's: at cube_ply 0 the net's, at 1 the mean over the 21 rolls of the best 0-ply
    play's); with luck_on, the best 0-ply play of
    each roll r (roll_b[m, r], roll_p[m, r]: the board after it and the mover's
    probabilities) and the roll rolled (rolled_at[m]). At the end, pre_b[n] is the last
    position, pre_p[n] its value for its side on roll and end[0] 1 when the game is over
    there (else it was valued by the net or the database)."""
    _seed_stream(state, seed, trial, ROLLOUT_STREAM)
    for k in range(N_OUTPUTS):
        luck[k] = 0.0
    for i in range(SIZE):
        b[i] = start[i]
    f = np.empty(N_OUTPUTS, np.float64)
    mean = np.empty(N_OUTPUTS, np.float64)
    side = 0
    # BEAROFF_SMALL (a cubeful money rollout): the cubeless value is taken at the first
    # pure bear-off, as BEAROFF_ANY's (the same raw and luck), and the trial is played on
    # to a small bear-off for the cube's record alone.
    frozen = False
    for m in range(MAX_MOVES + 1):
        record = cube_ply >= 0
        if record:
            for i in range(SIZE):
                pre_b[m, i] = b[i]
        if _terminal(b, p):
            if not frozen:
                _mover_probs(p, side == 0, raw)  # seen by the start side
            if record:
                _keep_end(p, pre_p[m], end, 1)
            return m
        over = ((bearoff == BEAROFF_ANY and is_bearoff(b)) or (bearoff == BEAROFF_SMALL
                and _small_bearoff(b, bo)) or m == MAX_MOVES or (truncate > 0
                and m == truncate))  # fmt: skip
        if over or (bearoff == BEAROFF_SMALL and not frozen and is_bearoff(b)):
            _v0(b, STANDARD, nets.contact, nets.race, bo, cfg.use_bo, ws.x, ws.hidden,
                ws.flipped, p)  # fmt: skip
            if not frozen:  # the cubeless trial ends here
                _mover_probs(p, side == 0, raw)  # seen by the start side
                frozen = True
            if over:
                if record:
                    _keep_end(p, pre_p[m], end, 0)
                return m
        k = _trial_roll(strata, quasi, state, trial, m)
        d1, d2 = 1 + k // 6, 1 + k % 6
        chosen = -1
        if cube_ply == 0:  # the cube decision's probabilities: the net's
            _v0(b, STANDARD, nets.contact, nets.race, bo, cfg.use_bo, ws.x, ws.hidden,
                ws.flipped, p)  # fmt: skip
            for j in range(N_OUTPUTS):
                pre_p[m, j] = p[j]
        if luck_on or cube_ply == 1:
            if _all_rolls(b, nets, bo, cfg, ws, cache, stats, r_outs, r_agains, r_probs,
                          r_starts) < 0:  # fmt: skip
                return -1
            rolled = roll_index(d1, d2)
            for j in range(N_OUTPUTS):
                mean[j] = 0.0
            for r in range(N_ROLLS):
                best = r_starts[r]
                best_eq = _equity(r_probs[best])
                for i in range(r_starts[r] + 1, r_starts[r + 1]):
                    e = _equity(r_probs[i])
                    if e > best_eq:  # ties: the first, as _best_index
                        best_eq = e
                        best = i
                for j in range(N_OUTPUTS):
                    mean[j] += ROLL_WEIGHTS[r] * r_probs[best, j]
                if r == rolled:
                    chosen = best
                if record and luck_on:
                    for j in range(SIZE):
                        roll_b[m, r, j] = r_outs[best, j]
                    for j in range(N_OUTPUTS):
                        roll_p[m, r, j] = r_probs[best, j]
            if record:
                rolled_at[m] = rolled
                if cube_ply == 1:  # the cube decision's probabilities: the 1-ply mean
                    for j in range(N_OUTPUTS):
                        pre_p[m, j] = mean[j]
            if luck_on and not frozen:
                for j in range(N_OUTPUTS):
                    f[j] = r_probs[chosen, j] - mean[j]  # the mover's luck
                if side == 0:
                    for j in range(N_OUTPUTS):
                        luck[j] += f[j]
                else:  # a difference of probabilities, seen by the other side
                    luck[0] -= f[0]
                    luck[1] += f[3]
                    luck[2] += f[4]
                    luck[3] += f[1]
                    luck[4] += f[2]
        if ply == 0 and chosen >= 0:  # the 0-ply choice is the roll's best just found
            flip_into(r_outs[chosen], b)
        else:
            n = _analyse_root(b, d1, d2, ply, nets, bo, cfg, ws, cache, stats, rp, rply)
            if n < 0:
                return -1
            flip_into(ws.outs[0, _best_index(rp, rply, n)], b)
        side ^= 1
    return -1  # not reached: the loop ends at MAX_MOVES


@njit
def _chunk(starts, lo, hi, seed, strata, quasi, ply, truncate, bearoff, luck_on, nets, bo, cfg,
           ws, cache, stats, rp, rply, r_outs, r_agains, r_probs, r_starts, raw, luck,
           moves):  # fmt: skip
    """Trials lo..hi-1 of each start position starts (K, SIZE): raw, luck (K, hi - lo, 5)
    float64 and moves (K, hi - lo) int64. False when a buffer is too small."""
    state = np.zeros(1, np.uint64)
    b = np.empty(SIZE, np.int8)
    p = np.empty(N_OUTPUTS, np.float32)
    pre_b = np.zeros((1, SIZE), np.int8)  # nothing is recorded
    pre_p = np.zeros((1, N_OUTPUTS), np.float64)
    roll_b = np.zeros((1, N_ROLLS, SIZE), np.int8)
    roll_p = np.zeros((1, N_ROLLS, N_OUTPUTS), np.float64)
    rolled_at = np.zeros(1, np.int64)
    end = np.zeros(1, np.int64)
    for t in range(lo, hi):
        for c in range(starts.shape[0]):
            m = _trial(starts[c], t, seed, strata, quasi, ply, truncate, bearoff, luck_on, nets,
                       bo, cfg, ws, cache, stats, rp, rply, r_outs, r_agains, r_probs, r_starts,
                       state, b, p, raw[c, t - lo], luck[c, t - lo], -1, pre_b, pre_p,
                       roll_b, roll_p, rolled_at, end)  # fmt: skip
            if m < 0:
                return False
            moves[c, t - lo] = m
    return True


@njit
def _chunk_entry(starts, lo, hi, seed, strata, quasi, ply, truncate, bearoff, luck_on, nets, bo,
                 cfg, ws, cache, stats, rp, rply, r_outs, r_agains, r_probs, r_starts, raw, luck,
                 moves):  # fmt: skip
    """_chunk, called from Python with the structures as plain tuples (see
    doublet.search.searcher._analyse_root_entry)."""
    return _chunk(starts, lo, hi, seed, strata, quasi, ply, truncate, bearoff, luck_on,
                  Nets(*nets), bearoff_tables_type(*bo), Settings(*cfg), Workspace(*ws),
                  Cache(*cache), stats, rp, rply, r_outs, r_agains, r_probs, r_starts, raw, luck,
                  moves)  # fmt: skip


@njit
def _trial_entry(start, trial, seed, strata, quasi, ply, truncate, bearoff, luck_on, nets, bo,
                 cfg, ws, cache, stats, rp, rply, r_outs, r_agains, r_probs, r_starts, raw,
                 luck, cube_ply, pre_b, pre_p, roll_b, roll_p, rolled_at, end):  # fmt: skip
    """One trial with its record (see _trial), called from Python with the structures as
    plain tuples."""
    state = np.zeros(1, np.uint64)
    b = np.empty(SIZE, np.int8)
    p = np.empty(N_OUTPUTS, np.float32)
    return _trial(start, trial, seed, strata, quasi, ply, truncate, bearoff, luck_on,
                  Nets(*nets), bearoff_tables_type(*bo), Settings(*cfg), Workspace(*ws),
                  Cache(*cache), stats, rp, rply, r_outs, r_agains, r_probs, r_starts, state,
                  b, p, raw, luck, cube_ply, pre_b, pre_p, roll_b, roll_p, rolled_at,
                  end)  # fmt: skip


# -- one process's work -----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Job:
    """What every chunk of one rollout shares: the model, the start positions (K, SIZE),
    each seen by its side on roll, and the settings. `token` names it in the workers."""

    model: Model
    starts: np.ndarray
    settings: RolloutSettings
    cube: Cube = ()
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


class Roller:
    """One process's searcher and buffers for rollouts with a model."""

    def __init__(self, model: Model) -> None:
        if model.variant != STANDARD:
            raise DoubletError("rollouts are for standard backgammon (Acey-Deucey's 1-2 has "
                               "over 800,000 plays)")  # fmt: skip
        self.searcher = Searcher(model, STANDARD)
        self._rolls(self.searcher.capacity)
        rows = MAX_MOVES + 1  # a trial's record (the cube's walk), about 1.5 MB
        self.pre_b = np.zeros((rows, SIZE), np.int8)
        self.pre_p = np.zeros((rows, N_OUTPUTS), np.float64)
        self.roll_b = np.zeros((rows, N_ROLLS, SIZE), np.int8)
        self.roll_p = np.zeros((rows, N_ROLLS, N_OUTPUTS), np.float64)
        self.rolled = np.zeros(rows, np.int64)
        self.end = np.zeros(1, np.int64)

    def _rolls(self, capacity: int) -> None:
        rows = N_ROLLS * capacity  # every play of every roll fits
        self.r_outs = np.zeros((rows, SIZE), np.int8)
        self.r_agains = np.zeros(rows, np.int8)
        self.r_probs = np.zeros((rows, N_OUTPUTS), np.float32)
        self.r_starts = np.zeros(N_ROLLS + 1, np.int64)

    def run(self, starts: np.ndarray, lo: int, hi: int, settings: RolloutSettings,
            cube: Cube = ()) -> tuple[np.ndarray, ...]:  # fmt: skip
        """Trials lo..hi-1 of each start: (raw, luck (K, hi - lo, 5), moves (K, hi - lo)),
        and with `cube` (cube states, each with whether the start side may act before its
        first roll) each trial's cubeful value and luck in each state (K, hi - lo, S)."""
        s = self.searcher
        b = np.ascontiguousarray(starts, dtype=np.int8).reshape(-1, SIZE)
        k = b.shape[0]
        raw = np.zeros((k, hi - lo, N_OUTPUTS), np.float64)
        luck = np.zeros((k, hi - lo, N_OUTPUTS), np.float64)
        moves = np.zeros((k, hi - lo), np.int64)
        strata = trial_strata(settings.seed)
        seed = seed64(settings.seed)
        if cube:
            return self._run_cube(b, lo, hi, settings, seed, cube, raw, luck, moves, strata)
        while True:
            nets, bo, cfg, ws, cache = s._args(Limits(ply=settings.ply))
            if _chunk_entry(b, lo, hi, seed, strata, settings.quasi,
                            settings.ply, settings.truncate, int(settings.bearoff), settings.luck,
                            nets, bo, cfg, ws, cache, s.stats, s.result_probs, s.result_ply,
                            self.r_outs, self.r_agains, self.r_probs, self.r_starts, raw, luck,
                            moves):  # fmt: skip
                return raw, luck, moves
            s._allocate(s.capacity * 4)
            self._rolls(s.capacity)

    def _run_cube(self, b: np.ndarray, lo: int, hi: int, settings: RolloutSettings,
                  seed: np.uint64, cube: Cube, raw: np.ndarray, luck: np.ndarray,
                  moves: np.ndarray, strata: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
        """run with the cube: each trial played once with its record, then walked in each
        cube state (doublet.search.rollout_cube)."""
        s = self.searcher
        k = b.shape[0]
        # A money trial ends at a small bear-off (its cubeful values exact), not any.
        end = (
            BEAROFF_NONE
            if not settings.bearoff
            else (BEAROFF_SMALL if all(CB.applies(state) for state, _ in cube) else BEAROFF_ANY)
        )
        c_raw = np.zeros((k, hi - lo, len(cube)), np.float64)
        c_luck = np.zeros_like(c_raw)
        for t in range(lo, hi):
            for c in range(k):
                while True:
                    nets, bo, cfg, ws, cache = s._args(Limits(ply=settings.ply))
                    n = _trial_entry(b[c], t, seed, strata, settings.quasi,
                                     settings.ply, settings.truncate, end,
                                     settings.luck, nets, bo, cfg, ws, cache, s.stats,
                                     s.result_probs, s.result_ply, self.r_outs, self.r_agains,
                                     self.r_probs, self.r_starts, raw[c, t - lo], luck[c, t - lo],
                                     settings.cube_ply, self.pre_b, self.pre_p, self.roll_b,
                                     self.roll_p, self.rolled, self.end)  # fmt: skip
                    if n >= 0:
                        break
                    s._allocate(s.capacity * 4)
                    self._rolls(s.capacity)
                moves[c, t - lo] = n
                rec = Record(int(n), self.pre_b, self.pre_p, self.roll_b, self.roll_p,
                             self.rolled, bool(self.end[0]))  # fmt: skip
                for j, (state, act_first) in enumerate(cube):
                    c_raw[c, t - lo, j], c_luck[c, t - lo, j] = walk(rec, state, act_first,
                                                                     settings.luck)  # fmt: skip
        return raw, luck, moves, c_raw, c_luck


_ROLLER: dict[str, Roller] = {}  # the last job's token -> its Roller (one a process)


def run_chunk(job: Job, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    """The task a worker runs: trials lo..hi-1 of the job (a Roller kept for the job)."""
    if job.token not in _ROLLER:
        _ROLLER.clear()
        _ROLLER[job.token] = Roller(job.model)
    return _ROLLER[job.token].run(job.starts, lo, hi, job.settings, job.cube)


# -- the estimate -----------------------------------------------------------------------------


@dataclass
class Trials:
    """The trials done: raw values and luck (K, n, 5), plays made (K, n), each seen by its
    start position's side on roll; `stopped` says why there are fewer than asked."""

    settings: RolloutSettings
    raw: np.ndarray
    luck: np.ndarray
    moves: np.ndarray
    seconds: float = 0.0
    stopped: str | None = None
    where: str = "this process"
    cube: Cube = ()  # the cube states of a cubeful rollout
    cube_raw: np.ndarray | None = None  # (K, n, S): each trial's value in each cube state
    cube_luck: np.ndarray | None = None  # (K, n, S): its luck (absolute, the start side's)

    @property
    def n(self) -> int:
        """The trials done."""
        return int(self.raw.shape[1])

    def columns(self) -> list[np.ndarray]:
        """Its arrays in the order a chunk's result has them (run_chunk)."""
        cols = [self.raw, self.luck, self.moves]
        if self.cube:
            assert self.cube_raw is not None and self.cube_luck is not None
            cols += [self.cube_raw, self.cube_luck]
        return cols

    def cube_values(self) -> np.ndarray:
        """Each trial's cubeful value in each cube state (K, n, S), absolute and seen by
        the start side: luck-adjusted when the settings say so."""
        assert self.cube_raw is not None and self.cube_luck is not None
        return self.cube_raw - self.cube_luck if self.settings.luck else self.cube_raw

    def running(self) -> tuple[np.ndarray, np.ndarray]:
        """The equity a stopping rule and a progress bar follow, (K,) with its standard
        error (K,): the cubeful one of the first cube state in units of the cube
        (money-equivalent in a match), else the cubeless one."""
        if not self.cube:
            return self.equity()
        v = normalise(self.cube[0][0], self.cube_values()[:, :, 0])
        return v.mean(axis=1), _se(v)

    def values(self) -> np.ndarray:
        """Each trial's value (K, n, 5): luck-adjusted when the settings say so."""
        return self.raw - self.luck if self.settings.luck else self.raw

    def probabilities(self) -> np.ndarray:
        """The estimate (K, 5): the mean over trials."""
        return self.values().mean(axis=1)

    def probability_se(self) -> np.ndarray:
        """Standard errors of the probabilities (K, 5)."""
        return _se(self.values())

    def equity(self) -> tuple[np.ndarray, np.ndarray]:
        """The cubeless equity (K,) and its standard error (K,)."""
        v = self.values()
        return np.asarray(equity(v.mean(axis=1))), _se(v @ EQUITY_GRADIENT)


def normalise(state: CubeState, v: np.ndarray) -> np.ndarray:
    """Absolute values in `state` (money: points of the base stake; match: MWC) as GNU
    Backgammon shows them: per unit of the cube, money-equivalent in a match."""
    if state.is_match:
        return np.asarray(to_money(state, v), dtype=np.float64)
    return np.asarray(v, dtype=np.float64) / state.value


def _se(x: np.ndarray) -> np.ndarray:
    """The standard error of the mean over axis 1 (0 for a single trial)."""
    n = x.shape[1]
    if n < 2:
        return np.zeros(x.shape[:1] + x.shape[2:])
    return np.asarray(x.std(axis=1, ddof=1) / np.sqrt(n))


def gradient(fn: Callable[[np.ndarray], float], p: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d fn / d p (5,) at p, by central differences (fn: probabilities -> a number)."""
    g = np.zeros(N_OUTPUTS)
    for k in range(N_OUTPUTS):
        e = np.zeros(N_OUTPUTS)
        e[k] = h
        g[k] = (fn(p + e) - fn(p - e)) / (2 * h)
    return g


def flip_values(v: np.ndarray) -> np.ndarray:
    """Trial values (..., 5) seen by the other side (the mover after a play, when the
    position rolled out is the opponent's)."""
    return np.stack([1.0 - v[..., 0], v[..., 3], v[..., 4], v[..., 1], v[..., 2]], axis=-1)


# -- running one ------------------------------------------------------------------------------


Progress = Callable[[int, int, "Trials"], None]


def rollout(model: Model, starts: np.ndarray, settings: RolloutSettings,
            ex: Executor | None = None, progress: Progress | None = None,
            deadline: float | None = None, cube: Cube = (),
            measure: Callable[[Trials], np.ndarray] | None = None) -> Trials:  # fmt: skip
    """Roll out each start position (K, SIZE) or one (SIZE,), each seen by its side on
    roll, on the same dice: the Trials. Chunks of CHUNK trials (with a `deadline`, tasks
    of TIMED_TASK) go to the executor (None: this process) and are taken in trial order;
    the rollout stops early, keeping what it has: at a chunk's end once until_se is met
    (Trials.running), at the first task's end past the `deadline` (time.perf_counter()),
    or on Ctrl-C (KeyboardInterrupt: the blocks finished are kept, those running dropped;
    raised again when none had finished). progress(done, total, trials) as it goes.
    With `cube`, each trial is also played with the cube from each of these states
    (doublet.search.rollout_cube). `measure`: the standard errors (K,) until_se stops on,
    those of the equities the caller shows (default: Trials.running's)."""
    settings.check()
    b = board_array(starts).reshape(-1, SIZE)  # (a review: a (2, 2, 30) array was rolled out)
    for row in b:
        validate(row, STANDARD)
        check_in_play(row, STANDARD)
    ex = ex or Executor()
    if (deadline is not None and isinstance(ex, LocalExecutor) and not ex.started
            and deadline - time.perf_counter() < POOL_START):  # fmt: skip
        ex = Executor()  # the workers would start after the budget is spent
    k = b.shape[0]
    if k * settings.trials > MAX_TRIAL_VALUES:
        raise DoubletError(
            f"{settings.trials:,} trials of {k} positions would keep {k * settings.trials:,} "
            f"trials' values, more than {MAX_TRIAL_VALUES:,}: roll out fewer trials or plays"
        )
    job = Job(model, b, settings, tuple(cube))
    handle = ex.shared(job)
    # A task's trials: a chunk, or with a deadline one trial, so that the clock is looked
    # at often (a chunk of 36 trials at 1 ply takes seconds); what a task holds changes
    # no trial (its dice are the seed's and its number's), only when the clock is read.
    size = CHUNK if deadline is None else TIMED_TASK
    n_tasks = -(-settings.trials // size)
    tasks = ((handle, lo, min(lo + size, settings.trials))
             for lo in range(0, settings.trials, size))  # fmt: skip
    parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    taken: list[tuple[np.ndarray, ...]] = []  # the tasks taken, in order
    done = 0  # tasks taken
    received = 0  # tasks finished (taken or not)
    t0 = time.perf_counter()
    trials = _assemble(settings, [], k, job.cube)
    stopped = None
    results = ex.map(run_chunk, tasks)
    try:
        for i, part in results:
            parts[i] = part
            received += 1
            grew = False
            while done in parts:
                taken.append(parts.pop(done))
                done += 1
                grew = True
            if not grew:
                continue
            finished = done == n_tasks
            trials_done = min(done * size, settings.trials)
            chunks = trials_done // CHUNK  # whole chunks done
            due = finished or (trials_done % CHUNK == 0 and (
                chunks <= EVERY_CHUNK or chunks % (chunks // EVERY_CHUNK) == 0))  # fmt: skip
            late = (deadline is not None and trials_done >= MIN_TIMED_TRIALS
                    and time.perf_counter() > deadline)  # fmt: skip
            if not (due or late):
                continue
            trials = _assemble(settings, taken, k, job.cube)
            taken = [tuple(trials.columns())]
            if progress is not None:
                progress(trials.n, settings.trials, trials)
            if finished:
                break
            if (due and settings.until_se > 0 and trials.n >= 2 * CHUNK
                    and float((trials.running()[1] if measure is None else measure(trials)
                               ).max()) <= settings.until_se):  # fmt: skip
                stopped = f"the standard error reached {settings.until_se:g} ({trials.n} trials)"
                break
            if late:
                stopped = f"the time budget ran out after {trials.n} trials"
                break
    except KeyboardInterrupt:
        ex.close()
        trials = _assemble(settings, taken, k, job.cube)
        if trials.n == 0:  # no block had finished: nothing to answer with
            raise
        stopped = f"interrupted after {trials.n} trials"
    finally:
        results.close()
    if stopped and done < n_tasks:
        # Tasks still running would hold the workers for the next rollout: let them end
        # if that takes less time than starting new workers (timed one-trial tasks), else
        # end the workers.
        per_task = (time.perf_counter() - t0) * ex.workers / max(received, 1)
        ex.abandon(grace=POOL_START if 3 * per_task < POOL_START else 0.0)
    trials.seconds = time.perf_counter() - t0
    trials.stopped = stopped
    trials.where = ex.where
    return trials


def _assemble(settings: RolloutSettings, parts: list[tuple[np.ndarray, ...]], k: int,
              cube: Cube = ()) -> Trials:  # fmt: skip
    if not parts:
        z = np.zeros((k, 0, N_OUTPUTS))
        c = np.zeros((k, 0, len(cube))) if cube else None
        return Trials(settings, z, z.copy(), np.zeros((k, 0), np.int64), cube=cube, cube_raw=c,
                      cube_luck=None if c is None else c.copy())  # fmt: skip
    cols = [np.concatenate([p[j] for p in parts], axis=1) for j in range(len(parts[0]))]
    if cube:
        return Trials(settings, cols[0], cols[1], cols[2], cube=cube, cube_raw=cols[3],
                      cube_luck=cols[4])  # fmt: skip
    return Trials(settings, cols[0], cols[1], cols[2])


__all__ = [
    "CHUNK",
    "EQUITY_GRADIENT",
    "MAX_MOVES",
    "MIN_TIMED_TRIALS",
    "TIMED_TASK",
    "Cube",
    "Job",
    "Roller",
    "RolloutSettings",
    "Trials",
    "flip_values",
    "gradient",
    "normalise",
    "rollout",
    "run_chunk",
]
