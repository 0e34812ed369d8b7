"""The crash harness's checks after each restart: every acknowledged fact still holds on the live server."""

from __future__ import annotations

import concurrent.futures
import random
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
from tessera_harness import Reply, epoch  # noqa: E402
from facts import DEAD_CODES, Event, KeyFact, ProfileFact, SessionFact, identity_token  # noqa: E402

if TYPE_CHECKING:
    from run import Run

# ─── Checks ──────────────────────────────────────────────────────────────────────────────────────


class Checker:
    def __init__(self, run: "Run"):
        self.run_, self.model = run, run.model
        self.local = threading.local()

    def http(self) -> harness.Client:
        if not hasattr(self.local, "http"):
            self.local.http = harness.Client(self.run_.port, timeout=30)
        return self.local.http

    def call(self, method, path, bearer, body=None) -> Reply:
        for _ in range(3):
            reply = self.http().call(method, path, bearer, body)
            if reply.status:
                return reply
            self.http().reset()
            time.sleep(0.2)
        return reply

    def expect(self, condition: bool, text: str) -> None:
        with self.model.lock:
            self.model.checks += 1
        if not condition:
            self.model.violation(text)

    def check_session(self, fact: SessionFact, status: str, why: str, label: str) -> None:
        for name, credential in (("token", fact.token), ("jwt", fact.jwt)):
            if not credential:
                continue
            reply = self.call("POST", "/v1/sessions/authenticate", credential)
            if reply.status == 0 or reply.status >= 500:
                self.expect(False, f"[{label}] session {fact.sid} by {name}: no answer ({reply.status} {reply.failure})")
                continue
            if status == "dead":
                self.expect(reply.status == 401 and reply.code in DEAD_CODES,
                            f"[{label}] {'DEAD SESSION CAME BACK' if reply.ok else 'unexpected answer'}: {fact.sid} ({fact.origin}, profile {fact.profile_id})"
                            f" must be dead: {why}; by {name} it answered {reply.status} {reply.code}")
            elif status == "alive":
                self.expect(reply.status == 200,
                            f"[{label}] LOST SESSION: {fact.sid} ({fact.origin}, profile {fact.profile_id}, acked seq "
                            f"{fact.ack}) must be alive; by {name} it answered {reply.status} {reply.code}")
            if reply.status == 200:
                expires = epoch(reply.body.get("session", {}).get("expires_at")) or 0
                self.expect(expires >= fact.min_expires,
                            f"[{label}] LOST EXTENSION: session {fact.sid} expires_at {expires} < acknowledged "
                            f"{fact.min_expires}")
                self.expect(reply.body.get("profile", {}).get("id") == fact.profile_id,
                            f"[{label}] session {fact.sid} moved from profile {fact.profile_id} to "
                            f"{reply.body.get('profile', {}).get('id')}")

    def check_devices(self, record: ProfileFact, facts: list[tuple[SessionFact, str]], label: str) -> None:
        reply = self.call("GET", f"/v1/admin/profiles/{record.pid}/devices", self.run_.sk())
        if reply.status == 404:
            for fact, status in facts:
                self.expect(status != "alive" or not fact.devices,
                            f"[{label}] profile {record.pid} is gone but session {fact.sid} must be alive with devices")
            return
        if reply.status != 200:
            self.expect(False, f"[{label}] devices of {record.pid}: {reply.status} {reply.code}")
            return
        listed = {d.get("id") for d in reply.body.get("devices", [])}
        for fact, status in facts:
            for device in fact.devices:
                if status == "alive":
                    self.expect(device.did in listed, f"[{label}] LOST DEVICE: {device.did} of live session "
                                                      f"{fact.sid} (profile {record.pid}) is not listed")
                elif status == "dead":
                    self.expect(device.did not in listed,
                                f"[{label}] DEVICE OF ENDED SESSION: {device.did} of {fact.sid} still listed")

    def check_profile(self, record: ProfileFact, label: str) -> None:
        secret = self.run_.sk()
        with self.model.lock:
            state, target = self.model.profile_state(record)
            target_state = self.model.profile_state(self.model.profiles[target])[0] \
                if state == "alias" and target in self.model.profiles else None
            identified = record.identified or any(e.kind == "promote" and e.acked for e in record.events)
            facts = [(self.model.sessions[sid], self.model.session_status(self.model.sessions[sid])[0])
                     for sid in record.sessions]
        if state == "erased":
            for path in ("", "/sessions", "/devices"):
                reply = self.call("GET", f"/v1/admin/profiles/{record.pid}{path}", secret)
                self.expect(reply.status == 404, f"[{label}] ERASED PROFILE CAME BACK: GET "
                                                 f"/v1/admin/profiles/{record.pid}{path} answered {reply.status}")
            with self.model.lock:
                aliases = [p.pid for p in self.model.profiles.values() if p.merged_into == record.pid]
            for alias in aliases:
                reply = self.call("GET", f"/v1/admin/profiles/{alias}", secret)
                self.expect(reply.status == 404, f"[{label}] ALIAS OF ERASED PROFILE: {alias} (of {record.pid}) "
                                                 f"answered {reply.status}")
            return
        if state == "alias":
            if target_state not in ("exists", "erased"):
                return
            reply = self.call("GET", f"/v1/admin/profiles/{record.pid}", secret)
            if target_state == "erased":
                self.expect(reply.status == 404, f"[{label}] alias {record.pid} of erased {target}: {reply.status}")
            else:
                self.expect(reply.status == 200 and reply.body.get("profile", {}).get("id") == target,
                            f"[{label}] LOST MERGE: alias {record.pid} should resolve to {target}, answered "
                            f"{reply.status} {reply.body.get('profile', {}).get('id')}")
            return
        if state != "exists":
            return
        reply = self.call("GET", f"/v1/admin/profiles/{record.pid}", secret)
        profile = reply.body.get("profile", {})
        self.expect(reply.status == 200 and profile.get("id") == record.pid,
                    f"[{label}] LOST PROFILE: {record.pid} answered {reply.status} {profile.get('id')}")
        if reply.status == 200 and identified:
            self.expect(profile.get("kind") == "identified" and profile.get("verified") is True,
                        f"[{label}] LOST IDENTIFY: profile {record.pid} should be identified, is {profile}")
        self.check_devices(record, facts, label)
        if reply.status == 200:
            self.check_block(record, profile, label)

    def check_block(self, record: ProfileFact, profile: dict, label: str) -> None:
        """A block whose acknowledgement no unblock can have followed stands: the profile says so, and
        identify of its user and anonymous restore of its installation answer 403 `profile_blocked`
        (its sessions are checked dead with the others). An acknowledged unblock stands too."""
        with self.model.lock:
            state = self.model.block_state(record)
            ever = any(e.kind == "block" for e in record.events)
            sub = record.sub or next((e.detail for e in record.events if e.kind == "promote" and e.acked), None)
            sub_is_it = sub is not None and self.model.sub_profile.get(sub) == record.pid
            plain_anonymous = record.installation is not None and all(
                e.kind in ("block", "unblock", "revoke_all") for e in record.events)
        if state == "unblocked" and ever:
            self.expect(profile.get("blocked") is False,
                        f"[{label}] UNBLOCK UNDONE: profile {record.pid} answers blocked {profile.get('blocked')}")
        if state != "blocked":
            return
        self.expect(profile.get("blocked") is True,
                    f"[{label}] BLOCK UNDONE: profile {record.pid} answers blocked {profile.get('blocked')}")
        if sub_is_it and profile.get("external_id") == sub:
            project = self.run_.project
            token = identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"], sub,
                                   uuid.uuid4().hex)[0]
            reply = self.call("POST", "/v1/sessions/identify", self.run_.pk(), {"identity_token": token})
            self.expect(reply.status == 403 and reply.code == "profile_blocked",
                        f"[{label}] BLOCK UNDONE: identify of {sub} (blocked profile {record.pid}) answered "
                        f"{reply.status} {reply.code}")
        if plain_anonymous:
            installation, secret = record.installation
            reply = self.call("POST", "/v1/sessions/anonymous", self.run_.pk(),
                              {"installation_id": installation, "installation_secret": secret})
            self.expect(reply.status == 403 and reply.code == "profile_blocked",
                        f"[{label}] BLOCK UNDONE: anonymous restore of blocked profile {record.pid} answered "
                        f"{reply.status} {reply.code}")
        sessions = self.call("GET", f"/v1/admin/profiles/{record.pid}/sessions", self.run_.sk())
        live = [x.get("id") for x in sessions.body.get("sessions", [])]  # it lists live sessions only
        self.expect(sessions.status == 200 and not live,
                    f"[{label}] BLOCK UNDONE: blocked profile {record.pid} has live sessions {live} "
                    f"({sessions.status})")

    def check_keys(self, label: str) -> None:
        """Every API key whose grace ended is refused; the current key of each kind works."""
        now = time.time()
        with self.model.lock:
            facts = [(f, f.dead_after is not None and now > f.dead_after,
                      f.live and self.run_.keys[f.kind] is f and self.run_.key_pending[f.kind] is None)
                     for f in self.run_.key_history]
        for fact, dead, live in facts:
            if not dead and not live:
                continue
            if fact.kind == "secret":
                reply = self.call("GET", "/v1/admin/project", fact.key)
                works = reply.status == 200
            else:  # an empty identify: 400 past the key check, 401 at it
                reply = self.call("POST", "/v1/sessions/identify", fact.key, {})
                works = reply.status == 400
            if dead:
                self.expect(reply.status == 401 and reply.code == "invalid_api_key",
                            f"[{label}] ROTATED-OUT API KEY CAME BACK: the {fact.kind} key acknowledged at "
                            f"{fact.ack_wall:.0f}, whose grace ended at {fact.dead_after:.0f}, answered "
                            f"{reply.status} {reply.code}")
            else:
                self.expect(works, f"[{label}] LOST API KEY ROTATION: the current {fact.kind} key (acknowledged at "
                                   f"{fact.ack_wall:.0f}) answered {reply.status} {reply.code}")

    def check_seals(self, label: str) -> None:
        """Every project's sealed values open: identify with its identity secret mints a session whose
        JWT verifies, and its JWKS serves the JWT's key."""
        self.run_.seal_rounds += 1
        projects = [dict(self.run_.project, publishable_key=self.run_.pk())] + self.run_.extra_projects
        for index, project in enumerate(projects):
            sub = f"seal-{self.run_.seed}-{self.run_.seal_rounds}-{index}"
            token = identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"], sub,
                                   uuid.uuid4().hex)[0]
            send = self.model.seq()
            reply = self.call("POST", "/v1/sessions/identify", project["publishable_key"], {"identity_token": token})
            end = self.model.seq()
            jwt = reply.body.get("session_jwt")
            self.expect(reply.status == 200 and jwt, f"[{label}] SEALED VALUE LOST: identify on project "
                                                     f"{project['project_id']} answered {reply.status} {reply.code}")
            if reply.status != 200 or not jwt:
                continue
            if index == 0:
                self.run_.observe_jwt(jwt, send, end, label + " (fresh JWT)")
                with self.model.lock:  # nothing ends it: its events must say so
                    self.run_.extra_sessions[reply.body["session"]["id"]] = (
                        reply.body["profile"]["id"], reply.body["session"].get("kind", ""), "alive")
            kid = harness.kid_of(jwt)
            jwks = self.call("GET", f"/v1/projects/{project['project_id']}/jwks.json", None)
            kids = [k.get("kid") for k in jwks.body.get("keys", [])]
            self.expect(jwks.status == 200 and kid in kids,
                        f"[{label}] SEALED VALUE LOST: JWKS of {project['project_id']} answered {jwks.status} "
                        f"without the signing kid {kid} ({kids})")
            verified = self.call("POST", "/v1/sessions/authenticate", jwt)
            self.expect(verified.status == 200, f"[{label}] SEALED VALUE LOST: a fresh JWT of project "
                                                f"{project['project_id']} answered {verified.status} {verified.code}")

    def check_unknown_identify(self, caller: SessionFact, event: Event, label: str) -> None:
        """An identify whose reply was lost applied entirely or not at all: the calling anonymous
        session still works on an anonymous profile, or it ended and the profile is the user's."""
        with self.model.lock:
            record = self.model.profiles[caller.profile_id]
            if caller.events != [e for e in caller.events if e.kind == "identify_caller"] or len(caller.events) != 1 \
                    or record.events != [event]:
                return  # something else touched them too: nothing certain to check
            self.model.resolved["identify"] += 1
            erased_since = any(e.kind == "erase" and e.send > event.send for p in self.model.profiles.values()
                               if p.sub == event.detail for e in p.events)
        reply = self.call("POST", "/v1/sessions/authenticate", caller.token)
        if reply.status == 200:
            profile = reply.body.get("profile", {})
            self.expect(profile.get("id") == caller.profile_id and profile.get("kind") == "anonymous",
                        f"[{label}] HALF-APPLIED IDENTIFY: caller {caller.sid} still works but its profile is {profile}")
            return
        self.expect(reply.status == 401, f"[{label}] caller {caller.sid} of a lost identify: {reply.status}")
        found = self.call("GET", f"/v1/admin/profiles/{caller.profile_id}", self.run_.sk())
        profile = found.body.get("profile", {})
        self.expect(
            (found.status == 200 and profile.get("kind") == "identified" and profile.get("external_id") == event.detail)
            or (found.status == 404 and erased_since),
            f"[{label}] HALF-APPLIED IDENTIFY: caller {caller.sid} ended ({reply.code}) but its profile "
            f"{caller.profile_id} answers {found.status} {profile}")

    def check_unknown_erase(self, pid: str, event: Event, label: str) -> None:
        """An erasure whose reply was lost applied entirely or not at all."""
        with self.model.lock:
            record = self.model.profiles[pid]
            if [e for e in record.events if e.kind in ("erase", "merge", "identify_unknown")] != [event]:
                return
            self.model.resolved["erase"] += 1
        found = self.call("GET", f"/v1/admin/profiles/{pid}", self.run_.sk())
        if found.status not in (200, 404):
            self.expect(False, f"[{label}] profile {pid} of a lost erasure: {found.status} {found.code}")
            return
        applied = found.status == 404
        with self.model.lock:
            facts = [self.model.sessions[sid] for sid in record.sessions]
            statuses = [(f, *self.model.session_status(f, resolved=(event, applied))) for f in facts]
        for fact, status, why in statuses:
            self.check_session(fact, status, f"lost erasure {'applied' if applied else 'not applied'}: {why}",
                               label + " (lost erasure of " + pid + ")")

    def check_sub(self, sub: str, label: str) -> None:
        reply = self.call("GET", f"/v1/admin/profiles?external_id={sub}", self.run_.sk())
        verified = [p.get("id") for p in reply.body.get("profiles", []) if p.get("verified")]
        self.expect(reply.status == 200 and len(verified) <= 1,
                    f"[{label}] user {sub} has {len(verified)} verified profiles: {verified}")
        with self.model.lock:
            expected = self.model.sub_profile.get(sub)
            record = self.model.profiles.get(expected) if expected else None
            # The newest acknowledged profile stands unless something could have erased it.
            certain = record is not None and not any(e.kind == "erase" for e in record.events)
        if certain:
            self.expect(verified == [expected], f"[{label}] LOST USER: {sub} should be {expected}, found {verified}")

    def check_replay(self, token: str, label: str) -> None:
        reply = self.call("POST", "/v1/sessions/identify", self.run_.pk(),
                          {"identity_token": token})
        self.expect(reply.status == 401 and reply.code == "identity_token_replayed",
                    f"[{label}] LOST JTI: an acknowledged identify's token was accepted again ({reply.status} "
                    f"{reply.code})")

    def run_checks(self, label: str, since: int | None, sample: int, rng: random.Random) -> int:
        """Checks facts touched after `since` (all when None) plus `sample` older ones; returns the count."""
        before = self.model.checks
        with self.model.lock:
            sessions = list(self.model.sessions.values())
            profiles = list(self.model.profiles.values())
            subs = list(self.model.sub_profile)
            tokens = list(self.model.identify_tokens)
            if since is not None:
                recent_s = [f for f in sessions if f.touched > since]
                older_s = [f for f in sessions if f.touched <= since]
                sessions = recent_s + rng.sample(older_s, min(sample, len(older_s)))
                recent_p = [p for p in profiles if p.touched > since]
                older_p = [p for p in profiles if p.touched <= since]
                profiles = recent_p + rng.sample(older_p, min(sample // 2, len(older_p)))
                subs = rng.sample(subs, min(4, len(subs)))
                tokens = [t for t in tokens if t[2] > since] + rng.sample(tokens, min(3, len(tokens)))
            statuses = [(f, *self.model.session_status(f)) for f in sessions]
            unknown_identifies = [(c, e) for c, e in self.model.unknown_identifies
                                  if since is None or e.send > since or c.touched > since]
            unknown_erases = [(p, e) for p, e in self.model.unknown_erases if since is None or e.send > since]
        now = time.time()
        tokens = [t for t in tokens if t[1] - now > 30]
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            jobs = [pool.submit(self.check_session, f, status, why, label) for f, status, why in statuses]
            jobs += [pool.submit(self.check_profile, p, label) for p in profiles]
            jobs += [pool.submit(self.check_sub, s, label) for s in subs]
            jobs += [pool.submit(self.check_replay, t[0], label) for t in tokens]
            jobs += [pool.submit(self.check_unknown_identify, c, e, label) for c, e in unknown_identifies]
            jobs += [pool.submit(self.check_unknown_erase, p, e, label) for p, e in unknown_erases]
            jobs += [pool.submit(self.check_keys, label), pool.submit(self.check_seals, label)]
            for job in jobs:
                job.result()
        return self.model.checks - before


def settle_rotations(run: "Run") -> None:
    """After a restart: an API key rotation whose reply was lost left the new key unknown (and, with
    grace 0, maybe the old one dead): rotate once more, with the secret key the harness holds (a lost
    secret rotation's old key is inside its grace of 30 s or more), and use the new key."""
    for kind in ("publishable", "secret"):
        with run.model.lock:
            grace = run.key_pending[kind]
        if grace is None:
            continue
        http = harness.Client(run.port, timeout=30)
        for _ in range(5):
            reply = http.call("POST", "/v1/admin/api-keys/rotate", run.sk(),
                              {"kind": kind, "grace_seconds": 0 if kind == "publishable" else 30})
            if reply.status:
                break
            http.reset()
            time.sleep(0.2)
        body = reply.body.get("api_key", {})
        if not reply.ok or not body.get("key"):
            raise SystemExit(f"VIOLATION LOST API KEY: settling a lost rotation of the {kind} key answered "
                             f"{reply.status} {reply.code}")
        expires = epoch(body.get("previous_key_expires_at")) or 0
        with run.model.lock:
            run.api_rotations[kind][0] += 1
            old = run.keys[kind]
            # Retired by the lost rotation (at the latest, grace seconds from now) or by this one.
            old.dead_after = max(time.time() + grace, expires) + 1.5
            fact = KeyFact(kind, body["key"], time.time())
            run.keys[kind] = fact
            run.key_history.append(fact)
            run.key_generation[kind] += 1
            run.key_pending[kind] = None
