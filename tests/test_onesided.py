"""The one-sided race net's pieces (doublet.training.onesided): a config's successors,
the value-iteration step against the definition and against the bear-off database, the
combination of two sides' distributions, the numpy net against torch's, and a fit that
is stopped and resumed."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from doublet.core import board as B  # noqa: E402
from doublet.rules.bearoff import _BINOM, database  # noqa: E402
from doublet.training import onesided as O  # noqa: E402
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

    os = O.OneSided({}, {})
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
    os = O.OneSided({}, {})

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
    os = O.OneSided({}, {})
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
    with pytest.raises(SystemExit, match="--configs 30, not 31"):
        O.main([*small[:-4], "--configs", "31", "--hidden", "8", "--rounds", "3",
                "--resume"])  # fmt: skip
    with pytest.raises(SystemExit, match="not both"):
        O.main([*small, "--rounds", "3", "--resume", "--init", str(out)])
    loaded = O.OneSided.load(out)
    a, f = loaded.dists(np.array([_cfg({12: 2, 8: 3, 3: 10})]))
    assert a.sum() == pytest.approx(1.0, abs=1e-5) and f.sum() == pytest.approx(1.0, abs=1e-5)
