import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// An anonymous restore racing the cleanup that deletes its installation, with the gates of
/// ``ProfileRaceTests`` (the installation's row held on PostgreSQL, the writer on SQLite).
@Suite("A restore gated by App Attest creates no installation in place of a deleted one")
struct AppAttestRaceTests {
    @Test(
        "the stale-profile cleanup ∥ a restore without evidence under enforce_new: attestation_required, nothing created",
        arguments: StoreBackend.allCases)
    func cleanupThenRestore(backend: StoreBackend) async throws {
        var settings = ProjectSettings()
        settings.appAttest.mode = .monitor
        settings.appAttest.appIDs = ["TEAMID1234.dev.tessera.attest"]
        let environment = try await TestEnvironment.make(
            backend: backend, settings: settings, store: try backend.makeRaceStore())
        let store = environment.store
        try await environment.withApp { client in
            let (installationID, secret) = try await AppAttestEndpointTests.knownThenEnforceNew(client)
            // Stale for the cleanup: its clock two years on, past the session's end.
            let later = environment.clock.seconds + 2 * 366 * 86_400
            let (cleaned, restored) = try await race(
                store, holding: [.installation(installationID)],
                { try await store.deleteStale(now: later, anonymousCreatedBefore: later, batchSize: 10) },
                then: { try await client.anonymous(installationID: installationID, secret: secret) })
            #expect(cleaned.anonymousProfiles == 1)
            #expect(restored.errorCode == "attestation_required", "\(restored.status) \(restored.json)")
            let state = try await store.appAttestState(
                projectID: environment.project.project.id, installationID: installationID)
            #expect(!state.installationExists, "no installation created without attestation")
        }
    }
}
