"""Shared test helpers: a board builder that reads like the board, and random games."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from doublet.core.board import (
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
from doublet.rules.movegen import legal_outcomes

DATA = Path(__file__).parent / "data"


def load_jsonl(name: str) -> list[dict]:
    with open(DATA / name) as f:
        return [json.loads(line) for line in f]


def pos(
    mover: dict,
    opponent: dict,
    *,
    my_bar: int = 0,
    opp_bar: int = 0,
    my_out: int = 0,
    opp_out: int = 0,
) -> Board:
    """Both sides in the MOVER's numbering; the rest is borne off. The bar and unentered
    checkers go in as keys 'bar' and 'out' or as the keyword arguments. The start
    position is pos({24: 2, 13: 5, 8: 3, 6: 5}, {19: 5, 17: 3, 12: 5, 1: 2})."""
    mover, opponent = dict(mover), dict(opponent)
    my_bar += mover.pop("bar", 0)
    my_out += mover.pop("out", 0)
    opp_bar += opponent.pop("bar", 0)
    opp_out += opponent.pop("out", 0)
    b = empty()
    for p, n in mover.items():
        b[p] += n
    for p, n in opponent.items():
        b[p] -= n
    b[MY_BAR], b[OPP_BAR], b[MY_OUT], b[OPP_OUT] = my_bar, -opp_bar, my_out, opp_out
    b[MY_OFF] = CHECKERS - sum(mover.values()) - my_bar - my_out
    b[OPP_OFF] = CHECKERS - sum(opponent.values()) - opp_bar - opp_out
    return b


# With the JIT off (NUMBA_DISABLE_JIT=1, tests/test_nojit.py) the kernels run as plain
# Python, hundreds of times slower: the rules tests then take a fixed, spread-out subset.
NO_JIT = os.environ.get("NUMBA_DISABLE_JIT") == "1"


def subset(cases: list, every: int) -> list:
    """Every `every`-th case with the JIT off, all of them otherwise."""
    return cases[::every] if NO_JIT else cases


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


__all__ = ["ACEY_DEUCEY", "NO_JIT", "load_jsonl", "pos", "random_positions", "subset"]
