"""Plays as text, both ways, written exactly as GNU Backgammon writes them.

API:

- ``format_play(before, after, d1, d2, variant=STANDARD, again=False) -> str``: the text of
  the play of d1-d2 that turns ``before`` into ``after`` (both in the mover's view, as
  ``doublet.rules.movegen.legal_outcomes`` gives them), e.g. ``"24/18 13/11"``, ``"bar/22*"``,
  ``"13/7*/5"``, ``"8/5(2)"``, ``"6/off"``. A roll with no legal play is ``""``.
- ``describe_outcomes(before, outcomes, again, d1, d2, variant=STANDARD) -> list[str]``: the
  text of every outcome of one roll at once (the checker paths are found once per roll).
- ``single_moves(before, after, d1, d2, hint=()) -> list[tuple[int, int]]``: the same
  standard play as single-die moves in an order they can be played, ``[(24, 20), (6, 5)]``
  (the bar 25, off 0), as GNU Backgammon's SGF files write a play.
- ``parse_play(board, d1, d2, text, variant=STANDARD) -> int``: the index into
  ``legal_outcomes(board, d1, d2, variant)`` of the play that ``text`` means.
- ``other_side(text) -> str``: a play's text in the other side's numbering (point p is
  25 - p; bar, off and in stay): the programs write the engine's plays in the person's
  numbering, the one their boards are labelled with.

Writing (gnubg's ``FormatMove`` in format.c, reproduced step by step in ``_gnubg_text``):
the single-die moves of the play are sorted by source point, then by destination, both
from high to low; a move that starts where an earlier one ends joins it (one checker, or
two checkers that pass on, which reads the same): the point in between is dropped unless
a blot was hit there (``13/5``, ``13/7*/5``); equal paths are written once with a count
(``8/5(2)``); a destination holding an opposing blot gets ``*`` the first time only.
Which of the plays that lead to one position gnubg picks does not matter: in standard
backgammon their moves are the same up to the order in which one checker uses two dice,
and that order never shows (checked on all of gnubg's texts in tests/data). Checkers on
the bar are ``bar``, borne off ``off``.

Acey-Deucey (no gnubg to follow, so decided here): unentered checkers enter as
``in/22``, written after any ``bar/..`` entries; when both enter, the position does not
show which went where, and the bar checkers are written on the higher points. A 1-2
whose 1 and 2 were both played reads ``<the 1 and the 2> then k-k: <the doublet>``,
e.g. ``in/24 in/23 then 6-6: in/19(2) 24/18 23/17``, and ``then 6-6: no play`` when
the doublet could not be played; a 1 and 2 that bear off the last checker end the game,
so no doublet follows (``2/off 1/off``). When one outcome can be reached with several
doublets, the highest is written; with several plays of the 1 and the 2 for that
doublet, the shortest text (then the first in alphabetical order).

Reading is forgiving: parts in any order, upper or lower case, extra spaces or commas,
``bar``/``b``, ``off``/``o``, ``in``, chains (``24/18/13``), one checker with several dice
(``13/5``, ``24/12`` with 6-6), counts (``8/5(2)``), hit marks optional. Reading a play
(``_match``): the text fixes where each checker goes, so the mover's checkers after the
play, and the dice each part needs; the plays left can only differ in blots hit on the
way by a checker that uses two or more dice in one part. Then the play that hits just
where the text marks (``*``) or lands is taken, so gnubg's text always reads back as the
same play; failing that, the one play that hits at least there; if several, the text is
ambiguous and the error lists them ("mark the hit"). Text that does not parse raises
``NotationError``; a well-formed play that is not legal raises ``IllegalPlayError``,
saying why when that is cheap to tell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations, pairwise, permutations

import numpy as np

from doublet.core.board import (
    ACEY_DEUCEY,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_BAR,
    STANDARD,
    Board,
    Boards,
)
from doublet.core.errors import AmbiguousPlayError, IllegalPlayError, NotationError, clipped
from doublet.core.jit import njit
from doublet.rules.movegen import all_off, chain_rolls_again, check_dice, legal_outcomes
from doublet.rules.paths import NOT_AN_OUTCOME, play_path

__all__ = [
    "can_move",
    "describe_outcomes",
    "format_play",
    "other_side",
    "parse_play",
    "play_text",
    "single_moves",
]

# A position while plays are searched: the board array as a tuple of ints (hashable).
State = tuple[int, ...]
# One die's move: (source, destination). Source: a point 1..24, MY_BAR or MY_OUT (board
# indices); destination: a point 1..24 or _OFF.
Move = tuple[int, int]
Path = tuple[Move, ...]

_OFF = 0
_ENTER = 25  # where bar and unentered checkers count from: die d enters on 25 - d
_NO_PLAY = "no play"


# ---------------------------------------------------------------------------
# Single-die moves and the plays of a roll (plain Python; for people, not search)
# ---------------------------------------------------------------------------


def _steps(b: State, die: int, variant: int) -> list[tuple[int, int, State]]:
    """Every move of one checker by ``die`` in ``b``: (source, destination, new state).
    The rules of doublet.rules.movegen (bar first, bear-off, Acey-Deucey's home rule)."""
    if b[MY_BAR] > 0:
        sources = [MY_BAR]
        highest = _ENTER
    else:
        sources = [p for p in range(24, 0, -1) if b[p] > 0]
        if b[MY_OUT] > 0:
            sources.insert(0, MY_OUT)
        highest = _ENTER if b[MY_OUT] > 0 else (sources[0] if sources else 0)
    out = []
    for s in sources:
        dst = _ENTER - die if s in (MY_BAR, MY_OUT) else s - die
        if dst >= 1:
            if b[dst] < -1:
                continue  # closed point
            if variant == ACEY_DEUCEY and highest <= 6:
                continue  # Acey-Deucey: all home, dice only bear off
        else:
            if highest > 6:
                continue  # bearing off needs all 15 home
            if dst < 0 and (variant == ACEY_DEUCEY or s != highest):
                continue
            dst = _OFF
        nb = list(b)
        nb[s] -= 1
        if dst == _OFF:
            nb[MY_OFF] += 1
        else:
            if nb[dst] == -1:  # hit a blot
                nb[dst] = 0
                nb[OPP_BAR] -= 1
            nb[dst] += 1
        out.append((s, dst, tuple(nb)))
    return out


def can_move(board: Board, d1: int, d2: int, variant: int = STANDARD) -> bool:
    """Whether the roll has a legal play (a checker can move with either die): cheap,
    unlike the full list of plays."""
    b: State = tuple(np.asarray(board, np.int8).tolist())
    return any(_steps(b, d, variant) for d in {d1, d2})


def _levels(b: State, dice: Sequence[int], variant: int) -> list[dict[State, Path]]:
    """States after 0, 1, ... dice played in this order, each with one path to it.
    Stops at the first die that no state can play. One path per state is enough: the
    plays leading to one position read the same (see the module doc and _bar_high)."""
    levels: list[dict[State, Path]] = [{b: ()}]
    for die in dice:
        nxt: dict[State, Path] = {}
        for state, path in levels[-1].items():
            for s, d, nb in _steps(state, die, variant):
                if nb not in nxt:
                    nxt[nb] = (*path, (s, d))
        if not nxt:
            break
        levels.append(nxt)
    return levels


class _Stage:
    """The plays of one roll (or one doublet of a 1-2 chain) from ``base``: ``res`` maps
    each position after a legal play to its moves; ``m`` dice are used."""

    def __init__(self, base: State, d1: int, d2: int, variant: int) -> None:
        self.base = base
        self.variant = variant
        hi, lo = max(d1, d2), min(d1, d2)
        self.name = f"{hi}-{lo}"
        self.doublet = hi == lo
        self.dice: tuple[int, ...] = (hi,) * 4 if self.doublet else (hi, lo)
        self.single = 0  # the die played when only one of two different dice can be
        if self.doublet:
            lv = _levels(base, self.dice, variant)
            self.m = len(lv) - 1
            self.res = lv[-1]
        else:
            a = _levels(base, (hi, lo), variant)
            b = _levels(base, (lo, hi), variant)
            self.m = max(len(a), len(b)) - 1
            if self.m == 2:
                self.res = {}
                for lv in (a, b):
                    if len(lv) == 3:
                        for k, v in lv[2].items():
                            self.res.setdefault(k, v)
            elif self.m == 1:
                self.single = hi if len(a) > 1 else lo
                self.res = a[1] if len(a) > 1 else b[1]
            else:
                self.res = a[0]
        self._by_mover: dict[State, list[State]] | None = None

    def by_mover(self) -> dict[State, list[State]]:
        """Positions after a play, grouped by where the mover's checkers stand."""
        if self._by_mover is None:
            groups: dict[State, list[State]] = {}
            for r in self.res:
                groups.setdefault(_mover_part(r), []).append(r)
            self._by_mover = groups
        return self._by_mover

    def text(self, after: State) -> str:
        return _gnubg_text(self.base, self.res[after])


def _mover_part(b: State) -> State:
    """Where the mover's checkers stand: points 1..24, bar, off, unentered."""
    return (*(v if v > 0 else 0 for v in b[1:25]), b[MY_BAR], b[MY_OFF], b[MY_OUT])


class _Roll:
    """Everything about one roll in one position, found once and shared by the calls
    for its outcomes (``_roll`` caches the latest few)."""

    def __init__(self, before: State, d1: int, d2: int, variant: int) -> None:
        self.before = before
        self.variant = variant
        self.name = f"{max(d1, d2)}-{min(d1, d2)}"
        boards, again = legal_outcomes(np.array(before, np.int8), d1, d2, variant)
        rows = zip(boards.tolist(), again.tolist(), strict=True)
        self.index: dict[tuple[State, bool], int] = {
            (tuple(r), bool(a)): i for i, (r, a) in enumerate(rows)
        }
        self.acey_12 = variant == ACEY_DEUCEY and {d1, d2} == {1, 2}
        self.stage = _Stage(before, d1, d2, variant)
        self.chain = self.acey_12 and self.stage.m == 2
        self._doublets: dict[tuple[State, int], _Stage] = {}
        self._chain_best: dict[tuple[State, bool], tuple[int, list[State]]] | None = None

    def doublet(self, mid: State, k: int) -> _Stage:
        """The plays of doublet k after the 1 and the 2 led to ``mid``."""
        st = self._doublets.get((mid, k))
        if st is None:
            st = self._doublets[(mid, k)] = _Stage(mid, k, k, self.variant)
        return st

    def chain_best(self) -> dict[tuple[State, bool], tuple[int, list[State]]]:
        """Each chain outcome (position, again) -> (highest doublet reaching it, the
        positions after the 1 and the 2 from which that doublet does)."""
        if self._chain_best is None:
            best: dict[tuple[State, bool], tuple[int, list[State]]] = {}
            for mid in self.stage.res:
                if all_off(mid):  # the 1 and the 2 bore off the last: no doublet
                    best[(mid, False)] = (0, [mid])
            for k in range(6, 0, -1):
                for mid in self.stage.res:
                    if all_off(mid):
                        continue
                    st = self.doublet(mid, k)
                    for r in st.res:
                        again = chain_rolls_again(r, st.m)
                        got = best.get((r, again))
                        if got is None:
                            best[(r, again)] = (k, [mid])
                        elif got[0] == k:
                            got[1].append(mid)
            self._chain_best = best
        return self._chain_best

    def text(self, after: State, again: bool) -> str:
        if not self.chain:
            if again or after not in self.stage.res:
                raise IllegalPlayError(f"not a legal outcome of {self.name} here")
            return self.stage.text(after)
        got = self.chain_best().get((after, again))
        if got is None:
            raise IllegalPlayError(f"not a legal outcome of {self.name} here")
        k, mids = got
        if k == 0:  # the game ended with the 1 and the 2
            return self.stage.text(after)
        texts = []
        for mid in mids:
            second = self.doublet(mid, k).text(after) or _NO_PLAY
            texts.append(f"{self.stage.text(mid)} then {k}-{k}: {second}")
        return min(texts, key=lambda t: (len(t), t))


@lru_cache(maxsize=4)
def _roll_cached(key: bytes, d1: int, d2: int, variant: int) -> _Roll:
    return _Roll(tuple(np.frombuffer(key, np.int8).tolist()), d1, d2, variant)


def _roll(board: Board, d1: int, d2: int, variant: int) -> _Roll:
    check_dice(d1, d2)
    if variant not in (STANDARD, ACEY_DEUCEY):
        raise ValueError(f"unknown variant {variant!r}")
    b = np.ascontiguousarray(board, dtype=np.int8)
    return _roll_cached(b.tobytes(), int(d1), int(d2), int(variant))


# ---------------------------------------------------------------------------
# Writing: gnubg's FormatMove
# ---------------------------------------------------------------------------

# Codes in _gnubg_text: points as themselves, off 0; bar 26 and unentered 25, so that
# sorting from high to low writes bar entries first (gnubg's bar is 25; it has no "in").
_CODE_BAR = 26
_CODE_IN = 25
_POINT_TEXT = {0: "off", _CODE_IN: "in", _CODE_BAR: "bar"}


def _code(src: int) -> int:
    return _CODE_BAR if src == MY_BAR else _CODE_IN if src == MY_OUT else src


def _bar_high(path: Path) -> Path:
    """Acey-Deucey: when checkers from the bar and unentered ones both enter, which
    entered where does not show in the position; write the bar ones on the higher points."""
    entering = [i for i, (s, _) in enumerate(path) if s in (MY_BAR, MY_OUT)]
    sources = [path[i][0] for i in entering]
    if len(set(sources)) < 2:
        return path
    moves = list(path)
    points = sorted((path[i][1] for i in entering), reverse=True)
    for i, s, d in zip(entering, sorted(sources, key=lambda s: s != MY_BAR), points, strict=True):
        moves[i] = (s, d)
    return tuple(moves)


def _gnubg_text(before: State, path: Path) -> str:
    """gnubg's FormatMove (format.c), step by step: ``before`` is the board the moves
    start from (for the hit marks), ``path`` the single-die moves (at most four).

    Like the C code it keeps each move as a row of four ints [source, destination, ...]
    in one flat array; a checker that hits on its way stores the later points in the
    next slots of its row."""
    rows = sorted(((_code(s), d) for s, d in _bar_high(path)), reverse=True)
    n = len(rows)
    arr = [-1] * 16
    for i, (s, d) in enumerate(rows):
        arr[4 * i] = s
        arr[4 * i + 1] = d
    src: list[int | None] = [4 * i if i < n else None for i in range(4)]
    dst = [4 * i + 1 for i in range(4)]

    def blot(p: int) -> bool:
        return 1 <= p <= 24 and before[p] < 0

    # Combine moves of a single checker.
    for i in range(4):
        for j in range(i, 4):
            si, sj = src[i], src[j]
            if si is not None and sj is not None and arr[dst[i]] == arr[sj]:
                if blot(arr[dst[i]]):  # hitting a blot: keep the point in between
                    dst[i] += 1
                    arr[dst[i]] = arr[dst[j]]
                else:  # no hit: leave it out
                    arr[dst[i]] = arr[dst[j]]
                src[j] = None
    live = [(s, d) for s, d in zip(src, dst, strict=True) if s is not None]
    # Combine identical moves.
    parts: list[list[int]] = []  # [source index, destination index, count]
    used = [False] * len(live)
    for i, (si, di) in enumerate(live):
        if used[i]:
            continue
        count = 1
        for j in range(i + 1, len(live)):
            sj, dj = live[j]
            if not used[j] and dj - sj == di - si and arr[si : di + 1] == arr[sj : dj + 1]:
                count += 1
                used[j] = True
        parts.append([si, di, count])
    out = []
    marked: set[int] = set()
    for si, di, count in parts:
        words = [_point_text(arr[si])]
        for k in range(si + 1, di):
            words.append(_point_text(arr[k]) + "*")
            marked.add(arr[k])
        last = arr[di]
        words.append(_point_text(last))
        if last and blot(last) and last not in marked:
            words[-1] += "*"
            marked.add(last)
        out.append("/".join(words) + (f"({count})" if count > 1 else ""))
    return " ".join(out)


def _point_text(code: int) -> str:
    return _POINT_TEXT.get(code, str(code))


def format_play(
    before: Board,
    after: Board,
    d1: int,
    d2: int,
    variant: int = STANDARD,
    again: bool = False,
) -> str:
    """The text of the play of d1-d2 that turns ``before`` into ``after`` (both in the
    mover's view; ``again``: the outcome's roll-again flag, Acey-Deucey 1-2 only), as
    GNU Backgammon writes it. ``""`` when the roll has no legal play. Raises
    IllegalPlayError when ``after`` is not an outcome of the roll."""
    r = _roll(before, d1, d2, variant)
    return r.text(tuple(np.asarray(after, np.int8).tolist()), bool(again))


def play_text(before: Board, after: Board, d1: int, d2: int, variant: int = STANDARD,
              again: bool = False) -> str:  # fmt: skip
    """``format_play`` for one legal outcome (as the search gives it) without finding the
    roll's other plays: one path of single-die moves from ``before`` to ``after``
    (doublet.rules.paths.play_path), written as gnubg writes it (_text_into, the kernel
    of _gnubg_text). Standard backgammon (Acey-Deucey goes through format_play).
    IllegalPlayError when no path of the roll's dice reaches ``after``; unlike
    format_play it does not check that a longer play was possible."""
    if variant != STANDARD:
        return format_play(before, after, d1, d2, variant, again)
    check_dice(d1, d2)
    if again:
        raise IllegalPlayError(f"not a legal outcome of {max(d1, d2)}-{min(d1, d2)} here")
    out = np.empty(_TEXT_BYTES, np.uint8)
    n = _play_text_into(np.asarray(before, np.int8), np.asarray(after, np.int8), d1, d2, out)
    if n < 0:
        raise IllegalPlayError(f"not a legal outcome of {max(d1, d2)}-{min(d1, d2)} here")
    return out[:n].tobytes().decode("ascii")


# The longest text _text_into writes: four parts of at most "bar/22*/16*/10*/4*" (one
# checker) or "13/7*(4)" each, with spaces: well under 64 bytes.
_TEXT_BYTES = 64


@njit
def _play_text_into(before, after, d1, d2, out):
    """play_path and _text_into in one call: the length of the text of the standard play
    of d1-d2 from before to after written into out (0: no play), or -1 when after is not
    an outcome of the roll."""
    path = np.empty((4, 2), np.int64)
    n = play_path(before, after, d1, d2, path)
    if n == NOT_AN_OUTCOME:
        return -1
    return _text_into(before, path, n, out)


@njit
def _is_blot(before, p):
    return 1 <= p <= 24 and before[p] < 0


@njit
def _put_point(out, k, code):
    """Writes a point's text (off, bar or its number) at out[k:]; the end."""
    if code == 0:
        for c in (111, 102, 102):  # "off"
            out[k] = c
            k += 1
    elif code == _CODE_BAR:
        out[k] = 98  # "bar"
        out[k + 1] = 97
        out[k + 2] = 114
        k += 3
    else:
        if code >= 10:
            out[k] = 48 + code // 10
            k += 1
        out[k] = 48 + code % 10
        k += 1
    return k


@njit
def _text_into(before, path, n, out):
    """_gnubg_text's steps for a standard play of n single-die moves path[:n] (source,
    destination; the bar MY_BAR, off 0) from before, the text written as ASCII into out;
    returns its length. Standard only: no unentered checkers, so no _bar_high."""
    # The rows (source code, destination), sorted from high to low (insertion sort).
    rs = np.empty(4, np.int64)
    rd = np.empty(4, np.int64)
    for i in range(n):
        s = path[i, 0]
        rs[i] = _CODE_BAR if s == MY_BAR else s
        rd[i] = path[i, 1]
    for i in range(1, n):
        s, d = rs[i], rd[i]
        j = i - 1
        while j >= 0 and (rs[j] < s or (rs[j] == s and rd[j] < d)):
            rs[j + 1] = rs[j]
            rd[j + 1] = rd[j]
            j -= 1
        rs[j + 1] = s
        rd[j + 1] = d
    arr = np.full(16, -1, np.int64)
    src = np.full(4, -1, np.int64)  # -1: no row (gnubg's moves joined into another)
    dst = np.empty(4, np.int64)
    for i in range(4):
        dst[i] = 4 * i + 1
        if i < n:
            arr[4 * i] = rs[i]
            arr[4 * i + 1] = rd[i]
            src[i] = 4 * i
    # Combine moves of a single checker (a blot hit on the way keeps its point).
    for i in range(4):
        for j in range(i, 4):
            if src[i] >= 0 and src[j] >= 0 and arr[dst[i]] == arr[src[j]]:
                if _is_blot(before, arr[dst[i]]):
                    dst[i] += 1
                arr[dst[i]] = arr[dst[j]]
                src[j] = -1
    ls = np.empty(4, np.int64)
    ld = np.empty(4, np.int64)
    m = 0
    for i in range(4):
        if src[i] >= 0:
            ls[m] = src[i]
            ld[m] = dst[i]
            m += 1
    # Combine identical moves, and write each part.
    used = np.zeros(4, np.bool_)
    marked = np.zeros(_CODE_BAR + 1, np.bool_)
    k = 0
    for i in range(m):
        if used[i]:
            continue
        si, di = ls[i], ld[i]
        count = 1
        for j in range(i + 1, m):
            if not used[j] and ld[j] - ls[j] == di - si:
                same = True
                for t in range(di - si + 1):
                    if arr[si + t] != arr[ls[j] + t]:
                        same = False
                        break
                if same:
                    count += 1
                    used[j] = True
        if k > 0:
            out[k] = 32  # " "
            k += 1
        k = _put_point(out, k, arr[si])
        for t in range(si + 1, di):
            out[k] = 47  # "/"
            k = _put_point(out, k + 1, arr[t])
            out[k] = 42  # "*"
            k += 1
            marked[arr[t]] = True
        last = arr[di]
        out[k] = 47
        k = _put_point(out, k + 1, last)
        if last != 0 and _is_blot(before, last) and not marked[last]:
            out[k] = 42
            k += 1
            marked[last] = True
        if count > 1:
            out[k] = 40  # "("
            out[k + 1] = 48 + count
            out[k + 2] = 41  # ")"
            k += 3
    return k


def describe_outcomes(
    before: Board,
    outcomes: Boards,
    again: Sequence[bool] | np.ndarray,
    d1: int,
    d2: int,
    variant: int = STANDARD,
) -> list[str]:
    """``format_play`` for every outcome of one roll (``legal_outcomes``' two arrays)."""
    r = _roll(before, d1, d2, variant)
    flags = np.asarray(again, bool).tolist()
    rows = np.asarray(outcomes, np.int8).tolist()
    if len(rows) != len(flags):
        raise ValueError(f"{len(rows)} outcomes but {len(flags)} again flags")
    return [r.text(tuple(row), a) for row, a in zip(rows, flags, strict=True)]


def single_moves(before: Board, after: Board, d1: int, d2: int,
                 hint: Sequence[Move] = ()) -> list[Move]:  # fmt: skip
    """The single-die moves of the standard play of d1-d2 that turns ``before`` into
    ``after`` (the mover's view), as (source, destination) with the bar 25 and off 0, in
    an order in which they can be played one after the other (what GNU Backgammon's SGF
    files write). ``hint``: moves to keep, in their order, when they are such a play
    (say, the parts of a match file's play); else the sources from high to low.
    ``[]`` when the roll has no legal play; IllegalPlayError when ``after`` is not an
    outcome of the roll."""
    st = _roll(before, d1, d2, STANDARD).stage
    goal = tuple(np.asarray(after, np.int8).tolist())
    path = st.res.get(goal)
    if path is None:
        raise IllegalPlayError(f"not a legal outcome of {st.name} here")
    for moves in (tuple(hint), tuple(sorted(path, reverse=True))):
        if moves and _plays_to(st, moves, goal):
            return list(moves)
    return list(path)


def _plays_to(st: _Stage, moves: Sequence[Move], goal: State) -> bool:
    """Whether ``moves``, played in this order with the stage's dice, one die each, are
    a whole play that ends at ``goal``."""
    if len(moves) != st.m:
        return False
    left = list(st.dice[: st.m]) if st.m != 1 or st.doublet else [st.single]
    b = st.base
    for s, d in moves:
        distance = (_ENTER if s == MY_BAR else s) - d
        # The die that covers the distance exactly first, else a higher one (bearing off).
        for die in sorted(set(left), key=lambda k: (k != distance, k)):
            nb = next((n for s2, d2, n in _steps(b, die, STANDARD) if (s2, d2) == (s, d)), None)
            if nb is not None:
                left.remove(die)
                b = nb
                break
        else:
            return False
    return b == goal


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

_WORDS = {"bar": MY_BAR, "b": MY_BAR, "off": _OFF, "o": _OFF, "in": MY_OUT}
_PIECE = re.compile(r"([a-z]+|\d+)(\**)")
_PART = re.compile(r"(.*?)(?:\((\d+)\))?")
_THEN = re.compile(r"\bthen\b")
# The longest play text read: a 1-2 chain written hop by hop, spaced out, is about 130
# characters; longer text is refused before parsing, not echoed whole in an error.
MAX_PLAY_TEXT = 200
_DOUBLET = re.compile(r"\s*(\d)\s*-?\s*(\d)\s*:?(.*)", re.S)
_NUMBER_WORDS = {1: "one die", 2: "two dice", 3: "three dice", 4: "four dice"}


class _Part:
    """One part of a play: a checker's points from source to destination (MY_BAR, MY_OUT,
    points, _OFF at the end), which of them carry a hit mark, and how many checkers."""

    def __init__(self, text: str, points: list[int], stars: list[bool], count: int) -> None:
        self.text = text
        self.points = points
        self.stars = stars
        self.count = count


# A play's text and its parts (None: 'no play').
_Text = tuple[str, "list[_Part] | None"]


def _label(p: int) -> str:
    return {MY_BAR: "bar", MY_OUT: "in", _OFF: "off"}.get(p, str(p))


def _checkers(n: int) -> str:
    return "1 checker" if n == 1 else f"{n} checkers"


def _height(p: int) -> int:
    """Distance from off: bar and unentered checkers count 25."""
    return _ENTER if p in (MY_BAR, MY_OUT) else p


def _parse_part(tok: str) -> _Part:
    m = _PART.fullmatch(tok)
    assert m is not None  # the pattern matches any text
    body, count_text = m.group(1), m.group(2)
    count = 1
    if count_text is not None:
        if not count_text.isascii() or len(count_text) > 1 or not 1 <= int(count_text) <= 4:
            shown = count_text if len(count_text) <= 20 else count_text[:20] + "..."
            raise NotationError(f"{tok[:40]!r}: a count is 1 to 4 checkers, got ({shown})")
        count = int(count_text)
    if "(" in body or ")" in body:
        raise NotationError(f"{tok!r}: a count is written at the end, like '8/5(2)'")
    pieces = body.split("/")
    if len(pieces) < 2:
        raise NotationError(
            f"{tok!r} is not a move: write the points from and to, separated by '/', like '24/18'"
        )
    points: list[int] = []
    stars: list[bool] = []
    for k, piece in enumerate(pieces):
        pm = _PIECE.fullmatch(piece)
        if pm is None:
            what = "an empty point" if not piece else f"{piece!r}"
            raise NotationError(
                f"{tok!r}: {what} is not a point (use 1-24, 'bar' or 'b', 'off' or 'o', 'in')"
            )
        word, star = pm.group(1), bool(pm.group(2))
        if word.isdigit():
            if not word.isascii() or len(word) > 2 or not 1 <= int(word) <= 24:
                shown = word if len(word) <= 20 else word[:20] + "..."
                raise NotationError(f"{tok[:40]!r}: point {shown} is out of range 1-24")
            p = int(word)
        elif word in _WORDS:
            p = _WORDS[word]
        else:
            raise NotationError(
                f"{tok!r}: unknown point {word!r} (use 1-24, 'bar' or 'b', 'off' or 'o', 'in')"
            )
        if p in (MY_BAR, MY_OUT) and k > 0:
            raise NotationError(f"{tok!r}: {word!r} can only be where a move starts")
        if p == _OFF and k != len(pieces) - 1:
            raise NotationError(f"{tok!r}: 'off' can only be where a move ends")
        if star and k == 0:
            raise NotationError(f"{tok!r}: a hit mark '*' belongs after a point landed on")
        if star and p == _OFF:
            raise NotationError(f"{tok!r}: nothing can be hit when bearing off")
        if k > 0:
            prev = points[-1]
            if _height(p) == _height(prev):
                raise NotationError(f"{tok!r}: {_label(prev)}/{_label(p)} does not move")
            if _height(p) > _height(prev):
                raise NotationError(
                    f"{tok!r}: {_label(prev)}/{_label(p)} moves backwards (the mover's "
                    "checkers move from 24 towards 1)"
                )
        points.append(p)
        stars.append(star)
    return _Part(tok, points, stars, count)


def _parse_parts(text: str) -> list[_Part] | None:
    """The parts of a play's text; None for 'no play'; [] for the empty text."""
    s = text.strip().lower().replace(",", " ")
    s = re.sub(r"\s*/\s*", "/", s)
    s = re.sub(r"\s*\*", "*", s)
    s = re.sub(r"\s*\(\s*(\w*)\s*\)", r"(\1)", s)
    if re.fullmatch(r"no\s*play|none|-", s):
        return None
    return [_parse_part(tok) for tok in s.split()]


def _parse(text: str) -> tuple[_Text, _Text | None, int]:
    """The play before 'then' (all of it when there is none), the doublet's play after
    'then k-k:' (None without one) and k (0 without one)."""
    if not isinstance(text, str):
        raise NotationError(f"a play is text, got {type(text).__name__}")
    if len(text) > MAX_PLAY_TEXT:  # (a review: 5,000 characters echoed under the board)
        raise NotationError(f"a play is at most {MAX_PLAY_TEXT} characters, got "
                            f"{clipped(text, 40)}")  # fmt: skip
    low = text.lower()
    found = list(_THEN.finditer(low))
    if not found:
        return (text, _parse_parts(low)), None, 0
    if len(found) > 1:
        raise NotationError(
            f"{text!r}: one 'then' at most (a 1-2 chain that rolls again is a new turn)"
        )
    cut, rest = found[0].start(), found[0].end()
    dm = _DOUBLET.fullmatch(low[rest:])
    if dm is None:
        raise NotationError(
            f"{text!r}: after 'then' write the doublet chosen and its play, like "
            "'then 6-6: 24/18(2)'"
        )
    k1, k2 = int(dm.group(1)), int(dm.group(2))
    if not (1 <= k1 <= 6 and 1 <= k2 <= 6):
        raise NotationError(f"{text!r}: dice are 1 to 6, got {k1}-{k2}")
    if k1 != k2:
        raise NotationError(
            f"{text!r}: after a 1-2 the mover chooses a doublet, and {k1}-{k2} is not one"
        )
    head = _parse_parts(low[:cut])
    if not head:
        raise NotationError(f"{text!r}: before 'then' comes the play of the 1 and the 2")
    tail_text = text[rest + dm.start(3) :]
    return (text[:cut], head), (tail_text, _parse_parts(dm.group(3))), k1


def _covers(a: int, b: int, dice: tuple[int, ...], variant: int) -> bool:
    """Can one checker go from a to b (heights; b == 0: off) with exactly these dice?"""
    total = sum(dice)
    if b != _OFF:
        return total == a - b
    if variant == ACEY_DEUCEY:
        return total == a  # exact bear-off only
    return total - max(dice) < a <= total  # only the last die may go past the edge


def _sub_multisets(dice: tuple[int, ...]) -> list[tuple[int, ...]]:
    subs: set[tuple[int, ...]] = set()
    for r in range(1, len(dice) + 1):
        subs.update(combinations(dice, r))
    return sorted(subs)


def _remove(dice: tuple[int, ...], used: tuple[int, ...]) -> tuple[int, ...]:
    rest = list(dice)
    for d in used:
        rest.remove(d)
    return tuple(rest)


def _leg_dice(legs: list[tuple[int, int, str]], st: _Stage) -> list[list[tuple[int, ...]]]:
    """For each leg (height from, height to, label), the sets of the roll's dice that
    can make it; raise for a leg that none can (the roll cannot move it)."""
    subs = _sub_multisets(st.dice)
    options = []
    for a, b, label in legs:
        opts = [s for s in subs if _covers(a, b, s, st.variant)]
        if not opts:
            raise IllegalPlayError(f"the roll {st.name} cannot move {label}")
        options.append(opts)
    return options


def _check_dice(legs: list[tuple[int, int, str]], st: _Stage,
                options: list[list[tuple[int, ...]]]) -> set[int]:  # fmt: skip
    """Raise unless the legs (their dice `options`, _leg_dice's) can be given disjoint
    dice of the roll, st.m dice in all. Return the points where a leg that uses several
    dice may land on the way."""

    totals: set[int] = set()
    seen: set[tuple[int, tuple[int, ...]]] = set()

    def assign(i: int, left: tuple[int, ...]) -> None:
        if (i, left) in seen:
            return
        seen.add((i, left))
        if i == len(legs):
            totals.add(len(st.dice) - len(left))
            return
        for s in options[i]:
            try:
                rest = _remove(left, s)
            except ValueError:
                continue
            assign(i + 1, rest)

    assign(0, st.dice)
    if not totals:
        raise IllegalPlayError(
            f"the roll {st.name} does not have the dice for all of "
            f"{' '.join(label for _, _, label in legs)}"
        )
    if st.m not in totals:
        if st.m == 0:
            raise IllegalPlayError(
                f"the roll {st.name} cannot be played here: no checker can move, so the only "
                "play is the empty one ('')"
            )
        if max(totals) < st.m:
            used = "both dice" if st.m == 2 and not st.doublet else _NUMBER_WORDS[st.m]
            raise IllegalPlayError(f"a legal play of {st.name} here uses {used}")
        if st.m == 1 and not st.doublet:
            raise IllegalPlayError(f"only one die of {st.name} can be played here")
        raise IllegalPlayError(
            f"only {_NUMBER_WORDS[st.m]} of {st.name} can be played here, not {min(totals)}"
        )
    inside: set[int] = set()
    for (a, _b, _), opts in zip(legs, options, strict=True):
        for s in opts:
            if len(s) < 2:
                continue
            for order in set(permutations(s)):
                h = a
                for d in order[:-1]:
                    h -= d
                    if h >= 1:
                        inside.add(h)
    return inside


def _match(st: _Stage, whole: str, parts: list[_Part] | None) -> State:
    """The position after the play of ``st`` that ``parts`` describe (see the module doc)."""
    base = st.base
    if not parts:
        if st.m == 0:
            return base
        raise IllegalPlayError(
            f"{st.name} has a legal play here; the empty play is only for a roll that "
            "cannot be played"
        )
    if st.m == 0:
        raise IllegalPlayError(f"{st.name} cannot be played here: no checker can move, so "
                               f"the only play is the empty one ('')")  # fmt: skip
    legs: list[tuple[int, int, str]] = []
    landed: set[int] = set()
    marked: set[int] = set()
    net = [0] * 30  # arrivals - departures per board index (off: MY_OFF)
    for part in parts:
        pts = part.points
        for _ in range(part.count):
            for a, b in pairwise(pts):
                legs.append((_height(a), b, f"{_label(a)}/{_label(b)}"))
        net[pts[0]] -= part.count
        net[MY_OFF if pts[-1] == _OFF else pts[-1]] += part.count
        for p, star in zip(pts[1:], part.stars[1:], strict=True):
            if p != _OFF:
                landed.add(p)
                if star:
                    marked.add(p)

    sources = [p.points[0] for p in parts]
    if st.variant == STANDARD and MY_OUT in sources:
        raise IllegalPlayError(
            "'in' moves an unentered checker: there are none in standard backgammon"
        )
    if base[MY_BAR] > 0 and -net[MY_BAR] < base[MY_BAR] and any(s != MY_BAR for s in sources):
        raise IllegalPlayError("checkers on the bar must enter first")
    for idx, where in ((MY_BAR, "on the bar"), (MY_OUT, "unentered")):
        if -net[idx] > base[idx]:
            have = "no checker" if base[idx] == 0 else f"only {_checkers(base[idx])}"
            raise IllegalPlayError(f"the mover has {have} {where}")
    for p in range(1, 25):
        mine = max(base[p], 0)
        if mine + net[p] < 0:
            have = "no checker" if mine == 0 else f"only {_checkers(mine)}"
            raise IllegalPlayError(f"the mover has {have} on {p} to move")
    leg_dice = _leg_dice(legs, st)  # a move no die can make is that, whatever it lands on
    for p in sorted(landed):
        if base[p] <= -2:
            raise IllegalPlayError(
                f"point {p} is closed: the opponent holds it with {_checkers(-base[p])}"
            )
    for p in sorted(marked):
        if base[p] != -1:
            raise IllegalPlayError(f"there is no blot on {p} to hit")
    inside = _check_dice(legs, st, leg_dice)

    target = list(_mover_part(base))
    for p in range(1, 25):
        target[p - 1] += net[p]
    target[24] += net[MY_BAR]
    target[25] += net[MY_OFF]
    target[26] += net[MY_OUT]
    found = st.by_mover().get(tuple(target), [])
    if not found:
        if st.m == 1 and not st.doublet and len(legs) == 1:
            a, b, _ = legs[0]
            if not _covers(a, b, (st.single,), st.variant):
                raise IllegalPlayError(
                    f"only one die of {st.name} can be played here, and it must be the {st.single}"
                )
        raise IllegalPlayError(f"{whole.strip()!r} is not a legal play of {st.name} here")

    forced = {p for p in landed if base[p] == -1}  # landing on a blot hits it
    wanted = forced | marked
    may_hit = landed | inside

    def hits(r: State) -> set[int]:
        return {p for p in range(1, 25) if base[p] == -1 and r[p] >= 0}

    cands = [(r, hits(r)) for r in found]
    cands = [(r, h) for r, h in cands if wanted <= h <= may_hit]
    exact = [r for r, h in cands if h == wanted]
    if exact:
        return exact[0]
    if len(cands) == 1:
        return cands[0][0]
    if not cands:
        raise IllegalPlayError(f"{whole.strip()!r} is not a legal play of {st.name} here")
    options = sorted(st.text(r) for r, _ in cands)
    raise AmbiguousPlayError(
        f"{whole.strip()!r} is ambiguous: it could be {' or '.join(options)}; mark the hit"
    )


def parse_play(board: Board, d1: int, d2: int, text: str, variant: int = STANDARD) -> int:
    """The index into ``legal_outcomes(board, d1, d2, variant)`` of the play ``text``
    means. NotationError for text that does not parse, IllegalPlayError for a play that
    is not legal, AmbiguousPlayError (an IllegalPlayError) for text that fits several."""
    head, tail, k = _parse(text)
    r = _roll(board, d1, d2, variant)
    if tail is None:
        if r.chain:
            if any(all_off(mid) for mid in r.stage.res):
                mid = _match(r.stage, *head)
                if all_off(mid):  # the 1 and the 2 bore off the last: game over
                    return r.index[(mid, False)]
            raise IllegalPlayError(
                "after the 1 and the 2 the mover chooses a doublet: write "
                "'<play of the 1 and the 2> then k-k: <play of the doublet>'"
            )
        return r.index[(_match(r.stage, *head), False)]
    if not r.acey_12:
        raise IllegalPlayError(
            f"'then {k}-{k}:' follows only an Acey-Deucey 1-2, not {r.name} in "
            f"{'Acey-Deucey' if variant == ACEY_DEUCEY else 'standard backgammon'}"
        )
    if not r.chain:
        raise IllegalPlayError("the 1 and the 2 cannot both be played here, so no doublet follows")
    mid = _match(r.stage, *head)
    if all_off(mid):
        raise IllegalPlayError(
            f"this play of the 1 and the 2 bears off the last checker: the game is over, so "
            f"no doublet follows (write it without 'then {k}-{k}: ...')"
        )
    st = r.doublet(mid, k)
    after = _match(st, *tail)
    return r.index[(after, chain_rolls_again(after, st.m))]


_POINT = re.compile(r"(?<![(\d-])(\d+)(?![\d)\-:])")


def other_side(text: str) -> str:
    """`text` (a play, as format_play writes it) with its points in the other side's
    numbering: ``24/20 13/10`` becomes ``1/5 12/15``; counts ``(2)`` and a 1-2's ``then
    6-6:`` are kept."""
    return _POINT.sub(lambda m: str(25 - int(m.group(1))), text)
