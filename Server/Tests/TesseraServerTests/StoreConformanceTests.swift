import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The storage contract, run against every backend in ``StoreBackend``.
@Suite("Store conformance")
struct StoreConformanceTests {
    private func start(
        _ environment: TestEnvironment, installationID: String = UUID().uuidString.lowercased(),
        secretHash: [UInt8] = OpaqueToken.sha256(OpaqueToken.installationSecret()), minutes: Int64 = 60
    ) async throws -> AnonymousStartResult {
        try await environment.storeStart(installationID: installationID, secretHash: secretHash, minutes: minutes)
    }

    private func identify(
        _ environment: TestEnvironment, externalID: String, caller: String? = nil, jti: String? = nil
    ) async throws -> IdentifyResult {
        try await environment.storeIdentify(externalID: externalID, caller: caller, jti: jti, name: "N")
    }

    @Test("Migrations are idempotent and the store answers ping", arguments: StoreBackend.allCases)
    func migrations(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.store.migrate()
        try await environment.store.ping()
        #expect(try await environment.store.projectCount() == 1)
    }

    @Test("Projects: lookups by ID and key hashes, unique slugs, settings", arguments: StoreBackend.allCases)
    func projects(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let project = environment.project
        let store = environment.store
        #expect(try await store.project(id: project.project.id) == project.project)
        #expect(
            try await store.project(publishableKeyHash: OpaqueToken.sha256(project.publishableKey))?.id
                == project.project.id)
        #expect(try await store.project(secretKeyHash: OpaqueToken.sha256(project.secretKey))?.id == project.project.id)
        #expect(try await store.project(secretKeyHash: OpaqueToken.sha256(project.publishableKey)) == nil)
        await #expect(throws: CoreError.self) {
            _ = try await ProjectProvisioner.create(name: "Dup", slug: project.project.slug, store: store)
        }
        var settings = ProjectSettings()
        settings.leewaySeconds = 5
        let updated = try await store.updateProjectSettings(projectID: project.project.id, settings: settings, now: 7)
        #expect(updated?.settings.leewaySeconds == 5)
        #expect(updated?.updatedAt == 7)
        #expect(try await store.updateProjectSettings(projectID: "prj_none", settings: settings, now: 7) == nil)
    }

    @Test("Identity secrets: limit and last-secret rules", arguments: StoreBackend.allCases)
    func identitySecrets(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        for index in 0..<2 {
            try await store.addIdentitySecret(
                projectID: projectID, secret: IdentitySecretRecord(kid: "k\(index)", value: "v", createdAt: 1), limit: 3
            )
        }
        await #expect(throws: CoreError.self) {
            try await store.addIdentitySecret(
                projectID: projectID, secret: IdentitySecretRecord(kid: "k9", value: "v", createdAt: 1), limit: 3)
        }
        #expect(try await store.identitySecrets(projectID: projectID).count == 3)
        #expect(try await store.deleteIdentitySecret(projectID: projectID, kid: "k0"))
        #expect(try await !store.deleteIdentitySecret(projectID: projectID, kid: "k0"))
        #expect(try await store.deleteIdentitySecret(projectID: projectID, kid: "k1"))
        await #expect(throws: CoreError.self) {
            _ = try await store.deleteIdentitySecret(projectID: projectID, kid: environment.project.identitySecret.kid)
        }
    }

    @Test("Anonymous start: create, restore, conflict", arguments: StoreBackend.allCases)
    func anonymous(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let installationID = UUID().uuidString.lowercased()
        let hash = OpaqueToken.sha256("secret")
        let first = try await start(environment, installationID: installationID, secretHash: hash)
        let second = try await start(environment, installationID: installationID, secretHash: hash)
        #expect(first.createdInstallation)
        #expect(!second.createdInstallation)
        #expect(first.context.profile.id == second.context.profile.id)
        await #expect(throws: CoreError.self) {
            _ = try await start(environment, installationID: installationID, secretHash: OpaqueToken.sha256("other"))
        }
    }

    @Test("Identify: promote, merge with alias, unchanged, conflict, replay", arguments: StoreBackend.allCases)
    func identifyRules(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let anonymous = try await start(environment)
        let promoted = try await identify(environment, externalID: "a", caller: anonymous.context.session.id)
        #expect(promoted.merge?.outcome == .promoted)
        #expect(promoted.context.profile.id == anonymous.context.profile.id)
        #expect(promoted.context.profile.kind == .identified)
        let ended = try await store.sessionContext(sessionID: anonymous.context.session.id)
        #expect(ended?.session.revokedAt != nil)

        let second = try await start(environment)
        let merged = try await identify(environment, externalID: "a", caller: second.context.session.id)
        #expect(merged.merge?.outcome == .merged)
        #expect(merged.context.profile.id == promoted.context.profile.id)
        #expect(
            try await store.profile(projectID: projectID, id: second.context.profile.id)?.id
                == promoted.context.profile.id)
        #expect(try await store.sessionContext(sessionID: second.context.session.id) == nil)

        let unchanged = try await identify(environment, externalID: "a", caller: merged.context.session.id)
        #expect(unchanged.merge?.outcome == .unchanged)
        await #expect(throws: CoreError.self) {
            _ = try await identify(environment, externalID: "b", caller: unchanged.context.session.id)
        }
        _ = try await identify(environment, externalID: "c", jti: "j")
        await #expect(throws: CoreError.self) { _ = try await identify(environment, externalID: "c", jti: "j") }
    }

    @Test("Sessions: extend is max(), revoke keeps the row, alive checks", arguments: StoreBackend.allCases)
    func sessions(backend: StoreBackend) async throws {
        let (environment, store, _, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let started = try await start(environment, minutes: 60)
        let id = started.context.session.id
        let shorter = try await store.extendSession(sessionID: id, expiresAt: now + 60, now: now)
        #expect(shorter?.session.expiresAt == now + 3600)
        let longer = try await store.extendSession(sessionID: id, expiresAt: now + 7200, now: now + 10)
        #expect(longer?.session.expiresAt == now + 7200)
        #expect(longer?.session.lastAuthenticatedAt == now + 10)
        #expect(try await store.extendSession(sessionID: id, expiresAt: now + 9999, now: now + 7200) == nil)
        #expect(try await store.liveSessions(profileID: started.context.profile.id, now: now).count == 1)
        #expect(try await store.revokeSession(sessionID: id, profileID: "usr_other", now: now) == false)
        #expect(try await store.revokeSession(sessionID: id, profileID: started.context.profile.id, now: now))
        #expect(try await store.revokeSession(sessionID: id, profileID: nil, now: now) == false)
        #expect(try await store.extendSession(sessionID: id, expiresAt: now + 9999, now: now) == nil)
        #expect(try await store.sessionContext(sessionID: id)?.session.revokedAt == now)
        #expect(try await store.liveSessions(profileID: started.context.profile.id, now: now).isEmpty)
    }

    @Test("Devices: move, delete by owner, live only", arguments: StoreBackend.allCases)
    func devices(backend: StoreBackend) async throws {
        let (environment, store, _, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let one = try await start(environment)
        let two = try await start(environment)
        func device(_ context: SessionContext) -> DeviceRecord {
            DeviceRecord(
                id: OpaqueToken.identifier(prefix: "dev_"), projectID: context.session.projectID,
                sessionID: context.session.id, profileID: context.profile.id, platform: "apns",
                environment: "production",
                token: "tok", createdAt: now)
        }
        let first = try await store.registerDevice(device(one.context))
        let moved = try await store.registerDevice(device(two.context))
        #expect(try await store.liveDevices(profileID: one.context.profile.id, now: now).isEmpty)
        #expect(try await store.liveDevices(profileID: two.context.profile.id, now: now).map(\.id) == [moved.id])
        #expect(try await !store.deleteDevice(deviceID: first.id, profileID: one.context.profile.id))
        #expect(try await !store.deleteDevice(deviceID: moved.id, profileID: one.context.profile.id))
        #expect(try await store.deleteDevice(deviceID: moved.id, profileID: two.context.profile.id))
    }

    @Test("Cleanup deletes expired sessions, their devices and used jtis, in batches", arguments: StoreBackend.allCases)
    func cleanup(backend: StoreBackend) async throws {
        let (environment, store, _, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        for _ in 0..<5 {
            let started = try await start(environment, minutes: 5)
            _ = try await store.registerDevice(
                DeviceRecord(
                    id: OpaqueToken.identifier(prefix: "dev_"), projectID: started.context.session.projectID,
                    sessionID: started.context.session.id, profileID: started.context.profile.id, platform: "fcm",
                    environment: "production", token: UUID().uuidString, createdAt: now))
        }
        let keeper = try await start(environment, minutes: 60)
        _ = try await identify(environment, externalID: "j", jti: "used")
        #expect(try await store.deleteExpired(now: now, batchSize: 10).total == 0)
        let first = try await store.deleteExpired(now: now + 301, batchSize: 3)
        #expect(first.sessions == 3)
        #expect(first.devices == 3)
        #expect(first.tokenIDs == 1)
        let second = try await store.deleteExpired(now: now + 301, batchSize: 3)
        #expect(second.sessions == 2)
        #expect(try await store.sessionContext(sessionID: keeper.context.session.id) != nil)
        _ = try await identify(environment, externalID: "j", jti: "used")
    }

    @Test("Erasure removes the profile, aliases, sessions and devices", arguments: StoreBackend.allCases)
    func erasure(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let existing = try await identify(environment, externalID: "gone")
        let anonymous = try await start(environment)
        _ = try await identify(environment, externalID: "gone", caller: anonymous.context.session.id)
        #expect(try await store.eraseProfile(projectID: "prj_other", profileID: existing.context.profile.id) == false)
        #expect(try await store.eraseProfile(projectID: projectID, profileID: anonymous.context.profile.id))
        #expect(try await store.profile(projectID: projectID, id: existing.context.profile.id) == nil)
        #expect(try await store.profile(projectID: projectID, id: anonymous.context.profile.id) == nil)
        #expect(try await store.sessionContext(sessionID: existing.context.session.id) == nil)
    }

    @Test(
        "Rate-limit counters: one per key and window, no hit lost under concurrency", arguments: StoreBackend.allCases)
    func rateLimitCounters(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let address = RateLimitKey(projectID: projectID, bucket: .failedIdentifyByAddress, key: "192.0.2.1")
        let installation = RateLimitKey(projectID: projectID, bucket: .failedIdentifyByInstallation, key: "i-1")
        let server = RateLimitKey(projectID: "", bucket: .failedSessionLookup, key: "192.0.2.1")
        let window = RateLimitWindow(containing: environment.clock.seconds)
        #expect(try await store.hitRateLimits([], window: window) == [])
        #expect(try await store.hitRateLimits([address, installation], window: window) == [1, 1])
        #expect(try await store.hitRateLimits([installation, address, server], window: window) == [2, 2, 1])
        let next = RateLimitWindow(containing: window.end)
        #expect(try await store.hitRateLimits([address], window: next) == [1])
        let counts = try await withThrowingTaskGroup(of: Int64.self) { group in
            for _ in 0..<40 {
                group.addTask { try await store.hitRateLimits([server], window: next)[0] }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(counts.sorted() == Array(1...40))
    }

    @Test("An anonymous start counts itself and a refused start changes nothing", arguments: StoreBackend.allCases)
    func anonymousStartCharge(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let projectID = environment.project.project.id
        let window = RateLimitWindow(containing: environment.clock.seconds)
        let charge = RateLimitCharge(
            key: RateLimitKey(projectID: projectID, bucket: .anonymousStart, key: "192.0.2.1"), window: window,
            limit: 2)
        func start(_ installationID: String = UUID().uuidString.lowercased(), charge: RateLimitCharge?)
            async throws -> AnonymousStartResult
        {
            try await environment.storeStart(
                installationID: installationID, secretHash: OpaqueToken.sha256("s"), rateLimit: charge)
        }
        #expect(try await start(charge: charge).rateLimitHits == 1)
        #expect(try await start(charge: charge).rateLimitHits == 2)
        #expect(try await start(charge: nil).rateLimitHits == nil)
        let refused = UUID().uuidString.lowercased()
        await #expect(throws: CoreError.rateLimited(retryAfter: 20)) { _ = try await start(refused, charge: charge) }
        await #expect(throws: CoreError.rateLimited(retryAfter: 20)) { _ = try await start(refused, charge: charge) }
        #expect(try await environment.store.hitRateLimits([charge.key], window: window) == [3])
        var next = charge
        next.window = RateLimitWindow(containing: window.end)
        let later = try await start(refused, charge: next)
        #expect(later.createdInstallation)
        #expect(later.rateLimitHits == 1)
    }

    @Test(
        "Cleanup deletes finished rate-limit windows and old anonymous profiles without a live session",
        arguments: StoreBackend.allCases)
    func staleCleanup(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let window = RateLimitWindow(containing: environment.clock.seconds)
        let key = RateLimitKey(projectID: projectID, bucket: .anonymousStart, key: "192.0.2.1")
        _ = try await store.hitRateLimits([key], window: window)
        #expect(try await store.deleteStale(now: window.end - 1, anonymousCreatedBefore: nil, batchSize: 10).total == 0)
        #expect(
            try await store.deleteStale(now: window.end, anonymousCreatedBefore: nil, batchSize: 10).rateLimitWindows
                == 1)
        #expect(try await store.hitRateLimits([key], window: window) == [1])

        let day: Int64 = 86_400
        var old: [AnonymousStartResult] = []
        for _ in 0..<3 { old.append(try await start(environment, minutes: 5)) }
        let oldInstallation = old[0].context.session.installationID!
        _ = try await store.registerDevice(
            DeviceRecord(
                id: OpaqueToken.identifier(prefix: "dev_"), projectID: projectID,
                sessionID: old[0].context.session.id, profileID: old[0].context.profile.id, platform: "apns",
                environment: "production", token: "old-device", createdAt: environment.clock.seconds))
        let oldButLive = try await start(environment, minutes: 60 * 24 * 60)
        let oldRevoked = try await start(environment, minutes: 60 * 24 * 60)
        #expect(
            try await store.revokeSession(
                sessionID: oldRevoked.context.session.id, profileID: nil, now: environment.clock.seconds))
        let identified = try await identify(environment, externalID: "kept")
        environment.clock.advance(seconds: Double(31 * day))
        let recent = try await start(environment, minutes: 5)
        environment.clock.advance(seconds: 600)
        let now = environment.clock.seconds
        let cutoff = now - 30 * day

        #expect(try await store.deleteStale(now: now, anonymousCreatedBefore: nil, batchSize: 2).anonymousProfiles == 0)
        let first = try await store.deleteStale(now: now, anonymousCreatedBefore: cutoff, batchSize: 2)
        #expect(first.anonymousProfiles == 2)
        let second = try await store.deleteStale(now: now, anonymousCreatedBefore: cutoff, batchSize: 2)
        #expect(second.anonymousProfiles == 2)
        #expect(try await store.deleteStale(now: now, anonymousCreatedBefore: cutoff, batchSize: 2).total == 0)

        for gone in old + [oldRevoked] {
            #expect(try await store.profile(projectID: projectID, id: gone.context.profile.id) == nil)
            #expect(try await store.sessionContext(sessionID: gone.context.session.id) == nil)
        }
        #expect(try await store.liveDevices(profileID: old[0].context.profile.id, now: now).isEmpty)
        for kept in [oldButLive, recent] {
            #expect(try await store.profile(projectID: projectID, id: kept.context.profile.id) != nil)
        }
        #expect(try await store.profile(projectID: projectID, id: identified.context.profile.id) != nil)
        // The installation went with its profile: starting it again is a new installation, any secret.
        let restarted = try await start(
            environment, installationID: oldInstallation, secretHash: OpaqueToken.sha256("another"))
        #expect(restarted.createdInstallation)
        #expect(restarted.context.profile.id != old[0].context.profile.id)
    }
}
