"""The exact cubeful money values of the small bear-offs (doublet.cube.bearoff): against
a recursion written from the module's definition on the positions of up to 3 checkers,
against GNU Backgammon 1.07's own cubeful two-sided database, and where they are used
(the cube decision, its document, the cubeful search's leaves and the rollouts)."""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from doublet.core import board as B
from doublet.cube import bearoff as CB
from doublet.cube import equity as E
from doublet.cube.state import CubeState
from doublet.formats.ids import board_from_position_id
from doublet.formats.position import Position
from doublet.nn.eval import default_model
from doublet.search.analysis import cube_document, render_cube
from doublet.search.cubeful import cube_decision, leaf_values
from doublet.search.rollout import RolloutSettings, rollout
from doublet.search.rollout_analysis import render, rollout_document
from doublet.search.searcher import Limits, Searcher
from tests.reference import reference_outcomes

DATA = Path(__file__).parent / "data"
ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]
WEIGHT = {r: (1 if r[0] == r[1] else 2) / 36 for r in ROLLS}


def board(mine: tuple[int, ...], theirs: tuple[int, ...]) -> np.ndarray:
    """A bear-off: counts on my points 1..6 and on the opponent's (its 1..6)."""
    b = np.zeros(B.SIZE, np.int8)
    for k in range(6):
        b[1 + k] = mine[k]
        b[24 - k] = -theirs[k]
    b[B.MY_OFF] = 15 - sum(mine)
    b[B.OPP_OFF] = 15 - sum(theirs)
    return b


@functools.cache
def plays(mine: tuple[int, ...], roll: tuple[int, int]) -> list[tuple[int, ...]]:
    """My home board after each legal play of `roll` (the reference move generator)."""
    out = reference_outcomes(board(mine, (0,) * 6), roll[0], roll[1], B.STANDARD)
    return sorted({tuple(int(x) for x in np.frombuffer(o, np.int8)[1:7]) for o, _ in out})


SWAP = {"centered": "centered", "mover": "opponent", "opponent": "mover"}


@functools.cache
def no_double(mine: tuple[int, ...], theirs: tuple[int, ...], owner: str, beavers: bool
              ) -> float:  # fmt: skip
    """The module's ND from its definition: the mean over the rolls of the best play's
    value, +1 for a play that bears the last checker off, else minus the opponent's
    value after its cube action."""
    total = 0.0
    for roll in ROLLS:
        total += WEIGHT[roll] * max(1.0 if sum(a) == 0 else
                                    -after_action(theirs, a, SWAP[owner], beavers)
                                    for a in plays(mine, roll))  # fmt: skip
    return total


def after_action(mine: tuple[int, ...], theirs: tuple[int, ...], owner: str, beavers: bool
                 ) -> float:  # fmt: skip
    nd = no_double(mine, theirs, owner, beavers)
    if owner == "opponent":
        return nd
    x = no_double(mine, theirs, "opponent", beavers)
    dt = 4 * x if beavers and x < 0 else 2 * x
    return max(nd, min(dt, 1.0))


def small_positions(most: int) -> list[tuple[int, ...]]:
    return [c for c in itertools.product(range(most + 1), repeat=6) if 0 < sum(c) <= most]


@pytest.mark.parametrize("beavers", [False, True])
def test_the_table_is_the_recursion_of_its_definition(beavers: bool) -> None:
    """Every pair of positions of 1 to 3 checkers, each cube: the table against the
    recursion above (a move generator and an order of its own)."""
    positions = small_positions(3)
    assert len(positions) == 83
    pairs = list(itertools.product(positions, positions))
    boards = np.stack([board(m, t) for m, t in pairs])
    for owner in ("centered", "mover", "opponent"):
        state = CubeState.money(1 if owner == "centered" else 2, owner, beavers=beavers)
        exact, nd, dt = CB.values(boards, state)
        assert exact.all()
        want = np.array([no_double(m, t, owner, beavers) for m, t in pairs])
        np.testing.assert_allclose(nd, want, atol=2e-7)  # float32
        theirs = np.array([no_double(m, t, "opponent", beavers) for m, t in pairs])
        np.testing.assert_allclose(dt, np.where(beavers & (theirs < 0), 4, 2) * theirs,
                                   atol=5e-7)  # fmt: skip


def test_owning_the_cube_is_worth_at_least_a_centered_one_and_beavers_change_nothing() -> None:
    """The whole table: a cube of one's own is worth at least a centered one, which is
    worth at least the opponent's; so no double is ever beavered (4 ND[2] < ND[2] where
    ND[2] < 0) and beavers need no table of their own (the recursion test checks the
    beavered values on the small positions)."""
    _, nd = CB.table()
    assert (nd[CB.OWN] >= nd[CB.CENTERED] - 1e-6).all()
    assert (nd[CB.CENTERED] >= nd[CB.THEIRS] - 1e-6).all()
    assert np.abs(nd).max() <= 1 + 1e-6


def test_the_table_is_gnubgs_cubeful_two_sided_database() -> None:
    """120 random small bear-offs (benchmarks/gnubg_bearoff_cube.py): GNU Backgammon
    1.07's 0-ply cubeful equities, read from its database, to its 1e-4 rounding."""
    rows = [json.loads(line) for line in (DATA / "gnubg_bearoff_cube.jsonl").open()]
    assert len(rows) == 120
    boards = np.stack([board_from_position_id(r["pid"]) for r in rows])
    for owner in ("centered", "mover", "opponent"):
        state = CubeState.money(1 if owner == "centered" else 2, owner)
        exact, nd, dt = CB.values(boards, state)
        assert exact.all()
        np.testing.assert_allclose(nd, [r[owner]["no_double"] for r in rows], atol=2e-4)
        np.testing.assert_allclose(dt, [r[owner]["double_take"] for r in rows], atol=4e-4)
        if owner != "opponent":
            for k, r in enumerate(rows):
                d = E.decide_values(float(nd[k]), float(dt[k]), state)
                assert d.action == r[owner]["action"], r


def test_the_table_applies_to_money_small_bearoffs_only() -> None:
    small = board((1, 1, 0, 0, 0, 0), (0, 2, 0, 0, 0, 0))
    seven = board((7, 0, 0, 0, 0, 0), (0, 2, 0, 0, 0, 0))
    contact = board_from_position_id("4HPwATDgc/ABMA")
    exact, nd, _ = CB.values(np.stack([small, seven, contact]), CubeState.money())
    assert list(exact) == [True, False, False] and np.isnan(nd[1:]).all()
    assert not CB.values(small[None], CubeState.match(5, away=(2, 3)))[0][0]  # the score matters
    assert not CB.values(small[None], CubeState.money(2 * CB.MAX_TABLE_CUBE, "mover"))[0][0]


def test_the_cube_decision_of_a_small_bearoff_is_exact_at_every_ply() -> None:
    """gnubg_cube0.jsonl's two-sided bear-offs in money (the 13 cases its Janowski test
    leaves out): gnubg's 0-ply equities and words, at 0 and at 2 ply, and the document
    says so; --cube-method janowski keeps Janowski's conversion."""
    s = Searcher(default_model())
    cases = [json.loads(line) for line in (DATA / "gnubg_cube0.jsonl").open()]
    cases = [r for r in cases if r["class"] == "bearoff2" and r["match"] is None]
    assert len(cases) >= 5
    for r in cases:
        state = CubeState.money(r["cube"]["value"], r["cube"]["owner"], jacoby=r["jacoby"])
        b = board_from_position_id(r["pid"])
        g = r["gnubg0"]
        for ply in (0, 2):
            a = cube_decision(s, b, state, ply)
            assert a.exact and a.decision is not None
            got = (a.decision.no_double, a.decision.double_take)
            assert got == pytest.approx((g["no_double"], g["double_take"]), abs=3e-4), r
            assert a.decision.action == g["action"], r
        assert not cube_decision(s, b, state, 0, "janowski").exact
    doc = cube_document(Position(board_from_position_id(cases[0]["pid"])), ply=2)
    assert doc["exact"] is True and doc["method"] == "cubeful"
    assert render_cube(doc)[0].startswith("Cube decision, exact (the two-sided bear-off")
    contact = cube_document(Position(board_from_position_id("4HPwATDgc/ABMA")), ply=0)
    assert "exact" not in contact


def test_the_text_names_a_beavered_take_and_shows_no_negative_zero() -> None:
    """A user's review (session 44): with beavers the "Double, take" row held the
    beavered value (twice the take's); it is named "Double, beaver". And a difference
    that rounds to zero was shown as (-0.0000)."""
    b = board_from_position_id("YQEAQAIAAAAAAA")  # gnubg: Double, pass (no double 0.98)
    doc = cube_document(Position(b), CubeState.money(beavers=True), ply=0)
    assert "  Double, pass     +1.0000" in "\n".join(render_cube(doc))
    doc["equities"]["no_double"] = 0.99998  # 2e-5 below the best: shown as no difference
    assert "(-0.0000)" not in "\n".join(render_cube(doc))
    weak = board((0, 0, 0, 0, 0, 3), (1, 1, 0, 0, 0, 0))  # the side on roll far behind
    doc = cube_document(Position(weak), CubeState.money(beavers=True), ply=0)
    text = "\n".join(render_cube(doc))
    assert doc["equities"]["double_take"] < 0 and "  Double, beaver " in text
    assert "Double, take" not in text and "-0.0000" not in text
    plain = cube_document(Position(weak), CubeState.money(), ply=0)
    assert plain["equities"]["double_take"] == pytest.approx(
        doc["equities"]["double_take"] / 2, abs=1e-6)  # fmt: skip
    assert "  Double, take " in "\n".join(render_cube(plain))


def test_acey_deuceys_bear_offs_are_not_the_tables() -> None:
    """Acey-Deucey's 1-2 plays a doublet of its choice and rolls again: the table (of
    standard dice) is not its value. Its cube decision and leaves stay Janowski's."""
    b = board((1, 1, 1, 0, 0, 0), (1, 1, 1, 0, 0, 0))
    state = CubeState.money()
    s = Searcher(default_model(B.ACEY_DEUCEY))
    a = cube_decision(s, b, state, 0)
    assert not a.exact and a.decision is not None
    p = s.evaluate(b, Limits(ply=0)).astype(np.float64)
    want = E.decide(p, E.efficiency(b), state)
    assert a.decision.no_double == pytest.approx(want.no_double)
    assert not cube_decision(s, b, state, 1).exact
    _, nd, _ = CB.values(b[None], state)
    p2 = p[None]
    assert leaf_values(p2, b[None], state, False, B.ACEY_DEUCEY)[0] != pytest.approx(nd[0])


def test_leaves_and_the_cubeful_rollout_take_the_exact_values() -> None:
    """The reviewer's position (session 43): each side 3 checkers. Its leaf value is the
    table's, and a cubeful rollout gives it (the trials end at once, exact: error 0),
    where Janowski's conversion was 0.057 off. A bear-off of 7 checkers is played on in a
    money rollout with the cube until it is small; a cubeless rollout ends at once."""
    b = board((1, 1, 1, 0, 0, 0), (1, 1, 1, 0, 0, 0))
    state = CubeState.money()
    _, nd, dt = CB.values(b[None], state)
    p = np.array([[0.572, 0, 0, 0, 0]])
    assert leaf_values(p, b[None], state, False, B.STANDARD)[0] == pytest.approx(nd[0])
    assert leaf_values(p, b[None], state, True, B.STANDARD)[0] == pytest.approx(
        max(nd[0], min(dt[0], 1))
    )
    settings = RolloutSettings(trials=72, seed=3)
    t = rollout(default_model(), b, settings, cube=((state, False), (state.doubled(), False)))
    v = t.cube_values()[0]  # (trials, states)
    assert v[:, 0] == pytest.approx(np.full(72, nd[0]), abs=1e-6)
    assert v[:, 1] == pytest.approx(np.full(72, dt[0] * 1.0), abs=1e-6)
    # The cubeless rollout's cube decision (Janowski at the root elsewhere) is exact too.
    doc = rollout_document(Position(b), settings=RolloutSettings(trials=36))["cube"]
    assert doc["exact"] is True and doc["equities_se"]["no_double"] == 0
    assert doc["equities"]["no_double"] == pytest.approx(nd[0], abs=1e-6)
    assert "exact, the two-sided bear-off table" in render(
        rollout_document(Position(b), settings=RolloutSettings(trials=36))
    )
    cubeful = rollout_document(Position(b), settings=RolloutSettings(trials=36, cubeful=True))
    assert cubeful["cube"]["exact"] is True and cubeful["cube"]["method"] == "rollout"
    assert "cubeful (exact, the two-sided bear-off table)" in render(cubeful)
    big = board((2, 2, 1, 1, 1, 0), (1, 1, 1, 0, 0, 0))
    assert not CB.values(big[None], state)[0][0]
    plain = rollout(default_model(), big, settings)
    cubeful = rollout(default_model(), big, settings, cube=((state, False),))
    assert plain.moves.max() == 0 and cubeful.moves.min() >= 1
