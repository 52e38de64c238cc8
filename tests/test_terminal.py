"""`doublet play`, driven through a pseudo-terminal (and once through a pipe) as a person
would drive it.

Checks:
- a whole standard game against the engine at 0 ply with a fixed seed: each turn the test
  reads the Position ID and the dice on the screen, checks them against the engine's
  printed play of the turn before, picks a legal play with doublet.formats.position and types it;
  on the way `help`, `hint` (its best play is legal and is played with its parts in
  another order), a malformed play, an illegal play, `undo` with nothing to undo and
  `undo` of a play before it is confirmed, each with its own reply; at the end the result
  and score lines agree, and `--export` wrote one line per turn;
- `quit` mid-game saves a valid file that holds the position and dice on the screen, the
  `export FILE` command writes the turns so far, `--resume` shows the same position and
  dice, end of input (Ctrl-D) saves again, and the end of the resumed series removes the
  file; piped input works and its end saves too; Ctrl-C and a hang-up save;
- a damaged save file, a missing one and bad arguments end with `doublet: error: ...`;
- resignations score 2, 1 and 3 points over a three-game series, and the next game starts
  by seed 002's rule (an opening throw after a gammon, the winner of a single game first);
- an Acey-Deucey game: the person enters checkers with `in/..` and plays a 1-2 chain
  (`... then k-k: ...`) as doublet.formats.notation writes it.
"""

from __future__ import annotations

import json
import os
import pty
import random
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from doublet.formats.ids import parse_position
from doublet.formats.matfile import read_match
from doublet.formats.notation import other_side
from doublet.formats.position import Position
from doublet.games.game import DEAD_CUBE_NOTE, Game, Rules, Series, roll

ROOT = Path(__file__).resolve().parent.parent

# The person's turn: position, dice and the prompt (a play, or a pass).
STANDARD_TURN = (
    r"Position ID: (?P<pos>\S+)\nYou rolled (?P<d1>\d)-(?P<d2>\d)\.\n"
    r"(?P<prompt>Your play: |No legal play\. Enter to pass: )"
)
ACEY_DEUCEY_TURN = STANDARD_TURN.replace(r"Position ID: (?P<pos>\S+)", r"Position: (?P<pos>\{.*\})")
RESULT = (
    r"(?P<winner>You win|Doublet wins) an? (?P<name>single game|gammon|backgammon)"
    r"(?P<resigned> \(resigned\)| \(double passed\))?: (?P<points>\d+) points?\.\n"
    r"Score: you (?P<mine>\d+), Doublet (?P<theirs>\d+)\."
)
ROLL_PROMPT = r"Roll or (re)?double \(Enter rolls\): "
DOUBLED = r"Doublet (re)?doubles to (?P<cube>\d+)\. Take or pass(, beaver)?\? "
ENGINE_TURN = re.compile(r"Doublet rolls (\d)-(\d): (.*?)( and rolls again)?\.\n")


class Terminal:
    """`doublet play ARGS` on a pseudo-terminal: read the screen, type lines."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "doublet", "play", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = ""
        self.seen = 0  # the screen up to here has been matched

    def expect(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """The next match of `pattern` on the screen, waiting for the program."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.screen, self.seen)
            if m:
                self.seen = m.end()
                return m
            left = deadline - time.monotonic()
            ready = select.select([self.master], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                raise AssertionError(f"no {pattern!r} on the screen:\n{self.screen[-3000:]}")
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the program closed the terminal
                data = b""
            if not data:
                raise AssertionError(f"ended before {pattern!r}:\n{self.screen[-3000:]}")
            self.screen += data.decode("utf-8").replace("\r", "")

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def end_input(self) -> None:
        os.write(self.master, b"\x04")  # Ctrl-D at the start of a line: end of input

    def wait(self, timeout: float = 30) -> int:
        try:
            while True:  # drain the screen so that the program never blocks writing
                if not select.select([self.master], [], [], 0.2)[0]:
                    if self.proc.poll() is not None:
                        break
                    continue
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.screen += data.decode("utf-8").replace("\r", "")
            return self.proc.wait(timeout)
        finally:
            os.close(self.master)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["XDG_DATA_HOME"] = str(tmp_path / "data")
    e.pop("COLUMNS", None)
    return e


def run_doublet(
    args: list[str], env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "doublet", "play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


def engine_plays(chunk: str) -> list[tuple[int, int, str]]:
    return [(int(a), int(b), p) for a, b, p, _ in ENGINE_TURN.findall(chunk)]


def test_a_whole_game_against_the_engine(env: dict[str, str], tmp_path: Path) -> None:
    record = tmp_path / "games.txt"
    seed = 2
    t = Terminal(
        ["--seed", str(seed), "--ply", "0", "--first", "you", "--export", str(record)], env
    )
    t.expect(r"the engine plays at 0 ply")
    t.expect(r"You have the first throw\.")
    turn = t.expect(STANDARD_TURN)
    assert turn["pos"] == "4HPwATDgc/ABMA"
    dice = (int(turn["d1"]), int(turn["d2"]))
    assert dice == roll(seed, 0, 0)
    assert re.search(r"X  you      pips 167  off  0", t.screen)
    pos = Position.from_id(turn["pos"])
    legal = {p.notation for p in pos.plays(*dice)}

    t.type("help")
    t.expect(r"Commands:(.|\n)*quit .*\n(.|\n)*Your play: ")
    t.type("hint")
    h = t.expect(r"Hint \(0 ply, cubeful equity\), the best (\d) of (\d+) plays:\n"
                 r"((?:  \d\. .*\n)+)Your play: ")  # fmt: skip
    assert int(h[2]) == len(legal) and int(h[1]) == min(5, len(legal))
    hinted = [
        re.match(r"  \d\. (.*?)  +equity [+-]\d\.\d{3}  loss \d\.\d{3}  win ", row)[1]
        for row in h[3].splitlines()
    ]  # type: ignore[index]
    assert len(hinted) == int(h[1]) and set(hinted) <= legal
    t.type("13/x")
    t.expect(r"Malformed play: '13/x': unknown point 'x'.*\nYour play: ")
    t.type("6/off")
    t.expect(r"Illegal play: .*6/off.*\nYour play: ")
    t.type("undo")
    t.expect(r"Nothing to undo.*\nYour play: ")
    other = next(p for p in sorted(legal) if p != hinted[0])
    t.type(other)
    t.expect(rf"You play {re.escape(other)}\.\nEnter confirms, undo takes it back: ")
    t.type("undo")
    t.expect(rf"Taken back: {re.escape(other)}\.")
    again = t.expect(STANDARD_TURN)  # the same position and dice again
    assert (again["pos"], again["d1"], again["d2"]) == (turn["pos"], turn["d1"], turn["d2"])
    forgiving = " ".join(reversed(hinted[0].split()))  # parts in another order
    t.type(other)
    t.expect(rf"You play {re.escape(other)}\.\nEnter confirms, undo takes it back: ")
    t.type("yy")  # a slip: said why, asked again, the play kept
    t.expect(rf"Malformed play: 'yy' is not a move.*Press Enter to confirm {re.escape(other)}, "
             r"type undo to take it back, or type another play\.\n"
             r"Enter confirms, undo takes it back: ")  # fmt: skip
    t.type("help")  # answered, and asked again
    t.expect(r"After your play, Enter confirms it[\s\S]*?Enter confirms, undo takes it back: ")
    t.type(forgiving)  # another play at the confirmation: the first is taken back
    t.expect(rf"Taken back: {re.escape(other)}\.")
    t.expect(rf"You play {re.escape(hinted[0])}\.\nEnter confirms, undo takes it back: ")
    t.type("")
    after = pos.play(hinted[0], *dice).position()  # seen by the engine, on roll

    rng = random.Random(seed)
    mine, passes, rolls_asked = 1, 0, 0
    while True:
        start = t.seen
        m = t.expect(rf"{STANDARD_TURN}|{RESULT}|{ROLL_PROMPT}|{DOUBLED}", timeout=60)
        # The engine's plays are written in the person's numbering: in its own, they
        # lead to the position the screen shows next.
        for d1, d2, text in engine_plays(t.screen[start : m.start()]):
            mine_text = "" if text == "no legal play" else other_side(text)
            after = after.play(mine_text, d1, d2).position()
        if m["winner"]:
            break
        if m[0].startswith("Roll or"):  # before the person's roll: roll (Enter)
            rolls_asked += 1
            t.type("")
            continue
        if m["cube"]:  # the engine doubled: take
            t.type("take")
            t.expect(r"You take: the cube is at \d+, on your side\.")
            continue
        dice = (int(m["d1"]), int(m["d2"]))
        pos = Position.from_id(m["pos"])
        assert pos == after, "the screen's position is not the one the plays lead to"
        plays = pos.plays(*dice)
        mine += 1
        if m["prompt"].startswith("No legal play"):
            assert [p.notation for p in plays] == [""]
            t.type("")
            t.expect(r"You pass\.")
            passes += 1
            after = pos.plays(*dice)[0].position()
            continue
        play = rng.choice(plays)
        t.type(play.notation)
        t.expect(r"Enter confirms, undo takes it back: ")
        t.type("")
        after = play.position()
    assert t.wait() == 0
    assert rolls_asked > 0  # with the cube centred the person may double before rolling
    points = int(m["points"])
    kind = abs(after.outcome())
    assert m["name"] == {1: "single game", 2: "gammon", 3: "backgammon"}[kind]
    cube = max([1, *(int(c) for c in re.findall(r"the cube is at (\d+)", t.screen))])
    assert points == cube * (1 if cube == 1 else kind)  # Jacoby: a gammon counts once turned
    winner = 0 if m["winner"] == "You win" else 1
    assert (int(m["mine"]), int(m["theirs"])) == ((points, 0) if winner == 0 else (0, points))
    assert not m["resigned"]
    assert after.outcome() < 0  # seen by the side that lost, next to roll
    engine_turns = len(engine_plays(t.screen))
    lines = record.read_text().splitlines()
    turns = [x for x in lines if x and not x.startswith(";")]
    cube_lines = [x for x in turns if re.fullmatch(r" +\d+  \S+ +(doubles to \d+|takes)", x)]
    assert len(turns) == mine + engine_turns + len(cube_lines)
    assert len(cube_lines) == len(re.findall(r"doubles to \d+", t.screen)) * 2
    assert turns[0].split()[1:4] == ["person", dice_text(roll(seed, 0, 0)), "4HPwATDgc/ABMA"]
    assert [x for x in lines if x][-1].startswith(
        f"; {'person' if winner == 0 else 'Doublet'} wins"
    )
    assert not (tmp_path / "data" / "doublet" / "game.json").exists()  # nothing to resume


def dice_text(d: tuple[int, int]) -> str:
    return f"{d[0]}-{d[1]}"


def test_quit_saves_and_resume_goes_on_with_the_same_position_and_dice(
    env: dict[str, str], tmp_path: Path
) -> None:
    save = tmp_path / "my game.json"
    record = tmp_path / "so far.txt"
    t = Terminal(["--seed", "11", "--ply", "0", "--first", "you", "--save", str(save), "--no-cube"],
                 env)  # fmt: skip
    first = t.expect(STANDARD_TURN)
    dice = (int(first["d1"]), int(first["d2"]))
    t.type(Position.from_id(first["pos"]).plays(*dice)[0].notation)
    t.expect(r"Enter confirms, undo takes it back: ")
    t.type("")
    second = t.expect(STANDARD_TURN)
    nowhere = tmp_path / "no such folder" / "x.mat"  # no folders made on the way
    t.type(f"export {nowhere}")
    t.expect(rf"Cannot write {re.escape(str(nowhere))}: its folder does not exist")
    assert not nowhere.parent.exists()
    t.type(f"export {record}")
    t.expect(rf"The record of this game \(2 turns\) is in {re.escape(str(record))}\.")
    t.type("quit")
    t.expect(rf"Game saved to {re.escape(str(save))}; doublet play --resume --save ")
    assert t.wait() == 0
    lines = record.read_text().splitlines()
    assert [x.split()[1] for x in lines if not x.startswith(";")] == ["person", "Doublet"]

    doc = json.loads(save.read_text())
    assert doc["format"] == "doublet-game" and doc["ply"] == 0
    saved = Series.load(save).game
    assert saved.describe() == second["pos"]
    # The dice are written the higher first (a review found them in the order rolled).
    assert int(second["d1"]) >= int(second["d2"]) and saved.turn == 0
    assert sorted(saved.dice) == sorted((int(second["d1"]), int(second["d2"])))

    t = Terminal(["--resume", "--save", str(save)], env)
    t.expect(r"Resuming the game saved in .*: Game 1 of 1, score: you 0, Doublet 0\.")
    again = t.expect(STANDARD_TURN)
    assert (again["pos"], again["d1"], again["d2"]) == (second["pos"], second["d1"], second["d2"])
    t.end_input()  # Ctrl-D: leaves and saves, like quit
    t.expect(r"Game saved to ")
    assert t.wait() == 0
    assert Series.load(save).game.describe() == second["pos"]

    t = Terminal(["--resume", "--save", str(save)], env)
    t.expect(STANDARD_TURN)
    t.type("resign")
    t.expect(r"Resign a single game \(1 point\)\? Type yes to confirm: ")
    t.type("yes")
    t.expect(RESULT)
    assert t.wait() == 0
    assert not save.exists()  # the series is over: nothing left to resume


def test_piped_input_plays_and_its_end_saves(env: dict[str, str], tmp_path: Path) -> None:
    save = tmp_path / "data" / "doublet" / "game.json"  # the default place
    done = run_doublet(["--seed", "7", "--first", "you", "--ply", "0", "--no-cube"], env,
                       "24/18 24/20\n\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Your play: 24/18 24/20\n" in done.stdout  # what was read is shown
    assert "You play 24/20 24/18." in done.stdout
    assert re.search(r"Doublet rolls \d-\d: ", done.stdout)
    assert f"Game saved to {save}; doublet play --resume continues it." in done.stdout
    assert len(Series.load(save).game.record) == 2
    later = run_doublet(["--seed", "8"], env, "")
    assert f"(A saved game is in {save}: this game takes its place" in later.stdout
    keep = save.with_name("game.previous.json")  # the exact command, for the moved file
    assert f"kept in {keep}: doublet play --resume --save {keep} continues it" in later.stdout


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        (["--resume"], "{not json", "is not a saved game (bad JSON"),
        (["--resume"], '{"format": "doublet-game", "version": 1}', "damaged saved game"),
        (["--resume"], '{"format": "chess"}', "not a Doublet saved game"),
        (["--resume"], None, "no saved game at"),
        (["--resume", "--seed", "3"], "{}", "--seed cannot be given with it"),
        (["--resume", "--no-jacoby"], "{}", "--no-jacoby cannot be given with it"),
        (["--ply", "7"], None, "--ply must be 0..3, got 7"),
        (["--games", "-1"], None, "--games must be 0 (no limit) or more"),
        # a series' dice keep 63 bits of the seed: 2**63 was seed 0's series again
        (["--seed", str(2**63)], None, "--seed must be 0 to 2**63 - 1, got 9223372036854775808"),
        (["--seed", "-1"], None, "--seed must be 0 to 2**63 - 1, got -1"),
        (["--export", "/nonexistent/dir/x.txt"], None, "cannot write '/nonexistent/dir/x.txt'"),
        # an Acey-Deucey series has no .mat file: said at the start, not after the game
        (
            ["--variant", "acey-deucey", "--export", "x.mat"],
            None,
            "the .mat and .sgf match files are for standard backgammon; Acey-Deucey games "
            "are exported as Doublet's text record (--export FILE.txt)",
        ),
    ],
)
def test_bad_save_files_and_arguments_are_one_clear_error(
    env: dict[str, str], tmp_path: Path, args: list[str], content: str | None, message: str
) -> None:
    save = tmp_path / "game.json"
    if content is not None:
        save.write_text(content)
    done = run_doublet([*args, "--save", str(save)], env, "quit\n")
    assert done.returncode == 2
    assert done.stderr.startswith("doublet: error: ") and message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_resignations_score_and_the_next_game_follows_seed_002(env: dict[str, str]) -> None:
    t = Terminal(["--seed", "5", "--ply", "0", "--first", "you", "--games", "3", "--no-cube"],
                 env)  # fmt: skip
    t.expect(STANDARD_TURN)
    t.type("resign everything")
    t.expect(r"resign, resign gammon or resign backgammon")
    t.type("resign gammon")
    t.expect(r"Resign a gammon \(2 points\)\? Type yes to confirm: ")
    t.type("no")
    t.expect(r"Not resigned: the game goes on\.\nYour play: ")
    t.type("resign gammon")
    t.type("yes")
    t.expect(r"You resign a gammon; Doublet accepts\.")
    m = t.expect(RESULT)
    assert (m["name"], m["resigned"], m["points"], m["mine"], m["theirs"]) == (
        "gammon",
        " (resigned)",
        "2",
        "0",
        "2",
    )
    t.expect(r"=== Game 2 of 3, score: you 0, Doublet 2 ===\nOpening throw: you \d, Doublet \d\.")
    t.expect(r"Your play: |Enter to pass: ")
    t.type("resign")
    t.type("yes")
    m = t.expect(RESULT)
    assert (m["name"], m["points"], m["mine"], m["theirs"]) == ("single game", "1", "0", "3")
    t.expect(r"=== Game 3 of 3, score: you 0, Doublet 3 ===\nDoublet won the last game by a "
             r"single game and has the first throw\.\nDoublet rolls \d-\d: ")  # fmt: skip
    t.expect(r"Your play: |Enter to pass: ")
    t.type("resign backgammon")
    t.type("yes")
    m = t.expect(RESULT)
    assert (m["name"], m["points"], m["mine"], m["theirs"]) == ("backgammon", "3", "0", "6")
    t.expect(r"Final score: you 0, Doublet 6\. Doublet wins the series\.")
    assert t.wait() == 0


def test_an_acey_deucey_game_with_entering_and_a_1_2_chain(env: dict[str, str]) -> None:
    # Seed 18: you roll 3-6, Doublet 2-4, then you roll 1-2 (doublet.games.game.roll).
    t = Terminal(["--variant", "acey-deucey", "--seed", "18", "--ply", "0", "--first", "you",
                  "--no-cube"], env)  # fmt: skip
    t.expect(r"Doublet: Acey-Deucey, 1 game, seed 18; the engine plays at 0 ply")
    chains = 0
    for turn in range(5):
        m = t.expect(ACEY_DEUCEY_TURN)
        pos = Position.parse(json.loads(m["pos"]), "acey-deucey")
        dice = (int(m["d1"]), int(m["d2"]))
        if turn == 0:
            assert dice == roll(18, 0, 0) and pos == Position.start(variant=1)
            assert "X  you      pips 375  off  0  not entered 15" in t.screen
        plays = pos.plays(*dice)
        chained = [p for p in plays if " then " in p.notation]
        play = chained[0] if chained else plays[len(plays) // 2]
        if turn == 0:
            assert play.notation.startswith("in/")
        t.type(play.notation)
        t.expect(rf"You play {re.escape(play.notation)}( and roll again)?\.\nEnter confirms, ")
        t.type("")
        if play.again:
            chains += 1
            t.expect(r"You roll again: \d-\d\.")
    assert chains >= 1
    t.type("quit")
    t.expect(r"Game saved to ")
    assert t.wait() == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP, signal.SIGTERM],
                         ids=["ctrl-c", "hang-up", "sigterm"])  # fmt: skip
def test_ctrl_c_and_a_closed_terminal_save_the_game(
    env: dict[str, str], tmp_path: Path, sig: signal.Signals
) -> None:
    save = tmp_path / "game.json"
    t = Terminal(["--seed", "4", "--first", "you", "--save", str(save)], env)
    turn = t.expect(STANDARD_TURN)
    t.proc.send_signal(sig)
    t.expect(r"Game saved to ")
    assert t.wait() == 128 + sig  # as a shell reports it (a review found 0)
    assert Series.load(save).game.describe() == turn["pos"]


@pytest.mark.parametrize(
    ("seed", "turns", "sig"),
    [
        (21, 1, signal.SIGKILL),
        (22, 3, signal.SIGKILL),
        (23, 5, signal.SIGKILL),
        (24, 4, signal.SIGTERM),
    ],
)
def test_a_kill_9_loses_no_completed_turn(
    env: dict[str, str], tmp_path: Path, seed: int, turns: int, sig: signal.Signals
) -> None:
    # The game is saved after every turn: killed (SIGKILL, no chance to save) at the
    # person's prompt after `turns` turns, it resumes with the position and dice shown.
    save = tmp_path / "game.json"
    args = ["--seed", str(seed), "--ply", "0", "--first", "you", "--save", str(save), "--no-cube"]
    t = Terminal(args, env)
    for k in range(turns + 1):
        turn = t.expect(STANDARD_TURN)
        if k == turns:
            break
        if turn["prompt"].startswith("No legal play"):
            t.type("")
            continue
        play = Position.from_id(turn["pos"]).plays(int(turn["d1"]), int(turn["d2"]))[0]
        t.type(play.notation)
        t.expect("Enter confirms, undo takes it back: ")
        t.type("")
    t.proc.send_signal(sig)  # the prompt is written after the turn's save
    t.wait()
    saved = Series.load(save).game
    assert saved.describe() == turn["pos"]
    assert sorted(saved.dice) == sorted((int(turn["d1"]), int(turn["d2"]))) and saved.turn == 0
    t = Terminal(["--resume", "--save", str(save)], env)
    again = t.expect(STANDARD_TURN)
    assert (again["pos"], again["d1"], again["d2"]) == (turn["pos"], turn["d1"], turn["d2"])
    t.type("quit")
    assert t.wait() == 0


def test_a_new_game_keeps_the_saved_one_beside_it(env: dict[str, str], tmp_path: Path) -> None:
    """A saved game with play in it is kept beside a new one, under the first free name
    (game.previous.json, then game.previous-2.json: none is overwritten); a save in
    which nothing was played (a session started and left at once) is replaced."""
    save = tmp_path / "game.json"
    start = ["--first", "you", "--ply", "0", "--save", str(save)]
    kept = []
    for seed in (5, 6, 7, 8):
        done = run_doublet([*start, "--seed", str(seed)], env, "quit\n")
        assert done.returncode == 0
        assert ("is kept in" in done.stdout) == (seed >= 7), done.stdout
        if seed == 5:
            continue  # left with nothing played: seed 6's session replaces it
        s = Series.load(save)  # the person's first play, as if typed before quit
        s.game.play(s.game.plays()[0])
        s.save(save)
        kept.append(save.read_text())
    assert (tmp_path / "game.previous.json").read_text() == kept[0]
    assert (tmp_path / "game.previous-2.json").read_text() == kept[1]
    assert save.read_text() == kept[2]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("game")) == [
        "game.json",
        "game.previous-2.json",
        "game.previous.json",
    ]  # the lock is tidied away


def test_a_second_session_on_the_same_save_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    """While one doublet play runs, another on the same save (new or --resume) is refused
    and leaves the first one's game alone; once the first ends, the save is free."""
    save = tmp_path / "game.json"
    t = Terminal(["--first", "you", "--seed", "3", "--ply", "0", "--save", str(save)], env)
    t.expect(STANDARD_TURN)
    before = save.read_text()
    for args in (["--seed", "4"], ["--resume"]):
        done = run_doublet([*args, "--ply", "0", "--save", str(save)], env, "quit\n")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "another doublet play is using the saved game" in done.stderr
        assert save.read_text() == before and not (tmp_path / "game.previous.json").exists()
    t.type("quit")
    assert t.wait() == 0
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0 and "Resuming" in done.stdout


def test_a_double_saved_before_doublet_answered_is_answered_by_doublet(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The person's double saved with no answer yet (a kill in the engine's thinking):
    on --resume Doublet answers it, not the person (who could pass their own double)."""
    save = tmp_path / "game.json"
    saved_at(save, DOUBLE_PASS, 0)
    s = Series.load(save)
    s.game.double(0)
    s.save(save)
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert "You double to 2. Doublet passes: you win 1 point." in done.stdout
    assert "Take or pass" not in done.stdout
    r = Series.load(save) if save.exists() else None
    assert r is None or r.results[0].winner == 0


def test_a_saved_match_between_games_goes_on_with_the_next(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A match saved after a game ended (before the next began) resumes with the next game;
    the finished game is counted once."""
    save = tmp_path / "game.json"
    s = Series.new("standard", 0, 5, 0, 0, length=5, cube=True)
    s.game.resign(0, 1)  # the person resigns a single game: Doublet 1, you 0
    s.save(save)
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert "=== Game 2 of a 5-point match, score: you 0, Doublet 1 ===" in done.stdout
    r = Series.load(save)
    assert r.game.number == 1 and r.score == [0, 1]


def test_the_board_command_shows_the_persons_view_while_doublet_doubles(
    env: dict[str, str], tmp_path: Path
) -> None:
    _, t = resumed_at(tmp_path, env, DOUBLE_TAKE, 1)
    t.expect(DOUBLED)
    first = t.seen
    t.type("board")
    t.expect(DOUBLED)
    screen = t.screen[:first], t.screen[first:]
    pips = [re.findall(r" ([XO])  (\w+)\s+pips\s+(\d+)", part) for part in screen]
    assert pips[0][-2:] == pips[1][-2:]  # the same sides, the same pips as first shown
    t.type("quit")
    assert t.wait() == 0


def test_an_engine_error_mid_game_saves_the_game_first(env: dict[str, str], tmp_path: Path) -> None:
    save = tmp_path / "game.json"
    bad = {**env, "DOUBLET_MODEL_DIR": str(tmp_path / "no-models")}  # the model goes missing
    done = run_doublet(["--first", "you", "--ply", "0", "--seed", "3", "--save", str(save)], bad,
                       "13/8 6/5\n\n")  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("doublet: error: model file")
    assert f"Game saved to {save}" in done.stdout
    saved = Series.load(save).game
    assert saved.record and saved.record[0].play == "13/8 6/5"  # the person's turn is kept


# -- the cube and matches ---------------------------------------------------------------

# Money positions, the side on roll's view, whose proper action gnubg 2-ply gives (see
# tests/test_cube_play.py): a double the other side should pass, one it should take,
# and one where the side on roll is too good to double (on for a gammon).
DOUBLE_PASS = "7bYFABhsezcAAA"
DOUBLE_TAKE = "Q2vwECKw78ABSA"
TOO_GOOD = "g+dgAE6zbQ0CAg"


def saved_at(save: Path, pid: str, turn: int, length: int = 0, jacoby: bool = False) -> None:
    """A series saved with side `turn` on roll, not yet rolled, at `pid` (seen by it)."""
    s = Series.new("standard", seed=13, ply=0, length=length, cube=True, jacoby=jacoby)
    board, _, _ = parse_position(pid)
    s.game = Game(0, 13, 0, np.array(board, np.int8), turn, None, None,
                  rules=Rules(cube=True, length=length, jacoby=jacoby))  # fmt: skip
    s.save(save)


def resumed_at(tmp_path: Path, env: dict[str, str], pid: str,
               turn: int) -> tuple[Path, Terminal]:  # fmt: skip
    """`doublet play --resume` on a series saved by saved_at: (the save, its Terminal)."""
    save = tmp_path / "game.json"
    saved_at(save, pid, turn)
    return save, Terminal(["--resume", "--save", str(save)], env)


def test_an_export_to_sgf_is_gnu_backgammons_sgf(env: dict[str, str], tmp_path: Path) -> None:
    """Found by a review (session 43): --export game.sgf wrote Doublet's text record under
    that name, which gnubg cannot load. A .sgf name gets the match as gnubg's SGF (the
    game resigned at its first roll: the roll and the result)."""
    from doublet.formats.matfile import read_match

    sgf = tmp_path / "game.sgf"
    t = Terminal(["--games", "1", "--seed", "2", "--ply", "0", "--first", "you",
                  "--export", str(sgf)], env)  # fmt: skip
    t.expect(STANDARD_TURN)
    t.type("resign")
    t.expect(r"Resign a single game \(1 point\)\? Type yes to confirm: ")
    t.type("yes")
    t.expect(r"The match file, 1 game\(s\), is in ")
    text = sgf.read_text()
    assert text.startswith("(;FF[4]GM[6]") and "RE[B+1R]" in text and ";PL[W]DI[" in text
    _, replayed = read_match(text)
    assert [(r.winner, r.points, r.resigned) for r in replayed] == [(1, 1, True)]


def test_a_match_to_3_with_a_double_a_resignation_and_the_crawford_game(
    env: dict[str, str], tmp_path: Path
) -> None:
    mat = tmp_path / "match.mat"
    t = Terminal(["--match", "3", "--seed", "1", "--ply", "0", "--first", "you",
                  "--export", str(mat)], env)  # fmt: skip
    t.expect(r"Doublet: standard backgammon, 3-point match, seed 1")
    t.expect(r"=== Game 1 of a 3-point match, score: you 0, Doublet 0 ===")
    first = t.expect(STANDARD_TURN)  # the opening roll: nobody doubles before it
    dice = (int(first["d1"]), int(first["d2"]))
    t.type(Position.from_id(first["pos"]).plays(*dice)[0].notation)
    t.type("")
    t.expect(ROLL_PROMPT)
    t.type("hint")
    t.expect(r"Hint \(0 ply\): No double, take\.\n  No double +[+-]\d\.\d{3}  loss 0\.000\n")
    t.type("double")
    t.expect(r"You double to 2\. Doublet takes: the cube is at 2, on its side\.")
    took = t.seen
    t.expect(STANDARD_TURN)
    assert re.search(r"\n O  Doublet +pips +\d+ +off +\d+  \[cube 2\]\n", t.screen[took:])
    t.type("resign")
    t.expect(r"Resign a single game \(2 points\)\? Type yes to confirm: ")
    t.type("yes")
    t.expect(r"You resign a single game; Doublet accepts\.")
    m = t.expect(RESULT)
    assert (m["points"], m["mine"], m["theirs"]) == ("2", "0", "2")
    t.expect(r"The match file, 1 game\(s\), is in ")
    t.expect(r"=== Game 2 of a 3-point match, score: you 0, Doublet 2 \(Crawford game\) ===\n"
             r"The Crawford game: nobody may double in it\.")  # fmt: skip
    turn = t.expect(rf"{STANDARD_TURN}|Doublet rolls")
    if not turn["pos"]:
        turn = t.expect(STANDARD_TURN)
    t.type("double")
    t.expect(r"You cannot double now: the Crawford game: nobody may double")
    t.type("resign")
    t.type("yes")
    m = t.expect(RESULT)
    assert (m["mine"], m["theirs"]) == ("0", "3")
    t.expect(r"Doublet wins the 3-point match 3-0\.")
    assert t.wait() == 0
    match, games = read_match(mat.read_text())
    assert match.length == 3 and len(games) == 2
    assert [a.kind for a in games[0].cube_actions] == ["double", "take"]
    assert games[1].crawford and (games[1].winner, games[1].points) == (1, 1)


def test_the_engine_doubles_and_the_person_takes_with_a_hint(
    env: dict[str, str], tmp_path: Path
) -> None:
    # the engine on roll in a double / take
    save, t = resumed_at(tmp_path, env, DOUBLE_TAKE, 1)
    t.expect(DOUBLED)
    t.type("hint")
    t.expect(
        r"Hint \(0 ply\): take\. For you, taking is worth -\d\.\d{3} and passing -1\.000 "
        r"\(in units of the cube now\): passing loses \d\.\d{3}\."
    )  # its loss (a review)
    t.type("maybe")
    t.expect(r"Type take or pass \(drop\)\.")
    t.type("take")
    t.expect(r"You take: the cube is at 2, on your side\.")
    t.expect(r"Doublet rolls \d-\d: ")
    t.expect(rf"{STANDARD_TURN}|{ROLL_PROMPT}")
    t.type("quit")
    assert t.wait() == 0
    g = Series.load(save).game
    assert (g.cube, g.owner) == (2, 0) and [x.action for x in g.record[:2]] == ["double", "take"]


def test_the_engine_passes_a_double_it_should_pass(env: dict[str, str], tmp_path: Path) -> None:
    # the person on roll, a double / pass
    _, t = resumed_at(tmp_path, env, DOUBLE_PASS, 0)
    t.expect(ROLL_PROMPT)
    t.type("double")
    t.expect(r"You double to 2\. Doublet passes: you win 1 point\.")
    m = t.expect(RESULT)
    assert (m["resigned"], m["points"], m["mine"]) == (" (double passed)", "1", "1")
    assert t.wait() == 0


def test_the_engine_refuses_a_resignation_worth_less_than_playing_on(
    env: dict[str, str], tmp_path: Path
) -> None:
    # the engine is too good to double: on for a gammon
    _, t = resumed_at(tmp_path, env, TOO_GOOD, 1)
    t.expect(r"Doublet rolls \d-\d: ")
    t.expect(rf"{STANDARD_TURN}|{ROLL_PROMPT}")
    t.type("resign")
    t.type("yes")
    t.expect(r"Doublet refuses: playing on is worth 1\.\d{3} points to it, the resignation "
             r"1\.000\. The game goes on\.")  # fmt: skip
    t.type("resign gammon")
    t.type("yes")
    t.expect(r"You resign a gammon; Doublet accepts\.")
    m = t.expect(RESULT)
    assert m["points"] == "2"
    assert t.wait() == 0


def test_cube_options_are_checked(env: dict[str, str], tmp_path: Path) -> None:
    for args, message in [
        (["--match", "0"], "--match must be 1..25 points, got 0"),
        (["--match", "5", "--jacoby"], "--jacoby is for money play, not a match"),
        (["--match", "5", "--games", "3"], "--games is for money play"),
        (["--no-cube", "--beavers"], "need the cube"),
        (["--match", "5", "--money"], "not allowed with argument"),
    ]:
        done = run_doublet([*args, "--save", str(tmp_path / "g.json")], env, "quit\n")
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_facing_a_double_resign_says_to_pass(env: dict[str, str], tmp_path: Path) -> None:
    # the engine on roll in a double / take
    _, t = resumed_at(tmp_path, env, DOUBLE_TAKE, 1)
    t.expect(DOUBLED)
    t.type("resign")
    t.expect(r"You cannot resign now: a double is waiting for its answer: take, or pass")
    t.type("pass")
    m = t.expect(RESULT)
    assert (m["winner"], m["resigned"], m["points"]) == ("Doublet wins", " (double passed)", "1")
    assert t.wait() == 0


def test_a_new_game_moves_aside_only_a_saved_game(env: dict[str, str], tmp_path: Path) -> None:
    """--save at a folder, or at a file that is not a Doublet saved game, is refused and
    left as it was (only a saved game is kept beside the new one as .previous)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "notes.txt").write_text("precious")
    done = run_doublet(["--save", str(folder), "--ply", "0"], env, "quit\n")
    assert done.returncode == 2 and "is a folder: give the path of a file" in done.stderr
    assert (folder / "notes.txt").read_text() == "precious"
    assert not (tmp_path / "notes.previous").exists()
    other = tmp_path / "notes.json"
    other.write_text('{"shopping": ["milk"]}')
    done = run_doublet(["--save", str(other), "--ply", "0"], env, "quit\n")
    assert done.returncode == 2 and "is not a Doublet saved game: it is left as it is" in (
        done.stderr)  # fmt: skip
    assert other.read_text() == '{"shopping": ["milk"]}'
    assert sorted(p.name for p in tmp_path.iterdir() if "notes" in p.name) == [
        "notes",
        "notes.json",
    ]
    compact = tmp_path / "compact.json"  # a saved game written without spaces is one
    compact.write_text('{"format":"doublet-game","version":2}')
    done = run_doublet(["--save", str(compact), "--ply", "0"], env, "quit\n")
    assert done.returncode == 0 and (tmp_path / "compact.previous.json").exists()


def test_a_save_that_fails_on_leaving_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review found the last "Could not save" on the screen, not in doublet's error form:
    it is one `doublet: error:` line on stderr, exit status 1; a save that works keeps
    the status the session ended with (143 after SIGTERM)."""
    import io

    from doublet.apps.terminal import Session

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    series = Series.new(seed=1, starter=0)
    s = Session(series, 0, blocked / "game.json", None, io.StringIO(), io.StringIO())
    assert s.save_and_leave(143) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"doublet: error: could not save the game to {blocked / 'game.json'}: ")
    assert len(err.strip().splitlines()) == 1 and f"{str(blocked)!r} is a file" in err
    s = Session(series, 0, tmp_path / "game.json", None, io.StringIO(), io.StringIO())
    assert s.save_and_leave(143) == 143 and Series.load(tmp_path / "game.json")


def test_a_play_typed_at_the_confirmation_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another play typed at the confirmation of one takes it back and is confirmed in
    turn: it was read there, again to see whether it was a play, and a third time as if
    typed at "Your play:"; now once, and that play is the one played."""
    import io

    from doublet.apps.terminal import Session

    series = Series.new(seed=1, starter=0)  # the person on roll with 3-4
    g = series.game
    first, second = "24/21 24/20", "24/20 13/10"
    read: list[str] = []
    play = Position.play

    def reading(pos: Position, text: str, d1: int, d2: int) -> object:
        read.append(text)
        return play(pos, text, d1, d2)

    monkeypatch.setattr(Position, "play", reading)
    out = io.StringIO()
    s = Session(series, 0, tmp_path / "game.json", None, io.StringIO(f"{first}\n{second}\n\n"),
                out)  # fmt: skip
    s.person_turn()
    assert read == [first, second], read
    assert g.record[-1].play == second and g.turn == 1
    screen = out.getvalue()
    assert f"Taken back: {first}.\n" in screen and f"You play {second}." in screen


def test_the_record_file_symlinks_and_left_temporary_files(env: dict[str, str],
                                                           tmp_path: Path) -> None:  # fmt: skip
    """--export is kept with the saved game: --resume goes on writing the record (the
    whole match here), and nothing is written before a game ends. A save given through a
    symbolic link saves the file it names and keeps the link. Temporary files of a save a
    kill -9 cut short are removed at the start (others are left alone)."""
    save, mat = tmp_path / "s.json", tmp_path / "m.mat"
    start = ["--match", "1", "--ply", "0", "--first", "you", "--seed", "5"]
    done = run_doublet([*start, "--save", str(save), "--export", str(mat)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert Series.load(save).export == str(mat) and not mat.exists()
    real = tmp_path / "real"
    real.mkdir()
    save.rename(real / "s.json")
    save.symlink_to(real / "s.json")
    left = real / "s.json.k9x2.tmp"
    other = real / "other.json.k9x2.tmp"
    left.write_text("half")
    other.write_text("half")
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert save.is_symlink() and Series.load(real / "s.json").export == str(mat)
    assert not left.exists() and other.exists()
    done = run_doublet(["--resume", "--save", str(save)], env, "resign\nyes\n")
    assert done.returncode == 0, done.stderr
    match, games = read_match(mat.read_text())
    assert match.length == 1 and len(games) == 1 and "1-point match" in done.stdout


def test_a_dead_cube_is_said_at_the_start_and_after_a_take(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A 1-point match: winning the game wins the match, so the person is told that the
    cube is dead and their dice are rolled at once (no roll-or-double prompt). Taking a
    double 2-away leaves the cube at 2 on the person's side, dead too: said after the take."""
    t = Terminal(["--match", "1", "--seed", "3", "--ply", "0", "--first", "you"], env)
    t.expect(r"=== Game 1 of a 1-point match, score: you 0, Doublet 0 ===\n"
             + re.escape(DEAD_CUBE_NOTE))  # fmt: skip
    t.expect(STANDARD_TURN)
    t.type("quit")
    assert t.wait() == 0
    assert ROLL_PROMPT not in t.screen and "Roll or double" not in t.screen

    save = tmp_path / "two.json"
    saved_at(save, DOUBLE_TAKE, 1, length=2)  # 2-away both: the engine doubles
    t = Terminal(["--resume", "--save", str(save)], env)
    t.expect(DOUBLED)
    t.type("take")
    t.expect(r"You take: the cube is at 2, on your side\.\n" + re.escape(DEAD_CUBE_NOTE))
    t.type("quit")
    assert t.wait() == 0
    t = Terminal(["--resume", "--save", str(save)], env)  # said again on resuming
    t.expect(r"Resuming the game saved in .*\.\n" + re.escape(DEAD_CUBE_NOTE))
    t.type("quit")
    assert t.wait() == 0


def test_a_series_saved_as_its_last_game_ended_resumes_to_its_end(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Found by a review (session 45): a kill after the last game's save and before its end
    was said left a save that --resume refused ("the series ... is over") and a match
    file never written. Now the resume says the result, writes the record, removes the save."""
    save, mat = tmp_path / "s.json", tmp_path / "m.mat"
    s = Series.new("standard", 0, 4, 0, 0, length=1, cube=True)
    s.export = str(mat)
    s.game.resign(0, 1)  # the person resigns the 1-point match's only game
    s.save(save)
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert "Doublet wins a single game (resigned): 1 point." in done.stdout
    assert "Doublet wins the 1-point match 1-0." in done.stdout
    match, games = read_match(mat.read_text())
    assert match.length == 1 and len(games) == 1 and not save.exists()


def test_a_game_ended_again_on_resume_adds_its_text_record_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Found by a review (session 45): a kill after a game's text record was added to the
    --export file and before the next save added it again on --resume."""
    save, txt = tmp_path / "s.json", tmp_path / "games.txt"
    s = Series.new("standard", 3, 4, 0, 0, cube=True)
    s.export = str(txt)
    s.game.resign(0, 1)
    s.save(save)
    txt.write_text("; an earlier session's games\n")
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    once = txt.read_text()
    assert once.startswith("; an earlier session's games\n") and once.count("game 1") == 1
    s.save(save)  # the kill came after the record was added, before the next save
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert txt.read_text() == once
    assert "=== Game 2 of 3" in done.stdout


@pytest.mark.parametrize("cube", [[], ["--no-cube"]])
def test_roll_typed_at_a_play_says_the_dice_are_rolled(
    env: dict[str, str], tmp_path: Path, cube: list[str]
) -> None:
    """Found by a review (session 45): `roll` at the first play answered with why no
    double was possible ("nobody doubles before a game's first roll"), and without the
    cube that the game had none."""
    done = run_doublet(["--seed", "12", "--ply", "0", "--first", "you", "--save",
                        str(tmp_path / "s.json"), *cube], env, "roll\nquit\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    m = re.search(r"You rolled (\d)-(\d)\.", done.stdout)
    assert m, done.stdout
    assert f"Your dice are rolled already: {m[1]}-{m[2]}." in done.stdout
    assert "nobody doubles" not in done.stdout and "without the cube" not in done.stdout


def test_a_double_on_a_dead_cube_saved_before_its_answer_is_answered(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The rules allow a double on a dead cube (play does not offer one; an older save or
    a match file can hold it): Doublet answers it (a review found an AssertionError once
    a dead cube's analysis had no decision), and a hint at it gives take or pass."""
    save = tmp_path / "dead.json"
    s = Series.new("standard", 0, 7, 0, 0, length=1, cube=True)
    g = s.game
    while g.turn != 0 or g.phase != "move":
        g.play(g.plays()[0])
    g.dice = None
    g.double()  # the person's double of a 1-point match's dead cube
    s.save(save)
    done = run_doublet(["--resume", "--save", str(save)], env, "quit\n")
    assert done.returncode == 0, done.stderr
    assert re.search(r"Doublet (takes|passes)", done.stdout), done.stdout


def test_a_hint_at_a_double_to_beaver_says_beaver(env: dict[str, str], tmp_path: Path) -> None:
    """With beavers, the cube document's double_take is the beavered game's value where
    the take is a beaver ("beaver": true): the hint said "take" and gave that as
    taking's worth (twice it). A review found it (session 45)."""
    save = tmp_path / "game.json"
    s = Series.new("standard", seed=13, ply=0, cube=True, beavers=True)
    s.game = Game(0, 13, 0, np.array(Position.start().board, np.int8), 1, None, None,
                  rules=Rules(cube=True, beavers=True), offered=True)  # fmt: skip
    s.save(save)
    t = Terminal(["--resume", "--save", str(save)], env)
    t.expect(DOUBLED)
    t.type("hint")
    m = t.expect(r"Hint \(0 ply\): beaver\. For you, beavering is worth \+(\d\.\d{3}), taking "
                 r"\+(\d\.\d{3}) and passing -1\.000")  # fmt: skip
    assert float(m[1]) == pytest.approx(2 * float(m[2]), abs=0.0015)
    t.type("quit")
    assert t.wait() == 0


def test_input_the_locale_cannot_read_is_no_crash(env: dict[str, str], tmp_path: Path) -> None:
    """(a review) One byte that is not UTF-8 on a strict UTF-8 stdin (en_US.UTF-8) ended
    the session with an internal error, and the game was not saved."""
    done = subprocess.run(
        [sys.executable, "-m", "doublet", "play", "--seed", "7", "--first", "you", "--ply",
         "0", "--no-cube", "--save", str(tmp_path / "g.json")],
        input=b"\xff\n24/18 24/20\n\nquit\n", capture_output=True, cwd=ROOT, timeout=60,
        env={**env, "PYTHONIOENCODING": "utf-8:strict"},
    )  # fmt: skip
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "Malformed play" in out and "You play 24/20 24/18." in out
    assert "Game saved to" in out


def test_the_seed_is_said_only_when_chosen_or_at_the_end(env: dict[str, str],
                                                          tmp_path: Path) -> None:  # fmt: skip
    """(a review) The first line told a random seed, which gives every roll to come."""
    args = ["--first", "you", "--ply", "0", "--no-cube", "--save", str(tmp_path / "g.json")]
    done = run_doublet(args, env, "resign\nyes\n")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("Doublet: standard backgammon") and "seed" not in first
    seed = int(re.search(r"The dice's seed was (\d+) \(--seed \1 plays them again\)\.",
                         done.stdout).group(1))  # type: ignore[union-attr]  # fmt: skip
    again = run_doublet([*args, "--seed", str(seed)], env, "resign\nyes\n")
    assert f", seed {seed};" in again.stdout.splitlines()[0]
    assert "The dice's seed was" not in again.stdout
    assert re.search(r"You rolled (\d-\d)", done.stdout).group(1) == re.search(  # type: ignore[union-attr]
        r"You rolled (\d-\d)", again.stdout).group(1)  # type: ignore[union-attr]  # fmt: skip


def test_an_export_onto_the_save_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    """(a review) `export SAVE` wrote the text record over the saved game; `--save F
    --export F` deleted the match file when the series ended."""
    save = tmp_path / "g.json"
    done = run_doublet(["--save", str(save), "--export", str(save)], env, "")
    assert done.returncode == 2 and "this game's save file" in done.stderr, done.stderr
    done = run_doublet(["--seed", "7", "--first", "you", "--ply", "0", "--no-cube", "--save",
                        str(save)], env, f"export {save}\nquit\n")  # fmt: skip
    assert f"Cannot write {save}: it is this game's save file" in done.stdout, done.stdout
    assert Series.load(save).game.record == []


def test_the_confirmation_says_why_a_play_typed_there_is_refused(tmp_path: Path) -> None:
    """(a review) An illegal or malformed play typed at "Enter confirms" got only "Press
    Enter to confirm"; a mistyped resign took the play back before it was refused."""
    import io

    from doublet.apps.terminal import Session

    series = Series.new(seed=1, starter=0)  # the person on roll with 3-4
    out = io.StringIO()
    lines = "24/21 24/20\n24/18\n13/x\nresign foo\n\n"
    s = Session(series, 0, tmp_path / "game.json", None, io.StringIO(lines), out)
    s.person_turn()
    screen = out.getvalue()
    assert "Illegal play:" in screen and "Malformed play:" in screen, screen
    assert "Press Enter to confirm 24/21 24/20, type undo" in screen
    assert "resign, resign gammon or resign backgammon" in screen
    assert "Taken back" not in screen
    assert series.game.record[-1].play == "24/21 24/20"


def test_a_resumed_series_keeps_its_drawn_seed_to_the_end(env: dict[str, str],
                                                           tmp_path: Path) -> None:  # fmt: skip
    """(a diff review) A resumed series counted as one whose seed was chosen: its first
    line told the drawn seed, and its end did not."""
    save = tmp_path / "g.json"
    args = ["--games", "2", "--first", "you", "--ply", "0", "--no-cube", "--save", str(save)]
    done = run_doublet(args, env, "resign\nyes\nquit\n")
    assert done.returncode == 0, done.stderr
    saved = Series.load(save)
    assert saved.seed_chosen is False
    resumed = run_doublet(["--resume", "--save", str(save)], env, "resign\nyes\nresign\nyes\n")
    assert resumed.returncode == 0, resumed.stderr
    assert "seed" not in resumed.stdout.splitlines()[0]
    assert f"The dice's seed was {saved.seed} (--seed {saved.seed} plays" in resumed.stdout


def test_commands_and_a_declined_resignation_at_the_confirmation_keep_the_play(
    tmp_path: Path,
) -> None:
    """(a diff review) "double" typed at the confirmation was called a malformed play;
    a resignation declined there took the pending play back."""
    import io

    from doublet.apps.terminal import Session

    series = Series.new(seed=1, starter=0, cube=True)  # the person on roll with 3-4
    out = io.StringIO()
    lines = "24/21 24/20\ndouble\nno\nresign\nno\nexport a\0b.txt\n\n"
    s = Session(series, 0, tmp_path / "game.json", None, io.StringIO(lines), out)
    s.person_turn()
    screen = out.getvalue()
    assert "Malformed" not in screen and "Taken back" not in screen, screen
    assert "Your dice are rolled already" in screen or "You cannot double now" in screen
    assert "Not resigned: the game goes on." in screen
    assert "a file name holds no NUL character" in screen  # (a ValueError ended it)
    assert series.game.record[-1].play == "24/21 24/20"
    other = Series.new(seed=1, starter=0)
    out = io.StringIO()
    s2 = Session(other, 0, tmp_path / "g2.json", None,
                 io.StringIO("24/21 24/20\nundo it\n24/20 13/10\n\n"), out)  # fmt: skip
    s2.person_turn()
    assert "Taken back: 24/21 24/20." in out.getvalue() and "Nothing to undo" not in out.getvalue()
    assert other.game.record[-1].play == "24/20 13/10"


def test_a_saves_seed_chosen_is_true_or_false(tmp_path: Path) -> None:
    """(a diff review) "seed_chosen": "false" or null was read as a chosen seed, and the
    drawn seed was shown; a save from before the key is read as chosen, as it was."""
    from doublet.core.errors import SaveFileError

    s = Series.new(seed=None)
    doc = s.to_dict()
    assert doc["seed_chosen"] is False and Series.from_dict(doc).seed_chosen is False
    for bad in ("false", None, 0):
        with pytest.raises(SaveFileError, match="seed_chosen is true or false"):
            Series.from_dict({**doc, "seed_chosen": bad})
    old = dict(doc)
    del old["seed_chosen"]
    assert Series.from_dict(old).seed_chosen is True
