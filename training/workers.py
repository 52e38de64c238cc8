"""Self-play worker processes and the small pool that runs them (no torch here).

Each task carries the weights it must use, so its result depends only on its arguments
(doublet.training.train's schedule). The pool is a few ``spawn``-started processes reading one
task queue and writing one result queue, rather than multiprocessing.Pool, because the
trainer must survive signals: workers ignore SIGINT and SIGTERM (Ctrl-C or a TERM to the
process group reaches them too; the trainer finishes its block, writes a checkpoint and
then kills them), a worker that dies anyway is noticed instead of waited for forever, and
a worker whose trainer is gone (SIGKILL) exits by itself within a second.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import traceback
from collections.abc import Callable
from typing import Any

from doublet.core.errors import WorkerError
from doublet.nn.eval import Model, Net
from doublet.training.arena import Strength, strength
from doublet.training.selfplay import SelfPlay, Trajectory

_PLAYER: SelfPlay | None = None


def init(variant: int, epsilon: float) -> None:
    """One SelfPlay (kernel buffers) per process."""
    global _PLAYER
    _PLAYER = SelfPlay(variant, epsilon)


def play(contact: Net, race: Net, seed: int, first: int, count: int) -> list[Trajectory]:
    """Self-play games first .. first + count - 1 of seed with these nets."""
    assert _PLAYER is not None, "init() first"
    return [_PLAYER.game(contact, race, seed, i) for i in range(first, first + count)]


def check(
    contact: Net, race: Net, meta: dict[str, Any], games: int, seed: int, variant: int
) -> Strength:
    """A strength check of these nets against pubeval."""
    return strength(Model(contact, race, meta), games, seed, variant)


_TASKS: dict[str, Callable[..., Any]] = {"play": play, "check": check}


def _loop(tasks: Any, results: Any, variant: int, epsilon: float, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    init(variant, epsilon)
    while True:
        try:
            item = tasks.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:  # the trainer is gone
                return
            continue
        if item is None:
            return
        tid, name, args = item
        try:
            results.put((tid, True, _TASKS[name](*args)))
        except Exception:
            results.put((tid, False, traceback.format_exc()))


class Handle:
    """A submitted task: ready() polls, get() waits (and notices dead workers)."""

    def __init__(self, pool: Pool, tid: int) -> None:
        self.pool = pool
        self.tid = tid

    def ready(self) -> bool:
        self.pool._drain(0.0)
        return self.tid in self.pool.done

    def wait(self, timeout: float) -> bool:
        """Whether it is done, waiting up to timeout for it (WorkerError when a worker
        has died meanwhile, which ready() does not look for)."""
        if self.tid not in self.pool.done:
            self.pool._drain(timeout)
        return self.tid in self.pool.done

    def get(self) -> Any:
        while self.tid not in self.pool.done:
            self.pool._drain(1.0)
        ok, value = self.pool.done.pop(self.tid)
        if not ok:
            raise WorkerError(f"a task failed in a worker process:\n{value}")
        return value


class Pool:
    """n worker processes (spawn: the trainer's process holds torch's threads)."""

    def __init__(self, n: int, variant: int, epsilon: float) -> None:
        ctx = mp.get_context("spawn")
        self.tasks = ctx.Queue()
        self.results = ctx.Queue()
        self.done: dict[int, tuple[bool, Any]] = {}
        self.next_id = 0
        self.procs = [
            ctx.Process(
                target=_loop,
                args=(self.tasks, self.results, variant, epsilon, os.getpid()),
                daemon=True,
                name=f"selfplay-{i}",
            )
            for i in range(n)
        ]
        for p in self.procs:
            p.start()

    def _submit(self, name: str, args: tuple[Any, ...]) -> Handle:
        tid = self.next_id
        self.next_id += 1
        self.tasks.put((tid, name, args))
        return Handle(self, tid)

    def play(self, contact: Net, race: Net, seed: int, first: int, count: int) -> Handle:
        return self._submit("play", (contact, race, seed, first, count))

    def check(self, *args: Any) -> Handle:
        return self._submit("check", args)

    def _drain(self, timeout: float) -> None:
        """Move finished results into self.done, waiting up to timeout for the first."""
        got = False
        try:
            while True:
                if timeout and not got:
                    tid, ok, value = self.results.get(timeout=timeout)
                else:
                    tid, ok, value = self.results.get_nowait()
                self.done[tid] = (ok, value)
                got = True
        except queue.Empty:
            pass
        if timeout and not got:
            dead = [p for p in self.procs if not p.is_alive()]
            if dead:
                codes = ", ".join(f"{p.name}: exit code {p.exitcode}" for p in dead)
                raise WorkerError(f"a self-play worker process died ({codes})")

    def close(self) -> None:
        """Let the workers finish and exit."""
        for _ in self.procs:
            self.tasks.put(None)
        for p in self.procs:
            p.join(timeout=10)
        self.terminate()

    def terminate(self) -> None:
        """Stop the workers now (SIGKILL: they ignore SIGTERM)."""
        for p in self.procs:
            if p.is_alive():
                p.kill()
        for p in self.procs:
            p.join(timeout=10)
        self.tasks.cancel_join_thread()
        self.results.cancel_join_thread()
