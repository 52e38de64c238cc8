"""GNU Backgammon as an opponent (benchmarks/vs_gnubg.py), when its module is installed.

- without the module the harness says so and stops cleanly (checked by hiding it);
- our board converted to gnubg's gives gnubg the same Position ID (60 refset cases);
- gnubg's 0- and 1-ply moves for 20 refset cases (10 of them bear-offs, whose moves the
  module cuts short) are legal outcomes and in the refdata's legal list;
- pubeval against gnubg 0-ply plays 4 duplicate games through doublet.games.duplicate_search;
- the search seat of --prune-keep / --prune-all is the search:PLY player with the default
  limits, and plays legal moves without pruning.

The gnubg ones skip when the `gnubg` module is absent (pip install -e '.[gnubg]'); the
first and the last run without it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import vs_gnubg
from doublet.core.board import flip
from doublet.formats.ids import board_from_position_id, position_id
from doublet.rules.movegen import legal_outcomes

DATA = Path(__file__).parent / "data" / "gnubg_refset.jsonl"
needs_gnubg = pytest.mark.skipif(vs_gnubg.gnubg is None, reason=vs_gnubg.MISSING)


def _cases() -> list[dict]:
    with open(DATA) as f:
        return [json.loads(line) for line in f]


def test_without_gnubg_the_harness_says_so(monkeypatch, capsys) -> None:
    monkeypatch.setattr(vs_gnubg, "gnubg", None)
    monkeypatch.setattr("sys.argv", ["vs_gnubg.py", "--games", "2"])
    vs_gnubg.main()
    assert "not installed" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="not installed"):
        vs_gnubg.GnubgChooser(0)


@needs_gnubg
def test_board_conversion_keeps_the_position_id() -> None:
    for c in _cases()[::60]:
        b = board_from_position_id(c["pid"])
        assert vs_gnubg.gnubg.positionid(vs_gnubg.to_gnubg(b)) == c["pid"], c["pid"]


@needs_gnubg
@pytest.mark.parametrize("ply", [0, 1])
def test_gnubg_moves_are_legal_outcomes(ply: int) -> None:
    cases = [c for c in _cases() if c["n_legal"] > 1]
    bearoffs = [c for c in cases if "off" in (c["best"]["0"]["move"] or "")]
    chooser = vs_gnubg.GnubgChooser(ply)
    for c in cases[:10] + bearoffs[:10]:
        b = board_from_position_id(c["pid"])
        after, again = chooser(b, *c["dice"], np.zeros(1, np.uint64))
        outs, _ = legal_outcomes(b, *c["dice"])
        assert (outs == after).all(axis=1).any(), c["case"]
        assert position_id(flip(after)) in c["legal"], c["case"]
        assert not again
    assert chooser.completed >= 10  # every bear-off above was cut short and completed


@needs_gnubg
def test_pubeval_against_gnubg_plays_four_games() -> None:
    from doublet.games.duplicate_search import play_match_with

    factory = functools.partial(vs_gnubg.gnubg_chooser, 0)
    r = play_match_with("pubeval", factory, 4, seed=2)
    assert r.games == 4 and r.errors == 0
    assert (np.abs(r.points) >= 1).all()


def test_search_seat_with_pruning_limits() -> None:
    """--prune-keep / --prune-all / --blend's seat (duplicate_search.player with Limits):
    with the default limits it is the search:PLY player itself; pruning nothing, or
    blending (only its legality here: tests/test_search.py checks the blend's values), its
    plays are legal, and at 0 ply (nothing below the root to prune) the same as the
    default's; the limits go with search seats only."""
    from doublet.core.board import STANDARD
    from doublet.games.duplicate_search import player
    from doublet.search.searcher import Limits

    rng = np.zeros(1, np.uint64)
    cases = _cases()[:40]
    spec = player("search:1", STANDARD)
    same = player("search:1", STANDARD, Limits())
    wide = player("search:1", STANDARD, Limits(prune_keep=0, prune_all=False))
    mixed = player("search:1", STANDARD, Limits(blend=0.75))
    zero = player("search:0", STANDARD)
    zero_wide = player("search:0", STANDARD, Limits(ply=3, prune_keep=0, prune_all=False))
    for c in cases:
        b = board_from_position_id(c["pid"])
        d1, d2 = c["dice"]
        assert np.array_equal(same(b, d1, d2, rng)[0], spec(b, d1, d2, rng)[0])
        after = wide(b, d1, d2, rng)[0]
        outs, _ = legal_outcomes(b, d1, d2)
        assert (outs == after).all(axis=1).any(), c["case"]
        assert (outs == mixed(b, d1, d2, rng)[0]).all(axis=1).any(), c["case"]
        assert np.array_equal(zero(b, d1, d2, rng)[0], zero_wide(b, d1, d2, rng)[0])
    with pytest.raises(ValueError, match="search:PLY"):
        player("pubeval", STANDARD, Limits(prune_keep=0))


def test_points_saved_and_paired(tmp_path) -> None:
    """--points / --against: the points and the run come back as written, and the paired
    difference is the mean and standard error of the pairs' mean differences."""
    a = np.array([1, -1, 2, 1, -1, -1, 3, 0], np.int64)
    b = np.array([1, 1, -2, 1, 1, -1, 1, 0], np.int64)
    path = tmp_path / "run.npz"
    vs_gnubg.save_points(path, a, {"seed": 3, "games": 8})
    got, run = vs_gnubg.load_points(path)
    assert np.array_equal(got, a) and run == {"seed": 3, "games": 8}
    pairs = [(0 - 2) / 2, (4 + 0) / 2, (-2 + 0) / 2, (2 + 0) / 2]  # a - b, pair by pair
    mean, se = vs_gnubg.paired(a, b)
    assert mean == pytest.approx(np.mean(pairs))
    assert se == pytest.approx(np.std(pairs, ddof=1) / 2)
    with pytest.raises(ValueError, match="cannot be paired"):
        vs_gnubg.paired(a, b[:6])
    (tmp_path / "bad.npz").write_text("not a file of points")
    with pytest.raises(ValueError, match="not a --points file"):
        vs_gnubg.load_points(tmp_path / "bad.npz")
    np.save(tmp_path / "plain.npy", a)  # an array, not a points file
    with pytest.raises(ValueError, match="not a --points file"):
        vs_gnubg.load_points(tmp_path / "plain.npy")
    vs_gnubg.save_points(tmp_path / "short.npz", a[:6], {"seed": 3, "games": 8})
    with pytest.raises(ValueError, match="not a whole --points file"):
        vs_gnubg.load_points(tmp_path / "short.npz")
    assert np.isnan(vs_gnubg.paired(a[:2], b[:2])[1])  # one pair: no standard error


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--seed", "4"], "pair it with a run of the same"),
        (["--gnubg-ply", "1"], "pair it with a run of the same"),
        (["--points", "."], "cannot write there: it is a folder"),
    ],
)
def test_points_options_refuse_before_the_games(tmp_path, monkeypatch, capsys, extra,
                                                message) -> None:  # fmt: skip
    """--against a run of another seed or gnubg ply, or --points to a folder: a clear
    error before any game (and without gnubg)."""
    base = tmp_path / "base.npz"
    vs_gnubg.save_points(base, np.zeros(8, np.int64), {"seed": 3, "games": 8, "gnubg_ply": 0})
    monkeypatch.setattr(vs_gnubg, "gnubg", None)
    monkeypatch.chdir(tmp_path)
    argv = ["vs_gnubg.py", "--games", "8", "--seed", "3", "--against", str(base), *extra]
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as e:
        vs_gnubg.main()
    assert e.value.code == 2 and message in capsys.readouterr().err
