#!/usr/bin/env python3
"""Webhook delivery with two `tessera serve` processes on one PostgreSQL database (loopback only).

    Server/Tests/multinode/webhooks.py --tessera PATH --database postgres://…

Both nodes run the delivery dispatcher (with --allow-insecure-webhooks). A receiver on 127.0.0.1
holds every delivery for a moment and records which `webhook-id`s are in flight at once. Checks:

1. **One node at a time.** Anonymous starts alternate between the nodes; every `session.created`
   is delivered, and no event is ever being delivered to the endpoint by both nodes at once (the
   receiver never has the same `webhook-id` in flight twice).
2. **A node stopped mid-delivery.** The receiver holds deliveries for seconds; node A is killed
   (SIGKILL) while requests it sent are in flight, so their answers never reach it. Node B, alone,
   delivers every event after A's leases expire (the dispatcher's lease is 60 s): each event of the
   phase arrives with a 204 that reached its sender.

Prints one line per check and exits non-zero when one fails; about two minutes (the lease).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
from webhook_receiver import WebhookReceiver  # noqa: E402

check = harness.Checks()


def start_sessions(ports: list[int], publishable_key: str, count: int) -> list[str]:
    """`count` anonymous starts alternating between `ports`; the session IDs."""
    sessions: list[str] = []
    for index in range(count):
        reply = harness.call(ports[index % len(ports)], "POST", "/v1/sessions/anonymous", publishable_key,
                             harness.new_installation())
        if reply.ok:
            sessions.append(reply.body["session"]["id"])
    return sessions


def session_events(port: int, secret_key: str, sessions: set[str]) -> dict[str, str]:
    """session ID → its session.created event's ID, from the feed."""
    found: dict[str, str] = {}
    after = 0
    while True:
        reply = harness.call(port, "GET", f"/v1/admin/events?after={after}&limit=200&types=session.created",
                             secret_key)
        events = reply.body.get("events") or []
        for event in events:
            if event["data"]["session_id"] in sessions:
                found[event["data"]["session_id"]] = event["id"]
        if not events:
            return found
        after = reply.body["next_after"]


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--database", required=True, help="a postgres:// URL (the run uses a new schema in it)")
    parser.add_argument("--starts", type=int, default=120, help="anonymous starts in the first phase")
    arguments = parser.parse_args()
    # A schema of its own: the database may hold another run's secrets, sealed under another master key.
    database = harness.with_query(arguments.database, f"schema=webhooks_{int(time.time())}")

    work = Path(tempfile.mkdtemp(prefix="tessera-webhooks-2n-"))
    environment = harness.clean_environment(TESSERA_MASTER_KEY_FILE=harness.write_master_key(work / "master.key"))
    project = harness.create_project(arguments.tessera, database, "Two nodes", environment, what="webhooks")
    nodes, ports = [], []
    receiver = WebhookReceiver(hold=0.2).start()
    try:
        for index in range(2):
            node = harness.start_node(arguments.tessera, database, "--allow-insecure-webhooks",
                                      log=work / f"node-{index}.log", environment=environment)
            nodes.append(node.process)
            ports.append(node.port)
        harness.lift_rate_limits(ports[0], project.secret_key)
        created = harness.call(ports[0], "POST", "/v1/admin/webhooks", project.secret_key, {
            "url": receiver.url, "types": ["session.created"]})
        check("webhook created", created.status == 201, str(created.body)[:200])

        # 1. Both nodes deliver; never one event from both at once.
        sessions = start_sessions(ports, project.publishable_key, arguments.starts)
        events = session_events(ports[1], project.secret_key, set(sessions))
        check("every start has its session.created in the feed", len(events) == len(sessions) == arguments.starts,
              f"{len(events)} events for {len(sessions)} sessions")
        wanted = set(events.values())
        all_delivered = wait_for(lambda: wanted <= receiver.accepted, 90)
        with receiver.lock:
            missing, overlaps, attempts = (len(wanted - receiver.accepted), list(receiver.overlaps),
                                           len(receiver.deliveries))
        check("both nodes delivered every event", all_delivered, f"{missing} of {len(wanted)} missing")
        check("no event was in flight from both nodes at once", not overlaps, f"overlapping: {overlaps[:5]}")
        print(f"  phase 1: {len(wanted)} events, {attempts} attempts")

        # 2. Node A dies while its deliveries are in flight; node B finishes them.
        receiver.hold = 4.0
        before_lost = len(receiver.lost)
        # Written through node A, whose dispatcher wakes on its own commits and claims them first.
        second = start_sessions([ports[0]], project.publishable_key, 30)
        second_events = session_events(ports[1], project.secret_key, set(second))
        wait_for(lambda: sum(receiver.in_flight.values()) >= 10, 20)
        time.sleep(0.5)
        nodes[0].send_signal(signal.SIGKILL)
        nodes[0].wait()
        in_flight_at_kill = sum(receiver.in_flight.values())
        time.sleep(4.5)  # the held answers are written now: those to node A find no one
        receiver.hold = 0.0
        with receiver.lock:
            lost = receiver.lost[before_lost:]
        check("node A had deliveries in flight when it was killed", len(lost) > 0,
              f"{in_flight_at_kill} in flight at the kill, {len(lost)} answers lost")
        wanted = set(second_events.values())
        finished = wait_for(lambda: wanted <= receiver.accepted, 150)
        with receiver.lock:
            missing, overlaps = len(wanted - receiver.accepted), list(receiver.overlaps)
        check("node B delivered every event of the phase, those node A lost included", finished,
              f"{missing} of {len(wanted)} missing")
        check("still no event in flight from both nodes at once", not overlaps, f"overlapping: {overlaps[:5]}")
        print(f"  phase 2: {len(wanted)} events, {len(lost)} answers lost with node A")
    finally:
        harness.stop(*nodes)
        receiver.stop()
    failures = check.failures
    print(f"webhooks on two nodes: {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
