"""The load benchmark of `tessera serve` against a bare Hummingbird hello-world, with wrk on loopback.

Run by scripts/bench-server, which builds the release binaries and installs wrk. This file starts
both servers (tessera on a fresh SQLite database), prepares the data every scenario needs so that
each request is realistic and unique, drives each scenario with wrk and prints one table:

  hello-world    GET /                                 the baseline
  heartbeat      POST /v1/sessions/authenticate        no body, Bearer st_…, over --sessions (100,000) sessions
  heartbeat-bound  the same                             over as many sessions each bound to its own P-256 key:
                                                       Authorization: DPoP st_… and a DPoP proof of that key
  heartbeat-hot  POST /v1/sessions/authenticate        the same over --hot-sessions (2,000): the best case
  identify       POST /v1/sessions/identify            publishable key, a fresh identity token (new user) per request
  anonymous      POST /v1/sessions/anonymous           publishable key, a fresh installation per request

The heartbeat is the load real devices bring: each device heartbeats once every few minutes, so at
any rate this machine reaches no two heartbeats within one second belong to the same session, and
every answer needs a session JWT signed for it (`SessionJWTCache` never hits). 100,000 sessions
visited in a shuffled order, one after another, keep every session's heartbeats more than a second
apart up to 100,000 requests/s (the table warns when a run went faster than that). `heartbeat-hot`
is the figure earlier sessions reported: 2,000 sessions at 20,000–40,000 requests/s, so most answers
reuse a signature made in the same second — a best case, labelled as such. The sessions are written
straight into the database in bulk before the server starts (fill.py: the rows an anonymous start
writes), not created through 100,000 HTTP calls.

Real heartbeats (one per session every few minutes) mostly come from a profile already seen that
day: the server's activity recorder (active users, issue 25) then does a set lookup and writes
nothing, where a first sighting of the day queues a mark that a background flush writes. So before
the first round both heartbeats visit each of their sessions once (`once.lua`: every line once, then
wrk stops) and wait one flush interval: every measured heartbeat finds its profile seen today, as in
production. `--cold-activity` skips that warm-up (every measured heartbeat is then a first
sighting: the figures of the runs before 2026-11-29 06:00 UTC).

`heartbeat-bound` is the same load from devices whose sessions are bound to a key (RFC 9449, issue
27): another --sessions sessions, each written with the `jkt` (and `key_tier`) an anonymous start with
a proof writes, each bound to its own P-256 key made here, and each request `Authorization: DPoP st_…`
with a `DPoP` proof by that session's key (`htm` POST, `htu` the server's --public-url and the path,
`ath` of the token), which the server verifies in full every time (header, signature, claims,
thumbprint against the session's). A heartbeat does not spend its proof (only an extension, whose
proof names its body, does: docs/API.md, "Replay"), but every proof is still sent once, as the SDK
makes one per request: the proofs are made in Python (`cryptography`) just before each round's bound
heartbeat, one per session, each with its own `jti` and an `iat` 50 s ahead, so they are valid from
10 s before they are made until 110 s after (the run refuses a --duration that would outlast them);
the activity warm-up sends proofs of its own, made for it. Its CPU per request is
judged against the heartbeat's of the same round: target ≤ 1.6×. Both heartbeats run on the one
database of 2 × --sessions sessions.

Targets (SQLite, 64 connections): heartbeat ≥ 55 % of hello-world's requests/s with p99 ≤ 10 ms;
identify ≥ 5,000 requests/s. On PostgreSQL (--database postgres) with one server process:
heartbeat ≥ 40 % of hello-world; identify/s is reported (Server/Benchmarks/pgbench measures it
against PostgreSQL's own rate for the same statements).

--nodes 2 (PostgreSQL only) starts two `tessera serve` processes on the one database and drives
every scenario with two wrk processes at once, one per node, half the connections each (hello-world,
one process, is driven the same way so that the client side is identical); the table sums their
requests/s and shows the worse of their latency percentiles.

--rounds N runs the whole sequence (hello-world, then each scenario) N times, interleaved, each round
with fresh identity tokens and installations, and prints each round and then the median of each
figure over the rounds; each ratio is the median of the rounds' own ratios (a scenario beside the
hello-world of its own round). Targets are judged on the medians. On a machine whose speed drifts
from minute to minute (a shared VM) one run can land anywhere in that drift; the median of
interleaved rounds cannot be moved by one slow or fast minute.

On PostgreSQL every measurement (hello-world included) starts after VACUUM (ANALYZE) and a
CHECKPOINT, as pgbench starts its runs: otherwise the rows an identify or anonymous scenario wrote
are vacuumed and flushed during whatever is measured next, on the same two CPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402

sys.path.insert(0, str(HERE))
import fill  # noqa: E402  (valid sessions written in bulk)

sys.path.insert(0, str(HERE.parents[1] / "Tests" / "backends"))
from dpop_proof import DeviceKey  # noqa: E402  (P-256 keys and DPoP proofs made with `cryptography`)

# How often the server writes the activity it queued (ActivityFlushService.interval).
ACTIVITY_FLUSH_SECONDS = 2

# The server accepts a proof's iat within this many seconds of its time, either way (DPoPGate).
PROOF_SKEW_SECONDS = 60

PATHS = {
    "heartbeat": "/v1/sessions/authenticate",
    "heartbeat-bound": "/v1/sessions/authenticate",
    "heartbeat-hot": "/v1/sessions/authenticate",
    "identify": "/v1/sessions/identify",
    "anonymous": "/v1/sessions/anonymous",
}


def fill_sessions(database: str, project_id: str, count: int, jkts: list[str] | None = None) -> list[str]:
    """`count` live anonymous sessions of the project written in bulk (before the server starts);
    returns their tokens in a random order, or, each bound to the key of `jkts[i]`, in that order."""
    if database.startswith("sqlite:"):
        tokens = fill.fill_sqlite(Path(database.removeprefix("sqlite:")), project_id, count, jkts=jkts)
    else:
        schema = next((item.split("=", 1)[1] for item in database.partition("?")[2].split("&")
                       if item.startswith("schema=")), "public")
        tokens = fill.fill_postgres(database, schema, project_id, count, jkts=jkts)
    if jkts is None:
        random.shuffle(tokens)
    return tokens


# How far ahead of the moment they are made the bound heartbeat's proofs are dated: the server accepts
# an iat within 60 s either way, so they are valid from 10 s before they are made to 110 s after.
PROOF_LEAD_SECONDS = 50


def bound_lines(devices: list, tokens: list[str], url: str) -> tuple[list[str], int]:
    """One bound heartbeat per session (`token<TAB><TAB>proof`, in a random order): a proof of the
    session's own key for POST `url`; returns the lines and the proofs' iat."""
    iat = int(time.time()) + PROOF_LEAD_SECONDS
    lines = [f"{token}\t\t{key.proof('POST', url, token, iat=iat)}\n" for key, token in zip(devices, tokens)]
    random.shuffle(lines)
    return lines, iat


def identify_lines(project: harness.Project, count: int) -> list[str]:
    """`count` identify requests, each with a fresh identity token of a new user."""
    now = int(time.time())
    run = harness.b64url(os.urandom(6))
    lines = []
    for index in range(count):
        token = harness.identity_token(
            project.identity_secret, project.kid,
            {"sub": f"bench-{run}-{index}", "aud": project.project_id, "iat": now, "exp": now + 3000},
        )
        lines.append(f"{project.publishable_key}\t{json.dumps({'identity_token': token})}\n")
    return lines


def anonymous_lines(project: harness.Project, count: int) -> list[str]:
    """`count` anonymous starts, each of a new installation."""
    return [f"{project.publishable_key}\t{json.dumps(harness.new_installation())}\n" for _ in range(count)]


def start_wrk(
    url: str, script: Path, script_args: list[str], arguments: argparse.Namespace, duration: int,
    connections: int | None = None,
) -> subprocess.Popen:
    command = [
        "wrk", "-t", str(arguments.threads), "-c", str(connections or arguments.connections), "-d", f"{duration}s",
        "--timeout", "5s", "-s", str(script), url,
    ]
    if script_args:
        command += ["--", *script_args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_wrk(process: subprocess.Popen, duration: int) -> dict:
    try:
        stdout, stderr = process.communicate(timeout=duration + 120)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
    match = re.search(r"^WRK_JSON (\{.*\})$", stdout, re.M)
    if process.returncode != 0 or match is None:
        raise SystemExit(f"bench: wrk failed ({process.returncode}):\n{stdout}\n{stderr}")
    return json.loads(match.group(1))


def run_wrk(url: str, script: Path, script_args: list[str], arguments: argparse.Namespace, duration: int) -> dict:
    return finish_wrk(start_wrk(url, script, script_args, arguments, duration), duration)


def run_wrk_split(
    urls: list[str], script: Path, script_args: list[list[str]], arguments: argparse.Namespace, duration: int
) -> dict:
    """One wrk process per URL at once, the connections shared out between them, the results combined:
    requests and requests/s summed, each latency percentile the worst of the processes' ones."""
    if len(urls) == 1:
        return run_wrk(urls[0], script, script_args[0], arguments, duration)
    share, extra = divmod(arguments.connections, len(urls))
    processes = [
        start_wrk(url, script, script_args[index], arguments, duration, max(1, share + (index < extra)))
        for index, url in enumerate(urls)
    ]
    results = [finish_wrk(process, duration) for process in processes]
    combined = {key: sum(result[key] for result in results) for key in results[0]}
    for key in ("seconds", "p50_us", "p90_us", "p99_us", "max_us"):
        combined[key] = max(result[key] for result in results)
    combined["parts"] = results
    return combined


def master_key_environment(work: Path) -> dict[str, str]:
    """The environment of the servers and the CLI: nothing of the caller's TESSERA_*, and a master key
    (a database of earlier runs needs theirs: TESSERA_MASTER_KEY_FILE names it; else a new one)."""
    return harness.clean_environment(TESSERA_MASTER_KEY_FILE=(
        os.environ.get("TESSERA_MASTER_KEY_FILE") or harness.write_master_key(work / "master.key")))


def start_cluster(cluster: harness.PostgresCluster) -> str:
    print(f"› scripts/postgres start (TESSERA_PG_DIR={cluster.directory})", file=sys.stderr)
    return cluster.start()


def serve(tessera: Path, database: str, port: int, log: Path, environment: dict[str, str],
          public_url: str | None = None) -> subprocess.Popen:
    """`tessera serve` as the benchmarks run it: warnings only, to `log`; `public_url` is the one URL
    every node is reached at (what DPoP proofs name in htu), as behind a load balancer."""
    options = ("--public-url", public_url) if public_url else ()
    return harness.serve(tessera, database, port, "--log-level", "warning", *options, log=open(log, "w"),
                         environment=environment)


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU time the processes have used so far (from /proc; 0 where it is not there)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat(5))
    return total / os.sysconf("SC_CLK_TCK")


def status_kib(pid: int, field: str) -> int:
    """One KiB figure of /proc/PID/status (`VmRSS`, `RssAnon`, `RssFile`; 0 where it is not there)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def rss_kib(pid: int) -> int:
    """The resident set of a process in KiB (VmRSS of /proc/PID/status; 0 where it is not there)."""
    return status_kib(pid, "VmRSS")


def memory(pid: int) -> str:
    """The resident set, split into the process's own memory (RssAnon: heap, stacks, caches: what
    would grow per session if anything did) and file pages (RssFile: the binary and the SQLite
    database file, which SQLite reads through a memory map; the kernel's page cache, shared and
    dropped under pressure)."""
    return (f"{rss_kib(pid) / 1024:,.1f} MiB (own {status_kib(pid, 'RssAnon') / 1024:,.1f} MiB, "
            f"file pages {status_kib(pid, 'RssFile') / 1024:,.1f} MiB)")


def measured(run, pids: list[int]) -> dict:
    """A wrk result with the server's CPU time per answered request in microseconds (`cpu_us`): a figure
    that other load on the machine disturbs far less than requests/s, to compare two builds."""
    before = cpu_seconds(pids)
    result = run()
    requests = result.get("requests") or 0
    result["cpu_us"] = (cpu_seconds(pids) - before) * 1e6 / requests if requests else 0.0
    return result


def errors_of(result: dict) -> int:
    return result["connect_errors"] + result["read_errors"] + result["write_errors"] + result["timeouts"]


def medians(runs: list[dict]) -> tuple[float, float, float, int, int]:
    """Over wrk results: the median requests/s, p50 and p99 (ms); the sums of non-2xx answers and errors."""
    return (statistics.median(result["rps"] for result in runs),
            statistics.median(result["p50_us"] for result in runs) / 1000,
            statistics.median(result["p99_us"] for result in runs) / 1000,
            sum(result["non_2xx"] for result in runs), sum(errors_of(result) for result in runs))


def write_split(work: Path, name: str, lines: list[str], parts: int) -> list[Path]:
    """The prepared requests in one file per node: line i goes to node i mod parts (none is sent twice)."""
    if parts == 1:
        paths = [work / f"{name}.txt"]
    else:
        paths = [work / f"{name}-{index + 1}.txt" for index in range(parts)]
    for index, path in enumerate(paths):
        path.write_text("".join(lines[index::parts]))
    return paths


def postgres_version(url: str) -> str:
    try:
        result = subprocess.run(
            ["psql", harness.libpq_url(url), "-Atc", "SHOW server_version"], capture_output=True, text=True, timeout=30
        )
        return result.stdout.split()[0] if result.returncode == 0 and result.stdout.strip() else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def settle_postgres(url: str) -> None:
    """Lets PostgreSQL catch up on the previous scenario's writes before the next one is measured, as
    pgbench does before its runs: VACUUM (ANALYZE) and a CHECKPOINT, so that autovacuum and the
    checkpointer do not take their turn inside the next measurement. (CHECKPOINT needs a superuser or
    pg_checkpoint; on a given database without either it is skipped.)"""
    for statement in ("VACUUM (ANALYZE)", "CHECKPOINT"):
        try:
            subprocess.run(["psql", harness.libpq_url(url), "-Atqc", statement], capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            pass


class Perf:
    """`perf record` of the tessera process during one scenario, summarised by symbol."""

    def __init__(self, pids: list[int], output: Path) -> None:
        self.output = output
        self.process = subprocess.Popen(
            ["perf", "record", "-F", "499", "-g", "-p", ",".join(map(str, pids)), "-o", str(output)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def stop(self) -> str:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        report = subprocess.run(
            ["perf", "report", "-i", str(self.output), "--no-children", "--sort", "dso,symbol", "--stdio",
             "--percent-limit", "1.5", "-g", "none"],
            capture_output=True, text=True, timeout=300,
        )
        return "\n".join(line for line in report.stdout.splitlines() if line and not line.startswith("#"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", type=Path, required=True, help="the release `tessera` binary")
    parser.add_argument("--hello", type=Path, required=True, help="the release `HelloWorld` binary")
    parser.add_argument("--duration", type=int, default=10, help="seconds per measured scenario (default 10)")
    parser.add_argument("--cold-activity", action="store_true",
                        help="skip the heartbeats' activity warm-up (every session once before the first round): "
                             "each measured heartbeat is then its profile's first sighting of the day")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up before hello-world and heartbeat")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1)")
    parser.add_argument("--sessions", type=int, default=100_000,
                        help="sessions the heartbeat spreads over (default 100,000: no session twice in a second)")
    parser.add_argument("--hot-sessions", type=int, default=2_000,
                        help="sessions heartbeat-hot spreads over (default 2,000: the best case of the JWT cache)")
    parser.add_argument("--per-second", type=int, default=12000,
                        help="identity tokens and installations prepared per second of --duration")
    parser.add_argument("--scenarios", default="heartbeat,heartbeat-bound,heartbeat-hot,identify,anonymous",
                        help="any of heartbeat, heartbeat-bound, heartbeat-hot, identify, anonymous (default all)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run hello-world and every scenario this many times, interleaved, and report the "
                             "median of each figure (default 1)")
    parser.add_argument("--perf", default="", help="profile the server with perf during these scenarios")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (database, logs)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite",
                        help="sqlite (default: a fresh file) or postgres (a throwaway cluster of scripts/postgres "
                             "in a directory of its own, stopped at the end, unless --database-url names one)")
    parser.add_argument("--database-url", default=None,
                        help="an existing postgres://… database to use instead (implies --database postgres); "
                             "the run adds a project with its rows and leaves them there")
    parser.add_argument("--nodes", type=int, default=1,
                        help="tessera serve processes on the one database (PostgreSQL only); every scenario, "
                             "hello-world included, is driven by one wrk process per node at once, the "
                             "connections shared out between them")
    arguments = parser.parse_args()
    if arguments.database_url:
        if not arguments.database_url.startswith(("postgres://", "postgresql://")):
            parser.error("--database-url must be a postgres://… URL")
        arguments.database = "postgres"
    if arguments.nodes < 1 or (arguments.nodes > 1 and arguments.database != "postgres"):
        parser.error("--nodes N > 1 needs --database postgres (SQLite is one process's embedded database)")
    if arguments.rounds < 1:
        parser.error("--rounds must be at least 1")
    scenarios = [name for name in arguments.scenarios.split(",") if name]
    unknown = [name for name in scenarios if name not in PATHS]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)} (known: {', '.join(PATHS)})")
    if "heartbeat-hot" in scenarios and arguments.hot_sessions > arguments.sessions:
        parser.error("--hot-sessions must not exceed --sessions (the hot set is taken from the others)")
    profiled = {name for name in arguments.perf.split(",") if name}
    if "heartbeat-bound" in scenarios and arguments.duration > 80:
        parser.error("heartbeat-bound: --duration must be at most 80 s (its proofs are valid for 110 s from when "
                     "they are made, which takes a while)")

    work = Path(tempfile.mkdtemp(prefix="tessera-bench-"))
    database = f"sqlite:{work / 'tessera.sqlite'}"
    database_label = "SQLite"
    slug = None
    cluster = None
    if arguments.database == "postgres" and arguments.database_url:
        database = arguments.database_url
        slug = f"bench-{uuid.uuid4().hex[:12]}"  # the database may hold earlier runs' projects
    elif arguments.database == "postgres":
        # Not under `work`: the cluster's owner (postgres, when run as root) must reach its directory.
        cluster = harness.PostgresCluster(Path(tempfile.gettempdir()) / f"tessera-bench-pg-{os.getpid()}", "bench")
    environment = master_key_environment(work)
    tessera_ports = [harness.free_port() for _ in range(arguments.nodes)]
    tessera_port, hello_port = tessera_ports[0], harness.free_port()
    public_url = f"http://127.0.0.1:{tessera_port}"  # every node's, as behind a load balancer
    processes: list[subprocess.Popen] = []
    try:
        if cluster is not None:
            database = start_cluster(cluster)
        if arguments.database == "postgres":
            database_label = (
                f"PostgreSQL {postgres_version(database)} "
                f"({'given URL' if cluster is None else 'throwaway cluster, fsync on'}; "
                "VACUUM (ANALYZE) and CHECKPOINT before each measurement)"
            )
        project = harness.create_project(arguments.tessera, database, "Benchmark", environment, slug, what="bench")
        tokens: list[str] = []
        if "heartbeat" in scenarios or "heartbeat-hot" in scenarios:
            print(f"› writing {arguments.sessions:,} sessions in bulk", file=sys.stderr)
            started = time.monotonic()
            tokens = fill_sessions(database, project.project_id, arguments.sessions)
            print(f"  {arguments.sessions:,} sessions in {time.monotonic() - started:.1f} s", file=sys.stderr)
        devices: list = []
        bound_tokens: list[str] = []
        if "heartbeat-bound" in scenarios:
            print(f"› making {arguments.sessions:,} P-256 keys; writing as many sessions bound to them",
                  file=sys.stderr)
            started = time.monotonic()
            devices = [DeviceKey() for _ in range(arguments.sessions)]
            bound_tokens = fill_sessions(
                database, project.project_id, arguments.sessions, jkts=[device.jkt for device in devices])
            print(f"  {arguments.sessions:,} keys and sessions in {time.monotonic() - started:.1f} s", file=sys.stderr)
        nodes: list[subprocess.Popen] = []
        for index, port in enumerate(tessera_ports):
            log_name = "tessera.log" if index == 0 else f"tessera-{index + 1}.log"
            nodes.append(serve(arguments.tessera, database, port, work / log_name, environment, public_url))
            processes.append(nodes[-1])
        tessera = nodes[0]
        hello = subprocess.Popen(
            [str(arguments.hello), "--host", "127.0.0.1", "--port", str(hello_port)],
            stdout=subprocess.DEVNULL, stderr=open(work / "hello.log", "w"),
        )
        processes.append(hello)
        for index, (port, node) in enumerate(zip(tessera_ports, nodes)):
            harness.wait_ready(port, node, f"bench: tessera serve (node {index + 1})" if arguments.nodes > 1
                               else "bench: tessera serve")
        harness.wait_ready(hello_port, hello, "bench: HelloWorld", path="/")
        lifted = harness.lift_rate_limits(tessera_port, project.secret_key)
        if lifted.status != 200:
            raise SystemExit(f"bench: PATCH /v1/admin/project answered {lifted.status}: {lifted.body}")

        count = arguments.duration * arguments.per_second
        rounds = arguments.rounds
        print(f"› preparing {count * rounds} identity tokens, {count * rounds} installations", file=sys.stderr)
        # files[name][round]: the prepared requests of one round, one file per node.
        files: dict[str, list[list[Path]]] = {}
        # Heartbeats reuse their sessions by design (the same file every round).
        if "heartbeat" in scenarios:
            files["heartbeat"] = [
                write_split(work, "heartbeat", [f"{token}\t\n" for token in tokens], arguments.nodes)] * rounds
        if "heartbeat-hot" in scenarios:
            hot = [f"{token}\t\n" for token in tokens[:arguments.hot_sessions]]
            files["heartbeat-hot"] = [write_split(work, "heartbeat-hot", hot, arguments.nodes)] * rounds
        if "identify" in scenarios:
            files["identify"] = [
                write_split(work, f"identify-{round_index + 1}", identify_lines(project, count), arguments.nodes)
                for round_index in range(rounds)
            ]
        if "anonymous" in scenarios:
            files["anonymous"] = [
                write_split(work, f"anonymous-{round_index + 1}", anonymous_lines(project, count), arguments.nodes)
                for round_index in range(rounds)
            ]

        paths = PATHS
        hello_urls = [f"http://127.0.0.1:{hello_port}/"] * arguments.nodes
        no_args: list[list[str]] = [[] for _ in hello_urls]
        load_before = harness.load_average()
        if arguments.warmup:
            run_wrk_split(hello_urls, HERE / "plain.lua", no_args, arguments, arguments.warmup)
        # by_round[r][scenario]: the wrk result of one scenario in round r.
        by_round: list[dict[str, dict]] = []
        for round_index in range(rounds):
            label = f" (round {round_index + 1} of {rounds})" if rounds > 1 else ""
            results: dict[str, dict] = {}
            if arguments.database == "postgres":
                settle_postgres(database)
            print(f"› hello-world GET / for {arguments.duration} s{label}", file=sys.stderr)
            results["hello-world"] = measured(lambda: run_wrk_split(
                hello_urls, HERE / "plain.lua", no_args, arguments, arguments.duration), [hello.pid])
            for name in scenarios:
                urls = [f"http://127.0.0.1:{port}{paths[name]}" for port in tessera_ports]
                script_args = [
                    ["POST", paths[name], str(path), str(arguments.threads)]
                    for path in files[name][round_index]] if name in files else []
                if name == "heartbeat-bound":
                    # Made now, for this round only: proofs are valid for a limited time.
                    print(f"› {len(devices):,} DPoP proofs, one per bound session{label}", file=sys.stderr)
                    started = time.monotonic()
                    lines, iat = bound_lines(devices, bound_tokens, public_url + paths[name])
                    bound_files = write_split(work, "heartbeat-bound", lines, arguments.nodes)
                    script_args = [["POST", paths[name], str(path), str(arguments.threads)] for path in bound_files]
                    proof_seconds = time.monotonic() - started
                    if time.time() + arguments.duration + 5 > iat + PROOF_SKEW_SECONDS:
                        raise SystemExit(f"bench: making the proofs took {proof_seconds:.0f} s; they would expire "
                                         "during the run (a shorter --duration, or fewer --sessions)")
                    print(f"  in {proof_seconds:.1f} s", file=sys.stderr)
                if name in ("heartbeat", "heartbeat-bound") and round_index == 0 and not arguments.cold_activity:
                    # Every session once before the first round: the day's activity is then warm, as for
                    # real heartbeats (one per session every few minutes: all but the day's first find their
                    # profile already seen, a set lookup and no write). Then one flush interval, so the marks
                    # of the warm-up are written before anything is measured. (A bound heartbeat does not
                    # spend its proof: the warm-up's proofs are made for it and sent once each.)
                    print(f"› warming the day's activity: each of the {arguments.sessions:,} sessions once", file=sys.stderr)
                    warm_args = script_args
                    if name == "heartbeat-bound":
                        warm_lines, _ = bound_lines(devices, bound_tokens, public_url + paths[name])
                        warm_args = [["POST", paths[name], str(path), str(arguments.threads)]
                                     for path in write_split(work, "heartbeat-bound-warm", warm_lines, arguments.nodes)]
                    warm = run_wrk_split(urls, HERE / "once.lua", warm_args, arguments, 100)
                    if errors_of(warm) or warm["non_2xx"]:
                        raise SystemExit(f"bench: the activity warm-up of {name} failed: {warm}")
                    time.sleep(ACTIVITY_FLUSH_SECONDS + 1)
                    if name == "heartbeat-bound" and time.time() + arguments.duration + 5 > iat + PROOF_SKEW_SECONDS:
                        lines, iat = bound_lines(devices, bound_tokens, public_url + paths[name])
                        bound_files = write_split(work, "heartbeat-bound", lines, arguments.nodes)
                        script_args = [["POST", paths[name], str(path), str(arguments.threads)] for path in bound_files]
                if arguments.database == "postgres":
                    settle_postgres(database)
                # No other warm-up for the bound heartbeat (its proofs are valid for a limited time).
                if name in ("heartbeat", "heartbeat-hot") and arguments.warmup and round_index == 0:
                    run_wrk_split(urls, HERE / "replay.lua", script_args, arguments, arguments.warmup)
                print(f"› {name} POST {paths[name]} for {arguments.duration} s{label}", file=sys.stderr)
                perf = (
                    Perf([node.pid for node in nodes], work / f"perf-{name}.data")
                    if name in profiled and round_index == 0 else None
                )
                results[name] = measured(
                    lambda: run_wrk_split(urls, HERE / "replay.lua", script_args, arguments, arguments.duration),
                    [node.pid for node in nodes])
                if perf is not None:
                    results[name]["perf"] = perf.stop()
                if any(node.poll() is not None for node in nodes):
                    raise SystemExit(f"bench: tessera serve exited during {name}; see the logs in {work}")
            by_round.append(results)
        load_after = harness.load_average()

        print()
        print(f"wrk {arguments.threads} thread(s), {arguments.connections} connections, {arguments.duration} s each, "
              f"loopback, {database_label} ({os.cpu_count()} CPUs)")
        if arguments.nodes > 1:
            print(f"{arguments.nodes} tessera serve processes on one database; every row (hello-world's one process "
                  f"included) driven by {arguments.nodes} wrk processes at once, "
                  f"{arguments.connections // arguments.nodes} connections each: requests/s summed, "
                  f"p50/p99 the worse of the {arguments.nodes}")
        print(f"load average (1/5/15 min): {load_before} before, {load_after} after")
        if "heartbeat" in scenarios or "heartbeat-hot" in scenarios:
            print(f"heartbeat over {arguments.sessions:,} sessions (each session at most once a second: a "
                  f"fresh JWT per answer); heartbeat-hot over {arguments.hot_sessions:,} (the JWT cache's best case)")
        if "heartbeat" in scenarios or "heartbeat-bound" in scenarios:
            print("the day's activity " + (
                "cold: every measured heartbeat is its profile's first sighting of the day (--cold-activity)"
                if arguments.cold_activity else
                "warm: each heartbeat session was seen once before the first round, as real devices' "
                "heartbeats (one per session every few minutes) find their profile already seen"))
        if "heartbeat-bound" in scenarios:
            print(f"heartbeat-bound over {arguments.sessions:,} other sessions, each bound to its own P-256 key: "
                  "Authorization: DPoP and a proof of that key on every request, verified in full by the server")
        print("tessera serve RSS at the end: " + ", ".join(memory(node.pid) for node in nodes))
        header = (f"{'scenario':<15} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'vs hello':>9} {'non-2xx':>8} "
                  f"{'errors':>7} {'cpu µs/req':>10}")

        if rounds > 1:
            print(f"\n{rounds} rounds, interleaved (each ratio against the hello-world of its own round):")
            print(f"{'round':<6} {header}")
            for round_index, round_results in enumerate(by_round):
                baseline = round_results["hello-world"]["rps"]
                for name, result in round_results.items():
                    ratio = result["rps"] / baseline if baseline else 0
                    print(f"{round_index + 1:<6} {name:<15} {result['rps']:>11,.0f} {result['p50_us'] / 1000:>8.2f} "
                          f"{result['p99_us'] / 1000:>8.2f} {ratio:>8.0%} {result['non_2xx']:>8} "
                          f"{errors_of(result):>7} {result['cpu_us']:>10.1f}")
            print(f"\nmedian of the {rounds} rounds:")
        print(f"{header}  target")
        missed = []
        failed = []
        for name in by_round[0]:
            runs = [round_results[name] for round_results in by_round]
            rps, p50, p99, non_2xx, errors = medians(runs)
            ratio = statistics.median(
                result["rps"] / round_results["hello-world"]["rps"] if round_results["hello-world"]["rps"] else 0
                for result, round_results in zip(runs, by_round)
            )
            wrapped = sum(result["wrapped"] for result in runs)
            target = ""
            if name == "heartbeat" and arguments.database == "postgres":
                if arguments.nodes == 1:
                    ok = ratio >= 0.4
                    target = f"≥ 40 % (PostgreSQL, one process): {'met' if ok else 'MISSED'}"
                    if not ok:
                        missed.append(name)
            elif name == "heartbeat":
                ok = ratio >= 0.55 and p99 <= 10
                target = f"≥ 55 % and p99 ≤ 10 ms: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(name)
            elif name == "heartbeat-bound" and "heartbeat" in by_round[0]:
                # CPU per request against the unbound heartbeat of the same round: the median of the rounds' ratios.
                cost = statistics.median(
                    round_results[name]["cpu_us"] / round_results["heartbeat"]["cpu_us"]
                    if round_results["heartbeat"]["cpu_us"] else 0 for round_results in by_round)
                ok = cost <= 1.6
                target = f"CPU/req {cost:.2f}× heartbeat's, ≤ 1.6×: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(name)
            elif name == "heartbeat-hot":
                target = f"best case: {arguments.hot_sessions:,} sessions, most JWTs reused within their second"
            elif name == "identify" and arguments.database == "postgres":
                target = "reported (the 5,000/s target is SQLite's)"
            elif name == "identify":
                ok = rps >= 5000
                target = f"≥ 5,000/s: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(name)
            cpu = statistics.median(result["cpu_us"] for result in runs)
            print(f"{name:<15} {rps:>11,.0f} {p50:>8.2f} {p99:>8.2f} {ratio:>8.0%} "
                  f"{non_2xx:>8} {errors:>7} {cpu:>10.1f}  {target}")
            if non_2xx or errors:
                failed.append(name)
            if wrapped and not name.startswith("heartbeat"):  # heartbeats reuse their sessions by design
                print(f"  note: {name} ran out of prepared requests {wrapped} time(s) and reused them")
            if name in ("heartbeat", "heartbeat-bound") and max(result["rps"] for result in runs) > arguments.sessions:
                print(f"  note: over {arguments.sessions:,} requests/s a session came back within a second: "
                      "some JWTs were reused; raise --sessions")
        results = by_round[0]
        for name, result in results.items():
            if "perf" in result:
                print(f"\nperf, tessera serve during {name} (self time by DSO and symbol):\n{result['perf']}")
        if failed:
            print(f"\nbench: requests failed in {', '.join(failed)}; see the logs in {work}", file=sys.stderr)
            arguments.keep = True
            return 1
        if missed and arguments.strict:
            return 1
        return 0
    finally:
        harness.clean_up(work, arguments.keep, "bench", processes, cluster)


if __name__ == "__main__":
    sys.exit(main())
