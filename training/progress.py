"""The progress of long training work on stderr, the same for every command and step.

On a terminal, a tqdm bar (as the engine's rollouts and reviews show one); elsewhere (a
log file, a pipe, a recipe run under nohup) a bar is either silent or a smear of
carriage returns, so the command's own log function gets a plain line at most every
PROGRESS_EVERY seconds instead:

    train: td-h80: 24,576 / 500,000 games (5%), 31 s, ppg +0.412±0.021 @24000
    recipe: gate: head to head: 1,024 / 4,000 games (26%), 30 s

torch-free: a recipe's gate uses it without the trainer.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

PROGRESS_EVERY = 30.0  # seconds between two progress lines where stderr is no terminal


class Progress:
    """`update(done)` (a count, not an increment) as the work goes, `close()` at its end
    (or use it as a context manager). `what` names the work, `unit` what is counted
    ("game"), `log` prints a line (the command's, with its prefix); `initial`: the count
    already done (a resumed run); `total` 0: not known yet (update gives it). update's
    `note` shows after the count until the next one: the latest strength, say. `leave`
    False: the bar is cleared when closed (a stage of a command, as tqdm's leave=False);
    the lines are the same either way."""

    def __init__(self, what: str, total: int, unit: str, log: Callable[[str], None], *,
                 initial: int = 0, tty: bool | None = None,
                 leave: bool = True) -> None:  # fmt: skip
        self.what, self.total, self.unit, self.log = what, total, unit, log
        self.done, self.note = initial, ""
        self.start = self.last = time.perf_counter()
        self.bar: Any = None
        if sys.stderr.isatty() if tty is None else tty:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]

                self.bar = tqdm(total=total or None, initial=initial, desc=what, unit=unit,
                                smoothing=0.05, dynamic_ncols=True, file=sys.stderr,
                                leave=leave)  # fmt: skip
            except ImportError:  # no bar: the lines
                pass

    def update(self, done: int, note: str | None = None, total: int | None = None) -> None:
        """`done` so far; `total`: the whole, where it was not known at the start."""
        if note is not None:
            self.note = note
        if total is not None and total != self.total:
            self.total = total
            if self.bar is not None:
                self.bar.total = total
        if self.bar is not None:
            if note is not None:  # shown when the update redraws: one a batch need not
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(done - self.done)
        self.done = done
        now = time.perf_counter()
        if self.bar is None and now - self.last >= PROGRESS_EVERY:
            self.last = now
            self.log(self.line(now))

    def line(self, now: float) -> str:
        done, total = self.done, self.total
        units = self.unit + ("es" if self.unit.endswith(("s", "x", "ch", "sh")) else "s")
        count = f"{done:,} {units}"
        if total > 0:
            count = f"{done:,} / {total:,} {units} ({100 * done // total}%)"
        note = f", {self.note}" if self.note else ""
        return f"{self.what}: {count}, {now - self.start:.0f} s{note}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()


def command_log(command: str) -> Callable[[str], None]:
    """A command's log: each line on stderr as `command: line`, flushed at once (a log
    file gets it as it comes, not when a buffer fills)."""

    def log(line: str) -> None:
        print(f"{command}: {line}", file=sys.stderr, flush=True)

    return log


__all__ = ["PROGRESS_EVERY", "Progress", "command_log"]
