"""The long training commands' progress (doublet.training.progress): where stderr is no
terminal (a log file, a pipe, a recipe under nohup) each prints plain lines through its
own log, 'NAME: what: done / total units (%), seconds[, note]', and on a terminal a tqdm
bar as before, with the same descriptions:

- distill data: its chunks (and a resumed run counts from the chunks it has);
- onesided fit: the self-play games, the configs' successors, the rounds (with each
  round's loss and mean turns);
- prune: the self-play games, then each epoch's minibatches (with the mean squared error).

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


def test_onesided_fit_shows_progress_lines_where_stderr_is_no_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        every_update: None) -> None:  # fmt: skip
    """onesided fit drew three tqdm bars (self-play, successors, rounds) whatever stderr
    was. Now each stage's lines, named, here; its bars still on a terminal."""
    pytest.importorskip("torch")
    from doublet.training import onesided

    out = tmp_path / "os.npz"
    argv = ["fit", "--out", str(out), "--games", "3", "--configs", "5", "--hidden", "8",
            "--epochs", "1"]  # fmt: skip
    assert onesided.main([*argv, "--rounds", "2"]) == 0
    err = capsys.readouterr().err
    heads = [line.split(", ")[0] for line in err.splitlines()]
    assert heads[:3] == [f"onesided: self-play: {k} / 3 games ({100 * k // 3}%)"
                         for k in (1, 2, 3)], err  # fmt: skip
    assert [h for h in heads if h.startswith("onesided: successors: ")] == [
        f"onesided: successors: {k} / 5 configs ({100 * k // 5}%)" for k in range(1, 6)
    ], err
    rounds = [line for line in err.splitlines() if line.startswith("onesided: rounds: ")]
    assert [line.split(", ")[0] for line in rounds] == [
        "onesided: rounds: 1 / 2 rounds (50%)",
        "onesided: rounds: 2 / 2 rounds (100%)",
    ], err
    assert all(", loss " in line and ", turns " in line for line in rounds) and "\r" not in err
    _terminal(monkeypatch)
    assert onesided.main([*argv, "--rounds", "3", "--resume"]) == 0
    err = capsys.readouterr().err
    for what in ("self-play", "successors", "rounds: 100%"):
        assert what in err, err
    assert "3/3" in err and "\r" in err and "onesided: " not in err


def test_prune_shows_progress_lines_where_stderr_is_no_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        every_update: None) -> None:  # fmt: skip
    """prune drew tqdm bars (self-play positions, each epoch's minibatches) whatever
    stderr was. Now lines here, each epoch named; its bars still on a terminal."""
    pytest.importorskip("torch")
    from doublet.training import prune

    argv = [MODEL, "--out", str(tmp_path / "pruned.npz"), "--games", "2", "--epochs", "2",
            "--hidden", "4"]  # fmt: skip
    assert prune.main(argv) == 0
    err = capsys.readouterr().err
    heads = [line.split(", ")[0] for line in err.splitlines() if line.startswith("prune: ")]
    assert heads[:2] == ["prune: self-play positions: 1 / 2 games (50%)",
                         "prune: self-play positions: 2 / 2 games (100%)"], err  # fmt: skip
    for epoch in ("1/2", "2/2"):
        lines = [line for line in err.splitlines() if line.startswith(f"prune: epoch {epoch}: ")]
        n = len(lines)
        assert n >= 1 and lines[-1].startswith(f"prune: epoch {epoch}: {n} / {n} batches (100%)")
        assert all(", mse " in line for line in lines), err
    assert "\r" not in err
    _terminal(monkeypatch)
    assert prune.main(argv) == 0
    err = capsys.readouterr().err
    assert "self-play positions" in err and "epoch 2/2" in err and "\r" in err, err
    assert "prune: " not in err
