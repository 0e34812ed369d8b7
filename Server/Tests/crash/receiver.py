"""A webhook receiver for the crash harness (`run.py --webhooks`): records every delivery it is sent.

`Receiver` is a local HTTP server in a thread: every POST is recorded with its `webhook-id`,
`webhook-timestamp` and `webhook-signature` headers and whether the signature verifies (Standard
Webhooks v1: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes). It answers
204, except the first attempt of a seeded few events, answered 500 so that the server retries them.
`delivery_problems` is the pure check after the run (unit-tested in test_model.py).

Violation markers: UNDELIVERED EVENT, BAD WEBHOOK SIGNATURE, WEBHOOK OF NO EVENT, WEBHOOK BODY MISMATCH,
UNSUBSCRIBED EVENT DELIVERED.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# What the crash harness subscribes to: every type about profiles, sessions and devices (key
# rotations, project and webhook events are not: their absence from the deliveries is checked too).
SUBSCRIBED = ["profile.created", "profile.promoted", "profile.merged", "profile.erased", "profile.blocked",
              "profile.unblocked", "session.created", "session.ended", "device.registered", "device.removed"]


@dataclass
class Delivery:
    webhook_id: str
    timestamp: str
    verified: bool
    body: dict
    status: int  # what the receiver answered


def verify(secret: str, webhook_id: str, timestamp: str, body: bytes, header: str) -> bool:
    """Standard Webhooks v1: any `v1,` signature in the header over `id.timestamp.body`."""
    if not secret.startswith("whsec_"):
        return False
    key = base64.b64decode(secret[len("whsec_"):])
    expected = base64.b64encode(hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body,
                                         hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(part[3:], expected) for part in header.split() if part.startswith("v1,"))


class Receiver:
    def __init__(self, seed: int, fail_first: float = 0.03):
        self.seed, self.fail_first = seed, fail_first
        self.secret = ""
        self.lock = threading.Lock()
        self.deliveries: list[Delivery] = []
        self.attempts: dict[str, int] = {}
        self.broken = 0  # connections that failed mid-request
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = receiver.record(self.headers.get("webhook-id") or "",
                                         self.headers.get("webhook-timestamp") or "",
                                         self.headers.get("webhook-signature") or "", body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # the dispatcher opens many connections at once

            def handle_error(self, request, client_address):
                # A SIGKILLed server resets its connections mid-request: counted, not printed.
                with receiver.lock:
                    receiver.broken += 1

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="webhook-receiver", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def record(self, webhook_id: str, timestamp: str, signature: str, body: bytes) -> int:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = {}
        verified = bool(self.secret) and verify(self.secret, webhook_id, timestamp, body, signature)
        with self.lock:
            attempt = self.attempts.get(webhook_id, 0) + 1
            self.attempts[webhook_id] = attempt
            digest = hashlib.sha256(f"{self.seed}-{webhook_id}".encode()).digest()
            status = 500 if attempt == 1 and digest[0] < 256 * self.fail_first else 204
            self.deliveries.append(Delivery(webhook_id, timestamp, verified,
                                            parsed if isinstance(parsed, dict) else {}, status))
        return status

    def delivered(self) -> set[str]:
        with self.lock:
            return {d.webhook_id for d in self.deliveries if 200 <= d.status < 300}

    def snapshot(self) -> list[Delivery]:
        with self.lock:
            return list(self.deliveries)


def expected_deliveries(events: list[dict], after: int, types: list[str]) -> dict[str, dict]:
    """The events the endpoint must receive: of a subscribed type, after `after` (its creation)."""
    return {e["id"]: e for e in events if e.get("type") in types and isinstance(e.get("sequence"), int)
            and e["sequence"] > after}


def delivery_problems(events: list[dict], deliveries: list[Delivery], after: int, types: list[str]) -> list[str]:
    problems = []
    feed = {e.get("id"): e for e in events}
    accepted = {d.webhook_id for d in deliveries if 200 <= d.status < 300}
    missing = [(eid, e.get("sequence"), e.get("type")) for eid, e in expected_deliveries(events, after, types).items()
               if eid not in accepted]
    if missing:
        problems.append(f"UNDELIVERED EVENT: {len(missing)} events of a subscribed type after sequence {after} were "
                        f"never delivered (2xx), e.g. {missing[:3]}")
    unsigned = [d.webhook_id for d in deliveries if not d.verified]
    if unsigned:
        problems.append(f"BAD WEBHOOK SIGNATURE: {len(unsigned)} deliveries do not verify, e.g. {unsigned[:3]}")
    unknown = sorted({d.webhook_id for d in deliveries if d.webhook_id not in feed})
    if unknown:
        problems.append(f"WEBHOOK OF NO EVENT: {len(unknown)} delivered IDs are no event of the feed, e.g. {unknown[:3]}")
    mismatched = sorted({d.webhook_id for d in deliveries if d.webhook_id in feed and (
        d.body.get("id") != d.webhook_id or d.body.get("sequence") != feed[d.webhook_id].get("sequence")
        or d.body.get("type") != feed[d.webhook_id].get("type"))})
    if mismatched:
        problems.append(f"WEBHOOK BODY MISMATCH: {len(mismatched)} deliveries whose body is not the feed's event "
                        f"(id, sequence, type), e.g. {mismatched[:3]}")
    unsubscribed = sorted({d.body.get("type") for d in deliveries if d.body.get("type") not in types})
    if unsubscribed:
        problems.append(f"UNSUBSCRIBED EVENT DELIVERED: types {unsubscribed}")
    return problems


def summary(deliveries: list[Delivery], broken: int = 0) -> str:
    accepted = [d for d in deliveries if 200 <= d.status < 300]
    distinct = {d.webhook_id for d in accepted}
    retried = sum(1 for d in deliveries if d.status >= 500)
    return (f"{len(deliveries)} POSTs received, {len(distinct)} events delivered, {len(accepted) - len(distinct)} "
            f"delivered more than once, {retried} first attempts answered 500 (retried), {broken} connections "
            "broken mid-request (kills)")
