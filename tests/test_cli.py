"""The command line, driven as a user would (subprocesses):

- `doublet moves` text and --json output, `--batch` JSON lines in/out with an error line
  in the middle that does not stop the batch, and the no-play reply;
- `doublet analyse` text and JSON, `doublet eval`;
- `doublet engine`: best/analyse/eval/moves requests, bad requests answered with
  {"error": ...} while the process goes on, quit;
- every bad input exits 2 with one 'doublet: error:' line and no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doublet.nn.eval import random_model, save_model

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "doublet", *args], input=stdin, text=True,
                          capture_output=True, cwd=ROOT, timeout=600)  # fmt: skip


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("m") / "m.npz"
    save_model(path, random_model(16, seed=1))
    return str(path)


def test_moves_text_and_json() -> None:
    r = run("moves", "4HPwATDgc/ABMA", "3", "1")
    assert r.returncode == 0 and "16 legal plays" in r.stdout and "8/5 6/5" in r.stdout
    r = run("moves", "4HPwATDgc/ABMA", "6", "5", "--json")
    doc = json.loads(r.stdout)
    assert [p["play"] for p in doc["plays"]].count("24/13") == 1 and len(doc["plays"]) == 7


def test_moves_takes_an_ids_own_roll_and_says_what_an_id_cannot_hold() -> None:
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"
    r = run("moves", xgid)
    assert r.returncode == 0 and "roll 3-1" in r.stdout and "16 legal plays" in r.stdout
    assert "roll 6-5" in run("moves", xgid, "6", "5").stdout  # the dice given win
    r = run("moves", xgid.replace(":31:", ":00:"))
    assert r.returncode == 2 and "carries no roll of its own, so give D1 D2" in r.stderr
    assert run("moves", "4HPwATDgc/ABMA", "6").returncode == 2
    # A gnubg ID read as Acey-Deucey: the note, and both sides in the heading.
    r = run("moves", "4HPwATDgc/ABMA", "6", "5", "--variant", "acey-deucey")
    assert r.returncode == 0 and "note: a gnubg Position ID carries no unentered" in r.stdout
    assert "position mover 000000503" in r.stdout and " opponent 000000503" in r.stdout
    r = run("moves", "4HPwATDgc/ABMA", "6", "5", "--variant", "acey-deucey", "--json")
    assert "unentered" in json.loads(r.stdout)["note"]
    r = run("moves", xgid, "--variant", "acey-deucey")
    assert r.returncode == 0 and "note: an XGID carries no unentered" in r.stdout  # not "a XGID"


def test_moves_batch_goes_on_after_a_bad_line() -> None:
    lines = [
        {"position": "4HPwATDgc/ABMA", "dice": [3, 1]},
        {"position": "not an id", "dice": [3, 1]},
        {"position": "4HPwATDgc/ABMA", "dice": [0, 1]},
        {
            "position": {
                "variant": "acey-deucey",
                "mover": [15] + [0] * 25,
                "opponent": [15] + [0] * 25,
            },
            "dice": [6, 5],
        },
        {"position": "u20TgADgZ8NgQA", "dice": [6, 3]},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\nnot json\n"
    r = run("moves", "--batch", "-", stdin=text)
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and len(out) == 6
    assert len(out[0]["plays"]) == 16 and out[0]["plays"][0]["position_id"]
    assert "error" in out[1] and "error" in out[2] and "error" in out[5]
    assert all(not p["again"] for p in out[3]["plays"]) and "position_id" not in out[3]["plays"][0]
    assert (
        out[4]["plays"] == [{**out[4]["plays"][0], "play": ""}]
        and out[4]["plays"][0]["position_id"]
    )


def test_analyse_and_eval(model: str) -> None:
    r = run("analyse", "4HPwATDgc/ABMA", "3", "1", "--ply", "1", "--model", model)
    assert r.returncode == 0 and "16 legal plays" in r.stdout and "pips: X 167" in r.stdout
    r = run("analyse", "4HPwATDgc/ABMA", "--ply", "0", "--json", "--model", model)
    assert json.loads(r.stdout)["evaluation"]["probabilities"]["win"] > 0
    r = run("eval", "4HPwATDgc/ABMA", "--json", "--model", model, "--ply", "0")
    assert r.returncode == 0 and "equity" in json.loads(r.stdout)["evaluation"]
    assert r.stderr == ""


def test_engine_protocol(model: str) -> None:
    reqs = [
        {"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [3, 1], "ply": 0, "model": model},
        {"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [3, 1], "ply": 9, "model": model},
        {"cmd": "fly", "position": "4HPwATDgc/ABMA"},
        {
            "cmd": "eval",
            "position": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10",
            "model": model,
        },
        {"cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": [6, 5]},
        {"cmd": "quit"},
        {"cmd": "eval", "position": "4HPwATDgc/ABMA", "model": model},
    ]
    text = "\n".join(json.dumps(x) for x in reqs) + "\n"
    r = run(
        "engine",
        stdin=text[: text.index('{"cmd": "quit"')]
        + "[1, 2\n"
        + text[text.index('{"cmd": "quit"') :],
    )
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and len(out) == 6  # five requests, one bad line, then quit
    assert "not JSON" in out[5]["error"]
    assert out[0]["play"] and len(out[0]["position_id"]) == 14
    assert "error" in out[1] and "ply" in out[1]["error"] and "error" in out[2]
    assert "evaluation" in out[3] and len(out[4]["plays"]) == 7


@pytest.mark.parametrize(
    "args",
    [
        ("moves", "4HPwATDgc/ABMA", "3", "7"),
        ("moves", "4HPwATDgc/ABM", "3", "1"),
        ("moves", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "3", "1"),
        ("moves", '{"variant": "standard", "mover": [0], "opponent": []}', "3", "1"),
        ("eval", "4HPwATDgc/ABMA", "--model", "/nonexistent.npz"),
        ("moves", "--batch", "/nonexistent.jsonl"),
    ],
)
def test_bad_input_is_one_clear_line(args: tuple[str, ...]) -> None:
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("doublet: error: ")
    assert "Traceback" not in r.stderr


def test_corrupt_model_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file at all")
    r = run("eval", "4HPwATDgc/ABMA", "--model", str(bad))
    assert r.returncode == 2 and "not a Doublet model" in r.stderr


ACEY_START = json.dumps({"variant": "acey-deucey", "mover": [15] + [0] * 25,
                         "opponent": [15] + [0] * 25})  # fmt: skip


def test_each_variant_gets_its_own_shipped_model() -> None:
    from doublet.core.board import ACEY_DEUCEY, STANDARD
    from doublet.nn.eval import default_model

    assert default_model(STANDARD).meta["variant"] == STANDARD
    assert default_model(ACEY_DEUCEY).meta["variant"] == ACEY_DEUCEY
    r = run("analyse", ACEY_START, "2", "1", "--ply", "0", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["variant"] == "acey-deucey"
    assert " then " in doc["plays"][0]["play"]  # the chosen doublet is part of the play


def test_a_model_of_the_other_variant_is_not_taken_as_shipped(tmp_path: Path) -> None:
    save_model(tmp_path / "doublet-acey-deucey.npz", random_model(16, seed=1))  # standard
    r = subprocess.run([sys.executable, "-m", "doublet", "eval", ACEY_START], text=True,
                       capture_output=True, cwd=ROOT, timeout=600,
                       env={**os.environ, "DOUBLET_MODEL_DIR": str(tmp_path)})  # fmt: skip
    assert r.returncode == 2 and "trained for variant 0, not 1" in r.stderr, r.stderr


ISSUE_XGID = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:5:10"


def test_analyse_uses_an_xgids_cube_and_score(model: str) -> None:
    r = run("analyse", ISSUE_XGID, "--ply", "1", "--model", model)
    assert r.returncode == 0, r.stderr
    assert (
        "5-point match, mover 3-away, opponent 1-away (post-Crawford), cube 2 owned by the mover"
        in r.stdout
    )
    assert "Proper cube action: " in r.stdout and "Redouble, take" in r.stdout
    r = run("analyse", ISSUE_XGID, "6", "5", "--ply", "1", "--model", model)
    assert "by cubeful equity" in r.stdout and "MWC" in r.stdout
    r = run("analyse", ISSUE_XGID, "--ply", "0", "--json", "--model", model, "--match", "0")
    doc = json.loads(r.stdout)
    assert doc["cube"]["state"] == {"cube": {"value": 2, "owner": "mover"}, "match": None,
                                    "jacoby": False, "beavers": False}  # fmt: skip


def test_analyse_cube_flags(model: str) -> None:
    base = ("analyse", "4HPwATDgc/ABMA", "--ply", "0", "--json", "--model", model)
    by_score = json.loads(run(*base, "--match", "7", "--score", "5", "3").stdout)
    by_away = json.loads(run(*base, "--match", "7", "--away", "2", "4").stdout)
    assert by_score["cube"] == by_away["cube"]
    assert by_score["cube"]["state"]["match"] == {"length": 7, "away": [2, 4], "crawford": False}
    owned = json.loads(run(*base, "--cube", "2", "--owner", "me", "--jacoby").stdout)
    assert owned["cube"]["state"]["cube"] == {"value": 2, "owner": "mover"}
    assert owned["cube"]["action"].startswith(("No redouble", "Redouble", "Too good to redouble"))
    crawford = json.loads(run(*base, "--match", "5", "--away", "1", "3", "--crawford").stdout)
    assert (
        crawford["cube"]["action"] == "No double available (the Crawford game: nobody may double)"
    )
    # An XGID's Crawford flag holds while a side is 1-away: a score that has none drops it.
    xgid = ("analyse", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:4:2:1:5:10", "--ply", "0",
            "--json", "--model", model)  # fmt: skip
    for flags, match in ((("--away", "1", "2"), {"length": 5, "away": [1, 2], "crawford": True}),
                         (("--match", "7", "--away", "3", "3"),
                          {"length": 7, "away": [3, 3], "crawford": False})):  # fmt: skip
        r = run(*xgid, *flags)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["cube"]["state"]["match"] == match


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--cube", "3", "--owner", "me"), "power of 2"),
        (("--cube", "2"), "--owner"),
        (("--match", "7", "--away", "0", "4"), "0 away"),
        (("--match", "7"), "needs the score"),
        (("--score", "1", "2"), "--match"),
        (
            ("--match", "5", "--away", "1", "3", "--crawford", "--cube", "2", "--owner", "me"),
            "Crawford",
        ),
        (("--match", "7", "--away", "2", "4", "--jacoby"), "money play"),
        (("--match", "7", "--score", "7", "1"), "ends a 7-point match"),
    ],
)
def test_bad_cube_flags_are_one_clear_line(flags: tuple[str, ...], words: str) -> None:
    r = run("analyse", "4HPwATDgc/ABMA", "--ply", "0", *flags)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("doublet: error: ") and words in last


def test_engine_cube_command(model: str) -> None:
    reqs = [
        {
            "cmd": "cube",
            "position": "4HPwATDgc/ABMA",
            "cube": {"value": 2, "owner": "mover"},  # 3-away: a live cube (2-away: dead)
            "match": {"length": 7, "away": [3, 4], "crawford": False},
            "jacoby": False,
            "ply": 1,
            "model": model,
        },
        {"cmd": "cube", "position": "4HPwATDgc/ABMA", "ply": 0, "model": model},
        {"cmd": "cube", "position": ISSUE_XGID, "ply": 0, "model": model, "match": None},
        {"cmd": "cube", "position": "4HPwATDgc/ABMA", "cube": {"value": 3, "owner": "mover"}},
        {"cmd": "cube", "position": "4HPwATDgc/ABMA", "match": {"length": 7, "away": [0, 4]}},
        {
            "cmd": "cube",
            "position": "4HPwATDgc/ABMA",
            "cube": {"value": 2, "owner": "mover"},
            "match": {"length": 7, "away": [1, 4], "crawford": True},
        },
        {
            "cmd": "best",
            "position": "4HPwATDgc/ABMA",
            "dice": [6, 5],
            "ply": 0,
            "model": model,
            "match": {"length": 5, "away": [1, 1]},
        },
        {"cmd": "eval", "position": "4HPwATDgc/ABMA", "model": model, "jacoby": True},
        {"cmd": "cube", "position": "4HPwATDgc/ABMA", "ply": 0, "method": "guess"},
    ]
    r = run("engine", stdin="\n".join(json.dumps(x) for x in reqs) + "\n")
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and len(out) == len(reqs)
    first = out[0]
    assert set(first) >= {"double", "take", "action", "equities", "probabilities", "ply", "mwc"}
    assert isinstance(first["double"], bool) and isinstance(first["take"], bool)
    assert set(first["equities"]) == {"no_double", "double_take", "double_pass"}
    assert first["equities"]["double_pass"] == 1.0 and first["ply"] == 1
    assert out[1]["ply"] == 0 and "mwc" not in out[1] and out[1]["action"] == "No double, take"
    assert out[2]["state"]["match"] is None and out[2]["state"]["cube"]["value"] == 2
    assert "power of 2" in out[3]["error"] and "0 away" in out[4]["error"]
    assert "Crawford" in out[5]["error"]
    assert out[6]["equity"] == pytest.approx(2 * out[6]["mwc"] - 1, abs=1e-5)
    assert out[7]["cube"]["state"]["jacoby"] is True
    assert "method" in out[8]["error"]


def test_analyse_reads_a_gnubg_match_id(model: str) -> None:
    # gnubg 1.07 wrote this Match ID: 7-point match, 5-3 to the player on roll, 3-1 rolled.
    r = run("analyse", "4HPwATDgc/ABMA:MIHlAFAAGAAE", "--ply", "0", "--json", "--model", model)
    doc = json.loads(r.stdout)
    assert doc["dice"] == [3, 1] and doc["equity"] == "cubeful"
    assert doc["state"]["match"] == {"length": 7, "away": [2, 4], "crawford": False}


def _bad_models(tmp: Path) -> dict[str, Path]:
    import numpy as np

    good = (ROOT / "models" / "doublet-standard.npz").read_bytes()
    out = {}
    out["truncated"] = tmp / "trunc.npz"
    out["truncated"].write_bytes(good[: len(good) // 2])
    out["empty"] = tmp / "empty.npz"
    out["empty"].write_bytes(b"")
    flipped = bytearray(good)
    flipped[len(flipped) // 3] ^= 0xFF
    out["bit flipped"] = tmp / "flip.npz"
    out["bit flipped"].write_bytes(bytes(flipped))
    out["npy"] = tmp / "x.npy"
    np.save(out["npy"], np.zeros(3))
    z = dict(np.load(ROOT / "models" / "doublet-standard.npz"))
    z["meta"] = np.array(json.dumps([1, 2, 3]))
    out["meta a list"] = tmp / "meta.npz"
    np.savez(out["meta a list"], **z)
    return out


def test_the_engine_survives_every_bad_line(tmp_path: Path) -> None:
    """Each bad line gets one {"error"}, and the engine answers the good line after it."""
    good = json.dumps({"cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": [2, 1]})
    bad = [
        json.dumps({"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": ["\u00b2", "1"]}),
        '{"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [' + "9" * 5000 + ", 1]}",
        "[" * 100000 + "]" * 100000,
        json.dumps({"cmd": "eval", "position": {"variant": ["standard"], "mover": [0]}}),
        json.dumps(
            {
                "cmd": "eval",
                "position": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:" + "9" * 5000 + ":0:10",
            }
        ),
        json.dumps({"cmd": "moves", "position": 7, "dice": [3, 1]}),
        json.dumps({"cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": {"a": 1}}),
        json.dumps({"cmd": ["best"]}),
    ]
    bad += [json.dumps({"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [3, 1],
                        "model": str(p)}) for p in _bad_models(tmp_path).values()]  # fmt: skip
    text = "".join(b + "\n" + good + "\n" for b in bad).encode() + b"\xff\xfe\n" + good.encode()
    r = subprocess.run([sys.executable, "-m", "doublet", "engine"], input=text,
                       capture_output=True, cwd=ROOT, timeout=600)  # fmt: skip
    assert r.returncode == 0 and b"Traceback" not in r.stderr
    out = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert len(out) == 2 * len(bad) + 2
    for k in range(len(bad) + 1):
        assert "error" in out[2 * k] and "internal error" not in out[2 * k]["error"], out[2 * k]
        assert len(out[2 * k + 1]["plays"]) == 15
    assert "UTF-8" in out[-2]["error"]


@pytest.mark.parametrize("which", ["truncated", "empty", "bit flipped", "npy", "meta a list"])
def test_a_corrupt_model_is_one_clear_line(tmp_path: Path, which: str) -> None:
    path = _bad_models(tmp_path)[which]
    r = run("eval", "4HPwATDgc/ABMA", "--model", str(path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("doublet: error: model file")


def test_an_xgid_without_its_prefix_is_a_position() -> None:
    r = run("moves", "-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "3", "1")
    assert r.returncode == 0 and "16 legal plays" in r.stdout


def test_a_binary_batch_file_is_one_bad_line_each(tmp_path: Path) -> None:
    f = tmp_path / "junk.bin"
    f.write_bytes(
        b"\x00\xff\xfe\x80garbage\n" + b'{"position": "4HPwATDgc/ABMA", "dice": [3, 1]}\n'
    )
    r = run("moves", "--batch", str(f))
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and "error" in out[0] and len(out[1]["plays"]) == 16


_OPENING_SIDE = [0, 0, 0, 0, 0, 0, 5, 0, 3] + [0] * 4 + [5] + [0] * 10 + [2, 0]
FINISHED = json.dumps({"variant": "standard", "mover": [0] * 26, "opponent": _OPENING_SIDE})
ALL_ON_THE_BAR = json.dumps({"variant": "standard", "mover": [0] * 25 + [15],
                             "opponent": [0] * 25 + [15]})  # fmt: skip


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("analyse", FINISHED, "--ply", "0"), "the game is over"),
        (("analyse", FINISHED, "3", "1", "--ply", "0"), "the game is over"),
        (("eval", FINISHED), "the game is over"),
        (("moves", FINISHED, "3", "1"), "the game is over"),
        (("eval", ALL_ON_THE_BAR), "cannot arise"),
        (("analyse", ALL_ON_THE_BAR, "--ply", "0"), "cannot arise"),
    ],
)
def test_positions_that_cannot_be_played_are_refused(args: tuple[str, ...], words: str) -> None:
    r = run(*args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("doublet: error: ") and words in last


def test_a_request_is_bounded_by_its_time_budget() -> None:
    # Acey-Deucey's 1-2 at 3 ply would take more than a minute; with a 3 s budget the
    # engine answers with the deepest ply that finished and says so.
    ad = {"variant": "acey-deucey", "mover": [15] + [0] * 25, "opponent": [15] + [0] * 25}
    reqs = [{"cmd": "best", "position": ad, "dice": [2, 1], "ply": 3, "time": 3},
            {"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [6, 5], "time": -1},
            {"cmd": "eval", "position": "4HPwATDgc/ABMA", "ply": 4, "time": 0.5}]  # fmt: skip
    start = time.monotonic()
    r = run("engine", stdin="\n".join(json.dumps(x) for x in reqs) + "\n")
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert out[0]["ply"] < 3 and "did not finish" in out[0]["stopped"] and out[0]["play"]
    assert "'time'" in out[1]["error"]
    assert out[2]["ply"] <= 4 and "evaluation" in out[2]
    assert time.monotonic() - start < 120  # compile time included
    r = run("analyse", "4HPwATDgc/ABMA", "6", "5", "--ply", "4", "--time", "2")
    assert r.returncode == 0 and "Stopped short" in r.stdout


def test_an_xgids_dice_are_the_roll_analysed(model: str) -> None:
    r = run("analyse", "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10", "--ply", "0",
            "--json", "--model", model)  # fmt: skip
    doc = json.loads(r.stdout)
    assert doc["dice"] == [3, 1] and len(doc["plays"]) == 16


def test_a_json_board_with_a_huge_number_is_one_clear_line() -> None:
    board = '{"variant": "standard", "mover": [' + "9" * 5000 + '], "opponent": []}'
    r = run("moves", board, "3", "1")
    assert r.returncode == 2 and "too many digits" in r.stderr and "Traceback" not in r.stderr


def test_a_models_version_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    import numpy as np

    z = dict(np.load(ROOT / "models" / "doublet-standard.npz"))
    meta = json.loads(str(z["meta"]))
    meta["encoder_version"] = "2"
    z["meta"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "m.npz", **z)
    r = run("eval", "4HPwATDgc/ABMA", "--model", str(tmp_path / "m.npz"))
    assert r.returncode == 2 and "encoder version '2'" in r.stderr


def test_review_a_match_file(tmp_path: Path) -> None:
    r = run("review", str(ROOT / "tests" / "data" / "matches" / "match01.mat"))
    assert r.returncode == 0, r.stderr
    assert "Unforced moves" in r.stdout and "58" in r.stdout and "Worst decisions:" in r.stdout
    r = run("review", str(ROOT / "tests" / "data" / "matches" / "match01.sgf"), "--json")
    assert json.loads(r.stdout)["players"][0]["unforced_moves"] == 58
    bad = tmp_path / "bad.mat"
    text = (ROOT / "tests" / "data" / "matches" / "match01.mat").read_text()
    bad.write_text(text.replace("8/5 6/5", "8/4 6/5", 1))
    r = run("review", str(bad))
    assert r.returncode == 2 and "game 1, move 1, player 1 (gnubg)" in r.stderr
    assert "Traceback" not in r.stderr
    assert run("review", str(ROOT / "tests" / "data" / "matches" / "match01.mat"), "--top",
               "-2").returncode == 2  # fmt: skip
    # A match still being played (its last game stops before anyone has won): reviewed as
    # far as it goes, and said so.
    going = tmp_path / "going.mat"
    full = (ROOT / "tests" / "data" / "handmade" / "crawford_match.mat").read_text()
    going.write_text(full[: full.rindex(" Game 4")] + " Game 4\n anna : 2"
                     "                       ben : 2\n  1)                             "
                     "63: 24/18 13/10\n")  # fmt: skip
    r = run("review", str(going), "--no-cache")
    assert r.returncode == 0, r.stderr
    assert "4 games, the last one unfinished" in r.stdout
    r = run("review", str(going), "--no-cache", "--json")
    assert json.loads(r.stdout)["unfinished"] is True


def test_review_reads_a_file_that_starts_with_a_byte_order_mark(tmp_path: Path) -> None:
    """Windows editors start a UTF-8 file with U+FEFF: an .sgf with one was taken for a
    .mat ("expected ' N point match'") and a .mat was unreadable."""
    sgf = ("(;FF[4]GM[6]MI[length:3][game:0][ws:0][bs:0]PW[a]PB[b]RE[B+1]"
           ";B[31qtst];W[52mhmk];B[double];W[drop])\n")  # fmt: skip
    mat = (" 3 point match\n\n Game 1\n a : 0                          b : 0\n"
           "  1)                             31: 8/5 6/5\n"
           "  2) 52: 13/8 13/11               Doubles => 2\n"
           "  3)  Drops                       Wins 1 point\n")  # fmt: skip
    for name, text in (("bom.sgf", sgf), ("bom.mat", mat)):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        r = run("review", str(path), "--no-cache")
        assert r.returncode == 0, r.stderr
        assert "3-point match, 1 game," in r.stdout


def test_review_refuses_a_file_with_no_game(tmp_path: Path) -> None:
    """A .mat holding its header alone was "reviewed" as 0 games, exit 0."""
    path = tmp_path / "empty.mat"
    path.write_text(" 5 point match\n")
    r = run("review", str(path), "--no-cache")
    assert r.returncode == 2 and r.stdout == ""
    want = (
        f"doublet: error: {str(path)!r}: no game in the file: no ' Game 1' line after "
        "' 5 point match', so nothing to review\n"
    )
    assert r.stderr.endswith(want), r.stderr


def test_review_says_the_money_rules_it_assumed_and_takes_them(tmp_path: Path) -> None:
    """(a review) A money .mat from gnubg has no Jacoby tag: it was reviewed with Jacoby
    off without a word, so its .sgf (which says on) gave other figures; the errors of a
    move named no file."""
    text = (ROOT / "tests" / "data" / "handmade" / "money_session.mat").read_text()
    path = tmp_path / "money.mat"
    path.write_text(text.replace('; [Jacoby "On"]\n', ""))
    r = run("review", str(path), "--no-cache", "--top", "0")
    assert r.returncode == 0, r.stderr
    assert "money rules: Jacoby off (the file does not say), beavers on (the file's)" in r.stdout
    on = run("review", str(path), "--no-cache", "--top", "0", "--jacoby", "on", "--json")
    off = run("review", str(path), "--no-cache", "--top", "0", "--json")
    assert json.loads(on.stdout)["players"] != json.loads(off.stdout)["players"]
    listed = ROOT / "tests" / "data" / "handmade" / "money_session.mat"
    same = run("review", str(listed), "--no-cache", "--top", "0", "--json")
    assert json.loads(same.stdout)["players"] == json.loads(on.stdout)["players"]
    r = run("review", str(ROOT / "tests" / "data" / "matches" / "match01.mat"), "--jacoby", "on")
    assert r.returncode == 2 and "is a 5-point match" in r.stderr
    r = run("review", str(listed), "--beavers", "off")  # a beaver is played in it
    assert r.returncode == 2 and "a beaver is played" in r.stderr
    bad = tmp_path / "bad.mat"
    bad.write_text(text.replace("64: 24/18 13/9", "64: 24/14 13/9", 1))
    r = run("review", str(bad), "--no-cache")
    assert r.returncode == 2 and f"{str(bad)!r}: game 1, move 1" in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2", 2.0), ("2.5s", 2.5), ("500ms", 0.5), ("1m", 60.0), (" 3 s ", 3.0), (".5", 0.5)],
)
def test_time_values(text: str, seconds: float) -> None:
    from doublet.apps.cli import seconds as parse

    assert parse(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("command", "text"),
    [(c, t) for c in ("analyse", "rollout") for t in ("", "two", "0", "-1", "1e3", "inf", "nan")]
    + [("analyse", "601"), ("analyse", "2h"), ("rollout", "169h")],
)
def test_bad_time_values(command: str, text: str) -> None:
    """analyse and rollout read --time alike (rollout took "inf", no cap, and refused
    "2s"); a search stops at the protocol's 600 s, a rollout at a week."""
    r = run(command, "4HPwATDgc/ABMA", "--time", text)
    assert r.returncode == 2 and "--time" in r.stderr and "Traceback" not in r.stderr


def test_a_rollouts_time_may_be_long() -> None:
    from doublet.apps.cli import rollout_seconds, seconds

    assert rollout_seconds("2h") == 7200.0 and rollout_seconds("20m") == 1200.0
    assert seconds("1m") == 60.0


def test_eval_time_deepens_as_analyses() -> None:
    """eval --time without --ply deepens up to 4 ply, as analyse --time does (it stopped at
    the default 2 ply, though its help said "as analyse --time"); --ply still caps it."""
    for command in ("eval", "analyse"):
        doc = json.loads(run(command, "4HPwATDgc/ABMA", "--time", "1", "--json").stdout)
        assert doc["ply"] == 4 or "of the 4 asked for" in doc["stopped"], (command, doc)
    doc = json.loads(run("eval", "4HPwATDgc/ABMA", "--time", "5", "--ply", "1", "--json").stdout)
    assert doc["ply"] == 1 and "stopped" not in doc


def test_a_rollouts_time_is_written_as_analyses() -> None:
    # 5 minutes: room for the first run's numba compile, which the budget counts
    r = run("rollout", "4HPwATDgc/ABMA", "--trials", "4", "--truncate", "2", "--workers", "1",
            "--time", "5m", "--json")  # fmt: skip
    assert r.returncode == 0 and json.loads(r.stdout)["rollout"]["trials"] == 4, r.stderr


def test_a_long_search_shows_progress_and_ctrl_c_answers() -> None:
    """On a terminal, 4 ply on the opening 6-5 (about half a minute) shows its progress
    line after a second; Ctrl-C then answers at once with the deepest ply done. Ctrl-C is
    sent once the 4-ply search is seen counting positions: a kernel that numba is still
    compiling (a cold cache) cannot be stopped half-way. The child takes SIGINT's default
    action back: a suite run as a background job (`pytest &`) ignores SIGINT, and so
    would the child, as nohup'd programs do."""
    import os
    import pty
    import re
    import select
    import signal

    pid, fd = pty.fork()
    if pid == 0:  # the child: doublet on the pty, Ctrl-C as a terminal's shell leaves it
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # (a background job ignores it)
        os.execv(sys.executable, [sys.executable, "-m", "doublet", "analyse", "4HPwATDgc/ABMA",
                                  "6", "5", "--ply", "4"])  # fmt: skip
    out, sent, start = b"", 0.0, time.monotonic()
    try:
        while time.monotonic() - start < 120:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            counts = {float(m) for m in re.findall(rb"searching 4 ply[^:]*: ([0-9.]+) M", out)}
            if not sent and len(counts) >= 2:
                os.kill(pid, signal.SIGINT)
                sent = time.monotonic()
    finally:
        _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    assert sent, text[-2000:]
    assert time.monotonic() - sent < 10
    assert os.WEXITSTATUS(status) == 0, text[-2000:]
    assert "3 ply done" in text and "interrupted: answered at 3 ply of the 4" in text
    assert "24/13" in text or "24/18 13/8" in text  # the ranked plays follow


def _terminated_after(seconds: float, *args: str) -> subprocess.CompletedProcess[str]:
    """doublet *args, stderr and stdout pipes (no terminal), sent SIGTERM after `seconds`."""
    import signal

    p = subprocess.Popen([sys.executable, "-m", "doublet", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    time.sleep(seconds)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_sigterm_stops_a_search_and_a_rollout_as_ctrl_c_does() -> None:
    """Found by a review (session 45): with stderr not a terminal, Ctrl-C gave no answer
    (the search was not watched), and SIGTERM (timeout, a job scheduler) printed nothing
    of a rollout: every trial lost. Both now answer with what was done."""
    run("analyse", "4HPwATDgc/ABMA", "6", "5", "--ply", "2")  # the kernels compiled
    r = _terminated_after(8, "analyse", "4HPwATDgc/ABMA", "6", "5", "--ply", "4")
    assert r.returncode == 0, r.stderr
    assert "interrupted: answered at" in r.stdout and "24/13" in r.stdout
    # with --rollout the rollout is not begun after a stopped search (it ran whole)
    r = _terminated_after(8, "analyse", "4HPwATDgc/ABMA", "6", "5", "--ply", "4", "--rollout",
                          "--trials", "1296")  # fmt: skip
    assert r.returncode == 143 and "24/13" in r.stdout and "Rollout of" not in r.stdout
    assert "doublet: terminated: the analysis above, no rollout (not begun)" in r.stderr
    run("rollout", "4HPwATDgc/ABMA", "--trials", "1", "--truncate", "1", "--workers", "1")
    r = _terminated_after(8, "rollout", "4HPwATDgc/ABMA", "--trials", "1000000", "--truncate",
                          "3", "--workers", "1", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    n = doc["rollout"]["trials"]
    assert n > 0 and doc["stopped"] == f"interrupted after {n} trials"


@pytest.mark.parametrize(
    "position",
    [
        "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:0:0:0:0:10",
        "4HPwATDgc/ABMA:MIHlAFAAGAAE",
        "4HPwATDgc/ABMA",
    ],
)
def test_eval_json_is_the_engines_eval_reply(position: str) -> None:
    """doublet eval --json is the engine's eval reply, the cube decision of an XGID's or a
    match ID's cube and score included (session 23: the CLI left it out)."""
    cli = run("eval", position, "--ply", "0", "--json")
    assert cli.returncode == 0, cli.stderr
    engine = run("engine", stdin=json.dumps({"cmd": "eval", "position": position, "ply": 0}))
    mine, theirs = json.loads(cli.stdout), json.loads(engine.stdout)
    assert mine == theirs and ("cube" in mine) == (position != "4HPwATDgc/ABMA")
    text = run("eval", position, "--ply", "0")
    assert ("Proper cube action" in text.stdout) == ("cube" in mine)
    if position == "4HPwATDgc/ABMA":  # read as Acey-Deucey: the parser's note, in both
        cli = run("eval", position, "--ply", "0", "--json", "--variant", "acey-deucey")
        req = {"cmd": "eval", "position": position, "ply": 0, "variant": "acey-deucey"}
        engine = run("engine", stdin=json.dumps(req))
        assert json.loads(cli.stdout) == json.loads(engine.stdout)
        assert "no unentered checkers" in json.loads(cli.stdout)["note"]


def test_analyse_json_with_a_roll_is_the_engines_reply() -> None:
    """With a match ID's cube and score, doublet analyse --json of a roll and the engine's
    analyse are one document, state_text included (session 23: only the CLI had it)."""
    position = "4HPwATDgc/ABMA:MIHlAFAAGAAE"
    cli = run("analyse", position, "5", "2", "--ply", "0", "--json")
    assert cli.returncode == 0, cli.stderr
    req = {"cmd": "analyse", "position": position, "dice": [5, 2], "ply": 0}
    engine = json.loads(run("engine", stdin=json.dumps(req)).stdout)
    assert json.loads(cli.stdout) == engine and "state_text" in engine


def test_a_batch_line_is_the_engines_moves_request() -> None:
    """moves --batch answers each line as the engine answers {"cmd": "moves", ...}: a match
    ID's dice serve without "dice", the "id" comes back, an unknown key is refused, a
    blank line is skipped, another command is refused (session 23)."""
    lines = [{"position": "4HPwATDgc/ABMA:MIHlAFAAGAAE"},
             {"position": "4HPwATDgc/ABMA", "dice": [3, 1], "id": 4, "foo": 1},
             {"position": "4HPwATDgc/ABMA", "dice": [3, 1], "id": 5},
             {"cmd": "best", "position": "4HPwATDgc/ABMA", "dice": [3, 1], "id": 6}]  # fmt: skip
    text = "\n".join([json.dumps(lines[0]), "", *map(json.dumps, lines[1:])]) + "\n"
    out = [json.loads(x) for x in run("moves", "--batch", "-", stdin=text).stdout.splitlines()]
    asked = "\n".join(json.dumps({"cmd": "moves", **x}) for x in lines[:3]) + "\n"
    engine = [json.loads(x) for x in run("engine", stdin=asked).stdout.splitlines()]
    assert len(out) == 4 and out[:3] == engine
    own = json.loads(run("moves", "4HPwATDgc/ABMA", "3", "1", "--json").stdout)  # its dice
    assert [p["play"] for p in out[0]["plays"]] == [p["play"] for p in own["plays"]]
    assert out[1]["id"] == 4 and "takes no 'foo'" in out[1]["error"]
    assert out[2]["id"] == 5 and out[2]["plays"][0]["play"] == "24/23 24/21"
    assert out[3]["id"] == 6 and "a moves request" in out[3]["error"]


def test_bad_values_found_by_a_users_review_are_one_clear_error(tmp_path: Path) -> None:
    """Each ends with one `doublet: error: ...` line and status 2, never an internal error
    or a silent default: a rollout's --select-ply out of range (with or without dice) and
    its --time of 0 or below; an unusable review cache folder; a Position ID with base64
    padding inside (gnubg refuses it; it was read as another position); and argparse's
    own errors (after the usage)."""
    cases = [
        (("rollout", "4HPwATDgc/ABMA", "3", "1", "--trials", "36", "--select-ply", "5"),
         "--select-ply (the depth that picks the plays) must be 0..4, got 5"),
        (("rollout", "4HPwATDgc/ABMA", "--trials", "36", "--select-ply", "5"),
         "--select-ply (the depth that picks the plays) must be 0..4, got 5"),
        (("rollout", "4HPwATDgc/ABMA", "--trials", "36", "--time", "0"),
         "--time: a time is above 0 and at most 604800 s, got '0'"),
        (("rollout", "4HPwATDgc/ABMA", "--trials", "36", "--time", "-1"),
         "--time: a time is seconds such as 2, 2.5s, 500ms, 1m or 1h, got '-1'"),
        (("review", "tests/data/matches/match00.mat", "--cache", str(tmp_path / "f.txt")),
         "as the review cache folder: a file is in its place"),
        (("eval", "4HPwATDgc/AB==", "--ply", "0"), "characters outside base64"),
        (("analyse", "4HPwATDgc/ABMA", "--ply", "x"),
         "analyse: argument --ply: invalid int value: 'x'"),
    ]  # fmt: skip
    (tmp_path / "f.txt").write_text("not a folder")
    for args, words in cases:
        r = run(*args)
        last = r.stderr.strip().splitlines()[-1]
        assert r.returncode == 2 and last.startswith("doublet: error: ") and words in last, (
            args, r.stderr)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ("rollout", "--until-se", "-1"),
            "--until-se (the standard error to stop at) must be 0 or more, got -1",
        ),
        (("rollout", "--cube-ply", "2", "--cubeful"), "--cube-ply must be 0 or 1, got 2"),
        (
            ("rollout", "--cube-ply", "1"),
            "--cube-ply is the depth of the cube decisions in the "
            "trials: it goes with a cubeful rollout (--cubeful)",
        ),
        (("rollout", "--ply", "2"), "--ply (the trials' checker play) must be 0 or 1, got 2"),
        (
            ("analyse", "--rollout", "--rollout-ply", "2"),
            "--rollout-ply (the trials' checker play) must be 0 or 1, got 2",
        ),
        (("analyse", "--rollout", "--trials", "0"), "--trials must be 1..1296000, got 0"),
        (("rollout", "--truncate", "-3"), "--truncate must be 0 or more, got -3"),
        (("rollout", "3", "1", "--top", "0"), "--top must be 1 or more, got 0"),
    ],
)
def test_rollout_errors_name_the_flag(args: tuple[str, ...], words: str) -> None:
    """A rollout option out of range is named by its flag, not by the engine's field
    (until_se, cube_ply, select_ply, and "ply" for --rollout-ply), and said before the
    analysis runs."""
    command, *rest = args
    r = run(command, "4HPwATDgc/ABMA", *rest)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == f"doublet: error: {words}"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("analyse", "3", "1", "--trials", "4", "--seed", "5", "--top", "2"),
         "--trials, --seed and --top are rollout options: give --rollout too (or leave them "
         "out)"),
        (("analyse", "--no-luck"), "--no-luck is a rollout option: give --rollout too"),
        (("rollout", "--top", "5"), "--top is the number of a roll's plays rolled out: it "
         "needs a roll (D1 D2, or an XGID's or Match ID's own dice)"),
        (("rollout", "--select-ply", "3"), "--select-ply is the depth that picks a roll's "
         "plays to roll out: it needs a roll"),
        (("analyse", "--rollout", "--top", "2"), "--top is the number of a roll's plays"),
        (("analyse", "--all"), "--all lists every play of a roll: it needs a roll"),
        (("analyse", "3", "1", "--cube-method", "janowski"),
         "--cube-method is how the cube decision before the roll is found: with a roll, "
         "analyse ranks the plays and takes no cube decision"),
        (("rollout", "3", "1", "--cubeful"), "--cubeful plays the cube in the trials, but "
         "with a roll in money play with the cube centred (no owned cube, no Jacoby) the "
         "plays are ranked by cubeless equity and no cube is turned"),
        (("analyse", "3", "1", "--rollout", "--cubeful"), "--cubeful plays the cube"),
        (("analyse", "3", "1", "--beavers"), "--beavers lets the taker of a double beaver, "
         "but with a roll in money play"),
        (("rollout", "3", "1", "--no-beavers"), "--no-beavers says the taker"),
    ],
)  # fmt: skip
def test_an_option_that_would_do_nothing_is_refused(args: tuple[str, ...], words: str) -> None:
    """Each exited 0 having done nothing with it (as --cube-ply without --cubeful is
    refused): the error names the flag and what it needs, before any search."""
    command, *rest = args
    r = run(command, "4HPwATDgc/ABMA", *rest)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and last.startswith(f"doublet: error: {words}"), r.stderr


def test_options_that_do_something_are_taken(model: str) -> None:
    """The same flags where they count: --cube-method without dice, --cubeful and
    --beavers with dice away from money with the cube centred, --top with an XGID's own
    dice, --beavers before the roll."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"
    cases = [("analyse", "4HPwATDgc/ABMA", "--cube-method", "janowski", "--beavers"),
             ("analyse", "4HPwATDgc/ABMA", "3", "1", "--jacoby", "--beavers"),
             ("rollout", "4HPwATDgc/ABMA", "3", "1", "--cube", "2", "--owner", "me",
              "--cubeful", "--beavers", "--top", "1"),
             ("rollout", xgid, "--top", "1", "--select-ply", "0"),
             ("analyse", xgid, "--all", "--rollout", "--top", "1")]  # fmt: skip
    for args in cases:
        r = run(*args, "--json", "--ply", "0", "--model", model,
                *(("--trials", "4", "--truncate", "1", "--workers", "1")
                  if "--rollout" in args or args[0] == "rollout" else ()))  # fmt: skip
        assert r.returncode == 0, (args, r.stderr)


def test_a_roll_with_no_legal_play_is_said_alike() -> None:
    """moves said "0 legal plays" where analyse said "1 legal play" (its one row is the
    position unchanged); both now say "no legal play (no checker can move)", and the
    "(no legal play)" row no longer pushes the analyse and rollout tables' columns right.
    u20TgADgZ8NgQA, 6-3: the side on roll has a checker on the bar against a board where
    neither the 6 nor the 3 point is open."""
    no_play = "no legal play (no checker can move)"
    r = run("moves", "u20TgADgZ8NgQA", "6", "3")
    assert r.returncode == 0 and r.stdout.splitlines()[1] == no_play, r.stdout
    r = run("analyse", "u20TgADgZ8NgQA", "6", "3", "--ply", "0")
    lines = r.stdout.splitlines()
    head = lines.index(f"{no_play}:")
    header, row = lines[head + 1], lines[head + 2]
    assert row.startswith("  1  (no legal play)  ") and row[header.index("ply") + 2] == "0"
    r = run("rollout", "u20TgADgZ8NgQA", "6", "3", "--trials", "4", "--truncate", "1",
            "--workers", "1")  # fmt: skip
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("  #  play"))
    row = next(line for line in lines if "(no legal play)" in line)
    assert row[header.index("equity")] == "-"  # the equity's sign under its heading


def test_moves_and_analyse_head_a_roll_alike() -> None:
    """moves wrote "2220 legal plays" where analyse wrote "2,220 legal plays": one heading
    (doublet.search.analysis.plays_heading) serves both. AACAkCRJqqoAAA, 1-1: 2,220 plays
    (tests/data/children.txt)."""
    from doublet.formats.position import Position
    from doublet.search.analysis import analyse_roll, render

    r = run("moves", "AACAkCRJqqoAAA", "1", "1")
    assert r.returncode == 0 and r.stdout.splitlines()[1] == "2,220 legal plays", r.stdout
    pos = Position.from_id("AACAkCRJqqoAAA")
    text = render(analyse_roll(pos, 1, 1, ply=0, limit=3), pos.board)
    assert "\n2,220 legal plays:\n" in text


def test_workers_are_bounded_as_the_engines() -> None:
    """--workers has the engine protocol's bound (MAX_WORKERS, 64): 65 was taken and
    started 65 processes."""
    from doublet.core.parallel import MAX_WORKERS

    for args in (("rollout", "4HPwATDgc/ABMA"), ("analyse", "4HPwATDgc/ABMA", "--rollout"),
                 ("review", "tests/data/matches/match00.mat", "--no-cache")):  # fmt: skip
        r = run(*args, "--workers", str(MAX_WORKERS + 1))
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip() == "doublet: error: --workers must be 1..64, got 65", args


def test_batch_moves_into_a_closed_pipe_end_quietly(tmp_path: Path) -> None:
    """`doublet moves --batch F | head -1`: the closed stdout ends it with status 0 and
    no message (it was reported as an error reading the batch file)."""
    batch = tmp_path / "b.jsonl"
    batch.write_text('{"position": "4HPwATDgc/ABMA", "dice": [3, 1]}\n' * 2000)
    p = subprocess.Popen([sys.executable, "-m", "doublet", "moves", "--batch", str(batch)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)  # fmt: skip
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()  # as head does after its line
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and "cannot read batch file" not in err, err


def test_the_text_loss_column_is_the_json_loss() -> None:
    text = run("analyse", "4HPwATDgc/ABMA", "6", "4", "--ply", "0").stdout
    doc = json.loads(run("analyse", "4HPwATDgc/ABMA", "6", "4", "--ply", "0", "--json").stdout)
    start = text.index("  #  play")  # the table under the diagram
    rows = [line.split() for line in text[start:].splitlines()[1:] if line[:3].strip().isdigit()]
    losses = [float(r[-6]) for r in rows]  # loss, then win, wg, wbg, lg, lbg
    assert losses == [round(p["loss"], 3) + 0.0 for p in doc["plays"][: len(losses)]]
    assert all(v >= 0 for v in losses) and losses[0] == 0.0


def test_version_and_the_protocols_documentation_come_with_the_package() -> None:
    """A review found help texts citing docs/protocol.md and models/, which an installed
    wheel lacks, and no `doublet --version`: the protocol's page is package data, printed
    by `doublet engine --doc`, and --version names the models' folder."""
    r = run("--version")
    assert r.returncode == 0, r.stderr
    first, models = r.stdout.splitlines()
    assert first.startswith("doublet 0.") and "engine protocol 2" in first, first
    assert Path(models.removeprefix("models: ")).joinpath("doublet-standard.npz").is_file()
    r = run("engine", "--doc")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (ROOT / "engine" / "apps" / "protocol.md").read_text(encoding="utf-8")
    for command in ("engine", "analyse", "eval"):
        text = run(command, "--help").stdout
        assert "docs/" not in text and "engine/" not in text and "models/" not in text, text
    # The training usage names no folder of the tree but the recipe's, saying so.
    text = " ".join(run("train", "--help").stdout.split())
    assert "training/" not in text and "source tree, not in the package" in text, text


def test_the_progress_line_says_what_a_long_analysis_is_at(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """On a terminal a search that takes more than PROGRESS_AFTER shows a progress line;
    writing out the plays of a roll with more than MANY_PLAYS (an Acey-Deucey 1-2 can
    have 865,132: 17 s to name its best 20, minutes for all) says that instead of
    "searching", and Ctrl-C is not offered there (nothing to answer with yet)."""
    from doublet.apps import cli
    from doublet.core.board import STANDARD
    from doublet.formats.position import Position
    from doublet.search import analysis
    from doublet.search.watch import watchdog

    monkeypatch.setattr(cli, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(analysis, "MANY_PLAYS", 3)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    real = analysis.play_rows

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.35)
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "play_rows", slow)
    pos = Position.from_id("4HPwATDgc/ABMA")
    doc = cli._watched(lambda: analysis.analyse_roll(pos, 3, 1, limit=2), None, STANDARD)
    err = capsys.readouterr().err
    assert "writing out the best 2 of 16 plays: 0 s" in err and "Ctrl-C" not in err, err
    assert len(doc["plays"]) == 2 and doc["count"] == 16
    assert watchdog(analysis.searcher(None, STANDARD)).phase == ""  # cleared after
    monkeypatch.setattr(analysis, "MANY_PLAYS", 20_000)  # a plain search: "searching"
    cli._watched(lambda: analysis.analyse_roll(pos, 3, 1, limit=2), None, STANDARD)
    assert "searching 0 ply" in capsys.readouterr().err


def test_dice_may_follow_the_options() -> None:
    """The usage lines read `analyse POSITION [D1 D2] [--ply N] ...`, and people type the
    dice after an option too; before, that was 'unrecognized arguments: 3 1' under the
    top-level usage. An unknown option shows the command's own usage."""
    r = run("analyse", "4HPwATDgc/ABMA", "--ply", "0", "3", "1")
    assert r.returncode == 0 and "16 legal plays" in r.stdout, r.stderr
    r = run("moves", "4HPwATDgc/ABMA", "--json", "3", "1")
    assert r.returncode == 0 and len(json.loads(r.stdout)["plays"]) == 16
    r = run("analyse", "4HPwATDgc/ABMA", "3", "1", "--ply", "0", "--bogus")
    assert r.returncode == 2 and r.stderr.startswith("usage: doublet analyse ")
    assert r.stderr.endswith("doublet: error: analyse: unrecognized arguments: --bogus\n")


def test_eval_of_an_xgid_gives_its_cube_decision_in_money_play_too() -> None:
    """The README and protocol.md: an XGID's (or a Match ID's) cube and score bring the
    cube decision; before, money play with the cube centred, the commonest case, gave
    none. A Position ID alone (no cube fields) gives the chances only."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
    r = run("eval", xgid, "--ply", "0")
    assert r.returncode == 0 and "Proper cube action: No double, take" in r.stdout, r.stderr
    r = run("eval", "4HPwATDgc/ABMA", "--ply", "0", "--json")
    assert "cube" not in json.loads(r.stdout)
    reqs = [{"cmd": "eval", "position": xgid, "ply": 0},
            {"cmd": "eval", "position": "4HPwATDgc/ABMA", "ply": 0}]  # fmt: skip
    r = run("engine", stdin="\n".join(json.dumps(q) for q in reqs) + "\n")
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert got[0]["cube"]["action"] == "No double, take" and "cube" not in got[1]


def test_eval_says_when_its_cube_decision_stopped_short() -> None:
    """(a review) The text said the evaluation stopped short, not its cube decision,
    which the JSON said was answered at a lower ply."""
    xgid = "XGID=a--aBBC-C---dD---c-db---A-:0:0:1:00:0:0:0:0:10"
    r = run("eval", xgid, "--ply", "4", "--time", "0.05")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "cube decision stopped short" in x)
    assert "of the 4 asked for" in line
    assert "Stopped short: the cube decision:" not in r.stdout  # said once, as the cube's


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # the flag as typed, not its positive form
        (["analyse", "4HPwATDgc/ABMA", "--no-crawford"], "--no-crawford is for match play"),
        # the dice are optional: not listed as required
        (["analyse"], "analyse: the following arguments are required: position\n"),
        # two ways to keep the cache, one at a time
        (["review", "x.mat", "--cache", "c", "--no-cache"], "not allowed with argument --cache"),
    ],
)
def test_small_refusals_say_what_was_typed(args: list[str], message: str) -> None:
    r = run(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_byte_order_mark_before_the_first_line_is_dropped() -> None:
    """Windows editors start a UTF-8 file with a byte-order mark; doublet review drops it,
    and so now do doublet engine and moves --batch (before: 'Unexpected UTF-8 BOM')."""
    line = '{"cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": [3, 1], "id": 1}\n'
    for args in (["engine"], ["moves", "--batch", "-"]):
        done = subprocess.run([sys.executable, "-m", "doublet", *args],
                              input=("\ufeff" + line + line).encode(), capture_output=True,
                              cwd=ROOT, timeout=600)  # fmt: skip
        replies = [json.loads(x) for x in done.stdout.decode().splitlines()]
        assert [len(r["plays"]) for r in replies] == [16, 16], replies


def test_analyse_with_a_rollout_shares_its_time(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Found by a review (session 43): `analyse --rollout --time 3` searched for 3 s, then
    rolled out for 3 s more (7.8 s in all). The search has half the time, the rollout
    what is left."""
    from doublet.apps import cli

    budgets: dict[str, float] = {}
    real_roll, real_rollout = cli.analyse_roll, cli.rollout_document

    def roll(*a, **k):  # type: ignore[no-untyped-def]
        budgets["search"] = a[6]
        return real_roll(*a, **k)

    def rollout_doc(*a, **k):  # type: ignore[no-untyped-def]
        budgets["rollout"] = a[9]
        return real_rollout(*a, **k)

    monkeypatch.setattr(cli, "analyse_roll", roll)
    monkeypatch.setattr(cli, "rollout_document", rollout_doc)
    assert cli.main(["analyse", "4HPwATDgc/ABMA", "3", "1", "--rollout", "--time", "4",
                     "--trials", "36", "--workers", "1", "--json"]) == 0  # fmt: skip
    capsys.readouterr()
    assert budgets["search"] == 2.0 and 0.4 <= budgets["rollout"] <= 2.0


def test_an_empty_ray_address_is_refused() -> None:
    """--ray "" rolled out on local processes without a word (review, session 43)."""
    r = run("rollout", "4HPwATDgc/ABMA", "--trials", "2", "--ray", "")
    assert r.returncode == 2 and "a Ray address is 'local'" in r.stderr and "got ''" in r.stderr
