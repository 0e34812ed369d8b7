import Foundation
import Testing

@testable import Tessera

@Suite("identify")
struct IdentifyTests {
    @Test("Identify promotes the anonymous profile and returns authenticated capabilities")
    func identifyPromotes() async throws {
        let harness = Harness()
        let client = try await harness.start()
        let anonymous = try #require(await client.profile)
        let events = Recorder(client.events)
        let capabilities = try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        #expect(capabilities == Capabilities(authenticated: true, kind: .verified))
        let profile = try #require(await client.profile)
        #expect(profile.id == anonymous.id)
        #expect(profile.externalID == "alice")
        #expect(profile.verified)
        let event = await events.first { _ in true }
        #expect(
            event
                == .identified(
                    profile, capabilities: capabilities, merge: Merge(outcome: .promoted, fromProfileID: anonymous.id)))
        await client.stop()
    }

    @Test(
        "A failed identify leaves everything exactly as it was",
        arguments: ["identity_token_expired", "invalid_signature", "audience_mismatch", "identity_token_replayed"])
    func failureLeavesStateUnchanged(code: String) async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let before = try harness.storedState()
        let sessionState = client.sessionState
        await #expect {
            try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice", fail: code))
        } throws: { ($0 as? TesseraError)?.code.rawValue == code }
        #expect(try harness.storedState() == before)
        #expect(client.sessionState == sessionState)
        #expect(await client.profile?.kind == .anonymous)
    }

    @Test("Offline identify keeps the signed-in state and throws a transient error")
    func offlineIdentify() async throws {
        let harness = Harness()
        let client = try await harness.start(as: "alice", quiet: true)
        let before = try harness.storedState()
        harness.server.script("POST /v1/sessions/identify", .failure(.notConnectedToInternet))
        await #expect {
            try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        } throws: { ($0 as? TesseraError)?.isTransient == true }
        #expect(try harness.storedState() == before)
    }

    @Test("Identifying another user while one is signed in throws external_user_id_changed, locally")
    func externalUserIDChanged() async throws {
        let harness = Harness()
        let client = try await harness.start(as: "alice", quiet: true)
        let requests = harness.transport.log.count
        await #expect {
            try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "bob"))
        } throws: { ($0 as? TesseraError)?.code == .externalUserIDChanged }
        await #expect {
            try await client.identify(userID: "bob")
        } throws: { ($0 as? TesseraError)?.code == .externalUserIDChanged }
        #expect(harness.transport.log.count == requests)
        #expect(await client.profile?.externalID == "alice")
    }

    @Test("The server's 409 external_user_id_changed is typed too")
    func serverSideUserChange() async throws {
        let harness = Harness()
        let client = try await harness.start(as: "alice", quiet: true)
        // A token the client cannot read: the server decides.
        harness.server.script("POST /v1/sessions/identify", .reply(.error(409, "external_user_id_changed")))
        await #expect {
            try await client.identify(signedIdentityToken: "not.a-readable.token")
        } throws: { ($0 as? TesseraError)?.code == .externalUserIDChanged }
        #expect(await client.profile?.externalID == "alice")
    }

    @Test("appAccountToken is the user ID when it is a UUID, else the installation UUID")
    func appAccountToken() async throws {
        let harness = Harness()
        let client = try await harness.start()
        let installation = try #require(await client.installationID)
        #expect(await client.appAccountToken == installation)
        let userID = UUID()
        try await client.identify(userID: userID.uuidString.lowercased())
        #expect(await client.appAccountToken == userID)
        #expect(await client.capabilities == Capabilities(authenticated: false, kind: .unverified))
        await client.stop()

        let other = Harness()
        try await other.client.start()
        try await other.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "user-42"))
        #expect(await other.client.appAccountToken == other.client.installationID)
        await other.client.stop()
    }
}
