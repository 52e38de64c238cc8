"""Supervised training of the net on its own deeper search: the field's step after TD.

    python -m doublet.training.distill data --model M --out DIR [--chunks N] [--ply 2] [--workers 2]
        [--epsilon E] [--candidates K] [--ray ADDRESS]
    python -m doublet.training.distill fit --model M --data DIR [DIR ...] --out MODEL [--epochs E]
        [--lr LR] [--lr-end LR] [--hidden H] [--rank-weight W]
    python -m doublet.training.distill data --model M --out DIR --race-trials 72 ...
    python -m doublet.training.distill fit --model M --data DIR --out MODEL --race ...
    python -m doublet.training.distill data --model M --out DIR --rollout-trials 36 ...
    python -m doublet.training.distill data --model M --out DIR --rollout-trials 144
        --rollout-ply 1 --only crashed [--candidates 4] ...

``data`` plays self-play games with M's net (0 ply) and evaluates a sample of their
positions (the side on roll, before it rolls) with doublet.search.searcher at ``--ply`` (the
default filters, the pruning net if M has one, the exact bear-off database): the
probabilities V_ply. Work comes in chunks (chunk c: self-play games
c * GAMES_PER_CHUNK ... of the seed, every POSITION_EVERY-th position from a random
offset), each written atomically as DIR/chunk-NNNNN.npz by worker processes; an
interrupted run goes on where it stopped when started again (the chunks it has are
kept), and a chunk's content depends only on (M, seed, c, ply, epsilon): the chunks go to
doublet.core.parallel's executors, local processes or, with ``--ray ADDRESS``, Ray
tasks on a cluster (the model travels with the work), the same data either way. With
``--epsilon E`` the games take a uniformly random play on a share E of rolls, which
reaches positions the net's own play never does (the shipped model's last fit, session 6:
benchmarks/RESULTS.md). With ``--candidates K`` each sampled position (every
POSITION_EVERY * K-th) gives, for a random roll, the positions after the K plays the
0-ply net rates best, valued the same way: the close alternatives that a decision has to
tell apart, rather than only the play that was made; such a chunk also holds ``group``,
a number per position shared by the plays of one roll (sets made before session 35
lack it). ``fit --data`` takes one folder or several.

``fit`` starts from M's net and fits its outputs to those targets (cross-entropy on the
five sigmoid outputs, Adam, minibatches), keeping a tenth of the chunks aside: it prints
the held-out loss before and after each epoch and writes the model (the same pruning
net, if M has one, is kept: retrain it with doublet.training.prune for the new net).
With ``--rank-weight W`` the loss adds W times a ranking loss on the candidates sets'
groups: the squared difference between the net's and the target's centred equities
(a play's cubeless equity less the mean of its roll's plays), which is what choosing
between the plays depends on and what a cross-entropy on values alone weights no more
than the rest; each epoch also reports the held-out groups' centred mean absolute error.

The race net (``--race-trials T`` / ``--race``): ``data`` keeps every position without
contact of RACE_GAMES_PER_CHUNK games a chunk and values it by a race rollout of T
trials (doublet.training.rollout: exact at the bear-off database, the current play's value
further out) instead of a search; ``fit --race`` fits a race net of its own (starting
from M's race net, which is its contact net when M has none) to those targets and
leaves the contact net as it is.

The contact net on rollouts (``--rollout-trials T``): ``data`` keeps every
POSITION_EVERY-th position with contact of each game and values it by a rollout of T
trials to the end of contact (doublet.training.rollout.Rollout: both sides at 0 ply with the
pruning net, except in crashed positions since session 32, the race net's value when
contact is broken, every roll stratified). These
are the value of the net's own play rather than its search's estimate of it. With
``--only crashed,bar`` the set is every position with contact of those kinds instead of
a sample (gnubg's crashed class; a checker on either bar). Session 19 fitted the net to
such a set and it got worse on the refset (benchmarks/HISTORY.md): the net's own play
is a poor teacher where it plays worst (and until session 32 the rollouts' pruning net
picked its plays in crashed positions too, which valued them about 0.05 lower still).
``--only`` without ``--rollout-trials`` makes the same kinds of set valued by the search
instead (every such position of the chunk's
games, at ``--ply``). With ``--rollout-ply P`` the positions are valued instead by the
analysis rollout (doublet.search.rollout: P-ply play, luck-adjusted, to the end of the
game), the teacher benchmarks/teacher.py found closest to gnubg 2 ply on crashed and blitz
positions; ``--candidates K`` then replaces each position by the positions after its K
best 0-ply plays for a random roll, rolled out on one set of dice (the sets of
training/data/README.md). A plain
``fit`` then moves the contact net alone when M has a race net of its own (that one is
fitted by ``--race``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from doublet.core.board import MY_BAR, OPP_BAR, SIZE, STANDARD, crashed, flip, has_contact, outcome
from doublet.core.dice import stream
from doublet.core.errors import NEEDS_TORCH, DoubletError, InvalidPositionError, TrainingError
from doublet.core.files import (
    atomic_open,
    atomic_write,
    file_path_error,
    os_error_text,
    write_error,
)
from doublet.core.parallel import executor
from doublet.core.signals import interrupt_status, sigterm_interrupts, stop_word
from doublet.formats.ids import check_in_play
from doublet.nn.eval import (
    Model,
    command_line,
    digest,
    equity,
    load_model,
    save_model,
    with_step,
)
from doublet.search.rollout import MAX_ROLLOUT_PLY, RolloutSettings
from doublet.search.rollout import rollout as analysis_rollout
from doublet.search.searcher import MAX_PLY, Limits, Searcher
from doublet.training.progress import Progress, command_log
from doublet.training.rollout import RaceRollout, Rollout
from doublet.training.selfplay import SelfPlay

GAMES_PER_CHUNK = 4
POSITION_EVERY = 4
RACE_GAMES_PER_CHUNK = 16
# --only: the kinds of contact position a rollout set can be made of (each kept whole,
# not every POSITION_EVERY-th: they are rarer). "crashed": GNU Backgammon's crashed class
# (doublet.core.board.crashed); "bar": a checker of either side on the bar (blitzes, and
# the positions after a hit that the search values).
ONLY = ("crashed", "bar")


def _only(b: np.ndarray, kinds: tuple[str, ...]) -> bool:
    """Whether b is of one of the kinds of ONLY named in kinds."""
    return ("crashed" in kinds and bool(crashed(b))) or (
        "bar" in kinds and (b[MY_BAR] > 0 or b[OPP_BAR] < 0)
    )


_STATE: dict[str, Any] = {}


def _init(model: Model | str, epsilon: float = 0.0) -> None:
    """One process's model, searcher and self-play player (a Model, or a path to one)."""
    model = load_model(model) if isinstance(model, str) else model
    _STATE.clear()
    _STATE["model"] = model
    _STATE["searcher"] = Searcher(model)
    _STATE["selfplay"] = SelfPlay(model.variant, epsilon)


def rollout_chunk(seed: int, c: int, trials: int, race: bool, min_equity: float = 0.0,
                  only: tuple[str, ...] = (), rollout_ply: int = -1, candidates: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """(boards (n, SIZE) int8, rollout probabilities (n, 5) float32, group as chunk's) of
    rollout chunk c.

    race: every position without contact of RACE_GAMES_PER_CHUNK games, each rolled out
    by RaceRollout; else every POSITION_EVERY-th position with contact of
    GAMES_PER_CHUNK games (from a random offset), each rolled out to the end of contact,
    less, in either case, those whose cubeless equity for the side on roll, by the 0-ply
    search, is below min_equity in size (for contact, the near-even positions, where no
    cube decision is close; for races, those where no gammon is at stake). With `only`
    (contact; kinds of ONLY), every position with contact of one of those kinds instead.
    rollout_ply 0 or 1 (contact): each position is valued instead by the analysis
    rollout (doublet.search.rollout: rollout_ply-ply play, luck-adjusted, to the end of
    the game), on dice of its own; with candidates k > 0 as well, each selected
    position gives instead the positions after the k plays the 0-ply search rates best
    for a random roll (_candidate_sides), rolled out together on the same dice, so that the
    differences between a decision's plays are measured more closely than their values.
    """
    model, sp = _STATE["model"], _STATE["selfplay"]
    key = "race_rollout" if race else "contact_rollout"
    if key not in _STATE:
        _STATE[key] = RaceRollout(model) if race else Rollout(model)
    rollout = _STATE[key]
    rng = stream(seed, c, 77 if race else 55)
    games = RACE_GAMES_PER_CHUNK if race else GAMES_PER_CHUNK
    boards: list[np.ndarray] = []
    for index in range(c * games, (c + 1) * games):
        traj = sp.game(model.contact, model.race, seed, index)
        live = [b for b in traj.boards if outcome(b) == 0 and has_contact(b) != race]
        if only:
            live = [b for b in live if _only(b, only)]
        elif not race:
            live = live[int(rng.integers(POSITION_EVERY)) :: POSITION_EVERY]
        boards.extend(live)
    if min_equity > 0:
        s, zero = _STATE["searcher"], Limits(ply=0)
        boards = [b for b in boards if abs(float(equity(s.evaluate(b, zero)))) >= min_equity]
    sizes: list[int] = []
    sides: list[int] = []
    if rollout_ply >= 0 and not race:
        parents, boards, values = boards, [], []
        for b in parents:  # its group: b, or the positions after its candidates
            group, side = [b], [0]
            if candidates > 0:
                views, flags = _candidate_sides(_STATE["searcher"], b, candidates, rng)
                keep = [i for i, v in enumerate(views) if _in_play(v)]
                group, side = [views[i] for i in keep], [flags[i] for i in keep]
            settings = RolloutSettings(trials=trials, ply=rollout_ply, luck=True,
                                       seed=int(rng.integers(2**31)))  # fmt: skip
            if group:
                values.append(analysis_rollout(model, np.array(group), settings).probabilities())
                boards.extend(group)
                sizes.append(len(group))
                sides.extend(side)
        out = np.concatenate(values).astype(np.float32) if values else np.empty((0, 5), np.float32)
    else:
        out = np.array([rollout(b, trials, rng) for b in boards], np.float32).reshape(-1, 5)
    group = _groups(sizes, sides) if candidates > 0 else None
    return np.array(boards, np.int8).reshape(-1, SIZE), out, group


def _in_play(b: np.ndarray) -> bool:
    """Whether a position after a play is one a rollout takes (check_in_play)."""
    try:
        check_in_play(b, STANDARD)
    except InvalidPositionError:
        return False
    return True


def _candidate_sides(s: Searcher, b: np.ndarray, k: int, rng: np.random.Generator
                     ) -> tuple[list[np.ndarray], list[int]]:  # fmt: skip
    """The positions after the k plays that the 0-ply search rates best for a roll drawn
    from rng in b, each seen by the side then on roll (finished games left out), and for
    each, 1 when it is seen by the mover (a play after which the mover rolls again:
    Acey-Deucey) and 0 when by the opponent: equities compare within one side's view
    only."""
    d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
    after, again, probs, _ = s.analyse(b, d1, d2, Limits(ply=0))
    eq = equity(probs)
    views, sides = [], []
    for i in np.argsort(-eq, kind="stable")[:k]:
        v = after[i] if again[i] else flip(after[i])
        if outcome(v) == 0:
            views.append(v)
            sides.append(int(again[i]))
    return views, sides


def _groups(sizes: Sequence[int], sides: Sequence[int]) -> np.ndarray:
    """The `group` array of a candidates chunk: for each position, 2 * d + side, d the
    index of its decision in the chunk (sizes: each decision's count of positions, in
    order) and side _candidate_sides' flag; positions of one group are the plays of one
    roll seen from one side, which a fit's ranking term compares (fit, rank_weight)."""
    decision = np.repeat(np.arange(len(sizes), dtype=np.int32), np.asarray(sizes, np.int64))
    return (2 * decision + np.asarray(sides, np.int32)).astype(np.int32)


def chunk(seed: int, c: int, ply: int, race_trials: int = 0, rollout_trials: int = 0,
          candidates: int = 0, min_equity: float = 0.0, only: tuple[str, ...] = (),
          rollout_ply: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """(boards (n, SIZE) int8, V_ply probabilities (n, 5) float32, group) of chunk c (or
    of race chunk c, when race_trials > 0; of contact chunk c, when rollout_trials > 0);
    group: with candidates, (n,) int32, the positions of one decision's plays seen from
    one side sharing a number (_groups), else None.

    candidates k > 0: instead of the sampled positions themselves (every
    POSITION_EVERY * k-th), the positions after the k best plays at 0 ply of a random
    roll in each: the close alternatives a decision has to tell apart."""
    if race_trials > 0:
        return rollout_chunk(seed, c, race_trials, race=True, min_equity=min_equity)
    if rollout_trials > 0:
        return rollout_chunk(seed, c, rollout_trials, race=False, min_equity=min_equity,
                             only=only, rollout_ply=rollout_ply, candidates=candidates)  # fmt: skip
    model, s, sp = _STATE["model"], _STATE["searcher"], _STATE["selfplay"]
    rng = stream(seed, c, 99)
    every = POSITION_EVERY * max(candidates, 1)
    boards: list[np.ndarray] = []
    sizes: list[int] = []
    sides: list[int] = []
    for index in range(c * GAMES_PER_CHUNK, (c + 1) * GAMES_PER_CHUNK):
        traj = sp.game(model.contact, model.race, seed, index)
        start = int(rng.integers(every))
        if only:  # every position of those kinds (rarer), not a sample
            found = [b for b in traj.boards if outcome(b) == 0 and has_contact(b)
                     and _only(b, only)]  # fmt: skip
        else:
            found = [b for b in traj.boards[start::every] if outcome(b) == 0]
        if candidates > 0:
            parents, found = found, []
            for b in parents:
                views, flags = _candidate_sides(s, b, candidates, rng)
                if views:
                    found.extend(views)
                    sizes.append(len(views))
                    sides.extend(flags)
        boards.extend(found)
    out = np.empty((len(boards), 5), np.float32)
    limits = Limits(ply=ply)
    for i, b in enumerate(boards):
        out[i] = s.evaluate(b, limits)
    group = _groups(sizes, sides) if candidates > 0 else None
    return np.array(boards, np.int8).reshape(-1, SIZE), out, group


def _chunk_task(job: tuple[str, Model, float],
                args: tuple[int, int, int, int, int, int, float, tuple[str, ...], int]
                ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """A task of doublet.core.parallel's executors: job (its token, the model and the
    epsilon, set up once a process) and the chunk's arguments."""
    token, model, epsilon = job
    if _STATE.get("token") != token:
        _init(model, epsilon)
        _STATE["token"] = token
    seed, c, ply, race_trials, rollout_trials, candidates, min_equity, only, rollout_ply = args
    boards, probs, group = chunk(seed, c, ply, race_trials, rollout_trials, candidates,
                                 min_equity, only, rollout_ply)  # fmt: skip
    return c, boards, probs, group


def make_data(model_path: str, out: Path, chunks: int, ply: int, seed: int, workers: int,
              race_trials: int = 0, rollout_trials: int = 0, epsilon: float = 0.0,
              candidates: int = 0, ray: str | None = None, min_equity: float = 0.0,
              only: tuple[str, ...] = (), rollout_ply: int = -1) -> int:  # fmt: skip
    """Make the chunks not yet in `out`, on `workers` local processes or, with `ray` (an
    address, "auto" or "local"), as Ray tasks (doublet.core.parallel); the number of
    positions made. Its progress: a bar on a terminal, else a 'distill: ' line now and
    then (doublet.training.progress)."""
    if not 0.0 <= epsilon < 1.0:
        raise TrainingError(f"--epsilon must be in [0, 1), not {epsilon}")
    if candidates < 0 or (
        candidates > 0 and (race_trials > 0 or (rollout_trials > 0 and rollout_ply < 0))
    ):
        raise TrainingError("--candidates must be 0 or more, and goes with search "
                         "targets or the analysis rollout (--rollout-ply), not "
                         "--race-trials or distill's own rollouts")  # fmt: skip
    if min_equity < 0 or (min_equity > 0 and rollout_trials <= 0 and race_trials <= 0):
        raise TrainingError("--min-equity must be 0 or more, and goes with "
                         "--rollout-trials or --race-trials")  # fmt: skip
    if only and (race_trials > 0 or (candidates > 0 and rollout_ply < 0)
                 or any(k not in ONLY for k in only)):  # fmt: skip
        raise TrainingError(f"--only takes {' and '.join(ONLY)} (comma-separated), and "
                         "goes with search targets or --rollout-trials (not --race-trials, "
                         "nor --candidates but with --rollout-ply)")  # fmt: skip
    if rollout_ply != -1 and (rollout_trials <= 0 or not 0 <= rollout_ply <= MAX_ROLLOUT_PLY):
        raise TrainingError(f"--rollout-ply must be 0..{MAX_ROLLOUT_PLY}, and goes with "
                         "--rollout-trials")  # fmt: skip
    if race_trials > 0 and rollout_trials > 0:
        raise TrainingError("--race-trials and --rollout-trials make different data: "
                         "give one")  # fmt: skip
    model = load_model(model_path)  # once: its variant, and the work's
    if (race_trials > 0 or rollout_trials > 0) and model.variant != STANDARD:
        raise TrainingError(f"{model_path} is not a standard backgammon model: "
                         "rollouts end in the standard bear-off database")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    if race_trials > 0:
        info = {"model": str(model_path), "race_trials": race_trials, "seed": seed,
                "games_per_chunk": RACE_GAMES_PER_CHUNK}  # fmt: skip
    elif rollout_trials > 0:
        info = {"model": str(model_path), "rollout_trials": rollout_trials, "seed": seed,
                "games_per_chunk": GAMES_PER_CHUNK, "position_every": POSITION_EVERY}  # fmt: skip
    else:
        info = {"model": str(model_path), "ply": ply, "seed": seed,
                "games_per_chunk": GAMES_PER_CHUNK, "position_every": POSITION_EVERY}  # fmt: skip
    if model.variant != STANDARD:  # recorded when not standard (sets made before did not)
        info["variant"] = model.variant
    if epsilon > 0:
        info["epsilon"] = epsilon
    if candidates > 0:
        info["candidates"] = candidates
    if min_equity > 0:
        info["min_equity"] = min_equity
    if only:
        info["only"] = list(only)
    if rollout_ply >= 0:
        info["rollout_ply"] = rollout_ply
    info["model_digest"] = digest(model)  # the weights: a path can hold another model
    info_path = out / "info.json"
    if info_path.exists():
        old = _read_info(info_path)
        blank = {"epsilon": 0.0, "candidates": 0, "min_equity": 0.0, "only": [],
                 "rollout_ply": -1}  # fmt: skip
        if "model_digest" not in old:  # a set made before digests were recorded
            blank["model_digest"] = info["model_digest"]
        # The same weights under another path are the same model; another model at the
        # same path is not (its digest differs).
        differ = sorted(k for k in {*info, *blank}
                        if old.get(k, blank.get(k)) != info.get(k, blank.get(k))
                        and not (k == "model" and (_same_file(old.get(k), info.get(k))
                                                   or "model_digest" in old)))  # fmt: skip
        if differ:
            what = ", ".join(
                f"{k} {old.get(k, blank.get(k))!r} there, {info.get(k, blank.get(k))!r} now"
                for k in differ
            )
            raise OtherData(f"{out} holds data made with other settings ({what})",
                            "give those, or another --out")  # fmt: skip
    else:
        atomic_write(info_path, json.dumps(info, indent=1))
    beyond = sorted(f.name for f in out.glob("chunk-*.npz") if f.name >= f"chunk-{chunks:05d}")
    if beyond:  # a fit reads every chunk of the folder: more than asked would be fitted
        raise OtherData(f"{out} holds {len(beyond)} chunk(s) past the {chunks} asked for "
                        f"({beyond[0]} ...), made by an earlier, longer run",
                        "ask for that many chunks, or give another --out")  # fmt: skip
    todo = [c for c in range(chunks) if not (out / f"chunk-{c:05d}.npz").exists()]
    positions = 0
    what = f"{ply}-ply targets"
    if race_trials > 0 or rollout_trials > 0:
        what = f"race rollouts x{race_trials}" if race_trials else f"rollouts x{rollout_trials}"
        if rollout_ply >= 0:
            what += f" at {rollout_ply} ply"
    done = chunks - len(todo)
    t0 = time.perf_counter()
    with (Progress(what, chunks, "chunk", command_log("distill"), initial=done) as bar,
          executor(workers, ray) as ex):  # fmt: skip
        job = ex.shared((uuid.uuid4().hex, model, epsilon))
        tasks = [(job, (seed, c, ply, race_trials, rollout_trials, candidates, min_equity,
                        only, rollout_ply)) for c in todo]  # fmt: skip
        for _, (c, boards, probs, group) in ex.map(_chunk_task, tasks):
            extra = {} if group is None else {"group": group}
            with atomic_open(out / f"chunk-{c:05d}.npz") as f:
                np.savez(f, boards=boards, probs=probs, **extra)
            positions += len(boards)
            done += 1
            bar.update(done, f"{positions / (time.perf_counter() - t0):.1f} positions/s")
    return positions


def _same_file(a: Any, b: Any) -> bool:
    """Whether two recorded model paths name the same file (one relative, one not)."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (TypeError, OSError):
        return False


def load_data(data: Path | Sequence[Path]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(boards, probs) of every chunk in data (one folder, or several: their chunks in
    the order given)."""
    boards, probs, _ = load_chunks(data)
    return boards, probs


Chunks = tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray | None]]


def load_chunks(data: Path | Sequence[Path]) -> Chunks:
    """load_data's (boards, probs) and each chunk's `group` (a candidates set's, _groups;
    None for a chunk without one: made without --candidates, or before session 35)."""
    dirs = [data] if isinstance(data, Path) else list(data)
    files = []
    for d in dirs:
        found = sorted(Path(d).glob("chunk-*.npz"))
        if not found:
            raise TrainingError(f"no chunk-*.npz files in {d}")
        files += found
    boards, probs, groups = [], [], []
    for f in files:
        try:
            with np.load(f) as z:
                boards.append(z["boards"])
                probs.append(z["probs"])
                groups.append(z["group"] if "group" in z.files else None)
                if groups[-1] is not None and groups[-1].shape != (len(boards[-1]),):
                    raise ValueError("its group array does not match its boards")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise TrainingError(f"{f} is not a whole chunk ({type(e).__name__}): remove "
                             "it and run data again to make it") from None  # fmt: skip
    return boards, probs, groups


def fit(model: Model, data: Path | Sequence[Path], epochs: int, lr: float, seed: int,
        batch: int = 256, race: bool = False, hidden: int | None = None,
        lr_end: float | None = None, rank_weight: float = 0.0,
        command: str = "") -> tuple[Model, list[dict[str, float | None]]]:  # fmt: skip
    """Fit model's net (race: a race net of its own, on the positions without contact) to
    the targets in data; the fitted model and the loss log. hidden: first widen the nets
    to this many hidden units (the new units start with zero output weights, so the
    fit starts from model's own outputs). lr_end: the learning rate falls from lr to
    lr_end along a cosine over the fit (None: lr throughout).

    rank_weight w > 0: the loss adds w times the ranking loss of the candidates sets'
    groups (load_chunks; the plays of one roll): the mean squared difference between
    the net's and the target's centred equities (each position's cubeless equity less
    its group's mean in the minibatch), what a choice between the plays sees; the
    groups then come in random order, each kept together (but where a minibatch ends
    inside one: its two parts are ranked apart, a part of one play not at all). The
    log's "fit" is then the whole loss, cross-entropy and ranking term; "held_out" is
    the cross-entropy alone, and "held_centred" the held-out groups' centred mean
    absolute error (None without groups)."""
    import torch

    from doublet.nn.encode import encode
    from doublet.training.model import TDNet, has_own_race_net
    from doublet.training.train import widen

    torch.manual_seed(seed)
    if hidden is not None:
        now = model.contact[1].shape[0]
        if hidden < now:
            raise TrainingError(f"--hidden {hidden} is below the model's {now} units")
        rng = np.random.default_rng(seed)
        contact = widen(model.contact, hidden, rng)
        race_net = widen(model.race, hidden, rng) if has_own_race_net(model) else contact
        model = Model(contact, race_net, {**model.meta, "hidden": hidden}, model.prune)

    if rank_weight < 0:
        raise TrainingError(f"--rank-weight must be 0 or more, got {rank_weight}")
    if rank_weight > 0 and race:
        raise TrainingError("--rank-weight goes with a contact fit, not --race (race "
                         "sets have no groups)")  # fmt: skip
    boards, probs, groups = load_chunks(data)
    if rank_weight > 0 and all(g is None for g in groups):
        where = ", ".join(map(str, data)) if isinstance(data, (list, tuple)) else str(data)
        raise TrainingError(f"--rank-weight needs candidates sets (distill data "
                         f"--candidates K, since session 35): {where} holds none")  # fmt: skip
    if race:
        keep = [np.array([not has_contact(b) for b in bs], bool) for bs in boards]
        boards = [bs[k] for bs, k in zip(boards, keep, strict=True)]
        probs = [ps[k] for ps, k in zip(probs, keep, strict=True)]
        groups = [None if g is None else g[k] for g, k in zip(groups, keep, strict=True)]
        if sum(len(bs) for bs in boards) == 0:
            raise TrainingError(f"{data} holds no positions without contact to fit")
    if len(boards) < 2:
        raise TrainingError(f"{data} holds {len(boards)} chunk: a fit holds a tenth of "
                         "the chunks out (at least one) and needs one more to fit; make "
                         "more with data --chunks")  # fmt: skip
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(boards))
    held = order[: max(1, len(boards) // 10)]
    fit_idx = order[len(held) :]
    xs = {i: torch.from_numpy(encode(boards[i])) for i in range(len(boards))}
    ys = {i: torch.from_numpy(probs[i]) for i in range(len(boards))}
    x_fit = torch.cat([xs[i] for i in fit_idx])
    y_fit = torch.cat([ys[i] for i in fit_idx]).clamp(0.0, 1.0)
    x_held = torch.cat([xs[i] for i in held])
    y_held = torch.cat([ys[i] for i in held]).clamp(0.0, 1.0)
    # one number per group over all the chunks (a position without a group: its own)
    gid = _group_ids(groups, [len(b) for b in boards])
    g_fit = torch.from_numpy(np.concatenate([gid[i] for i in fit_idx]))
    g_held = torch.from_numpy(np.concatenate([gid[i] for i in held]))
    net = TDNet.from_model(model)
    if race and net.race is None:  # a race net of its own, starting as the contact net
        net = TDNet(model.contact[1].shape[0], race_net=True)
        net.from_engine(model.contact, model.race)
    # A race net of its own is fitted only by --race (to race rollouts); a plain fit
    # moves the contact net alone.
    params = (net.race if race else net.contact).parameters()
    opt = torch.optim.Adam(params, lr=lr)
    steps = epochs * -(-len(x_fit) // batch)
    sched = None
    if lr_end is not None:
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1), eta_min=lr_end)
    bce = torch.nn.functional.binary_cross_entropy

    def held() -> dict[str, float | None]:
        """The held-out cross-entropy and the held-out groups' centred MAE (None: no
        held-out position has a group), from one pass of the net."""
        with torch.no_grad():
            out = net(x_held)
            err, n = _centred_errors(out, y_held, g_held)
            return {"held_out": float(bce(out, y_held)),
                    "held_centred": float(err.abs().sum() / n) if n > 0 else None}  # fmt: skip

    def centred_text(v: float | None) -> str:
        return "" if v is None else f", centred MAE {v:.5f}"

    log = [{"epoch": 0, **held()}]
    first = log[0]
    say = command_log("distill")  # on stderr with its prefix, as the data step's lines
    say(f"{len(x_fit):,} positions to fit, {len(x_held):,} held out; held-out loss "
        f"{first['held_out']:.5f}{centred_text(first['held_centred'])}")  # fmt: skip
    for epoch in range(1, epochs + 1):
        if rank_weight > 0:  # whole groups, in random order
            key = torch.rand(int(g_fit.max()) + 1)[g_fit]
            perm = torch.argsort(key, stable=True)
        else:
            perm = torch.randperm(len(x_fit))
        total = 0.0
        for k in range(0, len(perm), batch):
            idx = perm[k : k + batch]
            out = net(x_fit[idx])
            loss = bce(out, y_fit[idx])
            if rank_weight > 0:
                err, n = _centred_errors(out, y_fit[idx], g_fit[idx])
                if n > 0:
                    loss = loss + rank_weight * (err * err).sum() / n
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += loss.item() * len(idx)
        log.append({"epoch": epoch, "fit": total / len(perm), **held(),
                    "lr": opt.param_groups[0]["lr"]})  # fmt: skip
        say(f"epoch {epoch}: fit loss {log[-1]['fit']:.5f}, held-out {log[-1]['held_out']:.5f}"
            f"{centred_text(log[-1]['held_centred'])}")  # fmt: skip
    contact_net, race_net = net.to_engine()
    # The net changed: its recorded strength no longer holds (measure it again).
    meta = {k: v for k, v in model.meta.items() if k != "strength"}
    key = "race_fit" if race else "distilled"
    where = str(data) if isinstance(data, Path) else " ".join(str(d) for d in data)
    meta = {**meta, key: {"data": where, "positions": len(x_fit), "epochs": epochs,
                          "lr": lr, "lr_end": lr_end, "log": log}}  # fmt: skip
    if race:
        meta["race_net"] = True
    step = {"data": where, "positions": len(x_fit), "epochs": epochs, "lr": lr, "lr_end": lr_end,
            "hidden": int(contact_net[1].shape[0]), "seed": seed,
            "held_out_loss": log[-1]["held_out"] if log else None}  # fmt: skip
    if rank_weight > 0:
        meta[key]["rank_weight"] = step["rank_weight"] = rank_weight
    meta = with_step(meta, "race-fit" if race else "distill-fit", command=command, **step)
    return Model(contact_net, race_net, meta, model.prune), log


def _group_ids(groups: Sequence[np.ndarray | None], sizes: Sequence[int]) -> list[np.ndarray]:
    """Each chunk's positions (sizes: how many in each) numbered by group over all the
    chunks (int64): a chunk's groups (load_chunks) kept together, every position of a
    chunk without groups a group of its own."""
    ids, nxt = [], 0
    for g, n in zip(groups, sizes, strict=True):
        if g is None or n == 0:
            ids.append(np.arange(nxt, nxt + n, dtype=np.int64))
            nxt += n
            continue
        _, local = np.unique(g, return_inverse=True)
        ids.append(nxt + local.astype(np.int64))
        nxt += int(local.max()) + 1
    return ids


def _centred_errors(out: Any, y: Any, g: Any) -> tuple[Any, int]:
    """(the net's centred equity less the target's, for each position of a group of two
    or more (torch tensor), their count): centred = a position's cubeless equity less its
    group's mean among these rows; out, y: (n, 5) probabilities, g: (n,) group numbers."""
    import torch

    w = torch.tensor([2.0, 1.0, 1.0, -1.0, -1.0], dtype=out.dtype)
    diff = out @ w - y @ w  # the constant -1 of each equity cancels
    _, inv, counts = torch.unique(g, return_inverse=True, return_counts=True)
    sums = torch.zeros(len(counts), dtype=out.dtype).index_add_(0, inv, diff)
    centred = diff - (sums / counts.to(out.dtype))[inv]
    many = counts[inv] > 1
    return centred[many], int(many.sum())


def build_parser() -> argparse.ArgumentParser:
    """`python -m doublet.training.distill data|fit`: every option says what it does."""
    ap = argparse.ArgumentParser(
        prog="python -m doublet.training.distill", description=__doc__.split("\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data", help="self-play positions and their n-ply values")
    d.add_argument("--model", required=True,
                   help="the model (.npz) whose 0-ply self-play gives the positions and "
                        "whose search values them")  # fmt: skip
    d.add_argument("--out", required=True, type=Path,
                   help="the folder of the chunks (and info.json); a run stopped there "
                        "goes on with the chunks it lacks")  # fmt: skip
    d.add_argument("--chunks", type=int, default=1000,
                   help=f"chunks in all, each the positions taken from {GAMES_PER_CHUNK} "
                        f"self-play games ({RACE_GAMES_PER_CHUNK} with --race-trials) "
                        "(default %(default)s)")  # fmt: skip
    d.add_argument("--ply", type=int, default=2,
                   help=f"the depth of the search that values the positions, 0 to {MAX_PLY} "
                        "(default %(default)s; not with rollouts)")  # fmt: skip
    d.add_argument("--seed", type=int, default=1,
                   help="the seed of the games, the samples and the rollouts' dice "
                        "(default %(default)s)")  # fmt: skip
    d.add_argument("--workers", type=int, default=2,
                   help="local processes making the chunks (default %(default)s; the same "
                        "data with any number)")  # fmt: skip
    d.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="make the chunks as Ray tasks: 'auto' (this machine's cluster), an "
                   "address, or 'local' (pip install 'doublet[ray]'; default: local "
                   "processes, --workers)")  # fmt: skip
    d.add_argument("--race-trials", type=int, default=0,
                   help="race positions only, valued by rollouts of this many trials "
                        "(default %(default)s: off)")  # fmt: skip
    d.add_argument("--rollout-trials", type=int, default=0,
                   help="contact positions only, valued by rollouts of this many trials "
                        "to the end of contact (default %(default)s: off)")  # fmt: skip
    d.add_argument("--rollout-ply", type=int, default=-1,
                   help="with --rollout-trials: value each position by the analysis rollout "
                        "(doublet.search.rollout: this ply's play, 0 or 1, luck-adjusted, "
                        "to the end of the game) instead of 0-ply trials to the end of "
                        "contact (default: off)")  # fmt: skip
    d.add_argument("--epsilon", type=float, default=0.0,
                   help="the games play a uniformly random play on this share of rolls, "
                        "for positions off the net's own path (default %(default)s: "
                        "none)")  # fmt: skip
    d.add_argument("--candidates", type=int, default=0,
                   help="value the positions after the K best 0-ply plays of a random "
                        "roll in each sampled position, not the position (default "
                        "%(default)s: off); with --rollout-ply, a position's K are rolled "
                        "out on one set of dice")  # fmt: skip
    d.add_argument("--min-equity", type=float, default=0.0,
                   help="with --rollout-trials or --race-trials: leave out the positions "
                        "whose cubeless equity by the 0-ply search is below this in size "
                        "(default %(default)s: none)")  # fmt: skip
    d.add_argument("--only", default="",
                   help="every position with contact of these kinds instead of a sample "
                        f"({', '.join(ONLY)}; comma-separated), valued by the search or "
                        "with --rollout-trials (default: a sample of all)")  # fmt: skip
    f = sub.add_parser("fit", help="fit the net to the data")
    f.add_argument("--model", required=True,
                   help="the model (.npz) whose net the fit starts from (its pruning net "
                        "is kept as it is)")  # fmt: skip
    f.add_argument("--data", required=True, type=Path, nargs="+",
                   help="one or more folders of chunks made by data")  # fmt: skip
    f.add_argument("--out", required=True, type=Path,
                   help="the fitted model's file (.npz), written at the end")  # fmt: skip
    f.add_argument("--epochs", type=int, default=4,
                   help="passes over the data (default %(default)s)")  # fmt: skip
    f.add_argument("--lr", type=float, default=1e-4,
                   help="Adam's learning rate (default %(default)s)")  # fmt: skip
    f.add_argument("--seed", type=int, default=1,
                   help="the seed of the chunks held out, the minibatches' order and a "
                        "widening's new weights (default %(default)s)")  # fmt: skip
    f.add_argument("--hidden", type=int, default=None,
                   help="first widen the nets to this many hidden units (default: the "
                        "model's)")  # fmt: skip
    f.add_argument("--lr-end", type=float, default=None,
                   help="the learning rate falls to this along a cosine (default: --lr "
                        "throughout)")  # fmt: skip
    f.add_argument("--rank-weight", type=float, default=0.0,
                   help="add this weight times the ranking loss of the candidates sets' "
                        "groups (the centred equities of one roll's plays; default "
                        "%(default)s: off)")  # fmt: skip
    f.add_argument("--race", action="store_true",
                   help="fit a race net of its own on the positions without contact "
                        "(default: the contact net)")  # fmt: skip
    return ap


class OtherData(TrainingError):
    """A data folder holding chunks of other settings, or more than asked for: the
    command line's advice (`cli`) is added where distill's own command says it (a recipe
    step, which has no --out of its own, says its own: doublet.training.recipe)."""

    def __init__(self, what: str, cli: str) -> None:
        super().__init__(what)
        self.cli = cli


def main(argv: Sequence[str] | None = None, raising: tuple[type[BaseException], ...] = ()
         ) -> int:  # fmt: skip
    """The command; errors of the types in `raising` are raised, not printed (a caller
    that words them: the recipe's data step, OtherData)."""
    ap = build_parser()
    args = ap.parse_args(argv)
    args.command = command_line("python -m doublet.training.distill", argv)
    try:
        return _run(args)
    except raising:
        raise
    except OtherData as e:
        print(f"distill: error: {e}: {e.cli}", file=sys.stderr)
        return 2
    except DoubletError as e:  # a refused argument, data or model (TrainingError, ModelError)
        print(f"distill: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a read-only or full --out: the chunks written so far are whole
        print(f"distill: error: {os_error_text(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        what = ("the chunks made so far are kept: run the same command again to go on"
                if args.cmd == "data" else "nothing was written")  # fmt: skip
        print(f"{stop_word(e)}; {what}",
              file=sys.stderr)  # fmt: skip
        return interrupt_status(e)


def _read_info(path: Path) -> dict[str, Any]:
    """A data folder's info.json (how its chunks were made), or TrainingError in words."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else "not whole JSON"
        raise TrainingError(f"{str(path)!r} cannot be read ({why}): it records how the "
                         "chunks beside it were made; put it back, or make the data again "
                         "in another folder") from None  # fmt: skip
    if not isinstance(doc, dict):
        raise TrainingError(f"{str(path)!r} is not a data folder's record (a JSON object)")
    return doc


def _check_args(args: argparse.Namespace) -> None:
    """Each number in range and --out writable in principle: TrainingError (one line)
    before anything is written or trained."""
    bad: list[str] = []
    if args.cmd == "data":
        if not 0 <= args.ply <= MAX_PLY:
            bad.append(f"--ply must be 0..{MAX_PLY}, got {args.ply}")
        if args.workers < 1:
            bad.append(f"--workers must be 1 or more, got {args.workers}")
        if args.chunks < 1:
            bad.append(f"--chunks must be 1 or more, got {args.chunks}")
        if args.seed < 0:
            bad.append(f"--seed must be 0 or more, got {args.seed}")
        for name in ("race_trials", "rollout_trials", "candidates"):
            if getattr(args, name) < 0:
                bad.append(f"--{name.replace('_', '-')} must be 0 (off) or more, got "
                           f"{getattr(args, name)}")  # fmt: skip
        if args.out.exists() and not args.out.is_dir():
            bad.append(f"--out {str(args.out)!r} is a file, not a folder for the chunks")
    else:
        if args.epochs < 1:
            bad.append(f"--epochs must be 1 or more, got {args.epochs}")
        if not args.rank_weight >= 0:
            bad.append(f"--rank-weight must be 0 (off) or more, got {args.rank_weight}")
        for name, lr in (("--lr", args.lr), ("--lr-end", args.lr_end)):
            if lr is not None and not lr > 0:
                bad.append(f"{name} must be above 0, got {lr}")
        if args.lr_end is not None and args.lr > 0 and args.lr_end > args.lr:
            bad.append(f"--lr-end {args.lr_end:g} is above --lr {args.lr:g}: the rate falls "
                       "from --lr to --lr-end")  # fmt: skip
        if args.seed < 0:
            bad.append(f"--seed must be 0 or more, got {args.seed}")
        if args.out.is_dir():
            bad.append(f"--out {str(args.out)!r} is a folder: give the model file's path")
        elif (why := file_path_error(args.out)) is not None:  # said before the fit
            bad.append(f"--out {str(args.out)!r} cannot be written: {why}")
    if bad:
        raise TrainingError("; ".join(bad))


def _run(args: argparse.Namespace) -> int:
    _check_args(args)
    if args.cmd == "data":
        load_model(args.model)  # a clear error here rather than in every worker
        n = make_data(args.model, args.out, args.chunks, args.ply, args.seed, args.workers,
                      args.race_trials, args.rollout_trials, args.epsilon,
                      args.candidates, args.ray, args.min_equity,
                      tuple(k.strip() for k in args.only.split(",") if k.strip()),
                      args.rollout_ply)  # fmt: skip
        how = (f"by race rollouts ({args.race_trials} trials)" if args.race_trials else
               f"by rollouts ({args.rollout_trials} trials"
               + (f", {args.rollout_ply} ply)" if args.rollout_ply >= 0 else ")")
               if args.rollout_trials else
               f"at {args.ply} ply")  # fmt: skip
        print(f"{n:,} positions evaluated {how} into {args.out}")
        return 0
    if importlib.util.find_spec("torch") is None:  # one line, not a traceback
        raise TrainingError(NEEDS_TORCH)
    model = load_model(args.model)
    for d in args.data:  # data of the model's variant only (sets made before session 23
        info = Path(d) / "info.json"  # do not record it: they are standard)
        made = _read_info(info).get("variant", STANDARD) if info.exists() else None
        if made is not None and made != model.variant:
            raise TrainingError(f"{d} holds positions of variant {made}, and "
                             f"{args.model} is a model of variant {model.variant}")  # fmt: skip
    model, _ = fit(model, args.data, args.epochs, args.lr, args.seed, race=args.race,
                   hidden=args.hidden, lr_end=args.lr_end, rank_weight=args.rank_weight,
                   command=args.command)  # fmt: skip
    try:
        save_model(args.out, model)
    except OSError as e:
        raise TrainingError(f"cannot write {str(args.out)!r}: "
                         f"{write_error(args.out, e)}") from None  # fmt: skip
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    with sigterm_interrupts():  # SIGTERM (a scheduler) stops it as Ctrl-C does
        sys.exit(main())
