import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// `POST /v1/devices` authenticates the session, then registers the device in its own transaction. A
/// revoke or an erasure can commit in between (the crash test, `Server/Tests/crash/run.py`, found
/// both): the registration must then fail with the session's 401, never bind a device to an ended
/// session (revoke) nor answer a 5xx (erasure: the session row is gone).
@Suite("Device registration after its session ended")
struct DeviceSessionRaceTests {
    private func started(_ environment: TestEnvironment, minutes: Int64 = 60) async throws -> SessionContext {
        let now = environment.clock.seconds
        let session = SessionRecord(
            id: OpaqueToken.identifier(prefix: "ses_"), projectID: environment.project.project.id, profileID: "",
            installationID: nil, kind: .anonymous, createdAt: now, lastAuthenticatedAt: now,
            expiresAt: now + minutes * 60)
        return try await environment.store.startAnonymousSession(
            AnonymousStart(
                projectID: environment.project.project.id, installationID: UUID().uuidString.lowercased(),
                installationSecretHash: OpaqueToken.sha256(OpaqueToken.installationSecret()),
                newProfileID: OpaqueToken.identifier(prefix: "usr_"), newSession: session,
                sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken()))
        ).context
    }

    private func device(_ context: SessionContext, at now: Int64) -> DeviceRecord {
        DeviceRecord(
            id: OpaqueToken.identifier(prefix: "dev_"), projectID: context.session.projectID,
            sessionID: context.session.id, profileID: context.profile.id, platform: "fcm", environment: "production",
            token: "tok-\(UUID().uuidString)", createdAt: now)
    }

    @Test("A session revoked before the registration commits registers no device", arguments: StoreBackend.allCases)
    func revoked(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let now = environment.clock.seconds
        let context = try await started(environment)
        #expect(try await store.revokeSession(sessionID: context.session.id, profileID: nil, now: now))
        await #expect(throws: CoreError.sessionRevoked) {
            _ = try await store.registerDevice(device(context, at: now))
        }
        #expect(try await store.liveDevices(profileID: context.profile.id, now: now).isEmpty)
    }

    @Test("A profile erased before the registration commits: 401 session_not_found", arguments: StoreBackend.allCases)
    func erased(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let now = environment.clock.seconds
        let context = try await started(environment)
        #expect(try await store.eraseProfile(projectID: context.session.projectID, profileID: context.profile.id))
        await #expect(throws: CoreError.sessionNotFound) {
            _ = try await store.registerDevice(device(context, at: now))
        }
    }

    @Test("An expired session registers no device; a live one does", arguments: StoreBackend.allCases)
    func expired(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let now = environment.clock.seconds
        let context = try await started(environment, minutes: 5)
        let registered = try await store.registerDevice(device(context, at: now))
        #expect(try await store.liveDevices(profileID: context.profile.id, now: now).map(\.id) == [registered.id])
        await #expect(throws: CoreError.sessionExpired) {
            _ = try await store.registerDevice(device(context, at: now + 5 * 60))
        }
    }
}
