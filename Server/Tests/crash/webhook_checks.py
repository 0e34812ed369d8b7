"""The crash harness's webhook checks (`run.py --webhooks`, and the rolling-upgrade and race harnesses).

`Receiver` is the shared receiver (Server/Tests/harness/webhook_receiver.py) answering 500 to the
first attempt of a seeded few events, so that the server retries them; every POST is recorded with
whether its Standard Webhooks signature verifies. `delivery_problems` is the pure check after the run
(unit-tested in test_model.py).

Violation markers: UNDELIVERED EVENT, BAD WEBHOOK SIGNATURE, WEBHOOK OF NO EVENT, WEBHOOK BODY MISMATCH,
UNSUBSCRIBED EVENT DELIVERED.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
from webhook_receiver import Delivery, WebhookReceiver, fail_first_attempts  # noqa: E402

# What the crash harness subscribes to: every type about profiles, sessions and devices (key
# rotations, project and webhook events are not: their absence from the deliveries is checked too).
SUBSCRIBED = ["profile.created", "profile.promoted", "profile.merged", "profile.erased", "profile.blocked",
              "profile.unblocked", "session.created", "session.ended", "device.registered", "device.removed"]


class Receiver(WebhookReceiver):
    """The shared receiver, answering 500 to the first attempt of a `fail_first` fraction of the events
    (chosen by `seed`)."""

    def __init__(self, seed: int, fail_first: float = 0.03):
        self.seed, self.fail_first = seed, fail_first
        super().__init__(answer=lambda delivery: fail_first_attempts(self.seed, self.fail_first)(delivery))


def expected_deliveries(events: list[dict], after: int, types: list[str]) -> dict[str, dict]:
    """The events the endpoint must receive: of a subscribed type, after `after` (its creation)."""
    return {e["id"]: e for e in events if e.get("type") in types and isinstance(e.get("sequence"), int)
            and e["sequence"] > after}


def delivery_problems(events: list[dict], deliveries: list[Delivery], after: int, types: list[str]) -> list[str]:
    problems = []
    feed = {e.get("id"): e for e in events}
    accepted = {d.webhook_id for d in deliveries if 200 <= d.status < 300}
    missing = [(eid, e.get("sequence"), e.get("type")) for eid, e in expected_deliveries(events, after, types).items()
               if eid not in accepted]
    if missing:
        problems.append(f"UNDELIVERED EVENT: {len(missing)} events of a subscribed type after sequence {after} were "
                        f"never delivered (2xx), e.g. {missing[:3]}")
    unsigned = [d.webhook_id for d in deliveries if not d.verified]
    if unsigned:
        problems.append(f"BAD WEBHOOK SIGNATURE: {len(unsigned)} deliveries do not verify, e.g. {unsigned[:3]}")
    unknown = sorted({d.webhook_id for d in deliveries if d.webhook_id not in feed})
    if unknown:
        problems.append(f"WEBHOOK OF NO EVENT: {len(unknown)} delivered IDs are no event of the feed, e.g. {unknown[:3]}")
    mismatched = sorted({d.webhook_id for d in deliveries if d.webhook_id in feed and (
        d.body.get("id") != d.webhook_id or d.body.get("sequence") != feed[d.webhook_id].get("sequence")
        or d.body.get("type") != feed[d.webhook_id].get("type"))})
    if mismatched:
        problems.append(f"WEBHOOK BODY MISMATCH: {len(mismatched)} deliveries whose body is not the feed's event "
                        f"(id, sequence, type), e.g. {mismatched[:3]}")
    unsubscribed = sorted({d.body.get("type") for d in deliveries if d.body.get("type") not in types})
    if unsubscribed:
        problems.append(f"UNSUBSCRIBED EVENT DELIVERED: types {unsubscribed}")
    return problems


def summary(deliveries: list[Delivery], broken: int = 0) -> str:
    accepted = [d for d in deliveries if 200 <= d.status < 300]
    distinct = {d.webhook_id for d in accepted}
    retried = sum(1 for d in deliveries if d.status >= 500)
    return (f"{len(deliveries)} POSTs received, {len(distinct)} events delivered, {len(accepted) - len(distinct)} "
            f"delivered more than once, {retried} first attempts answered 500 (retried), {broken} connections "
            "broken mid-request (kills)")
