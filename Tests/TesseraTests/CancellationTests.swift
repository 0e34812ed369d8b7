import Foundation
import Testing

@testable import Tessera

/// A call cancelled as the server answers must not orphan the session the server opened.
@Suite("Cancellation leaves no session behind")
struct CancellationTests {
    @Test("An identify cancelled as its answer arrives: its session is the current one, none is orphaned")
    func cancelledIdentify() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (identify, exchange) = await harness.heldIdentify()
        identify.cancel()
        exchange.respond(harness.server.reply(to: exchange.request))
        _ = try? await identify.value
        // Before the fix the answer was dropped: alice's session stayed alive on the server, unknown to the
        // client, which kept the anonymous session the identify had ended.
        let current = try #require(await client.sessions.token)
        #expect(harness.server.liveSessions.map(\.token) == [current])
        #expect(await client.profile?.externalID == "alice")
        #expect(try harness.storedState()?.session?.token == current)
    }

    @Test("An identify cancelled before it was sent changes nothing")
    func identifyCancelledBeforeSending() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let before = try harness.storedState()
        let requests = harness.transport.log.count
        let identify = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        }
        await #expect { try await identify.value } throws: { ($0 as? TesseraError)?.code == .cancelled }
        #expect(harness.transport.log.count == requests)
        #expect(try harness.storedState() == before)
    }

    @Test("A start cancelled as the anonymous session arrives keeps that session")
    func cancelledStart() async throws {
        let harness = Harness()
        let client = harness.client
        harness.server.hold("POST /v1/sessions/anonymous")
        let start = Task { try await client.start() }
        let exchange = await harness.transport.next()
        start.cancel()
        exchange.respond(harness.server.reply(to: exchange.request))
        _ = try? await start.value
        await client.stop()
        let current = try #require(await client.sessions.token)
        #expect(harness.server.liveSessions.map(\.token) == [current])
    }
}
