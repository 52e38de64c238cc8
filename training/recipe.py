"""A model's whole recipe as one resumable pipeline (issue 24):

    doublet train --recipe recipes/standard.toml --out runs/standard [--dry-run]
    python -m doublet.training --recipe FILE --out DIR

A recipe is a TOML file of steps, run in order, each in its own folder OUT/NAME:

    [[step]]
    name = "td"                  # the folder, and how later steps refer to its result
    kind = "td"                  # self-play TD(lambda): doublet.training.train
    config = "td-h80-v2-long"    # games, seed, workers: optional overrides; init: a step
                                 # or a model to start from instead of the config's

    [[step]]
    name = "prune"
    kind = "prune"               # a pruning net for a model: doublet.training.prune
    model = "td"                 # a step's model, or a path (relative to the recipe)
    games = 3000                 # hidden, epochs, seed

    [[step]]
    name = "data"
    kind = "data"                # positions and their values: distill data
    model = "prune"              # chunks, ply, seed, epsilon, candidates, race_trials,
    chunks = 400                 # rollout_trials, rollout_ply, min_equity, only (a list:
                                 # ["crashed", "bar"]), workers

    [[step]]
    name = "fit"
    kind = "fit"                 # the net fitted to data: distill fit
    model = "prune"
    data = ["data"]              # steps of kind data (or folders)
    epochs = 4                   # lr, lr_end, hidden, race, seed, rank_weight

    [[step]]
    name = "gate"
    kind = "gate"                # the candidate against the model it should replace
    model = "fit"
    against = "../models/doublet-standard.npz"
    games = 4000                 # head to head, duplicate dice, 0 ply; seed
    margin_se = 2.0              # pass: candidate's ppg > margin_se standard errors
    pubeval_games = 4000         # and against pubeval at least pubeval_min (optional)
    pubeval_min = 0.6
    judge = "../benchmarks/data/gnubg2_all_refset.jsonl.gz"   # and on the refset judge
    refset = "../tests/data/gnubg_refset.jsonl"               # (optional): a lower mean
    judge_ply = 2                                             # loss than `against`'s
    judge_margin = 0.0           # (mEq: the candidate's loss less the other's must be below)
    cube = "../tests/data/gnubg_cube0.jsonl"   # and on gnubg's cube decisions (optional):
    cube_ply = 2                 # a lower mean error a decision, double + take, than
    cube_margin = 0.0            # `against`'s (mEq, as judge_margin)

    [[step]]
    name = "onesided"
    kind = "onesided"            # the one-sided race net: doublet.training.onesided fit
    model = "fit"                # whose self-play gives the configs (default: shipped);
    configs = 60000              # games, epsilon, rounds, epochs, lr, hidden, seed

    [[step]]
    name = "export"
    kind = "export"              # the model, with the recipe's record beside it
    model = "fit"
    to = "final.npz"             # relative to OUT (or absolute); a gate must have passed

Each step's result is its folder: ``model.npz`` (td, prune, fit), the chunks (data),
``gate.json`` (gate), and ``done.json`` once it has finished, holding the step as it was
run and what it gave. Run again, the pipeline skips the steps that are done, goes on
with a step that was interrupted from the files it left (td from its checkpoint, to the
step's games, or only its export when it learned them all; data from its chunks; prune,
fit and gate start again: they are short) and refuses a step
whose settings changed after it was done (naming them; `workers` aside, which changes
only the speed), whose input steps were made again since, or whose input files (models,
judges, data given by path: their sha256 is recorded) hold something else now; remove
its folder to redo it and the steps after it. Every record is checked before any step
runs, and so are the gate's judge and cube files and the exports' paths (none may write
into a step's folder, over a file the recipe reads, or over another export's). A gate
that fails stops the pipeline there (exit 3), and is recorded as failed so that a rerun
stops there again; the export after it never runs. An export recorded done whose model
(or the record beside it) is missing, or is not the file it wrote, is exported again.
Every step writes atomically (doublet.core.files), so a kill loses at most the step in
progress.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doublet.core.board import STANDARD
from doublet.core.errors import DoubletError
from doublet.core.files import atomic_write, file_path_error, held_lock, os_error_text
from doublet.core.signals import Terminated, interrupt_status, sigterm_interrupts, stop_word
from doublet.training.progress import Progress, command_log

_DATA = (
    "model chunks ply seed epsilon candidates race_trials rollout_trials rollout_ply "
    "min_equity only workers"
)
_GATE = (
    "model against games seed margin_se pubeval_games pubeval_min judge refset judge_ply "
    "judge_margin cube cube_ply cube_margin"
)
KINDS: dict[str, set[str]] = {  # the keys each kind takes, besides name and kind
    "td": {"config", "games", "seed", "workers", "init"},
    "prune": {"model", "games", "hidden", "epochs", "seed"},
    "data": set(_DATA.split()),
    "fit": {"model", "data", "epochs", "lr", "lr_end", "hidden", "race", "seed", "rank_weight"},
    "gate": set(_GATE.split()),
    "export": {"model", "to"},
    "onesided": {
        "model",
        "games",
        "epsilon",
        "configs",
        "rounds",
        "epochs",
        "lr",
        "hidden",
        "seed",
    },
}
REQUIRED = {"td": {"config"}, "prune": {"model"}, "data": {"model"}, "fit": {"model", "data"},
            "gate": {"model", "against"}, "export": {"model", "to"}, "onesided": set()}  # fmt: skip
MODEL_KINDS = ("td", "prune", "fit")
DONE = "done.json"
ONESIDED = "onesided.npz"  # an onesided step's result (copy it to models/doublet-onesided.npz)


@dataclass(frozen=True)
class Step:
    name: str
    kind: str
    spec: dict[str, Any]  # the step's table as written, name and kind included

    def get(self, key: str, default: Any = None) -> Any:
        return self.spec.get(key, default)


def load(path: Path) -> list[Step]:
    """The recipe's steps, checked: DoubletError naming what is wrong."""
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as e:
        raise DoubletError(f"cannot read the recipe {str(path)!r}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise DoubletError(f"the recipe {str(path)!r} is not valid TOML: {e}") from None
    unknown = set(doc) - {"step", "description"}
    if unknown:
        raise DoubletError(f"the recipe has unknown tables {sorted(unknown)}: use [[step]]")
    raw = doc.get("step")
    if not isinstance(raw, list) or not raw:
        raise DoubletError("the recipe has no steps: each is a [[step]] table")
    steps: list[Step] = []
    seen: dict[str, Step] = {}
    base = path.resolve().parent  # the recipe's paths are relative to it
    for i, t in enumerate(raw, 1):
        if not isinstance(t, dict):  # step = [1, 2], not [[step]] tables
            raise DoubletError(f"step {i} is {t!r}: each step is a [[step]] table of keys")
        name, kind = t.get("name"), t.get("kind")
        where = f"step {i}" + (f" ({name!r})" if isinstance(name, str) else "")
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise DoubletError(f"{where}: 'name' is a folder name, got {name!r}")
        if name in seen:
            raise DoubletError(f"{where}: the name {name!r} is used twice")
        if kind not in KINDS:
            raise DoubletError(f"{where}: 'kind' is one of {', '.join(KINDS)}, got {kind!r}")
        keys = set(t) - {"name", "kind"}
        bad = keys - KINDS[kind]
        if bad:
            raise DoubletError(f"{where}: a {kind} step takes no {', '.join(sorted(bad))} "
                               f"(its keys: {', '.join(sorted(KINDS[kind]))})")  # fmt: skip
        if kind == "gate" and "pubeval_min" in keys and not t.get("pubeval_games"):
            raise DoubletError(f"{where}: pubeval_min needs pubeval_games (the games against "
                               "pubeval it is measured on)")  # fmt: skip
        if kind == "gate" and ("judge" in keys) != ("refset" in keys):
            raise DoubletError(f"{where}: judge and refset go together (the judge's values "
                               "and the refset's decisions)")  # fmt: skip
        missing = REQUIRED[kind] - keys
        if missing:
            raise DoubletError(f"{where}: a {kind} step needs {', '.join(sorted(missing))}")
        for key, value in t.items():
            if not _plain(value):
                raise DoubletError(f"{where}: {key} is a string, a finite number, true or "
                                   f"false, or a list of them, got {value!r}")  # fmt: skip
            why = _bad_value(kind, key, value)
            if why:  # found now, not when the step is reached (days in, for a real recipe)
                raise DoubletError(f"{where}: {key} {why}, got {value!r}")
        later = {u.get("name") for u in raw[i - 1 :]}
        refs = [(k, t.get(k)) for k in ("model", "against", "init", "judge", "refset", "cube")]
        if kind == "fit":
            data = t["data"] if isinstance(t["data"], list) else [t["data"]]
            if not data:
                raise DoubletError(f"{where}: data names no data (an empty list)")
            refs += [("data", d) for d in data]
        for key, ref in refs:
            if ref is None:
                continue
            if not isinstance(ref, str) or not ref:
                raise DoubletError(f"{where}: {key} is a step's name or a path, got {ref!r}")
            if ref in seen:
                what = "data" if key == "data" else "model"
                want = ("data",) if key == "data" else MODEL_KINDS
                if key in ("judge", "refset", "cube") or seen[ref].kind not in want:
                    raise DoubletError(f"{where}: {key} {ref!r} is a {seen[ref].kind} step, "
                                       f"which makes no {what}")  # fmt: skip
            elif ref in later:
                raise DoubletError(f"{where}: {key} {ref!r} is this step or a later one: a "
                                   "step uses what the steps before it made")  # fmt: skip
            elif not _under(base, ref).exists():
                raise DoubletError(f"{where}: {key} {ref!r} is neither an earlier step nor a "
                                   "file (paths are relative to the recipe)")  # fmt: skip
            elif why := _not_input(key, _under(base, ref)):
                raise DoubletError(f"{where}: {key} {ref!r} {why}")  # as a step's, above
        try:  # a gate's data files (files only: refused as steps above)
            if kind == "gate" and t.get("judge") is not None:
                read_judge(_under(base, t["judge"]), _under(base, t["refset"]))
            if kind == "gate" and t.get("cube") is not None:
                read_cube_decisions(_under(base, t["cube"]))
        except DoubletError as e:
            raise DoubletError(f"{where}: {e}") from None
        step = Step(name, kind, dict(t))
        steps.append(step)
        seen[name] = step
    return steps


# The values each key takes (besides the step and file references, checked above).
_WHOLE = {"seed", "ply", "judge_ply", "cube_ply", "candidates", "race_trials",
          "rollout_trials", "pubeval_games"}  # fmt: skip
_COUNT = {"games", "chunks", "epochs", "hidden", "rounds", "configs", "workers"}  # 1 or more
_DEPTH = {"ply", "judge_ply", "cube_ply"}  # a search's depth: 0..MAX_PLY
_REAL = {"lr", "lr_end", "epsilon", "margin_se", "pubeval_min", "judge_margin", "cube_margin",
         "min_equity", "rank_weight"}  # fmt: skip


def _bad_value(kind: str, key: str, value: Any) -> str | None:
    """What is wrong with a step's value (None: nothing)."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    if key in _WHOLE and not (whole and value >= 0):
        return "is a whole number, 0 or more"
    if key == "seed" and value >= 2**63:  # as the commands' --seed
        return "is at most 2**63 - 1"
    if key in _COUNT and not (whole and value >= 1):
        return "is a whole number, 1 or more"
    if key in _DEPTH:
        from doublet.search.searcher import MAX_PLY  # the engine, only when a depth is given

        if value > MAX_PLY:
            return f"is a depth, 0 to {MAX_PLY}"
    if kind == "gate" and key in ("games", "pubeval_games") and value % 2:
        return "is an even number (duplicate games come in pairs)"
    if key in _REAL and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return "is a number"
    if key in ("lr", "lr_end") and not value > 0:
        return "is above 0"
    if key == "rank_weight" and not value >= 0:
        return "is 0 (off) or more"
    if key == "epsilon" and not (0 <= value < 1 if kind == "data" else 0 <= value <= 1):
        return "is a share of the rolls, 0 to 1" + (" (below 1)" if kind == "data" else "")
    if key == "rollout_ply" and not (whole and 0 <= value <= 1):
        return "is the rollouts' checker play, 0 or 1"
    if key == "only":
        from doublet.training.distill import ONLY

        if not (isinstance(value, list) and value and all(v in ONLY for v in value)):
            return f"is a list of the kinds {', '.join(map(repr, ONLY))}"
    if key == "race" and not isinstance(value, bool):
        return "is true or false"
    if key == "to" and not (isinstance(value, str) and value):
        return "is the path the model is exported to"
    if key == "config":
        from doublet.training import configs

        if not isinstance(value, str) or value not in configs.CONFIGS:
            return f"is one of {', '.join(configs.CONFIGS)}"
    return None


def _not_input(key: str, file: Path) -> str | None:
    """What is wrong with a path that a step takes as its `key`, a model or data (None:
    nothing): a model is a Doublet model file (not the one-sided race net, say), data a
    folder of distill data's chunks (not a file). The step's command would say so only
    when the step is reached."""
    if key == "data":
        if not file.is_dir():
            return "is a file, not a folder of chunks (distill data's --out)"
        if not any(file.glob("chunk-*.npz")):
            return "holds no chunks (chunk-*.npz: distill data's)"
    elif key in ("model", "against", "init"):
        from doublet.nn.eval import ModelError, load_model

        try:
            load_model(file)
        except ModelError as e:
            from doublet.rules import onesided

            try:
                onesided.load(file)
            except ModelError:
                return f"is not a model: {e}"
            return "is the one-sided race net, which is no model"
    return None


# Keys that change a step's speed, never what it makes: a finished step run with other
# workers (a bigger machine) is still done.
SPEED_ONLY = {"workers"}


def _differences(was: dict[str, Any], now: dict[str, Any]) -> str:
    """The settings that differ between a step as it was done and as it is now ("" when
    none does but SPEED_ONLY's), for a message: "epochs 1 then, 2 now, seed (none) then,
    5 now"."""

    def shown(spec: dict[str, Any], key: str) -> str:
        return repr(spec[key]) if key in spec else "(none)"

    keys = sorted(k for k in {*was, *now} - SPEED_ONLY if was.get(k) != now.get(k)
                  or (k in was) != (k in now))  # fmt: skip
    return ", ".join(f"{k} {shown(was, k)} then, {shown(now, k)} now" for k in keys)


def _plain(value: Any) -> bool:
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (str, int, bool))


def _under(base: Path, ref: str) -> Path:
    p = Path(ref)
    return p if p.is_absolute() else base / p


def _sha256(files: list[Path]) -> str:
    """sha256 over the files, each by its name and bytes (a missing one by a mark: a
    digest no record holds); read a MB at a time (a data step's chunks run to GBs)."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        try:
            with open(f, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(block)
        except OSError:  # gone
            h.update(b"\0missing")
    return h.hexdigest()


def _trail_path(model: Path) -> Path:
    """The record an export step writes beside the model it exports."""
    return model.with_name(model.stem + ".recipe.json")


class Pipeline:
    """Runs a recipe's steps in `out` (see the module docstring)."""

    def __init__(self, recipe: Path, out: Path, log: Any = None) -> None:
        self.recipe = recipe
        self.base = recipe.resolve().parent
        self.out = out.resolve()  # the same paths in every record however --out is written
        self.steps = load(recipe)
        self.names = {s.name: s for s in self.steps}
        self.log = log or command_log("recipe")
        self._digests: dict[str, str | None] = {}  # _digest's, by step name
        self._paths: dict[str, str] = {}  # _file_stamp's, by the recipe's path

    # -- where things are ------------------------------------------------------------------
    def folder(self, step: Step) -> Path:
        return self.out / step.name

    def model(self, ref: str) -> Path:
        """A step's model, or a path relative to the recipe."""
        if ref in self.names:
            return self.folder(self.names[ref]) / "model.npz"
        return _under(self.base, ref)

    def data(self, step: Step) -> list[Path]:
        refs = step.get("data")
        refs = refs if isinstance(refs, list) else [refs]
        return [self.folder(self.names[r]) if r in self.names else _under(self.base, r)
                for r in refs]  # fmt: skip

    def exported(self, step: Step) -> Path:
        """Where an export step writes its model (`to`, relative to the run's folder)."""
        return _under(self.out, step.get("to"))

    def done(self, step: Step, early: bool = False) -> dict[str, Any] | None:
        """The step's record if it is done and still stands (None: to run); DoubletError
        where it was done with other settings or inputs. `early`: checked before the run
        starts, quietly, where an input step not done yet is passed over (it may make the
        same)."""
        say = (lambda _: None) if early else self.log
        path = self.folder(step) / DONE
        if not path.exists():
            return None
        folder = str(self.folder(step))
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = None
        if not isinstance(record, dict):
            raise DoubletError(f"step {step.name!r}'s record {str(path)!r} is damaged: remove "
                               f"{folder!r} to run the step again")  # fmt: skip
        was = record.get("spec") if isinstance(record.get("spec"), dict) else {}
        if step.kind == "export" and self._digest(step) != record.get("digest"):
            # Its output (outside the folder, as a rule) is gone, is not the file it wrote,
            # or is to go elsewhere now: nothing was made from it, so it is exported again.
            # (A record made before exports were hashed has no digest: exported again too.)
            if was.get("to") not in (None, step.get("to")):
                say(f"{step.name}: the export's 'to' is {step.get('to')!r} now, not "
                         f"{was['to']!r}: the step runs again (what it wrote there "
                         "stays)")  # fmt: skip
            else:
                say(f"{step.name}: {str(self.exported(step))!r} or its record is missing "
                         "or is not what the step wrote: the step runs again")  # fmt: skip
            return None
        if record.get("digest") is not None and self._digest(step) != record["digest"]:
            raise DoubletError(f"step {step.name!r} is recorded done, but what it made in "
                               f"{folder!r} is missing or was changed since: remove the "
                               "folder to run it again, and the steps after it")  # fmt: skip
        if differ := _differences(was, step.spec):
            raise DoubletError(f"step {step.name!r} was done with other settings ({differ}); "
                               f"set them back, or remove {folder!r} to run it again, and the "
                               "steps after it")  # fmt: skip
        for ref, stamp in record.get("files", {}).items():
            if self._file_stamp(ref) == stamp:
                continue
            if step.kind == "gate":
                # A gate's verdict feeds no later step, and its `against` is the file the
                # export is copied over once the gate passes (recipes/standard.toml): said,
                # not refused (a review: the recipe's own workflow ended in a refusal).
                say(
                    f"{step.name}: the file {ref!r} holds something else now than when the "
                    f"gate ran; its verdict stands (remove {folder!r} to gate again)"
                )
            else:
                raise DoubletError(f"step {step.name!r} was made from the file {ref!r} as it "
                                   "was then, and it holds something else now (or is gone): "
                                   f"put it back, or remove {folder!r} to run the step again, "
                                   "and the steps after it")  # fmt: skip
        for name, stamp in record.get("inputs", {}).items():
            now = self._stamp(name)
            if early and now is None:  # (before the run) not done yet: it may make the same
                continue
            if now != stamp:
                raise DoubletError(f"step {step.name!r} was made from step {name!r} as it "
                                   "was then, and that step has made something else (or is "
                                   f"not done) since: remove {folder!r} to run it again, and "
                                   "the steps after it")  # fmt: skip
        return record

    @staticmethod
    def _refs(step: Step) -> list[str]:
        """What `step` reads, in the recipe's own words: earlier steps' names and paths."""
        data = step.get("data")
        refs = [step.get(k) for k in ("model", "against", "init", "judge", "refset", "cube")]
        refs += data if isinstance(data, list) else [data]
        return [r for r in refs if isinstance(r, str)]

    def _inputs(self, step: Step) -> list[str]:
        """The earlier steps whose results `step` uses."""
        return [r for r in self._refs(step) if r in self.names]

    def _files(self, step: Step) -> list[str]:
        """The files and folders that `step` reads, not made by an earlier step: models,
        judges, data given by path."""
        return [r for r in self._refs(step) if r not in self.names]

    def _file_stamp(self, ref: str) -> str:
        """sha256 of a file given by path (a folder: of its chunks), as `_digest` of a
        step's result: a model replaced at the same path is another input (a review)."""
        if ref not in self._paths:
            path = _under(self.base, ref)
            self._paths[ref] = _sha256(sorted(path.glob("chunk-*.npz")) if path.is_dir()
                                       else [path])  # fmt: skip
        return self._paths[ref]

    def _stamp(self, name: str) -> str | None:
        """The digest of step `name`'s result as its record holds it (None: not done, or a
        damaged record). It does not check that step again: run() has, in order."""
        path = self.folder(self.names[name]) / DONE
        try:
            record = json.loads(path.read_text()) if path.exists() else None
        except (OSError, ValueError):
            return None
        return record.get("digest") if isinstance(record, dict) else None

    def _digest(self, step: Step) -> str | None:
        """sha256 of what the step made: its model, its data's chunks, or the model it
        exported with its record (computed once a run: a data step's chunks can be
        hundreds of MB)."""
        if step.name not in self._digests:
            self._digests[step.name] = self._hash(step)
        return self._digests[step.name]

    def _hash(self, step: Step) -> str | None:
        folder = self.folder(step)
        if step.kind in MODEL_KINDS:
            files = [folder / "model.npz"]
        elif step.kind == "onesided":
            files = [folder / ONESIDED]
        elif step.kind == "data":
            files = sorted(folder.glob("chunk-*.npz"))
        elif step.kind == "export":
            files = [self.exported(step), _trail_path(self.exported(step))]
        else:
            return None
        return _sha256(files)

    # -- running -----------------------------------------------------------------------------
    def run(self, dry_run: bool = False) -> int:
        """Every step not done yet, in order: 0, or 3 when a gate failed."""
        self._check_exports()
        # Every step's record is checked before any step runs (a review: a step renamed
        # or edited past the first one to run was found only when the run reached it).
        for step in self.steps:
            self.done(step, early=True)
        t0, ran = time.time(), 0
        for step in self.steps:
            record = self.done(step)
            if record is not None:
                if record.get("passed") is False:
                    self.log(f"{step.name}: the gate failed ({record['result']['why']}); "
                             "the pipeline stops here (to gate again, change the gate or "
                             f"its model and remove {str(self.folder(step))!r})")  # fmt: skip
                    return 3
                self.log(f"{step.name}: done ({_summary(record)})")
                continue
            if dry_run:
                self.log(f"{step.name}: would run the {step.kind} step")
                continue
            self.log(f"{step.name}: running the {step.kind} step in {self.folder(step)}")
            self.folder(step).mkdir(parents=True, exist_ok=True)
            t = time.time()
            result = getattr(self, "_" + step.kind)(step)
            self._digests.pop(step.name, None)  # what it made now
            record = {"spec": step.spec, "result": result, "seconds": round(time.time() - t, 1),
                      "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
                      "digest": self._digest(step),
                      "inputs": {n: self._stamp(n) for n in self._inputs(step)},
                      "files": {r: self._file_stamp(r) for r in self._files(step)}}  # fmt: skip
            if step.kind == "gate":
                record["passed"] = bool(result["passed"])
            atomic_write(self.folder(step) / DONE, json.dumps(record, indent=1) + "\n")
            if record.get("passed") is False:
                self.log(f"{step.name}: the gate failed: {result['why']} (exit 3; the steps "
                         "after it do not run)")  # fmt: skip
                return 3
            self.log(f"{step.name}: done ({_summary(record)})")
            ran += 1
        if not dry_run:
            self.log(f"all {len(self.steps)} steps done ({ran} run now, in "
                     f"{time.time() - t0:.0f} s); the run's folder: {str(self.out)!r}")  # fmt: skip
        return 0

    def _check_exports(self) -> None:
        """Before days of steps: every export can be written, and none writes over what
        the run makes or reads, nor over another export's file (a review: `to` inside a
        step's folder changed that step's result under its record)."""
        reads = {_under(self.base, r).resolve(): r for st in self.steps for r in self._files(st)}
        seen: dict[Path, str] = {}
        for step in self.steps:
            if step.kind != "export":
                continue
            to = self.exported(step).resolve()
            if why := file_path_error(to):
                raise DoubletError(f"step {step.name!r}: cannot export to {str(to)!r}: {why}")
            inside = next((st for st in self.steps
                           if to.is_relative_to(self.folder(st).resolve())), None)  # fmt: skip
            if inside is not None:
                raise DoubletError(f"step {step.name!r}: 'to' {step.get('to')!r} is inside step "
                                   f"{inside.name!r}'s folder, whose files are its result: "
                                   "export next to the folders (e.g. 'final.npz')")  # fmt: skip
            if to in reads or _trail_path(to) in reads:
                read = reads.get(to, reads.get(_trail_path(to)))
                raise DoubletError(f"step {step.name!r}: 'to' {step.get('to')!r} is the file "
                                   f"{read!r} that the recipe reads: export elsewhere, then "
                                   "copy it by hand")  # fmt: skip
            if to in seen:
                raise DoubletError(f"step {step.name!r}: 'to' {step.get('to')!r} is step "
                                   f"{seen[to]!r}'s too: two exports would write one file "
                                   "in turn")  # fmt: skip
            seen[to] = step.name

    def _call(self, main: Any, argv: list[str], what: str) -> None:
        try:
            code = main(argv)
        except SystemExit as e:  # a command's own refusal (argparse, distill's checks)
            if e.code is None:
                raise DoubletError(f"{what} stopped: {' '.join(argv)}") from None
            if isinstance(e.code, int):  # argparse: its message is on stderr already
                raise DoubletError(f"{what} refused its arguments (above): "
                                   f"{' '.join(argv)}") from None  # fmt: skip
            raise DoubletError(f"{what} refused: {e}") from None
        if code == 130:  # the command was interrupted (Ctrl-C) and kept its work
            raise KeyboardInterrupt
        if code == Terminated.status:  # likewise by SIGTERM
            raise Terminated
        if code != 0:
            raise DoubletError(f"{what} stopped (exit {code}): {' '.join(argv)}")

    def _td(self, step: Step) -> dict[str, Any]:
        from doublet.training import checkpoint, train

        folder = self.folder(step)
        model = folder / "model.npz"
        if not (folder / checkpoint.FILENAME).exists():
            argv = ["--out", str(folder), "--config", str(step.get("config"))]
            for key in ("games", "seed", "workers"):
                if step.get(key) is not None:
                    argv += [f"--{key}", str(step.get(key))]
            if step.get("init") is not None:
                argv += ["--init", str(self.model(step.get("init")))]
            self._call(train.main, argv, f"step {step.name!r} (td)")
            return self._td_result(model)
        # A run that was stopped: it must be this step's run, then it goes on, or only
        # its export is missing (the model card is written last).
        from doublet.training import configs

        t = train.Trainer.from_checkpoint(folder / checkpoint.FILENAME, folder, progress=False)
        cfg = t.cfg
        want = {"config": cfg.name, "seed": cfg.seed, "init": cfg.init}
        # What the step says now; a key left out is the config's own (a review: a seed or
        # init taken out of a stopped step was filled in from the run, and the records
        # then told a recipe that makes another model).
        named = configs.get(str(step.get("config")))
        have = {"config": step.get("config"), "seed": step.get("seed", named.seed),
                "init": str(self.model(step.get("init")).resolve()) if step.get("init")
                else named.init}  # fmt: skip

        def same_init(ran: str, now: str) -> bool:
            """The run's init and the step's are one model: the same path, or (a run
            started in another clone, its path another) the weights the run recorded."""
            if ran == now or not ran or not now:
                return ran == now
            if t.parent is not None and Path(now).is_file():
                from doublet.nn.eval import digest, load_model

                return bool(digest(load_model(now)) == t.parent["digest"])
            return Path(ran).name == Path(now).name

        for key in want:
            if want[key] != have[key] and not (key == "init" and same_init(want[key], have[key])):
                raise DoubletError(f"step {step.name!r}: {str(folder)!r} holds a run with "
                                   f"{key} {want[key]!r}, not {have[key]!r}; remove the "
                                   "folder to start it again")  # fmt: skip
        # The same init path holding other weights (its step made again since the run
        # started): the run would go on from a model that is no longer the step's init.
        if step.get("init") and t.parent is not None:
            from doublet.nn.eval import digest, load_model

            if digest(load_model(self.model(step.get("init")))) != t.parent["digest"]:
                raise DoubletError(f"step {step.name!r}: its run in {str(folder)!r} started "
                                   f"from other weights than step {step.get('init')!r}'s "
                                   "model holds now (made again since); remove the folder "
                                   "to start the run again")  # fmt: skip
        # train --resume goes on, or finishes the checks and the export of a run that
        # learned its games, or does nothing when it is exported: one rule, train's.
        total = int(step.get("games", cfg.games))
        if total < t.games and t.games != train.whole_blocks(total, cfg.block):
            raise DoubletError(f"step {step.name!r}: its run in {str(folder)!r} has learned "
                               f"{t.games} games, more than the step's {total}: set games "
                               f"to {t.games} or more, or remove the folder to start again"
                               )  # fmt: skip
        argv = ["--out", str(folder), "--resume", "--games", str(total)]
        if step.get("workers") is not None:
            argv += ["--workers", str(step.get("workers"))]
        self._call(train.main, argv, f"step {step.name!r} (td)")
        return self._td_result(model)

    def _td_result(self, model: Path) -> dict[str, Any]:
        """A td step's result: its model, and the run's training time over all its
        sessions (a resumed step's record's seconds are its last session's alone)."""
        from doublet.nn.eval import load_model

        seconds = load_model(model).meta.get("train_seconds")
        return {"model": self._shown(model),
                **({} if seconds is None else {"train_seconds": seconds})}  # fmt: skip

    def _shown(self, path: Path) -> str:
        """A path a record holds: relative to the run's folder where it is inside it (a
        run folder copied elsewhere then names its own files: a review), else as is."""
        try:
            return str(path.resolve().relative_to(self.out))
        except ValueError:
            return str(path)

    def _prune(self, step: Step) -> dict[str, Any]:
        from doublet.training import prune

        out = self.folder(step) / "model.npz"
        argv = [str(self.model(step.get("model"))), "--out", str(out)]
        for key in ("games", "hidden", "epochs", "seed"):
            if step.get(key) is not None:
                argv += [f"--{key}", str(step.get(key))]
        self._call(prune.main, argv, f"step {step.name!r} (prune)")
        return {"model": self._shown(out)}

    def _onesided(self, step: Step) -> dict[str, Any]:
        """The one-sided race net (doublet.training.onesided), resumed round by round."""
        from doublet.training import onesided

        out = self.folder(step) / ONESIDED
        argv = ["fit", "--out", str(out), *(["--resume"] if out.exists() else [])]
        if step.get("model") is not None:
            argv += ["--model", str(self.model(step.get("model")))]
        for key in ("games", "epsilon", "configs", "rounds", "epochs", "lr", "hidden", "seed"):
            if step.get(key) is not None:
                argv += [f"--{key}", str(step.get(key))]
        self._call(onesided.main, argv, f"step {step.name!r} (onesided)")
        return {"onesided": self._shown(out)}

    def _data(self, step: Step) -> dict[str, Any]:
        from doublet.training import distill

        argv = ["data", "--model", str(self.model(step.get("model"))), "--out",
                str(self.folder(step))]  # fmt: skip
        for key in ("chunks", "ply", "seed", "epsilon", "candidates", "race_trials",
                    "rollout_trials", "rollout_ply", "min_equity", "workers"):  # fmt: skip
            if step.get(key) is not None:
                argv += ["--" + key.replace("_", "-"), str(step.get(key))]
        if step.get("only") is not None:
            argv += ["--only", ",".join(step.get("only"))]
        try:
            self._call(lambda a: distill.main(a, raising=(distill.OtherData,)), argv,
                       f"step {step.name!r} (data)")  # fmt: skip
        except distill.OtherData as e:  # distill's own advice is a command line's (--out)
            raise DoubletError(f"step {step.name!r}: {e}: the step's earlier run, stopped, "
                               "made them; set the step's settings back as they were then, "
                               f"or remove {str(self.folder(step))!r} to make its data "
                               "again") from None  # fmt: skip
        chunks = sorted(self.folder(step).glob("chunk-*.npz"))
        return {"chunks": len(chunks)}

    def _fit(self, step: Step) -> dict[str, Any]:
        from doublet.training import distill

        out = self.folder(step) / "model.npz"
        argv = ["fit", "--model", str(self.model(step.get("model"))), "--out", str(out),
                "--data", *[str(d) for d in self.data(step)]]  # fmt: skip
        for key in ("epochs", "lr", "lr_end", "hidden", "seed", "rank_weight"):
            if step.get(key) is not None:
                argv += ["--" + key.replace("_", "-"), str(step.get(key))]
        if step.get("race"):
            argv.append("--race")
        self._call(distill.main, argv, f"step {step.name!r} (fit)")
        return {"model": self._shown(out)}

    def _gate(self, step: Step) -> dict[str, Any]:
        from doublet.games.duplicate import net_player, play_match
        from doublet.nn.eval import load_model
        from doublet.training.arena import strength

        cand = load_model(self.model(step.get("model")))
        ref = load_model(self.model(step.get("against")))
        if cand.variant != ref.variant:
            raise DoubletError(f"step {step.name!r}: the model and the one it is gated against "
                               "are of different variants (standard and Acey-Deucey): a match "
                               "between them means nothing")  # fmt: skip
        standard_only = [k for k in ("judge", "cube") if step.get(k) is not None]
        if cand.variant != STANDARD and standard_only:
            raise DoubletError(f"step {step.name!r}: {' and '.join(standard_only)} judge "
                               "standard backgammon's decisions, and these are Acey-Deucey "
                               "models: gate them head to head (and against pubeval)")  # fmt: skip
        games, seed = int(step.get("games", 4000)), int(step.get("seed", 1))
        margin = float(step.get("margin_se", 2.0))

        def shown(what: str, total: int, unit: str) -> Progress:  # each part's progress
            return Progress(f"{step.name}: {what}", total, unit, self.log)

        with shown("head to head", games, "game") as p:
            r = play_match(net_player(cand, "candidate"), net_player(ref, "reference"), games,
                           seed, cand.variant, progress=p.update)  # fmt: skip
        h2h = {"games": int(r.games), "seed": seed, "ppg": float(r.ppg), "se": float(r.se)}
        result: dict[str, Any] = {"head_to_head": h2h}
        why = []
        # A margin below 0 lets the candidate be that much behind, and a tie (the same
        # plays: 0 ± 0) passes it; 0 or more asks it to be ahead.
        ahead = r.ppg > margin * r.se if margin >= 0 else r.ppg >= margin * r.se
        if not ahead:
            why.append(f"head to head {r.ppg:+.4f} ± {r.se:.4f} ppg is not above {margin:g} "
                       "standard errors")  # fmt: skip
        if step.get("pubeval_games"):
            n = int(step.get("pubeval_games"))
            with shown("against pubeval", n, "game") as p:
                s = strength(cand, n, seed, cand.variant, progress=p.update)
            result["pubeval"] = {"games": s.games, "ppg": s.ppg, "se": s.se}
            low = step.get("pubeval_min")
            if low is not None and s.ppg < float(low):
                why.append(f"against pubeval {s.ppg:+.4f} ppg is below {float(low):g}")
        if step.get("judge") is not None:
            with shown("refset judge", 0, "decision") as p:  # its total: judge's
                j = judge(cand, ref, self.model(step.get("judge")),
                          self.model(step.get("refset")), int(step.get("judge_ply", 2)),
                          p.update)  # fmt: skip
            result["judge"] = j
            if not j["difference"] < float(step.get("judge_margin", 0.0)):
                why.append(f"on the refset judge the candidate loses {j['candidate']:.3f} mEq "
                           f"a decision against {j['reference']:.3f}")  # fmt: skip
        if step.get("cube") is not None:
            with shown("cube decisions", 0, "decision") as p:
                c = cube_judge(cand, ref, self.model(step.get("cube")),
                               int(step.get("cube_ply", 2)), p.update)  # fmt: skip
            result["cube"] = c
            if not c["difference"] < float(step.get("cube_margin", 0.0)):
                why.append(f"on gnubg's cube decisions the candidate loses {c['candidate']:.3f} "
                           f"mEq a decision against {c['reference']:.3f}")  # fmt: skip
        result["passed"] = not why
        result["why"] = "; ".join(why) if why else "passed"
        atomic_write(self.folder(step) / "gate.json", json.dumps(result, indent=1) + "\n")
        return result

    def _export(self, step: Step) -> dict[str, Any]:
        index = self.steps.index(step)
        gates = [s for s in self.steps[:index] if s.kind == "gate"]
        for g in gates:
            record = self.done(g)
            if record is None or not record.get("passed"):
                raise DoubletError(f"step {step.name!r}: the gate {g.name!r} has not passed")
        src = self.model(step.get("model"))
        to = self.exported(step)
        try:
            data = src.read_bytes()
        except OSError as e:  # a model given by path, moved away since the recipe was read
            raise DoubletError(f"step {step.name!r} cannot export {str(src)!r}: "
                               f"{e.strerror}") from None  # fmt: skip
        to.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(to, data)
        trail = {s.name: (self.done(s) or {}) for s in self.steps[:index]}
        digest = hashlib.sha256(data).hexdigest()
        record = {"recipe": self.recipe.read_text(), "model": str(to), "sha256": digest,
                  "steps": trail}  # fmt: skip
        atomic_write(_trail_path(to), json.dumps(record, indent=1) + "\n")
        return {"model": self._shown(to), "sha256": record["sha256"]}


def judge(cand: Any, ref: Any, judge_path: Path, refset: Path, ply: int,
          progress: Callable[..., None] | None = None) -> dict[str, Any]:  # fmt: skip
    """Both models' mean loss on the refset's decisions (mEq), each play valued by the
    fair judge (benchmarks/fair_judge.py: gnubg 2 ply for every legal play), with the
    paired difference candidate - reference and its standard error. progress(done,
    total=decisions) after each decision (Progress.update)."""
    from doublet.formats.position import Position
    from doublet.search.analysis import best_play

    cases, table = read_judge(judge_path, refset)
    losses = []
    for row in table:
        c = cases[row["case"]]
        value = dict(zip(c["legal"], row["equities"], strict=True))
        best = max(row["equities"])
        pos = Position.from_id(c["pid"])
        d1, d2 = c["dice"]
        losses.append([best - value[best_play(pos, d1, d2, ply, m)["position_id"]]
                       for m in (cand, ref)])  # fmt: skip
        if progress is not None:
            progress(len(losses), total=len(table))
    return _paired(losses, ply)


def read_judge(judge_path: Path, refset: Path) -> tuple[dict[Any, Any], list[Any]]:
    """The refset's cases by number and the judge's rows (each a case's "equities", one a
    legal play), checked to belong together: DoubletError naming what is wrong. Read when
    the recipe is loaded too, so that a wrong file is found before days of steps."""
    import gzip

    try:
        cases = {c["case"]: c for c in map(json.loads, refset.read_text().splitlines())}
        with gzip.open(judge_path, "rt") as f:
            table = [json.loads(line) for line in f]
        for row in table:
            c = cases.get(row["case"])
            if c is None or len(c["legal"]) != len(row["equities"]):
                raise DoubletError(f"the judge {str(judge_path)!r} is not of the refset "
                                   f"{str(refset)!r} (case {row['case']})")  # fmt: skip
            c["pid"], c["dice"]  # the refset's keys the judge reads
    except (OSError, ValueError, EOFError) as e:  # EOFError: a cut gzip file
        raise DoubletError(f"the refset judge cannot be read ({judge_path}, {refset}): "
                           f"{e}") from None  # fmt: skip
    except (KeyError, TypeError) as e:
        raise DoubletError(f"{str(judge_path)!r} and {str(refset)!r} are not a refset "
                           f"judge and its refset (gnubg2_all_refset.jsonl.gz, "
                           f"gnubg_refset.jsonl): a line has no {e}") from None  # fmt: skip
    if not table:
        raise DoubletError(f"the judge {str(judge_path)!r} holds no decision")
    return cases, table


def read_cube_decisions(data: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """gnubg's 2-ply equities, the cube states and the boards of the cube decisions in
    `data` (gnubg_cube.jsonl's lines, or tests/data/gnubg_cube0.jsonl's): DoubletError
    naming what is wrong. Read when the recipe is loaded too."""
    from doublet.cube.state import from_request
    from doublet.formats.ids import board_from_position_id

    try:
        rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
        judged = [r["gnubg"]["2"] if "gnubg" in r else r["gnubg2"] for r in rows]
        for j in judged:
            j["no_double"], j["double_take"], j["double_pass"]  # read by cube_judge
        states = [from_request(r) for r in rows]
        boards = [board_from_position_id(r["pid"]) for r in rows]
    except (OSError, ValueError, DoubletError) as e:
        raise DoubletError(f"the cube decisions cannot be read ({data}): {e}") from None
    except (KeyError, TypeError) as e:
        raise DoubletError(f"{str(data)!r} is not a file of gnubg's cube decisions "
                           f"(gnubg_cube0.jsonl's lines): a line has no {e}") from None  # fmt: skip
    if not rows:
        raise DoubletError(f"{str(data)!r} holds no cube decision")
    return judged, states, boards


def _paired(losses: list[list[float]], ply: int) -> dict[str, Any]:
    """The two models' mean losses (mEq) from per-decision [candidate, reference] losses
    in equity, with the paired difference and its standard error."""
    import numpy as np

    x = 1000.0 * np.array(losses)
    d = x[:, 0] - x[:, 1]
    return {"decisions": len(x), "ply": ply, "candidate": float(x[:, 0].mean()),
            "reference": float(x[:, 1].mean()), "difference": float(d.mean()),
            "se": float(d.std(ddof=1) / np.sqrt(len(d)))}  # fmt: skip


def cube_judge(cand: Any, ref: Any, data: Path, ply: int,
               progress: Callable[..., None] | None = None) -> dict[str, Any]:  # fmt: skip
    """Both models' mean error per cube decision (double + take, mEq) on the decisions in
    `data` (gnubg_cube.jsonl's lines, or tests/data/gnubg_cube0.jsonl's), judged by
    GNU Backgammon's cubeful 2-ply equities there as benchmarks/cube.py judges them
    (doublet.games.review.cube_loss), with the paired difference candidate - reference
    and its standard error. progress(done, total=decisions) after each decision."""

    from doublet.games.review import cube_loss
    from doublet.search.cubeful import cube_decision
    from doublet.search.searcher import Searcher

    judged, states, boards = read_cube_decisions(data)
    searchers = [Searcher(m) for m in (cand, ref)]
    errors = []
    for j, state, board in zip(judged, states, boards, strict=True):
        doc = {"double": min(j["double_take"], j["double_pass"]) > j["no_double"],
               "equities": j}  # fmt: skip
        row = []
        for s in searchers:
            d = cube_decision(s, board, state, ply).decision
            assert d is not None
            double = min(d.double_take, d.double_pass) > d.no_double
            take = d.double_take <= d.double_pass
            row.append((cube_loss(doc, "double" if double else "roll") or 0.0)
                       + (cube_loss(doc, "take" if take else "pass") or 0.0))  # fmt: skip
        errors.append(row)
        if progress is not None:
            progress(len(errors), total=len(judged))
    return _paired(errors, ply)


def _summary(record: dict[str, Any]) -> str:
    r = record.get("result", {})
    if "head_to_head" in r:
        h = r["head_to_head"]
        return f"head to head {h['ppg']:+.4f} ± {h['se']:.4f} over {h['games']} games"
    if "chunks" in r:
        return f"{r['chunks']} chunks"
    trained = f", {r['train_seconds']} s training in all" if "train_seconds" in r else ""
    return (str(r.get("model", r.get("onesided", ""))) + f", {record.get('seconds', 0)} s"
            + trained)  # fmt: skip


def _recipe_help() -> str:
    """The recipe's format, for --help: the kinds of step and the keys each takes."""
    lines = [
        "A recipe is a TOML file of [[step]] tables, run in order, each with a 'name'",
        "(its folder in --out, and how later steps name its result) and a 'kind':",
        "",
    ]
    import textwrap

    for kind, keys in KINDS.items():
        need = ", ".join(sorted(REQUIRED[kind])) or "nothing"
        rest = ", ".join(sorted(keys - REQUIRED[kind]))
        text = f"{kind:<9} needs {need}" + (f"; also takes {rest}" if rest else "")
        lines += textwrap.wrap(text, 78, initial_indent="  ", subsequent_indent=" " * 12)
    lines += ["", "A model or data is an earlier step's name or a path (relative to the "
              "recipe).", "Run the same command again to go on after a stop; a step done is "
              "skipped, one", "whose settings or inputs changed is refused until its folder "
              "is removed. Exit 0:", "every step done; 2: an error; 3: a gate failed; 130: "
              "interrupted.", "recipes/standard.toml is the shipped model's recipe; "
              "training/recipe.py describes", "every key."]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="doublet train", description="Run a model's recipe (training/recipe.py).",
        epilog=_recipe_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p.add_argument("--recipe", required=True, type=Path, help="the recipe (TOML)")
    p.add_argument("--out", required=True, type=Path, help="the run's folder (a folder a step)")
    p.add_argument("--dry-run", action="store_true", help="say which steps would run")
    args = p.parse_args(argv)
    with sigterm_interrupts():  # SIGTERM (a scheduler) stops the recipe as Ctrl-C does
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    try:
        pipeline = Pipeline(args.recipe, args.out)
        if args.dry_run:
            return pipeline.run(dry_run=True)
        busy = (f"another doublet train --recipe is running in {str(args.out)!r}: wait for "
                "it, or give this one another --out")  # fmt: skip
        with contextlib.suppress(OSError):  # the lock's folder (made by the first step anyway)
            args.out.mkdir(parents=True, exist_ok=True)
        with held_lock(args.out / ".recipe.lock", busy):  # two runs would make a step twice
            return pipeline.run(False)
    except DoubletError as e:
        print(f"recipe: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # --out not writable, a full disk: what is done so far is kept
        print(f"recipe: error: {os_error_text(e)}; what is done is kept: run the same "
              "command again once that is mended", file=sys.stderr)  # fmt: skip
        return 2
    except KeyboardInterrupt as e:
        what = stop_word(e)
        print(f"recipe: {what}; run the same command again to go on", file=sys.stderr)
        return interrupt_status(e)


__all__ = ["KINDS", "Pipeline", "Step", "load", "main"]
