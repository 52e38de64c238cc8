"""The `doublet` command line. Strings, files and errors live here; the work is in the engine.

Every user error (a bad position, dice, play or file) ends as one line
``doublet: error: ...`` and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeVar

import numpy as np

from doublet import __version__
from doublet.apps import protocol, serve
from doublet.apps import terminal as play
from doublet.apps.fastpath import FastBest
from doublet.apps.report import ROWS as REVIEW_ROWS
from doublet.apps.report import html_report
from doublet.core import board as B
from doublet.core.errors import DoubletError
from doublet.core.files import atomic_open, file_path_error, missing_folder
from doublet.core.jit import EVAL_KERNELS, SEARCH_KERNELS, announce_compile, cache_base
from doublet.core.parallel import MAX_WORKERS
from doublet.core.signals import interrupt_status, signal_watcher, sigterm_interrupts, stop_word
from doublet.cube.state import MAX_CUBE, MAX_LENGTH, CubeState, from_request, is_cube_value
from doublet.formats.ids import check_in_play, parse_position
from doublet.formats.matfile import decode_match_file, money_rules, read_match
from doublet.formats.position import Position
from doublet.games.review import review
from doublet.nn.eval import default_model, model_for
from doublet.search.analysis import (
    analyse_position,
    analyse_roll,
    evaluate_position,
    evaluate_with_cube,
    plays_heading,
    render,
    render_cube,
    searcher,
)
from doublet.search.cubeful import DEFAULT_METHOD, METHODS
from doublet.search.rollout import RolloutSettings
from doublet.search.rollout_analysis import (
    CUBE_OPTIONS,
    NO_CUBE_WITH_ROLL,
    no_cube_with_roll,
    rollout_document,
)
from doublet.search.rollout_analysis import render as render_rollout
from doublet.search.watch import interrupt_all, watchdog

T = TypeVar("T")


def _input_lines(stream: Any) -> Iterator[str | bytes]:
    """The lines of a text stream, as bytes when it has a binary buffer (so that a line
    that is not UTF-8 is one bad line, not the end of the program). A byte-order mark
    before the first line (Windows editors write one) is dropped, as doublet review's
    reader drops it."""
    buffer = getattr(stream, "buffer", None)
    lines = iter(buffer if buffer is not None else stream)
    for first in lines:
        if isinstance(first, bytes):
            yield first.removeprefix(b"\xef\xbb\xbf")
        else:
            yield first.removeprefix("\ufeff")
        break
    yield from lines


def _json_request(raw: str | bytes) -> tuple[Any, str | None] | None:
    """(request, None) for a JSON line, (None, error) for a bad one (not UTF-8, not JSON,
    nested too deeply, holding a number too long to read or what loads refuses), None
    for a blank one."""
    if isinstance(raw, bytes):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return None, f"line is not UTF-8 text (byte {e.start + 1} is {raw[e.start]:#04x})"
    else:
        line = raw
    if not line.strip():
        return None
    try:
        return protocol.loads(line), None
    except json.JSONDecodeError as e:
        return None, f"line is not JSON: {e.msg} at column {e.colno}"
    except DoubletError as e:  # NaN, Infinity, 1e999, a key twice
        return None, f"line refused: {e}"
    except RecursionError:
        return None, "line is nested too deeply to read"
    except ValueError:  # an integer of thousands of digits
        return None, "line holds a number with too many digits"


def _batch_lines(lines: Iterator[str | bytes], variant: str | None) -> Iterator[str]:
    """doublet moves --batch: each line is the engine's "moves" request without its "cmd"
    (answered by the same protocol Session: an XGID's or match ID's dice when it has no
    "dice", an "id" echoed, unknown keys refused); blank lines are skipped."""
    session = protocol.Session()
    session.defaults["variant"] = variant
    for raw in lines:
        read = _json_request(raw)
        if read is None:
            continue
        req, bad = read
        if bad:  # the id, where the line still has one a reply can carry
            yield json.dumps(protocol.with_id(protocol.id_of(raw), {"error": bad}))
        elif not isinstance(req, dict) or req.get("cmd", "moves") != "moves":
            why = ('each line is {"position": ..., "dice": [d1, d2]} (a moves request; '
                   "doublet engine answers the others)")  # fmt: skip
            yield json.dumps(protocol.with_id(req, {"error": why}))
        else:
            yield json.dumps(session.answer({"cmd": "moves", **req}))


def cmd_moves(args: argparse.Namespace, out: TextIO) -> int:

    announce_compile()
    if args.batch is not None:
        if args.position is not None:
            raise DoubletError("give either POSITION D1 D2 or --batch FILE, not both")
        if args.batch == "-":
            src: Any = sys.stdin
        else:
            try:
                src = open(args.batch, "rb")  # noqa: SIM115 - closed below
            except OSError as e:
                raise DoubletError(f"cannot read batch file {args.batch!r}: {e.strerror}") from None
        replies = _batch_lines(_input_lines(src), args.variant)
        try:
            while True:
                try:
                    reply = next(replies)
                except StopIteration:
                    break
                except OSError as e:  # reading; a closed stdout (| head) is main's
                    raise DoubletError(f"cannot read batch file {args.batch!r}: "
                                       f"{e.strerror}") from None  # fmt: skip
                out.write(reply + "\n")
        finally:
            if src is not sys.stdin:
                src.close()
        return 0
    usage = "usage: doublet moves POSITION [D1 D2] (or --batch FILE)"
    if args.position is None or len(args.dice or []) > 2:
        raise DoubletError(usage)
    board, variant, meta = parse_position(args.position, args.variant)
    pos = Position.checked(board, variant)
    check_in_play(pos.board, pos.variant)
    CubeState.from_meta(meta)  # an ID's cube fields are refused here as by analyse
    roll = _roll(args, meta)
    if not roll:
        raise DoubletError(f"{usage}: the position carries no roll of its own, so give D1 D2")
    d1, d2 = roll
    if args.json:
        doc = {
            "position": pos.to_json(),
            "dice": [d1, d2],
            "plays": protocol.moves(pos, (d1, d2)),
        }
        if meta.get("note"):  # as the engine: an ID read as Acey-Deucey
            doc["note"] = meta["note"]
        out.write(json.dumps(doc) + "\n")
        return 0
    plays = pos.plays(d1, d2)
    name = B.VARIANT_NAMES[pos.variant]
    if pos.variant == B.STANDARD:
        where = pos.id()
    else:
        mover, opponent = B.counts(pos.board)
        where = f"mover {_hex(mover)} opponent {_hex(opponent)}"
    mine, theirs = pos.pip_counts()
    legal = [p for p in plays if p.notation]
    out.write(
        f"{name} position {where}, roll {d1}-{d2}; pips {mine} (on roll) vs {theirs}\n"
        + (f"note: {meta['note']}\n" if meta.get("note") else "")
        + plays_heading(len(legal))
        + "\n"
    )
    width = max([len(p.notation) for p in legal] + [4])
    for i, p in enumerate(legal, 1):
        if pos.variant == B.STANDARD:
            after = p.position().id()
        else:
            mover, opponent = B.counts(p.board)
            after = f"mover {_hex(mover)} opponent {_hex(opponent)}"
        extra = "  (rolls again)" if p.again else ""
        out.write(f"{i:4d}. {p.notation:<{width}}  {after}{extra}\n")
    return 0


def _roll(args: argparse.Namespace, meta: dict[str, Any]) -> tuple[int, int] | None:
    """The roll a command plays: D1 D2 when given, else the XGID's or Match ID's own."""
    return protocol.dice(args.dice, text=True) if args.dice else meta.get("roll")


def _load_model(path: str | None, variant: int) -> Any:
    """--model's model (refused when it is of another variant), else the shipped one."""
    return model_for(path, variant) if path else default_model(variant)


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    """The side on roll's chances before it rolls: the engine's "eval" reply (one document:
    doublet.search.analysis.evaluate_position)."""
    board, variant, meta = parse_position(args.position, args.variant)  # with its cube fields
    pos = Position.checked(board, variant)
    check_in_play(pos.board, pos.variant)
    state = CubeState.from_meta(meta)
    model = _load_model(args.model, pos.variant)
    ply = _search_ply(args)
    announce_compile(*EVAL_KERNELS)
    # As the engine's eval: an XGID's or match ID's cube and score add the cube decision.
    if not CubeState.carried(meta):
        doc = _watched(lambda: evaluate_position(pos, ply, model, args.time,
                                                 iterative=True), model, pos.variant)  # fmt: skip
    else:
        doc = _watched(lambda: evaluate_with_cube(pos, state, ply, model, DEFAULT_METHOD,
                                                  args.time, iterative=True),
                       model, pos.variant)  # fmt: skip
    if meta.get("note"):  # as the engine: an ID read as Acey-Deucey
        doc["note"] = meta["note"]
    if args.json:
        out.write(json.dumps(doc) + "\n")
        return 0
    labels = ["Win", "Win gammon", "Win backgammon", "Lose gammon", "Lose backgammon"]
    probs = doc["evaluation"]["probabilities"]
    out.write(f"{B.VARIANT_NAMES[pos.variant]} position, side on roll, before the roll "
              f"({doc['ply']} ply)\n")  # fmt: skip
    for label, p in zip(labels, probs.values(), strict=True):
        out.write(f"  {label:<16}{100 * p:6.2f} %\n")
    out.write(f"  {'Equity':<16}{doc['evaluation']['equity']:+7.3f}  (cubeless)\n")
    out.write(f"  {'Pips':<16}{doc['pips']['mover']} vs {doc['pips']['opponent']}\n")
    cube_stop = doc.get("cube", {}).get("stopped")
    if doc.get("stopped") and doc["stopped"] != f"the cube decision: {cube_stop}":
        out.write(f"  Stopped short: {doc['stopped']}\n")  # (the cube's own: said below)
    if "cube" in doc:
        out.write(f"  {state.describe()}\n")
        if doc["cube"].get("stopped"):  # (a review: only the evaluation's was said)
            out.write(f"  The cube decision stopped short: {doc['cube']['stopped']}\n")
        out.write("\n".join("  " + line for line in render_cube(doc["cube"])) + "\n")
    if "note" in doc:
        out.write(f"Note: {doc['note']}\n")
    return 0


def _search_ply(args: argparse.Namespace) -> int:
    """The depth of analyse and eval: --ply, else ANALYSIS_PLY, or with --time MAX_PLY (as
    deep as the time allows)."""
    ply = args.ply if args.ply is not None else (
        protocol.MAX_PLY if args.time is not None else protocol.ANALYSIS_PLY)  # fmt: skip
    if not 0 <= ply <= protocol.MAX_PLY:
        raise DoubletError(f"--ply must be 0..{protocol.MAX_PLY}, got {ply}")
    return ply


def seconds(text: str, most: float = protocol.MAX_TIME) -> float:
    """A --time value: seconds, as "2", "2.5", "2s", "500ms", "1m" or "1h", above 0 and
    at most `most` (a search's limit, the engine protocol's)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?\s*", text or "")
    if not m:
        raise argparse.ArgumentTypeError(f"a time is seconds such as 2, 2.5s, 500ms, 1m or "
                                         f"1h, got {text[:20]!r}")  # fmt: skip
    unit = {"ms": 0.001, "m": 60.0, "min": 60.0, "h": 3600.0}.get(m.group(2) or "s", 1.0)
    value = float(m.group(1)) * unit
    if not 0 < value <= most:
        raise argparse.ArgumentTypeError(f"a time is above 0 and at most {most:g} s, got "
                                         f"{text[:20]!r}")  # fmt: skip
    return value


# A rollout's --time: a budget for a long run (a search's is the protocol's 600 s).
ROLLOUT_MAX_TIME = 7 * 24 * 3600.0


def rollout_seconds(text: str) -> float:
    """A rollout's --time value: as `seconds`, up to ROLLOUT_MAX_TIME (a week)."""
    return seconds(text, ROLLOUT_MAX_TIME)


# A search that takes longer than this shows a progress line on a terminal.
PROGRESS_AFTER = 1.0


def _watched(work: Callable[[], T], model: Any, variant: int,
             stops: list[BaseException] | None = None) -> T:  # fmt: skip
    """work() (a search by doublet.search.analysis) in a thread, so that Ctrl-C (or
    SIGTERM, Terminated) stops it, on a terminal or not: the answer is then the deepest
    ply it completed (its "stopped" says so); on a terminal a search that takes more than
    PROGRESS_AFTER seconds shows what it is at. The interruption is added to `stops`
    (what follows the search, a rollout, is then not begun)."""
    tty = sys.stderr.isatty()
    s = searcher(model, variant)
    dog = watchdog(s)
    dog.interrupted = False
    dog.phase = ""
    box: dict[str, Any] = {}
    finished = threading.Event()  # not Thread.join: an interrupted join can return early

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as e:
            box["error"] = e
        finally:
            finished.set()

    thread = threading.Thread(target=run, name="doublet-search", daemon=True)
    start, evals0, shown = time.perf_counter(), int(s.stats[0]), False
    thread.start()
    try:
        while not finished.wait(0.1):
            spent = time.perf_counter() - start
            if not tty:
                continue
            if spent > PROGRESS_AFTER and dog.phase:  # the search is done
                sys.stderr.write(f"\r\033[K{dog.phase}: {spent:.0f} s ")
                sys.stderr.flush()
                shown = True
            elif spent > PROGRESS_AFTER:
                done = f", {dog.done} ply done" if dog.done >= 0 else ""
                sys.stderr.write(f"\rsearching {dog.ply} ply{done}: "
                                 f"{(int(s.stats[0]) - evals0) / 1e6:.1f} M positions, "
                                 f"{spent:.0f} s (Ctrl-C: answer with what is done) ")  # fmt: skip
                sys.stderr.flush()
                shown = True
    except KeyboardInterrupt as e:
        if dog.phase:  # the search is over and its plays are being written: just stop
            raise
        dog.interrupt()
        finished.wait()
        if stops is not None:
            stops.append(e)
    finally:
        if shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
    if "error" in box:
        raise box["error"]
    return box["value"]


_XGID_SHAPE = re.compile(r"-[-a-oA-O]{25}(:[^:]*){9}")

_OWNERS = {"me": "mover", "mover": "mover", "opponent": "opponent", "centered": "centered"}


def cube_state(args: argparse.Namespace, meta: dict[str, Any]) -> CubeState:
    """The cube state of `doublet analyse`: the XGID's own fields, the flags overriding."""
    base = CubeState.from_meta(meta)
    req: dict[str, Any] = {}
    if args.cube is not None or args.owner is not None:
        value = args.cube if args.cube is not None else base.value
        if not is_cube_value(value):
            raise DoubletError(f"--cube {value}: the cube is a power of 2 from 1 to {MAX_CUBE}")
        owner = (
            _OWNERS[args.owner]
            if args.owner is not None
            else ("centered" if value == 1 else (base.owner if base.owner != "centered" else None))
        )
        if owner is None:
            raise DoubletError(f"--cube {value}: say who owns it with --owner me|opponent")
        req["cube"] = {"value": value, "owner": owner}
    if args.score is not None and args.away is not None:
        raise DoubletError("give the match score as --score (points won) or --away (points "
                           "needed), not both")  # fmt: skip
    length = args.match
    if length is None and (args.score is not None or args.away is not None):
        if not base.is_match:
            raise DoubletError("--score/--away need --match N (the match length)")
        length = base.length
    if length is not None:
        if not 0 <= length <= MAX_LENGTH:
            raise DoubletError(f"--match {length}: a match is 1 to {MAX_LENGTH} points (0: "
                               "money play)")  # fmt: skip
        if length == 0:
            if args.score is not None or args.away is not None:
                raise DoubletError("--match 0 is money play: it takes no --score or --away")
            if args.crawford:
                raise DoubletError("--crawford is for match play, not --match 0 (money)")
            req["match"] = None
        else:
            if args.score is not None:
                pair = {"score": list(args.score)}
            elif args.away is not None:
                pair = {"away": list(args.away)}
            elif base.is_match and base.length == length:
                pair = {"away": list(base.away)}
            else:
                raise DoubletError(f"--match {length} needs the score: --score A B (points "
                                   "won by the side on roll, then the opponent) or --away A B "
                                   "(points each still needs)")  # fmt: skip
            crawford = args.crawford
            if crawford is None:  # the position's own flag, while a side is 1-away
                away = from_request({"match": {"length": length, **pair}}).away
                crawford = base.crawford and 1 in away
            req["match"] = {"length": length, "crawford": bool(crawford), **pair}
    elif args.crawford is not None:
        if not base.is_match:
            flag = "--crawford" if args.crawford else "--no-crawford"
            raise DoubletError(f"{flag} is for match play: give --match N and the score")
        req["match"] = {"length": base.length, "away": list(base.away), "crawford": args.crawford}
    if args.jacoby is not None:
        req["jacoby"] = args.jacoby
    if args.beavers is not None:
        req["beavers"] = args.beavers
    return from_request(req, base)


TEXT_PLAYS = 20  # the plays doublet analyse's text lists without --all


def cmd_analyse(args: argparse.Namespace, out: TextIO) -> int:

    given = _given_flags(args)
    unused = [f for f in args.rollout_flags if f in given]
    if unused and not args.rollout:
        if len(unused) == 1:
            raise DoubletError(f"{unused[0]} is a rollout option: give --rollout too (or "
                               "leave it out)")  # fmt: skip
        raise DoubletError(f"{', '.join(unused[:-1])} and {unused[-1]} are rollout options: "
                           "give --rollout too (or leave them out)")  # fmt: skip
    settings = _rollout_settings(args) if args.rollout else None  # checked before the search
    board, variant, meta = parse_position(args.position, args.variant)  # with its cube fields
    pos = Position(board, variant)
    state = cube_state(args, meta)
    dice = _roll(args, meta)
    _refuse_unused(given, dice, state)
    model = _load_model(args.model, pos.variant)
    ply = _search_ply(args)
    announce_compile(*(SEARCH_KERNELS if dice else EVAL_KERNELS))
    started = time.perf_counter()
    # With --rollout, --time is the whole command's: the search has half of it, the
    # rollout what is left (it took the whole budget again, 2.5 times it in all).
    search_time = args.time / 2 if args.time is not None and settings is not None else args.time
    stops: list[BaseException] = []  # Ctrl-C or SIGTERM: the search answers, no rollout
    if dice:
        d1, d2 = dice
        # The text lists the best TEXT_PLAYS (--all: every play), and only those are
        # written out.
        shown = None if args.json or args.all else TEXT_PLAYS
        doc = _watched(lambda: analyse_roll(pos, d1, d2, ply, model, state, search_time,
                                            limit=shown, iterative=True),
                       model, pos.variant, stops)  # fmt: skip
    else:
        doc = _watched(lambda: analyse_position(pos, state, ply, model, args.cube_method,
                                                search_time, iterative=True),
                       model, pos.variant, stops)  # fmt: skip
    searched = not stops
    if settings is not None and searched:  # the plays picked at the depth reached
        left = None if args.time is None else max(
            args.time - (time.perf_counter() - started), args.time / 10)  # fmt: skip
        try:
            doc["rollout"] = _rollout(args, settings, pos, dice, state, model,
                                      min(doc["ply"], 2), left)  # fmt: skip
        except KeyboardInterrupt as e:  # before any trial finished: the analysis alone
            stops.append(e)
    if meta.get("note"):  # as the engine: an ID read as Acey-Deucey
        doc["note"] = meta["note"]
    if args.json:
        out.write(json.dumps(doc) + "\n")
    else:
        out.write(render(doc, np.array(pos.board), limit=10**9 if args.all else TEXT_PLAYS)
                  + "\n")  # fmt: skip
        if "note" in doc:
            out.write(f"Note: {doc['note']}\n")
        if "rollout" in doc:
            out.write(render_rollout(doc["rollout"]) + "\n")
    if settings is not None and "rollout" not in doc:  # asked for, stopped
        out.flush()
        why = "none of its trials had finished" if searched else "not begun"
        print(f"doublet: {stop_word(stops[0])}: the analysis above, no "
              f"rollout ({why})", file=sys.stderr)  # fmt: skip
        return interrupt_status(stops[0])
    return 0


# -- rollouts (doublet.search.rollout) ---------------------------------------------------------


def _in_range(flag: str, value: float, lo: int, hi: int | None = None, what: str = "") -> None:
    """DoubletError naming `flag` when `value` is not lo..hi (hi None: no top); `what`, its
    meaning in a few words, is said in brackets."""
    if not (lo <= value and (hi is None or value <= hi)):  # NaN too
        span = f"{lo} or more" if hi is None else f"{lo} or {hi}" if hi == lo + 1 else (
            f"{lo}..{hi}")  # fmt: skip
        raise DoubletError(f"{flag}{f' ({what})' if what else ''} must be {span}, got {value:g}")


def _rollout_settings(args: argparse.Namespace) -> RolloutSettings:
    """The rollout options as RolloutSettings, checked (RolloutSettings.check) with each
    error naming the flag, and --top and --workers."""
    settings = RolloutSettings(trials=args.trials, ply=args.rollout_ply, truncate=args.truncate,
                               bearoff=args.bearoff, luck=args.luck, seed=args.seed,
                               until_se=args.until_se, cubeful=args.cubeful,
                               cube_ply=args.cube_ply)  # fmt: skip
    settings.check(args.rollout_names)
    _in_range("--top", args.top, 1)
    _in_range("--workers", args.workers, 1, MAX_WORKERS)
    return settings


def _rollout(args: argparse.Namespace, settings: RolloutSettings, pos: Position, dice: Any,
             state: CubeState, model: Any, select_ply: int,
             budget: float | None = None) -> dict[str, Any]:  # fmt: skip
    """The rollout document of `doublet rollout` and `analyse --rollout`, with a progress
    bar (the running equity and its standard error) on a terminal."""
    from doublet.core.parallel import shared_executor

    ex = shared_executor(args.workers, args.ray)
    bar = None
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm  # type: ignore[import-untyped]

            bar = tqdm(total=settings.trials, unit="trial", desc="rollout", file=sys.stderr)
        except ImportError:
            pass

    def progress(done: int, total: int, trials: Any) -> None:
        if bar is not None:
            eq, se = trials.running()
            what = "no double" if trials.cube and dice is None else "equity"
            bar.update(done - bar.n)
            bar.set_postfix_str(f"{what} {eq[0]:+.3f} ± {se[0]:.3f}")

    try:
        return rollout_document(pos, tuple(dice) if dice else None, settings, state, model,
                                args.top, select_ply, ex, progress,
                                args.time if budget is None else budget)  # fmt: skip
    finally:
        if bar is not None:
            bar.close()


def cmd_rollout(args: argparse.Namespace, out: TextIO) -> int:
    given = _given_flags(args)
    settings = _rollout_settings(args)
    _in_range("--select-ply", args.select_ply, 0, protocol.MAX_PLY,
              "the depth that picks the plays")  # fmt: skip
    board, variant, meta = parse_position(args.position, args.variant)
    pos = Position(board, variant)
    state = cube_state(args, meta)
    dice = _roll(args, meta)
    _refuse_unused(given, dice, state)
    model = _load_model(args.model, pos.variant)
    announce_compile("rollout._chunk")
    doc = _rollout(args, settings, pos, dice, state, model, args.select_ply)
    out.write((json.dumps(doc) if args.json else render_rollout(doc)) + "\n")
    return 0


def _rollout_arguments(p: argparse.ArgumentParser, ply_flag: str) -> None:
    """The rollout's options, shared by `doublet rollout` and `analyse --rollout`."""
    d = RolloutSettings()
    g = p.add_argument_group("rollout")
    flags = [
        _filled(p, g, "--trials", d.trials, type=int, help=f"default {d.trials}"),
        _filled(p, g, ply_flag, d.ply, dest="rollout_ply", type=int,
                help="the depth of both sides' checker play in the trials, 0 or 1 "
                f"(default {d.ply})"),
        _filled(p, g, "--truncate", d.truncate, type=int, metavar="P",
                help="value a trial by the net after P plays (default 0: play to the end)"),
        _filled(p, g, "--no-bearoff", d.bearoff, dest="bearoff", action="store_false",
                help="play bear-offs out instead of ending at the exact database"),
        _filled(p, g, "--no-luck", d.luck, dest="luck", action="store_false",
                help="no luck adjustment (variance reduction)"),
        _filled(p, g, "--cubeful", d.cubeful, action="store_true",
                help="play the cube in the trials (a cubeful rollout) instead of converting "
                "the cubeless rollout by Janowski's model at the root"),
        _filled(p, g, "--cube-ply", d.cube_ply, type=int,
                help="with --cubeful: the depth of the cube decisions in the trials, 0 (the "
                "net) or 1 (the mean over the 21 rolls)"),
        _filled(p, g, "--seed", d.seed, type=int,
                help=f"the dice's seed, 0 to 2**64 - 1 (default {d.seed})"),
        _filled(p, g, "--top", 3, type=int, help="with dice: the plays rolled out (default 3)"),
        _filled(p, g, "--until-se", d.until_se, type=float, metavar="SE",
                help="stop once the equity's standard error (every play's; with the cube in "
                "the trials, the cubeful one, of no double) is at most SE"),
        _filled(p, g, "--workers", 2, type=int,
                help=f"local processes, 1..{MAX_WORKERS} (default 2)"),
        _filled(p, g, "--ray", None, metavar="ADDRESS",
                help="run the trials as Ray tasks: 'auto' (this machine's cluster), an "
                "address, or 'local' (a private instance); pip install 'doublet[ray]'"),
    ]  # fmt: skip
    p.set_defaults(rollout_flags=tuple(flags))
    # The flag of each setting, for RolloutSettings.check's errors: the flag whose dest is
    # its field, and ply_flag (its dest rollout_ply: analyse has a --ply of its own).
    flag_of = {dest: flag for flag, dest, _ in p.get_default("filled")}
    names = {f.name: flag_of[f.name] for f in fields(RolloutSettings) if f.name in flag_of}
    p.set_defaults(rollout_names={**names, "ply": ply_flag})


def _filled(p: argparse.ArgumentParser, g: Any, flag: str, default: Any, **kw: Any) -> str:
    """g.add_argument(flag, **kw) whose default (None in argparse) is filled in by
    _given_flags, so that a flag given is told from one left out: a flag given that would
    do nothing is refused (_refuse_unused). Returns the flag."""
    action = g.add_argument(flag, default=None, **kw)
    p.set_defaults(filled=(*(p.get_default("filled") or ()), (flag, action.dest, default)))
    return flag


def _given_flags(args: argparse.Namespace) -> set[str]:
    """The flags given on the command line, of those added by _filled (each left out then
    takes its default) and the cube's --beavers / --no-beavers."""
    given = set()
    for flag, dest, default in getattr(args, "filled", ()):
        if getattr(args, dest) is None:
            setattr(args, dest, default)
        else:
            given.add(flag)
    if getattr(args, "beavers", None) is not None:
        given.add("--beavers" if args.beavers else "--no-beavers")
    return given


# What a flag that takes a roll does, for the error when it has none.
_ROLL_FLAGS = {
    "--all": "lists every play of a roll",
    "--top": "is the number of a roll's plays rolled out",
    "--select-ply": "is the depth that picks a roll's plays to roll out",
}
_CUBE_FLAGS = {
    **{f"--{key}": what for key, what in CUBE_OPTIONS.items()},
    "--no-beavers": "says the taker of a double may not beaver",
}


def _refuse_unused(given: set[str], dice: Any, state: CubeState) -> None:
    """DoubletError naming a flag given that would do nothing here, and what it needs (as
    --cube-ply without --cubeful): --all, --top, --select-ply without a roll; with one,
    --cube-method (the cube decision before the roll), and where no cube is turned
    (no_cube_with_roll: money play with the cube centred) --cubeful and --beavers."""
    if not dice:
        for flag, what in _ROLL_FLAGS.items():
            if flag in given:
                raise DoubletError(f"{flag} {what}: it needs a roll (D1 D2, or an XGID's or "
                                   "Match ID's own dice)")  # fmt: skip
        return
    if "--cube-method" in given:
        raise DoubletError("--cube-method is how the cube decision before the roll is "
                           "found: with a roll, analyse ranks the plays and takes no cube "
                           "decision")  # fmt: skip
    if no_cube_with_roll(state):
        for flag, what in _CUBE_FLAGS.items():
            if flag in given:
                raise DoubletError(f"{flag} {what}, but {NO_CUBE_WITH_ROLL}")


def default_cache_dir() -> Path:
    """$DOUBLET_REVIEW_CACHE, else review/ in Doublet's cache folder (beside the compiled
    kernels: $DOUBLET_CACHE_DIR, else $XDG_CACHE_HOME/doublet or ~/.cache/doublet)."""
    env = os.environ.get("DOUBLET_REVIEW_CACHE")
    return Path(env) if env else cache_base() / "review"


def cmd_review(args: argparse.Namespace, out: TextIO) -> int:
    if not 0 <= args.ply <= 2:
        raise DoubletError(f"--ply must be 0..2, got {args.ply}")
    try:
        data = Path(args.file).read_bytes()
    except OSError as e:
        raise DoubletError(f"cannot read {args.file!r}: {e.strerror}") from None
    try:
        text = decode_match_file(data)
    except DoubletError as e:
        raise DoubletError(f"{args.file!r}: {e}") from None
    said = {"Jacoby": args.jacoby, "Beaver": args.beavers}
    tags = {k: v.capitalize() for k, v in said.items() if v is not None}
    try:  # (a review: a move's error named no file)
        match, games = read_match(text, unfinished=True, need_game=True, tags=tags)
    except DoubletError as e:
        raise DoubletError(f"{args.file!r}: {e}") from None
    if tags and match.length:
        raise DoubletError(f"--jacoby and --beavers are money play's rules, and "
                           f"{args.file!r} is a {match.length}-point match")  # fmt: skip
    if args.beavers == "off" and money_rules(match)[1]:  # (a review: silently on)
        raise DoubletError(f"--beavers off, but a beaver is played in {args.file!r}: the "
                           "session was played with beavers")  # fmt: skip
    if args.top < 0:
        raise DoubletError(f"--top is the number of errors listed, 0 or more, got {args.top}")
    _in_range("--workers", args.workers, 1, MAX_WORKERS)
    if args.html and (why := missing_folder(args.html) or file_path_error(args.html)):
        raise DoubletError(f"cannot write {args.html!r}: {why}")  # before a long analysis
    cache = None if args.no_cache else Path(args.cache).expanduser() if args.cache else (
        default_cache_dir())  # fmt: skip
    if cache is not None:  # said before a long analysis too
        try:
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=cache):
                pass  # a file can be written there
        except OSError as e:
            why = "a file is in its place" if cache.is_file() else e.strerror or str(e)
            raise DoubletError(f"cannot use {str(cache)!r} as the review cache folder: "
                               f"{why} (give --cache another folder, or --no-cache)"
                               ) from None  # fmt: skip
    announce_compile(*SEARCH_KERNELS)
    doc = review(match, games, args.ply, workers=args.workers, cache=cache,
                 progress=sys.stderr.isatty(),
                 damaged=lambda n: _say_damaged(n, cache))  # fmt: skip
    if args.html:
        page = html_report(doc, Path(args.file).name, args.top)
        try:
            with atomic_open(Path(args.html).expanduser(), "w") as f:
                f.write(page)
        except OSError as e:
            raise DoubletError(f"cannot write {args.html!r}: {e.strerror}") from None
    if args.json:
        out.write(json.dumps(doc) + "\n")
        return 0
    kind = f"{match.length}-point match" if match.length else "money session"
    going = ", the last one unfinished" if games and games[-1].winner < 0 else ""
    count = f"{len(games)} game{'s' * (len(games) != 1)}"
    out.write(f"{args.file}: {kind}, {count}{going}, reviewed at {args.ply} ply\n")
    if not match.length:  # a .mat does not say (gnubg writes no tag): say what is assumed
        jacoby, beavers = money_rules(match)
        whose = {k: "" if k in tags else " (the file's)" if k in match.tags else
                 " (the file does not say)" for k in ("Jacoby", "Beaver")}  # fmt: skip
        out.write(f"money rules: Jacoby {'on' if jacoby else 'off'}{whose['Jacoby']}, beavers "
                  f"{'on' if beavers else 'off'}{whose['Beaver']}; --jacoby / --beavers "
                  "on|off set them\n")  # fmt: skip
    names = [p["name"] for p in doc["players"]]
    width = max(14, *(_cells(n) + 2 for n in names))  # a long or wide name widens both

    def row(label: str, a: str, b: str) -> str:
        return f"{label:<28}{_right(a, width)}{_right(b, width)}\n"

    out.write(row("", *names))
    for label, key, fmt in REVIEW_ROWS:  # the HTML page's rows, the same figures
        out.write(row(label, *(fmt.format(p[key]) for p in doc["players"])))
    for what, key in (("Checker", "checker_verdicts"), ("Cube", "cube_verdicts")):
        for words in ("doubtful", "bad", "very bad"):
            out.write(row(f"{what} {words}", *(str(p[key][words]) for p in doc["players"])))
    worst = sorted(doc["errors"], key=lambda x: -x["loss"])[: args.top]
    if worst:
        out.write("Worst decisions:\n")
    for err in worst:
        what = (f"played {err['play']}, best {err['best']}" if err["kind"] == "checker play"
                else f"{err['kind']} (proper: {err['proper']})")  # fmt: skip
        dice = f" {err['dice'][0]}{err['dice'][1]}" if "dice" in err else ""
        who = doc["players"][err["player"]]["name"]
        out.write(f"  game {err['game']} move {err['move']}, {who}{dice}: {what}; "
                  f"loses {err['loss']:.3f} ({err['position_id']}, {err['xgid']})\n")  # fmt: skip
    return 0


def _say_damaged(n: int, cache: Path | None) -> None:
    """Say on stderr that the review skipped `n` damaged lines of its cache folder."""
    one = n == 1
    print(f"doublet: {n} damaged line{'' if one else 's'} of the review cache {str(cache)!r} "
          f"{'was' if one else 'were'} skipped; the review analysed again what it needed "
          f"from {'it' if one else 'them'}", file=sys.stderr)  # fmt: skip


def _cells(text: str) -> int:
    """The columns `text` takes on a terminal: 2 for a wide character (中, ｶ), 0 for a
    combining mark, else 1."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF"
               else 1 for c in text)  # fmt: skip


def _right(text: str, width: int) -> str:
    """`text` right-aligned in `width` terminal columns."""
    return " " * max(0, width - _cells(text)) + text


def cmd_engine(args: argparse.Namespace, out: TextIO) -> int:
    """The engine protocol (doublet.apps.protocol, engine/apps/protocol.md) on stdin/stdout; with
    --doc, its documentation (shipped in the package)."""
    if args.doc:
        out.write(protocol_doc())
        return 0
    from doublet.core.parallel import close_shared

    ending = _Ending()
    signals = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    before = {n: signal.signal(n, ending.handle) for n in signals}
    ends = {int(signal.SIGINT), *map(int, signals)}
    # A search in progress is stopped the moment an ending signal arrives, from a thread of
    # its own: the handler (Ended, KeyboardInterrupt) only runs once the kernel returns,
    # which took seconds at 4 ply (the search's reply is not written either way).
    try:
        with signal_watcher(lambda n: interrupt_all() if n in ends else None):
            announce_compile(*SEARCH_KERNELS)
            session = protocol.Session()
            fast = FastBest(session)
            write, flush = out.write, out.flush
            for raw in _input_lines(sys.stdin):
                reply = engine_reply(session, fast, raw)
                if reply is QUIT:
                    break
                if isinstance(reply, str):
                    ending.writing = True  # a reply is written whole
                    write(reply)
                    flush()
                    ending.writing = False
                    if ending.status:
                        return ending.status
            return 0
    except Ended as e:
        return e.status
    finally:
        for n, handler in before.items():
            signal.signal(n, handler)
        close_shared()  # the rollouts' workers, at quit, the end of input or a signal


class Ended(BaseException):
    """doublet engine ends on a signal (SIGTERM, SIGHUP), with `status` 128 + its number
    (as a shell gives a process the signal ended, and as doublet play ends). Not an
    Exception: the session answers those as a request's error."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Ending:
    """doublet engine's signal handler: ends it (Ended) where it is, reading or working
    on a request (whose reply is not written), but after the reply being written; a
    second signal during that write ends the process at once (os._exit), for a write
    stuck on a reader that stopped reading a full pipe."""

    def __init__(self) -> None:
        self.writing = False
        self.status = 0

    def handle(self, signum: int, frame: Any) -> None:
        if self.writing and self.status:  # a second signal while a write is stuck (a
            os._exit(128 + signum)  # reader that stopped reading a full pipe): end now
        self.status = 128 + signum
        if not self.writing:
            raise Ended(self.status)


QUIT = object()  # engine_reply's answer to {"cmd": "quit"}


def engine_reply(session: protocol.Session, fast: FastBest, raw: str | bytes) -> object:
    """doublet engine's answer to one input line: the reply line (with its newline),
    None for a blank line, or QUIT. A standard best at 0 or 1 ply is read and written in
    kernels (FastBest), anything else by the session."""
    if isinstance(raw, bytes):
        answer = fast.reply(raw)
        if answer is not None:
            return answer.decode("ascii")
    read = _json_request(raw)
    if read is None:
        return None
    req, bad = read
    if bad:  # the id, where the line still has one a reply can carry
        return json.dumps(protocol.with_id(protocol.id_of(raw), {"error": bad})) + "\n"
    if isinstance(req, dict) and req.get("cmd") == "quit" and set(req) <= protocol.KEYS["quit"]:
        return QUIT
    return json.dumps(session.answer(req)) + "\n"


def _hex(side: list[int]) -> str:
    return "".join(f"{n:x}" for n in side)


def _position_arguments(p: argparse.ArgumentParser, dice_help: str | None = None) -> None:
    """POSITION [D1 D2] --variant --model --json, shared by eval and analyse."""
    p.add_argument("position", help="gnubg Position ID, XGID or JSON board")
    if dice_help:
        p.add_argument("dice", nargs="*", default=[], help=dice_help)
    p.add_argument("--variant", choices=sorted(B.VARIANTS), default=None)
    p.add_argument("--model", help="a model .npz (default: the variant's shipped one; "
                   "doublet --version names their folder)")  # fmt: skip
    p.add_argument("--json", action="store_true")


def _ply_and_time_arguments(p: argparse.ArgumentParser) -> None:
    """--ply and --time, shared by eval and analyse (_search_ply reads them)."""
    p.add_argument("--ply", type=int, default=None,
                   help=f"search depth 0..{protocol.MAX_PLY} (default {protocol.ANALYSIS_PLY}; "
                   f"with --time, {protocol.MAX_PLY}: as deep as the time allows)")  # fmt: skip
    p.add_argument("--time", type=seconds, default=None, metavar="T",
                   help="a time budget (2, 2.5s, 500ms, 1m): deepen one ply at a time while "
                   "time remains and answer with the deepest ply completed (default: no "
                   "limit; a search of more than a second shows its progress, and Ctrl-C "
                   "or SIGTERM answers with the deepest ply done)")  # fmt: skip


def _cube_arguments(p: argparse.ArgumentParser) -> Any:
    """The cube and score flags (cube_state reads them), shared by analyse and rollout."""
    c = p.add_argument_group(
        "cube and score",
        "An XGID's own cube, score, match length, Crawford and Jacoby fields are used; "
        "these flags override them. Default: money play, the cube centered at 1.",
    )
    c.add_argument("--cube", type=int, metavar="V", help="the cube's value (1, 2, 4, ...)")
    c.add_argument("--owner", choices=sorted(_OWNERS), help="who owns the cube: me (the "
                   "side on roll, also 'mover'), opponent, centered")  # fmt: skip
    c.add_argument("--match", type=int, metavar="N", help="match length (0: money play)")
    c.add_argument("--score", type=int, nargs=2, metavar=("A", "B"),
                   help="points won so far by the side on roll, then by the opponent")  # fmt: skip
    c.add_argument("--away", type=int, nargs=2, metavar=("A", "B"),
                   help="points still needed: by the side on roll, then the opponent")  # fmt: skip
    c.add_argument("--crawford", action=argparse.BooleanOptionalAction, default=None,
                   help="this game is the Crawford game (nobody may double)")  # fmt: skip
    c.add_argument("--jacoby", action=argparse.BooleanOptionalAction, default=None,
                   help="money play: gammons count only once the cube has been turned")  # fmt: skip
    c.add_argument("--beavers", action=argparse.BooleanOptionalAction, default=None,
                   help="money play: the taker may beaver")  # fmt: skip
    return c


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors ending in one ``doublet: error: COMMAND: ...`` line
    after the usage (the other errors' ``doublet: error: ...`` with the command named);
    exit status 2 as before. The subcommands' parsers are of this class too
    (add_subparsers makes them so)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: Mapping[str, argparse.ArgumentParser] = {}  # build_parser's subcommands

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        command = self.prog.partition(" ")[2]
        self.exit(2, f"doublet: error: {command + ': ' if command else ''}{message}\n")


def protocol_doc() -> str:
    """The protocol's document (engine/apps/protocol.md in the tree, doublet/apps/protocol.md
    in the package)."""
    from importlib import resources

    return resources.files("doublet.apps").joinpath("protocol.md").read_text(encoding="utf-8")


def _version_text() -> str:
    import numba

    from doublet.nn.eval import MODELS_DIR

    return (f"doublet {__version__} (engine protocol {protocol.PROTOCOL}; numpy "
            f"{np.__version__}, numba {numba.__version__}, Python {sys.version.split()[0]})"
            f"\nmodels: {MODELS_DIR}")  # fmt: skip


def build_parser() -> _Parser:
    parser = _Parser(
        prog="doublet",
        description="Doublet: a backgammon engine (standard backgammon and Acey-Deucey).",
    )
    parser.add_argument("--version", action="version", version=_version_text(),
                        help="the versions, and where the shipped models are")  # fmt: skip
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    parser.commands = sub.choices  # by name (aliases too), for main's parse
    sub.add_parser(
        "train",
        help="self-play TD(lambda) training (python -m doublet.training --help)",
        add_help=False,
    )

    m = sub.add_parser(
        "moves",
        help="list the legal plays of a roll",
        description="List every distinct legal play of a roll. POSITION is a gnubg Position "
        "ID, an XGID or a JSON board. --batch reads one JSON request a line "
        '({"position": ..., "dice": [d1, d2]}) and writes one JSON reply a line.',
    )
    m.add_argument("position", nargs="?", help="gnubg Position ID, XGID or JSON board")
    m.add_argument(
        "dice",
        nargs="*",
        default=[],
        help="the two dice, e.g. 3 1 (default: an XGID's or Match ID's own roll)",
    )
    m.add_argument("--variant", choices=sorted(B.VARIANTS), default=None)
    m.add_argument("--json", action="store_true", help="one JSON object instead of text")
    m.add_argument("--batch", metavar="FILE", help="JSON lines in ('-' for stdin), JSON lines out")
    m.set_defaults(func=cmd_moves)

    e = sub.add_parser(
        "eval",
        help="probabilities and equity of a position",
        description="The net's five probabilities (win, win gammon, win backgammon, lose "
        "gammon, lose backgammon) and the cubeless equity for the side on roll, before it "
        "rolls, at --ply (0: the net itself). --json prints the engine protocol's eval reply "
        "(doublet engine --doc).",
    )
    _position_arguments(e)
    _ply_and_time_arguments(e)
    e.set_defaults(func=cmd_eval)

    a = sub.add_parser(
        "analyse",
        aliases=["analyze"],
        help="rank the plays of a roll, or evaluate a position, at a chosen depth",
        description="Without dice: the side on roll's chances before it rolls and its cube "
        "decision (no double / double, take / double, pass, cubeful, as GNU Backgammon "
        "words it). With dice: every legal play ranked by equity (cubeful at a match score "
        "or with an owned cube), with its five probabilities, its loss against the best "
        "play and the depth used; pip counts; the shots at each blot left by the best "
        "play. --json prints the documented JSON (its keys: doublet engine --doc).",
    )
    _position_arguments(a, dice_help="optional roll, e.g. 3 1")
    _ply_and_time_arguments(a)
    _filled(a, a, "--all", False, action="store_true",
            help=f"with dice: list every play, not the best {TEXT_PLAYS}")  # fmt: skip
    a.add_argument("--rollout", action="store_true",
                   help="also roll out the position, or the best --top plays of the roll "
                   "(with --time: the search has half the time, the rollout the rest)")  # fmt: skip
    c = _cube_arguments(a)
    _filled(a, c, "--cube-method", DEFAULT_METHOD, choices=METHODS,
            help=f"cube decisions by a cubeful search ('cubeful') or by Janowski's "
                   f"conversion of the cubeless n-ply probabilities ('janowski'); default "
                   f"{DEFAULT_METHOD}")  # fmt: skip
    _rollout_arguments(a, "--rollout-ply")
    a.set_defaults(func=cmd_analyse)

    ro = sub.add_parser(
        "rollout",
        help="roll a position, or the best plays of a roll, out many times",
        description="Play the position out many times, both sides at --ply (0 or 1), "
        "and average: its probabilities and equity with their standard errors, and the "
        "cube decision from them (Janowski's model); with dice, the best --top plays by "
        "the search at --select-ply, each rolled out on the same dice, with the "
        "difference to the best and its standard error. Luck-adjusted (the 0-ply net), "
        "the first two rolls quasi-random, trials ended at the exact bear-off database. "
        "Ctrl-C or SIGTERM stops early and prints what was done; the numbers depend on the seed "
        "and the trials only, not on --workers or --ray.",
    )
    _position_arguments(ro, dice_help="optional roll, e.g. 3 1")
    _rollout_arguments(ro, "--ply")
    _filled(ro, ro, "--select-ply", 1, type=int,
            help="with dice: the search depth picking the plays (default 1)")  # fmt: skip
    ro.add_argument("--time", type=rollout_seconds, default=None, metavar="T",
                    help="stop after this time (2, 2.5s, 500ms, 1m, 2h; at most a week; "
                    "default: no limit); with dice, the plays are picked within half of "
                    "it")  # fmt: skip
    _cube_arguments(ro)
    ro.set_defaults(func=cmd_rollout)

    g = sub.add_parser(
        "engine",
        help="a JSON line protocol on stdin/stdout for other programs",
        description="One JSON request a line on stdin, one JSON reply a line on stdout: "
        '{"cmd": "best"|"analyse"|"eval"|"cube"|"moves"|"rollout"|"version"|"set"|"quit", '
        '"position": ..., "dice": [d1, d2], "ply": 0..4, ...}. Every request, reply, '
        "default and error is documented: doublet engine --doc prints it. A bad request gets "
        '{"error": ...} and the engine goes on.',
    )
    g.add_argument("--doc", action="store_true",
                   help="print the protocol's documentation and exit")  # fmt: skip
    g.set_defaults(func=cmd_engine)

    r = sub.add_parser(
        "review",
        help="analyse a played match (.mat or gnubg .sgf): each player's errors",
        description="Read a match file (the .mat text format, or GNU Backgammon's .sgf), "
        "replay every move through the rules (a move that is not legal is named with its "
        "game and move number), and analyse each checker play and cube decision at the "
        "match score: per player the unforced moves, the error totals and rates (mEMG) in "
        "checker play and cube play, the PR, and the errors, worst first.",
    )
    r.add_argument("file", help="a .mat or .sgf match file")
    r.add_argument("--ply", type=int, default=0, help="search depth 0..2 (default 0)")
    r.add_argument("--json", action="store_true")
    r.add_argument("--top", type=int, default=10, help="errors listed in the text (default 10)")
    r.add_argument("--workers", type=int, default=2,
                   help=f"processes analysing games side by side, 1..{MAX_WORKERS} "
                   "(default 2)")  # fmt: skip
    keep = r.add_mutually_exclusive_group()  # a cache folder, or none
    keep.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="where analyses are kept so that an interrupted review continues "
        "(default: review/ in Doublet's cache folder, ~/.cache/doublet)",
    )
    keep.add_argument("--no-cache", action="store_true", help="keep no cache")
    r.add_argument("--html", metavar="OUT",
                   help="also write the review as one self-contained HTML page, each listed "
                   "error with its board")  # fmt: skip
    for rule, tag in (("--jacoby", "Jacoby"), ("--beavers", "Beaver")):
        r.add_argument(rule, choices=("on", "off"),
                       help=f"a money session's {tag} rule, over the file's [{tag}] tag (a "
                       ".mat from gnubg has none: off; its .sgf says)")  # fmt: skip
    r.set_defaults(func=cmd_review)

    play.add_parser(sub)

    serve.add_parser(sub)
    return parser


def _train(rest: list[str]) -> int:
    """`doublet train ...` runs `python -m doublet.training ...` in this process's place: the
    engine never imports training (torch is only needed there)."""
    import importlib.util
    import os

    if importlib.util.find_spec("torch") is None:
        # training/usage.py is torch-free; imported by name, as the engine's type check
        # (tests/test_types.py) sees the engine alone
        usage = importlib.import_module("doublet.training.usage")
        return int(usage.without_torch(rest, "doublet"))
    os.execv(sys.executable, [sys.executable, "-m", "doublet.training", *rest])
    return 0  # not reached


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["train"]:
        return _train(args_list[1:])
    # An XGID without its 'XGID=' prefix can start with '-' (an empty point): it is a
    # position, not an option.
    args_list = [f"XGID={a}" if _XGID_SHAPE.fullmatch(a) else a for a in args_list]
    parser = build_parser()
    command = parser.commands.get(args_list[0]) if args_list else None
    if command is not None:
        # The command's own parser, options and positionals in any order (`analyse POS
        # --ply 0 3 1`, as the usage lines read), its usage shown with its errors.
        args = command.parse_intermixed_args(args_list[1:])
        args.command = args_list[0]
    else:
        args = parser.parse_args(args_list)
    # SIGTERM during a one-shot command stops it as Ctrl-C does (a search answers with the
    # deepest ply it completed, a rollout with its trials done), or ends it with status
    # 143 when it has nothing to answer with; engine, play and serve set their own.
    with sigterm_interrupts():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command's exit status, its errors said on stderr in one line."""
    start = time.perf_counter()
    try:
        status = int(args.func(args, sys.stdout))
    except DoubletError as e:
        print(f"doublet: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (Terminated)
        print(f"doublet: {stop_word(e)}",
              file=sys.stderr)  # fmt: skip
        return interrupt_status(e)
    except BrokenPipeError:
        return 0
    except RecursionError:
        print("doublet: error: the input is nested too deeply to read", file=sys.stderr)
        return 2
    except Exception as e:  # a bug: one line, not a traceback (DOUBLET_DEBUG=1 shows it)
        if os.environ.get("DOUBLET_DEBUG"):
            raise
        print(f"doublet: internal error, please report it: {type(e).__name__}: {e}",
              file=sys.stderr)  # fmt: skip
        return 1
    if getattr(args, "timing", False):
        print(f"({time.perf_counter() - start:.2f} s)", file=sys.stderr)
    return status


if __name__ == "__main__":
    np.set_printoptions(linewidth=120)
    sys.exit(main())
