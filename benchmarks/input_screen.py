"""What limits the ranking fit (issue 24): more data, a wider net, or inputs the net lacks?

    python benchmarks/input_screen.py --data runs/SET [SET ...] [--extra 0|1]
        [--only 0,6] [--epochs 6] [--lr 3e-4] [--rank-weight 10] [--fraction 1.0]
        [--hidden H] [--deep H2] [--crashed-only] [--dropout P] [--model M] [--seed 0]

Fits the model's contact net (the shipped one by default) to a candidates set of
`doublet.training.distill data --candidates K` with distill fit's loss (cross-entropy plus
`--rank-weight` times the squared error of each roll's centred equities), on the
positions with contact only, holding out a tenth of the chunks as distill fit does; after
every epoch it prints the held-out groups' centred mean absolute error (the net's
cubeless equity of a play less its group's mean, against the same of the targets): how
well the net at 0 ply tells apart the plays its teacher tells apart; and the same on the
first fitted chunks, as many as are held out ("fitted"), so that underfitting (both high)
and overfitting (fitted falling, held-out not) tell apart. It also prints the "choice
loss": over each group of two or more, the target's equity lost by the play the net
rates best (mEq, a mean over the groups), and how often that play is the target's best:
the 0-ply net's decision loss against its teacher among the roll's candidates. Runs that differ in
one setting compare on the same held-out positions. Before the first epoch and after the
last it also prints that error by the class of a group's first position (after the play the
0-ply net rates best, as distill data stores them): crashed (GNU Backgammon's class), a
checker on either bar, other contact.

The settings:

- `--fraction F`: fit only the first F of the fitted chunks (a learning curve: does more
  data of this teacher still help?);
- `--hidden H`: widen the net first (the new units start with zero output weights);
- `--deep H2`: add a second hidden layer of H2 sigmoid units fed by the first, whose
  outputs add to the output layer's logits (its output weights start at zero, so the fit
  starts from the model's own outputs): does depth help where width did not?
- `--crashed-only`: fit only the groups whose first position is crashed (what a crashed
  net of its own would be fitted to), and print the error by class after every epoch;
- `--dropout P`: drop hidden units with probability P while fitting;
- `--listwise W [--temp T]`: add W times a listwise choice loss: the cross-entropy of the
  net's softmax over each group's plays (the mover's equity / T, T = 0.02 by default)
  against the target's (a loss that weights the best plays of a roll, where the squared
  centred error weights all alike);
- `--extra 1`: append NF candidate inputs a side (zero weights at the start, so the fit
  starts from the model's own outputs), before the contact flag; `--only` keeps some of
  them (their numbers below). Each is described from its definition (GNU Backgammon
  names similar inputs; none is its code), for the side whose view the board is in
  (its checkers > 0 on points 1..24, moving down to 1) and then the other side:
  0. containment: 1 - the fewest escape rolls (/ 36) of a checker on any of the points
     13..24 or the bar past the other side's points in the 12 ahead of it;
  1, 2. a forward anchor in the other side's home (points 19..24): 1 if any, and its
     depth ((25 - p) / 6 for the lowest such point p);
  3, 4. points held on 7..12 and on 13..18, / 6 each;
  5. buried checkers (all on points 1 and 2, those beyond three deep on 3..6) / 15;
  6. timing: pips its spare checkers on 3..18 (blots, and those beyond two on a point)
     can move down to the 3-point, / 100 (capped at 1.5);
  7. the second moment of its checkers' distances beyond their mean (stragglers), / 100
     (capped at 2);
  8. its checkers on 13..24 and the bar, / 15.

Needs torch. One thread; about 4 s an epoch on 480,000 positions.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.core.board import MY_BAR, MY_OUT, OPP_BAR, crashed, flip_into, has_contact  # noqa: E402
from doublet.nn.encode import ESCAPES, _escape_mask, encode  # noqa: E402
from doublet.nn.eval import default_model, load_model  # noqa: E402
from doublet.training.distill import _centred_errors, _group_ids, load_chunks  # noqa: E402
from doublet.training.model import OneHidden  # noqa: E402
from doublet.training.train import widen  # noqa: E402

NF = 9  # per side


@njit
def side_feats(s, out, k, escapes):
    """Features of the mover of s (mover's view: mover's checkers > 0 on 1..24, moving
    down to 1; the opponent's < 0, moving up)."""
    closed = 0
    for p in range(1, 25):
        if s[p] <= -2:
            closed |= 1 << p
    # 0: containment: the fewest escape rolls of a checker on any point 13..24 (or the bar)
    worst = 36.0
    for start in range(13, 26):
        worst = min(worst, escapes[_escape_mask(closed, start)])
    out[k] = 1.0 - worst / 36.0
    # 1, 2: forward anchor in the opponent's home (19..24): exists, its depth
    fa = 0
    for p in range(19, 25):
        if s[p] >= 2:
            fa = p
            break
    out[k + 1] = 1.0 if fa > 0 else 0.0
    out[k + 2] = (25 - fa) / 6.0 if fa > 0 else 0.0
    # 3: outfield points held (7..12) / 6; 4: points held in 13..18 / 6
    o1 = 0
    o2 = 0
    for p in range(7, 13):
        if s[p] >= 2:
            o1 += 1
    for p in range(13, 19):
        if s[p] >= 2:
            o2 += 1
    out[k + 3] = o1 / 6.0
    out[k + 4] = o2 / 6.0
    # 5: buried checkers (on 1 and 2, and beyond 3 deep on 3..6) / 15
    bur = 0
    for p in range(1, 3):
        if s[p] > 0:
            bur += s[p]
    for p in range(3, 7):
        if s[p] > 3:
            bur += s[p] - 3
    out[k + 5] = bur / 15.0
    # 6: timing: pips the mover can play without breaking a point it holds with exactly
    #    two outside 1..2, nor moving checkers of the back (19..24/bar): spare checkers'
    #    pips down to the 3-point, / 100
    t = 0
    for p in range(3, 19):
        n = s[p]
        if n == 1:
            t += p - 2
        elif n > 2:
            t += (n - 2) * (p - 2)
    out[k + 6] = min(t / 100.0, 1.5)
    # 7: second moment of the pips beyond the mean (stragglers) / 100
    cnt = s[MY_BAR] + s[MY_OUT]
    tot = 25 * cnt
    for p in range(1, 25):
        if s[p] > 0:
            cnt += s[p]
            tot += s[p] * p
    m2 = 0.0
    if cnt > 0:
        mean = tot / cnt
        for p in range(1, 26):
            n = s[p] if p < 25 else s[MY_BAR] + s[MY_OUT]
            if n > 0 and p > mean:
                m2 += n * (p - mean) ** 2
        m2 /= cnt
    out[k + 7] = min(m2 / 100.0, 2.0)
    # 8: checkers still in the opponent's home and its outfield (13..24, bar) / 15
    back = s[MY_BAR] + s[MY_OUT]
    for p in range(13, 25):
        if s[p] > 0:
            back += s[p]
    out[k + 8] = back / 15.0


@njit
def all_feats(boards, escapes):
    n = boards.shape[0]
    out = np.zeros((n, 2 * NF), np.float32)
    scratch = np.empty(boards.shape[1], np.int8)
    for i in range(n):
        side_feats(boards[i], out[i], 0, escapes)
        flip_into(boards[i], scratch)
        side_feats(scratch, out[i], NF, escapes)
    return out


CRASHED, BAR, OTHER = 0, 1, 2  # group classes (group_class)


def group_class(b: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Each position's group's class, that of the group's first position (after the play
    the 0-ply net rates best, as distill data stores them): CRASHED (GNU Backgammon's
    class), BAR (a checker on either bar), OTHER contact; only first positions classified."""
    _, first, inv = np.unique(g, return_index=True, return_inverse=True)
    kind = [
        CRASHED if crashed(v) else BAR if v[MY_BAR] > 0 or v[OPP_BAR] < 0 else OTHER
        for v in b[first]
    ]
    return np.array(kind, np.int64)[inv]


EQ = torch.tensor([2.0, 1.0, 1.0, -1.0, -1.0])  # cubeless equity less its constant -1


def mover_scores(probs: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Each position's cubeless equity (less -1) for the side that chose the play: a
    group's positions are seen by the opponent when its number is even (main's group
    numbers keep distill's side flag as their parity), so the mover's is the negative."""
    e = probs @ EQ.to(probs.dtype)
    return torch.where(g % 2 == 0, -e, e)


def choice_regret(out: torch.Tensor, y: torch.Tensor, g: torch.Tensor) -> tuple[float, float]:
    """(the mean over groups of two or more of the target's equity lost by the play the
    net rates best, in mEq; the share of groups where it is the target's best): the 0-ply
    net's decision loss against its teacher, over each roll's candidates."""
    e_net, e_t = mover_scores(out, g).numpy(), mover_scores(y, g).numpy()
    _, inv, counts = np.unique(g.numpy(), return_inverse=True, return_counts=True)
    best_t = np.full(len(counts), -np.inf)
    np.maximum.at(best_t, inv, e_t)
    order = np.lexsort((-e_net, inv))  # by group, the net's best first
    first = order[np.r_[0, np.flatnonzero(np.diff(inv[order])) + 1]]
    many = counts[inv[first]] > 1
    regret = (best_t[inv[first]] - e_t[first])[many]
    return 1000 * float(regret.mean()), float((regret <= 1e-9).mean())


def listwise_loss(out: torch.Tensor, y: torch.Tensor, g: torch.Tensor, temp: float):
    """Cross-entropy between the teacher's and the net's softmax over each group's plays of
    the mover's equity / temp (groups of two or more), a mean over the groups."""
    s_net, s_t = mover_scores(out, g) / temp, mover_scores(y, g) / temp
    _, inv, counts = torch.unique(g, return_inverse=True, return_counts=True)

    def log_softmax(v: torch.Tensor) -> torch.Tensor:
        top = torch.full((len(counts),), -1e9, dtype=v.dtype)
        top = top.scatter_reduce(0, inv, v.detach(), "amax")
        z = torch.zeros(len(counts), dtype=v.dtype).index_add_(0, inv, torch.exp(v - top[inv]))
        return v - (torch.log(z) + top)[inv]

    many = counts[inv] > 1
    p_t = torch.exp(log_softmax(s_t)).detach()
    return -(p_t * log_softmax(s_net))[many].sum() / max(1, int((counts > 1).sum()))


class Deep(torch.nn.Module):
    """A OneHidden net with a second sigmoid layer on its hidden units, added to its output
    logits through zero-initialised weights (so it starts as the given net)."""

    def __init__(self, base: OneHidden, hidden2: int) -> None:
        super().__init__()
        self.base = base
        self.hidden2 = torch.nn.Linear(base.hidden.out_features, hidden2)
        self.out2 = torch.nn.Linear(hidden2, base.out.out_features, bias=False)
        torch.nn.init.zeros_(self.out2.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.sigmoid(self.base.hidden(x))
        return torch.sigmoid(self.base.out(h) + self.out2(torch.sigmoid(self.hidden2(h))))


class Dropped(torch.nn.Module):
    """A OneHidden net whose hidden units drop out with probability p while it trains (the
    survivors scaled by 1 / (1 - p), so its evaluation outputs are the net's own)."""

    def __init__(self, base: OneHidden, p: float) -> None:
        super().__init__()
        self.base = base
        self.drop = torch.nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.drop(torch.sigmoid(self.base.hidden(x)))
        return torch.sigmoid(self.base.out(h))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", required=True)
    ap.add_argument("--extra", type=int, default=1)
    ap.add_argument("--only", type=str, default="", help="keep these inputs (0..8, e.g. 0,6)")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--rank-weight", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fraction", type=float, default=1.0)
    ap.add_argument("--hidden", type=int, default=None)
    ap.add_argument("--deep", type=int, default=0, help="a second hidden layer of this size")
    ap.add_argument(
        "--crashed-only", action="store_true", help="fit only the groups of crashed positions"
    )
    ap.add_argument("--dropout", type=float, default=0.0, help="dropout of hidden units")
    ap.add_argument(
        "--listwise",
        type=float,
        default=0.0,
        help="weight of a listwise (softmax) choice loss on each roll's plays",
    )
    ap.add_argument("--temp", type=float, default=0.02, help="the listwise loss's temperature")
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    if not 0 < args.fraction <= 1:
        ap.error(f"--fraction must be in (0, 1], got {args.fraction}")
    if args.deep < 0 or not 0 <= args.dropout < 1:
        ap.error(f"--deep must be >= 0 and --dropout in [0, 1), got {args.deep}, {args.dropout}")
    if args.deep and args.dropout:
        ap.error("--deep and --dropout do not go together")
    only = [int(c) for c in args.only.split(",")] if args.only else list(range(NF))
    if not all(0 <= c < NF for c in only):
        ap.error(f"--only takes input numbers 0..{NF - 1}, got {args.only}")
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    boards, probs, groups = load_chunks([Path(d) for d in args.data])
    if all(g is None for g in groups):
        sys.exit(
            f"error: {' '.join(args.data)} holds no candidates set (distill data --candidates K)"
        )
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(boards))
    held = order[: max(1, len(boards) // 10)]
    fit_idx = order[len(held) :]
    fit_idx = fit_idx[: max(1, round(len(fit_idx) * args.fraction))]
    # group numbers over all chunks, doubled, plus the side the group's positions are seen
    # by (distill's _groups: 0 the opponent of the player choosing, 1 that player), which
    # _group_ids' renumbering loses and mover_scores needs
    gid = [
        2 * n + (0 if g is None else g.astype(np.int64) % 2)
        for n, g in zip(_group_ids(groups, [len(b) for b in boards]), groups, strict=True)
    ]

    def cat(idx, crashed_only=False):
        b = np.concatenate([boards[i] for i in idx])
        p = np.concatenate([probs[i] for i in idx])
        g = np.concatenate([gid[i] for i in idx])
        keep = np.array([has_contact(x) for x in b], bool)
        b, p, g = b[keep], p[keep], g[keep]
        if crashed_only:
            keep = group_class(b, g) == CRASHED
            b, p, g = b[keep], p[keep], g[keep]
        x = encode(b)
        if args.extra:
            f = all_feats(b, ESCAPES)
            f = f[:, only + [NF + c for c in only]]
            # before the contact flag (the last input)
            x = np.concatenate([x[:, :-1], f, x[:, -1:]], axis=1)
        return torch.from_numpy(x), torch.from_numpy(p).clamp(0, 1), torch.from_numpy(g), b

    t0 = time.time()
    x_fit, y_fit, g_fit, _ = cat(fit_idx, args.crashed_only)
    x_held, y_held, g_held, b_held = cat(held)
    # as many fitted chunks as held out, to compare (underfitting or overfitting?)
    x_seen, y_seen, g_seen, _ = cat(fit_idx[: len(held)], args.crashed_only)
    group_kind = torch.from_numpy(group_class(b_held, g_held.numpy()))
    n_in = x_fit.shape[1]
    print(
        f"{len(x_fit):,} fit, {len(x_held):,} held, {n_in} inputs, {time.time() - t0:.0f} s",
        flush=True,
    )
    model = load_model(args.model) if args.model else default_model()
    contact = model.contact
    if args.hidden is not None:
        contact = widen(contact, args.hidden, np.random.default_rng(args.seed))
    w1, b1, w2, b2 = contact
    if n_in != w1.shape[0]:
        extra = n_in - w1.shape[0]
        w1 = np.concatenate([w1[:-1], np.zeros((extra, w1.shape[1]), np.float32), w1[-1:]])
    net = OneHidden(w1.shape[1], n_in)
    net.from_engine((w1, b1, w2, b2))
    if args.deep:
        net = Deep(net, args.deep)
    if args.dropout:
        net = Dropped(net, args.dropout)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    batch = 256
    steps = args.epochs * -(-len(x_fit) // batch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=1e-5)
    bce = torch.nn.functional.binary_cross_entropy

    def report(epoch, classes=False):
        """The held-out loss and centred MAE; with classes, the latter by group class too."""
        net.eval()
        with torch.no_grad():
            out = net(x_held)
            seen = net(x_seen)
        err, n = _centred_errors(out, y_held, g_held)
        loss, centred = float(bce(out, y_held)), float(err.abs().sum() / n)
        err_s, n_s = _centred_errors(seen, y_seen, g_seen)
        regret, agree = choice_regret(out, y_held, g_held)
        regret_s, agree_s = choice_regret(seen, y_seen, g_seen)
        print(f"epoch {epoch}: held-out loss {loss:.5f}, centred MAE {centred:.5f} "
              f"(fitted {float(err_s.abs().sum() / n_s):.5f}), choice loss {regret:.3f} mEq, "
              f"{100 * agree:.1f} % agree (fitted {regret_s:.3f}, {100 * agree_s:.1f} %), "
              f"{time.time() - t0:.0f} s", flush=True)  # fmt: skip
        if not classes:
            return
        parts = []
        for c, name in ((CRASHED, "crashed"), (BAR, "bar"), (OTHER, "other contact")):
            m = group_kind == c  # whole groups, so their means are the groups' own
            err, n = _centred_errors(out[m], y_held[m], g_held[m])
            parts.append(f"{name} {float(err.abs().sum() / n):.5f} ({n:,})" if n else f"{name} -")
        print("  by class (positions):", ", ".join(parts), flush=True)

    report(0, classes=True)
    for epoch in range(1, args.epochs + 1):
        net.train()
        key = torch.rand(int(g_fit.max()) + 1)[g_fit]
        perm = torch.argsort(key, stable=True)
        for k in range(0, len(perm), batch):
            idx = perm[k : k + batch]
            out = net(x_fit[idx])
            loss = bce(out, y_fit[idx])
            err, n = _centred_errors(out, y_fit[idx], g_fit[idx])
            if n > 0:
                loss = loss + args.rank_weight * (err * err).sum() / n
            if args.listwise:
                loss = loss + args.listwise * listwise_loss(out, y_fit[idx], g_fit[idx], args.temp)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        report(epoch, classes=epoch == args.epochs or args.crashed_only)


if __name__ == "__main__":
    from doublet.core.errors import DoubletError

    try:
        main()
    except DoubletError as e:  # a bad --data or model: one line, not a traceback (a review)
        sys.exit(f"{Path(__file__).name}: error: {e}")
