"""Cubeless money games between Doublet and GNU Backgammon, with duplicate dice.

    python benchmarks/vs_gnubg.py --doublet search:2 --gnubg-ply 0 --games 400 --seed 1
                                  [--workers 1] [--chunk 8] [--no-check]
                                  [--prune-keep K] [--prune-all yes|no] [--blend W]
                                  [--points OUT.npz] [--against BASE.npz]

Needs the optional `gnubg` Python module (``pip install -e '.[gnubg]'``: the PyPI wheel
gnubg==1.1.0a16); without it the script says so and exits with status 0. The engine
never imports gnubg: its chooser lives here and reaches the game loop of
doublet.games.duplicate_search as a chooser factory, so the games use the very dice
streams of doublet.games.duplicate_search and
benchmarks/strength.py (pair k of seed s, each pair played twice with the seats swapped).

Doublet's seat takes a doublet.games.duplicate_search spec (search:PLY[:PATH], net[:PATH],
pubeval, random). With `--prune-keep K` (0: every reply scored by the main net) or
`--prune-all yes|no` (races and crashed positions pruned too, or not), a search or
racenet seat searches with those doublet.search.searcher.Limits instead of the defaults
(the diagnostic of whether the inner levels' pruning costs games); `--blend W` ranks the
plays searched to the full depth by W times their value there plus 1 - W times their
0-ply value (Limits.blend). `--points OUT.npz` saves each game's points; `--against
BASE.npz` (a saved run of the same seed and games) prints this run's difference to it,
paired by duplicate pair, much tighter than the two runs' own errors when the seats are
alike. GNU Backgammon plays at --gnubg-ply with its world-class
chequer-play settings, cubeless: pruning nets on, the "normal" move filter, one thread,
deterministic, no noise (the settings the refdata was made with: see
benchmarks/decision.py's check).

The chooser converts our board (mover's view, engine/board.py) to gnubg's (two rows of
25, side on roll second), asks findbestmove, applies gnubg's move to our board and checks
that the result is one of doublet.rules.movegen.legal_outcomes. The wheel's findbestmove cuts a
move short at its first bear-off (it stops at the -1 that means "off"); such a move is
completed by gnubg's own equity: among the legal outcomes that the known part can lead
to, the one gnubg values highest at the same ply (gnubg.evaluate; its move scores in
bear-offs differ slightly from it at 1 ply and up, so scores are not matched). A move that
is not a legal outcome, or one that leads to none, raises GnubgMoveError: it is never
replaced silently. Before the games, the chooser is checked on every (position,
roll) of tests/data/gnubg_refset.jsonl at the same ply (--no-check skips it) and the
number of mismatches is printed.

Prints benchmarks/strength.py's table for Doublet (ppg ± s.e., win rate, gammon rates,
games/s, command).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.core.board import MY_BAR, MY_OFF, OPP_BAR, STANDARD, flip  # noqa: E402
from doublet.core.files import atomic_open, file_path_error, write_error  # noqa: E402
from doublet.formats.ids import board_from_position_id, position_id  # noqa: E402
from doublet.games.duplicate import ppg_and_se  # noqa: E402
from doublet.rules.movegen import legal_outcomes  # noqa: E402

try:
    import gnubg  # type: ignore[import-not-found]
except ImportError:  # optional: every use below says so and skips
    gnubg = None

MISSING = "gnubg Python module not installed (pip install -e '.[gnubg]')"

# gnubg's "normal" move filter (its world-class setting): at 1 ply keep up to 8 plays
# within 0.16 of the best 0-ply play; at 2 ply the same at level 0, then all survivors.
NORMAL_FILTER = [
    {"ply": 1, "level": 0, "acceptmoves": 0, "extramoves": 8, "threshold": 0.16},
    {"ply": 2, "level": 0, "acceptmoves": 0, "extramoves": 8, "threshold": 0.16},
    {"ply": 2, "level": 1, "acceptmoves": -1, "extramoves": 0, "threshold": 0.0},
]
CACHE_ENTRIES = 1 << 18  # the size of Doublet's search cache (doublet.search.searcher.CACHE_BITS)


class GnubgMoveError(RuntimeError):
    """gnubg's move is not one of our legal outcomes, or cannot be completed."""


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence gnubg's C-level messages ("The position cache has been sized to ...")."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(null)
        os.close(saved)


def setup() -> None:
    """One calculation thread (gnubg's evaluations below are single-threaded anyway)."""
    with _quiet():
        gnubg.command("set threads 1")


def flush_cache() -> None:
    """Empty gnubg's evaluation cache (resizing it is the only way the module offers;
    setting the same size again keeps it)."""
    with _quiet():
        gnubg.command("set cache 0")
        gnubg.command(f"set cache {CACHE_ENTRIES}")


def eval_context(ply: int) -> dict[str, Any]:
    """Cubeless, deterministic, pruning nets on, no noise."""
    return gnubg.evalcontext(0, ply, 1, 1, 0.0)


def to_gnubg(board: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Our board (mover's view) as gnubg's: (opponent, side on roll), each 25 counts in
    its own numbering (index i = point i + 1, 24 = bar)."""
    me = [max(int(board[p]), 0) for p in range(1, 25)] + [int(board[MY_BAR])]
    opp = [max(-int(board[24 - j]), 0) for j in range(24)] + [-int(board[OPP_BAR])]
    return tuple(opp), tuple(me)


def _hop(b: np.ndarray, src: int, dst: int) -> None:
    """Move one of the mover's checkers src -> dst in gnubg's 1-based points (25 = bar,
    0 = off), which are our indices; hit a lone opponent checker."""
    if b[src] <= 0:
        raise GnubgMoveError(f"no checker of the mover on {src}")
    b[src] -= 1
    if dst <= 0:
        b[MY_OFF] += 1
        return
    if b[dst] == -1:
        b[dst] = 0
        b[OPP_BAR] -= 1
    elif b[dst] < -1:
        raise GnubgMoveError(f"point {dst} is held by the opponent")
    b[dst] += 1


def _above(b: np.ndarray) -> np.ndarray:
    """Mover's checkers on each point or higher (bar included): never rises in a play."""
    return np.cumsum(np.maximum(b[25:0:-1], 0))


class GnubgChooser:
    """doublet.games.duplicate_search's Chooser for GNU Backgammon at `ply`; counts the moves it had
    to complete (`completed`)."""

    def __init__(self, ply: int) -> None:
        if gnubg is None:
            raise RuntimeError(MISSING)
        setup()
        self.ply = ply
        self.ec = eval_context(ply)
        self.ci = gnubg.cubeinfo()
        self.completed = 0

    def move(self, board: np.ndarray, d1: int, d2: int) -> tuple[int, ...]:
        """gnubg's move tuple (from, to, ...), as findbestmove gives it."""
        return tuple(gnubg.findbestmove(to_gnubg(board), self.ci, self.ec, (d1, d2),
                                        NORMAL_FILTER))  # fmt: skip

    def value(self, after: np.ndarray) -> float:
        """gnubg's cubeless equity for the mover of the position after a play."""
        return -float(gnubg.evaluate(to_gnubg(flip(after)), self.ci, self.ec)[5])

    def resolve(self, board: np.ndarray, d1: int, d2: int, mv: tuple[int, ...]) -> np.ndarray:
        """The legal outcome of rolling d1-d2 (mover's view) that is gnubg's move `mv`."""
        outs, _ = legal_outcomes(board, d1, d2, STANDARD)
        b = board.astype(np.int8).copy()
        try:
            for k in range(0, len(mv) - 1, 2):
                _hop(b, mv[k], mv[k + 1])
            if len(mv) % 2:  # cut short at a bear-off from mv[-1]
                _hop(b, mv[-1], 0)
        except GnubgMoveError as e:
            raise GnubgMoveError(f"{position_id(board)} {d1}-{d2}: {mv}: {e}") from None
        if len(mv) % 2 == 0:
            hits = np.flatnonzero((outs == b).all(axis=1))
            if len(hits) != 1:
                raise GnubgMoveError(f"{position_id(board)} {d1}-{d2}: gnubg's {mv} gives "
                                     f"{position_id(b)}, not a legal outcome")  # fmt: skip
            return outs[hits[0]]
        # Outcomes the known part can lead to: no more checkers off than at the end, and
        # no more of the mover's checkers on or above any point than after the known part.
        cands = [i for i, o in enumerate(outs)
                 if o[MY_OFF] >= b[MY_OFF] and (_above(o) <= _above(b)).all()]  # fmt: skip
        if not cands:
            raise GnubgMoveError(f"{position_id(board)} {d1}-{d2}: gnubg's {mv} (cut short "
                                 f"at a bear-off) leads to no legal outcome")  # fmt: skip
        self.completed += 1
        if len(cands) == 1:
            return outs[cands[0]]
        values = [self.value(outs[i]) for i in cands]
        return outs[cands[int(np.argmax(values))]]

    def __call__(self, board: np.ndarray, d1: int, d2: int,
                 rng: np.ndarray) -> tuple[np.ndarray, bool]:  # fmt: skip
        return self.resolve(board, d1, d2, self.move(board, d1, d2)).copy(), False


def gnubg_chooser(ply: int, variant: int) -> GnubgChooser:
    """A chooser factory for doublet.games.duplicate_search
    (functools.partial(gnubg_chooser, ply))."""
    if variant != STANDARD:
        raise ValueError("GNU Backgammon plays standard backgammon only")
    return GnubgChooser(ply)


def save_points(path: Path, points: np.ndarray, run: dict[str, Any]) -> None:
    """Write a run's per-game points (a's, in play_match_with's order: pair k's two games
    are 2k and 2k + 1) and what it was (`run`: seed, games, gnubg ply, seat) atomically."""
    with atomic_open(path) as f:
        np.savez(f, points=np.asarray(points, np.int64), run=np.array(json.dumps(run)))


def load_points(path: Path) -> tuple[np.ndarray, dict[str, Any]]:
    """(points, run) of a save_points file; ValueError naming what is wrong."""
    import zipfile
    import zlib

    try:
        with np.load(path) as z:
            points, run = z["points"], json.loads(str(z["run"]))
    except (OSError, KeyError, ValueError, EOFError, TypeError, AttributeError,
            zipfile.BadZipFile, zlib.error) as e:  # fmt: skip
        raise ValueError(f"{path} is not a --points file of this script "
                         f"({type(e).__name__}: {e})") from None  # fmt: skip
    if not isinstance(run, dict) or points.ndim != 1 or len(points) != run.get("games"):
        raise ValueError(f"{path} is not a whole --points file: its points and its record "
                         "of the run do not agree")  # fmt: skip
    return points.astype(np.int64), run


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) of a - b per game, from the duplicate pairs' mean
    differences: two runs of the same seed play the same dice in each pair."""
    if a.shape != b.shape or len(a) % 2:
        raise ValueError(f"runs of {len(a)} and {len(b)} games cannot be paired")
    return ppg_and_se(np.asarray(a, np.float64) - b)  # a run's own figure, of a - b


def check_refset(ply: int, limit: int = 0) -> tuple[int, int, int]:
    """(cases, mismatches, moves completed) of the chooser over gnubg_refset.jsonl."""
    chooser = GnubgChooser(ply)
    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        cases = [json.loads(line) for line in f]
    if limit:
        cases = cases[:limit]
    bad = 0
    for c in cases:
        b = board_from_position_id(c["pid"])
        try:
            after, _ = chooser(b, *c["dice"], np.zeros(1, np.uint64))
        except GnubgMoveError as e:
            bad += 1
            print(f"error: {e}", file=sys.stderr)
            continue
        if position_id(flip(after)) not in c["legal"]:  # the refdata's own legal list
            bad += 1
            print(f"error: case {c['case']}: gnubg's play is not in the refdata's legal list",
                  file=sys.stderr)  # fmt: skip
    return len(cases), bad, chooser.completed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--doublet", default="search:2",
                    help="search:PLY[:PATH] | net[:PATH] | pubeval | random")  # fmt: skip
    ap.add_argument("--gnubg-ply", type=int, default=0, choices=[0, 1, 2])
    ap.add_argument("--games", type=int, default=400, help="an even number")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=8, help="pairs per progress step")
    ap.add_argument("--no-check", action="store_true", help="skip the refset check")
    ap.add_argument(
        "--prune-keep",
        type=int,
        default=None,
        help="a search seat's inner pruning: plays the main net scores (0: all)",
    )
    ap.add_argument(
        "--prune-all",
        choices=("yes", "no"),
        default=None,
        help="a search seat prunes races and crashed positions too, or not",
    )
    ap.add_argument(
        "--blend",
        type=float,
        default=None,
        help="a search seat ranks its deepest plays by W times their value at the full "
        "depth plus 1 - W times their 0-ply value (Limits.blend; default 1)",
    )
    ap.add_argument("--points", type=Path, help="save each game's points here (.npz)")
    ap.add_argument("--against", type=Path,
                    help="a --points file of a run with the same seed and games: print the "
                    "difference, paired by duplicate pair")  # fmt: skip
    args = ap.parse_args()
    base = None
    if args.against is not None:
        try:
            base = load_points(args.against)
        except ValueError as e:
            ap.error(str(e))
        want = (args.seed, args.games, args.gnubg_ply)
        if tuple(base[1].get(k) for k in ("seed", "games", "gnubg_ply")) != want:
            ap.error(f"--against {args.against} is a run of seed {base[1].get('seed')}, "
                     f"{base[1].get('games')} games, gnubg at {base[1].get('gnubg_ply')} "
                     "ply: pair it with a run of the same")  # fmt: skip
    if args.points is not None and (why := file_path_error(args.points)) is not None:
        ap.error(f"--points {args.points}: cannot write there: {why}")
    if gnubg is None:
        print(MISSING + ": skipped")
        return
    if args.games <= 0 or args.games % 2:
        ap.error(f"--games must be a positive even number, got {args.games}")
    from benchmarks.strength import progress_bar, table
    from doublet.games.duplicate_search import Seat, play_match_with, player
    from doublet.search.searcher import Limits

    limits = None  # the search's defaults
    if args.prune_keep is not None or args.prune_all is not None or args.blend is not None:
        if args.prune_keep is not None and args.prune_keep < 0:
            ap.error(f"--prune-keep must be 0 or more, got {args.prune_keep}")
        prune_all = None if args.prune_all is None else args.prune_all == "yes"
        try:
            limits = Limits(prune_keep=args.prune_keep, prune_all=prune_all,
                            blend=1.0 if args.blend is None else args.blend)  # fmt: skip
        except ValueError as e:
            ap.error(f"--blend: {e}")
    try:
        player(args.doublet, STANDARD, limits)
    except ValueError as e:
        ap.error(str(e))
    seat: Seat = args.doublet
    name = args.doublet
    if limits is not None:  # a factory that worker processes can build (module level)
        seat = functools.partial(player, args.doublet, limits=limits)
        name = f"{args.doublet} (" + ", ".join(
            f"{k} {v}" for k, v in (("prune-keep", args.prune_keep),
                                    ("prune-all", args.prune_all), ("blend", args.blend))
            if v is not None) + ")"  # fmt: skip
    if not args.no_check:
        t = time.perf_counter()
        n, bad, completed = check_refset(args.gnubg_ply)
        print(f"check: gnubg {args.gnubg_ply}-ply chooser on {n} refset cases: {bad} "
              f"mismatches ({completed} moves cut short at a bear-off and completed; "
              f"{time.perf_counter() - t:.0f} s)")  # fmt: skip
        if bad:
            sys.exit(1)
    factory = functools.partial(gnubg_chooser, args.gnubg_ply)
    t = time.perf_counter()
    with progress_bar(args.games) as progress:
        result = play_match_with(seat, factory, args.games, args.seed, STANDARD,
                                 workers=args.workers, chunk_pairs=args.chunk,
                                 progress=progress)  # fmt: skip
    seconds = time.perf_counter() - t
    print(table(name, f"gnubg:{args.gnubg_ply}-ply", result, seconds, "standard",
                args.workers))  # fmt: skip
    if args.points is not None:
        run = {"seed": args.seed, "games": args.games, "gnubg_ply": args.gnubg_ply,
               "doublet": name}  # fmt: skip
        try:
            save_points(args.points, result.points, run)
        except OSError as e:
            sys.exit(f"error: cannot write {args.points}: {write_error(args.points, e)}")
        print(f"points written to {args.points}")
    if base is not None:
        mean, se = paired(result.points, base[0])
        print(f"against {args.against} ({base[1].get('doublet')}): {mean:+.4f} ± {se:.4f} "
              "points a game, paired by duplicate pair")  # fmt: skip


if __name__ == "__main__":
    main()
