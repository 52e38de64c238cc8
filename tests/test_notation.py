"""Play notation (doublet.formats.notation): gnubg's text, written and read back.

What this module checks:

- Writing as GNU Backgammon writes: for every (position after, move) pair of
  tests/data/gnubg_refset.jsonl (the best play at 0, 1 and 2 plies and every play of
  each ``top`` list), ``format_play`` gives gnubg's ``move`` string exactly; a roll with
  no legal play (gnubg's ``pass``, move null) gives "".
- The checker paths found in Python lead to exactly the outcomes of
  ``legal_outcomes`` (refset and Acey-Deucey samples).
- Round trip: ``parse_play(describe_outcomes(...)[i]) == i`` for every legal play of
  every refset case, a standard 1-1 with 2220 plays, and every Acey-Deucey case of
  tests/data/acey_deucey.jsonl with at most 3000 outcomes (1-2 chains included); the
  texts of one roll are all different, and ``describe_outcomes`` agrees with
  ``format_play``.
- Acey-Deucey: ``in/..`` for unentered checkers, the ``... then k-k: ...`` form of a 1-2
  chain (``no play`` when the doublet cannot be played), the highest doublet written
  when several lead to one outcome (against the slow generator of tests/reference.py).
- Forgiving reading: any order, case, spaces, commas, ``b``/``o``, chains, one checker
  with several dice, counts, hit marks left out.
- Hit marks: an unmarked part that can hit on the way or not means the play that does
  not hit; with two ways to hit the text is ambiguous and the error says so; a point
  written in a chain is where the checker lands; a hit that is forced needs no mark.
- Errors: malformed text raises NotationError, a legal-looking play that is not legal
  raises IllegalPlayError, each with a message naming the problem; the two stay
  different classes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from doublet.core.board import (
    ACEY_DEUCEY,
    STANDARD,
    STARTING,
    Board,
    flip,
    from_counts,
    starting,
)
from doublet.core.errors import AmbiguousPlayError, IllegalPlayError, NotationError
from doublet.formats.ids import board_from_position_id, position_id
from doublet.formats.notation import (
    _roll,
    describe_outcomes,
    format_play,
    parse_play,
    play_text,
)
from doublet.rules.movegen import legal_outcomes
from tests.helpers import pos
from tests.reference import legal_plays

DATA = Path(__file__).parent / "data"
AD_SAMPLE_LIMIT = 3000  # Acey-Deucey cases with at most this many outcomes are round-tripped


@cache
def refset() -> list[dict[str, Any]]:
    with open(DATA / "gnubg_refset.jsonl") as f:
        return [json.loads(line) for line in f]


@cache
def acey_deucey() -> list[dict[str, Any]]:
    with open(DATA / "acey_deucey.jsonl") as f:
        return [json.loads(line) for line in f]


def read(board: Board, d1: int, d2: int, text: str, variant: int = STANDARD) -> str:
    """The text gnubg would write for the play ``text`` is read as."""
    i = parse_play(board, d1, d2, text, variant)
    outs, again = legal_outcomes(board, d1, d2, variant)
    return format_play(board, outs[i], d1, d2, variant, bool(again[i]))


def round_trip(board: Board, d1: int, d2: int, variant: int, where: str) -> int:
    """Write every outcome of the roll, read each back; return how many there were."""
    outs, again = legal_outcomes(board, d1, d2, variant)
    texts = describe_outcomes(board, outs, again, d1, d2, variant)
    assert len(set(texts)) == len(texts), f"{where}: two outcomes share a text"
    for i, text in enumerate(texts):
        assert parse_play(board, d1, d2, text, variant) == i, f"{where}: {text!r}"
    return len(texts)


MOVER = {24: 2, 13: 5, 8: 3, 6: 5}  # the mover's starting checkers

# ---------------------------------------------------------------------------
# Writing as gnubg does
# ---------------------------------------------------------------------------


def test_gnubg_text_for_every_refset_play() -> None:
    failures = []
    pairs = 0
    for case in refset():
        board = board_from_position_id(case["pid"])
        d1, d2 = case["dice"]
        seen = set()
        for best in case["best"].values():
            seen.add((best["after"], best["move"]))
            seen.update((t["after"], t["move"]) for t in best.get("top", []))
        for after, move in sorted(seen, key=str):
            pairs += 1
            got = format_play(board, flip(board_from_position_id(after)), d1, d2)
            if got != (move or ""):
                failures.append(f"{case['pid']} {d1}{d2} -> {after}: gnubg {move!r}, got {got!r}")
    assert not failures, f"{len(failures)} of {pairs}:\n" + "\n".join(failures[:20])
    assert pairs > 13000


@pytest.mark.parametrize(
    ("pid", "dice", "after", "move"),
    [
        # From the refset. A point in between is written only where a blot was hit:
        ("wufgCRCM5+AAIw", (2, 1), "jOfgAAfgc/AESA", "24/23*/21"),
        ("I1dDQBXgCxyQTQ", (4, 4), "4EsYShqDYwiocg", "bar/21*/17* 22/18* 13/9"),
        # Equal paths once, with a count; the count covers the whole path:
        ("hq/IQQTg8+ABCg", (6, 6), "g8+DAQqGr8gBQg", "13/7*/1(2)"),
        ("H09AigH+BcAADw", (3, 3), "/gXAxAgfDyDFQA", "22/19*/16 22/19(2)"),
        ("swMAALkJAAAAAA", (5, 5), "MwAAYHYAAAAAAA", "6/1 4/off(2) 3/off"),
        # Moves are joined after sorting, the parts are not sorted again:
        ("34KYDBAfHECxYA", (5, 5), "HxyEYQPfgpgMEA", "bar/15 bar/20 16/11"),
        ("gzkIgF+2dwcAAA", (2, 2), "7rYDAMBgDgLgFw", "5/3 4/off 4/2"),
    ],
)
def test_gnubg_examples(pid: str, dice: tuple[int, int], after: str, move: str) -> None:
    board = board_from_position_id(pid)
    assert format_play(board, flip(board_from_position_id(after)), *dice) == move


def test_writing_rules_on_the_start_position() -> None:
    cases = {
        (6, 5, "24/18 13/8"): "24/18 13/8",
        (6, 5, "24/13"): "24/13",
        (3, 1, "8/5 6/5"): "8/5 6/5",
        (6, 6, "24/18(2) 13/7(2)"): "24/18(2) 13/7(2)",
        (2, 2, "13/9 13/11 6/4"): "13/9 13/11 6/4",
        (4, 4, "24/16(2)"): "24/16(2)",
        (1, 1, "8/7 7/6 6/5 5/4"): "8/4",
    }
    for (d1, d2, text), want in cases.items():
        assert read(STARTING, d1, d2, text) == want


def test_bar_and_off() -> None:
    bar = pos({13: 5, 8: 3, 6: 5, 24: 1}, {12: 5, 17: 3, 19: 4, 22: 1, 1: 2}, my_bar=1)
    assert read(bar, 3, 1, "bar/22 8/7") == "bar/22* 8/7"
    home = pos({6: 3, 5: 2, 3: 1}, {24: 2, 20: 3})
    # gnubg's order: by source, then the higher destination first.
    assert read(home, 6, 4, "6/off 6/2") == "6/2 6/off"
    assert read(home, 6, 6, "6/off(3) 5/off") == "6/off(3) 5/off"
    # A 2-1 with a single checker left on the 2 point: 2/1/off, written as one part.
    last = pos({2: 1}, {24: 2, 20: 3})
    assert read(last, 2, 1, "2/off") == "2/off"


def test_no_legal_play_is_empty() -> None:
    dance = pos(
        {13: 5, 8: 3, 6: 5, 24: 1},
        {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 3},
        my_bar=1,
    )
    assert format_play(dance, dance, 6, 5) == ""
    assert parse_play(dance, 6, 5, "") == 0
    assert parse_play(dance, 6, 5, "  No Play ") == 0
    with pytest.raises(IllegalPlayError, match="cannot be played here"):
        parse_play(dance, 6, 5, "bar/19")


def test_format_rejects_what_is_not_an_outcome() -> None:
    with pytest.raises(IllegalPlayError, match="not a legal outcome"):
        format_play(STARTING, STARTING, 6, 5)
    outs, _ = legal_outcomes(STARTING, 6, 5)
    with pytest.raises(IllegalPlayError, match="not a legal outcome"):
        format_play(STARTING, outs[0], 6, 5, again=True)


# ---------------------------------------------------------------------------
# Paths and round trips
# ---------------------------------------------------------------------------


def test_paths_lead_to_exactly_the_legal_outcomes() -> None:
    """The Python search behind the text (private ``_roll``) finds the same plays as
    the move generator: no outcome without a path, no path to a non-outcome."""
    for case in refset()[::10]:
        board = board_from_position_id(case["pid"])
        d1, d2 = case["dice"]
        outs, _ = legal_outcomes(board, d1, d2)
        assert set(_roll(board, d1, d2, STANDARD).stage.res) == {tuple(r) for r in outs.tolist()}
    for case in acey_deucey():
        if case["n_outcomes"] > AD_SAMPLE_LIMIT:
            continue
        board = from_counts(case["position"]["mover"], case["position"]["opponent"])
        d1, d2 = case["dice"]
        outs, again = legal_outcomes(board, d1, d2, ACEY_DEUCEY)
        want = {(tuple(r), a) for r, a in zip(outs.tolist(), again.tolist(), strict=True)}
        r = _roll(board, d1, d2, ACEY_DEUCEY)
        got = set(r.chain_best()) if r.chain else {(s, False) for s in r.stage.res}
        assert got == want, case["position"]


def test_round_trip_every_refset_play() -> None:
    total = 0
    for case in refset():
        board = board_from_position_id(case["pid"])
        d1, d2 = case["dice"]
        total += round_trip(board, d1, d2, STANDARD, f"{case['pid']} {d1}{d2}")
    assert total > 55000


def test_round_trip_a_one_one_with_2220_plays() -> None:
    board = board_from_position_id("AACAkCRJqqoAAA")
    assert round_trip(board, 1, 1, STANDARD, "AACAkCRJqqoAAA 11") == 2220


def test_round_trip_acey_deucey_sample() -> None:
    total = chains = 0
    for n, case in enumerate(acey_deucey()):
        if case["n_outcomes"] > AD_SAMPLE_LIMIT:
            continue
        board = from_counts(case["position"]["mover"], case["position"]["opponent"])
        d1, d2 = case["dice"]
        total += round_trip(board, d1, d2, ACEY_DEUCEY, f"acey_deucey.jsonl line {n + 1}")
        chains += {d1, d2} == {1, 2} and case["n_outcomes"] > 100
    assert total > 20000
    assert chains >= 5


def test_play_text_agrees_with_describe_outcomes() -> None:
    """play_text (one outcome, a pruned search for one path) writes what
    describe_outcomes (every path of the roll) writes, for every legal outcome of every
    refset case and of a 1-1 with 2220 plays; what is not an outcome is refused."""
    cases = [(board_from_position_id(c["pid"]), *c["dice"]) for c in refset()]
    cases.append((board_from_position_id("AACAkCRJqqoAAA"), 1, 1))
    total = 0
    for board, d1, d2 in cases:
        outs, again = legal_outcomes(board, d1, d2)
        texts = describe_outcomes(board, outs, again, d1, d2)
        for out, want in zip(outs, texts, strict=True):
            assert play_text(board, out, d1, d2) == want, (position_id(board), d1, d2, want)
        total += len(texts)
    assert total > 57000
    with pytest.raises(IllegalPlayError, match="not a legal outcome"):
        play_text(STARTING, STARTING, 6, 5)
    outs, _ = legal_outcomes(STARTING, 6, 5)
    with pytest.raises(IllegalPlayError, match="not a legal outcome"):
        play_text(STARTING, outs[0], 6, 5, again=True)
    with pytest.raises(IllegalPlayError, match="not a legal outcome"):
        play_text(STARTING, outs[0], 6, 4)
    # On the bar against a closed board: no die can be played, the play is "".
    shut = pos({24: 2, 13: 12}, {p: 2 for p in range(19, 25)}, my_bar=1)
    assert play_text(shut, shut, 6, 5) == format_play(shut, shut, 6, 5) == ""
    with pytest.raises(IllegalPlayError, match="not a legal outcome"):
        play_text(STARTING, STARTING, 6, 6)
    ad = starting(ACEY_DEUCEY)
    outs, again = legal_outcomes(ad, 2, 1, ACEY_DEUCEY)
    assert play_text(ad, outs[3], 2, 1, ACEY_DEUCEY, bool(again[3])) == format_play(
        ad, outs[3], 2, 1, ACEY_DEUCEY, bool(again[3])
    )


def test_describe_outcomes_agrees_with_format_play() -> None:
    for board, d1, d2, v in (
        (STARTING, 6, 5, STANDARD),
        (starting(ACEY_DEUCEY), 2, 1, ACEY_DEUCEY),
    ):
        outs, again = legal_outcomes(board, d1, d2, v)
        texts = describe_outcomes(board, outs, again, d1, d2, v)
        for i in range(0, len(texts), 7):
            assert format_play(board, outs[i], d1, d2, v, bool(again[i])) == texts[i]


# ---------------------------------------------------------------------------
# Acey-Deucey
# ---------------------------------------------------------------------------

AD_START = starting(ACEY_DEUCEY)
# All home but one checker on 8, no checker on 6: after 8/5 a 6-6 cannot be played.
AD_BEAR = pos({1: 4, 2: 4, 3: 4, 4: 2, 8: 1}, {24: 2}, opp_out=13)


def test_acey_deucey_entering() -> None:
    assert read(AD_START, 6, 5, "in/19 in/20", ACEY_DEUCEY) == "in/20 in/19"
    assert read(AD_START, 6, 5, "in/14", ACEY_DEUCEY) == "in/14"
    assert read(AD_START, 3, 3, "IN/22(3) in/22", ACEY_DEUCEY) == "in/22(4)"
    mixed = pos({24: 1}, {12: 5}, my_bar=1, my_out=13, opp_out=10)
    # Which checker entered where does not show: the bar checker is written higher.
    assert read(mixed, 3, 1, "in/22 bar/24", ACEY_DEUCEY) == "bar/24 in/22"
    assert read(mixed, 3, 1, "bar/22 in/24", ACEY_DEUCEY) == "bar/24 in/22"


def test_acey_deucey_chain_text() -> None:
    text = "in/24 in/23 then 6-6: in/19(2) 24/18 23/17"
    assert read(AD_START, 1, 2, text, ACEY_DEUCEY) == text
    i = parse_play(AD_START, 2, 1, " IN/23,in/24 THEN 66 :in/19 23/17 in/19 24/18", ACEY_DEUCEY)
    assert i == parse_play(AD_START, 1, 2, text, ACEY_DEUCEY)
    _, again = legal_outcomes(AD_START, 1, 2, ACEY_DEUCEY)
    assert again[i]


def test_acey_deucey_chain_with_no_doublet_play() -> None:
    assert read(AD_BEAR, 1, 2, "8/5 then 6-6: no play", ACEY_DEUCEY) == "8/5 then 6-6: no play"
    i = parse_play(AD_BEAR, 1, 2, "8/5 then 6-6: no play", ACEY_DEUCEY)
    assert parse_play(AD_BEAR, 1, 2, "8/7/5 then 6-6:", ACEY_DEUCEY) == i
    _, again = legal_outcomes(AD_BEAR, 1, 2, ACEY_DEUCEY)
    assert not again[i]
    with pytest.raises(IllegalPlayError, match="cannot be played here"):
        parse_play(AD_BEAR, 1, 2, "8/5 then 6-6: 6/off", ACEY_DEUCEY)
    with pytest.raises(IllegalPlayError, match="has a legal play here"):
        parse_play(AD_BEAR, 1, 2, "8/5 then 5-5: no play", ACEY_DEUCEY)


def test_acey_deucey_chain_ends_with_the_game() -> None:
    """A 1 and 2 that bear off the last two checkers win the game: no doublet follows,
    the text has no 'then', and one is refused; a doublet that bears off the last four
    does not roll again."""
    last_two = pos({2: 1, 1: 1}, {24: 2}, opp_out=13)
    assert read(last_two, 1, 2, "2/off 1/off", ACEY_DEUCEY) == "2/off 1/off"
    with pytest.raises(IllegalPlayError, match="bears off the last checker: the game is over"):
        parse_play(last_two, 1, 2, "2/off 1/off then 6-6: no play", ACEY_DEUCEY)
    last_six = pos({6: 4, 2: 1, 1: 1}, {24: 2}, opp_out=13)
    text = "2/off 1/off then 6-6: 6/off(4)"
    assert read(last_six, 1, 2, text, ACEY_DEUCEY) == text
    _, again = legal_outcomes(last_six, 1, 2, ACEY_DEUCEY)
    assert not again[parse_play(last_six, 1, 2, text, ACEY_DEUCEY)]
    with pytest.raises(IllegalPlayError, match="chooses a doublet"):  # the game goes on
        parse_play(last_six, 1, 2, "2/off 1/off", ACEY_DEUCEY)
    # The doublet's checkers need not stand on its point: 11/8, then 4-4 brings that
    # checker in and bears off all three (a review found this roll refused everywhere).
    last_three = pos({11: 1, 4: 2}, {24: 2}, opp_out=13)
    text = "11/8 then 4-4: 8/off 4/off(2)"
    assert read(last_three, 1, 2, "11/8 then 4-4: 8/4 4/off(3)", ACEY_DEUCEY) == text
    _, again = legal_outcomes(last_three, 1, 2, ACEY_DEUCEY)
    assert not again[parse_play(last_three, 1, 2, text, ACEY_DEUCEY)]


# 2 checkers on the 1 point, 6 on the 2 point: after the 1 and the 2, no doublet from 3-3
# up can be played, so one outcome is reached by four doublets.
AD_FOUR_WAYS = pos({1: 2, 2: 6}, {24: 10, 23: 2, 22: 1})


def test_acey_deucey_chain_writes_the_highest_doublet() -> None:
    """Against tests/reference.py: each outcome's text names the highest doublet that
    leads to it from some play of the 1 and the 2 (again = all four dice played)."""
    several = 0
    for board in (AD_BEAR, AD_START, AD_FOUR_WAYS):
        start = tuple(int(v) for v in board)
        mids, used = legal_plays(start, 1, 2, ACEY_DEUCEY)
        assert used == 2
        doublets: dict[tuple[tuple[int, ...], bool], set[int]] = {}
        for mid in mids:
            for k in range(1, 7):
                ends, m = legal_plays(mid, k, k, ACEY_DEUCEY)
                for end in ends:
                    doublets.setdefault((end, m == 4), set()).add(k)
        outs, again = legal_outcomes(board, 1, 2, ACEY_DEUCEY)
        texts = describe_outcomes(board, outs, again, 1, 2, ACEY_DEUCEY)
        for row, a, text in zip(outs.tolist(), again.tolist(), texts, strict=True):
            ks = doublets[(tuple(row), a)]
            assert f" then {max(ks)}-{max(ks)}: " in text, text
            several += len(ks) > 1
    assert several > 0  # the rule is put to the test
    outs, again = legal_outcomes(AD_FOUR_WAYS, 1, 2, ACEY_DEUCEY)
    texts = describe_outcomes(AD_FOUR_WAYS, outs, again, 1, 2, ACEY_DEUCEY)
    assert "2/off 1/off then 6-6: no play" in texts
    i = texts.index("2/off 1/off then 6-6: no play")
    for k in (3, 4, 5):
        text = f"2/off 1/off then {k}-{k}: no play"
        assert parse_play(AD_FOUR_WAYS, 1, 2, text, ACEY_DEUCEY) == i


def test_acey_deucey_one_two_without_chain() -> None:
    # The 1 and the 2 cannot both be played: a plain play, no doublet follows.
    stuck = pos({24: 1, 1: 14}, {22: 2, 21: 2, 12: 11})
    outs, again = legal_outcomes(stuck, 1, 2, ACEY_DEUCEY)
    texts = describe_outcomes(stuck, outs, again, 1, 2, ACEY_DEUCEY)
    assert texts == ["24/23"]
    with pytest.raises(IllegalPlayError, match="no doublet follows"):
        parse_play(stuck, 1, 2, "24/23 then 6-6: 23/17", ACEY_DEUCEY)


# ---------------------------------------------------------------------------
# Reading: forgiving input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dice", "text", "want"),
    [
        ((6, 5), "13/8 24/18", "24/18 13/8"),
        ((6, 5), "  24 / 18   13/8 ", "24/18 13/8"),
        ((6, 5), "24/18,13/8", "24/18 13/8"),
        ((6, 5), "24/18/13", "24/13"),
        ((6, 5), "24/18 18/13", "24/13"),
        ((6, 2), "13/5", "13/5"),
        ((4, 4), "24/16 13/5", "24/16 13/5"),
        ((4, 4), "24/20/16 13/9/5", "24/16 13/5"),
        ((6, 6), "24/18(2) 13/7 (2)", "24/18(2) 13/7(2)"),
        ((6, 6), "13/7 24/18 24/18 13/7", "24/18(2) 13/7(2)"),
        ((3, 1), "8/5, 6/5", "8/5 6/5"),
        ((4, 4), "13/5(2)", "13/5(2)"),
        ((5, 5), "13/3(2)", "13/3(2)"),
    ],
)
def test_forgiving_reading(dice: tuple[int, int], text: str, want: str) -> None:
    assert read(STARTING, *dice, text) == want
    assert read(STARTING, *dice, text.upper()) == want


def test_bar_and_off_words() -> None:
    bar = pos({13: 5, 8: 3, 6: 5, 24: 1}, {12: 5, 17: 3, 19: 5, 1: 2}, my_bar=1)
    for text in ("bar/20 13/7", "B/20 13/7", "b/20, 13/7", "13/7 BAR/20"):
        assert read(bar, 6, 5, text) == "bar/20 13/7"
    home = pos({6: 3, 5: 2, 3: 1}, {24: 2, 20: 3})
    for text in ("6/off 5/off", "6/O 5/o", "5/OFF 6/off"):
        assert read(home, 6, 5, text) == "6/off 5/off"


# ---------------------------------------------------------------------------
# Reading: hit marks
# ---------------------------------------------------------------------------

BLOT_7 = pos(MOVER, {7: 1, 12: 5, 17: 3, 19: 4, 1: 2})
BLOTS_7_11 = pos(MOVER, {7: 1, 11: 1, 12: 4, 17: 3, 19: 4, 1: 2})
BLOT_19 = pos(MOVER, {19: 1, 12: 5, 17: 3, 20: 4, 1: 2})
BLOT_19_18_CLOSED = pos(MOVER, {19: 1, 18: 2, 12: 5, 17: 3, 20: 2, 1: 2})


@pytest.mark.parametrize(
    ("board", "dice", "text", "want"),
    [
        # 13/5 with 6-2 can go by 7 (a blot) or by 11: unmarked means no hit.
        (BLOT_7, (6, 2), "13/5", "13/5"),
        (BLOT_7, (6, 2), "13/7*/5", "13/7*/5"),
        (BLOT_7, (6, 2), "13/7/5", "13/7*/5"),  # landing on a blot hits it
        (BLOT_7, (6, 2), "13/11/5", "13/5"),
        (BLOTS_7_11, (6, 2), "13/11/5", "13/11*/5"),
        (BLOTS_7_11, (6, 2), "13/7*/5", "13/7*/5"),
        # A point written in a chain is where the checker lands.
        (BLOT_19, (6, 5), "24/13", "24/13"),
        (BLOT_19, (6, 5), "24/18/13", "24/13"),
        (BLOT_19, (6, 5), "24/18 18/13", "24/13"),
        (BLOT_19, (6, 5), "24/19/13", "24/19*/13"),
        (BLOT_19, (6, 5), "24/19* 19/13", "24/19*/13"),
        # The only way to 13 hits on 19: no mark needed.
        (BLOT_19_18_CLOSED, (6, 5), "24/13", "24/19*/13"),
    ],
)
def test_hit_marks(board: Board, dice: tuple[int, int], text: str, want: str) -> None:
    assert read(board, *dice, text) == want


def test_ambiguous_hit_asks_for_a_mark() -> None:
    with pytest.raises(AmbiguousPlayError, match=r"ambiguous.*13/11\*/5 or 13/7\*/5.*mark the hit"):
        parse_play(BLOTS_7_11, 6, 2, "13/5")


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("24/x", "unknown point 'x'"),
        ("13/13", "does not move"),
        ("6/8", "moves backwards"),
        ("25/20", "point 25 is out of range 1-24"),
        ("0/off", "point 0 is out of range"),
        ("24/18/", "an empty point"),
        ("24", "is not a move"),
        ("24-18", "is not a move"),
        ("off/3", "'off' can only be where a move ends"),
        ("24/bar", "'bar' can only be where a move starts"),
        ("24*/18", "a hit mark"),
        ("6/off*", "nothing can be hit"),
        ("13/8(5)", "a count is 1 to 4"),
        ("13/8(2", "a count is written at the end"),
        ("24/18 then 6-5: 13/7", "6-5 is not one"),
        ("24/18 then 7-7: 13/7", "dice are 1 to 6"),
        ("24/18 then: 13/7", "after 'then' write the doublet"),
        ("then 6-6: 24/18", "before 'then' comes the play"),
        ("24/18 then 6-6: 13/7 then 5-5: 8/3", "one 'then' at most"),
        ("x" * 5000, r"at most 200 characters, got 'x{40}'\.\.\. \(5000 characters\)$"),
    ],
)
def test_notation_errors(text: str, fragment: str) -> None:
    with pytest.raises(NotationError, match=fragment) as info:
        parse_play(STARTING, 6, 5, text)
    assert not isinstance(info.value, IllegalPlayError)


HIGHER_DIE = pos({24: 1, 1: 14}, {13: 2, 12: 13})  # 6-5: only the 6 can be played
ON_BAR = pos({13: 5, 8: 3, 6: 5, 24: 1}, {12: 5, 17: 3, 19: 5, 1: 2}, my_bar=1)


@pytest.mark.parametrize(
    ("board", "dice", "text", "fragment"),
    [
        (STARTING, (6, 5), "24/14", "the roll 6-5 cannot move 24/14"),
        (STARTING, (6, 5), "24/20 20/13", "the roll 6-5 cannot move 24/20"),
        (STARTING, (6, 5), "24/18", "a legal play of 6-5 here uses both dice"),
        (STARTING, (2, 2), "13/11(2)", "uses four dice"),
        (STARTING, (6, 5), "24/18 13/7", "does not have the dice"),
        (STARTING, (6, 5), "", "has a legal play here"),
        (STARTING, (6, 5), "8/3 6/1", "point 1 is closed"),
        (STARTING, (5, 1), "24/1", "the roll 5-1 cannot move 24/1"),  # not "closed"
        (STARTING, (6, 5), "24/13*", "there is no blot on 13 to hit"),
        (STARTING, (6, 5), "20/14 13/8", "no checker on 20"),
        (STARTING, (6, 6), "24/18(3) 13/7", "only 2 checkers on 24"),
        (STARTING, (6, 5), "bar/20 13/7", "no checker on the bar"),
        (STARTING, (6, 5), "in/20 13/7", "unentered"),
        (STARTING, (6, 5), "24/18 then 6-6: 13/7", "follows only an Acey-Deucey 1-2"),
        (STARTING, (6, 5), "6/off 8/3", "not a legal play of 6-5 here"),
        (ON_BAR, (6, 5), "13/7 8/3", "checkers on the bar must enter first"),
        (ON_BAR, (6, 5), "bar/19 13/8", "point 19 is closed"),
        (HIGHER_DIE, (6, 5), "24/19", "it must be the 6"),
        (HIGHER_DIE, (6, 5), "24/18 1/off", "only one die of 6-5"),
        (BLOT_7, (6, 2), "13/11*/5", "no blot on 11"),
    ],
)
def test_illegal_play_errors(board: Board, dice: tuple[int, int], text: str, fragment: str) -> None:
    with pytest.raises(IllegalPlayError, match=fragment) as info:
        parse_play(board, *dice, text)
    assert not isinstance(info.value, NotationError)


def test_acey_deucey_illegal_plays() -> None:
    with pytest.raises(IllegalPlayError, match="chooses a doublet"):
        parse_play(AD_START, 1, 2, "in/24 in/23", ACEY_DEUCEY)
    with pytest.raises(IllegalPlayError, match="only 1 checker on 23"):
        parse_play(AD_START, 1, 2, "in/24 in/23 then 6-6: 24/18(2) 23/17(2)", ACEY_DEUCEY)
    with pytest.raises(IllegalPlayError, match="no checker unentered"):
        board = pos({24: 1, 13: 13}, {12: 5}, my_bar=1, opp_out=10)
        parse_play(board, 3, 1, "in/22 bar/24", ACEY_DEUCEY)


def test_the_two_errors_stay_different() -> None:
    assert not issubclass(NotationError, IllegalPlayError)
    assert not issubclass(IllegalPlayError, NotationError)


def test_boards_are_not_changed() -> None:
    board = STARTING.copy()
    outs, again = legal_outcomes(board, 6, 5)
    describe_outcomes(board, outs, again, 6, 5)
    parse_play(board, 6, 5, "24/13")
    assert np.array_equal(board, STARTING)


def test_the_longest_plays_written_longhand_fit_under_the_cap() -> None:
    """MAX_PLAY_TEXT leaves room for a 1-2 chain written hop by hop and spaced out."""
    from doublet.formats.notation import MAX_PLAY_TEXT

    hops = " ".join(f"{p} / {p - 1}" for p in range(24, 20, -1))
    text = f"bar / 24 , bar / 23  then 6-6 :  {hops} {hops} {hops}"
    assert 120 < len(text) <= MAX_PLAY_TEXT
    with pytest.raises(IllegalPlayError):  # parsed, then judged: not the length's error
        parse_play(STARTING, 2, 1, text)
