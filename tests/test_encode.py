"""The net's inputs (doublet.nn.encode): version 2's features against slow references, the
whole encoding against a plain one (tests/reference_encode.py), the layout, and
version-1 models running unchanged on version-2 inputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from doublet.core.board import ACEY_DEUCEY, STANDARD, flip, starting
from doublet.nn.encode import (
    _V1_BLOCK,
    _V2_BASE,
    ENCODER_VERSION,
    N_FEATURES2_PER_SIDE,
    N_INPUTS,
    N_INPUTS_BY_VERSION,
    _hit_rolls,
    encode,
    upgrade_net,
)
from doublet.nn.eval import ModelError, evaluate, load_model, random_net, save_model
from doublet.rules.movegen import legal_outcomes
from tests.helpers import pos, random_positions
from tests.reference_encode import reference_encode

POSITIONS = random_positions(1500, STANDARD, seed=11)


def _reference_hits(b: np.ndarray) -> tuple[int, int]:
    """(rolls of 36 on which some legal play of the opponent hits a blot of b's mover, the
    sum over them of 25 - the lowest such blot's point): from every legal play."""
    opp = flip(b)
    rolls = pips = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            boards, _ = legal_outcomes(opp, d1, d2)
            hit = [p for p in range(1, 25) if b[p] == 1 and any(o[25 - p] >= 0 for o in boards)]
            if hit:
                w = 1 if d1 == d2 else 2
                rolls += w
                pips += w * (25 - min(hit))
    return rolls, pips


def test_version_2_layout() -> None:
    assert ENCODER_VERSION == 2
    assert N_INPUTS == N_INPUTS_BY_VERSION[2] == N_INPUTS_BY_VERSION[1] + 2 * N_FEATURES2_PER_SIDE
    x = encode(np.stack(POSITIONS))
    assert x.shape == (len(POSITIONS), N_INPUTS)
    feats = x[:, _V2_BASE : _V2_BASE + 2 * N_FEATURES2_PER_SIDE]
    assert (feats >= 0).all() and (feats <= 1).all()
    # Every feature varies over real positions (none is a constant).
    assert (feats.std(axis=0) > 0.01).all()


def test_sides_swap_when_the_board_is_flipped() -> None:
    for b in POSITIONS[:300]:
        x, y = encode(b)[0], encode(flip(b))[0]
        k = N_FEATURES2_PER_SIDE
        assert np.array_equal(x[:_V1_BLOCK], y[_V1_BLOCK:_V2_BASE])
        assert np.array_equal(x[_V2_BASE : _V2_BASE + k], y[_V2_BASE + k : _V2_BASE + 2 * k])
        assert x[-1] == y[-1]


def test_hit_rolls_agree_with_every_legal_play() -> None:
    """The bitboard shot count equals the count from the opponent's legal plays, except
    where the only hitting plays break the rule to use both dice (the hit leaves the
    other die unplayable while another play uses both): then it counts a roll or two more
    (measured: 10 of 1,500 positions)."""
    exact = 0
    with_blots = 0
    for b in POSITIONS:
        got = _hit_rolls(b)
        want = _reference_hits(b)
        if want[0] or got[0]:
            with_blots += 1
        if got == want:
            exact += 1
        else:
            assert 0 <= got[0] - want[0] <= 4, (b.tolist(), got, want)
    assert with_blots > 1000
    assert exact >= 0.98 * len(POSITIONS)


@pytest.mark.parametrize(
    ("mover", "opponent", "rolls", "loss"),
    [
        # A blot 6 pips in front of one opponent checker: 17 rolls (11 with a 6, 5-1, 4-2,
        # 3-3, 2-2), the blot on 7 costs 18 pips.
        ({7: 1, 6: 14}, {1: 1, 24: 14}, 17, 18),
        # The same with the opponent's 4-point stop and 2-point stop blocked by the mover:
        # 4-2, 2-2 (stops 3, 5) and 3-3 (stop 4) no longer hit; 5-1 still does (via 2 or 6).
        ({7: 1, 3: 2, 4: 2, 5: 2, 6: 8}, {1: 1, 24: 14}, 11 + 2 + 0, 18),
        # An opponent checker on the bar enters on the blot's point 5 (11 rolls with a 5)
        # or enters and goes on to it (4-1, 3-2).
        ({5: 1, 13: 14}, {"bar": 1, 24: 14}, 11 + 4, 20),
    ],
)
def test_hit_rolls_by_hand(mover: dict, opponent: dict, rolls: int, loss: int) -> None:
    b = pos(mover, opponent)
    got_rolls, got_pips = _hit_rolls(b)
    assert got_rolls == rolls == _reference_hits(b)[0]
    assert got_pips == rolls * loss


def test_no_blots_no_shots() -> None:
    assert _hit_rolls(starting()) == (0, 0)


def test_a_version_1_net_gives_the_same_outputs_on_version_2_inputs(tmp_path) -> None:
    n1 = N_INPUTS_BY_VERSION[1]
    net1 = random_net(24, seed=3, n_inputs=n1)
    w1, b1, w2, b2 = net1
    path = tmp_path / "v1.npz"
    arrays = {"meta": np.array(json.dumps({"encoder_version": 1, "hidden": 24, "variant": 0}))}
    for name in ("contact", "race"):
        for key, a in zip(("w1", "b1", "w2", "b2"), net1, strict=True):
            arrays[f"{name}_{key}"] = a
    np.savez(path, **arrays)
    model = load_model(path)
    assert model.contact[0].shape == (N_INPUTS, 24)
    assert model.meta["upgraded_from_encoder"] == 1
    boards = np.stack(POSITIONS[:200])
    x = encode(boards)
    x1 = np.concatenate([x[:, :_V2_BASE], x[:, -1:]], axis=1)  # version 1's inputs
    assert x1.shape[1] == n1

    def sig(v: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-v))

    want = sig(sig(x1 @ w1 + b1) @ w2 + b2)
    got = evaluate(boards, model)
    clamp = want.copy()
    clamp[:, 1] = np.minimum(clamp[:, 1], clamp[:, 0])
    clamp[:, 2] = np.minimum(clamp[:, 2], clamp[:, 1])
    clamp[:, 3] = np.minimum(clamp[:, 3], 1 - clamp[:, 0])
    clamp[:, 4] = np.minimum(clamp[:, 4], clamp[:, 3])
    assert np.allclose(got, clamp, atol=2e-5)
    # Saved again, it is a version-2 model of the same outputs.
    save_model(tmp_path / "v2.npz", model)
    again = load_model(tmp_path / "v2.npz")
    assert again.meta["encoder_version"] == ENCODER_VERSION
    assert np.allclose(evaluate(boards, again), got)
    assert upgrade_net(again.contact, ENCODER_VERSION) is again.contact


def test_an_unknown_encoder_version_is_refused(tmp_path) -> None:
    net = random_net(8, n_inputs=N_INPUTS)
    arrays = {"meta": np.array(json.dumps({"encoder_version": 7, "hidden": 8}))}
    for name in ("contact", "race"):
        for key, a in zip(("w1", "b1", "w2", "b2"), net, strict=True):
            arrays[f"{name}_{key}"] = a
    np.savez(tmp_path / "m.npz", **arrays)
    with pytest.raises(ModelError, match="encoder version 7"):
        load_model(tmp_path / "m.npz")


def test_escape_features_of_a_trapped_checker() -> None:
    """A checker behind a full six-point prime: prime 1.0, mobility 0."""
    b = pos({24: 1, 6: 14}, {18: 2, 19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 1: 3})
    x = encode(b)[0]
    f = x[_V2_BASE : _V2_BASE + N_FEATURES2_PER_SIDE]
    assert f[2] == 1.0  # the opponent's prime in front, / 6
    assert f[3] == 0.0  # no escaping roll for the mover's back checker
    # Pips to pass the opponent's rearmost checker (on 1): 23 from 24, 5 from each on 6.
    assert math.isclose(f[4], (23 + 14 * 5) / 200.0, rel_tol=1e-6)


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY], ids=["std", "acey"])
def test_encoding_equals_the_plain_reference(variant: int) -> None:
    """The one-pass bitboard encoder against each feature computed plainly, loop by loop
    (tests/reference_encode.py), on random positions and their flips."""
    boards = random_positions(1500, variant, seed=17)
    boards += [flip(b) for b in boards[:500]]
    got = encode(np.stack(boards))
    want = np.stack([reference_encode(b) for b in boards])
    assert np.allclose(got, want, rtol=0, atol=1e-6)
