"""Position formats and validation (doublet.formats.ids).

What this module checks:

- The start position: gnubg Position ID ``4HPwATDgc/ABMA`` and the XGID
  ``XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10`` both give doublet.core.board.STARTING,
  and both are written back exactly.
- XGID reading as gnubg's SetXGID/PositionFromXG does: the board is always written from
  the uppercase player's side; with turn -1 the lowercase player is on roll and the board
  is turned to its view (a hand-made example, a public one, and "swap the chairs": an
  XGID and its mirror image give the same board). The other fields are kept, the prefix
  is optional, ``xgid_dice`` reads the roll.
- Every gnubg reference position (tests/data/gnubg_refset.jsonl, gnubg_race.jsonl): the
  board built from its ``board`` fields equals the decoded ``pid``, and the ID, the XGID
  (either side on roll) and the JSON board round-trip; the IDs of the positions after
  each legal play round-trip too.
- Every Acey-Deucey JSON board of tests/data/acey_deucey.jsonl round-trips.
- Hypothesis, on random valid boards of both variants (strategy ``boards``): validate
  accepts them; JSON, gnubg ID and XGID round-trip (ID and XGID when nothing is
  unentered); parse_position reads every format back to the same board; flip twice is
  the identity, and a flipped board is valid too.
- Every kind of bad input (malformed text, impossible positions) raises
  InvalidPositionError, and its message names the problem.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from doublet.core.board import (
    ACEY_DEUCEY,
    CHECKERS,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    OPP_OFF,
    OPP_OUT,
    STANDARD,
    STARTING,
    Board,
    empty,
    flip,
    from_counts,
    starting,
)
from doublet.core.errors import InvalidPositionError
from doublet.formats.ids import (
    XGID,
    _valid,
    board_from_json,
    board_from_position_id,
    board_to_json,
    decode_match_id,
    format_xgid,
    load_json_board,
    parse_position,
    parse_xgid,
    position_id,
    validate,
    xgid_dice,
)
from tests import reference
from tests.helpers import pos

DATA = Path(__file__).parent / "data"
START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def same(a: Board, b: Board) -> bool:
    return a.dtype == np.int8 and a.shape == b.shape and bool((a == b).all())


def bar_against_closed_boards(b: Board) -> bool:
    """Both sides on the bar, both home boards closed (cannot arise; gnubg refuses it)."""
    return bool(b[MY_BAR] > 0 and b[OPP_BAR] < 0 and (b[1:7] >= 2).all() and (b[19:25] <= -2).all())


def mirror_xgid(text: str) -> str:
    """The same game with the chairs swapped: upper and lower case exchanged, the board
    read from the other side, cube owner, turn and scores exchanged."""
    fields = text.removeprefix("XGID=").split(":")
    fields[0] = fields[0][::-1].swapcase()
    fields[2] = str(-int(fields[2]))
    fields[3] = str(-int(fields[3]))
    fields[5], fields[6] = fields[6], fields[5]
    return "XGID=" + ":".join(fields)


# ---------------------------------------------------------------------------
# Random valid boards
# ---------------------------------------------------------------------------


@st.composite
def boards(draw: st.DrawFn, variant: int | None = None) -> tuple[Board, int]:
    """A valid board of either variant (or the one given) and its variant.

    Each side puts n of its checkers on points not held by the other side, on the bar,
    or (Acey-Deucey, only while nothing is borne off) unentered; 15 - n are off."""
    v = draw(st.sampled_from([STANDARD, ACEY_DEUCEY])) if variant is None else variant
    b = empty()
    for sign, bar, out, off in ((1, MY_BAR, MY_OUT, MY_OFF), (-1, OPP_BAR, OPP_OUT, OPP_OFF)):
        entering = v == ACEY_DEUCEY and draw(st.booleans())
        n = CHECKERS if entering else draw(st.integers(0, CHECKERS))
        spots: list[int | str] = [p for p in range(1, 25) if b[p] * sign >= 0]
        spots += ["bar"] + (["out"] if entering else [])
        for place in draw(st.lists(st.sampled_from(spots), min_size=n, max_size=n)):
            if isinstance(place, int):
                b[place] += sign
            elif place == "bar":
                b[bar] += sign
            else:
                b[out] += 1
        b[off] = CHECKERS - n
    assume(not (b[MY_OFF] == CHECKERS and b[OPP_OFF] == CHECKERS))
    assume(not bar_against_closed_boards(b))
    return b, v


def no_unentered(b: Board) -> bool:
    return bool(b[MY_OUT] == 0 and b[OPP_OUT] == 0)


# ---------------------------------------------------------------------------
# Start position and hand-made examples
# ---------------------------------------------------------------------------


def test_start_position_id() -> None:
    assert same(board_from_position_id(START_ID), STARTING)
    assert position_id(STARTING) == START_ID


def test_start_position_xgid() -> None:
    x = parse_xgid(START_XGID)
    assert same(x.board, STARTING)
    assert x.text() == START_XGID
    assert format_xgid(STARTING) == START_XGID
    assert (x.cube, x.cube_owner, x.turn, x.dice) == (0, 0, 1, "00")
    assert (x.score_x, x.score_o, x.crawford, x.match_length, x.max_cube) == (0, 0, 0, 0, 10)
    assert x.cube_value == 1
    assert xgid_dice(x) is None


def test_pos_builder_matches_starting() -> None:
    assert same(pos({24: 2, 13: 5, 8: 3, 6: 5}, {19: 5, 17: 3, 12: 5, 1: 2}), STARTING)


def test_xgid_prefix_is_optional() -> None:
    bare = START_XGID.removeprefix("XGID=")
    assert parse_xgid(bare) == parse_xgid(START_XGID)
    assert parse_xgid(bare).text() == START_XGID
    assert parse_xgid("  " + START_XGID + "\n").text() == START_XGID


def test_xgid_public_example() -> None:
    """From bug-gnubg (2010-06): the opponent opened 4-2 (8/4 6/4), the uppercase player
    is on roll with 4-6; money play with Jacoby and beavers (flag 3)."""
    text = "XGID=-b----E-C---eE---b-d-b--B-:0:0:1:46:0:0:3:0:10"
    x = parse_xgid(text)
    assert same(x.board, pos({24: 2, 13: 5, 8: 3, 6: 5}, {21: 2, 19: 4, 17: 2, 12: 5, 1: 2}))
    assert x.dice == "46" and xgid_dice(x) == (4, 6) and xgid_dice(text) == (4, 6)
    assert x.crawford == 3 and x.match_length == 0
    assert x.text() == text


def test_xgid_lowercase_on_roll_turns_the_board() -> None:
    """turn -1: the lowercase player is on roll and the board is seen from its side. Here
    it has one checker on its bar (index 0) and one on the uppercase player's point 3,
    which is its own point 22; its other 13 stand as at the start."""
    text = "XGID=a--a--E-C---eE---c-e----B-:1:-1:-1:52:2:3:0:7:10"
    x = parse_xgid(text)
    mover = {22: 1, 13: 5, 8: 3, 6: 5}
    opponent = {19: 5, 17: 3, 12: 5, 1: 2}  # the uppercase player, in the mover's numbering
    assert same(x.board, pos(mover, opponent, my_bar=1))
    assert x.turn == -1 and x.cube_owner == -1 and x.cube_value == 2
    assert (x.score_x, x.score_o, x.match_length) == (2, 3, 7)
    assert xgid_dice(x) == (5, 2)
    assert x.text() == text
    again = format_xgid(
        x.board, -1, (5, 2), cube=1, cube_owner=-1, score_x=2, score_o=3, match_length=7
    )
    assert again == text


def test_xgid_mirror_gives_the_same_board() -> None:
    for text in (START_XGID, "XGID=a--a--E-C---eE---c-e----B-:1:-1:-1:52:2:3:0:7:10"):
        x, m = parse_xgid(text), parse_xgid(mirror_xgid(text))
        assert same(x.board, m.board)
        assert m.turn == -x.turn and m.cube_owner == -x.cube_owner
        assert (m.score_x, m.score_o) == (x.score_o, x.score_x)


def test_xgid_cube_actions_and_dice_order() -> None:
    for dice in ("D", "B", "R", "00"):
        text = xgid_with(dice=dice, flag="2")  # money play with beavers
        x = parse_xgid(text)
        assert x.dice == dice and xgid_dice(x) is None
        assert x.text() == text
    for dice in ("13", "31", "66"):
        text = START_XGID.replace(":00:", f":{dice}:")
        assert xgid_dice(text) == (int(dice[0]), int(dice[1]))
        assert parse_xgid(text).text() == text
    assert format_xgid(STARTING, 1, "D").split(":")[4] == "D"


def test_xgid_equality_hash_repr_and_read_only_board() -> None:
    x = parse_xgid(START_XGID)
    assert x == parse_xgid(START_XGID) and hash(x) == hash(parse_xgid(START_XGID))
    assert x != parse_xgid(START_XGID.replace(":00:", ":31:"))
    assert repr(x) == f"parse_xgid({START_XGID!r})"
    assert not x.board.flags.writeable
    b = STARTING.copy()
    y = XGID(board=b)
    b[6] = 0  # the XGID keeps its own copy
    assert y.text() == START_XGID


def test_finished_game_is_a_position() -> None:
    """Exactly one side with all 15 off: the position after the last play."""
    for b in (pos({}, {3: 2}), pos({5: 1}, {})):
        validate(b)
        assert same(board_from_position_id(position_id(b)), b)
        assert same(parse_xgid(format_xgid(b)).board, b)
        assert same(board_from_json(board_to_json(b, STANDARD))[0], b)


def test_parse_position_formats() -> None:
    for given_ in (START_ID, START_XGID, board_to_json(STARTING, STANDARD)):
        board, variant, meta = parse_position(given_)
        assert same(board, STARTING) and variant == STANDARD
    assert parse_position(START_ID)[2] == {"format": "gnubg"}
    assert parse_position(json.dumps(board_to_json(STARTING, "standard")))[2] == {"format": "json"}
    meta = parse_position(START_XGID.replace(":00:", ":42:"))[2]
    assert meta["format"] == "xgid" and meta["roll"] == (4, 2) and meta["dice"] == "42"
    assert meta["xgid"] == parse_xgid(START_XGID.replace(":00:", ":42:"))
    assert meta["max_cube"] == 10 and meta["turn"] == 1
    board, _, meta = parse_position(START_ID + ":cAkAAAAAAAAA")
    assert same(board, STARTING) and meta["match_id"] == "cAkAAAAAAAAA"


def test_parse_position_acey_deucey() -> None:
    ad = board_to_json(starting(ACEY_DEUCEY), ACEY_DEUCEY)
    board, variant, meta = parse_position(ad)
    assert same(board, starting(ACEY_DEUCEY)) and variant == ACEY_DEUCEY
    board, variant, meta = parse_position(json.dumps(ad), variant="acey-deucey")
    assert variant == ACEY_DEUCEY
    # A gnubg ID or XGID read as Acey-Deucey: nothing unentered, and meta says so.
    for text in (START_ID, START_XGID):
        board, variant, meta = parse_position(text, variant=ACEY_DEUCEY)
        assert same(board, STARTING) and variant == ACEY_DEUCEY
        assert "unentered" in meta["note"]


# ---------------------------------------------------------------------------
# Reference data
# ---------------------------------------------------------------------------


def gnubg_board(side: dict[str, list[int]]) -> Board:
    """tests/data boards: 25 ints per side, index 0..23 = points 1..24, 24 = bar."""
    on_roll, opponent = side["on_roll"], side["opponent"]
    return from_counts([0, *on_roll[:24], on_roll[24]], [0, *opponent[:24], opponent[24]])


def check_round_trips(b: Board, variant: int = STANDARD) -> None:
    validate(b, variant)
    d = board_to_json(b, variant)
    assert same(board_from_json(d)[0], b)
    assert same(board_from_json(json.dumps(d))[0], b)
    assert same(parse_position(d)[0], b)
    if no_unentered(b):
        pid = position_id(b)
        assert same(board_from_position_id(pid), b)
        assert same(parse_position(pid, variant)[0], b)
        for turn in (1, -1):
            text = format_xgid(b, turn)
            x = parse_xgid(text)
            assert same(x.board, b) and x.text() == text
            assert same(parse_position(text, variant)[0], b)
            assert same(parse_xgid(mirror_xgid(text)).board, b)


@pytest.mark.parametrize("name", ["gnubg_refset.jsonl", "gnubg_race.jsonl"])
def test_gnubg_reference_positions(name: str) -> None:
    n = 0
    for line in (DATA / name).open():
        case = json.loads(line)
        b = gnubg_board(case["board"])
        assert same(board_from_position_id(case["pid"]), b), case["pid"]
        assert position_id(b) == case["pid"]
        check_round_trips(b)
        for after in case.get("legal", []):
            assert position_id(board_from_position_id(after)) == after
        n += 1
    assert n > 0


def test_acey_deucey_reference_boards() -> None:
    n = 0
    for line in (DATA / "acey_deucey.jsonl").open():
        given_ = json.loads(line)["position"]
        b, variant = board_from_json(given_)
        assert variant == ACEY_DEUCEY
        assert board_to_json(b, variant) == given_
        check_round_trips(b, variant)
        n += 1
    assert n > 0


# ---------------------------------------------------------------------------
# Properties on random boards
# ---------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(boards())
def test_random_boards_round_trip(bv: tuple[Board, int]) -> None:
    check_round_trips(*bv)


@settings(max_examples=500, deadline=None)
@given(boards(STANDARD))
def test_position_id_is_the_bitwise_reference(bv: tuple[Board, int]) -> None:
    """position_id and board_from_position_id (strings and integers) against the
    bit-by-bit reference of tests/reference.py, both ways, on random boards."""
    b, _ = bv
    assume(no_unentered(b))
    pid = position_id(b)
    assert pid == reference.position_id_bits(b)
    counts = reference.position_id_counts(pid)
    assert counts is not None
    opp, me = counts
    back = board_from_position_id(pid)
    assert [max(int(back[p]), 0) for p in range(1, 25)] == me[:24]
    assert [max(-int(back[25 - p]), 0) for p in range(1, 25)] == opp[:24]
    assert int(back[MY_BAR]) == me[24] and -int(back[OPP_BAR]) == opp[24]


def test_position_id_bits_after_the_fiftieth_place_are_not_read() -> None:
    """gnubg reads 50 places and stops; so does the decoder (the reference too)."""
    board = pos({6: 2, 5: 1}, {19: 2})  # 5 checkers: 55 of the 80 bits are read
    base = position_id(board)
    data = bytearray(base64.b64decode(base + "=="))
    data[9] |= 0x80  # bit 79
    pid = base64.b64encode(bytes(data)).decode()[:14]
    assert pid != base
    assert same(board_from_position_id(pid), board)
    assert reference.position_id_counts(pid) == reference.position_id_counts(base)


@settings(max_examples=200, deadline=None)
@given(
    boards(STANDARD),
    st.sampled_from([1, -1]),
    st.one_of(st.none(), st.tuples(st.integers(1, 6), st.integers(1, 6))),
    st.integers(0, 10),
    st.sampled_from([-1, 0, 1]),
    st.integers(1, 25),
    st.data(),
)
def test_random_xgids_round_trip(
    bv: tuple[Board, int],
    turn: int,
    dice: tuple[int, int] | None,
    cube: int,
    owner: int,
    length: int,
    data: st.DataObject,
) -> None:
    b = bv[0]
    score_x = data.draw(st.integers(0, length - 1))
    score_o = data.draw(st.integers(0, length - 1))
    crawford = int(length - 1 in (score_x, score_o) and data.draw(st.booleans()))
    text = format_xgid(
        b,
        turn,
        dice,
        cube=cube,
        cube_owner=owner,
        score_x=score_x,
        score_o=score_o,
        crawford=crawford,
        match_length=length,
    )
    x = parse_xgid(text)
    assert same(x.board, b) and x.text() == text
    assert (x.turn, x.cube, x.cube_owner, x.match_length) == (turn, cube, owner, length)
    assert (x.score_x, x.score_o, x.crawford) == (score_x, score_o, crawford)
    assert xgid_dice(x) == dice
    m = parse_xgid(mirror_xgid(text))
    assert same(m.board, b) and m.turn == -turn
    assert mirror_xgid(m.text()) == text


@settings(max_examples=300, deadline=None)
@given(boards())
def test_flip_twice_is_identity(bv: tuple[Board, int]) -> None:
    b, variant = bv
    f = flip(b)
    assert same(flip(f), b)
    validate(f, variant)
    assert board_to_json(f, variant) == {
        "variant": board_to_json(b, variant)["variant"],
        "mover": board_to_json(b, variant)["opponent"],
        "opponent": board_to_json(b, variant)["mover"],
    }


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def raises(fn: Any, *args: Any, match: list[str], **kwargs: Any) -> str:
    """Call fn, expect InvalidPositionError; every string of match must be in the message."""
    with pytest.raises(InvalidPositionError) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    for part in match:
        assert part in msg, f"{part!r} not in {msg!r}"
    return msg


def xgid_with(**changes: str) -> str:
    """START_XGID with some fields replaced (by name)."""
    names = ["position", "cube", "owner", "turn", "dice", "sx", "so", "flag", "length", "max"]
    fields = START_XGID.removeprefix("XGID=").split(":")
    for name, value in changes.items():
        fields[names.index(name)] = value
    return "XGID=" + ":".join(fields)


START_POS = "-b----E-C---eE---c-e----B-"
# The lowercase player on the bar, both home boards closed; add the uppercase player's bar.
CLOSED_BOARDS = "a" + "B" * 6 + "-" * 12 + "b" * 6

XGID_ERRORS = [
    (START_XGID.rsplit(":", 1)[0], ["9 fields", "expected 10"]),
    (START_XGID + ":0", ["11 fields"]),
    ("XGID=", ["1 fields"]),
    (xgid_with(position=START_POS[:-1]), ["26 characters", "got 25"]),
    (xgid_with(position=START_POS[:-1] + "*"), ["bad character '*'", "index 25"]),
    (xgid_with(position="-b----E-C---eE---c-e----P-"), ["'P'", "point 24", "16 checkers"]),
    (xgid_with(position="-b----E-C---eE---c-e----Z-"), ["'Z'", "26 checkers"]),
    (xgid_with(position="Ab----E-C---eE---c-e----B-"), ["uppercase 'A' at index 0"]),
    (xgid_with(position="-b----E-C---eE---c-e----Ba"), ["lowercase 'a' at index 25"]),
    (xgid_with(position="-b----E-C---eE---c-e----BA"), ["uppercase player 16 checkers"]),
    (xgid_with(position="ab----E-C---eE---c-e----B-"), ["lowercase player 16 checkers"]),
    (xgid_with(position="-" * 26), ["both sides have borne off all 15"]),
    (xgid_with(position=CLOSED_BOARDS + "A"), ["bar against closed home boards"]),
    (xgid_with(cube="x"), ["field 2 (cube)", "integer", "'x'"]),
    (xgid_with(cube="+1"), ["field 2 (cube)", "integer"]),
    (xgid_with(cube=""), ["field 2 (cube)", "integer"]),
    (xgid_with(cube="-1"), ["cube", "0-15", "-1"]),
    (xgid_with(cube="16"), ["cube", "0-15", "16"]),
    (xgid_with(owner="2"), ["cube owner", "got 2"]),
    (xgid_with(turn="0"), ["field 4 (turn)", "got '0'"]),
    (xgid_with(turn="1.0"), ["field 4 (turn)", "integer"]),
    (xgid_with(dice="7"), ["dice", "'7'"]),
    (xgid_with(dice="07"), ["dice '07'", "1-6"]),
    (xgid_with(dice="30"), ["dice '30'", "1-6"]),
    (xgid_with(dice="123"), ["dice", "'123'"]),
    (xgid_with(dice="X"), ["dice", "'X'"]),
    (xgid_with(dice=""), ["dice", "''"]),
    (xgid_with(sx="-1"), ["uppercase player's score", "-1"]),
    (xgid_with(so="-2"), ["lowercase player's score", "-2"]),
    (xgid_with(sx="7", length="7"), ["uppercase player's score 7", "match length 7"]),
    (xgid_with(so="9", length="7"), ["lowercase player's score 9", "match length 7"]),
    (xgid_with(flag="2", length="7"), ["Crawford flag", "got 2"]),
    (xgid_with(flag="1", length="7", sx="3"), ["Crawford game", "match length - 1 = 6"]),
    (xgid_with(flag="4"), ["money play", "0-3", "got 4"]),
    (xgid_with(length="-3"), ["match length", "-3"]),
    (xgid_with(max="-1"), ["max cube", "-1"]),
]


@pytest.mark.parametrize(("text", "match"), XGID_ERRORS)
def test_xgid_errors(text: str, match: list[str]) -> None:
    msg = raises(parse_xgid, text, match=match)
    assert "XGID" in msg and text in msg
    # parse_position routes anything with ':' to the XGID reader, with the same message.
    assert raises(parse_position, text, match=match) == msg


def test_xgid_valid_edge_cases() -> None:
    """Edges of the checks above that are valid."""
    parse_xgid(xgid_with(sx="6", so="6", length="7", flag="1"))
    parse_xgid(xgid_with(length="1", flag="1"))  # a 1-point match is its own Crawford game
    parse_xgid(xgid_with(flag="3", cube="15", owner="-1"))
    parse_xgid(xgid_with(position=CLOSED_BOARDS + "-"))  # only one side on the bar


def test_format_xgid_errors() -> None:
    ad = starting(ACEY_DEUCEY)
    raises(format_xgid, ad, match=["cannot hold unentered checkers", "index 28"])
    raises(format_xgid, STARTING, 1, (0, 3), match=["two dice 1-6", "(0, 3)"])
    raises(format_xgid, STARTING, 1, (1, 2, 3), match=["two dice", "(1, 2, 3)"])
    raises(format_xgid, STARTING, 1, "77", match=["dice '77'"])
    raises(format_xgid, STARTING, 0, match=["turn", "got 0"])
    raises(format_xgid, STARTING, cube_owner=5, match=["cube owner", "got 5"])
    raises(format_xgid, STARTING, cube=True, match=["cube must be an integer", "True"])
    raises(XGID, STARTING[:20], match=["shape (30,)"])
    raises(XGID, [0] * 30, match=["int8 array", "list"])
    raises(xgid_dice, 42, match=["XGID or its text"])
    raises(parse_xgid, 42, match=["an XGID is a string, got 42"])


def raw_id(opponent: list[int], on_roll: list[int]) -> str:
    """A gnubg Position ID from gnubg's two 25-int sides, with no checks at all."""
    bits: list[int] = []
    for side in (opponent, on_roll):
        for n in side:
            bits += [1] * n + [0]
    data = bytearray(10)
    for i, bit in enumerate(bits[:80]):
        data[i // 8] |= bit << (i % 8)
    return base64.b64encode(bytes(data)).decode("ascii")[:14]


def test_raw_id_helper_matches_start() -> None:
    side = [0] * 25
    for p, n in ((24, 2), (13, 5), (8, 3), (6, 5)):
        side[p - 1] = n
    assert raw_id(side, side) == START_ID


def test_gnubg_id_errors() -> None:
    raises(board_from_position_id, START_ID[:-1], match=["14 characters", "got 13"])
    raises(board_from_position_id, START_ID + "A", match=["14 characters", "got 15"])
    raises(board_from_position_id, "4HPwATDgc/AB*A", match=["outside base64"])
    raises(board_from_position_id, 12, match=["is a string, got 12"])
    sixteen = [16] + [0] * 24
    raises(
        board_from_position_id,
        raw_id([0] * 25, sixteen),
        match=["the side on roll 16 checkers"],
    )
    raises(
        board_from_position_id,
        raw_id(sixteen, [0] * 25),
        match=["the opponent 16 checkers"],
    )
    # The side on roll on its point 6, the opponent on its point 19 = the same point.
    me, opp = [0] * 25, [0] * 25
    me[5], opp[18] = 2, 1
    raises(board_from_position_id, raw_id(opp, me), match=["both sides on point 6"])
    raises(board_from_position_id, "AAAAAAAAAAAAAA", match=["both sides have borne off all 15"])
    closed = [2] * 6 + [0] * 18 + [1]  # home board closed, one on the bar
    raises(
        board_from_position_id,
        raw_id(closed, closed),
        match=["bar against closed home boards"],
    )
    # parse_position gives the same errors for 14-character text.
    raises(parse_position, "AAAAAAAAAAAAAA", match=["both sides have borne off all 15"])
    # Writing one: a board with more checkers than a key holds is refused, not cut short.
    crowded = STARTING.copy()
    crowded[6] = 20
    raises(position_id, crowded, match=["at most 30 checkers"])


def json_board(**changes: Any) -> dict[str, Any]:
    d: dict[str, Any] = board_to_json(STARTING, STANDARD)
    d.update(changes)
    return d


def side_with(**points: Any) -> list[Any]:
    """A 26-int JSON side: keyword p<i>=n puts n checkers at index i."""
    out = [0] * 26
    for key, n in points.items():
        out[int(key[1:])] = n
    return out


JSON_ERRORS: list[tuple[Any, list[str]]] = [
    ('{"variant": "standard", ', ["does not parse", "line 1"]),
    ("[1, 2]", ["must be an object", "got [1, 2]"]),
    (json_board(colour="white"), ["unknown keys", "colour"]),
    ({"variant": "standard", "mover": [0] * 26}, ["no 'opponent'"]),
    ({"variant": "standard", "opponent": [0] * 26}, ["no 'mover'"]),
    (json_board(variant="backgammon"), ["'variant' must be", "'backgammon'"]),
    (json_board(variant=0), ["'variant' must be", "0"]),
    ({"mover": [0] * 26, "opponent": [0] * 26}, ["no 'variant'"]),
    (json_board(mover=[0] * 25), ["'mover' must be a list of 26", "a list of 25"]),
    (json_board(opponent="x"), ["'opponent' must be a list of 26", 'got "x"']),
    (json_board(mover=side_with(p6=1.0)), ["mover[6] (point 6 of the mover)", "integer", "1.0"]),
    (json_board(mover=side_with(p6=True)), ["mover[6]", "integer", "got true"]),
    (json_board(opponent=side_with(p25=-1)), ["opponent[25] (bar)", "negative"]),
    (json_board(mover=side_with(p0=2)), ["mover[0] (unentered)", "only in Acey-Deucey"]),
    (json_board(mover=side_with(p6=16)), ["the mover has 16 checkers"]),
    (json_board(opponent=side_with(p6=10, p8=6)), ["the opponent has 16 checkers"]),
    (
        json_board(mover=side_with(p6=2), opponent=side_with(p19=1)),
        ["both sides on one point", "mover's point 6", "opponent's point 19"],
    ),
    (
        {"variant": "acey-deucey", "mover": side_with(p0=3, p1=1), "opponent": side_with(p0=15)},
        ["side on roll has 11 checkers borne off and 3 still unentered", "Acey-Deucey"],
    ),
    (
        {"variant": "acey-deucey", "mover": side_with(p0=15), "opponent": side_with(p3=1, p0=2)},
        ["opponent has 12 checkers borne off and 2 still unentered"],
    ),
    (
        {"variant": "standard", "mover": [0] * 26, "opponent": [0] * 26},
        ["both sides have borne off all 15"],
    ),
    (
        {
            "variant": "standard",
            "mover": [0, 2, 2, 2, 2, 2, 2] + [0] * 18 + [1],
            "opponent": [0, 2, 2, 2, 2, 2, 2] + [0] * 18 + [1],
        },
        ["bar against closed home boards"],
    ),
]


@pytest.mark.parametrize(("given_", "match"), JSON_ERRORS)
def test_json_errors(given_: Any, match: list[str]) -> None:
    msg = raises(board_from_json, given_, match=match)
    assert "JSON" in msg
    text = given_ if isinstance(given_, str) else json.dumps(given_)
    if text.startswith("{"):
        assert raises(parse_position, text, match=match) == msg
    if isinstance(given_, dict):
        assert raises(parse_position, given_, match=match) == msg


def test_json_variant_argument() -> None:
    d = board_to_json(STARTING, STANDARD)
    raises(board_from_json, d, ACEY_DEUCEY, match=["'standard'", "'acey-deucey' was asked"])
    raises(parse_position, d, "acey-deucey", match=["'acey-deucey' was asked"])
    del d["variant"]
    assert board_from_json(d, STANDARD)[1] == STANDARD
    assert board_from_json(d, "acey-deucey")[1] == ACEY_DEUCEY
    raises(board_from_json, d, 7, match=["unknown variant 7"])
    raises(parse_position, START_ID, "hypergammon", match=["unknown variant 'hypergammon'"])


def test_validate_errors() -> None:
    raises(validate, STARTING[:29], match=["shape (30,)", "(29,)"])
    raises(validate, STARTING.astype(float), match=["float64"])
    raises(validate, list(STARTING), match=["int8 array", "list"])
    raises(validate, STARTING, 2, match=["unknown variant 2"])
    cases: list[tuple[int, int, list[str]]] = [
        (OPP_BAR, 1, ["opponent's bar (index 0) is 1", "<= 0"]),
        (MY_BAR, -1, ["side on roll's bar (index 25) is -1", "negative"]),
        (MY_OFF, -1, ["side on roll's borne-off count (index 26) is -1"]),
        (OPP_OFF, -2, ["opponent's borne-off count (index 27) is -2"]),
        (MY_OUT, -1, ["side on roll's unentered count (index 28) is -1"]),
        (OPP_OUT, -1, ["opponent's unentered count (index 29) is -1"]),
        (MY_OFF, 1, ["side on roll has 1 checkers borne off but 15 in play", "15 - 15 = 0"]),
        (OPP_OFF, 3, ["opponent has 3 checkers borne off but 15 in play"]),
        (6, 6, ["side on roll has 16 checkers in play (16 on the points"]),
        (MY_BAR, 1, ["side on roll has 16 checkers in play", "1 on the bar"]),
        (OPP_BAR, -1, ["opponent has 16 checkers in play", "1 on the bar"]),
    ]
    for index, value, match in cases:
        b = STARTING.copy()
        b[index] = value
        raises(validate, b, match=match)
    b = STARTING.copy()
    b[MY_OUT] = 1
    raises(validate, b, match=["side on roll has 1 unentered checkers (index 28)", "standard"])
    b = STARTING.copy()
    b[OPP_OUT] = 2
    raises(validate, b, match=["opponent has 2 unentered checkers (index 29)", "standard"])
    b = pos({6: 5}, {19: 5}, my_out=4)
    raises(validate, b, ACEY_DEUCEY, match=["side on roll has 6 checkers borne off and 4"])
    validate(pos({6: 5}, {19: 5}, my_out=10, opp_out=10), ACEY_DEUCEY)
    raises(board_to_json, pos({}, {}), match=["both sides have borne off all 15"])
    raises(board_to_json, STARTING, "nackgammon", match=["unknown variant 'nackgammon'"])


def _accepted(b: Board, variant: int) -> bool:
    """validate's own rules (its Python path: a board of another integer type)."""
    try:
        validate(b.astype(np.int16), variant)
    except InvalidPositionError:
        return False
    return True


def test_the_validity_kernel_agrees_with_validates_rules() -> None:
    """validate's fast path (_valid, for int8 boards) accepts exactly what its rules do:
    valid boards of both variants, each with one to three counts changed or with a
    checker moved anywhere; and the rules' edge cases (a finished game, both finished,
    closed boards against the bar, unentered checkers beside borne-off ones)."""
    rng = np.random.default_rng(5)
    with open(DATA / "gnubg_refset.jsonl") as f:
        refset = [json.loads(line)["pid"] for line in f][::7]
    boards = [(board_from_position_id(pid), STANDARD) for pid in refset]
    with open(DATA / "acey_deucey.jsonl") as f:
        ad = [json.loads(line)["position"] for line in f]
    boards += [(from_counts(p["mover"], p["opponent"]), ACEY_DEUCEY) for p in ad[::5]]
    closed = pos({p: 2 for p in range(1, 7)} | {13: 2}, {p: 2 for p in range(19, 25)} | {12: 2},
                 my_bar=1, opp_bar=1)  # fmt: skip
    edge = [pos({6: 5}, {19: 5}, my_out=4), pos({6: 5}, {19: 5}, my_out=10, opp_out=10),
            pos({}, {19: 15}), pos({}, {}), closed, STARTING]  # fmt: skip
    boards += [(b, v) for b in edge for v in (STANDARD, ACEY_DEUCEY)]
    assert not _accepted(closed, STANDARD) and not _accepted(pos({}, {}), STANDARD)
    seen = {True: 0, False: 0}
    for b, v in boards:
        for trial in range(40):
            c = b.copy()
            if trial % 2:  # counts changed
                for i in rng.integers(0, len(c), size=int(rng.integers(1, 4))):
                    c[i] = np.int8(int(c[i]) + int(rng.choice([-2, -1, 1, 2])))
            elif trial:  # a checker of either side moved anywhere on the board
                side = int(rng.choice([1, -1]))
                held = [i for i in range(26) if side * c[i] > 0]
                if held:
                    c[rng.choice(held)] -= side
                    c[int(rng.integers(1, 25))] += side
            want = _accepted(c, v)
            assert bool(_valid(c, v)) == want, (c.tolist(), v)
            seen[want] += 1
            if want:
                validate(c, v)
            else:
                with pytest.raises(InvalidPositionError):
                    validate(c, v)
    assert min(seen.values()) > 2000, seen


def test_parse_position_errors() -> None:
    neither = ["not a position", "gnubg Position ID", "XGID", "JSON board"]
    for text in ("", "   ", "hello", START_ID + "AB", "4HPwATDgc/AB"):
        raises(parse_position, text, match=neither)
    # A bad value is shown as its JSON, as the engine protocol's messages show it.
    raises(parse_position, 14, match=["got 14"])
    raises(parse_position, None, match=["got null"])
    raises(parse_position, [0] * 26, match=["got [0, 0, 0,"])
    raises(parse_position, START_ID + ":cAk", match=["match ID 'cAk'", "12 base64"])


def _with_field(match_id: str, start: int, n: int, value: int) -> str:
    """match_id with bits start..start+n-1 set to value (gnubg's layout, low bit first)."""
    raw = int.from_bytes(base64.b64decode(match_id), "little")
    raw = (raw & ~(((1 << n) - 1) << start)) | (value << start)
    return base64.b64encode(raw.to_bytes(9, "little")).decode()


def test_match_id_game_states() -> None:
    # cAkAAAAAAAAA: money, player 1 on roll, the game being played (state 1).
    for state in (0, 1):
        meta = parse_position(START_ID + ":" + _with_field("cAkAAAAAAAAA", 8, 3, state))[2]
        assert meta["gnubg_match"]["state"] == state
    for state, words in ((2, "over"), (3, "resignation"), (4, "dropped double")):
        with pytest.raises(InvalidPositionError, match=f"game is .*{words}.* no decision"):
            parse_position(START_ID + ":" + _with_field("cAkAAAAAAAAA", 8, 3, state))
    for state in (5, 6, 7):
        with pytest.raises(InvalidPositionError, match=f"game state code {state} does not exist"):
            decode_match_id(_with_field("cAkAAAAAAAAA", 8, 3, state))
    # A double offered with the dice rolled (4-2 in bits 15-20): no game reaches it.
    rolled = _with_field(_with_field("cAkAAAAAAAAA", 15, 3, 4), 18, 3, 2)
    assert decode_match_id(rolled)["dice"] == (4, 2)
    with pytest.raises(InvalidPositionError, match="double is offered and the dice"):
        decode_match_id(_with_field(rolled, 12, 1, 1))
    # Doubled, the turn (who decides next) handed to player 0, who takes or passes.
    offered = _with_field(_with_field("cAkAAAAAAAAA", 12, 1, 1), 11, 1, 0)
    assert decode_match_id(offered)["doubled"] == 1
    # Found by a review (session 42): doubled with the turn still the doubler's was read
    # and noted as "the side on roll has doubled"; gnubg never writes it (bar a beaver).
    with pytest.raises(InvalidPositionError, match=r"has doubled, but the turn .* is still theirs"):
        decode_match_id(_with_field("cAkAAAAAAAAA", 12, 1, 1))


def _with_bits(match_id: str, **bits: tuple[int, int, int]) -> str:
    """match_id with fields (start, width, value) set: IDs gnubg writes in those states."""
    value = int.from_bytes(base64.b64decode(match_id), "little")
    for start, width, v in bits.values():
        value = value & ~(((1 << width) - 1) << start) | v << start
    return base64.b64encode(value.to_bytes(9, "little")).decode()


def test_a_match_ids_offers_and_a_game_not_started_are_said() -> None:
    """A review found a Match ID's state fields accepted silently. gnubg 1.07 wrote
    cBEAAAAAAAAA after the side on roll doubled (sGfwATDgc/ABMA, the doubler's view)."""
    doubled = "sGfwATDgc/ABMA:cBEAAAAAAAAA"
    _, _, meta = parse_position(doubled)
    assert meta["gnubg_match"]["doubled"] == 1
    assert meta["note"] == ("the match ID says the side on roll has doubled: the cube "
                            "decision's take or pass answers it")  # fmt: skip
    assert "note" not in parse_position("sGfwATDgc/ABMA:cAkAAAAAAAAA")[2]
    resigned = _with_bits("cAkAAAAAAAAA", resigned=(13, 2, 2))
    note = parse_position(f"sGfwATDgc/ABMA:{resigned}")[2]["note"]
    assert "a resignation (gammon) is offered" in note and "does not judge" in note
    no_game = _with_bits("cAkAAAAAAAAA", state=(8, 3, 0))
    assert "no game is in play" in parse_position(f"sGfwATDgc/ABMA:{no_game}")[2]["note"]
    both = parse_position(f"sGfwATDgc/ABMA:{resigned}", variant="acey-deucey")[2]["note"]
    assert "resignation" in both and "unentered" in both  # the notes joined, none lost
    xgid = parse_position("XGID=-b----E-C---eE---c-e----B-:1:1:1:D:0:0:0:0:10")[2]
    assert xgid["note"].startswith("the XGID says a double is offered")


def test_an_xgids_max_cube_field_below_10_is_said_not_ignored() -> None:
    """A review found the max cube field ignored silently. Doublet's cube model has no
    limit below 32,768 (a limit would make the cube dead there, which its equities do
    not model), so a field below 10 (XG writes 10) is said in the note; a cube above its
    own max cube field is refused."""
    start = "XGID=-b----E-C---eE---c-e----B-:2:1:1:00:0:0:0:0:"
    note = parse_position(start + "2")[2]["note"]
    assert note.startswith("the XGID's max cube field (2: a cube of at most 4) is not applied")
    for ten in ("10", "12"):
        assert "note" not in parse_position(start + ten)[2]
    raises(parse_position, start + "1", match=["XGID cube 4 is above its max cube field (1: 2)"])


def test_errors_quote_a_long_position_text_cut() -> None:
    """A review of the engine protocol found errors that echoed the whole position text
    (an XGID of 3,000,000 colons gave a 3,000,242-character error; a Position ID with a
    3,000,000-character Match ID one of 6,000,145: quoted twice). Every parser quotes a
    position text as doublet.core.errors.clipped does: its start and its length."""
    big = 3_000_000
    board = START_XGID.split(":", 1)[0]
    cases = [
        ("XGID=" + ":" * big, "has 3000001 fields separated by ':'"),
        (START_ID + ":" + "A" * big, "is not 12 base64 characters"),
        (START_XGID.replace(":00:", ":" + "D" * big + ":"), "XGID dice must be '00'"),
        (START_XGID.replace(board, "XGID=" + "-" * big), "position field must have 26"),
        (START_XGID.removesuffix("10") + "1" * big, "field 10 (max cube) must be an integer"),
        ('{"variant": "' + "x" * big + '", "mover": [], "opponent": []}', "'variant' must be"),
    ]
    for text, words in cases:
        msg = raises(parse_position, text, match=[words, " characters)"])
        assert len(msg) < 400, msg[:400]
    for fn, text in ((board_from_position_id, " " * big + START_ID[:-1]),
                     (decode_match_id, "A" * big), (parse_xgid, "XGID=" + ":" * big)):  # fmt: skip
        assert len(raises(fn, text, match=[f"({len(text)} characters)"])) < 400
    mover = ["x" * big] + [0] * 25
    msg = raises(board_from_json, {"variant": "standard", "mover": mover, "opponent": mover},
                 match=["mover[0] (unentered) must be an integer, got \"xxx"])  # fmt: skip
    assert len(msg) < 200


def test_a_short_position_id_with_a_match_id_is_said_to_be_short() -> None:
    """A review found '4HPwATDgc/AB:MAEAAAAAAAAA' (a Position ID cut to 12 characters, with
    its Match ID) refused as an 'XGID ... has 2 fields': two parts are a gnubg ID's
    position:match, whatever their lengths (an XGID has 10 fields)."""
    msg = raises(parse_position, "4HPwATDgc/AB:MAEAAAAAAAAA", match=[
        "looks like a GNU Backgammon ID (position:match)",
        "the Position ID '4HPwATDgc/AB' has 12 characters, not 14"])  # fmt: skip
    assert "XGID" not in msg
    raises(parse_position, START_ID + "AB:MAEAAAAAAAAA", match=["has 16 characters, not 14"])
    raises(parse_position, "4HPwATDgc/AB*A:MAEAAAAAAAAA", match=["outside base64"])
    raises(parse_position, "XGID=4HPwATDgc:MAEAAAAAAAAA", match=["XGID", "2 fields"])


def test_a_beaver_offered_in_a_gnubg_match_id_is_read() -> None:
    """gnubg keeps the doubled bit after a beaver, doubles the cube, gives it to the
    beaverer and hands the turn back to the doubler: the owner is then the player not on
    roll, which the refusal of a double on the opponent's cube must not catch (money
    play; cube 2, owner 1, player 0 on roll and to decide, doubled)."""
    fields = decode_match_id("EREAAAAAAAAA")
    assert (fields["cube"], fields["owner"], fields["on_roll"], fields["turn"]) == (2, 1, 0, 0)
    assert fields["doubled"] and fields["beaver"]
    _, _, meta = parse_position("4HPwATDgc/ABMA:EREAAAAAAAAA")
    assert "beavered" in meta["note"]
    # the same shape in a match is no beaver (beavers are money play's): still refused
    with pytest.raises(InvalidPositionError, match="only the side that owns the cube"):
        decode_match_id(_with_field("EREAAAAAAAAA", 21, 15, 5))


def test_a_cube_action_that_cannot_be_offered_is_refused() -> None:
    """A review of the engine protocol found doubles no game can reach accepted, and the
    reply then contradicted itself: a note saying a double is offered beside the cube
    decision's "No double available (the Crawford game ...)". Refused like the Match ID's
    double offered with the dice rolled, naming the fields and why."""
    board = "XGID=-b----E-C---eE---c-e----B-"
    for text, words in (
        (board + ":0:0:1:D:6:2:1:7:10", ["'D': a double offered in the Crawford game",
                                         "field 8", "nobody may double"]),
        (board + ":1:-1:1:D:0:0:0:0:10", ["by the uppercase player (field 4, the turn, is 1)",
                                          "the lowercase player owns the cube (field 3",
                                          "only the side that owns the cube may redouble"]),
        (board + ":1:1:-1:D:0:0:0:0:10", ["by the lowercase player", "uppercase player owns"]),
        (board + ":15:1:1:D:0:0:0:0:10", ["a cube at 32768 (field 2: 15)",
                                          "32768 is the largest cube"]),
        (board + ":3:1:1:D:0:0:0:0:3", ["a cube at 8", "the max cube field (10) is 3"]),
        (board + ":0:0:1:B:0:0:0:7:10", ["'B': a beaver offered in a match", "money-play"]),
        (board + ":0:0:1:R:0:0:1:0:10", ["'R': a raccoon", "flags (field 8: 1)", "beavers"]),
    ):  # fmt: skip
        msg = raises(parse_position, text, match=words)
        assert msg.startswith("XGID dice field (5)") and text in msg
    # The same doubles where they may be offered: the side that owns the cube or a
    # centred one, below the largest cube, outside the Crawford game; beavers in money.
    for ok in (":0:0:1:D:6:2:0:7:10", ":1:1:1:D:0:0:0:0:10", ":1:-1:-1:D:0:0:0:0:10",
               ":14:1:1:D:0:0:0:0:10", ":2:1:1:D:0:0:0:0:3", ":1:1:1:B:0:0:2:0:10",
               ":1:1:1:R:0:0:3:0:10"):  # fmt: skip
        assert "the XGID says a" in parse_position(board + ok)[2]["note"]

    # Match IDs: cBEAAAAAAAAA is gnubg 1.07's after player 1, on roll, doubled (money,
    # cube centred); 8AmpAEAAEAAE a Crawford game (5-point match at 4-2) with 2-2 rolled.
    doubled = "cBEAAAAAAAAA"
    crawford = _with_bits("8AmpAEAAEAAE", d1=(15, 3, 0), d2=(18, 3, 0), turn=(11, 1, 0),
                          doubled=(12, 1, 1))  # fmt: skip
    for match_id, words in (
        (crawford, ["a double is offered in the Crawford game", "nobody may double"]),
        (_with_bits(doubled, cube=(0, 4, 1), owner=(4, 2, 0)),
         ["player 1, on roll, has doubled, but player 0 owns the cube"]),
        (_with_bits(doubled, cube=(0, 4, 15), owner=(4, 2, 1)),
         ["the cube at 32768, the largest cube: a double would pass it"]),
    ):  # fmt: skip
        msg = raises(parse_position, f"sGfwATDgc/ABMA:{match_id}", match=words)
        assert msg.startswith(f"match ID {match_id!r}: ")
    for match_id in (_with_bits(crawford, crawford=(7, 1, 0)),
                     _with_bits(doubled, cube=(0, 4, 1), owner=(4, 2, 1)),
                     _with_bits(doubled, cube=(0, 4, 14), owner=(4, 2, 1))):  # fmt: skip
        note = parse_position(f"sGfwATDgc/ABMA:{match_id}")[2]["note"]
        assert "the side on roll has doubled" in note


def test_a_match_ids_fields_the_analysis_does_not_take_up_are_said_or_refused() -> None:
    """A review found a money Match ID (length 0) with a score of 3-2 or with the Crawford
    bit set, and one whose turn is not the player on roll with nothing to answer,
    accepted silently. A money score may be a session's (gnubg keeps one): said in the
    note. A Crawford game is a match's, and gnubg hands the turn to the other player only
    to answer a double or a resignation: those no game reaches are refused."""
    money = "cAkAAAAAAAAA"  # gnubg 1.07: money, player 1 on roll, the cube centred
    scored = _with_bits(money, s0=(36, 15, 3), s1=(51, 15, 2))
    _, _, meta = parse_position(f"sGfwATDgc/ABMA:{scored}")
    assert meta["gnubg_match"]["score"] == (3, 2)
    assert meta["note"] == ("the match ID's score 3-2 is a money session's: the analysis does "
                            "not take it up (in money play each game stands alone)")  # fmt: skip
    raises(parse_position, f"sGfwATDgc/ABMA:{_with_bits(money, crawford=(7, 1, 1))}",
           match=["the Crawford bit is set in money play (match length 0)"])  # fmt: skip
    turned = _with_bits(money, turn=(11, 1, 0))
    raises(parse_position, f"sGfwATDgc/ABMA:{turned}", match=[
        "the turn is player 0's but player 1 is on roll, with no double or resignation to "
        "answer: no game reaches that"])  # fmt: skip
    # The turn is the other player's to answer an offer (gnubg 1.07's cBEAAAAAAAAA after a
    # double), and anything goes before a game starts.
    assert parse_position("sGfwATDgc/ABMA:cBEAAAAAAAAA")[2]["gnubg_match"]["turn"] == 0
    parse_position(f"sGfwATDgc/ABMA:{_with_bits(turned, resigned=(13, 2, 1))}")
    parse_position(f"sGfwATDgc/ABMA:{_with_bits(turned, state=(8, 3, 0))}")
    # A match score is the match's (taken up), and money at 0-0 has nothing to say.
    match = _with_bits(money, length=(21, 15, 7), s0=(36, 15, 3), s1=(51, 15, 2))
    assert "note" not in parse_position(f"sGfwATDgc/ABMA:{match}")[2]
    assert "note" not in parse_position(f"sGfwATDgc/ABMA:{money}")[2]
    # Found by a review (session 42): the Crawford bit at a score where neither player is
    # one point away was read (an XGID was refused); both ID forms now refuse it.
    raises(parse_position, f"sGfwATDgc/ABMA:{_with_bits(match, crawford=(7, 1, 1))}",
           match=["the Crawford bit is set but neither score (3-2) is 6, one away from the "
                  "7-point match"])  # fmt: skip
    crawford = _with_bits(match, s0=(36, 15, 6), crawford=(7, 1, 1))
    assert parse_position(f"sGfwATDgc/ABMA:{crawford}")[2]["gnubg_match"]["crawford"] == 1


def test_a_json_boards_text_gives_each_key_once() -> None:
    """A review found a JSON board given as text accepted with "mover" twice (the last
    one taken), while the engine protocol refuses the same board given as an object (its
    request reader refuses a key twice). Its text is read by load_json_board, which
    refuses it, for board_from_json, parse_position and the protocol alike."""
    start = board_to_json(STARTING, STANDARD)
    moved = side_with(p6=4, p5=1, p8=3, p13=5, p24=2)
    text = ('{"variant": "standard", "mover": ' + json.dumps(moved) + ', "mover": '
            + json.dumps(start["mover"]) + ', "opponent": ' + json.dumps(start["opponent"])
            + "}")  # fmt: skip
    for fn in (board_from_json, parse_position, load_json_board):
        raises(fn, text, match=['JSON board gives the key "mover" twice in one object'])
    raises(parse_position, '{"opponent": [], ' + json.dumps(start)[1:],
           match=['the key "opponent" twice'])  # fmt: skip
    assert load_json_board(json.dumps(start)) == start
    raises(load_json_board, '{"mover": [', match=["JSON board does not parse"])


def test_an_xgid_beaver_or_raccoon_is_not_said_to_be_answered() -> None:
    """A review found "the cube decision's take or pass answers it" under a reply that
    valued the owner's decision (a beaver offered) or the next redouble (a raccoon)."""
    base = "XGID=-b----E-C---eE---c-e----B-:{}:0:10"
    beaver = parse_position(base.format("1:-1:1:B:0:0:2"))[2]["note"]
    raccoon = parse_position(base.format("2:1:1:R:0:0:2"))[2]["note"]
    assert beaver.startswith("the XGID says a beaver is offered: Doublet does not judge")
    assert raccoon.startswith("the XGID says a raccoon is offered: Doublet does not judge")
    double = parse_position(base.format("1:1:1:D:0:0:0"))[2]["note"]
    assert double.endswith("the cube decision's take or pass answers it")


def test_a_gnubg_id_with_more_fields_is_not_called_an_xgid() -> None:
    with pytest.raises(InvalidPositionError, match=r"looks like a GNU Backgammon ID "
                       r"\(position:match\), but has 1 more ':' field after"):  # fmt: skip
        parse_position("4HPwATDgc/ABMA:cAkAAAAAAAAA:x")
