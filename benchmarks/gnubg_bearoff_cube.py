"""Run inside GNU Backgammon 1.07 (GNUBG_BEAROFF_OUT=OUT gnubg -t -q -r -p
benchmarks/gnubg_bearoff_cube.py; gnubg passes no arguments to a script): gnubg's 0-ply
cubeful money equities of random small bear-offs (1 to 6 checkers a side on its home
board), which it reads from its two-sided bear-off database (gnubg_ts0.bd, cubeful):
no double and double / take with the cube centered, the side on roll's and the
opponent's. One JSON object a line in OUT; made tests/data/gnubg_bearoff_cube.jsonl
(GNUBG_BEAROFF_N=120), which tests/test_cube_bearoff.py checks doublet.cube.bearoff
against.
"""

import json
import os
import random
import sys

# Run inside GNU Backgammon 1.07 (gnubg -t -q -r -p THIS): --help, or a missing
# variable, says so instead of a traceback (a review).
_NEED = ("GNUBG_BEAROFF_OUT",)
if {"-h", "--help"} & set(sys.argv[1:]) or any(k not in os.environ for k in _NEED):
    sys.exit(f"{__doc__}\n(it needs the environment variables {', '.join(_NEED)})")

import gnubg  # noqa: E402

rng = random.Random(44)
n = int(os.environ.get("GNUBG_BEAROFF_N", "120"))
seen = set()
ec = {"cubeful": 1, "plies": 0, "deterministic": 1, "prune": 1, "noise": 0.0}
with open(os.environ["GNUBG_BEAROFF_OUT"], "w") as out:
    while len(seen) < n:
        board = [[0] * 25, [0] * 25]  # gnubg's: [opponent, side on roll], ace point first
        for side in (0, 1):
            for _ in range(rng.randint(1, 6)):
                board[side][rng.randint(0, 5)] += 1
        pid = gnubg.positionid(board)
        if pid in seen:
            continue
        seen.add(pid)
        doc = {"pid": pid}
        for name, value, owner in (("centered", 1, -1), ("mover", 2, 0), ("opponent", 2, 1)):
            ci = gnubg.cubeinfo(value, owner, 0, 0, (0, 0), 0, 0)
            ci["beavers"] = 0
            _, nd, dt, _, _, text = gnubg.cfevaluate(gnubg.positionfromid(pid), ci, ec)
            doc[name] = {"no_double": round(nd, 6), "double_take": round(dt, 6)}
            if owner != 1:
                doc[name]["action"] = text
        out.write(json.dumps(doc) + "\n")
