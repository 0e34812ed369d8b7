import Foundation
import Testing

@testable import Tessera

/// The heartbeat keeps going whatever overtakes a re-establishment.
@Suite("Heartbeat recovery")
struct RecoveryTests {
    enum Overtaker: CaseIterable {
        case identify, signOut, hydrate
    }

    @Test(
        "A re-establishment overtaken by an identify, a sign-out or a hydration does not stop the heartbeat",
        arguments: Overtaker.allCases)
    func overtakenReestablishmentKeepsTheHeartbeat(overtaker: Overtaker) async throws {
        let provider = GatedProvider()
        let harness = Harness(random: 0.5, provider: provider)
        let client = try await harness.start()
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        await harness.clock.waitForSleepers(count: 1)
        let beat = try #require(harness.clock.sleeperDeadlines.first)
        // The backend revokes alice's session; a private call notices, the provider is asked and holds.
        harness.server.end(token: try #require(await client.sessions.token), code: "session_revoked")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        await provider.waitForRequests(1)
        switch overtaker {
        case .identify: try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        case .signOut: try await client.signOut()
        case .hydrate:
            let other = Harness(server: harness.server)
            try await other.start(quiet: true)
            let token = try #require(await other.client.sessions.token)
            try await client.sessions.update(tokens: SessionTokens(sessionToken: token))
        }
        provider.answer(.success(FakeServer.identityToken(sub: "alice")))
        await client.reestablishTask?.value
        #expect(await client.reestablishTask == nil, "a finished re-establishment is not left behind")
        let current = try #require(await client.sessions.token)
        let before = harness.transport.count("POST /v1/sessions/authenticate")
        // The next beat checks the session (before the fix it awaited the finished task and returned, every time).
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.clock.sleeperDeadlines == [beat])
        harness.clock.advance(to: beat)
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == before + 1)
        #expect(await client.sessions.token == current)
        await client.stop()
    }
}
