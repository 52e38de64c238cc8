"""Playing strength: cubeless money games between two players with duplicate dice.

    python benchmarks/strength.py --a net[:path] --b pubeval --games 5000 --seed 1
                                  [--variant standard|acey-deucey] [--chunk 256]
    python benchmarks/strength.py --a search:2 --b search:0 --games 1000 --workers 2

Player specs: ``net`` (the shipped model, doublet.nn.eval.default_model), ``net:PATH`` (a
model file), ``pubeval`` (Tesauro's pubeval), ``random`` (uniform over the distinct
outcomes of each roll), ``search:PLY`` or ``search:PLY:PATH`` (doublet.search.searcher at PLY, with
the bear-off database and the one-sided race net in standard backgammon), ``racenet:PLY``
or ``racenet:PLY:PATH`` (the same, races valued by the model's race net). Matches without
a searching player run inside numba (doublet.games.duplicate); with one, a Python game
loop over the same dice (doublet.games.duplicate_search) in --workers processes.

Prints one table for player a: games, points per game +- its standard error (from the
duplicate pairs), win rate, gammon and backgammon rates (a / b, gammons include
backgammons), games per second (after a warm-up for numba players),
and the command line. The seed fixes every game: same command, same numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.core.board import VARIANTS  # noqa: E402
from doublet.games.duplicate import (  # noqa: E402
    MatchPlayer,
    MatchResult,
    net_player,
    play_match,
    pubeval_player,
    random_player,
)
from doublet.games.duplicate_search import play_match_with, player  # noqa: E402
from doublet.nn.eval import ModelError, default_model, load_model  # noqa: E402


def parse_player(spec: str, variant: int) -> MatchPlayer:
    """net | net:PATH | pubeval | random."""
    kind, _, arg = spec.partition(":")
    if kind == "net":
        model = load_model(arg) if arg else default_model(variant)
        return net_player(model, name=f"net:{arg}" if arg else "net")
    if arg:
        raise ValueError(f"player {kind!r} takes no argument: {spec!r}")
    if kind == "pubeval":
        return pubeval_player()
    if kind == "random":
        return random_player()
    raise ValueError(f"unknown player {spec!r}: use net, net:PATH, pubeval or random")


@contextlib.contextmanager
def progress_bar(total: int) -> Iterator[Callable[[int], None]]:
    """A progress(games done) callback that draws a tqdm bar on stderr (none without tqdm)."""
    bar = None
    with contextlib.suppress(ImportError):
        from tqdm import tqdm

        bar = tqdm(total=total, unit="game", file=sys.stderr, leave=False)
    done = 0

    def progress(n: int) -> None:
        nonlocal done
        if bar is not None:
            bar.update(n - done)
        done = n

    try:
        yield progress
    finally:
        if bar is not None:
            bar.close()


def run(a: MatchPlayer | str, b: MatchPlayer | str, games: int, seed: int, variant: int,
        chunk: int, workers: int = 1) -> tuple[MatchResult, float]:  # fmt: skip
    """(result, seconds), with a progress bar when tqdm is installed. String players are
    search specs (doublet.games.duplicate_search)."""
    searching = isinstance(a, str)
    if not searching:
        play_match(a, b, 2, seed, variant)  # compile / load the kernels outside the timing
    t = time.perf_counter()
    with progress_bar(games) as progress:
        if isinstance(a, str) and isinstance(b, str):
            result = play_match_with(a, b, games, seed, variant, workers=workers,
                                     chunk_pairs=chunk, progress=progress)  # fmt: skip
        else:
            assert isinstance(a, MatchPlayer) and isinstance(b, MatchPlayer)
            result = play_match(a, b, games, seed, variant, progress=progress,
                                chunk_pairs=chunk)  # fmt: skip
    seconds = time.perf_counter() - t
    return result, seconds


def table(a: MatchPlayer | str, b: MatchPlayer | str, r: MatchResult, seconds: float,
          variant: str, workers: int = 1) -> str:  # fmt: skip
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    names = [p if isinstance(p, str) else p.name for p in (a, b)]
    rows = [
        ("variant", variant),
        ("a vs b", f"{names[0]} vs {names[1]}"),
        ("games", f"{r.games:,} ({r.games // 2:,} duplicate pairs)"),
        ("ppg (a)", f"{r.ppg:+.4f} ± {r.se:.4f}"),
        ("win rate (a)", f"{r.win_rate:.2%}"),
        ("gammon rate a / b", f"{r.gammon_rate[0]:.2%} / {r.gammon_rate[1]:.2%}"),
        ("backgammon rate a / b", f"{r.backgammon_rate[0]:.2%} / {r.backgammon_rate[1]:.2%}"),
        ("rolls per game", f"{r.turns.mean():.1f}"),
        ("games per second", f"{r.games / seconds:,.1f} ({workers} process(es))"),
        ("errors (turn cap)", f"{r.errors}"),
        ("machine", machine),
        ("command", shlex.join([Path(sys.executable).name, *sys.argv])),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    specs = "net | net:PATH | pubeval | random | search:PLY | search:PLY:PATH | racenet:PLY[:PATH]"
    ap.add_argument("--a", default="net", help=specs)
    ap.add_argument("--b", default="pubeval", help=specs)
    ap.add_argument("--games", type=int, default=5000, help="an even number")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="standard")
    ap.add_argument(
        "--chunk",
        type=int,
        default=None,
        help="pairs per progress step (default 256; 8 with a search player)",
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes for matches with a search player (default 1)",
    )
    args = ap.parse_args()
    if args.games <= 0 or args.games % 2:
        ap.error(f"--games must be a positive even number, got {args.games}")
    variant = VARIANTS[args.variant]
    searching = any(x.startswith(("search", "racenet")) for x in (args.a, args.b))
    a: MatchPlayer | str
    b: MatchPlayer | str
    try:
        if searching:
            a, b = args.a, args.b
            player(a, variant)
            player(b, variant)
        else:
            a = parse_player(args.a, variant)
            b = parse_player(args.b, variant)
    except (ValueError, ModelError) as e:
        ap.error(str(e))
    chunk = args.chunk or (8 if searching else 256)
    result, seconds = run(a, b, args.games, args.seed, variant, chunk, args.workers)
    print(table(a, b, result, seconds, args.variant, args.workers if searching else 1))


if __name__ == "__main__":
    main()
