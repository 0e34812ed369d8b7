import Foundation
import Testing

@testable import Tessera

@Suite("Identity-token provider at runtime and at start, synchronous credentials")
struct ErgonomicsTests {
    @Test("setIdentityTokenProvider(_:) sets the provider the next re-establishment asks")
    func providerAtRuntime() async throws {
        let harness = Harness()
        let client = try await harness.start(as: "alice", quiet: true)
        let provider = StubProvider()
        provider.enqueue(.success(FakeServer.identityToken(sub: "alice")))
        await client.setIdentityTokenProvider(provider)
        harness.server.end(token: try #require(await client.sessions.token), code: "session_revoked")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        await client.reestablishTask?.value
        #expect(provider.requests.withLock { $0 } == [IdentityTokenRequest(externalUserID: "alice", reason: .revoked)])
        #expect(await client.capabilities?.kind == .verified)
        // Removed again: the next end falls back to a fresh anonymous identity.
        await client.setIdentityTokenProvider(nil)
        harness.server.end(token: try #require(await client.sessions.token), code: "session_revoked")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        await client.reestablishTask?.value
        #expect(await client.profile?.kind == .anonymous)
        #expect(provider.requests.withLock { $0 }.count == 1)
    }

    @Test("A provider that knows the user signs them in at start(), the anonymous profile merged")
    func knownUserAtStart() async throws {
        let seeded = Harness()
        try await seeded.client.start()
        let anonymous = try #require(await seeded.client.profile)
        await seeded.client.stop()
        let provider = ClosureIdentityTokenProvider(atStart: { FakeServer.identityToken(sub: "alice") }, { _ in nil })
        let harness = seeded.relaunch(provider: provider)
        let events = Recorder(harness.client.events)
        try await harness.client.start()
        let profile = try #require(await harness.client.profile)
        #expect(profile.externalID == "alice")
        #expect(profile.id == anonymous.id, "promoted from the installation's anonymous profile")
        #expect(await harness.client.capabilities?.authenticated == true)
        #expect(harness.server.liveSessions.map(\.token) == [try #require(await harness.client.sessions.token)])
        _ = await events.first { if case .identified = $0 { true } else { false } }
        // Signed in, the next launch does not ask again.
        await harness.client.stop()
        let asked = Locked(0)
        let counting = ClosureIdentityTokenProvider(
            atStart: {
                asked.withLock { $0 += 1 }
                return nil
            }, { _ in nil })
        let again = harness.relaunch(provider: counting)
        try await again.client.start()
        #expect(asked.withLock { $0 } == 0)
        #expect(await again.client.profile?.externalID == "alice")
        await again.client.stop()
    }

    @Test("Nobody known at start, or a provider that fails: anonymous, with an event for the failure")
    func unknownOrFailingAtStart() async throws {
        let nobody = Harness(provider: ClosureIdentityTokenProvider { _ in nil })
        try await nobody.client.start()
        #expect(await nobody.client.profile?.kind == .anonymous)
        #expect(nobody.transport.log == ["POST /v1/sessions/anonymous"])
        await nobody.client.stop()

        let failing = Harness(
            provider: ClosureIdentityTokenProvider(
                atStart: { FakeServer.identityToken(sub: "a", fail: "invalid_signature") }, { _ in nil }))
        let events = Recorder(failing.client.events)
        try await failing.client.start()
        #expect(await failing.client.profile?.kind == .anonymous)
        let failed = await events.first { if case .authenticationFailed = $0 { true } else { false } }
        guard case .authenticationFailed(let error) = failed else { return }
        #expect(error.code == .invalidSignature)
        #expect(failing.server.liveSessions.map(\.token) == [try #require(await failing.client.sessions.token)])
        await failing.client.stop()
    }

    @Test("currentSessionToken and currentSessionJWT follow every change, synchronously, and are nil without a session")
    func synchronousCredentials() async throws {
        let harness = Harness()
        let client = harness.client
        #expect(client.currentSessionToken == nil)
        try await client.start()
        await client.stop()
        #expect(client.currentSessionToken == (await client.sessions.token))
        #expect(client.currentSessionJWT == (await client.sessions.jwt))
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        #expect(client.currentSessionToken == (await client.sessions.token))
        harness.clock.advance(by: .seconds(290))
        let header = try await client.authorizationHeader()
        #expect(header == "Bearer \(client.currentSessionJWT ?? "")", "a refreshed JWT is cached at once")
        try await client.clearSession()
        #expect(client.currentSessionToken == nil)
        #expect(client.currentSessionJWT == nil)
        try await client.refreshSession()
        #expect(client.currentSessionToken != nil)
        try await client.signOut()
        #expect(client.currentSessionToken == (await client.sessions.token))
        try await client.reset()
        #expect(client.currentSessionToken == (await client.sessions.token))
        try await client.sessions.revoke()
        #expect(client.currentSessionToken == nil)
        // Readable from any thread without awaiting the actor.
        let fromThread = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: client.currentSessionToken) }
        }
        #expect(fromThread == nil)
        await client.stop()
    }
}
