"""The scale figure: heartbeat throughput with many sessions in the database against the same with few.

Run by scripts/bench-scale, which builds the release `tessera` and installs wrk. This file makes two
databases of the chosen backend, each with one project: "small" holds 1,000 sessions, "big" holds
--sessions (1,000,000 by default). Both are filled straight through SQL in bulk (SQLite: one
transaction of prepared inserts; PostgreSQL: COPY through psql) with valid rows, the same ones
`POST /v1/sessions/anonymous` writes: an anonymous profile, its installation (SHA-256 of a random
installation secret) and a live anonymous session whose token `st_…` is generated here and stored as
its SHA-256 only. A random sample of --sample (1,000) tokens of each database is kept.

Then one `tessera serve` per database runs, and wrk drives the heartbeat
(`POST /v1/sessions/authenticate`, no body, Bearer st_…) over each sample in turn, --rounds times,
alternating which goes first; the table shows every round, the medians and big ÷ small.

Target: the big database's median heartbeat requests/s within 20 % of the small one's (ratio ≥ 0.80).

--realistic is the heartbeat real devices bring (see bench.py): small holds 100,000 sessions and the
heartbeat spreads over every session of each database (1,000,000 in big), so no session comes back
within a second and every answer is a freshly signed session JWT; with the default sample of 1,000
most answers reuse a JWT signed in the same second. (--sample 0 alone: every session of each database.)

Memory: the resident set (VmRSS) of each `tessera serve` is printed when it is ready and after its
last heartbeat round, split into the process's own memory (RssAnon) and file pages (RssFile):
nothing the server keeps may grow with the sessions it has seen (the session JWT cache is bounded).
SQLite reads the database through a memory map, so the pages a heartbeat touched are counted in
RssFile: the kernel's page cache of the file, shared, dropped under memory pressure, not ours.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the helpers of the load benchmark: wrk, servers, figures)
from bench import harness  # noqa: E402  (Server/Tests/harness: projects, the PostgreSQL cluster)
from fill import fill_postgres, fill_sqlite, psql  # noqa: E402  (valid sessions in bulk)

HERE = bench.HERE


@dataclass
class Database:
    label: str
    sessions: int
    url: str
    schema: str | None = None
    tokens: list[str] = field(default_factory=list)
    port: int = 0
    process: subprocess.Popen | None = None
    heartbeat: Path | None = None
    results: list[dict] = field(default_factory=list)
    size: str = ""
    rss_ready: int = 0
    own_ready: int = 0
    sent: int = 0  # heartbeats sent so far (warm-ups included): where the next run starts in the file


def human_bytes(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return str(count)


def check_heartbeat(port: int, token: str) -> None:
    reply = harness.call(port, "POST", "/v1/sessions/authenticate", token)
    if reply.status != 200:
        raise SystemExit(f"bench-scale: a generated session's heartbeat answered {reply.status}: {reply.body}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", type=Path, required=True, help="the release `tessera` binary")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--database-url", default=None,
                        help="an existing postgres://… database (implies --database postgres); the run creates two "
                             "schemas of its own in it and leaves them there")
    parser.add_argument("--sessions", type=int, default=1_000_000, help="sessions in the big database")
    parser.add_argument("--small", type=int, default=1_000, help="sessions in the small database")
    parser.add_argument("--sample", type=int, default=1_000,
                        help="sessions the heartbeat spreads over, in each (0: every session of each database)")
    parser.add_argument("--realistic", action="store_true",
                        help="small holds 100,000 sessions and the heartbeat spreads over every session of each "
                             "database (a fresh JWT per answer)")
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up before each measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each database, alternating")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (databases, logs)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    arguments = parser.parse_args()
    if arguments.database_url:
        if not arguments.database_url.startswith(("postgres://", "postgresql://")):
            parser.error("--database-url must be a postgres://… URL")
        arguments.database = "postgres"
    if arguments.realistic:
        arguments.small = max(arguments.small, 100_000)
        arguments.sample = 0
    if arguments.sample > min(arguments.small, arguments.sessions):
        parser.error("--sample must not exceed --small or --sessions")

    work = Path(tempfile.mkdtemp(prefix="tessera-scale-"))
    environment = bench.master_key_environment(work)
    cluster = None
    if arguments.database == "postgres" and not arguments.database_url:
        cluster = harness.PostgresCluster(Path(tempfile.gettempdir()) / f"tessera-scale-pg-{os.getpid()}", "bench-scale")
    databases: list[Database] = []
    try:
        if arguments.database == "postgres":
            base = bench.start_cluster(cluster) if cluster is not None else arguments.database_url
            suffix = "" if cluster is not None else "_" + uuid.uuid4().hex[:8]
            for label, count in (("small", arguments.small), ("big", arguments.sessions)):
                schema = f"scale_{label}{suffix}"
                databases.append(Database(label, count, harness.with_query(base, f"schema={schema}"), schema))
            backend = (f"PostgreSQL {bench.postgres_version(base)} "
                       f"({'throwaway cluster, fsync on' if cluster else 'given URL'}), one schema each")
        else:
            for label, count in (("small", arguments.small), ("big", arguments.sessions)):
                databases.append(Database(label, count, f"sqlite:{work / (label + '.sqlite')}"))
            backend = "SQLite, one file each"

        for database in databases:
            project = harness.create_project(arguments.tessera, database.url, "Benchmark", environment, what="bench-scale")
            sample = set(random.sample(range(database.sessions), arguments.sample)) if arguments.sample else None
            print(f"› filling {database.label}: {database.sessions:,} sessions", file=sys.stderr)
            started = time.monotonic()
            if arguments.database == "postgres":
                database.tokens = fill_postgres(
                    database.url, database.schema, project.project_id, database.sessions, sample)
                database.size = human_bytes(int(psql(
                    database.url,
                    f"SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                    f"ON n.oid = c.relnamespace WHERE n.nspname = '{database.schema}' AND c.relkind = 'r'")))
            else:
                path = Path(database.url.removeprefix("sqlite:"))
                database.tokens = fill_sqlite(path, project.project_id, database.sessions, sample)
                database.size = human_bytes(path.stat().st_size)
            elapsed = time.monotonic() - started
            print(f"  {database.sessions:,} sessions in {elapsed:.1f} s ({database.sessions / elapsed:,.0f}/s), "
                  f"{database.size}", file=sys.stderr)
            random.shuffle(database.tokens)
            database.heartbeat = work / f"heartbeat-{database.label}.txt"
            database.heartbeat.write_text("".join(f"{token}\t\n" for token in database.tokens))

        for database in databases:
            database.port = harness.free_port()
            database.process = bench.serve(arguments.tessera, database.url, database.port,
                                           work / f"tessera-{database.label}.log", environment)
            harness.wait_ready(database.port, database.process, f"bench: tessera serve ({database.label})")
            check_heartbeat(database.port, database.tokens[0])
            database.rss_ready = bench.rss_kib(database.process.pid)
            database.own_ready = bench.status_kib(database.process.pid, "RssAnon")

        path = "/v1/sessions/authenticate"
        for round_index in range(arguments.rounds):
            order = databases if round_index % 2 == 0 else list(reversed(databases))
            for database in order:
                url = f"http://127.0.0.1:{database.port}{path}"
                def script_args() -> list[str]:  # each run goes on where the previous one stopped
                    return ["POST", path, str(database.heartbeat), str(arguments.threads), str(database.sent)]
                if arguments.warmup:
                    warmup = bench.run_wrk(url, HERE / "replay.lua", script_args(), arguments, arguments.warmup)
                    database.sent += warmup["requests"]
                print(f"› round {round_index + 1}: heartbeat on {database.label} ({database.sessions:,} sessions) "
                      f"for {arguments.duration} s", file=sys.stderr)
                result = bench.run_wrk(url, HERE / "replay.lua", script_args(), arguments, arguments.duration)
                database.sent += result["requests"]
                result["load"] = os.getloadavg()[0]
                database.results.append(result)
                if database.process.poll() is not None:
                    raise SystemExit(f"bench-scale: tessera serve ({database.label}) exited; see {work}")

        print()
        spread = f"{arguments.sample:,} random sessions" if arguments.sample else "every session"
        print(f"heartbeat POST {path} over {spread} of each database; wrk "
              f"{arguments.threads} thread(s), {arguments.connections} connections, {arguments.duration} s per "
              f"round, {arguments.rounds} rounds alternating; {backend} ({os.cpu_count()} CPUs)")
        print(f"{'database':<8} {'sessions':>10} {'size':>10}  {'rounds: requests/s (1-min load)':<48} "
              f"{'median/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>8} {'errors':>7}")
        failed = False
        medians = {}
        for database in databases:
            rounds = "  ".join(f"{result['rps']:,.0f} ({result['load']:.1f})" for result in database.results)
            median, p50, p99, non_2xx, errors = bench.medians(database.results)
            medians[database.label] = median
            failed = failed or bool(non_2xx or errors)
            print(f"{database.label:<8} {database.sessions:>10,} {database.size:>10}  {rounds:<48} {median:>9,.0f} "
                  f"{p50:>7.2f} {p99:>7.2f} {non_2xx:>8} {errors:>7}")
        for database in databases:
            print(f"tessera serve ({database.label}) RSS: {database.rss_ready / 1024:,.1f} MiB when ready "
                  f"(own {database.own_ready / 1024:,.1f} MiB), {bench.memory(database.process.pid)} after "
                  f"{database.sent:,} heartbeats "
                  f"({len(database.results)} round(s) and warm-ups) over {min(database.sent, len(database.tokens)):,} "
                  f"distinct sessions")
        ratio = medians["big"] / medians["small"] if medians["small"] else 0
        met = ratio >= 0.8
        print(f"big ÷ small: {ratio:.2f} (medians); target within 20 % (≥ 0.80): {'met' if met else 'MISSED'}")
        if failed:
            print(f"\nbench-scale: requests failed; see the logs in {work}", file=sys.stderr)
            arguments.keep = True
            return 1
        return 1 if arguments.strict and not met else 0
    finally:
        harness.clean_up(work, arguments.keep, "bench-scale", [database.process for database in databases], cluster)


if __name__ == "__main__":
    sys.exit(main())
