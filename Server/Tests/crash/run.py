#!/usr/bin/env python3
"""Crash durability of `tessera serve`: SIGKILL under mixed load, restart, check every acknowledged write.

    Server/Tests/crash/run.py --tessera PATH --database sqlite|postgres [--kills 20]
        [--seconds-between 0.5-2.5] [--seed S] [--workers 6] [--device-races 100] [--postgres-url URL]
        [--self-test] [--keep] [--webhooks] [--webhook-wait 120]

Usually run through `scripts/crash-test`. One run, on one backend:

1. Creates three projects (`tessera projects create --json`; the workers use the first, the others
   only hold sealed values) on a fresh database (SQLite in a temporary directory, or a fresh schema
   of a throwaway PostgreSQL cluster started with `scripts/postgres` in its own TESSERA_PG_DIR),
   under a master key made with `tessera keys generate`, starts `tessera serve` and drives it from
   several client threads with mixed load: anonymous starts and restores, signed identifies
   (promoting or merging the anonymous profile), extensions, heartbeats, revokes (own session,
   `DELETE /v1/sessions/{id}`, admin revoke-all), device registrations, erasures (admin `DELETE`
   profile), blocks and unblocks of profiles, rotations of the publishable key (grace 0 or 3 s) and
   of the secret key (grace 30 or 45 s; the workers switch to a new key once its rotation is
   acknowledged), rotations of the session-JWT signing key, and probes of dead sessions.
   Before the kills, `--device-races` times, a device registration races the end of its session
   (own revoke, `DELETE /v1/sessions/{id}`, admin revoke-all, erasure): 201 or the session's 401,
   never a 5xx, and no device may outlive its session (checked through the API and in the database).
2. Kills the server with SIGKILL at seeded random moments (`--kills` times), restarts it on the same
   database, and lets the clients reconnect. A request whose 2xx reply was read is *acknowledged*;
   one that lost its connection (or got a 5xx) is *unknown*; a 4xx is *rejected* (no effect). An
   API key rotation whose reply was lost is settled after the restart by one more rotation (made
   with the secret key the harness holds). At seeded outages the master key is rotated as
   docs/OPERATIONS.md says (class MasterKeys): a new key N is made; the server restarts with N
   as `--previous-master-key-file` (sometimes) and then with N as `--master-key-file` and the old
   key K as previous; `tessera keys rewrap --master-key-file K --new-master-key-file N` then runs
   against the database while the server serves, and is SIGKILLed at some seeded moments (after
   1–3 committed values, or at the next outage); at the following outage an unfinished rewrap runs
   again, a finished one lets the server restart with N alone. Before every restart the database
   is read directly: every sealed value must be under a key the server is about to get.
3. After every restart (with the clients paused) it checks every fact acknowledged since the
   previous check, plus a sample of older ones; at the end it checks every fact:
   - a session whose end was acknowledged (revoke, `DELETE /v1/sessions/{id}`, admin revoke-all
     sent after the session was acknowledged, identify with it as caller, merge of its anonymous
     profile, erasure of its profile) answers 401 `session_revoked`/`session_not_found`, by token and
     by JWT — never 200 (the worst failure);
   - a session that nothing could have ended still answers 200 for its profile, by token and by JWT,
     with `expires_at` at least the largest acknowledged value (creation or extension);
   - an erased profile answers 404 (itself, its sessions, its devices and its known aliases);
   - a profile that nothing could have erased exists with the kind the acknowledgements imply (a
     merged anonymous profile resolves, as an alias, to the profile it merged into), and
     `?external_id=` finds exactly one verified profile per user;
   - a registered device is listed by the admin API while its session must be alive, and is not
     listed once its session must be dead;
   - the identity token of an acknowledged identify is refused as replayed (its `jti` was stored
     with the session it created);
   - an installation acknowledged once is never answered 201 (created) again;
   - a profile whose block was acknowledged, with no unblock that could have run after it, says
     `blocked: true`, has no live session, and answers `403 profile_blocked` to identify of its user
     and to anonymous restore of its installation (a new session of it acknowledged to a request sent
     after the block's acknowledgement is a violation during load too); after an acknowledged unblock
     that no block can have followed, it says `blocked: false`;
   - an API key whose rotation was acknowledged is refused (401 `invalid_api_key`) once its grace
     has ended (one rotated out with grace 0 is also tried at once, under load, right after the
     acknowledgement), and the current key of each kind works;
   - a session JWT signed after a signing-key rotation was acknowledged (its `iat` later than the
     reply) never carries a `kid` seen before that rotation was sent (checked on every JWT a reply
     carries, during load too);
   - every project's sealed values open: identify with its identity secret works, the session JWT
     it mints verifies, and the project's JWKS serves its `kid`; and the server starts (a master
     key mismatch, or a value that does not open, stops it: a violation that ends the run).
   At the end the server is killed once more and the database is read directly: erased profiles have
   no row left (profile, session, device, alias, installation), no device is bound to an ended
   session, and on SQLite `PRAGMA integrity_check` is `ok` and `PRAGMA foreign_key_check` is empty.
   After the final kill every sealed value is again read directly (under the keys the server holds).
   The events feed (feed.py): a reader polls `GET /v1/admin/events?after=` with the last sequence it
   saw during the whole run, across every kill: a page never goes backwards or repeats an event. At
   the end the feed is read from 0 (pages of 200, following `next_after`) and, with the database read
   directly after the final kill:
   - sequences run 1, 2, 3… with no gap and no repeat, and no event ID appears twice;
   - everything the reader saw is still there at the same sequence, and nothing appeared below the
     last sequence it had been answered (a late commit it skipped);
   - every acknowledged change has exactly one event, found by the IDs of the replies: each session
     (session.created), each profile (profile.created), each session an acknowledged change ended
     (session.ended, whatever ended it first) and none for a session nothing could have ended, each
     device (device.registered) and the removal of those of ended sessions (device.removed), each
     promotion, merge (by its anonymous profile) and erasure; blocks and unblocks of a profile
     alternate and the last one is its state in the database; API key rotations per kind and
     signing-key rotations (by kid) are counted between acknowledged and acknowledged + unknown;
   - an event of a change that was not acknowledged (in flight at a kill) describes what the database
     holds: its session, profile or device exists (or a later event of the feed removed it), an ended
     session is not live, an erased or merged profile and a removed device are gone.
   With `--webhooks` (a server with webhook delivery), a receiver (webhook_receiver.py, the shared local HTTP
   server thread) records every POST with its webhook-id; an endpoint subscribed to the profile, session and
   device types points to it from the start (the server runs with --allow-insecure-webhooks), and it
   answers 500 to the first attempt of a seeded 3 % of events. After the run, the server up, it waits
   (up to --webhook-wait seconds: a delivery leased by a killed server is retried once its 60 s lease
   ends) until every event of a subscribed type after the endpoint's webhook.created was delivered at
   least once (2xx), and checks every delivery's signature (Standard Webhooks v1), that its body is the
   feed's event (id = webhook-id, sequence, type) and that no other type was delivered.
4. Prints a summary (kills survived, acknowledged operations per kind, rotations, master key steps,
   checks, violations, wall time) and exits 1 on any violation. A failing run (a violation, or an
   error that ends it early) keeps its work directory and prints where, with what a failure needs:
   tessera.log (the server's output over every restart), model.json (the harness's record: every
   fact, operation, kill and violation; tokens and keys only as SHA-256 prefixes), feed.json (the
   events feed read at the end, or at the failure while the server still answers) and, on
   PostgreSQL, postgres-server.log (the throwaway cluster's log, copied before it is removed).
   A passing run removes it (unless --keep). `--self-test` also undoes a block,
   revives a rotated-out API key (a row in `retired_api_keys`), besides the lost writes above, and
   in the events table deletes one acknowledged session's session.created, duplicates another's and
   adds one for a session never acknowledged and absent from the database.

The kill moments and each worker's choices are seeded (`--seed`); the interleaving of the threads
is not, so a seed reproduces the shape of a run, not every byte of it. Sessions are created with
60–240 minutes of lifetime, so a run must stay under an hour.

The harness's parts, one concern a file: run.py (the run: arguments, the kill loop, the summary, the
record kept on failure), facts.py (the model of acknowledged facts; pure, unit-tested in
test_model.py), tessera_process.py (the server process, killed and restarted), clients.py (the
worker threads and the device-registration races), checker.py (the checks after each restart),
database.py (direct reads of the database, the self-test's tampering), feed.py and feed_checks.py
(the events feed), webhook_checks.py (the webhook checks, over the shared receiver of
Server/Tests/harness/webhook_receiver.py), master_keys.py (master key rotations between kills).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
import feed  # noqa: E402
import webhook_checks as webhooks  # noqa: E402
from tessera_harness import clean_environment  # noqa: E402
from checker import Checker, settle_rotations  # noqa: E402
from clients import Gate, Worker, device_races  # noqa: E402
from database import Database, check_database, tamper  # noqa: E402
from facts import INF, KeyFact, Model  # noqa: E402
from feed_checks import check_events, check_webhooks  # noqa: E402
from master_keys import MasterKeys  # noqa: E402
from tessera_process import Server  # noqa: E402

# ─── The run ─────────────────────────────────────────────────────────────────────────────────────


class Run:
    def __init__(self, arguments):
        self.arguments = arguments
        self.seed = arguments.seed
        self.model = Model()
        self.gate = Gate()
        self.stopping = threading.Event()
        self.finished_workers = 0
        self.integrity = "n/a"
        self.events_summary = "not read"
        self.webhooks_summary = ""
        self.race_sessions: list[str] = []
        self.port = harness.free_port()
        self.subs = [f"user-{self.seed}-{uuid.uuid4().hex[:6]}-{i}" for i in range(arguments.users)]
        self.extra_projects: list[dict] = []  # more projects, only for their sealed values
        # API keys: the current one of each kind, every one ever acknowledged, and a rotation whose
        # reply was lost (its grace), which the controller settles after the next restart.
        self.keys: dict[str, KeyFact] = {}
        self.key_history: list[KeyFact] = []
        self.key_generation = {"publishable": 0, "secret": 0}
        self.key_pending: dict[str, int | None] = {"publishable": None, "secret": None}
        self.key_locks = {"publishable": threading.Lock(), "secret": threading.Lock()}
        # Session-JWT signing keys: each kid with the seq of the first reply that showed it, and each
        # acknowledged rotation as (wall time of its reply, kids seen before it was sent, its new kid).
        self.signing_lock = threading.Lock()
        self.kids_seen: dict[str, int] = {}
        self.signing_rotations: list[tuple[float, frozenset, str]] = []
        self.seal_rounds = 0
        # For the events feed: acknowledged changes made outside the workers' model (device races, seal
        # checks, settled rotations), and API key rotations per kind as [acknowledged, unknown].
        self.extra_sessions: dict[str, tuple[str, str, str]] = {}  # sid -> (profile, kind, dead/alive)
        self.extra_devices: dict[str, tuple[str, str]] = {}
        self.extra_erased: set[str] = set()
        self.api_rotations = {"publishable": [0, 0], "secret": [0, 0]}
        self.project_updates = 0

    def pk(self) -> str:
        with self.model.lock:
            return self.keys["publishable"].key

    def sk(self) -> str:
        with self.model.lock:
            return self.keys["secret"].key

    def observe_jwt(self, jwt: str | None, send: int, end: int, label: str) -> None:
        """A session JWT signed after a signing-key rotation was acknowledged never has a kid that
        rotation retired (any kid seen before the rotation was sent)."""
        if not jwt:
            return
        try:
            header, payload = harness.jwt_part(jwt, 0), harness.jwt_part(jwt, 1)
        except (ValueError, IndexError):
            self.model.violation(f"[{label}] unreadable session JWT {jwt[:40]}…")
            return
        kid, iat = header.get("kid"), payload.get("iat") or 0
        with self.model.lock:
            self.model.checks += 1
            retired = [(wall, newer) for wall, before, newer in self.signing_rotations if iat > wall + 1 and kid in before]
            self.kids_seen.setdefault(kid, end)
        if retired:
            self.model.violation(f"[{label}] ROTATED-OUT SIGNING KEY: a session JWT issued at {iat} (request seq {send}) "
                                 f"has kid {kid}, retired by the rotation to {retired[-1][1]} acknowledged at "
                                 f"{retired[-1][0]:.0f}")


def parse_between(text: str) -> tuple[float, float]:
    if "-" in text:
        low, high = (float(x) for x in text.split("-", 1))
    else:
        middle = float(text)
        low, high = middle / 2, middle * 1.5
    if not 0 < low <= high:
        raise SystemExit("crash: --seconds-between wants MIN-MAX with 0 < MIN <= MAX, or a mean")
    return low, high


def keep_record(run: "Run", work: str, events: list[dict] | None, cluster, server: "Server | None") -> list[str]:
    """What a failing run leaves for whoever reads it, in its work directory: the model's record
    (model.json: every fact, operation and violation; tokens and keys only as SHA-256 prefixes), the feed (feed.json: read at the end, else
    now from the server if it still answers), and PostgreSQL's server.log (copied before the throwaway
    cluster goes). The server's own log is already there (tessera.log). Returns the files written."""
    written = []
    model = run.model

    def redacted(name: str, value):
        # No credential in the record (tokens, JWTs, keys): a SHA-256 prefix still tells them apart.
        if isinstance(value, str) and name in ("token", "jwt", "key", "secret", "push_token"):
            return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]
        return plain(value)

    def plain(value):
        if dataclasses.is_dataclass(value):
            return {k: redacted(k, v) for k, v in vars(value).items()}
        if isinstance(value, dict):
            return {str(k): redacted(str(k), v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [plain(v) for v in value]
        if isinstance(value, float) and value == INF:
            return "inf"
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        return repr(value)

    try:
        with model.lock:
            record = {
                "seed": run.seed, "arguments": plain(vars(run.arguments)), "violations": list(model.violations),
                "ops": plain(model.ops), "kill_seqs": list(model.kill_seqs), "checks": model.checks,
                "sessions": plain(model.sessions), "profiles": plain(model.profiles),
                "installations": sorted(model.installations), "sub_profile": dict(model.sub_profile),
                "extra_sessions": plain(run.extra_sessions), "extra_devices": plain(run.extra_devices),
                "extra_erased": sorted(run.extra_erased), "race_sessions": list(run.race_sessions),
                "keys": plain(run.key_history), "signing_rotations": plain(run.signing_rotations),
                "events_summary": run.events_summary,
            }
        path = os.path.join(work, "model.json")
        with open(path, "w") as file:
            json.dump(record, file, indent=1)
        written.append(path)
    except Exception as error:  # the record is a help, never a second failure
        print(f"crash: could not write the model's record: {error!r}", file=sys.stderr)
    if events is None and server is not None and server.process and server.process.poll() is None:
        try:
            events, _ = feed.read_feed(lambda path, key: harness.call(run.port, "GET", path, key, timeout=30), run.sk)
        except Exception as error:
            print(f"crash: could not read the feed for the record: {error!r}", file=sys.stderr)
    if events is not None:
        path = os.path.join(work, "feed.json")
        with open(path, "w") as file:
            json.dump(events, file, indent=1)
        written.append(path)
    if cluster is not None and cluster.directory is not None:
        source = os.path.join(str(cluster.directory), "server.log")
        if os.path.exists(source):
            shutil.copy(source, os.path.join(work, "postgres-server.log"))
            written.append(os.path.join(work, "postgres-server.log"))
    written += [os.path.join(work, name) for name in ("tessera.log",) if os.path.exists(os.path.join(work, name))]
    return written


def main() -> int:
    parser = harness.backend_arguments(__doc__)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seconds-between", default="0.5-2.5", help="load between kills: MIN-MAX seconds")
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--users", type=int, default=160, help="distinct signed-in users shared by the workers")
    parser.add_argument("--sample", type=int, default=40, help="older facts re-checked after each restart")
    parser.add_argument("--device-races", type=int, default=100,
                        help="device registrations raced against the end of their session, before the kills")
    parser.add_argument("--webhooks", action="store_true",
                        help="run a webhook receiver, subscribe it at the start (the server runs with "
                             "--allow-insecure-webhooks) and require every event of a subscribed type to be "
                             "delivered at least once after the run (needs a server with webhook delivery)")
    parser.add_argument("--webhook-wait", type=float, default=120,
                        help="seconds to wait for the last deliveries after the run (a delivery leased by a "
                             "killed server is retried once its 60 s lease ends)")
    parser.add_argument("--self-test", action="store_true",
                        help="undo some acknowledged writes in the database during one outage and expect the "
                             "checks to report each (exit 0 when they all do)")
    arguments = harness.parse_seeded(parser, keep="keep the temporary directory and logs")
    low, high = parse_between(arguments.seconds_between)
    run = Run(arguments)
    model = run.model
    wall = time.monotonic()
    work = tempfile.mkdtemp(prefix=f"tessera-crash-{arguments.database}-")
    cluster = None
    print(f"crash: {arguments.database}, seed {arguments.seed}, {arguments.kills} kills, {low:g}-{high:g} s apart, "
          f"{arguments.workers} workers; work dir {work}", flush=True)
    server = None
    receiver = None
    injected: list[str] = []
    events: list[dict] | None = None
    completed = False
    kept: list[str] = []
    try:
        if arguments.database == "sqlite":
            sqlite_path = os.path.join(work, "tessera.sqlite")
            database_url = f"sqlite:{sqlite_path}"
            database = Database("sqlite", sqlite_path=sqlite_path)
        else:
            base_url = arguments.postgres_url
            if not base_url:
                # Not inside `work`: the cluster runs as the postgres user when we are root.
                cluster = harness.PostgresCluster(f"/tmp/tessera-crash-postgres-{os.getpid()}", "crash")
                base_url = cluster.start()
            schema = "crash_" + uuid.uuid4().hex[:12]
            database_url = harness.with_query(base_url, f"schema={schema}")
            database = Database("postgres", postgres_url=base_url, schema=schema)
        master_keys = MasterKeys(run, database_url, database, work, random.Random(f"{arguments.seed}-master-keys"))
        master_key_file = master_keys.current[0]
        for name in ("Crash", "Crash sealed 1", "Crash sealed 2"):
            created = harness.create_project(arguments.tessera, database_url, name,
                                             clean_environment(TESSERA_MASTER_KEY_FILE=master_key_file), what="crash")
            if name == "Crash":
                run.project = created.data
            else:  # more sealed values, for the rewraps; checked after every restart
                run.extra_projects.append(created.data)
        for kind in ("publishable", "secret"):
            run.keys[kind] = KeyFact(kind, run.project[f"{kind}_key"], time.time())
            run.key_history.append(run.keys[kind])
        server = Server(arguments.tessera, database_url, run.port, os.path.join(work, "tessera.log"))
        server.master_key_file = master_key_file
        if arguments.webhooks:
            usage = subprocess.run([arguments.tessera, "serve", "--help"], capture_output=True, text=True,
                                   env=clean_environment(), timeout=60)
            if "--allow-insecure-webhooks" not in usage.stdout + usage.stderr:
                raise SystemExit("crash: --webhooks needs a server with webhook delivery (tessera serve "
                                 "--allow-insecure-webhooks); this one has none")
            receiver = webhooks.Receiver(arguments.seed)
            receiver.start()
            server.options.append("--allow-insecure-webhooks")
        server.start()
        signing = harness.Client(run.port).call("GET", "/v1/admin/signing-keys", run.sk())
        current_kid = next((k["kid"] for k in signing.body.get("signing_keys", []) if k.get("status") == "current"), None)
        if signing.status != 200 or not current_kid:
            raise SystemExit(f"crash: GET /v1/admin/signing-keys answered {signing.status} {signing.code}")
        run.kids_seen[current_kid] = 0
        lifted = harness.lift_rate_limits(run.port, run.project["secret_key"])
        if lifted.status != 200:
            raise SystemExit(f"crash: cannot lift the project's rate limits: {lifted.status} {lifted.code}")
        run.project_updates += 1
        if arguments.webhooks:
            created = harness.Client(run.port).call("POST", "/v1/admin/webhooks", run.sk(),
                                                    {"url": receiver.url, "types": webhooks.SUBSCRIBED})
            if created.status != 201 or not created.body.get("secret"):
                raise SystemExit(f"crash: --webhooks: POST /v1/admin/webhooks answered {created.status} "
                                 f"{created.code} (does this server deliver webhooks?)")
            receiver.secret = created.body["secret"]
            webhook_id = created.body.get("webhook", {}).get("id")
        # A reader of the feed during the whole run, across every kill (check 4 of the events).
        poller = feed.PollerThread(harness.Client(run.port, timeout=10), run.sk, model.violation)
        poller.start()
        device_races(run, arguments.device_races, random.Random(f"{arguments.seed}-races"))

        workers = [Worker(i, run) for i in range(arguments.workers)]
        for worker in workers:
            worker.start()
        alive = lambda: arguments.workers - run.finished_workers  # noqa: E731
        checker = Checker(run)
        kill_rng = random.Random(f"{arguments.seed}-kills")
        check_rng = random.Random(f"{arguments.seed}-checks")
        last_check = 0
        restarts: list[float] = []
        kills = startup_kills = 0
        for index in range(arguments.kills):
            time.sleep(kill_rng.uniform(low, high))
            if run.finished_workers:
                raise SystemExit("crash: a worker stopped (harness error above)")
            server.kill()
            kills += 1
            with model.lock:
                model.kill_seqs.append(next(model._seq))
            run.gate.pause()
            run.gate.wait_parked(alive)
            tampered = arguments.self_test and index == max(1, arguments.kills // 2)
            if tampered:
                injected = tamper(run, database)
            master_keys.before_restart(server, arguments.kills - index - 1)
            if kill_rng.random() < 0.15:
                # Sometimes kill it again while it starts up (opening the database, migrations).
                server.launch()
                time.sleep(kill_rng.uniform(0.0, 0.3))
                server.kill()
                startup_kills += 1
            restarts.append(server.start())
            settle_rotations(run)
            master_keys.after_restart()
            marker = model.seq()
            performed = checker.run_checks(f"after kill {index + 1}", None if tampered else last_check,
                                           arguments.sample, check_rng)
            last_check = marker
            with model.lock:
                acked = sum(v["ack"] for v in model.ops.values())
                unknown = sum(v["unknown"] for v in model.ops.values())
            print(f"kill {index + 1:3d}: restarted in {restarts[-1]:.2f} s; {acked} acknowledged, {unknown} unknown "
                  f"so far; {performed} checks; {len(model.violations)} violations", flush=True)
            run.gate.resume()
        time.sleep(kill_rng.uniform(low, high))
        run.stopping.set()
        run.gate.resume()
        for worker in workers:
            worker.join(timeout=60)
        if any(worker.error for worker in workers):
            raise SystemExit("crash: a worker failed (harness error above)")
        print(f"final: load stopped at {time.monotonic() - wall:.1f} s", flush=True)
        master_keys.finish_rewrap(kill=False)
        settle_rotations(run)
        performed = checker.run_checks("final", None, 0, check_rng)
        print(f"final: {performed} checks of every acknowledged fact (done at {time.monotonic() - wall:.1f} s)",
              flush=True)
        caught = time.monotonic()
        poller.stopping.set()
        poller.join(timeout=30)
        poller.catch_up()
        started = time.monotonic()
        events, feed_problems = feed.read_feed(lambda path, key: checker.call("GET", path, key), run.sk)
        print(f"final: read {len(events)} events from 0 in {time.monotonic() - started:.1f} s (reader caught up in "
              f"{started - caught:.1f} s)", flush=True)
        if arguments.webhooks:
            check_webhooks(run, receiver, events, webhook_id, arguments.webhook_wait)
        server.kill()
        check_database(run, database)
        check_events(run, events, feed_problems, poller, database)
        master_keys.configure(server, *((master_keys.current, []) if master_keys.phase == "stable"
                                        else (master_keys.new, [master_keys.old])))
        completed = True
    finally:
        if not completed or model.violations or arguments.keep:
            kept = keep_record(run, work, events, cluster, server)
        if server:
            server.kill()
        if receiver is not None:
            receiver.stop()
        if cluster is not None:
            cluster.stop()
        if not completed:
            print(f"crash: FAILED before the end (seed {arguments.seed}); work dir kept: {work}\n  "
                  + "\n  ".join(kept), file=sys.stderr, flush=True)

    seconds = time.monotonic() - wall
    with model.lock:
        states = [model.session_status(f)[0] for f in model.sessions.values()]
    print(f"\n━━ crash summary ({arguments.database}, seed {arguments.seed})")
    print(f"kills survived:          {kills} under load + {startup_kills} during start-up + 1 final (SIGKILL; "
          f"restart median {sorted(restarts)[len(restarts) // 2] if restarts else 0:.2f} s)")
    total = {key: sum(v[key] for v in model.ops.values()) for key in ("ack", "unknown", "rejected", "refused")}
    print(f"operations acknowledged: {total['ack']} (unknown {total['unknown']}, rejected {total['rejected']}, "
          f"refused while down {total['refused']})")
    for kind in sorted(model.ops):
        counts = model.ops[kind]
        print(f"  {kind:18s} {counts['ack']:6d} acknowledged {counts['unknown']:5d} unknown "
              f"{counts['rejected']:5d} rejected" + (f" ({counts['5xx']} answered 5xx)" if counts["5xx"] else ""))
    print(f"sessions tracked:        {len(states)} ({states.count('alive')} must live, {states.count('dead')} must be "
          f"dead, {states.count('unknown')} unknown)")
    print(f"profiles tracked:        {len(model.profiles)}")
    print(f"checks performed:        {model.checks} (lost replies checked all-or-nothing: "
          f"{model.resolved['identify']} identifies, {model.resolved['erase']} erasures)")
    with model.lock:
        blocked = sum(model.block_state(p) == "blocked" for p in model.profiles.values())
    print(f"rotations:               {len(run.key_history) - 2} API keys, {len(run.signing_rotations)} signing keys "
          f"acknowledged; {blocked} profiles must be blocked")
    print("master keys:             " + ", ".join(f"{v} {k}" for k, v in master_keys.stats.items()))
    print(f"sqlite integrity_check:  {run.integrity}")
    print(f"events:                  {run.events_summary}")
    if run.webhooks_summary:
        print(f"webhooks:                {run.webhooks_summary}")
    print(f"violations:              {len(model.violations)}")
    for text in model.violations[:30]:
        print("  " + text)
    print(f"wall time:               {seconds:.1f} s")
    if arguments.self_test:
        missed = [marker for marker in injected if not any(marker in text for text in model.violations)]
        if missed or len(injected) < 5:
            print(f"crash self-test: FAILED: injected {injected}, not reported: {missed}; work dir kept: {work}")
            return 1
        print(f"crash self-test: passed: all {len(injected)} injected lost writes were reported")
        if arguments.keep:
            print(f"crash: work dir kept (--keep): {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    if model.violations:
        print(f"crash: FAILED (reproduce the shape with --seed {arguments.seed}); work dir kept: {work}")
        for path in kept:
            print(f"  {path}")
        return 1
    if arguments.keep:
        print(f"crash: work dir kept (--keep): {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("crash: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
