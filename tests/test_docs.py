"""The README: its Python session runs as a doctest, and .ci/run runs its test command."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_session_is_a_passing_doctest() -> None:
    text = (ROOT / "README.md").read_text()
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "README.md", str(ROOT / "README.md"), 0)
    assert test.examples, "the README has no session"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    assert len(commands) == 2, "the README gives exactly two set-up commands"
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1].strip() in ci


def test_position_doctests() -> None:
    import doublet.formats.position

    failures, tried = doctest.testmod(doublet.formats.position)
    assert tried > 0 and failures == 0


def test_game_doctests() -> None:
    import doublet.games.game

    failures, tried = doctest.testmod(doublet.games.game)
    assert tried > 0 and failures == 0


def test_cube_state_doctests() -> None:
    import doublet.cube.state

    failures, tried = doctest.testmod(doublet.cube.state)
    assert tried > 0 and failures == 0
