import Foundation
import Testing

@testable import Tessera

/// App Attest's state machine against the fake server, with a fault-injecting provider: off by
/// default, attest at the first start, assert at restores and identifies, re-attest once after the
/// server does not know the key or the device calls it invalid, `unsupported`, and failures on the
/// device that never fail a start.
@Suite("App Attest")
struct AppAttestTests {
    static func harness(
        _ provider: FakeAppAttestProvider = FakeAppAttestProvider(), mode: AppAttestMode = .automatic,
        server: AppAttestModel.Mode = .enforce, store: (any CredentialStore)? = nil,
        logs: Locked<[String]>? = nil
    ) -> Harness {
        let clock = ManualClock()
        let fake = FakeServer(clock: clock)
        fake.setAppAttest(server)
        return Harness(store: store, clock: clock, server: fake) {
            $0.appAttest = mode
            $0.appAttestProvider = provider
            if let logs { $0.logHandler = { line in logs.withLock { $0.append(line.message) } } }
        }
    }

    /// The key record kept beside the installation.
    static func record(_ store: any CredentialStore) throws -> AppAttestKeyring.Record? {
        try AppAttestKeyring(
            configuration: TesseraConfiguration(
                serverURL: URL(string: "https://tessera.test")!, publishableKey: "pk", credentialStore: store)
        ).load()
    }

    static func installation(_ harness: Harness) async -> String? {
        await harness.client.installationID?.uuidString.lowercased()
    }

    /// Ends the session locally and on the server, then starts again: an anonymous start of the same
    /// installation (a restore).
    static func restore(_ harness: Harness) async throws {
        try await harness.client.sessions.revoke()
        try await harness.client.refreshSession()
    }

    @Test("Off by default: no challenge, no evidence, no call to the provider")
    func offByDefault() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Harness { $0.appAttestProvider = provider }
        #expect(harness.client.configuration.appAttest == .off)
        try await harness.client.start()
        _ = try await harness.client.identify(userID: "alice")
        #expect(!harness.transport.log.contains { $0.contains("attestations") })
        #expect(harness.server.appAttest.received == ["anonymous none", "identify none"])
        #expect(provider.calls.withLock { $0 }.isEmpty)
        #expect(harness.client.appAttestStatus == .off)
        #expect(try Self.record(harness.store) == nil)
    }

    @Test("The first start attests a new key over SHA-256(challenge); the server in enforce accepts it")
    func firstStartAttests() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        #expect(harness.client.appAttestStatus == .notAttested)
        try await harness.client.start()
        let installation = try #require(await Self.installation(harness))
        #expect(provider.calls.withLock { $0 } == ["generateKey", "attestKey key-1"])
        #expect(harness.server.appAttest.received == ["anonymous attestation key-1"])
        #expect(harness.server.appAttest.keys[installation]?.keyID == "key-1")
        #expect(try Self.record(harness.store) == .init(installationID: installation, keyID: "key-1", attested: true))
        #expect(harness.client.appAttestStatus == .attested)
    }

    @Test("Restores and identifies assert with the attested key over SHA-256(challenge ‖ installation ID)")
    func restoresAndIdentifiesAssert() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        try await Self.restore(harness)
        _ = try await harness.client.identify(userID: "alice")
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "anonymous assertion key-1", "identify assertion key-1",
            ])
        #expect(
            provider.calls.withLock { $0 } == [
                "generateKey", "attestKey key-1", "generateAssertion key-1", "generateAssertion key-1",
            ])
        let installation = try #require(await Self.installation(harness))
        #expect(harness.server.appAttest.keys[installation]?.counter == 2, "each assertion raised the counter")
        #expect(harness.client.appAttestStatus == .attested)
    }

    @Test("A relaunched client (or an extension on the same store) asserts with the stored key")
    func keySharedThroughTheStore() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        await harness.client.stop()
        let next = Harness(store: harness.store, clock: harness.clock, server: harness.server) {
            $0.appAttest = .automatic
            $0.appAttestProvider = provider
        }
        try await next.client.start()
        #expect(next.client.appAttestStatus == .attested)
        try await Self.restore(next)
        #expect(harness.server.appAttest.received.last == "anonymous assertion key-1")
        #expect(provider.calls.withLock { $0.filter { $0 == "generateKey" }.count } == 1)
    }

    @Test("The key the device calls invalid (a backup restored onto another device) is re-attested once at a restore")
    func invalidKeyReattestedAtRestore() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        provider.invalidateKeys()
        try await Self.restore(harness)
        #expect(
            provider.calls.withLock { $0 } == [
                "generateKey", "attestKey key-1", "generateAssertion key-1", "generateKey", "attestKey key-2",
            ])
        #expect(harness.server.appAttest.received.last == "anonymous attestation key-2")
        let installation = try #require(await Self.installation(harness))
        #expect(try Self.record(harness.store)?.keyID == "key-2")
        #expect(harness.server.appAttest.keys[installation]?.keyID == "key-2")
        #expect(harness.client.appAttestStatus == .attested)
    }

    @Test("A key the server does not know (attested while its mode was off) is re-attested once, never in a loop")
    func unknownKeyReattestedOnce() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        harness.server.forgetAppAttestKeys()
        try await Self.restore(harness)
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "anonymous assertion key-1", "anonymous attestation key-2",
            ])
        #expect(harness.client.appAttestStatus == .attested)

        // A server that refuses every new key too: one re-attestation, then the refusal is the answer.
        harness.server.forgetAppAttestKeys()
        harness.server.script("POST /v1/sessions/anonymous", .reply(FakeServer.attestationInvalid("key_id")))
        harness.server.script("POST /v1/sessions/anonymous", .reply(FakeServer.attestationInvalid("key_id")))
        try await harness.client.sessions.revoke()
        await #expect { try await harness.client.refreshSession() } throws: {
            ($0 as? TesseraError)?.code == .attestationInvalid && ($0 as? TesseraError)?.reason == "key_id"
        }
        #expect(provider.calls.withLock { $0.filter { $0 == "generateKey" }.count } == 3)
    }

    @Test("An identify whose key the device calls invalid goes without evidence; the next restore attests anew")
    func invalidKeyAtIdentify() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider, server: .off)
        try await harness.client.start()
        provider.invalidateKeys()
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.received.last == "identify none")
        #expect(harness.client.appAttestStatus == .failed(.invalidKey))
        #expect(try Self.record(harness.store) == nil, "the key is forgotten")
        #expect(await harness.client.profile?.externalID == "alice", "the identify went through")
    }

    @Test("A device that cannot attest says unsupported at starts and identifies")
    func unsupported() async throws {
        let provider = FakeAppAttestProvider(.init(isSupported: false))
        let harness = Self.harness(provider)
        harness.server.setAppAttest(.enforce, allowUnsupported: true)
        try await harness.client.start()
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.received == ["anonymous unsupported", "identify unsupported"])
        #expect(provider.calls.withLock { $0 }.isEmpty)
        #expect(harness.client.appAttestStatus == .unsupported)

        // generateKey answering featureUnsupported says the same.
        let refusing = FakeAppAttestProvider(.init(generateKey: [.featureUnsupported]))
        let other = Self.harness(refusing)
        other.server.setAppAttest(.enforce, allowUnsupported: true)
        try await other.client.start()
        #expect(other.server.appAttest.received == ["anonymous unsupported"])
        #expect(other.client.appAttestStatus == .unsupported)
    }

    @Test("A failure on the device never fails the start: it goes without evidence, reported and logged")
    func deviceFailuresNeverFailTheStart() async throws {
        for fault in [AppAttestError.serverUnavailable, .failed("unknown system failure"), .invalidKey] {
            let logs = Locked<[String]>([])
            let provider = FakeAppAttestProvider(.init(attestKey: [fault]))
            let harness = Self.harness(provider, server: .off, logs: logs)
            try await harness.client.start()
            #expect(harness.client.sessionState.value != nil, "started (\(fault))")
            #expect(harness.server.appAttest.received == ["anonymous none"])
            #expect(harness.client.appAttestStatus == .failed(fault))
            #expect(logs.withLock { $0.contains { $0.hasPrefix("App Attest: attestation failed on the device") } })
            // Apple's service unreachable: the same key is attested at the next restore; any other
            // failure: a new key.
            try await Self.restore(harness)
            let expected = fault == .serverUnavailable ? "anonymous attestation key-1" : "anonymous attestation key-2"
            #expect(harness.server.appAttest.received.last == expected)
            #expect(harness.client.appAttestStatus == .attested)
        }
    }

    @Test("A server without the challenge endpoint: the start goes without evidence")
    func noChallengeEndpoint() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider, server: .off)
        harness.server.script("POST /v1/attestations/challenge", .reply(.error(404, "not_found")))
        try await harness.client.start()
        #expect(harness.server.appAttest.received == ["anonymous none"])
        #expect(harness.client.sessionState.value != nil)
    }

    @Test("A new installation (reset) attests a new key; the old installation's record is replaced")
    func newInstallationNewKey() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        try await harness.client.reset()
        let installation = try #require(await Self.installation(harness))
        #expect(harness.server.appAttest.received.last == "anonymous attestation key-2")
        #expect(try Self.record(harness.store) == .init(installationID: installation, keyID: "key-2", attested: true))
    }

    @Test("In enforce, a client without App Attest is refused: attestation_required")
    func enforceRefusesWithoutEvidence() async throws {
        let harness = Self.harness(mode: .off)
        await #expect { try await harness.client.start() } throws: {
            ($0 as? TesseraError)?.code == .attestationRequired
        }
        #expect(harness.server.liveSessions.isEmpty)
    }
}

extension AppAttestTests {
    @Test("Enforce: an identify refused for its key restores the installation with a new key, then identifies")
    func identifyRefusedForItsKeyReattests() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        let anonymous = try #require(await harness.client.sessions.token)
        _ = try await harness.client.registerDeviceToken("push-1", platform: .apns, environment: .sandbox)
        harness.server.forgetAppAttestKeys()
        _ = try await harness.client.identify(userID: "alice")
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "identify assertion key-1", "anonymous attestation key-2",
                "identify assertion key-2",
            ])
        #expect(await harness.client.profile?.externalID == "alice")
        #expect(harness.server.session(token: anonymous)?.endCode != nil, "the replaced anonymous session ended")
        #expect(harness.server.liveSessions.count == 1)
        #expect(harness.server.devices.count == 1, "the push token moved to the identified session")
        #expect(harness.client.appAttestStatus == .attested)
    }

    @Test("Enforce: an identify whose key the device calls invalid restores with a new key, then identifies")
    func identifyWithInvalidKeyInEnforce() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        provider.invalidateKeys()
        _ = try await harness.client.identify(userID: "alice")
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "identify none", "anonymous attestation key-2",
                "identify assertion key-2",
            ])
        #expect(await harness.client.profile?.externalID == "alice")
    }

    @Test("An identify refused again after the restore is the answer: one restore, never a loop")
    func identifyRestoresOnce() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        try await harness.client.start()
        harness.server.forgetAppAttestKeys()
        harness.server.script("POST /v1/sessions/identify", .reply(FakeServer.attestationInvalid("key_id")))
        harness.server.script("POST /v1/sessions/identify", .reply(FakeServer.attestationInvalid("key_id")))
        await #expect { try await harness.client.identify(userID: "alice") } throws: {
            ($0 as? TesseraError)?.code == .attestationInvalid
        }
        #expect(harness.server.appAttest.received.filter { $0.hasPrefix("anonymous") }.count == 2)
        #expect(await harness.client.profile?.externalID == nil, "still the anonymous user")
    }
}
