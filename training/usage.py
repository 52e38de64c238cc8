"""The training commands' usage, and what they say where torch is not installed.

torch-free, so that ``doublet train --help`` shows the options on an install without the
``train`` extra, and so that a training module run as a program (``python -m
doublet.training.prune``) ends in one line naming the install instead of a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from doublet.core.errors import NEEDS_TORCH
from doublet.training import configs
from doublet.training.progress import PROGRESS_EVERY

HELP = ("-h", "--help")


def build_parser() -> argparse.ArgumentParser:
    """`doublet train` (= ``python -m doublet.training``): a self-play TD run."""
    p = argparse.ArgumentParser(
        prog="doublet train",
        description="Self-play TD(lambda) training of a Doublet net (doublet.training.train). "
        "`python -m doublet.training ...` is the same command.",
        epilog="A model's whole recipe (TD, pruning nets, data, fits, a gate, the export) "
        "is the other form: doublet train --recipe FILE --out DIR [--dry-run] (see "
        "--recipe FILE --help). The shipped model's recipe is in the project's source tree, "
        "not in the package: it reads the tree's test and benchmark data (a clone's "
        "recipes/standard.toml).",
    )
    p.add_argument("--config", help=f"named config: {', '.join(configs.CONFIGS)}")
    p.add_argument("--out", required=True, help="run directory (checkpoint, curve, model)")
    p.add_argument("--games", type=int, help="train until this many games (default: config's)")
    p.add_argument("--resume", action="store_true", help="go on from --out's checkpoint")
    p.add_argument("--seed", type=int, help="seed (default: config's; fixed once started)")
    p.add_argument("--init", metavar="MODEL",
                   help="start from this model's weights instead of the config's init")  # fmt: skip
    p.add_argument(
        "--workers",
        type=int,
        help="self-play processes (default: config's; changes the speed, never the result)",
    )
    p.add_argument(
        "--export",
        metavar="PATH",
        help="where to export the model (default OUT/model.npz), with a model card PATH.md",
    )
    p.add_argument("--no-export", action="store_true", help="do not export at the end")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (on a terminal) nor progress lines (elsewhere, "
                        f"one every {PROGRESS_EVERY:g} s)")  # fmt: skip
    return p


def without_torch(argv: Sequence[str], prog: str) -> int:
    """`doublet train ARGV` where torch is missing: the usage when it is asked for (and
    the install that runs it), else one error line; the exit status."""
    if any(a in HELP for a in argv) and not any(a.startswith("--recipe") for a in argv):
        build_parser().print_help()
        print(f"\nnote: {NEEDS_TORCH}")
        return 0
    print(f"{prog}: error: {NEEDS_TORCH}", file=sys.stderr)
    return 2


def torch_missing(name: str, e: ModuleNotFoundError, prog: str) -> NoReturn:
    """Where a training module's ``import torch`` failed: run as a program (its
    ``__name__`` is ``"__main__"``) it ends with one error line; imported, the error
    stands."""
    if name != "__main__" or e.name != "torch":
        raise e
    print(f"{prog}: error: {NEEDS_TORCH}", file=sys.stderr)
    sys.exit(2)
