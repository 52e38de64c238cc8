"""The neural evaluator: a one-hidden-layer net run in numba from exported weights.

A net maps the inputs of a board (doublet.nn.encode, the side on roll's view, before it
rolls) to five probabilities for the side on roll:

    P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose backgammon)

(gammons include backgammons). A model holds a contact net and, optionally, a race
net used once the sides can no longer hit each other. Models are `.npz` files:
``{contact,race}_{w1,b1,w2,b2}`` float32 arrays and ``meta``, a JSON string with at
least ``encoder_version``, ``hidden``, ``variant`` and ``games``.

A model may also hold a pruning net, ``prune_{w1,b1,w2,b2}``, as GNU Backgammon's: a
small net on the raw inputs alone (doublet.nn.encode.N_PRUNE_INPUTS, no features), ReLU
hidden units and one linear output, the cubeless equity for the side on roll, trained to
mimic the main net (doublet.training.prune). The search uses it to pick which of an inner
level's plays the main net evaluates (doublet.search.searcher); everything else ignores it.

Kernels take nets as tuples ``(w1 (I, H), b1 (H,), w2 (H, 5), b2 (5,))``; the hidden
layer is computed sparsely (most inputs are 0), which is what makes it fast.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from doublet.core.board import (
    ACEY_DEUCEY,
    MY_BAR,
    MY_OFF,
    MY_OUT,
    OPP_OFF,
    SIZE,
    STANDARD,
    VARIANT_NAMES,
    Boards,
    flip_into,
    has_contact,
)
from doublet.core.board import outcome as _outcome
from doublet.core.errors import InvalidPositionError, ModelError, clipped
from doublet.core.files import atomic_open
from doublet.core.jit import NO_REFCOUNT, njit
from doublet.formats.ids import board_array
from doublet.nn.encode import (
    _RAW_PER_SIDE,
    ENCODER_VERSION,
    ESCAPES,
    HITS_OPEN,
    N_INPUTS,
    N_INPUTS_BY_VERSION,
    N_PRUNE_INPUTS,
    _encode_into,
    upgrade_net,
)
from doublet.rules.movegen import Workspace, _outcomes, check_dice

N_OUTPUTS = 5
# The shipped models travel with the package (doublet.models is models/ of the repository,
# package data of a wheel), so any install finds them, from any folder.
MODELS_DIR = Path(str(resources.files("doublet.models")))
DEFAULT_MODELS = {STANDARD: "doublet-standard.npz", ACEY_DEUCEY: "doublet-acey-deucey.npz"}


Net = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class Model:
    """A trained evaluator: the contact net, the race net (each (w1, b1, w2, b2), one
    hidden layer, 5 sigmoid outputs), its meta (variant, training, lineage) and the
    search's optional pruning net. load_model reads one, default_model the shipped one."""

    contact: Net
    race: Net
    meta: dict[str, Any] = field(default_factory=dict)
    prune: Net | None = None  # (w1 (N_PRUNE_INPUTS, H), b1 (H,), w2 (H, 1), b2 (1,))

    @property
    def variant(self) -> int:
        """The variant it was trained for (0 standard, 1 Acey-Deucey)."""
        return int(self.meta.get("variant", STANDARD))


def random_net(hidden: int, seed: int = 0, n_inputs: int = N_INPUTS) -> Net:
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((n_inputs, hidden)) * (1.0 / math.sqrt(n_inputs))).astype(np.float32)
    w2 = (rng.standard_normal((hidden, N_OUTPUTS)) * (1.0 / math.sqrt(hidden))).astype(np.float32)
    return (w1, np.zeros(hidden, np.float32), w2, np.zeros(N_OUTPUTS, np.float32))


def random_model(hidden: int = 40, seed: int = 0, variant: int = STANDARD) -> Model:
    """An untrained model of `hidden` units (seeded weights): training's start, tests."""
    net = random_net(hidden, seed)
    meta = {"encoder_version": ENCODER_VERSION, "hidden": hidden, "variant": variant, "games": 0}
    return Model(net, net, meta)


def save_model(path: str | os.PathLike[str], model: Model) -> None:
    """Write a model `.npz` atomically (a crash never leaves half a file)."""
    path = Path(path)
    meta = {**model.meta, "encoder_version": model.meta.get("encoder_version", ENCODER_VERSION)}
    arrays: dict[str, Any] = {"meta": np.array(json.dumps(meta, sort_keys=True))}
    nets = [("contact", model.contact), ("race", model.race)]
    if model.prune is not None:
        nets.append(("prune", model.prune))
    for name, net in nets:
        for key, a in zip(("w1", "b1", "w2", "b2"), net, strict=True):
            arrays[f"{name}_{key}"] = np.ascontiguousarray(a, dtype=np.float32)
    with atomic_open(path) as f:
        np.savez(f, **arrays)


def with_step(meta: dict[str, Any], kind: str, **fields: Any) -> dict[str, Any]:
    """meta with one more step appended to its ``lineage`` (a new dict; earlier steps are
    kept as they are, never rewritten). A model's lineage lists, oldest first, every step
    that made it: TD training runs (``td-train``), fits to search or rollout values
    (``distill-fit``, ``race-fit``), pruning nets (``prune``); each with its command, its
    date and what it measured, as the model card tells them."""
    lineage = list(meta.get("lineage", []))
    step = {"step": len(lineage) + 1, "kind": kind, "date": time.strftime("%Y-%m-%d"), **fields}
    return {**meta, "lineage": [*lineage, step]}


def command_line(prog: str, argv: Sequence[str] | None) -> str:
    """The command that ran: prog and its arguments (sys.argv's when argv is None)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join([prog, *args])


def load_model(path: str | os.PathLike[str]) -> Model:
    """Read a model `.npz`; ModelError says what is wrong with a bad file."""
    path = Path(path)
    shown_path = clipped(str(path), 400)  # a path of 50,000 characters is not echoed whole
    try:
        there = path.exists()
    except OSError as e:  # a name too long for the file system...
        raise ModelError(f"model file {shown_path} cannot be read: {e.strerror or e}") from None
    if not there:
        raise ModelError(f"model file {shown_path} does not exist")
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ValueError("a single .npy array, not an .npz archive")
        with loaded as z:
            meta = json.loads(str(z["meta"]))
            nets = []
            names = ["contact", "race"] + (["prune"] if "prune_w1" in z.files else [])
            for name in names:
                nets.append(
                    tuple(
                        np.ascontiguousarray(z[f"{name}_{k}"], dtype=np.float32)
                        for k in ("w1", "b1", "w2", "b2")
                    )
                )
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        why = str(e) or type(e).__name__
        if isinstance(e, ValueError) and "allow_pickle" in why:  # numpy's guess for a
            # file that is no array at all (text...)
            why = "not an .npz archive"
        raise ModelError(f"model file {shown_path} is not a Doublet model ({why})") from None
    if not isinstance(meta, dict):
        raise ModelError(f"model file {shown_path} is not a Doublet model (its meta is "
                         f"{type(meta).__name__}, not an object)")  # fmt: skip
    version = meta.get("encoder_version")
    if version not in N_INPUTS_BY_VERSION:
        raise ModelError(
            f"model {shown_path} was trained with encoder version {version!r}, but this engine "
            f"encodes positions with version {ENCODER_VERSION} (and reads models of versions "
            f"{', '.join(map(str, N_INPUTS_BY_VERSION))}): retrain it (doublet train) or use "
            "a model made for this version"
        )
    n_inputs = N_INPUTS_BY_VERSION[version]
    for name, (w1, b1, w2, b2) in zip(("contact", "race"), nets[:2], strict=True):
        h = w1.shape[1] if w1.ndim == 2 else -1
        if (w1.shape != (n_inputs, h) or b1.shape != (h,) or w2.shape != (h, N_OUTPUTS)
                or b2.shape != (N_OUTPUTS,)):  # fmt: skip
            raise ModelError(
                f"model {shown_path}: the {name} net's weights have inconsistent shapes "
                f"{w1.shape}, {b1.shape}, {w2.shape}, {b2.shape} (inputs must be {n_inputs})"
            )
        if not all(np.isfinite(a).all() for a in (w1, b1, w2, b2)):
            raise ModelError(f"model {shown_path}: the {name} net has NaN or infinite weights")
    prune = nets[2] if len(nets) > 2 else None
    if prune is not None:
        w1, b1, w2, b2 = prune
        h = w1.shape[1] if w1.ndim == 2 else -1
        if (w1.shape != (N_PRUNE_INPUTS, h) or b1.shape != (h,) or w2.shape != (h, 1)
                or b2.shape != (1,) or not all(np.isfinite(a).all() for a in prune)):  # fmt: skip
            raise ModelError(
                f"model {shown_path}: its pruning net's weights are not finite or have "
                f"inconsistent shapes {w1.shape}, {b1.shape}, {w2.shape}, {b2.shape} "
                f"(inputs must be {N_PRUNE_INPUTS}, one output)"
            )
    # An older version's net runs on the current inputs with zero weights on the new ones.
    if version != ENCODER_VERSION:
        nets[:2] = [upgrade_net(net, version) for net in nets[:2]]
        meta = {**meta, "encoder_version": ENCODER_VERSION, "upgraded_from_encoder": version}
    return Model(nets[0], nets[1], meta, prune)  # type: ignore[arg-type]


_LOADED: dict[int, Model] = {}


def model_for(path: str | os.PathLike[str], variant: int) -> Model:
    """load_model(path) for positions of `variant`: ModelError when the model was trained
    for the other variant (its net would answer, wrongly, without a word)."""
    return check_variant(load_model(path), path, variant)


def check_variant(model: Model, path: str | os.PathLike[str], variant: int,
                  subject: str = "this position") -> Model:  # fmt: skip
    """The model (read from path) if it was trained for `variant`, else ModelError
    saying that `subject` (what has the variant: a position, a setting) is of it."""
    if model.variant != variant:
        names = {STANDARD: "standard backgammon", ACEY_DEUCEY: "Acey-Deucey"}
        raise ModelError(f"model {str(path)!r} was trained for "
                         f"{names.get(model.variant, model.variant)}; {subject} is "
                         f"{names.get(variant, variant)} (give a model of that variant, or "
                         "none for the shipped one)")  # fmt: skip
    return model


def digest(model: Model) -> str:
    """sha1 of a model's weights (its contact, race and pruning nets; not its meta): what
    tells two models apart whatever their paths."""
    h = hashlib.sha1()
    for net in (model.contact, model.race, *(() if model.prune is None else (model.prune,))):
        for a in net:
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def is_default_model(model: Model) -> bool:
    """Whether `model` is a shipped model default_model has loaded (it lives as long as
    the process)."""
    return any(model is m for m in _LOADED.values())


def default_model(variant: int = STANDARD) -> Model:
    """The shipped model for the variant (models/, or $DOUBLET_MODEL_DIR), loaded once."""
    if variant not in _LOADED and variant not in DEFAULT_MODELS:  # (a review: KeyError)
        raise ModelError(f"the variant is {STANDARD} (standard) or {ACEY_DEUCEY} (acey-deucey), "
                         f"got {variant!r}")  # fmt: skip
    if variant not in _LOADED:
        path = Path(os.environ.get("DOUBLET_MODEL_DIR", MODELS_DIR)) / DEFAULT_MODELS[variant]
        model = load_model(path)
        trained = model.meta.get("variant", STANDARD)
        if trained != variant:
            raise ModelError(
                f"model {str(path)!r} was trained for variant {trained!r}, not {variant!r}"
            )
        _LOADED[variant] = model
    return _LOADED[variant]


# --------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------


@njit
def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


# numpy's error model: no zero-divisor check, which would keep LLVM from vectorizing
@njit(**NO_REFCOUNT, error_model="numpy")
def _sigmoid_layer(h, nh):
    """h[:nh] = 1 / (1 + exp(-h[:nh])), in loops that LLVM vectorizes (a call to exp per
    unit cannot be): exp(-h) = 2^t, t = -h log2(e) clamped to +-125, is 2^r (r = t rounded,
    added to the exponent bits) times 2^(t - r) from its degree-6 Taylor polynomial
    (|t - r| <= 1/2). Absolute error at most 1.1e-7 against the exact sigmoid (float32
    rounding alone: 0.9e-7); about a fifth off the forward pass. h[nh:2nh] is scratch.
    Compiled with numpy's error model: numba's default checks each division for a zero
    divisor (to raise ZeroDivisionError), which keeps the last loop scalar; 1 + 2^t is
    never 0, and the quotients are the same. Half the layer's time."""
    if h.shape[0] < 2 * nh:
        raise ValueError("the hidden-layer scratch must hold twice the net's hidden units")
    bits = h.view(np.int32)
    for j in range(nh):
        t = h[j] * np.float32(-1.4426950408889634)
        t = min(max(t, np.float32(-125.0)), np.float32(125.0))
        r = np.float32(math.floor(t + np.float32(0.5)))
        f = (t - r) * np.float32(0.6931471805599453)
        p = np.float32(1.0 / 720.0)
        p = p * f + np.float32(1.0 / 120.0)
        p = p * f + np.float32(1.0 / 24.0)
        p = p * f + np.float32(1.0 / 6.0)
        p = p * f + np.float32(0.5)
        p = p * f + np.float32(1.0)
        h[j] = p * f + np.float32(1.0)
        bits[nh + j] = np.int32(r) << 23
    for j in range(nh):
        bits[j] += bits[nh + j]
    for j in range(nh):
        h[j] = np.float32(1.0) / (np.float32(1.0) + h[j])


@njit
def _hidden_scratch(contact, race):
    """The length of the `hidden` scratch that _forward needs for either net: twice the
    wider net's hidden units (_sigmoid_layer's scratch half)."""
    return 2 * max(contact[1].shape[0], race[1].shape[0])


@njit
def _search_scratch(contact, race, prune):
    """The length of a `hidden` scratch shared by _forward (either main net) and
    _prune_score (the pruning net prune), as the search and the rollouts use it."""
    return max(_hidden_scratch(contact, race), prune[1].shape[0])


@njit(**NO_REFCOUNT)
def _forward(x, net, hidden, out):
    """One position: inputs x (I,) float32 -> out (5,) float32 probabilities.
    hidden: (>= 2H,) float32 scratch. Sums only over the nonzero inputs; the five output
    sums run side by side (each still adds the hidden units in order)."""
    w1, b1, w2, b2 = net
    _input_sums(x, w1, b1, hidden)
    _output(hidden, b1.shape[0], w2, b2, out)


@njit(**NO_REFCOUNT)
def _input_sums(x, w1, b1, h):
    """h[:H] = b1 + x w1, the hidden units' sums before the sigmoid, adding only the rows
    of the nonzero inputs."""
    nh = b1.shape[0]
    for j in range(nh):
        h[j] = b1[j]
    for i in range(x.shape[0]):
        v = x[i]
        if v != 0.0:
            for j in range(nh):
                h[j] += v * w1[i, j]


@njit(**NO_REFCOUNT)
def _forward_from(x, xb, hb, net, hidden, out):
    """_forward(x, net, hidden, out) from another position's inputs xb and their sums hb
    (_input_sums): only the rows of the inputs that differ are added, (x - xb) times each.
    A play's position and the position before it, both seen by the side to roll next,
    differ in about 18 of the 227 contact inputs (the refset's plays), where a position
    has about 42 nonzero ones. The same probabilities up to float32 rounding (the sums
    run in another order; tests/test_eval.py)."""
    w1, b1, w2, b2 = net
    nh = b1.shape[0]
    for j in range(nh):
        hidden[j] = hb[j]
    for i in range(x.shape[0]):
        v = x[i] - xb[i]
        if v != 0.0:
            for j in range(nh):
                hidden[j] += v * w1[i, j]
    _output(hidden, nh, w2, b2, out)


@njit(**NO_REFCOUNT)
def _output(hidden, nh, w2, b2, out):
    """out = the five probabilities from the hidden sums hidden[:nh] (hidden[nh:2nh]:
    scratch): the sigmoid layer, the output sums, their sigmoids, made consistent."""
    _sigmoid_layer(hidden, nh)
    s0, s1, s2, s3, s4 = b2[0], b2[1], b2[2], b2[3], b2[4]
    for j in range(nh):
        h = hidden[j]
        s0 += h * w2[j, 0]
        s1 += h * w2[j, 1]
        s2 += h * w2[j, 2]
        s3 += h * w2[j, 3]
        s4 += h * w2[j, 4]
    out[0] = _sigmoid(s0)
    out[1] = _sigmoid(s1)
    out[2] = _sigmoid(s2)
    out[3] = _sigmoid(s3)
    out[4] = _sigmoid(s4)
    # Consistency: gammons within wins, backgammons within gammons.
    out[1] = min(out[1], out[0])
    out[2] = min(out[2], out[1])
    out[3] = min(out[3], 1.0 - out[0])
    out[4] = min(out[4], out[3])


@njit(**NO_REFCOUNT)
def _add_row(hidden, w1, k, v):
    for j in range(hidden.shape[0]):
        hidden[j] += v * w1[k, j]


@njit(**NO_REFCOUNT)
def _prune_score(b, net, flipped, hidden):
    """The pruning net's estimate of b's cubeless equity for its side on roll. It adds
    the rows of the nonzero raw inputs (doublet.nn.encode._raw_into's) straight into the
    hidden layer. flipped: (SIZE,) int8 scratch; hidden: (>= H,) float32 scratch."""
    w1, b1, w2, b2 = net
    nh = b1.shape[0]
    h = hidden[:nh]
    for j in range(nh):
        h[j] = b1[j]
    flip_into(b, flipped)
    for side in range(2):
        s = b if side == 0 else flipped
        base = side * _RAW_PER_SIDE
        for p in range(1, 25):
            n = s[p]
            if n > 0:
                k = base + 4 * (p - 1)
                if n == 1:
                    _add_row(h, w1, k, np.float32(1.0))
                elif n == 2:
                    _add_row(h, w1, k + 1, np.float32(1.0))
                else:
                    _add_row(h, w1, k + 2, np.float32(1.0))
                    if n > 3:
                        _add_row(h, w1, k + 3, np.float32((n - 3) / 2.0))
        if s[MY_BAR] != 0:
            _add_row(h, w1, base + 96, np.float32(s[MY_BAR] / 2.0))
        if s[MY_OFF] != 0:
            _add_row(h, w1, base + 97, np.float32(s[MY_OFF] / 15.0))
        if s[MY_OUT] != 0:
            _add_row(h, w1, base + 98, np.float32(s[MY_OUT] / 15.0))
    e = np.float32(b2[0])
    for j in range(nh):
        e += max(h[j], np.float32(0.0)) * w2[j, 0]  # ReLU, without a branch to mispredict
    return e


def _prune_rows() -> tuple[np.ndarray, np.ndarray]:
    """The pruning net's first-layer rows of each board entry and value, as _prune_score
    sees them on the flipped board (the view of the side to roll next: side 0 there is
    this board's opponent, side 1 its mover): for entry j (mover's view) holding v,
    rows[j, v + 15] = (k1, k2) and scales[j, v + 15] = (s1, s2) say that the entry adds
    s1 * w1[k1] + s2 * w1[k2] to the hidden sums (scale 0: no row)."""
    rows = np.zeros((SIZE, 31, 2), np.int64)
    scales = np.zeros((SIZE, 31, 2), np.float32)
    for j in range(SIZE):
        for v in range(-15, 16):
            pairs: list[tuple[int, float]] = []
            if v == 0:
                pass
            elif 1 <= j <= 24:
                k, n = (_RAW_PER_SIDE + 4 * (j - 1), v) if v > 0 else (4 * (24 - j), -v)
                pairs = [(k + min(n, 3) - 1, 1.0)]
                if n > 3:
                    pairs.append((k + 3, (n - 3) / 2.0))
            elif j == 0 and v < 0:  # OPP_BAR, stored <= 0
                pairs = [(96, -v / 2.0)]
            elif j == MY_BAR and v > 0:
                pairs = [(_RAW_PER_SIDE + 96, v / 2.0)]
            elif j == MY_OFF and v > 0:
                pairs = [(_RAW_PER_SIDE + 97, v / 15.0)]
            elif j == MY_OFF + 1 and v > 0:  # OPP_OFF
                pairs = [(97, v / 15.0)]
            elif j == MY_OUT and v > 0:
                pairs = [(_RAW_PER_SIDE + 98, v / 15.0)]
            elif j == MY_OUT + 1 and v > 0:  # OPP_OUT
                pairs = [(98, v / 15.0)]
            for slot, (k, sc) in enumerate(pairs):
                rows[j, v + 15, slot] = k
                scales[j, v + 15, slot] = sc
    return rows, scales


PRUNE_ROWS, PRUNE_SCALES = _prune_rows()


@njit(**NO_REFCOUNT)
def _prune_base(parent, w1, b1, base, rows, scales):
    """base[:H] = the pruning net's (w1, b1) hidden sums (before the ReLU) of
    flip(parent): the reference that _prune_delta_score moves from, one per roll (parent:
    mover's view; rows, scales: PRUNE_ROWS, PRUNE_SCALES)."""
    nh = b1.shape[0]
    for u in range(nh):
        base[u] = b1[u]
    for j in range(SIZE):
        c = parent[j] + 15
        k1, k2 = rows[j, c, 0], rows[j, c, 1]
        s1, s2 = scales[j, c, 0], scales[j, c, 1]
        for u in range(nh):
            base[u] += s1 * w1[k1, u] + s2 * w1[k2, u]


@njit(**NO_REFCOUNT)
def _prune_delta_score(parent, out, w1, w2, b2, base, hidden, rows, scales):
    """_prune_score(flip(out)) of the pruning net (w1, b1, w2, b2), from _prune_base's
    sums of flip(parent): only the rows of the board entries the play changed are taken
    away and added (a play changes about 5 of them; the full sum adds a row for each
    occupied point). out, parent: mover's view; hidden: (>= H,) float32 scratch; rows,
    scales: PRUNE_ROWS, PRUNE_SCALES. Equal to _prune_score up to float rounding
    (tests/test_search.py)."""
    nh = base.shape[0]
    for u in range(nh):
        hidden[u] = base[u]
    for j in range(SIZE):
        if out[j] != parent[j]:
            a, c = parent[j] + 15, out[j] + 15
            ka1, ka2, kc1, kc2 = rows[j, a, 0], rows[j, a, 1], rows[j, c, 0], rows[j, c, 1]
            sa1, sa2 = scales[j, a, 0], scales[j, a, 1]
            sc1, sc2 = scales[j, c, 0], scales[j, c, 1]
            for u in range(nh):
                now = sc1 * w1[kc1, u] + sc2 * w1[kc2, u]
                hidden[u] += now - (sa1 * w1[ka1, u] + sa2 * w1[ka2, u])
    e = np.float32(b2[0])
    for u in range(nh):
        e += max(hidden[u], np.float32(0.0)) * w2[u, 0]  # ReLU, without a branch
    return e


@njit
def _prune_batch(boards, net, out):
    flipped = np.empty(SIZE, np.int8)
    hidden = np.empty(net[1].shape[0], np.float32)
    for i in range(boards.shape[0]):
        out[i] = _prune_score(boards[i], net, flipped, hidden)


def prune_scores(boards: Boards, net: Net) -> np.ndarray:
    """The pruning net's equity estimates (N,) for the side on roll of boards (N, SIZE)."""
    bs = np.ascontiguousarray(boards, dtype=np.int8)
    if bs.ndim == 1:
        bs = bs[None, :]
    out = np.empty(bs.shape[0], np.float32)
    _prune_batch(bs, net, out)
    return out


@njit(**NO_REFCOUNT)
def _terminal(b, out):
    """Exact probabilities of a finished game for the side on roll; False if not finished."""
    r = _outcome(b)
    if r == 0:
        return False
    for k in range(N_OUTPUTS):
        out[k] = 0.0
    if r > 0:
        out[0] = 1.0
        out[1] = 1.0 if r >= 2 else 0.0
        out[2] = 1.0 if r >= 3 else 0.0
    else:
        out[3] = 1.0 if r <= -2 else 0.0
        out[4] = 1.0 if r <= -3 else 0.0
    return True


@njit(**NO_REFCOUNT)
def _evaluate_one(b, contact, race, x, hidden, flipped, out):
    """out = probabilities for the side on roll of b. x, hidden, flipped: scratch."""
    if _terminal(b, out):
        return
    _encode_into(b, x, flipped, HITS_OPEN, ESCAPES)
    if has_contact(b):
        _forward(x, contact, hidden, out)
    else:
        _forward(x, race, hidden, out)


@njit(**NO_REFCOUNT)
def _near_base(b, contact, xb, hb, flipped):
    """xb = b's inputs and hb = their sums in the contact net (_input_sums): the base
    _evaluate_near moves from. flipped: (SIZE,) int8 scratch."""
    _encode_into(b, xb, flipped, HITS_OPEN, ESCAPES)
    _input_sums(xb, contact[0], contact[1], hb)


@njit(**NO_REFCOUNT)
def _evaluate_near(b, contact, x, hidden, flipped, xb, hb, out):
    """_evaluate_one(b, ...) of a position b with contact, from _near_base's xb and hb of a
    position near it (_forward_from): the search values a roll's plays from the position
    before it, seen by the side to roll next."""
    _encode_into(b, x, flipped, HITS_OPEN, ESCAPES)
    _forward_from(x, xb, hb, contact, hidden, out)


@njit(**NO_REFCOUNT)
def _no_impossible_gammons(b, out):
    """A side that has borne off a checker can no longer lose a gammon (nor a
    backgammon): the net's figure for it, which is near 0 but not 0 (up to 0.06 and 0.12
    on the refset's positions), is set to 0, as the rules have it. The search's static
    value applies it (doublet.search.searcher._v0); the net's own outputs (evaluate, and
    training, which fits them) are left as they are."""
    if b[MY_OFF] != 0:
        out[3] = 0.0
        out[4] = 0.0
    if b[OPP_OFF] != 0:
        out[1] = 0.0
        out[2] = 0.0


@njit
def _evaluate_batch(boards, contact, race, out):
    """Probabilities for the side on roll of each board: boards (N, SIZE) -> out (N, 5)."""
    x = np.empty(N_INPUTS, np.float32)
    hidden = np.empty(_hidden_scratch(contact, race), np.float32)
    flipped = np.empty(SIZE, np.int8)
    for i in range(boards.shape[0]):
        _evaluate_one(boards[i], contact, race, x, hidden, flipped, out[i])


@njit(**NO_REFCOUNT)
def _equity(p):
    return 2.0 * p[0] - 1.0 + p[1] - p[3] + p[2] - p[4]


@njit(**NO_REFCOUNT)
def _mover_probs(p, again, out):
    """out = the mover's probabilities from p, those of the side on roll after its play
    (the opponent's, unless the mover rolls again)."""
    if again:
        for k in range(N_OUTPUTS):
            out[k] = p[k]
    else:
        out[0] = 1.0 - p[0]
        out[1] = p[3]
        out[2] = p[4]
        out[3] = p[1]
        out[4] = p[2]


@njit
def _score_outcomes(n, boards, again, contact, race, probs):
    """probs[:n] = the mover's probabilities after each outcome boards[:n] (mover's view)."""
    x = np.empty(N_INPUTS, np.float32)
    hidden = np.empty(_hidden_scratch(contact, race), np.float32)
    seen = np.empty(SIZE, np.int8)
    flipped = np.empty(SIZE, np.int8)
    p = np.empty(N_OUTPUTS, np.float32)
    for i in range(n):
        if again[i]:
            _evaluate_one(boards[i], contact, race, x, hidden, flipped, p)
        else:
            flip_into(boards[i], seen)
            _evaluate_one(seen, contact, race, x, hidden, flipped, p)
        _mover_probs(p, again[i], probs[i])


@njit
def _choose(b, d1, d2, variant, contact, race, acc, tmp, scratch, probs):
    """0-ply choice: index of the outcome of d1-d2 best for the mover (its cubeless
    equity), and the count n; probs[:n] gets every outcome's probabilities for the mover.
    Returns (-1, -1) when the buffers are too small."""
    n = _outcomes(b, d1, d2, variant, acc, tmp, scratch)
    if n < 0 or n > probs.shape[0]:
        return -1, -1
    _score_outcomes(n, acc[0], acc[1], contact, race, probs)
    best = 0
    best_eq = -1e9
    for i in range(n):
        e = _equity(probs[i])
        if e > best_eq:
            best_eq = e
            best = i
    return best, n


# --------------------------------------------------------------------------------------
# Wrappers
# --------------------------------------------------------------------------------------


def evaluate(boards: Boards, model: Model) -> np.ndarray:
    """Probabilities (N, 5) for the side on roll of each board (N, SIZE) or one board."""
    bs = board_array(boards)
    single = bs.ndim == 1
    if single:
        bs = bs[None, :]
    if not bs.flags.writeable:
        bs = bs.copy()
    out = np.empty((bs.shape[0], N_OUTPUTS), np.float32)
    _evaluate_batch(bs, model.contact, model.race, out)
    return out[0] if single else out


def equity(probs: np.ndarray) -> np.ndarray | float:
    """Cubeless money equity: 2 W - 1 + WG - LG + WBG - LBG (probs (..., 5))."""
    p = np.asarray(probs, dtype=np.float64)
    if p.shape == (5,):  # one position: _equity's sums in Python floats, without numpy's
        return float(getattr(_equity, "py_func", _equity)(p.tolist()))
    e = 2 * p[..., 0] - 1 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]
    return float(e) if e.ndim == 0 else e


class Player:
    """A 0-ply player: plays the outcome with the best cubeless equity for the mover."""

    def __init__(self, model: Model, variant: int | None = None) -> None:
        self.model = model
        self.variant = model.variant if variant is None else variant
        self.ws = Workspace()
        self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)

    def choose(self, board: np.ndarray, d1: int, d2: int) -> tuple[int, np.ndarray, np.ndarray]:
        """(index of the chosen outcome, outcome boards (n, SIZE), again (n,) bool)."""
        check_dice(d1, d2)
        b = board_array(board).copy()
        if b.ndim != 1:
            raise InvalidPositionError(f"choose takes one board ({SIZE},), got {b.shape}")
        while True:
            best, n = _choose(b, d1, d2, self.variant, self.model.contact, self.model.race,
                              self.ws.acc, self.ws.tmp, self.ws.scratch, self.probs)  # fmt: skip
            if n >= 0:
                return int(best), self.ws.out[:n].copy(), self.ws.again[:n].astype(bool)
            self.ws.allocate(self.ws.capacity * 4)
            self.probs = np.empty((self.ws.capacity, N_OUTPUTS), np.float32)

    def ranked(self, board: np.ndarray, d1: int, d2: int) -> list[tuple[int, float, np.ndarray]]:
        """Every outcome as (index, equity, probs), best first."""
        _, boards, _ = self.choose(board, d1, d2)
        probs = self.probs[: len(boards)].copy()
        eq = np.asarray(equity(probs)).reshape(-1)
        order = np.argsort(-eq, kind="stable")
        return [(int(i), float(eq[i]), probs[i]) for i in order]


__all__ = [
    "DEFAULT_MODELS",
    "MODELS_DIR",
    "VARIANT_NAMES",
    "Model",
    "ModelError",
    "Player",
    "default_model",
    "equity",
    "evaluate",
    "is_default_model",
    "load_model",
    "prune_scores",
    "random_model",
    "save_model",
    "with_step",
]
