"""The rules tests with numba's JIT off (NUMBA_DISABLE_JIT=1, as stumpy tests its
kernels): the kernels of doublet.core and doublet.rules then run as plain Python, so the
slow path is tested too and a traceback reaches the kernel bodies. With the JIT off the
tests take a fixed subset of their cases (tests/helpers.subset); about a minute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES_TESTS = ["tests/test_board.py", "tests/test_dice.py", "tests/test_movegen.py",
               "tests/test_notation.py"]  # fmt: skip


def test_the_rules_tests_pass_with_the_jit_off() -> None:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *RULES_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
