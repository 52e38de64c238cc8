"""Expectiminimax search (doublet.search.searcher) and analysis (doublet.search.analysis).

- 1-ply evaluation equals a brute-force Python expectiminimax over legal_outcomes and
  doublet.nn.eval.evaluate (no filtering at 1 ply), on random positions of both variants;
- 2-ply with unbounded filters equals the brute force at 2 ply (small positions);
- the position cache changes nothing: the same answers with a cold and a warm cache,
  and results are deterministic;
- the bear-off database is used at the leaves of pure bear-offs (exact values);
- analyse_roll ranks plays by equity with non-negative losses, marks depths, and
  reports shots at the blots of the best play; the Acey-Deucey 1-2 chain is searched
  with the mover on roll after a 'roll again' play;
- the pruning net: its kernel equals the net computed with numpy on the raw inputs, and
  a pruned 1-ply evaluation equals a brute force that prunes the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

from doublet.core.board import (
    ACEY_DEUCEY,
    STANDARD,
    crashed,
    flip,
    has_contact,
    outcome,
)
from doublet.formats.notation import describe_outcomes
from doublet.formats.position import Position
from doublet.nn.encode import N_PRUNE_INPUTS, encode, encode_raw
from doublet.nn.eval import (
    PRUNE_ROWS,
    PRUNE_SCALES,
    Model,
    _prune_base,
    _prune_delta_score,
    equity,
    evaluate,
    prune_scores,
    random_model,
)
from doublet.rules.bearoff import bearoff_probs
from doublet.rules.movegen import legal_outcomes
from doublet.search.analysis import analyse_roll, evaluate_position
from doublet.search.searcher import PRUNE_KEEP, Limits, Searcher
from tests import reference
from tests.helpers import pos, random_positions

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
MODEL = random_model(24, seed=3)


def static(b: np.ndarray) -> np.ndarray:
    """The search's static value without the bear-off database: the net's, with no
    gammon (nor backgammon) for a side that has borne off a checker (the rules)."""
    return reference.without_impossible_gammons(b, evaluate(b, MODEL))


def _mover(p: np.ndarray, again: bool) -> np.ndarray:
    if again:
        return p
    return np.array([1 - p[0], p[3], p[4], p[1], p[2]])


def brute(b: np.ndarray, depth: int, variant: int) -> np.ndarray:
    """V_depth(b) for the side on roll, no filtering, no cache, no bear-off database."""
    if depth == 0:
        return static(b)
    total = np.zeros(5)
    for d1, d2 in ROLLS:
        boards, again = legal_outcomes(b, d1, d2, variant)
        best, best_eq = None, -np.inf
        for x, a in zip(boards, again, strict=True):
            view = x if a else flip(x)
            if depth == 1:
                p = _mover(static(view), a)
            else:
                p = _mover(brute(view, depth - 1, variant), a)
            e = equity(p)
            if e > best_eq:
                best, best_eq = p, e
        total += (1 if d1 == d2 else 2) / 36 * best
    return total


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY], ids=["std", "acey"])
def test_one_ply_equals_brute_force(variant: int) -> None:
    s = Searcher(MODEL, variant, use_bearoff=False)
    for b in random_positions(60, variant, seed=7)[20::8]:
        if variant == ACEY_DEUCEY and b[28] > 6:
            continue  # long 1-2 chains: slow in the brute force
        got = s.evaluate(b, Limits(ply=1))
        assert np.allclose(got, brute(b, 1, variant), atol=2e-6), b


def test_two_ply_equals_brute_force_without_filters() -> None:
    s = Searcher(MODEL, STANDARD, use_bearoff=False)
    wide = Limits(ply=2, inner_keep=10_000, inner_width=100.0)
    for b in (pos({3: 2, 5: 1, 20: 1}, {1: 1, 22: 2, 24: 1}), pos({2: 2, 22: 1}, {3: 1, 24: 2})):
        assert np.allclose(s.evaluate(b, wide), brute(b, 2, STANDARD), atol=5e-6)


def test_cache_and_determinism() -> None:
    b = random_positions(30, STANDARD, seed=9)[-1]
    s = Searcher(MODEL, STANDARD)
    first = s.analyse(b, 5, 2, Limits(ply=2))
    again = s.analyse(b, 5, 2, Limits(ply=2))  # warm cache
    s.clear_cache()
    cold = s.analyse(b, 5, 2, Limits(ply=2))
    fresh = Searcher(MODEL, STANDARD).analyse(b, 5, 2, Limits(ply=2))
    for other in (again, cold, fresh):
        for x, y in zip(first, other, strict=True):
            assert np.array_equal(x, y)


def test_bearoff_positions_are_exact() -> None:
    b = pos({1: 2, 3: 1}, {24: 2, 22: 1})
    s = Searcher(MODEL, STANDARD)
    assert np.allclose(s.evaluate(b, Limits(ply=0)), bearoff_probs(b), atol=1e-6)
    assert np.allclose(s.evaluate(b, Limits(ply=2)), bearoff_probs(b), atol=1e-6)


def test_analyse_roll_ranks_and_reports() -> None:
    p = Position.from_id("4HPwATDgc/ABMA")
    doc = analyse_roll(p, 3, 1, ply=1, model=MODEL)
    plays = doc["plays"]
    assert len(plays) == 16 and doc["dice"] == [3, 1] and doc["ply"] == 1
    assert plays[0]["loss"] == 0.0 and all(r["loss"] >= 0 for r in plays)
    deep = [r for r in plays if r["ply"] == 1]
    assert deep and [r["equity"] for r in deep] == sorted((r["equity"] for r in deep), reverse=True)
    assert {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"} == set(
        plays[0]["probabilities"]
    )
    assert doc["pips"] == {"mover": 167, "opponent": 167}
    best = Position.from_id(plays[0]["position_id"]).flip()
    blots = [q for q in range(1, 25) if best.board[q] == 1]
    assert [s["point"] for s in doc["shots"]] == blots
    ev = evaluate_position(p, 0, MODEL)["evaluation"]
    assert ev["equity"] == pytest.approx(float(equity(evaluate(p.board, MODEL))), abs=1e-5)


def test_acey_deucey_chain_is_searched_with_the_mover_on_roll() -> None:
    p = Position.parse(
        {
            "variant": "acey-deucey",
            "mover": [11] + [0] * 19 + [1, 1, 1, 1, 0, 0],
            "opponent": [12] + [0] * 21 + [1, 1, 1, 0],
        }
    )
    doc = analyse_roll(p, 2, 1, ply=1, model=MODEL)
    assert any(r["again"] for r in doc["plays"])
    assert all(" then " in r["play"] for r in doc["plays"] if r["again"])


def _chain_by_doublet(b: np.ndarray) -> dict[int, list[tuple[np.ndarray, bool]]]:
    """The slow reference's 1-2 chain, grouped by the chosen doublet: k -> [(board, again)]."""
    from tests.reference import _play_in_order, legal_plays

    after_1_2, used = legal_plays(tuple(int(x) for x in b), 1, 2, ACEY_DEUCEY)
    assert used == 2
    out: dict[int, list[tuple[np.ndarray, bool]]] = {k: [] for k in range(1, 7)}
    for s in after_1_2:
        for k in range(1, 7):
            levels = _play_in_order(s, (k, k, k, k), ACEY_DEUCEY)
            again = len(levels) - 1 == 4
            out[k] += [(np.array(e, dtype=np.int8), again) for e in levels[-1]]
    return out


@pytest.mark.parametrize("ply", [0, 1])
def test_acey_deucey_chosen_doublet_is_the_best_ranked(ply: int) -> None:
    """After a 1-2 the engine's play names the doublet whose best continuation the search
    values highest. Each doublet's best value is computed here on its own: the slow
    reference's chain grouped by doublet, each end valued by the searcher at `ply` from
    the side then on roll (the mover again after a 'roll again'). The play ranked first
    (no root filtering) must name the doublet with the highest value, at that value."""
    s = Searcher(MODEL, ACEY_DEUCEY)
    limits = Limits(ply=ply, root_keep=1 << 20, root_width=100.0)
    most, wanted = (3000, 6) if ply == 0 else (800, 4)
    checked = 0
    for b in random_positions(60, ACEY_DEUCEY, seed=4):
        if checked == wanted or not _both_dice_play(b):
            continue
        chain = _chain_by_doublet(b)
        if sum(len(v) for v in chain.values()) > most:
            continue
        value = {}
        for k, ends in chain.items():
            if ends:
                value[k] = max(
                    equity(_mover(s.evaluate(e if again else flip(e), Limits(ply=ply)), again))
                    for e, again in ends
                )
        boards, again, probs, _ = s.analyse(b, 1, 2, limits)
        eq = np.asarray(equity(probs)).reshape(-1)
        i = int(np.argmax(eq))
        text = describe_outcomes(b, boards[i : i + 1], again[i : i + 1], 1, 2, ACEY_DEUCEY)[0]
        chosen = int(text.split(" then ")[1][0])
        assert value[chosen] == pytest.approx(max(value.values()), abs=1e-5), (text, value)
        assert eq[i] == pytest.approx(value[chosen], abs=1e-5)
        checked += 1
    assert checked == wanted


def _both_dice_play(b: np.ndarray) -> bool:
    from tests.reference import legal_plays

    return legal_plays(tuple(int(x) for x in b), 1, 2, ACEY_DEUCEY)[1] == 2


def test_root_screening_keeps_the_deepest_values() -> None:
    """Screening at 1 ply with room for every 0-ply survivor changes nothing; a narrow
    screen sends fewer plays to 2 ply, and those keep their exact 2-ply values."""
    s = Searcher(MODEL)
    for b in random_positions(6, STANDARD, seed=8):
        for d1, d2 in ((6, 1), (3, 3)):
            plain = s.analyse(b, d1, d2, Limits(ply=2))
            wide = s.analyse(b, d1, d2, Limits(ply=2, screen_keep=8, screen_width=9.0))
            for x, y in zip(plain, wide, strict=True):
                assert np.array_equal(x, y)
            narrow = s.analyse(b, d1, d2, Limits(ply=2, screen_keep=1, screen_width=0.0))
            deep = narrow[3] == 2
            assert deep.sum() == 1 and (narrow[3] <= 2).all()
            assert np.allclose(narrow[2][deep], plain[2][deep])


@pytest.mark.parametrize("ply", [1, 2])
def test_root_blend_mixes_the_full_depth_with_0_ply(ply: int) -> None:
    """Limits.blend w: a play searched to the full depth gets w times its value there plus
    1 - w times its own static value (the mover's, from the definition); the other plays
    and the outcomes stay as they are; w = 0 gives the 0-ply values."""
    s = Searcher(MODEL, use_bearoff=False)
    for b in random_positions(6, STANDARD, seed=9):
        for d1, d2 in ((5, 2), (4, 4)):
            plain = s.analyse(b, d1, d2, Limits(ply=ply))
            mixed = s.analyse(b, d1, d2, Limits(ply=ply, blend=0.75))
            assert np.array_equal(plain[0], mixed[0]) and np.array_equal(plain[3], mixed[3])
            for x, a, p, q, d in zip(plain[0], plain[1], plain[2], mixed[2], plain[3],
                                     strict=True):  # fmt: skip
                own = _mover(static(x if a else flip(x)), a)
                want = 0.75 * p + 0.25 * own if d == ply else p
                assert np.allclose(q, want, atol=2e-6)
            zero = s.analyse(b, d1, d2, Limits(ply=ply, blend=0.0))  # 0 ply's values alone
            flat = s.analyse(b, d1, d2, Limits(ply=0))
            assert np.allclose(zero[2], flat[2], atol=2e-6)
    # With the root deepening a ply at a time, only the full depth is blended: a play
    # screened out at 1 ply keeps its 1-ply value, and the screen is the plain one's.
    narrow = dict(ply=2, screen_keep=1, screen_width=0.0)
    for b in random_positions(4, STANDARD, seed=10):
        plain = s.analyse(b, 6, 2, Limits(**narrow))
        mixed = s.analyse(b, 6, 2, Limits(**narrow, blend=0.5))
        assert np.array_equal(plain[3], mixed[3]) and (plain[3] == 1).any()
        for x, a, p, q, d in zip(plain[0], plain[1], plain[2], mixed[2], plain[3], strict=True):
            own = _mover(static(x if a else flip(x)), a)
            assert np.allclose(q, 0.5 * p + 0.5 * own if d == 2 else p, atol=2e-6)


@pytest.mark.parametrize("blend", [-0.1, 1.5, float("nan")])
def test_blend_outside_0_to_1_is_refused(blend: float) -> None:
    with pytest.raises(ValueError, match="blend"):
        Limits(ply=1, blend=blend)


# --------------------------------------------------------------------------------------
# The pruning net
# --------------------------------------------------------------------------------------


def _random_prune(hidden: int = 8, seed: int = 5) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return (
        (rng.standard_normal((N_PRUNE_INPUTS, hidden)) * 0.3).astype(np.float32),
        (rng.standard_normal(hidden) * 0.3).astype(np.float32),
        rng.standard_normal((hidden, 1)).astype(np.float32),
        np.zeros(1, np.float32),
    )


PRUNED = Model(MODEL.contact, MODEL.race, MODEL.meta, _random_prune())


def test_prune_scores_equal_the_net_on_the_raw_inputs() -> None:
    boards = np.array(random_positions(200, STANDARD, seed=21))
    w1, b1, w2, b2 = PRUNED.prune
    want = np.maximum(encode_raw(boards) @ w1 + b1, 0) @ w2[:, 0] + b2[0]
    assert np.allclose(prune_scores(boards, PRUNED.prune), want, atol=1e-5)
    # The raw inputs are the first units of each side's block of the main encoding.
    x = encode(boards)
    assert np.array_equal(encode_raw(boards)[:, :99], x[:, :99])
    assert np.array_equal(encode_raw(boards)[:, 99:], x[:, 105:204])


@pytest.mark.parametrize("variant", [STANDARD, ACEY_DEUCEY])
def test_prune_ratings_from_the_parent_equal_the_full_sums(variant: int) -> None:
    # The search rates a roll's plays from the parent's hidden sums, moved by the board
    # entries each play changed (bar, off and unentered checkers included); that equals
    # the pruning net on the position after the play, seen by the side to roll next.
    w1, b1, w2, b2 = PRUNED.prune
    base = np.zeros(b1.shape[0], np.float32)
    hidden = np.zeros(b1.shape[0], np.float32)
    checked = 0
    bearing_off = np.zeros(30, np.int8)  # both sides bearing off, a blot to hit on 20
    bearing_off[[1, 2, 4, 6, 20]] = [2, 3, 2, 3, 1]
    bearing_off[[19, 22, 24]] = [-1, -4, -5]
    bearing_off[26], bearing_off[27] = 4, 5  # MY_OFF, OPP_OFF
    for b in [*random_positions(60, variant, seed=23), bearing_off]:
        _prune_base(b, w1, b1, base, PRUNE_ROWS, PRUNE_SCALES)
        for d1, d2 in ((1, 2), (3, 3), (6, 5), (4, 1)):
            outs, _ = legal_outcomes(b, d1, d2, variant)
            if len(outs) == 0:
                continue
            want = prune_scores(np.array([flip(o) for o in outs]), PRUNED.prune)
            got = [_prune_delta_score(b, o, w1, w2, b2, base, hidden, PRUNE_ROWS, PRUNE_SCALES)
                   for o in outs]  # fmt: skip
            assert np.allclose(got, want, atol=1e-5)
            checked += len(outs)
    assert checked > 1000


def brute_pruned(b: np.ndarray, keep: int, everywhere: bool = False) -> np.ndarray:
    """V1(b) with pruning: per roll, the main net scores the `keep` plays the pruning net
    rates best for the mover (first index on ties) and every play that ends the game;
    in a race or a crashed position every play (everywhere: pruned there too, as the
    search does not)."""
    total = np.zeros(5)
    for d1, d2 in ROLLS:
        boards, again = legal_outcomes(b, d1, d2, STANDARD)
        views = np.array([x if a else flip(x) for x, a in zip(boards, again, strict=True)])
        exact = np.array([outcome(v) != 0 for v in views])
        chosen = np.ones(len(views), bool)
        if len(views) > keep and (everywhere or (has_contact(b) and not crashed(b))):
            rating = prune_scores(views, PRUNED.prune) * np.where(again, 1, -1)
            rating[exact] = -np.inf
            top = np.argsort(-rating, kind="stable")[: min(keep, int((~exact).sum()))]
            chosen = exact.copy()
            chosen[top] = True
        best, best_eq = None, -np.inf
        for v, a, c in zip(views, again, chosen, strict=True):
            if c:
                p = _mover(static(v), a)
                if equity(p) > best_eq:
                    best, best_eq = p, equity(p)
        total += (1 if d1 == d2 else 2) / 36 * best
    return total


@pytest.mark.parametrize("keep", [1, 3, 6])
def test_pruned_one_ply_equals_brute_force(keep: int) -> None:
    s = Searcher(PRUNED, STANDARD, use_bearoff=False)
    plain = Searcher(MODEL, STANDARD, use_bearoff=False)
    differ = 0
    for b in random_positions(60, STANDARD, seed=8)[20::8]:
        got = s.evaluate(b, Limits(ply=1, prune_keep=keep))
        assert np.allclose(got, brute_pruned(b, keep), atol=2e-6), b
        # prune_keep 0 turns pruning off; a model without a pruning net never prunes.
        full = brute(b, 1, STANDARD)
        assert np.allclose(s.evaluate(b, Limits(ply=1, prune_keep=0)), full, atol=2e-6)
        assert np.allclose(plain.evaluate(b, Limits(ply=1, prune_keep=keep)), full, atol=2e-6)
        differ += not np.allclose(got, full, atol=2e-6)
    if keep == 1:
        assert differ > 0  # a random pruning net does prune away best plays


@pytest.mark.parametrize("kind", ["race", "crashed"])
def test_races_and_crashed_positions_are_searched_without_pruning(kind: str) -> None:
    """The pruning net ranks the plays of races and crashed positions poorly, so theirs
    are all scored: a pruned search of one equals the full one (and pruning would have
    changed it)."""
    s = Searcher(PRUNED, STANDARD, use_bearoff=False)
    found = [b for b in random_positions(4000, STANDARD, seed=9)
             if (not has_contact(b) if kind == "race" else crashed(b))]  # fmt: skip
    found = found[:: max(1, len(found) // 5)][:5]
    assert len(found) == 5
    differ = 0
    for b in found:
        full = brute(b, 1, STANDARD)
        spared = Limits(ply=1, prune_keep=1, prune_all=False)
        assert np.allclose(s.evaluate(b, spared), full, atol=2e-6), b
        # By default a 1-ply search prunes them too (it gained nothing there).
        pruned = brute_pruned(b, 1, everywhere=True)
        assert np.allclose(s.evaluate(b, Limits(ply=1, prune_keep=1)), pruned, atol=2e-6)
        differ += not np.allclose(pruned, full, atol=2e-6)
    assert differ > 0
    assert Limits(ply=1).pruning_all() and not Limits(ply=2).pruning_all()
    assert not Limits(ply=3).pruning_all() and Limits(ply=2, prune_all=True).pruning_all()


def test_default_pruning_by_depth() -> None:
    # Unset, prune_keep is PRUNE_KEEP at every depth; set, it holds.
    assert [Limits(ply=p).pruning() for p in range(5)] == [PRUNE_KEEP] * 5
    assert Limits(ply=2, prune_keep=7).pruning() == 7 and Limits(ply=1, prune_keep=0).pruning() == 0
    # The default search at 2 ply is the one with prune_keep PRUNE_KEEP, and it differs
    # from keeping one play fewer (a random pruning net prunes away best plays).
    b = [x for x in random_positions(40, STANDARD, seed=4) if has_contact(x) and not crashed(x)][-1]
    s = Searcher(PRUNED, STANDARD)
    want = s.evaluate(b, Limits(ply=2, prune_keep=PRUNE_KEEP))
    assert np.array_equal(s.evaluate(b, Limits(ply=2)), want)
    assert not np.array_equal(s.evaluate(b, Limits(ply=2, prune_keep=PRUNE_KEEP - 1)), want)


def test_cache_keeps_the_values_of_each_pruning_setting() -> None:
    # 1 ply prunes races and crashed positions and 2 ply does not, by default: alternating
    # them must neither mix their cached values nor throw either away (stats[0] counts the
    # net's evaluations).
    b = random_positions(40, STANDARD, seed=6)[-1]
    s = Searcher(PRUNED, STANDARD)
    two, one = Limits(ply=2), Limits(ply=1)
    first = s.evaluate(b, two)
    at1 = s.evaluate(b, one)
    assert np.array_equal(at1, Searcher(PRUNED, STANDARD).evaluate(b, one))
    done = s.stats[0]
    assert np.array_equal(s.evaluate(b, two), first) and s.stats[0] == done
    assert np.array_equal(s.evaluate(b, one), at1) and s.stats[0] == done
    s.clear_cache()
    assert np.array_equal(s.evaluate(b, two), first) and s.stats[0] > done


def test_pruned_search_analyses_every_root_play() -> None:
    b = random_positions(30, STANDARD, seed=9)[-1]
    s = Searcher(PRUNED, STANDARD)
    boards, _, probs, plies = s.analyse(b, 6, 5, Limits(ply=1, prune_keep=2))
    root = Searcher(MODEL, STANDARD).analyse(b, 6, 5, Limits(ply=0))
    assert np.array_equal(boards, root[0])
    at0 = plies == 0
    assert np.allclose(probs[at0], root[2][at0])  # the root is never pruned
