"""The events feed after a crash run: what the harness acknowledged, against what the feed says.

Pure functions over plain data (the feed as read, what the harness knows, what the database holds), so
that `test_model.py` can prove each check fails when it should; `run.py` gathers the data.

Violation markers (the self-test and the unit tests look for them):
- FEED GAP / DUPLICATE SEQUENCE / DUPLICATE EVENT ID / FEED OUT OF ORDER: the feed read from 0;
- MISSING EVENT: <type>: an acknowledged change without its event;
- DUPLICATE EVENT: <type>: one change with more than one event;
- PHANTOM EVENT: <type>: an event for a change that was not acknowledged and is not in the database;
- FEED WENT BACKWARDS / FEED REPEATED / FEED SKIPPED / EVENT VANISHED: a reader polling the feed
  during the run (with `after` = the last sequence it saw) against the final read.
"""
from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

PAGE = 200  # the feed's largest page


@dataclass
class Expected:
    """What the harness knows from acknowledged replies, by ID.

    Session and device statuses are the model's: dead (an acknowledged change ended it), alive (nothing
    could have), unknown (something in flight or unacknowledged may have)."""

    sessions: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # sid -> (profile_id, kind, status)
    devices: dict[str, tuple[str, str]] = field(default_factory=dict)  # did -> (session_id, session status)
    profiles: set[str] = field(default_factory=set)  # every profile an acknowledged reply showed
    promoted: set[str] = field(default_factory=set)  # acknowledged promotions (identify from the anonymous caller)
    merged: set[str] = field(default_factory=set)  # anonymous profiles an acknowledged identify merged away
    erased: set[str] = field(default_factory=set)  # acknowledged erasures
    blocked: set[str] = field(default_factory=set)  # acknowledged blocks
    block_targets: set[str] = field(default_factory=set)  # every block or unblock sent, not rejected
    api_key_rotations: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (acked, unknown)
    signing_kids: set[str] = field(default_factory=set)  # kids of acknowledged signing-key rotations
    signing_unknown: int = 0
    project_updates: int = 0  # acknowledged PATCH /v1/admin/project that changed something


@dataclass
class Stored:
    """The project's rows, read directly after the final kill."""

    sessions: dict[str, bool] = field(default_factory=dict)  # sid -> live (not revoked, not expired)
    profiles: dict[str, tuple[str, bool]] = field(default_factory=dict)  # pid -> (kind, blocked)
    aliases: set[str] = field(default_factory=set)
    devices: set[str] = field(default_factory=set)


# ─── Reading the feed ────────────────────────────────────────────────────────────────────────────


def page_problems(after: int, body: dict) -> list[str]:
    """A page of `GET /v1/admin/events?after=`: sequences strictly increasing, all after `after`, and
    `next_after` the last one (or `after` when the page is empty)."""
    problems = []
    events = body.get("events")
    if not isinstance(events, list):
        return [f"FEED OUT OF ORDER: a page after {after} has no events array: {str(body)[:200]}"]
    previous = after
    for event in events:
        sequence = event.get("sequence")
        if not isinstance(sequence, int) or sequence <= previous:
            problems.append(f"FEED WENT BACKWARDS: after={after} answered sequence {sequence} after {previous}")
        if isinstance(sequence, int):
            previous = max(previous, sequence)
    expected = events[-1].get("sequence") if events else after
    if body.get("next_after") != expected:
        problems.append(f"FEED WENT BACKWARDS: after={after} answered next_after {body.get('next_after')}, "
                        f"expected {expected}")
    return problems


def read_feed(call, secret_key) -> tuple[list[dict], list[str]]:
    """The whole feed from 0, `PAGE` events at a time, following `next_after`. `call(path, key)` answers a
    Reply; `secret_key()` the current key. Returns (events, problems)."""
    events, problems, after = [], [], 0
    while True:
        for _ in range(20):
            reply = call(f"/v1/admin/events?after={after}&limit={PAGE}", secret_key())
            if reply.status == 200:
                break
            time.sleep(0.25)
        else:
            raise SystemExit(f"crash: GET /v1/admin/events?after={after} answered {reply.status} {reply.code}")
        problems += page_problems(after, reply.body)
        page = reply.body.get("events", [])
        events += page
        next_after = reply.body.get("next_after")
        if not page or not isinstance(next_after, int) or next_after <= after:
            return events, problems
        after = next_after


def sequence_problems(events: list[dict]) -> list[str]:
    """The feed read from 0: sequences 1, 2, 3… with no gap and no repeat, and no event ID twice."""
    problems = []
    sequences = [e.get("sequence") for e in events]
    repeated = [s for s, n in Counter(sequences).items() if n > 1]
    if repeated:
        problems.append(f"DUPLICATE SEQUENCE: {len(repeated)} sequences answered more than once, e.g. {repeated[:5]}")
    ids = Counter(e.get("id") for e in events)
    twice = [i for i, n in ids.items() if n > 1]
    if twice:
        problems.append(f"DUPLICATE EVENT ID: {len(twice)} event IDs answered more than once, e.g. {twice[:5]}")
    if any(not isinstance(s, int) for s in sequences):
        problems.append("FEED OUT OF ORDER: an event without an integer sequence")
        return problems
    if sequences != sorted(sequences):
        problems.append("FEED OUT OF ORDER: sequences not ascending in the feed read from 0")
    present = set(sequences)
    if present:
        missing = [s for s in range(1, max(present) + 1) if s not in present]
        if missing:
            problems.append(f"FEED GAP: {len(missing)} sequences missing in 1..{max(present)}, e.g. {missing[:10]}")
    return problems


# ─── A reader during the run ─────────────────────────────────────────────────────────────────────


class Poller:
    """Reads the feed with `after` = the last sequence it saw, as an app backend would, across the kills.

    `observe` is the pure part: each page must only go forward; `final_problems` compares what it saw
    with the feed read from 0 at the end (nothing it saw vanished or moved, nothing below its mark
    appeared later)."""

    def __init__(self):
        self.after = 0
        self.seen: dict[str, int] = {}  # event ID -> sequence
        self.pages = 0
        self.problems: list[str] = []

    def observe(self, after: int, body: dict) -> list[str]:
        problems = page_problems(after, body)
        for event in body.get("events", []):
            eid, sequence = event.get("id"), event.get("sequence")
            if eid in self.seen:
                problems.append(f"FEED REPEATED: event {eid} (sequence {self.seen[eid]}) answered again as "
                                f"{sequence} after={after}")
            else:
                self.seen[eid] = sequence
        next_after = body.get("next_after")
        if isinstance(next_after, int) and next_after > self.after:
            self.after = next_after
        self.pages += 1
        self.problems += problems
        return problems

    def final_problems(self, events: list[dict]) -> list[str]:
        problems = []
        final = {e.get("id"): e.get("sequence") for e in events}
        vanished = [(eid, s) for eid, s in self.seen.items() if final.get(eid) != s]
        if vanished:
            problems.append(f"EVENT VANISHED: {len(vanished)} events read during the run are not in the final feed "
                            f"at their sequence, e.g. {[(eid, s, final.get(eid)) for eid, s in vanished[:3]]}")
        skipped = [(e.get("id"), e.get("sequence")) for e in events if isinstance(e.get("sequence"), int)
                   and e["sequence"] <= self.after and e.get("id") not in self.seen]
        if skipped:
            problems.append(f"FEED SKIPPED: {len(skipped)} events at or below sequence {self.after} (the reader's "
                            f"mark) were never answered to it, e.g. {skipped[:3]}")
        return problems


class PollerThread(threading.Thread):
    """Runs a Poller against the server during the load; failures (server down) are retried."""

    def __init__(self, client, secret_key, report, interval: float = 0.05):
        super().__init__(name="feed-poller", daemon=True)
        self.client, self.secret_key, self.report, self.interval = client, secret_key, report, interval
        self.poller = Poller()
        self.stopping = threading.Event()
        self.failures = 0

    def poll_once(self) -> bool:
        after = self.poller.after
        reply = self.client.call("GET", f"/v1/admin/events?after={after}&limit={PAGE}", self.secret_key())
        if reply.status != 200:
            self.failures += 1
            self.client.reset()
            return False
        for problem in self.poller.observe(after, reply.body):
            self.report("[feed reader] " + problem)
        return len(reply.body.get("events", [])) == PAGE

    def run(self) -> None:
        while not self.stopping.is_set():
            if not self.poll_once():
                self.stopping.wait(self.interval)

    def catch_up(self) -> None:
        """After stop: reads until the feed's end (the server must be up)."""
        for _ in range(2000):
            failures = self.failures
            full = self.poll_once()
            if self.failures > failures:
                time.sleep(0.2)
            elif not full:
                return


# ─── Every change has its event, every event its change ──────────────────────────────────────────


def merge_map(events: list[dict]) -> dict[str, str]:
    """from_profile_id -> profile_id of every profile.merged in the feed."""
    return {e["data"].get("from_profile_id"): e["data"].get("profile_id") for e in events
            if e.get("type") == "profile.merged" and isinstance(e.get("data"), dict)}


def chain(pid: str, merges: dict[str, str]) -> list[str]:
    """The profile and every profile it was merged into, in order."""
    out = [pid]
    while out[-1] in merges and merges[out[-1]] not in out:
        out.append(merges[out[-1]])
    return out


def change_problems(events: list[dict], expected: Expected, stored: Stored) -> list[str]:
    """Checks 1 and 3: every acknowledged change has exactly one event, and every event describes a
    change that was acknowledged or is in the database (or that a later event of the feed undid)."""
    problems: list[str] = []
    by_type: dict[str, list[dict]] = defaultdict(list)
    for event in events:
        if not isinstance(event.get("data"), dict):
            problems.append(f"FEED OUT OF ORDER: event {event.get('id')} has no data object")
            continue
        by_type[event.get("type")].append(event)

    def index(kind: str, member: str) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = defaultdict(list)
        for event in by_type.get(kind, []):
            out[event["data"].get(member)].append(event)
        return out

    def report(marker: str, kind: str, text: str, items: list) -> None:
        if items:
            problems.append(f"{marker}: {kind}: {len(items)} {text}, e.g. {items[:3]}")

    created = index("session.created", "session_id")
    ended = index("session.ended", "session_id")
    profile_created = index("profile.created", "profile_id")
    erased = index("profile.erased", "profile_id")
    merged_from = index("profile.merged", "from_profile_id")
    promoted = index("profile.promoted", "profile_id")
    registered = index("device.registered", "device_id")
    removed = index("device.removed", "device_id")
    merges = merge_map(events)

    # Every change happens once: at most one event per subject, whoever caused it.
    for kind, found in (("session.created", created), ("session.ended", ended),
                        ("profile.created", profile_created), ("profile.erased", erased),
                        ("profile.merged", merged_from), ("profile.promoted", promoted),
                        ("device.registered", registered), ("device.removed", removed)):
        report("DUPLICATE EVENT", kind, "subjects with more than one event",
               [(subject, [e.get("sequence") for e in found[subject]]) for subject in found if len(found[subject]) > 1])

    # Sessions.
    report("MISSING EVENT", "session.created", "acknowledged sessions without their event",
           [sid for sid in expected.sessions if not created.get(sid)])
    report("DUPLICATE EVENT", "session.created", "acknowledged sessions whose event names another profile",
           [(sid, pid, [e["data"].get("profile_id") for e in created[sid]]) for sid, (pid, _, _) in
            expected.sessions.items() if any(e["data"].get("profile_id") != pid for e in created.get(sid, []))])
    report("PHANTOM EVENT", "session.created", "sessions never acknowledged, not in the database and never ended",
           [sid for sid in created if sid not in expected.sessions and sid not in stored.sessions
            and not ended.get(sid)])
    report("MISSING EVENT", "session.ended", "sessions an acknowledged change ended without their event",
           [sid for sid, (_, _, status) in expected.sessions.items() if status == "dead" and not ended.get(sid)])
    report("PHANTOM EVENT", "session.ended", "events ending a session nothing could have ended",
           [sid for sid, (_, _, status) in expected.sessions.items() if status == "alive" and ended.get(sid)])
    report("PHANTOM EVENT", "session.ended", "events ending a session live in the database",
           [sid for sid in ended if stored.sessions.get(sid) is True])
    order = [(sid, created[sid][0].get("sequence"), ended[sid][0].get("sequence")) for sid in ended
             if created.get(sid) and ended[sid][0].get("sequence", 0) < created[sid][0].get("sequence", 0)]
    report("FEED OUT OF ORDER", "session.ended", "sessions ended before they were created", order)

    # Profiles.
    report("MISSING EVENT", "profile.created", "acknowledged profiles without their event",
           [pid for pid in expected.profiles if not profile_created.get(pid)])
    report("PHANTOM EVENT", "profile.created", "profiles never acknowledged and not in the database",
           [pid for pid in profile_created if pid not in expected.profiles and pid not in stored.profiles
            and pid not in stored.aliases and not erased.get(pid) and not merged_from.get(pid)])
    report("MISSING EVENT", "profile.promoted", "acknowledged promotions without their event",
           [pid for pid in expected.promoted if not promoted.get(pid)])
    report("PHANTOM EVENT", "profile.promoted", "promotions of a profile the database holds as anonymous",
           [pid for pid in promoted if stored.profiles.get(pid, ("identified",))[0] != "identified"])
    report("MISSING EVENT", "profile.merged", "acknowledged merges without their event",
           [pid for pid in expected.merged if not merged_from.get(pid)])
    report("PHANTOM EVENT", "profile.merged", "merges of a profile still in the database",
           [pid for pid in merged_from if pid in stored.profiles])
    # An erasure acts on the profile the ID resolves to (a merge in flight may have made it an alias).
    report("MISSING EVENT", "profile.erased", "acknowledged erasures without their event",
           [pid for pid in expected.erased if not any(erased.get(p) for p in chain(pid, merges))])
    report("PHANTOM EVENT", "profile.erased", "erasures of a profile still in the database",
           [pid for pid in erased if pid in stored.profiles])

    # Devices.
    report("MISSING EVENT", "device.registered", "acknowledged devices without their event",
           [did for did in expected.devices if not registered.get(did)])
    report("PHANTOM EVENT", "device.registered", "devices never acknowledged, not in the database and never removed",
           [did for did in registered if did not in expected.devices and did not in stored.devices
            and not removed.get(did)])
    report("MISSING EVENT", "device.removed", "devices of sessions an acknowledged change ended without their event",
           [did for did, (_, status) in expected.devices.items() if status == "dead" and not removed.get(did)])
    report("PHANTOM EVENT", "device.removed", "removals of a device whose session nothing could have ended",
           [did for did, (_, status) in expected.devices.items() if status == "alive" and removed.get(did)])
    report("PHANTOM EVENT", "device.removed", "removals of a device still in the database",
           [did for did in removed if did in stored.devices])

    # Blocks: per profile, blocked and unblocked alternate (only a change is an event), the last one
    # is the profile's state, and each names a profile some block or unblock was sent to.
    flips: dict[str, list[str]] = defaultdict(list)
    for event in events:
        if event.get("type") in ("profile.blocked", "profile.unblocked") and isinstance(event.get("data"), dict):
            flips[event["data"].get("profile_id")].append(event["type"])
    targets = {p for t in expected.block_targets for p in chain(t, merges)}
    for pid, kinds in flips.items():
        if any(a == b for a, b in zip(kinds, kinds[1:])) or kinds[0] != "profile.blocked":
            problems.append(f"DUPLICATE EVENT: profile.blocked: profile {pid} has blocks and unblocks that do not "
                            f"alternate: {kinds}")
        if pid not in targets:
            problems.append(f"PHANTOM EVENT: {kinds[0]}: profile {pid}, to which no block or unblock was sent")
    for pid, (_, is_blocked) in stored.profiles.items():
        last = (flips.get(pid) or ["profile.unblocked"])[-1]
        if is_blocked != (last == "profile.blocked"):
            kind = "profile.blocked" if is_blocked else "profile.unblocked"
            problems.append(f"MISSING EVENT: {kind}: profile {pid} is {'' if is_blocked else 'not '}blocked in the "
                            f"database, its last block event is {last}")
    report("MISSING EVENT", "profile.blocked", "acknowledged blocks without any profile.blocked",
           [pid for pid in expected.blocked
            if not any("profile.blocked" in flips.get(p, []) for p in chain(pid, merges))])

    # Keys: counts, as a rotation's event names no key.
    for kind, (acked, unknown) in expected.api_key_rotations.items():
        count = sum(1 for e in by_type.get("api_key.rotated", []) if e["data"].get("kind") == kind)
        if count < acked:
            problems.append(f"MISSING EVENT: api_key.rotated: {count} for the {kind} key, {acked} acknowledged")
        if count > acked + unknown:
            problems.append(f"PHANTOM EVENT: api_key.rotated: {count} for the {kind} key, {acked} acknowledged "
                            f"and {unknown} unknown")
    kids = Counter(e["data"].get("kid") for e in by_type.get("signing_key.rotated", []))
    report("MISSING EVENT", "signing_key.rotated", "acknowledged rotations without their event",
           sorted(k for k in expected.signing_kids if not kids.get(k)))
    report("DUPLICATE EVENT", "signing_key.rotated", "kids with more than one event",
           sorted(k for k, n in kids.items() if n > 1))
    if sum(kids.values()) > len(expected.signing_kids) + expected.signing_unknown:
        problems.append(f"PHANTOM EVENT: signing_key.rotated: {sum(kids.values())} events, "
                        f"{len(expected.signing_kids)} acknowledged and {expected.signing_unknown} unknown")
    updates = len(by_type.get("project.updated", []))
    if updates != expected.project_updates:
        problems.append(f"{'MISSING' if updates < expected.project_updates else 'PHANTOM'} EVENT: project.updated: "
                        f"{updates} events, {expected.project_updates} acknowledged")
    return problems


def type_counts(events: list[dict]) -> str:
    return ", ".join(f"{t} {n}" for t, n in sorted(Counter(e.get("type") for e in events).items()))
