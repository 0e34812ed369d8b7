#!/usr/bin/env python3
"""Graceful shutdown of a real `tessera serve` process under load (SQLite, loopback, bounded in time).

    Server/Tests/shutdown/run.py --tessera PATH [--rounds 3] [--clients 16]

Each round starts `tessera serve` on one SQLite database, drives anonymous starts (writes) and
heartbeats (reads) from several keep-alive clients, sends SIGTERM while requests are in flight, and
checks: the process exits with status 0 within 15 s; every answer received was complete and not a
5xx (a refused or reset connection after the listener closed is expected, an answer cut short is
not); after a restart on the same database every acknowledged anonymous start still has its
session (its token authenticates). Prints one line per check; exits non-zero when one fails.
"""
import argparse, http.client, json, os, signal, subprocess, sys, tempfile, threading, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

check = harness.Checks()
failures = check.failures


class Client(threading.Thread):
    """Keeps one connection busy with anonymous starts and heartbeats until told to stop."""

    def __init__(self, port, publishable_key, results, stop):
        super().__init__(daemon=True)
        self.port, self.publishable_key, self.results, self.stop = port, publishable_key, results, stop
        self.tokens = []

    def run(self):
        connection = None
        while not self.stop.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                if self.tokens and len(self.results["statuses"]) % 2:
                    connection.request("POST", "/v1/sessions/authenticate",
                                       headers={"Authorization": f"Bearer {self.tokens[-1]}"})
                    kind = "heartbeat"
                else:
                    body = json.dumps(harness.new_installation())
                    connection.request("POST", "/v1/sessions/anonymous", body=body, headers={
                        "Authorization": f"Bearer {self.publishable_key}", "Content-Type": "application/json"})
                    kind = "anonymous"
                response = connection.getresponse()
                raw = response.read()
                length = response.getheader("Content-Length")
                if length is not None and int(length) != len(raw):
                    self.results["truncated"].append(kind)
                self.results["statuses"].append(response.status)
                if response.status >= 500:
                    self.results["server_errors"].append((kind, response.status, raw[:200]))
                elif kind == "anonymous" and response.status in (200, 201):
                    token = json.loads(raw)["session_token"]
                    self.tokens.append(token)
                    self.results["acknowledged"].append(token)
            except (http.client.IncompleteRead, json.JSONDecodeError) as error:
                self.results["truncated"].append(repr(error))
                connection = None
            except (OSError, http.client.HTTPException):
                # The listener is closing or closed: the request was not answered, which is allowed.
                self.results["refused"] += 1
                connection = None
                time.sleep(0.02)


def round_trip(tessera, database, round_number):
    log = os.path.join(os.path.dirname(database[len("sqlite:"):]), f"serve-{round_number}.log")
    # A drain of 2 s: /health/ready must answer 503 while the listener still serves.
    node = harness.start_node(tessera, database, "--log-level", "warning", log=log, drain_seconds=2)
    return node.port, node.process


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="tessera-shutdown-")
    database = f"sqlite:{os.path.join(work, 'tessera.sqlite')}"
    publishable_key = harness.create_project(arguments.tessera, database, "Shutdown", what="shutdown").publishable_key
    acknowledged = []
    for round_number in range(1, arguments.rounds + 1):
        port, process = round_trip(arguments.tessera, database, round_number)
        results = {"statuses": [], "server_errors": [], "truncated": [], "acknowledged": [], "refused": 0}
        stop = threading.Event()
        threads = [Client(port, publishable_key, results, stop) for _ in range(arguments.clients)]
        for thread in threads:
            thread.start()
        time.sleep(1.0 + 0.5 * round_number)
        answered_before = len(results["statuses"])
        process.send_signal(signal.SIGTERM)
        started = time.time()
        time.sleep(0.3)
        draining = harness.call(port, "GET", "/health/ready", timeout=2).status
        check(f"round {round_number}: draining after SIGTERM, /health/ready answers 503 (got {draining})",
              draining == 503)
        try:
            status = process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            status = "timeout"
        elapsed = time.time() - started
        time.sleep(0.3)
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        check(f"round {round_number}: SIGTERM under load → exit 0 in {elapsed:.1f} s", status == 0, f"status {status}")
        check(f"round {round_number}: {len(results['statuses'])} answers ({answered_before} before SIGTERM), "
              f"none a 5xx", not results["server_errors"], str(results["server_errors"][:3]))
        check(f"round {round_number}: no answer cut short", not results["truncated"], str(results["truncated"][:3]))
        check(f"round {round_number}: load was running when SIGTERM arrived", answered_before > 0)
        acknowledged += results["acknowledged"]

    port, process = round_trip(arguments.tessera, database, 0)
    lost = []
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for token in acknowledged:
            connection.request("POST", "/v1/sessions/authenticate", headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                lost.append(response.status)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
    check(f"after restart: all {len(acknowledged)} acknowledged anonymous starts still have their session",
          not lost and len(acknowledged) > 0, f"{len(lost)} lost: {lost[:5]}")
    print(f"shutdown: {arguments.rounds} rounds, {len(acknowledged)} acknowledged writes, "
          f"{len(failures)} failed checks")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
