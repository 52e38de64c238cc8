"""The engine's net in torch, for learning: same inputs, same layers, same outputs.

``TDNet`` holds a contact net and, when the config asks for one, a race net; each is
``sigmoid(sigmoid(x @ w1 + b1) @ w2 + b2)`` with x = doublet.nn.encode's N_INPUTS inputs of
a board seen by the side on roll, and the five outputs P(win), P(win gammon),
P(win backgammon), P(lose gammon), P(lose backgammon) for that side. A row goes to the
race net when its last input, the contact flag, is 0 (doublet.nn.eval routes on
has_contact(board), which that input is).

``forward`` returns the raw sigmoid outputs (what learning fits); ``probs`` adds the
engine's consistency clamps (gammons within wins, backgammons within gammons) and so
equals doublet.nn.eval.evaluate on non-final positions. Weights move between the two as the
engine's tuples ``(w1 (I, H), b1 (H,), w2 (H, 5), b2 (5,))`` float32: ``to_engine`` /
``from_engine`` (torch's Linear stores w1 transposed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from doublet.nn.encode import ENCODER_VERSION, N_INPUTS
from doublet.nn.eval import N_OUTPUTS, Model, Net, random_net

CONTACT_INPUT = N_INPUTS - 1  # 1.0 while the sides can still hit each other


class OneHidden(nn.Module):
    """inputs -> sigmoid hidden layer -> 5 sigmoid outputs."""

    def __init__(self, hidden: int, n_inputs: int = N_INPUTS) -> None:
        super().__init__()
        self.hidden = nn.Linear(n_inputs, hidden)
        self.out = nn.Linear(hidden, N_OUTPUTS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.logits(x))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.out(torch.sigmoid(self.hidden(x)))
        return out

    def to_engine(self) -> Net:
        """The engine's tuple: new float32 arrays (never views of the live parameters)."""
        with torch.no_grad():
            return (
                np.array(self.hidden.weight.detach().numpy().T, dtype=np.float32, order="C"),
                np.array(self.hidden.bias.detach().numpy(), dtype=np.float32),
                np.array(self.out.weight.detach().numpy().T, dtype=np.float32, order="C"),
                np.array(self.out.bias.detach().numpy(), dtype=np.float32),
            )

    def from_engine(self, net: Net) -> None:
        w1, b1, w2, b2 = (torch.from_numpy(np.array(a, dtype=np.float32)) for a in net)
        if w1.shape != self.hidden.weight.shape[::-1] or w2.shape != self.out.weight.shape[::-1]:
            raise ValueError(
                f"engine net of shapes {tuple(w1.shape)}, {tuple(w2.shape)} does not fit a "
                f"net with {self.hidden.out_features} hidden units"
            )
        with torch.no_grad():
            self.hidden.weight.copy_(w1.T)
            self.hidden.bias.copy_(b1)
            self.out.weight.copy_(w2.T)
            self.out.bias.copy_(b2)


def consistent(p: torch.Tensor) -> torch.Tensor:
    """doublet.nn.eval._forward's clamps: P(wg) <= P(w), P(wbg) <= P(wg), P(lg) <= 1 - P(w),
    P(lbg) <= P(lg) (applied in that order, as the engine does)."""
    w = p[:, 0]
    wg = torch.minimum(p[:, 1], w)
    wbg = torch.minimum(p[:, 2], wg)
    lg = torch.minimum(p[:, 3], 1.0 - w)
    lbg = torch.minimum(p[:, 4], lg)
    return torch.stack((w, wg, wbg, lg, lbg), dim=1)


def has_own_race_net(model: Model) -> bool:
    """True when model's race net differs from its contact net."""
    return model.race is not model.contact and not all(
        np.array_equal(a, b) for a, b in zip(model.contact, model.race, strict=True)
    )


class TDNet(nn.Module):
    """A contact net and an optional race net, routed by the contact input."""

    def __init__(self, hidden: int, race_net: bool = False, seed: int = 0) -> None:
        super().__init__()
        self.hidden_units = hidden
        self.has_race = race_net
        self.contact = OneHidden(hidden)
        self.race = OneHidden(hidden) if race_net else None
        # Start from the engine's own initialization so that a seed means one net everywhere.
        self.contact.from_engine(random_net(hidden, seed))
        if self.race is not None:
            self.race.from_engine(random_net(hidden, seed + 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Raw outputs (N, 5) for inputs x (N, N_INPUTS)."""
        return torch.sigmoid(self.logits(x))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The outputs before their sigmoid (N, 5)."""
        out = self.contact.logits(x)
        if self.race is None:
            return out
        race = x[:, CONTACT_INPUT] < 0.5
        if bool(race.any()):
            out = out.clone()
            out[race] = self.race.logits(x[race])
        return out

    def probs(self, x: torch.Tensor) -> torch.Tensor:
        """What doublet.nn.eval.evaluate gives for non-final positions: consistent outputs."""
        return consistent(self(x))

    def to_engine(self) -> tuple[Net, Net]:
        """(contact, race) weight tuples; without a race net both are the contact net."""
        c = self.contact.to_engine()
        return c, (self.race.to_engine() if self.race is not None else c)

    def from_engine(self, contact: Net, race: Net | None = None) -> None:
        self.contact.from_engine(contact)
        if self.race is not None:
            self.race.from_engine(race if race is not None else contact)

    def to_model(self, meta: dict[str, Any] | None = None, variant: int = 0) -> Model:
        c, r = self.to_engine()
        base = {
            "encoder_version": ENCODER_VERSION,
            "hidden": self.hidden_units,
            "variant": variant,
            "games": 0,
            "race_net": self.has_race,
        }
        return Model(c, r, {**base, **(meta or {})})

    @classmethod
    def from_model(cls, model: Model) -> TDNet:
        """A torch net holding model's weights (a race net if it has distinct ones)."""
        net = cls(model.contact[1].shape[0], race_net=has_own_race_net(model))
        net.from_engine(model.contact, model.race)
        return net


__all__ = ["CONTACT_INPUT", "OneHidden", "TDNet", "consistent", "has_own_race_net"]
