#!/usr/bin/env python3
"""Standard Webhooks interop: the server's WebhookSender delivers to a Python receiver, and the
`standardwebhooks` package from PyPI, unchanged, verifies what arrived.

It starts an HTTP receiver on 127.0.0.1, runs the Swift test WebhookInteropTests (which sends one
fresh delivery signed with two secrets, as during a secret rotation, and one signed ten minutes
ago) with the receiver's URL and the secrets in its environment, then checks:

- the fresh delivery verifies under the current secret and under the previous one alone;
- the same delivery with a tampered body, and under a wrong secret, is refused;
- the stale delivery (timestamp ten minutes old) is refused.

Usage (from the repository root, after `swift build --package-path Server --build-tests`):

    .venv/bin/python Server/Tests/webhooks/interop.py

Exit status 0 when every check passes.
"""

from __future__ import annotations

import base64
import http.server
import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

ROOT = Path(__file__).resolve().parents[3]


class Receiver(http.server.BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        Receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def refused(secret: str, body: bytes, headers: dict[str, str]) -> bool:
    try:
        Webhook(secret).verify(body, headers)
    except WebhookVerificationError:
        return True
    return False


def main() -> int:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    current, previous, wrong = new_secret(), new_secret(), new_secret()
    environment = dict(os.environ)
    environment.update({
        "TESSERA_WEBHOOK_INTEROP_URL": f"http://127.0.0.1:{server.server_address[1]}/hook",
        "TESSERA_WEBHOOK_INTEROP_SECRET": current,
        "TESSERA_WEBHOOK_INTEROP_PREVIOUS_SECRET": previous,
    })
    run = subprocess.run(
        ["swift", "test", "--package-path", str(ROOT / "Server"), "--skip-build", "--filter", "WebhookInteropTests"],
        env=environment, capture_output=True, text=True, timeout=600)
    server.shutdown()
    if run.returncode != 0:
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n", file=sys.stderr)
        print("webhook interop: the Swift sender test failed", file=sys.stderr)
        return 1

    failures: list[str] = []
    by_id = {headers.get("webhook-id"): (headers, body) for headers, body in Receiver.received}
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
