"""Click-by-click steps (doublet.games.steps) against the legal plays of doublet.rules.movegen.

What this module checks:

- For positions of tests/data/gnubg_refset.jsonl (standard) and every case of
  tests/data/acey_deucey.jsonl with at most 3000 outcomes (1-2 chains, bar, unentered
  checkers, exact bear-off), the end positions of all complete step sequences are exactly
  the outcomes of ``legal_outcomes`` (with the roll-again flag), and each one's
  notation reads back (doublet.formats.notation.parse_play) as the same play.
- On small trees every step sequence, not one per position, is read back.
- The 1-2 chain from Acey-Deucey's start: the 1 and the 2, the doublet choice, four moves
  and roll again; a doublet with no move completes at once ("no play").
- Maximal use of the dice and the higher die: the steps that would strand a die are not
  offered, and an illegal step raises IllegalPlayError naming the legal ones.
- Steps from JSON: malformed ones are refused with a message.
- can_move (is there any legal play) agrees with legal_outcomes on every position walked.
- path(): the steps to each legal play (the hint's "Show") lead to that play.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np
import pytest

from doublet.core.board import ACEY_DEUCEY, STANDARD, from_counts, starting
from doublet.core.errors import DoubletError, IllegalPlayError
from doublet.formats.ids import board_from_position_id
from doublet.formats.notation import parse_play
from doublet.games.steps import BAR, IN, OFF, Step, Turn, can_move, parse_steps
from doublet.rules.movegen import legal_outcomes
from tests.helpers import DATA, pos, random_positions

AD_LIMIT = 3000  # Acey-Deucey cases with at most this many outcomes are walked in full
REFSET_EVERY = 6  # every 6th refset case (600 of 3600; the whole set adds ~20 s)


@cache
def _cases(name: str) -> list[dict[str, Any]]:
    with open(DATA / name) as f:
        return [json.loads(line) for line in f]


def walk(t: Turn) -> dict[int, Turn]:
    """Every legal play reachable by steps from t: outcome index -> one Turn that ends
    there. Visits each node of the step tree once."""
    found: dict[int, Turn] = {}
    seen = set()

    def go(t: Turn) -> None:
        key = t._node  # the tree node: (board, dice left, mode, dice needed)
        if key in seen:
            return
        seen.add(key)
        o = t.options()
        if o.complete:
            found.setdefault(o.outcome, t)
        for s in o.steps:
            go(t.step(s))
        for k in o.doublets:
            go(t.choose(k))

    go(t)
    return found


def check_position(board: np.ndarray, d1: int, d2: int, variant: int, where: str) -> int:
    outs, again = legal_outcomes(board, d1, d2, variant)
    stuck = len(outs) == 1 and np.array_equal(outs[0], board)
    assert can_move(board, d1, d2, variant) == (not stuck), where
    found = walk(Turn(board, d1, d2, variant))
    missing = sorted(set(range(len(outs))) - set(found))
    assert not missing, f"{where}: {len(missing)} legal plays cannot be clicked"
    assert len(found) == len(outs)
    for i, t in found.items():
        o = t.options()
        assert np.array_equal(o.board, outs[i]) and o.again == bool(again[i]), where
        text = t.notation()
        assert parse_play(board, d1, d2, text, variant) == i, f"{where}: {text!r}"
    return len(outs)


def test_refset_steps_reach_exactly_the_legal_plays() -> None:
    total = 0
    for n, case in enumerate(_cases("gnubg_refset.jsonl")[::REFSET_EVERY]):
        board = board_from_position_id(case["pid"])
        d1, d2 = case["dice"]
        total += check_position(board, d1, d2, STANDARD, f"refset {case['pid']} {d1}{d2} #{n}")
    assert total > 5000


def test_acey_deucey_steps_reach_exactly_the_legal_plays() -> None:
    total = chains = 0
    for n, case in enumerate(_cases("acey_deucey.jsonl")):
        if case["n_outcomes"] > AD_LIMIT:
            continue
        board = from_counts(case["position"]["mover"], case["position"]["opponent"])
        d1, d2 = case["dice"]
        total += check_position(board, d1, d2, ACEY_DEUCEY, f"acey_deucey.jsonl line {n + 1}")
        chains += {d1, d2} == {1, 2}
    assert total > 10000 and chains >= 15


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_random_positions_every_roll(variant: int) -> None:
    """Self-play positions: all 21 rolls of a few (1-2 chains kept small by the board)."""
    for k, b in enumerate(random_positions(6, variant, seed=11 + variant)):
        for d1 in range(1, 7):
            for d2 in range(1, d1 + 1):
                if variant == ACEY_DEUCEY and (d1, d2) == (2, 1):
                    n, _ = legal_outcomes(b, 2, 1, variant)[0].shape
                    if n > AD_LIMIT:
                        continue
                check_position(b, d1, d2, variant, f"random {variant} #{k} {d1}{d2}")


def all_sequences(t: Turn, limit: int) -> list[Turn] | None:
    """Every complete step sequence from t (None when there are more than limit)."""
    out: list[Turn] = []

    def go(t: Turn) -> bool:
        o = t.options()
        if o.complete:
            out.append(t)
        if len(out) > limit:
            return False
        return all(go(t.step(s)) for s in o.steps) and all(go(t.choose(k)) for k in o.doublets)

    return out if go(t) else None


def test_every_sequence_reads_back_on_small_trees() -> None:
    checked = 0
    cases = [(board_from_position_id(c["pid"]), *c["dice"], STANDARD)
             for c in _cases("gnubg_refset.jsonl")[:300]]  # fmt: skip
    cases += [
        (from_counts(c["position"]["mover"], c["position"]["opponent"]), *c["dice"], ACEY_DEUCEY)
        for c in _cases("acey_deucey.jsonl")
        if c["n_outcomes"] <= 60
    ]
    for board, d1, d2, variant in cases:
        seqs = all_sequences(Turn(board, d1, d2, variant), 400)
        if seqs is None:
            continue
        outs, again = legal_outcomes(board, d1, d2, variant)
        for t in seqs:
            o = t.options()
            i = parse_play(board, d1, d2, t.notation(), variant)
            assert i == o.outcome, f"{t.notation()!r} reads as another play"
            assert np.array_equal(outs[i], o.board) and bool(again[i]) == o.again
            checked += 1
    assert checked > 3000


def test_acey_deucey_chain_from_the_start() -> None:
    t = Turn(starting(ACEY_DEUCEY), 1, 2, ACEY_DEUCEY)
    o = t.options()
    assert sorted(s.text() for s in o.steps) == ["in/23", "in/24"]
    assert not o.complete and not o.doublets
    t = t.step(Step(IN, 23, 2)).step(Step(23, 22, 1))
    o = t.options()
    assert o.steps == [] and o.doublets == [1, 2, 3, 4, 5, 6] and not o.complete
    with pytest.raises(IllegalPlayError, match="first choose the doublet"):
        t.step(Step(IN, 19, 6))
    t = t.choose(6)
    for _ in range(4):
        o = t.options()
        assert not o.complete
        t = t.step(next(s for s in o.steps if s.src == IN))
    o = t.options()
    assert o.complete and o.again and o.dice == () and o.steps == []
    assert t.notation() == "in/23 23/22 then 6-6: in/19 in/19 in/19 in/19"
    outs, again = legal_outcomes(starting(ACEY_DEUCEY), 1, 2, ACEY_DEUCEY)
    assert np.array_equal(outs[o.outcome], o.board) and again[o.outcome]
    # Undo goes back one step at a time, through the doublet choice.
    back = t.undo().undo().undo().undo()
    assert back.notation() == "in/23 23/22 then 6-6: no play" and back.options().doublets == []
    back = back.undo()
    assert back.options().steps == [] and back.options().doublets == [1, 2, 3, 4, 5, 6]
    assert back.undo().notation() == "in/23"


def test_acey_deucey_doublet_with_no_move_completes_at_once() -> None:
    # The mover's 1 and 2 enter on 24 and 23; the opponent holds 18..21 and 16, 17, so
    # 3-3 .. 6-6 from the board and from "in" is closed; 5-5 from in lands on 20: closed.
    board = pos({}, {21: 2, 20: 2, 19: 2, 18: 2, 17: 2, 16: 2}, my_out=15, opp_out=3)
    t = Turn(board, 2, 1, ACEY_DEUCEY).step(Step(IN, 23, 2)).step(Step(IN, 24, 1))
    o = t.options()
    assert 6 in o.doublets
    t = t.choose(6)
    o = t.options()
    assert o.steps == [] and o.complete and not o.again
    assert t.notation() == "in/23 in/24 then 6-6: no play"
    assert parse_play(board, 2, 1, t.notation(), ACEY_DEUCEY) == o.outcome


def test_acey_deucey_chain_that_ends_the_game() -> None:
    """The 1 and the 2 bear off the last two checkers: the play is complete with no
    doublet to choose and no roll again; a 6-6 that bears off the last four is complete
    and does not roll again either."""
    board = pos({2: 1, 1: 1}, {24: 2}, opp_out=13)
    t = Turn(board, 1, 2, ACEY_DEUCEY).step(Step(2, OFF, 2)).step(Step(1, OFF, 1))
    o = t.options()
    assert o.complete and not o.again and o.doublets == [] and o.steps == []
    assert t.notation() == "2/off 1/off"
    assert parse_play(board, 1, 2, t.notation(), ACEY_DEUCEY) == o.outcome
    board = pos({6: 4, 2: 1, 1: 1}, {24: 2}, opp_out=13)
    t = Turn(board, 1, 2, ACEY_DEUCEY).step(Step(2, OFF, 2)).step(Step(1, OFF, 1))
    assert t.options().doublets == [1, 2, 3, 4, 5, 6] and not t.options().complete
    t = t.choose(6)
    for _ in range(4):
        t = t.step(Step(6, OFF, 6))
    o = t.options()
    assert o.complete and not o.again
    assert t.notation() == "2/off 1/off then 6-6: 6/off 6/off 6/off 6/off"
    assert t.path(o.outcome) == []
    start = Turn(board, 1, 2, ACEY_DEUCEY)
    assert start.path(o.outcome)[2] == 6  # the way there chooses the 6-6


def test_higher_die_and_maximal_use() -> None:
    # 6-5 with one checker on 7 and the opponent's point on 1: 7/1 is closed, 7/2 then
    # the 6 bears off from 2 (higher die rule in the bear-off): 7/2/off is the only play.
    board = pos({7: 1}, {1: 2, 24: 13})
    t = Turn(board, 6, 5)
    o = t.options()
    assert [(s.text(), s.die) for s in o.steps] == [("7/2", 5)]
    with pytest.raises(IllegalPlayError, match="7/1 with the 6 is not a legal step here"):
        t.step(Step(7, 1, 6))
    t = t.step(o.steps[0])
    assert [(s.src, s.dst, s.die) for s in t.options().steps] == [(2, OFF, 6)]
    # Only one die can be played (24/18 or 24/19, the 13 point is closed): the 6.
    board = pos({24: 1}, {13: 2})
    assert [p for p in Turn(board, 6, 5).options().steps] == [Step(24, 18, 6)]
    with pytest.raises(IllegalPlayError, match="24/19 with the 5 is not a legal step"):
        Turn(board, 6, 5).step(Step(24, 19, 5))
    o = Turn(board, 6, 5).step(Step(24, 18, 6)).options()
    assert o.complete and o.steps == [] and o.dice == (5,)


def test_bar_first_and_hits() -> None:
    board = pos({24: 2, 13: 5, 8: 3, 6: 4}, {22: 1, 12: 5, 17: 3, 1: 2, 19: 3}, my_bar=1)
    o = Turn(board, 3, 1).options()
    assert {s.src for s in o.steps} == {BAR}
    hit = [s for s in o.steps if s.dst == 22]
    assert hit and hit[0].hit and hit[0].text() == "bar/22*"


def test_steps_from_json() -> None:
    s = Step(13, 7, 6)
    assert Step.from_json(s.to_json()) == s
    assert parse_steps([{"from": "bar", "to": 22, "die": 3}, {"doublet": 4}]) == [
        Step(BAR, 22, 3),
        4,
    ]
    assert parse_steps([{"from": 6, "to": "off", "die": 6}]) == [Step(6, OFF, 6)]
    for bad, msg in [
        ({"from": 25, "to": 20, "die": 5}, "'from' is not valid"),
        ({"from": 13, "to": 7}, "a step is"),
        ({"from": 13, "to": 7, "die": 7}, "'die' is not valid"),
        ({"from": 13, "to": True, "die": 6}, "'to' is not valid: true"),  # JSON, not True
        (None, "a step is .*, got null"),
        ({"doublet": 0}, "a doublet is 1 to 6"),
    ]:
        with pytest.raises(DoubletError, match=msg):
            parse_steps([bad])
    with pytest.raises(DoubletError, match="steps are a list"):
        parse_steps("13/7")  # type: ignore[arg-type]


def test_path_to_every_legal_play() -> None:
    cases = [(board_from_position_id(c["pid"]), *c["dice"], STANDARD)
             for c in _cases("gnubg_refset.jsonl")[1::40]]  # fmt: skip
    cases += [
        (from_counts(c["position"]["mover"], c["position"]["opponent"]), *c["dice"], ACEY_DEUCEY)
        for c in _cases("acey_deucey.jsonl")[::4]
        if c["n_outcomes"] <= 500
    ]
    n = 0
    for board, d1, d2, variant in cases:
        outs, _ = legal_outcomes(board, d1, d2, variant)
        for i in range(len(outs)):
            t = Turn(board, d1, d2, variant)
            for it in t.path(i):
                t = t.step(it) if isinstance(it, Step) else t.choose(it)
            o = t.options()
            assert o.complete and o.outcome == i
            n += 1
    assert n > 2000
    i = parse_play(starting(), 3, 1, "24/21 24/23")
    with pytest.raises(IllegalPlayError, match="cannot lead"):
        Turn(starting(), 3, 1).step(Step(8, 5, 3)).path(i)
