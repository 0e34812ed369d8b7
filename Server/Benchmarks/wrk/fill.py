"""Valid sessions written straight into a migrated database in bulk, for the load benchmarks.

The rows are the ones `POST /v1/sessions/anonymous` writes: an anonymous profile, its installation
(SHA-256 of a random installation secret) and a live anonymous session whose token `st_…` is
generated here and stored as its SHA-256 only. Given device keys' thumbprints (`jkts`), each session
is bound to its own key, as an anonymous start with a DPoP proof writes it (`jkt`, and `key_tier`
`software`, the tier of a key made outside a Secure Enclave). SQLite: one transaction of prepared inserts;
PostgreSQL: COPY through psql. Used by bench.py (the heartbeat's sessions) and scale.py (1,000,000).
A heartbeat over these sessions needs no HTTP call to create them: 100,000 take seconds, not minutes.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402

CHUNK = 20_000
PROFILE_COLUMNS = "id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, updated_at"
INSTALLATION_COLUMNS = "project_id, installation_id, secret_hash, profile_id, created_at"
SESSION_COLUMNS = (
    "id, project_id, profile_id, token_hash, installation_id, kind, created_at, last_authenticated_at, expires_at, "
    "revoked_at, jkt, key_tier"
)


@dataclass
class Rows:
    """One chunk of valid rows: profiles, installations, sessions, and the sessions' tokens."""

    profiles: list[tuple] = field(default_factory=list)
    installations: list[tuple] = field(default_factory=list)
    sessions: list[tuple] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)


def generate(project_id: str, count: int, now: int, jkts: list[str] | None = None):
    """Yields chunks of `count` anonymous profiles, each with its installation and one live session
    (bound to the key of `jkts[i]` when given)."""
    expires_at = now + 525_600 * 60  # the default anonymous session lifetime
    sha256 = hashlib.sha256
    b64url = harness.b64url
    done = 0
    while done < count:
        size = min(CHUNK, count - done)
        entropy = os.urandom(size * 112)
        rows = Rows()
        for index in range(size):
            base = index * 112
            profile_id = "usr_" + b64url(entropy[base:base + 16])
            installation_id = str(uuid.UUID(bytes=entropy[base + 16:base + 32], version=4))
            secret = b64url(entropy[base + 32:base + 64])
            session_id = "ses_" + b64url(entropy[base + 64:base + 80])
            token = "st_" + b64url(entropy[base + 80:base + 112])
            rows.profiles.append((profile_id, project_id, "anonymous", None, False, None, None, None, now, now))
            rows.installations.append(
                (project_id, installation_id, sha256(secret.encode()).digest(), profile_id, now)
            )
            jkt = jkts[done + index] if jkts is not None else None
            rows.sessions.append(
                (session_id, project_id, profile_id, sha256(token.encode()).digest(), installation_id, "anonymous",
                 now, now, expires_at, None, jkt, "software" if jkt else None)
            )
            rows.tokens.append(token)
        done += size
        yield rows


def placeholders(columns: str) -> str:
    return ", ".join("?" for _ in columns.split(","))


def fill_sqlite(path: Path, project_id: str, count: int, sample: set[int] | None = None,
                jkts: list[str] | None = None) -> list[str]:
    """Bulk inserts into a database `tessera projects create` has migrated; returns the sampled tokens
    (every token, in the order of `jkts`, when `sample` is None)."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA cache_size = -1000000")  # 1 GB: the random keys' indexes stay in memory
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("BEGIN")
        tokens: list[str] = []
        offset = 0
        now = int(time.time())
        (before,) = connection.execute("SELECT COUNT(*) FROM sessions WHERE project_id = ?", [project_id]).fetchone()
        for rows in generate(project_id, count, now, jkts):
            connection.executemany(
                f"INSERT INTO profiles ({PROFILE_COLUMNS}) VALUES ({placeholders(PROFILE_COLUMNS)})",
                [row[:4] + (int(row[4]),) + row[5:] for row in rows.profiles],
            )
            connection.executemany(
                f"INSERT INTO installations ({INSTALLATION_COLUMNS}) VALUES ({placeholders(INSTALLATION_COLUMNS)})",
                rows.installations,
            )
            connection.executemany(
                f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES ({placeholders(SESSION_COLUMNS)})", rows.sessions
            )
            tokens += rows.tokens if sample is None else [
                token for index, token in enumerate(rows.tokens) if offset + index in sample]
            offset += len(rows.tokens)
        connection.execute("COMMIT")
        connection.execute("ANALYZE")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (stored,) = connection.execute("SELECT COUNT(*) FROM sessions WHERE project_id = ?", [project_id]).fetchone()
    finally:
        connection.close()
    if stored != before + count:
        raise SystemExit(f"fill: {path} holds {stored} sessions, not {before + count}")
    return tokens


def copy_text(value: object) -> str:
    """One field in COPY's text format (the generated values hold no tab, newline or backslash)."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, bytes):
        return "\\\\x" + value.hex()
    return str(value)


def copy_block(table: str, columns: str, rows: list[tuple]) -> str:
    lines = ["\t".join(copy_text(value) for value in row) for row in rows]
    return f"COPY {table} ({columns}) FROM STDIN;\n" + "\n".join(lines) + "\n\\.\n"


def psql(url: str, sql: str) -> str:
    result = subprocess.run(
        ["psql", harness.libpq_url(url), "-v", "ON_ERROR_STOP=1", "-Atqc", sql], capture_output=True, text=True,
        timeout=600,
    )
    if result.returncode != 0:
        raise SystemExit(f"fill: psql failed: {result.stderr.strip()}")
    return result.stdout.strip()


def fill_postgres(url: str, schema: str, project_id: str, count: int, sample: set[int] | None = None,
                  jkts: list[str] | None = None) -> list[str]:
    """COPY through psql, one transaction, into the schema the server migrated, then VACUUM (ANALYZE);
    returns the sampled tokens (every token, in the order of `jkts`, when `sample` is None)."""
    before = int(psql(url, f"SELECT COUNT(*) FROM {schema}.sessions WHERE project_id = '{project_id}'"))
    process = subprocess.Popen(
        ["psql", harness.libpq_url(url), "-v", "ON_ERROR_STOP=1", "-q"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    tokens: list[str] = []
    offset = 0
    now = int(time.time())
    assert process.stdin is not None
    try:
        process.stdin.write("BEGIN;\n")
        for rows in generate(project_id, count, now, jkts):
            process.stdin.write(copy_block(f"{schema}.profiles", PROFILE_COLUMNS, rows.profiles))
            process.stdin.write(copy_block(f"{schema}.installations", INSTALLATION_COLUMNS, rows.installations))
            process.stdin.write(copy_block(f"{schema}.sessions", SESSION_COLUMNS, rows.sessions))
            tokens += rows.tokens if sample is None else [
                token for index, token in enumerate(rows.tokens) if offset + index in sample]
            offset += len(rows.tokens)
        # VACUUM sets the hint bits and the visibility map now, so that the measured heartbeats do not
        # pay for the first reads of freshly loaded pages (dirtying them); ANALYZE gives the planner statistics.
        process.stdin.write("COMMIT;\n" + "".join(
            f"VACUUM (ANALYZE) {schema}.{table};\n" for table in ("profiles", "installations", "sessions")))
        process.stdin.close()
    except BrokenPipeError:
        pass
    stderr = process.stderr.read() if process.stderr else ""
    if process.wait() != 0:
        raise SystemExit(f"fill: psql COPY failed: {stderr.strip()}")
    stored = int(psql(url, f"SELECT COUNT(*) FROM {schema}.sessions WHERE project_id = '{project_id}'"))
    if stored != before + count:
        raise SystemExit(f"fill: schema {schema} holds {stored} sessions, not {before + count}")
    return tokens
