#!/usr/bin/env python3
"""Writes vectors.json: webhook signatures computed by the official Standard Webhooks library
(`pip install standardwebhooks`), so WebhookSigner and WebhookVerifier are held against it.

    python3 Tests/Vectors/standardwebhooks/generate.py > Tests/Vectors/standardwebhooks/vectors.json

The first case is the example of the Standard Webhooks specification; the rest are fixed inputs
(no randomness), so the file regenerates byte for byte.
"""
import base64
import json
from datetime import datetime, timezone

from standardwebhooks import Webhook

CASES = [
    ("spec example", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
     '{"test": 2432232314}'),
    ("empty body", "whsec_" + base64.b64encode(bytes(range(32))).decode(), "evt_1", 1700000000, ""),
    ("unicode body", "whsec_" + base64.b64encode(bytes(range(100, 132))).decode(), "evt_2Zx", 1764000000,
     '{"type":"profile.merged","data":{"name":"Zoë 🦊","from":"usr_a"}}'),
    ("24-byte secret", "whsec_" + base64.b64encode(b"\x01" * 24).decode(), "evt_3", 1800000000, '{"a":1}'),
    ("64-byte secret", "whsec_" + base64.b64encode(bytes(range(64))).decode(), "evt_4", 1800000001, '{"b":[1,2]}'),
    ("dots in the id", "whsec_" + base64.b64encode(b"\xff" * 32).decode(), "evt.5.x", 1800000002, "a.b.c"),
]

vectors = []
for name, secret, msg_id, timestamp, body in CASES:
    signature = Webhook(secret).sign(msg_id, datetime.fromtimestamp(timestamp, tz=timezone.utc), body)
    vectors.append({"name": name, "secret": secret, "id": msg_id, "timestamp": timestamp, "body": body,
                    "signature": signature})

print(json.dumps({"source": "standardwebhooks (PyPI) Webhook.sign", "vectors": vectors}, indent=2,
                 ensure_ascii=False))
