"""The cube state: one type for the cube and the score, used everywhere.

A CubeState is always seen by the side on roll (the mover), as a Position is: ``owner``
is "centered", "mover" or "opponent"; ``away`` is (points the mover still needs, points
its opponent needs). Money play has ``length`` 0 and may use the Jacoby rule (gammons
count only once the cube has been turned) and beavers; a match has a length, the away
scores and a Crawford flag (this game is the Crawford game: nobody may double). A game
after the Crawford game (a side 1-away, crawford False) is post-Crawford.

>>> s = CubeState.match(7, away=(2, 4))
>>> s.flipped().away
(4, 2)
>>> s.doubled().describe()
'7-point match, mover 2-away, opponent 4-away, cube 2 owned by the opponent'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from doublet.core.doubling import MAX_CUBE, double_barred
from doublet.core.errors import CubeError, key_list, shown
from doublet.formats.ids import format_xgid

OWNERS = ("centered", "mover", "opponent")
MAX_LENGTH = 25  # the match equity table's size


def is_cube_value(v: Any) -> bool:
    """Whether v is a cube's value: a power of 2 from 1 to MAX_CUBE (an int, not a bool)."""
    return not isinstance(v, bool) and isinstance(v, int) and 1 <= v <= MAX_CUBE and not (
        v & (v - 1))  # fmt: skip


@dataclass(frozen=True)
class CubeState:
    """The cube and the score, from the side on roll's view. Validated on construction."""

    value: int = 1
    owner: str = "centered"
    length: int = 0  # 0: money play
    away: tuple[int, int] = (0, 0)  # (mover, opponent): points still needed (match only)
    crawford: bool = False  # this game is the Crawford game (match only)
    jacoby: bool = False  # money only: gammons count only after a double
    beavers: bool = False  # money only
    no_cube: bool = False  # match only: played without the cube (its games valued cubeless)

    def __post_init__(self) -> None:
        # numpy's integers are taken as Python's (a review: "must be a power of 2 ..., got 2")
        for name in ("value", "length"):
            if isinstance(getattr(self, name), np.integer):
                object.__setattr__(self, name, int(getattr(self, name)))
        if not isinstance(self.away, (tuple, list)):
            raise CubeError(f"away is two whole numbers (mover, opponent), got {shown(self.away)}")
        object.__setattr__(self, "away", tuple(int(a) if isinstance(a, np.integer) else a
                                               for a in self.away))  # fmt: skip
        v = self.value
        if not is_cube_value(v):
            raise CubeError(
                f"the cube value must be a power of 2 (1, 2, 4, ... {MAX_CUBE}), got {shown(v)}"
            )
        if self.owner not in OWNERS:
            raise CubeError(
                f"the cube owner must be one of {', '.join(OWNERS)}, got {shown(self.owner)}"
            )
        if v > 1 and self.owner == "centered":
            raise CubeError(f"a cube at {v} has been turned, so one side owns it (owner "
                            "'mover' or 'opponent'), not 'centered'")  # fmt: skip
        if v == 1 and self.owner != "centered":
            raise CubeError("a cube at 1 has not been turned: it is centered")
        n = self.length
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise CubeError(
                f"the match length must be a whole number >= 1 (0: money), got {shown(n)}"
            )
        away = tuple(self.away)
        object.__setattr__(self, "away", away)
        if n == 0:
            if self.no_cube:  # a money game without the cube is valued cubeless (no state)
                raise CubeError("no_cube is for a match played without the cube")
            if away != (0, 0) and away != ():
                raise CubeError("away scores are for match play: give a match length")
            object.__setattr__(self, "away", (0, 0))
            if self.crawford:
                raise CubeError("the Crawford rule is for match play, not money play")
            return
        if n > MAX_LENGTH:
            raise CubeError(f"matches are supported up to {MAX_LENGTH} points (the match "
                            f"equity table's size), got {n}")  # fmt: skip
        if len(away) != 2 or any(isinstance(a, bool) or not isinstance(a, int) for a in away):
            raise CubeError(f"away is two whole numbers (mover, opponent), got {shown(self.away)}")
        for who, a in zip(("mover", "opponent"), away, strict=True):
            if not 1 <= a <= n:
                raise CubeError(f"the {who} needs 1..{n} points in a {n}-point match, got "
                                f"{a} away (0 away would mean the match is over)")  # fmt: skip
        if self.jacoby or self.beavers:
            raise CubeError("the Jacoby rule and beavers are for money play, not matches")
        if self.no_cube and v != 1:
            raise CubeError(f"a match played without the cube has it at 1, not {v}")
        if self.crawford:
            if sorted(away)[0] != 1 or away == (1, 1):
                pair = f"{away[0]}-{away[1]}"
                raise CubeError("the Crawford game is the one in which a side first needs "
                                f"1 point, the other more; not {pair} away")  # fmt: skip
            if v != 1:
                raise CubeError("nobody may double in the Crawford game: the cube is "
                                f"centered at 1 (got {v} owned by the {self.owner})")  # fmt: skip

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def money(cls, value: int = 1, owner: str = "centered", jacoby: bool = False,
              beavers: bool = False) -> CubeState:  # fmt: skip
        """Money play: the cube at `value` (its `owner`), the Jacoby rule and beavers."""
        return cls(value, owner, 0, (0, 0), False, bool(jacoby), bool(beavers))

    @classmethod
    def match(cls, length: int, away: tuple[int, int] | None = None,
              score: tuple[int, int] | None = None, value: int = 1, owner: str = "centered",
              crawford: bool = False) -> CubeState:  # fmt: skip
        """A match state from the away scores (points still needed) or from the score
        (points won so far), mover first: exactly one of them."""
        if (away is None) == (score is None):
            raise CubeError("give the match score either as away (points still needed) or "
                            "as score (points won), not both")  # fmt: skip
        if score is not None:
            away = away_from_score(length, score)
        assert away is not None
        return cls(value, owner, length, tuple(away), bool(crawford))  # type: ignore[arg-type]

    @classmethod
    def for_player(cls, player: int, length: int, value: int, owner: int,
                   score: tuple[int, int] = (0, 0), crawford: bool = False,
                   jacoby: bool = False, beavers: bool = False,
                   no_cube: bool = False) -> CubeState:  # fmt: skip
        """The state seen by `player` (0 or 1) from absolute fields, as files write them:
        `owner` the player who owns the cube (-1: centred), `score` the points won by
        players 0 and 1, `length` 0 for money; `no_cube`: a match without the cube."""
        who = "centered" if owner < 0 else ("mover" if owner == player else "opponent")
        if length == 0:
            return cls.money(value, who, jacoby=jacoby, beavers=beavers)
        mine, theirs = (score[0], score[1]) if player == 0 else (score[1], score[0])
        state = cls.match(length, score=(int(mine), int(theirs)), value=value, owner=who,
                          crawford=crawford)  # fmt: skip
        return replace(state, no_cube=True) if no_cube else state

    @classmethod
    def from_xgid(cls, meta: Mapping[str, Any]) -> CubeState:
        """The cube and score of an XGID (doublet.formats.ids.parse_position's meta), from
        the side on roll's view (XGID: 1 the uppercase player, -1 the lowercase one)."""
        index = {1: 0, -1: 1, 0: -1}
        flags = int(meta["crawford"])
        money = int(meta["match_length"]) == 0
        return cls.for_player(index[int(meta["turn"])], int(meta["match_length"]),
                              1 << int(meta["cube"]), index[int(meta["cube_owner"])],
                              (int(meta["score_x"]), int(meta["score_o"])),
                              crawford=not money and bool(flags & 1),
                              jacoby=money and bool(flags & 1),
                              beavers=money and bool(flags & 2))  # fmt: skip

    @classmethod
    def from_gnubg(cls, fields: Mapping[str, Any]) -> CubeState:
        """The cube and score of a gnubg Match ID (doublet.formats.ids.decode_match_id's
        fields), from the view of its player on roll."""
        money = int(fields["length"]) == 0
        return cls.for_player(int(fields["on_roll"]), int(fields["length"]), int(fields["cube"]),
                              int(fields["owner"]), tuple(fields["score"]),
                              crawford=not money and bool(fields["crawford"]),
                              jacoby=money and bool(fields["jacoby"]))  # fmt: skip

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> CubeState:
        """The cube state a parsed position carries (doublet.formats.ids.parse_position's
        meta): an XGID's fields, a gnubg Match ID's, else money with the cube centered."""
        source = ("the XGID's" if meta.get("format") == "xgid" else "the gnubg Match ID's"
                  if meta.get("gnubg_match") is not None else None)  # fmt: skip
        if source is None:
            return MONEY
        try:
            if meta.get("format") == "xgid":
                return cls.from_xgid(meta)
            return cls.from_gnubg(meta["gnubg_match"])
        except CubeError as e:  # say where the state came from, not only the request's words
            raise CubeError(
                f"{source} cube and score fields do not make a legal state: {e}"
            ) from None

    @staticmethod
    def carried(meta: Mapping[str, Any]) -> bool:
        """Whether a parsed position carries cube fields of its own (an XGID, a gnubg
        Match ID), money with the cube centred included: eval then gives the cube decision."""
        return meta.get("format") == "xgid" or meta.get("gnubg_match") is not None

    # -- views -------------------------------------------------------------------------------
    @property
    def is_match(self) -> bool:
        """A match (a length), not money play."""
        return self.length > 0

    @property
    def post_crawford(self) -> bool:
        """A game after the Crawford game (the post-Crawford table's, where the side
        behind doubles at once); a match without the cube has none: its games at 1-away
        are valued as the Crawford game is, with no cube."""
        return self.is_match and not self.crawford and not self.no_cube and 1 in self.away

    @property
    def is_default(self) -> bool:
        """Money play, the cube centered at 1, no Jacoby: where cubeless equity ranks plays."""
        return not self.is_match and self.value == 1 and not self.jacoby

    @property
    def dead(self) -> bool:
        """In a match, whether the cube is dead for the mover: winning this game at the
        cube's value already wins it the match, so a double could only cost it. GNU
        Backgammon counts no cube decision there (its match statistics), and play does
        not offer one (doublet.games.game.Game.may_double); the rules allow it."""
        return self.is_match and self.away[0] <= self.value

    def may_double(self) -> bool:
        """Whether the rules let the mover double (or redouble) now."""
        return self._barred() is None

    def _barred(self) -> str | None:
        if self.no_cube:
            return "no cube"
        return double_barred(self.crawford, self.owner == "opponent", self.value)

    def has_cube_decision(self) -> bool:
        """Whether the mover has a cube decision before its roll: it may double and the
        cube is not dead for it (dead: a double could only cost it, so GNU Backgammon
        counts no decision there and play offers none)."""
        return self.may_double() and not self.dead

    def why_no_double(self) -> str:
        """Why the mover has no cube decision (has_cube_decision() is False)."""
        if self._barred() is None and self.dead:
            return "the cube is dead: winning this game at its value already wins the match"
        return {"no cube": "this match is played without the cube",
                "crawford": "the Crawford game: nobody may double",
                "owner": "the opponent owns the cube",
                "largest": f"the cube is at {self.value}, the largest value",
                }[self._barred() or "owner"]  # fmt: skip

    def flipped(self) -> CubeState:
        """The same state seen by the opponent."""
        swap = {"centered": "centered", "mover": "opponent", "opponent": "mover"}
        return replace(self, owner=swap[self.owner], away=(self.away[1], self.away[0]))

    def doubled(self) -> CubeState:
        """After the mover doubles and the opponent takes: twice the value, the opponent's.
        CubeError where the mover may not double (a review found a cube of 4 the opponent
        owned doubled to the opponent's 4... of 8)."""
        if not self.may_double():
            raise CubeError(f"the mover may not double: {self.why_no_double()}")
        return replace(self, value=2 * self.value, owner="opponent")

    def xgid(self, board: Any, dice: tuple[int, int] | None = None) -> str:
        """The XGID of a standard `board` (the mover's view, the mover uppercase) in this
        state, with the dice rolled or not."""
        owner = {"centered": 0, "mover": 1, "opponent": -1}[self.owner]
        n = self.length
        score = (n - self.away[0], n - self.away[1]) if n else (0, 0)
        flags = int(self.crawford) if n else int(self.jacoby) | 2 * int(self.beavers)
        return format_xgid(board, 1, dice, cube=self.value.bit_length() - 1, cube_owner=owner,
                           score_x=score[0], score_o=score[1], crawford=flags,
                           match_length=n)  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The state as the protocol's keys (``cube``, ``match``, ``jacoby``, ``beavers``):
        from_request reads it back."""
        doc: dict[str, Any] = {"cube": {"value": self.value, "owner": self.owner}}
        if self.is_match:
            doc["match"] = {"length": self.length, "away": list(self.away),
                            "crawford": self.crawford}  # fmt: skip
            if self.no_cube:  # (from_request reads it back: a review found it dropped)
                doc["match"]["no_cube"] = True
        else:
            doc["match"] = None
            doc["jacoby"] = self.jacoby
            doc["beavers"] = self.beavers
        return doc

    def describe(self) -> str:
        """The state in words: "7-point match, mover 2-away, opponent 4-away, ..."."""
        cube = (
            "cube centered"
            if self.owner == "centered"
            else f"cube {self.value} owned by the {self.owner}"
        )
        if self.value == 1 and self.owner == "centered":
            cube = "cube centered at 1"
        if not self.is_match:
            rules = [r for r, on in (("Jacoby", self.jacoby), ("beavers", self.beavers)) if on]
            return f"money game, {cube}" + (f", {' and '.join(rules)}" if rules else "")
        stage = (
            " (Crawford game)"
            if self.crawford
            else (" (post-Crawford)" if self.post_crawford and self.length > 1 else "")
        )
        if self.no_cube:
            cube = "no cube"
        return (f"{self.length}-point match, mover {self.away[0]}-away, opponent "
                f"{self.away[1]}-away{stage}, {cube}")  # fmt: skip


MONEY = CubeState()


def away_from_score(length: int, score: Any) -> tuple[int, int]:
    """The away scores (points still needed) of a score (points won), CubeError if it is
    not two whole numbers below the match length."""
    pair = isinstance(score, (list, tuple)) and len(score) == 2
    if not (pair and all(type(s) is int and s >= 0 for s in score)):  # bool is no score
        raise CubeError(f"the score is two whole numbers >= 0, got {shown(score)}")
    if max(score) >= length:
        raise CubeError(f"a score of {score[0]}-{score[1]} ends a {length}-point match")
    return (length - score[0], length - score[1])


def from_request(req: Mapping[str, Any], base: CubeState | None = None) -> CubeState:
    """A cube state from the documented JSON keys (``cube``: {value, owner}, ``match``:
    {length, away, crawford} or null, ``jacoby``, ``beavers``), each key given overriding
    `base` (an XGID's own state; default: money, centered)."""
    if not isinstance(req, Mapping):
        raise CubeError(f"a cube state is an object with the keys cube, match, jacoby and "
                        f"beavers, got {shown(req)}")  # fmt: skip
    s = base if base is not None else MONEY
    fields: dict[str, Any] = {}
    if "cube" in req and req["cube"] is not None:
        cube = req["cube"]
        if not isinstance(cube, Mapping):
            raise CubeError(
                f'\'cube\' is an object {{"value": 2, "owner": "mover"}}, got {shown(cube)}'
            )
        unknown = set(cube) - {"value", "owner"}
        if unknown:
            names = key_list(sorted(unknown, key=str))
            raise CubeError(f"'cube' has unknown keys {names}: use value and owner")
        fields["value"] = cube.get("value", s.value if "owner" in cube else 1)
        fields["owner"] = cube.get("owner", "centered" if fields["value"] == 1 else s.owner)
        v = fields["value"]
        if "owner" not in cube and is_cube_value(v) and v > 1 and fields["owner"] == "centered":
            raise CubeError(f"a cube at {shown(fields['value'])} has been turned: say who owns it "
                            '("owner": "mover" or "opponent")')  # fmt: skip
    if "match" in req:
        m = req["match"]
        if m is None:
            fields.update(length=0, away=(0, 0), crawford=False, no_cube=False)
        else:
            if not isinstance(m, Mapping):
                raise CubeError(f"'match' is an object {{\"length\": 7, \"away\": [2, 4], "
                                f"\"crawford\": false}} or null, got {shown(m)}")  # fmt: skip
            unknown = set(m) - {"length", "away", "score", "crawford", "no_cube"}
            if unknown:
                names = key_list(sorted(unknown, key=str))
                raise CubeError(f"'match' has unknown keys {names}: use length, away (or "
                                "score), crawford and no_cube")  # fmt: skip
            if "length" not in m:
                raise CubeError("'match' needs a 'length'")
            length = m["length"]
            if "away" in m and "score" in m:
                raise CubeError("'match' takes 'away' or 'score', not both")
            if "away" not in m and "score" not in m:
                raise CubeError("'match' needs 'away': [mover, opponent] (points still needed)")
            pair = m.get("away", m.get("score"))
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise CubeError(f"'away' is [mover, opponent], got {shown(pair)}")
            if not isinstance(length, int) or isinstance(length, bool) or length < 1:
                raise CubeError(
                    f"the match length must be a whole number >= 1, got {shown(length)}"
                )
            crawford = m.get("crawford", False)
            if not isinstance(crawford, bool):
                raise CubeError(f"'crawford' is true or false, got {shown(crawford)}")
            no_cube = m.get("no_cube", False)
            if not isinstance(no_cube, bool):
                raise CubeError(f"'no_cube' is true or false, got {shown(no_cube)}")
            away = away_from_score(length, pair) if "score" in m else tuple(pair)
            fields.update(length=length, away=away, crawford=crawford, jacoby=False, beavers=False,
                          no_cube=no_cube)  # fmt: skip
    for key in ("jacoby", "beavers"):
        if key in req and req[key] is not None:
            if not isinstance(req[key], bool):
                raise CubeError(f"'{key}' is true or false, got {shown(req[key])}")
            fields[key] = req[key]
    return replace(s, **fields) if fields else s


__all__ = ["MAX_CUBE", "MAX_LENGTH", "MONEY", "OWNERS", "CubeState", "away_from_score",
           "from_request", "is_cube_value"]  # fmt: skip
