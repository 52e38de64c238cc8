"""GNU Backgammon's own analysis of match files, for benchmarks/review.py (issue 22).

Runs inside GNU Backgammon 1.07's embedded Python (``apt-get install gnubg``):

    MATCHES="a.mat b.mat" PLY=2 OUT=gnubg.json gnubg -t -q -r -p benchmarks/gnubg_review.py

For each file: ``import mat`` (or ``import sgf``), ``analyse match`` with checker play
and cube decisions at PLY, then per player (X is the .mat file's left column, player 0)
from ``gnubg.match(statistics=1)``: unforced moves, the checker-play and cube errors
(EMG, gnubg's "skill" figures), the close-or-actual cube decisions, the error rate in
mEMG as gnubg's statistics page computes it (all errors over unforced moves plus close
cube decisions), the marked plays and the luck. Written as JSON to OUT.
"""

import json
import os
import sys

# Run inside GNU Backgammon 1.07 (gnubg -t -q -r -p THIS): --help, or a missing
# variable, says so instead of a traceback (a review).
_NEED = ("MATCHES", "OUT")
if {"-h", "--help"} & set(sys.argv[1:]) or any(k not in os.environ for k in _NEED):
    sys.exit(f"{__doc__}\n(it needs the environment variables {', '.join(_NEED)})")

import gnubg  # noqa: E402  # GNU Backgammon's embedded module

ply = int(os.environ.get("PLY", "2"))
for what in ("chequerplay", "cubedecision"):
    gnubg.command(f"set analysis {what} evaluation plies {ply}")
out = {}
for path in os.environ["MATCHES"].split():
    kind = "sgf" if path.endswith(".sgf") else "mat"
    gnubg.command(f"import {kind} {path}")
    gnubg.command("analyse match")
    stats = gnubg.match(analysis=1, boards=0, statistics=1, verbose=0)["stats"]
    players = []
    for side in ("X", "O"):
        s = stats[side]
        checker = float(s["moves"]["error-skill"])
        cube = float(s["cube"]["error-skill"])
        unforced = int(s["moves"]["unforced-moves"])
        close = int(s["cube"]["close-cube"])
        players.append(
            {
                "unforced": unforced,
                "checker_error": checker,
                "cube_error": cube,
                "close_cube": close,
                "checker_rate_memg": 1000 * checker / max(unforced, 1),
                "error_rate_memg": 1000 * (checker + cube) / max(unforced + close, 1),
                "marked": s["moves"]["marked"],
                "luck": float(s["dice"]["luck"]),
            }
        )
    out[os.path.basename(path)] = {"ply": ply, "players": players}
with open(os.environ["OUT"], "w") as f:
    json.dump(out, f, indent=1)
print("wrote", os.environ["OUT"], len(out), "matches")
