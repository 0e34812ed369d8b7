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
}
