"""Strength checks: a net against pubeval (or the random player), duplicate dice.

``strength(model, games, seed, variant)`` plays doublet.games.duplicate's duplicate-dice cubeless
money games and returns points per game with its standard error; the trainer calls it
every ``check_every`` games and at export. The same command line measures a model file
(the model card quotes it):

    python -m doublet.training.arena models/doublet-standard.npz --games 4000 --seed 1000004

This module imports no torch: it also runs in the self-play worker processes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from doublet.core.board import STANDARD, VARIANT_NAMES, VARIANTS
from doublet.nn.eval import Model, ModelError, load_model

OPPONENTS = ("pubeval", "random")


@dataclass(frozen=True)
class Strength:
    """A's results (the net) over a duplicate match against `opponent`."""

    opponent: str
    games: int
    seed: int
    variant: str
    ppg: float
    se: float
    win_rate: float
    gammon_rate: float  # games the net won with a gammon or backgammon, per game
    gammon_rate_against: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        return (
            f"{self.ppg:+.3f} ppg (se {self.se:.3f}) vs {self.opponent} over {self.games} "
            f"games, seed {self.seed}; wins {self.win_rate:.1%}"
        )


def strength(
    model: Model,
    games: int,
    seed: int,
    variant: int = STANDARD,
    opponent: str = "pubeval",
    progress: Callable[[int], None] | None = None,
) -> Strength:
    """The net (0-ply) against `opponent` over `games` duplicate games with dice seed;
    progress(games done) as play_match calls it."""
    from doublet.games.duplicate import net_player, play_match, pubeval_player, random_player

    if opponent not in OPPONENTS:
        raise ValueError(f"unknown opponent {opponent!r} ({', '.join(OPPONENTS)})")
    other = pubeval_player() if opponent == "pubeval" else random_player()
    t = time.perf_counter()
    r = play_match(net_player(model), other, games, seed, variant, progress=progress)
    se = float(getattr(r, "se", getattr(r, "stderr", float("nan"))))
    gammons = r.gammon_rate
    g_for, g_against = gammons if isinstance(gammons, tuple) else (gammons, float("nan"))
    return Strength(
        opponent=opponent,
        games=int(r.games),
        seed=int(seed),
        variant=VARIANT_NAMES[variant],
        ppg=float(r.ppg),
        se=se,
        win_rate=float(r.win_rate),
        gammon_rate=float(g_for),
        gammon_rate_against=float(g_against),
        seconds=time.perf_counter() - t,
    )


def command(path: str, games: int, seed: int, variant: int, opponent: str = "pubeval") -> str:
    """The command line that measures exactly what strength(load_model(path), ...) does."""
    cmd = f"python -m doublet.training.arena {path} --games {games} --seed {seed}"
    if variant != STANDARD:
        cmd += f" --variant {VARIANT_NAMES[variant]}"
    if opponent != "pubeval":
        cmd += f" --opponent {opponent}"
    return cmd


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m doublet.training.arena",
        description="A model (0-ply) against pubeval, duplicate dice.",
    )
    p.add_argument("model", help="a model .npz (doublet.nn.eval.save_model)")
    p.add_argument("--games", type=int, default=4000, help="games, even (default 4000)")
    p.add_argument("--seed", type=int, default=1, help="dice seed (default 1)")
    p.add_argument(
        "--variant", choices=sorted(VARIANTS), default=None, help="default: the model's own"
    )
    p.add_argument("--opponent", choices=OPPONENTS, default="pubeval")
    args = p.parse_args(argv)
    bad = []
    if args.games < 2 or args.games % 2:
        bad.append(f"--games is an even number of 2 or more (duplicate pairs), got {args.games}")
    if args.seed < 0:
        bad.append(f"--seed must be 0 or more, got {args.seed}")
    if bad:
        print(f"arena: error: {'; '.join(bad)}", file=sys.stderr)
        return 2
    try:
        model = load_model(args.model)
    except ModelError as e:
        print(f"arena: error: {e}", file=sys.stderr)
        return 2
    variant = VARIANTS[args.variant] if args.variant else model.variant
    s = strength(model, args.games, args.seed, variant, args.opponent)
    print(s.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
