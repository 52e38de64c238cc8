"""doublet.nn.eval, the evaluator, against a plain numpy forward pass written here from
its definition (inputs x from doublet.nn.encode; sigmoid(w2 . sigmoid(w1 x + b1) + b2),
then gammons clamped within wins and backgammons within gammons), on random positions of
both variants; the race net takes the positions without contact; finished games get their
exact result; a batch equals its boards one by one; the vectorized sigmoid equals the
exact one; the equity formula; the pruning net against a plain ReLU net on the raw inputs;
the 0-ply Player picks the best equity; model files: a round trip, and every kind of bad
file refused with a ModelError; a model's lineage is appended to, never rewritten; the
shipped models' meta agrees with their weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from doublet.core.board import ACEY_DEUCEY, MY_OFF, OPP_OFF, SIZE, STANDARD, flip, has_contact
from doublet.core.errors import ModelError
from doublet.nn.encode import N_INPUTS, encode, encode_raw
from doublet.nn.eval import (
    Model,
    Player,
    _equity,
    _evaluate_near,
    _near_base,
    _sigmoid_layer,
    default_model,
    equity,
    evaluate,
    load_model,
    prune_scores,
    random_model,
    random_net,
    save_model,
    with_step,
)
from doublet.rules.movegen import legal_outcomes
from tests.helpers import pos, random_positions


def plain_forward(x: np.ndarray, net: tuple[np.ndarray, ...]) -> np.ndarray:
    """The net's five probabilities for inputs x, in float64, from the definition."""
    w1, b1, w2, b2 = (np.asarray(a, np.float64) for a in net)
    hidden = 1.0 / (1.0 + np.exp(-(x.astype(np.float64) @ w1 + b1)))
    p = 1.0 / (1.0 + np.exp(-(hidden @ w2 + b2)))
    p[1] = min(p[1], p[0])
    p[2] = min(p[2], p[1])
    p[3] = min(p[3], 1.0 - p[0])
    p[4] = min(p[4], p[3])
    return p


def _model() -> Model:
    """Distinct contact and race nets, scaled so the outputs spread over (0, 1)."""
    c = tuple(a * 4 for a in random_net(24, seed=5))
    r = tuple(a * 4 for a in random_net(16, seed=6))
    return Model(c, r, {"encoder_version": 2, "hidden": 24, "variant": 0})  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_evaluate_equals_the_plain_forward_pass(variant: int) -> None:
    m = _model()
    boards = random_positions(300, variant, seed=21)
    got = evaluate(boards, m)
    x = encode(boards)
    races = 0
    for b, xi, g in zip(boards, x, got, strict=True):
        net = m.contact if has_contact(b) else m.race
        races += not has_contact(b)
        assert np.abs(g - plain_forward(xi, net)).max() < 2e-6
    if variant == STANDARD:
        assert races > 5  # both nets were used


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_a_play_valued_from_the_position_before_it(variant: int) -> None:
    """_evaluate_near (the search's 0-ply values of a roll's plays): each play's
    position from the sums of the position before it (both seen by the side to roll
    next), against the plain forward pass; a base far from the position gives the same
    values too (only the rows that differ are added)."""
    m = _model()
    nh = m.contact[1].shape[0]
    x, xb = np.zeros(N_INPUTS, np.float32), np.zeros(N_INPUTS, np.float32)
    hb, hidden = np.zeros(nh, np.float32), np.zeros(2 * nh, np.float32)
    flipped, out = np.zeros(SIZE, np.int8), np.zeros(5, np.float32)
    rng = np.random.default_rng(4)
    checked = 0
    for parent in random_positions(60, variant, seed=31):
        if not has_contact(parent):
            continue
        _near_base(flip(parent), m.contact, xb, hb, flipped)
        d1, d2 = (int(d) for d in rng.integers(1, 7, 2))
        for after, again in zip(*legal_outcomes(parent, d1, d2, variant), strict=True):
            view = after if again else flip(after)
            if not has_contact(view):
                continue
            _evaluate_near(view, m.contact, x, hidden, flipped, xb, hb, out)
            assert np.abs(out - plain_forward(encode(view[None])[0], m.contact)).max() < 2e-6
            checked += 1
            last = view
    assert checked > 200
    # From a base that is not near at all: still the same values.
    _near_base(random_positions(1, variant, seed=2)[0], m.contact, xb, hb, flipped)
    _evaluate_near(last, m.contact, x, hidden, flipped, xb, hb, out)
    assert np.abs(out - plain_forward(encode(last[None])[0], m.contact)).max() < 2e-6


def test_probabilities_are_consistent_with_the_shipped_model() -> None:
    p = evaluate(random_positions(500, STANDARD, seed=3), default_model(STANDARD))
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(p[:, 1] <= p[:, 0]) and np.all(p[:, 2] <= p[:, 1])
    assert np.all(p[:, 3] <= 1 - p[:, 0] + 1e-7) and np.all(p[:, 4] <= p[:, 3])


def test_finished_games_are_exact() -> None:
    m = _model()
    gammon = pos({}, {19: 15})  # the mover has borne off all 15, the opponent none
    gammon[26] = 15
    assert evaluate(gammon, m).tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert evaluate(flip(gammon), m).tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    backgammon = pos({}, {6: 15})  # the opponent is still in the mover's home board
    backgammon[26] = 15
    assert evaluate(backgammon, m).tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_no_gammon_once_a_checker_is_off(variant: int) -> None:
    """In the search's static value, a side with a checker borne off can lose neither a
    gammon nor a backgammon, whatever the net says (the random nets here put those
    chances well above 0); the net's own outputs stay as they are (training fits them)."""
    from doublet.search.searcher import Limits, Searcher

    m = _model()
    searcher = Searcher(m, variant, use_bearoff=False)
    boards = [b for b in random_positions(3000, variant, seed=23) if b[MY_OFF] or b[OPP_OFF]]
    boards = [b for b in boards if b[MY_OFF] < 15 and b[OPP_OFF] < 15]
    raw = evaluate(boards, m)
    got = np.array([searcher.evaluate(b, Limits(ply=0)) for b in boards])
    mine = np.array([b[MY_OFF] > 0 for b in boards])
    theirs = np.array([b[OPP_OFF] > 0 for b in boards])
    assert mine.sum() > 20 and theirs.sum() > 20
    assert raw[mine][:, 3].min() > 0.001 and raw[theirs][:, 1].min() > 0.001
    assert np.all(got[mine][:, 3:] == 0.0) and np.all(got[theirs][:, 1:3] == 0.0)
    # The chances the rules leave open are the net's.
    assert np.array_equal(got[~mine][:, 3:], raw[~mine][:, 3:])
    assert np.array_equal(got[~theirs][:, 1:3], raw[~theirs][:, 1:3])
    assert np.array_equal(got[:, 0], raw[:, 0])


def test_a_batch_equals_its_boards_one_by_one() -> None:
    m = _model()
    boards = random_positions(40, STANDARD, seed=8)
    batch = evaluate(boards, m)
    for b, row in zip(boards, batch, strict=True):
        assert np.array_equal(evaluate(b, m), row)


def test_sigmoid_layer_matches_the_exact_sigmoid() -> None:
    # The forward pass's vectorized sigmoid, over the whole range a hidden unit can take
    # and beyond (its clamps), against the float64 formula; its scratch half is free.
    x = np.concatenate([np.linspace(-200.0, 200.0, 400_001), [0.0, -1e30, 1e30, 88.0, -88.0]])
    x = x.astype(np.float32)
    h = np.concatenate([x, np.full_like(x, np.nan)])
    _sigmoid_layer(h, x.size)
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    got = h[: x.size].astype(np.float64)
    assert np.all(np.isfinite(got)) and np.all((got >= 0.0) & (got <= 1.0))
    assert np.abs(got - want).max() < 1.2e-7
    assert got[np.argmin(np.abs(x))] == 0.5
    assert np.all(np.diff(got[:400_001]) >= -1.2e-7)  # rises with x, up to rounding
    with pytest.raises(ValueError, match="twice"):  # scratch too small: refused, not overrun
        _sigmoid_layer(np.zeros(5, np.float32), 3)


def test_equity_formula() -> None:
    p = np.array([0.6, 0.2, 0.05, 0.1, 0.01], np.float32)
    want = 2 * 0.6 - 1 + 0.2 - 0.1 + 0.05 - 0.01
    assert equity(p) == pytest.approx(want, abs=1e-7)
    assert _equity(p) == equity(p)  # the kernel's and the wrapper's: the same float64 sum
    assert equity(np.array([[1, 1, 1, 0, 0], [0, 0, 0, 1, 1]])).tolist() == [3.0, -3.0]


def test_the_pruning_net_is_a_relu_net_on_the_raw_inputs() -> None:
    rng = np.random.default_rng(4)
    n_raw = encode_raw(pos({6: 1}, {19: 1})).shape[1]
    net = (rng.standard_normal((n_raw, 8)).astype(np.float32) * 0.3,
           rng.standard_normal(8).astype(np.float32) * 0.3,
           rng.standard_normal((8, 1)).astype(np.float32),
           rng.standard_normal(1).astype(np.float32))  # fmt: skip
    boards = random_positions(100, STANDARD, seed=9)
    got = prune_scores(boards, net)
    x = encode_raw(boards).astype(np.float64)
    hidden = np.maximum(x @ net[0].astype(np.float64) + net[1], 0.0)
    want = hidden @ net[2][:, 0].astype(np.float64) + net[3][0]
    assert np.abs(got - want).max() < 1e-4


def test_the_player_picks_the_best_equity() -> None:
    m = default_model(STANDARD)
    player = Player(m)
    for b in random_positions(30, STANDARD, seed=12):
        best, boards, again = player.choose(b, 5, 2)
        after, _ = legal_outcomes(b, 5, 2)
        assert np.array_equal(boards, after)
        views = np.array([x if a else flip(x) for x, a in zip(boards, again, strict=True)])
        p = evaluate(views, m)
        mover = np.where(again[:, None], p, p[:, [0, 3, 4, 1, 2]])
        mover[~again, 0] = 1 - p[~again, 0]
        assert best == int(np.argmax(equity(mover)))


def test_model_round_trip(tmp_path: Path) -> None:
    m = random_model(12, seed=2)
    save_model(tmp_path / "m.npz", m)
    back = load_model(tmp_path / "m.npz")
    for a, b in zip(back.contact, m.contact, strict=True):
        assert np.array_equal(a, b)
    assert back.meta["hidden"] == 12 and back.prune is None


def _write(path: Path, **arrays: np.ndarray) -> Path:
    np.savez(path, **arrays)
    return path


def test_bad_model_files_are_refused(tmp_path: Path) -> None:
    good = tmp_path / "good.npz"
    save_model(good, random_model(8, seed=1))
    with pytest.raises(ModelError, match="does not exist"):
        load_model(tmp_path / "missing.npz")
    (tmp_path / "text.npz").write_text("not a model")
    with pytest.raises(ModelError, match="not a Doublet model"):
        load_model(tmp_path / "text.npz")
    z = dict(np.load(good))
    meta = json.loads(str(z["meta"]))
    with pytest.raises(ModelError, match=r"model '.*v\.npz' was trained with encoder version 99"):
        load_model(_write(tmp_path / "v.npz", **{**z, "meta": np.array(json.dumps(
            {**meta, "encoder_version": 99}))}))  # fmt: skip
    with pytest.raises(ModelError, match=r"s\.npz': the contact net's weights have inconsistent"):
        load_model(_write(tmp_path / "s.npz", **{**z, "contact_w2": z["contact_w2"][:3]}))
    nan = z["race_b1"].copy()
    nan[0] = np.nan
    with pytest.raises(ModelError, match=r"n\.npz': the race net has NaN"):
        load_model(_write(tmp_path / "n.npz", **{**z, "race_b1": nan}))


def test_lineage_is_appended_never_rewritten() -> None:
    one = with_step({"hidden": 8}, "td-train", command="python -m doublet.training", games=16)
    two = with_step(one, "prune", command="python -m doublet.training.prune m.npz")
    assert [s["kind"] for s in two["lineage"]] == ["td-train", "prune"]
    assert [s["step"] for s in two["lineage"]] == [1, 2]
    assert two["lineage"][0] == one["lineage"][0] and len(one["lineage"]) == 1
    assert two["hidden"] == 8


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_the_shipped_models_meta_agrees_with_their_weights(variant: int) -> None:
    m = default_model(variant)
    assert m.meta["hidden"] == m.contact[1].shape[0]
    if "config" in m.meta:
        assert m.meta["config"]["hidden"] == m.meta["hidden"]
    lineage = m.meta["lineage"]
    assert [s["step"] for s in lineage] == list(range(1, len(lineage) + 1))
    assert lineage[-1]["kind"] in ("prune", "ship")
    if variant == STANDARD:
        assert m.meta["games"] == 1_400_000
        assert any(s["kind"] == "distill-fit" for s in lineage)


@pytest.mark.parametrize("bad", ["short", "long", "counts", "float"])
def test_evaluate_and_choose_refuse_boards_the_kernels_would_misread(bad: str) -> None:
    """The kernels check no bounds: a (29,) board was read past its end and a board of
    100s evaluated (a review)."""
    from doublet.core.errors import InvalidPositionError

    start = np.asarray(pos({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}))
    board = {"short": start[:29], "long": np.append(start, 0),
             "counts": np.full(SIZE, 100, np.int8), "float": start.astype(float)}[bad]  # fmt: skip
    m = default_model()
    with pytest.raises(InvalidPositionError):
        evaluate(board, m)
    with pytest.raises(InvalidPositionError):
        Player(m).choose(board, 3, 1)
    assert evaluate(start, m).shape == (5,) and evaluate(start[None], m).shape == (1, 5)


def test_default_model_of_an_unknown_variant_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="the variant is 0"):
        default_model(2)
