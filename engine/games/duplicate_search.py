"""Duplicate-dice games where a player searches: doublet.games.duplicate's games, with a
Python loop.

doublet.games.duplicate plays whole games inside numba, which suits players that are one
kernel call
a roll (random, pubeval, the 0-ply net). A searching player (doublet.search.searcher.Searcher at
some ply) runs its own kernels per roll, so here the game loop is Python. The dice come
from the very same counter-based streams as doublet.games.duplicate (pair k of seed s has the same
opening throw and rolls), so ``play_match_with("net", "pubeval", ...)`` plays exactly the
games of ``play_match(net_player(m), pubeval_player(), ...)`` (a test checks it).

Player specs (``player(spec, variant[, limits])``; limits: a search's
doublet.search.searcher.Limits other than the defaults, its ply the spec's):
    random | pubeval | net | net:PATH     the players of doublet.games.duplicate
    search:PLY | search:PLY:PATH          the search at PLY (0-4), with the exact bear-off
                                          database and the one-sided race net in standard
                                          backgammon
    racenet:PLY | racenet:PLY:PATH        the same search valuing races with the model's
                                          race net instead (doublet.rules.onesided)

Instead of a spec, a seat can take a *chooser factory*: a callable ``factory(variant) ->
Chooser``, for players that live outside the engine (benchmarks/vs_gnubg.py passes GNU
Backgammon this way). Each worker builds its own chooser from it, so with ``workers > 1``
it must pickle (a module-level function or a functools.partial of one).

Games run in ``workers`` processes (pairs split in chunks); the result does not depend on
the number of workers.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
from collections.abc import Callable
from typing import Any

import numpy as np

from doublet.core.board import SIZE, STANDARD, flip_into, outcome, starting
from doublet.core.dice import DICE_STREAM, _die, _seed_stream, seed64
from doublet.games.duplicate import (
    MAX_TURNS,
    NET,
    PUBEVAL,
    RANDOM,
    MatchResult,
    _Buffers,
    _nets,
    _pick,
    _weights,
    net_player,
    pubeval_player,
    random_player,
)
from doublet.nn.eval import default_model, load_model
from doublet.search.choice import choose
from doublet.search.searcher import Limits, Searcher

# A chooser plays one roll: (board (SIZE,) int8 mover's view, d1, d2, rng (1,) uint64)
# -> (the board after the play, the mover rolls again).
Chooser = Callable[[np.ndarray, int, int, np.ndarray], tuple[np.ndarray, bool]]
# A seat of play_match_with: a spec (see the module doc) or a factory variant -> Chooser.
Seat = str | Callable[[int], Chooser]


def _kernel_chooser(kind: int, model: Any, variant: int) -> Chooser:
    makers = {RANDOM: random_player, PUBEVAL: pubeval_player}
    p = net_player(model) if kind == NET else makers[kind]()
    w = _weights(p, p)
    net_c, net_r = _nets(p)
    buf = _Buffers()

    def choose(b: np.ndarray, d1: int, d2: int, rng: np.ndarray) -> tuple[np.ndarray, bool]:
        while True:
            with np.errstate(over="ignore"):
                idx, n = _pick(kind, b, d1, d2, variant, w.contact, w.race, net_c, net_r,
                               buf.ws.acc, buf.ws.tmp, buf.ws.scratch, buf.probs, rng)  # fmt: skip
            if n >= 0:
                return buf.ws.acc[0][idx].copy(), bool(buf.ws.acc[1][idx])
            buf.grow()

    return choose


def _search_chooser(model: Any, variant: int, limits: Limits, onesided: bool = True) -> Chooser:
    s = Searcher(model, variant, use_onesided=onesided)

    def chooser(b: np.ndarray, d1: int, d2: int, rng: np.ndarray) -> tuple[np.ndarray, bool]:
        return choose(s, b, d1, d2, limits)  # the board is a row of analyse's fresh copy

    return chooser


def player(spec: str, variant: int, limits: Limits | None = None) -> Chooser:
    """A chooser from a spec (see the module doc); limits: a search spec's settings
    (Limits(ply=PLY) by default; given, its ply is replaced by the spec's). ValueError or
    ModelError if bad."""
    kind, _, rest = spec.partition(":")
    if kind in ("search", "racenet"):
        ply_text, _, path = rest.partition(":")
        if not ply_text.isdigit() or not 0 <= int(ply_text) <= 4:
            raise ValueError(f"{spec!r}: use {kind}:PLY with PLY 0-4, or {kind}:PLY:PATH")
        model = load_model(path) if path else default_model(variant)
        limits = dataclasses.replace(limits or Limits(), ply=int(ply_text))
        return _search_chooser(model, variant, limits, onesided=kind == "search")
    if limits is not None:
        raise ValueError(f"search limits go with search:PLY or racenet:PLY, not {spec!r}")
    if kind == "net":
        return _kernel_chooser(NET, load_model(rest) if rest else default_model(variant), variant)
    if rest:
        raise ValueError(f"player {kind!r} takes no argument: {spec!r}")
    if kind == "pubeval":
        return _kernel_chooser(PUBEVAL, None, variant)
    if kind == "random":
        return _kernel_chooser(RANDOM, None, variant)
    raise ValueError(
        f"unknown player {spec!r}: use random, pubeval, net[:PATH], "
        "search:PLY[:PATH], racenet:PLY[:PATH]"
    )


def make_chooser(seat: Seat, variant: int) -> Chooser:
    """The chooser of a seat: player(spec) for a spec, factory(variant) for a factory."""
    return player(seat, variant) if isinstance(seat, str) else seat(variant)


def play_game_with(seats: tuple[Chooser, Chooser], seed: int, pair: int, swapped: bool,
                   variant: int = STANDARD) -> tuple[int, int]:  # fmt: skip
    """Game 2 pair + swapped: (points for seat 0, rolls). seats[0] plays in seat 0."""
    dice = np.empty(1, np.uint64)
    rng = np.empty(1, np.uint64)
    with np.errstate(over="ignore"):
        seed_u = seed64(seed)
        _seed_stream(dice, seed_u, pair, DICE_STREAM)
        _seed_stream(rng, seed_u, pair, 1 + int(swapped))
        while True:
            o0, o1 = int(_die(dice)), int(_die(dice))
            if o0 != o1:
                break
        seat = 0 if o0 > o1 else 1
        board = starting(variant)
        nxt = np.empty(SIZE, np.int8)
        for t in range(MAX_TURNS):
            if t == 0 and variant == STANDARD:
                d1, d2 = o0, o1
            else:
                d1, d2 = int(_die(dice)), int(_die(dice))
            after, again = seats[seat](board, d1, d2, rng)
            r = int(outcome(after))
            if r != 0:
                return (r if seat == 0 else -r), t + 1
            if again:
                board = after
            else:
                flip_into(after, nxt)
                board, nxt = nxt.copy(), nxt
                seat = 1 - seat
    return 0, MAX_TURNS


def _play_range(a: Seat, b: Seat, first: int, last: int, seed: int,
                variant: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    pa, pb = make_chooser(a, variant), make_chooser(b, variant)
    n = last - first
    points = np.zeros(2 * n, np.int64)
    turns = np.zeros(2 * n, np.int64)
    for k in range(first, last):
        for j in range(2):
            seats = (pa, pb) if j == 0 else (pb, pa)
            r, t = play_game_with(seats, seed, k, bool(j), variant)
            g = 2 * (k - first) + j
            points[g] = r if j == 0 else -r
            turns[g] = t
    return points, turns


def _task(args: tuple[Seat, Seat, int, int, int, int]) -> tuple[int, np.ndarray, np.ndarray]:
    a, b, first, last, seed, variant = args
    p, t = _play_range(a, b, first, last, seed, variant)
    return first, p, t


def play_match_with(a: Seat, b: Seat, games: int, seed: int, variant: int = STANDARD, *,
                    workers: int = 1, chunk_pairs: int = 8,
                    progress: Callable[[int], None] | None = None) -> MatchResult:  # fmt: skip
    """`games` (even) duplicate games of seat a against seat b (specs or chooser
    factories); a's result."""
    if games <= 0 or games % 2:
        raise ValueError(f"games must be a positive even number (duplicate pairs), got {games}")
    for seat in (a, b):  # fail here, with the seat's error, not in a worker
        make_chooser(seat, variant)
    pairs = games // 2
    tasks = [(a, b, k, min(pairs, k + chunk_pairs), seed, variant)
             for k in range(0, pairs, chunk_pairs)]  # fmt: skip
    points = np.zeros(games, np.int64)
    turns = np.zeros(games, np.int64)
    done = 0

    def take(first: int, p: np.ndarray, t: np.ndarray) -> None:
        nonlocal done
        points[2 * first : 2 * first + len(p)] = p
        turns[2 * first : 2 * first + len(t)] = t
        done += len(p)
        if progress is not None:
            progress(done)

    if workers <= 1:
        for task in tasks:
            take(*_task(task))
    else:
        with mp.get_context("spawn").Pool(workers) as pool:
            for res in pool.imap_unordered(_task, tasks):
                take(*res)
    return MatchResult.from_points(points, turns)


__all__ = ["Chooser", "Seat", "make_chooser", "play_game_with", "play_match_with", "player"]
