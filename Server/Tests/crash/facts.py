"""The crash harness's model: every acknowledged fact, and every operation that might have changed one.

Pure (no server): unit-tested in test_model.py. Used by run.py and the modules beside it.
"""

from __future__ import annotations

import itertools
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
from tessera_harness import Reply, epoch  # noqa: E402

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
