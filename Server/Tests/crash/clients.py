"""The crash harness's load: worker threads driving a live server, and device registrations racing the
end of their session. Every answer is recorded in the model (facts.py)."""

from __future__ import annotations

import random
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402
from tessera_harness import Reply, b64url as b64, epoch  # noqa: E402
from facts import DEAD_CODES, DeviceFact, Event, KeyFact, SessionFact, identity_token  # noqa: E402

if TYPE_CHECKING:
    from run import Run

# ─── Clients ─────────────────────────────────────────────────────────────────────────────────────


class Gate:
    """Lets the controller pause every worker between two requests and wait until all are parked."""

    def __init__(self):
        self.condition = threading.Condition()
        self.paused = False
        self.parked = 0

    def checkpoint(self, worker) -> None:
        with self.condition:
            if not self.paused:
                return
            self.parked += 1
            self.condition.notify_all()
            while self.paused:
                self.condition.wait()
            self.parked -= 1
        worker.http.reset()

    def pause(self) -> None:
        with self.condition:
            self.paused = True

    def wait_parked(self, alive, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        with self.condition:
            while self.parked < alive():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SystemExit("crash: the workers did not pause in time")
                self.condition.wait(remaining)

    def resume(self) -> None:
        with self.condition:
            self.paused = False
            self.condition.notify_all()


@dataclass
class Device:
    installation_id: str
    installation_secret: str
    session: SessionFact | None = None
    uncertain: bool = False
    anon_profile: str | None = None  # the anonymous profile the installation was last acknowledged with


class Worker(threading.Thread):
    WEIGHTS = {
        "start": 8, "identify": 14, "extend": 12, "heartbeat": 8, "revoke": 5, "delete_session": 4,
        "admin_revoke_all": 1, "device": 12, "erase": 1, "probe": 6, "block": 1, "unblock": 1,
        "rotate_api_key": 0.5, "rotate_signing_key": 0.4,
    }

    def __init__(self, index: int, run: "Run"):
        super().__init__(name=f"worker-{index}", daemon=True)
        self.index, self.run_, self.model = index, run, run.model
        self.rng = random.Random(f"{run.seed}-worker-{index}")
        self.http = harness.Client(run.port)
        self.devices = [self.new_device() for _ in range(3)]
        self.error: BaseException | None = None

    def new_device(self) -> Device:
        return Device(str(uuid.UUID(int=self.rng.getrandbits(128), version=4)), b64(self.rng.randbytes(32)))

    def run(self) -> None:
        try:
            kinds, weights = zip(*self.WEIGHTS.items())
            while not self.run_.stopping.is_set():
                self.run_.gate.checkpoint(self)
                if self.run_.stopping.is_set():
                    break
                device = self.rng.choice(self.devices)
                kind = self.rng.choices(kinds, weights)[0]
                if device.session is None or device.uncertain:
                    kind = "start"
                getattr(self, "op_" + kind)(device)
        except BaseException as error:  # a harness bug must stop the run loudly
            self.error = error
            import traceback
            traceback.print_exc()
        finally:
            with self.run_.gate.condition:
                self.run_.finished_workers += 1
                self.run_.gate.condition.notify_all()

    # One request: returns (reply, send seq, end seq) and counts it.
    def request(self, kind: str, method: str, path: str, bearer: str | None, body: object = None):
        send = self.model.seq()
        reply = self.http.call(method, path, bearer, body)
        end = self.model.end_of(send, reply)
        self.model.count(kind, reply.outcome if reply.failure != "refused" else "refused")
        if reply.status >= 500:
            self.model.count(kind, "5xx")
        if reply.failure == "refused":
            time.sleep(0.05)  # the server is down: the controller pauses the workers soon
        return reply, send, end

    def session_lost(self, device: Device, reply: Reply) -> None:
        """A 401 for the device's own session: the device signs in again (anonymously)."""
        if reply.status == 401 and device.session is not None:
            device.session = None

    def op_start(self, device: Device) -> None:
        if self.rng.random() < 0.08:
            fresh = self.new_device()
            device.installation_id, device.installation_secret = fresh.installation_id, fresh.installation_secret
            device.anon_profile = None
        body = {"installation_id": device.installation_id, "installation_secret": device.installation_secret,
                "session_duration_minutes": self.rng.randint(60, 240)}
        generation = self.run_.key_generation["publishable"]
        reply, send, end = self.request("anonymous_start", "POST", "/v1/sessions/anonymous",
                                        self.run_.pk(), body)
        if reply.outcome == "unknown":
            device.uncertain, device.session = True, None
            return
        if not reply.ok:
            if reply.status == 403 and reply.code == "profile_blocked":
                # Its anonymous profile was blocked: this app installation starts over.
                fresh = self.new_device()
                device.installation_id, device.installation_secret = fresh.installation_id, fresh.installation_secret
                device.anon_profile = None
                return
            if reply.status == 401 and reply.code == "invalid_api_key" and self.key_rotated("publishable", generation):
                return  # the publishable key was rotated meanwhile
            if 400 <= reply.status < 500 and reply.status != 429:
                with self.model.lock:
                    current = self.run_.keys["publishable"]
                    detail = (f" (publishable key #{self.run_.key_history.index(current)} acknowledged "
                              f"{time.time() - current.ack_wall:.1f} s ago)" if reply.status == 401 else "")
                self.model.violation(f"anonymous start rejected: {reply.status} {reply.code}{detail}")
            return
        fact = self.model.add_session(reply.body, send, end, "anonymous_start")
        self.run_.observe_jwt(fact.jwt, send, end, "anonymous start")
        self.not_blocked(fact.profile_id, send, "anonymous restore")
        with self.model.lock:
            known = device.installation_id in self.model.installations
            self.model.installations.add(device.installation_id)
            # The installation keeps its anonymous profile unless that profile was identified or erased.
            previous = self.model.profiles.get(device.anon_profile) if device.anon_profile else None
            expected = previous.pid if previous is not None and not previous.events else None
            self.model.checks += 1
        if known and reply.status == 201:
            self.model.violation(
                f"LOST INSTALLATION: {device.installation_id}, acknowledged before, was created again (201)")
        if expected and fact.profile_id != expected:
            self.model.violation(f"LOST INSTALLATION PROFILE: {device.installation_id} restored profile "
                                 f"{fact.profile_id}, expected {expected}")
        device.session, device.uncertain, device.anon_profile = fact, False, fact.profile_id
        with self.model.lock:
            record = self.model.profiles[fact.profile_id]
            if record.installation is None and fact.kind == "anonymous":
                record.installation = (device.installation_id, device.installation_secret)

    def key_rotated(self, kind: str, generation: int) -> bool:
        """Whether a rotation of the kind was sent since `generation` was read, is in flight (it may
        have retired the key before its own reply came), or is left unsettled."""
        with self.model.lock:
            return self.run_.key_generation[kind] != generation or self.run_.key_pending[kind] is not None \
                or self.run_.key_locks[kind].locked()

    def not_blocked(self, pid: str, send: int, what: str) -> None:
        """A new session of a profile whose block was acknowledged before the request was sent."""
        with self.model.lock:
            record = self.model.profiles.get(pid)
            blocked = record is not None and self.model.block_state(record, before=send) == "blocked"
            self.model.checks += 1
        if blocked:
            self.model.violation(f"BLOCK UNDONE: {what} (sent at seq {send}) gave a session of blocked profile {pid}")

    def op_identify(self, device: Device) -> None:
        project = self.run_.project
        sub = self.rng.choice(self.run_.subs)
        jti = uuid.UUID(int=self.rng.getrandbits(128), version=4).hex
        token, exp = identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"], sub, jti)
        caller = device.session
        with_caller = caller.kind == "anonymous" and self.rng.random() < 0.85
        body = {"identity_token": token, "session_duration_minutes": self.rng.randint(60, 240)}
        bearer = caller.token if with_caller else self.run_.pk()
        reply, send, end = self.request("identify", "POST", "/v1/sessions/identify", bearer, body)
        outcome = reply.outcome
        if outcome == "rejected":
            if with_caller:
                self.session_lost(device, reply)
            if 400 <= reply.status < 500 and reply.status not in (401, 409, 429) \
                    and (reply.status, reply.code) != (403, "profile_blocked"):
                self.model.violation(f"identify rejected: {reply.status} {reply.code}")
            return
        if outcome == "unknown":
            if with_caller:
                self.model.session_event(caller.sid, Event("identify_caller", send, end, False))
                event = Event("identify_unknown", send, end, False, sub)
                self.model.profile_event(caller.profile_id, event)
                with self.model.lock:
                    self.model.unknown_identifies.append((caller, event))
            device.uncertain, device.session = True, None
            return
        fact = self.model.add_session(reply.body, send, end, "identify")
        self.run_.observe_jwt(fact.jwt, send, end, "identify")
        self.not_blocked(fact.profile_id, send, f"identify of {sub}")
        merge = reply.body.get("merge")
        with self.model.lock:
            self.model.identify_tokens.append((token, exp, end))
            self.model.sub_profile[sub] = fact.profile_id
        self.model.checks += 1
        if reply.body.get("profile", {}).get("external_id") != sub or fact.kind != "verified":
            self.model.violation(f"identify of {sub} answered profile {reply.body.get('profile')}")
        if with_caller:
            self.model.session_event(caller.sid, Event("identify_caller", send, end, True, fact.sid))
            outcome_name = (merge or {}).get("outcome")
            if (merge or {}).get("from_profile_id") != caller.profile_id or outcome_name not in ("promoted", "merged"):
                self.model.violation(f"identify from anonymous {caller.profile_id} answered merge {merge}")
            elif outcome_name == "merged":
                with self.model.lock:
                    self.model.profile(caller.profile_id).merged_into = fact.profile_id
                    self.model.merged_profiles.add(caller.profile_id)
                self.model.profile_event(caller.profile_id, Event("merge", send, end, True, fact.profile_id))
            else:
                if fact.profile_id != caller.profile_id:
                    self.model.violation(f"promoted identify gave {fact.profile_id}, not {caller.profile_id}")
                self.model.profile_event(caller.profile_id, Event("promote", send, end, True, sub, fact.sid))
        device.session = fact

    def op_extend(self, device: Device) -> None:
        fact = device.session
        minutes = self.rng.randint(60, 43200)
        reply, send, end = self.request("extend", "POST", "/v1/sessions/authenticate", fact.token,
                                        {"session_duration_minutes": minutes})
        if reply.ok:
            expires = epoch(reply.body.get("session", {}).get("expires_at")) or 0
            with self.model.lock:
                fact.min_expires = max(fact.min_expires, expires)
                fact.touched = end
                if reply.body.get("session_jwt"):
                    fact.jwt = reply.body["session_jwt"]
            self.run_.observe_jwt(reply.body.get("session_jwt"), send, end, "extend")
        elif reply.outcome == "unknown":
            pass  # an unknown extension only ever raises expires_at: nothing to record
        else:
            self.session_lost(device, reply)

    def op_heartbeat(self, device: Device) -> None:
        fact = device.session
        use_jwt = self.rng.random() < 0.3 and fact.jwt
        reply, _, _ = self.request("heartbeat", "POST", "/v1/sessions/authenticate",
                                   fact.jwt if use_jwt else fact.token)
        if reply.ok:
            expires = epoch(reply.body.get("session", {}).get("expires_at")) or 0
            self.model.checks += 1
            if expires < fact.min_expires:
                self.model.violation(
                    f"session {fact.sid}: heartbeat expires_at {expires} < acknowledged {fact.min_expires}")
        else:
            self.session_lost(device, reply)

    def op_revoke(self, device: Device) -> None:
        fact = device.session
        reply, send, end = self.request("revoke", "POST", "/v1/sessions/revoke", fact.token, {})
        if reply.outcome != "rejected":
            self.model.session_event(fact.sid, Event("revoke", send, end, reply.ok, "self"))
        device.session = None

    def op_delete_session(self, device: Device) -> None:
        fact = device.session
        listed = self.request("list_sessions", "GET", "/v1/sessions", fact.token)[0]
        if not listed.ok:
            self.session_lost(device, listed)
            return
        ids = [s.get("id") for s in listed.body.get("sessions", [])]
        if not ids:
            self.model.violation(f"session {fact.sid}: GET /v1/sessions lists no session, not even its own")
            return
        target = self.rng.choice(ids)
        reply, send, end = self.request("delete_session", "DELETE", f"/v1/sessions/{target}", fact.token)
        if reply.outcome != "rejected":
            self.model.session_event(target, Event("revoke", send, end, reply.ok, "DELETE by " + fact.sid))
        else:
            self.session_lost(device, reply)
        if target == fact.sid:
            device.session = None

    def pick_profile(self, device: Device) -> str | None:
        if self.rng.random() < 0.35:
            return device.session.profile_id
        with self.model.lock:
            choices = list(self.model.sub_profile.values())
        return self.rng.choice(choices) if choices else None

    def op_admin_revoke_all(self, device: Device) -> None:
        target = self.pick_profile(device)
        if target is None:
            return
        reply, send, end = self.request("admin_revoke_all", "POST", f"/v1/admin/profiles/{target}/sessions/revoke",
                                        self.run_.sk(), {})
        if reply.outcome != "rejected":
            self.model.profile_event(target, Event("revoke_all", send, end, reply.ok))

    def op_erase(self, device: Device) -> None:
        target = self.pick_profile(device)
        if target is None:
            return
        with self.model.lock:
            record = self.model.profiles.get(target)
            # An alias ID erases the profile it resolves to: erase only IDs that are no alias.
            if record is None or record.merged_into or any(e.kind in ("merge", "identify_unknown")
                                                            for e in record.events):
                return
        reply, send, end = self.request("erase", "DELETE", f"/v1/admin/profiles/{target}",
                                        self.run_.sk())
        if reply.outcome != "rejected":
            event = Event("erase", send, end, reply.ok)
            self.model.profile_event(target, event)
            if not reply.ok:
                with self.model.lock:
                    self.model.unknown_erases.append((target, event))

    def blockable(self, target: str | None) -> bool:
        with self.model.lock:
            record = self.model.profiles.get(target) if target else None
            # An alias ID acts on the profile it resolves to: act only on IDs that are no alias.
            return record is not None and not record.merged_into and not any(
                e.kind in ("merge", "identify_unknown") for e in record.events)

    def op_block(self, device: Device) -> None:
        target = self.pick_profile(device)
        if not self.blockable(target):
            return
        event = self.model.begin_profile_event(target, "block")
        reply, send, end = self.request("block", "POST", f"/v1/admin/profiles/{target}/block", self.run_.sk(),
                                        {"reason": "crash test"})
        self.model.settle_profile_event(target, event, reply, send, end)
        if reply.ok:
            self.model.checks += 1
            if reply.body.get("profile", {}).get("blocked") is not True:
                self.model.violation(f"block of {target} answered {reply.body.get('profile')}")

    def op_unblock(self, device: Device) -> None:
        with self.model.lock:
            blocked = [p.pid for p in self.model.profiles.values() if any(e.kind == "block" for e in p.events)]
        # As for a block: an alias ID would unblock the profile it was merged into, which the model
        # would not know of (a violation reported at seed 1895333489 on PostgreSQL).
        blocked = [pid for pid in blocked if self.blockable(pid)]
        if not blocked:
            return
        target = self.rng.choice(blocked)
        event = self.model.begin_profile_event(target, "unblock")
        reply, send, end = self.request("unblock", "POST", f"/v1/admin/profiles/{target}/unblock", self.run_.sk(), {})
        self.model.settle_profile_event(target, event, reply, send, end)

    def op_rotate_api_key(self, device: Device) -> None:
        """Rotates an API key the workers use: they switch to the new key once the rotation is
        acknowledged; the old one must be refused once its grace ends. Secret keys get a grace long
        enough for the controller to settle a lost rotation with the old key after the restart."""
        kind = self.rng.choice(["publishable", "publishable", "secret"])
        grace = self.rng.choice([0, 0, 3]) if kind == "publishable" else self.rng.choice([30, 45])
        lock = self.run_.key_locks[kind]
        if not lock.acquire(blocking=False):
            return
        try:
            with self.model.lock:
                if self.run_.key_pending[kind] is not None:
                    return
                old = self.run_.keys[kind]
                old.live = False
                self.run_.key_generation[kind] += 1
            reply, send, end = self.request("rotate_api_key", "POST", "/v1/admin/api-keys/rotate", self.run_.sk(),
                                            {"kind": kind, "grace_seconds": grace})
            if reply.outcome != "rejected":
                with self.model.lock:
                    self.run_.api_rotations[kind][0 if reply.ok else 1] += 1
            if reply.ok:
                body = reply.body.get("api_key", {})
                expires = epoch(body.get("previous_key_expires_at")) or 0
                self.model.checks += 1
                if body.get("kind") != kind or not body.get("key") or expires > time.time() + grace + 1:
                    self.model.violation(f"rotation of the {kind} key answered {reply.status} {body}")
                    return
                with self.model.lock:
                    old.dead_after = expires + 1.5
                    fact = KeyFact(kind, body["key"], time.time())
                    self.run_.keys[kind] = fact
                    self.run_.key_history.append(fact)
                    self.run_.key_generation[kind] += 1
                if grace == 0:
                    # At once, under load: the old key must already be refused.
                    probe = self.request("probe_old_key", "POST", "/v1/sessions/identify", old.key, {})[0]
                    self.model.checks += 1
                    if probe.status and probe.status not in (401, 429):
                        self.model.violation(f"ROTATED-OUT API KEY CAME BACK: the {kind} key rotated out with grace 0 "
                                             f"(acknowledged) answered {probe.status} {probe.code} right after")
            elif reply.outcome == "unknown":
                with self.model.lock:
                    self.run_.key_pending[kind] = grace
            else:
                with self.model.lock:
                    if self.run_.keys[kind] is old:
                        old.live = True
        finally:
            lock.release()

    def op_rotate_signing_key(self, device: Device) -> None:
        if not self.run_.signing_lock.acquire(blocking=False):
            return
        try:
            reply, send, end = self.request("rotate_signing_key", "POST", "/v1/admin/signing-keys/rotate",
                                            self.run_.sk(), {})
            if reply.ok:
                kid = reply.body.get("signing_key", {}).get("kid")
                with self.model.lock:
                    before = frozenset(k for k, seen in self.run_.kids_seen.items() if seen < send)
                    self.run_.signing_rotations.append((time.time(), before, kid))
                    self.run_.kids_seen.setdefault(kid, end)
        finally:
            self.run_.signing_lock.release()

    def op_device(self, device: Device) -> None:
        fact = device.session
        push = "tok-" + uuid.UUID(int=self.rng.getrandbits(128), version=4).hex
        body = {"platform": self.rng.choice(["apns", "fcm"]), "token": push,
                "environment": self.rng.choice(["sandbox", "production"])}
        reply, send, end = self.request("device", "POST", "/v1/devices",
                                        fact.jwt if self.rng.random() < 0.3 else fact.token, body)
        if reply.ok:
            did = reply.body.get("device", {}).get("id")
            if reply.body.get("device", {}).get("session_id") != fact.sid:
                self.model.violation(f"device {did} bound to {reply.body.get('device')}, not {fact.sid}")
            with self.model.lock:
                fact.devices.append(DeviceFact(did, fact.sid, fact.profile_id, push, end))
                fact.touched = end
        elif reply.outcome == "rejected":
            self.session_lost(device, reply)

    def op_probe(self, device: Device) -> None:
        """Presents a session that must be dead: it must never answer 200, during load too."""
        with self.model.lock:
            sample = self.rng.sample(list(self.model.sessions.values()), min(8, len(self.model.sessions)))
            dead = [(f, self.model.session_status(f)[1]) for f in sample if self.model.session_status(f)[0] == "dead"]
        if not dead:
            return
        fact, why = dead[0]
        credential = fact.token if fact.token and self.rng.random() < 0.6 else fact.jwt
        reply, _, _ = self.request("probe", "POST", "/v1/sessions/authenticate", credential)
        self.model.checks += 1
        if reply.ok:
            self.model.violation(f"DEAD SESSION CAME BACK: {fact.sid} ({why}) answered {reply.status} during load")



# ─── Device registration racing the end of its session ───────────────────────────────────────────


def device_races(run: "Run", count: int, rng: random.Random) -> None:
    """`count` times, registers a device on a session while another connection ends that session
    (own revoke, DELETE by a sibling session, admin revoke-all, erasure). Whatever the order, the
    registration answers 201 or the session's 401, never a 5xx, and no device outlives its session."""
    model, project = run.model, run.project
    secret, kid = project["identity_secret"]["secret"], project["identity_secret"]["kid"]
    outcomes: dict[str, int] = {}
    for index in range(count):
        a, b = harness.Client(run.port), harness.Client(run.port)
        sub = f"race-{run.seed}-{index}"
        first, second = (a.call("POST", "/v1/sessions/identify", project["publishable_key"],
                                {"identity_token": identity_token(secret, kid, sub, uuid.uuid4().hex)[0]}).body
                         for _ in range(2))
        sid, pid = first["session"]["id"], first["profile"]["id"]
        way = ("revoke", "delete", "revoke_all", "erase")[index % 4]
        replies = {}

        def register():
            replies["device"] = a.call("POST", "/v1/devices", first["session_token"],
                                       {"platform": "fcm", "token": f"race-{uuid.uuid4().hex}"})

        def end():
            if way == "revoke":
                replies["end"] = b.call("POST", "/v1/sessions/revoke", first["session_token"], {})
            elif way == "delete":
                replies["end"] = b.call("DELETE", f"/v1/sessions/{sid}", second["session_token"])
            elif way == "revoke_all":
                replies["end"] = b.call("POST", f"/v1/admin/profiles/{pid}/sessions/revoke", project["secret_key"], {})
            else:
                replies["end"] = b.call("DELETE", f"/v1/admin/profiles/{pid}", project["secret_key"])

        threads = [threading.Thread(target=register), threading.Thread(target=end)]
        if rng.random() < 0.5:
            threads.reverse()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        device, ended = replies["device"], replies["end"]
        key = f"{way}: {device.status}"
        outcomes[key] = outcomes.get(key, 0) + 1
        model.checks += 2
        if not (device.status == 201 or (device.status == 401 and device.code in DEAD_CODES)):
            model.violation(f"[device race] POST /v1/devices racing {way} answered {device.status} {device.code}")
        if not ended.ok:
            model.violation(f"[device race] {way} answered {ended.status} {ended.code}")
        if ended.ok:  # for the events feed: what each acknowledged step changed
            with model.lock:
                run.extra_sessions[sid] = (pid, "verified", "dead")
                run.extra_sessions[second["session"]["id"]] = (
                    pid, "verified", "dead" if way in ("revoke_all", "erase") else "alive")
                if device.status == 201:
                    run.extra_devices[device.body.get("device", {}).get("id")] = (sid, "dead")
                if way == "erase":
                    run.extra_erased.add(pid)
        listed = a.call("GET", f"/v1/admin/profiles/{pid}/devices", project["secret_key"])
        if listed.status == 200 and listed.body.get("devices"):
            model.violation(f"[device race] DEVICE OUTLIVED ITS SESSION: {way} of {sid}, devices still listed")
        run.race_sessions.append(sid)
        a.reset()
        b.reset()
    print(f"device races: {count} ({', '.join(f'{k} ×{v}' for k, v in sorted(outcomes.items()))})", flush=True)
