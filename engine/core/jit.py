"""numba options in one place. Kernels are cached on disk so that a warm CLI starts fast.

No fastmath here: the move generator must be exact, and the evaluator's results
must not depend on how LLVM reorders sums.

numba's disk cache only notices changes to a kernel's own source file, not to the
kernels it calls in other files; a stale cache could run old rules. So the cache lives
in a folder named after a hash of every source file of the package (doublet, its
sub-packages and doublet.training, wherever they are installed) that uses njit (only
those can hold or call kernels) and the numba version (under
$DOUBLET_CACHE_DIR or ~/.cache/doublet): any change to kernel code starts a fresh
cache, and folders unused for a day are removed (not at once: another checkout of other
code may be using its own folder at the same time).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numba
import numba.core.event

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}
# For kernels that allocate nothing and only use their callers' arrays (and views of
# them): compiled without numba's reference counting (its private `_nrt` option),
# passing an array costs nothing, where otherwise each one passed costs two atomic
# updates a call (the move generator's 13 buffers cost more than a standard roll).
NO_REFCOUNT: dict[str, Any] = {"_nrt": False}
_PACKAGE = Path(__file__).resolve().parent.parent  # doublet's folder (engine/ in the repo)
_UNUSED_SECONDS = 24 * 3600


def cache_base() -> Path:
    env = os.environ.get("DOUBLET_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "doublet"


def kernel_sources() -> list[Path]:
    """Every source file of doublet and doublet.training that mentions njit, in a fixed
    order. doublet.training is found without importing it (an editable install maps it
    to the repository's training/, a wheel puts it inside the package)."""
    return [f for f, _ in _kernel_texts()]


def _kernel_texts() -> list[tuple[Path, bytes]]:
    """(path, contents) of each file kernel_sources lists, each file read once."""
    roots = [_PACKAGE]
    spec = importlib.util.find_spec("doublet.training")
    if spec is not None and spec.origin is not None:
        training = Path(spec.origin).resolve().parent
        if _PACKAGE not in training.parents:
            roots.append(training)
    found = []
    for root in roots:
        for f in sorted(root.rglob("*.py")):
            text = f.read_bytes()
            if b"njit" in text:
                found.append((f, text))
    return found


def _source_hash() -> str:
    h = hashlib.sha256(numba.__version__.encode())
    for f, text in _kernel_texts():
        h.update(f.name.encode())
        h.update(text)
    return h.hexdigest()[:16]


def _setup_cache() -> Path:
    path = cache_base() / f"numba-{_source_hash()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Path(getattr(numba.config, "CACHE_DIR", "") or "")
    os.utime(path)
    now = time.time()
    for old in path.parent.glob("numba-*"):
        with contextlib.suppress(OSError):
            if old != path and now - old.stat().st_mtime > _UNUSED_SECONDS:
                shutil.rmtree(old)
    setattr(numba.config, "CACHE_DIR", str(path))  # noqa: B010 (numba.config is untyped)
    return path


NUMBA_CACHE = _setup_cache()


def is_cached(module: str, kernel: str) -> bool:
    """Has <module>.py's <kernel> (module: its file name, e.g. "searcher") been compiled
    into the current cache for this copy of doublet? numba keeps each source folder's
    kernels in a subfolder named from the folder's path, so another checkout of the same
    sources (which shares the cache's source hash) does not count."""
    from numba.core.caching import _CacheLocator

    for f in kernel_sources():
        if f.stem == module:
            sub = NUMBA_CACHE / _CacheLocator.get_suitable_cache_subpath(str(f))
            if any(sub.glob(f"{module}.{kernel}-*.nbi")):
                return True
    return False


# The entry kernels of a search: numba compiles each on its first call, so one cached is
# no sign of the other (a review found an evaluation right after the first analysis of a
# roll compiling for 12 s unannounced). A command names those it surely calls.
SEARCH_KERNELS = ("searcher._analyse_root_entry",)  # plays of a roll (and most commands)
EVAL_KERNELS = ("searcher._vn_entry",)  # a position before the roll (eval, cube)


_FIRST_RUN = (
    "doublet: compiling the numba kernels (first run only, about a minute); "
    "later runs start in about a second"
)
_LATER = (
    "doublet: compiling numba kernels this command needs (once: later runs start at once; "
    "up to a minute)"
)
_said = False  # this process said a compile already (announce_compile or the listener)


def _say(text: str) -> None:
    global _said
    if not _said:
        _said = True
        print(text, file=sys.stderr, flush=True)


def announce_compile(*kernels: str) -> None:
    """Say so on stderr when any of `kernels` ("module.kernel", e.g. "movegen._outcomes",
    the default) must be compiled: all of them on a first run, some later. Either way,
    from then on any of doublet's kernels that numba compiles (not found in the cache)
    is said too, once, when it starts: a command's other kernels (an evaluation's in
    doublet play, the cube's in a review) compile only when a path first reaches them."""
    kernels = kernels or ("movegen._outcomes",)
    missing = [k for k in kernels if not is_cached(*k.split("."))]
    if len(missing) == len(kernels):
        _say(_FIRST_RUN)
    elif missing:
        plural = "s" if len(missing) > 1 else ""
        _say(
            f"doublet: compiling {len(missing)} more numba kernel{plural} this command "
            "needs (once; up to a minute)"
        )
    notice_compiles()


class _CompileNotice(numba.core.event.Listener):
    """numba fires "numba:compile" only when it compiles, never on a load from the cache."""

    def on_start(self, event: Any) -> None:
        func = getattr(event.data.get("dispatcher"), "py_func", None)
        if str(getattr(func, "__module__", None) or "").startswith("doublet."):
            _say(_LATER)

    def on_end(self, event: Any) -> None:
        pass


_notice: _CompileNotice | None = None


def notice_compiles() -> None:
    """From now on, say on stderr (once) when numba starts compiling one of doublet's
    kernels (announce_compile calls it)."""
    global _notice
    if _notice is None:
        _notice = _CompileNotice()
        numba.core.event.register("numba:compile", _notice)


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with the project's options (cache on disk, release the GIL)."""
    opts = {**JIT_OPTIONS, **kwargs}
    if args and callable(args[0]):
        return numba.njit(**opts)(args[0])
    return numba.njit(*args, **opts)
