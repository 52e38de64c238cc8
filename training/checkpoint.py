"""Training checkpoints: one torch file per run directory, written atomically.

A checkpoint holds everything a run needs to go on exactly where it stopped: the torch
net and optimizer state, the config, the games learned, the weights the next blocks of
self-play are played with (doublet.training.train's lagged schedule), the strength checks still
running, the strength curve so far, the torch RNG state and the encoder version. Self-play
dice come from (seed, game index), so no other RNG state exists.

It is written to a temporary file in the same directory, flushed to disk and renamed
over the old one (``os.replace``), so a crash or a SIGKILL at any moment leaves either
the old checkpoint or the new one, never half of one: a killed run loses only the games
after its last checkpoint. Loading refuses a checkpoint of another format or encoder
version and says what to do.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from doublet.core.errors import CheckpointError
from doublet.core.files import atomic_open
from doublet.nn.encode import ENCODER_VERSION
from doublet.nn.eval import Net

FORMAT = 1
FILENAME = "checkpoint.pt"


def net_to_tensors(net: Net) -> list[torch.Tensor]:
    """An engine net as tensors (torch.load(weights_only=True) reads no numpy arrays)."""
    return [torch.from_numpy(np.array(a, dtype=np.float32)) for a in net]


def tensors_to_net(ts: list[torch.Tensor]) -> Net:
    return tuple(np.ascontiguousarray(t.numpy(), dtype=np.float32) for t in ts)  # type: ignore[return-value]


def save(path: str | os.PathLike[str], state: dict[str, Any]) -> None:
    """Write state (plain Python, tensors) atomically: temp file, fsync, os.replace."""
    doc = {**state, "format": FORMAT, "encoder_version": ENCODER_VERSION}
    try:
        with atomic_open(path) as f:
            torch.save(doc, f)
    except RuntimeError as e:  # torch's writer fails this way on a full disk
        why = str(e).split("\n")[0].strip()[:120]
        raise CheckpointError(f"cannot write the checkpoint {str(path)!r} (is the disk "
                              f"full?): {why}; the one before it is kept") from None  # fmt: skip


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a checkpoint written by save(); CheckpointError says what is wrong."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {str(path)!r}")
    if path.stat().st_size == 0:
        raise CheckpointError(f"checkpoint {str(path)!r} is empty (0 bytes)")
    bad = _damaged_member(path)  # torch.load does not check the zip's CRCs
    if bad is not None:
        raise CheckpointError(f"checkpoint {str(path)!r} is damaged: its part {bad!r} "
                              "does not match its checksum (a disk or copy error), so its "
                              "weights are not used: start again from a good copy, or "
                              "another --out")  # fmt: skip
    try:
        doc = torch.load(path, map_location="cpu", weights_only=True)
    except OSError as e:  # not the file's fault (permissions, a folder, the disk)
        if "PytorchStreamReader" not in str(e):
            raise CheckpointError(f"checkpoint {str(path)!r} cannot be read: "
                                  f"{e.strerror or e}") from None  # fmt: skip
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read: truncated or not a "
                              "torch file") from None  # fmt: skip
    except Exception as e:  # torch raises many kinds for a corrupt file
        # torch's own advice (weights_only=False) would run code from the file: not given.
        why = str(e).split("\n")[0].strip() or type(e).__name__
        if "weights_only" in str(e) or "Weights only load failed" in str(e):
            why = "it holds objects other than tensors and plain data, which are not loaded"
        elif _is_model_file(path):
            why = "it is a model file (.npz), not a training checkpoint"
        elif ("Invalid argument" in why or "PytorchStreamReader" in why or not why
              or not zipfile.is_zipfile(path) or why.isdigit()):  # fmt: skip
            why = "truncated or not a torch file"
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read: {why}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else None
        raise CheckpointError(
            f"checkpoint {str(path)!r} has format {got}, this trainer reads format {FORMAT}"
        )
    if doc.get("encoder_version") != ENCODER_VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} was trained with encoder version "
            f"{doc.get('encoder_version')!r}, but the engine now encodes positions with version "
            f"{ENCODER_VERSION}: its net cannot continue; start a new run (another --out)"
        )
    return doc


def _is_model_file(path: Path) -> bool:
    """Whether `path` is a model file (an .npz with its meta), given for a checkpoint."""
    try:
        with zipfile.ZipFile(path) as z:
            return "meta.npy" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _damaged_member(path: Path) -> str | None:
    """The first part of the checkpoint (a zip archive, as torch.save writes) whose bytes
    do not match the CRC-32 the archive holds for it, or None; None too for a file that
    is not a zip (torch.load says what is wrong with it)."""
    try:
        with zipfile.ZipFile(path) as z:
            return z.testzip()
    except (zipfile.BadZipFile, OSError, EOFError):
        return None


__all__ = [
    "FILENAME",
    "FORMAT",
    "CheckpointError",
    "load",
    "net_to_tensors",
    "save",
    "tensors_to_net",
]
