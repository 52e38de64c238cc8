"""doublet.core.jit: the numba cache lives under $DOUBLET_CACHE_DIR in a folder named
after a hash of the kernel sources and numba's version, which changes with any kernel
file; folders unused for a day are removed, the current one never; announce_compile
says so only when a kernel is not cached yet."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numba

from doublet.core import jit


def test_the_key_changes_with_any_kernel_file(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    sources = jit.kernel_sources()
    assert sources and all(b"njit" in p.read_bytes() for p in sources)
    before = jit._source_hash()
    victim = sources[0]
    text = victim.read_bytes()
    real_read = Path.read_bytes

    def edited(self: Path) -> bytes:
        return real_read(self) + b"\n# edited" if self == victim else real_read(self)

    monkeypatch.setattr(Path, "read_bytes", edited)
    assert jit._source_hash() != before
    monkeypatch.setattr(Path, "read_bytes", real_read)
    assert jit._source_hash() == before and victim.read_bytes() == text


def test_the_cache_folder_and_its_clean_up(tmp_path: Path) -> None:
    old = tmp_path / "numba-0123456789abcdef"
    old.mkdir()
    stale = time.time() - 2 * 24 * 3600
    os.utime(old, (stale, stale))
    code = "from doublet.core.jit import NUMBA_CACHE; print(NUMBA_CACHE)"
    env = {**os.environ, "DOUBLET_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip())
    assert path.parent == tmp_path and path.name == f"numba-{jit._source_hash()}"
    assert path.is_dir() and not old.exists()


def test_announce_compile_only_when_not_cached(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(jit, "_said", False)
    jit.announce_compile("no_such_module.no_such_kernel")
    assert "compiling the numba kernels (first run only" in capsys.readouterr().err
    # Some cached, one not (an evaluation's kernel after a first analysis of a roll,
    # which compiled unannounced for 12 s): said too, as what it is.
    monkeypatch.setattr(jit, "is_cached", lambda module, kernel: module != "searcher")
    monkeypatch.setattr(jit, "_said", False)
    jit.announce_compile("movegen._outcomes", "searcher._vn_entry")
    assert "compiling 1 more numba kernel this command needs" in capsys.readouterr().err
    monkeypatch.setattr(jit, "is_cached", lambda module, kernel: True)
    monkeypatch.setattr(jit, "_said", False)
    jit.announce_compile("movegen._outcomes", "searcher._vn_entry")
    assert capsys.readouterr().err == ""


def test_a_kernel_compiled_later_is_said_once(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A command's kernels that its announce_compile did not name (doublet play's
    evaluation, a review's cube) are said when numba starts compiling them, once a
    process; kernels found in the cache, and other packages' kernels, say nothing."""
    monkeypatch.setattr(jit, "_said", False)
    monkeypatch.setattr(jit, "is_cached", lambda module, kernel: True)
    jit.announce_compile("movegen._outcomes")
    assert capsys.readouterr().err == ""

    def fresh(name: str, module: str) -> Any:
        def kernel(x: int) -> int:
            return x + 1

        kernel.__module__, kernel.__qualname__ = module, name
        return numba.njit(cache=False)(kernel)

    fresh("theirs", "not_doublet.kernels")(1)  # another package's: nothing
    assert capsys.readouterr().err == ""
    first = fresh("first", "doublet.rules.fake")
    assert first(1) == 2
    assert "compiling numba kernels this command needs (once" in capsys.readouterr().err
    assert first(2) == 3  # compiled: nothing more
    assert fresh("second", "doublet.rules.fake")(1) == 2  # once a process
    assert capsys.readouterr().err == ""


def test_is_cached_counts_only_this_copys_kernels(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """numba files each source folder's kernels under a subfolder named from its path:
    another checkout of the same sources shares the cache folder (its name comes from
    the sources) but not the subfolder, and its kernels are no sign of this copy's (a
    fresh clone's first run said "compiling ... this command needs", not "first run")."""
    from numba.core.caching import _CacheLocator

    monkeypatch.setattr(jit, "NUMBA_CACHE", tmp_path)
    (src,) = [f for f in jit.kernel_sources() if f.stem == "searcher"]
    other = tmp_path / _CacheLocator.get_suitable_cache_subpath("/elsewhere/search/searcher.py")
    other.mkdir()
    (other / "searcher._analyse_root_entry-600.py311.nbi").write_bytes(b"")
    assert not jit.is_cached("searcher", "_analyse_root_entry")
    mine = tmp_path / _CacheLocator.get_suitable_cache_subpath(str(src))
    mine.mkdir()
    (mine / "searcher._analyse_root_entry-600.py311.nbi").write_bytes(b"")
    assert jit.is_cached("searcher", "_analyse_root_entry")
    assert not jit.is_cached("searcher", "_vn_entry")
