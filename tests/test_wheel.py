"""Packaging: a wheel built from the repository installs, with nothing else of the
checkout, into a fresh virtual environment and analyses a position with the shipped
model from another folder; the wheel holds the import name `doublet` only (no top-level
`engine` or `training`), its models and its data files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    src = out / "src"  # a copy of the checkout's files (tracked, or new and not ignored)
    ls = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    files = subprocess.run(ls, cwd=ROOT, capture_output=True, check=True).stdout.decode()
    files = files.split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    r = subprocess.run([*build, "-w", str(out / "dist"), str(src)], capture_output=True,
                       text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = (out / "dist").glob("doublet-*.whl")
    return whl


def test_the_wheel_holds_one_package_with_its_models_and_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"doublet"}, tops
    for want in (
        "doublet/models/doublet-standard.npz",
        "doublet/models/doublet-acey-deucey.npz",
        "doublet/models/doublet-standard.md",
        "doublet/nn/data/pubeval_weights.json",
        "doublet/apps/web/index.html",
        "doublet/training/train.py",
        "doublet/py.typed",
        "doublet/apps/protocol.md",  # doublet engine --doc
    ):
        assert want in names, want
    doc = zipfile.ZipFile(wheel).read("doublet/apps/protocol.md").decode()
    assert doc.startswith("# The engine protocol")  # the page, not a link to it


def test_the_wheel_analyses_from_another_folder(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env_dir)
    py = env_dir / "bin" / "python"
    # numpy and numba come from this environment's site-packages (no download); the
    # wheel itself goes into the fresh one, without its dependencies.
    import numba
    import numpy

    deps = {str(Path(m.__file__).resolve().parent.parent) for m in (numpy, numba)}
    pth = next((env_dir / "lib").glob("python*")) / "site-packages" / "deps.pth"
    pth.write_text("\n".join(sorted(deps)) + "\n")
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q"]
    r = subprocess.run([*install, "--python", str(py), str(wheel)], capture_output=True,
                       text=True)  # fmt: skip
    if r.returncode != 0:  # pip < 22.3 has no --python: install with the target's own path
        r = subprocess.run([*install, "--target", str(pth.parent), str(wheel)],
                           capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DOUBLET_MODEL_DIR")}
    code = (
        "import doublet, sys; from doublet.apps.cli import main;"
        f" assert doublet.__file__.startswith({str(env_dir)!r}), doublet.__file__;"
        " sys.exit(main(['analyse', '4HPwATDgc/ABMA', '3', '1', '--ply', '0']))"
    )
    r = subprocess.run([str(py), "-c", code], cwd=elsewhere, env=env, capture_output=True,
                       text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "8/5 6/5" in r.stdout
    r = subprocess.run([str(py), "-c", "import engine"], cwd=elsewhere, env=env,
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode != 0, "the wheel must not install a top-level `engine`"
