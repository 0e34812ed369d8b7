import Foundation
import Testing

@testable import Tessera

/// The arrange steps most tests begin with, written once.
extension Harness {
    /// Starts the client (its anonymous session exists once this returns); signs `user` in next when
    /// given; then, when `quiet`, stops the heartbeat, so that only the test's own calls reach the server.
    /// - Returns: The client.
    @discardableResult
    func start(as user: String? = nil, quiet: Bool = false) async throws -> TesseraClient {
        try await client.start()
        if let user { try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: user)) }
        if quiet { await client.stop() }
        return client
    }

    /// Sends an identify of `user` whose answer the server holds.
    /// - Returns: The identify's task, and its exchange for the test to answer.
    func heldIdentify(_ user: String = "alice") async -> (Task<Capabilities, any Error>, Exchange) {
        server.hold("POST /v1/sessions/identify")
        let client = client
        let identify = Task { try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: user)) }
        return (identify, await transport.next())
    }

    /// An identify of `user` held at the server, then a reset whose anonymous session the server holds too.
    /// - Returns: The identify's task and exchange, the reset's task and exchange, for the test to answer.
    func heldIdentifyThenReset(_ user: String = "alice") async -> (
        identify: Task<Capabilities, any Error>, identifyExchange: Exchange,
        reset: Task<Void, any Error>, resetExchange: Exchange
    ) {
        server.hold("POST /v1/sessions/anonymous")
        let (identify, identifyExchange) = await heldIdentify(user)
        let client = client
        let reset = Task { try await client.reset() }
        return (identify, identifyExchange, reset, await transport.next())
    }

    /// Lets the heartbeat fall asleep and wake `count` times, moving the clock to each of its deadlines.
    /// - Returns: The length of each sleep, in seconds.
    func heartbeatDelays(_ count: Int) async throws -> [TimeInterval] {
        var delays: [TimeInterval] = []
        for _ in 0..<count {
            await clock.waitForSleepers(count: 1)
            let next = try #require(clock.sleeperDeadlines.first)
            delays.append(next.timeIntervalSince(clock.now()))
            clock.advance(to: next)
        }
        return delays
    }

    /// Registers an FCM push token with the current session.
    /// - Returns: The registered device, and the token of the session that registered it.
    func registerPushToken(
        _ token: String = "fcm-1", environment: PushEnvironment = .sandbox
    ) async throws -> (Tessera.Device, String) {
        let device = try await client.registerDeviceToken(token, platform: .fcm, environment: environment)
        return (device, try #require(await client.sessions.token))
    }
}
