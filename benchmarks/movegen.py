"""Move-generation throughput: the numba kernel, the slow reference, the batch CLI.

    python benchmarks/movegen.py [--repeat 5] [--reference-sample 600]

Prints one table: (position, roll) pairs per second through the kernel on the
reference mix (the 3600 gnubg_refset cases, and the 400 Acey-Deucey cases), the
slow reference generator (tests/reference.py) on the same cases, their ratio,
and `doublet moves --batch` end to end (JSON in, plays with notation out).
Single core: numba runs the kernel on the calling thread only.
Goals (issue 2): >= 300,000 pairs/s through the kernel, >= 100x the reference.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.core.board import ACEY_DEUCEY, STANDARD, from_counts  # noqa: E402
from doublet.formats.ids import board_from_position_id  # noqa: E402
from doublet.rules.movegen import Workspace, count_batch  # noqa: E402
from tests.reference import reference_outcomes  # noqa: E402

DATA = ROOT / "tests" / "data"


def _rows(name: str) -> list[dict]:
    with open(DATA / name) as f:
        return [json.loads(line) for line in f]


def load_mix() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]]:
    mixes = {}
    rows = _rows("gnubg_refset.jsonl")
    boards = np.stack([board_from_position_id(r["pid"]) for r in rows])
    rolls = np.array([r["dice"] for r in rows], np.int64)
    mixes["standard (gnubg_refset)"] = (boards, rolls, np.full(len(rows), STANDARD), rows)
    rows = _rows("acey_deucey.jsonl")
    sides = [(r["position"]["mover"], r["position"]["opponent"]) for r in rows]
    boards = np.stack([from_counts(m, o) for m, o in sides])
    rolls = np.array([r["dice"] for r in rows], np.int64)
    mixes["acey-deucey (acey_deucey)"] = (boards, rolls, np.full(len(rows), ACEY_DEUCEY), rows)
    return mixes


def kernel_rate(boards: np.ndarray, rolls: np.ndarray, variants: np.ndarray, repeat: int) -> float:
    ws = Workspace()
    count_batch(boards[:4], rolls[:4], variants[:4], ws)  # compile / load
    count_batch(boards, rolls, variants, ws)  # grow the buffers once
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        count_batch(boards, rolls, variants, ws)
        best = min(best, time.perf_counter() - t)
    return len(boards) / best


def reference_rate(boards: np.ndarray, rolls: np.ndarray, variants: np.ndarray, sample: int,
                   max_outcomes: int) -> tuple[float, int]:  # fmt: skip
    rng = np.random.default_rng(0)
    idx = rng.choice(len(boards), size=min(sample, len(boards)), replace=False)
    t = time.perf_counter()
    for i in idx:
        reference_outcomes(boards[i], int(rolls[i, 0]), int(rolls[i, 1]), int(variants[i]))
    return len(idx) / (time.perf_counter() - t), len(idx)


def cli_rate(rows: list[dict], key: str) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for r in rows:
            f.write(json.dumps({"position": r[key], "dice": r["dice"]}) + "\n")
        path = f.name
    cmd = [sys.executable, "-m", "doublet", "moves", "--batch", path]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([*cmd[:3], "moves", "--batch", os.devnull], env=env, check=True)  # warm
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    dt = time.perf_counter() - t
    os.unlink(path)
    n = len(proc.stdout.splitlines())
    assert n == len(rows), (n, len(rows))
    assert '"error"' not in proc.stdout
    return n / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reference-sample", type=int, default=600)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}")
    print(f"{'mix':<28}{'pairs':>7}{'kernel pairs/s':>16}{'reference pairs/s':>19}"
          f"{'ratio':>9}{'batch CLI lines/s':>19}")  # fmt: skip
    for name, (boards, rolls, variants, rows) in load_mix().items():
        k = kernel_rate(boards, rolls, variants, args.repeat)
        sample = args.reference_sample if variants[0] == STANDARD else args.reference_sample // 4
        r, _ = reference_rate(boards, rolls, variants, sample, 0)
        key = "pid" if variants[0] == STANDARD else "position"
        c = cli_rate(rows, key)
        print(f"{name:<28}{len(boards):>7}{k:>16,.0f}{r:>19,.0f}{k / r:>8.0f}x{c:>19,.0f}")


if __name__ == "__main__":
    main()
