"""Writing files atomically: a reader, a crash or a SIGKILL at any moment sees either the
old file or the whole new one, never half of it.

The data goes to a temporary file beside the target (same folder, so the same file
system), is flushed to disk (fsync), and replaces the target with one rename
(``os.replace``); the folder is then synced so that the rename itself lasts. On any
error the temporary file is removed and the target is untouched. The new file keeps the
permissions of the file it replaces, or gets those of a plain new file (0o666 less the
umask), not the private 0o600 of a temporary file. `held_lock` keeps a second process
from working on the same files at once (a saved game, a training run's folder).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from doublet.core.errors import DoubletError


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """``with atomic_open(path) as f: ...`` writes f to path atomically (mode "wb" or
    "w", the latter UTF-8 text). The folder is created if needed; a symbolic link is
    written through (the file it names is replaced, the link kept), and so is a device or
    a pipe (nothing to replace)."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_open writes whole files: mode 'wb' or 'w', not {mode!r}")
    target = Path(path)
    if target.is_symlink():  # write the file the link names, and keep the link
        try:
            target = target.resolve()
        except RuntimeError:  # a loop of links (Python 3.11 says so by RuntimeError)
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from None
    if _special(target):  # `--html /dev/null`, a FIFO (a review: run as root, /dev/null
        # became an HTML page)
        with open(target, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def write_error(path: str | os.PathLike[str], e: OSError, folder: bool = False) -> str:
    """Why `path` (a file, or with `folder` a folder) could not be written, in words: a
    file where a folder must be reads "File exists" or "Not a directory" in the OS's
    words, so say which one it is."""
    p = Path(path).expanduser()
    if folder and _exists(p) and not _is_dir(p):
        return "it is a file, not a folder"
    if not folder and _is_dir(p):
        return "it is a folder"
    up = _nearest_existing(p)
    if up is not None and not _is_dir(up):
        return f"{str(up)!r} is a file, not a folder"
    return e.strerror or str(e)


def _nearest_existing(p: Path) -> Path | None:
    """The nearest of p's parents that exists (a file in the way, or the folder that must
    take the new ones), or None."""
    return next((up for up in p.parents if _exists(up)), None)


# What a look at a path may meet that says only "cannot look" (Python 3.11's exists()
# and is_dir() raise them): a name too long (a message about a failed write then failed
# itself: a review), or a folder the user may not search (said as "not writable" by the
# nearest folder that can be looked at).
_CANNOT_LOOK = (errno.ENAMETOOLONG, errno.EACCES, errno.EPERM)


def _looked(look: Callable[[], bool]) -> bool:
    """look() (a Path's exists or is_dir), False where the OS will not look
    (_CANNOT_LOOK)."""
    try:
        return look()
    except OSError as e:
        if e.errno not in _CANNOT_LOOK:
            raise
        return False


def _exists(p: Path) -> bool:
    return _looked(p.exists)


def _is_dir(p: Path) -> bool:
    return _looked(p.is_dir)


def _special(p: Path) -> bool:
    """p is there and is neither a file nor a folder: a device or a pipe, written through
    (atomic_open), never replaced by a file."""
    return _exists(p) and not p.is_file() and not _is_dir(p)


def _too_long(p: Path) -> str | None:
    """The OS's words (File name too long) where p, or a part of it, is longer than the
    OS takes; else None."""
    try:
        os.lstat(p)
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return os.strerror(e.errno)
    return None


def file_path_error(path: str | os.PathLike[str]) -> str | None:
    """Why a file could not be written at `path`, said before long work that ends by
    writing it, or None: a folder in its place, a file where a folder must be, or a
    nearest existing folder that cannot take files (atomic_open makes the missing ones)."""
    p = Path(path).expanduser()
    if why := _too_long(p):  # (said now, not after a game: a review)
        return why
    if _is_dir(p):
        return "it is a folder"
    if _special(p):
        return None if os.access(p, os.W_OK) else f"{str(p)!r} is not writable"
    up = _nearest_existing(p.absolute())  # it must take files
    if up is None:
        return None
    if not _is_dir(up):
        return f"{str(up)!r} is a file, not a folder"
    return None if os.access(up, os.W_OK | os.X_OK) else f"{str(up)!r} is not writable"


def missing_folder(path: str | os.PathLike[str]) -> str | None:
    """Why a file the user named cannot go to `path` when its folder is missing, or None:
    the folders of an output a person names are not made on the way (a mistyped folder
    would otherwise be created without a word)."""
    p = Path(path).expanduser()
    if why := _too_long(p.parent):
        return why
    if _is_dir(p.parent):
        return None
    return write_error(p, FileNotFoundError(2, "its folder does not exist"))


def os_error_text(e: OSError) -> str:
    """An OSError in words for a message: the file it names, if any, then the OS's
    reason (a read or a write alike)."""
    return (f"{e.filename!r}: " if e.filename else "") + (e.strerror or str(e))


def _mode_for(target: Path) -> int:
    """The permission bits the file at target should have after it is (re)written."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)  # read the umask (the call sets it), then put it back
        os.umask(mask)
        return 0o666 & ~mask


def remove_temps(folder: str | os.PathLike[str], name: str = "*") -> int:
    """Remove the temporary files that atomic_open left in `folder`, for files whose names
    match the glob `name`, when a kill -9 stopped a write half way (the target itself is
    whole). Only while holding the lock that keeps other writers of those files out: a
    temporary file of a write in progress would go too. The number removed."""
    removed = 0
    for tmp in Path(folder).glob(f"{name}.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed += 1
    return removed


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write bytes (or UTF-8 text) to path atomically."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


@contextlib.contextmanager
def held_lock(path: Path, busy: str) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (made if need be, removed at the end)
    while the block runs: `busy` is the message of the DoubletError raised when another
    process holds it. The system releases the lock when the process ends, however it ends
    (a kill -9 leaves the file, harmless). Where locks are not available, or the file
    cannot be made (its folder does not exist yet: nothing is there to protect), the
    block runs without one. For work that must not run twice at once on the same files:
    a saved game, a training run."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        yield
        return
    for _ in range(10):  # the file can be removed between our open and our lock: again
        try:
            f = open(path, "a")  # noqa: SIM115 - held for the whole block
        except OSError:
            yield
            return
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise DoubletError(busy) from None
        try:  # the lock counts only on the file the path names now
            if os.fstat(f.fileno()).st_ino == os.stat(path).st_ino:
                break
        except OSError:
            pass
        f.close()
    else:
        raise DoubletError(busy)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # tidy up while the lock is still held
            path.unlink()
        f.close()


__all__ = ["atomic_open", "atomic_write", "held_lock", "os_error_text", "write_error"]
