#!/usr/bin/env python3
"""The replay harness: captured session credentials and DPoP proofs replayed as a thief would.

    Server/Tests/replay/run.py --tessera PATH [--database sqlite|postgres] [--postgres-url URL]
                               [--attempts N] [--seed S] [--keep]

Starts `tessera serve` (SQLite: one node; PostgreSQL: two nodes on one schema, the attacker
alternating between them), creates sessions bound to device keys (RFC 9449: anonymous starts and
identifies, each with a proof of its device's key), captures each session's token, session JWT and
legitimate proofs, then sends N attacks at every endpoint that takes a session credential:

    heartbeat (POST /v1/sessions/authenticate without a body, with `{}`), extension (with
    session_duration_minutes), identify from the session, POST /v1/sessions/revoke,
    POST /v1/sessions/revoke-others, GET /v1/sessions, DELETE /v1/sessions/{id}, GET /v1/me,
    POST /v1/devices, DELETE /v1/devices/{id}

each with the session token or the session JWT, and one of these kinds (KINDS below): no proof; a
proof of another key; a stale or future `iat`; a wrong `htm`; an `htu` of another host or path; an
`ath` of another credential, or none; the `Bearer` scheme with a valid proof, or without one; and, on
the calls that change something, a captured legitimate proof replayed on the node that took it and on
the other one. A captured proof of a read (GET /v1/me, GET /v1/sessions, a heartbeat) is not replayed
as such: the contract lets a read repeat within the proof's window. A heartbeat's proof is sent again
as an extension instead: with the token it names no body (an extension's proof must name its body,
`tessera_body`: 401 dpop_proof_invalid), with the JWT it may not extend at all (403). The proofs with
a bad claim are signed by the victim's own key (the strongest case: a server that took them would
make every captured proof good for other requests).

Every attack must be refused with its 401 code and change nothing: the admin API must show the victims'
sessions (expiry, binding) and devices as they were, and the event feed must hold no event the
harness did not cause by a legitimate call. Control cases (the legitimate request with a fresh proof)
run between the attacks and at the end, on every endpoint, and must be accepted, so a harness that
could not tell would fail. Any accepted attack fails the run (exit 1) and is printed with its
credentials and proof redacted.

Needs `cryptography` (the project's .venv: Server/Tests/schemathesis/venv.sh).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
from dpop_proof import DeviceKey, ath as ath_of, b64url as b64  # noqa: E402

# Every node answers for this URL, as nodes behind one load balancer do: a proof made for one node is
# good on the other, so a replay on the other node is refused for its jti, not for its htu.
PUBLIC_URL = "https://tessera.replay.test"
SKEW = 60  # the server's ±60 s window for iat


class Key(DeviceKey):
    """A device's P-256 key (backends/dpop_proof.py), and DPoP proofs (ES256) made with it."""

    def proof(self, method: str, path: str, credential: str | None, *, iat_offset: int = 0,
              htu: str | None = None, ath: str | None | bool = True, body: object = None) -> str:
        """A proof for `method` `PUBLIC_URL+path`; `ath=True` hashes `credential`, a string is used as is,
        None leaves it out; a `body` is named by its hash (`tessera_body`), as the SDK does."""
        claims: dict[str, object] = {}
        if body is not None:
            claims["tessera_body"] = b64(hashlib.sha256(json.dumps(body).encode()).digest())
        if isinstance(ath, str):
            claims["ath"] = ath
        return super().proof(method, htu or PUBLIC_URL + path, credential if ath is True else None,
                             iat=int(time.time()) + iat_offset, jti=b64(os.urandom(18)), **claims)


# ─── HTTP ────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class Request:
    method: str
    path: str
    scheme: str | None = None  # "DPoP" or "Bearer"; None: no Authorization
    credential: str | None = None
    proof: str | None = None
    body: object = None


@dataclass
class Answer:
    status: int
    body: dict
    headers: dict[str, str]

    @property
    def code(self) -> str | None:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("code") if isinstance(error, dict) else None


class Node:
    """One keep-alive connection to one `tessera serve`."""

    def __init__(self, port: int, name: str) -> None:
        self.port, self.name, self.connection = port, name, None

    def send(self, request: Request) -> Answer:
        headers = {"Host": "tessera.replay.test"}
        if request.scheme and request.credential is not None:
            headers["Authorization"] = f"{request.scheme} {request.credential}"
        if request.proof is not None:
            headers["DPoP"] = request.proof
        data = None
        if request.body is not None:
            data = json.dumps(request.body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.connection.request(request.method, request.path, body=data, headers=headers)
                response = self.connection.getresponse()
                raw = response.read()
                break
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
        if response.will_close:
            self.connection.close()
            self.connection = None
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {"raw": raw[:200].decode("utf-8", "replace")}
        return Answer(response.status, parsed if isinstance(parsed, dict) else {"value": parsed},
                      {name.lower(): value for name, value in response.getheaders()})


def redact(text: str | None) -> str:
    if text is None:
        return "∅"
    return f"{text[:6]}…({len(text)} chars)"


def describe_proof(proof: str | None) -> str:
    """A proof's header key and claims, without its signature (nor the whole credential hash)."""
    if proof is None:
        return "no DPoP header"
    try:
        claims = harness.jwt_part(proof, 1)
        header = harness.jwt_part(proof, 0)
    except (ValueError, IndexError):
        return "DPoP " + redact(proof)
    shown = {k: (redact(v) if k in ("jti", "ath") else v) for k, v in claims.items()}
    return f"DPoP typ={header.get('typ')} jwk.x={redact(header.get('jwk', {}).get('x'))} claims={shown}"


def describe(request: Request, node: Node) -> str:
    return (f"{request.method} {request.path} on {node.name}: Authorization: {request.scheme or '∅'} "
            f"{redact(request.credential)}; {describe_proof(request.proof)}; body "
            f"{json.dumps(request.body) if request.body is not None and 'identity_token' not in str(request.body) else ('identity token' if request.body else '∅')}")


# ─── The victims ─────────────────────────────────────────────────────────────────────────────────


@dataclass
class Victim:
    """A session bound to `key`, as captured off its device: token, JWT, IDs."""

    name: str
    key: Key
    session_id: str
    token: str
    jwt: str
    profile_id: str
    sub: str | None  # the identified user, None for an anonymous session
    device_id: str = ""
    target_session_id: str = ""  # what DELETE /v1/sessions/{id} names: a sibling, else itself
    extra: dict = field(default_factory=dict)


# The endpoints that take a session credential: name → (method, path, body).
def endpoints(victim: Victim, identity_body) -> dict[str, tuple[str, str, object]]:
    return {
        "heartbeat": ("POST", "/v1/sessions/authenticate", None),
        "heartbeat {}": ("POST", "/v1/sessions/authenticate", {}),
        "extension": ("POST", "/v1/sessions/authenticate", {"session_duration_minutes": 600}),
        "identify": ("POST", "/v1/sessions/identify", identity_body(victim)),
        "revoke": ("POST", "/v1/sessions/revoke", None),
        "revoke-others": ("POST", "/v1/sessions/revoke-others", None),
        "list sessions": ("GET", "/v1/sessions", None),
        "delete session": ("DELETE", f"/v1/sessions/{victim.target_session_id}", None),
        "me": ("GET", "/v1/me", None),
        "register device": ("POST", "/v1/devices", {"platform": "apns", "token": os.urandom(16).hex()}),
        "delete device": ("DELETE", f"/v1/devices/{victim.device_id}", None),
    }


# Attack kinds on any endpoint: kind → expected code.
KINDS = {
    "no proof (DPoP scheme)": "dpop_proof_required",
    "no proof (Bearer scheme)": "dpop_proof_required",
    "Bearer scheme with a valid proof": "dpop_proof_required",
    "proof of another key": "dpop_key_mismatch",
    "stale iat (past)": "dpop_proof_invalid",
    "stale iat (future)": "dpop_proof_invalid",
    "wrong htm": "dpop_proof_invalid",
    "htu of another host": "dpop_proof_invalid",
    "htu of another path": "dpop_proof_invalid",
    "ath of another credential": "dpop_proof_invalid",
    "ath missing": "dpop_proof_invalid",
}
OTHER_METHOD = {"GET": "POST", "POST": "GET", "DELETE": "POST"}
OTHER_PATH = {"/v1/sessions/authenticate": "/v1/sessions/revoke", "/v1/sessions/identify": "/v1/sessions/authenticate",
              "/v1/sessions/revoke": "/v1/sessions/revoke-others", "/v1/sessions/revoke-others": "/v1/sessions/revoke",
              "/v1/sessions": "/v1/me", "/v1/me": "/v1/sessions", "/v1/devices": "/v1/me"}


class Run:
    def __init__(self, arguments, nodes: list[Node], project: harness.Project) -> None:
        self.arguments, self.nodes, self.project = arguments, nodes, project
        self.random = random.Random(arguments.seed)
        self.attempts = Counter()  # kind → attempts
        self.by_endpoint = Counter()
        self.accepted: list[str] = []
        self.wrong_code: list[str] = []
        self.controls = Counter()
        self.failures: list[str] = []
        self.cursor = 0  # the event feed's last sequence accounted for
        self.attacker = Key()

    # ── Plumbing ──

    def node(self, index: int) -> Node:
        return self.nodes[index % len(self.nodes)]

    def admin(self, method: str, path: str, body: object = None) -> Answer:
        return self.nodes[0].send(Request(method, path, "Bearer", self.project.secret_key, None, body))

    def identity_body(self, victim: Victim) -> dict:
        sub = victim.sub or "promoted-" + uuid.uuid4().hex[:10]
        return {"identity_token": harness.identity_token(self.project.identity_secret, self.project.kid,
                                                         harness.claims_for(sub))}

    def legit(self, victim: Victim, method: str, path: str, body: object = None, node: Node | None = None,
              credential: str | None = None) -> tuple[Answer, Request]:
        """The victim's own request, with a fresh proof of its key."""
        credential = credential or victim.token
        request = Request(method, path, "DPoP", credential, victim.key.proof(method, path, credential, body=body),
                          body)
        return (node or self.nodes[0]).send(request), request

    def fail(self, text: str) -> None:
        print("FAIL " + text, flush=True)
        self.failures.append(text)

    def events_after(self, after: int) -> list[dict]:
        events = []
        while True:
            answer = self.admin("GET", f"/v1/admin/events?after={after}&limit=200")
            if answer.status != 200:
                raise SystemExit(f"replay: GET /v1/admin/events answered {answer.status} {answer.code}")
            page = answer.body.get("events", [])
            events += page
            if len(page) < 200:
                return events
            after = answer.body["next_after"]

    def quiet_since_cursor(self, what: str) -> None:
        """No event since the last legitimate change: the attacks since then wrote nothing."""
        unexpected = self.events_after(self.cursor)
        if unexpected:
            kinds = Counter(event.get("type") for event in unexpected)
            self.fail(f"{what}: {len(unexpected)} events no legitimate call made: {dict(kinds)}")
            self.cursor = unexpected[-1]["sequence"]

    def advance_cursor(self) -> None:
        events = self.events_after(self.cursor)
        if events:
            self.cursor = events[-1]["sequence"]

    # ── Setup ──

    def start(self, key: Key, name: str) -> Victim:
        path = "/v1/sessions/anonymous"
        pk = self.project.publishable_key
        answer = self.nodes[0].send(Request("POST", path, "Bearer", pk, key.proof("POST", path, pk),
                                            harness.new_installation()))
        if answer.status != 201 or (answer.body["session"].get("binding") or {}).get("jkt") != key.jkt:
            raise SystemExit(f"replay: a bound anonymous start answered {answer.status} {answer.code}")
        return self.victim_from(answer, key, name, None)

    def identify(self, key: Key, name: str, sub: str, caller: Victim | None) -> Victim:
        path = "/v1/sessions/identify"
        body = {"identity_token": harness.identity_token(self.project.identity_secret, self.project.kid,
                                                         harness.claims_for(sub))}
        credential = caller.token if caller else self.project.publishable_key
        scheme = "DPoP" if caller else "Bearer"
        answer = self.nodes[0].send(Request("POST", path, scheme, credential, key.proof("POST", path, credential), body))
        if answer.status not in (200, 201) or (answer.body["session"].get("binding") or {}).get("jkt") != key.jkt:
            raise SystemExit(f"replay: a bound identify answered {answer.status} {answer.code}")
        return self.victim_from(answer, key, name, sub)

    @staticmethod
    def victim_from(answer: Answer, key: Key, name: str, sub: str | None) -> Victim:
        body = answer.body
        return Victim(name, key, body["session"]["id"], body["session_token"], body["session_jwt"],
                      body["profile"]["id"], sub)

    def register_device(self, victim: Victim) -> str:
        answer, _ = self.legit(victim, "POST", "/v1/devices", {"platform": "fcm", "token": os.urandom(20).hex()})
        if answer.status != 201:
            raise SystemExit(f"replay: a device registration answered {answer.status} {answer.code}")
        return answer.body["device"]["id"]

    def make_victims(self, count: int) -> list[Victim]:
        """Half anonymous (their own session as DELETE's target), half identified from a bound anonymous
        session, each with a sibling session of the same user on another key (DELETE's target, and what
        revoke-others would end); every victim has a push token."""
        victims = []
        for index in range(count):
            key = Key()
            if index % 2 == 0:
                victim = self.start(key, f"anonymous-{index}")
                victim.target_session_id = victim.session_id
            else:
                anonymous = self.start(key, f"pre-{index}")
                victim = self.identify(key, f"identified-{index}", "victim-" + uuid.uuid4().hex[:10], anonymous)
                sibling = self.identify(Key(), f"sibling-{index}", victim.sub, None)
                victim.target_session_id = sibling.session_id
            victim.device_id = self.register_device(victim)
            victims.append(victim)
        return victims

    def snapshot(self, victim: Victim) -> dict:
        """What an attack must not change: the profile's live sessions (ID, expiry, binding, kind) and
        devices, from the admin API."""
        sessions = self.admin("GET", f"/v1/admin/profiles/{victim.profile_id}/sessions")
        devices = self.admin("GET", f"/v1/admin/profiles/{victim.profile_id}/devices")
        if sessions.status != 200 or devices.status != 200:
            raise SystemExit(f"replay: admin lists answered {sessions.status}/{devices.status}")
        return {
            "sessions": sorted((s["id"], s.get("expires_at"), json.dumps(s.get("binding"), sort_keys=True),
                                s.get("kind"), s.get("revoked_at"), s.get("ended_at"))
                               for s in sessions.body.get("sessions", [])),
            "devices": sorted((d["id"], d.get("session_id")) for d in devices.body.get("devices", [])),
        }

    # ── Attacks ──

    def attack_request(self, victim: Victim, kind: str, endpoint: str, use_jwt: bool) -> Request:
        method, path, body = endpoints(victim, self.identity_body)[endpoint]
        credential = victim.jwt if use_jwt else victim.token
        other_credential = victim.token if use_jwt else victim.jwt
        key = victim.key
        scheme, proof = "DPoP", None
        if kind == "no proof (DPoP scheme)":
            pass
        elif kind == "no proof (Bearer scheme)":
            scheme = "Bearer"
        elif kind == "Bearer scheme with a valid proof":
            scheme, proof = "Bearer", key.proof(method, path, credential)
        elif kind == "proof of another key":
            proof = self.attacker.proof(method, path, credential)
        elif kind == "stale iat (past)":
            proof = key.proof(method, path, credential, iat_offset=-self.random.randint(SKEW + 15, 3600))
        elif kind == "stale iat (future)":
            proof = key.proof(method, path, credential, iat_offset=self.random.randint(SKEW + 15, 3600))
        elif kind == "wrong htm":
            proof = key.proof(OTHER_METHOD[method], path, credential)
        elif kind == "htu of another host":
            host = self.random.choice(["https://evil.example", "http://tessera.replay.test",
                                       "https://tessera.replay.test:8443", f"http://127.0.0.1:{self.nodes[0].port}"])
            proof = key.proof(method, path, credential, htu=host + path)
        elif kind == "htu of another path":
            other = OTHER_PATH.get(path) or ("/v1/sessions/" + victim.session_id if path.startswith("/v1/devices/")
                                             else "/v1/devices/" + victim.device_id)
            proof = key.proof(method, other, credential)
        elif kind == "ath of another credential":
            proof = key.proof(method, path, credential, ath=ath_of(other_credential))
        elif kind == "ath missing":
            proof = key.proof(method, path, credential, ath=None)
        else:
            raise ValueError(kind)
        return Request(method, path, scheme, credential, proof, body)

    def judge(self, kind: str, endpoint: str, request: Request, node: Node, answer: Answer, expected: set[str],
              status: int = 401) -> None:
        self.attempts[kind] += 1
        self.by_endpoint[endpoint] += 1
        if 200 <= answer.status < 300 or answer.status >= 500:
            self.accepted.append(f"ACCEPTED {kind} at {endpoint}: {describe(request, node)} → {answer.status}")
            print("FAIL " + self.accepted[-1], flush=True)
        elif answer.status != status or answer.code not in expected:
            self.wrong_code.append(f"{kind} at {endpoint}: {describe(request, node)} → {answer.status} {answer.code}, "
                                   f"expected {status} {'/'.join(sorted(expected))}")
            print("FAIL " + self.wrong_code[-1], flush=True)
        elif status == 401 and not (answer.headers.get("www-authenticate") or "").startswith("DPoP ") \
                and "session_" not in answer.code:
            self.wrong_code.append(f"{kind} at {endpoint}: {describe(request, node)} → {answer.status} {answer.code} "
                                   f"without a WWW-Authenticate: DPoP challenge")
            print("FAIL " + self.wrong_code[-1], flush=True)

    def attack(self, victim: Victim, index: int) -> None:
        kind = self.random.choice(list(KINDS))
        endpoint = self.random.choice(list(endpoints(victim, self.identity_body)))
        use_jwt = self.random.random() < 0.5
        request = self.attack_request(victim, kind, endpoint, use_jwt)
        node = self.node(index)
        self.judge(kind + (" [JWT]" if use_jwt else ""), endpoint, request, node, node.send(request), {KINDS[kind]})

    # ── Captured legitimate proofs, replayed ──

    def replay_round(self, victim: Victim, endpoint: str, node_index: int) -> None:
        """The victim makes one legitimate call that changes something; the attacker, who captured it
        whole (credential and proof), sends it again on the same node and on the other one."""
        self.quiet_since_cursor(f"before a legitimate {endpoint}")
        node = self.node(node_index)
        status = 401
        if endpoint in ("heartbeat proof as an extension", "JWT heartbeat proof as an extension"):
            # A captured heartbeat sent again with a body. A heartbeat spends nothing (it writes nothing),
            # but its proof names no body, which an extension's must; and a JWT cannot extend at all.
            jwt = endpoint.startswith("JWT")
            answer, request = self.legit(victim, "POST", "/v1/sessions/authenticate", None, node,
                                         victim.jwt if jwt else None)
            request = Request(request.method, request.path, request.scheme, request.credential, request.proof,
                              {"session_duration_minutes": 600})
            expected, status = ({"session_token_required"}, 403) if jwt else ({"dpop_proof_invalid"}, 401)
        elif endpoint == "identify (publishable key)":
            # A sign-in on the victim's device (no session yet): the proof binds the new session.
            pk = self.project.publishable_key
            path = "/v1/sessions/identify"
            request = Request("POST", path, "Bearer", pk, victim.key.proof("POST", path, pk),
                              self.identity_body(victim))
            answer = node.send(request)
            expected = {"dpop_proof_replayed"}
        else:
            method, path, body = endpoints(victim, self.identity_body)[endpoint]
            # Half the captures carry the session JWT, but for the authenticate calls: an extension needs
            # the token, and a JWT's heartbeat is a read whose proof may repeat within its window.
            credential = (victim.jwt if not path.endswith("/authenticate") and self.random.random() < 0.5
                          else victim.token)
            answer, request = self.legit(victim, method, path, body, node, credential)
            # Revoke and identify end the calling session: a replay of either finds it ended first.
            expected = {"session_revoked"} if endpoint in ("revoke", "identify") else {"dpop_proof_replayed"}
        if not (200 <= answer.status < 300):
            self.fail(f"control: legitimate {endpoint} with a fresh proof answered {answer.status} {answer.code}")
            return
        self.controls[endpoint] += 1
        self.settle_legit(victim, endpoint, answer)
        self.advance_cursor()
        if request.credential == victim.jwt:
            endpoint += " [JWT]"
        others = "other node" if len(self.nodes) > 1 else "same node, again"
        for which, replay_node in (("same node", node), (others, self.node(node_index + 1))):
            kind = f"reused jti ({which})"
            self.judge(kind, endpoint, request, replay_node, replay_node.send(request), expected, status)
        self.quiet_since_cursor(f"after replays of a captured {endpoint}")

    def settle_legit(self, victim: Victim, endpoint: str, answer: Answer) -> None:
        """Keeps the replay victim usable after its own legitimate change."""
        if endpoint == "register device":
            victim.extra.setdefault("devices", []).append(answer.body["device"]["id"])

    def replay_victim(self) -> Victim:
        """A fresh identified victim with a sibling session and a device, for one round of replays."""
        key = Key()
        victim = self.identify(key, "replayed", "replayed-" + uuid.uuid4().hex[:10], None)
        victim.target_session_id = self.identify(Key(), "replayed-sibling", victim.sub, None).session_id
        victim.device_id = self.register_device(victim)
        return victim

    # ── Controls ──

    def control(self, victim: Victim, index: int) -> None:
        """A legitimate read on a random node: accepted. The heartbeat's fresh JWT replaces the captured one."""
        endpoint = ("heartbeat", "me", "list sessions", "heartbeat {}")[(index // 16) % 4]
        method, path, body = endpoints(victim, self.identity_body)[endpoint]
        use_jwt = index % 3 == 0
        credential = victim.jwt if use_jwt else victim.token
        answer, _ = self.legit(victim, method, path, body, self.node(index), credential)
        if answer.status != 200:
            self.fail(f"control: legitimate {endpoint} answered {answer.status} {answer.code}")
            return
        self.controls[endpoint] += 1
        if endpoint.startswith("heartbeat"):
            victim.jwt = answer.body.get("session_jwt") or victim.jwt


def start_backend(arguments, work: str):
    key = harness.write_master_key(os.path.join(work, "master.key"))
    environment = harness.clean_environment(TESSERA_MASTER_KEY_FILE=key)
    cluster = None
    if arguments.database == "sqlite":
        database, count = f"sqlite:{os.path.join(work, 'tessera.sqlite')}", 1
    else:
        base = arguments.postgres_url
        if not base:
            cluster = harness.PostgresCluster(f"/tmp/tessera-replay-postgres-{os.getpid()}", "replay")
            base = cluster.start()
        database, count = harness.with_query(base, "schema=replay_" + uuid.uuid4().hex[:12]), 2
    project = harness.create_project(arguments.tessera, database, "Replay", environment, what="replay")
    nodes, processes = [], []
    try:
        for index in range(count):
            node = harness.start_node(arguments.tessera, database, "--log-level", "warning", "--public-url", PUBLIC_URL,
                                      log=os.path.join(work, f"node-{index}.log"), environment=environment,
                                      what=f"replay: node {index}")
            processes.append(node.process)
            nodes.append(Node(node.port, "node " + "AB"[index]))
    except BaseException:
        harness.stop(*processes)
        if cluster:
            cluster.stop()
        raise
    return nodes, processes, cluster, project


def main() -> int:
    parser = harness.backend_arguments(__doc__)
    parser.add_argument("--attempts", type=int, default=1000)
    parser.add_argument("--victims", type=int, default=6)
    arguments = harness.parse_seeded(parser)
    work = tempfile.mkdtemp(prefix=f"tessera-replay-{arguments.database}-")
    print(f"replay: {arguments.database}, seed {arguments.seed}, {arguments.attempts} attempts; work dir {work}",
          flush=True)
    wall = time.monotonic()
    processes, cluster, run = [], None, None
    try:
        nodes, processes, cluster, project = start_backend(arguments, work)
        reply = harness.call(nodes[0].port, "PATCH", "/v1/admin/project", project.secret_key,
                             {"rate_limits": harness.UNLIMITED_RATE_LIMITS})
        if reply.status != 200:
            raise SystemExit(f"replay: PATCH /v1/admin/project answered {reply.status} {reply.code}")
        run = Run(arguments, nodes, project)
        execute(run, arguments)
    finally:
        failed = run is None or bool(run.accepted or run.wrong_code or run.failures)
        harness.clean_up(work, arguments.keep or failed, "replay", processes, cluster)
    seconds = time.monotonic() - wall
    total = sum(run.attempts.values())
    nodes_text = f"{len(run.nodes)} node{'s' if len(run.nodes) > 1 else ''}"
    print(f"\n━━ replay summary ({arguments.database}, seed {arguments.seed})")
    print("by kind:     " + ", ".join(f"{kind} {count}" for kind, count in sorted(run.attempts.items())))
    print("by endpoint: " + ", ".join(f"{name} {count}" for name, count in sorted(run.by_endpoint.items())))
    print(f"controls accepted: {sum(run.controls.values())} (" + ", ".join(f"{name} {count}" for name, count in sorted(run.controls.items())) + ")")
    print(f"refused with another code than expected: {len(run.wrong_code)}; other failures: {len(run.failures)}")
    kinds = Counter()
    for kind, count in run.attempts.items():
        kinds[kind.replace(" [JWT]", "")] += count
    print(f"replay-check: {total} attempts on {arguments.database} ({nodes_text}), {len(run.accepted)} accepted, "
          f"in {seconds:.1f} s, seed {arguments.seed}; by kind: "
          + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))
    return 1 if failed else 0


def execute(run: Run, arguments) -> None:
    victims = run.make_victims(arguments.victims)
    before = {victim.name: run.snapshot(victim) for victim in victims}
    replay_endpoints = ["extension", "heartbeat proof as an extension", "identify", "revoke-others",
                        "delete session", "register device", "delete device", "revoke",
                        "identify (publishable key)", "JWT heartbeat proof as an extension"]
    replay_victim = run.replay_victim()
    run.advance_cursor()
    round_number = 0
    index = 0
    # About one attempt in eight is a captured proof replayed (two per round: same node, other node).
    while sum(run.attempts.values()) < arguments.attempts:
        if index % 32 == 31:
            endpoint = replay_endpoints[round_number % len(replay_endpoints)]
            run.replay_round(replay_victim, endpoint, round_number)
            if endpoint not in ("register device", "heartbeat proof as an extension",
                                "JWT heartbeat proof as an extension"):
                replay_victim = run.replay_victim()
                run.advance_cursor()
            round_number += 1
        elif index % 16 == 7:
            run.control(victims[index % len(victims)], index)
        else:
            run.attack(victims[index % len(victims)], index)
        if index % 500 == 499:
            run.quiet_since_cursor(f"after attempt {sum(run.attempts.values())}")
        index += 1
    run.quiet_since_cursor("after the last attack")
    for victim in victims:
        after = run.snapshot(victim)
        if after != before[victim.name]:
            run.fail(f"victim {victim.name}: sessions or devices changed: {before[victim.name]} → {after}")
    # Final controls: every endpoint, legitimately, on each victim's own session: accepted.
    for victim in victims:
        final_controls(run, victim)


def final_controls(run: Run, victim: Victim) -> None:
    """The victim's legitimate calls with fresh proofs, every endpoint (the destructive ones last)."""
    order = ["heartbeat", "heartbeat {}", "me", "list sessions", "extension", "register device", "delete device",
             "delete session", "revoke-others", "identify", "revoke"]
    for endpoint in order:
        method, path, body = endpoints(victim, run.identity_body)[endpoint]
        answer, _ = run.legit(victim, method, path, body, run.nodes[-1])
        if not (200 <= answer.status < 300):
            run.fail(f"control: {victim.name}'s legitimate {endpoint} answered {answer.status} {answer.code}")
            return
        run.controls[endpoint] += 1
        if endpoint == "delete session" and victim.target_session_id == victim.session_id:
            return  # the anonymous victim deleted its own session: it has ended
        if endpoint == "identify":
            body = answer.body
            victim.session_id, victim.token, victim.jwt = body["session"]["id"], body["session_token"], body["session_jwt"]


if __name__ == "__main__":
    sys.exit(main())
