"""doublet.cube: the cube state, the match equity table and Janowski's conversion.

The conversion is checked against GNU Backgammon 1.07's own 0-ply cubeful equities of the
957 refdata cube decisions (tests/data/gnubg_cube0.jsonl: gnubg's 0-ply cubeless
probabilities and its 0-ply cubeful no double / double, take / double, pass, made by
benchmarks/gnubg_cube.py): the same probabilities must give gnubg's equities and words.
The table is checked against the published one (tests/data/met_kazaross_xg2.json), the
gammon values against gnubg's gammon prices, and the dead cubes by their decisions.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from doublet.core.errors import CubeError
from doublet.cube import equity as E
from doublet.cube import met
from doublet.cube.state import MAX_CUBE, MONEY, CubeState, from_request
from doublet.formats.ids import board_from_position_id, parse_position
from tests.helpers import DATA, load_jsonl

CASES = load_jsonl("gnubg_cube0.jsonl")


def state_of(r: dict) -> CubeState:
    """A record's cube state: its cube, match and jacoby fields are the engine's keys."""
    return from_request(r)


# -- the state --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"value": 3}, "power of 2"),
        ({"value": 0}, "power of 2"),
        ({"value": 2, "owner": "centered"}, "one side owns it"),
        ({"value": 1, "owner": "mover"}, "centered"),
        ({"owner": "me"}, "owner must be"),
        ({"length": 7, "away": (0, 4)}, "0 away"),
        ({"length": 7, "away": (2, 8)}, "1..7"),
        ({"length": 30, "away": (2, 4)}, "up to 25"),
        ({"length": 7, "away": (1, 4), "crawford": True, "value": 2, "owner": "mover"}, "Crawford"),
        ({"length": 7, "away": (3, 4), "crawford": True}, "Crawford game"),
        ({"length": 7, "away": (1, 1), "crawford": True}, "Crawford game"),
        ({"length": 7, "away": (2, 4), "jacoby": True}, "money play"),
        ({"away": (2, 4)}, "match length"),
        ({"crawford": True}, "match play"),
    ],
)
def test_a_state_that_cannot_arise_is_a_clear_error(kwargs: dict, words: str) -> None:
    with pytest.raises(CubeError, match=words):
        CubeState(**kwargs)


def test_views_of_a_state() -> None:
    s = CubeState.match(7, away=(2, 4), value=2, owner="mover")
    assert s.flipped() == CubeState.match(7, away=(4, 2), value=2, owner="opponent")
    assert s.flipped().flipped() == s
    assert s.doubled() == CubeState.match(7, away=(2, 4), value=4, owner="opponent")
    assert s.may_double() and not s.doubled().may_double()
    assert CubeState.match(7, score=(5, 3)) == CubeState.match(7, away=(2, 4))
    assert CubeState.match(7, away=(1, 4)).post_crawford
    crawford = CubeState.match(7, away=(1, 4), crawford=True)
    assert not crawford.post_crawford and not crawford.may_double()
    assert MONEY.is_default and not CubeState.money(jacoby=True).is_default
    with pytest.raises(CubeError, match="ends a 7-point match"):
        CubeState.match(7, score=(7, 3))


def test_a_cube_decision_needs_a_double_allowed_and_a_live_cube() -> None:
    """has_cube_decision: the review's turns with a cube decision (GNU Backgammon counts
    none with a dead cube, nor where the rules forbid a double)."""
    assert MONEY.has_cube_decision()
    live = CubeState.match(7, away=(3, 4), value=2, owner="mover")
    assert live.has_cube_decision()
    dead = CubeState.match(7, away=(2, 4), value=2, owner="mover")  # 2-away, cube at 2
    assert dead.may_double() and dead.dead and not dead.has_cube_decision()
    assert not live.flipped().has_cube_decision()  # the opponent owns it
    assert not CubeState.match(7, away=(1, 4), crawford=True).has_cube_decision()


def test_the_largest_cube_cannot_be_redoubled() -> None:
    """At MAX_CUBE nobody may double: the decision says why rather than building a cube
    the rules refuse."""
    top = CubeState(value=MAX_CUBE, owner="mover")
    assert CubeState(value=MAX_CUBE // 2, owner="mover").may_double()
    assert not top.may_double() and "largest" in top.why_no_double()
    d = E.decide(np.array([0.9, 0.5, 0.1, 0.02, 0.0]), 0.68, top)
    assert not d.double and "largest" in d.action


def test_an_xgids_own_cube_and_score() -> None:
    # The XGID: cube 2 owned by the uppercase player, who is on roll, 2-4 to 5.
    _, _, meta = parse_position("XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:5:10")
    assert CubeState.from_xgid(meta) == CubeState.match(5, away=(3, 1), value=2, owner="mover")
    # The same with the lowercase player on roll: the score and the owner turn round.
    _, _, meta = parse_position("XGID=-b----E-C---eE---c-e----B-:1:1:-1:00:2:4:0:5:10")
    assert CubeState.from_xgid(meta) == CubeState.match(5, away=(1, 3), value=2, owner="opponent")
    _, _, meta = parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10")
    assert CubeState.from_xgid(meta) == CubeState.money(jacoby=True, beavers=True)
    _, _, meta = parse_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:4:2:1:5:10")
    assert CubeState.from_xgid(meta) == CubeState.match(5, away=(1, 3), crawford=True)


def test_request_keys_override_the_base() -> None:
    base = CubeState.match(5, away=(3, 1), value=2, owner="mover")
    assert from_request({}, base) == base
    assert from_request({"match": None}, base) == CubeState.money(2, "mover")
    assert from_request({"cube": {"value": 1}}, base) == CubeState.match(5, away=(3, 1))
    req = {"cube": {"value": 4, "owner": "opponent"}, "match": {"length": 7, "away": [2, 4]}}
    assert from_request(req) == CubeState.match(7, away=(2, 4), value=4, owner="opponent")
    assert from_request({"jacoby": True}) == CubeState.money(jacoby=True)
    for bad, words in [
        ({"cube": 2}, "is an object"),
        ({"match": {"away": [1, 2]}}, "length"),
        ({"match": {"length": 7}}, "away"),
        ({"jacoby": "yes"}, "true or false"),
        ({"cube": {"value": 2, "owner": "me"}}, "owner must be"),
        ({"match": {"length": 7, "away": [2, 4]}, "jacoby": True}, "money play"),
    ]:
        with pytest.raises(CubeError, match=words):
            from_request(bad)


# -- the match equity table ------------------------------------------------------------------


def test_the_table_is_the_published_one() -> None:
    doc = json.loads((DATA / "met_kazaross_xg2.json").read_text())
    pre, post = doc["pre_crawford_table"], doc["post_crawford_table"]
    for a in range(1, 26):
        for b in range(1, 26):
            assert met.mwc(a, b, False) == pytest.approx(pre[a - 1][b - 1], abs=1e-12)
            assert met.mwc(a, b, False) + met.mwc(b, a, False) == pytest.approx(1.0)
        assert met.mwc(a, 1, True) == pytest.approx(post[a - 1], abs=1e-12)
        assert met.mwc(1, a, True) == pytest.approx(1 - post[a - 1], abs=1e-12)
    assert met.mwc(0, 5, False) == 1.0 and met.mwc(5, -1, True) == 0.0
    assert met.mwc(1, 1, True) == 0.5
    # The game after the one in which a side first reaches 1-away is the Crawford game:
    # its results are pre-Crawford (1-away row); later games' are post-Crawford.
    s = CubeState.match(7, away=(2, 4))
    assert met.result(s, 1) == pytest.approx(pre[0][3])
    s = CubeState.match(7, away=(1, 4), crawford=True)
    assert met.result(s, -1) == pytest.approx(1 - post[2])
    assert met.now(CubeState.match(7, away=(3, 1))) == pytest.approx(post[2])


@pytest.mark.parametrize(
    ("length", "score", "cube", "prices"),
    [  # GNU Backgammon 1.07's gammon prices (cubeinfo's gammonprice) at these scores
        (7, (5, 3), 1, (1.7277675, 0.0, 0.9257761, 1.6507050)),
        (7, (4, 4), 1, (1.5209608, 2.5056796, 1.5209608, 2.5056796)),
        (7, (2, 0), 1, (0.9458944, 1.2064098, 0.9985683, 1.1636684)),
        (7, (6, 3), 1, (0.0, 0.0, 1.0252297, 0.0742006)),
        (9, (3, 4), 2, (1.1524520, 1.7772309, 1.2204466, 0.7810777)),
    ],
)
def test_gammon_values_are_gnubgs_gammon_prices(length: int, score: tuple[int, int], cube: int,
                                                prices: tuple[float, ...]) -> None:  # fmt: skip
    s = CubeState.match(length, score=score, value=cube, owner="mover" if cube > 1 else "centered")
    g = met.gammon_values(s)
    got = (g["mover_gammon"], g["mover_backgammon"], g["opponent_gammon"], g["opponent_backgammon"])
    assert got == pytest.approx(prices, abs=2e-6)
    assert met.gammon_values(MONEY)["mover_gammon"] == 1.0
    assert met.gammon_values(CubeState.money(jacoby=True))["mover_gammon"] == 0.0


def test_money_equivalent() -> None:
    s = CubeState.match(7, away=(2, 4))
    assert met.to_money(s, met.result(s, 1)) == pytest.approx(1.0)
    assert met.to_money(s, met.result(s, -1)) == pytest.approx(-1.0)


# -- Janowski's conversion against gnubg's 0 ply ---------------------------------------------


def test_the_conversion_gives_gnubgs_0_ply_equities_and_words() -> None:
    checked = 0
    for r in CASES:
        s = state_of(r)
        if r["class"] == "bearoff2" and not (s.is_match and s.owner == "centered"):
            continue  # gnubg reads these from its cubeful bear-off database, not Janowski
        b = board_from_position_id(r["pid"])
        d = E.decide(np.array(r["probs0"]), E.efficiency(b), s)
        g = r["gnubg0"]
        got = (d.no_double, d.double_take, d.double_pass)
        want = (g["no_double"], g["double_take"], g["double_pass"])
        assert got == pytest.approx(want, abs=2e-4), (r["case"], s.describe())
        # Every decision's words too, ties included (a tie with double / pass is gnubg's
        # "Double, pass": the certain wins of the data).
        assert d.action == g["action"], (r["case"], s.describe())
        checked += 1
    assert checked >= 940


def test_efficiency_by_class() -> None:
    assert E.efficiency(board_from_position_id("4HPwATDgc/ABMA")) == E.CONTACT_X
    for r in CASES:
        x = E.efficiency(board_from_position_id(r["pid"]))
        if r["class"] in ("contact", "crashed"):
            assert x == E.CONTACT_X
        elif r["class"] in ("bearoff1", "bearoff2"):
            assert x == E.BEAROFF_X
        else:
            assert E.RACE_X_MIN <= x <= E.RACE_X_MAX
    boards = np.stack([board_from_position_id(r["pid"]) for r in CASES[:50]])
    assert list(E.efficiencies(boards)) == [E.efficiency(b) for b in boards]


def _probs(p: float, wg: float = 0.0, lg: float = 0.0) -> np.ndarray:
    return np.array([p, wg, 0.0, lg, 0.0])


@pytest.mark.parametrize("trailer", [2, 3, 4, 5, 7])
def test_a_1_away_leader_never_doubles_and_the_trailer_doubles_at_once(trailer: int) -> None:
    leader = CubeState.match(7, away=(1, trailer))
    back = leader.flipped()
    for p in np.linspace(0.02, 0.98, 25):
        for wg in (0.0, 0.2 * p):
            probs = _probs(float(p), wg, 0.1 * (1 - p))
            for x in (0.6, 0.68):
                assert not E.decide(probs, x, leader).double
                theirs = _probs(1 - float(p), 0.1 * (1 - p), wg)
                d = E.decide(theirs, x, back)
                # Doubling never costs the trailer: losing loses the match either way.
                assert d.double_take >= d.no_double - 1e-9
                if d.take or d.no_double < d.double_pass:
                    assert d.double, (p, wg, x, d)
                else:
                    assert d.action.startswith("Too good")


def test_a_dead_cube_is_worth_its_cubeless_value() -> None:
    # The mover owns the cube at 2 and needs 2: a redouble cannot gain, so playing on is
    # worth the cubeless match-winning chance, and no live cube changes it.
    s = CubeState.match(7, away=(2, 4), value=2, owner="mover")
    probs = _probs(0.6, 0.15, 0.1)
    dead = 0.6 * 1.0 + 0.3 * met.mwc(2, 2, False) + 0.1 * met.mwc(2, 0, False)
    for x in (0.0, 0.68, 1.0):
        assert E.no_double(probs, x, s)[0] == pytest.approx(dead)
    # In the Crawford game nobody may double: the value is the cubeless one.
    c = CubeState.match(7, away=(1, 3), crawford=True)
    assert E.no_double(probs, 0.68, c)[0] == pytest.approx(E.no_double(probs, 0.0, c)[0])
    assert not E.decide(probs, 0.68, c).double


def test_money_decisions_and_words() -> None:
    # A gammonless race: the take point is 25 %, the mover doubles from about 68 % at
    # x = 0.68 and the opponent passes above 75 %.
    assert E.decide(_probs(0.50), 0.68, MONEY).action == "No double, take"
    assert E.decide(_probs(0.74), 0.68, MONEY).action == "Double, take"
    assert E.decide(_probs(0.80), 0.68, MONEY).action == "Double, pass"
    sure = E.decide(np.array([1.0, 0, 0, 0, 0]), 0.68, MONEY)  # no double = double / pass
    assert sure.no_double == pytest.approx(sure.double_pass) and sure.double
    assert sure.action == "Double, pass"
    assert E.decide(_probs(0.80, 0.7), 0.68, MONEY).action == "Too good to double, pass"
    owned = CubeState.money(2, "mover")
    assert E.decide(_probs(0.80), 0.68, owned).action == "Redouble, pass"
    assert E.decide(_probs(0.30), 0.68, CubeState.money(beavers=True)).action == "No double, beaver"
    # The JSON says when double_take is the beavered game's value (a review read it as
    # the plain take's, about half of it).
    beaver = E.decide(_probs(0.30), 0.68, CubeState.money(beavers=True))
    plain = E.decide(_probs(0.30), 0.68, MONEY)
    assert beaver.to_json()["beaver"] is True and "beaver" not in plain.to_json()
    assert beaver.double_take == pytest.approx(2 * plain.double_take)
    assert "beaver" not in E.decide(_probs(0.74), 0.68, CubeState.money(beavers=True)).to_json()
    d = E.decide(_probs(0.74), 0.68, MONEY)
    assert d.double_pass == 1.0 and d.double_take == pytest.approx(
        2 * (0.68 * (-1 + (0.74 - 0.2) * 2.5) + 0.32 * (2 * 0.74 - 1))
    )
    # The mover who may not double has no decision to make.
    assert not E.decide(_probs(0.9), 0.68, CubeState.money(2, "opponent")).double
    assert E.decide(_probs(0.9), 0.68, CubeState.money(2, "opponent")).action.startswith(
        "No double available"
    )


def test_post_crawford_the_leader_drops_when_the_trailer_is_the_favourite() -> None:
    # Trailer 2-away, leader 1-away after the Crawford game: after a double the game is
    # for the match (the trailer's MWC is its winning chance), while a drop leaves double
    # match point (0.5). So the leader takes exactly when the trailer is the underdog.
    s = CubeState.match(7, away=(2, 1))
    for p in (0.3, 0.45, 0.49, 0.51, 0.55, 0.7):
        d = E.decide(_probs(p, 0.2 * p, 0.1), 0.68, s)
        assert d.mwc is not None
        assert d.mwc["double_take"] == pytest.approx(p) and d.mwc["double_pass"] == 0.5
        assert d.take == (p <= 0.5)
        # At 70 % with a gammon in a fifth of the wins (a gammon wins the match at cube 1),
        # playing on is worth a little more than the leader's pass: too good.
        assert d.double == (p < 0.7) and d.action.startswith("Too good") == (p == 0.7)


def test_2_away_1_away_after_crawford_the_cube_is_the_trailers_and_live() -> None:
    """Only the trailer may double (a double by the 1-away leader gains nothing), so the
    centred cube is the trailer's, live, as if it owned it: not dead, which gave the
    trailer's no-double value as the cubeless one and the leader's as if the trailer
    could never double. GNU Backgammon 1.07 at 0 ply on the opening position with its own
    chances (0.522, 0.154, 0.008, 0.130, 0.008), 3- and 5-point matches alike: the
    trailer on roll no double +0.810, double / take +1.086, "Double, pass"; the leader on
    roll (cubeful) -0.691."""
    p = np.array([0.522, 0.154, 0.008, 0.130, 0.008])
    for length in (3, 5):
        trailer = E.decide(p, E.CONTACT_X, CubeState.match(length, away=(2, 1)))
        assert trailer.no_double == pytest.approx(0.810, abs=0.002)
        assert trailer.double_take == pytest.approx(1.086, abs=0.003)
        assert trailer.action == "Double, pass"
        leader = E.decide(p, E.CONTACT_X, CubeState.match(length, away=(1, 2)))
        assert leader.no_double == pytest.approx(-0.691, abs=0.003)
    # 2-away 2-away keeps its dead centred cube (the first double is the last): unchanged.
    even = E.decide(p, E.CONTACT_X, CubeState.match(5, away=(2, 2)))
    assert even.mwc is not None
    dead = E.no_double(p, 0.0, CubeState.match(5, away=(2, 2)))[0]
    assert even.mwc["no_double"] == pytest.approx(dead)
    # A drop at 3-away leaves the trailer 2-away in a post-Crawford game: the table's
    # post-Crawford entry, not the pre-Crawford one.
    doc = json.loads((DATA / "met_kazaross_xg2.json").read_text())
    post = doc["post_crawford_table"]
    assert met.result(CubeState.match(7, away=(3, 1)), 1) == pytest.approx(post[1])


def test_a_gnubg_match_id_gives_the_cube_and_score() -> None:
    # Match IDs written by GNU Backgammon 1.07 (gnubg.matchid) for these fields.
    for v in json.loads((DATA / "gnubg_match_ids.json").read_text()):
        _, _, meta = parse_position("4HPwATDgc/ABMA:" + v["match_id"])
        f = meta["gnubg_match"]
        assert f["cube"] == v["cube"] and f["owner"] == v["owner"] and f["length"] == v["length"]
        assert list(f["score"]) == v["score"] and f["on_roll"] == v["on_roll"]
        assert f["crawford"] == v["crawford"]
        dice = tuple(sorted(v["dice"], reverse=True))
        assert meta["roll"] == (dice if dice[0] else None)
        s = CubeState.from_meta(meta)
        me = v["on_roll"]
        owner = "centered" if v["owner"] < 0 else "mover" if v["owner"] == me else "opponent"
        assert (s.value, s.owner) == (v["cube"], owner)
        if v["length"]:
            mine, theirs = v["score"][me], v["score"][1 - me]
            assert s.away == (v["length"] - mine, v["length"] - theirs)
            assert s.crawford == bool(v["crawford"])
        else:
            assert not s.is_match and s.jacoby == bool(v["jacoby"])
    with pytest.raises(Exception, match="12 base64"):
        parse_position("4HPwATDgc/ABMA:cAkAAAAAAAA")


def test_cube_state_edges_from_a_review_of_the_api() -> None:
    """A match without the cube survives to_json and from_request (no_cube was dropped);
    numpy integers are taken ("must be a power of 2 ..., got 2"); what is not a state is a
    CubeError (TypeError, or money, before); and doubled() where the mover may not double
    is refused (it gave the opponent's cube doubled to the opponent)."""
    import dataclasses

    nc = dataclasses.replace(CubeState.match(7, away=(3, 4)), no_cube=True)
    assert nc.to_json()["match"]["no_cube"] is True
    assert from_request(nc.to_json()) == nc
    assert from_request({"match": None}, nc) == CubeState.money()
    two = CubeState.money(np.int64(2), "mover")
    assert two == CubeState.money(2, "mover") and type(two.value) is int
    assert CubeState.match(np.int64(7), away=(np.int64(3), 4)).away == (3, 4)
    for bad in (None, [1, 2], "money"):
        with pytest.raises(CubeError, match="a cube state is an object"):
            from_request(bad)  # type: ignore[arg-type]
    with pytest.raises(CubeError, match="away is two whole numbers"):
        CubeState(length=7, away=None)  # type: ignore[arg-type]
    with pytest.raises(CubeError, match="may not double: the opponent owns the cube"):
        CubeState.money(2, "opponent").doubled()
    assert CubeState.money(2, "mover").doubled() == CubeState.money(4, "opponent")
