"""Unit tests of the crash harness's model (no server): python3 -m unittest discover -s Server/Tests/crash"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))

import run  # noqa: E402
from tessera_harness import Reply  # noqa: E402


class BlockStateTests(unittest.TestCase):
    def setUp(self) -> None:
        self.model = run.Model()
        self.pid = "usr_blocked"
        # A block sent at seq 1, acknowledged at seq 2.
        self.model.profile_event(self.pid, run.Event("block", self.model.seq(), self.model.seq(), True))

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
        self.model.settle_profile_event(self.pid, event, Reply(0, {}, "lost"), send, run.INF)
        self.assertEqual(self.state(), "unknown")
        self.model.kill_seqs.append(self.model.seq())
        self.assertEqual(self.state(), "unknown")  # it may have run before the kill

    def test_a_block_acknowledged_after_the_unblock_stands(self) -> None:
        event = self.model.begin_profile_event(self.pid, "unblock")
        send, end = self.model.seq(), self.model.seq()
        self.model.settle_profile_event(self.pid, event, Reply(200, {}), send, end)
        self.model.profile_event(self.pid, run.Event("block", self.model.seq(), self.model.seq(), True))
        self.assertEqual(self.state(), "blocked")


if __name__ == "__main__":
    unittest.main()
