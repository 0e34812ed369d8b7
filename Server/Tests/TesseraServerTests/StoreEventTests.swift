import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The outbox, on every backend: each change writes its events in its own transaction, with
/// sequences from 1 without gaps, and a change that rolls back writes none.
@Suite("Store events")
struct StoreEventTests {
    /// One event as the tests compare it.
    struct Seen: Equatable, CustomStringConvertible {
        var type: String
        var data: [String: String]
        var actor: EventActor

        var description: String {
            "\(type) \(data.sorted { $0.key < $1.key }) \(actor.kind.rawValue)/\(actor.id ?? "-")"
        }

        /// A `session.ended` of `session` (of `profile`) for `reason`.
        static func sessionEnded(_ session: String, of profile: String, reason: String, by actor: EventActor) -> Seen {
            Seen(
                type: "session.ended", data: ["session_id": session, "profile_id": profile, "reason": reason],
                actor: actor)
        }

        /// A `session.created` of `session` (of `profile`) of `kind`.
        static func sessionCreated(_ session: String, of profile: String, kind: String, by actor: EventActor) -> Seen {
            Seen(
                type: "session.created", data: ["session_id": session, "profile_id": profile, "kind": kind],
                actor: actor)
        }

        /// A `device.registered` or `device.removed` of `device`, bound to `session` of `profile`.
        static func device(
            _ type: String, _ device: String, of profile: String, session: String, by actor: EventActor
        ) -> Seen {
            Seen(type: type, data: ["device_id": device, "profile_id": profile, "session_id": session], actor: actor)
        }
    }

    /// Reads the events written since the last read, checking that their sequences follow on.
    final class Reader: @unchecked Sendable {
        let store: any TesseraStore
        let projectID: String
        var last: Int64 = 0
        var all: [EventRecord] = []

        init(_ environment: TestEnvironment) {
            store = environment.store
            projectID = environment.project.project.id
        }

        func next(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Seen] {
            let events = try await store.events(EventQuery(projectID: projectID, after: last, limit: 200))
            for (offset, event) in events.enumerated() {
                #expect(
                    event.sequence == last + 1 + Int64(offset), "sequences follow on", sourceLocation: sourceLocation)
            }
            last = events.last?.sequence ?? last
            all += events
            return events.map { Seen(type: $0.type, data: Self.flatten($0.data), actor: $0.actor) }
        }

        /// The data's members as strings (arrays joined by commas, null as "null").
        static func flatten(_ data: String) -> [String: String] {
            guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
                return ["unparsable": data]
            }
            return object.mapValues { value in
                if let array = value as? [String] { return array.joined(separator: ",") }
                if value is NSNull { return "null" }
                return "\(value)"
            }
        }
    }

    private func start(
        _ environment: TestEnvironment, installationID: String = UUID().uuidString.lowercased(),
        secretHash: [UInt8] = OpaqueToken.sha256("secret"), minutes: Int64 = 60, address: String? = "192.0.2.7"
    ) async throws -> AnonymousStartResult {
        try await environment.storeStart(
            installationID: installationID, secretHash: secretHash, minutes: minutes,
            origin: EventOrigin(actor: .sdk(sessionID: nil), clientAddress: address))
    }

    private func identify(
        _ environment: TestEnvironment, externalID: String, caller: String? = nil, jti: String? = nil,
        name: String? = nil, email: String? = nil
    ) async throws -> IdentifyResult {
        try await environment.storeIdentify(externalID: externalID, caller: caller, jti: jti, name: name, email: email)
    }

    private func device(_ context: SessionContext, token: String, now: Int64) -> DeviceRecord {
        DeviceRecord(
            id: OpaqueToken.identifier(prefix: "dev_"), projectID: context.session.projectID,
            sessionID: context.session.id, profileID: context.profile.id, platform: "apns", environment: "production",
            token: token, createdAt: now)
    }

    private static let admin = EventOrigin(actor: .secretKey, clientAddress: "198.51.100.1")

    private func sdk(_ sessionID: String?) -> EventActor { .sdk(sessionID: sessionID) }

    @Test(
        "Sessions and profiles: start, restore, promote, merge, revoke, each with its events",
        arguments: StoreBackend.allCases)
    func sessionsAndProfiles(backend: StoreBackend) async throws {
        let (environment, store, _, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let events = Reader(environment)
        let installation = UUID().uuidString.lowercased()

        let first = try await start(environment, installationID: installation)
        let profileID = first.context.profile.id
        #expect(
            try await events.next() == [
                Seen(type: "profile.created", data: ["profile_id": profileID, "kind": "anonymous"], actor: sdk(nil)),
                .sessionCreated(first.context.session.id, of: profileID, kind: "anonymous", by: sdk(nil)),
            ])
        #expect(events.all.allSatisfy { $0.clientAddress == "192.0.2.7" && $0.id.hasPrefix("evt_") })
        let restored = try await start(environment, installationID: installation)
        #expect(
            try await events.next() == [
                .sessionCreated(restored.context.session.id, of: profileID, kind: "anonymous", by: sdk(nil))
            ])
        // A device of the other (orphaned) session goes when the promote ends that session.
        let orphanDevice = try await store.registerDevice(
            device(first.context, token: "orphan", now: now),
            origin: EventOrigin(actor: sdk(first.context.session.id), clientAddress: nil))
        #expect(
            try await events.next() == [
                .device(
                    "device.registered", orphanDevice.id, of: profileID, session: first.context.session.id,
                    by: sdk(first.context.session.id))
            ])

        let promoted = try await identify(
            environment, externalID: "user-1", caller: restored.context.session.id, name: "Ada")
        let caller = sdk(restored.context.session.id)
        let endedByPromote = [first.context.session.id, restored.context.session.id].sorted().map {
            Seen.sessionEnded($0, of: profileID, reason: "replaced", by: caller)
        }
        #expect(
            try await events.next()
                == [
                    Seen(
                        type: "profile.promoted", data: ["profile_id": profileID, "external_id": "user-1"],
                        actor: caller)
                ]
                + endedByPromote + [
                    .device(
                        "device.removed", orphanDevice.id, of: profileID, session: first.context.session.id, by: caller),
                    Seen(type: "profile.updated", data: ["profile_id": profileID, "changed": "name"], actor: caller),
                    .sessionCreated(promoted.context.session.id, of: profileID, kind: "verified", by: caller),
                ])

        let second = try await start(environment)
        _ = try await events.next()
        let merged = try await identify(
            environment, externalID: "user-1", caller: second.context.session.id, name: "Ada", email: "a@example.com")
        let mergeCaller = sdk(second.context.session.id)
        #expect(
            try await events.next() == [
                .sessionEnded(
                    second.context.session.id, of: second.context.profile.id, reason: "replaced", by: mergeCaller),
                Seen(
                    type: "profile.merged",
                    data: [
                        "profile_id": profileID, "from_profile_id": second.context.profile.id,
                        "external_id": "user-1", "alias_ids": second.context.profile.id,
                    ], actor: mergeCaller),
                Seen(type: "profile.updated", data: ["profile_id": profileID, "changed": "email"], actor: mergeCaller),
                .sessionCreated(merged.context.session.id, of: profileID, kind: "verified", by: mergeCaller),
            ])

        // A new user: profile.created (identified) and its session; signing in again: only the session.
        let fresh = try await identify(environment, externalID: "user-2")
        #expect(
            try await events.next().map(\.type) == ["profile.created", "session.created"])
        #expect(events.all.last?.actor == sdk(nil))
        _ = try await identify(environment, externalID: "user-2")
        #expect(try await events.next().map(\.type) == ["session.created"])

        // Sign-out, revoke of another session, admin revoke-all: each session.ended with its reason.
        let signOut = EventOrigin(actor: sdk(promoted.context.session.id), clientAddress: nil)
        #expect(
            try await store.revokeSession(
                sessionID: promoted.context.session.id, profileID: nil, now: now, reason: .signedOut, origin: signOut))
        #expect(
            try await events.next() == [
                .sessionEnded(promoted.context.session.id, of: profileID, reason: "signed_out", by: signOut.actor)
            ])
        #expect(
            try await !store.revokeSession(
                sessionID: promoted.context.session.id, profileID: nil, now: now, reason: .signedOut, origin: signOut))
        #expect(try await events.next().isEmpty, "an already-ended session writes nothing")
        #expect(
            try await store.revokeSessions(
                projectID: environment.project.project.id, profileID: fresh.context.profile.id, now: now,
                origin: Self.admin) == 2)
        let adminEnded = try await events.next()
        #expect(adminEnded.count == 2)
        #expect(adminEnded.allSatisfy { $0.type == "session.ended" && $0.data["reason"] == "admin" })
        #expect(adminEnded.allSatisfy { $0.actor == .secretKey })
        #expect(events.all.last?.clientAddress == "198.51.100.1")
    }

    @Test(
        "Devices, block, unblock and erasure write their events; erasure scrubs older ones",
        arguments: StoreBackend.allCases)
    func devicesBlockErase(backend: StoreBackend) async throws {
        let (environment, store, projectID, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let events = Reader(environment)
        let one = try await start(environment)
        let two = try await start(environment)
        _ = try await events.next()
        let origin = EventOrigin(actor: sdk(two.context.session.id), clientAddress: nil)
        let first = try await store.registerDevice(device(one.context, token: "t", now: now), origin: origin)
        let moved = try await store.registerDevice(device(two.context, token: "t", now: now), origin: origin)
        #expect(
            try await events.next().map(\.description)
                == [
                    Seen.device(
                        "device.registered", first.id, of: one.context.profile.id, session: one.context.session.id,
                        by: origin.actor),
                    .device(
                        "device.removed", first.id, of: one.context.profile.id, session: one.context.session.id,
                        by: origin.actor),
                    .device(
                        "device.registered", moved.id, of: two.context.profile.id, session: two.context.session.id,
                        by: origin.actor),
                ].map(\.description))
        #expect(
            try await store.deleteDevice(
                deviceID: moved.id, profileID: two.context.profile.id, now: now, origin: origin))
        #expect(try await events.next().map(\.type) == ["device.removed"])
        #expect(
            try await !store.deleteDevice(
                deviceID: moved.id, profileID: two.context.profile.id, now: now, origin: origin))
        #expect(try await events.next().isEmpty)

        // Block: profile.blocked, its live session ended (blocked), its device removed; again: nothing new.
        let blockedDevice = try await store.registerDevice(device(one.context, token: "b", now: now), origin: origin)
        _ = try await events.next()
        _ = try await store.setProfileBlocked(
            projectID: projectID, profileID: one.context.profile.id, blocked: true, reason: "spam", now: now,
            origin: Self.admin)
        #expect(
            try await events.next() == [
                Seen(type: "profile.blocked", data: ["profile_id": one.context.profile.id], actor: .secretKey),
                .sessionEnded(one.context.session.id, of: one.context.profile.id, reason: "blocked", by: .secretKey),
                .device(
                    "device.removed", blockedDevice.id, of: one.context.profile.id, session: one.context.session.id,
                    by: .secretKey),
            ])
        _ = try await store.setProfileBlocked(
            projectID: projectID, profileID: one.context.profile.id, blocked: true, reason: "again", now: now,
            origin: Self.admin)
        #expect(try await events.next().isEmpty)
        _ = try await store.setProfileBlocked(
            projectID: projectID, profileID: one.context.profile.id, blocked: false, reason: nil, now: now,
            origin: Self.admin)
        #expect(
            try await events.next() == [
                Seen(type: "profile.unblocked", data: ["profile_id": one.context.profile.id], actor: .secretKey)
            ])

        // Erasure: the promoted profile's earlier events lose its external ID; profile.erased keeps it.
        let promoted = try await identify(environment, externalID: "erase-me", caller: two.context.session.id)
        let third = try await start(environment)
        _ = try await identify(environment, externalID: "erase-me", caller: third.context.session.id)
        _ = try await events.next()
        let before = try await store.events(EventQuery(projectID: projectID, after: 0, limit: 200))
        #expect(before.contains { $0.data.contains("erase-me") })
        #expect(
            try await store.eraseProfile(
                projectID: projectID, profileID: promoted.context.profile.id, now: now, origin: Self.admin))
        let erased = try await events.next()
        #expect(erased.map(\.type) == ["session.ended", "session.ended", "profile.erased"])
        #expect(erased.dropLast().allSatisfy { $0.data["reason"] == "erased" })
        #expect(
            erased.last?.data == [
                "profile_id": promoted.context.profile.id, "external_id": "erase-me",
                "alias_ids": third.context.profile.id,
            ])
        let after = try await store.events(EventQuery(projectID: projectID, after: 0, limit: 200))
        #expect(after.count == events.all.count)
        let older = after.prefix(before.count)
        #expect(!older.contains { $0.data.contains("erase-me") }, "older events keep no external ID of the erased")
        let promotedEvent = try #require(older.first { $0.type == "profile.promoted" })
        #expect(
            Reader.flatten(promotedEvent.data) == ["profile_id": promoted.context.profile.id, "external_id": "null"])
        #expect(
            older.map(\.sequence) == before.map(\.sequence) && older.map(\.type) == before.map(\.type),
            "scrubbing keeps every event")
    }

    @Test(
        "Project settings, identity secrets, API and signing keys write their events", arguments: StoreBackend.allCases)
    func projectConfiguration(backend: StoreBackend) async throws {
        let (environment, store, projectID, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let events = Reader(environment)
        var settings = environment.project.project.settings
        settings.leewaySeconds = 5
        settings.rateLimits.anonymousStartsPerMinute = 7
        _ = try await store.updateProjectSettings(
            projectID: projectID, settings: settings, now: now, origin: Self.admin)
        #expect(
            try await events.next() == [
                Seen(
                    type: "project.updated",
                    data: ["project_id": projectID, "changed": "leeway_seconds,rate_limits"], actor: .secretKey)
            ])
        _ = try await store.updateProjectSettings(
            projectID: projectID, settings: settings, now: now, origin: Self.admin)
        #expect(try await events.next().isEmpty, "no change, no event")
        try await store.addIdentitySecret(
            projectID: projectID, secret: IdentitySecretRecord(kid: "k2", value: "never-in-an-event", createdAt: now),
            limit: 3, origin: Self.admin)
        #expect(try await store.deleteIdentitySecret(projectID: projectID, kid: "k2", now: now, origin: Self.admin))
        #expect(
            try await store.rotateAPIKey(
                projectID: projectID, kind: .secret, newKeyHash: OpaqueToken.sha256("sk_new"), graceUntil: now + 60,
                now: now, origin: Self.admin))
        let key = SessionSigningKey.generate()
        try await store.rotateSessionKey(
            projectID: projectID,
            newKey: SessionKeyRecord(kid: key.kid, privateKey: key.privateKeyRawRepresentation, createdAt: now),
            now: now, origin: .system)
        let seen = try await events.next()
        #expect(
            seen.map(\.type) == [
                "identity_secret.created", "identity_secret.deleted", "api_key.rotated", "signing_key.rotated",
            ])
        #expect(seen[0].data == ["kid": "k2"])
        #expect(seen[2].data["kind"] == "secret")
        #expect(seen[3].data == ["kid": key.kid])
        #expect(seen[3].actor == .system)
        #expect(!events.all.contains { $0.data.contains("never-in-an-event") })
    }

    @Test("A change that rolls back writes no event", arguments: StoreBackend.allCases)
    func rolledBack(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let events = Reader(environment)
        let installation = UUID().uuidString.lowercased()
        let anonymous = try await start(environment, installationID: installation)
        let signedIn = try await identify(environment, externalID: "once", jti: "j1")
        _ = try await events.next()

        await #expect(throws: CoreError.identityTokenReplayed) {
            _ = try await identify(environment, externalID: "once", jti: "j1")
        }
        await #expect(throws: CoreError.installationConflict) {
            _ = try await start(environment, installationID: installation, secretHash: OpaqueToken.sha256("wrong"))
        }
        #expect(try await events.next().isEmpty)
        for profile in [anonymous.context.profile, signedIn.context.profile] {
            _ = try await store.setProfileBlocked(
                projectID: projectID, profileID: profile.id, blocked: true, reason: nil,
                now: environment.clock.seconds, origin: Self.admin)
        }
        _ = try await events.next()
        await #expect(throws: CoreError.profileBlocked) { _ = try await identify(environment, externalID: "once") }
        await #expect(throws: CoreError.profileBlocked) {
            _ = try await start(environment, installationID: installation)
        }
        await #expect(throws: CoreError.self) {
            try await store.addIdentitySecret(
                projectID: projectID, secret: IdentitySecretRecord(kid: "k9", value: "v", createdAt: 1), limit: 1,
                origin: Self.admin)
        }
        #expect(try await events.next().isEmpty)
        #expect(
            try await store.events(EventQuery(projectID: projectID, after: 0, limit: 200)).count == events.all.count)
    }

    @Test("Cleanup ends expired sessions with reason expired, as the cleanup service", arguments: StoreBackend.allCases)
    func expiry(backend: StoreBackend) async throws {
        let (environment, store, _, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let events = Reader(environment)
        let expiring = try await start(environment, minutes: 5)
        let withDevice = try await store.registerDevice(
            device(expiring.context, token: "x", now: now), origin: .system)
        let revoked = try await start(environment, minutes: 5)
        _ = try await store.revokeSession(
            sessionID: revoked.context.session.id, profileID: nil, now: now, reason: .signedOut, origin: .system)
        _ = try await start(environment, minutes: 60)
        _ = try await events.next()
        let counts = try await store.deleteExpired(now: now + 301, batchSize: 10)
        #expect(counts.sessions == 2)
        #expect(
            try await events.next() == [
                .sessionEnded(
                    expiring.context.session.id, of: expiring.context.profile.id, reason: "expired", by: .cleanup),
                .device(
                    "device.removed", withDevice.id, of: expiring.context.profile.id,
                    session: expiring.context.session.id, by: .cleanup),
            ])
    }

    @Test(
        "Retention of anonymous profiles tells each deletion: profile.erased, with its expired session and device",
        arguments: StoreBackend.allCases)
    func anonymousRetention(backend: StoreBackend) async throws {
        let (environment, store, _, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let events = Reader(environment)
        let old = try await start(environment, minutes: 5)
        let oldDevice = try await store.registerDevice(
            device(old.context, token: "old", now: environment.clock.seconds), origin: .system)
        _ = try await events.next()
        environment.clock.advance(seconds: 31 * 86_400)
        let now = environment.clock.seconds
        let counts = try await store.deleteStale(now: now, anonymousCreatedBefore: now - 30 * 86_400, batchSize: 10)
        #expect(counts.anonymousProfiles == 1)
        let profileID = old.context.profile.id
        #expect(
            try await events.next() == [
                .sessionEnded(old.context.session.id, of: profileID, reason: "expired", by: .cleanup),
                .device("device.removed", oldDevice.id, of: profileID, session: old.context.session.id, by: .cleanup),
                Seen(
                    type: "profile.erased", data: ["profile_id": profileID, "external_id": "null", "alias_ids": ""],
                    actor: .cleanup),
            ])
    }

    @Test(
        "The feed filters by type and profile, pages with after, and retention deletes old events",
        arguments: StoreBackend.allCases)
    func feedAndRetention(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let one = try await start(environment)
        environment.clock.advance(seconds: 100)
        let two = try await start(environment)
        let all = try await store.events(EventQuery(projectID: projectID, after: 0, limit: 200))
        #expect(all.map(\.sequence) == [1, 2, 3, 4])
        #expect(
            try await store.events(EventQuery(projectID: projectID, after: 0, types: ["session.created"], limit: 200))
                .map(\.sequence) == [2, 4])
        #expect(
            try await store.events(
                EventQuery(projectID: projectID, after: 0, profileID: two.context.profile.id, limit: 200)
            ).map(\.sequence) == [3, 4])
        #expect(try await store.events(EventQuery(projectID: projectID, after: 1, limit: 2)).map(\.sequence) == [2, 3])
        #expect(try await store.events(EventQuery(projectID: "prj_other", after: 0, limit: 200)).isEmpty)
        _ = one

        let cutoff = environment.clock.seconds
        #expect(try await store.deleteEvents(createdBefore: cutoff, batchSize: 1) == 1)
        #expect(try await store.deleteEvents(createdBefore: cutoff, batchSize: 10) == 1)
        #expect(try await store.deleteEvents(createdBefore: cutoff, batchSize: 10) == 0)
        #expect(
            try await store.events(EventQuery(projectID: projectID, after: 0, limit: 200)).map(\.sequence) == [3, 4])
        // Sequences go on after retention: never reused.
        _ = try await start(environment)
        #expect(
            try await store.events(EventQuery(projectID: projectID, after: 4, limit: 200)).map(\.sequence) == [5, 6])
    }
}
