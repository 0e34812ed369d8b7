import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

extension StoreConformanceTests {
    private func key(counter: Int64 = 0, now: Int64) -> AppAttestKeyRecord {
        AppAttestKeyRecord(
            keyID: Array(repeating: 1, count: 32), publicKey: Array(repeating: 4, count: 65), counter: counter,
            environment: "production", appID: "TEAMID1234.dev.tessera.attest", receipt: [9, 9], attestedAt: now)
    }

    @Test(
        "App Attest challenges: single-use, per project, refused once expired, cleaned up",
        arguments: StoreBackend.allCases)
    func appAttestChallenges(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let other = try await environment.makeOtherProject().project.id
        let now = environment.clock.seconds
        let hash = Array(repeating: UInt8(1), count: 32)
        try await store.createAppAttestChallenge(projectID: projectID, challengeHash: hash, expiresAt: now + 300)
        #expect(try await store.consumeAppAttestChallenge(projectID: other, challengeHash: hash, now: now) == .unknown)
        #expect(
            try await store.consumeAppAttestChallenge(projectID: projectID, challengeHash: hash, now: now) == .spent)
        #expect(
            try await store.consumeAppAttestChallenge(projectID: projectID, challengeHash: hash, now: now) == .unknown)
        let unknown = Array(repeating: UInt8(2), count: 32)
        #expect(
            try await store.consumeAppAttestChallenge(projectID: projectID, challengeHash: unknown, now: now)
                == .unknown
        )

        // An expired challenge is told apart, and deleted: spending it again finds nothing.
        let late = Array(repeating: UInt8(3), count: 32)
        try await store.createAppAttestChallenge(projectID: projectID, challengeHash: late, expiresAt: now + 300)
        #expect(
            try await store.consumeAppAttestChallenge(projectID: projectID, challengeHash: late, now: now + 300)
                == .expired)
        #expect(
            try await store.consumeAppAttestChallenge(projectID: projectID, challengeHash: late, now: now + 300)
                == .unknown)
        let lapsed = Array(repeating: UInt8(4), count: 32)
        try await store.createAppAttestChallenge(projectID: projectID, challengeHash: lapsed, expiresAt: now + 300)
        #expect(try await store.deleteExpired(now: now + 299, batchSize: 10).appAttestChallenges == 0)
        #expect(try await store.deleteExpired(now: now + 300, batchSize: 10).appAttestChallenges == 1)
    }

    @Test(
        "App Attest records: verdicts kept or replaced with the key, counters that only rise, counts",
        arguments: StoreBackend.allCases)
    func appAttestRecords(backend: StoreBackend) async throws {
        let (environment, store, projectID, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let installationID = UUID().uuidString.lowercased()

        var state = try await store.appAttestState(projectID: projectID, installationID: installationID)
        #expect(state == AppAttestState(installationExists: false, record: nil))
        let started = try await environment.storeStart(installationID: installationID)
        #expect(
            try await store.installationIDs(projectID: projectID, profileID: started.context.profile.id) == [
                installationID
            ])

        try await store.recordAppAttestVerdict(
            AppAttestVerdictWrite(
                projectID: projectID, installationID: installationID, verdict: "attested", enforceWouldRefuse: false,
                key: key(now: now), now: now))
        state = try await store.appAttestState(projectID: projectID, installationID: installationID)
        #expect(state.installationExists)
        #expect(state.record?.key == key(now: now))
        #expect(state.record?.verdict == "attested")

        // The counter rises only with the stored key, and only upwards.
        let keyID = key(now: now).keyID
        #expect(
            try await !store.advanceAppAttestCounter(
                projectID: projectID, installationID: installationID, keyID: Array(repeating: 2, count: 32), counter: 5)
        )
        #expect(
            try await store.advanceAppAttestCounter(
                projectID: projectID, installationID: installationID, keyID: keyID, counter: 5))
        #expect(
            try await !store.advanceAppAttestCounter(
                projectID: projectID, installationID: installationID, keyID: keyID, counter: 5))
        #expect(
            try await !store.advanceAppAttestCounter(
                projectID: projectID, installationID: installationID, keyID: keyID, counter: 4))
        #expect(
            try await !store.advanceAppAttestCounter(
                projectID: projectID, installationID: "00000000-0000-4000-8000-000000000000", keyID: keyID,
                counter: 9))

        // A verdict without a key keeps the stored key; replacing it clears it.
        try await store.recordAppAttestVerdict(
            AppAttestVerdictWrite(
                projectID: projectID, installationID: installationID, verdict: "failed: counter",
                enforceWouldRefuse: true, now: now + 1))
        var record = try #require(
            try await store.appAttestRecords(projectID: projectID, installationIDs: [installationID, "x"]).first)
        #expect(record.verdict == "failed: counter")
        #expect(record.enforceWouldRefuse)
        #expect(record.key?.counter == 5)
        #expect(record.updatedAt == now + 1)

        let second = UUID().uuidString.lowercased()
        try await store.recordAppAttestVerdict(
            AppAttestVerdictWrite(
                projectID: projectID, installationID: second, verdict: "unattested", enforceWouldRefuse: true,
                now: now))
        let counts = try await store.appAttestCounts(projectID: projectID)
        #expect(counts.verdicts == ["failed": 1, "unattested": 1])
        #expect(counts.enforceWouldRefuse == 2)

        try await store.recordAppAttestVerdict(
            AppAttestVerdictWrite(
                projectID: projectID, installationID: installationID, verdict: "unsupported",
                enforceWouldRefuse: false, replacesKey: true, now: now + 2))
        record = try #require(
            try await store.appAttestState(projectID: projectID, installationID: installationID).record)
        #expect(record.key == nil)
        #expect(
            try await store.appAttestRecords(
                projectID: try await environment.makeOtherProject().project.id, installationIDs: [installationID]
            ).isEmpty)
        // Retention deletes an old anonymous profile without a live session with its installations and
        // their App Attest records.
        _ = try await store.revokeSession(
            sessionID: started.context.session.id, profileID: nil, now: now + 3,
            reason: .signedOut, origin: EventOrigin(actor: .sdk(sessionID: nil), clientAddress: nil))
        let stale = try await store.deleteStale(now: now + 4, anonymousCreatedBefore: now + 4, batchSize: 10)
        #expect(stale.anonymousProfiles == 1)
        #expect(try await store.appAttestRecords(projectID: projectID, installationIDs: [installationID]).isEmpty)
        #expect(try await store.appAttestRecords(projectID: projectID, installationIDs: [second]).count == 1)
    }
}
