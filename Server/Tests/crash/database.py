"""The crash harness's direct reads of the database after the final kill (sqlite3 or psql), and the
self-test's tampering with it."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

if TYPE_CHECKING:
    from run import Run

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
