"""Reference move generator: slow, plain Python, written straight from RULES.md.

This is the oracle the fast (numba) move generator is compared with. It favours
being obviously correct over being fast: every rule below is one small function
or one ``if``, and a turn is found by trying every order of the dice.

What it implements (RULES.md sections 1 and 2):

- one die moves one checker that many points, 24 -> 1 in the mover's numbering;
  a point with two or more opposing checkers is closed; landing on a lone opposing
  checker (a blot) hits it: it goes to the opponent's bar (``board[OPP_BAR] -= 1``);
- a checker on the bar enters with die d on point 25 - d, and while the mover has
  checkers on the bar no other checker may move;
- standard bear-off: only with all 15 home (points 1-6 or off; none on the bar or
  unentered); die d bears off from point d, or, when no checker stands above
  point d, from the highest occupied point; otherwise the die moves a checker
  inside the home board; bearing off is never forced while another move exists;
- a turn is every ordered sequence of single-checker moves, die by die (both orders
  of two different dice, four moves for a doublet); only sequences that use the most
  dice are legal; when only one of two dice can be used, the higher one if it can;
  plays are the same when they lead to the same position;
- Acey-Deucey: unentered checkers (``board[MY_OUT]``) enter like bar checkers but
  with no duty to enter first; hit checkers go to the bar and must enter first;
  once all 15 are home a die may only bear off a checker from the point equal to the
  die (no moves inside the home board, no bearing off from a lower point);
- Acey-Deucey roll 1-2: play the 1 and the 2 (maximal use, higher die rule); if both
  were played, then for each chosen doublet k = 1..6 play k four times with maximal
  use; if all four were played the mover rolls again, otherwise the turn ends; the
  game ends, and with it the chain, when the mover has borne off all 15 (RULES.md: the
  side that first bears off all 15 wins), after the 1 and the 2 or after the doublet.

API: ``reference_outcomes(board, d1, d2, variant) -> set[tuple[bytes, bool]]``.
"""

from __future__ import annotations

import functools

import numpy as np

from doublet.core.board import (
    ACEY_DEUCEY,
    CHECKERS,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    OPP_OFF,
    SIZE,
    STANDARD,
)

# A position while the turn is worked out: the board array as a tuple of ints
# (hashable, so sets of positions remove duplicate plays), mover's view.
State = tuple[int, ...]

__all__ = ["legal_plays", "reference_outcomes", "single_die_moves"]


# ---------------------------------------------------------------------------
# One die, one checker
# ---------------------------------------------------------------------------


def _is_open(s: State, point: int) -> bool:
    """A point the mover may land on: at most one opposing checker there."""
    return s[point] >= -1


def _all_home(s: State) -> bool:
    """All 15 of the mover's checkers are on points 1-6 or borne off."""
    if s[MY_BAR] > 0 or s[MY_OUT] > 0:
        return False
    return all(s[p] <= 0 for p in range(7, 25))


def _land(b: list[int], point: int) -> None:
    """Put one mover checker on an open point, hitting a blot that stands there."""
    if b[point] == -1:
        b[point] = 0
        b[OPP_BAR] -= 1
    b[point] += 1


def _move_to(s: State, source: int, target: int) -> State:
    """Take one mover checker from index source (a point, MY_BAR or MY_OUT) to target."""
    b = list(s)
    b[source] -= 1
    _land(b, target)
    return tuple(b)


def _bear_off(s: State, point: int) -> State:
    b = list(s)
    b[point] -= 1
    b[MY_OFF] += 1
    return tuple(b)


def _enter(s: State, source: int, d: int) -> set[State]:
    """Enter one checker from the bar or from the unentered pile with die d."""
    target = 25 - d
    if _is_open(s, target):
        return {_move_to(s, source, target)}
    return set()


def _standard_moves(s: State, d: int) -> set[State]:
    if s[MY_BAR] > 0:  # bar checkers first
        return _enter(s, MY_BAR, d)
    home = _all_home(s)
    out: set[State] = set()
    for p in range(1, 25):
        if s[p] <= 0:
            continue
        target = p - d
        if target >= 1:
            if _is_open(s, target):
                out.add(_move_to(s, p, target))
        elif home:
            exact = target == 0
            highest = all(s[q] <= 0 for q in range(p + 1, 25))
            if exact or highest:
                out.add(_bear_off(s, p))
    return out


def _acey_deucey_moves(s: State, d: int) -> set[State]:
    if s[MY_BAR] > 0:  # a hit checker must enter before any other move
        return _enter(s, MY_BAR, d)
    if _all_home(s):  # exact numbers only, nothing moves inside the home board
        return {_bear_off(s, d)} if s[d] > 0 else set()
    out: set[State] = set()
    if s[MY_OUT] > 0:  # unentered checkers may enter, with no duty to
        out |= _enter(s, MY_OUT, d)
    for p in range(1, 25):
        target = p - d
        if s[p] > 0 and target >= 1 and _is_open(s, target):
            out.add(_move_to(s, p, target))
    return out


def single_die_moves(s: State, d: int, variant: int) -> set[State]:
    """Every position reached by playing die d with one checker."""
    if variant == STANDARD:
        return _standard_moves(s, d)
    return _acey_deucey_moves(s, d)


# ---------------------------------------------------------------------------
# A whole roll
# ---------------------------------------------------------------------------


def _play_in_order(start: State, dice: tuple[int, ...], variant: int) -> list[set[State]]:
    """levels[k] = the positions after playing the first k dice, in this order.

    The list stops at the last non-empty level, so len(levels) - 1 is the most
    dice this order can use; levels[-1] are the positions those sequences reach.
    """
    levels = [{start}]
    for d in dice:
        nxt: set[State] = set()
        for s in levels[-1]:
            nxt |= single_die_moves(s, d, variant)
        if not nxt:
            break
        levels.append(nxt)
    return levels


def legal_plays(start: State, d1: int, d2: int, variant: int) -> tuple[set[State], int]:
    """(positions a legal play of the roll leads to, dice used), without the 1-2 chain.

    Maximal use of the dice: only sequences using the most dice count. When only one
    of two different dice can be used, it must be the higher one if that can be played.
    With no legal move the position stays as it is (0 dice used).
    """
    if d1 == d2:
        orders = [(d1, d1, d1, d1)]
    else:
        high, low = max(d1, d2), min(d1, d2)
        orders = [(high, low), (low, high)]
    by_order = [_play_in_order(start, order, variant) for order in orders]
    most = max(len(levels) - 1 for levels in by_order)
    if most == 0:
        return {start}, 0
    if most == 1 and d1 != d2:
        high_first = by_order[0]
        if len(high_first) > 1:  # the higher die can be played: it must be
            return high_first[1], 1
        return by_order[1][1], 1
    ends: set[State] = set()
    for levels in by_order:
        if len(levels) - 1 == most:
            ends |= levels[most]
    return ends, most


def _acey_deucey_chain(start: State) -> set[tuple[State, bool]]:
    """The Acey-Deucey roll 1-2: the 1 and the 2, then a chosen doublet four times."""
    after_1_2, used = legal_plays(start, 1, 2, ACEY_DEUCEY)
    if used < 2:  # the 1 and the 2 could not both be played: the turn ends
        return {(s, False) for s in after_1_2}
    out: set[tuple[State, bool]] = set()
    for s in after_1_2:
        if s[MY_OFF] == CHECKERS:  # the 1 and the 2 bore off the last: the game is over
            out.add((s, False))
            continue
        for k in range(1, 7):
            levels = _play_in_order(s, (k, k, k, k), ACEY_DEUCEY)
            for end in levels[-1]:
                # all four played: roll again, unless the game is over (all 15 off)
                out.add((end, len(levels) - 1 == 4 and end[MY_OFF] < CHECKERS))
    return out


def reference_outcomes(
    board: np.ndarray, d1: int, d2: int, variant: int
) -> set[tuple[bytes, bool]]:
    """Every distinct (position after the whole turn, mover rolls again) pair.

    ``board`` is the engine's int8 board (SIZE,) seen by the mover; each resulting
    position is given in the mover's view too (not flipped), as ``board.tobytes()``.
    ``again`` is only ever True for an Acey-Deucey 1-2 whose doublet was played four
    times. A roll with no legal play gives ``{(board.tobytes(), False)}``.
    """
    arr = np.asarray(board)
    if arr.shape != (SIZE,):
        raise ValueError(f"board must have shape ({SIZE},), got {arr.shape}")
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise ValueError(f"dice must be 1..6, got {d1}-{d2}")
    if variant not in (STANDARD, ACEY_DEUCEY):
        raise ValueError(f"unknown variant {variant}")
    start: State = tuple(int(x) for x in arr)
    if variant == ACEY_DEUCEY and {d1, d2} == {1, 2}:
        outcomes = _acey_deucey_chain(start)
    else:
        plays, _ = legal_plays(start, d1, d2, variant)
        outcomes = {(s, False) for s in plays}
    return {(np.array(s, dtype=np.int8).tobytes(), again) for s, again in outcomes}


# -- gnubg Position ID, bit by bit (doublet.formats.ids writes and reads it with strings
# and integers) -------------------------------------------------------------------------


def position_id_bits(board: np.ndarray) -> str:
    """gnubg's PositionKey written out: for each side (the opponent first, its own
    numbering, the bar last), a 1 bit per checker and a 0 after each place, from the
    lowest bit of byte 0; base64 of the 10 bytes without padding."""
    import base64

    sides = ([0] * 25, [0] * 25)  # opponent, on roll
    for p in range(1, 25):
        n = int(board[p])
        if n > 0:
            sides[1][p - 1] = n
        elif n < 0:
            sides[0][24 - p] = -n
    sides[1][24] = int(board[MY_BAR])
    sides[0][24] = -int(board[OPP_BAR])
    bits: list[int] = []
    for side in sides:
        for n in side:
            bits.extend([1] * n)
            bits.append(0)
    data = bytearray(10)
    for i, bit in enumerate(bits[:80]):
        if bit:
            data[i // 8] |= 1 << (i % 8)
    return base64.b64encode(bytes(data)).decode("ascii")[:14]


def position_id_counts(pid: str) -> tuple[list[int], list[int]] | None:
    """The 25 counts of each side (opponent, on roll) a Position ID encodes, read bit by
    bit; None when the bits hold fewer than 50 places."""
    import base64

    data = base64.b64decode(pid + "==")
    bits = [(data[i // 8] >> (i % 8)) & 1 for i in range(80)]
    sides: list[list[int]] = [[0] * 25, [0] * 25]
    side, point = 0, 0
    for bit in bits:
        if side == 2:
            break
        if bit:
            sides[side][point] += 1
        else:
            point += 1
            if point == 25:
                side, point = side + 1, 0
    if side < 2:
        return None
    return sides[0], sides[1]


# -- leaving the other side's home board (doublet.rules.bearoff's ZONE table) ------------


def zone_turns(distances: tuple[int, ...], turns: int = 32) -> list[float]:
    """P(the last of the checkers at these distances (1..6) from leaving a home board is
    out after exactly n turns), n = 0..turns-1, the side playing to minimise the expected
    number of turns: from the definition, every ordering of the dice and every checker
    each die can move (a die at least a checker's distance takes it out)."""
    dist, _ = _zone(tuple(sorted(distances)), turns)
    return dist


@functools.cache
def _zone(state: tuple[int, ...], turns: int) -> tuple[list[float], float]:
    if not state:
        return [1.0] + [0.0] * (turns - 1), 0.0
    dist = [0.0] * turns
    for d1 in range(1, 7):
        for d2 in range(1, 7):  # 36 ordered rolls: each order of a non-double once
            dice = [d1] * 4 if d1 == d2 else [d1, d2]
            reach = {state}
            for die in dice:
                reach = {_zone_move(s, i, die) for s in reach for i in range(len(s))} | {
                    s for s in reach if not s
                }
            if d1 != d2:  # the other order too
                other = {state}
                for die in (d2, d1):
                    other = {_zone_move(s, i, die) for s in other for i in range(len(s))} | {
                        s for s in other if not s
                    }
                reach |= other
            best = min(reach, key=lambda s: _zone(s, turns)[1])
            sub = _zone(best, turns)[0]
            for n in range(turns - 1):
                dist[n + 1] += sub[n] / 36
    return dist, sum(n * p for n, p in enumerate(dist))


def _zone_move(state: tuple[int, ...], i: int, die: int) -> tuple[int, ...]:
    rest = state[:i] + state[i + 1 :]
    left = state[i] - die
    return tuple(sorted(rest + ((left,) if left > 0 else ())))


# -- gammons the rules rule out (doublet.search.searcher._v0's static value) ------------


def without_impossible_gammons(b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """A copy of p (the side on roll's five probabilities) with the gammons the rules rule
    out set to 0: a side that has borne off a checker can lose neither a gammon nor a
    backgammon."""
    p = np.array(p, dtype=np.float64)
    if b[MY_OFF] > 0:
        p[3:] = 0.0
    if b[OPP_OFF] > 0:
        p[1:3] = 0.0
    return p
