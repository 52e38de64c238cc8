"""Decision time through the pipe: `doublet engine` driven as a subprocess, beside GNU
Backgammon answering the same requests.

    python benchmarks/engine_pipe.py [--cases 300] [--plies 0 1 2] [--seed 1]
                                     [--gnubg /usr/games/gnubg] [--repeat 1]

The cases are a seeded sample of the decisions of tests/data/gnubg_refset.jsonl (the
(position, roll) pairs with more than one legal play). For each ply, every case is one
request written to the engine's stdin (``{"cmd": "best", "position": ID, "dice": [d1,
d2], "ply": n}``) and timed from the write to the reading of its reply line; the reply
is checked (a play, no error). Rows:

- Doublet through the pipe (`python -m doublet engine`, the installed package), taking
  turns with gnubg's pipe case by case (the order swapped every case);
- GNU Backgammon through a pipe, benchmarks/gnubg_pipe.py (one JSON line in, one out;
  findbestmove cubeless, deterministic, pruning nets, one thread): run by this Python
  with the `gnubg` extra (the PyPI module 1.1.0a16, the "normal" move filter), the
  baseline of the ratio column; and run inside Debian's gnubg 1.07 when the binary is
  there (its Python module spends about 10 ms on every call, evaluate included, so that
  row shows the module's overhead more than its search);
- Doublet in-process on the same cases: the search alone (Searcher.best, the search's
  cache kept between decisions as the engine keeps it), and the whole protocol without
  the pipe (doublet.apps.cli.engine_reply, what doublet engine does with each line: a
  standard best at 0 or 1 ply read and written by the fast path's kernels,
  doublet.apps.fastpath, any other request parsed, validated and answered by
  doublet.apps.protocol.Session and its reply written by json.dumps); and gnubg
  in-process (the `gnubg` extra, the PyPI
  module, with benchmarks/vs_gnubg.py's settings) when it is installed: what the pipe
  adds to each. These rows run alone, one decision after another, so their caches stay
  warm;
- A second pass on as many other cases (the engines' caches have not seen them) in which
  this process also answers each request in-process (engine_reply, as above) between
  the two pipes' turns: Doublet's and gnubg's pipes with a third process's search
  between requests (a harsher machine: each request starts with colder CPU caches; a
  1-ply search measured 0.50 ms median with warm caches and 0.70 ms after 64 MB of
  other memory was written before each one, session 26), the in-process times, and the
  paired median of pipe minus in-process, case by case: what the pipe itself adds when
  both see the same machine. Until session 33 this was the only pass, and its Doublet
  and gnubg rows were the headline; the headline is now the first pass, the two pipes
  taking turns with nothing else between them, as a client that waits for each reply
  sees them.

Both processes keep their evaluation caches between requests, as a client sees them.
Before the timed requests each process answers 20 untimed ones (loading, compiling).
Under the first ply, a floor: a Python process that reads each request's JSON and writes
a fixed reply (one of Doublet's) through the same kind of pipe, doing no work. Also
printed: how often gnubg's play is Doublet's (the same resulting position), a check
that both did the work asked (their nets differ: about 70 % at 0 ply).
Goal (issue 25): through the pipe no slower than gnubg at each depth; moonshot: half
its time at 2 ply.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.vs_gnubg import _hop  # noqa: E402
from doublet.apps.cli import engine_reply  # noqa: E402
from doublet.apps.fastpath import FastBest  # noqa: E402
from doublet.apps.protocol import Session  # noqa: E402
from doublet.core import board as B  # noqa: E402
from doublet.core.board import STANDARD  # noqa: E402
from doublet.formats.ids import board_from_position_id, position_id  # noqa: E402
from doublet.nn.eval import default_model  # noqa: E402
from doublet.search.analysis import searcher as shared_searcher  # noqa: E402
from doublet.search.searcher import Limits, Searcher  # noqa: E402

WARMUP = 20


class Pipe:
    """A JSON-line subprocess: request() writes one line and returns (reply, seconds)."""

    def __init__(self, argv: list[str], ready: bool = False) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)  # fmt: skip
        if ready:  # gnubg prints its banner first: skip to the script's own first line
            for line in self.proc.stdout:  # type: ignore[union-attr]
                if line.startswith('{"ready"'):
                    break
            else:
                raise RuntimeError(f"{argv[0]} ended before it was ready")

    def request(self, req: dict[str, Any]) -> tuple[dict[str, Any], float]:
        line = json.dumps(req) + "\n"
        t = time.perf_counter()
        self.proc.stdin.write(line)  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        reply = self.proc.stdout.readline()  # type: ignore[union-attr]
        dt = time.perf_counter() - t
        if not reply:
            raise RuntimeError("the process ended")
        return json.loads(reply), dt

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def gnubg_after(pid: str, move: list[int]) -> str:
    """The position ID after gnubg's move (from, to pairs in its numbering: 25 the bar,
    0 or below off; benchmarks/vs_gnubg.py's _hop moves each checker), seen by the
    opponent: to compare plays."""
    board = board_from_position_id(pid).copy()
    for k in range(0, len(move), 2):
        if move[k] == move[k + 1] == 0:
            break
        _hop(board, move[k], move[k + 1])
    return position_id(B.flip(board))


def row(name: str, times: list[float], base: list[float] | None) -> str:
    ms = np.array(times) * 1000
    ratio = f"{np.median(ms) / (np.median(base) * 1000):.2f}x" if base else ""
    return (f"{name:<38}{np.median(ms):>10.3f}{ms.mean():>10.3f}"
            f"{np.percentile(ms, 99):>10.3f}{ratio:>10}")  # fmt: skip


FLOOR = """
import json, sys
reply = sys.argv[1] + "\\n"
for line in sys.stdin.buffer:
    json.loads(line)
    sys.stdout.write(reply)
    sys.stdout.flush()
"""


def floor_times(requests: list[dict[str, Any]], reply: dict[str, Any]) -> list[float]:
    """The pipe's floor: a Python process that reads each request's JSON and writes one
    of Doublet's replies, doing no work (what any engine written in Python pays)."""
    floor = Pipe([sys.executable, "-c", FLOOR, json.dumps(reply)])
    try:
        for req in requests[:WARMUP]:
            floor.request(req)
        return [floor.request(req)[1] for req in requests]
    finally:
        floor.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gnubg", default=shutil.which("gnubg") or "/usr/games/gnubg",
                    help="Debian's gnubg 1.07 binary (default: on PATH, else "
                    "/usr/games)")  # fmt: skip
    ap.add_argument("--no-inprocess", action="store_true", help="skip the in-process rows")
    ap.add_argument("--engine", default=f"{sys.executable} -m doublet engine",
                    help="the command of the engine through the pipe (default: this "
                    "Python's doublet; e.g. another checkout's, to compare two versions in "
                    "one run: 'env PYTHONPATH=DIR python -m doublet engine')")  # fmt: skip
    args = ap.parse_args()

    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        cases = [json.loads(line) for line in f]
    cases = [c for c in cases if c["n_legal"] > 1]
    rng = np.random.default_rng(args.seed)
    n = min(args.cases, (len(cases) - WARMUP) // 2)
    drawn = rng.choice(len(cases), size=2 * n + WARMUP, replace=False)
    others = [cases[i] for i in np.sort(drawn[n : 2 * n])]  # the second pass's (in-process)
    # The warm-up's own cases: warmed on the timed ones, both programs answered those
    # from their caches (a review: gnubg's 2-ply pipe at 0.1 ms over 20 cases).
    warm = [cases[i] for i in drawn[2 * n :]]
    cases = [cases[i] for i in np.sort(drawn[:n])]

    doublet = Pipe(shlex.split(args.engine))
    server = str(ROOT / "benchmarks" / "gnubg_pipe.py")
    gnubgs: list[tuple[str, Pipe]] = []  # (row name, pipe)
    try:
        import gnubg as gnubg_module  # type: ignore[import-not-found]

        from benchmarks.vs_gnubg import GnubgChooser, setup

        gnubgs.append(("gnubg 1.1 (PyPI module), pipe", Pipe([sys.executable, server],
                                                              ready=True)))  # fmt: skip
    except ImportError:
        gnubg_module = None
    if os.path.exists(args.gnubg):
        gnubgs.append(("gnubg 1.07 (Debian), pipe",
                       Pipe([args.gnubg, "-t", "-q", "-r", "-p", server], ready=True)))  # fmt: skip
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}; "
          f"{len(cases)} decisions; command: {' '.join(sys.argv)}")  # fmt: skip
    if gnubg_module is None:
        print("(no gnubg Python module: pip install -e '.[gnubg]' for its rows)")
    if not os.path.exists(args.gnubg):
        print(f"(no gnubg binary at {args.gnubg}: apt-get install gnubg for its pipe row)")
    print(f"{'':<38}{'median ms':>10}{'mean ms':>10}{'p99 ms':>10}{'/ gnubg':>10}"
          f"{'same play':>11}")  # fmt: skip
    model = default_model()
    searcher = Searcher(model)
    inprocess = not args.no_inprocess
    paired = Session()  # the in-process engine that answers between the pipes' turns
    paired_fast = FastBest(paired)
    for ply in args.plies:
        chooser = GnubgChooser(ply) if gnubg_module is not None else None

        def after(c: dict[str, Any], move: list[int], chooser: Any = chooser) -> str:
            if chooser is not None and len(move) % 2:  # the module cuts bear-offs short
                b = board_from_position_id(c["pid"])
                return position_id(B.flip(chooser.resolve(b, *c["dice"], tuple(move))))
            return gnubg_after(c["pid"], move)

        requests = [{"cmd": "best", "position": c["pid"], "dice": c["dice"], "ply": ply}
                    for c in cases]  # fmt: skip
        warming = [{"cmd": "best", "position": c["pid"], "dice": c["dice"], "ply": ply}
                   for c in warm]  # fmt: skip
        for c, req in zip(warm, warming, strict=True):
            doublet.request(req)
            for _, g in gnubgs:
                g.request({"position_id": c["pid"], "dice": c["dice"], "ply": ply})
        for req in warming if inprocess else ():  # warmed as the engine was
            engine_reply(paired, paired_fast, json.dumps(req).encode())

        def alternate(cases: list[dict[str, Any]], with_inprocess: bool, ply: int = ply) -> Any:
            """Doublet and the first gnubg (the PyPI module's) take turns, case by case, the
            order swapped every case, so that both see the machine in the same state (a
            pipe's round trip depends on where the scheduler puts the processes and on how
            long they slept); with_inprocess, this process answers each request in-process
            too, right after Doublet's pipe: (Doublet's times, its replies, gnubg's times,
            its moves, the in-process times)."""
            d_times, d_replies, g_times, g_moves, paired_times = [], [], [], [], []
            for n, c in enumerate(cases):
                req = {"cmd": "best", "position": c["pid"], "dice": c["dice"], "ply": ply}
                ask = {"position_id": c["pid"], "dice": c["dice"], "ply": ply}
                for turn in (0, 1, 2) if n % 2 else (1, 2, 0):
                    if turn == 0 and gnubgs:
                        reply, dt = gnubgs[0][1].request(ask)
                        if "error" in reply:
                            raise SystemExit(f"{gnubgs[0][0]}: {reply}")
                        g_times.append(dt)
                        g_moves.append(reply["move"])
                    elif turn == 1:
                        reply, dt = doublet.request(req)
                        if "error" in reply or "play" not in reply:
                            raise SystemExit(f"doublet engine: {reply}")
                        d_times.append(dt)
                        d_replies.append(reply)
                    elif turn == 2 and with_inprocess:
                        line = (json.dumps(req) + "\n").encode()
                        t = time.perf_counter()
                        engine_reply(paired, paired_fast, line)
                        paired_times.append(time.perf_counter() - t)
            return d_times, d_replies, g_times, g_moves, paired_times

        def agreed(cases: list[dict[str, Any]], moves: list[Any], replies: list[Any]) -> int:
            mine = zip(cases, moves, replies, strict=True)
            return sum(after(c, m) == r["position_id"] for c, m, r in mine)

        print(f"{ply} ply")
        # The headline: the two pipes alone, taking turns.
        d_times, d_replies, g0_times, g0_moves, _ = alternate(cases, False)
        rows = [(gnubgs[0][0], g0_times, agreed(cases, g0_moves, d_replies))] if gnubgs else []
        for name, g in gnubgs[1:]:  # gnubg 1.07 (10 ms a call) on its own afterwards
            times, moves = [], []
            for c in cases:
                reply, dt = g.request({"position_id": c["pid"], "dice": c["dice"], "ply": ply})
                if "error" in reply:
                    raise SystemExit(f"{name}: {reply}")
                times.append(dt)
                moves.append(reply["move"])
            rows.append((name, times, agreed(cases, moves, d_replies)))
        base = rows[0][1] if rows else None
        print(row("  Doublet, pipe (doublet engine)", d_times, base))
        for name, times, agree in rows:
            print(row("  " + name, times, base) + f"{agree:>7} / {len(cases)}")
        if inprocess:
            # Again on the other cases (the engines' caches have not seen them), with this
            # process answering each request in-process between the two pipes' turns: a
            # harsher machine (a third process's search between requests) and, paired
            # case by case, what the pipe itself adds.
            d2_times, _, g2_times, _, paired_times = alternate(others, True)
            base2 = g2_times or None
            print(row("  Doublet pipe, in-process between", d2_times, base2))
            if gnubgs:
                print(row("  gnubg 1.1 pipe, in-process between", g2_times, base2))
            print(row("  Doublet, in-process, alternating", paired_times, base2))
            adds = 1000 * np.median(np.array(d2_times) - np.array(paired_times))
            print(f"  {'the pipe adds (paired median)':<36}{adds:>10.3f}")
        if ply == args.plies[0]:
            print(row("  floor: Python, no work, pipe", floor_times(requests, d_replies[0]),
                      base))  # fmt: skip
        if not args.no_inprocess:
            limits = Limits(ply=ply)
            times = []
            for c in cases:
                b = board_from_position_id(c["pid"])
                t = time.perf_counter()
                searcher.best(b, *c["dice"], limits)
                times.append(time.perf_counter() - t)
            print(row("  Doublet, in-process (the search)", times, None))
            # The alternation's Session searched these very cases with the shared
            # Searcher: forget its cache, or this row would find every answer there.
            shared_searcher(None, STANDARD).clear_cache()
            session, times = Session(), []
            fast = FastBest(session)
            for req in requests:  # the protocol without the pipe: what the engine does
                line = (json.dumps(req) + "\n").encode()
                t = time.perf_counter()
                engine_reply(session, fast, line)
                times.append(time.perf_counter() - t)
            print(row("  Doublet, in-process (the protocol)", times, None))
            if chooser is not None:
                setup()
                times = []
                for c in cases:
                    b = board_from_position_id(c["pid"])
                    t = time.perf_counter()
                    chooser.move(b, *c["dice"])
                    times.append(time.perf_counter() - t)
                print(row("  gnubg 1.1 (PyPI module), in-process", times, None), flush=True)
    doublet.close()
    for _, g in gnubgs:
        g.close()


if __name__ == "__main__":
    main()
