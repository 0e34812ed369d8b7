#!/usr/bin/env python3
"""Standard Webhooks interop: the server's WebhookSender delivers to a Python receiver, and the
`standardwebhooks` package from PyPI, unchanged, verifies what arrived.

It starts an HTTP receiver on 127.0.0.1, runs the Swift test WebhookInteropTests (which sends one
fresh delivery signed with two secrets, as during a secret rotation, and one signed ten minutes
ago) with the receiver's URL and the secrets in its environment, then checks:

- the fresh delivery verifies under the current secret and under the previous one alone;
- the same delivery with a tampered body, and under a wrong secret, is refused;
- the stale delivery (timestamp ten minutes old) is refused.

Then, through a live server (`tessera serve --allow-insecure-webhooks`, the debug build, SQLite in a
temporary directory): it creates a webhook with the admin API, starts anonymous sessions, and checks
that the dispatcher delivers each `session.created` event of the feed to the receiver, that
`standardwebhooks` verifies every delivery, that the body is the event exactly as the feed shows it,
that a receiver answering 500 gets the same `webhook-id` again on the retry, that a test event
arrives, and that the delivery log lists it all; it prints the delivery rate and latencies.

Usage (from the repository root, after `swift build --package-path Server --build-tests`):

    .venv/bin/python Server/Tests/webhooks/interop.py [--database postgres://…]

With `--database`, the live part runs two nodes on that PostgreSQL database (a fresh one: the run
writes its own master key).

Exit status 0 when every check passes.
"""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "Server" / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402
from webhook_receiver import WebhookReceiver  # noqa: E402


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def refused(secret: str, body: bytes, headers: dict[str, str]) -> bool:
    try:
        Webhook(secret).verify(body, headers)
    except WebhookVerificationError:
        return True
    return False


def main() -> int:
    receiver = WebhookReceiver().start()
    current, previous, wrong = new_secret(), new_secret(), new_secret()
    environment = dict(os.environ)
    environment.update({
        "TESSERA_WEBHOOK_INTEROP_URL": receiver.url,
        "TESSERA_WEBHOOK_INTEROP_SECRET": current,
        "TESSERA_WEBHOOK_INTEROP_PREVIOUS_SECRET": previous,
    })
    run = subprocess.run(
        ["swift", "test", "--package-path", str(ROOT / "Server"), "--skip-build", "--filter", "WebhookInteropTests"],
        env=environment, capture_output=True, text=True, timeout=600)
    receiver.stop()
    if run.returncode != 0:
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n", file=sys.stderr)
        print("webhook interop: the Swift sender test failed", file=sys.stderr)
        return 1

    failures: list[str] = []
    by_id = {delivery.webhook_id: (delivery.headers, delivery.raw) for delivery in receiver.snapshot()}
    if set(by_id) != {"evt_interop1", "evt_interop2"}:
        print(f"webhook interop: expected two deliveries, got {sorted(map(str, by_id))}", file=sys.stderr)
        return 1
    headers, body = by_id["evt_interop1"]
    if headers.get("content-type") != "application/json":
        failures.append(f"content-type is {headers.get('content-type')!r}")
    if len(headers.get("webhook-signature", "").split(" ")) != 2:
        failures.append("the fresh delivery does not carry two v1 signatures")
    for name, secret in (("current", current), ("previous", previous)):
        try:
            payload = Webhook(secret).verify(body, headers)
            if payload.get("id") != "evt_interop1":
                failures.append(f"{name} secret: the verified payload is {payload!r}")
        except WebhookVerificationError as error:
            failures.append(f"{name} secret: the fresh delivery was refused: {error}")
    tampered = body.replace(b"usr_a", b"usr_x")
    if tampered == body or not refused(current, tampered, headers):
        failures.append("a tampered body was accepted")
    if not refused(wrong, body, headers):
        failures.append("a wrong secret was accepted")
    stale_headers, stale_body = by_id["evt_interop2"]
    if not refused(current, stale_body, stale_headers):
        failures.append("a stale timestamp (10 minutes old) was accepted")

    for failure in failures:
        print(f"webhook interop: {failure}", file=sys.stderr)
    if failures:
        return 1
    print("webhook interop: OK — standardwebhooks verified the delivery under both secrets and refused a "
          "tampered body, a wrong secret and a stale timestamp")
    database_url = sys.argv[sys.argv.index("--database") + 1] if "--database" in sys.argv[:-1] else None
    return live(database_url)


def live(database_url: str | None = None) -> int:
    """Deliveries from a real `tessera serve` to a local receiver, verified by standardwebhooks: one node
    on SQLite, or two nodes on the PostgreSQL database `database_url` (the anonymous starts alternate
    between them, both deliver, and each event must arrive exactly once)."""
    tessera = os.environ.get("TESSERA_BIN") or str(ROOT / "Server" / ".build" / "debug" / "tessera")
    if not Path(tessera).exists():
        print(f"webhook interop: no tessera binary at {tessera} (build the server first)", file=sys.stderr)
        return 1
    # Armed, the next new event's first attempt is answered 500 (its webhook-id noted here): armed
    # before the request that writes the event, since the commit wakes the dispatcher at once and the
    # delivery can arrive before the test reads the event back from the feed.
    fail_next: list = [False]
    failed_first: list[str] = []
    def answer(delivery):
        if fail_next[0] and delivery.attempt == 1:
            fail_next[0] = False
            failed_first.append(delivery.webhook_id)
            return 500
        return 204

    receiver = WebhookReceiver(answer=answer).start()
    work = Path(tempfile.mkdtemp(prefix="tessera-webhooks-"))
    if database_url:
        database = database_url
        key = harness.write_master_key(work / "master.key")
        environment = harness.clean_environment(TESSERA_MASTER_KEY_FILE=key)
    else:
        database = f"sqlite:{work / 'tessera.sqlite'}"
        environment = harness.clean_environment()
    servers: list = []
    failures: list[str] = []
    try:
        project = harness.create_project(tessera, database, "Webhooks", environment, what="webhook interop")
        ports = []
        for index in range(2 if database_url else 1):
            node = harness.start_node(tessera, database, "--allow-insecure-webhooks", "--log-level", "warning",
                                      log=work / f"tessera-{index}.log", environment=environment,
                                      what="webhook interop: tessera serve")
            servers.append(node.process)
            ports.append(node.port)
        port = ports[0]
        harness.lift_rate_limits(port, project.secret_key)
        created = harness.call(port, "POST", "/v1/admin/webhooks", project.secret_key, {
            "url": receiver.url, "types": ["session.created"]})
        if created.status != 201:
            print(f"webhook interop: creating the webhook answered {created.status}: {created.body}", file=sys.stderr)
            return 1
        hook_id, secret = created.body["webhook"]["id"], created.body["secret"]

        count = 200
        committed: dict[str, float] = {}
        start = time.time()
        for index in range(count):
            answer = harness.call(ports[index % len(ports)], "POST", "/v1/sessions/anonymous",
                                  project.publishable_key, harness.new_installation())
            if answer.status not in (200, 201):
                failures.append(f"anonymous start answered {answer.status}")
                break
            committed[answer.body["session"]["id"]] = time.time()
        started = time.time() - start
        feed = harness.call(port, "GET", "/v1/admin/events?types=session.created&limit=200", project.secret_key)
        events = {event["id"]: event for event in feed.body.get("events", [])}

        def delivered() -> set[str]:
            return set(receiver.ids())

        ok, _ = harness.eventually(lambda: set(events) <= delivered(), seconds=60)
        finished = time.time()
        if len(events) != count or not ok:
            failures.append(f"{len(set(events) & delivered())} of {len(events)} events delivered "
                            f"({count} sessions started)")
        latencies: list[float] = []
        received = receiver.snapshot()
        for delivery in received:
            arrived, headers, body, event_id = delivery.arrived, delivery.headers, delivery.raw, delivery.webhook_id
            try:
                payload = Webhook(secret).verify(body, headers)
            except WebhookVerificationError as error:
                failures.append(f"{event_id}: refused by standardwebhooks: {error}")
                continue
            event = events.get(event_id)
            if event is None:
                failures.append(f"{event_id}: delivered but not in the feed")
            elif payload != event:
                failures.append(f"{event_id}: the body {payload!r} is not the feed's event {event!r}")
            else:
                latencies.append(arrived - committed[event["data"]["session_id"]])
        if len(received) != len(events):
            failures.append(f"{len(received)} deliveries for {len(events)} events (each once when all answer 2xx)")
        if latencies:
            latencies.sort()
            p50 = latencies[len(latencies) // 2]
            p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
            print(f"webhook interop: {len(latencies)} events delivered in {finished - start:.2f} s "
                  f"({len(latencies) / (finished - start):.0f} events/s, the {count} starts took {started:.2f} s); "
                  f"commit to delivery p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms")

        durations = [row["duration_ms"] for row in harness.call(
            port, "GET", f"/v1/admin/webhooks/{hook_id}/deliveries?limit=200", project.secret_key
        ).body.get("deliveries", []) if row.get("duration_ms") is not None]
        if durations:
            print(f"webhook interop: an attempt took {sum(durations) / len(durations):.0f} ms on average "
                  f"(max {max(durations)} ms)")

        # A receiver failure is retried about 5 s later with the same webhook-id; the log shows both attempts.
        with receiver.lock:
            fail_next[0] = True
        answer = harness.call(port, "POST", "/v1/sessions/anonymous", project.publishable_key,
                              harness.new_installation())
        session_id = answer.body.get("session", {}).get("id")
        after = max((event["sequence"] for event in events.values()), default=0)
        retried = harness.call(port, "GET", f"/v1/admin/events?types=session.created&after={after}",
                               project.secret_key).body.get("events", [])
        retry_id = retried[0]["id"] if retried else None
        if retry_id is None or retried[0]["data"]["session_id"] != session_id:
            failures.append(f"the feed has no session.created after {after}")
        else:
            ok, _ = harness.eventually(lambda: receiver.ids().count(retry_id) >= 2, seconds=30)
            with receiver.lock:
                if failed_first != [retry_id]:
                    failures.append(f"the first attempt answered 500 was {failed_first!r}, not {retry_id}")
            if not ok:
                failures.append(f"{retry_id}: not retried after a 500")

            def logged() -> dict | None:
                rows = harness.call(port, "GET", f"/v1/admin/webhooks/{hook_id}/deliveries?limit=200",
                                    project.secret_key).body.get("deliveries", [])
                return next((row for row in rows if row["event_id"] == retry_id), None)

            # The receiver has the second attempt a moment before the dispatcher records it.
            ok, _ = harness.eventually(lambda: (logged() or {}).get("status") == "delivered", seconds=10)
            row = logged()
            if not ok or not row or row["attempt"] != 2 or row["status_code"] != 204:
                failures.append(f"the delivery log of the retried event: {row!r}")

        test = harness.call(port, "POST", f"/v1/admin/webhooks/{hook_id}/test", project.secret_key)
        test_id = test.body.get("event_id")
        ok, _ = harness.eventually(lambda: test_id in delivered(), seconds=30)
        if test.status != 202 or not ok:
            failures.append(f"the test event ({test.status}) was not delivered")
        else:
            headers, body = next((d.headers, d.raw) for d in receiver.snapshot() if d.webhook_id == test_id)
            payload = Webhook(secret).verify(body, headers)
            if payload.get("type") != "webhook.test" or payload.get("data") != {"webhook_id": hook_id}:
                failures.append(f"the test event's body: {payload!r}")
        stopped = harness.stop(*servers)
        if stopped != [0] * len(servers):
            failures.append(f"tessera serve did not stop cleanly on SIGTERM: {stopped}")
    finally:
        harness.stop(*servers)
        receiver.stop()

    for failure in failures:
        print(f"webhook interop (live): {failure}", file=sys.stderr)
    if failures:
        print(f"webhook interop (live): kept {work}", file=sys.stderr)
        return 1
    harness.shutil.rmtree(work, ignore_errors=True)
    nodes = "two nodes on PostgreSQL" if database_url else "a live server on SQLite"
    print(f"webhook interop (live): OK — {nodes} delivered every session.created event of the feed once, each "
          "verified by standardwebhooks with the feed's body, retried a 500 with the same webhook-id, and "
          "delivered a test event")
    return 0


if __name__ == "__main__":
    sys.exit(main())
