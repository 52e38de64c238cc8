"""The package's layering (docs/architecture.md): every module of doublet and
doublet.training, read with ast (imports at the top and inside functions alike), imports
only from its own layer or those below it; nothing imports the old top-level names
`engine` or `training`; each sub-package's docstring says what it owns; torch stays out of
the engine; and the numba cache key covers every kernel file of the tree."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Lowest first. A module may import its own layer and every layer before it.
LAYERS = ["core", "rules", "formats", "nn", "cube", "search", "games", "training", "apps"]
FOLDERS = {name: ROOT / "engine" / name for name in LAYERS if name != "training"}
FOLDERS["training"] = ROOT / "training"


def _modules() -> list[tuple[str, Path]]:
    out = []
    for layer, folder in FOLDERS.items():
        for f in sorted(folder.rglob("*.py")):
            out.append((layer, f))
    return out


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: use absolute doublet.* imports")
            mod = node.module or ""
            if mod == "doublet":  # from doublet import x: x is a sub-package
                found += [(node.lineno, f"doublet.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, mod))
    return found


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "doublet" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def test_every_module_belongs_to_a_layer() -> None:
    top = sorted(p.name for p in (ROOT / "engine").glob("*.py"))
    assert top == ["__init__.py", "__main__.py"], "engine/ holds sub-packages only"
    for folder in (ROOT / "engine").iterdir():
        if folder.is_dir() and (folder / "__init__.py").exists():
            assert folder.name in LAYERS, f"engine/{folder.name} is in no layer"


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_says_what_it_owns_and_may_import(layer: str) -> None:
    doc = ast.get_docstring(ast.parse((FOLDERS[layer] / "__init__.py").read_text()))
    assert doc and len(doc) > 80, f"{layer}/__init__.py needs a docstring"
    assert "import" in doc, f"{layer}/__init__.py must say what it may import"


def test_no_upward_import() -> None:
    bad = []
    for layer, path in _modules():
        rank = LAYERS.index(layer)
        for line, mod in _imports(path):
            if mod.split(".")[0] in ("engine", "training"):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {mod} (import doublet.*)")
                continue
            target = _layer_of(mod)
            if target is not None and LAYERS.index(target) > rank:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {layer} imports {mod} ({target})")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_tests_and_benchmarks_use_the_package_name() -> None:
    bad = []
    for folder in ("tests", "benchmarks"):
        for path in sorted((ROOT / folder).glob("*.py")):
            if path.name == "signature.py":  # it also reads older commits' layout, on purpose
                continue
            for line, mod in _imports(path):
                if mod.split(".")[0] in ("engine", "training"):
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {mod}")
    assert not bad, "\n".join(bad)


def test_the_engine_runs_without_torch() -> None:
    """Importing every engine module (training aside) loads neither torch nor training."""
    mods = sorted(
        "doublet." + ".".join(p.relative_to(ROOT / "engine").with_suffix("").parts)
        for layer, p in _modules()
        if layer != "training" and p.name not in ("__init__.py", "__main__.py")
    )
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'"
        " or m.startswith('doublet.training')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_the_numba_cache_key_covers_every_kernel_file() -> None:
    from doublet.core.jit import kernel_sources

    covered = {p.resolve() for p in kernel_sources()}
    for _, path in _modules():
        if b"njit" in path.read_bytes():
            assert path.resolve() in covered, f"{path} holds kernels but is not in the key"
    assert any(p.parent.name == "search" for p in covered)
    assert any(p.parent.name == "training" for p in covered)
