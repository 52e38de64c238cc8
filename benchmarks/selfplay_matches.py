"""Self-play matches between two Doublet players of different strength (issue 22).

    python benchmarks/selfplay_matches.py [--out tests/data/selfplay] [--length 5]
        [--ply 0] [--pairs 0:0.05 0.02:0.1 ...] [--seed 1]

Each pair SIGMA0:SIGMA1 is one match to --length points with the cube (the Crawford
rule), a doublet.games.game.Series whose dice come from --seed plus the match's index.
Both players are the engine at --ply (doublet.games.opponent.engine_step: engine_play,
engine_doubles, engine_answer) with Gaussian noise of standard deviation SIGMA0 for
player 0 (the .mat file's left column, SGF's White) and SIGMA1 for player 1, added to
each play's cubeful equity and to each cube decision's three equities (money-equivalent,
units of the cube), drawn from a generator seeded by --seed and the index. Nobody
resigns. Each match is written as matchNN.mat and matchNN.sgf (doublet.games.record.
to_match, doublet.formats.matfile.write_mat / write_sgf), and meta.json says how they
were made; every file is written atomically. tests/test_selfplay_matches.py reads the
files back and replays them.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet import __version__  # noqa: E402
from doublet.core.board import STANDARD  # noqa: E402
from doublet.core.files import atomic_write  # noqa: E402
from doublet.formats.matfile import write_mat, write_sgf  # noqa: E402
from doublet.games.game import Series  # noqa: E402
from doublet.games.opponent import engine_step  # noqa: E402
from doublet.games.record import to_match  # noqa: E402
from doublet.nn.eval import DEFAULT_MODELS, MODELS_DIR  # noqa: E402

DAY = datetime.date(2026, 12, 1)  # the files' EventDate, so that a rerun writes the same
PAIRS = ["0:0.05", "0.02:0.1", "0:0.2", "0.05:0.05"]


def play_match(length: int, seed: int, noise: tuple[float, float], ply: int,
               rng: np.random.Generator, bar: tqdm | None = None) -> Series:  # fmt: skip
    """A match to `length` between the engine with noise[0] (side 0) and noise[1]."""
    s = Series.new("standard", seed=seed, length=length, cube=True)
    while True:
        g = s.game
        while not g.over:
            engine_step(g, ply, noise=noise, rng=rng)
        s.record_result()
        if bar is not None:
            bar.set_postfix(game=g.number + 1, score=f"{s.score[0]}-{s.score[1]}")
        if s.over:
            return s
        s.next_game()


def names_for(noise: tuple[float, float]) -> tuple[str, str]:
    a, b = (f"doublet-{x:g}" for x in noise)
    return (a, b) if a != b else (a + "-a", b + "-b")


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", default=str(ROOT / "tests" / "data" / "selfplay"))
    ap.add_argument("--length", type=int, default=5, help="match length (default 5)")
    ap.add_argument("--ply", type=int, default=0, help="search depth of both players")
    ap.add_argument("--pairs", nargs="+", default=PAIRS, metavar="SIGMA0:SIGMA1",
                    help="player 0's and player 1's noise, a match each")  # fmt: skip
    ap.add_argument("--seed", type=int, default=1, help="match k's dice: seed + k")
    args = ap.parse_args(argv)
    try:
        pairs = [tuple(float(x) for x in p.split(":")) for p in args.pairs]
    except ValueError:
        ap.error(f"--pairs takes SIGMA0:SIGMA1 values, not {args.pairs}")
    if any(len(p) != 2 or min(p) < 0 for p in pairs):
        ap.error("--pairs takes two noise levels >= 0 a pair, as 0:0.05")
    out = Path(args.out)
    model = Path(os.environ.get("DOUBLET_MODEL_DIR", MODELS_DIR)) / DEFAULT_MODELS[STANDARD]
    meta: dict[str, Any] = {
        "tool": "benchmarks/selfplay_matches.py",
        "command": " ".join(["python", "benchmarks/selfplay_matches.py", *sys.argv[1:]]),
        "doublet": __version__,
        "commit": _commit(),
        "model": model.name,
        "model_sha256": hashlib.sha256(model.read_bytes()).hexdigest(),
        "noise": "Gaussian, standard deviation sigma, added to each play's cubeful equity "
        "and to the three equities of each cube decision (money-equivalent, units of the "
        "cube), a new draw each decision (doublet.games.opponent)",
        "matches": [],
    }
    bar = tqdm(list(enumerate(pairs)), unit="match")
    for k, (s0, s1) in bar:
        noise = (s0, s1)
        seed = args.seed + k
        rng = np.random.default_rng([args.seed, k])
        s = play_match(args.length, seed, noise, args.ply, rng, bar)
        names = names_for(noise)
        m = to_match(s, names, DAY)
        stem = f"match{k:02d}"
        atomic_write(out / f"{stem}.mat", write_mat(m))
        atomic_write(out / f"{stem}.sgf", write_sgf(m))
        meta["matches"].append({"file": stem, "length": args.length, "ply": args.ply,
                                "noise": list(noise), "names": list(names), "seed": seed,
                                "games": len(m.games), "score": s.final_score(),
                                "winner": names[s.winner or 0]})  # fmt: skip
        atomic_write(out / "meta.json", json.dumps(meta, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
