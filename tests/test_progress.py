"""The long training commands' progress (doublet.training.progress): where stderr is no
terminal (a log file, a pipe, a recipe under nohup) each prints plain lines through its
own log, 'NAME: what: done / total units (%), seconds[, note]', and on a terminal a tqdm
bar as before, with the same descriptions:

- distill data: its chunks (and a resumed run counts from the chunks it has).

PROGRESS_EVERY is 0 here: a line at every update, so tiny runs show them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from doublet.training import distill, progress

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "models" / "doublet-standard.npz")


@pytest.fixture
def every_update(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "PROGRESS_EVERY", 0.0)


def _terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr (pytest's capture) said to be a terminal: Progress draws its tqdm bar."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


def test_distill_data_shows_progress_lines_where_stderr_is_no_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        every_update: None) -> None:  # fmt: skip
    """distill data drew a tqdm bar whatever stderr was: a log file got a smear of
    carriage returns. Now a line a chunk here, and a bar still on a terminal."""
    argv = ["data", "--model", MODEL, "--out", str(tmp_path / "d"), "--ply", "0",
            "--workers", "1"]  # fmt: skip
    assert distill.main([*argv, "--chunks", "2"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("distill: ")]
    assert [line.split(", ")[0] for line in lines] == [
        "distill: 0-ply targets: 1 / 2 chunks (50%)",
        "distill: 0-ply targets: 2 / 2 chunks (100%)",
    ], err
    assert all(line.endswith(" positions/s") for line in lines) and "\r" not in err
    _terminal(monkeypatch)
    assert distill.main([*argv, "--chunks", "3"]) == 0  # one chunk more: a bar from 2
    err = capsys.readouterr().err
    assert "0-ply targets: 100%" in err and "3/3" in err and "\r" in err, err
    assert "distill: " not in err
