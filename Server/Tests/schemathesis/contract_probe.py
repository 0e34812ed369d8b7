"""Wire-level probes of the real `tessera serve` that neither a schema nor the Swift suites can show.

Schemathesis checks shapes, statuses and server errors; the Swift suites (TesseraServerTests,
EndToEndTests) check the behaviour of the contract (anonymous start, identify and its merge outcomes,
heartbeats, devices, sessions, the admin and operator endpoints) against the application in process.
These probes keep what needs the real binary on a real socket, seen by other HTTP and JWT code: the
headers every answer carries whatever its path (X-Request-Id, Cache-Control, Allow, the metrics'
content type), the Authorization scheme word and the query string, exact request bytes (the body cap,
bodies that are not one JSON object, strict JSON, every spelling of base64url installation secrets),
raw HTTP/1 framing and Host headers, the session JWT verified by PyJWT through the served JWKS, and
the identify answers no Swift server test asks for (an HS512 token, an empty `sub`, an expired token
with a bad signature, a token without `kid` under a second secret, a duration out of range). Run by run.py against a fresh
server before the fuzzing; every failed probe is printed with what was sent and what came back, and
the exit status is non-zero.

Usage: python contract_probe.py   (with the TESSERA_ST_* environment of hooks.py)
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
import time
import urllib.parse
import uuid
import warnings
from pathlib import Path

import jwt
import jwt.warnings
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

BASE_URL = os.environ["TESSERA_ST_URL"].rstrip("/")
PROJECT_ID = os.environ["TESSERA_ST_PROJECT_ID"]
PK = os.environ["TESSERA_ST_PUBLISHABLE_KEY"]
SK = os.environ["TESSERA_ST_SECRET_KEY"]
SECRET = os.environ["TESSERA_ST_IDENTITY_SECRET"]
KID = os.environ["TESSERA_ST_IDENTITY_KID"]

# The HS512 probe signs with the project's 47-byte secret on purpose.
warnings.filterwarnings("ignore", category=jwt.warnings.InsecureKeyLengthWarning)
http = requests.Session()
failures: list[str] = []
passed = 0


def call(method: str, path: str, credential: str | None = None, body: object = None, *, scheme: str = "Bearer",
         raw: bytes | None = None, headers: dict[str, str] | None = None) -> requests.Response:
    all_headers = dict(headers or {})
    if credential is not None:
        all_headers["Authorization"] = f"{scheme} {credential}"
    if raw is not None:
        all_headers.setdefault("Content-Type", "application/json")
        return http.request(method, BASE_URL + path, data=raw, headers=all_headers, timeout=10)
    return http.request(method, BASE_URL + path, json=body, headers=all_headers, timeout=10)


def describe(response: requests.Response) -> str:
    text = response.text if len(response.text) < 300 else response.text[:300] + "…"
    return f"{response.request.method} {response.request.path_url} → {response.status_code} {text}"


def expect(name: str, response: requests.Response, status: int, code: str | None = None) -> dict:
    global passed
    try:
        data = response.json() if response.content else {}
    except ValueError:
        data = {}
    problems = []
    if response.status_code != status:
        problems.append(f"status {response.status_code}, expected {status}")
    if code is not None:
        got = data.get("error", {}).get("code") if isinstance(data, dict) else None
        if got != code:
            problems.append(f"code {got!r}, expected {code!r}")
    if not response.headers.get("X-Request-Id"):
        problems.append("no X-Request-Id")
    if problems:
        failures.append(f"{name}: {', '.join(problems)} — {describe(response)}")
    else:
        passed += 1
    return data if isinstance(data, dict) else {}


def check(name: str, condition: bool, detail: str = "") -> None:
    global passed
    if condition:
        passed += 1
    else:
        failures.append(f"{name}{': ' + detail if detail else ''}")


installation = harness.new_installation


def identity_token(sub: str, secret: str = SECRET, kid: str | None = KID, **claims: object) -> str:
    return harness.identity_token(secret, kid, harness.claims_for(sub, aud=PROJECT_ID, **claims))


def raw_exchange(request: bytes) -> bytes:
    """Sends `request` over a new TCP connection as is, half-closes, and reads until the server closes."""
    parsed = urllib.parse.urlsplit(BASE_URL)
    with socket.create_connection((parsed.hostname, parsed.port or 80), timeout=10) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    return received


def raw_answer(name: str, request: bytes, status: int) -> None:
    """Checks the first response to a raw request: its status, and the API's error shape for errors."""
    global passed
    text = raw_exchange(request)
    head, _, rest = text.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    problems = []
    if not lines[0].startswith(f"HTTP/1.1 {status} "):
        problems.append(f"status line {lines[0]!r}, expected {status}")
    if status >= 400:
        length = next((int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0)
        try:
            code = json.loads(rest[:length]).get("error", {}).get("code")
        except ValueError:
            code = None
        if code != "invalid_request":
            problems.append(f"code {code!r}, expected 'invalid_request'")
    if problems:
        failures.append(f"{name}: {', '.join(problems)} — {text[:300]!r}")
    else:
        passed += 1


def main() -> int:
    # Operations, and the headers of unknown paths and methods. (Every answer below is also checked
    # for an X-Request-Id.)
    expect("GET /health", call("GET", "/health"), 200)
    # v2 operations: liveness, readiness with the release and schema versions, HEAD without a body.
    expect("GET /health/live", call("GET", "/health/live"), 200)
    ready = expect("GET /health/ready", call("GET", "/health/ready"), 200)
    check("ready reports its checks and versions",
          ready.get("status") == "ready" and ready.get("checks") == {"database": "ok", "migrations": "ok",
                                                                     "master_key": "ok"}
          and isinstance(ready.get("version"), str) and ready.get("schema_version") == ready.get("database_schema_version"),
          str(ready))
    for path in ("/health", "/health/live", "/health/ready"):
        head = call("HEAD", path)
        expect(f"HEAD {path}", head, 200)
        check(f"HEAD {path} has no body", head.content == b"", repr(head.content[:80]))
    metrics = call("GET", "/metrics")
    expect("GET /metrics", metrics, 200)
    check("metrics are Prometheus text", metrics.headers.get("Content-Type", "").startswith("text/plain"),
          metrics.headers.get("Content-Type", ""))
    expect("GET /openapi.json", call("GET", "/openapi.json"), 200)
    expect("unknown path", call("GET", "/v1/nothing-here"), 404, "not_found")
    wrong_method = call("PUT", "/v1/me")
    expect("known path, other method", wrong_method, 405)
    check("405 has Allow", "GET" in wrong_method.headers.get("Allow", ""), str(dict(wrong_method.headers)))

    # Anonymous start: the token's size, and the exact spellings of an installation secret.
    created = expect("anonymous start, new installation", call("POST", "/v1/sessions/anonymous", PK, installation()), 201)
    check("session token is st_ with ≥ 256 bits", str(created.get("session_token", "")).startswith("st_")
          and len(created.get("session_token", "")) >= 46)
    for size in (32, 33, 34):  # 43, 44 and 46 characters: every tail length of base64url
        secret = base64.urlsafe_b64encode(os.urandom(size)).rstrip(b"=").decode()
        expect(f"canonical {len(secret)}-character secret", call("POST", "/v1/sessions/anonymous", PK,
               {**installation(), "installation_secret": secret}), 201)
        if len(secret) % 4:
            alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            noncanonical = secret[:-1] + alphabet[alphabet.index(secret[-1]) ^ 1]
            expect(f"non-canonical {len(secret)}-character secret", call("POST", "/v1/sessions/anonymous", PK,
                   {**installation(), "installation_secret": noncanonical}), 400, "invalid_request")
        expect(f"padded {len(secret)}-character secret", call("POST", "/v1/sessions/anonymous", PK,
               {**installation(), "installation_secret": secret + "="}),
               400, "invalid_request")
    expect("anonymous duration 5", call("POST", "/v1/sessions/anonymous", PK,
           {**installation(), "session_duration_minutes": 5}), 201)
    expect("not JSON", call("POST", "/v1/sessions/anonymous", PK, raw=b"{nope"), 400, "invalid_request")
    expect("JSON array", call("POST", "/v1/sessions/anonymous", PK, raw=b"[]"), 400, "invalid_request")
    expect("body over 16 KiB", call("POST", "/v1/sessions/anonymous", PK,
           raw=b'{"x":"' + b"a" * (16 * 1024) + b'"}'), 413, "payload_too_large")

    # The Authorization header and the query string.
    token = created.get("session_token", "")
    session_jwt = created.get("session_jwt", "")
    expect("no credential", call("GET", "/v1/me"), 401, "invalid_credentials")
    expect("lower-case bearer", call("GET", "/v1/me", token, scheme="bearer"), 200)
    expect("credential in the query is ignored", http.get(f"{BASE_URL}/v1/me?access_token={token}", timeout=10), 401,
           "invalid_credentials")
    expect("heartbeat without body", call("POST", "/v1/sessions/authenticate", token), 200)
    expect("heartbeat with {}", call("POST", "/v1/sessions/authenticate", token, {}), 200)

    # The session JWT, verified by PyJWT through the served JWKS.
    jwks = expect("JWKS", call("GET", f"/v1/projects/{PROJECT_ID}/jwks.json"), 200)
    header = jwt.get_unverified_header(session_jwt) if session_jwt else {}
    check("session JWT header", header.get("alg") == "ES256" and header.get("typ") == "session+jwt", str(header))
    keys = {key.get("kid"): key for key in jwks.get("keys", [])}
    if header.get("kid") in keys:
        public = jwt.PyJWK(keys[header["kid"]]).key
        claims = jwt.decode(session_jwt, public, algorithms=["ES256"], audience=PROJECT_ID)
        check("session JWT claims", claims.get("sid") == created["session"]["id"]
              and claims.get("sub") == created["profile"]["id"] and claims["exp"] - claims["iat"] == 300
              and claims.get("kind") == "anonymous" and "external_id" in claims, str(claims))
    else:
        check("JWKS lists the session JWT's kid", False, f"{header.get('kid')} not in {list(keys)}")

    # Identify answers no Swift server test asks for.
    expect("expired and badly signed token reports the signature", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", secret="tis_" + "B" * 43, exp=int(time.time()) - 3600)}), 401,
           "invalid_signature")
    expect("empty sub", call("POST", "/v1/sessions/identify", PK, {"identity_token": identity_token("")}), 400,
           "invalid_claims")
    expect("HS512 token", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": jwt.encode({"sub": "x", "exp": int(time.time()) + 60}, SECRET, algorithm="HS512")}), 401,
           "unsupported_algorithm")
    expect("identify duration 4", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x"), "session_duration_minutes": 4}), 400, "invalid_session_duration")
    second = expect("create identity secret 2", call("POST", "/v1/admin/identity-secrets", SK), 201).get(
        "identity_secret") or {}
    if second:
        expect("identify with secret 2 and no kid", call("POST", "/v1/sessions/identify", PK,
               {"identity_token": identity_token(f"probe-{uuid.uuid4()}", secret=second["secret"], kid=None)}), 200)
        expect("delete identity secret 2", call("DELETE", f"/v1/admin/identity-secrets/{second['kid']}", SK), 204)

    # Strict bodies: one reading per body, or a 4xx in the API's error shape that changes nothing.
    strict = installation()
    for name, raw in [
        ("duplicate member", '{"installation_id":"%s","installation_secret":"%s","installation_secret":"%s"}'
         % (strict["installation_id"], strict["installation_secret"], installation()["installation_secret"])),
        ("escaped NUL", '{"installation_id":"%s","installation_secret":"%s\\u0000"}'
         % (strict["installation_id"], strict["installation_secret"])),
        ("unpaired surrogate", '{"installation_id":"%s\\ud800","installation_secret":"%s"}'
         % (strict["installation_id"], strict["installation_secret"])),
        ("C1 control", '{"installation_id":"%s","installation_secret":"%s\u0085"}'
         % (strict["installation_id"], strict["installation_secret"])),
        ("duration out of Int64", '{"installation_id":"%s","installation_secret":"%s","session_duration_minutes":1e30}'
         % (strict["installation_id"], strict["installation_secret"])),
        ("fractional duration", '{"installation_id":"%s","installation_secret":"%s","session_duration_minutes":60.5}'
         % (strict["installation_id"], strict["installation_secret"])),
    ]:
        expect(f"anonymous body: {name}", call("POST", "/v1/sessions/anonymous", PK, raw=raw.encode()), 400,
               "invalid_request")
    expect("the refused bodies registered nothing", call("POST", "/v1/sessions/anonymous", PK, strict), 201)
    project = expect("GET project", call("GET", "/v1/admin/project", SK), 200)
    for name, raw in [
        ("duplicate member", '{"leeway_seconds":60,"leeway_seconds":0}'),
        ("number past Int64", '{"leeway_seconds":9223372036854775808}'),
        ("number past double", '{"max_identity_token_lifetime_seconds":1e400}'),
        ("negative rate limit", '{"rate_limits":{"anonymous_starts_per_minute":-1}}'),
        ("NUL in the issuer", '{"expected_issuer":"https://issuer\\u0000"}'),
        ("lone low surrogate", '{"expected_issuer":"\\udc00"}'),
    ]:
        expect(f"settings body: {name}", call("PATCH", "/v1/admin/project", SK, raw=raw.encode()), 400, "invalid_request")
    after = call("GET", "/v1/admin/project", SK).json()
    check("refused settings changed nothing", (after.get("project") or {}).get("settings") ==
          (project.get("project") or {}).get("settings"), str(after))

    # The events feed: every change above is in it, in sequence order, without gap or repeat.
    sequences: list[int] = []
    cursor = 0
    while True:
        page = expect(f"events after {cursor}", call("GET", f"/v1/admin/events?after={cursor}&limit=200", SK), 200)
        events = page.get("events") or []
        sequences += [event.get("sequence") for event in events]
        check(f"events next_after after {cursor}", page.get("next_after") == (sequences[-1] if events else cursor),
              str(page.get("next_after")))
        if not events:
            break
        cursor = sequences[-1]
    check("events from 1 without gap or repeat", sequences == list(range(1, len(sequences) + 1)) and sequences != [],
          str(sequences[:20]))
    types = expect("events of one type", call("GET", "/v1/admin/events?types=session.created&limit=5", SK), 200)
    check("the types filter keeps only that type",
          {event.get("type") for event in types.get("events") or []} == {"session.created"}, str(types)[:300])
    for query in ["limit=0", "limit=201", "after=-1", "types=nope", "profile_id=ses_x"]:
        expect(f"events with {query}", call("GET", f"/v1/admin/events?{query}", SK), 400, "invalid_request")
    expect("events with the publishable key", call("GET", "/v1/admin/events", PK), 401, "invalid_credentials")

    # The audit log: the secret key's changes above (the settings PATCH at least), newest first, with
    # their client address; no SDK change; pages follow next_cursor.
    audit: list[dict] = []
    page_cursor = None
    while True:
        query = "/v1/admin/audit?limit=2" + (f"&cursor={page_cursor}" if page_cursor else "")
        page = expect(f"audit page {page_cursor}", call("GET", query, SK), 200)
        audit += page.get("events") or []
        page_cursor = page.get("next_cursor")
        if page_cursor is None:
            break
    audit_sequences = [entry.get("sequence") for entry in audit]
    check("audit newest first, no repeat", audit_sequences == sorted(set(audit_sequences), reverse=True)
          and audit != [], str(audit_sequences[:20]))
    check("audit holds only secret-key and operator changes",
          all((entry.get("actor") or {}).get("type") in ("secret_key", "operator") for entry in audit), str(audit)[:300])
    check("audit entries carry the client address",
          all(isinstance(entry.get("client_address"), str) for entry in audit), str(audit)[:300])
    check("project.updated is in the audit log", any(entry.get("type") == "project.updated" for entry in audit),
          str([entry.get("type") for entry in audit]))
    for query in ["limit=0", "limit=201", "cursor=abc", "cursor=-1"]:
        expect(f"audit with {query}", call("GET", f"/v1/admin/audit?{query}", SK), 400, "invalid_request")
    expect("audit with the publishable key", call("GET", "/v1/admin/audit", PK), 401, "invalid_credentials")

    # Webhook deliveries: the test event and replay queue deliveries; the log lists them; bad input is 400.
    hook = expect("create a webhook", call("POST", "/v1/admin/webhooks", SK,
                                           {"url": "https://tessera-probe.invalid/hook", "types": ["session.created"]}),
                  201).get("webhook") or {}
    hook_path = f"/v1/admin/webhooks/{hook.get('id')}"
    queued = expect("webhook test event", call("POST", f"{hook_path}/test", SK), 202)
    check("the test event has an event ID", str(queued.get("event_id", "")).startswith("evt_"), str(queued))
    log = expect("webhook delivery log", call("GET", f"{hook_path}/deliveries?limit=200", SK), 200)
    check("the log lists the test event",
          queued.get("event_id") in [row.get("event_id") for row in log.get("deliveries") or []], str(log)[:300])
    expect("replay after 0", call("POST", f"{hook_path}/replay", SK, {"after": 0}), 202)
    unknown = expect("replay of an unknown event", call("POST", f"{hook_path}/replay", SK, {"event_id": "evt_unknown"}),
                     202)
    check("an unknown event queues nothing", unknown.get("queued") == 0, str(unknown))
    for name, body in [("nothing", {}), ("both", {"event_id": "evt_x", "after": 1}), ("negative", {"after": -1})]:
        expect(f"replay with {name}", call("POST", f"{hook_path}/replay", SK, body), 400, "invalid_request")
    for query in ["status=done", "limit=0", "cursor=nope"]:
        expect(f"deliveries with {query}", call("GET", f"{hook_path}/deliveries?{query}", SK), 400, "invalid_request")
    expect("deliveries of an unknown webhook", call("GET", "/v1/admin/webhooks/whk_unknown/deliveries", SK), 404,
           "not_found")
    expect("webhook test with the publishable key", call("POST", f"{hook_path}/test", PK), 401, "invalid_credentials")
    expect("delete the probe webhook", call("DELETE", hook_path, SK), 204)

    # No caching of /v1 answers, errors and the JWKS included.
    for name, response in [("session answer", call("POST", "/v1/sessions/anonymous", PK, installation())),
                           ("error answer", call("GET", "/v1/me")),
                           ("unknown /v1 path", call("GET", "/v1/nothing-here"))]:
        check(f"Cache-Control: no-store on the {name}", response.headers.get("Cache-Control") == "no-store",
              str(dict(response.headers)))
    jwks = call("GET", f"/v1/projects/{PROJECT_ID}/jwks.json")
    check("Cache-Control: no-store on the JWKS", jwks.headers.get("Cache-Control") == "no-store", str(dict(jwks.headers)))

    # HTTP framing and Host over a raw socket: 400 in the error shape, never a 5xx.
    start = (f"POST /v1/sessions/anonymous HTTP/1.1\r\nHost: probe\r\nAuthorization: Bearer {PK}\r\n"
             "Content-Type: application/json\r\n").encode()
    raw_answer("bad chunk size", start + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400)
    raw_answer("overflowing chunk size",
               start + b"Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffffffff\r\n{}\r\n0\r\n\r\n", 400)
    raw_answer("missing chunk CRLF", start + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n", 400)
    raw_answer("body shorter than Content-Length", start + b"Content-Length: 100\r\n\r\n{\"a\":", 400)
    raw_answer("HTTP/1.1 without Host", b"GET /health HTTP/1.1\r\n\r\n", 400)
    raw_answer("two Host headers", b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400)
    raw_answer("HTTP/1.0 without Host", b"GET /health HTTP/1.0\r\n\r\n", 200)
    raw_answer("not HTTP at all", b"GARBAGE\r\n\r\n", 400)

    # Request IDs.
    echoed = call("GET", "/health", headers={"X-Request-Id": "probe-123"})
    check("a plain X-Request-Id is echoed", echoed.headers.get("X-Request-Id") == "probe-123", str(dict(echoed.headers)))

    for failure in failures:
        print(f"contract-probe: FAIL {failure}", file=sys.stderr)
    print(f"contract-probe: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
