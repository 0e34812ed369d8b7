#!/usr/bin/env python3
"""Webhook delivery benchmark: how fast `tessera serve` delivers events to a local receiver, and how
long an event takes from its commit to its delivery.

It starts a receiver on 127.0.0.1 (asyncio, HTTP/1.1 keep-alive, answers 204 and records when each
`webhook-id` arrived), `tessera serve --allow-insecure-webhooks` on a fresh database (SQLite, or a
throwaway PostgreSQL cluster with --database postgres), creates a webhook for `session.created` and
`profile.created` pointing at the receiver, then:

1. **Latency under load.** `--starts` anonymous starts at `--rate` per second (default 500, i.e. 1,000
   events per second) from `--clients` threads; each start's answer
   (its acknowledgement, after the commit) is timed, and the receiver's arrival of the start's
   `session.created` gives the commit-to-delivery latency: p50, p99 and the worst.
2. **Delivery rate.** `POST /v1/admin/webhooks/{id}/replay {"after": 0}` queues every event again;
   the rate is the replayed deliveries divided by the time from the replay to the last arrival.
3. **The reference**, in the same run: the receiver alone, driven by wrk (POST, 64 connections,
   3 s), so the delivery rate can be read against what the receiver itself takes.

    python3 Server/Benchmarks/webhooks/delivery.py --tessera Server/.build-release/release/tessera
    python3 Server/Benchmarks/webhooks/delivery.py --tessera BIN --database postgres --starts 5000

Needs wrk for the reference (scripts/bench-server installs it); without wrk the reference is skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "Server" / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402

sys.path.insert(0, str(ROOT / "Server" / "Benchmarks" / "wrk"))
sys.path.insert(0, str(ROOT / "Server" / "Benchmarks" / "pgbench"))
from bench import cpu_seconds  # noqa: E402  (a process's CPU time, from /proc)
from pgbench import postgres_cpu_seconds  # noqa: E402  (the cluster's CPU time, from /proc)


class Receiver:
    """An HTTP/1.1 receiver on its own thread and event loop: records (monotonic time, webhook-id,
    body) for every POST and answers 204 at once."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[float, str, bytes]] = []
        self.connections = 0
        self.lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=1024))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self.lock:
            self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                arrived = time.monotonic()
                if lines[0].startswith("POST"):
                    with self.lock:
                        self.arrivals.append((arrived, headers.get("webhook-id", ""), body))
                writer.write(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                if headers.get("connection", "").lower() == "close":
                    await writer.drain()
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def snapshot(self) -> list[tuple[float, str, bytes]]:
        with self.lock:
            return list(self.arrivals)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


def wait_for(predicate, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def receiver_reference(port: int, seconds: int) -> float | None:
    """Requests per second the receiver alone takes from wrk (POST of an event-sized body)."""
    if shutil.which("wrk") is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        body = json.dumps({"id": "evt_reference", "type": "session.created", "data": {"session_id": "ses_x"}})
        script.write(f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\n'
                     'wrk.headers["content-type"] = "application/json"\nwrk.headers["webhook-id"] = "evt_reference"\n')
    try:
        done = subprocess.run(["wrk", "-t1", "-c64", f"-d{seconds}s", "-s", script.name, f"http://127.0.0.1:{port}/"],
                              capture_output=True, text=True, timeout=seconds + 30)
    finally:
        os.unlink(script.name)
    for line in done.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True, help="the tessera binary (a release build for figures)")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--starts", type=int, default=3000, help="anonymous starts in the latency phase")
    parser.add_argument("--clients", type=int, default=16, help="threads making the starts")
    parser.add_argument("--rate", type=float, default=500,
                        help="anonymous starts per second in the latency phase (each writes two events); 0: as fast "
                             "as the clients go")
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for every delivery")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (database, logs)")
    arguments = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="tessera-delivery-"))
    cluster = None
    processes: list[subprocess.Popen] = []
    try:
        environment = harness.clean_environment()
        key = harness.write_master_key(work / "master.key")
        environment["TESSERA_MASTER_KEY_FILE"] = key
        if arguments.database == "postgres":
            cluster = harness.PostgresCluster(Path(tempfile.gettempdir()) / f"tessera-delivery-pg-{os.getpid()}", "delivery")
            database = cluster.start()
        else:
            database = f"sqlite:{work / 'tessera.sqlite'}"
        project = harness.create_project(arguments.tessera, database, "Delivery", environment, what="delivery")
        node = harness.start_node(arguments.tessera, database, "--allow-insecure-webhooks", log=work / "tessera.log",
                                  environment=environment)
        server, port = node.process, node.port
        processes.append(server)
        harness.lift_rate_limits(port, project.secret_key)
        receiver = Receiver()

        created = harness.call(port, "POST", "/v1/admin/webhooks", project.secret_key, {
            "url": f"http://127.0.0.1:{receiver.port}/hook", "types": ["session.created", "profile.created"]})
        if created.status != 201:
            raise SystemExit(f"delivery: POST /v1/admin/webhooks answered {created.status}: {str(created.body)[:300]}")
        webhook_id = created.body["webhook"]["id"]

        # 1. Latency under load: every start's acknowledgement time, then its session.created's arrival.
        acknowledged: dict[str, float] = {}
        lock = threading.Lock()
        local = threading.local()

        def start(index: int) -> None:
            if arguments.rate > 0:
                delay = began + index / arguments.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            client = getattr(local, "client", None)
            if client is None:
                client = local.client = harness.Client(port)
            reply = client.call("POST", "/v1/sessions/anonymous", project.publishable_key, harness.new_installation())
            done = time.monotonic()
            if reply.status in (200, 201):
                with lock:
                    acknowledged[reply.body["session"]["id"]] = done

        began = time.monotonic()
        with ThreadPoolExecutor(arguments.clients) as pool:
            list(pool.map(start, range(arguments.starts)))
        load_seconds = time.monotonic() - began
        expected = 2 * len(acknowledged)

        def delivered() -> dict[str, tuple[float, dict]]:
            first: dict[str, tuple[float, dict]] = {}
            for arrived, event_id, body in receiver.snapshot():
                if event_id not in first:
                    first[event_id] = (arrived, json.loads(body))
            return first

        if not wait_for(lambda: len(delivered()) >= expected, arguments.timeout):
            print(f"delivery: only {len(delivered())} of {expected} events delivered within {arguments.timeout:.0f} s",
                  file=sys.stderr)
        arrivals = delivered()
        latencies = [arrived - acknowledged[event["data"]["session_id"]]
                     for arrived, event in arrivals.values()
                     if event.get("type") == "session.created" and event["data"]["session_id"] in acknowledged]
        load_rate = len(acknowledged) / load_seconds

        # 2. Delivery rate from a backlog: replay everything.
        before = len(receiver.snapshot())
        connections_before = receiver.connections
        cpu_before = cpu_seconds([server.pid])
        data = cluster.directory / "data" if cluster is not None and cluster.directory else None
        pg_before = postgres_cpu_seconds(data) if data else 0.0
        replay_started = time.monotonic()
        replay = harness.call(port, "POST", f"/v1/admin/webhooks/{webhook_id}/replay", project.secret_key, {"after": 0})
        if replay.status != 202:
            raise SystemExit(f"delivery: replay answered {replay.status}: {str(replay.body)[:300]}")
        wait_for(lambda: len(receiver.snapshot()) - before >= expected, arguments.timeout)
        replayed = receiver.snapshot()[before:]
        # CPU per delivered event while the backlog drains (the capacity model's figure, docs/SCALING.md).
        cpu_us = (cpu_seconds([server.pid]) - cpu_before) * 1e6 / max(1, len(replayed))
        pg_us = (postgres_cpu_seconds(data) - pg_before) * 1e6 / max(1, len(replayed)) if data else None
        replay_seconds = (replayed[-1][0] - replay_started) if replayed else float("nan")
        replay_connections = receiver.connections - connections_before

        # 3. The receiver alone, for reference.
        reference = receiver_reference(receiver.port, 3)

        print(f"\nwebhook delivery, {arguments.database}, {os.cpu_count()} CPUs, receiver on loopback")
        print(f"  load: {len(acknowledged):,} anonymous starts in {load_seconds:.1f} s ({load_rate:,.0f}/s, "
              f"{arguments.clients} clients), {expected:,} events to deliver")
        print(f"  delivered during the load: {len(arrivals):,} of {expected:,} distinct events")
        if latencies:
            print(f"  commit to delivery (acknowledgement to arrival of session.created): "
                  f"p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
                  f"max {max(latencies) * 1000:.1f} ms, mean {statistics.fmean(latencies) * 1000:.1f} ms")
        print(f"  replay of {expected:,} events: {len(replayed):,} delivered in {replay_seconds:.2f} s = "
              f"{len(replayed) / replay_seconds:,.0f} events/s")
        print(f"  connections the receiver accepted during the replay: {replay_connections:,}")
        print(f"  CPU per delivered event during the replay: tessera serve {cpu_us:.1f} µs"
              + (f", PostgreSQL {pg_us:.1f} µs" if pg_us is not None else ""))
        if reference is not None:
            print(f"  reference, the receiver alone (wrk, 64 connections, 3 s): {reference:,.0f} requests/s; "
                  f"delivery at {len(replayed) / replay_seconds / reference:.0%} of it")
        else:
            print("  reference skipped: wrk is not installed")
        complete = len(arrivals) >= expected and len(replayed) >= expected
        return 0 if complete else 1
    finally:
        harness.clean_up(work, arguments.keep, "delivery", processes, cluster)


if __name__ == "__main__":
    sys.exit(main())
