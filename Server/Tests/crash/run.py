#!/usr/bin/env python3
"""Crash durability of `tessera serve`: SIGKILL under mixed load, restart, check every acknowledged write.

    Server/Tests/crash/run.py --tessera PATH --database sqlite|postgres [--kills 20]
        [--seconds-between 0.5-2.5] [--seed S] [--workers 6] [--device-races 100] [--postgres-url URL]
        [--self-test] [--keep] [--webhooks] [--webhook-wait 120]

Usually run through `scripts/crash-test`. One run, on one backend:

1. Creates three projects (`tessera projects create --json`; the workers use the first, the others
   only hold sealed values) on a fresh database (SQLite in a temporary directory, or a fresh schema
   of a throwaway PostgreSQL cluster started with `scripts/postgres` in its own TESSERA_PG_DIR),
   under a master key made with `tessera keys generate`, starts `tessera serve` and drives it from
   several client threads with mixed load: anonymous starts and restores, signed identifies
   (promoting or merging the anonymous profile), extensions, heartbeats, revokes (own session,
   `DELETE /v1/sessions/{id}`, admin revoke-all), device registrations, erasures (admin `DELETE`
   profile), blocks and unblocks of profiles, rotations of the publishable key (grace 0 or 3 s) and
   of the secret key (grace 30 or 45 s; the workers switch to a new key once its rotation is
   acknowledged), rotations of the session-JWT signing key, and probes of dead sessions.
   Before the kills, `--device-races` times, a device registration races the end of its session
   (own revoke, `DELETE /v1/sessions/{id}`, admin revoke-all, erasure): 201 or the session's 401,
   never a 5xx, and no device may outlive its session (checked through the API and in the database).
2. Kills the server with SIGKILL at seeded random moments (`--kills` times), restarts it on the same
   database, and lets the clients reconnect. A request whose 2xx reply was read is *acknowledged*;
   one that lost its connection (or got a 5xx) is *unknown*; a 4xx is *rejected* (no effect). An
   API key rotation whose reply was lost is settled after the restart by one more rotation (made
   with the secret key the harness holds). At seeded outages the master key is rotated as
   docs/OPERATIONS.md says (class MasterKeys): a new key N is made; the server restarts with N
   as `--previous-master-key-file` (sometimes) and then with N as `--master-key-file` and the old
   key K as previous; `tessera keys rewrap --master-key-file K --new-master-key-file N` then runs
   against the database while the server serves, and is SIGKILLed at some seeded moments (after
   1–3 committed values, or at the next outage); at the following outage an unfinished rewrap runs
   again, a finished one lets the server restart with N alone. Before every restart the database
   is read directly: every sealed value must be under a key the server is about to get.
3. After every restart (with the clients paused) it checks every fact acknowledged since the
   previous check, plus a sample of older ones; at the end it checks every fact:
   - a session whose end was acknowledged (revoke, `DELETE /v1/sessions/{id}`, admin revoke-all
     sent after the session was acknowledged, identify with it as caller, merge of its anonymous
     profile, erasure of its profile) answers 401 `session_revoked`/`session_not_found`, by token and
     by JWT — never 200 (the worst failure);
   - a session that nothing could have ended still answers 200 for its profile, by token and by JWT,
     with `expires_at` at least the largest acknowledged value (creation or extension);
   - an erased profile answers 404 (itself, its sessions, its devices and its known aliases);
   - a profile that nothing could have erased exists with the kind the acknowledgements imply (a
     merged anonymous profile resolves, as an alias, to the profile it merged into), and
     `?external_id=` finds exactly one verified profile per user;
   - a registered device is listed by the admin API while its session must be alive, and is not
     listed once its session must be dead;
   - the identity token of an acknowledged identify is refused as replayed (its `jti` was stored
     with the session it created);
   - an installation acknowledged once is never answered 201 (created) again;
   - a profile whose block was acknowledged, with no unblock that could have run after it, says
     `blocked: true`, has no live session, and answers `403 profile_blocked` to identify of its user
     and to anonymous restore of its installation (a new session of it acknowledged to a request sent
     after the block's acknowledgement is a violation during load too); after an acknowledged unblock
     that no block can have followed, it says `blocked: false`;
   - an API key whose rotation was acknowledged is refused (401 `invalid_api_key`) once its grace
     has ended (one rotated out with grace 0 is also tried at once, under load, right after the
     acknowledgement), and the current key of each kind works;
   - a session JWT signed after a signing-key rotation was acknowledged (its `iat` later than the
     reply) never carries a `kid` seen before that rotation was sent (checked on every JWT a reply
     carries, during load too);
   - every project's sealed values open: identify with its identity secret works, the session JWT
     it mints verifies, and the project's JWKS serves its `kid`; and the server starts (a master
     key mismatch, or a value that does not open, stops it: a violation that ends the run).
   At the end the server is killed once more and the database is read directly: erased profiles have
   no row left (profile, session, device, alias, installation), no device is bound to an ended
   session, and on SQLite `PRAGMA integrity_check` is `ok` and `PRAGMA foreign_key_check` is empty.
   After the final kill every sealed value is again read directly (under the keys the server holds).
   The events feed (feed.py): a reader polls `GET /v1/admin/events?after=` with the last sequence it
   saw during the whole run, across every kill: a page never goes backwards or repeats an event. At
   the end the feed is read from 0 (pages of 200, following `next_after`) and, with the database read
   directly after the final kill:
   - sequences run 1, 2, 3… with no gap and no repeat, and no event ID appears twice;
   - everything the reader saw is still there at the same sequence, and nothing appeared below the
     last sequence it had been answered (a late commit it skipped);
   - every acknowledged change has exactly one event, found by the IDs of the replies: each session
     (session.created), each profile (profile.created), each session an acknowledged change ended
     (session.ended, whatever ended it first) and none for a session nothing could have ended, each
     device (device.registered) and the removal of those of ended sessions (device.removed), each
     promotion, merge (by its anonymous profile) and erasure; blocks and unblocks of a profile
     alternate and the last one is its state in the database; API key rotations per kind and
     signing-key rotations (by kid) are counted between acknowledged and acknowledged + unknown;
   - an event of a change that was not acknowledged (in flight at a kill) describes what the database
     holds: its session, profile or device exists (or a later event of the feed removed it), an ended
     session is not live, an erased or merged profile and a removed device are gone.
   With `--webhooks` (a server with webhook delivery), a receiver (receiver.py, a local HTTP server
   thread) records every POST with its webhook-id; an endpoint subscribed to the profile, session and
   device types points to it from the start (the server runs with --allow-insecure-webhooks), and it
   answers 500 to the first attempt of a seeded 3 % of events. After the run, the server up, it waits
   (up to --webhook-wait seconds: a delivery leased by a killed server is retried once its 60 s lease
   ends) until every event of a subscribed type after the endpoint's webhook.created was delivered at
   least once (2xx), and checks every delivery's signature (Standard Webhooks v1), that its body is the
   feed's event (id = webhook-id, sequence, type) and that no other type was delivered.
4. Prints a summary (kills survived, acknowledged operations per kind, rotations, master key steps,
   checks, violations, wall time) and exits 1 on any violation. A failing run (a violation, or an
   error that ends it early) keeps its work directory and prints where, with what a failure needs:
   tessera.log (the server's output over every restart), model.json (the harness's record: every
   fact, operation, kill and violation; tokens and keys only as SHA-256 prefixes), feed.json (the
   events feed read at the end, or at the failure while the server still answers) and, on
   PostgreSQL, postgres-server.log (the throwaway cluster's log, copied before it is removed).
   A passing run removes it (unless --keep). `--self-test` also undoes a block,
   revives a rotated-out API key (a row in `retired_api_keys`), besides the lost writes above, and
   in the events table deletes one acknowledged session's session.created, duplicates another's and
   adds one for a session never acknowledged and absent from the database.

The kill moments and each worker's choices are seeded (`--seed`); the interleaving of the threads
is not, so a seed reproduces the shape of a run, not every byte of it. Sessions are created with
60–240 minutes of lifetime, so a run must stay under an hour.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import itertools
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
import feed  # noqa: E402
import receiver as webhooks  # noqa: E402
from tessera_harness import Reply, b64url as b64, clean_environment, epoch  # noqa: E402

INF = float("inf")
DEAD_CODES = ("session_revoked", "session_not_found")


# ─── Small helpers ───────────────────────────────────────────────────────────────────────────────


def identity_token(secret: str, kid: str, sub: str, jti: str, ttl: int = 1800) -> tuple[str, int]:
    claims = harness.claims_for(sub, ttl, jti=jti, name=f"User {sub[-6:]}")
    return harness.identity_token(secret, kid, claims), claims["exp"]


# ─── The model: every acknowledged fact, and every operation that might have changed one ─────────


@dataclass
class Event:
    kind: str  # revoke, identify_caller, revoke_all, erase, merge, promote, identify_unknown, block, unblock
    send: int
    end: float  # seq of the reply; INF when the request may still run (a timeout without a kill)
    acked: bool
    detail: str = ""
    sid: str = ""  # promote: the session the identify created (the only one of the profile it leaves)


@dataclass
class SessionFact:
    sid: str
    token: str | None
    jwt: str | None
    profile_id: str
    kind: str
    send: int
    ack: int
    min_expires: int
    origin: str
    events: list = field(default_factory=list)
    devices: list = field(default_factory=list)
    touched: int = 0


@dataclass
class KeyFact:
    kind: str  # publishable or secret
    key: str
    ack_wall: float
    dead_after: float | None = None  # wall time after which it must be refused (its grace has ended)
    live: bool = True  # the current key and no rotation of its kind sent since: it must work


@dataclass
class DeviceFact:
    did: str
    sid: str
    profile_id: str
    push_token: str
    ack: int


@dataclass
class ProfileFact:
    pid: str
    created_kind: str
    sub: str | None = None
    identified: bool = False  # an acknowledgement showed it identified
    events: list = field(default_factory=list)
    sessions: list = field(default_factory=list)
    merged_into: str | None = None
    touched: int = 0
    installation: tuple[str, str] | None = None  # (id, secret) of an installation acknowledged with it


class Model:
    def __init__(self):
        self.lock = threading.Lock()
        self._seq = itertools.count(1)
        self.sessions: dict[str, SessionFact] = {}
        # Events about a session the model does not know yet: another worker listed it (GET
        # /v1/sessions) and ended it before the reply that created it was read (CI seed 120523439).
        self.early_session_events: dict[str, list[Event]] = {}
        self.profiles: dict[str, ProfileFact] = {}
        # Profiles merged into another (their merged_into is set): aliases, for block_state.
        self.merged_profiles: set[str] = set()
        self.sub_profile: dict[str, str] = {}  # the last profile an acknowledged identify of the sub gave
        self.installations: set[str] = set()  # acknowledged at least once
        self.identify_tokens: list[tuple[str, int, int]] = []  # (token, exp, ack seq)
        self.kill_seqs: list[int] = []
        self.unknown_identifies: list[tuple[SessionFact, Event]] = []  # (caller, its identify_unknown)
        self.unknown_erases: list[tuple[str, Event]] = []
        self.resolved = {"identify": 0, "erase": 0}  # lost replies whose all-or-nothing outcome was checked
        self.ops: dict[str, dict[str, int]] = {}
        self.violations: list[str] = []
        self.checks = 0

    def seq(self) -> int:
        with self.lock:
            return next(self._seq)

    def end_of(self, send: int, reply: Reply) -> float:
        """The seq after which the request can no longer take effect: its reply, or the kill that cut it.

        A request that lost its connection, timed out or got a 5xx may still run inside the server
        (PostgreSQL's operation timeout leaves the transaction to finish alone): INF until the
        next kill, which `effective_end` applies.
        """
        now = self.seq()
        if reply.ok or 400 <= reply.status < 500 or reply.failure == "refused":
            return now
        with self.lock:
            if any(send <= k <= now for k in self.kill_seqs):
                return now
        return INF

    def effective_end(self, event: "Event") -> float:
        if event.end != INF:
            return event.end
        return next((k for k in self.kill_seqs if k >= event.send), INF)

    def count(self, kind: str, outcome: str) -> None:
        with self.lock:
            self.ops.setdefault(kind, {"ack": 0, "unknown": 0, "rejected": 0, "refused": 0, "5xx": 0})[outcome] += 1

    def violation(self, text: str) -> None:
        with self.lock:
            self.violations.append(text)
        print("VIOLATION " + text, flush=True)

    def profile(self, pid: str, kind: str = "anonymous") -> ProfileFact:
        fact = self.profiles.get(pid)
        if fact is None:
            fact = self.profiles[pid] = ProfileFact(pid, kind)
        return fact

    def add_session(self, envelope: dict, send: int, ack: int, origin: str) -> SessionFact:
        """Records a session from an acknowledged envelope (under no lock)."""
        session, profile = envelope["session"], envelope["profile"]
        with self.lock:
            fact = SessionFact(
                sid=session["id"], token=envelope.get("session_token"), jwt=envelope.get("session_jwt"),
                profile_id=profile["id"], kind=envelope.get("capabilities", {}).get("kind", "?"), send=send,
                ack=ack, min_expires=epoch(session["expires_at"]) or 0, origin=origin, touched=ack)
            self.sessions[fact.sid] = fact
            for event in self.early_session_events.pop(fact.sid, []):
                fact.events.append(event)
                fact.touched = max(fact.touched, event.send, int(min(event.end, 1 << 60)))
            record = self.profile(profile["id"], profile["kind"])
            record.sessions.append(fact.sid)
            record.touched = ack
            if profile["kind"] == "identified":
                record.identified = True
                record.sub = profile.get("external_id")
            return fact

    def session_event(self, sid: str, event: Event) -> None:
        with self.lock:
            fact = self.sessions.get(sid)
            if fact is not None:
                fact.events.append(event)
                fact.touched = max(event.send, int(min(event.end, 1 << 60)))
            else:
                # Kept until the session is recorded: dropping it made an acknowledged DELETE of a
                # session whose creating reply was still being read look like a lost session.
                self.early_session_events.setdefault(sid, []).append(event)

    def profile_event(self, pid: str, event: Event) -> None:
        with self.lock:
            record = self.profile(pid)
            record.events.append(event)
            self.touch(record, event)

    def touch(self, record: "ProfileFact", event: Event) -> None:
        """Call under the lock."""
        stamp = int(min(event.end, 1 << 60)) if event.end != INF else next(self._seq)
        record.touched = stamp
        for sid in record.sessions:
            self.sessions[sid].touched = stamp

    def begin_profile_event(self, pid: str, kind: str) -> Event:
        """An event recorded before its request is sent: until `settle_profile_event`, it may run at any
        time (end INF, not acknowledged). A check made while a block or unblock is in flight, or between
        its reply and the worker's recording it, must count it (an unblock the server applied and
        answered, not yet recorded, made an identify sent after its reply look like a session of a
        blocked profile: a false 'BLOCK UNDONE')."""
        with self.lock:
            event = Event(kind, next(self._seq), INF, False)
            self.profile(pid).events.append(event)
            return event

    def settle_profile_event(self, pid: str, event: Event, reply: Reply, send: int, end: float) -> None:
        """The reply of a `begin_profile_event` request: a rejected one did nothing and is forgotten."""
        with self.lock:
            record = self.profile(pid)
            if reply.outcome == "rejected":
                record.events.remove(event)
                return
            event.send, event.end, event.acked = send, end, reply.ok
            self.touch(record, event)

    # Status of a session: ("dead", why) / ("alive", "") / ("unknown", why). Call under the lock.
    def session_status(self, fact: SessionFact, resolved: tuple | None = None) -> tuple[str, str]:
        """`resolved`: (event, applied) for an unknown event whose outcome a check observed."""
        unknown = ""
        for event in fact.events:
            if event.acked:
                return "dead", f"{event.kind} acknowledged (seq {event.send}..{event.end:.0f})"
            if self.effective_end(event) > fact.send:
                unknown = unknown or f"{event.kind} unknown"
        record = self.profiles.get(fact.profile_id)
        for event in record.events if record else []:
            if resolved and event is resolved[0]:
                if resolved[1]:
                    return "dead", f"profile {event.kind} applied (observed)"
                continue
            if event.kind in ("erase", "merge"):
                if event.acked:
                    return "dead", f"profile {event.kind} acknowledged (seq {event.send}..{event.end:.0f})"
                if self.effective_end(event) > fact.send:
                    unknown = unknown or f"profile {event.kind} unknown"
            elif event.kind in ("revoke_all", "block"):
                # A block ends every session of the profile, as admin revoke-all does.
                name = "admin revoke-all" if event.kind == "revoke_all" else "block"
                if event.acked and event.send > fact.ack:
                    return "dead", f"{name} acknowledged (seq {event.send}..{event.end:.0f})"
                if self.effective_end(event) > fact.send:
                    unknown = unknown or f"{name} {'concurrent' if event.acked else 'unknown'}"
            elif event.kind == "promote" and event.sid != fact.sid:
                # A promote ends every other session the anonymous profile had (orphans of dropped
                # answers, another tab): only the session it created holds the identified profile.
                if event.acked and event.send > fact.ack:
                    return "dead", f"promote acknowledged (seq {event.send}..{event.end:.0f})"
                if self.effective_end(event) > fact.send:
                    unknown = unknown or "promote concurrent"
            elif event.kind == "identify_unknown" and self.effective_end(event) > fact.send:
                unknown = unknown or "identify from its profile unknown"
        return ("unknown", unknown) if unknown else ("alive", "")

    def block_state(self, record: ProfileFact, before: float = INF) -> str:
        """blocked / unblocked / unknown, counting only acknowledgements read before seq `before`.

        Blocked: a block was acknowledged and no unblock could have run after it was sent.
        Unblocked: never blocked, or an unblock was acknowledged and no block could have run after it
        was sent. Call under the lock."""
        blocks = [e for e in record.events if e.kind == "block"]
        # A block or unblock sent to a profile that was merged into this one, perhaps while the request
        # was in flight, acts on the profile the alias resolves to: this one. A merge whose answer was
        # lost may have made any profile with an unknown identify an alias of this one.
        candidates = self.merged_profiles | {caller.profile_id for caller, _ in self.unknown_identifies}
        aliases = [p for p in map(self.profiles.get, candidates) if p is not None and p is not record and (
            p.merged_into == record.pid or any(e.kind == "identify_unknown" for e in p.events))]
        # Those only ever weaken a claim: "blocked" and "unblocked" each rest on this profile's own events.
        unblocks = [e for e in record.events if e.kind == "unblock"]
        alias_unblocks = [e for r in aliases for e in r.events if e.kind == "unblock"]
        alias_blocks = [e for r in aliases for e in r.events if e.kind == "block"]
        for block in blocks:
            if block.acked and block.end < before \
                    and not any(self.effective_end(u) > block.send for u in unblocks + alias_unblocks):
                return "blocked"
        if not blocks and not alias_blocks:
            return "unblocked"
        for unblock in unblocks:
            if unblock.acked and unblock.end < before \
                    and not any(self.effective_end(b) > unblock.send for b in blocks + alias_blocks):
                return "unblocked"
        return "unknown"

    def profile_state(self, record: ProfileFact) -> tuple[str, str]:
        """erased / exists / alias (of merged_into) / unknown. Call under the lock."""
        kinds = {(e.kind, e.acked) for e in record.events}
        if ("erase", True) in kinds:
            return "erased", ""
        if ("erase", False) in kinds or ("identify_unknown", False) in kinds or ("merge", False) in kinds \
                or ("promote", False) in kinds:
            return "unknown", ""
        if ("merge", True) in kinds:
            return "alias", record.merged_into or ""
        return "exists", ""


# ─── The server ──────────────────────────────────────────────────────────────────────────────────


class Server:
    def __init__(self, tessera: str, database: str, port: int, log_path: str):
        self.tessera, self.database, self.port, self.log_path = tessera, database, port, log_path
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self.master_key_file = ""
        self.previous_master_key_files: list[str] = []
        self.options: list[str] = []  # more options of `tessera serve`

    def start(self, timeout: float = 90) -> float:
        """Launches the server and waits until /health answers 200; returns the seconds it took."""
        started = time.monotonic()
        self.launch()
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                # A master key mismatch or a sealed value that does not open stops the server here.
                with open(self.log_path) as log:
                    tail = " | ".join(log.read().strip().splitlines()[-3:])
                raise SystemExit(f"VIOLATION SERVER DID NOT START: tessera serve exited with {self.process.returncode} "
                                 f"(master key {os.path.basename(self.master_key_file)}, previous "
                                 f"{[os.path.basename(p) for p in self.previous_master_key_files]}): {tail}; "
                                 f"see {self.log_path}")
            if harness.call(self.port, "GET", "/health", timeout=5).status == 200:
                return time.monotonic() - started
            time.sleep(0.05)
        raise SystemExit(f"crash: tessera serve did not become healthy in {timeout:.0f} s; see {self.log_path}")

    def launch(self) -> None:
        log = open(self.log_path, "a")
        log.write(f"\n--- start {self.starts} ---\n")
        log.flush()
        environment = clean_environment(TESSERA_MASTER_KEY_FILE=self.master_key_file)
        if self.previous_master_key_files:
            environment["TESSERA_PREVIOUS_MASTER_KEY_FILES"] = ",".join(self.previous_master_key_files)
        # The workers are one client address sending thousands of requests a minute, many with
        # ended sessions: lift the server's guessing limit (the project's limits are lifted too).
        self.process = harness.serve(self.tessera, self.database, self.port, "--log-level", "warning",
                                     "--failed-session-lookups-per-minute", "0", *self.options, log=log,
                                     environment=environment)
        log.close()
        self.starts += 1

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


# ─── Clients ─────────────────────────────────────────────────────────────────────────────────────


class Gate:
    """Lets the controller pause every worker between two requests and wait until all are parked."""

    def __init__(self):
        self.condition = threading.Condition()
        self.paused = False
        self.parked = 0

    def checkpoint(self, worker) -> None:
        with self.condition:
            if not self.paused:
                return
            self.parked += 1
            self.condition.notify_all()
            while self.paused:
                self.condition.wait()
            self.parked -= 1
        worker.http.reset()

    def pause(self) -> None:
        with self.condition:
            self.paused = True

    def wait_parked(self, alive, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        with self.condition:
            while self.parked < alive():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SystemExit("crash: the workers did not pause in time")
                self.condition.wait(remaining)

    def resume(self) -> None:
        with self.condition:
            self.paused = False
            self.condition.notify_all()


@dataclass
class Device:
    installation_id: str
    installation_secret: str
    session: SessionFact | None = None
    uncertain: bool = False
    anon_profile: str | None = None  # the anonymous profile the installation was last acknowledged with


class Worker(threading.Thread):
    WEIGHTS = {
        "start": 8, "identify": 14, "extend": 12, "heartbeat": 8, "revoke": 5, "delete_session": 4,
        "admin_revoke_all": 1, "device": 12, "erase": 1, "probe": 6, "block": 1, "unblock": 1,
        "rotate_api_key": 0.5, "rotate_signing_key": 0.4,
    }

    def __init__(self, index: int, run: "Run"):
        super().__init__(name=f"worker-{index}", daemon=True)
        self.index, self.run_, self.model = index, run, run.model
        self.rng = random.Random(f"{run.seed}-worker-{index}")
        self.http = harness.Client(run.port)
        self.devices = [self.new_device() for _ in range(3)]
        self.error: BaseException | None = None

    def new_device(self) -> Device:
        return Device(str(uuid.UUID(int=self.rng.getrandbits(128), version=4)), b64(self.rng.randbytes(32)))

    def run(self) -> None:
        try:
            kinds, weights = zip(*self.WEIGHTS.items())
            while not self.run_.stopping.is_set():
                self.run_.gate.checkpoint(self)
                if self.run_.stopping.is_set():
                    break
                device = self.rng.choice(self.devices)
                kind = self.rng.choices(kinds, weights)[0]
                if device.session is None or device.uncertain:
                    kind = "start"
                getattr(self, "op_" + kind)(device)
        except BaseException as error:  # a harness bug must stop the run loudly
            self.error = error
            import traceback
            traceback.print_exc()
        finally:
            with self.run_.gate.condition:
                self.run_.finished_workers += 1
                self.run_.gate.condition.notify_all()

    # One request: returns (reply, send seq, end seq) and counts it.
    def request(self, kind: str, method: str, path: str, bearer: str | None, body: object = None):
        send = self.model.seq()
        reply = self.http.call(method, path, bearer, body)
        end = self.model.end_of(send, reply)
        self.model.count(kind, reply.outcome if reply.failure != "refused" else "refused")
        if reply.status >= 500:
            self.model.count(kind, "5xx")
        if reply.failure == "refused":
            time.sleep(0.05)  # the server is down: the controller pauses the workers soon
        return reply, send, end

    def session_lost(self, device: Device, reply: Reply) -> None:
        """A 401 for the device's own session: the device signs in again (anonymously)."""
        if reply.status == 401 and device.session is not None:
            device.session = None

    def op_start(self, device: Device) -> None:
        if self.rng.random() < 0.08:
            fresh = self.new_device()
            device.installation_id, device.installation_secret = fresh.installation_id, fresh.installation_secret
            device.anon_profile = None
        body = {"installation_id": device.installation_id, "installation_secret": device.installation_secret,
                "session_duration_minutes": self.rng.randint(60, 240)}
        generation = self.run_.key_generation["publishable"]
        reply, send, end = self.request("anonymous_start", "POST", "/v1/sessions/anonymous",
                                        self.run_.pk(), body)
        if reply.outcome == "unknown":
            device.uncertain, device.session = True, None
            return
        if not reply.ok:
            if reply.status == 403 and reply.code == "profile_blocked":
                # Its anonymous profile was blocked: this app installation starts over.
                fresh = self.new_device()
                device.installation_id, device.installation_secret = fresh.installation_id, fresh.installation_secret
                device.anon_profile = None
                return
            if reply.status == 401 and reply.code == "invalid_api_key" and self.key_rotated("publishable", generation):
                return  # the publishable key was rotated meanwhile
            if 400 <= reply.status < 500 and reply.status != 429:
                with self.model.lock:
                    current = self.run_.keys["publishable"]
                    detail = (f" (publishable key #{self.run_.key_history.index(current)} acknowledged "
                              f"{time.time() - current.ack_wall:.1f} s ago)" if reply.status == 401 else "")
                self.model.violation(f"anonymous start rejected: {reply.status} {reply.code}{detail}")
            return
        fact = self.model.add_session(reply.body, send, end, "anonymous_start")
        self.run_.observe_jwt(fact.jwt, send, end, "anonymous start")
        self.not_blocked(fact.profile_id, send, "anonymous restore")
        with self.model.lock:
            known = device.installation_id in self.model.installations
            self.model.installations.add(device.installation_id)
            # The installation keeps its anonymous profile unless that profile was identified or erased.
            previous = self.model.profiles.get(device.anon_profile) if device.anon_profile else None
            expected = previous.pid if previous is not None and not previous.events else None
            self.model.checks += 1
        if known and reply.status == 201:
            self.model.violation(
                f"LOST INSTALLATION: {device.installation_id}, acknowledged before, was created again (201)")
        if expected and fact.profile_id != expected:
            self.model.violation(f"LOST INSTALLATION PROFILE: {device.installation_id} restored profile "
                                 f"{fact.profile_id}, expected {expected}")
        device.session, device.uncertain, device.anon_profile = fact, False, fact.profile_id
        with self.model.lock:
            record = self.model.profiles[fact.profile_id]
            if record.installation is None and fact.kind == "anonymous":
                record.installation = (device.installation_id, device.installation_secret)

    def key_rotated(self, kind: str, generation: int) -> bool:
        """Whether a rotation of the kind was sent since `generation` was read, is in flight (it may
        have retired the key before its own reply came), or is left unsettled."""
        with self.model.lock:
            return self.run_.key_generation[kind] != generation or self.run_.key_pending[kind] is not None \
                or self.run_.key_locks[kind].locked()

    def not_blocked(self, pid: str, send: int, what: str) -> None:
        """A new session of a profile whose block was acknowledged before the request was sent."""
        with self.model.lock:
            record = self.model.profiles.get(pid)
            blocked = record is not None and self.model.block_state(record, before=send) == "blocked"
            self.model.checks += 1
        if blocked:
            self.model.violation(f"BLOCK UNDONE: {what} (sent at seq {send}) gave a session of blocked profile {pid}")

    def op_identify(self, device: Device) -> None:
        project = self.run_.project
        sub = self.rng.choice(self.run_.subs)
        jti = uuid.UUID(int=self.rng.getrandbits(128), version=4).hex
        token, exp = identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"], sub, jti)
        caller = device.session
        with_caller = caller.kind == "anonymous" and self.rng.random() < 0.85
        body = {"identity_token": token, "session_duration_minutes": self.rng.randint(60, 240)}
        bearer = caller.token if with_caller else self.run_.pk()
        reply, send, end = self.request("identify", "POST", "/v1/sessions/identify", bearer, body)
        outcome = reply.outcome
        if outcome == "rejected":
            if with_caller:
                self.session_lost(device, reply)
            if 400 <= reply.status < 500 and reply.status not in (401, 409, 429) \
                    and (reply.status, reply.code) != (403, "profile_blocked"):
                self.model.violation(f"identify rejected: {reply.status} {reply.code}")
            return
        if outcome == "unknown":
            if with_caller:
                self.model.session_event(caller.sid, Event("identify_caller", send, end, False))
                event = Event("identify_unknown", send, end, False, sub)
                self.model.profile_event(caller.profile_id, event)
                with self.model.lock:
                    self.model.unknown_identifies.append((caller, event))
            device.uncertain, device.session = True, None
            return
        fact = self.model.add_session(reply.body, send, end, "identify")
        self.run_.observe_jwt(fact.jwt, send, end, "identify")
        self.not_blocked(fact.profile_id, send, f"identify of {sub}")
        merge = reply.body.get("merge")
        with self.model.lock:
            self.model.identify_tokens.append((token, exp, end))
            self.model.sub_profile[sub] = fact.profile_id
        self.model.checks += 1
        if reply.body.get("profile", {}).get("external_id") != sub or fact.kind != "verified":
            self.model.violation(f"identify of {sub} answered profile {reply.body.get('profile')}")
        if with_caller:
            self.model.session_event(caller.sid, Event("identify_caller", send, end, True, fact.sid))
            outcome_name = (merge or {}).get("outcome")
            if (merge or {}).get("from_profile_id") != caller.profile_id or outcome_name not in ("promoted", "merged"):
                self.model.violation(f"identify from anonymous {caller.profile_id} answered merge {merge}")
            elif outcome_name == "merged":
                with self.model.lock:
                    self.model.profile(caller.profile_id).merged_into = fact.profile_id
                    self.model.merged_profiles.add(caller.profile_id)
                self.model.profile_event(caller.profile_id, Event("merge", send, end, True, fact.profile_id))
            else:
                if fact.profile_id != caller.profile_id:
                    self.model.violation(f"promoted identify gave {fact.profile_id}, not {caller.profile_id}")
                self.model.profile_event(caller.profile_id, Event("promote", send, end, True, sub, fact.sid))
        device.session = fact

    def op_extend(self, device: Device) -> None:
        fact = device.session
        minutes = self.rng.randint(60, 43200)
        reply, send, end = self.request("extend", "POST", "/v1/sessions/authenticate", fact.token,
                                        {"session_duration_minutes": minutes})
        if reply.ok:
            expires = epoch(reply.body.get("session", {}).get("expires_at")) or 0
            with self.model.lock:
                fact.min_expires = max(fact.min_expires, expires)
                fact.touched = end
                if reply.body.get("session_jwt"):
                    fact.jwt = reply.body["session_jwt"]
            self.run_.observe_jwt(reply.body.get("session_jwt"), send, end, "extend")
        elif reply.outcome == "unknown":
            pass  # an unknown extension only ever raises expires_at: nothing to record
        else:
            self.session_lost(device, reply)

    def op_heartbeat(self, device: Device) -> None:
        fact = device.session
        use_jwt = self.rng.random() < 0.3 and fact.jwt
        reply, _, _ = self.request("heartbeat", "POST", "/v1/sessions/authenticate",
                                   fact.jwt if use_jwt else fact.token)
        if reply.ok:
            expires = epoch(reply.body.get("session", {}).get("expires_at")) or 0
            self.model.checks += 1
            if expires < fact.min_expires:
                self.model.violation(
                    f"session {fact.sid}: heartbeat expires_at {expires} < acknowledged {fact.min_expires}")
        else:
            self.session_lost(device, reply)

    def op_revoke(self, device: Device) -> None:
        fact = device.session
        reply, send, end = self.request("revoke", "POST", "/v1/sessions/revoke", fact.token, {})
        if reply.outcome != "rejected":
            self.model.session_event(fact.sid, Event("revoke", send, end, reply.ok, "self"))
        device.session = None

    def op_delete_session(self, device: Device) -> None:
        fact = device.session
        listed = self.request("list_sessions", "GET", "/v1/sessions", fact.token)[0]
        if not listed.ok:
            self.session_lost(device, listed)
            return
        ids = [s.get("id") for s in listed.body.get("sessions", [])]
        if not ids:
            self.model.violation(f"session {fact.sid}: GET /v1/sessions lists no session, not even its own")
            return
        target = self.rng.choice(ids)
        reply, send, end = self.request("delete_session", "DELETE", f"/v1/sessions/{target}", fact.token)
        if reply.outcome != "rejected":
            self.model.session_event(target, Event("revoke", send, end, reply.ok, "DELETE by " + fact.sid))
        else:
            self.session_lost(device, reply)
        if target == fact.sid:
            device.session = None

    def pick_profile(self, device: Device) -> str | None:
        if self.rng.random() < 0.35:
            return device.session.profile_id
        with self.model.lock:
            choices = list(self.model.sub_profile.values())
        return self.rng.choice(choices) if choices else None

    def op_admin_revoke_all(self, device: Device) -> None:
        target = self.pick_profile(device)
        if target is None:
            return
        reply, send, end = self.request("admin_revoke_all", "POST", f"/v1/admin/profiles/{target}/sessions/revoke",
                                        self.run_.sk(), {})
        if reply.outcome != "rejected":
            self.model.profile_event(target, Event("revoke_all", send, end, reply.ok))

    def op_erase(self, device: Device) -> None:
        target = self.pick_profile(device)
        if target is None:
            return
        with self.model.lock:
            record = self.model.profiles.get(target)
            # An alias ID erases the profile it resolves to: erase only IDs that are no alias.
            if record is None or record.merged_into or any(e.kind in ("merge", "identify_unknown")
                                                            for e in record.events):
                return
        reply, send, end = self.request("erase", "DELETE", f"/v1/admin/profiles/{target}",
                                        self.run_.sk())
        if reply.outcome != "rejected":
            event = Event("erase", send, end, reply.ok)
            self.model.profile_event(target, event)
            if not reply.ok:
                with self.model.lock:
                    self.model.unknown_erases.append((target, event))

    def blockable(self, target: str | None) -> bool:
        with self.model.lock:
            record = self.model.profiles.get(target) if target else None
            # An alias ID acts on the profile it resolves to: act only on IDs that are no alias.
            return record is not None and not record.merged_into and not any(
                e.kind in ("merge", "identify_unknown") for e in record.events)

    def op_block(self, device: Device) -> None:
        target = self.pick_profile(device)
        if not self.blockable(target):
            return
        event = self.model.begin_profile_event(target, "block")
        reply, send, end = self.request("block", "POST", f"/v1/admin/profiles/{target}/block", self.run_.sk(),
                                        {"reason": "crash test"})
        self.model.settle_profile_event(target, event, reply, send, end)
        if reply.ok:
            self.model.checks += 1
            if reply.body.get("profile", {}).get("blocked") is not True:
                self.model.violation(f"block of {target} answered {reply.body.get('profile')}")

    def op_unblock(self, device: Device) -> None:
        with self.model.lock:
            blocked = [p.pid for p in self.model.profiles.values() if any(e.kind == "block" for e in p.events)]
        # As for a block: an alias ID would unblock the profile it was merged into, which the model
        # would not know of (a violation reported at seed 1895333489 on PostgreSQL).
        blocked = [pid for pid in blocked if self.blockable(pid)]
        if not blocked:
            return
        target = self.rng.choice(blocked)
        event = self.model.begin_profile_event(target, "unblock")
        reply, send, end = self.request("unblock", "POST", f"/v1/admin/profiles/{target}/unblock", self.run_.sk(), {})
        self.model.settle_profile_event(target, event, reply, send, end)

    def op_rotate_api_key(self, device: Device) -> None:
        """Rotates an API key the workers use: they switch to the new key once the rotation is
        acknowledged; the old one must be refused once its grace ends. Secret keys get a grace long
        enough for the controller to settle a lost rotation with the old key after the restart."""
        kind = self.rng.choice(["publishable", "publishable", "secret"])
        grace = self.rng.choice([0, 0, 3]) if kind == "publishable" else self.rng.choice([30, 45])
        lock = self.run_.key_locks[kind]
        if not lock.acquire(blocking=False):
            return
        try:
            with self.model.lock:
                if self.run_.key_pending[kind] is not None:
                    return
                old = self.run_.keys[kind]
                old.live = False
                self.run_.key_generation[kind] += 1
            reply, send, end = self.request("rotate_api_key", "POST", "/v1/admin/api-keys/rotate", self.run_.sk(),
                                            {"kind": kind, "grace_seconds": grace})
            if reply.outcome != "rejected":
                with self.model.lock:
                    self.run_.api_rotations[kind][0 if reply.ok else 1] += 1
            if reply.ok:
                body = reply.body.get("api_key", {})
                expires = epoch(body.get("previous_key_expires_at")) or 0
                self.model.checks += 1
                if body.get("kind") != kind or not body.get("key") or expires > time.time() + grace + 1:
                    self.model.violation(f"rotation of the {kind} key answered {reply.status} {body}")
                    return
                with self.model.lock:
                    old.dead_after = expires + 1.5
                    fact = KeyFact(kind, body["key"], time.time())
                    self.run_.keys[kind] = fact
                    self.run_.key_history.append(fact)
                    self.run_.key_generation[kind] += 1
                if grace == 0:
                    # At once, under load: the old key must already be refused.
                    probe = self.request("probe_old_key", "POST", "/v1/sessions/identify", old.key, {})[0]
                    self.model.checks += 1
                    if probe.status and probe.status not in (401, 429):
                        self.model.violation(f"ROTATED-OUT API KEY CAME BACK: the {kind} key rotated out with grace 0 "
                                             f"(acknowledged) answered {probe.status} {probe.code} right after")
            elif reply.outcome == "unknown":
                with self.model.lock:
                    self.run_.key_pending[kind] = grace
            else:
                with self.model.lock:
                    if self.run_.keys[kind] is old:
                        old.live = True
        finally:
            lock.release()

    def op_rotate_signing_key(self, device: Device) -> None:
        if not self.run_.signing_lock.acquire(blocking=False):
            return
        try:
            reply, send, end = self.request("rotate_signing_key", "POST", "/v1/admin/signing-keys/rotate",
                                            self.run_.sk(), {})
            if reply.ok:
                kid = reply.body.get("signing_key", {}).get("kid")
                with self.model.lock:
                    before = frozenset(k for k, seen in self.run_.kids_seen.items() if seen < send)
                    self.run_.signing_rotations.append((time.time(), before, kid))
                    self.run_.kids_seen.setdefault(kid, end)
        finally:
            self.run_.signing_lock.release()

    def op_device(self, device: Device) -> None:
        fact = device.session
        push = "tok-" + uuid.UUID(int=self.rng.getrandbits(128), version=4).hex
        body = {"platform": self.rng.choice(["apns", "fcm"]), "token": push,
                "environment": self.rng.choice(["sandbox", "production"])}
        reply, send, end = self.request("device", "POST", "/v1/devices",
                                        fact.jwt if self.rng.random() < 0.3 else fact.token, body)
        if reply.ok:
            did = reply.body.get("device", {}).get("id")
            if reply.body.get("device", {}).get("session_id") != fact.sid:
                self.model.violation(f"device {did} bound to {reply.body.get('device')}, not {fact.sid}")
            with self.model.lock:
                fact.devices.append(DeviceFact(did, fact.sid, fact.profile_id, push, end))
                fact.touched = end
        elif reply.outcome == "rejected":
            self.session_lost(device, reply)

    def op_probe(self, device: Device) -> None:
        """Presents a session that must be dead: it must never answer 200, during load too."""
        with self.model.lock:
            sample = self.rng.sample(list(self.model.sessions.values()), min(8, len(self.model.sessions)))
            dead = [(f, self.model.session_status(f)[1]) for f in sample if self.model.session_status(f)[0] == "dead"]
        if not dead:
            return
        fact, why = dead[0]
        credential = fact.token if fact.token and self.rng.random() < 0.6 else fact.jwt
        reply, _, _ = self.request("probe", "POST", "/v1/sessions/authenticate", credential)
        self.model.checks += 1
        if reply.ok:
            self.model.violation(f"DEAD SESSION CAME BACK: {fact.sid} ({why}) answered {reply.status} during load")


# ─── Checks ──────────────────────────────────────────────────────────────────────────────────────


class Checker:
    def __init__(self, run: "Run"):
        self.run_, self.model = run, run.model
        self.local = threading.local()

    def http(self) -> harness.Client:
        if not hasattr(self.local, "http"):
            self.local.http = harness.Client(self.run_.port, timeout=30)
        return self.local.http

    def call(self, method, path, bearer, body=None) -> Reply:
        for _ in range(3):
            reply = self.http().call(method, path, bearer, body)
            if reply.status:
                return reply
            self.http().reset()
            time.sleep(0.2)
        return reply

    def expect(self, condition: bool, text: str) -> None:
        with self.model.lock:
            self.model.checks += 1
        if not condition:
            self.model.violation(text)

    def check_session(self, fact: SessionFact, status: str, why: str, label: str) -> None:
        for name, credential in (("token", fact.token), ("jwt", fact.jwt)):
            if not credential:
                continue
            reply = self.call("POST", "/v1/sessions/authenticate", credential)
            if reply.status == 0 or reply.status >= 500:
                self.expect(False, f"[{label}] session {fact.sid} by {name}: no answer ({reply.status} {reply.failure})")
                continue
            if status == "dead":
                self.expect(reply.status == 401 and reply.code in DEAD_CODES,
                            f"[{label}] {'DEAD SESSION CAME BACK' if reply.ok else 'unexpected answer'}: {fact.sid} ({fact.origin}, profile {fact.profile_id})"
                            f" must be dead: {why}; by {name} it answered {reply.status} {reply.code}")
            elif status == "alive":
                self.expect(reply.status == 200,
                            f"[{label}] LOST SESSION: {fact.sid} ({fact.origin}, profile {fact.profile_id}, acked seq "
                            f"{fact.ack}) must be alive; by {name} it answered {reply.status} {reply.code}")
            if reply.status == 200:
                expires = epoch(reply.body.get("session", {}).get("expires_at")) or 0
                self.expect(expires >= fact.min_expires,
                            f"[{label}] LOST EXTENSION: session {fact.sid} expires_at {expires} < acknowledged "
                            f"{fact.min_expires}")
                self.expect(reply.body.get("profile", {}).get("id") == fact.profile_id,
                            f"[{label}] session {fact.sid} moved from profile {fact.profile_id} to "
                            f"{reply.body.get('profile', {}).get('id')}")

    def check_devices(self, record: ProfileFact, facts: list[tuple[SessionFact, str]], label: str) -> None:
        reply = self.call("GET", f"/v1/admin/profiles/{record.pid}/devices", self.run_.sk())
        if reply.status == 404:
            for fact, status in facts:
                self.expect(status != "alive" or not fact.devices,
                            f"[{label}] profile {record.pid} is gone but session {fact.sid} must be alive with devices")
            return
        if reply.status != 200:
            self.expect(False, f"[{label}] devices of {record.pid}: {reply.status} {reply.code}")
            return
        listed = {d.get("id") for d in reply.body.get("devices", [])}
        for fact, status in facts:
            for device in fact.devices:
                if status == "alive":
                    self.expect(device.did in listed, f"[{label}] LOST DEVICE: {device.did} of live session "
                                                      f"{fact.sid} (profile {record.pid}) is not listed")
                elif status == "dead":
                    self.expect(device.did not in listed,
                                f"[{label}] DEVICE OF ENDED SESSION: {device.did} of {fact.sid} still listed")

    def check_profile(self, record: ProfileFact, label: str) -> None:
        secret = self.run_.sk()
        with self.model.lock:
            state, target = self.model.profile_state(record)
            target_state = self.model.profile_state(self.model.profiles[target])[0] \
                if state == "alias" and target in self.model.profiles else None
            identified = record.identified or any(e.kind == "promote" and e.acked for e in record.events)
            facts = [(self.model.sessions[sid], self.model.session_status(self.model.sessions[sid])[0])
                     for sid in record.sessions]
        if state == "erased":
            for path in ("", "/sessions", "/devices"):
                reply = self.call("GET", f"/v1/admin/profiles/{record.pid}{path}", secret)
                self.expect(reply.status == 404, f"[{label}] ERASED PROFILE CAME BACK: GET "
                                                 f"/v1/admin/profiles/{record.pid}{path} answered {reply.status}")
            with self.model.lock:
                aliases = [p.pid for p in self.model.profiles.values() if p.merged_into == record.pid]
            for alias in aliases:
                reply = self.call("GET", f"/v1/admin/profiles/{alias}", secret)
                self.expect(reply.status == 404, f"[{label}] ALIAS OF ERASED PROFILE: {alias} (of {record.pid}) "
                                                 f"answered {reply.status}")
            return
        if state == "alias":
            if target_state not in ("exists", "erased"):
                return
            reply = self.call("GET", f"/v1/admin/profiles/{record.pid}", secret)
            if target_state == "erased":
                self.expect(reply.status == 404, f"[{label}] alias {record.pid} of erased {target}: {reply.status}")
            else:
                self.expect(reply.status == 200 and reply.body.get("profile", {}).get("id") == target,
                            f"[{label}] LOST MERGE: alias {record.pid} should resolve to {target}, answered "
                            f"{reply.status} {reply.body.get('profile', {}).get('id')}")
            return
        if state != "exists":
            return
        reply = self.call("GET", f"/v1/admin/profiles/{record.pid}", secret)
        profile = reply.body.get("profile", {})
        self.expect(reply.status == 200 and profile.get("id") == record.pid,
                    f"[{label}] LOST PROFILE: {record.pid} answered {reply.status} {profile.get('id')}")
        if reply.status == 200 and identified:
            self.expect(profile.get("kind") == "identified" and profile.get("verified") is True,
                        f"[{label}] LOST IDENTIFY: profile {record.pid} should be identified, is {profile}")
        self.check_devices(record, facts, label)
        if reply.status == 200:
            self.check_block(record, profile, label)

    def check_block(self, record: ProfileFact, profile: dict, label: str) -> None:
        """A block whose acknowledgement no unblock can have followed stands: the profile says so, and
        identify of its user and anonymous restore of its installation answer 403 `profile_blocked`
        (its sessions are checked dead with the others). An acknowledged unblock stands too."""
        with self.model.lock:
            state = self.model.block_state(record)
            ever = any(e.kind == "block" for e in record.events)
            sub = record.sub or next((e.detail for e in record.events if e.kind == "promote" and e.acked), None)
            sub_is_it = sub is not None and self.model.sub_profile.get(sub) == record.pid
            plain_anonymous = record.installation is not None and all(
                e.kind in ("block", "unblock", "revoke_all") for e in record.events)
        if state == "unblocked" and ever:
            self.expect(profile.get("blocked") is False,
                        f"[{label}] UNBLOCK UNDONE: profile {record.pid} answers blocked {profile.get('blocked')}")
        if state != "blocked":
            return
        self.expect(profile.get("blocked") is True,
                    f"[{label}] BLOCK UNDONE: profile {record.pid} answers blocked {profile.get('blocked')}")
        if sub_is_it and profile.get("external_id") == sub:
            project = self.run_.project
            token = identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"], sub,
                                   uuid.uuid4().hex)[0]
            reply = self.call("POST", "/v1/sessions/identify", self.run_.pk(), {"identity_token": token})
            self.expect(reply.status == 403 and reply.code == "profile_blocked",
                        f"[{label}] BLOCK UNDONE: identify of {sub} (blocked profile {record.pid}) answered "
                        f"{reply.status} {reply.code}")
        if plain_anonymous:
            installation, secret = record.installation
            reply = self.call("POST", "/v1/sessions/anonymous", self.run_.pk(),
                              {"installation_id": installation, "installation_secret": secret})
            self.expect(reply.status == 403 and reply.code == "profile_blocked",
                        f"[{label}] BLOCK UNDONE: anonymous restore of blocked profile {record.pid} answered "
                        f"{reply.status} {reply.code}")
        sessions = self.call("GET", f"/v1/admin/profiles/{record.pid}/sessions", self.run_.sk())
        live = [x.get("id") for x in sessions.body.get("sessions", [])]  # it lists live sessions only
        self.expect(sessions.status == 200 and not live,
                    f"[{label}] BLOCK UNDONE: blocked profile {record.pid} has live sessions {live} "
                    f"({sessions.status})")

    def check_keys(self, label: str) -> None:
        """Every API key whose grace ended is refused; the current key of each kind works."""
        now = time.time()
        with self.model.lock:
            facts = [(f, f.dead_after is not None and now > f.dead_after,
                      f.live and self.run_.keys[f.kind] is f and self.run_.key_pending[f.kind] is None)
                     for f in self.run_.key_history]
        for fact, dead, live in facts:
            if not dead and not live:
                continue
            if fact.kind == "secret":
                reply = self.call("GET", "/v1/admin/project", fact.key)
                works = reply.status == 200
            else:  # an empty identify: 400 past the key check, 401 at it
                reply = self.call("POST", "/v1/sessions/identify", fact.key, {})
                works = reply.status == 400
            if dead:
                self.expect(reply.status == 401 and reply.code == "invalid_api_key",
                            f"[{label}] ROTATED-OUT API KEY CAME BACK: the {fact.kind} key acknowledged at "
                            f"{fact.ack_wall:.0f}, whose grace ended at {fact.dead_after:.0f}, answered "
                            f"{reply.status} {reply.code}")
            else:
                self.expect(works, f"[{label}] LOST API KEY ROTATION: the current {fact.kind} key (acknowledged at "
                                   f"{fact.ack_wall:.0f}) answered {reply.status} {reply.code}")

    def check_seals(self, label: str) -> None:
        """Every project's sealed values open: identify with its identity secret mints a session whose
        JWT verifies, and its JWKS serves the JWT's key."""
        self.run_.seal_rounds += 1
        projects = [dict(self.run_.project, publishable_key=self.run_.pk())] + self.run_.extra_projects
        for index, project in enumerate(projects):
            sub = f"seal-{self.run_.seed}-{self.run_.seal_rounds}-{index}"
            token = identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"], sub,
                                   uuid.uuid4().hex)[0]
            send = self.model.seq()
            reply = self.call("POST", "/v1/sessions/identify", project["publishable_key"], {"identity_token": token})
            end = self.model.seq()
            jwt = reply.body.get("session_jwt")
            self.expect(reply.status == 200 and jwt, f"[{label}] SEALED VALUE LOST: identify on project "
                                                     f"{project['project_id']} answered {reply.status} {reply.code}")
            if reply.status != 200 or not jwt:
                continue
            if index == 0:
                self.run_.observe_jwt(jwt, send, end, label + " (fresh JWT)")
                with self.model.lock:  # nothing ends it: its events must say so
                    self.run_.extra_sessions[reply.body["session"]["id"]] = (
                        reply.body["profile"]["id"], reply.body["session"].get("kind", ""), "alive")
            kid = harness.kid_of(jwt)
            jwks = self.call("GET", f"/v1/projects/{project['project_id']}/jwks.json", None)
            kids = [k.get("kid") for k in jwks.body.get("keys", [])]
            self.expect(jwks.status == 200 and kid in kids,
                        f"[{label}] SEALED VALUE LOST: JWKS of {project['project_id']} answered {jwks.status} "
                        f"without the signing kid {kid} ({kids})")
            verified = self.call("POST", "/v1/sessions/authenticate", jwt)
            self.expect(verified.status == 200, f"[{label}] SEALED VALUE LOST: a fresh JWT of project "
                                                f"{project['project_id']} answered {verified.status} {verified.code}")

    def check_unknown_identify(self, caller: SessionFact, event: Event, label: str) -> None:
        """An identify whose reply was lost applied entirely or not at all: the calling anonymous
        session still works on an anonymous profile, or it ended and the profile is the user's."""
        with self.model.lock:
            record = self.model.profiles[caller.profile_id]
            if caller.events != [e for e in caller.events if e.kind == "identify_caller"] or len(caller.events) != 1 \
                    or record.events != [event]:
                return  # something else touched them too: nothing certain to check
            self.model.resolved["identify"] += 1
            erased_since = any(e.kind == "erase" and e.send > event.send for p in self.model.profiles.values()
                               if p.sub == event.detail for e in p.events)
        reply = self.call("POST", "/v1/sessions/authenticate", caller.token)
        if reply.status == 200:
            profile = reply.body.get("profile", {})
            self.expect(profile.get("id") == caller.profile_id and profile.get("kind") == "anonymous",
                        f"[{label}] HALF-APPLIED IDENTIFY: caller {caller.sid} still works but its profile is {profile}")
            return
        self.expect(reply.status == 401, f"[{label}] caller {caller.sid} of a lost identify: {reply.status}")
        found = self.call("GET", f"/v1/admin/profiles/{caller.profile_id}", self.run_.sk())
        profile = found.body.get("profile", {})
        self.expect(
            (found.status == 200 and profile.get("kind") == "identified" and profile.get("external_id") == event.detail)
            or (found.status == 404 and erased_since),
            f"[{label}] HALF-APPLIED IDENTIFY: caller {caller.sid} ended ({reply.code}) but its profile "
            f"{caller.profile_id} answers {found.status} {profile}")

    def check_unknown_erase(self, pid: str, event: Event, label: str) -> None:
        """An erasure whose reply was lost applied entirely or not at all."""
        with self.model.lock:
            record = self.model.profiles[pid]
            if [e for e in record.events if e.kind in ("erase", "merge", "identify_unknown")] != [event]:
                return
            self.model.resolved["erase"] += 1
        found = self.call("GET", f"/v1/admin/profiles/{pid}", self.run_.sk())
        if found.status not in (200, 404):
            self.expect(False, f"[{label}] profile {pid} of a lost erasure: {found.status} {found.code}")
            return
        applied = found.status == 404
        with self.model.lock:
            facts = [self.model.sessions[sid] for sid in record.sessions]
            statuses = [(f, *self.model.session_status(f, resolved=(event, applied))) for f in facts]
        for fact, status, why in statuses:
            self.check_session(fact, status, f"lost erasure {'applied' if applied else 'not applied'}: {why}",
                               label + " (lost erasure of " + pid + ")")

    def check_sub(self, sub: str, label: str) -> None:
        reply = self.call("GET", f"/v1/admin/profiles?external_id={sub}", self.run_.sk())
        verified = [p.get("id") for p in reply.body.get("profiles", []) if p.get("verified")]
        self.expect(reply.status == 200 and len(verified) <= 1,
                    f"[{label}] user {sub} has {len(verified)} verified profiles: {verified}")
        with self.model.lock:
            expected = self.model.sub_profile.get(sub)
            record = self.model.profiles.get(expected) if expected else None
            # The newest acknowledged profile stands unless something could have erased it.
            certain = record is not None and not any(e.kind == "erase" for e in record.events)
        if certain:
            self.expect(verified == [expected], f"[{label}] LOST USER: {sub} should be {expected}, found {verified}")

    def check_replay(self, token: str, label: str) -> None:
        reply = self.call("POST", "/v1/sessions/identify", self.run_.pk(),
                          {"identity_token": token})
        self.expect(reply.status == 401 and reply.code == "identity_token_replayed",
                    f"[{label}] LOST JTI: an acknowledged identify's token was accepted again ({reply.status} "
                    f"{reply.code})")

    def run_checks(self, label: str, since: int | None, sample: int, rng: random.Random) -> int:
        """Checks facts touched after `since` (all when None) plus `sample` older ones; returns the count."""
        before = self.model.checks
        with self.model.lock:
            sessions = list(self.model.sessions.values())
            profiles = list(self.model.profiles.values())
            subs = list(self.model.sub_profile)
            tokens = list(self.model.identify_tokens)
            if since is not None:
                recent_s = [f for f in sessions if f.touched > since]
                older_s = [f for f in sessions if f.touched <= since]
                sessions = recent_s + rng.sample(older_s, min(sample, len(older_s)))
                recent_p = [p for p in profiles if p.touched > since]
                older_p = [p for p in profiles if p.touched <= since]
                profiles = recent_p + rng.sample(older_p, min(sample // 2, len(older_p)))
                subs = rng.sample(subs, min(4, len(subs)))
                tokens = [t for t in tokens if t[2] > since] + rng.sample(tokens, min(3, len(tokens)))
            statuses = [(f, *self.model.session_status(f)) for f in sessions]
            unknown_identifies = [(c, e) for c, e in self.model.unknown_identifies
                                  if since is None or e.send > since or c.touched > since]
            unknown_erases = [(p, e) for p, e in self.model.unknown_erases if since is None or e.send > since]
        now = time.time()
        tokens = [t for t in tokens if t[1] - now > 30]
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            jobs = [pool.submit(self.check_session, f, status, why, label) for f, status, why in statuses]
            jobs += [pool.submit(self.check_profile, p, label) for p in profiles]
            jobs += [pool.submit(self.check_sub, s, label) for s in subs]
            jobs += [pool.submit(self.check_replay, t[0], label) for t in tokens]
            jobs += [pool.submit(self.check_unknown_identify, c, e, label) for c, e in unknown_identifies]
            jobs += [pool.submit(self.check_unknown_erase, p, e, label) for p, e in unknown_erases]
            jobs += [pool.submit(self.check_keys, label), pool.submit(self.check_seals, label)]
            for job in jobs:
                job.result()
        return self.model.checks - before


def settle_rotations(run: "Run") -> None:
    """After a restart: an API key rotation whose reply was lost left the new key unknown (and, with
    grace 0, maybe the old one dead): rotate once more, with the secret key the harness holds (a lost
    secret rotation's old key is inside its grace of 30 s or more), and use the new key."""
    for kind in ("publishable", "secret"):
        with run.model.lock:
            grace = run.key_pending[kind]
        if grace is None:
            continue
        http = harness.Client(run.port, timeout=30)
        for _ in range(5):
            reply = http.call("POST", "/v1/admin/api-keys/rotate", run.sk(),
                              {"kind": kind, "grace_seconds": 0 if kind == "publishable" else 30})
            if reply.status:
                break
            http.reset()
            time.sleep(0.2)
        body = reply.body.get("api_key", {})
        if not reply.ok or not body.get("key"):
            raise SystemExit(f"VIOLATION LOST API KEY: settling a lost rotation of the {kind} key answered "
                             f"{reply.status} {reply.code}")
        expires = epoch(body.get("previous_key_expires_at")) or 0
        with run.model.lock:
            run.api_rotations[kind][0] += 1
            old = run.keys[kind]
            # Retired by the lost rotation (at the latest, grace seconds from now) or by this one.
            old.dead_after = max(time.time() + grace, expires) + 1.5
            fact = KeyFact(kind, body["key"], time.time())
            run.keys[kind] = fact
            run.key_history.append(fact)
            run.key_generation[kind] += 1
            run.key_pending[kind] = None


# ─── Device registration racing the end of its session ───────────────────────────────────────────


def device_races(run: "Run", count: int, rng: random.Random) -> None:
    """`count` times, registers a device on a session while another connection ends that session
    (own revoke, DELETE by a sibling session, admin revoke-all, erasure). Whatever the order, the
    registration answers 201 or the session's 401, never a 5xx, and no device outlives its session."""
    model, project = run.model, run.project
    secret, kid = project["identity_secret"]["secret"], project["identity_secret"]["kid"]
    outcomes: dict[str, int] = {}
    for index in range(count):
        a, b = harness.Client(run.port), harness.Client(run.port)
        sub = f"race-{run.seed}-{index}"
        first, second = (a.call("POST", "/v1/sessions/identify", project["publishable_key"],
                                {"identity_token": identity_token(secret, kid, sub, uuid.uuid4().hex)[0]}).body
                         for _ in range(2))
        sid, pid = first["session"]["id"], first["profile"]["id"]
        way = ("revoke", "delete", "revoke_all", "erase")[index % 4]
        replies = {}

        def register():
            replies["device"] = a.call("POST", "/v1/devices", first["session_token"],
                                       {"platform": "fcm", "token": f"race-{uuid.uuid4().hex}"})

        def end():
            if way == "revoke":
                replies["end"] = b.call("POST", "/v1/sessions/revoke", first["session_token"], {})
            elif way == "delete":
                replies["end"] = b.call("DELETE", f"/v1/sessions/{sid}", second["session_token"])
            elif way == "revoke_all":
                replies["end"] = b.call("POST", f"/v1/admin/profiles/{pid}/sessions/revoke", project["secret_key"], {})
            else:
                replies["end"] = b.call("DELETE", f"/v1/admin/profiles/{pid}", project["secret_key"])

        threads = [threading.Thread(target=register), threading.Thread(target=end)]
        if rng.random() < 0.5:
            threads.reverse()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        device, ended = replies["device"], replies["end"]
        key = f"{way}: {device.status}"
        outcomes[key] = outcomes.get(key, 0) + 1
        model.checks += 2
        if not (device.status == 201 or (device.status == 401 and device.code in DEAD_CODES)):
            model.violation(f"[device race] POST /v1/devices racing {way} answered {device.status} {device.code}")
        if not ended.ok:
            model.violation(f"[device race] {way} answered {ended.status} {ended.code}")
        if ended.ok:  # for the events feed: what each acknowledged step changed
            with model.lock:
                run.extra_sessions[sid] = (pid, "verified", "dead")
                run.extra_sessions[second["session"]["id"]] = (
                    pid, "verified", "dead" if way in ("revoke_all", "erase") else "alive")
                if device.status == 201:
                    run.extra_devices[device.body.get("device", {}).get("id")] = (sid, "dead")
                if way == "erase":
                    run.extra_erased.add(pid)
        listed = a.call("GET", f"/v1/admin/profiles/{pid}/devices", project["secret_key"])
        if listed.status == 200 and listed.body.get("devices"):
            model.violation(f"[device race] DEVICE OUTLIVED ITS SESSION: {way} of {sid}, devices still listed")
        run.race_sessions.append(sid)
        a.reset()
        b.reset()
    print(f"device races: {count} ({', '.join(f'{k} ×{v}' for k, v in sorted(outcomes.items()))})", flush=True)


# ─── Direct reads of the database after the final kill ───────────────────────────────────────────


def psql_path() -> str:
    versions = sorted((d for d in os.listdir("/usr/lib/postgresql") if d[0].isdigit()), key=int) \
        if os.path.isdir("/usr/lib/postgresql") else []
    for version in reversed(versions):
        if os.access(f"/usr/lib/postgresql/{version}/bin/psql", os.X_OK):
            return f"/usr/lib/postgresql/{version}/bin/psql"
    found = shutil.which("psql")
    if not found:
        raise SystemExit("crash: psql not found")
    return found


class Database:
    def __init__(self, kind: str, sqlite_path: str | None = None, postgres_url: str | None = None,
                 schema: str | None = None):
        self.kind, self.sqlite_path, self.postgres_url, self.schema = kind, sqlite_path, postgres_url, schema

    def rows(self, sql: str) -> list[tuple]:
        if self.kind == "sqlite":
            connection = sqlite3.connect(self.sqlite_path)
            try:
                return connection.execute(sql).fetchall()
            finally:
                connection.close()
        # postgres://user:password@host:port/db
        rest = self.postgres_url.split("://", 1)[1]
        credentials, location = rest.split("@", 1)
        user, password = credentials.split(":", 1)
        hostport, dbname = location.split("/", 1)
        host, port = hostport.split(":")
        result = subprocess.run(
            [psql_path(), "-h", host, "-p", port, "-U", user, "-d", dbname.split("?")[0], "-AtqX",
             "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", f"SET search_path TO {self.schema}", "-c", sql],
            capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=password), timeout=120)
        if result.returncode != 0:
            raise SystemExit(f"crash: psql failed: {result.stderr.strip()}")
        return [tuple(line.split("\t")) for line in result.stdout.splitlines() if line]

    def execute(self, statements: list[str]) -> None:
        if self.kind == "sqlite":
            connection = sqlite3.connect(self.sqlite_path)
            try:
                for statement in statements:
                    connection.execute(statement)
                connection.commit()
            finally:
                connection.close()
        else:
            self.rows("BEGIN; " + "; ".join(statements) + "; COMMIT")


def tamper(run: "Run", database: Database) -> list[str]:
    """--self-test: while the server is down, undo acknowledged writes behind its back (as a lost
    write would); returns the violation markers the checks must then report."""
    model, expected, now = run.model, [], int(time.time())
    statements = []
    with model.lock:
        facts = list(model.sessions.values())
        status = {f.sid: model.session_status(f) for f in facts}
        revoked = [f for f in facts if any(e.kind == "revoke" and e.acked for e in f.events)
                   and model.profile_state(model.profiles[f.profile_id])[0] == "exists"]
        alive = [f for f in facts if status[f.sid][0] == "alive" and f.min_expires - 900 > now]
        with_devices = [f for f in alive if f.devices]
        erased = [p for p in model.profiles.values() if model.profile_state(p)[0] == "erased"]
        tokens = [t for t in model.identify_tokens if t[1] - now > 120]
        project = run.project["project_id"]
        if revoked:
            statements.append(f"UPDATE sessions SET revoked_at = NULL WHERE id = '{revoked[-1].sid}'")
            expected.append("DEAD SESSION CAME BACK")
            revoked[-1].touched = next(model._seq)
        if len(alive) >= 2:
            statements.append(f"UPDATE sessions SET expires_at = {alive[-1].min_expires - 600} "
                              f"WHERE id = '{alive[-1].sid}'")
            expected.append("LOST EXTENSION")
            victim = next((f for f in alive[:-1] if not f.devices), alive[0])
            statements.append(f"DELETE FROM devices WHERE session_id = '{victim.sid}'")
            statements.append(f"DELETE FROM sessions WHERE id = '{victim.sid}'")
            expected.append("LOST SESSION")
        if with_devices and with_devices[0] is not alive[-1]:
            statements.append(f"DELETE FROM devices WHERE id = '{with_devices[0].devices[0].did}'")
            expected.append("LOST DEVICE")
        if erased:
            statements.append(
                "INSERT INTO profiles (id, project_id, kind, external_id, verified, created_at, updated_at) "
                f"VALUES ('{erased[-1].pid}', '{project}', 'anonymous', NULL, FALSE, {now}, {now})")
            expected.append("ERASED PROFILE CAME BACK")
        if tokens:
            jti = harness.jwt_part(tokens[-1][0], 1)["jti"]
            statements.append(f"DELETE FROM used_token_ids WHERE jti = '{jti}'")
            expected.append("LOST JTI")
        blocked = [p for p in model.profiles.values()
                   if model.block_state(p) == "blocked" and model.profile_state(p)[0] == "exists"]
        if blocked:
            statements.append(f"UPDATE profiles SET blocked_at = NULL, blocked_reason = NULL WHERE id = '{blocked[-1].pid}'")
            expected.append("BLOCK UNDONE")
        dead_keys = [f for f in run.key_history if f.dead_after is not None and f.dead_after < now]
        if dead_keys:
            digest = hashlib.sha256(dead_keys[-1].key.encode()).hexdigest()
            value = f"X'{digest}'" if database.kind == "sqlite" else f"decode('{digest}', 'hex')"
            statements.append("INSERT INTO retired_api_keys (key_hash, project_id, kind, expires_at) "
                              f"VALUES ({value}, '{project}', '{dead_keys[-1].kind}', {now + 86400}) "
                              # The row may still be there, expired but not yet cleaned up: revive it.
                              "ON CONFLICT (key_hash) DO UPDATE SET expires_at = excluded.expires_at")
            expected.append("ROTATED-OUT API KEY CAME BACK")
        # The events feed: one acknowledged session's event deleted (a lost event, a gap), another's
        # duplicated, and one for a session never acknowledged and not in the database.
        if len(facts) >= 2:
            counter = f"(SELECT last_sequence FROM event_counters WHERE project_id = '{project}') + 1"
            bump = f"UPDATE event_counters SET last_sequence = last_sequence + 1 WHERE project_id = '{project}'"
            columns = ("project_id, sequence, id, type, created_at, actor_type, actor_id, client_address, "
                       "profile_id, data")
            statements.append(f"DELETE FROM events WHERE project_id = '{project}' AND type = 'session.created' "
                              f"AND data LIKE '%{facts[0].sid}%'")
            expected += ["MISSING EVENT: session.created", "FEED GAP"]
            statements.append(f"INSERT INTO events ({columns}) SELECT project_id, {counter}, "
                              f"'evt_{uuid.uuid4().hex[:24]}', type, created_at, actor_type, actor_id, "
                              f"client_address, profile_id, data FROM events WHERE project_id = '{project}' "
                              f"AND type = 'session.created' AND data LIKE '%{facts[1].sid}%'")
            statements.append(bump)
            expected.append("DUPLICATE EVENT: session.created")
            ghost, owner = "ses_" + uuid.uuid4().hex[:24], "usr_" + uuid.uuid4().hex[:24]
            statements.append(f"INSERT INTO events ({columns}) SELECT '{project}', {counter}, "
                              f"'evt_{uuid.uuid4().hex[:24]}', 'session.created', {now}, 'sdk', NULL, NULL, '{owner}', "
                              f"'{{\"session_id\":\"{ghost}\",\"profile_id\":\"{owner}\",\"kind\":\"anonymous\"}}'")
            statements.append(bump)
            expected.append("PHANTOM EVENT: session.created")
    database.execute(statements)
    print(f"self-test: injected {len(expected)} lost writes: {', '.join(expected)}", flush=True)
    return expected


def check_database(run: "Run", database: Database) -> None:
    model = run.model

    def expect(condition, text):
        model.checks += 1
        if not condition:
            model.violation("[database] " + text)

    if database.kind == "sqlite":
        integrity = database.rows("PRAGMA integrity_check")
        expect(integrity == [("ok",)], f"PRAGMA integrity_check: {integrity[:5]}")
        foreign = database.rows("PRAGMA foreign_key_check")
        expect(foreign == [], f"PRAGMA foreign_key_check: {foreign[:5]}")
        run.integrity = integrity[0][0] if integrity else "?"
    with model.lock:
        erased = [p.pid for p in model.profiles.values() if model.profile_state(p)[0] == "erased"]
        dead = [f.sid for f in model.sessions.values() if model.session_status(f)[0] == "dead"]
    for chunk in range(0, len(erased), 200):
        ids = ", ".join(f"'{pid}'" for pid in erased[chunk:chunk + 200])
        for table, column in (("profiles", "id"), ("sessions", "profile_id"), ("devices", "profile_id"),
                              ("profile_aliases", "profile_id"), ("installations", "profile_id")):
            rows = database.rows(f"SELECT {column} FROM {table} WHERE {column} IN ({ids})")
            expect(not rows, f"ERASED PROFILE LEFT ROWS: {len(rows)} in {table}, e.g. {rows[:3]}")
    for chunk in range(0, len(dead), 200):
        ids = ", ".join(f"'{sid}'" for sid in dead[chunk:chunk + 200])
        rows = database.rows(f"SELECT id FROM sessions WHERE id IN ({ids}) AND revoked_at IS NULL "
                             f"AND expires_at > {int(time.time())}")
        expect(not rows, f"DEAD SESSION LIVE IN THE DATABASE: {rows[:5]}")
        rows = database.rows(f"SELECT id, session_id FROM devices WHERE session_id IN ({ids})")
        expect(not rows, f"DEVICE ROWS OF ENDED SESSIONS: {len(rows)}, e.g. {rows[:3]}")
    rows = database.rows("SELECT d.id, d.session_id FROM devices d LEFT JOIN sessions s ON s.id = d.session_id "
                         "WHERE s.id IS NULL OR s.revoked_at IS NOT NULL")
    expect(not rows, f"DEVICE ROWS BOUND TO A REVOKED OR MISSING SESSION: {len(rows)}, e.g. {rows[:3]}")
    rows = database.rows("SELECT s.id FROM sessions s LEFT JOIN profiles p ON p.id = s.profile_id WHERE p.id IS NULL")
    expect(not rows, f"SESSIONS WITHOUT A PROFILE: {rows[:3]}")


# ─── The events feed ─────────────────────────────────────────────────────────────────────────────


def expected_events(run: "Run") -> feed.Expected:
    """What the acknowledgements imply for the feed (see feed.Expected). Call after the workers stopped."""
    model = run.model
    expected = feed.Expected()
    with model.lock:
        for fact in model.sessions.values():
            status = model.session_status(fact)[0]
            expected.sessions[fact.sid] = (fact.profile_id, fact.kind, status)
            for device in fact.devices:
                expected.devices[device.did] = (fact.sid, status)
        expected.profiles = set(model.profiles)
        for record in model.profiles.values():
            for event in record.events:
                if event.kind in ("block", "unblock"):
                    expected.block_targets.add(record.pid)
                if not event.acked:
                    continue
                {"promote": expected.promoted, "merge": expected.merged, "erase": expected.erased,
                 "block": expected.blocked}.get(event.kind, set()).add(record.pid)
        for sid, (pid, kind, status) in run.extra_sessions.items():
            expected.sessions.setdefault(sid, (pid, kind, status))
            expected.profiles.add(pid)
        expected.devices.update(run.extra_devices)
        expected.erased |= run.extra_erased
        expected.api_key_rotations = {kind: tuple(counts) for kind, counts in run.api_rotations.items()}
        expected.signing_kids = {kid for _, _, kid in run.signing_rotations}
        expected.signing_unknown = model.ops.get("rotate_signing_key", {}).get("unknown", 0)
        expected.project_updates = run.project_updates
    return expected


def stored_rows(database: "Database", project: str) -> feed.Stored:
    """The project's sessions, profiles, aliases and devices, read directly (the server is down)."""
    now = int(time.time())
    stored = feed.Stored()
    stored.sessions = {sid: str(live) == "1" for sid, live in database.rows(
        f"SELECT id, CASE WHEN revoked_at IS NULL AND expires_at > {now} THEN 1 ELSE 0 END FROM sessions "
        f"WHERE project_id = '{project}'")}
    stored.profiles = {pid: (kind, str(blocked) == "1") for pid, kind, blocked in database.rows(
        f"SELECT id, kind, CASE WHEN blocked_at IS NULL THEN 0 ELSE 1 END FROM profiles "
        f"WHERE project_id = '{project}'")}
    stored.aliases = {row[0] for row in database.rows(
        f"SELECT alias_id FROM profile_aliases WHERE project_id = '{project}'")}
    stored.devices = {row[0] for row in database.rows(f"SELECT id FROM devices WHERE project_id = '{project}'")}
    return stored


def check_events(run: "Run", events: list[dict], problems: list[str], poller: "feed.PollerThread",
                 database: "Database") -> None:
    """After the final kill: the feed read from 0 (before it) against the acknowledgements, the database
    and what the reader polling during the run saw."""
    model = run.model
    expected = expected_events(run)
    stored = stored_rows(database, run.project["project_id"])
    problems = problems + feed.sequence_problems(events) + poller.poller.final_problems(events) \
        + feed.change_problems(events, expected, stored)
    with model.lock:
        model.checks += 6 + len(events) + len(expected.sessions) + len(expected.devices) + len(expected.profiles)
    for problem in problems:
        model.violation("[events] " + problem)
    run.events_summary = (f"{len(events)} in the feed ({feed.type_counts(events)}); reader polled "
                          f"{poller.poller.pages} pages, saw {len(poller.poller.seen)}, {poller.failures} failed "
                          "reads while down")


def check_webhooks(run: "Run", receiver: "webhooks.Receiver", events: list[dict], webhook_id: str,
                   wait: float) -> None:
    """Every event of a subscribed type after the endpoint's creation was delivered at least once (the
    server up, given `wait` seconds to finish: retries, leases of killed servers), signed, as in the feed."""
    created = next((e.get("sequence") for e in events if e.get("type") == "webhook.created"
                    and isinstance(e.get("data"), dict) and e["data"].get("webhook_id") == webhook_id), None)
    if created is None:
        run.model.violation(f"[webhooks] MISSING EVENT: webhook.created: no event for the endpoint {webhook_id}")
        created = 0
    expected = webhooks.expected_deliveries(events, created, webhooks.SUBSCRIBED)
    started = time.monotonic()
    while time.monotonic() - started < wait and not set(expected) <= receiver.delivered():
        time.sleep(0.5)
    waited = time.monotonic() - started
    deliveries = receiver.snapshot()
    problems = webhooks.delivery_problems(events, deliveries, created, webhooks.SUBSCRIBED)
    with run.model.lock:
        run.model.checks += 5 + len(expected)
    for problem in problems:
        run.model.violation("[webhooks] " + problem)
    run.webhooks_summary = (f"{len(expected)} events of subscribed types after sequence {created}; "
                            f"{webhooks.summary(deliveries, receiver.broken)}; waited {waited:.1f} s after the run")


# ─── Master key rotation between kills ───────────────────────────────────────────────────────────


def sealed_key_ids(database: "Database") -> list[tuple[str, str, str]]:
    """(column, project/kid, master key ID) of every sealed value in the database (`tsv1.<id>.…`)."""
    if database.kind == "sqlite":
        blob = "substr(CAST(private_key AS TEXT), 1, 22)"
    else:
        blob = "convert_from(substring(private_key from 1 for 22), 'UTF8')"
    rows = database.rows(f"SELECT 'identity_secrets.secret', project_id || '/' || kid, substr(secret, 1, 22) "
                         f"FROM identity_secrets UNION ALL SELECT 'session_keys.private_key', "
                         f"project_id || '/' || kid, {blob} FROM session_keys")
    return [(column, row, value[5:21] if value.startswith("tsv1.") else "plaintext:" + value[:4])
            for column, row, value in rows]


class MasterKeys:
    """Rotates the master key as docs/OPERATIONS.md says, one step at a seeded outage:

    stable (K) → [prepared: K, previous N] → swapped: N, previous K, and `tessera keys rewrap
    --master-key-file K --new-master-key-file N` runs against the database while the server serves
    (some rewraps are SIGKILLed after a seeded number of committed values, or at the next outage) →
    at the next outage: rerun the rewrap if it did not finish, else stable (N alone).
    Before every restart the database is read directly: every sealed value is under a key the server
    is about to be given (after a finished rewrap: under N only); then the server must start."""

    def __init__(self, run: "Run", database_url: str, database: "Database", work: str, rng: random.Random):
        self.run_, self.database_url, self.database, self.work, self.rng = run, database_url, database, work, rng
        self.phase = "stable"
        self.current = self.generate()  # (path, key ID)
        self.old = self.new = None
        self.want_rewrap = False
        self.thread: threading.Thread | None = None
        self.process: subprocess.Popen | None = None
        self.result = ""
        self.stats = {"rotations": 0, "rewraps started": 0, "killed midway": 0, "finished": 0, "keys dropped": 0}

    def generate(self) -> tuple[str, str]:
        path = os.path.join(self.work, f"master-{len(os.listdir(self.work))}-{uuid.uuid4().hex[:6]}.key")
        return path, harness.generate_master_key(self.run_.arguments.tessera, path, clean_environment(), "crash")

    def configure(self, server: "Server", current, previous) -> None:
        server.master_key_file = current[0]
        server.previous_master_key_files = [p[0] for p in previous]
        allowed = {current[1]} | {p[1] for p in previous}
        model = self.run_.model
        for column, row, key_id in sealed_key_ids(self.database):
            model.checks += 1
            if key_id not in allowed:
                model.violation(f"[master key] SEALED VALUE UNDER AN UNKNOWN KEY: {column} of {row} is under "
                                f"{key_id}; the server is given {sorted(allowed)} (phase {self.phase})")

    def before_restart(self, server: "Server", kills_left: int) -> None:
        """At an outage: ends a running rewrap (waits, or SIGKILLs it), then takes the next step."""
        self.finish_rewrap(kill=self.rng.random() < 0.5)
        if self.phase == "stable":
            if kills_left < 3 or self.rng.random() >= 0.3:
                return self.configure(server, self.current, [])
            self.old, self.new = self.current, self.generate()
            self.stats["rotations"] += 1
            self.result = ""
            if self.rng.random() < 0.4:
                self.phase = "prepared"  # step 2: every node holds the new key before any seals with it
                return self.configure(server, self.old, [self.new])
            self.phase = "swapped"
        elif self.phase == "prepared":
            self.phase = "swapped"
        elif self.result == "finished":
            self.phase, self.current, self.old, self.new = "stable", self.new, None, None
            self.stats["keys dropped"] += 1
            return self.configure(server, self.current, [])
        # swapped: the new key seals, the old still opens; rewrap (again) once the server serves.
        self.want_rewrap = True
        self.configure(server, self.new, [self.old])

    def after_restart(self) -> None:
        if not self.want_rewrap:
            return
        self.want_rewrap = False
        self.stats["rewraps started"] += 1
        kill_after = self.rng.choice([None, None, 1, 2, 3])
        command = [self.run_.arguments.tessera, "keys", "rewrap", "--database", self.database_url,
                   "--master-key-file", self.old[0], "--new-master-key-file", self.new[0], "--verbose"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=clean_environment())
        self.result = "running"

        def follow(process=self.process):
            committed, lines = 0, []
            for line in process.stderr:
                lines.append(line.strip())
                if line.startswith("rewrapped "):
                    committed += 1
                    if kill_after is not None and committed == kill_after:
                        process.send_signal(signal.SIGKILL)
            output = process.stdout.read()
            code = process.wait()
            if code == -signal.SIGKILL:
                self.result = "killed"
                self.stats["killed midway"] += 1
            elif code == 0 and "Every secret is now sealed" in output:
                self.result = "finished"
                self.stats["finished"] += 1
            else:
                self.result = "failed"
                self.run_.model.violation(f"[master key] REWRAP FAILED (exit {code}): {' | '.join(lines[-3:])} "
                                          f"{output.strip()[:200]}")

        self.thread = threading.Thread(target=follow, daemon=True)
        self.thread.start()

    def finish_rewrap(self, kill: bool) -> None:
        if self.thread is None:
            return
        if kill and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.thread.join(timeout=300)
        self.thread = None


# ─── The run ─────────────────────────────────────────────────────────────────────────────────────


class Run:
    def __init__(self, arguments):
        self.arguments = arguments
        self.seed = arguments.seed
        self.model = Model()
        self.gate = Gate()
        self.stopping = threading.Event()
        self.finished_workers = 0
        self.integrity = "n/a"
        self.events_summary = "not read"
        self.webhooks_summary = ""
        self.race_sessions: list[str] = []
        self.port = harness.free_port()
        self.subs = [f"user-{self.seed}-{uuid.uuid4().hex[:6]}-{i}" for i in range(arguments.users)]
        self.extra_projects: list[dict] = []  # more projects, only for their sealed values
        # API keys: the current one of each kind, every one ever acknowledged, and a rotation whose
        # reply was lost (its grace), which the controller settles after the next restart.
        self.keys: dict[str, KeyFact] = {}
        self.key_history: list[KeyFact] = []
        self.key_generation = {"publishable": 0, "secret": 0}
        self.key_pending: dict[str, int | None] = {"publishable": None, "secret": None}
        self.key_locks = {"publishable": threading.Lock(), "secret": threading.Lock()}
        # Session-JWT signing keys: each kid with the seq of the first reply that showed it, and each
        # acknowledged rotation as (wall time of its reply, kids seen before it was sent, its new kid).
        self.signing_lock = threading.Lock()
        self.kids_seen: dict[str, int] = {}
        self.signing_rotations: list[tuple[float, frozenset, str]] = []
        self.seal_rounds = 0
        # For the events feed: acknowledged changes made outside the workers' model (device races, seal
        # checks, settled rotations), and API key rotations per kind as [acknowledged, unknown].
        self.extra_sessions: dict[str, tuple[str, str, str]] = {}  # sid -> (profile, kind, dead/alive)
        self.extra_devices: dict[str, tuple[str, str]] = {}
        self.extra_erased: set[str] = set()
        self.api_rotations = {"publishable": [0, 0], "secret": [0, 0]}
        self.project_updates = 0

    def pk(self) -> str:
        with self.model.lock:
            return self.keys["publishable"].key

    def sk(self) -> str:
        with self.model.lock:
            return self.keys["secret"].key

    def observe_jwt(self, jwt: str | None, send: int, end: int, label: str) -> None:
        """A session JWT signed after a signing-key rotation was acknowledged never has a kid that
        rotation retired (any kid seen before the rotation was sent)."""
        if not jwt:
            return
        try:
            header, payload = harness.jwt_part(jwt, 0), harness.jwt_part(jwt, 1)
        except (ValueError, IndexError):
            self.model.violation(f"[{label}] unreadable session JWT {jwt[:40]}…")
            return
        kid, iat = header.get("kid"), payload.get("iat") or 0
        with self.model.lock:
            self.model.checks += 1
            retired = [(wall, newer) for wall, before, newer in self.signing_rotations if iat > wall + 1 and kid in before]
            self.kids_seen.setdefault(kid, end)
        if retired:
            self.model.violation(f"[{label}] ROTATED-OUT SIGNING KEY: a session JWT issued at {iat} (request seq {send}) "
                                 f"has kid {kid}, retired by the rotation to {retired[-1][1]} acknowledged at "
                                 f"{retired[-1][0]:.0f}")


def parse_between(text: str) -> tuple[float, float]:
    if "-" in text:
        low, high = (float(x) for x in text.split("-", 1))
    else:
        middle = float(text)
        low, high = middle / 2, middle * 1.5
    if not 0 < low <= high:
        raise SystemExit("crash: --seconds-between wants MIN-MAX with 0 < MIN <= MAX, or a mean")
    return low, high


def keep_record(run: "Run", work: str, events: list[dict] | None, cluster, server: "Server | None") -> list[str]:
    """What a failing run leaves for whoever reads it, in its work directory: the model's record
    (model.json: every fact, operation and violation; tokens and keys only as SHA-256 prefixes), the feed (feed.json: read at the end, else
    now from the server if it still answers), and PostgreSQL's server.log (copied before the throwaway
    cluster goes). The server's own log is already there (tessera.log). Returns the files written."""
    written = []
    model = run.model

    def redacted(name: str, value):
        # No credential in the record (tokens, JWTs, keys): a SHA-256 prefix still tells them apart.
        if isinstance(value, str) and name in ("token", "jwt", "key", "secret", "push_token"):
            return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]
        return plain(value)

    def plain(value):
        if dataclasses.is_dataclass(value):
            return {k: redacted(k, v) for k, v in vars(value).items()}
        if isinstance(value, dict):
            return {str(k): redacted(str(k), v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [plain(v) for v in value]
        if isinstance(value, float) and value == INF:
            return "inf"
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        return repr(value)

    try:
        with model.lock:
            record = {
                "seed": run.seed, "arguments": plain(vars(run.arguments)), "violations": list(model.violations),
                "ops": plain(model.ops), "kill_seqs": list(model.kill_seqs), "checks": model.checks,
                "sessions": plain(model.sessions), "profiles": plain(model.profiles),
                "installations": sorted(model.installations), "sub_profile": dict(model.sub_profile),
                "extra_sessions": plain(run.extra_sessions), "extra_devices": plain(run.extra_devices),
                "extra_erased": sorted(run.extra_erased), "race_sessions": list(run.race_sessions),
                "keys": plain(run.key_history), "signing_rotations": plain(run.signing_rotations),
                "events_summary": run.events_summary,
            }
        path = os.path.join(work, "model.json")
        with open(path, "w") as file:
            json.dump(record, file, indent=1)
        written.append(path)
    except Exception as error:  # the record is a help, never a second failure
        print(f"crash: could not write the model's record: {error!r}", file=sys.stderr)
    if events is None and server is not None and server.process and server.process.poll() is None:
        try:
            events, _ = feed.read_feed(lambda path, key: harness.call(run.port, "GET", path, key, timeout=30), run.sk)
        except Exception as error:
            print(f"crash: could not read the feed for the record: {error!r}", file=sys.stderr)
    if events is not None:
        path = os.path.join(work, "feed.json")
        with open(path, "w") as file:
            json.dump(events, file, indent=1)
        written.append(path)
    if cluster is not None and cluster.directory is not None:
        source = os.path.join(str(cluster.directory), "server.log")
        if os.path.exists(source):
            shutil.copy(source, os.path.join(work, "postgres-server.log"))
            written.append(os.path.join(work, "postgres-server.log"))
    written += [os.path.join(work, name) for name in ("tessera.log",) if os.path.exists(os.path.join(work, name))]
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True, help="the tessera binary")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres-url", help="an existing PostgreSQL (a fresh schema is used); "
                                               "default: a throwaway cluster through scripts/postgres")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seconds-between", default="0.5-2.5", help="load between kills: MIN-MAX seconds")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--users", type=int, default=160, help="distinct signed-in users shared by the workers")
    parser.add_argument("--sample", type=int, default=40, help="older facts re-checked after each restart")
    parser.add_argument("--device-races", type=int, default=100,
                        help="device registrations raced against the end of their session, before the kills")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and logs")
    parser.add_argument("--webhooks", action="store_true",
                        help="run a webhook receiver, subscribe it at the start (the server runs with "
                             "--allow-insecure-webhooks) and require every event of a subscribed type to be "
                             "delivered at least once after the run (needs a server with webhook delivery)")
    parser.add_argument("--webhook-wait", type=float, default=120,
                        help="seconds to wait for the last deliveries after the run (a delivery leased by a "
                             "killed server is retried once its 60 s lease ends)")
    parser.add_argument("--self-test", action="store_true",
                        help="undo some acknowledged writes in the database during one outage and expect the "
                             "checks to report each (exit 0 when they all do)")
    arguments = parser.parse_args()
    if arguments.seed is None:
        arguments.seed = random.SystemRandom().randrange(1, 1 << 31)
    low, high = parse_between(arguments.seconds_between)
    run = Run(arguments)
    model = run.model
    wall = time.monotonic()
    work = tempfile.mkdtemp(prefix=f"tessera-crash-{arguments.database}-")
    cluster = None
    print(f"crash: {arguments.database}, seed {arguments.seed}, {arguments.kills} kills, {low:g}-{high:g} s apart, "
          f"{arguments.workers} workers; work dir {work}", flush=True)
    server = None
    receiver = None
    injected: list[str] = []
    events: list[dict] | None = None
    completed = False
    kept: list[str] = []
    try:
        if arguments.database == "sqlite":
            sqlite_path = os.path.join(work, "tessera.sqlite")
            database_url = f"sqlite:{sqlite_path}"
            database = Database("sqlite", sqlite_path=sqlite_path)
        else:
            base_url = arguments.postgres_url
            if not base_url:
                # Not inside `work`: the cluster runs as the postgres user when we are root.
                cluster = harness.PostgresCluster(f"/tmp/tessera-crash-postgres-{os.getpid()}", "crash")
                base_url = cluster.start()
            schema = "crash_" + uuid.uuid4().hex[:12]
            database_url = harness.with_query(base_url, f"schema={schema}")
            database = Database("postgres", postgres_url=base_url, schema=schema)
        master_keys = MasterKeys(run, database_url, database, work, random.Random(f"{arguments.seed}-master-keys"))
        master_key_file = master_keys.current[0]
        for name in ("Crash", "Crash sealed 1", "Crash sealed 2"):
            created = harness.create_project(arguments.tessera, database_url, name,
                                             clean_environment(TESSERA_MASTER_KEY_FILE=master_key_file), what="crash")
            if name == "Crash":
                run.project = created.data
            else:  # more sealed values, for the rewraps; checked after every restart
                run.extra_projects.append(created.data)
        for kind in ("publishable", "secret"):
            run.keys[kind] = KeyFact(kind, run.project[f"{kind}_key"], time.time())
            run.key_history.append(run.keys[kind])
        server = Server(arguments.tessera, database_url, run.port, os.path.join(work, "tessera.log"))
        server.master_key_file = master_key_file
        if arguments.webhooks:
            usage = subprocess.run([arguments.tessera, "serve", "--help"], capture_output=True, text=True,
                                   env=clean_environment(), timeout=60)
            if "--allow-insecure-webhooks" not in usage.stdout + usage.stderr:
                raise SystemExit("crash: --webhooks needs a server with webhook delivery (tessera serve "
                                 "--allow-insecure-webhooks); this one has none")
            receiver = webhooks.Receiver(arguments.seed)
            receiver.start()
            server.options.append("--allow-insecure-webhooks")
        server.start()
        signing = harness.Client(run.port).call("GET", "/v1/admin/signing-keys", run.sk())
        current_kid = next((k["kid"] for k in signing.body.get("signing_keys", []) if k.get("status") == "current"), None)
        if signing.status != 200 or not current_kid:
            raise SystemExit(f"crash: GET /v1/admin/signing-keys answered {signing.status} {signing.code}")
        run.kids_seen[current_kid] = 0
        lifted = harness.lift_rate_limits(run.port, run.project["secret_key"])
        if lifted.status != 200:
            raise SystemExit(f"crash: cannot lift the project's rate limits: {lifted.status} {lifted.code}")
        run.project_updates += 1
        if arguments.webhooks:
            created = harness.Client(run.port).call("POST", "/v1/admin/webhooks", run.sk(),
                                                    {"url": receiver.url, "types": webhooks.SUBSCRIBED})
            if created.status != 201 or not created.body.get("secret"):
                raise SystemExit(f"crash: --webhooks: POST /v1/admin/webhooks answered {created.status} "
                                 f"{created.code} (does this server deliver webhooks?)")
            receiver.secret = created.body["secret"]
            webhook_id = created.body.get("webhook", {}).get("id")
        # A reader of the feed during the whole run, across every kill (check 4 of the events).
        poller = feed.PollerThread(harness.Client(run.port, timeout=10), run.sk, model.violation)
        poller.start()
        device_races(run, arguments.device_races, random.Random(f"{arguments.seed}-races"))

        workers = [Worker(i, run) for i in range(arguments.workers)]
        for worker in workers:
            worker.start()
        alive = lambda: arguments.workers - run.finished_workers  # noqa: E731
        checker = Checker(run)
        kill_rng = random.Random(f"{arguments.seed}-kills")
        check_rng = random.Random(f"{arguments.seed}-checks")
        last_check = 0
        restarts: list[float] = []
        kills = startup_kills = 0
        for index in range(arguments.kills):
            time.sleep(kill_rng.uniform(low, high))
            if run.finished_workers:
                raise SystemExit("crash: a worker stopped (harness error above)")
            server.kill()
            kills += 1
            with model.lock:
                model.kill_seqs.append(next(model._seq))
            run.gate.pause()
            run.gate.wait_parked(alive)
            tampered = arguments.self_test and index == max(1, arguments.kills // 2)
            if tampered:
                injected = tamper(run, database)
            master_keys.before_restart(server, arguments.kills - index - 1)
            if kill_rng.random() < 0.15:
                # Sometimes kill it again while it starts up (opening the database, migrations).
                server.launch()
                time.sleep(kill_rng.uniform(0.0, 0.3))
                server.kill()
                startup_kills += 1
            restarts.append(server.start())
            settle_rotations(run)
            master_keys.after_restart()
            marker = model.seq()
            performed = checker.run_checks(f"after kill {index + 1}", None if tampered else last_check,
                                           arguments.sample, check_rng)
            last_check = marker
            with model.lock:
                acked = sum(v["ack"] for v in model.ops.values())
                unknown = sum(v["unknown"] for v in model.ops.values())
            print(f"kill {index + 1:3d}: restarted in {restarts[-1]:.2f} s; {acked} acknowledged, {unknown} unknown "
                  f"so far; {performed} checks; {len(model.violations)} violations", flush=True)
            run.gate.resume()
        time.sleep(kill_rng.uniform(low, high))
        run.stopping.set()
        run.gate.resume()
        for worker in workers:
            worker.join(timeout=60)
        if any(worker.error for worker in workers):
            raise SystemExit("crash: a worker failed (harness error above)")
        print(f"final: load stopped at {time.monotonic() - wall:.1f} s", flush=True)
        master_keys.finish_rewrap(kill=False)
        settle_rotations(run)
        performed = checker.run_checks("final", None, 0, check_rng)
        print(f"final: {performed} checks of every acknowledged fact (done at {time.monotonic() - wall:.1f} s)",
              flush=True)
        caught = time.monotonic()
        poller.stopping.set()
        poller.join(timeout=30)
        poller.catch_up()
        started = time.monotonic()
        events, feed_problems = feed.read_feed(lambda path, key: checker.call("GET", path, key), run.sk)
        print(f"final: read {len(events)} events from 0 in {time.monotonic() - started:.1f} s (reader caught up in "
              f"{started - caught:.1f} s)", flush=True)
        if arguments.webhooks:
            check_webhooks(run, receiver, events, webhook_id, arguments.webhook_wait)
        server.kill()
        check_database(run, database)
        check_events(run, events, feed_problems, poller, database)
        master_keys.configure(server, *((master_keys.current, []) if master_keys.phase == "stable"
                                        else (master_keys.new, [master_keys.old])))
        completed = True
    finally:
        if not completed or model.violations or arguments.keep:
            kept = keep_record(run, work, events, cluster, server)
        if server:
            server.kill()
        if receiver is not None:
            receiver.stop()
        if cluster is not None:
            cluster.stop()
        if not completed:
            print(f"crash: FAILED before the end (seed {arguments.seed}); work dir kept: {work}\n  "
                  + "\n  ".join(kept), file=sys.stderr, flush=True)

    seconds = time.monotonic() - wall
    with model.lock:
        states = [model.session_status(f)[0] for f in model.sessions.values()]
    print(f"\n━━ crash summary ({arguments.database}, seed {arguments.seed})")
    print(f"kills survived:          {kills} under load + {startup_kills} during start-up + 1 final (SIGKILL; "
          f"restart median {sorted(restarts)[len(restarts) // 2] if restarts else 0:.2f} s)")
    total = {key: sum(v[key] for v in model.ops.values()) for key in ("ack", "unknown", "rejected", "refused")}
    print(f"operations acknowledged: {total['ack']} (unknown {total['unknown']}, rejected {total['rejected']}, "
          f"refused while down {total['refused']})")
    for kind in sorted(model.ops):
        counts = model.ops[kind]
        print(f"  {kind:18s} {counts['ack']:6d} acknowledged {counts['unknown']:5d} unknown "
              f"{counts['rejected']:5d} rejected" + (f" ({counts['5xx']} answered 5xx)" if counts["5xx"] else ""))
    print(f"sessions tracked:        {len(states)} ({states.count('alive')} must live, {states.count('dead')} must be "
          f"dead, {states.count('unknown')} unknown)")
    print(f"profiles tracked:        {len(model.profiles)}")
    print(f"checks performed:        {model.checks} (lost replies checked all-or-nothing: "
          f"{model.resolved['identify']} identifies, {model.resolved['erase']} erasures)")
    with model.lock:
        blocked = sum(model.block_state(p) == "blocked" for p in model.profiles.values())
    print(f"rotations:               {len(run.key_history) - 2} API keys, {len(run.signing_rotations)} signing keys "
          f"acknowledged; {blocked} profiles must be blocked")
    print("master keys:             " + ", ".join(f"{v} {k}" for k, v in master_keys.stats.items()))
    print(f"sqlite integrity_check:  {run.integrity}")
    print(f"events:                  {run.events_summary}")
    if run.webhooks_summary:
        print(f"webhooks:                {run.webhooks_summary}")
    print(f"violations:              {len(model.violations)}")
    for text in model.violations[:30]:
        print("  " + text)
    print(f"wall time:               {seconds:.1f} s")
    if arguments.self_test:
        missed = [marker for marker in injected if not any(marker in text for text in model.violations)]
        if missed or len(injected) < 5:
            print(f"crash self-test: FAILED: injected {injected}, not reported: {missed}; work dir kept: {work}")
            return 1
        print(f"crash self-test: passed: all {len(injected)} injected lost writes were reported")
        if arguments.keep:
            print(f"crash: work dir kept (--keep): {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    if model.violations:
        print(f"crash: FAILED (reproduce the shape with --seed {arguments.seed}); work dir kept: {work}")
        for path in kept:
            print(f"  {path}")
        return 1
    if arguments.keep:
        print(f"crash: work dir kept (--keep): {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("crash: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
