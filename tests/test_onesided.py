"""The one-sided race net's pieces (doublet.training.onesided): a config's successors,
the value-iteration step against the definition and against the bear-off database, the
combination of two sides' distributions, the numpy net against torch's, a fit that
is stopped and resumed, and two fits of one seed that give the same net."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from doublet.core import board as B  # noqa: E402
from doublet.rules.bearoff import _BINOM, database  # noqa: E402
from doublet.training import onesided as O  # noqa: E402
from tests.helpers import refusal  # noqa: E402
from tests.reference import reference_outcomes  # noqa: E402


def _cfg(points: dict[int, int], off: int = 0) -> np.ndarray:
    c = np.zeros(24, np.int8)
    c[0] = off
    for p, n in points.items():
        c[p] = n
    return c


def _mass(t: int) -> np.ndarray:
    d = np.zeros((1, O.TURNS), np.float32)
    d[0, t] = 1.0
    return d


def test_successors_are_the_reference_plays_of_the_side_alone() -> None:
    c = _cfg({13: 2, 9: 1, 7: 3, 5: 4, 2: 3}, off=2)
    board = O._board(c)
    for r, s in enumerate(O.successors(c)):
        d1, d2 = (int(d) for d in O.ROLLS_21[r])
        want = set()
        for raw, _ in reference_outcomes(board, d1, d2, B.STANDARD):
            b = np.frombuffer(raw, np.int8)
            want.add(O.config(b).tobytes())
        assert {row.tobytes() for row in s} == want
        assert int(s[:, 0].sum() + s[:, 1:].sum()) == len(s) * B.CHECKERS


def test_a_config_is_one_side_of_a_race() -> None:
    with pytest.raises(ValueError, match="contact"):
        O.config(B.starting())


def test_home_configs_take_the_database_and_a_checker_off_ends_the_first_race() -> None:
    db = database()
    rng = np.random.default_rng(3)
    configs = []
    for _ in range(30):
        counts = rng.multinomial(int(rng.integers(1, 16)), np.ones(7) / 7)[:6]
        configs.append(_cfg({p + 1: int(n) for p, n in enumerate(counts)},
                            off=int(B.CHECKERS - counts.sum())))  # fmt: skip
    configs = np.array(configs)

    def no_net(_: np.ndarray) -> None:
        raise AssertionError("a home config went to the net")

    os = O.OneSided({})
    a, f = O._dists(configs, no_net, os.off, os.first)
    r = O._ranks(configs, _BINOM)
    np.testing.assert_array_equal(a[:, :32], db.off[r])
    for i, c in enumerate(configs):
        if c[0] > 0:
            np.testing.assert_array_equal(f[i], _mass(0)[0])
        else:
            np.testing.assert_array_equal(f[i, :32], db.first[r[i]])


def test_value_iteration_step_is_the_definition_over_the_36_rolls() -> None:
    """A checker on the 7 point and two on the 1: nothing bears off while the 7 is out,
    so every play brings it home first; each successor's distributions are then the
    database's and the step is exact. Written out over the 36 ordered rolls with the
    slow reference's plays."""
    c = _cfg({7: 1, 1: 2}, off=12)
    db = database()
    problem = O.Problem(c[None])
    os = O.OneSided({})

    def no_net(_: np.ndarray) -> None:
        raise AssertionError("every successor is in the home board")

    ta, _ = O.targets(lambda x: O._dists(x, no_net, os.off, os.first), problem)
    want = np.zeros(O.TURNS)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            succ = [O.config(np.frombuffer(raw, np.int8))
                    for raw, _ in reference_outcomes(O._board(c), d1, d2, B.STANDARD)]  # fmt: skip
            rows = db.off[O._ranks(np.array(succ), _BINOM)].astype(np.float64)
            best = rows[int(np.argmin(rows @ np.arange(rows.shape[1])))]
            want[1 : 1 + len(best)] += best[: O.TURNS - 1] / 36
    np.testing.assert_allclose(ta[0], want, atol=1e-6)


def test_value_iteration_step_reproduces_the_database_in_the_home_board() -> None:
    """The database was built by the same recursion: one step from its own successors
    gives each home config's distribution back."""
    db = database()
    rng = np.random.default_rng(5)
    configs = []
    while len(configs) < 25:
        counts = rng.multinomial(int(rng.integers(1, 16)), np.ones(7) / 7)[:6]
        if counts.sum() > 0:
            configs.append(_cfg({p + 1: int(n) for p, n in enumerate(counts)},
                                off=int(B.CHECKERS - counts.sum())))  # fmt: skip
    configs = np.array(configs)
    problem = O.Problem(configs)
    os = O.OneSided({})
    ta, _ = O.targets(lambda x: O._dists(x, None, os.off, os.first), problem, block=7)
    np.testing.assert_allclose(ta[:, :32], db.off[O._ranks(configs, _BINOM)], atol=1e-5)


def test_race_probs_from_point_masses() -> None:
    # A (on roll) needs 2 turns, B 2: A's second turn comes first. (A side's first
    # checker comes off no later than its last.)
    w, wg, lg = O.race_probs(_mass(2), _mass(2), _mass(2), _mass(2))[0]
    assert (w, wg, lg) == (1.0, 1.0, 0.0)  # B's first checker would come off on its 2nd
    w, wg, lg = O.race_probs(_mass(2), _mass(2), _mass(2), _mass(1))[0]
    assert (w, wg) == (1.0, 0.0)
    w, wg, lg = O.race_probs(_mass(3), _mass(3), _mass(2), _mass(1))[0]
    assert (w, wg, lg) == (0.0, 0.0, 1.0)  # B finishes on its 2nd, before A's 3rd turn
    w, wg, lg = O.race_probs(_mass(3), _mass(2), _mass(2), _mass(1))[0]
    assert (w, lg) == (0.0, 0.0)
    # Spread out: P(win) = sum_t P(T_A = t) P(T_B >= t).
    rng = np.random.default_rng(1)
    a, b = rng.dirichlet(np.ones(O.TURNS), 2).astype(np.float32)
    w = O.race_probs(a[None], a[None], b[None], b[None])[0, 0]
    assert w == pytest.approx(sum(a[t] * b[t:].sum() for t in range(O.TURNS)), abs=1e-6)


def test_numpy_net_is_torch_net(tmp_path) -> None:
    torch.manual_seed(0)
    net = O.Net(16)
    meta = {"kind": O.KIND, "rounds": []}
    O.save(tmp_path / "n.npz", net, meta)
    loaded = O.OneSided.load(tmp_path / "n.npz")
    configs = np.array([_cfg({13: 3, 8: 2, 6: 5, 1: 5}), _cfg({20: 1, 9: 4}, off=10)])
    a, f = loaded.net_dists(configs)
    with torch.no_grad():
        la, lf = net(torch.from_numpy(O.features(configs)))
    np.testing.assert_allclose(a, torch.softmax(la, 1).numpy(), atol=1e-6)
    np.testing.assert_allclose(f, torch.softmax(lf, 1).numpy(), atol=1e-6)
    np.save(tmp_path / "x.npy", np.zeros(3))
    np.savez(tmp_path / "other.npz", meta=np.array(json.dumps({"kind": "model"})))
    with pytest.raises(ValueError, match="not a one-sided"):
        O.OneSided.load(tmp_path / "other.npz")


def test_fit_writes_each_round_and_resumes(tmp_path, capsys) -> None:
    out = tmp_path / "os.npz"
    small = ["fit", "--out", str(out), "--games", "20", "--configs", "30", "--hidden", "8"]
    assert O.main([*small, "--rounds", "1"]) == 0
    with np.load(out) as z:
        meta = json.loads(str(z["meta"]))
    assert len(meta["rounds"]) == 1 and meta["kind"] == O.KIND
    assert O.main([*small, "--rounds", "2", "--resume"]) == 0
    with np.load(out) as z:
        meta2 = json.loads(str(z["meta"]))
    assert meta2["rounds"][0] == meta["rounds"][0] and len(meta2["rounds"]) == 2
    assert O.main([*small, "--rounds", "2", "--resume"]) == 0
    assert "2 rounds done already" in capsys.readouterr().out
    refusal(O.main, [*small[:-4], "--configs", "31", "--hidden", "8", "--rounds", "3",
                     "--resume"], "--configs 30, not 31")  # fmt: skip
    cut = tmp_path / "cut.npz"  # a net cut short (a copy stopped half way): words, no traceback
    cut.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    refusal(O.main, [*small[:2], str(cut), *small[3:], "--rounds", "3", "--resume"],
                     r"cut\.npz cannot be read .*remove it to start again")  # fmt: skip
    capsys.readouterr()
    assert O.main([*small, "--rounds", "3", "--resume", "--init", str(out)]) == 2
    assert "not both" in capsys.readouterr().err
    # Bad values are one error line each, before any work (--hidden 0 wrote a net).
    assert O.main([*small[:-4], "--hidden", "0", "--epsilon", "3", "--lr", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--hidden must be at least 1" in err and "0 to 1, got 3.0" in err
    assert "--lr must be above 0" in err
    before = out.read_bytes()  # a new run over a net is refused: its rounds would go
    assert O.main([*small, "--rounds", "1"]) == 2
    assert "holds a net already: --resume goes on from it" in capsys.readouterr().err
    assert out.read_bytes() == before
    loaded = O.OneSided.load(out)
    a, f = loaded.dists(np.array([_cfg({12: 2, 8: 3, 3: 10})]))
    assert a.sum() == pytest.approx(1.0, abs=1e-5) and f.sum() == pytest.approx(1.0, abs=1e-5)


def test_two_fits_of_one_seed_give_the_same_net(tmp_path) -> None:
    """The net was built before torch was seeded, so its initial weights came from
    whatever torch's generator held (another per process, or per step of a recipe run):
    two fits with the same --seed gave different nets. Each fit starts here from a
    differently seeded generator, as two processes would."""
    small = ["fit", "--games", "20", "--configs", "30", "--hidden", "8", "--rounds", "1",
             "--seed", "3"]  # fmt: skip
    nets = []
    for k, name in enumerate(("a.npz", "b.npz")):
        torch.manual_seed(100 + k)
        assert O.main([*small, "--out", str(tmp_path / name)]) == 0
        with np.load(tmp_path / name) as z:
            nets.append({key: z[key] for key in z.files if key != "meta"})
    assert nets[0].keys() == nets[1].keys() and len(nets[0]) == 8
    for key in nets[0]:
        assert np.array_equal(nets[0][key], nets[1][key]), key


# -- the engine's kernels (doublet.rules.onesided) against training's numpy reference -------


def _race_boards(n: int, seed: int) -> np.ndarray:
    """Race boards: the side on roll's checkers on its points 1..12, the other's on its
    own 1..12 (the board's 13..24), some of each off."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        b = np.zeros(B.SIZE, np.int8)
        for sign, off_index in ((1, B.MY_OFF), (-1, B.OPP_OFF)):
            on = int(rng.integers(1, 16))
            points = rng.integers(1, 13, on)
            for p in points:
                b[p if sign == 1 else 25 - p] += sign
            b[off_index] = B.CHECKERS - on
        out.append(b)
    return np.array(out)


@pytest.fixture(scope="module")
def small_net(tmp_path_factory) -> object:
    torch.manual_seed(7)
    net = O.Net(24)
    with torch.no_grad():  # spread the distributions out: a fresh net's are near uniform
        net.all.bias.copy_(torch.linspace(3, -3, O.TURNS))
        net.first.bias.copy_(torch.linspace(4, -4, O.TURNS))
    path = tmp_path_factory.mktemp("onesided") / "net.npz"
    O.save(path, net, {"kind": O.KIND, "rounds": []})
    return path


def test_kernel_race_probs_are_the_numpy_reference(small_net) -> None:
    from doublet.rules import onesided as K

    boards = _race_boards(300, 11)
    ref = O.OneSided.load(small_net)
    a_all, a_first = ref.dists(np.array([O.config(b) for b in boards]))
    b_all, b_first = ref.dists(np.array([O.config(B.flip(b)) for b in boards]))
    want = O.race_probs(a_all, a_first, b_all, b_first)
    got = K.race_probs(boards, K.load(small_net))
    np.testing.assert_allclose(got[:, 0], want[:, 0], atol=2e-6)
    np.testing.assert_allclose(got[:, 1], np.minimum(want[:, 1], want[:, 0]), atol=2e-6)
    np.testing.assert_allclose(got[:, 3], np.minimum(want[:, 2], 1 - want[:, 0]), atol=2e-6)
    assert (got[:, [2, 4]] == 0).all()


def test_load_names_what_is_wrong(small_net, tmp_path) -> None:
    from doublet.core.errors import ModelError
    from doublet.rules import onesided as K

    (tmp_path / "text.npz").write_text("not a zip")
    with pytest.raises(ModelError, match="not a one-sided race net"):
        K.load(tmp_path / "text.npz")
    with np.load(small_net) as z:
        arrays = {k: z[k] for k in z.files}
    np.savez(tmp_path / "kind.npz", **{**arrays, "meta": np.array(json.dumps({"kind": "x"}))})
    with pytest.raises(ModelError, match="kind"):
        K.load(tmp_path / "kind.npz")
    bad = {**arrays, "l2_w": arrays["l2_w"][:, :3]}
    np.savez(tmp_path / "shape.npz", **bad)
    with pytest.raises(ModelError, match="l2_w"):
        K.load(tmp_path / "shape.npz")
    nan = {**arrays, "all_b": np.full_like(arrays["all_b"], np.nan)}
    np.savez(tmp_path / "nan.npz", **nan)
    with pytest.raises(ModelError, match="all_b"):
        K.load(tmp_path / "nan.npz")


def test_the_search_values_races_with_it_and_only_races(small_net, monkeypatch) -> None:
    from doublet.nn.eval import default_model
    from doublet.rules import onesided as K
    from doublet.search.searcher import Limits, Searcher

    net = K.load(small_net)
    monkeypatch.setattr(K, "_SHIPPED", net)
    with_it, without = Searcher(default_model()), Searcher(default_model(), use_onesided=False)
    zero = Limits(ply=0)
    boards = _race_boards(20, 12)
    want = K.race_probs(boards, net)
    for b, w in zip(boards, want, strict=True):
        got = with_it.evaluate(b, zero)
        assert got[0] == pytest.approx(w[0], abs=1e-6)
        assert got[1] >= w[1] - 1e-6 and got[3] >= w[3] - 1e-6  # raised to the backgammons
        assert without.evaluate(b, zero)[0] != pytest.approx(w[0], abs=1e-6)
    start = B.starting()
    np.testing.assert_array_equal(with_it.evaluate(start, zero), without.evaluate(start, zero))


def test_racenet_player_spec() -> None:
    from doublet.games.duplicate_search import player

    assert callable(player("racenet:0", B.STANDARD))
    with pytest.raises(ValueError, match="racenet:PLY with PLY 0-4"):
        player("racenet:9", B.STANDARD)


def test_ctrl_c_is_said_not_a_traceback(tmp_path, monkeypatch, capsys) -> None:
    """Ctrl-C in onesided fit (and prune) ends with a line and 130, not a traceback."""
    from doublet.training import prune

    def stop(*_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(O, "fit", stop)
    assert O.main(["fit", "--out", str(tmp_path / "os.npz")]) == 130
    assert "stopped (Ctrl-C)" in capsys.readouterr().err
    monkeypatch.setattr(prune, "_run", stop)
    assert prune.main([str(tmp_path / "m.npz")]) == 130
    assert "stopped (Ctrl-C): nothing written" in capsys.readouterr().err
