import Foundation
import Testing

@testable import Tessera

@Suite("Sign-out, devices and reset")
struct SignOutTests {
    @Test("Sign-out runs in order: unregister push → revoke → clear → fresh anonymous identity → publish")
    func signOutOrder() async throws {
        let harness = Harness()
        let client = try await harness.start()
        let firstInstallation = try #require(await client.installationID)
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let device = try await client.registerDeviceToken(Data([0xAB, 0xCD, 0x01]), environment: .sandbox)
        let identified = try #require(await client.sessions.token)
        let identifiedProfile = try #require(await client.profile)
        #expect(harness.server.devices.map(\.token) == ["abcd01"])
        await client.stop()
        let states = Recorder(client.sessionUpdates)
        let start = harness.transport.log.count
        try await client.signOut()
        #expect(
            Array(harness.transport.log[start...]) == [
                "DELETE /v1/devices/\(device.id)", "POST /v1/sessions/revoke", "POST /v1/sessions/anonymous",
            ])
        #expect(harness.server.devices.isEmpty)
        #expect(harness.server.session(token: identified)?.endCode == "session_revoked")
        let profile = try #require(await client.profile)
        #expect(profile.kind == .anonymous)
        #expect(profile.id != identifiedProfile.id)
        #expect(await client.installationID != firstInstallation)
        #expect(await client.registeredDevice == nil)
        _ = await states.first { $0.value != nil && $0.value?.profileID == profile.id }
        let values = states.values
        #expect(values.contains(.unavailable(.signedOut)))
        let stored = try #require(try harness.storedState())
        #expect(stored.session?.profile.id == profile.id)
        #expect(stored.device == nil)
    }

    // Contract change (issue 12): clearSession() now unregisters the push token itself, with the session that
    // registered it, then revokes that session; it used to keep both alive for unregisterCurrentDeviceToken().
    @Test(
        "The push token is unregistered with the session that registered it, by clearSession() too",
        .timeLimit(.minutes(1)))
    func unregisterAfterClear() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (device, token) = try await harness.registerPushToken("fcm-token", environment: .production)
        harness.server.hold("DELETE /v1/devices/\(device.id)")
        let clear = Task { try await client.clearSession() }
        let exchange = await harness.transport.next()
        #expect(exchange.bearer == token)
        #expect(client.sessionState == .unavailable(.signedOut))
        exchange.respond(harness.server.reply(to: exchange.request))
        try await clear.value
        #expect(harness.server.devices.isEmpty)
        #expect(await client.registeredDevice == nil)
        // unregisterCurrentDeviceToken() uses the registering session's own token too.
        harness.server.release("DELETE /v1/devices/\(device.id)")
        _ = try await client.refreshSession()
        let (second, secondToken) = try await harness.registerPushToken("fcm-token", environment: .production)
        harness.server.hold("DELETE /v1/devices/\(second.id)")
        let unregister = Task { try await client.unregisterCurrentDeviceToken() }
        let again = await harness.transport.next()
        #expect(again.bearer == secondToken)
        again.respond(harness.server.reply(to: again.request))
        try await unregister.value
        #expect(harness.server.devices.isEmpty)
        #expect(await client.registeredDevice == nil)
        // The app then starts a fresh session itself.
        let session = try await client.refreshSession()
        #expect(client.sessionState.value == session)
    }

    @Test("Offline sign-out still signs out locally and revokes when the network returns")
    func offlineSignOut() async throws {
        let harness = Harness(random: 0.5)
        let client = try await harness.start()
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let (device, token) = try await harness.registerPushToken("push", environment: .production)
        let offline: ScriptedTransport.Handler = { _ in .failure(.notConnectedToInternet) }
        harness.transport.setHandler(offline)
        try await client.signOut()
        #expect(client.sessionState == .unavailable(.signedOut))
        #expect(
            try harness.storedState()?.pendingRevocations == [
                PendingRevocation(sessionToken: token, deviceID: device.id)
            ])
        #expect(harness.server.session(token: token)?.endCode == nil)
        // Back online: the heartbeat flushes the revocation and creates the fresh anonymous session.
        let server = harness.server
        harness.transport.setHandler { server.handle($0) }
        await harness.clock.waitForSleepers(count: 1)
        let states = Recorder(client.sessionUpdates)
        harness.clock.advance(by: .seconds(2))
        _ = await states.first { $0.value != nil }
        #expect(harness.server.session(token: token)?.endCode == "session_revoked")
        #expect(harness.server.devices.isEmpty)
        #expect(try harness.storedState()?.pendingRevocations == [])
        #expect(await client.profile?.kind == .anonymous)
        await client.stop()
    }

    @Test("The next user on the same store sees nothing of the previous one")
    func nextUserSeesNothing() async throws {
        let harness = Harness()
        let client = try await harness.start()
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let alice = try #require(await client.profile)
        try await client.signOut()
        await client.stop()
        let relaunched = harness.relaunch()
        try await relaunched.client.start()
        try await relaunched.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "bob"))
        let bob = try #require(await relaunched.client.profile)
        #expect(bob.id != alice.id)
        #expect(bob.externalID == "bob")
        let stored = try #require(try relaunched.storedState())
        #expect(!String(decoding: try WireCoding.encoder().encode(stored), as: UTF8.self).contains(alice.id))
        await relaunched.client.stop()
    }

    @Test("reset() leaves nothing of the old installation locally")
    func reset() async throws {
        let harness = Harness()
        let client = try await harness.start()
        try await client.identify(userID: "carol")
        _ = try await client.registerDeviceToken("tok", platform: .fcm, environment: .sandbox)
        let old = try #require(try harness.storedState())
        let events = Recorder(client.events)
        try await client.reset()
        let new = try #require(try harness.storedState())
        #expect(new.installationID != old.installationID)
        #expect(new.installationSecret != old.installationSecret)
        #expect(new.device == nil)
        #expect(new.session?.profile.kind == .anonymous)
        #expect(new.session?.token != old.session?.token)
        _ = await events.first { $0 == .reset }
        await client.stop()
    }

    @Test("sessions.revoke() ends the session on the server and clears it locally; list and hydrate")
    func sessionsNamespace() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let listed = try await client.sessions.list()
        #expect(listed.map(\.id) == [try #require(await client.sessions.current?.id)])
        let extended = try await client.sessions.authenticate(duration: .seconds(365 * 86400))
        #expect(extended.expiresAt > harness.clock.now().addingTimeInterval(364 * 86400))
        let token = try #require(await client.sessions.token)
        try await client.sessions.revoke()
        #expect(await client.sessions.current == nil)
        #expect(harness.server.session(token: token)?.endCode == "session_revoked")
        // Hydrate from credentials a backend obtained.
        let other = Harness(server: harness.server)
        try await other.start(quiet: true)
        let otherToken = try #require(await other.client.sessions.token)
        let hydrated = try await client.sessions.update(tokens: SessionTokens(sessionToken: otherToken))
        #expect(await client.sessions.token == otherToken)
        #expect(client.sessionState.value == hydrated)
        await #expect {
            try await client.sessions.update(tokens: SessionTokens(sessionToken: token))
        } throws: { ($0 as? TesseraError)?.code == .sessionRevoked }
        #expect(await client.sessions.token == otherToken, "a failed hydration changes nothing")
    }
}

@Suite("Customer token")
struct AuthorizationTests {
    @Test("authorizationHeader() reuses a fresh JWT and refreshes within 30 s of expiry, in server time")
    func refreshMargin() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let first = try await client.authorizationHeader()
        harness.clock.advance(by: .seconds(260))
        #expect(try await client.authorizationHeader() == first)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 0)
        harness.clock.advance(by: .seconds(11))  // 29 s left
        let second = try await client.authorizationHeader()
        #expect(second != first)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1)
    }

    @Test("Server clock skew decides the refresh, not the device clock")
    func skew() async throws {
        let harness = Harness()
        harness.server.setSkew(-120)  // device clock 2 minutes fast
        let client = try await harness.start(quiet: true)
        _ = try await client.authorizationHeader()
        harness.clock.advance(by: .seconds(260))
        _ = try await client.authorizationHeader()
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 0)
    }

    @Test("A 401 on a private call triggers one refresh and one retry, never more")
    func oneRetry() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        harness.server.script("GET /v1/me", .reply(.error(401, "invalid_credentials")))
        let profile = try await client.refreshProfile()
        #expect(profile.kind == .anonymous)
        #expect(harness.transport.count("GET /v1/me") == 2)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1)

        harness.server.script(
            "GET /v1/me", .reply(.error(401, "invalid_credentials")), .reply(.error(401, "invalid_credentials")),
            .reply(.error(401, "invalid_credentials")))
        await #expect {
            try await client.refreshProfile()
        } throws: { ($0 as? TesseraError)?.code == .invalidCredentials }
        #expect(harness.transport.count("GET /v1/me") == 4)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 2)
        #expect(await client.sessions.current != nil, "a 401 from a private endpoint never ends the session")
    }
}

@Suite("Queued revocations at start", .timeLimit(.minutes(1)))
struct QueuedRevocationsAtStartTests {
    @Test("An offline sign-out's revocation is sent at the next start(), before any heartbeat")
    func flushedAtStart() async throws {
        let harness = Harness(random: 0.5)
        let client = try await harness.start(as: "alice", quiet: true)
        let (device, token) = try await harness.registerPushToken("push", environment: .production)
        harness.transport.setHandler { _ in .failure(.notConnectedToInternet) }
        try await client.signOut()
        #expect(try harness.storedState()?.pendingRevocations.map(\.sessionToken) == [token])

        // The app is launched again, online; the clock does not move: no heartbeat runs.
        let server = harness.server
        server.hold("DELETE /v1/devices/\(device.id)")
        let relaunched = harness.relaunch()
        try await relaunched.start(quiet: true)
        let exchange = await relaunched.transport.next()
        #expect(exchange.endpoint == "DELETE /v1/devices/\(device.id)")
        #expect(exchange.bearer == token)
        exchange.respond(server.reply(to: exchange.request))
    }
}
