"""Shared test set-up."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# The review's cache (doublet review) goes to a folder of this run, never the user's own,
# for the tests and the programs they start (the compiled kernels' cache stays shared).
os.environ["DOUBLET_REVIEW_CACHE"] = tempfile.mkdtemp(prefix="doublet-tests-review-")
atexit.register(shutil.rmtree, os.environ["DOUBLET_REVIEW_CACHE"], ignore_errors=True)


@pytest.fixture(autouse=True)
def no_compile_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The notice that numba is compiling (doublet.core.jit: said once a process, on
    stderr) stays out of the tests that run a command in this process and read its
    stderr: which test would meet a kernel's first compile depends on their order.
    tests/test_jit.py tests the notice itself."""
    from doublet.core import jit

    monkeypatch.setattr(jit, "_said", True)


@pytest.fixture(scope="session", autouse=True)
def warm_kernels() -> None:
    """Compile the engine's kernels (or load them from numba's disk cache) once, before
    any test: the tests that wait for a program's answer with a timeout (the terminal
    game through a pty, the browser game) must not wait for a fresh machine's first
    compilation, which takes a minute or more."""
    import os

    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return  # nothing to compile: the kernels run as plain Python (tests/test_nojit.py)
    from doublet.games.game import Game
    from doublet.games.opponent import engine_play

    for variant in ("standard", "acey-deucey"):
        g = Game.new(variant, seed=1)
        for _ in range(4):
            if g.over:
                break
            g.play(engine_play(g, 1))
