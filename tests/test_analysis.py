"""doublet.search.analysis, the documents the front ends print: a roll's plays are
ranked 1..n by search.choice's ranking, the best has loss 0 and the others the equity
they give up, each play's probabilities and equity agree, the shots at the best play's
blots are seed 002's counts; the evaluation before the roll is the search's; the text
rendering shows the plays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from doublet.core.errors import DoubletError
from doublet.cube.state import CubeState
from doublet.formats.position import Position
from doublet.nn.eval import equity
from doublet.search.analysis import (
    analyse_roll,
    cube_document,
    diagram,
    evaluate_position,
    luck,
    render,
    searcher,
)
from doublet.search.choice import ranking
from doublet.search.searcher import Limits

PROB_KEYS = ["win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"]


@pytest.mark.parametrize("ply", [0, 1])
def test_a_rolls_document_ranks_every_play(ply: int) -> None:
    pos = Position.parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    doc = analyse_roll(pos, 6, 5, ply=ply)
    plays = doc["plays"]
    assert [r["rank"] for r in plays] == list(range(1, len(plays) + 1))
    assert len(plays) == len(pos.plays(6, 5)) and plays[0]["loss"] == 0
    best = plays[0]["equity"]
    for r in plays:
        # the equity of the probabilities as shown, each rounded to 6 decimals: off by at
        # most 0.5e-6 times the sum of its weights' sizes (2 + 1 + 1 + 1 + 1 = 6), plus
        # 0.5e-6 for the shown equity's own rounding
        p = np.array([r["probabilities"][k] for k in PROB_KEYS])
        assert r["equity"] == pytest.approx(float(equity(p)), abs=3.5e-6)
        assert r["loss"] == pytest.approx(best - r["equity"], abs=2e-6)
    _, _, probs, plies = searcher(None, 0).analyse(pos.board, 6, 5, Limits(ply=ply))
    order = ranking(probs, plies)
    assert [r["equity"] for r in plays] == [round(float(equity(probs[i])), 6) for i in order]
    assert doc["dice"] == [6, 5] and doc["ply"] == ply


def test_shots_are_counted_for_the_best_plays_blots() -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    doc = analyse_roll(pos, 4, 2, ply=0)
    after = Position.parse(doc["plays"][0]["position_id"])  # seen by the opponent
    for s in doc["shots"]:
        assert 0 < s["rolls"] <= 36
    assert doc["plays"][0]["play"] == "8/4 6/4"
    assert doc["shots"] == []  # the best 4-2 makes the 4 point and leaves no blot
    assert after.variant == 0


def test_the_evaluation_is_the_searchs() -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    doc = evaluate_position(pos, ply=1)
    p = searcher(None, 0).evaluate(np.array(pos.board), Limits(ply=1))
    assert doc["evaluation"]["probabilities"]["win"] == round(float(p[0]), 6)
    assert doc["pips"] == {"mover": 167, "opponent": 167}


def test_render_shows_the_board_and_the_plays() -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    text = render(analyse_roll(pos, 3, 1, ply=0), pos.board)
    assert "8/5 6/5" in text and "16 legal plays" in text
    assert diagram(pos.board).count("\n") >= 12


def test_a_limited_listing_writes_out_only_its_plays_and_counts_them_all() -> None:
    """doublet analyse's text lists the best 20, and only those are written out (an
    Acey-Deucey 1-2 of 865,132 plays took 154 s writing them all, 27 s now): the same
    rows as the whole listing's first ones, the count and the rest said."""
    pos = Position.from_id("4HPwATDgc/ABMA")
    whole = analyse_roll(pos, 3, 1, ply=0)
    few = analyse_roll(pos, 3, 1, ply=0, limit=3)  # 3 * ONE_BY_ONE <= 16: one at a time
    assert few["plays"] == whole["plays"][:3] and few["count"] == 16
    text = render(few, pos.board, limit=20)
    assert "16 legal plays" in text and "... 13 more (--all or --json shows them)" in text
    assert render(whole, pos.board, limit=3).splitlines()[-2:] == text.splitlines()[-2:]


def test_a_stop_is_never_left_for_the_next_search() -> None:
    """A Ctrl-C (the watchdog's interrupt) that comes during a search, 0 ply included,
    answers that search; deepen disarms the watchdog after it, so the next search runs
    unstopped; a disarmed watchdog stays disarmed."""
    from doublet.search.analysis import deepen
    from doublet.search.watch import watchdog

    s = searcher(None, 0)
    dog = watchdog(s)
    for ply in (0, 1):

        def compute(n: int, _m: int, _deadline: float, ply: int = ply) -> int:
            if n == ply:
                dog.interrupt()  # Ctrl-C while this ply is searched
            return n

        result, done, _ = deepen(s, compute, ply, None)
        assert done == result <= ply
        assert dog.deadline is None and not dog.fired
        dog.interrupted = False
    dog.disarm()
    assert dog.deadline is None and not dog.fired


def test_a_race_says_no_shot_rather_than_listing_blots_at_0_of_36() -> None:
    """Past contact the opponent hits nothing: the text says so instead of "9: 0/36"."""
    b = np.zeros(30, dtype=np.int8)
    b[10], b[9], b[26] = 2, 1, 12  # the mover: 3 checkers left, 12 off
    b[20], b[22], b[27] = -3, -2, 10  # the opponent: 5 at home, 10 off
    pos = Position(b)
    doc = analyse_roll(pos, 6, 5, ply=0)
    assert doc["shots"] and all(s["rolls"] == 0 for s in doc["shots"])
    text = render(doc, pos.board)
    assert "no shot at X's blots after the best play" in text and "/36" not in text
    opening = analyse_roll(Position.start(), 4, 3, ply=0)  # every 4-3 leaves a blot in reach
    assert "shots at X's blots after the best play: " in render(opening, Position.start().board)


@pytest.mark.parametrize("state", [
    CubeState.match(1, away=(1, 1)),  # a 1-point match: the cube is dead from the start
    CubeState.match(7, away=(1, 1)),  # double match point (post-Crawford)
    CubeState.match(7, away=(2, 5), value=2, owner="mover"),  # 2-away, owning the cube at 2
])  # fmt: skip
def test_a_dead_cube_has_no_decision(state: CubeState) -> None:
    """Where winning this game at the cube's value wins the match, a double can only cost:
    GNU Backgammon answers "You cannot double", play offers none and the review counts
    none; the analysis said "Optional double, take" at double match point."""
    pos = Position.from_id("4HPwATDgc/ABMA")
    for ply in (0, 1):
        doc = cube_document(pos, state, ply=ply)
        assert doc["double"] is False and doc["equities"]["double_take"] is None
        assert doc["action"] == ("No double available (the cube is dead: winning this game "
                                 "at its value already wins the match)")  # fmt: skip
    live = cube_document(pos, CubeState.match(7, away=(3, 5), value=2, owner="mover"), ply=0)
    assert live["equities"]["double_take"] is not None
    # A double made all the same (a match file's, judged by the review; one waiting for
    # its answer) is valued as any other: a review found it judged a correct action.
    made = cube_document(pos, state, ply=0, made=True)
    assert made["equities"]["double_take"] is not None and made["take"] is not None
    # Not made, the double's branch is not searched; playing on is valued the same.
    for ply in (0, 1, 2):
        dead = cube_document(pos, state, ply=ply)
        both = cube_document(pos, state, ply=ply, made=True)
        assert dead["equities"]["no_double"] == both["equities"]["no_double"]
        assert dead["probabilities"] == both["probabilities"]
    from doublet.games.review import cube_loss

    loss = cube_loss(made, "double")  # at double match point doubling costs nothing
    assert (loss or 0.0) >= 0 and (state.away[0] == 1 or (loss or 0.0) > 0)


def test_a_one_point_match_has_no_post_crawford_game() -> None:
    assert CubeState.match(1, away=(1, 1)).describe() == (
        "1-point match, mover 1-away, opponent 1-away, cube centered at 1"
    )
    assert "(post-Crawford)" in CubeState.match(7, away=(1, 1)).describe()


def test_a_cube_decision_stopped_short_says_so_at_the_top() -> None:
    """/api/analyse without dice answered "ply": 4 with no "stopped" where its cube
    decision had reached 3 ply (a review, session 45): the top says so, the text once."""
    from doublet.search import analysis

    pos = Position.from_id("4HPwATDgc/ABMA")
    doc = analysis.analyse_position(pos, CubeState.money(), ply=1)
    assert "stopped" not in doc
    doc["cube"]["stopped"] = "the time budget of 5 s allowed 0 ply of the 1 asked for"
    analysis._stopped_with_cube(doc)
    assert doc["stopped"] == f"the cube decision: {doc['cube']['stopped']}"
    assert render(doc, pos.board).count("Stopped short") == 1


def test_analyses_from_two_threads_are_those_of_one() -> None:
    """The searchers are shared, and their kernels run without the GIL: a review found two
    threads' analyse_roll answering "not a legal outcome" and, once, 8/3 for the opening
    4-1. The functions that search run one at a time, whichever thread calls them."""
    from concurrent.futures import ThreadPoolExecutor

    from doublet.core.dice import ROLLS_21

    ids = ["4HPwATDgc/ABMA", "sGfwATDgc/ABMA", "jGfkASjg8wcBMA", "2+4OAADb/gEAAA"]
    jobs = [(p, d1, d2) for p in ids for d1, d2 in list(ROLLS_21)[::3]]

    def top(job: tuple[str, int, int]) -> list[tuple[str, float]]:
        doc = analyse_roll(Position.from_id(job[0]), job[1], job[2], ply=1)
        return [(r["play"], r["equity"]) for r in doc["plays"][:3]]

    alone = [top(j) for j in jobs]
    for _ in range(3):
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(top, jobs)) == alone


def test_a_program_that_loads_many_models_keeps_a_few_searchers() -> None:
    import gc
    import threading
    import weakref

    from doublet.nn.eval import Model, default_model
    from doublet.search import analysis

    dm = default_model()
    analysis.searcher(None, 0)  # the shipped model's: kept whatever follows
    gone = []
    threads = threading.active_count()
    for _ in range(analysis.KEPT_SEARCHERS + 4):
        m = Model(dm.contact, dm.race, dict(dm.meta), dm.prune)
        s = analysis.searcher(m, 0)
        assert s.model is m and analysis.searcher(m, 0) is s
        # A 2-ply search arms the searcher's watchdog (a thread): a diff review found
        # that it held the searcher, so that evicting it freed nothing.
        analyse_roll(Position.start(), 3, 1, ply=2, model=m, budget=60.0)
        gone.append(weakref.ref(s))
        del s, m
    kept = list(analysis._SEARCHERS.values())
    assert len(kept) == analysis.KEPT_SEARCHERS
    assert any(s.model is dm for s in kept)
    del kept
    gc.collect()
    assert sum(r() is not None for r in gone) <= analysis.KEPT_SEARCHERS - 1
    assert threading.active_count() <= threads + analysis.KEPT_SEARCHERS


@pytest.mark.parametrize("call", [
    lambda p: analyse_roll(p, 3, 1, ply=-1),
    lambda p: analyse_roll(p, 3, 1, ply=1.5),
    lambda p: analyse_roll(p, 3, 1, ply=None),
    lambda p: evaluate_position(p, ply=True),
    lambda p: analyse_roll(p, 3, 1, ply=2, budget=float("nan")),
    lambda p: analyse_roll(p, 3, 1, ply=2, budget=-1.0),
    lambda p: analyse_roll(p, 3, 1, ply=2, budget="1"),
    lambda p: luck(p, (0, 1)),
    lambda p: luck(p, (7, 1)),
    lambda p: luck(p, (3,)),
])  # fmt: skip
def test_bad_search_arguments_are_doublet_errors(call: Any) -> None:
    """A review found ValueError, numba's TypingError, OverflowError and IndexError from
    these, a negative budget answered at 0 ply, and luck((0, 1)) valued as 6-6's."""
    with pytest.raises(DoubletError):
        call(Position.from_id("sGfwATDgc/ABMA"))


def test_numpy_integers_and_an_infinite_budget_are_taken() -> None:
    import json

    p = Position.from_id("sGfwATDgc/ABMA")
    doc = analyse_roll(p, np.int64(3), np.int64(1), ply=np.int64(1))
    json.dumps(doc)  # numpy's int64 in the document could not be written
    assert doc["plays"] == analyse_roll(p, 3, 1, ply=1, budget=float("inf"))["plays"]
