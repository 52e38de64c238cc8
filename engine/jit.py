"""numba options in one place. Kernels are cached on disk so that a warm CLI starts fast.

No fastmath here: the move generator must be exact, and the evaluator's results
must not depend on how LLVM reorders sums.

numba's disk cache only notices changes to a kernel's own source file, not to the
kernels it calls in other files; a stale cache could run old rules. So the cache lives
in a folder named after a hash of every engine/ and training/ source file and the
numba version (under $DOUBLET_CACHE_DIR or ~/.cache/doublet): any change to the code
starts a fresh cache, and older folders are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import numba

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}
_ROOT = Path(__file__).resolve().parent.parent


def cache_base() -> Path:
    env = os.environ.get("DOUBLET_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "doublet"


def _source_hash() -> str:
    h = hashlib.sha256(numba.__version__.encode())
    for folder in ("engine", "training"):
        for f in sorted((_ROOT / folder).glob("*.py")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _setup_cache() -> Path:
    path = cache_base() / f"numba-{_source_hash()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Path(numba.config.CACHE_DIR or "")
    for old in path.parent.glob("numba-*"):
        if old != path:
            with contextlib.suppress(OSError):
                shutil.rmtree(old)
    numba.config.CACHE_DIR = str(path)
    return path


NUMBA_CACHE = _setup_cache()


def is_cached(module: str, kernel: str) -> bool:
    """Has engine/<module>.py's <kernel> been compiled into the current cache?"""
    return any(NUMBA_CACHE.rglob(f"{module}.{kernel}-*.nbi"))


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with the project's options (cache on disk, release the GIL)."""
    opts = {**JIT_OPTIONS, **kwargs}
    if args and callable(args[0]):
        return numba.njit(**opts)(args[0])
    return numba.njit(*args, **opts)
