"""A one-sided race evaluator learned by fitted value iteration (issue 24's races).

    python -m doublet.training.onesided fit --out PATH [--model M] [--games 20000] [--epsilon 0.4]
        [--configs 60000] [--rounds 20] [--hidden 128] [--seed 1] [--init PATH] [--resume]

In a race the two sides never meet, so each side's future depends on its own checkers
and dice only. GNU Backgammon's one-sided bear-off database, and Doublet's
(doublet.rules.bearoff), store for every home-board position the distribution of the
number of turns its side needs to bear off all its checkers (played to make that number
small on average) and to bear off its first one (for gammons); two such distributions
give the race's chances. This extends them past the home board with a net:

- a side's checkers as a *config*: int8 (24,), [0] = checkers off, [1..23] = checkers
  on points 1..23 in its own numbering (a racing side has none on its 24 point);
- the net: FEATURES inputs (points 1..23 as four units each, as doublet.nn.encode does;
  checkers off / 15, pips / 150, checkers outside the home board / 15, quadrants they
  must still cross / 30), two ReLU layers of `hidden` units, two softmax heads over
  0..TURNS-1 turns: ``all`` (every checker off) and ``first`` (the first checker off;
  a point mass at 0 once one is off);
- the targets, from the rules alone: for a config c, T(c) = 1 + T(the successor of the
  roll's play that needs the fewest turns on average), each of the 21 rolls weighted by
  its chance; successors in the home board take the database's exact distributions,
  the others the net's. ``fit`` repeats: targets from the current net for every training
  config, then a few epochs of cross-entropy (Adam). Each round moves exact values one
  turn further out; the mean number of turns settles within about 15 rounds from a
  random start;
- the training configs: both sides of every race position of `--games` games of the
  shipped model's 0-ply self-play with a share `--epsilon` of random plays, without
  those the database holds, `--configs` of them drawn at random.

Two sides' distributions combine into a race's chances (`race_probs`): the side on roll
wins when it needs no more turns than the other, wins a gammon when it finishes before
the other's first checker is off, and so on. The engine's search values races this way
(doublet.rules.onesided, with models/doublet-onesided.npz, made by this module);
benchmarks/race_judge.py --onesided PATH measures the 0-ply choices a candidate makes
beside the engine's (benchmarks/HISTORY.md, session 24).

The file (written atomically after every round, so that ``--resume`` goes on from the
last round completed) holds the net's arrays and ``meta`` (JSON: the settings, the
rounds done and their losses, the command). The training configs are drawn again from
the seed on ``--resume``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

try:
    import torch
except ModuleNotFoundError as e:  # run without torch: one line, not a traceback
    from doublet.training.usage import torch_missing

    torch_missing(__name__, e, "python -m doublet.training.onesided")
from doublet.core import board as B
from doublet.core.dice import ROLL_WEIGHTS, ROLLS_21
from doublet.core.errors import DoubletError, TrainingError
from doublet.core.files import atomic_open, os_error_text
from doublet.core.jit import njit
from doublet.core.signals import interrupt_status, sigterm_interrupts, stop_signal
from doublet.nn.eval import command_line, default_model, model_for
from doublet.rules import onesided as engine_onesided
from doublet.rules.bearoff import _BINOM, _rank_counts, database, is_bearoff
from doublet.rules.movegen import legal_outcomes
from doublet.rules.onesided import FEATURES, KIND, TURNS
from doublet.search.searcher import Limits, Searcher
from doublet.training.progress import Progress, command_log

log = command_log("onesided")  # its progress where stderr is no terminal
POINTS = np.arange(1, 24, dtype=np.float32)


# -- configs -------------------------------------------------------------------------------
def config(board: np.ndarray) -> np.ndarray:
    """The mover's side of a race board as a config."""
    if B.has_contact(board):
        raise ValueError("a config is one side of a race: this position has contact")
    c = np.zeros(24, np.int8)
    c[1:24] = np.maximum(board[1:24], 0)
    c[0] = board[B.MY_OFF]
    return c


def in_home(configs: np.ndarray) -> np.ndarray:
    """Which configs the bear-off database holds (nothing outside points 1..6)."""
    return (np.asarray(configs)[:, 7:24] == 0).all(axis=1)


def _board(c: np.ndarray) -> np.ndarray:
    """A board holding config c for the mover and the other side out of its way (all 15
    on the mover's 24 point), so that the move generator plays c's rolls."""
    b = np.zeros(B.SIZE, np.int8)
    b[1:24] = c[1:24]
    b[B.MY_OFF] = c[0]
    b[24] = -B.CHECKERS
    return b


def successors(c: np.ndarray) -> list[np.ndarray]:
    """For each of the 21 rolls (doublet.core.dice.ROLLS_21), the configs its legal plays
    lead to (n, 24)."""
    b = _board(c)
    out = []
    for d1, d2 in ROLLS_21:
        boards, _ = legal_outcomes(b, int(d1), int(d2))
        s = np.zeros((len(boards), 24), np.int8)
        s[:, 1:24] = np.maximum(boards[:, 1:24], 0)
        s[:, 0] = boards[:, B.MY_OFF]
        out.append(s)
    return out


def features(configs: np.ndarray) -> np.ndarray:
    """(n, FEATURES) float32 inputs of the net."""
    cf = np.asarray(configs)
    c = cf[:, 1:24].astype(np.float32)
    units = [c >= 1, c >= 2, c >= 3, np.maximum(c - 3, 0) / 2]
    extra = [cf[:, 0] / 15.0, (c * POINTS).sum(1) / 150.0, c[:, 6:].sum(1) / 15.0,
             (c * ((POINTS - 1) // 6)).sum(1) / 30.0]  # fmt: skip
    return np.concatenate([u.astype(np.float32) for u in units]
                          + [np.stack(extra, 1).astype(np.float32)], 1)  # fmt: skip


@njit
def _ranks(configs, binom):
    out = np.empty(configs.shape[0], np.int64)
    c = np.zeros(6, np.int64)
    for i in range(configs.shape[0]):
        for k in range(6):
            c[k] = configs[i, 1 + k]
        out[i] = _rank_counts(c, binom)
    return out


# -- the net ---------------------------------------------------------------------------------
class Net(torch.nn.Module):
    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.l1 = torch.nn.Linear(FEATURES, hidden)
        self.l2 = torch.nn.Linear(hidden, hidden)
        self.all = torch.nn.Linear(hidden, TURNS)
        self.first = torch.nn.Linear(hidden, TURNS)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.relu(self.l2(torch.relu(self.l1(x))))
        return self.all(z), self.first(z)

    def arrays(self) -> dict[str, np.ndarray]:
        """The weights as numpy arrays (w: inputs x outputs)."""
        out = {}
        for name in ("l1", "l2", "all", "first"):
            layer = getattr(self, name)
            out[f"{name}_w"] = layer.weight.detach().numpy().T.copy()
            out[f"{name}_b"] = layer.bias.detach().numpy().copy()
        return out

    def load_arrays(self, z: Any) -> None:
        with torch.no_grad():
            for name in ("l1", "l2", "all", "first"):
                layer = getattr(self, name)
                layer.weight.copy_(torch.from_numpy(np.asarray(z[f"{name}_w"]).T.copy()))
                layer.bias.copy_(torch.from_numpy(np.asarray(z[f"{name}_b"]).copy()))


class OneSided:
    """A saved net (numpy only: no torch needed to use it) with the database beside it:
    dists(configs) gives each config's two distributions."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.a = {k: np.asarray(v, np.float32) for k, v in arrays.items()}
        db = database()
        n = db.off.shape[1]
        self.off = np.zeros((db.off.shape[0], TURNS), np.float32)
        self.off[:, :n] = db.off
        self.first = np.zeros((db.first.shape[0], TURNS), np.float32)
        self.first[:, :n] = db.first

    @classmethod
    def load(cls, path: str | Path) -> OneSided:
        """The file as the engine reads it (doublet.rules.onesided.load checks it)."""
        return cls(engine_onesided.load(path)._asdict())

    def net_dists(self, configs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = self.a
        z = np.maximum(features(configs) @ a["l1_w"] + a["l1_b"], 0)
        z = np.maximum(z @ a["l2_w"] + a["l2_b"], 0)
        return _softmax(z @ a["all_w"] + a["all_b"]), _softmax(z @ a["first_w"] + a["first_b"])

    def dists(self, configs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(all, first): (n, TURNS) distributions of the turns each config needs."""
        return _dists(configs, self.net_dists, self.off, self.first)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def _dists(configs: np.ndarray, net_dists: Any, off: np.ndarray,
           first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Exact in the home board (the database), net_dists elsewhere (its mass at 0 turns
    dropped: a config with checkers outside its home board needs at least one turn);
    ``first`` a point mass at 0 when a checker is off already."""
    configs = np.asarray(configs, np.int8)
    n = len(configs)
    a = np.zeros((n, TURNS), np.float32)
    f = np.zeros((n, TURNS), np.float32)
    home = in_home(configs)
    if home.any():
        r = _ranks(configs[home], _BINOM)
        a[home], f[home] = off[r], first[r]
    out = np.nonzero(~home)[0]
    for s in range(0, len(out), 65536):
        j = out[s : s + 65536]
        a[j], f[j] = net_dists(configs[j])
    if len(out):  # checkers on the board: none of it is over in 0 turns
        for d in (a, f):
            d[out, 0] = 0.0
            d[out] /= d[out].sum(axis=1, keepdims=True)
    some_off = configs[:, 0] > 0
    f[some_off] = 0.0
    f[some_off, 0] = 1.0
    return a, f


def race_probs(all_a: np.ndarray, first_a: np.ndarray, all_b: np.ndarray,
               first_b: np.ndarray) -> np.ndarray:  # fmt: skip
    """(n, 3): P(win), P(win a gammon), P(lose a gammon) of side A, on roll, against side
    B, from their distributions (A's t-th turn comes before B's t-th). Backgammons are
    not in it (doublet.rules.bearoff._race_backgammon has them)."""

    def survival(d: np.ndarray) -> np.ndarray:  # P(T >= t)
        return np.cumsum(d[:, ::-1], axis=1)[:, ::-1]

    win = (all_a * survival(all_b)).sum(1)
    win_gammon = (all_a * survival(first_b)).sum(1)
    later = np.zeros_like(first_a)
    later[:, :-1] = survival(first_a)[:, 1:]  # P(T_first(A) >= t + 1)
    lose_gammon = (all_b * later).sum(1)
    return np.stack([win, win_gammon, lose_gammon], 1)


def position_probs(onesided: OneSided, boards: np.ndarray,
                   backgammons: np.ndarray) -> np.ndarray:  # fmt: skip
    """(n, 5) probabilities for the side on roll of each race board (W, WG, WBG, LG,
    LBG): the win and gammon chances from the two sides' distributions, the
    backgammon chances (n, 2: win, lose) given, each gammon at least its backgammon."""
    boards = np.asarray(boards)
    a_all, a_first = onesided.dists(np.array([config(b) for b in boards]))
    b_all, b_first = onesided.dists(np.array([config(B.flip(b)) for b in boards]))
    w, wg, lg = race_probs(a_all, a_first, b_all, b_first).T
    wbg, lbg = np.asarray(backgammons, np.float32).T
    return np.stack([w, np.maximum(wg, wbg), wbg, np.maximum(lg, lbg), lbg], 1)


# -- fitting ---------------------------------------------------------------------------------
def race_configs(games: int, epsilon: float, seed: int, model: Any = None) -> np.ndarray:
    """Both sides of every race position of `games` self-play games of `model` (default:
    the shipped one; 0 ply, a share epsilon of random plays), without those the database
    holds; sorted, distinct."""
    rng = np.random.default_rng(seed)
    searcher, zero = Searcher(model or default_model()), Limits(ply=0)
    found = set()
    with Progress("self-play", games, "game", log, leave=False) as bar:
        for g in range(games):
            b = B.starting().copy()
            while True:
                d1, d2 = (int(d) for d in sorted(rng.integers(1, 7, 2), reverse=True))
                if not B.has_contact(b) and not is_bearoff(b):
                    found.add(config(b).tobytes())
                    found.add(config(B.flip(b)).tobytes())
                outs, again = legal_outcomes(b, d1, d2)
                if rng.random() < epsilon:
                    i = int(rng.integers(len(outs)))
                else:
                    i = searcher.best(b, d1, d2, zero)
                if outs[i][B.MY_OFF] == B.CHECKERS:
                    break
                b = outs[i] if again[i] else B.flip(outs[i])
            bar.update(g + 1)
    cf = np.frombuffer(b"".join(sorted(found)), np.int8).reshape(-1, 24).copy()
    return cf[~in_home(cf)]


class Problem:
    """The training configs with every roll's successors, flattened: successors of config
    i and roll r are succ[starts[i, r]:starts[i, r + 1]]."""

    def __init__(self, configs: np.ndarray) -> None:
        self.configs = np.asarray(configs, np.int8)
        self.starts = np.zeros((len(configs), 22), np.int64)
        parts, total = [], 0
        with Progress("successors", len(self.configs), "config", log, leave=False) as bar:
            for i, c in enumerate(self.configs):
                for r, s in enumerate(successors(c)):
                    self.starts[i, r] = total
                    parts.append(s)
                    total += len(s)
                self.starts[i, 21] = total
                bar.update(i + 1)
        self.succ = np.concatenate(parts)
        self.x = features(self.configs)


@njit
def _bellman(a, f, starts, weights, ta, tf):
    """ta[i] = sum over rolls of weight x the all-off distribution of the successor with
    the fewest turns on average, one turn later; tf the same for the first checker."""
    n, k = ta.shape
    ma = np.zeros(a.shape[0])
    mf = np.zeros(a.shape[0])
    for j in range(a.shape[0]):
        for t in range(k):
            ma[j] += t * a[j, t]
            mf[j] += t * f[j, t]
    for i in range(n):
        for r in range(21):
            lo, hi = starts[i, r], starts[i, r + 1]
            ja, jf = lo, lo
            for j in range(lo + 1, hi):
                if ma[j] < ma[ja]:
                    ja = j
                if mf[j] < mf[jf]:
                    jf = j
            w = weights[r]
            for t in range(1, k):
                ta[i, t] += w * a[ja, t - 1]
                tf[i, t] += w * f[jf, t - 1]


def targets(dists: Any, problem: Problem, block: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """One step of value iteration: the distributions each training config needs by the
    rules, its successors valued by `dists` (a function of configs), `block` configs at
    a time (their successors' distributions take 512 bytes each)."""
    n = len(problem.configs)
    ta = np.zeros((n, TURNS), np.float32)
    tf = np.zeros((n, TURNS), np.float32)
    weights = np.asarray(ROLL_WEIGHTS, np.float64)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        first, last = problem.starts[lo, 0], problem.starts[hi - 1, 21]
        a, f = dists(problem.succ[first:last])
        _bellman(a, f, problem.starts[lo:hi] - first, weights, ta[lo:hi], tf[lo:hi])
    return ta, tf


def _epochs(net: Net, x: np.ndarray, ta: np.ndarray, tf: np.ndarray, epochs: int, lr: float,
            gen: torch.Generator) -> float:  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    X, A, F = torch.from_numpy(x), torch.from_numpy(ta), torch.from_numpy(tf)
    total = 0.0
    for _ in range(epochs):
        perm = torch.randperm(len(X), generator=gen)
        total = 0.0
        for s in range(0, len(X), 512):
            j = perm[s : s + 512]
            la, lf = net(X[j])
            loss = (-(A[j] * torch.log_softmax(la, 1)).sum(1).mean()
                    - (F[j] * torch.log_softmax(lf, 1)).sum(1).mean())  # fmt: skip
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(j)
    return total / len(X)


def _torch_dists(net: Net, off: np.ndarray, first: np.ndarray) -> Any:
    def net_dists(configs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            la, lf = net(torch.from_numpy(features(configs)))
            return torch.softmax(la, 1).numpy(), torch.softmax(lf, 1).numpy()

    return lambda configs: _dists(configs, net_dists, off, first)


def save(path: Path, net: Net, meta: dict[str, Any]) -> None:
    with atomic_open(path) as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **net.arrays())


def fit(args: argparse.Namespace, argv: list[str] | None) -> int:
    out: Path = args.out
    torch.manual_seed(args.seed)  # before the net: its initial weights come from the seed
    net = Net(args.hidden)
    meta: dict[str, Any] = {"kind": KIND, "turns": TURNS, "features": FEATURES,
                            "hidden": args.hidden, "games": args.games,
                            "epsilon": args.epsilon, "configs": args.configs,
                            "seed": args.seed, "model": args.model and str(args.model),
                            "rounds": [],
                            "command": command_line("python -m doublet.training.onesided",
                                                    argv)}  # fmt: skip
    if args.resume:
        if not out.exists():
            raise TrainingError(f"--resume: no {out} to go on from")
        try:
            with np.load(out, allow_pickle=False) as z:
                old = json.loads(str(z["meta"]))
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise TrainingError(f"--resume: {out} cannot be read ({type(e).__name__}: a file cut "
                             "short or not a one-sided net): remove it to start again, or "
                             "give another --out") from None  # fmt: skip
        if not isinstance(old, dict) or old.get("kind") != KIND:
            raise TrainingError(f"{out} is not a one-sided race net")
        for key in ("hidden", "games", "epsilon", "configs", "seed", "model"):
            if old.get(key) != meta[key]:
                raise TrainingError(f"--resume: {out} was made with --{key} {old.get(key)}, "
                                 f"not {meta[key]}")  # fmt: skip
        try:
            net.load_arrays(arrays)
        except (KeyError, RuntimeError) as e:  # a part missing, or of another shape
            raise TrainingError(f"--resume: {out} does not hold this net's weights ({e}): "
                             "remove it to start again, or give another --out"
                             ) from None  # fmt: skip
        meta["rounds"] = old["rounds"]
    elif args.init:
        net.load_arrays(OneSided.load(args.init).a)
        meta["init"] = str(args.init)
    done = len(meta["rounds"])
    if done >= args.rounds:
        print(f"{out}: {done} rounds done already")
        return 0
    gen = torch.Generator().manual_seed(args.seed + done)
    cf = race_configs(args.games, args.epsilon, args.seed,
                      model_for(args.model, B.STANDARD) if args.model else None)  # fmt: skip
    rng = np.random.default_rng(args.seed)
    if len(cf) > args.configs:
        cf = cf[np.sort(rng.choice(len(cf), args.configs, replace=False))]
    problem = Problem(cf)
    print(f"{len(cf):,} configs, {len(problem.succ):,} successors", flush=True)
    base = OneSided({})  # the database's tables
    dists = _torch_dists(net, base.off, base.first)
    with Progress("rounds", args.rounds, "round", log, initial=done) as bar:
        for rnd in range(done, args.rounds):
            t = time.perf_counter()
            ta, tf = targets(dists, problem)
            lr = args.lr if rnd < args.rounds // 2 else args.lr / 3
            loss = _epochs(net, problem.x, ta, tf, args.epochs, lr, gen)
            mean = float(ta.sum(0) @ np.arange(TURNS)) / len(ta)
            meta["rounds"].append({"loss": round(loss, 5), "mean_turns": round(mean, 4),
                                   "seconds": round(time.perf_counter() - t, 1)})  # fmt: skip
            save(out, net, meta)
            bar.update(rnd + 1, f"loss {loss:.4f}, turns {mean:.3f}")
    print(f"wrote {out} ({len(meta['rounds'])} rounds)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m doublet.training.onesided",
                                 description=__doc__.split("\n")[0])  # fmt: skip
    sub = ap.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fit", help="fit a one-sided race net by value iteration")
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--model", type=Path, help="the model whose self-play gives the configs "
                   "(default: the shipped one)")  # fmt: skip
    f.add_argument("--games", type=int, default=20000, help="self-play games for configs")
    f.add_argument("--epsilon", type=float, default=0.4, help="share of random plays")
    f.add_argument("--configs", type=int, default=60000, help="training configs (at most)")
    f.add_argument("--rounds", type=int, default=20)
    f.add_argument("--epochs", type=int, default=3, help="epochs a round")
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--hidden", type=int, default=128)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--init", type=Path, help="start from this one-sided net's weights")
    f.add_argument("--resume", action="store_true", help="go on from --out's last round")
    args = ap.parse_args(argv)
    bad = []
    if min(args.games, args.configs, args.rounds, args.epochs, args.hidden) < 1:
        bad.append("--games, --configs, --rounds, --epochs and --hidden must be at least 1")
    if not 0 <= args.epsilon <= 1:
        bad.append(f"--epsilon is a share of the rolls, 0 to 1, got {args.epsilon}")
    if not args.lr > 0:
        bad.append(f"--lr must be above 0, got {args.lr}")
    if args.seed < 0:
        bad.append(f"--seed must be 0 or more, got {args.seed}")
    if args.resume and args.init:
        bad.append("--resume goes on from --out; --init starts a new run: not both")
    if not args.resume and args.out.exists():  # its rounds would be replaced by a new run's
        bad.append(f"--out {args.out} holds a net already: --resume goes on from it; to "
                   "start again, remove it or give another --out")  # fmt: skip
    if bad:
        print("onesided: error: " + "; ".join(bad), file=sys.stderr)
        return 2
    try:
        return fit(args, argv)
    except DoubletError as e:  # a model that is not one, or of the other variant
        print(f"onesided: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a read-only or full --out
        print(f"onesided: error: {os_error_text(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # each round is written whole: --resume goes on after it
        how = stop_signal(e)
        print(f"stopped ({how}): {args.out} holds the rounds finished; --resume goes on",
              file=sys.stderr)  # fmt: skip
        return interrupt_status(e)


if __name__ == "__main__":
    with sigterm_interrupts():  # SIGTERM (a scheduler) stops it as Ctrl-C does
        sys.exit(main())
