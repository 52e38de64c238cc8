"""ruff lint and format check over the whole project (settings in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    exe = Path(sys.executable).parent / "ruff"
    return [str(exe)] if exe.exists() else [shutil.which("ruff") or "ruff"]


def test_ruff_check() -> None:
    r = subprocess.run([*_ruff(), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format() -> None:
    r = subprocess.run([*_ruff(), "format", "--check", "."], cwd=ROOT, capture_output=True,
                       text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
