"""Runs schemathesis against a throwaway `tessera serve` (see scripts/schemathesis).

Starts the given `tessera` binary on a free loopback port with a fresh SQLite database, creates a
project with `tessera projects create --json`, validates the served /openapi.json, then runs
schemathesis with every check and the auth hooks of hooks.py, and finally makes sure the server is
still healthy and logged no crash. Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
# The project's rate limits, all lifted (hooks.py restores them when the fuzzer PATCHes them).
UNLIMITED = {"anonymous_starts_per_minute": None, "failed_identifies_per_minute": None,
             "failed_identifies_per_installation_per_minute": None}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tessera", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="a short run for CI (about a minute)")
    parser.add_argument("--max-time", type=int, help="seconds for schemathesis (default 60 quick, 240 full)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and reports")
    parser.add_argument("--database", help="a postgres://… URL to run against (default: a fresh SQLite file)")
    parser.add_argument("extra", nargs="*", help="more schemathesis arguments (after --)")
    arguments = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="tessera-schemathesis-"))
    database = arguments.database or f"sqlite:{work / 'tessera.sqlite'}"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TESSERA_")}
    # PostgreSQL needs a master key file; SQLite would create one beside the database.
    environment["TESSERA_MASTER_KEY_FILE"] = str(work / "master.key")
    port = free_port()
    server: subprocess.Popen | None = None
    keep = arguments.keep
    try:
        subprocess.run([str(arguments.tessera), "keys", "generate", "--to", environment["TESSERA_MASTER_KEY_FILE"]],
                       check=True, capture_output=True, timeout=60)
        created = subprocess.run(
            [str(arguments.tessera), "projects", "create", "--name", "Schemathesis", "--json", "--database", database],
            capture_output=True, text=True, env=environment, timeout=60,
        )
        if created.returncode != 0:
            print(f"schemathesis: tessera projects create failed: {created.stderr.strip()}", file=sys.stderr)
            return 1
        # {"project_id", "name", "slug", "publishable_key", "secret_key", "identity_secret": {"kid", "secret"}}
        try:
            project = json.loads(created.stdout)
            keys = {
                "TESSERA_ST_PROJECT_ID": project["project_id"],
                "TESSERA_ST_PUBLISHABLE_KEY": project["publishable_key"],
                "TESSERA_ST_SECRET_KEY": project["secret_key"],
                "TESSERA_ST_IDENTITY_SECRET": project["identity_secret"]["secret"],
                "TESSERA_ST_IDENTITY_KID": project["identity_secret"]["kid"],
            }
        except (ValueError, KeyError, TypeError) as error:
            print(f"schemathesis: cannot read the keys from `tessera projects create --json`: {error!r}", file=sys.stderr)
            return 1

        log = open(work / "tessera.log", "w")
        server = subprocess.Popen(
            # The fuzzer is one client (127.0.0.1) sending thousands of requests a minute, many with
            # invented session tokens: lift the server's guessing limit, and the project's below.
            [str(arguments.tessera), "serve", "--host", "127.0.0.1", "--port", str(port), "--database", database,
             "--failed-session-lookups-per-minute", "0"],
            stdout=log, stderr=subprocess.STDOUT, env=environment,
        )
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                print(f"schemathesis: tessera serve exited ({server.returncode}); log:\n{(work / 'tessera.log').read_text()}",
                      file=sys.stderr)
                return 1
            try:
                if get(port, "/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                print("schemathesis: tessera serve did not become healthy in 60 s", file=sys.stderr)
                return 1
            time.sleep(0.1)
        base_url = f"http://127.0.0.1:{port}"
        lifted = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        lifted.request("PATCH", "/v1/admin/project", body=json.dumps({"rate_limits": UNLIMITED}),
                       headers={"Authorization": f"Bearer {keys['TESSERA_ST_SECRET_KEY']}",
                                "Content-Type": "application/json"})
        if lifted.getresponse().status != 200:
            print("schemathesis: cannot lift the project's rate limits", file=sys.stderr)
            return 1

        check = subprocess.run([str(ROOT / "scripts" / "openapi-check"), "--url", f"{base_url}/openapi.json"])
        if check.returncode != 0:
            return 1

        environment_st = {**environment, **keys, "TESSERA_ST_URL": base_url,
                          "SCHEMATHESIS_HOOKS": str(HERE / "hooks.py")}
        probe = subprocess.run([sys.executable, str(HERE / "contract_probe.py")], env=environment_st)
        probe_failed = probe.returncode != 0

        max_time = arguments.max_time or (60 if arguments.quick else 240)
        command = [
            str(Path(sys.executable).parent / "schemathesis"), "--config-file", str(HERE / "schemathesis.toml"),
            "run", f"{base_url}/openapi.json",
            "--url", base_url,
            "--checks", "all",
            "--max-time", str(max_time),
            "--report", "junit,ndjson",
            "--report-dir", str(work / "reports"),
            "--no-color",
        ]
        if arguments.quick:
            command += ["--max-examples", "12", "--phases", "examples,coverage,fuzzing,stateful"]
        command += arguments.extra
        print(f"› schemathesis against {base_url} ({'quick, ' if arguments.quick else ''}≤ {max_time} s)", file=sys.stderr)
        result = subprocess.run(command, env=environment_st, cwd=work)

        alive = server.poll() is None
        healthy = alive and get(port, "/health")[0] == 200
        server_log = (work / "tessera.log").read_text(errors="replace")
        crashed = any(marker in server_log for marker in ("Fatal error", "fatalError", "Segmentation fault", "SIGSEGV"))
        if not healthy or crashed:
            print(f"schemathesis: the server {'crashed' if crashed or not alive else 'is unhealthy'} after the run",
                  file=sys.stderr)
            keep = True
            return 1
        if probe_failed:
            keep = True
            print("schemathesis: the contract probes FAILED (see above)", file=sys.stderr)
            return 1
        if result.returncode != 0:
            keep = True
            print(f"schemathesis: FAILED (exit {result.returncode}); reports in {work / 'reports'}", file=sys.stderr)
            return result.returncode
        print("schemathesis: OK — contract probes pass; no server error, no schema violation, every check passed")
        return 0
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                print("schemathesis: tessera serve did not stop within 15 s of SIGTERM", file=sys.stderr)
        if keep:
            print(f"schemathesis: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
