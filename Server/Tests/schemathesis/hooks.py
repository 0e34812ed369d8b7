"""Schemathesis hooks for Tessera: real credentials for every security scheme of the OpenAPI document.

Loaded by scripts/schemathesis (SCHEMATHESIS_HOOKS). The script starts a throwaway `tessera serve`,
creates a project and passes its keys in the environment:

  TESSERA_ST_URL               the server's base URL
  TESSERA_ST_PROJECT_ID        prj_…
  TESSERA_ST_PUBLISHABLE_KEY   pk_…
  TESSERA_ST_SECRET_KEY        sk_…
  TESSERA_ST_IDENTITY_SECRET   the project's identity secret (HMAC key: its UTF-8 bytes)
  TESSERA_ST_IDENTITY_KID      its kid

For each generated case the auth provider reads the operation's `security` and takes one of its
alternatives in turn: the publishable key, the secret key, or the session token / session JWT of a
session opened just for this case — anonymous (`POST /v1/sessions/anonymous`) or verified
(`POST /v1/sessions/identify` with an identity token minted here) — so that a case which
revokes or erases its session cannot starve the next one. For `identify` in positive mode, half of the
generated bodies get a real identity token (a new user, a known user, or the calling session's own
user), so the success paths and the `merge` outcomes are fuzzed too, not only the 401s.
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import threading
import uuid
from pathlib import Path

import requests
import schemathesis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

BASE_URL = os.environ["TESSERA_ST_URL"].rstrip("/")
PROJECT_ID = os.environ["TESSERA_ST_PROJECT_ID"]
PUBLISHABLE_KEY = os.environ["TESSERA_ST_PUBLISHABLE_KEY"]
SECRET_KEY = os.environ["TESSERA_ST_SECRET_KEY"]

# What the fuzzer may change through PATCH /v1/admin/project that stops the hooks' identify.
DEFAULT_SETTINGS = {
    "require_audience": False,
    "expected_issuer": None,
    "max_identity_token_lifetime_seconds": 3600,
    "leeway_seconds": 60,
    # One client sends everything: the limits stay lifted (run.py lifts them first).
    "rate_limits": harness.UNLIMITED_RATE_LIMITS,
    # The fuzzer may require DPoP proofs (bound sessions); the minted sessions send none.
    "session_binding": "optional",
    "dpop_nonce_required": False,
    # A session limit would end the sessions minted for earlier steps of a case.
    "max_sessions_per_profile": None,
    # The fuzzer may require App Attest evidence; the minted sessions send none.
    "app_attest": {"mode": "off"},
}


class MintingError(RuntimeError):
    pass


class Tessera:
    """A tiny client that opens real sessions on the server under test."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.secret = os.environ["TESSERA_ST_IDENTITY_SECRET"]
        self.kid = os.environ.get("TESSERA_ST_IDENTITY_KID") or None
        self.http = threading.local()
        self.known_subjects: list[str] = []
        self.subject_of: dict[str, str] = {}
        self.counter = itertools.count()

    def session(self) -> requests.Session:
        if not hasattr(self.http, "session"):
            self.http.session = requests.Session()
        return self.http.session

    def post(self, path: str, credential: str, body: object | None = None) -> requests.Response:
        return self.session().post(
            BASE_URL + path, json=body, headers={"Authorization": f"Bearer {credential}"}, timeout=10
        )

    def identity_token(self, subject: str, **claims: object) -> str:
        with self.lock:
            secret, kid = self.secret, self.kid
        return harness.identity_token(secret, kid, harness.claims_for(subject, ttl=600, aud=PROJECT_ID, **claims))

    def new_subject(self) -> str:
        subject = f"user-{uuid.uuid4()}"
        with self.lock:
            self.known_subjects.append(subject)
        return subject

    def known_subject(self) -> str:
        with self.lock:
            if self.known_subjects:
                return random.choice(self.known_subjects)
        return self.new_subject()

    def anonymous(self) -> dict:
        body = harness.new_installation()
        response = self.post("/v1/sessions/anonymous", PUBLISHABLE_KEY, body)
        # The fuzzer set a rate limit, or required DPoP proofs, nonces or App Attest evidence: undo it.
        if response.status_code == 429 or (
            response.status_code in (400, 401, 403) and ("dpop" in response.text or "attestation" in response.text)
        ):
            self.repair(response)
            response = self.post("/v1/sessions/anonymous", PUBLISHABLE_KEY, body)
        if response.status_code not in (200, 201):
            raise MintingError(f"anonymous start answered {response.status_code}: {response.text[:300]}")
        return response.json()

    def verified(self) -> dict:
        """A verified session; an anonymous one if the fuzzer has just made identify impossible."""
        subject = self.new_subject()
        for _ in range(3):
            response = self.post("/v1/sessions/identify", PUBLISHABLE_KEY, {"identity_token": self.identity_token(subject)})
            if response.status_code == 200:
                envelope = response.json()
                with self.lock:
                    self.subject_of[envelope["session_token"]] = subject
                    self.subject_of[envelope["session_jwt"]] = subject
                return envelope
            self.repair(response)
        return self.anonymous()

    def repair(self, response: requests.Response) -> None:
        """Undo what the fuzzer did to the project that stops identify: settings, or a retired secret."""
        try:
            code = response.json()["error"]["code"]
        except (ValueError, KeyError, TypeError):
            code = ""
        if code == "invalid_signature":
            created = self.session().post(
                BASE_URL + "/v1/admin/identity-secrets", headers={"Authorization": f"Bearer {SECRET_KEY}"}, timeout=10
            )
            if created.status_code == 201:
                data = created.json()["identity_secret"]
                with self.lock:
                    self.secret, self.kid = data["secret"], data["kid"]
        else:
            self.session().patch(
                BASE_URL + "/v1/admin/project", json=DEFAULT_SETTINGS,
                headers={"Authorization": f"Bearer {SECRET_KEY}"}, timeout=10,
            )

    def subject_for(self, credential: str) -> str | None:
        with self.lock:
            return self.subject_of.get(credential)


TESSERA = Tessera()
ROTATION = itertools.count()
# Credentials this file minted, and the credential that owns each session and device it saw
# created, so that the stateful phase deletes a resource as its owner (anyone else gets a 404).
MINTED: set[str] = set()
OWNERS: dict[str, str] = {}
OWNERS_LOCK = threading.Lock()


def session_credential(field: str) -> str:
    envelope = TESSERA.anonymous() if next(ROTATION) % 2 == 0 else TESSERA.verified()
    with OWNERS_LOCK:
        MINTED.add(envelope[field])
    return envelope[field]


CREDENTIALS = {
    "publishableKey": lambda: PUBLISHABLE_KEY,
    "secretKey": lambda: SECRET_KEY,
    "sessionToken": lambda: session_credential("session_token"),
    "sessionJWT": lambda: session_credential("session_jwt"),
}


def security_schemes(operation) -> list[str]:
    raw = operation.definition.raw
    requirements = raw.get("security", operation.schema.raw_schema.get("security", []))
    return [name for requirement in requirements for name in requirement]


def is_positive(case) -> bool:
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode.is_positive


@schemathesis.auth(refresh_interval=None)
class TesseraAuth:
    """Mints a real credential of one of the operation's security schemes for every case."""

    def get(self, case, ctx):
        schemes = security_schemes(ctx.operation)
        if not schemes:
            return None
        scheme = schemes[next(ROTATION) % len(schemes)]
        return CREDENTIALS[scheme]()

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
        body = case.body
        if (
            ctx.operation.definition.raw.get("operationId") == "rotateApiKey"
            and isinstance(body, dict)
            and type(body.get("grace_seconds")) is int
            and 0 <= body["grace_seconds"] < 86400
        ):
            # The run's keys must keep working: a rotation keeps the old key for at least a day.
            body["grace_seconds"] = 86400
        if (
            ctx.operation.definition.raw.get("operationId") == "identify"
            and is_positive(case)
            and isinstance(body, dict)
            and isinstance(body.get("identity_token"), str)
            and random.random() < 0.5
        ):
            own = TESSERA.subject_for(data)
            choice = random.random()
            if own is not None and choice < 0.4:
                subject = own  # unchanged
            elif choice < 0.7:
                subject = TESSERA.known_subject()  # merged (or 409 external_user_id_changed from another user's session)
            else:
                subject = TESSERA.new_subject()  # promoted
            claims = random.choice([
                {},
                {"name": "Ada Lovelace", "email": "ada@example.com", "avatar_url": "https://example.com/ada.png"},
                {"jti": str(uuid.uuid4())},
            ])
            body["identity_token"] = TESSERA.identity_token(subject, **claims)
        if (
            ctx.operation.definition.raw.get("operationId") in ("createWebhook", "updateWebhook")
            and is_positive(case)
            and isinstance(body, dict)
            and isinstance(body.get("url"), str)
        ):
            # Whether a URL is allowed depends on its host (no loopback, private or link-local address,
            # decided as the server resolves it), which a schema cannot express: a positive case gets a
            # public https URL, as a real caller would send.
            body["url"] = "https://hooks.example.com/tessera/" + str(uuid.uuid4())


def holds_refused_text(value: object) -> bool:
    """Whether any string in `value`, member names included, holds a control character (C0, DEL, C1)
    or an unpaired surrogate: what the contract refuses in every request body (`info.description`)."""
    if isinstance(value, str):
        return any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(holds_refused_text(key) or holds_refused_text(item) for key, item in value.items())
    if isinstance(value, list):
        return any(holds_refused_text(item) for item in value)
    return False


@schemathesis.hook
def filter_case(context, case):
    """A schema-valid (positive) case never holds a string the contract refuses everywhere. The bodies
    accept unknown members (a newer SDK keeps working against an older server), and the schema cannot
    say that their names and values, like every other string, hold no control character: without this
    filter the fuzzer counts the server's documented `400 invalid_request` as a valid request rejected."""
    return not (is_positive(case) and holds_refused_text(case.body))


def bearer(case) -> str | None:
    value = (case.headers or {}).get("Authorization", "")
    return value[7:] if value.startswith("Bearer ") else None


@schemathesis.hook
def after_call(context, case, response):
    """Remembers who owns the sessions and devices the run creates."""
    if response.status_code not in (200, 201):
        return
    try:
        data = response.json()
    except Exception:
        return
    if not isinstance(data, dict):
        return
    with OWNERS_LOCK:
        session = data.get("session")
        if isinstance(session, dict) and isinstance(data.get("session_token"), str):
            OWNERS[session.get("id")] = data["session_token"]
            MINTED.add(data["session_token"])
        device = data.get("device")
        credential = bearer(case)
        if isinstance(device, dict) and credential is not None:
            OWNERS[device.get("id")] = credential


@schemathesis.hook
def before_call(context, case, kwargs):
    """Deletes a session or device the run created with its owner's credential (stateful links)."""
    credential = bearer(case)
    with OWNERS_LOCK:
        if credential not in MINTED:
            return  # no auth, or a credential a check crafted on purpose (ignored_auth)
        for name in ("session_id", "device_id"):
            owner = OWNERS.get((case.path_parameters or {}).get(name))
            if owner is not None:
                case.headers["Authorization"] = f"Bearer {owner}"
