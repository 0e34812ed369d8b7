#!/usr/bin/env python3
"""The race checker: every pair (and some triples) of mutating operations on one profile, session,
installation, device or webhook, run at once many times, each race checked against its serial orders.

    Server/Tests/races/run.py --tessera PATH --database sqlite|postgres [--races N] [--seed S]
        [--parallel 3] [--triples 0.2] [--only RACE] [--postgres-url URL] [--keep] [--strict-codes]

Usually run through `scripts/race-check`. One run, on one backend:

1. Starts the servers: one `tessera serve` on a fresh SQLite file, or two on one fresh schema of a
   throwaway PostgreSQL cluster (scripts/postgres in its own TESSERA_PG_DIR), sharing one master key.
   The project allows the unverified `user_id` identify (for the upgrade) and has no rate limits.
2. Runs `--races` races, `--parallel` at a time. Race i takes its operations from a seeded schedule
   that cycles through every pair of the operations below that share a target (same-kind pairs
   included), with a `--triples` share of random triples. Each race sets up a fresh world with only
   what its operations need: an anonymous installation I with profile A, its sessions SA and SA2 and a
   device DA on SA; an identified user `u` with profile P, sessions SP and SP2 and a device DP on SP2;
   an unverified user `v` (profile V, session SV); a webhook W (disabled, so nothing is delivered);
   for the unblock races a profile that starts blocked. Then each operation runs on a thread and a
   connection of its own, to a seeded node (PostgreSQL), released together by a barrier, each after
   a seeded delay of 0-4 ms.

   Operations: `start` (anonymous start of a new installation) · `restore` (anonymous start of I) ·
   identify `sign_in` (publishable key, user u), `promote` (SA, a new user x), `merge` (SA, user u),
   `unchanged` (SP, u), `upgrade` (SV signs in with a signed token for v) · `extend` (SA,
   heartbeat with a duration) · `sign_out` (SA) · `revoke_other` (DELETE /v1/sessions/SP2 by SP) ·
   `revoke_back` (DELETE /v1/sessions/SP by SP2: the caller of another operation ended by this one) ·
   `revoke_others` (POST /v1/sessions/revoke-others by SP) · `device_add` (SA, the push token DA
   holds) · `device_remove` (DA by SA) · `device_remove_DP` (DP by SP) · `block`, `unblock`, `erase`, `revoke_all` (admin) of A, P or V · `admin_end` (DELETE /v1/admin/sessions/{SA or SP2}) ·
   `webhook_update` (PATCH description), `webhook_delete`, `webhook_rotate` · `cleanup` (expiry).
   Cleanup expiry: the cleanup service runs a pass when a node starts, then every
   60 s (ServerConfiguration.cleanupInterval, not a command-line option), so a cleanup race sets SA's
   expiry into the past in the database at setup (sessions last at least 5 minutes), and its
   `cleanup` operation is one more `tessera serve` started on the same database, whose first pass
   runs while the race's other operations are sent, spread over 1.2 times the time the previous such
   node took to answer (about 0.3 s); cleanup races run in batches of 24 that share such a node (two
   nodes for cleanup ∥ cleanup).
3. Checks each race: the answers, the events the feed holds for the race's profiles (or webhook),
   and the final state read through the admin API (each profile ID: resolved profile, kind,
   external ID, blocked, personal data; its live sessions, live devices, aliases; lookup by each
   user's external ID; the webhook) must equal those of ONE serial order of its operations, computed
   by model.py. Beyond that: no event ID twice; no live session (introspection of every token the
   race saw) of a blocked or erased profile; and no personal data of a user who holds no profile
   any more in any event but its `profile.erased`. A rejection (4xx) that matches a serial order's
   rejection with another status (a device removal answered 404 because its session ended meanwhile,
   where the order says 401) wrote nothing either: counted in the summary, a violation only with
   --strict-codes.
4. On PostgreSQL, reads the cluster's server.log: any "deadlock detected" is a violation.

A violation prints the race number, the seed, the operations with their node and delay, the order in
which they were sent and answered with the answers, the events seen, and the differences from the
nearest serial order. `--seed S --only N` runs race N of seed S alone again (the schedule, the world,
the nodes and delays are the same; the threads' interleaving is up to the machine).
Exits 1 on any violation.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tessera_harness as harness  # noqa: E402
import model as M  # noqa: E402
from tessera_harness import clean_environment  # noqa: E402

# ─── The operations ──────────────────────────────────────────────────────────────────────────────

# name -> (model kind, target, caller, needs); the groups say which operations share a target.
TEMPLATES: dict[str, tuple[str, str, str, frozenset[str]]] = {
    "start": ("start", "", "", frozenset({"I"})),
    "restore": ("restore", "", "", frozenset({"A"})),
    "sign_in": ("sign_in", "", "", frozenset({"P"})),
    "promote": ("promote", "", "SA", frozenset({"A"})),
    "merge": ("merge", "", "SA", frozenset({"A", "P"})),
    "unchanged": ("unchanged", "", "SP", frozenset({"P"})),
    "upgrade": ("upgrade", "", "SV", frozenset({"V"})),
    "extend": ("extend", "", "SA", frozenset({"A"})),
    "sign_out": ("sign_out", "", "SA", frozenset({"A"})),
    "revoke_other": ("revoke_other", "SP2", "SP", frozenset({"P", "SP2"})),
    "revoke_others": ("revoke_others", "", "SP", frozenset({"P", "SP2", "DP"})),
    # The other way round: SP2 ends SP, so an operation whose caller is SP can be ended by another.
    "revoke_back": ("revoke_other", "SP", "SP2", frozenset({"P", "SP2"})),
    "device_remove_DP": ("device_remove", "DP", "SP", frozenset({"P", "SP2", "DP"})),
    "device_add": ("device_add", "", "SA", frozenset({"A", "DA"})),
    "device_remove": ("device_remove", "DA", "SA", frozenset({"A", "DA"})),
    "block_A": ("block", "A", "", frozenset({"A", "SA2", "DA"})),
    "block_P": ("block", "P", "", frozenset({"P", "SP2", "DP"})),
    "block_V": ("block", "V", "", frozenset({"V"})),
    "unblock_A": ("unblock", "A", "", frozenset({"A"})),
    "unblock_P": ("unblock", "P", "", frozenset({"P"})),
    "erase_A": ("erase", "A", "", frozenset({"A", "SA2", "DA"})),
    "erase_P": ("erase", "P", "", frozenset({"P", "SP2", "DP"})),
    "erase_V": ("erase", "V", "", frozenset({"V"})),
    "revoke_all_A": ("revoke_all", "A", "", frozenset({"A", "SA2", "DA"})),
    "revoke_all_P": ("revoke_all", "P", "", frozenset({"P", "SP2", "DP"})),
    "admin_end_SA": ("admin_end_session", "SA", "", frozenset({"A", "DA"})),
    "admin_end_SP2": ("admin_end_session", "SP2", "", frozenset({"P", "SP2", "DP"})),
    "cleanup": ("cleanup", "", "", frozenset({"A", "SA2", "DA", "expired"})),
    "webhook_update": ("webhook_update", "", "", frozenset({"W"})),
    "webhook_delete": ("webhook_delete", "", "", frozenset({"W"})),
    "webhook_rotate": ("webhook_rotate", "", "", frozenset({"W"})),
}
GROUPS = {
    "installation A": ["restore", "promote", "merge", "extend", "sign_out", "device_add", "device_remove",
                       "block_A", "unblock_A", "erase_A", "revoke_all_A", "admin_end_SA"],
    "new installation I": ["start"],
    "profile P": ["sign_in", "merge", "unchanged", "revoke_other", "revoke_back", "revoke_others", "device_remove_DP",
                  "block_P", "unblock_P", "erase_P", "revoke_all_P", "admin_end_SP2"],
    "profile V": ["upgrade", "block_V", "erase_V"],
    "webhook W": ["webhook_update", "webhook_delete", "webhook_rotate"],
}
# Cleanup expiry of SA (expired in the database at setup) against what else may end it or its device.
CLEANUP_PARTNERS = ["cleanup", "erase_A", "block_A", "revoke_all_A", "admin_end_SA", "restore", "device_remove"]
CLEANUP_BATCH = 24  # cleanup races that share one cleanup node's start


def schedule(seed: int, triples: float, length: int) -> list[tuple[str, ...]]:
    """The races' operations: every pair of a group (with repeats: erase ∥ erase), shuffled, cycled;
    a `triples` share of races are a random triple of one group instead."""
    rng = random.Random(f"{seed}-schedule")
    pairs = sorted({tuple(sorted(pair)) for members in GROUPS.values()
                    for pair in itertools.combinations_with_replacement(members, 2)}
                   | {tuple(sorted(("cleanup", partner))) for partner in CLEANUP_PARTNERS})
    races: list[tuple[str, ...]] = []
    while len(races) < length:
        cycle = list(pairs)
        rng.shuffle(cycle)
        for pair in cycle:
            if rng.random() < triples:
                members = GROUPS[rng.choice(sorted(GROUPS))]
                races.append(tuple(rng.choice(members) for _ in range(3)))
            races.append(pair)
    return races[:length]


# ─── The servers ─────────────────────────────────────────────────────────────────────────────────


def crash_database():
    """The crash harness's direct database access (Server/Tests/crash/database.py: Database), shared, not copied."""
    sys.path.append(str(Path(__file__).resolve().parents[1] / "crash"))  # after this folder: model.py stays ours
    from database import Database
    return Database


@dataclass
class Backend:
    ports: list[int]
    project: harness.Project
    cluster: harness.PostgresCluster | None
    cluster_directory: str | None
    processes: list
    work: str
    database_url: str = ""
    database: object = None  # crash's Database: rows(sql), execute([sql])
    environment: dict = field(default_factory=dict)


def start_backend(arguments, work: str) -> Backend:
    key = harness.write_master_key(os.path.join(work, "master.key"))
    environment = clean_environment(TESSERA_MASTER_KEY_FILE=key)
    cluster = directory = None
    Database = crash_database()
    if arguments.database == "sqlite":
        path = os.path.join(work, "tessera.sqlite")
        database, nodes = f"sqlite:{path}", 1
        direct = Database("sqlite", sqlite_path=path)
    else:
        base = arguments.postgres_url
        if not base:
            # Not inside `work`: the cluster runs as the postgres user when we are root.
            directory = f"/tmp/tessera-races-postgres-{os.getpid()}"
            cluster = harness.PostgresCluster(directory, "races")
            base = cluster.start()
        schema = "races_" + uuid.uuid4().hex[:12]
        database, nodes = harness.with_query(base, f"schema={schema}"), 2
        direct = Database("postgres", postgres_url=base, schema=schema)
    project = harness.create_project(arguments.tessera, database, "Races", environment, what="races")
    ports, processes = [], []
    for index in range(nodes):
        # Races end sessions that other requests of the race then present: lift the server's guessing limit.
        node = harness.start_node(arguments.tessera, database, "--log-level", "warning",
                                  "--failed-session-lookups-per-minute", "0", log=os.path.join(work, f"node-{index}.log"),
                                  environment=environment, what=f"races: node {index}")
        processes.append(node.process)
        ports.append(node.port)
    settings = dict(harness.UNLIMITED_RATE_LIMITS)
    reply = harness.call(ports[0], "PATCH", "/v1/admin/project", project.secret_key,
                         {"allow_unverified_identify": True, "rate_limits": settings})
    if reply.status != 200:
        raise SystemExit(f"races: PATCH /v1/admin/project answered {reply.status} {reply.code}")
    return Backend(ports, project, cluster, directory, processes, work, database, direct, environment)


# ─── One race ────────────────────────────────────────────────────────────────────────────────────


class Violation(Exception):
    pass


@dataclass
class Sent:
    """One operation as it ran: what it sent, when, and what came back (times in ms from the release)."""

    name: str
    op: M.Op
    port: int
    delay: float
    request: str = ""
    sent: float = 0.0
    answered: float = 0.0
    status: int = 0
    code: str | None = None
    body: dict = field(default_factory=dict)


class Race:
    def __init__(self, checker: "Checker", number: int, names: tuple[str, ...]):
        self.checker, self.number, self.names = checker, number, names
        self.rng = random.Random(f"{checker.seed}-race-{number}")
        self.tag = f"r{checker.seed}-{number}-{uuid.uuid4().hex[:6]}"
        self.project = checker.backend.project
        self.client = harness.Client(self.port(), timeout=30)
        self.ids: dict[str, str] = {}  # symbol -> real ID
        self.tokens: dict[str, str] = {}  # session symbol -> session token
        self.world = M.World()
        self.setup_events: set[str] = set()
        self.sents: list[Sent] = []
        self.events: list[dict] = []
        self.duplicate_ids: list[str] = []
        self.notes: list[str] = []  # rejections with another 4xx than the matching order's

    def port(self) -> int:
        return self.checker.backend.ports[0]

    def admin(self, method: str, path: str, body: object = None) -> harness.Reply:
        return self.client.call(method, path, self.project.secret_key, body)

    def user(self, name: str) -> str:
        return f"{self.tag}-{name}"

    def token(self, user: str, verified_claims: bool = True) -> str:
        claims = harness.claims_for(user, 600, jti=uuid.uuid4().hex)
        if verified_claims:
            claims.update(name=f"Name {user}", email=f"{user}@example.com",
                          avatar_url=f"https://example.com/{user}.png")
        return harness.identity_token(self.project.identity_secret, self.project.kid, claims)

    def expect(self, reply: harness.Reply, status: int, what: str) -> dict:
        if reply.status != status:
            raise RuntimeError(f"setup {what}: {reply.status} {reply.code} {reply.detail}")
        return reply.body

    # ── setup ──

    def set_up(self, needs: set[str], blocked: set[str]) -> None:
        pk = self.project.publishable_key
        w = self.world
        if "I" in needs:  # an installation the server has not seen yet
            self.installation = harness.new_installation()
        if "A" in needs:
            self.installation = harness.new_installation()
            body = self.expect(self.client.call("POST", "/v1/sessions/anonymous", pk, self.installation), 201, "A")
            self.ids["A"], self.ids["SA"], self.tokens["SA"] = body["profile"]["id"], body["session"]["id"], \
                body["session_token"]
            w.profiles["A"] = M.Profile("anonymous")
            w.sessions["SA"] = M.Session("A", "anonymous")
            w.installation, w.installation_known = "A", True
            if "SA2" in needs:
                body = self.expect(self.client.call("POST", "/v1/sessions/anonymous", pk, self.installation), 200,
                                   "SA2")
                self.ids["SA2"], self.tokens["SA2"] = body["session"]["id"], body["session_token"]
                w.sessions["SA2"] = M.Session("A", "anonymous")
            if "DA" in needs:
                self.push_token = "race-" + uuid.uuid4().hex
                body = self.expect(self.client.call("POST", "/v1/devices", self.tokens["SA"],
                                                    {"platform": "apns", "token": self.push_token}), 201, "DA")
                self.ids["DA"] = body["device"]["id"]
                w.devices["DA"] = M.Device("SA", "A")
                w.push_token_device = "DA"
        if "P" in needs:
            body = self.expect(self.client.call("POST", "/v1/sessions/identify", pk,
                                                {"identity_token": self.token(self.user("u"))}), 200, "P")
            self.ids["P"], self.ids["SP"], self.tokens["SP"] = body["profile"]["id"], body["session"]["id"], \
                body["session_token"]
            w.profiles["P"] = M.Profile("identified", self.user("u"), True, claims_of=self.user("u"))
            w.sessions["SP"] = M.Session("P", "verified")
            if "SP2" in needs:
                body = self.expect(self.client.call("POST", "/v1/sessions/identify", pk,
                                                    {"identity_token": self.token(self.user("u"))}), 200, "SP2")
                self.ids["SP2"], self.tokens["SP2"] = body["session"]["id"], body["session_token"]
                w.sessions["SP2"] = M.Session("P", "verified")
                if "DP" in needs:
                    body = self.expect(self.client.call("POST", "/v1/devices", self.tokens["SP2"],
                                                        {"platform": "fcm", "token": "race-" + uuid.uuid4().hex}),
                                       201, "DP")
                    self.ids["DP"] = body["device"]["id"]
                    w.devices["DP"] = M.Device("SP2", "P")
        if "V" in needs:
            body = self.expect(self.client.call("POST", "/v1/sessions/identify", pk, {"user_id": self.user("v")}),
                               200, "V")
            self.ids["V"], self.ids["SV"], self.tokens["SV"] = body["profile"]["id"], body["session"]["id"], \
                body["session_token"]
            w.profiles["V"] = M.Profile("identified", self.user("v"), False)
            w.sessions["SV"] = M.Session("V", "unverified")
        for symbol in sorted(blocked):
            self.expect(self.admin("POST", f"/v1/admin/profiles/{self.ids[symbol]}/block", {"reason": "race"}),
                        200, f"block {symbol}")
            M.block(w, M.Op("block", -1, target=symbol), [])
        if "W" in needs:
            body = self.expect(self.admin("POST", "/v1/admin/webhooks",
                                          {"url": f"https://hooks.example.com/{self.tag}", "description": "race"}),
                               201, "W")
            self.ids["W"] = body["webhook"]["id"]
            # Disabled: nothing is queued for it, so no delivery to a host that does not exist.
            self.expect(self.admin("PATCH", f"/v1/admin/webhooks/{self.ids['W']}", {"enabled": False}), 200,
                        "W disabled")
            w.webhook = M.Webhook()
            self.setup_events |= {e["id"] for e in self.webhook_events()}
        for symbol in ("A", "P", "V"):
            if symbol in self.ids:
                self.setup_events |= {e["id"] for e in self.events_of(self.ids[symbol])}

    def webhook_events(self) -> list[dict]:
        """The feed's webhook events of W (the feed from 0, webhook types only: a few pages at most)."""
        found, after = [], 0
        while True:
            body = self.admin("GET", f"/v1/admin/events?after={after}&limit=200"
                                     "&types=webhook.created,webhook.updated,webhook.deleted").body
            page = body.get("events", [])
            found += [e for e in page if (e.get("data") or {}).get("webhook_id") == self.ids["W"]]
            if len(page) < 200:
                return found
            after = page[-1]["sequence"]

    # ── the operations on the wire ──

    def request_of(self, sent: Sent) -> tuple[str, str, str | None, object]:
        op, ids = sent.op, self.ids
        pk, sk = self.project.publishable_key, self.project.secret_key
        caller = self.tokens.get(op.caller)
        kind = op.kind
        if kind in ("restore", "start"):
            return "POST", "/v1/sessions/anonymous", pk, self.installation
        if kind == "sign_in":
            return "POST", "/v1/sessions/identify", pk, {"identity_token": self.token(op.user)}
        if kind in ("promote", "merge", "unchanged", "upgrade"):
            return "POST", "/v1/sessions/identify", caller, {"identity_token": self.token(op.user)}
        if kind == "extend":
            return "POST", "/v1/sessions/authenticate", caller, {"session_duration_minutes": 600}
        if kind == "sign_out":
            return "POST", "/v1/sessions/revoke", caller, None
        if kind == "revoke_other":
            return "DELETE", f"/v1/sessions/{ids[op.target]}", caller, None
        if kind == "revoke_others":
            return "POST", "/v1/sessions/revoke-others", caller, None
        if kind == "device_add":
            return "POST", "/v1/devices", caller, {"platform": "apns", "token": self.push_token}
        if kind == "device_remove":
            return "DELETE", f"/v1/devices/{ids[op.target]}", caller, None
        if kind in ("block", "unblock"):
            return "POST", f"/v1/admin/profiles/{ids[op.target]}/{kind}", sk, {"reason": "race"} if kind == "block" \
                else None
        if kind == "erase":
            return "DELETE", f"/v1/admin/profiles/{ids[op.target]}", sk, None
        if kind == "revoke_all":
            return "POST", f"/v1/admin/profiles/{ids[op.target]}/sessions/revoke", sk, None
        if kind == "admin_end_session":
            return "DELETE", f"/v1/admin/sessions/{ids[op.target]}", sk, None
        if kind == "webhook_update":
            return "PATCH", f"/v1/admin/webhooks/{ids['W']}", sk, {"description": f"race {op.new}"}
        if kind == "webhook_delete":
            return "DELETE", f"/v1/admin/webhooks/{ids['W']}", sk, None
        if kind == "webhook_rotate":
            return "POST", f"/v1/admin/webhooks/{ids['W']}/rotate-secret", sk, None
        raise ValueError(kind)

    def fire(self, sents: list[Sent], barrier: threading.Barrier | None = None) -> list[threading.Thread]:
        """Sends the operations, each on a thread and a connection of its own, released by one barrier
        (with `barrier`, one shared with other races: the threads are returned, not joined)."""
        sents = [sent for sent in sents if sent.op.kind != "cleanup"]
        own = barrier is None
        if own:
            barrier = threading.Barrier(len(sents) + 1)
        prepared = []
        for sent in sents:
            method, path, bearer, body = self.request_of(sent)
            sent.request = f"{method} {path}"
            client = harness.Client(sent.port, timeout=60)
            client.call("GET", "/health")  # the connection is open before the barrier
            prepared.append((sent, client, method, path, bearer, body))
        start = [0.0]

        def one(item):
            sent, client, method, path, bearer, body = item
            barrier.wait()
            if not start[0]:
                start[0] = time.monotonic()
            time.sleep(sent.delay / 1000)
            sent.sent = (time.monotonic() - start[0]) * 1000
            reply = client.call(method, path, bearer, body)
            sent.answered = (time.monotonic() - start[0]) * 1000
            sent.status, sent.code, sent.body = reply.status, reply.code, reply.body
            client.reset()

        threads = [threading.Thread(target=one, args=(item,)) for item in prepared]
        for thread in threads:
            thread.start()
        if own:
            start[0] = time.monotonic()
            barrier.wait()
            for thread in threads:
                thread.join()
        return threads

    def learn(self, sents: list[Sent]) -> None:
        """The IDs the answers carry: new sessions and devices get the symbols of their operation, new
        profiles P:new1, P:new2… in the order of their (time-ordered) IDs, as the model numbers them."""
        created: set[str] = set()
        for sent in sents:
            if sent.op.kind not in CREATORS:
                continue
            body = sent.body if isinstance(sent.body, dict) else {}
            session, profile = body.get("session"), body.get("profile")
            if isinstance(session, dict) and session.get("id"):
                self.ids[f"S:{sent.op.new}"] = session["id"]
                if body.get("session_token"):
                    self.tokens[f"S:{sent.op.new}"] = body["session_token"]
            if isinstance(profile, dict) and profile.get("id") and profile["id"] not in self.ids.values():
                created.add(profile["id"])
            device = body.get("device")
            if isinstance(device, dict) and device.get("id"):
                self.ids[f"D:{sent.op.new}"] = device["id"]
        for number, real in enumerate(sorted(created), 1):
            self.ids[f"P:new{number}"] = real

    # ── what the server shows ──

    def events_of(self, profile_id: str) -> list[dict]:
        events, after = [], 0
        while True:
            reply = self.admin("GET", f"/v1/admin/events?after={after}&limit=200&profile_id={profile_id}")
            page = reply.body.get("events", []) if reply.status == 200 else []
            if reply.status != 200:
                raise RuntimeError(f"GET /v1/admin/events answered {reply.status} {reply.code}")
            events += page
            if len(page) < 200:
                return events
            after = page[-1]["sequence"]

    def observed_events(self) -> list[dict]:
        seen: dict[str, dict] = {}
        duplicates = []
        if "W" in self.ids:
            for event in self.webhook_events():
                if event["id"] in seen:
                    duplicates.append(event["id"])
                seen[event["id"]] = event
        for symbol in sorted(self.ids):
            if symbol in ("A", "P", "V") or symbol.startswith("P:"):
                for event in self.events_of(self.ids[symbol]):
                    seen[event["id"]] = event
        self.duplicate_ids = duplicates
        return sorted((e for e in seen.values() if e["id"] not in self.setup_events), key=lambda e: e["sequence"])

    def symbol(self, value):
        if isinstance(value, list):
            return [self.symbol(item) for item in value]
        if isinstance(value, str) and value[:4] in ("usr_", "ses_", "dev_", "whk_"):
            for symbol, real in self.ids.items():
                if real == value:
                    return symbol
            return "?" + value
        return value

    def normalized(self, event: dict) -> tuple:
        data = {key: self.symbol(value) for key, value in (event.get("data") or {}).items()}
        return M.ev(event["type"], **data)

    def observed_state(self) -> dict:
        profiles, aliases, alias_lists, live, devices, lookups = {}, {}, {}, {}, {}, {}
        for symbol in sorted(self.ids):
            if not (symbol in ("A", "P", "V") or symbol.startswith("P:")):
                continue
            real = self.ids[symbol]
            reply = self.admin("GET", f"/v1/admin/profiles/{real}")
            if reply.status == 404:
                continue
            profile = reply.body.get("profile", reply.body)
            if profile.get("id") != real:
                aliases[symbol] = self.symbol(profile.get("id"))
                continue
            profiles[symbol] = (profile.get("kind"), profile.get("external_id"), bool(profile.get("blocked")),
                                profile.get("name") is not None)
            listed = self.admin("GET", f"/v1/admin/profiles/{real}/sessions").body.get("sessions", [])
            live[symbol] = frozenset(self.symbol(s["id"]) for s in listed)
            listed = self.admin("GET", f"/v1/admin/profiles/{real}/devices").body.get("devices", [])
            devices[symbol] = frozenset(self.symbol(d["id"]) for d in listed)
            listed = self.admin("GET", f"/v1/admin/profiles/{real}/aliases").body.get("aliases", [])
            alias_lists[symbol] = tuple(self.symbol(a["profile_id"]) for a in listed)
        webhook = None
        if "W" in self.ids:
            reply = self.admin("GET", f"/v1/admin/webhooks/{self.ids['W']}")
            webhook = False if reply.status == 404 else reply.body.get("webhook", reply.body).get("description")
        return {"profiles": profiles, "aliases": aliases, "alias_lists": alias_lists, "live_sessions": live,
                "devices": devices, "webhook": webhook}

    def lookups(self, users: list[str]) -> dict[str, str | None]:
        found = {}
        for user in users:
            reply = self.admin("GET", f"/v1/admin/lookup?q={user}")
            found[user] = self.symbol(reply.body.get("profile", {}).get("id")) if reply.status == 200 else None
        return found

    # ── the race ──

    def prepare(self) -> None:
        """Sets up the race's world and decides its operations' nodes and delays (seeded)."""
        names = self.names
        ops = []
        needs: set[str] = set()
        blocked: set[str] = set()
        for index, name in enumerate(names):
            kind, target, caller, need = TEMPLATES[name]
            user = {"promote": self.user("x"), "merge": self.user("u"), "unchanged": self.user("u"),
                    "sign_in": self.user("u"), "upgrade": self.user("v")}.get(kind, "")
            ops.append(M.Op(kind, index, target=target, caller=caller, user=user))
            needs |= need
            if kind == "unblock" and self.rng.random() < 0.6:
                blocked.add(target)
        if "DA" in needs:
            needs.add("A")
        self.ops = ops
        self.set_up(needs, blocked)
        if "expired" in needs:
            # Time passes for SA: its expiry is moved into the past in the database (sessions last at
            # least 5 minutes), so the cleanup service has it to end.
            self.checker.expire(self.ids["SA"])
            self.world.sessions["SA"].expired = True
        ports = self.checker.backend.ports
        # A cleanup race spreads its other operations over 1.2 times the time a cleanup node took to
        # answer last (its pass runs as it starts), a seeded share of it each.
        window = 1.2 * self.checker.cleanup_ready_ms if any(op.kind == "cleanup" for op in ops) else 4
        self.sents = [Sent(name, op, self.rng.choice(ports), self.rng.uniform(0, window))
                      for name, op in zip(names, ops)]

    def run(self) -> list[str]:
        self.prepare()
        self.fire(self.sents)
        return self.check()

    def check(self) -> list[str]:
        sents, ops = self.sents, self.ops
        self.learn(sents)
        problems: list[str] = []
        for sent in sents:
            if sent.op.kind == "cleanup":
                continue
            if sent.status == 0 or sent.status >= 500:
                problems.append(f"ANSWER {sent.status} to op {sent.op.index} ({sent.name}): {sent.code or sent.body}")
        events = self.observed_events()
        self.events = events
        if any(op.kind == "cleanup" for op in ops):
            expired = any(e["type"] == "session.ended" and (e.get("data") or {}).get("reason") == "expired"
                          for e in events)
            with self.checker.lock:
                self.checker.cleanup_outcomes["the cleanup pass ended SA" if expired
                                              else "another operation ended SA first"] += 1
        observed = Counter(self.normalized(e) for e in events)
        if self.duplicate_ids or len({e["id"] for e in events}) != len(events):
            problems.append(f"DUPLICATE EVENT ID: {self.duplicate_ids}")
        state = self.observed_state()
        users = sorted({op.user for op in ops if op.user} | ({self.user("u")} if "P" in self.ids else set())
                       | ({self.user("v")} if "V" in self.ids else set()))
        state["lookup"] = self.lookups(users)
        statuses = [sent.status for sent in sents]
        outcomes = M.serial_outcomes(self.world, ops)
        best = None
        strict = self.checker.arguments.strict_codes
        for outcome in outcomes:
            outcome.state["lookup"] = {user: lookup_of(outcome.state, user) for user in users}
            found = M.differences(outcome, statuses, observed, state, strict)
            if not found:
                best = None
                self.notes = [f"{sents[i].name} answered {status} where the order {list(outcome.order)} answers "
                              f"{'/'.join(map(str, expected))}" for i, status, expected in M.code_notes(outcome, statuses)]
                break
            if best is None or len(found) < len(best[1]):
                best = (outcome, found)
        else:
            problems.append(self.classify(best[1], statuses, ops)
                            + f" (nearest serial order {list(best[0].order)}):\n      "
                            + "\n      ".join(best[1]))
        problems += self.personal_data(events, state, users)
        problems += self.live_sessions(state)
        return problems

    def classify(self, found: list[str], statuses: list[int], ops: list[M.Op]) -> str:
        """A headline for a mismatch: the kind of promise it breaks."""
        heads = []
        missing = [text for text in found if text.startswith("missing event")]
        for text in found:
            if text.startswith("unexpected event"):
                kind = text.split()[2]
                producers = [i for i, op in enumerate(ops) if kind in PRODUCES.get(op.kind, ())]
                if kind == "profile.erased" and "external_id: None" in text and any(
                        m.split()[2] == kind and "external_id: None" not in m for m in missing):
                    heads.append("profile.erased WITHOUT THE EXTERNAL ID")
                elif producers and all(not (200 <= statuses[i] < 300) for i in producers):
                    heads.append(f"4xx WITH EVENTS ({kind})")
                elif kind == "profile.erased" and sum(o.kind == "erase" for o in ops) > 1:
                    heads.append("DUPLICATE EVENT (profile.erased)")
                else:
                    heads.append(f"UNEXPECTED EVENT ({kind})")
            elif text.startswith("missing event"):
                kind = text.split()[2]
                if not (kind == "profile.erased" and "profile.erased WITHOUT THE EXTERNAL ID" in heads):
                    heads.append(f"MISSING EVENT ({kind})")
            elif text.startswith("state"):
                heads.append(f"FINAL STATE ({text.split()[1].rstrip(':')})")
            elif text.startswith("op "):
                index = int(text.split()[1])
                heads.append(f"ANSWER ({self.names[index]} {statuses[index]} where "
                             f"{text.split('gives ')[1]})")
        heads = [h for h in heads if not (h == "MISSING EVENT (profile.erased)"
                                          and "profile.erased WITHOUT THE EXTERNAL ID" in heads)]
        return "NO SERIAL ORDER: " + ", ".join(sorted(set(heads)))

    def personal_data(self, events: list[dict], state: dict, users: list[str]) -> list[str]:
        """A user held by no profile any more leaves no personal data in any event but profile.erased."""
        held = {p[1] for p in state["profiles"].values()} | {u for u, s in state["lookup"].items() if s}
        problems = []
        for user in users:
            if user in held:
                continue
            for event in events:
                if event["type"] != "profile.erased" and user in json.dumps(event.get("data")):
                    problems.append(f"PERSONAL DATA SURVIVES: {user} in {event['type']} {event['id']}")
        return problems

    def live_sessions(self, state: dict) -> list[str]:
        """No session that introspection calls active belongs to a blocked or erased profile."""
        problems = []
        for symbol, token in sorted(self.tokens.items()):
            reply = self.admin("POST", "/v1/admin/sessions/introspect", {"session_token": token})
            if reply.status != 200 or not reply.body.get("active"):
                continue
            owner = self.symbol(reply.body.get("profile", {}).get("id"))
            profile = state["profiles"].get(owner)
            if profile is None or profile[2]:
                problems.append(f"LIVE SESSION OF A {'BLOCKED' if profile else 'GONE'} PROFILE: {symbol} of {owner}")
        return problems

    def report(self, problems: list[str]) -> str:
        lines = [f"race {self.number} (seed {self.checker.seed}, rerun: --seed {self.checker.seed} --only "
                 f"{self.number}): {' ∥ '.join(self.names)}"]
        lines.append("  world: " + ", ".join(f"{k}={v}" for k, v in sorted(self.ids.items())))
        for sent in self.sents:
            lines.append(f"  op {sent.op.index} {sent.name:14s} node :{sent.port} delay {sent.delay:.2f} ms  "
                         f"{sent.request}")
        order = sorted(self.sents, key=lambda s: s.sent)
        lines.append("  sent:     " + ", ".join(f"op {s.op.index} @{s.sent:.2f}ms" for s in order))
        order = sorted(self.sents, key=lambda s: s.answered)
        lines.append("  answered: " + ", ".join(f"op {s.op.index} {s.status} {s.code or ''} @{s.answered:.2f}ms"
                                                for s in order))
        lines.append("  events:")
        for event in self.events:
            lines.append(f"    {event['sequence']} {M.render(self.normalized(event))}")
        lines += ["  " + p for p in problems]
        return "\n".join(lines)


# The operations whose answers carry new IDs (sessions, profiles, devices).
CREATORS = {"restore", "start", "sign_in", "promote", "merge", "unchanged", "upgrade", "device_add"}
PRODUCES = {
    "block": {"profile.blocked"}, "unblock": {"profile.unblocked"}, "erase": {"profile.erased"},
    "promote": {"profile.promoted"}, "merge": {"profile.merged", "profile.promoted"}, "upgrade": {"profile.merged"},
    "device_add": {"device.registered"}, "webhook_delete": {"webhook.deleted"},
    "webhook_update": {"webhook.updated"}, "webhook_rotate": {"webhook.updated"},
}


def lookup_of(state: dict, user: str) -> str | None:
    """Lookup by external ID: the verified profile first, then an unverified one."""
    candidates = [(not verified_guess(p), s) for s, p in state["profiles"].items() if p[1] == user]
    return min(candidates)[1] if candidates else None


def verified_guess(profile: tuple) -> bool:
    return profile[3]  # in these races a profile with claims is the verified one


# ─── The run ─────────────────────────────────────────────────────────────────────────────────────


class Checker:
    def __init__(self, arguments, backend: Backend):
        self.seed, self.backend, self.arguments = arguments.seed, backend, arguments
        self.lock = threading.Lock()
        self.violations: list[str] = []
        self.done = 0
        self.counts: Counter = Counter()
        self.notes: Counter = Counter()
        self.cleanup_outcomes: Counter = Counter()
        self.cleanup_ready_ms = 250.0  # how long the last cleanup node took to answer /health
        self.errors = 0

    def one(self, number: int, names: tuple[str, ...]) -> None:
        race = Race(self, number, names)
        try:
            problems = race.run()
        except Exception as error:  # a harness failure (setup refused, a broken answer): reported, counted
            self.harness_error(number, names, error)
            return
        finally:
            race.client.reset()
        self.record(race, problems)

    def harness_error(self, number: int, names: tuple[str, ...], error: Exception) -> None:
        with self.lock:
            self.errors += 1
            self.violations.append(f"race {number} ({' ∥ '.join(names)}): HARNESS ERROR {error!r}\n"
                                   + traceback.format_exc(limit=3))
            print(self.violations[-1], flush=True)

    def record(self, race: "Race", problems: list[str]) -> None:
        with self.lock:
            self.done += 1
            self.counts[" ∥ ".join(sorted(race.names))] += 1
            for note in race.notes:
                self.notes[note.split(" where")[0]] += 1
            if problems:
                text = race.report(problems)
                self.violations.append(text)
                print("VIOLATION " + text, flush=True)
            if self.done % 500 == 0:
                print(f"races: {self.done} done, {len(self.violations)} violations", flush=True)

    def expire(self, session_id: str) -> None:
        """Moves a session's expiry into the past, behind the server's back (as time passing would)."""
        assert session_id.startswith("ses_") and session_id.replace("_", "").replace("-", "").isalnum()
        self.backend.database.execute(
            [f"UPDATE sessions SET expires_at = {int(time.time()) - 2} WHERE id = '{session_id}'"])

    def cleanup_batch(self, batch: list[tuple[int, tuple[str, ...]]]) -> None:
        """Races with cleanup expiry, run together: their worlds are set up (SA expired), then one more
        `tessera serve` per cleanup operation starts on the same database (its cleanup service runs a
        pass as it starts, beside the other nodes), while the races' other operations are released
        with delays spread over that start-up; the nodes stop once they answered and had a second more."""
        races = []
        for number, names in batch:
            race = Race(self, number, names)
            try:
                race.prepare()
                races.append(race)
            except Exception as error:
                self.harness_error(number, names, error)
        if not races:
            return
        senders = sum(1 for race in races for sent in race.sents if sent.op.kind != "cleanup")
        barrier = threading.Barrier(senders + 1)
        threads = []
        for race in races:
            threads += race.fire(race.sents, barrier)
        nodes = max(race.names.count("cleanup") for race in races)
        processes, ports = [], []
        for index in range(nodes):
            port = harness.free_port()
            log = open(os.path.join(self.backend.work, "cleanup-nodes.log"), "a")
            processes.append(harness.serve(self.arguments.tessera, self.backend.database_url, port, "--log-level",
                                           "warning", log=log, environment=self.backend.environment))
            log.close()
            ports.append(port)
        barrier.wait()
        try:
            for port, process in zip(ports, processes):
                self.cleanup_ready_ms = 1000 * harness.wait_ready(port, process, "races: cleanup node", interval=0.01)
            for thread in threads:
                thread.join()
            time.sleep(1.0)
        finally:
            harness.stop(*processes)
        for race in races:
            try:
                problems = race.check()
            except Exception as error:
                self.harness_error(race.number, race.names, error)
                continue
            finally:
                race.client.reset()
            self.record(race, problems)


def deadlocks(backend: Backend) -> list[str]:
    if not backend.cluster_directory:
        return []
    log = Path(backend.cluster_directory) / "server.log"
    try:
        text = log.read_text(errors="replace")
    except OSError as error:
        return [f"cannot read {log}: {error}"]
    return [line for line in text.splitlines() if "deadlock detected" in line]


def main() -> int:
    parser = harness.backend_arguments(__doc__, "(its server.log is read for deadlocks)")
    parser.add_argument("--races", type=int, default=300)
    parser.add_argument("--parallel", type=int, default=3, help="races at a time")
    parser.add_argument("--triples", type=float, default=0.2, help="share of races that are triples")
    parser.add_argument("--only", type=int, action="append", help="run only this race number (repeatable)")
    parser.add_argument("--strict-codes", action="store_true",
                        help="a rejection must have the very status of a serial order's (by default any 4xx "
                             "matches a 4xx: both wrote nothing; the summary counts the differences)")
    arguments = harness.parse_seeded(parser)
    work = tempfile.mkdtemp(prefix=f"tessera-races-{arguments.database}-")
    print(f"races: {arguments.database}, seed {arguments.seed}, {arguments.races} races, {arguments.parallel} at a "
          f"time; work dir {work}", flush=True)
    wall = time.monotonic()
    backend = None
    checker = None
    locked: list[str] = []
    try:
        backend = start_backend(arguments, work)
        checker = Checker(arguments, backend)
        plan = schedule(arguments.seed, arguments.triples, arguments.races)
        numbers = arguments.only or list(range(arguments.races))
        plain = [n for n in numbers if "cleanup" not in plan[n % len(plan)]]
        expiring = [n for n in numbers if "cleanup" in plan[n % len(plan)]]
        with ThreadPoolExecutor(arguments.parallel) as pool:
            for future in [pool.submit(checker.one, n, plan[n % len(plan)]) for n in plain]:
                future.result()
        for start in range(0, len(expiring), CLEANUP_BATCH):
            checker.cleanup_batch([(n, plan[n % len(plan)]) for n in expiring[start:start + CLEANUP_BATCH]])
        locked = deadlocks(backend)
        if backend.cluster_directory:
            shutil.copy(Path(backend.cluster_directory) / "server.log", Path(work) / "postgres-server.log")
    finally:
        failed = checker is None or bool(checker.violations) or bool(locked)
        if backend is not None:
            harness.clean_up(work, arguments.keep or failed, "races", backend.processes, backend.cluster)
        elif not arguments.keep:
            shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - wall
    if checker is None or backend is None:
        return 1
    print(f"\n━━ race summary ({arguments.database}, seed {arguments.seed})")
    print(f"races run:      {checker.done} ({len(checker.counts)} distinct combinations; "
          f"{len(backend.ports)} node{'s' if len(backend.ports) > 1 else ''})")
    print(f"harness errors: {checker.errors}")
    if checker.cleanup_outcomes:
        print("cleanup races:  " + ", ".join(f"{n} {what}" for what, n in sorted(checker.cleanup_outcomes.items())))
    if backend.cluster_directory:
        print(f"deadlocks:      {len(locked)} \"deadlock detected\" in PostgreSQL's server.log")
        for line in locked[:5]:
            print("  " + line)
    print(f"rejection codes other than a serial order's (not violations without --strict-codes): "
          f"{sum(checker.notes.values())}")
    for note, count in checker.notes.most_common(12):
        print(f"  {count:5d}  {note}")
    print(f"violations:     {len(checker.violations)}")
    kinds = Counter()
    for text in checker.violations:
        for line in text.splitlines():
            for marker in ("NO SERIAL ORDER", "DUPLICATE EVENT ID", "PERSONAL DATA SURVIVES", "LIVE SESSION OF",
                           "ANSWER ", "HARNESS ERROR"):
                if line.strip().startswith(marker) or f": {marker}" in line:
                    kinds[line.strip().split(" (nearest")[0][:120]] += 1
                    break
    for kind, count in kinds.most_common(40):
        print(f"  {count:5d}  {kind}")
    print(f"wall time:      {seconds:.1f} s ({checker.done / max(seconds, 0.001):.1f} races/s)")
    if checker.violations or locked:
        print(f"races: FAILED (seed {arguments.seed}; work dir kept: {work})")
        return 1
    print("races: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
