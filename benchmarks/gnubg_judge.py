"""Run inside GNU Backgammon 1.07 (GNUBG_JUDGE_IN=IN GNUBG_JUDGE_OUT=OUT gnubg -t -q -r -p
benchmarks/gnubg_judge.py; gnubg passes no arguments to a script): for each line of IN,
``{"case": n, "legal": [position IDs after each legal play, the opponent on roll]}``,
write ``{"case": n, "equities": [...]}`` to OUT: the mover's cubeless money equity after
each play, by gnubg's 2-ply evaluation of the position (deterministic, pruning nets, no
noise): minus the opponent's W - L + WG - LG + WBG - LBG. Appends, so that a run that
was stopped continues (benchmarks/fair_judge.py skips the cases OUT holds).
"""

import json
import os
import sys

# Run inside GNU Backgammon 1.07 (gnubg -t -q -r -p THIS): --help, or a missing
# variable, says so instead of a traceback (a review).
_NEED = ("GNUBG_JUDGE_IN", "GNUBG_JUDGE_OUT")
if {"-h", "--help"} & set(sys.argv[1:]) or any(k not in os.environ for k in _NEED):
    sys.exit(f"{__doc__}\n(it needs the environment variables {', '.join(_NEED)})")

import gnubg  # noqa: E402

CUBE = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0, 0)
PLY = int(os.environ.get("GNUBG_JUDGE_PLY", "2"))
CONTEXT = {"cubeful": 0, "plies": PLY, "deterministic": 1, "prune": 1, "noise": 0.0}

with open(os.environ["GNUBG_JUDGE_IN"]) as f, open(os.environ["GNUBG_JUDGE_OUT"], "a") as out:
    for line in f:
        r = json.loads(line)
        eqs = []
        for pid in r["legal"]:
            w, wg, wbg, lg, lbg = gnubg.evaluate(gnubg.positionfromid(pid), CUBE, CONTEXT)[:5]
            eqs.append(round(-(2 * w - 1 + wg - lg + wbg - lbg), 6))
        out.write(json.dumps({"case": r["case"], "equities": eqs}) + "\n")
        out.flush()
