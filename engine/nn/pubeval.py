"""Tesauro's pubeval, the classic benchmark opponent, as a numba kernel.

pubeval is a linear move selector: it scores every position a roll can lead to as the
dot product of a weight vector with 122 inputs and plays the highest-scoring one. The
inputs (refdata/README.md, "pubeval_weights.json") are computed on the board *after*
the play, in the mover's view (not flipped), with n the count on a point (> 0 mover,
< 0 opponent); for j = 1..24 the block k = 5 (j - 1) looks at the mover's point 25 - j:

    x[k+0] = 1 if n == -1        x[k+1] = 1 if n == 1         x[k+2] = 1 if n >= 2
    x[k+3] = 1 if n == 3         x[k+4] = (n - 3) / 2 if n >= 4
    x[120] = opponent's checkers on the bar / 2
    x[121] = mover's checkers borne off / 15

The race weights are used when the position *before* the play has no contact
(doublet.core.board.has_contact), the contact weights otherwise; a play that bears off the
mover's last checker scores above everything. Ties go to the first outcome in the
move generator's order. As in Tesauro's C code, the mover's own bar checkers are not
an input. Scores are float64 (the C code used float32; only near-ties could differ).

Acey-Deucey (pubeval knows nothing of it; our extension): the same inputs, with the
opponent's unentered checkers counted as checkers on the bar in x[120] (as the rules
count them for gammons) and, like the mover's bar checkers, the mover's unentered
checkers not an input. No play changes the opponent's unentered count, so that term is
the same for every outcome of a roll and never changes a choice. A play after which the
mover rolls again (the 1-2 chain) is scored like any other, on the board after it.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt

from doublet.core.board import CHECKERS, MY_OFF, OPP_BAR, OPP_OUT, STANDARD, Board, has_contact
from doublet.core.jit import njit
from doublet.rules.movegen import Workspace, _outcomes, check_dice

N_INPUTS = 122
# Above any linear score the weights can produce (|score| < 1e3): the last checker off.
WIN_SCORE = 1e30

Weights: TypeAlias = npt.NDArray[np.float64]  # shape (122,)


class PubevalWeights(NamedTuple):
    """Tesauro's two weight vectors, float64 (122,) each."""

    contact: Weights
    race: Weights


def load_weights(path: str | os.PathLike[str] | None = None) -> PubevalWeights:
    """Read the weights from a JSON file with "contact" and "race" lists of 122 floats;
    by default the copy shipped as package data (engine/nn/data/pubeval_weights.json)."""
    if path is None:
        text = resources.files("doublet.nn").joinpath("data/pubeval_weights.json").read_text()
    else:
        with open(path) as f:
            text = f.read()
    data = json.loads(text)
    arrays = []
    for key in ("contact", "race"):
        w = np.ascontiguousarray(data[key], dtype=np.float64)
        if w.shape != (N_INPUTS,) or not np.isfinite(w).all():
            raise ValueError(f"pubeval weights {key!r} must be {N_INPUTS} finite floats")
        arrays.append(w)
    return PubevalWeights(arrays[0], arrays[1])


_DEFAULT: PubevalWeights | None = None


def default_weights() -> PubevalWeights:
    """The shipped weights, loaded once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_weights()
    return _DEFAULT


# --------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------


@njit
def _pubeval_score(b, w):
    """Score of b ((SIZE,) int8, mover's view after the play, not flipped) with weights
    w ((122,) float64). Sums w[i] * x[i] in input order, skipping the zero inputs (which
    add nothing), so it equals the dense dot product bit for bit."""
    if b[MY_OFF] == CHECKERS:
        return WIN_SCORE
    s = 0.0
    for j in range(1, 25):
        n = b[25 - j]
        k = 5 * (j - 1)
        if n == -1:
            s += w[k]
        elif n == 1:
            s += w[k + 1]
        elif n >= 2:
            s += w[k + 2]
            if n == 3:
                s += w[k + 3]
            elif n >= 4:
                s += w[k + 4] * ((n - 3) / 2.0)
    s += w[120] * ((-b[OPP_BAR] + b[OPP_OUT]) / 2.0)
    s += w[121] * (b[MY_OFF] / 15.0)
    return s


@njit
def _pubeval_choose(b, d1, d2, variant, contact_w, race_w, acc, tmp, scratch):
    """pubeval's play of d1-d2 in b ((SIZE,) int8, mover's view before the roll).

    Generates the outcomes into acc (doublet.rules.movegen._outcomes: acc[0][:n] boards in the
    mover's view after the whole turn, acc[1][:n] again flags) and returns (index of the
    highest-scoring outcome, n); (-1, -1) when the buffers are too small.
    contact_w, race_w: (122,) float64; race_w is used when b has no contact.
    """
    n = _outcomes(b, d1, d2, variant, acc, tmp, scratch)
    if n < 0:
        return -1, -1
    w = contact_w if has_contact(b) else race_w
    out = acc[0]
    best = 0
    best_score = -np.inf
    for i in range(n):
        s = _pubeval_score(out[i], w)
        if s > best_score:
            best_score = s
            best = i
    return best, n


# --------------------------------------------------------------------------------------
# Wrappers
# --------------------------------------------------------------------------------------


def pubeval_score(board: Board, race: bool, weights: PubevalWeights | None = None) -> float:
    """pubeval's score of a position after a play (mover's view); race: the position
    before the play had no contact."""
    w = weights or default_weights()
    b = np.ascontiguousarray(board, dtype=np.int8)
    return float(_pubeval_score(b, w.race if race else w.contact))


_WORKSPACE: Workspace | None = None


def pubeval_choose(board: Board, d1: int, d2: int, variant: int = STANDARD,
                   weights: PubevalWeights | None = None) -> int:  # fmt: skip
    """Index of pubeval's play among doublet.rules.movegen.legal_outcomes(board, d1, d2, variant)
    (same order)."""
    check_dice(d1, d2)
    w = weights or default_weights()
    b = np.array(board, dtype=np.int8)
    global _WORKSPACE
    if _WORKSPACE is None:
        _WORKSPACE = Workspace()
    ws = _WORKSPACE
    while True:
        best, n = _pubeval_choose(b, int(d1), int(d2), int(variant), w.contact, w.race,
                                  ws.acc, ws.tmp, ws.scratch)  # fmt: skip
        if n >= 0:
            return int(best)
        ws.allocate(ws.capacity * 4)


__all__ = [
    "N_INPUTS",
    "WIN_SCORE",
    "PubevalWeights",
    "default_weights",
    "load_weights",
    "pubeval_choose",
    "pubeval_score",
]
