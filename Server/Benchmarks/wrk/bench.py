"""The load benchmark of `tessera serve` against a bare Hummingbird hello-world, with wrk on loopback.

Run by scripts/bench-server, which builds the release binaries and installs wrk. This file starts
both servers (tessera on a fresh SQLite database), prepares the data every scenario needs so that
each request is realistic and unique, drives each scenario with wrk and prints one table:

  hello-world  GET /                                   the baseline
  heartbeat    POST /v1/sessions/authenticate          no body, Bearer st_…, spread over many sessions
  identify     POST /v1/sessions/identify              publishable key, a fresh identity token (new user) per request
  anonymous    POST /v1/sessions/anonymous             publishable key, a fresh installation per request

Targets (SQLite, 64 connections): heartbeat ≥ 50 % of hello-world's requests/s with p99 ≤ 10 ms;
identify ≥ 5,000 requests/s.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, path: str, process: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"bench: {what} exited with status {process.returncode} before answering")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", path)
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"bench: {what} did not answer GET {path} within {timeout:.0f} s")


@dataclass
class Project:
    project_id: str
    publishable_key: str
    secret_key: str
    identity_secret: str
    kid: str | None


def create_project(tessera: Path, database: str, environment: dict[str, str]) -> Project:
    command = [str(tessera), "projects", "create", "--name", "Benchmark", "--json", "--database", database]
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60)
    if result.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command[:4])} failed ({result.returncode}): {result.stderr.strip()}")
    # {"project_id", "name", "slug", "publishable_key", "secret_key", "identity_secret": {"kid", "secret"}}
    try:
        data = json.loads(result.stdout)
        return Project(
            project_id=data["project_id"], publishable_key=data["publishable_key"], secret_key=data["secret_key"],
            identity_secret=data["identity_secret"]["secret"], kid=data["identity_secret"]["kid"],
        )
    except (ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"bench: cannot read the keys from `tessera projects create --json`: {error!r}")


def mint_identity_token(secret: str, kid: str | None, claims: dict[str, object]) -> str:
    header: dict[str, str] = {"alg": "HS256", "typ": "JWT"}
    if kid:
        header["kid"] = kid
    signing_input = (
        b64url(json.dumps(header, separators=(",", ":")).encode())
        + "."
        + b64url(json.dumps(claims, separators=(",", ":")).encode())
    )
    signature = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)


def new_installation() -> dict[str, str]:
    return {"installation_id": str(uuid.uuid4()), "installation_secret": b64url(os.urandom(32))}


def create_sessions(port: int, publishable_key: str, count: int) -> list[str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    tokens = []
    for _ in range(count):
        body = json.dumps(new_installation())
        connection.request(
            "POST", "/v1/sessions/anonymous", body=body,
            headers={"Authorization": f"Bearer {publishable_key}", "Content-Type": "application/json"},
        )
        response = connection.getresponse()
        payload = response.read()
        if response.status not in (200, 201):
            raise SystemExit(f"bench: POST /v1/sessions/anonymous answered {response.status}: {payload[:300]!r}")
        tokens.append(json.loads(payload)["session_token"])
    connection.close()
    return tokens


def run_wrk(url: str, script: Path, script_args: list[str], arguments: argparse.Namespace, duration: int) -> dict:
    command = [
        "wrk", "-t", str(arguments.threads), "-c", str(arguments.connections), "-d", f"{duration}s",
        "--timeout", "5s", "-s", str(script), url,
    ]
    if script_args:
        command += ["--", *script_args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=duration + 120)
    match = re.search(r"^WRK_JSON (\{.*\})$", result.stdout, re.M)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"bench: wrk failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return json.loads(match.group(1))


class Perf:
    """`perf record` of the tessera process during one scenario, summarised by symbol."""

    def __init__(self, pid: int, output: Path) -> None:
        self.output = output
        self.process = subprocess.Popen(
            ["perf", "record", "-F", "499", "-g", "-p", str(pid), "-o", str(output)],
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
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up before hello-world and heartbeat")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1)")
    parser.add_argument("--sessions", type=int, default=2000, help="sessions the heartbeat spreads over")
    parser.add_argument("--per-second", type=int, default=12000,
                        help="identity tokens and installations prepared per second of --duration")
    parser.add_argument("--scenarios", default="heartbeat,identify,anonymous")
    parser.add_argument("--perf", default="", help="profile the server with perf during these scenarios")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (database, logs)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    arguments = parser.parse_args()
    scenarios = [name for name in arguments.scenarios.split(",") if name]
    profiled = {name for name in arguments.perf.split(",") if name}

    work = Path(tempfile.mkdtemp(prefix="tessera-bench-"))
    database = f"sqlite:{work / 'tessera.sqlite'}"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TESSERA_")}
    tessera_port, hello_port = free_port(), free_port()
    processes: list[subprocess.Popen] = []
    try:
        project = create_project(arguments.tessera, database, environment)
        tessera_log = open(work / "tessera.log", "w")
        tessera = subprocess.Popen(
            [str(arguments.tessera), "serve", "--host", "127.0.0.1", "--port", str(tessera_port),
             "--database", database, "--log-level", "warning"],
            stdout=tessera_log, stderr=subprocess.STDOUT, env=environment,
        )
        processes.append(tessera)
        hello = subprocess.Popen(
            [str(arguments.hello), "--host", "127.0.0.1", "--port", str(hello_port)],
            stdout=subprocess.DEVNULL, stderr=open(work / "hello.log", "w"),
        )
        processes.append(hello)
        wait_for(tessera_port, "/health", tessera, "tessera serve")
        wait_for(hello_port, "/", hello, "HelloWorld")

        count = arguments.duration * arguments.per_second
        print(f"› preparing {arguments.sessions} sessions, {count} identity tokens, {count} installations", file=sys.stderr)
        files = {}
        if "heartbeat" in scenarios:
            tokens = create_sessions(tessera_port, project.publishable_key, arguments.sessions)
            files["heartbeat"] = work / "heartbeat.txt"
            files["heartbeat"].write_text("".join(f"{token}\t\n" for token in tokens))
        if "identify" in scenarios:
            now = int(time.time())
            run = b64url(os.urandom(6))
            lines = []
            for index in range(count):
                token = mint_identity_token(
                    project.identity_secret, project.kid,
                    {"sub": f"bench-{run}-{index}", "aud": project.project_id, "iat": now, "exp": now + 3000},
                )
                lines.append(f"{project.publishable_key}\t{json.dumps({'identity_token': token})}\n")
            files["identify"] = work / "identify.txt"
            files["identify"].write_text("".join(lines))
        if "anonymous" in scenarios:
            files["anonymous"] = work / "anonymous.txt"
            files["anonymous"].write_text(
                "".join(f"{project.publishable_key}\t{json.dumps(new_installation())}\n" for _ in range(count))
            )

        paths = {
            "heartbeat": "/v1/sessions/authenticate",
            "identify": "/v1/sessions/identify",
            "anonymous": "/v1/sessions/anonymous",
        }
        results: dict[str, dict] = {}
        hello_url = f"http://127.0.0.1:{hello_port}/"
        if arguments.warmup:
            run_wrk(hello_url, HERE / "plain.lua", [], arguments, arguments.warmup)
        print(f"› hello-world GET / for {arguments.duration} s", file=sys.stderr)
        results["hello-world"] = run_wrk(hello_url, HERE / "plain.lua", [], arguments, arguments.duration)
        for name in scenarios:
            url = f"http://127.0.0.1:{tessera_port}{paths[name]}"
            script_args = ["POST", paths[name], str(files[name]), str(arguments.threads)]
            if name == "heartbeat" and arguments.warmup:
                run_wrk(url, HERE / "replay.lua", script_args, arguments, arguments.warmup)
            print(f"› {name} POST {paths[name]} for {arguments.duration} s", file=sys.stderr)
            perf = Perf(tessera.pid, work / f"perf-{name}.data") if name in profiled else None
            results[name] = run_wrk(url, HERE / "replay.lua", script_args, arguments, arguments.duration)
            if perf is not None:
                results[name]["perf"] = perf.stop()
            if tessera.poll() is not None:
                raise SystemExit(f"bench: tessera serve exited during {name}; see {work / 'tessera.log'}")

        baseline = results["hello-world"]["rps"]
        print()
        print(f"wrk {arguments.threads} thread(s), {arguments.connections} connections, {arguments.duration} s each, "
              f"loopback, SQLite ({os.cpu_count()} CPUs)")
        print(f"{'scenario':<12} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'vs hello':>9} {'non-2xx':>8} {'errors':>7}  target")
        missed = []
        failed = []
        for name, result in results.items():
            errors = result["connect_errors"] + result["read_errors"] + result["write_errors"] + result["timeouts"]
            ratio = result["rps"] / baseline if baseline else 0
            p99 = result["p99_us"] / 1000
            target = ""
            if name == "heartbeat":
                ok = ratio >= 0.5 and p99 <= 10
                target = f"≥ 50 % and p99 ≤ 10 ms: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(name)
            elif name == "identify":
                ok = result["rps"] >= 5000
                target = f"≥ 5,000/s: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(name)
            print(f"{name:<12} {result['rps']:>11,.0f} {result['p50_us'] / 1000:>8.2f} {p99:>8.2f} {ratio:>8.0%} "
                  f"{result['non_2xx']:>8} {errors:>7}  {target}")
            if result["non_2xx"] or errors:
                failed.append(name)
            if result["wrapped"] and name != "heartbeat":  # heartbeats reuse their sessions by design
                print(f"  note: {name} ran out of prepared requests {result['wrapped']} time(s) and reused them")
        for name, result in results.items():
            if "perf" in result:
                print(f"\nperf, tessera serve during {name} (self time by DSO and symbol):\n{result['perf']}")
        if failed:
            print(f"\nbench: requests failed in {', '.join(failed)}; see {work / 'tessera.log'}", file=sys.stderr)
            arguments.keep = True
            return 1
        if missed and arguments.strict:
            return 1
        return 0
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        if arguments.keep:
            print(f"bench: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
