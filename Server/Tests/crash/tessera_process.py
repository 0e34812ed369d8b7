"""The crash harness's `tessera serve`: one process at a time on one database, killed and started again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
from tessera_harness import clean_environment  # noqa: E402

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
