"""A load test of the HTTP API for programs (`doublet serve`, POST /api/best ...) on
127.0.0.1, bounded in requests and in time.

    python benchmarks/http_load.py [--requests 2000] [--clients 4] [--seconds 120]
                                   [--ply 0 1 2] [--port 0] [--seed 1]

Starts `doublet serve` (the installed package, a fresh data folder) on a free port,
waits for it, then for each depth sends --requests `best` requests (the decisions of
tests/data/gnubg_refset.jsonl, a seeded sample, cycled) from --clients threads, each
with its own keep-alive connection, stopping early after --seconds; then the same count
of a mix (best, analyse with a limit of 5, eval, cube, moves in turn) at 1 ply. Every
reply is checked (status 200, a play or the document's keys). Prints per run the
requests answered, the errors, the throughput (requests a second, wall clock) and the
latency from sending a request to reading its reply: p50, p99 and the largest. Beside
it, the same `best` decisions in-process (doublet.apps.protocol.Session.answer, one
thread) as the baseline: what HTTP and the server add. The server searches one request
at a time (one engine lock), so clients beyond one measure queueing, not speed-up.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doublet.apps.protocol import Session  # noqa: E402
from doublet.apps.serve import HTTP_BOUNDS  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, data: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "doublet", "serve", "--port", str(port),
                             "--data", data], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/api/version")
            if conn.getresponse().status == 200:
                conn.close()
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("doublet serve did not answer within 300 s")


def check(path: str, doc: dict[str, Any]) -> bool:
    want = {"best": "play", "analyse": "plays", "eval": "evaluation", "cube": "action",
            "moves": "plays"}[path]  # fmt: skip
    return want in doc


def load(port: int, jobs: list[tuple[str, dict[str, Any]]], clients: int,
         seconds: float) -> dict[str, Any]:  # fmt: skip
    """Send the jobs from `clients` threads; their latencies, errors and wall time."""
    lock = threading.Lock()
    nxt = iter(range(len(jobs)))
    latencies: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < stop:
            with lock:
                i = next(nxt, None)
            if i is None:
                break
            path, body = jobs[i]
            raw = json.dumps(body).encode()
            t = time.perf_counter()
            try:
                conn.request("POST", f"/api/{path}", raw, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                dt = time.perf_counter() - t
                ok = resp.status == 200 and check(path, json.loads(data))
            except (OSError, http.client.HTTPException, ValueError) as e:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                ok, dt, data = False, time.perf_counter() - t, str(e).encode()
            with lock:
                latencies.append(dt)
                if not ok:
                    errors.append(f"{path}: {data[:200]!r}")
        conn.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"latencies": latencies, "errors": errors, "wall": time.perf_counter() - start}


def row(name: str, r: dict[str, Any]) -> str:
    ms = np.array(r["latencies"]) * 1000
    n = len(ms)
    return (f"{name:<30}{n:>8}{len(r['errors']):>7}{n / r['wall']:>10.1f}"
            f"{np.median(ms):>10.2f}{np.percentile(ms, 99):>10.2f}{ms.max():>10.2f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="per run (default 2000)")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=120.0, help="per run, at most")
    ap.add_argument("--ply", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--port", type=int, default=0, help="default: a free one")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    with open(ROOT / "tests" / "data" / "gnubg_refset.jsonl") as f:
        cases = [json.loads(line) for line in f]
    cases = [c for c in cases if c["n_legal"] > 1]
    rng = np.random.default_rng(args.seed)
    cases = [cases[i] for i in rng.permutation(len(cases))]
    port = args.port or free_port()
    data = tempfile.mkdtemp(prefix="doublet-load-")
    server = start_server(port, data)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}; "
          f"{args.clients} clients on 127.0.0.1; command: {' '.join(sys.argv)}")  # fmt: skip
    print(f"{'':<30}{'answered':>8}{'errors':>7}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}"
          f"{'max ms':>10}")  # fmt: skip
    failures = []
    try:
        for ply in args.ply:
            picked = (cases * (args.requests // len(cases) + 1))[: args.requests]
            jobs = [("best", {"position": c["pid"], "dice": c["dice"], "ply": ply})
                    for c in picked]  # fmt: skip
            load(port, jobs[:20], 1, 60)  # warm: the server's kernels and caches
            r = load(port, jobs, args.clients, args.seconds)
            print(row(f"best, {ply} ply, HTTP", r), flush=True)
            failures += r["errors"]
            session = Session(HTTP_BOUNDS)
            times = []
            t0 = time.perf_counter()
            for _, body in jobs[: len(r["latencies"])]:
                t = time.perf_counter()
                session.answer({"cmd": "best", **body})
                times.append(time.perf_counter() - t)
            base = {"latencies": times, "errors": [], "wall": time.perf_counter() - t0}
            print(row(f"best, {ply} ply, in-process", base), flush=True)
        kinds = ["best", "analyse", "eval", "cube", "moves"]
        jobs = []
        for i in range(args.requests):
            c = cases[i % len(cases)]
            kind = kinds[i % len(kinds)]
            body: dict[str, Any] = {"position": c["pid"]}
            if kind in ("best", "analyse", "moves"):
                body["dice"] = c["dice"]
            if kind != "moves":
                body["ply"] = 1
            if kind == "analyse":
                body["limit"] = 5
            jobs.append((kind, body))
        r = load(port, jobs, args.clients, args.seconds)
        print(row("mix of the five, 1 ply, HTTP", r), flush=True)
        failures += r["errors"]
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(data, ignore_errors=True)  # the server's saved games of this run
    if failures:
        print(f"{len(failures)} failed requests, e.g. {failures[:3]}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
