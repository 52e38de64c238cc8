"""The match review's machinery (doublet.games.review): the Analyst's cache (an
interrupted review continues from it, a line cut short by a kill is skipped, another
model or ply never reads it), two worker processes giving what one gives, the luck of a
roll checked against its definition through analyse_roll, the verdict counts, and each
listed error's XGID read back to its position and cube state."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from doublet.core.dice import ROLL_WEIGHTS, ROLLS_21
from doublet.cube.state import CubeState
from doublet.formats.ids import parse_position
from doublet.formats.matfile import read_match
from doublet.formats.position import Position
from doublet.games.review import VERDICTS, Analyst, review, verdict
from doublet.nn.eval import random_model
from doublet.search.analysis import analyse_roll, luck

MATCH = Path(__file__).parent / "data" / "matches" / "match01.mat"


@pytest.fixture(scope="module")
def match01() -> tuple:
    return read_match(MATCH.read_text())


def test_an_interrupted_review_continues_from_its_cache(tmp_path: Path, match01: tuple) -> None:
    match, games = match01
    first = review(match, games[:2], ply=0, cache=tmp_path)
    files = list(tmp_path.glob("review2-*-standard-0ply-*.jsonl"))
    assert len(files) == 1
    lines = files[0].read_text().splitlines()
    # A kill in the middle of writing leaves half a line: it is skipped, the rest read.
    files[0].write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    a = Analyst(0, cache=tmp_path)
    assert len(a.memo) == len(lines) - 1
    again = review(match, games[:2], ply=0, cache=tmp_path)
    assert again == first
    b = Analyst(0, cache=tmp_path)
    assert len(b.memo) == len(lines)  # the lost line was computed again and kept
    assert not Analyst(1, cache=tmp_path).memo  # another depth: its own files
    assert not Analyst(0, random_model(8), cache=tmp_path).memo  # another model too


def test_two_workers_give_what_one_gives(match01: tuple) -> None:
    match, games = match01
    assert review(match, games, ply=0, workers=2) == review(match, games, ply=0, workers=1)


def test_the_luck_of_a_roll_is_its_best_play_less_the_mean_over_the_36_rolls() -> None:
    pos = Position.from_id("sDP4AEPbuIRBBA")  # from match01
    state = CubeState.match(5, away=(3, 5), value=1)

    def best(d: tuple[int, int]) -> float:
        return analyse_roll(pos, *d, ply=0, state=state)["plays"][0]["equity"]

    mean = sum(w * best(tuple(r)) for w, r in zip(ROLL_WEIGHTS, ROLLS_21, strict=True))
    for d in [(6, 5), (1, 2), (4, 4)]:
        assert luck(pos, d, state) == pytest.approx(best(d) - mean, abs=2e-6)
    total = sum(w * luck(pos, tuple(r), state) for w, r in zip(ROLL_WEIGHTS, ROLLS_21, strict=True))
    assert abs(total) < 1e-9


def test_verdict_counts_and_luck_in_the_figures(match01: tuple) -> None:
    match, games = match01
    doc = review(match, games, ply=0)
    for who, p in enumerate(doc["players"]):
        mine = [e for e in doc["errors"] if e["player"] == who]
        checker = [e for e in mine if e["kind"] == "checker play"]
        assert sum(p["checker_verdicts"].values()) == sum(bool(verdict(e["loss"])) for e in checker)
        assert sum(p["cube_verdicts"].values()) == sum(
            bool(verdict(e["loss"])) for e in mine if e["kind"] != "checker play"
        )
        assert set(p["checker_verdicts"]) == {w for _, w in VERDICTS}
        assert p["rolls"] == sum(len([m for m in g.moves if m.player == who]) for g in games)
        assert p["luck_rate_memg"] == round(1000 * p["luck"] / p["rolls"], 2)
    # gnubg 1.07's own figures for this match (match01.stats.txt): luck +1.373 and
    # +0.544 EMG. Doublet's net gives its own; the luckier player is the same.
    assert doc["players"][0]["luck"] > doc["players"][1]["luck"]


def test_each_listed_error_has_its_xgid(match01: tuple) -> None:
    match, games = match01
    doc = review(match, games, ply=0)
    assert doc["errors"]
    for e in doc["errors"]:
        board, _, meta = parse_position(e["xgid"])
        same, _, _ = parse_position(e["position_id"])
        assert np.array_equal(board, same)
        state = CubeState.from_meta(meta)
        assert state.length == 5 and sum(state.away) <= 10
        if e["kind"] == "checker play":
            assert list(meta["roll"]) == sorted(e["dice"], reverse=True) or list(
                meta["roll"]
            ) == list(e["dice"])


HANDMADE = Path(__file__).parent / "data" / "handmade"


def test_a_money_sessions_jacoby_and_beavers_are_the_reviews_rules() -> None:
    """money_session.mat has Jacoby and beavers on: each cube decision is judged under
    them (its XGID says so), as the server's review of the same file judges it."""
    match, games = read_match((HANDMADE / "money_session.mat").read_text())
    doc = review(match, games, ply=0)
    for e in doc["errors"]:
        state = CubeState.from_meta(parse_position(e["xgid"])[2])
        assert state.jacoby and state.beavers, e
        if e["kind"] != "checker play":
            cube = Analyst(0).cube(Position(parse_position(e["xgid"])[0]), state)
            assert cube["state"]["jacoby"] is True
    without = CubeState.money(jacoby=False, beavers=True)
    double = next(e for e in doc["errors"] if (e["game"], e["move"], e["player"]) == (2, 3, 0))
    pos = Position(parse_position(double["xgid"])[0])
    plain = Analyst(0).cube(pos, without)["equities"]
    assert double["loss"] != pytest.approx(plain["no_double"] - plain["double_take"], abs=1e-4)


def test_a_roll_that_ties_with_the_double_is_no_error() -> None:
    """No double = double / pass (a sure win either way): gnubg's "Double, pass", but
    rolling on loses nothing, so the review lists no missed double there."""
    match, games = read_match((HANDMADE / "crawford_match.mat").read_text())
    doc = review(match, games, ply=0)
    assert all(e["loss"] > 0 for e in doc["errors"])


def test_the_review_cache_key_covers_what_the_answers_depend_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A review cache made by one engine is never read by another: the key changes with
    the main nets, the pruning net, the one-sided race net and the engine's code (a mended
    formula changes the answers with the same weights)."""
    from dataclasses import replace

    from doublet.games import review as R

    m = random_model(8, seed=3)
    base = R.model_fingerprint(m, 0)
    assert R.model_fingerprint(random_model(8, seed=4), 0) != base
    prune = tuple(np.ones_like(a) for a in (np.zeros((198, 4), np.float32),
                                             np.zeros(4, np.float32),
                                             np.zeros((4, 1), np.float32),
                                             np.zeros(1, np.float32)))  # fmt: skip
    assert R.model_fingerprint(replace(m, prune=prune), 0) != base
    shipped = R.onesided.shipped()
    other = tuple(a + 1 for a in shipped)
    monkeypatch.setattr(R.onesided, "shipped", lambda: other)
    assert R.model_fingerprint(m, 0) != base
    monkeypatch.setattr(R.onesided, "shipped", lambda: shipped)
    assert R.model_fingerprint(m, 0) == base
    monkeypatch.setattr(R, "_code_hash", lambda: "another engine")
    assert R.model_fingerprint(m, 0) != base


@pytest.mark.parametrize("n", range(4))
def test_the_cube_decisions_counted_are_gnubgs(n: int) -> None:
    """Each player's cube decisions (every roll with access to the cube, and every double,
    take and pass) number what GNU Backgammon 1.07 counted in the same match (its
    "Total cube decisions", matchNN.stats.txt): none before a game's first roll (the
    opening throw) and none with a dead cube (the mover's away no more than the cube's
    value: the leader after the Crawford game, say). Before session 41 the opening rolls
    were counted, one too many a game for its opener, and match03's dead cubes: 26
    against 10."""
    d = Path(__file__).parent / "data" / "matches" / f"match0{n}"
    match, games = read_match(d.with_suffix(".mat").read_text())
    doc = review(match, games, ply=0)
    stats = (Path(str(d) + ".stats.txt")).read_text()
    found = re.search(r"Total cube decisions\s+(\d+)\s+(\d+)", stats)
    assert found is not None
    assert [p["cube_decisions"] for p in doc["players"]] == [int(x) for x in found.groups()]
    first = {(g.number, g.moves[0].number, g.moves[0].player) for g in games}
    assert not [e for e in doc["errors"] if e["kind"] == "missed double"
                and (e["game"], e["move"], e["player"]) in first]  # fmt: skip


def test_a_damaged_cache_is_computed_again(tmp_path: Path, match01: tuple) -> None:
    """Lines of a review cache that are not whole answers (bytes that are not UTF-8, JSON
    of another shape: an edited or damaged file) are skipped and counted, and the review
    computes their answers again: the same review as without a cache."""
    match, games = match01
    first = review(match, games[:1], ply=0, cache=tmp_path)
    (f,) = tmp_path.glob("review2-*.jsonl")
    lines = f.read_bytes().splitlines(keepends=True)
    key = json.loads(lines[0])[0]
    bad = [b"\xff\xfe[1, 2]\n", json.dumps([key, {"bogus": 1}]).encode() + b"\n",
           b"[[1], 2]\n", json.dumps([key, None]).encode() + b"\n"]  # fmt: skip
    # Found by a review (session 43): a roll's plays edited into other valid JSON (cut to
    # one: the play then counted as forced) was taken; its check no longer matches.
    k = next(i for i, ln in enumerate(lines) if json.loads(ln)[0].startswith('["roll", '))
    rkey, value, check = json.loads(lines[k])
    value["plays"] = value["plays"][:1]
    bad.append(json.dumps([rkey, value, check]).encode() + b"\n")
    lines = [ln for i, ln in enumerate(lines) if i != k]
    f.write_bytes(b"".join(bad) + b"".join(lines[1:]))
    a = Analyst(0, cache=tmp_path)
    assert a.skipped == len(bad) and len(a.memo) == len(lines) - 1
    told: list[int] = []
    assert review(match, games[:1], ply=0, cache=tmp_path, damaged=told.append) == first
    assert told == [len(bad)]  # said once, the count of damaged lines


def test_the_review_cache_is_kept_within_its_limit(
    tmp_path: Path, match01: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a review (session 43): the cache grew without a bound, every file read at
    each review's start. Past CACHE_LIMIT the files used longest ago go, never one used
    within RECENT (a review running or just stopped), never a file that is not the
    cache's own; a big file about to be written to is put aside first; the review is
    the same."""
    from doublet.games import review as R

    match, games = match01
    first = review(match, games[:1], ply=0, cache=tmp_path)
    (f,) = tmp_path.glob("review2-*.jsonl")
    size = f.stat().st_size
    old = []
    for k in range(3):  # other reviews' files, used long ago, the oldest first
        o = tmp_path / f"review2-0123456789ab-standard-2ply-w{k}.jsonl"
        o.write_bytes(b"x" * size)
        os.utime(o, (k, k))
        old.append(o)
    mine = [tmp_path / "reviews-of-my-matches.jsonl", tmp_path / "notes.txt"]
    for m in mine:  # the user's own files in the folder (--cache DIR): never touched
        m.write_bytes(b"y" * size)
        os.utime(m, (0, 0))
    monkeypatch.setattr(R, "CACHE_LIMIT", 3 * size)
    a = Analyst(0, cache=tmp_path)  # 4 sizes: the oldest goes
    assert not old[0].exists() and old[1].exists() and old[2].exists()
    assert len(a.memo) > 0 and a.path == f  # its file is under a quarter: written on
    monkeypatch.setattr(R, "CACHE_LIMIT", 2 * size)
    Analyst(0, cache=tmp_path)  # over a quarter: put aside, still read; 3 sizes: one goes
    assert not old[1].exists() and old[2].exists() and not f.exists()
    (aside,) = tmp_path.glob(f"{f.stem}-*.jsonl")
    assert aside.stat().st_size == size
    assert review(match, games[:1], ply=0, cache=tmp_path) == first
    monkeypatch.setattr(R, "CACHE_LIMIT", 1)
    Analyst(0, cache=tmp_path)
    assert not old[2].exists() and aside.exists()  # used a moment ago: kept
    os.utime(aside, (0, 0))
    assert not Analyst(0, cache=tmp_path).memo and not aside.exists()
    assert all(m.exists() for m in mine)
    # A file another review's bound removed between the listing and the reading is
    # passed over, not a FileNotFoundError.
    a._read(tmp_path / "review2-0123456789ab-standard-0ply-gone.jsonl")


def test_damaged_cache_lines_are_said_and_only_then(tmp_path: Path) -> None:
    """Analyst.skipped was counted and never said: `doublet review` says on stderr how
    many damaged lines of its cache it skipped, and says nothing of a whole cache. With
    two workers (an Analyst a game, each reading the whole cache) the count is the same."""
    import subprocess
    import sys

    full = (HANDMADE / "crawford_match.mat").read_text()
    two = tmp_path / "two.mat"
    two.write_text(full[: full.index(" Game 3")] if " Game 3" in full else full)
    cache = tmp_path / "cache"

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "doublet", "review", str(two), "--cache",
                               str(cache), "--ply", "0", *more], capture_output=True,
                              text=True, timeout=300)  # fmt: skip

    r = run()
    assert r.returncode == 0 and "damaged" not in r.stderr, r.stderr
    f = sorted(cache.glob("review2-*.jsonl"))[0]  # one file a worker
    f.write_bytes(b"[1, 2]\n" + f.read_bytes() + b'["cube", 0, ')  # one bad, one cut short
    for workers in ("1", "2"):
        r = run("--workers", workers)
        said = [line for line in r.stderr.splitlines() if "damaged" in line]
        assert r.returncode == 0 and said == [
            f"doublet: 2 damaged lines of the review cache {str(cache)!r} were skipped; the "
            "review analysed again what it needed from them"], r.stderr  # fmt: skip


def test_a_cache_keys_kind_is_read_off_its_start() -> None:
    """A cache line's kind is read off its key's start (review._kind), not by parsing the
    key's JSON again: each kind Analyst writes is read back; another start is no kind."""
    from doublet.games.review import _kind

    pos = Position.from_id("4HPwATDgc/ABMA")
    for kind in ("cube", "roll", "luck"):
        assert _kind(Analyst._key(kind, pos, CubeState(), [3, 1], None)) == kind
    for key in ("", '["cube"', '["cube",0]', '["move", 0]', "[1, 2]", '"cube", '):
        assert _kind(key) is None


def test_the_review_header_counts_one_game(tmp_path: Path) -> None:
    """`doublet review` of a file with one game says "1 game", not "1 games"."""
    import subprocess
    import sys

    full = (HANDMADE / "crawford_match.mat").read_text()
    one = tmp_path / "one.mat"
    one.write_text(full[: full.index(" Game 2")])
    r = subprocess.run([sys.executable, "-m", "doublet", "review", str(one), "--no-cache",
                        "--ply", "0"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "3-point match, 1 game, reviewed at 0 ply" in r.stdout, r.stdout


def test_the_review_table_keeps_its_columns_with_wide_or_long_names(tmp_path: Path) -> None:
    """Players' names with wide characters (中文: two columns each on a terminal) or over
    14 characters kept the figures' columns only for names like the shipped files'."""
    import subprocess
    import sys

    from doublet.apps.cli import _cells

    full = (HANDMADE / "crawford_match.mat").read_text()
    one = full[: full.index(" Game 2")]
    a, b = read_match(one)[0].names
    wide = tmp_path / "wide.mat"
    wide.write_text(one.replace(a, "中文中文", 1).replace(b, "a-very-long-name-indeed", 1))
    r = subprocess.run([sys.executable, "-m", "doublet", "review", str(wide), "--no-cache",
                        "--ply", "0"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    table = r.stdout.splitlines()[1:10]
    assert "中文中文" in table[0] and "a-very-long-name-indeed" in table[0]
    assert len({_cells(line) for line in table}) == 1  # every row as wide on screen
