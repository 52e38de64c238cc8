"""The fair judge of issue 24: every legal play of every refset decision valued by GNU
Backgammon 1.07 at 2 ply (not only the plays its move filter kept), so that a play
gnubg's filter dropped is judged like any other.

    python benchmarks/fair_judge.py build [--workers 2] [--gnubg /usr/games/gnubg]

writes benchmarks/data/gnubg2_all_refset.jsonl.gz: one line per decision of
tests/data/gnubg_refset.jsonl (the cases with more than one legal play), ``{"case",
"equities"}`` in the order of the case's ``legal`` list (benchmarks/gnubg_judge.py,
inside Debian's gnubg, --workers processes; resumable: a stopped build continues from
its partial files in benchmarks/data/judge-parts/). benchmarks/decision.py --judge all
reads it through FairJudge.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
JUDGE = DATA / "gnubg2_all_refset.jsonl.gz"
PARTS = DATA / "judge-parts"


BLUNDER = 0.05  # a decision losing more than this (equity) is a blunder


def paired(d: np.ndarray) -> str:
    """A paired difference of losses (equity units, decision by decision) in mEq: its mean
    ± its standard error."""
    se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    return f"{1000 * d.mean():+.3f} ± {1000 * se:.3f}"


def decisions() -> list[dict]:
    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        return [c for c in (json.loads(line) for line in f) if c["n_legal"] > 1]


class FairJudge:
    """loss(case, after_pid): gnubg 2-ply's best equity among all legal plays minus the
    equity of the play leading to after_pid (the opponent on roll), in equity units."""

    def __init__(self, path: Path = JUDGE) -> None:
        self.table: dict[int, dict[str, float]] = {}
        self.best: dict[int, float] = {}
        cases = {c["case"]: c for c in decisions()}
        with gzip.open(path, "rt") as f:
            for line in f:
                r = json.loads(line)
                c = cases[r["case"]]
                self.table[r["case"]] = dict(zip(c["legal"], r["equities"], strict=True))
                self.best[r["case"]] = max(r["equities"])

    def loss(self, case: dict, after_pid: str) -> float:
        return self.best[case["case"]] - self.table[case["case"]][after_pid]

    def worst(self, case: dict) -> float:
        """The largest loss any play of the case can have."""
        return self.best[case["case"]] - min(self.table[case["case"]].values())


def run_judges(rows: list[dict], folder: Path, prefix: str, workers: int, binary: str,
               ply: int = 2) -> list[Path]:  # fmt: skip
    """Value rows ({"case", "legal"}) in `workers` processes of Debian's gnubg 1.07
    running benchmarks/gnubg_judge.py at `ply`, each its share of the rows (folder /
    in-PREFIX-W.jsonl) into folder / out-PREFIX-W.jsonl, with a progress line; their
    output files, or [] when a process failed."""
    procs, outs = [], []
    for w in range(workers):
        share = rows[w::workers]
        if not share:
            continue
        src, dst = folder / f"in-{prefix}{w}.jsonl", folder / f"out-{prefix}{w}.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in share))
        env = {**os.environ, "GNUBG_JUDGE_IN": str(src), "GNUBG_JUDGE_OUT": str(dst),
               "GNUBG_JUDGE_PLY": str(ply)}  # fmt: skip
        procs.append(subprocess.Popen([binary, "-t", "-q", "-r", "-p",
                                       str(ROOT / "benchmarks" / "gnubg_judge.py")], env=env,
                                      stdout=subprocess.DEVNULL))  # fmt: skip
        outs.append(dst)
    while any(p.poll() is None for p in procs):
        time.sleep(5)
        n = sum(len(o.read_text().splitlines()) for o in outs if o.exists())
        print(f"\r{ply} ply: {n} / {len(rows)} decisions", end="", flush=True)
    print()
    return [] if any(p.returncode for p in procs) else outs


def build(workers: int, binary: str) -> None:
    PARTS.mkdir(parents=True, exist_ok=True)
    todo = decisions()
    done: set[int] = set()
    for part in PARTS.glob("out-*.jsonl"):
        for line in part.read_text().splitlines():
            with contextlib.suppress(ValueError):  # a line cut short: done again
                done.add(json.loads(line)["case"])
    todo = [c for c in todo if c["case"] not in done]
    print(f"{len(done)} decisions judged already, {len(todo)} to go "
          f"({sum(len(c['legal']) for c in todo)} positions at 2 ply)", flush=True)  # fmt: skip
    asked = [{"case": c["case"], "legal": c["legal"]} for c in todo]
    if not run_judges(asked, PARTS, f"{int(time.time())}-", workers, binary):
        raise SystemExit("a gnubg process failed; run build again to continue")
    rows: dict[int, dict] = {}
    for part in PARTS.glob("out-*.jsonl"):
        for line in part.read_text().splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            rows[r["case"]] = r
    missing = [c["case"] for c in decisions() if c["case"] not in rows]
    if missing:
        raise SystemExit(f"{len(missing)} decisions not judged (e.g. {missing[:5]}); run again")
    tmp = JUDGE.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for c in decisions():
            f.write(json.dumps(rows[c["case"]]) + "\n")
    os.replace(tmp, JUDGE)
    shutil.rmtree(PARTS)
    print(f"wrote {JUDGE} ({JUDGE.stat().st_size:,} bytes)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["build"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gnubg", default=shutil.which("gnubg") or "/usr/games/gnubg")
    args = ap.parse_args()
    if not os.path.exists(args.gnubg):
        raise SystemExit(f"no gnubg at {args.gnubg}: apt-get install gnubg")
    build(args.workers, args.gnubg)


if __name__ == "__main__":
    sys.exit(main())
