"""The README: its Python session runs as a doctest, its engine examples are the engine's replies,
and .ci/run runs its test command."""

from __future__ import annotations

import doctest
import json
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


def _readme_engine_examples() -> list[tuple[dict, str]]:
    """The README's engine examples: each ```text block that opens with a request, as
    (the request, the reply as shown, with "..." and {...} for what it leaves out)."""
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```text\n(.*?)```", text, re.S):
        if not block.lstrip().startswith('{"cmd"'):
            continue
        lines, req = block.splitlines(), None
        for i in range(1, len(lines) + 1):
            try:
                req = json.loads(" ".join(lines[:i]))
            except json.JSONDecodeError:
                continue
            out.append((req, " ".join(lines[i:])))
            break
        assert req is not None, block
    return out


_PAIR = re.compile(r'"(\w+)": (-?[0-9][0-9.]*|"[^"]*"|true|false|null)')


def test_the_readme_engine_examples_are_the_engine_replies() -> None:
    """Each key and value the README shows of an engine reply is the engine's, in order (a
    review found its cube example stale: a dead cube's reply since session 45)."""
    from doublet.apps.protocol import Session

    examples = _readme_engine_examples()
    assert [req["cmd"] for req, _ in examples] == ["best", "cube"]
    for req, shown in examples:
        actual = _PAIR.findall(json.dumps(Session().answer(req)))
        it = iter(actual)
        for pair in _PAIR.findall(shown):
            if pair[1].startswith('"<'):  # a placeholder, as "<gnubg ID ...>"
                continue
            assert pair in it, (req["cmd"], pair, actual)
