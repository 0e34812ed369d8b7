"""The race checker's model: the server's rules for the operations it races, as a pure function of state.

A race starts from a small world that the checker set up (an anonymous installation with its profile,
sessions and device; an identified user with two sessions and a device; an unverified user; a webhook).
Each operation is a function `apply(world, op)` that changes a copy of the world the way the server
would if the operation ran alone at that moment, and answers (the statuses it may give, the events it
writes). `serial_outcomes` runs every order of a race's operations through it; the checker accepts
the race when what the server did (answers, events, final state) equals one of them.

Everything is symbolic: `A` the anonymous profile, `SA` its session, `P` the identified one, `S:2` the
session operation 2 created, and so on; the checker maps real IDs to these names.

Pure Python, no I/O: `test_model.py` checks the rules themselves.
"""
from __future__ import annotations

import copy
import itertools
from collections import Counter
from dataclasses import dataclass, field

PERSONAL = ("name", "email", "avatar_url", "external_id")
# The fields identify's claims set on a profile (profile.updated's `changed`, in the server's order).
CLAIM_FIELDS = ["name", "avatar_url", "email"]


@dataclass
class Profile:
    kind: str  # anonymous | identified
    external_id: str | None = None
    verified: bool = False
    blocked: bool = False
    claims_of: str | None = None  # the user whose name/email/avatar it holds (None: none)
    aliases: list[str] = field(default_factory=list)  # symbols of the profiles merged into it, oldest first


@dataclass
class Session:
    profile: str
    kind: str  # anonymous | verified | unverified
    revoked: bool = False  # revoked_at is set
    row: bool = True  # False once its profile was erased or merged away, or cleanup deleted it
    expired: bool = False  # its expires_at has passed (set up for the cleanup races)

    @property
    def alive(self) -> bool:
        return self.row and not self.revoked and not self.expired


@dataclass
class Device:
    session: str
    profile: str


@dataclass
class Webhook:
    description: str = "race"
    exists: bool = True


@dataclass
class World:
    profiles: dict[str, Profile] = field(default_factory=dict)  # live profiles only
    aliases: dict[str, str] = field(default_factory=dict)  # alias symbol -> profile symbol
    sessions: dict[str, Session] = field(default_factory=dict)
    devices: dict[str, Device] = field(default_factory=dict)
    installation: str | None = None  # the profile the installation holds now (None: none)
    installation_known: bool = False
    push_token_device: str | None = None  # the device holding the race's push token
    webhook: Webhook | None = None
    created: int = 0  # profiles created by the race so far: the next is P:new{created + 1}

    def new_profile(self) -> str:
        """The symbol of a profile the race creates: numbered in creation order, whichever operation
        creates it (the checker numbers the real ones by their time-ordered IDs)."""
        self.created += 1
        return f"P:new{self.created}"

    def resolve(self, symbol: str) -> str | None:
        """The live profile a profile ID or alias names, as the admin API resolves it."""
        if symbol in self.profiles:
            return symbol
        return self.aliases.get(symbol)

    def verified_profile(self, external_id: str, verified: bool) -> str | None:
        for symbol, profile in self.profiles.items():
            if profile.external_id == external_id and profile.verified == verified:
                return symbol
        return None


@dataclass
class Op:
    """One operation of a race: `kind` (see OPERATIONS), its index in the race, and its arguments."""

    kind: str
    index: int
    target: str = ""  # the profile, session or device symbol it acts on
    caller: str = ""  # the session whose token it sends
    user: str = ""  # the external ID of an identify
    verified: bool = True

    @property
    def new(self) -> str:
        return f"{self.index}"


@dataclass
class Answer:
    statuses: frozenset[int]
    events: list[tuple]


def ev(event_type: str, /, **data) -> tuple:
    """An event as the checker compares it: its type and its data, members sorted, lists as tuples."""
    items = []
    for key, value in sorted(data.items()):
        items.append((key, tuple(value) if isinstance(value, list) else value))
    return (event_type, tuple(items))


# ─── The server's rules ──────────────────────────────────────────────────────────────────────────


def end_sessions(world: World, sessions: list[str], devices: list[str], reason: str) -> list[tuple]:
    """Ends `sessions` (those not already ended) and deletes `devices`: session.ended each, then device.removed."""
    events = []
    for symbol in sessions:
        session = world.sessions[symbol]
        if session.row and not session.revoked:
            events.append(ev("session.ended", session_id=symbol, profile_id=session.profile, reason=reason))
            session.revoked = True
    for symbol in devices:
        device = world.devices.pop(symbol)
        if world.push_token_device == symbol:
            world.push_token_device = None
        events.append(ev("device.removed", device_id=symbol, profile_id=device.profile, session_id=device.session))
    return events


def unrevoked(world: World, profile: str, include_expired: bool) -> list[str]:
    """The sessions of `profile` whose row has no revoked_at (the server's `revoked_at IS NULL`)."""
    return [s for s, session in world.sessions.items()
            if session.profile == profile and session.row and not session.revoked
            and (include_expired or not session.expired)]


def devices_of(world: World, profile: str, by_profile: bool) -> list[str]:
    """Devices bound to a session of `profile` (and, with `by_profile`, devices whose profile_id is it)."""
    return [d for d, device in world.devices.items()
            if world.sessions[device.session].profile == profile or (by_profile and device.profile == profile)]


def caller_alive(world: World, op: Op) -> bool:
    session = world.sessions.get(op.caller)
    return session is not None and session.alive


def scrub(log: list[list], profiles: list[str]) -> None:
    """Erasure's scrub of the earlier events (of this serial order) of the erased profile and its aliases."""
    for index, entry in enumerate(log):
        kind, items = entry
        data = dict(items)
        if data.get("profile_id") in profiles and any(data.get(m) is not None for m in PERSONAL):
            for member in PERSONAL:
                if member in data and data[member] is not None:
                    data[member] = None
            log[index] = ev(kind, **{k: list(v) if isinstance(v, tuple) else v for k, v in data.items()})


def fold(world: World, source: str, target: str) -> list[tuple]:
    """Identify's merge: `source` becomes an alias of `target`, its sessions and devices end (replaced)."""
    if world.installation == source:
        world.installation = None
    moved = world.profiles[source].aliases
    for alias in moved:
        world.aliases[alias] = target
    events = end_sessions(world, unrevoked(world, source, True), devices_of(world, source, False), "replaced")
    world.profiles[target].aliases += moved + [source]
    world.aliases[source] = target
    del world.profiles[source]
    for session in world.sessions.values():
        if session.profile == source:
            session.row = False  # deleted with the profile (ON DELETE CASCADE)
    tgt = world.profiles[target]
    events.append(ev("profile.merged", profile_id=target, from_profile_id=source, external_id=tgt.external_id,
                     alias_ids=list(tgt.aliases)))
    return events


def identify(world: World, op: Op, log: list) -> Answer:
    if not caller_alive(world, op):
        return Answer(frozenset({401}), [])
    caller_session = world.sessions[op.caller]
    caller = world.profiles[caller_session.profile]
    existing = world.verified_profile(op.user, op.verified)
    if (existing and world.profiles[existing].blocked) or caller.blocked:
        return Answer(frozenset({403}), [])
    events: list[tuple] = []
    before: str | None = None
    if caller.kind == "identified":
        same = caller.external_id == op.user
        if same and caller.verified == op.verified:
            plan = "unchanged"
        elif same and op.verified and not caller.verified:
            plan = "merge" if existing else "upgrade"
        else:
            return Answer(frozenset({409}), [])
    else:
        plan = "merge" if existing else "promote"
    source = caller_session.profile
    if plan == "unchanged":
        target, before = source, source
    elif plan == "promote":
        target, before = source, source
        caller.kind, caller.external_id, caller.verified = "identified", op.user, op.verified
        if world.installation == source:
            world.installation = None
        events.append(ev("profile.promoted", profile_id=source, external_id=op.user))
        events += end_sessions(world, unrevoked(world, source, True), devices_of(world, source, False), "replaced")
    elif plan == "merge":
        target, before = existing, existing
        events += fold(world, source, existing)
    else:  # upgrade
        target = world.new_profile()
        world.profiles[target] = Profile("identified", op.user, op.verified)
        events.append(ev("profile.created", profile_id=target, kind="identified"))
        events += fold(world, source, target)
    if target == source and world.sessions[op.caller].alive:
        events += end_sessions(world, [op.caller], [d for d, device in world.devices.items()
                                                    if device.session == op.caller], "replaced")
    profile = world.profiles[target]
    if before is not None and op.verified and profile.claims_of != op.user:
        events.append(ev("profile.updated", profile_id=target, changed=CLAIM_FIELDS))
    if op.verified:
        profile.claims_of = op.user
    session = f"S:{op.new}"
    world.sessions[session] = Session(target, "verified" if op.verified else "unverified")
    events.append(ev("session.created", session_id=session, profile_id=target,
                     kind="verified" if op.verified else "unverified"))
    return Answer(frozenset({200}), events)


def restore(world: World, op: Op, log: list) -> Answer:
    """POST /v1/sessions/anonymous: 201 for an installation the server does not know yet, else 200."""
    events = []
    status = 200 if world.installation_known else 201
    world.installation_known = True
    profile = world.installation
    if profile is not None and world.profiles[profile].blocked:
        return Answer(frozenset({403}), [])
    if profile is None:
        profile = world.new_profile()
        world.profiles[profile] = Profile("anonymous")
        world.installation = profile
        events.append(ev("profile.created", profile_id=profile, kind="anonymous"))
    session = f"S:{op.new}"
    world.sessions[session] = Session(profile, "anonymous")
    events.append(ev("session.created", session_id=session, profile_id=profile, kind="anonymous"))
    return Answer(frozenset({status}), events)


def sign_in(world: World, op: Op, log: list) -> Answer:
    """Identify with the publishable key (no calling session): a new session of the user's profile, or
    a new profile when none has the user."""
    existing = world.verified_profile(op.user, True)
    if existing and world.profiles[existing].blocked:
        return Answer(frozenset({403}), [])
    events = []
    if existing is None:
        existing = world.new_profile()
        world.profiles[existing] = Profile("identified", op.user, True, claims_of=op.user)
        events.append(ev("profile.created", profile_id=existing, kind="identified"))
    elif world.profiles[existing].claims_of != op.user:
        events.append(ev("profile.updated", profile_id=existing, changed=CLAIM_FIELDS))
        world.profiles[existing].claims_of = op.user
    session = f"S:{op.new}"
    world.sessions[session] = Session(existing, "verified")
    events.append(ev("session.created", session_id=session, profile_id=existing, kind="verified"))
    return Answer(frozenset({200}), events)


def extend(world: World, op: Op, log: list) -> Answer:
    return Answer(frozenset({200}) if caller_alive(world, op) else frozenset({401}), [])


def sign_out(world: World, op: Op, log: list) -> Answer:
    if not caller_alive(world, op):
        return Answer(frozenset({401}), [])
    return Answer(frozenset({204}), end_sessions(world, [op.caller], [d for d, device in world.devices.items()
                                                                      if device.session == op.caller], "signed_out"))


def revoke_other(world: World, op: Op, log: list) -> Answer:
    """DELETE /v1/sessions/{target} with another session of the same profile."""
    if not caller_alive(world, op):
        return Answer(frozenset({401}), [])
    target = world.sessions.get(op.target)
    if target is None or not target.alive or target.profile != world.sessions[op.caller].profile:
        return Answer(frozenset({404}), [])
    return Answer(frozenset({204}), end_sessions(world, [op.target], [d for d, device in world.devices.items()
                                                                      if device.session == op.target], "revoked"))


def revoke_others(world: World, op: Op, log: list) -> Answer:
    """POST /v1/sessions/revoke-others: every other live session of the caller's profile ends, and every
    device bound to another session of it goes."""
    if not caller_alive(world, op):
        return Answer(frozenset({401}), [])
    profile = world.sessions[op.caller].profile
    others = [s for s in unrevoked(world, profile, False) if s != op.caller]
    devices = [d for d, device in world.devices.items()
               if device.session != op.caller and world.sessions[device.session].profile == profile]
    return Answer(frozenset({200}), end_sessions(world, others, devices, "revoked"))


def device_add(world: World, op: Op, log: list) -> Answer:
    if not caller_alive(world, op):
        return Answer(frozenset({401}), [])
    events = []
    if world.push_token_device is not None:
        events += end_sessions(world, [], [world.push_token_device], "")
    device = f"D:{op.new}"
    profile = world.sessions[op.caller].profile
    world.devices[device] = Device(op.caller, profile)
    world.push_token_device = device
    events.append(ev("device.registered", device_id=device, profile_id=profile, session_id=op.caller))
    return Answer(frozenset({201}), events)


def device_remove(world: World, op: Op, log: list) -> Answer:
    if not caller_alive(world, op):
        return Answer(frozenset({401}), [])
    device = world.devices.get(op.target)
    if device is None or device.profile != world.sessions[op.caller].profile:
        return Answer(frozenset({404}), [])
    return Answer(frozenset({204}), end_sessions(world, [], [op.target], ""))


def on_profile(rule):
    """An admin operation on the live profile `op.target` names, directly or by an alias: 404 and
    nothing written when there is none, else `rule(world, profile, log)` with the profile's symbol."""
    def apply(world: World, op: Op, log: list) -> Answer:
        profile = world.resolve(op.target)
        if profile is None:
            return Answer(frozenset({404}), [])
        return rule(world, profile, log)
    apply.__name__ = rule.__name__
    return apply


@on_profile
def block(world: World, profile: str, log: list) -> Answer:
    events = []
    record = world.profiles[profile]
    if not record.blocked:
        events.append(ev("profile.blocked", profile_id=profile))
    record.blocked = True
    events += end_sessions(world, unrevoked(world, profile, False), devices_of(world, profile, True), "blocked")
    return Answer(frozenset({200}), events)


@on_profile
def unblock(world: World, profile: str, log: list) -> Answer:
    record = world.profiles[profile]
    events = [ev("profile.unblocked", profile_id=profile)] if record.blocked else []
    record.blocked = False
    return Answer(frozenset({200}), events)


@on_profile
def erase(world: World, profile: str, log: list) -> Answer:
    record = world.profiles[profile]
    events = end_sessions(world, unrevoked(world, profile, True), devices_of(world, profile, True), "erased")
    scrub(log, [profile] + record.aliases)
    events.append(ev("profile.erased", profile_id=profile, external_id=record.external_id,
                     alias_ids=list(record.aliases)))
    for symbol, session in world.sessions.items():
        if session.profile == profile:
            session.row = False
    for alias in record.aliases:
        world.aliases.pop(alias, None)
    if world.installation == profile:
        world.installation = None
    del world.profiles[profile]
    return Answer(frozenset({204}), events)


@on_profile
def revoke_all(world: World, profile: str, log: list) -> Answer:
    return Answer(frozenset({200, 204}), end_sessions(world, unrevoked(world, profile, False),
                                                      [d for d, device in world.devices.items()
                                                       if world.sessions[device.session].profile == profile],
                                                      "admin"))


def admin_end_session(world: World, op: Op, log: list) -> Answer:
    session = world.sessions.get(op.target)
    if session is None or not session.row:
        return Answer(frozenset({404}), [])  # deleted with its profile (erasure, merge) or by cleanup
    if not session.alive:
        return Answer(frozenset({204}), [])  # ending an ended session is idempotent: nothing written
    return Answer(frozenset({204}), end_sessions(world, [op.target], [d for d, device in world.devices.items()
                                                                      if device.session == op.target], "admin"))


def cleanup(world: World, op: Op, log: list) -> Answer:
    """The cleanup service's pass: expired sessions go (session.ended `expired` unless revoked), with devices."""
    victims = [s for s, session in world.sessions.items() if session.expired and session.row]
    events = []
    for symbol in victims:
        session = world.sessions[symbol]
        devices = [d for d, device in world.devices.items() if device.session == symbol]
        if not session.revoked:
            events.append(ev("session.ended", session_id=symbol, profile_id=session.profile, reason="expired"))
        events += end_sessions(world, [], devices, "")
        session.row = False
    return Answer(frozenset({0}), events)


def on_webhook(rule):
    """An admin operation on the race's webhook: 404 and nothing written when it is gone (or never
    was), else `rule(hook, op)`."""
    def apply(world: World, op: Op, log: list) -> Answer:
        hook = world.webhook
        if hook is None or not hook.exists:
            return Answer(frozenset({404}), [])
        return rule(hook, op)
    apply.__name__ = rule.__name__
    return apply


@on_webhook
def webhook_update(hook: Webhook, op: Op) -> Answer:
    description = f"race {op.new}"
    events = [] if hook.description == description else [ev("webhook.updated", webhook_id="W", changed=["description"])]
    hook.description = description
    return Answer(frozenset({200}), events)


@on_webhook
def webhook_delete(hook: Webhook, op: Op) -> Answer:
    hook.exists = False
    return Answer(frozenset({204}), [ev("webhook.deleted", webhook_id="W")])


@on_webhook
def webhook_rotate(hook: Webhook, op: Op) -> Answer:
    return Answer(frozenset({200}), [ev("webhook.updated", webhook_id="W", changed=["secret"])])


RULES = {
    "restore": restore, "start": restore, "sign_in": sign_in, "promote": identify, "merge": identify, "unchanged": identify, "upgrade": identify,
    "extend": extend, "sign_out": sign_out, "revoke_other": revoke_other, "revoke_others": revoke_others,
    "device_add": device_add,
    "device_remove": device_remove, "block": block, "unblock": unblock, "erase": erase,
    "revoke_all": revoke_all, "admin_end_session": admin_end_session, "cleanup": cleanup,
    "webhook_update": webhook_update, "webhook_delete": webhook_delete, "webhook_rotate": webhook_rotate,
}


# ─── Serial orders ───────────────────────────────────────────────────────────────────────────────


def final_state(world: World) -> dict:
    """What the admin API must show after the race (symbolic), compared with what it shows."""
    profiles = {}
    for symbol, profile in world.profiles.items():
        profiles[symbol] = (profile.kind, profile.external_id, profile.blocked, profile.claims_of is not None)
    return {
        "profiles": profiles,
        "aliases": dict(world.aliases),
        "alias_lists": {s: tuple(p.aliases) for s, p in world.profiles.items()},
        "live_sessions": {s: frozenset(x for x, session in world.sessions.items()
                                       if session.profile == s and session.alive)
                          for s in world.profiles},
        "devices": {s: frozenset(d for d, device in world.devices.items()
                                 if device.profile == s and world.sessions[device.session].alive)
                    for s in world.profiles},
        "webhook": None if world.webhook is None else (world.webhook.exists and world.webhook.description),
    }


@dataclass
class Outcome:
    order: tuple[int, ...]
    answers: list[Answer]
    events: Counter  # every event this order writes, with erasure's scrub applied
    state: dict


def run_order(world: World, ops: list[Op], order: tuple[int, ...]) -> Outcome:
    state = copy.deepcopy(world)
    log: list = []
    answers: list[Answer | None] = [None] * len(ops)
    for index in order:
        op = ops[index]
        start = len(log)
        answer = RULES[op.kind](state, op, log)
        log += answer.events
        answers[index] = Answer(answer.statuses, log[start:])
    return Outcome(order, answers, Counter(log), final_state(state))


def serial_outcomes(world: World, ops: list[Op]) -> list[Outcome]:
    return [run_order(world, ops, order) for order in itertools.permutations(range(len(ops)))]


def rejected(status: int) -> bool:
    return 400 <= status < 500


def differences(outcome: Outcome, statuses: list[int], events: Counter, state: dict, strict: bool = True) -> list[str]:
    """How what was observed differs from one serial order (empty: it matches). Not `strict`: a 4xx
    matches any 4xx of the order (a rejection that wrote nothing, whatever its code; `code_notes`
    lists those)."""
    found = []
    for index, (answer, status) in enumerate(zip(outcome.answers, statuses)):
        if answer.statuses == frozenset({0}) or status in answer.statuses:
            continue
        if not strict and rejected(status) and all(rejected(s) for s in answer.statuses):
            continue
        found.append(f"op {index} answered {status}, this order gives {sorted(answer.statuses)}")
    missing = outcome.events - events
    extra = events - outcome.events
    for event in sorted(missing.elements(), key=repr):
        found.append(f"missing event {render(event)}")
    for event in sorted(extra.elements(), key=repr):
        found.append(f"unexpected event {render(event)}")
    for key in sorted(set(state) | set(outcome.state)):
        if state.get(key) != outcome.state.get(key):
            found.append(f"state {key}: server {state.get(key)}, this order {outcome.state.get(key)}")
    return found


def code_notes(outcome: Outcome, statuses: list[int]) -> list[tuple[int, int, tuple[int, ...]]]:
    """(op, status, the order's statuses) for each rejection whose status differs from the order's rejection."""
    return [(index, status, tuple(sorted(answer.statuses))) for index, (answer, status)
            in enumerate(zip(outcome.answers, statuses))
            if answer.statuses != frozenset({0}) and status not in answer.statuses]


def render(event: tuple) -> str:
    kind, items = event
    return kind + " {" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
