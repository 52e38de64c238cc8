"""The watchdog that stops a search from another thread: at a deadline, or at once on
Ctrl-C (doublet.search.analysis.deepen arms it; the CLI interrupts it)."""

from __future__ import annotations

import threading
import time
import weakref

from doublet.search.searcher import Searcher

STOP_REPEAT = 0.02  # seconds between a watchdog's repeated stops (see Watchdog)


class Watchdog:
    """Stops a Searcher's kernels from another thread, at a deadline (``armed``) or at once
    (``interrupt``: Ctrl-C). The kernels give up as they start a roll once stats[0] >
    stats[1] > 0 (Searcher._budget), so a stop sets stats[1] to 1, and again every
    STOP_REPEAT seconds until disarmed (a kernel that starts in between clears it); the
    Searcher then raises BudgetExceeded. ``fired`` says the stop is on (the cubeful
    search's nodes ask: stopping); once ``interrupted``, every arming fires at once until
    the flag is cleared (the CLI clears it before each command's search). ``ply`` and
    ``done`` say what the search is at, ``phase`` what the work is at after it when that
    takes long (writing out the plays of a roll that has hundreds of thousands): for a
    progress line."""

    def __init__(self, s: Searcher) -> None:
        # Weak: a strong one kept every searcher alive for good, its model and caches with
        # it (a review found the searchers' cache evicting nothing); see retire.
        self._s = weakref.ref(s)
        self.closed = False
        self.cv = threading.Condition()
        self.deadline: float | None = None
        self.interrupted = False
        self.fired = False
        self.ply = self.done = -1
        self.phase = ""
        self.thread: threading.Thread | None = None

    def arm(self, deadline: float) -> None:
        with self.cv:
            self.deadline = 0.0 if self.interrupted else deadline
            self.fired = False
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="doublet-watchdog",
                                               daemon=True)  # fmt: skip
                self.thread.start()
            self.cv.notify()

    def disarm(self) -> None:
        if self.deadline is None and not self.fired:
            return  # nothing armed (most searches: 0 and 1 ply arm nothing): no lock taken
        with self.cv:
            self.deadline = None
            self.fired = False

    def interrupt(self) -> None:
        """Stop the search now (it answers with what it has completed)."""
        with self.cv:
            self.interrupted = True
        self.arm(0.0)

    def close(self) -> None:
        """End the thread (the searcher is retired: doublet.search.analysis.searcher)."""
        with self.cv:
            self.closed = True
            self.deadline = None
            self.cv.notify()

    def _run(self) -> None:
        with self.cv:
            while not self.closed:
                if self.deadline is None or self.deadline == float("inf"):
                    self.cv.wait()  # disarmed, or armed for an interrupt only
                    continue
                left = self.deadline - time.perf_counter()
                if left > 0:
                    self.cv.wait(left)
                    continue
                s = self._s()
                if s is None:  # the searcher is gone: nothing to stop
                    return
                self.fired = True
                s.stats[1] = 1
                if s.stats[0] < 2:
                    s.stats[0] = 2
                del s
                self.cv.wait(STOP_REPEAT)


_WATCHDOGS: weakref.WeakKeyDictionary[Searcher, Watchdog] = weakref.WeakKeyDictionary()


def watchdog(s: Searcher) -> Watchdog:
    """The Searcher's watchdog (one each, made on first use)."""
    dog = _WATCHDOGS.get(s)
    if dog is None:
        dog = _WATCHDOGS[s] = Watchdog(s)
    return dog


def retire(s: Searcher) -> None:
    """Forget the searcher's watchdog and end its thread (the searcher leaves the
    cache of doublet.search.analysis; a search holding it may still stop it)."""
    dog = _WATCHDOGS.pop(s, None)
    if dog is not None:
        dog.close()


def interrupt_all() -> None:
    """Stop every search that a watchdog watches, now, from any thread (a signal that
    ends doublet engine: the search in progress answers no more). Searches of 2 ply or
    more are watched (deepen arms a watchdog); shallower ones end within milliseconds."""
    for dog in list(_WATCHDOGS.values()):
        dog.interrupt()


def stopping(s: Searcher) -> bool:
    """Whether the Searcher's watchdog has fired (the cubeful search, which runs in Python
    between its kernels, asks at every node)."""
    dog = _WATCHDOGS.get(s)
    return dog is not None and dog.fired
