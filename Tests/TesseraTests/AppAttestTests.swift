import Foundation
import Testing

@testable import Tessera

/// App Attest's state machine against the fake server, with a fault-injecting provider: off by
/// default, attest at the first start, assert at restores and identifies, re-attest once after the
/// server does not know the key or the device calls it invalid, `unsupported`, and failures on the
/// device that never fail a start.
@Suite("App Attest")
struct AppAttestTests {
    /// A started client of ``harness(_:mode:server:store:logs:)`` with a new provider, and the provider.
    static func started(server: AppAttestModel.Mode = .enforce) async throws -> (Harness, FakeAppAttestProvider) {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider, server: server)
        try await harness.client.start()
        return (harness, provider)
    }

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
        let (harness, provider) = try await Self.started()
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
        let (harness, provider) = try await Self.started()
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
        let (harness, provider) = try await Self.started()
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
        let (harness, provider) = try await Self.started()
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

    @Test("An identify whose key the device calls invalid attests a new key in the same request")
    func invalidKeyAtIdentify() async throws {
        let (harness, provider) = try await Self.started(server: .off)
        let installation = try #require(await Self.installation(harness))
        provider.invalidateKeys()
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.received.last == "identify attestation key-2")
        #expect(harness.client.appAttestStatus == .attested)
        #expect(try Self.record(harness.store) == .init(installationID: installation, keyID: "key-2", attested: true))
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
        let (harness, _) = try await Self.started()
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
    @Test("Enforce: an identify refused for its key (unknown to the server) attests a new key and is sent again, once")
    func identifyRefusedForItsKeyReattests() async throws {
        let (harness, _) = try await Self.started()
        let anonymous = try #require(await harness.client.sessions.token)
        _ = try await harness.client.registerDeviceToken("push-1", platform: .apns, environment: .sandbox)
        harness.server.forgetAppAttestKeys()
        _ = try await harness.client.identify(userID: "alice")
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "identify assertion key-1", "identify attestation key-2",
            ])
        #expect(await harness.client.profile?.externalID == "alice")
        #expect(harness.server.session(token: anonymous)?.endCode != nil, "the anonymous session ended")
        #expect(harness.server.liveSessions.count == 1)
        #expect(harness.server.devices.count == 1, "the push token moved to the identified session")
        #expect(harness.client.appAttestStatus == .attested)
    }

    @Test("Enforce: an identify whose key the device calls invalid attests a new key at once")
    func identifyWithInvalidKeyInEnforce() async throws {
        let (harness, provider) = try await Self.started()
        provider.invalidateKeys()
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.received == ["anonymous attestation key-1", "identify attestation key-2"])
        #expect(await harness.client.profile?.externalID == "alice")
    }

    @Test("An identify refused again after its new key is the answer: one retry, never a loop")
    func identifyRetriesOnce() async throws {
        let (harness, provider) = try await Self.started()
        harness.server.forgetAppAttestKeys()
        harness.server.script("POST /v1/sessions/identify", .reply(FakeServer.attestationInvalid("key_id")))
        harness.server.script("POST /v1/sessions/identify", .reply(FakeServer.attestationInvalid("key_id")))
        await #expect { try await harness.client.identify(userID: "alice") } throws: {
            ($0 as? TesseraError)?.code == .attestationInvalid
        }
        #expect(harness.transport.log.filter { $0.hasSuffix("/v1/sessions/identify") }.count == 2)
        #expect(provider.calls.withLock { $0.filter { $0 == "generateKey" }.count } == 2)
        #expect(await harness.client.profile?.externalID == nil, "still the anonymous user")
    }

    @Test("Identified while the server's mode was off: under enforce the identified user's identify attests once")
    func identifiedWhileOff() async throws {
        let (harness, _) = try await Self.started(server: .off)
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.keys.isEmpty, "off: the server kept no key")
        harness.server.setAppAttest(.enforce)
        _ = try await harness.client.identify(userID: "alice")
        _ = try await harness.client.identify(userID: "alice")
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "identify assertion key-1", "identify assertion key-1",
                "identify attestation key-2", "identify assertion key-2",
            ])
        #expect(await harness.client.profile?.externalID == "alice")
        #expect(harness.client.appAttestStatus == .attested)
    }

    @Test("An identify that carried nothing where the server requires evidence attests a new key, once")
    func identifyWithoutEvidenceAttests() async throws {
        // Apple's service was unreachable at the first start: the start went without evidence (off).
        let provider = FakeAppAttestProvider(.init(attestKey: [.serverUnavailable]))
        let harness = Self.harness(provider, server: .off)
        try await harness.client.start()
        harness.server.setAppAttest(.enforce)
        // The identify attests the key kept from then: accepted.
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.received == ["anonymous none", "identify attestation key-1"])
        // An identify that went without evidence (the device failed to make a key) is refused under
        // enforce: the SDK attests a new key and sends it again, once.
        let failing = FakeAppAttestProvider(.init(generateKey: [.failed("busy"), .failed("busy")]))
        let bare = Self.harness(failing, server: .off)
        try await bare.client.start()
        bare.server.setAppAttest(.enforce)
        _ = try await bare.client.identify(userID: "bob")
        #expect(
            bare.server.appAttest.received == ["anonymous none", "identify none", "identify attestation key-1"])
        #expect(await bare.client.profile?.externalID == "bob")
    }

    @Test("A server older than contract 1.5.0 refuses an identify's attestation: the identify goes again without it")
    func olderServerRefusesAttestationAtIdentify() async throws {
        let (harness, provider) = try await Self.started(server: .off)
        provider.invalidateKeys()
        harness.server.script("POST /v1/sessions/identify", .reply(.error(400, "invalid_request")))
        _ = try await harness.client.identify(userID: "alice")
        #expect(harness.server.appAttest.received.last == "identify none")
        #expect(await harness.client.profile?.externalID == "alice")
    }
}

extension AppAttestTests {
    static func expired() -> Outcome {
        .reply(.json(400, ["error": ["code": "challenge_invalid", "message": "scripted", "reason": "expired"]]))
    }

    @Test("A challenge that expired on its way: the start attests a new key with a fresh challenge, once")
    func expiredChallengeAtStart() async throws {
        let provider = FakeAppAttestProvider()
        let harness = Self.harness(provider)
        harness.server.script("POST /v1/sessions/anonymous", Self.expired())
        try await harness.client.start()
        #expect(harness.server.appAttest.received == ["anonymous attestation key-2"])
        #expect(provider.calls.withLock { $0 } == ["generateKey", "attestKey key-1", "generateKey", "attestKey key-2"])
        #expect(harness.transport.log.filter { $0.hasSuffix("/v1/attestations/challenge") }.count == 2)
        #expect(harness.client.appAttestStatus == .attested)

        // An assertion: asserted again with the same key over a fresh challenge.
        try await harness.client.sessions.revoke()
        harness.server.script("POST /v1/sessions/anonymous", Self.expired())
        try await harness.client.refreshSession()
        #expect(harness.server.appAttest.received.last == "anonymous assertion key-2")
        #expect(provider.calls.withLock { $0.suffix(2) } == ["generateAssertion key-2", "generateAssertion key-2"])

        // Expired twice: the second refusal is the answer.
        try await harness.client.sessions.revoke()
        harness.server.script("POST /v1/sessions/anonymous", Self.expired(), Self.expired())
        await #expect { try await harness.client.refreshSession() } throws: {
            ($0 as? TesseraError)?.code == .challengeInvalid && ($0 as? TesseraError)?.reason == "expired"
        }
        #expect(provider.calls.withLock { $0.suffix(2) } == ["generateAssertion key-2", "generateAssertion key-2"])
    }

    @Test("A challenge that expired on its way: the identify asserts again with a fresh challenge, once")
    func expiredChallengeAtIdentify() async throws {
        let (harness, provider) = try await Self.started()
        // The server's own refusal: the challenge it issued is expired when the assertion comes back.
        let challenges = Locked(0)
        provider.onAssertion.withLock {
            $0 = { [server = harness.server] in
                if challenges.withLock({ count in
                    count += 1
                    return count == 1
                }) {
                    server.expireAppAttestChallenges()
                }
            }
        }
        _ = try await harness.client.identify(userID: "alice")
        #expect(
            harness.server.appAttest.received == [
                "anonymous attestation key-1", "identify assertion key-1", "identify assertion key-1",
            ])
        #expect(await harness.client.profile?.externalID == "alice")
        #expect(harness.server.appAttest.keys.values.first?.counter == 2)
    }

    @Test("Two requests with assertions at once: the second assertion is made once the first was answered")
    func assertionsInOrder() async throws {
        let provider = FakeAppAttestProvider()
        let (signals, signal) = AsyncStream<String>.makeStream()
        let clock = ManualClock()
        let server = FakeServer(clock: clock)
        let harness = Harness(clock: clock, server: server) {
            $0.appAttest = .automatic
            $0.appAttestProvider = provider
            $0.logHandler = { line in
                if line.message.contains("waiting for the previous request with evidence") { signal.yield("waited") }
            }
        }
        try await harness.client.start()
        harness.server.hold("POST /v1/sessions/identify")
        let first = Task { try await harness.client.identify(userID: "alice") }
        let held = await harness.transport.next()
        #expect(provider.calls.withLock { $0.last } == "generateAssertion key-1")
        // Either the second identify waits for its turn (and says so), or it makes its assertion while
        // the first request is still on its way: the fault the turn prevents (its counter could reach
        // the server first, and the first request's would then be refused).
        provider.onAssertion.withLock { $0 = { signal.yield("assertion made while the first is on its way") } }
        let second = Task { try await harness.client.identify(userID: "alice") }
        var iterator = signals.makeAsyncIterator()
        #expect(await iterator.next() == "waited")
        provider.onAssertion.withLock { $0 = nil }
        harness.server.release("POST /v1/sessions/identify")
        held.respond(harness.server.reply(to: held.request))
        _ = try await first.value
        _ = try await second.value
        #expect(
            provider.calls.withLock { $0.filter { $0.hasPrefix("generateAssertion") } } == [
                "generateAssertion key-1", "generateAssertion key-1",
            ])
        #expect(await harness.client.profile?.externalID == "alice")
    }
}
