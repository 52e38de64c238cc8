"""Cubeless money games between two players, with duplicate dice, all inside numba.

Players are a kind (RANDOM, PUBEVAL, NET) and what the kind needs (a net model, pubeval
weights); build them with ``random_player()``, ``pubeval_player()``, ``net_player(model)``.

Duplicate dice: the games come in pairs. Pair k draws one dice sequence from
(seed, k): the opening single-die throws (seat 0's die, then seat 1's, again on a tie),
then two dice for each roll in turn order. Game 2k has player a in seat 0 and b in
seat 1; game 2k+1 replays the same dice with the seats swapped, so each player gets the
other's luck once (and each starts as often as the other). The higher opening die
starts: in standard backgammon it plays the two opening dice, in Acey-Deucey it rolls
both dice afresh (RULES.md). A game ends when ``outcome(board) != 0`` and scores
+-1/2/3; a game still running after MAX_TURNS rolls is stopped, scored 0 and counted as
an error (none should ever happen).

Randomness is doublet.core.dice's counter-based splitmix64 stream per (seed, pair,
purpose): one for the dice of a pair, one for each game's random-player choices. It
holds no global state, so a seed gives the same games whatever the chunking, the
retries after a buffer grows,
or other numba code that draws from ``np.random`` in between.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from doublet.core.board import (
    ACEY_DEUCEY,
    SIZE,
    STANDARD,
    Board,
    Boards,
    flip_into,
    outcome,
    starting,
)
from doublet.core.dice import DICE_STREAM, _below, _die, _seed_stream, seed64
from doublet.core.jit import njit
from doublet.nn.eval import N_OUTPUTS, Model, Net, _choose
from doublet.nn.pubeval import PubevalWeights, _pubeval_choose, default_weights
from doublet.rules.movegen import Workspace, _outcomes

RANDOM, PUBEVAL, NET = 0, 1, 2
KIND_NAMES = {RANDOM: "random", PUBEVAL: "pubeval", NET: "net"}
MAX_TURNS = 10_000  # rolls per game; random play in either variant ends far sooner
CHUNK_PAIRS = 256  # pairs per kernel call (progress granularity)

_OK, _TURN_CAP, _OVERFLOW = 0, 1, 2


# --------------------------------------------------------------------------------------
# Players and results
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MatchPlayer:
    """One side of a match: a kind and, for NET, its model (contact and race nets)."""

    kind: int
    name: str
    model: Model | None = None
    weights: PubevalWeights | None = None


def random_player() -> MatchPlayer:
    """Plays one of the distinct outcomes of each roll, uniformly at random."""
    return MatchPlayer(RANDOM, "random")


def pubeval_player(weights: PubevalWeights | None = None) -> MatchPlayer:
    """Tesauro's pubeval (doublet.nn.pubeval), by default with the shipped weights."""
    return MatchPlayer(PUBEVAL, "pubeval", weights=weights or default_weights())


def net_player(model: Model, name: str = "net") -> MatchPlayer:
    """The 0-ply net player of doublet.nn.eval: the outcome with the best cubeless equity."""
    return MatchPlayer(NET, name, model=model)


@dataclass(frozen=True, eq=False)
class MatchResult:
    """Player a's results over a duplicate match (b's are their mirror image).

    ppg and se: a's points per game and its standard error (from the pair sums);
    win_rate: a's share of the games; gammon_rate and backgammon_rate: (a, b) games won
    with a gammon or backgammon (gammon_rate includes backgammons) per game; errors:
    games stopped at MAX_TURNS (scored 0); points, turns: (games,) a's points and the
    rolls of each game.
    """

    games: int
    ppg: float
    se: float
    win_rate: float
    gammon_rate: tuple[float, float]
    backgammon_rate: tuple[float, float]
    errors: int
    points: npt.NDArray[np.int64]
    turns: npt.NDArray[np.int64]

    @classmethod
    def from_points(cls, points: npt.ArrayLike, turns: npt.ArrayLike | None = None,
                    errors: int = 0) -> MatchResult:  # fmt: skip
        """The result of games whose points for a are `points` (game 2k and 2k+1 a pair)."""
        p = np.asarray(points, dtype=np.int64)
        t = np.zeros_like(p) if turns is None else np.asarray(turns, dtype=np.int64)
        ppg, se = ppg_and_se(p)
        n = len(p)
        return cls(
            games=n,
            ppg=ppg,
            se=se,
            win_rate=float(np.mean(p > 0)),
            gammon_rate=(float(np.mean(p >= 2)), float(np.mean(p <= -2))),
            backgammon_rate=(float(np.mean(p >= 3)), float(np.mean(p <= -3))),
            errors=errors,
            points=p,
            turns=t,
        )


def ppg_and_se(points: npt.ArrayLike) -> tuple[float, float]:
    """Points per game and its standard error for duplicate games (2k, 2k+1 a pair).

    The two games of a pair share their dice and are not independent; pairs are. With
    pair sums s_k (k < P): ppg = sum(s) / (2P), se = sd(s) / (2 sqrt(P)), sd with P - 1
    degrees of freedom (nan for a single pair).
    """
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 1 or len(p) == 0 or len(p) % 2:
        raise ValueError(f"need an even, nonzero number of games, got {p.shape}")
    s = p[0::2] + p[1::2]
    pairs = len(s)
    ppg = float(s.sum() / (2 * pairs))
    se = float(s.std(ddof=1) / (2 * math.sqrt(pairs))) if pairs > 1 else math.nan
    return ppg, se


# --------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------


@njit
def _pick(kind, b, d1, d2, variant, pw_c, pw_r, net_c, net_r, acc, tmp, scratch, probs, rng):
    """The play of one roll by a player of `kind`: (index into acc[0][:n], n), or
    (-1, -1) when the buffers are too small. b: (SIZE,) int8, mover's view."""
    if kind == PUBEVAL:
        return _pubeval_choose(b, d1, d2, variant, pw_c, pw_r, acc, tmp, scratch)
    if kind == NET:
        return _choose(b, d1, d2, variant, net_c, net_r, acc, tmp, scratch, probs)
    n = _outcomes(b, d1, d2, variant, acc, tmp, scratch)
    if n < 0:
        return -1, -1
    return _below(rng, n), n


@njit
def _play_game(seat_player, kinds, variant, start, pw_c, pw_r, nets_a, nets_b, dice_rng,
               choice_rng, acc, tmp, scratch, probs, board, record, rec_boards, rec_dice,
               rec_choice, rec_seat, opening):  # fmt: skip
    """Play one game; return (points for seat 0, rolls played, status _OK/_TURN_CAP/_OVERFLOW).

    seat_player (2,): the player (0 = a, 1 = b) in each seat; kinds (2,): each player's
    kind; start (SIZE,) int8: the position before the first roll (symmetric, so the
    starter's view); nets_a, nets_b: (contact net, race net) of each player; dice_rng,
    choice_rng: (1,) uint64 stream states; board (SIZE,) int8: scratch, the mover's view.
    When record: rec_boards[t] (SIZE,) = board before roll t (mover's view), rec_dice[t]
    (2,), rec_choice[t] = index into the roll's outcomes, rec_seat[t] = the mover's seat;
    opening (2,) = the deciding single-die throws of seats 0 and 1.
    """
    while True:
        o0 = _die(dice_rng)
        o1 = _die(dice_rng)
        if o0 != o1:
            break
    opening[0] = o0
    opening[1] = o1
    seat = 0 if o0 > o1 else 1
    for i in range(SIZE):
        board[i] = start[i]
    for t in range(MAX_TURNS):
        if t == 0 and variant == STANDARD:
            d1 = o0
            d2 = o1
        else:
            d1 = _die(dice_rng)
            d2 = _die(dice_rng)
        p = seat_player[seat]
        if p == 0:
            idx, n = _pick(kinds[0], board, d1, d2, variant, pw_c, pw_r, nets_a[0], nets_a[1],
                           acc, tmp, scratch, probs, choice_rng)  # fmt: skip
        else:
            idx, n = _pick(kinds[1], board, d1, d2, variant, pw_c, pw_r, nets_b[0], nets_b[1],
                           acc, tmp, scratch, probs, choice_rng)  # fmt: skip
        if n < 0:
            return 0, t, _OVERFLOW
        if record:
            for i in range(SIZE):
                rec_boards[t, i] = board[i]
            rec_dice[t, 0] = d1
            rec_dice[t, 1] = d2
            rec_choice[t] = idx
            rec_seat[t] = seat
        after = acc[0][idx]
        r = outcome(after)
        if r != 0:
            return (r if seat == 0 else -r), t + 1, _OK
        if acc[1][idx]:
            for i in range(SIZE):  # the mover rolls again: same view
                board[i] = after[i]
        else:
            flip_into(after, board)
            seat = 1 - seat
    return 0, MAX_TURNS, _TURN_CAP


@njit
def _play_pairs(first, last, seed, variant, kinds, start, pw_c, pw_r, nets_a, nets_b, acc,
                tmp, scratch, probs, points, turns, status):  # fmt: skip
    """Play pairs first..last-1 into points, turns, status ((games,) int64, indexed by
    game: 2k with a in seat 0, 2k+1 the same dice with b in seat 0; points are a's).
    Return -1 when done, or the pair whose roll overflowed the buffers (grow, rerun it).
    """
    seat_player = np.empty(2, np.int64)
    board = np.empty(SIZE, np.int8)
    dice_rng = np.empty(1, np.uint64)
    choice_rng = np.empty(1, np.uint64)
    no_boards = np.empty((1, SIZE), np.int8)
    no_dice = np.empty((1, 2), np.int64)
    no_ints = np.empty(1, np.int64)
    opening = np.empty(2, np.int64)
    for k in range(first, last):
        for j in range(2):
            seat_player[0] = j
            seat_player[1] = 1 - j
            _seed_stream(dice_rng, seed, k, DICE_STREAM)
            _seed_stream(choice_rng, seed, k, 1 + j)
            r, t, s = _play_game(seat_player, kinds, variant, start, pw_c, pw_r, nets_a, nets_b,
                                 dice_rng, choice_rng, acc, tmp, scratch, probs, board, False,
                                 no_boards, no_dice, no_ints, no_ints, opening)  # fmt: skip
            if s == _OVERFLOW:
                return k
            g = 2 * k + j
            points[g] = r if j == 0 else -r
            turns[g] = t
            status[g] = s
    return -1


# --------------------------------------------------------------------------------------
# Wrappers
# --------------------------------------------------------------------------------------

_NO_NET: Net = (
    np.zeros((1, 1), np.float32),
    np.zeros(1, np.float32),
    np.zeros((1, N_OUTPUTS), np.float32),
    np.zeros(N_OUTPUTS, np.float32),
)


def _nets(player: MatchPlayer) -> tuple[Net, Net]:
    """(contact, race) as C-contiguous float32 (one compiled signature for all players)."""
    if player.kind != NET:
        return _NO_NET, _NO_NET
    if player.model is None:
        raise ValueError(f"net player {player.name!r} has no model")

    def c(net: Net) -> Net:
        return tuple(np.ascontiguousarray(a, dtype=np.float32) for a in net)  # type: ignore[return-value]

    return c(player.model.contact), c(player.model.race)


def _weights(a: MatchPlayer, b: MatchPlayer) -> PubevalWeights:
    wa = a.weights if a.kind == PUBEVAL else None
    wb = b.weights if b.kind == PUBEVAL else None
    if (
        wa is not None
        and wb is not None
        and not (np.array_equal(wa.contact, wb.contact) and np.array_equal(wa.race, wb.race))
    ):
        raise ValueError("both players are pubeval with different weights: not supported")
    return wa or wb or default_weights()


def _check(a: MatchPlayer, b: MatchPlayer, variant: int) -> None:
    for p in (a, b):
        if p.kind not in KIND_NAMES:
            raise ValueError(f"unknown player kind {p.kind!r}")
    if variant not in (STANDARD, ACEY_DEUCEY):
        raise ValueError(f"unknown variant {variant!r}")


class _Buffers:
    def __init__(self) -> None:
        self.ws = Workspace()
        self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)

    def grow(self) -> None:
        self.ws.allocate(self.ws.capacity * 4)
        self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)


def play_match(a: MatchPlayer, b: MatchPlayer, games: int, seed: int,
               variant: int = STANDARD, *, progress: Callable[[int], None] | None = None,
               chunk_pairs: int = CHUNK_PAIRS) -> MatchResult:  # fmt: skip
    """Play `games` (even) cubeless money games of a against b with duplicate dice.

    Same seed, same games. progress(games done) is called after each chunk of
    `chunk_pairs` pairs (the chunking does not change the games).
    """
    if games <= 0 or games % 2:
        raise ValueError(f"games must be a positive even number (duplicate pairs), got {games}")
    _check(a, b, variant)
    w = _weights(a, b)
    nets_a, nets_b = _nets(a), _nets(b)
    kinds = np.array([a.kind, b.kind], np.int64)
    start = starting(variant)
    points = np.zeros(games, np.int64)
    turns = np.zeros(games, np.int64)
    status = np.zeros(games, np.int64)
    buf = _Buffers()
    pairs = games // 2
    k = 0
    while k < pairs:
        last = min(pairs, k + max(1, chunk_pairs))
        with np.errstate(over="ignore"):  # splitmix64 wraps on purpose (NUMBA_DISABLE_JIT=1)
            failed = _play_pairs(k, last, seed64(seed), variant, kinds, start, w.contact,
                                 w.race, nets_a, nets_b, buf.ws.acc, buf.ws.tmp, buf.ws.scratch,
                                 buf.probs, points, turns, status)  # fmt: skip
        if failed >= 0:
            buf.grow()  # the pair restarts from its seed: same games as without the overflow
            k = int(failed)
            continue
        k = last
        if progress is not None:
            progress(2 * k)
    return MatchResult.from_points(points, turns, errors=int((status == _TURN_CAP).sum()))


@dataclass(frozen=True, eq=False)
class GameRecord:
    """One game, replayable: roll t was played in boards[t] ((SIZE,) int8, the mover's
    view before the roll) with dice[t] by the player in seat seats[t], who chose outcome
    choices[t] of doublet.rules.movegen.legal_outcomes(boards[t], *dice[t], variant).

    opening: the deciding single-die throws (seat 0, seat 1); result: points for seat 0
    (0 for an error: the game reached MAX_TURNS); swapped: b sat in seat 0.
    """

    variant: int
    swapped: bool
    opening: tuple[int, int]
    boards: Boards
    dice: npt.NDArray[np.int64]
    choices: npt.NDArray[np.int64]
    seats: npt.NDArray[np.int64]
    result: int
    error: bool

    @property
    def points_a(self) -> int:
        """Player a's points."""
        return -self.result if self.swapped else self.result

    def steps(self) -> list[tuple[Board, tuple[int, int], int]]:
        """(board before the roll, dice, chosen outcome index) for every roll."""
        return [(self.boards[t], (int(self.dice[t, 0]), int(self.dice[t, 1])),
                 int(self.choices[t])) for t in range(len(self.choices))]  # fmt: skip


def play_game(a: MatchPlayer, b: MatchPlayer, seed: int, pair: int = 0, swapped: bool = False,
              variant: int = STANDARD) -> GameRecord:  # fmt: skip
    """Game 2 pair + swapped of play_match(a, b, ..., seed, variant), recorded roll by roll
    (the same game: same dice, same choices, same result)."""
    _check(a, b, variant)
    w = _weights(a, b)
    nets_a, nets_b = _nets(a), _nets(b)
    kinds = np.array([a.kind, b.kind], np.int64)
    j = int(bool(swapped))
    seat_player = np.array([j, 1 - j], np.int64)
    rec_boards = np.zeros((MAX_TURNS, SIZE), np.int8)
    rec_dice = np.zeros((MAX_TURNS, 2), np.int64)
    rec_choice = np.zeros(MAX_TURNS, np.int64)
    rec_seat = np.zeros(MAX_TURNS, np.int64)
    opening = np.zeros(2, np.int64)
    board = np.empty(SIZE, np.int8)
    dice_rng = np.empty(1, np.uint64)
    choice_rng = np.empty(1, np.uint64)
    buf = _Buffers()
    seed_u = seed64(seed)
    while True:
        with np.errstate(over="ignore"):  # splitmix64 wraps on purpose (NUMBA_DISABLE_JIT=1)
            _seed_stream(dice_rng, seed_u, pair, DICE_STREAM)
            _seed_stream(choice_rng, seed_u, pair, 1 + j)
            r, t, s = _play_game(seat_player, kinds, variant, starting(variant), w.contact,
                                 w.race, nets_a, nets_b, dice_rng, choice_rng, buf.ws.acc,
                                 buf.ws.tmp, buf.ws.scratch, buf.probs, board, True, rec_boards,
                                 rec_dice, rec_choice, rec_seat, opening)  # fmt: skip
        if s != _OVERFLOW:
            break
        buf.grow()
    t = int(t)
    return GameRecord(
        variant=variant,
        swapped=bool(swapped),
        opening=(int(opening[0]), int(opening[1])),
        boards=rec_boards[:t].copy(),
        dice=rec_dice[:t].copy(),
        choices=rec_choice[:t].copy(),
        seats=rec_seat[:t].copy(),
        result=int(r),
        error=s == _TURN_CAP,
    )


__all__ = [
    "KIND_NAMES",
    "MAX_TURNS",
    "NET",
    "PUBEVAL",
    "RANDOM",
    "GameRecord",
    "MatchPlayer",
    "MatchResult",
    "net_player",
    "play_game",
    "play_match",
    "ppg_and_se",
    "pubeval_player",
    "random_player",
]
