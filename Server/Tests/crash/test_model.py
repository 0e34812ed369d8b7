"""Unit tests of the crash harness's model (no server): python3 -m unittest discover -s Server/Tests/crash"""

import base64
import hashlib
import hmac
import http.client
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))

import feed  # noqa: E402
import webhook_checks  # noqa: E402
import facts  # noqa: E402
from tessera_harness import Reply  # noqa: E402


class EarlySessionEventTests(unittest.TestCase):
    def test_an_end_recorded_before_the_session_is_kept(self) -> None:
        # Worker B lists the profile's sessions, sees one that worker A's identify just created, and
        # deletes it; A reads its identify reply only afterwards (CI seed 120523439).
        model = facts.Model()
        send, end = model.seq(), model.seq()
        model.session_event("ses_new", facts.Event("revoke", send, end, True, "DELETE by ses_sibling"))
        envelope = {"session": {"id": "ses_new", "expires_at": "2030-01-01T00:00:00Z"},
                    "profile": {"id": "usr_x", "kind": "identified", "external_id": "sub"},
                    "session_token": "st_x", "capabilities": {"kind": "verified"}}
        fact = model.add_session(envelope, model.seq(), model.seq(), "identify")
        self.assertEqual([(event.kind, event.acked) for event in fact.events], [("revoke", True)])
        self.assertEqual(model.early_session_events, {})


class BlockStateTests(unittest.TestCase):
    def setUp(self) -> None:
        self.model = facts.Model()
        self.pid = "usr_blocked"
        # A block sent at seq 1, acknowledged at seq 2.
        self.model.profile_event(self.pid, facts.Event("block", self.model.seq(), self.model.seq(), True))

    def state(self) -> str:
        before = self.model.seq()
        with self.model.lock:
            return self.model.block_state(self.model.profiles[self.pid], before=before)

    def test_an_acknowledged_block_is_blocked(self) -> None:
        self.assertEqual(self.state(), "blocked")

    def test_an_unblock_in_flight_may_have_undone_it(self) -> None:
        # The server may have applied the unblock and answered it before the worker reads the reply:
        # an identify sent meanwhile may get a session of the profile (CI seed 1653126283).
        self.model.begin_profile_event(self.pid, "unblock")
        self.assertEqual(self.state(), "unknown")

    def test_an_answered_unblock_not_yet_settled_counts(self) -> None:
        event = self.model.begin_profile_event(self.pid, "unblock")
        send = self.model.seq()
        end = self.model.seq()  # the reply was read; the worker has not settled the event yet
        self.assertEqual(self.state(), "unknown")
        self.model.settle_profile_event(self.pid, event, Reply(200, {}), send, end)
        self.assertEqual(self.state(), "unblocked")

    def test_a_rejected_unblock_is_forgotten(self) -> None:
        event = self.model.begin_profile_event(self.pid, "unblock")
        send, end = self.model.seq(), self.model.seq()
        self.model.settle_profile_event(self.pid, event, Reply(404, {}), send, end)
        self.assertEqual(self.state(), "blocked")
        self.assertEqual([e.kind for e in self.model.profiles[self.pid].events], ["block"])

    def test_a_lost_unblock_may_have_run(self) -> None:
        event = self.model.begin_profile_event(self.pid, "unblock")
        send = self.model.seq()
        self.model.settle_profile_event(self.pid, event, Reply(0, {}, "lost"), send, facts.INF)
        self.assertEqual(self.state(), "unknown")
        self.model.kill_seqs.append(self.model.seq())
        self.assertEqual(self.state(), "unknown")  # it may have run before the kill

    def test_a_block_acknowledged_after_the_unblock_stands(self) -> None:
        event = self.model.begin_profile_event(self.pid, "unblock")
        send, end = self.model.seq(), self.model.seq()
        self.model.settle_profile_event(self.pid, event, Reply(200, {}), send, end)
        self.model.profile_event(self.pid, facts.Event("block", self.model.seq(), self.model.seq(), True))
        self.assertEqual(self.state(), "blocked")


def event(sequence: int, type_: str, **data) -> dict:
    return {"id": f"evt_{sequence:04d}", "sequence": sequence, "type": type_, "data": data}


class FeedTests(unittest.TestCase):
    """The events checks on a small world: an anonymous start, a device, a revoke, a block; then
    each fault the crash self-test injects into the database must be reported, and nothing else."""

    def setUp(self) -> None:
        self.events = [
            event(1, "profile.created", profile_id="usr_a", kind="anonymous"),
            event(2, "session.created", session_id="ses_1", profile_id="usr_a", kind="anonymous"),
            event(3, "device.registered", device_id="dev_1", profile_id="usr_a", session_id="ses_1"),
            event(4, "session.created", session_id="ses_2", profile_id="usr_a", kind="anonymous"),
            event(5, "session.ended", session_id="ses_1", profile_id="usr_a", reason="signed_out"),
            event(6, "device.removed", device_id="dev_1", profile_id="usr_a", session_id="ses_1"),
            event(7, "profile.blocked", profile_id="usr_a"),
            event(8, "session.ended", session_id="ses_2", profile_id="usr_a", reason="blocked"),
            # In flight at a kill, unacknowledged, but in the database: fine.
            event(9, "session.created", session_id="ses_3", profile_id="usr_a", kind="anonymous"),
        ]
        self.expected = feed.Expected(
            sessions={"ses_1": ("usr_a", "anonymous", "dead"), "ses_2": ("usr_a", "anonymous", "dead")},
            devices={"dev_1": ("ses_1", "dead")}, profiles={"usr_a"}, blocked={"usr_a"}, block_targets={"usr_a"})
        self.stored = feed.Stored(sessions={"ses_1": False, "ses_2": False, "ses_3": False},
                                  profiles={"usr_a": ("anonymous", True)})

    def problems(self) -> list[str]:
        return feed.sequence_problems(self.events) + feed.change_problems(self.events, self.expected, self.stored)

    def renumber(self) -> None:
        for number, item in enumerate(self.events, 1):
            item["sequence"] = number

    def test_a_consistent_feed_passes(self) -> None:
        self.assertEqual(self.problems(), [])

    def test_a_deleted_event_is_reported(self) -> None:
        del self.events[3]  # ses_2's session.created
        problems = self.problems()
        self.assertTrue(any(p.startswith("FEED GAP") for p in problems), problems)
        self.assertTrue(any(p.startswith("MISSING EVENT: session.created") and "ses_2" in p for p in problems))
        self.renumber()  # even without the gap
        self.assertTrue(any(p.startswith("MISSING EVENT: session.created") for p in self.problems()))

    def test_a_duplicated_event_is_reported(self) -> None:
        self.events.append(dict(self.events[4], id="evt_copy", sequence=10))
        problems = self.problems()
        self.assertEqual([p for p in problems if p.startswith("DUPLICATE EVENT: session.ended")], problems, problems)
        self.assertEqual(len(problems), 1)

    def test_the_same_event_twice_is_reported(self) -> None:
        self.events.insert(5, dict(self.events[4]))
        problems = self.problems()
        self.assertTrue(any(p.startswith("DUPLICATE SEQUENCE") for p in problems), problems)
        self.assertTrue(any(p.startswith("DUPLICATE EVENT ID") for p in problems), problems)

    def test_an_event_of_an_unacknowledged_change_absent_from_the_database_is_reported(self) -> None:
        self.events.append(event(10, "session.created", session_id="ses_ghost", profile_id="usr_a", kind="anonymous"))
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("PHANTOM EVENT: session.created"), problems)

    def test_an_end_of_a_session_nothing_ended_is_reported(self) -> None:
        self.expected.sessions["ses_3"] = ("usr_a", "anonymous", "alive")
        self.stored.sessions["ses_3"] = True
        self.events.append(event(10, "session.ended", session_id="ses_3", profile_id="usr_a", reason="revoked"))
        problems = self.problems()
        self.assertTrue(any(p.startswith("PHANTOM EVENT: session.ended") for p in problems), problems)

    def test_a_block_event_twice_in_a_row_is_reported(self) -> None:
        self.events.append(event(10, "profile.blocked", profile_id="usr_a"))
        self.assertTrue(any(p.startswith("DUPLICATE EVENT: profile.blocked") for p in self.problems()))

    def test_a_block_state_without_its_event_is_reported(self) -> None:
        self.stored.profiles["usr_a"] = ("anonymous", False)
        self.assertTrue(any(p.startswith("MISSING EVENT: profile.unblocked") for p in self.problems()))

    def test_rotation_counts(self) -> None:
        self.expected.api_key_rotations = {"secret": (2, 1)}
        self.events.append(event(10, "api_key.rotated", kind="secret"))
        self.assertTrue(any(p.startswith("MISSING EVENT: api_key.rotated") for p in self.problems()))
        self.events += [event(11, "api_key.rotated", kind="secret"), event(12, "api_key.rotated", kind="secret")]
        self.assertEqual(self.problems(), [])
        self.events.append(event(13, "api_key.rotated", kind="secret"))
        self.assertTrue(any(p.startswith("PHANTOM EVENT: api_key.rotated") for p in self.problems()))


class PollerTests(unittest.TestCase):
    def page(self, after: int, *sequences: int, next_after: int | None = None) -> dict:
        events = [{"id": f"evt_{s}", "sequence": s} for s in sequences]
        return {"events": events, "next_after": next_after if next_after is not None else (
            sequences[-1] if sequences else after)}

    def test_reading_forward_passes(self) -> None:
        poller = feed.Poller()
        self.assertEqual(poller.observe(0, self.page(0, 1, 2, 3)), [])
        self.assertEqual(poller.observe(3, self.page(3)), [])
        self.assertEqual(poller.observe(3, self.page(3, 4)), [])
        self.assertEqual(poller.final_problems([{"id": f"evt_{s}", "sequence": s} for s in range(1, 6)]), [])

    def test_a_sequence_going_backwards_is_reported(self) -> None:
        poller = feed.Poller()
        poller.observe(0, self.page(0, 1, 2, 3))
        self.assertTrue(poller.observe(3, self.page(3, 2)))
        self.assertTrue(feed.Poller().observe(0, self.page(0, 2, 1)))
        self.assertTrue(feed.Poller().observe(5, self.page(5, next_after=4)))

    def test_an_event_committed_below_the_mark_is_a_skip(self) -> None:
        # The reader saw 1 and 3; the final read shows 2, which it never got: it skipped it.
        poller = feed.Poller()
        poller.observe(0, self.page(0, 1, 3))
        problems = poller.final_problems([{"id": f"evt_{s}", "sequence": s} for s in (1, 2, 3)])
        self.assertTrue(any(p.startswith("FEED SKIPPED") for p in problems), problems)

    def test_an_event_read_then_gone_or_moved_is_reported(self) -> None:
        poller = feed.Poller()
        poller.observe(0, self.page(0, 1, 2))
        problems = poller.final_problems([{"id": "evt_1", "sequence": 1}, {"id": "evt_2", "sequence": 3}])
        self.assertTrue(any(p.startswith("EVENT VANISHED") for p in problems), problems)


class ReceiverTests(unittest.TestCase):
    SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()

    def post(self, port: int, event: dict, secret: str = SECRET) -> int:
        body = json.dumps(event).encode()
        timestamp = "1700000000"
        signature = base64.b64encode(hmac.new(base64.b64decode(secret[6:]), f"{event['id']}.{timestamp}.".encode()
                                              + body, hashlib.sha256).digest()).decode()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("POST", "/hook", body=body, headers={
            "webhook-id": event["id"], "webhook-timestamp": timestamp, "webhook-signature": f"v1,{signature}",
            "Content-Type": "application/json"})
        status = connection.getresponse().status
        connection.close()
        return status

    def setUp(self) -> None:
        self.events = [event(1, "session.created", session_id="ses_1", profile_id="usr_a", kind="anonymous"),
                       event(2, "api_key.rotated", kind="secret"),
                       event(3, "session.ended", session_id="ses_1", profile_id="usr_a", reason="revoked")]
        self.receiver = webhook_checks.Receiver(seed=1, fail_first=0)
        self.receiver.secret = self.SECRET
        self.receiver.start()

    def tearDown(self) -> None:
        self.receiver.stop()

    def problems(self) -> list[str]:
        return webhook_checks.delivery_problems(self.events, self.receiver.snapshot(), 0, webhook_checks.SUBSCRIBED)

    def test_every_subscribed_event_delivered_passes(self) -> None:
        for item in (self.events[0], self.events[2], self.events[0]):  # at least once: a repeat is fine
            self.assertEqual(self.post(self.receiver.port, item), 204)
        self.assertEqual(self.problems(), [])

    def test_an_undelivered_event_is_reported(self) -> None:
        self.post(self.receiver.port, self.events[0])
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("UNDELIVERED EVENT") and "evt_0003" in problems[0], problems)

    def test_a_delivery_answered_500_is_not_delivered(self) -> None:
        self.receiver.fail_first = 1.0  # every first attempt fails
        self.assertEqual(self.post(self.receiver.port, self.events[0]), 500)
        self.assertEqual(self.post(self.receiver.port, self.events[2]), 500)
        self.assertTrue(any(p.startswith("UNDELIVERED EVENT") for p in self.problems()))
        self.assertEqual(self.post(self.receiver.port, self.events[0]), 204)  # the retry
        self.assertEqual(self.post(self.receiver.port, self.events[2]), 204)
        self.assertEqual(self.problems(), [])

    def test_a_bad_signature_a_foreign_event_and_an_unsubscribed_type_are_reported(self) -> None:
        self.post(self.receiver.port, self.events[0])
        self.post(self.receiver.port, self.events[2], secret="whsec_" + base64.b64encode(b"x" * 32).decode())
        self.post(self.receiver.port, self.events[1])
        self.post(self.receiver.port, event(9, "session.created", session_id="ses_9"))
        self.post(self.receiver.port, dict(self.events[0], id="evt_0003"))
        problems = " | ".join(self.problems())
        for marker in ("BAD WEBHOOK SIGNATURE", "UNSUBSCRIBED EVENT DELIVERED", "WEBHOOK OF NO EVENT",
                       "WEBHOOK BODY MISMATCH"):
            self.assertIn(marker, problems)


if __name__ == "__main__":
    unittest.main()
