#!/usr/bin/env python3
"""The operator console's pages on a big SQLite database: 1,000,000 profiles and 3,000,000 sessions.

    Server/Benchmarks/console/bench.py [--profiles 1000000] [--requests 30] [--tessera PATH] [--database PATH]
    scripts/bench-console [same options]            # the wrapper: builds nothing, picks the binary

1. `tessera projects create` creates and migrates the schema (and the project) once; then the data goes
   in directly with Python's sqlite3 (one transaction per table, time-ordered IDs as the server makes them:
   prefix + 12 hex digits of Unix milliseconds + 16 base64url characters). Shapes: 60 % anonymous profiles,
   35 % verified identified ones (external ID, email, name), 5 % unverified, 0.5 % blocked; an installation
   per anonymous profile and one or two per identified one (unlinked by the sign-in and remembered as its
   previous profile, as promote does); three sessions per profile on average (a few
   revoked), one profile with 5,000 sessions; devices on a tenth of the identified sessions; aliases (merged
   anonymous profiles) for 5 % of identified profiles; events for the last 29 days (the retention window)
   and an audit trail of operator and secret-key actions.
2. `tessera serve` on it (the release build at Server/.build-release when there is one, else the debug
   build; it says which), with both retentions off so the cleanup does not delete while we measure.
3. An owner operator enrolls and signs in over plain HTTP (form tokens and cookies as a browser sends them).
4. Every console page is requested once (its time is printed as `first`: cold caches, the overview's
   counts) and then --requests times, one at a time on a keep-alive connection; p50 and p95 per page in
   ms, `SLOW` for a p95 above 50 ms, `SLOW first` for a page whose only slow request was the first.

--database PATH keeps the filled database there and reuses it on the next run (filled once per
--profiles); the default is a temporary directory removed at the end. The short CI form is
`--profiles 20000`. Exits non-zero when a page does not answer 200 (or 303 for search).
"""

from __future__ import annotations

import argparse
import base64
import html.parser
import http.client
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "Server" / "Tests" / "harness"))
import tessera_harness as harness  # noqa: E402

DAY = 86_400
SLOW_MS = 50.0


# ─── Identifiers as the server makes them (Core/TimeOrderedID.swift) ────────────────────────────


class IDs:
    """Time-ordered IDs: prefix + 12 hex digits of the milliseconds + 16 base64url characters (96 random bits)."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def make(self, prefix: str, seconds: float) -> str:
        milliseconds = int(seconds * 1000)
        tail = base64.urlsafe_b64encode(self.random.getrandbits(96).to_bytes(12, "big")).decode("ascii")
        return f"{prefix}{milliseconds:012x}{tail}"


# ─── Filling the database ────────────────────────────────────────────────────────────────────────


def columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def fill(path: Path, project_id: str, profiles: int, seed: int = 16) -> dict:
    """Writes the data set; returns what the page requests need (IDs of each kind)."""
    ids = IDs(seed)
    rng = random.Random(seed + 1)
    now = time.time()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=OFF")
    connection.execute("PRAGMA synchronous=OFF")
    connection.execute("PRAGMA cache_size=-2000000")  # 2 GB: the random token-hash index stays in memory
    connection.execute("PRAGMA temp_store=MEMORY")
    for table in ("profiles", "sessions", "installations", "devices", "profile_aliases", "events"):
        if table not in {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}:
            raise SystemExit(f"bench-console: the schema has no {table} table")
    profile_columns = columns(connection, "profiles")
    started = time.monotonic()

    # Profiles: created over the last 365 days, oldest first (IDs grow with time, as in production).
    span = 365 * DAY
    profile_rows, kinds, identified = [], [], []
    for index in range(profiles):
        created = now - span + span * (index + 0.5) / profiles
        draw = rng.random()
        pid = ids.make("usr_", created)
        if draw < 0.60:
            kind, verified, external, email, name = "anonymous", 0, None, None, None
        else:
            kind = "identified"
            verified = 1 if draw < 0.95 else 0
            external = f"user-{index}"
            email = f"user-{index}@example.com" if verified else None
            name = f"User {index}"
            identified.append(len(profile_rows))
        blocked = created + 60 if rng.random() < 0.005 else None
        profile_rows.append((pid, project_id, kind, external, verified, name, None, email, int(created),
                             int(created), blocked, "abuse" if blocked else None))
        kinds.append(kind)
    heavy = profile_rows[identified[len(identified) // 2]][0]
    connection.execute("BEGIN")
    if "blocked_at" in profile_columns:
        connection.executemany(
            "INSERT INTO profiles (id, project_id, kind, external_id, verified, name, avatar_url, email, created_at, "
            "updated_at, blocked_at, blocked_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", profile_rows)
    connection.execute("COMMIT")
    print(f"  profiles: {profiles:,} in {time.monotonic() - started:.0f} s", flush=True)

    # Installations: one per anonymous profile, one or two per identified one. A sign-in unlinks the
    # installation from the profile and remembers it as previous_profile_id (migration 7), as promote and
    # merge do; without that column (an older schema) the installation keeps pointing at the profile.
    started = time.monotonic()
    remembers = "previous_profile_id" in columns(connection, "installations")
    installation_rows, installation_of = [], {}
    for row in profile_rows:
        for _ in range(1 if row[2] == "anonymous" or rng.random() < 0.6 else 2):
            installation = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            installation_of.setdefault(row[0], installation)
            linked, previous = (row[0], None) if row[2] == "anonymous" or not remembers else (None, row[0])
            installation_rows.append((project_id, installation, rng.getrandbits(256).to_bytes(32, "big"), linked,
                                      row[8], previous))
    connection.execute("BEGIN")
    if remembers:
        connection.executemany("INSERT INTO installations (project_id, installation_id, secret_hash, profile_id, "
                               "created_at, previous_profile_id) VALUES (?, ?, ?, ?, ?, ?)", installation_rows)
    else:
        connection.executemany("INSERT INTO installations (project_id, installation_id, secret_hash, profile_id, "
                               "created_at) VALUES (?, ?, ?, ?, ?)", [item[:5] for item in installation_rows])
    connection.execute("COMMIT")
    print(f"  installations: {len(installation_rows):,} in {time.monotonic() - started:.0f} s", flush=True)

    # Sessions: 3 per profile on average (the heavy profile has 5,000), all still within their life,
    # 10 % revoked. Devices on a tenth of the verified sessions.
    started = time.monotonic()
    target = 3 * profiles
    session_rows, device_rows = [], []
    counts = [rng.choice((1, 2, 3, 4, 5)) for _ in range(profiles)]  # mean 3
    total = sum(counts)
    sample_session = sample_device = None
    events: list[tuple] = []
    for index, row in enumerate(profile_rows):
        pid, created = row[0], row[8]
        many = 5000 if pid == heavy else counts[index]
        if pid != heavy and total > target and many > 1:
            many -= 1
            total -= 1
        kind = "anonymous" if row[2] == "anonymous" else ("verified" if row[4] else "unverified")
        for n in range(many):
            at = created + (now - created) * (n + 0.5) / many
            sid = ids.make("ses_", at)
            revoked = int(at + 3600) if rng.random() < 0.10 and at + 3600 < now else None
            expires = int(max(at + 365 * DAY, now + 30 * DAY))
            session_rows.append((sid, project_id, pid, rng.getrandbits(256).to_bytes(32, "big"),
                                 installation_of.get(pid), kind, int(at), int(max(at, now - rng.random() * 7 * DAY)),
                                 expires, revoked))
            if kind == "verified" and revoked is None and rng.random() < 0.10:
                did = ids.make("dev_", at + 1)
                device_rows.append((did, project_id, sid, pid, "apns" if rng.random() < 0.6 else "fcm", "production",
                                    rng.getrandbits(256).to_bytes(32, "big").hex(), int(at + 1)))
                sample_device = sample_device or (did, pid, device_rows[-1][6])
            if kind == "verified" and sample_session is None:
                sample_session = (sid, pid)
            if at > now - 29 * DAY:
                events.append((at, "session.created", pid, json.dumps({"session_id": sid, "profile_id": pid, "kind": kind},
                                                                      separators=(",", ":")), "sdk"))
                if revoked:
                    events.append((revoked, "session.ended", pid, json.dumps(
                        {"session_id": sid, "profile_id": pid, "reason": "revoked"}, separators=(",", ":")), "sdk"))
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO sessions (id, project_id, profile_id, token_hash, installation_id, kind, created_at, "
        "last_authenticated_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", session_rows)
    connection.execute("COMMIT")
    # Each session's last client (schema 16), as the server records it: an address and a user agent.
    if "client_address" in {row[1] for row in connection.execute("PRAGMA table_info(sessions)")}:
        connection.execute("BEGIN")
        connection.execute(
            "UPDATE sessions SET client_address = '198.51.100.' || (rowid % 250), "
            "user_agent = 'Demo/' || (rowid % 7) || '.0 (iPhone; iOS 19.' || (rowid % 3) || ')' WHERE project_id = ?",
            (project_id,))
        connection.execute("COMMIT")
    print(f"  sessions: {len(session_rows):,} in {time.monotonic() - started:.0f} s", flush=True)
    started = time.monotonic()
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO devices (id, project_id, session_id, profile_id, platform, environment, token, "
                           "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", device_rows)
    connection.execute("COMMIT")
    print(f"  devices: {len(device_rows):,} in {time.monotonic() - started:.0f} s", flush=True)
    sessions_written = len(session_rows)
    del session_rows

    # Aliases: 5 % of identified profiles have an anonymous profile folded in (its ID survives as an alias).
    started = time.monotonic()
    alias_rows = []
    for position in identified:
        if rng.random() < 0.05:
            pid, created = profile_rows[position][0], profile_rows[position][8]
            merged = created + 30
            alias = ids.make("usr_", created - 600)
            alias_rows.append((alias, project_id, pid, int(merged)))
            if merged > now - 29 * DAY:
                events.append((merged, "profile.merged", pid, json.dumps(
                    {"profile_id": pid, "from_profile_id": alias, "external_id": profile_rows[position][3],
                     "alias_ids": [alias]}, separators=(",", ":")), "sdk"))
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO profile_aliases (alias_id, project_id, profile_id, created_at) VALUES (?, ?, ?, ?)",
                           alias_rows)
    connection.execute("COMMIT")
    print(f"  aliases: {len(alias_rows):,} in {time.monotonic() - started:.0f} s", flush=True)

    # Events of the retention window: profiles created, promotions, the sessions above, an audit trail.
    started = time.monotonic()
    for row in profile_rows:
        if row[8] > now - 29 * DAY:
            events.append((row[8], "profile.created", row[0], json.dumps({"profile_id": row[0], "kind": "anonymous"},
                                                                         separators=(",", ":")), "sdk"))
            if row[2] == "identified" and row[4]:
                events.append((row[8] + 5, "profile.promoted", row[0], json.dumps(
                    {"profile_id": row[0], "external_id": row[3]}, separators=(",", ":")), "sdk"))
    audit = max(2000, profiles // 200)
    for n in range(audit):
        at = now - 29 * DAY + 29 * DAY * (n + 0.5) / audit
        row = profile_rows[rng.randrange(len(profile_rows))]
        events.append((at, "profile.blocked" if n % 3 else "profile.updated", row[0],
                       json.dumps({"profile_id": row[0]}, separators=(",", ":")), "operator" if n % 2 else "secret_key"))
    events.sort(key=lambda item: item[0])
    event_rows = []
    for sequence, (at, kind, pid, data, actor) in enumerate(events, start=1):
        actor_id = "opr_bench" if actor == "operator" else (None if actor == "sdk" else "sk")
        event_rows.append((project_id, sequence, ids.make("evt_", at), kind, int(at), actor, actor_id,
                           "127.0.0.1" if actor in ("operator", "secret_key") else None, pid, data))
    connection.execute("BEGIN")
    last = connection.execute("SELECT COALESCE(MAX(sequence), 0) FROM events WHERE project_id = ?", (project_id,)).fetchone()[0]
    event_rows = [(r[0], r[1] + last, *r[2:]) for r in event_rows]
    connection.executemany("INSERT INTO events (project_id, sequence, id, type, created_at, actor_type, actor_id, "
                           "client_address, profile_id, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", event_rows)
    connection.execute("INSERT INTO event_counters (project_id, last_sequence) VALUES (?, ?) "
                       "ON CONFLICT (project_id) DO UPDATE SET last_sequence = excluded.last_sequence",
                       (project_id, last + len(event_rows)))
    connection.execute("COMMIT")
    print(f"  events: {len(event_rows):,} in {time.monotonic() - started:.0f} s", flush=True)
    # Active users (schema 13): each profile active on about one day in eight of the last 90 (a DAU of
    # ~12 % of the profiles), on its installation, in its kind; and identify tallies per day.
    if "profile_activity" in {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}:
        started = time.monotonic()
        today = int(now) // DAY
        connection.execute("BEGIN")
        # Schema 18 counts each row as it is written (a trigger): 11.7M rows through it would take an
        # hour here, so the rows go in without it and are counted here set-wise, as the trigger would
        # have (activity_installations, each day's distinct counts, each subject's latest day and the
        # count per latest day); ActivityTests and the store suite check the trigger's counts.
        trigger = connection.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'profile_activity_counts'").fetchone()
        if trigger:
            connection.execute("DROP TRIGGER profile_activity_counts")
        connection.execute(
            "WITH RECURSIVE d(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM d WHERE k + 1 < 90) "
            "INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id) "
            "SELECT p.project_id, ? - d.k, p.kind = 'identified', p.id, COALESCE(i.installation_id, '') "
            "FROM profiles p JOIN d LEFT JOIN installations i ON i.project_id = p.project_id AND i.profile_id = p.id "
            "WHERE p.project_id = ? AND (p.rowid * 2654435761 + d.k * 40503 + (p.rowid / 3) * d.k) % 1000 < 125 "
            "ON CONFLICT DO NOTHING", (today, project_id))
        activity = connection.execute("SELECT COUNT(*) FROM profile_activity WHERE project_id = ?", (project_id,)).fetchone()[0]
        if trigger:
            count_activity(connection, project_id)
            connection.execute(trigger[0])
        tallies = []
        for k in range(90):
            for name, mean in (("identify.signed_in", 4000), ("identify.created", 900), ("identify.promoted", 700),
                               ("identify.merged", 120), ("identify.expired_token", 40)):
                tallies.append((project_id, today - k, name, max(0, int(mean * (0.8 + 0.4 * rng.random())))))
        connection.executemany("INSERT INTO daily_tallies (project_id, day, name, count) VALUES (?, ?, ?, ?) "
                               "ON CONFLICT DO NOTHING", tallies)
        connection.execute("COMMIT")
        print(f"  activity: {activity:,} profile-days in {time.monotonic() - started:.0f} s", flush=True)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.close()

    verified = next(row for row in profile_rows if row[2] == "identified" and row[4] and row[10] is None)
    return {"heavy": heavy, "profile": verified[0], "external_id": verified[3], "email": verified[7],
            "installation": installation_of[verified[0]], "session": sample_session[0], "device": sample_device[0],
            "push_token": sample_device[2],
            "alias": alias_rows[0][0] if alias_rows else verified[0], "middle": profile_rows[len(profile_rows) // 2][0],
            "profiles": profiles,
            "counts": {"profiles": profiles, "sessions": sessions_written, "installations": len(installation_rows), "devices": len(device_rows),
                       "aliases": len(alias_rows), "events": len(event_rows)}}


# ─── A console client over plain HTTP ───────────────────────────────────────────────────────────


class Forms(html.parser.HTMLParser):
    """The hidden inputs and the links of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.next: str | None = None

    def handle_starttag(self, tag, attributes):
        values = dict(attributes)
        if tag == "input" and values.get("type") == "hidden" and values.get("name"):
            self.hidden.setdefault(values["name"], values.get("value") or "")
        if tag == "a" and values.get("rel") == "next" and self.next is None:
            self.next = values.get("href")


class ConsoleClient:
    """One keep-alive connection with the console's cookies."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, dict]:
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                cookie, _, attributes = value.partition(";")
                key, _, content = cookie.partition("=")
                if "max-age=0" in attributes.lower().replace(" ", ""):
                    self.cookies.pop(key.strip(), None)
                else:
                    self.cookies[key.strip()] = content.strip()
        if response.will_close:
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        return response.status, text, {name.lower(): value for name, value in response.getheaders()}

    def hidden(self, text: str) -> dict[str, str]:
        parser = Forms()
        parser.feed(text)
        return parser.hidden

    def enroll_and_log_in(self, link: str, email: str, password: str) -> None:
        path = urllib.parse.urlsplit(link)
        status, text, _ = self.request("GET", f"{path.path}?{path.query}")
        fields = self.hidden(text)
        if status != 200 or "csrf" not in fields:
            raise SystemExit(f"bench-console: the enrollment page answered {status}")
        fields.pop("totp_secret", None)
        status, text, _ = self.request("POST", "/console/enroll", {**fields, "password": password,
                                                                   "password_confirmation": password})
        if status not in (303, 302):
            raise SystemExit(f"bench-console: enrollment answered {status}: {text[:300]}")
        status, text, _ = self.request("GET", "/console/login")
        fields = self.hidden(text)
        status, text, _ = self.request("POST", "/console/login", {"csrf": fields.get("csrf", ""), "email": email,
                                                                  "password": password})
        if status != 303 or "tessera_console" not in self.cookies:
            raise SystemExit(f"bench-console: sign-in answered {status}: {text[:300]}")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))]


def default_tessera() -> tuple[str, str]:
    for candidate in sorted(ROOT.glob("Server/.build-release/**/release/tessera")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate), "release"
    debug = subprocess.run(["swift", "build", "--package-path", str(ROOT / "Server"), "--show-bin-path"],
                           capture_output=True, text=True).stdout.strip()
    return str(Path(debug) / "tessera"), "debug"


METRICS = [("profiles", "profile_id", "1"), ("profiles.anonymous", "profile_id", "identified = 0"),
           ("profiles.identified", "profile_id", "identified = 1"),
           ("installations", "installation_id", "installation_id <> ''"),
           ("installations.anonymous", "installation_id", "installation_id <> '' AND identified = 0"),
           ("installations.identified", "installation_id", "installation_id <> '' AND identified = 1")]


def count_activity(connection: sqlite3.Connection, project_id: str) -> None:
    """What schema 18's trigger keeps, counted at once from the project's rows of profile_activity."""
    connection.execute("INSERT OR IGNORE INTO activity_installations (project_id, day, identified, installation_id) "
                       "SELECT DISTINCT project_id, day, identified, installation_id FROM profile_activity "
                       "WHERE project_id = ? AND installation_id <> ''", (project_id,))
    for name, subject, condition in METRICS:
        connection.execute(f"INSERT INTO activity_counts (project_id, day, name, count) "
                           f"SELECT project_id, day, 'active.{name}', COUNT(DISTINCT {subject}) FROM profile_activity "
                           f"WHERE project_id = ? AND {condition} GROUP BY day", (project_id,))
        connection.execute(f"INSERT INTO activity_latest (project_id, name, subject_id, day) "
                           f"SELECT project_id, '{name}', {subject}, MAX(day) FROM profile_activity "
                           f"WHERE project_id = ? AND {condition} GROUP BY {subject}", (project_id,))
        connection.execute(f"INSERT INTO activity_counts (project_id, day, name, count) "
                           f"SELECT project_id, day, 'latest.{name}', COUNT(*) FROM activity_latest "
                           f"WHERE project_id = ? AND name = '{name}' GROUP BY day", (project_id,))


def wait_for_backfill(path: Path) -> None:
    """Waits until the server has counted the activity written without the trigger (schema 18)."""
    started = time.monotonic()
    connection = sqlite3.connect(path, timeout=30)
    try:
        while True:
            try:
                left = connection.execute("SELECT COALESCE(SUM(last_day - next_day + 1), 0) FROM activity_backfill").fetchone()[0]
            except sqlite3.OperationalError:
                return  # a schema before 18
            if not left:
                break
            print(f"bench-console: the server is counting past activity: {left} days left", flush=True)
            time.sleep(10)
    finally:
        connection.close()
    print(f"bench-console: past activity counted in {time.monotonic() - started:.0f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiles", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=30, help="requests per page (after one warm-up)")
    parser.add_argument("--tessera", help="the tessera binary (default: the release build if present, else debug)")
    parser.add_argument("--database", help="a SQLite file to fill once and reuse (default: a temporary one)")
    arguments = parser.parse_args()
    if arguments.tessera:
        tessera, build = arguments.tessera, ("release" if "/release/" in arguments.tessera else "debug")
    else:
        tessera, build = default_tessera()
    print(f"bench-console: {tessera} ({build} build), {arguments.profiles:,} profiles", flush=True)

    work = Path(tempfile.mkdtemp(prefix="tessera-bench-console-"))
    database_path = Path(arguments.database) if arguments.database else work / "tessera.sqlite"
    stamp = database_path.with_suffix(".bench.json")
    environment = harness.clean_environment()
    database = f"sqlite:{database_path}"
    if stamp.exists() and json.loads(stamp.read_text()).get("profiles") == arguments.profiles and database_path.exists():
        sample = json.loads(stamp.read_text())
        print(f"bench-console: reusing {database_path}", flush=True)
    else:
        for suffix in ("", "-wal", "-shm"):
            Path(str(database_path) + suffix).unlink(missing_ok=True)
        project = harness.create_project(tessera, database, "Bench", environment, what="bench-console")
        started = time.monotonic()
        print("bench-console: filling the database", flush=True)
        sample = fill(database_path, project.project_id, arguments.profiles)
        sample["fill_seconds"] = round(time.monotonic() - started)
        sample["database_bytes"] = database_path.stat().st_size
        stamp.write_text(json.dumps(sample))
        print(f"bench-console: filled in {sample['fill_seconds']} s, {sample['database_bytes'] / 2**20:,.0f} MiB", flush=True)

    port = harness.free_port()
    server = harness.serve(tessera, database, port, "--anonymous-retention-days", "0", "--event-retention-days", "0",
                           log=open(work / "tessera.log", "w"), environment=environment)
    failures = []
    try:
        harness.wait_ready(port, server, what="bench-console: tessera serve", timeout=300)
        wait_for_backfill(database_path)
        email = f"bench-{uuid.uuid4().hex[:6]}@example.com"
        created = subprocess.run([tessera, "operators", "create", "--email", email, "--role", "owner", "--console-url",
                                  f"http://127.0.0.1:{port}", "--database", database], capture_output=True, text=True,
                                 env=environment, timeout=120)
        link = re.search(r"https?://\S+/console/enroll\?token=\S+", created.stdout + created.stderr)
        if not link:
            raise SystemExit(f"bench-console: tessera operators create: {created.stdout} {created.stderr}")
        client = ConsoleClient(port)
        client.enroll_and_log_in(link.group(0), email, "bench-password-123456")

        # A deep page of the profile list: the cursor of page 1's next link, moved to the middle of the table
        # when it is a profile ID (else the cursor of the 20th page, following the links).
        status, text, _ = client.request("GET", "/console/profiles")
        forms = Forms()
        forms.feed(text)
        deep = None
        if forms.next:
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(forms.next).query))
            cursor = query.get("cursor", "")
            if cursor.startswith("usr_"):
                deep = "/console/profiles?" + urllib.parse.urlencode({"cursor": sample["middle"]})
            else:
                href = forms.next
                for _ in range(19):
                    status, text, _ = client.request("GET", "/console/" + href.lstrip("./"))
                    forms = Forms()
                    forms.feed(text)
                    if not forms.next:
                        break
                    href = forms.next
                deep = "/console/" + href.lstrip("./")
        # UTC days for the date filters: the last week of the fixture's time-ordered IDs and events.
        today = time.strftime("%Y-%m-%d", time.gmtime())
        week_ago = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 7 * 86_400))
        pages = [
            ("overview", "/console/"),
            ("profiles", "/console/profiles"),
            ("profiles kind=anonymous", "/console/profiles?kind=anonymous"),
            ("profiles kind=identified", "/console/profiles?kind=identified"),
            ("profiles verified=true", "/console/profiles?verified=true"),
            ("profiles verified=false", "/console/profiles?verified=false"),
            ("profiles blocked=true", "/console/profiles?blocked=true"),
            ("profiles email=", "/console/profiles?email=" + urllib.parse.quote(sample["email"])),
            ("profiles external_id=", "/console/profiles?external_id=" + sample["external_id"]),
            ("profiles installation_id=", "/console/profiles?installation_id=" + sample["installation"]),
            ("profiles deep cursor", deep),
            ("profiles order=oldest", "/console/profiles?order=oldest"),
            # Searches: a narrow prefix (one range of each folded index), a medium one (hundreds of
            # matches per index), a dense one (40 % of profiles: the walk of every profile), none.
            ("profiles search= narrow", "/console/profiles?search=" + urllib.parse.quote(sample["external_id"][:-1].upper())),
            ("profiles search= medium", "/console/profiles?search=user-999"),
            ("profiles search= dense", "/console/profiles?search=U"),
            ("profiles search= dense, blocked", "/console/profiles?search=u&blocked=true"),
            ("profiles search= none", "/console/profiles?search=zzz"),
            ("profiles created, 7 days", f"/console/profiles?created_from={week_ago}&created_to={today}"),
            ("profiles.csv email=", "/console/profiles.csv?email=" + urllib.parse.quote(sample["email"])),
            ("profile (typical)", "/console/profile?id=" + sample["profile"]),
            ("profile (5,000 sessions)", "/console/profile?id=" + sample["heavy"]),
            ("search usr_", "/console/search?q=" + sample["profile"]),
            ("search usr_ alias", "/console/search?q=" + sample["alias"]),
            ("search ses_", "/console/search?q=" + sample["session"]),
            ("search dev_", "/console/search?q=" + sample["device"]),
            ("search installation", "/console/search?q=" + sample["installation"]),
            ("search external ID", "/console/search?q=" + sample["external_id"]),
            ("search email", "/console/search?q=" + urllib.parse.quote(sample["email"])),
            ("search email, other case", "/console/search?q=" + urllib.parse.quote(sample["email"].upper())),
            ("search push token", "/console/search?q=" + sample.get("push_token", "none")),
            ("sessions", "/console/sessions"),
            ("sessions state=live", "/console/sessions?state=live"),
            ("sessions state=ended", "/console/sessions?state=ended"),
            ("sessions kind=verified", "/console/sessions?kind=verified"),
            ("keys", "/console/keys"),
            ("settings", "/console/settings"),
            ("webhooks", "/console/webhooks"),
            ("audit", "/console/audit"),
            ("audit type=profile.blocked", "/console/audit?type=profile.blocked"),
            ("audit actor=secret_key", "/console/audit?actor=secret_key"),
            ("audit profile=", "/console/audit?profile=" + sample["profile"]),
            ("audit from= to=", f"/console/audit?from={week_ago}&to={today}"),
            ("operators", "/console/operators"),
            ("inspector", "/console/inspector"),
        ]
        print(f"\nload average {harness.load_average()} (1/5/15 min) on {os.cpu_count()} cores", flush=True)
        print(f"{'page':<28} {'status':>6} {'first ms':>8} {'p50 ms':>8} {'p95 ms':>8} {'bytes':>9}", flush=True)
        slow, slow_first = [], []
        for name, path in pages:
            if path is None:
                print(f"{name:<28} {'—':>6}  (no next link on the first page)")
                failures.append(name)
                continue
            started = time.perf_counter()
            status, text, _ = client.request("GET", path)  # warm-up (the first request: cold caches, counts)
            first = (time.perf_counter() - started) * 1000
            timings = []
            for _ in range(arguments.requests):
                started = time.perf_counter()
                status, text, _ = client.request("GET", path)
                timings.append((time.perf_counter() - started) * 1000)
            p50, p95 = statistics.median(timings), percentile(timings, 0.95)
            expected = 303 if name.startswith("search") else 200
            flag = ("  SLOW" if p95 > SLOW_MS else "  SLOW first" if first > SLOW_MS else "") + (
                "" if status == expected else f"  (expected {expected})")
            print(f"{name:<28} {status:>6} {first:>8.1f} {p50:>8.1f} {p95:>8.1f} {len(text):>9,}{flag}", flush=True)
            if status != expected:
                failures.append(f"{name}: {status}")
            if p95 > SLOW_MS:
                slow.append(name)
            elif first > SLOW_MS:
                slow_first.append(f"{name} ({first:,.0f} ms)")
        print(f"\nbench-console: {build} build, {arguments.profiles:,} profiles, {arguments.requests} requests per page; "
              f"{len(slow)} page(s) above {SLOW_MS:.0f} ms at p95{': ' + ', '.join(slow) if slow else ''}; "
              f"first request only: {', '.join(slow_first) or 'none'}; "
              f"load average {harness.load_average()}")
    finally:
        harness.stop(server)
        if not arguments.database:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"bench-console: pages that did not answer as expected: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
