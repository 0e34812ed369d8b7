import Foundation
import Testing

@testable import Tessera

/// An identity-token provider that never answers cannot hold the SDK: it has until the timeout, on the
/// client's own clock. (Before the timeout existed these tests hung: hence the time limit.)
@Suite("Identity-token provider timeout", .timeLimit(.minutes(1)))
struct ProviderTimeoutTests {
    @Test("A provider that never answers: the re-establishment gives up at the timeout and falls back")
    func reestablishmentTimesOut() async throws {
        let provider = GatedProvider()
        let harness = Harness(provider: provider) { $0.identityTokenTimeout = .seconds(12) }
        let client = try await harness.start(as: "alice", quiet: true)
        let events = Recorder(client.events)
        harness.server.end(token: try #require(await client.sessions.token), code: "session_revoked")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        await provider.waitForRequests(1)
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.clock.sleeperDeadlines == [harness.clock.now().addingTimeInterval(12)])
        harness.clock.advance(by: .milliseconds(11_999))
        #expect(await client.reestablishTask != nil, "still waiting just before the deadline")
        harness.clock.advance(by: .milliseconds(1))
        let failed = await events.first {
            if case .authenticationFailed = $0 { return true }
            return false
        }
        guard case .authenticationFailed(let error) = failed else { return }
        #expect(error.code == .identityTokenProviderTimedOut)
        await client.reestablishTask?.value
        #expect(await client.profile?.kind == .anonymous, "the fallback policy applies")
        // A late answer changes nothing.
        let requests = harness.transport.log.count
        provider.answer(.success(FakeServer.identityToken(sub: "alice")))
        #expect(await client.profile?.kind == .anonymous)
        #expect(harness.transport.log.count == requests)
    }

    @Test("start() with a session expired on the server and a provider that never answers is not held")
    func startIsNotHeld() async throws {
        let seeded = Harness()
        try await seeded.client.start()
        try await seeded.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        await seeded.client.stop()
        seeded.clock.advance(by: .seconds(31 * 86_400))
        let provider = GatedProvider()
        let harness = seeded.relaunch(provider: provider)
        // The device clock alone ends nothing: start() returns, the heartbeat asks the server at once.
        try await harness.client.start()
        await provider.waitForRequests(1)
        #expect(provider.requests == [IdentityTokenRequest(externalUserID: "alice", reason: .expired)])
        await harness.clock.waitForSleepers(count: 2)
        #expect(harness.clock.sleeperDeadlines.first == harness.clock.now().addingTimeInterval(30))
        harness.clock.advance(by: .seconds(30))
        await harness.client.reestablishTask?.value
        #expect(await harness.client.profile?.kind == .anonymous)
        provider.answer(.success(nil))
        await harness.client.stop()
    }

    @Test("A provider that answers in time is not cut short, and leaves no timer behind")
    func answerInTime() async throws {
        let provider = GatedProvider()
        let harness = Harness(provider: provider)
        let client = try await harness.start(as: "alice", quiet: true)
        harness.server.end(token: try #require(await client.sessions.token), code: "session_revoked")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        await provider.waitForRequests(1)
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(29))
        provider.answer(.success(FakeServer.identityToken(sub: "alice")))
        await client.reestablishTask?.value
        #expect(await client.profile?.externalID == "alice")
        #expect(harness.clock.sleeperDeadlines.isEmpty, "the timer was cancelled with the answer")
    }
}
