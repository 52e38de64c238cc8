"""numba options in one place. Kernels are cached on disk so that a warm CLI starts fast.

No fastmath here: the move generator must be exact, and the evaluator's results
must not depend on how LLVM reorders sums.
"""

from __future__ import annotations

from typing import Any

import numba

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with the project's options (cache on disk, release the GIL)."""
    opts = {**JIT_OPTIONS, **kwargs}
    if args and callable(args[0]):
        return numba.njit(**opts)(args[0])
    return numba.njit(*args, **opts)
