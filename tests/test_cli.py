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
    r = run("eval", "4HPwATDgc/ABMA", "--json", "--model", model)
    assert r.returncode == 0 and "equity" in json.loads(r.stdout)


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
