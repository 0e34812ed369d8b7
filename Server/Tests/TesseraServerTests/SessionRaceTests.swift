import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// A session or a device changed by two requests at once ends as one of their
/// serial orders would, with the gates of ``ProfileRaceTests`` (rows held on PostgreSQL, the writer
/// on SQLite).
@Suite("Concurrent changes to sessions and devices end as a serial order would")
struct SessionRaceTests {
    private static let now: Int64 = 1_795_000_000

    /// Two live sessions of one profile.
    private static func twoSessions(_ race: Race, externalID: String) async throws -> (
        profileID: String, one: String, two: String
    ) {
        let one = try await race.identify(externalID: externalID)
        let two = try await race.identify(externalID: externalID)
        #expect(one.context.profile.id == two.context.profile.id)
        return (one.context.profile.id, one.context.session.id, two.context.session.id)
    }

    @Test(
        "SP ends SP2 ∥ SP2 ends SP: the first ends the other, the second's caller had ended",
        arguments: StoreBackend.allCases)
    func mutualSessionDelete(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let (profileID, sp, sp2) = try await Self.twoSessions(race, externalID: "user-s1")
            let (first, second) = try await race.run(
                holding: [.profile(profileID), .session(min(sp, sp2)), .session(max(sp, sp2))],
                race.revocation(of: sp2, by: sp, now: Self.now),
                then: race.revocation(of: sp, by: sp2, now: Self.now))
            #expect(first == true)
            #expect(second == nil, "the caller's session had ended: 401, nothing ended")
            let ended = try await race.eventsSince().filter { $0.type == "session.ended" }
            #expect(ended.count == 1 && ended.first?.data.contains(sp2) == true)
            #expect(try await race.store.liveSessions(profileID: profileID, now: Self.now).map(\.id) == [sp])
        }
    }

    @Test(
        "SP2 ends SP ∥ SP revokes the others: the revoke's caller had ended, SP2 lives",
        arguments: StoreBackend.allCases)
    func deleteThenRevokeOthers(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let (profileID, sp, sp2) = try await Self.twoSessions(race, externalID: "user-s2")
            let (first, second) = try await race.run(
                holding: [.profile(profileID), .session(min(sp, sp2)), .session(max(sp, sp2))],
                race.revocation(of: sp, by: sp2, now: Self.now),
                then: { try await $0.revokeOtherSessions(sessionID: sp, now: Self.now, origin: .system) })
            #expect(first == true)
            #expect(second == nil)
            #expect(try await race.store.liveSessions(profileID: profileID, now: Self.now).map(\.id) == [sp2])
        }
    }

    @Test(
        "SP ends SP2 ∥ SP2 removes a device: the removal's caller had ended, the device stays",
        arguments: StoreBackend.allCases)
    func deleteThenRemoveDevice(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let (profileID, sp, sp2) = try await Self.twoSessions(race, externalID: "user-s3")
            let device = try await race.store.registerDevice(
                DeviceRecord(
                    id: OpaqueToken.identifier(prefix: "dev_"), projectID: race.projectID, sessionID: sp,
                    profileID: profileID, platform: "ios", environment: "production", token: "token-s3",
                    createdAt: Self.now),
                origin: .system)
            let (first, second) = try await race.run(
                holding: [.profile(profileID), .session(min(sp, sp2)), .session(max(sp, sp2))],
                race.revocation(of: sp2, by: sp, now: Self.now),
                then: {
                    try await $0.deleteDevice(
                        deviceID: device.id, callerSessionID: sp2, ownSessionOnly: false, now: Self.now,
                        origin: .system)
                })
            #expect(first == true)
            #expect(second == nil, "the caller's session had ended: 401, nothing removed")
            #expect(!(try await race.eventsSince().contains { $0.type == "device.removed" }))
            #expect(try await race.store.liveDevices(profileID: profileID, now: Self.now).map(\.id) == [device.id])
        }
    }

}

/// The same races sent through the API: the caller's own session is judged in the transaction that
/// acts, not trusted from the authentication that came before it.
@Suite("A caller ended while its request waited ends nothing")
struct CallerRaceTests {
    /// Two sessions of one identified user, their tokens and the held rows of the race.
    private static func twoSessions(_ environment: TestEnvironment, _ client: APIClient, sub: String) async throws
        -> (one: (id: String, token: String), two: (id: String, token: String), rows: [HeldRow])
    {
        let one = try await client.identify(sub: sub)
        let two = try await client.identify(sub: sub)
        let first = (id: try #require(one.sessionID), token: try #require(one.sessionToken))
        let second = (id: try #require(two.sessionID), token: try #require(two.sessionToken))
        #expect(one.profileID == two.profileID)
        return (
            first, second,
            [
                .profile(try #require(one.profileID)), .session(min(first.id, second.id)),
                .session(max(first.id, second.id)),
            ]
        )
    }

    @Test(
        "DELETE /v1/sessions: SP ends SP2 ∥ SP2 ends SP answers 204, then 401 session_revoked",
        arguments: StoreBackend.allCases)
    func mutualDelete(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend, store: try backend.makeRaceStore()) { environment, client in
            let (sp, sp2, rows) = try await Self.twoSessions(environment, client, sub: "user-h1")
            let (first, second) = try await race(
                environment.store, holding: rows,
                { try await client.send(.delete, "/v1/sessions/\(sp2.id)", bearer: sp.token) },
                then: { try await client.send(.delete, "/v1/sessions/\(sp.id)", bearer: sp2.token) })
            #expect(first.status == .noContent)
            #expect(second.status == .unauthorized && second.errorCode == "session_revoked", "\(second.json)")
            let me = try await client.send(.get, "/v1/sessions", bearer: sp.token)
            #expect(me.status == .ok, "SP was not ended by a caller already ended")
        }
    }

    @Test(
        "DELETE /v1/devices: SP ends SP2 ∥ SP2 removes SP's device answers 204, then 401; the device stays",
        arguments: StoreBackend.allCases)
    func deleteThenRemoveDevice(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend, store: try backend.makeRaceStore()) { environment, client in
            let (sp, sp2, rows) = try await Self.twoSessions(environment, client, sub: "user-h2")
            let device = try #require(
                try await client.registerDevice(bearer: sp.token, platform: "apns", token: "race-token")["device"]["id"]
                    as? String)
            let (first, second) = try await race(
                environment.store, holding: rows,
                { try await client.send(.delete, "/v1/sessions/\(sp2.id)", bearer: sp.token) },
                then: { try await client.send(.delete, "/v1/devices/\(device)", bearer: sp2.token) })
            #expect(first.status == .noContent)
            #expect(second.status == .unauthorized && second.errorCode == "session_revoked", "\(second.json)")
            let profileID = try #require(rows.first?.id)
            let devices = try await client.adminList("devices", of: profileID)
            #expect(devices?.compactMap { $0["id"] as? String } == [device], "the device stays")
        }
    }
}
