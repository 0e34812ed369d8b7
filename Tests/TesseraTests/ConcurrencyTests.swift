import Foundation
import Testing

@testable import Tessera

@Suite("One request per purpose, and generations")
struct ConcurrencyTests {
    @Test("100 concurrent callers needing a fresh session share one authenticate request")
    func hundredCallersOneAuthenticate() async throws {
        let harness = Harness()
        let client = try await harness.start()
        harness.server.hold("POST /v1/sessions/authenticate")
        let results = Task {
            try await withThrowingTaskGroup(of: Session.self) { group in
                for _ in 0..<100 { group.addTask { try await client.sessions.authenticate(duration: nil) } }
                return try await group.reduce(into: [Session]()) { $0.append($1) }
            }
        }
        let exchange = await harness.transport.next()
        await client.waitForSharedRequestJoins(99)
        exchange.respond(harness.server.reply(to: exchange.request))
        let sessions = try await results.value
        #expect(sessions.count == 100)
        #expect(Set(sessions.map(\.id)).count == 1)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1)
        await client.stop()
    }

    @Test("100 concurrent authorizationHeader() calls with a stale JWT share one refresh")
    func hundredAuthorizationHeadersOneRefresh() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        harness.clock.advance(by: .seconds(290))  // JWT (5 min) within 30 s of expiry
        harness.server.hold("POST /v1/sessions/authenticate")
        let results = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 { group.addTask { try await client.authorizationHeader() } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        let exchange = await harness.transport.next()
        await client.waitForSharedRequestJoins(99)
        exchange.respond(harness.server.reply(to: exchange.request))
        let headers = try await results.value
        #expect(Set(headers).count == 1)
        #expect(headers[0].hasPrefix("Bearer ey"))
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1)
    }

    @Test("reset() overtakes an identify in flight: the identify's late answer is dropped")
    func resetDropsLateIdentify() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (identify, identifyExchange, reset, resetExchange) = await harness.heldIdentifyThenReset()
        #expect(resetExchange.endpoint == "POST /v1/sessions/anonymous")
        // The network delivers the reset's answer first, then the identify's.
        resetExchange.respond(harness.server.reply(to: resetExchange.request))
        try await reset.value
        identifyExchange.respond(harness.server.reply(to: identifyExchange.request))
        await #expect {
            try await identify.value
        } throws: { ($0 as? TesseraError)?.code == .superseded }
        let profile = try #require(await client.profile)
        #expect(profile.kind == .anonymous)
        #expect(try harness.storedState()?.session?.profile.kind == .anonymous)
    }

    @Test("identify answered before reset's answer: reset still wins")
    func identifyAnsweredFirstThenReset() async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let (identify, identifyExchange, reset, resetExchange) = await harness.heldIdentifyThenReset()
        identifyExchange.respond(harness.server.reply(to: identifyExchange.request))
        await #expect(throws: TesseraError.self) { try await identify.value }
        resetExchange.respond(harness.server.reply(to: resetExchange.request))
        try await reset.value
        #expect(await client.profile?.kind == .anonymous)
    }

    @Test("A heartbeat that began before identify and answers after it is dropped")
    func lateHeartbeatDropped() async throws {
        let harness = Harness(random: 0.5)
        let client = try await harness.start()
        let anonymous = try #require(await client.sessions.current)
        harness.server.hold("POST /v1/sessions/authenticate")
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(180))
        let heartbeat = await harness.transport.next()
        #expect(heartbeat.endpoint == "POST /v1/sessions/authenticate")
        let capabilities = try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        #expect(capabilities.authenticated)
        let identified = try #require(await client.sessions.current)
        // The old anonymous session's check answers now (the server ended it: session_revoked).
        heartbeat.respond(harness.server.reply(to: heartbeat.request))
        await harness.clock.waitForSleepers(count: 1)
        #expect(await client.sessions.current == identified)
        #expect(identified.id != anonymous.id)
        #expect(await client.profile?.externalID == "alice")
        await client.stop()
    }
}
