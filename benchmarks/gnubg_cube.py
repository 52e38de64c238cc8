"""Run inside GNU Backgammon 1.07 (GNUBG_CUBE_IN=IN GNUBG_CUBE_OUT=OUT [GNUBG_CUBE_PLIES=0,1,2]
gnubg -t -q -r -p benchmarks/gnubg_cube.py; gnubg passes no arguments to a script):
for each cube case of IN (gnubg_cube.jsonl's fields), gnubg's 0-ply cubeless
probabilities and its cubeful 0/1/2-ply equities, with the seconds each cubeful
evaluation took. One JSON object a line in OUT. Used by benchmarks/cube.py (gnubg's time
per decision in the same run) and to make tests/data/gnubg_cube0.jsonl.
"""

import json
import os
import sys
import time

# Run inside GNU Backgammon 1.07 (gnubg -t -q -r -p THIS): --help, or a missing
# variable, says so instead of a traceback (a review).
_NEED = ("GNUBG_CUBE_IN", "GNUBG_CUBE_OUT")
if {"-h", "--help"} & set(sys.argv[1:]) or any(k not in os.environ for k in _NEED):
    sys.exit(f"{__doc__}\n(it needs the environment variables {', '.join(_NEED)})")

import gnubg  # noqa: E402

src, dst = os.environ["GNUBG_CUBE_IN"], os.environ["GNUBG_CUBE_OUT"]
plies = [int(p) for p in os.environ.get("GNUBG_CUBE_PLIES", "0,1,2").split(",")]
with open(src) as f, open(dst, "w") as out:
    for line in f:
        r = json.loads(line)
        m = r["match"]
        if m:
            ci = gnubg.cubeinfo(
                r["cube"]["value"],
                -1 if r["cube"]["owner"] == "centered" else 0,
                0,
                m["length"],
                (m["length"] - m["away"][0], m["length"] - m["away"][1]),
                1 if m["crawford"] else 0,
                0,
            )
        else:
            ci = gnubg.cubeinfo(
                r["cube"]["value"],
                -1 if r["cube"]["owner"] == "centered" else 0,
                0,
                0,
                (0, 0),
                0,
                0,
            )
            ci["jacoby"] = 1 if r["jacoby"] else 0
            ci["beavers"] = 0
        b = gnubg.positionfromid(r["pid"])
        doc = {"case": r["case"]}
        ec0 = {"cubeful": 0, "plies": 0, "deterministic": 1, "prune": 1, "noise": 0.0}
        doc["probs0"] = [round(x, 7) for x in gnubg.evaluate(b, ci, ec0)[:5]]
        for n in plies:
            ec = {"cubeful": 1, "plies": n, "deterministic": 1, "prune": 1, "noise": 0.0}
            t = time.perf_counter()
            opt, nd, dt, dp, rec, text = gnubg.cfevaluate(b, ci, ec)
            doc[str(n)] = {
                "no_double": round(nd, 6),
                "double_take": round(dt, 6),
                "double_pass": round(dp, 6),
                "action": text,
                "seconds": time.perf_counter() - t,
            }
        out.write(json.dumps(doc) + "\n")
