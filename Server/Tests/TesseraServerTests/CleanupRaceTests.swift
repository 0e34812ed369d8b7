import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The stale-profile cleanup racing what ends or binds to the sessions it deletes, with the gates
/// of ``ProfileRaceTests`` (a session's row held on PostgreSQL, the writer on SQLite).
@Suite("The stale-profile cleanup decides from the rows it locked")
struct CleanupRaceTests {
    @Test(
        "a revoke ∥ the stale-profile cleanup: one session.ended for the session",
        arguments: StoreBackend.allCases)
    func revokeThenCleanup(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let session = try await race.start().context.session
            // Alive for the revoke, expired for the cleanup (two nodes' clocks a moment apart).
            let (revoked, cleaned) = try await race.run(
                holding: [.session(session.id)],
                {
                    try await $0.revokeSession(
                        sessionID: session.id, profileID: nil, now: session.expiresAt - 1, reason: .signedOut,
                        origin: .system)
                },
                then: {
                    try await $0.deleteStale(
                        now: session.expiresAt + 1, anonymousCreatedBefore: session.expiresAt + 1, batchSize: 10)
                })
            #expect(revoked)
            #expect(cleaned.anonymousProfiles == 1)
            let ended = try await race.eventsSince().filter { $0.type == "session.ended" }
            #expect(ended.count == 1, "\(ended.map(\.data))")
            #expect(ended.first?.data.contains("\"reason\":\"signed_out\"") == true)
        }
    }

    @Test(
        "a device registration ∥ the stale-profile cleanup: the removed device has its device.removed",
        arguments: StoreBackend.allCases)
    func registerThenCleanup(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let anonymous = try await race.start()
            let session = anonymous.context.session
            let deviceID = OpaqueToken.identifier(prefix: "dev_")
            let (_, cleaned) = try await race.run(
                holding: [.session(session.id)],
                {
                    try await $0.registerDevice(
                        DeviceRecord(
                            id: deviceID, projectID: race.projectID, sessionID: session.id,
                            profileID: anonymous.context.profile.id, platform: "ios", environment: "production",
                            token: "token-c2", createdAt: session.expiresAt - 1),
                        origin: .system)
                },
                then: {
                    try await $0.deleteStale(
                        now: session.expiresAt + 1, anonymousCreatedBefore: session.expiresAt + 1, batchSize: 10)
                })
            #expect(cleaned.anonymousProfiles == 1)
            let events = try await race.eventsSince()
            #expect(events.contains { $0.type == "device.registered" })
            #expect(
                events.contains { $0.type == "device.removed" && $0.data.contains(deviceID) },
                "\(events.map(\.type))")
        }
    }
}
