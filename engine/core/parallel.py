"""Where independent tasks run: in this process, on local worker processes, or as Ray
tasks on a cluster. Rollouts (doublet.search.rollout) and the training data of
doublet.training.distill hand their chunks of work to one of these.

    with executor(workers=2) as ex:              # or executor(ray="auto"), ray="local"
        job = ex.shared(big_argument)            # sent once (Ray: the object store)
        for index, result in ex.map(fn, [(job, 0, 36), (job, 36, 72)]):
            ...                                  # as they finish, with the task's index

A task is ``fn(*args)`` with a module-level ``fn`` (pickled by reference: every worker
imports it) and picklable arguments; its result depends on its arguments alone, so the
numbers are the same whatever runs them and in whatever order (callers put results
back in task order). ``workers=1`` runs the tasks here, one after the other. Local
workers are ``spawn``-started (no fork of a process holding threads) and ignore SIGINT:
Ctrl-C reaches the caller, which stops them (``close``). Ray is an optional extra
(``pip install 'doublet[ray]'``); ``ray="local"`` starts a private Ray instance on this
machine with ``workers`` CPUs, any other address joins an existing cluster
(``ray.init(address=...)``, ``"auto"`` for the one this machine belongs to), whose
nodes need Doublet installed.
"""

from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from doublet.core.errors import DoubletError, clipped

# The most local processes (or a private Ray instance's CPUs) the front ends (doublet
# rollout, analyse --rollout, review, the engine protocol) start: a mistyped count is
# refused rather than starting thousands of processes. The training scripts, which own
# their machine, are not bound by it.
MAX_WORKERS = 64


def _quiet(parent: int | None = None) -> None:
    """A local worker leaves Ctrl-C to its caller, and ends when its caller is gone (a
    kill -9 of the caller left its workers waiting for tasks forever): a thread looks at
    the parent's pid every second."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is None:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="doublet-parent-watch", daemon=True).start()


class Executor:
    """Runs tasks in this process, one after the other (the base of the others)."""

    workers = 1
    where = "this process"
    closed = False

    def shared(self, obj: Any) -> Any:
        """A handle for an argument many tasks share (here: the object itself)."""
        return obj

    def map(self, fn: Callable[..., Any], tasks: Iterable[tuple[Any, ...]]
            ) -> Generator[tuple[int, Any], None, None]:  # fmt: skip
        """(index, fn(*task)) for each task (an iterable, taken as needed), as each finishes."""
        for i, args in enumerate(tasks):
            yield i, fn(*args)

    def close(self) -> None:
        """Stop: tasks not yet started are dropped, workers ended."""
        self.closed = True

    def abandon(self, grace: float = 0.0) -> None:
        """A caller stopped taking the results of its map early (a time budget, a
        stopping rule): tasks still running are waited for at most `grace` seconds.
        Here none run."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalExecutor(Executor):
    """`workers` spawn-started processes on this machine."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.where = f"{workers} local processes"
        self._pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"),
                                         initializer=_quiet,
                                         initargs=(os.getpid(),))  # fmt: skip

    @property
    def started(self) -> bool:
        """Whether its processes are running (they start with the first task)."""
        return bool(getattr(self._pool, "_processes", None))

    def map(self, fn: Callable[..., Any], tasks: Iterable[tuple[Any, ...]]
            ) -> Generator[tuple[int, Any], None, None]:  # fmt: skip
        # At most two tasks a worker in flight, so that a caller that stops early (a
        # stopping rule, Ctrl-C) leaves little work behind.
        pending: dict[Future[Any], int] = {}
        self._inflight = pending
        todo = iter(enumerate(tasks))
        for i, args in todo:
            pending[self._pool.submit(fn, *args)] = i
            if len(pending) >= 2 * self.workers:
                break
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    i = pending.pop(f)
                    for j, args in todo:
                        pending[self._pool.submit(fn, *args)] = j
                        break
                    yield i, f.result()
        finally:  # a caller that stops early: the tasks not started are dropped
            for f in pending:
                f.cancel()

    def abandon(self, grace: float = 0.0) -> None:
        """Tasks of the last map still running after its caller stopped early would hold
        the workers for the next map (at 1 ply a block of trials takes seconds): those
        that end within `grace` seconds are let end (short tasks: new workers would take
        longer to start), else the workers are ended (close); a shared executor starts
        new ones when next used."""
        running = [f for f in getattr(self, "_inflight", {}) if not f.done()]
        if running and grace > 0:
            running = list(wait(running, timeout=grace).not_done)
        if running:
            self.close()

    def close(self) -> None:
        self.closed = True
        processes = list((getattr(self._pool, "_processes", None) or {}).values())  # twice: none
        manager = getattr(self._pool, "_executor_manager_thread", None)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:  # a task still running is not waited for
            if p.is_alive():
                p.terminate()
        for p in processes:
            p.join(timeout=10)
        # The pool's thread closes its wake-up pipe as it ends: left running, it raced the
        # interpreter's exit hook, which writes to that pipe (a traceback, "Bad file
        # descriptor", after doublet engine's SIGTERM during a rollout). It ends here.
        if manager is not None and manager is not threading.current_thread():
            manager.join(timeout=10)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise DoubletError("Ray is not installed: pip install 'doublet[ray]'") from None
    return ray


_RAY_AT: list[str] = []  # the address this module started or joined Ray at, while it runs
RAY_CONNECT_SECONDS = 5.0  # how long a cluster's address may take to answer a connection


def _reachable(address: str) -> None:
    """DoubletError at once when `address` ("host:port" or "ray://host:port") answers no
    TCP connection: ray.init would retry it for minutes. "auto" is Ray's own business."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if address == "auto" or not sep or not port.isdigit():
        return  # not host:port: ray.init says what it makes of it
    try:
        # The name is looked up in a thread of its own: the lookup takes no timeout, and a
        # resolver that does not answer held ray's address for as long as it liked.
        found: list[Any] = []
        lookup = threading.Thread(target=lambda: found.append(_resolve(host.strip("[]"), port)),
                                  name="doublet-ray-lookup", daemon=True)  # fmt: skip
        lookup.start()
        lookup.join(RAY_CONNECT_SECONDS)
        if not found:
            raise OSError(0, f"the name {clipped(host)} was not resolved within "
                             f"{RAY_CONNECT_SECONDS:g} s")  # fmt: skip
        if isinstance(found[0], BaseException):
            raise found[0]
        socket.create_connection(found[0], RAY_CONNECT_SECONDS).close()
    except (OSError, ValueError, OverflowError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e) or type(e).__name__
        raise DoubletError(
            f"no Ray cluster to join at {clipped(address)} ('local' starts one "
            f"on this machine): nothing answers there ({why})"
        ) from None


def _resolve(host: str, port: str) -> Any:
    """(address, port) of `host`'s first address (socket.getaddrinfo), or the error."""
    import socket

    try:
        return socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0][4][:2]
    except (OSError, ValueError, OverflowError, UnicodeError) as e:
        return e


class RayExecutor(Executor):
    """Ray tasks: on a private local instance (address "local", `workers` CPUs) or on the
    cluster at `address` ("auto": the one this machine belongs to)."""

    def __init__(self, address: str, workers: int = 2) -> None:
        ray = _ray()
        self._ray = ray
        self._started = not ray.is_initialized()
        if not self._started and _RAY_AT and _RAY_AT[0] != address:
            raise DoubletError(f"this process is on Ray at {_RAY_AT[0]!r} already and "
                               f"cannot also join {address!r}: one Ray a process (start "
                               f"another doublet for {address!r})")  # fmt: skip
        if self._started:
            if address == "local":
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            else:
                _reachable(address)  # before ray.init, which retries a dead address for minutes
                try:
                    ray.init(address=address, log_to_driver=False)
                except (ConnectionError, ValueError, RuntimeError, TimeoutError) as e:
                    why = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
                    raise DoubletError(f"no Ray cluster to join at {clipped(address)} ('local' "
                                       f"starts one on this machine): {why}") from None  # fmt: skip
            _RAY_AT[:] = [address]
        self.workers = max(1, int(ray.cluster_resources().get("CPU", workers)))
        self.where = f"Ray ({address}, {self.workers} CPUs)"
        self._call = ray.remote(_call)
        self._refs: list[Any] = []

    def shared(self, obj: Any) -> Any:
        return self._ray.put(obj)

    def map(self, fn: Callable[..., Any], tasks: Iterable[tuple[Any, ...]]
            ) -> Generator[tuple[int, Any], None, None]:  # fmt: skip
        ray = self._ray
        index: dict[Any, int] = {}
        todo = iter(enumerate(tasks))

        def submit() -> bool:
            for i, args in todo:
                index[self._call.remote(fn, *args)] = i
                return True
            return False

        while len(index) < 2 * self.workers and submit():
            pass
        self._refs = list(index)
        try:
            while index:
                done, _ = ray.wait(list(index), num_returns=1)
                i = index.pop(done[0])
                submit()
                self._refs = list(index)
                yield i, ray.get(done[0])
        finally:
            for ref in index:
                ray.cancel(ref)

    def close(self) -> None:
        self.closed = True
        for ref in self._refs:
            self._ray.cancel(ref, force=True)
        self._refs = []
        if self._started:
            self._ray.shutdown()
            _RAY_AT.clear()


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """A Ray task: fn(*args) (Ray has already fetched the shared arguments)."""
    return fn(*args)


def _check_ray(ray: str | None) -> None:
    """An empty Ray address ran on local processes without a word: refused."""
    if ray is not None and not ray.strip():
        raise DoubletError("a Ray address is 'local' (a private instance on this machine), "
                           "'auto' (the cluster this machine is in) or host:port, got "
                           f"{ray!r}")  # fmt: skip


def _check_workers(workers: int) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise DoubletError(f"workers must be 1 or more, got {workers!r}")


def executor(workers: int = 2, ray: str | None = None) -> Executor:
    """Where tasks run: Ray at the address `ray` (see the module), else `workers` local
    processes (1: this process)."""
    _check_workers(workers)
    _check_ray(ray)
    if ray:
        return RayExecutor(ray, workers)
    return Executor() if workers == 1 else LocalExecutor(workers)


_SHARED: dict[tuple[int, str | None], Executor] = {}  # one at most


@atexit.register
def close_shared() -> None:
    """Close the shared executor (its workers ended): at exit, or when a front end that
    kept one (doublet engine) ends."""
    for ex in _SHARED.values():
        ex.close()
    _SHARED.clear()


def shared_executor(workers: int = 2, ray: str | None = None) -> Executor:
    """executor(workers, ray), kept for the life of the process (a front end that runs
    many rollouts, such as the engine protocol, starts its workers once) and closed at
    exit; a closed one (after Ctrl-C) is started again. One is kept at most: asked for
    another (a pool of another size, Ray), the one kept is closed first (an engine
    asked for 2, 3, then 4 workers kept 9 processes); one worker, this process, needs
    none and leaves it be."""
    _check_workers(workers)
    _check_ray(ray)
    if workers == 1 and not ray:
        return Executor()
    key = (workers if ray in (None, "local") else 0, ray)  # a cluster's CPUs are its own
    ex = _SHARED.get(key)
    if ex is None or ex.closed:
        close_shared()
        ex = _SHARED[key] = executor(workers, ray)
    return ex


__all__ = ["MAX_WORKERS", "Executor", "LocalExecutor", "RayExecutor", "close_shared", "executor",
           "shared_executor"]  # fmt: skip
