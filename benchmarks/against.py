"""Run a benchmark on this checkout and on another commit, in one run, turn about.

    python benchmarks/against.py REV [--rounds 2] -- decision.py --sample 600 --no-gnubg
    python benchmarks/against.py REV -- movegen.py

The other commit is checked out (``git worktree``) into a temporary folder and its own
copy of the benchmark script runs there, with this environment's Python; the two trees
take turns (old, new, old, new, ...) so that a change of load on the machine falls on
both. Each run's output is printed under its tree's name and round. A change that is
meant to be non-functional (a refactor) should show no difference beyond the spread
between the rounds. The commit must be one whose benchmark scripts put their own
checkout first on sys.path (every commit since the benchmarks were written does), so
each tree runs its own engine; a commit laid out as the package doublet runs through a
PYTHONPATH shim (_shim: this environment's editable install would otherwise give it this
checkout's code). ``{tree}`` in the arguments becomes "old" or "new", so that a script
writing a file writes one for each tree:

    python benchmarks/against.py REV --rounds 1 -- signature.py /tmp/sig-{tree}.jsonl
    python benchmarks/signature.py --compare /tmp/sig-old.jsonl /tmp/sig-new.jsonl
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _shim(tree: Path, tmp: Path) -> str | None:
    """For a tree laid out as the package doublet (engine/ is doublet, training/ and
    models/ its sub-packages, mapped in pyproject.toml), a folder to put first on
    PYTHONPATH so that `import doublet` finds that tree's code: this environment's
    editable install maps doublet to this checkout, whatever the working folder and
    sys.path say. None for a tree of the older layout (top-level engine and training,
    which its scripts put on sys.path themselves)."""
    if not (tree / "engine" / "__init__.py").exists() or not (tree / "engine" / "core").is_dir():
        return None
    for sub in ("training", "models"):  # the sub-packages that live beside engine/
        link = tree / "engine" / sub
        if not link.exists():
            link.symlink_to(Path("..") / sub)
    shim = tmp / f"shim-{tree.name}"
    shim.mkdir(exist_ok=True)
    if not (shim / "doublet").exists():
        (shim / "doublet").symlink_to(tree / "engine")
    return str(shim)


def _run(tree: Path, script: str, args: list[str], shim: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if shim:
        env["PYTHONPATH"] = shim
    r = subprocess.run([sys.executable, str(tree / "benchmarks" / script), *args], cwd=tree,
                       env=env, capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0:
        raise SystemExit(f"{tree.name}: {script} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        raise SystemExit("usage: against.py REV [--rounds N] -- SCRIPT [ARGS...]")
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("rev")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv[:cut])
    script, *rest = argv[cut + 1 :]
    commit = subprocess.run(["git", "rev-parse", "--short", args.rev], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M')}")  # fmt: skip
    print(f"command: python benchmarks/against.py {' '.join(argv)}")
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / f"old-{commit}"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(old), commit], cwd=ROOT,
                       check=True)  # fmt: skip
        shim = _shim(old, Path(tmp))
        try:
            for k in range(args.rounds):
                for name, tree, path in ((f"{commit} (old)", old, shim),
                                         ("this checkout (new)", ROOT, None)):  # fmt: skip
                    which = "old" if tree is old else "new"
                    out = _run(tree, script, [a.replace("{tree}", which) for a in rest], path)
                    print(f"\n=== round {k + 1}: {name}\n{out.rstrip()}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                           check=False)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
