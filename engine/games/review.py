"""Reviewing a played match or game: every checker play and cube decision of both
players, analysed at the score and cube (doublet.search.analysis), with each player's
errors. A .mat or .sgf match (``review``) and a game played in Doublet (``review_game``)
are judged by the same functions, one decision at a time (``judge_play``,
``cube_loss``), and counted by the same PlayerStats.

For each play with more than one legal play, the play's loss is the equity of the best
play minus that of the play made, both at `ply` (a play the search's filter cut earlier
is valued at that depth for it, as GNU Backgammon values the play made),
money-equivalent at the score and cube (the units GNU Backgammon calls EMG). For each
turn at which the player on roll could double (not before a game's first roll, nor with
a dead cube: the decisions GNU Backgammon counts), the cube decision is judged by the
cube decision at `ply`
(doublet.search.analysis.cube_document): not doubling when the proper action is a double
loses min(DT, DP) - ND; doubling when it is not loses ND - min(DT, DP); a wrong take or
pass loses |DP - DT| (the error of the refdata's README). A beaver (money play) doubles
the cube again, the beaverer's: it is worth 2 DT to the doubler and loses
2 DT - min(DT, DP) where that is positive (a beaver of a double that should be passed
costs twice the take's stake); a take where a beaver was better is not counted.

Per player: unforced moves, checker errors (total, and mean per unforced move in mEMG:
GNU Backgammon's error rate), cube decisions (every turn with access to a live cube, and
the actual doubles, takes and passes), cube errors (total, and mean per counted cube
decision: the actual ones, the close ones and the wrong ones), and overall the error
rate over the unforced moves and the counted cube decisions (GNU Backgammon's "close or
actual" ones: close where doubling loses less than CLOSE_CUBE, 0.16, against the best
action, in equity normalised to the cube; a wrong one is counted too), and the performance
rating PR = 500 x the mean error per such decision (eXtreme Gammon's definition, with
Doublet's equities). Each roll's luck is measured too; `doublet review --html` draws the
worst decisions' boards (doublet.apps.report); answers are kept in a cache that a
stopped review resumes from, and games are reviewed on several worker processes.

The review of a game played in Doublet (``review_game``), one entry per entry of the
game's record (doublet.games.game.Turn), in order; the cube's value and owner follow
from replaying the record from the cube the game began with (Game.start_cube: centred
at 1, or a position's own). A game without the cube is judged cubeless
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
        "cube_before": {"value": 1, "owner": null},   # the cube before it (owner a side)
        "dice": [6, 4], "play": "24/14",    # null, null for a cube action; play "": none
        "forced": false,                    # at most one legal play (its loss is 0)
        "best": "24/18 13/9",               # the best play (a cube action: the proper one)
        "loss": 0.012, "verdict": "",       # "", "doubtful", "bad", "very bad"
        "plays": [{"play": "24/18 13/9", "equity": 0.01, "loss": 0.0}, ...],  # top 5
        "cube": {"proper": "No double, take", "loss": 0.0, "verdict": "",
                 "close": false}},  # counted in the totals if close or wrong
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

import contextlib
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from doublet.core import board as B
from doublet.core.board import VARIANT_NAMES
from doublet.core.errors import GameError
from doublet.core.parallel import executor
from doublet.cube.state import MONEY, CubeState
from doublet.formats.ids import parse_position, position_id
from doublet.formats.matfile import MatMatch, ReplayedGame, money_rules
from doublet.formats.position import Position
from doublet.games.game import Game
from doublet.nn.eval import Model, default_model, digest, equity
from doublet.rules import onesided
from doublet.search.analysis import (
    PROB_NAMES,
    analyse_roll,
    cube_document,
    luck,
    play_equities,
    searcher,
)
from doublet.search.choice import engine_depth
from doublet.search.cubeful import flip_probs
from doublet.search.searcher import Limits

# GNU Backgammon 1.07's skill thresholds (EMG): doubtful, bad, very bad.
VERDICTS = ((0.16, "very bad"), (0.08, "bad"), (0.04, "doubtful"))
TOP_PLAYS = 5  # plays listed with a reviewed play


def verdict(loss: float) -> str:
    """The words for a decision's loss: "", "doubtful", "bad" or "very bad"."""
    return next((words for limit, words in VERDICTS if loss >= limit), "")


# -- the analyses, computed once ----------------------------------------------------------------


def model_fingerprint(model: Model | None, variant: int) -> str:
    """A short hash of what a review's answers depend on, so that a cache made by one
    engine and model is never read by another: the model's weights (the shipped one for
    None; its pruning net too, which picks the replies a search scores), the one-sided
    race net the search values races with, and the engine's own code (every .py file of
    the package: a mended cube formula or search changes the answers with the same
    weights, as session 26's mend of 2-away 1-away did)."""
    h = hashlib.sha1(digest(default_model(variant) if model is None else model).encode())
    for a in onesided.shipped():
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(_code_hash().encode())
    return h.hexdigest()[:12]


@functools.lru_cache(maxsize=1)
def _code_hash() -> str:
    """sha1 of the package's Python files (names and contents), computed once."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha1()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


# The review cache folder's files are kept within CACHE_LIMIT bytes (about 250 games at
# 0 ply; every file of a model, variant and ply is read at a review's start): past it the
# files used longest ago go (a file read or written is used), and their answers are
# worked out again when asked for; a file used within RECENT seconds stays (a review
# running, or stopped a moment ago). A file written to at a review's start that is over
# a quarter of the limit is put aside (a name of its own) so that it can go whole later.
# Only the cache's own files are counted or removed (CACHE_FILE): --cache may name a
# folder that holds other files.
CACHE_LIMIT = 64 << 20
RECENT = 3600.0
CACHE_FILE = re.compile(r"review2?-[0-9a-f]{12}-[a-z-]+-\d+ply-[\w.-]+\.jsonl")


def _bound(folder: Path, path: Path) -> None:
    """Keep the cache `folder` within CACHE_LIMIT and put `path`, the file a review is
    about to write, aside once it is over a quarter of it (see CACHE_LIMIT)."""
    with contextlib.suppress(OSError):
        if path.stat().st_size > CACHE_LIMIT // 4:
            path.rename(path.with_name(f"{path.stem}-{time.time_ns()}.jsonl"))
    files = []
    for f in folder.iterdir():
        if CACHE_FILE.fullmatch(f.name):
            with contextlib.suppress(OSError):  # gone meanwhile (another review's)
                st = f.stat()
                files.append((st.st_mtime, st.st_size, f))
    files.sort()
    total = sum(size for _, size, _ in files)
    now = time.time()
    for used, size, f in files:
        if total <= CACHE_LIMIT or used > now - RECENT:
            break
        with contextlib.suppress(OSError):
            f.unlink()
        total -= size


class Analyst:
    """The analyses a review asks for, each computed once: a cube decision
    (cube_document), a roll's ranked plays (analyse_roll) and a roll's luck, at one ply and
    model. With a `cache` folder each answer is also appended to a file there (JSON lines,
    flushed as written; the files are named by model, variant and ply, and `shard` keeps
    parallel workers' files apart), and every earlier answer there is read first, so that
    an interrupted review continues where it stopped. A damaged last line (a kill) is
    skipped. The folder is kept within CACHE_LIMIT (_bound)."""

    def __init__(self, ply: int, model: Model | None = None, variant: int = B.STANDARD,
                 cache: str | os.PathLike[str] | None = None,
                 shard: str = "0") -> None:  # fmt: skip
        self.ply = ply
        self.model = model
        self.memo: dict[str, Any] = {}
        self.hits = 0
        self.skipped = 0  # lines of the cache files that were not whole answers
        self.file: Any = None
        self.cache = None if cache is None else Path(cache)
        if self.cache is not None:
            # review2: lines carry a check (_check); review- files of earlier versions,
            # without it, are not read
            stem = f"review2-{model_fingerprint(model, variant)}-{VARIANT_NAMES[variant]}-{ply}ply"
            self.cache.mkdir(parents=True, exist_ok=True)
            self.path = self.cache / f"{stem}-{shard}.jsonl"
            _bound(self.cache, self.path)
            for f in sorted(self.cache.glob(f"{stem}-*.jsonl")):
                self._read(f)

    def _read(self, f: Path) -> None:
        """The answers in one cache file. A line that is not a whole answer (cut short by
        a kill, or a file damaged or edited: bytes that are not UTF-8, JSON of another
        shape) is skipped and counted in `skipped`; its answer is computed again."""
        try:
            fh = open(f, "rb")  # noqa: SIM115
        except FileNotFoundError:  # removed by another review's bound meanwhile
            return
        with fh:
            with contextlib.suppress(OSError):  # used now: the last to go (CACHE_LIMIT)
                os.utime(f)
            for raw in fh:
                try:
                    key, value, check = json.loads(raw.decode("utf-8"))
                    usable = check == _check(key, value) and _usable(key, value)
                except (ValueError, TypeError):  # UnicodeDecodeError is a ValueError
                    usable = False
                if usable:
                    self.memo[key] = value
                elif raw.strip():
                    self.skipped += 1

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def _get(self, key: str, compute: Callable[[], Any]) -> Any:
        if key in self.memo:
            self.hits += 1
            return self.memo[key]
        value = json.loads(json.dumps(compute()))  # as the cache gives it back
        self.memo[key] = value
        if self.cache is not None:
            if self.file is None:
                cut = False  # a line cut short by a kill is ended before the next one
                if self.path.exists() and self.path.stat().st_size:
                    with open(self.path, "rb") as fb:
                        fb.seek(-1, os.SEEK_END)
                        cut = fb.read(1) != b"\n"
                self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
                if cut:
                    self.file.write("\n")
            self.file.write(json.dumps([key, value, _check(key, value)],
                                       separators=(",", ":")) + "\n")  # fmt: skip
            self.file.flush()
        return value

    @staticmethod
    def _key(kind: str, pos: Position, state: CubeState, *rest: Any) -> str:
        board = ",".join(str(int(x)) for x in np.asarray(pos.board))
        return json.dumps([kind, pos.variant, board, state.to_json(), *rest], sort_keys=True)

    def cube(self, pos: Position, state: CubeState) -> dict[str, Any]:
        return dict(self._get(self._key("cube", pos, state),
                              lambda: cube_document(pos, state, self.ply, self.model,
                                                    made=True)))  # fmt: skip

    def roll(self, pos: Position, dice: tuple[int, int], state: CubeState,
             cubeful: bool | None) -> dict[str, Any]:  # fmt: skip
        depth = engine_depth(pos.variant, self.ply, dice)
        key = self._key("roll", pos, state, list(dice), cubeful)
        return dict(self._get(key, lambda: analyse_roll(pos, *dice, ply=depth, model=self.model,
                                                        state=state, cubeful=cubeful)))  # fmt: skip

    def deeper(self, pos: Position, made: Any, row: dict[str, Any], ply: int,
               state: CubeState, cubeful: bool) -> dict[str, Any]:  # fmt: skip
        """The row of the play `made` (a Play of pos) valued at `ply` as the roll's search
        values the plays it keeps that deep (the position after it seen by the side to
        roll next, at `ply`; the roll's own search cut it earlier by its filter), as GNU
        Backgammon values the play made at the analysis' depth."""
        key = self._key("deeper", pos, state, row["play"], ply, cubeful)
        return dict(self._get(key, lambda: _deeper_row(pos, made, row, ply, state, cubeful,
                                                       self.model)))  # fmt: skip

    def luck(self, pos: Position, dice: tuple[int, int], state: CubeState,
             cubeful: bool | None) -> float | None:  # fmt: skip
        """The roll's luck (doublet.search.analysis.luck); None in Acey-Deucey."""
        if pos.variant != B.STANDARD:
            return None
        key = self._key("luck", pos, state, sorted(dice), cubeful)
        return float(self._get(key, lambda: luck(pos, dice, state, self.model, cubeful)))


def _deeper_row(pos: Position, made: Any, row: dict[str, Any], ply: int, state: CubeState,
                cubeful: bool, model: Model | None) -> dict[str, Any]:  # fmt: skip
    """Analyst.deeper's answer (computed)."""
    s = searcher(model, pos.variant)
    after = np.array(made.board, dtype=np.int8)
    if made.again:  # the mover rolls again: its own position to roll
        probs = s.evaluate(after, Limits(ply=ply)).astype(np.float64)
    else:
        probs = flip_probs(s.evaluate(B.flip(after), Limits(ply=ply)))
    eq, mwc = play_equities(s, after[None], np.array([made.again]),
                            probs.astype(np.float32)[None], state if cubeful else None)  # fmt: skip
    out = {
        **row,
        "ply": ply,
        "equity": round(float(eq[0]), 6),
        "probabilities": {k: round(float(v), 6) for k, v in zip(PROB_NAMES, probs, strict=True)},
    }
    if "cubeless_equity" in row:
        out["cubeless_equity"] = round(float(equity(probs.astype(np.float32))), 6)
    if mwc is not None and "mwc" in row:
        out["mwc"] = round(float(mwc[0]), 6)
    return out


# The start of a cache key (Analyst._key's JSON, its kind first) and the kind it names.
_KEY_KINDS = {'["cube", ': "cube", '["roll", ': "roll", '["luck", ': "luck",
              '["deeper", ': "deeper"}  # fmt: skip


def _kind(key: str) -> str | None:
    """The kind a cache key names, read off its start without parsing the rest again (a
    key in another form than Analyst._key's is never asked for: None)."""
    head, comma, _ = key.partition(", ")
    return _KEY_KINDS.get(head + comma)


def _check(key: Any, value: Any) -> str:
    """A cache line's check: the first 16 hex digits of the sha256 of its key and value
    as written. A line edited or damaged into other valid JSON (a roll's plays cut to
    one, which made the play forced; a row without its board, which stopped the review)
    no longer matches it and is computed again."""
    text = json.dumps([key, value], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _usable(key: Any, value: Any) -> bool:
    """Whether a cache line's key and value have the shape Analyst writes: a key naming
    its kind (_kind), and a cube decision's, a roll's or a luck's document."""
    if not isinstance(key, str):
        return False
    kind = _kind(key)
    if kind == "luck":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "cube":
        return (isinstance(value, dict) and isinstance(value.get("equities"), dict)
                and "action" in value and "double" in value)  # fmt: skip
    if kind == "roll":
        plays = value.get("plays") if isinstance(value, dict) else None
        return isinstance(plays, list) and bool(plays) and all(isinstance(r, dict) for r in plays)
    if kind == "deeper":
        return isinstance(value, dict) and isinstance(value.get("equity"), (int, float))
    return False


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
               ply: int = 0, model: Model | None = None, cubeful: bool | None = None,
               analyst: Analyst | None = None) -> PlayJudgement:  # fmt: skip
    """The play `play` (Doublet's notation, the mover's numbering) of `dice` at `pos`,
    judged by analyse_roll at `state` and `ply` (capped in Acey-Deucey as a game's engine
    searches: doublet.search.choice.engine_depth); `cubeful` as analyse_roll's. An
    `analyst` (its ply and model) answers from its cache."""
    an = analyst or Analyst(ply, model)
    doc = an.roll(pos, dice, state, cubeful)
    plays = doc["plays"]
    if len(plays) <= 1:
        return PlayJudgement(doc, plays[0], True, 0.0)
    made = pos.play(play, *dice)
    mover, opponent = B.counts(np.array(made.board))
    board = {"mover": mover, "opponent": opponent}
    row = next(r for r in plays if r["board"] == board and r["again"] == made.again)
    if row["ply"] < plays[0]["ply"]:  # cut by the search's filter: valued at that depth too
        row = an.deeper(pos, made, row, plays[0]["ply"], state, doc.get("equity") == "cubeful")
        return PlayJudgement(doc, row, False, max(0.0, float(plays[0]["equity"] - row["equity"])))
    return PlayJudgement(doc, row, False, float(row["loss"]))


# A cube decision counts toward the error rates when it was made (a double, take, beaver
# or pass) or was close: doubling loses less than this against the best action, in
# equity normalised to the cube (GNU Backgammon's rule for its "close or actual" ones).
CLOSE_CUBE = 0.16


def cube_close(doc: dict[str, Any]) -> bool:
    """Whether the cube decision (cube_document) is close: doubling, min(DT, DP), is
    within CLOSE_CUBE of the better of it and no double (every proper double is)."""
    eq = doc["equities"]
    if eq["double_take"] is None:
        return False
    doubled = min(eq["double_take"], eq["double_pass"])
    return bool(max(eq["no_double"], doubled) - doubled < CLOSE_CUBE)


def cube_loss(doc: dict[str, Any], action: str) -> float | None:
    """The loss of `action` at a cube decision (cube_document of the doubler's position
    before its roll, at its cube): "roll" (it did not double), "double", or the other
    side's "take", "beaver" or "pass"; None where the action was not wrong (see the
    module docstring for the losses)."""
    eq = doc["equities"]
    nd, dt, dp = eq["no_double"], eq["double_take"], eq["double_pass"]
    if action == "roll":  # a tie with the double (a sure win either way) loses nothing
        loss = min(dt, dp) - nd
        return float(loss) if doc["double"] and loss > 0 else None
    if dt is None:
        return None
    if action == "double":
        loss = nd - min(dt, dp)
        return float(loss) if not doc["double"] and loss > 0 else None
    if action not in ("take", "beaver", "pass"):
        raise ValueError(f"not a cube action: {action!r}")
    if action == "beaver":  # the cube doubled again, the beaverer's: 2 DT for the doubler
        loss = 2 * dt - min(dt, dp)  # against the better of take and pass
        return float(loss) if loss > 0 else None
    should_take = dt <= dp
    took = action != "pass"
    return float(abs(dp - dt)) if took != should_take else None


def _no_verdicts() -> dict[str, int]:
    return {words: 0 for _, words in reversed(VERDICTS)}


@dataclass
class PlayerStats:
    name: str
    moves: int = 0
    unforced: int = 0
    checker_error: float = 0.0
    cube_decisions: int = 0
    counted_cube: int = 0  # actual, close or wrong cube decisions
    cube_error: float = 0.0
    errors: list[dict[str, Any]] = field(default_factory=list)
    rolls: int = 0  # rolls whose luck was measured
    luck: float = 0.0
    checker_verdicts: dict[str, int] = field(default_factory=lambda: _no_verdicts())
    cube_verdicts: dict[str, int] = field(default_factory=lambda: _no_verdicts())

    def add_play(self, judged: PlayJudgement) -> None:
        self.moves += 1
        if not judged.forced:
            self.unforced += 1
            self.checker_error += judged.loss
            if verdict(judged.loss):
                self.checker_verdicts[verdict(judged.loss)] += 1

    def add_cube(self, loss: float | None, actual: bool, close: bool = False) -> None:
        """A cube decision: an actual double, take or pass (`actual`), or a roll with
        access to the cube (`close`: cube_close); `loss` None where it was not wrong
        (cube_loss). The actual, close and wrong ones count toward the error rates."""
        self.cube_decisions += 1
        if actual or close or loss is not None:
            self.counted_cube += 1
        if loss is not None:
            self.cube_error += loss
            if verdict(loss):
                self.cube_verdicts[verdict(loss)] += 1

    def add_luck(self, value: float | None) -> None:
        if value is not None:
            self.rolls += 1
            self.luck += value

    def merge(self, other: PlayerStats) -> None:
        """Add another part's figures (a game reviewed apart) to these."""
        for name in ("moves", "unforced", "checker_error", "cube_decisions", "counted_cube",
                     "cube_error", "rolls", "luck"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(other.errors)
        for mine, theirs in ((self.checker_verdicts, other.checker_verdicts),
                             (self.cube_verdicts, other.cube_verdicts)):  # fmt: skip
            for k, v in theirs.items():
                mine[k] += v

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
            "cube_error_rate_memg": round(1000 * self.cube_error / max(self.counted_cube, 1), 2),
            "error_rate_memg": rate,
            "pr": pr,
            "checker_verdicts": dict(self.checker_verdicts),
            "cube_verdicts": dict(self.cube_verdicts),
            "rolls": self.rolls,
            "luck": round(self.luck, 6),
            "luck_rate_memg": round(1000 * self.luck / max(self.rolls, 1), 2),
        }

    def totals(self) -> dict[str, Any]:
        """A game review's totals (see the module docstring)."""
        n, rate, pr = self._rates()
        return {"decisions": n, "unforced": self.unforced,
                "checker_error": round(self.checker_error, 6),
                "cube_error": round(self.cube_error, 6), "error_rate_memg": rate,
                "pr": pr}  # fmt: skip


# -- a .mat or .sgf match -----------------------------------------------------------------


def _state(match: MatMatch, rules: tuple[bool, bool], game: ReplayedGame, player: int,
           cube: int, owner: int) -> CubeState:  # fmt: skip
    """The cube state `player` sees, with the file's money rules (Jacoby, beavers: its
    money_rules, read once a game)."""
    jacoby, beavers = rules
    return CubeState.for_player(player, match.length, cube, owner, game.score,
                                crawford=game.crawford, jacoby=jacoby, beavers=beavers)  # fmt: skip


def review(match: MatMatch, games: list[ReplayedGame], ply: int = 0,
           model: Model | None = None, workers: int = 1,
           cache: str | os.PathLike[str] | None = None, progress: bool = False,
           damaged: Callable[[int], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """The review document: each player's figures and errors (see the module), and
    ``"unfinished"``: the file's last game stops before anyone has won (a match still
    being played, reviewed as far as it goes). The games are reviewed apart and added
    up: on `workers` processes, each with its own Analyst (`cache` the folder that makes
    an interrupted review resumable), with a progress bar over the moves (tqdm, when
    installed) when `progress`. `damaged` is told the number of damaged lines of the
    cache that were skipped (Analyst.skipped: their analyses are worked out again where
    needed), when there were any; the document is the same either way."""
    stats = [PlayerStats(match.names[0]), PlayerStats(match.names[1])]
    skipped: int | None = None
    for part, seen in _reviewed(match, games, ply, model, workers, cache, progress):
        for st, more in zip(stats, part, strict=True):
            st.merge(more)
        # Each worker's Analyst reads the whole cache: the fewest it skipped are the
        # damaged lines (more are another worker's line read while it was being written).
        skipped = seen if skipped is None else min(skipped, seen)
    if skipped and damaged is not None:
        damaged(skipped)
    for st in stats:
        st.errors.sort(key=lambda e: -e["loss"])
    return {"length": match.length, "ply": ply, "players": [s.to_json() for s in stats],
            "errors": [e for s in stats for e in s.errors],
            "unfinished": bool(games) and games[-1].winner < 0}  # fmt: skip


def _bar(total: int, on: bool) -> Any:
    if not on:
        return None
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:  # analysis needs numpy and numba only; the bar is a nicety
        return None
    return tqdm(total=total, unit="move", desc="review", leave=False)


def _reviewed(match: MatMatch, games: list[ReplayedGame], ply: int, model: Model | None,
              workers: int, cache: Any, progress: bool
              ) -> Iterator[tuple[list[PlayerStats], int]]:  # fmt: skip
    """Each game's two PlayerStats, in the order of the games, with the cache lines its
    Analyst skipped (Analyst.skipped)."""
    bar = _bar(sum(len(g.moves) for g in games), progress)
    try:
        analyst_args = (ply, model, cache)
        if workers <= 1 or len(games) <= 1:
            analyst = Analyst(ply, model, B.STANDARD, cache, "0")
            try:
                for g in games:
                    yield _review_match_game(match, g, analyst), analyst.skipped
                    if bar is not None:
                        bar.update(len(g.moves))
            finally:
                analyst.close()
            return
        with executor(workers) as ex:  # doublet.core.parallel: spawned local processes
            tasks = [(match, g, analyst_args) for g in games]
            done: dict[int, tuple[list[PlayerStats], int]] = {}
            following = 0
            for i, part in ex.map(_review_task, tasks):
                done[i] = part
                if bar is not None:
                    bar.update(len(games[i].moves))
                while following in done:  # in the order of the games
                    yield done.pop(following)
                    following += 1
    finally:
        if bar is not None:
            bar.close()


def _review_task(match: MatMatch, g: ReplayedGame, args: tuple[Any, ...]
                 ) -> tuple[list[PlayerStats], int]:  # fmt: skip
    """A worker's task: one game, with an Analyst of its own (its cache file named by
    the worker's process, so that workers never write one file together), and the cache
    lines it skipped."""
    ply, model, cache = args
    key = (ply, model_fingerprint(model, B.STANDARD), None if cache is None else str(cache))
    analyst = _WORKER_ANALYSTS.get(key)
    fresh = analyst is None
    if analyst is None:  # the cache files are read once a process, not once a game
        analyst = _WORKER_ANALYSTS[key] = Analyst(ply, model, B.STANDARD, cache,
                                                  f"w{os.getpid()}")  # fmt: skip
    return _review_match_game(match, g, analyst), analyst.skipped if fresh else 0


# A worker process's Analyst for each (ply, model, cache) it has reviewed games with,
# kept for its next game: a cache of 29 MB, read again for every game, made a review
# on two workers slower than on one. Its file is flushed after each answer.
_WORKER_ANALYSTS: dict[tuple[int, str, str | None], Analyst] = {}


def _review_match_game(match: MatMatch, g: ReplayedGame, analyst: Analyst) -> list[PlayerStats]:
    """One game of a match file: its two players' figures and errors."""
    stats = [PlayerStats(match.names[0]), PlayerStats(match.names[1])]
    doubled_at = {(a.number, a.player): a for a in g.cube_actions}
    rules = money_rules(match)
    for i, mv in enumerate(g.moves):
        st = stats[mv.player]
        pos = Position(mv.board)
        state = _state(match, rules, g, mv.player, mv.cube, mv.owner)
        where = {"game": g.number, "move": mv.number, "player": mv.player,
                 "position_id": position_id(mv.board), "dice": list(mv.dice)}  # fmt: skip
        # The cube decision before this roll (none was made: the player rolled).
        # No decision before a game's first roll (the opening throw's dice, which nobody
        # chose to roll) nor with a dead cube, as GNU Backgammon counts them.
        if i > 0 and state.has_cube_decision() and (mv.number, mv.player) not in doubled_at:
            doc = analyst.cube(pos, state)
            loss = cube_loss(doc, "roll")
            st.add_cube(loss, actual=False, close=cube_close(doc))
            if loss is not None:
                st.errors.append({**where, "xgid": state.xgid(mv.board), "kind": "missed double",
                                  "loss": round(loss, 6), "proper": doc["action"]})  # fmt: skip
        judged = judge_play(pos, mv.dice, mv.play, state, analyst=analyst)
        st.add_play(judged)
        st.add_luck(analyst.luck(pos, mv.dice, state, None))
        if judged.loss > 0:
            st.errors.append({**where, "xgid": state.xgid(mv.board, mv.dice),
                              "kind": "checker play", "play": mv.play, "best": judged.best,
                              "loss": judged.loss})  # fmt: skip
    _cube_actions(match, rules, g, stats, analyst)
    return stats


def _cube_actions(match: MatMatch, rules: tuple[bool, bool], g: ReplayedGame,
                  stats: list[PlayerStats], analyst: Analyst) -> None:  # fmt: skip
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
        state = _state(match, rules, g, a.player, cube, -1 if cube == 1 else a.player)
        doc = analyst.cube(Position(board), state)
        loss = cube_loss(doc, "double")
        stats[a.player].add_cube(loss, actual=True)
        if loss is not None:
            stats[a.player].errors.append({"game": g.number, "move": a.number,
                                           "player": a.player, "position_id": position_id(board),
                                           "xgid": state.xgid(board),
                                           "kind": "wrong double", "loss": round(loss, 6),
                                           "proper": doc["action"]})  # fmt: skip
        answer = actions[i + 1] if i + 1 < len(actions) else None
        if answer is None or answer.kind not in ("take", "drop", "beaver"):
            continue
        said = {"take": "take", "drop": "pass", "beaver": "beaver"}[answer.kind]
        loss = cube_loss(doc, said)
        stats[answer.player].add_cube(loss, actual=True)
        if loss is not None:
            stats[answer.player].errors.append({"game": g.number, "move": answer.number,
                                                "player": answer.player,
                                                "position_id": position_id(board),
                                                "xgid": state.xgid(board),
                                                "kind": f"wrong {said}",
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


def _cube_entry(proper: str, loss: float | None) -> dict[str, Any]:
    x = round(loss or 0.0, 6)
    return {"proper": proper, "loss": x, "verdict": verdict(x)}


def review_game(game: Game, ply: int = 0, model: Model | None = None,
                analyst: Analyst | None = None) -> dict[str, Any]:  # fmt: skip
    """The review of a game's record, decision by decision (see the module docstring);
    an `analyst` (its ply and model) answers from its cache."""
    an = analyst or Analyst(ply, model, game.variant)
    ply = an.ply
    rules = game.rules
    stats = [PlayerStats("side 0"), PlayerStats("side 1")]
    cube, owner = game.start_cube  # centred at 1, or the position's own
    offer: dict[str, Any] | None = None  # the cube decision of the double being answered
    turns: list[dict[str, Any]] = []
    for i, t in enumerate(game.record):
        board, _, _ = parse_position(t.before, game.variant)
        pos = Position(board, game.variant)
        state = rules.cube_state(t.side, cube, owner) or MONEY  # MONEY: no cube
        cube_before = {"value": cube, "owner": None if owner < 0 else owner}
        entry: dict[str, Any] = {"index": i, "side": t.side, "kind": t.action,
                                 "before": t.before, "cube_before": cube_before}  # fmt: skip
        st = stats[t.side]
        if t.action == "play":
            assert t.dice is not None
            # Whether the side could have doubled before this roll: its turn began after
            # the other side's play (not a game's first roll, a roll after a take, nor an
            # Acey-Deucey roll again), with the cube available to it and not dead.
            prev = game.record[i - 1] if i else None
            began = prev is not None and prev.action == "play" and prev.side != t.side
            cube_doc = None
            if rules.cube and began and state.has_cube_decision():
                cube_doc = an.cube(pos, state)
            cubeful = True if rules.cube or rules.length else None  # a match: its MWC
            judged = judge_play(pos, t.dice, t.play, state, cubeful=cubeful, analyst=an)
            st.add_play(judged)
            roll_luck = an.luck(pos, t.dice, state, cubeful)
            st.add_luck(roll_luck)
            entry.update({"dice": list(t.dice), "play": t.play,
                          "forced": judged.forced, "best": judged.best,
                          "loss": judged.loss, "verdict": verdict(judged.loss),
                          "plays": [{k: r[k] for k in ("play", "equity", "loss")}
                                    for r in judged.analysis["plays"][:TOP_PLAYS]],
                          "luck": None if roll_luck is None else round(roll_luck, 6)})  # fmt: skip
            if cube_doc is not None:
                loss = cube_loss(cube_doc, "roll")
                close = cube_close(cube_doc)
                st.add_cube(loss, actual=False, close=close)
                entry["cube"] = {**_cube_entry(cube_doc["action"], loss), "close": close}
            turns.append(entry)
            continue
        if t.action == "double":
            offer = an.cube(pos, state)
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
