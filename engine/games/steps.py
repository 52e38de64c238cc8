"""A turn one checker and one die at a time, for click-by-click play (the browser page).

A person plays a turn as steps: one checker moved by one die, ``13/7`` with the 6. After
each click the page asks which steps may come next. The answer comes from the legal
plays of ``doublet.rules.movegen.legal_outcomes``, the one authority: a step is offered only if
the steps so far and it can still end in one of those outcomes, and the steps form a
complete play only when they end in one of them, having used as many dice as the roll
allows. Maximal use of the dice and the higher-die rule therefore hold without being
written again here; the single-die moves themselves come from doublet.formats.notation.

Acey-Deucey's 1-2 (RULES.md): the 1 and the 2 are played first (either order); if both
were played the person then chooses a doublet (``choose(k)``; only the doublets that lead
to a legal outcome are offered) and plays it up to four times. If all four were played
the turn rolls again. If the chosen doublet has no move the play is complete at once
(``then k-k: no play``). A 1 and 2 (or a doublet) that bear off the last checker end the
game: no doublet is offered after them, and the turn does not roll again.

>>> from doublet.core.board import starting
>>> t = Turn(starting(), 3, 1)
>>> sorted({s.text() for s in t.options().steps})
['13/10', '24/21', '24/23', '6/3', '6/5', '8/5', '8/7']
>>> t = t.step(Step(8, 5, 3)).step(Step(6, 5, 1))
>>> t.options().complete, t.notation()
(True, '8/5 6/5')

Plain Python: it runs once per click. The tree of one roll is kept (``_tree`` caches the
latest few rolls), so the clicks of one turn share their work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from doublet.core.board import ACEY_DEUCEY, MY_BAR, MY_OUT, STANDARD, Board
from doublet.core.errors import DoubletError, IllegalPlayError, shown
from doublet.formats.notation import _steps as _die_moves  # the single-die moves, one set of rules
from doublet.formats.notation import can_move  # (doublet serve reads it here)
from doublet.rules.movegen import all_off, chain_rolls_again, check_dice, legal_outcomes

__all__ = ["BAR", "IN", "OFF", "Options", "Step", "Turn", "can_move", "parse_steps"]

BAR = MY_BAR  # a step's source: the mover's bar (board index 25)
IN = MY_OUT  # a step's source: the unentered checkers (Acey-Deucey; board index 28)
OFF = 0  # a step's destination: borne off

State = tuple[int, ...]  # a board as a tuple of ints (hashable)

_NAMES = {BAR: "bar", IN: "in", OFF: "off"}
_FROM_NAMES = {"bar": BAR, "in": IN}

# A node of a roll's tree: (board, dice left, mode, dice the stage needs).
# mode: _PLAIN (any roll but a 1-2 chain), _HEAD (the 1 and the 2 of a chain),
# _CHAIN (the chosen doublet of a chain; the turn rolls again when all four are played).
_PLAIN, _HEAD, _CHAIN = 0, 1, 2
Node = tuple[State, tuple[int, ...], int, int]


@dataclass(frozen=True)
class Step:
    """One checker moved by one die: ``src`` (point 1..24, BAR or IN) to ``dst`` (point
    1..24 or OFF), in the mover's numbering; ``hit``: it lands on an opposing blot."""

    src: int
    dst: int
    die: int
    hit: bool = False

    def text(self) -> str:
        return f"{_NAMES.get(self.src, self.src)}/{_NAMES.get(self.dst, self.dst)}" + (
            "*" if self.hit else ""
        )

    def to_json(self) -> dict[str, Any]:
        """{"from": 13 | "bar" | "in", "to": 7 | "off", "die": 6, "hit": false}"""
        return {
            "from": _NAMES.get(self.src, self.src),
            "to": _NAMES.get(self.dst, self.dst),
            "die": self.die,
            "hit": self.hit,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Step:
        """The inverse of to_json ("hit" is optional and not trusted: the board says)."""
        if not isinstance(d, Mapping) or not {"from", "to", "die"} <= d.keys():
            raise DoubletError(f'a step is {{"from": ..., "to": ..., "die": ...}}, got {shown(d)}')
        extra = sorted(set(d) - {"from", "to", "die", "hit"}, key=str)
        if extra:
            raise DoubletError(f"a step takes no {', '.join(map(repr, extra))}: its keys are "
                               "from, to, die and hit")  # fmt: skip
        if "hit" in d and not isinstance(d["hit"], bool):
            raise DoubletError(f"a step's 'hit' is true or false, got {shown(d['hit'])}")
        src, dst, die = d["from"], d["to"], d["die"]
        for name, ok in (
            ("from", _point(src) or (isinstance(src, str) and src in _FROM_NAMES)),
            ("to", _point(dst) or dst == "off"),
            ("die", _int(die) and 1 <= die <= 6),
        ):
            if not ok:
                raise DoubletError(f"a step's {name!r} is not valid: {shown(d[name])}")
        return cls(_FROM_NAMES[src] if isinstance(src, str) else src,
                   OFF if dst == "off" else dst, die)  # fmt: skip


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _point(v: Any) -> bool:
    return _int(v) and 1 <= v <= 24


def parse_steps(items: Sequence[Any]) -> list[Step | int]:
    """A turn's steps from JSON: step objects, and {"doublet": k} for a 1-2 chain's choice."""
    if not isinstance(items, (list, tuple)):
        raise DoubletError(f"steps are a list, got {shown(items)}")
    out: list[Step | int] = []
    for it in items:
        if isinstance(it, Mapping) and "doublet" in it:
            k = it["doublet"]
            if not _int(k) or not 1 <= k <= 6:
                raise DoubletError(f"a doublet is 1 to 6, got {shown(k)}")
            out.append(k)
        else:
            out.append(Step.from_json(it))
    return out


@dataclass(frozen=True)
class Options:
    """What may come next after the steps so far.

    board: the board now (mover's view); dice: the dice not used yet; steps: the legal
    next steps; doublets: the doublets to choose from (only right after a 1-2 chain's 1
    and 2); complete: the steps so far are a legal play (Done may be pressed); again:
    that play rolls again; outcome: its index in legal_outcomes (-1 if not complete)."""

    board: Board
    dice: tuple[int, ...]
    steps: list[Step]
    doublets: list[int]
    complete: bool
    again: bool
    outcome: int


class _Tree:
    """The step tree of one roll in one position, explored lazily and memoised."""

    def __init__(self, board: State, d1: int, d2: int, variant: int) -> None:
        self.variant = variant
        boards, again = legal_outcomes(np.array(board, np.int8), d1, d2, variant)
        self.targets = [
            (tuple(b), bool(a)) for b, a in zip(boards.tolist(), again.tolist(), strict=True)
        ]
        self.outcomes = {t: i for i, t in enumerate(self.targets)}
        hi, lo = max(d1, d2), min(d1, d2)
        dice = (hi,) * 4 if hi == lo else (hi, lo)
        self._moves: dict[tuple[State, int], list[tuple[Step, State]]] = {}
        self._depth: dict[tuple[State, tuple[int, ...]], int] = {}
        self._viable: dict[Node, bool] = {}
        m = self.depth(board, dice)
        chain = variant == ACEY_DEUCEY and (hi, lo) == (2, 1) and m == 2
        self.root: Node = (board, dice, _HEAD if chain else _PLAIN, m)

    def moves(self, b: State, die: int) -> list[tuple[Step, State]]:
        key = (b, die)
        got = self._moves.get(key)
        if got is None:
            got = [
                (Step(s, d, die, 1 <= d <= 24 and b[d] == -1), nb)
                for s, d, nb in _die_moves(b, die, self.variant)
            ]
            self._moves[key] = got
        return got

    def depth(self, b: State, dice: tuple[int, ...]) -> int:
        """The most of ``dice`` that can be played from b (any order)."""
        key = (b, dice)
        got = self._depth.get(key)
        if got is None:
            got = 0
            for i, die in enumerate(dice):
                if die in dice[:i]:
                    continue
                rest = dice[:i] + dice[i + 1 :]
                for _, nb in self.moves(b, die):
                    got = max(got, 1 + self.depth(nb, rest))
                    if got == len(dice):
                        break
                if got == len(dice):
                    break
            self._depth[key] = got
        return got

    def children(self, node: Node) -> list[tuple[Step | int, Node]]:
        b, dice, mode, need = node
        if mode == _HEAD and not dice:  # the 1 and the 2 are played: choose a doublet
            if all_off(b):  # ... unless they bore off the last: the game is over
                return []
            return [(k, (b, (k,) * 4, _CHAIN, self.depth(b, (k,) * 4))) for k in range(1, 7)]
        out: list[tuple[Step | int, Node]] = []
        for i, die in enumerate(dice):
            if die in dice[:i]:
                continue
            rest = dice[:i] + dice[i + 1 :]
            for step, nb in self.moves(b, die):
                out.append((step, (nb, rest, mode, need)))
        return out

    def outcome(self, node: Node) -> int:
        """The index of the legal play that node completes, or -1."""
        b, dice, mode, need = node
        if mode == _HEAD:  # complete only where the 1 and the 2 bore off the last checker
            return -1 if dice or not all_off(b) else self.outcomes.get((b, False), -1)
        full = len(self.root[1]) if mode == _PLAIN else 4
        if full - len(dice) != need:
            return -1
        again = mode == _CHAIN and chain_rolls_again(b, 4 - len(dice))
        return self.outcomes.get((b, again), -1)

    def viable(self, node: Node) -> bool:
        """Can the steps that led to node still end in a legal play?"""
        got = self._viable.get(node)
        if got is None:
            got = self.outcome(node) >= 0 or any(self.viable(c) for _, c in self.children(node))
            self._viable[node] = got
        return got

    def path(self, node: Node, target: int) -> list[Step | int] | None:
        """Steps (and doublet choice) from node to the legal play ``target``, or None.
        Checkers only move forward, so a node whose checkers cannot still cover the
        target's (``_ahead``) is not searched."""
        goal, again = self.targets[target]
        dead: set[Node] = set()

        def go(node: Node) -> list[Step | int] | None:
            if node[0] == goal and self.outcome(node) == target:
                return []
            if node in dead or not _ahead(node[0], goal):
                return None
            for it, child in self.children(node):
                if (not isinstance(it, Step) and not all_off(goal)
                        and (child[3] == 4) != again):  # fmt: skip
                    continue
                rest = go(child)
                if rest is not None:
                    return [it, *rest]
            dead.add(node)
            return None

        return go(node)


def _ahead(b: State, goal: State) -> bool:
    """Can the mover's checkers in b still reach where they stand in goal? For every
    distance from off, at least as many checkers at that distance or farther."""
    if b[MY_BAR] < goal[MY_BAR] or b[MY_OUT] < goal[MY_OUT]:
        return False
    have = b[MY_BAR] + b[MY_OUT]
    need = goal[MY_BAR] + goal[MY_OUT]
    for p in range(24, 0, -1):
        have += max(b[p], 0)
        need += max(goal[p], 0)
        if have < need:
            return False
    return True


@lru_cache(maxsize=8)
def _tree(board: State, d1: int, d2: int, variant: int) -> _Tree:
    return _Tree(board, d1, d2, variant)


class Turn:
    """The steps played so far in one turn. ``step`` and ``choose`` return a new Turn
    and raise IllegalPlayError for a step that cannot lead to a legal play."""

    def __init__(self, board: Board, d1: int, d2: int, variant: int = STANDARD,
                 done: Sequence[Step | int] = ()) -> None:  # fmt: skip
        check_dice(d1, d2)
        if variant not in (STANDARD, ACEY_DEUCEY):
            raise ValueError(f"unknown variant {variant!r}")
        self.start: State = tuple(np.asarray(board, np.int8).tolist())
        self.dice = (int(d1), int(d2))
        self.variant = variant
        self._tree = _tree(self.start, int(d1), int(d2), variant)
        self.done: tuple[Step | int, ...] = ()
        self._node = self._tree.root
        for item in done:
            self._advance(item)

    def _advance(self, item: Step | int) -> None:
        for it, child in self._tree.children(self._node):
            if self._same(it, item) and self._tree.viable(child):
                self.done = (*self.done, it)
                self._node = child
                return
        raise IllegalPlayError(self._why(item))

    @staticmethod
    def _same(a: Step | int, b: Step | int) -> bool:
        if isinstance(a, Step) and isinstance(b, Step):
            return (a.src, a.dst, a.die) == (b.src, b.dst, b.die)
        return not isinstance(a, Step) and not isinstance(b, Step) and a == b

    def _why(self, item: Step | int) -> str:
        opts = self.options()
        if isinstance(item, Step):
            what = f"{item.text()} with the {item.die}"
            if opts.doublets:
                return f"{what}: first choose the doublet to play after the 1 and the 2"
            if not opts.steps:
                return f"{what}: no more checkers can move in this turn"
            legal = ", ".join(f"{s.text()} ({s.die})" for s in opts.steps)
            return f"{what} is not a legal step here; legal: {legal}"
        if not opts.doublets:
            return f"no doublet to choose here (only after a 1-2's 1 and 2), got {item}-{item}"
        return f"{item}-{item} cannot be chosen here; choose one of {_doublets(opts.doublets)}"

    def step(self, step: Step) -> Turn:
        t = self._copy()
        t._advance(step)
        return t

    def choose(self, k: int) -> Turn:
        t = self._copy()
        t._advance(k)
        return t

    def undo(self) -> Turn:
        """The turn without its last step (or doublet choice)."""
        return Turn(np.array(self.start, np.int8), *self.dice, self.variant, self.done[:-1])

    def _copy(self) -> Turn:
        t = Turn.__new__(Turn)
        t.__dict__.update(self.__dict__)
        return t

    def options(self) -> Options:
        tree, node = self._tree, self._node
        steps: list[Step] = []
        doublets: list[int] = []
        for it, child in tree.children(node):
            if tree.viable(child):
                if isinstance(it, Step):
                    steps.append(it)
                else:
                    doublets.append(it)
        k = tree.outcome(node)
        b = np.array(node[0], np.int8)
        return Options(b, node[1], steps, doublets, k >= 0, k >= 0 and tree.targets[k][1], k)

    def path(self, outcome: int) -> list[Step | int]:
        """The steps that play the legal play ``outcome`` (its index in legal_outcomes)
        from here; IllegalPlayError if the steps so far cannot lead to it."""
        got = self._tree.path(self._node, outcome)
        if got is None:
            raise IllegalPlayError(f"the steps so far cannot lead to legal play {outcome}")
        return got

    def notation(self) -> str:
        """The steps as a play's text (each step a part; ``... then k-k: ...`` for a
        chain), which doublet.formats.notation reads back as the same play."""
        head = [it.text() for it in self.done if isinstance(it, Step)]
        for i, it in enumerate(self.done):
            if not isinstance(it, Step):
                tail = [s.text() for s in self.done[i + 1 :] if isinstance(s, Step)]
                head = [s.text() for s in self.done[:i] if isinstance(s, Step)]
                return f"{' '.join(head)} then {it}-{it}: {' '.join(tail) or 'no play'}"
        return " ".join(head)


def _doublets(ks: Sequence[int]) -> str:
    return ", ".join(f"{k}-{k}" for k in ks)
