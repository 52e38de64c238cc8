"""SIGTERM as a stop: ``with sigterm_interrupts(): ...`` makes SIGTERM (``timeout``, a job
scheduler, ``kill``) raise Terminated, a KeyboardInterrupt, so that long work stops as on
Ctrl-C (a search answers with what it has done, a rollout with its trials, training
keeps its checkpoint) and says so, rather than dying without a word. Outside the main
thread it does nothing (Python runs signal handlers there alone)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be; exit status 143."""

    status = 128 + signal.SIGTERM


def interrupt_status(e: BaseException) -> int:
    """The exit status of a command stopped by `e`: 143 for SIGTERM, 130 for Ctrl-C."""
    return Terminated.status if isinstance(e, Terminated) else 128 + signal.SIGINT


def stop_word(e: BaseException) -> str:
    """How a stop by `e` is said: "terminated" (SIGTERM) or "interrupted" (Ctrl-C)."""
    return "terminated" if isinstance(e, Terminated) else "interrupted"


def stop_signal(e: BaseException) -> str:
    """The stop's name as the user sent it: "SIGTERM" or "Ctrl-C"."""
    return "SIGTERM" if isinstance(e, Terminated) else "Ctrl-C"


def _raise(signum: int, frame: Any) -> None:
    raise Terminated


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextlib.contextmanager
def signal_watcher(act: Callable[[int], None]) -> Iterator[None]:
    """Calls act(signum) from a thread of its own as soon as a signal with a Python
    handler arrives. Python runs its handlers in the main thread between bytecodes, so a
    main thread inside a long kernel (a search, which holds no GIL) sees a signal only
    when the kernel returns; act can stop the kernel meanwhile. It uses the signal
    module's wakeup fd (the main thread's alone: elsewhere, and where the fd is taken,
    nothing is watched)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        before = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:  # pragma: no cover - the main thread was checked above
        os.close(r)
        os.close(w)
        yield
        return

    def run() -> None:
        while True:
            try:
                data = os.read(r, 64)
            except OSError:
                return
            if not data:  # the write end closed: done
                return
            for signum in data:
                for _ in range(3):  # (act may meet a dict another thread is changing)
                    try:
                        act(signum)
                        break
                    except Exception:  # the watcher must outlive one failure
                        continue

    thread = threading.Thread(target=run, name="doublet-signals", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(before)
        os.close(w)  # the thread reads the end of it and returns
        thread.join(5.0)
        if not thread.is_alive():  # (else its fd is left open, not closed under it)
            os.close(r)


__all__ = [
    "Terminated",
    "interrupt_status",
    "signal_watcher",
    "sigterm_interrupts",
    "stop_signal",
    "stop_word",
]
