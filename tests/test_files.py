"""doublet.core.files: atomic writes replace a file whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from doublet.core.files import atomic_open, atomic_write


def test_atomic_write_replaces_whole_files(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "doc.json"
    atomic_write(path, "first\n")
    assert path.read_text() == "first\n"
    atomic_write(path, b"second")
    assert path.read_bytes() == b"second"
    assert [p.name for p in path.parent.iterdir()] == ["doc.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write(b"half of the new")
        raise RuntimeError("interrupted")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]
    with pytest.raises(ValueError, match="whole files"), atomic_open(path, "ab"):
        pass


def test_a_new_file_gets_plain_permissions_and_a_rewrite_keeps_them(tmp_path: Path) -> None:
    """Not the 0o600 of a temporary file: a new file gets 0o666 less the umask, and a
    file written again keeps the permissions it had."""
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.txt", "x")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
    (tmp_path / "kept.bin").write_bytes(b"old")
    os.chmod(tmp_path / "kept.bin", 0o604)
    atomic_write(tmp_path / "kept.bin", b"new")
    assert (tmp_path / "kept.bin").stat().st_mode & 0o777 == 0o604
    assert (tmp_path / "kept.bin").read_bytes() == b"new"


def test_write_error_names_the_file_in_the_way(tmp_path: Path) -> None:
    """A file where a folder must be reads "File exists" in the OS's words; write_error
    says which file (session 23: export and serve --data said "File exists")."""
    from doublet.core.files import write_error

    f = tmp_path / "notes.txt"
    f.write_text("x")
    with pytest.raises(OSError) as e:
        atomic_write(f / "x.mat", "y")
    assert write_error(f / "x.mat", e.value) == f"{str(f)!r} is a file, not a folder"
    with pytest.raises(OSError) as e:
        (f / "sub").mkdir(parents=True, exist_ok=True)
    assert write_error(f, e.value, folder=True) == "it is a file, not a folder"
    assert write_error(tmp_path, OSError(21, "Is a directory")) == "it is a folder"
    assert write_error(tmp_path / "a.txt", OSError(28, "No space left on device")) == (
        "No space left on device")  # fmt: skip


def test_file_path_error_says_why_before_the_work(tmp_path: Path, monkeypatch) -> None:
    """file_path_error: None where atomic_open can write (missing folders are made),
    else what is in the way, in words."""
    import doublet.core.files as files

    assert files.file_path_error(tmp_path / "new.html") is None
    assert files.file_path_error(tmp_path / "a" / "b" / "new.html") is None  # made later
    assert files.file_path_error(tmp_path) == "it is a folder"
    (tmp_path / "notes.txt").write_text("x")
    assert files.file_path_error(tmp_path / "notes.txt") is None  # replaced whole
    assert files.file_path_error(tmp_path / "notes.txt" / "x" / "r.html") == (
        f"{str(tmp_path / 'notes.txt')!r} is a file, not a folder")  # fmt: skip
    # a folder that takes no files (root's tests write anywhere, so the OS is asked by a
    # stand-in that refuses this one folder)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(files.os, "access", lambda p, m: Path(p) != locked and real(p, m))
    assert files.file_path_error(locked / "r.html") == f"{str(locked)!r} is not writable"
    assert files.file_path_error(locked / "sub" / "r.html") == f"{str(locked)!r} is not writable"
    assert files.file_path_error(tmp_path / "r.html") is None
    # a pipe in a folder that takes no files: written through, so only its own access
    pipe = locked / "pipe"
    os.mkfifo(pipe)
    assert files.file_path_error(pipe) is None
    assert files.file_path_error("/dev/null") is None  # (its folder, /dev, is root's)


def test_a_pipe_is_written_through_not_replaced(tmp_path: Path) -> None:
    """(a review) `--html FIFO` (or /dev/null, as root) replaced the pipe or the device
    by a regular file, and the reader got nothing."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, b"<html>page</html>")
    reader.join(10)
    assert got == [b"<html>page</html>"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary left


def test_a_name_too_long_for_the_os_is_said_not_raised(tmp_path: Path) -> None:
    """(a review) `export` to a 300-character name ended the session: the message about
    the failed write asked is_dir() of the name, and that raised ENAMETOOLONG itself."""
    import doublet.core.files as files

    long = tmp_path / ("a" * 300 + ".mat")
    assert files.missing_folder(long) is None  # its folder is there
    assert files.file_path_error(long) == "File name too long"  # said before the work
    with pytest.raises(OSError) as e:
        atomic_write(long, "x")
    assert files.write_error(long, e.value) == "File name too long"
    assert files.missing_folder(tmp_path / ("b" * 300) / "x.txt") == "File name too long"


def test_a_folder_that_may_not_be_searched_is_said_not_raised(tmp_path: Path,
                                                              monkeypatch) -> None:  # fmt: skip
    """(a diff review) A folder without search permission made is_dir() raise
    PermissionError: an internal error where "not writable" was said before."""
    import errno as errno_

    import doublet.core.files as files

    locked = tmp_path / "locked"
    locked.mkdir()
    real_is_dir, real_exists = Path.is_dir, Path.exists

    def refused(real):  # type: ignore[no-untyped-def]
        def look(self: Path) -> bool:
            if locked in self.parents:
                raise PermissionError(errno_.EACCES, "Permission denied", str(self))
            return bool(real(self))

        return look

    monkeypatch.setattr(Path, "is_dir", refused(real_is_dir))
    monkeypatch.setattr(Path, "exists", refused(real_exists))
    real_access = os.access
    monkeypatch.setattr(files.os, "access", lambda p, m: Path(p) != locked and real_access(p, m))
    assert files.file_path_error(locked / "x.txt") == f"{str(locked)!r} is not writable"
    assert files.missing_folder(locked / "sub" / "x.txt") is not None
    assert files.write_error(locked / "x.txt", PermissionError(13, "Permission denied")) == (
        "Permission denied")  # fmt: skip
