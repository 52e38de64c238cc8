"""The training run: self-play in worker processes, TD(lambda) in this one, checkpoints.

    python -m doublet.training --config td-h80 --out runs/h80            # start
    python -m doublet.training --config td-h80 --out runs/h80 --resume   # go on after a stop

Schedule. Games are numbered 0, 1, ... and played in blocks of ``cfg.block`` games; block
k is played with the weights learned after block k - ``cfg.lag`` (the initial weights
for k < lag), and the learner learns the blocks in order, games in index order, one step
per ``cfg.games_per_step`` games (doublet.training.td). Game i's dice come from (seed, i). So the
weights after any number of games depend on nothing but the config: not on the number
of worker processes, their timing, or stops and resumes in between. With lag 2 the
workers always have the next block to play while the learner learns the last one.

Processes. ``cfg.workers`` spawn-started processes (doublet.training.workers, no torch) play the
games with the kernels of doublet.nn.eval; the main process learns (torch, one thread),
writes checkpoints, and hands strength checks (doublet.games.duplicate against pubeval, duplicate
dice, the same dice seed for every check so that the curve's points compare) to the same
pool. A config's workers=0 runs everything in the main process, with the same results
(the tests' tiny config does; --workers takes 1 or more).

Files in --out: checkpoint.pt (doublet.training.checkpoint, every ``cfg.checkpoint_every`` games,
at the end and on Ctrl-C/SIGTERM), curve.csv and curve.png (one row/point per strength
check), run.lock while it trains, and at the end the exported model.npz (doublet.nn.eval's
format, or --export PATH: never one of the run's own files) with a model card model.md
beside it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from doublet.core.board import VARIANT_NAMES
from doublet.core.errors import DoubletError, TrainingError, shown
from doublet.core.files import (
    atomic_write,
    file_path_error,
    held_lock,
    remove_temps,
    write_error,
)
from doublet.core.signals import Terminated, interrupt_status, sigterm_interrupts, stop_word
from doublet.nn.encode import ENCODER_VERSION
from doublet.nn.eval import Model, Net, digest, load_model, save_model, with_step
from doublet.training import checkpoint, configs, workers
from doublet.training.arena import Strength, command, strength
from doublet.training.configs import Config
from doublet.training.model import TDNet, has_own_race_net
from doublet.training.progress import Progress, command_log
from doublet.training.selfplay import Trajectory
from doublet.training.td import Learner
from doublet.training.usage import build_parser

CURVE_FIELDS = (
    "games",
    "ppg",
    "se",
    "win_rate",
    "gammon_rate",
    "gammon_rate_against",
    "check_games",
    "seed",
    "train_seconds",
    "loss",
    "plies",
    "stopped",
)
CURVE_CSV, CURVE_PNG = "curve.csv", "curve.png"
LOCK = "run.lock"  # held while a run trains (doublet.core.files.held_lock)
# What a run writes in --out besides its export: an --export there would destroy it.
RUN_FILES = (checkpoint.FILENAME, CURVE_CSV, CURVE_PNG, LOCK)
GOAL_PPG = 0.60  # the goal for the shipped model against pubeval, at 0 ply
FINAL_SEED_OFFSET = 1_000_003  # the export's strength uses other dice than the curve


def final_seed(cfg: Config) -> int:
    return cfg.seed + FINAL_SEED_OFFSET


# --------------------------------------------------------------------------------------
# Where the games are played: worker processes, or inline
# --------------------------------------------------------------------------------------


class _Done:
    """A finished inline task, with AsyncResult's two methods."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def ready(self) -> bool:
        return True

    def wait(self, timeout: float) -> bool:
        return True

    def get(self) -> Any:
        return self.value


class _Inline:
    """workers=0: each task runs when submitted, in this process."""

    def __init__(self, variant: int, epsilon: float) -> None:
        from doublet.training.selfplay import SelfPlay

        self.player = SelfPlay(variant, epsilon)

    def play(self, contact: Net, race: Net, seed: int, first: int, count: int) -> Any:
        return _Done(
            [self.player.game(contact, race, seed, i) for i in range(first, first + count)]
        )

    def check(self, *args: Any) -> Any:
        return _Done(workers.check(*args))

    def close(self) -> None:
        pass

    def terminate(self) -> None:
        pass


# --------------------------------------------------------------------------------------
# The trainer
# --------------------------------------------------------------------------------------


class _Stop:
    """Ctrl-C / SIGTERM set a flag that the loop reads between blocks (so a checkpoint never
    holds half a block); a second signal interrupts at once."""

    def __init__(self) -> None:
        self.requested = False
        self.signum = signal.SIGINT  # the stop's signal: the exit status is 128 + it
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        self.requested = True
        self.signum = signum

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def widen(net: Net, hidden: int, rng: np.random.Generator) -> Net:
    """net with `hidden` hidden units and the same outputs: the added units' input weights
    are small random numbers (so they differ from each other), their output weights 0."""
    w1, b1, w2, b2 = net
    extra = hidden - w1.shape[1]
    if extra == 0:
        return net
    w1 = np.concatenate([w1, (rng.standard_normal((w1.shape[0], extra)) * 0.01)], axis=1)
    b1 = np.concatenate([b1, np.zeros(extra)])
    w2 = np.concatenate([w2, np.zeros((extra, w2.shape[1]))], axis=0)
    return (w1.astype(np.float32), b1.astype(np.float32), w2.astype(np.float32), b2)


class Trainer:
    """One run: the net, the learner, the schedule's state, the curve; see the module doc."""

    def __init__(
        self,
        cfg: Config,
        out: str | os.PathLike[str],
        *,
        progress: bool = True,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.cfg = cfg
        self.out = Path(out)
        self.progress = progress
        self.log = log or (lambda s: print(s, file=sys.stderr, flush=True))
        torch.manual_seed(cfg.seed)
        self.net = TDNet(cfg.hidden, race_net=cfg.race_net, seed=cfg.seed)
        # The model the run started from, as it was then: its lineage and games (the
        # exported model's history) and its weights' digest (a recipe's resume check).
        # Read once here and kept in the checkpoint: the file may be overwritten since.
        self.parent: dict[str, Any] | None = None
        if cfg.init:
            self._initialise(cfg.init)
        self.learner = Learner(self.net, cfg.lam, cfg.lr, cfg.optimizer, cfg.loss)
        self.games = 0  # games learned (a multiple of cfg.block)
        self.history: dict[int, tuple[Net, Net]] = {-1: self.net.to_engine()}
        self.pending: list[dict[str, Any]] = []  # strength checks handed out, not back yet
        self.curve: list[dict[str, Any]] = []
        self.train_seconds = 0.0
        self.loss_sum = 0.0
        self.loss_n = 0
        self.plies = 0  # rolls in the games since the last strength check
        self.stopped = 0  # games stopped at MAX_PLIES since then
        self.stop_status: int | None = None  # a stop: 128 + its signal (Ctrl-C 130, SIGTERM 143)
        self._warned_plot = False

    def _initialise(self, path: str) -> None:
        """Start from an exported model's weights. A config with more hidden units widens
        the model's nets: the new units get small random input weights and zero output
        weights, so the net starts with exactly the model's outputs."""
        model = load_model(path)
        hidden = int(model.contact[1].shape[0])
        if hidden > self.cfg.hidden:
            raise DoubletError(
                f"{path}: the model has {hidden} hidden units, more than the config's "
                f"{self.cfg.hidden}"
            )
        if has_own_race_net(model) and not self.cfg.race_net:
            raise DoubletError(
                f"{path}: the model has a race net of its own, which config "
                f"{self.cfg.name!r} (race_net=False) would drop; use a config with race_net"
            )
        rng = np.random.default_rng(self.cfg.seed)
        self.net.from_engine(*(widen(n, self.cfg.hidden, rng) for n in (model.contact, model.race)))
        meta = model.meta
        self.parent = {"lineage": meta.get("lineage", []), "games": int(meta.get("games", 0)),
                       "digest": digest(model)}  # fmt: skip

    # ---- state ----------------------------------------------------------------------

    @property
    def checkpoint_path(self) -> Path:
        return self.out / checkpoint.FILENAME

    def state(self) -> dict[str, Any]:
        def nets(cr: tuple[Net, Net]) -> list[list[torch.Tensor]]:
            return [checkpoint.net_to_tensors(cr[0]), checkpoint.net_to_tensors(cr[1])]

        return {
            "config": self.cfg.to_dict(),
            "games": self.games,
            "net": self.net.state_dict(),
            "optimizer": self.learner.opt.state_dict(),
            "history": {int(k): nets(v) for k, v in self.history.items()},
            "pending": [
                {
                    **{k: v for k, v in p.items() if k not in ("nets", "handle")},
                    "nets": nets(p["nets"]),
                }
                for p in self.pending
            ],
            "curve": list(self.curve),
            "torch_rng": torch.get_rng_state(),
            "train_seconds": self.train_seconds,
            "loss": [self.loss_sum, self.loss_n, self.plies, self.stopped],
            "parent": json.dumps(self.parent),
        }

    @classmethod
    def from_checkpoint(
        cls, path: str | os.PathLike[str], out: str | os.PathLike[str], **kwargs: Any
    ) -> Trainer:
        doc = checkpoint.load(path)
        try:
            cfg = Config.from_dict(doc["config"])
            t = cls(cfg.replace(init=""), out, **kwargs)  # the checkpoint holds the weights
            t.cfg = cfg
            t.load_state(doc)
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError,
                ArithmeticError) as e:  # fmt: skip
            # a checkpoint that reads as one but does not hold this trainer's state (a part
            # missing, a net of other shapes, an unknown variant)
            why = f"{type(e).__name__}: {shown(str(e).splitlines()[0] if str(e) else '', 120)}"
            raise checkpoint.CheckpointError(
                f"checkpoint {str(path)!r} does not hold a run this trainer can go on with "
                f"({why}): start a new run (another --out), or resume from a good copy"
            ) from None
        return t

    def load_state(self, doc: dict[str, Any]) -> None:
        def nets(v: list[list[torch.Tensor]]) -> tuple[Net, Net]:
            return checkpoint.tensors_to_net(v[0]), checkpoint.tensors_to_net(v[1])

        self.net.load_state_dict(doc["net"])
        self.learner.opt.load_state_dict(doc["optimizer"])
        self.games = int(doc["games"])
        self.history = {int(k): nets(v) for k, v in doc["history"].items()}
        self.pending = [{**p, "nets": nets(p["nets"])} for p in doc["pending"]]
        self.curve = list(doc["curve"])
        torch.set_rng_state(doc["torch_rng"])
        self.train_seconds = float(doc["train_seconds"])
        self.loss_sum, self.loss_n = float(doc["loss"][0]), int(doc["loss"][1])
        self.plies, self.stopped = int(doc["loss"][2]), int(doc["loss"][3])
        # (checkpoints before session 44 have none: the init file is read at export)
        self.parent = json.loads(doc["parent"]) if "parent" in doc else None

    def save_checkpoint(self) -> None:
        checkpoint.save(self.checkpoint_path, self.state())
        self.write_curve()

    # ---- the loop -------------------------------------------------------------------

    def weights_for(self, block: int) -> tuple[Net, Net]:
        return self.history[max(block - self.cfg.lag, -1)]

    def _submit_check(self, pool: Any) -> None:
        entry = {
            "games": self.games,
            "nets": self.net.to_engine(),
            "train_seconds": round(self.train_seconds, 3),
            "loss": (self.loss_sum / self.loss_n) if self.loss_n else float("nan"),
            "plies": (self.plies / self.loss_n) if self.loss_n else float("nan"),
            "stopped": self.stopped,
        }
        self.loss_sum, self.loss_n, self.plies, self.stopped = 0.0, 0, 0, 0
        self.pending.append(entry)
        self._hand_out(pool, entry)

    def _hand_out(self, pool: Any, entry: dict[str, Any]) -> None:
        c, r = entry["nets"]
        meta = {
            "encoder_version": ENCODER_VERSION,
            "hidden": self.cfg.hidden,
            "variant": self.cfg.variant,
            "games": entry["games"],
        }
        entry["handle"] = pool.check(
            c, r, meta, self.cfg.check_games, self.cfg.seed, self.cfg.variant
        )

    def _collect(self) -> Strength | None:
        """Record the strength checks that have finished, oldest first; the latest."""
        latest = None
        while self.pending and self.pending[0]["handle"].ready():
            entry = self.pending.pop(0)
            s: Strength = entry["handle"].get()
            row = {
                "games": entry["games"],
                "ppg": round(s.ppg, 5),
                "se": round(s.se, 5),
                "win_rate": round(s.win_rate, 5),
                "gammon_rate": round(s.gammon_rate, 5),
                "gammon_rate_against": round(s.gammon_rate_against, 5),
                "check_games": s.games,
                "seed": s.seed,
                "train_seconds": entry["train_seconds"],
                "loss": _num(entry["loss"], 6),
                "plies": _num(entry["plies"], 1),
                "stopped": entry["stopped"],
            }
            self.curve.append(row)
            latest = s
            self.write_curve()
        return latest

    def _learn(self, games: list[Trajectory]) -> None:
        k = self.cfg.games_per_step
        self.plies += sum(len(g) for g in games)
        self.stopped += sum(g.result == 0 for g in games)
        for i in range(0, len(games), k):
            m = self.learner.step(games[i : i + k], self.games + i)
            self.loss_sum += m["loss"] * len(games[i : i + k])
            self.loss_n += len(games[i : i + k])

    def run(self, total: int) -> int:
        """Train until `total` games are learned (rounded up to whole blocks) or a stop is
        asked for. Returns the games learned."""
        cfg = self.cfg
        b = cfg.block
        last = whole_blocks(total, b) // b
        if last * b != total:
            self.log(f"training to {last * b} games (whole blocks of {b})")
        torch.set_num_threads(1)
        pool: Any = (
            workers.Pool(cfg.workers, cfg.variant, cfg.epsilon)
            if cfg.workers > 0
            else _Inline(cfg.variant, cfg.epsilon)
        )
        bar = None
        ok = False
        try:
            with _Stop() as stop:
                for entry in self.pending:  # checks that were running at the last checkpoint
                    self._hand_out(pool, entry)
                if self.games == 0 and not self.curve and not self.pending and cfg.check_every:
                    self._submit_check(pool)
                if self.progress:  # a bar on a terminal, else a line now and then
                    bar = Progress(cfg.name, last * b, "game", self.log, initial=self.games)
                inflight: dict[int, list[Any]] = {}
                learned = self.games // b
                nxt = learned
                t0 = time.perf_counter()
                while learned < last and not stop.requested:
                    while nxt < last and nxt < learned + cfg.lag:
                        c, r = self.weights_for(nxt)
                        per = max(1, math.ceil(b / max(1, cfg.workers)))
                        inflight[nxt] = [
                            pool.play(c, r, cfg.seed, g, min(per, (nxt + 1) * b - g))
                            for g in range(nxt * b, (nxt + 1) * b, per)
                        ]
                        nxt += 1
                    try:
                        games = [t for h in inflight.pop(learned) for t in h.get()]
                    except workers.WorkerError as e:
                        self.save_checkpoint()  # between blocks: the state is whole
                        raise TrainingError(
                            f"{e}; checkpoint written at {self.games} games, go on with --resume"
                        ) from None
                    self._learn(games)
                    self.history[learned] = self.net.to_engine()
                    learned += 1
                    before, self.games = self.games, learned * b
                    for k in [k for k in self.history if k < max(learned - cfg.lag, -1)]:
                        del self.history[k]
                    now = time.perf_counter()
                    self.train_seconds += now - t0
                    t0 = now
                    if (
                        cfg.check_every
                        and self.games // cfg.check_every > before // cfg.check_every
                    ):
                        self._submit_check(pool)
                    s = self._collect()
                    if bar is not None:
                        note = None
                        if s is not None:
                            note = f"ppg {s.ppg:+.3f}±{s.se:.3f} @{self.curve[-1]['games']}"
                        bar.update(self.games, note)
                    if (
                        cfg.checkpoint_every
                        and self.games // cfg.checkpoint_every > before // cfg.checkpoint_every
                        and self.games < last * b
                    ):
                        self.save_checkpoint()
                if stop.requested:
                    self.stop_status = 128 + stop.signum
                    self.save_checkpoint()
                    if bar is not None:  # the line after the bar, not glued to it
                        bar.close()
                    self.log(
                        f"stopped at {self.games} games; checkpoint written to "
                        f"{self.checkpoint_path} (go on with --resume)"
                    )
                else:
                    if (
                        cfg.check_every
                        and (not self.curve or self.curve[-1]["games"] != self.games)
                        and not any(p["games"] == self.games for p in self.pending)
                    ):
                        self._submit_check(pool)
                    # The training is whole here: saved before the last checks are waited
                    # for, so that a worker's death or a stop while they run loses nothing
                    # (a resume hands the pending checks out again).
                    self.save_checkpoint()
                    try:
                        while self.pending and not stop.requested:
                            if self.pending[0]["handle"].wait(0.2):
                                self._collect()
                    except workers.WorkerError as e:
                        raise TrainingError(
                            f"{e}; checkpoint written at {self.games} games, go on with --resume"
                        ) from None
                    if stop.requested:
                        self.stop_status = 128 + stop.signum
                        if bar is not None:
                            bar.close()
                        self.log(
                            f"stopped while the last strength check ran, at {self.games} "
                            f"games; checkpoint written to {self.checkpoint_path} (go on with "
                            "--resume: it runs the check again)"
                        )
                    self.save_checkpoint()
            ok = True
        finally:
            if bar is not None:
                bar.close()
            if ok and self.stop_status is None:
                pool.close()
            else:
                pool.terminate()
        return self.games

    # ---- curve and export -----------------------------------------------------------

    def write_curve(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=CURVE_FIELDS, lineterminator="\n")
        w.writeheader()
        for row in self.curve:
            w.writerow({k: row.get(k, "") for k in CURVE_FIELDS})
        atomic_write(self.out / CURVE_CSV, buf.getvalue().encode())
        if self.curve and not plot_curve(
            self.curve, self.out / CURVE_PNG, f"{self.cfg.name} vs pubeval"
        ):
            if not self._warned_plot:
                self.log("matplotlib is not installed: curve.png is not drawn (curve.csv is)")
            self._warned_plot = True

    def model(self) -> Model:
        """The net as an engine model. Its meta's lineage is the lineage of the model the
        run started from (cfg.init), then this run; "games" counts the self-play games of
        the whole lineage."""
        cfg = self.cfg
        parent: dict[str, Any] = self.parent or {}
        if cfg.init and self.parent is None:  # a checkpoint from before session 44
            try:
                parent = load_model(cfg.init).meta
            except DoubletError:  # moved away since: the step still names it
                parent = {}
        before = int(parent.get("games", 0))
        meta = with_step(
            {"lineage": parent.get("lineage", [])},
            "td-train",
            command=_run_command(cfg, self.out),
            config=cfg.to_dict(),
            init=cfg.init,
            games=self.games,
            train_seconds=round(self.train_seconds, 1),
        )
        meta.update({
            "games": before + self.games,
            "config_name": cfg.name,
            "config": cfg.to_dict(),
            "race_net": cfg.race_net,
            "train_seconds": round(self.train_seconds, 1),
        })  # fmt: skip
        return self.net.to_model(meta, variant=cfg.variant)

    def export(self, path: str | os.PathLike[str], games: int | None = None) -> Strength:
        """Save the net to path (doublet.nn.eval's .npz) with its strength against pubeval in
        the meta, measured on the saved file, and a model card path.with_suffix('.md')."""
        path = Path(path)
        cfg = self.cfg
        n = cfg.final_check_games if games is None else games
        seed = final_seed(cfg)
        save_model(path, self.model())
        s = strength(load_model(path), n, seed, cfg.variant)
        cmd = command(str(path), n, seed, cfg.variant)
        model = self.model()
        model.meta["strength"] = {**s.to_dict(), "command": cmd}
        save_model(path, model)
        atomic_write(path.with_suffix(".md"), model_card(path, model, s, cmd, self).encode())
        return s


def whole_blocks(games: int, block: int) -> int:
    """The games a run of `games` learns: rounded up to whole blocks of `block`."""
    return -(-games // block) * block


def exported(path: Path, games: Any) -> bool:
    """Whether `path` holds this run's export of `games` games (its meta's count, those
    of the model it started from included), whole: the model with its
    games and strength in its meta (Trainer.export writes the strength last but the
    card), and its card written after it. A kill during an export that replaced an
    earlier one left the new model without its strength, or beside the old card: not
    exported, and a resume exports it again."""
    card = path.with_suffix(".md")
    try:
        meta = load_model(path).meta
        fresh = card.stat().st_mtime_ns >= path.stat().st_mtime_ns
    except (OSError, DoubletError, ValueError, KeyError):
        return False
    return fresh and meta.get("games") == games and "strength" in meta


def _run_command(cfg: Any, out: Path) -> str:
    """The command that trains this run again: its config, and each setting that the run
    changed from the config's own (games, seed, the model it started from; the workers
    change the speed, never the result)."""
    cmd = f"python -m doublet.training --config {cfg.name} --out {out}"
    try:
        base = configs.get(cfg.name)
    except KeyError:  # a config no longer named: give every setting
        base = None
    for key in ("games", "seed", "init"):
        value = getattr(cfg, key)
        if value is not None and (base is None or value != getattr(base, key)):
            cmd += f" --{key} {shlex.quote(str(value))}"
    return cmd


def model_card(path: Path, model: Model, s: Strength, cmd: str, t: Trainer) -> str:
    cfg = t.cfg
    rows = "\n".join(f"| {k} | {v} |" for k, v in cfg.to_dict().items())
    last = t.curve[-1] if t.curve else None
    curve = (
        (
            f"Last strength check during training: {last['ppg']:+.3f} ppg (se {last['se']:.3f}) "
            f"after {last['games']} games, {last['check_games']} games with seed {last['seed']} "
            "(curve.csv in the run directory)."
        )
        if last
        else ""
    )
    return f"""# {path.name}

A 0-ply backgammon net for Doublet ({VARIANT_NAMES[cfg.variant]}), trained by self-play
TD(lambda) (training/td.py).

- encoder version: {ENCODER_VERSION}
- games of self-play: {t.games}
- training time: {t.train_seconds / 3600:.2f} h
- config: `{cfg.name}` (below)
- nets: {"a contact net and a race net" if cfg.race_net else "one net"}, {cfg.hidden} hidden units

## Strength

{s.ppg:+.3f} points per game (standard error {s.se:.3f}) against pubeval over {s.games}
cubeless money games with duplicate dice (seed {s.seed}); the net won {s.win_rate:.1%} of
the games, {s.gammon_rate:.1%} with a gammon or backgammon ({s.gammon_rate_against:.1%}
against). Measured with:

    {cmd}

{curve}

## Config

| field | value |
| --- | --- |
{rows}
"""


def plot_curve(curve: list[dict[str, Any]], path: Path, title: str) -> bool:
    """Draw the strength curve to path (PNG); False when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = np.array([float(r["games"]) for r in curve])
    p = np.array([float(r["ppg"]) for r in curve])
    se = np.array([float(r["se"]) if r["se"] == r["se"] else 0.0 for r in curve])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(g, p, yerr=2 * se, marker="o", ms=3, capsize=2, lw=1)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.axhline(GOAL_PPG, color="green", lw=0.8, ls="--", label=f"goal {GOAL_PPG:+.2f}")
    ax.legend(loc="lower right")
    ax.set_xlabel("self-play games")
    ax.set_ylabel("points per game vs pubeval (±2 se)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
    return True


def _export_clash(path: Path, out: Path) -> str | None:
    """Why exporting the model to `path` (and its card to path.with_suffix(".md")) would
    overwrite a file the run writes in `out` (RUN_FILES) or the model itself, or None.
    Paths are compared resolved (an export writes through a symbolic link) and, where
    both exist, as files (a hard link)."""
    card = path.with_suffix(".md")
    if card.resolve() == path.resolve():
        return "ends in .md, and the model card would be written over the model"
    for name in RUN_FILES:
        mine = out / name
        for written, what in ((path, "model"), (card, f"model card {str(card)!r}")):
            same = written.resolve() == mine.resolve()
            with contextlib.suppress(OSError):
                same = same or os.path.samefile(written, mine)
            if same:
                return (f"would write the {what} over the run's own {name} in "
                        f"{str(out)!r}")  # fmt: skip
    return None


def _num(x: float, digits: int) -> float | str:
    return round(x, digits) if x == x else ""


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with sigterm_interrupts():  # SIGTERM outside the loop's own stop (_Stop): as Ctrl-C
        return _main(args)


def _main(args: Any) -> int:
    out = Path(args.out)

    log = command_log("train")
    lock = contextlib.ExitStack()  # the run's folder, held while it trains (below)
    try:
        if args.games is not None and args.games < 1:
            raise DoubletError(f"--games must be at least 1, got {args.games}")
        if args.seed is not None and not 0 <= args.seed < 2**63:
            raise DoubletError(f"--seed must be 0 to 2**63 - 1, got {args.seed}")
        if args.workers is not None and args.workers < 1:
            raise DoubletError(f"--workers must be 1 or more, got {args.workers}")
        if out.exists() and not out.is_dir():
            raise DoubletError(f"--out {str(out)!r} is a file, not a folder for the run")
        if args.resume and not (out / checkpoint.FILENAME).exists():
            raise DoubletError(f"--resume: no checkpoint in {str(out)!r}")
        if not args.resume and not args.config:
            raise DoubletError("--config NAME is needed to start a run")
        named = None  # a new run's config, known before its folder is made
        if not args.resume:
            try:
                named = configs.get(args.config)
            except KeyError as e:
                raise DoubletError(str(e.args[0])) from None
        path = Path(args.export) if args.export else out / "model.npz"
        if args.export and (args.export.endswith(("/", os.sep)) or path.is_dir()):
            raise DoubletError(f"--export {args.export!r} is a folder: give the model file's "
                               "path (its card is written beside it, PATH.md)")  # fmt: skip
        if args.export and (clash := _export_clash(path, out)) is not None:
            raise DoubletError(f"--export {args.export!r} {clash}: give the model another "
                               "path (the default is OUT/model.npz)")  # fmt: skip
        if args.export and (why := file_path_error(path)) is not None:  # before the training
            raise DoubletError(f"--export {args.export!r} cannot be written: {why}")
        if not args.resume and args.init is not None and not Path(args.init).is_file():
            raise DoubletError(f"--init {args.init!r}: no such model file")
        # Two runs in one folder would overwrite each other's checkpoint: the second is
        # refused while the first runs (a lock file, OUT/run.lock).
        # The folders this makes, removed again if the run cannot start (a bad --init)
        made = [p for p in (out.absolute(), *out.absolute().parents) if not p.exists()]
        out.mkdir(parents=True, exist_ok=True)
        lock.enter_context(held_lock(out / LOCK, f"another training run is using "
                                     f"{str(out)!r}: wait for it to end, or give another "
                                     "--out"))  # fmt: skip
        remove_temps(out)  # a kill -9 in the middle of a write leaves its temporary file
        ck = out / checkpoint.FILENAME
        if args.resume:
            t = Trainer.from_checkpoint(ck, out, progress=not args.no_progress, log=log)
            if args.config and args.config != t.cfg.name:
                raise DoubletError(
                    f"{str(out)!r} holds a run of config {t.cfg.name!r}, not {args.config!r}"
                )
            if args.seed is not None and args.seed != t.cfg.seed:
                raise DoubletError(
                    f"{str(out)!r} was started with seed {t.cfg.seed}; a resumed run keeps its seed"
                )
            if args.init is not None:
                raise DoubletError("--init starts a run: a resumed run goes on from its checkpoint")
            if args.workers is not None:
                t.cfg = t.cfg.replace(workers=args.workers)
            log(f"resuming {t.cfg.name} at {t.games} games")
        else:
            if ck.exists():
                raise DoubletError(
                    f"{str(out)!r} already holds a run: pass --resume to go on "
                    "with it, or choose another --out"
                )
            assert named is not None
            cfg = named
            changes: dict[str, Any] = {}
            if args.seed is not None:
                changes["seed"] = args.seed
            if args.workers is not None:
                changes["workers"] = args.workers
            if args.games is not None:
                changes["games"] = args.games
            if args.init is not None:  # a file (checked above, before --out was made)
                changes["init"] = str(Path(args.init).resolve())
            try:
                t = Trainer(cfg.replace(**changes), out, progress=not args.no_progress, log=log)
            except BaseException:  # a refusal, Ctrl-C: the folders as they were before
                lock.close()
                with contextlib.suppress(OSError):  # (rmdir: only empty ones, innermost first)
                    for folder in made:
                        folder.rmdir()
                raise
        # Without --games, the run's own total; games are learned in whole blocks, so a
        # total that is not a multiple of the block may have been passed already.
        total = args.games if args.games is not None else max(t.cfg.games, t.games)
        if args.resume and t.games > total and t.games == whole_blocks(total, t.cfg.block):
            total = t.games  # a total learned in whole blocks (1001 games: 1008 learned)
        if args.resume and total < t.games:
            raise DoubletError(
                f"{str(out)!r} has learned {t.games} games already: --games {total} would "
                f"train none (give {t.games} or more, the run's total, not the games to add)"
            )  # fmt: skip
        if args.resume and total == t.games:
            # The run learned all its games: a stop or a failure came at its last checks or
            # its export. run() finishes the checks (it trains nothing); then the export,
            # unless it is there already.
            if not args.no_export and exported(path, t.model().meta.get("games")):
                log(f"{t.cfg.name} has learned its {t.games} games and is exported to {path}: "
                    "nothing to do (--export elsewhere to export it again)")  # fmt: skip
                return 0
            log(f"{t.cfg.name} has learned its {t.games} games: nothing left to train")
        if args.games is not None and args.resume:
            t.cfg = t.cfg.replace(games=args.games)
        t.run(total)
        if t.stop_status is not None:
            return t.stop_status
        if not args.no_export:
            try:
                s = t.export(path)
            except OSError as e:
                raise DoubletError(f"cannot export to {str(path)!r}: {write_error(path, e)}; "
                                   "the run is kept: --resume (with another --export) exports "
                                   "it") from None  # fmt: skip
            log(f"exported {path} ({t.games} games): {s.line()}")
        else:  # (a review: it ended without a word)
            log(f"{t.cfg.name}: {t.games} games learned; the checkpoint is "
                f"{out / checkpoint.FILENAME} (not exported: --resume without --no-export "
                "exports it)")  # fmt: skip
        return 0
    except DoubletError as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # --out where no folder can be made
        print(f"train: error: cannot write the run to {str(out)!r}: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # outside the loop (which stops between blocks)
        kept = (out / checkpoint.FILENAME).exists()
        print(f"train: {stop_word(e)}"
              + ("; the checkpoint is kept: --resume goes on from it (and exports)" if kept
                 else " before the first checkpoint: nothing is kept"),
              file=sys.stderr)  # fmt: skip
        return interrupt_status(e)
    finally:
        lock.close()


__all__ = ["Trainer", "build_parser", "main", "model_card", "plot_curve"]
