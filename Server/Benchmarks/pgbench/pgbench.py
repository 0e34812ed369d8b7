"""PostgreSQL's own rate for the statements of identify and anonymous start, beside the server's.

Run by scripts/bench-pgbench, which builds the release `tessera` and installs wrk. One throwaway
cluster (scripts/postgres, fsync on), its schema migrated by `tessera projects create`, one
`tessera serve` on it (rate limits lifted). For each scenario, in the same run:

  pgbench   the scenario's transaction (identify.sql or anonymous.sql, then created_events.sql: the statements
            PostgresStore runs for a new user / a new installation, same tables, indexes and outbox
            rows), `-M extended` (each statement parsed, bound and run, as postgres-nio sends them),
            --connections clients (64, like wrk), one thread; beside it the event sequencer
            (sequencer.sql) at most 50 times a second, as `tessera serve` runs it under load
  server    wrk against `tessera serve` with the requests bench.py sends (a fresh identity token of
            a new user / a new installation per request), --connections connections

and prints both rates and server ÷ pgbench (issue 17's target: ≥ 0.70). Beside each rate: the CPU
time per transaction or request of the server process and of PostgreSQL (every process of the
cluster, backends that exited included: the postmaster's reaped children), read from /proc before
and after — figures that other load on the machine moves far less than the rates.

`heartbeat` (server only: no pgbench script) drives the heartbeat over --sessions sessions (written
in bulk) and gives PostgreSQL's CPU per session lookup.

On PostgreSQL every measurement starts after VACUUM (ANALYZE) and a CHECKPOINT (bench.py's rule).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "wrk"))
import bench  # noqa: E402  (wrk, servers, CPU time, the prepared requests)
from bench import harness  # noqa: E402

SCRIPTS = {"identify": HERE / "identify.sql", "anonymous": HERE / "anonymous.sql"}
# The `kind` of the profile and session each scenario creates, as its events write it.
KINDS = {"identify": "identified", "anonymous": "anonymous"}


def transaction_script(name: str, work: Path) -> Path:
    """The scenario's pgbench script: its statements, then the events and COMMIT both scenarios end
    with (created_events.sql), in one file in `work`."""
    script = work / f"{name}.sql"
    script.write_text(SCRIPTS[name].read_text() + (HERE / "created_events.sql").read_text())
    return script


def postgres_cpu_seconds(data: Path) -> float:
    """CPU time (user + system) of the cluster so far: the postmaster, its live children, and the
    children it has reaped (backends of closed connections), from /proc."""
    try:
        postmaster = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, parent = int(entry.name), int(fields[1])  # fields[1]: ppid (field 4 of stat(5))
        if pid == postmaster:
            ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        elif parent == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def run_pgbench(url: str, name: str, work: Path, project: str, arguments: argparse.Namespace,
                sequencer: bool) -> dict:
    """pgbench of scenario `name` (and the sequencer beside it); returns transactions/s and failures."""
    common = ["-n", "-M", "extended", "-T", str(arguments.duration), "-D", f"project={project}",
              "--no-vacuum"]
    url = harness.libpq_url(url)
    main = subprocess.Popen(
        ["pgbench", *common, "-D", f"kind={KINDS[name]}", "-c", str(arguments.pgbench_clients),
         "-j", str(arguments.threads), "-f", str(transaction_script(name, work)), url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    side = subprocess.Popen(
        ["pgbench", *common, "-c", "1", "-j", "1", "-R", "50", "-f", str(HERE / "sequencer.sql"), url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) if sequencer else None
    stdout, stderr = main.communicate(timeout=arguments.duration + 300)
    side_output = side.communicate(timeout=arguments.duration + 300) if side else ("", "")
    tps = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", stdout, re.M)
    done = re.search(r"^number of transactions actually processed: (\d+)", stdout, re.M)
    failed = re.search(r"^number of failed transactions: (\d+)", stdout, re.M)
    if main.returncode != 0 or tps is None or done is None:
        raise SystemExit(f"bench-pgbench: pgbench failed ({main.returncode}):\n{stdout}\n{stderr}")
    if side is not None and side.returncode != 0:
        raise SystemExit(f"bench-pgbench: the sequencer's pgbench failed:\n{side_output[0]}\n{side_output[1]}")
    return {"rps": float(tps.group(1)), "requests": int(done.group(1)),
            "failed": int(failed.group(1)) if failed else 0}


def with_postgres_cpu(data: Path, run) -> dict:
    """`run()`'s result with PostgreSQL's CPU time per transaction or request (`pg_us`)."""
    before = postgres_cpu_seconds(data)
    result = run()
    requests = result.get("requests") or 0
    result["pg_us"] = (postgres_cpu_seconds(data) - before) * 1e6 / requests if requests else 0.0
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", type=Path, required=True, help="the release `tessera` binary")
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement (default 10)")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (default 64)")
    parser.add_argument("--pgbench-clients", type=int, default=None,
                        help="pgbench clients (default: --connections, the same count as wrk)")
    parser.add_argument("--threads", type=int, default=1, help="wrk and pgbench threads (default 1)")
    parser.add_argument("--rounds", type=int, default=1, help="measure each scenario this many times, "
                        "alternating which of pgbench and the server goes first (default 1)")
    parser.add_argument("--scenarios", default="identify,anonymous,heartbeat",
                        help="any of identify, anonymous (each against pgbench), heartbeat (server only)")
    parser.add_argument("--sessions", type=int, default=100_000, help="sessions the heartbeat spreads over")
    parser.add_argument("--per-second", type=int, default=6000,
                        help="identity tokens and installations prepared per second of --duration")
    parser.add_argument("--no-sequencer", action="store_true",
                        help="run pgbench without the event sequencer beside it")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    arguments = parser.parse_args()
    arguments.pgbench_clients = arguments.pgbench_clients or arguments.connections
    scenarios = [name for name in arguments.scenarios.split(",") if name]
    unknown = [name for name in scenarios if name not in (*SCRIPTS, "heartbeat")]
    if unknown or arguments.rounds < 1:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}" if unknown else "--rounds must be at least 1")

    work = Path(tempfile.mkdtemp(prefix="tessera-pgbench-"))
    cluster_directory = Path(tempfile.gettempdir()) / f"tessera-pgbench-pg-{os.getpid()}"
    cluster = harness.PostgresCluster(cluster_directory, "bench-pgbench")
    data = cluster_directory / "data"
    environment = bench.master_key_environment(work)
    processes: list[subprocess.Popen] = []
    try:
        database = bench.start_cluster(cluster)
        project = harness.create_project(arguments.tessera, database, "Benchmark", environment, what="bench-pgbench")
        tokens: list[str] = []
        if "heartbeat" in scenarios:
            print(f"› writing {arguments.sessions:,} sessions in bulk", file=sys.stderr)
            tokens = bench.fill_sessions(database, project.project_id, arguments.sessions)
        port = harness.free_port()
        server = bench.serve(arguments.tessera, database, port, work / "tessera.log", environment)
        processes.append(server)
        harness.wait_ready(port, server, "bench-pgbench: tessera serve")
        lifted = harness.lift_rate_limits(port, project.secret_key)
        if lifted.status != 200:
            raise SystemExit(f"bench-pgbench: PATCH /v1/admin/project answered {lifted.status}: {lifted.body}")

        count = arguments.duration * arguments.per_second
        requests: dict[str, list[Path]] = {}
        for name in scenarios:
            for round_index in range(arguments.rounds):
                path = work / f"{name}-{round_index + 1}.txt"
                if name == "identify":
                    path.write_text("".join(bench.identify_lines(project, count)))
                elif name == "anonymous":
                    path.write_text("".join(bench.anonymous_lines(project, count)))
                else:
                    path = work / "heartbeat.txt"
                    path.write_text("".join(f"{token}\t\n" for token in tokens))
                requests.setdefault(name, []).append(path)

        load_before = harness.load_average()
        # results[name][round]: {"pgbench": …, "server": …}
        results: dict[str, list[dict[str, dict]]] = {name: [] for name in scenarios}
        for round_index in range(arguments.rounds):
            label = f" (round {round_index + 1} of {arguments.rounds})" if arguments.rounds > 1 else ""
            for name in scenarios:
                sides = ["pgbench", "server"] if round_index % 2 == 0 else ["server", "pgbench"]
                if name == "heartbeat":
                    sides = ["server"]
                measured: dict[str, dict] = {}
                for side in sides:
                    bench.settle_postgres(database)
                    if side == "pgbench":
                        print(f"› pgbench {SCRIPTS[name].name}, {arguments.pgbench_clients} clients, "
                              f"{arguments.duration} s{label}", file=sys.stderr)
                        measured[side] = with_postgres_cpu(data, lambda: run_pgbench(
                            database, name, work, project.project_id, arguments, not arguments.no_sequencer))
                    else:
                        url = f"http://127.0.0.1:{port}{bench.PATHS[name]}"
                        script_args = ["POST", bench.PATHS[name], str(requests[name][round_index]),
                                       str(arguments.threads)]
                        if name == "heartbeat" and round_index == 0:
                            bench.run_wrk(url, bench.HERE / "replay.lua", script_args, arguments, 2)
                        print(f"› tessera serve {name}, {arguments.connections} connections, "
                              f"{arguments.duration} s{label}", file=sys.stderr)
                        measured[side] = with_postgres_cpu(data, lambda: bench.measured(
                            lambda: bench.run_wrk(url, bench.HERE / "replay.lua", script_args, arguments,
                                                  arguments.duration), [server.pid]))
                        if server.poll() is not None:
                            raise SystemExit(f"bench-pgbench: tessera serve exited during {name}; see {work}")
                results[name].append(measured)
        load_after = harness.load_average()

        print()
        print(f"PostgreSQL {bench.postgres_version(database)} (throwaway cluster, fsync on; VACUUM (ANALYZE) and "
              f"CHECKPOINT before each measurement), {os.cpu_count()} CPUs, loopback, {arguments.duration} s each")
        print(f"pgbench -M extended, {arguments.pgbench_clients} clients, {arguments.threads} thread(s)"
              f"{'' if arguments.no_sequencer else ', the event sequencer beside it at ≤ 50 runs/s'}; "
              f"wrk {arguments.threads} thread(s), {arguments.connections} connections against one tessera serve "
              f"(its pool: 20 connections)")
        print(f"load average (1/5/15 min): {load_before} before, {load_after} after")
        print(f"{'scenario':<10} {'round':>5} {'pgbench tx/s':>13} {'PG µs/tx':>9} {'server req/s':>13} "
              f"{'p99 ms':>7} {'server µs':>10} {'PG µs/req':>10} {'server ÷ pgbench':>17}")
        failed = False
        for name in scenarios:
            for round_index, measured in enumerate(results[name] + ([] if len(results[name]) < 2 else [None])):
                if measured is None:  # the medians, after two or more rounds
                    runs = results[name]

                    def median(side: str, key: str) -> float | None:
                        values = [run[side][key] for run in runs if key in run.get(side, {})]
                        return statistics.median(values) if values else None

                    measured = {
                        side: {key: median(side, key) for key in ("rps", "pg_us", "cpu_us", "p99_us")}
                        for side in ("pgbench", "server") if side in runs[0]}
                    round_label = "median"
                else:
                    round_label = str(round_index + 1)
                    answered = measured.get("server", {})
                    failed = failed or bool(answered.get("non_2xx") or (answered and bench.errors_of(answered)))
                    failed = failed or bool(measured.get("pgbench", {}).get("failed"))
                pg, sv = measured.get("pgbench"), measured["server"]
                ratio = f"{sv['rps'] / pg['rps']:.2f}" if pg and pg["rps"] else "—"
                pg_rate = f"{pg['rps']:,.0f}" if pg else "—"
                pg_cpu = f"{pg['pg_us']:.1f}" if pg else "—"
                print(f"{name:<10} {round_label:>5} {pg_rate:>13} {pg_cpu:>9} "
                      f"{sv['rps']:>13,.0f} {(sv.get('p99_us') or 0) / 1000:>7.2f} {sv['cpu_us']:>10.1f} "
                      f"{sv['pg_us']:>10.1f} {ratio:>17}")
        print("target (issue 17): server ÷ pgbench ≥ 0.70 for identify and anonymous start")
        if failed:
            print(f"\nbench-pgbench: requests or transactions failed; see the logs in {work}", file=sys.stderr)
            arguments.keep = True
            return 1
        return 0
    finally:
        harness.clean_up(work, arguments.keep, "bench-pgbench", processes, cluster)


if __name__ == "__main__":
    started = time.monotonic()
    status = main()
    print(f"bench-pgbench: {time.monotonic() - started:.0f} s", file=sys.stderr)
    sys.exit(status)
