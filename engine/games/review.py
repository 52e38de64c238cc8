"""Reviewing a played match: every checker play and cube decision of both players,
analysed at the match score (doublet.search.analysis), with each player's errors.

For each replayed move (doublet.formats.matfile) with more than one legal play, the
play's loss is the cubeful equity of the best play minus that of the play made, both at
`ply`, money-equivalent at the score and cube (the units GNU Backgammon calls EMG). For
each turn at which the player on roll could double, the cube decision is judged by the
cube decision at `ply` (doublet.search.analysis.cube_document): not doubling when the
proper action is a double loses min(DT, DP) - ND; doubling when it is not loses ND -
min(DT, DP); a wrong take or pass loses |DP - DT| (the error of the refdata's README).

Per player: unforced moves, checker errors (total, and mean per unforced move in mEMG:
GNU Backgammon's error rate), cube decisions (every turn with access to the cube, and the
actual doubles, takes and passes), cube errors, and overall the error rate over the
unforced moves and the cube decisions that were actual or wrong (gnubg counts its
"close or actual" ones; this counts the actual and the wrong), and the performance
rating PR = 500 x the mean error per such decision (eXtreme Gammon's definition, with
Doublet's equities). Not yet (issue 22): luck, the worst-decision list's boards in
HTML, a resumable cache, two cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.cube.state import CubeState
from doublet.formats.ids import position_id
from doublet.formats.matfile import MatMatch, ReplayedGame
from doublet.formats.position import Position
from doublet.search.analysis import analyse_roll, cube_document


@dataclass
class PlayerStats:
    name: str
    moves: int = 0
    unforced: int = 0
    checker_error: float = 0.0
    cube_decisions: int = 0
    counted_cube: int = 0  # actual or wrong cube decisions
    cube_error: float = 0.0
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        n = self.unforced + self.counted_cube
        total = self.checker_error + self.cube_error
        return {
            "name": self.name,
            "moves": self.moves,
            "unforced_moves": self.unforced,
            "checker_error": round(self.checker_error, 6),
            "checker_error_rate_memg": round(1000 * self.checker_error / max(self.unforced, 1), 2),
            "cube_decisions": self.cube_decisions,
            "counted_cube_decisions": self.counted_cube,
            "cube_error": round(self.cube_error, 6),
            "error_rate_memg": round(1000 * total / max(n, 1), 2),
            "pr": round(500 * total / max(n, 1), 2),
        }


def _state(length: int, game: ReplayedGame, player: int, cube: int, owner: int) -> CubeState:
    return CubeState.for_player(player, length, cube, owner, game.score, crawford=game.crawford)


def review(match: MatMatch, games: list[ReplayedGame], ply: int = 0) -> dict[str, Any]:
    """The review document: each player's figures and errors (see the module)."""
    stats = [PlayerStats(match.names[0]), PlayerStats(match.names[1])]
    for g in games:
        doubled_at = {(a.number, a.player): a for a in g.cube_actions}
        for mv in g.moves:
            st = stats[mv.player]
            st.moves += 1
            pos = Position(mv.board)
            state = _state(match.length, g, mv.player, mv.cube, mv.owner)
            where = {"game": g.number, "move": mv.number, "player": mv.player,
                     "position_id": position_id(mv.board), "dice": list(mv.dice)}  # fmt: skip
            # The cube decision before this roll (none was made: the player rolled).
            if state.may_double() and (mv.number, mv.player) not in doubled_at:
                doc = cube_document(pos, state, ply)
                st.cube_decisions += 1
                if doc["double"]:
                    eq = doc["equities"]
                    loss = min(eq["double_take"], eq["double_pass"]) - eq["no_double"]
                    st.cube_error += loss
                    st.counted_cube += 1
                    st.errors.append({**where, "kind": "missed double", "loss": round(loss, 6),
                                      "proper": doc["action"]})  # fmt: skip
            doc = analyse_roll(pos, *mv.dice, ply=ply, state=state)
            plays = doc["plays"]
            if len(plays) <= 1:
                continue
            st.unforced += 1
            played = Position(mv.board).play(mv.play, *mv.dice)
            mover, opponent = B.counts(np.array(played.board))
            row = next(r for r in plays if r["board"] == {"mover": mover, "opponent": opponent})
            st.checker_error += row["loss"]
            if row["loss"] > 0:
                st.errors.append({**where, "kind": "checker play", "play": mv.play,
                                  "best": plays[0]["play"], "loss": row["loss"]})  # fmt: skip
        _cube_actions(match, g, stats, ply)
    for st in stats:
        st.errors.sort(key=lambda e: -e["loss"])
    return {"length": match.length, "ply": ply, "players": [s.to_json() for s in stats],
            "errors": [e for s in stats for e in s.errors]}  # fmt: skip


def _cube_actions(match: MatMatch, g: ReplayedGame, stats: list[PlayerStats], ply: int) -> None:
    """The actual doubles, takes and passes of a game, judged at the position before the
    doubler's roll (the next move of the doubler in the replay has it)."""
    actions = g.cube_actions
    for i, a in enumerate(actions):
        if a.kind != "double":
            continue
        board, _, _ = _position_at(g, a)
        if board is None:
            continue
        # The cube as it was when the player doubled: half the new value, centred at 1,
        # else the doubler's own.
        cube = a.value // 2
        state = _state(match.length, g, a.player, cube, -1 if cube == 1 else a.player)
        doc = cube_document(Position(board), state, ply)
        eq = doc["equities"]
        st = stats[a.player]
        st.cube_decisions += 1
        st.counted_cube += 1
        if not doc["double"] and eq["double_take"] is not None:
            loss = eq["no_double"] - min(eq["double_take"], eq["double_pass"])
            if loss > 0:
                st.cube_error += loss
                st.errors.append({"game": g.number, "move": a.number, "player": a.player,
                                  "position_id": position_id(board), "kind": "wrong double",
                                  "loss": round(loss, 6), "proper": doc["action"]})  # fmt: skip
        answer = actions[i + 1] if i + 1 < len(actions) else None
        if answer is None or answer.kind not in ("take", "drop", "beaver"):
            continue
        taker = stats[answer.player]
        taker.cube_decisions += 1
        taker.counted_cube += 1
        should_take = eq["double_take"] is not None and eq["double_take"] <= eq["double_pass"]
        took = answer.kind != "drop"
        if eq["double_take"] is not None and took != should_take:
            loss = abs(eq["double_pass"] - eq["double_take"])
            taker.cube_error += loss
            taker.errors.append({"game": g.number, "move": answer.number, "player": answer.player,
                                 "position_id": position_id(board),
                                 "kind": "wrong take" if took else "wrong pass",
                                 "loss": round(loss, 6), "proper": doc["action"]})  # fmt: skip


def _position_at(g: ReplayedGame, a: Any) -> tuple[np.ndarray | None, int, int]:
    """The doubler's position when it doubled: before its next roll in the replay, or,
    when the double was passed (no roll follows), after the opponent's last play."""
    later = [m for m in g.moves if m.player == a.player and m.number >= a.number]
    if later:
        m = later[0]
        return m.board, m.cube, m.owner
    before = [m for m in g.moves if m.player != a.player and (m.number, 1) <= (a.number, 1)]
    if not before:
        return None, 1, -1
    m = before[-1]
    after = Position(m.board).play(m.play, *m.dice)
    return np.array(after.position().board), m.cube, m.owner


__all__ = ["PlayerStats", "review"]
