"""Train a model's pruning net: a small net that rates plays the way the main net does.

    python -m doublet.training.prune MODEL [--out PATH] [--games N] [--hidden H] [--epochs E]

GNU Backgammon searches with small "pruning" nets: inside the search, every play of a
roll is rated by a cheap net and only the best few are evaluated by the full one. This
trains Doublet's (doublet.nn.eval's ``prune`` net, used by doublet.search.searcher) to
mimic the main net of MODEL:

- data: the positions of ``--games`` self-play games of MODEL's net, each with one roll
  drawn at random, and every play of that roll: the position after it, seen by the side
  to roll next, and the main net's cubeless equity of it (finished games and database
  bear-offs left out: the search values those exactly);
- net: the raw inputs of doublet.nn.encode (N_PRUNE_INPUTS, no features), ``--hidden`` ReLU
  units, one linear output;
- loss: only the order of a roll's plays matters, so it fits the equities minus their
  mean over the roll (mean squared error, Adam);
- measured on the held-out tenth of the rolls: how often the main net's best play is
  among the pruning net's best k, and the equity lost by choosing the main net's best
  among those k instead of among all plays (the loss the search takes), for k = 2..12.

The model is written back (atomically) with the pruning net and these figures in its
meta; the main nets are unchanged.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

try:
    import torch
    from torch import nn
except ModuleNotFoundError as e:  # run without torch: one line, not a traceback
    from doublet.training.usage import torch_missing

    torch_missing(__name__, e, "python -m doublet.training.prune")
from doublet.core.board import STANDARD, flip, outcome
from doublet.core.dice import stream
from doublet.core.errors import DoubletError
from doublet.core.files import file_path_error, write_error
from doublet.core.signals import interrupt_status, sigterm_interrupts, stop_signal
from doublet.nn.encode import ENCODER_VERSION, N_PRUNE_INPUTS, encode_raw
from doublet.nn.eval import (
    Model,
    Net,
    command_line,
    equity,
    evaluate,
    load_model,
    prune_scores,
    save_model,
    with_step,
)
from doublet.rules.bearoff import is_bearoff
from doublet.rules.movegen import legal_outcomes
from doublet.training.progress import Progress, command_log
from doublet.training.selfplay import SelfPlay

KS = (2, 3, 4, 5, 6, 8, 10, 12)
log = command_log("prune")  # its progress where stderr is no terminal


def collect(model: Model, games: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(views (N, SIZE) int8, main-net equities (N,) float32, group (N,) int64): every play
    of one random roll per position of `games` self-play games."""
    sp = SelfPlay(model.variant)
    rng = stream(seed, 7)
    views: list[np.ndarray] = []
    group: list[np.ndarray] = []
    g = 0
    with Progress("self-play positions", games, "game", log, leave=False) as bar:
        for index in range(games):
            traj = sp.game(model.contact, model.race, seed, index)
            for b in traj.boards:
                d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
                outs, again = legal_outcomes(b, d1, d2, model.variant)
                if len(outs) < 2:
                    continue
                vs = [o if a else flip(o) for o, a in zip(outs, again, strict=True)]
                keep = [v for v in vs if outcome(v) == 0
                        and not (model.variant == STANDARD and is_bearoff(v))]  # fmt: skip
                if len(keep) < 2:
                    continue
                views.append(np.array(keep, np.int8))
                group.append(np.full(len(keep), g, np.int64))
                g += 1
            bar.update(index + 1)
    v = np.concatenate(views)
    eq = np.asarray(equity(evaluate(v, model)), np.float32)
    return v, eq, np.concatenate(group)


class PruneNet(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(N_PRUNE_INPUTS, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(x)))[:, 0]

    def to_engine(self) -> Net:
        return (
            self.hidden.weight.detach().numpy().T.copy(),
            self.hidden.bias.detach().numpy().copy(),
            self.out.weight.detach().numpy().T.copy(),
            self.out.bias.detach().numpy().copy(),
        )


def _centred(x: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
    sums = torch.zeros(n_groups, dtype=x.dtype).index_add_(0, group, x)
    counts = torch.zeros(n_groups, dtype=x.dtype).index_add_(0, group, torch.ones_like(x))
    return x - (sums / counts)[group]


def _batches(groups: np.ndarray, starts: np.ndarray, rows: int, rng: np.random.Generator):
    """Minibatches of whole rolls (about `rows` plays each), in a random order."""
    order = rng.permutation(groups)
    batch: list[np.ndarray] = []
    size = 0
    for g in order:
        batch.append(np.arange(starts[g], starts[g + 1]))
        size += starts[g + 1] - starts[g]
        if size >= rows:
            yield np.concatenate(batch)
            batch, size = [], 0
    if batch:
        yield np.concatenate(batch)


def measure(net: Net, views: np.ndarray, eq: np.ndarray, starts: np.ndarray,
            groups: np.ndarray) -> dict[str, Any]:  # fmt: skip
    """For each k of KS over `groups`: the share of rolls whose main-net best play is among
    the pruning net's best k, and the mean equity lost by choosing among those k only.
    views and eq are seen by the side to roll next, as collect gives them."""
    return measure_ratings(prune_scores(views, net), eq, starts, groups)


def measure_ratings(rating: np.ndarray, eq: np.ndarray, starts: np.ndarray,
                    groups: np.ndarray) -> dict[str, Any]:  # fmt: skip
    """measure's figures from the pruning net's ratings. Both rating and eq are the next
    side's equities, so the mover's best play is the one with the lowest: the one the
    search keeps first (it keeps the plays of the highest -rating)."""
    hit = {k: 0 for k in KS}
    lost = {k: 0.0 for k in KS}
    for g in groups:
        e = -eq[starts[g] : starts[g + 1]]  # the mover's equities
        top = np.argsort(rating[starts[g] : starts[g + 1]], kind="stable")  # the search's order
        best = e.max()
        for k in KS:
            chosen = e[top[:k]].max()
            hit[k] += int(chosen == best)
            lost[k] += float(best - chosen)
    n = len(groups)
    return {"rolls": int(n), "recall": {str(k): round(hit[k] / n, 4) for k in KS},
            "mean_loss": {str(k): round(lost[k] / n, 5) for k in KS}}  # fmt: skip


def train(model: Model, games: int = 3000, hidden: int = 16, epochs: int = 6, seed: int = 1,
          lr: float = 3e-3) -> tuple[Net, dict[str, Any]]:  # fmt: skip
    """Fit a pruning net to `model`'s main net; (its weights, what was measured)."""
    t0 = time.perf_counter()
    torch.manual_seed(seed)
    views, eq, group = collect(model, games, seed)
    n_groups = int(group[-1]) + 1
    starts = np.searchsorted(group, np.arange(n_groups + 1))
    rng = stream(seed, 8)
    perm = rng.permutation(n_groups)
    held = np.sort(perm[: n_groups // 10])
    fit = np.sort(perm[n_groups // 10 :])
    net = PruneNet(hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    eq_t = torch.from_numpy(eq)
    group_t = torch.from_numpy(group)
    for epoch in range(epochs):  # each epoch a bar of its own, or its own lines
        total, rows = 0.0, 0
        batches = list(_batches(fit, starts, 2048, rng))
        with Progress(f"epoch {epoch + 1}/{epochs}", len(batches), "batch", log,
                      leave=False) as bar:  # fmt: skip
            for k, idx in enumerate(batches):
                x = torch.from_numpy(encode_raw(views[idx]))
                g = group_t[idx]
                _, local = torch.unique_consecutive(g, return_inverse=True)
                m = int(local[-1]) + 1
                loss = ((_centred(net(x), local, m) - _centred(eq_t[idx], local, m)) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item() * len(idx)
                rows += len(idx)
                bar.update(k + 1, f"mse {total / rows:.5f}")
        sched.step()
    weights = net.to_engine()
    report = measure(weights, views, eq, starts, held)
    report.update(hidden=hidden, games=games, epochs=epochs, seed=seed, plays=len(views),
                  seconds=round(time.perf_counter() - t0, 1))  # fmt: skip
    return weights, report


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m doublet.training.prune", description=__doc__.split("\n")[0]
    )
    ap.add_argument("model", help="the model (.npz) whose main net the pruning net mimics")
    ap.add_argument("--out", help="where to write the model with its pruning net (default: MODEL)")
    ap.add_argument("--games", type=int, default=3000, help="self-play games for the data")
    ap.add_argument("--hidden", type=int, default=16, help="hidden units of the pruning net")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args, argv)
    except DoubletError as e:  # a missing or corrupt model, a bad number, an --out
        print(f"prune: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # the model is written whole at the end, or not at all
        how = stop_signal(e)
        print(f"stopped ({how}): nothing written", file=sys.stderr)
        return interrupt_status(e)


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    bad = [f"--{k} must be 1 or more, got {getattr(args, k)}"
           for k in ("games", "hidden", "epochs") if getattr(args, k) < 1]  # fmt: skip
    if args.seed < 0:
        bad.append(f"--seed must be 0 or more, got {args.seed}")
    out = Path(args.out or args.model)
    if out.is_dir():
        bad.append(f"--out {str(out)!r} is a folder: give the model file's path")
    elif (why := file_path_error(out)) is not None:  # said before the training
        bad.append(f"--out {str(out)!r} cannot be written: {why}")
    if bad:
        raise DoubletError("; ".join(bad))
    model = load_model(args.model)
    if model.meta.get("upgraded_from_encoder"):  # written back at this version: same outputs
        print(f"note: {args.model} is a version-{model.meta['upgraded_from_encoder']} model; "
              f"it is written at encoder version {ENCODER_VERSION} with zero weights on the "
              "inputs it lacks (the same evaluations)")  # fmt: skip
    weights, report = train(model, args.games, args.hidden, args.epochs, args.seed)
    summary = {k: report[k] for k in ("hidden", "games", "epochs", "seed", "plays") if k in report}
    meta = with_step({**model.meta, "prune": report}, "prune",
                     command=command_line("python -m doublet.training.prune", argv),
                     **summary)  # fmt: skip
    try:
        save_model(out, Model(model.contact, model.race, meta, weights))
    except OSError as e:
        raise DoubletError(f"cannot write {str(out)!r}: {write_error(out, e)}") from None
    print(f"wrote {out}: pruning net with {args.hidden} hidden units, fitted on "
          f"{report['plays']:,} plays in {report['seconds']} s")  # fmt: skip
    print("on the held-out rolls: k, main net's best play among the pruning net's best k, "
          "mean equity lost choosing among them")  # fmt: skip
    for k in KS:
        print(f"  {k:>2}  {report['recall'][str(k)]:.1%}  {report['mean_loss'][str(k)]:.5f}")
    return 0


if __name__ == "__main__":
    with sigterm_interrupts():  # SIGTERM (a scheduler) stops it as Ctrl-C does
        sys.exit(main())
