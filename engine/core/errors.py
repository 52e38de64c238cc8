"""Every error Doublet raises, in one place. Each one's message says what is wrong.

Bad input from a user is a DoubletError (a ValueError), which the front ends print as
one line ``doublet: error: ...``; its kinds say what was bad. The other two are for
programs: ApiError carries an HTTP status (doublet serve) and WorkerError reports a
worker process that died (training). ``shown`` writes a bad value into a message (as
its JSON), ``clipped`` a long text a user gave (a line of a file).
"""

from __future__ import annotations

import json
from typing import Any

# What a command of training says where torch is missing (doublet train, python -m
# doublet.training): training is the only part that needs it.
NEEDS_TORCH = ("training needs torch: pip install 'doublet[train]' (in a checkout: pip install "
               "-e '.[train]'), which pins torch==2.13.0, the CPU build")  # fmt: skip


def shown(v: Any, n: int = 40) -> str:
    """A value a user gave, for a message: as its JSON (a string in quotes: "2" is not 2),
    cut to n characters."""
    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = str(v)
    return text if len(text) <= n else text[: n - 3] + "..."


def clipped(text: str, n: int = 60) -> str:
    """Text a user gave (a line of a file, an ID), quoted for a message, cut to about n
    characters with its length said: a file of the wrong kind is not echoed whole."""
    return repr(text) if len(text) <= n else repr(text[:n]) + f"... ({len(text)} characters)"


def key_list(names: Any, n: int = 6) -> str:
    """Keys a user gave, for a message: ['a', 'b', ...], each cut to 30 characters, the
    first n of them and how many more (an object with 5,000 keys is not echoed whole)."""
    items = [repr(k)[:30] for k in names]
    more = [f"... ({len(items) - n:,} more)"] if len(items) > n else []
    return "[" + ", ".join(items[:n] + more) + "]"


class DoubletError(ValueError):
    """Base class: bad input from a user, with a message meant for that user."""


class InvalidPositionError(DoubletError):
    """A position ID, XGID or JSON board that is malformed or cannot arise."""


class NotationError(DoubletError):
    """Play text that does not parse (e.g. ``24/x``)."""


class IllegalPlayError(DoubletError):
    """Play text that parses but is not a legal play of the roll in the position."""


class AmbiguousPlayError(IllegalPlayError):
    """Play text that fits more than one legal play (e.g. a hit left unmarked where the
    same moves can hit or not); the message lists them."""


class InvalidDiceError(DoubletError):
    """Dice out of 1..6 or not two of them."""


class CubeError(DoubletError):
    """A cube or match state that cannot arise or is not allowed: a cube of 3, an away
    score of 0, a cube owned in the Crawford game, Jacoby in a match ..."""


class MatchFileError(DoubletError):
    """A match file (.mat) that does not read or does not replay: the message names the
    game, the move and the text."""


class ModelError(DoubletError):
    """A model file that is missing, corrupt, or made for another encoder version."""


class GameError(DoubletError):
    """A request the game cannot take: no game on, game over, wrong side to move."""


class SaveFileError(DoubletError):
    """A saved game that cannot be read: missing, not JSON, or not a Doublet game."""


class CheckpointError(DoubletError):
    """A checkpoint that is missing, unreadable, or made for another encoder version."""


class TrainingError(DoubletError):
    """A run that cannot go on (the checkpoint on disk is whole)."""


class ApiError(Exception):
    """A request the web API refuses: HTTP status and a message for the person."""

    def __init__(self, status: int, message: str, doc: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.doc = doc  # more for the client beside the error (e.g. the current state)


class WorkerError(RuntimeError):
    """A worker process of a parallel job failed; the message says which and why."""
