"""Shared test helpers: a board builder that reads like the board, and random games."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import Callable
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


GNUBG = Path("/usr/games/gnubg")
_GNUBG_IMPORT = """
import gnubg, json, os
for path in os.environ["MATCH_FILES"].split(os.pathsep):
    # .mat: gnubg's Jellyfish import; .sgf: its own format, which it loads
    gnubg.command(("import mat " if path.endswith(".mat") else "load match ") + path)
    m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
    games = [[g["info"].get("winner"), g["info"].get("points-won")]
             for g in m["games"]] if m else None
    print("RESULT", json.dumps(games))
"""


def gnubg_results(paths: list[Path], tmp: Path) -> list[list[list[object]] | None]:
    """GNU Backgammon 1.07's (gnubg -t) import of each match file: per game [winner, points]
    (the winner X: player 0, the .mat file's left column, SGF's White; O: player 1),
    None where it read no match. One gnubg process for all the files."""
    import subprocess

    script = tmp / "gnubg_import.py"
    script.write_text(_GNUBG_IMPORT)
    cmd = [str(GNUBG), "-t", "-q", "-r", "-p", str(script)]
    env = {**os.environ, "MATCH_FILES": os.pathsep.join(map(str, paths))}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert len(lines) == len(paths), done.stdout[-2000:] + done.stderr[-2000:]
    return [json.loads(x[7:]) for x in lines]


__all__ = [
    "ACEY_DEUCEY",
    "GNUBG",
    "NO_JIT",
    "gnubg_results",
    "load_jsonl",
    "pos",
    "random_positions",
    "subset",
]


def refusal(main: Callable[[list[str]], int], argv: list[str], words: str) -> str:
    """A training command's refusal: exit status 2 and one line on stderr that names the
    command (`distill: error: ...`, as train's and recipe's do) and holds the regular
    expression `words`; the line is returned."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    line = err.getvalue()
    assert code == 2, (code, line)
    assert re.fullmatch(r"[a-z]+: error: [^\n]+\n", line), line
    assert re.search(words, line), (words, line)
    return line
