"""Races valued one side at a time: the one-sided bear-off database carried past the home
board by a small net (doublet.training.onesided makes it, from the rules alone).

In a race each side's future depends on its own checkers and dice. For one side's
checkers (a *config*: [0] = checkers off, [1..23] = checkers on its points 1..23), the
net gives two distributions over 0..TURNS-1 turns: to bear off every checker (played to
need few turns on average) and to bear off the first (a point mass at 0 once one is
off); configs within the home board take the database's exact ones (doublet.rules.bearoff).
The side on roll A wins when it needs no more turns than B, wins a gammon when it
finishes before B's first checker is off, and loses one when B finishes before A's
first is off:

    P(win)        = sum_t P(T_all(A) = t) P(T_all(B) >= t)
    P(win gammon) = sum_t P(T_all(A) = t) P(T_first(B) >= t)
    P(lose gammon) = sum_t P(T_all(B) = t) P(T_first(A) >= t + 1)

The backgammons are doublet.rules.bearoff._race_backgammon's. The net: FEATURES inputs
(points 1..23 as four units each as doublet.nn.encode has them, checkers off / 15, pips
/ 150, checkers outside the home board / 15, quadrants they must still cross / 30), two
ReLU layers, two softmax heads. The file, models/doublet-onesided.npz, holds its arrays
``{l1,l2,all,first}_{w,b}`` (w: inputs x outputs) and ``meta`` (JSON, ``kind``
"doublet-onesided", how it was made). training/onesided.py's numpy forward pass is the
slow reference these kernels are tested against (tests/test_onesided.py).
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np

from doublet.core.board import MY_OFF, OPP_OFF
from doublet.core.errors import ModelError
from doublet.core.jit import NO_REFCOUNT, njit
from doublet.rules.bearoff import _BINOM, _rank_counts, database

TURNS = 64
FEATURES = 23 * 4 + 4
KIND = "doublet-onesided"
FILE = "doublet-onesided.npz"
_NAMES = ("l1_w", "l1_b", "l2_w", "l2_b", "all_w", "all_b", "first_w", "first_b")


class Net(NamedTuple):
    """The one-sided net's arrays (float32), as the kernels take them."""

    l1_w: np.ndarray  # (FEATURES, H)
    l1_b: np.ndarray
    l2_w: np.ndarray  # (H, H)
    l2_b: np.ndarray
    all_w: np.ndarray  # (H, TURNS)
    all_b: np.ndarray
    first_w: np.ndarray  # (H, TURNS)
    first_b: np.ndarray


def empty() -> Net:
    """A stand-in of the same types for a search without the net (l1_w has 0 rows)."""
    z2, z1 = np.zeros((0, 1), np.float32), np.zeros(1, np.float32)
    return Net(z2, z1, z2, z1, z2, z1, z2, z1)


_SHIPPED: Net | None = None


def shipped() -> Net:
    """The shipped net (models/doublet-onesided.npz, or $DOUBLET_MODEL_DIR's), loaded
    once; empty() when there is no such file."""
    global _SHIPPED
    if _SHIPPED is None:
        folder = os.environ.get("DOUBLET_MODEL_DIR") or str(resources.files("doublet.models"))
        path = Path(folder) / FILE
        _SHIPPED = load(path) if path.exists() else empty()
    return _SHIPPED


def load(path: str | os.PathLike[str]) -> Net:
    """Read a one-sided net file; ModelError says what is wrong with a bad one."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            arrays = [np.ascontiguousarray(z[k], dtype=np.float32) for k in _NAMES]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise ModelError(f"{str(path)!r} is not a one-sided race net ({e or type(e).__name__})"
                         ) from None  # fmt: skip
    if not isinstance(meta, dict) or meta.get("kind") != KIND:
        raise ModelError(f"{str(path)!r} is not a one-sided race net (its meta's kind is not "
                         f"{KIND!r})")  # fmt: skip
    net = Net(*arrays)
    h = net.l1_w.shape[1] if net.l1_w.ndim == 2 else -1
    shapes = {"l1_w": (FEATURES, h), "l1_b": (h,), "l2_w": (h, h), "l2_b": (h,),
              "all_w": (h, TURNS), "all_b": (TURNS,), "first_w": (h, TURNS),
              "first_b": (TURNS,)}  # fmt: skip
    for name, a in zip(_NAMES, arrays, strict=True):
        if a.shape != shapes[name] or not np.isfinite(a).all():
            raise ModelError(f"{str(path)!r}: the one-sided net's {name} is {a.shape}, not "
                             f"{shapes[name]}, or not finite")  # fmt: skip
    return net


@njit(**NO_REFCOUNT)
def _config_into(b, sign, c):
    """One side of race board b as a config into c (24,) int64: sign 1 the side on roll,
    -1 the other (its point q is the board's 25 - q)."""
    if sign == 1:
        c[0] = b[MY_OFF]
        for p in range(1, 24):
            c[p] = max(b[p], 0)
    else:
        c[0] = b[OPP_OFF]
        for q in range(1, 24):
            c[q] = max(-b[25 - q], 0)


@njit(**NO_REFCOUNT)
def _in_home(c):
    for p in range(7, 24):
        if c[p] != 0:
            return False
    return True


@njit(**NO_REFCOUNT)
def _softmax(z, out):
    m = z[0]
    for t in range(1, z.shape[0]):
        m = max(m, z[t])
    s = 0.0
    for t in range(z.shape[0]):
        out[t] = np.exp(z[t] - m)
        s += out[t]
    for t in range(z.shape[0]):
        out[t] /= s


@njit(**NO_REFCOUNT)
def _add_row(h, w, k, v):
    for j in range(h.shape[0]):
        h[j] += v * w[k, j]


@njit(**NO_REFCOUNT)
def _head(h, w, b, z, out):
    """out = softmax(b + h's positive units times w); z: (TURNS,) float64 scratch."""
    for t in range(TURNS):
        z[t] = b[t]
    for k in range(h.shape[0]):
        v = h[k]
        if v > 0.0:
            for t in range(TURNS):
                z[t] += v * w[k, t]
    _softmax(z, out)


@njit(**NO_REFCOUNT)
def _net_dists(c, net, h1, h2, z, all_out, first_out):
    """The net's two distributions for config c (h1, h2: (H,) float32 scratch; z: (TURNS,)
    float64 scratch). The input rows are blocked by unit as doublet.training.onesided's
    features: n >= 1 of point p at p - 1, n >= 2 at 23 + p - 1, n >= 3 at 46 + p - 1,
    (n - 3) / 2 at 69 + p - 1, then off, pips, outside, crossings."""
    l1_w, l1_b, l2_w, l2_b, all_w, all_b, first_w, first_b = net
    nh = l1_b.shape[0]
    for j in range(nh):
        h1[j] = l1_b[j]
    pips = 0
    outside = 0
    cross = 0
    for p in range(1, 24):
        n = c[p]
        if n == 0:
            continue
        i = p - 1
        _add_row(h1, l1_w, i, np.float32(1.0))
        if n >= 2:
            _add_row(h1, l1_w, 23 + i, np.float32(1.0))
        if n >= 3:
            _add_row(h1, l1_w, 46 + i, np.float32(1.0))
        if n > 3:
            _add_row(h1, l1_w, 69 + i, np.float32((n - 3) / 2.0))
        pips += p * n
        if p >= 7:
            outside += n
        cross += n * ((p - 1) // 6)
    if c[0] != 0:
        _add_row(h1, l1_w, 92, np.float32(c[0] / 15.0))
    _add_row(h1, l1_w, 93, np.float32(pips / 150.0))
    if outside != 0:
        _add_row(h1, l1_w, 94, np.float32(outside / 15.0))
    if cross != 0:
        _add_row(h1, l1_w, 95, np.float32(cross / 30.0))
    for j in range(nh):
        h2[j] = l2_b[j]
    for k in range(nh):
        v = h1[k]
        if v > 0.0:
            _add_row(h2, l2_w, k, v)
    _head(h2, all_w, all_b, z, all_out)
    _head(h2, first_w, first_b, z, first_out)


@njit(**NO_REFCOUNT)
def _drop_zero(d):
    """d without its mass at 0 turns, renormalised."""
    d[0] = 0.0
    s = 0.0
    for t in range(d.shape[0]):
        s += d[t]
    for t in range(d.shape[0]):
        d[t] /= s


@njit(**NO_REFCOUNT)
def _side_dists(c, net, off, first, binom, h1, h2, z, all_out, first_out):
    """Config c's two distributions: the database's in the home board (off, first:
    doublet.rules.bearoff's tables, binom its ranks: _rank_counts), else the net's
    without mass at 0 turns; the first a point mass at 0 once a checker is off."""
    if _in_home(c):
        r = _rank_counts(c[1:7], binom)
        for t in range(TURNS):
            all_out[t] = 0.0
            first_out[t] = 0.0
        for t in range(min(TURNS, off.shape[1])):
            all_out[t] = off[r, t]
            first_out[t] = first[r, t]
    else:  # checkers outside the home board: at least a turn to go
        _net_dists(c, net, h1, h2, z, all_out, first_out)
        _drop_zero(all_out)
        _drop_zero(first_out)
    if c[0] > 0:
        for t in range(TURNS):
            first_out[t] = 0.0
        first_out[0] = 1.0


@njit(**NO_REFCOUNT)
def present(net):
    """Whether net (a plain tuple of Net's arrays) is a net, not empty()'s stand-in."""
    return net[0].shape[0] == FEATURES


CACHE_BITS = 14


def new_cache(bits: int = CACHE_BITS, hidden: int = 1) -> tuple[np.ndarray, ...]:
    """A cache of configs' distributions (keys, configs, dists): a slot per key's low
    bits, the whole config compared; 2^bits slots (about 1 KB each). Then
    race_probs_into's scratch for a net of `hidden` units (hidden sums (2, hidden), the
    logits (TURNS,), both sides' distributions (4, TURNS), a config (24,)): a race
    evaluation allocates nothing, so the search's static value (which calls it) needs
    no allocation. One cache serves one thread."""
    size = 1 << bits
    return (np.full(size, -1, np.int64), np.zeros((size, 24), np.int8),
            np.zeros((size, 2, TURNS), np.float64), np.zeros((2, hidden), np.float32),
            np.zeros(TURNS, np.float64), np.zeros((4, TURNS), np.float64),
            np.zeros(24, np.int64))  # fmt: skip


@njit(**NO_REFCOUNT)
def _config_key(c):
    h = np.int64(0x5BD1E995)
    for p in range(24):
        h = (h ^ c[p]) * np.int64(0x100000001B3)
        h ^= h >> 29
    return h & np.int64(0x7FFFFFFFFFFFFFFF)


@njit(**NO_REFCOUNT)
def _cached_dists(c, net, off, first, binom, cache, h1, h2, z, all_out, first_out):
    """_side_dists, through the cache for configs outside the home board (a search meets
    the same side again and again: every reply of a roll leaves the other side as it
    was)."""
    if _in_home(c):
        _side_dists(c, net, off, first, binom, h1, h2, z, all_out, first_out)
        return
    keys, configs, dists = cache[0], cache[1], cache[2]
    k = _config_key(c)
    slot = k & (keys.shape[0] - 1)
    if keys[slot] == k:
        same = True
        for p in range(24):
            if configs[slot, p] != c[p]:
                same = False
                break
        if same:
            for t in range(TURNS):
                all_out[t] = dists[slot, 0, t]
                first_out[t] = dists[slot, 1, t]
            return
    _side_dists(c, net, off, first, binom, h1, h2, z, all_out, first_out)
    keys[slot] = k
    for p in range(24):
        configs[slot, p] = c[p]
    for t in range(TURNS):
        dists[slot, 0, t] = all_out[t]
        dists[slot, 1, t] = first_out[t]


@njit
def race_probs_into(b, net, off, first, binom, cache, out):
    """out[0], out[1], out[3] (P(win), P(win gammon), P(lose gammon)) of race board b for
    the side on roll, from both sides' distributions (the module docstring; each side's
    through `cache`, new_cache's for a net of this width, whose scratch it uses); out[2]
    and out[4] set to 0 (doublet.rules.bearoff._race_backgammon fills them)."""
    h1, h2 = cache[3][0], cache[3][1]
    z, d, c = cache[4], cache[5], cache[6]  # d: A all, A first, B all, B first
    _config_into(b, 1, c)
    _cached_dists(c, net, off, first, binom, cache, h1, h2, z, d[0], d[1])
    _config_into(b, -1, c)
    _cached_dists(c, net, off, first, binom, cache, h1, h2, z, d[2], d[3])
    win = 0.0
    win_gammon = 0.0
    lose_gammon = 0.0
    sb = 0.0  # P(T_all(B) >= t), built from the top
    sfb = 0.0
    sfa = 0.0  # P(T_first(A) >= t + 1)
    for t in range(TURNS - 1, -1, -1):
        sb += d[2, t]
        sfb += d[3, t]
        win += d[0, t] * sb
        win_gammon += d[0, t] * sfb
        lose_gammon += d[2, t] * sfa
        sfa += d[1, t]
    win = min(max(win, 0.0), 1.0)
    out[0] = win
    out[1] = min(max(win_gammon, 0.0), win)
    out[2] = 0.0
    out[3] = min(max(lose_gammon, 0.0), 1.0 - win)
    out[4] = 0.0


def race_probs(boards: np.ndarray, net: Net) -> np.ndarray:
    """(n, 5) float32: race_probs_into for each board (no backgammons: out[2], out[4] 0)."""
    db, plain = database(), tuple(net)
    out = np.zeros((len(boards), 5), np.float32)
    cache = new_cache(8, plain[1].shape[0])
    for i, b in enumerate(np.asarray(boards, np.int8)):
        race_probs_into(b, plain, db.off, db.first, _BINOM, cache, out[i])
    return out
