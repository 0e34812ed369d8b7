import Foundation
import Testing

@testable import Tessera

/// A device clock that is wrong (users move the date, to cheat games or by mistake) never ends a live
/// session: only the server's `session_not_found`, `session_expired` and `session_revoked` do.
@Suite("A wrong device clock")
struct ClockSkewTests {
    static let day = 86_400

    @Test(
        "A clock set ahead of the session's expiry keeps the session, at launch and at the heartbeat",
        arguments: [32 * day, 3 * 365 * day])
    func clockAhead(seconds: Int) async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let token = try #require(await client.sessions.token)
        // The device clock jumps; the server's does not.
        harness.clock.jump(by: .seconds(seconds))
        harness.server.setSkew(TimeInterval(-seconds))

        let relaunched = harness.relaunch()
        try await relaunched.start(quiet: true)
        #expect(await relaunched.client.sessions.token == token, "the launch kept the session")
        #expect(relaunched.client.sessionState.value != nil)

        _ = await client.tick()
        _ = await relaunched.client.tick()
        #expect(await client.sessions.token == token, "the heartbeat asked the server, which keeps it")
        #expect(await relaunched.client.sessions.token == token)
        #expect(harness.server.session(token: token)?.endCode == nil)
        let offset = try #require(await relaunched.client.state?.session?.serverTimeOffset)
        #expect(abs(offset + TimeInterval(seconds)) < 1, "server_time corrected the offset")
    }

    @Test("A clock set ahead: the server's session_expired still ends the session")
    func serverExpiryStillEnds() async throws {
        let harness = Harness(fallback: .none)
        let client = try await harness.start(quiet: true)
        let token = try #require(await client.sessions.token)
        harness.clock.jump(by: .seconds(32 * Self.day))  // the server's clock too: it expired there
        _ = await client.tick()
        #expect(await client.sessions.token == nil)
        #expect(client.sessionState == .unavailable(.expired))
        #expect(harness.server.session(token: token) != nil)
    }

    @Test(
        "A clock set back by years: the heartbeat still checks within one interval",
        arguments: [32 * day, 3 * 365 * day])
    func clockBehind(seconds: Int) async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let token = try #require(await client.sessions.token)
        harness.clock.jump(by: .seconds(-seconds))
        harness.server.setSkew(TimeInterval(seconds))

        let relaunched = harness.relaunch()
        try await relaunched.client.start()
        let delays = try await relaunched.heartbeatDelays(1)
        let interval = relaunched.client.configuration.heartbeatInterval.timeInterval
        #expect(delays[0] <= interval * (1 + relaunched.client.configuration.heartbeatJitter))
        await relaunched.client.stop()
        #expect(await relaunched.client.sessions.token == token)
        #expect(await client.sessions.token == token)
    }
}
