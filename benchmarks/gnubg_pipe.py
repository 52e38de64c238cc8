"""A JSON line server on stdin/stdout around GNU Backgammon, the counterpart of ``doublet
engine``'s ``best`` for benchmarks/engine_pipe.py. Two ways to run it:

- inside Debian's GNU Backgammon 1.07: ``gnubg -t -q -r -p benchmarks/gnubg_pipe.py``
  (gnubg passes no arguments to a script); its findbestmove with its default move filter;
- with the PyPI module (the `gnubg` extra, 1.1.0a16): ``python benchmarks/gnubg_pipe.py``;
  findbestmove with the "normal" move filter of benchmarks/vs_gnubg.py.

Each request ``{"position_id": ..., "dice": [d1, d2], "ply": n}`` gets ``{"move": [from,
to, ...]}`` (cubeless, deterministic, pruning nets, one thread); ``{"quit": true}`` or the
end of input stops it. The first line written is ``{"ready": true}``.
"""

import json
import os
import sys

# Run inside GNU Backgammon 1.07 (gnubg -t -q -r -p THIS): --help, or a missing
# variable, says so instead of a traceback (a review).
if {"-h", "--help"} & set(sys.argv[1:]):
    sys.exit(__doc__)

import gnubg

gnubg.command("set threads 1")  # before "ready": its words go to stdout
CUBE = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0, 0)  # money, cube centred at 1
CONTEXTS = {
    n: {"cubeful": 0, "plies": n, "deterministic": 1, "prune": 1, "noise": 0.0} for n in range(5)
}
PYPI = hasattr(gnubg, "__file__")  # the 1.07 program's module is built in
EXTRA = ()
if PYPI:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.vs_gnubg import NORMAL_FILTER, eval_context

    CONTEXTS = {n: eval_context(n) for n in range(5)}
    CUBE = gnubg.cubeinfo()
    EXTRA = (NORMAL_FILTER,)

sys.stdout.write(json.dumps({"ready": True}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    if not line.strip():
        continue
    try:
        req = json.loads(line)
        if req.get("quit"):
            break
        board = gnubg.positionfromid(req["position_id"])
        d1, d2 = req["dice"]
        context = CONTEXTS[int(req["ply"])]
        move = gnubg.findbestmove(board, CUBE, context, (int(d1), int(d2)), *EXTRA)
        reply = {"move": list(move)}
    except Exception as e:
        reply = {"error": f"{type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
