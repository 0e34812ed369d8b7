"""The crash harness's master key rotations between kills."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
from tessera_harness import clean_environment  # noqa: E402

if TYPE_CHECKING:
    from database import Database
    from run import Run
    from tessera_process import Server

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
