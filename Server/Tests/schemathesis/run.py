"""Runs schemathesis against a throwaway `tessera serve` (see scripts/schemathesis).

Starts the given `tessera` binary on a free loopback port with a fresh SQLite database, creates a
project with `tessera projects create --json`, validates the served /openapi.json, then runs
schemathesis with every check and the auth hooks of hooks.py, and finally makes sure the server is
still healthy and logged no crash. Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "harness"))
import tessera_harness as harness  # noqa: E402

ROOT = harness.ROOT


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
    # PostgreSQL needs a master key file; SQLite would create one beside the database.
    environment = harness.clean_environment(TESSERA_MASTER_KEY_FILE=str(work / "master.key"))
    port = harness.free_port()
    server: subprocess.Popen | None = None
    keep = arguments.keep
    try:
        harness.generate_master_key(arguments.tessera, environment["TESSERA_MASTER_KEY_FILE"], what="schemathesis")
        project = harness.create_project(arguments.tessera, database, "Schemathesis", environment, what="schemathesis")
        keys = {
            "TESSERA_ST_PROJECT_ID": project.project_id,
            "TESSERA_ST_PUBLISHABLE_KEY": project.publishable_key,
            "TESSERA_ST_SECRET_KEY": project.secret_key,
            "TESSERA_ST_IDENTITY_SECRET": project.identity_secret,
            "TESSERA_ST_IDENTITY_KID": project.kid,
        }
        # The fuzzer is one client (127.0.0.1) sending thousands of requests a minute, many with
        # invented session tokens: lift the server's guessing limit, and the project's below.
        try:
            node = harness.start_node(arguments.tessera, database, "--failed-session-lookups-per-minute", "0",
                                      log=work / "tessera.log", environment=environment,
                                      what="schemathesis: tessera serve")
        except SystemExit as error:
            print(f"{error}; log:\n{(work / 'tessera.log').read_text()}", file=sys.stderr)
            return 1
        server, port, base_url = node.process, node.port, node.url
        if harness.lift_rate_limits(port, project.secret_key).status != 200:
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
        healthy = alive and harness.call(port, "GET", "/health", timeout=5).status == 200
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
        # A shutdown finishes the webhook deliveries in flight for up to 15 s (the fuzzer registers
        # endpoints that never answer): give it that, and a margin, before calling it stuck.
        if server is not None and server.poll() is None and harness.stop(server, timeout=25) == [None]:
            print("schemathesis: tessera serve did not stop within 25 s of SIGTERM", file=sys.stderr)
        if keep:
            print(f"schemathesis: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
