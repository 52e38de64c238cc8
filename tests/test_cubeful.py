"""doublet.search.cubeful: the cubeful n-ply search against a slow reference written from
its definition (Position.plays for the plays, the searcher's 0-ply value of each position
after a play, Janowski's conversion at the leaves, a max over the plays and the cube
actions, an average over the 21 rolls), the Janowski method, score-aware play values, and
the analysis documents built on them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from doublet.core.board import ACEY_DEUCEY
from doublet.core.dice import ROLL_WEIGHTS, ROLLS_21
from doublet.cube import equity as E
from doublet.cube.met import to_money
from doublet.cube.state import MONEY, CubeState
from doublet.formats.position import Position
from doublet.search.analysis import analyse_position, analyse_roll, cube_document, searcher
from doublet.search.cubeful import CubefulSearch, cube_decision, play_values
from doublet.search.searcher import Limits

OPENING = "4HPwATDgc/ABMA"
POSITIONS = [  # from the refdata cube cases
    "4HPwATDgc/ABMA",  # the opening
    "7bYFABhsezcAAA",  # contact
    "/wYQHBCfpNAJQA",  # crashed
    "n/ICLAB/vwQAAA",  # a race
    "3+0CAIB3AAAAAA",  # a bear-off
]
STATES = [
    MONEY,
    CubeState.money(2, "mover"),
    CubeState.money(jacoby=True),
    CubeState.match(7, away=(2, 4)),
    CubeState.match(7, away=(4, 4), value=2, owner="mover"),
    CubeState.match(5, away=(3, 1)),  # post-Crawford, the trailer on roll
    CubeState.match(5, away=(1, 3), crawford=True),
]


def _other(v: float, s: CubeState) -> float:
    return 1.0 - v if s.is_match else -v


def _scale(s: CubeState) -> float:
    return 1.0 if s.is_match else float(s.value)


def ref_leaf(pos: Position, s: CubeState, act: bool) -> float:
    """The 0-ply cubeful value of pos for its side on roll in s, absolute."""
    p = searcher(None, pos.variant).evaluate(np.array(pos.board), Limits(ply=0)).astype(float)
    x = E.efficiency(pos.board)
    nd = float(E.no_double(p, x, s)[0]) * _scale(s)
    if not (act and s.may_double()):
        return nd
    dt = float(E.double_take(p, x, s)[0]) * _scale(s)
    return max(nd, min(dt, E.double_pass(s) * _scale(s)))


def ref_values(pos: Position, states: list[CubeState], depth: int, act: bool) -> list[tuple]:
    """(optimal, no double, double/take or None) per state, absolute, `depth` plies."""
    if depth == 0:
        out = []
        for s in states:
            nd = ref_leaf(pos, s, False)
            dt = None
            if act and s.may_double():
                p = searcher(None, pos.variant).evaluate(np.array(pos.board), Limits(ply=0))
                dt = float(E.double_take(p.astype(float), E.efficiency(pos.board), s)[0]) * _scale(
                    s
                )
            out.append((ref_leaf(pos, s, act), nd, dt))
        return out
    branches = []
    for s in states:
        branches.append(s)
        if act and s.may_double():
            branches.append(s.doubled())
    sums = [0.0] * len(branches)
    for (d1, d2), w in zip(ROLLS_21, ROLL_WEIGHTS, strict=True):
        plays = pos.plays(int(d1), int(d2))

        def value(play, s: CubeState, d: int) -> float:
            nxt = play.position()
            if play.again:
                return ref_values(nxt, [s], d, False)[0][0]
            return _other(ref_values(nxt, [s.flipped()], d, True)[0][0], s)

        for k, s in enumerate(branches):  # each state picks its own play
            best = plays[int(np.argmax([value(pl, s, 0) for pl in plays]))]
            sums[k] += float(w) * value(best, s, depth - 1)
    out = []
    k = 0
    for s in states:
        nd = sums[k]
        k += 1
        dt = None
        opt = nd
        if act and s.may_double():
            dt = sums[k]
            k += 1
            if s.beavers and not s.is_match and dt < 0:  # the taker beavers
                dt *= 2
            opt = max(nd, min(dt, E.double_pass(s) * _scale(s)))
        out.append((opt, nd, dt))
    return out


@pytest.mark.parametrize("pid", POSITIONS)
@pytest.mark.parametrize("state", STATES, ids=lambda s: s.describe())
def test_the_1_ply_search_is_the_reference(pid: str, state: CubeState) -> None:
    pos = Position.from_id(pid)
    node = CubefulSearch(searcher(None, 0)).node(np.array(pos.board), [state], 1, True)
    want = ref_values(pos, [state], 1, True)[0]
    assert node.optimal[0] == pytest.approx(want[0], abs=1e-6)
    assert node.no_double[0] == pytest.approx(want[1], abs=1e-6)
    if want[2] is None:
        assert node.double_take[0] is None
    else:
        assert node.double_take[0] == pytest.approx(want[2], abs=1e-6)


@pytest.mark.parametrize("state", [MONEY, CubeState.match(7, away=(2, 4))], ids=str)
def test_the_2_ply_search_is_the_reference(state: CubeState) -> None:
    pos = Position.from_id("n/ICLAB/vwQAAA")  # a race: few plays a roll keep the reference quick
    node = CubefulSearch(searcher(None, 0)).node(np.array(pos.board), [state], 2, True)
    want = ref_values(pos, [state], 2, True)[0]
    # The search reads each play's probabilities as the searcher returns them (float32,
    # the mover's, turned back to the side to roll), the reference evaluates the position
    # itself: the last bits differ, which can flip a near-tie between two replies.
    got = (node.optimal[0], node.no_double[0], node.double_take[0])
    assert got == pytest.approx(want, abs=1e-4)


@pytest.mark.parametrize("pid", ["XQUAAHEFAAAAAA", "7bYFABhsezcAAA"])
def test_double_take_is_the_doubled_cube_searched_on_its_own(pid: str) -> None:
    """Found by a user's review (session 44): each play was picked for the node's first
    state (no double) and the double / take branch followed it, so the opponent's replies
    there were not its best for the cube it then owns, and double / take came out too
    high: 0.5176 at 2 ply for a 7-checker bear-off whose doubled cube, searched on its own,
    is worth 2 x 0.2323 (gnubg 2 ply: 0.4692 / 0.4646, no double). Now each state picks
    its own plays, and double / take is the doubled cube's own value to the digit."""
    s = searcher(None, 0)
    b = np.array(Position.from_id(pid).board)
    for ply in (1, 2):
        a = cube_decision(s, b, MONEY, ply)
        owned = cube_decision(s, b, CubeState.money(2, "opponent"), ply)
        assert a.decision is not None
        assert a.decision.double_take == pytest.approx(2 * owned.no_double, abs=1e-9)
    if pid == "XQUAAHEFAAAAAA":
        assert a.decision.action == "No double, take"
        assert (a.decision.no_double, a.decision.double_take) == pytest.approx(
            (0.4692, 0.4646), abs=2e-4)  # fmt: skip


def test_the_search_averages_cubeless_probabilities_too() -> None:
    pos = Position.from_id(OPENING)
    node = CubefulSearch(searcher(None, 0)).node(np.array(pos.board), [MONEY], 1, True)
    assert node.probs.sum() > 0 and 0.4 < node.probs[0] < 0.6
    # The probabilities follow the plays the cube search picks: at 1 ply with a centered
    # money cube those are close to the cubeless search's choices.
    cubeless = searcher(None, 0).evaluate(np.array(pos.board), Limits(ply=1))
    assert abs(node.probs[0] - cubeless[0]) < 0.02


@pytest.mark.parametrize("ply", [0, 1, 2])
def test_the_janowski_method_converts_the_n_ply_probabilities(ply: int) -> None:
    pos = Position.from_id("7bYFABhsezcAAA")
    s = CubeState.match(7, away=(3, 3))
    a = cube_decision(searcher(None, 0), np.array(pos.board), s, ply, "janowski")
    p = searcher(None, 0).evaluate(np.array(pos.board), Limits(ply=ply)).astype(float)
    d = E.decide(p, E.efficiency(pos.board), s)
    assert a.decision is not None
    assert (a.decision.no_double, a.decision.double_take) == pytest.approx(
        (d.no_double, d.double_take)
    )
    assert a.ply == ply and a.method == "janowski"


def test_a_cube_decision_document() -> None:
    pos = Position.from_id(OPENING)
    doc = cube_document(pos, CubeState.match(7, away=(2, 4)), ply=1)
    assert set(doc) >= {"double", "take", "action", "equities", "probabilities", "ply", "mwc"}
    assert doc["equities"]["double_pass"] == 1.0 and doc["ply"] == 1
    assert doc["double"] is False and doc["action"] == "No double, take"
    mwc = doc["mwc"]
    s = CubeState.match(7, away=(2, 4))
    assert float(to_money(s, mwc["no_double"])) == pytest.approx(
        doc["equities"]["no_double"], abs=1e-5
    )
    # No decision when the opponent owns the cube or in the Crawford game.
    doc = cube_document(pos, CubeState.money(2, "opponent"), ply=0)
    assert doc["double"] is False and doc["take"] is None and doc["equities"]["double_take"] is None
    assert doc["optimal"] == doc["equities"]["no_double"]  # documented in every reply
    doc = cube_document(pos, CubeState.match(5, away=(1, 3), crawford=True), ply=0)
    assert doc["action"] == "No double available (the Crawford game: nobody may double)"
    assert doc["optimal"] == doc["equities"]["no_double"]
    # A post-Crawford trailer doubles at once.
    doc = cube_document(pos, CubeState.match(5, away=(3, 1)), ply=1)
    assert doc["double"] is True and doc["take"] is True
    # and a 1-away leader does not.
    doc = cube_document(pos, CubeState.match(5, away=(1, 3)), ply=1)
    assert doc["double"] is False


def test_acey_deucey_cube_decisions_use_its_own_net() -> None:
    pos = Position.start(ACEY_DEUCEY)
    doc = cube_document(pos, MONEY, ply=2)
    assert doc["ply"] == 1  # Acey-Deucey's cubeful search stops at 1 ply
    assert doc["action"] == "No double, take"
    p = doc["probabilities"]["win"]
    assert 0.4 < p < 0.65


def test_score_aware_play_values() -> None:
    pos = Position.from_id(OPENING)
    s = searcher(None, 0)
    boards, again, probs, _plies = s.analyse(np.array(pos.board), 6, 4, Limits(ply=0))
    # Double match point: gammons count for nothing, so the value is the chance to win.
    dmp = CubeState.match(5, away=(1, 1))
    v = play_values(s, boards, again, probs, dmp)
    assert v == pytest.approx(probs[:, 0].astype(float), abs=1e-6)
    # Money with the cube centered: the mover's value is minus the opponent's 0-ply
    # cubeful value after its cube action.
    v = play_values(s, boards, again, probs, MONEY)
    opp = np.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], 1)
    for i in range(len(v)):
        after = Position(boards[i]).flip()
        d = E.decide(opp[i].astype(float), E.efficiency(after.board), MONEY)
        assert v[i] == pytest.approx(-d.optimal, abs=1e-6)


def test_the_analysis_ranks_plays_by_cubeful_equity_at_a_score() -> None:
    pos = Position.from_id(OPENING)
    money = analyse_roll(pos, 6, 4, ply=1)
    assert "equity" not in money or money.get("equity") != "cubeful"
    assert "cubeless_equity" not in money["plays"][0]
    dmp = analyse_roll(pos, 6, 4, ply=1, state=CubeState.match(5, away=(1, 1)))
    assert dmp["equity"] == "cubeful"
    rows = dmp["plays"]
    for a, b in itertools.pairwise(rows):
        if a["ply"] == b["ply"]:
            assert a["probabilities"]["win"] >= b["probabilities"]["win"] - 1e-6
        assert a["mwc"] == pytest.approx(a["probabilities"]["win"], abs=1e-5)
        assert a["equity"] == pytest.approx(2 * a["mwc"] - 1, abs=1e-5)
    assert rows[0]["loss"] == 0 and all(r["loss"] >= 0 for r in rows)


def test_analysing_a_position_gives_its_cube_decision() -> None:
    pos = Position.from_id(OPENING)
    doc = analyse_position(pos, MONEY, ply=0)
    assert doc["evaluation"]["probabilities"] == doc["cube"]["probabilities"]
    assert doc["cube"]["action"] == "No double, take"


def test_in_the_crawford_game_a_trailers_gammons_count_double() -> None:
    # Trailer 2-away against a 1-away leader in the Crawford game: the cube is dead, a
    # single win leaves double match point (0.5), a gammon wins the match, a loss of any
    # kind loses it. So each play's match-winning chance is 0.5 (W - WG) + WG, the plays
    # are ranked by it, and the gammonish play wins where money play would not pick it.
    s = CubeState.match(7, away=(2, 1), crawford=True)
    cases = [("wufgCRCM5+AAIw", 2, 1), ("4HPwATDgc/ABMA", 6, 4), ("4HPGASHCa/AAWA", 4, 3),
             ("sCt4ADrcGnCAJg", 5, 2)]  # fmt: skip
    gammonish = 0
    for pid, d1, d2 in cases:
        pos = Position.from_id(pid)
        rows = analyse_roll(pos, d1, d2, ply=0, state=s)["plays"]
        for r in rows:
            p = r["probabilities"]
            want = 0.5 * (p["win"] - p["win_gammon"]) + p["win_gammon"]
            assert r["mwc"] == pytest.approx(want, abs=1e-5)
        assert [r["mwc"] for r in rows] == sorted((r["mwc"] for r in rows), reverse=True)
        money = analyse_roll(pos, d1, d2, ply=0)["plays"][0]
        if rows[0]["probabilities"]["win_gammon"] > money["probabilities"]["win_gammon"]:
            gammonish += 1  # a different play, for its gammons
    assert gammonish >= 2
