#!/usr/bin/env python3
"""Heap allocations per request of `tessera serve`, for one build or several side by side.

    python3 Server/Benchmarks/allocs/allocs.py --tessera BEFORE --tessera AFTER [--requests 5000]

Compiles count.c (clang or cc) into a preloadable library, starts each binary on a fresh SQLite
database with it preloaded, and sends each scenario's requests one after another on one keep-alive
connection (after a warm-up): the counters read before and after give allocations and bytes asked
for per request. Unlike requests per second, these figures do not move with the machine's load, so
two builds can be compared exactly: a difference of 1.00 is one `malloc` more on every request.

  health             GET /health (no credential: the HTTP edge alone, the reference)
  heartbeat          POST /v1/sessions/authenticate, no body, Bearer st_… of one session
  heartbeat-jwt      the same with the session JWT as credential
  heartbeat-bound    the heartbeat of sessions bound to a device key (RFC 9449): Authorization: DPoP
                     st_… and a fresh DPoP proof per request, over 1,100 sessions and keys in turn
                     (more than the server's key cache holds: every proof's key read anew, as the
                     realistic heartbeat's)
  anonymous          POST /v1/sessions/anonymous, a fresh installation per request
  identify           POST /v1/sessions/identify, a fresh identity token (new user) per request
"""

import argparse
import http.client
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "backends"))
from dpop_proof import DeviceKey  # noqa: E402  (P-256 keys and DPoP proofs made with `cryptography`)

# More bound sessions than DPoPGate's verifier keeps keys for (1,024): each proof's key is read anew.
BOUND_SESSIONS = 1100

HERE = Path(__file__).resolve().parent


def build_counter(work: Path) -> Path:
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        raise SystemExit("allocs: needs clang or cc to build count.c")
    library = work / "count.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(HERE / "count.c"), "-ldl"],
                   check=True)
    return library


class Counted:
    """One `tessera serve` with the counter preloaded."""

    def __init__(self, tessera: str, library: Path, work: Path):
        self.work = work
        self.out = work / "counts"
        database = f"sqlite:{work / 'tessera.sqlite'}"
        environment = harness.clean_environment()
        self.project = harness.create_project(tessera, database, "allocs", environment=environment,
                                              what="allocs")
        environment.update(LD_PRELOAD=str(library), TESSERA_ALLOCS_OUT=str(self.out))
        node = harness.start_node(tessera, database, log=work / "serve.log", environment=environment,
                                  what="allocs: tessera serve")
        self.port, self.process = node.port, node.process
        harness.lift_rate_limits(self.port, self.project.secret_key)

    def counters(self) -> tuple[int, int]:
        before = self.out.read_text().count("\n") if self.out.exists() else 0
        self.process.send_signal(signal.SIGUSR2)
        for _ in range(200):
            if self.out.exists() and self.out.read_text().count("\n") > before:
                break
            time.sleep(0.01)
        fields = dict(item.split("=") for item in self.out.read_text().splitlines()[-1].split())
        return int(fields["allocations"]), int(fields["bytes"])

    def stop(self) -> None:
        harness.stop(self.process)


def scenarios(server: Counted):
    """(name, a function sending one request and checking its answer)."""
    project = server.project
    client = harness.Client(server.port)
    started = harness.call(server.port, "POST", "/v1/sessions/anonymous", project.publishable_key,
                           harness.new_installation())
    token, jwt = started.body["session_token"], started.body["session_jwt"]

    def expect(reply: harness.Reply, status: int, what: str) -> None:
        if reply.status != status:
            raise SystemExit(f"allocs: {what} answered {reply.status} {reply.body}")

    def identify() -> None:
        sub = f"user-{uuid.uuid4().hex}"
        identity = harness.identity_token(project.identity_secret, project.kid, harness.claims_for(sub, jti=uuid.uuid4().hex))
        expect(client.call("POST", "/v1/sessions/identify", project.publishable_key, {"identity_token": identity}),
               200, "identify")

    url = f"http://127.0.0.1:{server.port}"
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)

    def send(path: str, headers: dict[str, str], body: object = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers = {**headers, "Content-Type": "application/json"}
        connection.request("POST", path, body=data, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else {}

    bound: list[tuple[DeviceKey, str]] = []
    for _ in range(BOUND_SESSIONS):
        key = DeviceKey()
        path = "/v1/sessions/anonymous"
        status, body = send(path, {"Authorization": f"Bearer {project.publishable_key}",
                                   "DPoP": key.proof("POST", url + path, project.publishable_key)},
                            harness.new_installation())
        if status != 201 or (body.get("session", {}).get("binding") or {}).get("jkt") != key.jkt:
            raise SystemExit(f"allocs: a bound anonymous start answered {status} {body}")
        bound.append((key, body["session_token"]))
    turn = [0]

    def bound_heartbeat() -> None:
        key, bound_token = bound[turn[0] % len(bound)]
        turn[0] += 1
        path = "/v1/sessions/authenticate"
        status, body = send(path, {"Authorization": f"DPoP {bound_token}",
                                   "DPoP": key.proof("POST", url + path, bound_token)})
        if status != 200:
            raise SystemExit(f"allocs: a bound heartbeat answered {status} {body}")

    return [
        ("health", lambda: expect(client.call("GET", "/health"), 200, "health")),
        ("heartbeat", lambda: expect(client.call("POST", "/v1/sessions/authenticate", token), 200, "heartbeat")),
        ("heartbeat-bound", bound_heartbeat),
        ("heartbeat-jwt", lambda: expect(client.call("POST", "/v1/sessions/authenticate", jwt), 200, "heartbeat")),
        ("anonymous", lambda: expect(client.call("POST", "/v1/sessions/anonymous", project.publishable_key,
                                                 harness.new_installation()), 201, "anonymous start")),
        ("identify", identify),
    ]


def measure(tessera: str, library: Path, requests: int, warmup: int, keep: bool) -> dict[str, tuple[float, float]]:
    work = Path(tempfile.mkdtemp(prefix="tessera-allocs-"))
    server = Counted(tessera, library, work)
    figures = {}
    try:
        for name, send in scenarios(server):
            for _ in range(warmup):
                send()
            time.sleep(0.2)
            allocations, size = server.counters()
            for _ in range(requests):
                send()
            time.sleep(0.2)
            allocations_after, size_after = server.counters()
            figures[name] = ((allocations_after - allocations) / requests, (size_after - size) / requests)
    finally:
        server.stop()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", action="append", required=True, help="a tessera binary (repeat to compare)")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tessera-allocs-lib-") as directory:
        library = build_counter(Path(directory))
        results = [(binary, measure(binary, library, arguments.requests, arguments.warmup, arguments.keep))
                   for binary in arguments.tessera]
    print(f"heap allocations per request ({arguments.requests} sequential requests after {arguments.warmup} "
          "of warm-up; bytes = sizes asked for)")
    header = f"{'scenario':<15}" + "".join(f"{Path(binary).name[:24]:>28}" for binary, _ in results)
    print(header)
    for name in results[0][1]:
        row = f"{name:<15}"
        for _, figures in results:
            allocations, size = figures[name]
            row += f"{allocations:>14.2f} {size:>9.0f} B  "
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
