"""How close can the net get to a set of targets? A capacity check on distillation data.

    python benchmarks/fit_capacity.py --data runs/distill-long-2ply [--model PATH]
        [--hidden 80 160] [--lr 3e-4] [--loss bce|mse] [--epochs 8] [--every 2]

Takes the positions and target probabilities of a `doublet.training.distill data` folder, holds a
tenth of the chunks out, and fits the model's contact net (widened to each `--hidden`:
the new units start with zero output weights, so every run starts from the model's own
outputs) with Adam. Every `--every` epochs it prints the mean |equity(net) -
equity(target)| on the held-out positions and on 20,000 of the fitted ones, and the
held-out cross-entropy beside the targets' own entropy (the least it can be). A net that
cannot lower the gap on the positions it is fitted to lacks the capacity or the inputs
for those targets; one that lowers it only there lacks data. Needs torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from doublet.nn.encode import encode  # noqa: E402
from doublet.nn.eval import default_model, load_model  # noqa: E402
from doublet.training.distill import load_data  # noqa: E402
from doublet.training.model import TDNet  # noqa: E402
from doublet.training.train import widen  # noqa: E402


def _equity(p: torch.Tensor) -> torch.Tensor:
    return 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]


def _report(net: TDNet, hidden: int, epoch: int, data: tuple[torch.Tensor, ...]) -> None:
    xf, yf, xh, yh = data
    with torch.no_grad():
        ph, pf = net(xh), net(xf[:20000])
        gap_h = float((_equity(ph) - _equity(yh)).abs().mean())
        gap_f = float((_equity(pf) - _equity(yf[:20000])).abs().mean())
        ce = float(torch.nn.functional.binary_cross_entropy(ph, yh))
    print(f"hidden {hidden:>4} epoch {epoch:>3}: |equity gap| held out {gap_h:.4f}, "
          f"fitted {gap_f:.4f}; held-out cross-entropy {ce:.5f}", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--model", help="model .npz (default: the shipped one)")
    ap.add_argument("--hidden", type=int, nargs="+", default=[80, 160])
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--loss", choices=("bce", "mse"), default="bce")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--every", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = load_model(args.model) if args.model else default_model()
    boards, probs = load_data(args.data)
    order = np.random.default_rng(args.seed).permutation(len(boards))
    held, fit = order[: len(boards) // 10], order[len(boards) // 10 :]

    def tensors(idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        x = np.concatenate([encode(boards[i]) for i in idx])
        y = np.concatenate([probs[i] for i in idx])
        return torch.from_numpy(x), torch.from_numpy(y).clamp(0, 1)

    xf, yf = tensors(fit)
    xh, yh = tensors(held)
    floor = float(-(yh * yh.clamp(1e-7).log() + (1 - yh) * (1 - yh).clamp(1e-7).log()).mean())
    print(f"{len(xf):,} positions fitted, {len(xh):,} held out; the held-out targets' "
          f"entropy {floor:.5f}; command: {' '.join(sys.argv)}")  # fmt: skip
    bce = torch.nn.functional.binary_cross_entropy
    for hidden in args.hidden:
        net = TDNet(hidden)
        net.from_engine(widen(model.contact, hidden, np.random.default_rng(args.seed)))
        opt = torch.optim.Adam(net.parameters(), lr=args.lr)

        _report(net, hidden, 0, (xf, yf, xh, yh))
        for epoch in range(1, args.epochs + 1):
            perm = torch.randperm(len(xf))
            for k in range(0, len(perm), 256):
                i = perm[k : k + 256]
                p = net(xf[i])
                loss = bce(p, yf[i]) if args.loss == "bce" else ((p - yf[i]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            if epoch % args.every == 0:
                _report(net, hidden, epoch, (xf, yf, xh, yh))


if __name__ == "__main__":
    from doublet.core.errors import DoubletError

    try:
        main()
    except DoubletError as e:  # a bad --data or model: one line, not a traceback (a review)
        sys.exit(f"{Path(__file__).name}: error: {e}")
