"""The engine's behaviour signature: every play and probability it gives on fixed cases.

    python benchmarks/signature.py OUT.jsonl [--plies 0 1 2] [--limit N]
    python benchmarks/signature.py --compare A.jsonl B.jsonl

Against another commit, run it through benchmarks/against.py (``-- signature.py
/tmp/sig-{tree}.jsonl``): run by hand in another commit's worktree, `import doublet`
would load this checkout's engine (the editable install), not that tree's.

For each (position, roll) case of tests/data/gnubg_refset.jsonl (standard) and
tests/data/acey_deucey.jsonl (Acey-Deucey, 0 and 1 ply only: deeper is slow there) and
each ply: the search's ranking of every play (`Searcher.analyse`: the outcome boards,
the mover's five probabilities, the ply each was searched to), the play it picks
(`Searcher.best`), and the position's own probabilities before the roll
(`Searcher.evaluate`). A change that is meant not to change behaviour (a refactor) must
give the same file: `--compare` says whether two files agree (boards, plies and picks
exactly, probabilities within 1e-6) and prints the first differences.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TOLERANCE = 1e-6


def _engine():  # type: ignore[no-untyped-def]
    """(parse_position, Searcher, Limits, default_model, ACEY_DEUCEY) from the installed
    engine, whichever layout it has (the script also runs against older commits)."""
    try:
        from doublet.formats.ids import parse_position
        from doublet.nn.eval import default_model
        from doublet.search.searcher import Limits, Searcher
    except ImportError:
        sys.path.insert(0, str(ROOT))
        from engine.eval import default_model  # type: ignore[no-redef]
        from engine.ids import parse_position  # type: ignore[no-redef]

        from engine.search import Limits, Searcher  # type: ignore[no-redef]
    return parse_position, Searcher, Limits, default_model


def _cases(limit: int | None) -> list[tuple[str, object, tuple[int, int]]]:
    out: list[tuple[str, object, tuple[int, int]]] = []
    with open(DATA / "gnubg_refset.jsonl") as f:
        for line in f:
            c = json.loads(line)
            out.append(("standard", c["pid"], (c["dice"][0], c["dice"][1])))
    with open(DATA / "acey_deucey.jsonl") as f:
        for line in f:
            c = json.loads(line)
            out.append(("acey-deucey", json.dumps(c["position"]), (c["dice"][0], c["dice"][1])))
    if limit:
        std = [c for c in out if c[0] == "standard"][:limit]
        ad = [c for c in out if c[0] == "acey-deucey"][: max(1, limit // 8)]
        out = std + ad
    return out


def write(path: Path, plies: list[int], limit: int | None) -> None:
    parse_position, Searcher, Limits, default_model = _engine()
    searchers = {}
    with open(path, "w") as out:
        for k, (variant_name, text, (d1, d2)) in enumerate(_cases(limit)):
            board, variant, _ = parse_position(text)
            for ply in plies:
                if variant_name == "acey-deucey" and ply > 1:
                    continue
                if variant not in searchers:
                    searchers[variant] = Searcher(default_model(variant), variant)
                s = searchers[variant]
                s.clear_cache()
                limits = Limits(ply=ply)
                boards, again, probs, dep = s.analyse(board, d1, d2, limits)
                s.clear_cache()
                best = s.best(board, d1, d2, limits)
                s.clear_cache()
                before = s.evaluate(board, limits)
                rec = {
                    "case": k,
                    "variant": variant_name,
                    "ply": ply,
                    "boards": [b.tobytes().hex() for b in boards],
                    "again": [bool(a) for a in again],
                    "probs": np.asarray(probs, np.float64).round(9).tolist(),
                    "plies": [int(p) for p in dep],
                    "best": int(best),
                    "before": np.asarray(before, np.float64).round(9).tolist(),
                }
                out.write(json.dumps(rec) + "\n")


def compare(a: Path, b: Path) -> int:
    ra = [json.loads(x) for x in a.read_text().splitlines()]
    rb = [json.loads(x) for x in b.read_text().splitlines()]
    bad = 0
    if len(ra) != len(rb):
        print(f"{len(ra)} records against {len(rb)}")
        return 1
    worst = 0.0
    for x, y in zip(ra, rb, strict=True):
        for key in ("case", "ply", "boards", "again", "plies", "best"):
            if x[key] != y[key]:
                bad += 1
                if bad <= 10:
                    print(f"case {x['case']} ply {x['ply']}: {key} differs")
                break
        else:
            d = max(
                float(np.max(np.abs(np.array(x["probs"]) - np.array(y["probs"])), initial=0.0)),
                float(np.max(np.abs(np.array(x["before"]) - np.array(y["before"])))),
            )
            worst = max(worst, d)
            if d > TOLERANCE:
                bad += 1
                if bad <= 10:
                    print(f"case {x['case']} ply {x['ply']}: probabilities differ by {d:.2e}")
    print(f"{len(ra)} records, {bad} differ; largest probability difference {worst:.2e}")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--limit", type=int, default=None, help="the first N standard cases")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("give OUT.jsonl or --compare A B")
    write(args.out, args.plies, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
