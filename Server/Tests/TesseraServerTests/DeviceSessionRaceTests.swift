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
    /// A store with one live anonymous session of `minutes`, the clock's now, and the session.
    private func started(_ backend: StoreBackend, minutes: Int64 = 60) async throws -> (
        store: any TesseraStore, now: Int64, context: SessionContext
    ) {
        let environment = try await TestEnvironment.make(backend: backend)
        return (
            environment.store, environment.clock.seconds, try await environment.storeStart(minutes: minutes).context
        )
    }

    private func device(_ context: SessionContext, at now: Int64) -> DeviceRecord {
        DeviceRecord(
            id: OpaqueToken.identifier(prefix: "dev_"), projectID: context.session.projectID,
            sessionID: context.session.id, profileID: context.profile.id, platform: "fcm", environment: "production",
            token: "tok-\(UUID().uuidString)", createdAt: now)
    }

    @Test("A session revoked before the registration commits registers no device", arguments: StoreBackend.allCases)
    func revoked(backend: StoreBackend) async throws {
        let (store, now, context) = try await started(backend)
        #expect(try await store.revokeSession(sessionID: context.session.id, profileID: nil, now: now))
        await #expect(throws: CoreError.sessionRevoked) {
            _ = try await store.registerDevice(device(context, at: now))
        }
        #expect(try await store.liveDevices(profileID: context.profile.id, now: now).isEmpty)
    }

    @Test("A profile erased before the registration commits: 401 session_not_found", arguments: StoreBackend.allCases)
    func erased(backend: StoreBackend) async throws {
        let (store, now, context) = try await started(backend)
        #expect(try await store.eraseProfile(projectID: context.session.projectID, profileID: context.profile.id))
        await #expect(throws: CoreError.sessionNotFound) {
            _ = try await store.registerDevice(device(context, at: now))
        }
    }

    @Test("An expired session registers no device; a live one does", arguments: StoreBackend.allCases)
    func expired(backend: StoreBackend) async throws {
        let (store, now, context) = try await started(backend, minutes: 5)
        let registered = try await store.registerDevice(device(context, at: now))
        #expect(try await store.liveDevices(profileID: context.profile.id, now: now).map(\.id) == [registered.id])
        await #expect(throws: CoreError.sessionExpired) {
            _ = try await store.registerDevice(device(context, at: now + 5 * 60))
        }
    }
}
