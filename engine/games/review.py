"""Reviewing a played match or game: every checker play and cube decision of both
players, analysed at the score and cube (doublet.search.analysis), with each player's
errors. A .mat or .sgf match (``review``) and a game played in Doublet (``review_game``)
are judged by the same functions, one decision at a time (``judge_play``,
``cube_loss``), and counted by the same PlayerStats.

For each play with more than one legal play, the play's loss is the equity of the best
play minus that of the play made, both at `ply`, money-equivalent at the score and cube
(the units GNU Backgammon calls EMG). For each turn at which the player on roll could
double, the cube decision is judged by the cube decision at `ply`
(doublet.search.analysis.cube_document): not doubling when the proper action is a double
loses min(DT, DP) - ND; doubling when it is not loses ND - min(DT, DP); a wrong take or
pass loses |DP - DT| (the error of the refdata's README); a beaver counts as a take.

Per player: unforced moves, checker errors (total, and mean per unforced move in mEMG:
GNU Backgammon's error rate), cube decisions (every turn with access to the cube, and the
actual doubles, takes and passes), cube errors, and overall the error rate over the
unforced moves and the cube decisions that were actual or wrong (gnubg counts its
"close or actual" ones; this counts the actual and the wrong), and the performance
rating PR = 500 x the mean error per such decision (eXtreme Gammon's definition, with
Doublet's equities). Not yet (issue 22): luck, the worst-decision list's boards in
HTML, a resumable cache, two cores.

The review of a game played in Doublet (``review_game``), one entry per entry of the
game's record (doublet.games.game.Turn), in order; the cube's value and owner follow
from replaying the record from 1, centred. A game without the cube is judged cubeless
(money, the cube centred: doublet.cube.state.MONEY) and has no cube decisions; a game
with it ranks the plays by cubeful equity, as its engine chooses them
(doublet.search.choice.choose). Losses are rounded to 6 decimals:

    {"variant": "standard", "ply": 0,
     "rules": {Rules.to_dict}, "result": {Result.to_dict} or null (not over),
     "turns": [
       {"index": 0, "side": 1, "kind": "play",        # or double, take, pass, beaver
        "before": "4HPwATDgc/ABMA",  # the record's: the mover's view (gnubg ID; JSON
                                     # board in Acey-Deucey); for take, pass, beaver:
                                     # the doubler's, whose decision is answered
        "dice": [6, 4], "play": "24/14",    # null, null for a cube action; play "": none
        "forced": false,                    # at most one legal play (its loss is 0)
        "best": "24/18 13/9",               # the best play (a cube action: the proper one)
        "loss": 0.012, "verdict": "",       # "", "doubtful", "bad", "very bad"
        "plays": [{"play": "24/18 13/9", "equity": 0.01, "loss": 0.0}, ...],  # top 5
        "cube": {"proper": "No double, take", "loss": 0.0, "verdict": ""}},
                        # only where the player could have doubled before the roll
       {"index": 7, "side": 0, "kind": "double", "before": "...", "dice": null,
        "play": null, "forced": false, "best": "Double, take", "proper": "Double, take",
        "loss": 0.0, "verdict": ""}, ...],
     "totals": [{"decisions": 31, "unforced": 25, "checker_error": 0.31,
                 "cube_error": 0.05, "error_rate_memg": 11.6, "pr": 5.8},   # side 0
                {...}]}                                                     # side 1

All plays are written in the mover's own numbering. A verdict is GNU Backgammon 1.07's:
a loss of at least 0.04 is doubtful, 0.08 bad, 0.16 very bad. ``decisions`` in the
totals are those the error rate is taken over (the unforced plays and the actual or
wrong cube decisions). The first entry of a record has no cube decision: a game's first
roll comes without one (Game.new), as does a roll after a take or an Acey-Deucey roll
again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.core.board import VARIANT_NAMES
from doublet.core.errors import GameError
from doublet.cube.state import MAX_CUBE, MONEY, CubeState
from doublet.formats.ids import parse_position, position_id
from doublet.formats.matfile import MatMatch, ReplayedGame
from doublet.formats.position import Position
from doublet.games.game import Game, Rules
from doublet.nn.eval import Model
from doublet.search.analysis import analyse_roll, cube_document
from doublet.search.choice import engine_depth

# GNU Backgammon 1.07's skill thresholds (EMG): doubtful, bad, very bad.
VERDICTS = ((0.16, "very bad"), (0.08, "bad"), (0.04, "doubtful"))
TOP_PLAYS = 5  # plays listed with a reviewed play


def verdict(loss: float) -> str:
    """The words for a decision's loss: "", "doubtful", "bad" or "very bad"."""
    return next((words for limit, words in VERDICTS if loss >= limit), "")


# -- one decision ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayJudgement:
    """A checker play judged: the roll's analysis (analyse_roll's document), the row of
    the play made, whether it was forced (at most one legal play), and its loss."""

    analysis: dict[str, Any]
    played: dict[str, Any]
    forced: bool
    loss: float

    @property
    def best(self) -> str:
        return str(self.analysis["plays"][0]["play"])


def judge_play(pos: Position, dice: tuple[int, int], play: str, state: CubeState = MONEY,
               ply: int = 0, model: Model | None = None,
               cubeful: bool | None = None) -> PlayJudgement:  # fmt: skip
    """The play `play` (Doublet's notation, the mover's numbering) of `dice` at `pos`,
    judged by analyse_roll at `state` and `ply` (capped in Acey-Deucey as a game's engine
    searches: doublet.search.choice.engine_depth); `cubeful` as analyse_roll's."""
    depth = engine_depth(pos.variant, ply, dice)
    doc = analyse_roll(pos, *dice, ply=depth, model=model, state=state, cubeful=cubeful)
    plays = doc["plays"]
    if len(plays) <= 1:
        return PlayJudgement(doc, plays[0], True, 0.0)
    made = pos.play(play, *dice)
    mover, opponent = B.counts(np.array(made.board))
    board = {"mover": mover, "opponent": opponent}
    row = next(r for r in plays if r["board"] == board and r["again"] == made.again)
    return PlayJudgement(doc, row, False, float(row["loss"]))


def cube_loss(doc: dict[str, Any], action: str) -> float | None:
    """The loss of `action` at a cube decision (cube_document of the doubler's position
    before its roll, at its cube): "roll" (it did not double), "double", or the other
    side's "take", "beaver" or "pass"; None where the action was not wrong (see the
    module docstring for the losses)."""
    eq = doc["equities"]
    nd, dt, dp = eq["no_double"], eq["double_take"], eq["double_pass"]
    if action == "roll":
        return float(min(dt, dp) - nd) if doc["double"] else None
    if dt is None:
        return None
    if action == "double":
        loss = nd - min(dt, dp)
        return float(loss) if not doc["double"] and loss > 0 else None
    if action not in ("take", "beaver", "pass"):
        raise ValueError(f"not a cube action: {action!r}")
    should_take = dt <= dp
    took = action != "pass"
    return float(abs(dp - dt)) if took != should_take else None


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

    def add_play(self, judged: PlayJudgement) -> None:
        self.moves += 1
        if not judged.forced:
            self.unforced += 1
            self.checker_error += judged.loss

    def add_cube(self, loss: float | None, actual: bool) -> None:
        """A cube decision: an actual double, take or pass (`actual`), or a roll with
        access to the cube; `loss` None where it was not wrong (cube_loss)."""
        self.cube_decisions += 1
        if actual or loss is not None:
            self.counted_cube += 1
        if loss is not None:
            self.cube_error += loss

    def _rates(self) -> tuple[int, float, float]:
        n = self.unforced + self.counted_cube
        total = self.checker_error + self.cube_error
        return n, round(1000 * total / max(n, 1), 2), round(500 * total / max(n, 1), 2)

    def to_json(self) -> dict[str, Any]:
        _, rate, pr = self._rates()
        return {
            "name": self.name,
            "moves": self.moves,
            "unforced_moves": self.unforced,
            "checker_error": round(self.checker_error, 6),
            "checker_error_rate_memg": round(1000 * self.checker_error / max(self.unforced, 1), 2),
            "cube_decisions": self.cube_decisions,
            "counted_cube_decisions": self.counted_cube,
            "cube_error": round(self.cube_error, 6),
            "error_rate_memg": rate,
            "pr": pr,
        }

    def totals(self) -> dict[str, Any]:
        """A game review's totals (see the module docstring)."""
        n, rate, pr = self._rates()
        return {"decisions": n, "unforced": self.unforced,
                "checker_error": round(self.checker_error, 6),
                "cube_error": round(self.cube_error, 6), "error_rate_memg": rate,
                "pr": pr}  # fmt: skip


# -- a .mat or .sgf match -----------------------------------------------------------------


def _state(length: int, game: ReplayedGame, player: int, cube: int, owner: int) -> CubeState:
    return CubeState.for_player(player, length, cube, owner, game.score, crawford=game.crawford)


def review(match: MatMatch, games: list[ReplayedGame], ply: int = 0,
           model: Model | None = None) -> dict[str, Any]:  # fmt: skip
    """The review document: each player's figures and errors (see the module)."""
    stats = [PlayerStats(match.names[0]), PlayerStats(match.names[1])]
    for g in games:
        doubled_at = {(a.number, a.player): a for a in g.cube_actions}
        for mv in g.moves:
            st = stats[mv.player]
            pos = Position(mv.board)
            state = _state(match.length, g, mv.player, mv.cube, mv.owner)
            where = {"game": g.number, "move": mv.number, "player": mv.player,
                     "position_id": position_id(mv.board), "dice": list(mv.dice)}  # fmt: skip
            # The cube decision before this roll (none was made: the player rolled).
            if state.may_double() and (mv.number, mv.player) not in doubled_at:
                doc = cube_document(pos, state, ply, model)
                loss = cube_loss(doc, "roll")
                st.add_cube(loss, actual=False)
                if loss is not None:
                    st.errors.append({**where, "kind": "missed double", "loss": round(loss, 6),
                                      "proper": doc["action"]})  # fmt: skip
            judged = judge_play(pos, mv.dice, mv.play, state, ply, model)
            st.add_play(judged)
            if judged.loss > 0:
                st.errors.append({**where, "kind": "checker play", "play": mv.play,
                                  "best": judged.best, "loss": judged.loss})  # fmt: skip
        _cube_actions(match, g, stats, ply, model)
    for st in stats:
        st.errors.sort(key=lambda e: -e["loss"])
    return {"length": match.length, "ply": ply, "players": [s.to_json() for s in stats],
            "errors": [e for s in stats for e in s.errors]}  # fmt: skip


def _cube_actions(match: MatMatch, g: ReplayedGame, stats: list[PlayerStats], ply: int,
                  model: Model | None) -> None:  # fmt: skip
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
        doc = cube_document(Position(board), state, ply, model)
        loss = cube_loss(doc, "double")
        stats[a.player].add_cube(loss, actual=True)
        if loss is not None:
            stats[a.player].errors.append({"game": g.number, "move": a.number,
                                           "player": a.player, "position_id": position_id(board),
                                           "kind": "wrong double", "loss": round(loss, 6),
                                           "proper": doc["action"]})  # fmt: skip
        answer = actions[i + 1] if i + 1 < len(actions) else None
        if answer is None or answer.kind not in ("take", "drop", "beaver"):
            continue
        took = answer.kind != "drop"
        loss = cube_loss(doc, "take" if took else "pass")
        stats[answer.player].add_cube(loss, actual=True)
        if loss is not None:
            stats[answer.player].errors.append({"game": g.number, "move": answer.number,
                                                "player": answer.player,
                                                "position_id": position_id(board),
                                                "kind": "wrong take" if took else "wrong pass",
                                                "loss": round(loss, 6),
                                                "proper": doc["action"]})  # fmt: skip


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


# -- a game played in Doublet ----------------------------------------------------------------


def _game_state(rules: Rules, side: int, cube: int, owner: int) -> CubeState:
    """The cube and score seen by `side` (as Game.cube_state); MONEY without the cube."""
    if not rules.cube:
        return MONEY
    return CubeState.for_player(side, rules.length, cube, owner, rules.score,
                                crawford=rules.crawford, jacoby=rules.jacoby,
                                beavers=rules.beavers)  # fmt: skip


def _cube_entry(proper: str, loss: float | None) -> dict[str, Any]:
    x = round(loss or 0.0, 6)
    return {"proper": proper, "loss": x, "verdict": verdict(x)}


def review_game(game: Game, ply: int = 0, model: Model | None = None) -> dict[str, Any]:
    """The review of a game's record, decision by decision (see the module docstring)."""
    rules = game.rules
    stats = [PlayerStats("side 0"), PlayerStats("side 1")]
    cube, owner = 1, -1
    offer: dict[str, Any] | None = None  # the cube decision of the double being answered
    turns: list[dict[str, Any]] = []
    for i, t in enumerate(game.record):
        board, _, _ = parse_position(t.before, game.variant)
        pos = Position(board, game.variant)
        state = _game_state(rules, t.side, cube, owner)
        entry: dict[str, Any] = {"index": i, "side": t.side, "kind": t.action,
                                 "before": t.before}  # fmt: skip
        st = stats[t.side]
        if t.action == "play":
            assert t.dice is not None
            # Whether the side could have doubled before this roll: its turn began after
            # the other side's play (not a game's first roll, a roll after a take, nor an
            # Acey-Deucey roll again), with the cube available to it.
            prev = game.record[i - 1] if i else None
            began = prev is not None and prev.action == "play" and prev.side != t.side
            cube_doc = None
            if rules.cube and began and state.may_double() and cube < MAX_CUBE:
                cube_doc = cube_document(pos, state, ply, model)
            judged = judge_play(pos, t.dice, t.play, state, ply, model,
                                cubeful=True if rules.cube else None)  # fmt: skip
            st.add_play(judged)
            entry.update({"dice": list(t.dice), "play": t.play,
                          "forced": judged.forced, "best": judged.best,
                          "loss": judged.loss, "verdict": verdict(judged.loss),
                          "plays": [{k: r[k] for k in ("play", "equity", "loss")}
                                    for r in judged.analysis["plays"][:TOP_PLAYS]]})  # fmt: skip
            if cube_doc is not None:
                loss = cube_loss(cube_doc, "roll")
                st.add_cube(loss, actual=False)
                entry["cube"] = _cube_entry(cube_doc["action"], loss)
            turns.append(entry)
            continue
        if t.action == "double":
            offer = cube_document(pos, state, ply, model)
            doc = offer
        else:
            if offer is None:
                raise GameError(f"record entry {i}: a {t.action} without a double")
            doc, offer = offer, None
            if t.action != "pass":
                cube *= 2 if t.action == "take" else 4
                owner = t.side
        loss = cube_loss(doc, t.action)
        st.add_cube(loss, actual=True)
        judged_cube = _cube_entry(doc["action"], loss)
        entry.update({"dice": None, "play": None, "forced": False, "best": doc["action"],
                      **judged_cube})  # fmt: skip
        turns.append(entry)
    return {"variant": VARIANT_NAMES[game.variant], "ply": ply, "rules": rules.to_dict(),
            "result": game.result.to_dict() if game.result else None, "turns": turns,
            "totals": [s.totals() for s in stats]}  # fmt: skip


__all__ = ["PlayJudgement", "PlayerStats", "cube_loss", "judge_play", "review", "review_game",
           "verdict"]  # fmt: skip
