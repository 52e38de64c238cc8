"""A slow, plain reference for the net's inputs (the encoder, encode.py), written from the
encoder's documented definitions and nothing else: no code, constant or table comes from the
engine. tests/test_encode.py compares it with the kernel on random positions of both variants.

Every count of rolls is taken here by walking the 36 rolls of two dice (ordered, so a
non-double is seen twice, as (a, b) and as (b, a)) and the checkers' paths one die at a
time; the open-board shot counts and the escape counts are small functions of that walk,
not tables written down. Sums and quotients are taken in Python floats (float64, as the
kernel computes them), and the inputs are rounded to float32 once, at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np

# The board (board.py's docstring): 30 int8 slots, seen by the side on roll.
#   slot 0        the opponent's checkers on the bar, stored as a number <= 0
#   slots 1..24   the points in the mover's numbering (mover's checkers > 0, the
#                 opponent's < 0); the mover moves 24 -> 1, the opponent 1 -> 24
#   slots 25..29  the mover's bar, the mover's borne-off, the opponent's borne-off, the
#                 mover's unentered and the opponent's unentered checkers (Acey-Deucey), >= 0
SLOT_THEIR_BAR = 0
SLOT_MY_BAR = 25
SLOT_MY_OFF = 26
SLOT_THEIR_OFF = 27
SLOT_MY_OUT = 28
SLOT_THEIR_OUT = 29

# The inputs (encode.py's docstrings): for each side, in its own numbering, 24 points
# of 4 units and 3 more (bar, off, unentered) -- the raw block -- then version 1's 6
# features; the mover's side first, then the opponent's. Then version 2's 8 features of the
# mover, the 8 of the opponent, and last the contact flag (version 1's inputs are version
# 2's without the 16 in the middle, so the flag stays last).
RAW_INPUTS = 24 * 4 + 3
FEATURES_V1 = 6
FEATURES_V2 = 8
INPUT_COUNT = 2 * (RAW_INPUTS + FEATURES_V1) + 2 * FEATURES_V2 + 1

# The 36 rolls, ordered: (first die, second die).
ROLLS = [(first, second) for first in range(1, 7) for second in range(1, 7)]


def dice_orders(first: int, second: int) -> list[tuple[int, ...]]:
    """The orders in which a roll's dice can be played: a doublet is four moves of its
    number, any other roll its two numbers, either one first."""
    if first == second:
        return [(first,) * 4]
    return [(first, second), (second, first)]


def landings(start: int, dice: tuple[int, ...], closed: set[int] | frozenset[int]) -> Iterator[int]:
    """The points one checker stops on when it plays `dice` in turn from `start`, moving up
    the numbers: one after each die, until a die would put it on a closed point, where it
    may not stop: that die and the ones after it are not played by this checker."""
    where = start
    for die in dice:
        where = where + die
        if where in closed:
            return
        yield where


@cache
def open_board_shots(distance: int) -> int:
    """Of the 36 rolls, those on which a checker `distance` pips behind a blot can hit it
    with nothing in the way: with one die, with both dice, or, on a doublet, with 1 to 4
    moves (the definition of the encoder's HITS_OPEN)."""
    count = 0
    for roll in ROLLS:
        stops: set[int] = set()
        for order in dice_orders(*roll):
            stops.update(landings(0, order, set()))
        if distance in stops:
            count += 1
    return count


@cache
def escape_count(blocked: frozenset[int]) -> int:
    """Of the 36 rolls, those on which a checker gets past every block among the 12 points
    in front of it (the definition of the encoder's ESCAPES): `blocked` holds the distances,
    1 to 12 pips ahead, of the closed points. It escapes when, playing the dice of the roll
    in some order one at a time and never stopping on a closed point, it stops further
    ahead than the farthest of them. Nothing blocked: all 36. Points more than 12 ahead are
    not looked at, and the edge of the board is not either (the checker may pass it)."""
    if not blocked:
        return len(ROLLS)
    farthest = max(blocked)
    count = 0
    for roll in ROLLS:
        if any(
            reached > farthest
            for order in dice_orders(*roll)
            for reached in landings(0, order, blocked)
        ):
            count += 1
    return count


@dataclass
class Side:
    """The position as one side sees it, in its own numbering (it moves from 24 down to 1,
    the other side up from 1 to 24, entering on 1..6 as if from point 0)."""

    mine: list[int]  # mine[p], p = 1..24: this side's checkers on its point p
    theirs: list[int]  # theirs[p]: the other side's checkers on this side's point p
    bar: int
    off: int
    out: int  # not yet entered (Acey-Deucey)
    their_bar: int
    their_out: int

    @classmethod
    def of_board(cls, board: list[int], mover: bool) -> Side:
        """The mover's side of `board` (mover=True) or its opponent's, whose point p is the
        mover's point 25 - p."""
        if mover:
            mine = [0] + [max(board[p], 0) for p in range(1, 25)]
            theirs = [0] + [max(-board[p], 0) for p in range(1, 25)]
            return cls(
                mine,
                theirs,
                bar=board[SLOT_MY_BAR],
                off=board[SLOT_MY_OFF],
                out=board[SLOT_MY_OUT],
                their_bar=-board[SLOT_THEIR_BAR],
                their_out=board[SLOT_THEIR_OUT],
            )
        mine = [0] + [max(-board[25 - p], 0) for p in range(1, 25)]
        theirs = [0] + [max(board[25 - p], 0) for p in range(1, 25)]
        return cls(
            mine,
            theirs,
            bar=-board[SLOT_THEIR_BAR],
            off=board[SLOT_THEIR_OFF],
            out=board[SLOT_THEIR_OUT],
            their_bar=board[SLOT_MY_BAR],
            their_out=board[SLOT_MY_OUT],
        )

    # What the features are made of.

    def points_with(self, least: int, most: int = 15) -> list[int]:
        """This side's points holding `least` to `most` of its checkers, lowest first."""
        return [p for p in range(1, 25) if least <= self.mine[p] <= most]

    def their_points(self, least: int = 1) -> list[int]:
        """The points (this side's numbering) with `least` or more of the other side's."""
        return [p for p in range(1, 25) if self.theirs[p] >= least]

    def waiting(self) -> int:
        """Checkers on the bar or not yet entered: both start from point 25."""
        return self.bar + self.out

    def checkers_by_point(self) -> list[tuple[int, int]]:
        """(point, checkers) for every point this side has checkers on, the bar and the
        unentered ones as point 25."""
        pairs = [(p, self.mine[p]) for p in self.points_with(1)]
        if self.waiting():
            pairs.append((25, self.waiting()))
        return pairs

    def rearmost(self) -> int:
        """The point of this side's checker farthest from home: 25 with any on the bar or
        unentered, 0 with none left to move (all borne off)."""
        return max((p for p, _ in self.checkers_by_point()), default=0)

    def escapes_from(self, point: int) -> int:
        """Escape rolls (of 36) of this side's checker on `point` (25: the bar): the closed
        points are the other side's points of two or more among the 12 in front of it."""
        ahead = frozenset(d for d in range(1, 13) if point - d >= 1 and self.theirs[point - d] >= 2)
        return escape_count(ahead)

    # The inputs.

    def raw(self) -> list[float]:
        """The 99 raw units: per point, n == 1, n == 2, n >= 3 and (n - 3) / 2 above 3;
        then bar / 2, off / 15, unentered / 15."""
        units: list[float] = []
        for p in range(1, 25):
            n = self.mine[p]
            units.append(float(n == 1))
            units.append(float(n == 2))
            units.append(float(n >= 3))
            units.append((n - 3) / 2 if n > 3 else 0.0)
        return [*units, self.bar / 2, self.off / 15, self.out / 15]

    def features_v1(self) -> list[float]:
        """Version 1's six features."""
        pips = sum(p * n for p, n in self.checkers_by_point())
        held = set(self.points_with(2))
        longest = 0
        for low in held:
            length = 1
            while low + length in held:
                length += 1
            longest = max(longest, length)
        home = len([p for p in held if p <= 6])
        blots = len(self.points_with(1, 1))
        rear = self.rearmost()
        escape = self.escapes_from(rear) if rear > 0 else 36  # none left: nothing to escape
        # The prime is not capped (a seven-point prime gives 7 / 6), nor the pips.
        return [
            pips / 167,
            longest / 6,
            home / 6,
            min(blots, 5) / 5,
            self.open_board_risk(),
            escape / 36,
        ]

    def open_board_risk(self) -> float:
        """The chance that some blot of this side is hit, from the open-board shot counts
        alone, every (blot, attacker) pair taken as independent: 1 - the product of
        (1 - shots / 36). Conventions of the definition: an attacker is a point of the other
        side's (one factor a point, whatever its checkers) 1 to 12 pips behind the blot, and
        its bar (one factor, whatever its checkers, at the blot's own distance from point 0,
        at any distance); unentered Acey-Deucey checkers are no attackers here."""
        miss = 1.0
        for blot in self.points_with(1, 1):
            distances = [blot - q for q in self.their_points() if 1 <= blot - q <= 12]
            if self.their_bar > 0:
                distances.append(blot)
            for d in distances:
                miss *= 1 - open_board_shots(d) / 36
        return 1 - miss

    def shots(self) -> tuple[int, int]:
        """(Rolls of 36 on which the other side can hit a blot of this side, the sum over
        those rolls of the pips the costliest hit costs: 25 - the lowest blot it can hit).

        The other side's moves, as the definition models them: for each order of the dice,
        the checkers on its bar enter first, one die each, on the point of the die's number
        (from point 0); a held entry point (this side's two or more) ends the play. The dice
        left are then played by one checker -- any of its checkers on the points, one just
        entered, or an unentered Acey-Deucey one from point 0, which need not wait for the
        bar -- some of them in turn, never stopping on a held point. A blot is hit when the
        checker stops on it. Whether the rest of the roll could then be played legally is
        not asked (so a hit that breaks the rule to use both dice still counts)."""
        blots = set(self.points_with(1, 1))
        held = set(self.points_with(2))
        starters = set(self.their_points())
        if self.their_out > 0:
            starters.add(0)
        rolls = 0
        cost = 0
        for roll in ROLLS:
            reached: set[int] = set()
            for order in dice_orders(*roll):
                reached |= self.reach(order, starters, held)
            hit = reached & blots
            if hit:
                rolls += 1
                cost += 25 - min(hit)
        return rolls, cost

    def reach(self, order: tuple[int, ...], starters: set[int], held: set[int]) -> set[int]:
        """The points the other side can stop on with the dice played in `order`."""
        stops: set[int] = set()
        to_enter = min(self.their_bar, len(order))
        for die in order[:to_enter]:
            if die in held:
                return stops
            stops.add(die)
        rest = order[to_enter:]
        for start in starters | set(order[:to_enter]):
            stops.update(landings(start, rest, held))
        return stops

    def features_v2(self) -> list[float]:
        """Version 2's eight features."""
        rolls, cost = self.shots()
        # The other side's longest run of points of two or more in front of the rearmost
        # checker (points 1 .. rear - 1), capped at 6.
        run = 0
        longest = 0
        for p in range(1, self.rearmost()):
            run = run + 1 if self.theirs[p] >= 2 else 0
            longest = max(longest, run)
        # Mobility: the mean, over the checkers on 13..24, the bar and unentered, of their
        # escape rolls; 1 with none.
        back = [(p, n) for p, n in self.checkers_by_point() if p >= 13]
        n_back = sum(n for _, n in back)
        if n_back:
            mobility = sum(n * self.escapes_from(p) for p, n in back) / (36 * n_back)
        else:
            mobility = 1.0
        # Pips to leave contact: every checker in front of the other side's rearmost one
        # (point 0 while it has any on the bar or unentered) counts its distance to that
        # checker's point (the convention: p - rear, e.g. 23 from 24 to a rearmost one on 1);
        # nothing when the other side has no checker left to move.
        theirs_left = self.their_points()
        if self.their_bar > 0 or self.their_out > 0:
            their_rear = 0
        elif theirs_left:
            their_rear = min(theirs_left)
        else:
            their_rear = None
        need = 0
        if their_rear is not None:
            need = sum(n * (p - their_rear) for p, n in self.checkers_by_point() if p > their_rear)
        held = self.points_with(2)
        anchors = [p for p in held if p >= 19]
        # A checker on the bar fails to enter when both dice (a doublet's one number) show
        # closed points of 19..24: entering with d lands on point 25 - d. The count is k * k
        # for k closed points; k * k / 36 and the definition's (k / 6) ** 2 can differ in the
        # last bit of a float64 (k = 5) but round to the same float32.
        closed = set(self.their_points(2))
        dance = sum(1 for a, b in ROLLS if 25 - a in closed and 25 - b in closed)
        return [
            rolls / 36,
            cost / (36 * 24),
            min(longest, 6) / 6,
            mobility,
            min(need / 200, 1.0),
            max(held, default=0) / 24,
            min(len(anchors), 2) / 2,
            dance / 36,
        ]


def in_contact(board: list[int]) -> bool:
    """Whether the sides can still hit each other: some checker of either side is on the bar
    or unentered, or some mover checker stands higher than some opponent checker (the mover
    moves down, the opponent up, so they have not yet passed each other)."""
    waiting = (SLOT_MY_BAR, SLOT_MY_OUT, SLOT_THEIR_OUT)
    if board[SLOT_THEIR_BAR] != 0 or any(board[slot] > 0 for slot in waiting):
        return True
    mine = [p for p in range(1, 25) if board[p] > 0]
    theirs = [p for p in range(1, 25) if board[p] < 0]
    return any(p > q for p in mine for q in theirs)


def reference_encode(board: np.ndarray) -> np.ndarray:
    """The inputs of one board (mover's view, 30 slots), float32."""
    slots = [int(v) for v in np.asarray(board).reshape(-1)]
    assert len(slots) == 30
    me = Side.of_board(slots, mover=True)
    them = Side.of_board(slots, mover=False)
    values = [
        *me.raw(),
        *me.features_v1(),
        *them.raw(),
        *them.features_v1(),
        *me.features_v2(),
        *them.features_v2(),
        float(in_contact(slots)),
    ]
    assert len(values) == INPUT_COUNT
    return np.array(values, dtype=np.float32)
