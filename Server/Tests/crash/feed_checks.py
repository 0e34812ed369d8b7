"""The crash harness's checks of the events feed and of the webhook deliveries against the model."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import feed  # noqa: E402
import webhook_checks as webhooks  # noqa: E402

if TYPE_CHECKING:
    from database import Database
    from run import Run

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
