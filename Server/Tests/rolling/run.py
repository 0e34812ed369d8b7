#!/usr/bin/env python3
"""A rolling upgrade and its rollback under load: the previous release and this tree on one PostgreSQL,
two nodes behind a load balancer of this script's own (loopback only, bounded in time).

    Server/Tests/rolling/run.py --old PATH --new PATH --database postgres://… [--phase-seconds 8]

`--old` is a `tessera` binary of the previous release, `--new` this tree's (scripts/rolling-upgrade builds
both: the previous one from the commit it names). The run:

1. two nodes of the previous release (A, B) serve the schema it made;
2. node C of the new release starts (it applies the expand steps), joins the balancer, A leaves it and
   is stopped (SIGTERM, drained); then D replaces B: every node runs the new release;
3. `tessera migrate status` (new release) lists C and D alive, and `migrate contract` has nothing to do;
4. the rollback, the same in reverse: E and F of the previous release replace C and D, on the
   expanded schema.

Meanwhile workers send mixed load through the balancer, one connection per request: anonymous starts,
identifies with an anonymous caller (promotions and merges of a few shared `sub`s), heartbeats and
revocations, while the nodes deliver webhooks to a receiver. Checked at the end (the crash harness's
invariants): no request failed (no answer, or a 5xx); every acknowledged session still exists (its token
answers 200 or an ended session's error, never `session_not_found`), every acknowledged revocation holds,
every verified session never revoked answers 200; the event feed is gap-free and in order; every event of
a subscribed type after the webhook's creation was delivered (2xx) and signed. Prints one line per check,
the figures per phase, and exits non-zero when a check fails.
"""
from __future__ import annotations

import argparse
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "crash"))
import feed  # noqa: E402
import webhook_checks as webhooks  # noqa: E402
import tessera_harness as harness  # noqa: E402

check = harness.Checks()


class Balancer:
    """A TCP round-robin balancer on loopback: each accepted connection goes to the next backend in the
    current list; a backend taken out gets no new connection, and the ones it has finish."""

    def __init__(self) -> None:
        self.backends: list[int] = []
        self.lock = threading.Lock()
        self.turn = 0
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self.accept, name="balancer", daemon=True).start()

    def set(self, backends: list[int]) -> None:
        with self.lock:
            self.backends = list(backends)

    def accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                backend = self.backends[self.turn % len(self.backends)] if self.backends else None
                self.turn += 1
            if backend is None:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", backend), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(source, target), daemon=True).start()

    @staticmethod
    def pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.closed = True
        self.listener.close()


class Load:
    """The workers' shared state: acknowledged sessions, revocations, and the outcome of every request."""

    def __init__(self, port: int, project: harness.Project, seed: int) -> None:
        self.port, self.project, self.seed = port, project, seed
        self.lock = threading.Lock()
        self.phase = "previous"
        self.requests: Counter[str] = Counter()  # per phase
        self.failures: list[str] = []  # no answer or a 5xx: phase, operation, status, code
        self.refusals: Counter[str] = Counter()  # 4xx by operation and code (expected ones included)
        self.sessions: dict[str, dict] = {}  # token -> {kind, revoked}
        self.stopping = threading.Event()
        self.subs = [f"user-{index}" for index in range(12)]

    def call(self, operation: str, method: str, path: str, bearer: str | None, body: object = None) -> harness.Reply:
        reply = harness.call(self.port, method, path, bearer, body, timeout=30)
        with self.lock:
            self.requests[self.phase] += 1
            if reply.status == 0 or reply.status >= 500:
                self.failures.append(f"{self.phase} {operation} {reply.status} {reply.code or reply.failure}"
                                     f" {reply.detail}".strip())
            elif reply.status >= 400:
                self.refusals[f"{operation} {reply.status} {reply.code}"] += 1
        return reply

    def worker(self, index: int) -> None:
        rng = random.Random(f"{self.seed}-{index}")
        mine: list[str] = []  # this worker's anonymous session tokens
        while not self.stopping.is_set():
            roll = rng.random()
            if roll < 0.3 or not mine:
                reply = self.call("anonymous_start", "POST", "/v1/sessions/anonymous", self.project.publishable_key,
                                  harness.new_installation())
                if reply.ok and reply.body.get("session_token"):
                    token = reply.body["session_token"]
                    with self.lock:
                        self.sessions[token] = {"kind": "anonymous", "revoked": False}
                    mine.append(token)
            elif roll < 0.55:
                token = rng.choice(mine)
                self.call("heartbeat", "POST", "/v1/sessions/authenticate", token)
            elif roll < 0.8:
                caller = mine.pop(rng.randrange(len(mine)))
                claims = harness.claims_for(rng.choice(self.subs), jti=uuid.uuid4().hex)
                identity = harness.identity_token(self.project.identity_secret, self.project.kid, claims)
                reply = self.call("identify", "POST", "/v1/sessions/identify", caller, {"identity_token": identity})
                if reply.ok and reply.body.get("session_token"):
                    with self.lock:
                        self.sessions[reply.body["session_token"]] = {"kind": "verified", "revoked": False}
                        # A merged anonymous profile goes with its sessions: the caller's may be gone.
                        self.sessions[caller]["consumed"] = True
            else:
                token = mine.pop(rng.randrange(len(mine)))
                reply = self.call("revoke", "POST", "/v1/sessions/revoke", token, {})
                if reply.ok:
                    with self.lock:
                        self.sessions[token]["revoked"] = True


def start(binary: str, database: str, environment: dict[str, str], work: Path, name: str, ready: str = "/health"):
    """Starts a node and waits until `ready` answers 200. A node of this tree waits for /health/ready;
    one of the default previous commit for /health only: it predates expand/contract and answers
    ready only while the schema's latest step is its own (no release shipped that check)."""
    node = harness.start_node(binary, database, "--allow-insecure-webhooks", log=work / f"node-{name}.log",
                              environment=environment, what=f"node {name}", path=ready, timeout=180, drain_seconds=1)
    return {"name": name, "port": node.port, "process": node.process, "log": node.log}


def replace(balancer: Balancer, nodes: list[dict], old: dict, new: dict) -> None:
    """`new` joins the balancer, `old` leaves it, then `old` is stopped (SIGTERM: it drains)."""
    nodes.append(new)
    balancer.set([node["port"] for node in nodes])
    nodes.remove(old)
    balancer.set([node["port"] for node in nodes])
    status = harness.stop(old["process"], timeout=60)[0]
    check(f"node {old['name']} stopped cleanly on SIGTERM", status == 0, f"exit status {status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True, help="tessera of the previous release")
    parser.add_argument("--new", required=True, help="tessera of this tree")
    parser.add_argument("--database", required=True, help="postgres://… (a schema of its own is used)")
    parser.add_argument("--phase-seconds", type=float, default=8, help="load before and after each replacement")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--keep", action="store_true", help="keep the work directory (node logs)")
    arguments = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="tessera-rolling-"))
    database = harness.with_query(arguments.database, f"schema=rolling_{uuid.uuid4().hex[:12]}")
    key = harness.write_master_key(work / "master.key")
    # The final check looks every session up from one address: no limit on failed lookups.
    environment = harness.clean_environment(TESSERA_MASTER_KEY_FILE=key, TESSERA_LOG_LEVEL="notice",
                                            TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE="0")
    receiver = webhooks.Receiver(arguments.seed)
    receiver.start()
    balancer = Balancer()
    nodes: list[dict] = []
    started = time.monotonic()
    try:
        nodes += [start(arguments.old, database, environment, work, name) for name in ("A", "B")]
        balancer.set([node["port"] for node in nodes])
        project = harness.create_project(arguments.old, database, "Rolling", environment, what="rolling")
        lifted = harness.lift_rate_limits(balancer.port, project.secret_key)
        created = harness.call(balancer.port, "POST", "/v1/admin/webhooks", project.secret_key,
                               {"url": receiver.url, "types": webhooks.SUBSCRIBED})
        if lifted.status != 200 or created.status != 201:
            raise SystemExit(f"rolling: setup answered {lifted.status} {created.status} {created.code}")
        receiver.secret = created.body["secret"]
        # The webhook receives the events after its creation.
        before, _ = feed.read_feed(lambda path, secret: harness.call(balancer.port, "GET", path, secret, timeout=30),
                                   lambda: project.secret_key)
        first_sequence = max([e.get("sequence", 0) for e in before] + [0])

        load = Load(balancer.port, project, arguments.seed)
        workers = [threading.Thread(target=load.worker, args=(index,), daemon=True)
                   for index in range(arguments.workers)]
        for worker in workers:
            worker.start()

        def phase(name: str) -> None:
            with load.lock:
                load.phase = name
            time.sleep(arguments.phase_seconds)

        phase("previous")
        for old_name, new_name, label in (("A", "C", "upgrading"), ("B", "D", "upgraded")):
            new = start(arguments.new, database, environment, work, new_name, ready="/health/ready")
            replace(balancer, nodes, next(n for n in nodes if n["name"] == old_name), new)
            phase(label)
        status = subprocess.run([arguments.new, "migrate", "status", "--database", database], capture_output=True,
                                text=True, env=environment, timeout=120)
        live = [line for line in status.stdout.splitlines() if "  release " in line]
        check("migrate status (new release) lists both new nodes alive",
              status.returncode == 0 and len(live) == 2 and all("release 0." in line for line in live),
              f"{status.returncode} {status.stdout} {status.stderr}")
        contract = subprocess.run([arguments.new, "migrate", "contract", "--database", database], capture_output=True,
                                  text=True, env=environment, timeout=120)
        check("migrate contract has no step to run", contract.returncode == 0 and "No pending contract step" in
              contract.stdout, f"{contract.returncode} {contract.stdout} {contract.stderr}")
        for old_name, new_name, label in (("C", "E", "rolling back"), ("D", "F", "rolled back")):
            new = start(arguments.old, database, environment, work, new_name)
            replace(balancer, nodes, next(n for n in nodes if n["name"] == old_name), new)
            phase(label)
        load.stopping.set()
        for worker in workers:
            worker.join(timeout=60)

        # The checks, through the nodes of the previous release that serve at the end.
        check("no request failed (no answer or 5xx)", not load.failures,
              f"{len(load.failures)} failed, e.g. {load.failures[:5]}")
        lost, revoked_alive, verified_dead = [], [], []
        for token, fact in list(load.sessions.items()):
            reply = harness.call(balancer.port, "POST", "/v1/sessions/authenticate", token, timeout=30)
            if reply.status == 0 or reply.status >= 500 or (reply.code == "session_not_found"
                                                             and not fact.get("consumed")):
                lost.append(f"{fact['kind']} {reply.status} {reply.code}")
            elif fact["revoked"] and reply.ok:
                revoked_alive.append(token[:12])
            elif fact["kind"] == "verified" and not fact["revoked"] and not reply.ok:
                verified_dead.append(f"{reply.status} {reply.code}")
        check(f"every acknowledged session exists ({len(load.sessions)} checked)", not lost, f"{lost[:5]}")
        check("every acknowledged revocation holds", not revoked_alive, f"{revoked_alive[:5]}")
        check("every verified session never revoked is alive", not verified_dead, f"{verified_dead[:5]}")
        events, problems = feed.read_feed(
            lambda path, secret: harness.call(balancer.port, "GET", path, secret, timeout=30),
            lambda: project.secret_key)
        problems += feed.sequence_problems(events)
        check(f"the event feed is gap-free and in order ({len(events)} events)", not problems, f"{problems[:3]}")
        expected = webhooks.expected_deliveries(events, first_sequence, webhooks.SUBSCRIBED)
        delivered, waited = harness.eventually(lambda: set(expected) <= receiver.delivered(), seconds=120,
                                               interval=0.5)
        deliveries = receiver.snapshot()
        problems = webhooks.delivery_problems(events, deliveries, first_sequence, webhooks.SUBSCRIBED)
        check(f"every subscribed event was delivered and signed ({len(expected)} events, {waited:.1f} s after)",
              delivered and not problems, f"{problems[:3]}")
        print(f"requests per phase: {dict(load.requests)}; total {sum(load.requests.values())}; "
              f"failed {len(load.failures)}; 4xx {dict(load.refusals)}")
        print(f"webhooks: {webhooks.summary(deliveries, receiver.broken)}")
        print(f"took {time.monotonic() - started:.0f} s; load average {harness.load_average()}")
    finally:
        balancer.close()
        harness.stop(*[node["process"] for node in nodes], timeout=60)
        receiver.stop()
        if arguments.keep:
            print(f"rolling: kept {work}")
        else:
            subprocess.run(["rm", "-rf", str(work)], check=False)
    print(f"rolling: {len(check.passes)} passed, {len(check.failures)} failed")
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
