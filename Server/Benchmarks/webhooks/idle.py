#!/usr/bin/env python3
"""Idle cost of `tessera serve`: CPU time and wake-ups of a server with nothing to do.

It starts `tessera serve` on a fresh database (SQLite, or a throwaway PostgreSQL cluster with
--database postgres), creates a project and a webhook (so the dispatcher has an endpoint to look
after), lets it settle for --settle seconds, then reads over --seconds seconds (default 60):

- the server's CPU time, utime + stime from /proc/PID/stat;
- its wake-ups: the voluntary context switches of all its threads (/proc/PID/task/*/status), each
  one a thread that went to sleep after having been woken;
- with --database postgres, the cluster's CPU time too (the queries an idle server makes).

    python3 Server/Benchmarks/webhooks/idle.py --tessera Server/.build/debug/tessera [--database postgres]

Several binaries given with --tessera A --tessera B are measured in turn, A B A B… (--rounds), so
a shared machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "Server" / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402

sys.path.insert(0, str(ROOT / "Server" / "Benchmarks" / "wrk"))
sys.path.insert(0, str(ROOT / "Server" / "Benchmarks" / "pgbench"))
from bench import cpu_seconds  # noqa: E402
from pgbench import postgres_cpu_seconds  # noqa: E402


def wakeups(pid: int) -> int:
    """Voluntary context switches of every thread of the process so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def measure(tessera: str, database_kind: str, seconds: float, settle: float) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="tessera-idle-"))
    cluster = None
    processes = []
    try:
        environment = harness.clean_environment()
        environment["TESSERA_MASTER_KEY_FILE"] = harness.write_master_key(work / "master.key")
        if database_kind == "postgres":
            cluster = harness.PostgresCluster(Path(tempfile.gettempdir()) / f"tessera-idle-pg-{os.getpid()}", "idle")
            database = cluster.start()
        else:
            database = f"sqlite:{work / 'tessera.sqlite'}"
        project = harness.create_project(tessera, database, "Idle", environment, what="idle")
        port = harness.free_port()
        log = open(work / "tessera.log", "w")
        server = harness.serve(tessera, database, port, "--allow-insecure-webhooks", log=log, environment=environment)
        processes.append(server)
        harness.wait_ready(port, server)
        created = harness.call(port, "POST", "/v1/admin/webhooks", project.secret_key,
                               {"url": "http://127.0.0.1:9/hook", "types": ["session.created"]})
        if created.status != 201:
            raise SystemExit(f"idle: POST /v1/admin/webhooks answered {created.status}")
        time.sleep(settle)
        data = cluster.directory / "data" if cluster is not None and cluster.directory else None
        cpu, woken = cpu_seconds([server.pid]), wakeups(server.pid)
        pg = postgres_cpu_seconds(data) if data else 0.0
        time.sleep(seconds)
        result = {
            "cpu_ms": (cpu_seconds([server.pid]) - cpu) * 1000,
            "wakeups": wakeups(server.pid) - woken,
        }
        if data:
            result["pg_cpu_ms"] = (postgres_cpu_seconds(data) - pg) * 1000
        return result
    finally:
        harness.clean_up(work, False, "idle", processes, cluster)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", action="append", required=True, help="a tessera binary (repeat to alternate)")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--seconds", type=float, default=60, help="the idle window measured")
    parser.add_argument("--settle", type=float, default=5, help="seconds after start-up before measuring")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every binary, alternated")
    arguments = parser.parse_args()
    print(f"idle tessera serve, {arguments.database}, {arguments.seconds:.0f} s, load average {harness.load_average()}")
    for round in range(arguments.rounds):
        for binary in arguments.tessera:
            result = measure(binary, arguments.database, arguments.seconds, arguments.settle)
            line = (f"  round {round + 1} {binary}: CPU {result['cpu_ms']:.0f} ms "
                    f"({result['cpu_ms'] / arguments.seconds:.2f} ms/s), {result['wakeups']:.0f} wake-ups "
                    f"({result['wakeups'] / arguments.seconds:.1f}/s)")
            if "pg_cpu_ms" in result:
                line += f", PostgreSQL CPU {result['pg_cpu_ms']:.0f} ms"
            print(line + f", load average {harness.load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
