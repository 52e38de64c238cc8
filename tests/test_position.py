"""doublet.formats.position.Position, the class for people: its doctests; it is frozen
and validated; plays, play parsing and the position after a play; IDs round-trip."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import doublet.formats.position
from doublet.core.board import ACEY_DEUCEY
from doublet.core.errors import IllegalPlayError, InvalidPositionError, NotationError
from doublet.formats.position import Position


def test_doctests() -> None:
    failures, tried = doctest.testmod(doublet.formats.position)
    assert tried > 0 and failures == 0


def test_frozen_and_validated() -> None:
    pos = Position.start()
    with pytest.raises(ValueError):
        pos.board[1] = 3  # read-only
    bad = np.array(pos.board)
    bad[1] = 9  # 24 checkers for the opponent
    with pytest.raises(InvalidPositionError):
        Position(bad)


def test_plays_and_the_position_after() -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    plays = pos.plays(6, 1)
    assert "13/7 8/7" in [p.notation for p in plays]
    after = pos.play("13/7 8/7", 6, 1).position()
    assert Position.from_id(after.id()) == after
    with pytest.raises(NotationError):
        pos.play("13/x", 6, 1)
    with pytest.raises(IllegalPlayError):
        pos.play("24/14", 6, 1)


def test_ids_round_trip() -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    assert Position.parse(pos.xgid()) == pos
    assert Position.parse(pos.to_json()) == pos
    ad = Position.start(ACEY_DEUCEY)
    assert Position.parse(ad.to_json()) == ad and ad.variant == ACEY_DEUCEY


def test_a_play_on_a_roll_with_no_legal_play_says_so() -> None:
    from doublet.core.errors import IllegalPlayError

    pos = Position.from_id("u20TgADgZ8NgQA")  # 6-3 cannot be played here
    with pytest.raises(IllegalPlayError, match="no checker can move"):
        pos.play("24/18", 6, 3)
    assert pos.play("", 6, 3).notation == ""


def test_a_variant_by_name_and_a_bad_one() -> None:
    """Position.start and Position take a variant as 0 / 1 or its name, as Position.parse
    does; before, start("acey-deucey") gave the standard board labelled with the string,
    whose plays then failed with a bare ValueError."""
    ad = Position.start("acey-deucey")
    assert ad == Position.start(ACEY_DEUCEY) and ad.variant == ACEY_DEUCEY
    assert ad.pip_counts() == (375, 375)
    assert Position.start("standard") == Position.from_id("4HPwATDgc/ABMA")
    assert Position(Position.start().board, "standard").variant == 0
    for bad in ("acey", 2, True, None):
        with pytest.raises(InvalidPositionError, match="unknown variant"):
            Position.start(bad)  # type: ignore[arg-type]


def test_shots_of_a_point_that_holds_no_blot_is_a_clear_error() -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    assert pos.shots() == 0
    for point, why in ((7, "holds no blot"), (6, "holds no blot"), (25, "1..24"),
                       (-1, "1..24"), ("x", "an integer"), (1.5, "an integer")):  # fmt: skip
        with pytest.raises(InvalidPositionError, match=why):
            pos.shots(point)  # type: ignore[arg-type]
    blot = Position.parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10").play(
        "13/10 6/5", 3, 1
    )  # the opponent's view now: its blots are not the mover's
    assert blot.position().flip().shots(10) > 0


@pytest.mark.parametrize("board", [
    "abc", None, [300] + [0] * 29, [0.5] * 30, [[0] * 30],
])  # fmt: skip
def test_a_board_that_is_not_checker_counts_is_refused_by_name(board: object) -> None:
    """A review found raw ValueError, TypeError and OverflowError here."""
    with pytest.raises(InvalidPositionError, match="board"):
        Position(board)  # type: ignore[arg-type]


def test_counts_past_int8_do_not_wrap_into_a_legal_board() -> None:
    """The board was cast to int8 first: 256 + n became n, and the start came back."""
    s = np.asarray(Position.start().board).astype(np.int64)
    with pytest.raises(InvalidPositionError, match=r"-15\.\.15"):
        Position(s + 256 * (s != 0))
    assert Position(s) == Position.start()  # int64 counts in range are fine


def test_an_acey_deucey_position_with_unentered_checkers_has_no_gnubg_id() -> None:
    """id() wrote 'AAAAAAAAAAAAAA' for the Acey-Deucey start, which from_id refuses."""
    with pytest.raises(InvalidPositionError, match="unentered"):
        Position.start(ACEY_DEUCEY).id()


def test_a_positions_board_cannot_be_made_writeable_again() -> None:
    """A review set flags.writeable back to True and moved a checker: the Position's hash
    changed under a dict that held it."""
    p = Position.start()
    for board in (p.board, p.plays(3, 1)[0].board, Position.checked(p.board, 0).board):
        with pytest.raises(ValueError):
            board.flags.writeable = True


def test_a_finished_game_has_no_plays() -> None:
    """Position.plays listed 1/off(4) for a 6-6 after the opponent had borne off all 15,
    where the analysis refuses the position (a review)."""
    b = np.zeros(30, np.int8)
    b[1], b[26], b[27] = 4, 11, 15  # the mover: 4 on its 1 point, 11 off; the opponent: all off
    over = Position(b)  # a legal board: the game is over
    with pytest.raises(InvalidPositionError, match="over"):
        over.plays(6, 6)
    with pytest.raises(InvalidPositionError, match="over"):
        over.play("1/off(4)", 6, 6)


def test_plays_compare_by_their_outcome() -> None:
    # (a review: Play compared by identity, so a parsed play was never `in` plays())
    pos = Position.from_id("4HPwATDgc/ABMA")
    plays = pos.plays(3, 1)
    chosen = pos.play("6/5 8/5", 3, 1)  # another spelling of 8/5 6/5
    assert chosen in plays and plays.index(chosen) == [p.notation for p in plays].index("8/5 6/5")
    assert len(set(plays) | {chosen}) == len(plays)
    assert chosen != pos.play("13/10 6/5", 3, 1)
    ad = Position.start(ACEY_DEUCEY)
    entering = ad.plays(2, 1)
    assert all(p == q for p, q in zip(entering, ad.plays(2, 1), strict=True))
    assert chosen != entering[0]
    from doublet.formats.position import Play

    wide = Play(chosen.notation, np.array(chosen.board, np.int64), chosen.again)  # (a review)
    assert wide == chosen and hash(wide) == hash(chosen) and wide in set(plays)
