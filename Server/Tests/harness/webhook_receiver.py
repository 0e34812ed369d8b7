"""The webhook receiver every Python harness of Tessera shares: a local HTTP server that records each
delivery it is sent.

`WebhookReceiver` listens on 127.0.0.1 (a free port) in a thread. Every POST is recorded as a
`Delivery` (its headers, raw body, parsed JSON object, arrival time, the attempt number of its
`webhook-id`, the status answered, whether its Standard Webhooks signature verifies under
`receiver.secret`). What it answers is the `answer` callable's choice (default 204); `hold` keeps
each answer back that many seconds, and a sender that closed its connection meanwhile is counted
as `lost`, not delivered; a request whose body ends before its `Content-Length` (a sender killed
mid-body) is no delivery either, it counts in `broken`. Two attempts of one `webhook-id` open at once are recorded in `overlaps`,
connections that broke mid-request in `broken`.

Used by the crash, race, rolling-upgrade, multi-node and interop harnesses and the console's flows:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
    from webhook_receiver import WebhookReceiver

Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Delivery:
    webhook_id: str
    timestamp: str
    verified: bool  # the signature verifies under the receiver's secret when it arrived
    body: dict  # the body's JSON object ({} when it is not one)
    status: int  # what the receiver answered
    attempt: int = 1  # the how-many-th POST of this webhook-id
    raw: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased
    arrived: float = 0.0  # time.time() when the body was read


def signature(secret: str, webhook_id: str, timestamp: str, body: bytes) -> str:
    """Standard Webhooks v1: base64 HMAC-SHA256 of `id.timestamp.body` under the `whsec_` secret's bytes."""
    key = base64.b64decode(secret[len("whsec_"):])
    return base64.b64encode(hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()


def verify(secret: str, webhook_id: str, timestamp: str, body: bytes, header: str) -> bool:
    """Standard Webhooks v1: any `v1,` signature in the header over `id.timestamp.body`."""
    if not secret.startswith("whsec_"):
        return False
    expected = signature(secret, webhook_id, timestamp, body)
    return any(hmac.compare_digest(part[3:], expected) for part in header.split() if part.startswith("v1,"))


def peer_closed(connection: socket.socket) -> bool:
    """Whether the other end has closed `connection` (a FIN or a reset): it is readable and a peek
    reads nothing. A sender waiting for its answer sends nothing meanwhile."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class WebhookReceiver:
    """A local HTTP server recording every delivery; `start()` it, give the server `url`, `stop()` it."""

    def __init__(self, answer: Callable[[Delivery], int] | None = None, hold: float = 0.0, secret: str = "",
                 status: int = 204):
        self.answer = answer or (lambda delivery: status)
        self.hold = hold
        self.secret = secret
        self.lock = threading.Lock()
        self.deliveries: list[Delivery] = []
        self.attempts: dict[str, int] = {}
        self.in_flight: dict[str, int] = {}
        self.overlaps: list[str] = []  # webhook-ids POSTed again while an attempt was still open
        self.accepted: set[str] = set()  # a 2xx was written to the sender's connection
        self.lost: list[str] = []  # the sender was gone when the answer was written
        self.broken = 0  # connections that failed mid-request
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if len(body) < length:
                    # The sender died mid-body (a SIGKILL between the head and the body's last
                    # byte): an HTTP server answers no such request, so it is no delivery.
                    raise ConnectionResetError(f"the body ended after {len(body)} of {length} bytes")
                receiver.handle(self, {name.lower(): value for name, value in self.headers.items()}, body)

            def log_message(self, *arguments):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            # The dispatcher opens many connections at once: socketserver's backlog of 5 would drop
            # connections, and each dropped SYN costs a second of retransmission.
            request_queue_size = 256

            def handle_error(self, request, client_address):
                # A SIGKILLed server resets its connections mid-request: counted, not printed.
                with receiver.lock:
                    receiver.broken += 1

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="webhook-receiver", daemon=True)

    def start(self) -> "WebhookReceiver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "WebhookReceiver":
        return self.start()

    def __exit__(self, *exception) -> None:
        self.stop()

    def record(self, headers: dict[str, str], body: bytes) -> Delivery:
        """Records one POST and decides its answer (no socket: the unit tests call it directly)."""
        webhook_id, timestamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = {}
        with self.lock:
            verified = bool(self.secret) and verify(self.secret, webhook_id, timestamp, body,
                                                    headers.get("webhook-signature", ""))
            attempt = self.attempts.get(webhook_id, 0) + 1
            self.attempts[webhook_id] = attempt
            delivery = Delivery(webhook_id, timestamp, verified, parsed if isinstance(parsed, dict) else {}, 0,
                                attempt, body, headers, time.time())
            delivery.status = self.answer(delivery)
            self.deliveries.append(delivery)
        return delivery

    def handle(self, request: BaseHTTPRequestHandler, headers: dict[str, str], body: bytes) -> None:
        delivery = self.record(headers, body)
        webhook_id = delivery.webhook_id
        with self.lock:
            if self.in_flight.get(webhook_id, 0) > 0:
                self.overlaps.append(webhook_id)
            self.in_flight[webhook_id] = self.in_flight.get(webhook_id, 0) + 1
        try:
            if self.hold > 0:
                time.sleep(self.hold)
                if peer_closed(request.connection):
                    # The sender died during the hold: writing would still succeed (its kernel closed
                    # the socket with a FIN), but no one would read the answer.
                    raise ConnectionResetError("the sender closed the connection")
            request.send_response(delivery.status)
            request.send_header("Content-Length", "0")
            request.end_headers()
            request.wfile.flush()
            if 200 <= delivery.status < 300:
                with self.lock:
                    self.accepted.add(webhook_id)
        except OSError:
            with self.lock:
                self.lost.append(webhook_id)
            request.close_connection = True
        finally:
            with self.lock:
                self.in_flight[webhook_id] -= 1

    def delivered(self) -> set[str]:
        """The webhook-ids answered 2xx."""
        with self.lock:
            return {d.webhook_id for d in self.deliveries if 200 <= d.status < 300}

    def snapshot(self) -> list[Delivery]:
        with self.lock:
            return list(self.deliveries)

    def ids(self) -> list[str]:
        """Every delivery's webhook-id, in arrival order (retries included)."""
        with self.lock:
            return [d.webhook_id for d in self.deliveries]


def fail_first_attempts(seed: int, fraction: float) -> Callable[[Delivery], int]:
    """An `answer` that answers 500 to the first attempt of a seeded `fraction` of the webhook-ids, 204
    otherwise, so that the server retries them."""

    def answer(delivery: Delivery) -> int:
        digest = hashlib.sha256(f"{seed}-{delivery.webhook_id}".encode()).digest()
        return 500 if delivery.attempt == 1 and digest[0] < 256 * fraction else 204

    return answer
