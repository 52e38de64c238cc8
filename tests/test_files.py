"""engine.files: atomic writes replace a file whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.files import atomic_open, atomic_write


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
