"""Self-play matches with noise (benchmarks/selfplay_matches.py, tests/data/selfplay/):
each match's .mat and .sgf read back (doublet.formats.matfile.read_match) to the same
match, replayed through the rules to the score and winner that meta.json records (the
Crawford game included); GNU Backgammon 1.07 imports both files with the same winners and
points; the tool, rerun, writes the first match again byte for byte (a golden file: a
change in the engine's play shows here; regenerate with the command in meta.json); and
the noisy engine of doublet.games.opponent is the engine itself without noise."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from doublet.core.errors import GameError
from doublet.formats.matfile import MatMatch, ReplayedGame, read_match
from doublet.games.game import Series
from doublet.games.opponent import engine_answer, engine_doubles, engine_play
from tests.helpers import DATA, GNUBG, gnubg_results

ROOT = Path(__file__).resolve().parent.parent
SELFPLAY = DATA / "selfplay"
META = json.loads((SELFPLAY / "meta.json").read_text())
MATCHES = META["matches"]


def _entries(m: MatMatch) -> Any:
    return (m.length, m.tags, [(g.number, g.names, g.score,
                                [(a.number, a.player, a.kind, a.dice, a.play, a.value)
                                 for a in g.actions]) for g in m.games])  # fmt: skip


def _results(games: list[ReplayedGame]) -> Any:
    return [(g.score, g.winner, g.points, g.crawford, [(mv.player, mv.dice, mv.play)
             for mv in g.moves], [(a.player, a.kind, a.value) for a in g.cube_actions])
            for g in games]  # fmt: skip


@pytest.mark.parametrize("meta", MATCHES, ids=lambda x: x["file"])
def test_a_selfplay_match_reads_back_from_both_files_and_replays_to_its_score(meta) -> None:  # type: ignore[no-untyped-def]
    mat, mat_games = read_match((SELFPLAY / f"{meta['file']}.mat").read_text())
    sgf, sgf_games = read_match((SELFPLAY / f"{meta['file']}.sgf").read_text())
    assert _entries(sgf) == _entries(mat)
    assert _results(sgf_games) == _results(mat_games)
    assert mat.length == meta["length"] and list(mat.names) == meta["names"]
    score = [0, 0]
    for g in mat_games:
        assert list(g.score) == score
        score[g.winner] += g.points
    assert score == meta["score"] and len(mat_games) == meta["games"]
    assert mat.names[score.index(max(score))] == meta["winner"] and max(score) >= mat.length
    # The Crawford game: the first game at which exactly one side needs a point.
    at = [g.number for g in mat_games if g.crawford]
    one_away = [g.number for g in mat_games if [mat.length - x for x in g.score].count(1) == 1]
    assert at == one_away[:1]


@pytest.mark.skipif(not GNUBG.exists(), reason="GNU Backgammon 1.07 is not installed (apt-get "
                    "install gnubg)")  # fmt: skip
def test_gnu_backgammon_imports_the_selfplay_matches_with_the_same_results(tmp_path: Path) -> None:
    paths = [SELFPLAY / f"{x['file']}{ext}" for x in MATCHES for ext in (".mat", ".sgf")]
    want = []
    for p in paths:
        _, games = read_match(p.read_text())
        want.append([["X" if g.winner == 0 else "O", g.points] for g in games])
    assert gnubg_results(paths, tmp_path) == want


def test_the_tool_writes_the_first_match_again(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import selfplay_matches
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    first = MATCHES[0]
    pair = ":".join(f"{x:g}" for x in first["noise"])
    args = ["--out", str(tmp_path), "--length", str(first["length"]), "--ply",
            str(first["ply"]), "--pairs", pair, "--seed", str(first["seed"])]  # fmt: skip
    assert selfplay_matches.main(args) == 0
    for ext in (".mat", ".sgf"):
        name = first["file"] + ext
        assert (tmp_path / name).read_text() == (SELFPLAY / name).read_text(), (
            f"the engine plays differently now; rerun {META['command']}"
        )


def test_no_noise_is_the_engine_itself_and_noise_needs_a_generator() -> None:
    rng = np.random.default_rng(0)
    s = Series.new("standard", seed=4, length=5, cube=True)
    g = s.game
    for _ in range(30):  # both players: the same plays with noise 0 as without
        if g.over:
            break
        if g.phase == "roll":
            assert engine_doubles(g, 0) == engine_doubles(g, 0, noise=0.0, rng=rng)
            g.roll()
        plain = engine_play(g, 0)
        assert engine_play(g, 0, noise=0.0, rng=rng).board.tobytes() == plain.board.tobytes()
        g.play(plain)
    with pytest.raises(GameError, match="random generator"):
        engine_play(Series.new("standard", seed=1).game, 0, noise=0.1)


def test_much_noise_plays_and_answers_at_random() -> None:
    # With noise far above the equities' differences the choice is nearly uniform.
    s = Series.new("standard", seed=2, length=5, cube=True)
    g = s.game
    rng = np.random.default_rng(1)
    plays = {engine_play(g, 0, noise=100.0, rng=rng).notation for _ in range(40)}
    assert len(plays) > 5
    g.play(engine_play(g, 0))
    g.double()
    answers = {engine_answer(g, 0, noise=100.0, rng=rng) for _ in range(40)}
    assert answers == {"take", "pass"}


def test_nobody_doubles_a_dead_cube_however_noisy() -> None:
    """In a match, a cube at least as large as both away scores is dead (whoever wins the
    game wins the match): even a very noisy player does not redouble it (the
    regenerated self-play match 03 once went to a cube of 32768 in a 5-point match)."""
    s = Series.new("standard", seed=2, length=5, cube=True)
    g = s.game
    rng = np.random.default_rng(1)
    g.play(engine_play(g, 0))
    assert {engine_doubles(g, 0, noise=100.0, rng=rng) for _ in range(40)} == {True, False}
    for _ in range(3):  # 2, 4, 8: past 5 away for both
        g.double()
        g.take()
        g.play(engine_play(g, 0))
    state = g.cube_state()
    assert state is not None and state.value == 8
    assert not any(engine_doubles(g, 0, noise=100.0, rng=rng) for _ in range(40))
