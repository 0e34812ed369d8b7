"""Black-box probes of the rules of docs/API.md that a schema cannot express.

Schemathesis checks shapes, statuses and server errors; these probes check behaviour: 201 then 200
for anonymous start, installation conflicts, the merge outcomes, no session fixation, `jti` replay,
heartbeat and extension, revoke taking effect at once for the session JWT too, devices following
their session, credential kinds, the body cap, 404 vs 405, identity-secret rotation and the project
settings. Run by run.py against a fresh server before the fuzzing; every failed probe is printed
with what was sent and what came back, and the exit status is non-zero.

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

import jwt
import jwt.warnings
import requests

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


def installation() -> dict[str, str]:
    return {"installation_id": str(uuid.uuid4()),
            "installation_secret": base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()}


def identity_token(sub: str, secret: str = SECRET, kid: str | None = KID, **claims: object) -> str:
    now = int(time.time())
    payload = {"sub": sub, "aud": PROJECT_ID, "iat": now, "exp": now + 300, **claims}
    return jwt.encode(payload, secret, algorithm="HS256", headers={"kid": kid} if kid else None)


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
    # Operations.
    expect("GET /health", call("GET", "/health"), 200)
    metrics = call("GET", "/metrics")
    expect("GET /metrics", metrics, 200)
    check("metrics are Prometheus text", metrics.headers.get("Content-Type", "").startswith("text/plain"),
          metrics.headers.get("Content-Type", ""))
    expect("GET /openapi.json", call("GET", "/openapi.json"), 200)
    expect("unknown path", call("GET", "/v1/nothing-here"), 404, "not_found")
    wrong_method = call("PUT", "/v1/me")
    expect("known path, other method", wrong_method, 405)
    check("405 has Allow", "GET" in wrong_method.headers.get("Allow", ""), str(dict(wrong_method.headers)))

    # Anonymous start: 201 then 200, conflict, validation.
    first = installation()
    created = expect("anonymous start, new installation", call("POST", "/v1/sessions/anonymous", PK, first), 201)
    restored = expect("anonymous start, same installation", call("POST", "/v1/sessions/anonymous", PK, first), 200)
    check("restore keeps the profile", created.get("profile", {}).get("id") == restored.get("profile", {}).get("id"))
    check("restore opens a new session", created.get("session", {}).get("id") != restored.get("session", {}).get("id"))
    check("envelope has server_time", "server_time" in created)
    check("session token is st_ with ≥ 256 bits", str(created.get("session_token", "")).startswith("st_")
          and len(created.get("session_token", "")) >= 46)
    check("anonymous capabilities", created.get("capabilities") == {"authenticated": False, "kind": "anonymous"},
          str(created.get("capabilities")))
    hijack = {"installation_id": first["installation_id"], "installation_secret": installation()["installation_secret"]}
    expect("installation hijack", call("POST", "/v1/sessions/anonymous", PK, hijack), 409, "installation_conflict")
    expect("upper-case installation id", call("POST", "/v1/sessions/anonymous", PK,
           {**installation(), "installation_id": str(uuid.uuid4()).upper()}), 400, "invalid_request")
    expect("short installation secret", call("POST", "/v1/sessions/anonymous", PK,
           {**installation(), "installation_secret": "c2hvcnQ"}), 400, "invalid_request")
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
    for minutes in (4, 525601, 0, -1):
        expect(f"anonymous duration {minutes}", call("POST", "/v1/sessions/anonymous", PK,
               {**installation(), "session_duration_minutes": minutes}), 400, "invalid_session_duration")
    expect("anonymous duration 5", call("POST", "/v1/sessions/anonymous", PK,
           {**installation(), "session_duration_minutes": 5}), 201)
    expect("not JSON", call("POST", "/v1/sessions/anonymous", PK, raw=b"{nope"), 400, "invalid_request")
    expect("JSON array", call("POST", "/v1/sessions/anonymous", PK, raw=b"[]"), 400, "invalid_request")
    expect("body over 16 KiB", call("POST", "/v1/sessions/anonymous", PK,
           raw=b'{"x":"' + b"a" * (16 * 1024) + b'"}'), 413, "payload_too_large")

    # Credentials.
    token = restored.get("session_token", "")
    session_jwt = restored.get("session_jwt", "")
    expect("no credential", call("GET", "/v1/me"), 401, "invalid_credentials")
    expect("lower-case bearer", call("GET", "/v1/me", token, scheme="bearer"), 200)
    expect("credential in the query is ignored", http.get(f"{BASE_URL}/v1/me?access_token={token}", timeout=10), 401,
           "invalid_credentials")
    expect("publishable key at /v1/me", call("GET", "/v1/me", PK), 401, "invalid_credentials")
    expect("session at an admin endpoint", call("GET", "/v1/admin/project", token), 401, "invalid_credentials")
    expect("identity token as a bearer", call("GET", "/v1/me", identity_token("x")), 401, "invalid_credentials")
    expect("unknown publishable key", call("POST", "/v1/sessions/anonymous", "pk_" + "A" * 32, installation()), 401,
           "invalid_api_key")
    expect("unknown secret key", call("GET", "/v1/admin/project", "sk_" + "A" * 43), 401, "invalid_api_key")
    expect("unknown session token", call("GET", "/v1/me", "st_" + "A" * 43), 401, "session_not_found")
    expect("session JWT at /v1/me", call("GET", "/v1/me", session_jwt), 200)
    expect("secret key at anonymous start", call("POST", "/v1/sessions/anonymous", SK, installation()), 401,
           "invalid_credentials")

    # JWKS.
    jwks = expect("JWKS", call("GET", f"/v1/projects/{PROJECT_ID}/jwks.json"), 200)
    header = jwt.get_unverified_header(session_jwt) if session_jwt else {}
    check("session JWT header", header.get("alg") == "ES256" and header.get("typ") == "session+jwt", str(header))
    keys = {key.get("kid"): key for key in jwks.get("keys", [])}
    if header.get("kid") in keys:
        public = jwt.PyJWK(keys[header["kid"]]).key
        claims = jwt.decode(session_jwt, public, algorithms=["ES256"], audience=PROJECT_ID)
        check("session JWT claims", claims.get("sid") == restored["session"]["id"]
              and claims.get("sub") == restored["profile"]["id"] and claims["exp"] - claims["iat"] == 300
              and claims.get("kind") == "anonymous" and "external_id" in claims, str(claims))
    else:
        check("JWKS lists the session JWT's kid", False, f"{header.get('kid')} not in {list(keys)}")
    expect("JWKS of an unknown project", call("GET", "/v1/projects/prj_unknown/jwks.json"), 404, "not_found")

    # Heartbeat and extension.
    beat = expect("heartbeat without body", call("POST", "/v1/sessions/authenticate", token), 200)
    check("heartbeat keeps expires_at", beat.get("session", {}).get("expires_at") == restored.get("session", {}).get("expires_at"))
    expect("heartbeat with {}", call("POST", "/v1/sessions/authenticate", token, {}), 200)
    expect("heartbeat with a session JWT", call("POST", "/v1/sessions/authenticate", session_jwt), 200)
    expect("extend by 4 minutes", call("POST", "/v1/sessions/authenticate", token, {"session_duration_minutes": 4}), 400,
           "invalid_session_duration")
    short = expect("short session", call("POST", "/v1/sessions/anonymous", PK,
                   {**installation(), "session_duration_minutes": 5}), 201)
    extended = expect("extend", call("POST", "/v1/sessions/authenticate", short.get("session_token", ""),
                      {"session_duration_minutes": 60}), 200)
    check("extend moves expires_at", extended.get("session", {}).get("expires_at", "") > short.get("session", {}).get("expires_at", "~"))
    shorter = expect("extend shorter", call("POST", "/v1/sessions/authenticate", short.get("session_token", ""),
                     {"session_duration_minutes": 5}), 200)
    check("extend never shortens", shorter.get("session", {}).get("expires_at") == extended.get("session", {}).get("expires_at"))

    # Identify: publishable key, promoted, merged, unchanged, 409, fixation, replay.
    sub = f"probe-{uuid.uuid4()}"
    signed = expect("identify with the publishable key", call("POST", "/v1/sessions/identify", PK,
                    {"identity_token": identity_token(sub, name="Ada", email="ada@example.com")}), 200)
    check("verified capabilities", signed.get("capabilities") == {"authenticated": True, "kind": "verified"},
          str(signed.get("capabilities")))
    check("profile from claims", signed.get("profile", {}).get("external_id") == sub
          and signed.get("profile", {}).get("verified") is True and signed.get("profile", {}).get("name") == "Ada",
          str(signed.get("profile")))
    anonymous = expect("anonymous for promote", call("POST", "/v1/sessions/anonymous", PK, installation()), 201)
    promoted_sub = f"probe-{uuid.uuid4()}"
    promoted = expect("identify promotes", call("POST", "/v1/sessions/identify", anonymous.get("session_token"),
                      {"identity_token": identity_token(promoted_sub)}), 200)
    check("merge promoted", (promoted.get("merge") or {}).get("outcome") == "promoted"
          and promoted.get("profile", {}).get("id") == anonymous.get("profile", {}).get("id"), str(promoted.get("merge")))
    check("no session fixation", promoted.get("session", {}).get("id") != anonymous.get("session", {}).get("id"))
    old = call("GET", "/v1/me", anonymous.get("session_token"))
    check("the calling anonymous session ended", old.status_code == 401, describe(old))
    old_jwt = call("GET", "/v1/me", anonymous.get("session_jwt"))
    check("its session JWT stopped working", old_jwt.status_code == 401, describe(old_jwt))
    second = expect("anonymous for merge", call("POST", "/v1/sessions/anonymous", PK, installation()), 201)
    merged = expect("identify merges", call("POST", "/v1/sessions/identify", second.get("session_jwt"),
                    {"identity_token": identity_token(sub)}), 200)
    check("merge merged", (merged.get("merge") or {}).get("outcome") == "merged"
          and merged.get("merge", {}).get("from_profile_id") == second.get("profile", {}).get("id")
          and merged.get("profile", {}).get("id") == signed.get("profile", {}).get("id"), str(merged.get("merge")))
    alias = call("GET", f"/v1/admin/profiles/{second.get('profile', {}).get('id')}", SK)
    check("the merged anonymous ID resolves as an alias", alias.status_code == 200
          and alias.json().get("profile", {}).get("id") == signed.get("profile", {}).get("id"), describe(alias))
    unchanged = expect("identify unchanged", call("POST", "/v1/sessions/identify", merged.get("session_token"),
                       {"identity_token": identity_token(sub)}), 200)
    check("merge unchanged", (unchanged.get("merge") or {}).get("outcome") == "unchanged", str(unchanged.get("merge")))
    expect("identify as another user", call("POST", "/v1/sessions/identify", unchanged.get("session_token"),
           {"identity_token": identity_token(f"probe-{uuid.uuid4()}")}), 409, "external_user_id_changed")
    jti = str(uuid.uuid4())
    replay = identity_token(f"probe-{uuid.uuid4()}", jti=jti)
    expect("jti first use", call("POST", "/v1/sessions/identify", PK, {"identity_token": replay}), 200)
    expect("jti replay", call("POST", "/v1/sessions/identify", PK, {"identity_token": replay}), 401, "identity_token_replayed")
    expect("bad signature", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", secret="tis_" + "B" * 43)}), 401, "invalid_signature")
    expect("unknown kid", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", kid="ik_unknown")}), 401, "invalid_signature")
    expect("expired token", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", exp=int(time.time()) - 3600)}), 401, "identity_token_expired")
    expect("expired and badly signed token reports the signature", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", secret="tis_" + "B" * 43, exp=int(time.time()) - 3600)}), 401,
           "invalid_signature")
    expect("lifetime too long", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", exp=int(time.time()) + 7200)}), 401, "identity_token_lifetime_too_long")
    expect("iat in the future", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", iat=int(time.time()) + 3600)}), 401, "identity_token_not_yet_valid")
    expect("wrong audience", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", aud="prj_other")}), 401, "audience_mismatch")
    expect("bad email", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", email="not an email")}), 400, "invalid_email")
    expect("http avatar", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x", avatar_url="http://example.com/a.png")}), 400, "invalid_avatar_url")
    expect("empty sub", call("POST", "/v1/sessions/identify", PK, {"identity_token": identity_token("")}), 400,
           "invalid_claims")
    expect("HS512 token", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": jwt.encode({"sub": "x", "exp": int(time.time()) + 60}, SECRET, algorithm="HS512")}), 401,
           "unsupported_algorithm")
    expect("garbage token", call("POST", "/v1/sessions/identify", PK, {"identity_token": "a.b.c"}), 401,
           "invalid_identity_token")
    expect("user_id while disabled", call("POST", "/v1/sessions/identify", PK, {"user_id": "u1"}), 403,
           "unverified_identify_disabled")
    expect("both forms", call("POST", "/v1/sessions/identify", PK,
           {"user_id": "u1", "identity_token": identity_token("x")}), 400, "invalid_request")
    expect("identify duration 4", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token("x"), "session_duration_minutes": 4}), 400, "invalid_session_duration")

    # Project settings and unverified identify.
    project = expect("GET project", call("GET", "/v1/admin/project", SK), 200)
    check("project settings defaults", (project.get("project") or {}).get("settings", {}).get("allow_unverified_identify") is False)
    expect("PATCH unknown setting", call("PATCH", "/v1/admin/project", SK, {"allow_unverified_identifyy": True}), 400,
           "invalid_request")
    expect("PATCH leeway out of range", call("PATCH", "/v1/admin/project", SK, {"leeway_seconds": 100000}), 400,
           "invalid_request")
    expect("allow unverified identify", call("PATCH", "/v1/admin/project", SK, {"allow_unverified_identify": True}), 200)
    unverified = expect("identify with user_id", call("POST", "/v1/sessions/identify", PK, {"user_id": "u1"}), 200)
    check("unverified capabilities", unverified.get("capabilities") == {"authenticated": False, "kind": "unverified"}
          and unverified.get("profile", {}).get("verified") is False, str(unverified.get("capabilities")))
    expect("user_id with a control character", call("POST", "/v1/sessions/identify", PK, {"user_id": "a\u0007b"}), 400)
    expect("restore settings", call("PATCH", "/v1/admin/project", SK, {"allow_unverified_identify": False}), 200)
    expect("require audience", call("PATCH", "/v1/admin/project", SK, {"require_audience": True}), 200)
    no_aud = jwt.encode({"sub": "x", "iat": int(time.time()), "exp": int(time.time()) + 60}, SECRET, algorithm="HS256",
                        headers={"kid": KID})
    expect("token without aud when required", call("POST", "/v1/sessions/identify", PK, {"identity_token": no_aud}), 401,
           "audience_mismatch")
    expect("restore audience", call("PATCH", "/v1/admin/project", SK, {"require_audience": False}), 200)

    # Devices follow their session.
    owner = expect("session for devices", call("POST", "/v1/sessions/anonymous", PK, installation()), 201)
    push = "a" * 64
    device = expect("register device", call("POST", "/v1/devices", owner.get("session_token"),
                    {"platform": "apns", "token": push, "environment": "sandbox"}), 201)
    check("the push token is not returned to the session", "token" not in (device.get("device") or {}), str(device))
    listed = expect("admin devices", call("GET", f"/v1/admin/profiles/{owner['profile']['id']}/devices", SK), 200)
    check("admin sees the push token", [d.get("token") for d in listed.get("devices", [])] == [push], str(listed))
    other = expect("another session", call("POST", "/v1/sessions/anonymous", PK, installation()), 201)
    expect("same token elsewhere", call("POST", "/v1/devices", other.get("session_token"), {"platform": "apns", "token": push}), 201)
    moved = call("GET", f"/v1/admin/profiles/{owner['profile']['id']}/devices", SK).json()
    check("the token moved", moved.get("devices") == [], str(moved))
    expect("bad platform", call("POST", "/v1/devices", other.get("session_token"), {"platform": "web", "token": push}), 400,
           "invalid_request")
    expect("revoke", call("POST", "/v1/sessions/revoke", other.get("session_token")), 204)
    gone = call("GET", f"/v1/admin/profiles/{other['profile']['id']}/devices", SK).json()
    check("revoke takes the devices", gone.get("devices") == [], str(gone))
    expect("revoked token", call("POST", "/v1/sessions/authenticate", other.get("session_token")), 401, "session_revoked")
    expect("revoked session's JWT", call("GET", "/v1/me", other.get("session_jwt")), 401)
    expect("revoked session's JWT at authenticate", call("POST", "/v1/sessions/authenticate", other.get("session_jwt")), 401)

    # Own sessions; anyone else's is a 404.
    mine = expect("list sessions", call("GET", "/v1/sessions", token), 200)
    check("lists the caller's live sessions", len(mine.get("sessions", [])) >= 2, str(mine))
    expect("delete another profile's session", call("DELETE", f"/v1/sessions/{owner['session']['id']}", token), 404, "not_found")
    expect("delete own session", call("DELETE", f"/v1/sessions/{created['session']['id']}", token), 204)
    expect("deleted session", call("GET", "/v1/me", created.get("session_token")), 401, "session_revoked")

    # Admin.
    expect("admin profile", call("GET", f"/v1/admin/profiles/{owner['profile']['id']}", SK), 200)
    expect("admin unknown profile", call("GET", "/v1/admin/profiles/usr_unknown", SK), 404, "not_found")
    found = expect("admin find by external_id", call("GET", f"/v1/admin/profiles?external_id={sub}", SK), 200)
    check("find returns the profile", [p.get("id") for p in found.get("profiles", [])] == [signed["profile"]["id"]], str(found))
    expect("admin find without external_id", call("GET", "/v1/admin/profiles", SK), 400, "invalid_request")
    expect("admin sessions", call("GET", f"/v1/admin/profiles/{owner['profile']['id']}/sessions", SK), 200)
    expect("admin revoke all", call("POST", f"/v1/admin/profiles/{owner['profile']['id']}/sessions/revoke", SK), 204)
    expect("after admin revoke", call("GET", "/v1/me", owner.get("session_token")), 401, "session_revoked")
    expect("erase", call("DELETE", f"/v1/admin/profiles/{signed['profile']['id']}", SK), 204)
    expect("erased profile", call("GET", f"/v1/admin/profiles/{signed['profile']['id']}", SK), 404, "not_found")
    expect("erased alias", call("GET", f"/v1/admin/profiles/{second['profile']['id']}", SK), 404, "not_found")
    expect("erased profile's session", call("GET", "/v1/me", merged.get("session_token")), 401)

    # Identity-secret rotation: at most 3, never the last one.
    kids = []
    for index in range(2):
        secret = expect(f"create identity secret {index + 2}", call("POST", "/v1/admin/identity-secrets", SK), 201)
        kids.append((secret.get("identity_secret") or {}).get("kid"))
        new = secret.get("identity_secret") or {}
        if new:
            expect(f"identify with secret {index + 2}", call("POST", "/v1/sessions/identify", PK,
                   {"identity_token": identity_token(f"probe-{uuid.uuid4()}", secret=new["secret"], kid=None)}), 200)
    expect("a fourth identity secret", call("POST", "/v1/admin/identity-secrets", SK), 409)
    for kid in kids:
        expect("delete identity secret", call("DELETE", f"/v1/admin/identity-secrets/{kid}", SK), 204)
    expect("delete the last identity secret", call("DELETE", f"/v1/admin/identity-secrets/{KID}", SK), 409)
    expect("delete an unknown identity secret", call("DELETE", "/v1/admin/identity-secrets/ik_unknown", SK), 404, "not_found")

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

    # No caching of /v1 answers, errors and the JWKS included.
    for name, response in [("session answer", call("POST", "/v1/sessions/anonymous", PK, installation())),
                           ("error answer", call("GET", "/v1/me")),
                           ("unknown /v1 path", call("GET", "/v1/nothing-here"))]:
        check(f"Cache-Control: no-store on the {name}", response.headers.get("Cache-Control") == "no-store",
              str(dict(response.headers)))
    jwks = call("GET", f"/v1/projects/{PROJECT_ID}/jwks.json")
    check("Cache-Control: no-store on the JWKS", jwks.headers.get("Cache-Control") == "no-store", str(dict(jwks.headers)))

    # Extension needs the session token, and says when the duration was capped.
    extender = expect("session to extend", call("POST", "/v1/sessions/identify", PK,
                      {"identity_token": identity_token(f"probe-{uuid.uuid4()}")}), 200)
    expect("extend with the session JWT", call("POST", "/v1/sessions/authenticate", extender.get("session_jwt"),
           {"session_duration_minutes": 60}), 403, "session_token_required")
    capped = expect("extend above the maximum", call("POST", "/v1/sessions/authenticate", extender.get("session_token"),
                    {"session_duration_minutes": 525600}), 200)
    check("extension_capped", capped.get("extension_capped") is True, str(capped))

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

    # Rotation, blocking and introspection (the operator's admin endpoints).
    listed = expect("list identity secrets", call("GET", "/v1/admin/identity-secrets", SK), 200)
    secrets = listed.get("identity_secrets", [])
    check("identity secrets are listed without the secret", bool(secrets) and SECRET not in str(listed)
          and all(set(item) == {"kid", "created_at", "last_used_at"} for item in secrets), str(listed))
    check("identify recorded the secret's last use", any(item.get("kid") == KID and item.get("last_used_at")
          for item in secrets), str(listed))

    live = expect("identify for introspection", call("POST", "/v1/sessions/identify", PK,
                  {"identity_token": identity_token(f"probe-{uuid.uuid4()}")}), 200)
    for field in ("session_token", "session_jwt"):
        answer = expect(f"introspect a {field}", call("POST", "/v1/admin/sessions/introspect", SK,
                        {field: live.get(field)}), 200)
        check(f"an active {field}", answer.get("active") is True
              and answer.get("session", {}).get("id") == live.get("session", {}).get("id")
              and answer.get("profile", {}).get("blocked") is False, str(answer))
    unknown = expect("introspect an unknown token", call("POST", "/v1/admin/sessions/introspect", SK,
                     {"session_token": "st_unknown"}), 200)
    check("an unknown token is inactive", unknown == {"active": False}, str(unknown))
    expect("introspect without a token", call("POST", "/v1/admin/sessions/introspect", SK, {}), 400, "invalid_request")
    expect("introspect with the publishable key", call("POST", "/v1/admin/sessions/introspect", PK,
           {"session_token": live.get("session_token")}), 401, "invalid_credentials")
    expect("admin delete session", call("DELETE", f"/v1/admin/sessions/{live['session']['id']}", SK), 204)
    ended = call("POST", "/v1/admin/sessions/introspect", SK, {"session_token": live.get("session_token")}).json()
    check("an ended session is inactive", ended == {"active": False}, str(ended))
    expect("admin-deleted session", call("GET", "/v1/me", live.get("session_token")), 401, "session_revoked")
    expect("admin delete an unknown session", call("DELETE", "/v1/admin/sessions/ses_unknown", SK), 404, "not_found")

    blocked_sub = f"probe-block-{uuid.uuid4()}"
    victim = expect("identify before block", call("POST", "/v1/sessions/identify", PK,
                    {"identity_token": identity_token(blocked_sub)}), 200)
    victim_id = victim.get("profile", {}).get("id")
    blocked = expect("block", call("POST", f"/v1/admin/profiles/{victim_id}/block", SK, {"reason": "probe"}), 200)
    check("the profile says blocked", blocked.get("profile", {}).get("blocked") is True, str(blocked))
    expect("a blocked profile's session", call("GET", "/v1/me", victim.get("session_token")), 401, "session_revoked")
    expect("identify a blocked profile", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token(blocked_sub)}), 403, "profile_blocked")
    expect("unblock", call("POST", f"/v1/admin/profiles/{victim_id}/unblock", SK), 200)
    expect("identify after unblock", call("POST", "/v1/sessions/identify", PK,
           {"identity_token": identity_token(blocked_sub)}), 200)
    expect("block an unknown profile", call("POST", "/v1/admin/profiles/usr_unknown/block", SK, {}), 404, "not_found")
    device = installation()
    anonymous = expect("anonymous start before block", call("POST", "/v1/sessions/anonymous", PK, device), 201)
    expect("block an anonymous profile", call("POST", f"/v1/admin/profiles/{anonymous['profile']['id']}/block", SK), 200)
    expect("restore a blocked installation", call("POST", "/v1/sessions/anonymous", PK, device), 403, "profile_blocked")

    old_jwt = expect("identify before signing-key rotation", call("POST", "/v1/sessions/identify", PK,
                     {"identity_token": identity_token(f"probe-{uuid.uuid4()}")}), 200)
    rotated = expect("rotate the signing key", call("POST", "/v1/admin/signing-keys/rotate", SK), 201)
    new_kid = rotated.get("signing_key", {}).get("kid")
    jwks = call("GET", f"/v1/projects/{PROJECT_ID}/jwks.json").json()
    published = {key.get("kid"): key for key in jwks.get("keys", [])}
    old_kid = jwt.get_unverified_header(old_jwt.get("session_jwt", "")).get("kid")
    check("the JWKS publishes the new and the old key", new_kid in published and old_kid in published, str(published))
    fresh = expect("authenticate after rotation", call("POST", "/v1/sessions/authenticate", old_jwt.get("session_token")), 200)
    check("the new key signs", jwt.get_unverified_header(fresh.get("session_jwt", "")).get("kid") == new_kid)
    for name, token in (("old", old_jwt.get("session_jwt", "")), ("new", fresh.get("session_jwt", ""))):
        try:
            key = jwt.PyJWK(published[jwt.get_unverified_header(token)["kid"]])
            jwt.decode(token, key.key, algorithms=["ES256"], audience=PROJECT_ID)
            check(f"PyJWT verifies the {name} key's JWT through the JWKS", True)
        except Exception as error:  # noqa: BLE001 - reported as a failed probe
            check(f"PyJWT verifies the {name} key's JWT through the JWKS", False, repr(error))
    keys = expect("list signing keys", call("GET", "/v1/admin/signing-keys", SK), 200).get("signing_keys", [])
    check("signing keys: current first, never private", keys[:1] and keys[0].get("kid") == new_kid
          and keys[0].get("status") == "current" and '"d"' not in str(keys), str(keys))

    rotated_pk = expect("rotate the publishable key", call("POST", "/v1/admin/api-keys/rotate", SK,
                        {"kind": "publishable", "grace_seconds": 3600}), 201).get("api_key", {})
    check("a new publishable key", str(rotated_pk.get("key", "")).startswith("pk_") and rotated_pk.get("key") != PK)
    expect("the new publishable key works", call("POST", "/v1/sessions/anonymous", rotated_pk.get("key"), installation()), 201)
    expect("the old publishable key works in its grace", call("POST", "/v1/sessions/anonymous", PK, installation()), 201)
    expect("a negative grace", call("POST", "/v1/admin/api-keys/rotate", SK, {"kind": "secret", "grace_seconds": -1}),
           400, "invalid_request")
    expect("an unknown key kind", call("POST", "/v1/admin/api-keys/rotate", SK, {"kind": "other"}), 400, "invalid_request")

    # Request IDs.
    echoed = call("GET", "/health", headers={"X-Request-Id": "probe-123"})
    check("a plain X-Request-Id is echoed", echoed.headers.get("X-Request-Id") == "probe-123", str(dict(echoed.headers)))

    for failure in failures:
        print(f"contract-probe: FAIL {failure}", file=sys.stderr)
    print(f"contract-probe: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
