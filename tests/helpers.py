"""Shared test helpers: a board builder that reads like the board, and random games."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from engine.board import (
    ACEY_DEUCEY,
    CHECKERS,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    OPP_OFF,
    OPP_OUT,
    STANDARD,
    Board,
    empty,
    flip,
    outcome,
    starting,
)
from engine.movegen import legal_outcomes

DATA = Path(__file__).parent / "data"


def load_jsonl(name: str) -> list[dict]:
    with open(DATA / name) as f:
        return [json.loads(line) for line in f]


def pos(mover: dict, opponent: dict, variant: int = STANDARD) -> Board:
    """Both sides in the MOVER's numbering ('bar' and 'out' allowed as keys); the rest
    is borne off. The start position is pos({24: 2, 13: 5, 8: 3, 6: 5},
    {19: 5, 17: 3, 12: 5, 1: 2})."""
    b = empty()
    for p, n in mover.items():
        if p == "bar":
            b[MY_BAR] = n
        elif p == "out":
            b[MY_OUT] = n
        else:
            b[p] += n
    for p, n in opponent.items():
        if p == "bar":
            b[OPP_BAR] = -n
        elif p == "out":
            b[OPP_OUT] = n
        else:
            b[p] -= n
    b[MY_OFF] = CHECKERS - sum(mover.values())
    b[OPP_OFF] = CHECKERS - sum(opponent.values())
    return b


def random_positions(n: int, variant: int = STANDARD, seed: int = 0) -> list[Board]:
    """n positions (before the roll, mover's view) from random self-play games."""
    rng = np.random.default_rng(seed)
    out: list[Board] = []
    while len(out) < n:
        b = starting(variant)
        for _ in range(400):
            if outcome(b) != 0:
                break
            out.append(b)
            d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
            boards, again = legal_outcomes(b, d1, d2, variant)
            k = int(rng.integers(len(boards)))
            b = boards[k].copy() if again[k] else flip(boards[k])
    return out[:n]


__all__ = ["ACEY_DEUCEY", "load_jsonl", "pos", "random_positions"]
