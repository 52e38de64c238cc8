"""mypy over engine/ (the package doublet, marked typed by py.typed), with the settings
in pyproject.toml. engine/ is checked under its import name through a folder that links
`doublet` to it (an editable install maps the name with an import hook, which mypy cannot
follow)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_error_in_the_engine(tmp_path: Path) -> None:
    mypy = Path(sys.executable).parent / "mypy"
    if not mypy.exists():
        pytest.skip("mypy is in the test extra: pip install -e '.[test]'")
    (tmp_path / "doublet").symlink_to(ROOT / "engine", target_is_directory=True)
    assert (ROOT / "engine" / "py.typed").exists()
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    cmd = [str(mypy), "--config-file", str(ROOT / "pyproject.toml"), "-p", "doublet"]
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
