import Foundation
import Testing

@testable import Tessera

/// Sessions the client lets go of end on the server too: the race tests against a live server found
/// each of these alive after the client had moved on.
@Suite("Abandoned sessions end on the server")
struct AbandonedSessionTests {
    @Test("reset() unregisters the old push token and revokes the old session, in sign-out's order")
    func resetEndsTheOldSession() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let (device, old) = try await harness.registerPushToken("fcm-alice")
        let start = harness.transport.log.count
        try await client.reset()
        #expect(
            Array(harness.transport.log[start...]) == [
                "DELETE /v1/devices/\(device.id)", "POST /v1/sessions/revoke", "POST /v1/sessions/anonymous",
            ])
        #expect(harness.server.session(token: old)?.endCode == "session_revoked")
        #expect(harness.server.devices.isEmpty)
        #expect(try harness.storedState()?.pendingRevocations == [])
        #expect(harness.server.liveSessions.map(\.token) == [try #require(await client.sessions.token)])
    }

    @Test("reset() before the store was read ends the stored session and push token, in sign-out's order")
    func resetBeforeStartReadsFirst() async throws {
        let seeded = Harness()
        try await seeded.client.start()
        try await seeded.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let device = try await seeded.client.registerDeviceToken("fcm-alice", platform: .fcm, environment: .sandbox)
        let old = try #require(await seeded.client.sessions.token)
        await seeded.client.stop()
        // The next launch resets before anything read the store.
        let harness = seeded.relaunch()
        let start = harness.transport.log.count
        try await harness.client.reset()
        #expect(
            Array(harness.transport.log[start...]) == [
                "DELETE /v1/devices/\(device.id)", "POST /v1/sessions/revoke", "POST /v1/sessions/anonymous",
            ])
        #expect(harness.server.session(token: old)?.endCode == "session_revoked")
        #expect(harness.server.devices.isEmpty, "alice's pushes must stop reaching this device")
        #expect(harness.server.liveSessions.map(\.token) == [try #require(await harness.client.sessions.token)])
        #expect(try harness.storedState()?.pendingRevocations == [])
        await harness.client.stop()
    }

    @Test("reset() before the store was read, with the store locked: nothing changes")
    func resetWithLockedStore() async throws {
        let store = LockableStore()
        let seeded = Harness(store: store)
        try await seeded.start(quiet: true)
        let before = try #require(try seeded.storedState())
        store.isLocked.withLock { $0 = true }
        let harness = seeded.relaunch()
        await #expect { try await harness.client.reset() } throws: {
            ($0 as? TesseraError)?.code == .storageUnavailable
        }
        store.isLocked.withLock { $0 = false }
        #expect(try harness.storedState() == before)
        #expect(harness.transport.log.isEmpty)
        await harness.client.stop()
    }

    @Test("Hydration ends the replaced session in sign-out's order and moves the push token to the new one")
    func hydrationEndsTheReplacedSession() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (device, old) = try await harness.registerPushToken()
        let other = Harness(server: harness.server)
        try await other.start(quiet: true)
        let hydrated = try #require(await other.client.sessions.token)
        let start = harness.transport.log.count
        try await client.sessions.update(tokens: SessionTokens(sessionToken: hydrated))
        #expect(
            Array(harness.transport.log[start...]) == [
                "POST /v1/sessions/authenticate", "DELETE /v1/devices/\(device.id)", "POST /v1/sessions/revoke",
                "POST /v1/devices",
            ])
        #expect(harness.server.session(token: old)?.endCode == "session_revoked")
        let current = try #require(await client.sessions.current)
        #expect(harness.server.devices.map(\.sessionID) == [current.id], "the push token follows the session")
        #expect(await client.registeredDevice?.sessionID == current.id)
        #expect(try harness.storedState()?.pendingRevocations == [])
    }

    /// Hydrates the client with `token` while the request it sends for that (`route`) is held, resets
    /// the client before the server answers, then lets the answer through; answers the hydration.
    static func hydrateOvertakenByReset(_ harness: Harness, _ token: String, at route: String) async throws
        -> Task<Void, any Error>
    {
        let client = harness.client
        harness.server.hold(route)
        let hydrate = Task { _ = try await client.sessions.update(tokens: SessionTokens(sessionToken: token)) }
        let exchange = await harness.transport.next()
        harness.server.release(route)
        try await client.reset()
        exchange.respond(harness.server.reply(to: exchange.request))
        return hydrate
    }

    @Test("A hydration overtaken by a reset: the hydrated session is revoked, not left alive")
    func overtakenHydrationIsRevoked() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let other = Harness(server: harness.server)
        try await other.start(quiet: true)
        let hydrated = try #require(await other.client.sessions.token)
        let hydrate = try await Self.hydrateOvertakenByReset(harness, hydrated, at: "POST /v1/sessions/authenticate")
        await #expect { try await hydrate.value } throws: { ($0 as? TesseraError)?.code == .superseded }
        #expect(harness.server.session(token: hydrated)?.endCode == "session_revoked")
        #expect(harness.server.liveSessions.map(\.token) == [try #require(await client.sessions.token)])
    }

    @Test("A hydration that starts the client, overtaken by reset() before it was sent, still adopts the tokens")
    func hydrationWhileStartIsOvertaken() async throws {
        let harness = Harness()
        let client = harness.client
        let minted = harness.server.mintSession(sub: "dave")
        let hydrate = try await Self.hydrateOvertakenByReset(harness, minted, at: "POST /v1/sessions/anonymous")
        // Before: the hydration failed with `superseded` before sending anything, and the session it was
        // handed stayed alive on the server, held by nobody.
        _ = try await hydrate.value
        await client.stop()
        #expect(await client.sessions.token == minted)
        #expect(harness.server.liveSessions.map(\.token) == [minted])
    }

    @Test("clearSession() unregisters the push token, then revokes the session; offline, both are queued")
    func clearSessionEndsTheSession() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (device, old) = try await harness.registerPushToken()
        let start = harness.transport.log.count
        try await client.clearSession()
        #expect(
            Array(harness.transport.log[start...]) == ["DELETE /v1/devices/\(device.id)", "POST /v1/sessions/revoke"])
        #expect(harness.server.session(token: old)?.endCode == "session_revoked")
        #expect(harness.server.devices.isEmpty)
        #expect(client.sessionState == .unavailable(.signedOut))
        #expect(try harness.storedState()?.pendingRevocations == [])

        // Offline: cleared locally at once, the revocation queued and sent by the heartbeat.
        let session = try await client.refreshSession()
        let second = try #require(await client.sessions.token)
        harness.server.script("POST /v1/sessions/revoke", .failure(.notConnectedToInternet))
        try await client.clearSession()
        #expect(await client.sessions.current == nil)
        #expect(try harness.storedState()?.pendingRevocations == [PendingRevocation(sessionToken: second)])
        #expect(harness.server.session(token: second)?.endCode == nil)
        await client.enterForeground()
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(200))
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.server.session(token: second)?.endCode == "session_revoked")
        #expect(try harness.storedState()?.pendingRevocations == [])
        #expect(session.id != harness.server.session(token: old)?.id)
        await client.stop()
    }

    @Test("reset() offline: local at once, the old session's revocation queued and sent by the heartbeat")
    func offlineResetQueues() async throws {
        let harness = Harness()
        let client = try await harness.start()
        let old = try #require(await client.sessions.token)
        harness.server.script("POST /v1/sessions/revoke", .failure(.notConnectedToInternet))
        harness.server.script("POST /v1/sessions/anonymous", .failure(.notConnectedToInternet))
        await #expect(throws: TesseraError.self) { try await client.reset() }
        #expect(try harness.storedState()?.pendingRevocations == [PendingRevocation(sessionToken: old)])
        #expect(harness.server.session(token: old)?.endCode == nil)
        // The network is back: the heartbeat sends the revocation and opens the fresh session.
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(10))
        _ = await Recorder(client.sessionUpdates).first { $0.value != nil }
        #expect(harness.server.session(token: old)?.endCode == "session_revoked")
        #expect(try harness.storedState()?.pendingRevocations == [])
        await client.stop()
    }

    @Test("An identify overtaken by reset: its answer is dropped and its session revoked")
    func overtakenIdentifyIsRevoked() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (identify, exchange) = await harness.heldIdentify()
        let answer = harness.server.reply(to: exchange.request)  // the server has made alice's session
        try await client.reset()
        exchange.respond(answer)
        await #expect { try await identify.value } throws: { ($0 as? TesseraError)?.code == .superseded }
        #expect(await client.profile?.kind == .anonymous)
        #expect(harness.server.liveSessions.map(\.token) == [try #require(await client.sessions.token)])
        #expect(try harness.storedState()?.pendingRevocations == [])
    }

    @Test("An identify overtaken by a newer identify that is refused keeps its answer, current and alive")
    func identifyOvertakenByRefusedIdentify() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let anonymous = try #require(await client.sessions.token)
        let (first, exchange) = await harness.heldIdentify()
        let answer = harness.server.reply(to: exchange.request)  // alice's session made, the anonymous one ended
        #expect(harness.server.session(token: anonymous)?.endCode != nil)
        // A newer identify goes out meanwhile (still from the anonymous session) and is refused.
        let second = Task { try await client.identify(userID: "alice") }
        let refused = await harness.transport.next()
        refused.respond(.error(409, "external_user_id_changed"))
        await #expect { try await second.value } throws: {
            ($0 as? TesseraError)?.code == .externalUserIDChanged
        }
        exchange.respond(answer)
        #expect(try await first.value.authenticated)
        let current = try #require(await client.sessions.token)
        #expect(await client.profile?.externalID == "alice")
        #expect(harness.server.liveSessions.map(\.token) == [current])
        #expect(try harness.storedState()?.session?.token == current)
    }

    @Test("An identify overtaken by a newer identify that succeeds: the newer session is current, the older ends")
    func identifyOvertakenBySucceedingIdentify() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (first, firstExchange) = await harness.heldIdentify()
        let second = Task { try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "bob")) }
        let secondExchange = await harness.transport.next()
        // The older answer arrives first and is applied; the newer one then replaces it.
        firstExchange.respond(harness.server.reply(to: firstExchange.request))
        #expect(try await first.value.authenticated)
        harness.server.release("POST /v1/sessions/identify")
        secondExchange.respond(harness.server.reply(to: secondExchange.request))
        _ = try await second.value
        let current = try #require(await client.sessions.token)
        #expect(await client.profile?.externalID == "bob")
        #expect(harness.server.liveSessions.map(\.token) == [current])
    }

    @Test(
        "An identify without a session and an anonymous session asked for meanwhile: the identity wins, the other ends",
        arguments: [true, false])
    func identifyAndEstablishRace(anonymousAnswersFirst: Bool) async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        try await client.sessions.revoke()
        harness.server.hold("POST /v1/sessions/anonymous")
        let (identify, identifyExchange) = await harness.heldIdentify()
        let refresh = Task { try await client.refreshSession() }
        let anonymousExchange = await harness.transport.next()
        #expect(identifyExchange.endpoint == "POST /v1/sessions/identify")
        #expect(anonymousExchange.endpoint == "POST /v1/sessions/anonymous")
        harness.server.release("POST /v1/sessions/identify")
        harness.server.release("POST /v1/sessions/anonymous")
        let first = anonymousAnswersFirst ? anonymousExchange : identifyExchange
        let second = anonymousAnswersFirst ? identifyExchange : anonymousExchange
        first.respond(harness.server.reply(to: first.request))
        if anonymousAnswersFirst { _ = try await refresh.value } else { _ = try await identify.value }
        second.respond(harness.server.reply(to: second.request))
        _ = try await identify.value
        _ = try await refresh.value
        #expect(await client.profile?.externalID == "alice")
        #expect(harness.server.liveSessions.map(\.token) == [try #require(await client.sessions.token)])
        #expect(try harness.storedState()?.session?.profile.externalID == "alice")
    }

    @Test("A sign-out overtaken by an identify that fails: the revoked session does not stay current")
    func overtakenSignOutStillClears() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let alice = try #require(await client.sessions.token)
        harness.server.hold("POST /v1/sessions/revoke")
        let signOut = Task { try await client.signOut() }
        let revoke = await harness.transport.next()
        harness.server.script("POST /v1/sessions/identify", .reply(.error(409, "external_user_id_changed")))
        await #expect(throws: TesseraError.self) { try await client.identify(userID: "alice") }
        revoke.respond(harness.server.reply(to: revoke.request))
        await #expect { try await signOut.value } throws: { ($0 as? TesseraError)?.code == .superseded }
        #expect(harness.server.session(token: alice)?.endCode == "session_revoked")
        #expect(await client.sessions.current == nil)
        #expect(try harness.storedState()?.session == nil)
        #expect(client.sessionState == .unavailable(.signedOut))
    }

    @Test("A revocation whose request was cancelled stays queued")
    func cancelledRevocationStaysQueued() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let old = try #require(await client.sessions.token)
        harness.server.script("POST /v1/sessions/revoke", .failure(.cancelled))
        try await client.signOut()
        await client.stop()
        #expect(try harness.storedState()?.pendingRevocations == [PendingRevocation(sessionToken: old)])
        #expect(harness.server.session(token: old)?.endCode == nil)
    }
}
