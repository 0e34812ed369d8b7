import Crypto
import Foundation
import TesseraTokens
import Testing

@testable import Tessera

/// The device key and the proofs it signs, against the fake server with binding on: which tier, that
/// the key outlives the process, each kind of key loss re-established quietly, nonces, clock skew.
@Suite("Device-bound sessions")
struct DeviceKeyTests {
    static func harness(
        store: (any CredentialStore)? = nil, keys: FakeDeviceKeyProvider = FakeDeviceKeyProvider(),
        provider: (any IdentityTokenProvider)? = nil, server: FakeServer? = nil, clock: ManualClock = ManualClock()
    ) -> Harness {
        Harness(store: store, provider: provider, clock: clock, server: server) {
            $0.deviceKeyProvider = keys
        }
    }

    /// A harness against a fake server that binds sessions to device keys, on a clock of its own.
    static func bound(store: (any CredentialStore)? = nil, keys: FakeDeviceKeyProvider = FakeDeviceKeyProvider())
        -> Harness
    {
        let clock = ManualClock()
        return harness(store: store, keys: keys, server: bindingServer(clock), clock: clock)
    }

    /// The next launch after `first`: its store, server and clock.
    static func relaunch(
        _ first: Harness, keys: FakeDeviceKeyProvider = FakeDeviceKeyProvider(),
        provider: (any IdentityTokenProvider)? = nil
    ) -> Harness {
        harness(store: first.store, keys: keys, provider: provider, server: first.server, clock: first.clock)
    }

    /// The first launch: starts `first` (identified as `user` when given), answers its session and
    /// stops it.
    static func firstLaunch(_ first: Harness, as user: String? = nil) async throws -> Session {
        try await first.client.start()
        if let user { try await first.client.identify(signedIdentityToken: FakeServer.identityToken(sub: user)) }
        let session = try #require(await first.client.sessions.current)
        await first.client.stop()
        return session
    }

    static func bindingServer(_ clock: ManualClock, nonce: String? = nil) -> FakeServer {
        let server = FakeServer(clock: clock)
        server.bindSessions(requiringNonce: nonce)
        return server
    }

    /// The thumbprint of the key stored for the installation.
    static func storedThumbprint(_ store: any CredentialStore) throws -> String? {
        guard let data = try store.load("tessera-device-key") else { return nil }
        let record = try JSONDecoder().decode(DeviceKeyring.Record.self, from: data)
        let key = try P256.Signing.PrivateKey(rawRepresentation: record.key)
        return JWKThumbprint.sha256(of: key.publicKey)
    }

    /// Whether a sign-out was ever published: an unavailable session state other than "never signed in".
    static func publishedSignOut(_ states: [Availability<Session>]) -> Bool {
        states.contains { $0.reason != nil && $0.reason != .neverSignedIn }
    }

    // MARK: Tiers

    @Test("The Secure Enclave where the device has one; software without it or when it refuses")
    func tierChoice() async throws {
        let cases: [(FakeDeviceKeyProvider.Faults, DeviceKeyTier)] = [
            (.init(), .secureEnclave),
            (.init(hasSecureEnclave: false), .software),
            (.init(secureEnclaveRefuses: true), .software),
        ]
        for (faults, expected) in cases {
            let clock = ManualClock()
            let harness = Self.harness(
                keys: FakeDeviceKeyProvider(faults), server: Self.bindingServer(clock), clock: clock)
            try await harness.client.start()
            #expect(await harness.client.deviceKeyTier == expected)
            let session = try #require(await harness.client.sessions.current)
            #expect(session.binding?.keyTier == expected, "the start declared the tier")
            #expect(session.binding?.thumbprint == (try Self.storedThumbprint(harness.store)))
        }
    }

    @Test("Binding off: no key is made and no proof is sent")
    func bindingOff() async throws {
        let clock = ManualClock()
        let keys = FakeDeviceKeyProvider()
        let harness = Harness(clock: clock, server: Self.bindingServer(clock)) {
            $0.deviceKeyProvider = keys
            $0.bindsSessionsToDevice = false
        }
        try await harness.client.start()
        #expect(await harness.client.deviceKeyTier == nil)
        #expect(await harness.client.sessions.current?.binding == nil)
        #expect(keys.made.withLock { $0 }.isEmpty)
        #expect(harness.server.acceptedProofs.isEmpty)
        #expect(try harness.store.load("tessera-device-key") == nil)
    }

    // MARK: Persistence

    @Test("The key outlives the process: the next launch signs with it and keeps the session")
    func keySurvivesRelaunch() async throws {
        let keys = FakeDeviceKeyProvider()
        let first = Self.bound(keys: keys)
        let session = try await Self.firstLaunch(first)

        let next = Self.relaunch(first, keys: keys)
        try await next.client.start()
        #expect(await next.client.sessions.current?.id == session.id)
        _ = try await next.client.sessions.authenticate()
        #expect(keys.made.withLock { $0 }.count == 1, "one key per installation")
        #expect(first.server.acceptedProofs.allSatisfy { $0.thumbprint == session.binding?.thumbprint })
        #expect(next.transport.count("POST /v1/sessions/anonymous") == 0, "the stored session was restored")
    }

    @Test("Every request carries a fresh proof: htm, htu, ath, a new jti; revoke-others too")
    func proofOnEveryRequest() async throws {
        let clock = ManualClock()
        let harness = Self.harness(server: Self.bindingServer(clock), clock: clock)
        try await harness.client.start()
        let token = try #require(harness.client.currentSessionToken)
        _ = try await harness.client.sessions.authenticate()
        _ = try? await harness.client.revokeOtherSessions()  // the fake server has no such route: 404
        let proofs = harness.server.acceptedProofs
        #expect(proofs.map(\.method) == ["POST", "POST", "POST"])
        #expect(
            proofs.map(\.url) == [
                "https://tessera.test/v1/sessions/anonymous", "https://tessera.test/v1/sessions/authenticate",
                "https://tessera.test/v1/sessions/revoke-others",
            ])
        #expect(proofs[0].accessTokenHash == DPoPProof.accessTokenHash(of: FakeServer.publishableKey))
        #expect(proofs[1].accessTokenHash == DPoPProof.accessTokenHash(of: token))
        #expect(Set(proofs.map(\.tokenID)).count == proofs.count)
    }

    // MARK: Key loss

    enum Loss: String, CaseIterable {
        case missing, unreadable, mismatched
    }

    /// Makes the stored key go away the way `loss` says, for the next launch.
    static func lose(_ loss: Loss, store: any CredentialStore, keys: FakeDeviceKeyProvider) throws {
        switch loss {
        case .missing:
            try store.remove("tessera-device-key")
        case .unreadable:
            keys.faults.withLock { $0.restoreFails = true }
        case .mismatched:
            // Another valid key: the stored session is bound to a thumbprint that is not this key's.
            let other = DeviceKeyring.Record(tier: .software, key: P256.Signing.PrivateKey().rawRepresentation)
            try store.save(try JSONEncoder().encode(other), for: "tessera-device-key")
        }
    }

    @Test(
        "An anonymous installation whose key is lost restores its identity within one start, no sign-out",
        arguments: Loss.allCases)
    func anonymousKeyLoss(_ loss: Loss) async throws {
        let keys = FakeDeviceKeyProvider()
        let first = Self.bound(keys: keys)
        let before = try await Self.firstLaunch(first)
        try Self.lose(loss, store: first.store, keys: keys)
        keys.faults.withLock { $0.restoreFails = loss == .unreadable }

        let next = Self.relaunch(first, keys: keys)
        let states = Recorder(next.client.sessionUpdates)
        let events = Recorder(next.client.events)
        try await next.client.start()
        let after = try #require(await next.client.sessions.current, "signed in within one start")
        #expect(after.id != before.id && after.profileID == before.profileID)
        #expect(after.binding?.thumbprint == (try? Self.storedThumbprint(next.store)))
        #expect(after.binding?.thumbprint != before.binding?.thumbprint)
        #expect(next.transport.count("POST /v1/sessions/anonymous") == 1, "the installation secret restored it")
        _ = try await next.client.sessions.authenticate()
        // A marker after which every earlier state and event has been recorded.
        try await next.client.identify(userID: "marker-\(loss)")
        _ = await states.first { $0.value?.profileID == after.profileID && $0.value?.id != after.id }
        _ = await events.first { if case .identified = $0 { return true } else { return false } }
        #expect(!Self.publishedSignOut(states.values), "\(states.values)")
        #expect(
            !events.values.contains {
                if case .signedOut = $0 { return true }
                if case .sessionEnded = $0 { return true }
                return false
            }, "\(events.values)")
    }

    @Test(
        "A verified user whose key is lost is identified again through the provider within one start",
        arguments: Loss.allCases)
    func verifiedKeyLoss(_ loss: Loss) async throws {
        let keys = FakeDeviceKeyProvider()
        let first = Self.bound(keys: keys)
        let before = try await Self.firstLaunch(first, as: "alice")
        try Self.lose(loss, store: first.store, keys: keys)

        let provider = StubProvider()
        provider.enqueue(.success(FakeServer.identityToken(sub: "alice")))
        let next = Self.relaunch(first, keys: keys, provider: provider)
        let states = Recorder(next.client.sessionUpdates)
        try await next.client.start()
        let after = try #require(await next.client.sessions.current)
        #expect(after.id != before.id && after.profileID == before.profileID)
        #expect(await next.client.profile?.externalID == "alice")
        #expect(await next.client.capabilities?.kind == .verified)
        #expect(
            provider.requests.withLock { $0 } == [IdentityTokenRequest(externalUserID: "alice", reason: .deviceKeyLost)]
        )
        #expect(next.transport.count("POST /v1/sessions/anonymous") == 0, "identified again, not anonymous")
        _ = try await next.client.sessions.authenticate()
        _ = await states.first { $0.value?.id == after.id }
        #expect(!Self.publishedSignOut(states.values), "\(states.values)")
    }

    @Test("An extension that replaced the key and bound a new session: the app reads the key again, no loss")
    func keyReplacedByAnotherClientOfTheStore() async throws {
        let keys = FakeDeviceKeyProvider()
        let app = Self.bound(keys: keys)
        try await app.client.start()
        // The extension cannot restore the key: it makes a new one and restores the installation with it.
        keys.faults.withLock { $0.restoreFails = true }
        let ext = Self.relaunch(app, keys: keys)
        try await ext.client.start()
        keys.faults.withLock { $0.restoreFails = false }
        let replaced = try #require(await ext.client.sessions.current)

        let checked = try await app.client.sessions.authenticate()
        #expect(checked.id == replaced.id, "the app took the extension's session and signs with its key")
        #expect(app.transport.count("POST /v1/sessions/anonymous") == 1, "no second re-establishment")
    }

    @Test("A verified user whose key is lost and who cannot be identified again ends as a revoked one would")
    func verifiedKeyLossWithoutProvider() async throws {
        let first = Self.bound()
        try await first.client.start()
        try await first.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "bob"))
        await first.client.stop()
        try first.store.remove("tessera-device-key")

        let next = Self.relaunch(first)
        let events = Recorder(next.client.events)
        try await next.client.start()
        _ = await events.first { $0 == .sessionEnded(.deviceKeyLost) }
        let fallback = await next.client.sessionUpdates.first { $0.value != nil }
        #expect(fallback?.value?.binding != nil, "a fresh anonymous session, bound to the new key")
    }

    @Test("A key store that cannot be read now makes no key: start fails as transient, then recovers")
    func keyStoreUnavailable() async throws {
        let store = KeyFaultStore()
        let first = Self.bound(store: store)
        let session = try await Self.firstLaunch(first)

        store.failing.withLock { $0 = .unavailable("locked") }
        let next = Self.relaunch(first)
        await #expect(throws: TesseraError.self) { try await next.client.start() }
        #expect(await next.client.sessions.current?.id == session.id, "the session is kept")
        #expect(next.client.sessionState.reason != .signedOut)
        #expect(try store.inner.load("tessera-device-key") != nil, "the stored key was not replaced")

        store.failing.withLock { $0 = nil }
        try await next.client.start()
        _ = try await next.client.sessions.authenticate()
        #expect(await next.client.sessions.current?.id == session.id)
    }

    // MARK: Nonces and clock

    @Test("use_dpop_nonce is answered once with the nonce, which later proofs carry")
    func nonceRetriedOnce() async throws {
        let clock = ManualClock()
        let harness = Self.harness(server: Self.bindingServer(clock, nonce: "n-1"), clock: clock)
        try await harness.client.start()
        #expect(harness.server.nonceChallenges == 1)
        #expect(harness.transport.count("POST /v1/sessions/anonymous") == 2)
        _ = try await harness.client.sessions.authenticate()
        #expect(harness.server.nonceChallenges == 1, "the remembered nonce goes with later proofs")
        #expect(harness.server.acceptedProofs.allSatisfy { $0.nonce == "n-1" })
    }

    @Test("A second use_dpop_nonce in a row is not retried again")
    func nonceNotRetriedTwice() async throws {
        let clock = ManualClock()
        let harness = Self.harness(server: Self.bindingServer(clock), clock: clock)
        try await harness.client.start()
        let challenge = Reply.error(401, "use_dpop_nonce", headers: ["DPoP-Nonce": "n-2"])
        harness.server.script("POST /v1/sessions/authenticate", .reply(challenge), .reply(challenge))
        await #expect(throws: TesseraError.self) { _ = try await harness.client.sessions.authenticate() }
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 2)
        #expect(await harness.client.sessions.current != nil, "a nonce challenge never ends a session")
    }

    @Test("The proof's iat follows the server's clock: server_time, and the Date header before any")
    func clockSkew() async throws {
        let clock = ManualClock()
        let server = Self.bindingServer(clock)
        server.setSkew(600)  // the device clock is ten minutes behind the server's
        let harness = Self.harness(server: server, clock: clock)
        try await harness.client.start()
        // The first proof was refused (iat 10 minutes old); the Date header corrected it once.
        #expect(harness.transport.count("POST /v1/sessions/anonymous") == 2)
        clock.advance(by: .seconds(5))
        _ = try await harness.client.sessions.authenticate()
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1, "right the first time")
        let last = try #require(server.acceptedProofs.last)
        #expect(abs(last.issuedAt.timeIntervalSince(server.now)) <= 1)
    }
}
